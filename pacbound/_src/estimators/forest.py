"""A scikit-learn forest (or bagging ensemble) whose vote is reweighted and certified by a
PAC-Bayes bound: :class:`ForestClassifier`.

``fit(X, y)`` trains a ``RandomForestClassifier`` (``ensemble="rf"``), an
``ExtraTreesClassifier`` (``"extra"``) or a ``BaggingClassifier`` of decision trees
(``"bagging"``), all with bootstrap samples, reads its members as voters
(:func:`pacbound.voters.ensemble_voters`), computes the loss statistics out of bag
(Lorenzen, Igel, Seldin, Machine Learning 2019) or on a held-out part of ``(X, y)`` that the
members never saw, and sets ``rho_`` to the posterior minimizing the bound named by
``objective`` (:func:`pacbound.ensembles.optimize_posterior`; ``"uniform"`` keeps the
forest's own uniform vote). ``predict`` is the weighted majority vote ``argmax_c sum_j rho_j
1[h_j(x) = c]``, for any number of classes; ``bound`` / ``certificate`` give the bounds of
:data:`pacbound._src.ensemble_bounds.BOUNDS` at ``rho_`` (float64, uniform prior over the trees).

Example::

    from pacbound.estimators import ForestClassifier

    clf = ForestClassifier(n_estimators=100, objective="tnd", random_state=0).fit(X, y)
    clf.score(X_test, y_test), clf.bound("tnd"), clf.certificate().best
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from pacbound._src import ensemble_bounds as eb
from pacbound._src.datasets.loaders import stratified_split
from pacbound._src.estimators.base import json_scalar, loadable_array
from pacbound._src.loss_statistics import LossStatistics
from pacbound._src.validation import check_delta, check_positive_int
from pacbound._src.voters.ensembles import (
    class_indices,
    ensemble_predictions,
    ensemble_voters,
    vote_shares,
)

__all__ = ["ENSEMBLES", "ForestClassifier", "make_ensemble"]

ENSEMBLES = ("rf", "extra", "bagging")
_FORMAT = "pacbound.forest/1"
_OBJECTIVES = ("uniform", *eb.BOUNDS)


def make_ensemble(
    ensemble: str = "rf",
    n_estimators: int = 100,
    *,
    random_state: Any = None,
    n_jobs: int | None = None,
    **params: Any,
):
    """An unfitted scikit-learn ensemble of fully grown decision trees on bootstrap samples:
    ``"rf"`` a ``RandomForestClassifier`` (``max_features="sqrt"``), ``"extra"`` an
    ``ExtraTreesClassifier`` (``bootstrap=True``, ``max_features="sqrt"``), ``"bagging"`` a
    ``BaggingClassifier`` (all features); ``params`` are passed on (and override these).

    Example:
      >>> forest = make_ensemble("extra", 10, random_state=0)  # unfitted
      >>> type(forest).__name__, forest.bootstrap, forest.max_features, forest.n_estimators
      ('ExtraTreesClassifier', True, 'sqrt', 10)
    """
    from sklearn.ensemble import BaggingClassifier, ExtraTreesClassifier, RandomForestClassifier

    if ensemble not in ENSEMBLES:
        raise ValueError(f"ensemble must be one of {ENSEMBLES}; got {ensemble!r}")
    check_positive_int("n_estimators", n_estimators)
    common = {"n_estimators": n_estimators, "random_state": random_state, "n_jobs": n_jobs}
    if ensemble == "bagging":
        return BaggingClassifier(**{"bootstrap": True, **common, **params})
    klass = RandomForestClassifier if ensemble == "rf" else ExtraTreesClassifier
    return klass(**{"bootstrap": True, "max_features": "sqrt", **common, **params})


class ForestClassifier(ClassifierMixin, BaseEstimator):
    """A forest's majority vote with the posterior ``rho_`` that minimizes a PAC-Bayes bound.

    Args:
      ensemble: ``"rf"``, ``"extra"`` or ``"bagging"`` (:func:`make_ensemble`).
      n_estimators: number of trees.
      objective: the bound ``rho_`` minimizes, a name of
        :data:`pacbound._src.ensemble_bounds.BOUNDS` (``"dis"`` needs binary labels and
        ``X_unlabeled``; ``"cbound_seeger"``, ``"cbound_mcallester"``, ``"cbound_joint"``: the
        direct C-bound minimization of Viallard et al. 2021, any number of classes), or
        ``"uniform"``: the forest's own vote.
      delta: confidence in ``(0, 1]`` of the bounds.
      oob: ``True``: statistics out of bag (the whole sample trains the forest); a fraction in
        ``(0, 1)``: that share of the sample (stratified, seeded by ``random_state``) is held
        out, the forest trains on the rest and the bounds use the held-out part.
      max_iter: optimizer steps of the minimization.
      mu_grid: the data-independent ``mu`` values of ``ccpbb`` / ``split_kl`` (union bound).
      random_state: seed of the forest (and of the held-out split).
      n_jobs: scikit-learn's parallel jobs for the forest.
      ensemble_params: more arguments of the scikit-learn ensemble (``max_depth``, ...).

    Fitted attributes: ``forest_`` (the scikit-learn ensemble), ``classes_``, ``rho_``,
    ``statistics_`` (:class:`pacbound.ensembles.EnsembleStatistics`), ``bound_`` (the
    objective's certified value at ``rho_``; ``None`` for ``"uniform"``), ``n_iter_`` (the
    optimizer's steps: ``max_iter``, 0 for ``"uniform"``), ``fit_time_``, ``n_features_in_``.
    """

    def __init__(
        self, ensemble="rf", n_estimators=100, *, objective="tnd", delta=0.05, oob=True,
        max_iter=1000, mu_grid=None, random_state=None, n_jobs=None, ensemble_params=None,
    ):  # fmt: skip
        self.ensemble, self.n_estimators, self.objective = ensemble, n_estimators, objective
        self.delta, self.oob, self.max_iter, self.mu_grid = delta, oob, max_iter, mu_grid
        self.random_state, self.n_jobs, self.ensemble_params = random_state, n_jobs, ensemble_params

    def _check_params(self) -> None:
        if self.objective not in _OBJECTIVES:
            raise ValueError(f"objective must be one of {_OBJECTIVES}; got {self.objective!r}")
        check_delta(self.delta)
        check_positive_int("max_iter", self.max_iter)
        held_out = not isinstance(self.oob, bool) and isinstance(self.oob, float | int)
        if self.oob is not True and not (held_out and 0.0 < self.oob < 1.0):
            raise ValueError(f"oob must be True or a held-out fraction in (0, 1); got {self.oob!r}")

    def _grid(self) -> np.ndarray:
        return eb.MU_GRID if self.mu_grid is None else np.asarray(self.mu_grid, np.float64)

    def fit(self, X, y, X_unlabeled=None):
        """Train the forest on ``(X, y)`` (labels of any number of classes), compute the loss
        statistics (out of bag, or on the held-out part) and minimize the objective.

        Args:
          X, y: the sample.
          X_unlabeled: inputs without labels that no tree is trained on (binary labels only):
            they estimate the disagreement of the DIS bound.
        """
        start = time.perf_counter()
        self._check_params()
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if np.unique(y).size < 2:  # before the split, which needs two examples
            raise ValueError(f"y has one class only ({np.unique(y).tolist()}); need two or more")
        train, bound_rows = self._split(y)
        params = self.ensemble_params or {}
        self.forest_ = make_ensemble(
            self.ensemble, self.n_estimators, random_state=self.random_state,
            n_jobs=self.n_jobs, **params,
        ).fit(X[train], y[train])  # fmt: skip
        self.classes_ = self.forest_.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y has one class only ({self.classes_.tolist()}); need two or more")
        self.statistics_ = self._statistics(X, y, train, bound_rows, X_unlabeled)
        self.rho_ = self._posterior()
        self.n_iter_ = 0 if self.objective == "uniform" else self.max_iter
        self.bound_ = None
        if self.objective != "uniform":
            self.bound_ = self.bound(self.objective)
        self.fit_time_ = time.perf_counter() - start
        return self

    def _split(self, y):
        """``(training rows, held-out rows or None)``."""
        rows = np.arange(len(y))
        if self.oob is True:
            return rows, None
        seed = self.random_state if isinstance(self.random_state, int | np.integer) else 0
        return stratified_split(y, 1.0 - float(self.oob), seed=int(seed))

    def _statistics(self, X, y, train, held_out, X_unlabeled):
        unlabeled = None
        if X_unlabeled is not None:
            X_u = validate_data(self, X_unlabeled, reset=False)
            unlabeled = ensemble_predictions(self.forest_, X_u)
        n_classes = len(self.classes_)
        if held_out is None:
            voters = ensemble_voters(self.forest_, X[train], y[train])
            return eb.ensemble_statistics(
                voters.predictions, voters.labels, n_classes, mask=voters.oob_mask,
                unlabeled=unlabeled,
            )  # fmt: skip
        predictions = ensemble_predictions(self.forest_, X[held_out])
        labels = class_indices(y[held_out], self.classes_)
        return eb.ensemble_statistics(predictions, labels, n_classes, unlabeled=unlabeled)

    def _posterior(self) -> np.ndarray:
        n = self.statistics_.stats.risks.shape[0]
        if self.objective == "uniform":
            return np.full(n, 1.0 / n)
        result = eb.optimize_posterior(
            self.statistics_, self.objective, delta=self.delta, mu_grid=self._grid(),
            steps=self.max_iter,
        )  # fmt: skip
        rho = np.asarray(result.rho, np.float64)
        return rho / rho.sum()

    # ------------------------------------------------------------------ prediction
    def predict_proba(self, X) -> np.ndarray:
        """``(m, C)`` the vote's weight on each class, ``sum_j rho_j 1[h_j(x) = c]`` (rows sum
        to 1): the share of ``rho_`` behind each class, not a calibrated probability."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        predictions = ensemble_predictions(self.forest_, X)
        return vote_shares(predictions, self.rho_, len(self.classes_))

    def predict(self, X) -> np.ndarray:
        """The weighted majority vote (ties: the first class of ``classes_``)."""
        shares = self.predict_proba(X)  # checks that it is fitted first
        return self.classes_[np.argmax(shares, axis=1)]

    # ---------------------------------------------------------------- certificates
    def certificate(self, delta=None, bounds=None, rho=None) -> eb.EnsembleCertificate:
        """Every bound of ``bounds`` (default all available) on the risk of the vote, a tie
        counting as an error: :func:`pacbound.ensembles.certify_ensemble` at ``rho``
        (default ``rho_``; any distribution over the trees may be certified), each holding
        with probability ``1 - delta`` (default: the fitted ``delta``) over the sample, for
        every ``rho`` at once; ``best`` pays ``delta / K`` for the choice among ``K``."""
        check_is_fitted(self)
        delta = self.delta if delta is None else delta
        rho = self.rho_ if rho is None else rho
        return eb.certify_ensemble(
            self.statistics_, rho, delta=delta, bounds=bounds, mu_grid=self._grid()
        )

    def bound(self, kind=None, delta=None, rho=None) -> float:
        """One bound (default: the objective; ``"tnd"`` for ``"uniform"``) at ``rho_`` (or
        ``rho``) and ``delta`` (default: the fitted one), as :meth:`certificate`."""
        kind = kind or (self.objective if self.objective != "uniform" else "tnd")
        return self.certificate(delta, [kind], rho).bounds[kind]

    def report(self, X_test=None, y_test=None, objectives=None) -> eb.EnsembleReport:
        """The uniform posterior and each bound's minimizer on the fitted statistics, every one
        certified by every bound, with its test risk on ``(X_test, y_test)``
        (:func:`pacbound.ensembles.ensemble_report`)."""
        check_is_fitted(self)
        test = None
        if X_test is not None:
            X_test = validate_data(self, X_test, reset=False)
            predictions = ensemble_predictions(self.forest_, X_test)
            test = (predictions, class_indices(y_test, self.classes_))
        return eb.ensemble_report(
            self.statistics_, delta=self.delta, objectives=objectives, test=test,
            mu_grid=self._grid(), steps=self.max_iter,
        )  # fmt: skip

    # ------------------------------------------------------------------- save / load
    def save(self, path) -> None:
        """Write the fitted classifier to ``path`` (``.npz``: arrays + JSON metadata, no
        pickle): the trees (their node arrays), ``rho_``, the statistics the bounds read.
        :meth:`load` needs the same scikit-learn version (the trees' node layout is its own).

        Raises:
          ValueError: a ``random_state`` that is not an integer or None (it cannot be stored).
        """
        check_is_fitted(self)
        params = self.get_params()
        if params["mu_grid"] is not None:
            params["mu_grid"] = np.asarray(params["mu_grid"], np.float64).tolist()
        stats = self.statistics_
        meta = {
            "format": _FORMAT, "sklearn": sklearn.__version__, "params": params,
            "n_features_in": self.n_features_in_, "fit_time": self.fit_time_,
            "n_iter": self.n_iter_,
            "bound": self.bound_, "n": stats.n, "n2": stats.n2, "n_classes": stats.n_classes,
            "m_unlabeled": stats.m_unlabeled, "trees": [],
        }  # fmt: skip
        arrays = {"classes": loadable_array(self.classes_), "rho": self.rho_}
        arrays.update({f"stats.{k}": np.asarray(v) for k, v in stats.stats._asdict().items()})
        if stats.disagreement is not None:
            arrays["disagreement"] = np.asarray(stats.disagreement)
        features = getattr(self.forest_, "estimators_features_", None)
        for j, member in enumerate(self.forest_.estimators_):
            tree = member.tree_.__getstate__()
            arrays[f"tree{j}.nodes"], arrays[f"tree{j}.values"] = tree["nodes"], tree["values"]
            arrays[f"tree{j}.classes"] = np.asarray(member.classes_)
            if features is not None:
                arrays[f"tree{j}.features"] = np.asarray(features[j])
            meta["trees"].append({
                "class": type(member).__name__, "params": member.get_params(),
                "max_features": member.max_features_,
                "max_depth": tree["max_depth"], "node_count": tree["node_count"],
            })  # fmt: skip
        text = json.dumps(meta, default=json_scalar)
        with open(path, "wb") as f:
            np.savez(f, metadata=np.array(text), **arrays)

    @classmethod
    def load(cls, path) -> ForestClassifier:
        """Read a classifier written by :meth:`save` (with the same scikit-learn version): it
        predicts and certifies as the saved one; its ``forest_`` holds the trees, not their
        bootstrap samples (``estimators_samples_``), which only fitting reads."""
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("metadata")))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path} is not a saved pacbound ForestClassifier")
        if meta["sklearn"] != sklearn.__version__:
            raise ValueError(
                f"{path} was saved with scikit-learn {meta['sklearn']}; this is "
                f"{sklearn.__version__} (the trees' layout may differ): refit"
            )
        out = cls(**meta["params"])
        out.classes_, out.rho_ = arrays["classes"], arrays["rho"]
        out.n_features_in_, out.fit_time_, out.bound_ = (
            meta["n_features_in"], meta["fit_time"], meta["bound"],
        )  # fmt: skip
        out.n_iter_ = meta["n_iter"]
        stats = LossStatistics(**{f: arrays[f"stats.{f}"] for f in LossStatistics._fields})
        out.statistics_ = eb.EnsembleStatistics(
            stats, meta["n"], meta["n2"], meta["n_classes"], arrays.get("disagreement"),
            meta["m_unlabeled"],
        )  # fmt: skip
        out.forest_ = _rebuilt_forest(out, meta["trees"], arrays)
        return out


def _rebuilt_forest(clf: ForestClassifier, trees: list[dict], arrays: dict[str, np.ndarray]):
    """The fitted scikit-learn ensemble of :meth:`ForestClassifier.save`'s trees."""
    from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier
    from sklearn.tree._tree import Tree

    kinds = {k.__name__: k for k in (DecisionTreeClassifier, ExtraTreeClassifier)}
    forest = make_ensemble(
        clf.ensemble, clf.n_estimators, random_state=clf.random_state, n_jobs=clf.n_jobs,
        **(clf.ensemble_params or {}),
    )  # fmt: skip
    members = []
    for j, spec in enumerate(trees):
        member = kinds[spec["class"]](**spec["params"])
        classes = arrays[f"tree{j}.classes"]
        width = len(arrays.get(f"tree{j}.features", range(clf.n_features_in_)))
        tree = Tree(width, np.array([len(classes)], np.intp), 1)
        tree.__setstate__({
            "max_depth": spec["max_depth"], "node_count": spec["node_count"],
            "nodes": arrays[f"tree{j}.nodes"], "values": arrays[f"tree{j}.values"],
        })  # fmt: skip
        member.tree_, member.max_features_ = tree, spec["max_features"]
        member.n_features_in_, member.n_outputs_ = width, 1
        member.classes_, member.n_classes_ = classes, np.int64(len(classes))
        members.append(member)
    forest.estimators_ = members
    forest.classes_, forest.n_classes_ = clf.classes_, len(clf.classes_)
    forest.n_features_in_, forest.n_outputs_ = clf.n_features_in_, 1
    if "tree0.features" in arrays:
        forest.estimators_features_ = [arrays[f"tree{j}.features"] for j in range(len(trees))]
    return forest
