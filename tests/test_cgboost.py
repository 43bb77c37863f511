"""CG-Boost (the L2 soft-margin QP, roy2016 §6, constraint >= 1) against CVXOPT."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from pacbound.solvers.cgboost import cgboost, cgboost_stumps
from pacbound.voters import stump_search
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40
CS = (0.01, 0.3)


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    _, y, H = problem
    return {C: cgboost(H, y, C, 1e-6, MAX_COLUMNS) for C in CS}


@pytest.mark.parametrize("C", CS)
def test_matches_cvxopt_restricted_and_full(problem, solved, C):
    _, y, H = problem
    r = solved[C]
    assert bool(r.converged)
    q = np.asarray(r.q)
    cols = np.asarray(r.selected)[: int(r.n_columns)]
    full = ref.cgboost_qp(H, y, C)
    np.testing.assert_allclose(
        float(r.objective), ref.cgboost_qp(H[:, cols], y, C).objective, rtol=1e-8
    )
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    np.testing.assert_allclose(q, full.q, atol=1e-5)  # the QP's q is unique
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q @ q / 2 + C * slack.sum(), float(r.objective), rtol=1e-12)
    # dual constraint of CG-Boost: H^T diag(y) alpha <= q for every column
    edges = H.T @ (y * np.asarray(r.alpha))
    assert np.max(edges - q) <= 1e-6 and float(r.max_violation) <= 1e-6
    print(f"C={C}: {int((q > 0).sum())} non-zero weights of {H.shape[1]}")


def test_zero_weights_equal_slicing(problem):
    _, y, H = problem
    keep = np.arange(len(y)) % 4 != 2
    masked = cgboost(H, y, 0.1, 1e-6, MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = cgboost(H[keep], y[keep], 0.1, 1e-6, MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-8)
    np.testing.assert_allclose(np.asarray(masked.q), np.asarray(sliced.q), atol=1e-6)
    weighted = ref.cgboost_qp(H, y, 0.1, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


def test_vmap_over_C_and_folds_equals_single_runs_without_recompiling(problem, solved):
    _, y, H = problem
    Cs = jnp.array(CS)
    swept = jax.vmap(lambda C: cgboost(H, y, C, 1e-6, MAX_COLUMNS))(Cs)
    for i, C in enumerate(CS):
        np.testing.assert_allclose(swept.objective[i], solved[C].objective, rtol=1e-9)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 3 != np.arange(3)[:, None], jnp.float64)
    by_fold = jax.vmap(lambda w: cgboost(H, y, 0.1, 1e-6, MAX_COLUMNS, sample_weight=w))(folds)
    for i in range(3):
        single = cgboost(H, y, 0.1, 1e-6, MAX_COLUMNS, sample_weight=folds[i])
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
    cgboost(H, y, 0.2, 1e-7, MAX_COLUMNS)
    jax.vmap(lambda C: cgboost(H, y, C, 1e-6, MAX_COLUMNS))(shifted)
    assert compiles == []


def test_float32(problem):
    _, y, H = problem
    r = cgboost(H.astype(np.float32), y.astype(np.float32), 0.3, 1e-6, MAX_COLUMNS)
    assert r.q.dtype == jnp.float32
    np.testing.assert_allclose(float(r.objective), ref.cgboost_qp(H, y, 0.3).objective, rtol=1e-4)


def test_matrix_free_stumps_equal_all_materialized_stumps(problem):
    """CG-Boost's L2 optimum is dense (half the stumps): a smaller sample, 2 features."""
    X, y = problem[0][:40, :2], problem[1][:40]
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    r = cgboost_stumps(stump_search(X), y, 0.01, 1e-6, 90)
    assert bool(r.converged)
    full = ref.cgboost_qp(H_all[:, valid], y, 0.01)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
