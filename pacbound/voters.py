"""Voters: what a majority vote votes with, and the Voters protocol learners take."""

from pacbound._src.voters.ensembles import (
    EnsembleVoters,
    ensemble_voters,
)
from pacbound._src.voters.exact_search import (
    StumpSearch,
    best_stump,
    stump_search,
)
from pacbound._src.voters.histogram import (
    HistogramSearch,
    bin_features,
    histogram_search,
)
from pacbound._src.voters.normalization import (
    TanhNormalization,
    fit_tanh_normalization,
    tanh_normalize,
)
from pacbound._src.voters.protocol import (
    Voters,
)
from pacbound._src.voters.rbf import (
    rbf_votes,
    signed_rbf_votes,
)
from pacbound._src.voters.stumps import (
    Stumps,
    fit_stumps,
    self_complemented,
    stumps_vote,
    votes,
)

__all__ = [
    "EnsembleVoters",
    "HistogramSearch",
    "StumpSearch",
    "Stumps",
    "TanhNormalization",
    "Voters",
    "best_stump",
    "bin_features",
    "ensemble_voters",
    "fit_stumps",
    "fit_tanh_normalization",
    "histogram_search",
    "rbf_votes",
    "self_complemented",
    "signed_rbf_votes",
    "stump_search",
    "stumps_vote",
    "tanh_normalize",
    "votes",
]
