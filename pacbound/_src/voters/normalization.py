"""The hyperbolic-tangent feature normalization of roy2016 §7.

roy2016 runs every experiment on features "normalized using a hyperbolic tangent function";
:func:`fit_tanh_normalization` fits it on training features and :func:`tanh_normalize`
applies it.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.validation import check_features

__all__ = ["TanhNormalization", "fit_tanh_normalization", "tanh_normalize"]


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

    Example:
      >>> import jax.numpy as jnp
      >>> p = fit_tanh_normalization(jnp.array([[0.0], [1.0], [2.0], [3.0]]))
      >>> float(p.center[0]), round(float(p.scale[0]), 4)  # the mean and the standard deviation
      (1.5, 1.118)
    """
    X = check_features(X).astype(np.float64)
    if not spread > 0:
        raise ValueError(f"spread must be > 0; got {spread!r}")
    std = X.std(axis=0)
    scale = spread * np.where(std > 0, std, 1.0)
    return TanhNormalization(jnp.asarray(X.mean(axis=0)), jnp.asarray(scale))


@jax.jit
def tanh_normalize(params: TanhNormalization, X: ArrayLike) -> jax.Array:
    """Apply ``tanh((X - center) / scale)`` feature-wise (roy2016 §7); shape ``(m, d)``.

    Example:
      >>> import jax.numpy as jnp
      >>> X = jnp.array([[0.0], [1.0], [2.0], [3.0]])
      >>> [round(float(z), 4) for z in tanh_normalize(fit_tanh_normalization(X), X)[:, 0]]
      [-0.8721, -0.4196, 0.4196, 0.8721]
    """
    X = jnp.asarray(X)
    X = X.astype(jnp.result_type(X, jnp.float32))
    return jnp.tanh((X - params.center.astype(X.dtype)) / params.scale.astype(X.dtype))
