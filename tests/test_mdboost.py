"""MDBoost (roy2016 §6 primal on the normalized margin) by column generation, against CVXOPT."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from pacbound.margins import margin_moments
from pacbound.solvers.mdboost import mdboost, mdboost_stumps
from pacbound.voters import stump_search
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40
DS = (1.0, 30.0)


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    _, y, H = problem
    return {D: mdboost(H, y, D, 1e-6, MAX_COLUMNS) for D in DS}


@pytest.mark.parametrize("D", DS)
def test_matches_cvxopt_restricted_and_full(problem, solved, D):
    _, y, H = problem
    r = solved[D]
    assert bool(r.converged)
    q = np.asarray(r.q)
    cols = np.asarray(r.selected)[: int(r.n_columns)]
    full = ref.mdboost_qp(H, y, D)
    np.testing.assert_allclose(
        float(r.objective), ref.mdboost_qp(H[:, cols], y, D).objective, rtol=1e-8
    )
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    # roy2016 §6: the objective is m [D m / (2 (m - 1)) (mu2 - mu1^2) - mu1]
    m = len(y)
    mu1, mu2 = (float(t) for t in margin_moments(H, y, q))
    np.testing.assert_allclose(
        m * (D * m / (2 * (m - 1)) * (mu2 - mu1**2) - mu1), float(r.objective), rtol=1e-10
    )
    assert ref.max_violation(H, y, r.alpha, float(r.nu)) <= 1e-6
    assert float(r.max_violation) <= 1e-6
    print(f"D={D}: {int((q > 0).sum())} non-zero weights of {H.shape[1]}")


def test_zero_weights_equal_slicing(problem):
    _, y, H = problem
    keep = np.arange(len(y)) % 6 != 0
    masked = mdboost(H, y, 10.0, 1e-6, MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = mdboost(H[keep], y[keep], 10.0, 1e-6, MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(masked.q), np.asarray(sliced.q), atol=1e-7)
    weighted = ref.mdboost_qp(H, y, 10.0, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


def test_vmap_over_D_and_folds_equals_single_runs_without_recompiling(problem, solved):
    _, y, H = problem
    Ds = jnp.array(DS)
    swept = jax.vmap(lambda D: mdboost(H, y, D, 1e-6, MAX_COLUMNS))(Ds)
    for i, D in enumerate(DS):
        np.testing.assert_allclose(swept.objective[i], solved[D].objective, rtol=1e-10)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 3 != np.arange(3)[:, None], jnp.float64)
    by_fold = jax.vmap(lambda w: mdboost(H, y, 10.0, 1e-6, MAX_COLUMNS, sample_weight=w))(folds)
    for i in range(3):
        single = mdboost(H, y, 10.0, 1e-6, MAX_COLUMNS, sample_weight=folds[i])
        np.testing.assert_allclose(by_fold.objective[i], single.objective, rtol=1e-10)
    shifted = Ds * 2
    compiles = []
    monitoring.register_event_duration_secs_listener(
        lambda event, _, **kw: (
            compiles.append(event)
            if event == "/jax/core/compile/backend_compile_duration"
            else None
        )
    )
    mdboost(H, y, 3.0, 1e-7, MAX_COLUMNS)
    jax.vmap(lambda D: mdboost(H, y, D, 1e-6, MAX_COLUMNS))(shifted)
    assert compiles == []


def test_float32_and_checks(problem):
    _, y, H = problem
    r = mdboost(H.astype(np.float32), y.astype(np.float32), 30.0, 1e-6, MAX_COLUMNS)
    assert r.q.dtype == jnp.float32
    np.testing.assert_allclose(float(r.objective), ref.mdboost_qp(H, y, 30.0).objective, rtol=1e-4)
    with pytest.raises(ValueError, match="D"):
        mdboost(H, y, 0.0)
    with pytest.raises(ValueError, match="sum"):
        mdboost(H, y, 1.0, sample_weight=np.eye(len(y))[0])


def test_matrix_free_stumps_equal_all_materialized_stumps(problem):
    X, y, _ = problem
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    r = mdboost_stumps(stump_search(X), y, 10.0, 1e-6, 60)
    assert bool(r.converged)
    full = ref.mdboost_qp(H_all[:, valid], y, 10.0)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
