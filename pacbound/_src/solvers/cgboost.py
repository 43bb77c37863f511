"""CG-Boost (Bi et al. 2004; roy2016 §6) by column generation: the ``L2`` soft-margin QP.

:func:`cgboost` (over ``[H, -H]``, or every candidate of a :class:`~pacbound.voters.Voters`
family and its complement) shares its arguments and result with the other column-generation
learners
(:mod:`pacbound._src.learning.column_generation`); ``H`` below stands for the voters weighed.

roy2016 §6, with the constraint's sign corrected (the paper prints ``<= 1``; see design.md):

.. math::

    \\min_{q, \\xi} \\tfrac12 q^\\top q + C \\sum_k w_k \\xi_k \\quad \\text{s.t.} \\quad
    \\operatorname{diag}(y) H q + \\xi \\ge 1, \\quad q \\ge 0, \\quad \\xi \\ge 0,

dual ``max 1^T alpha - 1/2 ||max(0, H^T diag(y) alpha)||^2`` over ``0 <= alpha <= C w``, with
``q = max(0, H^T diag(y) alpha)``: the dual constraint of a column outside the program
(``q_i = 0``) is ``sum_k alpha_k y_k H_ki <= 0``, so the pricing rule is the steepest edge with
``nu = 0``. ``w`` are example weights (integer weights repeat examples; zeros drop them); the
posterior is the QP's ``q`` divided by its sum (the QP's ``q`` is ``info.program_weights``;
an empty vote, optimal only when every voter's edge is 0, is the uniform posterior). The
restricted QP is solved in JAX by the interior-point method of
:func:`pacbound._src.optimization.interior_point.solve_soft_margin` (``rho = 1``), shared with
LPBoost (:mod:`pacbound._src.solvers.lpboost`), to a certified relative gap (default ``1e-9`` in
float64).
"""

from __future__ import annotations

from typing import Any

from jax.typing import ArrayLike

from pacbound._src.learning.column_generation import fit
from pacbound._src.protocol import LearnerResult
from pacbound._src.solvers.lpboost import soft_margin_spec

__all__ = ["cgboost"]

CGBOOST = soft_margin_spec(0.0, 1.0)


def cgboost(
    voters: Any,
    y: ArrayLike,
    C: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike = 1e-6,
    max_columns: int = 100,
    master_tol: ArrayLike | None = None,
    master_max_iter: ArrayLike = 100,
) -> LearnerResult:
    """CG-Boost (Bi et al. 2004; roy2016 §6): the ``L2`` soft-margin QP by column generation.

    ``min_q q^T q / 2 + C sum_k w_k xi_k`` subject to ``diag(y) H q + xi >= 1``,
    ``q, xi >= 0`` over ``[H, -H]``; a voter outside the program must satisfy
    ``sum_k alpha_k y_k h(x_k) <= 0``. Adds the voter with the steepest edge until none exceeds
    ``tol``, re-solving the restricted QP by the interior-point method of
    :func:`pacbound._src.optimization.interior_point.solve_soft_margin` (module docstring), the
    program LPBoost's (:func:`pacbound._src.solvers.lpboost.lpboost`) with ``rho = 1``.

    Args:
      voters: ``H`` ``(m, n)``, or a :class:`~pacbound.voters.Voters` family searched
        matrix-free (as for every learner: the protocol page).
      y: ``(m,)`` labels in ``{-1, +1}``.
      C: the slack penalty ``> 0`` (roy2016 §7: ``10^-3`` to ``10^3``); traced.
      sample_weight, tol, max_columns, master_tol, master_max_iter: LPBoost's
        (:mod:`pacbound._src.learning.column_generation`): the slacks' weights, the violation
        ``edge - 0`` accepted, the interior-point method's gap and step cap.

    Returns:
      :class:`~pacbound.solvers.LearnerResult`, ``q`` the QP's ``q`` divided by its
      sum, ``objective`` ``q^T q / 2 + C sum_k w_k xi_k`` at the QP's ``q``
      (``info.program_weights``), ``info`` a :class:`~pacbound.solvers.ColumnGenerationInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = cgboost(H, y, 1.0, max_columns=5)  # the three voters, equally weighted
      >>> [round(float(v), 2) for v in r.q], round(float(r.objective), 3)
      ([0.33, 0.0, 0.0, 0.0, 0.33, 0.33], 1.5)
    """
    return fit(CGBOOST, voters, y, C, sample_weight, tol, max_columns, master_tol, master_max_iter)
