"""Tests for pacbound.datasets: load, bundled sets, OpenML, splits, re-exports."""

import urllib.error

import numpy as np
import pytest

from pacbound import datasets as D
from pacbound._src.datasets.loaders import load_registered


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
        load_registered("nope")
    for path in ("nope.csv", "data/nope", "nope.ARFF"):  # a path: no list of names
        with pytest.raises(FileNotFoundError, match=f"^no such file: {path}$"):
            D.load(path)
    with pytest.raises(ValueError, match="unknown dataset 'nope': not bundled"):
        D.load("nope")
    with pytest.raises(ValueError, match="not binary: found 26 labels"):
        load_registered("letter")


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


def test_stratified_splits_are_seeded_and_balanced():
    y = np.array([1] * 30 + [-1] * 70)
    X = np.arange(100)[:, None]
    with pytest.raises(ValueError, match="mismatched lengths"):
        D.train_test_split(X, [0, 1])
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
