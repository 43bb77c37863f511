"""Features and the voters built on them directly: input checks, RBF voters, tanh normalization.

* :func:`check_features`: the host-side check every fitting function runs on ``X``.
* RBF voters centred on training points (laviolette2011 §6): ``exp(-||x - x_i||^2 / (2 g^2))``
  and the label-signed ``y_i k(x_i, x)`` of the SVM-as-majority-vote view.
* :func:`fit_tanh_normalization` / :func:`tanh_normalize`: roy2016 §7 runs every experiment on
  features "normalized using a hyperbolic tangent function".

All are re-exported by :mod:`pacbound.voters`, where the decision stumps live.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "TanhNormalization",
    "check_features",
    "fit_tanh_normalization",
    "median_pairwise_distance",
    "rbf_votes",
    "signed_rbf_votes",
    "tanh_normalize",
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
