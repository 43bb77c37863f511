"""Second-order bounds of an ensemble: error matrices, statistics, certificates, rho."""

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
