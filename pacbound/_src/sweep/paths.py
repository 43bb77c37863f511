"""Grids solved as one path, for :mod:`pacbound._src.sweep`: a learner's cells in one continuation.

A grid over the single hyperparameter a learner declares as its ``path``
(:func:`pacbound.solvers.learner`; MinCq's ``mu``) is not run as one vmapped lane
per cell, which on a CPU costs every lane the slowest one's iterations, but as one call of the
learner's declared ``solve_path`` over the cells' values (MinCq: :func:`pacbound._src.solvers.
mincq_path`, sorted values, each solve warm-started from its neighbours). The results are those
of the single solves, to their certified tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from pacbound._src.protocol import traits

__all__ = ["path_result", "solves_as_path"]


def solves_as_path(learner: Callable, grids: dict, options: dict | None) -> bool:
    """Whether the grid is the learner's declared path hyperparameter alone, with options its
    path solver takes (a warm start ``q0``, say, keeps the vmapped cells).

    Example:
      >>> from pacbound.solvers import adaboost, mincq
      >>> solves_as_path(mincq, {"mu": [0.1, 0.2]}, None)  # MinCq declares its mu path
      True
      >>> solves_as_path(adaboost, {"n_rounds": [1, 2]}, None)
      False
    """
    declared = traits(learner)
    if declared.path is None:
        return False
    return set(grids) == {declared.path} and set(options or {}) <= declared.path_options


def path_result(plan, H, y, weight, values: dict, options: dict):
    """The learner's result on every cell of ``values`` (leading cell axis), from one path;
    ``weight`` the example weights (``None``: all 1).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound.solvers import mincq
      >>> from pacbound._src.sweep.cells import Plan
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> plan = Plan(mincq, (), None, None, path=True)
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = path_result(plan, H, y, None, {"mu": jnp.array([0.1, 0.2])}, {})
      >>> r.q.shape, r.converged.tolist()
      ((2, 6), [True, True])
    """
    declared = traits(plan.learner)
    solve_path = cast(Callable, declared.solve_path)  # declared: solves_as_path chose this
    return solve_path(
        H, y, values[declared.path], sample_weight=weight, **dict(plan.static), **options
    )
