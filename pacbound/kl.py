"""Kullback-Leibler terms of PAC-Bayes bounds, with gradients that stay finite at the edges.

* ``kl_divergence(q, p)``: ``KL(Q||P)`` between discrete distributions.
* ``binary_kl(q, p)`` and ``trinomial_kl(q1, q2, p1, p2)``: the divergence between Bernoulli
  (resp. three-outcome) distributions used by Seeger's bound and by PAC-Bound 2 of Germain et
  al. (JMLR 2015).
* ``kl_inv_upper`` / ``kl_inv_lower``: the inverses of ``binary_kl`` in its second argument,
  by a fixed number of safeguarded Newton steps inside ``lax`` and a ``custom_jvp`` that gives
  the implicit-function derivative in both arguments (never a derivative of the iterations).
* ``gaussian_mixture_kl_bound`` (roy2016 §3) and ``quasi_uniform_kl`` (germain2009 §4.2).

Every ``0 log 0`` is 0. Where the true derivative is infinite (``d/dq kl`` at ``q = 0``,
``d/deps kl_inv_upper`` at ``eps = 0``) the derivative returned is large and finite, computed
with logs floored at the dtype's ``tiny``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import xlogy
from jax.typing import ArrayLike

__all__ = [
    "binary_kl",
    "gaussian_mixture_kl_bound",
    "kl_divergence",
    "kl_inv_lower",
    "kl_inv_upper",
    "quasi_uniform_kl",
    "trinomial_kl",
]


def _floats(*xs: ArrayLike) -> list[jax.Array]:
    """Arrays promoted to one inexact dtype (float32 by default, float64 under x64)."""
    dtype = jnp.result_type(*xs, float)
    return [jnp.asarray(x, dtype) for x in xs]


def _safe_log(x: jax.Array) -> jax.Array:
    return jnp.log(jnp.maximum(x, jnp.finfo(x.dtype).tiny))


@jax.custom_jvp
def _kl_term(q: jax.Array, p: jax.Array) -> jax.Array:
    """``q log(q / p)`` with ``0 log(0 / p) = 0`` (``+inf`` when ``q > 0 = p``)."""
    return xlogy(q, q) - xlogy(q, p)


@_kl_term.defjvp
def _kl_term_jvp(primals, tangents):
    q, p = primals
    dq, dp = tangents
    d_q = _safe_log(q) + 1.0 - _safe_log(p)
    d_p = jnp.where(q > 0, -q / jnp.where(q > 0, p, 1.0), 0.0)
    return _kl_term(q, p), d_q * dq + d_p * dp


def kl_divergence(q: ArrayLike, p: ArrayLike, axis: int = -1) -> jax.Array:
    """``KL(Q||P) = sum_i q_i ln(q_i / p_i)`` for discrete distributions along ``axis``."""
    q, p = _floats(q, p)
    return jnp.sum(_kl_term(q, p), axis=axis)


def binary_kl(q: ArrayLike, p: ArrayLike) -> jax.Array:
    """``kl(q||p) = q ln(q/p) + (1-q) ln((1-q)/(1-p))``, Bernoulli divergence (Seeger 2002)."""
    q, p = _floats(q, p)
    return _kl_term(q, p) + _kl_term(1.0 - q, 1.0 - p)


def trinomial_kl(q1: ArrayLike, q2: ArrayLike, p1: ArrayLike, p2: ArrayLike) -> jax.Array:
    """``kl((q1, q2, 1-q1-q2) || (p1, p2, 1-p1-p2))``, three-outcome divergence.

    Used by PAC-Bound 2 (Germain et al., JMLR 2015) with ``(q1, q2)`` the empirical joint error
    and disagreement.
    """
    q1, q2, p1, p2 = _floats(q1, q2, p1, p2)
    rest = _kl_term(1.0 - q1 - q2, 1.0 - p1 - p2)
    return _kl_term(q1, p1) + _kl_term(q2, p2) + rest


# Newton steps of the kl-inverse: from the closed-form start, 5 reach float64 precision on
# every (q, eps) of the test grid; one more for margin.
_NEWTON_STEPS = 6


def _log_ratio_term(q: jax.Array, u: jax.Array) -> jax.Array:
    """``q ln(q / p)`` at ``p = sigmoid(u)``: the ratio form (accurate when ``p`` is near ``q``)
    while ``p`` is a normal number, the log form (no underflow) beyond."""
    p = jax.nn.sigmoid(u)
    normal = p > jnp.finfo(p.dtype).tiny
    ratio = jnp.log(q / jnp.where(normal, p, 1.0))
    return jnp.where(q > 0, q * jnp.where(normal, ratio, jnp.log(q) + jax.nn.softplus(-u)), 0.0)


def _upper_root_logit(q: jax.Array, eps: jax.Array) -> jax.Array:
    """Logit ``u`` of ``kl^-1_up(q, eps)``, by Newton's method in ``u = ln(p / (1 - p))``.

    In the logit, ``kl(q||sigmoid(u))`` is convex on the whole line with derivative
    ``p - q`` and curvature ``p (1 - p)``, so Newton's method started right of the root
    descends to it monotonically and quadratically. The start is the least of four upper
    bounds on the root: Pinsker's ``p <= q + sqrt(eps / 2)``; ``p <= q + eps + sqrt(eps^2 +
    2 q eps)`` and ``p <= q + sqrt(2 (1 - q) eps)`` (from ``kl >= (p - q)^2 / (2 max(p,
    1 - q))``); and ``-ln(1 - p) <= (eps + H(q)) / (1 - q)`` (from ``kl >= -(1 - q) ln(1 - p)
    - H(q)``), the last one finite even when the others exceed 1.
    """
    entropy = -xlogy(q, q) - xlogy(1.0 - q, 1.0 - q)
    near_one = jnp.sqrt(2.0 * (1.0 - q) * eps)
    gap = jnp.minimum(
        jnp.minimum(jnp.sqrt(eps / 2.0), near_one), eps + jnp.sqrt(eps**2 + 2.0 * q * eps)
    )
    p0 = q + gap
    u_gap = jnp.where(p0 < 1.0, jnp.log(p0) - jnp.log1p(-jnp.minimum(p0, 0.5 + p0 / 2)), jnp.inf)
    tail = (eps + entropy) / (1.0 - q)
    u_tail = tail + jnp.log(-jnp.expm1(-tail))  # ln(e^t - 1) without overflow
    u0 = jnp.minimum(u_gap, u_tail)

    u_q = jnp.log(q) - jnp.log1p(-q)  # the minimum of kl: the root lies in [u_q, u0]

    def step(_, u):
        p = jax.nn.sigmoid(u)
        g = _log_ratio_term(q, u) + _log_ratio_term(1.0 - q, -u) - eps
        return jnp.where((g > 0) & (p > q), jnp.maximum(u - g / (p - q), u_q), u)

    return lax.fori_loop(0, _NEWTON_STEPS, step, u0)


def _solve_kl_inverse(q: jax.Array, eps: jax.Array, upper: bool) -> jax.Array:
    """``kl^-1_up`` directly; ``kl^-1_low(q, eps) = 1 - kl^-1_up(1 - q, eps)`` by the symmetry
    ``kl(q||p) = kl(1-q||1-p)``, taken on the logit (a sign flip, exact in floating point)."""
    q_up = q if upper else 1.0 - q
    u = _upper_root_logit(q_up, eps)
    u = jnp.where(q_up >= 1.0, jnp.inf, u)
    p = jax.nn.sigmoid(u if upper else -u)
    p = jnp.maximum(p, q) if upper else jnp.minimum(p, q)  # sigmoid(logit(q)) may round past q
    return jnp.where(eps > 0, p, q)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _kl_inverse(q: jax.Array, eps: jax.Array, upper: bool) -> jax.Array:
    return _solve_kl_inverse(q, eps, upper)


@_kl_inverse.defjvp
def _kl_inverse_jvp(upper, primals, tangents):
    """Implicit derivative of ``kl(q||p(q, eps)) = eps``: ``dp = (deps - kl_q dq) / kl_p``."""
    q, eps = primals
    dq, deps = tangents
    p = _kl_inverse(q, eps, upper)
    kl_q = _safe_log(q) - _safe_log(1.0 - q) - _safe_log(p) + _safe_log(1.0 - p)
    kl_p = jnp.where(q > 0, -q / jnp.where(q > 0, p, 1.0), 0.0) + jnp.where(
        q < 1, (1.0 - q) / jnp.where(q < 1, 1.0 - p, 1.0), 0.0
    )
    # kl_p == 0 only at p == q with 0 < q < 1 (eps == 0), where d/deps is infinite: return a
    # large finite slope there. At eps == 0, p(q) = q, so d/dq is 1; at the far end of the
    # bracket (p = 1 up, p = 0 low, only when q is there too) p is constant in eps and q.
    floor = jnp.sqrt(jnp.finfo(p.dtype).tiny)
    safe_kl_p = jnp.where(kl_p == 0, (1.0 if upper else -1.0) * floor, kl_p)
    pinned = (p >= 1.0) if upper else (p <= 0.0)
    slope_q = jnp.where(eps == 0, 1.0, jnp.where(pinned, 0.0, -kl_q / safe_kl_p))
    slope_eps = jnp.where(pinned, 0.0, 1.0 / safe_kl_p)
    return p, slope_q * dq + slope_eps * deps


@jax.jit
def kl_inv_upper(q: ArrayLike, eps: ArrayLike) -> jax.Array:
    """``kl^-1_up(q, eps) = max {p in [q, 1] : kl(q||p) <= eps}`` (Seeger's bound inverse).

    Computed by six Newton steps in the logit from a closed-form start: as exact as the
    conditioning of ``kl`` allows (1e-10 or better in float64; near ``eps = 0`` the root
    moves like ``sqrt(eps)``, so rounding in ``kl`` limits any method). Differentiable in
    ``q`` and ``eps`` through the implicit function theorem; broadcasts over its arguments
    and is vmappable.

    Args:
      q: empirical value in ``[0, 1]``.
      eps: level ``>= 0``.

    Returns:
      ``p`` with ``kl(q||p) = eps`` (or ``1`` if no ``p <= 1`` reaches ``eps``).
    """
    q, eps = _floats(q, eps)
    q, eps = jnp.broadcast_arrays(q, eps)
    return _kl_inverse(q, eps, True)


@jax.jit
def kl_inv_lower(q: ArrayLike, eps: ArrayLike) -> jax.Array:
    """``kl^-1_low(q, eps) = min {p in [0, q] : kl(q||p) <= eps}``; see ``kl_inv_upper``."""
    q, eps = _floats(q, eps)
    q, eps = jnp.broadcast_arrays(q, eps)
    return _kl_inverse(q, eps, False)


def gaussian_mixture_kl_bound(q: ArrayLike, centers: ArrayLike) -> jax.Array:
    """``KL(Q||P) <= (1/2) sum_i q_i ||w_i||^2`` (roy2016 §3, after Theorem 2).

    ``Q`` is the mixture ``sum_i q_i N(w_i, I)`` of isotropic Gaussians over linear voters and
    ``P = N(0, I)``; the bound follows from Jensen's inequality on ``x ln x``.

    Args:
      q: mixture weights, shape ``(n,)``.
      centers: the centres ``w_i``, shape ``(n, N)``.
    """
    q, centers = _floats(q, centers)
    return 0.5 * jnp.sum(q * jnp.sum(centers**2, axis=-1), axis=-1)


def quasi_uniform_kl(w: ArrayLike) -> jax.Array:
    """``KL(Q||P)`` of a quasi-uniform posterior to the uniform prior (germain2009 §4.2, eq. 16).

    On a self-complemented set of ``2n`` voters a quasi-uniform ``Q`` has
    ``Q_i + Q_{i+n} = 1/n``; it is given by ``w_i = Q_i - Q_{i+n}`` in ``[-1/n, 1/n]``. With
    ``P_i = 1/(2n)``:

    .. math:: KL(Q||P) = \\ln(2n) + \\sum_{i=1}^n [Q_i \\ln Q_i + (1/n - Q_i) \\ln(1/n - Q_i)].

    Args:
      w: the ``n`` weights ``w_i``, shape ``(..., n)``.
    """
    (w,) = _floats(w)
    n = w.shape[-1]
    half = (1.0 / n + w) / 2.0
    return jnp.log(2.0 * n) + jnp.sum(xlogy(half, half) + xlogy(1.0 / n - half, 1.0 / n - half), -1)
