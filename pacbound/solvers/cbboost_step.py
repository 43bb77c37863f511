"""CB-Boost's round: Theorem 3's closed form in every direction and Algorithm 1's scan.

bauvin2020 §3. With weights ``alpha >= 0``, the vote ``F = sum_s alpha_s h_s`` and the weighted
empirical means ``gamma(f) = E[y f]``, ``nu(f) = E[f^2]``, ``tau(f, g) = E[f g]``
(Definitions 8-10), the C-bound along one direction is ``C(alpha) = 1 - (gamma(F) +
alpha gamma(h))^2 / (nu(F) + 2 alpha tau(F, h) + alpha^2 nu(h))``. Theorem 3 minimizes it in
closed form (:func:`one_direction_step`, with a general ``nu(h)``; ``nu(h) = 1`` for ±1
voters) and Property 1 gives the exact decrease. :func:`boost_rounds` is Algorithm 1 over any
candidate set given by its edges: ``gamma(h)`` and ``nu(h)`` are fixed, and a round needs only
``tau(F, h)`` for every candidate (one edge computation) and the vote of the winner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.cbound import cbound

__all__ = ["DirectionStep", "Rounds", "boost_rounds", "first_argmax", "one_direction_step"]

_TIES = 256  # scores within _TIES * eps (relative) of the best are ties: lowest index wins


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


def _first_index(mask: jax.Array) -> jax.Array:
    """First ``True`` of a 1-D mask (its length if none), by one plain ``min`` reduction."""
    return jnp.min(jnp.where(mask, jnp.arange(mask.shape[0]), mask.shape[0]))


def first_argmax(score: jax.Array, rtol: float = 0.0) -> jax.Array:
    """Flat index of the first entry of a 2-D ``score`` within ``rtol`` (relative) of its max.

    Scores that tie in exact arithmetic (common for ±1 voters) round differently along
    different summation orders; ``rtol`` sends them all to the lowest index. One pass over
    ``score`` (row maxima), then one row: XLA:CPU's variadic ``argmax`` reduction is several
    times slower, and a flat max followed by a masked min reads ``score`` twice.
    """
    rows, cols = score.shape
    row_max = jnp.max(score, axis=1)
    best = row_max[jnp.argmax(row_max)]
    threshold = best - rtol * jnp.abs(best)
    row = jnp.minimum(_first_index(row_max >= threshold), rows - 1)
    col = _first_index(lax.dynamic_index_in_dim(score, row, keepdims=False) >= threshold)
    return row * cols + jnp.minimum(col, cols - 1)


class _State(NamedTuple):
    vote: jax.Array  # (m,) normalized vote F / sum(alpha)
    gamma: jax.Array  # gamma(F)
    nu: jax.Array  # nu(F)
    scale: jax.Array  # sum(alpha), the paper's normalization
    chosen: jax.Array  # candidates with a weight, shaped like gamma(h)


class Rounds(NamedTuple):
    """Per-round arrays of :func:`boost_rounds` (round 0: the initial voter)."""

    selected: jax.Array  # flat candidate index, -1 for an idle round
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array


def _moments(vote, y, w):
    return jnp.sum(w * y * vote) / jnp.sum(w), jnp.sum(w * vote**2) / jnp.sum(w)


def boost_rounds(
    edges: Callable[[jax.Array], jax.Array],
    column: Callable[[jax.Array], jax.Array],
    gamma_h: jax.Array,
    nu_h: jax.Array,
    y: jax.Array,
    w: jax.Array,
    n_rounds: int,
    reselect: ArrayLike,
    tol: ArrayLike,
    gradient: bool,
) -> Rounds:
    """Algorithm 1's ``lax.scan`` over 2-D candidate arrays (flat index = row-major).

    ``edges(a)`` is ``sum_i a_i h(x_i)`` for every candidate (shaped like ``gamma_h``, which is
    NaN where a position is no candidate) and ``column(k)`` the votes of flat candidate ``k``.
    Candidates are ranked by Property 1's decrease (the same order as the C-bound after their
    step, only computed for the winner) or, for GB-CB-Boost, by Theorem 3's numerator. Round 0
    is the best-margin voter; a round whose best decrease is ``<= tol`` is idle (``-1``).
    """
    first = first_argmax(jnp.where(jnp.isnan(gamma_h), -jnp.inf, gamma_h))
    vote = column(first)
    chosen = jnp.zeros(gamma_h.size, bool).at[first].set(True).reshape(gamma_h.shape)
    init = _State(vote, *_moments(vote, y, w), jnp.ones((), y.dtype), chosen)
    nu_h, tol = jnp.broadcast_to(nu_h, gamma_h.shape), jnp.asarray(tol, y.dtype)

    def body(s: _State, _):
        tau = edges(w * s.vote) / jnp.sum(w)
        num, _, gram, valid = _terms(s.gamma, s.nu, gamma_h, nu_h, tau)
        valid &= jnp.asarray(reselect) | ~s.chosen
        score = num if gradient else num**2 / jnp.where(valid, gram, 1)
        k = first_argmax(jnp.where(valid, score, -jnp.inf), _TIES * jnp.finfo(y.dtype).eps)
        at = jnp.unravel_index(k, gamma_h.shape)
        # the winner's validity is recomputed, so that XLA never materializes ``valid``
        c = one_direction_step(s.gamma, s.nu, gamma_h[at], nu_h[at], tau[at])
        ok = c.valid & (jnp.asarray(reselect) | ~s.chosen[at]) & (c.decrease > tol)
        beta = jnp.where(ok, c.step, 0)
        vote = (s.vote + beta * column(k)) / (1 + beta)
        gamma, nu = _moments(vote, y, w)
        state = _State(vote, gamma, nu, s.scale * (1 + beta), s.chosen.at[at].max(ok))
        dec = jnp.where(ok, c.decrease, 0)
        return state, (jnp.where(ok, k, -1), beta * s.scale, cbound(gamma, nu), dec)

    _, rounds = lax.scan(body, init, length=n_rounds - 1)
    firsts = (first, 1, cbound(init.gamma, init.nu), 0)
    sel, alpha, cbs, dec = (jnp.concatenate([jnp.asarray(a, b.dtype)[None], b])
                            for a, b in zip(firsts, rounds))  # fmt: skip
    return Rounds(sel, alpha, cbs, dec, cbs[0] - jnp.cumsum(dec))
