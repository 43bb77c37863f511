"""Learners of weighted majority votes, one per module.

* :mod:`~pacbound.solvers.mincq`: MinCq and TMinCq (laviolette2011 Programs 1-2); FISTA core
  in :mod:`~pacbound.solvers.mincq_fista`, duality-gap certificate in
  :mod:`~pacbound.solvers.mincq_gap`.
* :mod:`~pacbound.solvers.mincq_path`: MinCq over many ``mu`` by continuation (warm starts and
  conjugate gradients on the face).
* :mod:`~pacbound.solvers.cqboost`: CqBoost (roy2016 Algorithm 1), by column generation.
* :mod:`~pacbound.solvers.cbboost`: CB-Boost and GB-CB-Boost (bauvin2020), their round in
  :mod:`~pacbound.solvers.cbboost_step` (Theorem 3, Algorithm 1) and
  :mod:`~pacbound.solvers.edges` (one-read products ``H^T a``, exact int8 digit products).
* :mod:`~pacbound.solvers.kl_coordinate`: KL-regularized coordinate descent (germain2009).
* :mod:`~pacbound.solvers.vebboost`: VEB-Boost (Shivaswamy & Jebara).
* :mod:`~pacbound.solvers.direct`, :mod:`~pacbound.solvers.gaussian_mixture`: gradient
  minimization of a PAC-Bayes bound (:mod:`~pacbound.solvers.bound_objective`), on finite
  voters and on Gaussian mixtures of linear ones.
* Baselines: :mod:`~pacbound.solvers.adaboost`, :mod:`~pacbound.solvers.lpboost`,
  :mod:`~pacbound.solvers.cgboost`, :mod:`~pacbound.solvers.mdboost`; the column-generation
  learners share :mod:`~pacbound.solvers.column_generation` (driver:
  :mod:`~pacbound.solvers.column_generation_loop`; soft-margin master:
  :mod:`~pacbound.optimization.interior_point`).
"""

from pacbound.solvers.adaboost import (
    AdaBoostResult,
    AdaBoostStumpsResult,
    adaboost,
    adaboost_stumps,
)
from pacbound.solvers.cbboost import (
    CBBoostResult,
    CBBoostStumpsResult,
    cbboost,
    cbboost_stumps,
    gbcbboost,
    weights_after,
)
from pacbound.solvers.cgboost import cgboost, cgboost_stumps
from pacbound.solvers.column_generation import ColumnGenerationInfo
from pacbound.solvers.cqboost import cqboost, cqboost_max_mu, cqboost_stumps
from pacbound.solvers.direct import (
    Bound,
    DirectResult,
    catoni_bound,
    certify_posterior,
    general_loss_bound,
    minimize_bound,
)
from pacbound.solvers.gaussian_mixture import (
    MixtureResult,
    minimize_mixture_bound,
    mixture_predict,
    mixture_votes,
)
from pacbound.solvers.kl_coordinate import KLCoordinateResult, kl_coordinate_descent, kl_el, kl_ql
from pacbound.solvers.lpboost import lpboost, lpboost_stumps
from pacbound.solvers.mdboost import mdboost, mdboost_stumps
from pacbound.solvers.mincq import (
    MinCqProblem,
    MinCqResult,
    max_realizable_mu,
    mincq,
    mincq_problem,
    solve_mincq,
    tmincq,
)
from pacbound.solvers.mincq_path import mincq_path, solve_mincq_path
from pacbound.solvers.vebboost import (
    VEBBoostResult,
    VEBBoostStumpsResult,
    vebboost,
    vebboost_stumps,
)

__all__ = [
    "AdaBoostResult",
    "AdaBoostStumpsResult",
    "Bound",
    "CBBoostResult",
    "CBBoostStumpsResult",
    "ColumnGenerationInfo",
    "DirectResult",
    "KLCoordinateResult",
    "MinCqProblem",
    "MinCqResult",
    "MixtureResult",
    "VEBBoostResult",
    "VEBBoostStumpsResult",
    "adaboost",
    "adaboost_stumps",
    "catoni_bound",
    "cbboost",
    "cbboost_stumps",
    "certify_posterior",
    "cgboost",
    "cgboost_stumps",
    "cqboost",
    "cqboost_max_mu",
    "cqboost_stumps",
    "gbcbboost",
    "general_loss_bound",
    "kl_coordinate_descent",
    "kl_el",
    "kl_ql",
    "lpboost",
    "lpboost_stumps",
    "max_realizable_mu",
    "mdboost",
    "mdboost_stumps",
    "mincq",
    "mincq_path",
    "mincq_problem",
    "minimize_bound",
    "minimize_mixture_bound",
    "mixture_predict",
    "mixture_votes",
    "solve_mincq",
    "solve_mincq_path",
    "tmincq",
    "vebboost",
    "vebboost_stumps",
    "weights_after",
]
