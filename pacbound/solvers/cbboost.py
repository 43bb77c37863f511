"""CB-Boost and GB-CB-Boost: greedy C-bound minimization (bauvin2020 Algorithm 1, §3.2).

With weights ``alpha >= 0``, the vote ``F = sum_s alpha_s h_s`` and the weighted empirical
means ``gamma(f) = E[y f]``, ``nu(f) = E[f^2]``, ``tau(f, g) = E[f g]`` (Definitions 8-10),
the C-bound along one direction is ``C(alpha) = 1 - (gamma(F) + alpha gamma(h))^2 /
(nu(F) + 2 alpha tau(F, h) + alpha^2 nu(h))``. Theorem 3 minimizes it in closed form
(:func:`one_direction_step`, with a general ``nu(h)``; ``nu(h) = 1`` for ±1 voters) and
Property 1 gives the exact decrease. CB-Boost starts from the best-margin voter and adds, each
round, the direction whose step lowers the C-bound most; GB-CB-Boost takes the steepest one.

A round costs one edge computation ``tau(F, h)`` for every candidate: ``(w F) @ H`` on a
materialized ``H`` (one read of ``H``), or one sorted cumulative sum for all thresholds of all
features (:func:`pacbound.voters.stump_scores`); ``gamma(h)`` and ``nu(h)`` are computed once.
``F`` is the current vote and a re-selected voter gets ``alpha`` added to its weight, so
Property 1 is the exact decrease of every round. The vote is carried normalized (the margin of
``q``); the paper's unnormalized ``alpha`` (``alpha_{I_1} = 1``) are recorded. Round 0 is the
initial voter; a round in which no direction decreases the bound by more than ``tol`` records
``selected = -1`` and no change, so every prefix of the rounds is available
(:func:`weights_after`).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.cbound import cbound
from pacbound.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
)
from pacbound.voters import Stumps, StumpSearch, stump_scores

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

_BLOCK = 1 << 16  # entries of a non-float H converted per step of a matrix-vector product
_TIES = 256  # scores within _TIES * eps (relative) of the best are ties: lowest index wins


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


class _State(NamedTuple):
    vote: jax.Array  # (m,) normalized vote F / sum(alpha)
    gamma: jax.Array  # gamma(F)
    nu: jax.Array  # nu(F)
    scale: jax.Array  # sum(alpha), the paper's normalization
    chosen: jax.Array  # (N,) bool: candidates with a weight


class DirectionStep(NamedTuple):
    """One direction's closed form (Theorem 3, Property 1); see :func:`one_direction_step`."""

    step: jax.Array  # alpha* (0 where not valid)
    cbound: jax.Array  # C-bound after the step (+inf where not valid)
    decrease: jax.Array  # Property 1's S (0 where not valid)
    valid: jax.Array  # Theorem 3's conditions and alpha* > 0


def _terms(gamma_f, nu_f, gamma_h, nu_h, tau):
    """Theorem 3's numerator and denominator, the Gram determinant and the validity mask.

    Rounding is kept out of ``valid``: ``gamma(h)`` must exceed ``64 eps sqrt(nu(h))`` (a ±1
    voter's exact zero margin can round to ``1e-17``) and ``h`` must not be collinear with
    ``F`` to ``64 eps`` (re-selecting the only voter of ``F`` is ``0 / 0``).
    """
    eps = 64 * jnp.finfo(jnp.result_type(gamma_f, tau)).eps
    num = gamma_h * nu_f - gamma_f * tau
    den = nu_h * gamma_f - gamma_h * tau
    gram = nu_f * nu_h - tau**2  # >= 0 by Cauchy-Schwarz, 0 iff h and F are collinear
    valid = (gamma_h > eps * jnp.sqrt(nu_h)) & (gamma_f > 0) & (den > 0) & (num > 0)
    return num, den, gram, valid & (gram > eps * nu_f * nu_h)


def one_direction_step(
    gamma_f: ArrayLike, nu_f: ArrayLike, gamma_h: ArrayLike, nu_h: ArrayLike, tau: ArrayLike
) -> DirectionStep:
    """Theorem 3's optimal step along ``h`` from the vote ``F``, its C-bound and decrease.

    Broadcasts over candidates. ``valid``: ``gamma(h) > 0``, ``gamma(F) > 0``,
    ``tau < gamma(F) nu(h) / gamma(h)`` (positive denominator) and a positive numerator
    (``alpha* > 0``; the paper's statement leaves it implicit: otherwise ``C`` increases along
    ``alpha >= 0``). The decrease is Property 1's ``S = C(F) - C(F + alpha* h)``.
    """
    num, den, gram, valid = _terms(gamma_f, nu_f, gamma_h, nu_h, tau)
    step = jnp.where(valid, num / jnp.where(valid, den, 1), 0)
    mu2 = nu_f + step * (2 * tau + step * nu_h)
    cb = jnp.where(valid, 1 - (gamma_f + step * gamma_h) ** 2 / jnp.where(valid, mu2, 1), jnp.inf)
    decrease = jnp.where(valid, num**2 / jnp.where(valid, nu_f * gram, 1), 0)
    return DirectionStep(step, cb, decrease, valid)


def _first_argmax(x: jax.Array, rtol: float = 0.0) -> jax.Array:
    """First index within ``rtol`` (relative) of ``max(x)``, by two plain reductions.

    Scores that tie in exact arithmetic (common for ±1 voters) round differently along
    different summation orders; ``rtol`` sends them all to the lowest index. (XLA:CPU's
    variadic ``argmax`` reduction is also several times slower than these two.)
    """
    best = jnp.max(x)
    idx = jnp.where(x >= best - rtol * jnp.abs(best), jnp.arange(x.shape[0]), x.shape[0])
    return jnp.minimum(jnp.min(idx), x.shape[0] - 1)


def _column_sums(a: jax.Array, H: jax.Array, square: bool = False) -> jax.Array:
    """``a @ H`` (or ``a @ H**2``) in ``a``'s dtype, reading ``H`` once, never copying it whole.

    A float ``H`` of ``a``'s dtype is one ``a @ H`` (XLA:CPU runs ``H.T @ a`` ~10x slower). Any
    other dtype (int8 / bf16 votes, float32 ``H`` under float64) goes through blocks of about
    ``_BLOCK`` entries (whole rows) converted in cache; the last block is shifted back inside
    ``H`` and its rows already counted get weight 0.
    """
    if H.dtype == a.dtype and not square:
        return a @ H
    m, n = H.shape
    block = min(max(_BLOCK // n, 8), m)

    def body(j, acc):
        start = jnp.minimum(j * block, m - block)
        rows = lax.dynamic_slice_in_dim(H, start, block).astype(a.dtype)
        w = lax.dynamic_slice_in_dim(a, start, block)
        w = jnp.where(start + jnp.arange(block) >= j * block, w, 0)
        return acc + w @ (rows * rows if square else rows)

    return lax.fori_loop(0, -(-m // block), body, jnp.zeros(n, a.dtype))


def _moments(vote, y, w):
    return jnp.sum(w * y * vote) / jnp.sum(w), jnp.sum(w * vote**2) / jnp.sum(w)


class _Rounds(NamedTuple):
    selected: jax.Array
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array


def _boost(edges, column, gamma_h, nu_h, y, w, n_rounds, reselect, tol, gradient) -> _Rounds:
    """Algorithm 1's ``lax.scan``; ``edges(a) = sum_i a_i h(x_i)`` and ``column(k) = h_k``.

    Candidates are ranked by Property 1's decrease (the same order as the C-bound after their
    step, which is only computed for the winner) or, for GB-CB-Boost, by the numerator.
    """
    first = _first_argmax(jnp.where(jnp.isnan(gamma_h), -jnp.inf, gamma_h))
    vote = column(first)
    chosen = jnp.zeros(gamma_h.shape, bool).at[first].set(True)
    init = _State(vote, *_moments(vote, y, w), jnp.ones((), y.dtype), chosen)
    nu_h, tol = jnp.broadcast_to(nu_h, gamma_h.shape), jnp.asarray(tol, y.dtype)

    def body(s: _State, _):
        tau = edges(w * s.vote) / jnp.sum(w)
        num, _, gram, valid = _terms(s.gamma, s.nu, gamma_h, nu_h, tau)
        valid &= jnp.asarray(reselect) | ~s.chosen
        score = num if gradient else num**2 / jnp.where(valid, gram, 1)
        k = _first_argmax(jnp.where(valid, score, -jnp.inf), _TIES * jnp.finfo(y.dtype).eps)
        c = one_direction_step(s.gamma, s.nu, gamma_h[k], nu_h[k], tau[k])
        ok = valid[k] & (c.decrease > tol)
        beta = jnp.where(ok, c.step, 0)
        vote = (s.vote + beta * column(k)) / (1 + beta)
        gamma, nu = _moments(vote, y, w)
        state = _State(vote, gamma, nu, s.scale * (1 + beta), s.chosen.at[k].max(ok))
        dec = jnp.where(ok, c.decrease, 0)
        return state, (jnp.where(ok, k, -1), beta * s.scale, cbound(gamma, nu), dec)

    _, rounds = lax.scan(body, init, length=n_rounds - 1)
    firsts = (first, 1, cbound(init.gamma, init.nu), 0)
    sel, alpha, cbs, dec = (jnp.concatenate([jnp.asarray(a, b.dtype)[None], b])
                            for a, b in zip(firsts, rounds))  # fmt: skip
    return _Rounds(sel, alpha, cbs, dec, cbs[0] - jnp.cumsum(dec))


def _weights(sample_weight, y):
    """Unnormalized example weights: sums of ±1 votes with integer weights stay exact."""
    return jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)


@functools.partial(jax.jit, static_argnames=("n_rounds", "gradient"))
def _cbboost_dense(H, y, sample_weight, n_rounds, allow_reselect, tol, gradient):
    H = jnp.asarray(H)
    y = jnp.asarray(y, float_dtype(H, y))
    w = _weights(sample_weight, y)
    gamma_h = _column_sums(w * y, H) / jnp.sum(w)
    nu_h = _column_sums(w, H, square=True) / jnp.sum(w)

    def column(k):
        return lax.dynamic_index_in_dim(H, k, axis=1, keepdims=False).astype(y.dtype)

    edges = functools.partial(_column_sums, H=H)
    r = _boost(edges, column, gamma_h, nu_h, y, w, n_rounds, allow_reselect, tol, gradient)
    result = CBBoostResult(jnp.zeros(H.shape[1], y.dtype), *r)
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
    positions = search.valid.shape[1]
    margins = stump_scores(search, w * y).ravel() / jnp.sum(w)  # NaN where no stump (ties)
    signs = jnp.where(margins < 0, -1, 1).astype(y.dtype)  # only gamma(h) > 0 can qualify

    def edges(a):
        return signs * stump_scores(search, a).ravel()

    def column(k):
        above = jnp.where(jnp.arange(y.shape[0]) > k % positions, signs[k], -signs[k])
        return jnp.zeros_like(y).at[search.order[k // positions]].set(above)

    one = jnp.ones((), y.dtype)  # nu(h) = 1 for ±1 voters
    r = _boost(edges, column, jnp.abs(margins), one, y, w, n_rounds, allow_reselect, tol, gradient)
    pos = jnp.maximum(r.selected, 0)
    feature, k = pos // positions, pos % positions
    stumps = Stumps(feature.astype(jnp.int32), search.thresholds[feature, k])
    signs = jnp.where(r.selected >= 0, signs[pos], 0)
    result = CBBoostStumpsResult(r.alphas, stumps, signs, *r)
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
    (one product ``(w F) @ H``) and adds the direction with the lowest C-bound. The C-bound
    never increases; ``decreases`` follow Property 1 and ``error_bounds`` Corollary 2.
    Traceable: ``jax.vmap(cbboost, in_axes=(0, 0, None))`` runs stacked folds, and a vmap over
    ``sample_weight`` (0/1 masks) runs folds of one ``H`` with one compilation.

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``, any dtype (int8 ±1 votes are read as they are and
        accumulated in float); pass ``voters.self_complemented(H)`` to offer ``-h`` as well
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
    return _cbboost_dense(H, y, sample_weight, int(n_rounds), allow_reselect, tol, gradient)


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
    with both signs: ``gamma(h)`` is one :func:`pacbound.voters.stump_scores` of ``w y``, and
    each round's ``tau(F, h)`` one of ``w F``, so a round costs one sorted cumulative sum over
    the ``d m`` feature values; ``nu(h) = 1``. Same arguments and guarantees as
    :func:`cbboost` (the same as running it on the materialized self-complemented set of all
    stumps); evaluate the vote on new points with
    ``voters.stumps_vote(r.stumps, weights_after(r, T) * r.signs, X)``.
    """
    _check(y, search.order.shape[1], n_rounds, sample_weight, tol)
    return _cbboost_stumps(search, y, sample_weight, int(n_rounds), allow_reselect, tol, gradient)
