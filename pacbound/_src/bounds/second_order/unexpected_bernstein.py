"""PAC-Bayes-Unexpected-Bernstein (PBUB) and its Chebyshev-Cantelli form on the mu-tandem loss
(CCPBUB).

The un-expected Bernstein inequality bounds the mean of a variable ``X <= b`` (bounded above
only) by its empirical mean plus its empirical *second moment* (``X^2`` outside the
expectation, no variance to estimate) times ``psi(eta b) / (eta b^2)``, with the function
``psi(u) = -ln(1 - u) - u``. For ``xi >= -1`` and ``lambda`` in ``[0, 1)``,
``exp(lambda xi - psi(lambda) xi^2) <= 1 + lambda xi``; at ``xi = -X / b`` and
``lambda = eta b`` its expectation gives
``E exp(eta (E X - X) - psi(eta b) X^2 / b^2) <= 1``, and Donsker-Varadhan over ``n`` i.i.d.
examples the PAC-Bayes form, for each ``eta < 1/b``; [MGG19] take a union bound over a
geometric grid of ``eta``. [WMLIS21]'s code applies it to the mu-tandem loss (at most
``(1 - mu)^2`` for ``mu <= 1/2``), with ``2 KL`` and the pairs' sample size, and turns it into
a bound on ``L(MV_rho)`` by the parametric Chebyshev-Cantelli oracle bound (its CCPBUB).

Sources: [MGG19] Mhammedi, Grünwald, Guedj, "PAC-Bayes Un-Expected Bernstein Inequality",
NeurIPS 2019 (arXiv 1905.13367), Theorem 1 and its grid; [WMLIS21] Wu, Masegosa, Lorenzen,
Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett inequality for the weighted majority vote",
NeurIPS 2021 (arXiv 2106.13624).

Functions: ``pbub``, ``ccpbub``.

Certified values (:mod:`pacbound._src.bounds.second_order.common`): each bound is a float ``>=``
the exact minimum of its formula over its grid. The grid ``eta_i = 1 / (2^i b)`` makes
``eta_i b = 2^-i`` exact, so ``psi(eta b) / (eta b) = sum_{k>=2} 2^{-i(k-1)} / k`` is a table of
constants rounded up once in exact rational arithmetic (``_psi_ratio_table``), and
``2^i`` is exact. Per grid point the spread ``psi(eta b) / (eta b^2) V = table_i V / b`` is
within 2 u (``b`` rounded down where it divides), the complexity ``(KL' + ln(k / delta)) 2^i b
/ n`` within 9 u (the log term 6 u, ``n``, the quotient and the product by ``b`` rounded up
3 u), their sum with the loss (of either sign) by ``common.sum_with_error``; the float minimum of
the values plus their error bounds is rounded up once. The grid's size ``k`` is a float
computed from ``n`` and ``delta`` only (data-independent: the union bound holds over it exactly).
CCPBUB's ``b = (1 - mu)^2`` is rounded up and down (3 u) and its confidence ``delta / n_mu``
down (2 u).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.bennett import grid_parameters
from pacbound._src.bounds.second_order.common import (
    as_floats,
    chebyshev_cantelli,
    clip_unit,
    sum_with_error,
)
from pacbound._src.kl import round_down, round_up
from pacbound._src.validation import (
    BELOW_HALF,
    CONFIDENCE,
    FINITE,
    NONNEGATIVE,
    POSITIVE,
    SIZE,
    domains,
)

__all__ = ["ccpbub", "pbub"]

# static capacity of the eta grid: [MGG19]'s k is 13 at n = 1e9, delta = 1e-6; it grows without
# bound only as delta -> 1 (ln(1/delta) -> 0), where k is capped here (any fixed k is a valid
# union bound; the grid's smallest eta is then 2^-64 / b)
GRID_SIZE = 64


@functools.cache
def _psi_ratio_table(dtype_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(psi(x_i) / x_i, 2^i)`` for ``x_i = 2^-i``, ``i = 1 .. GRID_SIZE``, in ``dtype``:
    ``psi(x) / x = sum_{k>=2} x^{k-1} / k``, summed exactly (``Fraction``) until the tail
    ``<= x^K / ((K + 1)(1 - x))`` is below ``2^-80`` of the sum, the tail bound added, then
    rounded up to the dtype (a float ``>=`` the exact value)."""
    dtype = np.dtype(dtype_name)
    ratios = []
    for i in range(1, GRID_SIZE + 1):
        x = Fraction(1, 2**i)
        total, power, k = Fraction(0), x, 2  # power = x^(k - 1)
        while True:
            total += power / k
            power *= x
            tail = power / ((k + 1) * (1 - x))  # sum_{j > k} x^(j-1) / j <= x^k / ((k+1)(1-x))
            if tail < total / 2**80:
                break
            k += 1
        ratios.append(_float_above(total + tail, dtype))
    powers = np.array([2.0**i for i in range(1, GRID_SIZE + 1)], dtype)  # exact
    return np.array(ratios, dtype), powers


def _float_above(value: Fraction, dtype: np.dtype) -> np.floating:
    """The least float of ``dtype`` (nearly: one ulp at most above it) ``>= value``."""
    x = dtype.type(float(value))
    while Fraction(float(x)) < value:
        x = np.nextafter(x, dtype.type(np.inf))
    return x


def _pbub_min(
    loss: jax.Array,
    second_moment: jax.Array,
    kl_term: jax.Array,
    n: jax.Array,
    delta: jax.Array,
    b_low: jax.Array,
    b_up: jax.Array,
) -> jax.Array:
    """``min_{i <= k} loss + psi(2^-i) 2^i / b * second_moment + (kl_term + ln(k / delta))
    2^i b / n`` over [MGG19]'s grid ``eta_i = 1 / (2^i b)``, ``k = ceil(log2(sqrt(n / ln(1 /
    delta)) / 2))`` (at least 1, at most ``GRID_SIZE``), rounded up; ``b_low <= b <= b_up``."""
    every = (loss, second_moment, kl_term, n, delta, b_low, b_up)
    n_fixed, delta_fixed = grid_parameters(every, (n, delta))
    root = jnp.sqrt(n_fixed / jnp.abs(jnp.log(delta_fixed)))  # +inf at delta = 1: k capped
    count = jnp.clip(jnp.ceil(jnp.log2(root / 2.0)), 1.0, GRID_SIZE)
    ratio, power = (jnp.asarray(t) for t in _psi_ratio_table(jnp.dtype(loss.dtype).name))
    axis = (GRID_SIZE,) + (1,) * count.ndim
    ratio, power = ratio.reshape(axis), power.reshape(axis)
    valid = jnp.arange(1, GRID_SIZE + 1, dtype=loss.dtype).reshape(axis) <= count
    # psi(eta b) / (eta b^2) V = ratio_i V / b: the product and the quotient, 2 u
    spread = ratio * jnp.maximum(second_moment, 0.0) / b_low
    log_term = jnp.maximum(kl_term, 0.0) + jnp.log(count) - jnp.log(delta)  # 6 u
    complexity = log_term / n * power * b_up  # n, the quotient, the product by b: 9 u
    values, error = sum_with_error(loss, spread, complexity)
    u = float(jnp.finfo(loss.dtype).eps) / 2.0
    error = error + lax.stop_gradient(2.0 * spread + 9.0 * complexity) * u
    # every slot's value plus its error bound; the float minimum rounded up once
    return round_up(jnp.min(jnp.where(valid, values + error, jnp.inf), axis=0), 0.0)


def _at_most(x: jax.Array, cap: jax.Array) -> jax.Array:
    """``min(x, cap)`` with the derivative of ``x`` (:mod:`pacbound._src.bounds.first_order`,
    "Clipping": a minimizer started where the bound is vacuous still moves)."""
    value = lax.stop_gradient(x)
    return jnp.where(value <= cap, x, cap + (x - value))


@domains(
    loss=FINITE,
    second_moment=NONNEGATIVE,
    kl=NONNEGATIVE,
    n=SIZE,
    delta=CONFIDENCE,
    b=POSITIVE,
)
@jax.jit
def pbub(
    loss: ArrayLike,
    second_moment: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    delta: ArrayLike,
    b: ArrayLike = 1.0,
) -> jax.Array:
    """PAC-Bayes-Unexpected-Bernstein ([MGG19] Theorem 1 with a fixed prior and no reference
    predictor, the form [WMLIS21]'s code evaluates) on the
    ``Q``-average of a loss bounded above by ``b`` (the Gibbs loss: ``b = 1``), the smallest
    over its grid of ``k`` values of ``eta`` (union bound ``ln(k / delta)``):

    .. math:: \\mathbb E_Q[L] \\le \\min_{\\eta \\in G} \\mathbb E_Q[\\hat L_S] +
              \\frac{\\psi(\\eta b)}{\\eta b^2} \\mathbb E_Q[\\hat V_S] +
              \\frac{KL(Q||P) + \\ln(k/\\delta)}{\\eta n}, \\quad \\psi(u) = -\\ln(1-u) - u,

    ``G = {1 / (2^i b) : i = 1, ..., k}``, ``k = ceil(log2(sqrt(n / ln(1/delta)) / 2))`` (at
    least 1; capped at 64 as ``delta -> 1``), ``V_S = (1/n) sum_i l(h, Z_i)^2`` the empirical
    **second moment** (not the variance). It holds for all ``Q`` at once with probability at
    least ``1 - delta``. Clipped to at most ``b`` (the clip acts on the value only, the
    derivative is the formula's); no lower clip (a loss bounded above only may be negative).
    For a ``[0, 1]`` loss ``l^2 <= l``, so ``second_moment = loss`` is valid (exact for the
    0-1 loss).

    Args:
      loss: ``E_Q[L_hat_S]``, the empirical ``Q``-average loss.
      second_moment: ``E_Q[V_hat_S]``, the ``Q``-average of the empirical mean of ``l^2``.
      kl: ``KL(Q||P)``.
      n: the sample size.
      delta: the confidence.
      b: the upper bound of the loss (``> 0``).

    Example:
      >>> round(float(pbub(0.1, 0.1, 1.0, 1000, 0.05)), 4)  # Gibbs risk 0.1, KL 1, n = 1000
      0.1366
    """
    loss, second_moment, kl, delta, b = as_floats(loss, second_moment, kl, delta, b)
    n = jnp.asarray(n, kl.dtype)
    value = _pbub_min(loss, second_moment, kl, n, delta, b, b)
    return _at_most(value, b)


@domains(
    mu_tandem_risk=FINITE,
    mu_tandem_second_moment=NONNEGATIVE,
    kl=NONNEGATIVE,
    n2=SIZE,
    delta=CONFIDENCE,
    mu=BELOW_HALF,
    n_mu=SIZE,
)
@functools.partial(jax.jit, static_argnames="clip")
def ccpbub(
    mu_tandem_risk: ArrayLike,
    mu_tandem_second_moment: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    n_mu: ArrayLike = 1,
    clip: bool = True,
) -> jax.Array:
    """CCPBUB ([WMLIS21]'s comparison bound): PBUB ([MGG19] Thm 1, ``pbub``) on the mu-tandem
    loss ``L_mu(h, h') = (1[h errs] - mu)(1[h' errs] - mu) <= b = (1 - mu)^2`` with
    ``KL(rho^2||pi^2) = 2 KL`` and the pair sample size, then Chebyshev-Cantelli:

    .. math:: L(MV_\\rho) \\le \\frac{\\min_{\\eta \\in G} \\hat L_\\mu + \\frac{\\psi(\\eta
              b)}{\\eta b^2} \\hat V_\\mu + \\frac{2KL + \\ln(k/\\delta')}{\\eta n_2}}{(1/2 -
              \\mu)^2}, \\quad \\delta' = \\delta / n_\\mu,

    ``G``, ``k`` and ``psi`` as in ``pbub`` (with ``n_2`` and ``delta'``), ``V_mu`` the
    empirical second moment ``E_{rho^2} E_S[L_mu^2]``. For ``±1`` voters ``(1[h errs] - mu)^2
    = 1[h errs](1 - 2 mu) + mu^2``, so ``E_{rho^2}[L_mu^2] = (W (1 - 2 mu) + mu^2)^2`` per
    example (``W`` the rho-weighted error) and ``V_mu = (1 - 2 mu)^2 e + 2 mu^2 (1 - 2 mu) r +
    mu^4`` from the joint error ``e = E[W^2]`` and the Gibbs risk ``r``; for losses ``l`` in
    ``[0, 1]`` (voters in ``[-1, 1]``) ``l^2 <= l`` makes it an upper bound (any ``mu``). ``mu``
    must be fixed before seeing the data or taken from a data-independent grid of ``n_mu``
    values (union bound). Rounded up: ``b``'s two roundings, ``delta'`` down, the Cantelli
    quotient (``common.chebyshev_cantelli``).

    Args:
      mu_tandem_risk: ``E_{rho^2}[L_hat_mu]`` (``e - 2 mu r + mu^2`` from the margins).
      mu_tandem_second_moment: ``E_{rho^2} E_S[L_mu^2]`` (or an upper bound on it).
      kl, n2, delta: ``KL(rho||pi)``, pair sample size, confidence.
      mu: ``mu < 1/2``.
      n_mu: size of the grid ``mu`` was taken from (1 for a fixed ``mu``).
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value (at least 0).

    Example:
      >>> mu = 0.1
      >>> e, r = 0.05, 0.2  # joint error and Gibbs risk
      >>> risk = e - 2 * mu * r + mu**2
      >>> second = (1 - 2 * mu) ** 2 * e + 2 * mu**2 * (1 - 2 * mu) * r + mu**4
      >>> round(float(ccpbub(risk, second, 1.0, 1000, 0.05, mu)), 4)
      0.2948
    """
    mu_tandem_risk, second, kl, delta, mu = as_floats(
        mu_tandem_risk, mu_tandem_second_moment, kl, delta, mu
    )
    n2 = jnp.asarray(n2, kl.dtype)
    level = round_down(delta / jnp.asarray(n_mu, delta.dtype), 2.0)  # n_mu, the quotient
    b = (1.0 - mu) ** 2  # 1 - mu and the square: 3 u
    b_low, b_up = round_down(b, 3.0), round_up(b, 3.0)
    numerator = _pbub_min(mu_tandem_risk, second, 2.0 * kl, n2, level, b_low, b_up)
    return clip_unit(chebyshev_cantelli(numerator, mu), clip)
