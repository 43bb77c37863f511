"""The CCPBB statistic that a vote's margins do not carry: the ``rho^2``-average of the pairs'
empirical variances of the mu-tandem loss, from the votes themselves.

For voters ``h_a`` with per-example errors ``e_ia = (1 - y_i h_a(x_i)) / 2`` in ``[0, 1]`` (a
``±1`` voter's 0/1 error, a real-valued voter's expected error) and masses ``q_a``, the
mu-tandem loss of a pair on example ``i`` is ``(e_ia - mu)(e_ib - mu)`` ([WMLIS21]; its
bilinear extension for real-valued voters keeps its range ``K_mu``). Averaged over ``q^2``,
the pairs' (biased) empirical variances are

.. math:: \\bar V(\\mu) = \\frac1m\\sum_i A_i(\\mu)^2 - \\sum_{a,b} q_a q_b L_{ab}(\\mu)^2,
          \\quad A_i = \\sum_a q_a (e_{ia} - \\mu)^2, \\quad L_{ab} = C_{ab} - \\mu (g_a + g_b)
          + \\mu^2,

``C_ab = mean_i e_ia e_ib``, ``g_a = mean_i e_ia``. Expanding, the cubic and quartic terms
cancel and ``V(mu) = c0 + c1 mu + c2 mu^2`` with, for ``W_i = sum_a q_a e_ia``,
``S_i = sum_a q_a e_ia^2``, ``h_a = mean_i e_ia W_i``, ``G = mean W``, ``T = mean W^2``:

.. math:: c_0 = \\overline{S^2} - \\sum_{ab} q_a q_b C_{ab}^2, \\quad
          c_1 = 4\\big(\\sum_a q_a g_a h_a - \\overline{S W}\\big), \\quad
          c_2 = 2\\big(T + \\bar S - \\sum_a q_a g_a^2 - G^2\\big).

So three numbers give the statistic at every ``mu`` (a minimizer may move ``mu``
continuously). All terms are ``O(m n)`` but ``sum_ab q_a q_b C_ab^2 = ||Q^(1/2) C
Q^(1/2)||_F^2``, a fourth-order statistic of the sample that no moment of the margins gives
(it is not a function of ``W``): it needs the voters' Gram matrix, computed as the smaller of
``A^T A`` and ``A A^T`` (``A = R^(1/2) E Q^(1/2)``), ``O(m k min(m, k))`` for ``k`` columns. For
a posterior over ``[H, -H]`` the complements' errors are ``1 - e``. The unbiased version
(Tolstikhin and Seldin 2013; [WMLIS21] Thm 13) multiplies by ``m / (m - 1)``.

Functions: ``mu_tandem_variance_coefficients``, ``mu_tandem_variance_at``.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.bennett import mu_tandem_range
from pacbound._src.kl import round_up
from pacbound._src.validation import AT_MOST_HALF, FINITE, SIGNED, SIZE, UNIT, domains

__all__ = ["mu_tandem_variance_at", "mu_tandem_variance_coefficients"]

_matmul = functools.partial(jnp.matmul, precision=lax.Precision.HIGHEST)


def _column_errors(votes: jax.Array, y: jax.Array, q: jax.Array, complemented: bool) -> jax.Array:
    """Errors ``(m, k)`` of the columns ``q`` weighs (``[V, -V]`` when ``complemented``)."""
    errors = (1.0 - y[:, None] * votes) / 2.0
    return jnp.concatenate([errors, 1.0 - errors], axis=1) if complemented else errors


def _weighted_gram_energy(
    errors: jax.Array, q: jax.Array, rows: jax.Array, m: jax.Array
) -> jax.Array:
    """``sum_ab q_a q_b C_ab^2`` with ``C = E^T R E / m``, through the smaller Gram matrix."""
    a = jnp.sqrt(rows)[:, None] * errors * jnp.sqrt(q)[None, :]
    gram = _matmul(a, a.T) if a.shape[0] < a.shape[1] else _matmul(a.T, a)
    return jnp.sum(gram**2) / m**2


@domains(votes=SIGNED, y=SIGNED, q=UNIT, rows=UNIT)
def mu_tandem_variance_coefficients(
    votes: ArrayLike,
    y: ArrayLike,
    q: ArrayLike,
    rows: ArrayLike | None = None,
    complemented: bool = False,
) -> jax.Array:
    """``(c0, c1, c2)``: the ``q^2``-average of the pairs' biased empirical variances of the
    mu-tandem loss is ``c0 + c1 mu + c2 mu^2`` (module docstring).

    Args:
      votes: ``(m, n)`` votes in ``[-1, 1]``.
      y: ``(m,)`` labels in ``{-1, +1}``.
      q: masses over the ``n`` columns, or over the ``2n`` of ``[votes, -votes]``.
      rows: ``(m,)`` 0/1 mask of the examples of the sample (default all).
      complemented: whether ``q`` is over ``[votes, -votes]`` (static).

    Returns:
      ``(3,)`` in the working float dtype.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> c = mu_tandem_variance_coefficients(H, y, jnp.ones(3) / 3)
      >>> round(float(c[0]), 4)  # mu = 0: the mean over pairs of Var(tandem loss) = 7 / 72
      0.0972
    """
    q = jnp.asarray(q)
    votes, y = jnp.asarray(votes, q.dtype), jnp.asarray(y, q.dtype)
    rows = jnp.ones_like(y) if rows is None else jnp.asarray(rows, q.dtype)
    m = jnp.sum(rows)
    errors = _column_errors(votes, y, q, complemented)

    def mean(x: jax.Array) -> jax.Array:
        return jnp.sum(rows * x) / m

    w = _matmul(errors, q)
    s = _matmul(errors**2, q)
    g = _matmul(rows, errors) / m
    h = _matmul(rows * w, errors) / m
    gibbs, tandem = mean(w), mean(w**2)
    c0 = mean(s**2) - _weighted_gram_energy(errors, q, rows, m)
    c1 = 4.0 * (jnp.sum(q * g * h) - mean(s * w))
    c2 = 2.0 * (tandem + mean(s) - jnp.sum(q * g**2) - gibbs**2)
    return jnp.stack([c0, c1, c2])


@domains(coefficients=FINITE, mu=AT_MOST_HALF, m=SIZE)
def mu_tandem_variance_at(coefficients: ArrayLike, mu: ArrayLike, m: ArrayLike) -> jax.Array:
    """The unbiased ``E_{rho^2}[V_hat_mu] = m / (m - 1) max(0, c0 + c1 mu + c2 mu^2)``; the
    largest variance ``K_mu^2 / 4`` of the loss's range when ``m < 2``.

    Rounded up (a float ``>=`` the exact value for the given coefficients; CCPBB increases
    with it): the quadratic's terms have both signs, so the absolute rounding errors of its
    products and sums (``u`` times each partial result's magnitude) are added; ``m / (m - 1)``
    3 u and the product 1 u; ``K_mu^2 / 4`` 3 u.

    Example:
      >>> import jax.numpy as jnp
      >>> c = jnp.array([0.0972, -0.3333, 0.4444])
      >>> round(float(mu_tandem_variance_at(c, 0.0, 4)), 4)  # unbiased: 0.0972 * 4 / 3
      0.1296
      >>> round(float(mu_tandem_variance_at(c, 0.0, 1)), 4)  # m < 2: the range's worst, K_0^2 / 4
      0.25
    """
    c0, c1, c2 = jnp.asarray(coefficients)
    mu = jnp.asarray(mu, c0.dtype)
    m = jnp.asarray(m, c0.dtype)
    square, inner = mu * c2, c1 + mu * c2
    outer = mu * inner
    total = c0 + outer
    error = jnp.abs(total) + jnp.abs(outer) + jnp.abs(mu) * (jnp.abs(inner) + jnp.abs(square))
    roundoff = float(jnp.finfo(c0.dtype).eps) / 2.0
    biased = jnp.maximum(round_up(total + lax.stop_gradient(error) * roundoff, 0.0), 0.0)
    worst = round_up(mu_tandem_range(mu) ** 2 / 4.0, 3.0)
    return jnp.where(m >= 2, round_up(m / jnp.maximum(m - 1.0, 1.0) * biased, 4.0), worst)
