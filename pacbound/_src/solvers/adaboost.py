"""Discrete AdaBoost over the voters of ``H`` and their complements, or over every decision stump.

Freund & Schapire's AdaBoost, the baseline of germain2009 §5 and shivaswamy (Table 1): with
example weights ``w`` (uniform at first, or proportional to ``sample_weight``), each round
picks the weak learner ``h_t`` with the largest edge ``sum_i w_i y_i h_t(x_i)`` (the least
weighted error ``eps_t``), gives it

.. math:: \\alpha_t = \\tfrac12 \\ln\\frac{1 - \\epsilon_t}{\\epsilon_t},

and reweights ``w_i <- w_i exp(-alpha_t y_i h_t(x_i)) / Z_t``. The vote is ``sum_t alpha_t
h_t``, i.e. the distribution ``q`` proportional to the ``alpha`` each voter got. scikit-learn's
``AdaBoostClassifier`` (SAMME, two classes) runs the same rounds with weights ``2 alpha_t``
(same ``q``, same example weights after normalization) and the same stopping rules, which
are followed here: a round with ``eps_t >= 1/2`` ends boosting without a vote, and a round
with ``eps_t = 0`` gets ``alpha_t = 1/2`` (SAMME's weight 1) and ends it. Rounds after the
end are no-ops (``selected = -1``, ``alpha = 0``), so ``n_rounds`` is the static length of
one ``lax.scan`` and every prefix of the rounds is a run of fewer rounds
(:func:`truncate_adaboost`).

The weak learners are the voters of ``H`` and their complements (``[H, -H]``, never
materialized; a depth-1 tree offers both signs too), or every decision stump with every
distinct threshold of every feature and both signs (:func:`pacbound._src.voters.stump_search`, the
thresholds of scikit-learn's trees), found in ``O(d m)`` per round without building ``H``
(:mod:`pacbound._src.learning.candidates`). The rounds are :func:`pacbound._src.learning.boosting.
boosting_scan`, shared with VEB-Boost (:mod:`pacbound._src.solvers.vebboost`); this module gives
their step, stopping rule and loss (:data:`ADABOOST`) to the boosting loop,
:func:`pacbound._src.learning.boosting.run_boosting`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.learning.boosting import (
    BoostingRule,
    boosting_scan,
    initial_distribution,
    run_boosting,
    truncate_rounds,
)
from pacbound._src.protocol import LearnerResult, learner

__all__ = ["AdaBoostInfo", "adaboost", "truncate_adaboost"]


class AdaBoostInfo(NamedTuple):
    """AdaBoost's rounds (``LearnerResult.info``); per-round arrays have ``n_rounds`` entries.

    Attributes:
      selected: ``(T,)`` int32 voter of each round, its index into ``[H, -H]`` (matrix-free:
        into ``[S, -S]`` of every stump of the search;
        :func:`pacbound._src.learning.candidates.complemented_index`), ``-1`` after boosting ended.
      alphas: ``(T,)`` ``alpha_t`` (scikit-learn's ``estimator_weights_`` are ``2 alpha_t``).
      errors: ``(T,)`` weighted error ``eps_t`` (``estimator_errors_``), NaN where no vote.
      losses: ``(T + 1,)`` exponential loss ``mean_i exp(-y_i f(x_i))`` (weighted by
        ``sample_weight``) before the first round and after each one (non-increasing: it is
        multiplied by ``Z_t <= 1``).
      n_candidates: matrix-free: the search's candidate count; ``None`` for ``H``.
      slots: matrix-free: ``(T,)``, where each round's ``alpha`` lies in ``q``; ``None`` for
        ``H`` (both: :class:`pacbound._src.learning.boosting.MatrixFreeSlots`).
    """

    selected: jax.Array
    alphas: jax.Array
    errors: jax.Array
    losses: jax.Array
    n_candidates: jax.Array | None = None
    slots: jax.Array | None = None


def _adaboost_rule(right, wrong):
    """``alpha = ln((1 - eps) / eps) / 2``; stop at ``eps >= 1/2`` (no vote) or ``eps = 0``."""
    eps = wrong / (right + wrong)
    perfect = eps <= 0
    alpha = jnp.where(perfect, 0.5, 0.5 * jnp.log(right / jnp.where(perfect, 1, wrong)))
    return alpha, eps < 0.5, perfect | (eps >= 0.5)


def _rounds(candidates, y, v, n_rounds):
    """AdaBoost's rounds from ``w0`` proportional to the weights ``v``; the loss is their mean
    ``sum_i w0_i exp(-y_i f(x_i))``."""
    w0 = initial_distribution(v, y)

    def exp_loss(f):
        return w0 @ jnp.exp(-y * f)

    return boosting_scan(candidates, y, n_rounds, lambda w: w, _adaboost_rule, exp_loss, w0)


def _ended(info: AdaBoostInfo) -> jax.Array:
    """Boosting ends at a round with no better-than-chance learner (no vote) or a perfect one."""
    return (info.selected < 0) | (info.errors <= 0)


ADABOOST = BoostingRule(_rounds, AdaBoostInfo, _ended, ("losses",), (("errors", jnp.nan),), True)
"""AdaBoost's rule for :func:`pacbound._src.learning.boosting.run_boosting`: binary votes, the
objective the exponential loss (held after the end), errors NaN after it."""


def truncate_adaboost(result: LearnerResult, rounds: ArrayLike) -> LearnerResult:
    """:func:`adaboost`'s declared ``truncate``: the run of its first ``rounds`` rounds (traced),
    ``objective`` the exponential loss ``info.losses[rounds]``
    (:func:`pacbound._src.learning.boosting.truncate_rounds`).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> one = truncate_adaboost(adaboost(H, y, 3), 1)  # as adaboost(H, y, 1)
      >>> float(jnp.mean(jnp.sign(H @ one.weights) != y)), int(one.steps)
      (0.25, 1)
    """
    return truncate_rounds(ADABOOST, result, rounds)


@learner(prefix="n_rounds", truncate=truncate_adaboost)
def adaboost(
    voters: Any, y: ArrayLike, n_rounds: int, *, sample_weight: ArrayLike | None = None
) -> LearnerResult:
    """Discrete AdaBoost over the voters of ``H`` and their complements (one ``lax.scan``).

    Equal, round by round, to scikit-learn's ``AdaBoostClassifier(algorithm="SAMME")``
    whose weak learner returns the least-weighted-error column of ``[H, -H]`` (the lowest
    index on ties; see the module docstring), ``sample_weight`` included.

    Args:
      voters: the votes ``H`` ``(m, n)`` as the user has them, or any
        :class:`~pacbound.voters.Voters` family, searched matrix-free (``q`` is then over the
        selected ``result.voters``; the protocol page).
      y: labels in ``{-1, +1}``, ``(m,)``.
      n_rounds: the number of rounds ``T`` (static).
      sample_weight: ``(m,)`` example weights ``>= 0`` (traced: ``jax.vmap`` over 0/1 fold
        masks compiles once). The first round's distribution is proportional to them (as
        scikit-learn's); a zero weight drops the example (the same rounds as slicing ``H``
        and ``y``), integer weights repeat examples. ``None``: uniform.

    Returns:
      :class:`pacbound.solvers.LearnerResult`: ``q`` over ``[H, -H]`` proportional
      to the rounds' ``alpha`` (uniform if no round voted); ``objective`` the final
      exponential loss (a weighted mean); ``steps`` the rounds that voted; ``converged``
      whether boosting ended before ``T`` rounds as AdaBoost prescribes (a learner with
      ``eps >= 1/2``, or a perfect one); ``info`` an :class:`AdaBoostInfo`. Declares
      ``prefix="n_rounds"``: every prefix is :func:`truncate_adaboost`.

    Raises:
      ValueError: for malformed ``H`` / ``y`` / ``sample_weight``, non-binary votes or labels,
        a single class, ``n_rounds < 1``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])  # each voter errs once; a vote is perfect
      >>> r = adaboost(H, y, 3)
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.q.sum()), 4), int(r.steps)
      (0.0, 1.0, 3)
    """
    return run_boosting(ADABOOST, voters, y, n_rounds, sample_weight)
