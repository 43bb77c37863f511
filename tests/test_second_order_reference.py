"""Self-test of tests/reference/second_order_numpy.py: definitions, the theory's inequalities,
coverage of the concentration inequalities by simulation, and the binomial tail inversion.

NumPy/SciPy/mpmath only (no JAX): it checks the reference before the reference checks anything.
"""

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reference import bounds_numpy as R
from tests.reference import second_order_numpy as S

DELTAS = (0.01, 0.05, 0.2, 0.5)


def random_ensemble(rng, n_examples=300, n_voters=5, n_classes=3, accuracy=0.7, oob=None):
    """Predictions of correlated voters (a shared 'hard example' flag), labels, an OOB mask."""
    y = rng.integers(0, n_classes, n_examples)
    hard = rng.random(n_examples) < 0.3
    right = rng.random((n_examples, n_voters)) < np.where(hard[:, None], accuracy - 0.3, accuracy)
    wrong = (y[:, None] + rng.integers(1, n_classes, (n_examples, n_voters))) % n_classes
    P = np.where(right, y[:, None], wrong)
    mask = None if oob is None else rng.random((n_examples, n_voters)) < oob
    return P, y, mask


# --------------------------------------------------------------------------------------------
# statistics
# --------------------------------------------------------------------------------------------


def test_error_matrix_takes_any_labels():
    P = np.array([["cat", "dog"], ["dog", "dog"], ["bird", "cat"]])
    y = np.array(["cat", "dog", "cat"])
    np.testing.assert_array_equal(S.error_matrix(P, y), [[0, 1], [0, 0], [1, 0]])
    with pytest.raises(ValueError):
        S.error_matrix(P, y[:2])


def test_statistics_match_their_definitions_without_mask():
    rng = np.random.default_rng(1)
    P, y, _ = random_ensemble(rng)
    E, rho = S.error_matrix(P, y), rng.dirichlet(np.ones(5))
    W = E @ rho  # rho-weighted share of voters that err, per example
    g, t = S.gibbs_risk(E, rho), S.tandem_risk(E, rho)
    T = S.tandem_risk_matrix(E)
    np.testing.assert_allclose(g, W.mean(), rtol=1e-13)
    np.testing.assert_allclose(t, np.mean(W**2), rtol=1e-13)  # masegosa2020 Lemma: E[W^2]
    np.testing.assert_allclose(np.diag(T), E.mean(axis=0), rtol=1e-13)
    assert np.all(T <= np.minimum.outer(E.mean(0), E.mean(0)) + 1e-15)
    assert g**2 <= t <= g
    for mu in (-0.3, 0.0, 0.2, 0.45):
        mt = S.mu_tandem_risk(E, rho, mu)
        np.testing.assert_allclose(mt, t - 2 * mu * g + mu**2, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(mt, np.mean((W - mu) ** 2), rtol=1e-12, atol=1e-15)
        plus, minus = S.mu_tandem_split_risks(E, rho, mu)
        split = S.mu_tandem_range(mu)[1]
        np.testing.assert_allclose(split + plus - minus, mt, rtol=1e-12, atol=1e-15)


def test_binary_tandem_is_gibbs_minus_half_disagreement():
    rng = np.random.default_rng(2)
    P, y, _ = random_ensemble(rng, n_classes=2)
    E, rho = S.error_matrix(P, y), rng.dirichlet(np.ones(5))
    np.testing.assert_allclose(
        S.tandem_risk(E, rho),
        S.gibbs_risk(E, rho) - S.disagreement(P, rho) / 2,
        rtol=1e-13,
    )


def test_masked_statistics_average_over_own_and_shared_out_of_bag_sets():
    rng = np.random.default_rng(3)
    P, y, mask = random_ensemble(rng, n_examples=200, oob=0.5)
    E = S.error_matrix(P, y)
    T = S.tandem_risk_matrix(E, mask)
    both = mask[:, 1] & mask[:, 3]
    np.testing.assert_allclose(T[1, 3], np.mean(E[both, 1] * E[both, 3]), rtol=1e-13)
    one_hot = np.eye(5)[2]
    np.testing.assert_allclose(S.gibbs_risk(E, one_hot, mask), E[mask[:, 2], 2].mean(), rtol=1e-13)
    D = S.disagreement_matrix(P, mask)
    np.testing.assert_allclose(D[1, 3], np.mean(P[both, 1] != P[both, 3]), rtol=1e-13)
    # variance: the unbiased sample variance of each pair's losses over its shared examples
    mu = 0.15
    v11 = (E[mask[:, 1], 1] - mu) ** 2
    np.testing.assert_allclose(S.mu_tandem_variance(E, np.eye(5)[1], mu, mask), np.var(v11, ddof=1))
    v13 = (E[both, 1] - mu) * (E[both, 3] - mu)
    v33 = (E[mask[:, 3], 3] - mu) ** 2
    expected = (np.var(v11, ddof=1) + 2 * np.var(v13, ddof=1) + np.var(v33, ddof=1)) / 4
    pair = np.zeros(5)
    pair[[1, 3]] = 0.5
    np.testing.assert_allclose(S.mu_tandem_variance(E, pair, mu, mask), expected, rtol=1e-13)
    # integer weights equal to the mask give the same Gibbs risk as the mask
    w = mask[:, 0].astype(float)
    np.testing.assert_allclose(
        S.gibbs_risk(E[:, :1], [1.0], weights=w), S.gibbs_risk(E[:, :1], [1.0], mask[:, :1])
    )


def test_oob_sample_sizes_on_a_hand_built_mask():
    mask = np.array(
        [
            [1, 0, 1],
            [1, 1, 0],
            [0, 1, 1],
            [1, 1, 1],
            [1, 0, 0],
        ],
        dtype=bool,
    )
    # |OOB_j| = 4, 3, 3; |OOB_0 ∩ OOB_1| = 2, |OOB_0 ∩ OOB_2| = 2, |OOB_1 ∩ OOB_2| = 2
    assert S.oob_sample_sizes(mask) == (3, 2)
    assert S.oob_sample_sizes(mask[:, :1]) == (4, 4)  # one voter: n2 = n
    mask[3, 1] = False  # now OOB_1 ∩ OOB_2 = {2}
    assert S.oob_sample_sizes(mask) == (2, 1)


def test_statistics_refuse_bad_input():
    E = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="probability"):
        S.gibbs_risk(E, [0.7, 0.7])
    with pytest.raises(ValueError, match="share no example"):
        S.tandem_risk(E, [0.5, 0.5], mask=np.array([[True, False], [True, False]]))
    with pytest.raises(ValueError, match="0/1"):
        S.gibbs_risk(E * 0.5, [0.5, 0.5])
    with pytest.raises(ValueError, match="< 1/2"):
        S.mu_tandem_risk(E, [0.5, 0.5], 0.5)


# --------------------------------------------------------------------------------------------
# oracle bounds: exact on the empirical distribution, and on a Monte Carlo ensemble
# --------------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 5), n_voters=st.integers(1, 7))
def test_oracle_bounds_hold_on_any_sample(seed, n_classes, n_voters):
    """Any sample is a distribution: L^(MV) <= the oracle bounds evaluated on the same sample."""
    rng = np.random.default_rng(seed)
    P, y, _ = random_ensemble(rng, 60, n_voters, n_classes, accuracy=rng.uniform(0.2, 0.9))
    rho = rng.dirichlet(np.ones(n_voters))
    E = S.error_matrix(P, y)
    mv, g, t = S.majority_vote_risk(P, y, rho), S.gibbs_risk(E, rho), S.tandem_risk(E, rho)
    assert mv <= 2 * g + 1e-12
    assert mv <= 4 * t + 1e-12
    for mu in (-1.0, -0.3, 0.0, 0.1, 0.3, 0.49):
        assert mv <= S.cc_oracle_bound(t, g, mu, clip=False) + 1e-12
    if g < 0.5:
        mu_star = S.cc_oracle_optimal_mu(t, g)
        c = S.c_tandem_oracle_bound(t, g)
        np.testing.assert_allclose(S.cc_oracle_bound(t, g, mu_star, clip=False), c, rtol=1e-10)
        assert mv <= c + 1e-12
        assert c <= 4 * t + 1e-12  # CC at mu* is at least as tight as the tandem bound (mu = 0)


def test_oracle_bounds_on_a_monte_carlo_ensemble():
    """A synthetic ensemble on 50 000 draws: the oracle bounds sit above the MV risk, ordered."""
    rng = np.random.default_rng(4)
    P, y, _ = random_ensemble(rng, 50_000, 7, 2, accuracy=0.72)
    rho = np.full(7, 1 / 7)
    E = S.error_matrix(P, y)
    mv, g, t = S.majority_vote_risk(P, y, rho), S.gibbs_risk(E, rho), S.tandem_risk(E, rho)
    c = S.c_tandem_oracle_bound(t, g)
    assert mv < c < 4 * t and mv < 2 * g
    # the family is unimodal in mu with its minimum c at mu*: between 0 and mu* it lies in [c, 4t]
    halfway = S.cc_oracle_optimal_mu(t, g) / 2
    assert c < S.cc_oracle_bound(t, g, halfway) < 4 * t


# --------------------------------------------------------------------------------------------
# empirical bounds: relations and monotonicity
# --------------------------------------------------------------------------------------------


def _all_bounds(g, t, d, plus, minus, mt, mv, kl, n, n2, delta):
    return {
        "first_order": S.first_order_bound(g, kl, n, delta),
        "tnd": S.tnd_bound(t, kl, n2, delta),
        "tnd_lambda": S.tnd_lambda_bound(t, kl, n2, delta, 0.7),
        "dis": S.dis_bound(g, d, kl, n, 3 * n, delta),
        "cctnd": S.cctnd_bound(t, g, kl, n, n2, delta, S.paper_mu_grid()),
        "ccpbb": S.ccpbb_bound(mt, mv, kl, n2, delta, 0.1, clip=False),
        "split_kl_tandem": S.split_kl_tandem_bound(plus, minus, kl, n2, delta, 0.1, clip=False),
        "pac_bound_1_prime": S.pac_bound_1_prime(g, d, kl, n, 3 * n, delta),
        "test_set": S.test_set_bound(round(g * n), n, delta),
    }


@pytest.fixture(scope="module")
def binary_stats():
    rng = np.random.default_rng(5)
    P, y, _ = random_ensemble(rng, 2000, 5, 2, accuracy=0.8)
    E, rho = S.error_matrix(P, y), np.full(5, 0.2)
    plus, minus = S.mu_tandem_split_risks(E, rho, 0.1)
    return dict(
        g=S.gibbs_risk(E, rho),
        t=S.tandem_risk(E, rho),
        d=S.disagreement(P, rho),
        plus=plus,
        minus=minus,
        mt=S.mu_tandem_risk(E, rho, 0.1),
        mv=S.mu_tandem_variance(E, rho, 0.1),
    )


def test_bounds_decrease_with_delta_and_increase_with_kl(binary_stats):
    n = n2 = 2000
    for kl in (0.0, 0.5, 3.0):
        rows = [_all_bounds(**binary_stats, kl=kl, n=n, n2=n2, delta=dl) for dl in DELTAS]
        for name in rows[0]:
            values = [r[name] for r in rows]
            assert all(a >= b - 1e-12 for a, b in itertools.pairwise(values)), (name, values)
    for delta in DELTAS:
        rows = [_all_bounds(**binary_stats, kl=k, n=n, n2=n2, delta=delta) for k in (0, 1, 5)]
        for name in rows[0]:
            values = [r[name] for r in rows]
            assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values)), (name, values)


def test_bounds_lie_above_their_empirical_counterparts(binary_stats):
    s = binary_stats
    g, t, d, mt = s["g"], s["t"], s["d"], s["mt"]
    for delta in DELTAS:
        assert S.first_order_bound(g, 0.0, 2000, delta) > 2 * g
        assert S.tnd_bound(t, 0.0, 2000, delta) > 4 * t
        assert S.dis_bound(g, d, 0.0, 2000, 6000, delta) > 4 * g - 2 * d
        for mu in (-0.2, 0.0, 0.2):
            assert S.cctnd_bound(t, g, 0.0, 2000, 2000, delta, mu) > S.cc_oracle_bound(t, g, mu)
        assert S.ccpbb_bound(mt, s["mv"], 0.0, 2000, delta, 0.1) > mt / 0.4**2
        assert S.split_kl_tandem_bound(s["plus"], s["minus"], 0.0, 2000, delta, 0.1) > mt / 0.16
        assert S.pac_bound_1_prime(g, d, 0.0, 2000, 6000, delta) > R.cbound(1 - 2 * g, 1 - 2 * d)


@settings(max_examples=60)
@given(
    t=st.floats(0.0, 0.3),
    kl=st.floats(0.0, 20.0),
    n2=st.integers(10, 100_000),
    delta=st.floats(1e-4, 0.9),
)
def test_lambda_form_is_never_below_the_kl_form(t, kl, n2, delta):
    kl_form = S.tnd_bound(t, kl, n2, delta, clip=False)
    lam_star = S.tnd_optimal_lambda(t, kl, n2, delta)
    at_star = S.tnd_lambda_bound(t, kl, n2, delta, lam_star, clip=False)
    assert at_star >= kl_form - 1e-12
    for lam in (0.05, 0.5, 1.0, 1.5, 1.95):
        assert S.tnd_lambda_bound(t, kl, n2, delta, lam, clip=False) >= at_star - 1e-12


def test_special_cases_reduce_to_known_bounds():
    t, g, kl, n, n2 = 0.06, 0.18, 1.3, 900, 400
    for delta in DELTAS:
        # mu = 0: CCTND and the split-kl tandem bound are TND at delta/2
        tnd_half = S.tnd_bound(t, kl, n2, delta / 2, clip=False)
        np.testing.assert_allclose(
            S.cctnd_bound(t, g, kl, n, n2, delta, 0.0, clip=False), tnd_half, rtol=1e-13
        )
        np.testing.assert_allclose(
            S.split_kl_tandem_bound(t, 0.0, kl, n2, delta, 0.0, clip=False), tnd_half, rtol=1e-13
        )
        # PAC-Bound 1' with m' = m is PAC-Bound 1
        np.testing.assert_allclose(
            S.pac_bound_1_prime(g, 0.25, kl, n, n, delta), R.pac_bound_1(g, 0.25, kl, n, delta)
        )
    # CCTND over a grid is the minimum of the pointwise values
    grid = S.paper_mu_grid()
    pointwise = [S.cctnd_bound(t, g, kl, n, n2, 0.05, m) for m in grid[::40]]
    assert S.cctnd_bound(t, g, kl, n, n2, 0.05, grid[::40]) == min(pointwise)


def test_grid_versions_pay_a_union_bound():
    mus = np.array([-0.1, 0.0, 0.1])
    t, g = 0.05, 0.15
    mts = t - 2 * mus * g + mus**2
    single = S.ccpbb_bound(mts[1], 0.04, 0.5, 3000, 0.05 / 3, 0.0)
    assert S.ccpbb_bound_grid(mus, mts, np.full(3, 0.04), 0.5, 3000, 0.05) <= single
    assert S.ccpbb_bound(mts[1], 0.04, 0.5, 3000, 0.05, 0.0) < single
    pl, mi = np.array([0.04, 0.05, 0.03]), np.array([0.01, 0.0, 0.02])
    grid = S.split_kl_tandem_bound_grid(mus, pl, mi, 0.5, 3000, 0.05)
    each = [S.split_kl_tandem_bound(p, q, 0.5, 3000, 0.05 / 3, m) for m, p, q in zip(mus, pl, mi)]
    assert grid == min(each)


def test_grids_have_the_stated_ranges():
    for n in (50, 1000, 100_000):
        lams = S.variance_lambda_grid(n, 0.025)
        t = lams * n / (2 * (n - 1))
        assert t[0] == pytest.approx(1 / (math.sqrt((n - 1) / math.log(40) + 1) + 1))
        assert t[-1] < 0.5 <= t[-1] * 1.05
        for K in (0.6, 1.0, 1.8):
            gammas = S.bennett_gamma_grid(n, 0.025, 0.025, K)
            # gamma_min is the optimal gamma at variance K^2/4, KL = 0
            np.testing.assert_allclose(
                gammas[0], S.bennett_optimal_gamma(K * K / 4, 0.0, n, 0.025, K), rtol=1e-12
            )
            # just past the grid the variance term alone at V_min exceeds K
            v_min = 2 * K * K * math.log(40) / (n - 1)
            top = gammas[-1] * 1.05
            assert (math.expm1(top * K) - top * K) / (top * K * K) * v_min >= K * (1 - 1e-9)


def test_optimal_parameters_minimize_their_bounds():
    v, kl, n, delta, K = 0.02, 1.5, 500, 0.05, 0.9
    lam = S.variance_optimal_lambda(v, kl, n, delta, K)
    f = lambda x: S.pac_bayes_variance_bound(v, kl, n, delta, x, K)  # noqa: E731
    xs = np.linspace(1e-3, 2 * (n - 1) / n - 1e-3, 4001)
    assert f(lam) <= min(f(x) for x in xs) + 1e-12
    gam = S.bennett_optimal_gamma(v, kl, n, delta, K)
    h = lambda x: S.pac_bayes_bennett_bound(0.1, v, kl, n, delta, x, K)  # noqa: E731
    assert h(gam) <= min(h(x) for x in np.linspace(0.01, 30, 6001)) + 1e-12


def test_cbound_kl_ball_sup_agrees_with_pac_bound_2_and_2_prime_behaves():
    for g, d, kl, m in [(0.2, 0.3, 0.0, 500), (0.25, 0.2, 2.0, 2000), (0.1, 0.15, 0.5, 300)]:
        e_s = g - d / 2
        eps = (2 * kl + math.log(R.xi(m) + m) - math.log(0.05)) / m
        np.testing.assert_allclose(
            S.cbound_kl_ball_sup(e_s, d, eps), R.pac_bound_2(g, d, kl, m, 0.05), rtol=1e-7
        )
        p2p = S.pac_bound_2_prime(g, d, kl, m, 0.05)
        assert R.cbound(1 - 2 * g, 1 - 2 * d) < p2p <= 1.0
        assert S.pac_bound_2_prime(g, d, kl, m, 0.2) <= p2p
    # a cap below the unconstrained maximizer lowers the sup
    eps = (math.log(R.xi(500) + 500) - math.log(0.05)) / 500
    assert S.cbound_kl_ball_sup(0.05, 0.3, eps, 0.06) < S.cbound_kl_ball_sup(0.05, 0.3, eps)


@pytest.mark.parametrize("cap", [0.5, 0.12])
def test_cbound_kl_ball_sup_dominates_every_feasible_point(cap):
    """Random points of the feasible set never beat the computed sup (and one comes close)."""
    rng = np.random.default_rng(9)
    e_s, d_s = 0.1, 0.4
    eps = (math.log(R.xi(5000) + 5000) + math.log(2) - math.log(0.05)) / 5000
    sup = S.cbound_kl_ball_sup(e_s, d_s, eps, cap)
    e = rng.uniform(0.0, cap, 400_000)
    d = rng.uniform(0.3, 0.5, 400_000)
    ok = (d <= 2 * (np.sqrt(e) - e)) & (2 * e + d < 1)
    e, d = e[ok], d[ok]
    rest = 1 - e - d
    with np.errstate(divide="ignore", invalid="ignore"):
        kl3 = (
            e_s * np.log(e_s / e)
            + d_s * np.log(d_s / d)
            + (1 - e_s - d_s) * np.log((1 - e_s - d_s) / rest)
        )
    feasible = kl3 <= eps
    F = 1 - (1 - 2 * e[feasible] - d[feasible]) ** 2 / (1 - 2 * d[feasible])
    assert feasible.sum() > 100
    assert F.max() <= sup + 1e-12
    assert F.max() >= sup - 5e-3


# --------------------------------------------------------------------------------------------
# coverage of the concentration inequalities (simulated; fixed rho = pi, so KL = 0)
# --------------------------------------------------------------------------------------------

# error patterns of two voters (err_1, err_2) and their probabilities
PATTERNS = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
PATTERN_P = np.array([0.72, 0.1, 0.08, 0.1])
RHO2 = np.array([0.5, 0.5])


def _true_mu_tandem(mu):
    """E_{rho^2}[L_mu] and its variance per pair under PATTERN_P, exactly."""
    losses = np.einsum("pj,pk->pjk", PATTERNS - mu, PATTERNS - mu)  # (pattern, j, k)
    means = np.einsum("p,pjk->jk", PATTERN_P, losses)
    return RHO2 @ means @ RHO2, means


def _sample_stats(rng, n, trials, mu):
    """Per trial: E_{rho^2}[L^_mu], E_{rho^2}[V^_mu], split risks at the middle value."""
    idx = rng.choice(4, size=(trials, n), p=PATTERN_P)
    E = PATTERNS[idx]  # (trials, n, 2)
    losses = np.einsum("tij,tik->tijk", E - mu, E - mu)
    split = S.mu_tandem_range(mu)[1]
    avg = lambda a: np.einsum("j,tjk,k->t", RHO2, a, RHO2)  # noqa: E731
    mean = avg(losses.mean(axis=1))
    var = avg(losses.var(axis=1, ddof=1))
    plus = avg(np.maximum(0, losses - split).mean(axis=1))
    minus = avg(np.maximum(0, split - losses).mean(axis=1))
    return mean, var, plus, minus


@pytest.mark.parametrize("mu", [-0.2, 0.0, 0.2])
def test_ccpbb_and_split_kl_numerators_cover_the_truth(mu):
    rng = np.random.default_rng(6)
    n, trials, delta = 60, 600, 0.3
    truth, _ = _true_mu_tandem(mu)
    mean, var, plus, minus = _sample_stats(rng, n, trials, mu)
    scale = (0.5 - mu) ** 2
    ccpbb = [S.ccpbb_bound(m, v, 0.0, n, delta, mu, clip=False) * scale for m, v in zip(mean, var)]
    skl = [
        S.split_kl_tandem_bound(p, q, 0.0, n, delta, mu, clip=False) * scale
        for p, q in zip(plus, minus)
    ]
    assert np.mean(np.array(ccpbb) < truth) <= delta
    assert np.mean(np.array(skl) < truth) <= delta


def test_bennett_with_the_true_variance_and_the_variance_bound_cover_the_truth():
    rng = np.random.default_rng(7)
    mu, n, trials, delta = 0.1, 80, 3000, 0.2
    truth, means = _true_mu_tandem(mu)
    a, _, b = S.mu_tandem_range(mu)
    K = b - a
    # the pair (0, 0) alone: l_mu = (err_1 - mu)^2, a two-valued variable
    p1 = PATTERN_P[1] + PATTERN_P[3]
    true_var = p1 * (1 - p1) * ((1 - mu) ** 2 - mu**2) ** 2
    idx = rng.choice(4, size=(trials, n), p=PATTERN_P)
    losses = (PATTERNS[idx, 0] - mu) ** 2
    gamma = 3.0
    bennett = [
        S.pac_bayes_bennett_bound(m, true_var, 0.0, n, delta, gamma, K) for m in losses.mean(1)
    ]
    assert np.mean(np.array(bennett) < means[0, 0]) <= delta + 3 * math.sqrt(delta / trials)
    var_bound = [
        S.pac_bayes_variance_bound(v, 0.0, n, delta, 0.8, K) for v in losses.var(1, ddof=1)
    ]
    assert np.mean(np.array(var_bound) < true_var) <= delta + 3 * math.sqrt(delta / trials)
    assert truth > 0


def test_split_kl_inequality_covers_a_ternary_mean():
    """wu2022 section 2.3 setting: Z in {-1, 0, 1}, split at 0."""
    rng = np.random.default_rng(8)
    n, trials, delta = 100, 4000, 0.2
    probs = np.array([0.1, 0.6, 0.3])  # P(Z = -1), P(0), P(1)
    Z = rng.choice([-1.0, 0.0, 1.0], size=(trials, n), p=probs)
    truth = probs[2] - probs[0]
    plus, minus = np.maximum(Z, 0).mean(1), np.maximum(-Z, 0).mean(1)
    bounds = np.array([S.split_kl_bound(p, q, n, delta, -1, 1, 0) for p, q in zip(plus, minus)])
    assert np.mean(bounds < truth) <= delta + 3 * math.sqrt(delta / trials)
    assert np.all(bounds >= Z.mean(1) - 1e-12)


# --------------------------------------------------------------------------------------------
# Langford's binomial tail inversion
# --------------------------------------------------------------------------------------------


@settings(max_examples=80)
@given(n=st.integers(1, 3000), frac=st.floats(0.0, 1.0), delta=st.floats(1e-9, 0.99))
def test_binomial_tail_inversion_inverts_the_tail(n, frac, delta):
    k = math.floor(frac * n)
    p = S.binomial_tail_inversion(k, n, delta)
    if k == n:
        assert p == 1.0
        return
    assert p < 1.0
    if delta <= 0.5:  # k is the median of Binomial(n, k/n), so Bin(n, k, k/n) >= 1/2
        assert k / n <= p
    if p < 0.9:  # near 1 the tail 1 - I_p loses digits to cancellation; bracket p instead
        np.testing.assert_allclose(S.binomial_tail(k, n, p), delta, rtol=1e-8)
    step = 1e-13 + 1e-11 * p
    assert S.binomial_tail(k, n, max(p - step, 0.0)) >= delta  # p qualifies (up to 1e-11) ...
    if p + step < 1.0:
        assert S.binomial_tail(k, n, p + step) <= delta  # ... and is the largest that does


@pytest.mark.parametrize(
    "k,n,delta",
    [(0, 10, 0.05), (3, 20, 0.1), (7, 40, 0.01), (19, 20, 0.3), (3, 50, 1e-9), (0, 3000, 0.99),
     (2, 3000, 0.9), (500, 1000, 1e-12), (999, 1000, 1e-6)],
)  # fmt: skip
@mpmath.workdps(50)  # locally: the other modules' references keep their own precision
def test_binomial_tail_inversion_against_mpmath(k, n, delta):
    """Bisection at 50 digits on Bin(n, k, p) = 1 - I_p(k+1, n-k) (mpmath), to 1e-15 relative."""

    def tail(p):
        return mpmath.betainc(k + 1, n - k, p, 1, regularized=True)

    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    for _ in range(170):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if tail(mid) >= delta else (lo, mid)
    assert S.binomial_tail_inversion(k, n, delta) == pytest.approx(float(lo), rel=1e-15)
    if n <= 40:  # the tail as the literal finite sum
        p = lo
        exact_sum = mpmath.fsum(
            mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(k + 1)
        )
        assert abs(exact_sum - delta) < 1e-40
    if k == 0:  # closed form 1 - delta^(1/n)
        assert S.test_set_bound(0, n, delta) == pytest.approx(1 - delta ** (1 / n), rel=1e-12)


def test_test_set_bound_coverage_is_exactly_at_most_delta():
    """P(p > Bin^{-1}(n, K, delta)) computed exactly over K ~ Binomial(n, p), for a grid of p."""
    n, delta = 50, 0.1
    inv = np.array([S.test_set_bound(k, n, delta) for k in range(n + 1)])
    for p in np.linspace(0.001, 0.999, 300):
        failure = sum(
            math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1) if p > inv[k]
        )
        assert failure <= delta + 1e-12


def test_bounds_refuse_bad_arguments():
    with pytest.raises(ValueError):
        S.tnd_bound(0.1, 0.0, 100, 0.0)
    with pytest.raises(ValueError):
        S.tnd_bound(0.1, -1.0, 100, 0.05)
    with pytest.raises(ValueError):
        S.tnd_lambda_bound(0.1, 0.0, 100, 0.05, 2.0)
    with pytest.raises(ValueError):
        S.cctnd_bound(0.1, 0.2, 0.0, 100, 100, 0.05, [0.0, 0.5])
    with pytest.raises(ValueError):
        S.ccpbb_bound(0.1, 0.02, 0.0, 1, 0.05, 0.0)
    with pytest.raises(ValueError):
        S.test_set_bound(2.5, 10, 0.05)
    with pytest.raises(ValueError):
        S.test_set_bound(11, 10, 0.05)
    with pytest.raises(ValueError):
        S.first_order_bound(1.2, 0.0, 100, 0.05)
