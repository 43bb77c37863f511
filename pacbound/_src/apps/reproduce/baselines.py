"""The reproductions' one baseline that is not a PAC-Bayesian learner: ridge regression on votes.

germain2009 §5 compares KL-QL with ridge regression over the decision stumps' votes ("RR"):
eq. (17) with ``v = w / gamma`` and no box, ``min_v C sum_i (y_i v.h(x_i) - 1)^2 + ||v||^2``,
i.e. ``v = (H^T W H + I / C)^-1 H^T W y`` (scikit-learn's ``RidgeClassifier(alpha=1/C,
fit_intercept=False)``). :func:`ridge_votes` follows the learner protocol
(:mod:`pacbound._src.protocol`), so :func:`pacbound._src.sweep.cross_validate` runs it
like the
other learners; its vote ``H v`` states the posterior ``|v| / ||v||_1`` over ``[H, -H]``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.protocol import LearnerResult, learner, learner_status, posterior_from_weights
from pacbound._src.validation import (
    check_labels,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
)

__all__ = ["RidgeInfo", "ridge_votes"]


class RidgeInfo(NamedTuple):
    """What :func:`ridge_votes` adds: the ridge coefficients ``v`` (unnormalized)."""

    coefficients: jax.Array


@jax.jit
def _ridge(H, y, C, w):
    gram = H.T @ (w[:, None] * H) + jnp.eye(H.shape[1], dtype=H.dtype) / C
    v = jnp.linalg.solve(gram, H.T @ (w * y))
    residual = jnp.sum(w * (y - H @ v) ** 2)
    q = posterior_from_weights(v)
    objective = C * residual + v @ v
    one = jnp.ones((), jnp.int32)
    size = jnp.int32(q.shape[0])
    return LearnerResult(q, q[: v.shape[0]] - q[v.shape[0] :], objective, one,
                         learner_status(True), None, size, info=RidgeInfo(v))  # fmt: skip


@learner()
def ridge_votes(
    H: ArrayLike, y: ArrayLike, C: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> LearnerResult:
    """Ridge regression on the votes (germain2009 §5, eq. 17 without the box), closed form.

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      C: the loss's weight against ``||v||^2`` (``> 0``; scikit-learn's ``alpha = 1 / C``).
      sample_weight: ``(m,)`` weights ``>= 0`` (0/1 fold masks equal slicing).

    Returns:
      :class:`~pacbound.solvers.LearnerResult` (one step, converged) whose vote is
      ``H v / ||v||_1``, with the coefficients ``v`` in ``info``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = ridge_votes(H, y, 1.0)
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.q.sum()), 4)
      (0.0, 1.0)
    """
    check_votes(H)
    check_labels(y, jnp.shape(H)[0])
    check_sample_weight(sample_weight, jnp.shape(H)[0])
    check_scalar("C", C, 0.0, low_open=True)
    dtype = float_dtype(H, y)
    H, y = jnp.asarray(H, dtype), jnp.asarray(y, dtype)
    w = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    return _ridge(H, y, jnp.asarray(C, dtype), w)
