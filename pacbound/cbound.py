"""The C-bound in its forms (laviolette2011 Thm 1, roy2016 Thm 1, Germain et al. JMLR 2015).

For any distribution ``Q`` over voters in ``[-1, 1]`` whose margin has first moment
``mu1 > 0``, the risk of the majority vote is at most

.. math:: C_Q = 1 - \\frac{\\mu_1^2}{\\mu_2}
              = 1 - \\frac{(1 - 2 R(G_Q))^2}{1 - 2 d_Q}
              = 1 - \\frac{(1 - 2 e_Q - d_Q)^2}{1 - 2 d_Q},

with ``R(G_Q) = (1 - mu1)/2`` the Gibbs risk, ``d_Q = (1 - mu2)/2`` the disagreement and
``e_Q = R(G_Q) - d_Q / 2`` the joint error. When ``mu1 <= 0`` the bound is the trivial 1.

``cbound_trinomial_sup`` is the worst C-bound over a trinomial kl-ball around the empirical
``(e_S, d_S)``: the optimization inside PAC-Bound 2 of Germain et al. (2015), certified (a
float ``>=`` the exact supremum; see its docstring). ``cbound_upper`` is the C-bound rounded
up, the last step of every certified C-bound form (:mod:`pacbound.bounds`, "Certified
values").
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.kl import (
    binary_kl,
    binary_kl_interval,
    kl_inv_lower,
    kl_inv_upper,
    kl_inv_upper_interval,
    round_down,
    round_up,
)
from pacbound.margins import margin_moments

__all__ = [
    "cbound",
    "cbound_from_risk",
    "cbound_trinomial_sup",
    "cbound_upper",
    "empirical_cbound",
]


def cbound(mu1: ArrayLike, mu2: ArrayLike) -> jax.Array:
    """C-bound ``1 - mu1^2 / mu2`` from the margin's moments (laviolette2011 Theorem 1).

    Returns 1 where ``mu1 <= 0`` (no information) or ``mu2 <= 0``; the gradient is finite
    everywhere (zero where the bound is the constant 1).

    Args:
      mu1: first moment of the margin.
      mu2: second moment of the margin.

    Example:
      >>> round(float(cbound(0.5, 0.5)), 4)  # 1 - 0.25 / 0.5
      0.5
      >>> float(cbound(-0.1, 0.5))  # a vote no better than chance: the trivial bound
      1.0
    """
    mu1, mu2 = jnp.asarray(mu1), jnp.asarray(mu2)
    informative = (mu1 > 0) & (mu2 > 0)
    safe_mu2 = jnp.where(informative, mu2, 1.0)
    return jnp.where(informative, 1.0 - mu1**2 / safe_mu2, 1.0)


def cbound_from_risk(gibbs_risk: ArrayLike, disagreement: ArrayLike) -> jax.Array:
    """C-bound ``1 - (1 - 2r)^2 / (1 - 2d)`` from the Gibbs risk ``r`` and disagreement ``d``.

    The same bound as ``cbound`` with ``mu1 = 1 - 2r`` and ``mu2 = 1 - 2d`` (roy2016 §2); it is
    1 when ``r >= 1/2``.

    Example:
      >>> round(float(cbound_from_risk(0.25, 0.25)), 4)  # mu1 = mu2 = 0.5, as cbound(0.5, 0.5)
      0.5
      >>> float(cbound_from_risk(0.5, 0.25))  # Gibbs risk 1/2: the trivial bound
      1.0
    """
    return cbound(1.0 - 2.0 * jnp.asarray(gibbs_risk), 1.0 - 2.0 * jnp.asarray(disagreement))


def empirical_cbound(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical C-bound of the vote ``(H, q)`` on the sample ``(H, y)``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> round(float(empirical_cbound(H, y, jnp.ones(3) / 3)), 4)  # mu1 = mu2 = 1/3
      0.6667
    """
    return cbound(*margin_moments(H, y, q))


def cbound_upper(mu1: ArrayLike, mu2: ArrayLike) -> jax.Array:
    """The C-bound ``1 - mu1^2 / mu2`` rounded up: a float ``>=`` its exact value for the given
    floats (1 where ``mu1 <= 0`` or ``mu2 <= 0``), in ``[0, 1]``.

    ``mu1^2 / mu2`` carries two roundings, rounded down; ``1 -`` it one more, rounded up (see
    :mod:`pacbound.bounds`, "Certified values"). A certificate from bounds on the moments
    passes ``mu1`` rounded down and ``mu2`` rounded up: the C-bound decreases in ``mu1 > 0``
    and increases in ``mu2``. Differentiable like ``cbound``.

    Example:
      >>> c = cbound_upper(0.5, 0.5)
      >>> round(float(c), 4), bool(c >= cbound(0.5, 0.5))
      (0.5, True)
    """
    mu1, mu2 = (jnp.asarray(x, jnp.result_type(x, float)) for x in (mu1, mu2))
    informative = (mu1 > 0) & (mu2 > 0)
    ratio = round_down(mu1**2 / jnp.where(informative, mu2, 1.0), 2.0)
    value = jnp.clip(round_up(1.0 - ratio, 1.0), 0.0, 1.0)
    return jnp.where(informative, value, 1.0)


def _cbound_on_slice(d, e_s, d_s, eps):
    """Largest C-bound over the ``e``-slice of the kl-ball at disagreement ``d``.

    By the chain rule of the KL divergence,
    ``kl(e_S, d_S || e, d) = kl(d_S||d) + (1 - d_S) kl(e_S/(1 - d_S) || e/(1 - d))``, so the
    largest ``e`` in the ball is ``(1 - d) kl^-1_up(e_S / (1 - d_S), (eps - kl(d_S||d)) /
    (1 - d_S))``. The C-bound increases with ``e`` up to the line ``2e + d = 1``, where it is 1.
    (The differentiable estimate; ``_slice_bounds`` certifies.)
    """
    slack = jnp.maximum(eps - binary_kl(d_s, d), 0.0) / (1.0 - d_s)
    e = (1.0 - d) * kl_inv_upper(e_s / (1.0 - d_s), slack)
    margin = 1.0 - 2.0 * jnp.minimum(e, (1.0 - d) / 2.0) - d  # mu1 = 1 - 2e - d >= 0
    on_line = margin <= 0  # C = 1 there, also at d = 1/2 where mu2 = 1 - 2d vanishes
    return jnp.where(on_line, 1.0, 1.0 - margin**2 / jnp.where(on_line, 1.0, 1.0 - 2.0 * d))


class _Ball(NamedTuple):
    """The trinomial ball's data, with ``e_S / (1 - d_S)`` and ``1 / (1 - d_S)`` rounded both
    ways (``_up``, ``_low``)."""

    d_s: jax.Array
    eps: jax.Array
    ratio_up: jax.Array
    ratio_low: jax.Array
    scale_up: jax.Array  # 1 / (1 - d_S) rounded up
    scale_low: jax.Array


def _ball(e_s, d_s, eps) -> _Ball:
    ratio = e_s / (1.0 - d_s)  # two roundings
    scale = 1.0 / (1.0 - d_s)
    return _Ball(
        d_s,
        eps,
        jnp.minimum(round_up(ratio, 2.0), 1.0),
        jnp.maximum(round_down(ratio, 2.0), 0.0),
        round_up(scale, 2.0),
        round_down(scale, 2.0),
    )


def _cbound_low(e, d):
    """A float ``<=`` the C-bound ``1 - (1 - 2e - d)^2 / (1 - 2d)`` at ``e, d`` rounded down
    (1 on the line ``2e + d >= 1``, -inf where ``1 - 2d`` may vanish)."""
    margin = round_up(1.0 - 2.0 * e - d, 2.0)
    denominator = round_down(1.0 - 2.0 * d, 1.0)
    ratio = round_up(margin**2 / jnp.where(denominator > 0, denominator, 1.0), 2.0)
    value = jnp.where(denominator > 0, round_down(1.0 - ratio, 1.0), -jnp.inf)
    return jnp.where(margin <= 0, 1.0, value)


def _level_up(ball: _Ball, kl_low):
    """``(eps - kl(d_S || d)) / (1 - d_S)`` rounded up, from a lower bound ``kl_low``: the
    level of the ``e``-slice's kl-inverse (``_cbound_on_slice``)."""
    return round_up(round_up(jnp.maximum(ball.eps - kl_low, 0.0), 1.0) * ball.scale_up, 1.0)


def _e_max_up(d, ball: _Ball, kl_low):
    """``(1 - d) kl^-1_up(e_S / (1 - d_S), (eps - kl) / (1 - d_S))`` rounded up, for a lower
    bound ``kl_low`` on ``kl(d_S || d)``."""
    return round_up(
        round_up(1.0 - d, 1.0) * kl_inv_upper(ball.ratio_up, _level_up(ball, kl_low)), 1.0
    )


def _slice_bounds(d, ball: _Ball):
    """``(upper, lower)`` floats around the exact slice maximum ``phi(d)`` (``-inf`` below
    where the slice may be empty): ``_cbound_on_slice`` with every step rounded outward, the
    kl-inverse certified from above (upper) and from below (lower)."""
    kl_low, kl_high = binary_kl_interval(ball.d_s, d)
    slack = round_down(ball.eps - kl_high, 1.0)
    level = jnp.maximum(round_down(jnp.maximum(slack, 0.0) * ball.scale_low, 1.0), 0.0)
    ratio = jnp.stack(jnp.broadcast_arrays(ball.ratio_up, ball.ratio_low))
    levels = jnp.stack(jnp.broadcast_arrays(_level_up(ball, kl_low), level))
    roots = kl_inv_upper_interval(ratio, levels)
    e_up = round_up(round_up(1.0 - d, 1.0) * roots[1][0], 1.0)  # one solve for both ends
    upper = cbound_upper(round_down(1.0 - 2.0 * e_up - d, 2.0), round_up(1.0 - 2.0 * d, 1.0))
    e_low = round_down(round_down(1.0 - d, 1.0) * roots[0][1], 1.0)
    lower = jnp.where(slack >= 0, _cbound_low(e_low, d), -jnp.inf)
    return upper, lower


def _bracket_bound(lo, hi, ball: _Ball):
    """A float ``>= sup phi`` over ``[lo, hi]``: the largest ``e`` of the ball on the bracket,
    ``E = (1 - lo) kl^-1_up(.., max slack)``, at the C-bound's best corner,
    ``1 - (1 - 2E - hi)^2 / (1 - 2 lo)`` (C increases in ``e``; tight for a tiny bracket)."""
    nearest = jnp.clip(ball.d_s, lo, hi)
    kl_low = jnp.where(nearest == ball.d_s, 0.0, binary_kl_interval(ball.d_s, nearest)[0])
    e_up = _e_max_up(lo, ball, kl_low)
    return cbound_upper(round_down(1.0 - 2.0 * e_up - hi, 2.0), round_up(1.0 - 2.0 * lo, 1.0))


def _discarded_bound(kept_up, other_low, ratio):
    """By concavity, ``phi`` beyond ``near`` (up to ``far``) is at most
    ``phi(near) + (phi(near) - phi(other)) ratio``, ``ratio = |far - near| / |near - other|``
    for ``other`` on the other side of ``near``: rounded up from ``kept_up >= phi(near)``,
    ``other_low <= phi(other)``."""
    rise = jnp.maximum(round_up(kept_up - other_low, 1.0), 0.0)
    return round_up(kept_up + jnp.where(ratio > 0, ratio * rise, 0.0), 2.0)


class _Golden(NamedTuple):
    lo: jax.Array
    x1: jax.Array
    x2: jax.Array
    hi: jax.Array
    f1: tuple[jax.Array, jax.Array]  # (upper, lower) at x1
    f2: tuple[jax.Array, jax.Array]
    discarded: jax.Array  # a bound on phi over the parts cut off so far


_RATIO = (5.0**0.5 - 1.0) / 2.0


_MAX_CUT_RATIO = 2.5  # golden sections have 1.618; beyond, the floats ran out


def _golden_step(state: _Golden, ball: _Ball) -> _Golden:
    """One golden section, keeping one evaluation; the cut part's bound joins ``discarded``.
    Frozen once the bracket is down to a few floats (no ordered interior points, or cut
    ratios far from the golden one, which would inflate ``_discarded_bound``)."""
    lo, x1, x2, hi, f1, f2, discarded = state
    between = x2 - x1
    left = f1[0] >= f2[0]  # the maximum is not right of x2: cut (x2, hi]
    ratio = round_up(jnp.where(left, hi - x2, x1 - lo) / between, 3.0)
    ordered = (lo <= x1) & (x1 < x2) & (x2 <= hi) & (ratio <= _MAX_CUT_RATIO)
    cut = jnp.where(
        left, _discarded_bound(f2[0], f1[1], ratio), _discarded_bound(f1[0], f2[1], ratio)
    )
    new_lo, new_hi = jnp.where(left, lo, x1), jnp.where(left, x2, hi)
    new = jnp.where(left, new_hi - _RATIO * (new_hi - new_lo), new_lo + _RATIO * (new_hi - new_lo))
    f_new = _slice_bounds(new, ball)
    moved = _Golden(
        new_lo,
        jnp.where(left, new, x2),
        jnp.where(left, x1, new),
        new_hi,
        (jnp.where(left, f_new[0], f2[0]), jnp.where(left, f_new[1], f2[1])),
        (jnp.where(left, f1[0], f_new[0]), jnp.where(left, f1[1], f_new[1])),
        jnp.maximum(discarded, cut),
    )
    return jax.tree.map(lambda a, b: jnp.where(ordered, a, b), moved, state)


def _golden_steps(x: jax.Array) -> int:
    """Golden sections: the bracket shrinks to ``0.618^n`` of the d-range, ~1e-13 in float64
    (60), below float32's resolution (36), where ``_bracket_bound`` is tight."""
    return 60 if jnp.finfo(x.dtype).bits > 32 else 36


def _certified_sup(e_s, d_s, eps) -> tuple[jax.Array, jax.Array]:
    """``(bound, d)``: a float ``>=`` the supremum, and the best ``d`` found (for the gradient).

    Golden sections over the certified d-range of the ball; every part cut off is bounded by
    concavity (``_discarded_bound``), the last bracket directly (``_bracket_bound``), so the
    bound holds whatever the comparisons decided.
    """
    ball = _ball(e_s, d_s, eps)
    lo = kl_inv_lower(d_s, eps)
    hi = jnp.minimum(kl_inv_upper(d_s, eps), 0.5)
    x1, x2 = hi - _RATIO * (hi - lo), lo + _RATIO * (hi - lo)
    upper, lower = _slice_bounds(jnp.stack([x1, x2]), ball)  # both points in one evaluation
    f1, f2 = (upper[0], lower[0]), (upper[1], lower[1])
    start = _Golden(lo, x1, x2, hi, f1, f2, jnp.full_like(lo, -jnp.inf))
    end = lax.fori_loop(0, _golden_steps(e_s), lambda _, s: _golden_step(s, ball), start)
    bound = jnp.maximum(end.discarded, _bracket_bound(end.lo, end.hi, ball))
    best = jnp.where(end.f1[0] >= end.f2[0], end.x1, end.x2)
    return jnp.clip(bound, 0.0, 1.0), best


@jax.jit
def cbound_trinomial_sup(joint_error: ArrayLike, disagreement: ArrayLike, eps: ArrayLike):
    """``sup 1 - (1 - 2e - d)^2 / (1 - 2d)`` over ``kl(e_S, d_S || e, d) <= eps``, ``2e + d <= 1``,
    certified: a float ``>=`` the exact supremum for the given floats.

    The optimization of PAC-Bound 2 (Germain et al., JMLR 2015, Theorem 25). The C-bound is
    concave in ``(e, d)`` (one minus a quadratic-over-linear) and the feasible set is convex,
    so its maximum ``phi(d)`` over each slice of fixed ``d`` (closed form, see
    ``_cbound_on_slice``) is a concave function of ``d``, maximized by golden-section search
    over the ``d`` range of the ball, ``[kl^-1_low(d_S, eps), min(kl^-1_up(d_S, eps), 1/2)]``.

    Certificate: ``phi`` is evaluated with every step rounded outward, from above and from
    below (``_slice_bounds``). Each cut of the search drops the part beyond an evaluated
    ``x2 > x1``, where concavity gives ``phi <= phi(x2) + (phi(x2) - phi(x1)) (hi - x2) /
    (x2 - x1)``; the running maximum of these bounds and a direct bound on the last bracket
    (``_bracket_bound``) is returned, so a wrong comparison (two values closer than their
    rounding) costs tightness, never validity.

    Float32 pays for it: the two-sided slice values are ~30 ulps apart (a chain of kl-inverse,
    slack and C-bound roundings), and the cuts near the maximum add 1.6 times that, so the
    float32 value may exceed the supremum by up to ~1e-5 (float64: ~1e-13).

    The published constraint ``d <= 2 (sqrt(e) - e)`` is not imposed: for ``2e + d < 1`` it is
    equivalent to a non-negative C-bound, and the maximum is at least the empirical C-bound,
    which is non-negative, so it never binds.

    The value's gradient (``jax.grad`` works) is the envelope theorem's: the derivative of the
    slice maximum at the optimal ``d``, held fixed.

    Args:
      joint_error: empirical joint error ``e_S`` (clipped to ``[0, 1]``).
      disagreement: empirical disagreement ``d_S`` (clipped to ``[0, 1/2]``).
      eps: radius of the ball, ``>= 0``.

    Returns:
      The supremum rounded up, in ``[C-bound(e_S, d_S), 1]``.

    Example:
      >>> import jax.numpy as jnp
      >>> e_s, d_s = jnp.float32(0.1), jnp.float32(0.2)  # the C-bound at (e_S, d_S) is 0.4
      >>> round(float(cbound_trinomial_sup(e_s, d_s, jnp.float32(0.0))), 4)  # eps = 0: itself
      0.4
      >>> round(float(cbound_trinomial_sup(e_s, d_s, jnp.float32(0.05))), 3)
      0.776
    """
    e_s, d_s, eps = jnp.broadcast_arrays(
        *(jnp.asarray(x, jnp.result_type(x, float)) for x in (joint_error, disagreement, eps))
    )
    e_s, d_s = jnp.clip(e_s, 0.0, 1.0), jnp.clip(d_s, 0.0, 0.5)
    eps = jnp.maximum(eps, 0.0)
    bound, best = _certified_sup(*(lax.stop_gradient(x) for x in (e_s, d_s, eps)))
    smooth = _cbound_on_slice(lax.stop_gradient(best), e_s, d_s, eps)
    return bound + (smooth - lax.stop_gradient(smooth))  # the value, the envelope's gradient
