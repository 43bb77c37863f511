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

The solver is FISTA with O'Donoghue & Candès' gradient restart, inside a ``lax.while_loop``
that stops on a certified duality gap. Each step is an ``optax.sgd`` step of size ``1/L`` on the
votes' covariance part ``u^T C u / n^2`` (``M = C + b b^T``, ``b`` the voters' mean outputs)
followed by the projection onto the box ∩ hyperplane in the metric ``I + kappa b b^T``
(:func:`pacbound.projections.box_hyperplane_rank_one_prox`), which takes the rank-one part
``(b^T u)^2 / n^2`` exactly. For stumps and RBF voters ``b b^T`` carries by far the top
eigenvalue of ``M`` (208 against 27 on wdbc stumps, 640 against 5 on 1 000 synthetic stumps),
so ``L = 2 lmax(C) / n^2`` is that much smaller and FISTA needs about the square root of that
ratio fewer steps. ``L`` comes from a power iteration inside ``jit`` and is raised whenever a
step meets more curvature (a free check: one product with ``M`` per iteration gives the
gradients at both the iterate and the extrapolated point). The gap is the Frank-Wolfe (or
Lagrangian) bound

.. math:: \\mathrm{gap}(u, \\lambda) = g^\\top u + \\lambda \\mu + \\sum_j |g_j + \\lambda a_j|
          \\;\\ge\\; \\mu_2(u) - \\mu_2^\\star, \\qquad g = \\nabla \\mu_2(u),\\; a = m_S / n,

valid for any ``lambda`` (we take the better of the projection's multiplier and a least-squares
fit on the free set), so ``converged`` certifies ``mu2 - mu2* <= rtol * mu2 + atol``. In
float64 the products with ``M``, which dominate each step, first use a float32 copy of ``M``
(half the memory traffic) down to the float32 gap floor; float64 products finish and certify.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax
from jax.typing import ArrayLike

from pacbound.projections import box_hyperplane_projection, box_hyperplane_rank_one_prox

__all__ = [
    "MinCqProblem",
    "MinCqResult",
    "max_realizable_mu",
    "mincq",
    "mincq_problem",
    "solve_mincq",
    "tmincq",
]


class MinCqProblem(NamedTuple):
    """The data of Program 1 (or 2), computed once per voter matrix.

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


class MinCqResult(NamedTuple):
    """Solution of Program 1 / 2.

    Attributes:
      q: the quasi-uniform posterior over the ``2n`` columns of ``[H, -H]``: ``(Q, 1/n - Q)``.
      objective: Program 1's objective ``Q^T M Q - A^T Q`` at ``Q``.
      second_moment: ``mu2``, the margin's second moment (``4 objective + 1^T M 1 / n^2``).
      iterations: accelerated projected-gradient iterations taken (one product with ``M`` each).
      duality_gap: certified bound on ``objective - optimal objective``.
      kkt_residual: ``max_j |Q_j - P(Q - grad / L)_j|``, the fixed-point residual of the
        projected-gradient map (0 exactly at the optimum).
      converged: ``4 duality_gap <= rtol * mu2 + atol`` (``False`` when ``mu`` is not
        realizable).
    """

    q: jax.Array
    objective: jax.Array
    second_moment: jax.Array
    iterations: jax.Array
    duality_gap: jax.Array
    kkt_residual: jax.Array
    converged: jax.Array


class _State(NamedTuple):
    x: jax.Array  # iterate u_k (feasible)
    mx: jax.Array  # M u_k
    y: jax.Array  # extrapolated point
    my: jax.Array  # M y
    t: jax.Array  # FISTA momentum counter
    lipschitz: jax.Array  # current L, for the covariance part
    multipliers: jax.Array  # (lam, s) of the last metric projection (warm start)
    gap: jax.Array  # duality gap of mu2 at x
    noise: jax.Array  # its rounding level
    k: jax.Array


def _matvec(op: jax.Array, u: jax.Array) -> jax.Array:
    """``M u`` from the Gram matrix or from its factor (a static choice, by shape)."""
    return op @ u if op.shape[0] == op.shape[1] else op.T @ (op @ u)


def _dot(u: jax.Array, v: jax.Array) -> jax.Array:
    """``u^T v`` as a fused reduction (under ``vmap`` a batched ``dot`` is a loop of calls)."""
    return jnp.sum(u * v)


def _largest_eigenvalue(matvec, b, rtol: float = 1e-4, max_iter: int = 300) -> jax.Array:
    """Power iteration for ``lmax(C)``, ``C = M - b b^T``; a Rayleigh quotient, never above it."""
    v = jax.random.normal(jax.random.key(0), b.shape, b.dtype)

    def body(s):
        v, _, lam, k = s
        w = matvec(v) - b * (b @ v)
        return w / jnp.maximum(jnp.linalg.norm(w), jnp.finfo(w.dtype).tiny), lam, v @ w, k + 1

    def cond(s):
        _, old, lam, k = s
        return (k < max_iter) & (jnp.abs(lam - old) > rtol * lam)

    v = v / jnp.linalg.norm(v)
    init = (v, jnp.zeros((), b.dtype), -jnp.ones((), b.dtype), 0)
    return jnp.maximum(lax.while_loop(cond, body, init)[2], 0)


def _single_precision(op: jax.Array):
    """``u -> M u`` with ``M`` stored and multiplied in float32 (half the memory traffic)."""
    low = op.astype(jnp.float32)
    return lambda u: _matvec(low, u.astype(jnp.float32)).astype(op.dtype)


def _float_dtype(*arrays: ArrayLike):
    return jnp.result_type(*(jnp.asarray(x).dtype for x in arrays), jnp.float32)


@jax.jit
def mincq_problem(H: ArrayLike, y: ArrayLike, H_unlabeled: ArrayLike | None = None) -> MinCqProblem:
    """Precompute Program 1 (or Program 2 when ``H_unlabeled`` is given) for one voter matrix.

    Args:
      H: votes on the labeled examples, ``(m, n)``, entries in ``[-1, 1]``; the first ``n``
        voters of the self-complemented set ``[H, -H]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      H_unlabeled: votes on unlabeled examples ``(m_u, n)``; TMinCq's second moment runs over
        labeled and unlabeled examples alike (laviolette2011 Program 2).

    Returns:
      :class:`MinCqProblem`; unvalidated (see :func:`mincq` for the checks).
    """
    dtype = _float_dtype(H, y)
    H, y = jnp.asarray(H, dtype), jnp.asarray(y, dtype)
    V = H if H_unlabeled is None else jnp.concatenate([H, jnp.asarray(H_unlabeled, dtype)])
    k, n = V.shape
    op = V / np.sqrt(k) if k < n else (V.T @ V) / k
    return MinCqProblem(op, H.T @ y / H.shape[0], jnp.mean(V, axis=0))


def _duality_gap(x, g, lam_projection, *, a, mu, eps, diag_max):
    """Gap ``min over two multipliers of g^T x + lam mu + sum |g + lam a|`` (>= mu2(x) - mu2*).

    Also returns the gap's rounding level: with ``M`` and its product with ``x`` rounded to
    ``eps``, each ``g_j = 2 (M x)_j / n^2`` is off by about ``eps (2 / n^2) max|M| ||x||_2``
    (``|M_ij| <= max_k M_kk``), and ``g^T x``, ``sum |g + lam a|`` by ``sqrt(n) eps |g|^T |x|``;
    the gap moves by that much, so no tolerance below it means much.
    """
    free = jnp.abs(x) < 1
    den = jnp.sum(jnp.where(free, a * a, 0))
    lam_fit = -jnp.sum(jnp.where(free, a * g, 0)) / jnp.where(den > 0, den, 1)

    def gap(lam):
        return jnp.sum(g * x + jnp.abs(g + lam * a)) + lam * mu

    n, weights = x.shape[0], 1 + jnp.abs(x)
    per_entry = (2 / n**2) * diag_max * jnp.linalg.norm(x)
    noise = eps * jnp.sum((np.sqrt(n) * jnp.abs(g) + per_entry) * weights)
    return jnp.minimum(gap(lam_projection), jnp.where(den > 0, gap(lam_fit), jnp.inf)), noise


def _fista_step(s: _State, matvec, measure_gap, b, a, mu) -> _State:
    """One restarted FISTA step: optax step on the covariance part, metric projection, momentum."""
    n = a.shape[0]
    grad_y = (2 / n**2) * (s.my - b * _dot(b, s.y))  # gradient of u^T C u / n^2
    sgd = optax.sgd(1 / s.lipschitz)
    updates, _ = sgd.update(grad_y, sgd.init(s.y))
    z = optax.apply_updates(s.y, updates)
    kappa = 2 / (n**2 * s.lipschitz)  # the rank-one part (b^T u)^2 / n^2, taken exactly
    prox = box_hyperplane_rank_one_prox(z, a, mu, -1, 1, b, kappa, tuple(s.multipliers))
    x, mx = prox.x, matvec(prox.x)
    d = x - s.y
    curv = (
        (2 / n**2)
        * (_dot(d, mx - s.my) - _dot(b, d) ** 2)
        / jnp.maximum(_dot(d, d), jnp.finfo(d.dtype).tiny)
    )
    too_long = curv > s.lipschitz
    restart = too_long | (_dot(s.y - x, x - s.x) > 0)
    t_next = (1 + jnp.sqrt(1 + 4 * s.t**2)) / 2
    beta = jnp.where(restart, 0, (s.t - 1) / t_next)
    gap, noise = measure_gap(x, (2 / n**2) * mx, s.lipschitz * prox.multiplier)
    return _State(
        x, mx, x + beta * (x - s.x), mx + beta * (mx - s.mx),
        jnp.where(restart, jnp.ones_like(s.t), t_next),
        jnp.where(too_long, 1.01 * curv, s.lipschitz),
        jnp.stack([prox.multiplier, prox.rank_one_multiplier]), gap, noise, s.k + 1,
    )  # fmt: skip


@functools.partial(jax.jit, static_argnames="mixed_precision")
def solve_mincq(
    problem: MinCqProblem,
    mu: ArrayLike,
    q0: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
    mixed_precision: bool = True,
) -> MinCqResult:
    """Solve Program 1 / 2 for one margin ``mu``: the jittable, vmappable core of :func:`mincq`.

    No validation: an unrealizable ``mu`` gives ``q`` full of NaN and ``converged = False``.

    Args:
      problem: from :func:`mincq_problem`.
      mu: the first moment of the margin to reach (a traced scalar).
      q0: warm start, a distribution over the ``2n`` columns of ``[H, -H]`` (e.g. a previous
        result's ``q``); its vote is projected onto the constraints first. Default: uniform.
      rtol: stop once the duality gap on ``mu2`` is ``<= rtol * mu2 + atol``; default ``1e-6``
        in float64, ``1e-5`` in float32 (never below the gap's rounding level).
      atol: absolute part of that tolerance. Program 1's objective is ``(mu2 - c0) / 4`` with
        ``c0 = 1^T M 1 / n^2``, so ``atol = 4 eps |objective|`` asks for a relative accuracy
        ``eps`` on it, a far weaker request than ``rtol`` when ``mu`` is small.
      max_iter: iteration cap (traced).
      mixed_precision: in float64, first iterate with ``M`` in float32 (products cost half
        the memory traffic) until that precision's gap floor, then finish in float64; the
        stopping test is always the float64 gap (static).

    Returns:
      :class:`MinCqResult`.
    """
    op, m_s, b = problem
    dtype, n = m_s.dtype, m_s.shape[0]
    mu = jnp.asarray(mu, dtype)
    rtol = jnp.asarray((1e-6 if dtype == jnp.float64 else 1e-5) if rtol is None else rtol, dtype)
    atol = jnp.asarray(atol, dtype)
    a = m_s / n
    q0 = jnp.full(2 * n, 1 / (2 * n), dtype) if q0 is None else jnp.asarray(q0, dtype)
    u0 = n * (q0[:n] - q0[n:])  # the vote's weights, n (q_j - q_{j+n}) = 2 n Q_j - 1
    start = box_hyperplane_projection(u0, a, mu, -1, 1)
    precise = functools.partial(_matvec, op)
    fast = _single_precision(op) if mixed_precision and dtype == jnp.float64 else precise
    curvature = _largest_eigenvalue(fast, b)  # computed once under vmap over mu
    lipschitz = jnp.maximum(1.01 * (2 / n**2) * curvature, jnp.finfo(dtype).tiny)
    diag_max = jnp.max(jnp.diag(op) if op.shape[0] == op.shape[1] else jnp.sum(op * op, axis=0))
    gap = functools.partial(_duality_gap, a=a, mu=mu, diag_max=diag_max)

    def unconverged(s):
        tolerance = rtol * _dot(s.x, s.mx) / n**2 + atol + s.noise
        return start.feasible & (s.gap > tolerance) & (s.k < max_iter)

    def iterate(s, matvec, eps):
        measure = functools.partial(gap, eps=eps)
        return lax.while_loop(unconverged, lambda s: _fista_step(s, matvec, measure, b, a, mu), s)

    eps = jnp.finfo(dtype).eps
    if fast is not precise:  # float32 products down to their gap floor, then float64 ones
        s = _restarted(start.x, fast(start.x), lipschitz, jnp.zeros(2, dtype), 0, gap, 2**-23)
        s = iterate(s, fast, 2**-23)
        s = _restarted(s.x, precise(s.x), s.lipschitz, s.multipliers, s.k, gap, eps)
    else:
        s = _restarted(start.x, precise(start.x), lipschitz, jnp.zeros(2, dtype), 0, gap, eps)
    s = iterate(s, precise, eps)
    return _result(s, op, a, mu, rtol * _dot(s.x, s.mx) / n**2 + atol, start.feasible)


def _restarted(x, mx, lipschitz, multipliers, k, duality_gap, eps) -> _State:
    """A FISTA state at ``x`` with no momentum, its gap measured."""
    n, one = x.shape[0], jnp.ones((), x.dtype)
    gap, noise = duality_gap(x, (2 / n**2) * mx, lipschitz * multipliers[0], eps=eps)
    return _State(x, mx, x, mx, one, lipschitz, multipliers, gap, noise, jnp.asarray(k, jnp.int32))


def _result(s: _State, op, a, mu, tolerance, feasible) -> MinCqResult:
    n = a.shape[0]
    x = box_hyperplane_projection(s.x, a, mu, -1, 1).x  # exact a^T u = mu (moves ~1 ulp)
    mx = _matvec(op, x)
    mu2 = (x @ mx) / n**2
    uniform = jnp.ones_like(x)
    objective = (mu2 - uniform @ _matvec(op, uniform) / n**2) / 4
    step = box_hyperplane_projection(x - (2 / n**2) * mx / s.lipschitz, a, mu, -1, 1)
    Q = (1 + x) / (2 * n)
    q = jnp.where(feasible, jnp.concatenate([Q, 1 / n - Q]), jnp.nan)
    converged = feasible & (s.gap <= tolerance + s.noise)
    kkt = jnp.max(jnp.abs(step.x - x)) / (2 * n)
    return MinCqResult(q, objective, mu2, s.k, s.gap / 4, kkt, converged)


def _concrete(*xs) -> bool:
    return not any(isinstance(x, jax.core.Tracer) for x in xs)


def _check_votes(H: ArrayLike, name: str, n: int | None = None) -> None:
    shape = jnp.shape(H)
    if len(shape) != 2 or 0 in shape:
        raise ValueError(f"{name} must be a non-empty (examples, voters) matrix; got {shape}")
    if n is not None and shape[1] != n:
        raise ValueError(f"{name} has {shape[1]} voters; H has {n}")
    if _concrete(H):
        values = np.asarray(H, dtype=np.float64)
        if not np.all(np.isfinite(values)) or np.abs(values).max() > 1 + 1e-6:
            raise ValueError(f"{name} must be finite with entries in [-1, 1]")


def _check_labels(y: ArrayLike, m: int) -> None:
    if jnp.shape(y) != (m,):
        raise ValueError(f"y must have shape ({m},) to match H; got {jnp.shape(y)}")
    if _concrete(y):
        found = np.unique(np.asarray(y))
        if not np.all(np.isin(found, [-1, 1])):
            raise ValueError(f"labels must be -1 or +1; found {found.tolist()[:10]}")


def max_realizable_mu(H: ArrayLike, y: ArrayLike) -> jax.Array:
    """Largest ``S``-realizable margin: ``max_Q mu1 = (1/n) sum_j |(1/m) sum_i y_i h_j(x_i)|``.

    Over quasi-uniform ``Q`` (laviolette2011 Definition 5), ``mu1 = m_S^T u / n`` with
    ``u = 2 n Q - 1`` in ``[-1, 1]^n``, maximized at ``u = sign(m_S)``.
    """
    dtype = _float_dtype(H, y)
    m_s = jnp.asarray(H, dtype).T @ jnp.asarray(y, dtype) / jnp.shape(H)[0]
    return jnp.mean(jnp.abs(m_s))


def _check_mu(mu: ArrayLike, H: ArrayLike, y: ArrayLike) -> None:
    if jnp.ndim(mu) != 0:
        raise ValueError(f"mu must be a scalar (jax.vmap over several); got {jnp.shape(mu)}")
    if not _concrete(mu, H, y):
        return
    mu, largest = float(mu), float(max_realizable_mu(H, y))
    if not np.isfinite(mu) or mu <= 0:
        raise ValueError(f"mu must be a finite margin > 0; got {mu}")
    if mu > largest * (1 + 1e-9):
        raise ValueError(
            f"mu = {mu:g} is not realizable by a quasi-uniform posterior on these voters: the "
            f"largest realizable mu is {largest:.10g} = (1/n) sum_j |(1/m) sum_i y_i h_j(x_i)|"
        )


def mincq(
    H: ArrayLike,
    y: ArrayLike,
    mu: ArrayLike,
    *,
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
      mu: the first moment to reach, in ``(0, max_realizable_mu(H, y)]``.
      q0: warm start over the ``2n`` columns (a previous result's ``q``).
      rtol, atol: duality-gap tolerances on ``mu2`` (see :func:`solve_mincq`).
      max_iter: iteration cap.

    Returns:
      :class:`MinCqResult`.

    Raises:
      ValueError: for malformed ``H`` / ``y``, labels other than ±1, or an unrealizable ``mu``
        (the message gives the largest realizable one).
    """
    _check_votes(H, "H")
    _check_labels(y, jnp.shape(H)[0])
    _check_mu(mu, H, y)
    return solve_mincq(mincq_problem(H, y), mu, q0, rtol, atol, max_iter)


def tmincq(
    H: ArrayLike,
    y: ArrayLike,
    H_unlabeled: ArrayLike,
    mu: ArrayLike,
    *,
    q0: ArrayLike | None = None,
    rtol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
) -> MinCqResult:
    """TMinCq (laviolette2011 Definition 6, Program 2): MinCq with ``mu2`` over ``S ∪ U``.

    The first moment is fixed on the labeled votes ``H``; the second moment, which needs no
    labels, is taken over the labeled and the unlabeled votes ``H_unlabeled`` together. Same
    arguments, checks and result as :func:`mincq`; ``second_moment`` is the one over ``S ∪ U``.
    """
    _check_votes(H, "H")
    _check_votes(H_unlabeled, "H_unlabeled", jnp.shape(H)[1])
    _check_labels(y, jnp.shape(H)[0])
    _check_mu(mu, H, y)
    return solve_mincq(mincq_problem(H, y, H_unlabeled), mu, q0, rtol, atol, max_iter)
