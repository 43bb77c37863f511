"""PAC-Bayes-split-kl ([WS22]) and its Chebyshev-Cantelli bound on the weighted majority vote.

A loss ``Z`` in ``[a, b]`` split at ``mid`` is ``mid + Z^+ - Z^-`` with ``Z^+ = max(0, Z - mid)``
in ``[0, b - mid]`` and ``Z^- = max(0, mid - Z)`` in ``[0, mid - a]``: PAC-Bayes-kl on each part
(``delta / 2`` each) adapts to the variance of a ternary loss such as the mu-tandem loss.

Source: [WS22] Wu, Seldin, "Split-kl and PAC-Bayes-split-kl inequalities for ternary random
variables", NeurIPS 2022 (arXiv 2206.00706).

Functions: ``pac_bayes_split_kl``, ``split_kl_mu_tandem``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.common import (
    as_floats,
    chebyshev_cantelli,
    clip_unit,
    kl_level,
    sum_up,
)
from pacbound._src.kl import kl_inv_lower, kl_inv_upper, round_down, round_up
from pacbound._src.validation import (
    BELOW_HALF,
    CONFIDENCE,
    FINITE,
    NONNEGATIVE,
    SIZE,
    UNIT,
    Domain,
    domains,
)

__all__ = ["pac_bayes_split_kl", "split_kl_mu_tandem"]


def _split_value(
    mid: jax.Array,
    mid_roundings: float | jax.Array,
    widths: tuple[tuple[jax.Array, jax.Array], ...],
    rates: tuple[jax.Array, jax.Array],
    eps: jax.Array,
) -> jax.Array:
    """``mid + w+ kl^-1_up(r+, eps) - w- kl^-1_low(r-, eps)`` rounded up, from ``mid`` within
    ``mid_roundings`` u, ``widths = ((w+_up, w+_low), (w-_up, w-_low))`` around the exact
    widths and ``rates = (r+ rounded up, r- rounded down)``: each kl-inverse increases with its
    rate, so the gain is taken at its upper ends, the loss at its lower ones (each product 1 u).
    """
    (plus_up, _), (_, minus_low) = widths
    gain = round_up(plus_up * kl_inv_upper(rates[0], eps), 1.0)
    loss = round_down(minus_low * kl_inv_lower(rates[1], eps), 1.0)
    roundoff = float(jnp.finfo(mid.dtype).eps) / 2.0
    own = mid_roundings * roundoff * jax.lax.stop_gradient(jnp.abs(mid))
    return sum_up(mid, gain, -loss, own)


def _rate(mean: jax.Array, width: jax.Array, up: bool) -> jax.Array:
    """``mean / width`` rounded up (``up``) or down, in ``[0, 1]`` (rounding may put a part's
    mean a hair above its width), 0 for an empty side; ``width`` is a bound on the exact width
    on the side that moves the rate the same way."""
    rate = mean / jnp.where(width > 0, width, 1.0)
    rate = round_up(rate, 1.0) if up else round_down(rate, 1.0)
    return jnp.where(width > 0, jnp.clip(rate, 0.0, 1.0), 0.0)


@domains(
    plus_mean=NONNEGATIVE,
    minus_mean=NONNEGATIVE,
    kl=NONNEGATIVE,
    n=SIZE,
    delta=CONFIDENCE,
    a=FINITE,
    mid=Domain("a", "b"),
    b=FINITE,
)
def pac_bayes_split_kl(
    plus_mean: ArrayLike,
    minus_mean: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    delta: ArrayLike,
    a: ArrayLike,
    mid: ArrayLike,
    b: ArrayLike,
) -> jax.Array:
    """PAC-Bayes-split-kl ([WS22]) on ``E_rho[E[Z]]`` for a loss ``Z`` in ``[a, b]`` split at
    ``mid``: ``Z = mid + Z^+ - Z^-``, ``Z^+ = max(0, Z - mid)``, ``Z^- = max(0, mid - Z)``, each
    part's PAC-Bayes-kl with ``delta / 2``:

    .. math:: \\mathbb E_\\rho[\\mathbb E Z] \\le \\mathrm{mid} + (b - \\mathrm{mid})\\,
              kl^{-1}_{up}\\Big(\\frac{\\hat Z^+}{b - \\mathrm{mid}}, \\varepsilon\\Big) -
              (\\mathrm{mid} - a)\\,kl^{-1}_{low}\\Big(\\frac{\\hat Z^-}{\\mathrm{mid} - a},
              \\varepsilon\\Big), \\quad \\varepsilon = \\frac{KL + \\ln(4\\sqrt n/\\delta)}{n}.

    Not clipped (a bound on a mean in ``[a, b]``). Pass ``kl = 2 KL(rho||pi)`` for pair losses.
    Certified: the level rounded up, each width rounded both ways (1 u) and each rate on the
    side that raises the bound (``_split_value``), the sum rounded up.

    Args:
      plus_mean, minus_mean: ``E_rho`` of the empirical means of ``Z^+`` and ``Z^-``.
      kl: the KL term (``KL(rho||pi)``, or ``2 KL`` over ``rho^2``).
      n, delta: sample size and confidence.
      a, mid, b: the range and the split point, ``a <= mid <= b``.

    Example:
      >>> b = pac_bayes_split_kl(0.05, 0.1, 1.0, 1000, 0.05, -1.0, 0.0, 1.0)  # Z in [-1, 1]
      >>> round(float(b), 4), bool(b >= 0.05 - 0.1)  # above the empirical mean
      (0.0195, True)
    """
    plus_mean, minus_mean, kl, delta, a, mid, b = as_floats(
        plus_mean, minus_mean, kl, delta, a, mid, b
    )
    eps = kl_level(kl, jnp.asarray(n, kl.dtype), delta, 4.0)
    plus, minus = b - mid, mid - a
    widths = tuple((round_up(w, 1.0), jnp.maximum(round_down(w, 1.0), 0.0)) for w in (plus, minus))
    rates = (_rate(plus_mean, widths[0][1], True), _rate(minus_mean, widths[1][0], False))
    return _split_value(mid, 0.0, widths, rates, eps)


@domains(
    both=UNIT,
    one=UNIT,
    neither=UNIT,
    kl=NONNEGATIVE,
    n2=SIZE,
    delta=CONFIDENCE,
    mu=BELOW_HALF,
    n_mu=SIZE,
)
def split_kl_mu_tandem(
    both: ArrayLike,
    one: ArrayLike,
    neither: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    n_mu: ArrayLike = 1,
    clip: bool = True,
) -> jax.Array:
    """Chebyshev-Cantelli with PAC-Bayes-split-kl on the mu-tandem loss ([WS22] Sec. 4, the
    weighted majority vote): the loss takes ``(1-mu)^2 / -mu(1-mu) / mu^2`` when both / one /
    neither voter errs; split at its middle value, its parts are indicators:

    * ``mu >= 0``: ``a = -mu(1-mu)``, ``mid = mu^2``, ``b = (1-mu)^2``; ``Z^+ = (1 - 2mu) 1[both]``,
      ``Z^- = mu 1[exactly one]``;
    * ``mu < 0``: ``a = mu^2``, ``mid = -mu(1-mu)``, ``b = (1-mu)^2``; ``Z^+ = (1 - mu) 1[both]``,
      ``Z^- = -mu 1[neither]``;

    then ``L(MV) <= split-kl / (1/2 - mu)^2`` with ``2 KL`` and ``delta / n_mu`` (``n_mu`` the
    size of the data-independent ``mu`` grid, 1 for a fixed ``mu``). At ``mu = 0`` it is
    ``tnd_kl`` at ``delta / 2``. Certified: the parts' rates are the given ``both`` and ``one``
    (``neither``) themselves; the widths ``1 - 2mu`` (``1 - mu``) carry 1 rounding, ``mu``
    none; ``mid`` 1 (2); ``delta / n_mu`` 2; the rest as ``pac_bayes_split_kl`` and
    ``common.chebyshev_cantelli``.

    Args:
      both, one, neither: ``loss_statistics.ternary_rates`` (they sum to 1).
      kl, n2, delta, mu, n_mu: ``KL(rho||pi)``, pair sample size, confidence, ``mu < 1/2``, grid
        size of the union bound.
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value (at least 0).

    Example:
      >>> from pacbound._src.bounds.second_order.tandem import tnd_kl
      >>> b = split_kl_mu_tandem(0.05, 0.3, 0.65, 1.0, 1000, 0.05, 0.0)  # both / one / neither err
      >>> tnd = tnd_kl(0.05, 1.0, 1000, 0.025)  # mu = 0: TND at delta / 2, to rounding
      >>> round(float(b), 4), bool(abs(b - tnd) < 1e-5)
      (0.3462, True)
    """
    both, one, neither, kl, delta, mu = as_floats(both, one, neither, kl, delta, mu)
    positive = mu >= 0
    mid = jnp.where(positive, mu**2, -mu * (1.0 - mu))
    plus = jnp.where(positive, 1.0 - 2.0 * mu, 1.0 - mu)
    minus = jnp.abs(mu)
    widths = ((round_up(plus, 1.0), round_down(plus, 1.0)), (minus, minus))
    unit = (jnp.clip(both, 0.0, 1.0), jnp.clip(jnp.where(positive, one, neither), 0.0, 1.0))
    n_mu = jnp.asarray(n_mu, delta.dtype)
    eps = kl_level(2.0 * kl, jnp.asarray(n2, kl.dtype), delta / n_mu, 4.0, 2.0)
    numerator = _split_value(mid, jnp.where(positive, 1.0, 2.0), widths, unit, eps)
    return clip_unit(chebyshev_cantelli(numerator, mu), clip)
