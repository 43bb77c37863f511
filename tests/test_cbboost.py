"""CB-Boost / GB-CB-Boost (bauvin2020) against the independent NumPy reference and the paper.

Shapes are shared between tests so that few programs compile: dense problems are (60, 40),
stump problems use 50 examples and 3 features.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from pacbound import voters
from pacbound.cbound import empirical_cbound
from pacbound.margins import majority_vote_risk
from pacbound.solvers.cbboost import (
    cbboost,
    cbboost_stumps,
    gbcbboost,
    one_direction_step,
    weights_after,
)
from pacbound.voters import stumps_vote
from tests.reference.cbboost_numpy import cbboost_reference, gbcbboost_reference

T = 15


def _votes(seed, m=60, n=20, real_valued=False):
    """Self-complemented (m, 2n) votes: n // 4 informative ±1 voters, the rest noise."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=m)
    H = rng.choice([-1.0, 1.0], size=(m, n))
    for j in range(n // 4):
        H[:, j] = np.where(rng.uniform(size=m) < rng.uniform(0.2, 0.4), -y, y)
    if real_valued:
        H = H * rng.uniform(0.1, 1.0, size=(m, n))
    return np.concatenate([H, -H], axis=1), y


def _stump_problem(seed=0, m=50):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 + 0.4 * rng.standard_normal(m) > 0.4, 1.0, -1.0)
    search = voters.stump_search(X)
    f, k = np.nonzero(np.asarray(search.valid))
    stumps = voters.Stumps(jnp.asarray(f, jnp.int32), search.thresholds[f, k])
    H = voters.self_complemented(voters.votes(stumps, X, dtype=jnp.float64))
    return X, y, search, np.asarray(H), f * (m - 1) + k


def _assert_matches(result, ref, atol=1e-6):
    np.testing.assert_array_equal(np.asarray(result.selected), ref["selected"])
    for key in ("cbounds", "decreases", "error_bounds"):
        np.testing.assert_allclose(getattr(result, key), ref[key], rtol=0, atol=atol, err_msg=key)
    np.testing.assert_allclose(result.alphas, ref["alphas"], rtol=1e-6)
    np.testing.assert_allclose(result.q, ref["weights"], rtol=0, atol=atol)


@pytest.mark.parametrize("seed, real_valued", [(0, False), (1, False), (2, True)])
@pytest.mark.parametrize("allow_reselect", [True, False])
def test_cbboost_matches_reference(seed, real_valued, allow_reselect):
    H, y = _votes(seed, real_valued=real_valued)
    result = cbboost(H, y, T, allow_reselect=allow_reselect)
    ref = cbboost_reference(H, y, T, allow_reselect=allow_reselect)
    _assert_matches(result, ref)
    sel = ref["selected"][ref["selected"] >= 0]
    assert (len(set(sel)) < len(sel)) == allow_reselect  # re-selections are exercised


@pytest.mark.parametrize("seed", [0, 3])
def test_gbcbboost_matches_reference(seed):
    H, y = _votes(seed)
    _assert_matches(gbcbboost(H, y, T), gbcbboost_reference(H, y, T))


def test_stops_cleanly_when_no_direction_decreases():
    H, y = _votes(4, n=3)
    H = np.concatenate([H, np.zeros((60, 34))], axis=1)  # zero voters: gamma = 0, never valid
    result = cbboost(H, y, T, allow_reselect=False)
    _assert_matches(result, cbboost_reference(H, y, T, allow_reselect=False))
    idle = np.asarray(result.selected) < 0
    assert idle[-1] and np.all(idle[np.argmax(idle) :])  # once idle, idle for good
    stop = np.argmax(idle)
    assert np.all(np.asarray(result.decreases)[stop:] == 0)
    assert np.all(np.asarray(result.cbounds)[stop:] == result.cbounds[stop - 1])


@pytest.mark.parametrize("gradient", [False, True])
def test_property1_monotone_and_error_bound(gradient):
    H, y = _votes(5)
    result = cbboost(H, y, T, gradient=gradient)
    cbs = np.asarray(result.cbounds)
    assert np.all(np.diff(cbs) <= 1e-12)
    np.testing.assert_allclose(result.decreases[1:], cbs[:-1] - cbs[1:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.error_bounds, cbs, rtol=0, atol=1e-12)  # Corollary 2
    prefixes = jax.vmap(lambda t: weights_after(result, t))(jnp.arange(1, T + 1))
    risks = jax.vmap(lambda q: majority_vote_risk(H, y, q))(prefixes)
    bounds = jax.vmap(lambda q: empirical_cbound(H, y, q))(prefixes)
    np.testing.assert_allclose(bounds, cbs, rtol=0, atol=1e-12)  # the prefix helper
    assert np.all(np.asarray(risks) <= np.asarray(result.error_bounds) + 1e-12)
    np.testing.assert_allclose(prefixes[-1], result.q)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.1, 1.0))
def test_one_direction_step_is_the_line_minimum(seed, scale):
    """Theorem 3's step minimizes C(F + a h) over a >= 0; Property 1 is the exact decrease."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], 40)
    F = np.where(rng.uniform(size=40) < 0.3, -y, y) * rng.uniform(0.2, 1, 40)
    h = scale * rng.choice([-1.0, 1.0], 40) * np.where(rng.uniform(size=40) < 0.5, 1, 0.5)

    def c(a):
        v = F + a * h
        return 1 - np.mean(y * v) ** 2 / np.mean(v * v) if np.mean(y * v) > 0 else 1.0

    g_f, nu_f, g_h, nu_h, tau = (
        np.mean(y * F),
        np.mean(F * F),
        np.mean(y * h),
        np.mean(h * h),
        F @ h / 40,
    )
    s = one_direction_step(g_f, nu_f, g_h, nu_h, tau)
    line = minimize_scalar(c, bounds=(0, 1e3), method="bounded", options={"xatol": 1e-12})
    best = min(line.fun, c(0.0), *(c(a) for a in np.geomspace(1e-6, 1e6, 600)))
    if bool(s.valid):
        assert c(float(s.step)) <= best + 1e-10
        np.testing.assert_allclose(float(s.cbound), c(float(s.step)), atol=1e-12)
        np.testing.assert_allclose(float(s.decrease), c(0.0) - c(float(s.step)), atol=1e-12)
        return
    assert float(s.decrease) == 0 and float(s.step) == 0  # (g_h ~ 1e-17 is a rounded 0 margin)
    if g_f <= 0 or g_h <= 1e-12:  # outside Thm 3 (C(F) is the guarded 1): only "no step"
        return
    if g_f * nu_h - g_h * tau > 0:  # numerator <= 0: C grows along a >= 0
        assert best >= c(0.0) - 1e-9
    else:  # no finite minimizer: C falls towards C(h) = 1 - g_h^2 / nu_h, a -> inf
        assert best >= 1 - g_h**2 / nu_h - 1e-9


def test_int8_equals_float32_and_float32_close_to_float64():
    H, y = _votes(6)
    y32 = jnp.asarray(y, jnp.float32)
    r32 = cbboost(jnp.asarray(H, jnp.float32), y32, T)
    r8 = cbboost(jnp.asarray(H, jnp.int8), y32, T)
    r64 = cbboost(H, y, T)
    assert r32.cbounds.dtype == r8.cbounds.dtype == jnp.float32 and r64.q.dtype == jnp.float64
    np.testing.assert_array_equal(r8.selected, r32.selected)
    np.testing.assert_array_equal(r32.selected, r64.selected)
    for a, b, tol in ((r8, r32, 1e-6), (r32, r64, 1e-5)):
        for key in ("q", "alphas", "cbounds", "decreases", "error_bounds"):
            np.testing.assert_allclose(getattr(a, key), getattr(b, key), atol=tol, err_msg=key)


def test_int8_digit_product():
    """int8 votes: a in base-128 int8 digits, exact int32 sums; the error bound of the digits."""
    from pacbound.solvers.edges import column_edges, int8_digits, prepare_votes

    rng = np.random.default_rng(9)
    H = rng.choice([-1, 0, 1], size=(60, 40)).astype(np.int8)
    a = rng.standard_normal(60) * np.exp(rng.uniform(-15, 2, 60))
    for dtype, n_digits, bits in ((jnp.float64, 8, 55), (jnp.float32, 4, 27)):
        aj = jnp.asarray(a, dtype)
        digits, scale = int8_digits(aj, n_digits)
        assert digits.dtype == jnp.int8 and np.abs(np.asarray(digits)).max() <= 64
        back = np.asarray(digits, np.float64) @ 128.0 ** -np.arange(n_digits) * float(scale)
        exact = np.asarray(aj, np.float64)
        np.testing.assert_array_less(np.abs(back - exact), 2.0**-bits * np.abs(exact).max())
        edges = column_edges(prepare_votes(H, dtype), aj)
        assert edges.dtype == dtype
        limit = 60 * 2.0**-bits * np.abs(exact).max() + 4 * jnp.finfo(dtype).eps * np.abs(a).sum()
        np.testing.assert_allclose(edges, H.T.astype(np.float64) @ exact, rtol=0, atol=limit)


@pytest.mark.parametrize("gradient", [False, True])
def test_matrix_free_equals_materialized_stumps(gradient):
    X, y, search, H, position = _stump_problem()
    dense = cbboost(H, y, 12, gradient=gradient)
    free = cbboost_stumps(search, y, 12, gradient=gradient)
    n = H.shape[1] // 2
    sel = np.asarray(dense.selected)
    np.testing.assert_array_equal(free.selected, position[sel % n])
    np.testing.assert_array_equal(free.signs, np.where(sel < n, 1, -1))
    for key in ("alphas", "cbounds", "decreases", "error_bounds"):
        np.testing.assert_allclose(getattr(free, key), getattr(dense, key), atol=1e-10)
    np.testing.assert_allclose(
        stumps_vote(free.stumps, free.q * free.signs, X), H @ dense.q, atol=1e-12
    )
    np.testing.assert_allclose(
        stumps_vote(free.stumps, weights_after(free, 5) * free.signs, X),
        H @ weights_after(dense, 5),
        atol=1e-12,
    )


def test_vmap_over_folds_equals_one_fold_at_a_time():
    H, y = _votes(7)
    masks = np.ones((3, 60))
    for i in range(3):
        masks[i, i::3] = 0  # 3-fold CV training masks
    fit = jax.jit(lambda w: cbboost(H, y, T, sample_weight=w))
    folds = jax.vmap(fit)(masks)
    for i in range(3):
        one = fit(masks[i])
        for key in ("q", "cbounds", "alphas", "decreases"):
            np.testing.assert_allclose(getattr(folds, key)[i], getattr(one, key), atol=1e-12)
    sub = cbboost(H[masks[2] > 0], y[masks[2] > 0], T)  # weights 0/1 == dropping the rows
    np.testing.assert_allclose(sub.cbounds, folds.cbounds[2], atol=1e-12)
    np.testing.assert_array_equal(sub.selected, folds.selected[2])
    pair = jax.vmap(cbboost, in_axes=(0, 0, None))(np.stack([H, -H]), np.stack([y, -y]), T)
    np.testing.assert_allclose(pair.cbounds[0], pair.cbounds[1], atol=1e-12)
    _, ys, search, *_ = _stump_problem()
    fit_free = jax.jit(lambda w: cbboost_stumps(search, ys, 6, sample_weight=w))
    free = jax.vmap(fit_free)(masks[:, :50])
    np.testing.assert_allclose(free.cbounds[2], fit_free(masks[2, :50]).cbounds, atol=1e-12)


def test_numeric_hyperparameters_do_not_recompile():
    from pacbound.solvers.cbboost import _cbboost_dense

    H, y = _votes(8)
    base = cbboost(H, y, T)
    size = _cbboost_dense._cache_size()
    stopped = cbboost(H, y, T, tol=1.0)  # every round's decrease is below 1
    once = cbboost(H, y, T, allow_reselect=False)
    assert _cbboost_dense._cache_size() == size
    assert np.all(np.asarray(stopped.selected)[1:] == -1)
    assert np.all(np.asarray(stopped.cbounds) == base.cbounds[0])
    sel = np.asarray(once.selected)
    assert len(set(sel[sel >= 0])) == np.sum(sel >= 0)


Y4 = np.array([1.0, -1, 1, -1])  # both classes: each case below has one defect


@pytest.mark.parametrize(
    "H, y, rounds, match",
    [
        (np.ones((4, 3)), np.array([0, 1, 0, 1.0]), 3, "labels"),
        (np.ones((4, 3)), np.ones(4), 3, "both classes"),
        (np.ones((4, 3)), np.ones(5), 3, "shape"),
        (np.full((4, 3), np.nan), Y4, 3, "NaN"),
        (2 * np.ones((4, 3)), Y4, 3, r"\[-1, 1\]"),
        (np.ones((4, 3)), Y4, 0, "n_rounds"),
        (np.ones(4), Y4, 3, "2-D"),
    ],
)
def test_validation(H, y, rounds, match):
    with pytest.raises(ValueError, match=match):
        cbboost(H, y, rounds)


def test_validation_of_weights_and_tol():
    with pytest.raises(ValueError, match="sample_weight"):
        cbboost(np.ones((4, 3)), Y4, 2, sample_weight=-np.ones(4))
    with pytest.raises(ValueError, match="tol"):
        cbboost(np.ones((4, 3)), Y4, 2, tol=-1.0)
