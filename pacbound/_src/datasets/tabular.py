"""Tabular files as datasets: CSV, KEEL ``.dat`` and ARFF text, labels mapped to ``±1``.

NumPy only, never traced. :func:`load_file` returns features ``X`` (float64, ``(m, d)``) and
labels ``y`` (float64 in ``{-1, +1}``); categorical features are one-hot encoded (a two-level
one becomes a single 0/1 column); missing values (``?``) are dropped or imputed, and reported
in :attr:`Dataset.notes`. Anything that cannot be made binary is refused with a
``ValueError`` naming the labels found. With ``multiclass=True`` the labels are integer class
indices instead (``y`` int64 in ``0 .. C-1``, :attr:`Dataset.classes` naming them), any
number of classes accepted; a binary split asked for (``positive=`` / ``pair=`` / ``split=``)
still applies, giving the classes ``("-1", "+1")``.

Labels follow the rule of :mod:`pacbound._src.datasets.labels`: with exactly two labels, the larger
one is ``+1``; ``positive=`` (one-vs-rest) or ``pair=(pos, neg)`` choose explicitly.

:func:`read_table`, :func:`dataset_from_cells`, :func:`checked_dataset` and
:func:`encode_labels` are shared with
:mod:`pacbound._src.datasets.registry` and the package's loaders.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypedDict, Unpack, cast, overload

import numpy as np

from pacbound._src.datasets.labels import (
    binarize_labels,
    canonical_labels,
    class_lookup,
    index_labels,
    parse_split_spec,
)
from pacbound._src.validation import check_features

__all__ = ["MISSING", "Dataset", "load_file"]

MISSING = ("?", "")


class Dataset(NamedTuple):
    """A classification dataset: binary (labels ``±1``) unless loaded with ``multiclass=True``.

    Attributes:
      X: ``(m, d)`` float64 features, finite.
      y: ``(m,)`` float64 labels in ``{-1, +1}``, both present; with ``multiclass=True`` int64
        class indices in ``0 .. C-1`` (at least two present).
      feature_names: ``d`` names (one-hot columns are ``"name=level"``).
      name: where it came from.
      notes: what the loader did (label mapping, missing values, encodings), for reports.
      classes: with ``multiclass=True``, the label of each class index; ``()`` for ``±1``
        labels.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    name: str
    notes: tuple[str, ...]
    classes: tuple[str, ...] = ()


def checked_dataset(
    X: Any,
    y: Any,
    feature_names: Sequence[str],
    name: str,
    notes: Sequence[str],
    classes: Sequence[str] = (),
) -> Dataset:
    """A :class:`Dataset` after checking ``X`` is finite and two classes or more remain;
    ``classes`` given: ``y`` holds indices into it (kept as int64), else ``±1`` (float64)."""
    X = check_features(X).astype(np.float64)
    if len(np.unique(y)) < 2:
        raise ValueError(f"{name}: a single class ({np.unique(y)}) remains after preprocessing")
    y = np.asarray(y, np.int64 if classes else np.float64)
    return Dataset(X, y, tuple(feature_names), name, tuple(notes), tuple(classes))


def encode_labels(
    labels: np.ndarray, kw: dict[str, Any], multiclass: bool
) -> tuple[np.ndarray, np.ndarray, str, tuple[str, ...]]:
    """Labels mapped by the binary split ``kw`` (``positive`` / ``pair``) or, with
    ``multiclass`` and no split, to class indices. Returns ``(y, keep, note, classes)``:
    ``classes`` is ``()`` for ``±1`` labels, ``("-1", "+1")`` for a split's indices."""
    if multiclass and not kw:
        y, classes, note = index_labels(labels)
        return y, np.ones(len(y), bool), note, classes
    y, keep, note = binarize_labels(labels, **kw)
    if multiclass:
        return (y > 0).astype(np.int64), keep, f"{note} (indices 0 = -1, 1 = +1)", ("-1", "+1")
    return y, keep, note, ()


# -------------------------------------------------------------------- text parsing
_ATTRIBUTE = re.compile(r"@attribute\s+('[^']*'|\"[^\"]*\"|[^\s{]+)\s*(.*)$", re.IGNORECASE)


def _unquote(s: str) -> str:
    s = s.strip()
    return s[1:-1].strip() if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"" else s


def _parse_attribute(line: str) -> tuple[str, list[str] | None]:
    """An ARFF / KEEL ``@attribute`` line: its name and declared nominal levels (or None)."""
    match = _ATTRIBUTE.match(line)
    if match is None:
        raise ValueError(f"cannot parse attribute declaration {line!r}")
    name, kind = _unquote(match.group(1)), match.group(2).strip()
    if kind.startswith("{"):
        inner = kind[1 : kind.rindex("}")]
        return name, [_unquote(v) for v in next(csv.reader([inner], quotechar="'"))]
    if kind.split()[0].lower() in ("real", "numeric", "integer", "string"):
        return name, None
    raise ValueError(f"unsupported attribute type {kind!r} for {name!r} (date/relational)")


def read_table(
    path: Path, delimiter: str, header: bool
) -> tuple[np.ndarray, list[str], list[list[str] | None]]:
    """Cells ``(m, c)`` as stripped strings, column names, declared nominal levels."""
    lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("%")]
    names, levels, quote = [], [], '"'
    if lines and lines[0].startswith("@"):
        quote, end = "'", next((i for i, ln in enumerate(lines) if ln.lower() == "@data"), None)
        if end is None:
            raise ValueError(f"{path}: header without an @data line")
        for ln in lines[:end]:
            if ln.lower().startswith("@attribute"):
                name, lev = _parse_attribute(ln)
                names.append(name)
                levels.append(lev)
        lines = lines[end + 1 :]
    rows = [
        [_unquote(v) for v in r]
        for r in csv.reader(lines, delimiter=delimiter, quotechar=quote, skipinitialspace=True)
    ]
    if header and not names:
        names, rows = rows[0], rows[1:]
    if not rows:
        raise ValueError(f"{path}: no data rows")
    width = len(names) or len(rows[0])
    bad = next((i for i, r in enumerate(rows) if len(r) != width), None)
    if bad is not None:
        raise ValueError(f"{path}: data row {bad} has {len(rows[bad])} fields, expected {width}")
    if rows[0] and rows[0][0].startswith("{"):
        raise ValueError(f"{path}: sparse ARFF data is not supported")
    names = names or [f"x{j}" for j in range(width)]
    return np.array(rows, dtype=str), names, levels or [None] * width


# ------------------------------------------------------- missing values and encoding
def _handle_missing(
    cells: np.ndarray, names: list[str], missing: str, missing_values: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, list[str], list[int]]:
    """Drop all-missing columns, then drop or impute rows with missing cells.

    ``missing="auto"`` drops the incomplete rows when they are at most 5% of the rows and
    imputes otherwise. Returns ``(cells, kept rows mask, notes, kept column indices)``;
    imputed cells become ``None`` placeholders filled by :func:`_encode_column`.
    """
    if missing not in ("auto", "drop", "impute"):
        raise ValueError(f"missing must be 'auto', 'drop' or 'impute'; got {missing!r}")
    miss = np.isin(cells, list(missing_values))
    cols = [j for j in range(cells.shape[1]) if not miss[:, j].all()]
    notes = [
        f"dropped column {names[j]!r}: no value present"
        for j in sorted(set(range(cells.shape[1])) - set(cols))
    ]
    cells, miss = cells[:, cols], miss[:, cols]
    incomplete = cast(np.ndarray, miss.any(axis=1))  # (m,): NumPy's stubs allow a scalar
    rows = np.ones(len(cells), bool)
    if incomplete.any():
        drop = missing == "drop" or (missing == "auto" and incomplete.mean() <= 0.05)
        if drop:
            rows = ~incomplete
            notes.append(f"missing values: dropped {incomplete.sum()} of {len(cells)} rows")
        else:
            notes.append(
                f"missing values: imputed {miss.sum()} cells in {incomplete.sum()} of "
                f"{len(cells)} rows (median for numbers, most frequent level for categories)"
            )
    # NumPy's stubs refuse None as a value; np.where makes it an object array's None
    filled = np.where(miss, None, cells)  # type: ignore[call-overload]
    return filled[rows], rows, notes, cols


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _refuse_stray_text(observed: np.ndarray, name: str, rows: np.ndarray) -> None:
    """A column of numbers with text in at most 5% of its cells (a typo, or a missing-value
    marker such as ``NA`` not in ``missing_values``) is refused, not one-hot encoded; a
    category with numeric levels (``2, 3, 4, 5more``) has text in more cells than that."""
    text = np.flatnonzero([not _is_number(v) for v in observed])
    if text.size <= 0.05 * observed.size:
        raise ValueError(
            f"feature {name!r} is not numeric: {str(observed[text[0]])!r} at row "
            f"{rows[text[0]]} among numbers ({text.size} of {observed.size} cells are text); "
            "fix the cell or mark missing values as '?'"
        )


def _encode_column(
    values: np.ndarray, name: str, levels: list[str] | None
) -> tuple[np.ndarray, list[str], str | None]:
    """One column -> ``(m, k)`` floats: numbers as they are, categories one-hot.

    ``None`` cells are imputed (median / most frequent level). A two-level category becomes one
    0/1 indicator of its second level; more levels give one indicator per level.
    """
    present = np.array([v is not None for v in values])
    observed = values[present].astype(str)
    if levels is None:
        try:
            numbers = observed.astype(np.float64)
        except ValueError:
            _refuse_stray_text(observed, name, np.flatnonzero(present))
            levels = sorted(set(observed))
        else:
            bad = np.flatnonzero(~np.isfinite(numbers))
            if bad.size:
                row = np.flatnonzero(present)[bad[0]]
                raise ValueError(
                    f"feature {name!r} has non-finite value {str(observed[bad[0]])!r} "
                    f"at row {row}; mark missing values as '?'"
                )
            out = np.full(len(values), np.median(numbers))
            out[present] = numbers
            return out[:, None], [name], None
    unknown = sorted(set(observed) - set(levels))
    if unknown:
        raise ValueError(f"feature {name!r} has values {unknown} outside its levels {levels}")
    counts = [np.sum(observed == lev) for lev in levels]  # ties: the first level
    filled = np.where(present, values, levels[int(np.argmax(counts))]).astype(str)
    keep = levels[1:] if len(levels) == 2 else levels
    onehot = (filled[:, None] == np.array(keep)[None, :]).astype(np.float64)
    return onehot, [f"{name}={lev}" for lev in keep], f"{name}: {len(levels)} levels"


# ----------------------------------------------------------------------- loaders
def _column_index(col: int | str, names: list[str]) -> int:
    if isinstance(col, str):
        if col not in names:
            raise ValueError(f"no column named {col!r}; columns are {names}")
        return names.index(col)
    if not -len(names) <= col < len(names):
        raise ValueError(f"column {col} out of range for {len(names)} columns")
    return col % len(names)


def _labels_of_column(
    labels: np.ndarray,
    missing_values: Sequence[str],
    positive: Any,
    pair: tuple[Any, Any] | None,
    split: str | None,
    multiclass: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[str], tuple[str, ...]]:
    """The label column as ``±1`` (or class indices: :func:`encode_labels`) after dropping
    rows without a label.

    ``split`` (a class split such as ``"4v9"``) overrides ``positive`` and ``pair``. Returns
    ``(y, rows, notes, classes)``, ``rows`` the indices of the rows kept.
    """
    labelled = ~np.isin(labels, missing_values)
    notes = [] if labelled.all() else [f"dropped {np.sum(~labelled)} rows without a label"]
    kw = {k: v for k, v in (("positive", positive), ("pair", pair)) if v is not None}
    if split is not None:
        lookup = class_lookup(np.unique(canonical_labels(labels[labelled])))
        kw = parse_split_spec(split, lookup)
    y, keep, note, classes = encode_labels(labels[labelled], kw, multiclass)
    return y, np.flatnonzero(labelled)[keep], [*notes, f"labels: {note}"], classes


def dataset_from_cells(
    cells: np.ndarray,
    names: list[str],
    levels: list[list[str] | None],
    source: str,
    *,
    label_column: int | str = -1,
    positive: Any = None,
    pair: tuple[Any, Any] | None = None,
    split: str | None = None,
    drop_columns: Sequence[int | str] = (),
    missing: str = "auto",
    missing_values: Sequence[str] = MISSING,
    multiclass: bool = False,
) -> Dataset:
    """Labels, missing values and encoding shared by files, the registry and OpenML."""
    label = _column_index(label_column, names)
    dropped = {_column_index(c, names) for c in drop_columns}
    features = [j for j in range(len(names)) if j != label and j not in dropped]
    missing_values = tuple(missing_values)
    y, rows, notes, classes = _labels_of_column(
        cells[:, label], missing_values, positive, pair, split, multiclass
    )
    sub, kept, more, cols = _handle_missing(
        cells[np.ix_(rows, features)],  # type: ignore[arg-type]  # NumPy's stubs: arrays only
        [names[j] for j in features],
        missing,
        missing_values,
    )
    columns = [
        _encode_column(sub[:, i], names[features[c]], levels[features[c]])
        for i, c in enumerate(cols)
    ]
    if not columns:
        raise ValueError(f"{source}: no feature column left besides the label")
    X = np.concatenate([c[0] for c in columns], axis=1)
    feature_names = tuple(n for c in columns for n in c[1])
    encoded = [c[2] for c in columns if c[2] is not None]
    notes += more
    if encoded:
        notes.append("one-hot encoded " + "; ".join(encoded))
    return checked_dataset(X, y[kept], feature_names, source, notes, classes)


class MulticlassOption(TypedDict, total=False):
    """The keyword option of every loader (:func:`load_file`, ``load``, ``load_openml``,
    ``load_registered``), typed once for their ``return_X_y`` overloads: the labels as class
    indices."""

    multiclass: bool


class LabelOptions(MulticlassOption, total=False):
    """The options a file or an OpenML set hands to :func:`dataset_from_cells` about its
    labels and missing values."""

    positive: Any
    pair: tuple[Any, Any] | None
    missing: str


class FileOptions(LabelOptions, total=False):
    """:func:`load_file`'s further keyword options (columns, missing cells, the file's form)."""

    drop_columns: Sequence[int | str]
    missing_values: Sequence[str]
    delimiter: str
    header: bool


@overload
def load_file(
    path: str | os.PathLike,
    label_column: int | str = ...,
    *,
    return_X_y: Literal[False] = ...,
    **options: Unpack[FileOptions],
) -> Dataset: ...


@overload
def load_file(
    path: str | os.PathLike,
    label_column: int | str = ...,
    *,
    return_X_y: Literal[True],
    **options: Unpack[FileOptions],
) -> tuple[np.ndarray, np.ndarray]: ...


def load_file(
    path: str | os.PathLike,
    label_column: int | str = -1,
    *,
    positive: Any = None,
    pair: tuple[Any, Any] | None = None,
    drop_columns: Sequence[int | str] = (),
    missing: str = "auto",
    missing_values: Sequence[str] = MISSING,
    delimiter: str = ",",
    header: bool = False,
    return_X_y: bool = False,
    multiclass: bool = False,
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a CSV, KEEL ``.dat`` or ARFF file as a binary (or multiclass) dataset.

    A file whose first line starts with ``@`` (ARFF, KEEL with header) has its ``@attribute``
    declarations read: nominal attributes are categorical with their declared levels. Other
    columns are numeric when every present value parses as a number, categorical otherwise.
    Categorical features are one-hot encoded (two levels: one 0/1 indicator of the second).

    Args:
      path: the file.
      label_column: index (negative counts from the end) or name of the label column.
      positive: label(s) mapped to ``+1`` (one-vs-rest); see :func:`binarize_labels`.
      pair: ``(pos, neg)``: keep only these two labels.
      drop_columns: indices or names of columns to ignore (ids, leaking outcomes).
      missing: ``"drop"`` rows with a missing feature, ``"impute"`` them (median / most frequent
        level), or ``"auto"``: drop when at most 5% of rows are incomplete, else impute.
        Columns with no value at all are dropped; rows without a label always are. Imputation
        statistics come from the whole file: split afterwards, as the papers' copies did.
      missing_values: cell strings meaning missing.
      delimiter: field separator.
      header: the first row of a CSV holds column names.
      return_X_y: return ``(X, y)`` instead of a :class:`Dataset`.
      multiclass: labels as int64 class indices, any number of classes (``positive`` /
        ``pair`` still split them in two); :attr:`Dataset.classes` names them.

    Returns:
      A :class:`Dataset` (``notes`` say what was dropped, imputed and encoded) or ``(X, y)``.

    Raises:
      ValueError: ragged rows, non-finite numbers, labels that are not binary (naming them;
        not with ``multiclass``), a single class.

    Example:
      >>> import tempfile
      >>> from pathlib import Path
      >>> with tempfile.TemporaryDirectory() as folder:
      ...     path = Path(folder) / "pets.csv"
      ...     _ = path.write_text("1.0,red,yes\\n2.0,blue,no\\n3.0,red,yes\\n")
      ...     ds = load_file(path)
      >>> ds.X.tolist(), ds.y.tolist(), ds.feature_names  # the colour one-hot, one 0/1 column
      ([[1.0, 1.0], [2.0, 0.0], [3.0, 1.0]], [1.0, -1.0, 1.0], ('x0', 'x1=red'))
    """
    path = Path(path)
    cells, names, levels = read_table(path, delimiter, header)
    ds = dataset_from_cells(
        cells,
        names,
        levels,
        str(path),
        label_column=label_column,
        positive=positive,
        pair=pair,
        drop_columns=drop_columns,
        missing=missing,
        missing_values=missing_values,
        multiclass=multiclass,
    )
    return (ds.X, ds.y) if return_X_y else ds
