"""The column-generation loop with a fixed-size column buffer (roy2016 §5, Algorithm 1).

One loop serves CqBoost, LPBoost, CG-Boost and MDBoost; each learner supplies a
:class:`RestrictedMaster` (its program restricted to the selected columns, solved for the
primal weights and the examples' dual weights ``alpha``). Every round of the ``lax.while_loop``

1. prices every candidate voter by its *edge* ``sum_k alpha_k y_k h(x_k)`` (roy2016 (6): the
   dual constraint ``H^T diag(y) alpha <= nu 1``) and takes the one violating it most,
   ``max_h edge(h) - nu`` (columns already selected are skipped);
2. stops when that violation is ``<= eps`` (the dual certificate: no voter violates the dual
   constraint by more than ``eps``) or the buffer of ``max_columns`` columns is full;
3. otherwise writes the new column into the ``(m, max_columns)`` buffer, marks it active and
   re-solves the restricted master warm-started from the previous solution.

The candidates are the columns of a finite ``H`` (:func:`dense_oracle`) or every decision stump
and its complement, generated matrix-free (:func:`stumps_oracle`: the sorted cumulative sums of
:func:`pacbound.voters.stump_scores`, the search behind :func:`pacbound.voters.best_stump`, so
that stumps already in the buffer can be skipped). Sizes are static; every hyperparameter,
``eps`` and the example weights are traced, so ``jax.vmap`` sweeps them (and 0/1 fold masks)
with one compilation. The learners' public functions are built on this loop by
:mod:`pacbound.solvers.column_generation`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from pacbound.voters import Stumps, StumpSearch, stump_scores

__all__ = [
    "ColumnGenerationResult",
    "ColumnOracle",
    "LoopResult",
    "MasterSolution",
    "RestrictedMaster",
    "StumpsColumnGenerationResult",
    "column_generation",
    "dense_oracle",
    "dense_result",
    "stumps_oracle",
    "stumps_result",
]


class MasterSolution(NamedTuple):
    """A restricted master's solution.

    Attributes:
      weights: ``(max_columns,)`` primal weights ``q`` (0 on inactive slots).
      alpha: ``(m,)`` the examples' dual weights (0 where the example weight is 0).
      nu: the dual constraint's right-hand side: a column ``h`` violates it when
        ``sum_k alpha_k y_k h(x_k) > nu``.
      objective: the restricted program's objective at ``weights``.
      iterations: the solver's steps for this solve.
      converged: whether the solver certified its tolerance.
      warm: a scalar the next solve starts from (e.g. the soft-margin interior-point method's
        starting level of ``x``).
    """

    weights: jax.Array
    alpha: jax.Array
    nu: jax.Array
    objective: jax.Array
    iterations: jax.Array
    converged: jax.Array
    warm: jax.Array


class RestrictedMaster(NamedTuple):
    """A learner's restricted master program (pure functions; hashable, so static under jit).

    Attributes:
      empty: ``empty(problem, max_columns) -> MasterSolution`` before any column (Algorithm 1's
        initialization; ``nu = -inf`` when the first column must always be taken).
      solve: ``solve(problem, columns, active, previous) -> MasterSolution`` with ``columns``
        the ``(m, max_columns)`` buffer and ``active`` its ``(max_columns,)`` mask.
    """

    empty: Callable[[Any, int], MasterSolution]
    solve: Callable[[Any, jax.Array, jax.Array, MasterSolution], MasterSolution]


class ColumnOracle(NamedTuple):
    """Candidate voters: ``edges(a)[j] = sum_k a_k h_j(x_k)`` (``-inf``: no voter) and
    ``column(j) = (h_j(x_k))_k``; ``size`` candidates in all (static)."""

    edges: Callable[[jax.Array], jax.Array]
    column: Callable[[jax.Array], jax.Array]
    size: int


def dense_oracle(H: jax.Array) -> ColumnOracle:
    """The ``n`` columns of a materialized ``H`` (one product ``a @ H`` prices them all)."""

    def column(j):
        return lax.dynamic_index_in_dim(H, j, axis=1, keepdims=False)

    return ColumnOracle(lambda a: a @ H, column, H.shape[1])


def stumps_oracle(search: StumpSearch, dtype) -> ColumnOracle:
    """Every stump ``h_{f,k}`` and its complement, matrix-free: candidate ``s * P + f * (m-1) + k``.

    ``P = d (m - 1)`` positions; ``s = 0`` is the stump, ``s = 1`` its complement ``-h``. An edge
    is one sorted cumulative sum per feature (:func:`pacbound.voters.stump_scores`); positions
    between tied values are no stumps (``-inf``).
    """
    d, m = search.order.shape
    positions = d * (m - 1)

    def edges(a):
        e = stump_scores(search, a.astype(dtype)).ravel()
        e = jnp.where(jnp.isnan(e), -jnp.inf, e)
        return jnp.concatenate([e, jnp.where(jnp.isinf(e), -jnp.inf, -e)])

    def column(j):
        p = j % positions
        sign = jnp.where(j < positions, 1, -1).astype(dtype)
        above = jnp.where(jnp.arange(m) > p % (m - 1), sign, -sign)
        return jnp.zeros(m, dtype).at[search.order[p // (m - 1)]].set(above)

    return ColumnOracle(edges, column, 2 * positions)


class _Loop(NamedTuple):
    columns: jax.Array  # (m, T) buffer
    ids: jax.Array  # (T,) candidate index of each slot, -1 when empty
    count: jax.Array
    solution: MasterSolution
    best: jax.Array  # the most violating candidate
    violation: jax.Array  # its violation edge - nu
    inner: jax.Array  # master steps in all
    converged: jax.Array  # every master solve certified


def _price(oracle: ColumnOracle, solution: MasterSolution, y, ids):
    """The most violating candidate not yet selected and its violation ``edge - nu``."""
    edges = oracle.edges(solution.alpha * y)
    edges = edges.at[jnp.where(ids >= 0, ids, oracle.size)].set(-jnp.inf, mode="drop")
    best = jnp.argmax(edges).astype(jnp.int32)
    return best, edges[best] - solution.nu


def _add_column(s: _Loop, oracle, master, problem, y) -> _Loop:
    columns = s.columns.at[:, s.count].set(oracle.column(s.best).astype(s.columns.dtype))
    ids = s.ids.at[s.count].set(s.best)
    active = jnp.arange(ids.shape[0]) <= s.count
    solution = master.solve(problem, columns, active, s.solution)
    best, violation = _price(oracle, solution, y, ids)
    inner = s.inner + solution.iterations
    converged = s.converged & solution.converged
    return _Loop(columns, ids, s.count + 1, solution, best, violation, inner, converged)


class LoopResult(NamedTuple):
    """What :func:`column_generation` returns: the buffer's candidate ids (``-1``: empty),
    columns added, the last master solution, the final violation, master steps in all and
    whether every solve and the dual certificate were certified."""

    ids: jax.Array
    count: jax.Array
    solution: MasterSolution
    violation: jax.Array
    inner: jax.Array
    converged: jax.Array


def column_generation(
    master: RestrictedMaster,
    problem: Any,
    oracle: ColumnOracle,
    y: jax.Array,
    eps: jax.Array,
    max_columns: int,
) -> LoopResult:
    """roy2016 Algorithm 1, generic in the master; call it inside ``jit``.

    Stops once the most violating candidate's ``edge - nu`` is ``<= eps`` plus the edges'
    rounding level (``4 eps_mach sum_k |alpha_k|``), or when ``max_columns`` are selected.
    """
    m, dtype = y.shape[0], y.dtype
    empty = master.empty(problem, max_columns)
    ids = jnp.full(max_columns, -1, jnp.int32)
    best, violation = _price(oracle, empty, y, ids)
    zero = jnp.zeros((), jnp.int32)
    init = _Loop(jnp.zeros((m, max_columns), dtype), ids, zero, empty, best, violation, zero,
                 jnp.ones((), bool))  # fmt: skip

    def threshold(s):
        return eps + 4 * jnp.finfo(dtype).eps * jnp.sum(jnp.abs(s.solution.alpha))

    def cond(s):
        return (s.violation > threshold(s)) & (s.count < max_columns)

    s = lax.while_loop(cond, lambda s: _add_column(s, oracle, master, problem, y), init)
    converged = s.converged & (s.violation <= threshold(s))
    return LoopResult(s.ids, s.count, s.solution, jnp.maximum(s.violation, 0), s.inner, converged)


class ColumnGenerationResult(NamedTuple):
    """Column generation over the columns of a finite ``H``.

    Attributes:
      q: ``(n,)`` weights over ``H``'s columns (0 off the selected ones): a distribution for
        CqBoost / MDBoost; the program's non-negative ``q`` for LPBoost / CG-Boost (normalize by
        its sum for the posterior; the vote's sign is the same).
      selected: ``(max_columns,)`` int32 columns in the order they entered, ``-1`` when unused.
      n_columns: how many columns entered.
      objective: the final restricted program's objective (the learner's primal).
      alpha: ``(m,)`` the examples' dual weights at the end.
      nu: the dual constraint's right-hand side at the end.
      max_violation: the dual certificate ``max(0, max_h sum_k alpha_k y_k h(x_k) - nu)`` over the
        columns not selected.
      iterations: master solves (columns added).
      master_iterations: steps of all master solves (first-order steps for CqBoost and MDBoost,
        interior-point steps for LPBoost and CG-Boost).
      converged: ``max_violation <= eps`` and every master solve certified its tolerance.
    """

    q: jax.Array
    selected: jax.Array
    n_columns: jax.Array
    objective: jax.Array
    alpha: jax.Array
    nu: jax.Array
    max_violation: jax.Array
    iterations: jax.Array
    master_iterations: jax.Array
    converged: jax.Array


class StumpsColumnGenerationResult(NamedTuple):
    """Column generation over every decision stump (matrix-free); slot ``t`` holds ``signs[t] h_t``.

    Attributes:
      q: ``(max_columns,)`` weights of the selected stumps (0 on unused slots).
      stumps: :class:`pacbound.voters.Stumps` of the slots (unused slots: feature 0).
      signs: ``(max_columns,)`` ``+1``, ``-1`` (the complement ``-h``) or 0 (unused slot).
      selected: ``(max_columns,)`` int32 candidate index (see :func:`stumps_oracle`) or ``-1``.
      n_columns, objective, alpha, nu, max_violation, iterations, master_iterations,
      converged: as in :class:`ColumnGenerationResult`.
    """

    q: jax.Array
    stumps: Stumps
    signs: jax.Array
    selected: jax.Array
    n_columns: jax.Array
    objective: jax.Array
    alpha: jax.Array
    nu: jax.Array
    max_violation: jax.Array
    iterations: jax.Array
    master_iterations: jax.Array
    converged: jax.Array


def _tail(run: LoopResult) -> tuple:
    s = run.solution
    return (run.count, s.objective, s.alpha, s.nu, run.violation, run.count, run.inner,
            run.converged)  # fmt: skip


def dense_result(run: LoopResult, n: int) -> ColumnGenerationResult:
    """Scatter the buffer's weights onto ``H``'s ``n`` columns."""
    idx = jnp.where(run.ids >= 0, run.ids, n)
    q = jnp.zeros(n, run.solution.weights.dtype).at[idx].add(run.solution.weights, mode="drop")
    return ColumnGenerationResult(q, run.ids, *_tail(run))


def stumps_result(run: LoopResult, search: StumpSearch) -> StumpsColumnGenerationResult:
    """Decode the buffer's candidate indices into stumps and signs."""
    d, m = search.order.shape
    positions = d * (m - 1)
    p = jnp.maximum(run.ids, 0) % positions
    feature, k = p // (m - 1), p % (m - 1)
    stumps = Stumps(feature.astype(jnp.int32), search.thresholds[feature, k])
    sign = jnp.where(run.ids < 0, 0, jnp.where(run.ids < positions, 1, -1))
    signs = sign.astype(run.solution.weights.dtype)
    return StumpsColumnGenerationResult(run.solution.weights, stumps, signs, run.ids, *_tail(run))
