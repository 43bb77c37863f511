"""LPBoost (the L1 soft-margin LP, roy2016 §6) by column generation, against HiGHS."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from pacbound.solvers.column_generation import majority_vote
from pacbound.solvers.lpboost import lpboost, lpboost_stumps
from pacbound.voters import stump_search, stumps_vote
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40
CS = (0.05, 1.0)


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    _, y, H = problem
    return {C: lpboost(H, y, C, 1e-6, MAX_COLUMNS) for C in CS}


@pytest.mark.parametrize("C", CS)
def test_matches_highs_restricted_and_full(problem, solved, C):
    _, y, H = problem
    r = solved[C]
    assert bool(r.converged)
    q = np.asarray(r.q)
    cols = np.asarray(r.selected)[: int(r.n_columns)]
    full = ref.lpboost_lp(H, y, C)
    np.testing.assert_allclose(
        float(r.objective), ref.lpboost_lp(H[:, cols], y, C).objective, rtol=1e-8
    )
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q.sum() + C * slack.sum(), float(r.objective), rtol=1e-12)
    assert np.all(q >= 0)
    alpha = np.asarray(r.alpha)
    assert np.all(alpha >= 0) and np.all(alpha <= C + 1e-12)
    assert ref.max_violation(H, y, alpha, 1.0) <= 1e-6 and float(r.max_violation) <= 1e-6
    print(
        f"C={C}: {int((q > 0).sum())} non-zero weights of {H.shape[1]} "
        f"(HiGHS: {int((full.q > 0).sum())})"
    )
    vote = np.asarray(majority_vote(r, H))
    np.testing.assert_allclose(vote, H @ q, atol=1e-12)


def test_zero_weights_equal_slicing(problem):
    _, y, H = problem
    keep = np.arange(len(y)) % 4 != 1
    masked = lpboost(H, y, 0.5, 1e-6, MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = lpboost(H[keep], y[keep], 0.5, 1e-6, MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-8)
    np.testing.assert_array_equal(np.asarray(masked.alpha)[~keep], 0)
    weighted = ref.lpboost_lp(H, y, 0.5, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


def test_empty_vote_when_no_column_pays(problem):
    """With C small, q = 0 is optimal: no edge C sum_k y_k h(x_k) exceeds 1."""
    _, y, H = problem
    C = 0.5 / np.max(H.T @ y)
    r = lpboost(H, y, C, 1e-6, MAX_COLUMNS)
    assert int(r.n_columns) == 0 and bool(r.converged)
    np.testing.assert_array_equal(np.asarray(r.q), 0)
    np.testing.assert_allclose(float(r.objective), ref.lpboost_lp(H, y, C).objective, rtol=1e-9)


def test_vmap_over_C_and_folds_equals_single_runs_without_recompiling(problem, solved):
    _, y, H = problem
    Cs = jnp.array(CS)
    swept = jax.vmap(lambda C: lpboost(H, y, C, 1e-6, MAX_COLUMNS))(Cs)
    for i, C in enumerate(CS):
        np.testing.assert_allclose(swept.objective[i], solved[C].objective, rtol=1e-9)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 3 != np.arange(3)[:, None], jnp.float64)
    by_fold = jax.vmap(lambda w: lpboost(H, y, 0.5, 1e-6, MAX_COLUMNS, sample_weight=w))(folds)
    for i in range(3):
        single = lpboost(H, y, 0.5, 1e-6, MAX_COLUMNS, sample_weight=folds[i])
        np.testing.assert_allclose(by_fold.objective[i], single.objective, rtol=1e-9)
    shifted = Cs * 2
    compiles = []
    monitoring.register_event_duration_secs_listener(
        lambda event, _, **kw: (
            compiles.append(event)
            if event == "/jax/core/compile/backend_compile_duration"
            else None
        )
    )
    lpboost(H, y, 0.3, 1e-7, MAX_COLUMNS)
    jax.vmap(lambda C: lpboost(H, y, C, 1e-6, MAX_COLUMNS))(shifted)
    assert compiles == []


def test_float32(problem):
    _, y, H = problem
    r = lpboost(H.astype(np.float32), y.astype(np.float32), 1.0, 1e-6, MAX_COLUMNS)
    assert r.q.dtype == jnp.float32
    np.testing.assert_allclose(float(r.objective), ref.lpboost_lp(H, y, 1.0).objective, rtol=1e-4)


def test_matrix_free_stumps_equal_all_materialized_stumps(problem):
    X, y, _ = problem
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    r = lpboost_stumps(stump_search(X), y, 1.0, 1e-6, 60)
    assert bool(r.converged)
    np.testing.assert_allclose(
        float(r.objective), ref.lpboost_lp(H_all[:, valid], y, 1.0).objective, rtol=1e-6
    )
    sel = np.asarray(r.selected)[: int(r.n_columns)]
    np.testing.assert_allclose(
        np.asarray(stumps_vote(r.stumps, r.q * r.signs, X)),
        H_all[:, sel] @ np.asarray(r.q)[: len(sel)],
        atol=1e-12,
    )
