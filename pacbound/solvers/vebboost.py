"""VEB-Boost: variational empirical Bernstein boosting (shivaswamy, Fig. 1, Lemma 1, Thm 2).

Sample variance penalization with the exponential loss amounts to minimizing (shivaswamy §2,
first display; ``m`` examples, ``lambda`` in ``[0, 1]``)

.. math:: J(f) = \\Big(\\sum_i e^{-y_i f(x_i)}\\Big)^2 + \\lambda \\Big(m \\sum_i
          e^{-2 y_i f(x_i)} - \\Big(\\sum_i e^{-y_i f(x_i)}\\Big)^2\\Big).

Fig. 1: with normalized example weights ``w`` (uniform at first), each round sets
``u_i = lambda m w_i^2 + (1 - lambda) w_i``, takes the weak learner ``G`` with the largest
edge under ``u`` (the least ``u``-weighted error), and the step minimizing Lemma 1's cost
``U_I e^{-2 alpha} + U_J e^{2 alpha}`` (``U_I``, ``U_J``: the ``u``-mass ``G`` classifies
rightly / wrongly),

.. math:: \\alpha = \\tfrac14 \\ln(U_I / U_J),

then ``f += alpha G`` and ``w_i <- w_i e^{-alpha y_i G(x_i)} / Z``. The paper's figure prints
``ln(U_J / U_I)``, which is negative for any better-than-chance learner and would end
boosting at once; Lemma 1's minimizer is ``ln(U_I / U_J)`` (set its derivative
``-2 U_I e^{-2a} + 2 U_J e^{2a}`` to 0), and only with it does the proof of monotonicity go
through. A round with ``alpha < 0`` ends boosting without a vote (Fig. 1's ``break``); a
learner with no ``u``-weighted error (``U_J = 0``) gets the finite ``alpha =
ln(U_I / tiny) / 4`` and ends it (the vote is then that learner alone).

Theorem 2 (``sum w = 1``, ``0 <= lambda <= 1``): Lemma 1's cost upper-bounds ``J(f + alpha
G) / W^2`` (``W = sum_i e^{-y_i f(x_i)}``), with equality at ``alpha = 0``; so minimizing it
never increases ``J``: ``costs`` is non-increasing, from ``J(0) = m^2``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound.solvers.adaboost import (
    boosting_scan,
    column_learner,
    column_weights,
    initial_distribution,
    stump_learner,
    stump_weights,
    stumps_of,
)
from pacbound.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
)
from pacbound.voters import Stumps, StumpSearch

__all__ = [
    "VEBBoostResult",
    "VEBBoostStumpsResult",
    "veb_cost",
    "vebboost",
    "vebboost_stumps",
]


class VEBBoostResult(NamedTuple):
    """VEB-Boost over the columns of ``H``; per-round arrays have ``n_rounds`` entries.

    Attributes:
      q: ``(n,)`` distribution over the columns of ``H`` (``alpha`` summed per column,
        normalized; all zero if no round voted).
      alphas: ``(T,)`` the rounds' ``alpha_s`` (0 after boosting ended).
      selected: ``(T,)`` int32 column of each round, ``-1`` after boosting ended.
      costs: ``(T + 1,)`` ``J(f)`` before the first round and after each one
        (non-increasing, Theorem 2).
    """

    q: jax.Array
    alphas: jax.Array
    selected: jax.Array
    costs: jax.Array


class VEBBoostStumpsResult(NamedTuple):
    """VEB-Boost over all decision stumps; round ``t`` votes ``signs[t] * h_t``.

    Attributes:
      q: ``(T,)`` distribution over the rounds' stumps.
      stumps: :class:`pacbound.voters.Stumps` of the rounds' stumps.
      signs: ``(T,)`` ``+1`` or ``-1`` (the complement); 0 where no vote.
      selected: ``(T,)`` int32 index in the self-complemented set of all stumps
        (:func:`pacbound.solvers.adaboost.stump_learner`), or ``-1``.
      alphas, costs: as in :class:`VEBBoostResult`.
    """

    q: jax.Array
    stumps: Stumps
    signs: jax.Array
    selected: jax.Array
    alphas: jax.Array
    costs: jax.Array


def veb_cost(
    y: ArrayLike, f: ArrayLike, lam: ArrayLike, sample_weight: ArrayLike | None = None
) -> jax.Array:
    """shivaswamy §2, first display: ``S^2 + lambda (m sum_i e^{-2 y_i f_i} - S^2)`` with
    ``S = sum_i e^{-y_i f_i}`` (``f`` the unnormalized vote ``sum_s alpha_s G^s``).

    With example weights ``v``: ``S = sum_i v_i e^{-y_i f_i}``, ``m = sum_i v_i`` and
    ``sum_i v_i e^{-2 y_i f_i}`` (integer weights: the cost of the repeated sample)."""
    e = jnp.exp(-jnp.asarray(y) * jnp.asarray(f))
    v = jnp.ones_like(e) if sample_weight is None else jnp.asarray(sample_weight, e.dtype)
    total = v @ e
    return total**2 + lam * (jnp.sum(v) * (v @ e**2) - total**2)


def _veb_rule(right, wrong):
    """Lemma 1's ``alpha = ln(U_I / U_J) / 4``; no vote and stop if ``alpha < 0``."""
    floor = jnp.finfo(right.dtype).tiny
    alpha = 0.25 * (jnp.log(right) - jnp.log(jnp.maximum(wrong, floor)))
    return alpha, alpha >= 0, (alpha < 0) | (wrong <= 0)


def _rounds(learner, y, n_rounds, lam, sample_weight):
    """Fig. 1 on the sample where example ``i`` stands ``v_i`` times (``v = sample_weight``):
    with ``w_i`` the mass of its copies and ``m = sum v``, ``u_i = lambda m w_i^2 / v_i +
    (1 - lambda) w_i`` (0 where ``v_i = 0``); ``v = 1`` is the figure's rule."""
    lam = jnp.asarray(lam, y.dtype)
    v = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    present, total = v > 0, jnp.sum(v)

    def example_weights(w):
        per_copy = jnp.where(present, w**2 / jnp.where(present, v, 1), 0)
        return lam * total * per_copy + (1 - lam) * w

    record = functools.partial(veb_cost, y, lam=lam, sample_weight=v)
    w0 = initial_distribution(v, y)
    return boosting_scan(learner, y, n_rounds, example_weights, _veb_rule, record, w0)


@functools.partial(jax.jit, static_argnames="n_rounds")
def _vebboost_dense(H, y, lam, sample_weight, n_rounds):
    y = y.astype(float_dtype(H, y))
    H = H.astype(y.dtype)
    sel, alphas, _, costs = _rounds(column_learner(H), y, n_rounds, lam, sample_weight)
    return VEBBoostResult(column_weights(sel, alphas, H.shape[1]), alphas, sel, costs)


@functools.partial(jax.jit, static_argnames="n_rounds")
def _vebboost_stumps(search, y, lam, sample_weight, n_rounds):
    y = y.astype(float_dtype(search.thresholds, y))
    learner = stump_learner(search, y.dtype)
    sel, alphas, _, costs = _rounds(learner, y, n_rounds, lam, sample_weight)
    stumps, signs = stumps_of(search, sel)
    return VEBBoostStumpsResult(stump_weights(alphas), stumps, signs, sel, alphas, costs)


def vebboost(
    H: ArrayLike,
    y: ArrayLike,
    lam: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
) -> VEBBoostResult:
    """VEB-Boost (shivaswamy Fig. 1) over the columns of ``H``, one ``lax.scan``.

    ``lam`` and ``sample_weight`` are traced: ``jax.vmap(vebboost, (None, None, 0, None))``
    sweeps ``lam`` (and a vmap over 0/1 fold masks the folds) with one compilation.
    ``lam = 0`` is AdaBoost with half its step (Theorem 3).

    Args:
      H: votes ``(m, n)`` in ``{-1, +1}``; pass ``voters.self_complemented(H)`` so that each
        voter's complement is offered too.
      y: labels in ``{-1, +1}``, ``(m,)``.
      lam: the variance weight ``lambda`` in ``[0, 1]``.
      n_rounds: the number of rounds ``S`` (static).
      sample_weight: ``(m,)`` example weights ``>= 0``: example ``i`` counts ``v_i`` times (the
        cost and Fig. 1 on the repeated sample, see :func:`veb_cost`; only their ratios
        matter); a zero weight drops the example (the same rounds as slicing ``H`` and
        ``y``). ``None``: all 1.

    Returns:
      :class:`VEBBoostResult`.

    Raises:
      ValueError: for malformed ``H`` / ``y`` / ``sample_weight``, non-binary votes or labels,
        a single class, ``lam`` outside ``[0, 1]`` (when not traced) or ``n_rounds < 1``.
    """
    check_votes(H, binary=True)
    _check(y, jnp.shape(H)[0], lam, n_rounds, sample_weight)
    return _vebboost_dense(jnp.asarray(H), jnp.asarray(y), lam, sample_weight, int(n_rounds))


def vebboost_stumps(
    search: StumpSearch,
    y: ArrayLike,
    lam: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
) -> VEBBoostStumpsResult:
    """VEB-Boost over every decision stump and sign, matrix-free (``O(d m)`` per round).

    The weak learner of each round is the best stump under ``u`` over all thresholds of every
    feature (:func:`pacbound.voters.stump_search`). Same arguments as :func:`vebboost` (with
    zero weights the candidates still include stumps constant on the weighted examples).
    Evaluate the vote with ``pacbound.voters.stumps_vote(r.stumps, r.q * r.signs, X)``.
    """
    _check(y, search.order.shape[1], lam, n_rounds, sample_weight)
    return _vebboost_stumps(search, jnp.asarray(y), lam, sample_weight, int(n_rounds))


def _check(y, m, lam, n_rounds, sample_weight) -> None:
    check_positive_int("n_rounds", n_rounds)
    check_labels(y, m)
    check_scalar("lam", lam, 0.0, 1.0)  # Theorem 2's range
    check_sample_weight(sample_weight, m)
