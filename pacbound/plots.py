"""Plots of bounds, risks and boosting rounds (the ``plot`` extra)."""

from pacbound._src.apps.plots import (
    plot_bound_vs_delta,
    plot_compare,
    plot_risk_vs_mu,
    plot_rounds,
    prefix_risks,
)

__all__ = [
    "plot_bound_vs_delta",
    "plot_compare",
    "plot_risk_vs_mu",
    "plot_rounds",
    "prefix_risks",
]
