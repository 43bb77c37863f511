"""LPBoost by column generation, and the soft-margin master it shares with CG-Boost.

:func:`lpboost` (over ``[H, -H]``, or every candidate of a :class:`~pacbound.voters.Voters`
family and its complement) shares its arguments and result with the other column-generation
learners
(:mod:`pacbound._src.learning.column_generation`); ``H`` below stands for the voters weighed.

roy2016 §6 discusses LPBoost (Demiriz et al. 2002) as the ``L1``-regularized soft-margin LP of
which CG-Boost is the ``L2`` version (the LP itself is lost from our copy of the paper); we
solve that ``L1`` form, the one-margin LP of Demiriz et al. §2 and Bi et al. 2004:

.. math::

    \\min_{q, \\xi} 1^\\top q + C \\sum_k w_k \\xi_k \\quad \\text{s.t.} \\quad
    \\operatorname{diag}(y) H q + \\xi \\ge 1, \\quad q \\ge 0, \\quad \\xi \\ge 0,

dual ``max 1^T alpha  s.t.  H^T diag(y) alpha <= 1, 0 <= alpha <= C w``. (Demiriz et al.'s
``nu``-LP ``max rho - D sum xi`` over the simplex is the same family after rescaling ``q`` by the
margin.) ``w`` are example weights (integer weights repeat examples; zeros drop them). The
posterior is the LP's ``q / sum(q)`` (the same vote up to a positive scale; the LP's ``q`` is
``info.program_weights``). With no column the optimum is ``q = 0``, ``alpha = C w``; if then no
edge ``C sum_k w_k y_k h(x_k)`` exceeds ``1 + tol``, the empty vote is optimal and returned, as
the uniform posterior.

The restricted program, LPBoost's or CG-Boost's (:mod:`pacbound._src.solvers.cgboost`), is

.. math:: \\min_{q \\ge 0} c^\\top q + \\tfrac{\\rho}{2} \\|q\\|^2
          + \\sum_k u_k \\max(0, 1 - (K q)_k)
          = \\min_{q \\ge 0} \\max_{0 \\le \\alpha \\le u} c^\\top q + \\tfrac{\\rho}{2} \\|q\\|^2
          + 1^\\top \\alpha - \\alpha^\\top K q,

``K = diag(y) H_t``, ``u = C w`` (LPBoost: ``c = 1, rho = 0``; CG-Boost: ``c = 0, rho = 1``),
solved in JAX by :func:`pacbound._src.optimization.interior_point.solve_soft_margin` (Mehrotra's
predictor-corrector interior-point method on the dense restricted program, then for the LP a
crossover to the vertex of the guessed active set) to a certified relative gap (default ``1e-9``
in float64), started halfway between the previous primal and dual points and the centre. The
LP's duals, scaled to be exactly feasible, price the candidates.
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.learning.column_generation import ColumnGenerationSpec, LearnerProblem, fit
from pacbound._src.learning.column_generation_loop import MasterSolution, RestrictedMaster
from pacbound._src.optimization.interior_point import solve_soft_margin
from pacbound._src.protocol import LearnerResult
from pacbound._src.validation import check_scalar

__all__ = ["lpboost", "soft_margin_spec"]


def _empty(p: LearnerProblem, max_columns: int, cost: float) -> MasterSolution:
    """No column: ``q = 0``, every slack 1, ``alpha = C w`` (optimal for the empty program)."""
    upper = p.value * p.w
    return MasterSolution(
        jnp.zeros(max_columns, p.y.dtype), upper, jnp.asarray(cost, p.y.dtype), jnp.sum(upper),
        jnp.zeros((), jnp.int32), jnp.ones((), bool), jnp.ones((), p.y.dtype),
    )  # fmt: skip


def _solve(p: LearnerProblem, columns, active, previous, cost: float, rho: float):
    """``min cost 1^T q + rho/2 ||q||^2 + C sum w xi`` on the selected columns, by the IPM."""
    K = p.y[:, None] * columns
    c = jnp.full(columns.shape[1], cost, columns.dtype)
    r = solve_soft_margin(
        K, c, rho, p.value * p.w, active, previous.weights, previous.alpha, previous.warm,
        p.master_tol, p.master_max_iter,
    )  # fmt: skip
    nu = jnp.asarray(cost, columns.dtype)  # the dual constraint: edges <= cost
    return MasterSolution(r.x, r.y, nu, r.primal_objective, r.iterations, r.converged,
                          r.scale)  # fmt: skip


def _check_C(C, votes, y, w, matrix_free: bool) -> None:
    check_scalar("C", C, 0.0, low_open=True)


@functools.cache
def soft_margin_spec(cost: float, rho: float) -> ColumnGenerationSpec:
    """The column-generation learner of ``min cost 1^T q + rho/2 q^T q + C sum_k w_k xi_k``
    (``diag(y) H q + xi >= 1``) with hyperparameter ``C``: LPBoost is ``(1, 0)``, CG-Boost
    ``(0, 1)``; ``master_tol`` defaults to ``1e-9`` in float64, ``1e-5`` in float32. The same
    ``(cost, rho)`` gives the same spec (``jit`` caches on the master's identity, so a learner
    built twice compiles once).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.column_generation import fit
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = fit(soft_margin_spec(1.0, 0.0), H, y, 1.0, None, 1e-6, 5, None, 100)  # LPBoost
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.q.sum()), 4)
      (0.0, 1.0)
      >>> soft_margin_spec(1.0, 0.0) is LPBOOST  # lpboost's: the fit above compiled its program
      True
    """
    master = RestrictedMaster(
        functools.partial(_empty, cost=cost), functools.partial(_solve, cost=cost, rho=rho)
    )
    return ColumnGenerationSpec(master, _check_C, (1e-9, 1e-5))


LPBOOST = soft_margin_spec(1.0, 0.0)


def lpboost(
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
    """LPBoost (Demiriz et al. 2002; roy2016 §6): the ``L1`` soft-margin LP by column generation.

    ``min_q 1^T q + C sum_k w_k xi_k`` subject to ``diag(y) H q + xi >= 1``, ``q, xi >= 0``
    over ``[H, -H]``; its dual constraint is ``sum_k alpha_k y_k h(x_k) <= 1``. Adds the voter
    with the steepest edge until none exceeds ``1 + tol``, re-solving the restricted LP by the
    interior-point method of :func:`pacbound._src.optimization.interior_point.solve_soft_margin`
    (module docstring).

    Args:
      voters: the votes ``H`` ``(m, n)`` as the user has them, or any
        :class:`~pacbound.voters.Voters` family, searched matrix-free (``q`` is then over the
        selected ``result.voters``; the protocol page).
      y: ``(m,)`` labels in ``{-1, +1}``.
      C: the slack penalty ``> 0`` (roy2016 §7: ``10^-3`` to ``10^3``); traced.
      sample_weight, tol, max_columns, master_tol, master_max_iter: the options every
        column-generation learner shares (:mod:`pacbound._src.learning.column_generation`):
        here the slacks' weights; the violation ``edge - 1`` accepted; the interior-point
        method's relative gap (default ``1e-9`` in float64, ``1e-5`` in float32) and step cap.

    Returns:
      :class:`~pacbound.solvers.LearnerResult`, ``q`` the LP's ``q`` divided by its
      sum (uniform for the empty vote ``q = 0`` of a small ``C``), ``objective``
      ``1^T q + C sum_k w_k xi_k`` at the LP's ``q`` (``info.program_weights``), ``info`` a
      :class:`~pacbound.solvers.ColumnGenerationInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = lpboost(H, y, 1.0, max_columns=5)
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), int(r.steps), round(float(r.objective), 4)
      (0.0, 3, 3.0)
    """
    return fit(LPBOOST, voters, y, C, sample_weight, tol, max_columns, master_tol, master_max_iter)
