"""CqBoost, MDBoost, LPBoost and CG-Boost (roy2016 §4-6) against CVXOPT / HiGHS.

The four learners share their tests (restricted and full programs against the references,
zero weights against slicing, ``vmap`` over the hyperparameter and fold masks without
recompiling, float32, the matrix-free stumps); each keeps its own reference checks
(``_check_*``) and tests below. One small wdbc problem, ``(80, 40)`` votes.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound.margins import margin_moments
from pacbound.solvers.cgboost import cgboost, cgboost_stumps
from pacbound.solvers.column_generation import majority_vote
from pacbound.solvers.cqboost import cqboost, cqboost_max_mu, cqboost_stumps
from pacbound.solvers.lpboost import lpboost, lpboost_stumps
from pacbound.solvers.mdboost import mdboost, mdboost_stumps
from pacbound.voters import stump_search, stumps_vote
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40


def _check_cqboost(H, y, mu, r, full):
    """Program (3)'s constraints; its objective is ``mu2`` of the vote; sparse."""
    q = np.asarray(r.q)
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    mu1, mu2 = margin_moments(H, y, q)
    assert float(mu1) >= mu - 1e-12
    np.testing.assert_allclose(float(mu2), float(r.objective), rtol=1e-12)
    assert ref.max_violation(H, y, r.alpha, float(r.nu)) <= 1e-6
    assert int((q > 0).sum()) < H.shape[1]


def _check_mdboost(H, y, D, r, full):
    """roy2016 §6: the objective is ``m [D m / (2 (m - 1)) (mu2 - mu1^2) - mu1]``."""
    q, m = np.asarray(r.q), len(y)
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    mu1, mu2 = (float(t) for t in margin_moments(H, y, q))
    np.testing.assert_allclose(
        m * (D * m / (2 * (m - 1)) * (mu2 - mu1**2) - mu1), float(r.objective), rtol=1e-10
    )
    assert ref.max_violation(H, y, r.alpha, float(r.nu)) <= 1e-6


def _check_lpboost(H, y, C, r, full):
    """``1^T q + C sum xi``; duals in ``[0, C]``, feasible for ``edge <= 1`` on every column."""
    q, alpha = np.asarray(r.q), np.asarray(r.alpha)
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q.sum() + C * slack.sum(), float(r.objective), rtol=1e-12)
    assert np.all(q >= 0) and np.all(alpha >= 0) and np.all(alpha <= C + 1e-12)
    assert ref.max_violation(H, y, alpha, 1.0) <= 1e-6
    np.testing.assert_allclose(np.asarray(majority_vote(r, H)), H @ q, atol=1e-12)


def _check_cgboost(H, y, C, r, full):
    """``q^T q / 2 + C sum xi``; the QP's ``q`` is unique; ``edge_i <= q_i`` on every column."""
    q = np.asarray(r.q)
    np.testing.assert_allclose(q, full.q, atol=1e-5)
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q @ q / 2 + C * slack.sum(), float(r.objective), rtol=1e-12)
    assert np.max(H.T @ (y * np.asarray(r.alpha)) - q) <= 1e-6


class Case(NamedTuple):
    fit: Callable
    fit_stumps: Callable
    program: Callable  # the reference: program(H, y, value, w=None) -> ref.Solution
    values: tuple  # checked against the reference
    value: float  # of the weighted, vmapped and float32 runs
    check: Callable  # the learner's own checks: check(H, y, value, result, full_solution)
    unique_q: bool  # the optimal q is unique (not LPBoost's LP)
    stumps: Callable  # (X, y, search) -> (X, y, value, max_columns) of the matrix-free test


CASES = {
    "cqboost": Case(cqboost, cqboost_stumps, ref.cqboost_qp, (0.2, 0.35), 0.3, _check_cqboost,
                    True, lambda X, y, s: (X, y, 0.9 * float(cqboost_max_mu(s, y)), 60)),
    "mdboost": Case(mdboost, mdboost_stumps, ref.mdboost_qp, (1.0, 30.0), 10.0, _check_mdboost,
                    True, lambda X, y, s: (X, y, 10.0, 60)),
    "lpboost": Case(lpboost, lpboost_stumps, ref.lpboost_lp, (0.05, 1.0), 0.5, _check_lpboost,
                    False, lambda X, y, s: (X, y, 1.0, 60)),
    # CG-Boost's L2 optimum is dense (half the stumps): a smaller sample, 2 features
    "cgboost": Case(cgboost, cgboost_stumps, ref.cgboost_qp, (0.01, 0.3), 0.1, _check_cgboost,
                    True, lambda X, y, s: (X[:40, :2], y[:40], 0.01, 90)),
}  # fmt: skip
VALUES = [(name, v) for name, case in CASES.items() for v in case.values]


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    """``solved(name, value)``: the learner's run at ``value``, computed once."""
    _, y, H = problem
    cache = {}

    def get(name, value):
        if (name, value) not in cache:
            cache[name, value] = CASES[name].fit(H, y, value, 1e-6, MAX_COLUMNS)
        return cache[name, value]

    return get


@pytest.mark.parametrize(("name", "value"), VALUES)
def test_matches_reference_restricted_and_full(problem, solved, name, value):
    _, y, H = problem
    case, r = CASES[name], solved(name, value)
    assert bool(r.converged)
    cols = np.asarray(r.selected)[: int(r.n_columns)]
    full = case.program(H, y, value)
    restricted = case.program(H[:, cols], y, value)
    np.testing.assert_allclose(float(r.objective), restricted.objective, rtol=1e-8)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    # the dual certificate: no column outside the program violates edge <= nu by > eps
    others = np.setdiff1d(np.arange(H.shape[1]), cols)
    assert ref.max_violation(H[:, others], y, r.alpha, float(r.nu)) <= 1e-6
    assert float(r.max_violation) <= 1e-6
    case.check(H, y, value, r, full)


@pytest.mark.parametrize("name", CASES)
def test_zero_weights_equal_slicing(problem, name):
    _, y, H = problem
    case = CASES[name]
    keep = np.arange(len(y)) % 4 != 1
    masked = case.fit(H, y, case.value, 1e-6, MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = case.fit(H[keep], y[keep], case.value, 1e-6, MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-8)
    if case.unique_q:
        np.testing.assert_allclose(np.asarray(masked.q), np.asarray(sliced.q), atol=1e-6)
    np.testing.assert_array_equal(np.asarray(masked.alpha)[~keep], 0)
    weighted = case.program(H, y, case.value, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_vmap_over_value_and_folds_equals_single_runs_without_recompiling(
    problem, name, no_compilation
):
    _, y, H = problem
    case = CASES[name]
    values = jnp.array(case.values)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 2 != np.arange(2)[:, None], jnp.float64)

    def run(value, w, eps=1e-6):
        return case.fit(H, y, value, eps, MAX_COLUMNS, sample_weight=w)

    swept = jax.vmap(run)(values, folds)
    for i, value in enumerate(case.values):
        single = run(value, folds[i])
        np.testing.assert_allclose(swept.objective[i], single.objective, rtol=1e-9)
        if case.unique_q:
            np.testing.assert_allclose(swept.q[i], single.q, atol=1e-7)
    new_values, new_folds = values * 1.1, folds[::-1]  # (eager ops compile kernels)
    with no_compilation():  # new values, eps and folds: traced
        run(case.value * 0.9, new_folds[0], 1e-7)
        jax.vmap(run)(new_values, new_folds)


@pytest.mark.parametrize("name", CASES)
def test_float32(problem, name):
    _, y, H = problem
    case = CASES[name]
    r = case.fit(H.astype(np.float32), y.astype(np.float32), case.value, 1e-6, MAX_COLUMNS)
    assert r.q.dtype == jnp.float32 and r.objective.dtype == jnp.float32
    full = case.program(H, y, case.value)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-4)


@pytest.mark.parametrize("name", CASES)
def test_matrix_free_stumps_equal_all_materialized_stumps(problem, name):
    case = CASES[name]
    X, y, value, max_columns = case.stumps(problem[0], problem[1], stump_search(problem[0]))
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    r = case.fit_stumps(stump_search(X), y, value, 1e-6, max_columns)
    assert bool(r.converged)
    full = case.program(H_all[:, valid], y, value)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    # the slots are the materialized columns they name, and the vote is theirs
    sel = np.asarray(r.selected)[: int(r.n_columns)]
    assert not np.isnan(H_all[:, sel]).any()
    vote = np.asarray(stumps_vote(r.stumps, r.q * r.signs, X))
    np.testing.assert_allclose(vote, H_all[:, sel] @ np.asarray(r.q)[: len(sel)], atol=1e-12)
    others = np.setdiff1d(np.flatnonzero(valid), sel)
    assert ref.max_violation(H_all[:, others], y, r.alpha, float(r.nu)) <= 1e-6


# ----------------------------------------------------------------- learner-specific tests
def test_cqboost_duals_match_the_kkt_conditions(problem, solved):
    """alpha = w (beta - 2 gamma) / W: the same dual point as CVXOPT's, up to its accuracy."""
    _, y, H = problem
    r = solved("cqboost", 0.35)
    full = ref.cqboost_qp(H, y, 0.35)
    np.testing.assert_allclose(np.asarray(r.alpha), full.alpha, atol=1e-7)
    np.testing.assert_allclose(float(r.nu), full.nu, atol=1e-7)


def test_cqboost_unreachable_mu_names_the_largest(problem):
    _, y, H = problem
    largest = float(cqboost_max_mu(H, y))
    np.testing.assert_allclose(largest, np.max(H.T @ y) / len(y))
    with pytest.raises(ValueError, match=f"largest reachable mu is {largest:.6g}"):
        cqboost(H, y, largest + 1e-3, 1e-6, MAX_COLUMNS)
    with pytest.raises(ValueError, match="mu"):
        cqboost(H, y, -0.1)
    traced = jax.jit(lambda mu: cqboost(H, y, mu, 1e-6, MAX_COLUMNS))(largest + 1e-3)
    assert not bool(traced.converged)  # no check under jit: flagged instead


def test_mdboost_checks(problem):
    _, y, H = problem
    with pytest.raises(ValueError, match="D"):
        mdboost(H, y, 0.0)
    with pytest.raises(ValueError, match="sum"):
        mdboost(H, y, 1.0, sample_weight=np.eye(len(y))[0])


def test_lpboost_empty_vote_when_no_column_pays(problem):
    """With C small, q = 0 is optimal: no edge C sum_k y_k h(x_k) exceeds 1."""
    _, y, H = problem
    C = 0.5 / np.max(H.T @ y)
    r = lpboost(H, y, C, 1e-6, MAX_COLUMNS)
    assert int(r.n_columns) == 0 and bool(r.converged)
    np.testing.assert_array_equal(np.asarray(r.q), 0)
    np.testing.assert_allclose(float(r.objective), ref.lpboost_lp(H, y, C).objective, rtol=1e-9)
