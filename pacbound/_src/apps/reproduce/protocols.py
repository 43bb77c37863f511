"""The papers' Table 1 protocols: learners, grids and folds (run by :mod:`.runner`).

* ``roy2016-table1`` (roy2016 §7): features normalized with a hyperbolic tangent
  (:func:`pacbound._src.voters.tanh_normalize`, fitted on the training set); half of the examples
  for training, at most 500 (:func:`pacbound._src.datasets.roy2016_split`); 10 self-complemented
  decision stumps per feature; each learner's hyperparameter chosen by 5-fold cross-validation
  among 15 values on a logarithmic scale: ``mu`` in ``[10^-2, 10^-0.5]`` (CqBoost, MinCq),
  ``D`` in ``[1, 100]`` (MDBoost), ``C`` in ``[10^-3, 10^3]`` (LPBoost, CG-Boost), AdaBoost's
  rounds in ``[10^2, 10^6]`` (ours: ``[10^2, 10^4]``; a million rounds per fit is out of a
  CPU's reach); column generation stops at ``tol = 10^-6`` or at 100 columns (the paper
  reports fewer on most sets; more for CG-Boost). CB-Boost (bauvin2020, not in roy2016's
  table) is added with its rounds ``T`` in ``[10, 1000]``.
* ``germain2009-table1`` (germain2009 §5): the paper's ``|S|`` training examples (the same
  fraction where our copy of a set is smaller), the rest for testing; at most 10 stumps per
  feature; AdaBoost with 200 rounds; ridge regression over the stumps' votes; KL-EL and KL-QL
  (Algorithm 1) with ``C`` and ``gamma`` chosen by 10-fold cross-validation. The paper prints
  no grid: ours holds every value its Table 1 reports (``C`` from 0.02 to 1000, ``gamma``
  from 10^-4 to 0.5); ridge's penalty is ``1 / C`` over the same ``C``.

The published numbers live in :mod:`pacbound._src.apps.reproduce.paper_tables`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pacbound import solvers
from pacbound._src.apps.reproduce.baselines import ridge_votes
from pacbound._src.apps.reproduce.paper_tables import GERMAIN2009_TABLE1, ROY2016_TABLE1

__all__ = ["LEARNERS", "PROTOCOLS", "LearnerSpec", "Protocol"]

LEARNERS = {**solvers.LEARNERS, "ridge": ridge_votes}


class LearnerSpec(NamedTuple):
    """A learner of a protocol: a learner, fixed arguments and the grids cross-validated.

    Attributes:
      label: the paper's column name.
      learner: key of :data:`LEARNERS` (:data:`pacbound.solvers.LEARNERS` and ``"ridge"``).
      grid: ``{parameter: values}`` searched by cross-validation (empty: none).
      fixed: the learner's other arguments.
    """

    label: str
    learner: str
    grid: dict[str, tuple]
    fixed: dict[str, Any]


class Protocol(NamedTuple):
    """A paper's Table 1 protocol."""

    name: str
    learners: dict[str, LearnerSpec]
    datasets: tuple[str, ...]
    folds: int
    normalize: bool


def _logs(lo: float, hi: float, n: int = 15, integer: bool = False) -> tuple:
    values = np.logspace(lo, hi, n)
    return tuple(int(v) for v in np.unique(np.round(values))) if integer else tuple(values)


_CG = {"tol": 1e-6, "max_columns": 100}
_ROY = {
    "cqboost": LearnerSpec("CqBoost", "cqboost", {"mu": _logs(-2, -0.5)}, _CG),
    "mdboost": LearnerSpec("MDBoost", "mdboost", {"D": _logs(0, 2)}, _CG),
    "lpboost": LearnerSpec("LPBoost", "lpboost", {"C": _logs(-3, 3)}, _CG),
    "cgboost": LearnerSpec("CG-Boost", "cgboost", {"C": _logs(-3, 3)}, _CG),
    "adaboost": LearnerSpec("AdaBoost", "adaboost", {"n_rounds": _logs(2, 4, integer=True)}, {}),
    "mincq": LearnerSpec("MinCq", "mincq", {"mu": _logs(-2, -0.5)}, {}),
    "cbboost": LearnerSpec("CB-Boost", "cbboost", {"n_rounds": _logs(1, 3, integer=True)}, {}),
}
_C_GRID = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3)
_GAMMA_GRID = (1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
_KL = {"C": _C_GRID, "gamma": _GAMMA_GRID}
_GERMAIN = {
    "adaboost": LearnerSpec("AdaBoost", "adaboost", {}, {"n_rounds": 200}),
    "ridge": LearnerSpec("RR", "ridge", {"C": _C_GRID}, {}),
    "kl-el": LearnerSpec("KL-EL", "kl_el", _KL, {"max_iter": 1000}),
    "kl-ql": LearnerSpec("KL-QL", "kl_ql", _KL, {"max_iter": 1000}),
}
PROTOCOLS = {
    "roy2016-table1": Protocol("roy2016-table1", _ROY, tuple(ROY2016_TABLE1), 5, True),
    "germain2009-table1": Protocol(
        "germain2009-table1", _GERMAIN, tuple(GERMAIN2009_TABLE1), 10, False
    ),
}
