"""The column-generation loop with a fixed-size column buffer (roy2016 §5, Algorithm 1).

One loop serves CqBoost, LPBoost, CG-Boost and MDBoost; each learner supplies a
:class:`RestrictedMaster` (its program restricted to the selected columns, solved for the
primal weights and the examples' dual weights ``alpha``). The candidates are the
self-complemented set of a :class:`pacbound._src.learning.candidates.Candidates` (every base voter
``h_b`` and its complement ``-h_b``, indexed by :func:`pacbound._src.learning.candidates.
complemented_index`), priced implicitly: one product ``sum_k a_k h_b(x_k)`` gives the edges of
both signs. Every round of the ``lax.while_loop``

1. prices every candidate by its *edge* ``sum_k alpha_k y_k h(x_k)`` (roy2016 (6): the dual
   constraint ``H^T diag(y) alpha <= nu 1``) and takes the one violating it most,
   ``max_h edge(h) - nu`` (candidates already selected are skipped; a voter and its complement
   are different candidates);
2. stops when that violation is ``<= tol`` (the dual certificate: no voter violates the dual
   constraint by more than ``tol``) or the buffer of ``max_columns`` columns is full;
3. otherwise writes the new column into the ``(m, max_columns)`` buffer, marks it active and
   re-solves the restricted master warm-started from the previous solution.

Sizes are static; every hyperparameter, ``tol`` and the example weights are traced, so
``jax.vmap`` sweeps them (and 0/1 fold masks) with one compilation. The learners' public
functions are built on this loop by :mod:`pacbound._src.learning.column_generation`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from pacbound._src.learning.candidates import Candidates, split_index

__all__ = [
    "LoopResult",
    "MasterSolution",
    "RestrictedMaster",
    "column_generation",
    "complemented_edges",
    "complemented_votes",
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


def complemented_edges(candidates: Candidates, a: jax.Array) -> jax.Array:
    """``(2 size,)`` edges ``sum_k a_k s h_b(x_k)`` of ``[+h_b, -h_b]`` in the order of
    :func:`~pacbound._src.learning.candidates.complemented_index`; ``-inf`` where ``b`` is no voter.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> a = jnp.array([1., 1., -1., -1.])
      >>> complemented_edges(dense_candidates(H, jnp.float32), a).tolist()  # [H, -H]
      [2.0, -2.0, -2.0, -2.0, 2.0, 2.0]
    """
    edges = candidates.edges(a).ravel()
    valid = jnp.tile(candidates.valid.ravel(), 2)
    return jnp.where(valid, jnp.concatenate([edges, -edges]), -jnp.inf)


def complemented_votes(candidates: Candidates, index: jax.Array, dtype) -> jax.Array:
    """``(m,)`` votes ``s h_b(x_k)`` of the self-complemented candidate ``index``.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> complemented_votes(dense_candidates(H, jnp.float32), jnp.int32(4), jnp.float32).tolist()
      [-1.0, 1.0, -1.0, -1.0]
    """
    base, sign = split_index(index, candidates.size)
    return sign.astype(dtype) * candidates.votes(base).astype(dtype)


class _Loop(NamedTuple):
    columns: jax.Array  # (m, T) buffer
    ids: jax.Array  # (T,) self-complemented candidate index of each slot, -1 when empty
    n_columns: jax.Array
    solution: MasterSolution
    best: jax.Array  # the most violating candidate
    violation: jax.Array  # its violation edge - nu
    inner: jax.Array  # master steps in all
    converged: jax.Array  # every master solve certified


def _price(candidates: Candidates, solution: MasterSolution, y, ids):
    """The most violating candidate not yet selected and its violation ``edge - nu``."""
    edges = complemented_edges(candidates, solution.alpha * y)
    edges = edges.at[jnp.where(ids >= 0, ids, edges.shape[0])].set(-jnp.inf, mode="drop")
    best = jnp.argmax(edges).astype(jnp.int32)
    return best, edges[best] - solution.nu


def _add_column(s: _Loop, candidates, master, problem, y) -> _Loop:
    column = complemented_votes(candidates, s.best, s.columns.dtype)
    columns = s.columns.at[:, s.n_columns].set(column)
    ids = s.ids.at[s.n_columns].set(s.best)
    active = jnp.arange(ids.shape[0]) <= s.n_columns
    solution = master.solve(problem, columns, active, s.solution)
    best, violation = _price(candidates, solution, y, ids)
    inner = s.inner + solution.iterations
    converged = s.converged & solution.converged
    return _Loop(columns, ids, s.n_columns + 1, solution, best, violation, inner, converged)


class LoopResult(NamedTuple):
    """What :func:`column_generation` returns: the buffer's self-complemented candidate indices
    (``-1``: empty), columns added, the last master solution, the final violation, master
    steps in all, whether every solve and the dual certificate were certified (``converged``)
    and whether every master solve was (``certified``)."""

    ids: jax.Array
    n_columns: jax.Array
    solution: MasterSolution
    violation: jax.Array
    inner: jax.Array
    converged: jax.Array
    certified: jax.Array


def column_generation(
    master: RestrictedMaster,
    problem: Any,
    candidates: Candidates,
    y: jax.Array,
    tol: jax.Array,
    max_columns: int,
) -> LoopResult:
    """roy2016 Algorithm 1, generic in the master; call it inside ``jit``.

    Stops once the most violating candidate's ``edge - nu`` is ``<= tol`` plus the edges'
    rounding level (``4 eps_mach sum_k |alpha_k|``), or when ``max_columns`` are selected.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> from pacbound._src.learning.column_generation import LearnerProblem
      >>> from pacbound._src.solvers.cqboost import CQBOOST
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> f32 = jnp.float32
      >>> problem = LearnerProblem(y, jnp.ones(4), f32(0.3), f32(1e-5), jnp.int32(1000))
      >>> candidates = dense_candidates(H, f32)
      >>> run = column_generation(CQBOOST.master, problem, candidates, y, f32(1e-6), 5)
      >>> int(run.n_columns), bool(run.converged)
      (4, True)
    """
    m, dtype = y.shape[0], y.dtype
    empty = master.empty(problem, max_columns)
    ids = jnp.full(max_columns, -1, jnp.int32)
    best, violation = _price(candidates, empty, y, ids)
    zero = jnp.zeros((), jnp.int32)
    init = _Loop(jnp.zeros((m, max_columns), dtype), ids, zero, empty, best, violation, zero,
                 jnp.ones((), bool))  # fmt: skip

    def threshold(s):
        return tol + 4 * jnp.finfo(dtype).eps * jnp.sum(jnp.abs(s.solution.alpha))

    def cond(s):
        return (s.violation > threshold(s)) & (s.n_columns < max_columns)

    s = lax.while_loop(cond, lambda s: _add_column(s, candidates, master, problem, y), init)
    converged = s.converged & (s.violation <= threshold(s))
    violation = jnp.maximum(s.violation, 0)
    return LoopResult(s.ids, s.n_columns, s.solution, violation, s.inner, converged, s.converged)
