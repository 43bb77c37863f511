"""Tests for pacbound._src.datasets.labels: label rules, class splits, the (X, y) check,
re-exports."""

import numpy as np
import pytest

from pacbound._src.datasets import labels as L


def test_labels_and_check_X_y():
    y, keep, _ = L.binarize_labels([0, 1, 1, 0])
    np.testing.assert_array_equal(y, [-1, 1, 1, -1])
    y, keep, _ = L.binarize_labels(["1", "2", "3", "2"], pair=(3, 1))
    np.testing.assert_array_equal(keep, [True, False, True, False])
    np.testing.assert_array_equal(y, [-1, 1])
    y, _, _ = L.binarize_labels([1.0, 2.0, 3.0], positive=["2", "3"])
    np.testing.assert_array_equal(y, [-1, 1, 1])
    X = np.ones((3, 2))
    np.testing.assert_array_equal(L.check_X_y(X, ["b", "a", "b"])[1], [1, -1, 1])
    for bad_X, bad_y, match in [
        (np.array([[np.nan, 1.0], [0, 1]]), [0, 1], "NaN"),
        (np.array([[np.inf, 1.0], [0, 1]]), [0, 1], "inf"),
        (X, [1, 1, 1], "single class"),
        (X, [0, 1, 2], r"not binary: found 3 labels \{0: 1, 1: 1, 2: 1\}"),
        (X, [0, 1], "mismatched lengths"),
    ]:
        with pytest.raises(ValueError, match=match):
            L.check_X_y(bad_X, bad_y)


def test_parse_split_spec():
    lookup = L.class_lookup(np.unique(L.canonical_labels(["4", "9", "1"])))
    assert L.parse_split_spec("4v9", lookup) == {"pair": (4.0, 9.0)}
    assert L.parse_split_spec(" 1VREST ", lookup) == {"positive": 1.0}
    assert L.parse_split_spec("49", lookup) == {"pair": (4.0, 9.0)}
    with pytest.raises(ValueError, match="cannot read the class split '4v7'"):
        L.parse_split_spec("4v7", lookup)
