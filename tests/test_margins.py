"""Margins and their moments against the classical ±1 definitions (tests/reference)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacbound import margins as M
from tests.reference import bounds_numpy as R


def random_vote(seed, m=23, n=7, real=False):
    rng = np.random.default_rng(seed)
    H = rng.uniform(-1, 1, (m, n)) if real else rng.choice([-1.0, 1.0], (m, n))
    y = rng.choice([-1.0, 1.0], m)
    q = rng.dirichlet(np.full(n, 0.5))
    return H, y, q


@settings(max_examples=200)
@given(st.integers(0, 2**32 - 1))
def test_statistics_equal_classical_definitions_for_pm1_voters(seed):
    H, y, q = random_vote(seed)
    np.testing.assert_allclose(M.gibbs_risk(H, y, q), R.gibbs_risk_pm1(H, y, q), atol=1e-12)
    np.testing.assert_allclose(M.disagreement(H, q), R.disagreement_pm1(H, q), atol=1e-12)
    np.testing.assert_allclose(M.joint_error(H, y, q), R.joint_error_pm1(H, y, q), atol=1e-12)
    np.testing.assert_allclose(M.majority_vote_risk(H, y, q), R.mv_risk(H, y, q), atol=1e-12)
    np.testing.assert_allclose(M.margin_moments(H, y, q), R.moments(H, y, q), atol=1e-12)


def test_real_valued_voters_use_the_margin_forms():
    H, y, q = random_vote(3, real=True)
    mu1, mu2 = R.moments(H, y, q)
    np.testing.assert_allclose(M.margins(H, y, q), y * (H @ q), atol=1e-14)
    np.testing.assert_allclose(M.gibbs_risk(H, y, q), (1 - mu1) / 2, atol=1e-14)
    np.testing.assert_allclose(M.disagreement(H, q), (1 - mu2) / 2, atol=1e-14)
    np.testing.assert_allclose(M.joint_error(H, y, q), (1 - 2 * mu1 + mu2) / 4, atol=1e-14)
    # R_S(G_Q) = e_S + d_S / 2 holds for any voters.
    np.testing.assert_allclose(
        M.gibbs_risk(H, y, q), M.joint_error(H, y, q) + M.disagreement(H, q) / 2, atol=1e-14
    )


def test_ties_count_as_majority_vote_errors():
    H = np.array([[1.0, -1.0], [1.0, 1.0]])
    assert float(M.majority_vote_risk(H, np.array([1.0, 1.0]), np.array([0.5, 0.5]))) == 0.5


@pytest.mark.parametrize("dtype", [jnp.int8, jnp.bfloat16, jnp.float32])
def test_compact_vote_dtypes_give_the_float32_statistics(dtype):
    H, y, q = random_vote(4)
    q32 = jnp.asarray(q, jnp.float32)
    mu = M.margin_moments(jnp.asarray(H, dtype), y.astype(np.float32), q32)
    ref = M.margin_moments(jnp.asarray(H, jnp.float32), y.astype(np.float32), q32)
    assert mu[0].dtype == jnp.float32
    np.testing.assert_allclose(mu, ref, rtol=1e-6)


def test_jit_equals_eager_equals_vmap_over_posteriors():
    H, y, _ = random_vote(5)
    qs = np.random.default_rng(6).dirichlet(np.ones(H.shape[1]), size=4)
    for f in (M.gibbs_risk, M.joint_error, M.majority_vote_risk):
        eager = np.array([f(H, y, q) for q in qs])
        chex.assert_trees_all_close(jax.jit(f)(H, y, qs[0]), eager[0], atol=1e-14)
        chex.assert_trees_all_close(jax.vmap(f, (None, None, 0))(H, y, qs), eager, atol=1e-14)


def test_moment_gradients_match_finite_differences():
    H, y, q = random_vote(7, real=True)
    for i in range(2):
        jax.test_util.check_grads(lambda q, i=i: M.margin_moments(H, y, q)[i], (q,), order=1)
