"""Learners of weighted majority votes, one per paper algorithm, all on one protocol.

Every learner takes the voters' votes ``H`` as they are (or, ``*_stumps``, a stump search) and
returns a :class:`LearnerResult` whose posterior is over ``[H, -H]``; the protocol, the result
base and the declarations sweeps read are in :mod:`~pacbound.solvers.protocol`, and
:data:`LEARNERS` lists every learner by name.

* :mod:`~pacbound.solvers.mincq`: MinCq and TMinCq (laviolette2011 Programs 1-2); FISTA core
  in :mod:`~pacbound.solvers.mincq_fista`, the program's data and duality-gap certificate in
  :mod:`~pacbound.solvers.mincq_gap`; :mod:`~pacbound.solvers.mincq_path`: many ``mu`` by
  continuation.
* :mod:`~pacbound.solvers.cqboost`: CqBoost (roy2016 Algorithm 1), by column generation
  (:mod:`~pacbound.solvers.column_generation`), as the baselines
  :mod:`~pacbound.solvers.lpboost`, :mod:`~pacbound.solvers.cgboost` and
  :mod:`~pacbound.solvers.mdboost` (roy2016 §6).
* :mod:`~pacbound.solvers.cbboost`: CB-Boost and GB-CB-Boost (bauvin2020), their round in
  :mod:`~pacbound.solvers.cbboost_step`; :mod:`~pacbound.solvers.adaboost` (the baseline) and
  :mod:`~pacbound.solvers.vebboost` (Shivaswamy & Jebara) share
  :mod:`~pacbound.solvers.boosting`; the candidates (``[H, -H]`` or every stump) and the one
  stump codec are in :mod:`~pacbound.solvers.candidates`, products with ``H`` in
  :mod:`~pacbound.solvers.edges`.
* :mod:`~pacbound.solvers.kl_coordinate`: KL-regularized coordinate descent (germain2009).
* :mod:`~pacbound.solvers.direct`, :mod:`~pacbound.solvers.gaussian_mixture`: gradient
  minimization of a registered PAC-Bayes bound (:mod:`~pacbound.solvers.bound_objective`),
  on finite voters and on Gaussian mixtures of linear ones.
* :mod:`~pacbound.solvers.stochastic`: stochastic majority votes with a Dirichlet posterior
  (Zantedeschi et al. 2021), by gradient minimization of their bound; informed
  (data-dependent) priors for every bound minimizer in
  :mod:`~pacbound.solvers.informed_prior`.
"""

from pacbound.solvers.adaboost import AdaBoostInfo, adaboost, adaboost_stumps
from pacbound.solvers.cbboost import (
    CBBoostInfo,
    cbboost,
    cbboost_stumps,
    gbcbboost,
    gbcbboost_stumps,
    weights_after,
)
from pacbound.solvers.cgboost import cgboost, cgboost_stumps
from pacbound.solvers.column_generation import ColumnGenerationInfo
from pacbound.solvers.cqboost import cqboost, cqboost_max_mu, cqboost_stumps
from pacbound.solvers.direct import DirectInfo, minimize_bound
from pacbound.solvers.gaussian_mixture import (
    MixtureInfo,
    minimize_mixture_bound,
    mixture_predict,
    mixture_votes,
)
from pacbound.solvers.kl_coordinate import KLCoordinateInfo, kl_coordinate_descent, kl_el, kl_ql
from pacbound.solvers.lpboost import lpboost, lpboost_stumps
from pacbound.solvers.mdboost import mdboost, mdboost_stumps
from pacbound.solvers.mincq import (
    MinCqInfo,
    MinCqProblem,
    max_realizable_mu,
    mincq,
    mincq_problem,
    solve_mincq,
    tmincq,
)
from pacbound.solvers.mincq_path import mincq_path, solve_mincq_path
from pacbound.solvers.protocol import LearnerResult, LearnerTraits, learner, traits
from pacbound.solvers.stochastic import DirichletInfo, minimize_dirichlet_bound
from pacbound.solvers.vebboost import VEBBoostInfo, vebboost, vebboost_stumps

LEARNERS = {
    fn.__name__: fn
    for fn in (
        mincq, tmincq, cqboost, cqboost_stumps, lpboost, lpboost_stumps, cgboost,
        cgboost_stumps, mdboost, mdboost_stumps, cbboost, gbcbboost, cbboost_stumps,
        gbcbboost_stumps, adaboost, adaboost_stumps, vebboost, vebboost_stumps,
        kl_coordinate_descent, kl_ql, kl_el, minimize_bound, minimize_dirichlet_bound,
    )
}  # fmt: skip
"""Every learner that follows the protocol on a voter matrix ``H`` (or a stump search), by
name: what the protocol test runs, what the reproductions and the estimators pick from."""

__all__ = [
    "LEARNERS",
    "AdaBoostInfo",
    "CBBoostInfo",
    "ColumnGenerationInfo",
    "DirectInfo",
    "DirichletInfo",
    "KLCoordinateInfo",
    "LearnerResult",
    "LearnerTraits",
    "MinCqInfo",
    "MinCqProblem",
    "MixtureInfo",
    "VEBBoostInfo",
    "adaboost",
    "adaboost_stumps",
    "cbboost",
    "cbboost_stumps",
    "cgboost",
    "cgboost_stumps",
    "cqboost",
    "cqboost_max_mu",
    "cqboost_stumps",
    "gbcbboost",
    "gbcbboost_stumps",
    "kl_coordinate_descent",
    "kl_el",
    "kl_ql",
    "learner",
    "lpboost",
    "lpboost_stumps",
    "max_realizable_mu",
    "mdboost",
    "mdboost_stumps",
    "mincq",
    "mincq_path",
    "mincq_problem",
    "minimize_bound",
    "minimize_dirichlet_bound",
    "minimize_mixture_bound",
    "mixture_predict",
    "mixture_votes",
    "solve_mincq",
    "solve_mincq_path",
    "tmincq",
    "traits",
    "vebboost",
    "vebboost_stumps",
    "weights_after",
]
