"""scikit-learn classifiers over the learners of :mod:`pacbound._src.solvers` (the ``sklearn``
extra).

* :mod:`~pacbound._src.estimators.classifiers`: one classifier per learner, :data:`ESTIMATORS`
  mapping short names to them;
* :mod:`~pacbound._src.estimators.base`: :class:`MajorityVoteClassifier` (validation, voters,
  prediction, certificates, save / load);
* :mod:`~pacbound._src.estimators.voter_sets`: :class:`StumpVoters`, :class:`RBFVoters`;
* :mod:`~pacbound._src.estimators.forest`: :class:`ForestClassifier`, a scikit-learn forest (any
  number of classes) reweighted and certified by a second-order bound, out of bag.

Example::

    from pacbound._src.estimators import CBBoostClassifier

    clf = CBBoostClassifier(n_rounds=50).fit(X_train, y_train)
    clf.score(X_test, y_test), clf.bound("cbound_roy2016", delta=0.05)
"""

from pacbound._src.estimators.base import BOUND_KINDS, MajorityVoteClassifier, TrainingStats
from pacbound._src.estimators.classifiers import (
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
from pacbound._src.estimators.forest import ForestClassifier
from pacbound._src.estimators.voter_sets import RBFVoters, StumpVoters

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
