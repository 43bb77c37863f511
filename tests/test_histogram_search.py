"""Tests for pacbound._src.voters.histogram (against NumPy brute force and the exact search), and
for the exact search's host-side sort (against the jitted sort it replaced)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pacbound import voters as V
from pacbound._src.voters import exact_search as ss
from pacbound._src.voters import histogram as hs
from pacbound._src.voters.exact_search import stump_scores

M, D, BINS = 40, 4, 8  # one shape for most tests: JAX compiles once per shape


def _data(dtype, seed=0, m=M):
    """Continuous, tied, missing-valued and constant features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, D))
    X[:, 1] = np.round(X[:, 1] * 2)  # ties: few distinct values
    X[rng.random(m) < 0.2, 2] = np.nan  # missing values
    X[:, 3] = 1.5  # constant: no stump
    return X.astype(dtype), rng.normal(size=m).astype(dtype)


def _numpy_edges(X, thresholds, a):
    """Brute force: every candidate's votes (NaN > t is False) times ``a``, in float64."""
    d, p = thresholds.shape
    edges = np.empty((d, p))
    for f in range(d):
        H = np.where(X[:, f, None] > thresholds[f][None, :], 1.0, -1.0)
        edges[f] = H.T @ a.astype(np.float64)
    return edges


def _numpy_mask(X, thresholds):
    """A candidate is a stump iff training examples lie on both of its sides."""
    above = X[:, :, None] > thresholds[None]
    return above.any(axis=0) & ~above.all(axis=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_edges_equal_numpy_brute_force_with_missing_values(dtype):
    X, a = _data(dtype)
    search = hs.histogram_search(X, BINS)
    t = np.asarray(search.thresholds)
    assert search.codes.dtype == jnp.uint8 and search.codes.shape == (D, M)
    assert t.dtype == dtype and t.shape == (D, BINS - 1) and search.n_examples == M
    edges = search.candidate_edges(a)
    assert edges.dtype == dtype and edges.shape == (D, BINS - 1)
    np.testing.assert_array_equal(search.candidate_mask(), _numpy_mask(X, t))
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(edges, _numpy_edges(X, t, a), rtol=rtol, atol=rtol * M)
    assert t[2, 0] == -np.inf and np.all(np.asarray(search.codes)[2][np.isnan(X[:, 2])] == 0)
    assert not np.asarray(search.candidate_mask())[3].any()  # the constant feature


@given(
    X=hnp.arrays(
        np.float64, (M, D), elements=st.sampled_from([-2.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.nan])
    ),
    a=hnp.arrays(np.float64, (M,), elements=st.floats(-1, 1, allow_subnormal=False)),
    max_bins=st.sampled_from([2, 3, 8]),
)
def test_property_edges_bins_and_votes(X, a, max_bins):
    X[:, 0] = np.arange(M)  # one feature always splits
    search = hs.binned_search(hs.bin_features(X, max_bins))
    t = np.asarray(search.thresholds)
    codes = np.asarray(search.codes)
    for f in range(D):  # equal values share a bin; NaN alone has the lowest code
        missing = np.isnan(X[:, f])
        for v in np.unique(X[~missing, f]):
            assert np.unique(codes[f][X[:, f] == v]).size == 1
        assert np.all(codes[f][missing] == 0) and np.all(
            codes[f][~missing] > 0 if missing.any() else True
        )
        assert np.unique(codes[f]).size <= max_bins
    np.testing.assert_array_equal(search.candidate_mask(), _numpy_mask(X, t))
    mask = np.asarray(search.candidate_mask())
    ref = _numpy_edges(X, t, a)
    np.testing.assert_allclose(np.asarray(search.candidate_edges(a))[mask], ref[mask], atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_enough_bins_give_the_exact_search_stumps(dtype):
    X, a = _data(dtype)
    X = X[:, [0, 1, 3]]
    X[:3, 1] = [-0.0, 0.0, -0.0]  # signed zeros are one value
    X[:3, 2] = [2e-38, 3e-38, 0.0]  # midpoints below float32's tiny: flushed to zero in XLA
    exact = V.stump_search(X)
    search = hs.histogram_search(X, 256)
    valid, mask = np.asarray(exact.valid), np.asarray(search.candidate_mask())
    t_exact, t_hist = np.asarray(exact.thresholds)[valid], np.asarray(search.thresholds)[mask]
    np.testing.assert_array_equal(t_hist, t_exact)  # same stumps, same order
    np.testing.assert_array_equal(np.nonzero(valid)[0], np.nonzero(mask)[0])
    e_exact = np.asarray(stump_scores(exact, a))[valid]
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(search.candidate_edges(a))[mask], e_exact, rtol=rtol,
                               atol=rtol * M)  # fmt: skip


def test_subsampled_bins_come_from_the_sample_and_stay_exact_on_few_values():
    rng = np.random.default_rng(3)
    m = 400
    X = np.stack([rng.normal(size=m), rng.integers(0, 5, m) * 1.0], axis=1)
    rows = np.sort(np.random.default_rng(1).choice(m, 50, replace=False))  # the sample's rows
    X[np.setdiff1d(np.arange(m), rows)[7], 1] = 7.5  # a value the sample misses
    binning = hs.bin_features(X, 16, sample_size=50, seed=1)
    t = np.asarray(binning.thresholds)
    sample = np.sort(X[rows, 0])
    for boundary in t[0][np.isfinite(t[0])]:  # every boundary lies between two sample values
        k = np.searchsorted(sample, boundary, side="right")
        assert 0 < k < 50 and sample[k - 1] <= boundary < sample[k]
    exact = V.stump_search(X[:, 1:])
    np.testing.assert_array_equal(
        t[1][np.isfinite(t[1])], np.asarray(exact.thresholds)[exact.valid]
    )
    assert np.array_equal(np.asarray(binning.counts).sum(axis=1), [m, m])


def test_candidate_votes_and_stumps_agree_with_voters_votes():
    X, _ = _data(np.float32)
    X[:, 3] = 0.0
    X[:4, 3] = [1e-45, -1e-45, -0.0, 2e-38]  # subnormals compare as zeros in XLA
    search = hs.histogram_search(X, BINS)
    index = np.arange(D * (BINS - 1))
    stumps = search.candidate_voters(index)
    assert stumps.features.dtype == jnp.int32
    np.testing.assert_array_equal(stumps.features, index // (BINS - 1))
    H = np.asarray(V.votes(stumps, X, dtype=jnp.float32))
    votes = jax.vmap(lambda i: search.candidate_votes(i, jnp.float32))(index)
    np.testing.assert_array_equal(np.asarray(votes).T, H)  # every candidate, stump or not
    assert search.candidate_votes(5, jnp.int8).dtype == jnp.int8
    assert np.asarray(search.candidate_mask())[3].sum() == 1  # 0 | 2e-38: the subnormals are zeros
    X_new = np.full((2, D), np.nan, np.float32)  # unseen missing values vote as the lowest bin
    np.testing.assert_array_equal(V.votes(stumps, X_new), -1)


def test_jit_vmap_grad_and_blocks():
    X, a = _data(np.float32)
    search = hs.histogram_search(X, BINS)
    A = np.random.default_rng(1).normal(size=(3, M)).astype(np.float32)
    loop = np.stack([jax.jit(hs.histogram_edges)(search, x) for x in A])
    np.testing.assert_allclose(jax.vmap(search.candidate_edges)(A), loop, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda s, x: s.candidate_edges(x))(search, A[0]), loop[0])
    grad = jax.grad(lambda x: search.candidate_edges(x)[1, 2])(a)  # edges are linear in a
    np.testing.assert_array_equal(grad, search.candidate_votes(1 * (BINS - 1) + 2))
    codes = np.asarray(search.codes)
    ref = np.stack([np.bincount(c, a.astype(np.float64), minlength=BINS) for c in codes])
    for chunk in (7, 40, 64):  # blocks plus a remainder, one exact block, no full block
        for skewed in (None, [True, False, True, True]):  # interleaved copies: the same sums
            hists = hs.histograms(codes, a, BINS, chunk=chunk, skewed=skewed)
            np.testing.assert_allclose(hists, ref, atol=1e-5)
    share = np.stack([np.bincount(c, minlength=BINS) for c in codes]) / M
    np.testing.assert_array_equal(hs.skewed_features(search.counts), (share**2).sum(1) > 1 / 32)


@pytest.mark.parametrize(
    ("X", "max_bins", "match"),
    [
        ([[0.0, np.inf], [1.0, 2.0]], 8, "infinite entries, first at row 0, feature 1"),
        ([[0.0, 1.0], [-np.inf, 2.0]], 8, "infinite"),
        ([[0.0, 1.0], [1.0, 2.0]], 1, "max_bins"),
        ([[0.0, 1.0], [1.0, 2.0]], 257, "max_bins"),
        ([[0.0, 1.0], [1.0, 2.0]], 2.5, "max_bins"),
        ([1.0, 2.0], 8, "2-D"),
        (np.zeros((0, 2)), 8, "non-empty"),
        ([["a", "b"]], 8, "numeric"),
        ([[1.0, 2.0], [1.0, 2.0]], 8, "constant"),
        ([[np.nan, 2.0], [np.nan, 2.0]], 8, "constant"),
    ],
)
def test_bad_inputs(X, max_bins, match):
    with pytest.raises(ValueError, match=match):
        hs.histogram_search(np.asarray(X), max_bins)


def test_bad_sample_size():
    with pytest.raises(ValueError, match="sample_size"):
        hs.bin_features(np.ones((3, 2)), 8, sample_size=1)


# ------------------------------------------------- the exact search's host-side sort
@jax.jit
def _jitted_sort(X):
    """The former ``stump_search`` preparation: XLA's stable argsort of every feature."""
    order = jnp.argsort(X.T, axis=1, stable=True).astype(jnp.int32)
    v = jnp.take_along_axis(X.T, order, axis=1)
    lo, hi = v[:, :-1], v[:, 1:]
    mid = lo + (hi - lo) / 2
    return order, jnp.where(mid < hi, mid, lo), hi > lo


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_sort_equals_the_jitted_sort(dtype):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(M, D)).astype(dtype)
    X[:, 1] = np.round(X[:, 1])  # ties keep the examples' order (stable)
    X[:6, 2] = [0.0, -0.0, 0.0, -0.0, 1e-45, -1e-45]  # signed zeros tie; subnormals
    X[:, 3] = rng.choice(np.array([-3.0, np.finfo(dtype).max, -np.finfo(dtype).max]), M)
    search = ss.stump_search(X)
    order, thresholds, valid = _jitted_sort(jnp.asarray(X))
    np.testing.assert_array_equal(search.order, order)
    assert search.order.dtype == jnp.int32 and search.thresholds.dtype == dtype
    np.testing.assert_array_equal(
        np.asarray(search.thresholds).view(f"u{X.itemsize}"),
        np.asarray(thresholds).view(f"u{X.itemsize}"),  # bit for bit, signed zeros included
    )
    np.testing.assert_array_equal(search.valid, valid)
