"""Kullback-Leibler terms of PAC-Bayes bounds, with gradients that stay finite at the edges.

* ``kl_divergence(q, p)``: ``KL(Q||P)`` between discrete distributions.
* ``binary_kl(q, p)`` and ``trinomial_kl(q1, q2, p1, p2)``: the divergence between Bernoulli
  (resp. three-outcome) distributions used by Seeger's bound and by PAC-Bound 2 of Germain et
  al. (JMLR 2015); ``binary_kl_interval(q, p)`` encloses the exact ``binary_kl``.
* ``kl_inv_upper`` / ``kl_inv_lower``: the inverses of ``binary_kl`` in its second argument,
  certified (below), by a fixed number of Newton steps inside ``lax`` and a ``custom_jvp``
  that gives the implicit-function derivative in both arguments (never a derivative of the
  iterations); ``kl_inv_upper_interval`` also returns a float just below the root.
* ``round_up`` / ``round_down``: a float moved outward past a counted number of roundings,
  the primitive of every certified value in :mod:`pacbound._src.bounds`.
* ``gaussian_mixture_kl_bound`` (roy2016 §3) and ``quasi_uniform_kl`` (germain2009 §4.2).

Concrete arguments are checked (a probability, ``q`` or ``p``, in ``[0, 1]``; a level ``eps``
``>= 0``; never NaN) and a ``ValueError`` names the one outside; traced ones are not
(:func:`pacbound._src.validation.domains`).

Every ``0 log 0`` is 0. Where the true derivative is infinite (``d/dq kl`` at ``q = 0``,
``d/deps kl_inv_upper`` at ``eps = 0``) the derivative returned is large and finite, computed
with logs floored at the dtype's ``tiny``.

Certified kl-inverses
---------------------
"Certified" means: for the given floats ``q, eps`` (exact real numbers), ``kl_inv_upper``
returns a float ``>=`` the exact root ``p*`` of ``kl(q||p) = eps`` in ``[q, 1]`` and
``kl_inv_lower`` a float ``<=`` the exact root in ``[0, q]``, in float32 and float64 alike;
a few ulps away (at most 7 in the tests, median under 1; the lower root far below ``q`` is
``~ q e^(-eps/q)`` and loses ``eps / q`` times more).

Error model. ``+ - * /`` and ``sqrt`` round to nearest (relative error at most the unit
roundoff ``u``: ``2^-24`` in float32, ``2^-53`` in float64); ``log``, ``log1p`` and ``exp`` are
within ``4 u`` (measured on XLA:CPU: log 2.0 u in float32 and 1.0 u in float64, log1p 2.3 u on
``[1, inf)``; the CUDA libdevice bounds are 1 ulp); ``log1p`` is never used on
``(-1/2, 1.5)``, where XLA's float64 ``log1p`` reaches 240 u near ``-0.41``. Subnormals may be
flushed to zero: nothing certified depends on them (absolute margins of ``tiny``).

The kl evaluation. With ``d = p - q`` (exact: it defines ``p``),
``kl(q||p) = q h(d / q) + (1 - q) h(-d / (1 - q))``, ``h(t) = t - log1p(t) >= 0``: two
non-negative terms, each computed without cancellation and with a bound on its rounding error
(``_weighted_h_near``: an atanh series for ``-1/2 <= t <= 1.5``, 8 u; ``_weighted_h_far`` and
``_weighted_h_low``: the logs beyond, with error bounds that grow with the log, evaluated per
element). ``1 - q`` is carried exactly as two floats (TwoSum), ``p`` and ``1 - p`` exactly
where a log reads them (Sterbenz's lemma).

The verified outward step. Newton's method (two steps in the logit from a closed-form start,
then one (float32) or two (float64) in ``d``, or from the series of the root when ``eps`` is
small) gives an estimate ``a = |d|``. One more evaluation ``F(a) = kl(q||q +- a)`` with its
error bound ``E`` certifies both sides, because ``F`` is convex and increasing in ``a``:

* the tangent at ``a`` lies below ``F``, so ``a + (eps - F(a) + E) / F'(a)`` (the slope
  rounded towards the smaller step) is ``>= a*``: the certified inverse, ``q +- a`` rounded
  outward exactly (TwoSum, then one float outward where it rounded the wrong way);
* the chord from the origin lies above ``F`` on ``[0, a]``, so ``a eps / (F(a) + E) <= a*``:
  the inner end of ``kl_inv_upper_interval``.

No comparison decides validity: a poor estimate only costs tightness. The lower root far below
``q`` (``p < q / 2``) is carried in ``p`` itself (``d`` cannot hold its digits), with the same
tangent and chord. Error-free transformations pass ``lax.optimization_barrier``: XLA's
algebraic simplifier reassociates floats (``(1 - q) - 1`` becomes ``-q`` under ``jit``).

Derivatives use the estimate of ``d`` (full relative precision, so ``d/deps = p (1 - p) / d``
stays accurate as ``eps -> 0``), at the exact root, not at the outward float.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import xlogy
from jax.typing import ArrayLike

from pacbound._src.validation import FINITE, NONNEGATIVE, UNIT, domains

__all__ = [
    "binary_kl",
    "binary_kl_interval",
    "gaussian_mixture_kl_bound",
    "kl_divergence",
    "kl_inv_lower",
    "kl_inv_upper",
    "kl_inv_upper_interval",
    "quasi_uniform_kl",
    "round_down",
    "round_up",
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


@domains(q=UNIT, p=UNIT)
def kl_divergence(q: ArrayLike, p: ArrayLike, axis: int = -1) -> jax.Array:
    """``KL(Q||P) = sum_i q_i ln(q_i / p_i)`` for discrete distributions along ``axis``.

    Example:
      >>> import jax.numpy as jnp
      >>> q, p = jnp.array([0.5, 0.5]), jnp.array([0.25, 0.75])
      >>> round(float(kl_divergence(q, p)), 4), float(kl_divergence(q, q))
      (0.1438, 0.0)
    """
    q, p = _floats(q, p)
    return jnp.sum(_kl_term(q, p), axis=axis)


@domains(q=UNIT, p=UNIT)
def binary_kl(q: ArrayLike, p: ArrayLike) -> jax.Array:
    """``kl(q||p) = q ln(q/p) + (1-q) ln((1-q)/(1-p))``, Bernoulli divergence (Seeger 2002).

    Example:
      >>> round(float(binary_kl(0.5, 0.25)), 4)  # 0.5 ln 2 + 0.5 ln(2/3)
      0.1438
      >>> round(float(binary_kl(0.0, 0.5)), 4)  # ln 2
      0.6931
    """
    q, p = _floats(q, p)
    return _kl_term(q, p) + _kl_term(1.0 - q, 1.0 - p)


@domains(q1=UNIT, q2=UNIT, p1=UNIT, p2=UNIT)
def trinomial_kl(q1: ArrayLike, q2: ArrayLike, p1: ArrayLike, p2: ArrayLike) -> jax.Array:
    """``kl((q1, q2, 1-q1-q2) || (p1, p2, 1-p1-p2))``, three-outcome divergence.

    Used by PAC-Bound 2 (Germain et al., JMLR 2015) with ``(q1, q2)`` the empirical joint error
    and disagreement.

    Example:
      >>> round(float(trinomial_kl(0.5, 0.0, 0.25, 0.0)), 4)  # = binary_kl(0.5, 0.25)
      0.1438
      >>> float(trinomial_kl(0.2, 0.3, 0.2, 0.3))
      0.0
    """
    q1, q2, p1, p2 = _floats(q1, q2, p1, p2)
    rest = _kl_term(1.0 - q1 - q2, 1.0 - p1 - p2)
    return _kl_term(q1, p1) + _kl_term(q2, p2) + rest


# ----------------------------------------------------------------------------------------
# kl near p = q: kl(q || q + d) = A + B, each term >= 0, with a bound on its rounding error
# ----------------------------------------------------------------------------------------

# Relative error of the library's log / log1p / exp / sqrt in units of the roundoff u (2 ulp;
# measured on XLA:CPU: log 2.0 u in float32, 1.0 u in float64; log1p 2.3 u on [1, inf)).
_LIBRARY_ERROR = 4.0
_NEAR_ERROR = 8.0  # relative error bound of ``_weighted_h_near``, in u (see its docstring)
_NEAR_TOP = 1.5  # ``_weighted_h_near`` serves -1/2 <= t <= 1.5, so |s| <= 3/7
_SOLVER_SLOPE_ERROR = 16.0  # relative error bound of the computed slope dkl/dp, in u


def _roundoff(x: jax.Array) -> float:
    """Unit roundoff ``u`` of ``x``'s dtype (half its machine epsilon)."""
    return float(jnp.finfo(x.dtype).eps) / 2.0


def _series_length(x: jax.Array) -> int:
    """Terms of ``S(z)`` in ``_weighted_h_near``: for ``z <= 9/49`` the tail
    ``z^n / ((2n + 3)(1 - z))`` moves the value by less than ``u / 20``."""
    return 21 if jnp.finfo(x.dtype).bits > 32 else 10


# Error-free transformations need every rounding to happen as written: XLA's algebraic
# simplifier reassociates float arithmetic (it turns ``(1 - q) - 1`` into ``-q``), so their
# intermediate sums pass an optimization barrier, which it cannot see through.
_exact = lax.optimization_barrier


def _two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e = a + b`` exactly (Knuth's TwoSum)."""
    s = _exact(a + b)
    a_part = _exact(s - b)
    b_part = _exact(s - a_part)
    return s, (a - a_part) + (b - b_part)


def _one_minus(q: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(hi, lo)`` with ``hi + lo = 1 - q`` exactly."""
    return _two_sum(jnp.ones_like(q), -q)


def _outward(x: ArrayLike, roundings: float | jax.Array, direction: float) -> jax.Array:
    x = jnp.asarray(x)
    value = lax.stop_gradient(x)
    relative = jnp.where(jnp.isfinite(value), jnp.abs(value) * (roundings * _roundoff(value)), 0.0)
    margin = relative + jnp.finfo(value.dtype).tiny  # inf stays inf (not inf * 0 = nan)
    moved = jnp.nextafter(value + direction * margin, direction * jnp.inf)
    return jnp.where(jnp.isfinite(value), moved + (x - value), moved)  # x's derivative


def round_up(x: ArrayLike, roundings: float | jax.Array) -> jax.Array:
    """A float ``>= v`` for any ``v`` that ``x`` approximates to ``roundings`` relative
    roundings (``|x - v| <= roundings * u |x|``, ``u`` the unit roundoff of ``x``'s dtype) and
    underflow: ``x + roundings * u |x| + tiny``, then one float up (which covers that sum's own
    rounding). Differentiable with ``x``'s derivative.

    Example:
      >>> import jax.numpy as jnp
      >>> x = jnp.float32(0.1)
      >>> bool(round_up(x, 2.0) > x), str(round_up(x, 2.0).dtype)
      (True, 'float32')
    """
    return _outward(x, roundings, 1.0)


def round_down(x: ArrayLike, roundings: float | jax.Array) -> jax.Array:
    """A float ``<= v`` for any ``v`` that ``x`` approximates; see ``round_up``.

    Example:
      >>> import jax.numpy as jnp
      >>> x = jnp.float32(0.1)
      >>> bool(round_down(x, 2.0) < x), bool(round_down(x, 2.0) > 0.0999)
      (True, True)
    """
    return _outward(x, roundings, -1.0)


class _Term(NamedTuple):
    value: jax.Array
    error: jax.Array  # bound on |computed value - exact value|


def _select(cond: jax.Array, a: _Term, b: _Term) -> _Term:
    return _Term(*(jnp.where(cond, x, y) for x, y in zip(a, b)))


def _weighted_h_near(w: jax.Array, w_lo: jax.Array | float, x: jax.Array) -> _Term:
    """``w h(x / w)``, ``h(t) = t - log1p(t)``, for ``-1/2 <= t = x / w <= 1.5``, without
    cancellation; ``w + w_lo`` is the exact weight.

    With ``D = 2w + x`` and ``s = x / D`` (``|s| <= 3/7``), ``log1p(t) = 2 atanh(s)`` gives
    ``w h = x^2 / D - 2 w s^3 S(s^2)``, ``S(z) = sum_k z^k / (2k + 3)``; the second term is at
    most 14% of the value. Error, in units of u: ``D`` 2 (``w_lo`` folded in), ``s`` 3, the
    first term ``x s`` 4, ``s^3`` 11, ``S`` 4, the second term 18; the value
    ``1.10 * 4 + 0.14 * 18 + 1 < 8 = _NEAR_ERROR``.
    """
    u = _roundoff(w)
    denom = (2.0 * w + x) + 2.0 * w_lo
    denom = jnp.where(denom > 0, denom, 1.0)
    # s = x / D once per reader, each copy exactly x / D (sign flips are exact): XLA compiles a
    # divide read by several operations as a kernel of its own, while each copy fuses into its
    # reader (the kl-inverses compile a third fewer kernels)
    s, s_squared, s_weighted = x / denom, (-x) / (-denom), -((-x) / denom)
    z = s_squared * s_squared
    n = _series_length(w)
    series = jnp.full_like(z, 1.0 / (2 * n + 1))
    for k in range(n - 2, -1, -1):
        series = series * z + 1.0 / (2 * k + 3)
    value = x * s - 2.0 * (w * s_weighted) * z * series  # x * s = x^2 / D without underflow
    return _Term(value, _NEAR_ERROR * u * value)


def _weighted_h_far(w: jax.Array, x: jax.Array) -> _Term:
    """``w h(x / w) = x - w log1p(x / w)`` for ``x / w > 1.5`` (``x`` when ``w = 0``).

    Error: ``t = x / w`` carries 2u (``w``'s own error included), which moves ``log1p`` by at
    most 2u; ``log1p`` adds ``_LIBRARY_ERROR`` u relative, the product 2u, the difference u.
    """
    u = _roundoff(w)
    l1 = jnp.log1p(x / jnp.maximum(w, jnp.finfo(w.dtype).tiny))
    value = x - w * l1
    return _Term(value, u * (w * (2.0 + (_LIBRARY_ERROR + 2.0) * l1) + value))


def _weighted_h_low(w: jax.Array, x: jax.Array, rest: jax.Array) -> _Term:
    """``w h(x / w) = x - w ln(rest / w)`` for ``x / w < -1/2``, from ``rest = w + x`` given to
    relative u (``log1p(x / w)`` would lose ``rest``'s digits as ``x / w -> -1``).

    Error: ``rest / w`` carries 3u, so the log 3u absolute plus ``_LIBRARY_ERROR`` u relative;
    the product 2u, the difference u.
    """
    u = _roundoff(w)
    safe_w = jnp.where(w > 0, w, 1.0)
    log_ratio = jnp.log(rest / safe_w)
    value = x - w * log_ratio
    return _Term(value, u * (w * (3.0 + (_LIBRARY_ERROR + 2.0) * jnp.abs(log_ratio)) + value))


def _kl_from_gap(q, one_minus_q, d, rests, upper: bool) -> _Term:
    """``kl(q || q + d) = q h(d / q) + (1 - q) h(-d / (1 - q))`` and its error bound.

    ``upper`` (``d >= 0``) or not (``d <= 0``) decides which branch each term may need;
    ``one_minus_q = (hi, lo)`` is ``1 - q`` exactly; ``rests = (p, 1 - p)`` to relative u. ``d``
    is exact: it defines ``p = q + d``.
    """
    c_hi, c_lo = one_minus_q
    p, one_minus_p = rests
    if upper:
        a = _select(d <= _NEAR_TOP * q, _weighted_h_near(q, 0.0, d), _weighted_h_far(q, d))
        b = _select(
            d <= c_hi / 2.0,
            _weighted_h_near(c_hi, c_lo, -d),
            _weighted_h_low(c_hi, -d, one_minus_p),
        )
    else:
        a = _select(-d <= q / 2.0, _weighted_h_near(q, 0.0, d), _weighted_h_low(q, d, p))
        b = _select(
            -d <= _NEAR_TOP * c_hi, _weighted_h_near(c_hi, c_lo, -d), _weighted_h_far(c_hi, -d)
        )
    value = a.value + b.value
    tiny = jnp.finfo(q.dtype).tiny  # covers underflow in either term
    return _Term(value, a.error + b.error + _roundoff(q) * value + 4.0 * tiny)


def _rests(q, one_minus_q, d):
    """``(p, 1 - p)`` for ``p = q + d``, each to relative u (``q + d`` exact and ``c_hi - d``
    exact by Sterbenz's lemma where the logs read them)."""
    c_hi, c_lo = one_minus_q
    return _exact(q + d), _exact(c_hi - d) + c_lo


def _kl_slope(d, rests):
    """``d kl(q||p) / dp = (p - q) / (p (1 - p))`` at ``p = q + d``."""
    p, one_minus_p = rests
    return d / (p * one_minus_p)


# ----------------------------------------------------------------------------------------
# the solver: a start, Newton steps, a certified bracket
# ----------------------------------------------------------------------------------------

_LOGIT_STEPS = 2  # Newton steps in the logit from the closed-form start


def _gap_steps(x: jax.Array) -> int:
    """Newton steps in ``d = p - q`` after the logit steps (or the series start): one reaches
    float32's precision on every test input, two float64's (quadratic convergence)."""
    return 2 if jnp.finfo(x.dtype).bits > 32 else 1


_SERIES_RADIUS = 0.05  # the series start is used where sqrt(2 q (1-q) eps) < 0.05 min(q, 1-q)


def _upper_start_logit(q: jax.Array, eps: jax.Array) -> jax.Array:
    """Logit of an upper bound on ``kl^-1_up(q, eps)``: the least of four bounds.

    Pinsker's ``p <= q + sqrt(eps / 2)``; ``p <= q + eps + sqrt(eps^2 + 2 q eps)`` and
    ``p <= q + sqrt(2 (1 - q) eps)`` (from ``kl >= (p - q)^2 / (2 max(p, 1 - q))``); and
    ``-ln(1 - p) <= (eps + H(q)) / (1 - q)`` (from ``kl >= -(1 - q) ln(1 - p) - H(q)``), the
    last one finite even when the others exceed 1.
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
    return jnp.minimum(u_gap, u_tail)


def _logit_newton(q, one_minus_q, eps, upper: bool) -> jax.Array:
    """``p`` after Newton's method in the logit ``u = ln(p / (1 - p))``.

    ``kl(q || sigmoid(u))`` is convex in ``u`` with slope ``p - q``, so Newton's method started
    outside the root (from ``_upper_start_logit``, mirrored for the lower root) moves to it
    monotonically and quadratically, with no bracket to keep. ``p`` and ``1 - p`` come from
    the sigmoid, to full relative precision near 0 and 1.
    """
    sign = 1.0 if upper else -1.0
    if upper:
        u = _upper_start_logit(q, eps)
    else:
        u = -_upper_start_logit(one_minus_q[0], eps)
    u_q = jnp.log(q) - jnp.log1p(-q)  # the minimum of kl: never step past it

    def step(_, u):
        p = jax.nn.sigmoid(u)
        d = sign * jnp.maximum(sign * (p - q), 0.0)
        g = _kl_from_gap(q, one_minus_q, d, (p, jax.nn.sigmoid(-u)), upper).value - eps
        moved = u - g / jnp.where(d != 0, d, 1.0)
        moved = jnp.maximum(moved, u_q) if upper else jnp.minimum(moved, u_q)
        return jnp.where((g > 0) & (d != 0), moved, u)

    return jax.nn.sigmoid(lax.fori_loop(0, _LOGIT_STEPS, step, u, unroll=True))


def _series_start(q, one_minus_q, eps, upper: bool) -> jax.Array:
    """``d`` from ``kl(q || q + d) = sum_k (d^k / k) [(-1)^k q^(1-k) + (1 - q)^(1-k)]
    = d^2 / (2v) [1 + f1 d + f2 d^2 + ...]``, ``v = q (1 - q)``, ``f1 = 2 (2q - 1) / (3v)``,
    ``f2 = (1 - 3v) / (2 v^2)``, inverted to third order in ``s = +-sqrt(2 v eps)``:
    ``d = s [1 + (1 - 2q) r / 3 + (1 - 13 v) r^2 / 36]``, ``r = s / v`` (scaled so that
    nothing overflows for tiny ``v``)."""
    v = q * one_minus_q[0]
    s = jnp.sqrt(2.0 * v) * jnp.sqrt(eps) * (1.0 if upper else -1.0)
    r = s / jnp.where(v > 0, v, 1.0)
    return s * (1.0 + r * ((1.0 - 2.0 * q) / 3.0 + r * (1.0 - 13.0 * v) / 36.0))


def _gap_newton(q, one_minus_q, eps, d, upper: bool) -> jax.Array:
    """Newton steps on ``kl(q || q + d) = eps`` in ``d`` itself, with the cancellation-free kl:
    ``d`` to full relative precision even when ``p - q`` is below ``q``'s ulp spacing."""
    sign = 1.0 if upper else -1.0
    far = one_minus_q[0] if upper else q  # the pole of kl at p = 1 (upper) or p = 0 (lower)

    def step(_, d):
        rests = _rests(q, one_minus_q, d)
        g = _kl_from_gap(q, one_minus_q, d, rests, upper).value - eps
        moved = d - g / _kl_slope(d, rests)
        moved = jnp.where(sign * moved >= far, (d + sign * far) / 2.0, moved)  # not past the pole
        ok = jnp.isfinite(moved) & (sign * moved > 0)
        return jnp.where(ok, moved, d)

    return lax.fori_loop(0, _gap_steps(q), step, d, unroll=True)


def _tangent_step(residual: jax.Array, slope: jax.Array, u: float) -> jax.Array:
    """``residual / slope`` for a computed ``slope >= 0``, moved up past the slope's error
    (``_SOLVER_SLOPE_ERROR`` u: the smaller slope where ``residual >= 0``, the larger where it
    is negative) and past the quotient's own rounding (``+ 2u |step|``).

    ``|residual| / denominator`` is ``|residual / denominator|`` exactly (``denominator >= 0``):
    written as a divide of its own, each divide has one reader, so XLA fuses the step with the
    kl evaluation it reads instead of compiling the divide, and every divide and log it reads,
    as kernels of their own.
    """
    slack = _SOLVER_SLOPE_ERROR * u
    denominator = slope * jnp.where(residual >= 0, 1.0 - slack, 1.0 + slack)
    return residual / denominator + 2.0 * u * (jnp.abs(residual) / denominator)


def _certified_gaps(q, one_minus_q, eps, d, upper: bool) -> tuple[jax.Array, jax.Array]:
    """``(inner, outer)``: floats ``p`` on either side of the exact root, from one evaluation of
    ``F(a) = kl(q || q +- a)`` (convex, increasing, ``F(0) = 0``) at the estimate ``a = |d|``
    with its error bound ``E``:

    * outer, the tangent: ``F(a + (eps - F(a)) / F'(a)) >= eps``, so ``a + (eps - F + E) / F'``
      (slope rounded towards the smaller step) is ``>= a*``;
    * inner, the chord from the origin: ``F(x) <= x F(a) / a`` on ``[0, a]``, so
      ``a min(1, eps / (F + E)) <= a*``.

    Every rounding is covered by an explicit margin in u; ``q +- a`` is rounded outward
    exactly (TwoSum). Non-finite steps give the trivial 1 (upper) or 0 (lower).
    """
    u = _roundoff(q)
    rests = _rests(q, one_minus_q, d)
    kl = _kl_from_gap(q, one_minus_q, d, rests, upper)
    a = jnp.abs(d)
    slope = jnp.abs(_kl_slope(d, rests))
    gap = eps - kl.value  # exact when kl is within a factor 2 of eps (Sterbenz)
    residual = (gap + kl.error) + 2.0 * u * (jnp.abs(gap) + kl.error)
    step = _tangent_step(residual, slope, u)
    step = jnp.where(residual > 0, jnp.maximum(step, jnp.finfo(q.dtype).tiny), step)  # no flush
    fine = jnp.isfinite(kl.value) & jnp.isfinite(step) & (slope > 0)
    sign = 1.0 if upper else -1.0
    outer = _add3_rounded(q, sign * a, sign * jnp.where(fine, step, 0.0), upper)
    outer = jnp.where(fine, outer, 1.0 if upper else 0.0)
    kl_high = (kl.value + kl.error) * (1.0 + 2.0 * u)
    inner = jnp.where(kl_high > eps, a * (eps / kl_high) * (1.0 - 3.0 * u), a)
    inner = jnp.where(jnp.isfinite(kl_high), jnp.maximum(inner, 0.0), 0.0)
    return _add_rounded(q, sign * inner, not upper), outer


def _add_rounded(q: jax.Array, a: jax.Array, up: bool) -> jax.Array:
    """``q + a`` rounded up (``up``) or down, exactly: TwoSum gives the rounding error."""
    s, err = _two_sum(q, a)
    if up:
        return jnp.where(err > 0, jnp.nextafter(s, jnp.inf), s)
    return jnp.where(err < 0, jnp.nextafter(s, -jnp.inf), s)


def _add3_rounded(q: jax.Array, a: jax.Array, b: jax.Array, up: bool) -> jax.Array:
    """``q + a + b`` rounded up (``up``) or down, for a small correction ``b``: ``q + a``
    split exactly, ``b`` added to its low part with that rounding covered, one directed sum."""
    s, low = _two_sum(q, a)
    low_b = low + b
    margin = 2.0 * _roundoff(q) * jnp.abs(low_b)
    return _add_rounded(s, low_b + (margin if up else -margin), up)


def _point_newton(q, one_minus_q, eps, p) -> jax.Array:
    """Newton steps on ``kl(q||p) = eps`` in ``p`` itself: for the lower root far below ``q``
    (``p < q / 2``), where ``d = p - q`` cannot carry ``p``'s relative digits."""

    def step(_, p):
        kl, d = _kl_at_point(q, one_minus_q, p, below=True)
        moved = p - (kl.value - eps) / (d / (p * (1.0 - p)))
        moved = jnp.where(moved > 0, jnp.minimum(moved, q), p / 2.0)  # the root is below q
        return jnp.where(jnp.isfinite(moved), moved, p)

    return lax.fori_loop(0, _gap_steps(q), step, p, unroll=True)


def _certified_points(q, one_minus_q, eps, p) -> tuple[jax.Array, jax.Array]:
    """``(inner, outer)`` floats with ``outer <= p* <= inner`` for the lower root ``p*``, from
    ``kl(q||.)`` (convex, decreasing on ``[0, q]``, 0 at ``q``) at ``p`` with its error bound:
    the tangent at ``p`` (outer) and the chord from ``(p, kl)`` to ``(q, 0)`` (inner), as in
    ``_certified_gaps`` but carried in ``p`` (relative precision near 0). The tangent step is
    taken relative to ``p``, ``p (1 - step / p)``, so that it cannot underflow to 0 (XLA flushes
    subnormals) when ``p`` is tiny."""
    u = _roundoff(q)
    tiny = jnp.finfo(q.dtype).tiny
    kl, d = _kl_at_point(q, one_minus_q, p, below=True)
    gap = eps - kl.value
    residual = (gap + kl.error) + 2.0 * u * (jnp.abs(gap) + kl.error)
    slope_over_p = jnp.abs(d) / (1.0 - p)  # |d kl / dp| p
    relative = _tangent_step(residual, slope_over_p, u)
    fine = jnp.isfinite(kl.value) & jnp.isfinite(relative) & (slope_over_p > 0)
    outer = round_down(p * round_down(1.0 - jnp.where(fine, relative, 0.0), 1.0), 1.0)
    outer = jnp.where(fine, outer, 0.0)
    kl_high = (kl.value + kl.error) * (1.0 + 2.0 * u)
    fraction = (kl_high - eps) / kl_high * (1.0 + 4.0 * u)
    rise = jnp.maximum((q - p) * (1.0 + 2.0 * u) * fraction, tiny)  # never flushed to 0
    inner = jnp.where(kl_high > eps, _add_rounded(p, rise, True), p)
    inner = jnp.where(jnp.isfinite(kl_high), jnp.minimum(inner, q), q)
    return inner, jnp.maximum(outer, 0.0)


class _Root(NamedTuple):
    inner: jax.Array  # a float between q and the exact root
    outer: jax.Array  # a float past the exact root (the certified inverse)
    gap: jax.Array  # the estimate of d = root - q, to full relative precision
    point: jax.Array  # the estimate of the root, to full relative precision


def _root_near(q, one_minus_q, eps, p_start, upper: bool) -> _Root:
    """The root found and certified in ``d = p - q`` (``_gap_newton``, ``_certified_gaps``),
    started from the series where ``eps`` is small, else from ``p_start``."""
    sign = 1.0 if upper else -1.0
    d = sign * jnp.maximum(sign * (p_start - q), 0.0)
    series = jnp.sqrt(2.0 * q * one_minus_q[0]) * jnp.sqrt(eps)
    use_series = series < _SERIES_RADIUS * jnp.minimum(q, one_minus_q[0])
    d = jnp.where(use_series, _series_start(q, one_minus_q, eps, upper), d)
    d = jnp.where(d == 0, sign * series, d)  # the logit start rounded to q
    # kl(0||p) = -ln(1 - p) and kl(1||p) = -ln(p): the roots in closed form
    d = jnp.where(q == (0.0 if upper else 1.0), -jnp.expm1(-eps) * sign, d)
    d = _gap_newton(q, one_minus_q, eps, d, upper)
    inner, outer = _certified_gaps(q, one_minus_q, eps, d, upper)
    outer = jnp.minimum(outer, 1.0) if upper else jnp.maximum(outer, 0.0)
    return _Root(inner, outer, d, q + d)


def _solve_kl_inverse(q: jax.Array, eps: jax.Array, upper: bool) -> _Root:
    """The upper (or lower) root of ``kl(q||p) = eps``, certified: see ``kl_inv_upper``."""
    bad = jnp.isnan(eps) | jnp.isnan(q)
    # q itself where p = q: a select keeps a subnormal q, which arithmetic may flush to 0
    q_itself = jnp.where((q >= 0.0) & (q <= 1.0), q, jnp.clip(q, 0.0, 1.0))
    q = jnp.clip(q, 0.0, 1.0)
    eps = jnp.maximum(eps, 0.0)
    one_minus_q = _one_minus(q)
    p_start = _logit_newton(q, one_minus_q, eps, upper)
    root = _root_near(q, one_minus_q, eps, p_start, upper)
    if not upper:  # far below q, carry p itself
        far = p_start < q / 2.0
        p = _point_newton(q, one_minus_q, eps, jnp.where(far, p_start, q / 2.0))
        inner, outer = _certified_points(q, one_minus_q, eps, p)
        root = _Root(*(jnp.where(far, a, b) for a, b in zip((inner, outer, p - q, p), root)))
    trivial = (eps == 0) | (q == (1.0 if upper else 0.0))
    inner, outer = (jnp.where(bad, jnp.nan, jnp.where(trivial, q_itself, x)) for x in root[:2])
    return _Root(inner, outer, jnp.where(trivial, 0.0, root.gap), jnp.where(trivial, q, root.point))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _kl_inverse(q: jax.Array, eps: jax.Array, upper: bool) -> tuple[jax.Array, jax.Array]:
    root = _solve_kl_inverse(q, eps, upper)
    return root.inner, root.outer


def _root_slopes(q, d, p, upper: bool) -> tuple[jax.Array, jax.Array]:
    """``(dp/dq, dp/deps)`` of the root ``p = q + d`` of ``kl(q||p) = eps`` (implicit function
    theorem): ``1 / kl_p`` and ``-kl_q / kl_p``, ``kl_p = d / (p (1 - p))``,
    ``kl_q = ln(q / p) - ln((1 - q) / (1 - p))``, each log by ``log1p`` of ``-+d / q`` near
    ``q`` and of the ratio beyond, so that both stay accurate as ``d -> 0``."""
    q = jnp.clip(q, 0.0, 1.0)
    c_hi, c_lo = _one_minus(q)
    one_minus_p = _exact(c_hi - d) + c_lo
    tiny = jnp.finfo(d.dtype).tiny
    kl_p = jnp.where(d == 0, 0.0, d / (p * one_minus_p))
    log_q_over_p = jnp.where(
        d < -q / 2, jnp.log(q) - jnp.log(p), -jnp.log1p(d / jnp.maximum(q, tiny))
    )
    log_c_over_1_p = jnp.where(
        d > c_hi / 2, jnp.log(c_hi) - jnp.log(one_minus_p), -jnp.log1p(-d / jnp.maximum(c_hi, tiny))
    )
    kl_q = log_q_over_p - log_c_over_1_p
    # kl_p == 0 only at d == 0 (eps == 0), where d/deps is infinite: a large finite slope
    # there, and d/dq = 1 (p = q). Where p is 0 or 1 (underflow) it is flat.
    safe_kl_p = jnp.where(kl_p == 0, (1.0 if upper else -1.0) * jnp.sqrt(tiny), kl_p)
    pinned = ~(jnp.isfinite(kl_p) & jnp.isfinite(kl_q))
    slope_q = jnp.where(d == 0, 1.0, jnp.where(pinned, 0.0, -kl_q / safe_kl_p))
    return slope_q, jnp.where(pinned, 0.0, 1.0 / safe_kl_p)


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def _on_root(q, eps, gap, point, upper: bool) -> tuple[jax.Array, jax.Array]:
    """``(gap, point)`` unchanged, carrying the root's implicit derivative in ``(q, eps)``: the
    solver's output (no derivative of its iterations, nor of ``nextafter``) attached to its
    arguments, so that derivatives of any order see the root's true dependence."""
    return gap, point


@_on_root.defjvp
def _on_root_jvp(upper, primals, tangents):
    q, eps, gap, point = primals
    dq, deps, _, _ = tangents
    slope_q, slope_eps = _root_slopes(q, *_on_root(q, eps, gap, point, upper), upper)
    dp = slope_q * dq + slope_eps * deps
    return (gap, point), (dp - dq, dp)


@_kl_inverse.defjvp
def _kl_inverse_jvp(upper, primals, tangents):
    """Implicit derivative of ``kl(q||p(q, eps)) = eps`` at the exact root, from the gap
    ``d = p - q`` and the root ``p`` to full relative precision (``_root_slopes``)."""
    q, eps = primals
    dq, deps = tangents
    root = _solve_kl_inverse(lax.stop_gradient(q), lax.stop_gradient(eps), upper)
    gap, point = _on_root(q, eps, root.gap, root.point, upper)
    slope_q, slope_eps = _root_slopes(q, gap, point, upper)
    tangent = slope_q * dq + slope_eps * deps
    carry = point - lax.stop_gradient(point)  # 0, with the root's dependence for outer levels
    return (root.inner + carry, root.outer + carry), (tangent, tangent)


def _inverse_arguments(q: ArrayLike, eps: ArrayLike) -> list[jax.Array]:
    return jnp.broadcast_arrays(*_floats(q, eps))


@domains(q=UNIT, eps=NONNEGATIVE)
@jax.jit
def kl_inv_upper(q: ArrayLike, eps: ArrayLike) -> jax.Array:
    """``kl^-1_up(q, eps) = max {p in [q, 1] : kl(q||p) <= eps}`` (Seeger's bound inverse),
    certified: a float ``>=`` the exact root of the given floats, within a few ulps of it.

    Method: Newton's method in the logit from a closed-form start, then in ``d = p - q`` with
    the cancellation-free kl (or from its series when ``eps`` is small), then one verified
    outward step (module docstring, "Certified kl-inverses"). Differentiable in ``q`` and
    ``eps`` through the implicit function theorem at the exact root, with ``d`` to full
    relative precision, so ``d/deps`` stays accurate as ``eps -> 0``. Broadcasts over its
    arguments and is vmappable.

    Args:
      q: empirical value in ``[0, 1]`` (clipped to it).
      eps: level ``>= 0``.

    Returns:
      ``p >= q`` with ``kl(q||p) >= eps`` for the exact ``kl`` (or ``1``), so that ``p`` is
      at least the exact inverse.

    >>> float(kl_inv_upper(0.1, 0.05)) > 0.1
    True
    """
    return _kl_inverse(*_inverse_arguments(q, eps), True)[1]


@domains(q=UNIT, eps=NONNEGATIVE)
@jax.jit
def kl_inv_lower(q: ArrayLike, eps: ArrayLike) -> jax.Array:
    """``kl^-1_low(q, eps) = min {p in [0, q] : kl(q||p) <= eps}``, certified from below: a
    float ``<=`` the exact root; see ``kl_inv_upper``.

    Example:
      >>> p = kl_inv_lower(0.1, 0.05)
      >>> round(float(p), 4), round(float(binary_kl(0.1, p)), 4)  # kl(0.1 || p) = 0.05
      (0.0313, 0.05)
    """
    return _kl_inverse(*_inverse_arguments(q, eps), False)[1]


@domains(q=UNIT, eps=NONNEGATIVE)
@jax.jit
def kl_inv_upper_interval(q: ArrayLike, eps: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(low, high)``, floats with ``low <= kl^-1_up(q, eps) <= high`` for the exact root;
    ``high`` is ``kl_inv_upper(q, eps)``, ``low`` a few ulps below the root. Both carry the
    root's implicit derivative.

    Example:
      >>> low, high = kl_inv_upper_interval(0.1, 0.05)
      >>> round(float(high), 4), bool(low <= high), bool(high == kl_inv_upper(0.1, 0.05))
      (0.2201, True, True)
    """
    return _kl_inverse(*_inverse_arguments(q, eps), True)


def _kl_at_point(q, one_minus_q, p, below: bool = False) -> tuple[_Term, jax.Array]:
    """``kl(q||p)`` with its error bound, and ``d``, for floats ``q, p`` in ``[0, 1]``
    (``below``: ``p <= q``, and only the branches of ``d <= 0`` are evaluated).

    ``d = p - q`` is rounded; TwoSum gives its error, which moves each term by at most as
    much (``|dh/dt| <= 1`` where a term reads ``d`` through ``t``; the logs near ``p = 0, 1``
    read ``p`` and ``1 - p``, exact there).
    """
    d, d_error = _two_sum(p, -q)  # p - q = d + d_error exactly
    rests = (p, 1.0 - p)
    kl = _kl_from_gap(q, one_minus_q, jnp.minimum(d, 0.0), rests, False)
    if not below:
        kl = _select(d >= 0, _kl_from_gap(q, one_minus_q, jnp.maximum(d, 0.0), rests, True), kl)
    error = kl.error + 2.0 * jnp.abs(d_error) * (1.0 + 4.0 * _roundoff(q))
    return _Term(kl.value, jnp.where(p == q, 0.0, error)), d  # kl(q||q) = 0 exactly


@domains(q=UNIT, p=UNIT)
@jax.jit
def binary_kl_interval(q: ArrayLike, p: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(low, high)`` with ``low <= kl(q||p) <= high`` for the exact divergence of the given
    floats (the cancellation-free form and its error bound; see the module docstring). No
    derivative: for certificates, not objectives.

    Example:
      >>> low, high = binary_kl_interval(0.1, 0.3)
      >>> round(float(high), 4), bool(low <= binary_kl(0.1, 0.3) <= high)
      (0.1163, True)
    """
    q, p = (lax.stop_gradient(x) for x in _inverse_arguments(q, p))
    q, p = jnp.clip(q, 0.0, 1.0), jnp.clip(p, 0.0, 1.0)
    kl, _ = _kl_at_point(q, _one_minus(q), p)
    exact = kl.error == 0  # kl(q||q) = 0
    low = jnp.where(exact, kl.value, round_down(kl.value - kl.error, 0.0))  # + the sum's rounding
    high = jnp.where(exact | jnp.isinf(kl.value), kl.value, round_up(kl.value + kl.error, 0.0))
    return jnp.maximum(low, 0.0), high


@domains(q=UNIT, centers=FINITE)
def gaussian_mixture_kl_bound(q: ArrayLike, centers: ArrayLike) -> jax.Array:
    """``KL(Q||P) <= (1/2) sum_i q_i ||w_i||^2`` (roy2016 §3, after Theorem 2).

    ``Q`` is the mixture ``sum_i q_i N(w_i, I)`` of isotropic Gaussians over linear voters and
    ``P = N(0, I)``; the bound follows from Jensen's inequality on ``x ln x``.

    Args:
      q: mixture weights, shape ``(n,)``.
      centers: the centres ``w_i``, shape ``(n, N)``.

    Example:
      >>> import jax.numpy as jnp
      >>> q, centers = jnp.array([0.5, 0.5]), jnp.array([[1.0, 0.0], [0.0, 2.0]])
      >>> float(gaussian_mixture_kl_bound(q, centers))  # (0.5 * 1 + 0.5 * 4) / 2
      1.25
    """
    q, centers = _floats(q, centers)
    return 0.5 * jnp.sum(q * jnp.sum(centers**2, axis=-1), axis=-1)


@domains(w=FINITE)
def quasi_uniform_kl(w: ArrayLike) -> jax.Array:
    """``KL(Q||P)`` of a quasi-uniform posterior to the uniform prior (germain2009 §4.2, eq. 16).

    On a self-complemented set of ``2n`` voters a quasi-uniform ``Q`` has
    ``Q_i + Q_{i+n} = 1/n``; it is given by ``w_i = Q_i - Q_{i+n}`` in ``[-1/n, 1/n]``. With
    ``P_i = 1/(2n)``:

    .. math:: KL(Q||P) = \\ln(2n) + \\sum_{i=1}^n [Q_i \\ln Q_i + (1/n - Q_i) \\ln(1/n - Q_i)].

    Args:
      w: the ``n`` weights ``w_i``, shape ``(..., n)``.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(quasi_uniform_kl(jnp.array([1 / 3, 0.0, 0.0]))), 4)  # ln(2) / 3
      0.231
    """
    (w,) = _floats(w)
    n = w.shape[-1]
    half = (1.0 / n + w) / 2.0
    return jnp.log(2.0 * n) + jnp.sum(xlogy(half, half) + xlogy(1.0 / n - half, 1.0 / n - half), -1)
