"""The C-bound's PAC-Bayes forms (Viallard, Germain, Habrard, Morvant, ECML-PKDD 2021) on an
ensemble's vote of any number of classes, out of bag: against an independent NumPy / SciPy
reference (float64 and float32), certified against mpmath / long double, equal to the binary
bounds of :mod:`pacbound.bounds` for two classes on a held-out set, above the empirical vote
risk, differentiable, and lowered by their minimizers on a small multiclass forest."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import bounds as B
from pacbound._src import ensemble_bounds as EB
from pacbound._src import second_order_minimize as som
from pacbound._src.bounds import second_order as so
from tests.reference import cbound_forms_numpy as R

DELTA = 0.05
FORMS = ("cbound_seeger", "cbound_mcallester", "cbound_joint")


def _votes(m=900, n=8, classes=4, seed=0, oob=True):
    """Voters right with probability 0.75-0.95, else a random other class; ~45% out of bag."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, m)
    right = rng.random((m, n)) < rng.uniform(0.75, 0.95, n)
    other = (y[:, None] + rng.integers(1, classes, (m, n))) % classes
    predictions = np.where(right, y[:, None], other).astype(np.int32)
    mask = rng.random((m, n)) < 0.45 if oob else None
    return predictions, y, mask


def _reference(stats, rho, delta=DELTA):
    g, e, d, kl = R.posterior_statistics(stats, rho)
    n, n2 = stats["n"], stats["n2"]
    values = {
        "cbound_seeger": R.seeger(g, d, kl, n, n2, delta),
        "cbound_mcallester": R.mcallester(g, d, kl, n, n2, delta),
        "cbound_joint": R.joint(e, d, kl, n2, delta),
    }
    return values, (g, e, d, kl)


@pytest.mark.parametrize("oob", [True, False], ids=["oob", "held_out"])
def test_float64_matches_the_reference_and_is_certified(oob):
    predictions, y, mask = _votes(oob=oob)
    statistics = EB.ensemble_statistics(predictions, y, 4, mask=mask)
    stats = R.pair_statistics(predictions, y, mask)
    assert (statistics.n, statistics.n2) == (stats["n"], stats["n2"])
    assert oob == (stats["n2"] < stats["n"] < len(y))
    rng = np.random.default_rng(3)
    for rho in (np.full(8, 1 / 8), rng.dirichlet(np.ones(8))):
        cert = EB.certify_ensemble(statistics, rho, bounds=FORMS)
        expected, (g, e, d, kl) = _reference(stats, rho)
        np.testing.assert_allclose(cert.gibbs_risk, g, rtol=1e-12)
        np.testing.assert_allclose(cert.tandem_risk, e, rtol=1e-12)
        assert max(cert.bounds.values()) < 0.99  # informative: the test compares real values
        for name in FORMS:
            np.testing.assert_allclose(cert.bounds[name], expected[name], rtol=0, atol=1e-9)
        # certified: never below the exact value (mpmath at 50 digits; long double for the sup)
        n, n2 = statistics.n, statistics.n2
        assert cert.bounds["cbound_seeger"] >= R.ld_seeger(g, d, kl, n, n2, DELTA)
        assert cert.bounds["cbound_mcallester"] >= R.ld_mcallester(g, d, kl, n, n2, DELTA)
        assert cert.bounds["cbound_joint"] >= R.ld_joint(e, d, kl, n2, DELTA)
        assert d <= 2 * (np.sqrt(e) - e) + 1e-12 or oob  # r^2 <= e (held out, exactly)


def test_float32_matches_the_reference_and_is_certified():
    rng = np.random.default_rng(7)
    for _ in range(4):
        w = rng.beta(1.0, 5.0, size=500)  # the erring weight W at each example
        g, e = float(w.mean()), float((w**2).mean())
        d, kl = 2 * (g - e), float(rng.uniform(0.0, 1.0))
        n, n2 = int(rng.integers(400, 900)), int(rng.integers(150, 400))
        f32 = [np.float32(x) for x in (g, e, d, kl)]
        g, e, d, kl = (float(x) for x in f32)  # the reference at the float32 inputs
        got = {
            "cbound_seeger": so.cbound_seeger(f32[0], f32[2], f32[3], n, n2, np.float32(DELTA)),
            "cbound_mcallester": so.cbound_mcallester(
                f32[0], f32[2], f32[3], n, n2, np.float32(DELTA)
            ),
            "cbound_joint": so.cbound_joint(f32[1], f32[2], f32[3], n2, np.float32(DELTA)),
        }
        delta = float(np.float32(DELTA))
        expected = {
            "cbound_seeger": R.seeger(g, d, kl, n, n2, delta),
            "cbound_mcallester": R.mcallester(g, d, kl, n, n2, delta),
            "cbound_joint": R.joint(e, d, kl, n2, delta),
        }
        lower = {
            "cbound_seeger": R.ld_seeger(g, d, kl, n, n2, delta),
            "cbound_mcallester": R.ld_mcallester(g, d, kl, n, n2, delta),
            "cbound_joint": R.ld_joint(e, d, kl, n2, delta),
        }
        for name in FORMS:
            assert got[name].dtype == jnp.float32
            np.testing.assert_allclose(float(got[name]), expected[name], atol=1e-5, err_msg=name)
            assert float(got[name]) >= lower[name], name


def test_two_classes_on_a_held_out_set_are_the_binary_bounds():
    """n = n2 = m: Seeger = PAC-Bound 1 (the same formula; never below it, equal to the last
    ulps: its levels carry one more rounding), McAllester = roy2016 Thm 2 at mu1 = 1 - 2r, mu2
    = 1 - 2d (the same formula, other roundings), joint = PAC-Bound 2 (e = r - d/2 there)."""
    predictions, y, _ = _votes(m=700, classes=2, oob=False)
    statistics = EB.ensemble_statistics(predictions, y, 2)
    m = len(y)
    assert (statistics.n, statistics.n2) == (m, m)
    H = np.where(predictions == 1, 1.0, -1.0)
    for rho in (np.full(8, 1 / 8), np.random.default_rng(4).dirichlet(np.ones(8))):
        cert = EB.certify_ensemble(statistics, rho, bounds=FORMS)
        margins = np.where(y == 1, 1.0, -1.0) * (H @ rho)
        mu1, mu2 = margins.mean(), (margins**2).mean()
        r, d, kl = (1 - mu1) / 2, (1 - mu2) / 2, cert.kl
        with jax.enable_x64(True):
            r, d, kl, mu1, mu2, delta = (jnp.float64(x) for x in (r, d, kl, mu1, mu2, DELTA))
            seeger = float(so.cbound_seeger(r, d, kl, m, m, delta))
            binary = {
                "cbound_seeger": float(B.pac_bound_1(r, d, kl, m, delta)),
                "cbound_mcallester": float(B.cbound_roy2016(mu1, mu2, kl, m, delta)),
                "cbound_joint": float(B.pac_bound_2(r, d, kl, m, delta)),
            }
            assert binary["cbound_seeger"] <= seeger <= binary["cbound_seeger"] + 1e-15
        for name in FORMS:
            np.testing.assert_allclose(cert.bounds[name], binary[name], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", [0, 1])
def test_on_a_held_out_set_each_form_is_above_the_empirical_vote_risk(seed):
    predictions, y, _ = _votes(m=200, seed=seed, oob=False)
    statistics = EB.ensemble_statistics(predictions, y, 4)
    rng = np.random.default_rng(seed)
    for rho in (np.full(8, 1 / 8), rng.dirichlet(0.3 * np.ones(8))):
        risk = EB.majority_vote_risk(predictions, y, rho, 4)
        cert = EB.certify_ensemble(statistics, rho, bounds=FORMS)
        g, t = cert.gibbs_risk, cert.tandem_risk
        empirical = 1 - (1 - 2 * g) ** 2 / (1 - 4 * g + 4 * t)  # the relaxed multiclass C-bound
        assert risk <= empirical + 1e-12
        for name in FORMS:
            assert cert.bounds[name] >= empirical - 1e-12, name


def test_gradients_are_finite_informative_or_vacuous():
    """The minimizer's objectives near a vertex, and at n = n2 = 3, where every form is
    vacuous: the value 1 with the first-order bound's direction (not the flat 0 of the clipped
    C-bound). The joint form's informative gradient is the envelope theorem's (tested with
    ``cbound_trinomial_sup``); its minimizer runs on it (``test_each_minimizer_...``)."""
    predictions, y, mask = _votes(m=400)
    statistics = EB.ensemble_statistics(predictions, y, 4, mask=mask)
    stats = jax.tree.map(jnp.asarray, statistics.stats)
    log_prior = jnp.log(jnp.full(8, 1 / 8, jnp.float32))
    vertex = jnp.array([9.0, 0, 0, 0, 0, 0, 0, -9.0])
    for (n, n2), theta in (((statistics.n, statistics.n2), vertex), ((3, 3), jnp.zeros(8))):
        data = som.bound_data(stats, n, n2, jnp.float32(DELTA))
        for name in FORMS if n == 3 else FORMS[:2]:  # the vacuous joint form: no NaN leaks

            def bound(theta, name=name, data=data):
                return som.OBJECTIVES[name](*som._posterior_and_kl(theta, log_prior), data)

            value, grad = jax.value_and_grad(bound)(theta)
            assert bool(jnp.isfinite(grad).all()), (name, n)
            assert (float(value) == 1.0) == (n == 3), (name, n)
            assert float(jnp.abs(grad).max()) > 0, (name, n)


@pytest.fixture(scope="module")
def digits_forest():
    datasets = pytest.importorskip("sklearn.datasets")
    ensemble = pytest.importorskip("sklearn.ensemble")
    from pacbound._src.voters.ensembles import ensemble_voters

    X, y = datasets.load_digits(return_X_y=True)
    forest = ensemble.RandomForestClassifier(12, random_state=0).fit(X, y)
    voters = ensemble_voters(forest, X, y)
    return EB.ensemble_statistics(voters.predictions, voters.labels, 10, mask=voters.oob_mask)


def test_each_minimizer_lowers_its_bound_on_a_multiclass_forest(digits_forest):
    """The direct C-bound minimization of [VGHM21] on a 10-class forest, out of bag."""
    uniform = EB.certify_ensemble(digits_forest, np.full(12, 1 / 12))  # every bound
    assert digits_forest.n2 < digits_forest.n
    for name in FORMS:
        result = EB.optimize_posterior(digits_forest, name, steps=150)
        rho = np.asarray(result.rho, np.float64)
        cert = EB.certify_ensemble(digits_forest, rho / rho.sum())
        assert cert.bounds[name] < uniform.bounds[name] - 1e-3, (name, cert.bounds, uniform)
        np.testing.assert_allclose(cert.bounds[name], float(result.bound), atol=2e-4)
        assert np.isfinite(np.asarray(result.values)).all() and np.isfinite(rho).all()
        assert float(result.values[0]) == pytest.approx(uniform.bounds[name], abs=2e-4)


def test_the_forms_are_in_bounds_and_refuse_bad_arguments():
    assert set(FORMS) <= set(EB.BOUNDS) and set(FORMS) <= set(som.OBJECTIVES)
    with pytest.raises(ValueError, match="delta"):
        so.cbound_seeger(0.2, 0.3, 1.0, 100, 50, 0.0)
    with pytest.raises(ValueError, match="n2"):
        so.cbound_joint(0.1, 0.3, 1.0, 0, 0.05)
    # an out-of-bag split rate above 1/2: clipped (Seeger, McAllester), trivial (joint)
    assert float(so.cbound_joint(0.1, 0.6, 0.0, 1000, 0.05)) == 1.0
    clipped = float(so.cbound_seeger(0.1, 0.5, 0.0, 1000, 1000, 0.05))
    assert float(so.cbound_seeger(0.1, 0.7, 0.0, 1000, 1000, 0.05)) == clipped


def test_the_constants_allow_the_smaller_out_of_bag_sizes():
    """The module's reason for n = min_j n_j and n2 = min n_jk: c(n)^(1/n) decreases in n for
    each constant c(n) = 2 xi(n), xi(n) + n, 4 sqrt(n) (so c(n_j)^(n / n_j) <= c(n))."""
    from tests.reference.bounds_numpy import log_xi

    n = np.arange(1, 3001)
    logs = np.array([log_xi(k) for k in n])
    for log_c in (np.log(2) + logs, np.log(np.exp(logs) + n), np.log(4 * np.sqrt(n))):
        assert (np.diff(log_c / n) < 0).all()


def test_forest_classifier_learns_a_c_bound_posterior_binary_and_multiclass():
    pytest.importorskip("sklearn")
    from pacbound.estimators import ForestClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4))
    score = X[:, 0] + 0.7 * X[:, 1] + 0.1 * rng.normal(size=900)
    for n_classes in (2, 3):
        y = np.digitize(score, np.linspace(-0.6, 0.6, n_classes - 1))
        # 12 trees, 150 steps: the programs of the digits forest's test, compiled once
        clf = ForestClassifier("rf", 12, objective="cbound_seeger", max_iter=150, random_state=0)
        clf.fit(X, y)
        cert = clf.certificate()
        assert set(FORMS) <= set(cert.bounds) and clf.bound_ == cert.bounds["cbound_seeger"]
        uniform = clf.certificate(rho=np.full(12, 1 / 12)).bounds["cbound_seeger"]
        assert clf.bound_ < uniform < 1 and clf.score(X, y) > 0.8, (n_classes, clf.bound_)
