"""Column-generation learners (roy2016 §4-6): what they share, their boundary and their runner.

CqBoost (:mod:`~pacbound._src.solvers.cqboost`), MDBoost (:mod:`~pacbound._src.solvers.mdboost`),
LPBoost (:mod:`~pacbound._src.solvers.lpboost`) and CG-Boost
(:mod:`~pacbound._src.solvers.cgboost`) are
one loop, roy2016 Algorithm 1 (:func:`pacbound._src.learning.column_generation_loop.
column_generation`), with a learner-specific restricted master program. Each learner module
defines one function on the learner protocol (:mod:`pacbound._src.protocol`)::

    name(voters, y, value, *, sample_weight=None, tol=1e-6, max_columns=100, master_tol=None,
         master_max_iter=...)

**The voters.** ``H`` is ``(m, n)`` in ``[-1, 1]`` as the user has it; the learner weighs the
self-complemented set ``[H, -H]`` (roy2016 §7) implicitly
(:func:`pacbound._src.learning.candidates.dense_candidates`): one product ``H^T a`` per round prices
every voter and its complement, no ``2n``-column copy is made. A
:class:`~pacbound.voters.Voters` family (the exact or histogram stump search, or your own)
offers every candidate and its complement, never materialized
(:func:`pacbound._src.learning.candidates.search_candidates`; roy2016 §5, footnote 7: the
voters need not be a finite ``H``).

**The loop.** Starting from Algorithm 1's initial dual point, every round adds the candidate
with the steepest edge ``sum_k alpha_k y_k h(x_k)`` (roy2016 (6): the dual constraint
``H^T diag(y) alpha <= nu 1``) and re-solves the restricted program on the selected columns,
until no candidate's edge exceeds ``nu`` by more than ``tol`` (the dual certificate) or
``max_columns`` columns are in.

**The shared arguments.**

* ``y``: ``(m,)`` labels in ``{-1, +1}``.
* ``value``: the learner's hyperparameter (CqBoost's ``mu``, MDBoost's ``D``, LPBoost's and
  CG-Boost's ``C``), traced.
* ``sample_weight``: ``(m,)`` example weights ``>= 0``, traced (integer weights repeat
  examples, zeros drop them exactly, so 0/1 fold masks ``jax.vmap`` in one compilation).
* ``tol``: the stopping tolerance, the largest violation ``max_h edge(h) - nu`` of the dual
  constraint accepted (roy2016 §7: ``1e-6``), traced.
* ``max_columns``: the most columns (rounds of Algorithm 1), the size of the column buffer;
  static.
* ``master_tol``: the restricted solves' relative gap tolerance (``None``: the learner's
  default for the dtype), traced; ``master_max_iter``: the step cap of one restricted solve,
  traced.

The computation runs in float64 when ``H`` (a search's thresholds) or ``y`` is float64,
float32 otherwise. Concrete inputs are checked here (a ``ValueError`` naming the problem);
under ``jit`` / ``vmap`` the value checks are skipped and the jitted core checks nothing.

**The result**, a :class:`pacbound.solvers.LearnerResult`:

* ``q``: the posterior over ``[H, -H]`` (``(2n,)``; matrix-free: ``(2 max_columns,)`` over
  ``[S, -S]`` for the slots' ``stumps``): the program's weights on the selected columns divided
  by their sum. CqBoost's and MDBoost's are a distribution already; LPBoost's and CG-Boost's
  are not (the program's own weights are in ``info.program_weights``); an empty vote (LPBoost
  at small ``C``) is the uniform posterior, whose vote is 0.
* ``weights = q[:n] - q[n:]``, the vote ``H @ weights`` (matrix-free:
  ``stumps.votes(X) @ weights``).
* ``objective``: the final restricted program's objective (the learner's primal, in the
  program's own weights); ``steps``: columns added; ``converged``: the dual certificate
  ``max_violation <= tol`` (plus the edges' rounding level) was reached and every master solve
  certified its tolerance.
* ``stumps``: ``None`` over ``H``; matrix-free, the :class:`pacbound._src.voters.Stumps` of the
  slots (a stump selected with both signs has its two masses on its first slot's ``+`` and
  ``-`` sides, its later slot empty: each voter is listed once).
* ``info``: :class:`ColumnGenerationInfo`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.learning.candidates import (
    Candidates,
    candidates_of,
    checked_data,
    posterior_over_columns,
    stump_posterior,
)
from pacbound._src.learning.column_generation_loop import (
    LoopResult,
    RestrictedMaster,
    column_generation,
    complemented_edges,
)
from pacbound._src.protocol import LearnerResult, learner_status
from pacbound._src.validation import check_positive_int, check_scalar, is_concrete
from pacbound._src.voters.protocol import is_voters

__all__ = [
    "ColumnGenerationInfo",
    "ColumnGenerationSpec",
    "LearnerProblem",
    "check_options",
    "check_reachable",
    "fit",
    "largest_margin",
    "prepare",
]


class ColumnGenerationInfo(NamedTuple):
    """The extras of a column-generation result (``LearnerResult.info``).

    Attributes:
      selected: ``(max_columns,)`` int32, the self-complemented index of each slot's voter in the
        order they entered (:func:`pacbound._src.learning.candidates.complemented_index`: over
        ``H``, column ``j`` of ``[H, -H]``; matrix-free, base stump ``b`` of the search's
        layout or ``size + b`` for its complement), ``-1`` for an unused slot.
      n_columns: int32, how many columns entered (``steps``).
      program_weights: ``(max_columns,)`` the program's own weights of the slots (0 on unused
        ones): a distribution for CqBoost / MDBoost, LPBoost's / CG-Boost's unnormalized ``q``.
      alpha: ``(m,)`` the examples' dual weights at the end.
      nu: the dual constraint's right-hand side at the end (a voter ``h`` violates it when
        ``sum_k alpha_k y_k h(x_k) > nu``).
      max_violation: the dual certificate ``max(0, max_h sum_k alpha_k y_k h(x_k) - nu)`` over
        the candidates not selected.
      master_iterations: int32, steps of all master solves (first-order steps for CqBoost and
        MDBoost, interior-point steps for LPBoost and CG-Boost).
      n_candidates: int32, matrix-free only (``None`` over ``H``): the number of candidate
        stumps, ``sum(search.candidate_mask())``; certification's prior is uniform over them
        and their complements.
    """

    selected: jax.Array
    n_columns: jax.Array
    program_weights: jax.Array
    alpha: jax.Array
    nu: jax.Array
    max_violation: jax.Array
    master_iterations: jax.Array
    n_candidates: jax.Array | None = None


class LearnerProblem(NamedTuple):
    """What every restricted master gets: labels ``y``, example weights ``w``, the learner's
    hyperparameter ``value`` (CqBoost's ``mu``, MDBoost's ``D``, LPBoost's and CG-Boost's ``C``)
    and the restricted solver's relative tolerance and step cap."""

    y: jax.Array
    w: jax.Array
    value: jax.Array
    master_tol: jax.Array
    master_max_iter: jax.Array


class ColumnGenerationSpec(NamedTuple):
    """A column-generation learner, for :func:`fit`.

    Attributes:
      master: its :class:`~pacbound.solvers.RestrictedMaster` (built
        once: ``jit`` caches on its identity).
      check: ``check(value, votes, y, w, matrix_free)``, host-side checks of the hyperparameter
        (``y`` and ``w`` as :func:`prepare` returns them); it raises ``ValueError``.
      master_tol: the default ``master_tol`` in float64 and in float32.
    """

    master: RestrictedMaster
    check: Callable[[ArrayLike, Any, jax.Array, jax.Array, bool], None]
    master_tol: tuple[float, float]


# --------------------------------------------------------------------- the boundary
def prepare(
    votes: Any, y: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[jax.Array, jax.Array]:
    """The checks of the data every learner shares
    (:func:`pacbound._src.learning.candidates.checked_data`); returns ``y`` and the example
    weights ``w`` as floats in the computation dtype.

    ``votes`` is ``H`` ``(m, n)`` or a :class:`~pacbound.voters.Voters` family. The dtype is
    float64 when ``H`` (the family's arrays) or ``y`` is, float32 otherwise.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y, w = prepare(H, jnp.array([1, 1, -1, -1]), None)  # integer labels
      >>> str(y.dtype), w.tolist()
      ('float32', [1.0, 1.0, 1.0, 1.0])
    """
    y = checked_data(votes, y, sample_weight)
    w = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    return y, w


def check_options(tol, max_columns, master_tol, master_max_iter) -> None:
    """The options every learner shares: ``tol >= 0``, ``max_columns`` a positive int,
    ``master_tol > 0`` (or ``None``), ``master_max_iter >= 1``.

    Example:
      >>> check_options(1e-6, 100, None, 100)
      >>> check_options(1e-6, 0, None, 100)
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    check_scalar("tol", tol, 0.0)
    check_positive_int("max_columns", max_columns)
    if master_tol is not None:
        check_scalar("master_tol", master_tol, 0.0, low_open=True)
    check_scalar("master_max_iter", master_max_iter, 1.0)


@jax.jit
def largest_margin(votes: Any, y: jax.Array, w: jax.Array) -> jax.Array:
    """``max_h sum_k w_k y_k h(x_k) / sum_k w_k`` over ``[H, -H]`` (or every stump and its
    complement): the best single voter's weighted mean margin.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> float(largest_margin(H, y, jnp.ones(4)))  # every voter errs once: 3/4 - 1/4
      0.5
    """
    candidates = candidates_of(votes, y.dtype)
    return jnp.max(complemented_edges(candidates, w * y / jnp.sum(w)))


def check_reachable(name: str, value, votes, y, w, what: str) -> None:
    """Raise when ``value`` exceeds the largest candidate margin (checked only when concrete).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y, w = jnp.array([1., 1., -1., -1.]), jnp.ones(4)
      >>> check_reachable("mu", 0.5, H, y, w, "the best voter's margin")
      >>> check_reachable("mu", 0.6, H, y, w, "the best voter's margin")
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    if not is_concrete(value, y, w):
        return
    largest = float(largest_margin(votes, y, w))
    if float(value) > largest:
        raise ValueError(
            f"{name} = {float(value):g} is not reachable: {what} the largest reachable {name} is "
            f"{largest:.10g}, the best single voter's (weighted) mean margin"
        )


# --------------------------------------------------------------------- the runner
def _result(run: LoopResult, candidates: Candidates) -> LearnerResult:
    """The protocol's result: the slots' weights normalized onto ``[H, -H]`` (or ``[S, -S]``)."""
    s = run.solution
    mass = jnp.maximum(s.weights, 0)
    if candidates.search is None:
        chosen, n_candidates = None, None
        q = posterior_over_columns(run.ids, mass, candidates.size)
        size = jnp.int32(2 * candidates.size)
    else:
        chosen, q = stump_posterior(candidates.search, run.ids, mass)
        n_candidates = jnp.sum(candidates.valid).astype(jnp.int32)
        size = 2 * n_candidates
    half = q.shape[0] // 2
    info = ColumnGenerationInfo(run.ids, run.n_columns, s.weights, s.alpha, s.nu, run.violation,
                                run.inner, n_candidates)  # fmt: skip
    status = learner_status(run.converged, uncertified=~run.certified)
    return LearnerResult(q, q[:half] - q[half:], s.objective, run.n_columns, status, chosen,
                         size, info=info)  # fmt: skip


@functools.partial(jax.jit, static_argnames=("master", "max_columns"))
def _solve(master, problem: LearnerProblem, votes, tol, max_columns: int):
    candidates = candidates_of(votes, problem.y.dtype)
    run = column_generation(master, problem, candidates, problem.y, tol, max_columns)
    return _result(run, candidates)


def fit(
    spec: ColumnGenerationSpec,
    votes: Any,
    y: ArrayLike,
    value: ArrayLike,
    sample_weight: ArrayLike | None,
    tol: ArrayLike,
    max_columns: int,
    master_tol: ArrayLike | None,
    master_max_iter: ArrayLike,
) -> LearnerResult:
    """Check the arguments, then run the jitted Algorithm 1 with ``spec``'s master over the
    columns of ``H`` or every candidate of a :class:`~pacbound.voters.Voters` family; the
    arguments are those of the module docstring.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.solvers.cqboost import CQBOOST
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> r = fit(CQBOOST, H, jnp.array([1., 1., -1., -1.]), 0.3, None, 1e-6, 5, None, 1000)
      >>> round(float(r.q.sum()), 4), int(r.steps)
      (1.0, 4)
    """
    y, w = prepare(votes, y, sample_weight)
    check_options(tol, max_columns, master_tol, master_max_iter)
    spec.check(value, votes, y, w, is_voters(votes))
    dtype = y.dtype
    if master_tol is None:
        master_tol = spec.master_tol[dtype != jnp.float64]
    problem = LearnerProblem(y, w, jnp.asarray(value, dtype), jnp.asarray(master_tol, dtype),
                             jnp.asarray(master_max_iter, jnp.int32))  # fmt: skip
    tol = jnp.asarray(tol, dtype)
    return _solve(spec.master, problem, votes, tol, int(max_columns))
