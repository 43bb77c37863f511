"""Discrete AdaBoost over a fixed voter set or over all decision stumps (matrix-free).

Freund & Schapire's AdaBoost, the baseline of germain2009 §5 and shivaswamy (Table 1): with
example weights ``w`` (uniform at first, or proportional to ``sample_weight``), each round
picks the weak learner ``h_t`` with the largest edge ``sum_i w_i y_i h_t(x_i)`` (the least
weighted error ``eps_t``), gives it

.. math:: \\alpha_t = \\tfrac12 \\ln\\frac{1 - \\epsilon_t}{\\epsilon_t},

and reweights ``w_i <- w_i exp(-alpha_t y_i h_t(x_i)) / Z_t``. The vote is ``sum_t alpha_t
h_t``, i.e. the distribution ``q = alpha / sum(alpha)``. scikit-learn's
``AdaBoostClassifier`` (SAMME, two classes) runs the same rounds with weights ``2 alpha_t``
(same ``q``, same example weights after normalization) and the same stopping rules, which
are followed here: a round with ``eps_t >= 1/2`` ends boosting without a vote, and a round
with ``eps_t = 0`` gets ``alpha_t = 1/2`` (SAMME's weight 1) and ends it. Rounds after the
end are no-ops (``selected = -1``, ``alpha = 0``), so ``n_rounds`` is the static length of
one ``lax.scan``.

The weak learners are the columns of a ``{-1, +1}`` matrix ``H`` (pass
``voters.self_complemented(H)`` to offer each stump's complement, as a depth-1 tree does),
or every decision stump with every distinct threshold of every feature and both signs
(:func:`pacbound.voters.stump_search`, the thresholds of scikit-learn's trees), found in
``O(d m)`` per round without building ``H``. :func:`boosting_scan` is shared with
VEB-Boost (:mod:`pacbound.solvers.vebboost`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_votes,
    float_dtype,
)
from pacbound.voters import Stumps, StumpSearch, stump_scores

__all__ = [
    "AdaBoostResult",
    "AdaBoostStumpsResult",
    "adaboost",
    "adaboost_stumps",
    "boosting_scan",
    "column_learner",
    "initial_distribution",
    "stump_learner",
]


class AdaBoostResult(NamedTuple):
    """AdaBoost over the columns of ``H``; per-round arrays have ``n_rounds`` entries.

    Attributes:
      q: ``(n,)`` distribution over the columns of ``H`` (``alpha`` summed per column,
        normalized; all zero if no round voted).
      alphas: ``(T,)`` ``alpha_t`` (scikit-learn's ``estimator_weights_`` are ``2 alpha_t``).
      selected: ``(T,)`` int32 column of each round, ``-1`` after boosting ended.
      errors: ``(T,)`` weighted error ``eps_t`` (``estimator_errors_``), NaN where no vote.
      losses: ``(T + 1,)`` exponential loss ``mean_i exp(-y_i f(x_i))`` (weighted by
        ``sample_weight``) before the first round and after each one (non-increasing: it is
        multiplied by ``Z_t <= 1``).
    """

    q: jax.Array
    alphas: jax.Array
    selected: jax.Array
    errors: jax.Array
    losses: jax.Array


class AdaBoostStumpsResult(NamedTuple):
    """AdaBoost over all decision stumps; round ``t`` votes ``signs[t] * h_t``.

    Attributes:
      q: ``(T,)`` distribution over the rounds' stumps (a stump chosen twice appears twice).
      stumps: :class:`pacbound.voters.Stumps` of the rounds' stumps.
      signs: ``(T,)`` ``+1`` or ``-1`` (the complement); 0 where no vote.
      selected: ``(T,)`` int32 position ``feature * (m - 1) + k`` in the search, or ``-1``.
      alphas, errors, losses: as in :class:`AdaBoostResult`.
    """

    q: jax.Array
    stumps: Stumps
    signs: jax.Array
    selected: jax.Array
    alphas: jax.Array
    errors: jax.Array
    losses: jax.Array


# A weak learner maps signed example weights a = u * y to (index, column h (m,)) maximizing
# the edge sum_i a_i h_i; a rule maps the weights of the examples it gets right and wrong to
# (alpha, vote: whether this round votes, stop: whether boosting ends after it).
Learner = Callable[[jax.Array], tuple[jax.Array, jax.Array]]
Rule = Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array, jax.Array]]


def boosting_scan(learner: Learner, y, n_rounds, example_weights, rule: Rule, record, w0):
    """The rounds of discrete boosting as one ``lax.scan`` (AdaBoost, VEB-Boost Fig. 1).

    ``w`` starts at the distribution ``w0`` (:func:`initial_distribution`). Each round:
    ``u = example_weights(w)``, ``(k, h) = learner(u * y)``, ``(alpha, vote,
    stop) = rule(sum_{y h > 0} u, sum_{y h <= 0} u)``, then ``f += alpha h`` and ``w <- w
    exp(-alpha y h) / Z``. Once a rule stops, later rounds are masked no-ops.

    Returns:
      ``(selected, alphas, errors, records)``: per round, the index (``-1`` when no vote),
      ``alpha`` (0 when no vote), ``sum_wrong u / sum u`` (NaN when no vote) and
      ``record(f)`` after the round, with ``record(0)`` prepended (``T + 1`` entries).
    """

    def body(carry, _):
        f, w, ended = carry
        u = example_weights(w)
        k, h = learner(u * y)
        correct = y * h > 0
        right, wrong = jnp.sum(jnp.where(correct, u, 0)), jnp.sum(jnp.where(correct, 0, u))
        alpha, vote, stop = rule(right, wrong)
        vote = vote & ~ended
        alpha = jnp.where(vote, alpha, 0)
        f = f + alpha * h
        w = w * jnp.exp(-alpha * y * h)
        w = w / jnp.sum(w)
        error = jnp.where(vote, wrong / (right + wrong), jnp.nan)
        out = (jnp.where(vote, k, -1).astype(jnp.int32), alpha, error, record(f))
        return (f, w, ended | stop | ~vote), out

    init = (jnp.zeros_like(y), w0, jnp.zeros((), bool))
    _, (selected, alphas, errors, records) = lax.scan(body, init, length=n_rounds)
    records = jnp.concatenate([record(jnp.zeros_like(y))[None], records])
    return selected, alphas, errors, records


def initial_distribution(sample_weight, y):
    """The example weights ``sample_weight / sum(sample_weight)`` (uniform when ``None``)."""
    v = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    return v / jnp.sum(v)


def _adaboost_rule(right, wrong):
    """``alpha = ln((1 - eps) / eps) / 2``; stop at ``eps >= 1/2`` (no vote) or ``eps = 0``."""
    eps = wrong / (right + wrong)
    perfect = eps <= 0
    alpha = jnp.where(perfect, 0.5, 0.5 * jnp.log(right / jnp.where(perfect, 1, wrong)))
    return alpha, eps < 0.5, perfect | (eps >= 0.5)


def column_learner(H: jax.Array) -> Learner:
    """The column of ``H`` with the largest edge (ties: the lowest index)."""

    def learn(a):
        k = jnp.argmax(a @ H)
        return k, lax.dynamic_index_in_dim(H, k, axis=1, keepdims=False)

    return learn


def stump_learner(search: StumpSearch, dtype) -> Learner:
    """The stump and sign with the largest edge over all thresholds (``stump_scores``).

    The index is into the self-complemented set of all ``P = d (m - 1)`` stumps: position
    ``p = feature * (m - 1) + k`` for ``+h`` (edge ``>= 0``), ``P + p`` for ``-h``. Ties go to
    the lowest feature, then the lowest threshold.
    """
    d, m = search.order.shape

    def learn(a):
        edges = stump_scores(search, a)
        p = jnp.argmax(jnp.where(search.valid, jnp.abs(edges), -jnp.inf))
        feature, k = p // (m - 1), p % (m - 1)
        negative = edges.ravel()[p] < 0
        sign = jnp.where(negative, -1, 1).astype(dtype)
        above = jnp.where(jnp.arange(m) > k, sign, -sign)
        column = jnp.zeros(m, dtype).at[search.order[feature]].set(above)
        return p + jnp.where(negative, d * (m - 1), 0), column

    return learn


def column_weights(selected, alphas, n):
    """``q`` over ``n`` columns from the rounds' indices and weights (0 if no vote)."""
    idx = jnp.where(selected >= 0, selected, n)
    weights = jnp.zeros(n, alphas.dtype).at[idx].add(alphas, mode="drop")
    total = jnp.sum(weights)
    return jnp.where(total > 0, weights / jnp.where(total > 0, total, 1), 0)


def stumps_of(search: StumpSearch, selected):
    """The rounds' :class:`Stumps` and signs from :func:`stump_learner` indices (sign 0 and
    stump 0 where no vote)."""
    d, m = search.order.shape
    pos = jnp.maximum(selected, 0) % (d * (m - 1))
    feature, k = pos // (m - 1), pos % (m - 1)
    stumps = Stumps(feature.astype(jnp.int32), search.thresholds[feature, k])
    signs = jnp.where(selected >= d * (m - 1), -1, 1)
    return stumps, jnp.where(selected >= 0, signs, 0).astype(search.thresholds.dtype)


def stump_weights(alphas):
    """``q`` over the rounds' stumps: ``alpha / sum(alpha)`` (0 if no vote)."""
    total = jnp.sum(alphas)
    return jnp.where(total > 0, alphas / jnp.where(total > 0, total, 1), 0)


def _rounds(learner, y, n_rounds, sample_weight):
    """AdaBoost's rounds from ``w0`` proportional to the weights; the loss is their mean."""
    w0 = initial_distribution(sample_weight, y)

    def exp_loss(f):
        return w0 @ jnp.exp(-y * f)

    return boosting_scan(learner, y, n_rounds, lambda w: w, _adaboost_rule, exp_loss, w0)


@functools.partial(jax.jit, static_argnames="n_rounds")
def _adaboost_dense(H, y, sample_weight, n_rounds):
    y = y.astype(float_dtype(H, y))
    H = H.astype(y.dtype)
    sel, alphas, errors, losses = _rounds(column_learner(H), y, n_rounds, sample_weight)
    return AdaBoostResult(column_weights(sel, alphas, H.shape[1]), alphas, sel, errors, losses)


@functools.partial(jax.jit, static_argnames="n_rounds")
def _adaboost_stumps(search, y, sample_weight, n_rounds):
    y = y.astype(float_dtype(search.thresholds, y))
    learner = stump_learner(search, y.dtype)
    sel, alphas, errors, losses = _rounds(learner, y, n_rounds, sample_weight)
    stumps, signs = stumps_of(search, sel)
    return AdaBoostStumpsResult(stump_weights(alphas), stumps, signs, sel, alphas, errors, losses)


def adaboost(
    H: ArrayLike, y: ArrayLike, n_rounds: int, *, sample_weight: ArrayLike | None = None
) -> AdaBoostResult:
    """Discrete AdaBoost over the columns of ``H`` (``lax.scan`` of ``n_rounds`` rounds).

    Equal, round by round, to scikit-learn's ``AdaBoostClassifier(algorithm="SAMME")``
    whose weak learner returns the least-weighted-error column (see the module docstring),
    ``sample_weight`` included.

    Args:
      H: votes ``(m, n)`` in ``{-1, +1}``; pass ``voters.self_complemented(H)`` so that each
        voter's complement is offered too (otherwise a round may end boosting early).
      y: labels in ``{-1, +1}``, ``(m,)``.
      n_rounds: the number of rounds ``T`` (static).
      sample_weight: ``(m,)`` example weights ``>= 0`` (traced: ``jax.vmap`` over 0/1 fold
        masks compiles once). The first round's distribution is proportional to them (as
        scikit-learn's); a zero weight drops the example (the same rounds as slicing ``H``
        and ``y``), integer weights repeat examples. ``None``: uniform.

    Returns:
      :class:`AdaBoostResult`; ``losses`` are weighted means.

    Raises:
      ValueError: for malformed ``H`` / ``y`` / ``sample_weight``, non-binary votes or labels,
        a single class, ``n_rounds < 1``.
    """
    check_votes(H, binary=True)
    _check(y, jnp.shape(H)[0], n_rounds, sample_weight)
    return _adaboost_dense(jnp.asarray(H), jnp.asarray(y), sample_weight, int(n_rounds))


def adaboost_stumps(
    search: StumpSearch, y: ArrayLike, n_rounds: int, *, sample_weight: ArrayLike | None = None
) -> AdaBoostStumpsResult:
    """Discrete AdaBoost over every decision stump, matrix-free (``O(d m)`` per round).

    The candidates are all thresholds of every feature, both signs
    (:func:`pacbound.voters.stump_search`): the split points of scikit-learn's depth-1 trees.
    Same arguments as :func:`adaboost`; the candidates are those of the whole search, so with
    zero weights they include stumps constant on the weighted examples (slicing ``X`` does
    not). Evaluate the vote with ``voters.stumps_vote(r.stumps, r.q * r.signs, X)``.
    """
    _check(y, search.order.shape[1], n_rounds, sample_weight)
    return _adaboost_stumps(search, jnp.asarray(y), sample_weight, int(n_rounds))


def _check(y, m, n_rounds, sample_weight) -> None:
    check_positive_int("n_rounds", n_rounds)
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
