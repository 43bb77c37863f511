"""Stochastic majority votes with a Dirichlet posterior: risk, KL and PAC-Bayes bounds.

Zantedeschi, Viallard, Morvant, Emonet, Habrard, Germain, Guedj, "Learning stochastic majority
votes by minimizing a PAC-Bayes generalization bound", NeurIPS 2021 (zantedeschi2021). A
stochastic majority vote draws its voter weights ``theta ~ Dir(alpha)`` for every prediction;
its risk is the expected risk ``E_{theta ~ Dir(alpha)} R(MV_theta)``, which a PAC-Bayes bound
with a Dirichlet prior ``Dir(beta)`` controls directly, with no factor 2: the loss of
``theta`` is the 0-1 loss of ``MV_theta``, and Seeger's or McAllester's bound applies to it as
to any Gibbs loss. The constants below are those of the authors' code (``core/bounds.py`` of
github.com/vzantedeschi/StocMV: ``ln(2 sqrt(m) / delta)``, the KL of the Dirichlets).

* ``check_concentration(alpha)``: the boundary check (``ValueError`` on non-positive or
  non-finite concentrations); the functions below check nothing, so they trace.
* ``voter_errors(predictions, labels)``: the ``(m, n)`` 0/1 matrix ``1[h_j(x_i) != y_i]`` from
  ``+-1`` votes (or class indices) and labels.
* ``dirichlet_kl(alpha, beta)``: ``KL(Dir(alpha) || Dir(beta))``.
* ``exact_risks`` / ``exact_risk``: the expected risk per example / averaged, in closed form
  through the regularized incomplete beta function (``pacbound._src.special.betainc``).
* ``monte_carlo_risk``: the paper's sampled, sigmoid-relaxed risk (any number of classes).
* ``seeger_bound`` / ``mcallester_bound``: the bounds, as ``StochasticBound`` tuples.

Conventions. ``W_theta(x, y) = sum_j theta_j 1[h_j(x) != y]`` is the weight of the wrong
voters; the vote errs when ``W_theta >= 1/2`` (a tie counts as an error, as in the authors'
code). For two classes that is exactly the majority vote's error; for more classes it is an
upper bound on it (a class holding more than half the weight wins). Under ``Dir(alpha)`` with
both sums of concentrations positive, ``W_theta`` is continuous, so ties have probability 0 and
``>=`` or ``>`` give the same expected risk.

Everything is pure and jittable, differentiable in ``alpha`` (and the prior), vmappable over
``alpha``, ``delta`` and the prior concentration; float32 by default, float64 under x64.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, gammaln
from jax.typing import ArrayLike

from pacbound._src.bounds import mcallester, seeger
from pacbound._src.kl import round_up
from pacbound._src.special import betainc
from pacbound._src.validation import is_concrete

__all__ = [
    "StochasticBound",
    "check_concentration",
    "dirichlet_kl",
    "dirichlet_kl_upper",
    "exact_risk",
    "exact_risks",
    "mcallester_bound",
    "monte_carlo_risk",
    "seeger_bound",
    "voter_errors",
]

# The sigmoid's slope in zantedeschi2021's experiments (the authors' config/real.yaml).
DEFAULT_SLOPE = 100.0


class StochasticBound(NamedTuple):
    """A bound on the expected risk ``E_{theta ~ Dir(alpha)} R(MV_theta)`` and its parts.

    Attributes:
      bound: the bound (a certificate when ``risk`` is the exact empirical risk).
      risk: the empirical expected risk it was computed from.
      kl: ``KL(Dir(alpha) || Dir(beta))``.
    """

    bound: jax.Array
    risk: jax.Array
    kl: jax.Array


def check_concentration(alpha: ArrayLike, name: str = "alpha") -> None:
    """Raise ``ValueError`` unless ``alpha`` is a non-empty vector (or a scalar) of finite,
    positive concentrations. Shapes are always checked, values only on concrete arrays (under
    ``jit``/``vmap`` the caller checks before tracing).

    Example:
      >>> import numpy as np
      >>> check_concentration(np.array([1.0, 2.0]))
      >>> check_concentration(np.array([1.0, 0.0]))
      Traceback (most recent call last):
        ...
      ValueError: alpha must be > 0 (Dirichlet concentrations); min 0
    """
    if np.ndim(alpha) > 1 or jnp.size(alpha) == 0:
        raise ValueError(f"{name} must be a non-empty vector; got shape {np.shape(alpha)}")
    if not is_concrete(alpha):
        return
    values = np.asarray(alpha, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} has NaN or inf entries")
    if not (values > 0).all():
        raise ValueError(f"{name} must be > 0 (Dirichlet concentrations); min {values.min():g}")


def voter_errors(predictions: ArrayLike, labels: ArrayLike, dtype=None) -> jax.Array:
    """``E[i, j] = 1[h_j(x_i) != y_i]``: the ``(m, n)`` error matrix of ``n`` voters.

    Args:
      predictions: ``(m, n)`` votes, ``+-1`` for two classes or class indices for more.
      labels: ``(m,)`` labels in the same coding.
      dtype: float dtype of the result (default: float32, float64 under x64).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> errors.astype(int).tolist()
      [[0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 0, 0]]
    """
    predictions, labels = jnp.asarray(predictions), jnp.asarray(labels)
    dtype = dtype or jnp.result_type(float)
    return (predictions != labels[:, None]).astype(dtype)


def _floats(*xs: ArrayLike) -> list[jax.Array]:
    dtype = jnp.result_type(*xs, float)
    return [jnp.asarray(x, dtype) for x in xs]


def dirichlet_kl(alpha: ArrayLike, beta: ArrayLike) -> jax.Array:
    """``KL(Dir(alpha) || Dir(beta))`` over the last axis (the regularizer of the bounds):

    .. math:: \\ln\\Gamma(\\alpha_0) - \\sum_j \\ln\\Gamma(\\alpha_j) - \\ln\\Gamma(\\beta_0)
              + \\sum_j \\ln\\Gamma(\\beta_j)
              + \\sum_j (\\alpha_j - \\beta_j)(\\psi(\\alpha_j) - \\psi(\\alpha_0)),

    ``alpha_0 = sum_j alpha_j``, ``beta_0 = sum_j beta_j``. ``beta`` broadcasts against
    ``alpha`` (a scalar is the symmetric prior ``Dir(beta, ..., beta)``).

    Example:
      >>> import jax.numpy as jnp
      >>> float(dirichlet_kl(jnp.ones(3), 1.0))  # the posterior is the prior
      0.0
      >>> round(float(dirichlet_kl(jnp.array([2.0, 2.0, 2.0]), 1.0)), 4)
      0.2443
    """
    alpha, beta = _floats(alpha, beta)
    alpha, beta = jnp.broadcast_arrays(alpha, beta)
    alpha_0, beta_0 = jnp.sum(alpha, -1), jnp.sum(beta, -1)
    normalizers = gammaln(alpha_0) - gammaln(beta_0) + jnp.sum(gammaln(beta) - gammaln(alpha), -1)
    spread = digamma(alpha) - digamma(alpha_0)[..., None]
    return normalizers + jnp.sum((alpha - beta) * spread, -1)


# Measured against mpmath on [1e-6, 1e8] (float32 and float64, XLA:CPU): gammaln within 34 u
# and digamma within 16 u of max(1, |value|); twice that is assumed.
_GAMMALN_ERROR, _DIGAMMA_ERROR = 64.0, 32.0


def dirichlet_kl_upper(alpha: ArrayLike, beta: ArrayLike, input_roundings: float = 3.0):
    """:func:`dirichlet_kl` over the last axis, rounded up past its rounding errors: a float
    ``>=`` the exact ``KL(Dir(a) || Dir(beta))`` for any ``a`` within ``input_roundings``
    relative roundings of the computed ``alpha`` (``alpha = K theta``, normalized: 3).

    The error bound, in units of ``u``: each ``gammaln`` within ``64 max(1, |value|)`` and
    each ``digamma`` within ``32 max(1, |value|)`` (measured: twice the worst seen); the
    perturbation of the arguments (``|psi(a)| a r`` for ``gammaln(a)``,
    ``(1 + 1/a) r`` for ``psi(a)``, ``r`` the relative perturbation, ``n + r`` for the sums
    ``alpha_0`` and ``beta_0``); each subtraction and product 1 u of its result; the final
    sum of the ``2n + 3`` terms ``(2n + 3) sum |terms|``.

    Example:
      >>> import jax.numpy as jnp
      >>> exact = float(dirichlet_kl(jnp.array([2.0, 2.0, 2.0]), 1.0))
      >>> upper = float(dirichlet_kl_upper(jnp.array([2.0, 2.0, 2.0]), 1.0))
      >>> exact < upper < exact + 1e-4
      True
    """
    alpha, beta = _floats(alpha, beta)
    alpha, beta = jnp.broadcast_arrays(alpha, beta)
    n, r = alpha.shape[-1], input_roundings
    a0, b0 = jnp.sum(alpha, -1), jnp.sum(beta, -1)
    lg_a, lg_b, lg_a0, lg_b0 = gammaln(alpha), gammaln(beta), gammaln(a0), gammaln(b0)
    psi_a, psi_a0 = digamma(alpha), digamma(a0)
    spread = psi_a - psi_a0[..., None]
    weighted = (alpha - beta) * spread
    kl = lg_a0 - lg_b0 + jnp.sum(lg_b - lg_a, -1) + jnp.sum(weighted, -1)

    def big(x):
        return jnp.maximum(jnp.abs(x), 1.0)

    library = _GAMMALN_ERROR * (
        big(lg_a0) + big(lg_b0) + jnp.sum(big(lg_a) + big(lg_b), -1)
    ) + _DIGAMMA_ERROR * jnp.sum(jnp.abs(alpha - beta) * (big(psi_a) + big(psi_a0)[..., None]), -1)
    inputs = (
        jnp.abs(psi_a0) * a0 * (n + r)
        + jnp.abs(digamma(b0)) * b0 * n
        + jnp.sum(jnp.abs(psi_a) * alpha * r, -1)
        + jnp.sum(
            jnp.abs(alpha - beta)
            * ((1.0 + 1.0 / alpha) * r + (1.0 + 1.0 / a0[..., None]) * (n + r)),
            -1,
        )
    )
    arithmetic = 3.0 * jnp.sum(jnp.abs(weighted), -1) + (2 * n + 3) * (
        jnp.abs(lg_a0)
        + jnp.abs(lg_b0)
        + jnp.sum(jnp.abs(lg_a) + jnp.abs(lg_b) + jnp.abs(weighted), -1)
    )
    u = float(jnp.finfo(kl.dtype).eps) / 2.0
    return round_up(kl + u * (library + inputs + arithmetic), 1.0)


def exact_risks(errors: ArrayLike, alpha: ArrayLike) -> jax.Array:
    """Per-example expected risk ``P_{theta ~ Dir(alpha)}[W_theta(x_i, y_i) >= 1/2]``.

    By the aggregation property of the Dirichlet, the wrong voters' total weight is
    ``W ~ Beta(b_i, a_i)`` with ``a_i = sum_j alpha_j (1 - E_ij)`` (right voters) and
    ``b_i = sum_j alpha_j E_ij`` (wrong voters), so (zantedeschi2021, Section 3)

    .. math:: P[W \\ge 1/2] = P[1 - W \\le 1/2] = I_{1/2}(a_i, b_i),

    the regularized incomplete beta function (zantedeschi2021's closed form; the authors' code
    computes ``BetaInc(right, wrong, 1/2)``); 0 when no voter errs (``b_i = 0``), 1 when all
    do. Differentiable in ``alpha`` through ``pacbound._src.special.betainc``.

    Args:
      errors: ``(m, n)`` 0/1 matrix ``1[h_j(x_i) != y_i]`` (see ``voter_errors``).
      alpha: ``(n,)`` positive concentrations.

    Returns:
      ``(m,)`` risks in ``[0, 1]``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> [round(float(r), 4) for r in exact_risks(errors, jnp.ones(3))]  # P[Beta(b, a) >= 1/2]
      [0.25, 0.25, 0.75, 0.0]
    """
    errors, alpha = _floats(errors, alpha)
    wrong = errors @ alpha
    # One product with the (m, n) matrix, not two (the matrix dominates the cost): total - wrong
    # rounds to about eps * total, as the sums themselves do; it is large relative to right only
    # where right is small, and there I_{1/2}(right, wrong) is 1 to the dtype's precision.
    right = jnp.maximum(jnp.sum(alpha, -1, keepdims=True) - wrong, 0.0)
    return betainc(right, wrong, jnp.asarray(0.5, alpha.dtype))


def _weighted_mean(values: jax.Array, sample_weight: ArrayLike | None) -> jax.Array:
    if sample_weight is None:
        return jnp.mean(values, -1)
    weight = jnp.asarray(sample_weight, values.dtype)
    return jnp.sum(weight * values, -1) / jnp.sum(weight, -1)


def exact_risk(
    errors: ArrayLike, alpha: ArrayLike, sample_weight: ArrayLike | None = None
) -> jax.Array:
    """Empirical expected risk ``E_{theta ~ Dir(alpha)} R_S(MV_theta)``: the (weighted) mean of
    ``exact_risks`` over the examples, ``sum_i w_i I_{1/2}(a_i, b_i) / sum_i w_i``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> round(float(exact_risk(errors, jnp.ones(3))), 4)  # uniform Dir(1, 1, 1)
      0.3125
      >>> round(float(exact_risk(errors, jnp.array([10.0, 1.0, 1.0]))), 4)  # voter 0 errs never
      0.0017
    """
    return _weighted_mean(exact_risks(errors, alpha), sample_weight)


def monte_carlo_risk(
    key: jax.Array,
    errors: ArrayLike,
    alpha: ArrayLike,
    num_samples: int,
    slope: ArrayLike = DEFAULT_SLOPE,
    sample_weight: ArrayLike | None = None,
) -> jax.Array:
    """zantedeschi2021's Monte Carlo relaxation of the expected risk, for any number of classes:

    .. math:: \\frac{1}{T} \\sum_{t=1}^T \\frac{1}{m} \\sum_i
              \\sigma\\big(c\\,(W_{\\theta_t}(x_i, y_i) - 1/2)\\big),
              \\qquad \\theta_t \\sim Dir(\\alpha),

    the indicator ``1[W >= 1/2]`` replaced by a sigmoid of slope ``c`` (``sigmoid_loss`` in the
    authors' code; ``c = 100`` and ``T = 10`` draws in their experiments' configuration).
    Differentiable in ``alpha`` by reparameterization:
    ``jax.random.dirichlet`` normalizes Gamma draws whose derivative in the concentration is
    the implicit one (Figurnov et al., 2018), as in the authors' PyTorch ``rsample``. An
    unbiased estimate of the sigmoid risk, not of the risk itself: a training objective,
    never a certificate (certify with ``exact_risk``).

    Args:
      key: PRNG key.
      errors: ``(m, n)`` 0/1 matrix ``1[h_j(x_i) != y_i]``.
      alpha: ``(n,)`` positive concentrations.
      num_samples: ``T``, static.
      slope: ``c``, traced.
      sample_weight: optional ``(m,)`` example weights.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> import jax
      >>> r = monte_carlo_risk(jax.random.key(0), errors, jnp.ones(3), num_samples=1000)
      >>> abs(float(r) - 0.3125) < 0.05  # near exact_risk: the sigmoid relaxation, sampled
      True
    """
    errors, alpha, slope = _floats(errors, alpha, slope)
    theta = jax.random.dirichlet(key, alpha, (num_samples,), dtype=alpha.dtype)
    wrong = theta @ errors.T  # (T, m)
    losses = jax.nn.sigmoid(slope * (wrong - 0.5))
    return _weighted_mean(jnp.mean(losses, 0), sample_weight)


def _sample_size(errors: jax.Array, sample_weight: ArrayLike | None) -> jax.Array:
    if sample_weight is None:
        return jnp.asarray(errors.shape[0], errors.dtype)
    return jnp.sum(jnp.asarray(sample_weight, errors.dtype))


def _stochastic_bound(bound_fn, errors, alpha, prior, delta, sample_weight) -> StochasticBound:
    errors, alpha, prior, delta = _floats(errors, alpha, prior, delta)
    risk = exact_risk(errors, alpha, sample_weight)
    kl = dirichlet_kl(alpha, prior)
    return StochasticBound(bound_fn(risk, kl, _sample_size(errors, sample_weight), delta), risk, kl)


def seeger_bound(
    errors: ArrayLike,
    alpha: ArrayLike,
    prior: ArrayLike,
    delta: ArrayLike,
    sample_weight: ArrayLike | None = None,
) -> StochasticBound:
    """Seeger's bound with Maurer's constant on the stochastic vote's expected risk, the
    objective of zantedeschi2021: with probability at least ``1 - delta`` over the ``m``
    examples, for every ``alpha``,

    .. math:: E_{\\theta \\sim Dir(\\alpha)} R(MV_\\theta) \\le kl^{-1}_{up}\\Big(
              \\hat R_S, \\frac{KL(Dir(\\alpha) \\| Dir(\\beta)) + \\ln(2\\sqrt m / \\delta)}{m}
              \\Big),

    ``hat R_S = exact_risk``. It is ``pacbound._src.bounds.seeger`` (the same formula as for the
    Gibbs risk: the loss here is ``theta -> 1[MV_theta errs]``, bounded in ``[0, 1]``); no
    factor 2, the stochastic vote's risk is bounded directly.

    Args:
      errors: ``(m, n)`` 0/1 matrix ``1[h_j(x_i) != y_i]``.
      alpha: ``(n,)`` posterior concentrations.
      prior: ``beta``, the prior's concentrations (``(n,)`` or a scalar), fixed before seeing
        the sample.
      delta: confidence in ``(0, 1]``.
      sample_weight: optional ``(m,)`` weights; ``m`` is then their sum. A certificate needs
        uniform weights on the sample it holds for: 0/1 masks (cross-validation folds) are
        that; other weights give a training objective.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> b = seeger_bound(jnp.tile(errors, (250, 1)), jnp.ones(3), 1.0, 0.05)  # m = 1000
      >>> round(float(b.bound), 4), round(float(b.risk), 4), float(b.kl)
      (0.3695, 0.3125, 0.0)
    """
    return _stochastic_bound(seeger, errors, alpha, prior, delta, sample_weight)


def mcallester_bound(
    errors: ArrayLike,
    alpha: ArrayLike,
    prior: ArrayLike,
    delta: ArrayLike,
    sample_weight: ArrayLike | None = None,
) -> StochasticBound:
    """McAllester's bound (Maurer's form) on the stochastic vote's expected risk, the other
    bound of the authors' code (``mcallester_bound``), same setting as ``seeger_bound``:

    .. math:: E_{\\theta \\sim Dir(\\alpha)} R(MV_\\theta) \\le \\hat R_S
              + \\sqrt{\\frac{KL(Dir(\\alpha) \\| Dir(\\beta)) + \\ln(2\\sqrt m/\\delta)}{2m}},

    ``pacbound._src.bounds.mcallester``; never tighter than ``seeger_bound`` (Pinsker).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> errors = voter_errors(H, jnp.array([1., 1., -1., 1.]))
      >>> b = mcallester_bound(jnp.tile(errors, (250, 1)), jnp.ones(3), 1.0, 0.05)  # m = 1000
      >>> round(float(b.bound), 4), round(float(b.risk), 4)  # seeger_bound gives 0.3695
      (0.3723, 0.3125)
    """
    return _stochastic_bound(mcallester, errors, alpha, prior, delta, sample_weight)
