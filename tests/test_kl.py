"""KL terms and the kl-inverses: references, inversion, gradients, edges, dtypes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads

from pacbound import kl as K
from tests.reference import bounds_numpy as R

kl_inv_upper = jax.jit(K.kl_inv_upper)
kl_inv_lower = jax.jit(K.kl_inv_lower)
binary_kl = jax.jit(K.binary_kl)

unit = st.floats(0.0, 1.0)
level = st.one_of(st.floats(0.0, 5.0), st.floats(1e-12, 1e-3))


def test_divergences_equal_the_reference():
    rng = np.random.default_rng(0)
    for _ in range(20):
        q, p = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
        np.testing.assert_allclose(K.kl_divergence(q, p), R.kl_divergence(q, p), rtol=1e-12)
        a, b = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        np.testing.assert_allclose(
            K.trinomial_kl(a[0], a[1], b[0], b[1]),
            R.trinomial_kl(a[0], a[1], b[0], b[1]),
            rtol=1e-12,
        )
    for q, p in [(0.0, 0.3), (1.0, 0.3), (0.2, 0.0), (0.0, 0.0), (0.4, 0.4)]:
        np.testing.assert_allclose(K.binary_kl(q, p), R.binary_kl(q, p), rtol=1e-12)
    assert np.isinf(K.kl_divergence(np.array([0.5, 0.5]), np.array([1.0, 0.0])))


@settings(max_examples=1000)
@given(unit, level)
def test_kl_inverses_equal_brentq_and_invert(q, eps):
    up, low = float(kl_inv_upper(q, eps)), float(kl_inv_lower(q, eps))
    np.testing.assert_allclose(up, R.kl_inv_upper(q, eps), atol=1e-10)
    np.testing.assert_allclose(low, R.kl_inv_lower(q, eps), atol=1e-10)
    assert low <= q <= up
    # kl(q || inverse) == eps wherever the inverse is strictly inside (0, 1).
    for p in (up, low):
        if 1e-9 < p < 1 - 1e-9 and abs(p - q) > 1e-6:
            np.testing.assert_allclose(float(binary_kl(q, p)), eps, rtol=1e-8, atol=1e-12)


@settings(max_examples=300)
@given(unit, level, st.floats(1e-6, 1.0))
def test_kl_inverses_are_monotone_in_eps(q, eps, extra):
    assert float(kl_inv_upper(q, eps + extra)) >= float(kl_inv_upper(q, eps))
    assert float(kl_inv_lower(q, eps + extra)) <= float(kl_inv_lower(q, eps))


@pytest.mark.parametrize("f", [K.kl_inv_upper, K.kl_inv_lower])
@pytest.mark.parametrize("q, eps", [(0.3, 0.1), (0.05, 0.7), (0.9, 0.02), (0.5, 3.0)])
def test_kl_inverse_gradients_match_finite_differences(f, q, eps):
    check_grads(f, (q, eps), order=1, modes=["fwd", "rev"], eps=1e-6)


@pytest.mark.parametrize("upper", [True, False])
def test_kl_inverse_values_and_gradients_at_the_edges(upper):
    """q in {0, 1, 0.3} x eps in {0, 0.2}, float32 and float64: the value equals the reference
    (float32 to 32 ulps), lies in [q, 1] (upper root) or [0, q] (lower root), and its derivatives
    are finite."""
    f, reference = (K.kl_inv_upper, R.kl_inv_upper) if upper else (K.kl_inv_lower, R.kl_inv_lower)
    for dtype in (jnp.float32, jnp.float64):
        for q in (0.0, 1.0, 0.3):
            for eps in (0.0, 0.2):
                args = jnp.asarray(q, dtype), jnp.asarray(eps, dtype)
                value, grads = f(*args), jax.grad(f, argnums=(0, 1))(*args)
                case = (dtype.__name__, q, eps, float(value))
                assert value.dtype == dtype, case
                assert (q <= value <= 1.0) if upper else (0.0 <= value <= q), case
                # float32: the certified roots' 32 ulps (tests/test_certified_numerics.py)
                rtol = 4e-6 if dtype == jnp.float32 else 1e-12
                np.testing.assert_allclose(value, reference(q, eps), rtol=rtol, err_msg=str(case))
                assert all(np.isfinite(g) for g in grads), (case, grads)


def test_kl_gradients_are_finite_at_the_edges():
    for q in (0.0, 1.0):
        assert all(np.isfinite(g) for g in jax.grad(K.binary_kl, argnums=(0, 1))(q, 0.4))
    g = jax.grad(K.kl_divergence)(jnp.array([0.0, 0.5, 0.5]), jnp.full(3, 1 / 3))
    assert np.all(np.isfinite(g))
    check_grads(K.binary_kl, (0.2, 0.6), order=2)
    check_grads(lambda a, b: K.trinomial_kl(a, 0.3, b, 0.2), (0.1, 0.4), order=1)


def test_float32_kl_inverse_is_accurate_to_its_precision():
    rng = np.random.default_rng(1)
    q, eps = rng.uniform(size=500), rng.uniform(1e-4, 2.0, size=500)
    p32 = K.kl_inv_upper(q.astype(np.float32), eps.astype(np.float32))
    assert p32.dtype == jnp.float32
    ref = [R.kl_inv_upper(a, b) for a, b in zip(q.astype(np.float32), eps.astype(np.float32))]
    np.testing.assert_allclose(p32, ref, atol=5e-5)


def test_vmap_and_jit_equal_eager():
    q, eps = jnp.linspace(0, 1, 7), jnp.linspace(0, 2, 7)
    eager = jnp.stack([K.kl_inv_upper(a, b) for a, b in zip(q, eps)])
    np.testing.assert_allclose(jax.vmap(K.kl_inv_upper)(q, eps), eager, atol=1e-15)
    np.testing.assert_allclose(jax.jit(K.kl_inv_upper)(q, eps), eager, atol=1e-15)


def test_gaussian_mixture_and_quasi_uniform_kl():
    q, w = np.array([0.2, 0.8]), np.array([[1.0, 2.0], [0.0, -1.0]])
    np.testing.assert_allclose(K.gaussian_mixture_kl_bound(q, w), 0.5 * (0.2 * 5 + 0.8 * 1))
    n = 4
    weights = np.array([0.25, -0.1, 0.0, 0.05])
    Q = np.concatenate([(1 / n + weights) / 2, (1 / n - weights) / 2])
    np.testing.assert_allclose(
        K.quasi_uniform_kl(weights), R.kl_divergence(Q, np.full(2 * n, 1 / (2 * n)))
    )
    # eq. 16's l2 relaxation: KL <= n ||w||^2, and KL = 0 at w = 0.
    assert float(K.quasi_uniform_kl(weights)) <= n * np.sum(weights**2) + 1e-12
    np.testing.assert_allclose(K.quasi_uniform_kl(np.zeros(n)), 0.0, atol=1e-15)
