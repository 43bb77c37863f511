"""The one certificate: every bound of the registry against an independent NumPy recomputation,
float64 whatever the precision mode, posteriors validated (issue #20 items 4 and 7), traced
certificates flagged, 0/1 fold masks, matrix-free priors, the union bound of ``best``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound._src.certify import bound_value, ccpbb_bound, split_kl_bound
from pacbound.certify import (
    BOUNDS,
    DEFAULT_BOUNDS,
    BoundSpec,
    certify,
    certify_margins,
    register_bound,
)
from tests.reference import bounds_numpy as R
from tests.reference import second_order_numpy as S

DELTA = 0.05


def problem(m=300, n=5, seed=0):
    """±1 voters of accuracies 0.55 to 0.8 and labels, float64."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], m)
    right = rng.random((m, n)) < np.linspace(0.55, 0.8, n)
    return np.where(right, y[:, None], -y[:, None]), y


def reference(H, y, q, prior=None, delta=DELTA):
    """Every default bound of ``q`` over ``[H, -H]`` (or ``H``), from tests/reference only."""
    Hq = np.concatenate([H, -H], axis=1) if q.size == 2 * H.shape[1] else H
    prior = np.full(q.size, 1 / q.size) if prior is None else prior
    m = len(y)
    mu1, mu2 = R.moments(Hq, y, q)
    kl = R.kl_divergence(q, prior)
    gibbs, dis = (1 - mu1) / 2, min((1 - mu2) / 2, 2 * (1 - mu1) / 2)
    grid = np.geomspace(1e-2, 1e2, 32)
    values = {
        "seeger": 2 * R.seeger(gibbs, kl, m, delta),
        "pac_bound_0": R.pac_bound_0(gibbs, kl, m, delta),
        "catoni": min(2 * R.catoni(gibbs, kl, m, delta / 32, c) for c in grid),
        "cbound_roy2016": R.cbound_roy2016(mu1, mu2, kl, m, delta),
        "pac_bound_1": R.pac_bound_1(gibbs, dis, kl, m, delta),
        "pac_bound_2": R.pac_bound_2(gibbs, dis, kl, m, delta),
        **second_order_reference(Hq, y, q, kl, delta),
    }
    return {k: min(v, 1.0) for k, v in values.items()}


MU_GRID = np.linspace(-0.5, 0.45, 20)  # certify's default grid of mu


def best_cctnd(t, g, kl, m, delta):
    """CCTND minimized over mu by SciPy on each branch (mu < 0, mu >= 0): no union bound."""
    from scipy.optimize import minimize_scalar

    def f(mu):
        return S.cctnd_bound(t, g, kl, m, m, delta, mu, clip=False)

    branches = [(-20.0, 0.0), (0.0, 0.5 - 1e-12)]
    opts = {"xatol": 1e-13}
    best = [minimize_scalar(f, bounds=b, method="bounded", options=opts).fun for b in branches]
    return min(*best, f(0.0))


def second_order_reference(Hq, y, q, kl, delta, Hq_unlabeled=None, bounds=("default",)):
    """The second-order bounds of ``q`` over the columns of ``Hq`` from the independent
    reference: its statistics of the ±1 error matrix (tandem, Gibbs, disagreement, the
    mu-tandem split parts and variances), its bounds; mu grids with their union bound."""
    E, m, q = S.error_matrix(Hq, y), len(y), q / np.sum(q)  # certify normalizes q too
    g, t = S.gibbs_risk(E, q), S.tandem_risk(E, q)
    out = {
        "tnd": S.tnd_bound(t, kl, m, delta),
        "cctnd": best_cctnd(t, g, kl, m, delta),
        "pac_bound_2_prime": S.pac_bound_2_prime(g, S.disagreement(Hq, q), kl, m, delta),
    }
    parts = np.array([S.mu_tandem_split_risks(E, q, mu) for mu in MU_GRID])
    out["split_kl"] = S.split_kl_tandem_bound_grid(MU_GRID, *parts.T, kl, m, delta)
    if "all" in bounds:
        lam = S.tnd_optimal_lambda(t, kl, m, delta)
        out["tnd_lambda"] = S.tnd_lambda_bound(t, kl, m, delta, lam)
        means = [S.mu_tandem_risk(E, q, mu) for mu in MU_GRID]
        variances = [S.mu_tandem_variance(E, q, mu) for mu in MU_GRID]
        out["ccpbb"] = S.ccpbb_bound_grid(MU_GRID, means, variances, kl, m, delta)
    if Hq_unlabeled is not None:
        d_u, m_u = S.disagreement(Hq_unlabeled, q), len(Hq_unlabeled)
        out["dis"] = S.dis_bound(g, d_u, kl, m, m_u, delta)
        out["pac_bound_1_prime"] = S.pac_bound_1_prime(g, d_u, kl, m, m_u, delta)
    return {k: min(max(v, 0.0), 1.0) for k, v in out.items()}


def some_posterior(n, seed=1):
    return np.random.default_rng(seed).dirichlet(np.ones(2 * n) * 0.3)


def test_every_default_bound_equals_the_independent_reference():
    H, y = problem()
    q = some_posterior(5)
    cert = certify(q, H, y, delta=DELTA)
    want = reference(H, y, q)
    assert set(cert.bounds) == set(want)  # q is not quasi-uniform: that bound is left out
    for name, value in want.items():
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
    assert cert.majority_vote_risk == pytest.approx(R.mv_risk(np.c_[H, -H], y, q))
    assert cert.majority_vote_risk <= min(cert.bounds.values())


def test_best_is_the_smallest_bound_at_delta_over_k():
    H, y = problem()
    q = some_posterior(5)
    cert = certify(q, H, y, delta=DELTA)
    at_union = reference(H, y, q, delta=DELTA / len(cert.bounds))
    name, value = cert.best
    assert name == min(at_union, key=at_union.get)
    np.testing.assert_allclose(value, at_union[name], rtol=1e-9)
    assert value >= cert.bounds[name]  # the union bound costs something


# Traced in float32 by default: a kl-inverse bound, a grid bound, a C-bound form and a
# second-order bound (each bound's own float32 accuracy is in test_certified_numerics and
# test_second_order_certified); every default bound in the thorough tier.
TRACED_IN_FLOAT32 = [
    pytest.param(("seeger", "catoni", "cbound_roy2016", "tnd"), id="one_of_each_form"),
    pytest.param(None, id="every_default_bound", marks=pytest.mark.thorough),
]


@pytest.mark.parametrize("traced_bounds", TRACED_IN_FLOAT32)
def test_float64_certificate_whatever_the_precision_mode(traced_bounds):
    """Issue #20: with x64 off (the users' default) a concrete certificate is still float64;
    traced, it is computed in the inputs' float32."""
    H, y = problem()
    q = some_posterior(5)
    want = reference(H, y, q.astype(np.float32).astype(np.float64))
    with jax.enable_x64(False):
        cert = certify(q.astype(np.float32), H.astype(np.float32), y.astype(np.float32))
        certified = jax.jit(lambda q: certify(q, H, y, bounds=traced_bounds).bounds)
        traced = certified(jnp.asarray(q, jnp.float32))
    # every bound asked for is traced and compared with the reference
    assert set(traced) & set(want) == set(traced_bounds or want)
    for name, value in want.items():
        assert cert.bounds[name].dtype == np.float64
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
        if name in traced:
            assert traced[name].dtype == jnp.float32
            np.testing.assert_allclose(traced[name], value, rtol=2e-5, err_msg=name)


@pytest.mark.parametrize(
    ("q", "message"),
    [
        (2 * some_posterior(5), "sum 2"),  # issue #20 item 4: a doubled posterior
        (some_posterior(5) - 0.01, "min -"),  # negative masses
        (np.ones(7) / 7, "shape"),
    ],
)
def test_a_posterior_that_is_not_a_distribution_is_refused(q, message):
    H, y = problem()
    with pytest.raises(ValueError, match=message):
        certify(q, H, y)


def _flagged_under_jit(bounds=None):
    """One jitted certificate of an invalid (doubled) and of a valid posterior (one program),
    and the concrete certificate of the valid one."""
    H, y = problem()
    q = jnp.asarray(some_posterior(5))
    traced = jax.jit(lambda q: certify(q, H, y, bounds=bounds))
    bad, good = traced(2 * q), traced(q)
    assert not bad.valid and good.valid
    assert all(float(v) == 1.0 for v in bad.bounds.values())
    return good, certify(q, H, y, bounds=bounds)


def test_under_jit_an_invalid_posterior_is_flagged_and_gets_trivial_bounds():
    """The flag and the trivial bounds act on every bound alike: two cheap ones here; every
    default bound traced is checked by the float64-certificate test (float32) and, in float64,
    by the thorough tier below."""
    good, concrete = _flagged_under_jit(["seeger", "cbound_roy2016"])
    for name in ("seeger", "cbound_roy2016"):
        np.testing.assert_allclose(good.bounds[name], concrete.bounds[name], rtol=1e-12)


@pytest.mark.thorough
def test_under_jit_every_default_bound_is_flagged_and_equals_the_concrete_one():
    good, concrete = _flagged_under_jit()
    for name in DEFAULT_BOUNDS:
        if name in concrete.bounds:
            np.testing.assert_allclose(good.bounds[name], concrete.bounds[name], rtol=1e-12)


def test_one_voter_posterior_has_finite_bounds():
    """Issue #20 item 7: a point mass on one voter (disagreement 0, rounding just below)."""
    H, y = problem()
    q = np.eye(10)[4]
    cert = certify(q, H, y)
    want = reference(H, y, q)
    for name, value in want.items():
        assert np.isfinite(cert.bounds[name])
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)


def test_quasi_uniform_bound_only_for_quasi_uniform_posteriors():
    H, y = problem()
    w = np.random.default_rng(2).uniform(-1, 1, 5) / 5
    q = np.r_[(1 / 5 + w) / 2, (1 / 5 - w) / 2]
    cert = certify(q, H, y)
    mu1, mu2 = R.moments(np.c_[H, -H], y, q)
    want = min(R.cbound_quasi_uniform(mu1, mu2, len(y), DELTA), 1.0)
    np.testing.assert_allclose(cert.bounds["cbound_quasi_uniform"], want, rtol=1e-9)
    with pytest.raises(ValueError, match="quasi-uniform"):
        certify(some_posterior(5), H, y, bounds=["cbound_quasi_uniform"])


def test_masses_over_h_columns_and_a_given_prior():
    H, y = problem()
    q = np.random.default_rng(3).dirichlet(np.ones(5))
    prior = np.random.default_rng(4).dirichlet(np.ones(5) * 5)
    cert = certify(q, H, y, prior=prior)
    for name, value in reference(H, y, q, prior).items():
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
    with pytest.raises(ValueError, match="prior"):
        certify(q, H, y, prior=np.ones(5))


def test_a_fold_mask_equals_slicing_and_other_weights_are_refused():
    H, y = problem()
    q = some_posterior(5)
    mask = (np.arange(len(y)) % 3 != 0).astype(float)
    masked = certify(q, H, y, sample_weight=mask)
    sliced = certify(q, H[mask > 0], y[mask > 0])
    for name in sliced.bounds:
        np.testing.assert_allclose(masked.bounds[name], sliced.bounds[name], rtol=1e-12)
    with pytest.raises(ValueError, match="0/1 mask"):
        certify(q, H, y, sample_weight=np.full(len(y), 0.5))


def test_matrix_free_prior_is_uniform_over_every_candidate_and_complement():
    from pacbound.solvers import LearnerResult, Status
    from pacbound.voters import Stumps, votes

    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    stumps = Stumps(jnp.array([0, 1], jnp.int32), jnp.array([0.0, 0.5]))
    q = np.array([0.7, 0.0, 0.0, 0.3])  # +h_0 and -h_1

    n_candidates = 597  # d (m - 1) candidate stumps
    status = np.int32(Status.SUCCESSFUL)
    result = LearnerResult(q, q[:2] - q[2:], 0.0, 2, status, stumps, 2 * n_candidates)
    cert = certify(result, X, y)
    H = np.asarray(votes(stumps, X, dtype=jnp.float64))
    prior_kl = R.kl_divergence(q[q > 0], np.full(2, 1 / (2 * 597)))
    mu1, _ = R.moments(np.c_[H, -H], y, q)
    want = min(2 * R.seeger((1 - mu1) / 2, prior_kl, 200, DELTA), 1.0)
    np.testing.assert_allclose(cert.bounds["seeger"], want, rtol=1e-9)


def test_certify_margins_for_parametric_posteriors():
    H, y = problem()
    q = some_posterior(5)
    margins = y * (np.c_[H, -H] @ q)
    kl = R.kl_divergence(q, np.full(10, 0.1))
    cert = certify_margins(margins, kl)
    for name, value in reference(H, y, q).items():
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
    with pytest.raises(ValueError, match="quasi-uniform posterior"):
        certify_margins(margins, kl, bounds=["cbound_quasi_uniform"])


def test_registry_names_and_unknown_bounds():
    assert {"seeger", "pac_bound_2", "cbound_roy2016"} <= set(BOUNDS)
    H, y = problem()
    with pytest.raises(ValueError, match="unknown bound"):
        certify(some_posterior(5), H, y, bounds=["nope"])
    with pytest.raises(ValueError, match="delta"):
        certify(some_posterior(5), H, y, delta=0.0)


def test_every_entry_point_certifies_the_same_posterior_the_same():
    """Issue #20: certify, the estimators' bound(), select_by_bound (one cell: delta / 1) and
    the CLI's columns (the estimators' certificate) agree with the independent reference."""
    from pacbound import sweep
    from pacbound.estimators import CBBoostClassifier
    from pacbound.solvers import cbboost

    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=120) > 0, 1.0, -1.0)
    clf = CBBoostClassifier(n_rounds=8, n_stumps=3).fit(X, y)
    H = np.asarray(clf.voters_.votes(X), np.float64)
    q = clf.posterior_
    want = reference(H, y, q)
    result = cbboost(H, y, 8)
    np.testing.assert_allclose(result.q, q, atol=1e-12)
    selected = sweep.select_by_bound(cbboost, H, y, bound="pac_bound_2", n_rounds=np.array([8]))
    from_certify = certify(result, H, y)
    for name in ("seeger", "pac_bound_2", "cbound_roy2016"):
        for value in (clf.bound(name), from_certify.bounds[name]):
            np.testing.assert_allclose(value, want[name], rtol=1e-9, err_msg=name)
    np.testing.assert_allclose(selected.bounds[0], want["pac_bound_2"], rtol=1e-9)
    table = clf.certificate(DELTA, ["cbound_roy2016", "pac_bound_2"])  # the CLI's columns
    np.testing.assert_allclose(table.bounds["pac_bound_2"], want["pac_bound_2"], rtol=1e-9)
    half = reference(H, y, q, delta=DELTA / 2)
    np.testing.assert_allclose(table.best[1], min(half["cbound_roy2016"], half["pac_bound_2"]))


# ------------------------------------------------------------------ second-order bounds
def strong_problem(m=1500, n=5, seed=3):
    """Voters accurate enough for every second-order bound to be informative (below 1)."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], m)
    right = rng.random((m, n)) < np.linspace(0.75, 0.9, n)
    H = np.where(right, y[:, None], -y[:, None])
    q = np.r_[rng.dirichlet(np.ones(n) * 2), np.zeros(n)] * 0.95 + 0.005
    return H, y, q / q.sum()


def test_every_second_order_bound_equals_the_reference_on_the_same_posterior():
    """TND, its lambda form, CCTND at the best mu, split-kl and CCPBB over the mu grid with
    their union bound, PAC-Bound 2', DIS and PAC-Bound 1' with unlabeled votes: each from
    ``certify`` = the reference's bound of the reference's statistics of the same posterior."""
    H, y, q = strong_problem()
    H_u = np.where(np.random.default_rng(9).random((700, 5)) < 0.5, 1.0, -1.0)
    names = ["tnd", "tnd_lambda", "cctnd", "split_kl", "ccpbb", "pac_bound_2_prime"]
    cert = certify(q, H, y, bounds=[*names, "dis", "pac_bound_1_prime"], H_unlabeled=H_u)
    kl = R.kl_divergence(q, np.full(10, 0.1))
    want = second_order_reference(
        np.c_[H, -H], y, q, kl, DELTA, Hq_unlabeled=np.c_[H_u, -H_u], bounds=("all",)
    )
    assert set(cert.bounds) == set(want)
    for name, value in want.items():
        assert value < 1.0, name  # an informative case
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
    for name in ("split_kl", "ccpbb"):
        assert float(cert.c[name]) in [pytest.approx(mu) for mu in MU_GRID]
    assert cert.majority_vote_risk <= min(cert.bounds.values())


def test_second_order_bounds_of_real_valued_voters_follow_the_margin_forms():
    """Real-valued votes in [-1, 1]: W = (1 - M) / 2 per example; the tandem risk is E[W^2], the
    pairs' losses the bilinear extensions (e_a - mu)(e_b - mu) of the expected errors; CCPBB's
    variance is checked against a pair-by-pair NumPy loop."""
    rng = np.random.default_rng(4)
    m, n = 400, 4
    y = rng.choice([-1.0, 1.0], m)
    H = np.clip(y[:, None] * rng.uniform(-0.3, 1.0, (m, n)), -1, 1)
    q = rng.dirichlet(np.ones(n))
    mu_grid = np.array([-0.2, 0.0, 0.1, 0.25])
    bounds = ["tnd", "cctnd", split_kl_bound(mu_grid), ccpbb_bound(mu_grid)]
    cert = certify(q, H, y, bounds=bounds)
    kl = R.kl_divergence(q, np.full(n, 1 / n))
    errors = (1 - y[:, None] * H) / 2
    W = errors @ q
    g, t = W.mean(), np.mean(W**2)
    np.testing.assert_allclose(cert.bounds["tnd"], S.tnd_bound(t, kl, m, DELTA), rtol=1e-9)
    np.testing.assert_allclose(cert.bounds["cctnd"], best_cctnd(t, g, kl, m, DELTA), rtol=1e-9)
    k = len(mu_grid)
    split, ccpbb = [], []
    for mu in mu_grid:
        pair_loss = (errors[:, :, None] - mu) * (errors[:, None, :] - mu)  # (m, n, n)
        variance = np.einsum("a,b,ab->", q, q, pair_loss.var(axis=0, ddof=1))
        ccpbb.append(S.ccpbb_bound(np.mean((W - mu) ** 2), variance, kl, m, DELTA / k, mu))
        rates = np.mean(W**2), np.mean(2 * W * (1 - W)), np.mean((1 - W) ** 2)
        plus, minus = ((1 - 2 * mu) * rates[0], mu * rates[1]) if mu >= 0 else (
            (1 - mu) * rates[0], -mu * rates[2])  # fmt: skip
        split.append(S.split_kl_tandem_bound(plus, minus, kl, m, DELTA / k, mu))
    np.testing.assert_allclose(cert.bounds["ccpbb"], min(ccpbb), rtol=1e-9)
    np.testing.assert_allclose(cert.bounds["split_kl"], min(split), rtol=1e-9)


def test_unlabeled_bounds_join_the_defaults_only_with_unlabeled_votes():
    H, y, q = strong_problem(m=300)
    assert not {"dis", "pac_bound_1_prime", "ccpbb", "tnd_lambda"} & set(DEFAULT_BOUNDS)
    assert {"tnd", "cctnd", "split_kl", "pac_bound_2_prime"} <= set(DEFAULT_BOUNDS)
    plain = certify(q, H, y)
    assert not {"dis", "pac_bound_1_prime"} & set(plain.bounds)
    H_u = np.r_[H, -H[:50]]  # the labeled votes may be pooled with the unlabeled ones
    pooled = certify(q, H, y, H_unlabeled=H_u)
    assert {"dis", "pac_bound_1_prime"} <= set(pooled.bounds)
    for name in plain.bounds:
        np.testing.assert_allclose(pooled.bounds[name], plain.bounds[name], rtol=1e-12)
    np.testing.assert_allclose(pooled.statistics.m_unlabeled, len(H_u))
    with pytest.raises(ValueError, match="H_unlabeled"):
        certify(q, H, y, bounds=["dis"])
    with pytest.raises(ValueError, match="H_unlabeled"):
        certify(q, H, y, H_unlabeled=H_u[:, :3])
    margins = y * (np.c_[H, -H] @ q)
    for name in ("ccpbb", "dis"):
        with pytest.raises(ValueError, match="certify it with"):
            certify_margins(margins, 0.5, bounds=[name])


# pac_bound_2_prime reads the margin statistics only, as tnd and cctnd do (its float32 and
# float64 values: test_second_order_certified): traced again in the thorough tier
@pytest.mark.parametrize(
    "names",
    [
        pytest.param(["tnd", "cctnd", "split_kl", "ccpbb", "dis"], id="default"),
        pytest.param(["pac_bound_2_prime"], id="pac_bound_2_prime", marks=pytest.mark.thorough),
    ],
)
def test_traced_second_order_certificate_equals_the_concrete_one(names):
    H, y, q = strong_problem(m=300)
    H_u = H[:100]
    concrete = certify(q, H, y, bounds=names, H_unlabeled=H_u)
    traced = jax.jit(lambda q: certify(q, H, y, bounds=names, H_unlabeled=H_u).bounds)(q)
    for name in names:
        np.testing.assert_allclose(traced[name], concrete.bounds[name], rtol=1e-10, err_msg=name)
    if "ccpbb" in names:
        batch = jax.vmap(lambda q: certify(q, H, y, bounds=["ccpbb", "tnd"]).bounds)(
            np.stack([q, q])
        )
        np.testing.assert_allclose(batch["ccpbb"], concrete.bounds["ccpbb"], rtol=1e-10)


def test_registered_values_are_raw_for_minimizers_and_clipped_in_certificates():
    """The objective of the minimizers is the unclipped bound (a slope above 1); the certificate
    is clipped at 1; split-kl's minimizer moves mu linearly inside the grid's range."""
    H, y = problem(m=60)
    q = some_posterior(5)
    cert = certify(q, H, y, bounds=["tnd", "split_kl", "cctnd"])
    for name in ("tnd", "split_kl", "cctnd"):
        assert float(cert.bounds[name]) == 1.0
        stats = cert.statistics
        raw = bound_value(split_kl_bound() if name == "split_kl" else _named(name), stats, DELTA)
        assert float(raw) > 1.0, name
    split = split_kl_bound(np.array([-0.2, 0.3]))
    stats = cert.statistics
    at_low = bound_value(split, stats, DELTA, log_c=-5.0)  # mu clipped to -0.2, not exp(-5)
    np.testing.assert_allclose(at_low, bound_value(split, stats, DELTA, log_c=-0.2), rtol=1e-12)
    with pytest.raises(ValueError, match="< 1/2"):
        split_kl_bound([0.1, 0.5])


def _named(name):
    from pacbound._src.certify import as_bound

    return as_bound(name)


def test_a_bound_needing_a_statistic_certify_does_not_compute_is_refused():
    spec = BoundSpec("needs_labels_twice", lambda b, s, dl, c: s.mu1, "none", needs=("labels2",))
    with pytest.raises(ValueError, match="certify computes only"):
        register_bound(spec)
    assert "needs_labels_twice" not in BOUNDS
