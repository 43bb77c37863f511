"""Second-order bounds of a fitted ensemble: error matrices, statistics, certificates, ``rho``.

For voters of any number of classes with out-of-bag masks (:func:`pacbound.voters.ensemble_voters`):
:func:`error_matrix`, :func:`loss_statistics` (Gibbs, tandem and disagreement statistics),
:func:`ensemble_statistics`, :func:`certify_ensemble` / :func:`ensemble_report` (every bound for
uniform and optimized posteriors), :func:`optimize_posterior`, and the minimizers of a
second-order bound over ``rho`` (:func:`minimize_bound` by gradient, :func:`tnd_alternating`,
:func:`cctnd_alternating`, :func:`minimize_over_mu`; Masegosa et al. 2020, Wu et al. 2021) or
of a C-bound form (``"cbound_seeger"``, ``"cbound_mcallester"``, ``"cbound_joint"``: Viallard et
al. 2021, any number of classes).
"""

from pacbound._src.ensemble_bounds import (
    EnsembleCertificate,
    EnsembleReport,
    EnsembleStatistics,
    certify_ensemble,
    ensemble_report,
    ensemble_statistics,
    optimize_posterior,
)
from pacbound._src.loss_statistics import (
    LossStatistics,
    error_matrix,
    loss_statistics,
)
from pacbound._src.second_order_minimize import (
    MinimizeResult,
    cctnd_alternating,
    minimize_bound,
    minimize_over_mu,
    tnd_alternating,
)

__all__ = [
    "EnsembleCertificate",
    "EnsembleReport",
    "EnsembleStatistics",
    "LossStatistics",
    "MinimizeResult",
    "cctnd_alternating",
    "certify_ensemble",
    "ensemble_report",
    "ensemble_statistics",
    "error_matrix",
    "loss_statistics",
    "minimize_bound",
    "minimize_over_mu",
    "optimize_posterior",
    "tnd_alternating",
]
