"""Restarted FISTA and the power iteration (pacbound._src.optimization.fista) on box-constrained
QPs,
against CVXOPT, closed forms and NumPy's eigenvalues."""

import functools

import cvxopt
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound._src.optimization.fista import (
    fista_start,
    fista_step,
    fused_dot,
    iterate,
    largest_eigenvalue,
)

cvxopt.solvers.options["show_progress"] = False
NEVER_STALL = np.iinfo(np.int32).max


def box_gap(x, px, c, lower, upper):
    """``g^T x - min_{lower <= v <= upper} g^T v >= f(x) - f*`` (``g = P x + c``, f convex)."""
    g = px + c
    return fused_dot(g, x) - jnp.sum(jnp.minimum(g * lower, g * upper))


@functools.partial(jax.jit, static_argnames="stall")
def box_qp(P, c, lower, upper, tol, lipschitz=None, max_iter=20_000, stall=NEVER_STALL):
    """``min 1/2 x^T P x + c^T x`` on the box by the generic restarted-FISTA step."""

    def measure(x, px, prox_state, step_lipschitz):
        return box_gap(x, px, c, lower, upper), ()

    def step(s):
        return fista_step(
            s, gradient=lambda _, py: py + c, prox=lambda z, s: (jnp.clip(z, lower, upper), ()),
            product=lambda x: P @ x, curvature=fused_dot, measure=measure, growth=1.5,
        )  # fmt: skip

    if lipschitz is None:
        lipschitz = 1.01 * largest_eigenvalue(lambda v: P @ v, jnp.ones_like(c), max_iter=100)
    x = jnp.clip(jnp.zeros_like(c), lower, upper)
    state = fista_start(x, P @ x, lipschitz, (), measure(x, P @ x, (), lipschitz))
    return iterate(step, state, lambda s: (s.gap > tol) & (s.k < max_iter), stall)


def random_box_qp(seed, n=12, rank=8):
    """A rank-deficient PSD ``P`` (a face of minimizers inside the box is possible) and a box."""
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(rank, n))
    lower, upper = -rng.random(n), rng.random(n)
    return G.T @ G, 2 * rng.normal(size=n), lower, upper


def cvxopt_box_qp(P, c, lower, upper):
    n = len(c)
    G, h = np.vstack([np.eye(n), -np.eye(n)]), np.concatenate([upper, -lower])
    options = {"abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12, "show_progress": False}
    x = np.array(cvxopt.solvers.qp(*map(cvxopt.matrix, (P, c, G, h)), options=options)["x"])
    return x.ravel()


def objective(P, c, x):
    return 0.5 * x @ P @ x + c @ x


@pytest.mark.parametrize("seed", [0, 1])
def test_box_qp_matches_cvxopt(seed):
    P, c, lower, upper = random_box_qp(seed)
    s = box_qp(P, c, lower, upper, 1e-11)
    x = np.asarray(s.x)
    assert float(s.gap) <= 1e-11 and int(s.k) < 20_000
    assert np.all(x >= lower) and np.all(x <= upper)  # the prox keeps every iterate feasible
    np.testing.assert_allclose(s.px, P @ x, rtol=1e-10, atol=1e-12)  # the tracked product
    reference = objective(P, c, cvxopt_box_qp(P, c, lower, upper))
    mine = objective(P, c, x)
    assert abs(mine - reference) <= 1e-9 * max(1.0, abs(reference))
    assert mine - reference <= float(s.gap) + 1e-12  # the certificate holds


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_diagonal_box_qp_closed_form(dtype):
    """With ``P = diag(d)`` the minimizer is ``clip(-c / d, lower, upper)``."""
    rng = np.random.default_rng(2)
    d, c = rng.uniform(0.1, 10, 20), 3 * rng.normal(size=20)
    lower, upper = -np.ones(20), np.ones(20)
    P, c, lower, upper = (t.astype(dtype) for t in (np.diag(d), c, lower, upper))
    tol = 1e-4 if dtype == np.float32 else 1e-12
    s = box_qp(P, c, lower, upper, tol)
    assert s.x.dtype == s.lipschitz.dtype == dtype and float(s.gap) <= tol
    atol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(s.x, np.clip(-c / d, -1, 1), atol=atol)


def test_adaptive_step_recovers_from_a_small_lipschitz():
    """Started with ``L`` a thousandth of ``lmax(P)``, the curvature check raises it (by
    ``growth`` times the curvature met) and the solve ends at the same certified point."""
    P, c, lower, upper = random_box_qp(0)
    lmax = np.linalg.eigvalsh(P)[-1]
    s = box_qp(P, c, lower, upper, 1e-11, lipschitz=1e-3 * lmax)
    assert float(s.gap) <= 1e-11
    assert 1e-3 * lmax < float(s.lipschitz) <= 1.5 * lmax * (1 + 1e-12)
    reference = objective(P, c, cvxopt_box_qp(P, c, lower, upper))
    assert abs(objective(P, c, np.asarray(s.x)) - reference) <= 1e-9 * max(1.0, abs(reference))


def test_vmap_equals_single_solves():
    P, _, lower, upper = random_box_qp(1)
    cs = np.random.default_rng(3).normal(size=(3, 12))
    solve = functools.partial(box_qp, P, lower=lower, upper=upper, tol=1e-10)
    batched = jax.vmap(solve)(cs)
    for i, c in enumerate(cs):
        single = solve(c)
        np.testing.assert_allclose(batched.x[i], single.x, rtol=1e-12, atol=1e-12)
        assert int(batched.k[i]) == int(single.k)


def test_stall_counter_stops_a_solve_that_no_longer_improves():
    """``iterate`` ends after ``stall`` steps without a 0.1% drop of the best gap."""
    P, c, lower, upper = random_box_qp(0)
    s = box_qp(P, c, lower, upper, 0.0, max_iter=5_000, stall=20)  # tol 0: never met
    assert int(s.k) < 5_000  # the gap stalls at rounding level long before the cap
    reference = objective(P, c, cvxopt_box_qp(P, c, lower, upper))
    assert abs(objective(P, c, np.asarray(s.x)) - reference) <= 1e-9 * max(1.0, abs(reference))
    x = jnp.zeros(3)
    start = fista_start(x, x, 1.0, (), (jnp.ones(()), ()))
    frozen = iterate(lambda s: s._replace(k=s.k + 1), start, lambda s: s.k < 100, stall=7)
    assert int(frozen.k) == 7


def test_largest_eigenvalue_against_numpy():
    rng = np.random.default_rng(4)
    G, b = rng.normal(size=(30, 10)), 0.5 * rng.normal(size=10)
    C = G.T @ G / 30
    A = C + np.outer(b, b)
    v0 = jnp.asarray(rng.normal(size=10))
    top = largest_eigenvalue(lambda v: A @ v, v0, tol=1e-14, max_iter=2_000)
    np.testing.assert_allclose(top, np.linalg.eigvalsh(A)[-1], rtol=1e-9)
    deflated = largest_eigenvalue(lambda v: A @ v, v0, rank_one=b, tol=1e-14, max_iter=2_000)
    np.testing.assert_allclose(deflated, np.linalg.eigvalsh(C)[-1], rtol=1e-9)
    for steps in (1, 2, 5):  # a Rayleigh quotient: never above the eigenvalue
        early = largest_eigenvalue(lambda v: A @ v, v0, max_iter=steps)
        assert 0 < float(early) <= np.linalg.eigvalsh(A)[-1] * (1 + 1e-12)
    A32 = jnp.asarray(A, jnp.float32)
    top32 = largest_eigenvalue(lambda v: A32 @ v, v0.astype(jnp.float32), tol=1e-6, max_iter=500)
    assert top32.dtype == jnp.float32
    np.testing.assert_allclose(top32, np.linalg.eigvalsh(A)[-1], rtol=1e-5)
