"""Voters: decision stumps (materialized and matrix-free), RBF voters, tanh normalization.

A voter set evaluated on ``m`` examples is the ``(m, n)`` matrix ``H[i, j] = h_j(x_i)``.

* Decision stumps (roy2016 §7, laviolette2011 §6, germain2009 §5): ``h(x) = +1 if x_f > t
  else -1``. :func:`fit_stumps` places ``n_thresholds`` equally spaced thresholds strictly
  inside each feature's training range; :func:`self_complemented` adds the opposite votes
  (roy2016 §7: "10 pairs of decision stumps with the same threshold but inverse decisions").
* Matrix-free stumps: :func:`stump_search` sorts every feature once; :func:`best_stump` then
  maximizes the edge ``sum_i a_i s h(x_i)`` over all ``m - 1`` thresholds of every feature and
  both signs ``s`` in ``O(d m)``, never building ``H`` (the column generator of CqBoost and
  LPBoost, roy2016 Alg. 1; the edge search of CB-Boost, bauvin2020 §3).
* RBF voters centred on training points (laviolette2011 §6): ``exp(-||x - x_i||^2 / (2 g^2))``
  and the label-signed ``y_i k(x_i, x)`` of the SVM-as-majority-vote view.
* :func:`fit_tanh_normalization` / :func:`tanh_normalize`: roy2016 §7 runs every experiment on
  features "normalized using a hyperbolic tangent function".

Fitting validates its inputs on the host; evaluation functions are jitted and do not check.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

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
    "rbf_votes",
    "self_complemented",
    "signed_rbf_votes",
    "stump_scores",
    "stump_search",
    "stumps_vote",
    "tanh_normalize",
    "votes",
]


def check_features(X: ArrayLike, name: str = "X") -> np.ndarray:
    """Host-side check that ``X`` is a finite, non-empty ``(m, d)`` float matrix.

    Raises:
      ValueError: naming the problem (dimension, emptiness, NaN or inf entries and where).
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (m, d); got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) and X.dtype != jnp.bfloat16:
        raise ValueError(f"{name} must be numeric; got dtype {X.dtype}")
    bad = ~np.isfinite(X.astype(np.float64))
    if bad.any():
        rows, cols = np.nonzero(bad)
        kind = "NaN" if np.isnan(X[rows[0], cols[0]]) else "inf"
        raise ValueError(
            f"{name} has {bad.sum()} non-finite (NaN/inf) entries, first {kind} at row "
            f"{rows[0]}, feature {cols[0]}; impute or drop them before fitting"
        )
    return X


# --------------------------------------------------------------------------- stumps
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


# ---------------------------------------------------------------- matrix-free stumps
class StumpSearch(NamedTuple):
    """Per-feature sort cache for matrix-free stump search over every threshold.

    Position ``k`` of feature ``f`` is the threshold between the ``k``-th and ``(k+1)``-th
    smallest training values of ``f`` (0-based), so the ``k + 1`` smallest examples vote ``-1``.

    Attributes:
      order: ``(d, m)`` int32, ``order[f]`` sorts feature ``f`` ascending (stable).
      thresholds: ``(d, m - 1)`` midpoints ``(v_k + v_{k+1}) / 2`` of consecutive sorted values
        (``v_k`` if rounding would reach ``v_{k+1}``), so ``v_k <= t < v_{k+1}``.
      valid: ``(d, m - 1)`` bool, ``v_k < v_{k+1}``: a threshold between equal values splits no
        pair of distinct values and is not a stump.
    """

    order: jax.Array
    thresholds: jax.Array
    valid: jax.Array


class BestStump(NamedTuple):
    """The stump ``sign * h`` maximizing the edge ``sum_i a_i sign h(x_i)``.

    Attributes:
      feature: int32 feature index.
      threshold: ``h(x) = +1 if x[feature] > threshold else -1``.
      sign: ``+1`` or ``-1`` (in the weights' dtype); ``-1`` selects the complement ``-h``.
      score: the edge ``sum_i a_i sign h(x_i) = |sum_i a_i h(x_i)|``.
    """

    feature: jax.Array
    threshold: jax.Array
    sign: jax.Array
    score: jax.Array


@jax.jit
def _sort_features(X: jax.Array) -> StumpSearch:
    order = jnp.argsort(X.T, axis=1, stable=True).astype(jnp.int32)
    v = jnp.take_along_axis(X.T, order, axis=1)
    lo, hi = v[:, :-1], v[:, 1:]
    mid = lo + (hi - lo) / 2
    return StumpSearch(order, jnp.where(mid < hi, mid, lo), hi > lo)


def stump_search(X: ArrayLike) -> StumpSearch:
    """Sort every feature once (``O(d m log m)``) for :func:`best_stump` / :func:`stump_scores`.

    Args:
      X: training features ``(m, d)``, finite, ``m >= 2``.

    Returns:
      :class:`StumpSearch`; it stores ``2 d m`` numbers plus ``d m`` booleans instead of the
      ``m x d (m - 1)`` matrix of all stumps.

    Raises:
      ValueError: if ``X`` is not finite 2-D, has fewer than 2 examples, or every feature is
        constant (no stump splits the sample).
    """
    X = check_features(X)
    if X.shape[0] < 2:
        raise ValueError(f"stump search needs at least 2 examples; got {X.shape[0]}")
    Xj = jnp.asarray(X)
    search = _sort_features(Xj.astype(jnp.promote_types(Xj.dtype, jnp.float32)))
    if not bool(search.valid.any()):
        raise ValueError("every feature of X is constant: no decision stump splits the sample")
    return search


def _edges(search: StumpSearch, a: jax.Array, features: jax.Array | None) -> jax.Array:
    """``sum_i a_i h(x_i) = sum_{above} a - sum_{below} a = total - 2 cumsum_below``."""
    a = a.astype(jnp.promote_types(a.dtype, jnp.float32))
    order = search.order if features is None else search.order[features]
    # a pairwise (associative) scan: more accurate than a running sum, and on XLA:CPU about
    # twice as fast as jnp.cumsum's reduce_window lowering
    below = jax.lax.associative_scan(jnp.add, a[order], axis=1)[:, :-1]
    return jnp.sum(a) - 2 * below


@jax.jit
def stump_scores(search: StumpSearch, a: ArrayLike, features: ArrayLike | None = None) -> jax.Array:
    """Edges ``sum_i a_i h_{f,k}(x_i)`` of every threshold of the given features.

    Args:
      search: from :func:`stump_search`.
      a: example weights ``(m,)`` (e.g. ``y * u`` for the dual weights ``u`` of roy2016 (6)).
      features: ``(k,)`` int feature indices; ``None`` for all ``d`` features.

    Returns:
      ``(k, m - 1)`` edges; entry ``[j, p]`` is the stump on ``features[j]`` with threshold
      ``search.thresholds[features[j], p]``. The complement ``-h`` has the opposite edge.
      Positions that are not stumps (``search.valid`` False, ties) are NaN.
    """
    a = jnp.asarray(a)
    valid = search.valid if features is None else search.valid[jnp.asarray(features)]
    feats = None if features is None else jnp.asarray(features)
    return jnp.where(valid, _edges(search, a, feats), jnp.nan)


@jax.jit
def _best_stump(search: StumpSearch, a: jax.Array) -> BestStump:
    edges = _edges(search, a, None)
    masked = jnp.where(search.valid, jnp.abs(edges), -jnp.inf)
    f = jnp.argmax(jnp.max(masked, axis=1))  # two small argmaxes beat one flat one on CPU
    k = jnp.argmax(masked[f])
    edge = edges[f, k]
    sign = jnp.where(edge >= 0, 1, -1).astype(edges.dtype)
    return BestStump(f.astype(jnp.int32), search.thresholds[f, k], sign, jnp.abs(edge))


def best_stump(search: StumpSearch, a: ArrayLike) -> BestStump:
    """The stump and sign maximizing ``sum_i a_i sign h(x_i)`` over all thresholds and features.

    Exact over the whole self-complemented set of stumps with every distinct threshold,
    in ``O(d m)`` per call (cumulative sums in the cached order). With ``a = y * u`` this is
    the column-generation rule ``argmax_h sum_i u_i y_i h(x_i)`` of roy2016 Alg. 1 (and of
    LPBoost / CG-Boost / MDBoost). Ties go to the lowest feature, then the lowest threshold.

    Args:
      search: from :func:`stump_search`.
      a: weights ``(m,)``, or ``(b, m)`` for a batch (vmapped; ``jax.vmap`` also works).

    Returns:
      :class:`BestStump` of scalars (or ``(b,)`` arrays for a batch).
    """
    a = jnp.asarray(a)
    if a.ndim == 2:
        return jax.vmap(_best_stump, in_axes=(None, 0))(search, a)
    return _best_stump(search, a)


@functools.partial(jax.jit, static_argnames="dtype")
def best_stump_votes(best: BestStump, X: ArrayLike, dtype=jnp.float32) -> jax.Array:
    """The column ``sign * h(x_i)`` of a :class:`BestStump` on ``X``, shape ``(m,)``."""
    stumps = Stumps(best.feature[None], best.threshold[None])
    return (votes(stumps, X, dtype=dtype)[:, 0] * best.sign.astype(dtype)).astype(dtype)


# ------------------------------------------------------------------------ RBF voters
def _squared_distances(X: jax.Array, C: jax.Array) -> jax.Array:
    sq = jnp.sum(X**2, axis=1)[:, None] + jnp.sum(C**2, axis=1)[None, :] - 2 * X @ C.T
    return jnp.maximum(sq, 0)


@jax.jit
def rbf_votes(centers: ArrayLike, X: ArrayLike, gamma: ArrayLike) -> jax.Array:
    """RBF voters centred on ``centers`` (laviolette2011 §6, footnote: RBF kernel).

    ``H[i, j] = k(c_j, x_i) = exp(-||x_i - c_j||^2 / (2 gamma^2))``, in ``(0, 1]``.

    Args:
      centers: ``(n, d)`` centres, usually the training points.
      X: ``(m, d)`` points to evaluate.
      gamma: kernel width (traced: ``jax.vmap`` sweeps it with one compilation).

    Returns:
      ``H`` of shape ``(m, n)``.
    """
    X, C = jnp.asarray(X), jnp.asarray(centers)
    dtype = jnp.result_type(X, C, gamma, jnp.float32)
    sq = _squared_distances(X.astype(dtype), C.astype(dtype))
    return jnp.exp(-sq / (2 * jnp.asarray(gamma, dtype) ** 2))


@jax.jit
def signed_rbf_votes(
    centers: ArrayLike, center_labels: ArrayLike, X: ArrayLike, gamma: ArrayLike
) -> jax.Array:
    """Label-signed RBF voters ``h_j(x) = y_j k(x_j, x)`` (laviolette2011 §6).

    A majority vote over these voters is ``sign(sum_j q_j y_j k(x_j, x))``, the SVM's decision
    function with ``alpha_j = q_j``, so MinCq on them is the "SVM as a majority vote" view.

    Args:
      centers: ``(n, d)`` training points ``x_j``.
      center_labels: ``(n,)`` their labels ``y_j`` in ``{-1, +1}``.
      X: ``(m, d)`` points to evaluate.
      gamma: kernel width.

    Returns:
      ``H`` of shape ``(m, n)``, entries in ``[-1, 1]``.
    """
    H = rbf_votes(centers, X, gamma)
    return H * jnp.asarray(center_labels, H.dtype)[None, :]


@jax.jit
def median_pairwise_distance(X: ArrayLike) -> jax.Array:
    """Median of ``||x_i - x_j||`` over pairs ``i < j``: the RBF width of laviolette2011 §6.

    (The TSVM protocol there sets gamma to this median.) Uses ``O(m^2)`` memory.
    """
    X = jnp.asarray(X)
    X = X.astype(jnp.result_type(X, jnp.float32))
    iu = jnp.triu_indices(X.shape[0], k=1)
    return jnp.median(jnp.sqrt(_squared_distances(X, X)[iu]))


# ------------------------------------------------------------------ normalization
class TanhNormalization(NamedTuple):
    """Parameters of ``x -> tanh((x - center) / scale)`` (roy2016 §7), one per feature."""

    center: jax.Array
    scale: jax.Array


def fit_tanh_normalization(X: ArrayLike, spread: float = 1.0) -> TanhNormalization:
    """Fit the hyperbolic-tangent normalization of roy2016 §7 on training features.

    roy2016 states only that features are "normalized using a hyperbolic tangent function";
    we standardize then squash: ``z = tanh((x - mean) / (spread * std))`` into ``(-1, 1)``.
    ``spread = 100`` gives the (nearly linear) tanh-estimator of Hampel et al. up to the
    affine map ``(z + 1) / 2``. Constant features get ``scale = 1`` (they map to 0).

    Args:
      X: training features ``(m, d)``, finite.
      spread: multiplies the standard deviation (> 0).

    Returns:
      :class:`TanhNormalization` with ``(d,)`` ``center`` and ``scale``.
    """
    X = check_features(X).astype(np.float64)
    if not spread > 0:
        raise ValueError(f"spread must be > 0; got {spread!r}")
    std = X.std(axis=0)
    scale = spread * np.where(std > 0, std, 1.0)
    return TanhNormalization(jnp.asarray(X.mean(axis=0)), jnp.asarray(scale))


@jax.jit
def tanh_normalize(params: TanhNormalization, X: ArrayLike) -> jax.Array:
    """Apply ``tanh((X - center) / scale)`` feature-wise (roy2016 §7); shape ``(m, d)``."""
    X = jnp.asarray(X)
    X = X.astype(jnp.result_type(X, jnp.float32))
    return jnp.tanh((X - params.center.astype(X.dtype)) / params.scale.astype(X.dtype))
