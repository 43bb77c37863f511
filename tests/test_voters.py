"""Tests for pacbound.voters: stumps against NumPy, matrix-free search against brute force."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.spatial.distance import pdist

from pacbound import voters as V
from pacbound._src.voters.exact_search import (
    BestStump,
    best_stump_votes,
    padded_stumps,
    stump_edges,
    stump_scores,
)
from pacbound._src.voters.rbf import median_pairwise_distance

M, D = 17, 3  # one shape for the property tests: JAX compiles once


def _numpy_stumps(X, n_thresholds):
    """Independent reference: thresholds lo + k (hi - lo) / (n + 1), feature-major."""
    feats, thr = [], []
    for f in range(X.shape[1]):
        lo, hi = X[:, f].min(), X[:, f].max()
        for k in range(1, n_thresholds + 1):
            feats.append(f)
            thr.append(lo + k * (hi - lo) / (n_thresholds + 1))
    feats, thr = np.array(feats), np.array(thr)
    return feats, thr, np.where(X[:, feats] > thr, 1.0, -1.0)


def _brute_force_edges(X, a):
    """Every distinct-value midpoint of every feature, edges sum_i a_i h(x_i), by loops."""
    edges = []
    for f in range(X.shape[1]):
        u = np.unique(X[:, f])
        for t in (u[:-1] + u[1:]) / 2:
            edges.append(np.sum(a * np.where(X[:, f] > t, 1.0, -1.0)))
    return np.array(edges)


def test_stumps_match_numpy_reference():
    X = np.random.default_rng(0).normal(size=(20, 4))
    X[:, 2] = 3.0  # a constant feature gives constant -1 voters
    stumps = V.fit_stumps(X, n_thresholds=5)
    feats, thr, H_ref = _numpy_stumps(X, 5)
    np.testing.assert_array_equal(stumps.features, feats)
    assert stumps.features.dtype == jnp.int32
    np.testing.assert_allclose(stumps.thresholds, thr, rtol=1e-12)
    for dtype in (jnp.float32, jnp.bfloat16, jnp.int8):
        H = V.votes(stumps, X, dtype=dtype)
        assert H.dtype == dtype and H.shape == (20, 20)
        np.testing.assert_array_equal(np.asarray(H, np.float64), H_ref)
    np.testing.assert_array_equal(np.asarray(V.votes(stumps, X))[:, 10:15], -1.0)
    assert len(jax.tree.leaves(stumps)) == 2  # a pytree


def test_default_ten_thresholds_strictly_inside_and_self_complemented():
    X = np.random.default_rng(1).uniform(-2, 5, size=(30, 2))
    stumps = V.fit_stumps(X)
    assert stumps.thresholds.shape == (20,)
    t = np.asarray(stumps.thresholds).reshape(2, 10)
    assert np.all(t > X.min(0)[:, None]) and np.all(t < X.max(0)[:, None])
    H = V.votes(stumps, X, dtype=jnp.int8)
    Hc = V.self_complemented(H)
    assert Hc.shape == (30, 40) and Hc.dtype == jnp.int8
    np.testing.assert_array_equal(Hc[:, 20:], -H)


@given(
    X=hnp.arrays(np.float64, (M, D), elements=st.integers(-3, 3).map(float)),
    a=hnp.arrays(np.float64, (M,), elements=st.floats(-1, 1, allow_subnormal=False)),
)
def test_matrix_free_search_equals_brute_force(X, a):
    assume(np.any(X.max(0) > X.min(0)))
    search = V.stump_search(X)
    ref = _brute_force_edges(X, a)
    best = V.best_stump(search, a)
    np.testing.assert_allclose(best.score, np.max(np.abs(ref)), rtol=1e-9, atol=1e-12)
    # the returned stump and sign achieve the score
    col = best_stump_votes(best, X, dtype=jnp.float64)
    np.testing.assert_allclose(col @ a, best.score, rtol=1e-9, atol=1e-12)
    # all-threshold scores equal the materialized H.T @ a on valid positions, NaN on ties
    scores = np.asarray(stump_scores(search, a))
    valid = np.asarray(search.valid)
    stumps = V.Stumps(jnp.repeat(jnp.arange(D, dtype=jnp.int32), M - 1), search.thresholds.ravel())
    materialized = np.asarray(V.votes(stumps, X, dtype=jnp.float64)).T @ a
    np.testing.assert_allclose(scores[valid], materialized[valid.ravel()], atol=1e-12)
    assert np.isnan(scores[~valid]).all()
    np.testing.assert_allclose(np.sort(scores[valid]), np.sort(ref), atol=1e-12)


def test_batch_vmap_jit_and_feature_subset():
    rng = np.random.default_rng(2)
    X, A = rng.normal(size=(M, D)), rng.normal(size=(4, M))
    search = V.stump_search(X)
    loop = [V.best_stump(search, a) for a in A]
    for batch in (V.best_stump(search, A), jax.vmap(V.best_stump, (None, 0))(search, A)):
        for field in BestStump._fields:
            np.testing.assert_allclose(getattr(batch, field), [getattr(b, field) for b in loop])
    jitted = jax.jit(V.best_stump)(search, A[0])
    assert int(jitted.feature) == int(loop[0].feature)
    sub = stump_scores(search, A[0], jnp.array([2, 0]))
    full = stump_scores(search, A[0])
    np.testing.assert_allclose(sub, full[jnp.array([2, 0])])


def test_blocked_prefix_sums_and_padded_layout():
    """m = 300: two levels of blocks (19 blocks of 16), padding at both; against np.cumsum."""
    rng = np.random.default_rng(5)
    X, a = rng.normal(size=(300, 2)), rng.normal(size=300)
    search = V.stump_search(X)
    order = np.asarray(search.order)
    ref = a.sum() - 2 * np.cumsum(a[order], axis=1)[:, :-1]
    np.testing.assert_allclose(stump_scores(search, a), ref, rtol=0, atol=1e-12)
    padded, valid = np.asarray(stump_edges(search, a)), np.asarray(padded_stumps(search))
    assert padded.shape == valid.shape == (2, 304)  # a multiple of 16, >= m
    np.testing.assert_allclose(padded[:, :299], ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(valid[:, :299], search.valid)
    assert not valid[:, 299:].any()


def test_ties_and_adjacent_floats():
    lo = 1.0
    hi = np.nextafter(lo, 2.0)  # the midpoint rounds to an endpoint
    X = np.array([[lo], [lo], [hi], [hi], [hi]])
    search = V.stump_search(X)
    np.testing.assert_array_equal(search.valid, [[False, True, False, False]])
    t = float(search.thresholds[0, 1])
    assert lo <= t < hi
    best = V.best_stump(search, np.array([-1.0, -1.0, 1.0, 1.0, 1.0]))
    assert float(best.score) == 5.0 and float(best.sign) == 1.0
    np.testing.assert_array_equal(best_stump_votes(best, X), [-1, -1, 1, 1, 1])


def test_float32_stays_float32():
    X = np.random.default_rng(3).normal(size=(M, D)).astype(np.float32)
    search = V.stump_search(X)
    best = V.best_stump(search, np.ones(M, np.float32) / M)
    assert search.thresholds.dtype == jnp.float32 and best.score.dtype == jnp.float32
    assert V.tanh_normalize(V.fit_tanh_normalization(X), X).dtype == jnp.float32


@pytest.mark.parametrize(
    ("fn", "X", "match"),
    [
        (V.fit_stumps, [[0.0, np.nan], [1.0, 2.0]], "NaN"),
        (V.stump_search, [[0.0, np.inf], [1.0, 2.0]], "inf"),
        (V.fit_tanh_normalization, [[np.nan]], "non-finite"),
        (V.stump_search, [[1.0, 2.0]], "at least 2 examples"),
        (V.stump_search, [[1.0, 2.0], [1.0, 2.0]], "constant"),
        (V.fit_stumps, [1.0, 2.0], "2-D"),
    ],
)
def test_invalid_features_raise(fn, X, match):
    with pytest.raises(ValueError, match=match):
        fn(np.asarray(X))


def test_rbf_votes_match_numpy_and_sweep_gamma():
    rng = np.random.default_rng(4)
    C, X, yc = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), np.array([1, -1, 1, 1, -1.0])
    sq = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(V.rbf_votes(C, X, 0.7), np.exp(-sq / (2 * 0.7**2)), rtol=1e-10)
    signed = V.signed_rbf_votes(C, yc, X, 0.7)
    np.testing.assert_allclose(signed, yc * np.exp(-sq / (2 * 0.7**2)), rtol=1e-10)
    gammas = jnp.array([0.5, 1.0, 2.0])
    swept = jax.vmap(V.rbf_votes, (None, None, 0))(C, X, gammas)
    np.testing.assert_allclose(swept[2], V.rbf_votes(C, X, 2.0), rtol=1e-12)
    np.testing.assert_allclose(V.rbf_votes(X, X, 1.0).diagonal(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(median_pairwise_distance(X), np.median(pdist(X)), rtol=1e-10)


def test_tanh_normalization():
    rng = np.random.default_rng(5)
    X_train, X_test = rng.normal(3, 2, size=(40, 3)), rng.normal(3, 2, size=(9, 3))
    X_train[:, 1] = 7.0
    params = V.fit_tanh_normalization(X_train)
    mean, std = X_train.mean(0), np.where(X_train.std(0) > 0, X_train.std(0), 1.0)
    np.testing.assert_allclose(
        V.tanh_normalize(params, X_test), np.tanh((X_test - mean) / std), rtol=1e-12
    )
    Z = np.asarray(V.tanh_normalize(params, X_train))
    assert np.all(np.abs(Z) < 1) and np.all(Z[:, 1] == 0)
    wide = V.fit_tanh_normalization(X_train, spread=100.0)
    np.testing.assert_allclose(wide.scale, 100 * std)
