"""Hyperparameter grids, k-fold cross-validation and bound-based selection, one compiled call.

:func:`grid`, :func:`cross_validate` (folds as example-weight masks,
:func:`stratified_folds`; voters fitted per training fold, :func:`stump_voters`) and
:func:`select_by_bound` run any learner of the protocol over its traced hyperparameters,
sharded over ``jax.devices()`` (and over hosts after ``jax.distributed.initialize``), chunked
under a memory budget; :func:`shard_examples` splits one learner's examples over devices.
"""

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
