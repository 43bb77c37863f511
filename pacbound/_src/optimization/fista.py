"""Restarted FISTA and the power iteration: the one accelerated projected-gradient method.

Minimizes a convex quadratic ``f(x) = 1/2 x^T P x + r(x)`` (``r`` linear, or handled by the
prox) over a convex set ``X`` with a cheap projection or prox. Used by the restricted masters of
CqBoost and MDBoost (:mod:`pacbound._src.optimization.simplex_qp`: ``X`` the simplex ∩ a halfspace)
and by MinCq (:mod:`pacbound._src.learning.mincq_fista`: ``X`` a box ∩ a hyperplane, the prox in a
rank-one metric). One step (:func:`fista_step`) is FISTA's (Beck & Teboulle 2009, SIAM J.
Imaging Sci. 2(1), Algorithm FISTA) with O'Donoghue & Candès' gradient restart (Found. Comput.
Math. 15, 2015, §3.2):

.. math:: x_{k+1} = \\mathrm{prox}_{X}\\big(y_k - \\nabla f(y_k) / L\\big), \\qquad
          t_{k+1} = \\frac{1 + \\sqrt{1 + 4 t_k^2}}{2}, \\qquad
          y_{k+1} = x_{k+1} + \\frac{t_k - 1}{t_{k+1}} (x_{k+1} - x_k),

with the momentum dropped (``t_{k+1} = 1``, ``y_{k+1} = x_{k+1}``) when
``(y_k - x_{k+1})^T (x_{k+1} - x_k) > 0`` (the step went against the gradient mapping) and when
the step met more curvature than ``L``: the curvature along ``d = x_{k+1} - y_k``,
``c = d^T \\nabla^2 f d / ||d||^2``, comes free from the products ``P x_{k+1}`` and ``P y_k``
that every step keeps (``P y`` is extrapolated as ``y`` is), and ``L`` is raised to
``growth * c`` whenever ``c > L``. The first ``L`` is a Rayleigh quotient of the largest
eigenvalue (:func:`largest_eigenvalue`, never above it), so it only ever needs raising.

* :class:`FistaState`, :func:`fista_start`, :func:`fista_step`: the iteration;
* :func:`iterate`: the ``lax.while_loop`` over steps, with the float32 stall counter
  (:func:`counting_stalls`, :data:`STALL_ITERATIONS`);
* :func:`largest_eigenvalue`: the power iteration, optionally on ``A - b b^T``;
* :func:`fused_dot`: the inner product the steps use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

__all__ = [
    "STALL_ITERATIONS",
    "FistaState",
    "counting_stalls",
    "fista_start",
    "fista_step",
    "fused_dot",
    "iterate",
    "largest_eigenvalue",
]

STALL_ITERATIONS = 300  # float32 solves end when the best gap has not dropped 0.1% so long


def fused_dot(u: jax.Array, v: jax.Array) -> jax.Array:
    """``u^T v`` as a fused reduction (under ``vmap`` a batched ``dot`` is a loop of calls).

    Example:
      >>> import jax.numpy as jnp
      >>> float(fused_dot(jnp.array([1., 2.]), jnp.array([3., 4.])))
      11.0
    """
    return jnp.sum(u * v)


class FistaState(NamedTuple):
    """The state of restarted FISTA (:func:`fista_step`).

    Attributes:
      x: the iterate ``x_k`` (feasible: the output of the last prox).
      px: ``P x_k``, its product with the quadratic form.
      y: the extrapolated point ``y_k``.
      py: ``P y_k``.
      t: the momentum counter ``t_k`` (1 after a restart).
      lipschitz: ``L``, the current step-size constant (the step is ``1 / L``).
      prox_state: what the prox carries from one step to the next (its multipliers, as a warm
        start), any pytree.
      gap: the caller's optimality measure at ``x`` (a certified duality gap), which stops the
        iteration and drives the stall counter.
      gap_info: what that measure returns beside the gap (any pytree).
      k: int32, the steps taken.
    """

    x: jax.Array
    px: jax.Array
    y: jax.Array
    py: jax.Array
    t: jax.Array
    lipschitz: jax.Array
    prox_state: Any
    gap: jax.Array
    gap_info: Any
    k: jax.Array


def fista_start(
    x: jax.Array,
    px: jax.Array,
    lipschitz: ArrayLike,
    prox_state: Any,
    measured: tuple[jax.Array, Any],
    k: ArrayLike = 0,
) -> FistaState:
    """A state at the feasible ``x`` with no momentum (``y = x``, ``t = 1``).

    Args:
      x: the starting point; px: ``P x``.
      lipschitz: the step-size constant ``L``.
      prox_state: the prox's warm start.
      measured: ``(gap, gap_info)`` at ``x`` (the caller's measure).
      k: the steps already taken (a later phase of one solve goes on counting).

    Example:
      >>> import jax.numpy as jnp
      >>> s = fista_start(jnp.zeros(2), jnp.zeros(2), 2.0, None, (jnp.float32(1.0), None))
      >>> float(s.t), bool(jnp.all(s.y == s.x)), float(s.gap), int(s.k)
      (1.0, True, 1.0, 0)
    """
    gap, gap_info = measured
    one, lipschitz = jnp.ones((), x.dtype), jnp.asarray(lipschitz, x.dtype)
    k = jnp.asarray(k, jnp.int32)
    return FistaState(x, px, x, px, one, lipschitz, prox_state, gap, gap_info, k)


def fista_step(
    s: FistaState,
    *,
    gradient: Callable,
    prox: Callable,
    product: Callable,
    curvature: Callable,
    measure: Callable,
    growth: float,
) -> FistaState:
    """One step of FISTA with gradient restart and an adaptive ``L`` (see the module docstring).

    Args:
      s: the state.
      gradient: ``(y, P y) -> grad f(y)`` (from the tracked product: no product with ``P``).
      prox: ``(z, s) -> (x, prox_state)``: the projection (or prox, in units of ``1 / L`` =
        ``s.lipschitz``) of ``z = y - grad f(y) / L``, warm-started from ``s``.
      product: ``x -> P x`` (the step's one product with the quadratic form).
      curvature: ``(d, P d) -> d^T (Hessian of the smooth part) d``; FISTA compares it, divided
        by ``||d||^2``, with ``L``.
      measure: ``(x, P x, prox_state, L) -> (gap, gap_info)`` at the new iterate (``L`` the step's).
      growth: ``L`` becomes ``growth * curvature`` when a step meets more than ``L``.

    Returns:
      the next :class:`FistaState`.

    Example:
      >>> import jax.numpy as jnp
      >>> c = jnp.array([-2., 2.])  # min ||x||^2 + c^T x over [0, 1]^2 (P = 2 I): x = (1, 0)
      >>> gap = lambda x, px: jnp.linalg.norm(x - jnp.clip(x - px - c, 0, 1))
      >>> kw = dict(gradient=lambda y, py: py + c, prox=lambda z, s: (jnp.clip(z, 0, 1), None),
      ...           product=lambda x: 2 * x, curvature=lambda d, pd: d @ pd,
      ...           measure=lambda x, px, ps, L: (gap(x, px), None), growth=1.5)
      >>> s = fista_step(fista_start(jnp.zeros(2), jnp.zeros(2), 2.0, None, (1.0, None)), **kw)
      >>> s.x.tolist(), float(s.gap), int(s.k)  # L = 2 is P's: one projected step solves it
      ([1.0, 0.0], 0.0, 1)
    """
    x, prox_state = prox(s.y - (1 / s.lipschitz) * gradient(s.y, s.py), s)
    px = product(x)
    d = x - s.y
    curv = curvature(d, px - s.py) / jnp.maximum(fused_dot(d, d), jnp.finfo(d.dtype).tiny)
    too_long = curv > s.lipschitz
    restart = too_long | (fused_dot(s.y - x, x - s.x) > 0)
    t_next = (1 + jnp.sqrt(1 + 4 * s.t**2)) / 2
    momentum = jnp.where(restart, 0, (s.t - 1) / t_next)
    gap, gap_info = measure(x, px, prox_state, s.lipschitz)
    return FistaState(
        x, px, x + momentum * (x - s.x), px + momentum * (px - s.px),
        jnp.where(restart, jnp.ones_like(s.t), t_next),
        jnp.where(too_long, growth * curv, s.lipschitz), prox_state, gap, gap_info, s.k + 1,
    )  # fmt: skip


def counting_stalls(step: Callable) -> Callable:
    """``step`` (on a state with a ``gap``) as a ``lax.while_loop`` body on ``(state, best gap,
    steps since the best gap last dropped by 0.1%)``, for loops that stop after
    :data:`STALL_ITERATIONS` such steps; start it from ``(state, state.gap, 0)``.

    Example:
      >>> import jax.numpy as jnp
      >>> halve = lambda s: s._replace(gap=s.gap / 2, k=s.k + 1)  # a step that always improves
      >>> s0 = fista_start(jnp.zeros(2), jnp.zeros(2), 1.0, None, (jnp.float32(1.0), None))
      >>> s, best, stalled = counting_stalls(halve)((s0, s0.gap, 3))
      >>> float(best), int(stalled)  # the best gap dropped: the stall count restarts
      (0.5, 0)
    """

    def counted(carry):
        s, best, stalled = carry
        s = step(s)
        better = s.gap < (1 - 1e-3) * best
        return s, jnp.where(better, s.gap, best), jnp.where(better, 0, stalled + 1)

    return counted


def iterate(step: Callable, state: FistaState, going: Callable, stall: int) -> FistaState:
    """``state = step(state)`` while ``going(state)`` and the best gap dropped by 0.1% within
    the last ``stall`` steps (:func:`counting_stalls`; in float32 a gap can sit above its
    estimated rounding level, where more steps change nothing), in a ``lax.while_loop``.

    Example:
      >>> import functools, jax.numpy as jnp
      >>> c = jnp.array([-2., 2.])  # min ||x||^2 + c^T x over [0, 1]^2 (P = 2 I): x = (1, 0)
      >>> gap = lambda x, px: jnp.linalg.norm(x - jnp.clip(x - px - c, 0, 1))
      >>> step = functools.partial(fista_step, gradient=lambda y, py: py + c,
      ...     prox=lambda z, s: (jnp.clip(z, 0, 1), None), product=lambda x: 2 * x,
      ...     curvature=lambda d, pd: d @ pd, growth=1.5,
      ...     measure=lambda x, px, ps, L: (gap(x, px), None))
      >>> x0 = jnp.zeros(2)
      >>> start = fista_start(x0, x0, 20.0, None, (gap(x0, x0), None))
      >>> s = iterate(step, start, lambda s: s.gap > 1e-4, 20)  # L = 20: short steps
      >>> [round(float(v), 3) for v in s.x], bool(s.gap <= 1e-4), int(s.k) > 1
      ([1.0, 0.0], True, True)
    """

    def cond(carry):
        s, _, stalled = carry
        return going(s) & (stalled < stall)

    return lax.while_loop(cond, counting_stalls(step), (state, state.gap, 0))[0]


def largest_eigenvalue(
    matvec: Callable,
    v0: jax.Array,
    *,
    rank_one: jax.Array | None = None,
    tol: float | None = None,
    max_iter: int = 30,
) -> jax.Array:
    """The largest eigenvalue of a positive semi-definite ``A`` (or of ``A - b b^T``) by power
    iteration: ``v <- A v / ||A v||`` from ``v0``, returning the Rayleigh quotient
    ``v^T A v`` (``v`` normalized), never above the eigenvalue, floored at 0.

    Args:
      matvec: ``v -> A v``.
      v0: the starting vector (not orthogonal to the top eigenvector).
      rank_one: ``b``: the iteration runs on ``A - b b^T`` (the deflated operator).
      tol: stop once the quotient moves by ``<= tol`` relative (a ``lax.while_loop``);
        ``None``: exactly ``max_iter`` products (a ``lax.fori_loop``, whose trip count stays
        unbatched under ``jax.vmap``).
      max_iter: products with ``A`` at most (static, or traced when ``tol`` is given).

    Example:
      >>> import jax.numpy as jnp
      >>> A = jnp.array([[3., 0.], [0., 1.]])
      >>> round(float(largest_eigenvalue(lambda v: A @ v, jnp.ones(2))), 4)
      3.0
      >>> r = jnp.array([1.5, 0.])  # A - r r^T = diag(0.75, 1)
      >>> round(float(largest_eigenvalue(lambda v: A @ v, jnp.ones(2), rank_one=r)), 4)
      1.0
    """

    def deflated(v):
        return matvec(v) if rank_one is None else matvec(v) - rank_one * (rank_one @ v)

    def body(s):
        v, _, quotient, k = s
        w = deflated(v)
        return w / jnp.maximum(jnp.linalg.norm(w), jnp.finfo(w.dtype).tiny), quotient, v @ w, k + 1

    def cond(s):
        _, old, quotient, k = s
        return (k < max_iter) & (jnp.abs(quotient - old) > tol * quotient)

    init = (v0 / jnp.linalg.norm(v0), jnp.zeros((), v0.dtype), -jnp.ones((), v0.dtype), 0)
    if tol is None:
        quotient = lax.fori_loop(0, max_iter, lambda _, s: body(s), init)[2]
    else:
        quotient = lax.while_loop(cond, body, init)[2]
    return jnp.maximum(quotient, 0)
