"""Margins of a majority vote and their moments, the Gibbs risk, joint error, disagreement."""

from pacbound._src.margins import (
    disagreement,
    gibbs_risk,
    joint_error,
    majority_vote_risk,
    margin_moments,
    margins,
)

__all__ = [
    "disagreement",
    "gibbs_risk",
    "joint_error",
    "majority_vote_risk",
    "margin_moments",
    "margins",
]
