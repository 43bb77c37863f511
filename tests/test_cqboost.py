"""CqBoost (roy2016 Algorithm 1, program (3) with mu1 >= mu) against CVXOPT and itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from pacbound.margins import margin_moments
from pacbound.solvers.cqboost import cqboost, cqboost_max_mu, cqboost_stumps
from pacbound.voters import stump_search, stumps_vote
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    _, y, H = problem
    return {mu: cqboost(H, y, mu, 1e-6, MAX_COLUMNS) for mu in (0.2, 0.35)}


@pytest.mark.parametrize("mu", [0.2, 0.35])
def test_matches_cvxopt_restricted_and_full(problem, solved, mu):
    _, y, H = problem
    r = solved[mu]
    assert bool(r.converged)
    q = np.asarray(r.q)
    cols = np.asarray(r.selected)[: int(r.n_columns)]
    restricted = ref.cqboost_qp(H[:, cols], y, mu)
    full = ref.cqboost_qp(H, y, mu)
    np.testing.assert_allclose(float(r.objective), restricted.objective, rtol=1e-8)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    # program (3)'s constraints, and its objective is mu2 of the vote
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    mu1, mu2 = margin_moments(H, y, q)
    assert float(mu1) >= mu - 1e-12
    np.testing.assert_allclose(float(mu2), float(r.objective), rtol=1e-12)
    # the dual certificate: no column of H violates H^T diag(y) alpha <= nu by more than eps
    assert ref.max_violation(H, y, r.alpha, float(r.nu)) <= 1e-6
    assert float(r.max_violation) <= 1e-6
    print(
        f"mu={mu}: {int((q > 0).sum())} non-zero weights of {H.shape[1]} "
        f"(full QP: {int((full.q > 1e-6 * full.q.max()).sum())})"
    )
    assert int((q > 0).sum()) < H.shape[1]


def test_duals_match_the_kkt_conditions(problem, solved):
    """alpha = w (beta - 2 gamma) / W: the same dual point as CVXOPT's, up to its accuracy."""
    _, y, H = problem
    r = solved[0.35]
    full = ref.cqboost_qp(H, y, 0.35)
    np.testing.assert_allclose(np.asarray(r.alpha), full.alpha, atol=1e-7)
    np.testing.assert_allclose(float(r.nu), full.nu, atol=1e-7)


def test_unreachable_mu_names_the_largest(problem):
    _, y, H = problem
    largest = float(cqboost_max_mu(H, y))
    np.testing.assert_allclose(largest, np.max(H.T @ y) / len(y))
    with pytest.raises(ValueError, match=f"largest reachable mu is {largest:.6g}"):
        cqboost(H, y, largest + 1e-3, 1e-6, MAX_COLUMNS)
    with pytest.raises(ValueError, match="mu"):
        cqboost(H, y, -0.1)
    traced = jax.jit(lambda mu: cqboost(H, y, mu, 1e-6, MAX_COLUMNS))(largest + 1e-3)
    assert not bool(traced.converged)  # no check under jit: flagged instead


def test_zero_weights_equal_slicing(problem):
    _, y, H = problem
    keep = np.arange(len(y)) % 5 != 0
    masked = cqboost(H, y, 0.3, 1e-6, MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = cqboost(H[keep], y[keep], 0.3, 1e-6, MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(masked.q), np.asarray(sliced.q), atol=1e-7)
    np.testing.assert_array_equal(np.asarray(masked.alpha)[~keep], 0)
    weighted = ref.cqboost_qp(H, y, 0.3, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


def test_vmap_over_mu_and_folds_equals_single_runs_without_recompiling(problem, solved):
    _, y, H = problem
    mus = jnp.array([0.2, 0.35])
    swept = jax.vmap(lambda mu: cqboost(H, y, mu, 1e-6, MAX_COLUMNS))(mus)
    for i, mu in enumerate((0.2, 0.35)):
        np.testing.assert_allclose(swept.objective[i], solved[mu].objective, rtol=1e-10)
        np.testing.assert_allclose(swept.q[i], solved[mu].q, atol=1e-9)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 3 != np.arange(3)[:, None], jnp.float64)
    by_fold = jax.vmap(lambda w: cqboost(H, y, 0.3, 1e-6, MAX_COLUMNS, sample_weight=w))(folds)
    for i in range(3):
        single = cqboost(H, y, 0.3, 1e-6, MAX_COLUMNS, sample_weight=folds[i])
        np.testing.assert_allclose(by_fold.objective[i], single.objective, rtol=1e-10)
    shifted = mus + 0.01
    compiles = []
    monitoring.register_event_duration_secs_listener(
        lambda event, _, **kw: (
            compiles.append(event)
            if event == "/jax/core/compile/backend_compile_duration"
            else None
        )
    )
    cqboost(H, y, 0.27, 1e-7, MAX_COLUMNS)  # new mu and eps: traced, no compilation
    jax.vmap(lambda mu: cqboost(H, y, mu, 1e-6, MAX_COLUMNS))(shifted)
    assert compiles == []


def test_float32(problem):
    _, y, H = problem
    r = cqboost(H.astype(np.float32), y.astype(np.float32), 0.3, 1e-6, MAX_COLUMNS)
    assert r.q.dtype == jnp.float32 and r.objective.dtype == jnp.float32
    full = ref.cqboost_qp(H, y, 0.3)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-4)
    assert abs(float(jnp.sum(r.q)) - 1) < 1e-5


def test_matrix_free_stumps_equal_all_materialized_stumps(problem):
    X, y, _ = problem
    search = stump_search(X)
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    mu = 0.9 * float(cqboost_max_mu(search, y))
    np.testing.assert_allclose(float(cqboost_max_mu(H_all[:, valid], y)) * 0.9, mu)
    r = cqboost_stumps(search, y, mu, 1e-6, 60)
    assert bool(r.converged)
    full = ref.cqboost_qp(H_all[:, valid], y, mu)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    # the selected slots are the materialized columns they name, and the vote is theirs
    sel = np.asarray(r.selected)[: int(r.n_columns)]
    np.testing.assert_array_equal(H_all[:, sel], H_all[:, sel])  # no NaN column selected
    assert not np.isnan(H_all[:, sel]).any()
    vote = np.asarray(stumps_vote(r.stumps, r.q * r.signs, X))
    np.testing.assert_allclose(vote, H_all[:, sel] @ np.asarray(r.q)[: len(sel)], atol=1e-12)
    assert ref.max_violation(H_all[:, valid], y, r.alpha, float(r.nu)) <= 1e-6
