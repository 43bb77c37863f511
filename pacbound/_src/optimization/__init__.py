"""Internal optimization routines shared by the learners (not learners themselves).

* :mod:`~pacbound._src.optimization.projections`: exact Euclidean projections onto a box ∩
  hyperplane (and its rank-one prox), with custom JVPs (MinCq's feasible set).
* :mod:`~pacbound._src.optimization.simplex_qp`: a convex QP over the simplex ∩ a halfspace by
  restarted FISTA with exact projections (CqBoost's and MDBoost's restricted masters).
* :mod:`~pacbound._src.optimization.interior_point`: a dense Mehrotra predictor-corrector method
  for the soft-margin programs (LPBoost's and CG-Boost's restricted masters).
"""

from pacbound._src.optimization.projections import (
    BoxHyperplaneProjection,
    box_hyperplane_feasible,
    box_hyperplane_projection,
    box_hyperplane_rank_one_prox,
    project_box_hyperplane,
)

__all__ = [
    "BoxHyperplaneProjection",
    "box_hyperplane_feasible",
    "box_hyperplane_projection",
    "box_hyperplane_rank_one_prox",
    "project_box_hyperplane",
]
