"""Voters: what a majority vote votes with.

A voter set evaluated on ``m`` examples is the ``(m, n)`` matrix ``H[i, j] = h_j(x_i)`` in
``[-1, 1]``; learners take it as it is and weigh its self-complemented set ``[H, -H]``.

* :mod:`~pacbound._src.voters.stumps`: decision stumps with fixed thresholds (:func:`fit_stumps`,
  :func:`votes`, :func:`stumps_vote`, :func:`self_complemented`).
* :mod:`~pacbound._src.voters.exact_search`: every threshold of every feature, matrix-free
  (:func:`stump_search`, :func:`best_stump`, :func:`stump_edges`, :func:`stump_scores`), the
  exact candidates of the ``*_stumps`` learners.
* :mod:`~pacbound._src.voters.histogram`: the same on features quantized into at most ``max_bins``
  bins (:func:`bin_features`, :func:`histogram_search`), one streaming pass a round.
* :mod:`~pacbound._src.voters.rbf`: RBF voters centred on points (laviolette2011 §6).
* :mod:`~pacbound._src.voters.normalization`: roy2016 §7's hyperbolic-tangent normalization.
* :mod:`~pacbound._src.voters.ensembles`: fitted scikit-learn forests and bagging ensembles as
  voters of any number of classes, with their out-of-bag masks (:func:`ensemble_voters`).
"""

from pacbound._src.validation import check_features
from pacbound._src.voters.ensembles import (
    EnsembleVoters,
    class_indices,
    ensemble_predictions,
    ensemble_voters,
    vote_shares,
)
from pacbound._src.voters.exact_search import (
    BestStump,
    StumpSearch,
    best_stump,
    best_stump_votes,
    padded_stumps,
    stump_edges,
    stump_scores,
    stump_search,
)
from pacbound._src.voters.histogram import (
    Binning,
    HistogramSearch,
    bin_features,
    binned_search,
    histogram_search,
)
from pacbound._src.voters.normalization import (
    TanhNormalization,
    fit_tanh_normalization,
    tanh_normalize,
)
from pacbound._src.voters.rbf import median_pairwise_distance, rbf_votes, signed_rbf_votes
from pacbound._src.voters.stumps import (
    Stumps,
    fit_stumps,
    self_complemented,
    stumps_vote,
    votes,
)

__all__ = [
    "BestStump",
    "Binning",
    "EnsembleVoters",
    "HistogramSearch",
    "StumpSearch",
    "Stumps",
    "TanhNormalization",
    "best_stump",
    "best_stump_votes",
    "bin_features",
    "binned_search",
    "check_features",
    "class_indices",
    "ensemble_predictions",
    "ensemble_voters",
    "fit_stumps",
    "fit_tanh_normalization",
    "histogram_search",
    "median_pairwise_distance",
    "padded_stumps",
    "rbf_votes",
    "self_complemented",
    "signed_rbf_votes",
    "stump_edges",
    "stump_scores",
    "stump_search",
    "stumps_vote",
    "tanh_normalize",
    "vote_shares",
    "votes",
]
