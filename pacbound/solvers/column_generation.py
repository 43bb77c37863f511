"""Column-generation learners: the boundary and public functions over the shared loop.

CqBoost, MDBoost, LPBoost and CG-Boost (roy2016 §4-6) are one loop
(:func:`pacbound.solvers.column_generation_loop.column_generation`, roy2016 Algorithm 1) with
a learner-specific restricted master. Each learner module states its master as a
:class:`LearnerSpec`; :func:`learner_functions` builds its two public functions from it, with
the same signature: ``name(H, y, value, eps=1e-6, max_columns=100, *, sample_weight=None,
rtol=None, max_iter=...)`` over the columns of a finite ``H``, and ``name_stumps(search, ...)``
over every decision stump and its complement, generated matrix-free. Both check their
arguments here (:func:`prepare`, the spec's ``check``), then run the jitted loop: ``value``,
``eps`` and ``sample_weight`` are traced (``jax.vmap`` sweeps them, 0/1 fold masks included,
with one compilation), ``max_columns`` is static.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound.solvers.column_generation_loop import (
    ColumnGenerationResult,
    RestrictedMaster,
    StumpsColumnGenerationResult,
    column_generation,
    dense_oracle,
    dense_result,
    stumps_oracle,
    stumps_result,
)
from pacbound.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
    is_concrete,
)
from pacbound.voters import StumpSearch

__all__ = [
    "ColumnGenerationResult",
    "LearnerProblem",
    "LearnerSpec",
    "StumpsColumnGenerationResult",
    "Votes",
    "candidate_margins",
    "check_reachable",
    "fit",
    "learner_functions",
    "majority_vote",
    "prepare",
]


@jax.jit
def majority_vote(result: ColumnGenerationResult, H: ArrayLike) -> jax.Array:
    """The vote ``H q`` on new votes ``H`` ``(m', n)``; its sign is the majority vote."""
    H = jnp.asarray(H)
    return H.astype(result.q.dtype) @ result.q


# --------------------------------------------------------------------- the boundary
Votes = ArrayLike | StumpSearch


def prepare(
    votes: Votes, y: ArrayLike, sample_weight: ArrayLike | None, eps: ArrayLike, max_columns: int
) -> tuple[jax.Array, jax.Array]:
    """The checks every learner shares; returns ``y`` and the example weights ``w`` as floats.

    ``votes`` is a finite ``H`` ``(m, n)`` or a :class:`pacbound.voters.StumpSearch`. The dtype is
    float64 when ``H`` (or the search's thresholds) or ``y`` is, float32 otherwise.
    """
    if isinstance(votes, StumpSearch):
        m, dtype = votes.order.shape[1], float_dtype(votes.thresholds, y)
    else:
        check_votes(votes)
        m, dtype = jnp.shape(votes)[0], float_dtype(votes, y)
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    check_scalar("eps", eps, 0.0)
    check_positive_int("max_columns", max_columns)
    y = jnp.asarray(y, dtype)
    w = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    return y, w


def candidate_margins(votes: Votes, y: jax.Array, w: jax.Array) -> jax.Array:
    """Weighted mean margins ``sum_k w_k y_k h(x_k) / sum_k w_k`` of every candidate voter."""
    a = w * y / jnp.sum(w)
    if isinstance(votes, StumpSearch):
        return stumps_oracle(votes, a.dtype).edges(a)  # -inf where no stump
    return a @ jnp.asarray(votes).astype(a.dtype)


def check_reachable(name: str, value: ArrayLike, votes: Votes, y, w, what: str) -> None:
    """Raise when ``value`` exceeds the largest candidate margin (checked only when concrete)."""
    if not is_concrete(value, votes, y, w):
        return
    largest = float(jnp.max(candidate_margins(votes, y, w)))
    if float(value) > largest:
        raise ValueError(
            f"{name} = {float(value):g} is not reachable: {what} the largest reachable {name} is "
            f"{largest:.10g}, the best single voter's (weighted) mean margin"
        )


@functools.partial(jax.jit, static_argnames=("master", "max_columns"))
def _fit_dense(master, problem, H, y, eps, max_columns) -> ColumnGenerationResult:
    H = jnp.asarray(H)
    run = column_generation(master, problem, dense_oracle(H.astype(y.dtype)), y, eps, max_columns)
    return dense_result(run, H.shape[1])


@functools.partial(jax.jit, static_argnames=("master", "max_columns"))
def _fit_stumps(master, problem, search, y, eps, max_columns) -> StumpsColumnGenerationResult:
    oracle = stumps_oracle(search, y.dtype)
    return stumps_result(column_generation(master, problem, oracle, y, eps, max_columns), search)


def fit(
    master: RestrictedMaster, problem: Any, votes: Votes, y: jax.Array, eps, max_columns: int
) -> ColumnGenerationResult | StumpsColumnGenerationResult:
    """Run :func:`column_generation` (jitted) over a finite ``H`` or all stumps of a search."""
    eps = jnp.asarray(eps, y.dtype)
    if isinstance(votes, StumpSearch):
        return _fit_stumps(master, problem, votes, y, eps, int(max_columns))
    return _fit_dense(master, problem, votes, y, eps, int(max_columns))


# ------------------------------------------------------------------ the public functions
class LearnerProblem(NamedTuple):
    """What every restricted master gets: labels ``y``, example weights ``w``, the learner's
    hyperparameter ``value`` (CqBoost's ``mu``, MDBoost's ``D``, LPBoost's and CG-Boost's ``C``)
    and the restricted solver's relative tolerance and step cap."""

    y: jax.Array
    w: jax.Array
    value: jax.Array
    rtol: jax.Array
    max_iter: jax.Array


class LearnerSpec(NamedTuple):
    """A column-generation learner, for :func:`learner_functions`.

    Attributes:
      name: the public function's name (``"lpboost"``; the matrix-free one adds ``_stumps``).
      title: the learner's name in prose (``"LPBoost"``).
      master: its :class:`~pacbound.solvers.column_generation_loop.RestrictedMaster`.
      hyper: the hyperparameter's argument name (``"C"``).
      check: ``check(value, votes, y, w)``, host-side checks of the hyperparameter (``y`` and
        ``w`` as :func:`prepare` returns them); it raises ``ValueError``.
      rtol: the restricted solves' default relative tolerance in float64 and in float32.
      max_iter: the default step cap of one restricted solve.
      doc: the fields of the docstring template (:data:`DOC`): ``summary``, ``hyper_doc``,
        ``weights``, ``solver``, ``returns`` and ``notes`` (may be empty).
    """

    name: str
    title: str
    master: RestrictedMaster
    hyper: str
    check: Callable[[ArrayLike, Votes, jax.Array, jax.Array], None]
    rtol: tuple[float, float]
    max_iter: int
    doc: dict[str, str]


DOC = """{summary}

``{hyper}``, ``eps`` and ``sample_weight`` are traced: ``jax.vmap`` sweeps them (0/1 fold masks
included) with one compilation; ``max_columns`` is static.{notes}

Args:
  H: votes ``(m, n)`` in ``[-1, 1]`` (roy2016 §7: stumps and their complements,
    ``pacbound.voters.self_complemented``).
  y: labels in ``{{-1, +1}}``, ``(m,)``.
  {hyper}: {hyper_doc}
  eps: the stopping tolerance on the dual constraint ``edge <= nu`` (roy2016 §7: ``1e-6``).
  max_columns: the size of the column buffer (static).
  sample_weight: ``(m,)`` example weights ``>= 0``, {weights} (integer weights
    repeat examples, zeros drop them).
  rtol: the restricted solves' relative gap tolerance (default ``{rtol64:g}`` in float64,
    ``{rtol32:g}`` in float32).
  max_iter: the {solver} step cap of one restricted solve.

Returns:
  :class:`~pacbound.solvers.column_generation.ColumnGenerationResult`:
  {returns}
"""

STUMPS_DOC = """{title} over every decision stump and its complement, generated matrix-free.

The pricing step is the sorted cumulative-sum search of :func:`pacbound.voters.stump_scores`
over all thresholds of all features (roy2016 §5, footnote 7: the voters need not be a finite
``H``). Same arguments as :func:`{name}`, with ``search = pacbound.voters.stump_search(X)``
for ``H``; returns :class:`~pacbound.solvers.column_generation.StumpsColumnGenerationResult`
(evaluate the vote with ``pacbound.voters.stumps_vote(r.stumps, r.q * r.signs, X)``).
"""


def _run(spec: LearnerSpec, votes, y, value, eps, max_columns, sample_weight, rtol, max_iter):
    """The checks, then the jitted loop on :class:`LearnerProblem`."""
    y, w = prepare(votes, y, sample_weight, eps, max_columns)
    spec.check(value, votes, y, w)
    dtype = y.dtype
    rtol = spec.rtol[dtype != jnp.float64] if rtol is None else rtol
    problem = LearnerProblem(y, w, jnp.asarray(value, dtype), jnp.asarray(rtol, dtype),
                             jnp.asarray(max_iter, jnp.int32))  # fmt: skip
    return fit(spec.master, problem, votes, y, eps, max_columns)


def _signature(spec: LearnerSpec, first: str, annotation, result) -> inspect.Signature:
    positional, keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([
        inspect.Parameter(first, positional, annotation=annotation),
        inspect.Parameter("y", positional, annotation="ArrayLike"),
        inspect.Parameter(spec.hyper, positional, annotation="ArrayLike"),
        inspect.Parameter("eps", positional, default=1e-6, annotation="ArrayLike"),
        inspect.Parameter("max_columns", positional, default=100, annotation="int"),
        inspect.Parameter("sample_weight", keyword, default=None, annotation="ArrayLike | None"),
        inspect.Parameter("rtol", keyword, default=None, annotation="ArrayLike | None"),
        inspect.Parameter("max_iter", keyword, default=spec.max_iter, annotation="ArrayLike"),
    ], return_annotation=result)  # fmt: skip


def _public(spec: LearnerSpec, signature: inspect.Signature, name: str, doc: str, module: str):
    def learner(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return _run(spec, *bound.arguments.values())

    learner.__signature__ = signature
    learner.__name__ = learner.__qualname__ = name
    learner.__module__, learner.__doc__ = module, doc
    return learner


def learner_functions(spec: LearnerSpec, module: str) -> tuple[Callable, Callable]:
    """The public ``(name, name_stumps)`` pair of a column-generation learner.

    Both take ``(votes, y, <spec.hyper>, eps=1e-6, max_columns=100, *, sample_weight=None,
    rtol=None, max_iter=spec.max_iter)`` (the signature ``inspect`` and ``help`` show) and
    run :func:`fit` on the spec's master; ``module`` is the defining module's ``__name__``.
    """
    rtol64, rtol32 = spec.rtol
    doc = DOC.format(hyper=spec.hyper, rtol64=rtol64, rtol32=rtol32, **spec.doc)
    signature = _signature(spec, "H", "ArrayLike", "ColumnGenerationResult")
    dense = _public(spec, signature, spec.name, doc, module)
    stumps_doc = STUMPS_DOC.format(title=spec.title, name=spec.name)
    signature = _signature(spec, "search", "StumpSearch", "StumpsColumnGenerationResult")
    return dense, _public(spec, signature, f"{spec.name}_stumps", stumps_doc, module)
