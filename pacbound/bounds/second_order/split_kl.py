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

from pacbound.bounds.second_order.common import (
    as_floats,
    chebyshev_cantelli,
    clip_unit,
    maurer_term,
)
from pacbound.kl import kl_inv_lower, kl_inv_upper

__all__ = ["pac_bayes_split_kl", "split_kl_mu_tandem"]


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
    n = jnp.asarray(n, kl.dtype)
    eps = (kl + maurer_term(n, delta, 4.0)) / n
    up, down = b - mid, mid - a
    plus = kl_inv_upper(_rate(plus_mean, up), eps)
    minus = kl_inv_lower(_rate(minus_mean, down), eps)
    return mid + up * plus - down * minus


def _rate(mean, width):
    """``mean / width`` in ``[0, 1]`` (rounding may put a part's mean a hair above its width), 0
    for an empty side."""
    return jnp.where(width > 0, jnp.clip(mean / jnp.where(width > 0, width, 1.0), 0.0, 1.0), 0.0)


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
    ``tnd_kl`` at ``delta / 2``.

    Args:
      both, one, neither: ``loss_statistics.ternary_rates`` (they sum to 1).
      kl, n2, delta, mu, n_mu: ``KL(rho||pi)``, pair sample size, confidence, ``mu < 1/2``, grid
        size of the union bound.
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value (at least 0).

    Example:
      >>> from pacbound.bounds.second_order.tandem import tnd_kl
      >>> b = split_kl_mu_tandem(0.05, 0.3, 0.65, 1.0, 1000, 0.05, 0.0)  # both / one / neither err
      >>> round(float(b), 4), bool(b == tnd_kl(0.05, 1.0, 1000, 0.025))  # mu = 0: TND at delta / 2
      (0.3462, True)
    """
    both, one, neither, kl, delta, mu = as_floats(both, one, neither, kl, delta, mu)
    low = jnp.where(mu >= 0, -mu * (1.0 - mu), mu**2)
    mid = jnp.where(mu >= 0, mu**2, -mu * (1.0 - mu))
    high = (1.0 - mu) ** 2
    minus_rate = jnp.where(mu >= 0, one, neither)
    numerator = pac_bayes_split_kl(
        (high - mid) * both,
        (mid - low) * minus_rate,
        2.0 * kl,
        n2,
        delta / jnp.asarray(n_mu, delta.dtype),
        low,
        mid,
        high,
    )
    return clip_unit(chebyshev_cantelli(numerator, mu), clip)
