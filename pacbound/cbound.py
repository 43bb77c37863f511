"""The C-bound in its forms (laviolette2011 Thm 1, roy2016 Thm 1, Germain et al. JMLR 2015).

For any distribution ``Q`` over voters in ``[-1, 1]`` whose margin has first moment
``mu1 > 0``, the risk of the majority vote is at most

.. math:: C_Q = 1 - \\frac{\\mu_1^2}{\\mu_2}
              = 1 - \\frac{(1 - 2 R(G_Q))^2}{1 - 2 d_Q}
              = 1 - \\frac{(1 - 2 e_Q - d_Q)^2}{1 - 2 d_Q},

with ``R(G_Q) = (1 - mu1)/2`` the Gibbs risk, ``d_Q = (1 - mu2)/2`` the disagreement and
``e_Q = R(G_Q) - d_Q / 2`` the joint error. When ``mu1 <= 0`` the bound is the trivial 1.

``cbound_trinomial_sup`` is the worst C-bound over a trinomial kl-ball around the empirical
``(e_S, d_S)``: the optimization inside PAC-Bound 2 of Germain et al. (2015).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.kl import binary_kl, kl_inv_lower, kl_inv_upper
from pacbound.margins import margin_moments

__all__ = ["cbound", "cbound_from_risk", "cbound_trinomial_sup", "empirical_cbound"]


def cbound(mu1: ArrayLike, mu2: ArrayLike) -> jax.Array:
    """C-bound ``1 - mu1^2 / mu2`` from the margin's moments (laviolette2011 Theorem 1).

    Returns 1 where ``mu1 <= 0`` (no information) or ``mu2 <= 0``; the gradient is finite
    everywhere (zero where the bound is the constant 1).

    Args:
      mu1: first moment of the margin.
      mu2: second moment of the margin.
    """
    mu1, mu2 = jnp.asarray(mu1), jnp.asarray(mu2)
    informative = (mu1 > 0) & (mu2 > 0)
    safe_mu2 = jnp.where(informative, mu2, 1.0)
    return jnp.where(informative, 1.0 - mu1**2 / safe_mu2, 1.0)


def cbound_from_risk(gibbs_risk: ArrayLike, disagreement: ArrayLike) -> jax.Array:
    """C-bound ``1 - (1 - 2r)^2 / (1 - 2d)`` from the Gibbs risk ``r`` and disagreement ``d``.

    The same bound as ``cbound`` with ``mu1 = 1 - 2r`` and ``mu2 = 1 - 2d`` (roy2016 §2); it is
    1 when ``r >= 1/2``.
    """
    return cbound(1.0 - 2.0 * jnp.asarray(gibbs_risk), 1.0 - 2.0 * jnp.asarray(disagreement))


def empirical_cbound(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical C-bound of the vote ``(H, q)`` on the sample ``(H, y)``."""
    return cbound(*margin_moments(H, y, q))


def _cbound_on_slice(d, e_s, d_s, eps):
    """Largest C-bound over the ``e``-slice of the kl-ball at disagreement ``d``.

    By the chain rule of the KL divergence,
    ``kl(e_S, d_S || e, d) = kl(d_S||d) + (1 - d_S) kl(e_S/(1 - d_S) || e/(1 - d))``, so the
    largest ``e`` in the ball is ``(1 - d) kl^-1_up(e_S / (1 - d_S), (eps - kl(d_S||d)) /
    (1 - d_S))``. The C-bound increases with ``e`` up to the line ``2e + d = 1``, where it is 1.
    """
    slack = jnp.maximum(eps - binary_kl(d_s, d), 0.0) / (1.0 - d_s)
    e = (1.0 - d) * kl_inv_upper(e_s / (1.0 - d_s), slack)
    margin = 1.0 - 2.0 * jnp.minimum(e, (1.0 - d) / 2.0) - d  # mu1 = 1 - 2e - d >= 0
    on_line = margin <= 0  # C = 1 there, also at d = 1/2 where mu2 = 1 - 2d vanishes
    return jnp.where(on_line, 1.0, 1.0 - margin**2 / jnp.where(on_line, 1.0, 1.0 - 2.0 * d))


_GOLDEN_STEPS = 60  # the bracket shrinks by 0.618^60 ~ 3e-13


@jax.jit
def cbound_trinomial_sup(joint_error: ArrayLike, disagreement: ArrayLike, eps: ArrayLike):
    """``sup 1 - (1 - 2e - d)^2 / (1 - 2d)`` over ``kl(e_S, d_S || e, d) <= eps``, ``2e + d <= 1``.

    The optimization of PAC-Bound 2 (Germain et al., JMLR 2015, Theorem 25). The C-bound is
    concave in ``(e, d)`` (one minus a quadratic-over-linear) and the feasible set is convex,
    so its maximum over each slice of fixed ``d`` (closed form, see ``_cbound_on_slice``) is a
    concave function of ``d``, maximized by golden-section search over the ``d`` range of the
    ball, ``[kl^-1_low(d_S, eps), min(kl^-1_up(d_S, eps), 1/2)]``.

    The published constraint ``d <= 2 (sqrt(e) - e)`` is not imposed: for ``2e + d < 1`` it is
    equivalent to a non-negative C-bound, and the maximum is at least the empirical C-bound,
    which is non-negative, so it never binds.

    The value's gradient (``jax.grad`` works) is the envelope theorem's: the derivative of the
    slice maximum at the optimal ``d``, held fixed.

    Args:
      joint_error: empirical joint error ``e_S``.
      disagreement: empirical disagreement ``d_S`` (``< 1``).
      eps: radius of the ball, ``>= 0``.

    Returns:
      The supremum, in ``[C-bound(e_S, d_S), 1]``.
    """
    e_s, d_s, eps = jnp.broadcast_arrays(
        *(jnp.asarray(x, jnp.result_type(x, float)) for x in (joint_error, disagreement, eps))
    )
    e_s = jnp.maximum(e_s, 0.0)  # R_S - d_S / 2 may round below 0
    d_lo = kl_inv_lower(d_s, eps)
    d_hi = jnp.minimum(kl_inv_upper(d_s, eps), 0.5)
    d_best = lax.stop_gradient(_golden_section_max(_cbound_on_slice, d_lo, d_hi, (e_s, d_s, eps)))
    return _cbound_on_slice(d_best, e_s, d_s, eps)


def _golden_section_max(f, lo, hi, args):
    """Argmax of a concave ``f(x, *args)`` on ``[lo, hi]`` by ``_GOLDEN_STEPS`` golden sections."""
    ratio = (jnp.sqrt(5.0) - 1.0) / 2.0
    args = tuple(lax.stop_gradient(a) for a in args)

    def step(_, bracket):
        lo, hi = bracket
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left = f(x1, *args) >= f(x2, *args)
        return jnp.where(left, lo, x1), jnp.where(left, x2, hi)

    lo, hi = lax.fori_loop(0, _GOLDEN_STEPS, step, (lo, hi))
    return (lo + hi) / 2.0
