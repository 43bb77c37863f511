"""Stochastic majority votes learned by minimizing a PAC-Bayes bound (zantedeschi2021).

Zantedeschi, Viallard, Morvant, Emonet, Habrard, Germain, Guedj, "Learning stochastic majority
votes by minimizing a PAC-Bayes generalization bound", NeurIPS 2021. The posterior is a
Dirichlet ``Dir(alpha)`` over the weights ``theta`` of the voters; the learned object is the
*stochastic* vote that draws ``theta ~ Dir(alpha)`` for every prediction, and the bound, with no
factor 2, is on its expected risk ``E_theta R(MV_theta)``. Its exact empirical value is
``mean_i I_{1/2}(a_i, b_i)`` (:func:`pacbound._src.stochastic_votes.stochastic_risks`), so the bound
(:data:`pacbound.certify.STOCHASTIC_BOUNDS`) is a differentiable objective.

**Voters and complements.** The learner takes ``H`` as the user has it and weighs ``[H, -H]``
(the learner protocol), read implicitly. This is the paper's voter set for stumps: the
authors' stumps come "with both directions" (``2 M d`` stumps for ``M`` thresholds on ``d``
features, ``models/stumps.py`` of github.com/vzantedeschi/StocMV), i.e. every stump and its
complement, with the prior ``Dir(1, ..., 1)`` over all of them.

**Optimization.** ``alpha = exp(theta)`` (the paper's parameterization: always positive), any
optax optimizer in one jitted ``lax.scan`` on the full sample, from ``alpha`` = the prior
(``KL = 0``; the authors draw ``alpha ~ U(0, 2]``, whose mean is their prior 1), keeping the
``alpha`` of the smallest bound met (the authors keep their best epoch). The default optimizer
is the paper's Adam with learning rate 0.1. The authors also divide the rate by 10 after 2
*epochs* of 1024-example minibatches without a relative improvement of ``1e-4`` (PyTorch's
``ReduceLROnPlateau``); :data:`PAPER_OPTIMIZER` is that rule applied per full-sample step, which
stops the descent early on all but the smallest samples (it is the paper's exact schedule only
when ``m <= 1024``, one minibatch per epoch), so it is not the default. ``risk="monte_carlo"``
descends the paper's sampled sigmoid relaxation instead of the exact risk (in the paper, for
any number of classes; here an objective for comparison, the certificate is exact).

**The margin bound** (``bound="margin"``, biggs2022; :func:`pacbound.bounds.dirichlet_margin`).
The learned object is then the *deterministic* vote of ``q = alpha / sum(alpha)``, and
``alpha = K q`` is the Dirichlet of the proof. The objective is the bound's step before the
deterministic margin loss (steps 3-4 of :func:`pacbound.bounds.dirichlet_margin`), itself a
bound on ``R(MV_q)``, exact and differentiable through the incomplete beta function (the
authors' training objective, ``margin_loss_binary`` and ``margin_bound`` of their
``core/losses.py`` and ``core/bounds.py``, with the concentration term derived here):

.. math:: kl^{-1}_{up}\\Big(\\frac1m \\sum_i I_{1/2 + \\gamma/4}(a_i, b_i),
          \\frac{KL(Dir(\\alpha) \\| Dir(\\beta)) + \\ln(2\\sqrt m / \\delta)}{m}\\Big)
          + e^{-(\\alpha_0 + 1)\\gamma^2 / 8}

(``I_{1/2 + gamma/4}(a_i, b_i) = P_{rho ~ Dir(alpha)}[M_rho <= gamma / 2]``) at one
threshold ``gamma`` (traced, so ``jax.vmap`` sweeps it; the authors train at one ``gamma``
too). Not the minimum over a grid: from the prior (every margin 0) each threshold's value is
near 1 and the minimum sits at the largest threshold, where the loss saturates at 1 and the
descent stalls (measured). The certificate
(``info.certified``) is the registered ``"dirichlet_margin"`` bound on ``q``'s vote: the
theorem, from the deterministic margin loss, over ``gamma_grid`` and the concentrations of
:meth:`pacbound.certify.Bound.dirichlet_margin` with ``sum(alpha)`` added; the result is a
categorical posterior (``certify(r, H, y, bounds=["dirichlet_margin"])`` recomputes it for
the default prior).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.typing import ArrayLike

from pacbound._src.bounds import seeger
from pacbound._src.bounds.margin import margin_tail
from pacbound._src.certify import (
    BOUNDS,
    STOCHASTIC_BOUNDS,
    Bound,
    StochasticStatistics,
    VoteStatistics,
    dirichlet_margin_statistics,
)
from pacbound._src.dirichlet import DEFAULT_SLOPE, check_concentration, dirichlet_kl, voter_errors
from pacbound._src.learning.bound_objective import run_optimizer
from pacbound._src.protocol import Family, LearnerResult, learner_status, votes_matrix
from pacbound._src.special import betainc
from pacbound._src.stochastic_votes import certify_dirichlet, vote_weights
from pacbound._src.validation import (
    check_delta,
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_votes,
    float_dtype,
    is_concrete,
)

__all__ = [
    "DEFAULT_OPTIMIZER",
    "PAPER_OPTIMIZER",
    "RISKS",
    "DirichletInfo",
    "minimize_dirichlet_bound",
]

RISKS = ("exact", "monte_carlo")

DEFAULT_OPTIMIZER = optax.adam(0.1)
"""zantedeschi2021's optimizer and learning rate (``config/real.yaml`` of the authors' code)."""

PAPER_OPTIMIZER = optax.chain(
    optax.adam(0.1), optax.contrib.reduce_on_plateau(factor=0.1, patience=2)
)
"""Adam(0.1) with the authors' plateau rule (``real.py``: ``ReduceLROnPlateau(factor=0.1,
patience=2)``) counted in optimizer steps instead of epochs (module docstring)."""


class DirichletInfo(NamedTuple):
    """What :func:`minimize_dirichlet_bound` adds to the :class:`LearnerResult`.

    The result's ``family`` is ``Family.DIRICHLET``: :func:`pacbound.certify.certify` knows
    that ``q`` is only the mean of the posterior (it refuses the result and points to
    :func:`pacbound.certify.certify_dirichlet`).

    Attributes:
      alpha: ``(2n,)`` the posterior's concentrations over ``[H, -H]``.
      certified: the bound at ``alpha`` on the sample (the examples of positive weight), by
        :func:`pacbound.certify.certify_dirichlet` (float64 at the Python boundary):
        a bound on the stochastic vote's expected risk.
      risk: the exact empirical expected risk ``E_theta R_S(MV_theta)`` at ``alpha``.
      kl: ``KL(Dir(alpha) || Dir(beta))``.
      trajectory: ``(max_iter,)`` the objective before each step (a Monte Carlo estimate with
        ``risk="monte_carlo"``).
    """

    alpha: jax.Array
    certified: jax.Array
    risk: jax.Array
    kl: jax.Array
    trajectory: jax.Array


MARGIN = "dirichlet_margin"
DEFAULT_GAMMA_GRID = tuple(float(g) for g in np.geomspace(0.01, 1.0, 20))
"""The learner's margin thresholds for ``bound="margin"``: 20 values geometric in
``[0.01, 1]`` (``delta / 20`` each)."""


def _bound_name(bound: str) -> str:
    if bound in ("margin", MARGIN):
        return MARGIN
    name = bound if bound in STOCHASTIC_BOUNDS else f"dirichlet_{bound}"
    if name not in STOCHASTIC_BOUNDS:
        choices = (*(b.removeprefix("dirichlet_") for b in STOCHASTIC_BOUNDS), "margin")
        raise ValueError(f"unknown stochastic bound {bound!r}; choose one of {choices}")
    return name


def _risk(errors, alpha, v, draws):
    """The empirical risk at ``alpha``: exact (``draws`` is ``None``) or the paper's sigmoid
    relaxation averaged over the Dirichlet ``draws = (key, T, slope)``
    (:func:`pacbound._src.dirichlet.monte_carlo_risk`, here over ``[H, -H]``)."""
    if draws is None:
        wrong, right = vote_weights(errors, alpha)
        return v @ betainc(right, wrong, jnp.asarray(0.5, alpha.dtype))
    key, num_samples, slope = draws
    theta = jax.random.dirichlet(key, alpha, (num_samples,), dtype=alpha.dtype)
    wrong, _ = vote_weights(errors, theta)  # (T, m)
    return v @ jnp.mean(jax.nn.sigmoid(slope * (wrong - 0.5)), 0)


def _margin_objective(errors, alpha, v, prior, count, delta, gamma):
    """``(bound, stochastic margin loss, KL)`` at the threshold ``gamma`` (module docstring,
    "The margin bound")."""
    wrong, right = vote_weights(errors, alpha)
    loss = v @ betainc(right, wrong, 0.5 + gamma / 4.0)
    kl = dirichlet_kl(alpha, prior)
    return seeger(loss, kl, count, delta) + margin_tail(jnp.sum(alpha), gamma), loss, kl


@functools.partial(
    jax.jit, static_argnames=("bound", "risk", "optimizer", "max_iter", "num_samples")
)
def _minimize(
    H, y, v, prior, delta, key, slope, gamma, *, bound, risk, optimizer, max_iter, num_samples
):
    errors = voter_errors(H, y, prior.dtype)
    count = jnp.sum(v > 0).astype(prior.dtype)
    v = v / jnp.sum(v)
    if bound == MARGIN:

        def margin_loss_fn(theta, t):
            out, empirical, kl = _margin_objective(
                errors, jnp.exp(theta), v, prior, count, delta, gamma
            )
            return out, (out, (empirical, kl))

        theta, trajectory, best = run_optimizer(
            margin_loss_fn, jnp.log(prior), optimizer, max_iter, keep_best=True
        )
        final, (empirical, kl) = best
        return jnp.exp(theta), final, empirical, kl, trajectory
    bound_value = STOCHASTIC_BOUNDS[bound].value

    def objective(empirical, kl):
        return bound_value(None, StochasticStatistics(empirical, kl, count), delta, jnp.nan)

    def loss_fn(theta, t):
        alpha = jnp.exp(theta)
        kl = dirichlet_kl(alpha, prior)
        if risk == "exact":  # the certificate's statistics come out of the scan with the best
            empirical = _risk(errors, alpha, v, None)
            out = objective(empirical, kl)
            return out, (out, (empirical, kl))
        draws = (jax.random.fold_in(key, t), num_samples, slope)
        out = objective(_risk(errors, alpha, v, draws), kl)
        return out, out

    theta, trajectory, best = run_optimizer(
        loss_fn, jnp.log(prior), optimizer, max_iter, keep_best=True
    )
    alpha = jnp.exp(theta)
    if risk == "exact":
        certified, (empirical, kl) = best
        return alpha, certified, empirical, kl, trajectory
    empirical = _risk(errors, alpha, v, None)  # the exact risk at the relaxation's best alpha
    kl = dirichlet_kl(alpha, prior)
    return alpha, objective(empirical, kl), empirical, kl, trajectory


@jax.jit
def _margin_certificate(alpha, H, y, prior, delta, rows, gammas):
    """The registered ``"dirichlet_margin"`` bound on the vote of ``q = alpha / sum(alpha)``
    with the prior ``Dir(prior)``, over ``gammas`` and the default concentrations with
    ``sum(alpha)``, clipped to 1."""
    q = alpha / jnp.sum(alpha)
    n = H.shape[1]
    ks = jnp.concatenate([Bound.dirichlet_margin(gammas).c_grid.astype(q.dtype), alpha.sum()[None]])
    bound = Bound.dirichlet_margin(gammas, ks)
    margins = y * jnp.matmul(H, q[:n] - q[n:], precision=jax.lax.Precision.HIGHEST)
    slack = 2.0 * (n + 4) * float(jnp.finfo(q.dtype).eps) / 2.0
    losses, kls = dirichlet_margin_statistics(margins, rows, q, prior, bound, slack)
    nan = jnp.full((), jnp.nan, q.dtype)
    stats = VoteStatistics(nan, nan, nan, nan, jnp.sum(rows), None, None, None, losses, kls)
    return jnp.minimum(BOUNDS[MARGIN].value(bound, stats, delta, nan), 1.0)


def _certified_margin(alpha, H, y, prior, delta, rows, gammas) -> Any:
    """:func:`_margin_certificate`, in float64 for concrete inputs (as ``certify``)."""
    rows = jnp.ones(jnp.shape(y), alpha.dtype) if rows is None else rows
    args = (alpha, H, y, prior, delta, rows, gammas)
    if not is_concrete(*args):
        return _margin_certificate(*(jnp.asarray(a, alpha.dtype) for a in args))
    with jax.enable_x64(True):
        value = _margin_certificate(*(np.asarray(a, np.float64) for a in args))
        return np.asarray(value)


def _check(H, y, prior, delta, risk, max_iter, num_samples, sample_weight) -> None:
    if risk not in RISKS:
        raise ValueError(f"risk must be one of {RISKS}; got {risk!r}")
    check_votes(H, binary=True)
    m, n = jnp.shape(H)
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    check_delta(delta)
    check_positive_int("max_iter", max_iter)
    check_positive_int("num_samples", num_samples)
    if prior is not None:
        check_concentration(prior, "prior")
        if jnp.ndim(prior) == 1 and jnp.shape(prior) != (2 * n,):
            raise ValueError(f"prior must be a scalar or ({2 * n},), one per column of [H, -H]")


def _check_margin(risk: str, gamma: ArrayLike, gamma_grid: ArrayLike) -> None:
    if risk != "exact":
        raise ValueError("bound='margin' descends the exact stochastic margin loss: risk='exact'")
    for name, value in (("gamma", gamma), ("gamma_grid", gamma_grid)):
        if is_concrete(value):
            g = np.atleast_1d(np.asarray(value, np.float64))
            if g.ndim != 1 or not (np.isfinite(g).all() and (g > 0).all() and (g <= 1).all()):
                raise ValueError(f"{name} must hold thresholds in (0, 1]; got {g}")


def minimize_dirichlet_bound(
    voters: ArrayLike,
    y: ArrayLike,
    bound: str = "seeger",
    *,
    sample_weight: ArrayLike | None = None,
    prior: ArrayLike | None = None,
    optimizer: optax.GradientTransformation | None = None,
    max_iter: int = 300,
    tol: ArrayLike = 1e-4,
    delta: ArrayLike = 0.05,
    risk: str = "exact",
    key: jax.Array | None = None,
    num_samples: int = 10,
    slope: ArrayLike = DEFAULT_SLOPE,
    gamma: ArrayLike = 0.1,
    gamma_grid: ArrayLike | None = None,
) -> LearnerResult:
    """Learn a Dirichlet posterior over ``[H, -H]`` by minimizing a PAC-Bayes bound on the
    stochastic vote's expected risk (zantedeschi2021, Section 4; module docstring):

    .. math:: \\min_\\alpha \\; kl^{-1}_{up}\\Big(\\hat R_S(\\alpha),
              \\frac{KL(Dir(\\alpha) \\| Dir(\\beta)) + \\ln(2\\sqrt m/\\delta)}{m}\\Big),
              \\qquad \\hat R_S(\\alpha) = \\frac1m \\sum_i I_{1/2}(a_i(\\alpha), b_i(\\alpha))

    (``bound="seeger"``; ``"mcallester"``: ``hat R_S + sqrt((KL + ln(2 sqrt m / delta)) /
    (2m))``). Validates concrete inputs; traceable, so ``jax.vmap`` over ``delta``, ``prior``,
    ``sample_weight`` (0/1 fold masks), ``slope`` or ``key`` compiles once. One compilation per
    (shapes, ``bound``, ``risk``, ``optimizer`` object, ``max_iter``, ``num_samples``).

    Args:
      H: ``(m, n)`` votes in ``{-1, +1}``, as the user has them (the learner weighs
        ``[H, -H]``; the vote errs exactly when the wrong voters hold half the weight).
      y: ``(m,)`` labels in ``{-1, +1}``.
      bound: ``"seeger"`` (the paper's) or ``"mcallester"`` (a key of
        :data:`pacbound.certify.STOCHASTIC_BOUNDS`, with or without its ``dirichlet_`` prefix),
        or ``"margin"`` (``"dirichlet_margin"``): biggs2022's margin bound on the deterministic
        vote of ``q`` (module docstring, "The margin bound").
      sample_weight: ``(m,)`` example weights ``>= 0``: the empirical risk is their weighted
        mean and ``m`` counts the examples of positive weight, so a 0/1 mask is exactly that
        fold (the certificate is on the examples of positive weight).
      prior: ``beta``, the prior's concentrations: a scalar or ``(2n,)`` over ``[H, -H]``,
        positive, fixed before seeing the sample; default 1 on every voter (the paper's).
      optimizer: any optax ``GradientTransformation`` on ``ln alpha``; default
        :data:`DEFAULT_OPTIMIZER` (the paper's Adam, learning rate 0.1).
      max_iter: the number of optimizer steps (static; all of them run).
      tol: ``converged`` when the last step changed the objective by at most ``tol``
        (relative; ``False`` for ``max_iter = 1``).
      delta: confidence in ``(0, 1]``.
      risk: ``"exact"`` (the closed form) or ``"monte_carlo"`` (the paper's relaxation:
        ``num_samples`` Dirichlet draws per step, sigmoid of slope ``slope``; ``key`` draws).
      key: PRNG key of the Monte Carlo draws; default ``jax.random.key(0)``.
      num_samples: draws per step for ``risk="monte_carlo"`` (static; the paper's 10).
      slope: the sigmoid's slope ``c`` for ``risk="monte_carlo"`` (the paper's 100).
      gamma: ``bound="margin"``'s margin threshold in the objective, in ``(0, 1]`` (traced).
      gamma_grid: ``bound="margin"``'s margin thresholds of the certificate, ``k`` values in
        ``(0, 1]`` fixed before seeing the sample (``delta / k`` each; traced); default
        ``DEFAULT_GAMMA_GRID`` (20 values geometric in ``[0.01, 1]``).

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q = alpha / sum(alpha)`` over
      ``[H, -H]``, the posterior's *mean* (the certified object is the stochastic vote, not
      the vote of ``q``; :func:`pacbound._src.stochastic_votes.mean_vote_bound` bounds the latter);
      ``weights = q[:n] - q[n:]``; ``objective`` the bound (exact risk) at ``alpha`` (the
      smallest objective met) in the working precision; ``steps = max_iter``; ``info`` a
      :class:`DirichletInfo`.

    Raises:
      ValueError: votes outside ``{-1, +1}``, labels outside ``{-1, +1}``, a non-positive or
        non-finite prior, ``delta`` outside ``(0, 1]``, an unknown bound or risk,
        ``risk="monte_carlo"`` with ``bound="margin"``, a threshold outside ``(0, 1]``.

    Example::

        H = votes(fit_stumps(X, 10), X)
        r = minimize_dirichlet_bound(H, y)
        r.info.certified  # Seeger's bound on the stochastic vote's risk

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = minimize_dirichlet_bound(H, y, max_iter=20)
      >>> round(float(r.q.sum()), 4), 0.0 < float(r.objective) <= 1.0, int(r.steps)
      (1.0, True, 20)
    """
    H = votes_matrix(voters, "minimize_dirichlet_bound")
    name = _bound_name(bound)
    _check(H, y, prior, delta, risk, max_iter, num_samples, sample_weight)
    grid = np.asarray(DEFAULT_GAMMA_GRID) if gamma_grid is None else gamma_grid
    if name == MARGIN:
        _check_margin(risk, gamma, grid)
    dtype = float_dtype(H, y)
    m, n = jnp.shape(H)
    given_prior = prior
    prior = jnp.broadcast_to(jnp.asarray(1.0 if prior is None else prior, dtype), (2 * n,))
    H, y = jnp.asarray(H, dtype), jnp.asarray(y, dtype)
    v = jnp.ones(m, dtype) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    gammas = jnp.atleast_1d(jnp.asarray(grid, dtype))
    alpha, final, empirical, kl, trajectory = _minimize(
        H, y, v, prior, jnp.asarray(delta, dtype), jax.random.key(0) if key is None else key,
        jnp.asarray(slope, dtype), jnp.asarray(gamma, dtype), bound=name, risk=risk,
        optimizer=optimizer or DEFAULT_OPTIMIZER, max_iter=max_iter, num_samples=num_samples,
    )  # fmt: skip
    rows = None if sample_weight is None else (v > 0).astype(dtype)
    family = Family.DIRICHLET
    if name == MARGIN:
        certified = _certified_margin(alpha, H, y, prior, jnp.asarray(delta, dtype), rows, gammas)
        family = Family.CATEGORICAL  # the deterministic vote of q is the certified object
    else:
        certified = certify_dirichlet(
            alpha, H, y, prior=given_prior, bounds=[name], delta=delta, sample_weight=rows
        ).bounds[name]
    q = alpha / jnp.sum(alpha)
    info = DirichletInfo(alpha, certified, empirical, kl, trajectory)
    change = jnp.abs(trajectory[-1] - trajectory[max(max_iter - 2, 0)])
    converged = (max_iter > 1) & (change <= tol * jnp.abs(trajectory[-1]))
    steps = jnp.asarray(max_iter, jnp.int32)
    return LearnerResult(q, q[:n] - q[n:], final, steps, learner_status(converged), None,
                         jnp.int32(2 * n), jnp.int32(family), info)  # fmt: skip
