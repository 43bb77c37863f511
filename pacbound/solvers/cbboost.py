"""CB-Boost and GB-CB-Boost: greedy C-bound minimization (bauvin2020 Algorithm 1, §3.2).

CB-Boost starts from the best-margin voter and adds, each round, the direction whose
Theorem 3 step lowers the C-bound most (Property 1 is the exact decrease, Corollary 2 bounds
the training error); GB-CB-Boost takes the steepest direction instead. The closed form and the
round's scan are in :mod:`pacbound.solvers.cbboost_step`; this module gives them candidates:

* a materialized ``H`` (:func:`cbboost`): a round is one product ``H^T (w F)``, one read of
  ``H`` (:mod:`pacbound.solvers.edges`: ``H`` transposed once, int8 votes by an exact int8
  GEMM);
* every decision stump (:func:`cbboost_stumps`): a round is one gather and one blocked prefix
  sum over the ``d m`` sorted feature values (:func:`pacbound.voters.stump_edges`).

``gamma(h)`` and ``nu(h)`` are computed once. ``F`` is the current vote and a re-selected voter
gets ``alpha`` added to its weight, so Property 1 is the exact decrease of every round. The vote
is carried normalized (the margin of ``q``); the paper's unnormalized ``alpha``
(``alpha_{I_1} = 1``) are recorded. Round 0 is the initial voter; a round in which no direction
decreases the bound by more than ``tol`` records ``selected = -1`` and no change, so every
prefix of the rounds is available (:func:`weights_after`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound.solvers.cbboost_step import DirectionStep, boost_rounds, one_direction_step
from pacbound.solvers.edges import column_edges, prepare_votes, square_edges, votes_column
from pacbound.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
)
from pacbound.voters import Stumps, StumpSearch, padded_stumps, stump_edges

__all__ = [
    "CBBoostResult",
    "CBBoostStumpsResult",
    "DirectionStep",
    "cbboost",
    "cbboost_stumps",
    "gbcbboost",
    "one_direction_step",
    "weights_after",
]


class CBBoostResult(NamedTuple):
    """CB-Boost over a materialized voter matrix; per-round arrays have ``n_rounds`` rows.

    Attributes:
      q: ``(n,)`` distribution over the columns of ``H`` after all rounds (``alpha / sum``).
      selected: ``(T,)`` int32 column chosen each round (round 0: the best-margin voter;
        ``-1``: no direction decreased the bound).
      alphas: ``(T,)`` weight added each round, unnormalized as in the paper (round 0: 1).
      cbounds: ``(T,)`` empirical C-bound of the vote after each round.
      decreases: ``(T,)`` Property 1's ``S_t`` of each round (0 for round 0 and idle rounds).
      error_bounds: ``(T,)`` Corollary 2's training-error bound ``cbounds[0] - sum S``.
    """

    q: jax.Array
    selected: jax.Array
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array


class CBBoostStumpsResult(NamedTuple):
    """CB-Boost over all decision stumps (matrix-free); round ``t`` adds ``signs[t] * h_t``.

    Attributes:
      q: ``(T,)`` distribution over the rounds' stumps (a re-selected stump appears twice).
      stumps: :class:`pacbound.voters.Stumps` of the ``T`` rounds' stumps.
      signs: ``(T,)`` ``+1``, ``-1`` (the complement ``-h``) or 0 (idle round).
      selected: ``(T,)`` int32 position ``feature * (m - 1) + k`` in the search, or ``-1``.
      alphas, cbounds, decreases, error_bounds: as in :class:`CBBoostResult`.
    """

    q: jax.Array
    stumps: Stumps
    signs: jax.Array
    selected: jax.Array
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array


def _weights(sample_weight, y):
    """Unnormalized example weights: sums of ±1 votes with integer weights stay exact."""
    return jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)


@functools.partial(jax.jit, static_argnames=("n_rounds", "gradient"))
def _cbboost_dense(votes, y, sample_weight, n_rounds, allow_reselect, tol, gradient):
    """Algorithm 1 on ``votes = prepare_votes(H, dtype)``, read once per round."""
    w = _weights(sample_weight, y)

    def edges(a):  # candidates as one row: (1, n)
        return column_edges(votes, a)[None]

    gamma_h, nu_h = edges(w * y) / jnp.sum(w), square_edges(votes, w)[None] / jnp.sum(w)
    column = functools.partial(votes_column, votes, dtype=y.dtype)
    r = boost_rounds(edges, column, gamma_h, nu_h, y, w, n_rounds, allow_reselect, tol, gradient)
    result = CBBoostResult(jnp.zeros(gamma_h.shape[1], y.dtype), *r)
    return result._replace(q=weights_after(result, n_rounds))


def weights_after(result: CBBoostResult | CBBoostStumpsResult, rounds: ArrayLike) -> jax.Array:
    """The distribution ``q`` after the first ``rounds`` rounds (round 0 included; traced).

    Over ``H``'s columns for :class:`CBBoostResult` (``(n,)``), over the rounds' stumps for
    :class:`CBBoostStumpsResult` (``(T,)``, zero past ``rounds``). ``rounds = T`` gives
    ``result.q``; since the C-bound only sees the normalized vote, ``cbounds[rounds - 1]`` is
    the C-bound of this ``q``. For one result (``jax.vmap`` it over folds).
    """
    alphas = jnp.where(jnp.arange(result.alphas.shape[0]) < rounds, result.alphas, 0)
    if isinstance(result, CBBoostStumpsResult):
        return alphas / jnp.sum(alphas)
    n = result.q.shape[0]
    idx = jnp.where(result.selected >= 0, result.selected, n)
    weights = jnp.zeros(n, alphas.dtype).at[idx].add(alphas, mode="drop")
    return weights / jnp.sum(weights)


@functools.partial(jax.jit, static_argnames=("n_rounds", "gradient"))
def _cbboost_stumps(search, y, sample_weight, n_rounds, allow_reselect, tol, gradient):
    y = jnp.asarray(y, float_dtype(search.thresholds, y))
    w = _weights(sample_weight, y)
    m, positions = y.shape[0], search.valid.shape[1]
    margins = stump_edges(search, w * y) / jnp.sum(w)  # (d, P): the padded layout
    margins = jnp.where(padded_stumps(search), margins, jnp.nan)  # NaN: no stump, never valid
    signs = jnp.where(margins < 0, -1, 1).astype(y.dtype)  # only gamma(h) > 0 can qualify

    def edges(a):
        return signs * stump_edges(search, a)

    def column(k):
        f, p = jnp.divmod(k, margins.shape[1])
        above = jnp.where(jnp.arange(m) > p, signs[f, p], -signs[f, p])
        return jnp.zeros_like(y).at[search.order[f]].set(above)

    one = jnp.ones((), y.dtype)  # nu(h) = 1 for ±1 voters
    r = boost_rounds(
        edges, column, jnp.abs(margins), one, y, w, n_rounds, allow_reselect, tol, gradient
    )
    feature, k = jnp.divmod(jnp.maximum(r.selected, 0), margins.shape[1])
    stumps = Stumps(feature.astype(jnp.int32), search.thresholds[feature, k])
    signs = jnp.where(r.selected >= 0, signs[feature, k], 0)
    selected = jnp.where(r.selected >= 0, feature * positions + k, -1).astype(jnp.int32)
    result = CBBoostStumpsResult(r.alphas, stumps, signs, selected, *r[1:])
    return result._replace(q=weights_after(result, n_rounds))


def _check(y, m, n_rounds, sample_weight, tol) -> None:
    """Host-side checks shared by both learners (value checks skipped under a trace)."""
    check_positive_int("n_rounds", n_rounds)
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    check_scalar("tol", tol, 0.0)


def cbboost(
    H: ArrayLike,
    y: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
    allow_reselect: ArrayLike = True,
    tol: ArrayLike = 0.0,
    gradient: bool = False,
) -> CBBoostResult:
    """CB-Boost (bauvin2020 Algorithm 1) on a materialized voter matrix.

    Starts from the best-margin voter, then each round solves Theorem 3 in every direction
    (one product ``H^T (w F)``) and adds the direction with the lowest C-bound. The C-bound
    never increases; ``decreases`` follow Property 1 and ``error_bounds`` Corollary 2.
    Traceable: ``jax.vmap(cbboost, in_axes=(0, 0, None))`` runs stacked folds, and a vmap over
    ``sample_weight`` (0/1 masks) runs folds of one ``H`` with one compilation.

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``, any dtype: integer (int8 ±1 / 0) votes are copied
        once, transposed, and each round is an exact int8 product with int32 sums
        (:mod:`pacbound.solvers.edges`), a quarter of float32's memory traffic; float votes
        are read as they are. Pass ``voters.self_complemented(H)`` to offer ``-h`` as well
        (only voters with ``gamma(h) > 0`` ever qualify, Theorem 3).
      y: labels in ``{-1, +1}``, ``(m,)``; the computation runs in their float dtype (or
        ``H``'s, if wider and floating).
      n_rounds: rounds ``T`` including the initial voter (static; the scan's length).
      sample_weight: ``(m,)`` non-negative example weights (all means are weighted).
      allow_reselect: whether a voter already in the vote may be chosen again (traced).
      tol: a round whose best decrease is ``<= tol`` changes nothing (traced).
      gradient: GB-CB-Boost's steepest direction instead of the exhaustive search (static).

    Returns:
      :class:`CBBoostResult`.

    Raises:
      ValueError: for a malformed ``H``/``y``/``sample_weight``, labels other than ±1 (or a
        single class), NaN votes, a negative ``tol``, or ``n_rounds < 1``.
    """
    check_votes(H)
    _check(y, jnp.shape(H)[0], n_rounds, sample_weight, tol)
    y = jnp.asarray(y, float_dtype(H, y))
    votes = prepare_votes(H, y.dtype)
    return _cbboost_dense(votes, y, sample_weight, int(n_rounds), allow_reselect, tol, gradient)


def gbcbboost(
    H: ArrayLike,
    y: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
    allow_reselect: ArrayLike = True,
    tol: ArrayLike = 0.0,
) -> CBBoostResult:
    """GB-CB-Boost (bauvin2020 §3.2): :func:`cbboost` with the gradient's direction.

    Each round takes the steepest coordinate ``argmax_k -dC/dalpha_k`` among the directions
    where Theorem 3 applies (``-dC/dalpha_k = 2 gamma(F) / nu(F)^2`` times the closed form's
    numerator ``gamma(h_k) nu(F) - gamma(F) tau(F, h_k)``), then Theorem 3's step.
    """
    kwargs = {"sample_weight": sample_weight, "allow_reselect": allow_reselect, "tol": tol}
    return cbboost(H, y, n_rounds, gradient=True, **kwargs)


def cbboost_stumps(
    search: StumpSearch,
    y: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
    allow_reselect: ArrayLike = True,
    tol: ArrayLike = 0.0,
    gradient: bool = False,
) -> CBBoostStumpsResult:
    """CB-Boost over every decision stump and its complement, matrix-free.

    The candidates are all thresholds of every feature (:func:`pacbound.voters.stump_search`)
    with both signs: ``gamma(h)`` is one :func:`pacbound.voters.stump_edges` of ``w y``, and
    each round's ``tau(F, h)`` one of ``w F``, so a round costs one gather of ``w F`` in every
    feature's order and one blocked prefix sum over the ``d m`` values; ``nu(h) = 1``. Same
    arguments and guarantees as :func:`cbboost` (the same as running it on the materialized
    self-complemented set of all stumps); evaluate the vote on new points with
    ``voters.stumps_vote(r.stumps, weights_after(r, T) * r.signs, X)``.
    """
    _check(y, search.order.shape[1], n_rounds, sample_weight, tol)
    return _cbboost_stumps(search, y, sample_weight, int(n_rounds), allow_reselect, tol, gradient)
