"""Shared numerical primitives against mpmath at 60 digits: the Stirling remainder of
pacbound._src.special (the binomial test-set bound's), Lambert's W on both real branches (the branch
point included), the golden-section maximizer on concave functions with and without a kink;
float32 and float64, jit and vmap."""

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest

from pacbound._src.numerics import golden_section_argmax, lambert_w
from pacbound._src.special import stirling_remainder

DPS = 60  # each reference sets it locally: other modules' settings never reach it


def stirling_ref(x):
    with mpmath.workdps(DPS):
        x = mpmath.mpf(x)
        log_factorial = mpmath.loggamma(x + 1)
        return float(log_factorial - (x + 0.5) * mpmath.log(x) + x - mpmath.log(2 * mpmath.pi) / 2)


def lambert_ref(x, branch):
    with mpmath.workdps(DPS):
        return float(mpmath.lambertw(mpmath.mpf(x), branch).real)


STIRLING_POINTS = [0.5, 1.0, 2.0, 7.0, 14.999, 15.0, 15.001, 40.0, 1e3, 1e6, 2.0**24, 1e12]


@pytest.mark.parametrize(("x64", "atol", "rtol"), [(True, 5e-15, 1e-15), (False, 3e-6, 5e-7)])
def test_stirling_remainder_matches_mpmath(x64, atol, rtol):
    """Absolute accuracy below the switch at 15 (``ln x!`` minus its Stirling part), relative
    above (the series)."""
    with jax.enable_x64(x64):
        dtype = jnp.float64 if x64 else jnp.float32
        xs = np.asarray(STIRLING_POINTS, dtype)
        got = np.asarray(jax.jit(stirling_remainder)(jnp.asarray(xs)))
        assert got.dtype == dtype
        want = np.array([stirling_ref(float(x)) for x in xs])
        small = xs < 15
        np.testing.assert_allclose(got[small], want[small], atol=atol, rtol=0)
        np.testing.assert_allclose(got[~small], want[~small], rtol=rtol)


def test_stirling_remainder_is_infinite_at_zero():
    assert float(stirling_remainder(0.0)) == np.inf


EDGE = -float(mpmath.exp(-1))
W0_POINTS = [EDGE, EDGE + 1e-12, EDGE + 1e-6, -0.3, -0.26, -0.25, -0.1, -1e-9, 0.0, 1e-9, 0.5]
W0_POINTS += [2.9, 3.0, 10.0, 1e3, 1e10, 1e30]
WM1_POINTS = [EDGE, EDGE + 1e-12, EDGE + 1e-6, -0.3, -0.26, -0.25, -0.1, -1e-9, -1e-30]


@pytest.mark.parametrize("branch", [0, -1])
def test_lambert_w_matches_mpmath_on_both_branches(branch):
    points = W0_POINTS if branch == 0 else WM1_POINTS
    with jax.enable_x64(True):
        got = np.asarray(jax.vmap(lambda x: lambert_w(x, branch))(jnp.asarray(points)))
        want = np.array([lambert_ref(x, branch) for x in points])
        # near -1/e, W moves by ~sqrt(2 e dx): an ulp of x there is ~1e-8 of W
        tol = np.where(np.abs(np.asarray(points) - EDGE) < 1e-5, 1e-7, 1e-14)
        np.testing.assert_array_less(np.abs(got - want), tol * np.maximum(1, np.abs(want)))
        np.testing.assert_allclose(np.asarray(points), got * np.exp(got), rtol=1e-12, atol=1e-15)


def test_lambert_w_in_float32_and_bad_branch():
    got = lambert_w(jnp.asarray([-0.2, 0.5, 100.0], jnp.float32), 0)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, [lambert_ref(x, 0) for x in (-0.2, 0.5, 100.0)], rtol=2e-6)
    with pytest.raises(ValueError, match="branch"):
        lambert_w(0.5, 1)


@pytest.mark.parametrize("x64", [True, False])
def test_golden_section_finds_smooth_and_kinked_maxima(x64):
    with jax.enable_x64(x64):
        dtype = jnp.float64 if x64 else jnp.float32
        centers = jnp.asarray([0.0, 0.123456789, 0.7, 1.0], dtype)

        def smooth(x, c):
            return -((x - c) ** 2)

        def kinked(x, c):  # a concave tent: no derivative at its top
            return -jnp.abs(x - c)

        # a kink is found to the bracket (0.618^60), a smooth top to sqrt(eps)
        tolerances = {smooth: 3e-8 if x64 else 1e-3, kinked: 1e-12 if x64 else 1e-6}
        for f, tol in tolerances.items():
            got = jax.jit(lambda c, f=f: golden_section_argmax(f, 0.0, 1.0, (c,)))(centers)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, centers, atol=tol)


def test_golden_section_passes_no_gradient():
    def best_value(c):
        x = golden_section_argmax(lambda x, c: -((x - c) ** 2) + c, 0.0, 1.0, (c,))
        return -((x - c) ** 2) + c  # the envelope theorem: d/dc max = 1

    with jax.enable_x64(True):
        assert float(jax.grad(best_value)(0.3)) == pytest.approx(1.0, abs=1e-7)
