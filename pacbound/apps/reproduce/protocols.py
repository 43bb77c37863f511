"""The papers' Table 1 protocols: learners, grids and folds (run by :mod:`.runner`).

* ``roy2016-table1`` (roy2016 §7): features normalized with a hyperbolic tangent
  (:func:`pacbound.voters.tanh_normalize`, fitted on the training set); half of the examples
  for training, at most 500 (:func:`pacbound.datasets.roy2016_split`); 10 self-complemented
  decision stumps per feature; each learner's hyperparameter chosen by 5-fold cross-validation
  among 15 values on a logarithmic scale: ``mu`` in ``[10^-2, 10^-0.5]`` (CqBoost, MinCq),
  ``D`` in ``[1, 100]`` (MDBoost), ``C`` in ``[10^-3, 10^3]`` (LPBoost, CG-Boost), AdaBoost's
  rounds in ``[10^2, 10^6]`` (ours: ``[10^2, 10^4]``; a million rounds per fit is out of a
  CPU's reach); column generation stops at ``tol = 10^-6`` or at 100 columns (the paper
  reports fewer on most sets; more for CG-Boost). CB-Boost (bauvin2020, not in roy2016's
  table) is added with its rounds ``T`` in ``[10, 1000]``.
* ``germain2009-table1`` (germain2009 §5): the paper's ``|S|`` training examples (the same
  fraction where our copy of a set is smaller), the rest for testing; at most 10 stumps per
  feature; AdaBoost with 200 rounds; ridge regression over the stumps' votes; KL-EL and KL-QL
  (Algorithm 1) with ``C`` and ``gamma`` chosen by 10-fold cross-validation. The paper prints
  no grid: ours holds every value its Table 1 reports (``C`` from 0.02 to 1000, ``gamma``
  from 10^-4 to 0.5); ridge's penalty is ``1 / C`` over the same ``C``.

The published numbers live in :mod:`pacbound.apps.reproduce.paper_tables`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import RidgeClassifier

from pacbound import voters
from pacbound.apps.reproduce.paper_tables import GERMAIN2009_TABLE1, ROY2016_TABLE1

__all__ = ["PROTOCOLS", "LearnerSpec", "Protocol", "RidgeVotesClassifier"]


class LearnerSpec(NamedTuple):
    """A learner of a protocol: an estimator, fixed arguments and the grids cross-validated.

    Attributes:
      label: the paper's column name.
      estimator: key of :data:`pacbound.estimators.ESTIMATORS`, or ``"ridge"``.
      grid: ``{parameter: values}`` searched by cross-validation (empty: none).
      fixed: constructor arguments.
    """

    label: str
    estimator: str
    grid: dict[str, tuple]
    fixed: dict[str, Any]


class Protocol(NamedTuple):
    """A paper's Table 1 protocol."""

    name: str
    learners: dict[str, LearnerSpec]
    datasets: tuple[str, ...]
    folds: int
    normalize: bool


def _logs(lo: float, hi: float, n: int = 15, integer: bool = False) -> tuple:
    values = np.logspace(lo, hi, n)
    return tuple(int(v) for v in np.unique(np.round(values))) if integer else tuple(values)


_CG = {"tol": 1e-6, "max_iter": 100}
_ROY = {
    "cqboost": LearnerSpec("CqBoost", "cqboost", {"mu": _logs(-2, -0.5)}, _CG),
    "mdboost": LearnerSpec("MDBoost", "mdboost", {"D": _logs(0, 2)}, _CG),
    "lpboost": LearnerSpec("LPBoost", "lpboost", {"C": _logs(-3, 3)}, _CG),
    "cgboost": LearnerSpec("CG-Boost", "cgboost", {"C": _logs(-3, 3)}, _CG),
    "adaboost": LearnerSpec("AdaBoost", "adaboost", {"n_rounds": _logs(2, 4, integer=True)}, {}),
    "mincq": LearnerSpec("MinCq", "mincq", {"mu": _logs(-2, -0.5)}, {}),
    "cbboost": LearnerSpec("CB-Boost", "cbboost", {"n_rounds": _logs(1, 3, integer=True)}, {}),
}
_C_GRID = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3)
_GAMMA_GRID = (1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
_KL = {"C": _C_GRID, "gamma": _GAMMA_GRID}
_GERMAIN = {
    "adaboost": LearnerSpec("AdaBoost", "adaboost", {}, {"n_rounds": 200}),
    "ridge": LearnerSpec("RR", "ridge", {"C": _C_GRID}, {}),
    "kl-el": LearnerSpec("KL-EL", "klboost", _KL, {"loss": "exponential"}),
    "kl-ql": LearnerSpec("KL-QL", "klboost", _KL, {"loss": "quadratic"}),
}
PROTOCOLS = {
    "roy2016-table1": Protocol("roy2016-table1", _ROY, tuple(ROY2016_TABLE1), 5, True),
    "germain2009-table1": Protocol(
        "germain2009-table1", _GERMAIN, tuple(GERMAIN2009_TABLE1), 10, False
    ),
}


class RidgeVotesClassifier(ClassifierMixin, BaseEstimator):
    """Ridge regression on the decision stumps' votes (germain2009 §5, "RR").

    germain2009 eq. (17) with ``v = w / gamma`` and no box: ``C sum_i (y_i v.h(x_i) - 1)^2 +
    ||v||^2``, i.e. scikit-learn's ``RidgeClassifier(alpha=1/C, fit_intercept=False)`` on the
    ``n_stumps`` stumps per feature of :func:`pacbound.voters.fit_stumps`.
    """

    def __init__(self, C: float = 1.0, n_stumps: int = 10):
        self.C = C
        self.n_stumps = n_stumps

    def fit(self, X, y):
        self.stumps_ = voters.fit_stumps(X, self.n_stumps)
        ridge = RidgeClassifier(alpha=1.0 / self.C, fit_intercept=False, solver="svd")
        self.ridge_ = ridge.fit(self._votes(X), y)
        self.classes_ = self.ridge_.classes_
        self.n_voters_ = int(np.count_nonzero(self.ridge_.coef_))
        return self

    def _votes(self, X) -> np.ndarray:
        return np.asarray(voters.votes(self.stumps_, X), np.float64)  # ±1: exact in float32

    def predict(self, X):
        return self.ridge_.predict(self._votes(X))
