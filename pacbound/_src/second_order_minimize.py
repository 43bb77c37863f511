"""Minimization of the second-order bounds over the posterior ``rho = softmax(ln pi + theta)``.

The statistic matrices are computed once (:mod:`pacbound._src.loss_statistics`); every step
evaluates quadratic forms of ``rho`` and a bound of :mod:`pacbound._src.bounds.second_order`, so a
step
costs ``O(n_voters^2)`` whatever the sample size.

* ``minimize_bound(objective, data, prior, optimizer, steps)``: any optax optimizer on
  ``theta`` in one jitted ``lax.scan``, keeping the best ``rho`` met; the objectives in
  ``OBJECTIVES`` take ``(rho, kl, data)``. Inner parameters are handled inside the bounds:
  the lambda and gamma grids of CCPBB are minimized over (vmapped), the best ``mu`` of CCTND
  and ``lambda`` of TND are in closed form.
* ``minimize_over_mu``: CCPBB or split-kl for each ``mu`` of a data-independent grid
  (``jax.vmap``), with the union bound ``delta / len(grid)``, the best kept.
* The C-bound's forms of [VGHM21] (``cbound_seeger``, ``cbound_mcallester``,
  ``cbound_joint``): the direct minimization of a PAC-Bayesian C-bound, their learners
  (the authors minimize the same bounds by full-batch COCOB steps from the uniform posterior,
  ``optax.contrib.cocob`` here; where the bound is vacuous the first-order bound gives the
  direction).
* The papers' own schemes, for comparison: ``tnd_alternating`` (Masegosa et al. 2020:
  gradient steps on the lambda form at fixed ``lambda``, then the closed-form ``lambda``) and
  ``cctnd_alternating`` (Wu et al. 2021: gradient steps at fixed ``mu``, then the closed-form
  ``mu`` update).

Every result is a ``MinimizeResult`` whose ``bound`` is the certificate at its ``rho`` (the
bound function evaluated there), holding with probability ``1 - delta``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.bounds import second_order as so
from pacbound._src.learning.bound_objective import run_optimizer
from pacbound._src.loss_statistics import (
    LossStatistics,
    check_posterior,
    gibbs_risk,
    mu_tandem_risk,
    mu_tandem_second_moment,
    mu_tandem_variance,
    quadratic_form,
    tandem_risk,
    ternary_rates,
)
from pacbound._src.validation import check_delta, check_positive_int, is_concrete

__all__ = [
    "DEFAULT_OPTIMIZER",
    "OBJECTIVES",
    "BoundData",
    "MinimizeResult",
    "bound_data",
    "cctnd_alternating",
    "minimize_bound",
    "minimize_over_mu",
    "tnd_alternating",
]


DEFAULT_OPTIMIZER = optax.rprop(0.05)
"""``optax.rprop(0.05)``, one object: the optimizer is a static argument of the jitted loops, so
a new ``optax.rprop(0.05)`` per call would recompile them every call."""


class BoundData(NamedTuple):
    """What the objectives read (a pytree of arrays; ``jax.vmap`` can sweep any leaf).

    Attributes:
      stats: the ``LossStatistics`` of the labeled sample.
      n, n2: the Gibbs and pair sample sizes (``sample_sizes``).
      delta: confidence.
      mu: the ``mu`` of CCPBB / split-kl (ignored by the others).
      n_mu: the size of the ``mu`` grid paid for by a union bound (1 for a fixed ``mu``).
      disagreement: ``(n, n)`` disagreement matrix for DIS (zeros when unused).
      m_unlabeled: the sample size of the disagreement (DIS).
    """

    stats: LossStatistics
    n: jax.Array
    n2: jax.Array
    delta: jax.Array
    mu: jax.Array
    n_mu: jax.Array
    disagreement: jax.Array
    m_unlabeled: jax.Array


def bound_data(
    stats: LossStatistics,
    n: int,
    n2: int,
    delta: ArrayLike,
    mu: ArrayLike = 0.0,
    disagreement: ArrayLike | None = None,
    m_unlabeled: int | None = None,
) -> BoundData:
    """``BoundData`` in the statistics' dtype, with ``delta`` checked (boundary helper).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.ensembles import error_matrix, loss_statistics
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> data = bound_data(loss_statistics(error_matrix(H, y)), 1000, 1000, 0.05)
      >>> float(data.n), round(float(data.delta), 4), float(data.mu), str(data.delta.dtype)
      (1000.0, 0.05, 0.0, 'float32')
    """
    check_delta(delta)
    dtype = stats.tandem.dtype
    dis = jnp.zeros_like(stats.tandem) if disagreement is None else disagreement
    numbers = (n, n2, delta, mu, 1.0, n2 if m_unlabeled is None else m_unlabeled)
    n_a, n2_a, delta_a, mu_a, n_mu, m_u = (jnp.asarray(x, dtype) for x in numbers)
    return BoundData(stats, n_a, n2_a, delta_a, mu_a, n_mu, jnp.asarray(dis, dtype), m_u)


class MinimizeResult(NamedTuple):
    """Outcome of a minimization.

    Attributes:
      rho: the posterior reached (the best met along the way).
      bound: the bound at ``rho`` (the certificate).
      values: ``(steps,)`` the bound at each step's ``rho`` (before its update).
      parameter: the free parameter at ``rho`` (``mu`` or ``lambda``; ``nan`` where none).
    """

    rho: jax.Array
    bound: jax.Array
    values: jax.Array
    parameter: jax.Array


def _posterior_and_kl(theta: jax.Array, log_prior: jax.Array):
    """``rho = softmax(ln pi + theta)`` and ``KL(rho||pi)`` (``pi > 0``)."""
    log_rho = jax.nn.log_softmax(log_prior + theta)
    rho = jnp.exp(log_rho)
    return rho, jnp.sum(rho * (log_rho - log_prior))


def _first_order(rho, kl, d):
    return so.first_order_kl(gibbs_risk(d.stats, rho), kl, d.n, d.delta)


def _tnd(rho, kl, d):
    return so.tnd_kl(tandem_risk(d.stats, rho), kl, d.n2, d.delta)


def _tnd_lambda(rho, kl, d):
    return so.tnd_lambda_optimal(tandem_risk(d.stats, rho), kl, d.n2, d.delta)


def _dis(rho, kl, d):
    dis = quadratic_form(d.disagreement, rho)
    return so.dis(gibbs_risk(d.stats, rho), dis, kl, d.n, d.m_unlabeled, d.delta)


def _cctnd(rho, kl, d):
    t, g = tandem_risk(d.stats, rho), gibbs_risk(d.stats, rho)
    return so.cctnd_optimal(t, g, kl, d.n, d.n2, d.delta)


def _ccpbb(rho, kl, d):
    mean, var = mu_tandem_risk(d.stats, rho, d.mu), mu_tandem_variance(d.stats, rho, d.mu)
    return so.ccpbb(mean, var, kl, d.n2, d.delta, d.mu, d.n_mu)


def _ccpbub(rho, kl, d):
    mean = mu_tandem_risk(d.stats, rho, d.mu)
    second = mu_tandem_second_moment(d.stats, rho, d.mu)
    return so.ccpbub(mean, second, kl, d.n2, d.delta, d.mu, d.n_mu)


def _split_kl(rho, kl, d):
    rates = ternary_rates(d.stats, rho)
    return so.split_kl_mu_tandem(*rates, kl, d.n2, d.delta, d.mu, d.n_mu)


def _informative_direction(value, surrogate):
    """``value`` where it is informative (below 1); where it is the trivial 1 (the C-bound at
    ``r_up >= 1/2``, a flat region), the value 1 with the gradient of ``surrogate``, a bound
    that decreases as the vote becomes informative (the role of the log-barrier on ``r - 1/2``
    in [VGHM21]'s learners)."""
    pushed = 1.0 + (surrogate - lax.stop_gradient(surrogate))
    return jnp.where(value < 1.0, value, pushed)


def _cbound_form(form):
    """The objective of one C-bound form of ``so.cbound_forms`` (Gibbs risk on ``n``, the
    pairs' joint error and split rate on ``n2``), with the first-order bound's direction where
    it is vacuous."""

    def objective(rho, kl, d):
        g, rates = gibbs_risk(d.stats, rho), ternary_rates(d.stats, rho)
        if form == "joint":
            value = so.cbound_joint(rates.both, rates.one, kl, d.n2, d.delta)
        else:
            bound = so.cbound_seeger if form == "seeger" else so.cbound_mcallester
            value = bound(g, rates.one, kl, d.n, d.n2, d.delta)
        return _informative_direction(value, so.first_order_kl(g, kl, d.n, d.delta, clip=False))

    objective.__name__ = objective.__qualname__ = f"_cbound_{form}"
    return objective


OBJECTIVES: dict[str, Callable] = {
    "first_order": _first_order,
    "tnd": _tnd,
    "tnd_lambda": _tnd_lambda,
    "dis": _dis,
    "cctnd": _cctnd,
    "ccpbb": _ccpbb,
    "split_kl": _split_kl,
    "cbound_seeger": _cbound_form("seeger"),
    "cbound_mcallester": _cbound_form("mcallester"),
    "cbound_joint": _cbound_form("joint"),
    "ccpbub": _ccpbub,
}


def _check_run(prior, data: BoundData, steps: int) -> None:
    check_posterior(prior, data.stats.tandem.shape[-1])
    if is_concrete(prior) and not (np.asarray(prior) > 0).all():
        raise ValueError("the prior must be > 0 on every voter (drop voters it excludes)")
    check_positive_int("steps", steps)


def _descend(objective, data, log_prior, theta, optimizer, steps):
    """``steps`` optimizer steps on the bound in ``theta`` (``run_optimizer``, one ``lax.scan``
    whose last pass evaluates the final ``theta``), keeping the best ``theta`` met; returns it,
    the ``(steps,)`` values before each step and the best value (the bound at that ``theta``).
    The bound appears once in the compiled program, in the scan's gradient."""

    def loss(theta, _):
        value = objective(*_posterior_and_kl(theta, log_prior), data)
        return value, value

    return run_optimizer(loss, theta, optimizer, steps, keep_best=True)


@functools.partial(jax.jit, static_argnames=("objective", "optimizer", "steps"))
def _minimize(objective, data, log_prior, theta0, optimizer, steps):
    theta, values, bound = _descend(objective, data, log_prior, theta0, optimizer, steps)
    rho, _ = _posterior_and_kl(theta, log_prior)
    return MinimizeResult(rho, bound, values, jnp.asarray(jnp.nan, values.dtype))


def minimize_bound(
    objective: str | Callable,
    data: BoundData,
    prior: ArrayLike,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 300,
    theta0: ArrayLike | None = None,
) -> MinimizeResult:
    """Minimize a bound over ``rho = softmax(ln pi + theta)`` with an optax optimizer.

    Args:
      objective: a name in ``OBJECTIVES`` or a hashable function ``(rho, kl, data) -> bound``.
      data: the statistics and numbers (``bound_data``).
      prior: ``(n,)`` prior ``pi``, positive on every voter.
      optimizer: any optax ``GradientTransformation`` (default ``DEFAULT_OPTIMIZER``,
        ``optax.rprop(0.05)``: the objective is deterministic, and sign-based steps settle the
        last digits that ``adam`` leaves moving); it is static: reuse the object to reuse the
        compilation.
      steps: number of steps (static).
      theta0: starting logits (default zeros, i.e. ``rho = pi``).

    Returns:
      ``MinimizeResult`` at the best ``rho`` met (the last one included).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.ensembles import error_matrix, loss_statistics
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> data = bound_data(loss_statistics(error_matrix(H, y)), 1000, 1000, 0.05)
      >>> result = minimize_bound("tnd", data, jnp.ones(3) / 3, steps=50)
      >>> round(float(result.values[0]), 4)  # TND at the uniform prior, the start
      0.8571
      >>> int(result.rho.argmax()), bool(result.bound < 0.1)  # onto the perfect voter
      (0, True)
    """
    _check_run(prior, data, steps)
    objective = OBJECTIVES[objective] if isinstance(objective, str) else objective
    optimizer = DEFAULT_OPTIMIZER if optimizer is None else optimizer
    dtype = data.stats.tandem.dtype
    log_prior = jnp.log(jnp.asarray(prior, dtype))
    theta0 = jnp.zeros_like(log_prior) if theta0 is None else jnp.asarray(theta0, dtype)
    return _minimize(objective, data, log_prior, theta0, optimizer, steps)


def minimize_over_mu(
    objective: str,
    data: BoundData,
    prior: ArrayLike,
    mu_grid: ArrayLike,
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 300,
) -> MinimizeResult:
    """``minimize_bound`` of ``"ccpbb"`` or ``"split_kl"`` at every ``mu`` of a grid fixed
    before seeing the data (one ``jax.vmap``), each at ``delta / len(mu_grid)`` (union bound),
    the best one kept; ``parameter`` is its ``mu``.

    ([WMLIS21] searches ``mu`` over a 400-point grid of ``(-1/2, 1/2)``.)

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.ensembles import error_matrix, loss_statistics
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> data = bound_data(loss_statistics(error_matrix(H, y)), 1000, 1000, 0.05)
      >>> mu_grid = jnp.array([0.0, 0.2])  # fixed in advance: delta / 2 each
      >>> result = minimize_over_mu("split_kl", data, jnp.ones(3) / 3, mu_grid, steps=50)
      >>> float(result.parameter), int(result.rho.argmax()), bool(result.bound < 0.1)  # the best mu
      (0.0, 0, True)
    """
    _check_run(prior, data, steps)
    mus = jnp.asarray(mu_grid, data.stats.tandem.dtype)
    grid = data._replace(n_mu=jnp.asarray(mus.shape[0], mus.dtype))
    results = jax.vmap(
        lambda mu: minimize_bound(objective, grid._replace(mu=mu), prior, optimizer, steps)
    )(mus)
    best = jnp.argmin(results.bound)
    return MinimizeResult(results.rho[best], results.bound[best], results.values[best], mus[best])


def _alternate(objective, update, data, log_prior, optimizer, outer, inner, parameter0):
    """The papers' scheme: ``inner`` optimizer steps at a fixed parameter, then the parameter's
    closed-form update at the new ``rho``, ``outer`` times."""

    def round_(carry, _):
        theta, parameter = carry
        fixed = functools.partial(objective, parameter=parameter)
        theta, values, _ = _descend(fixed, data, log_prior, theta, optimizer, inner)
        rho, kl = _posterior_and_kl(theta, log_prior)
        return (theta, update(rho, kl, data)), values

    start = (jnp.zeros_like(log_prior), parameter0)
    (theta, parameter), values = lax.scan(round_, start, None, length=outer)
    return theta, parameter, values.reshape(-1)


def _tnd_at_lambda(rho, kl, data, parameter):
    return so.tnd_lambda(tandem_risk(data.stats, rho), kl, data.n2, data.delta, parameter)


def _tnd_lambda_update(rho, kl, data):
    return so.tnd_optimal_lambda(tandem_risk(data.stats, rho), kl, data.n2, data.delta)


def _cctnd_at_mu(rho, kl, data, parameter):
    t, g = tandem_risk(data.stats, rho), gibbs_risk(data.stats, rho)
    return so.cctnd(t, g, kl, data.n, data.n2, data.delta, parameter)


def _cctnd_mu_update(rho, kl, data):
    t, g = tandem_risk(data.stats, rho), gibbs_risk(data.stats, rho)
    return so.cctnd_optimal_mu(t, g, kl, data.n, data.n2, data.delta)


@functools.partial(jax.jit, static_argnames=("scheme", "optimizer", "outer", "inner"))
def _run_scheme(scheme, data, log_prior, optimizer, outer, inner):
    objective, update = _SCHEMES[scheme]
    rho0, kl0 = _posterior_and_kl(jnp.zeros_like(log_prior), log_prior)
    theta, parameter, values = _alternate(
        objective, update, data, log_prior, optimizer, outer, inner, update(rho0, kl0, data)
    )
    rho, kl = _posterior_and_kl(theta, log_prior)  # the last round updated parameter at rho
    return MinimizeResult(rho, objective(rho, kl, data, parameter), values, parameter)


def _alternating(scheme, data, prior, optimizer, outer, inner) -> MinimizeResult:
    """The boundary of an alternating scheme (its checks, the default optimizer, the prior's
    log), then its compiled run."""
    _check_run(prior, data, outer * inner)
    optimizer = DEFAULT_OPTIMIZER if optimizer is None else optimizer
    log_prior = jnp.log(jnp.asarray(prior, data.stats.tandem.dtype))
    return _run_scheme(scheme, data, log_prior, optimizer, outer, inner)


_SCHEMES = {
    "tnd": (_tnd_at_lambda, _tnd_lambda_update),
    "cctnd": (_cctnd_at_mu, _cctnd_mu_update),
}


def tnd_alternating(
    data: BoundData,
    prior: ArrayLike,
    optimizer: optax.GradientTransformation | None = None,
    outer: int = 10,
    inner: int = 100,
) -> MinimizeResult:
    """Masegosa et al. (2020)'s minimization of the TND bound: alternately ``inner``
    gradient steps on ``tnd_lambda`` in ``rho`` at a fixed ``lambda`` and the closed-form
    ``lambda = tnd_optimal_lambda(rho)``. Returns the lambda-form bound at the final ``rho``
    and ``lambda`` (as the authors report it; ``tnd_kl`` there is never larger).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.ensembles import error_matrix, loss_statistics
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> data = bound_data(loss_statistics(error_matrix(H, y)), 1000, 1000, 0.05)
      >>> result = tnd_alternating(data, jnp.ones(3) / 3, outer=2, inner=25)
      >>> int(result.rho.argmax()), bool(result.bound < 0.1), bool(0 < result.parameter <= 1)
      (0, True, True)
    """
    return _alternating("tnd", data, prior, optimizer, outer, inner)


def cctnd_alternating(
    data: BoundData,
    prior: ArrayLike,
    optimizer: optax.GradientTransformation | None = None,
    outer: int = 10,
    inner: int = 100,
) -> MinimizeResult:
    """Wu et al. (2021)'s minimization of CCTND: alternately ``inner`` gradient steps on
    ``cctnd`` in ``rho`` at a fixed ``mu`` and the update ``mu = (G/2 - T) / (1/2 - G)`` at the
    new bounds on the tandem and Gibbs risks (``cctnd_optimal_mu``).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.ensembles import error_matrix, loss_statistics
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> data = bound_data(loss_statistics(error_matrix(H, y)), 1000, 1000, 0.05)
      >>> result = cctnd_alternating(data, jnp.ones(3) / 3, outer=2, inner=25)
      >>> int(result.rho.argmax()), bool(result.bound < 0.1), bool(result.parameter < 0.5)  # mu
      (0, True, True)
    """
    return _alternating("cctnd", data, prior, optimizer, outer, inner)
