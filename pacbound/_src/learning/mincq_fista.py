"""The FISTA core of MinCq / TMinCq (laviolette2011 Programs 1-2): :func:`solve_mincq`.

In the centred weights ``u = 2 n Q - 1`` in ``[-1, 1]^n`` of the voters of ``[H, -H]`` (see
:mod:`pacbound._src.solvers.mincq`), Program 1 is: minimize ``mu2(u) = u^T M u / n^2`` on the box ∩
hyperplane ``{a^T u = mu}``, ``a = m_S / n``. We run restarted FISTA
(:mod:`pacbound._src.optimization.fista`: O'Donoghue & Candès' gradient restart) inside a
``lax.while_loop`` that stops on a certified duality gap. Each step is a gradient step of size
``1/L`` on the votes' covariance part ``u^T C u / n^2`` (``M = C + b b^T``, ``b`` the voters'
mean outputs) followed by the projection onto the box ∩ hyperplane in the metric
``I + kappa b b^T`` (:func:`pacbound._src.optimization.projections.box_hyperplane_rank_one_prox`),
which takes the rank-one part ``(b^T u)^2 / n^2`` exactly. For stumps and RBF voters ``b b^T``
carries by far the top eigenvalue of ``M``, so ``L = 2 lmax(C) / n^2`` is that much smaller and
FISTA needs about the square root of that ratio fewer steps. ``L`` comes from a power iteration
on ``C = M - b b^T`` inside ``jit`` (:func:`initial_lipschitz`) and is raised whenever a step
meets more curvature (a free check: one product with ``M`` per iteration gives the gradients at
both the iterate and the extrapolated point). The prox runs loop-free Newton steps warm-started
from the previous iteration's multipliers (a ``lax.while_loop`` inside the step costs far more
than its trips under ``jax.vmap``). The stopping test is the Lagrangian duality gap of
:mod:`pacbound._src.learning.mincq_gap` (at the better of the prox's multiplier and a least-squares
fit on the free set), so ``converged`` certifies ``mu2 - mu2* <= tol * mu2 + atol`` at the
returned point, which is put exactly on the hyperplane first. In float64 the whole iteration
first runs in float32 (``M`` products and the ``O(n)`` work per step cost half as much; under
``jax.vmap`` the latter grows with the lanes) down to the float32 gap floor; float64 iterations
finish and certify.

The pieces the continuation (:mod:`pacbound._src.solvers.mincq_path`) shares: :func:`default_tol`,
:func:`initial_lipschitz`, :func:`restarted` and :func:`fista_phase`.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.learning.mincq_gap import (
    MinCqProblem,
    certified_result,
    gap_measure,
    moment_product,
    project,
)
from pacbound._src.optimization.fista import (
    STALL_ITERATIONS,
    FistaState,
    fista_start,
    fista_step,
    fused_dot,
    iterate,
    largest_eigenvalue,
)
from pacbound._src.optimization.projections import (
    box_hyperplane_feasible,
    box_hyperplane_rank_one_prox,
)
from pacbound._src.protocol import LearnerResult

__all__ = [
    "default_tol",
    "fista_phase",
    "initial_lipschitz",
    "restarted",
    "solve_mincq",
]

PROX_STEPS = 1  # loop-free Newton steps on the prox's dual per FISTA iteration


def default_tol(dtype) -> float:
    """The default relative gap tolerance: ``1e-6`` in float64, ``1e-5`` in float32.

    Example:
      >>> import jax.numpy as jnp
      >>> default_tol(jnp.float32), default_tol(jnp.float64)
      (1e-05, 1e-06)
    """
    return 1e-6 if dtype == jnp.float64 else 1e-5


def initial_lipschitz(problem: MinCqProblem) -> jax.Array:
    """The first step-size constant ``L = 1.01 (2 / n^2) lmax(C)``, ``C = M - b b^T`` (the
    covariance part FISTA steps on), by power iteration to a relative ``1e-4``; a Rayleigh
    quotient, never above ``lmax(C)``: steps raise it when they meet more curvature.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.mincq_gap import mincq_problem
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> p = mincq_problem(H, jnp.array([1., 1., -1., -1.]))
      >>> C = p.moment_op - jnp.outer(p.mean_votes, p.mean_votes)
      >>> largest = (2 / 9) * float(jnp.linalg.eigvalsh(C)[-1])  # the Hessian's
      >>> float(initial_lipschitz(p)) <= 1.01 * largest * (1 + 1e-5)
      True
    """
    op, _, b = problem
    n = b.shape[0]
    start = jax.random.normal(jax.random.key(0), b.shape, b.dtype)
    matvec = functools.partial(moment_product, op)
    top = largest_eigenvalue(matvec, start, rank_one=b, tol=1e-4, max_iter=300)
    return jnp.maximum(1.01 * (2 / n**2) * top, jnp.finfo(op.dtype).tiny)


def _fista_measure(duality_gap):
    """``duality_gap`` (:func:`~pacbound._src.learning.mincq_gap.gap_measure`) as FISTA's measure
    ``(x, M x, multipliers, L) -> (gap, noise)``: the gradient ``2 M x / n^2`` and the prox's
    hyperplane multiplier scaled back by ``L``."""

    def measure(x, mx, multipliers, lipschitz):
        n = x.shape[0]
        return duality_gap(x, (2 / n**2) * mx, lipschitz * multipliers[0])

    return measure


def restarted(x, mx, lipschitz, multipliers, k, duality_gap) -> FistaState:
    """A FISTA state at ``x`` (``mx = M x``) with no momentum, its gap measured by
    ``duality_gap`` (:func:`~pacbound._src.learning.mincq_gap.gap_measure`); ``multipliers`` the
    prox's ``(lam, s)``, ``k`` the steps already taken.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.mincq_gap import (
      ...     gap_measure, mincq_problem, moment_product, project)
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> p = mincq_problem(H, jnp.array([1., 1., -1., -1.]))
      >>> u = project(jnp.zeros(3), p.first_moments / 3, 0.2)
      >>> pu = moment_product(p.moment_op, u)
      >>> s = restarted(u, pu, 1.0, jnp.zeros(2), 0, gap_measure(p, 0.2))
      >>> float(s.t), int(s.k), bool(jnp.all(s.y == s.x)), bool(s.gap >= 0)
      (1.0, 0, True, True)
    """
    measured = _fista_measure(duality_gap)(x, mx, multipliers, lipschitz)
    return fista_start(x, mx, lipschitz, multipliers, measured, k)


def _step(s: FistaState, matvec, measure, b, a, mu) -> FistaState:
    """One restarted FISTA step: gradient step on the covariance part, prox in the metric
    ``I + kappa b b^T`` (``prox_state``: its multipliers ``(lam, s)``), curvature of ``C``."""
    n = a.shape[0]

    def gradient(y, my):  # of u^T C u / n^2
        return (2 / n**2) * (my - b * fused_dot(b, y))

    def prox(z, s):  # the rank-one part (b^T u)^2 / n^2, taken exactly; Newton goes on
        kappa = 2 / (n**2 * s.lipschitz)  # across iterations, loop-free
        init = tuple(s.prox_state)
        p = box_hyperplane_rank_one_prox(z, a, mu, -1, 1, b, kappa, init, max_steps=PROX_STEPS)
        return p.x, jnp.stack([p.multiplier, p.rank_one_multiplier])

    def curvature(d, md):
        return (2 / n**2) * (fused_dot(d, md) - fused_dot(b, d) ** 2)

    return fista_step(
        s, gradient=gradient, prox=prox, product=matvec, curvature=curvature, measure=measure,
        growth=1.01,
    )  # fmt: skip


def fista_phase(
    problem: MinCqProblem, mu, start, tol, atol, max_iter, feasible, stall
) -> FistaState:
    """Restarted FISTA in ``problem``'s dtype from ``start = (x, L, multipliers, k)`` until the
    certified gap is met (at an iterate on the hyperplane), ``max_iter`` steps in all, or
    ``stall`` iterations without a 0.1% drop of the best gap (in float32 a lane's gap can sit
    above the estimated rounding floor: the float64 phase then takes over).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.mincq_gap import mincq_problem, project
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> p = mincq_problem(H, jnp.array([1., 1., -1., -1.]))
      >>> u0 = project(jnp.zeros(3), p.first_moments / 3, 0.2)
      >>> start = (u0, initial_lipschitz(p), jnp.zeros(2), 0)
      >>> s = fista_phase(p, 0.2, start, 1e-5, 0.0, 100, True, 20)
      >>> int(s.k) < 100, bool(s.gap <= 1e-5 * float(s.x @ s.px) / 9 + s.gap_info)
      (True, True)
    """
    op, m_s, b = problem
    dtype, n = m_s.dtype, m_s.shape[0]
    mu, tol, atol = (jnp.asarray(t, dtype) for t in (mu, tol, atol))
    x, lipschitz, multipliers = (jnp.asarray(t, dtype) for t in start[:3])
    matvec, gap = functools.partial(moment_product, op), gap_measure(problem, mu)
    a, eps = m_s / n, jnp.finfo(dtype).eps

    def going(s):  # the gap bounds mu2(x) - mu2* for any x in the box: x must be on the
        tolerance = tol * fused_dot(s.x, s.px) / n**2 + atol + s.gap_info  # hyperplane as well
        off_plane = jnp.abs(fused_dot(a, s.x) - mu) > 64 * eps * (
            fused_dot(jnp.abs(a), jnp.abs(s.x)) + mu
        )
        return feasible & ((s.gap > tolerance) | off_plane) & (s.k < max_iter)

    measure = _fista_measure(gap)
    step = functools.partial(_step, matvec=matvec, measure=measure, b=b, a=a, mu=mu)
    s = restarted(x, matvec(x), lipschitz, multipliers, start[3], gap)
    return iterate(step, s, going, stall)


@functools.partial(jax.jit, static_argnames="mixed_precision")
def solve_mincq(
    problem: MinCqProblem,
    mu: ArrayLike,
    q0: ArrayLike | None = None,
    tol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
    mixed_precision: bool = True,
) -> LearnerResult:
    """Solve Program 1 / 2 for one margin ``mu``: the jittable, vmappable core of
    :func:`pacbound.solvers.mincq`.

    No validation: an unrealizable ``mu`` gives ``q`` full of NaN and ``converged = False``.

    Args:
      problem: from :func:`pacbound._src.solvers.mincq_problem`.
      mu: the first moment of the margin to reach (a traced scalar).
      q0: warm start, a distribution over the ``2n`` columns of ``[H, -H]`` (e.g. a previous
        result's ``q``); its vote is projected onto the constraints first. Default: uniform.
      tol: stop once the duality gap on ``mu2`` is ``<= tol * mu2 + atol``; default ``1e-6``
        in float64, ``1e-5`` in float32 (never below the gap's rounding level).
      atol: absolute part of that tolerance. Program 1's objective is ``(mu2 - c0) / 4`` with
        ``c0 = 1^T M 1 / n^2``, so ``atol = 4 eps |objective|`` asks for a relative accuracy
        ``eps`` on it, a far weaker request than ``tol`` when ``mu`` is small.
      max_iter: iteration cap (traced).
      mixed_precision: in float64, iterate in float32 first, down to that precision's gap
        floor, then finish in float64; the final test is always the float64 gap (static).

    Returns:
      :class:`~pacbound.solvers.LearnerResult` (see
      :func:`~pacbound._src.learning.mincq_gap.certified_result`): ``steps`` the FISTA iterations
      (one product with ``M`` each), ``info`` a :class:`~pacbound._src.solvers.MinCqInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.mincq_gap import mincq_problem
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = solve_mincq(mincq_problem(H, y), 0.2)  # no checks: mincq's jittable core
      >>> round(float(jnp.mean(y * (H @ r.weights))), 4), bool(r.converged)
      (0.2, True)
    """
    dtype, n = problem.first_moments.dtype, problem.first_moments.shape[0]
    mu = jnp.asarray(mu, dtype)
    tol = jnp.asarray(default_tol(dtype) if tol is None else tol, dtype)
    a = problem.first_moments / n
    q0 = jnp.full(2 * n, 1 / (2 * n), dtype) if q0 is None else jnp.asarray(q0, dtype)
    u0 = n * (q0[:n] - q0[n:])  # the vote's weights, n (q_j - q_{j+n}) = 2 n Q_j - 1
    feasible = box_hyperplane_feasible(a, mu, -1.0, 1.0)
    phases = [problem]
    if mixed_precision and dtype == jnp.float64:
        phases.insert(0, MinCqProblem(*(t.astype(jnp.float32) for t in problem)))
    # (x, L, multipliers, k), computed once per vmap; each phase starts where the last stopped
    start: tuple[Any, ...] = (project(u0, a, mu), initial_lipschitz(phases[0]), jnp.zeros(2), 0)
    for i, phase in enumerate(phases):
        stall = STALL_ITERATIONS if i + 1 < len(phases) else np.iinfo(np.int32).max
        s = fista_phase(phase, mu, start, tol, atol, max_iter, feasible, stall)
        start = (s.x, s.lipschitz, s.prox_state, s.k)
    multiplier, atol = s.lipschitz * s.prox_state[0], jnp.asarray(atol, dtype)
    return certified_result(problem, mu, s.x, multiplier, s.k, tol, atol, feasible)
