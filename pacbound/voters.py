"""Voters: materialized decision stumps; the matrix-free search and RBF voters re-exported.

A voter set evaluated on ``m`` examples is the ``(m, n)`` matrix ``H[i, j] = h_j(x_i)``.

* Decision stumps (roy2016 §7, laviolette2011 §6, germain2009 §5): ``h(x) = +1 if x_f > t
  else -1``. :func:`fit_stumps` places ``n_thresholds`` equally spaced thresholds strictly
  inside each feature's training range; :func:`self_complemented` adds the opposite votes
  (roy2016 §7: "10 pairs of decision stumps with the same threshold but inverse decisions").
* Matrix-free stumps (the column generator of CqBoost and LPBoost, roy2016 Alg. 1; the edge
  search of CB-Boost, bauvin2020 §3): :func:`stump_search`, :func:`best_stump`,
  :func:`stump_edges`, :func:`stump_scores` live in :mod:`pacbound.stump_search` and are
  re-exported here; :func:`best_stump_votes` materializes the column of a :class:`BestStump`.
* RBF voters and tanh normalization (laviolette2011 §6, roy2016 §7) live in
  :mod:`pacbound.features` and are re-exported here.

Fitting validates its inputs on the host; evaluation functions are jitted and do not check.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound.features import (
    TanhNormalization,
    check_features,
    fit_tanh_normalization,
    median_pairwise_distance,
    rbf_votes,
    signed_rbf_votes,
    tanh_normalize,
)
from pacbound.stump_search import (
    BestStump,
    StumpSearch,
    best_stump,
    padded_stumps,
    stump_edges,
    stump_scores,
    stump_search,
)

__all__ = [
    "BestStump",
    "StumpSearch",
    "Stumps",
    "TanhNormalization",
    "best_stump",
    "best_stump_votes",
    "check_features",
    "fit_stumps",
    "fit_tanh_normalization",
    "median_pairwise_distance",
    "padded_stumps",
    "rbf_votes",
    "self_complemented",
    "signed_rbf_votes",
    "stump_edges",
    "stump_scores",
    "stump_search",
    "stumps_vote",
    "tanh_normalize",
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
    """
    X = jnp.asarray(X)
    dtype_cmp = jnp.promote_types(X.dtype, stumps.thresholds.dtype)
    above = X[:, stumps.features].astype(dtype_cmp) > stumps.thresholds.astype(dtype_cmp)
    return jnp.where(above, 1, -1).astype(dtype)


@jax.jit
def stumps_vote(stumps: Stumps, weights: ArrayLike, X: ArrayLike) -> jax.Array:
    """The weighted vote ``sum_t weights_t h_t(x)`` of a stump set on ``X`` ``(m', d)``.

    A negative weight votes for the complement ``-h_t``. Matrix-free learners return their
    stumps with ``q`` and ``signs``: their vote is ``stumps_vote(r.stumps, r.q * r.signs, X)``,
    whose sign is the majority vote ``B_Q`` (a tie, vote 0, counts as an error).
    """
    weights = jnp.asarray(weights)
    return votes(stumps, X, dtype=weights.dtype) @ weights


@jax.jit
def self_complemented(H: ArrayLike) -> jax.Array:
    """The self-complemented voter set ``[H, -H]`` of shape ``(m, 2n)``.

    Column ``j + n`` is the complement ``-h_j`` of column ``j`` (roy2016 §7 pairs;
    laviolette2011 Program 1 is over such a set). Every learner builds ``[H, -H]`` with this.
    """
    H = jnp.asarray(H)
    return jnp.concatenate([H, -H], axis=1)


@functools.partial(jax.jit, static_argnames="dtype")
def best_stump_votes(best: BestStump, X: ArrayLike, dtype=jnp.float32) -> jax.Array:
    """The column ``sign * h(x_i)`` of a :class:`BestStump` on ``X``, shape ``(m,)``."""
    stumps = Stumps(best.feature[None], best.threshold[None])
    return (votes(stumps, X, dtype=dtype)[:, 0] * best.sign.astype(dtype)).astype(dtype)
