"""The learners, one module per paper algorithm; each calls its shared loop in
:mod:`pacbound._src.learning` once. Private: :mod:`pacbound.solvers` is their public face."""

from pacbound._src.solvers.adaboost import adaboost
from pacbound._src.solvers.cbboost import cbboost, gbcbboost
from pacbound._src.solvers.cgboost import cgboost
from pacbound._src.solvers.cqboost import cqboost
from pacbound._src.solvers.direct import minimize_bound
from pacbound._src.solvers.kl_coordinate import kl_coordinate_descent, kl_el, kl_ql
from pacbound._src.solvers.lpboost import lpboost
from pacbound._src.solvers.mdboost import mdboost
from pacbound._src.solvers.mincq import mincq, tmincq
from pacbound._src.solvers.recursive import recursive_pac_bayes
from pacbound._src.solvers.stochastic import minimize_dirichlet_bound
from pacbound._src.solvers.vebboost import vebboost

LEARNERS = {
    fn.__name__: fn
    for fn in (
        mincq, tmincq, cqboost, lpboost, cgboost, mdboost, cbboost, gbcbboost, adaboost, vebboost,
        kl_coordinate_descent, kl_ql, kl_el, minimize_bound, minimize_dirichlet_bound,
        recursive_pac_bayes,
    )
}  # fmt: skip
"""Every learner of the protocol, by name (each takes a vote matrix ``H`` or a
:class:`~pacbound.voters.Voters` family): what the protocol test runs, what the reproductions
and the estimators pick from."""

__all__ = ["LEARNERS"]
