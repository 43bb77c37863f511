"""Every PAC-Bayes bound of an ensemble's weighted majority vote, at the uniform posterior and at
each bound's minimizer, out of bag or on a held-out split.

The everyday question about a forest (or any ensemble of ``n`` classifiers of ``C`` classes):
how good is its vote, certifiably, and how much does reweighting the members help? From the
members' predicted class indices on labeled examples, with an out-of-bag mask or on a held-out
set that no member saw:

* :func:`ensemble_statistics` -> :class:`EnsembleStatistics`: per-voter risks and tandem /
  pair-risk matrices (:func:`pacbound.ensembles.loss_statistics`), the sample sizes
  ``n = min_j |OOB_j|`` and ``n2 = min_{j,k} |OOB_j cap OOB_k|`` (Lorenzen, Igel, Seldin,
  Machine Learning 2019; ``n = n2 = m`` on a held-out set) and, for binary votes with extra
  unlabeled inputs, the disagreement matrix of the DIS bound. Computed once, in float64.
* :func:`certify_ensemble` ``(statistics, rho, delta)`` -> :class:`EnsembleCertificate`:
  every bound of :data:`BOUNDS` at ``rho`` (``ccpbub`` when named; each holds with probability
  ``1 - delta`` for all posteriors at once; ``best`` is the smallest at ``delta / K``, the
  union bound), in float64.
* :func:`optimize_posterior` ``(statistics, objective)``: ``rho`` minimizing one bound
  (:mod:`pacbound._src.second_order_minimize`; CCPBB, split-kl and CCPBUB over the data-independent
  :data:`MU_GRID` with the union bound ``delta / len(MU_GRID)``).
* :func:`ensemble_report`: the uniform posterior and each objective's minimizer, each
  certified by every bound, with the test risk of its majority vote and the time it took.

The bounds (:mod:`pacbound._src.bounds.second_order`), with the uniform prior ``pi`` over the ``n``
members and ``KL = KL(rho||pi)``:

* ``first_order``: ``2 kl^-1_up(L_hat(rho), (KL + ln(2 sqrt(n)/delta)) / n)`` (Seeger 2002;
  Langford and Shawe-Taylor 2002);
* ``tnd``: ``4 kl^-1_up(T_hat(rho), (2KL + ln(2 sqrt(n2)/delta)) / n2)`` (Masegosa et al.,
  NeurIPS 2020, the tandem loss);
* ``dis``: binary votes with unlabeled data, ``4 kl^-1_up(L_hat) - 2 kl^-1_low(D_hat)``
  (Masegosa et al. 2020);
* ``cctnd``: ``(T_up - 2 mu L_low/up + mu^2) / (1/2 - mu)^2`` at its best ``mu`` (Wu et al.,
  NeurIPS 2021, Chebyshev-Cantelli with PAC-Bayes-kl; valid for all ``mu`` at once);
* ``ccpbb``: Chebyshev-Cantelli with PAC-Bayes-Bennett on the mu-tandem loss (Wu et al. 2021,
  Thm 15), the best ``mu`` of :data:`MU_GRID` at ``delta / len(MU_GRID)``;
* ``split_kl``: Chebyshev-Cantelli with PAC-Bayes-split-kl on the mu-tandem loss (Wu and
  Seldin, NeurIPS 2022), the same grid;
* ``cbound_seeger``, ``cbound_mcallester``, ``cbound_joint``: the C-bound ``1 - (1 - 2r)^2 /
  (1 - 2d')`` in the PAC-Bayes forms of Viallard, Germain, Habrard, Morvant (ECML-PKDD 2021;
  :mod:`pacbound._src.bounds.second_order.cbound_forms`), with the Gibbs risk ``r`` (on ``n``)
  and, for any number of classes, the pairs' joint (tandem) error ``e`` and split rate ``d' =
  2(r - e)`` (exactly one of two voters errs; on ``n2``), the disagreement for two classes:
  ``C(r_up, d'_low)`` from kl-inverses (Seeger: PAC-Bound 1 of Germain et al. 2015 at ``n =
  n2``), from square-root deviations (McAllester: roy2016 Thm 2 at ``n = n2``), and the sup
  over a trinomial kl-ball on ``(e, d')`` (joint: PAC-Bound 2). Their minimizers are the
  direct C-bound minimization learners of that paper.
* ``ccpbub``: Chebyshev-Cantelli with PAC-Bayes-Unexpected-Bernstein on the mu-tandem loss
  (Mhammedi et al., NeurIPS 2019; Wu et al. 2021's CCPBUB), its second moment from each pair's
  shared examples, the same grid; computed only when named (``bounds=`` / ``objectives=``).

All of them bound the risk of ``MV_rho`` counting a tie as an error, for any number of classes
(an error of the vote means that at least half of ``rho``'s weight errs); ``dis`` needs binary
votes.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.scipy.special import xlogy

from pacbound._src import second_order_minimize as som
from pacbound._src.bounds import second_order as so
from pacbound._src.loss_statistics import (
    LossStatistics,
    check_posterior,
    disagreement_matrix,
    error_matrix,
    gibbs_risk,
    loss_statistics,
    mu_tandem_risk,
    mu_tandem_second_moment,
    mu_tandem_variance,
    quadratic_form,
    sample_sizes,
    tandem_risk,
    ternary_rates,
)
from pacbound._src.validation import check_delta, check_positive_int

__all__ = [
    "BOUNDS",
    "MU_GRID",
    "EnsembleCertificate",
    "EnsembleReport",
    "EnsembleStatistics",
    "PosteriorRow",
    "certify_ensemble",
    "ensemble_report",
    "ensemble_statistics",
    "majority_vote_risk",
    "optimize_posterior",
]

BOUNDS = (
    "first_order", "tnd", "dis", "cctnd", "ccpbb", "split_kl",
    "cbound_seeger", "cbound_mcallester", "cbound_joint", "ccpbub",
)  # fmt: skip
_CBOUND_FORMS = {
    "cbound_seeger": so.cbound_seeger,
    "cbound_mcallester": so.cbound_mcallester,
}
# data-independent grid of mu for CCPBB, split-kl and CCPBUB (40 values in [-1/2, 1/2), step
# 1/40)
MU_GRID = np.round(np.arange(-0.5, 0.5, 0.025), 4)
_GRID_BOUNDS = ("ccpbb", "split_kl", "ccpbub")
_ON_REQUEST = ("ccpbub",)  # computed only when named (each bound adds a compiled program)
_RPROP = optax.rprop(0.05)  # one object: the minimizers' jit caches key on it


class EnsembleStatistics(NamedTuple):
    """What every bound reads from the labeled (and unlabeled) sample, in float64 (NumPy).

    Attributes:
      stats: :class:`~pacbound.ensembles.LossStatistics` of the error matrix (per-voter
        risks on each voter's evaluated examples, tandem and pair-risk matrices, pair counts).
      n: ``min_j`` of the examples voter ``j`` is evaluated on (``|OOB_j|``).
      n2: ``min_{j,k}`` of the examples voters ``j`` and ``k`` share.
      n_classes: ``C``.
      disagreement: ``(n, n)`` disagreement matrix on the labeled and unlabeled inputs (binary
        votes given unlabeled inputs), else ``None``.
      m_unlabeled: the disagreement's sample size (``min`` pair count), else ``None``.
    """

    stats: LossStatistics
    n: int
    n2: int
    n_classes: int
    disagreement: np.ndarray | None
    m_unlabeled: int | None


def _check_indices(name: str, values: Any, n_classes: int, ndim: int) -> np.ndarray:
    values = np.asarray(values)
    if values.ndim != ndim or 0 in values.shape:
        raise ValueError(f"{name} must be a non-empty {ndim}-D array; got shape {values.shape}")
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"{name} must hold integer class indices; got dtype {values.dtype}")
    if values.min() < 0 or values.max() >= n_classes:
        raise ValueError(f"{name} must hold class indices in 0..{n_classes - 1}")
    return values


def _disagreement(predictions, mask, unlabeled, n_classes):
    """``(D, m')`` on the labeled rows (their mask) and the unlabeled rows (all evaluated)."""
    if n_classes != 2:
        raise ValueError(f"the DIS bound is for binary votes; these have {n_classes} classes")
    unlabeled = _check_indices("unlabeled", unlabeled, n_classes, 2)
    if unlabeled.shape[1] != predictions.shape[1]:
        raise ValueError(f"unlabeled must have {predictions.shape[1]} columns (one per voter)")
    rows = np.concatenate([predictions, unlabeled])
    seen = np.ones(predictions.shape, bool) if mask is None else np.asarray(mask, bool)
    seen = np.concatenate([seen, np.ones(unlabeled.shape, bool)])
    D = disagreement_matrix(rows, jnp.arange(n_classes), mask=seen, dtype=jnp.float64)
    return np.asarray(D), sample_sizes(seen)[1]


def ensemble_statistics(
    predictions: Any,
    labels: Any,
    n_classes: int,
    *,
    mask: Any = None,
    unlabeled: Any = None,
) -> EnsembleStatistics:
    """The statistics of an ensemble's votes on labeled examples, in float64.

    Args:
      predictions: ``(m, n)`` integer class indices ``h_j(x_i)`` (e.g.
        :attr:`pacbound._src.voters.ensembles.EnsembleVoters.predictions`).
      labels: ``(m,)`` integer class indices of the true labels.
      n_classes: ``C >= 2``.
      mask: ``(m, n)`` out-of-bag mask (``True`` where voter ``j`` may be evaluated on example
        ``i``), or ``None``: a held-out set every voter may be evaluated on.
      unlabeled: ``(m', n)`` class indices on unlabeled inputs no voter was trained on (binary
        votes only): enables the DIS bound.

    Raises:
      ValueError: indices out of range, mismatched shapes, a voter (or pair) with no evaluated
        example, or unlabeled inputs for more than two classes.

    Example:
      >>> import numpy as np
      >>> P = np.tile(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]]), (250, 1))  # m = 1000
      >>> stats = ensemble_statistics(P, np.tile(np.array([1, 1, 0, 1]), 250), 2)  # 2 classes
      >>> stats.n, stats.n2, stats.stats.risks.tolist()  # held out: n = n2 = m
      (1000, 1000, [0.0, 0.5, 0.5])
    """
    check_positive_int("n_classes", n_classes)
    if n_classes < 2:
        raise ValueError("n_classes must be at least 2")
    predictions = _check_indices("predictions", predictions, n_classes, 2)
    labels = _check_indices("labels", labels, n_classes, 1)
    if labels.shape != predictions.shape[:1]:
        raise ValueError(f"labels must have shape ({predictions.shape[0]},); got {labels.shape}")
    with jax.enable_x64(True):
        errors = error_matrix(predictions, labels, jnp.float64)
        mask_ = None if mask is None else np.asarray(mask, np.float64)
        stats = jax.tree.map(np.asarray, loss_statistics(errors, mask=mask_))
        n, n2 = sample_sizes(mask_, m=predictions.shape[0])
        D, m_u = (None, None)
        if unlabeled is not None:
            D, m_u = _disagreement(predictions, mask, unlabeled, n_classes)
    return EnsembleStatistics(stats, n, n2, n_classes, D, m_u)


# ------------------------------------------------------------------------ certificates
class EnsembleCertificate(NamedTuple):
    """Bounds on the risk of ``MV_rho`` (a tie counts as an error).

    Attributes:
      bounds: ``{name: value}``, each holding with probability ``1 - delta`` on its own.
      parameters: ``{name: mu}`` the ``mu`` reached by ``cctnd``, ``ccpbb``, ``split_kl`` and
        ``ccpbub``.
      best: ``(name, value)``: the smallest bound recomputed at ``delta / K`` for the ``K``
        bounds compared (the union bound): it holds with probability ``1 - delta``.
      gibbs_risk: ``E_rho[L_hat(h)]``; ``tandem_risk``: ``E_{rho^2}[L_hat(h, h')]``;
      disagreement: ``E_{rho^2}[D_hat(h, h')]`` (``nan`` without unlabeled data); ``kl``:
        ``KL(rho||uniform)``; ``n``, ``n2``, ``delta``: as used.
    """

    bounds: dict[str, float]
    parameters: dict[str, float]
    best: tuple[str, float]
    gibbs_risk: float
    tandem_risk: float
    disagreement: float
    kl: float
    n: int
    n2: int
    delta: float


def _grid_values(name, stats, rho, kl, n2, delta, mu_grid):
    """CCPBB, split-kl or CCPBUB at each ``mu`` of the grid, each at ``delta / len(grid)``."""
    k = mu_grid.shape[0]
    if name == "split_kl":
        rates = ternary_rates(stats, rho)
        return so.split_kl_mu_tandem(*rates, kl, n2, delta, mu_grid, k)
    means = jax.vmap(lambda mu: mu_tandem_risk(stats, rho, mu))(mu_grid)
    if name == "ccpbub":
        seconds = jax.vmap(lambda mu: mu_tandem_second_moment(stats, rho, mu))(mu_grid)
        return so.ccpbub(means, seconds, kl, n2, delta, mu_grid, k)
    variances = jax.vmap(lambda mu: mu_tandem_variance(stats, rho, mu))(mu_grid)
    return so.ccpbb(means, variances, kl, n2, delta, mu_grid, k)


@functools.partial(jax.jit, static_argnames="names")
def _bound_values(stats, rho, n, n2, delta, mu_grid, disagreement, m_unlabeled, names):
    """``{name: (bound, mu)}`` at ``rho`` against the uniform prior (``mu = nan`` if none)."""
    kl = jnp.maximum(jnp.sum(xlogy(rho, rho)) + jnp.log(rho.shape[0]), 0.0)  # no -1e-16
    g, t = gibbs_risk(stats, rho), tandem_risk(stats, rho)
    nan = jnp.full((), jnp.nan, rho.dtype)
    out = {}
    for name in names:
        if name == "first_order":
            out[name] = (so.first_order_kl(g, kl, n, delta), nan)
        elif name == "tnd":
            out[name] = (so.tnd_kl(t, kl, n2, delta), nan)
        elif name == "dis":
            d = quadratic_form(disagreement, rho)
            out[name] = (so.dis(g, d, kl, n, m_unlabeled, delta), nan)
        elif name == "cctnd":
            mu = so.cctnd_optimal_mu(t, g, kl, n, n2, delta)
            out[name] = (so.cctnd(t, g, kl, n, n2, delta, mu), mu)
        elif name in _CBOUND_FORMS:
            split = ternary_rates(stats, rho).one
            out[name] = (_CBOUND_FORMS[name](g, split, kl, n, n2, delta), nan)
        elif name == "cbound_joint":  # its rates here, the bound in _joint_bound
            rates = ternary_rates(stats, rho)
            out[name] = (jnp.stack([rates.both, rates.one]), nan)
        else:
            values = _grid_values(name, stats, rho, kl, n2, delta, mu_grid)
            out[name] = (jnp.min(values), mu_grid[jnp.argmin(values)])
    return out, (g, t, kl)


def _joint_bound(rates, kl, n2, delta):
    """``cbound_joint`` at the ``(both, one)`` rates of ``_bound_values``, outside its jit: its
    certified trinomial search (:func:`pacbound.cbound.cbound_trinomial_sup`, jitted on
    scalars) compiles once per process and dtype, shared with ``pac_bound_2``, not once per
    ensemble size."""
    return so.cbound_joint(rates[0], rates[1], kl, n2, delta)


def _certified_values(*args, delta, names) -> tuple[dict[str, tuple], tuple]:
    """``_bound_values`` with the joint form's bound computed from its rates."""
    stats, rho, n, n2, *rest = args
    values, statistics = _bound_values(stats, rho, n, n2, delta, *rest, names)
    if "cbound_joint" in names:
        rates, nan = values["cbound_joint"]
        values["cbound_joint"] = (_joint_bound(rates, statistics[2], n2, delta), nan)
    return values, statistics


def _checked_names(statistics: EnsembleStatistics, bounds: Sequence[str] | None) -> tuple:
    has_dis = statistics.disagreement is not None
    if bounds is None:
        return tuple(b for b in BOUNDS if (b != "dis" or has_dis) and b not in _ON_REQUEST)
    names = tuple(bounds)
    unknown = sorted(set(names) - set(BOUNDS))
    if unknown or not names or len(set(names)) < len(names):
        raise ValueError(f"bounds must name distinct bounds among {BOUNDS}; got {list(names)}")
    if "dis" in names and not has_dis:
        raise ValueError("the DIS bound needs binary votes and unlabeled inputs (unlabeled=)")
    return names


def _check_grid(mu_grid: Any) -> np.ndarray:
    grid = np.asarray(mu_grid, np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.isfinite(grid).all() or grid.max() >= 0.5:
        raise ValueError("mu_grid must be a non-empty 1-D array of finite values below 1/2")
    return grid


def certify_ensemble(
    statistics: EnsembleStatistics,
    rho: Any,
    *,
    delta: float = 0.05,
    bounds: Sequence[str] | None = None,
    mu_grid: Any = MU_GRID,
) -> EnsembleCertificate:
    """Every bound of ``bounds`` (default: :data:`BOUNDS` but ``ccpbub``, ``dis`` when
    available) on the risk of ``MV_rho``, in float64, with the uniform prior over the voters.

    Each value holds with probability at least ``1 - delta`` over the sample, for all ``rho``
    at once (so ``rho`` may come from the same sample), provided ``delta``, the bound and
    ``mu_grid`` were fixed beforehand; ``best`` pays ``delta / K`` for choosing among ``K``.

    Args:
      statistics: from :func:`ensemble_statistics`.
      rho: ``(n,)`` posterior over the voters, a distribution.
      delta: confidence in ``(0, 1]``.
      bounds: names among :data:`BOUNDS`.
      mu_grid: the data-independent ``mu`` values of ``ccpbb``, ``split_kl`` and ``ccpbub``
        (union bound).

    Raises:
      ValueError: ``delta`` outside ``(0, 1]``, ``rho`` not a distribution over the ``n``
        voters, an unknown bound, or ``dis`` without unlabeled data.

    Example:
      >>> import numpy as np
      >>> P = np.tile(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]]), (250, 1))  # m = 1000
      >>> stats = ensemble_statistics(P, np.tile(np.array([1, 1, 0, 1]), 250), 2)  # 2 classes
      >>> cert = certify_ensemble(stats, np.ones(3) / 3)  # the uniform vote
      >>> {name: round(v, 4) for name, v in cert.bounds.items()}  # doctest: +NORMALIZE_WHITESPACE
      {'first_order': 0.7821, 'tnd': 0.8571, 'cctnd': 0.8453, 'ccpbb': 0.8705, 'split_kl': 0.8736,
       'cbound_seeger': 0.8951, 'cbound_mcallester': 0.9055, 'cbound_joint': 0.8472}
      >>> round(cert.gibbs_risk, 4), round(cert.tandem_risk, 4)
      (0.3333, 0.1667)
    """
    check_delta(delta)
    n_voters = statistics.stats.risks.shape[0]
    check_posterior(rho, n_voters)
    names, grid = _checked_names(statistics, bounds), _check_grid(mu_grid)
    rho = np.asarray(rho, np.float64)
    rho = rho / rho.sum()
    with jax.enable_x64(True):
        D = statistics.disagreement
        args = (
            jax.tree.map(jnp.asarray, statistics.stats), jnp.asarray(rho),
            *(jnp.asarray(x, jnp.float64) for x in (statistics.n, statistics.n2)),
        )  # fmt: skip
        rest = (jnp.asarray(grid), jnp.zeros((n_voters,) * 2) if D is None else jnp.asarray(D))
        m_u = jnp.asarray(statistics.m_unlabeled or 1, jnp.float64)
        values, (g, t, kl) = _certified_values(*args, *rest, m_u, delta=delta, names=names)
        union, _ = _certified_values(*args, *rest, m_u, delta=delta / len(names), names=names)
        dis = quadratic_form(D, rho) if D is not None else jnp.nan
        at_union = {k: float(union[k][0]) for k in names}
    best = min(at_union, key=lambda k: at_union[k])
    return EnsembleCertificate(
        {k: float(values[k][0]) for k in names},
        {k: float(values[k][1]) for k in names if k in ("cctnd", *_GRID_BOUNDS)},
        (best, at_union[best]), float(g), float(t), float(dis), float(kl),
        statistics.n, statistics.n2, float(delta),
    )  # fmt: skip


# ------------------------------------------------------------------------- minimizers
def optimize_posterior(
    statistics: EnsembleStatistics,
    objective: str,
    *,
    delta: float = 0.05,
    mu_grid: Any = MU_GRID,
    steps: int = 1000,
    optimizer: optax.GradientTransformation | None = None,
    dtype: Any = jnp.float32,
) -> som.MinimizeResult:
    """The posterior minimizing one bound of :data:`BOUNDS` over ``rho = softmax(theta)``
    (:func:`pacbound.ensembles.minimize_bound`, ``steps`` optimizer steps from the
    uniform ``rho``; ``ccpbb``, ``split_kl`` and ``ccpbub`` at each ``mu`` of ``mu_grid`` with
    ``delta / len(mu_grid)``, the best kept: ``minimize_over_mu``).

    Computes in ``dtype`` (float32 by default: certify the result with
    :func:`certify_ensemble`, which recomputes every bound in float64).

    Args:
      statistics: from :func:`ensemble_statistics`.
      objective: a name of :data:`BOUNDS`.
      delta: confidence in ``(0, 1]``; mu_grid, steps, optimizer: as in
        :mod:`pacbound._src.second_order_minimize` (default optimizer ``optax.rprop(0.05)``).
      dtype: the working float dtype.

    Example:
      >>> import numpy as np
      >>> P = np.tile(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]]), (250, 1))  # m = 1000
      >>> stats = ensemble_statistics(P, np.tile(np.array([1, 1, 0, 1]), 250), 2)  # 2 classes
      >>> result = optimize_posterior(stats, "tnd", steps=50)
      >>> int(result.rho.argmax()), bool(result.bound < 0.1)  # weight on the perfect voter
      (0, True)
    """
    check_delta(delta)
    (name,) = _checked_names(statistics, [objective])
    grid = _check_grid(mu_grid)
    check_positive_int("steps", steps)
    cast = functools.partial(jnp.asarray, dtype=dtype)
    D = statistics.disagreement
    data = som.bound_data(
        jax.tree.map(cast, statistics.stats), statistics.n, statistics.n2, cast(delta),
        disagreement=None if D is None else cast(D), m_unlabeled=statistics.m_unlabeled,
    )  # fmt: skip
    n_voters = statistics.stats.risks.shape[0]
    prior = jnp.full((n_voters,), 1.0 / n_voters, dtype)
    optimizer = _RPROP if optimizer is None else optimizer
    if name in _GRID_BOUNDS:
        return som.minimize_over_mu(name, data, prior, cast(grid), optimizer, steps)
    return som.minimize_bound(name, data, prior, optimizer, steps)


# ---------------------------------------------------------------------------- report
class PosteriorRow(NamedTuple):
    """One posterior of :func:`ensemble_report`.

    Attributes:
      name: ``"uniform"`` or the bound it minimizes.
      rho: ``(n,)`` float64 posterior.
      certificate: every bound at ``rho`` (:class:`EnsembleCertificate`).
      test_risk: the risk of ``MV_rho`` on the test set (a tie counts as an error), or
        ``None`` without one.
      seconds: wall time of the minimization and the certificate (compilation included on a
        first call).
    """

    name: str
    rho: np.ndarray
    certificate: EnsembleCertificate
    test_risk: float | None
    seconds: float


class EnsembleReport(NamedTuple):
    """The rows of :func:`ensemble_report` and what they share (``n``, ``n2``, ``delta``,
    ``n_voters``, ``n_classes``, ``m_unlabeled``)."""

    rows: tuple[PosteriorRow, ...]
    n: int
    n2: int
    delta: float
    n_voters: int
    n_classes: int
    m_unlabeled: int | None


def majority_vote_risk(predictions: Any, labels: Any, rho: Any, n_classes: int) -> float:
    """Risk of ``MV_rho(x) = argmax_c sum_j rho_j 1[h_j(x) = c]`` on ``(predictions, labels)``
    (class indices), a tie of the true class with another counting as an error (what the
    bounds bound), in float64 with a ``1e-12`` tie tolerance.

    Example:
      >>> import numpy as np
      >>> P = np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]])  # class indices of 3 voters
      >>> majority_vote_risk(P, np.array([1, 1, 0, 1]), np.ones(3) / 3, 2)  # the third is wrong
      0.25
    """
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    rho = np.asarray(rho, np.float64)
    shares = np.stack([(predictions == c) @ rho for c in range(n_classes)], axis=1)
    true = shares[np.arange(len(labels)), labels]
    shares[np.arange(len(labels)), labels] = -np.inf
    return float(np.mean(true <= shares.max(axis=1) + 1e-12))


def ensemble_report(
    statistics: EnsembleStatistics,
    *,
    delta: float = 0.05,
    objectives: Sequence[str] | None = None,
    test: tuple[Any, Any] | None = None,
    mu_grid: Any = MU_GRID,
    steps: int = 1000,
) -> EnsembleReport:
    """The uniform posterior and the minimizer of each bound in ``objectives`` (default: every
    available bound), each certified by every bound, with its test risk and time.

    Args:
      statistics: from :func:`ensemble_statistics`.
      delta: confidence in ``(0, 1]`` of each bound.
      objectives: bounds to minimize (names of :data:`BOUNDS`).
      test: ``(predictions, labels)`` class indices on a test set, or ``None``.
      mu_grid, steps: as in :func:`optimize_posterior`.

    Example:
      >>> import numpy as np
      >>> P = np.tile(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1], [1, 1, 1]]), (250, 1))  # m = 1000
      >>> stats = ensemble_statistics(P, np.tile(np.array([1, 1, 0, 1]), 250), 2)  # 2 classes
      >>> report = ensemble_report(stats, objectives=["tnd"], steps=50)
      >>> [row.name for row in report.rows]  # the uniform vote, then TND's minimizer
      ['uniform', 'tnd']
      >>> [bool(row.certificate.bounds["tnd"] < 0.1) for row in report.rows]
      [False, True]
    """
    check_delta(delta)
    objectives = _checked_names(statistics, objectives)
    defaults = _checked_names(statistics, None)  # and the minimized bounds computed on request
    certified = (*defaults, *(b for b in objectives if b not in defaults))
    n_voters = statistics.stats.risks.shape[0]
    rows = []
    for name in ("uniform", *objectives):
        start = time.perf_counter()
        rho = np.full(n_voters, 1.0 / n_voters)
        if name != "uniform":
            result = optimize_posterior(statistics, name, delta=delta, mu_grid=mu_grid, steps=steps)
            rho = np.asarray(result.rho, np.float64)
        cert = certify_ensemble(
            statistics, rho / rho.sum(), delta=delta, bounds=certified, mu_grid=mu_grid
        )
        risk = None if test is None else majority_vote_risk(*test, rho, statistics.n_classes)
        rows.append(PosteriorRow(name, rho / rho.sum(), cert, risk, time.perf_counter() - start))
    return EnsembleReport(
        tuple(rows), statistics.n, statistics.n2, float(delta), n_voters,
        statistics.n_classes, statistics.m_unlabeled,
    )  # fmt: skip
