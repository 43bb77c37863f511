"""VEB-Boost (shivaswamy Fig. 1) against the independent NumPy reference and the paper."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound.solvers.adaboost import adaboost
from pacbound.solvers.vebboost import _vebboost_dense, veb_cost, vebboost, vebboost_stumps
from pacbound.voters import stump_search, stumps_vote
from tests.reference.boosting_numpy import vebboost_cost, vebboost_reference
from tests.test_adaboost import _votes, _weights, all_stumps, fold_masks

T = 25
LAMBDAS = (0.0, 0.3, 1.0)
Y4 = np.array([1.0, -1, 1, -1])  # both classes


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference_round_by_round(seed):
    Hc, y = _votes(seed)
    for lam in LAMBDAS:
        res = vebboost(Hc, y, lam, T)
        ref = vebboost_reference(Hc, y, lam, T)
        np.testing.assert_array_equal(res.selected, ref["selected"])
        np.testing.assert_allclose(res.alphas, ref["alphas"], rtol=1e-12)
        np.testing.assert_allclose(res.costs, ref["costs"], rtol=1e-12)
        f = Hc @ np.bincount(np.maximum(res.selected, 0), np.asarray(res.alphas), Hc.shape[1])
        np.testing.assert_allclose(f, ref["f"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res.q, np.bincount(ref["selected"][ref["selected"] >= 0],
                                   ref["alphas"][ref["selected"] >= 0], Hc.shape[1])
                                   / ref["alphas"].sum(), rtol=1e-12)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cost_decreases_every_round_theorem_2(dtype):
    """Theorem 2: Lemma 1's cost bounds J(f + alpha G) / W^2 and is tight at alpha = 0, so
    each round's minimizer never increases the cost of the first display."""
    Hc, y = _votes(3)
    for lam in LAMBDAS:
        res = vebboost(Hc.astype(dtype), y.astype(dtype), lam, T)
        costs = np.asarray(res.costs, np.float64)
        assert costs[0] == pytest.approx(len(y) ** 2)  # f = 0
        tol = 1e-12 if dtype == np.float64 else 1e-5
        assert np.all(np.diff(costs) <= tol * costs[:-1]), lam
        assert costs[-1] < 0.9 * costs[0]
        f = Hc @ np.bincount(np.maximum(res.selected, 0), np.asarray(res.alphas, float), 24)
        assert float(veb_cost(y, f, lam)) == pytest.approx(vebboost_cost(f, y, lam), rel=1e-12)


def test_step_is_lemma_1_minimizer_not_the_printed_ratio():
    """Fig. 1 prints alpha = ln(U_J / U_I) / 4, negative for any useful learner; Lemma 1's
    cost U_I e^{-2a} + U_J e^{2a} is minimized by ln(U_I / U_J) / 4 > 0."""
    Hc, y = _votes(0)
    m, lam = len(y), 0.3
    res = vebboost(Hc, y, lam, 1)
    w = np.full(m, 1.0 / m)
    u = lam * m * w**2 + (1 - lam) * w
    j = int(np.argmax((u * y) @ Hc))
    right, wrong = u[Hc[:, j] == y].sum(), u[Hc[:, j] != y].sum()
    assert int(res.selected[0]) == j and wrong < right
    assert float(res.alphas[0]) == pytest.approx(0.25 * np.log(right / wrong), rel=1e-13)
    grid = np.linspace(-1, 1, 2001)
    lemma1 = right * np.exp(-2 * grid) + wrong * np.exp(2 * grid)
    assert abs(grid[np.argmin(lemma1)] - float(res.alphas[0])) <= 1e-3


def test_lambda_zero_is_half_step_adaboost():
    Hc, y = _votes(1)
    ada, v0 = adaboost(Hc, y, 1), vebboost(Hc, y, 0.0, 1)
    assert int(ada.selected[0]) == int(v0.selected[0])
    assert float(v0.alphas[0]) == pytest.approx(float(ada.alphas[0]) / 2, rel=1e-13)


def test_vmap_over_lambda_equals_jit_without_recompiling():
    Hc, y = _votes(2)
    lams = jnp.array(LAMBDAS)
    batched = jax.vmap(lambda lam: vebboost(Hc, y, lam, T))(lams)
    vebboost(Hc, y, 0.5, T)
    compiled = _vebboost_dense._cache_size()
    for i, lam in enumerate(LAMBDAS):
        single = vebboost(Hc, y, lam, T)
        np.testing.assert_array_equal(batched.selected[i], single.selected)
        np.testing.assert_allclose(batched.alphas[i], single.alphas, rtol=1e-13)
        np.testing.assert_allclose(batched.costs[i], single.costs, rtol=1e-13)
    assert _vebboost_dense._cache_size() == compiled


def test_stumps_equal_dense_over_all_thresholds():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 1] + X[:, 2] ** 2 + rng.normal(0, 0.7, 30) > 1, 1.0, -1.0)
    search, H_all, index = all_stumps(X)
    dense = vebboost(H_all, y, 0.5, T)
    res = vebboost_stumps(search, y, 0.5, T)
    np.testing.assert_array_equal(res.selected, index[np.asarray(dense.selected)])
    np.testing.assert_allclose(res.alphas, dense.alphas, rtol=1e-12)
    np.testing.assert_allclose(res.costs, dense.costs, rtol=1e-12)
    np.testing.assert_allclose(
        stumps_vote(res.stumps, res.q * res.signs, X), H_all @ dense.q, rtol=1e-12, atol=1e-15
    )


def test_break_and_perfect_learner():
    Hc, y = _votes(0)
    useless = -np.abs(Hc) * y[:, None]  # every column is wrong everywhere: alpha < 0, break
    res = vebboost(useless, y, 0.5, 4)
    assert np.all(np.asarray(res.selected) == -1) and np.all(np.asarray(res.q) == 0)
    assert np.all(np.asarray(res.costs) == len(y) ** 2)
    assert vebboost_reference(useless, y, 0.5, 4)["stop_reason"] == "negative"
    perfect = np.column_stack([Hc[:, :5], y, Hc[:, 5:]])
    res = vebboost(perfect, y, 0.5, 4)  # alpha = ln(U_I / tiny) / 4: the vote is column 5
    assert np.array_equal(res.selected, [5, -1, -1, -1]) and np.isfinite(float(res.alphas[0]))
    assert np.array_equal(res.q, np.eye(perfect.shape[1])[5])
    assert float(res.costs[-1]) < 1e-100
    ref = vebboost_reference(perfect, y, 0.5, 4)  # the reference stops without the round
    assert ref["stop_reason"] == "perfect" and ref["perfect_learner"] == 5


def test_sample_weight_repeats_examples():
    """Integer weights are Fig. 1 and the cost on the repeated sample (zeros: sliced away)."""
    Hc, y = _votes(4)
    v, rep = _weights(y)
    for lam in LAMBDAS:
        res = vebboost(Hc, y, lam, T, sample_weight=v)
        ref = vebboost_reference(Hc[rep], y[rep], lam, T)
        np.testing.assert_array_equal(res.selected, ref["selected"])
        np.testing.assert_allclose(res.alphas, ref["alphas"], rtol=1e-12)
        np.testing.assert_allclose(res.costs, ref["costs"], rtol=1e-12)
    half = vebboost(Hc, y, 0.3, T, sample_weight=v / 2)  # only the ratios matter
    np.testing.assert_allclose(half.q, vebboost(Hc, y, 0.3, T, sample_weight=v).q, rtol=1e-12)


def test_vmap_over_fold_masks_and_lambda_equals_single_runs():
    Hc, y = _votes(2)
    folds = fold_masks(len(y))
    run = lambda lam, v: vebboost(Hc, y, lam, T, sample_weight=v)  # noqa: E731
    batched = jax.vmap(run)(jnp.array(LAMBDAS), folds)
    for i, lam in enumerate(LAMBDAS):
        single = run(lam, folds[i])
        np.testing.assert_array_equal(batched.selected[i], single.selected)
        np.testing.assert_allclose(batched.costs[i], single.costs, rtol=1e-12)


def test_stumps_sample_weight_repeats_examples():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 1] + X[:, 2] ** 2 + rng.normal(0, 0.7, 30) > 1, 1.0, -1.0)
    v, rep = _weights(y, low=1)  # no zero: the repeated sample has the same thresholds
    res = vebboost_stumps(stump_search(X), y, 0.5, T, sample_weight=v)
    ref = vebboost_stumps(stump_search(X[rep]), y[rep], 0.5, T)
    np.testing.assert_array_equal(res.stumps.thresholds, ref.stumps.thresholds)
    np.testing.assert_allclose(res.alphas, ref.alphas, rtol=1e-12)
    np.testing.assert_allclose(res.costs, ref.costs, rtol=1e-12)


@pytest.mark.parametrize(
    ("H", "y", "lam", "rounds", "match"),
    [
        (np.ones((4, 2)), Y4, 1.5, 3, r"lam must .*\[0, 1\]"),
        (np.ones((4, 2)), Y4, -0.1, 3, r"lam must .*\[0, 1\]"),
        (np.ones((4, 2)), Y4, np.ones(2), 3, "scalar"),
        (np.full((4, 2), 0.5), Y4, 0.5, 3, "binary"),
        (np.ones((4, 2)), np.array([1.0, -1, 1, 3]), 0.5, 3, "labels"),
        (np.ones((4, 2)), np.ones(4), 0.5, 3, "both classes"),
        (np.ones((4, 2)), Y4, 0.5, 0, "n_rounds"),
    ],
)
def test_validation(H, y, lam, rounds, match):
    with pytest.raises(ValueError, match=match):
        vebboost(H, y, lam, rounds)


def test_sample_weight_validation():
    with pytest.raises(ValueError, match="sample_weight"):
        vebboost(np.ones((4, 2)), Y4, 0.5, 3, sample_weight=-np.ones(4))
