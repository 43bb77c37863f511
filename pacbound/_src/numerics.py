"""Numerical primitives shared by the bounds: a maximizer and Lambert's W.

* ``golden_section_argmax(f, lo, hi, args)``: the argmax of a concave (unimodal) function on
  an interval by golden-section search inside ``lax`` (a fixed number of steps, no gradient).
* ``lambert_w(x, branch)``: the principal (``0``) and lower (``-1``) real branches of Lambert's
  ``W``, the inverse of ``w e^w`` (the gamma grid of the PAC-Bayes-Bennett inequality).

All are jittable, vmappable and keep the input's float dtype.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

__all__ = ["GOLDEN_STEPS", "golden_section_argmax", "lambert_w"]

GOLDEN_STEPS = 60  # the bracket shrinks by 0.618^60 ~ 3e-13 of its width
_GOLDEN_RATIO = (math.sqrt(5.0) - 1.0) / 2.0


def golden_section_argmax(
    f: Callable[..., jax.Array],
    lo: ArrayLike,
    hi: ArrayLike,
    args: tuple = (),
    steps: int = GOLDEN_STEPS,
) -> jax.Array:
    """The maximizer of a concave (or unimodal) ``f(x, *args)`` on ``[lo, hi]``.

    Golden-section search: each of the ``steps`` (static) iterations compares ``f`` at the two
    interior points ``hi - r (hi - lo)`` and ``lo + r (hi - lo)``, ``r = (sqrt 5 - 1) / 2``, and
    keeps the sub-bracket holding the larger; the midpoint of the last bracket is returned. It
    needs no derivative, so it also finds the maximum of a function with a kink there (a
    supremum under a cap). Elementwise over broadcast ``lo``, ``hi`` and ``args``.

    No gradient flows through the search (its result is wrapped in ``lax.stop_gradient``):
    differentiate the maximum by evaluating ``f`` at the returned point with live arguments
    (the envelope theorem).

    Args:
      f: ``f(x, *args) -> values``, elementwise in ``x``.
      lo, hi: the bracket, ``lo <= hi``.
      args: extra arguments of ``f``.
      steps: number of iterations.

    Returns:
      The argmax, in the float dtype of ``lo``, ``hi`` and ``args``: within ``0.618^steps
      (hi - lo)`` of the exact one at a kink, within about ``sqrt(eps)`` relative at a smooth
      maximum (where ``f`` is flat to rounding); the maximum itself is then exact to rounding.

    Example:
      >>> round(float(golden_section_argmax(lambda x: -(x - 0.3) ** 2, 0.0, 1.0)), 4)
      0.3
    """
    dtype = jnp.result_type(lo, hi, *args, float)
    args = tuple(lax.stop_gradient(a) for a in args)
    lo, hi = (lax.stop_gradient(jnp.asarray(x, dtype)) for x in (lo, hi))

    def step(_, bracket):
        lo, hi = bracket
        left, right = hi - _GOLDEN_RATIO * (hi - lo), lo + _GOLDEN_RATIO * (hi - lo)
        keep_left = f(left, *args) >= f(right, *args)
        return jnp.where(keep_left, lo, left), jnp.where(keep_left, right, hi)

    shape = jnp.broadcast_shapes(lo.shape, hi.shape, jax.eval_shape(f, lo, *args).shape)
    bracket = (jnp.broadcast_to(lo, shape), jnp.broadcast_to(hi, shape))
    low, high = lax.fori_loop(0, steps, step, bracket)
    return lax.stop_gradient((low + high) / 2.0)


_HALLEY_STEPS = 12
_BRANCH_SERIES = 1e-3  # below this p = sqrt(2 (e x + 1)), the series at -1/e is exact to 1e-16


def _halley(x: jax.Array, w: jax.Array) -> jax.Array:
    """Halley's iterations on ``w e^w = x`` from ``w`` (away from the branch point)."""

    def step(_, w):
        ew = jnp.exp(w)
        f = w * ew - x
        safe = jnp.where(w == -1.0, 1.0, 2.0 * w + 2.0)
        denom = ew * (w + 1.0) - (w + 2.0) * f / safe
        ok = (f != 0) & (denom != 0)
        return jnp.where(ok, w - f / jnp.where(ok, denom, 1.0), w)

    return lax.fori_loop(0, _HALLEY_STEPS, step, w)


def lambert_w(x: ArrayLike, branch: int = 0) -> jax.Array:
    """Lambert's ``W``: the real ``w`` with ``w e^w = x``.

    ``branch = 0``: ``W_0(x) >= -1`` for ``x >= -1/e``; ``branch = -1``: ``W_{-1}(x) <= -1``
    for ``-1/e <= x < 0``. Near the branch point, with ``p = sqrt(2 (e x + 1))``, the series
    ``W = -1 +- p - p^2/3 +- 11 p^3/72 - 43 p^4/540`` (``+`` for ``W_0``); elsewhere
    ``_HALLEY_STEPS`` Halley iterations from that series (``x < -1/4``) or from the
    logarithmic asymptotics ``ln y - ln ln y``. ``x`` below ``-1/e`` is read as ``-1/e``.
    Not differentiable (the grids that use it are fixed before seeing the data).

    Args:
      x: the argument.
      branch: ``0`` or ``-1`` (static).

    Returns:
      ``W(x)`` in ``x``'s float dtype, as ``scipy.special.lambertw(x, branch).real``.

    Example:
      >>> round(float(lambert_w(1.0)), 4)  # the omega constant: w e^w = 1
      0.5671
      >>> round(float(lambert_w(-0.2, branch=-1)), 4)  # the lower branch, W <= -1
      -2.5426
    """
    if branch not in (0, -1):
        raise ValueError(f"branch must be 0 or -1; got {branch}")
    x = jnp.asarray(x, jnp.result_type(x, float))
    x = jnp.maximum(x, -jnp.exp(-jnp.ones((), x.dtype)))
    sign = 1.0 if branch == 0 else -1.0
    p = sign * jnp.sqrt(jnp.maximum(2.0 * (jnp.e * x + 1.0), 0.0))
    series = -1.0 + p - p**2 / 3.0 + 11.0 / 72.0 * p**3 - 43.0 / 540.0 * p**4
    if branch == 0:
        log_x = jnp.log(jnp.maximum(x, 3.0))
        far = jnp.where(x < 3.0, 0.7 * jnp.log1p(jnp.maximum(x, -0.25)), log_x - jnp.log(log_x))
    else:
        log_minus_x = jnp.log(jnp.clip(-x, jnp.finfo(x.dtype).tiny, 0.25))
        far = log_minus_x - jnp.log(-log_minus_x)
    start = jnp.where(x < -0.25, series, far)
    return jnp.where(jnp.abs(p) < _BRANCH_SERIES, series, _halley(x, start))
