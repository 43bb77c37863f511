"""Second-order PAC-Bayes bounds on the risk of a weighted majority vote ``MV_rho``.

Every function is pure, jittable, differentiable in the statistics and ``kl`` (``rho`` enters
only through them), broadcasts over its numeric arguments and is vmappable; each returns a
bound on ``L(MV_rho)`` in ``[0, 1]`` that holds with probability at least ``1 - delta`` for all
posteriors ``rho`` simultaneously (and for all values of the free parameter where the
docstring says so). The statistics come from :mod:`pacbound.loss_statistics`; ``kl`` is
``KL(rho||pi)`` (pairs pay ``KL(rho^2||pi^2) = 2 KL``); ``n`` counts the examples of the Gibbs
risk (``min_j |OOB_j|`` out of bag) and ``n2`` those of the pair statistics
(``min_{j,k} |OOB_j cap OOB_k|``). Arguments are not validated here (they may be traced):
``delta`` in ``(0, 1]``, ``mu < 1/2``, sizes ``>= 1`` (``n2 >= 2`` for CCPBB).

Sources:

* [MLIS20] Masegosa, Lorenzen, Igel, Seldin, "Second order PAC-Bayesian bounds for the weighted
  majority vote", NeurIPS 2020 (arXiv 2007.13532): tandem loss, ``L(MV) <= 4 E_{rho^2}[L(h,
  h')]``, the TND bound (kl and lambda forms), the DIS bound.
* [WMLIS21] Wu, Masegosa, Lorenzen, Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett
  inequality for the weighted majority vote", NeurIPS 2021 (arXiv 2106.13624): the
  Chebyshev-Cantelli oracle bound ``L(MV) <= E_{rho^2}[L_mu(h, h')] / (1/2 - mu)^2``, CCTND,
  the variance bound (Thm 13) and CCPBB (Thm 15).
* [WS22] Wu, Seldin, "Split-kl and PAC-Bayes-split-kl inequalities for ternary random
  variables", NeurIPS 2022 (arXiv 2206.00706).
* [GLLMR15] Germain, Lacasse, Laviolette, Marchand, Roy, "Risk bounds for the majority vote",
  JMLR 16, 2015: PAC-Bound 1' and 2'.
* [TS13] Tolstikhin, Seldin, "PAC-Bayes-empirical-Bernstein inequality", NeurIPS 2013.

Functions: ``first_order_kl``; ``tnd_kl``, ``tnd_lambda``, ``tnd_optimal_lambda``,
``tnd_lambda_optimal``; ``dis``; ``cctnd``, ``cctnd_optimal_mu``, ``cctnd_optimal``;
``mu_tandem_range``, ``variance_upper_bound``, ``pac_bayes_bennett``, ``ccpbb``,
``ccpbb_over_mu``; ``pac_bayes_split_kl``, ``split_kl_mu_tandem``; ``pac_bound_1_prime``,
``pac_bound_2_prime``.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.bounds import seeger, xi
from pacbound.cbound import cbound_from_risk
from pacbound.kl import binary_kl, kl_inv_lower, kl_inv_upper

__all__ = [
    "ccpbb",
    "ccpbb_over_mu",
    "cctnd",
    "cctnd_optimal",
    "cctnd_optimal_mu",
    "dis",
    "first_order_kl",
    "mu_tandem_range",
    "pac_bayes_bennett",
    "pac_bayes_split_kl",
    "pac_bound_1_prime",
    "pac_bound_2_prime",
    "split_kl_mu_tandem",
    "tnd_kl",
    "tnd_lambda",
    "tnd_lambda_optimal",
    "tnd_optimal_lambda",
    "variance_upper_bound",
]


def _floats(*stats: ArrayLike) -> list[jax.Array]:
    """The statistics in one float dtype: float32, float64 when a float input is float64.

    Sizes such as ``n`` are cast to it afterwards, so a Python or NumPy integer never promotes.
    """
    dtype = jnp.result_type(*(s for s in stats if s is not None), float)
    return [None if s is None else jnp.asarray(s, dtype) for s in stats]


def _confidence(n: jax.Array, delta: jax.Array, factor: float) -> jax.Array:
    """``ln(factor sqrt(n) / delta)``: Maurer's term, with ``factor = 2`` per inequality
    (``4`` when ``delta`` is split in two)."""
    return jnp.log(factor * jnp.sqrt(n)) - jnp.log(delta)


def _clip01(x: jax.Array) -> jax.Array:
    return jnp.clip(x, 0.0, 1.0)


def _cantelli(numerator: jax.Array, mu: jax.Array) -> jax.Array:
    """``[numerator]_+ / (1/2 - mu)^2`` clipped to ``[0, 1]`` ([WMLIS21], the parametric
    Chebyshev-Cantelli oracle bound; ``E_{rho^2}[L_mu] = E_D[(E_rho[1[h errs]] - mu)^2] >= 0``)."""
    return _clip01(jnp.maximum(numerator, 0.0) / (0.5 - mu) ** 2)


# ------------------------------------------------------------------------------------------
# First order and tandem (TND) bounds
# ------------------------------------------------------------------------------------------


def first_order_kl(
    gibbs_risk: ArrayLike, kl: ArrayLike, n: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """First-order bound ``L(MV) <= 2 E_rho[L(h)]`` with PAC-Bayes-kl ([MLIS20] Sec. 2, the
    first-order oracle bound; Seeger 2002, Maurer 2004):

    .. math:: L(MV_\\rho) \\le \\min\\big(1,\\ 2\\,kl^{-1}_{up}\\big(\\hat L(\\rho),
              \\frac{KL(\\rho\\|\\pi) + \\ln(2\\sqrt n/\\delta)}{n}\\big)\\big).

    Args:
      gibbs_risk: ``E_rho[L_hat(h)]``.
      kl: ``KL(rho||pi)``.
      n: sample size of the Gibbs risk.
      delta: confidence.
    """
    gibbs_risk, kl, delta = _floats(gibbs_risk, kl, delta)
    return _clip01(2.0 * seeger(gibbs_risk, kl, jnp.asarray(n, kl.dtype), delta))


def tnd_kl(tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike) -> jax.Array:
    """TND bound, kl form ([MLIS20], second-order oracle bound ``L(MV) <= 4 E_{rho^2}[L(h,
    h')]`` with PAC-Bayes-kl on the tandem loss over ``rho^2``):

    .. math:: L(MV_\\rho) \\le \\min\\big(1,\\ 4\\,kl^{-1}_{up}\\big(\\hat T(\\rho),
              \\frac{2 KL(\\rho\\|\\pi) + \\ln(2\\sqrt{n_2}/\\delta)}{n_2}\\big)\\big).

    Args:
      tandem_risk: ``E_{rho^2}[L_hat(h, h')]``.
      kl: ``KL(rho||pi)``.
      n2: sample size of the tandem losses.
      delta: confidence.
    """
    tandem_risk, kl, delta = _floats(tandem_risk, kl, delta)
    n2 = jnp.asarray(n2, kl.dtype)
    eps = (2.0 * kl + _confidence(n2, delta, 2.0)) / n2
    return _clip01(4.0 * kl_inv_upper(tandem_risk, eps))


def tnd_lambda(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike, lam: ArrayLike
) -> jax.Array:
    """TND bound, lambda form ([MLIS20], PAC-Bayes-lambda of Thiemann et al. 2017 on the tandem
    loss), for every ``lam`` in ``(0, 2)`` simultaneously (so ``lam`` may depend on the data):

    .. math:: L(MV_\\rho) \\le \\min\\Big(1,\\ 4\\Big[\\frac{\\hat T(\\rho)}{1 - \\lambda/2} +
              \\frac{2 KL(\\rho\\|\\pi) + \\ln(2\\sqrt{n_2}/\\delta)}
              {\\lambda (1 - \\lambda/2) n_2}\\Big]\\Big).

    A relaxation of ``tnd_kl`` (never below it).
    """
    tandem_risk, kl, delta, lam = _floats(tandem_risk, kl, delta, lam)
    n2 = jnp.asarray(n2, kl.dtype)
    scale = 1.0 - lam / 2.0
    complexity = (2.0 * kl + _confidence(n2, delta, 2.0)) / (lam * scale * n2)
    return _clip01(4.0 * (tandem_risk / scale + complexity))


def tnd_optimal_lambda(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """The ``lam`` minimizing ``tnd_lambda`` ([MLIS20]; Thiemann et al. 2017):

    .. math:: \\lambda^* = \\frac{2}{\\sqrt{2 n_2 \\hat T(\\rho) / (2KL + \\ln(2\\sqrt{n_2}/
              \\delta)) + 1} + 1} \\in (0, 1].
    """
    tandem_risk, kl, delta = _floats(tandem_risk, kl, delta)
    n2 = jnp.asarray(n2, kl.dtype)
    complexity = 2.0 * kl + _confidence(n2, delta, 2.0)
    return 2.0 / (jnp.sqrt(2.0 * n2 * tandem_risk / complexity + 1.0) + 1.0)


def tnd_lambda_optimal(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """``tnd_lambda`` at ``tnd_optimal_lambda``; its gradient is the envelope theorem's (the
    bound's partial derivatives at the optimal ``lam``, held fixed)."""
    lam = lax.stop_gradient(tnd_optimal_lambda(tandem_risk, kl, n2, delta))
    return tnd_lambda(tandem_risk, kl, n2, delta, lam)


def dis(
    gibbs_risk: ArrayLike,
    disagreement: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    m: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """DIS bound for **binary** classification ([MLIS20]: ``E_{rho^2}[L(h, h')] = E_rho[L(h)] -
    E_{rho^2}[D(h, h')] / 2``), with the disagreement estimated on ``m`` (possibly unlabeled)
    examples; ``delta`` split in two (``ln(4 sqrt(.) / delta)``):

    .. math:: L(MV_\\rho) \\le 4\\,kl^{-1}_{up}\\big(\\hat L(\\rho), \\frac{KL + \\ln(4\\sqrt n/
              \\delta)}{n}\\big) - 2\\,kl^{-1}_{low}\\big(\\hat D(\\rho), \\frac{2KL +
              \\ln(4\\sqrt m/\\delta)}{m}\\big),

    clipped to ``[0, 1]``.

    Args:
      gibbs_risk: ``E_rho[L_hat(h)]`` on ``n`` labeled examples.
      disagreement: ``E_{rho^2}[D_hat(h, h')]`` on ``m`` examples (unlabeled, or labeled and
        unlabeled together; ``min`` of the pair counts out of bag).
      kl, n, m, delta: ``KL(rho||pi)``, the two sample sizes, the confidence.
    """
    gibbs_risk, disagreement, kl, delta = _floats(gibbs_risk, disagreement, kl, delta)
    n, m = jnp.asarray(n, kl.dtype), jnp.asarray(m, kl.dtype)
    gibbs_up = kl_inv_upper(gibbs_risk, (kl + _confidence(n, delta, 4.0)) / n)
    dis_low = kl_inv_lower(disagreement, (2.0 * kl + _confidence(m, delta, 4.0)) / m)
    return _clip01(4.0 * gibbs_up - 2.0 * dis_low)


# ------------------------------------------------------------------------------------------
# Chebyshev-Cantelli with kl (CCTND)
# ------------------------------------------------------------------------------------------


def _cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta):
    """``(T_up, G_low, G_up)``: the PAC-Bayes-kl inversions of CCTND, ``delta / 2`` each."""
    tandem_risk, gibbs_risk, kl, delta = _floats(tandem_risk, gibbs_risk, kl, delta)
    n, n2 = jnp.asarray(n, kl.dtype), jnp.asarray(n2, kl.dtype)
    tandem_up = kl_inv_upper(tandem_risk, (2.0 * kl + _confidence(n2, delta, 4.0)) / n2)
    eps = (kl + _confidence(n, delta, 4.0)) / n
    return tandem_up, kl_inv_lower(gibbs_risk, eps), kl_inv_upper(gibbs_risk, eps)


def _cctnd_value(tandem_up, gibbs_low, gibbs_up, mu):
    gibbs = jnp.where(mu >= 0, gibbs_low, gibbs_up)
    return _cantelli(tandem_up - 2.0 * mu * gibbs + mu**2, mu)


def cctnd(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
) -> jax.Array:
    """CCTND bound ([WMLIS21]): the Chebyshev-Cantelli oracle bound ``L(MV) <= (E_{rho^2}[L(h,
    h')] - 2 mu E_rho[L(h)] + mu^2) / (1/2 - mu)^2`` with PAC-Bayes-kl on the tandem loss
    (``n2``) and on the Gibbs risk (``n``), ``delta / 2`` each:

    .. math:: L(MV_\\rho) \\le \\frac{kl^{-1}_{up}(\\hat T, \\frac{2KL + \\ln(4\\sqrt{n_2}/
              \\delta)}{n_2}) - 2\\mu\\,\\tilde L + \\mu^2}{(1/2 - \\mu)^2}, \\quad
              \\tilde L = kl^{-1}_{low / up}\\big(\\hat L, \\frac{KL + \\ln(4\\sqrt n/\\delta)}{n}
              \\big)\\ \\text{for}\\ \\mu \\ge 0 / \\mu < 0.

    Both kl inequalities are two-sided and hold for all ``rho`` at once, and ``mu`` enters only
    after them, so the bound holds for every ``mu < 1/2`` simultaneously: ``mu`` may be chosen
    from the data (``cctnd_optimal``) without a union bound. At ``mu = 0`` it is ``tnd_kl`` at
    ``delta / 2``.
    """
    parts = _cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta)
    return _cctnd_value(*parts, jnp.asarray(mu, parts[0].dtype))


def _stationary_mu(tandem_up, gibbs):
    """Stationary point ``(G/2 - T) / (1/2 - G)`` of ``(T - 2 mu G + mu^2) / (1/2 - mu)^2``
    (a minimum when ``G < 1/2``)."""
    return (0.5 * gibbs - tandem_up) / jnp.where(gibbs < 0.5, 0.5 - gibbs, 1.0)


def cctnd_optimal_mu(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """The ``mu < 1/2`` minimizing ``cctnd``, in closed form ([WMLIS21], the update
    ``mu = (G/2 - T) / (1/2 - G)`` of its alternating minimization), on each of the two
    branches (``G = G_low`` for ``mu >= 0``, ``G_up`` for ``mu < 0``), the better one kept."""
    tandem_up, gibbs_low, gibbs_up = _cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta)
    upper = 0.5 - jnp.finfo(tandem_up.dtype).eps
    mu_plus = jnp.clip(_stationary_mu(tandem_up, gibbs_low), 0, upper)
    mu_plus = jnp.where(gibbs_low < 0.5, mu_plus, 0)
    mu_minus = jnp.where(gibbs_up < 0.5, jnp.minimum(_stationary_mu(tandem_up, gibbs_up), 0), 0)
    plus = _cctnd_value(tandem_up, gibbs_low, gibbs_up, mu_plus)
    minus = _cctnd_value(tandem_up, gibbs_low, gibbs_up, mu_minus)
    return jnp.where(plus <= minus, mu_plus, mu_minus)


def cctnd_optimal(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """``cctnd`` at ``cctnd_optimal_mu`` (valid: CCTND holds for all ``mu`` at once); gradient
    by the envelope theorem (``mu`` held at its optimum)."""
    mu = lax.stop_gradient(cctnd_optimal_mu(tandem_risk, gibbs_risk, kl, n, n2, delta))
    return cctnd(tandem_risk, gibbs_risk, kl, n, n2, delta, mu)


# ------------------------------------------------------------------------------------------
# PAC-Bayes-Bennett (CCPBB)
# ------------------------------------------------------------------------------------------

_LAMBERT_STEPS = 12
GRID_SIZE = 256  # static capacity of the lambda / gamma grids (>= their size for n <= 1e9)


def _halley_lambert(x: jax.Array, w: jax.Array) -> jax.Array:
    """Halley's iterations on ``w e^w = x`` from ``w``."""

    def step(_, w):
        ew = jnp.exp(w)
        f = w * ew - x
        denom = ew * (w + 1.0) - (w + 2.0) * f / jnp.where(w == -1.0, 1.0, 2.0 * w + 2.0)
        return jnp.where((f == 0) | (denom == 0), w, w - f / jnp.where(denom == 0, 1.0, denom))

    return lax.fori_loop(0, _LAMBERT_STEPS, step, w)


def _lambert_w(x: jax.Array, lower_branch: bool) -> jax.Array:
    """Lambert ``W_0`` (``x >= -1/e``) or ``W_{-1}`` (``-1/e <= x < 0``), by Halley's method
    from the branch-point series near ``-1/e`` and the logarithmic asymptotics elsewhere."""
    x = jnp.maximum(x, -jnp.exp(-1.0))
    p = jnp.sqrt(jnp.maximum(2.0 * (jnp.e * x + 1.0), 0.0))
    if lower_branch:
        log_minus_x = jnp.log(jnp.clip(-x, jnp.finfo(x.dtype).tiny, 0.25))
        start = jnp.where(x < -0.25, -1.0 - p - p**2 / 3.0, log_minus_x - jnp.log(-log_minus_x))
    else:
        log_x = jnp.log(jnp.maximum(x, 3.0))
        middle = jnp.where(x < 3.0, 0.7 * jnp.log1p(x), log_x - jnp.log(log_x))
        start = jnp.where(x < -0.25, -1.0 + p - p**2 / 3.0, middle)
    return _halley_lambert(x, start)


def mu_tandem_range(mu: ArrayLike) -> jax.Array:
    """``K_mu = max(1 - mu, 1 - 2 mu)``, the range of the mu-tandem loss ([WMLIS21]): its values
    are ``(1 - mu)^2``, ``-mu (1 - mu)`` and ``mu^2``."""
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    return jnp.maximum(1.0 - mu, 1.0 - 2.0 * mu)


def _grid(start, ratio, count, size):
    """``start * ratio^i`` and the mask ``i < count`` for ``i < size``, on a new leading axis
    (``start``, ``ratio`` and ``count`` share one shape); unused slots repeat ``start`` so that
    nothing overflows (and no gradient is NaN) beyond ``count``."""
    i = jnp.arange(size, dtype=start.dtype).reshape((size,) + (1,) * jnp.ndim(start))
    valid = i < count
    return jnp.where(valid, start * ratio**i, start), valid


def _lambda_grid(n2, delta1, c1, size):
    """[WMLIS21] Thm 13's grid of ``t = lambda n2 / (2 (n2 - 1))``: ``t_i = c1^i t_min``,
    ``t_min = 1 / (sqrt((n2 - 1) / ln(1/delta1) + 1) + 1)``, ``k_lambda = ceil(log_{c1}((
    sqrt((n2 - 1) / ln(1/delta1) + 1) + 1) / 2))`` points (so ``t < 1/2``)."""
    root = jnp.sqrt((n2 - 1.0) / -jnp.log(delta1) + 1.0)
    count = jnp.clip(jnp.ceil(jnp.log((root + 1.0) / 2.0) / jnp.log(c1)), 1.0, size)
    return (*_grid(1.0 / (root + 1.0), c1, count, size), count)


def _gamma_grid(n2, delta1, delta2, mu, c2, size):
    """[WMLIS21] Thm 15's grid ``gamma_i = c2^i gamma_min`` up to ``gamma_max``, with
    ``K = K_mu``: ``gamma_min = (1 + W_0((4 ln(1/delta2) / n2 - 1) / e)) / K`` and, with
    ``V_min = 2 K^2 ln(1/delta1) / (n2 - 1)`` and ``a = 1 / (1 + K^2 / V_min)``,
    ``gamma_max = -(W_{-1}(-a e^{-a}) + a) / K``; ``k_gamma = ceil(log_{c2}(gamma_max /
    gamma_min))`` points (at least one)."""
    k = mu_tandem_range(mu)
    gamma_min = (1.0 + _lambert_w((-4.0 * jnp.log(delta2) / n2 - 1.0) / jnp.e, False)) / k
    v_min = -2.0 * k**2 * jnp.log(delta1) / (n2 - 1.0)
    a = 1.0 / (1.0 + k**2 / v_min)
    gamma_max = -(_lambert_w(-a * jnp.exp(-a), True) + a) / k
    count = jnp.clip(jnp.ceil(jnp.log(gamma_max / gamma_min) / jnp.log(c2)), 1.0, size)
    return (*_grid(gamma_min, c2, count, size), count)


@functools.partial(jax.jit, static_argnames="grid_size")
def variance_upper_bound(
    variance: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    c1: ArrayLike = 1.05,
    grid_size: int = GRID_SIZE,
) -> jax.Array:
    """Upper bound on ``E_{rho^2}[Var(L_mu(h, h'))]`` ([WMLIS21] Thm 13, after [TS13]), the
    smallest over the grid of ``k_lambda`` values of ``t = lambda n2 / (2 (n2 - 1))`` (union
    bound: ``ln(k_lambda / delta)``):

    .. math:: \\mathbb E_{\\rho^2}[V_\\mu] \\le \\min_t \\frac{\\hat V}{1 - t} +
              \\frac{K_\\mu^2 (2KL + \\ln(k_\\lambda/\\delta))}{2 (n_2 - 1)\\, t (1 - t)}.

    Args:
      variance: ``E_{rho^2}[V_hat_mu(h, h')]`` (unbiased per pair; ``mu_tandem_variance``).
      kl: ``KL(rho||pi)``.
      n2: pair sample size (``>= 2``).
      delta: the confidence of this inequality.
      mu: the mu of the loss (sets ``K_mu``).
      c1: grid ratio (1.05 in the paper).
      grid_size: static capacity of the grid.
    """
    variance, kl, delta, mu, c1 = _floats(variance, kl, delta, mu, c1)
    n2 = jnp.asarray(n2, kl.dtype)
    variance, kl, n2, delta, mu, c1 = jnp.broadcast_arrays(variance, kl, n2, delta, mu, c1)
    t, valid, count = _lambda_grid(*(lax.stop_gradient(x) for x in (n2, delta, c1)), grid_size)
    complexity = mu_tandem_range(mu) ** 2 * (2.0 * kl + jnp.log(count) - jnp.log(delta))
    complexity = complexity / (2.0 * (n2 - 1.0))
    values = variance / (1.0 - t) + complexity / (t * (1.0 - t))
    return jnp.min(jnp.where(valid, values, jnp.inf), axis=0)


def _phi_over_square(x: jax.Array) -> jax.Array:
    """``phi(x) / x^2 = (e^x - x - 1) / x^2``, by its series below ``|x| = 1/2``."""
    small = jnp.abs(x) < 0.5
    safe = jnp.where(small, 1.0, x)
    series = sum(x**k / float(math.factorial(k + 2)) for k in range(12))
    return jnp.where(small, series, (jnp.expm1(safe) - safe) / safe**2)


@functools.partial(jax.jit, static_argnames="grid_size")
def pac_bayes_bennett(
    mean: ArrayLike,
    variance_bound: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    variance_delta: ArrayLike | None = None,
    c2: ArrayLike = 1.05,
    grid_size: int = GRID_SIZE,
) -> jax.Array:
    """PAC-Bayes-Bennett on the mu-tandem loss ([WMLIS21] Thm 15's numerator), the smallest over
    the grid of ``k_gamma`` values of ``gamma`` (union bound ``ln(k_gamma / delta)``):

    .. math:: \\mathbb E_{\\rho^2}[L_\\mu] \\le \\min_\\gamma \\hat L_\\mu(\\rho) +
              \\frac{\\phi(\\gamma K_\\mu)}{\\gamma K_\\mu^2} \\min(V, K_\\mu^2/4) +
              \\frac{2KL + \\ln(k_\\gamma/\\delta)}{\\gamma n_2}, \\quad \\phi(x) = e^x - x - 1,

    with ``V`` an upper bound on ``E_{rho^2}[Var(L_mu)]`` (``variance_upper_bound``).

    Args:
      mean: ``E_{rho^2}[L_hat_mu(h, h')]``.
      variance_bound: upper bound on the average variance.
      kl, n2, delta, mu: ``KL(rho||pi)``, pair sample size, this inequality's confidence, mu.
      variance_delta: the variance inequality's confidence, which sets ``gamma_max``
        (default ``delta``).
      c2: grid ratio (1.05 in the paper).
      grid_size: static capacity of the grid.
    """
    variance_delta = delta if variance_delta is None else variance_delta
    mean, variance_bound, kl, delta, mu, c2, vd = _floats(
        mean, variance_bound, kl, delta, mu, c2, variance_delta
    )
    n2 = jnp.asarray(n2, kl.dtype)
    mean, variance_bound, kl, n2, delta, mu, c2, vd = jnp.broadcast_arrays(
        mean, variance_bound, kl, n2, delta, mu, c2, vd
    )
    fixed = (lax.stop_gradient(x) for x in (n2, vd, delta, mu, c2))
    gamma, valid, count = _gamma_grid(*fixed, grid_size)
    k = mu_tandem_range(mu)
    variance = jnp.minimum(variance_bound, k**2 / 4.0)
    spread = _phi_over_square(gamma * k) * gamma * variance
    complexity = (2.0 * kl + jnp.log(count) - jnp.log(delta)) / (gamma * n2)
    return jnp.min(jnp.where(valid, mean + spread + complexity, jnp.inf), axis=0)


@functools.partial(jax.jit, static_argnames="grid_size")
def ccpbb(
    mu_tandem_risk: ArrayLike,
    mu_tandem_variance: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    n_mu: ArrayLike = 1,
    c1: ArrayLike = 1.05,
    c2: ArrayLike = 1.05,
    grid_size: int = GRID_SIZE,
) -> jax.Array:
    """CCPBB bound ([WMLIS21] Thm 15): Chebyshev-Cantelli with PAC-Bayes-Bennett on the
    mu-tandem loss and the empirical variance bound of Thm 13, ``delta / 2`` each:

    .. math:: L(MV_\\rho) \\le \\frac{\\text{PBB}(\\hat L_\\mu, \\text{VUB}(\\hat V_\\mu,
              \\delta'/2), \\delta'/2)}{(1/2 - \\mu)^2}, \\quad \\delta' = \\delta / n_\\mu,

    ``PBB = pac_bayes_bennett``, ``VUB = variance_upper_bound``. The mu-tandem statistics depend
    on ``mu``, so ``mu`` must be fixed before seeing the data or taken from a data-independent
    grid of ``n_mu`` values (union bound over it, as ``ccpbb_over_mu``).

    Args:
      mu_tandem_risk: ``E_{rho^2}[L_hat_mu(h, h')]`` (``loss_statistics.mu_tandem_risk``).
      mu_tandem_variance: ``E_{rho^2}[V_hat_mu(h, h')]`` (``mu_tandem_variance``).
      kl, n2, delta: ``KL(rho||pi)``, pair sample size (``>= 2``), confidence.
      mu: ``mu < 1/2``.
      n_mu: size of the grid ``mu`` was taken from (1 for a fixed ``mu``).
      c1, c2: the lambda and gamma grid ratios (1.05 in the paper).
      grid_size: static capacity of those grids.
    """
    mu_tandem_risk, mu_tandem_variance, kl, delta, mu = _floats(
        mu_tandem_risk, mu_tandem_variance, kl, delta, mu
    )
    half = delta / jnp.asarray(n_mu, delta.dtype) / 2.0
    variance = variance_upper_bound(mu_tandem_variance, kl, n2, half, mu, c1, grid_size)
    numerator = pac_bayes_bennett(mu_tandem_risk, variance, kl, n2, half, mu, half, c2, grid_size)
    return _cantelli(numerator, mu)


@functools.partial(jax.jit, static_argnames="grid_size")
def ccpbb_over_mu(
    mu_grid: ArrayLike,
    mu_tandem_risks: ArrayLike,
    mu_tandem_variances: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    c1: ArrayLike = 1.05,
    c2: ArrayLike = 1.05,
    grid_size: int = GRID_SIZE,
) -> jax.Array:
    """The smallest ``ccpbb`` over a data-independent grid of ``k`` values of ``mu`` (the last
    axis), with the union bound ``delta / k`` ([WMLIS21] minimizes over a grid of ``mu`` in
    ``(-1/2, 1/2)``); the statistics are given at each grid value (same last axis)."""
    mu_grid = jnp.asarray(mu_grid)
    k = mu_grid.shape[-1]
    values = ccpbb(
        mu_tandem_risks,
        mu_tandem_variances,
        jnp.expand_dims(kl, -1),
        n2,
        delta,
        mu_grid,
        k,
        c1,
        c2,
        grid_size,
    )
    return jnp.min(values, axis=-1)


# ------------------------------------------------------------------------------------------
# PAC-Bayes-split-kl
# ------------------------------------------------------------------------------------------


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
    """
    plus_mean, minus_mean, kl, delta, a, mid, b = _floats(
        plus_mean, minus_mean, kl, delta, a, mid, b
    )
    n = jnp.asarray(n, kl.dtype)
    eps = (kl + _confidence(n, delta, 4.0)) / n
    up, down = b - mid, mid - a
    plus = kl_inv_upper(jnp.where(up > 0, plus_mean / jnp.where(up > 0, up, 1.0), 0.0), eps)
    minus = kl_inv_lower(jnp.where(down > 0, minus_mean / jnp.where(down > 0, down, 1.0), 0.0), eps)
    return mid + up * plus - down * minus


def split_kl_mu_tandem(
    both: ArrayLike,
    one: ArrayLike,
    neither: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    n_mu: ArrayLike = 1,
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
    """
    both, one, neither, kl, delta, mu = _floats(both, one, neither, kl, delta, mu)
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
    return _cantelli(numerator, mu)


# ------------------------------------------------------------------------------------------
# Germain et al. (2015): PAC-Bound 1' and 2'
# ------------------------------------------------------------------------------------------


def _xi_in(m, dtype):
    return xi(m).astype(dtype)


def pac_bound_1_prime(
    gibbs_risk: ArrayLike,
    disagreement: ArrayLike,
    kl: ArrayLike,
    m: ArrayLike,
    m_unlabeled: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """PAC-Bound 1' ([GLLMR15]; binary votes): PAC-Bound 1 with the disagreement estimated on
    ``m'`` unlabeled examples, ``delta / 2`` each:

    .. math:: C = 1 - \\frac{(1 - 2r)^2}{1 - 2d}, \\quad r = \\min\\big(\\tfrac12, kl^{-1}_{up}(
              R_S, \\tfrac{KL + \\ln(2\\xi(m)/\\delta)}{m})\\big), \\quad d = \\max\\big(0,
              kl^{-1}_{low}(d_{S'}, \\tfrac{2KL + \\ln(2\\xi(m')/\\delta)}{m'})\\big).

    Args:
      gibbs_risk: ``R_S(G_Q)`` on the ``m`` labeled examples.
      disagreement: ``d_{S'}`` on the ``m'`` unlabeled examples.
      kl, m, m_unlabeled, delta: ``KL(Q||P)``, the two sizes, the confidence.
    """
    gibbs_risk, disagreement, kl, delta = _floats(gibbs_risk, disagreement, kl, delta)
    m, m_u = jnp.asarray(m, kl.dtype), jnp.asarray(m_unlabeled, kl.dtype)
    risk_term = (kl + jnp.log(2.0 * _xi_in(m, kl.dtype) / delta)) / m
    dis_term = (2.0 * kl + jnp.log(2.0 * _xi_in(m_u, kl.dtype) / delta)) / m_u
    r = jnp.minimum(0.5, kl_inv_upper(gibbs_risk, risk_term))
    d = jnp.maximum(0.0, kl_inv_lower(disagreement, dis_term))
    return _clip01(cbound_from_risk(r, d))


_GOLDEN_STEPS = 60


def _maximize_concave(f, lo, hi):
    """Argmax of a concave ``f`` on ``[lo, hi]`` by golden-section search (no gradient)."""
    shrink = (jnp.sqrt(5.0) - 1.0) / 2.0

    def step(_, bracket):
        lo, hi = bracket
        left, right = hi - shrink * (hi - lo), lo + shrink * (hi - lo)
        keep_left = f(left) >= f(right)
        return jnp.where(keep_left, lo, left), jnp.where(keep_left, right, hi)

    lo, hi = lax.fori_loop(0, _GOLDEN_STEPS, step, (lo, hi))
    return (lo + hi) / 2.0


def _capped_slice(d, joint, dis_s, eps, joint_cap):
    """Largest C-bound on the slice of disagreement ``d`` of the trinomial kl-ball with the
    joint error capped: by the chain rule ``kl(e_S, d_S || e, d) = kl(d_S||d) + (1 - d_S)
    kl(e_S/(1-d_S) || e/(1-d))``, the largest ``e`` is ``(1 - d) kl^-1_up(e_S/(1-d_S),
    (eps - kl(d_S||d)) / (1 - d_S))``; the C-bound increases with ``e``."""
    slack = jnp.maximum(eps - binary_kl(dis_s, d), 0.0) / (1.0 - dis_s)
    e = jnp.minimum((1.0 - d) * kl_inv_upper(joint / (1.0 - dis_s), slack), joint_cap)
    return cbound_from_risk(e + d / 2.0, d)


@jax.jit
def pac_bound_2_prime(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 2' ([GLLMR15]; binary votes, as in the authors' public code): PAC-Bound 2 with
    the joint error also bounded on its own, ``delta / 2`` each:

    .. math:: \\sup\\ 1 - \\frac{(1 - 2e - d)^2}{1 - 2d}\\ \\text{over}\\ kl(e_S, d_S \\| e, d)
              \\le \\frac{2KL + \\ln(2(\\xi(m) + m)/\\delta)}{m},\\ 2e + d < 1,\\
              e \\le \\min\\big(\\tfrac12, kl^{-1}_{up}(e_S, \\tfrac{2KL + \\ln(2\\xi(m)/
              \\delta)}{m})\\big),

    ``e_S = R_S(G_Q) - d_S / 2``. The C-bound is concave and the feasible set convex, so the
    best slice of fixed ``d`` (closed form) is a concave function of ``d``, maximized by
    golden-section search; gradient by the envelope theorem.
    """
    gibbs_risk, disagreement, kl, delta = _floats(gibbs_risk, disagreement, kl, delta)
    m = jnp.asarray(m, kl.dtype)
    xi_m = _xi_in(m, kl.dtype)
    joint = jnp.maximum(gibbs_risk - disagreement / 2.0, 0.0)
    joint_cap = jnp.minimum(0.5, kl_inv_upper(joint, (2.0 * kl + jnp.log(2.0 * xi_m / delta)) / m))
    eps = (2.0 * kl + jnp.log(2.0 * (xi_m + m) / delta)) / m
    joint, disagreement, eps, joint_cap = jnp.broadcast_arrays(joint, disagreement, eps, joint_cap)
    d_lo = kl_inv_lower(disagreement, eps)
    d_hi = jnp.minimum(kl_inv_upper(disagreement, eps), 0.5)
    fixed = [lax.stop_gradient(x) for x in (joint, disagreement, eps, joint_cap)]
    d_best = lax.stop_gradient(_maximize_concave(lambda d: _capped_slice(d, *fixed), d_lo, d_hi))
    return _clip01(_capped_slice(d_best, joint, disagreement, eps, joint_cap))
