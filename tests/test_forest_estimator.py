"""ForestClassifier: fits, predicts and certifies forests of any number of classes, out of bag
or on a held-out part; boundary checks. Small forests (10 trees, 100-200 examples)."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.base import clone

from pacbound._src.ensemble_bounds import majority_vote_risk
from pacbound._src.voters.ensembles import ensemble_predictions
from pacbound.datasets import stratified_split
from pacbound.estimators import ForestClassifier

pytestmark = [
    pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores"),
    pytest.mark.filterwarnings("ignore:invalid value encountered in divide"),
]


def _data(n_classes=2, m=200, seed=0, names=None, noise=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    score = X[:, 0] + 0.7 * X[:, 1] + noise * rng.normal(size=m)
    y = np.digitize(score, np.linspace(-0.6, 0.6, n_classes - 1))
    return X, (y if names is None else np.asarray(names)[y])


@pytest.mark.parametrize("ensemble", ["rf", "extra", "bagging"])
def test_fits_predicts_and_certifies_binary_and_multiclass(ensemble):
    for n_classes, names in ((2, None), (3, ["cat", "dog", "eel"])):
        X, y = _data(n_classes, m=800, names=names, noise=0.1)  # bounds below 1
        clf = ForestClassifier(ensemble, 10, objective="tnd", random_state=0).fit(X, y)
        assert clf.classes_.tolist() == sorted(set(y.tolist()))
        proba = clf.predict_proba(X[:20])
        assert proba.shape == (20, n_classes)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(clf.predict(X[:20]), clf.classes_[proba.argmax(axis=1)])
        assert clf.score(X, y) > 0.8
        np.testing.assert_allclose(clf.rho_.sum(), 1.0, atol=1e-12)
        assert clf.rho_.shape == (10,) and (clf.rho_ >= 0).all()
        cert = clf.certificate()
        assert set(cert.bounds) == {
            "first_order", "tnd", "cctnd", "ccpbb", "split_kl",
            "cbound_seeger", "cbound_mcallester", "cbound_joint",
        }  # fmt: skip
        assert clf.bound_ == cert.bounds["tnd"] == clf.bound("tnd")
        assert cert.bounds["tnd"] >= min(1.0, 4 * cert.tandem_risk)  # kl^-1 >= empirical
        assert cert.bounds["first_order"] >= min(1.0, 2 * cert.gibbs_risk)
        uniform = clf.certificate(rho=np.full(10, 0.1))
        assert cert.bounds["tnd"] < uniform.bounds["tnd"] < 1 and cert.kl > 0  # improved
        assert (cert.n, cert.n2) == (clf.statistics_.n, clf.statistics_.n2)
        assert 0.2 * len(y) < cert.n and cert.n2 <= cert.n and clf.fit_time_ > 0


def test_the_uniform_posterior_is_the_trees_hard_vote():
    X, y = _data(3)
    clf = ForestClassifier("rf", 10, objective="uniform", random_state=1).fit(X, y)
    np.testing.assert_array_equal(clf.rho_, np.full(10, 0.1))
    assert clf.bound_ is None and clf.bound() == clf.certificate().bounds["tnd"]
    votes = ensemble_predictions(clf.forest_, X)
    counts = np.stack([(votes == c).sum(axis=1) for c in range(3)], axis=1)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[counts.argmax(axis=1)])


def test_held_out_bounds_are_above_the_held_out_vote_risk():
    """On a held-out part every voter sees, the theory's inequalities hold for the empirical
    distribution: every bound >= the held-out risk of the vote (a tie as an error)."""
    X, y = _data(3, m=1000, seed=2, noise=0.1)
    clf = ForestClassifier("rf", 10, objective="cctnd", oob=0.4, random_state=0).fit(X, y)
    assert clf.statistics_.n == clf.statistics_.n2 == 400  # 40% of 1000
    train, held_out = stratified_split(y, 0.6, seed=0)  # the estimator's split
    assert clf.forest_.estimators_[0].tree_.weighted_n_node_samples[0] == len(train) == 600
    predictions = ensemble_predictions(clf.forest_, X[held_out])
    labels = np.searchsorted(clf.classes_, y[held_out])
    for rho in (clf.rho_, np.full(10, 0.1)):
        risk = majority_vote_risk(predictions, labels, rho, 3)
        bounds = clf.certificate(rho=rho).bounds
        assert all(risk <= v <= 1 for v in bounds.values()), (risk, bounds)
        assert all(v < 0.7 for k, v in bounds.items() if not k.startswith("cbound")), bounds


def test_dis_with_unlabeled_inputs():
    X, y = _data(2, m=240)
    X_u = _data(2, m=100, seed=3)[0]
    clf = ForestClassifier("rf", 10, objective="dis", random_state=0).fit(X, y, X_unlabeled=X_u)
    cert = clf.certificate()
    assert "dis" in cert.bounds and clf.bound_ == cert.bounds["dis"]
    assert clf.statistics_.m_unlabeled > 100  # the unlabeled rows and the OOB pairs
    with pytest.raises(ValueError, match="binary votes"):
        ForestClassifier("rf", 10).fit(*_data(3), X_unlabeled=X_u)


def test_parameters_clone_and_bad_input():
    X, y = _data(2, m=100)
    clf = ForestClassifier("bagging", 10, objective="split_kl", delta=0.1, random_state=0)
    assert clone(clf).get_params() == clf.get_params()
    bad = [
        ({"objective": "c_bound"}, "objective must be one of"),
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"oob": 1.5}, "oob must be True or a held-out fraction"),
        ({"oob": False}, "oob must be True or a held-out fraction"),
        ({"ensemble": "boosting"}, "ensemble must be one of"),
        ({"n_estimators": 0}, "n_estimators must be an integer >= 1"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"ensemble_params": {"bootstrap": False}}, "bootstrap=False"),
    ]
    for params, message in bad:
        with pytest.raises(ValueError, match=message):
            ForestClassifier(**{"n_estimators": 10, **params}).fit(X, y)
    with pytest.raises(ValueError, match=r"one class only|1 class"):
        ForestClassifier(n_estimators=10).fit(X, np.zeros(100))
    fitted = ForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="sum to 1"):
        fitted.certificate(rho=np.full(10, 0.2))
    with pytest.raises(ValueError, match="delta"):
        fitted.bound("tnd", delta=0.0)
    with pytest.raises(ValueError, match="distinct bounds among"):
        fitted.bound("pac_bound_2")
    with pytest.raises(ValueError, match="features"):
        fitted.predict(X[:, :3])
