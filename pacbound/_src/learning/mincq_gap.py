"""Program 1 of MinCq (laviolette2011 Programs 1-2) as its solvers share it: the data, the
input checks and the certificate.

In the centred weights ``u = 2 n Q - 1`` in ``[-1, 1]^n`` of the voters of ``[H, -H]``, Program 1
is: minimize ``mu2(u) = u^T M u / n^2`` on the box ∩ hyperplane ``{a^T u = mu}``, ``a = m_S / n``
(:mod:`pacbound._src.solvers.mincq`). Its solvers (restarted FISTA,
:mod:`~pacbound._src.learning.mincq_fista`; the continuation over ``mu``,
:mod:`~pacbound._src.solvers.mincq_path`) stop on the Lagrangian bound

.. math:: \\mathrm{gap}(u, \\lambda) = g^\\top u + \\lambda \\mu + \\sum_j |g_j + \\lambda a_j|
          \\;\\ge\\; \\mu_2(u) - \\mu_2^\\star, \\qquad g = \\nabla \\mu_2(u),

valid for any ``lambda`` and any ``u`` in the box (the minimum over ``v`` in the box ∩ hyperplane
of the linearization ``g^T (v - u)`` is at least ``-gap``, and ``mu2`` is convex). Here:

* the data: :class:`MinCqProblem` (:func:`mincq_problem`), :func:`max_realizable_mu`, and the
  boundary checks of every MinCq entry point (:func:`check_mincq_inputs`,
  :func:`check_tolerances`);
* the certificate: the products with ``M``, the gap with its rounding level, the multiplier
  fitted on the free set, the KKT residual, and the Euclidean projection that puts an iterate
  exactly on the hyperplane before it is certified;
* the result: :func:`certified_result`, a :class:`~pacbound.solvers.LearnerResult`
  whose ``info`` is a :class:`MinCqInfo`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple, SupportsFloat, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.optimization.projections import box_hyperplane_rank_one_prox
from pacbound._src.protocol import LearnerResult, learner_status
from pacbound._src.validation import check_data, check_scalar, check_votes, float_dtype, is_concrete

__all__ = [
    "MinCqInfo",
    "MinCqProblem",
    "certified_result",
    "check_mincq_inputs",
    "check_tolerances",
    "duality_gap",
    "free_set_multiplier",
    "gap_measure",
    "kkt_residual",
    "max_realizable_mu",
    "mincq_problem",
    "moment_product",
    "project",
]


class MinCqProblem(NamedTuple):
    """The data of Program 1 (or 2), computed once per voter matrix (:func:`mincq_problem`).

    Attributes:
      moment_op: ``M = V^T V / k`` of shape ``(n, n)`` when ``k >= n``; otherwise the factor
        ``V / sqrt(k)`` of shape ``(k, n)`` with ``M = F^T F`` (``V``: the ``(k, n)`` votes on
        the examples of the second moment, labeled ones plus unlabeled ones for TMinCq).
      first_moments: ``m_S = H^T y / m``, the voters' mean margins on the labeled examples.
      mean_votes: ``b = V^T 1 / k``, the voters' mean outputs, so that ``M = C + b b^T`` with
        ``C`` the votes' covariance.
    """

    moment_op: jax.Array
    first_moments: jax.Array
    mean_votes: jax.Array


class MinCqInfo(NamedTuple):
    """MinCq's extras in :class:`~pacbound.solvers.LearnerResult` ``.info``.

    Attributes:
      second_moment: ``mu2``, the margin's second moment at ``q`` (``4 objective + 1^T M 1 /
        n^2``; over ``S ∪ U`` for TMinCq).
      duality_gap: certified bound on ``objective - optimal objective`` (Program 1's).
      kkt_residual: the largest violation of Program 1's stationarity conditions by the
        gradient of ``mu2`` in ``u`` (0 exactly at the optimum; see :func:`kkt_residual`).
    """

    second_moment: jax.Array
    duality_gap: jax.Array
    kkt_residual: jax.Array


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
      :class:`MinCqProblem`; unvalidated (see :func:`check_mincq_inputs`).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> p = mincq_problem(H, jnp.array([1., 1., -1., -1.]))
      >>> p.first_moments.tolist(), p.moment_op.shape  # m_S = H^T y / m, and M
      ([0.5, -0.5, -0.5], (3, 3))
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

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> float(max_realizable_mu(H, jnp.array([1., 1., -1., -1.])))  # mean |m_S| = (1/2 * 3) / 3
      0.5
    """
    dtype = float_dtype(H, y)
    y = jnp.asarray(y, dtype)
    w = _example_weights(y, sample_weight)
    return jnp.mean(jnp.abs(jnp.asarray(H, dtype).T @ (w * y) / jnp.sum(w)))


def check_mincq_inputs(
    H: ArrayLike,
    y: ArrayLike,
    mu: ArrayLike,
    sample_weight: ArrayLike | None = None,
    H_unlabeled: ArrayLike | None = None,
) -> None:
    """The boundary checks of MinCq, TMinCq and the path (values only when concrete):
    well-formed votes and labels, sample weights, and ``0 < mu <= max_realizable_mu``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> check_mincq_inputs(H, y, 0.2)
      >>> check_mincq_inputs(H, y, 0.6)  # above max_realizable_mu = 0.5
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    check_data(H, y, sample_weight)
    if H_unlabeled is not None:
        check_votes(H_unlabeled, "H_unlabeled")
        if jnp.shape(H_unlabeled)[1] != jnp.shape(H)[1]:
            raise ValueError(
                f"H_unlabeled has {jnp.shape(H_unlabeled)[1]} voters; H has {jnp.shape(H)[1]}"
            )
    check_scalar("mu", mu, 0.0, low_open=True)
    if is_concrete(mu, H, y, sample_weight):
        mu, largest = float(cast(SupportsFloat, mu)), float(max_realizable_mu(H, y, sample_weight))
        if mu > largest * (1 + 1e-9):
            raise ValueError(
                f"mu = {mu:g} is not realizable by a quasi-uniform posterior on these voters: the "
                f"largest realizable mu is {largest:.10g} = (1/n) sum_j |(1/m) sum_i y_i h_j(x_i)|"
            )


def check_tolerances(tol: ArrayLike | None, atol: ArrayLike, max_iter: ArrayLike) -> None:
    """MinCq's options when concrete: ``tol`` (``None``: the default) and ``atol`` finite and
    ``>= 0``, ``max_iter >= 0``.

    Example:
      >>> check_tolerances(None, 0.0, 100)
      >>> check_tolerances(-1e-6, 0.0, 100)
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    if tol is not None:
        check_scalar("tol", tol, 0.0)
    check_scalar("atol", atol, 0.0)
    check_scalar("max_iter", max_iter, 0.0)


def moment_product(op: jax.Array, u: jax.Array) -> jax.Array:
    """``M u`` from the Gram matrix or from its factor (a static choice, by shape).

    Example:
      >>> import jax.numpy as jnp
      >>> V = jnp.array([[1., 0.], [1., 1.], [0., 1.]])  # a factor: M = V^T V
      >>> moment_product(V, jnp.ones(2)).tolist(), moment_product(V.T @ V, jnp.ones(2)).tolist()
      ([3.0, 3.0], [3.0, 3.0])
    """
    return op @ u if op.shape[0] == op.shape[1] else op.T @ (op @ u)


def free_set_multiplier(x, g, a):
    """``lam`` minimizing ``|g_F + lam a_F|`` on the free set ``F = {|x_j| < 1}``, and whether
    ``a_F != 0``.

    Example:
      >>> import jax.numpy as jnp
      >>> x, g = jnp.array([0., 0.5, 1.]), jnp.array([1., 1., -1.])
      >>> lam, any_free = free_set_multiplier(x, g, jnp.ones(3))
      >>> float(lam), bool(any_free)  # g + lam a = 0 on the free set {0, 1}
      (-1.0, True)
    """
    free = jnp.abs(x) < 1
    den = jnp.sum(jnp.where(free, a * a, 0))
    return -jnp.sum(jnp.where(free, a * g, 0)) / jnp.where(den > 0, den, 1), den > 0


def duality_gap(x, g, lam_projection, *, a, mu, eps, diag_max):
    """Gap ``min over two multipliers of g^T x + lam mu + sum |g + lam a|`` (>= mu2(x) - mu2*).

    Also returns the gap's rounding level: with ``M`` and its product with ``x`` rounded to
    ``eps``, each ``g_j = 2 (M x)_j / n^2`` is off by about ``eps (2 / n^2) max|M| ||x||_2``
    (``|M_ij| <= max_k M_kk``), and ``g^T x``, ``sum |g + lam a|`` by ``sqrt(n) eps |g|^T |x|``;
    the gap moves by that much, so no tolerance below it means much.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import mincq
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.]); p = mincq_problem(H, y)
      >>> u = 3 * mincq(H, y, 0.2).weights  # the solution's centred weights
      >>> gap, noise = duality_gap(u, (2 / 9) * moment_product(p.moment_op, u), 0.0,
      ...                          a=p.first_moments / 3, mu=0.2, eps=1.2e-7, diag_max=1.0)
      >>> bool(gap < 1e-4)  # mu2(u) - mu2* <= gap: u is optimal
      True
    """
    lam_fit, any_free = free_set_multiplier(x, g, a)

    def gap(lam):
        return jnp.sum(g * x + jnp.abs(g + lam * a)) + lam * mu

    n, weights = x.shape[0], 1 + jnp.abs(x)
    per_entry = (2 / n**2) * diag_max * jnp.linalg.norm(x)
    noise = eps * jnp.sum((np.sqrt(n) * jnp.abs(g) + per_entry) * weights)
    return jnp.minimum(gap(lam_projection), jnp.where(any_free, gap(lam_fit), jnp.inf)), noise


def gap_measure(problem, mu):
    """``(x, g, lam) -> (gap, noise)`` (:func:`duality_gap`) for ``problem`` in its own
    dtype.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> p = mincq_problem(H, jnp.array([1., 1., -1., -1.]))
      >>> u = project(jnp.array([1., 0., 0.]), p.first_moments / 3, 0.2)  # feasible, not optimal
      >>> gap, noise = gap_measure(p, 0.2)(u, (2 / 9) * moment_product(p.moment_op, u), 0.0)
      >>> bool(gap > 0.0), bool(noise < 1e-5)
      (True, True)
    """
    op, m_s, _ = problem
    diag = jnp.diag(op) if op.shape[0] == op.shape[1] else jnp.sum(op * op, axis=0)
    eps = jnp.finfo(m_s.dtype).eps
    a = m_s / m_s.shape[0]
    return functools.partial(duality_gap, a=a, mu=mu, eps=eps, diag_max=jnp.max(diag))


def project(v, a, mu, init=0.0):
    """Euclidean projection onto ``[-1, 1]^n ∩ {a^T u = mu}`` by semismooth Newton on its
    multiplier (the rank-one prox with ``b = 0``), exact once the free set is right.

    Example:
      >>> import jax.numpy as jnp
      >>> u = project(jnp.array([2., 0., -1.]), jnp.ones(3) / 3, 0.2)  # box [-1, 1], mean 0.2
      >>> [round(float(v), 4) for v in u]
      [1.0, 0.3, -0.7]
    """
    zero = jnp.zeros_like(v)
    return box_hyperplane_rank_one_prox(v, a, mu, -1, 1, zero, 1.0, (init, 0.0)).x


def kkt_residual(x, g, a) -> jax.Array:
    """``max_j`` violation of stationarity for ``r = g + lam a`` (``lam`` the least-squares
    multiplier on the free set): ``|r_j|`` where ``-1 < x_j < 1``, ``max(r_j sign(x_j), 0)`` at a
    bound (a bound's multiplier must push inwards).

    Example:
      >>> import jax.numpy as jnp
      >>> x, a = jnp.array([0., 0.5, 1.]), jnp.ones(3)
      >>> float(kkt_residual(x, jnp.array([1., 1., -1.]), a))  # stationary; the bound pushes in
      0.0
      >>> float(kkt_residual(x, jnp.array([1., 1., 2.]), a))  # x_2 = 1 wants to grow: violated
      1.0
    """
    lam, _ = free_set_multiplier(x, g, a)
    r, free = g + lam * a, jnp.abs(x) < 1
    return jnp.max(jnp.where(free, jnp.abs(r), jnp.maximum(r * jnp.sign(x), 0)))


def certified_result(
    problem: MinCqProblem, mu, x, multiplier, steps, tol, atol, feasible
) -> LearnerResult:
    """The solver's iterate ``x`` put exactly on the hyperplane, and its certificate.

    Args:
      problem, mu: the program.
      x: the centred weights ``u`` found (in the box, on the hyperplane up to a Newton step).
      multiplier: the hyperplane's multiplier to try in the gap (the solver's last one).
      steps: the solver's iterations; tol, atol: its gap tolerance on ``mu2``.
      feasible: whether ``mu`` is realizable (else ``q`` is NaN and ``converged`` False).

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q = (Q, 1/n - Q)`` with
      ``Q = (1 + u) / (2 n)``, ``weights = q[:n] - q[n:] = u / n``, ``objective`` Program 1's
      ``Q^T M Q - A^T Q = (mu2 - 1^T M 1 / n^2) / 4``, ``converged`` when the duality gap on
      ``mu2`` is ``<= tol mu2 + atol`` (plus its rounding level), ``info`` a :class:`MinCqInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.]); p = mincq_problem(H, y)
      >>> r = certified_result(p, 0.2, jnp.array([0.4, -0.4, -0.4]), 0.0, 0, 1e-5, 0.0, True)
      >>> mean_margin = jnp.mean(y * (H @ r.weights))
      >>> round(float(r.q.sum()), 4), round(float(mean_margin), 4), bool(r.converged)
      (1.0, 0.2, True)
    """
    op, m_s, _ = problem
    n = m_s.shape[0]
    a = m_s / n
    x = project(x, a, mu)  # the prox's Newton may be a step short
    mx = moment_product(op, x)
    mu2 = (x @ mx) / n**2
    gap, noise = gap_measure(problem, mu)(x, (2 / n**2) * mx, multiplier)
    uniform = jnp.ones_like(x)
    objective = (mu2 - uniform @ moment_product(op, uniform) / n**2) / 4
    Q = (1 + x) / (2 * n)
    q = jnp.where(feasible, jnp.concatenate([Q, 1 / n - Q]), jnp.nan)
    status = learner_status(gap <= tol * mu2 + atol + noise, jnp.logical_not(feasible))
    info = MinCqInfo(mu2, gap / 4, kkt_residual(x, (2 / n**2) * mx, a))
    return LearnerResult(q, q[:n] - q[n:], objective, steps, status, None, jnp.int32(2 * n),
                         info=info)  # fmt: skip
