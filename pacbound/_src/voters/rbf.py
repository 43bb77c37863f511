"""RBF voters centred on training points (laviolette2011 §6).

* :func:`rbf_votes`: ``h_j(x) = exp(-||x - c_j||^2 / (2 gamma^2))``;
* :func:`signed_rbf_votes`: the label-signed ``y_j k(x_j, x)`` of the SVM-as-majority-vote
  view;
* :func:`median_pairwise_distance`: the width heuristic of laviolette2011 §6.

Voters centred on *training* points depend on the sample: a PAC-Bayes bound with a prior
fixed before seeing the sample does not cover them (use a held-out part of the sample for
the centres, or the test-set bound).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["median_pairwise_distance", "rbf_votes", "signed_rbf_votes"]


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

    Example:
      >>> import jax.numpy as jnp
      >>> H = rbf_votes(jnp.array([[0.0], [1.0]]), jnp.array([[0.0], [2.0]]), 1.0)
      >>> [[round(float(h), 4) for h in row] for row in H]  # exp(-d^2 / 2)
      [[1.0, 0.6065], [0.1353, 0.6065]]
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

    Example:
      >>> import jax.numpy as jnp
      >>> centers, labels = jnp.array([[0.0], [1.0]]), jnp.array([1.0, -1.0])
      >>> H = signed_rbf_votes(centers, labels, jnp.array([[0.0], [2.0]]), 1.0)
      >>> [[round(float(h), 4) for h in row] for row in H]
      [[1.0, -0.6065], [0.1353, -0.6065]]
    """
    H = rbf_votes(centers, X, gamma)
    return H * jnp.asarray(center_labels, H.dtype)[None, :]


@jax.jit
def median_pairwise_distance(X: ArrayLike) -> jax.Array:
    """Median of ``||x_i - x_j||`` over pairs ``i < j``: the RBF width of laviolette2011 §6.

    (The TSVM protocol there sets gamma to this median.) Uses ``O(m^2)`` memory.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(median_pairwise_distance(jnp.array([[0.0], [1.0], [3.0]]))), 4)  # of 1, 3, 2
      2.0
    """
    X = jnp.asarray(X)
    X = X.astype(jnp.result_type(X, jnp.float32))
    iu = jnp.triu_indices(X.shape[0], k=1)
    return jnp.median(jnp.sqrt(_squared_distances(X, X)[iu]))
