"""The shared column-generation machinery: exact projection, the two master solvers, the
implicit pricing of ``[H, -H]``, the public signatures and the boundary checks (the learners
have their own test files)."""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

from pacbound import solvers
from pacbound._src.learning.candidates import dense_candidates, search_candidates
from pacbound._src.learning.column_generation_loop import complemented_edges, complemented_votes
from pacbound._src.optimization.interior_point import solve_soft_margin
from pacbound._src.optimization.simplex_qp import project_simplex_halfspace, solve_simplex_qp
from pacbound._src.solvers.cgboost import cgboost
from pacbound._src.solvers.cqboost import cqboost
from pacbound._src.solvers.lpboost import lpboost
from pacbound._src.solvers.mdboost import mdboost
from pacbound.voters import stump_search
from tests.reference import column_generation_cvxopt as ref

project = jax.jit(project_simplex_halfspace)


def _reference_projection(z, a, b, active):
    idx = np.flatnonzero(active)
    k = len(idx)
    ineq = np.vstack([-np.eye(k), -a[idx][None]])
    x, _, _ = ref._qp(np.eye(k), -z[idx], ineq, np.r_[np.zeros(k), -b], np.ones((1, k)), [1.0])
    out = np.zeros(len(z))
    out[idx] = x
    return out


def test_projection_onto_simplex_and_halfspace_is_exact():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(1, 10))
        z = rng.normal(size=n) * rng.choice([0.1, 1.0, 10.0])
        a = rng.normal(size=n)
        active = rng.random(n) < 0.8
        active[rng.integers(n)] = True
        top, low = a[active].max(), a[active].min()
        b = top - rng.random() * (top - low + 1) * rng.choice([0.1, 1.0, 2.0])
        guess = rng.random(n) < 0.5  # a wrong support guess must not matter
        x, lam = project(z, a, b, active, rng.random() * rng.integers(2), guess)
        x = np.asarray(x)
        assert abs(x.sum() - 1) < 1e-12 and np.all(x >= 0) and np.all(x[~active] == 0)
        assert a @ x >= b - 1e-12 and float(lam) >= 0
        np.testing.assert_allclose(x, _reference_projection(z, a, b, active), atol=1e-7)
        # KKT: x = max(z + lam a - tau, 0) on the active set
        free = x > 0
        tau = (z + float(lam) * a)[free] - x[free]
        np.testing.assert_allclose(tau, tau[0], atol=1e-10)
        assert np.all((z + float(lam) * a)[active & ~free] <= tau[0] + 1e-10)


def test_simplex_qp_matches_cvxopt():
    rng = np.random.default_rng(1)
    n = 12
    F = rng.normal(size=(20, n))
    P, c, a = F.T @ F / 20, rng.normal(size=n), rng.normal(size=n)
    b = 0.5 * a.max()
    active = np.arange(n) < 10
    r = solve_simplex_qp(P, c, a, b, active, np.zeros(n), 1e-12, 100_000)
    assert bool(r.converged)
    x = np.asarray(r.x)
    k = 10
    ineq = np.vstack([-np.eye(k), -a[None, :k]])
    xr, _, _ = ref._qp(P[:k, :k], c[:k], ineq, np.r_[np.zeros(k), -b], np.ones((1, k)), [1.0])
    f = x @ P @ x / 2 + c @ x
    np.testing.assert_allclose(f, xr @ P[:k, :k] @ xr / 2 + c[:k] @ xr, rtol=1e-9)
    assert float(r.gap) >= -1e-14 and np.all(x[~active] == 0)


@pytest.mark.parametrize("rho", [0.0, 1.0])
def test_soft_margin_ipm_brackets_the_reference_optimum(rho):
    _, y, H = ref.stump_problem()
    K, (m, n) = y[:, None] * H, H.shape
    C = 0.2
    active = np.arange(n) < 30
    r = solve_soft_margin(K, np.full(n, 1.0 - rho), rho, np.full(m, C), active,
                          np.zeros(n), np.zeros(m), 1.0, 1e-10, 200_000)  # fmt: skip
    assert bool(r.converged)
    solve = ref.lpboost_lp if rho == 0 else ref.cgboost_qp
    best = solve(H[:, active], y, C).objective
    assert float(r.dual_objective) <= best * (1 + 1e-9) <= float(r.primal_objective) * (1 + 2e-9)
    np.testing.assert_allclose(float(r.primal_objective), best, rtol=1e-9)
    alpha = np.asarray(r.y)
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    if rho == 0:  # the returned duals are exactly feasible for the LP's dual
        assert np.max(K[:, active].T @ alpha) <= 1 + 1e-12


def _reference_index(index, d, P, m):
    """A self-complemented candidate index of the padded ``(d, P)`` stump layout as a column of
    ``ref.all_stumps`` (``-1`` where the position is no stump)."""
    base, negative = index % (d * P), index >= d * P
    f, k = np.divmod(base, P)
    column = f * (m - 1) + k + negative * d * (m - 1)
    return np.where(k < m - 1, column, -1)


def test_candidates_price_and_build_the_columns_they_name():
    """[H, -H] priced implicitly: edges and votes of every voter and its complement."""
    X, _, H = ref.stump_problem(m=30, features=(0, 7))
    S = H[:, : H.shape[1] // 2]
    a = np.random.default_rng(2).normal(size=30)
    dense = dense_candidates(jnp.asarray(S), jnp.float64)
    np.testing.assert_allclose(np.asarray(complemented_edges(dense, jnp.asarray(a))), a @ H,
                               atol=1e-12)  # fmt: skip
    for j in (3, S.shape[1] + 3):
        np.testing.assert_array_equal(np.asarray(complemented_votes(dense, j, jnp.float64)),
                                      H[:, j])  # fmt: skip
    search = stump_search(X)
    stumps = search_candidates(search, jnp.float64)
    (d, P), m = search.candidate_mask().shape, len(X)
    H_all = ref.all_stumps(X)
    edges = np.asarray(complemented_edges(stumps, jnp.asarray(a)))
    column = _reference_index(np.arange(2 * d * P), d, P, m)
    valid = column >= 0
    valid[valid] = ~np.isnan(H_all[:, column[valid]]).any(axis=0)
    np.testing.assert_array_equal(np.isinf(edges), ~valid)
    assert valid.sum() == (~np.isnan(H_all).any(axis=0)).sum()
    np.testing.assert_allclose(edges[valid], a @ H_all[:, column[valid]], atol=1e-12)
    for j in np.flatnonzero(valid)[::7]:
        votes = np.asarray(complemented_votes(stumps, j, jnp.float64))
        np.testing.assert_array_equal(votes, H_all[:, column[j]])


def test_buffer_full_is_reported_not_converged():
    _, y, H = ref.stump_problem()
    r = cqboost(H[:, : H.shape[1] // 2], y, 0.3, tol=1e-6, max_columns=3)
    assert int(r.steps) == 3 and not bool(r.converged) and float(r.info.max_violation) > 1e-6
    assert int(r.info.n_columns) == 3 and np.all(np.asarray(r.info.selected) >= 0)


def test_jit_of_the_public_function_equals_eager():
    _, y, H = ref.stump_problem()
    S = H[:, : H.shape[1] // 2]
    jitted = jax.jit(lambda C: lpboost(S, y, C, tol=1e-6, max_columns=40))
    by_keyword = lpboost(voters=S, y=y, C=0.5, max_columns=40)  # real signatures bind names
    np.testing.assert_allclose(jitted(0.5).objective, by_keyword.objective)
    np.testing.assert_allclose(jitted(0.5).q, by_keyword.q)


LEARNERS = {cqboost: "mu", mdboost: "D", lpboost: "C", cgboost: "C"}
MASTER_MAX_ITER = {cqboost: 50_000, mdboost: 50_000, lpboost: 100, cgboost: 100}


@pytest.mark.parametrize("dense", LEARNERS, ids=lambda f: f.__name__)
def test_public_functions_are_defs_on_the_protocol(dense):
    """Real ``def``s (named, documented, found by ``inspect.getsource``) with the protocol's
    vocabulary: ``voters`` (``H`` or a family) first, the hyperparameter positional, the rest
    keyword-only."""
    fn, first = dense, "voters"
    params = inspect.signature(fn).parameters
    assert list(params) == [first, "y", LEARNERS[dense], "sample_weight", "tol", "max_columns",
                            "master_tol", "master_max_iter"]  # fmt: skip
    keyword = [p.name for p in params.values() if p.kind == inspect.Parameter.KEYWORD_ONLY]
    assert keyword == list(params)[3:]
    defaults = {name: p.default for name, p in params.items() if name in keyword}
    assert defaults == {
        "sample_weight": None,
        "tol": 1e-6,
        "max_columns": 100,
        "master_tol": None,
        "master_max_iter": MASTER_MAX_ITER[dense],
    }
    assert fn.__code__.co_name == fn.__name__ and f"def {fn.__name__}(" in inspect.getsource(fn)
    assert fn.__module__ == dense.__module__ and LEARNERS[dense] in fn.__doc__
    with pytest.raises(TypeError):
        dense(np.ones((4, 2)), np.array([1.0, -1, 1, -1]))
    with pytest.raises(TypeError):  # options are keyword-only
        dense(np.ones((4, 2)), np.array([1.0, -1, 1, -1]), 0.5, None)


def test_boundary_checks():
    X, y, H = ref.stump_problem()
    S = H[:, : H.shape[1] // 2]
    with pytest.raises(ValueError, match="labels"):
        lpboost(S, np.where(y > 0, 1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match="sample_weight"):
        lpboost(S, y, 1.0, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="sample_weight"):
        lpboost(S, y, 1.0, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="tol"):
        lpboost(S, y, 1.0, tol=-1.0)
    with pytest.raises(ValueError, match="max_columns"):
        lpboost(S, y, 1.0, max_columns=0)
    with pytest.raises(ValueError, match="master_tol"):
        cqboost(S, y, 0.2, master_tol=0.0)
    with pytest.raises(ValueError, match="master_max_iter"):
        mdboost(S, y, 1.0, master_max_iter=0)
    with pytest.raises(ValueError, match="C"):
        lpboost(S, y, 0.0)
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        lpboost(2 * S, y, 1.0)
    with pytest.raises(ValueError, match="y must have shape"):
        solvers.cgboost(stump_search(X), y[:-1], 1.0)


def test_highs_reference_agrees_with_its_own_dual():
    """The reference itself: HiGHS's LP duals are feasible and close the gap."""
    _, y, H = ref.stump_problem()
    sol = ref.lpboost_lp(H, y, 0.5)
    assert ref.max_violation(H, y, sol.alpha, 1.0) <= 1e-9
    np.testing.assert_allclose(sol.alpha.sum(), sol.objective, rtol=1e-9)
    res = linprog(-np.ones(len(y)), A_ub=(y[:, None] * H).T, b_ub=np.ones(H.shape[1]),
                  bounds=(0, 0.5), method="highs")  # fmt: skip
    np.testing.assert_allclose(-res.fun, sol.objective, rtol=1e-9)
