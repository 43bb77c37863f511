"""The C-bound in its forms (laviolette2011 Thm 1, roy2016 Thm 1, Germain et al. JMLR 2015).

For any distribution ``Q`` over voters in ``[-1, 1]`` whose margin has first moment
``mu1 > 0``, the risk of the majority vote is at most

.. math:: C_Q = 1 - \\frac{\\mu_1^2}{\\mu_2}
              = 1 - \\frac{(1 - 2 R(G_Q))^2}{1 - 2 d_Q}
              = 1 - \\frac{(1 - 2 e_Q - d_Q)^2}{1 - 2 d_Q},

with ``R(G_Q) = (1 - mu1)/2`` the Gibbs risk, ``d_Q = (1 - mu2)/2`` the disagreement and
``e_Q = R(G_Q) - d_Q / 2`` the joint error. When ``mu1 <= 0`` the bound is the trivial 1.

Concrete statistics are checked (``mu1`` in ``[-1, 1]``, ``mu2``, a risk or a joint error in
``[0, 1]``, a disagreement in ``[0, 1/2]``; ``cbound_upper`` takes bounds on the moments: any
finite ``mu1``, ``mu2 >= 0``) and a ``ValueError`` names the one outside; traced ones are not
(:func:`pacbound._src.validation.domains`).

``cbound_trinomial_sup`` is the worst C-bound over a trinomial kl-ball around the empirical
``(e_S, d_S)``: the optimization inside PAC-Bound 2 of Germain et al. (2015), and with an
optional cap on the joint error that of PAC-Bound 2', certified (a float ``>=`` the exact
supremum; see its docstring). ``cbound_upper`` is the C-bound rounded
up, the last step of every certified C-bound form (:mod:`pacbound._src.bounds`, "Certified
values").
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.kl import (
    binary_kl,
    binary_kl_interval,
    kl_inv_lower,
    kl_inv_upper,
    kl_inv_upper_interval,
    round_down,
    round_up,
    trinomial_kl,
)
from pacbound._src.margins import margin_moments, multiclass_margins
from pacbound._src.validation import FINITE, HALF, NONNEGATIVE, SIGNED, UNIT, domains


@domains(mu1=SIGNED, mu2=UNIT)
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


@domains(gibbs_risk=UNIT, disagreement=HALF)
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


@domains(H=SIGNED, y=SIGNED, q=UNIT)
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


@domains(mu1=FINITE, mu2=NONNEGATIVE)
def cbound_upper(mu1: ArrayLike, mu2: ArrayLike) -> jax.Array:
    """The C-bound ``1 - mu1^2 / mu2`` rounded up: a float ``>=`` its exact value for the given
    floats (1 where ``mu1 <= 0`` or ``mu2 <= 0``), in ``[0, 1]``.

    ``mu1^2 / mu2`` carries two roundings, rounded down; ``1 -`` it one more, rounded up (see
    :mod:`pacbound._src.bounds`, "Certified values"). A certificate from bounds on the moments
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


def _slice_top(d, e_s, d_s, eps):
    """The largest joint error ``e`` on the slice of disagreement ``d`` of the trinomial
    kl-ball: by the chain rule of the KL divergence,
    ``kl(e_S, d_S || e, d) = kl(d_S||d) + (1 - d_S) kl(e_S/(1 - d_S) || e/(1 - d))``, it is
    ``(1 - d) kl^-1_up(e_S / (1 - d_S), (eps - kl(d_S||d)) / (1 - d_S))``. (The
    differentiable estimate; ``_slice_bounds`` certifies.)"""
    slack = jnp.maximum(eps - binary_kl(d_s, d), 0.0) / (1.0 - d_s)
    return (1.0 - d) * kl_inv_upper(e_s / (1.0 - d_s), slack)


def _cbound_at(e, d):
    """The C-bound ``1 - (1 - 2e - d)^2 / (1 - 2d)`` at joint error ``e``, disagreement ``d``."""
    return cbound_from_risk(e + d / 2.0, d)


def _cbound_on_slice(d, e_s, d_s, eps):
    """Largest C-bound over the ``e``-slice of the kl-ball at disagreement ``d``: at the
    slice's top ``e`` (``_slice_top``), as the C-bound increases with ``e`` up to the line
    ``2e + d = 1``, where it is 1."""
    e = _slice_top(d, e_s, d_s, eps)
    margin = 1.0 - 2.0 * jnp.minimum(e, (1.0 - d) / 2.0) - d  # mu1 = 1 - 2e - d >= 0
    on_line = margin <= 0  # C = 1 there, also at d = 1/2 where mu2 = 1 - 2d vanishes
    return jnp.where(on_line, 1.0, 1.0 - margin**2 / jnp.where(on_line, 1.0, 1.0 - 2.0 * d))


class _Ball(NamedTuple):
    """The trinomial ball's data, with ``e_S / (1 - d_S)`` and ``1 / (1 - d_S)`` rounded both
    ways (``_up``, ``_low``), and the cap on the joint error (``None``: no cap)."""

    d_s: jax.Array
    eps: jax.Array
    ratio_up: jax.Array
    ratio_low: jax.Array
    scale_up: jax.Array  # 1 / (1 - d_S) rounded up
    scale_low: jax.Array
    cap: jax.Array | None


def _ball(e_s, d_s, eps, cap) -> _Ball:
    ratio = e_s / (1.0 - d_s)  # two roundings
    scale = 1.0 / (1.0 - d_s)
    return _Ball(
        d_s,
        eps,
        jnp.minimum(round_up(ratio, 2.0), 1.0),
        jnp.maximum(round_down(ratio, 2.0), 0.0),
        round_up(scale, 2.0),
        round_down(scale, 2.0),
        cap,
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


def _slice_bounds(d, ball: _Ball):
    """``(upper, lower, root)``: floats around the exact slice maximum ``phi(d)`` (``-inf``
    below where the slice may be empty), ``_cbound_on_slice`` with every step rounded outward,
    the kl-inverse certified from above (upper) and from below (lower), the top ``e`` capped;
    and ``root``, the certified upper kl-inverse (the slice's top ``e`` is at most ``(1 - d)
    root``, uncapped), which the bracket bound and the gradient read."""
    kl_low, kl_high = binary_kl_interval(ball.d_s, d)
    kl_low = jnp.where(d == ball.d_s, 0.0, kl_low)  # kl(d_S || d_S) = 0
    slack = round_down(ball.eps - kl_high, 1.0)
    level = jnp.maximum(round_down(jnp.maximum(slack, 0.0) * ball.scale_low, 1.0), 0.0)
    ratios = [ball.ratio_up, ball.ratio_low]
    levels = [_level_up(ball, kl_low), level]
    if ball.cap is not None:  # the slice's lowest e, from the upper root of 1 - ratio
        ratios.append(jnp.maximum(round_down(1.0 - ball.ratio_up, 1.0), 0.0))
        levels.append(level)
    ends = jnp.broadcast_arrays(*ratios, *levels)  # each ratio beside its level, at every d
    roots = kl_inv_upper_interval(jnp.stack(ends[: len(ratios)]), jnp.stack(ends[len(ratios) :]))
    e_up = round_up(round_up(1.0 - d, 1.0) * roots[1][0], 1.0)  # one solve for every end
    e_low = round_down(round_down(1.0 - d, 1.0) * roots[0][1], 1.0)
    feasible = slack >= 0
    if ball.cap is not None:
        e_up, e_low = jnp.minimum(e_up, ball.cap), jnp.minimum(e_low, ball.cap)
        lowest = round_up(round_up(1.0 - d, 1.0) * round_up(1.0 - roots[0][2], 1.0), 1.0)
        feasible = feasible & (lowest <= ball.cap)  # then min(e_low, cap) is in the slice
    upper = cbound_upper(round_down(1.0 - 2.0 * e_up - d, 2.0), round_up(1.0 - 2.0 * d, 1.0))
    lower = jnp.where(feasible, _cbound_low(e_low, d), -jnp.inf)
    return upper, lower, roots[1][0]


def _bracket_bound(lo, hi, root, ball: _Ball):
    """A float ``>= sup phi`` over ``[lo, hi]``, from ``root``, the certified kl-inverse of the
    slice at the point of ``[lo, hi]`` nearest ``d_S`` (the largest slack on the bracket, so
    ``E = (1 - lo) root`` bounds every ``e`` of the ball there): the C-bound at its best corner,
    ``1 - (1 - 2E - hi)^2 / (1 - 2 lo)`` (C increases in ``e``; tight for a tiny bracket)."""
    e_up = round_up(round_up(1.0 - lo, 1.0) * root, 1.0)
    e_up = e_up if ball.cap is None else jnp.minimum(e_up, ball.cap)
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
    f1: tuple[jax.Array, jax.Array, jax.Array]  # _slice_bounds at x1
    f2: tuple[jax.Array, jax.Array, jax.Array]
    discarded: jax.Array  # a bound on phi over the parts cut off so far
    root: jax.Array  # the last evaluation's root (the bracket's, after the search)


_RATIO = (5.0**0.5 - 1.0) / 2.0


_MAX_CUT_RATIO = 2.5  # golden sections have 1.618; beyond, the floats ran out


def _golden_cut(state: _Golden, f_new) -> _Golden:
    """One golden section with ``f_new`` evaluated at its new point (``_golden_point``); the
    cut part's bound joins ``discarded``. Frozen once the bracket is down to a few floats (no
    ordered interior points, or cut ratios far from the golden one, which would inflate
    ``_discarded_bound``)."""
    lo, x1, x2, hi, f1, f2, discarded, _ = state
    left, new = _golden_point(state)
    ratio = round_up(jnp.where(left, hi - x2, x1 - lo) / (x2 - x1), 3.0)
    ordered = (lo <= x1) & (x1 < x2) & (x2 <= hi) & (ratio <= _MAX_CUT_RATIO)
    cut = jnp.where(
        left, _discarded_bound(f2[0], f1[1], ratio), _discarded_bound(f1[0], f2[1], ratio)
    )
    moved = state._replace(
        lo=jnp.where(left, lo, x1),
        x1=jnp.where(left, new, x2),
        x2=jnp.where(left, x1, new),
        hi=jnp.where(left, x2, hi),
        f1=_where_each(left, f_new, f2),
        f2=_where_each(left, f1, f_new),
        discarded=jnp.maximum(discarded, cut),
    )
    return jax.tree.map(lambda a, b: jnp.where(ordered, a, b), moved, state)


def _where_each(
    left: jax.Array, a: tuple[jax.Array, ...], b: tuple[jax.Array, ...]
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``jnp.where(left, a_i, b_i)`` for the three slice values (lower, upper, top)."""
    return (
        jnp.where(left, a[0], b[0]),
        jnp.where(left, a[1], b[1]),
        jnp.where(left, a[2], b[2]),
    )


def _golden_point(state: _Golden) -> tuple[jax.Array, jax.Array]:
    """``(left, new)``: whether the section keeps the left part (the maximum is not right of
    ``x2``: cut ``(x2, hi]``), and its new interior point."""
    left = state.f1[0] >= state.f2[0]
    new_lo, new_hi = jnp.where(left, state.lo, state.x1), jnp.where(left, state.x2, state.hi)
    width = new_hi - new_lo
    return left, jnp.where(left, new_hi - _RATIO * width, new_lo + _RATIO * width)


def _search_step(i, state: _Golden, ball: _Ball, last: int) -> _Golden:
    """Step ``i`` of the search, one slice evaluation each (so the kl-inverses appear once in
    the compiled program): ``x1`` (step 0), ``x2`` (1), a golden section (2 to ``last - 1``),
    then the point of the final bracket nearest ``d_S``, whose root bounds the bracket."""
    nearest = jnp.clip(ball.d_s, state.lo, state.hi)
    point = jnp.where(i == 0, state.x1, jnp.where(i == 1, state.x2, _golden_point(state)[1]))
    f_new = _slice_bounds(jnp.where(i == last, nearest, point), ball)
    cases = [
        state._replace(f1=f_new),
        state._replace(f2=f_new),
        _golden_cut(state, f_new),
        state._replace(root=f_new[2]),
    ]
    case = jnp.where(i < 2, i, jnp.where(i == last, 3, 2))
    return jax.tree.map(lambda *xs: lax.select_n(case, *xs), *cases)


def _golden_steps(x: jax.Array) -> int:
    """Golden sections: the bracket shrinks to ``0.618^n`` of the d-range, ~1e-13 in float64
    (60), below float32's resolution (36), where ``_bracket_bound`` is tight."""
    return 60 if jnp.finfo(x.dtype).bits > 32 else 36


def _certified_sup(e_s, d_s, eps, cap) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(bound, d, e)``: a float ``>=`` the supremum, the best ``d`` found and the top ``e``
    of its slice (uncapped, rounded up; for the gradient).

    Golden sections over the certified d-range of the ball; every part cut off is bounded by
    concavity (``_discarded_bound``), the last bracket directly (``_bracket_bound``), so the
    bound holds whatever the comparisons decided. One ``lax.fori_loop`` evaluates every point
    (``_search_step``).
    """
    ball = _ball(e_s, d_s, eps, cap)
    lo = kl_inv_lower(d_s, eps)
    hi = jnp.minimum(kl_inv_upper(d_s, eps), 0.5)
    x1, x2 = hi - _RATIO * (hi - lo), lo + _RATIO * (hi - lo)
    unknown = (jnp.zeros_like(lo),) * 3
    start = _Golden(lo, x1, x2, hi, unknown, unknown, jnp.full_like(lo, -jnp.inf), unknown[0])
    last = _golden_steps(e_s) + 2
    end = lax.fori_loop(0, last + 1, lambda i, s: _search_step(i, s, ball, last), start)
    bound = jnp.maximum(end.discarded, _bracket_bound(end.lo, end.hi, end.root, ball))
    left = end.f1[0] >= end.f2[0]
    best = jnp.where(left, end.x1, end.x2)
    top = (1.0 - best) * jnp.where(left, end.f1[2], end.f2[2])
    return jnp.clip(bound, 0.0, 1.0), best, top


def _multipliers(e, top, d, e_s, d_s, eps, cap):
    """KKT multipliers ``(lam_kl, lam_cap)`` of ``max C(e, d)`` under ``g1 = kl(e_S, d_S || e, d)
    - eps <= 0`` and ``g2 = e - cap <= 0`` at the optimum ``(e, d)``: ``grad C = lam_kl grad g1
    + lam_cap grad g2``. Where the cap (nearly) binds, both from the 2x2 system (exact at the
    kink where both bind, ``lam_kl ~ 0`` when only the cap does, read from ``top``, the slice's
    uncapped top ``e``); elsewhere the kl constraint alone (``lam_cap = 0``)."""
    c_e, c_d = jax.grad(lambda e, d: jnp.sum(_cbound_at(e, d)), argnums=(0, 1))(e, d)
    k_e, k_d = jax.grad(lambda e, d: jnp.sum(trinomial_kl(e_s, d_s, e, d)), (0, 1))(e, d)
    near_cap = top >= cap * (1.0 - jnp.sqrt(jnp.finfo(e.dtype).eps))
    lam_both = c_d / jnp.where(k_d != 0, k_d, 1.0) * (k_d != 0)
    lam_kl = jnp.where(near_cap, lam_both, c_e / jnp.where(k_e > 0, k_e, 1.0) * (k_e > 0))
    lam_cap = jnp.where(near_cap, c_e - lam_both * k_e, 0.0)
    return lam_kl, lam_cap


@jax.custom_jvp
def _differentiated_as(value: jax.Array, carrier: jax.Array) -> jax.Array:
    """``value``, with ``carrier``'s derivative added to its own: a certified value carrying
    the envelope theorem's gradient. ``carrier`` is computed only where a derivative is taken
    (``value + (carrier - stop_gradient(carrier))`` would keep it, a kl-inverse among its
    steps, in every compiled program)."""
    return value


@_differentiated_as.defjvp
def _differentiated_as_jvp(primals, tangents):
    return _differentiated_as(*primals), tangents[0] + tangents[1]


def _capped_envelope(d, top, e_s, d_s, eps, cap):
    """The capped supremum's Lagrangian, whose derivative in ``(e_S, d_S, eps, cap)`` is the
    constrained envelope theorem's ``lam_kl (d eps - d kl(e_S, d_S || e, d)) + lam_cap d cap``
    at the optimum ``(e, d)`` (the maximum often sits on the kink where the cap starts to bind,
    so holding ``d`` fixed, the unconstrained envelope, would be wrong there). ``d`` and
    ``top`` (the slice's uncapped top ``e``) come from the search (``_certified_sup``)."""
    fixed = [lax.stop_gradient(x) for x in (e_s, d_s, eps, cap)]
    e = jnp.minimum(top, fixed[3])
    lam_kl, lam_cap = _multipliers(e, top, d, *fixed)
    return lam_kl * (eps - trinomial_kl(e_s, d_s, e, d)) + lam_cap * cap


@domains(joint_error=UNIT, disagreement=HALF, eps=NONNEGATIVE, joint_error_cap=UNIT)
@jax.jit
def cbound_trinomial_sup(
    joint_error: ArrayLike,
    disagreement: ArrayLike,
    eps: ArrayLike,
    joint_error_cap: ArrayLike | None = None,
) -> jax.Array:
    """``sup 1 - (1 - 2e - d)^2 / (1 - 2d)`` over ``kl(e_S, d_S || e, d) <= eps``, ``2e + d <= 1``
    (and ``e <= cap`` when ``joint_error_cap`` is given), certified: a float ``>=`` the exact
    supremum for the given floats.

    The optimization of PAC-Bound 2 (Germain et al., JMLR 2015, Theorem 25), and with the cap
    that of PAC-Bound 2' (:func:`pacbound.bounds.pac_bound_2_prime`). The C-bound
    is concave in ``(e, d)`` (one minus a quadratic-over-linear) and increases with ``e`` up to
    the line ``2e + d = 1``, and the feasible set is convex, so its maximum ``phi(d)`` over each
    slice of fixed ``d`` (closed form, at ``min(cap, top e of the slice)``, see
    ``_cbound_on_slice``) is a concave function of ``d``, maximized by golden-section search
    over the ``d`` range of the ball, ``[kl^-1_low(d_S, eps), min(kl^-1_up(d_S, eps), 1/2)]``.

    Certificate: ``phi`` is evaluated with every step rounded outward, from above and from
    below (``_slice_bounds``; with a cap, the value below only where the slice certainly
    reaches below the cap). Each cut of the search drops the part beyond an evaluated
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

    The value's gradient (``jax.grad`` works) is the envelope theorem's: without a cap, the
    derivative of the slice maximum at the optimal ``d``, held fixed; with one, the KKT
    multipliers' of the kl-ball and the cap at the optimum (``_capped_envelope``).

    Args:
      joint_error: empirical joint error ``e_S`` (clipped to ``[0, 1]``).
      disagreement: empirical disagreement ``d_S`` (clipped to ``[0, 1/2]``).
      eps: radius of the ball, ``>= 0``.
      joint_error_cap: an upper bound on ``e``, ``>= e_S`` (``None``: no cap).

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
    given: tuple[ArrayLike, ...] = (joint_error, disagreement, eps)
    given += () if joint_error_cap is None else (joint_error_cap,)
    e_s, d_s, eps, *capped = jnp.broadcast_arrays(
        *(jnp.asarray(x, jnp.result_type(*given, float)) for x in given)
    )
    e_s, d_s = jnp.clip(e_s, 0.0, 1.0), jnp.clip(d_s, 0.0, 0.5)
    eps = jnp.maximum(eps, 0.0)
    cap = capped[0] if capped else None
    fixed = [None if x is None else lax.stop_gradient(x) for x in (e_s, d_s, eps, cap)]
    bound, best, top = _certified_sup(*fixed)
    if cap is not None:
        return _differentiated_as(bound, _capped_envelope(best, top, e_s, d_s, eps, cap))
    return _differentiated_as(bound, _cbound_on_slice(best, e_s, d_s, eps))


@domains(votes=NONNEGATIVE, q=UNIT)
def multiclass_cbound(
    votes: ArrayLike,
    y: ArrayLike,
    q: ArrayLike,
    num_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
    relaxed: bool = False,
) -> jax.Array:
    """Empirical multiclass C-bound of the vote ``(votes, q)`` (Laviolette et al. 2017).

    Theorem (Laviolette, Morvant, Ralaivola, Roy, Neurocomputing 2017, multiclass C-bound):
    for any distribution, if ``E[M_Q] > 0`` then ``R(B_Q) <= P(M_Q <= 0) <= 1 - E[M_Q]^2 /
    E[M_Q^2]``, with the multiclass margin of :func:`~pacbound.margins.multiclass_margins`
    (Cantelli-Chebyshev); it is 1 (no information) where ``E[M_Q] <= 0``.

    ``relaxed=True`` gives the relaxation from the Gibbs risk ``r`` and joint error ``e``
    (Viallard et al., ECML-PKDD 2021, §2, after Laviolette et al. 2017): the vote errs only if
    ``w(x) = Q(h(x) != y) >= 1/2``, and ``1 - 2w`` has moments ``1 - 2r`` and
    ``1 - 4r + 4e``, so for any ``K`` and ``r < 1/2``

    .. math:: R(B_Q) \\le 1 - (1 - 2r)^2 / (1 - 4r + 4e) = 1 - (1 - 2r)^2 / (1 - 2 d'),

    ``d' = 2 (r - e)`` (the disagreement when ``K = 2``). Its PAC-Bayes form (certified
    outward) is :func:`pacbound.bounds.pac_bound_1` at ``(r_S, d'_S)``: ``d'`` is the
    ``Q^2``-mean of the pairwise 0-1 loss "exactly one of two voters errs", so PAC-Bound 1's
    proof holds verbatim. To certify a multiclass posterior with every registered margin-moment
    bound (PAC-Bound 1 and 2, Seeger, TND, CCTND, ...), pass the statistics'
    ``correct_margins`` and ``KL(Q||P)`` to :func:`pacbound.certify.certify_margins` (its
    ``majority_vote_risk`` is then ``P(w >= 1/2)``, not the multiclass vote's risk). The
    relaxation is not ordered with the moment form for ``K > 2`` (either can be smaller).

    Example:
      >>> import jax.numpy as jnp
      >>> votes = jnp.array([[0, 0, 1], [2, 1, 1], [2, 2, 2], [0, 1, 2]])
      >>> y = jnp.array([0, 1, 2, 2])
      >>> q = jnp.ones(3) / 3
      >>> round(float(multiclass_cbound(votes, y, q, num_classes=3)), 4)  # >= the risk 0.25
      0.4318
      >>> round(float(multiclass_cbound(votes, y, q, num_classes=3, relaxed=True)), 4)
      0.6667
    """
    s = multiclass_margins(votes, y, q, num_classes, sample_weight)
    if relaxed:
        return cbound_from_risk(jnp.clip(s.gibbs_risk, 0.0, 1.0), jnp.clip(s.one_error, 0.0, 0.5))
    return cbound(s.mu1, jnp.clip(s.mu2, 0.0, 1.0))
