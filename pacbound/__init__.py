"""pacbound: weighted majority votes learned by minimizing PAC-Bayesian bounds, in JAX.

The public face is these modules (everything under ``pacbound._src`` is private):
:mod:`~pacbound.margins`, :mod:`~pacbound.cbound`, :mod:`~pacbound.kl` and
:mod:`~pacbound.bounds` (the building blocks); :mod:`~pacbound.certify` (certificates and the
bound registry); :mod:`~pacbound.voters` (the ``Voters`` protocol and its families) and
:mod:`~pacbound.datasets`; :mod:`~pacbound.solvers` (the learners, on one protocol);
:mod:`~pacbound.sweep` (vmapped grids, k-fold CV, bound-based selection, sharded over devices);
:mod:`~pacbound.ensembles` (second-order bounds of fitted ensembles). With scikit-learn
installed, :mod:`pacbound.estimators`; with matplotlib, :mod:`pacbound.plots`.
"""

from pacbound import (
    bounds,
    cbound,
    certify,
    datasets,
    ensembles,
    kl,
    margins,
    solvers,
    sweep,
    voters,
)

__all__ = [
    "bounds",
    "cbound",
    "certify",
    "datasets",
    "ensembles",
    "kl",
    "margins",
    "solvers",
    "sweep",
    "voters",
]
__version__ = "0.1.0"
