"""The soft-margin program of LPBoost and CG-Boost, by a dense primal-dual interior-point method.

:func:`solve_soft_margin` solves the restricted master of :mod:`pacbound._src.solvers.lpboost` and
:mod:`pacbound._src.solvers.cgboost`, ``min_{x >= 0} c^T x + rho/2 ||x||^2 + sum_k u_k max(0, 1 -
(K x)_k)``, as ``min c^T x + rho/2 ||x||^2 + u^T xi  s.t.  K x + xi - s = 1, x, xi, s >= 0`` by
Mehrotra's predictor-corrector method (Mehrotra 1992; Nocedal & Wright 2006, Alg. 14.3 and
§16.6), stopping on a certified relative duality gap. The restricted programs are small and
dense (``t <= max_iter`` columns): a step factors one ``t x t`` matrix
``rho I + X^-1 Z + K^T E^-1 K``
(the examples' variables eliminated), and a solve takes 10-25 steps whatever ``u`` (first-order
methods crawl as the soft margin nears the hard margin, ``u`` large).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

__all__ = ["SoftMarginResult", "solve_soft_margin"]


class SoftMarginResult(NamedTuple):
    """Result of :func:`solve_soft_margin`.

    Attributes:
      x: primal weights (0 off ``active``).
      y: dual weights of the examples, in ``[0, u]``; for the LP (``rho = 0``) scaled to be
        exactly dual feasible (``K^T y <= c`` on ``active``).
      primal_objective, dual_objective: the certified bracket of the optimum.
      iterations: interior-point steps.
      converged: ``primal - dual <= rtol max(|primal|, |dual|)`` (plus rounding).
      scale: the mean of ``x`` over its support, the next solve's starting level.
    """

    x: jax.Array
    y: jax.Array
    primal_objective: jax.Array
    dual_objective: jax.Array
    iterations: jax.Array
    converged: jax.Array
    scale: jax.Array


class _Point(NamedTuple):
    """Primal ``x, xi, s``, dual ``z, a`` (``a`` = the examples' ``y``) and ``b = u - a`` (kept
    as a variable: ``u - a`` cancels when ``a`` nears a large ``u``)."""

    x: jax.Array
    xi: jax.Array
    s: jax.Array
    z: jax.Array
    a: jax.Array
    b: jax.Array


class _IpmState(NamedTuple):
    p: _Point
    k: jax.Array
    primal: jax.Array  # certified objectives at p
    dual: jax.Array
    best: jax.Array  # the smallest certified gap so far
    stalls: jax.Array  # steps since the gap last shrank by 10 % (_STALLS after a non-finite step)


class _Problem(NamedTuple):  # K is masked: zero off active columns and live examples
    K: jax.Array
    c: jax.Array
    rho: float
    u: jax.Array
    active: jax.Array  # columns in the program
    live: jax.Array  # examples with u > 0 (the others drop out)


def _div(a, b, mask):
    """``a / b`` on ``mask``, 0 elsewhere (no division by the placeholders)."""
    return jnp.where(mask, a / jnp.where(mask, b, 1), 0)


def _objectives(x, kx, y, K, c, rho, u, active):
    """Primal value at ``x`` and a dual lower bound at ``y`` (scaled feasible for the LP)."""
    primal = c @ x + rho / 2 * (x @ x) + u @ jnp.maximum(1 - kx, 0)
    kty = K.T @ y
    if rho > 0:
        excess = jnp.where(active, jnp.maximum(kty - c, 0), 0)
        return primal, jnp.sum(y) - (excess @ excess) / (2 * rho), y
    ratio = jnp.max(jnp.where(active, kty / c, 0))
    scale = jnp.maximum(ratio, 1)
    return primal, jnp.sum(y) / scale, y / scale


def _products(p: _Point):
    """The complementary products ``x z``, ``xi b``, ``s a`` (0 on masked entries)."""
    return p.x * p.z, p.xi * p.b, p.s * p.a


def _normal_matrix(p: _Point, q: _Problem):
    """The Cholesky factor of ``M = rho I + X^-1 Z + K^T E^-1 K``, ``E = diag(xi / b + s / a)``
    (the Newton system with the examples' variables eliminated; a ``100 eps`` relative ridge
    keeps it definite when columns repeat), ``E^-1`` and ``rho + z / x``."""
    inv_e = _div(1.0, _div(p.xi, p.b, q.live) + _div(p.s, p.a, q.live), q.live)
    d = jnp.where(q.active, q.rho + _div(p.z, p.x, q.active), 1)
    M = q.K.T @ (inv_e[:, None] * q.K) + jnp.diag(d)
    ridge = 100 * jnp.finfo(M.dtype).eps * jnp.diag(M)  # relative: for duplicate columns
    return jax.scipy.linalg.cho_factor(M + jnp.diag(ridge)), inv_e, d


def _direction(p: _Point, q: _Problem, system, targets) -> _Point:
    """The Newton direction for the residuals at ``p`` and the complementarity ``targets``.

    ``dx`` from the normal matrix (one step of iterative refinement), then ``da``, ``dxi``,
    ``ds`` by substitution and ``dz`` from the dual equation ``rho dx - K^T da - dz = -r_d``
    itself: near the optimum ``M`` is ill-conditioned, and the usual ``dz = X^-1 (r - Z dx)``
    lets the dual residual grow back (the certified gap then stalls near ``1e-9``)."""
    K, act, live = q.K, q.active, q.live
    (factor, inv_e, diag), (rxz, rxi, rs) = system, targets
    rp = jnp.where(live, K @ p.x + p.xi - p.s - 1, 0)
    rd = jnp.where(act, q.c + q.rho * p.x - K.T @ p.a - p.z, 0)
    g = -rp - _div(rxi, p.b, live) + _div(rs, p.a, live)
    rhs = jnp.where(act, -rd + _div(rxz, p.x, act) + K.T @ (g * inv_e), 0)
    dx = jnp.where(act, jax.scipy.linalg.cho_solve(factor, rhs), 0)
    residual = jnp.where(act, rhs - K.T @ (inv_e * (K @ dx)) - diag * dx, 0)
    dx = dx + jnp.where(act, jax.scipy.linalg.cho_solve(factor, residual), 0)  # refinement
    da = (g - K @ dx) * inv_e
    dz = jnp.where(act, q.rho * dx - K.T @ da + rd, 0)  # the dual equation, exactly
    dxi = _div(rxi + p.xi * da, p.b, live)
    ds = _div(rs - p.s * da, p.a, live)
    return _Point(dx, dxi, ds, dz, da, -da)


def _max_step(v, dv):
    """The largest ``t <= 1`` with ``v + t dv >= 0``."""
    return jnp.minimum(1, jnp.min(jnp.where(dv < 0, -v / jnp.where(dv < 0, dv, -1), jnp.inf)))


def _steps(p: _Point, d: _Point, rho):
    """Primal ``(x, xi, s)`` and dual ``(z, a, b)`` steps to the boundary (one for the QP)."""
    primal, dual = (jnp.min(jnp.stack([_max_step(v, dv) for v, dv in zip(*half, strict=True)]))
                    for half in ((p[:3], d[:3]), (p[3:], d[3:])))  # fmt: skip
    if rho > 0:
        primal = dual = jnp.minimum(primal, dual)
    return primal, dual


def _move(p: _Point, d: _Point, tp, td) -> _Point:
    return _Point(*(v + t * dv for v, dv, t in zip(p, d, (tp,) * 3 + (td,) * 3, strict=True)))


def _ipm_step(p: _Point, q: _Problem, n) -> _Point:
    """One Mehrotra predictor-corrector step."""
    xz, xib, sa = _products(p)
    mu = (jnp.sum(xz) + jnp.sum(xib) + jnp.sum(sa)) / n
    system = _normal_matrix(p, q)
    affine = _direction(p, q, system, (-xz, -xib, -sa))
    tp, td = _steps(p, affine, q.rho)
    mu_aff = sum(jnp.sum(t) for t in _products(_move(p, affine, tp, td))) / n
    sigma = (mu_aff / mu) ** 3
    act, live = q.active, q.live
    targets = (
        jnp.where(act, sigma * mu - xz - affine.x * affine.z, 0),
        jnp.where(live, sigma * mu - xib + affine.xi * affine.a, 0),
        jnp.where(live, sigma * mu - sa - affine.s * affine.a, 0),
    )
    d = _direction(p, q, system, targets)
    tp, td = _steps(p, d, q.rho)
    return _move(p, d, 0.99 * tp, 0.99 * td)


_STALLS = 10  # steps without progress of the certified gap before giving up (rounding floor)


def _advance(s: _IpmState, q: _Problem, n, certify) -> _IpmState:
    """One step and its certified gap; a step that loses finiteness is undone and stops."""
    p = _ipm_step(s.p, q, n)
    primal, dual = certify(p.x, p.a)
    broken = ~jnp.isfinite(primal - dual)
    keep = lambda new, old: jnp.where(broken, old, new)  # noqa: E731
    p, primal, dual = jax.tree.map(keep, (p, primal, dual), (s.p, s.primal, s.dual))
    gap = primal - dual
    stalls = jnp.where(broken, _STALLS, jnp.where(gap < 0.9 * s.best, 0, s.stalls + 1))
    return _IpmState(p, s.k + 1, primal, dual, jnp.minimum(gap, s.best), stalls)


def _start(q: _Problem, x0, y0, scale) -> _Point:
    """Halfway between a warm start ``(x0, y0)`` and the centre ``x = scale``, ``a = u / 2``;
    the slacks from ``K x`` and ``K^T a`` (shifted by 1 into the interior)."""
    x = jnp.where(q.active, (jnp.maximum(x0, 0) + scale) / 2, 0)
    a = jnp.where(q.live, (jnp.clip(y0, 0, q.u) + q.u / 2) / 2, 0)
    r = jnp.where(q.live, 1 - q.K @ x, 0)
    xi = jnp.where(q.live, jnp.maximum(r, 0) + 1, 0)
    s = jnp.where(q.live, jnp.maximum(-r, 0) + 1, 0)
    z = jnp.where(q.active, jnp.maximum(q.c + q.rho * x - q.K.T @ a, 0) + 1, 0)
    return _Point(x, xi, s, z, a, jnp.where(q.live, q.u - a, 0))


def _crossover(x, y, K, c, u, active, delta):
    """The LP's KKT point of the partition guessed at ``(x, y)`` (a crossover step).

    Support ``S = {x_j > delta max x}``, tight examples ``E = {|(K x)_k - 1| <= delta}``,
    violated ``L = {(K x)_k < 1 - delta}``. The primal is corrected to ``K_ES q_S = 1`` (least
    squares), the dual to ``K_ES^T alpha_E = c_S - K_LS^T u_L`` (the nearest point, with
    ``alpha_L = u``, ``alpha = 0`` elsewhere), both through ``(K_ES^T K_ES)^+`` (Cholesky with
    a ``1e-12`` relative ridge); then clipped to their bounds. :func:`_snap` keeps the point
    only if it certifies as well, so a wrong guess costs one ``t x t`` factorization.
    """
    margins = K @ x
    S = active & (x > delta * jnp.max(x))
    E, L = jnp.abs(margins - 1) <= delta, margins < 1 - delta
    KS = jnp.where(S[None, :], K, 0)
    KES = jnp.where(E[:, None], KS, 0)
    gram = KES.T @ KES
    ridge = 1e-12 * jnp.max(jnp.diag(gram)) + jnp.finfo(K.dtype).tiny
    factor = jax.scipy.linalg.cho_factor(gram + jnp.diag(jnp.where(S, ridge, 1.0)))

    def pinv(v):  # ~ (K_ES^T K_ES)^+ v on the range of K_ES^T
        return jnp.where(S, jax.scipy.linalg.cho_solve(factor, v), 0)

    q = jnp.where(S, x, 0) + pinv(KES.T @ jnp.where(E, 1 - margins, 0))
    alpha = jnp.where(L, u, jnp.where(E, y, 0))
    alpha = alpha + KES @ pinv(jnp.where(S, c, 0) - KS.T @ alpha)
    return jnp.maximum(q, 0), jnp.clip(alpha, 0, u)


def _snap(x, y, q: _Problem, bracket, tolerance, certify):
    """For the LP, the crossover's vertex (sparse ``x``) when its certified gap is at most
    ``max(gap, tolerance)`` (``bracket``: the certified objectives at ``(x, y)``); otherwise
    (and for the QP) ``(x, y)``."""
    if q.rho > 0:
        return x, y
    gap = bracket[0] - bracket[1]
    relative = gap / jnp.maximum(jnp.abs(bracket[0]), jnp.finfo(x.dtype).tiny)
    xc, yc = _crossover(x, y, q.K, q.c, q.u, q.active, jnp.clip(10 * relative, 1e-10, 1e-3))
    primal, dual = certify(xc, yc)
    snap = primal - dual <= jnp.maximum(gap, tolerance)
    return jnp.where(snap, xc, x), jnp.where(snap, yc, y)


def _mean_support(x):
    """The mean of ``x`` over ``{x > 1e-6 max x}`` (1 when ``x = 0``)."""
    support = x > 1e-6 * jnp.max(x)
    scale = jnp.sum(jnp.where(support, x, 0)) / jnp.maximum(jnp.sum(support), 1)
    return jnp.where(scale > 0, scale, 1)


def solve_soft_margin(
    K: ArrayLike,
    c: ArrayLike,
    rho: float,
    u: ArrayLike,
    active: ArrayLike,
    x0: ArrayLike,
    y0: ArrayLike,
    scale0: ArrayLike,
    rtol: ArrayLike,
    max_iter: ArrayLike,
) -> SoftMarginResult:
    """``min_{x >= 0} c^T x + rho/2 ||x||^2 + sum_k u_k max(0, 1 - (K x)_k)`` by an IPM.

    Its dual is ``max 1^T y - ||max(0, K^T y - c)||^2 / (2 rho)`` (``rho > 0``) or the LP
    ``max 1^T y  s.t.  K^T y <= c`` (``rho = 0``; any ``y`` in the box, divided by
    ``max(1, max_j (K^T y)_j / c_j)``, is feasible). Stops on the certified gap.

    Args:
      K: ``(m, t)``, here ``diag(y) H_hat`` (inactive columns ignored).
      c: ``(t,)`` linear costs (``> 0`` when ``rho = 0``); rho: a Python float (static).
      u: ``(m,)`` upper bounds of the duals, ``C w`` (examples with ``u = 0`` drop out).
      active: ``(t,)`` bool.
      x0, y0, scale0: warm start: a previous solution and the level of ``x`` (a previous
        solve's ``scale``, or 1); the start is halfway between it and the centre.
      rtol, max_iter: relative gap tolerance and step cap (traced).

    Example:
      >>> import jax.numpy as jnp
      >>> K = jnp.ones((2, 1))  # min x + sum_k max(0, 1 - x): x = 1, objective 1
      >>> r = solve_soft_margin(K, jnp.ones(1), 0.0, jnp.ones(2), jnp.array([True]), jnp.zeros(1),
      ...                       jnp.zeros(2), 1.0, 1e-6, 50)
      >>> [round(float(v), 3) for v in (r.x[0], r.primal_objective, r.dual_objective)]
      [1.0, 1.0, 1.0]
    """
    K, c, u = (jnp.asarray(t) for t in (K, c, u))
    active = jnp.asarray(active, bool)
    live = u > 0
    K = jnp.where(active[None, :] & live[:, None], K, 0)
    q = _Problem(K, c, rho, u, active, live)
    n = jnp.sum(active) + 2 * jnp.sum(live)
    eps = jnp.finfo(K.dtype).eps

    def certify(x, y):
        return _objectives(x, K @ x, y, K, c, rho, u, active)[:2]

    def tolerance(s):
        noise = 16 * eps * (jnp.abs(c) @ s.p.x + jnp.sum(u))
        return rtol * jnp.maximum(jnp.abs(s.primal), jnp.abs(s.dual)) + noise

    def cond(s):
        return (s.primal - s.dual > tolerance(s)) & (s.k < max_iter) & (s.stalls < _STALLS)

    def body(s):
        return _advance(s, q, n, certify)

    p = _start(q, *(jnp.asarray(t, K.dtype) for t in (x0, y0, scale0)))
    primal, dual = certify(p.x, p.a)
    zero = jnp.zeros((), jnp.int32)
    init = _IpmState(p, zero, primal, dual, primal - dual, zero)
    s = lax.while_loop(cond, body, init)
    x, y = _snap(s.p.x, s.p.a, q, (s.primal, s.dual), tolerance(s), certify)
    primal, dual, y = _objectives(x, K @ x, y, K, c, rho, u, active)
    converged = primal - dual <= tolerance(s)
    return SoftMarginResult(x, y, primal, dual, s.k, converged, _mean_support(x))
