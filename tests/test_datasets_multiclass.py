"""``multiclass=True`` loading: int64 class indices, names in ``Dataset.classes``, nothing
refused for having more than two classes, binary splits still honoured."""

from pathlib import Path

import numpy as np
import pytest

from pacbound._src.datasets.labels import index_labels
from pacbound._src.datasets.loaders import load_registered
from pacbound.datasets import binarize_labels, load, load_file

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = DATA if DATA.is_dir() else Path("/work/shared/data")


def test_index_labels_sorts_numbers_numerically_and_strings_as_text():
    y, classes, note = index_labels(["10", "2", "2", "9.0"])
    assert classes == ("2", "9", "10") and y.tolist() == [2, 0, 0, 1] and y.dtype == np.int64
    assert note.startswith("3 classes: 0 = 2")
    y, classes, _ = index_labels(["b", "a", "c", "a"])
    assert classes == ("a", "b", "c") and y.tolist() == [1, 0, 2, 0]


def test_index_labels_agrees_with_the_binary_rule_and_refuses_one_class():
    labels = ["no", "yes", "yes", "no", "yes"]
    y, classes, _ = index_labels(labels)
    assert classes == ("no", "yes")
    pm, _, _ = binarize_labels(labels)
    np.testing.assert_array_equal(np.where(y == 1, 1.0, -1.0), pm)  # index 1 is +1
    with pytest.raises(ValueError, match="a single class"):
        index_labels(["x", "x"])


def test_bundled_sets_keep_every_class():
    digits = load("digits", multiclass=True)
    assert digits.X.shape == (1797, 64) and digits.y.dtype == np.int64
    assert digits.classes == tuple(str(i) for i in range(10))
    assert np.bincount(digits.y).min() > 170
    iris = load("iris", multiclass=True)
    assert iris.classes == ("setosa", "versicolor", "virginica")
    np.testing.assert_array_equal(np.bincount(iris.y), [50, 50, 50])
    with pytest.raises(ValueError, match="name a split"):
        load("iris")  # the binary default still refuses three classes


def test_a_split_in_the_name_still_applies_as_two_indices():
    ds = load("iris:setosavrest", multiclass=True)
    assert ds.classes == ("-1", "+1") and ds.y.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(ds.y), [100, 50])
    np.testing.assert_array_equal(ds.y == 1, load("iris:setosavrest").y == 1)


def test_a_file_with_three_string_labels(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    labels = np.array(["cat", "dog", "eel"])[np.arange(30) % 3]
    path = tmp_path / "three.csv"
    path.write_text("".join(f"{a},{b},{c}\n" for (a, b), c in zip(X, labels)))
    ds = load_file(path, multiclass=True)
    assert ds.classes == ("cat", "dog", "eel")
    np.testing.assert_array_equal(ds.y, np.arange(30) % 3)
    np.testing.assert_allclose(ds.X, X, atol=1e-12)
    assert load(str(path), multiclass=True).classes == ds.classes
    with pytest.raises(ValueError, match="labels are not binary"):
        load_file(path)
    binary = load_file(path, positive="dog", multiclass=True)
    assert binary.classes == ("-1", "+1") and binary.y.sum() == 10


@pytest.mark.skipif(not DATA.is_dir(), reason="shared data folder absent")
def test_registered_sets_drop_their_default_binary_split():
    cmc = load_registered("contraceptive", DATA, multiclass=True)
    assert cmc.classes == ("1", "2", "3") and cmc.X.shape == (1473, 9)
    np.testing.assert_array_equal(np.bincount(cmc.y), [629, 333, 511])
    binary = load_registered("contraceptive", DATA)
    assert set(np.unique(binary.y)) == {-1.0, 1.0} and binary.classes == ()
    np.testing.assert_array_equal(binary.y == 1, cmc.y == 0)  # "1 (no use) vs rest"
    pair = load_registered("letter:ab", DATA, multiclass=True)
    assert pair.classes == ("-1", "+1") and len(pair.y) == 1555
