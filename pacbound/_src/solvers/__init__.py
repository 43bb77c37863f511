"""Learners of weighted majority votes, one per paper algorithm, all on one protocol.

Every learner takes the voters' votes ``H`` as they are (or, ``*_stumps``, a stump search) and
returns a :class:`LearnerResult` whose posterior is over ``[H, -H]``; the protocol, the result
base and the declarations sweeps read are in :mod:`~pacbound._src.learning.protocol`, and
:data:`LEARNERS` lists every learner by name.

* :mod:`~pacbound._src.solvers.mincq`: MinCq and TMinCq (laviolette2011 Programs 1-2); FISTA core
  in :mod:`~pacbound._src.learning.mincq_fista`, the program's data and duality-gap certificate in
  :mod:`~pacbound._src.learning.mincq_gap`; :mod:`~pacbound._src.solvers.mincq_path`: many ``mu`` by
  continuation.
* :mod:`~pacbound._src.solvers.cqboost`: CqBoost (roy2016 Algorithm 1), by column generation
  (:mod:`~pacbound._src.learning.column_generation`), as the baselines
  :mod:`~pacbound._src.solvers.lpboost`, :mod:`~pacbound._src.solvers.cgboost` and
  :mod:`~pacbound._src.solvers.mdboost` (roy2016 §6).
* :mod:`~pacbound._src.solvers.cbboost`: CB-Boost and GB-CB-Boost (bauvin2020), their round in
  :mod:`~pacbound._src.learning.cbboost_step`; :mod:`~pacbound._src.solvers.adaboost` (the
  baseline) and
  :mod:`~pacbound._src.solvers.vebboost` (Shivaswamy & Jebara) share
  :mod:`~pacbound._src.learning.boosting`; the candidates (``[H, -H]`` or every stump) and the one
  stump codec are in :mod:`~pacbound._src.learning.candidates`, products with ``H`` in
  :mod:`~pacbound._src.learning.edges`.
* :mod:`~pacbound._src.solvers.kl_coordinate`: KL-regularized coordinate descent (germain2009).
* :mod:`~pacbound._src.solvers.direct`, :mod:`~pacbound._src.solvers.gaussian_mixture`: gradient
  minimization of a registered PAC-Bayes bound (:mod:`~pacbound._src.learning.bound_objective`),
  on finite voters and on Gaussian mixtures of linear ones.
* :mod:`~pacbound._src.solvers.stochastic`: stochastic majority votes with a Dirichlet posterior
  (Zantedeschi et al. 2021), by gradient minimization of their bound; informed
  (data-dependent) priors for every bound minimizer in
  :mod:`~pacbound._src.solvers.informed_prior`.
"""

from pacbound._src.learning.column_generation import ColumnGenerationInfo
from pacbound._src.learning.protocol import LearnerResult, LearnerTraits, learner, traits
from pacbound._src.solvers.adaboost import AdaBoostInfo, adaboost, adaboost_stumps
from pacbound._src.solvers.cbboost import (
    CBBoostInfo,
    cbboost,
    cbboost_stumps,
    gbcbboost,
    gbcbboost_stumps,
    weights_after,
)
from pacbound._src.solvers.cgboost import cgboost, cgboost_stumps
from pacbound._src.solvers.cqboost import cqboost, cqboost_max_mu, cqboost_stumps
from pacbound._src.solvers.direct import DirectInfo, minimize_bound
from pacbound._src.solvers.gaussian_mixture import (
    MixtureInfo,
    minimize_mixture_bound,
    mixture_predict,
    mixture_votes,
)
from pacbound._src.solvers.kl_coordinate import (
    KLCoordinateInfo,
    kl_coordinate_descent,
    kl_el,
    kl_ql,
)
from pacbound._src.solvers.lpboost import lpboost, lpboost_stumps
from pacbound._src.solvers.mdboost import mdboost, mdboost_stumps
from pacbound._src.solvers.mincq import (
    MinCqInfo,
    MinCqProblem,
    max_realizable_mu,
    mincq,
    mincq_problem,
    solve_mincq,
    tmincq,
)
from pacbound._src.solvers.mincq_path import mincq_path, solve_mincq_path
from pacbound._src.solvers.stochastic import DirichletInfo, minimize_dirichlet_bound
from pacbound._src.solvers.vebboost import VEBBoostInfo, vebboost, vebboost_stumps

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
