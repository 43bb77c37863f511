"""Dirichlet stochastic majority votes: KL, exact and Monte Carlo risks, bounds, gradients,
transformations and boundary checks."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import betaln, digamma, expit, gammaln

from pacbound._src import dirichlet as D
from tests.reference import bounds_numpy as R

M, N = 40, 9  # one problem size, and few programs: each compiles once (seconds each)
DELTA = 0.05


def _both_bounds(errors, alpha, prior, delta, sample_weight=None):
    args = (errors, alpha, prior, delta, sample_weight)
    return D.seeger_bound(*args), D.mcallester_bound(*args)


exact_risks = jax.jit(D.exact_risks)
both_bounds = jax.jit(_both_bounds)
bound_gradient = jax.jit(jax.grad(lambda *args: D.seeger_bound(*args).bound, argnums=1))
monte_carlo = jax.jit(jax.value_and_grad(D.monte_carlo_risk, argnums=2), static_argnums=3)
DRAWS = 4000


def _problem(seed: int, wrong: float = 0.35) -> tuple[np.ndarray, np.ndarray]:
    """A random (M, N) 0/1 error matrix with one row all right and one all wrong, and alpha."""
    rng = np.random.default_rng(seed)
    errors = (rng.uniform(size=(M, N)) < wrong).astype(float)
    errors[0], errors[1] = 0.0, 1.0
    return errors, rng.uniform(0.2, 4.0, N)


def reference_kl(alpha, beta):
    """KL(Dir(alpha) || Dir(beta)) from its definition as E_alpha[ln p_alpha - ln p_beta]."""
    alpha, beta = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(beta, float))
    log_norm = lambda c: np.sum(gammaln(c)) - gammaln(np.sum(c))  # noqa: E731
    mean_log = digamma(alpha) - digamma(alpha.sum())  # E[ln theta_j] under Dir(alpha)
    return log_norm(beta) - log_norm(alpha) + np.sum((alpha - beta) * mean_log)


def test_dirichlet_kl_matches_its_definition():
    rng = np.random.default_rng(0)
    for scale in (1.0, 30.0, 1e3):
        alpha, beta = rng.uniform(0.1, 3.0, (2, N)) * scale
        np.testing.assert_allclose(D.dirichlet_kl(alpha, beta), reference_kl(alpha, beta), 1e-11)
    alpha = rng.uniform(0.1, 3.0, N)
    np.testing.assert_allclose(D.dirichlet_kl(alpha, 2.0), reference_kl(alpha, np.full(N, 2.0)))
    np.testing.assert_allclose(D.dirichlet_kl(alpha, alpha), 0.0, atol=1e-13)


@settings(max_examples=50)
@given(st.lists(st.floats(0.01, 100.0), min_size=N, max_size=N), st.floats(0.01, 100.0))
def test_dirichlet_kl_is_non_negative(alpha, prior):
    assert float(D.dirichlet_kl(np.array(alpha), prior)) >= -1e-10


def _beta_survival(errors, alpha):
    """P(W >= 1/2) per example with W ~ Beta(wrong, right), the point masses at the ends."""
    wrong, right = errors @ alpha, (1 - errors) @ alpha
    inner = (wrong > 0) & (right > 0)
    sf = stats.beta.sf(0.5, np.where(inner, wrong, 1.0), np.where(inner, right, 1.0))
    return np.where(inner, sf, (wrong > 0).astype(float))


def test_exact_risks_are_the_beta_survival_function():
    # W = weight of the wrong voters ~ Beta(wrong, right): the risk is P(W >= 1/2).
    errors, alpha = _problem(1)
    ours = exact_risks(errors, alpha)
    np.testing.assert_allclose(ours, _beta_survival(errors, alpha), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(ours[:2], [0.0, 1.0])  # no voter wrong / all wrong


def test_exact_risks_match_numpy_dirichlet_sampling():
    errors, alpha = _problem(2)
    draws = 40_000
    theta = np.random.default_rng(3).dirichlet(alpha, draws)
    sampled = np.mean(theta @ errors.T >= 0.5, axis=0)
    ours = np.asarray(exact_risks(errors, alpha))
    standard_error = np.sqrt(np.maximum(ours * (1 - ours), 1e-12) / draws)
    assert np.all(np.abs(sampled - ours) <= 5 * standard_error + 1e-12)


def _central_differences(fn, alpha, step=1e-6, coordinates=None):
    eye = np.eye(len(alpha))[coordinates if coordinates is not None else slice(None)]
    return np.array([(fn(alpha + step * e) - fn(alpha - step * e)) / (2 * step) for e in eye])


def test_gradients_match_finite_differences():
    # The bound's gradient carries those of the risk (betainc) and of the KL (kl_inv's too).
    errors, alpha = _problem(4)
    bound = lambda a: float(both_bounds(errors, a, 1.0, DELTA)[0].bound)  # noqa: E731
    np.testing.assert_allclose(
        bound_gradient(errors, alpha, 1.0, DELTA),
        _central_differences(bound, alpha),
        rtol=1e-6,
        atol=1e-9,
    )
    kl_gradient = jax.grad(D.dirichlet_kl, argnums=(0, 1))(alpha, 1.5 * alpha)
    reference = _central_differences(lambda t: reference_kl(t, 1.5 * alpha), alpha)
    np.testing.assert_allclose(kl_gradient[0], reference, rtol=1e-6)
    reference = _central_differences(lambda t: reference_kl(alpha, t), 1.5 * alpha)
    np.testing.assert_allclose(kl_gradient[1], reference, rtol=1e-6)


def _sigmoid_risk(errors, alpha, slope):
    """Mean over examples of E[sigmoid(slope (W - 1/2))], W ~ Beta(wrong, right), by quadrature."""
    wrong, right = errors @ alpha, (1 - errors) @ alpha
    values = []
    for w, r in zip(wrong, right):
        if w == 0 or r == 0:  # point masses at W = 0 or 1
            values.append(expit(slope * ((w > 0) - 0.5)))
            continue
        log_norm = betaln(w, r)

        def integrand(t, w=w, r=r, log_norm=log_norm):
            log_density = (w - 1) * math.log(t) + (r - 1) * math.log1p(-t) - log_norm
            return expit(slope * (t - 0.5)) * math.exp(log_density)

        values.append(integrate.quad(integrand, 0, 1, points=[0.5], limit=200)[0])
    return float(np.mean(values))


def _monte_carlo_runs(errors, alpha, slope, runs=6):
    keys = jax.random.split(jax.random.key(0), runs)
    values, grads = zip(*(monte_carlo(k, errors, alpha, DRAWS, slope) for k in keys))
    return np.array(values), np.array(grads)


def test_monte_carlo_risk_estimates_the_sigmoid_risk_and_its_gradient():
    errors, alpha = _problem(5)
    slope = 10.0  # a gentle slope: low variance, so the check is sharp
    values, grads = _monte_carlo_runs(errors, alpha, slope)
    spread = values.std(ddof=1) / math.sqrt(len(values))
    assert abs(values.mean() - _sigmoid_risk(errors, alpha, slope)) < 5 * spread + 1e-4
    # the reparameterized gradient is unbiased for the gradient of the sigmoid risk
    coordinates = [4]
    smooth = lambda a: _sigmoid_risk(errors, a, slope)  # noqa: E731
    reference = _central_differences(smooth, alpha, step=1e-5, coordinates=coordinates)
    spread = grads[:, coordinates].std(axis=0, ddof=1) / math.sqrt(len(grads))
    assert np.all(np.abs(grads[:, coordinates].mean(0) - reference) < 5 * spread + 1e-4)
    # nearly linear sigmoid: the gradient of 1/2 + slope/4 (E[W] - 1/2), in closed form
    slope = 0.1
    _, grads = _monte_carlo_runs(errors, alpha, slope)
    mean_wrong = errors @ alpha / alpha.sum()
    linear = slope / 4 * np.mean(errors - mean_wrong[:, None], axis=0) / alpha.sum()
    spread = grads.std(axis=0, ddof=1) / math.sqrt(len(grads))
    assert np.all(np.abs(grads.mean(0) - linear) < 5 * spread + 1e-4 * np.abs(linear).max())


def test_monte_carlo_risk_for_several_classes_approaches_the_exact_w_risk():
    # Three classes: errors from class predictions; a steep sigmoid recovers P(W >= 1/2), which
    # bounds the plurality vote's own error rate from above.
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 3, M)
    noise = rng.integers(0, 3, (M, N))
    predictions = np.where(rng.uniform(size=(M, N)) < 0.6, labels[:, None], noise)
    errors = np.asarray(D.voter_errors(predictions, labels))
    alpha = rng.uniform(0.5, 3.0, N)
    estimate, _ = monte_carlo(jax.random.key(1), errors, alpha, DRAWS, 1e4)
    exact = float(np.mean(exact_risks(errors, alpha)))
    assert abs(float(estimate) - exact) < 0.01
    theta = rng.dirichlet(alpha, 20_000)
    votes = np.stack([theta @ (predictions == c).T for c in range(3)])  # (class, draw, example)
    plurality_error = np.mean(votes.argmax(0) != labels)
    assert plurality_error <= exact + 0.01


def _reference_bounds(errors, alpha, prior, delta, weight=None):
    """(Seeger, McAllester, risk, kl) from independent formulas: SciPy, brentq."""
    weight = np.ones(len(errors)) if weight is None else weight
    risk = float(np.sum(weight * _beta_survival(errors, alpha)) / weight.sum())
    kl = reference_kl(alpha, np.full(N, prior))
    m = weight.sum()
    level = (kl + math.log(2 * math.sqrt(m) / delta)) / m
    return R.kl_inv_upper(risk, level), risk + math.sqrt(level / 2), risk, kl


def test_bounds_match_the_reference_formulas():
    errors, alpha = _problem(7)
    seeger, mcallester = both_bounds(errors, alpha, 2.0, DELTA)
    bound, loose, risk, kl = _reference_bounds(errors, alpha, 2.0, DELTA)
    np.testing.assert_allclose(seeger.risk, risk, rtol=1e-13)
    np.testing.assert_allclose(seeger.kl, kl, rtol=1e-12)
    np.testing.assert_allclose(seeger.bound, bound, atol=1e-10)
    np.testing.assert_allclose(mcallester.bound, loose, rtol=1e-12)
    assert risk <= float(seeger.bound) <= float(mcallester.bound)


def test_zero_one_sample_weights_select_the_examples():
    errors, alpha = _problem(8)
    mask = (np.arange(M) % 3 != 0).astype(float)
    seeger, mcallester = both_bounds(errors, alpha, 2.0, DELTA, mask)
    bound, loose, risk, _ = _reference_bounds(errors, alpha, 2.0, DELTA, mask)
    np.testing.assert_allclose(seeger.risk, risk, rtol=1e-13)
    np.testing.assert_allclose(seeger.bound, bound, atol=1e-10)
    np.testing.assert_allclose(mcallester.bound, loose, rtol=1e-12)


def test_vmap_over_alpha_delta_and_prior_agrees_with_single_calls():
    errors, alpha = _problem(9)
    alphas = alpha * np.linspace(0.5, 2.0, 4)[:, None]
    deltas, priors = np.array([0.01, 0.05, 0.1, 0.5]), np.array([0.3, 1.0, 3.0, 10.0])
    batched = jax.vmap(both_bounds, in_axes=(None, 0, 0, 0))(errors, alphas, priors, deltas)
    for i in range(4):
        single = both_bounds(errors, alphas[i], priors[i], deltas[i])
        for ours, reference in zip(jax.tree.leaves(batched), jax.tree.leaves(single)):
            np.testing.assert_allclose(ours[i], reference, rtol=1e-13)
    eager = _both_bounds(errors, alpha, 1.0, DELTA)  # no outer jit
    for ours, reference in zip(
        jax.tree.leaves(eager), jax.tree.leaves(both_bounds(errors, alpha, 1.0, DELTA))
    ):
        np.testing.assert_allclose(ours, reference, rtol=1e-14)


def test_float32_in_float32_out():
    errors, alpha = _problem(10)
    risks = exact_risks(errors.astype(np.int8), alpha.astype(np.float32))
    assert risks.dtype == np.float32
    np.testing.assert_allclose(risks, exact_risks(errors, alpha), atol=1e-5)
    assert D.dirichlet_kl(alpha.astype(np.float32), 1.0).dtype == np.float32
    assert D.voter_errors(errors > 0, np.zeros(M, bool)).dtype == jnp.result_type(float)


@pytest.mark.parametrize(
    "alpha, message",
    [
        ([1.0, 0.0, 2.0], "> 0"),
        ([1.0, -0.5], "> 0"),
        ([1.0, np.nan], "NaN or inf"),
        ([np.inf, 1.0], "NaN or inf"),
        ([[1.0, 2.0]], "vector"),
        ([], "vector"),
    ],
)
def test_check_concentration_refuses_bad_input(alpha, message):
    with pytest.raises(ValueError, match=message):
        D.check_concentration(np.array(alpha))


def test_check_concentration_accepts_good_and_traced_input():
    D.check_concentration(np.array([0.1, 2.0, 1e4]))
    D.check_concentration(3.0, name="prior")
    jax.jit(lambda a: D.check_concentration(a) or a.sum())(jnp.array([-1.0, 2.0]))  # traced


def test_voter_errors_from_votes_and_from_classes():
    votes, labels = np.array([[1, -1, 1], [-1, -1, 1]]), np.array([1, -1])
    np.testing.assert_array_equal(D.voter_errors(votes, labels), [[0, 1, 0], [0, 0, 1]])
    classes, targets = np.array([[0, 2, 1], [1, 1, 0]]), np.array([2, 1])
    np.testing.assert_array_equal(D.voter_errors(classes, targets), [[1, 0, 1], [0, 0, 1]])
