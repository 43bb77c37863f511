"""MinCq along a path of margins ``mu`` (laviolette2011 Program 1): :func:`mincq_path`.

Program 1 in the centred weights ``u`` (see :mod:`pacbound._src.learning.mincq_fista`) is a
parametric QP in ``mu``: minimize ``u^T M u / n^2`` on ``[-1, 1]^n ∩ {a^T u = mu}``. Its
solution ``u*(mu)`` is piecewise linear in ``mu`` (linear while the bound coordinates and their
signs stay, and ``u*(mu) = (mu / mu') u*(mu')`` while no bound is active), so one sorted pass
over the ``mu`` values (a ``lax.scan``) starts each solve from the secant through the previous
two solutions, and one power iteration serves them all. A warm start alone does not make a solve
short, though: once bounds are active projected-gradient methods converge linearly at a rate set
by ``M``'s conditioning, whatever the start. Each solve therefore alternates bursts of the
restarted FISTA of :func:`~pacbound._src.learning.mincq_fista.solve_mincq`, which identify the face
(the bounds and their signs), with conjugate gradients on that face (GPCG, Moré & Toraldo 1991):
minimize ``u^T M u`` over ``{u_B = s_B, a_F^T u_F = mu - a_B^T s_B}`` by CG projected onto
``{d_B = 0, a_F^T d_F = 0}``; a step that would leave the box stops at the bound it meets (that
coordinate joins ``B``, CG restarts) and bounds whose multipliers have the wrong sign are
released when they outweigh the face's residual (Dostál's proportioning). All in the problem's
dtype (a float32 first round, as in ``solve_mincq``, cost accuracy at loose tolerances and
stalls on larger problems). The certified duality gap of ``solve_mincq``
stops every solve, so a wrong face costs time, never accuracy. On stumps, a solve whose box is
inactive and whose neighbour is solved costs a few products with ``M``; one with active bounds
still costs about half a cold solve (CG on the right face needs a few hundred steps to certify).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.learning.mincq_fista import (
    default_tol,
    fista_phase,
    initial_lipschitz,
    restarted,
)
from pacbound._src.learning.mincq_gap import (
    MinCqProblem,
    certified_result,
    check_mincq_inputs,
    check_tolerances,
    free_set_multiplier,
    gap_measure,
    mincq_problem,
    moment_product,
    project,
)
from pacbound._src.optimization.fista import FistaState, fused_dot
from pacbound._src.optimization.projections import box_hyperplane_feasible
from pacbound._src.protocol import LearnerResult, votes_matrix
from pacbound._src.validation import check_scalar

__all__ = ["mincq_path", "solve_mincq_path"]

BURST = 100  # FISTA iterations between two face solves
CG_STEPS = 1000  # CG steps per face solve (each one product with M)


def _face_projector(free, a):
    """``v -> `` its projection onto ``{d_B = 0, a_F^T d_F = 0}`` (``F = free``)."""
    a_free = jnp.where(free, a, 0)
    aa = jnp.maximum(fused_dot(a_free, a_free), jnp.finfo(a.dtype).tiny)
    return lambda v: jnp.where(free, v, 0) - a_free * (fused_dot(a_free, v) / aa)


def _released(free, x, mx, a, rr):
    """Bounds whose multiplier has the wrong sign, released when their violation outweighs the
    face's residual ``rr`` (Dostál's proportioning test), else ``free`` unchanged."""
    lam, _ = free_set_multiplier(x, mx, a)
    wrong = ~free & ((mx + lam * a) * jnp.sign(x) > 0)
    chopped = jnp.sum(jnp.where(wrong, (mx + lam * a) ** 2, 0))
    return jnp.where(chopped > rr, free | wrong, free)


def _face_cg(matvec, a, x, mx, certified, steps):
    """CG on ``min u^T M u`` over the face of ``x`` (see the module docstring) from ``x``,
    releasing bounds whose multipliers have the wrong sign (:func:`_released`).

    Returns ``(x, M x, steps taken)``; stops when ``certified(x, M x)``, after ``steps`` steps,
    or when the projected gradient vanishes.
    """
    tiny = jnp.finfo(x.dtype).tiny

    def restart(x, mx, free, k):
        r = -_face_projector(free, a)(mx)
        return x, mx, r, r, fused_dot(r, r), free, k

    def going(c):
        x, mx, _, _, rr, _, k = c
        return (k < steps) & (rr > tiny) & ~certified(x, mx)

    def step(c):
        x, mx, r, p, rr, free, k = c
        released = _released(free, x, mx, a, rr)
        x, mx, r, p, rr, free, k = jax.tree.map(
            functools.partial(jnp.where, jnp.any(released != free)),
            restart(x, mx, released, k), c,
        )  # fmt: skip
        mp = matvec(p)
        alpha = rr / jnp.maximum(fused_dot(p, mp), tiny)
        room = jnp.where(free & (p != 0), (jnp.sign(p) - x) / jnp.where(p != 0, p, 1), jnp.inf)
        j = jnp.argmin(room)
        hit = room[j] < alpha
        x, mx = x + jnp.minimum(alpha, room[j]) * p, mx + jnp.minimum(alpha, room[j]) * mp
        x = jnp.where(hit, x.at[j].set(jnp.sign(p[j])), x)
        free = jnp.where(hit, free.at[j].set(False), free)
        r_new = r - alpha * _face_projector(free, a)(mp)
        rr_new = fused_dot(r_new, r_new)
        p = _face_projector(free, a)(r_new + (rr_new / rr) * p)  # no drift off the hyperplane
        cont = (x, mx, r_new, p, rr_new, free, k + 1)
        return jax.tree.map(functools.partial(jnp.where, hit), restart(x, mx, free, k + 1), cont)

    out = lax.while_loop(going, step, restart(x, mx, jnp.abs(x) < 1, 0))
    return out[0], out[1], out[6]


def _certifier(problem: MinCqProblem, mu, tol, atol):
    """``(x, M x) -> `` whether the duality gap certifies ``x`` (as in ``solve_mincq``)."""
    n = problem.first_moments.shape[0]
    measure = gap_measure(problem, mu)

    def certified(x, mx):  # x on the hyperplane (as CG keeps it, to rounding)
        gap, noise = measure(x, (2 / n**2) * mx, jnp.zeros((), x.dtype))
        return gap <= tol * fused_dot(x, mx) / n**2 + atol + noise

    return certified


def _multipliers(s: FistaState, x, mx, a, measure):
    """``s.prox_state`` (the prox's multipliers) with the hyperplane's multiplier that certifies
    ``x`` best: the last prox's or the free-set fit, kept so that the final gap (at ``x``
    projected again, where the free set may differ by a coordinate) is measured with it."""
    g = (2 / a.shape[0] ** 2) * mx
    fit, _ = free_set_multiplier(x, g, a)
    prox = s.lipschitz * s.prox_state[0]
    best = jnp.where(measure(x, g, fit)[0] <= measure(x, g, prox)[0], fit, prox)
    return s.prox_state.at[0].set(best / s.lipschitz)


def _solve_one(problem: MinCqProblem, mu, x0, lipschitz, tol, atol, max_iter):
    """One ``mu`` from ``x0``: FISTA bursts, each followed by CG on the face it reached, until
    the duality gap certifies the iterate or ``max_iter`` products with ``M``."""
    op, m_s, _ = problem
    n = m_s.shape[0]
    a = m_s / n
    mu, tol, atol = (jnp.asarray(t, m_s.dtype) for t in (mu, tol, atol))
    feasible = box_hyperplane_feasible(a, mu, -1.0, 1.0)
    matvec, measure = functools.partial(moment_product, op), gap_measure(problem, mu)
    certified = _certifier(problem, mu, tol, atol)
    no_stall = np.iinfo(np.int32).max

    def going(s):
        return feasible & (s.k < max_iter) & ~certified(s.x, s.px)

    def burst_then_face(s):
        start = (s.x, s.lipschitz, s.prox_state, s.k)
        cap = jnp.minimum(s.k + BURST, max_iter)
        s = fista_phase(problem, mu, start, tol, atol, cap, feasible, no_stall)
        x, _, k = _face_cg(matvec, a, s.x, s.px, certified, jnp.minimum(CG_STEPS, max_iter - s.k))
        x = project(x, a, mu)  # CG's rounding drifts off the hyperplane: the final point
        mx = matvec(x)  # is projected, so certify that one
        multipliers = _multipliers(s, x, mx, a, measure)
        return restarted(x, mx, s.lipschitz, multipliers, s.k + k, measure)

    x0 = project(x0, a, mu)
    s = restarted(x0, matvec(x0), lipschitz, jnp.zeros(2, x0.dtype), 0, measure)
    return lax.while_loop(going, burst_then_face, s), feasible


@jax.jit
def solve_mincq_path(
    problem: MinCqProblem,
    mus: ArrayLike,
    tol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
) -> LearnerResult:
    """Solve Program 1 / 2 for every margin in ``mus`` (any order): the jittable, vmappable
    core of :func:`mincq_path`.

    One ``lax.scan`` over the sorted ``mus``; each solve starts from the secant prediction
    ``u_{k-1} + (mu_k - mu_{k-1}) (u_{k-1} - u_{k-2}) / (mu_{k-1} - mu_{k-2})`` (``u = 0`` at
    ``mu = 0``) and shares one power iteration for the step size. No validation: an
    unrealizable ``mu`` gives ``q`` full of NaN and ``converged = False`` in its row.

    Args:
      problem: from :func:`pacbound._src.solvers.mincq_problem`.
      mus: ``(k,)`` margins (traced: new values reuse the compilation).
      tol, atol, max_iter: per ``mu``, as in :func:`~pacbound._src.solvers.solve_mincq`
        (``max_iter`` counts products with ``M``: FISTA iterations and CG steps).

    Returns:
      :class:`~pacbound.solvers.LearnerResult` whose fields have a leading axis of
      length ``k``, in ``mus``' order (``steps``: products with ``M`` per ``mu``).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.learning.mincq_gap import mincq_problem
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> mus = jnp.array([0.2, 0.1])  # any order; then mincq_path's float32 tol, atol, max_iter
      >>> r = solve_mincq_path(mincq_problem(H, y), mus, 1e-5, 0.0, 50_000)
      >>> [round(float(jnp.mean(y * (H @ w))), 4) for w in r.weights], r.converged.tolist()
      ([0.2, 0.1], [True, True])
    """
    dtype, n = problem.first_moments.dtype, problem.first_moments.shape[0]
    mus = jnp.asarray(mus, dtype)
    tol = jnp.asarray(default_tol(dtype) if tol is None else tol, dtype)
    atol = jnp.asarray(atol, dtype)

    def solve_next(carry, mu):
        x, mu_prev, slope, lipschitz = carry
        guess = jnp.clip(x + (mu - mu_prev) * slope, -1, 1)
        s, feasible = _solve_one(problem, mu, guess, lipschitz, tol, atol, max_iter)
        step = mu - mu_prev
        slope_next = jnp.where(step > 0, (s.x - x) / jnp.where(step > 0, step, 1), slope)
        following = (s.x, mu, slope_next, s.lipschitz)
        carry = jax.tree.map(functools.partial(jnp.where, feasible), following, carry)
        multiplier = s.lipschitz * s.prox_state[0]
        return carry, certified_result(problem, mu, s.x, multiplier, s.k, tol, atol, feasible)

    order = jnp.argsort(mus)
    zero = jnp.zeros(n, dtype)
    init = (zero, jnp.zeros((), dtype), zero, initial_lipschitz(problem))
    _, results = lax.scan(solve_next, init, mus[order])
    inverse = jnp.argsort(order)
    return jax.tree.map(lambda t: t[inverse], results)


def mincq_path(
    voters: ArrayLike,
    y: ArrayLike,
    mus: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    tol: ArrayLike | None = None,
    atol: ArrayLike = 0.0,
    max_iter: ArrayLike = 50_000,
) -> LearnerResult:
    """MinCq (laviolette2011 Program 1) for every margin in ``mus``, by continuation: the
    ``solve_path`` that :func:`~pacbound.solvers.mincq` declares for ``mu``.

    The same solutions as ``jax.vmap(mincq, in_axes=(None, None, 0))(H, y, mus)`` (each
    certified to the same duality gap), computed in one pass over the sorted ``mus`` with warm
    starts and conjugate gradients on the identified face (see the module docstring), instead
    of 15 lanes in lockstep until the slowest converges. Traceable: ``mus``, ``sample_weight``
    and the tolerances are traced, so new values reuse the compilation and
    ``jax.vmap(lambda w: mincq_path(H, y, mus, sample_weight=w))`` runs folds.

    Args:
      H: votes ``(m, n)``, entries in ``[-1, 1]``; the first ``n`` voters of ``[H, -H]``.
      y: labels in ``{-1, +1}``, ``(m,)``.
      mus: ``(k,)`` first moments to reach, each in ``(0, max_realizable_mu(H, y,
        sample_weight)]``, in any order.
      sample_weight: ``(m,)`` example weights ``>= 0`` (see :func:`~pacbound.solvers.mincq`).
      tol, atol: duality-gap tolerances on ``mu2``, per ``mu`` (see
        :func:`~pacbound._src.solvers.solve_mincq`).
      max_iter: cap per ``mu`` on products with ``M`` (FISTA iterations plus CG steps).

    Returns:
      :class:`~pacbound.solvers.LearnerResult` as
      :func:`~pacbound.solvers.mincq`'s,
      with a leading axis of length ``k``, in ``mus``' order.

    Raises:
      ValueError: for malformed ``H`` / ``y`` / ``sample_weight``, ``mus`` not one-dimensional
        and non-empty, a ``mu`` that is not positive or not realizable, or a negative
        tolerance.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = mincq_path(H, y, jnp.array([0.1, 0.2]))  # one result per mu, stacked
      >>> r.q.shape, [round(float(c), 3) for c in r.objective]
      ((2, 6), [-0.08, -0.07])
    """
    H = votes_matrix(voters, "mincq_path")
    if np.ndim(mus) != 1 or np.shape(mus)[0] == 0:
        raise ValueError(f"mus must be a non-empty one-dimensional array; got {jnp.shape(mus)}")
    check_scalar("min(mus)", jnp.min(jnp.asarray(mus)), 0.0, low_open=True)
    check_mincq_inputs(H, y, jnp.max(jnp.asarray(mus)), sample_weight)
    check_tolerances(tol, atol, max_iter)
    problem = mincq_problem(H, y, None, sample_weight)
    tol = default_tol(problem.first_moments.dtype) if tol is None else tol
    return solve_mincq_path(problem, mus, tol, atol, max_iter)
