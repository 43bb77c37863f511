"""The learner protocol: what every learner takes, what it returns, what it may declare.

Every learner of :mod:`pacbound.solvers` (and any user-written learner that follows this page)
works in :mod:`pacbound.sweep`, in :mod:`pacbound.estimators` and with
:func:`pacbound.certify.certify`.

**What a learner takes.** ::

    result = learner(voters, y, *hyperparameters, sample_weight=None, **options)

* ``voters``: the ``(m, n)`` votes ``H[i, j] = h_j(x_i)`` in ``[-1, 1]``, as the user has them
  (float or integer dtype; never pre-complemented), or any object implementing the
  :class:`pacbound.voters.Voters` protocol (a voter family searched matrix-free: the exact or
  histogram stump search, or your own). Every learner weighs the self-complemented set
  ``[H, -H]`` (roy2016 §7; laviolette2011 Program 1), built or read implicitly inside. A
  learner whose program reads every voter's votes refuses a family with a ``TypeError``
  (:func:`votes_matrix`).
* ``y``: ``(m,)`` labels in ``{-1, +1}``.
* hyperparameters: the paper's (``mu``, ``C``, ``D``, ``gamma``, ``lam``, ``n_rounds``),
  positional. Numbers are traced, so ``jax.vmap`` over them compiles once; sizes
  (``n_rounds``, the length of a scan or a buffer) are static.
* ``sample_weight``: ``(m,)`` example weights ``>= 0``, traced: weight 0 drops an example
  exactly as slicing it off would, so a stack of 0/1 masks runs cross-validation folds in one
  ``jax.vmap``.
* options, keyword-only, one vocabulary: ``tol`` (the stopping tolerance; each learner says
  what it measures), ``max_iter`` (the cap on iterations, columns of column generation or
  optimizer steps), ``master_tol`` / ``master_max_iter`` (the inner solves of column
  generation), ``key`` (a PRNG key where the learner is random).

The learner validates concrete inputs at its Python boundary (a ``ValueError`` naming the
problem) and runs a jitted core that checks nothing.

**What it returns**: a :class:`LearnerResult`: the posterior ``q``, a distribution over the
``2n`` columns of ``[H, -H]`` (over ``[V, -V]`` of the selected voters ``V = result.voters``
when it searched a family); the signed vote weights ``weights = q[:n] - q[n:]`` (the vote is
``F = H @ weights``, or ``result.voters.votes(X) @ weights``; the majority vote ``sign(F)``, a
tie an error); the learner's ``objective``; the number of ``steps``; its :class:`Status`
(``converged`` is ``status == Status.SUCCESSFUL``); ``prior_size``, the number of voters of
the uniform prior; ``family``, what ``q`` parametrizes (:class:`Family`); and ``info``, a
NamedTuple of learner-specific extras. Learners whose program yields unnormalized weights
(LPBoost, CG-Boost, the boosting rounds' ``alpha``) state the normalized posterior; an empty
vote is the uniform posterior (vote 0).

**What it may declare**, with the :func:`learner` decorator, so that sweeps can ask instead of
recognizing functions:

* ``prefix``: a hyperparameter whose smaller values are prefixes of one run (boosting rounds),
  with ``truncate(result, value)``, the result after ``value`` rounds;
* ``path``: a hyperparameter solved over many values as one continuation, with
  ``solve_path(H, y, values, *, sample_weight, **options)`` returning the stacked results,
  and the options that path solver accepts.

:func:`traits` reads the declaration through ``functools.partial`` and ``functools.wraps``.

**How a result is certified**: :func:`pacbound.certify.certify` ``(result, H, y, delta=...)``
evaluates every registered PAC-Bayes bound on ``result.q`` against the uniform prior over the
``result.prior_size`` voters of ``[H, -H]`` (for a family: over every candidate and its
complement, ``H`` then holding the features ``X`` the selected voters vote on).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.voters.protocol import is_voters

__all__ = [
    "Family",
    "LearnerResult",
    "LearnerTraits",
    "Status",
    "complemented_posterior",
    "learner",
    "learner_status",
    "posterior_from_weights",
    "traits",
    "votes_matrix",
]


class Status(enum.IntEnum):
    """Why a learner stopped; :attr:`LearnerResult.status` holds the value (int32, traced).

    ``converged`` is ``status == SUCCESSFUL``; under ``jax.vmap`` each cell has its own.
    Compare with the members (``result.status == Status.MAX_ITER_REACHED``) or read one with
    ``Status(int(result.status))``.

    Example:
      >>> Status(1).name, int(Status.SUCCESSFUL)
      ('MAX_ITER_REACHED', 0)
    """

    SUCCESSFUL = 0
    """The learner met its stopping rule (its tolerance, or nothing left to add)."""
    MAX_ITER_REACHED = 1
    """It used its whole iteration cap (``max_iter``, ``n_rounds``) first."""
    INFEASIBLE_HYPERPARAMETER = 2
    """The hyperparameter cannot be met on this sample (e.g. MinCq's ``mu`` above every
    realizable first moment, on a fold under ``vmap``): ``q`` is NaN."""
    MASTER_NOT_CERTIFIED = 3
    """Column generation: a restricted master's solve did not certify its tolerance."""


def learner_status(
    done: ArrayLike, infeasible: ArrayLike = False, uncertified: ArrayLike = False
) -> jax.Array:
    """The :class:`Status` (int32) of a run: ``INFEASIBLE_HYPERPARAMETER`` where
    ``infeasible``, else ``MASTER_NOT_CERTIFIED`` where ``uncertified``, else ``SUCCESSFUL``
    where ``done``, else ``MAX_ITER_REACHED``.

    Example:
      >>> import jax.numpy as jnp
      >>> learner_status(jnp.array([True, False, True]), jnp.array([False, False, True])).tolist()
      [0, 1, 2]
    """
    status = jnp.where(done, int(Status.SUCCESSFUL), int(Status.MAX_ITER_REACHED))
    status = jnp.where(uncertified, int(Status.MASTER_NOT_CERTIFIED), status)
    return jnp.where(infeasible, int(Status.INFEASIBLE_HYPERPARAMETER), status).astype(jnp.int32)


def votes_matrix(voters: Any, learner_name: str) -> Any:
    """``voters`` itself, for a learner that reads every voter's votes: a
    :class:`~pacbound.voters.Voters` family is refused with a ``TypeError`` that says so.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> votes_matrix(voters.stump_search(jnp.arange(4.0).reshape(4, 1)), "mincq")
      Traceback (most recent call last):
      ...
      TypeError: mincq needs the vote matrix H ...
    """
    if is_voters(voters):
        raise TypeError(
            f"{learner_name} needs the vote matrix H (m, n): its program reads every voter's "
            f"votes, so it cannot search a voter family ({type(voters).__name__}) matrix-free; "
            "give it the family's votes, e.g. voters.votes(voters.fit_stumps(X), X), or use a "
            "greedy learner (cbboost, adaboost, vebboost, cqboost, lpboost, cgboost, mdboost)"
        )
    return voters


class Family(enum.IntEnum):
    """What a result's ``q`` parametrizes (:attr:`LearnerResult.family`, int32).

    Example:
      >>> Family(1).name
      'DIRICHLET'
    """

    CATEGORICAL = 0
    """``q`` is the posterior itself, a distribution over the voters."""
    DIRICHLET = 1
    """``q`` is the mean of a Dirichlet posterior (a stochastic vote; ``info.alpha``)."""
    GAUSSIAN_MIXTURE = 2
    """``q`` weighs the centres of a Gaussian mixture over linear voters (roy2016 §3)."""


class LearnerResult(NamedTuple):
    """What every learner returns (the protocol's one result base).

    Attributes:
      q: ``(2n,)`` the posterior, a distribution over ``[H, -H]`` (over a voter family: over
        ``[V, -V]`` for the ``n`` selected voters ``V = voters``).
      weights: ``(n,)`` the signed vote weights ``q[:n] - q[n:]``; the vote is ``H @ weights``.
      objective: the learner's objective at ``q`` (each learner says which).
      steps: int32, iterations / rounds / sweeps / columns added / optimizer steps.
      status: int32, a :class:`Status`: why the learner stopped.
      voters: the voters ``q`` is over when the learner searched a voter family (what the
        family's ``candidate_voters`` returned: e.g. :class:`pacbound.voters.Stumps`, with
        ``voters.votes(X)``); ``None`` for learners over the columns of ``H``.
      prior_size: int32, the number of voters the uniform prior is over: ``2n`` for ``H``,
        twice the family's candidates for a search (what :func:`pacbound.certify.certify`
        takes the KL against).
      family: int32, a :class:`Family`: what ``q`` parametrizes.
      info: the learner's own extras (a NamedTuple, documented with the learner).
    """

    q: jax.Array
    weights: jax.Array
    objective: jax.Array
    steps: jax.Array
    status: jax.Array
    voters: Any = None
    prior_size: Any = None
    family: Any = np.int32(Family.CATEGORICAL)
    info: Any = None

    @property
    def converged(self) -> jax.Array:
        """bool, ``status == Status.SUCCESSFUL``: the learner met its stopping rule."""
        return jnp.asarray(self.status) == int(Status.SUCCESSFUL)


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


def variant(fn: Callable, name: str, doc: str, **fixed: Any) -> Callable:
    """``functools.partial(fn, **fixed)`` named ``name``, with docstring ``doc``: a variant of
    a learner is an option of it, never a second implementation (as optax's ``nadam`` is
    ``adam`` with ``nesterov=True``); :func:`traits` reads ``fn``'s declaration through it."""
    alias = functools.partial(fn, **fixed)
    alias.__name__ = alias.__qualname__ = name  # type: ignore[attr-defined]
    alias.__module__ = fn.__module__
    alias.__doc__ = doc
    return alias


class LearnerTraits(NamedTuple):
    """What a learner declared (:func:`learner`); every field ``None`` / empty when it did not.

    Attributes:
      prefix: the hyperparameter whose smaller values are prefixes of one run.
      truncate: ``truncate(result, value) -> result`` after ``value`` (traced) of ``prefix``.
      path: the hyperparameter a continuation solves over many values in one call.
      solve_path: ``solve_path(H, y, values, *, sample_weight=None, **options)``, results
        stacked on a leading axis in the order of ``values``.
      path_options: the options ``solve_path`` accepts (others keep the vmapped cells).
    """

    prefix: str | None = None
    truncate: Callable | None = None
    path: str | None = None
    solve_path: Callable | None = None
    path_options: frozenset[str] = frozenset()


_TRAITS = "__pacbound_traits__"


def learner(
    *,
    prefix: str | None = None,
    truncate: Callable | None = None,
    path: str | None = None,
    solve_path: Callable | None = None,
    path_options: tuple[str, ...] = (),
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
    declared = LearnerTraits(prefix, truncate, path, solve_path, frozenset(path_options))

    def declare(fn: Callable) -> Callable:
        setattr(fn, _TRAITS, declared)
        return fn

    return declare


def traits(fn: Callable) -> LearnerTraits:
    """The declared traits of a learner, looking through ``functools.partial`` and
    ``functools.wraps`` (``__wrapped__``); :class:`LearnerTraits` defaults if none.

    Example:
      >>> import functools
      >>> from pacbound.solvers import adaboost, mincq
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
