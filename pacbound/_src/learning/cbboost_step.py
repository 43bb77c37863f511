"""CB-Boost's round: Theorem 3's closed form in every direction and Algorithm 1's scan.

bauvin2020 §3. With weights ``alpha >= 0``, the vote ``F = sum_s alpha_s h_s`` and the weighted
empirical means ``gamma(f) = E[y f]``, ``nu(f) = E[f^2]``, ``tau(f, g) = E[f g]``
(Definitions 8-10), the C-bound along one direction is ``C(alpha) = 1 - (gamma(F) +
alpha gamma(h))^2 / (nu(F) + 2 alpha tau(F, h) + alpha^2 nu(h))``. Theorem 3 minimizes it in
closed form (:func:`one_direction_step`, with a general ``nu(h)``; ``nu(h) = 1`` for ±1
voters) and Property 1 gives the exact decrease. :func:`boost_rounds` is Algorithm 1 over any
:class:`pacbound._src.learning.candidates.Candidates`: ``gamma(h)`` and ``nu(h)`` are fixed, only
``+h`` or ``-h`` (the sign of positive margin) can ever qualify, and a round needs only
``tau(F, h)`` for every candidate (one edge computation) and the votes of the winner.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.cbound import cbound
from pacbound._src.learning.boosting import best_signed, tie_rtol
from pacbound._src.learning.candidates import Candidates, complemented_index, split_index

__all__ = ["DirectionStep", "Rounds", "boost_rounds", "one_direction_step"]


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

    Example:
      >>> s = one_direction_step(0.5, 1.0, 0.5, 1.0, 0.0)  # F, h: margin 1/2, uncorrelated
      >>> round(float(s.step), 4), round(float(s.cbound), 4), bool(s.valid)  # C-bound 3/4 -> 1/2
      (1.0, 0.5, True)
    """
    num, den, gram, valid = _terms(gamma_f, nu_f, gamma_h, nu_h, tau)
    step = jnp.where(valid, num / jnp.where(valid, den, 1), 0)
    mu2 = nu_f + step * (2 * tau + step * nu_h)
    cb = jnp.where(valid, 1 - (gamma_f + step * gamma_h) ** 2 / jnp.where(valid, mu2, 1), jnp.inf)
    decrease = jnp.where(valid, num**2 / jnp.where(valid, nu_f * gram, 1), 0)
    return DirectionStep(step, cb, decrease, valid)


class _State(NamedTuple):
    vote: jax.Array  # (m,) normalized vote F / sum(alpha)
    gamma: jax.Array  # gamma(F)
    nu: jax.Array  # nu(F)
    scale: jax.Array  # sum(alpha), the paper's normalization
    chosen: jax.Array  # candidates with a weight, shaped like gamma(h)


class Rounds(NamedTuple):
    """Per-round arrays of :func:`boost_rounds` (round 0: the initial voter)."""

    selected: jax.Array  # index into [H, -H] (complemented_index), -1 for an idle round
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array


def _moments(vote, y, w) -> tuple[jax.Array, jax.Array]:
    return jnp.sum(w * y * vote) / jnp.sum(w), jnp.sum(w * vote**2) / jnp.sum(w)


def _signed_candidates(candidates: Candidates, y, w):
    """``(gamma(h), nu(h), negative)`` of the qualifying sign of every base voter: ``-h`` where
    ``h``'s margin is negative (Theorem 3 needs ``gamma(h) > 0``); ``gamma`` is NaN where a
    position is no candidate."""
    total = jnp.sum(w)
    margins = candidates.edges(w * y) / total
    gamma_h = jnp.where(candidates.valid, jnp.abs(margins), jnp.nan)
    return gamma_h, candidates.squares(w) / total, margins < 0


def boost_rounds(
    candidates: Candidates,
    y: jax.Array,
    w: jax.Array,
    n_rounds: int,
    reselect: ArrayLike,
    tol: ArrayLike,
    gradient: bool,
) -> Rounds:
    """Algorithm 1's ``lax.scan`` over the candidates and their complements.

    ``w`` are the (unnormalized) example weights. Candidates are ranked by Property 1's
    decrease (the same order as the C-bound after their step, only computed for the winner)
    or, for GB-CB-Boost, by Theorem 3's numerator; ties go to the lowest index of the
    self-complemented set (:func:`pacbound._src.learning.boosting.best_signed`). Round 0 is the
    best-margin voter; a round whose best decrease is ``<= tol`` is idle (``-1``).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = boost_rounds(dense_candidates(H, jnp.float32), y, jnp.ones(4), 3, True, 0.0, False)
      >>> r.selected.tolist(), [round(float(c), 4) for c in r.cbounds]
      ([0, 4, 5], [0.75, 0.5, 0.25])
    """
    gamma_h, nu_h, negative = _signed_candidates(candidates, y, w)
    sign = jnp.where(negative, -1, 1).astype(y.dtype)

    def qualifying(index):  # a base's qualifying sign: its index, its votes, its (row, col)
        base, _ = split_index(index, candidates.size)
        at = jnp.unravel_index(base, sign.shape)
        index = complemented_index(base, negative[at], candidates.size)
        return index, sign[at] * candidates.votes(base), at

    ties = tie_rtol(y.dtype)
    first, vote, at = qualifying(best_signed(sign * gamma_h, ties))  # best margin (NaN: none)
    chosen = jnp.zeros(gamma_h.shape, bool).at[at].set(True)
    init = _State(vote, *_moments(vote, y, w), jnp.ones((), y.dtype), chosen)
    tol = jnp.asarray(tol, y.dtype)

    def body(s: _State, _):
        tau = sign * candidates.edges(w * s.vote) / jnp.sum(w)
        num, _, gram, valid = _terms(s.gamma, s.nu, gamma_h, nu_h, tau)
        valid &= jnp.asarray(reselect) | ~s.chosen
        score = num if gradient else num**2 / jnp.where(valid, gram, 1)
        k, h, at = qualifying(best_signed(jnp.where(valid, sign * score, jnp.nan), ties))
        # the winner's validity is recomputed, so that XLA never materializes ``valid``
        c = one_direction_step(s.gamma, s.nu, gamma_h[at], nu_h[at], tau[at])
        ok = c.valid & (jnp.asarray(reselect) | ~s.chosen[at]) & (c.decrease > tol)
        beta = jnp.where(ok, c.step, 0)
        vote = (s.vote + beta * h) / (1 + beta)
        gamma, nu = _moments(vote, y, w)
        state = _State(vote, gamma, nu, s.scale * (1 + beta), s.chosen.at[at].max(ok))
        dec = jnp.where(ok, c.decrease, 0)
        return state, (jnp.where(ok, k, -1), beta * s.scale, cbound(gamma, nu), dec)

    _, rounds = lax.scan(body, init, length=n_rounds - 1)
    firsts = (first, 1, cbound(init.gamma, init.nu), 0)
    sel, alpha, cbs, dec = (jnp.concatenate([jnp.asarray(a, b.dtype)[None], b])
                            for a, b in zip(firsts, rounds))  # fmt: skip
    return Rounds(sel, alpha, cbs, dec, cbs[0] - jnp.cumsum(dec))
