"""The binomial test-set bound: never below the exact inversion (mpmath / SciPy), closed forms,
the Chernoff relaxation, the implicit gradient, jit / vmap, float32, majority-vote errors."""

import itertools

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pacbound._src.bounds.test_set import (
    binomial_log_cdf,
    binomial_tail_inversion,
    majority_vote_errors,
    majority_vote_test_set_bound,
)
from pacbound.kl import kl_inv_upper


def exact_cdf(k, n, p):
    """``P(Bin(n, p) <= k) = I_{1-p}(n - k, k + 1)`` in 50-digit arithmetic."""
    with mp.workdps(50):
        return mp.betainc(n - k, k + 1, 0, 1 - mp.mpf(float(p)), regularized=True)


def scipy_inversion(k, n, delta):
    """The ``p`` with ``P(Bin(n, p) <= k) = delta``, elementwise: bisection on ``log p`` over
    ``[log 1e-300, 0]`` with SciPy's binomial log-cdf (100 halvings: ``p`` to float64's
    resolution), all at once."""
    lo, hi = np.full(np.shape(k), np.log(1e-300)), np.zeros(np.shape(k))
    for _ in range(100):
        mid = (lo + hi) / 2
        above = stats.binom.logcdf(k, n, np.exp(mid)) < np.log(delta)  # the cdf falls with p
        lo, hi = np.where(above, lo, mid), np.where(above, mid, hi)
    return np.exp(hi)


def test_float64_is_never_below_the_exact_inversion_and_is_tight():
    rng = np.random.default_rng(0)
    n = np.floor(10 ** rng.uniform(0, 3, 60))
    k = np.floor(rng.uniform(0, 1, 60) ** 2 * n)
    delta = 10 ** rng.uniform(-10, -0.05, 60)
    bound = np.asarray(binomial_tail_inversion(k, n, delta))
    for kk, nn, dd, p in zip(k, n, delta, bound):
        if kk >= nn:
            assert p == 1.0
            continue
        assert exact_cdf(kk, nn, p) < dd  # p lies above the inversion
        assert exact_cdf(kk, nn, p * (1 - 1e-9)) >= dd or p < 1e-300  # and within 1e-9 of it


def test_float32_is_never_below_the_exact_inversion():
    rng = np.random.default_rng(1)
    n = np.floor(10 ** rng.uniform(0, 7, 400))
    k = np.where(rng.random(400) < 0.3, 0.0, np.floor(rng.uniform(0, 1, 400) ** 3 * n))
    delta = 10 ** rng.uniform(-12, -0.1, 400)
    as32 = [np.float32(x) for x in (k, n, delta)]
    bound = np.asarray(binomial_tail_inversion(*as32), np.float64)
    k, n, delta = (np.asarray(x, np.float64) for x in as32)
    below = k < n
    k, n, delta, bound = k[below], n[below], delta[below], bound[below]
    above = stats.binom.cdf(k, n, bound) < delta * (1 - 1e-9)
    assert np.all(above), np.stack([k, n, delta, bound])[:, ~above]
    tight = bound <= scipy_inversion(k, n, delta) * (1 + 2e-4)
    assert np.all(tight), np.stack([k, n, delta, bound])[:, ~tight]


@settings(max_examples=50)
@given(n=st.integers(1, 10**6), delta=st.floats(1e-9, 0.99))
def test_no_error_has_the_closed_form(n, delta):
    np.testing.assert_allclose(
        binomial_tail_inversion(0, n, delta), -np.expm1(np.log(delta) / n), rtol=1e-8
    )


@settings(max_examples=50)
@given(n=st.integers(1, 10**6), frac=st.floats(0, 1), delta=st.floats(1e-9, 0.99))
def test_tighter_than_the_chernoff_kl_bound_and_monotone(n, frac, delta):
    """``P(Bin <= k) <= exp(-n kl(k/n || p))``, so the inversion lies below
    ``kl^-1_up(k/n, ln(1/delta)/n)`` (Langford 2005, Sec. 3)."""
    k = np.floor(frac * n)
    bound = float(binomial_tail_inversion(k, n, delta))
    assert bound <= float(kl_inv_upper(k / n, np.log(1 / delta) / n)) + 1e-12
    assert float(binomial_tail_inversion(k, n, delta / 2)) >= bound
    assert float(binomial_tail_inversion(min(k + 1, n), n, delta)) >= bound
    assert bound >= k / n or delta > 0.5


def test_all_errors_give_one_and_log_cdf_matches_scipy():
    ones = binomial_tail_inversion(jnp.array([5, 7]), jnp.array([5, 7]), 0.1)  # k = n
    np.testing.assert_array_equal(ones, [1.0, 1.0])
    for k, n, p in [(0, 10, 0.3), (3, 10, 0.3), (20, 10**4, 0.001), (5000, 10**6, 0.005)]:
        np.testing.assert_allclose(
            binomial_log_cdf(k, n, p), stats.binom.logcdf(k, n, p), rtol=1e-10, atol=1e-12
        )


def test_gradient_in_delta_is_the_implicit_derivative():
    for k, n, delta in [(0, 100, 0.05), (7, 200, 0.01), (300, 10**4, 0.1)]:
        grad = jax.grad(binomial_tail_inversion, argnums=2)(float(k), float(n), delta)
        h = 1e-7
        fd = binomial_tail_inversion(k, n, delta + h) - binomial_tail_inversion(k, n, delta - h)
        np.testing.assert_allclose(grad, fd / (2 * h), rtol=1e-4)
    assert jax.grad(binomial_tail_inversion, argnums=2)(5.0, 5.0, 0.1) == 0.0


def test_jit_vmap_and_float32_agree():
    k = jnp.array([0.0, 3.0, 40.0, 900.0])
    n = jnp.array([10.0, 50.0, 1000.0, 10**5])
    batch = binomial_tail_inversion(k, n, 0.05)
    one_by_one = jnp.stack([binomial_tail_inversion(a, b, 0.05) for a, b in zip(k, n)])
    vmapped = jax.vmap(binomial_tail_inversion, in_axes=(0, 0, None))(k, n, 0.05)
    np.testing.assert_allclose(batch, one_by_one, rtol=1e-15)
    np.testing.assert_allclose(batch, vmapped, rtol=1e-15)
    f32 = binomial_tail_inversion(k.astype(jnp.float32), n.astype(jnp.float32), np.float32(0.05))
    assert f32.dtype == jnp.float32
    np.testing.assert_allclose(f32, batch, rtol=1e-4)
    assert bool(jnp.all(f32 >= batch * (1 - 1e-12)))


def _loop_vote_errors(predictions, y, rho, classes):
    errors = []
    for row, label in zip(predictions, y):
        scores = {c: sum(r for p, r in zip(row, rho) if p == c) for c in classes}
        true = sum(r for p, r in zip(row, rho) if p == label)
        errors.append(float(any(s >= true for c, s in scores.items() if c != label)))
    return np.array(errors)


def test_majority_vote_errors_count_ties_and_match_a_loop():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 80)
    predictions = np.where(rng.random((80, 4)) < 0.6, y[:, None], rng.integers(0, 3, (80, 4)))
    for rho in (np.full(4, 0.25), rng.dirichlet(np.ones(4))):
        got = majority_vote_errors(predictions, y, rho, jnp.arange(3))
        np.testing.assert_array_equal(got, _loop_vote_errors(predictions, y, rho, range(3)))
    tie = majority_vote_errors(np.array([[1, -1]]), np.array([1]), np.array([0.5, 0.5]), [-1, 1])
    assert float(tie[0]) == 1.0


def test_majority_vote_test_set_bound_and_its_checks():
    votes = np.array(list(itertools.product([-1, 1], repeat=3)) * 10)
    y = np.ones(len(votes))
    rho = np.array([0.5, 0.3, 0.2])
    errors = int(np.sum(votes @ rho <= 0))
    got = majority_vote_test_set_bound(votes, y, rho, 0.05, jnp.array([-1, 1]))
    np.testing.assert_allclose(got, binomial_tail_inversion(errors, len(votes), 0.05), rtol=1e-14)
    with pytest.raises(ValueError, match="delta"):
        majority_vote_test_set_bound(votes, y, rho, 0.0, jnp.array([-1, 1]))
    with pytest.raises(ValueError, match="sum to 1"):
        majority_vote_test_set_bound(votes, y, rho * 2, 0.05, jnp.array([-1, 1]))
