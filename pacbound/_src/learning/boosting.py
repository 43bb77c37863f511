"""The boosting loop: one entry, :func:`run_boosting`, that every boosting learner calls once.

AdaBoost, VEB-Boost and CB-Boost each round choose one voter among base voters and their
complements (:mod:`pacbound._src.learning.candidates`: the columns of ``H``, or every stump of a
search) and give it a weight ``alpha_t >= 0``; the vote after ``t`` rounds is ``sum_{s < t}
alpha_s h_s``. A learner supplies only its own part, a :class:`BoostingRule` (its rounds, with
their step, stopping rule and loss; its info class; what a prefix of its rounds holds), and
:func:`run_boosting` does the rest:

* the boundary: the data's checks (:func:`pacbound._src.learning.candidates.checked_data`) and
  ``H`` prepared once (:func:`pacbound._src.learning.edges.prepare_votes`), then one compiled
  call;
* the candidates (:func:`pacbound._src.learning.candidates.candidates_of`), handed to the rule's
  rounds: the discrete rounds of :func:`boosting_scan` (AdaBoost, VEB-Boost Fig. 1; their weak
  learner :func:`best_voter`, ties by :func:`best_signed`) or CB-Boost's
  (:func:`pacbound._src.learning.cbboost_step.boost_rounds`);
* the result (:func:`rounds_result`: ``q`` proportional to the ``alpha`` each voter got, a
  distribution over ``[H, -H]``, or over ``[S, -S]`` for the matrix-free rounds' stump slots,
  :func:`matrix_free_slots`) of the first ``rounds`` rounds (:func:`after_rounds`), which is also
  every learner's declared ``truncate`` (:func:`truncate_rounds`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.learning.candidates import (
    Candidates,
    candidates_of,
    checked_data,
    complemented_index,
    posterior_over_columns,
    split_index,
    stump_posterior,
)
from pacbound._src.learning.edges import prepare_votes
from pacbound._src.protocol import LearnerResult, learner_status
from pacbound._src.validation import check_positive_int
from pacbound._src.voters.protocol import is_voters

__all__ = [
    "BoostingRule",
    "MatrixFreeSlots",
    "after_rounds",
    "best_signed",
    "best_voter",
    "boosting_scan",
    "held_after",
    "initial_distribution",
    "kept_rounds",
    "matrix_free_slots",
    "prefix_info",
    "rounds_result",
    "run_boosting",
    "tie_rtol",
    "truncate_rounds",
]

_TIES = 256  # scores within _TIES * eps (relative) of the best are ties: lowest index wins

# A weak learner maps signed example weights a = u * y to (index into [H, -H], votes (m,))
# maximizing the edge sum_i a_i h_i; a rule maps the weights of the examples it gets right and
# wrong to (alpha, vote: whether this round votes, stop: whether boosting ends after it).
Learner = Callable[[jax.Array], tuple[jax.Array, jax.Array]]
Rule = Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array, jax.Array]]


class BoostingRule(NamedTuple):
    """A boosting learner's own part, for :func:`run_boosting` (hashable: ``jit`` compiles once
    per rule).

    Attributes:
      rounds: ``rounds(candidates, y, v, n_rounds, *hyper)`` -> the per-round arrays in the order
        of ``info``'s fields, ``selected`` first (the rounds' step, stopping rule and loss);
        ``v`` are the example weights (all 1 without ``sample_weight``), ``hyper`` the learner's
        traced hyperparameters.
      info: the learner's info class, built as ``info(*rounds, n_candidates, slots)``
        (:class:`MatrixFreeSlots`).
      ended: ``ended(info)`` ``(T,)``: the rounds at which the algorithm had stopped (a prefix
        that holds one has ``converged``).
      held: the fields a prefix holds at its last round's value (:func:`held_after`; a field of
        ``T + 1`` entries starts with the value before the first round); the first is the
        objective.
      cleared: ``(field, fill)``: the fields whose later rounds read as ``fill`` in a prefix.
      binary: whether the votes of ``H`` must be ``-1`` / ``+1``.
    """

    rounds: Callable[..., tuple]
    info: Callable[..., Any]
    ended: Callable[[Any], jax.Array]
    held: tuple[str, ...]
    cleared: tuple[tuple[str, float], ...] = ()
    binary: bool = False


def _first_index(mask: jax.Array) -> jax.Array:
    """First ``True`` of a 1-D mask (its length if none), by one plain ``min`` reduction."""
    return jnp.min(jnp.where(mask, jnp.arange(mask.shape[0]), mask.shape[0])).astype(jnp.int32)


def best_signed(signed: jax.Array, rtol: float = 0.0) -> jax.Array:
    """The self-complemented index of the best candidate (int32, :func:`complemented_index`).

    ``signed`` ``(rows, cols)`` offers one sign of each base voter with a score: a value ``s
    >= 0`` offers ``+h`` with score ``s``, a value ``-s < 0`` its complement ``-h`` with score
    ``s``; NaN offers nothing. The winner is the first candidate within ``rtol`` (relative)
    of the best score in the order of ``[H, -H]``: every ``+h`` (row-major) before every
    ``-h``, as an argmax over the materialized self-complemented set would pick. Scores that
    tie in exact arithmetic round differently along different summation orders; ``rtol``
    sends them to the lowest index (:func:`tie_rtol`).

    One pass over ``signed`` (the rows' best scores), then one row: the first row holding a
    near candidate, and further near rows only while their near candidates are all ``-h``
    (ties across rows, rare). XLA:CPU's variadic ``argmax`` reduction is several times slower,
    and so is a second full pass for every row's best ``+h``.

    Example:
      >>> import jax.numpy as jnp
      >>> int(best_signed(jnp.array([[0.5, -0.9, 0.2]])))  # -h_1 wins: index n + 1 = 4
      4
      >>> int(best_signed(jnp.array([[0.5, -0.5, 0.5]])))  # a tie: the first +h
      0
    """
    rows, cols = signed.shape
    row_best = jnp.max(jnp.where(jnp.isnan(signed), -jnp.inf, jnp.abs(signed)), axis=1)
    best = row_best[jnp.argmax(row_best)]
    threshold = best - rtol * jnp.abs(best) if rtol else best
    near_rows = row_best >= threshold

    def first_near(row, negative):  # the first column of ``row`` offering a near ``-h`` / ``+h``
        offered = lax.dynamic_index_in_dim(signed, row, keepdims=False)
        return _first_index(jnp.where(negative, -offered, offered) >= threshold)  # NaN: never

    def not_found(state):
        row, col = state
        return (row < rows) & (col >= cols)

    def next_row(state):  # the near rows in order, until one offers a near +h
        row, _ = state
        col = first_near(row, False)
        return jnp.where(col < cols, row, _first_index(near_rows & (jnp.arange(rows) > row))), col

    first_row = jnp.minimum(_first_index(near_rows), rows - 1)
    row, col = lax.while_loop(not_found, next_row, (first_row, jnp.int32(cols)))
    take_minus = col >= cols  # no +h is near: the first -h, in the first near row
    row = jnp.where(take_minus, first_row, row)
    col = jnp.minimum(jnp.where(take_minus, first_near(first_row, True), col), cols - 1)
    return complemented_index(row * cols + col, take_minus, rows * cols)


def tie_rtol(dtype) -> float:
    """The relative tolerance under which two scores are a tie: ``256 eps`` of ``dtype``.

    Scores equal in exact arithmetic (duplicate voters; stumps that differ only on examples of
    weight 0, as in every cross-validation fold) round differently along different summation
    orders, and differently again in a ``jax.vmap``; within this tolerance they go to the
    lowest index, so that the choice does not depend on rounding.

    Example:
      >>> import jax.numpy as jnp
      >>> tie_rtol(jnp.float32) == 256 * float(jnp.finfo(jnp.float32).eps)
      True
    """
    return _TIES * float(jnp.finfo(dtype).eps)


def best_voter(candidates: Candidates, dtype) -> Learner:
    """The weak learner of discrete boosting: the voter of ``[H, -H]`` (or ``[S, -S]``) with
    the largest edge ``sum_i a_i h(x_i)`` (ties, to :func:`tie_rtol`: the lowest index,
    :func:`best_signed`), and its votes in ``dtype``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> learn = best_voter(dense_candidates(H, jnp.float32), jnp.float32)
      >>> index, votes = learn(jnp.array([0.25, 0.25, 0.25, -0.25]))  # a = u * y
      >>> int(index), votes.tolist()  # every edge H^T a is 0: a tie, the first +h
      (0, [1.0, 1.0, -1.0, 1.0])
    """

    def learn(a):
        edges = jnp.where(candidates.valid, candidates.edges(a), jnp.nan)
        index = best_signed(edges, tie_rtol(dtype))
        base, sign = split_index(index, candidates.size)
        return index, sign.astype(dtype) * candidates.votes(base)

    return learn


def initial_distribution(sample_weight, y):
    """The example weights ``sample_weight / sum(sample_weight)`` (uniform when ``None``).

    Example:
      >>> import jax.numpy as jnp
      >>> y = jnp.array([1., -1., 1., -1.])
      >>> w = jnp.array([1., 1., 2., 0.])
      >>> initial_distribution(None, y).tolist(), initial_distribution(w, y).tolist()
      ([0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.5, 0.0])
    """
    v = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    return v / jnp.sum(v)


def boosting_scan(
    candidates: Candidates, y, n_rounds, example_weights, rule: Rule, record, w0
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The rounds of discrete boosting as one ``lax.scan`` (AdaBoost, VEB-Boost Fig. 1).

    ``w`` starts at the distribution ``w0`` (:func:`initial_distribution`). Each round:
    ``u = example_weights(w)``, ``(k, h)`` the candidate of largest edge under ``u * y``
    (:func:`best_voter`), ``(alpha, vote,
    stop) = rule(sum_{y h > 0} u, sum_{y h <= 0} u)``, then ``f += alpha h`` and ``w <- w
    exp(-alpha y h) / Z``. Once a rule stops, later rounds are masked no-ops.

    Returns:
      ``(selected, alphas, errors, records)``: per round, the index (``-1`` when no vote),
      ``alpha`` (0 when no vote), ``sum_wrong u / sum u`` (NaN when no vote) and
      ``record(f)`` after the round, with ``record(0)`` prepended (``T + 1`` entries).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> rule = lambda right, wrong: (0.5 * jnp.log(right / wrong), wrong < right, wrong <= 0)
      >>> from pacbound._src.learning.candidates import dense_candidates
      >>> candidates = dense_candidates(H, jnp.float32)
      >>> sel, alphas, errors, f = boosting_scan(
      ...     candidates, y, 3, lambda w: w, rule, lambda f: f, jnp.full(4, 0.25))
      >>> sel.tolist(), [round(float(e), 4) for e in errors], bool(jnp.all(jnp.sign(f[-1]) == y))
      ([0, 4, 5], [0.25, 0.1667, 0.1], True)
    """
    learner = best_voter(candidates, y.dtype)

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


class MatrixFreeSlots(NamedTuple):
    """What a matrix-free boosting result adds to its rounds (all ``None`` for ``H``).

    Attributes:
      voters: the family's voters (e.g. :class:`pacbound.voters.Stumps`) of the ``T`` slots (slot
      ``t``: round ``t``'s
        stump; an idle round's slot holds stump 0 with no mass).
      slots: ``(T,)`` int32, where round ``t``'s ``alpha`` lies in ``q``: the index into
        ``[S, -S]`` of the slots (``T + s`` for a complement), the first slot of a stump
        chosen in several rounds (:func:`pacbound._src.learning.candidates.stump_posterior`), ``-1``
        for an idle round.
      n_candidates: the number of candidate stumps, ``jnp.sum(search.candidate_mask())``.
    """

    voters: Any = None
    slots: Any = None
    n_candidates: Any = None


def matrix_free_slots(voters: Any, selected: jax.Array) -> MatrixFreeSlots:
    """:class:`MatrixFreeSlots` of rounds over a stump search (``selected``: their indices
    into ``[S, -S]`` of all its stumps); empty for a dense ``H``.

    The slot of each round is where :func:`pacbound._src.learning.candidates.stump_posterior` puts
    a unit mass on that round alone (one ``jax.vmap`` over the ``T`` unit masses, ``O(T^2)``
    like the merge itself), so that every prefix of the rounds merges as the whole run does.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> matrix_free_slots(H, jnp.array([0, 4])) == MatrixFreeSlots()  # dense H: no slots
      True
    """
    if not is_voters(voters):
        return MatrixFreeSlots()
    units = jnp.eye(selected.shape[0], dtype=jnp.float32)
    chosen, _ = stump_posterior(voters, selected, units[0])
    unit_q = jax.vmap(lambda unit: stump_posterior(voters, selected, unit)[1])(units)
    slots = jnp.where(selected >= 0, jnp.argmax(unit_q, axis=1), -1).astype(jnp.int32)
    return MatrixFreeSlots(chosen, slots, jnp.sum(voters.candidate_mask()))


def kept_rounds(selected: jax.Array, rounds: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(kept, rounds)``: which of the ``T`` rounds are among the first ``rounds`` (traced,
    clipped to ``[1, T]``) and the clipped ``rounds``.

    Example:
      >>> import jax.numpy as jnp
      >>> kept, rounds = kept_rounds(jnp.array([0, 4, 2]), 2)
      >>> kept.tolist(), int(rounds)
      ([True, True, False], 2)
    """
    n_rounds = selected.shape[-1]
    rounds = jnp.clip(jnp.asarray(rounds, jnp.int32), 1, n_rounds)
    return jnp.arange(n_rounds) < rounds, rounds


def held_after(record: jax.Array, index: jax.Array) -> jax.Array:
    """``record`` with every entry after ``index`` replaced by ``record[index]`` (the value a
    run that stopped there keeps).

    Example:
      >>> import jax.numpy as jnp
      >>> held_after(jnp.array([4., 3., 2., 1.]), 1).tolist()
      [4.0, 3.0, 3.0, 3.0]
    """
    return jnp.where(jnp.arange(record.shape[-1]) <= index, record, record[index])


def prefix_info(info: Any, kept: jax.Array) -> Any:
    """A rounds' info (with ``selected``, ``alphas``, ``slots``) where the rounds not
    ``kept`` read as rounds that did not vote (``-1``, 0, ``-1``).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> info = adaboost(H, jnp.array([1., 1., -1., -1.]), 3).info
      >>> prefix_info(info, jnp.array([True, False, False])).selected.tolist()
      [0, -1, -1]
    """
    slots = None if info.slots is None else jnp.where(kept, info.slots, -1)
    return info._replace(
        selected=jnp.where(kept, info.selected, -1),
        alphas=jnp.where(kept, info.alphas, 0),
        slots=slots,
    )


def rounds_result(info: Any, n_columns: int, objective, converged, chosen=None) -> LearnerResult:
    """The :class:`pacbound.solvers.LearnerResult` of boosting rounds.

    ``q`` is proportional to the ``alpha`` each voter got: over ``[H, -H]`` (``info.slots``
    None: the rounds' ``selected`` columns of the ``n_columns`` of ``H``) or over ``[S, -S]``
    of the ``T`` rounds' stump slots (``info.slots``; ``n_columns`` is then not used)
    (:func:`pacbound._src.learning.candidates.posterior_over_columns`; an empty vote is the uniform
    ``q``); ``weights = q[:n] - q[n:]``; ``steps`` counts the rounds that voted.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> info = adaboost(H, jnp.array([1., 1., -1., -1.]), 3).info
      >>> r = rounds_result(info, 3, info.losses[-1], True)
      >>> [round(float(v), 3) for v in r.q], int(r.steps)
      ([0.224, 0.0, 0.0, 0.0, 0.328, 0.448], 3)
    """
    n = n_columns if info.slots is None else info.slots.shape[-1]
    index = info.selected if info.slots is None else info.slots
    q = posterior_over_columns(index, info.alphas, n)
    steps = jnp.sum(info.selected >= 0).astype(jnp.int32)
    size = 2 * (n_columns if info.slots is None else info.n_candidates)
    return LearnerResult(q, q[:n] - q[n:], objective, steps, learner_status(converged), chosen,
                         jnp.asarray(size, jnp.int32), info=info)  # fmt: skip


def after_rounds(
    rule: BoostingRule, info: Any, rounds, n_columns: int, voters: Any = None
) -> LearnerResult:
    """The result of the first ``rounds`` rounds (traced, clipped to ``[1, T]``) of a run's
    ``info``: what a run of ``rounds`` rounds returns.

    ``q`` / ``weights`` are those of the prefix's vote, ``objective`` the first of the rule's
    ``held`` fields at its last round, ``steps`` the rounds that voted, ``converged`` whether a
    round the rule's ``ended`` marks is among them; in ``info`` the later rounds read as rounds
    after the end (``selected = -1``, ``alpha = 0``, the ``held`` fields held, the ``cleared``
    ones filled), and the arrays keep their length ``T`` (a matrix-free run its ``T`` stump
    slots). ``n_columns``: ``H``'s columns (not used for matrix-free rounds); ``voters``: the
    slots' voters.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.solvers.adaboost import ADABOOST, adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> info = adaboost(H, jnp.array([1., 1., -1., -1.]), 3).info
      >>> r = after_rounds(ADABOOST, info, 2, 3)  # the first 2 rounds
      >>> int(r.steps), round(float(r.objective), 4) == round(float(info.losses[2]), 4)
      (2, True)
    """
    kept, rounds = kept_rounds(info.selected, rounds)
    converged = jnp.any(kept & rule.ended(info))
    n_rounds = info.selected.shape[-1]
    held = {}
    for name in rule.held:  # a record of T + 1 entries holds its entry ``rounds``
        record = getattr(info, name)
        held[name] = held_after(record, rounds - 1 + record.shape[-1] - n_rounds)
    cleared = {name: jnp.where(kept, getattr(info, name), fill) for name, fill in rule.cleared}
    info = prefix_info(info, kept)._replace(**held, **cleared)
    return rounds_result(info, n_columns, held[rule.held[0]][-1], converged, voters)


def truncate_rounds(rule: BoostingRule, result: LearnerResult, rounds: ArrayLike) -> LearnerResult:
    """A boosting result after its first ``rounds`` rounds (:func:`after_rounds` of its
    ``info``): the declared ``truncate`` of a learner on :func:`run_boosting`. For one result
    (``jax.vmap`` it over folds or over ``rounds``).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.solvers.adaboost import ADABOOST, adaboost
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> int(truncate_rounds(ADABOOST, adaboost(H, y, 3), 1).steps)  # as adaboost(H, y, 1)
      1
    """
    return after_rounds(rule, result.info, rounds, result.q.shape[-1] // 2, result.voters)


@functools.partial(jax.jit, static_argnames=("rule", "n_rounds"))
def _boost(rule: BoostingRule, voters, y, sample_weight, n_rounds: int, hyper) -> LearnerResult:
    """The compiled run: the candidates, the rule's rounds, the slots, the result."""
    v = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    candidates = candidates_of(voters, y.dtype)
    rounds = rule.rounds(candidates, y, v, n_rounds, *hyper)
    slots = matrix_free_slots(voters, rounds[0])
    info = rule.info(*rounds, slots.n_candidates, slots.slots)
    return after_rounds(rule, info, n_rounds, candidates.size, slots.voters)


def run_boosting(
    rule: BoostingRule, voters: Any, y: ArrayLike, n_rounds: int, sample_weight, *hyper
) -> LearnerResult:
    """Run the boosting learner ``rule`` for ``n_rounds`` rounds (static) over ``voters``: a vote
    matrix ``H`` (checked; prepared once, :func:`pacbound._src.learning.edges.prepare_votes`) or a
    :class:`~pacbound.voters.Voters` family, searched matrix-free; ``hyper`` are the rule's
    traced hyperparameters. The checks run here, then one compiled call (per rule and size).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.solvers.adaboost import ADABOOST
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> r = run_boosting(ADABOOST, H, jnp.array([1., 1., -1., -1.]), 3, None)  # adaboost(H, y, 3)
      >>> r.info.selected.tolist(), int(r.steps)
      ([0, 4, 5], 3)
    """
    check_positive_int("n_rounds", n_rounds)
    y = checked_data(voters, y, sample_weight, binary=rule.binary)
    voters = voters if is_voters(voters) else prepare_votes(voters, y.dtype)
    return _boost(rule, voters, y, sample_weight, int(n_rounds), hyper)
