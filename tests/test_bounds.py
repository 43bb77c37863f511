"""PAC-Bayes bounds: independent references, the theory's inequalities, edges, jit/vmap/dtypes."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pacbound import bounds as B
from tests.reference import bounds_numpy as R

risk = st.floats(0.0, 1.0)
kl_value = st.floats(0.0, 50.0)
size = st.integers(10, 100_000)
confidence = st.floats(1e-6, 1.0)

# Each bound as f(stats, kl, m, delta) with stats drawn from ``draw_stats``, and its reference.
GIBBS = {
    "mcallester": (B.mcallester, R.mcallester),
    "seeger": (B.seeger, R.seeger),
    "catoni": (lambda r, *a: B.catoni(r, *a, 1.5), lambda r, *a: R.catoni(r, *a, 1.5)),
    "pac_bound_0": (B.pac_bound_0, R.pac_bound_0),
}
MOMENTS = {
    "cbound_roy2016": (B.cbound_roy2016, R.cbound_roy2016),
    "cbound_quasi_uniform": (
        lambda mu1, mu2, kl, m, d: B.cbound_quasi_uniform(mu1, mu2, m, d),
        lambda mu1, mu2, kl, m, d: R.cbound_quasi_uniform(mu1, mu2, m, d),
    ),
    "pac_bound_1": (
        lambda mu1, mu2, *a: B.pac_bound_1((1 - mu1) / 2, (1 - mu2) / 2, *a),
        lambda mu1, mu2, *a: R.pac_bound_1((1 - mu1) / 2, (1 - mu2) / 2, *a),
    ),
    "pac_bound_2": (
        lambda mu1, mu2, *a: B.pac_bound_2((1 - mu1) / 2, (1 - mu2) / 2, *a),
        lambda mu1, mu2, *a: R.pac_bound_2((1 - mu1) / 2, (1 - mu2) / 2, *a),
    ),
}
JITTED = {name: jax.jit(f) for name, (f, _) in {**GIBBS, **MOMENTS}.items()}


def _value_and_gradient(name):
    """The bound and its derivatives in every argument (statistics, KL, m, delta): one program
    per bound, shared by the edge and finite-difference tests (call it with Python floats)."""
    n_args = (1 if name in GIBBS else 2) + 3
    return jax.jit(jax.value_and_grad(JITTED[name], argnums=tuple(range(n_args))))


VALUE_AND_GRADIENT = {name: _value_and_gradient(name) for name in JITTED}


@st.composite
def moments(draw):
    """Margin moments some majority vote can have: mu1^2 <= mu2 <= 1."""
    mu1 = draw(st.floats(-0.5, 1.0))
    return mu1, draw(st.floats(mu1**2, 1.0))


@pytest.mark.parametrize("name", sorted(GIBBS))
@settings(max_examples=250)
@given(r=risk, kl=kl_value, m=size, delta=confidence)
def test_gibbs_bounds_equal_reference(name, r, kl, m, delta):
    np.testing.assert_allclose(
        JITTED[name](r, kl, m, delta), GIBBS[name][1](r, kl, m, delta), rtol=1e-9, atol=1e-10
    )


@pytest.mark.parametrize("name", ["cbound_roy2016", "cbound_quasi_uniform", "pac_bound_1"])
@settings(max_examples=250)
@given(mu=moments(), kl=kl_value, m=size, delta=confidence)
def test_cbound_bounds_equal_reference(name, mu, kl, m, delta):
    ref = MOMENTS[name][1](*mu, kl, m, delta)
    np.testing.assert_allclose(JITTED[name](*mu, kl, m, delta), ref, rtol=1e-9, atol=1e-10)


@settings(max_examples=12)
@given(mu=moments(), kl=st.floats(0.0, 5.0), m=st.integers(50, 5000), delta=confidence)
def test_pac_bound_2_equals_the_2d_reference(mu, kl, m, delta):
    assume(mu[0] > 0.05)  # where the reference's 2-D search is informative
    ref = R.pac_bound_2((1 - mu[0]) / 2, (1 - mu[1]) / 2, kl, m, delta)
    np.testing.assert_allclose(JITTED["pac_bound_2"](*mu, kl, m, delta), ref, rtol=1e-6)


@settings(max_examples=1000)
@given(r=risk, kl=kl_value, m=size, delta=confidence)
def test_seeger_is_tighter_than_mcallester(r, kl, m, delta):
    assert float(JITTED["seeger"](r, kl, m, delta)) <= float(JITTED["mcallester"](r, kl, m, delta))


@pytest.mark.parametrize("name", sorted(JITTED))
@settings(max_examples=120)
@given(
    mu=moments(),
    kl=st.floats(0.0, 20.0),
    extra=st.floats(1e-3, 5.0),
    m=size,
    delta=st.floats(1e-4, 1.0),
    shrink=st.floats(0.01, 0.9),
)
def test_every_bound_is_monotone_in_delta_and_kl(name, mu, kl, extra, m, delta, shrink):
    f = JITTED[name]
    stats = ((1 - mu[0]) / 2,) if name in GIBBS else mu
    value = float(f(*stats, kl, m, delta))
    tol = 1e-9 * max(1.0, abs(value))
    assert float(f(*stats, kl, m, delta * shrink)) >= value - tol
    if name != "cbound_quasi_uniform":  # KL-free
        assert float(f(*stats, kl + extra, m, delta)) >= value - tol


# (Gibbs risk, disagreement) on the edges of what a vote can have: risk 0 or 1, mu1 <= 0,
# mu2 -> 0 (d -> 1/2), no disagreement.
# (0.0, 1e-9): the joint error R_S - d_S / 2 rounds below 0.
EDGES = [(0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (0.45, 0.4999), (0.3, 0.0), (0.6, 0.2), (0.0, 1e-9)]


def _empirical(name, r, d):
    """What the bound can never be below: the empirical Gibbs risk (the Gibbs bounds), twice it
    (PAC-Bound 0, through R(B_Q) <= 2 R(G_Q)), the empirical C-bound (the C-bound forms: their
    moments are pessimistic, their kl-balls hold the empirical point); at most 1."""
    if name in GIBBS:
        return min(1.0, 2 * r if name == "pac_bound_0" else r)
    return min(1.0, R.cbound(1 - 2 * r, 1 - 2 * d))


@pytest.mark.parametrize("name", sorted(JITTED))
def test_values_and_gradients_at_the_edges(name):
    """Every edge of EDGES x KL in {0, 3}, m = 200, by the compiled program of the tests below:
    the value equals the NumPy reference (PAC-Bound 2's 2-D search to 1e-6; it refuses the two
    edges whose statistics are out of their domain, where the library reads the nearest edge),
    lies in [empirical, 1], and its derivatives in the statistics, KL and m are finite."""
    reference = (GIBBS | MOMENTS)[name][1]
    for (r, d), kl in itertools.product(EDGES, [0.0, 3.0]):
        stats = (r,) if name in GIBBS else (1 - 2 * r, 1 - 2 * d)
        value, grads = VALUE_AND_GRADIENT[name](*stats, kl, 200.0, 0.05)
        case = (r, d, kl, float(value))
        assert _empirical(name, r, d) - 1e-12 <= value <= 1.0, case
        assert all(np.isfinite(g) for g in grads[: len(stats) + 2]), (case, grads)
        consistent = r - d / 2 >= 0 and (1 - 2 * r) ** 2 <= 1 - 2 * d
        if name != "pac_bound_2" or consistent:
            rtol = 1e-6 if name == "pac_bound_2" else 1e-9
            np.testing.assert_allclose(
                value, reference(*stats, kl, 200, 0.05), rtol, 1e-10, True, str(case)
            )


@pytest.mark.parametrize("name", sorted(JITTED))
def test_gradients_match_finite_differences(name):
    """Each derivative in the statistics, KL and delta (m fixed) against a central difference
    (step 1e-6) of the same compiled program, to jax.test_util.check_grads's float64
    tolerance (1e-5 absolute and relative; check_grads projects on one random direction)."""
    stats = (0.3,) if name in GIBBS else (0.35, 0.5)
    args = [*stats, 1.0, 500.0, 0.05]
    value, grads = VALUE_AND_GRADIENT[name](*args)
    np.testing.assert_allclose(value, JITTED[name](*stats, 1.0, 500, 0.05), rtol=1e-5, atol=1e-5)
    eps = 1e-6
    for i in [*range(len(stats) + 1), len(args) - 1]:  # not m
        up, down = (VALUE_AND_GRADIENT[name](*args[:i], args[i] + h, *args[i + 1 :])[0]
                    for h in (eps, -eps))  # fmt: skip
        np.testing.assert_allclose(grads[i], (up - down) / (2 * eps), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name",
    [
        # PAC-Bound 2 (three ~15 s compilations) by default in tests/test_certified_numerics.py:
        # jit == eager == vmap over an array m, eager float32 in test_pac_bound_2_float32_margin
        pytest.param(name, marks=[pytest.mark.thorough] if name == "pac_bound_2" else [])
        for name in sorted(JITTED)
    ],
)
def test_jit_equals_eager_equals_vmap_and_float32_follows(name):
    f = (GIBBS | MOMENTS)[name][0]
    stats = (0.3,) if name in GIBBS else (0.35, 0.5)
    deltas = jnp.array([0.01, 0.05, 0.5])
    eager = jnp.stack([f(*stats, 2.0, 300, d) for d in deltas])
    # Python scalars: the signature the property tests above compiled JITTED[name] for
    np.testing.assert_allclose(JITTED[name](*stats, 2.0, 300, 0.05), eager[1], rtol=1e-12)
    batched = jax.vmap(f, in_axes=(None,) * len(stats) + (None, None, 0))(*stats, 2.0, 300, deltas)
    np.testing.assert_allclose(batched, eager, rtol=1e-12)
    f32 = [jnp.float32(s) for s in (*stats, 2.0)]
    value32 = f(*f32, 300, jnp.float32(0.05))  # an int m keeps float32
    assert value32.dtype == jnp.float32
    np.testing.assert_allclose(value32, eager[1], rtol=1e-4)


def test_changing_delta_or_kl_does_not_recompile():
    f = JITTED["pac_bound_2"]  # jit caches are shared per function: count new entries
    f(0.4, 0.3, 1.0, 1000, 0.05)  # (Gibbs risk 0.3, disagreement 0.35)
    compiled = f._cache_size()
    for delta, kl in [(0.01, 2.0), (0.2, 0.0)]:
        f(0.4, 0.3, kl, 1000, delta)
    assert f._cache_size() == compiled


def test_xi_known_values_and_traced_m():
    np.testing.assert_allclose(B.xi(1000), 40.30321292, rtol=1e-9)
    np.testing.assert_allclose(B.xi(100), 13.20996063, rtol=1e-9)
    ms = np.array([1, 2, 7, 14, 15, 16, 1023, 1024, 1025, 3000])
    np.testing.assert_allclose(jax.vmap(B.xi)(ms), [R.xi(m) for m in ms], rtol=1e-12)
    for m in (1, 2, 5, 9):
        assert float(B.xi(m)) == pytest.approx(float(R.xi_exact(m)), rel=1e-14)
    np.testing.assert_allclose(B.xi(np.float32(100_000)), R.xi(100_000), rtol=1e-6)


@settings(max_examples=200)
@given(gamma=st.floats(0.05, 5.0))
def test_loss_constants_equal_their_taylor_series(gamma):
    np.testing.assert_allclose(
        B.quadratic_loss_constants(gamma), R.quadratic_loss_constants_series(gamma), rtol=1e-12
    )
    if gamma > 0.1:  # the series reference needs 1/gamma well below its 200 terms
        np.testing.assert_allclose(
            B.exponential_loss_constants(gamma),
            R.exponential_loss_constants_series(gamma),
            rtol=1e-10,
        )


@settings(max_examples=300)
@given(
    loss=st.floats(0.0, 3.0),
    kl=kl_value,
    m=size,
    delta=confidence,
    c=st.floats(0.01, 10.0),
    gamma=st.floats(0.1, 3.0),
    exponential=st.booleans(),
)
def test_general_loss_equals_reference(loss, kl, m, delta, c, gamma, exponential):
    constants = (B.exponential_loss_constants if exponential else B.quadratic_loss_constants)(gamma)
    c_a, k_bar = (float(x) for x in constants)
    np.testing.assert_allclose(
        B.general_loss(loss, kl, m, delta, c, c_a, k_bar),
        R.general_loss(loss, kl, m, delta, c, c_a, k_bar),
        rtol=1e-10,
    )


def test_general_loss_with_unit_constants_is_twice_catoni():
    # c_a = k_bar = 1 is the linear loss zeta = 2 W_Q: Theorem 3.2 reduces to 2 x Theorem 3.1.
    np.testing.assert_allclose(
        B.general_loss(0.4, 3.0, 500, 0.05, 2.0, 1.0, 1.0), 2 * B.catoni(0.2, 3.0, 500, 0.05, 2.0)
    )


def test_general_loss_overflow_is_inf_not_nan():
    # KL-EL's constants at gamma = 0.02 (c_a ~ 5e21, C' ~ 3e26) overflow float32: the bound
    # is +inf (still a bound), never NaN (the outward rounding once computed inf * 0).
    c_a, k_bar = B.exponential_loss_constants(0.02)
    f = jnp.float32
    value = B.general_loss(f(0.1), f(0.5), 284, f(0.05), f(2 * c_a * k_bar * 500), f(c_a), f(k_bar))
    assert value == jnp.inf


@settings(max_examples=300)
@given(mean=risk, variance=st.floats(0.0, 0.25), m=st.integers(2, 10_000), delta=confidence)
def test_empirical_bernstein_equals_reference(mean, variance, m, delta):
    np.testing.assert_allclose(
        B.empirical_bernstein(mean, variance, m, delta),
        R.empirical_bernstein(mean, variance, m, delta),
        rtol=1e-12,
    )
