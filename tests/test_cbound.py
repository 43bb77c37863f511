"""The C-bound: references, the theorem's inequality, guards, and the PAC-Bound 2 supremum."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

from pacbound import cbound as C
from pacbound import margins as M
from tests.reference import bounds_numpy as R

empirical_cbound = jax.jit(C.empirical_cbound)
mv_risk = jax.jit(M.majority_vote_risk)


@settings(max_examples=1000)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_cbound_bounds_the_majority_vote_risk_when_mu1_is_positive(seed, real):
    # laviolette2011 Theorem 1 / bauvin2020 Corollary 1 applied to the empirical distribution.
    rng = np.random.default_rng(seed)
    H = rng.uniform(-1, 1, (17, 5)) if real else rng.choice([-1.0, 1.0], (17, 5))
    y = rng.choice([-1.0, 1.0], 17)
    H[:, 0] = y * np.where(rng.uniform(size=17) < 0.8, 1.0, -1.0)  # one better-than-chance voter
    q = rng.dirichlet(np.full(5, 0.3))
    mu1, mu2 = R.moments(H, y, q)
    bound = float(empirical_cbound(H, y, q))
    np.testing.assert_allclose(bound, R.cbound(mu1, mu2), atol=1e-12)
    if mu1 > 0:
        assert bound >= float(mv_risk(H, y, q)) - 1e-12


def test_cbound_forms_agree_and_are_guarded():
    r, d = 0.3, 0.35
    np.testing.assert_allclose(C.cbound_from_risk(r, d), C.cbound(1 - 2 * r, 1 - 2 * d), atol=1e-15)
    assert float(C.cbound(-0.2, 0.5)) == 1.0 and float(C.cbound(0.0, 0.0)) == 1.0
    assert float(C.cbound(0.3, 0.0)) == 1.0 and float(C.cbound_from_risk(0.6, 0.1)) == 1.0


@pytest.mark.parametrize("mu1, mu2", [(0.3, 0.4), (0.0, 0.4), (-0.1, 0.2), (0.2, 0.0), (0.0, 0.0)])
def test_cbound_gradients_are_finite_everywhere(mu1, mu2):
    grads = jax.grad(C.cbound, argnums=(0, 1))(mu1, mu2)
    assert all(np.isfinite(g) for g in grads)


def test_cbound_gradient_matches_finite_differences():
    check_grads(C.cbound, (0.3, 0.4), order=2)


def consistent_pair(rng):
    """A Gibbs risk and disagreement some ±1 majority vote can have (mu1^2 <= mu2)."""
    mu1 = rng.uniform(0.02, 0.9)
    mu2 = rng.uniform(mu1**2, 1.0)
    return (1 - mu1) / 2, (1 - mu2) / 2


@pytest.mark.parametrize("seed", range(8))
def test_trinomial_sup_equals_the_2d_reference(seed):
    rng = np.random.default_rng(seed)
    r, d = consistent_pair(rng)
    kl, m = rng.choice([0.0, 0.5, 5.0]), int(rng.integers(50, 3000))
    np.testing.assert_allclose(
        C.cbound_trinomial_sup(r - d / 2, d, R._pb2_eps(kl, m, 0.05)),
        R.pac_bound_2(r, d, kl, m, 0.05),
        rtol=1e-6,
    )


def test_trinomial_sup_edges_and_gradient():
    # eps = 0: the ball is the empirical point, the sup is the empirical C-bound.
    np.testing.assert_allclose(C.cbound_trinomial_sup(0.1, 0.3, 0.0), C.cbound_from_risk(0.25, 0.3))
    assert float(C.cbound_trinomial_sup(0.1, 0.3, 10.0)) == 1.0  # the ball reaches 2e + d = 1
    check_grads(C.cbound_trinomial_sup, (0.1, 0.3, 0.02), order=1, modes=["rev"], eps=1e-5)
    for args in [(0.0, 0.0, 0.01), (0.1, 0.3, 0.0), (0.1, 0.3, 10.0), (0.0, 0.3, 0.05)]:
        value, grads = jax.value_and_grad(C.cbound_trinomial_sup, argnums=(0, 1, 2))(*args)
        assert np.isfinite(value) and all(np.isfinite(g) for g in grads)


# Thorough tier: the default run checks the supremum vmapped (certify evaluates PAC-Bound 2 as
# one vmapped call over its confidence levels, against the reference in test_certify; the
# array-m broadcast of test_certified_numerics vmaps it too) and certified in float32
# (test_certified_numerics, on batches of statistics).
@pytest.mark.thorough
def test_trinomial_sup_vmaps_and_runs_in_float32():
    e, d, eps = jnp.array([0.1, 0.05]), jnp.array([0.3, 0.2]), jnp.array([0.02, 0.1])
    eager = jnp.stack([C.cbound_trinomial_sup(*a) for a in zip(e, d, eps)])
    np.testing.assert_allclose(jax.vmap(C.cbound_trinomial_sup)(e, d, eps), eager, atol=1e-14)
    v32 = C.cbound_trinomial_sup(*(x.astype(jnp.float32) for x in (e, d, eps)))
    assert v32.dtype == jnp.float32
    np.testing.assert_allclose(v32, eager, rtol=1e-4)
