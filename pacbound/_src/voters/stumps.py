"""Materialized decision stumps: fit thresholds, evaluate votes, self-complement.

A voter set evaluated on ``m`` examples is the ``(m, n)`` matrix ``H[i, j] = h_j(x_i)``.
Decision stumps (roy2016 §7, laviolette2011 §6, germain2009 §5) are ``h(x) = +1 if x_f > t
else -1``: :func:`fit_stumps` places ``n_thresholds`` equally spaced thresholds strictly inside
each feature's *training* range (the papers' placement: the thresholds depend on the training
inputs but not on their labels), :func:`votes` evaluates them, and :func:`self_complemented`
adds the opposite votes (roy2016 §7: "10 pairs of decision stumps with the same threshold but
inverse decisions"). Fitting validates its inputs on the host; evaluation is jitted.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.validation import check_features

__all__ = [
    "Stumps",
    "fit_stumps",
    "self_complemented",
    "stumps_vote",
    "votes",
]


class Stumps(NamedTuple):
    """A set of ``n`` decision stumps ``h_j(x) = +1 if x[features[j]] > thresholds[j] else -1``.

    Attributes:
      features: ``(n,)`` int32 feature index of each stump.
      thresholds: ``(n,)`` float threshold of each stump.
    """

    features: jax.Array
    thresholds: jax.Array

    def votes(self, X: ArrayLike, dtype=jnp.float32) -> jax.Array:
        """``(m, n)`` votes of these stumps on ``X`` (:func:`votes`)."""
        return votes(self, X, dtype=dtype)


def fit_stumps(X: ArrayLike, n_thresholds: int = 10) -> Stumps:
    """Decision stumps with equally spaced thresholds inside each feature's range.

    As in roy2016 §7, laviolette2011 §6 and germain2009 §5 (10 stumps per feature). For feature
    ``f`` with training range ``[lo_f, hi_f]`` the thresholds are

    .. math:: t_{f,k} = lo_f + k (hi_f - lo_f) / (n_{thresholds} + 1), \\quad k = 1..n_{thresholds},

    strictly inside the range, so no stump is constant on the training set unless the feature
    is (a constant feature gives ``n_thresholds`` copies of the constant ``-1`` voter, kept so
    that ``n = d * n_thresholds`` is fixed). Stumps are ordered feature-major: stump
    ``f * n_thresholds + (k - 1)`` tests feature ``f`` against ``t_{f,k}``.

    Args:
      X: training features ``(m, d)``, finite.
      n_thresholds: thresholds per feature (static).

    Returns:
      :class:`Stumps` with ``n = d * n_thresholds`` stumps (one sign; see
      :func:`self_complemented` for the pairs).

    Raises:
      ValueError: if ``X`` is not a finite ``(m, d)`` matrix or ``n_thresholds < 1``.

    Example:
      >>> import jax.numpy as jnp
      >>> s = fit_stumps(jnp.array([[0.0], [1.0], [2.0], [3.0]]), n_thresholds=3)
      >>> s.features.tolist(), [float(t) for t in s.thresholds]  # inside the range [0, 3]
      ([0, 0, 0], [0.75, 1.5, 2.25])
    """
    X = check_features(X).astype(np.float64)
    if int(n_thresholds) != n_thresholds or n_thresholds < 1:
        raise ValueError(f"n_thresholds must be a positive integer; got {n_thresholds!r}")
    lo, hi = X.min(axis=0), X.max(axis=0)
    k = np.arange(1, n_thresholds + 1) / (n_thresholds + 1)
    thresholds = lo[:, None] + k[None, :] * (hi - lo)[:, None]
    features = np.repeat(np.arange(X.shape[1], dtype=np.int32), n_thresholds)
    return Stumps(jnp.asarray(features, jnp.int32), jnp.asarray(thresholds.ravel()))


@functools.partial(jax.jit, static_argnames="dtype")
def votes(stumps: Stumps, X: ArrayLike, dtype=jnp.float32) -> jax.Array:
    """Votes ``H[i, j] = +1 if X[i, features[j]] > thresholds[j] else -1`` (one fused kernel).

    Args:
      stumps: the stump set.
      X: features ``(m, d)``.
      dtype: output dtype (static); ``int8`` and ``bfloat16`` represent ±1 exactly and cut the
        memory traffic of ``H @ q`` by 4x and 2x against ``float32``.

    Returns:
      ``H`` of shape ``(m, n)`` in ``dtype``.

    Example:
      >>> import jax.numpy as jnp
      >>> X = jnp.array([[0.0], [1.0], [2.0], [3.0]])
      >>> votes(fit_stumps(X, n_thresholds=3), X).astype(int).tolist()  # +1 above the threshold
      [[-1, -1, -1], [1, -1, -1], [1, 1, -1], [1, 1, 1]]
    """
    X = jnp.asarray(X)
    dtype_cmp = jnp.promote_types(X.dtype, stumps.thresholds.dtype)
    above = X[:, stumps.features].astype(dtype_cmp) > stumps.thresholds.astype(dtype_cmp)
    return jnp.where(above, 1, -1).astype(dtype)


@jax.jit
def stumps_vote(stumps: Stumps, weights: ArrayLike, X: ArrayLike) -> jax.Array:
    """The weighted vote ``sum_t weights_t h_t(x)`` of a stump set on ``X`` ``(m', d)``.

    A negative weight votes for the complement ``-h_t``. Matrix-free learners return their
    stumps with ``q`` and ``signs``: their vote is ``stumps_vote(r.voters, r.q * r.signs, X)``,
    whose sign is the majority vote ``B_Q`` (a tie, vote 0, counts as an error).

    Example:
      >>> import jax.numpy as jnp
      >>> X = jnp.array([[0.0], [1.0], [2.0], [3.0]])
      >>> s = fit_stumps(X, n_thresholds=3)
      >>> [float(v) for v in stumps_vote(s, jnp.array([0.5, 0.25, 0.25]), X)]
      [-1.0, 0.0, 0.5, 1.0]
    """
    weights = jnp.asarray(weights)
    return votes(stumps, X, dtype=weights.dtype) @ weights


@jax.jit
def self_complemented(H: ArrayLike) -> jax.Array:
    """The self-complemented voter set ``[H, -H]`` of shape ``(m, 2n)``.

    Column ``j + n`` is the complement ``-h_j`` of column ``j`` (roy2016 §7 pairs;
    laviolette2011 Program 1 is over such a set). Every learner builds ``[H, -H]`` with this.

    Example:
      >>> import jax.numpy as jnp
      >>> self_complemented(jnp.array([[1.0, -1.0]])).tolist()  # [H, -H]
      [[1.0, -1.0, -1.0, 1.0]]
    """
    H = jnp.asarray(H)
    return jnp.concatenate([H, -H], axis=1)
