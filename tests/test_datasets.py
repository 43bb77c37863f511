"""Tests for pacbound.datasets: every shared file, the parsers, label rules, errors, splits."""

import urllib.error
from pathlib import Path

import numpy as np
import pytest

from pacbound import datasets as D

# (rows, features after one-hot encoding and missing-value handling) of every registry file.
EXPECTED = {
    "australian": (690, 14), "breast": (683, 9), "bupa": (345, 6), "car": (1728, 21),
    "cmc": (1473, 9), "credit": (653, 42), "cylinder": (365, 19), "ecoli": (336, 7),
    "glass": (214, 9), "haberman": (306, 3), "heart": (270, 13), "horse": (300, 22),
    "ionosphere": (351, 33), "letter": (1555, 16), "monks": (432, 6), "mushroom": (5644, 92),
    "optdigits": (1130, 64), "pima": (768, 8), "ringnorm": (7400, 20), "sonar": (208, 60),
    "titanic": (2201, 3), "usvotes": (435, 16), "vote": (232, 16), "wdbc": (569, 30),
    "wine": (178, 13), "yeast": (1484, 8), "zoo": (101, 16), "banana": (5300, 2),
    "breast-ljubljana": (277, 36), "german": (1000, 59), "magic": (19020, 10),
    "spambase": (4597, 57), "twonorm": (7400, 20), "breast-cancer-wisconsin": (683, 9),
    "ecoli-uci": (336, 7), "german-uci": (1000, 59), "glass-uci": (214, 9),
    "ionosphere-uci": (351, 34), "pima-uci": (768, 8), "sonar-uci": (208, 60),
    "wine-uci": (178, 13), "breast-cancer": (277, 48), "cleveland": (297, 22),
    "credit-g": (1000, 61), "hungarian": (294, 22), "hypothyroid": (3772, 32), "labor": (57, 26),
}  # fmt: skip


def test_every_shared_file_loads(shared_data):
    files = {
        str(p.relative_to(shared_data))
        for p in shared_data.rglob("*")
        if p.suffix in (".dat", ".csv", ".arff")
    }
    registered = {e.path for e in D.REGISTRY.values() if e.path is not None}
    assert files == registered, f"unregistered: {files - registered}"
    for name, entry in D.REGISTRY.items():
        if entry.path is None:
            continue
        ds = D.load_registered(name + (":ab" if name == "letter" else ""), shared_data)
        assert ds.X.shape == EXPECTED[name], name
        assert ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
        assert set(np.unique(ds.y)) == {-1.0, 1.0}, name
        assert len(ds.feature_names) == ds.X.shape[1]


def test_registry_names_splits_and_protocol(shared_data, monkeypatch):
    monkeypatch.setenv("PACBOUND_DATA", str(shared_data))
    X, y = D.load("letter:ab", return_X_y=True)
    assert (np.sum(y > 0), np.sum(y < 0)) == (789, 766)  # A -> +1
    split = D.roy2016_split(X, y, seed=0)
    assert (len(split.y_train), len(split.y_test)) == (500, 1055)  # germain2009 Letter:AB
    assert D.load("liver").X.shape == (345, 6)
    assert D.load("optdigits:1v7").X.shape[1] == 64
    assert "germain2009" in D.load("cleveland").notes[0]
    with pytest.raises(FileNotFoundError, match="load_openml\\('hepatitis'"):
        D.load("hepatitis")
    with pytest.raises(KeyError, match="unknown dataset"):
        D.load_registered("nope")
    with pytest.raises(ValueError, match="not binary: found 26 labels"):
        D.load_registered("letter")


def test_data_dir_errors(monkeypatch, tmp_path):
    monkeypatch.delenv("PACBOUND_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="PACBOUND_DATA"):
        D.resolve_data_dir()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        D.resolve_data_dir(tmp_path / "absent")


def test_bundled_sets():
    ds = D.load("breast_cancer")
    assert ds.X.shape == (569, 30) and np.sum(ds.y > 0) == 212  # malignant -> +1
    X, y = D.load("digits:4v9", return_X_y=True)
    assert X.shape[1] == 64 and set(np.unique(y)) == {-1.0, 1.0}
    assert np.sum(D.load("wine:0vrest").y > 0) == 59
    assert D.load("iris:setosavversicolor").X.shape == (100, 4)
    with pytest.raises(ValueError, match="10 classes"):
        D.load("digits")
    with pytest.raises(ValueError, match="cannot read the class split"):
        D.load("digits:4x9")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_csv_categorical_missing_and_header(tmp_path):
    text = "a,color,size,label\n1.5,red,s,yes\n?,blue,m,no\n2.5,green,s,yes\n0.5,red,m,no\n"
    ds = D.load_file(_write(tmp_path, "t.csv", text), header=True, missing="impute")
    assert ds.feature_names == ("a", "color=blue", "color=green", "color=red", "size=s")
    np.testing.assert_array_equal(ds.X[:, 0], [1.5, 1.5, 2.5, 0.5])  # median imputed
    np.testing.assert_array_equal(ds.y, [1, -1, 1, -1])  # 'yes' > 'no'
    assert any("imputed 1 cells" in n for n in ds.notes)
    dropped = D.load_file(tmp_path / "t.csv", header=True, missing="drop")
    assert dropped.X.shape == (3, 3) and any("dropped 1 of 4 rows" in n for n in dropped.notes)
    _, y = D.load_file(
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
    ds = D.load_file(_write(tmp_path, "toy.arff", arff), positive="good", missing="impute")
    assert ds.feature_names == ("my num", "kind=x y", "kind=z", "kind=w", "flag=f")
    np.testing.assert_array_equal(ds.X[2], [3, 1, 0, 0, 0])  # most frequent level (first tie)
    np.testing.assert_array_equal(ds.y, [1, -1, 1, -1])
    keel = "@relation k\n@attribute A real [0, 9]\n@attribute Class{p, n}\n@inputs A\n"
    keel += "@outputs Class\n@data\n1, p\n2, n\n"
    assert D.load_file(_write(tmp_path, "k.dat", keel)).X.shape == (2, 1)


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
        D.load_file(_write(tmp_path, "bad.csv", text), **kwargs)


def test_labels_and_check_X_y():
    y, keep, _ = D.binarize_labels([0, 1, 1, 0])
    np.testing.assert_array_equal(y, [-1, 1, 1, -1])
    y, keep, _ = D.binarize_labels(["1", "2", "3", "2"], pair=(3, 1))
    np.testing.assert_array_equal(keep, [True, False, True, False])
    np.testing.assert_array_equal(y, [-1, 1])
    y, _, _ = D.binarize_labels([1.0, 2.0, 3.0], positive=["2", "3"])
    np.testing.assert_array_equal(y, [-1, 1, 1])
    X = np.ones((3, 2))
    np.testing.assert_array_equal(D.check_X_y(X, ["b", "a", "b"])[1], [1, -1, 1])
    for bad_X, bad_y, match in [
        (np.array([[np.nan, 1.0], [0, 1]]), [0, 1], "NaN"),
        (np.array([[np.inf, 1.0], [0, 1]]), [0, 1], "inf"),
        (X, [1, 1, 1], "single class"),
        (X, [0, 1, 2], r"not binary: found 3 labels \{0: 1, 1: 1, 2: 1\}"),
        (X, [0, 1], "mismatched lengths"),
    ]:
        with pytest.raises(ValueError, match=match):
            D.check_X_y(bad_X, bad_y)
    with pytest.raises(ValueError, match="mismatched lengths"):
        D.train_test_split(X, [0, 1])


def test_stratified_splits_are_seeded_and_balanced():
    y = np.array([1] * 30 + [-1] * 70)
    X = np.arange(100)[:, None]
    a, b = D.train_test_split(X, y, 0.3, seed=7), D.train_test_split(X, y, 0.3, seed=7)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert len(a.y_train) == 30 and np.sum(a.y_train > 0) == 9
    assert sorted(np.concatenate([a.X_train, a.X_test]).ravel()) == list(range(100))
    c = D.train_test_split(X, y, 0.3, seed=8)
    assert not np.array_equal(a.X_train, c.X_train)
    tiny = D.stratified_split(np.array([1, 1, -1, -1, -1]), 2, seed=0)
    assert sorted(np.array([1, 1, -1, -1, -1])[tiny[0]]) == [-1, 1]
    s = D.roy2016_split(np.zeros((569, 1)), np.r_[np.ones(212), -np.ones(357)])
    assert (len(s.y_train), len(s.y_test)) == (284, 285)


def test_openml_offline_and_conversion(monkeypatch, tmp_path):
    import sklearn.datasets
    from sklearn.utils import Bunch

    def offline(**kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(ConnectionError, match="could not fetch OpenML dataset 'vote'"):
        D.load_openml("vote", cache_dir=tmp_path)

    def fake(**kwargs):
        assert kwargs["data_id"] == 42
        data = np.array([[0.0, 1.5], [1.0, np.nan], [2.0, 0.5], [0.0, 2.5]])
        categories = {"c": ["u", "v", "w"]}
        target = np.array(["p", "q", "p", "q"])
        return Bunch(data=data, target=target, feature_names=["c", "n"], categories=categories)

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake)
    ds = D.load_openml(42, missing="impute")
    assert ds.feature_names == ("c=u", "c=v", "c=w", "n")
    np.testing.assert_array_equal(ds.X[1], [0, 1, 0, 1.5])
    np.testing.assert_array_equal(ds.y, [-1, 1, -1, 1])
