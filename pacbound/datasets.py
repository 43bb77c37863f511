"""Classification data: bundled sets, files (CSV, KEEL, ARFF), OpenML, the papers' sets.

NumPy only, never traced: :func:`load` (scikit-learn's bundled sets offline, then the papers'
sets under ``PACBOUND_DATA``, then a file path), :func:`load_file`, :func:`load_openml`, seeded
stratified splits (:func:`train_test_split`, :func:`stratified_split`, :func:`roy2016_split`),
:func:`binarize_labels`. Labels come out in ``{-1, +1}`` (or class indices with
``multiclass=True``); anything else is refused with a ``ValueError`` naming the labels found.
"""

from pacbound._src.datasets.labels import (
    binarize_labels,
)
from pacbound._src.datasets.loaders import (
    Split,
    load,
    load_openml,
    roy2016_split,
    stratified_split,
    train_test_split,
)
from pacbound._src.datasets.tabular import (
    Dataset,
    load_file,
)

__all__ = [
    "Dataset",
    "Split",
    "binarize_labels",
    "load",
    "load_file",
    "load_openml",
    "roy2016_split",
    "stratified_split",
    "train_test_split",
]
