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

The weak learners are the voters of ``H`` and their complements (``[H, -H]``, never
materialized), or every decision stump of a search and its complement (matrix-free), as for
AdaBoost (:mod:`pacbound._src.solvers.adaboost`, whose rounds,
:func:`pacbound._src.learning.boosting.boosting_scan`, VEB-Boost shares: this module gives them
its example weights, step and cost, :data:`VEBBOOST`, for
:func:`pacbound._src.learning.boosting.run_boosting`). With every complement
offered, the best learner has ``U_I >= U_J`` (its ``u``-weighted edge ``U_I - U_J`` is the
largest of ``+G`` and ``-G``), so Fig. 1's break only ends boosting through rounding; a learner
with no edge gets ``alpha = 0``. Rounds after the end are no-ops, so every prefix of the rounds
is a run of fewer rounds (:func:`truncate_vebboost`).
"""

from __future__ import annotations

import functools
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
from pacbound._src.validation import check_scalar

__all__ = ["VEBBoostInfo", "truncate_vebboost", "veb_cost", "vebboost"]


class VEBBoostInfo(NamedTuple):
    """VEB-Boost's rounds (``LearnerResult.info``); per-round arrays have ``n_rounds`` entries.

    Attributes:
      selected: ``(T,)`` int32 voter of each round, its index into ``[H, -H]`` (matrix-free:
        into ``[S, -S]`` of every stump of the search;
        :func:`pacbound._src.learning.candidates.complemented_index`), ``-1`` after boosting ended.
      alphas: ``(T,)`` the rounds' ``alpha_s`` (0 after boosting ended).
      costs: ``(T + 1,)`` ``J(f)`` before the first round and after each one
        (non-increasing, Theorem 2).
      errors: ``(T,)`` the ``u``-weighted error ``U_J / (U_I + U_J)`` of each round's learner,
        NaN where no vote (0: a perfect learner, which ends boosting).
      n_candidates: matrix-free: the search's candidate count; ``None`` for ``H``.
      slots: matrix-free: ``(T,)``, where each round's ``alpha`` lies in ``q``; ``None`` for
        ``H`` (both: :class:`pacbound._src.learning.boosting.MatrixFreeSlots`).
    """

    selected: jax.Array
    alphas: jax.Array
    costs: jax.Array
    errors: jax.Array
    n_candidates: jax.Array | None = None
    slots: jax.Array | None = None


def veb_cost(
    y: ArrayLike, f: ArrayLike, lam: ArrayLike, sample_weight: ArrayLike | None = None
) -> jax.Array:
    """shivaswamy §2, first display: ``S^2 + lambda (m sum_i e^{-2 y_i f_i} - S^2)`` with
    ``S = sum_i e^{-y_i f_i}`` (``f`` the unnormalized vote ``sum_s alpha_s G^s``).

    With example weights ``v``: ``S = sum_i v_i e^{-y_i f_i}``, ``m = sum_i v_i`` and
    ``sum_i v_i e^{-2 y_i f_i}`` (integer weights: the cost of the repeated sample).

    Example:
      >>> import jax.numpy as jnp
      >>> y = jnp.array([1., -1.])
      >>> float(veb_cost(y, jnp.zeros(2), 0.0))  # S = 2 at f = 0: S^2 = 4
      4.0
      >>> float(veb_cost(y, jnp.zeros(2), 1.0))  # + lam (m sum e^0 - S^2) = 4 + (4 - 4)
      4.0
    """
    e = jnp.exp(-jnp.asarray(y) * jnp.asarray(f))
    v = jnp.ones_like(e) if sample_weight is None else jnp.asarray(sample_weight, e.dtype)
    total = v @ e
    return total**2 + lam * (jnp.sum(v) * (v @ e**2) - total**2)


def _veb_rule(right, wrong):
    """Lemma 1's ``alpha = ln(U_I / U_J) / 4``; no vote and stop if ``alpha < 0``."""
    floor = jnp.finfo(right.dtype).tiny
    alpha = 0.25 * (jnp.log(right) - jnp.log(jnp.maximum(wrong, floor)))
    return alpha, alpha >= 0, (alpha < 0) | (wrong <= 0)


def _rounds(candidates, y, v, n_rounds, lam):
    """Fig. 1 on the sample where example ``i`` stands ``v_i`` times (``v = sample_weight``):
    with ``w_i`` the mass of its copies and ``m = sum v``, ``u_i = lambda m w_i^2 / v_i +
    (1 - lambda) w_i`` (0 where ``v_i = 0``); ``v = 1`` is the figure's rule."""
    lam = jnp.asarray(lam, y.dtype)
    present, total = v > 0, jnp.sum(v)

    def example_weights(w):
        per_copy = jnp.where(present, w**2 / jnp.where(present, v, 1), 0)
        return lam * total * per_copy + (1 - lam) * w

    record = functools.partial(veb_cost, y, lam=lam, sample_weight=v)
    w0 = initial_distribution(v, y)
    scan = boosting_scan(candidates, y, n_rounds, example_weights, _veb_rule, record, w0)
    selected, alphas, errors, costs = scan
    return selected, alphas, costs, errors


def _ended(info: VEBBoostInfo) -> jax.Array:
    """Boosting ends at Fig. 1's ``break`` (no vote) or at a learner with no ``u``-weighted
    error."""
    return (info.selected < 0) | (info.errors <= 0)


VEBBOOST = BoostingRule(_rounds, VEBBoostInfo, _ended, ("costs",), (("errors", jnp.nan),), True)
"""VEB-Boost's rule for :func:`pacbound._src.learning.boosting.run_boosting`: binary votes, the
objective the cost ``J(f)`` (held after the end), errors NaN after it; its hyperparameter
``lam``."""


def truncate_vebboost(result: LearnerResult, rounds: ArrayLike) -> LearnerResult:
    """:func:`vebboost`'s declared ``truncate``: the run of its first ``rounds`` rounds (traced),
    ``objective`` the cost ``info.costs[rounds]``
    (:func:`pacbound._src.learning.boosting.truncate_rounds`).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = vebboost(H, y, 0.1, 3)
      >>> [int(truncate_vebboost(r, t).steps) for t in (1, 2, 3)]  # each a run of t rounds
      [1, 2, 3]
    """
    return truncate_rounds(VEBBOOST, result, rounds)


@learner(prefix="n_rounds", truncate=truncate_vebboost)
def vebboost(
    voters: Any,
    y: ArrayLike,
    lam: ArrayLike,
    n_rounds: int,
    *,
    sample_weight: ArrayLike | None = None,
) -> LearnerResult:
    """VEB-Boost (shivaswamy Fig. 1) over the voters of ``H`` and their complements, one
    ``lax.scan``.

    Each round's weak learner is the voter of ``[H, -H]`` (never materialized) with the largest
    ``u``-weighted edge, the lowest index on ties. ``lam`` and ``sample_weight`` are traced:
    ``jax.vmap(vebboost, (None, None, 0, None))`` sweeps ``lam`` (and a vmap over 0/1 fold
    masks the folds) with one compilation. ``lam = 0`` is AdaBoost with half its step
    (Theorem 3).

    Args:
      voters: the votes ``H`` ``(m, n)`` as the user has them, or any
        :class:`~pacbound.voters.Voters` family, searched matrix-free (``q`` is then over the
        selected ``result.voters``; the protocol page).
      y: labels in ``{-1, +1}``, ``(m,)``.
      lam: the variance weight ``lambda`` in ``[0, 1]``.
      n_rounds: the number of rounds ``S`` (static).
      sample_weight: ``(m,)`` example weights ``>= 0``: example ``i`` counts ``v_i`` times (the
        cost and Fig. 1 on the repeated sample, see :func:`veb_cost`; only their ratios
        matter); a zero weight drops the example (the same rounds as slicing ``H`` and
        ``y``). ``None``: all 1.

    Returns:
      :class:`pacbound.solvers.LearnerResult`: ``q`` over ``[H, -H]`` proportional
      to the rounds' ``alpha`` (uniform if no round voted); ``objective`` the final cost
      ``J(f)``; ``steps`` the rounds that voted; ``converged`` whether boosting ended before
      ``S`` rounds as Fig. 1 prescribes (its ``break``, ``alpha < 0``, or a learner with no
      ``u``-weighted error); ``info`` a :class:`VEBBoostInfo`. Declares ``prefix="n_rounds"``:
      every prefix is :func:`truncate_vebboost`.

    Raises:
      ValueError: for malformed ``H`` / ``y`` / ``sample_weight``, non-binary votes or labels,
        a single class, ``lam`` outside ``[0, 1]`` (when not traced) or ``n_rounds < 1``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = vebboost(H, y, 0.1, 3)
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.q.sum()), 4), int(r.steps)
      (0.0, 1.0, 3)
    """
    check_scalar("lam", lam, 0.0, 1.0)  # Theorem 2's range
    return run_boosting(VEBBOOST, voters, y, n_rounds, sample_weight, lam)
