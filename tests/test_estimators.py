"""The scikit-learn estimators: save/load, pipelines, bounds, bad input.

Every test reuses one small problem (60 x 4, 3 stumps per feature) so each solver compiles
for few shapes. scikit-learn's ``check_estimator`` runs in tests/test_estimator_checks.py.
"""

import inspect
import logging
import warnings

import jax
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pacbound import estimators
from pacbound._src.estimators.base import BOUND_KINDS
from pacbound.estimators import (
    ESTIMATORS,
    AdaBoostClassifier,
    CBBoostClassifier,
    ForestClassifier,
    MajorityVoteClassifier,
    MinCqClassifier,
    RBFVoters,
    StumpVoters,
)

SMALL = {
    "mincq": {},
    "cqboost": {"max_columns": 5},
    "cbboost": {"n_rounds": 5},
    "gbcbboost": {"n_rounds": 5},
    "klboost": {"max_iter": 20},
    "vebboost": {"n_rounds": 5},
    "bound": {"max_iter": 20, "objective": "seeger"},  # PAC-Bound 2 compiles for ~25 s
    "adaboost": {"n_rounds": 5},
    "mdboost": {"max_columns": 5},
    "lpboost": {"max_columns": 5},
    "cgboost": {"max_columns": 5},
}


def small(name: str, **kwargs):
    return ESTIMATORS[name](n_stumps=3, **{**SMALL[name], **kwargs})


# ------------------------------------------------------------------------- data
def _data(m=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=m) > 0, "spam", "ham")
    return X, y


X, Y = _data()
X_TEST, Y_TEST = _data(40, seed=1)


def test_labels_any_two_classes_and_vote_sign():
    clf = small("cbboost").fit(X, Y)
    assert clf.classes_.tolist() == ["ham", "spam"]
    decision = clf.decision_function(X_TEST)
    np.testing.assert_array_equal(clf.predict(X_TEST), np.where(decision > 0, "spam", "ham"))
    assert clf.score(X_TEST, Y_TEST) >= 0.75
    q = clf.posterior_
    assert q.shape == (2 * 4 * 3,) and np.isclose(q.sum(), 1) and (q >= 0).all()
    assert clf.n_voters_ == np.count_nonzero(q) and clf.fit_time_ > 0


# a first-order, a C-bound and a second-order bound (each kind compiles apart; every kind is
# checked against its reference in its own module): the default certificate, every kind
# (PAC-Bound 2's two forms compile for ~25 s each), under -m thorough
FAST_KINDS = ["seeger", "cbound_roy2016", "tnd"]


@pytest.mark.parametrize(
    ("name", "kinds"),
    [
        ("cbboost", FAST_KINDS),
        pytest.param("cbboost", None, marks=pytest.mark.thorough),
        pytest.param("adaboost", None, marks=pytest.mark.thorough),
    ],
)
def test_bounds_upper_bound_the_training_risk(name, kinds):
    """Each kind bounds R(B_Q); on the training sample it is above the empirical C-bound or
    twice the Gibbs risk, both above the empirical majority-vote risk."""
    clf = small(name).fit(X, Y)
    risk = np.mean(clf.predict(X) != Y)
    assert clf.train_stats_.risk == pytest.approx(risk)
    certificate = clf.certificate(0.05, kinds)
    values = {kind: float(v) for kind, v in certificate.bounds.items()}
    want = set(BOUND_KINDS) - {"cbound_quasi_uniform"}  # by default, not quasi-uniform
    assert set(values) == (want if kinds is None else set(kinds))
    for kind, value in values.items():
        assert risk <= value <= 1.0, kind
        assert clf.bound(kind, 0.05) == value
    assert certificate.best[1] >= min(values.values())  # the union bound's delta / K
    assert clf.bound("cbound_roy2016", 0.5) <= values["cbound_roy2016"]  # larger delta, smaller


def test_bound_arguments_are_checked():
    clf = small("adaboost").fit(X, Y)
    with pytest.raises(ValueError, match="unknown bound kind 'mcallester'"):
        clf.bound("mcallester")
    with pytest.raises(ValueError, match=r"delta must be finite and lie in \(0, 1\]"):
        clf.bound(delta=0.0)
    with pytest.raises(ValueError, match="quasi-uniform"):
        clf.bound("cbound_quasi_uniform")


def _forest(**kwargs):
    return ForestClassifier("rf", 5, max_iter=20, random_state=0, **kwargs)


ROUND_TRIPS = [
    *((name, lambda name=name: small(name)) for name in ESTIMATORS),
    ("cbboost-rbf", lambda: small("cbboost", voters=RBFVoters(gamma=1.0))),
    ("adaboost-stumps2", lambda: small("adaboost", voters=StumpVoters(2))),
    ("forest", _forest),
    ("forest-bagging", lambda: ForestClassifier("bagging", 5, max_iter=20, random_state=0)),
]


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("make", [m for _, m in ROUND_TRIPS], ids=[n for n, _ in ROUND_TRIPS])
def test_save_load_round_trip_is_exact(tmp_path, make):
    """Every estimator (ESTIMATORS and ForestClassifier): the reloaded one predicts and
    certifies exactly as the saved one."""
    clf = make().fit(X, Y)
    path = tmp_path / "model.npz"
    clf.save(path)
    back = type(clf).load(path)
    assert type(back) is type(clf) and repr(back) == repr(clf)
    np.testing.assert_array_equal(back.predict(X_TEST), clf.predict(X_TEST))
    if isinstance(clf, ForestClassifier):
        np.testing.assert_array_equal(back.rho_, clf.rho_)
        np.testing.assert_array_equal(back.predict_proba(X_TEST), clf.predict_proba(X_TEST))
        kinds = ["first_order", "tnd"]  # each kind compiles apart: two are enough here
        certificates = back.certificate(bounds=kinds), clf.certificate(bounds=kinds)
        assert certificates[0].bounds == certificates[1].bounds and back.bound_ == clf.bound_
        assert certificates[0].best == certificates[1].best and back.n_iter_ == clf.n_iter_
        return
    np.testing.assert_array_equal(back.posterior_, clf.posterior_)
    assert back.posterior_.dtype == clf.posterior_.dtype
    np.testing.assert_array_equal(back.decision_function(X_TEST), clf.decision_function(X_TEST))
    assert back.train_stats_ == clf.train_stats_ and back.n_voters_ == clf.n_voters_
    assert (back.n_iter_, back.converged_) == (clf.n_iter_, clf.converged_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RBF voters centred on the sample: no guarantee
        certificates = back.certificate(0.05, FAST_KINDS), clf.certificate(0.05, FAST_KINDS)
    assert certificates[0].bounds == certificates[1].bounds
    assert certificates[0].best == certificates[1].best
    assert type(MajorityVoteClassifier.load(path)) is type(clf)  # any class from the base


def test_sample_dependent_voters_warn_that_the_bound_is_no_guarantee():
    clf = small("cbboost", voters=RBFVoters(gamma=1.0)).fit(X, Y)
    with pytest.warns(UserWarning, match="built from the training examples"):
        clf.bound("seeger")


@pytest.mark.parametrize("name", ["cbboost", "adaboost"])
def test_staged_votes_are_the_shorter_runs(tmp_path, name):
    clf = small(name, n_rounds=12).fit(X, Y)
    stages = np.stack(list(clf.staged_decision_function(X_TEST)))
    assert stages.shape == (12, len(X_TEST))
    np.testing.assert_allclose(stages[-1], clf.decision_function(X_TEST), atol=1e-6)
    for rounds in (1, 5):
        shorter = small(name, n_rounds=rounds).fit(X, Y).decision_function(X_TEST)
        np.testing.assert_allclose(stages[rounds - 1], shorter, atol=1e-6)
    clf.save(tmp_path / "model.npz")
    back = type(clf).load(tmp_path / "model.npz")
    np.testing.assert_array_equal(np.stack(list(back.staged_decision_function(X_TEST))), stages)


def test_load_refuses_other_classes_and_files(tmp_path):
    path = tmp_path / "model.npz"
    small("adaboost").fit(X, Y).save(path)
    with pytest.raises(ValueError, match="holds a AdaBoostClassifier, not a MinCqClassifier"):
        MinCqClassifier.load(path)
    np.savez(tmp_path / "other.npz", metadata=np.array("{}"))
    with pytest.raises(ValueError, match="not a saved pacbound estimator"):
        MajorityVoteClassifier.load(tmp_path / "other.npz")


class _SignVoters:
    """A custom voter set: the signs of the features."""

    def fit(self, X, y):
        return self

    def votes(self, X):
        return np.where(X > 0, 1.0, -1.0)


def test_custom_voters_fit_but_do_not_save(tmp_path):
    clf = small("adaboost", voters=_SignVoters()).fit(X, Y)
    assert clf.posterior_.shape == (8,) and clf.score(X_TEST, Y_TEST) > 0.7
    with pytest.raises(ValueError, match="save supports the voter sets"):
        clf.save(tmp_path / "model.npz")


def test_pipeline_and_grid_search():
    pipe = make_pipeline(StandardScaler(), small("adaboost"))
    search = GridSearchCV(pipe, {"adaboostclassifier__n_stumps": [2, 3]}, cv=3)
    search.fit(X, Y)
    # the criterion computed here: each n_stumps' mean accuracy over the same 3 stratified folds
    grid = (2, 3)
    pipes = [clone(pipe).set_params(adaboostclassifier__n_stumps=k) for k in grid]
    scores = np.mean([cross_val_score(p, X, Y, cv=3) for p in pipes], axis=1)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], scores)
    assert search.best_params_["adaboostclassifier__n_stumps"] == grid[np.argmax(scores)]
    assert search.score(X_TEST, Y_TEST) > 0.7


def _compilations(caplog, fit) -> int:
    caplog.clear()
    with jax.log_compiles(), caplog.at_level(logging.WARNING):
        fit()
    return sum("Compiling" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("name", "values"),
    [("mincq", {"mu": (0.05, 0.08)}), ("klboost", {"C": (1.0, 3.0), "gamma": (1.0, 0.5)}),
     pytest.param("cqboost", {"mu": (0.05, 0.08)}, marks=pytest.mark.slow),
     ("vebboost", {"lam": (0.5, 0.2)})],
)  # fmt: skip
def test_new_hyperparameter_values_do_not_recompile(caplog, name, values):
    first = {k: v[0] for k, v in values.items()}
    second = {k: v[1] for k, v in values.items()}
    small(name, **first).fit(X, Y)
    assert _compilations(caplog, lambda: small(name, **second).fit(X, Y)) == 0


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (
            np.arange(60) % 3,
            "Only binary classification is supported.*3 labels found: \\[0, 1, 2\\]",
        ),
        (np.zeros(60), r"one class only \(labels found: \[0.0\]\)"),
        (np.linspace(0, 1, 60), "Unknown label type"),
    ],
)
def test_bad_labels(y, match):
    with pytest.raises(ValueError, match=match):
        small("adaboost").fit(X, y)


def test_bad_inputs():
    clf = small("cbboost")
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(bad, Y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(X, Y[:-1])
    with pytest.raises(ValueError, match=r"could not convert|dtype"):
        clf.fit(np.full((60, 4), "a"), Y)
    with pytest.raises(ValueError, match="Expected 2D array"):
        clf.fit(X[:, 0], Y)
    with pytest.raises(ValueError, match="one class only have non-zero sample_weight"):
        clf.fit(X, Y, sample_weight=(Y == "spam").astype(float))
    with pytest.raises(ValueError, match="voters must be 'stumps', 'rbf' or a voter set"):
        small("cbboost", voters="trees").fit(X, Y)
    with pytest.raises(ValueError, match="AdaBoostClassifier needs binary"):
        small("adaboost", voters=RBFVoters()).fit(X, Y)
    fitted = clf.fit(X, Y)
    with pytest.raises(ValueError, match="X has 3 features, but CBBoostClassifier is expecting 4"):
        fitted.predict(X[:, :3])


def test_mu_out_of_reach_is_named():
    with pytest.raises(ValueError, match="largest realizable mu is"):
        small("mincq", mu=0.99).fit(X, Y)


def test_iterative_learners_report_convergence():
    capped = small("klboost", max_iter=1).fit(X, Y)
    assert (capped.n_iter_, capped.converged_) == (1, False)
    fitted = small("klboost").fit(X, Y)
    assert fitted.converged_ and 1 <= fitted.n_iter_ < fitted.max_iter
    assert small("mincq").fit(X, Y).converged_


def test_registry_and_fit_signatures():
    assert set(ESTIMATORS) == set(SMALL)
    weighted = {n for n, c in ESTIMATORS.items() if "sample_weight" in c.fit.__code__.co_varnames}
    assert weighted == set(ESTIMATORS)  # the bound minimizer too: a zero weight drops an example
    assert estimators.CBBoostClassifier is CBBoostClassifier
    assert isinstance(AdaBoostClassifier(), MajorityVoteClassifier)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_defaults_are_the_learners(name):
    """Issue #35: one source of defaults. Every parameter an estimator shares with its learner
    has the learner's default (the hyperparameters the learner takes positionally, without a
    default, are the estimator's own)."""
    cls = ESTIMATORS[name]
    learner = inspect.signature(cls._learner).parameters
    for param in inspect.signature(cls).parameters.values():
        if param.name in learner and learner[param.name].default is not inspect.Parameter.empty:
            assert param.default == learner[param.name].default, (name, param.name)
    assert set(cls._options) <= set(learner), name
