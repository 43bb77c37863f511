"""What the second-order bounds share: the dtype rule, Maurer's confidence term, the clip to
``[0, 1]`` and the parametric Chebyshev-Cantelli oracle bound of [WMLIS21].

* ``as_floats(*stats)``: the statistics in one float dtype (``None`` passes through).
* ``maurer_term(n, delta, factor)``: ``ln(factor sqrt(n) / delta)``.
* ``clip_unit(x, clip)``: ``x`` clipped to ``[0, 1]`` when ``clip`` (a bound on a probability).
* ``kl_level(kl_term, n, delta, factor)``: PAC-Bayes-kl's level ``(kl_term + ln(factor
  sqrt(n) / delta)) / n``, rounded up.
* ``sum_up(*terms)``: a sum of terms of any sign, rounded up; ``sum_with_error(*terms)``: the
  float sum and its rounding error bound.
* ``chebyshev_cantelli(numerator, mu)``: ``[numerator]_+ / (1/2 - mu)^2``, rounded up.

Certified values: every bound of :mod:`pacbound._src.bounds.second_order` returns a float ``>=``
the exact value of its formula for the given floats (``n``, ``m`` exact as given), in
float32 and float64 alike, by the rule of :mod:`pacbound._src.bounds` ("Certified values"): the
roundings of each formula are counted (first order: relative errors add through products,
quotients and sums of terms of one sign; sums of terms of both signs add ``u`` times each
partial sum's magnitude) and the value is moved outward past them with ``kl.round_up``
(``round_down`` for a quantity the bound decreases in); the levels are rounded up before they
reach a certified kl-inverse.
"""

from __future__ import annotations

import math
from typing import overload

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.kl import round_up
from pacbound._src.validation import BELOW_HALF, FINITE, domains

__all__ = [
    "as_floats",
    "chebyshev_cantelli",
    "clip_unit",
    "kl_level",
    "maurer_term",
    "sum_up",
    "sum_with_error",
]

# ln(factor sqrt(n) / delta) within 7.2 u: n's conversion and the sqrt 1.5 u, so 1.5 u absolute
# in the first log (>= ln 2), 4 u relative in each log, 1 u for their sum: 1.5 / ln 2 + 5 < 7.2
_MAURER_LOG = 7.2


@overload
def as_floats(*stats: ArrayLike) -> list[jax.Array]: ...


@overload
def as_floats(*stats: ArrayLike | None) -> list[jax.Array | None]: ...


def as_floats(*stats: ArrayLike | None) -> list[jax.Array] | list[jax.Array | None]:
    """The statistics in one float dtype: float32, float64 when a float input is float64.

    Sizes such as ``n`` are cast to it afterwards, so a Python or NumPy integer never promotes.

    Example:
      >>> [None if s is None else str(s.dtype) for s in as_floats(1, 0.5, None)]
      ['float32', 'float32', None]
    """
    dtype = jnp.result_type(*(s for s in stats if s is not None), float)
    return [None if s is None else jnp.asarray(s, dtype) for s in stats]


def maurer_term(n: jax.Array, delta: jax.Array, factor: float) -> jax.Array:
    """``ln(factor sqrt(n) / delta)``: Maurer's (2004) term of PAC-Bayes-kl, ``factor = 2`` per
    inequality (``4`` when ``delta`` is split between two).

    Example:
      >>> round(float(maurer_term(1000.0, 0.05, 2.0)), 4)  # ln(2 sqrt(1000) / 0.05)
      7.1428
    """
    return jnp.log(factor * jnp.sqrt(n)) - jnp.log(delta)


def kl_level(
    kl_term: jax.Array, n: jax.Array, delta: jax.Array, factor: float, delta_roundings: float = 0.0
) -> jax.Array:
    """PAC-Bayes-kl's level ``(kl_term + ln(factor sqrt(n) / delta)) / n`` rounded up (a float
    ``>=`` its exact value), for ``kl_term`` exact (``KL`` or ``2 KL``, clipped at 0),
    ``factor`` 2 or 4, ``n >= 1`` rounded to its float and ``delta <= 1`` within
    ``delta_roundings`` u of the exact confidence (``delta / n_mu``: 2): the log term within
    ``_MAURER_LOG + delta_roundings / ln 2`` u, the sum, ``n`` and the division 3 u.

    Example:
      >>> import math
      >>> import jax.numpy as jnp
      >>> level = kl_level(jnp.float32(1.0), jnp.float32(1000.0), jnp.float32(0.05), 2.0)
      >>> exact = (1.0 + math.log(2.0 * math.sqrt(1000.0) / 0.05)) / 1000.0
      >>> round(float(level), 6), bool(float(level) >= exact)
      (0.008143, True)
    """
    level = (jnp.maximum(kl_term, 0.0) + maurer_term(n, delta, factor)) / n
    return round_up(level, _MAURER_LOG + delta_roundings / math.log(2.0) + 3.0)


def sum_up(*terms: jax.Array) -> jax.Array:
    """``terms[0] + terms[1] + ...`` rounded up, for exact terms of any sign (upper bounds on
    the exact ones where a bound increases in them): ``sum_with_error``'s bound is added, then
    one float up. The derivative is the sum's.

    Example:
      >>> from fractions import Fraction
      >>> import jax.numpy as jnp
      >>> terms = [jnp.float32(0.1), jnp.float32(0.2), jnp.float32(-0.3)]
      >>> exact = sum(Fraction(float(t)) for t in terms)  # the float32 terms' exact sum
      >>> bool(Fraction(float(sum_up(*terms))) >= exact)
      True
    """
    total, error = sum_with_error(*terms)
    return round_up(total + error, 0.0)


def sum_with_error(*terms: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(total, error)``: the float sum of ``terms`` and a bound on its rounding error (no
    gradient), ``u`` times each partial sum's magnitude. ``total + error`` rounded up once
    (``kl.round_up(., 0)``) is ``>=`` the exact sum; so is the smallest such float over a grid,
    rounded up once (the exact minimum is at most the exact sum at the float minimum's slot).

    Example:
      >>> from fractions import Fraction
      >>> import jax.numpy as jnp
      >>> terms = [jnp.float32(0.1), jnp.float32(0.2), jnp.float32(-0.3)]
      >>> total, error = sum_with_error(*terms)
      >>> exact = sum(Fraction(float(t)) for t in terms)
      >>> bool(abs(Fraction(float(total)) - exact) <= Fraction(float(error)))
      True
    """
    total, error = terms[0], jnp.zeros_like(terms[0])
    for term in terms[1:]:
        total = total + term
        error = error + jnp.abs(total)
    return total, lax.stop_gradient(error) * (float(jnp.finfo(total.dtype).eps) / 2.0)


def clip_unit(x: jax.Array, clip: bool = True) -> jax.Array:
    """``x`` clipped to ``[0, 1]`` when ``clip`` (a certificate), at least 0 otherwise (the raw
    value a minimizer follows above 1).

    Example:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([-0.1, 0.5, 1.2])
      >>> [round(float(v), 4) for v in clip_unit(x)]
      [0.0, 0.5, 1.0]
      >>> [round(float(v), 4) for v in clip_unit(x, False)]  # only at least 0
      [0.0, 0.5, 1.2]
    """
    return jnp.clip(x, 0.0, 1.0) if clip else jnp.maximum(x, 0.0)


@domains(numerator=FINITE, mu=BELOW_HALF)
def chebyshev_cantelli(numerator: jax.Array, mu: jax.Array) -> jax.Array:
    """The parametric Chebyshev-Cantelli oracle bound of [WMLIS21] (Wu, Masegosa, Lorenzen,
    Igel, Seldin, NeurIPS 2021, Sec. 3; "Thm 7" in the authors' scripts): for every
    ``mu < 1/2``,

    .. math:: L(MV_\\rho) \\le \\frac{\\mathbb E_{\\rho^2}[L_\\mu(h, h')]}{(1/2 - \\mu)^2},
              \\quad L_\\mu(h, h') = (1[h \\text{ errs}] - \\mu)(1[h' \\text{ errs}] - \\mu),

    from ``MV`` erring only where ``W = E_rho[1[h errs]] >= 1/2`` and Cantelli's inequality
    on ``(W - mu)^2``. ``numerator`` is an upper bound on ``E_{rho^2}[L_mu] = E[(W - mu)^2]
    >= 0``, so its negative part is dropped. Unclipped above (see ``clip_unit``). Rounded up:
    ``1/2 - mu``, its square and the quotient, 4 u.

    Example:
      >>> round(float(chebyshev_cantelli(0.05, 0.0)), 4)  # mu = 0: four times the tandem risk
      0.2
    """
    return round_up(jnp.maximum(numerator, 0.0) / (0.5 - mu) ** 2, 4.0)
