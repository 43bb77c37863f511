"""Grids, k-fold cross-validation and bound-based selection, each one compiled call.

The papers pick ``mu``, ``T``, ``C``, ``gamma`` or ``D`` by 5- or 10-fold cross-validation over
15-30 values (roy2016 §7: 15 values of ``mu``, 5 folds), one solver call at a time. Here every
learner's numeric hyperparameters are traced arguments, so

* :func:`grid` runs the learner over the cartesian (or zipped) product of the named grids with
  ``jax.vmap``: one compilation whatever the values, results stacked on a leading cell axis;
* :func:`cross_validate` adds stratified folds as example-weight masks (``sample_weight``: the
  held-out examples weigh 0, so unequal folds have equal shapes), voters fitted on each
  training fold (stump thresholds from training data only), ``vmap`` over folds × cells, the
  validation risk per fold and cell, the selected values and the refit on all the data;
* :func:`select_by_bound` needs no held-out data: it minimizes a PAC-Bayes bound over the grid
  with ``delta`` split over its ``K`` cells (the union bound: each bound holds with
  ``delta / K``, so all hold at once with ``1 - delta``; germain2009 footnote 3).

Sweeps ask the learner what it can do (:func:`pacbound._src.solvers.traits`), so a
``functools.partial`` of a learner or a user-written learner that declares the same works
alike: a grid over a declared *prefix* hyperparameter (the boosting learners' ``n_rounds``) is
no recompilation either, one run of the largest value has every smaller one as a prefix read by
the learner's ``truncate``; a grid over a declared *path* hyperparameter alone (MinCq's ``mu``)
runs as one continuation (:mod:`pacbound._src.sweep.paths`) per fold and chunk instead of a vmapped
lane per value. Cells are ordered row-major over the grids as given, the prefix axis last.

The cell axis is sharded over ``jax.devices()`` by :func:`pacbound._src.sweep.sharding.map_cells`
(``Mesh`` + ``shard_map``; same results as one device), optionally in chunks chosen from a
``memory_budget`` (bytes per device) with a ``progress(done, total)`` callback. On several
hosts, call ``jax.distributed.initialize()`` in every process before the sweep, and run the same
sweep in every process: the mesh spans all hosts' devices and each process gets the results.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.certify import BOUNDS, as_bound, certify, is_quasi_uniform
from pacbound._src.margins import correctness_votes
from pacbound._src.sweep.cells import (
    Cells,
    Plan,
    check_folds,
    cv_chunk,
    first_argmin,
    fold_votes,
    grid_chunk,
    make_cells,
    refit,
    split_options,
    stratified_folds,
    stump_voters,
    zero_one_risk,
)
from pacbound._src.sweep.paths import solves_as_path
from pacbound._src.sweep.sharding import map_cells
from pacbound._src.validation import (
    check_delta,
    check_features,
    check_labels,
    check_positive_int,
    check_votes,
)
from pacbound._src.voters.protocol import family_sample, is_voters

__all__ = [
    "BoundSelection",
    "CrossValidation",
    "GridResult",
    "cross_validate",
    "grid",
    "select_by_bound",
    "stratified_folds",
    "stump_voters",
    "zero_one_risk",
]


class GridResult(NamedTuple):
    """:func:`grid`'s output: ``result``, the learner's result pytree with a leading cell axis,
    and ``values``, each swept hyperparameter's ``(cells,)`` value in every cell."""

    result: Any
    values: dict[str, np.ndarray]


class CrossValidation(NamedTuple):
    """:func:`cross_validate`'s output.

    Attributes:
      risks: ``(folds, cells)`` validation score of every fold and cell.
      mean_risk: ``(cells,)`` its mean over folds.
      values: each hyperparameter's ``(cells,)`` values.
      best_index: the selected cell, the first with the lowest ``mean_risk``.
      best_values: the hyperparameters of that cell.
      refit: the learner's result on all the examples at ``best_values`` (``None`` when not
        asked for).
      voters: ``X -> H`` for the voters fitted on all the examples (``None``: fixed votes, or
        no refit).
    """

    risks: jax.Array
    mean_risk: jax.Array
    values: dict[str, np.ndarray]
    best_index: int
    best_values: dict[str, Any]
    refit: Any
    voters: Callable | None


class BoundSelection(NamedTuple):
    """:func:`select_by_bound`'s output: ``bounds`` ``(cells,)`` at ``delta`` (already divided
    by the cell count), ``values``, ``best_index``, ``best_values``, and ``result``, the grid's
    stacked results."""

    bounds: np.ndarray
    delta: float
    values: dict[str, np.ndarray]
    best_index: int
    best_values: dict[str, Any]
    result: Any


def _run(fn, plan: Plan, cells: Cells, shared, execution: dict):
    """``fn`` over the cells (sharded, chunked); the ``(c, k)`` axes flattened into one."""
    out = map_cells(fn, plan, (cells.outer, cells.rounds), shared, **execution)
    return jax.tree.map(lambda a: a.reshape(-1, *a.shape[2:]), out)


def _execution(devices, chunk_size, memory_budget, progress) -> dict:
    return {"devices": devices, "chunk_size": chunk_size, "memory_budget": memory_budget,
            "progress": progress}  # fmt: skip


def _batch(batch_size: int | None) -> int | None:
    if batch_size is not None:
        check_positive_int("batch_size", batch_size)
    return batch_size


def _best(values: dict[str, np.ndarray], index: int) -> dict[str, Any]:
    return {name: a[index].item() for name, a in values.items()}


def grid(
    learner: Callable,
    H: ArrayLike,
    y: ArrayLike,
    *,
    zip: bool = False,
    options: dict | None = None,
    devices: Sequence[jax.Device] | None = None,
    chunk_size: int | None = None,
    memory_budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int | None = None,
    **grids: ArrayLike,
) -> GridResult:
    """Run ``learner(H, y, **cell)`` on every cell of a hyperparameter grid, in one compiled call.

    ``grid(mincq, H, y, mu=np.linspace(0.01, 0.3, 15))`` is ``jax.vmap`` over ``mu``, sharded over
    the devices; changing the values reuses the compilation.

    Args:
      learner: a learner following the protocol (:mod:`pacbound._src.protocol`):
        ``mincq``, ``cqboost``, ``lpboost``, ``kl_coordinate_descent``, ... or a
        ``functools.partial`` of one (a declared prefix, e.g. ``n_rounds``, reads prefixes of
        one run of the largest value; a declared path runs as one continuation).
      H: votes ``(m, n)`` in ``[-1, 1]``; for a learner of ``K`` classes
        (:func:`~pacbound.solvers.minimize_bound`), ``(m, n, K)`` class probabilities or
        ``(m, n)`` class labels with ``options={"num_classes": K}``.
      y: labels in ``{-1, +1}``, ``(m,)`` (class labels ``0..K-1`` for ``K`` classes).
      zip: pair the grids elementwise (all of one length) instead of their cartesian product.
      options: other keyword arguments of ``learner``, the same in every cell; arrays are
        traced, other values static (``{"max_iter": 100}``).
      devices: the devices the cells are sharded over (default ``jax.devices()``).
      chunk_size: cells per compiled call (rounded up to a multiple of the device count).
      memory_budget: bytes per device; the cells run in chunks of the largest size that fits.
      progress: called as ``progress(done, total)`` after each chunk.
      batch_size: cells (and, in :func:`cross_validate`, folds) solved together by
        ``jax.vmap`` on each device, the batches one after the other (``lax.map``); default
        all. Vmapped ``while`` loops run until their slowest lane stops, so on a CPU
        ``batch_size=1`` can be faster; accelerators want large batches.
      **grids: 1-D arrays of values, by argument name.

    Returns:
      :class:`GridResult`: the learner's result with a leading cell axis, and the values.

    Raises:
      ValueError: no grid, an empty or non-finite one, a name the learner lacks, unequal
        zipped lengths, malformed ``H`` / ``y``, or a budget below one cell's need.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> out = grid(adaboost, H, jnp.array([1., 1., -1., -1.]), n_rounds=[1, 3])
      >>> out.values["n_rounds"].tolist(), out.result.steps.tolist()
      ([1, 3], [1, 3])
    """
    num_classes = (options or {}).get("num_classes")
    if is_voters(H):
        check_labels(y, family_sample(H)[0])
    elif np.ndim(H) == 3 or num_classes is not None:  # a vote of K classes (minimize_bound)
        correctness_votes(H, y, num_classes)  # validates the votes and class labels
        H = jnp.asarray(H)
    else:
        check_votes(H)
        check_labels(y, jnp.shape(H)[0])
        H = jnp.asarray(H)
    cells = make_cells(learner, grids, zip)
    static, traced = split_options(options)
    path = solves_as_path(learner, grids, options)
    plan = Plan(learner, static, cells.prefix, cells.max_rounds, batch_size=_batch(batch_size),
                path=path)  # fmt: skip
    execution = _execution(devices, chunk_size, memory_budget, progress)
    out = _run(grid_chunk, plan, cells, (H, jnp.asarray(y), traced), execution)
    return GridResult(out, cells.values)


def cross_validate(
    learner: Callable,
    X: ArrayLike,
    y: ArrayLike,
    voters: Callable | None = None,
    *,
    folds: int = 5,
    seed: int = 0,
    score: Callable = zero_one_risk,
    refit_best: bool = True,
    zip: bool = False,
    options: dict | None = None,
    devices: Sequence[jax.Device] | None = None,
    chunk_size: int | None = None,
    memory_budget: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int | None = None,
    **grids: ArrayLike,
) -> CrossValidation:
    """Stratified k-fold cross-validation of ``learner`` over a grid, in one compiled call.

    Each fold's held-out examples get ``sample_weight`` 0 (no ragged shapes, one compilation
    for all folds); ``jax.vmap`` runs folds × cells, sharded over the devices as in
    :func:`grid`. The cell with the lowest mean validation score is refit on all examples.

    Args:
      learner: a learner with a ``sample_weight`` argument (``mincq``, ``cqboost``,
        ``cbboost``, ``lpboost``, ...), swept as in :func:`grid`.
      X: features ``(m, d)`` for ``voters``, or the votes ``H`` ``(m, n)`` when ``voters`` is
        ``None`` (the same voters on every fold).
      y: labels in ``{-1, +1}``, ``(m,)``.
      voters: ``fit(X_train) -> (X -> H)``, fitted on each training fold and on all of ``X``
        for the refit, with one voter count everywhere (e.g. :func:`stump_voters`).
      folds: number of folds, in ``[2, smallest class count]``; :func:`stratified_folds`.
      seed: the folds' shuffle.
      score: ``score(vote, y, weight) -> scalar``, lower is better, ``weight`` the held-out
        mask; default :func:`zero_one_risk` (static: pass the same function object again to
        reuse the compilation).
      refit_best: fit the learner on all examples at the selected values (one more call).
      zip, options, devices, chunk_size, memory_budget, progress, batch_size, grids: as in
        :func:`grid` (``grids`` by keyword).

    Returns:
      :class:`CrossValidation`.

    Raises:
      ValueError: on malformed data or labels, a learner without ``sample_weight``, ``folds``
        out of range, bad grids, or voters whose count changes between folds.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> cv = cross_validate(adaboost, H, y, folds=2, n_rounds=[1, 3])
      >>> cv.risks.shape, [round(float(r), 3) for r in cv.mean_risk]  # (cells, folds)
      ((2, 2), [0.5, 0.5])
      >>> cv.best_values  # a tie goes to the first grid value
      {'n_rounds': 1}
    """
    if "sample_weight" not in inspect.signature(learner).parameters:
        raise ValueError(f"{learner.__name__} takes no sample_weight; folds are weight masks")
    X = check_features(X) if voters is not None else np.asarray(X)
    if voters is None:
        check_votes(X)
    check_labels(y, X.shape[0])
    check_folds(np.asarray(y), folds)
    valid = stratified_folds(y, folds, seed)[None, :] == np.arange(folds)[:, None]
    H = X if voters is None else fold_votes(voters, X, valid)
    cells = make_cells(learner, grids, zip)
    static, traced = split_options(options)
    path = solves_as_path(learner, grids, options)
    plan = Plan(learner, static, cells.prefix, cells.max_rounds, score, voters is not None,
                _batch(batch_size), path)  # fmt: skip
    y = jnp.asarray(y, jnp.result_type(H.dtype, jnp.asarray(y).dtype, jnp.float32))
    masks = (jnp.asarray(~valid, y.dtype), jnp.asarray(valid, y.dtype))
    execution = _execution(devices, chunk_size, memory_budget, progress)
    risks = _run(cv_chunk, plan, cells, (jnp.asarray(H), y, *masks, traced), execution).T
    mean = jnp.mean(risks, axis=0)
    best = first_argmin(mean)
    model: Any = None
    transform: Callable | None = None
    if refit_best:
        H_all = X
        if voters is not None:
            transform = voters(X)
            H_all = transform(X)
        model = refit(plan, H_all, y, traced, _best(cells.values, best))
    return CrossValidation(risks, mean, cells.values, best, _best(cells.values, best), model,
                           transform)  # fmt: skip


def select_by_bound(
    learner: Callable,
    H: ArrayLike,
    y: ArrayLike,
    *,
    bound: str = "pac_bound_1",
    delta: float = 0.05,
    features: ArrayLike | None = None,
    **kwargs,
) -> BoundSelection:
    """The grid cell whose posterior has the lowest PAC-Bayes bound, no held-out data needed.

    Runs :func:`grid` (``kwargs``: its grids and keywords), then certifies every cell's
    posterior on the training sample with :func:`pacbound.certify.certify` (float64, the
    posterior validated) at ``delta / K`` for ``K`` cells: by the union bound all ``K`` bounds
    hold together with probability ``1 - delta`` (germain2009 footnote 3), so the selected one
    does too. The prior is uniform over ``[H, -H]`` (over every candidate and its
    complement for a learner over a voter family), fixed before the sample, as the certificate
    needs.

    Args:
      learner, H, y: as in :func:`grid` (``H`` may be a :class:`~pacbound.voters.Voters` family).
      bound: a name of :data:`pacbound.certify.BOUNDS` (``"seeger"``, ``"pac_bound_0"``,
        ``"pac_bound_1"``, ``"pac_bound_2"``, ``"cbound_roy2016"``, ``"catoni"``,
        ``"cbound_quasi_uniform"`` for learners whose posteriors are quasi-uniform: MinCq,
        KL coordinate descent).
      delta: the confidence, in ``(0, 1]``, for all cells together.
      features: the training features ``X`` a family's selected voters vote on (required
        when ``H`` is a family, unused otherwise).

    Returns:
      :class:`BoundSelection`.

    Raises:
      ValueError: an unknown bound, ``delta`` out of range, a voter family without
        ``features``, or a posterior family bound (quasi-uniform) for cells whose posteriors
        are not in the family.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> sel = select_by_bound(adaboost, H, jnp.array([1., 1., -1., -1.]), n_rounds=[1, 3])
      >>> sel.bounds.shape, sel.best_values, bool(jnp.all(sel.bounds <= 1.0))
      ((2,), {'n_rounds': 1}, True)
    """
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {sorted(BOUNDS)}; got {bound!r}")
    check_delta(delta)
    matrix_free = is_voters(H)
    if matrix_free and features is None:
        raise ValueError("over a Voters family, pass the training features=X the voters vote on")
    sweep = grid(learner, H, y, **kwargs)
    per_cell = delta / len(next(iter(sweep.values.values())))
    num_classes = kwargs.get("options", {}).get("num_classes")
    bounds, quasi = _cell_bounds(
        sweep.result, features if matrix_free else H, y, bound, per_cell, num_classes
    )
    if BOUNDS[bound].family == "quasi_uniform" and not quasi.all():
        raise ValueError(
            f"{bound} holds only for quasi-uniform posteriors over [H, -H]; the posteriors of "
            f"cells {np.flatnonzero(~quasi).tolist()[:10]} are not (use another bound)"
        )
    best = first_argmin(bounds)
    return BoundSelection(bounds, per_cell, sweep.values, best, _best(sweep.values, best),
                          sweep.result)  # fmt: skip


def _name(learner: Callable) -> str:
    return getattr(learner, "__name__", type(learner).__name__)


def _cell_bounds(
    results, H, y, bound: str, delta: float, num_classes: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(bounds, quasi-uniform)`` of every cell's posterior, certified in float64."""
    name = as_bound(bound).name
    with jax.enable_x64(True):
        results = jax.tree.map(lambda a: np.asarray(a, np.float64) if _floating(a) else a, results)
        H, y = np.asarray(H, np.float64), np.asarray(y, np.float64)

        def one(result):
            cert = certify(result, H, y, bounds=[name], delta=delta, num_classes=num_classes)
            return cert.bounds[name], cert.valid

        values, _ = jax.vmap(one)(results)  # a NaN posterior (unreachable mu) gets 1
        quasi = np.asarray(jax.vmap(is_quasi_uniform)(results.q)) & (H.shape[0] > 8)
        quasi &= results.q.shape[-1] == 2 * H.shape[1]  # over [H, -H] (never for K classes)
        return np.asarray(values), quasi


def _floating(a) -> bool:
    return np.issubdtype(np.asarray(a).dtype, np.floating)
