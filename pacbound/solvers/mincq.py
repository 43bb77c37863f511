"""MinCq and TMinCq (laviolette2011 Programs 1 and 2) by accelerated projected gradient.

laviolette2011 §4 restricts the posterior to *quasi-uniform* distributions on the
self-complemented set ``[H, -H]`` (``Q(h_j) + Q(-h_j) = 1/n``), fixes the first moment of the
margin to ``mu`` and minimizes the second. With ``Q = (Q(h_1), ..., Q(h_n))``, the voters' mean
margins ``m_S = H^T y / m`` (Eq. (2)), ``M = H^T H / m`` and ``A = M 1 / n``, Program 1 reads

.. math::

    \\min_Q\\; Q^\\top M Q - A^\\top Q \\quad\\text{s.t.}\\quad
    m_S^\\top Q = \\frac{\\mu}{2} + \\frac{1}{2n} \\sum_j (m_S)_j, \\qquad 0 \\le Q_j \\le 1/n,

and the vote puts weight ``2 Q_j - 1/n`` on ``h_j``. We solve it in the centred weights
``u = 2 n Q - 1`` in ``[-1, 1]^n``, where the margin's moments are exactly
``mu1 = m_S^T u / n`` and ``mu2 = u^T M u / n^2`` (so Program 1's objective is
``(mu2 - 1^T M 1 / n^2) / 4``): minimize ``mu2`` on the box ∩ hyperplane ``{m_S^T u / n = mu}``.
Program 2 (TMinCq) is the same with ``M`` taken over the labeled *and* unlabeled examples.

The solver, :func:`~pacbound.solvers.mincq_fista.solve_mincq` (restarted FISTA with a certified
duality gap), lives in :mod:`pacbound.solvers.mincq_fista`; this module builds the problem from
the votes, validates, and wraps it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound.solvers.mincq_fista import MinCqProblem, MinCqResult, default_rtol, solve_mincq
from pacbound.validation import (
    check_labels,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
    is_concrete,
)

__all__ = [
    "MinCqProblem",
    "MinCqResult",
    "max_realizable_mu",
    "mincq",
    "mincq_problem",
    "solve_mincq",
    "tmincq",
]


def _example_weights(y: jax.Array, sample_weight: ArrayLike | None) -> jax.Array:
    """Labeled examples' weights as given (``1`` each by default), in ``y``'s dtype."""
    return jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)


@jax.jit
def mincq_problem(
    H: ArrayLike,
    y: ArrayLike,
    H_unlabeled: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> MinCqProblem:
    """Precompute Program 1 (or Program 2 when ``H_unlabeled`` is given) for one voter matrix.

    With example weights ``w`` every mean over the labeled examples is the weighted one
    (``m_S = H^T (w y) / sum(w)``, ``M = H^T diag(w) H / sum(w)``), so an example of weight 0
    is left out exactly as if it were sliced off and a 0/1 mask runs a cross-validation fold.
    For Program 2 the weights count labeled examples against the unlabeled ones, each of
    weight 1: ``M = (H^T diag(w) H + H_u^T H_u) / (sum(w) + m_u)``.

    Args:
      H: votes on the labeled examples, ``(m, n)``, entries in ``[-1, 1]``; the first ``n``
        voters of the self-complemented set ``[H, -H]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      H_unlabeled: votes on unlabeled examples ``(m_u, n)``; TMinCq's second moment runs over
        labeled and unlabeled examples alike (laviolette2011 Program 2).
      sample_weight: ``(m,)`` weights ``>= 0`` of the labeled examples (traced; default 1).

    Returns:
      :class:`MinCqProblem`; unvalidated (see :func:`mincq` for the checks).
    """
    dtype = float_dtype(H, y)
    H, y = jnp.asarray(H, dtype), jnp.asarray(y, dtype)
    w = _example_weights(y, sample_weight)
    V, weights = H, w
    if H_unlabeled is not None:
        V = jnp.concatenate([H, jnp.asarray(H_unlabeled, dtype)])
        weights = jnp.concatenate([w, jnp.ones(V.shape[0] - H.shape[0], dtype)])
    weights = weights / jnp.sum(weights)
    op = V * jnp.sqrt(weights)[:, None] if V.shape[0] < V.shape[1] else V.T @ (V * weights[:, None])
    return MinCqProblem(op, H.T @ (w * y) / jnp.sum(w), weights @ V)


def max_realizable_mu(
    H: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
) -> jax.Array:
    """Largest ``S``-realizable margin: ``max_Q mu1 = (1/n) sum_j |(1/m) sum_i y_i h_j(x_i)|``.

    Over quasi-uniform ``Q`` (laviolette2011 Definition 5), ``mu1 = m_S^T u / n`` with
    ``u = 2 n Q - 1`` in ``[-1, 1]^n``, maximized at ``u = sign(m_S)``. With ``sample_weight``
    the inner mean is the weighted one, ``sum_i w_i y_i h_j(x_i) / sum_i w_i``.
    """
    dtype = float_dtype(H, y)
    y = jnp.asarray(y, dtype)
    w = _example_weights(y, sample_weight)
    return jnp.mean(jnp.abs(jnp.asarray(H, dtype).T @ (w * y) / jnp.sum(w)))


def _check(H, y, mu, sample_weight, H_unlabeled=None) -> None:
    """Boundary checks of :func:`mincq` / :func:`tmincq` (values only when concrete)."""
    check_votes(H, "H")
    check_labels(y, jnp.shape(H)[0])
    check_sample_weight(sample_weight, jnp.shape(H)[0])
    if H_unlabeled is not None:
        check_votes(H_unlabeled, "H_unlabeled")
        if jnp.shape(H_unlabeled)[1] != jnp.shape(H)[1]:
            raise ValueError(
                f"H_unlabeled has {jnp.shape(H_unlabeled)[1]} voters; H has {jnp.shape(H)[1]}"
            )
    check_scalar("mu", mu, 0.0, low_open=True)
    if is_concrete(mu, H, y, sample_weight):
        mu, largest = float(mu), float(max_realizable_mu(H, y, sample_weight))
        if mu > largest * (1 + 1e-9):
            raise ValueError(
                f"mu = {mu:g} is not realizable by a quasi-uniform posterior on these voters: the "
                f"largest realizable mu is {largest:.10g} = (1/n) sum_j |(1/m) sum_i y_i h_j(x_i)|"
            )


def _solve(problem: MinCqProblem, mu, q0, rtol, atol, max_iter) -> MinCqResult:
    """:func:`solve_mincq` with the defaults made arrays, so that every call shares one trace."""
    dtype, n = problem.first_moments.dtype, problem.first_moments.shape[0]
    q0 = jnp.full(2 * n, 1 / (2 * n), dtype) if q0 is None else q0
    rtol = default_rtol(dtype) if rtol is None else rtol
    return solve_mincq(problem, mu, q0, rtol, atol, max_iter)


def mincq(
    H: ArrayLike,
    y: ArrayLike,
    mu: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    q0: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
) -> MinCqResult:
    """MinCq (laviolette2011 Definition 5, Program 1) over the self-complemented set ``[H, -H]``.

    Among quasi-uniform posteriors with first margin moment ``mu``, minimizes the second moment,
    hence the C-bound ``1 - mu^2 / mu2`` (Theorem 1). ``H`` holds the first ``n`` voters; the
    result's ``q`` covers the ``2n`` columns of ``pacbound.voters.self_complemented(H)``.
    Validates its inputs when they are concrete (shapes always); traceable, so
    ``jax.vmap(mincq, in_axes=(None, None, 0))(H, y, mus)`` sweeps ``mu`` with one compilation.

    Args:
      H: votes ``(m, n)``, entries in ``[-1, 1]`` (stumps, RBF voters, ...).
      y: labels in ``{-1, +1}``, ``(m,)``.
      mu: the first moment to reach, in ``(0, max_realizable_mu(H, y, sample_weight)]``.
      sample_weight: ``(m,)`` example weights ``>= 0``, not all 0 (traced): every moment is the
        weighted mean, so weight 0 leaves an example out and ``jax.vmap`` over a stack of 0/1
        masks runs cross-validation folds with one compilation (see :func:`mincq_problem`).
      q0: warm start over the ``2n`` columns (a previous result's ``q``).
      rtol, atol: duality-gap tolerances on ``mu2`` (see :func:`solve_mincq`).
      max_iter: iteration cap.

    Returns:
      :class:`MinCqResult`.

    Raises:
      ValueError: for malformed ``H`` / ``y``, labels other than ±1, or an unrealizable ``mu``
        (the message gives the largest realizable one).
    """
    _check(H, y, mu, sample_weight)
    return _solve(mincq_problem(H, y, None, sample_weight), mu, q0, rtol, atol, max_iter)


def tmincq(
    H: ArrayLike,
    y: ArrayLike,
    H_unlabeled: ArrayLike,
    mu: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    q0: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
) -> MinCqResult:
    """TMinCq (laviolette2011 Definition 6, Program 2): MinCq with ``mu2`` over ``S ∪ U``.

    The first moment is fixed on the labeled votes ``H``; the second moment, which needs no
    labels, is taken over the labeled and the unlabeled votes ``H_unlabeled`` together. Same
    arguments, checks and result as :func:`mincq`; ``second_moment`` is the one over ``S ∪ U``.
    ``sample_weight`` weighs the labeled examples, each unlabeled one weighing 1.
    """
    _check(H, y, mu, sample_weight, H_unlabeled)
    problem = mincq_problem(H, y, H_unlabeled, sample_weight)
    return _solve(problem, mu, q0, rtol, atol, max_iter)
