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

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.validation import UNIT, check_sample_weight, domains, is_concrete


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


class MulticlassStatistics(NamedTuple):
    """Statistics of a multiclass majority vote (see :func:`multiclass_margins`).

    Attributes:
      margins: ``(m,)`` margins ``M_Q(x_i, y_i)`` in ``[-1, 1]``.
      mu1: weighted first moment ``E[M_Q]``.
      mu2: weighted second moment ``E[M_Q^2]``.
      gibbs_risk: ``r = E E_Q 1{h(x) != y}``.
      joint_error: ``e = E E_{Q^2} 1{h(x) != y, h'(x) != y}``.
      disagreement: ``d = E E_{Q^2} 1{h(x) != h'(x)}``.
      one_error: ``2 (r - e) = E E_{Q^2} 1{exactly one of h(x), h'(x) errs}``, the pairwise
        loss in the relaxed C-bound (equal to the disagreement when ``K = 2``).
      majority_vote_risk: weighted fraction of margins ``<= 0`` (ties are errors).
      correct_margins: ``(m,)`` binary margins ``1 - 2 w(x) = 2 s(x)[y] - 1`` of the vote
        "correct vs wrong": their moments are ``1 - 2r`` and ``1 - 2 one_error``, so
        :func:`pacbound.certify.certify_margins` on them certifies a multiclass posterior
        with every margin-moment bound (the vote errs only if ``w >= 1/2``).
    """

    margins: jax.Array
    mu1: jax.Array
    mu2: jax.Array
    gibbs_risk: jax.Array
    joint_error: jax.Array
    disagreement: jax.Array
    one_error: jax.Array
    majority_vote_risk: jax.Array
    correct_margins: jax.Array


def _check_multiclass(votes, y, q, num_classes, sample_weight) -> int:
    """Shapes always (they are static); label and vote values only at concrete inputs."""
    shape = np.shape(votes)
    if len(shape) == 2:
        if num_classes is None:
            raise ValueError("num_classes is required for (m, n) label votes")
        k = int(num_classes)
    elif len(shape) == 3:
        k = shape[2]
        if num_classes is not None and int(num_classes) != k:
            raise ValueError(f"num_classes={num_classes} but votes have {k} classes")
    else:
        raise ValueError(f"votes must be (m, n) labels or (m, n, K) scores; got shape {shape}")
    m, n = shape[:2]
    if k < 2:
        raise ValueError(f"num_classes must be >= 2; got {k}")
    if np.shape(y) != (m,):
        raise ValueError(f"y must have shape ({m},); got {np.shape(y)}")
    if np.shape(q) != (n,):
        raise ValueError(f"q must have shape ({n},); got {np.shape(q)}")
    check_sample_weight(sample_weight, m)
    if len(shape) == 3 and is_concrete(votes):
        v = np.asarray(votes, np.float64)
        if not (np.isfinite(v).all() and v.min() >= 0 and v.max() <= 1):
            raise ValueError("(m, n, K) votes must be class probabilities in [0, 1]")
    for name, labels in (("y", y), ("votes", votes)) if len(shape) == 2 else (("y", y),):
        if is_concrete(labels):
            found = np.unique(np.asarray(labels))
            bad = found[(found < 0) | (found >= k) | (found != np.round(found))]
            if bad.size:
                raise ValueError(f"{name} must hold class labels in 0..{k - 1}; found {bad[:5]}")
    return k


def _class_scores(votes, q, k: int) -> jax.Array:
    """``s(x)[c] = sum_j q_j p_j(x)[c]``, shape ``(m, K)`` (one-hot ``p_j`` for label votes)."""
    q = jnp.asarray(q)
    dtype = jnp.result_type(q.dtype, jnp.float32)
    votes = jnp.asarray(votes)
    if votes.ndim == 2:
        p = jax.nn.one_hot(votes, k, dtype=dtype)
    else:
        p = votes.astype(dtype)
    return jnp.einsum("mnk,n->mk", p, q.astype(dtype))


@domains(q=UNIT)
def multiclass_margins(
    votes: ArrayLike,
    y: ArrayLike,
    q: ArrayLike,
    num_classes: int | None = None,
    sample_weight: ArrayLike | None = None,
) -> MulticlassStatistics:
    """Multiclass margins, their moments, and the Gibbs risk, joint error and disagreement.

    For voters with labels in ``{0..K-1}`` (``votes`` of shape ``(m, n)``, ints) or class
    probabilities (``votes`` of shape ``(m, n, K)``), with scores
    ``s(x)[c] = sum_j q_j p_j(x)[c]`` (``p_j`` one-hot for label voters), the margin is
    (Laviolette et al., Neurocomputing 2017, Definition 2)

    .. math:: M_Q(x, y) = s(x)[y] - \\max_{c \\ne y} s(x)[c],

    and the majority vote errs iff ``M_Q <= 0`` (a tie counts as an error, as in the binary
    ``majority_vote_risk``). With ``w(x) = 1 - s(x)[y]`` the statistics are
    ``r = E[w]``, ``e = E[w^2]`` and ``d = E[1 - sum_c s(x)[c]^2]``, means weighted by
    ``sample_weight``. ``K = 2`` with labels ``(y + 1) / 2`` gives the binary quantities.
    ``num_classes`` is static; values are validated only at concrete inputs.

    Example:
      >>> import jax.numpy as jnp
      >>> votes = jnp.array([[0, 0, 1], [2, 1, 1], [2, 2, 2], [0, 1, 2]])
      >>> y = jnp.array([0, 1, 2, 2])
      >>> s = multiclass_margins(votes, y, jnp.ones(3) / 3, num_classes=3)
      >>> [round(float(v), 4) for v in s.margins]
      [0.3333, 0.3333, 1.0, 0.0]
      >>> float(s.majority_vote_risk), round(float(s.gibbs_risk), 4)
      (0.25, 0.3333)
    """
    k = _check_multiclass(votes, y, q, num_classes, sample_weight)
    scores = _class_scores(votes, q, k)
    on_y = jax.nn.one_hot(jnp.asarray(y).astype(jnp.int32), k, dtype=scores.dtype)
    s_y = jnp.sum(scores * on_y, axis=1)
    rival = jnp.max(jnp.where(on_y > 0, -jnp.inf, scores), axis=1)
    margin = s_y - rival
    w = 1.0 - s_y
    if sample_weight is None:
        weight = jnp.full(margin.shape, 1.0 / margin.shape[0], margin.dtype)
    else:
        weight = jnp.asarray(sample_weight, margin.dtype)
        weight = weight / jnp.sum(weight)

    def mean(x):
        return jnp.sum(weight * x)

    r, e = mean(w), mean(w**2)
    return MulticlassStatistics(
        margins=margin,
        mu1=mean(margin),
        mu2=mean(margin**2),
        gibbs_risk=r,
        joint_error=e,
        disagreement=mean(1.0 - jnp.sum(scores**2, axis=1)),
        one_error=mean(2.0 * w * (1.0 - w)),
        majority_vote_risk=mean((margin <= 0).astype(margin.dtype)),
        correct_margins=1.0 - 2.0 * w,
    )


def correctness_votes(votes: ArrayLike, y: ArrayLike, num_classes: int | None = None) -> jax.Array:
    """The ``(m, n)`` matrix ``C[i, j] = 2 p_j(x_i)[y_i] - 1`` in ``[-1, 1]`` of multiclass votes.

    With ``w = 1 - s[y]`` the posterior's mass on wrong classes (:func:`multiclass_margins`),
    ``C q = 1 - 2 w`` is the ``correct_margins`` of ``q``: the pair ``(C, 1)`` is a binary
    problem whose margin moments, Gibbs risk, joint error and pair losses are the multiclass
    ones, and whose ``P(M <= 0) = P(w >= 1/2)`` is at least the multiclass vote's risk (the vote
    errs only where ``s[y] <= 1/2``). Every margin-moment bound of the registry therefore
    certifies a multiclass posterior over the ``n`` voters read from ``C`` (never over
    ``[C, -C]``: ``-C_j`` is no voter of ``K`` classes). Validated as :func:`multiclass_margins`.

    Example:
      >>> import jax.numpy as jnp
      >>> correctness_votes(jnp.array([[0, 2], [1, 1]]), jnp.array([0, 2]), num_classes=3)
      Array([[ 1., -1.],
             [-1., -1.]], dtype=float32)
    """
    n = np.shape(votes)[1] if np.ndim(votes) >= 2 else 0
    _check_multiclass(votes, y, np.zeros(n), num_classes, None)
    votes, y = jnp.asarray(votes), jnp.asarray(y)
    if votes.ndim == 2:  # label voters: p_j(x)[y] is 1 where h_j(x) = y
        p_y = (votes == y[:, None]).astype(jnp.result_type(float))
    else:
        p_y = jnp.take_along_axis(votes, y.astype(jnp.int32)[:, None, None], axis=2)[..., 0]
    return 2.0 * p_y - 1.0
