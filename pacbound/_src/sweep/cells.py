"""The cells of a sweep, for :mod:`pacbound._src.sweep` (the public API and its documentation).

* host side (NumPy): the cells of a cartesian or zipped grid (:func:`make_cells`), stratified
  folds, voters fitted per training fold, validation;
* device side: one fit per cell (:func:`grid_chunk`) or per fold and cell, scored on the
  held-out mask (:func:`cv_chunk`); a learner that declares a prefix hyperparameter
  (:func:`pacbound.solvers.traits`: boosting's ``n_rounds``) is fitted once at the
  grid's largest value and every smaller value is read by its ``truncate``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.protocol import traits
from pacbound._src.sweep.paths import path_result
from pacbound._src.validation import check_positive_int, check_votes
from pacbound._src.voters.stumps import fit_stumps, self_complemented, votes

__all__ = [
    "Cells",
    "Plan",
    "check_folds",
    "cv_chunk",
    "first_argmin",
    "fold_votes",
    "grid_chunk",
    "make_cells",
    "refit",
    "split_options",
    "stratified_folds",
    "stump_voters",
    "zero_one_risk",
]


class Cells(NamedTuple):
    """A grid as cells: ``outer`` hyperparameters ``(c,)`` (one fit each), ``rounds`` ``(c, k)``
    prefix values read from each fit (``(c, 1)`` zeros without prefixes), ``values`` every
    hyperparameter per output cell ``(c * k,)``, ``prefix`` the learner's prefix
    hyperparameter when the grid sweeps it, ``max_rounds`` the fits' value of it."""

    outer: dict[str, np.ndarray]
    rounds: np.ndarray
    values: dict[str, np.ndarray]
    prefix: str | None
    max_rounds: int | None


def _grid_array(learner: Callable, name: str, values) -> np.ndarray:
    if name not in inspect.signature(learner).parameters:
        raise ValueError(f"{learner.__name__} has no argument {name!r} to sweep")
    a = np.asarray(values)
    if a.ndim != 1 or a.size == 0 or not np.issubdtype(a.dtype, np.number):
        raise ValueError(f"the grid of {name} must be a non-empty 1-D numeric array; got {a!r}")
    if not np.isfinite(a).all():
        raise ValueError(f"the grid of {name} has NaN or inf values")
    return a


def _prefix_rounds(learner: Callable, arrays: dict) -> np.ndarray | None:
    """The grid of the learner's declared prefix hyperparameter, popped from ``arrays``."""
    name = traits(learner).prefix
    if name is None or name not in arrays:
        return None
    rounds = arrays.pop(name)
    if not (np.issubdtype(rounds.dtype, np.integer) and (rounds >= 1).all()):
        raise ValueError(f"the grid of {name} must hold integers >= 1; got {rounds}")
    return rounds.astype(np.int32)


def make_cells(learner: Callable, grids: dict, zipped: bool) -> Cells:
    """The cartesian product (or the zip) of the named grids, as :class:`Cells`.

    Example:
      >>> from pacbound.solvers import adaboost
      >>> cells = make_cells(adaboost, {"n_rounds": [1, 3]}, False)
      >>> cells.prefix, cells.max_rounds, cells.values["n_rounds"].tolist()
      ('n_rounds', 3, [1, 3])
    """
    if not grids:
        raise ValueError("give at least one hyperparameter grid, e.g. mu=np.linspace(.05, .5, 15)")
    arrays = {name: _grid_array(learner, name, v) for name, v in grids.items()}
    rounds = _prefix_rounds(learner, arrays)
    if zipped:
        lengths = {len(a) for a in [*arrays.values(), *([] if rounds is None else [rounds])]}
        if len(lengths) > 1:
            raise ValueError(f"zip=True needs grids of one length; got lengths {sorted(lengths)}")
        outer, inner = arrays, None if rounds is None else rounds[:, None]
    else:
        mesh = np.meshgrid(*arrays.values(), indexing="ij")
        outer = {name: a.ravel() for name, a in zip(arrays, mesh)}
        cells = mesh[0].size if mesh else 1
        inner = None if rounds is None else np.tile(rounds, (cells, 1))
    cells = len(next(iter(outer.values()))) if outer else len(cast(np.ndarray, inner))
    inner = np.zeros((cells, 1), np.int32) if inner is None else inner
    values = {name: np.repeat(a, inner.shape[1]) for name, a in outer.items()}
    prefix = None if rounds is None else traits(learner).prefix
    if prefix is not None:
        values[prefix] = inner.ravel()
    return Cells(outer, inner, values, prefix, None if rounds is None else int(rounds.max()))


class Plan(NamedTuple):
    """The static part of a sweep (hashable: equal plans share one compilation)."""

    learner: Callable
    static: tuple[tuple[str, Any], ...]  # hashable options, passed as they are
    prefix: str | None  # the learner's prefix hyperparameter, when the grid sweeps it
    max_rounds: int | None  # its value in the run whose prefixes the cells read
    score: Callable | None = None
    per_fold_voters: bool = False
    batch_size: int | None = None  # cells (and folds) vmapped together; None: all
    path: bool = False  # the cells in one path call (pacbound._src.sweep.paths), not vmapped


def _batched(plan: Plan, f: Callable, *xs):
    """``f`` over the leading axis of ``xs``: ``jax.vmap`` over all of it, or ``lax.map`` over
    batches of ``batch_size`` (solvers' ``while`` loops run in lockstep only within a batch)."""
    if plan.batch_size is None:
        return jax.vmap(f)(*xs)
    return jax.lax.map(lambda x: f(*x), xs, batch_size=plan.batch_size)


def zero_one_risk(vote: jax.Array, y: jax.Array, weight: jax.Array) -> jax.Array:
    """Weighted majority-vote risk ``sum_i w_i 1[y_i F(x_i) <= 0] / sum_i w_i`` (roy2016 §2);
    a tie, or a NaN vote (a hyperparameter out of reach on that fold), counts as an error.

    Example:
      >>> import jax.numpy as jnp
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> float(zero_one_risk(jnp.array([0.5, 0.0, -1.0, 0.2]), y, jnp.ones(4)))  # a tie, a miss
      0.5
      >>> float(zero_one_risk(jnp.array([0.5, 0.0, -1.0, 0.2]), y, jnp.array([1., 0., 1., 0.])))
      0.0
    """
    wrong = ~(y * vote > 0)
    return jnp.sum(weight * wrong) / jnp.sum(weight)


def vote(H: jax.Array, result) -> jax.Array:
    """The vote ``F = H w`` of a learner's result (its signed weights ``w`` on ``H``)."""
    w = result.weights
    return H.astype(w.dtype) @ w


def fit(plan: Plan, H, y, weight, values, options):
    kwargs = {**dict(plan.static), **options, **values}
    if weight is not None:
        kwargs["sample_weight"] = weight
    if plan.prefix is not None:
        kwargs[plan.prefix] = plan.max_rounds
    return plan.learner(H, y, **kwargs)


def prefixes(plan: Plan, result, rounds: jax.Array):
    """The results after each prefix value in ``rounds`` (``(k,)``), stacked; the one result
    (stacked once) when the grid sweeps no prefix."""
    if plan.prefix is None:
        return jax.tree.map(lambda a: a[None], result)
    truncate = cast(Callable, traits(plan.learner).truncate)  # declared with the prefix
    return jax.vmap(lambda r: truncate(result, r))(rounds)


def grid_chunk(plan: Plan, cells, shared):
    """The learner's results on a batch of grid cells: ``cells = (values, rounds)`` (the outer
    values and, for a prefix hyperparameter, the rounds read from each run) and ``shared = (H,
    y, options)``; leaves ``(cells, rounds, ...)`` (:func:`pacbound._src.sweep.sharding.map_cells`).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> cells = make_cells(adaboost, {"n_rounds": [1, 3]}, False)
      >>> plan = Plan(adaboost, (), cells.prefix, cells.max_rounds)
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> out = grid_chunk(plan, (cells.outer, cells.rounds), (H, y, {}))
      >>> out.steps.tolist()  # the prefixes of one 3-round run
      [[1, 3]]
    """
    (values, rounds), (H, y, options) = cells, shared
    if plan.path:
        return jax.tree.map(lambda a: a[:, None], path_result(plan, H, y, None, values, options))

    def one(v, r):
        return prefixes(plan, fit(plan, H, y, None, v, options), r)

    return _batched(plan, one, values, rounds)  # leaves (c, k, ...)


def cv_chunk(plan: Plan, cells, shared):
    """The validation scores ``plan.score`` of a batch of grid cells on every fold:
    ``shared = (H, y, train, valid, options)`` with ``(folds, m)`` training and validation
    example weights (``H`` ``(folds, m, n)`` when the voters are fitted per fold); returns
    ``(cells, rounds, folds)``.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> cells = make_cells(adaboost, {"n_rounds": [1, 3]}, False)
      >>> plan = Plan(adaboost, (), cells.prefix, cells.max_rounds, zero_one_risk)
      >>> valid = jnp.array([[1., 0., 1., 0.], [0., 1., 0., 1.]])  # 2 folds
      >>> shared = (H, jnp.array([1., 1., -1., -1.]), 1 - valid, valid, {})
      >>> cv_chunk(plan, (cells.outer, cells.rounds), shared).shape  # (cells, prefixes, folds)
      (1, 2, 2)
    """
    (values, rounds), (H, y, train, valid, options) = cells, shared

    def scores(H, results, v_mask):
        return jax.vmap(lambda r: plan.score(vote(H, r), y, v_mask))(results)

    def fold(H, w, v_mask):
        if plan.path:
            return scores(H, path_result(plan, H, y, w, values, options), v_mask)[:, None]

        def one(v, r):
            return scores(H, prefixes(plan, fit(plan, H, y, w, v, options), r), v_mask)

        return _batched(plan, one, values, rounds)  # (c, k)

    def on_fold(H_fold, w, v_mask):  # H_fold is None for votes shared by all folds
        return fold(H if H_fold is None else H_fold, w, v_mask)

    per_fold = H if plan.per_fold_voters else None
    return jnp.moveaxis(_batched(plan, on_fold, per_fold, train, valid), 0, -1)  # (c, k, folds)


def refit(plan: Plan, H, y, options: dict, values: dict):
    """The learner on all examples at ``values``; a prefix value is read by ``truncate`` from a
    run at ``max_rounds`` (the compiled length, so a new selection compiles nothing).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> plan = Plan(adaboost, (), "n_rounds", 3)
      >>> int(refit(plan, H, jnp.array([1., 1., -1., -1.]), {}, {"n_rounds": 1}).steps)
      1
    """
    values = dict(values)
    if plan.prefix is None:
        return plan.learner(H, y, **dict(plan.static), **options, **values)
    rounds = values.pop(plan.prefix)
    values[plan.prefix] = plan.max_rounds
    result = plan.learner(H, y, **dict(plan.static), **options, **values)
    truncate = cast(Callable, traits(plan.learner).truncate)  # declared with the prefix
    return truncate(result, rounds)


def split_options(options: dict | None) -> tuple[tuple[tuple[str, Any], ...], dict]:
    """Other learner arguments: arrays are traced (read by every cell), the rest static.

    Example:
      >>> import jax.numpy as jnp
      >>> static, traced = split_options({"max_iter": 10, "q0": jnp.full(6, 1 / 6)})
      >>> static, list(traced)
      ((('max_iter', 10),), ['q0'])
    """
    static, traced = [], {}
    for name, value in (options or {}).items():
        if isinstance(value, jax.Array | np.ndarray):
            traced[name] = jnp.asarray(value)
        else:
            static.append((name, value))
    return tuple(static), traced


def check_folds(y: np.ndarray, folds: int) -> None:
    """``folds`` an integer in ``[2, smallest class count]``.

    Example:
      >>> import numpy as np
      >>> y = np.array([1, 1, 1, -1, -1])
      >>> check_folds(y, 2)
      >>> check_folds(y, 3)  # the class -1 has only 2 examples
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    check_positive_int("folds", folds)
    smallest = int(np.unique(y, return_counts=True)[1].min())
    if not 2 <= folds <= smallest:
        raise ValueError(f"folds must lie in [2, {smallest}] (the smallest class); got {folds}")


def stratified_folds(y: ArrayLike, folds: int = 5, seed: int = 0) -> np.ndarray:
    """``(m,)`` fold of every example: each class shuffled (seeded), then dealt round-robin
    after the previous classes, so every fold keeps the class proportions and fold sizes differ
    by at most one.

    Example:
      >>> import numpy as np
      >>> y = np.array([1, 1, 1, 1, -1, -1])
      >>> f = stratified_folds(y, 2)
      >>> np.bincount(f).tolist(), np.bincount(f[y == -1]).tolist()  # sizes 3, 3; one -1 each
      ([3, 3], [1, 1])
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    fold, offset = np.empty(len(y), np.int32), 0
    for label in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == label))
        fold[idx] = (offset + np.arange(len(idx))) % folds
        offset += len(idx)
    return fold


def stump_voters(n_thresholds: int = 10, dtype=None, complements: bool = False) -> Callable:
    """``voters`` for :func:`cross_validate`: decision stumps fitted on the training fold
    (:func:`pacbound._src.voters.fit_stumps`, thresholds from training data only), returned as
    ``X -> H`` (``[H, -H]`` with ``complements``, e.g. for CB-Boost); ``dtype`` defaults to
    float64 under ``jax_enable_x64``, else float32.

    Example:
      >>> import numpy as np
      >>> X = np.arange(6.0).reshape(6, 1)
      >>> stump_voters(2)(X)(X).shape, stump_voters(2, complements=True)(X)(X).shape  # X -> H
      ((6, 2), (6, 4))
    """

    def fit(X_train: np.ndarray) -> Callable:
        stumps = fit_stumps(X_train, n_thresholds)
        dt = dtype or jnp.asarray(0.0).dtype

        def transform(X) -> jax.Array:
            H = votes(stumps, X, dtype=dt)
            return self_complemented(H) if complements else H

        return transform

    return fit


def fold_votes(voters: Callable, X: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``(folds, m, n)``: the votes on all examples of the voters fitted on each training fold.

    Example:
      >>> import numpy as np
      >>> X = np.arange(6.0).reshape(6, 1)
      >>> valid = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]], bool)  # 2 folds
      >>> fold_votes(stump_voters(2), X, valid).shape
      (2, 6, 2)
    """
    per_fold = [np.asarray(voters(X[~v])(X)) for v in valid]
    shapes = sorted({h.shape for h in per_fold})
    if len(shapes) > 1:
        raise ValueError(f"voters must give one voter count on every fold; got shapes {shapes}")
    stacked = np.stack(per_fold)
    check_votes(stacked.reshape(-1, stacked.shape[-1]), "the voters' votes")
    return stacked


def first_argmin(values: ArrayLike) -> int:
    """The first index of the smallest value, NaN counted as ``+inf``.

    Example:
      >>> import jax.numpy as jnp
      >>> first_argmin(jnp.array([0.3, jnp.nan, 0.1, 0.1]))
      2
    """
    values = np.asarray(values, np.float64)
    return int(np.argmin(np.where(np.isnan(values), np.inf, values)))
