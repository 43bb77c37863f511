"""The learner protocol: what every learner takes, what it returns, what it may declare.

Every learner of :mod:`pacbound._src.solvers` (and any user-written learner that follows this page)
works in :mod:`pacbound._src.sweep`, in :mod:`pacbound._src.estimators` and with
:func:`pacbound._src.certify.certify`.

**What a learner takes.** ::

    result = learner(H, y, *hyperparameters, sample_weight=None, **options)

* ``H``: the ``(m, n)`` votes ``H[i, j] = h_j(x_i)`` in ``[-1, 1]``, as the user has them
  (float or integer dtype; never pre-complemented). Every learner weighs the
  self-complemented set ``[H, -H]`` (roy2016 §7; laviolette2011 Program 1), built or read
  implicitly inside. A *matrix-free* learner (``*_stumps``) takes a stump search in place of
  ``H`` (:func:`pacbound._src.voters.stump_search` or
  :func:`pacbound._src.voters.histogram_search`):
  every decision stump and its complement, never materialized.
* ``y``: ``(m,)`` labels in ``{-1, +1}``.
* hyperparameters: the paper's (``mu``, ``C``, ``D``, ``gamma``, ``lam``, ``n_rounds``),
  positional. Numbers are traced, so ``jax.vmap`` over them compiles once; sizes
  (``n_rounds``, the length of a scan) are static.
* ``sample_weight``: ``(m,)`` example weights ``>= 0``, traced: weight 0 drops an example
  exactly as slicing it off would, so a stack of 0/1 masks runs cross-validation folds in one
  ``jax.vmap``.
* options, keyword-only, one vocabulary: ``tol`` (the stopping tolerance; each learner says
  what it measures), ``max_iter`` (the cap on iterations, rounds of column generation or
  optimizer steps), ``master_tol`` / ``master_max_iter`` (the inner solves of column
  generation), ``key`` (a PRNG key where the learner is random).

The learner validates concrete inputs at its Python boundary (a ``ValueError`` naming the
problem) and runs a jitted core that checks nothing.

**What it returns**: a :class:`LearnerResult`: the posterior ``q``, a distribution over the
``2n`` columns of ``[H, -H]``; the signed vote weights ``weights = q[:n] - q[n:]`` (the vote is
``F = H @ weights``, the majority vote ``sign(F)``, a tie an error); the learner's
``objective``; the number of ``steps``; whether it ``converged``; for matrix-free learners the
``stumps`` ``q`` is over (``None`` otherwise: the columns of ``H``); and ``info``, a NamedTuple
of learner-specific extras. Learners whose program yields unnormalized weights (LPBoost,
CG-Boost, the boosting rounds' ``alpha``) state the normalized posterior; an empty vote is the
uniform posterior (vote 0).

**What it may declare**, with the :func:`learner` decorator, so that sweeps can ask instead of
recognizing functions:

* ``prefix``: a hyperparameter whose smaller values are prefixes of one run (boosting rounds),
  with ``truncate(result, value)``, the result after ``value`` rounds;
* ``path``: a hyperparameter solved over many values as one continuation, with
  ``solve_path(H, y, values, *, sample_weight, **options)`` returning the stacked results,
  and the options that path solver accepts.

:func:`traits` reads the declaration through ``functools.partial`` and ``functools.wraps``.

**How a result is certified**: :func:`pacbound._src.certify.certify` ``(result, H, y, delta=...)``
evaluates every registered PAC-Bayes bound on ``result.q`` against the uniform prior over
``[H, -H]`` (over every candidate stump and its complement for matrix-free results, whose
``info.n_candidates`` counts the stumps).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

__all__ = [
    "LearnerResult",
    "LearnerTraits",
    "complemented_posterior",
    "learner",
    "posterior_from_weights",
    "traits",
]


class LearnerResult(NamedTuple):
    """What every learner returns (the protocol's one result base).

    Attributes:
      q: ``(2n,)`` the posterior, a distribution over ``[H, -H]`` (matrix-free: over
        ``[S, -S]`` for the ``n`` stumps ``S = stumps``).
      weights: ``(n,)`` the signed vote weights ``q[:n] - q[n:]``; the vote is ``H @ weights``.
      objective: the learner's objective at ``q`` (each learner says which).
      steps: int32, iterations / rounds / sweeps / columns added / optimizer steps.
      converged: bool, whether the learner met its stopping rule before its cap.
      stumps: :class:`pacbound._src.voters.Stumps` the posterior is over (matrix-free learners),
        ``None`` for learners over the columns of ``H``.
      info: the learner's own extras (a NamedTuple, documented with the learner).
    """

    q: jax.Array
    weights: jax.Array
    objective: jax.Array
    steps: jax.Array
    converged: jax.Array
    stumps: Any
    info: Any


def posterior_from_weights(weights: jax.Array) -> jax.Array:
    """The posterior over ``[H, -H]`` of signed vote weights ``w`` (``(n,)``): ``w_j > 0`` puts
    ``w_j / ||w||_1`` on ``h_j``, ``w_j < 0`` puts ``|w_j| / ||w||_1`` on ``-h_j``; the same vote
    up to the positive scale ``||w||_1``. ``w = 0`` (an empty vote) gives the uniform posterior,
    whose vote is 0 as well.

    Example:
      >>> import jax.numpy as jnp
      >>> posterior_from_weights(jnp.array([0.5, -1.5])).tolist()  # over [h_0, h_1, -h_0, -h_1]
      [0.25, 0.0, 0.0, 0.75]
    """
    total = jnp.sum(jnp.abs(weights))
    n = weights.shape[-1]
    split = jnp.concatenate([jnp.maximum(weights, 0), jnp.maximum(-weights, 0)])
    uniform = jnp.full(2 * n, 1.0 / (2 * n), weights.dtype)
    return jnp.where(total > 0, split / jnp.where(total > 0, total, 1), uniform)


def complemented_posterior(masses: jax.Array) -> jax.Array:
    """Non-negative masses over ``[H, -H]`` (``(2n,)``) normalized to a distribution (uniform
    when they are all 0: the empty vote).

    Example:
      >>> import jax.numpy as jnp
      >>> complemented_posterior(jnp.array([1., 0., 3., 0.])).tolist()
      [0.25, 0.0, 0.75, 0.0]
      >>> complemented_posterior(jnp.zeros(4)).tolist()  # the empty vote: uniform
      [0.25, 0.25, 0.25, 0.25]
    """
    total = jnp.sum(masses)
    uniform = jnp.full_like(masses, 1.0 / masses.shape[-1])
    return jnp.where(total > 0, masses / jnp.where(total > 0, total, 1), uniform)


class LearnerTraits(NamedTuple):
    """What a learner declared (:func:`learner`); every field ``None`` / empty when it did not.

    Attributes:
      prefix: the hyperparameter whose smaller values are prefixes of one run.
      truncate: ``truncate(result, value) -> result`` after ``value`` (traced) of ``prefix``.
      path: the hyperparameter a continuation solves over many values in one call.
      solve_path: ``solve_path(H, y, values, *, sample_weight=None, **options)``, results
        stacked on a leading axis in the order of ``values``.
      path_options: the options ``solve_path`` accepts (others keep the vmapped cells).
      matrix_free: whether the learner takes a stump search instead of ``H``.
    """

    prefix: str | None = None
    truncate: Callable | None = None
    path: str | None = None
    solve_path: Callable | None = None
    path_options: frozenset[str] = frozenset()
    matrix_free: bool = False


_TRAITS = "__pacbound_traits__"


def learner(
    *,
    prefix: str | None = None,
    truncate: Callable | None = None,
    path: str | None = None,
    solve_path: Callable | None = None,
    path_options: tuple[str, ...] = (),
    matrix_free: bool = False,
) -> Callable[[Callable], Callable]:
    """Declare what a learner can do; the decorated function is returned unchanged.

    Example:
      >>> def my_truncate(result, n_rounds): ...
      >>> @learner(prefix="n_rounds", truncate=my_truncate)
      ... def my_boosting(H, y, n_rounds, *, sample_weight=None): ...
      >>> traits(my_boosting).prefix, traits(my_boosting).truncate is my_truncate
      ('n_rounds', True)
    """
    if (prefix is None) != (truncate is None) or (path is None) != (solve_path is None):
        raise ValueError("declare prefix with truncate, and path with solve_path")
    declared = LearnerTraits(
        prefix, truncate, path, solve_path, frozenset(path_options), matrix_free
    )

    def declare(fn: Callable) -> Callable:
        setattr(fn, _TRAITS, declared)
        return fn

    return declare


def traits(fn: Callable) -> LearnerTraits:
    """The declared traits of a learner, looking through ``functools.partial`` and
    ``functools.wraps`` (``__wrapped__``); :class:`LearnerTraits` defaults if none.

    Example:
      >>> import functools
      >>> from pacbound._src.solvers import adaboost, mincq
      >>> traits(adaboost).prefix, traits(functools.partial(mincq, max_iter=10)).path
      ('n_rounds', 'mu')
    """
    seen = fn
    while True:
        declared = getattr(seen, _TRAITS, None)
        if declared is not None:
            return declared
        if isinstance(seen, functools.partial):
            seen = seen.func
        elif hasattr(seen, "__wrapped__"):
            seen = seen.__wrapped__
        else:
            return LearnerTraits()
