"""Labels mapped to ``±1``, class splits such as ``"4v9"``, and the ``(X, y)`` boundary check.

NumPy only, never traced. :func:`binarize_labels` maps labels of any type to ``{-1, +1}`` and
:func:`check_X_y` validates a dataset given as arrays; both refuse anything that cannot be made
binary with a ``ValueError`` naming the labels found.

Label rule when no class is named: with exactly two labels, the larger one (numeric order if
all labels are numbers, string order otherwise) is ``+1``; ``positive=`` (one label or several:
one-vs-rest) or ``pair=(pos, neg)`` (other rows dropped) choose explicitly.

:func:`canonical_labels`, :func:`class_lookup` and :func:`parse_split_spec` are shared with
:mod:`pacbound._src.datasets.tabular` and the package's loaders (not in
:mod:`pacbound._src.datasets`'s
public face).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pacbound._src.validation import check_features

__all__ = ["binarize_labels", "check_X_y", "index_labels"]


def _check_matrix(X: Any) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"X must be a non-empty 2-D (m, d) matrix; got shape {X.shape}")
    try:
        X = X.astype(np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"X must be numeric; got dtype {X.dtype}") from err
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"X has {bad.sum()} non-finite (NaN/inf) entries, first {X[r, c]} at row {r}, "
            f"feature {c}; impute or drop them"
        )
    return X


def canonical_labels(labels: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Labels as floats when every one is a number, else as stripped strings."""
    strs = np.array([str(v).strip().strip("'\"") for v in labels], dtype=object)
    try:
        return np.array([float(v) for v in strs], dtype=np.float64)
    except ValueError:
        return strs.astype(str)


def _tokens(values: Any, numeric: bool) -> list[Any]:
    values = list(values) if isinstance(values, list | tuple | set | np.ndarray) else [values]
    return [float(v) for v in values] if numeric else [str(v) for v in values]


def _fmt(v: Any) -> str:
    """A label as users wrote it: ``4.0`` -> ``4``, strings quoted."""
    v = v.item() if isinstance(v, np.generic) else v
    return str(int(v)) if isinstance(v, float) and v.is_integer() else repr(v)


def _show(labels: np.ndarray) -> str:
    found, counts = np.unique(labels, return_counts=True)
    items = [f"{_fmt(v)}: {c}" for v, c in zip(found[:12], counts[:12], strict=True)]
    more = f", ... ({len(found)} labels)" if len(found) > 12 else ""
    return "{" + ", ".join(items) + more + "}"


def binarize_labels(
    labels: Sequence[Any] | np.ndarray, positive: Any = None, pair: tuple[Any, Any] | None = None
) -> tuple[np.ndarray, np.ndarray, str]:
    """Map labels to ``{-1, +1}``.

    Args:
      labels: ``(m,)`` labels of any type (numbers and their strings compare equal).
      positive: a label, or several, mapped to ``+1``; every other label to ``-1``.
      pair: ``(pos, neg)``: keep only these two labels, ``pos -> +1``, ``neg -> -1``.

    Returns:
      ``(y, keep, note)``: ``y`` float64 ``±1`` for the kept rows, ``keep`` the ``(m,)`` bool mask
      of kept rows, and a one-line description of the mapping.

    Raises:
      ValueError: more than two labels and no ``positive``/``pair`` (naming the labels found), a
        named class absent, or a single class after mapping.

    Example:
      >>> y, keep, note = binarize_labels(["cat", "dog", "cat"])  # two labels: the larger is +1
      >>> y.tolist(), note
      ([-1.0, 1.0, -1.0], "'dog' -> +1, 'cat' -> -1")
      >>> y, keep, note = binarize_labels([1, 2, 3], pair=(3, 1))  # the 2 is dropped
      >>> y.tolist(), keep.tolist()
      ([-1.0, 1.0], [True, False, True])
      >>> binarize_labels([1, 2, 3])
      Traceback (most recent call last):
        ...
      ValueError: labels are not binary: found 3 labels {1: 1, 2: 1, 3: 1}; name the positive ...
    """
    lab = canonical_labels(labels)
    numeric, found = lab.dtype == np.float64, np.unique(lab)
    if pair is not None and positive is not None:
        raise ValueError("give positive= or pair=, not both")
    if pair is not None:
        pos, neg = (_tokens(c, numeric)[0] for c in pair)
        absent = [_fmt(c) for c in (pos, neg) if c not in found]
        if absent:
            raise ValueError(f"pair class {absent} not among the labels found {_show(lab)}")
        keep = (lab == pos) | (lab == neg)
        y, note = np.where(lab[keep] == pos, 1.0, -1.0), f"{_fmt(pos)} -> +1, {_fmt(neg)} -> -1"
        return _check_two(y, keep, note, lab)
    if positive is None and len(found) != 2:
        raise ValueError(
            f"labels are not binary: found {len(found)} labels {_show(lab)}; name the positive "
            "class (positive=, one-vs-rest) or a pair (pair=(pos, neg))"
            if len(found) > 2
            else f"a single class: labels found {_show(lab)}; both classes are needed"
        )
    pos = [found[1]] if positive is None else _tokens(positive, numeric)
    if not np.isin(pos, found).any():
        shown = [_fmt(p) for p in pos]
        raise ValueError(f"positive class {shown} not among the labels found {_show(lab)}")
    rest = "rest" if positive is not None else _fmt(found[0])
    note = f"{', '.join(map(_fmt, pos))} -> +1, {rest} -> -1"
    return _check_two(np.where(np.isin(lab, pos), 1.0, -1.0), np.ones(len(lab), bool), note, lab)


def index_labels(labels: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, tuple[str, ...], str]:
    """Map labels of any number of classes to class indices ``0 .. C-1``, classes in sorted
    order (numeric order if every label is a number, string order otherwise: with two labels
    index 1 is the class :func:`binarize_labels` maps to ``+1``).

    Returns:
      ``(y, classes, note)``: ``y`` int64 ``(m,)`` indices, ``classes`` the label of each index
      (as text), and a one-line description.

    Raises:
      ValueError: fewer than two classes (naming the labels found).

    Example:
      >>> y, classes, note = index_labels(["b", "a", "c", "a"])
      >>> y.tolist(), classes, note
      ([1, 0, 2, 0], ('a', 'b', 'c'), '3 classes: 0 = a, 1 = b, 2 = c')
    """
    lab = canonical_labels(labels)
    found, y = np.unique(lab, return_inverse=True)
    if len(found) < 2:
        raise ValueError(f"a single class: labels found {_show(lab)}; two or more are needed")
    classes = tuple(_fmt(v).strip("'") for v in found)
    shown = ", ".join(f"{i} = {c}" for i, c in enumerate(classes[:12]))
    more = f", ... ({len(classes)} classes)" if len(classes) > 12 else ""
    return y.astype(np.int64), classes, f"{len(classes)} classes: {shown}{more}"


def _check_two(y: np.ndarray, keep: np.ndarray, note: str, lab: np.ndarray):
    if len(np.unique(y)) < 2:
        raise ValueError(f"a single class after mapping ({note}); labels found {_show(lab)}")
    return y, keep, note


def check_X_y(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a dataset at the Python boundary and return ``(X, y)`` as float64 arrays.

    Raises:
      ValueError: ``X`` not a finite 2-D numeric matrix (NaN/inf located), ``y`` not 1-D,
        mismatched lengths, labels not binary (naming those found) or a single class.

    Example:
      >>> X, y = check_X_y([[0, 1], [1, 0]], ["no", "yes"])
      >>> str(X.dtype), y.tolist()
      ('float64', [-1.0, 1.0])
    """
    X = check_features(X).astype(np.float64)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if len(y) != len(X):
        raise ValueError(f"mismatched lengths: X has {len(X)} rows, y has {len(y)} labels")
    return X, binarize_labels(y)[0]


def class_lookup(values: Sequence[Any] | np.ndarray) -> dict[str, Any]:
    """Case-insensitive tokens for class values (``4.0`` answers to ``"4"``)."""
    lookup = {}
    for v in values:
        is_int = isinstance(v, float | np.floating) and float(v).is_integer()
        lookup[(str(int(v)) if is_int else str(v)).lower()] = v
    return lookup


def parse_split_spec(spec: str, lookup: dict[str, Any]) -> dict[str, Any]:
    """``"4v9"`` -> ``pair=(4, 9)``; ``"1vrest"`` -> ``positive=1``; ``"ab"`` -> ``pair=(a, b)``."""
    s = spec.strip().lower()
    for i, ch in enumerate(s):
        left, right = s[:i], s[i + 1 :]
        if ch == "v" and left in lookup and (right == "rest" or right in lookup):
            if right == "rest":
                return {"positive": lookup[left]}
            return {"pair": (lookup[left], lookup[right])}
    if len(s) == 2 and s[0] in lookup and s[1] in lookup:
        return {"pair": (lookup[s[0]], lookup[s[1]])}
    raise ValueError(
        f"cannot read the class split {spec!r}: use 'AvB' (A -> +1, B -> -1) or 'Avrest', "
        f"with classes among {sorted(lookup)}"
    )
