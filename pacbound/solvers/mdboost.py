"""MDBoost: margin-distribution boosting by column generation (Shen & Li 2010; roy2016 §6).

roy2016 §6 states MDBoost on the normalized margin ``gamma = diag(y) H q``:

.. math::

    \\min_{q, \\gamma} \\frac{D}{2} \\gamma^\\top A \\gamma - 1^\\top \\gamma
    \\quad \\text{s.t.} \\quad \\gamma = \\operatorname{diag}(y) H q, \\quad q \\ge 0,
    \\quad 1^\\top q = 1,

with ``A_ii = 1`` and ``A_ij = -1 / (m - 1)``, so ``gamma^T A gamma = m^2 / (m - 1) (mu2 -
mu1^2)``: the objective is ``m`` times ``D m / (2 (m - 1)) Var(margin) - mu1``. With example
weights ``w`` (``W = sum w``; integer weights repeat examples, zeros drop them) ``1`` becomes
``w`` and ``A`` becomes ``A_w = W / (W - 1) (diag(w) - w w^T / W)``, the same program on the
repeated sample. Lagrangian stationarity in ``gamma`` gives the example duals
``alpha = w - D A_w gamma`` and in ``q`` the dual constraint ``H^T diag(y) alpha <= nu 1`` of
roy2016's MDBoost dual, so pricing is the same steepest edge as CqBoost's.

The restricted program over the selected columns, with ``G = H_t^T diag(w) H_t / W`` and
``m_S = H_t^T diag(w) y / W``, is ``min 1/2 q^T P q - W m_S^T q`` over the simplex with
``P = D W^2 / (W - 1) (G - m_S m_S^T)``: FISTA with restart and exact simplex projections
(:func:`pacbound.solvers.first_order.solve_simplex_qp`), warm-started; Algorithm 1's start
``alpha = w`` makes the first column the best single voter.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound.solvers.column_generation import (
    ColumnGenerationResult,
    MasterSolution,
    RestrictedMaster,
    StumpsColumnGenerationResult,
    fit,
    prepare,
)
from pacbound.solvers.first_order import solve_simplex_qp
from pacbound.validation import check_scalar, is_concrete
from pacbound.voters import StumpSearch

__all__ = ["mdboost", "mdboost_stumps"]


class _Problem(NamedTuple):
    y: jax.Array
    w: jax.Array
    D: jax.Array
    rtol: jax.Array
    max_iter: jax.Array


def _empty(p: _Problem, max_columns: int) -> MasterSolution:
    """``q = 0``, ``alpha = w`` (``gamma = 0``); the first column always enters."""
    inf = jnp.asarray(jnp.inf, p.y.dtype)
    zero = jnp.zeros((), jnp.int32)
    return MasterSolution(
        jnp.zeros(max_columns, p.y.dtype), p.w, -inf, inf, zero, jnp.ones((), bool), 0 * p.D
    )


def _solve(p: _Problem, columns, active, previous: MasterSolution) -> MasterSolution:
    """Restricted MDBoost by FISTA over the simplex; ``alpha = w - D A_w gamma``."""
    total = jnp.sum(p.w)
    weighted = columns * (p.w / total)[:, None]
    gram, margins = columns.T @ weighted, weighted.T @ p.y
    P = p.D * total**2 / (total - 1) * (gram - jnp.outer(margins, margins))
    c = -total * margins
    zeros = jnp.zeros_like(margins)
    r = solve_simplex_qp(P, c, zeros, 0.0, active, previous.weights, p.rtol, p.max_iter)
    gamma = p.y * (columns @ r.x)
    centred = p.w * (gamma - (p.w @ gamma) / total)
    alpha = p.w - p.D * total / (total - 1) * centred
    objective = r.x @ P @ r.x / 2 + c @ r.x
    return MasterSolution(r.x, alpha, r.nu, objective, r.iterations, r.converged, r.lipschitz)


MASTER = RestrictedMaster(_empty, _solve)


def _mdboost(votes, y, D, eps, max_columns, sample_weight, rtol, max_iter):
    y, w = prepare(votes, y, sample_weight, eps, max_columns)
    check_scalar("D", D, 0.0, low_open=True)
    if is_concrete(w) and not float(np.sum(np.asarray(w))) > 1:
        raise ValueError("MDBoost's variance needs sum(sample_weight) > 1")
    dtype = y.dtype
    rtol = (1e-10 if dtype == jnp.float64 else 1e-6) if rtol is None else rtol
    problem = _Problem(y, w, *(jnp.asarray(t, dtype) for t in (D, rtol)),
                       jnp.asarray(max_iter, jnp.int32))  # fmt: skip
    return fit(MASTER, problem, votes, y, eps, max_columns)


def mdboost(
    H: ArrayLike,
    y: ArrayLike,
    D: ArrayLike,
    eps: ArrayLike = 1e-6,
    max_columns: int = 100,
    *,
    sample_weight: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    max_iter: ArrayLike = 50_000,
) -> ColumnGenerationResult:
    """MDBoost (roy2016 §6 primal) by column generation over the columns of a finite ``H``.

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      D: the variance trade-off ``> 0`` (roy2016 §7: ``10^0`` to ``10^2``; traced).
      eps: stopping tolerance on the dual constraint (``1e-6``).
      max_columns: size of the column buffer (static).
      sample_weight: ``(m,)`` example weights ``>= 0`` with ``sum > 1``.
      rtol, max_iter: the restricted solves' gap tolerance (default ``1e-10`` in float64,
        ``1e-6`` in float32) and FISTA step cap.

    Returns:
      :class:`~pacbound.solvers.column_generation.ColumnGenerationResult`; ``q`` is a
      distribution and ``objective`` is ``(D/2) gamma^T A_w gamma - w^T gamma``.
    """
    return _mdboost(H, y, D, eps, max_columns, sample_weight, rtol, max_iter)


def mdboost_stumps(
    search: StumpSearch,
    y: ArrayLike,
    D: ArrayLike,
    eps: ArrayLike = 1e-6,
    max_columns: int = 100,
    *,
    sample_weight: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    max_iter: ArrayLike = 50_000,
) -> StumpsColumnGenerationResult:
    """MDBoost over every decision stump and its complement, generated matrix-free.

    Same arguments as :func:`mdboost`; the pricing is :func:`pacbound.voters.stump_scores`.
    """
    return _mdboost(search, y, D, eps, max_columns, sample_weight, rtol, max_iter)
