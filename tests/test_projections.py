"""Box ∩ hyperplane projections: KKT certificates, independent references, derivatives."""

import cvxopt
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from pacbound._src.optimization.projections import (
    box_hyperplane_feasible,
    box_hyperplane_projection,
    box_hyperplane_rank_one_prox,
    project_box_hyperplane,
)

cvxopt.solvers.options["show_progress"] = False


def random_problem(seed, n, zero_fraction=0.2):
    """A feasible problem whose normal has both signs (and some zeros)."""
    rng = np.random.default_rng(seed)
    v = 2 * rng.normal(size=n)
    a = rng.normal(size=n) * (rng.random(n) > zero_fraction)
    lower, upper = -rng.random(n), rng.random(n)
    c = a @ rng.uniform(lower, upper)
    return v, a, c, lower, upper


def bisection_reference(v, a, c, lower, upper):
    """Independent reference: 200 bisections on the multiplier, then the free-set equation."""
    lo, hi = -1e6, 1e6
    for _ in range(200):
        lam = 0.5 * (lo + hi)
        if a @ np.clip(v - lam * a, lower, upper) > c:
            lo = lam
        else:
            hi = lam
    x = np.clip(v - lam * a, lower, upper)
    free = (x > lower) & (x < upper)
    if (a[free] ** 2).sum() > 0:
        lam = ((a * np.where(free, v, x)).sum() - c) / (a[free] ** 2).sum()
    return np.clip(v - lam * a, lower, upper)


def assert_kkt(v, a, c, lower, upper, x, lam, tol=1e-12):
    """Convex problem: feasibility + stationarity with signed bound multipliers = optimality."""
    x = np.asarray(x)
    assert np.all(x >= lower) and np.all(x <= upper)
    assert abs(a @ x - c) <= tol * (np.abs(a) @ np.abs(x) + abs(c) + 1)
    residual = x - v + lam * a  # = multiplier of the lower bound minus that of the upper one
    free = (x > lower) & (x < upper)
    assert np.all(np.abs(residual[free]) <= tol * (1 + np.abs(v[free])))
    assert np.all(residual[x == lower] >= -tol) and np.all(residual[x == upper] <= tol)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [1, 7, 200])
def test_kkt_and_reference_any_signs(seed, n):
    v, a, c, lower, upper = random_problem(seed, n)
    p = box_hyperplane_projection(v, a, c, lower, upper)
    assert bool(p.feasible)
    assert_kkt(v, a, c, lower, upper, p.x, float(p.multiplier))
    np.testing.assert_allclose(p.x, bisection_reference(v, a, c, lower, upper), atol=1e-12)


def test_negative_normal_against_cvxopt():
    """MinCq's case: a with negative entries, box [0, 1/n] (jaxopt returns NaN here)."""
    rng = np.random.default_rng(3)
    n = 30
    v, a = rng.normal(size=n) / n, rng.normal(size=n)
    a[:10] = -np.abs(a[:10])
    c = 0.3 * np.abs(a).sum() / n
    x = project_box_hyperplane(v, a, c, 0.0, 1.0 / n)
    G = np.vstack([np.eye(n), -np.eye(n)])
    h = np.concatenate([np.full(n, 1.0 / n), np.zeros(n)])
    tight = {"abstol": 1e-13, "reltol": 1e-13, "feastol": 1e-13}
    args = [cvxopt.matrix(t) for t in (np.eye(n), -v, G, h, a[None, :], np.array([c]))]
    ref = np.array(cvxopt.solvers.qp(*args, options=tight)["x"]).ravel()
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(x, ref, atol=1e-9)


def test_infeasible_is_reported():
    v, a = jnp.zeros(3), jnp.array([1.0, -2.0, 0.5])
    for c in (3.6, -3.6):  # a^T x ranges over [-3.5, 3.5] on [-1, 1]^3
        p = box_hyperplane_projection(v, a, c, -1.0, 1.0)
        assert not bool(p.feasible)
        assert np.all(np.isnan(project_box_hyperplane(v, a, c, -1.0, 1.0)))
        # the reported point is the box's closest face to the hyperplane
        np.testing.assert_allclose(p.x, np.sign(c) * np.sign(a), atol=1e-15)
    assert not bool(box_hyperplane_projection(v, a, 0.0, 1.0, -1.0).feasible)  # lower > upper
    assert bool(box_hyperplane_projection(v, a, 3.5, -1.0, 1.0).feasible)  # boundary: one point
    np.testing.assert_allclose(project_box_hyperplane(v, a, 3.5, -1.0, 1.0), [1, -1, 1])


def test_degenerate_cases():
    # zero normal: plain box clipping, feasible only for c = 0
    p = box_hyperplane_projection(jnp.array([2.0, -0.5]), jnp.zeros(2), 0.0, -1.0, 1.0)
    np.testing.assert_allclose(p.x, [1.0, -0.5])
    # repeated breakpoints (ties) and a point already feasible
    v = jnp.array([0.5, 0.5, 0.5, -0.2])
    a = jnp.array([1.0, 1.0, 1.0, -1.0])
    np.testing.assert_allclose(project_box_hyperplane(v, a, a @ v, -1.0, 1.0), v, atol=1e-15)


def test_jit_vmap_loop_agree():
    problems = [random_problem(s, 50) for s in range(5)]
    v, a, c, lower, upper = (np.stack(t) for t in zip(*problems, strict=True))
    batched = jax.vmap(project_box_hyperplane)(v, a, c, lower, upper)
    for i, prob in enumerate(problems):
        np.testing.assert_array_equal(batched[i], project_box_hyperplane(*prob))


def test_float32():
    v, a, c, lower, upper = (np.asarray(t, np.float32) for t in random_problem(1, 100))
    p = box_hyperplane_projection(v, a, c, lower, upper)
    assert p.x.dtype == jnp.float32
    ref = bisection_reference(*(np.float64(t) for t in (v, a, c, lower, upper)))
    np.testing.assert_allclose(p.x, ref, atol=2e-6)


@pytest.mark.parametrize("seed", range(3))
def test_custom_jvp_matches_finite_differences(seed):
    v, a, c, lower, upper = random_problem(seed, 12, zero_fraction=0.0)

    def f(v, a, c, lower, upper):
        p = box_hyperplane_projection(v, a, c, lower, upper)
        return jnp.concatenate([p.x, p.multiplier[None]])

    # a generic point: no coordinate sits on a breakpoint, so the free set is locally constant
    check_grads(f, (v, a, c, lower, upper), order=1, modes=("fwd", "rev"), eps=1e-6)
    free = np.asarray(
        (f(v, a, c, lower, upper)[:-1] > lower) & (f(v, a, c, lower, upper)[:-1] < upper)
    )
    jac = jax.jacobian(project_box_hyperplane)(v, a, c, lower, upper)
    # on the free set the derivative is the projector onto a_F's orthogonal complement
    a_free = a * free
    expected = np.diag(free.astype(float)) - np.outer(a_free, a_free) / (a_free @ a_free)
    np.testing.assert_allclose(jac, expected, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_rank_one_prox_kkt_and_cvxopt(seed):
    v, a, c, lower, upper = random_problem(seed, 40, zero_fraction=0.0)
    rng = np.random.default_rng(seed + 100)
    b, kappa = rng.normal(size=40) + 0.3, 10.0 ** rng.uniform(-2, 1)
    p = box_hyperplane_rank_one_prox(v, a, c, lower, upper, b, kappa)
    x, lam, s = np.asarray(p.x), float(p.multiplier), float(p.rank_one_multiplier)
    np.testing.assert_allclose(x, np.clip(v - lam * a - s * b, lower, upper), atol=1e-14)
    assert abs(a @ x - c) <= 1e-12 and abs(s - kappa * b @ x) <= 1e-12 * (1 + abs(s))
    n = v.shape[0]
    G = np.vstack([np.eye(n), -np.eye(n)])
    tight = {"abstol": 1e-13, "reltol": 1e-13, "feastol": 1e-13}
    P = np.eye(n) + kappa * np.outer(b, b)
    args = [cvxopt.matrix(t) for t in (P, -v, G, np.concatenate([upper, -lower]), a[None, :])]
    ref = np.array(cvxopt.solvers.qp(*args, cvxopt.matrix([c]), options=tight)["x"]).ravel()
    np.testing.assert_allclose(x, ref, atol=1e-8)
    warm = box_hyperplane_rank_one_prox(v, a, c, lower, upper, b, kappa, (lam, s))
    assert int(warm.steps) <= 1
    np.testing.assert_allclose(warm.x, x, atol=1e-14)


def test_rank_one_prox_loop_free_steps_converge_across_calls():
    """``max_steps <= plain_steps``: no loop; warm-started calls reach the looped answer."""
    v, a, c, lower, upper = random_problem(7, 40, zero_fraction=0.0)
    b, kappa = np.random.default_rng(7).normal(size=40) + 0.3, 1.0
    exact = box_hyperplane_rank_one_prox(v, a, c, lower, upper, b, kappa)
    init, calls = (0.0, 0.0), 0
    while calls < 50:  # a Newton step that would lower the dual is replaced by an ascent step
        p = box_hyperplane_rank_one_prox(v, a, c, lower, upper, b, kappa, init, max_steps=1)
        if int(p.steps) == 0:
            break
        init, calls = (p.multiplier, p.rank_one_multiplier), calls + 1
    assert calls < 50
    np.testing.assert_allclose(p.x, exact.x, atol=1e-12)
    assert bool(box_hyperplane_feasible(a, c, lower, upper))
    assert not bool(box_hyperplane_feasible(a, np.abs(a).sum() * 2, -1.0, 1.0))
