"""Hyperparameter grids, k-fold cross-validation and bound-based selection, one compiled call."""

from pacbound._src.sweep.cells import (
    stratified_folds,
    stump_voters,
)
from pacbound._src.sweep.runs import (
    BoundSelection,
    CrossValidation,
    GridResult,
    cross_validate,
    grid,
    select_by_bound,
)
from pacbound._src.sweep.sharding import (
    ShardedExamples,
    shard_examples,
)

__all__ = [
    "BoundSelection",
    "CrossValidation",
    "GridResult",
    "ShardedExamples",
    "cross_validate",
    "grid",
    "select_by_bound",
    "shard_examples",
    "stratified_folds",
    "stump_voters",
]
