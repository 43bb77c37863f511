"""The one-coordinate step of KL-regularized coordinate descent (germain2009 eqs. 2-17).

Each coordinate step solves ``l(u) + r(u) = 0`` for ``u = n w_j`` in ``[-1, 1]``, where ``l``
is the loss's derivative (linear for KL-QL; ``e^{p + ku} - e^{q - ku}`` for KL-EL, so ``H``
must be ``{-1, 0, 1}``-valued) and ``r`` the regularizer's: ``atanh(u)`` for KL (eq. 4),
``2u`` for the l2 relaxation ``n ||w||^2`` (eq. 16) and ``sign(u)`` for the l1 relaxation
``||w||_1`` (eq. 17). ``r`` is infinite at the ends of the box for KL and the exponential
terms can span hundreds of orders of magnitude, so Newton's method may crawl; the root is
found by bisection with ``mantissa + 3`` steps, within a few ulps (absolute in ``u``) for
every input, in ``Theta(1)`` time once the sums of eq. 7 / 10 are known. With KL the root is
strictly inside the box in exact arithmetic, so steps 6-7 fire only by rounding; with the
relaxations they are real.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

__all__ = ["coordinate_minimizer", "exp_difference", "loss_slope", "loss_slope_coefficients"]


def exp_difference(a, b):
    """``e^a - e^b`` without ``inf - inf``: ``+-inf`` on overflow, never NaN.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(exp_difference(1.0, 0.0)), 4), float(exp_difference(1000.0, 0.0))
      (1.7183, inf)
    """
    gap = -jnp.expm1(-jnp.abs(a - b))
    return jnp.where(a == b, 0.0, jnp.sign(a - b) * jnp.exp(jnp.maximum(a, b)) * gap)


def loss_slope_coefficients(state, z, z2, w_k, C, gamma, n, loss, s):
    """The coefficients of ``l(u) = d/dv [C sum_i s_i zeta_i]`` at ``w_k = v = u / n``.

    Quadratic (eq. 7): ``c0 + c1 u`` with ``c0 = 2C/gamma^2 (sum s D z - w_k sum s z^2)``,
    ``c1 = 2C/gamma^2 sum s z^2 / n`` (``z2 = sum s z^2``). Exponential (eq. 10): ``e^{c0 +
    k u} - e^{c1 - k u}`` with ``k = 1/(n gamma)``, ``c0 = ln(C/gamma) + ln sum_{z<0} s D -
    w_k / gamma`` and ``c1 = ln(C/gamma) + ln sum_{z>0} s D + w_k / gamma`` (``z = y h`` in
    ``{-1, 0, 1}``).

    Example:
      >>> import jax.numpy as jnp
      >>> D, z, s = jnp.array([-0.5, -1.0]), jnp.array([1., -1.]), jnp.ones(2)
      >>> c0, c1 = loss_slope_coefficients(D, z, 2.0, 0.0, 1.0, 1.0, 2, "quadratic", s)
      >>> float(c0), float(c1)  # 2 (sum s D z - 0 * 2) = 2 * 0.5, 2 * 2 / 2
      (1.0, 2.0)
    """
    if loss == "quadratic":
        scale = 2.0 * C / gamma**2
        return scale * (jnp.dot(s * state, z) - w_k * z2), scale * z2 / n
    top = jnp.max(jnp.where(s > 0, state, -jnp.inf))
    d = jnp.where(s > 0, s * jnp.exp(state - top), 0.0)
    base = jnp.log(C / gamma) + top
    wrong, right = jnp.sum(jnp.where(z < 0, d, 0.0)), jnp.sum(jnp.where(z > 0, d, 0.0))
    return base + jnp.log(wrong) - w_k / gamma, base + jnp.log(right) + w_k / gamma


def loss_slope(coef, u, n, gamma, loss):
    """``l(u)`` from :func:`loss_slope_coefficients`: ``c0 + c1 u`` (quadratic loss) or
    ``e^{c0 + k u} - e^{c1 - k u}`` with ``k = 1/(n gamma)`` (exponential loss).

    Example:
      >>> loss_slope((1.0, 2.0), 0.5, 3, 0.1, "quadratic")  # c0 + c1 u
      2.0
      >>> round(float(loss_slope((0.0, 0.0), 0.0, 3, 0.1, "exponential")), 4)  # e^0 - e^0
      0.0
    """
    c0, c1 = coef
    if loss == "quadratic":
        return c0 + c1 * u
    k = 1.0 / (n * gamma)
    return exp_difference(c0 + k * u, c1 - k * u)


def _bisect(g, lo, hi, steps):
    """Root of the increasing ``g`` on ``[lo, hi]``, clipped to the ends (steps 6-7)."""

    def step(_, bracket):
        a, b = bracket
        mid = a + (b - a) / 2
        up = g(mid) > 0
        return jnp.where(up, a, mid), jnp.where(up, mid, b)

    a, b = lax.fori_loop(0, steps, step, (lo, hi))
    root = a + (b - a) / 2
    return jnp.where(g(hi) <= 0, hi, jnp.where(g(lo) >= 0, lo, root))


def coordinate_minimizer(slope, relaxation, dtype):
    """``u`` in ``[-1, 1]`` minimizing the 1-D objective whose loss derivative is ``slope``.

    Example:
      >>> import jax.numpy as jnp
      >>> u = coordinate_minimizer(lambda u: u - 0.5, "l2", jnp.float32)  # root of u - 0.5 + 2 u
      >>> round(float(u), 4)
      0.1667
      >>> float(coordinate_minimizer(lambda u: 0.5 + 0 * u, "l1", jnp.float32))  # |slope| <= 1: 0
      0.0
    """
    steps = jnp.finfo(dtype).nmant + 3
    one = jnp.ones((), dtype)
    if relaxation == "kl":  # eq. 4: dKL/dv = (1/2) ln((1 + u) / (1 - u)) = atanh(u)
        return _bisect(lambda u: slope(u) + jnp.arctanh(u), -one, one, steps)
    if relaxation == "l2":  # d/dv n v^2 = 2 u
        return _bisect(lambda u: slope(u) + 2.0 * u, -one, one, steps)
    # l1: d/dv |v| = sign(u), [-1, 1] at 0; so u = 0 when |slope(0)| <= 1, else u < 0 solves
    # slope(u) - 1 = 0 (slope(0) > 1) and u > 0 solves slope(u) + 1 = 0 (slope(0) < -1)
    at_zero = slope(0.0 * one)
    negative = at_zero > 0
    lo = jnp.where(negative, -one, 0.0 * one)
    u = _bisect(lambda u: slope(u) + jnp.where(negative, -one, one), lo, lo + 1.0, steps)
    return jnp.where(jnp.abs(at_zero) <= 1.0, 0.0 * one, u)
