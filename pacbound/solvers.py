"""Learners of weighted majority votes, one function per paper algorithm, on one protocol.

Every learner is ``learner(voters, y, *hyperparameters, sample_weight=None, **options)`` and
returns a :class:`LearnerResult` (docs: "The learner protocol"). ``voters`` is a vote matrix
``H`` ``(m, n)`` or any :class:`pacbound.voters.Voters` family, which the greedy learners
(:func:`cbboost`, :func:`gbcbboost`, :func:`adaboost`, :func:`vebboost`, :func:`cqboost`,
:func:`lpboost`, :func:`cgboost`, :func:`mdboost`) search matrix-free; the learners whose
program reads every voter's votes (:func:`mincq`, :func:`tmincq`, the KL-regularized and the
gradient learners) refuse a family with a ``TypeError``. Hyperparameters are traced (a
``jax.vmap`` over them compiles once), sizes static; :data:`LEARNERS` lists them by name.

* MinCq / TMinCq (laviolette2011 Programs 1-2): :func:`mincq`, :func:`tmincq`,
  :func:`mincq_path`, :func:`max_realizable_mu`;
* column generation (roy2016): :func:`cqboost` (Algorithm 1), :func:`cqboost_max_mu`, and the
  baselines :func:`lpboost`, :func:`cgboost`, :func:`mdboost`; the hooks for a master of your
  own: :class:`RestrictedMaster`, :class:`MasterSolution`, :class:`ColumnGenerationSpec`;
* greedy rounds: :func:`cbboost` / :func:`gbcbboost` (bauvin2020), :func:`adaboost`,
  :func:`vebboost` (Shivaswamy & Jebara);
* KL-regularized coordinate descent (germain2009): :func:`kl_coordinate_descent`, KL-QL
  with ``loss="quadratic"`` and KL-EL with ``loss="exponential"`` (also
  ``LEARNERS["kl_ql"]`` / ``LEARNERS["kl_el"]``, partials of it);
* gradient minimization of a registered bound: :func:`minimize_bound`,
  :func:`minimize_mixture_bound` (Gaussian mixtures of linear voters, :func:`mixture_predict`),
  :func:`minimize_dirichlet_bound` (Dirichlet stochastic votes);
* data-dependent priors built recursively (Wu et al., NeurIPS 2024): :func:`recursive_pac_bayes`,
  certified by :func:`pacbound.bounds.recursive_pac_bayes_bound`.
"""

from pacbound._src.learning.column_generation import (
    ColumnGenerationInfo,
    ColumnGenerationSpec,
)
from pacbound._src.learning.column_generation_loop import (
    MasterSolution,
    RestrictedMaster,
)
from pacbound._src.learning.mincq_gap import (
    MinCqInfo,
    max_realizable_mu,
)
from pacbound._src.protocol import (
    Family,
    LearnerResult,
    LearnerTraits,
    Status,
    learner,
    traits,
)
from pacbound._src.solvers import (
    LEARNERS,
    mincq_path,
)
from pacbound._src.solvers.adaboost import (
    AdaBoostInfo,
    adaboost,
)
from pacbound._src.solvers.cbboost import (
    CBBoostInfo,
    cbboost,
    gbcbboost,
    weights_after,
)
from pacbound._src.solvers.cgboost import (
    cgboost,
)
from pacbound._src.solvers.cqboost import (
    cqboost,
    cqboost_max_mu,
)
from pacbound._src.solvers.direct import (
    DirectInfo,
    minimize_bound,
)
from pacbound._src.solvers.gaussian_mixture import (
    MixtureInfo,
    minimize_mixture_bound,
    mixture_predict,
)
from pacbound._src.solvers.kl_coordinate import (
    KLCoordinateInfo,
    kl_coordinate_descent,
)
from pacbound._src.solvers.lpboost import (
    lpboost,
)
from pacbound._src.solvers.mdboost import (
    mdboost,
)
from pacbound._src.solvers.mincq import (
    mincq,
    tmincq,
)
from pacbound._src.solvers.recursive import (
    recursive_pac_bayes,
)
from pacbound._src.solvers.stochastic import (
    DirichletInfo,
    minimize_dirichlet_bound,
)
from pacbound._src.solvers.vebboost import (
    VEBBoostInfo,
    vebboost,
)

__all__ = [
    "LEARNERS",
    "AdaBoostInfo",
    "CBBoostInfo",
    "ColumnGenerationInfo",
    "ColumnGenerationSpec",
    "DirectInfo",
    "DirichletInfo",
    "Family",
    "KLCoordinateInfo",
    "LearnerResult",
    "LearnerTraits",
    "MasterSolution",
    "MinCqInfo",
    "MixtureInfo",
    "RestrictedMaster",
    "Status",
    "VEBBoostInfo",
    "adaboost",
    "cbboost",
    "cgboost",
    "cqboost",
    "cqboost_max_mu",
    "gbcbboost",
    "kl_coordinate_descent",
    "learner",
    "lpboost",
    "max_realizable_mu",
    "mdboost",
    "mincq",
    "mincq_path",
    "minimize_bound",
    "minimize_dirichlet_bound",
    "minimize_mixture_bound",
    "mixture_predict",
    "recursive_pac_bayes",
    "tmincq",
    "traits",
    "vebboost",
    "weights_after",
]
