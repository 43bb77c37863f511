"""Hyperparameter grids, k-fold cross-validation and bound-based selection, as one compiled call.

* :func:`grid`, :func:`cross_validate`, :func:`select_by_bound` (:mod:`~pacbound._src.sweep.runs`):
  the sweeps, sharded over ``jax.devices()``, chunked under a memory budget;
* :mod:`~pacbound._src.sweep.cells`: cells of a grid, folds as example-weight masks, stump voters
  fitted per training fold, the per-chunk programs;
* :mod:`~pacbound._src.sweep.paths`: grids solved as one continuation (a learner's declared path);
* :mod:`~pacbound._src.sweep.sharding`: the cell axis over a device mesh, and one learner's examples
  over devices (:func:`shard_examples`: each device holds ``1/k`` of the examples; several hosts
  after :func:`jax.distributed.initialize`).
"""

from pacbound._src.sweep.cells import stratified_folds, stump_voters, zero_one_risk
from pacbound._src.sweep.runs import (
    BoundSelection,
    CrossValidation,
    GridResult,
    cross_validate,
    grid,
    select_by_bound,
)
from pacbound._src.sweep.sharding import EXAMPLES, ShardedExamples, example_mesh, shard_examples

__all__ = [
    "EXAMPLES",
    "BoundSelection",
    "CrossValidation",
    "GridResult",
    "ShardedExamples",
    "cross_validate",
    "example_mesh",
    "grid",
    "select_by_bound",
    "shard_examples",
    "stratified_folds",
    "stump_voters",
    "zero_one_risk",
]
