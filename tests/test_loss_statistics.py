"""Loss statistics: loop references, identities, OOB masks, batches of rho, vmap over mu, dtypes."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound._src import loss_statistics as LS


def _problem(seed=0, m=40, n=5, classes=3, masked=True, weighted=True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, m)
    noise = rng.integers(0, classes, (m, n))
    predictions = np.where(rng.random((m, n)) < 0.7, y[:, None], noise)
    mask = (rng.random((m, n)) < 0.7).astype(float) if masked else None
    if masked:
        mask[:3] = 1.0  # every pair shares at least three examples
    weights = rng.uniform(0.5, 2.0, m) if weighted else None
    return predictions, y, mask, weights


def _reference_statistics(errors, weights, mask):
    """Weighted means over shared evaluated examples, one pair at a time."""
    m, n = errors.shape
    w = np.ones(m) if weights is None else weights
    M = np.ones((m, n)) if mask is None else mask
    tandem, pair_risks, counts = (np.zeros((n, n)) for _ in range(3))
    for j, k in itertools.product(range(n), repeat=2):
        shared = (M[:, j] * M[:, k]) > 0
        ww = w[shared]
        tandem[j, k] = np.sum(ww * errors[shared, j] * errors[shared, k]) / ww.sum()
        pair_risks[j, k] = np.sum(ww * errors[shared, j]) / ww.sum()
        counts[j, k] = np.count_nonzero(shared & (w > 0))
    return np.diagonal(pair_risks), tandem, pair_risks, counts


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_statistics_equal_the_loop_reference(masked, weighted):
    predictions, y, mask, weights = _problem(masked=masked, weighted=weighted)
    errors = LS.error_matrix(predictions, y, dtype=jnp.float64)
    np.testing.assert_array_equal(errors, (predictions != y[:, None]).astype(float))
    stats = LS.loss_statistics(errors, weights, mask)
    for got, want in zip(stats, _reference_statistics(np.asarray(errors), weights, mask)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_disagreement_equals_the_reference_and_the_binary_form():
    predictions, _, mask, weights = _problem(classes=4)
    D = LS.disagreement_matrix(predictions, jnp.arange(4), weights, mask, dtype=jnp.float64)
    n = predictions.shape[1]
    for j, k in itertools.product(range(n), repeat=2):
        shared = (mask[:, j] * mask[:, k]) > 0
        want = np.average(predictions[shared, j] != predictions[shared, k], weights=weights[shared])
        np.testing.assert_allclose(D[j, k], want, atol=1e-13)
    votes = np.where(np.random.default_rng(1).random((30, 4)) < 0.5, -1.0, 1.0)
    binary = LS.disagreement_matrix(votes, jnp.array([-1.0, 1.0]))
    np.testing.assert_allclose(binary, (1 - votes.T @ votes / 30) / 2, atol=1e-12)


def test_binary_tandem_identity_and_ternary_rates():
    """Binary votes, no mask: E[L(h, h')] = E[L(h)] - E[D(h, h')] / 2 ([MLIS20])."""
    rng = np.random.default_rng(2)
    y = np.where(rng.random(50) < 0.5, -1, 1)
    votes = np.where(rng.random((50, 6)) < 0.75, y[:, None], -y[:, None])
    stats = LS.loss_statistics(LS.error_matrix(votes, y, jnp.float64))
    D = LS.disagreement_matrix(votes, jnp.array([-1, 1]), dtype=jnp.float64)
    rho = jnp.asarray(rng.dirichlet(np.ones(6)))
    gibbs, tandem = LS.gibbs_risk(stats, rho), LS.tandem_risk(stats, rho)
    np.testing.assert_allclose(tandem, gibbs - LS.quadratic_form(D, rho) / 2, atol=1e-13)
    rates = LS.ternary_rates(stats, rho)
    np.testing.assert_allclose(sum(rates), 1.0, atol=1e-13)
    np.testing.assert_allclose(rates.one, 2 * (gibbs - tandem), atol=1e-13)


def _per_pair_mu_losses(errors, mask, j, k, mu):
    shared = (mask[:, j] * mask[:, k]) > 0
    return (errors[shared, j] - mu) * (errors[shared, k] - mu)


@pytest.mark.parametrize("mu", [-0.4, 0.0, 0.3])
def test_mu_tandem_mean_and_variance_equal_per_example_references(mu):
    predictions, y, mask, _ = _problem(seed=3)
    errors = np.asarray(LS.error_matrix(predictions, y, jnp.float64))
    stats = LS.loss_statistics(errors, mask=mask)
    rho = np.random.default_rng(4).dirichlet(np.ones(errors.shape[1]))
    n = errors.shape[1]
    mean = sum(
        rho[j] * rho[k] * _per_pair_mu_losses(errors, mask, j, k, mu).mean()
        for j, k in itertools.product(range(n), repeat=2)
    )
    variance = sum(
        rho[j] * rho[k] * np.var(_per_pair_mu_losses(errors, mask, j, k, mu), ddof=1)
        for j, k in itertools.product(range(n), repeat=2)
    )
    np.testing.assert_allclose(LS.mu_tandem_risk(stats, rho, mu), mean, atol=1e-13)
    np.testing.assert_allclose(LS.mu_tandem_variance(stats, rho, mu), variance, atol=1e-13)


def test_mu_tandem_without_mask_is_the_cantelli_numerator():
    predictions, y, _, _ = _problem(masked=False, weighted=False)
    stats = LS.loss_statistics(LS.error_matrix(predictions, y, jnp.float64))
    rho = jnp.full(5, 0.2)
    mus = jnp.linspace(-0.5, 0.45, 7)
    values = jax.vmap(lambda mu: LS.mu_tandem_risk(stats, rho, mu))(mus)
    want = LS.tandem_risk(stats, rho) - 2 * mus * LS.gibbs_risk(stats, rho) + mus**2
    np.testing.assert_allclose(values, want, atol=1e-13)


def test_a_batch_of_rho_is_one_product_and_equals_vmap_and_jit():
    predictions, y, mask, weights = _problem()
    stats = LS.loss_statistics(LS.error_matrix(predictions, y, jnp.float64), weights, mask)
    rhos = jnp.asarray(np.random.default_rng(5).dirichlet(np.ones(5), size=64))
    for f in (LS.tandem_risk, LS.gibbs_risk, lambda s, r: LS.mu_tandem_variance(s, r, 0.2)):
        batch = f(stats, rhos)
        np.testing.assert_allclose(batch, jax.vmap(f, in_axes=(None, 0))(stats, rhos), atol=1e-14)
        np.testing.assert_allclose(batch, jax.jit(f)(stats, rhos), atol=1e-14)
        np.testing.assert_allclose(batch[3], f(stats, rhos[3]), atol=1e-14)


def test_float32_is_kept_and_close_to_float64():
    predictions, y, mask, weights = _problem()
    stats32 = LS.loss_statistics(LS.error_matrix(predictions, y), weights, mask)
    stats64 = LS.loss_statistics(LS.error_matrix(predictions, y, jnp.float64), weights, mask)
    rho = np.full(5, 0.2, np.float32)
    assert stats32.tandem.dtype == jnp.float32
    assert LS.mu_tandem_variance(stats32, rho, np.float32(0.1)).dtype == jnp.float32
    for a, b in zip(stats32, stats64):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_sample_sizes_are_the_smallest_oob_sets():
    _, _, mask, weights = _problem()
    weights[0] = 0.0
    kept = mask * (weights > 0)[:, None]
    assert LS.sample_sizes(mask, weights) == (
        int(kept.sum(0).min()),
        int((kept.T @ kept).min()),
    )
    assert LS.sample_sizes(m=17) == (17, 17)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: LS.loss_statistics(np.full((3, 2), 0.5)), "0 / 1"),
        (lambda: LS.loss_statistics(np.zeros((3,))), "2-D"),
        (lambda: LS.loss_statistics(np.zeros((3, 2)), mask=np.ones((3, 3))), "shape"),
        (lambda: LS.loss_statistics(np.zeros((3, 2)), mask=np.array([[1, 0]] * 3)), "evaluated"),
        (lambda: LS.loss_statistics(np.zeros((3, 2)), mask=np.eye(3)[:, :2]), "share 0"),
        (lambda: LS.sample_sizes(np.array([[1, 0], [1, 0]])), "empty"),
        (lambda: LS.loss_statistics(np.zeros((3, 2)), np.array([1.0, -1.0, 1.0])), "weight"),
        (lambda: LS.check_posterior(np.array([0.5, 0.6])), "sum to 1"),
        (lambda: LS.check_posterior(np.array([1.5, -0.5])), ">= 0"),
        (lambda: LS.check_posterior(np.ones(3) / 3, n=4), "length 4"),
    ],
)
def test_bad_inputs_raise_clear_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
