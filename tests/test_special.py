"""The incomplete beta function and its parameter derivatives: SciPy values, mpmath derivatives,
edges, dtypes, jit/vmap."""

import jax
import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from pacbound._src import special as S
from tests.reference import special_mpmath as R

betainc = S.betainc
gradient = jax.jit(jax.vmap(jax.grad(S.betainc, argnums=(0, 1, 2))))
PAD = 16  # small calls are padded to one length: each function compiles once per dtype


def _padded(fn, *args, dtype=np.float64):
    """``fn`` on ``args`` padded to ``PAD`` entries (with ``(1, 1, 1/2)``), cut back."""
    count = np.size(args[0])
    fill = (1.0, 1.0, 0.5)[: len(args)]
    padded = [
        np.concatenate([np.ravel(t), np.full(PAD - count, f)]).astype(dtype)
        for t, f in zip(args, fill)
    ]
    out = fn(*padded)
    return tuple(o[:count] for o in out) if isinstance(out, tuple) else out[:count]


log_parameter = st.floats(-3.0, 4.0).map(lambda e: 10.0**e)  # a, b log-uniform in [1e-3, 1e4]
unit = st.floats(1e-12, 1.0 - 1e-12)
TOLERANCE = {np.float64: 1e-12, np.float32: 1e-5}


def _grid() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, x): a 13 x 13 log grid of parameters, each at 12 points of (0, 1) and at 5
    points within 3 standard deviations of the mean, where the fraction is slowest."""
    params = np.logspace(-3, 4, 13)
    a, b = (t.ravel() for t in np.meshgrid(params, params))
    spread = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    around = a / (a + b) + spread * np.array([-3.0, -1.0, 0.0, 1.0, 3.0])[:, None]
    fixed = np.array([1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.9999, 1 - 1e-9])
    x = np.concatenate([np.broadcast_to(fixed[:, None], (len(fixed), len(a))), around])
    x = np.clip(x, 1e-300, 1 - 1e-16)
    return np.broadcast_to(a, x.shape).ravel(), np.broadcast_to(b, x.shape).ravel(), x.ravel()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_match_scipy_on_a_grid(dtype):
    a, b, x = (t.astype(dtype) for t in _grid())
    ours = betainc(a, b, x)
    assert ours.dtype == dtype
    reference = sp.betainc(*(t.astype(np.float64) for t in (a, b, x)))
    np.testing.assert_allclose(ours, reference, rtol=0, atol=TOLERANCE[dtype])


@settings(max_examples=150)
@given(log_parameter, log_parameter, unit)
def test_values_match_scipy_on_random_draws(a, b, x):
    for dtype in (np.float64, np.float32):
        args = [dtype(t) for t in (a, b, x)]
        reference = sp.betainc(*(float(t) for t in args))
        ours = _padded(betainc, *args, dtype=dtype)
        assert abs(float(ours[0]) - reference) <= TOLERANCE[dtype]


# (a, b, x) across the regimes: small and large parameters, both sides of the switch point,
# tails, and the Dirichlet majority vote's x = 1/2 with a near b up to 1e4.
GRADIENT_POINTS = [
    (2.0, 3.0, 0.4),
    (0.5, 7.5, 0.1),
    (1e-3, 1e-3, 0.3),
    (1e-3, 50.0, 0.2),
    (4.2, 1e-3, 0.95),
    (30.0, 50.0, 0.45),
    (120.0, 90.0, 0.6),
    (800.0, 3.0, 0.99),
    (2.0, 900.0, 1e-4),
    (1500.0, 1400.0, 0.5),
    (6000.0, 5800.0, 0.5),
    (1e4, 9000.0, 0.5),
    (9500.0, 1e4, 0.5),
    (1e4, 1e4, 0.5),
    (1e4, 1e4, 0.49),
    (500.0, 520.0, 0.3),  # far tail: gradients of order 1e-190
]


def _relative_errors(ours, reference, floor):
    ours, reference = np.asarray(ours, np.float64), np.asarray(reference, np.float64)
    scale = np.abs(reference)
    return np.where(scale > floor, np.abs(ours - reference) / np.maximum(scale, floor), 0.0)


def test_gradients_match_mpmath_in_float64():
    ours = np.stack(_padded(gradient, *zip(*GRADIENT_POINTS)), axis=1)
    reference = np.array([R.betainc_gradient(*p) for p in GRADIENT_POINTS])
    assert np.max(_relative_errors(ours, reference, 1e-300)) < 1e-7


def test_gradients_match_mpmath_in_float32():
    points = np.array(GRADIENT_POINTS, np.float32)
    ours = np.stack(_padded(gradient, *points.T, dtype=np.float32), axis=1)
    assert ours.dtype == np.float32
    reference = np.array([R.betainc_gradient(*map(float, p)) for p in points])
    # float32: relative 1e-3 where the gradient is a normal float32 number, absolute below.
    assert np.max(_relative_errors(ours, reference, 1e-30)) < 1e-3
    np.testing.assert_allclose(ours, reference, rtol=1e-3, atol=1e-30)


@settings(max_examples=12)
@given(log_parameter, log_parameter, unit)
def test_gradients_match_mpmath_on_random_draws(a, b, x):
    ours = [float(g[0]) for g in _padded(gradient, [a], [b], [x])]
    assert np.max(_relative_errors(ours, R.betainc_gradient(a, b, x), 1e-300)) < 1e-7


def test_gradient_signs():
    # I decreases in a and increases in b and x.
    d_a, d_b, d_x = _padded(gradient, *zip(*GRADIENT_POINTS))
    assert (d_a <= 0).all() and (d_b >= 0).all() and (d_x >= 0).all()


def test_symmetry_and_the_centre_at_large_parameters():
    # I_{1/2}(a, a) = 1/2 exactly, and I_x(a, b) = 1 - I_{1-x}(b, a) (1 - x exact for x >= 1/2).
    a = np.array([1.0, 37.5, 1e3, 1e4, 4e4])
    np.testing.assert_allclose(_padded(betainc, a, a, np.full(5, 0.5)), 0.5, atol=1e-15)
    a, b, x = _grid()
    upper = x >= 0.5
    mirrored = 1 - np.asarray(betainc(b, a, 1 - x))
    np.testing.assert_allclose(np.asarray(betainc(a, b, x))[upper], mirrored[upper], atol=2e-14)


def test_the_default_stopping_rule_reaches_the_dtype_precision_at_large_parameters():
    # a = b = 1e5, at the mean and near it: the fraction's slowest region (about 300 steps);
    # every input is exact in float32.
    a, b, x = [1e5, 1e5, 1e5], [1e5, 1.002e5, 1e5], [0.5, 0.5, 0.4990234375]
    reference = [R.betainc(*point) for point in zip(a, b, x)]
    np.testing.assert_allclose(_padded(betainc, a, b, x), reference, rtol=0, atol=1e-13)
    single = _padded(betainc, a, b, x, dtype=np.float32)
    np.testing.assert_allclose(single, reference, rtol=0, atol=1e-5)
    grads = np.stack(_padded(gradient, a, b, x), axis=1)
    expected = np.array([R.betainc_gradient(*point) for point in zip(a, b, x)])
    np.testing.assert_allclose(grads, expected, rtol=1e-10)


def test_explicit_steps_are_a_fixed_count():
    a, b, x = 1e5, 1e5, 0.5  # I = 1/2, where the fraction is slowest
    reference = R.betainc(a, b, x)
    few = _padded(lambda *t: betainc(*t, steps=160), [a], [b], [x])
    assert abs(float(few[0]) - reference) > 1e-10  # too few steps here: truncated
    more = _padded(lambda *t: betainc(*t, steps=300), [a], [b], [x])
    assert abs(float(more[0]) - reference) < 1e-14


def test_edges_limits_and_invalid_input():
    nan = np.nan
    a = [2.0, 2.0, 0.0, 3.0, 0.0, -1.0, 2.0, 2.0, 0.5, 0.5, 0.3, 0.0, 3.0]
    b = [3.0, 3.0, 2.0, 0.0, 0.0, 2.0, -1.0, 3.0, 0.5, 0.5, 0.7, 2.0, 0.0]
    x = [0.0, 1.0, 0.3, 0.3, 0.3, 0.3, 0.3, 1.5, 0.0, 1.0, 0.0, 0.0, 1.0]
    expected = [0.0, 1.0, 1.0, 0.0, nan, nan, nan, nan, 0.0, 1.0, 0.0, 0.0, 1.0]
    np.testing.assert_array_equal(_padded(betainc, a, b, x), expected)
    np.testing.assert_array_equal(expected, sp.betainc(a, b, x))  # SciPy's conventions
    valid = ~np.isnan(expected)
    for dtype in (np.float64, np.float32):
        grads = np.stack(_padded(gradient, a, b, x, dtype=dtype))
        assert np.isfinite(grads[:, valid]).all() and np.isnan(grads[:, ~valid]).all()
        np.testing.assert_array_equal(grads[:2, valid], 0.0)  # flat in a and b at the edges
        np.testing.assert_allclose(grads[2, :2], 0.0, atol=1e-12)  # density 12 x (1-x)^2
        assert grads[2, 8] > 1e18 and grads[2, 9] > 1e3  # a, b = 1/2: infinite, kept finite


def test_jit_vmap_and_one_call_per_element_agree():
    a, b, x = np.array([0.5, 20.0, 900.0]), np.array([3.0, 25.0, 1000.0]), np.full(3, 0.48)
    one_by_one = [float(betainc(*point)) for point in zip(a, b, x)]
    np.testing.assert_allclose(_padded(betainc, a, b, x), one_by_one, rtol=1e-14)
    np.testing.assert_allclose(_padded(jax.vmap(betainc), a, b, x), one_by_one, rtol=1e-14)
    np.testing.assert_allclose(betainc(a, b, 0.48), one_by_one, rtol=1e-14)  # broadcasting
    scalar_grad = jax.grad(betainc, argnums=(0, 1, 2))
    one_by_one = np.array([[float(g) for g in scalar_grad(*point)] for point in zip(a, b, x)])
    np.testing.assert_allclose(np.stack(_padded(gradient, a, b, x), 1), one_by_one, rtol=1e-13)


def test_log_beta_and_its_building_blocks_match_mpmath():
    z = np.logspace(-3, 4, 40)
    a, b = (t.ravel() for t in np.meshgrid(z[::3], z[1::3]))
    blocks = jax.jit(
        lambda p, q, t: (S.log_beta(p, q), S.stirling_remainder(t), S.digamma_minus_log(t))
    )
    log_beta, remainders, digammas = blocks(a, b, z)
    np.testing.assert_allclose(
        log_beta, [R.log_beta(p, q) for p, q in zip(a, b)], rtol=4e-15, atol=2e-15
    )
    np.testing.assert_allclose(remainders, [R.stirling_remainder(t) for t in z], rtol=4e-15)
    np.testing.assert_allclose(digammas, [R.digamma_minus_log(t) for t in z], rtol=2e-15)
