"""The soft-margin program of LPBoost and CG-Boost, by restarted Halpern PDHG.

:func:`solve_soft_margin` solves (the restricted master of :mod:`pacbound.solvers.lpboost` and
:mod:`pacbound.solvers.cgboost`)

.. math:: \\min_{x \\ge 0} c^\\top x + \\tfrac{\\rho}{2} \\|x\\|^2
          + \\sum_k u_k \\max(0, 1 - (K x)_k)
          = \\min_{x \\ge 0} \\max_{0 \\le y \\le u} c^\\top x + \\tfrac{\\rho}{2} \\|x\\|^2
          + 1^\\top y - y^\\top K x

by restarted Halpern PDHG (Lu & Yang 2024, the cuPDLPx scheme: reflected Halpern steps,
fixed-point-residual restarts, a primal weight updated at restarts), stopping on a certified
relative duality gap. For the LP (``rho = 0``) a crossover step (:func:`_crossover`) every few
blocks snaps to the KKT point of the guessed active set, which PDHG alone reaches slowly.
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
      iterations: PDHG steps.
      converged: ``primal - dual <= rtol max(|primal|, |dual|)`` (plus rounding).
      primal_weight: the final PDHG primal weight (warm start for the next solve).
    """

    x: jax.Array
    y: jax.Array
    primal_objective: jax.Array
    dual_objective: jax.Array
    iterations: jax.Array
    converged: jax.Array
    primal_weight: jax.Array


_CHECK_EVERY = 32  # PDHG steps between two evaluations of the certified gap
_POLISH_EVERY = 4  # blocks between two crossover attempts (LP only)


class _PdhgState(NamedTuple):
    x: jax.Array  # Halpern iterate z_k = (x, y) and K x
    y: jax.Array
    kx: jax.Array
    x0: jax.Array  # anchor z_0 of the current restart
    y0: jax.Array
    kx0: jax.Array
    out_x: jax.Array  # T(z_k), the reported point
    out_y: jax.Array
    out_kx: jax.Array
    weight: jax.Array  # primal weight omega
    first: jax.Array  # residual at the anchor, and at the previous step
    last: jax.Array
    n: jax.Array  # steps since the restart, and in all
    k: jax.Array
    primal: jax.Array
    dual: jax.Array


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


def _pdhg_operator(x, y, kx, K, c, rho, u, active, eta, weight):
    """One PDHG step ``T(z)`` with ``tau = eta / omega``, ``sigma = eta omega``."""
    tau, sigma = eta / weight, eta * weight
    x1 = jnp.where(active, jnp.maximum(x - tau * (c - K.T @ y), 0) / (1 + tau * rho), 0)
    kx1 = K @ x1
    y1 = jnp.clip(y + sigma * (1 - 2 * kx1 + kx), 0, u)
    return x1, y1, kx1


def _pdhg_step(s: _PdhgState, K, c, rho, u, active, eta) -> _PdhgState:
    """Reflected Halpern step with cuPDLPx's restart rules (0.2 / 0.8 / 0.36)."""
    x1, y1, kx1 = _pdhg_operator(s.x, s.y, s.kx, K, c, rho, u, active, eta, s.weight)
    dx, dy = x1 - s.x, y1 - s.y
    residual = jnp.sqrt(s.weight * (dx @ dx) + (dy @ dy) / s.weight)
    first = jnp.where(s.n == 0, residual, s.first)
    restart = (s.n > 0) & (
        (residual <= 0.2 * first)
        | ((residual <= 0.8 * first) & (residual > s.last))
        | (s.n >= 0.36 * s.k)
    )
    h = (s.n + 1) / (s.n + 2)  # reflected Halpern: z = h (2 T(z) - z) + (1 - h) z_0
    x = h * (2 * x1 - s.x) + (1 - h) * s.x0
    y = h * (2 * y1 - s.y) + (1 - h) * s.y0
    kx = h * (2 * kx1 - s.kx) + (1 - h) * s.kx0
    move_x = jnp.linalg.norm(x1 - s.x0)
    move_y = jnp.linalg.norm(y1 - s.y0)
    ok = (move_x > 0) & (move_y > 0)
    new_weight = jnp.sqrt(s.weight * jnp.where(ok, move_y / jnp.where(ok, move_x, 1), s.weight))
    weight = jnp.where(restart, new_weight, s.weight)
    x, y, kx = (jnp.where(restart, new, old) for new, old in ((x1, x), (y1, y), (kx1, kx)))
    x0, y0, kx0 = (
        jnp.where(restart, new, old) for new, old in ((x1, s.x0), (y1, s.y0), (kx1, s.kx0))
    )
    n = jnp.where(restart, 0, s.n + 1)
    return _PdhgState(x, y, kx, x0, y0, kx0, x1, y1, kx1, weight, first, residual, n, s.k + 1,
                      s.primal, s.dual)  # fmt: skip


def _crossover(x, y, K, c, u, active, delta):
    """The LP's KKT point of the partition guessed at ``(x, y)`` (a crossover step).

    Support ``S = {x_j > delta max x}``, tight examples ``E = {|(K x)_k - 1| <= delta}``,
    violated ``L = {(K x)_k < 1 - delta}``. The primal is corrected to ``K_ES q_S = 1`` (least
    squares), the dual to ``K_ES^T alpha_E = c_S - K_LS^T u_L`` (the nearest point, with
    ``alpha_L = u``, ``alpha = 0`` elsewhere), both through ``(K_ES^T K_ES)^+`` (Cholesky with
    a ``1e-12`` relative ridge); then clipped to their bounds. The caller keeps the point only
    if its certified gap is smaller, so a wrong guess costs one ``t x t`` factorization.
    (CG-Boost's QP has no vertex to snap to; its solutions are left to PDHG.)
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


def _pdhg_block(s: _PdhgState, K, c, rho, u, active, eta) -> _PdhgState:
    """``_CHECK_EVERY`` steps, then the certified objectives at the last ``T(z)``; for the LP,
    every ``_POLISH_EVERY`` blocks, a crossover attempt (:func:`_crossover`)."""
    s = lax.fori_loop(0, _CHECK_EVERY, lambda _, s: _pdhg_step(s, K, c, rho, u, active, eta), s)
    primal, dual, _ = _objectives(s.out_x, s.out_kx, s.out_y, K, c, rho, u, active)
    s = s._replace(primal=primal, dual=dual)
    if rho > 0:
        return s

    def polish(s):
        gap = (s.primal - s.dual) / jnp.maximum(jnp.abs(s.primal), jnp.finfo(K.dtype).tiny)
        delta = jnp.clip(10 * gap, 1e-10, 1e-3)
        x, y = _crossover(s.out_x, s.out_y, K, c, u, active, delta)
        kx = K @ x
        primal, dual, _ = _objectives(x, kx, y, K, c, rho, u, active)
        better = primal - dual < s.primal - s.dual
        pick = lambda new, old: jnp.where(better, new, old)  # noqa: E731
        return s._replace(out_x=pick(x, s.out_x), out_y=pick(y, s.out_y),
                          out_kx=pick(kx, s.out_kx), primal=pick(primal, s.primal),
                          dual=pick(dual, s.dual))  # fmt: skip

    due = (s.k // _CHECK_EVERY) % _POLISH_EVERY == 0  # a 0/1-trip loop: skipped when not due
    return lax.while_loop(lambda t: t[1], lambda t: (polish(t[0]), False), (s, due))[0]


def _operator_norm(K: jax.Array, iterations: int = 40) -> jax.Array:
    """``||K||_2`` by power iteration on ``K^T K``, inflated by 1 % (a safe upper estimate)."""
    v = jnp.ones(K.shape[1], K.dtype) + 0.01 * jnp.sin(jnp.arange(K.shape[1], dtype=K.dtype))

    def body(_, v):
        w = K.T @ (K @ v)
        return w / jnp.maximum(jnp.linalg.norm(w), jnp.finfo(K.dtype).tiny)

    v = lax.fori_loop(0, iterations, body, v / jnp.linalg.norm(v))
    return 1.01 * jnp.sqrt(jnp.maximum(jnp.linalg.norm(K @ v), jnp.finfo(K.dtype).tiny) ** 2)


def solve_soft_margin(
    K: ArrayLike,
    c: ArrayLike,
    rho: float,
    u: ArrayLike,
    active: ArrayLike,
    x0: ArrayLike,
    y0: ArrayLike,
    weight0: ArrayLike,
    rtol: ArrayLike,
    max_iter: ArrayLike,
) -> SoftMarginResult:
    """``min_{x >= 0} c^T x + rho/2 ||x||^2 + sum_k u_k max(0, 1 - (K x)_k)`` by restarted PDHG.

    The saddle ``min_x max_{0 <= y <= u} c^T x + rho/2 ||x||^2 + 1^T y - y^T K x``; its dual is
    ``max 1^T y - ||max(0, K^T y - c)||^2 / (2 rho)`` (``rho > 0``) or the LP
    ``max 1^T y  s.t.  K^T y <= c`` (``rho = 0``; any ``y`` in the box, divided by
    ``max(1, max_j (K^T y)_j / c_j)``, is feasible). Stops on the certified gap.

    Args:
      K: ``(m, t)``, here ``diag(y) H_hat`` (inactive columns ignored).
      c: ``(t,)`` linear costs (``> 0`` when ``rho = 0``); rho: a Python float (static).
      u: ``(m,)`` upper bounds of the duals, ``C w``.
      active: ``(t,)`` bool.
      x0, y0, weight0: warm start (``weight0``: primal weight, e.g. 1).
      rtol, max_iter: relative gap tolerance and step cap (traced).
    """
    K, c, u = (jnp.asarray(t) for t in (K, c, u))
    active = jnp.asarray(active, bool)
    K = jnp.where(active[None, :], K, 0)
    x = jnp.where(active, jnp.maximum(jnp.asarray(x0, K.dtype), 0), 0)
    y = jnp.clip(jnp.asarray(y0, K.dtype), 0, u)
    kx = K @ x
    eta = 0.998 / _operator_norm(K)
    primal, dual, _ = _objectives(x, kx, y, K, c, rho, u, active)
    zero, weight = jnp.zeros((), jnp.int32), jnp.asarray(weight0, K.dtype)
    inf = jnp.asarray(jnp.inf, K.dtype)
    init = _PdhgState(x, y, kx, x, y, kx, x, y, kx, weight, inf, inf, zero, zero, primal, dual)
    eps = jnp.finfo(K.dtype).eps

    def tolerance(s):
        noise = 16 * eps * (jnp.abs(c) @ s.out_x + jnp.sum(u))
        return rtol * jnp.maximum(jnp.abs(s.primal), jnp.abs(s.dual)) + noise

    def cond(s):
        return (s.primal - s.dual > tolerance(s)) & (s.k < max_iter)

    s = lax.while_loop(cond, lambda s: _pdhg_block(s, K, c, rho, u, active, eta), init)
    primal, dual, y = _objectives(s.out_x, K @ s.out_x, s.out_y, K, c, rho, u, active)
    converged = primal - dual <= tolerance(s)
    return SoftMarginResult(s.out_x, y, primal, dual, s.k, converged, s.weight)
