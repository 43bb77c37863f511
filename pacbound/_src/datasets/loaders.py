"""Loaders: scikit-learn's bundled sets, OpenML, and seeded stratified splits.

NumPy only, never traced. :func:`load` reads a bundled set, a registry name or a file;
:func:`load_openml` goes through scikit-learn's fetcher; :func:`train_test_split` and
:func:`roy2016_split` split with a seed, stratified.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, NamedTuple, Unpack, overload

import numpy as np

from pacbound._src.datasets.labels import parse_split_spec
from pacbound._src.datasets.registry import (
    ALIASES,
    REGISTRY,
    load_registered,
)
from pacbound._src.datasets.tabular import (
    Dataset,
    LabelOptions,
    MulticlassOption,
    checked_dataset,
    dataset_from_cells,
    encode_labels,
    load_file,
)

__all__ = [
    "BUNDLED",
    "Split",
    "load",
    "load_openml",
    "roy2016_split",
    "stratified_split",
    "train_test_split",
]

_SKLEARN_HINT = "scikit-learn is needed for this loader: pip install pacbound[sklearn]"


class Split(NamedTuple):
    """A train / test split."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


# ------------------------------------------------------------------ loaders
def _sklearn_datasets():
    try:
        import sklearn.datasets
    except ImportError as err:
        raise ImportError(_SKLEARN_HINT) from err
    return sklearn.datasets


BUNDLED = {  # the names :func:`load` reads offline -> scikit-learn's loader
    "breast_cancer": "load_breast_cancer",
    "digits": "load_digits",
    "wine": "load_wine",
    "iris": "load_iris",
}


def _load_bundled(base: str, spec: str, multiclass: bool) -> Dataset:
    """scikit-learn's bundled sets; ``breast_cancer`` maps malignant (target 0) to ``+1``;
    ``multiclass`` without a split keeps the targets as class indices."""
    bunch = getattr(_sklearn_datasets(), BUNDLED[base])()
    target, names = bunch.target, [str(n) for n in bunch.target_names]
    source = f"scikit-learn bundled {base} ({names})"
    if multiclass and not spec:
        return checked_dataset(
            bunch.data, target, bunch.feature_names, base, [f"{source}; {len(names)} classes"],
            names,
        )  # fmt: skip
    default_split = base == "breast_cancer" and not spec
    if default_split:
        spec = "malignantvrest"
    if not spec:
        raise ValueError(
            f"{base!r} has {len(names)} classes {names}: name a split, e.g. "
            f"'{base}:0v1' (pair) or '{base}:0vrest' (one-vs-rest), or load it multiclass"
        )
    lookup = {
        **{str(i): i for i in range(len(names))},
        **{n.lower(): i for i, n in enumerate(names)},
    }
    y, keep, note, classes = encode_labels(target, parse_split_spec(spec, lookup), multiclass)
    label = f"{base} (malignant +1, benign -1)" if default_split else f"{base}:{spec}"
    notes = [f"{source}; labels: {note}"]
    return checked_dataset(bunch.data[keep], y, bunch.feature_names, label, notes, classes)


def _fetch_openml(name_or_id: str | int, cache_dir: str | os.PathLike | None) -> Any:
    """scikit-learn's OpenML bunch (NumPy arrays), or a ``ConnectionError`` when offline."""
    skd = _sklearn_datasets()
    key = {"data_id": int(name_or_id)} if str(name_or_id).isdigit() else {"name": name_or_id}
    try:
        bunch = skd.fetch_openml(
            **key,
            data_home=None if cache_dir is None else str(cache_dir),
            as_frame=False,
            parser="liac-arff",
        )
    except OSError as err:  # urllib's URLError and socket errors are OSErrors
        raise ConnectionError(
            f"could not fetch OpenML dataset {name_or_id!r} (offline?): {err}. Download it once "
            "with network access (cache_dir keeps it) or use a local file with load_file()"
        ) from err
    if bunch.target is None:
        raise ValueError(f"OpenML dataset {name_or_id!r} has no default target column")
    return bunch


def _openml_cells(bunch: Any) -> tuple[np.ndarray, list[str], list[list[str] | None]]:
    """An OpenML bunch as text cells, column names and nominal levels, target column last.

    Nominal codes become their level names and NaNs become ``"?"``, as in a file.
    """
    data = bunch.data.toarray() if hasattr(bunch.data, "toarray") else np.asarray(bunch.data)
    names, cats = list(bunch.feature_names), bunch.categories or {}
    columns = []
    for j, n in enumerate(names):
        col = np.asarray(data[:, j], np.float64)
        text = (
            np.array(cats[n], dtype=str)[np.nan_to_num(col).astype(int)]
            if n in cats
            else np.array([repr(float(v)) for v in col], dtype=str)
        )
        columns.append(np.where(np.isnan(col), "?", text))
    cells = np.column_stack([*columns, np.asarray(bunch.target, dtype=str)])
    return cells, [*names, "class"], [cats.get(n) for n in names] + [None]


@overload
def load_openml(
    name_or_id: str | int,
    cache_dir: str | os.PathLike | None = ...,
    *,
    return_X_y: Literal[False] = ...,
    **options: Unpack[LabelOptions],
) -> Dataset: ...


@overload
def load_openml(
    name_or_id: str | int,
    cache_dir: str | os.PathLike | None = ...,
    *,
    return_X_y: Literal[True],
    **options: Unpack[LabelOptions],
) -> tuple[np.ndarray, np.ndarray]: ...


def load_openml(
    name_or_id: str | int,
    cache_dir: str | os.PathLike | None = None,
    *,
    positive: Any = None,
    pair: tuple[Any, Any] | None = None,
    missing: str = "auto",
    return_X_y: bool = False,
    multiclass: bool = False,
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Fetch an OpenML dataset (by name or id) through scikit-learn, cached in ``cache_dir``.

    Nominal features are one-hot encoded and missing values handled as in :func:`load_file`
    (``multiclass``: labels as class indices, as there).

    Raises:
      ImportError: scikit-learn is not installed (``pip install pacbound[sklearn]``).
      ConnectionError: the dataset is neither cached nor downloadable (offline).
      ValueError: labels not binary and no ``positive`` / ``pair`` given.

    Example:
      >>> from unittest import mock  # offline (simulated here): a clear error
      >>> with mock.patch("sklearn.datasets.fetch_openml", side_effect=OSError("no network")):
      ...     load_openml("credit-g")
      Traceback (most recent call last):
        ...
      ConnectionError: could not fetch OpenML dataset 'credit-g' (offline?): no network. ...
    """
    bunch = _fetch_openml(name_or_id, cache_dir)
    cells, names, levels = _openml_cells(bunch)
    source = f"openml:{name_or_id}"
    ds = dataset_from_cells(
        cells, names, levels, source, positive=positive, pair=pair, missing=missing,
        multiclass=multiclass,
    )  # fmt: skip
    return (ds.X, ds.y) if return_X_y else ds


class LoadOptions(MulticlassOption, total=False):
    """:func:`load`'s keyword options besides ``return_X_y``, typed once for its overloads."""

    data_dir: str | os.PathLike | None


@overload
def load(
    name: str, *, return_X_y: Literal[False] = ..., **options: Unpack[LoadOptions]
) -> Dataset: ...


@overload
def load(
    name: str, *, return_X_y: Literal[True], **options: Unpack[LoadOptions]
) -> tuple[np.ndarray, np.ndarray]: ...


def load(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    return_X_y: bool = False,
    multiclass: bool = False,
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a dataset by name, in one line.

    Resolution order: scikit-learn's bundled sets, offline (``"breast_cancer"``: malignant ->
    +1; ``"digits:4v9"``, ``"wine:0vrest"``, ``"iris:setosavversicolor"``, classes by target
    index or name); then :data:`REGISTRY` names (``"sonar"``, ``"letter:ab"``) under the data
    directory; then a file path (:func:`load_file` defaults).

    With ``multiclass=True`` the labels are int64 class indices (:attr:`Dataset.classes` names
    them) and nothing is refused for having more than two classes: ``"digits"``, ``"letter"``
    and ``"wine"`` keep all their classes (the registry's default binary split is not applied);
    a split in the name (``"letter:ab"``) still applies, as classes ``0 = -1``, ``1 = +1``.

    Returns:
      A :class:`Dataset`, or ``(X, y)`` with ``return_X_y``.

    Raises:
      FileNotFoundError: ``name`` is a path (it has a path separator or a data file's suffix,
        ``.csv``, ``.dat``, ``.arff``, ...) and no such file exists: ``"no such file: PATH"``.
      ValueError: an unknown name (the message points to ``pacbound datasets``), or what
        :func:`load_file` refuses.

    Example:
      >>> ds = load("breast_cancer")  # bundled with scikit-learn, offline
      >>> ds.X.shape, ds.name, sorted(set(ds.y.tolist()))
      ((569, 30), 'breast_cancer (malignant +1, benign -1)', [-1.0, 1.0])
      >>> X, y = load("iris:setosavrest", return_X_y=True)
      >>> X.shape, int((y == 1).sum())
      ((150, 4), 50)
    """
    base, _, spec = name.strip().partition(":")
    if base in BUNDLED:
        ds = _load_bundled(base, spec, multiclass)
    elif ALIASES.get(base.lower(), base.lower()) in REGISTRY:
        ds = load_registered(name, data_dir, multiclass=multiclass)
    elif Path(name).is_file():
        ds = load_file(name, multiclass=multiclass)
    elif _looks_like_a_path(name):
        raise FileNotFoundError(f"no such file: {name}")
    else:
        raise ValueError(
            f"unknown dataset {name!r}: not bundled, not registered and not a file "
            "(`pacbound datasets` lists the names)"
        )
    return (ds.X, ds.y) if return_X_y else ds


_DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".dat", ".data", ".arff")


def _looks_like_a_path(name: str) -> bool:
    """A name with a path separator or a data file's suffix: a file, not a dataset name."""
    separators = [sep for sep in ("/", os.sep, os.altsep) if sep]
    return any(sep in name for sep in separators) or name.lower().endswith(_DATA_SUFFIXES)


# ------------------------------------------------------------------------ splits
def stratified_split(
    y: Any, train_size: float | int, *, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Seeded stratified split of indices: ``(train, test)``, each in random order.

    Every class gets ``train_size`` times its share (largest remainders round), at least one
    training and one test example when it has two.

    Args:
      y: ``(m,)`` labels.
      train_size: a fraction in ``(0, 1)`` or a count in ``[1, m - 1]``.
      seed: NumPy ``default_rng`` seed.

    Example:
      >>> train, test = stratified_split([0, 0, 0, 0, 1, 1, 1, 1], 0.5, seed=0)
      >>> len(train), len(test), sorted(train.tolist() + test.tolist()) == list(range(8))
      (4, 4, True)
    """
    y = np.asarray(y)
    m = len(y)
    n_train = round(train_size * m) if isinstance(train_size, float) else int(train_size)
    if not 1 <= n_train <= m - 1:
        raise ValueError(f"train_size {train_size} leaves no train or no test example (m={m})")
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    quota = n_train * counts / m
    take = np.floor(quota).astype(int)
    order = np.argsort(-(quota - take), kind="stable")
    take[order[: n_train - take.sum()]] += 1
    take = np.clip(take, np.minimum(1, counts - 1), np.maximum(counts - 1, 1))
    while take.sum() != n_train:  # fix the clip's effect on the total (a few steps at most)
        step = 1 if take.sum() < n_train else -1
        room = (take < counts - 1) if step > 0 else (take > 1)
        take[np.argmax(np.where(room, counts, -1))] += step
    rng = np.random.default_rng(seed)
    parts = [rng.permutation(np.flatnonzero(inverse == c)) for c in range(len(classes))]
    train = np.concatenate([p[:k] for p, k in zip(parts, take, strict=True)])
    test = np.concatenate([p[k:] for p, k in zip(parts, take, strict=True)])
    return rng.permutation(train), rng.permutation(test)


def train_test_split(X: Any, y: Any, train_size: float | int = 0.5, *, seed: int = 0) -> Split:
    """Seeded stratified train / test split of ``(X, y)`` (see :func:`stratified_split`).

    Example:
      >>> import numpy as np
      >>> X, y = np.arange(8.0).reshape(-1, 1), np.array([-1.0] * 4 + [1.0] * 4)
      >>> s = train_test_split(X, y, 0.5, seed=0)
      >>> s.X_train.shape, sorted(s.y_train.tolist())  # two of each class
      ((4, 1), [-1.0, -1.0, 1.0, 1.0])
    """
    X, y = np.asarray(X), np.asarray(y)
    if len(X) != len(y):
        raise ValueError(f"mismatched lengths: X has {len(X)} rows, y has {len(y)} labels")
    train, test = stratified_split(y, train_size, seed=seed)
    return Split(X[train], y[train], X[test], y[test])


def roy2016_split(X: Any, y: Any, *, seed: int = 0, max_train: int = 500) -> Split:
    """The protocol of roy2016 §7: half the examples for training, at most ``max_train``
    (500), all the others for testing; stratified and seeded.

    Example:
      >>> s = roy2016_split(*load("breast_cancer", return_X_y=True))
      >>> len(s.y_train), len(s.y_test)  # half for training (at most 500), the rest for testing
      (284, 285)
    """
    n_train = min(len(np.asarray(y)) // 2, max_train)
    return train_test_split(X, y, n_train, seed=seed)
