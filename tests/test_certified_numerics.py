"""Certificates never undershoot (issue #20): every bound and kl-inverse, in float32 and float64,
against the extended-precision and mpmath references of tests/reference/mpmath_bounds.py."""

import functools

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacbound import bounds as B
from pacbound import cbound as C
from pacbound import kl as K
from pacbound._src.kl import binary_kl_interval, kl_inv_upper_interval
from tests.reference import mpmath_bounds as M
from tests.reference.strategies import Draws, seeds

LD = np.longdouble
N = 250  # inputs per hypothesis example (one jitted call per bound)
EXAMPLES = 6  # per dtype: 6 x 250 = 1 500 draws of every bound (as many again: thorough)
TOLERANCE = {np.float32: 1e-6, np.float64: 1e-12}
PB2_FLOAT32_TOLERANCE = 1e-5  # see test_pac_bound_2_float32_margin
# general_loss's terms have both signs: its rounding bound, ~18 u of their summed magnitudes
GENERAL_LOSS_FLOAT32_TOLERANCE = 1.5e-6
REF_SLACK = 64 * np.finfo(LD).eps  # the long-double references' own rounding, relative


@st.composite
def statistics(draw):
    """N draws: Gibbs risk in [0, 1/2], a disagreement a vote can have with it, KL up to 50,
    m log-uniform from 1 to 1e9 (2 for empirical_bernstein, 9 for cbound_quasi_uniform: their
    docstrings' least m), delta from 1e-9 to 1/2, Catoni's c, a general loss and its gamma."""
    d = Draws(draw(seeds()), N)
    risk = d.floats(0.0, 0.5)
    share = d.floats(0.0, 1.0)
    mu1 = 1.0 - 2.0 * risk
    mu2 = mu1**2 + share * (1.0 - mu1**2)
    kl = d.floats(0.0, 50.0) * d.floats(0.0, 1.0) ** 2  # many small KLs too
    return {
        "risk": risk,
        "dis": (1.0 - mu2) / 2.0,
        "mu1": mu1,
        "mu2": mu2,
        "kl": kl,
        "m": d.sizes(1, 10**9),  # every order of magnitude
        "delta": d.floats(1e-9, 0.5, log=True),
        "c": d.floats(0.01, 10.0, log=True),
        "loss": d.floats(0.0, 3.0),
        "gamma": d.floats(0.1, 3.0),
        "variance": d.floats(0.0, 0.25),
    }


@functools.cache
def _jitted(name, dtype):
    """The bound ``name`` over a batch, one compilation per dtype."""
    fns = {
        "mcallester": lambda s: B.mcallester(s["risk"], s["kl"], s["m"], s["delta"]),
        "seeger": lambda s: B.seeger(s["risk"], s["kl"], s["m"], s["delta"]),
        "catoni": lambda s: B.catoni(s["risk"], s["kl"], s["m"], s["delta"], s["c"]),
        "general_loss": lambda s: B.general_loss(
            s["loss"],
            s["kl"],
            s["m"],
            s["delta"],
            s["c"],
            *B.exponential_loss_constants(s["gamma"]),
        ),
        "cbound_roy2016": lambda s: B.cbound_roy2016(
            s["mu1"], s["mu2"], s["kl"], s["m"], s["delta"]
        ),
        "cbound_quasi_uniform": lambda s: B.cbound_quasi_uniform(
            s["mu1"], s["mu2"], jnp.maximum(s["m"], 9), s["delta"]
        ),
        "empirical_bernstein": lambda s: B.empirical_bernstein(
            s["risk"], s["variance"], jnp.maximum(s["m"], 2), s["delta"]
        ),
        "pac_bound_0": lambda s: B.pac_bound_0(s["risk"], s["kl"], s["m"], s["delta"]),
        "pac_bound_1": lambda s: B.pac_bound_1(s["risk"], s["dis"], s["kl"], s["m"], s["delta"]),
        "pac_bound_2": lambda s: B.pac_bound_2(s["risk"], s["dis"], s["kl"], s["m"], s["delta"]),
        "exponential_loss_constants": lambda s: B.exponential_loss_constants(s["gamma"]),
    }
    return jax.jit(fns[name])


def _reference(name, s, constants):
    """(lo, hi): the exact value of the formula for the given floats lies in [lo, hi] (long
    double; a single value for closed forms)."""
    r, kl, m, delta = s["risk"], s["kl"], s["m"], s["delta"]
    closed = {
        "mcallester": lambda: M.ld_mcallester(r, kl, m, delta),
        "catoni": lambda: M.ld_catoni(r, kl, m, delta, s["c"]),
        "general_loss": lambda: M.ld_general_loss(s["loss"], kl, m, delta, s["c"], *constants),
        "cbound_roy2016": lambda: M.ld_cbound_roy2016(s["mu1"], s["mu2"], kl, m, delta),
        "cbound_quasi_uniform": lambda: M.ld_cbound_quasi_uniform(
            s["mu1"], s["mu2"], np.maximum(s["m"], 9), delta
        ),
        "empirical_bernstein": lambda: M.ld_empirical_bernstein(
            r, s["variance"], np.maximum(s["m"], 2), delta
        ),
        "pac_bound_1": lambda: M.ld_pac_bound_1(r, s["dis"], kl, m, delta),
        "pac_bound_2": lambda: M.ld_pac_bound_2(r, s["dis"], kl, m, delta),
    }
    if name in closed:
        value = closed[name]()
        return value, value
    if name == "seeger":
        return M.ld_seeger(r, kl, m, delta)
    return M.ld_pac_bound_0(r, kl, m, delta)


def _cbound_condition(s):
    """How much 1 - mu1^2 / mu2 amplifies absolute errors in its moments, relative to a
    well-conditioned bound: ``(2 mu1 / mu2 + mu1^2 / mu2^2) / 3``, at least 1 (an error of a
    few ulps in the pessimistic Gibbs risk or disagreement is ``2 mu1 / mu2`` or
    ``mu1^2 / mu2^2`` times larger in the bound)."""
    ratio = np.abs(s["mu1"].astype(float)) / np.maximum(s["mu2"].astype(float), 1e-3)
    return np.maximum(1.0, (2.0 * ratio + ratio**2) / 3.0)


def _general_loss_magnitude(s, constants):
    """1 + c_a + scale (|c_a - 1| + loss + complexity): the size of general_loss's terms."""
    c, c_a, k_bar = (np.asarray(x, float) for x in (s["c"], *constants))
    scale = c / -np.expm1(-c)
    complexity = 2 * c_a / (s["m"] * c) * (k_bar * s["kl"] - np.log(s["delta"].astype(float)))
    return 1 + c_a + scale * (np.abs(c_a - 1) + s["loss"] + complexity)


CBOUND_FORMS = ("cbound_roy2016", "cbound_quasi_uniform", "pac_bound_1", "pac_bound_2")
BOUNDS = [
    "mcallester",
    "seeger",
    "catoni",
    "general_loss",
    "cbound_roy2016",
    "cbound_quasi_uniform",
    "empirical_bernstein",
    "pac_bound_0",
    "pac_bound_1",
    "pac_bound_2",
]


def _cast(s, dtype):
    return {k: (v if k == "m" else np.asarray(v, dtype)) for k, v in s.items()}


def _check_batch(s, dtype):
    """Every bound >= its exact value, and within the dtype's tolerance of it."""
    s = _cast(s, dtype)
    s["variance"] = np.minimum(s["variance"], np.asarray(0.25, dtype))
    constants = [np.asarray(c) for c in _jitted("exponential_loss_constants", dtype)(s)]
    gaps = {}
    for name in BOUNDS:
        ours = np.asarray(_jitted(name, dtype)(s))
        assert ours.dtype == dtype, name
        lo, hi = _reference(name, s, constants)
        magnitude = np.maximum(np.abs(hi), 1)
        if name == "general_loss":  # terms of both signs: tolerances relative to their sizes
            magnitude = np.maximum(magnitude, _general_loss_magnitude(s, constants))
        below = lo - ours.astype(LD) - REF_SLACK * magnitude
        assert np.all(below <= 0), (name, dtype, float(below.max()), np.argmax(below))
        tol = TOLERANCE[dtype]
        if name == "pac_bound_2" and dtype == np.float32:
            tol = PB2_FLOAT32_TOLERANCE
        if name == "general_loss" and dtype == np.float32:
            tol = GENERAL_LOSS_FLOAT32_TOLERANCE
        if name in CBOUND_FORMS:
            tol = tol * _cbound_condition(s)
        above = (ours.astype(LD) - hi) / magnitude
        worst = int(np.argmax(above / tol))
        assert np.all(above <= tol), (name, dtype, float(above[worst]), worst)
        gaps[name] = float(above.max())
    return gaps


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
@given(s=statistics())
def test_every_bound_is_certified_in_float32(s):
    _check_batch(s, np.float32)


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
@given(s=statistics())
def test_every_bound_is_certified_in_float64(s):
    _check_batch(s, np.float64)


@pytest.mark.thorough
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
@given(s=statistics())
def test_every_bound_is_certified_on_other_draws(dtype, s):
    """The same property on other draws (another test, another derandomized sequence)."""
    _check_batch(s, dtype)


# ---------------------------------------------------------------------- kl-inverses


def _ulp_errors(ours, exact_lo, exact_hi, dtype, upper):
    """Distance past the exact root (>= 0 when certified), in ulps of the root."""
    spacing = np.spacing(np.asarray(exact_hi, dtype=LD).astype(dtype)).astype(LD)
    spacing = np.maximum(spacing, np.finfo(dtype).smallest_normal)  # absolute below normals
    ours = np.asarray(ours).astype(LD)
    return (ours - exact_hi) / spacing if upper else (exact_lo - ours) / spacing


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kl_inverses_are_certified_to_a_few_ulps(dtype, record_property):
    """20 000 (q, eps), q in [0, 1/2], eps from 1e-14 to 8: never on the wrong side of the
    exact root; the distance in ulps printed (pytest -s) and recorded: at most 8 for the upper
    root and for the lower root above q/2; below q/2 the lower root is conditioned like
    ``eps / q`` (it is ``~ q e^(-eps/q)``), and the ulps divided by that stay under 32."""
    rng = np.random.default_rng(7)
    q = rng.uniform(0, 0.5, 20_000)
    q[:200] = 0.0
    eps = np.exp(rng.uniform(np.log(1e-14), np.log(8.0), q.size))
    q, eps = q.astype(dtype), eps.astype(dtype)
    report = {}
    for name, upper in (("kl_inv_upper", True), ("kl_inv_lower", False)):
        ours = jax.jit(K.kl_inv_upper if upper else K.kl_inv_lower)(q, eps)
        lo, hi = M.ld_kl_inv(q, eps, upper)
        err = _ulp_errors(ours, lo, hi, dtype, upper)
        assert np.all(err >= -1e-3), (name, float(err.min()))  # the reference's own width
        root = hi.astype(float)
        near = root >= q / 2 if not upper else np.ones(q.size, bool)
        # |d ln p / d ln kl| = kl (1 - p) / |p - q|, the conditioning of the root in kl
        condition = np.maximum(1.0, eps * (1 - root) / np.maximum(np.abs(root - q), 1e-300))
        report[name] = {"max": float(err[near].max()), "median": float(np.median(err))}
        assert report[name]["max"] <= 8.0, (name, report[name])
        if not upper:
            report[name]["far, per condition"] = float((err / condition)[~near].max())
            assert report[name]["far, per condition"] <= 32.0, (name, report[name])
    print(f"\n{dtype.__name__} kl-inverses, ulps past the exact root:", report)
    record_property(f"ulps_{dtype.__name__}", report)


def test_kl_inverse_float32_ulps_against_mpmath(record_property):
    """300 float32 (q, eps) against the 50-digit mpmath root: certified, max ulps printed."""
    rng = np.random.default_rng(11)
    q = rng.uniform(0, 0.5, 300).astype(np.float32)
    eps = np.exp(rng.uniform(np.log(1e-12), np.log(5.0), 300)).astype(np.float32)
    worst = {}
    for name, f, exact in (
        ("kl_inv_upper", K.kl_inv_upper, M.mp_kl_inv_upper),
        ("kl_inv_lower", K.kl_inv_lower, M.mp_kl_inv_lower),
    ):
        ours = np.asarray(jax.jit(f)(q, eps))
        errors = []
        for i in range(q.size):
            root = exact(q[i], eps[i])
            past = (mp.mpf(float(ours[i])) - root) * (1 if name == "kl_inv_upper" else -1)
            assert past >= 0, (name, q[i], eps[i], ours[i], root)
            spacing = float(np.spacing(np.float32(float(root))))
            if q[i] / 2 <= float(root):  # the lower root's far tail is ill-conditioned
                errors.append(float(past) / spacing)
        worst[name] = max(errors)
        assert worst[name] <= 8.0
    print("\nfloat32 kl-inverse vs mpmath: max ulps past the exact root", worst)
    record_property("float32_mpmath_ulps", worst)


def test_issue_examples_regressions():
    """The two float32 examples of issue #20 now land at or above the exact value."""
    value = B.seeger(np.float32(0.30090418), np.float32(0.00388968), 760348, 0.05)
    exact = M.mp_seeger(np.float32(0.30090418), np.float32(0.00388968), 760348, 0.05)
    assert value.dtype == jnp.float32
    assert mp.mpf(float(value)) >= exact and float(value) - float(exact) < 1e-6
    assert abs(float(exact) - 0.303314016) < 1e-9
    root = K.kl_inv_upper(np.float32(0.0912635), np.float32(1.69e-8))
    exact = M.mp_kl_inv_upper(np.float32(0.0912635), np.float32(1.69e-8))
    assert mp.mpf(float(root)) >= exact and float(root) - float(exact) < 1e-7
    assert abs(float(exact) - 0.091316454) < 1e-8  # the issue quotes eps = 1.69e-8 in decimal


@pytest.mark.parametrize(
    "dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.thorough)]
)  # float32, the coarser, by default
@pytest.mark.parametrize("upper", [True, False])
def test_kl_inverse_derivatives_match_mpmath_as_eps_vanishes(dtype, upper):
    """d/dq and d/deps within 1e-3 of the exact implicit derivatives, eps down to 1e-12 (and
    finite below it)."""
    f = K.kl_inv_upper if upper else K.kl_inv_lower
    grad = jax.jit(jax.vmap(jax.grad(f, (0, 1))))
    q = np.array([0.01, 0.1, 0.3, 0.45, 0.2, 0.05], dtype)
    eps = np.array([1e-12, 1e-10, 1e-8, 1e-12, 3e-4, 0.2], dtype)
    g_q, g_eps = (np.asarray(g, float) for g in grad(q, eps))
    for i in range(q.size):
        d_q, d_eps = M.mp_kl_inv_derivatives(q[i], eps[i], upper)
        np.testing.assert_allclose(g_q[i], float(d_q), rtol=1e-3)
        np.testing.assert_allclose(g_eps[i], float(d_eps), rtol=1e-3)
    tiny = np.array([1e-20, 1e-30, 0.0], dtype)
    assert all(np.isfinite(g).all() for g in grad(np.full(3, 0.2, dtype), tiny))


@pytest.mark.parametrize(
    "dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.thorough)]
)  # float32, the coarser, by default
def test_bound_gradients_match_the_exact_derivative_at_large_m(dtype):
    """Seeger's bound and PAC-Bound 0 at m up to 1e9 (eps ~ 1e-8): derivatives in risk, KL
    and delta equal the chain rule through the exact kl-inverse (mpmath), within 1e-3."""
    risk, kl, delta = dtype(0.2), dtype(1.5), dtype(0.05)
    for m in (10**6, 10**9):
        with mp.workdps(M.DPS):
            log_term = mp.log(2 * mp.sqrt(m)) - mp.log(mp.mpf(float(delta)))
            eps = (mp.mpf(float(kl)) + log_term) / m
            d_q, d_eps = M.mp_kl_inv_derivatives(float(risk), eps, True)
        grads = jax.grad(B.seeger, (0, 1, 3))(risk, kl, m, delta)
        expected = (d_q, d_eps / m, -d_eps / (m * mp.mpf(float(delta))))
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(float(g), float(e), rtol=1e-3)
    s = {"risk": risk, "dis": dtype(0.3), "mu1": dtype(0.6), "mu2": dtype(0.5), "kl": kl}
    s.update(m=np.int64(10**9), delta=delta, c=dtype(1.0), loss=dtype(0.5), gamma=dtype(1.0))
    s.update(variance=dtype(0.1))
    stats = ("risk", "dis", "mu1", "mu2", "kl", "delta", "c", "loss", "variance")
    for name in BOUNDS:  # every bound's gradient finite at m = 1e9 (eps ~ 1e-8)
        bound = _jitted(name, dtype)
        g = jax.jit(jax.grad(lambda *a, f=bound: f({**s, **dict(zip(stats, a))}), range(9)))
        assert all(np.isfinite(x) for x in g(*(s[k] for k in stats))), name


ARRAY_M_CASES = {
    "pac_bound_0": (B.pac_bound_0, (0.1, 1.0)),
    "pac_bound_1": (B.pac_bound_1, (0.1, 0.15, 1.0)),
    "pac_bound_2": (B.pac_bound_2, (0.1, 0.15, 1.0)),
    "seeger": (B.seeger, (0.1, 1.0)),
    "mcallester": (B.mcallester, (0.1, 1.0)),
    "cbound_roy2016": (B.cbound_roy2016, (0.6, 0.5, 1.0)),
}
# each compiles three programs: PAC-Bound 1's jit == eager == vmap stays in the default run in
# tests/test_bounds.py, McAllester's m term is Seeger's and PAC-Bound 0's is Seeger's kl-inverse
# with xi(m) (test_array_m_broadcasts_to_a_grid_and_in_xi); PAC-Bound 2's is checked here only
ARRAY_M_THOROUGH = ("pac_bound_0", "pac_bound_1", "mcallester")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.thorough] if name in ARRAY_M_THOROUGH else [])
        for name in ARRAY_M_CASES
    ],
)
def test_array_m_broadcasts_with_and_without_jit_and_vmap(name):
    """Issue #20's reproducer: an array m (with any other argument scalar or array)."""
    ms = jnp.array([100, 1000, 10**9])
    f, stats = ARRAY_M_CASES[name]
    eager = f(*stats, ms, 0.05)
    assert eager.shape == (3,), name
    jitted = jax.jit(f)
    np.testing.assert_array_equal(jitted(*stats, ms, 0.05), eager)
    if name != "pac_bound_2":  # (its compilation is long; vmap checks it below)
        loop = [float(jitted(*stats, m, 0.05)) for m in ms]  # a traced scalar m
        np.testing.assert_array_equal(eager, loop)
    mapped = jax.vmap(f, in_axes=(None,) * len(stats) + (0, None))(*stats, ms, 0.05)
    np.testing.assert_array_equal(mapped, eager)


def test_array_m_broadcasts_to_a_grid_and_in_xi():
    ms = jnp.array([100, 1000, 10**9])
    grid = B.pac_bound_0(jnp.array([[0.1], [0.2]]), 1.0, ms, 0.05)  # broadcasting to (2, 3)
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(B.xi(ms)[:2], [M.ld_xi(100), M.ld_xi(1000)], rtol=4e-15)
    assert jax.jit(B.xi)(ms).shape == (3,)


def test_xi_against_mpmath_quadrature():
    """xi(m) = int_0^inf e^-x (1 + x/m)^m dx: the table below 128 (one ulp), the series above
    (its 9 u error bound, so up to 10 ulps), always rounded up."""
    for m in (1, 2, 10, 127, 128, 129, 1000, 123457, 10**9):
        exact = M.mp_xi(m)
        for dtype in (jnp.float32, jnp.float64):
            value = B.xi(jnp.asarray(m, dtype))
            assert mp.mpf(float(value)) >= exact, (m, dtype)
            spacing = float(np.spacing(np.asarray(float(exact), dtype)))
            assert float(value) - float(exact) <= (1 if m < 128 else 12) * spacing, (m, dtype)


def test_pac_bound_0_and_every_risk_bound_stay_at_most_one():
    """PAC-Bound 0 used to reach 2; the Gibbs bounds exceed 1 for large KL. Clipped values,
    unclipped derivatives."""
    assert float(B.pac_bound_0(0.45, 5.0, 100, 0.05)) == 1.0
    assert float(B.pac_bound_0(0.3, 50.0, 20, 0.05)) == 1.0
    assert float(B.catoni(0.4, 30.0, 50, 0.05, 5.0)) == 1.0
    assert float(B.mcallester(0.4, 40.0, 50, 0.05)) == 1.0
    assert float(B.empirical_bernstein(0.9, 0.2, 10, 0.05)) == 1.0
    assert jax.grad(B.pac_bound_0)(0.45, 5.0, 100, 0.05) > 0  # the descent direction is kept
    assert jax.grad(B.catoni, 1)(0.4, 30.0, 50, 0.05, 5.0) > 0


def test_statistics_rounded_out_of_their_domain_give_finite_values():
    """A disagreement of -1e-17, a risk of 1 + 1e-16, a KL of -1e-18: the bound at the edge."""
    assert np.isfinite(float(C.cbound_trinomial_sup(0.1, -1e-17, 0.02)))
    assert np.isfinite(float(B.pac_bound_1(0.2, -1e-17, 1.0, 500, 0.05)))
    assert float(B.seeger(1.0 + 1e-16, 0.0, 500, 0.05)) == 1.0
    assert np.isfinite(float(B.mcallester(0.2, -1e-18, 500, 0.05)))


@pytest.mark.parametrize(
    "dtype", [jnp.float32, pytest.param(jnp.float64, marks=pytest.mark.thorough)]
)  # float32 by default: the float64 program is as long to compile
def test_pac_bound_2_and_its_gradient_are_finite_at_a_negative_disagreement(dtype):
    """A disagreement of -1e-17 (rounded out of its domain): value and gradient finite."""
    value, grads = jax.jit(jax.value_and_grad(B.pac_bound_2, (0, 1, 2)))(
        jnp.asarray(0.2, dtype), jnp.asarray(-1e-17, dtype), jnp.asarray(1.0, dtype), 500, 0.05
    )
    assert np.isfinite(value) and all(np.isfinite(g) for g in grads)


def test_certified_intervals_enclose_the_exact_values():
    """kl_inv_upper_interval and binary_kl_interval bracket the mpmath values, both dtypes."""
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        q = rng.uniform(0, 0.5, 40).astype(dtype)
        p = rng.uniform(0, 1, 40).astype(dtype)
        eps = np.exp(rng.uniform(np.log(1e-10), np.log(3), 40)).astype(dtype)
        lows, highs = binary_kl_interval(q, p)
        roots_lo, roots_hi = kl_inv_upper_interval(q, eps)
        for i in range(40):
            exact = M.mp_binary_kl(q[i], p[i])
            assert mp.mpf(float(lows[i])) <= exact <= mp.mpf(float(highs[i]))
            root = M.mp_kl_inv_upper(q[i], eps[i])
            assert mp.mpf(float(roots_lo[i])) <= root <= mp.mpf(float(roots_hi[i]))


def test_pac_bound_2_float32_margin():
    """PAC-Bound 2's float32 certificate: the cuts of the golden-section search are bounded by
    concavity from the two-sided slice values, whose float32 width (~30 ulps) the bound pays
    about 2.6 times; the margin stays under PB2_FLOAT32_TOLERANCE (float64: 1e-12)."""
    value = B.pac_bound_2(np.float32(0.1), np.float32(0.15), np.float32(1.0), 100, np.float32(0.05))
    exact = M.ld_pac_bound_2(
        np.float32(0.1), np.float32(0.15), np.float32(1.0), 100, np.float32(0.05)
    )
    assert 0 <= float(value) - float(exact) < PB2_FLOAT32_TOLERANCE
