"""The one certificate: every bound of the registry against an independent NumPy recomputation,
float64 whatever the precision mode, posteriors validated (issue #20 items 4 and 7), traced
certificates flagged, 0/1 fold masks, matrix-free priors, the union bound of ``best``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound.certify import BOUNDS, DEFAULT_BOUNDS, certify, certify_margins
from tests.reference import bounds_numpy as R

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
    }
    return {k: min(v, 1.0) for k, v in values.items()}


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


def test_float64_certificate_whatever_the_precision_mode():
    """Issue #20: with x64 off (the users' default) a concrete certificate is still float64."""
    H, y = problem()
    q = some_posterior(5)
    want = reference(H, y, q.astype(np.float32).astype(np.float64))
    with jax.enable_x64(False):
        cert = certify(q.astype(np.float32), H.astype(np.float32), y.astype(np.float32))
        traced = jax.jit(lambda q: certify(q, H, y).bounds)(jnp.asarray(q, jnp.float32))
    for name, value in want.items():
        assert cert.bounds[name].dtype == np.float64
        np.testing.assert_allclose(cert.bounds[name], value, rtol=1e-9, err_msg=name)
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


def test_under_jit_an_invalid_posterior_is_flagged_and_gets_trivial_bounds():
    H, y = problem()
    q = jnp.asarray(some_posterior(5))
    bad = jax.jit(lambda q: certify(2 * q, H, y))(q)
    good = jax.jit(lambda q: certify(q, H, y))(q)
    assert not bad.valid and good.valid
    assert all(float(v) == 1.0 for v in bad.bounds.values())
    concrete = certify(q, H, y)
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
    from pacbound.solvers.protocol import LearnerResult
    from pacbound.voters import Stumps, votes

    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    stumps = Stumps(jnp.array([0, 1], jnp.int32), jnp.array([0.0, 0.5]))
    q = np.array([0.7, 0.0, 0.0, 0.3])  # +h_0 and -h_1

    class Info(tuple):
        n_candidates = 597  # d (m - 1) candidate stumps

    result = LearnerResult(q, q[:2] - q[2:], 0.0, 2, True, stumps, Info())
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
