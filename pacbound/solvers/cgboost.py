"""CG-Boost (Bi et al. 2004; roy2016 §6) by column generation: the ``L2`` soft-margin QP.

roy2016 §6, with the constraint's sign corrected (the paper prints ``<= 1``; see design.md):

.. math::

    \\min_{q, \\xi} \\tfrac12 q^\\top q + C \\sum_k w_k \\xi_k \\quad \\text{s.t.} \\quad
    \\operatorname{diag}(y) H q + \\xi \\ge 1, \\quad q \\ge 0, \\quad \\xi \\ge 0,

dual ``max 1^T alpha - 1/2 ||max(0, H^T diag(y) alpha)||^2`` over ``0 <= alpha <= C w``, with
``q = max(0, H^T diag(y) alpha)``: the dual constraint of a column outside the program
(``q_i = 0``) is ``sum_k alpha_k y_k H_ki <= 0``, so the pricing rule is the steepest edge with
``nu = 0``. ``w`` are example weights (integer weights repeat examples; zeros drop them); ``q``
is the QP's (normalize by its sum for the posterior). The restricted QP is solved in JAX by the
restarted PDHG of :func:`pacbound.solvers.first_order.solve_soft_margin` (``rho = 1``), shared
with LPBoost (:mod:`pacbound.solvers.lpboost`), to a certified relative gap (default ``1e-9``
in float64).
"""

from __future__ import annotations

from jax.typing import ArrayLike

from pacbound.solvers.column_generation import ColumnGenerationResult, StumpsColumnGenerationResult
from pacbound.solvers.lpboost import fit_soft_margin, soft_margin_master
from pacbound.voters import StumpSearch

__all__ = ["cgboost", "cgboost_stumps"]

MASTER = soft_margin_master(0.0, 1.0)


def cgboost(
    H: ArrayLike,
    y: ArrayLike,
    C: ArrayLike,
    eps: ArrayLike = 1e-6,
    max_columns: int = 100,
    *,
    sample_weight: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    max_iter: ArrayLike = 200_000,
) -> ColumnGenerationResult:
    """CG-Boost (the ``L2`` soft-margin QP above) by column generation over a finite ``H``.

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      C: the slack penalty ``> 0`` (roy2016 §7: ``10^-3`` to ``10^3``; traced).
      eps: stopping tolerance on the dual constraint ``edge <= 0`` (``1e-6``).
      max_columns: size of the column buffer (static).
      sample_weight: ``(m,)`` example weights ``>= 0`` (the slacks' weights).
      rtol, max_iter: the restricted QPs' relative gap tolerance (default ``1e-9`` in float64,
        ``1e-5`` in float32) and PDHG step cap.

    Returns:
      :class:`~pacbound.solvers.column_generation.ColumnGenerationResult`, ``objective``
      ``q^T q / 2 + C sum_k w_k xi_k``.
    """
    return fit_soft_margin(MASTER, H, y, C, eps, max_columns, sample_weight, rtol, max_iter)


def cgboost_stumps(
    search: StumpSearch,
    y: ArrayLike,
    C: ArrayLike,
    eps: ArrayLike = 1e-6,
    max_columns: int = 100,
    *,
    sample_weight: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    max_iter: ArrayLike = 200_000,
) -> StumpsColumnGenerationResult:
    """CG-Boost over every decision stump and its complement, generated matrix-free.

    Same arguments as :func:`cgboost`; the pricing is :func:`pacbound.voters.stump_scores`.
    """
    return fit_soft_margin(MASTER, search, y, C, eps, max_columns, sample_weight, rtol, max_iter)
