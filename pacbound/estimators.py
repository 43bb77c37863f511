"""scikit-learn classifiers over the learners (the ``sklearn`` extra).

One base, :class:`MajorityVoteClassifier` (validation, voters, prediction, ``bound()``,
``certificate()``, ``save()`` / ``load()``), and one classifier per learner
(:data:`ESTIMATORS`); :class:`ForestClassifier` reweights and certifies a scikit-learn forest
by a second-order bound, out of bag. Voter sets: :class:`StumpVoters`, :class:`RBFVoters`.
"""

from pacbound._src.estimators.base import (
    MajorityVoteClassifier,
)
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
from pacbound._src.estimators.forest import (
    ForestClassifier,
)
from pacbound._src.estimators.voter_sets import (
    RBFVoters,
    StumpVoters,
)

__all__ = [
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
    "VEBBoostClassifier",
]
