"""Informed (data-dependent) priors: learn the prior on one part of the sample, certify on the
other, for every bound-minimizing learner.

The protocol of zantedeschi2021 §5 (and of Parrado-Hernández et al., JMLR 2012; Dziugaite &
Roy, 2018): split the sample ``S`` into a *prior part* ``S_P`` and a *bound part* ``S_B``;
minimize the bound on ``S_P`` from the learner's default (data-free) prior; turn that posterior
into a prior; minimize the bound again on ``S_B`` from it; certify on ``S_B`` with
``m = |S_B|``.

**What the certificate covers.** The prior is a function of ``S_P`` only (the learner sees
``H`` and ``y`` restricted to its rows: the bound part's labels are never read before the
second fit). Conditionally on ``S_P``, ``S_B`` is an i.i.d. sample of ``|S_B|`` examples that the
prior did not see, so the PAC-Bayes bound with ``m = |S_B|`` holds with probability
``1 - delta`` over ``S_B`` for every posterior at once, the one fitted on ``S_B`` included. It
says nothing of ``S_P`` (its examples are not counted in ``m``). The voters must not depend on
``S_B``'s labels either (stumps from the inputs' range are the usual relaxation; voters learned
from labels, as the paper's trees, must be learned on ``S_P``). Running both directions
(``split.swap()``) and keeping the better certificate costs a union bound (``delta / 2`` each).

* ``split_for_prior(m, fraction, seed)``: a random split into the two parts (indices).
* ``PriorLearner``: how a bound minimizer is driven (fit with a prior, posterior -> prior,
  certificate); ``dirichlet_prior_learner`` (:func:`minimize_dirichlet_bound`: the prior's
  concentrations are the learned ``alpha``), ``softmax_prior_learner``
  (:func:`pacbound.solvers.minimize_bound`: the prior masses are the learned ``q``),
  ``second_order_prior_learner`` (:func:`pacbound.ensembles.minimize_bound` over
  ``[H, -H]``, TND / CCTND / ...: the prior masses are the learned ``rho``).
* ``informed_prior(learner, H, y, split)``: the two fits and the certificate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src import second_order_minimize as som
from pacbound._src.certify import certify
from pacbound._src.dirichlet import voter_errors
from pacbound._src.kl import kl_divergence
from pacbound._src.loss_statistics import loss_statistics
from pacbound._src.solvers.direct import minimize_bound
from pacbound._src.solvers.stochastic import minimize_dirichlet_bound
from pacbound._src.stochastic_votes import certify_dirichlet

__all__ = [
    "InformedResult",
    "PriorLearner",
    "PriorSplit",
    "complemented_errors",
    "dirichlet_prior_learner",
    "informed_prior",
    "second_order_prior_learner",
    "smoothed",
    "softmax_prior_learner",
    "split_for_prior",
]

SMOOTHING = 1e-3
"""Mass of the uniform distribution mixed into a learned posterior to make it a prior (every
mass positive, as the bounds' KL needs); ``1 - SMOOTHING`` of the learned masses stay."""


class PriorSplit(NamedTuple):
    """The two parts of a sample, as sorted example indices.

    Attributes:
      prior_part: the examples the prior is learned on.
      bound_part: the examples the bound is computed on (``m = len(bound_part)``).
    """

    prior_part: np.ndarray
    bound_part: np.ndarray

    def swap(self) -> PriorSplit:
        """The same split with the roles exchanged."""
        return PriorSplit(self.bound_part, self.prior_part)


def split_for_prior(m: int, fraction: float, seed: int) -> PriorSplit:
    """A uniformly random split of ``m`` examples: ``round(fraction * m)`` of them (at least
    one, at most ``m - 1``) for the prior part, the rest for the bound part.

    Raises:
      ValueError: ``m < 2`` or ``fraction`` outside ``(0, 1)``.

    Example:
      >>> split = split_for_prior(10, 0.3, seed=0)
      >>> every = sorted([*split.prior_part, *split.bound_part]) == list(range(10))
      >>> len(split.prior_part), len(split.bound_part), every
      (3, 7, True)
    """
    if int(m) != m or m < 2 or not 0 < fraction < 1:
        raise ValueError(f"need an integer m >= 2 and fraction in (0, 1); got {m!r}, {fraction!r}")
    order = np.random.default_rng(seed).permutation(int(m))
    size = min(max(round(fraction * m), 1), m - 1)
    return PriorSplit(np.sort(order[:size]), np.sort(order[size:]))


class PriorLearner(NamedTuple):
    """How :func:`informed_prior` drives a bound minimizer.

    Attributes:
      fit: ``fit(H, y, prior) -> result``; ``prior=None`` is the learner's data-free default.
      to_prior: ``to_prior(result) -> prior``, a function of the result only.
      certify: ``certify(result, H, y, prior) -> bound`` on the sample ``(H, y)``.
    """

    fit: Callable[[Any, Any, Any], Any]
    to_prior: Callable[[Any], Any]
    certify: Callable[[Any, Any, Any, Any], Any]


class InformedResult(NamedTuple):
    """What :func:`informed_prior` returns.

    Attributes:
      prior_result: the fit on the prior part (from the data-free prior).
      prior: the prior learned from it.
      result: the fit on the bound part from ``prior``.
      bound: the certificate of ``result`` on the bound part (module docstring).
      m: the number of examples the certificate counts, ``len(split.bound_part)``.
    """

    prior_result: Any
    prior: Any
    result: Any
    bound: Any
    m: int


def informed_prior(learner: PriorLearner, H: ArrayLike, y: ArrayLike, split: PriorSplit):
    """Fit on the prior part, turn the result into a prior, fit on the bound part from it and
    certify there (module docstring). Each fit sees only its part's rows of ``H`` and ``y``.

    Example:
      The sample is two copies of a 4-example set: the prior is learned on the first, the
      bound computed on the second.

      >>> import jax.numpy as jnp, numpy as np
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> split = PriorSplit(np.arange(4), np.arange(4, 8))
      >>> learner = softmax_prior_learner(max_iter=20)
      >>> out = informed_prior(learner, jnp.tile(H, (2, 1)), jnp.tile(y, 2), split)
      >>> out.m, out.prior.shape, 0.0 < float(out.bound) <= 1.0  # a prior over [H, -H]
      (4, (6,), True)
    """
    H, y = np.asarray(H), np.asarray(y)
    prior_part, bound_part = np.asarray(split.prior_part), np.asarray(split.bound_part)
    if np.intersect1d(prior_part, bound_part).size:
        raise ValueError("the prior part and the bound part must not share examples")
    prior_result = learner.fit(H[prior_part], y[prior_part], None)
    prior = learner.to_prior(prior_result)
    Hb, yb = H[bound_part], y[bound_part]
    result = learner.fit(Hb, yb, prior)
    bound = learner.certify(result, Hb, yb, prior)
    return InformedResult(prior_result, prior, result, bound, len(yb))


def smoothed(masses: ArrayLike, smoothing: float = SMOOTHING) -> np.ndarray:
    """``(1 - smoothing) p + smoothing / k``: a learned distribution over ``k`` voters as a
    prior with every mass positive (float64, summing to 1).

    Example:
      >>> [round(float(p), 4) for p in smoothed([1.0, 0.0], 0.1)]
      [0.95, 0.05]
    """
    p = np.asarray(masses, np.float64)
    p = p / p.sum()
    return (1.0 - smoothing) * p + smoothing / p.size


def dirichlet_prior_learner(bound: str = "seeger", delta: float = 0.05, **options) -> PriorLearner:
    """:func:`~pacbound.solvers.minimize_dirichlet_bound` (``options`` passed on): the prior
    part's learned concentrations ``alpha`` become the prior ``Dir(alpha)`` (data-free default:
    ``Dir(1, ..., 1)``); the certificate is ``certify_dirichlet``'s ``bound``.

    Example:
      >>> import jax.numpy as jnp
      >>> learner = dirichlet_prior_learner(max_iter=20)
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = learner.fit(H, y, None)
      >>> r.q.shape, bool(0.0 < learner.certify(r, H, y, None) <= 1.0)
      ((6,), True)
    """
    name = bound if bound.startswith("dirichlet_") else f"dirichlet_{bound}"

    def fit(H, y, prior):
        return minimize_dirichlet_bound(H, y, bound, prior=prior, delta=delta, **options)

    def certify_(result, H, y, prior):
        cert = certify_dirichlet(result.info.alpha, H, y, prior=prior, bounds=[name], delta=delta)
        return cert.bounds[name]

    return PriorLearner(fit, lambda r: np.asarray(r.info.alpha, np.float64), certify_)


def softmax_prior_learner(
    bound: str = "seeger", delta: float = 0.05, smoothing: float = SMOOTHING, **options
) -> PriorLearner:
    """:func:`~pacbound.solvers.minimize_bound` with ``posterior="softmax"`` (``options``
    passed
    on): the prior part's learned ``q`` over ``[H, -H]`` becomes the prior masses
    (:func:`smoothed`; data-free default: uniform); the certificate is
    :func:`pacbound.certify.certify`'s ``bound``.

    Example:
      >>> import jax.numpy as jnp
      >>> learner = softmax_prior_learner(max_iter=20)
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> prior = learner.to_prior(learner.fit(H, y, None))
      >>> prior.shape, round(float(prior.sum()), 4), bool(prior.min() > 0)
      ((6,), 1.0, True)
    """

    def fit(H, y, prior):
        return minimize_bound(H, y, bound, prior=prior, delta=delta, **options)

    def certify_(result, H, y, prior):
        return certify(result, H, y, bounds=[bound], delta=delta, prior=prior).bounds[bound]

    return PriorLearner(fit, lambda r: smoothed(r.q, smoothing), certify_)


def complemented_errors(H: ArrayLike, y: ArrayLike) -> np.ndarray:
    """The ``(m, 2n)`` 0/1 error matrix of ``[H, -H]`` for ``{-1, +1}`` votes (the second-order
    statistics read pairs of voters, so the complements are materialized here).

    Example:
      >>> import numpy as np
      >>> complemented_errors(np.array([[1., -1.], [1., 1.]]), np.array([1., -1.])).tolist()
      [[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]
    """
    errors = np.asarray(voter_errors(H, y, jnp.result_type(float)))
    return np.concatenate([errors, 1.0 - errors], axis=1)


def second_order_prior_learner(
    objective: str = "tnd",
    delta: float = 0.05,
    smoothing: float = SMOOTHING,
    surrogate: Callable | None = None,
    **options,
) -> PriorLearner:
    """:func:`pacbound.ensembles.minimize_bound` of ``objective`` (``"tnd"``,
    ``"cctnd"``, ...; ``options`` passed on) over ``rho`` on ``[H, -H]``: the prior part's
    learned ``rho`` becomes the prior masses (:func:`smoothed`; data-free default: uniform);
    the certificate is ``objective`` at ``rho`` with the part's statistics (``n = n2 = m``).

    ``surrogate``: a function ``(rho, kl, data) -> value`` minimized in place of ``objective``
    (e.g. an unclipped form where the bound is flat at 1); the certificate stays
    ``objective``'s.

    Example:
      >>> import jax.numpy as jnp
      >>> learner = second_order_prior_learner("tnd", steps=10)
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> prior = learner.to_prior(learner.fit(H, y, None))  # the learned rho, smoothed
      >>> prior.shape, round(float(prior.sum()), 4)
      ((6,), 1.0)
    """

    def data(H, y):
        stats = loss_statistics(complemented_errors(H, y))
        return som.bound_data(stats, len(y), len(y), delta)

    def fit(H, y, prior):
        voters = 2 * np.shape(H)[1]
        prior = np.full(voters, 1.0 / voters) if prior is None else prior
        return som.minimize_bound(surrogate or objective, data(H, y), prior, **options)

    def certify_(result, H, y, prior):
        rho = jnp.asarray(result.rho)
        prior = jnp.full_like(rho, 1.0 / rho.size) if prior is None else jnp.asarray(prior)
        return som.OBJECTIVES[objective](rho, kl_divergence(rho, prior), data(H, y))

    return PriorLearner(fit, lambda r: smoothed(r.rho, smoothing), certify_)
