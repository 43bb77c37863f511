"""Voters: what a majority vote votes with, and the :class:`Voters` protocol learners search.

A voter set evaluated on ``m`` examples is the ``(m, n)`` matrix ``H[i, j] = h_j(x_i)`` in
``[-1, 1]``: decision stumps (:func:`fit_stumps`, :func:`votes`, :func:`stumps_vote`,
:func:`self_complemented`), RBF voters (:func:`rbf_votes`, :func:`signed_rbf_votes`), roy2016
§7's normalization (:func:`fit_tanh_normalization`, :func:`tanh_normalize`), fitted
scikit-learn ensembles (:func:`ensemble_voters`). A voter *family* is searched without
materializing its votes through the :class:`Voters` protocol: every threshold of every feature
(:func:`stump_search`, :func:`best_stump`), or on histograms (:func:`bin_features`,
:func:`histogram_search`), or a family of your own.
"""

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
