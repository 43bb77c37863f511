"""Second-order bounds: SciPy references, the theory's inequalities and identities, edges,
gradients, jit / vmap, float32 against float64."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.test_util import check_grads
from scipy.optimize import brentq
from scipy.special import gammaln, lambertw, logsumexp

from pacbound import bounds as B
from pacbound._src import loss_statistics as LS
from pacbound._src.bounds import second_order as S
from tests.reference.strategies import log_uniform_integers

# ------------------------------------------------------------------------------------------
# Independent references (float64, scalar, SciPy root finding), from the papers' formulas
# ------------------------------------------------------------------------------------------


def kl_ref(q, p):
    terms = [a * math.log(a / b) if a > 0 else 0.0 for a, b in ((q, p), (1 - q, 1 - p))]
    return sum(terms)


def kl_up(q, eps):
    if eps <= 0 or q >= 1:
        return q
    f = lambda p: kl_ref(q, p) - eps  # noqa: E731
    return 1.0 if f(1 - 1e-15) <= 0 else brentq(f, q, 1 - 1e-15, xtol=1e-15, rtol=1e-14)


def kl_low(q, eps):
    return 1.0 - kl_up(1.0 - q, eps)


def ref_tnd(t, kl, n2, delta):
    return min(1.0, 4 * kl_up(t, (2 * kl + math.log(2 * math.sqrt(n2) / delta)) / n2))


def ref_cctnd(t, g, kl, n, n2, delta, mu):
    t_up = kl_up(t, (2 * kl + math.log(4 * math.sqrt(n2) / delta)) / n2)
    eps = (kl + math.log(4 * math.sqrt(n) / delta)) / n
    g_b = kl_low(g, eps) if mu >= 0 else kl_up(g, eps)
    return min(1.0, max(0.0, t_up - 2 * mu * g_b + mu**2) / (0.5 - mu) ** 2)


def ref_dis(g, d, kl, n, m, delta):
    up = kl_up(g, (kl + math.log(4 * math.sqrt(n) / delta)) / n)
    low = kl_low(d, (2 * kl + math.log(4 * math.sqrt(m) / delta)) / m)
    return min(1.0, max(0.0, 4 * up - 2 * low))


def ref_split_kl(both, one, neither, kl, n2, delta, mu):
    a, mid = (-mu * (1 - mu), mu**2) if mu >= 0 else (mu**2, -mu * (1 - mu))
    b = (1 - mu) ** 2
    minus = one if mu >= 0 else neither
    eps = (2 * kl + math.log(4 * math.sqrt(n2) / delta)) / n2
    num = mid + (b - mid) * kl_up(both, eps) - (mid - a) * kl_low(minus, eps)
    return min(1.0, max(0.0, num) / (0.5 - mu) ** 2)


def ref_ccpbb(mean, var, kl, n2, delta, mu, c=1.05):
    """[WMLIS21] Thm 13 and 15 with every grid point tried (the union bound pays for all)."""
    d1 = d2 = delta / 2
    K = max(1 - mu, 1 - 2 * mu)
    root = math.sqrt((n2 - 1) / math.log(1 / d1) + 1)
    k_lam = max(1, math.ceil(math.log((root + 1) / 2) / math.log(c)))
    t = (1 / (root + 1)) * c ** np.arange(k_lam)
    comp = K**2 * (2 * kl + math.log(k_lam / d1)) / (2 * (n2 - 1))
    v_up = min(np.min(var / (1 - t) + comp / (t * (1 - t))), K**2 / 4)
    g_min = (1 + lambertw((4 * math.log(1 / d2) / n2 - 1) / math.e).real) / K
    v_min = 2 * K**2 * math.log(1 / d1) / (n2 - 1)
    a = 1 / (1 + K**2 / v_min)
    g_max = -(lambertw(-a * math.exp(-a), -1).real + a) / K
    k_gam = max(1, math.ceil(math.log(g_max / g_min) / math.log(c)))
    g = g_min * c ** np.arange(k_gam)
    phi = np.expm1(g * K) - g * K
    num = mean + phi / (g * K**2) * v_up + (2 * kl + math.log(k_gam / d2)) / (g * n2)
    return min(1.0, max(0.0, np.min(num)) / (0.5 - mu) ** 2)


def xi_ref(m):
    k = np.arange(1, m)
    log_terms = gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1)
    log_terms += k * np.log(k / m) + (m - k) * np.log1p(-k / m)
    return 2.0 + np.exp(logsumexp(log_terms)) if m > 1 else 2.0


def cbound_ref(r, d):
    return 1.0 if 1 - 2 * r <= 0 else 1 - (1 - 2 * r) ** 2 / (1 - 2 * d)


def ref_pac_bound_1_prime(g, d, kl, m, mu_, delta):
    r = min(0.5, kl_up(g, (kl + math.log(2 * xi_ref(m) / delta)) / m))
    dd = max(0.0, kl_low(d, (2 * kl + math.log(2 * xi_ref(mu_) / delta)) / mu_))
    return min(1.0, max(0.0, cbound_ref(r, dd)))


def ref_pac_bound_2_prime_grid(g, d, kl, m, delta, size=400):
    """A lower estimate: the largest C-bound on a 2-D grid of the feasible (e, d)."""
    e_s = g - d / 2
    cap = min(0.5, kl_up(e_s, (2 * kl + math.log(2 * xi_ref(m) / delta)) / m))
    eps = (2 * kl + math.log(2 * (xi_ref(m) + m) / delta)) / m
    e, dd = np.meshgrid(np.linspace(0, cap, size), np.linspace(0, 0.5, size), indexing="ij")
    rest = 1 - e - dd
    with np.errstate(divide="ignore", invalid="ignore"):
        tri = sum(
            np.where(q > 0, q * np.log(q / p), 0.0)
            for q, p in ((e_s, e), (d, dd), (1 - e_s - d, rest))
        )
        c = np.where(1 - 2 * e - dd > 0, 1 - (1 - 2 * e - dd) ** 2 / (1 - 2 * dd), 1.0)
    return float(np.max(np.where((tri <= eps) & (rest > 0), c, -np.inf)))


# ------------------------------------------------------------------------------------------
# Bounds as f(tandem, gibbs, kl, n, n2, delta) on binary-consistent statistics
# ------------------------------------------------------------------------------------------


def ternary(t, g):
    """(both, one, neither) of a vote without mask: one = 2 (G - T), neither = 1 - 2G + T."""
    return t, 2 * (g - t), 1 - 2 * g + t


BOUNDS = {
    "first_order_kl": (
        lambda t, g, kl, n, n2, d: S.first_order_kl(g, kl, n, d),
        lambda t, g, kl, n, n2, d: min(1.0, 2 * kl_up(g, (kl + math.log(2 * n**0.5 / d)) / n)),
    ),
    "tnd_kl": (
        lambda t, g, kl, n, n2, d: S.tnd_kl(t, kl, n2, d),
        lambda t, g, kl, n, n2, d: ref_tnd(t, kl, n2, d),
    ),
    "tnd_lambda_optimal": (
        lambda t, g, kl, n, n2, d: S.tnd_lambda_optimal(t, kl, n2, d),
        None,
    ),
    "dis": (
        lambda t, g, kl, n, n2, d: S.dis(g, 2 * (g - t), kl, n, n2, d),
        lambda t, g, kl, n, n2, d: ref_dis(g, 2 * (g - t), kl, n, n2, d),
    ),
    "cctnd_-0.2": (
        lambda t, g, kl, n, n2, d: S.cctnd(t, g, kl, n, n2, d, -0.2),
        lambda t, g, kl, n, n2, d: ref_cctnd(t, g, kl, n, n2, d, -0.2),
    ),
    "cctnd_0.15": (
        lambda t, g, kl, n, n2, d: S.cctnd(t, g, kl, n, n2, d, 0.15),
        lambda t, g, kl, n, n2, d: ref_cctnd(t, g, kl, n, n2, d, 0.15),
    ),
    "cctnd_optimal": (
        lambda t, g, kl, n, n2, d: S.cctnd_optimal(t, g, kl, n, n2, d),
        None,
    ),
    "split_kl_-0.2": (
        lambda t, g, kl, n, n2, d: S.split_kl_mu_tandem(*ternary(t, g), kl, n2, d, -0.2),
        lambda t, g, kl, n, n2, d: ref_split_kl(*ternary(t, g), kl, n2, d, -0.2),
    ),
    "split_kl_0.2": (
        lambda t, g, kl, n, n2, d: S.split_kl_mu_tandem(*ternary(t, g), kl, n2, d, 0.2),
        lambda t, g, kl, n, n2, d: ref_split_kl(*ternary(t, g), kl, n2, d, 0.2),
    ),
    "ccpbb_0.1": (
        lambda t, g, kl, n, n2, d: S.ccpbb(t - 0.2 * g + 0.01, 0.02, kl, n2, d, 0.1),
        lambda t, g, kl, n, n2, d: ref_ccpbb(t - 0.2 * g + 0.01, 0.02, kl, n2, d, 0.1),
    ),
    "ccpbb_-0.3": (
        lambda t, g, kl, n, n2, d: S.ccpbb(t + 0.6 * g + 0.09, 0.05, kl, n2, d, -0.3),
        lambda t, g, kl, n, n2, d: ref_ccpbb(t + 0.6 * g + 0.09, 0.05, kl, n2, d, -0.3),
    ),
    "pac_bound_1_prime": (
        lambda t, g, kl, n, n2, d: S.pac_bound_1_prime(g, 2 * (g - t), kl, n, n2, d),
        lambda t, g, kl, n, n2, d: ref_pac_bound_1_prime(g, 2 * (g - t), kl, n, n2, d),
    ),
}
JITTED = {name: jax.jit(f) for name, (f, _) in BOUNDS.items()}
# The same function as the entry before it at another mu, baked in as a constant: one program
# of the same structure. Its value against the reference, its plug-in and its edges stay in the
# default run; jit == eager == vmap and the monotonicity draws are rechecked in the thorough tier.
SECOND_MU = {"cctnd_0.15", "split_kl_0.2", "ccpbb_-0.3"}


def _first_mu_by_default(names):
    return [pytest.param(n, marks=pytest.mark.thorough) if n in SECOND_MU else n for n in names]


@st.composite
def vote_statistics(draw):
    """(tandem, gibbs) a vote can have on one sample: G^2 <= T <= G (Jensen:
    E_x[E_rho[1[h errs]]^2] >= G^2)."""
    g = draw(st.floats(0.0, 0.6))
    t = draw(st.floats(g**2, g))
    return t, g


# log-uniform from 2 (CCPBB's least n2) to 1e6 (the SciPy xi reference is O(m); the certified
# draws of test_second_order_certified reach 1e9)
sizes = log_uniform_integers(2, 10**6)
confidence = st.floats(1e-6, 1.0)


# Bounds whose value and gradient test_second_order_crosscheck also compares with its
# independent reference (values, and central differences of the reference): rechecked here in
# the thorough tier only; CCTND at its optimal mu (the envelope theorem's gradient) is checked
# here by default.
CROSSCHECKED = {
    "ccpbb_-0.3", "ccpbb_0.1", "cctnd_-0.2", "cctnd_0.15", "dis", "first_order_kl",
    "pac_bound_1_prime", "split_kl_-0.2", "split_kl_0.2", "tnd_kl", "tnd_lambda_optimal",
}  # fmt: skip


def _unless_crosschecked(names):
    return [pytest.param(n, marks=pytest.mark.thorough) if n in CROSSCHECKED else n for n in names]


@pytest.mark.parametrize(
    "name", _unless_crosschecked(sorted(n for n, (_, ref) in BOUNDS.items() if ref is not None))
)
@settings(max_examples=25)
@given(stats=vote_statistics(), kl=st.floats(0.0, 20.0), n=sizes, n2=sizes, delta=confidence)
def test_bounds_equal_the_scipy_reference(name, stats, kl, n, n2, delta):
    got = float(JITTED[name](*stats, kl, n, n2, delta))
    np.testing.assert_allclose(got, BOUNDS[name][1](*stats, kl, n, n2, delta), atol=2e-9)


@pytest.mark.parametrize("name", _first_mu_by_default(sorted(BOUNDS)))
@settings(max_examples=25)
@given(
    stats=vote_statistics(),
    kl=st.floats(0.0, 20.0),
    extra=st.floats(1e-3, 5.0),
    n=sizes,
    delta=st.floats(1e-4, 1.0),
    shrink=st.floats(0.01, 0.9),
)
def test_bounds_are_monotone_in_delta_and_kl(name, stats, kl, extra, n, delta, shrink):
    f = JITTED[name]
    value = float(f(*stats, kl, n, n, delta))
    assert 0.0 <= value <= 1.0
    assert float(f(*stats, kl, n, n, delta * shrink)) >= value - 1e-12
    assert float(f(*stats, kl + extra, n, n, delta)) >= value - 1e-12


PLUG_IN = {
    "first_order_kl": lambda t, g: 2 * g,
    "tnd_kl": lambda t, g: 4 * t,
    "tnd_lambda_optimal": lambda t, g: 4 * t,
    "dis": lambda t, g: 4 * g - 4 * (g - t),
    "cctnd_-0.2": lambda t, g: (t + 0.4 * g + 0.04) / 0.49,
    "cctnd_0.15": lambda t, g: (t - 0.3 * g + 0.0225) / 0.35**2,
    "split_kl_-0.2": lambda t, g: (t + 0.4 * g + 0.04) / 0.49,
    "split_kl_0.2": lambda t, g: (t - 0.4 * g + 0.04) / 0.09,
    "ccpbb_0.1": lambda t, g: (t - 0.2 * g + 0.01) / 0.16,
    "ccpbb_-0.3": lambda t, g: (t + 0.6 * g + 0.09) / 0.64,
}


@pytest.mark.parametrize("name", sorted(PLUG_IN))
@settings(max_examples=25)
@given(stats=vote_statistics(), kl=st.floats(0.0, 20.0), n=sizes, delta=confidence)
def test_bounds_are_at_least_the_empirical_plug_in(name, stats, kl, n, delta):
    plug_in = min(1.0, max(0.0, PLUG_IN[name](*stats)))
    assert float(JITTED[name](*stats, kl, n, n, delta)) >= plug_in - 1e-12


@settings(max_examples=60)
@given(stats=vote_statistics(), kl=st.floats(0.0, 20.0), n=sizes, n2=sizes, delta=confidence)
def test_tnd_identities(stats, kl, n, n2, delta):
    """[WMLIS21]: CCTND at mu = 0 is TND at delta / 2; split-kl at mu = 0 too ([WS22]); the
    lambda form never beats the kl form, and the closed-form lambda beats a grid of lambdas."""
    t, g = stats
    tnd_half = float(S.tnd_kl(t, kl, n2, delta / 2))
    assert float(S.cctnd(t, g, kl, n, n2, delta, 0.0)) == pytest.approx(tnd_half, abs=1e-13)
    split = float(S.split_kl_mu_tandem(*ternary(t, g), kl, n2, delta, 0.0))
    assert split == pytest.approx(tnd_half, abs=1e-13)
    best_lambda = float(S.tnd_lambda_optimal(t, kl, n2, delta))
    assert best_lambda >= float(S.tnd_kl(t, kl, n2, delta)) - 1e-12
    grid = S.tnd_lambda(t, kl, n2, delta, jnp.linspace(0.01, 1.99, 199))
    assert best_lambda <= float(jnp.min(grid)) + 1e-12


@settings(max_examples=25)
@given(stats=vote_statistics(), kl=st.floats(0.0, 10.0), n=sizes, n2=sizes, delta=confidence)
def test_cctnd_optimal_mu_beats_a_grid(stats, kl, n, n2, delta):
    best = float(S.cctnd_optimal(*stats, kl, n, n2, delta))
    grid = S.cctnd(*stats, kl, n, n2, delta, jnp.linspace(-3.0, 0.499, 400))
    assert best <= float(jnp.min(grid)) + 1e-12


def test_ccpbb_over_mu_is_the_grid_minimum_with_a_union_bound():
    rng = np.random.default_rng(0)
    errors = (rng.random((200, 6)) < 0.3).astype(float)
    stats = LS.loss_statistics(jnp.asarray(errors))
    rho = jnp.full(6, 1 / 6)
    mus = jnp.linspace(-0.45, 0.4, 9)
    means = jax.vmap(lambda mu: LS.mu_tandem_risk(stats, rho, mu))(mus)
    variances = jax.vmap(lambda mu: LS.mu_tandem_variance(stats, rho, mu))(mus)
    best = S.ccpbb_over_mu(mus, means, variances, 0.3, 200, 0.05)
    each = [S.ccpbb(a, v, 0.3, 200, 0.05, mu, n_mu=9) for a, v, mu in zip(means, variances, mus)]
    assert float(best) == pytest.approx(min(map(float, each)), abs=1e-14)
    fixed_mu = [S.ccpbb(a, v, 0.3, 200, 0.05, mu) for a, v, mu in zip(means, variances, mus)]
    assert float(best) >= min(map(float, fixed_mu))


@settings(max_examples=15)
@given(
    g=st.floats(0.05, 0.45),
    ratio=st.floats(0.0, 1.0),
    kl=st.floats(0.0, 3.0),
    m=st.sampled_from([50, 300, 2000]),
    delta=st.floats(1e-3, 0.5),
)
def test_pac_bound_2_prime_is_the_supremum_of_the_2d_grid(g, ratio, kl, m, delta):
    d = ratio * 2 * g * (1 - g)  # a disagreement a vote of Gibbs risk g can have
    got = float(S.pac_bound_2_prime(g, d, kl, m, delta))
    grid = ref_pac_bound_2_prime_grid(g, d, kl, m, delta)
    assert got >= min(1.0, grid) - 1e-9
    assert got <= max(grid, 0.0) + 5e-3


def test_pac_bound_1_prime_with_m_unlabeled_equal_to_m_is_pac_bound_1():
    for g, d, kl, m in [(0.2, 0.25, 1.0, 1000), (0.1, 0.05, 0.0, 50), (0.3, 0.4, 4.0, 10**5)]:
        np.testing.assert_allclose(
            S.pac_bound_1_prime(g, d, kl, m, m, 0.05),
            min(1.0, float(B.pac_bound_1(g, d, kl, m, 0.05))),
            rtol=1e-12,
        )


def test_bounds_on_a_multiclass_oob_problem():
    """Multiclass votes with out-of-bag masks: every bound that applies runs and is ordered as
    the theory says (CCTND at its best mu <= CCTND at mu = 0 = TND at delta / 2)."""
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 300)
    predictions = np.where(rng.random((300, 8)) < 0.6, y[:, None], rng.integers(0, 4, (300, 8)))
    mask = (rng.random((300, 8)) < 0.63).astype(float)
    stats = LS.loss_statistics(LS.error_matrix(predictions, y, jnp.float64), mask=mask)
    n, n2 = LS.sample_sizes(mask)
    rho = jnp.asarray(rng.dirichlet(np.ones(8) * 3))
    kl = float(jnp.sum(rho * jnp.log(rho * 8)))
    t, g = LS.tandem_risk(stats, rho), LS.gibbs_risk(stats, rho)
    values = {
        "tnd": S.tnd_kl(t, kl, n2, 0.05),
        "cctnd0": S.cctnd(t, g, kl, n, n2, 0.05, 0.0),
        "cctnd*": S.cctnd_optimal(t, g, kl, n, n2, 0.05),
        "split": S.split_kl_mu_tandem(*LS.ternary_rates(stats, rho), kl, n2, 0.05, 0.1),
        "ccpbb": S.ccpbb(
            LS.mu_tandem_risk(stats, rho, 0.1),
            LS.mu_tandem_variance(stats, rho, 0.1),
            kl,
            n2,
            0.05,
            0.1,
        ),
        "first": S.first_order_kl(g, kl, n, 0.05),
    }
    assert all(0 <= float(v) <= 1 for v in values.values()), values
    assert float(values["cctnd*"]) <= float(values["cctnd0"]) + 1e-12
    np.testing.assert_allclose(values["cctnd0"], S.tnd_kl(t, kl, n2, 0.025), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Edges, gradients, jit / vmap, dtypes
# ------------------------------------------------------------------------------------------

EDGES = [(0.0, 0.0), (0.0, 0.1), (0.05, 0.1), (0.2, 0.45), (0.5, 0.5)]


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_values_and_gradients_are_finite_at_the_edges(name):
    """Every edge of EDGES x n in {10, 1e6} x KL in {0, 1e-12, 2}, in one vmapped call: in
    [0, 1], equal to the SciPy reference and at least the plug-in where there is one, finite
    derivatives in the statistics and KL."""
    cases = list(itertools.product(EDGES, [10, 10**6], [0.0, 1e-12, 2.0]))
    tandem, gibbs = np.array([stats for stats, _, _ in cases]).T
    sizes = np.array([size for _, size, _ in cases])
    kls = np.array([kl for _, _, kl in cases])
    value_and_grad = jax.vmap(jax.value_and_grad(BOUNDS[name][0], argnums=(0, 1, 2)))
    deltas = np.full(len(cases), 0.05)
    values, grads = jax.jit(value_and_grad)(tandem, gibbs, kls, sizes, sizes, deltas)
    assert np.all((0.0 <= values) & (values <= 1.0)), values
    for grad in grads:
        assert np.all(np.isfinite(grad)), [cases[i] for i in np.flatnonzero(~np.isfinite(grad))]
    reference = BOUNDS[name][1]
    for value, ((t, g), n, kl) in zip(values, cases):
        case = (t, g, n, kl, float(value))
        if reference is not None:  # the SciPy reference, as test_bounds_equal_the_scipy_reference
            np.testing.assert_allclose(value, reference(t, g, kl, n, n, 0.05), atol=2e-9,
                                       err_msg=str(case))  # fmt: skip
        if name in PLUG_IN:  # never below the empirical plug-in
            assert value >= min(1.0, max(0.0, PLUG_IN[name](t, g))) - 1e-12, case


GRADIENT_POINTS = [(0.05, 0.2, 0.7, 300, 200, 0.05), (0.12, 0.3, 2.0, 5000, 4000, 0.01)]


@pytest.mark.parametrize("name", _unless_crosschecked(sorted(BOUNDS)))
@pytest.mark.parametrize("point", GRADIENT_POINTS)
def test_gradients_match_finite_differences(name, point):
    t, g, kl, n, n2, delta = point
    f = lambda t, g, kl: BOUNDS[name][0](t, g, kl, n, n2, delta)  # noqa: E731
    if float(f(t, g, kl)) >= 1.0:
        pytest.skip("clipped at 1")
    check_grads(f, (t, g, kl), order=1, modes=["rev"], eps=1e-6, atol=1e-5, rtol=1e-4)


def test_pac_bound_2_prime_gradient_matches_finite_differences():
    f = lambda g, d, kl: S.pac_bound_2_prime(g, d, kl, 500, 0.05)  # noqa: E731
    check_grads(f, (0.15, 0.2, 0.5), order=1, modes=["rev"], eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", _first_mu_by_default(sorted(BOUNDS)))
def test_jit_equals_eager_equals_vmap(name):
    f = BOUNDS[name][0]
    ts = jnp.array([0.0, 0.05, 0.1, 0.2])
    gs = jnp.array([0.1, 0.15, 0.3, 0.35])
    kls = jnp.array([0.0, 0.5, 1.0, 3.0])
    vmapped = jax.vmap(lambda t, g, kl: f(t, g, kl, 400, 300, 0.05))(ts, gs, kls)
    eager = jnp.stack([f(t, g, kl, 400, 300, 0.05) for t, g, kl in zip(ts, gs, kls)])
    np.testing.assert_allclose(vmapped, eager, atol=1e-13)
    np.testing.assert_allclose(
        JITTED[name](ts[2], gs[2], kls[2], 400, 300, 0.05), eager[2], atol=1e-13
    )


# Thorough tier: by default float32 is compared with the float64 reference itself
# (test_second_order_crosscheck) and certified on random draws (test_second_order_certified)
@pytest.mark.thorough
@pytest.mark.parametrize("name", [*sorted(BOUNDS), "pac_bound_2_prime"])
@pytest.mark.parametrize("n", [10, 1000, 10**6])
def test_float32_is_within_1e_5_of_float64(name, n):
    f = (
        (lambda t, g, kl, n, n2, d: S.pac_bound_2_prime(g, 2 * (g - t), kl, n, d))
        if (name == "pac_bound_2_prime")
        else BOUNDS[name][0]
    )
    for t, g, kl in [(0.02, 0.1, 0.3), (0.1, 0.25, 2.0), (0.0, 0.0, 0.0)]:
        f32 = f(*(np.float32(x) for x in (t, g, kl)), n, n, np.float32(0.05))
        f64 = f(t, g, kl, n, n, 0.05)
        assert f32.dtype == jnp.float32
        np.testing.assert_allclose(f32, f64, atol=1e-5)
