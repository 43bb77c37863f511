"""Sharding over devices: the *cells* of a sweep, or the *examples* of one learner.

**Cells.** :func:`map_cells` maps a batched function over a leading axis of cells, sharded
across devices, in chunks. :mod:`pacbound._src.sweep` turns a hyperparameter grid (times folds) into
one array of cells and calls :func:`map_cells`, which

* lays the devices out as a one-axis :class:`jax.sharding.Mesh` named ``"cells"`` and runs the
  function under :func:`jax.shard_map`: every device solves its own slice of cells, with the
  shared data (votes, labels, fold masks) replicated, and no communication (each device's
  ``while`` loops stop on their own lanes);
* pads the cell axis to a multiple of the chunk size (itself a multiple of the device count)
  by repeating the last cell, so every call has the same shapes and compiles once;
* under a ``memory_budget`` (bytes per device) splits the cells into chunks of the largest size
  that fits, measured from XLA's memory analysis of the compiled program at one and two cells
  per device (two extra compilations), and reports ``progress(done, total)`` after each chunk.

The results do not depend on the number of devices: each cell is computed by the same program
on its own lane.

Multi-host: call :func:`jax.distributed.initialize` in every process first; ``jax.devices()``
then spans the hosts, every process calls the same sweep with the same host arrays, and the
results are gathered onto every process (replicated) so each can read them.

**Examples.** :func:`shard_examples` splits one learner's data by examples over a one-axis mesh
named ``"examples"`` (:func:`example_mesh`): the rows of ``H`` (or the codes of a histogram
stump search), ``y`` and ``sample_weight``, padded to a multiple of the device count with
zero-weight examples. Every learner takes the placed arrays as it takes host arrays: XLA's
SPMD partitioner keeps each ``(m,)`` vector on the devices of its examples and turns every
sum over examples (``H^T a``, the moments, the losses) into per-device partial sums and one
all-reduce; the histogram pass runs per device under ``jax.shard_map`` and adds the
``(d, max_bins)`` histograms (:class:`pacbound._src.voters.histogram.ExampleShards`). So a data set
larger than one device's memory is learned on several, each holding ``1/k`` of the examples.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from jax.typing import ArrayLike

from pacbound._src.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    float_dtype,
)
from pacbound._src.voters.histogram import ExampleShards, HistogramSearch

__all__ = [
    "CELLS",
    "EXAMPLES",
    "ShardedExamples",
    "cell_mesh",
    "example_mesh",
    "map_cells",
    "shard_examples",
]

CELLS = "cells"
EXAMPLES = "examples"


def _mesh(devices: Sequence[jax.Device] | None, axis: str) -> Mesh:
    devices = jax.devices() if devices is None else list(devices)
    if not devices:
        raise ValueError("devices must name at least one device")
    return Mesh(np.asarray(devices), (axis,))


def cell_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh named ``"cells"`` over ``devices`` (default: all of ``jax.devices()``).

    Example:
      >>> cell_mesh().axis_names
      ('cells',)
    """
    return _mesh(devices, CELLS)


def example_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A one-axis mesh named ``"examples"`` over ``devices`` (default: ``jax.devices()``).

    Example:
      >>> example_mesh().axis_names
      ('examples',)
    """
    return _mesh(devices, EXAMPLES)


@functools.partial(jax.jit, static_argnames=("fn", "plan", "mesh"))
def _run(cells, shared, fn, plan, mesh):
    """``fn(plan, cells, shared)`` with the cells split over the mesh, ``shared`` replicated."""
    sharded = jax.shard_map(
        functools.partial(fn, plan),
        mesh=mesh,
        in_specs=(P(CELLS), P()),
        out_specs=P(CELLS),
        check_vma=False,
    )
    out = sharded(cells, shared)
    if jax.process_count() > 1:  # every process reads the whole result
        out = jax.lax.with_sharding_constraint(out, NamedSharding(mesh, P()))
    return out


def _leading(tree) -> int:
    return jax.tree.leaves(tree)[0].shape[0]


def _take(tree, start: int, size: int):
    """Cells ``start .. start + size``, the last one repeated past the end (equal shapes)."""
    total = _leading(tree)
    idx = np.minimum(np.arange(start, start + size), total - 1)
    return jax.tree.map(lambda a: np.asarray(a)[idx], tree)


def _bytes(fn, plan, mesh, cells, shared, per_device: int) -> int:
    """Device memory XLA plans for ``per_device`` cells on each device (arguments, temps, out)."""
    chunk = _take(cells, 0, per_device * mesh.size)
    compiled = _run.lower(chunk, shared, fn=fn, plan=plan, mesh=mesh).compile()
    stats = cast(Any, compiled.memory_analysis())  # None only on backends without the analysis
    used = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
    return int(used - stats.alias_size_in_bytes)


def _cells_per_device(fn, plan, mesh, cells, shared, memory_budget: int) -> int:
    """Largest cells per device whose planned memory fits, linear in the cell count."""
    one, two = (_bytes(fn, plan, mesh, cells, shared, k) for k in (1, 2))
    per_cell = max(two - one, 1)
    if one > memory_budget:
        raise ValueError(
            f"memory_budget = {memory_budget} bytes is below what one cell per device needs "
            f"({one} bytes, of which about {per_cell} per cell)"
        )
    return 1 + (memory_budget - one) // per_cell


def _chunk_size(fn, plan, mesh, cells, shared, chunk_size, memory_budget) -> int:
    n, total = mesh.size, _leading(cells)
    whole = -(-total // n) * n
    if chunk_size is None and memory_budget is None:
        return whole
    if chunk_size is None:
        check_positive_int("memory_budget", memory_budget)
        chunk_size = n * _cells_per_device(fn, plan, mesh, cells, shared, memory_budget)
    check_positive_int("chunk_size", chunk_size)
    return min(-(-chunk_size // n) * n, whole)


def map_cells(
    fn: Callable,
    plan: Any,
    cells: Any,
    shared: Any,
    *,
    devices: Sequence[jax.Device] | None = None,
    chunk_size: int | None = None,
    memory_budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """``fn(plan, cells, shared)`` over all cells, sharded over ``devices``, chunk by chunk.

    Args:
      fn: a module-level function ``fn(plan, cells, shared)`` mapping a batch of cells (every
        leaf with a leading axis of the batch size) to a pytree with the same leading axis.
      plan: hashable static configuration (a change recompiles, equal plans share the cache).
      cells: pytree of host arrays with a common leading axis, the cells.
      shared: pytree of arrays every cell reads (replicated on every device).
      devices: the devices to shard over (default ``jax.devices()``).
      chunk_size: cells per call, rounded up to a multiple of the device count.
      memory_budget: bytes per device; chooses the largest chunk that fits (ignored when
        ``chunk_size`` is given).
      progress: called as ``progress(done, total)`` after each chunk.

    Returns:
      ``fn``'s pytree over all cells, leading axis ``len(cells)``.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> from pacbound._src.sweep.cells import Plan, grid_chunk, make_cells
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> cells = make_cells(adaboost, {"n_rounds": [1, 3]}, False)
      >>> plan = Plan(adaboost, (), cells.prefix, cells.max_rounds)
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> out = map_cells(grid_chunk, plan, (cells.outer, cells.rounds), (H, y, {}))
      >>> out.steps.tolist()
      [[1, 3]]
    """
    mesh = cell_mesh(devices)
    shared = jax.device_put(shared, NamedSharding(mesh, P()))  # once, not per chunk
    total = _leading(cells)
    size = _chunk_size(fn, plan, mesh, cells, shared, chunk_size, memory_budget)
    parts = []
    for start in range(0, total, size):
        out = _run(_take(cells, start, size), shared, fn=fn, plan=plan, mesh=mesh)
        parts.append(out if size >= total else jax.device_get(out))  # free the device
        if progress is not None:
            progress(min(start + size, total), total)
    if len(parts) == 1:
        return jax.tree.map(lambda a: a[:total], parts[0])
    return jax.tree.map(lambda *a: jnp.asarray(np.concatenate(a)[:total]), *parts)


# ------------------------------------------------------------------ examples over devices
class ShardedExamples(NamedTuple):
    """One learner's data split by examples over devices (:func:`shard_examples`).

    Attributes:
      voters: the votes ``H`` ``(m', n)`` with rows split, or the
        :class:`pacbound._src.voters.HistogramSearch` with its codes' columns split (and its
        ``shards`` set).
      y: ``(m',)`` labels, split; the padding examples are labelled ``+1``.
      sample_weight: ``(m',)`` example weights, split: the given ones (1 when none were given)
        and 0 on the ``m' - m`` padding examples, which therefore change nothing.
    """

    voters: Any
    y: jax.Array
    sample_weight: jax.Array


def _placed(x: ArrayLike, axis: int, pad: int, fill, sharding: NamedSharding) -> jax.Array:
    """``x`` with ``pad`` entries ``fill`` appended along ``axis``, placed as ``sharding``.

    Each device's block is cut from ``x`` by :func:`jax.make_array_from_callback` (only the
    last blocks see padding), so no padded copy of ``x`` is made on the host and every process
    reads only its own devices' rows (a memory-mapped ``x`` is read only there).
    """
    x = x if isinstance(x, np.ndarray) else np.asarray(x)
    m = x.shape[axis]
    shape = (*x.shape[:axis], m + pad, *x.shape[axis + 1 :])

    def block(index: tuple[slice, ...] | None) -> np.ndarray:
        index = cast(tuple[slice, ...], index)  # a NamedSharding's blocks are slices, not None
        start, stop, _ = index[axis].indices(shape[axis])
        rows = list(index)
        rows[axis] = slice(min(start, m), min(stop, m))
        part = x[tuple(rows)]
        missing = list(part.shape)
        missing[axis] = stop - start - part.shape[axis]
        return np.concatenate([part, np.full(missing, fill, x.dtype)], axis=axis)

    return jax.make_array_from_callback(shape, sharding, block)


def _shard_search(search: HistogramSearch, mesh: Mesh, pad: int) -> HistogramSearch:
    split = NamedSharding(mesh, P(None, EXAMPLES))
    codes = _placed(search.codes, 1, pad, 0, split)  # padding in bin 0, not counted
    replicated = NamedSharding(mesh, P())
    thresholds, counts = (jax.device_put(x, replicated) for x in search[1:3])
    return HistogramSearch(codes, thresholds, counts, ExampleShards(mesh, EXAMPLES))


def _examples_of(voters: Any) -> int:
    if isinstance(voters, HistogramSearch):
        return voters.codes.shape[1]
    if hasattr(voters, "candidate_edges"):
        raise ValueError(
            "only a histogram stump search can be sharded by examples (the exact search's sort "
            "order spans every example): use pacbound._src.voters.histogram_search, or the votes H"
        )
    if np.ndim(voters) != 2:
        raise ValueError(f"H must be a 2-D (examples, voters) array; got shape {np.shape(voters)}")
    return np.shape(voters)[0]


def shard_examples(
    voters: Any,
    y: ArrayLike,
    sample_weight: ArrayLike | None = None,
    *,
    devices: Sequence[jax.Device] | None = None,
) -> ShardedExamples:
    """Split a learner's examples evenly over ``devices``, padding with zero-weight examples.

    The example count ``m`` is padded to ``m'``, the next multiple of the device count ``k``,
    with examples of weight 0 (votes ``+1``, or bin 0 of every feature, labelled ``+1``): every
    learner gives them no influence (a weight-0 example is dropped exactly), so the model is
    the one of the ``m`` examples. Each device then holds ``m' / k`` rows of ``H`` (or
    columns of the search's ``uint8`` codes) and of ``y`` and ``sample_weight``; a histogram
    search's thresholds and bin counts are replicated (``d max_bins`` numbers). Pass the
    result to any learner unchanged::

        H, y, w = shard_examples(H, y)                # or a histogram_search(X)
        result = cbboost(H, y, 100, sample_weight=w)  # or cbboost(search, ...)

    A certificate of the result reads the unpadded data (``certify(result, H_or_X, y)``).

    Several hosts: call :func:`jax.distributed.initialize` in every process first;
    ``jax.devices()`` then spans the hosts and every process calls this with the same
    (global) arrays, of which it reads only its own devices' rows: a memory-mapped ``H``
    (``np.load(..., mmap_mode="r")``) is read only there. Processes that hold only their own
    rows build each global array with :func:`jax.make_array_from_process_local_data`
    ``(NamedSharding(example_mesh(), P(EXAMPLES)), local_rows, (m',) + ...)`` (``P(None,
    EXAMPLES)`` for the codes; every process with the same number of rows, padded with weight
    0 as here, and the same binning thresholds and global bin counts), then wrap the codes as
    ``HistogramSearch(codes, thresholds, counts, ExampleShards(mesh, EXAMPLES))``.

    Args:
      voters: the votes ``H`` ``(m, n)`` (host array), or a
        :class:`pacbound._src.voters.HistogramSearch`
        (:func:`pacbound._src.voters.histogram_search`).
      y: ``(m,)`` labels in ``{-1, +1}``.
      sample_weight: ``(m,)`` example weights ``>= 0``; ``None``: all 1.
      devices: the devices to split over (default ``jax.devices()``).

    Returns:
      :class:`ShardedExamples` ``(voters, y, sample_weight)`` of ``m'`` examples, every array
      split by examples over :func:`example_mesh` (``NamedSharding(mesh, P(EXAMPLES))``).

    Raises:
      ValueError: an exact stump search (its sort order spans all examples), malformed ``H``,
        labels or weights, or no device.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> s = shard_examples(H, jnp.array([1., 1., -1., -1.]))
      >>> s.voters.shape[0] % jax.device_count(), float(s.sample_weight.sum())  # padding: weight 0
      (0, 4.0)
    """
    m = _examples_of(voters)
    y = np.asarray(y)
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    dtype = float_dtype(y) if sample_weight is None else float_dtype(sample_weight)
    weight = np.ones(m, dtype) if sample_weight is None else np.asarray(sample_weight, dtype)
    mesh = example_mesh(devices)
    pad = -m % mesh.size
    split = NamedSharding(mesh, P(EXAMPLES))
    if isinstance(voters, HistogramSearch):
        voters = _shard_search(voters, mesh, pad)
    else:
        voters = _placed(voters, 0, pad, 1, NamedSharding(mesh, P(EXAMPLES, None)))
    return ShardedExamples(voters, _placed(y, 0, pad, 1, split), _placed(weight, 0, pad, 0, split))
