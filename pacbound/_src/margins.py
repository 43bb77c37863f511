"""Margins of a weighted majority vote and their first two moments.

A majority vote is a pair (voters, ``q``): ``H`` is the ``(m, n)`` matrix of votes
``H[i, j] = h_j(x_i)`` in ``[-1, 1]`` and ``q`` a probability vector over its columns. Following
roy2016 §2 (and laviolette2011 §3), the margin of the vote on ``(x, y)`` is

.. math:: M_Q(x, y) = y \\sum_j q_j h_j(x),

and the C-bound depends on its empirical first and second moments
``mu1 = mean(M_Q)`` and ``mu2 = mean(M_Q ** 2)`` (``y ** 2 = 1``, so ``mu2`` ignores the labels).

For real-valued voters the Gibbs risk, the disagreement and the joint error are *defined* by
their margin forms (Germain et al., JMLR 2015, §4): ``(1 - mu1) / 2``, ``(1 - mu2) / 2`` and
``(1 - 2 mu1 + mu2) / 4``. For ±1 voters they equal the classical definitions
``E_Q P(h(x) != y)``, ``E_{Q^2} P(h(x) != h'(x))`` and ``E_{Q^2} P(h(x) != y, h'(x) != y)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike


def _vote(H: ArrayLike, q: ArrayLike) -> jax.Array:
    """Weighted vote ``H @ q``, accumulated in ``q``'s float dtype (H may be int8 or bf16)."""
    q = jnp.asarray(q)
    dtype = jnp.result_type(q.dtype, jnp.float32)
    return jnp.asarray(H).astype(dtype) @ q.astype(dtype)


def margins(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Margins ``M_Q(x_i, y_i) = y_i * (H @ q)_i`` of every example (roy2016 §2).

    Args:
      H: votes, shape ``(m, n)``, entries in ``[-1, 1]``.
      y: labels in ``{-1, +1}``, shape ``(m,)``.
      q: distribution over the ``n`` voters.

    Returns:
      The ``(m,)`` margins, in ``[-1, 1]``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> [round(float(v), 4) for v in margins(H, y, jnp.ones(3) / 3)]
      [0.3333, 0.3333, -0.3333, 1.0]
    """
    return jnp.asarray(y) * _vote(H, q)


def margin_moments(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """First and second moments of the margin, ``(mu1, mu2)`` (roy2016 Definition 2).

    ``mu1 = (1/m) sum_i y_i (H q)_i`` and ``mu2 = (1/m) sum_i (H q)_i ** 2``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> mu1, mu2 = margin_moments(H, y, jnp.ones(3) / 3)
      >>> round(float(mu1), 4), round(float(mu2), 4)
      (0.3333, 0.3333)
    """
    vote = _vote(H, q)
    return jnp.mean(jnp.asarray(y) * vote), jnp.mean(vote**2)


def gibbs_risk(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical Gibbs risk ``R_S(G_Q) = (1 - mu1) / 2``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> round(float(gibbs_risk(H, y, jnp.ones(3) / 3)), 4)  # 4 errors in 12 votes
      0.3333
    """
    return (1.0 - margin_moments(H, y, q)[0]) / 2.0


def disagreement(H: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical disagreement ``d_S(Q) = (1 - mu2) / 2``; it needs no labels.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> round(float(disagreement(H, jnp.ones(3) / 3)), 4)
      0.3333
      >>> float(disagreement(H, jnp.array([1., 0., 0.])))  # a single voter never disagrees
      0.0
    """
    return (1.0 - jnp.mean(_vote(H, q) ** 2)) / 2.0


def joint_error(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical joint error ``e_S(Q) = (1 - 2 mu1 + mu2) / 4``, so ``R_S(G_Q) = e_S + d_S / 2``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> round(float(joint_error(H, y, jnp.ones(3) / 3)), 4)  # 1/3 - 1/3 / 2
      0.1667
    """
    mu1, mu2 = margin_moments(H, y, q)
    return (1.0 - 2.0 * mu1 + mu2) / 4.0


def majority_vote_risk(H: ArrayLike, y: ArrayLike, q: ArrayLike) -> jax.Array:
    """Empirical risk of the majority vote ``B_Q``: the fraction of margins ``<= 0``.

    A tie (margin exactly 0) counts as an error, as in roy2016 §2:
    ``R(B_Q) = P(M_Q(x, y) <= 0)``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> float(majority_vote_risk(H, y, jnp.ones(3) / 3))  # the third example is misclassified
      0.25
    """
    m = margins(H, y, q)
    return jnp.mean((m <= 0).astype(m.dtype))
