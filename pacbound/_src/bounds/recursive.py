"""Recursive PAC-Bayes ([WZCS24]): the excess-loss decomposition over ``T`` stages, each
stage's excess loss bounded by PAC-Bayes-split-kl for a loss with ``K`` values.

**PAC-Bayes-split-kl for ``K`` values** ([WZCS24]'s split-kl for discrete random variables,
generalizing [WS22] from three values). A loss ``Z`` in ``[b_0, b_{K-1}]``, ``b_0 <= b_1 <= ...
<= b_{K-1}`` fixed in advance, is ``Z = b_0 + sum_j alpha_j Z_j`` with ``alpha_j = b_j -
b_{j-1}`` and ``Z_j = min((Z - b_{j-1})^+, alpha_j) / alpha_j`` in ``[0, 1]`` (``1[Z >= b_j]``
when ``Z`` takes only the values ``b``). PAC-Bayes-kl (Seeger 2002, Maurer 2004) on each of the
``k`` segments of positive width, ``delta / k`` each, gives with probability ``1 - delta`` for
every posterior ``rho`` at once

.. math:: \\mathbb E_\\rho[\\mathbb E Z] \\le b_0 + \\sum_{j:\\,\\alpha_j > 0} \\alpha_j\\,
          kl^{-1}_{up}\\Big(\\mathbb E_\\rho[\\hat Z_j], \\frac{KL(\\rho\\|\\pi) +
          \\ln(2k\\sqrt n/\\delta)}{n}\\Big).

The paper's ``K`` counts the segments (``K + 1`` values); here ``K`` counts the values and
``k <= K - 1`` the segments of positive width (a zero-width segment is no event: it costs no
confidence). ``K = 3`` is [WS22]'s ternary form (``pac_bayes_split_kl``: ``kl^{-1}_{low}(p) =
1 - kl^{-1}_{up}(1 - p)`` turns its minus part into the first segment), ``K = 2`` is
PAC-Bayes-kl itself.

**The recursion** ([WZCS24]'s Recursive PAC-Bayes bound and the loss decomposition it rests
on). Split the sample into chunks ``S_1..S_T``; ``pi_0`` is data-free and ``pi_t`` a function of
``S_1..S_t`` (the prior of stage ``t + 1``). For ``gamma_t >= 0``,
``E_{pi_t}[L] = E_{pi_t x pi_{t-1}}[L(h) - gamma_t L(h')] + gamma_t E_{pi_{t-1}}[L]``; the
excess loss ``f = l(h) - gamma_t l(h')`` of a 0-1 loss takes the values
``(-gamma_t, 0, 1 - gamma_t, 1)`` and is bounded on ``U_t = S_t .. S_T`` (``n_t`` points the
prior ``pi_{t-1}`` never saw; ``KL(pi_t x pi_{t-1} || pi_{t-1} x pi_{t-1}) = KL(pi_t||pi_{t-1})``)
by the split-kl above with ``delta / T``. With ``B_0 = 0``,

.. math:: B_t = E_t + \\gamma_t B_{t-1}, \\qquad \\mathbb E_{\\pi_T}[L] \\le B_T \\quad
          \\text{for all } t \\text{ at once, with probability } 1 - \\delta,

where stage 1 is the plain PAC-Bayes-kl bound (values ``(0, 1)``, ``U_1 = S``: every point
counts). Its constants are the authors' code's (``compute_E_t``, ``compute_B_1``:
``ln(2 k T sqrt(n_t) / delta)``).

**Second order (tandem)**, new here. *Theorem.* Let ``pi_0`` be data-free, ``pi_t`` a
function of ``S_1..S_t`` and ``gamma_2..gamma_T >= 0`` fixed in advance. With probability at
least ``1 - delta``, for all ``t`` at once, ``E_{pi_t^2}[l(h) l(h')] <= B_t`` where ``B_t`` is
the recursion above with ``kl = 2 KL(pi_t||pi_{t-1})`` and the rates of the tandem excess loss
``f = l(h) l(h') - gamma_t l(g) l(g')``, ``(h, h', g, g') ~ pi_t^2 x pi_{t-1}^2``, on ``U_t``
(values ``(-gamma_t, 0, 1 - gamma_t, 1)``; stage 1: the tandem risk of ``pi_1`` on ``S``); so
``L(MV_{pi_T}) <= 4 B_T``. *Proof.* (i) ``E_{pi_t^2}[L_tnd] = E[f] + gamma_t
E_{pi_{t-1}^2}[L_tnd]``. (ii) ``f`` is a loss with the values above of the one hypothesis
``(h, h', g, g')`` on one example; ``pi_{t-1}^2 x pi_{t-1}^2`` depends on ``S_1..S_{t-1}``
only, so it is a prior for the i.i.d. sample ``U_t``, and
``KL(pi_t^2 x pi_{t-1}^2 || pi_{t-1}^2 x pi_{t-1}^2) = 2 KL(pi_t||pi_{t-1})``: the ``K``-valued
split-kl at ``delta / T`` bounds ``E[f]`` by ``E_t`` (stage 1: PAC-Bayes-kl on the tandem loss,
prior ``pi_0^2``). (iii) A union bound over the ``T`` stages; by induction
``gamma_t E_{pi_{t-1}^2}[L_tnd] <= gamma_t B_{t-1}`` as ``gamma_t >= 0``. (iv) The vote errs
only where ``W = E_pi[l(h)] >= 1/2``, so ``L(MV) <= 4 E[W^2] = 4 E_{pi^2}[L_tnd]`` (the
second-order oracle bound of Masegosa et al., NeurIPS 2020). Over finite voters with votes
in ``{-1, +1}`` the rates are exact: with ``a_i, b_i`` the two posteriors' Gibbs losses at
example ``i``, ``P(f >= 0) = 1 - (1 - a_i^2) b_i^2``, ``P(f >= 1 - gamma) = a_i^2``,
``P(f >= 1) = a_i^2 (1 - b_i^2)`` (first order: ``a_i, b_i`` for their squares).

**Certified values.** Each width is rounded up (1 u), each product with its certified
``kl^{-1}_{up}`` (1 u), the stage's sum with ``b_0`` by ``common.sum_up``; the level's
``delta / (k T)`` carries 1 rounding (``k T`` is an exact integer); ``gamma_t B_{t-1}`` 1 u and
each ``B_t``'s sum ``sum_up``. So the value is ``>=`` the exact formula at the given floats.
The statistics are exact as given (the rates' own rounding is the caller's).

Source: [WZCS24] Wu, Zhang, Chérief-Abdellatif, Seldin, "Recursive PAC-Bayes: a frequentist
approach to sequential prior updates with no information loss", NeurIPS 2024 (arXiv
2405.14681); [WS22] Wu, Seldin, NeurIPS 2022 (arXiv 2206.00706).

Functions: ``recursive_pac_bayes_bound``; private ``stage_bounds`` (every ``E_t`` and ``B_t``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.common import as_floats, kl_level, sum_up
from pacbound._src.kl import kl_inv_upper, round_up
from pacbound._src.validation import (
    CONFIDENCE,
    FINITE,
    NONNEGATIVE,
    SIZE,
    UNIT,
    domains,
    is_concrete,
)

__all__ = ["recursive_pac_bayes_bound"]


def split_kl_values(
    rates: jax.Array,
    kl: jax.Array,
    n: jax.Array,
    delta: jax.Array,
    values: jax.Array,
    stages: int = 1,
) -> jax.Array:
    """PAC-Bayes-split-kl for ``K`` values (module docstring), certified, over the last axis:
    ``rates`` ``(..., K - 1)`` the segments' normalized means, ``values`` ``(..., K)``, at
    confidence ``delta / stages`` (``delta / (k stages)`` per segment: ``k stages`` is an exact
    integer, the quotient 1 rounding).

    Example:
      >>> import jax.numpy as jnp
      >>> f = jnp.float32
      >>> v = split_kl_values(jnp.array([0.3]), f(1.0), f(100.0), f(0.05), jnp.array([0.0, 1.0]))
      >>> round(float(v), 4)  # PAC-Bayes-kl at risk 0.3, level (1 + ln(2 sqrt(100) / 0.05)) / 100
      0.4839
    """
    widths = values[..., 1:] - values[..., :-1]
    segments = jnp.maximum(jnp.sum(widths > 0, axis=-1), 1).astype(delta.dtype)
    eps = kl_level(kl, n, delta / (segments * stages), 2.0, 1.0)
    inverse = kl_inv_upper(jnp.clip(rates, 0.0, 1.0), eps[..., None])
    terms = round_up(round_up(jnp.maximum(widths, 0.0), 1.0) * inverse, 1.0)
    terms = jnp.where(widths > 0, terms, 0.0)
    return sum_up(values[..., 0], *jnp.moveaxis(terms, -1, 0))


def _check_values(values: ArrayLike, rates: ArrayLike) -> None:
    """Shapes always; sortedness at concrete values (``ValueError``)."""
    v_shape, r_shape = np.shape(values), np.shape(rates)
    if len(v_shape) < 2 or len(r_shape) < 2 or v_shape[-1] < 2 or r_shape[-1] != v_shape[-1] - 1:
        raise ValueError(
            "recursive_pac_bayes_bound: values must be (..., T, K) with K >= 2 and rates "
            f"(..., T, K - 1); got values {v_shape} and rates {r_shape}"
        )
    if is_concrete(values):
        v = np.asarray(values, np.float64)
        if np.any(np.diff(v, axis=-1) < 0):
            raise ValueError(
                "recursive_pac_bayes_bound: each stage's values must be non-decreasing "
                "(b_0 <= ... <= b_{K-1})"
            )


def stage_bounds(rates, kl, n, delta, values, gamma) -> tuple[jax.Array, jax.Array]:
    """``(E, B)``, each ``(..., T)``: every stage's split-kl bound ``E_t`` (``delta / T``) and
    the recursion ``B_t = E_t + gamma_t B_{t-1}`` (``B_0 = 0``), certified; unchecked.

    Example:
      >>> import jax.numpy as jnp
      >>> E, B = stage_bounds(jnp.array([[0.3]]), jnp.array([1.0]), jnp.array([100.0]), 0.05,
      ...                     jnp.array([[0.0, 1.0]]), jnp.array([0.0]))
      >>> bool(E[0] == B[0])  # one stage: the split-kl itself
      True
    """
    rates, kl, n, delta, values, gamma = as_floats(rates, kl, n, delta, values, gamma)
    stages = rates.shape[-2]
    E = split_kl_values(rates, kl, n, delta[..., None], values, stages)
    B = []
    previous = jnp.zeros_like(E[..., 0])
    for t in range(stages):
        carried = round_up(jnp.maximum(gamma[..., t], 0.0) * previous, 1.0)
        previous = sum_up(E[..., t], carried) if t else E[..., t]
        B.append(previous)
    return E, jnp.stack(B, axis=-1)


@domains(rates=UNIT, kl=NONNEGATIVE, n=SIZE, delta=CONFIDENCE, values=FINITE, gamma=NONNEGATIVE)
def recursive_pac_bayes_bound(
    rates: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    delta: ArrayLike,
    values: ArrayLike,
    gamma: ArrayLike,
) -> jax.Array:
    """Recursive PAC-Bayes ([WZCS24]'s recursive bound), each stage's excess loss by
    PAC-Bayes-split-kl for ``K`` values ([WZCS24]'s discrete generalization of [WS22]): ``B_T``
    of

    .. math:: B_t = b_{t,0} + \\sum_{j:\\,\\alpha_{t,j} > 0} \\alpha_{t,j}\\,
              kl^{-1}_{up}\\Big(\\hat r_{t,j}, \\frac{KL_t + \\ln(2 k_t T \\sqrt{n_t}/\\delta)}
              {n_t}\\Big) + \\gamma_t B_{t-1}, \\quad B_0 = 0,\\ \\alpha_{t,j} = b_{t,j} -
              b_{t,j-1},

    ``k_t`` the number of positive ``alpha_{t,j}``. With probability ``1 - delta``,
    ``E_{pi_T}[L] <= B_T``: for the 0-1 loss stage 1 has values ``(0, 1)`` (rate: the Gibbs risk
    of ``pi_1`` on the whole sample, ``KL(pi_1||pi_0)``, ``n_1 = m``) and stage ``t >= 2`` the
    excess loss's ``(-gamma_t, 0, 1 - gamma_t, 1)`` (rates ``E_{pi_t x pi_{t-1}}`` of
    ``1[f >= 0]``, ``1[f >= 1 - gamma_t]``, ``1[f >= 1]`` on ``U_t = S_t..S_T``,
    ``KL(pi_t||pi_{t-1})``, ``n_t = |U_t|``). One stage (``T = 1``) is the ``K``-valued
    PAC-Bayes-split-kl itself; ``K = 3`` is :func:`pac_bayes_split_kl`. For the tandem loss
    pass ``kl = 2 KL`` and read ``L(MV) <= 4 B_T`` (module docstring: the second-order
    recursion). Not clipped. A bound of the stage structure, not of one posterior's
    statistics: it is not in :data:`pacbound.certify.BOUNDS`;
    :func:`pacbound.solvers.recursive_pac_bayes` certifies its posteriors with it.

    Certified: widths, products and sums rounded outward, the levels up (module docstring).

    Args:
      rates: ``(..., T, K - 1)`` per stage, ``E_rho[\\hat Z_j]``: the posterior's mean of
        ``min((Z - b_{j-1})^+, alpha_j) / alpha_j`` (``P(Z >= b_j)`` for a ``K``-valued ``Z``);
        a zero-width segment's rate is ignored.
      kl: ``(..., T)`` each stage's ``KL(pi_t||pi_{t-1})`` (``2 KL`` for the tandem loss).
      n: ``(..., T)`` each stage's sample size ``n_t``.
      delta: the confidence, shared by the ``T`` stages (``delta / T`` each).
      values: ``(..., T, K)`` each stage's values ``b_{t,0} <= .. <= b_{t,K-1}``.
      gamma: ``(..., T)`` the coefficients ``gamma_t >= 0`` (``gamma_1`` multiplies
        ``B_0 = 0``: immaterial).

    Raises:
      ValueError: a shape that is not ``(..., T, K)`` / ``(..., T, K - 1)``, values not
        sorted, or (``domains``) a rate outside ``[0, 1]``, ``kl < 0``, ``n < 1``, ``delta``
        outside ``(0, 1]``, ``gamma < 0``, a NaN.

    Example:
      >>> import jax.numpy as jnp
      >>> g = 0.5  # two stages: PAC-Bayes-kl on all 1000 points, then the excess on 500
      >>> rates = jnp.array([[0.0, 0.2, 0.0], [0.9, 0.15, 0.05]])
      >>> values = jnp.array([[0.0, 0.0, 0.0, 1.0], [-g, 0.0, 1 - g, 1.0]])
      >>> b = recursive_pac_bayes_bound(rates, jnp.array([2.0, 0.5]), jnp.array([1000., 500.]),
      ...                               0.05, values, jnp.array([0.0, g]))
      >>> round(float(b), 4)
      0.143
    """
    rates, kl, n, values, gamma = (
        np.asarray(x) if isinstance(x, list | tuple) else x for x in (rates, kl, n, values, gamma)
    )
    _check_values(values, rates)
    return _stage_bounds(rates, kl, n, delta, values, gamma)[1][..., -1]


_stage_bounds = jax.jit(stage_bounds)  # one compiled program: eager calls stay fast
