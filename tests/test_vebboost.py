"""VEB-Boost (shivaswamy Fig. 1) against the independent NumPy reference and the paper.

The learners take ``H`` as it is and weigh ``[H, -H]`` implicitly; the reference runs on the
materialized ``[H, -H]``, so its column indices are the learners' ``info.selected``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound._src.solvers.adaboost import adaboost
from pacbound._src.solvers.vebboost import truncate_vebboost, veb_cost, vebboost
from pacbound.voters import stump_search, stumps_vote
from tests.reference.boosting_numpy import vebboost_cost, vebboost_reference
from tests.test_adaboost import _votes, _weights, zero_edge_votes
from tests.test_cbboost import check_jit_vmap, check_prefixes, fold_masks, materialized_stumps

T = 25
LAMBDAS = (0.0, 0.3, 1.0)
Y4 = np.array([1.0, -1, 1, -1])  # both classes


def _stump_data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    return X, np.where(X[:, 1] + X[:, 2] ** 2 + rng.normal(0, 0.7, 30) > 1, 1.0, -1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference_round_by_round(seed):
    H, Hc, y = _votes(seed)
    for lam in LAMBDAS:
        res = vebboost(H, y, lam, T)
        info, ref = res.info, vebboost_reference(Hc, y, lam, T)
        np.testing.assert_array_equal(info.selected, ref["selected"])
        np.testing.assert_allclose(info.alphas, ref["alphas"], rtol=1e-12)
        np.testing.assert_allclose(info.costs, ref["costs"], rtol=1e-12)
        assert res.objective == info.costs[-1]
        f = Hc @ np.bincount(np.maximum(info.selected, 0), np.asarray(info.alphas), Hc.shape[1])
        np.testing.assert_allclose(f, ref["f"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res.q, np.bincount(ref["selected"][ref["selected"] >= 0],
                                   ref["alphas"][ref["selected"] >= 0], Hc.shape[1])
                                   / ref["alphas"].sum(), rtol=1e-12)  # fmt: skip
        np.testing.assert_allclose(H @ res.weights, ref["f"] / ref["alphas"].sum(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cost_decreases_every_round_theorem_2(dtype):
    """Theorem 2: Lemma 1's cost bounds J(f + alpha G) / W^2 and is tight at alpha = 0, so
    each round's minimizer never increases the cost of the first display."""
    H, Hc, y = _votes(3)
    for lam in LAMBDAS:
        res = vebboost(H.astype(dtype), y.astype(dtype), lam, T)
        assert res.objective.dtype == dtype
        costs = np.asarray(res.info.costs, np.float64)
        assert costs[0] == pytest.approx(len(y) ** 2)  # f = 0
        tol = 1e-12 if dtype == np.float64 else 1e-5
        assert np.all(np.diff(costs) <= tol * costs[:-1]), lam
        assert costs[-1] < 0.9 * costs[0]
        sel, alphas = np.maximum(res.info.selected, 0), np.asarray(res.info.alphas, float)
        f = Hc @ np.bincount(sel, alphas, 24)
        assert float(veb_cost(y, f, lam)) == pytest.approx(vebboost_cost(f, y, lam), rel=1e-12)


def test_step_is_lemma_1_minimizer_not_the_printed_ratio():
    """Fig. 1 prints alpha = ln(U_J / U_I) / 4, negative for any useful learner; Lemma 1's
    cost U_I e^{-2a} + U_J e^{2a} is minimized by ln(U_I / U_J) / 4 > 0."""
    H, Hc, y = _votes(0)
    m, lam = len(y), 0.3
    res = vebboost(H, y, lam, 1)
    w = np.full(m, 1.0 / m)
    u = lam * m * w**2 + (1 - lam) * w
    j = int(np.argmax((u * y) @ Hc))
    right, wrong = u[Hc[:, j] == y].sum(), u[Hc[:, j] != y].sum()
    assert int(res.info.selected[0]) == j and wrong < right
    assert float(res.info.alphas[0]) == pytest.approx(0.25 * np.log(right / wrong), rel=1e-13)
    assert float(res.info.errors[0]) == pytest.approx(wrong / (right + wrong), rel=1e-13)
    grid = np.linspace(-1, 1, 2001)
    lemma1 = right * np.exp(-2 * grid) + wrong * np.exp(2 * grid)
    assert abs(grid[np.argmin(lemma1)] - float(res.info.alphas[0])) <= 1e-3


def test_lambda_zero_is_half_step_adaboost():
    H, _, y = _votes(1)
    ada, v0 = adaboost(H, y, 1), vebboost(H, y, 0.0, 1)
    assert int(ada.info.selected[0]) == int(v0.info.selected[0])
    assert float(v0.info.alphas[0]) == pytest.approx(float(ada.info.alphas[0]) / 2, rel=1e-13)


def test_vmap_over_lambda_equals_jit_without_recompiling(no_compilation):
    H, _, y = _votes(2)
    batched = jax.vmap(lambda lam: vebboost(H, y, lam, T))(jnp.array(LAMBDAS))
    vebboost(H, y, 0.5, T)
    with no_compilation():  # a new lam compiles nothing
        singles = [vebboost(H, y, lam, T) for lam in LAMBDAS]
    for i, single in enumerate(singles):
        np.testing.assert_array_equal(batched.info.selected[i], single.info.selected)
        np.testing.assert_allclose(batched.info.alphas[i], single.info.alphas, rtol=1e-13)
        np.testing.assert_allclose(batched.info.costs[i], single.info.costs, rtol=1e-13)
        np.testing.assert_allclose(batched.q[i], single.q, rtol=1e-13)


def test_stumps_equal_dense_over_all_thresholds():
    X, y = _stump_data()
    search, H_all, index = materialized_stumps(X)
    dense, res = vebboost(H_all, y, 0.5, T), vebboost(search, y, 0.5, T)
    np.testing.assert_array_equal(res.info.selected, index[np.asarray(dense.info.selected)])
    np.testing.assert_allclose(res.info.alphas, dense.info.alphas, rtol=1e-12)
    np.testing.assert_allclose(res.info.costs, dense.info.costs, rtol=1e-12)
    assert int(res.info.n_candidates) == H_all.shape[1] and res.voters is not None
    for t in (T, 7):
        a, b = truncate_vebboost(res, t), truncate_vebboost(dense, t)
        np.testing.assert_allclose(
            stumps_vote(a.voters, a.weights, X), H_all @ b.weights, rtol=1e-12, atol=1e-15
        )


def test_prefixes_are_runs_of_fewer_rounds():
    H, _, y = _votes(1)
    check_prefixes(vebboost, lambda t: vebboost(H, y, 0.3, t), T, (1, 8))
    perfect = H.copy()  # the same shape and rounds as above: compiled once
    perfect[:, 5] = y  # boosting ends after round 0
    check_prefixes(vebboost, lambda t: vebboost(perfect, y, 0.5, t), T, (1, 8))
    X, ys = _stump_data()
    search = stump_search(X)
    check_prefixes(vebboost, lambda t: vebboost(search, ys, 0.5, t), T, (3, 12))


def test_zero_edge_and_perfect_learner():
    """With every complement offered the best learner has ``U_I >= U_J``: Fig. 1's break
    (``alpha < 0``) cannot fire; voters orthogonal to the labels get ``alpha = 0``, the
    reference's no-op rounds, and a perfect learner ends boosting."""
    useless, y = zero_edge_votes()
    res = vebboost(useless, y, 0.5, 4)
    ref = vebboost_reference(np.concatenate([useless, -useless], axis=1), y, 0.5, 4)
    np.testing.assert_array_equal(res.info.selected, ref["selected"])  # column 0, alpha 0
    assert np.all(np.asarray(res.info.alphas) == 0) and np.all(ref["alphas"] == 0)
    assert np.all(np.asarray(res.info.costs) == len(y) ** 2)
    assert np.all(np.asarray(res.q) == 1 / 12) and np.all(np.asarray(res.weights) == 0)
    assert not res.converged and res.steps == 4
    H, _, y = _votes(0)
    perfect = H.copy()  # the shape and rounds of the other runs: compiled once
    perfect[:, 5] = y
    res = vebboost(perfect, y, 0.5, T)  # alpha = ln(U_I / tiny) / 4: the vote is column 5
    assert np.array_equal(res.info.selected, [5] + [-1] * (T - 1))
    assert np.isfinite(float(res.info.alphas[0])) and res.info.errors[0] == 0
    assert np.array_equal(res.q, np.eye(2 * perfect.shape[1])[5])
    assert float(res.info.costs[-1]) < 1e-100 and res.converged and res.steps == 1
    ref = vebboost_reference(np.concatenate([perfect, -perfect], axis=1), y, 0.5, T)
    assert ref["stop_reason"] == "perfect" and ref["perfect_learner"] == 5  # not applied there


def test_sample_weight_repeats_examples():
    """Integer weights are Fig. 1 and the cost on the repeated sample (zeros: sliced away)."""
    H, Hc, y = _votes(4)
    v, rep = _weights(y)
    for lam in LAMBDAS:
        res = vebboost(H, y, lam, T, sample_weight=v)
        ref = vebboost_reference(Hc[rep], y[rep], lam, T)
        np.testing.assert_array_equal(res.info.selected, ref["selected"])
        np.testing.assert_allclose(res.info.alphas, ref["alphas"], rtol=1e-12)
        np.testing.assert_allclose(res.info.costs, ref["costs"], rtol=1e-12)
    half = vebboost(H, y, 0.3, T, sample_weight=v / 2)  # only the ratios matter
    np.testing.assert_allclose(half.q, vebboost(H, y, 0.3, T, sample_weight=v).q, rtol=1e-12)


# float64: test_protocol checks jit == vmap == no-jit over fold masks for both learners, and
# test_vmap_over_lambda_equals_jit_without_recompiling the vmap over lam
@pytest.mark.parametrize(
    "dtype", [pytest.param(np.float64, marks=pytest.mark.thorough), np.float32]
)
def test_jit_vmap_over_fold_masks_and_lambda(dtype, no_compilation):
    H, _, y = _votes(2)
    H, y, folds = H.astype(dtype), y.astype(dtype), fold_masks(len(y)).astype(dtype)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    check_jit_vmap(lambda v: vebboost(H, y, 0.3, T, sample_weight=v), folds, rtol)
    run = lambda lam, v: vebboost(H, y, lam, T, sample_weight=v)  # noqa: E731
    batched = jax.vmap(run)(jnp.array(LAMBDAS, dtype), folds)
    for i, lam in enumerate(LAMBDAS):
        single = run(lam, folds[i])
        np.testing.assert_array_equal(batched.info.selected[i], single.info.selected)
        np.testing.assert_allclose(batched.info.costs[i], single.info.costs, rtol=rtol)
    with no_compilation():  # new example weights and lam compile nothing
        run(0.7, np.ones(len(y), dtype))


# the rounds' loop of the dense learner above, priced over the stumps: test_protocol checks
# jit == vmap == no-jit over fold masks for cbboost, which reads the stumps through the
# same rounds' loop, and for vebboost in its thorough tier (thorough)
@pytest.mark.thorough
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_free_jit_vmap_over_fold_masks(dtype, no_compilation):
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    X, ys = _stump_data()
    search = stump_search(X.astype(dtype))
    fit = lambda v: vebboost(search, ys.astype(dtype), 0.5, 8, sample_weight=v)  # noqa: E731
    check_jit_vmap(fit, fold_masks(30).astype(dtype), rtol)
    with no_compilation():  # new example weights and lam compile nothing
        vebboost(search, ys.astype(dtype), 0.2, 8, sample_weight=np.ones(30, dtype))


# the weights enter the rounds' loop of test_sample_weight_repeats_examples, and the stump
# search prices as the dense learner does (test_stumps_equal_dense_over_all_thresholds)
@pytest.mark.thorough
def test_stumps_sample_weight_repeats_examples():
    X, y = _stump_data()
    v, rep = _weights(y, low=1)  # no zero: the repeated sample has the same thresholds
    res = vebboost(stump_search(X), y, 0.5, T, sample_weight=v)
    ref = vebboost(stump_search(X[rep]), y[rep], 0.5, T)
    np.testing.assert_array_equal(res.voters.thresholds, ref.voters.thresholds)
    np.testing.assert_allclose(res.info.alphas, ref.info.alphas, rtol=1e-12)
    np.testing.assert_allclose(res.info.costs, ref.info.costs, rtol=1e-12)


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


def test_sample_weight_and_stump_validation():
    with pytest.raises(ValueError, match="sample_weight"):
        vebboost(np.ones((4, 2)), Y4, 0.5, 3, sample_weight=-np.ones(4))
    search = stump_search(np.arange(4.0)[:, None])
    with pytest.raises(ValueError, match="lam"):
        vebboost(search, Y4, 2.0, 3)
    with pytest.raises(ValueError, match="shape"):
        vebboost(search, np.ones(5), 0.5, 3)
