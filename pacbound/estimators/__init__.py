"""scikit-learn classifiers over the learners of :mod:`pacbound.solvers` (the ``sklearn``
extra).

* :mod:`~pacbound.estimators.classifiers`: one classifier per learner, :data:`ESTIMATORS`
  mapping short names to them;
* :mod:`~pacbound.estimators.base`: :class:`MajorityVoteClassifier` (validation, voters,
  prediction, certificates, save / load);
* :mod:`~pacbound.estimators.voter_sets`: :class:`StumpVoters`, :class:`RBFVoters`;
* :mod:`~pacbound.estimators.forest`: :class:`ForestClassifier`, a scikit-learn forest (any
  number of classes) reweighted and certified by a second-order bound, out of bag.

Example::

    from pacbound.estimators import CBBoostClassifier

    clf = CBBoostClassifier(n_rounds=50).fit(X_train, y_train)
    clf.score(X_test, y_test), clf.bound("cbound_roy2016", delta=0.05)
"""

from pacbound.estimators.base import BOUND_KINDS, MajorityVoteClassifier, TrainingStats
from pacbound.estimators.classifiers import (
    ESTIMATORS,
    AdaBoostClassifier,
    BoundMinimizerClassifier,
    CBBoostClassifier,
    CGBoostClassifier,
    CqBoostClassifier,
    GBCBBoostClassifier,
    KLBoostClassifier,
    LPBoostClassifier,
    MDBoostClassifier,
    MinCqClassifier,
    VEBBoostClassifier,
)
from pacbound.estimators.forest import ForestClassifier
from pacbound.estimators.voter_sets import RBFVoters, StumpVoters

__all__ = [
    "BOUND_KINDS",
    "ESTIMATORS",
    "AdaBoostClassifier",
    "BoundMinimizerClassifier",
    "CBBoostClassifier",
    "CGBoostClassifier",
    "CqBoostClassifier",
    "ForestClassifier",
    "GBCBBoostClassifier",
    "KLBoostClassifier",
    "LPBoostClassifier",
    "MDBoostClassifier",
    "MajorityVoteClassifier",
    "MinCqClassifier",
    "RBFVoters",
    "StumpVoters",
    "TrainingStats",
    "VEBBoostClassifier",
]
