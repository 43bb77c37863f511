"""The FISTA core of MinCq / TMinCq (laviolette2011 Programs 1-2): :func:`solve_mincq`.

In the centred weights ``u = 2 n Q - 1`` in ``[-1, 1]^n`` of the voters of ``[H, -H]`` (see
:mod:`pacbound.solvers.mincq`), Program 1 is: minimize ``mu2(u) = u^T M u / n^2`` on the box ∩
hyperplane ``{a^T u = mu}``, ``a = m_S / n``. We run FISTA with O'Donoghue & Candès' gradient
restart inside a ``lax.while_loop`` that stops on a certified duality gap. Each step is an
``optax.sgd`` step of size ``1/L`` on the votes' covariance part ``u^T C u / n^2``
(``M = C + b b^T``, ``b`` the voters' mean outputs) followed by the projection onto the box ∩
hyperplane in the metric ``I + kappa b b^T``
(:func:`pacbound.optimization.projections.box_hyperplane_rank_one_prox`), which takes the rank-one
part ``(b^T u)^2 / n^2`` exactly. For stumps and RBF voters ``b b^T`` carries by far the top
eigenvalue of ``M`` (208 against 27 on wdbc stumps, 640 against 5 on 1 000 synthetic stumps),
so ``L = 2 lmax(C) / n^2`` is that much smaller and FISTA needs about the square root of that
ratio fewer steps. ``L`` comes from a power iteration inside ``jit`` and is raised whenever a
step meets more curvature (a free check: one product with ``M`` per iteration gives the
gradients at both the iterate and the extrapolated point). The prox runs loop-free Newton steps
warm-started from the previous iteration's multipliers (a ``lax.while_loop`` inside the step
costs far more than its trips under ``jax.vmap``). The stopping test is the Lagrangian duality
gap of :mod:`pacbound.solvers.mincq_gap` (at the better of the prox's multiplier and a
least-squares fit on the free set), so ``converged`` certifies
``mu2 - mu2* <= rtol * mu2 + atol`` at the returned point, which is put exactly on the
hyperplane first. In float64 the whole iteration first runs in float32 (``M`` products and the
``O(n)`` work per step cost half as much; under ``jax.vmap`` the latter grows with the lanes)
down to the float32 gap floor; float64 iterations finish and certify.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from jax.typing import ArrayLike

from pacbound.optimization.projections import box_hyperplane_feasible, box_hyperplane_rank_one_prox
from pacbound.optimization.fista import STALL_ITERATIONS, counting_stalls
from pacbound.solvers.mincq_gap import (
    fused_dot,
    gap_measure,
    kkt_residual,
    moment_product,
    project,
)

__all__ = ["MinCqProblem", "MinCqResult", "default_rtol", "solve_mincq"]

PROX_STEPS = 1  # loop-free Newton steps on the prox's dual per FISTA iteration


class MinCqProblem(NamedTuple):
    """The data of Program 1 (or 2), computed once per voter matrix.

    Attributes:
      moment_op: ``M = V^T V / k`` of shape ``(n, n)`` when ``k >= n``; otherwise the factor
        ``V / sqrt(k)`` of shape ``(k, n)`` with ``M = F^T F`` (``V``: the ``(k, n)`` votes on
        the examples of the second moment, labeled ones plus unlabeled ones for TMinCq).
      first_moments: ``m_S = H^T y / m``, the voters' mean margins on the labeled examples.
      mean_votes: ``b = V^T 1 / k``, the voters' mean outputs, so that ``M = C + b b^T`` with
        ``C`` the votes' covariance.
    """

    moment_op: jax.Array
    first_moments: jax.Array
    mean_votes: jax.Array


class MinCqResult(NamedTuple):
    """Solution of Program 1 / 2.

    Attributes:
      q: the quasi-uniform posterior over the ``2n`` columns of ``[H, -H]``: ``(Q, 1/n - Q)``.
      objective: Program 1's objective ``Q^T M Q - A^T Q`` at ``Q``.
      second_moment: ``mu2``, the margin's second moment (``4 objective + 1^T M 1 / n^2``).
      iterations: accelerated projected-gradient iterations taken (one product with ``M`` each).
      duality_gap: certified bound on ``objective - optimal objective``.
      kkt_residual: the largest violation of Program 1's stationarity conditions by the
        gradient of ``mu2`` in ``u`` (0 exactly at the optimum; see ``kkt_residual``).
      converged: ``4 duality_gap <= rtol * mu2 + atol`` (``False`` when ``mu`` is not
        realizable).
    """

    q: jax.Array
    objective: jax.Array
    second_moment: jax.Array
    iterations: jax.Array
    duality_gap: jax.Array
    kkt_residual: jax.Array
    converged: jax.Array


class _State(NamedTuple):
    x: jax.Array  # iterate u_k (feasible)
    mx: jax.Array  # M u_k
    y: jax.Array  # extrapolated point
    my: jax.Array  # M y
    t: jax.Array  # FISTA momentum counter
    lipschitz: jax.Array  # current L, for the covariance part
    multipliers: jax.Array  # (lam, s) of the last metric projection (warm start)
    gap: jax.Array  # duality gap of mu2 at x
    noise: jax.Array  # its rounding level
    k: jax.Array


def _largest_eigenvalue(matvec, b, rtol: float = 1e-4, max_iter: int = 300) -> jax.Array:
    """Power iteration for ``lmax(C)``, ``C = M - b b^T``; a Rayleigh quotient, never above it."""
    v = jax.random.normal(jax.random.key(0), b.shape, b.dtype)

    def body(s):
        v, _, lam, k = s
        w = matvec(v) - b * (b @ v)
        return w / jnp.maximum(jnp.linalg.norm(w), jnp.finfo(w.dtype).tiny), lam, v @ w, k + 1

    def cond(s):
        _, old, lam, k = s
        return (k < max_iter) & (jnp.abs(lam - old) > rtol * lam)

    v = v / jnp.linalg.norm(v)
    init = (v, jnp.zeros((), b.dtype), -jnp.ones((), b.dtype), 0)
    return jnp.maximum(lax.while_loop(cond, body, init)[2], 0)


def _fista_step(s: _State, matvec, measure_gap, b, a, mu) -> _State:
    """One restarted FISTA step: optax step on the covariance part, metric projection, momentum."""
    n = a.shape[0]
    grad_y = (2 / n**2) * (s.my - b * fused_dot(b, s.y))  # gradient of u^T C u / n^2
    sgd = optax.sgd(1 / s.lipschitz)
    updates, _ = sgd.update(grad_y, sgd.init(s.y))
    z = optax.apply_updates(s.y, updates)
    kappa = 2 / (n**2 * s.lipschitz)  # the rank-one part (b^T u)^2 / n^2, taken exactly
    init = tuple(s.multipliers)  # Newton on the prox's dual goes on across iterations, loop-free
    prox = box_hyperplane_rank_one_prox(z, a, mu, -1, 1, b, kappa, init, max_steps=PROX_STEPS)
    x, mx = prox.x, matvec(prox.x)
    d = x - s.y
    curv = (
        (2 / n**2)
        * (fused_dot(d, mx - s.my) - fused_dot(b, d) ** 2)
        / jnp.maximum(fused_dot(d, d), jnp.finfo(d.dtype).tiny)
    )
    too_long = curv > s.lipschitz
    restart = too_long | (fused_dot(s.y - x, x - s.x) > 0)
    t_next = (1 + jnp.sqrt(1 + 4 * s.t**2)) / 2
    beta = jnp.where(restart, 0, (s.t - 1) / t_next)
    gap, noise = measure_gap(x, (2 / n**2) * mx, s.lipschitz * prox.multiplier)
    return _State(
        x, mx, x + beta * (x - s.x), mx + beta * (mx - s.mx),
        jnp.where(restart, jnp.ones_like(s.t), t_next),
        jnp.where(too_long, 1.01 * curv, s.lipschitz),
        jnp.stack([prox.multiplier, prox.rank_one_multiplier]), gap, noise, s.k + 1,
    )  # fmt: skip


def default_rtol(dtype) -> float:
    """The default relative gap tolerance: ``1e-6`` in float64, ``1e-5`` in float32."""
    return 1e-6 if dtype == jnp.float64 else 1e-5


def _restarted(x, mx, lipschitz, multipliers, k, duality_gap) -> _State:
    """A FISTA state at ``x`` with no momentum, its gap measured."""
    n, one = x.shape[0], jnp.ones((), x.dtype)
    gap, noise = duality_gap(x, (2 / n**2) * mx, lipschitz * multipliers[0])
    return _State(x, mx, x, mx, one, lipschitz, multipliers, gap, noise, jnp.asarray(k, jnp.int32))


def _phase(problem: MinCqProblem, mu, start, rtol, atol, max_iter, feasible, stall) -> _State:
    """Restarted FISTA in ``problem``'s dtype from ``start = (x, L, multipliers, k)`` until the
    certified gap is met, the cap, or ``stall`` iterations without a 0.1% drop of the best gap
    (in float32 a lane's gap can sit above the estimated rounding floor: the float64 phase then
    takes over)."""
    op, m_s, b = problem
    dtype, n = m_s.dtype, m_s.shape[0]
    mu, rtol, atol = (jnp.asarray(t, dtype) for t in (mu, rtol, atol))
    x, lipschitz, multipliers = (jnp.asarray(t, dtype) for t in start[:3])
    matvec, gap = functools.partial(moment_product, op), gap_measure(problem, mu)
    a, eps = m_s / n, jnp.finfo(dtype).eps

    def unconverged(carry):  # the gap bounds mu2(x) - mu2* for any x in the box: x must be on
        s, _, stalled = carry  # the hyperplane as well
        tolerance = rtol * fused_dot(s.x, s.mx) / n**2 + atol + s.noise
        off_plane = jnp.abs(fused_dot(a, s.x) - mu) > 64 * eps * (
            fused_dot(jnp.abs(a), jnp.abs(s.x)) + mu
        )
        going = (s.k < max_iter) & (stalled < stall)
        return feasible & ((s.gap > tolerance) | off_plane) & going

    step = counting_stalls(lambda s: _fista_step(s, matvec, gap, b, a, mu))
    s = _restarted(x, matvec(x), lipschitz, multipliers, start[3], gap)
    return lax.while_loop(unconverged, step, (s, s.gap, 0))[0]


@functools.partial(jax.jit, static_argnames="mixed_precision")
def solve_mincq(
    problem: MinCqProblem,
    mu: ArrayLike,
    q0: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
    mixed_precision: bool = True,
) -> MinCqResult:
    """Solve Program 1 / 2 for one margin ``mu``: the jittable, vmappable core of
    :func:`pacbound.solvers.mincq`.

    No validation: an unrealizable ``mu`` gives ``q`` full of NaN and ``converged = False``.

    Args:
      problem: from :func:`pacbound.solvers.mincq_problem`.
      mu: the first moment of the margin to reach (a traced scalar).
      q0: warm start, a distribution over the ``2n`` columns of ``[H, -H]`` (e.g. a previous
        result's ``q``); its vote is projected onto the constraints first. Default: uniform.
      rtol: stop once the duality gap on ``mu2`` is ``<= rtol * mu2 + atol``; default ``1e-6``
        in float64, ``1e-5`` in float32 (never below the gap's rounding level).
      atol: absolute part of that tolerance. Program 1's objective is ``(mu2 - c0) / 4`` with
        ``c0 = 1^T M 1 / n^2``, so ``atol = 4 eps |objective|`` asks for a relative accuracy
        ``eps`` on it, a far weaker request than ``rtol`` when ``mu`` is small.
      max_iter: iteration cap (traced).
      mixed_precision: in float64, iterate in float32 first, down to that precision's gap
        floor, then finish in float64; the final test is always the float64 gap (static).

    Returns:
      :class:`MinCqResult`.
    """
    dtype, n = problem.first_moments.dtype, problem.first_moments.shape[0]
    mu = jnp.asarray(mu, dtype)
    rtol = jnp.asarray(default_rtol(dtype) if rtol is None else rtol, dtype)
    a = problem.first_moments / n
    q0 = jnp.full(2 * n, 1 / (2 * n), dtype) if q0 is None else jnp.asarray(q0, dtype)
    u0 = n * (q0[:n] - q0[n:])  # the vote's weights, n (q_j - q_{j+n}) = 2 n Q_j - 1
    feasible = box_hyperplane_feasible(a, mu, -1.0, 1.0)
    phases = [problem]
    if mixed_precision and dtype == jnp.float64:
        phases.insert(0, MinCqProblem(*(t.astype(jnp.float32) for t in problem)))
    op, b = phases[0].moment_op, phases[0].mean_votes
    curvature = _largest_eigenvalue(functools.partial(moment_product, op), b)  # once under vmap
    lipschitz = jnp.maximum(1.01 * (2 / n**2) * curvature, jnp.finfo(op.dtype).tiny)
    start = (project(u0, a, mu), lipschitz, jnp.zeros(2), 0)
    for i, phase in enumerate(phases):
        stall = STALL_ITERATIONS if i + 1 < len(phases) else np.iinfo(np.int32).max
        s = _phase(phase, mu, start, rtol, atol, max_iter, feasible, stall)
        start = (s.x, s.lipschitz, s.multipliers, s.k)
    return _result(s, problem, mu, rtol, jnp.asarray(atol, dtype), feasible)


def _result(s: _State, problem: MinCqProblem, mu, rtol, atol, feasible) -> MinCqResult:
    """The iterate put exactly on the hyperplane, its objective and certified gap."""
    op, m_s, _ = problem
    n = m_s.shape[0]
    a = m_s / n
    x = project(s.x, a, mu)  # the prox's Newton may be a step short
    mx = moment_product(op, x)
    mu2 = (x @ mx) / n**2
    gap, noise = gap_measure(problem, mu)(x, (2 / n**2) * mx, s.lipschitz * s.multipliers[0])
    uniform = jnp.ones_like(x)
    objective = (mu2 - uniform @ moment_product(op, uniform) / n**2) / 4
    Q = (1 + x) / (2 * n)
    q = jnp.where(feasible, jnp.concatenate([Q, 1 / n - Q]), jnp.nan)
    converged = feasible & (gap <= rtol * mu2 + atol + noise)
    kkt = kkt_residual(x, (2 / n**2) * mx, a)
    return MinCqResult(q, objective, mu2, s.k, gap / 4, kkt, converged)
