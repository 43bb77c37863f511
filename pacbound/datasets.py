"""Datasets: bundled, registered and file loaders, and seeded splits (NumPy, never traced)."""

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
