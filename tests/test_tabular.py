"""Tests for pacbound._src.datasets.tabular: the parsers, missing values, encoding, file errors."""

from pathlib import Path

import numpy as np
import pytest

from pacbound._src.datasets import tabular as T


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_categorical_missing_and_header(tmp_path):
    text = "a,color,size,label\n1.5,red,s,yes\n?,blue,m,no\n2.5,green,s,yes\n0.5,red,m,no\n"
    ds = T.load_file(_write(tmp_path, "t.csv", text), header=True, missing="impute")
    assert ds.feature_names == ("a", "color=blue", "color=green", "color=red", "size=s")
    np.testing.assert_array_equal(ds.X[:, 0], [1.5, 1.5, 2.5, 0.5])  # median imputed
    np.testing.assert_array_equal(ds.y, [1, -1, 1, -1])  # 'yes' > 'no'
    assert any("imputed 1 cells" in n for n in ds.notes)
    dropped = T.load_file(tmp_path / "t.csv", header=True, missing="drop")
    assert dropped.X.shape == (3, 3) and any("dropped 1 of 4 rows" in n for n in dropped.notes)
    _, y = T.load_file(
        tmp_path / "t.csv", "label", header=True, pair=("no", "yes"), return_X_y=True
    )
    np.testing.assert_array_equal(y, [-1, 1, -1, 1])  # pair: 'no' -> +1


def test_arff_and_keel_headers(tmp_path):
    arff = """% comment
@relation toy
@attribute 'my num' numeric
@attribute kind {'x y', z, w}
@attribute flag {t, f}
@attribute class {good, bad}
@data
1, 'x y', t, good
2, z, f, bad
3, ?, t, good
4, w, f, bad
"""
    ds = T.load_file(_write(tmp_path, "toy.arff", arff), positive="good", missing="impute")
    assert ds.feature_names == ("my num", "kind=x y", "kind=z", "kind=w", "flag=f")
    np.testing.assert_array_equal(ds.X[2], [3, 1, 0, 0, 0])  # most frequent level (first tie)
    np.testing.assert_array_equal(ds.y, [1, -1, 1, -1])
    keel = "@relation k\n@attribute A real [0, 9]\n@attribute Class{p, n}\n@inputs A\n"
    keel += "@outputs Class\n@data\n1, p\n2, n\n"
    assert T.load_file(_write(tmp_path, "k.dat", keel)).X.shape == (2, 1)


def test_a_stray_word_among_numbers_is_refused_a_category_with_numeric_levels_kept(tmp_path):
    """Text in at most 5% of a column of numbers (a typo, an unlisted ``NA``) is refused; a
    category whose levels are mostly numbers (UCI car: doors 2, 3, 4, 5more) is one-hot."""
    numbers = [f"{i / 7:.3f},{'ab'[i % 2]}" for i in range(40)]
    numbers[11] = "NA,a"
    with pytest.raises(ValueError, match=r"feature 'x0' is not numeric: 'NA' at row 11 among "):
        T.load_file(_write(tmp_path, "typo.csv", "\n".join(numbers)))
    doors = "\n".join(f"{d},{'ab'[i % 2]}" for i, d in enumerate(["2", "3", "4", "5more"] * 5))
    ds = T.load_file(_write(tmp_path, "car.csv", doors))
    assert ds.feature_names == ("x0=2", "x0=3", "x0=4", "x0=5more")


@pytest.mark.parametrize(
    ("text", "kwargs", "match"),
    [
        ("1,2,a\nnan,3,b\n", {}, "non-finite value 'nan'"),
        ("1,inf,a\n0,3,b\n", {}, "non-finite value 'inf'"),
        ("1,2,a\n0,3,a\n", {}, "single class"),
        ("1,a\n2,b\n3,c\n", {}, "not binary: found 3 labels"),
        ("1,a\n2,b\n", {"positive": "z"}, "positive class"),
        ("1,2,a\n0,b\n", {}, "has 2 fields, expected 3"),
    ],
)
def test_file_errors(tmp_path, text, kwargs, match):
    with pytest.raises(ValueError, match=match):
        T.load_file(_write(tmp_path, "bad.csv", text), **kwargs)
