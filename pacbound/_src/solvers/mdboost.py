"""MDBoost: margin-distribution boosting by column generation (Shen & Li 2010; roy2016 §6).

:func:`mdboost` (over ``[H, -H]``, or every candidate of a :class:`~pacbound.voters.Voters`
family and its complement) shares its arguments and result with the other column-generation
learners
(:mod:`pacbound._src.learning.column_generation`); ``H`` below stands for the voters weighed.

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
(:func:`pacbound._src.optimization.simplex_qp.solve_simplex_qp`), warm-started; Algorithm 1's start
``alpha = w`` makes the first column the best single voter.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.learning.column_generation import ColumnGenerationSpec, LearnerProblem, fit
from pacbound._src.learning.column_generation_loop import MasterSolution, RestrictedMaster
from pacbound._src.optimization.simplex_qp import solve_simplex_qp
from pacbound._src.protocol import LearnerResult
from pacbound._src.validation import check_scalar, is_concrete

__all__ = ["mdboost"]


def _empty(p: LearnerProblem, max_columns: int) -> MasterSolution:
    """``q = 0``, ``alpha = w`` (``gamma = 0``); the first column always enters."""
    inf = jnp.asarray(jnp.inf, p.y.dtype)
    zero = jnp.zeros((), jnp.int32)
    return MasterSolution(
        jnp.zeros(max_columns, p.y.dtype), p.w, -inf, inf, zero, jnp.ones((), bool), 0 * p.value
    )


def _solve(p: LearnerProblem, columns, active, previous: MasterSolution) -> MasterSolution:
    """Restricted MDBoost (``D = p.value``) by FISTA over the simplex; ``alpha = w - D A_w
    gamma``."""
    D, total = p.value, jnp.sum(p.w)
    weighted = columns * (p.w / total)[:, None]
    gram, margins = columns.T @ weighted, weighted.T @ p.y
    P = D * total**2 / (total - 1) * (gram - jnp.outer(margins, margins))
    c = -total * margins
    zeros = jnp.zeros_like(margins)
    r = solve_simplex_qp(P, c, zeros, 0.0, active, previous.weights, p.master_tol,
                         p.master_max_iter)  # fmt: skip
    gamma = p.y * (columns @ r.x)
    centred = p.w * (gamma - (p.w @ gamma) / total)
    alpha = p.w - D * total / (total - 1) * centred
    objective = r.x @ P @ r.x / 2 + c @ r.x
    return MasterSolution(r.x, alpha, r.nu, objective, r.iterations, r.converged, r.lipschitz)


def _check(D, votes, y, w, matrix_free: bool) -> None:
    check_scalar("D", D, 0.0, low_open=True)
    if is_concrete(w) and not float(np.sum(np.asarray(w))) > 1:
        raise ValueError("MDBoost's variance needs sum(sample_weight) > 1")


MDBOOST = ColumnGenerationSpec(RestrictedMaster(_empty, _solve), _check, (1e-10, 1e-6))


def mdboost(
    voters: Any,
    y: ArrayLike,
    D: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike = 1e-6,
    max_columns: int = 100,
    master_tol: ArrayLike | None = None,
    master_max_iter: ArrayLike = 50_000,
) -> LearnerResult:
    """MDBoost (roy2016 §6 primal) by column generation over ``[H, -H]``.

    ``min_q (D/2) gamma^T A_w gamma - w^T gamma`` with ``gamma = diag(y) H q`` over the simplex
    of ``[H, -H]`` (``A_w = W / (W - 1) (diag(w) - w w^T / W)``: ``m`` times ``D m / (2 (m - 1))
    Var(margin) - mu1`` for unit weights). Adds the voter with the steepest edge
    ``sum_k alpha_k y_k h(x_k)``, ``alpha = w - D A_w gamma``, until none exceeds ``nu + tol``,
    re-solving the restricted program by FISTA (module docstring; the shared arguments and
    result: :mod:`pacbound._src.learning.column_generation`).

    Args:
      voters: ``H`` ``(m, n)``, or a :class:`~pacbound.voters.Voters` family searched
        matrix-free (as for every learner: the protocol page).
      y: ``(m,)`` labels in ``{-1, +1}``.
      D: the variance trade-off ``> 0`` (roy2016 §7: ``10^0`` to ``10^2``); traced.
      sample_weight, tol, max_columns, master_tol, master_max_iter: CqBoost's
        (:mod:`pacbound._src.learning.column_generation`), the same FISTA defaults; the weights
        must sum to more than 1 (the variance's ``W - 1``).

    Returns:
      :class:`~pacbound.solvers.LearnerResult`, ``q`` a distribution over
      ``[H, -H]``, ``objective`` ``(D/2) gamma^T A_w gamma - w^T gamma``, ``info`` a
      :class:`~pacbound.solvers.ColumnGenerationInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = mdboost(H, y, 1.0, max_columns=5)
      >>> margins = y * (H @ r.weights)  # mean 1/2, variance 1/12: the objective -16/9
      >>> [round(float(v), 4) for v in (margins.mean(), margins.var(), r.objective)]
      [0.5, 0.0833, -1.7778]
    """
    return fit(MDBOOST, voters, y, D, sample_weight, tol, max_columns, master_tol, master_max_iter)
