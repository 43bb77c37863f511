"""scikit-learn classifiers over the learners (needs the sklearn extra)."""

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
