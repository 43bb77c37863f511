"""Binary classification data: bundled sets, files (CSV, KEEL, ARFF), OpenML, the papers' sets.

NumPy only, never traced. Every loader returns features ``X`` (float64, ``(m, d)``) and labels
``y`` (float64 in ``{-1, +1}``) and refuses anything it cannot make binary with a
``ValueError`` naming the labels found.

* :func:`load` -- one line, offline: scikit-learn's bundled sets (``"breast_cancer"``,
  ``"digits:4v9"``, ``"wine:0vrest"``, ``"iris:setosavrest"``), then the registry names, then
  a file path.
* :func:`load_file` -- CSV, KEEL ``.dat`` and ARFF text; categorical features one-hot encoded
  (a two-level one becomes a single 0/1 column); missing values (``?``) dropped or imputed,
  and reported in :attr:`Dataset.notes`.
* :func:`load_openml` -- through scikit-learn's fetcher, with a clear error when offline.
* :data:`REGISTRY` / :func:`load_registered` -- the sets of roy2016 Table 1 and germain2009
  Table 1 (and every other file in the shared data folder) under a data directory: the
  ``data_dir`` argument or the ``PACBOUND_DATA`` environment variable.
* :func:`train_test_split`, :func:`roy2016_split` -- seeded stratified splits; roy2016 §7:
  "half of the examples [...] in the training set S of at most 500 examples, and the remaining
  testing examples T".

Label rule when no class is named: with exactly two labels, the larger one (numeric order if
all labels are numbers, string order otherwise) is ``+1``; ``positive=`` (one label or several:
one-vs-rest) or ``pair=(pos, neg)`` (other rows dropped) choose explicitly.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "ALIASES",
    "MISSING",
    "REGISTRY",
    "Dataset",
    "RegistryEntry",
    "Split",
    "binarize_labels",
    "check_X_y",
    "load",
    "load_file",
    "load_openml",
    "load_registered",
    "resolve_data_dir",
    "roy2016_split",
    "stratified_split",
    "train_test_split",
]

MISSING = ("?", "")
_SKLEARN_HINT = "scikit-learn is needed for this loader: pip install pacbound[sklearn]"


class Dataset(NamedTuple):
    """A binary classification dataset.

    Attributes:
      X: ``(m, d)`` float64 features, finite.
      y: ``(m,)`` float64 labels in ``{-1, +1}``, both present.
      feature_names: ``d`` names (one-hot columns are ``"name=level"``).
      name: where it came from.
      notes: what the loader did (label mapping, missing values, encodings), for reports.
    """

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    name: str
    notes: tuple[str, ...]


class Split(NamedTuple):
    """A train / test split."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


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


# ------------------------------------------------------------------------- labels
def _canonical(labels: Sequence[Any]) -> np.ndarray:
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
    labels: Sequence[Any], positive: Any = None, pair: tuple[Any, Any] | None = None
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
    """
    lab = _canonical(labels)
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


def _check_two(y: np.ndarray, keep: np.ndarray, note: str, lab: np.ndarray):
    if len(np.unique(y)) < 2:
        raise ValueError(f"a single class after mapping ({note}); labels found {_show(lab)}")
    return y, keep, note


def check_X_y(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a dataset at the Python boundary and return ``(X, y)`` as float64 arrays.

    Raises:
      ValueError: ``X`` not a finite 2-D numeric matrix (NaN/inf located), ``y`` not 1-D,
        mismatched lengths, labels not binary (naming those found) or a single class.
    """
    X = _check_matrix(X)
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if len(y) != len(X):
        raise ValueError(f"mismatched lengths: X has {len(X)} rows, y has {len(y)} labels")
    return X, binarize_labels(y)[0]


def _class_lookup(values: Sequence[Any]) -> dict[str, Any]:
    """Case-insensitive tokens for class values (``4.0`` answers to ``"4"``)."""
    lookup = {}
    for v in values:
        is_int = isinstance(v, float | np.floating) and float(v).is_integer()
        lookup[(str(int(v)) if is_int else str(v)).lower()] = v
    return lookup


def _split_spec(spec: str, lookup: dict[str, Any]) -> dict[str, Any]:
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


def _read_table(
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
    incomplete = miss.any(axis=1)
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
    return np.where(miss, None, cells)[rows], rows, notes, cols


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


def _from_cells(
    cells: np.ndarray,
    names: list[str],
    levels: list[list[str] | None],
    source: str,
    options: dict[str, Any],
) -> Dataset:
    """Labels, missing values and encoding shared by files and OpenML."""
    label = _column_index(options.get("label_column", -1), names)
    dropped = {_column_index(c, names) for c in options.get("drop_columns", ())}
    features = [j for j in range(len(names)) if j != label and j not in dropped]
    missing_values = tuple(options.get("missing_values", MISSING))
    labels, notes = cells[:, label], []
    labelled = ~np.isin(labels, missing_values)
    if not labelled.all():
        notes.append(f"dropped {np.sum(~labelled)} rows without a label")
    kw = {k: options[k] for k in ("positive", "pair") if options.get(k) is not None}
    if options.get("split") is not None:
        kw = _split_spec(options["split"], _class_lookup(np.unique(_canonical(labels[labelled]))))
    y, keep, note = binarize_labels(labels[labelled], **kw)
    rows = np.flatnonzero(labelled)[keep]
    sub, kept, more, cols = _handle_missing(
        cells[np.ix_(rows, features)],
        [names[j] for j in features],
        options.get("missing", "auto"),
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
    notes += [f"labels: {note}", *more]
    if encoded:
        notes.append("one-hot encoded " + "; ".join(encoded))
    return _finish(X, y[kept], feature_names, source, notes)


def _finish(X, y, feature_names, name, notes) -> Dataset:
    X = _check_matrix(X)
    if len(np.unique(y)) < 2:
        raise ValueError(f"{name}: a single class ({np.unique(y)}) remains after preprocessing")
    return Dataset(X, np.asarray(y, np.float64), tuple(feature_names), name, tuple(notes))


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
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a CSV, KEEL ``.dat`` or ARFF file as a binary dataset.

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

    Returns:
      A :class:`Dataset` (``notes`` say what was dropped, imputed and encoded) or ``(X, y)``.

    Raises:
      ValueError: ragged rows, non-finite numbers, labels that are not binary (naming them),
        a single class.
    """
    path = Path(path)
    cells, names, levels = _read_table(path, delimiter, header)
    options = dict(
        label_column=label_column,
        positive=positive,
        pair=pair,
        missing=missing,
        drop_columns=drop_columns,
        missing_values=missing_values,
    )
    ds = _from_cells(cells, names, levels, str(path), options)
    return (ds.X, ds.y) if return_X_y else ds


def _sklearn_datasets():
    try:
        import sklearn.datasets
    except ImportError as err:
        raise ImportError(_SKLEARN_HINT) from err
    return sklearn.datasets


_BUNDLED = {
    "breast_cancer": "load_breast_cancer",
    "digits": "load_digits",
    "wine": "load_wine",
    "iris": "load_iris",
}


def _load_bundled(base: str, spec: str) -> Dataset:
    """scikit-learn's bundled sets; ``breast_cancer`` maps malignant (target 0) to ``+1``."""
    bunch = getattr(_sklearn_datasets(), _BUNDLED[base])()
    target, names = bunch.target, [str(n) for n in bunch.target_names]
    if base == "breast_cancer" and not spec:
        spec = "malignantvrest"
    if not spec:
        raise ValueError(
            f"{base!r} has {len(names)} classes {names}: name a split, e.g. "
            f"'{base}:0v1' (pair) or '{base}:0vrest' (one-vs-rest)"
        )
    lookup = {
        **{str(i): i for i in range(len(names))},
        **{n.lower(): i for i, n in enumerate(names)},
    }
    y, keep, note = binarize_labels(target, **_split_spec(spec, lookup))
    label = f"{base}:{spec}"
    return _finish(
        bunch.data[keep],
        y,
        bunch.feature_names,
        label,
        [f"scikit-learn bundled {base} ({names}); labels: {note}"],
    )


def load_openml(
    name_or_id: str | int,
    cache_dir: str | os.PathLike | None = None,
    *,
    positive: Any = None,
    pair: tuple[Any, Any] | None = None,
    missing: str = "auto",
    return_X_y: bool = False,
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Fetch an OpenML dataset (by name or id) through scikit-learn, cached in ``cache_dir``.

    Nominal features are one-hot encoded and missing values handled as in :func:`load_file`.

    Raises:
      ImportError: scikit-learn is not installed (``pip install pacbound[sklearn]``).
      ConnectionError: the dataset is neither cached nor downloadable (offline).
      ValueError: labels not binary and no ``positive`` / ``pair`` given.
    """
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
    levels = [cats.get(n) for n in names] + [None]
    options = dict(positive=positive, pair=pair, missing=missing)
    ds = _from_cells(cells, [*names, "class"], levels, f"openml:{name_or_id}", options)
    return (ds.X, ds.y) if return_X_y else ds


# ---------------------------------------------------------------------- registry
class RegistryEntry(NamedTuple):
    """A named dataset under the data directory.

    Attributes:
      path: file relative to the data directory (``None``: not shipped, see ``openml``).
      papers: where the papers use it, with their name and (|S|, |T|) where printed.
      note: the binary split: the paper's where known, ours (and why) where not.
      options: :func:`load_file` keyword arguments (label column, split, missing policy).
      openml: the OpenML name to fetch it with when no file is shipped.
    """

    path: str | None
    papers: str
    note: str
    options: dict[str, Any]
    openml: str | None


# name | file under the data directory ("-": none) | load options | papers (|S|+|T|) | split
_TABLE = """
australian | keel/australian.dat | positive=1 | roy2016 | binary 0/1: 1 -> +1
balance | - | openml=balance-scale | roy2016 | split not given; no file here
breast | keel/wisconsin.dat | positive=4 | roy2016; germain2009 BreastCancer 343+340 \
  | Wisconsin original, 683 complete rows: malignant (4) -> +1
bupa | keel/bupa.dat | positive=2 | roy2016; germain2009 Liver 170+175 | selector 2 -> +1
car | keel/car-good.dat | positive=positive | roy2016 | split not given; ours: good vs rest
cmc | keel/contraceptive.dat | positive=1 | roy2016 | split not given; ours: 1 (no use) vs rest
credit | keel/crx.dat | positive=positive | roy2016; germain2009 Credit-A 353+300 \
  | 653 complete rows: approved (+) -> +1
cylinder | keel/bands.dat | positive=band | roy2016 | band -> +1
ecoli | keel/ecoli1.dat | positive=positive | roy2016 | split not given; ours: im vs rest
glass | keel/glass1.dat | positive=positive | roy2016; germain2009 Glass 107+107 \
  | split not given; ours: KEEL glass1, class 2 vs rest
haberman | keel/haberman.dat | positive=positive | germain2009 Haberman 144+150 | died -> +1
heart | keel/heart.dat | positive=2 | roy2016 | Statlog (270): presence (2) -> +1; \
  germain2009's Heart (297) is cleveland
hepatitis | - | openml=hepatitis | roy2016 | split not given; no file here
horse | uci/horse-colic.csv | label=23 drop=2,22,24,25,26 positive=1 | roy2016 \
  | surgical lesion (attr. 24) -> +1; hospital id, outcome, lesion type dropped (leaks)
ionosphere | keel/ionosphere.dat | positive=g | roy2016; germain2009 Ionosphere 176+175 \
  | good (g) -> +1
letter | keel/letter.dat | | roy2016 letter:ab; germain2009 Letter:AB, DO, OQ 500+rest \
  | pairs as named: letter:ab maps A -> +1, B -> -1
monks | keel/monk-2.dat | positive=1 | roy2016 | which MONK problem not given; ours: MONK-2
mnist | - | openml=mnist_784 | germain2009 MNIST:0vs8, 1vs7, 1vs8, 2vs3 | no file here
mushroom | keel/mushroom.dat | positive=p | germain2009 Mushroom 4062+4062 \
  | poisonous -> +1; this copy has 5644 rows (KEEL removed rows missing stalk-root)
optdigits | keel/optdigits.dat | split=4v9 | roy2016 | split not given; ours: 4 vs 9
pima | keel/pima.dat | positive=tested_positive | roy2016 | diabetic -> +1
ringnorm | keel/ring.dat | positive=1 | germain2009 Ringnorm 3700+3700 | 1 -> +1
sonar | keel/sonar.dat | positive=M | germain2009 Sonar 104+104 | mine (M) -> +1
titanic | keel/titanic.dat | positive=1 | roy2016 | survived (1) -> +1
usvotes | uci/vote.arff | positive=republican missing=impute | germain2009 Usvotes 235+200 \
  | all 435 rows, missing votes imputed (most frequent); republican -> +1
vote | keel/housevotes.dat | positive=republican | roy2016 | 232 complete rows; republican -> +1
waveform | - | openml=waveform-5000 | germain2009 Waveform 4000+4000 | split not given; no file
wdbc | keel/wdbc.dat | positive=M | germain2009 Wdbc 285+284 | malignant (M) -> +1
wine | keel/wine.dat | positive=1 | roy2016 | split not given; ours: cultivar 1 vs rest
yeast | keel/yeast1.dat | positive=positive | roy2016 | split not given; ours: NUC vs rest
zoo | keel/zoo-3.dat | positive=positive | roy2016 | split not given; ours: class 3 vs rest
banana | keel/banana.dat | positive=1 | - | 1 -> +1
breast-ljubljana | keel/breast.dat | positive=recurrence-events | - | recurrence -> +1
german | keel/german.dat | positive=2 | - | credit-g: bad (2) -> +1
magic | keel/magic.dat | positive=g | - | gamma (g) -> +1
spambase | keel/spambase.dat | positive=1 | - | spam (1) -> +1
twonorm | keel/twonorm.dat | positive=1 | - | 1 -> +1
breast-cancer-wisconsin | uci/breast-cancer-wisconsin.csv | positive=4 | - \
  | no id column in this copy (10 fields); malignant (4) -> +1; 16 incomplete rows dropped
ecoli-uci | uci/ecoli.csv | positive=im | - | im vs rest (as KEEL ecoli1)
german-uci | uci/german.csv | positive=2 | - | bad (2) -> +1
glass-uci | uci/glass.csv | positive=2 | - | class 2 vs rest (as KEEL glass1)
ionosphere-uci | uci/ionosphere.csv | positive=g | - | good (g) -> +1
pima-uci | uci/pima-indians-diabetes.csv | positive=1 | - | diabetic (1) -> +1
sonar-uci | uci/sonar.csv | positive=M | - | mine (M) -> +1
wine-uci | uci/wine.csv | positive=1 | - | cultivar 1 vs rest
breast-cancer | uci/breast-cancer.arff | positive=recurrence-events | - | Ljubljana; recurrence
cleveland | uci/cleveland.arff | positive=1,2,3,4 | germain2009 Heart 150+147 \
  | 297 complete rows; disease (num > 0) -> +1
credit-g | uci/credit-g.arff | positive=bad | - | bad -> +1
hungarian | uci/hungarian.arff | positive=1,2,3,4 | - | disease (num > 0) -> +1; imputed
hypothyroid | uci/hypothyroid.arff \
  | positive=compensated_hypothyroid,primary_hypothyroid,secondary_hypothyroid \
  | - | hypothyroid (any kind) -> +1, negative -> -1; imputed
labor | uci/labor.arff | positive=good | - | good -> +1; imputed
"""


def _parse_options(text: str) -> tuple[dict[str, Any], str | None]:
    options, openml = {}, None
    for item in text.split():
        key, value = item.split("=")
        parts = value.split(",")
        if key == "openml":
            openml = value
        elif key in ("label", "drop"):
            ints = tuple(int(v) for v in parts)
            options["label_column" if key == "label" else "drop_columns"] = (
                ints[0] if key == "label" else ints
            )
        else:
            options[key] = tuple(parts) if len(parts) > 1 else value
    return options, openml


def _parse_registry(table: str) -> dict[str, RegistryEntry]:
    registry = {}
    for line in table.strip().splitlines():
        name, path, opts, papers, note = (" ".join(f.split()) for f in line.split("|"))
        options, openml = _parse_options(opts)
        registry[name] = RegistryEntry(None if path == "-" else path, papers, note, options, openml)
    return registry


REGISTRY: dict[str, RegistryEntry] = _parse_registry(_TABLE)
ALIASES = {
    "liver": "bupa", "breastcancer": "breast", "credit-a": "credit", "bands": "cylinder",
    "monk-2": "monks", "ring": "ringnorm", "heart-cleveland": "cleveland",
    "housevotes": "vote", "contraceptive": "cmc", "credit-approval": "credit",
}  # fmt: skip


def resolve_data_dir(path: str | os.PathLike | None = None) -> Path:
    """The data directory: ``path`` if given, else ``$PACBOUND_DATA``.

    Raises:
      FileNotFoundError: neither is set, or the directory does not exist.
    """
    path = path if path is not None else os.environ.get("PACBOUND_DATA")
    if path is None:
        raise FileNotFoundError("no data directory: pass data_dir= or set PACBOUND_DATA")
    if not Path(path).is_dir():
        raise FileNotFoundError(f"data directory {path} does not exist")
    return Path(path)


def load_registered(
    name: str, data_dir: str | os.PathLike | None = None, *, return_X_y: bool = False
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a :data:`REGISTRY` dataset (or an alias) from the data directory.

    ``name`` may carry a class split for the multiclass sets: ``"letter:ab"``, ``"letter:dvo"``,
    ``"optdigits:1v7"``; it overrides the entry's default split.

    Raises:
      KeyError: unknown name (listing the known ones).
      FileNotFoundError: no data directory, or the set is not shipped (naming its OpenML name).
    """
    base, _, spec = name.strip().partition(":")
    key = ALIASES.get(base.lower(), base.lower())
    if key not in REGISTRY:
        raise KeyError(f"unknown dataset {name!r}; known: {sorted(REGISTRY)}")
    entry = REGISTRY[key]
    if entry.path is None:
        raise FileNotFoundError(
            f"{key!r} has no file in the data directory; fetch it with "
            f"load_openml({entry.openml!r}, ...) ({entry.note})"
        )
    options = dict(entry.options, **({"split": spec} if spec else {}))
    if spec:
        options.pop("positive", None)
    path = resolve_data_dir(data_dir) / entry.path
    cells, names, levels = _read_table(path, ",", False)
    ds = _from_cells(cells, names, levels, name, options)
    ds = ds._replace(notes=(f"{entry.papers}: {entry.note}", *ds.notes))
    return (ds.X, ds.y) if return_X_y else ds


def load(
    name: str, *, data_dir: str | os.PathLike | None = None, return_X_y: bool = False
) -> Dataset | tuple[np.ndarray, np.ndarray]:
    """Load a dataset by name, in one line.

    Resolution order: scikit-learn's bundled sets, offline (``"breast_cancer"``: malignant ->
    +1; ``"digits:4v9"``, ``"wine:0vrest"``, ``"iris:setosavversicolor"``, classes by target
    index or name); then :data:`REGISTRY` names (``"sonar"``, ``"letter:ab"``) under the data
    directory; then a file path (:func:`load_file` defaults).

    Returns:
      A :class:`Dataset`, or ``(X, y)`` with ``return_X_y``.
    """
    base, _, spec = name.strip().partition(":")
    if base in _BUNDLED:
        ds = _load_bundled(base, spec)
    elif ALIASES.get(base.lower(), base.lower()) in REGISTRY:
        ds = load_registered(name, data_dir)
    elif Path(name).is_file():
        ds = load_file(name)
    else:
        raise ValueError(
            f"unknown dataset {name!r}: not bundled ({sorted(_BUNDLED)}), "
            f"not registered ({sorted(REGISTRY)}) and not a file"
        )
    return (ds.X, ds.y) if return_X_y else ds


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
    """Seeded stratified train / test split of ``(X, y)`` (see :func:`stratified_split`)."""
    X, y = np.asarray(X), np.asarray(y)
    if len(X) != len(y):
        raise ValueError(f"mismatched lengths: X has {len(X)} rows, y has {len(y)} labels")
    train, test = stratified_split(y, train_size, seed=seed)
    return Split(X[train], y[train], X[test], y[test])


def roy2016_split(X: Any, y: Any, *, seed: int = 0, max_train: int = 500) -> Split:
    """The protocol of roy2016 §7: half the examples for training, at most ``max_train``
    (500), all the others for testing; stratified and seeded."""
    n_train = min(len(np.asarray(y)) // 2, max_train)
    return train_test_split(X, y, n_train, seed=seed)
