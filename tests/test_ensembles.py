"""Fitted scikit-learn ensembles as voters: predictions as class indices, out-of-bag masks equal
to scikit-learn's own OOB bookkeeping (``oob_decision_function_``), and refusals."""

import sys

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.ensemble import (
    BaggingClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)

from pacbound._src.voters.ensembles import class_indices, ensemble_predictions, vote_shares
from pacbound.voters import ensemble_voters

M, TREES = 100, 10
# 10 trees leave a row or two out of every bag: scikit-learn warns (and bagging divides by 0)
pytestmark = [
    pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores"),
    pytest.mark.filterwarnings("ignore:invalid value encountered in divide"),
]


def _data(n_classes, seed=0, labels=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(M, 4))
    y = np.digitize(
        X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=M), [-0.5, 0.5][: n_classes - 1]
    )
    return X, (y if labels is None else np.asarray(labels)[y])


MODELS = {
    "rf": lambda: RandomForestClassifier(TREES, oob_score=True, random_state=0),
    "extra": lambda: ExtraTreesClassifier(TREES, bootstrap=True, oob_score=True, random_state=0),
    "bagging": lambda: BaggingClassifier(n_estimators=TREES, oob_score=True, random_state=0),
    "bagging_features": lambda: BaggingClassifier(
        n_estimators=TREES, max_features=0.5, oob_score=True, random_state=0
    ),
}


def _oob_average(model, X, mask):
    """scikit-learn's OOB average of the members' class probabilities, from our mask."""
    features = getattr(model, "estimators_features_", [None] * len(model.estimators_))
    total = np.zeros((len(X), len(model.classes_)))
    for j, (est, f) in enumerate(zip(model.estimators_, features)):
        proba = est.predict_proba(X if f is None else X[:, f])
        full = np.zeros((len(X), len(model.classes_)))
        full[:, est.classes_.astype(int)] = proba
        total += mask[:, [j]] * full
    counts = mask.sum(axis=1)
    return total[counts > 0] / counts[counts > 0, None], counts > 0


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_mask_is_scikit_learns_oob_bookkeeping(kind, n_classes):
    X, y = _data(n_classes)
    model = MODELS[kind]().fit(X, y)
    voters = ensemble_voters(model, X, y)
    assert voters.predictions.shape == voters.oob_mask.shape == (M, TREES)
    assert voters.predictions.dtype == np.int32 and voters.oob_mask.dtype == bool
    np.testing.assert_array_equal(voters.classes, np.arange(n_classes))
    np.testing.assert_array_equal(voters.labels, y)
    average, rows = _oob_average(model, X, voters.oob_mask)
    np.testing.assert_allclose(average, model.oob_decision_function_[rows], atol=1e-12)
    sizes = voters.oob_mask.sum(axis=0)  # about (1 - 1/m)^m = 0.37 of the examples
    assert np.all((sizes > 0.2 * M) & (sizes < 0.55 * M))
    for j, inbag in enumerate(model.estimators_samples_):
        assert not voters.oob_mask[inbag, j].any()


@pytest.mark.parametrize("kind", ["rf", "bagging_features"])
def test_predictions_are_each_members_class_index(kind):
    X, y = _data(3, labels=["cat", "dog", "eel"])
    model = MODELS[kind]().fit(X, y)
    predictions = ensemble_predictions(model, X[:7])
    features = getattr(model, "estimators_features_", [None] * TREES)
    for j, (est, f) in enumerate(zip(model.estimators_, features)):
        proba = est.predict_proba(X[:7] if f is None else X[:7][:, f])
        expected = est.classes_[np.argmax(proba, axis=1)].astype(int)
        np.testing.assert_array_equal(predictions[:, j], expected)
    voters = ensemble_voters(model, X, y)
    np.testing.assert_array_equal(model.classes_[voters.labels], y)
    shares = vote_shares(voters.predictions, np.full(TREES, 1 / TREES), 3)
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    np.testing.assert_allclose(shares * TREES, np.round(shares * TREES), atol=1e-9)  # counts


def test_subsampling_without_replacement_has_out_of_bag_sets():
    X, y = _data(2)
    model = BaggingClassifier(n_estimators=TREES, bootstrap=False, max_samples=0.6)
    voters = ensemble_voters(model.fit(X, y), X)
    np.testing.assert_array_equal(voters.oob_mask.sum(axis=0), np.full(TREES, 40))
    assert voters.labels is None


def test_class_indices():
    np.testing.assert_array_equal(
        class_indices(["b", "a", "c"], np.array(["a", "b", "c"])), [1, 0, 2]
    )
    with pytest.raises(ValueError, match=r"labels \['z'\] are not among the classes"):
        class_indices(["a", "z"], np.array(["a", "b"]))
    with pytest.raises(ValueError, match="1-D"):
        class_indices([[0]], np.array([0, 1]))


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (RandomForestClassifier(TREES, bootstrap=False), "bootstrap=False"),
        (ExtraTreesClassifier(TREES), "bootstrap=False"),  # its default
        (BaggingClassifier(n_estimators=TREES, bootstrap=False), "no out-of-bag example"),
        (GradientBoostingClassifier(n_estimators=3), "must be one of RandomForestClassifier"),
    ],
)
def test_refuses_models_without_out_of_bag_sets(model, message):
    X, y = _data(2)
    with pytest.raises(ValueError, match=message):
        ensemble_voters(model.fit(X, y), X, y)


def test_refuses_bad_input():
    X, y = _data(2)
    with pytest.raises(ValueError, match="not fitted"):
        ensemble_voters(RandomForestClassifier(TREES), X, y)
    model = RandomForestClassifier(TREES, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="beyond X's 50 rows"):
        ensemble_voters(model, X[:50])  # not the training inputs
    with pytest.raises(ValueError, match=r"\(m, 4\) matrix"):
        ensemble_voters(model, X[:, :3])
    with pytest.raises(ValueError, match=r"labels \[7\] are not among the classes"):
        ensemble_voters(model, X, np.where(y == 1, 7, y))
    with pytest.raises(ValueError, match="one label per row"):
        ensemble_voters(model, X, y[:-1])
    multi = RandomForestClassifier(TREES, random_state=0).fit(X, np.stack([y, y], axis=1))
    with pytest.raises(ValueError, match="multi-output"):
        ensemble_voters(multi, X)


def test_without_scikit_learn_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.ensemble", None)  # import fails
    with pytest.raises(ImportError, match=r"pacbound\[sklearn\]"):
        ensemble_voters(object(), np.zeros((2, 2)))
