"""Loss statistics of a weighted majority vote for the second-order bounds, any number of classes.

Everything starts from an **error matrix** ``E[i, j] = 1[h_j(x_i) != y_i]`` (``error_matrix``
builds it from predictions with any labels; ``{-1, +1}`` votes are one case) with optional
example weights ``w`` and an optional ``(m, n)`` evaluation mask ``M`` (out-of-bag: voter ``j``
is evaluated only where ``M[i, j] = 1``, Lorenzen et al. 2019). Each statistic is a weighted
mean over the examples where its voter(s) are evaluated:

* ``loss_statistics(E, sample_weight, mask)`` -> ``LossStatistics``: the per-voter risks
  ``L(h_j)``, the tandem matrix ``T[j, k] = P(h_j and h_k both err)`` (Masegosa et al. 2020),
  the pair risks ``P[j, k]`` (error rate of ``h_j`` on the examples shared with ``h_k``) and
  the pair counts. Three products ``A^T W A``, ``A^T W M``, ``M^T W M`` with ``A = M * E``
  (one, ``E^T W E``, without a mask).
* ``disagreement_matrix(predictions, classes, ...)``: ``D[j, k] = P(h_j(x) != h_k(x))``, no
  labels needed (rows may be unlabeled).
* rho-averages, quadratic forms that broadcast over a leading batch of posteriors (a batch of
  ``10^4`` rho is one matrix product) and ``jax.vmap``: ``gibbs_risk``, ``tandem_risk``,
  ``quadratic_form`` (disagreement), ``ternary_rates`` (both / exactly one / neither voter
  errs), ``mu_tandem_risk`` and ``mu_tandem_variance`` (Wu et al. 2021, vmappable over ``mu``).
* ``sample_sizes(mask, sample_weight)``: host integers ``n = min_j |OOB_j|`` and
  ``n2 = min_{j,k} |OOB_j cap OOB_k|``.
* Boundary checks with clear ``ValueError``s (never inside traced code): ``check_error_matrix``,
  ``check_mask``, ``check_posterior``.

The mu-tandem loss of a pair is ternary: ``(1 - mu)^2`` when both voters err, ``-mu (1 - mu)``
when exactly one errs and ``mu^2`` when neither does, so its mean and variance follow from the
tandem and pair-risk matrices alone, for every ``mu``, without returning to the examples.
Sample sizes count examples (with positive weight); weights only reweight the means, and the
bounds' guarantees are the theorems' for uniform weights.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.validation import check_sample_weight, float_dtype, is_concrete

__all__ = [
    "LossStatistics",
    "TernaryRates",
    "check_error_matrix",
    "check_mask",
    "check_posterior",
    "disagreement_matrix",
    "error_matrix",
    "gibbs_risk",
    "loss_statistics",
    "mu_tandem_risk",
    "mu_tandem_second_moment",
    "mu_tandem_variance",
    "pair_counts",
    "quadratic_form",
    "sample_sizes",
    "tandem_risk",
    "ternary_rates",
]


# Full float32 products: on GPUs the default float32 matmul rounds its inputs to TF32 (10-bit
# mantissa), which would move the statistics, and so the certificates, by ~1e-3.
_matmul = functools.partial(jnp.matmul, precision=lax.Precision.HIGHEST)


class LossStatistics(NamedTuple):
    """Per-voter and per-pair statistics of an error matrix (means over evaluated examples).

    Attributes:
      risks: ``(n,)``, ``L_hat(h_j)``, the error rate of voter ``j``.
      tandem: ``(n, n)``, ``T[j, k]``, the rate at which ``h_j`` and ``h_k`` both err, on the
        examples where both are evaluated; ``T[j, j] = risks[j]``.
      pair_risks: ``(n, n)``, ``P[j, k]``, the error rate of ``h_j`` on the examples where both
        ``h_j`` and ``h_k`` are evaluated (``P[j, k] = risks[j]`` without a mask).
      pair_counts: ``(n, n)``, the number of examples where both are evaluated (as floats).
    """

    risks: jax.Array
    tandem: jax.Array
    pair_risks: jax.Array
    pair_counts: jax.Array


class TernaryRates(NamedTuple):
    """``rho^2``-averaged rates of the three outcomes of a pair of voters (they sum to 1).

    Attributes:
      both: ``E_{rho^2}[P(h and h' both err)]``, the tandem risk.
      one: ``E_{rho^2}[P(exactly one of h, h' errs)]``.
      neither: ``E_{rho^2}[P(neither errs)]``.
    """

    both: jax.Array
    one: jax.Array
    neither: jax.Array


def check_error_matrix(errors: ArrayLike, name: str = "errors") -> None:
    """``errors`` a non-empty ``(m, n)`` matrix with entries 0 or 1 (checked when concrete).

    Example:
      >>> import numpy as np
      >>> check_error_matrix(np.array([[0, 1], [1, 0]]))
      >>> check_error_matrix(np.array([[0, 2]]))
      Traceback (most recent call last):
        ...
      ValueError: errors must hold 0 / 1 entries (1 = the voter errs)
    """
    shape = np.shape(errors)
    if len(shape) != 2 or 0 in shape:
        raise ValueError(f"{name} must be a non-empty 2-D (examples, voters) array; got {shape}")
    if is_concrete(errors):
        values = np.asarray(errors)
        if not np.isin(values, (0, 1)).all():
            raise ValueError(f"{name} must hold 0 / 1 entries (1 = the voter errs)")


def pair_counts(mask: ArrayLike) -> np.ndarray:
    """``C[j, k] = |OOB_j cap OOB_k|`` (host int64) of a concrete 0/1 ``(m, n)`` mask: one
    float64 product on the device (exact below ``2^53`` examples), as fast as a BLAS product
    where NumPy's integer product is not.

    Example:
      >>> pair_counts([[1, 0], [1, 1], [0, 1]]).tolist()  # voter 0 out of bag on 2 examples, ...
      [[2, 1], [1, 2]]
    """
    with jax.enable_x64(True):
        values = jnp.asarray(mask, jnp.float64)
        return np.asarray(_matmul(values.T, values)).astype(np.int64)


def check_mask(mask: ArrayLike, shape: tuple[int, ...], min_pair_count: int = 1) -> None:
    """An evaluation mask of ``shape`` with 0 / 1 entries and no empty (pair) evaluation set.

    Args:
      mask: ``(m, n)``, ``1`` where voter ``j`` is evaluated on example ``i`` (out-of-bag).
      shape: the error matrix's shape.
      min_pair_count: the least number of examples every pair of voters (a voter with itself
        included) must share; 2 for the variance of ``mu_tandem_variance``.

    Example:
      >>> import numpy as np
      >>> check_mask(np.array([[1, 0], [1, 1], [0, 1]]), (3, 2))
      >>> check_mask(np.array([[1, 0], [1, 0], [1, 0]]), (3, 2))
      Traceback (most recent call last):
        ...
      ValueError: every voter needs at least one evaluated example; empty: [1]
    """
    if np.shape(mask) != tuple(shape):
        raise ValueError(f"mask must have the error matrix's shape {shape}; got {np.shape(mask)}")
    if not is_concrete(mask):
        return
    values = np.asarray(mask)
    if not np.isin(values, (0, 1)).all():
        raise ValueError("mask must hold 0 / 1 (or boolean) entries")
    counts = pair_counts(values)
    if counts.diagonal().min() == 0:
        empty = np.flatnonzero(counts.diagonal() == 0)[:10].tolist()
        raise ValueError(f"every voter needs at least one evaluated example; empty: {empty}")
    if counts.min() < min_pair_count:
        j, k = np.unravel_index(np.argmin(counts), counts.shape)
        raise ValueError(
            f"voters {j} and {k} share {counts[j, k]} evaluated examples; "
            f"at least {min_pair_count} are needed"
        )


def check_posterior(rho: ArrayLike, n: int | None = None, atol: float = 1e-5) -> None:
    """``rho`` (or each row of a batch) a probability vector over ``n`` voters.

    Example:
      >>> import numpy as np
      >>> check_posterior(np.array([0.25, 0.75]), 2)
      >>> check_posterior(np.array([0.5, 0.6]), 2)
      Traceback (most recent call last):
        ...
      ValueError: rho must sum to 1; sums [1.1...]
    """
    shape = np.shape(rho)
    if len(shape) == 0 or (n is not None and shape[-1] != n):
        raise ValueError(f"rho must have a last axis of length {n}; got shape {shape}")
    if not is_concrete(rho):
        return
    values = np.asarray(rho, np.float64)
    if not np.isfinite(values).all() or (values < 0).any():
        raise ValueError("rho must be finite and >= 0")
    if not np.allclose(values.sum(-1), 1.0, rtol=0.0, atol=atol):
        raise ValueError(f"rho must sum to 1; sums {np.unique(values.sum(-1))[:5].tolist()}")


def error_matrix(predictions: ArrayLike, y: ArrayLike, dtype=None) -> jax.Array:
    """``E[i, j] = 1[predictions[i, j] != y[i]]`` for labels of any kind (ints, floats, +-1).

    Args:
      predictions: ``(m, n)``, the label voter ``j`` predicts for example ``i``.
      y: ``(m,)``, the true labels.
      dtype: float dtype of the result; float32 by default, float64 when ``predictions`` is.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> error_matrix(H, jnp.array([1., 1., -1., 1.])).astype(int).tolist()
      [[0, 0, 1], [0, 1, 0], [0, 1, 1], [0, 0, 0]]
    """
    if np.ndim(predictions) != 2 or np.shape(y) != (np.shape(predictions)[0],):
        raise ValueError(
            f"predictions must be (m, n) and y (m,); got {np.shape(predictions)}, {np.shape(y)}"
        )
    dtype = float_dtype(predictions) if dtype is None else dtype
    return (jnp.asarray(predictions) != jnp.asarray(y)[:, None]).astype(dtype)


def _weights_and_mask(errors, sample_weight, mask):
    dtype = errors.dtype
    m = errors.shape[0]
    w = jnp.ones((m,), dtype) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    M = None if mask is None else jnp.asarray(mask, dtype)
    return w, M


def loss_statistics(
    errors: ArrayLike, sample_weight: ArrayLike | None = None, mask: ArrayLike | None = None
) -> LossStatistics:
    """Per-voter risks, tandem and pair-risk matrices of an error matrix (Masegosa et al. 2020).

    With weights ``w`` and mask ``M`` (``A = M * E``), for voters ``j, k``:

    .. math:: T_{jk} = \\frac{\\sum_i w_i A_{ij} A_{ik}}{\\sum_i w_i M_{ij} M_{ik}}, \\quad
              P_{jk} = \\frac{\\sum_i w_i A_{ij} M_{ik}}{\\sum_i w_i M_{ij} M_{ik}}, \\quad
              \\hat L(h_j) = P_{jj} = T_{jj}.

    Args:
      errors: ``(m, n)`` error matrix (0 / 1), e.g. from ``error_matrix``.
      sample_weight: ``(m,)`` non-negative example weights, or ``None`` (uniform).
      mask: ``(m, n)`` 0 / 1 evaluation mask (out-of-bag sets), or ``None`` (all evaluated).

    Returns:
      ``LossStatistics`` in the errors' float dtype (float32 unless float64 is given).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> [float(r) for r in stats.risks], float(stats.tandem[1, 2])  # voters 1 and 2 both err once
      ([0.0, 0.5, 0.5], 0.25)
    """
    check_error_matrix(errors)
    check_sample_weight(sample_weight, np.shape(errors)[0])
    if mask is not None:
        check_mask(mask, np.shape(errors))
    errors = jnp.asarray(errors, float_dtype(errors))
    return _loss_statistics(errors, sample_weight, mask)


@jax.jit
def _loss_statistics(errors, sample_weight, mask):
    w, M = _weights_and_mask(errors, sample_weight, mask)
    counted = (w > 0).astype(errors.dtype)
    if M is None:
        tandem_mass = _matmul(errors.T, w[:, None] * errors)
        error_mass = jnp.sum(w[:, None] * errors, axis=0)
        total = jnp.sum(w)
        risks = error_mass / total
        pair_risks = jnp.broadcast_to(risks[:, None], tandem_mass.shape)
        pair_counts = jnp.full(tandem_mass.shape, jnp.sum(counted), errors.dtype)
        return LossStatistics(risks, tandem_mass / total, pair_risks, pair_counts)
    masked = M * errors
    weighted_mask = w[:, None] * M
    pair_mass = _matmul(M.T, weighted_mask)
    tandem = _matmul(masked.T, w[:, None] * masked) / pair_mass
    pair_risks = _matmul(masked.T, weighted_mask) / pair_mass
    pair_counts = _matmul(M.T, counted[:, None] * M)
    return LossStatistics(jnp.diagonal(pair_risks), tandem, pair_risks, pair_counts)


def disagreement_matrix(
    predictions: ArrayLike,
    classes: ArrayLike,
    sample_weight: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    dtype=None,
) -> jax.Array:
    """``D[j, k]``: the rate at which ``h_j`` and ``h_k`` predict different labels.

    No labels are used, so the rows may be unlabeled examples. With one-hot indicators
    ``O[i, j, c] = 1[h_j(x_i) = c]`` the agreement is ``sum_c O_c^T W O_c``, over the examples
    where both voters are evaluated (``mask``); for ``{-1, +1}`` votes this is
    ``(1 - E[h_j h_k]) / 2``.

    Args:
      predictions: ``(m, n)`` predicted labels.
      classes: ``(C,)`` the labels the voters can predict (``[-1, 1]`` for binary votes).
      sample_weight: ``(m,)`` example weights, or ``None``.
      mask: ``(m, n)`` evaluation mask, or ``None``.
      dtype: float dtype of the result (float32 by default).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> [float(d) for d in disagreement_matrix(H, jnp.array([-1., 1.]))[0]]  # no labels needed
      [0.0, 0.5, 0.5]
    """
    if np.ndim(predictions) != 2 or np.ndim(classes) != 1:
        raise ValueError("predictions must be (m, n) and classes (C,)")
    check_sample_weight(sample_weight, np.shape(predictions)[0])
    if mask is not None:
        check_mask(mask, np.shape(predictions))
    dtype = float_dtype(predictions) if dtype is None else dtype
    onehot = (jnp.asarray(predictions)[:, :, None] == jnp.asarray(classes)).astype(dtype)
    m, n = np.shape(predictions)
    w = jnp.ones((m,), dtype) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    M = jnp.ones((m, n), dtype) if mask is None else jnp.asarray(mask, dtype)
    shown = onehot * M[:, :, None]
    agree = jnp.einsum("ijc,i,ikc->jk", shown, w, shown, precision=lax.Precision.HIGHEST)
    return 1.0 - agree / _matmul(M.T, w[:, None] * M)


def quadratic_form(matrix: ArrayLike, rho: ArrayLike) -> jax.Array:
    """``rho^T A rho``; ``rho`` may carry leading batch axes (``(..., n)``): one product.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(quadratic_form(jnp.eye(3), jnp.ones(3) / 3)), 4)  # sum of rho_j^2
      0.3333
      >>> quadratic_form(jnp.eye(3), jnp.ones((5, 3)) / 3).shape  # a batch of posteriors
      (5,)
    """
    rho = jnp.asarray(rho)
    return jnp.sum(_matmul(rho, jnp.asarray(matrix)) * rho, axis=-1)


def gibbs_risk(stats: LossStatistics, rho: ArrayLike) -> jax.Array:
    """``E_rho[L_hat(h)] = rho . risks``, the empirical Gibbs risk (batch axes allowed).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> round(float(gibbs_risk(stats, jnp.ones(3) / 3)), 4)  # mean of the risks 0, 1/2, 1/2
      0.3333
    """
    return _matmul(jnp.asarray(rho), stats.risks)


def tandem_risk(stats: LossStatistics, rho: ArrayLike) -> jax.Array:
    """``E_{rho^2}[L_hat(h, h')] = rho^T T rho``, the empirical tandem risk.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> round(float(tandem_risk(stats, jnp.ones(3) / 3)), 4)  # the joint error of the vote
      0.1667
    """
    return quadratic_form(stats.tandem, rho)


def _pair_outcome_matrices(stats: LossStatistics):
    """Per-pair rates of (both err, exactly one errs, neither errs); they sum to 1."""
    both = stats.tandem
    either = stats.pair_risks + stats.pair_risks.T
    return both, either - 2.0 * both, 1.0 - either + both


def ternary_rates(stats: LossStatistics, rho: ArrayLike) -> TernaryRates:
    """``rho^2``-averaged rates of both / exactly one / neither of two voters erring.

    The ternary parts of the mu-tandem loss used by the PAC-Bayes-split-kl bound (Wu and Seldin
    2022): with a mask each pair's rates are over the examples the pair shares.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> [round(float(r), 4) for r in ternary_rates(stats, jnp.ones(3) / 3)]  # both, one, neither
      [0.1667, 0.3333, 0.5]
    """
    return TernaryRates(*(quadratic_form(a, rho) for a in _pair_outcome_matrices(stats)))


def _mu_loss_values(mu):
    """The mu-tandem loss ``(1[h errs] - mu)(1[h' errs] - mu)`` at (both, one, neither) err."""
    return (1.0 - mu) ** 2, -mu * (1.0 - mu), mu**2


def mu_tandem_risk(stats: LossStatistics, rho: ArrayLike, mu: ArrayLike) -> jax.Array:
    """``E_{rho^2}[L_hat_mu(h, h')]``, the empirical mu-tandem loss (Wu et al. 2021, Sec. 3):

    .. math:: \\hat L_\\mu(h, h') = \\frac1n\\sum_i (1[h(x_i) \\ne y_i] - \\mu)
              (1[h'(x_i) \\ne y_i] - \\mu),

    ``rho^T (T - mu (P + P^T) + mu^2) rho``; without a mask ``T_hat - 2 mu G_hat + mu^2``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> round(float(mu_tandem_risk(stats, jnp.ones(3) / 3, 0.1)), 4)  # 1/6 - 2 (0.1) (1/3) + 0.01
      0.11
    """
    mu = jnp.asarray(mu, stats.tandem.dtype)
    loss = sum(v * a for v, a in zip(_mu_loss_values(mu), _pair_outcome_matrices(stats)))
    return quadratic_form(loss, rho)


def mu_tandem_second_moment(stats: LossStatistics, rho: ArrayLike, mu: ArrayLike) -> jax.Array:
    """``E_{rho^2}[(1/n) sum_i L_mu(h, h', x_i)^2]``, the empirical second moment of the
    mu-tandem loss (what PAC-Bayes-Unexpected-Bernstein reads: CCPBUB): each pair's outcome
    rates over the examples it shares times the squared loss values ``(1 - mu)^4``,
    ``mu^2 (1 - mu)^2``, ``mu^4``; without a mask ``(1 - 2 mu)^2 T_hat + 2 mu^2 (1 - 2 mu)
    G_hat + mu^4``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> round(float(mu_tandem_second_moment(stats, jnp.ones(3) / 3, 0.0)), 4)  # mu = 0: T_hat
      0.1667
    """
    mu = jnp.asarray(mu, stats.tandem.dtype)
    rates = _pair_outcome_matrices(stats)
    return quadratic_form(sum(v**2 * r for v, r in zip(_mu_loss_values(mu), rates)), rho)


def mu_tandem_variance(stats: LossStatistics, rho: ArrayLike, mu: ArrayLike) -> jax.Array:
    """``E_{rho^2}[V_hat_mu(h, h')]``: the average of each pair's unbiased empirical variance
    of the mu-tandem loss (Wu et al. 2021, the variance term of the CCPBB bound).

    For a pair with outcome rates ``r_t`` over ``c`` shared examples and loss values ``v_t``,
    ``V_hat = c / (c - 1) sum_t r_t (v_t - sum_s r_s v_s)^2``. A pair with ``c < 2`` gets the
    largest variance a variable of range ``K_mu = max(1 - mu, 1 - 2 mu)`` can have,
    ``K_mu^2 / 4``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> stats = loss_statistics(error_matrix(H, jnp.array([1., 1., -1., 1.])))
      >>> round(float(mu_tandem_variance(stats, jnp.ones(3) / 3, 0.0)), 4)  # 4 / 3 x 7 / 72
      0.1296
    """
    mu = jnp.asarray(mu, stats.tandem.dtype)
    rates = _pair_outcome_matrices(stats)
    values = _mu_loss_values(mu)
    mean = sum(v * r for v, r in zip(values, rates))
    spread = sum(r * (v - mean) ** 2 for v, r in zip(values, rates))
    c = stats.pair_counts
    worst = jnp.maximum(1.0 - mu, 1.0 - 2.0 * mu) ** 2 / 4.0
    unbiased = jnp.where(c >= 2, c / jnp.maximum(c - 1.0, 1.0) * spread, worst)
    return quadratic_form(unbiased, rho)


def sample_sizes(
    mask: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    m: int | None = None,
) -> tuple[int, int]:
    """Host integers ``n = min_j |OOB_j|`` and ``n2 = min_{j,k} |OOB_j cap OOB_k|``.

    Examples with zero weight are not counted. Without a mask both are the number of examples
    ``m`` (taken from ``sample_weight`` when ``m`` is not given). Raises ``ValueError`` when a
    voter or a pair has no evaluated example.

    Example:
      >>> sample_sizes([[1, 0], [1, 1], [0, 1]])  # n = min |OOB_j|, n2 = min |OOB_j cap OOB_k|
      (2, 1)
      >>> sample_sizes(m=10)  # no mask: every example counts
      (10, 10)
    """
    if mask is None:
        if sample_weight is not None:
            return (int(np.count_nonzero(np.asarray(sample_weight))),) * 2
        if m is None or m < 1:
            raise ValueError("give a mask, sample weights or the number of examples m >= 1")
        return int(m), int(m)
    values = np.asarray(mask)
    if sample_weight is not None:
        values = values * (np.asarray(sample_weight) > 0)[:, None]
    counts = pair_counts(values)
    n, n2 = int(counts.diagonal().min()), int(counts.min())
    if n2 < 1:
        raise ValueError(f"empty evaluation set: n = {n}, n2 = {n2}")
    return n, n2
