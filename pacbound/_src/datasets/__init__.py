"""Classification data: bundled sets, files (CSV, KEEL, ARFF), OpenML, the papers' sets.

NumPy only, never traced. Every loader returns features ``X`` (float64, ``(m, d)``) and labels
``y`` (float64 in ``{-1, +1}``) and refuses anything it cannot make binary with a
``ValueError`` naming the labels found; with ``multiclass=True`` (for learners of any number
of classes, such as forests) the labels are int64 class indices instead, named by
:attr:`Dataset.classes`, and nothing is refused for having more than two classes.

* :func:`load` -- one line, offline: scikit-learn's bundled sets (``"breast_cancer"``,
  ``"digits:4v9"``, ``"wine:0vrest"``, ``"iris:setosavrest"``), then the registry names, then
  a file path (:mod:`~pacbound._src.datasets.loaders`).
* :func:`load_file` (:mod:`~pacbound._src.datasets.tabular`) -- CSV, KEEL ``.dat`` and ARFF text;
  categorical features one-hot encoded (a two-level one becomes a single 0/1 column); missing
  values (``?``) dropped or imputed, and reported in :attr:`Dataset.notes`.
* :func:`load_openml` -- through scikit-learn's fetcher, with a clear error when offline.
* :data:`REGISTRY` / :func:`load_registered` (:mod:`~pacbound._src.datasets.registry`) -- the sets
  of roy2016 Table 1 and germain2009 Table 1 (and every other file in the shared data folder)
  under a data directory: the ``data_dir`` argument or the ``PACBOUND_DATA`` environment
  variable.
* :func:`train_test_split`, :func:`roy2016_split` -- seeded stratified splits; roy2016 §7:
  "half of the examples [...] in the training set S of at most 500 examples, and the remaining
  testing examples T".
* :func:`binarize_labels`, :func:`index_labels`, :func:`check_X_y`
  (:mod:`~pacbound._src.datasets.labels`).

Label rule when no class is named: with exactly two labels, the larger one (numeric order if
all labels are numbers, string order otherwise) is ``+1``; ``positive=`` (one label or several:
one-vs-rest) or ``pair=(pos, neg)`` (other rows dropped) choose explicitly.
"""

from pacbound._src.datasets.labels import binarize_labels, check_X_y, index_labels
from pacbound._src.datasets.loaders import (
    Split,
    load,
    load_openml,
    roy2016_split,
    stratified_split,
    train_test_split,
)
from pacbound._src.datasets.registry import (
    ALIASES,
    REGISTRY,
    RegistryEntry,
    load_registered,
    resolve_data_dir,
)
from pacbound._src.datasets.tabular import MISSING, Dataset, load_file

__all__ = [
    "ALIASES",
    "MISSING",
    "REGISTRY",
    "Dataset",
    "RegistryEntry",
    "Split",
    "binarize_labels",
    "check_X_y",
    "index_labels",
    "load",
    "load_file",
    "load_openml",
    "load_registered",
    "resolve_data_dir",
    "roy2016_split",
    "stratified_split",
    "train_test_split",
]
