"""PAC-Bayes bounds, composed from the margins, the kl terms and the C-bound.

Every bound is a pure function of statistics of the sample (risks, moments, KL, ``m``) and of
``delta``, jittable, differentiable and broadcasting over all of its numeric arguments (``m``
included, as an int or float array), so ``jax.vmap`` sweeps ``delta``, ``kl`` or a prior with
one compilation. Each docstring says whether it bounds the Gibbs risk ``R(G_Q)`` or the
majority-vote risk ``R(B_Q)``, and holds with probability at least ``1 - delta`` over the
draw of the ``m`` examples, for all posteriors ``Q`` simultaneously. Concrete arguments are
checked against their domains (:mod:`pacbound._src.bounds`, "Domains"; traced ones are not):
``delta`` in ``(0, 1]``, ``m >= 1`` (``>= 2`` for ``empirical_bernstein``, ``> 8`` for
``cbound_quasi_uniform``), ``c``, ``gamma``, ``c_a`` ``> 0``, ``k_bar >= 1``, a risk in
``[0, 1]``, a disagreement in ``[0, 1/2]``, ``mu1`` in ``[-1, 1]``, ``mu2`` in ``[0, 1]``, a
KL ``>= 0``. Statistics are clipped to their domain first, so a value rounded just outside it
(``-1e-17``) gives the bound at the edge, not NaN.

Certified values
----------------
Each function returns a float ``>=`` the exact value of its formula for the given floats
(exact real arithmetic; ``m`` exact as given, even where the float dtype cannot hold it), in
float32 and in float64 alike. The error model (:mod:`pacbound._src.kl`, "Certified kl-inverses"):
``+ - * /`` and ``sqrt`` round to nearest (relative error at most the unit roundoff ``u``:
``2^-24`` in float32, ``2^-53`` in float64); ``log`` and ``exp`` are within 4 u; ``1 - e^-c``
is computed within 5 u (XLA's ``expm1`` reaches 6 u). The rule: each formula is evaluated in
its dtype, its relative error is bounded by counting the roundings on the way (first order:
relative errors add through products, quotients and sums of terms of one sign; a sqrt halves
them), and the result is moved outward by that count with ``kl.round_up`` (``round_down``
for a quantity the bound decreases in): past ``x (1 + k u) + tiny``, then one float further.
Formulas with terms of both signs (``general_loss``) add the sum of the terms' absolute error
bounds instead. The kl-inverses are certified themselves, ``eps`` is rounded up before they
see it, ``xi(m)`` is rounded up by its own error bound, and the C-bound forms round ``mu1``
down and ``mu2`` up (``cbound.cbound_upper``). The margins cost a few ulps: within ``1e-6``
of the exact value in float32 and ``1e-12`` in float64 (relative to the terms' size for
``general_loss``; times the C-bound's conditioning ``(2 mu1 / mu2 + mu1^2 / mu2^2) / 3`` for
the C-bound forms), except PAC-Bound 2 in float32, within ``1e-5``
(``cbound.cbound_trinomial_sup``).

Clipping: every bound on a risk is at most 1 (the Gibbs bounds ``mcallester``, ``seeger``,
``catoni``; the majority-vote bounds ``pac_bound_0`` (which reaches 2 unclipped),
``pac_bound_1``, ``pac_bound_2`` and the C-bound forms; ``empirical_bernstein``, a mean of
``[0, 1]`` variables). The clip acts on the value only: the derivative is the unclipped
formula's, the direction in which a vacuous bound becomes informative, so gradient-based
minimization started where a bound exceeds 1 still moves. ``general_loss`` bounds the expected
convex loss, which may exceed 1; ``min(1, .)`` of it bounds ``R(B_Q)``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.cbound import cbound_trinomial_sup, cbound_upper
from pacbound._src.kl import kl_inv_lower, kl_inv_upper, round_down, round_up
from pacbound._src.validation import (
    CONFIDENCE,
    FINITE,
    HALF,
    NONNEGATIVE,
    POSITIVE,
    SIGNED,
    SIZE,
    UNIT,
    Domain,
    domains,
)

__all__ = [
    "catoni",
    "cbound_quasi_uniform",
    "cbound_roy2016",
    "empirical_bernstein",
    "exponential_loss_constants",
    "general_loss",
    "mcallester",
    "pac_bound_0",
    "pac_bound_1",
    "pac_bound_2",
    "quadratic_loss_constants",
    "seeger",
    "xi",
]

# Relative errors in units of u (module docstring): the library's log and exp, the
# denominator 1 - e^-c of ``_one_minus_exp_neg``, and ln(2 sqrt(m) / delta).
_LOG = 4.0
_ONE_MINUS_EXP = 5.0
_MAURER_LOG = 7.2  # m and sqrt 1.5 u, so 1.5 u absolute in the first log (>= ln 2), 4 u
# relative in each log, 1 u for their sum: 1.5 / ln 2 + 4 + 1 < 7.2


def floats_with_size(*xs: ArrayLike, m: ArrayLike) -> list[jax.Array]:
    """The arguments and ``m`` in one float dtype, that of the arguments: an int ``m`` (Python
    or array) keeps a float32 run in float32."""
    float_m = [m] if jnp.issubdtype(jnp.result_type(m), jnp.floating) else []
    dtype = jnp.result_type(*xs, *float_m, float)
    return [jnp.asarray(x, dtype) for x in (*xs, m)]


def at_most_one(x: jax.Array) -> jax.Array:
    """``min(x, 1)``, with the derivative of ``x`` (module docstring, "Clipping")."""
    value = lax.stop_gradient(x)
    return jnp.where(value <= 1.0, x, 1.0 + (x - value))


def _unit(x: jax.Array) -> jax.Array:
    return jnp.clip(x, 0.0, 1.0)


def _maurer_log_term(m: jax.Array, delta: jax.Array) -> jax.Array:
    """``ln(2 sqrt(m) / delta)``, within ``_MAURER_LOG`` u."""
    return jnp.log(2.0 * jnp.sqrt(m)) - jnp.log(delta)


def _one_minus_exp_neg(c: jax.Array) -> jax.Array:
    """``1 - e^-c`` for ``c > 0`` within ``_ONE_MINUS_EXP`` u: ``c P(c)`` below 0.7, with
    ``P(c) = sum_k (-c)^k / (k+1)!`` by Horner (4 u: the k-th rounding is damped by
    ``c^k / (k+1)!``), and ``1 - exp(-c)`` above (``u + 4u e^-c / (1 - e^-c) < 5 u``); XLA's
    ``expm1`` reaches 6 u on ``(-1, 0)``."""
    n = 20 if jnp.finfo(c.dtype).bits > 32 else 12
    series = jnp.full_like(c, (-1.0) ** (n - 1) / math.factorial(n))
    for k in range(n - 2, -1, -1):
        series = series * c + (-1.0) ** k / math.factorial(k + 1)
    return jnp.where(c < 0.7, c * series, 1.0 - jnp.exp(-c))


def seeger_level(kl: jax.Array, m: jax.Array, delta: jax.Array) -> jax.Array:
    """``(KL + ln(2 sqrt(m) / delta)) / m`` rounded up: the log term, the sum (1 u, both terms
    ``>= 0``), ``m`` and the division (2 u)."""
    return round_up((jnp.maximum(kl, 0.0) + _maurer_log_term(m, delta)) / m, _MAURER_LOG + 3.0)


@domains(risk=UNIT, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def mcallester(risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike) -> jax.Array:
    """McAllester's bound, Maurer's form, on the **Gibbs** risk (clipped to 1):

    .. math:: R(G_Q) \\le R_S(G_Q) + \\sqrt{(KL(Q||P) + \\ln(2\\sqrt{m}/\\delta)) / (2m)}.

    Example:
      >>> round(float(mcallester(0.1, 1.0, 1000, 0.05)), 4)  # risk 0.1, KL 1, m = 1000
      0.1638
    """
    risk, kl, delta, m = floats_with_size(risk, kl, delta, m=m)
    level = (jnp.maximum(kl, 0.0) + _maurer_log_term(m, delta)) / (2.0 * m)
    value = _unit(risk) + jnp.sqrt(level)
    # the level as in seeger_level, halved by the sqrt, plus the sqrt's and the sum's u
    return at_most_one(round_up(value, (_MAURER_LOG + 3.0) / 2.0 + 2.0))


@domains(risk=UNIT, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def seeger(risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike) -> jax.Array:
    """Seeger's bound (Maurer's constant) on the **Gibbs** risk:

    .. math:: R(G_Q) \\le kl^{-1}_{up}(R_S(G_Q), (KL(Q||P) + \\ln(2\\sqrt{m}/\\delta)) / m).

    Twice it bounds the majority-vote risk, ``R(B_Q) <= 2 R(G_Q)``. Never looser than
    ``mcallester`` (Pinsker's inequality).

    Example:
      >>> b = seeger(0.1, 1.0, 1000, 0.05)
      >>> round(float(b), 4), bool(b <= mcallester(0.1, 1.0, 1000, 0.05))
      (0.1426, True)
    """
    risk, kl, delta, m = floats_with_size(risk, kl, delta, m=m)
    return at_most_one(kl_inv_upper(_unit(risk), seeger_level(kl, m, delta)))


@domains(risk=UNIT, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE, c=POSITIVE)
def catoni(
    risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike, c: ArrayLike
) -> jax.Array:
    """Catoni's bound in germain2009 Theorem 3.1, on the **Gibbs** risk, for any ``c > 0``
    (clipped to 1):

    .. math:: R(G_Q) \\le \\frac{1}{1 - e^{-c}}
              \\Big[c\\,R_S(G_Q) + \\frac{KL(Q||P) + \\ln(1/\\delta)}{m}\\Big].

    ``c`` is fixed before seeing the sample; a grid of ``k`` values needs ``delta / k``.

    Example:
      >>> round(float(catoni(0.1, 1.0, 1000, 0.05, 1.0)), 4)  # c = 1
      0.1645
    """
    risk, kl, delta, c, m = floats_with_size(risk, kl, delta, c, m=m)
    complexity = (jnp.maximum(kl, 0.0) - jnp.log(delta)) / m  # 4 + 1 + 2 u
    value = (c * _unit(risk) + complexity) / _one_minus_exp_neg(c)  # + 1, + 1 u
    return at_most_one(round_up(value, 7.0 + 1.0 + _ONE_MINUS_EXP + 1.0))


@domains(gamma=POSITIVE)
def exponential_loss_constants(gamma: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(c_a, k_bar)`` of the exponential loss ``exp(-margin / gamma)`` (germain2009 §4).

    ``c_a = e^{1/gamma} - 1`` and ``k_bar = gamma^{-1} / (1 - e^{-1/gamma})``, each rounded up
    by its error bound: ``general_loss`` increases with both, so a certificate computed with
    them holds for the exact constants.

    Example:
      >>> c_a, k_bar = exponential_loss_constants(1.0)
      >>> round(float(c_a), 4), round(float(k_bar), 4)  # e - 1 and 1 / (1 - 1/e)
      (1.7183, 1.582)
    """
    inv = 1.0 / jnp.asarray(gamma, jnp.result_type(gamma, float))
    # expm1 within 8 u, and 1/gamma's rounding moves it by (1 + 1/gamma) u relative at most
    return round_up(jnp.expm1(inv), 9.0 + inv), round_up(inv / -jnp.expm1(-inv), 11.0)


@domains(gamma=POSITIVE)
def quadratic_loss_constants(gamma: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(c_a, k_bar)`` of the quadratic loss ``(margin / gamma - 1)^2`` (germain2009 §4).

    ``c_a = 2/gamma + 1/gamma^2`` and ``k_bar = (2 gamma + 2) / (2 gamma + 1)``, rounded up
    (see ``exponential_loss_constants``).

    Example:
      >>> c_a, k_bar = quadratic_loss_constants(1.0)
      >>> round(float(c_a), 4), round(float(k_bar), 4)  # 2 + 1 and 4 / 3
      (3.0, 1.3333)
    """
    gamma = jnp.asarray(gamma, jnp.result_type(gamma, float))
    c_a = 2.0 / gamma + 1.0 / gamma**2  # 3 u
    return round_up(c_a, 3.0), round_up((2.0 * gamma + 2.0) / (2.0 * gamma + 1.0), 3.0)


@domains(
    empirical_loss=FINITE,
    kl=NONNEGATIVE,
    m=SIZE,
    delta=CONFIDENCE,
    c=POSITIVE,
    c_a=POSITIVE,
    k_bar=Domain(1.0, np.inf, high_open=True, slack=1e-6),
)
def general_loss(
    empirical_loss: ArrayLike,
    kl: ArrayLike,
    m: ArrayLike,
    delta: ArrayLike,
    c: ArrayLike,
    c_a: ArrayLike,
    k_bar: ArrayLike,
) -> jax.Array:
    """germain2009 Theorem 3.2: a bound on the expected convex loss ``zeta_Q``, hence on the
    **majority-vote** risk (``zeta_Q(x, y) >= I(W_Q(x, y) > 1/2)``), for any ``c = C' > 0``:

    .. math:: \\zeta_Q \\le g(c_a, C') + \\frac{C'}{1 - e^{-C'}}\\Big[\\hat\\zeta_Q
              + \\frac{2 c_a}{m C'}\\big(\\bar k\\,KL(Q||P) + \\ln\\frac{1}{\\delta}\\big)\\Big],
              \\quad g(c_a, C') = 1 - c_a + \\frac{C'}{1 - e^{-C'}} (c_a - 1).

    Not clipped (a bound on the loss, which may exceed 1); ``min(1, .)`` bounds ``R(B_Q)``.
    The terms have both signs, so the value is rounded up by the sum of their error bounds
    (absolute): the scale ``C' / (1 - e^-C')`` carries 6 u, the complexity term 9 u (log 4, the
    rest 1 each), each product and sum 1 u.

    Args:
      empirical_loss: ``hat zeta_Q``, the mean loss over the sample.
      kl: ``KL(Q||P)``.
      m: sample size.
      delta: confidence.
      c: Catoni's constant ``C'``.
      c_a, k_bar: the loss's constants, from ``exponential_loss_constants`` or
        ``quadratic_loss_constants``.

    Example:
      >>> c_a, k_bar = quadratic_loss_constants(1.0)
      >>> round(float(general_loss(0.3, 1.0, 1000, 0.05, 1.0, c_a, k_bar)), 4)  # may exceed 1
      1.6796
    """
    loss, kl, delta, c, c_a, k_bar, m = floats_with_size(
        empirical_loss, kl, delta, c, c_a, k_bar, m=m
    )
    scale = c / _one_minus_exp_neg(c)
    tilt = scale * (c_a - 1.0)
    g = (1.0 - c_a) + tilt
    complexity = 2.0 * c_a / (m * c) * (k_bar * jnp.maximum(kl, 0.0) - jnp.log(delta))
    pull = scale * (loss + complexity)
    value = g + pull
    error = (
        jnp.abs(1.0 - c_a)  # each sum's rounding
        + jnp.abs(g)
        + jnp.abs(value)
        + (_ONE_MINUS_EXP + 3.0) * jnp.abs(tilt)  # the scale's 6 u, c_a - 1, the product
        + (_ONE_MINUS_EXP + 3.0) * jnp.abs(pull)  # the scale, the sum, the product
        + 9.0 * scale * jnp.abs(complexity)
    ) * (float(jnp.finfo(value.dtype).eps) / 2.0)
    return round_up(value + error, 0.0)  # one float up covers the last sum


def _deviation_up(kl: jax.Array, m: jax.Array, delta: jax.Array) -> jax.Array:
    """``sqrt(2/m [kl + ln(2 sqrt(m) / (delta/2))])`` rounded up (``delta / 2`` is exact): the
    level of ``seeger_level`` halved by the sqrt, plus the sqrt's u."""
    level = (kl + _maurer_log_term(m, delta / 2.0)) / m
    return round_up(jnp.sqrt(2.0 * level), (_MAURER_LOG + 3.0) / 2.0 + 1.0)


@domains(mu1=SIGNED, mu2=UNIT, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def cbound_roy2016(
    mu1: ArrayLike, mu2: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """roy2016 Theorem 2: the C-bound with KL, on the **majority-vote** risk:

    ``R(B_Q) <= 1 - max(0, mu1_low)^2 / min(1, mu2_up)`` with

    * ``mu1_low = mu1 - sqrt(2/m [KL + ln(2 sqrt(m) / (delta/2))])``,
    * ``mu2_up = mu2 + sqrt(2/m [2 KL + ln(2 sqrt(m) / (delta/2))])``.

    (The paper prints ``max(0, mu1_low^2)``; the proof needs ``mu1_low > 0``.)

    Example:
      >>> round(float(cbound_roy2016(0.6, 0.5, 1.0, 1000, 0.05)), 4)  # empirical C-bound 0.28
      0.6593
    """
    mu1, mu2, kl, delta, m = floats_with_size(mu1, mu2, kl, delta, m=m)
    kl = jnp.maximum(kl, 0.0)
    mu1_low = round_down(jnp.clip(mu1, -1.0, 1.0) - _deviation_up(kl, m, delta), 1.0)
    mu2_up = round_up(jnp.clip(mu2, 0.0, 1.0) + _deviation_up(2.0 * kl, m, delta), 1.0)
    return cbound_upper(mu1_low, jnp.minimum(1.0, mu2_up))


@domains(
    mu1=FINITE,
    mu2=NONNEGATIVE,
    m=Domain(8.0, np.inf, low_open=True, high_open=True),
    delta=CONFIDENCE,
    bound=POSITIVE,
)
def cbound_quasi_uniform(
    mu1: ArrayLike, mu2: ArrayLike, m: ArrayLike, delta: ArrayLike, bound: ArrayLike = 1.0
) -> jax.Array:
    """laviolette2011 Theorem 2: KL-free C-bound for quasi-uniform posteriors, on the
    **majority-vote** risk, for voters bounded by ``B = bound`` and ``m > 8``.

    Each of ``|mu1^D - mu1^S| <= 2B sqrt(ln(2 sqrt(m) / d') / (2m))`` and
    ``|mu2^D - mu2^S| <= 2B^2 sqrt(ln(2 sqrt(m) / d') / (2m))`` holds with probability
    ``1 - d'`` for every quasi-uniform ``Q``; with ``d' = delta / 2`` (union bound)

    ``R(B_Q) <= 1 - max(0, mu1 - eps_1)^2 / min(B^2, mu2 + eps_2)``, the two deviations above.

    Example:
      >>> round(float(cbound_quasi_uniform(0.6, 0.5, 1000, 0.05)), 4)  # no KL term
      0.6394
    """
    mu1, mu2, delta, bound, m = floats_with_size(mu1, mu2, delta, bound, m=m)
    deviation = round_up(
        2.0 * jnp.sqrt(_maurer_log_term(m, delta / 2.0) / (2.0 * m)),
        (_MAURER_LOG + 2.0) / 2.0 + 1.0,
    )
    mu1_low = round_down(mu1 - round_up(bound * deviation, 1.0), 1.0)
    square = round_up(bound**2, 1.0)
    mu2_up = round_up(jnp.maximum(mu2, 0.0) + round_up(square * deviation, 1.0), 1.0)
    return cbound_upper(mu1_low, jnp.minimum(square, mu2_up))


@domains(
    mean=UNIT,
    variance=NONNEGATIVE,
    m=Domain(2.0, np.inf, high_open=True),
    delta=CONFIDENCE,
)
def empirical_bernstein(
    mean: ArrayLike, variance: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """Maurer & Pontil (2009) Theorem 4, for i.i.d. variables in ``[0, 1]`` and ``m >= 2``
    (clipped to 1):

    .. math:: E[Z] \\le \\bar Z + \\sqrt{\\frac{2 V_m \\ln(2/\\delta)}{m}}
              + \\frac{7 \\ln(2/\\delta)}{3 (m - 1)},

    with ``V_m`` the unbiased sample variance. The penalized objective of VEB-Boost.

    Example:
      >>> round(float(empirical_bernstein(0.1, 0.09, 1000, 0.05)), 4)  # mean 0.1, variance 0.09
      0.1344
    """
    mean, variance, delta, m = floats_with_size(mean, variance, delta, m=m)
    log_term = jnp.log(2.0) - jnp.log(delta)  # two logs >= 0 and their sum: 5 u
    root = jnp.sqrt(2.0 * jnp.maximum(variance, 0.0) * log_term / m)  # (5 + 3) / 2 + 1 u
    tail = 7.0 * log_term / (3.0 * (m - 1.0))  # 5 + 5 u (m, m - 1, the products, the quotient)
    value = jnp.clip(mean, 0.0, 1.0) + root + tail
    return at_most_one(round_up(value, 10.0 + 2.0))


# ------------------------------------------------------------------------------------------
# xi(m) of Germain et al. (2015)
# ------------------------------------------------------------------------------------------

_XI_TABLE_SIZE = 128  # xi(m) for m < 128 from a table of exact values; the series above
_STIRLING = (1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680, 1.0 / 1188)
# Ramanujan's theta(m) = 1/3 + 4/(135 m) - 8/(2835 m^2) - ...; D(m) = 2 theta(m)
_TWO_THETA = (
    2.0 / 3,
    8.0 / 135,
    -16.0 / 2835,
    -32.0 / 8505,
    17984.0 / 12629925,
    668288.0 / 492567075,
    -1397504.0 / 1477701225,
)
# relative error bound of the series branch, in u: 2 pi m 1.5, its sqrt 1.75, exp 4, the
# product 1, D's Horner 0.05 (|D| < 1 against A > 28), A - D 1, 1 + . 1: 9.3 < 10
_XI_SERIES_ERROR = 10.0


def _exact_xi(m: int) -> Fraction:
    return sum(
        (Fraction(math.comb(m, k) * k**k * (m - k) ** (m - k), m**m) for k in range(m + 1)),
        Fraction(0),
    )


def _float_up(value: Fraction, dtype) -> np.ndarray:
    """The least float of ``dtype`` that is ``>= value``."""
    x = np.asarray(float(value), dtype)
    if Fraction(float(x)) < value:
        x = np.nextafter(x, np.asarray(np.inf, dtype))
    return x


@functools.cache
def _xi_table(dtype) -> np.ndarray:
    """``xi(m)`` for ``m = 0 .. 127`` rounded up to ``dtype`` (``xi(0) = 1``), from exact
    rational sums (``0^0 = 1``)."""
    values = [Fraction(1)] + [_exact_xi(m) for m in range(1, _XI_TABLE_SIZE)]
    return np.array([_float_up(v, dtype) for v in values], dtype)


def _xi_series(m: jax.Array) -> jax.Array:
    """``xi(m) = 1 + Q(m) = 1 + (A(m) - D(m)) / 2`` for ``m >= 128``: ``A = m! e^m / m^m =
    sqrt(2 pi m) exp(1/(12m) - 1/(360 m^3) + ...)`` (Stirling) and ``D(m) = R(m) - Q(m) =
    2/3 + 8/(135 m) - ...`` (twice Ramanujan's theta series). The omitted terms are below
    ``1e-18`` relative at ``m = 128``; evaluation error under ``_XI_SERIES_ERROR`` u."""
    safe = jnp.maximum(m, float(_XI_TABLE_SIZE))
    inv = 1.0 / safe
    inv2 = inv * inv
    stirling: float | jax.Array = 0.0
    for coefficient in reversed(_STIRLING):
        stirling = stirling * inv2 + coefficient
    d: float | jax.Array = 0.0
    for coefficient in reversed(_TWO_THETA):
        d = d * inv + coefficient
    return 1.0 + (jnp.sqrt(2.0 * jnp.pi * safe) * jnp.exp(stirling * inv) - d) / 2.0


def _xi_upper(m: jax.Array) -> jax.Array:
    """``xi(m)`` rounded up, in ``m``'s float dtype; ``m`` is rounded up to an integer below
    128 (``xi`` increases)."""
    m = lax.stop_gradient(m)
    index = jnp.clip(jnp.ceil(m), 0, _XI_TABLE_SIZE - 1).astype(jnp.int32)
    table = jnp.asarray(_xi_table(np.dtype(m.dtype)))[index]
    series = round_up(_xi_series(m), _XI_SERIES_ERROR)
    return jnp.where(m < _XI_TABLE_SIZE, table, series)


@domains(m=Domain(0.0, np.inf, high_open=True))
@jax.jit
def xi(m: ArrayLike) -> jax.Array:
    """``xi(m) = sum_{k=0}^m C(m, k) (k/m)^k (1 - k/m)^(m-k)`` (Germain et al., JMLR 2015).

    ``xi(m) = int_0^inf e^-x (1 + x/m)^m dx = 1 + Q(m)`` with Ramanujan's ``Q`` function.
    Below ``m = 128`` from a table of the exact rational sums, above from the asymptotic
    series ``1 + (m! e^m / m^m - 2 theta(m)) / 2`` (Stirling's and Ramanujan's theta series,
    exact to below ``1e-18`` relative there). Rounded up to the float above (the bounds use it
    as is); constant time in ``m``, any shape of ``m``, traced or not. ``xi(m) ~ sqrt(pi m /
    2)``; ``xi(1000) = 40.3032...``.

    Example:
      >>> round(float(xi(1000)), 4), float(xi(2))  # xi(2) = 1 + 2 (1/2)(1/2) + 1
      (40.3032, 2.5)
    """
    m = jnp.asarray(m, jnp.result_type(m, float))
    return _xi_upper(m)


def _pb_level(kl_term: jax.Array, log_argument: jax.Array, delta, m, argument_error):
    """``(kl_term + ln(log_argument) - ln(delta)) / m`` rounded up, for ``kl_term >= 0`` within
    1 u and ``log_argument >= 2`` within ``argument_error`` u (so its log within
    ``argument_error / ln 2 + 4`` u): two sums of terms ``>= 0`` (2 u), ``m`` and the division
    (2 u)."""
    level = (kl_term + jnp.log(log_argument) - jnp.log(delta)) / m
    return round_up(level, max(argument_error / math.log(2.0) + _LOG, 1.0) + 4.0)


@domains(gibbs_risk=UNIT, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def pac_bound_0(gibbs_risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike):
    """PAC-Bound 0 (Germain et al., JMLR 2015) on the **majority-vote** risk (clipped to 1):

    .. math:: R(B_Q) \\le 2\\,kl^{-1}_{up}(R_S(G_Q), (KL + \\ln(\\xi(m)/\\delta)) / m).

    Example:
      >>> round(float(pac_bound_0(0.1, 1.0, 1000, 0.05)), 4)  # twice a Seeger-type bound
      0.2825
    """
    risk, kl, delta, m = floats_with_size(gibbs_risk, kl, delta, m=m)
    eps = _pb_level(jnp.maximum(kl, 0.0), _xi_upper(m), delta, m, 0.0)
    return at_most_one(2.0 * kl_inv_upper(_unit(risk), eps))


@domains(gibbs_risk=UNIT, disagreement=HALF, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def pac_bound_1(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 1 (Germain et al., JMLR 2015) on the **majority-vote** risk: the C-bound
    ``1 - (1 - 2r)^2 / (1 - 2d)`` at the pessimistic Gibbs risk and disagreement

    .. math:: r = \\min(1/2, kl^{-1}_{up}(R_S, (KL + \\ln(2\\xi(m)/\\delta))/m)), \\quad
              d = \\max(0, kl^{-1}_{low}(d_S, (2KL + \\ln(2\\xi(m)/\\delta))/m)).

    Example:
      >>> round(float(pac_bound_1(0.2, 0.25, 1.0, 1000, 0.05)), 4)  # empirical C-bound 0.28
      0.6076
    """
    risk, dis, kl, delta, m = floats_with_size(gibbs_risk, disagreement, kl, delta, m=m)
    kl = jnp.maximum(kl, 0.0)
    two_xi = 2.0 * _xi_upper(m)
    r = jnp.minimum(0.5, kl_inv_upper(_unit(risk), _pb_level(kl, two_xi, delta, m, 0.0)))
    d = kl_inv_lower(jnp.clip(dis, 0.0, 0.5), _pb_level(2.0 * kl, two_xi, delta, m, 0.0))
    return cbound_upper(round_down(1.0 - 2.0 * r, 1.0), round_up(1.0 - 2.0 * d, 1.0))


@domains(gibbs_risk=UNIT, disagreement=HALF, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
def pac_bound_2(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 2 (Germain et al., JMLR 2015) on the **majority-vote** risk: the largest
    C-bound ``1 - (1 - 2e - d)^2 / (1 - 2d)`` over joint errors and disagreements with

    .. math:: kl(e_S, d_S \\| e, d) \\le (2KL + \\ln((\\xi(m) + m)/\\delta)) / m,
              \\quad d \\le 2(\\sqrt e - e), \\quad 2e + d < 1,

    ``e_S = R_S(G_Q) - d_S / 2``. Solved inside jit and certified by
    ``cbound_trinomial_sup``; differentiable by the envelope theorem.

    Example:
      >>> round(float(pac_bound_2(0.2, 0.25, 1.0, 1000, 0.05)), 4)  # tighter than pac_bound_1
      0.4897
    """
    risk, dis, kl, delta, m = floats_with_size(gibbs_risk, disagreement, kl, delta, m=m)
    risk, dis = _unit(risk), jnp.clip(dis, 0.0, 0.5)
    xi_plus_m = _xi_upper(m) + m  # m's own rounding and the sum: 2 u
    eps = _pb_level(2.0 * jnp.maximum(kl, 0.0), xi_plus_m, delta, m, 2.0)
    joint_error = round_up(jnp.maximum(risk - dis / 2.0, 0.0), 1.0)  # the sup increases in it
    return cbound_trinomial_sup(joint_error, dis, eps)
