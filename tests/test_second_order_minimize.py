"""Minimizers of the second-order bounds: certificates at the returned rho, no worse than the
papers' alternating schemes, the mu grid with its union bound, float32, boundary checks."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

from pacbound._src import loss_statistics as LS
from pacbound._src import second_order_minimize as SM
from pacbound._src.bounds import second_order as S


def _problem(dtype=jnp.float64, seed=0, m=300, n=10, classes=2, oob=True):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, m)
    accuracy = rng.uniform(0.55, 0.8, n)
    wrong = (y[:, None] + rng.integers(1, classes, (m, n))) % classes
    predictions = np.where(rng.random((m, n)) < accuracy, y[:, None], wrong)
    mask = (rng.random((m, n)) < 0.63).astype(float) if oob else None
    stats = LS.loss_statistics(LS.error_matrix(predictions, y, dtype), mask=mask)
    n_min, n2 = LS.sample_sizes(mask, m=m)
    return stats, n_min, n2, predictions, np.full(n, 1 / n)


def _kl(rho, prior):
    return float(jnp.sum(rho * jnp.log(rho / prior)))


# one number of steps (static) and n = 10 voters throughout: the minimization of each
# objective compiles once for the whole module
STEPS = 1000


@pytest.mark.parametrize(
    "name",
    [
        "tnd",
        "cctnd",
        "split_kl",
        # the same minimize_bound with other objectives (each compiles apart)
        pytest.param("first_order", marks=pytest.mark.thorough),
        pytest.param("tnd_lambda", marks=pytest.mark.thorough),
    ],
)
def test_the_result_is_the_bound_at_its_rho_and_beats_the_prior(name):
    stats, n, n2, _, prior = _problem()
    data = SM.bound_data(stats, n, n2, 0.05, mu=0.1)
    result = SM.minimize_bound(name, data, prior, steps=STEPS)
    kl = _kl(result.rho, prior)
    again = SM.OBJECTIVES[name](result.rho, jnp.asarray(kl), data)
    np.testing.assert_allclose(result.bound, again, rtol=1e-10)
    at_prior = SM.OBJECTIVES[name](jnp.asarray(prior), jnp.asarray(0.0), data)
    assert float(result.bound) <= float(at_prior) + 1e-12
    assert float(result.bound) <= float(jnp.min(result.values)) + 1e-12
    np.testing.assert_allclose(jnp.sum(result.rho), 1.0, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("classes", "oob"), [(2, True), (3, False)], ids=["binary-oob", "3-class"])
def test_no_worse_than_the_papers_alternating_schemes(seed, classes, oob):
    """Issue #16: the gradient route (the kl form of TND, CCTND at its closed-form best mu,
    one jitted scan) reaches a bound no worse than the papers' alternating schemes (Masegosa et
    al. 2020: steps on TND's lambda form at fixed lambda, then the closed-form lambda; Wu et al.
    2021: steps on CCTND at fixed mu, then the closed-form mu), on the same statistics, with
    the same optimizer and number of gradient steps (10 rounds of 100 for the schemes)."""
    stats, n, n2, _, prior = _problem(seed=seed, classes=classes, oob=oob)
    data = SM.bound_data(stats, n, n2, 0.05)
    ours_tnd = SM.minimize_bound("tnd", data, prior, steps=STEPS)
    paper_tnd = SM.tnd_alternating(data, prior)
    paper_tnd_kl = S.tnd_kl(
        LS.tandem_risk(stats, paper_tnd.rho), _kl(paper_tnd.rho, prior), n2, 0.05
    )
    assert float(paper_tnd_kl) <= float(paper_tnd.bound) + 1e-12  # kl form <= lambda form
    assert float(ours_tnd.bound) <= float(paper_tnd_kl) + 1e-9
    ours_cctnd = SM.minimize_bound("cctnd", data, prior, steps=STEPS)
    paper_cctnd = SM.cctnd_alternating(data, prior)
    assert float(ours_cctnd.bound) <= float(paper_cctnd.bound) + 1e-9
    rho = paper_cctnd.rho
    t, g = LS.tandem_risk(stats, rho), LS.gibbs_risk(stats, rho)
    recomputed = S.cctnd(t, g, _kl(rho, prior), n, n2, 0.05, paper_cctnd.parameter)
    np.testing.assert_allclose(paper_cctnd.bound, recomputed, rtol=1e-10)


def test_mu_grid_pays_its_union_bound_and_keeps_the_best():
    stats, n, n2, _, prior = _problem(m=2000)
    data = SM.bound_data(stats, n, n2, 0.05)
    grid = jnp.array([-0.3, 0.0, 0.2])
    result = SM.minimize_over_mu("split_kl", data, prior, grid, steps=STEPS)
    assert float(result.parameter) in [float(x) for x in grid]
    rates = LS.ternary_rates(stats, result.rho)
    kl = _kl(result.rho, prior)
    recomputed = S.split_kl_mu_tandem(*rates, kl, n2, 0.05, result.parameter, n_mu=3)
    np.testing.assert_allclose(result.bound, recomputed, rtol=1e-10)
    one_mu = SM.minimize_bound("split_kl", data._replace(mu=result.parameter), prior, steps=STEPS)
    assert float(one_mu.bound) <= float(result.bound) + 1e-12  # no union bound to pay


def test_ccpbb_and_dis_minimize_with_their_own_data():
    stats, n, n2, predictions, prior = _problem(m=1500, n=6)
    unlabeled = np.random.default_rng(5).integers(0, 2, (700, 6))
    both = np.concatenate([predictions, unlabeled])
    dis = LS.disagreement_matrix(both, jnp.array([0, 1]), dtype=jnp.float64)
    data = SM.bound_data(stats, n, n2, 0.05, mu=0.05, disagreement=dis, m_unlabeled=len(both))
    for name in ("ccpbb", "dis"):
        result = SM.minimize_bound(name, data, prior, steps=150)
        at_prior = SM.OBJECTIVES[name](jnp.asarray(prior), jnp.asarray(0.0), data)
        assert 0.0 <= float(result.bound) <= float(at_prior) + 1e-12


def test_float32_minimization_stays_float32():
    stats, n, n2, _, prior = _problem(dtype=jnp.float32)
    data = SM.bound_data(stats, n, n2, 0.05)
    result = SM.minimize_bound("tnd", data, prior.astype(np.float32), optax.adam(0.1), steps=100)
    assert result.rho.dtype == jnp.float32 and result.bound.dtype == jnp.float32
    stats64, *_ = _problem()
    ours64 = SM.minimize_bound("tnd", SM.bound_data(stats64, n, n2, 0.05), prior, steps=100)
    assert abs(float(result.bound) - float(ours64.bound)) < 1e-3


@pytest.mark.parametrize(
    "prior, delta, message",
    [
        (np.r_[0.0, np.full(9, 1 / 9)], 0.05, "> 0"),
        (np.full(10, 0.2), 0.05, "sum to 1"),
        (np.full(10, 0.1), 0.0, "delta"),
    ],
)
def test_bad_inputs_raise(prior, delta, message):
    stats, n, n2, _, _ = _problem()
    with pytest.raises(ValueError, match=message):
        SM.minimize_bound("tnd", SM.bound_data(stats, n, n2, delta), prior)
