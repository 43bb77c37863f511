"""CB-Boost and GB-CB-Boost: greedy C-bound minimization (bauvin2020 Algorithm 1, §3.2).

CB-Boost starts from the best-margin voter and adds, each round, the direction whose
Theorem 3 step lowers the C-bound most (Property 1 is the exact decrease, Corollary 2 bounds
the training error); GB-CB-Boost takes the steepest direction instead. The closed form and the
round's scan are in :mod:`pacbound._src.learning.cbboost_step`; the candidates are every voter and
its complement (:mod:`pacbound._src.learning.candidates`, never materialized):

* the columns of ``H`` (:func:`cbboost`, :func:`gbcbboost`): a round is one product
  ``H^T (w F)``, one read of ``H`` (:mod:`pacbound._src.learning.edges`: int8 votes by an exact
  int8 GEMM);
* every decision stump of a search (:func:`cbboost`, :func:`gbcbboost`): a round
  is one gather and one blocked prefix sum over the ``d m`` sorted feature values.

``gamma(h)`` and ``nu(h)`` are computed once. ``F`` is the current vote and a re-selected voter
gets ``alpha`` added to its weight, so Property 1 is the exact decrease of every round. The vote
is carried normalized (the margin of ``q``); the paper's unnormalized ``alpha``
(``alpha_{I_1} = 1``) are recorded. Round 0 is the initial voter; a round in which no direction
decreases the bound by more than ``tol`` records ``selected = -1`` and no change (and so do all
later rounds: nothing changed), so every prefix of the rounds is a run of fewer rounds
(:func:`truncate_cbboost`, the learners' declared ``truncate``).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
from jax.typing import ArrayLike

from pacbound._src.learning.boosting import BoostingRule, run_boosting, truncate_rounds
from pacbound._src.learning.cbboost_step import DirectionStep, boost_rounds, one_direction_step
from pacbound._src.protocol import LearnerResult, learner, variant
from pacbound._src.validation import check_scalar

__all__ = [
    "CBBoostInfo",
    "DirectionStep",
    "cbboost",
    "gbcbboost",
    "one_direction_step",
    "truncate_cbboost",
    "weights_after",
]


class CBBoostInfo(NamedTuple):
    """CB-Boost's rounds (``LearnerResult.info``); per-round arrays have ``n_rounds`` entries.

    Attributes:
      selected: ``(T,)`` int32 voter added each round, its index into ``[H, -H]`` (matrix-free:
        into ``[S, -S]`` of every stump of the search; :func:`pacbound._src.learning.candidates.
        complemented_index`); round 0 is the best-margin voter, ``-1`` an idle round (no
        direction decreased the bound by more than ``tol``).
      alphas: ``(T,)`` weight added each round, unnormalized as in the paper (round 0: 1).
      cbounds: ``(T,)`` empirical C-bound of the vote after each round.
      decreases: ``(T,)`` Property 1's ``S_t`` of each round (0 for round 0 and idle rounds).
      error_bounds: ``(T,)`` Corollary 2's training-error bound ``cbounds[0] - sum S``.
      n_candidates: matrix-free: the search's candidate count; ``None`` for ``H``.
      slots: matrix-free: ``(T,)``, where each round's ``alpha`` lies in ``q``; ``None`` for
        ``H`` (both: :class:`pacbound._src.learning.boosting.MatrixFreeSlots`).
    """

    selected: jax.Array
    alphas: jax.Array
    cbounds: jax.Array
    decreases: jax.Array
    error_bounds: jax.Array
    n_candidates: jax.Array | None = None
    slots: jax.Array | None = None


def _ended(info: CBBoostInfo) -> jax.Array:
    """Algorithm 1 has converged at an idle round: no direction decreased the C-bound."""
    return info.selected < 0


def _rule(gradient: bool) -> BoostingRule:
    """CB-Boost's rule (GB-CB-Boost's, ``gradient``) for
    :func:`pacbound._src.learning.boosting.run_boosting`: the rounds of
    :func:`pacbound._src.learning.cbboost_step.boost_rounds` (hyperparameters ``allow_reselect``
    and ``tol``), the objective the C-bound, held with Corollary 2's bound after the end."""
    rounds = functools.partial(boost_rounds, gradient=gradient)
    return BoostingRule(rounds, CBBoostInfo, _ended, ("cbounds", "error_bounds"),
                        (("decreases", 0.0),))  # fmt: skip


CBBOOST, GBCBBOOST = _rule(False), _rule(True)


def truncate_cbboost(result: LearnerResult, rounds: ArrayLike) -> LearnerResult:
    """A CB-Boost / GB-CB-Boost result after its first ``rounds`` rounds (traced, clipped to
    ``[1, T]``; round 0, the initial voter, included): what a run of ``rounds`` rounds returns.

    ``q`` / ``weights`` are those of the prefix's vote, ``objective`` its C-bound
    (``info.cbounds[rounds - 1]``: the C-bound only sees the normalized vote), ``steps`` and
    ``converged`` its own; in ``info`` the later rounds read as idle rounds (the arrays keep
    their length ``T``, and a matrix-free result its ``T`` stump slots). For one result
    (``jax.vmap`` it over folds or over ``rounds``). The declared ``truncate`` of the four
    CB-Boost learners (``traits(cbboost).truncate``).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = cbboost(H, y, 3)
      >>> [round(float(truncate_cbboost(r, t).objective), 4) for t in (1, 2, 3)]
      [0.75, 0.5, 0.25]
    """
    return truncate_rounds(CBBOOST, result, rounds)  # GB-CB-Boost's prefix is the same


def weights_after(result: LearnerResult, rounds: ArrayLike) -> jax.Array:
    """``truncate_cbboost(result, rounds).q``: the posterior after the first ``rounds``
    rounds.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = cbboost(H, y, 3)
      >>> q = weights_after(r, 1)
      >>> [round(float(v), 3) for v in q], bool(jnp.allclose(q, truncate_cbboost(r, 1).q))
      ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], True)
    """
    return truncate_cbboost(result, rounds).q


@learner(prefix="n_rounds", truncate=truncate_cbboost)
def cbboost(
    voters: Any,
    y: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
    allow_reselect: ArrayLike = True,
    tol: ArrayLike = 0.0,
    steepest: bool = False,
) -> LearnerResult:
    """CB-Boost (bauvin2020 Algorithm 1) over the voters of ``H`` and their complements.

    Starts from the best-margin voter of ``[H, -H]``, then each round solves Theorem 3 in
    every direction (one product ``H^T (w F)``: only ``+h`` or ``-h``, the one of positive
    margin, qualifies) and adds the direction with the lowest C-bound, Property 1's largest
    decrease ``S``; ties go to the lowest index of ``[H, -H]``. The C-bound never increases;
    ``info.decreases`` follow Property 1 and ``info.error_bounds`` Corollary 2. Traceable:
    ``jax.vmap(cbboost, in_axes=(0, 0, None))`` runs stacked problems, and a vmap over
    ``sample_weight`` (0/1 masks) runs folds of one ``H`` with one compilation.

    Args:
      voters: the votes ``H`` ``(m, n)`` as the user has them, or any
        :class:`~pacbound.voters.Voters` family, searched matrix-free (``q`` is then over the
        selected ``result.voters``; the protocol page).
      y: labels in ``{-1, +1}``, ``(m,)``; the computation runs in their float dtype (or
        ``H``'s, if wider and floating).
      n_rounds: rounds ``T`` including the initial voter (static; the scan's length).
      sample_weight: ``(m,)`` non-negative example weights (all means are weighted).
      allow_reselect: whether a voter already in the vote may be chosen again (traced).
      tol: the stopping tolerance on Property 1's decrease of the C-bound: a round whose best
        decrease is ``<= tol`` is idle (changes nothing), and so are all later ones (traced).
      steepest: GB-CB-Boost (bauvin2020 §3.2, :data:`gbcbboost`): each round takes the
        steepest direction ``argmax_k -dC/dalpha_k`` instead of the largest decrease (static).

    Returns:
      :class:`pacbound.solvers.LearnerResult`: ``q`` over ``[H, -H]`` proportional
      to the rounds' ``alpha``; ``objective`` the final empirical C-bound; ``steps`` the rounds
      that voted (round 0 included); ``converged`` whether a round was idle (no direction
      decreased the C-bound by more than ``tol``: Algorithm 1 had converged before ``T``);
      ``info`` a :class:`CBBoostInfo`. Declares ``prefix="n_rounds"``: every prefix is
      :func:`truncate_cbboost`.

    Raises:
      ValueError: for a malformed ``H``/``y``/``sample_weight``, labels other than ±1 (or a
        single class), NaN votes, a negative ``tol``, or ``n_rounds < 1``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = cbboost(H, y, 3)  # objective: the C-bound of the vote
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.objective), 4), int(r.steps)
      (0.0, 0.25, 3)
    """
    check_scalar("tol", tol, 0.0)
    rule = GBCBBOOST if steepest else CBBOOST
    return run_boosting(rule, voters, y, n_rounds, sample_weight, allow_reselect, tol)


gbcbboost = variant(
    cbboost,
    "gbcbboost",
    steepest=True,
    doc="""GB-CB-Boost (bauvin2020 §3.2): :func:`cbboost` with ``steepest=True``.

    Each round takes the steepest coordinate ``argmax_k -dC/dalpha_k`` among the directions
    where Theorem 3 applies, then Theorem 3's step; the arguments, result and stopping rule of
    :func:`cbboost`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> r = gbcbboost(H, jnp.array([1., 1., -1., -1.]), 3)
      >>> round(float(r.objective), 4), int(r.steps)
      (0.25, 3)
    """,
)

__test__ = {"gbcbboost": gbcbboost.__doc__}  # a partial: doctest finds its example here
