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

The learners here validate and wrap: the program's data, checks and certificate are in
:mod:`pacbound._src.learning.mincq_gap`, the solver
(:func:`~pacbound._src.learning.mincq_fista.solve_mincq`,
restarted FISTA with a certified duality gap) in :mod:`pacbound._src.learning.mincq_fista`, the
continuation over ``mu`` (:func:`~pacbound._src.solvers.mincq_path.mincq_path`, which :func:`mincq`
declares as its path over ``mu``) in :mod:`pacbound._src.solvers.mincq_path`.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.learning.mincq_fista import default_tol, solve_mincq
from pacbound._src.learning.mincq_gap import (
    MinCqInfo,
    MinCqProblem,
    check_mincq_inputs,
    check_tolerances,
    max_realizable_mu,
    mincq_problem,
)
from pacbound._src.protocol import LearnerResult, learner, votes_matrix
from pacbound._src.solvers.mincq_path import mincq_path

__all__ = [
    "MinCqInfo",
    "MinCqProblem",
    "max_realizable_mu",
    "mincq",
    "mincq_problem",
    "solve_mincq",
    "tmincq",
]


def _solve(problem: MinCqProblem, mu, q0, tol, atol, max_iter) -> LearnerResult:
    """:func:`solve_mincq` with the defaults made arrays, so that every call shares one trace."""
    dtype, n = problem.first_moments.dtype, problem.first_moments.shape[0]
    q0 = jnp.full(2 * n, 1 / (2 * n), dtype) if q0 is None else q0
    tol = default_tol(dtype) if tol is None else tol
    return solve_mincq(problem, mu, q0, tol, atol, max_iter)


@learner(path="mu", solve_path=mincq_path, path_options=("tol", "atol", "max_iter"))
def mincq(
    voters: ArrayLike,
    y: ArrayLike,
    mu: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
    q0: ArrayLike | None = None,
) -> LearnerResult:
    """MinCq (laviolette2011 Definition 5, Program 1) over the self-complemented set ``[H, -H]``.

    Among quasi-uniform posteriors with first margin moment ``mu``, minimizes the second moment,
    hence the C-bound ``1 - mu^2 / mu2`` (Theorem 1). ``H`` holds the first ``n`` voters; the
    result's ``q`` covers the ``2n`` columns of ``[H, -H]``.
    Validates its inputs when they are concrete (shapes always); traceable, so
    ``jax.vmap(mincq, in_axes=(None, None, 0))(H, y, mus)`` sweeps ``mu`` with one compilation.
    Declares :func:`~pacbound._src.solvers.mincq_path.mincq_path` as its continuation over ``mu``
    (``traits(mincq).solve_path``), which sweeps use for grids over ``mu`` alone.

    Args:
      H: votes ``(m, n)``, entries in ``[-1, 1]`` (stumps, RBF voters, ...).
      y: labels in ``{-1, +1}``, ``(m,)``.
      mu: the first moment to reach, in ``(0, max_realizable_mu(H, y, sample_weight)]``.
      sample_weight: ``(m,)`` example weights ``>= 0``, not all 0 (traced): every moment is the
        weighted mean, so weight 0 leaves an example out and ``jax.vmap`` over a stack of 0/1
        masks runs cross-validation folds with one compilation (see :func:`mincq_problem`).
      tol: the stopping tolerance: the certified duality gap on the margin's second moment
        ``mu2`` must be ``<= tol * mu2 + atol``; default ``1e-6`` in float64, ``1e-5`` in
        float32 (see :func:`solve_mincq`).
      atol: the absolute part of that tolerance.
      max_iter: cap on FISTA iterations (one product with ``M`` each).
      q0: warm start over the ``2n`` columns (a previous result's ``q``).

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q = (Q, 1/n - Q)`` over
      ``[H, -H]``; ``weights = q[:n] - q[n:] = 2 Q - 1/n``; ``objective`` Program 1's
      ``Q^T M Q - A^T Q``; ``steps`` the iterations; ``converged`` whether the duality gap met
      the tolerance; ``stumps = None``; ``info`` a :class:`MinCqInfo` (``second_moment``,
      ``duality_gap`` on the objective, ``kkt_residual``). Under ``jit`` / ``vmap`` an
      unrealizable ``mu`` gives ``q`` full of NaN and ``converged = False``.

    Raises:
      ValueError: for malformed ``H`` / ``y``, labels other than ±1, bad sample weights or
        tolerances, or an unrealizable ``mu`` (the message gives the largest realizable one).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = mincq(H, y, 0.2)  # the margin's first moment is mu = 0.2
      >>> F = H @ r.weights
      >>> float(jnp.mean(jnp.sign(F) != y)), round(float(jnp.mean(y * F)), 3), bool(r.converged)
      (0.0, 0.2, True)
    """
    H = votes_matrix(voters, "mincq")
    check_mincq_inputs(H, y, mu, sample_weight)
    check_tolerances(tol, atol, max_iter)
    return _solve(mincq_problem(H, y, None, sample_weight), mu, q0, tol, atol, max_iter)


def tmincq(
    voters: ArrayLike,
    y: ArrayLike,
    mu: ArrayLike,
    *,
    H_unlabeled: ArrayLike,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
    q0: ArrayLike | None = None,
) -> LearnerResult:
    """TMinCq (laviolette2011 Definition 6, Program 2): MinCq with ``mu2`` over ``S ∪ U``.

    The first moment is fixed on the labeled votes ``H``; the second moment, which needs no
    labels, is taken over the labeled and the unlabeled votes ``H_unlabeled`` (``(m_u, n)``,
    the same voters) together. Same arguments, checks and result as :func:`mincq`;
    ``info.second_moment`` is the one over ``S ∪ U``. ``sample_weight`` weighs the labeled
    examples, each unlabeled one weighing 1.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = tmincq(H, y, 0.2, H_unlabeled=jnp.array([[1., -1., -1.], [-1., -1., 1.]]))
      >>> risk = jnp.mean(jnp.sign(H @ r.weights) != y)
      >>> float(risk), round(float(r.q.sum()), 4), bool(r.converged)
      (0.0, 1.0, True)
    """
    H = votes_matrix(voters, "tmincq")
    check_mincq_inputs(H, y, mu, sample_weight, H_unlabeled)
    check_tolerances(tol, atol, max_iter)
    problem = mincq_problem(H, y, H_unlabeled, sample_weight)
    return _solve(problem, mu, q0, tol, atol, max_iter)
