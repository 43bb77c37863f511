"""MinCq along a path of mu (pacbound._src.solvers.mincq_path) against CVXOPT and single solves."""

import functools

import cvxopt
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from sklearn.datasets import make_classification

from pacbound._src.learning.mincq_gap import mincq_problem
from pacbound._src.protocol import traits
from pacbound._src.solvers.mincq_path import mincq_path, solve_mincq_path
from pacbound.solvers import max_realizable_mu, mincq
from pacbound.voters import fit_stumps, votes

FRACTIONS = np.array([0.3, 0.004, 0.9, 0.05, 0.3])  # unsorted, a repeat, box-free to box-bound


def cvxopt_program1(H, y, mu):
    """Program 1 as printed (laviolette2011), by CVXOPT: the optimal objective."""
    m, n = H.shape
    M, m_s = H.T @ H / m, H.T @ y / m
    G = np.vstack([np.eye(n), -np.eye(n)])
    h = np.concatenate([np.full(n, 1.0 / n), np.zeros(n)])
    rhs = np.array([mu / 2 + m_s.sum() / (2 * n)])
    args = [cvxopt.matrix(t) for t in (2 * M, -M.mean(axis=1), G, h, m_s[None, :], rhs)]
    options = {"abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12, "show_progress": False}
    Q = np.array(cvxopt.solvers.qp(*args, options=options)["x"]).ravel()
    return Q @ M @ Q - M.mean(axis=1) @ Q


@pytest.fixture(scope="module")
def stumps():
    """Correlated stumps (4 thresholds on 8 features): an ill-conditioned ``M``, as in use."""
    X, y = make_classification(n_samples=120, n_features=8, n_informative=3, random_state=1)
    H = np.asarray(votes(fit_stumps(X, n_thresholds=4), X, dtype=jnp.float64))
    return H, 2.0 * y - 1


def test_path_matches_cvxopt_in_any_order(stumps):
    H, y = stumps
    m, n = H.shape
    mus = FRACTIONS * float(max_realizable_mu(H, y))
    path = mincq_path(H, y, mus, tol=1e-10)
    assert path.q.shape == (len(mus), 2 * n) and bool(jnp.all(path.converged))
    q = np.asarray(path.q)
    np.testing.assert_allclose(q[:, :n] + q[:, n:], 1 / n, rtol=1e-14)  # quasi-uniform
    assert np.all(q >= 0)
    u = 2 * n * q[:, :n] - 1
    np.testing.assert_allclose(u @ (H.T @ y / m) / n, mus, rtol=1e-12)  # first moment = mu
    bound_coordinates = np.abs(u) > 1 - 1e-9
    assert not bound_coordinates[1].any() and bound_coordinates[2].any()  # both regimes met
    for i, mu in enumerate(mus):
        reference = cvxopt_program1(H, y, mu)
        assert abs(float(path.objective[i]) - reference) <= 1e-7 * abs(reference)
        assert float(path.objective[i]) - reference <= float(path.info.duality_gap[i]) + 1e-15
    np.testing.assert_allclose(path.objective[0], path.objective[4], rtol=1e-9)
    np.testing.assert_array_equal(path.weights, q[:, :n] - q[:, n:])  # the protocol's fields
    assert path.voters is None and path.steps.shape == (len(mus),)


# float64 in the thorough tier: the default run checks the path in float64 against cvxopt
# (test_path_matches_cvxopt_in_any_order) and against single solves in float32 here
@pytest.mark.parametrize(
    "dtype",
    [np.float32, pytest.param(np.float64, marks=pytest.mark.thorough)],
    ids=["float32", "float64"],
)
def test_path_equals_single_solves(stumps, dtype):
    H, y = (t.astype(dtype) for t in stumps)
    mus = FRACTIONS * float(max_realizable_mu(H, y))
    path = mincq_path(H, y, mus)
    assert path.q.dtype == dtype and bool(jnp.all(path.converged))
    for i, mu in enumerate(mus):
        single = mincq(H, y, mu)
        gaps = float(path.info.duality_gap[i] + single.info.duality_gap)
        slack = 1e-5 * abs(float(single.objective)) if dtype == np.float32 else 1e-15
        assert abs(float(path.objective[i] - single.objective)) <= gaps + slack


def test_folds_vmap_and_no_recompilation(stumps, no_compilation):
    H, y = stumps
    masks = (np.arange(len(y))[None, :] % 2 != np.arange(2)[:, None]).astype(float)
    mus = FRACTIONS * float(min(max_realizable_mu(H, y, w) for w in masks))
    per_fold = jax.vmap(lambda w, mus: mincq_path(H, y, mus, sample_weight=w), (0, None))
    folds = per_fold(masks, mus)
    assert folds.q.shape == (2, len(mus), 2 * H.shape[1]) and bool(jnp.all(folds.converged))
    for k, mask in enumerate(masks.astype(bool)):
        sliced = mincq_path(H[mask], y[mask], mus)
        gaps = np.asarray(sliced.info.duality_gap + folds.info.duality_gap[k])
        assert np.all(np.abs(np.asarray(sliced.objective - folds.objective[k])) <= gaps + 1e-15)
    with no_compilation():
        again = per_fold(masks, 0.7 * mus)  # new values of mu: traced, no compilation
    assert bool(jnp.all(again.converged))


def test_mincq_declares_this_path(stumps):
    """Sweeps find the continuation through ``traits(mincq)``, with the options it accepts."""
    declared = traits(functools.partial(mincq, sample_weight=None))
    assert declared.path == "mu" and declared.solve_path is mincq_path
    assert declared.path_options == {"tol", "atol", "max_iter"}
    H, y = stumps
    mus = FRACTIONS * float(max_realizable_mu(H, y))
    via = declared.solve_path(H, y, mus, sample_weight=None, tol=1e-10)  # the protocol's call
    np.testing.assert_array_equal(via.q, mincq_path(H, y, mus, tol=1e-10).q)


def test_validation_and_unrealizable_mu(stumps):
    H, y = stumps
    largest = float(max_realizable_mu(H, y))
    with pytest.raises(ValueError, match=f"largest realizable mu is {largest:.10g} "):
        mincq_path(H, y, [0.1 * largest, 1.01 * largest])
    with pytest.raises(ValueError, match="min\\(mus\\) must be finite and lie in \\(0, inf\\)"):
        mincq_path(H, y, [0.0, 0.1 * largest])
    with pytest.raises(ValueError, match="one-dimensional"):
        mincq_path(H, y, np.full((2, 2), 0.1 * largest))
    with pytest.raises(ValueError, match="one-dimensional"):
        mincq_path(H, y, np.zeros(0))
    with pytest.raises(ValueError, match="labels must be -1 or \\+1"):
        mincq_path(H, (y > 0).astype(int), [0.1 * largest])
    with pytest.raises(ValueError, match="atol must be finite and lie in \\[0, inf\\)"):
        mincq_path(H, y, [0.1 * largest], atol=-1.0)
    # the unvalidated core: an unrealizable mu gives its row NaN and converged=False
    mus = jnp.asarray(FRACTIONS * largest).at[2].set(1.5 * largest)
    path = solve_mincq_path(mincq_problem(H, y), mus, 1e-10, 0.0, 50_000)  # the compiled one
    assert not bool(path.converged[2]) and np.all(np.isnan(path.q[2]))
    assert bool(jnp.all(path.converged.at[2].set(True))) and np.all(np.isfinite(path.q[:2]))
