"""The binomial test-set bound (Langford 2005, Theorem 3.3) and its use on a majority vote.

For a classifier fixed before the ``n`` held-out examples are drawn, with ``k`` errors on them,

.. math:: L \\le \\overline{\\mathrm{Bin}}(k, n, \\delta) = \\max\\{p \\in [0, 1] :
          P(\\mathrm{Bin}(n, p) \\le k) \\ge \\delta\\}

with probability at least ``1 - delta``: the exact binomial tail inversion, tighter than any
kl or Hoeffding relaxation of it.

* ``binomial_tail_inversion(k, n, delta)``: the inversion, by bisection inside ``lax`` on a
  log-space binomial CDF, rounded outward (the result is never below the exact inversion).
* ``binomial_log_cdf(k, n, p)``: ``ln P(Bin(n, p) <= k)`` (an upper bound on it, exact to
  rounding when ``k`` is within ``window`` of every term that matters).
* ``majority_vote_errors`` / ``majority_vote_test_set_bound``: the vote's held-out errors (ties
  count as errors) and the bound on its risk.

Concrete arguments are checked (``0 <= k <= n``, ``n >= 1``, ``p`` in ``[0, 1]``, ``delta`` in
``(0, 1]``; :mod:`pacbound._src.bounds`, "Domains"); traced ones are not.

The CDF sums Loader's saddle-point form of the binomial probabilities, ``b(i; n, p) =
sqrt(n / (2 pi i (n - i))) exp(s(n) - s(i) - s(n - i) - bd0(i, np) - bd0(n - i, n(1 - p)))``
with ``s`` the Stirling error (``ln x! - (x + 1/2) ln x + x - ln sqrt(2 pi)``, which is
:func:`pacbound._src.special.stirling_remainder`: ``ln x! = ln x + ln Gamma(x)``) and
``bd0(x, M) = x ln(x / M) + M - x`` by its series near ``x = M``, accurate in float32 for ``n``
up to ``2^24``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import logsumexp
from jax.typing import ArrayLike

from pacbound._src.loss_statistics import check_posterior
from pacbound._src.special import stirling_remainder
from pacbound._src.validation import CONFIDENCE, SIZE, Domain, domains

__all__ = [
    "binomial_log_cdf",
    "binomial_tail_inversion",
    "majority_vote_errors",
    "majority_vote_test_set_bound",
]

WINDOW = 8192  # binomial terms summed exactly below k; the rest by a geometric tail bound
_BISECTION_STEPS = 80
_SERIES_TERMS = 12


def _deviance(x: jax.Array, mean: jax.Array) -> jax.Array:
    """``bd0(x, M) = x ln(x / M) + M - x >= 0`` (Loader 2000): the series in ``v = (x - M) /
    (x + M)`` where ``|v| < 0.1`` (no cancellation), the direct form elsewhere."""
    total = x + mean
    v = (x - mean) / jnp.where(total > 0, total, 1.0)
    near = jnp.abs(v) < 0.1
    series = (x - mean) * v + sum(
        2.0 * x * v ** (2 * j + 1) / (2 * j + 1) for j in range(1, _SERIES_TERMS)
    )
    safe_x = jnp.where(x > 0, x, 1.0)
    direct = jnp.where(x > 0, x * jnp.log(safe_x / mean), 0.0) + mean - x
    return jnp.where(near, series, direct)


def _log_pmf(i: jax.Array, n: jax.Array, p: jax.Array) -> jax.Array:
    """``ln P(Bin(n, p) = i)`` for ``0 <= i <= n``, ``0 < p < 1``, in Loader's form."""
    q = 1.0 - p
    inner = (i > 0) & (i < n)
    ii, rest = jnp.where(inner, i, 1.0), jnp.where(inner, n - i, 1.0)
    log_inner = (
        0.5 * (jnp.log(n) - jnp.log(2.0 * jnp.pi * ii * rest))
        + stirling_remainder(n)
        - stirling_remainder(ii)
        - stirling_remainder(rest)
        - _deviance(ii, n * p)
        - _deviance(rest, n * q)
    )
    at_zero = n * jnp.log1p(-p)
    at_n = n * jnp.log(p)
    return jnp.where(i <= 0, at_zero, jnp.where(i >= n, at_n, log_inner))


@domains(k=Domain(0.0, "n"), n=SIZE, p=Domain(0.0, 1.0))
@functools.partial(jax.jit, static_argnames="window")
def binomial_log_cdf(k: ArrayLike, n: ArrayLike, p: ArrayLike, window: int = WINDOW) -> jax.Array:
    """Upper bound on ``ln P(Bin(n, p) <= k)``, exact to rounding when the terms below
    ``k - window`` are negligible.

    Sums the ``window`` terms ``b(i; n, p)``, ``k - window < i <= k``, in log space and bounds
    the rest by a geometric series: going down from ``i``, the ratio ``b(i - 1) / b(i) =
    i (1 - p) / ((n - i + 1) p)`` decreases, so the tail below ``i_0`` is at most
    ``b(i_0) r / (1 - r)`` with ``r`` the ratio at ``i_0`` (``+inf`` when ``r >= 1``).

    Args:
      k: number of errors, ``0 <= k``; ``n``: sample size; ``p``: in ``[0, 1]``.
      window: static number of terms summed exactly.

    Example:
      >>> round(float(binomial_log_cdf(0, 10, 0.5)), 4)  # ln(0.5 ** 10)
      -6.9315
      >>> round(float(binomial_log_cdf(1, 2, 0.5)), 4)  # ln(3 / 4)
      -0.2877
    """
    k, n, p = jnp.broadcast_arrays(*(jnp.asarray(x, jnp.result_type(p, float)) for x in (k, n, p)))
    return _log_cdf(k, n, p, window)


def _log_cdf(k, n, p, window):
    i = k[..., None] - jnp.arange(window, dtype=k.dtype)
    pp = jnp.clip(p, jnp.finfo(p.dtype).tiny, 1.0 - jnp.finfo(p.dtype).epsneg)[..., None]
    terms = jnp.where(i >= 0, _log_pmf(jnp.maximum(i, 0.0), n[..., None], pp), -jnp.inf)
    head = logsumexp(terms, axis=-1)
    lowest = k - (window - 1.0)
    ratio = lowest * (1.0 - pp[..., 0]) / ((n - lowest + 1.0) * pp[..., 0])
    safe = jnp.where((ratio > 0) & (ratio < 1.0), ratio, 0.5)
    tail = jnp.where(ratio < 1.0, terms[..., -1] + jnp.log(safe) - jnp.log1p(-safe), jnp.inf)
    log_cdf = jnp.where(lowest > 0, jnp.logaddexp(head, tail), head)
    log_cdf = jnp.where(p <= 0, 0.0, log_cdf)
    return jnp.where((p >= 1) & (k < n), -jnp.inf, jnp.minimum(log_cdf, 0.0))


def _rounding_margin(k, n, p, log_delta):
    """A bound on the rounding error of ``_log_cdf``: rounding ``n p`` moves each deviance by
    ``eps |i - n p|``; the terms that matter lie within a few ``sqrt(n p)`` of ``k``."""
    eps = jnp.finfo(p.dtype).eps
    return 8.0 * eps * (jnp.abs(k - n * p) + 4.0 * jnp.sqrt(n * p) + jnp.abs(log_delta) + 8.0)


def _invert(k, n, delta, window):
    """Bisection on ``[0, 1]`` keeping ``F(hi) < delta`` certain (margin for rounding)."""
    log_delta = jnp.log(delta)

    def step(_, bracket):
        lo, hi = bracket
        mid = lo + (hi - lo) / 2.0
        below = _log_cdf(k, n, mid, window) < log_delta - _rounding_margin(k, n, mid, log_delta)
        return jnp.where(below, lo, mid), jnp.where(below, mid, hi)

    zero = jnp.zeros_like(delta)
    _, hi = lax.fori_loop(0, _BISECTION_STEPS, step, (zero, zero + 1.0))
    return jnp.where(k >= n, 1.0, hi)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _tail_inversion(k, n, delta, window):
    return _invert(k, n, delta, window)


@_tail_inversion.defjvp
def _tail_inversion_jvp(window, primals, tangents):
    """Implicit derivative in ``delta``: ``F(p) = delta`` with ``dF/dp = -n b(k; n - 1, p)``;
    ``k`` and ``n`` are counts (no derivative)."""
    k, n, delta = primals
    p = _tail_inversion(k, n, delta, window)
    interior = (k < n) & (p < 1.0)
    safe_p = jnp.where(interior, p, 0.5)
    log_density = jnp.log(n) + _log_pmf(k, jnp.maximum(n - 1.0, k), safe_p)
    slope = jnp.where(interior, -jnp.exp(-log_density), 0.0)
    return p, slope * tangents[2]


@domains(k=Domain(0.0, "n"), n=SIZE, delta=CONFIDENCE)
@functools.partial(jax.jit, static_argnames="window")
def binomial_tail_inversion(
    k: ArrayLike, n: ArrayLike, delta: ArrayLike, window: int = WINDOW
) -> jax.Array:
    """Langford (2005) Theorem 3.3, the test-set bound: ``max{p : P(Bin(n, p) <= k) >= delta}``.

    By ``80`` bisection steps on ``[0, 1]`` in ``lax``; a step moves the upper end only where
    ``ln P(Bin(n, mid) <= k)`` is below ``ln delta`` by more than a bound on its rounding error,
    so the returned upper end satisfies ``P(Bin(n, p) <= k) < delta``: it is never below the
    exact inversion (rounded outward). ``1`` when ``k = n``. Differentiable in ``delta``
    (implicit function theorem); broadcasts and vmaps over its arguments.

    Args:
      k: number of errors on the test set (a count in ``[0, n]``, float or int).
      n: number of test examples (``>= 1``).
      delta: confidence in ``(0, 1]``.
      window: static number of binomial terms summed exactly (see ``binomial_log_cdf``).

    Returns:
      An upper bound on the true risk, holding with probability at least ``1 - delta``.

    Example:
      >>> float(binomial_tail_inversion(0, 100, 0.05))  # 1 - 0.05 ** (1 / 100)
      0.0295...
    """
    dtype = jnp.result_type(delta, float)
    k, n, delta = jnp.broadcast_arrays(*(jnp.asarray(x, dtype) for x in (k, n, delta)))
    return _tail_inversion(k, n, delta, window)


def majority_vote_errors(
    predictions: ArrayLike, y: ArrayLike, rho: ArrayLike, classes: ArrayLike
) -> jax.Array:
    """``1[MV_rho(x_i) != y_i]`` for votes with any labels; a tie with the true label counts as
    an error. ``MV_rho(x) = argmax_c sum_j rho_j 1[h_j(x) = c]``.

    Args:
      predictions: ``(m, n)`` predicted labels; ``y``: ``(m,)`` true labels.
      rho: ``(n,)`` posterior; ``classes``: ``(C,)`` the possible labels.

    Example:
      >>> import jax.numpy as jnp
      >>> predictions = jnp.array([[0, 0, 1], [1, 2, 2], [2, 0, 1]])  # 3 examples, 3 voters
      >>> y, rho = jnp.array([0, 2, 1]), jnp.ones(3) / 3
      >>> errors = majority_vote_errors(predictions, y, rho, jnp.arange(3))
      >>> [float(e) for e in errors]  # the third is a three-way tie: an error
      [0.0, 0.0, 1.0]
    """
    predictions, y, classes = jnp.asarray(predictions), jnp.asarray(y), jnp.asarray(classes)
    rho = jnp.asarray(rho)
    votes = (predictions[:, :, None] == classes).astype(rho.dtype)
    scores = jnp.einsum("ijc,j->ic", votes, rho, precision=lax.Precision.HIGHEST)
    true_score = jnp.matmul(
        (predictions == y[:, None]).astype(rho.dtype), rho, precision=lax.Precision.HIGHEST
    )
    others = jnp.where(classes[None, :] == y[:, None], -jnp.inf, scores)
    return (true_score <= jnp.max(others, axis=-1)).astype(rho.dtype)


@domains(delta=CONFIDENCE)
def majority_vote_test_set_bound(
    predictions: ArrayLike, y: ArrayLike, rho: ArrayLike, delta: ArrayLike, classes: ArrayLike
) -> jax.Array:
    """The test-set bound (Langford 2005, Thm 3.3) on ``L(MV_rho)`` from ``m`` held-out
    examples that neither the voters nor ``rho`` saw: ``binomial_tail_inversion(k, m, delta)``
    with ``k`` the vote's errors (``majority_vote_errors``).

    Example:
      >>> import jax.numpy as jnp
      >>> predictions = jnp.array([[0, 0, 1], [1, 2, 2], [2, 0, 1]])
      >>> y, rho = jnp.array([0, 2, 1]), jnp.ones(3) / 3
      >>> b = majority_vote_test_set_bound(predictions, y, rho, 0.05, jnp.arange(3))
      >>> round(float(b), 4), bool(b == binomial_tail_inversion(1, 3, 0.05))  # 1 error in 3
      (0.8647, True)
    """
    check_posterior(rho, jnp.shape(predictions)[-1])
    errors = majority_vote_errors(predictions, y, rho, classes)
    return binomial_tail_inversion(jnp.sum(errors), errors.shape[0], delta)
