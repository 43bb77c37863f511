"""CqBoost: column generation that minimizes the C-bound (roy2016 §4-5, Algorithm 1).

:func:`cqboost` (over ``[H, -H]``, or every candidate of a :class:`~pacbound.voters.Voters`
family and its complement) shares its arguments and result with the other column-generation
learners
(:mod:`pacbound._src.learning.column_generation`).

roy2016 program (2) / (3), with the first-moment constraint the C-bound needs (``mu1 >= mu``;
the paper prints ``<= mu``, see design.md's traps) and example weights ``w`` (``W = sum w``,
all moments weighted means; zero weights drop examples):

.. math::

    \\min_{q, \\gamma} \\frac{1}{W} \\sum_k w_k \\gamma_k^2 \\quad \\text{s.t.} \\quad
    \\gamma = \\operatorname{diag}(y) H q, \\quad \\frac{1}{W} w^\\top \\gamma \\ge \\mu, \\quad
    q \\ge 0, \\quad 1^\\top q = 1.

Lagrangian (4) with this sign: ``(1/W) gamma^T diag(w) gamma + alpha^T (gamma - diag(y) H q) +
beta (mu - w^T gamma / W) - xi^T q + nu (1^T q - 1)``, ``beta, xi >= 0``. The KKT conditions (5)
become ``H^T diag(y) alpha = nu 1 - xi`` and ``alpha_k = w_k (beta - 2 gamma_k) / W``, so the
dual (6) constraint is ``H^T diag(y) alpha <= nu 1``: the column entering is the one with the
steepest edge ``sum_k alpha_k y_k H_ki``, and the stopping rule is ``edge <= nu + tol``.

The restricted program over the ``t`` selected columns is ``min q^T G q`` (``G = H_t^T
diag(w) H_t / W``) over the simplex ∩ ``{m_S^T q >= mu}`` (``m_S = H_t^T diag(w) y / W``), solved
by FISTA with restart and exact projections
(:func:`pacbound._src.optimization.simplex_qp.solve_simplex_qp`), warm-started from the previous
columns'
``q``. ``beta`` is the halfspace multiplier of its KKT conditions, ``nu = max_j (beta m_S -
2 G q)_j`` over the selected columns, ``alpha`` follows from (5). Algorithm 1 starts from
``alpha = w / W``: the first column is the best single voter, so ``mu`` must not exceed its mean
margin, the largest ``mu1`` any posterior reaches (:func:`cqboost_max_mu`).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.learning.column_generation import (
    ColumnGenerationSpec,
    LearnerProblem,
    check_reachable,
    fit,
    largest_margin,
    prepare,
)
from pacbound._src.learning.column_generation_loop import MasterSolution, RestrictedMaster
from pacbound._src.optimization.simplex_qp import solve_simplex_qp
from pacbound._src.protocol import LearnerResult
from pacbound._src.validation import check_scalar

__all__ = ["cqboost", "cqboost_max_mu"]


def _empty(p: LearnerProblem, max_columns: int) -> MasterSolution:
    """Algorithm 1's start: ``q = 0``, ``alpha = w / W``; the first column always enters."""
    zero = jnp.zeros((), p.y.dtype)
    return MasterSolution(
        jnp.zeros(max_columns, p.y.dtype), p.w / jnp.sum(p.w), -jnp.asarray(jnp.inf, p.y.dtype),
        jnp.asarray(jnp.inf, p.y.dtype), jnp.zeros((), jnp.int32), jnp.ones((), bool), zero,
    )  # fmt: skip


def _solve(p: LearnerProblem, columns, active, previous: MasterSolution) -> MasterSolution:
    """Restricted program (3) (``mu = p.value``) by FISTA; duals from the KKT conditions (5)."""
    mu = p.value
    weighted = columns * (p.w / jnp.sum(p.w))[:, None]
    gram, margins = columns.T @ weighted, weighted.T @ p.y
    zeros = jnp.zeros_like(margins)
    r = solve_simplex_qp(2 * gram, zeros, margins, mu, active, previous.weights, p.master_tol,
                         p.master_max_iter)  # fmt: skip
    gamma = p.y * (columns @ r.x)
    alpha = p.w * (r.multiplier - 2 * gamma) / jnp.sum(p.w)
    objective = r.x @ gram @ r.x
    reachable = jnp.max(jnp.where(active, margins, -jnp.inf)) >= mu  # False: mu too large
    converged = r.converged & reachable
    return MasterSolution(r.x, alpha, r.nu, objective, r.iterations, converged, r.lipschitz)


def cqboost_max_mu(votes: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> jax.Array:
    """The largest reachable ``mu``: ``max_Q mu1 = max_h (1/W) sum_k w_k y_k h(x_k)`` (a vertex
    of the simplex), the best single voter's weighted mean margin.

    Args:
      votes: ``H`` ``(m, n)`` (over ``[H, -H]``) or a stump search (every stump and its
        complement).
      y: ``(m,)`` labels in ``{-1, +1}``.
      sample_weight: ``(m,)`` example weights ``>= 0`` (``None``: all 1).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> float(cqboost_max_mu(H, y))  # each voter (or its complement) has margin 1/2
      0.5
    """
    y, w = prepare(votes, y, sample_weight)
    return largest_margin(votes, y, w)


def _check(mu, votes, y, w, matrix_free: bool) -> None:
    check_scalar("mu", mu, 0.0, 1.0, low_open=True)
    what = "no posterior on these voters has a larger first margin moment;"
    check_reachable("mu", mu, votes, y, w, what)


CQBOOST = ColumnGenerationSpec(RestrictedMaster(_empty, _solve), _check, (1e-10, 1e-6))


def cqboost(
    voters: Any,
    y: ArrayLike,
    mu: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike = 1e-6,
    max_columns: int = 100,
    master_tol: ArrayLike | None = None,
    master_max_iter: ArrayLike = 50_000,
) -> LearnerResult:
    """CqBoost (roy2016 Algorithm 1): the C-bound minimized by column generation over ``[H, -H]``.

    Program (3) with ``mu1 >= mu``: ``min_q (1/W) sum_k w_k (H q)_k^2`` subject to
    ``(1/W) sum_k w_k y_k (H q)_k >= mu`` over the simplex of ``[H, -H]``. Adds, one at a time,
    the voter with the steepest edge ``sum_k alpha_k y_k h(x_k)`` (dual (6)) until none exceeds
    ``nu + tol``, re-solving program (3) on the selected voters by FISTA each time (module
    docstring; the shared arguments and result: :mod:`pacbound._src.learning.column_generation`).

    Args:
      voters: the votes ``H`` ``(m, n)`` as the user has them, or any
        :class:`~pacbound.voters.Voters` family, searched matrix-free (``q`` is then over the
        selected ``result.voters``; the protocol page).
      y: ``(m,)`` labels in ``{-1, +1}``.
      mu: the first margin moment to reach, in ``(0, cqboost_max_mu(H, y)]``; traced.
      sample_weight, tol, max_columns, master_tol, master_max_iter: the options every
        column-generation learner shares (:mod:`pacbound._src.learning.column_generation`):
        here the moments are weighted means; ``tol`` bounds ``edge - nu``; FISTA's relative gap
        (default ``1e-10`` in float64, ``1e-6`` in float32) and step cap per restricted solve.

    Returns:
      :class:`~pacbound.solvers.LearnerResult`, ``q`` a distribution over
      ``[H, -H]``, ``objective`` ``mu2`` (the weighted second margin moment, program (3)'s
      objective), ``info`` a
      :class:`~pacbound.solvers.ColumnGenerationInfo`.

    Raises:
      ValueError: for malformed inputs or ``mu`` above the largest reachable first moment (the
        message names it, :func:`cqboost_max_mu`). Under ``jit`` / ``vmap`` (traced ``mu`` or
        weights: no value checks) an unreachable ``mu`` (e.g. on one fold) gives
        ``converged = False``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = cqboost(H, y, 0.3, max_columns=5)
      >>> F = H @ r.weights
      >>> float(jnp.mean(jnp.sign(F) != y)), round(float(jnp.mean(y * F)), 3), bool(r.converged)
      (0.0, 0.3, True)
    """
    return fit(CQBOOST, voters, y, mu, sample_weight, tol, max_columns, master_tol, master_max_iter)
