"""Quadratic programs over the simplex ∩ a halfspace: the masters of CqBoost and MDBoost.

Column generation (roy2016 §5) re-solves a small program over the ``t`` columns selected so
far, kept in a fixed-size buffer (``active`` masks the unused slots, whose weights stay 0).
CqBoost's program (3) (``a = m_S``, ``b = mu``) and MDBoost's (``a = 0``) are both

.. math:: \\min_x \\tfrac12 x^\\top P x + c^\\top x \\quad \\text{s.t.} \\quad
          x \\ge 0, \\quad 1^\\top x = 1, \\quad a^\\top x \\ge b,

solved by :func:`solve_simplex_qp`: restarted FISTA (:mod:`pacbound._src.optimization.fista`, as
MinCq), each step an exact Euclidean projection (:func:`project_simplex_halfspace`), stopping on
a certified Lagrangian (Frank-Wolfe) duality gap. (LPBoost's and CG-Boost's soft-margin masters
use an interior-point method: :mod:`pacbound._src.optimization.interior_point`.)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.optimization import fista

__all__ = ["SimplexQPResult", "project_simplex_halfspace", "solve_simplex_qp"]


def _simplex(z: jax.Array, active: jax.Array) -> jax.Array:
    """Exact projection onto ``{x >= 0, 1^T x = 1, x_j = 0 off active}`` (sort; Held et al.).

    Inactive entries are moved below ``max(z) - 1``, under any shift ``tau``.
    """
    top = jnp.max(jnp.where(active, z, -jnp.inf))
    v = jnp.where(active, z, top - 2)
    u = jnp.sort(v)[::-1]
    k = jnp.arange(1, z.shape[0] + 1, dtype=z.dtype)
    css = jnp.cumsum(u)
    count = jnp.sum(u - (css - 1) / k > 0)  # a prefix of the sorted entries
    tau = (css[count - 1] - 1) / count
    return jnp.where(active, jnp.maximum(v - tau, 0), 0)


def _on_free_set(z, a, b, free, active, halfspace: bool):
    """The KKT point whose free set is ``F``: ``x_F = z_F + lam a_F - tau``, 0 elsewhere.

    ``tau`` gives ``1^T x = 1``; ``lam`` gives ``a^T x = b`` (``halfspace``) or is 0. Returns
    ``(x, lam, slope, ok)`` with ``slope = d(a^T x)/d lam = sum_F a^2 - (sum_F a)^2 / |F|`` and
    ``ok`` when ``F`` is consistent: positive on ``F``, non-positive off it, ``lam >= 0``
    (this is then the exact projection, up to rounding).
    """
    count = jnp.sum(free)
    n = jnp.maximum(count, 1).astype(z.dtype)
    sz, sa = jnp.sum(jnp.where(free, z, 0)), jnp.sum(jnp.where(free, a, 0))
    saa, saz = jnp.sum(jnp.where(free, a * a, 0)), jnp.sum(jnp.where(free, a * z, 0))
    tau0, slope = (sz - 1) / n, saa - sa * sa / n
    lam = (b - saz + tau0 * sa) / jnp.where(slope > 0, slope, 1) if halfspace else 0.0
    v = z + lam * a - (tau0 + lam * sa / n)
    x = jnp.where(free, v, 0)
    ok = (count > 0) & jnp.all(jnp.where(free, v > 0, True))
    ok &= jnp.all(jnp.where(active & ~free, v <= 0, True))
    if halfspace:
        ok &= (slope > 0) & (lam >= 0)
    else:
        ok &= a @ x >= b
    return x, jnp.asarray(lam, z.dtype), jnp.maximum(slope, 0), ok


def _phi_root(z, a, b, active, lam0):
    """Root ``lam > 0`` of the non-decreasing piecewise-linear ``a^T Pi(z + lam a) = b``.

    Called when the simplex projection ``Pi(z)`` has ``a^T x < b``. Each step sorts once
    (:func:`_simplex`), then tries the piece's exact solution (:func:`_on_free_set`); otherwise
    Newton's step inside the bracket, or bisection (doubling while no upper end is known).
    """
    eps = jnp.finfo(z.dtype).eps
    span_a = jnp.max(jnp.where(active, a, -jnp.inf)) - jnp.min(jnp.where(active, a, jnp.inf))
    span_z = jnp.max(jnp.where(active, z, -jnp.inf)) - jnp.min(jnp.where(active, z, jnp.inf))
    jump = (1 + span_z) / jnp.maximum(span_a, jnp.finfo(z.dtype).tiny)  # every mass on max a

    def cond(s):
        lo, hi, _, _, ok, k = s
        return ~ok & (k < 100) & (jnp.isinf(hi) | (hi - lo > 4 * eps * hi))

    def body(s):
        lo, hi, lam, _, _, k = s
        x = _simplex(z + lam * a, active)
        phi = a @ x
        exact, lam_exact, slope, ok = _on_free_set(z, a, b, x > 0, active, True)
        lo, hi = jnp.where(phi < b, lam, lo), jnp.where(phi < b, hi, lam)
        newton = lam + (b - phi) / jnp.where(slope > 0, slope, 1)
        on_bracket = (slope > 0) & (newton > lo) & (newton < hi)
        fallback = jnp.where(jnp.isfinite(hi), (lo + hi) / 2, 2 * lo + jump)
        nxt = jnp.where(ok, lam_exact, jnp.where(on_bracket, newton, fallback))
        return lo, hi, nxt, jnp.where(ok, exact, x), ok, k + 1

    lam = jnp.where(lam0 > 0, lam0, jnp.minimum(jump, 1))
    inf = jnp.asarray(jnp.inf, z.dtype)
    init = (jnp.zeros((), z.dtype), inf, lam, jnp.zeros_like(z), jnp.zeros((), bool), 0)
    _, _, lam, x, ok, _ = lax.while_loop(cond, body, init)
    return jnp.where(ok, x, _simplex(z + lam * a, active)), lam


def project_simplex_halfspace(
    z: ArrayLike,
    a: ArrayLike,
    b: ArrayLike,
    active: ArrayLike,
    lam0: ArrayLike = 0.0,
    free0: ArrayLike | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Project ``z`` onto ``{x >= 0, 1^T x = 1, a^T x >= b, x_j = 0 off active}`` exactly.

    By the KKT conditions ``x = max(z + lam a - tau, 0)`` with ``lam >= 0``: ``lam = 0`` when the
    simplex projection already has ``a^T x >= b``, otherwise the root of ``a^T x(lam) = b``
    (:func:`_phi_root`). Along an iterative solver the free set rarely changes, so the guess
    ``free0`` (the previous iterate's support) is tried first, in ``O(n)``, and the sorting
    search runs only when that guess fails its KKT check (and, under ``vmap``, only while some
    lane needs it). The caller guarantees feasibility (``b <= max_active a``).

    Args:
      z: point ``(n,)``; a: normal ``(n,)``; b: offset (``a = 0, b = 0``: the simplex alone).
      active: ``(n,)`` bool, the coordinates allowed to be non-zero.
      lam0: warm start of the multiplier; free0: guess of the support (bool ``(n,)``).

    Returns:
      ``(x, lam)``.

    Example:
      >>> import jax.numpy as jnp
      >>> z, a, active = jnp.array([0.5, 0.5, 0.0]), jnp.array([1., 0., 0.]), jnp.ones(3, bool)
      >>> x, lam = project_simplex_halfspace(z, a, 0.8, active)  # x_0 >= 0.8
      >>> [round(float(t), 4) for t in x], round(float(lam), 4)
      ([0.8, 0.2, 0.0], 0.6)
    """
    z = jnp.asarray(z)
    a, b = jnp.asarray(a, z.dtype), jnp.asarray(b, z.dtype)
    active = jnp.asarray(active, bool)
    lam0 = jnp.asarray(lam0, z.dtype)
    free0 = active if free0 is None else jnp.asarray(free0, bool) & active
    x_simplex, _, _, ok_simplex = _on_free_set(z, a, b, free0, active, False)
    x_plane, lam_plane, _, ok_plane = _on_free_set(z, a, b, free0, active, True)
    ok_plane &= ~ok_simplex

    # The fallbacks are 0/1-trip loops (under vmap they run only if some lane needs them).
    # Their bodies read z through the carried flag: XLA would otherwise hoist a body that
    # depends on loop invariants only out of the loop, and run it every time.
    def sort_simplex(s):
        x = _simplex(jnp.where(s[2], z, z + 1), active)
        return x, a @ x >= b, jnp.ones((), bool)

    x, inside, _ = lax.while_loop(
        lambda s: ~s[2], sort_simplex, (x_simplex, ok_simplex, ok_simplex | ok_plane)
    )

    def root(s):
        return (*_phi_root(jnp.where(s[2], z, z + 1), a, b, active, lam0), jnp.zeros((), bool))

    need_root = ~inside & ~ok_plane
    init = (x, jnp.zeros((), z.dtype), need_root)
    x_root, lam_root, _ = lax.while_loop(lambda s: s[2], root, init)
    x = jnp.where(inside, x, jnp.where(ok_plane, x_plane, x_root))
    return x, jnp.where(inside, 0, jnp.where(ok_plane, lam_plane, lam_root)).astype(z.dtype)


class SimplexQPResult(NamedTuple):
    """Result of :func:`solve_simplex_qp`.

    Attributes:
      x: the minimizer over the active coordinates (0 elsewhere).
      multiplier: ``beta >= 0``, the halfspace's multiplier: ``g_j - beta a_j >= -nu`` with
        equality where ``x_j > 0`` (``g = P x + c``).
      nu: ``-min_active (g_j - beta a_j)``, the simplex multiplier (roy2016 (5)'s ``nu``).
      gap: certified bound on ``objective(x) - optimum``.
      iterations: FISTA steps.
      converged: ``gap <= rtol * scale`` (plus the rounding level).
      lipschitz: the final step-size constant (warm start for the next solve).
    """

    x: jax.Array
    multiplier: jax.Array
    nu: jax.Array
    gap: jax.Array
    iterations: jax.Array
    converged: jax.Array
    lipschitz: jax.Array


def _lagrangian_gap(x, g, a, b, active, beta_projection):
    """Best of two multipliers of ``g^T x - min_p {g^T p : p in simplex, a^T p >= b}`` bounds.

    For any ``beta >= 0`` the Lagrangian gives the lower bound ``min_j (g_j - beta a_j) +
    beta b`` of that inner LP, so ``g^T x - bound`` bounds ``f(x) - f*`` (convexity).
    """
    free = x > 0
    count = jnp.maximum(jnp.sum(free), 1)
    am = jnp.sum(jnp.where(free, a, 0)) / count
    gm = jnp.sum(jnp.where(free, g, 0)) / count
    var = jnp.sum(jnp.where(free, (a - am) ** 2, 0))
    fit = jnp.sum(jnp.where(free, (a - am) * (g - gm), 0)) / jnp.where(var > 0, var, 1)

    def bound(beta):
        lowest = jnp.min(jnp.where(active, g - beta * a, jnp.inf))
        return g @ x - lowest - beta * b, -lowest

    betas = jnp.maximum(jnp.stack([beta_projection, jnp.where(var > 0, fit, 0)]), 0)
    gaps, nus = jax.vmap(bound)(betas)
    best = jnp.argmin(gaps)
    return gaps[best], betas[best], nus[best]


def _power_start(n: int, dtype) -> jax.Array:
    """The power iteration's start: uniform with a small deterministic perturbation."""
    return jnp.ones(n, dtype) / jnp.sqrt(n) + 0.01 * jnp.sin(jnp.arange(n, dtype=dtype))


def _fista_step(s: fista.FistaState, P, c, a, b, active) -> fista.FistaState:
    """One restarted FISTA step (:func:`~pacbound._src.optimization.fista.fista_step`) on the QP:
    gradient ``P y + c``, the exact projection warm-started from the last multiplier and
    support, the certificate of :func:`_lagrangian_gap` (``gap_info = (beta, nu)``)."""

    def project(z, s):
        return project_simplex_halfspace(z, a, b, active, s.prox_state, s.x > 0)

    def measure(x, px, lam, lipschitz):
        gap, beta, nu = _lagrangian_gap(x, px + c, a, b, active, lipschitz * lam)
        return gap, (beta, nu)

    return fista.fista_step(
        s, gradient=lambda _, py: py + c, prox=project, product=lambda x: P @ x,
        curvature=fista.fused_dot, measure=measure, growth=1.5,
    )  # fmt: skip


def solve_simplex_qp(
    P: ArrayLike,
    c: ArrayLike,
    a: ArrayLike,
    b: ArrayLike,
    active: ArrayLike,
    x0: ArrayLike,
    rtol: ArrayLike,
    max_iter: ArrayLike,
) -> SimplexQPResult:
    """``min 1/2 x^T P x + c^T x`` s.t. ``x >= 0, 1^T x = 1, a^T x >= b`` on ``active``.

    FISTA with gradient restart and an adaptive step (``L`` from a power iteration, raised by
    half again whenever a step meets more curvature), exact projections
    (:func:`project_simplex_halfspace`). Stops when the Lagrangian gap (:func:`_lagrangian_gap`)
    is ``<= rtol (|x^T P x / 2| + |c^T x|)`` plus its rounding level, or after ``max_iter``; in
    float32 also after ``STALL_ITERATIONS`` steps without a 0.1% drop of the best gap (an
    ill-conditioned ``P`` can hold float32's gap above the estimated rounding level, where more
    steps change nothing; ``converged`` then says ``False``).

    Args:
      P: ``(t, t)`` positive semi-definite (rows / columns of inactive slots are ignored).
      c, a: ``(t,)``; ``b`` scalar with ``b <= max_active a`` (``a = 0, b = 0``: no halfspace).
      active: ``(t,)`` bool, the selected columns (at least one).
      x0: feasible warm start (or any point: it is projected first).
      rtol, max_iter: tolerance and iteration cap (traced).

    Example:
      >>> import jax.numpy as jnp
      >>> P, a = 2 * jnp.eye(3), jnp.array([1., 0., 0.])  # min ||x||^2 on the simplex, x_0 >= 0.5
      >>> active, x0 = jnp.ones(3, bool), jnp.full(3, 1 / 3)
      >>> r = solve_simplex_qp(P, jnp.zeros(3), a, 0.5, active, x0, 1e-6, 200)
      >>> [round(float(t), 3) for t in r.x]
      [0.5, 0.25, 0.25]
    """
    P, c, a = (jnp.asarray(t) for t in (P, c, a))
    active = jnp.asarray(active, bool)
    P = jnp.where(active[:, None] & active[None, :], P, 0)
    x, lam = project_simplex_halfspace(jnp.asarray(x0, P.dtype), a, b, active)
    px = P @ x
    start = _power_start(P.shape[0], P.dtype)
    top = fista.largest_eigenvalue(lambda v: P @ v, start, max_iter=31)  # 30 steps, then v^T P v
    lipschitz = 1.01 * jnp.maximum(top, jnp.finfo(P.dtype).tiny)
    gap, beta, nu = _lagrangian_gap(x, px + c, a, b, active, jnp.zeros((), P.dtype))
    init = fista.fista_start(x, px, lipschitz, lam, (gap, (beta, nu)))

    def tolerance(s):
        g = s.px + c
        noise = 4 * x.shape[0] * jnp.finfo(P.dtype).eps * (jnp.abs(g) @ (1 + s.x))
        return rtol * (jnp.abs(s.x @ s.px) / 2 + jnp.abs(c @ s.x)) + noise

    def going(s):
        return (s.gap > tolerance(s)) & (s.k < max_iter)

    stall = fista.STALL_ITERATIONS if P.dtype == jnp.float32 else np.iinfo(np.int32).max
    step = functools.partial(_fista_step, P=P, c=c, a=a, b=b, active=active)
    s = fista.iterate(step, init, going, stall)
    converged = s.gap <= tolerance(s)
    beta, nu = s.gap_info
    return SimplexQPResult(s.x, beta, nu, s.gap, s.k, converged, s.lipschitz)
