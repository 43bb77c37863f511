"""The PAC-Bayes-Bennett inequality and the CCPBB bound on the weighted majority vote.

The mu-tandem loss ``L_mu(h, h') = (1[h errs] - mu)(1[h' errs] - mu)`` has range
``K_mu = max(1 - mu, 1 - 2 mu)``; PAC-Bayes-Bennett bounds its ``rho^2``-average using an
upper bound on the average variance (PAC-Bayes-Empirical-Bernstein on the variance), and the
parametric Chebyshev-Cantelli oracle bound turns it into a bound on ``L(MV)`` (CCPBB). The
free ``lambda`` of the variance bound and ``gamma`` of Bennett's are searched over the papers'
geometric grids with a union bound over each; ``mu`` must come from a data-independent grid
(the statistics depend on it), with its own union bound (``ccpbb_over_mu``).

Sources: [WMLIS21] Wu, Masegosa, Lorenzen, Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett
inequality for the weighted majority vote", NeurIPS 2021 (arXiv 2106.13624): Thm 9
(PAC-Bayes-Bennett), Thm 13 (the variance bound), Thm 15 (CCPBB); [TS13] Tolstikhin, Seldin,
"PAC-Bayes-empirical-Bernstein inequality", NeurIPS 2013.

Functions: ``mu_tandem_range``, ``variance_upper_bound``, ``pac_bayes_bennett``, ``ccpbb``,
``ccpbb_over_mu``. ``GRID_SIZE`` is the static capacity of the lambda / gamma grids.

Certified values (:mod:`pacbound._src.bounds.second_order.common`): each bound is a float ``>=``
the exact minimum of its formula over the grid points it uses. Every grid point's roundings are
counted (the variance bound 17 u; Bennett's ``phi(x) / x^2`` is evaluated at ``x = gamma K``
rounded up, as it increases in ``x``, within 18 u (``_PHI_ERROR``), its sum of terms of both
signs by ``common.sum_with_error``), and the float minimum of the values plus their error
bounds is rounded up once, one ``kl.round_up`` per posterior rather than per grid point: the
exact minimum is at most the exact value at the float minimum's slot. The grids (points and
sizes) are floats computed from ``n2``, ``delta``, ``mu`` and the ratios only, never from the
data: a data-independent grid, so the union bound holds over it exactly as over the papers'
real-valued one, which it equals to rounding (``gamma_min``'s ``1 + W_0`` near the branch point,
reached as ``n2`` grows, is computed from ``1 + e x`` itself: ``_one_plus_w0``). CCPBB's
confidence ``delta / (2 n_mu)`` is rounded down.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.common import (
    as_floats,
    chebyshev_cantelli,
    clip_unit,
    sum_with_error,
)
from pacbound._src.kl import round_down, round_up
from pacbound._src.numerics import lambert_w
from pacbound._src.validation import (
    AT_MOST_HALF,
    BELOW_HALF,
    CONFIDENCE,
    FINITE,
    NONNEGATIVE,
    SIZE,
    Domain,
    domains,
)

__all__ = [
    "GRID_SIZE",
    "ccpbb",
    "ccpbb_over_mu",
    "mu_tandem_range",
    "pac_bayes_bennett",
    "variance_upper_bound",
]

GRID_SIZE = 256  # static capacity of the lambda / gamma grids (>= their size for n <= 1e9)
_PAIRS = Domain(2.0, math.inf, high_open=True)  # n2: the variance bound divides by n2 - 1
_RATIO = Domain(1.0, math.inf, low_open=True, high_open=True)  # a geometric grid's ratio


@domains(mu=AT_MOST_HALF)
def mu_tandem_range(mu: ArrayLike) -> jax.Array:
    """``K_mu = max(1 - mu, 1 - 2 mu)``, the range of the mu-tandem loss ([WMLIS21]): its values
    are ``(1 - mu)^2``, ``-mu (1 - mu)`` and ``mu^2``.

    Example:
      >>> [float(mu_tandem_range(mu)) for mu in (0.0, 0.25, -0.5)]
      [1.0, 0.75, 2.0]
    """
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    return jnp.maximum(1.0 - mu, 1.0 - 2.0 * mu)


def grid_parameters(
    every: tuple[jax.Array, ...], parameters: tuple[jax.Array, ...]
) -> tuple[jax.Array, ...]:
    """The grid's parameters, without gradient, with the rank of all arguments broadcast
    (leading axes of length 1) but not their batch: a grid that depends only on ``n2``,
    ``delta`` and ``mu`` is computed once for a batch of posteriors, not once per posterior."""
    ndim = len(jnp.broadcast_shapes(*(jnp.shape(x) for x in every)))
    padded = (jnp.reshape(x, (1,) * (ndim - jnp.ndim(x)) + jnp.shape(x)) for x in parameters)
    return tuple(lax.stop_gradient(x) for x in jnp.broadcast_arrays(*padded))


def _grid(
    start: jax.Array, ratio: jax.Array, count: jax.Array, size: int
) -> tuple[jax.Array, jax.Array]:
    """``start * ratio^i`` and the mask ``i < count`` for ``i < size``, on a new leading axis
    (``start``, ``ratio`` and ``count`` share one shape); unused slots repeat ``start`` so that
    nothing overflows (and no gradient is NaN) beyond ``count``."""
    i = jnp.arange(size, dtype=start.dtype).reshape((size,) + (1,) * jnp.ndim(start))
    valid = i < count
    return jnp.where(valid, start * ratio**i, start), valid


def _lambda_grid(
    n2: jax.Array, delta1: jax.Array, c1: jax.Array, *, size: int
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """[WMLIS21] Thm 13's grid of ``t = lambda n2 / (2 (n2 - 1))``: ``t_i = c1^i t_min``,
    ``t_min = 1 / (sqrt((n2 - 1) / ln(1/delta1) + 1) + 1)``, ``k_lambda = ceil(log_{c1}((
    sqrt((n2 - 1) / ln(1/delta1) + 1) + 1) / 2))`` points (so ``t < 1/2``)."""
    root = jnp.sqrt((n2 - 1.0) / -jnp.log(delta1) + 1.0)
    count = jnp.clip(jnp.ceil(jnp.log((root + 1.0) / 2.0) / jnp.log(c1)), 1.0, size)
    return (*_grid(1.0 / (root + 1.0), c1, count, size), count)


def _one_plus_w0(s: jax.Array) -> jax.Array:
    """``1 + W_0((s - 1) / e)`` for ``s >= 0``, from ``s`` itself. ``v = 1 + W_0`` solves
    ``g(v) = 1 - (1 - v) e^v = s`` (``w e^w = x`` with ``w = v - 1``, ``s = 1 + e x``), so nothing
    is lost to ``s - 1`` near the branch point (``s`` a few ``u`` when ``n2`` is ~1e8 in
    float32: ``lambert_w`` then reads ``x`` within ``u`` only, and ``1 + W_0 ~ sqrt(2 s)`` is off
    by ``u / (2 s)``). Newton's iterations on ``g`` (``g'(v) = v e^v``; ``g`` by its series
    ``sum_{k>=2} (k - 1) v^k / k!`` below ``v = 1``, no cancellation) from the branch series in
    ``p = sqrt(2 s)`` below ``p = 1``, from ``1 + lambert_w`` above (where ``s - 1`` is exact
    enough: ``s >= 1/2``)."""
    s = jnp.maximum(s, 0.0)
    p = jnp.sqrt(2.0 * s)
    series = p - p**2 / 3.0 + 11.0 / 72.0 * p**3 - 43.0 / 540.0 * p**4
    near = p < 1.0
    start = jnp.where(near, series, 1.0 + lambert_w((jnp.where(near, 1.0, s) - 1.0) / jnp.e, 0))

    def g(v):
        small = jnp.abs(v) < 1.0
        tail = jnp.zeros_like(v)
        for k in range(20, 1, -1):  # sum_k (k - 1) v^(k - 2) / k!, Horner
            tail = tail * v + (k - 1) / math.factorial(k)
        return jnp.where(small, v * v * tail, v * jnp.exp(v) - jnp.expm1(v))

    def step(_, v):
        slope = v * jnp.exp(v)
        ok = slope > 0
        return jnp.where(ok, v - (g(v) - s) / jnp.where(ok, slope, 1.0), v)

    return lax.fori_loop(0, 6, step, start)


def _gamma_grid(
    n2: jax.Array,
    delta1: jax.Array,
    delta2: jax.Array,
    mu: jax.Array,
    c2: jax.Array,
    *,
    size: int,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """[WMLIS21] Thm 15's grid ``gamma_i = c2^i gamma_min`` up to ``gamma_max``, with
    ``K = K_mu``: ``gamma_min = (1 + W_0((4 ln(1/delta2) / n2 - 1) / e)) / K`` and, with
    ``V_min = 2 K^2 ln(1/delta1) / (n2 - 1)`` and ``a = 1 / (1 + K^2 / V_min)``,
    ``gamma_max = -(W_{-1}(-a e^{-a}) + a) / K``; ``k_gamma = ceil(log_{c2}(gamma_max /
    gamma_min))`` points (at least one)."""
    k = mu_tandem_range(mu)
    gamma_min = _one_plus_w0(-4.0 * jnp.log(delta2) / n2) / k
    v_min = -2.0 * k**2 * jnp.log(delta1) / (n2 - 1.0)
    a = 1.0 / (1.0 + k**2 / v_min)
    gamma_max = -(lambert_w(-a * jnp.exp(-a), -1) + a) / k
    count = jnp.clip(jnp.ceil(jnp.log(gamma_max / gamma_min) / jnp.log(c2)), 1.0, size)
    return (*_grid(gamma_min, c2, count, size), count)


@domains(
    variance=NONNEGATIVE,
    kl=NONNEGATIVE,
    n2=_PAIRS,
    delta=CONFIDENCE,
    mu=AT_MOST_HALF,
    c1=_RATIO,
)
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

    Example:
      >>> v = variance_upper_bound(0.04, 1.0, 1000, 0.05, 0.0)  # empirical variance 0.04, KL 1
      >>> round(float(v), 4)
      0.0769
    """
    variance, kl, delta, mu, c1 = as_floats(variance, kl, delta, mu, c1)
    n2 = jnp.asarray(n2, kl.dtype)
    fixed = grid_parameters((variance, kl, n2, delta, mu, c1), (n2, delta, c1))
    t, valid, count = _lambda_grid(*fixed, size=grid_size)
    log_term = 2.0 * jnp.maximum(kl, 0.0) + jnp.log(count) - jnp.log(delta)  # 6 u
    # K^2 3 u, the product 1, 2 (n2 - 1) 2, the quotient 1: 13 u
    complexity = mu_tandem_range(mu) ** 2 * log_term / (2.0 * (n2 - 1.0))
    # the variance term 2 u, t (1 - t) 2 and the quotient 1 (16 u), the sum 1: 17 u
    values = jnp.maximum(variance, 0.0) / (1.0 - t) + complexity / (t * (1.0 - t))
    # the same 17 u at every grid point: the float minimum rounded up once is >= the minimum of
    # the exact values (the exact value at the float minimum's slot is below it)
    return round_up(jnp.min(jnp.where(valid, values, jnp.inf), axis=0), 17.0)


# relative error of _phi_over_square in u: the series 4 (Horner, positive terms, 1 u each
# coefficient); above 1, expm1's 6 u amplified at most e / (e - 2) < 2.4 times by the
# difference, the difference, the square and the quotient: 14.4 + 3 < 18
_PHI_ERROR = 18.0


def _phi_over_square(x: jax.Array) -> jax.Array:
    """``phi(x) / x^2 = (e^x - x - 1) / x^2 = sum_k x^k / (k + 2)!``, by its series (Horner)
    below ``|x| = 1``, within ``_PHI_ERROR`` u for ``x >= 0``."""
    small = jnp.abs(x) < 1.0
    safe = jnp.where(small, 1.0, x)
    n = 18 if jnp.finfo(x.dtype).bits > 32 else 10  # the tail below u / 20
    series = jnp.full_like(x, 1.0 / math.factorial(n + 1))
    for k in range(n - 2, -1, -1):
        series = series * x + 1.0 / math.factorial(k + 2)
    return jnp.where(small, series, (jnp.expm1(safe) - safe) / safe**2)


@domains(
    mean=FINITE,
    variance_bound=NONNEGATIVE,
    kl=NONNEGATIVE,
    n2=_PAIRS,
    delta=CONFIDENCE,
    mu=AT_MOST_HALF,
    variance_delta=CONFIDENCE,
    c2=_RATIO,
)
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

    Example:
      >>> v = variance_upper_bound(0.04, 1.0, 1000, 0.05, 0.0)
      >>> round(float(pac_bayes_bennett(0.05, v, 1.0, 1000, 0.05, 0.0)), 4)  # empirical mean 0.05
      0.091
    """
    variance_delta = delta if variance_delta is None else variance_delta
    mean, variance_bound, kl, delta, mu, c2, vd = as_floats(
        mean, variance_bound, kl, delta, mu, c2, variance_delta
    )
    n2 = jnp.asarray(n2, kl.dtype)
    every = (mean, variance_bound, kl, n2, delta, mu, c2, vd)
    gamma, valid, count = _gamma_grid(
        *grid_parameters(every, (n2, vd, delta, mu, c2)), size=grid_size
    )
    k = mu_tandem_range(mu)  # 1 u
    variance = jnp.maximum(jnp.minimum(variance_bound, round_up(k**2 / 4.0, 3.0)), 0.0)
    scale = round_up(_phi_over_square(round_up(gamma * k, 2.0)), _PHI_ERROR)  # on the grid
    spread = scale * gamma * variance  # 2 u
    log_term = 2.0 * jnp.maximum(kl, 0.0) + jnp.log(count) - jnp.log(delta)  # 6 u
    complexity = log_term / (gamma * n2)  # n2, the product, the quotient: 9 u
    values, error = sum_with_error(mean, spread, complexity)
    error = error + lax.stop_gradient(2.0 * spread + 9.0 * complexity) * _roundoff(values)
    # every slot's value plus its own error bound, the minimum rounded up once (sum_with_error)
    return round_up(jnp.min(jnp.where(valid, values + error, jnp.inf), axis=0), 0.0)


def _roundoff(x: jax.Array) -> float:
    """Unit roundoff ``u`` of ``x``'s dtype."""
    return float(jnp.finfo(x.dtype).eps) / 2.0


@domains(
    mu_tandem_risk=FINITE,
    mu_tandem_variance=NONNEGATIVE,
    kl=NONNEGATIVE,
    n2=_PAIRS,
    delta=CONFIDENCE,
    mu=BELOW_HALF,
    n_mu=SIZE,
    c1=_RATIO,
    c2=_RATIO,
)
@functools.partial(jax.jit, static_argnames=("grid_size", "clip"))
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
    clip: bool = True,
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
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value (at least 0).

    Example:
      >>> round(float(ccpbb(0.05, 0.04, 1.0, 1000, 0.05, 0.0)), 4)  # tandem risk 0.05, mu = 0
      0.3718
    """
    mu_tandem_risk, mu_tandem_variance, kl, delta, mu = as_floats(
        mu_tandem_risk, mu_tandem_variance, kl, delta, mu
    )
    half = round_down(delta / jnp.asarray(n_mu, delta.dtype), 2.0) / 2.0  # n_mu, the quotient
    variance = variance_upper_bound(mu_tandem_variance, kl, n2, half, mu, c1, grid_size)
    numerator = pac_bayes_bennett(mu_tandem_risk, variance, kl, n2, half, mu, half, c2, grid_size)
    return clip_unit(chebyshev_cantelli(numerator, mu), clip)


@domains(
    mu_grid=BELOW_HALF,
    mu_tandem_risks=FINITE,
    mu_tandem_variances=NONNEGATIVE,
    kl=NONNEGATIVE,
    n2=_PAIRS,
    delta=CONFIDENCE,
    c1=_RATIO,
    c2=_RATIO,
)
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
    ``(-1/2, 1/2)``); the statistics are given at each grid value (same last axis).

    Example:
      >>> import jax.numpy as jnp
      >>> mu = jnp.array([0.0, 0.1, 0.2])
      >>> risks = 0.05 - 2 * mu * 0.2 + mu**2  # tandem risk 0.05, Gibbs risk 0.2
      >>> b = ccpbb_over_mu(mu, risks, jnp.full(3, 0.04), 1.0, 1000, 0.05)
      >>> round(float(b), 4), bool(b == ccpbb(risks, 0.04, 1.0, 1000, 0.05, mu, 3).min())
      (0.3842, True)
    """
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
