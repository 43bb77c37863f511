"""Euclidean projection onto a box intersected with a hyperplane, for any sign of the normal.

MinCq (laviolette2011 Program 1) keeps its weights in a box, ``0 <= Q_i <= 1/n``, on the
hyperplane ``m_S^T Q = c`` that fixes the first moment of the margin; the entries of ``m_S``
(the voters' mean margins, Eq. (2)) have both signs. The projection

.. math::

    P(v) = \\operatorname{argmin}_x \\tfrac12 \\|x - v\\|_2^2 \\quad \\text{s.t.} \\quad
    l \\le x \\le u, \\quad a^\\top x = c

has, by its KKT conditions, the form ``x(lam) = clip(v - lam * a, l, u)`` where the multiplier
``lam`` is a root of ``g(lam) = a^T x(lam) - c``. Every term ``a_i clip(v_i - lam a_i, l_i, u_i)``
is non-increasing in ``lam`` whatever the sign of ``a_i`` (it is constant outside the interval
between its two breakpoints ``(v_i - l_i) / a_i`` and ``(v_i - u_i) / a_i`` and has slope
``-a_i^2`` inside), so ``g`` is non-increasing and piecewise linear. We sort the ``2n``
breakpoints, accumulate the slopes to locate the segment holding the root, then solve that
segment's linear equation from the voters it leaves free: exact up to rounding, ``O(n log n)``,
no iteration count to tune. Its derivative (a ``jax.custom_jvp``) is the implicit one on the free
set ``F = {l < x < u}``: ``dx_F = dv_F - dlam a_F - lam da_F`` with ``dlam`` keeping ``a^T x = c``.

A problem with ``c`` outside ``[min a^T x, max a^T x]`` over the box (or with ``l > u``) is
infeasible; :func:`box_hyperplane_projection` flags it and :func:`project_box_hyperplane` returns
NaN for it, never a point that silently violates the constraint.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

__all__ = [
    "BoxHyperplaneProjection",
    "RankOneProx",
    "box_hyperplane_feasible",
    "box_hyperplane_projection",
    "box_hyperplane_rank_one_prox",
    "project_box_hyperplane",
]


class BoxHyperplaneProjection(NamedTuple):
    """Result of :func:`box_hyperplane_projection`.

    Attributes:
      x: the projection; when infeasible, the point of the box whose ``a^T x`` is closest to
        ``c`` and, among those, closest to ``v``.
      multiplier: ``lam`` with ``x = clip(v - lam * a, lower, upper)``.
      feasible: whether ``lower <= upper`` and ``c`` lies in the range of ``a^T x`` on the box
        (up to a few ulps of ``sum_i |a_i| max(|l_i|, |u_i|)``).
    """

    x: jax.Array
    multiplier: jax.Array
    feasible: jax.Array


def _breakpoints(v, a, lower, upper):
    """Interval ``[start_i, stop_i]`` of multipliers on which coordinate ``i`` is free."""
    nonzero = a != 0
    inv_a = jnp.where(nonzero, 1 / jnp.where(nonzero, a, 1), 0)
    t_lower, t_upper = (v - lower) * inv_a, (v - upper) * inv_a
    return jnp.minimum(t_lower, t_upper), jnp.maximum(t_lower, t_upper)


def _solve_multiplier(v, a, c, lower, upper):
    """Root of the non-increasing piecewise-linear ``g(lam) = a^T clip(v - lam a, l, u) - c``."""
    start, stop = _breakpoints(v, a, lower, upper)
    knots = jnp.concatenate([start, stop])
    order = jnp.argsort(knots)
    knots = knots[order]
    slope = jnp.minimum(jnp.cumsum(jnp.concatenate([-a * a, a * a])[order]), 0)
    g_max = jnp.sum(jnp.maximum(a * lower, a * upper))  # value of a^T x left of every knot
    steps = slope[:-1] * jnp.diff(knots)
    g_knots = g_max + jnp.concatenate([jnp.zeros((1,), v.dtype), jnp.cumsum(steps)])
    j = jnp.clip(jnp.sum(g_knots >= c) - 1, 0, knots.shape[0] - 1)
    left = knots[j]
    right = jnp.where(j + 1 < knots.shape[0], knots[jnp.minimum(j + 1, knots.shape[0] - 1)], left)
    # Solve the segment's linear equation exactly from the coordinates it leaves free.
    free = (start <= left) & (stop >= right) & (a != 0) & (right > left)
    x_mid = jnp.clip(v - 0.5 * (left + right) * a, lower, upper)
    den = jnp.sum(jnp.where(free, a * a, 0))
    num = jnp.sum(jnp.where(free, a * v, a * x_mid)) - c
    on_segment = num / jnp.where(den > 0, den, 1)
    lam = jnp.where(den > 0, on_segment, left)
    # Outside the range of g (infeasible c): the extreme knot, i.e. the closest face.
    return jnp.where(c >= g_max, knots[0], jnp.where(c <= g_knots[-1], knots[-1], lam))


@jax.custom_jvp
def _project(v, a, c, lower, upper):
    lam = _solve_multiplier(v, a, c, lower, upper)
    return jnp.clip(v - lam * a, lower, upper), lam


@_project.defjvp
def _project_jvp(primals, tangents):
    _, a, _, lower, upper = primals
    dv, da, dc, dlower, dupper = tangents
    x, lam = _project(*primals)
    free = (x > lower) & (x < upper)
    d_bound = jnp.where(x <= lower, dlower, dupper)
    # Differentiate a^T x = c with x_F = v_F - lam a_F and x_B on its bound.
    num = jnp.sum(jnp.where(free, a * (dv - lam * da), a * d_bound)) + jnp.dot(da, x) - dc
    den = jnp.sum(jnp.where(free, a * a, 0))
    d_lam = jnp.where(den > 0, num / jnp.where(den > 0, den, 1), 0)
    dx = jnp.where(free, dv - d_lam * a - lam * da, d_bound)
    return (x, lam), (dx, d_lam)


def box_hyperplane_feasible(
    a: jax.Array | np.ndarray, c: ArrayLike, lower: ArrayLike, upper: ArrayLike
) -> jax.Array:
    """Whether ``{lower <= x <= upper, a^T x = c}`` is non-empty (up to a few ulps of
    ``sum_i |a_i| max(|l_i|, |u_i|)``): ``l <= u`` and ``c`` between ``min`` and ``max`` of
    ``a^T x`` over the box.

    Example:
      >>> import jax.numpy as jnp
      >>> a = jnp.array([1.0, 1.0])  # a^T x over [0, 1]^2 spans [0, 2]
      >>> bool(box_hyperplane_feasible(a, 1.5, 0.0, 1.0)), bool(box_hyperplane_feasible(a, 3, 0, 1))
      (True, False)
    """
    lo = jnp.sum(jnp.minimum(a * lower, a * upper))
    hi = jnp.sum(jnp.maximum(a * lower, a * upper))
    scale = jnp.sum(jnp.abs(a) * jnp.maximum(jnp.abs(lower), jnp.abs(upper)))
    slack = 16 * jnp.finfo(a.dtype).eps * scale
    ordered = jnp.all(jnp.less_equal(lower, upper))
    return ordered & jnp.greater_equal(c, lo - slack) & jnp.less_equal(c, hi + slack)


@jax.jit
def box_hyperplane_projection(
    v: ArrayLike, a: ArrayLike, c: ArrayLike, lower: ArrayLike, upper: ArrayLike
) -> BoxHyperplaneProjection:
    """Project ``v`` onto ``{x : lower <= x <= upper, a^T x = c}``, with its multiplier.

    .. math::

        x^\\star = \\operatorname{clip}(v - \\lambda^\\star a, l, u), \\qquad
        a^\\top x^\\star = c,

    for any signs of the entries of ``a`` (zero entries included). Jittable and vmappable;
    differentiable in every argument by a ``custom_jvp`` on the free set ``l < x < u``.

    Args:
      v: point to project, shape ``(n,)``.
      a: normal of the hyperplane, shape ``(n,)``, any signs.
      c: offset of the hyperplane, a scalar.
      lower: lower bounds, scalar or ``(n,)``.
      upper: upper bounds, scalar or ``(n,)``.

    Returns:
      :class:`BoxHyperplaneProjection` ``(x, multiplier, feasible)``.

    Example:
      >>> import jax.numpy as jnp
      >>> p = box_hyperplane_projection(jnp.zeros(3), jnp.array([1.0, -1.0, 2.0]), 1.0, 0.0, 1.0)
      >>> [round(float(t), 6) for t in (*p.x, p.multiplier)], bool(p.feasible)
      ([0.2, 0.0, 0.4, -0.2], True)
    """
    dtype = jnp.result_type(v, a, c, lower, upper, jnp.float32)
    v, a = jnp.asarray(v, dtype), jnp.asarray(a, dtype)
    c = jnp.asarray(c, dtype)
    lower = jnp.broadcast_to(jnp.asarray(lower, dtype), v.shape)
    upper = jnp.broadcast_to(jnp.asarray(upper, dtype), v.shape)
    x, lam = _project(v, a, c, lower, upper)
    return BoxHyperplaneProjection(x, lam, box_hyperplane_feasible(a, c, lower, upper))


@jax.jit
def project_box_hyperplane(
    v: ArrayLike, a: ArrayLike, c: ArrayLike, lower: ArrayLike, upper: ArrayLike
) -> jax.Array:
    """Euclidean projection of ``v`` onto ``{lower <= x <= upper, a^T x = c}``, any signs of ``a``.

    The ``x`` of :func:`box_hyperplane_projection`; all NaN when the set is empty, so an
    infeasible problem is reported rather than answered with a point off the constraints.

    Example:
      >>> import jax.numpy as jnp
      >>> a = jnp.array([1.0, -1.0, 2.0])
      >>> [round(float(t), 4) for t in project_box_hyperplane(jnp.zeros(3), a, 1.0, 0.0, 1.0)]
      [0.2, 0.0, 0.4]
      >>> bool(jnp.all(jnp.isnan(project_box_hyperplane(jnp.zeros(3), a, 5.0, 0.0, 1.0))))  # empty
      True
    """
    p = box_hyperplane_projection(v, a, c, lower, upper)
    return jnp.where(p.feasible, p.x, jnp.nan)


class RankOneProx(NamedTuple):
    """Result of :func:`box_hyperplane_rank_one_prox`.

    Attributes:
      x: the minimizer, ``clip(v - multiplier * a - rank_one_multiplier * b, lower, upper)``.
      multiplier: ``lam``, the multiplier of ``a^T x = c``.
      rank_one_multiplier: ``s = kappa * b^T x``.
      steps: Newton steps taken on the two-dimensional dual.
    """

    x: jax.Array
    multiplier: jax.Array
    rank_one_multiplier: jax.Array
    steps: jax.Array


def _dual_parts(v, a, b, kappa, c, lower, upper, lam, s):
    """Concave dual ``D(lam, s)``, its gradient, free set, at ``x = clip(v - lam a - s b)``."""
    w = v - lam * a - s * b
    x = jnp.clip(w, lower, upper)
    value = jnp.sum(0.5 * (x - v) ** 2 + (lam * a + s * b) * x) - s * s / (2 * kappa) - lam * c
    grad = jnp.stack([jnp.sum(a * x) - c, jnp.sum(b * x) - s / kappa])
    return x, value, grad, (w > lower) & (w < upper)


def _newton_direction(a, b, kappa, grad, free):
    """``J^{-1} grad`` with ``J = -Hessian of D`` on the free set (regularized when it is empty)."""
    aa = jnp.sum(jnp.where(free, a * a, 0)) + 1e-9 * jnp.mean(a * a)
    ab = jnp.sum(jnp.where(free, a * b, 0))
    bb = jnp.sum(jnp.where(free, b * b, 0)) + 1 / kappa
    det = aa * bb - ab * ab
    det = jnp.where(det > 0, det, aa * bb)
    return jnp.stack([bb * grad[0] - ab * grad[1], aa * grad[1] - ab * grad[0]]) / det


@functools.partial(jax.jit, static_argnames=("max_steps", "plain_steps"))
def box_hyperplane_rank_one_prox(
    v: ArrayLike,
    a: ArrayLike,
    c: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    b: ArrayLike,
    kappa: ArrayLike,
    init: tuple[ArrayLike, ArrayLike] = (0.0, 0.0),
    max_steps: int = 50,
    plain_steps: int = 2,
) -> RankOneProx:
    """Minimize ``1/2 ||x - v||^2 + kappa/2 (b^T x)^2`` over ``{lower <= x <= upper, a^T x = c}``.

    The projection onto the box ∩ hyperplane in the metric ``I + kappa b b^T``. By duality
    (``kappa/2 t^2 = max_s s t - s^2 / (2 kappa)``) the minimizer is
    ``x = clip(v - lam a - s b, lower, upper)`` where ``(lam, s)`` maximizes the concave,
    piecewise-quadratic

    .. math:: D(\\lambda, s) = \\min_{l \\le x \\le u} \\tfrac12 \\|x - v\\|^2
              + (\\lambda a + s b)^\\top x - \\frac{s^2}{2\\kappa} - \\lambda c,

    whose gradient is ``(a^T x - c, b^T x - s / kappa)``. Newton on ``D`` ends exactly once the
    free set is right; warm starts (``init``) from a nearby problem take one or two steps. The
    first ``plain_steps`` are undamped and straight-line (each kept only if it does not lower
    ``D``), so a warm-started call runs no loop at all (under ``jax.vmap`` a loop costs every
    lane the slowest lane's trips); damped Newton (Armijo backtracking) then finishes inside a
    ``lax.while_loop`` if needed. Feasibility is the caller's business (see
    :func:`box_hyperplane_projection`).

    Args:
      v, a, c, lower, upper: as in :func:`box_hyperplane_projection`.
      b: direction of the rank-one term, ``(n,)``.
      kappa: its weight, ``> 0``.
      init: starting ``(multiplier, rank_one_multiplier)``.
      max_steps: Newton step cap (static).
      plain_steps: loop-free steps taken before the damped loop (static).

    Returns:
      :class:`RankOneProx`.

    Example:
      >>> import jax.numpy as jnp
      >>> v, a = jnp.array([0.9, 0.1, 0.0]), jnp.ones(3)
      >>> p = box_hyperplane_rank_one_prox(v, a, 1.0, 0.0, 1.0, jnp.zeros(3), 0.0)  # kappa = 0
      >>> [round(float(t), 4) for t in p.x]  # the plain projection
      [0.9, 0.1, 0.0]
      >>> p = box_hyperplane_rank_one_prox(v, a, 1.0, 0.0, 1.0, jnp.array([1., 0., 0.]), 10.0)
      >>> [round(float(t), 3) for t in p.x], round(float(p.x.sum()), 4)  # x_0 penalized
      ([0.117, 0.491, 0.391], 1.0)
    """
    dtype = jnp.result_type(v, a, c, b, kappa, lower, upper, jnp.float32)
    v, a, b = (jnp.asarray(t, dtype) for t in (v, a, b))
    c, kappa = jnp.asarray(c, dtype), jnp.asarray(kappa, dtype)
    lower = jnp.broadcast_to(jnp.asarray(lower, dtype), v.shape)
    upper = jnp.broadcast_to(jnp.asarray(upper, dtype), v.shape)
    parts = functools.partial(_dual_parts, v, a, b, kappa, c, lower, upper)
    tol = 8 * jnp.finfo(dtype).eps

    def at(lam, s):  # (lam, s, x, D, grad D, free set)
        return (lam, s, *parts(lam, s))

    def unconverged(state):
        _, s, x, _, grad, _, k = state
        x = jnp.abs(x)
        scale = jnp.stack([jnp.sum(jnp.abs(a) * x) + jnp.abs(c), jnp.sum(jnp.abs(b) * x)])
        scale = scale + jnp.stack([0, jnp.abs(s) / kappa])
        return (k < max_steps) & jnp.any(jnp.abs(grad) > tol * scale)

    def newton_step(state):
        lam, s, _, value, grad, free, k = state
        step = _newton_direction(a, b, kappa, grad, free)
        slope = 1e-4 * jnp.sum(grad * step)

        def backtracking(search):  # Armijo; a while loop, so vmap pays only for actual halvings
            t, candidate = search
            return (t > 2.0**-30) & (candidate[3] < value + t * slope - tol * jnp.abs(value))

        def halve(search):
            t = search[0] / 2
            return t, at(lam + t * step[0], s + t * step[1])

        full = at(lam + step[0], s + step[1])
        _, candidate = lax.while_loop(backtracking, halve, (jnp.ones((), dtype), full))
        return (*candidate, k + 1)

    def plain_newton_step(state):  # the Newton step if it does not lower D, else an ascent step
        lam, s, _, value, grad, free, k = state
        step = _newton_direction(a, b, kappa, grad, free)
        newton = at(lam + step[0], s + step[1])
        # D's gradient is Lipschitz with constant <= |a|^2 + |b|^2 + 1/kappa: a safe ascent step
        ascent = grad / (jnp.sum(a * a) + jnp.sum(b * b) + 1 / kappa)
        safe = at(lam + ascent[0], s + ascent[1])
        take_newton = newton[3] >= value - tol * jnp.abs(value)
        candidate = jax.tree.map(lambda n, g: jnp.where(take_newton, n, g), newton, safe)
        move = unconverged(state)
        return jax.tree.map(lambda c, o: jnp.where(move, c, o), (*candidate, k + 1), state)

    lam, s = (jnp.asarray(t, dtype) for t in init)
    state = (*at(lam, s), 0)
    for _ in range(min(plain_steps, max_steps)):
        state = plain_newton_step(state)
    if max_steps > plain_steps:
        state = lax.while_loop(unconverged, newton_step, state)
    return RankOneProx(state[2], state[0], state[1], state[6])
