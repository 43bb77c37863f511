"""The soft-margin master (LPBoost's LP, CG-Boost's QP) against HiGHS / CVXOPT where it is hard:
``C`` up to 1000 (close to the hard margin, where first-order methods crawl), duplicate columns
(a singular normal matrix), examples with ``u = 0`` (dropped) and the ``vmap`` over ``u``."""

import jax
import numpy as np
import pytest

from pacbound._src.optimization.interior_point import solve_soft_margin
from tests.reference import column_generation_cvxopt as ref

N_COLUMNS = 24
solve = jax.jit(solve_soft_margin, static_argnums=2)


@pytest.fixture(scope="module")
def problem():
    """``(y, H)``: 60 wdbc examples, 12 columns of stumps and a duplicate of each (24 in all)."""
    _, y, H = ref.stump_problem(m=60, features=(0, 7, 20), n_thresholds=2)
    return y, np.hstack([H, H])


def _run(y, H, rho, u, n_active, max_iter=100):
    (m, n), K = H.shape, y[:, None] * H
    buffer = np.zeros((m, N_COLUMNS))
    buffer[:, :n] = K
    active = np.arange(N_COLUMNS) < n_active
    zeros = np.zeros(N_COLUMNS), np.zeros(m)
    return solve(buffer, np.full(N_COLUMNS, 1.0 - rho), rho, u, active, *zeros, 1.0, 1e-9,
                 max_iter)  # fmt: skip


@pytest.mark.parametrize("rho", [0.0, 1.0])
@pytest.mark.parametrize("C", [1e-3, 1.0, 1e3])
def test_matches_the_reference_from_soft_to_hard_margin(problem, rho, C):
    y, H = problem
    m, n = H.shape
    r = _run(y, H, rho, np.full(m, C), n)
    assert bool(r.converged) and int(r.iterations) < 60
    reference = (ref.lpboost_lp if rho == 0 else ref.cgboost_qp)(H, y, C)
    primal, dual = float(r.primal_objective), float(r.dual_objective)
    assert dual <= reference.objective * (1 + 1e-9) and reference.objective <= primal * (1 + 1e-9)
    np.testing.assert_allclose(primal, reference.objective, rtol=1e-9)
    x, alpha = np.asarray(r.x), np.asarray(r.y)
    assert np.all(x >= 0) and np.all(x[n:] == 0) and np.all((alpha >= 0) & (alpha <= C))
    if rho == 0:  # the duals are exactly feasible
        assert np.max(H.T @ (y * alpha)) <= 1 + 1e-12


@pytest.mark.parametrize("rho", [0.0, 1.0])
def test_zero_bounds_drop_the_examples(problem, rho):
    y, H = problem
    keep = np.arange(len(y)) % 3 != 0
    masked = _run(y, H, rho, np.where(keep, 10.0, 0.0), H.shape[1])
    sliced = _run(y[keep], H[keep], rho, np.full(keep.sum(), 10.0), H.shape[1])
    assert bool(masked.converged) and bool(sliced.converged)
    np.testing.assert_allclose(masked.primal_objective, sliced.primal_objective, rtol=1e-9)
    np.testing.assert_array_equal(np.asarray(masked.y)[~keep], 0)


def test_vmap_over_the_bounds_equals_single_solves(problem):
    y, H = problem
    m, n = H.shape
    bounds = np.array([0.01, 1.0, 100.0])[:, None] * np.ones(m)
    swept = jax.vmap(lambda u: _run(y, H, 1.0, u, n))(bounds)
    for i, u in enumerate(bounds):
        single = _run(y, H, 1.0, u, n)
        assert bool(swept.converged[i]) and bool(single.converged)
        np.testing.assert_allclose(swept.primal_objective[i], single.primal_objective, rtol=1e-9)
        # ||x - x*||^2 <= 2 gap (strong convexity): x is only as close as sqrt(2e-9 * 6.5)
        np.testing.assert_allclose(swept.x[i], single.x, atol=2e-4)


def test_step_cap_is_reported_not_converged(problem):
    y, H = problem
    r = _run(y, H, 0.0, np.full(len(y), 1e3), H.shape[1], max_iter=2)
    assert int(r.iterations) == 2 and not bool(r.converged)
    assert float(r.dual_objective) <= float(r.primal_objective)
