"""Margins of a majority vote ``y * (H @ q)`` and their moments, the Gibbs risk, the joint error
and the disagreement of a posterior.
"""

from pacbound._src.margins import (
    disagreement,
    gibbs_risk,
    joint_error,
    majority_vote_risk,
    margin_moments,
    margins,
    multiclass_margins,
)

__all__ = [
    "disagreement",
    "gibbs_risk",
    "joint_error",
    "majority_vote_risk",
    "margin_moments",
    "margins",
    "multiclass_margins",
]
