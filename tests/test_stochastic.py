"""Dirichlet stochastic majority votes over [H, -H]: the certificate against an independent
SciPy recomputation, the factor 2 to the mean vote, the learner (jit == no-jit == vmap over
delta and fold masks, float32), gradients at the edges, the registry and bad inputs."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import digamma, gammaln

from pacbound._src.learning.bound_objective import run_optimizer
from pacbound._src.stochastic_votes import (
    certify_dirichlet,
    mean_vote_bound,
    stochastic_risks,
    stochastic_statistics,
)
from pacbound.certify import BOUNDS, DEFAULT_STOCHASTIC_BOUNDS, STOCHASTIC_BOUNDS, certify
from pacbound.solvers import DirichletInfo, minimize_dirichlet_bound
from tests.reference import bounds_numpy as R

M, N = 40, 5  # one problem size: every program compiles once
DELTA = 0.05
STEPS = 25
OPTIMIZER = optax.adam(0.1)  # one object: one compilation of the learner


def problem(seed=0, m=M):
    """±1 stumps-like voters of accuracies 0.55 to 0.8, labels, float64."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], m)
    right = rng.random((m, N)) < np.linspace(0.55, 0.8, N)
    return np.where(right, y[:, None], -y[:, None]), y


def reference_certificate(alpha, H, y, prior=1.0, delta=DELTA, rows=None):
    """(seeger, mcallester, risk, kl, mean-vote risk) from SciPy only: the [H, -H] error matrix
    built explicitly, W ~ Beta(wrong, right), the Dirichlet KL from gammaln / digamma."""
    rows = np.ones(len(y), bool) if rows is None else np.asarray(rows) > 0
    H, y = H[rows], y[rows]
    errors = (H != y[:, None]).astype(float)
    if alpha.size == 2 * H.shape[1]:
        errors = np.concatenate([errors, 1 - errors], axis=1)
    wrong, right = errors @ alpha, (1 - errors) @ alpha
    inner = (wrong > 0) & (right > 0)  # otherwise a point mass at W = 0 or 1
    sf = stats.beta.sf(0.5, np.where(inner, wrong, 1.0), np.where(inner, right, 1.0))
    risk = float(np.mean(np.where(inner, sf, wrong > 0)))
    beta = np.broadcast_to(np.asarray(prior, float), alpha.shape)
    kl = (
        gammaln(alpha.sum()) - gammaln(alpha).sum() - gammaln(beta.sum()) + gammaln(beta).sum()
        + np.sum((alpha - beta) * (digamma(alpha) - digamma(alpha.sum())))
    )  # fmt: skip
    m = len(y)
    level = (kl + math.log(2 * math.sqrt(m) / delta)) / m
    seeger = min(R.kl_inv_upper(risk, level), 1.0)
    mcallester = min(risk + math.sqrt(level / 2), 1.0)
    n = H.shape[1]
    w = alpha[:n] - alpha[n:] if alpha.size == 2 * n else alpha
    mean_vote = float(np.mean(y * (H @ w) <= 0))
    return seeger, mcallester, risk, kl, mean_vote


# ----------------------------------------------------------------------------- certificate
@pytest.mark.parametrize("complemented", [True, False])
def test_certificate_equals_the_scipy_recomputation(complemented):
    H, y = problem(1)
    alpha = np.random.default_rng(2).uniform(0.1, 5.0, 2 * N if complemented else N)
    cert = certify_dirichlet(alpha, H, y, prior=2.0)
    seeger, mcallester, risk, kl, mean_vote = reference_certificate(alpha, H, y, prior=2.0)
    np.testing.assert_allclose(cert.statistics.risk, risk, rtol=1e-12)
    np.testing.assert_allclose(cert.statistics.kl, kl, rtol=1e-11)
    assert cert.statistics.m == M
    np.testing.assert_allclose(cert.bounds["dirichlet_seeger"], seeger, atol=1e-10)
    np.testing.assert_allclose(cert.bounds["dirichlet_mcallester"], mcallester, rtol=1e-12)
    assert cert.majority_vote_risk == pytest.approx(mean_vote)
    assert risk <= cert.bounds["dirichlet_seeger"] <= cert.bounds["dirichlet_mcallester"]
    name, value = cert.best  # the smaller at delta / 2 (union bound)
    assert name == "dirichlet_seeger"
    np.testing.assert_allclose(
        value, reference_certificate(alpha, H, y, 2.0, DELTA / 2)[0], atol=1e-10
    )
    assert set(cert.bounds) == set(DEFAULT_STOCHASTIC_BOUNDS) and bool(cert.valid)


def test_float64_certificate_from_float32_inputs_and_a_fold_mask_is_slicing():
    H, y = problem(3)
    alpha = np.random.default_rng(4).uniform(0.5, 50.0, 2 * N).astype(np.float32)
    mask = (np.arange(M) % 4 != 0).astype(np.float32)
    with jax.enable_x64(False):
        cert = certify_dirichlet(alpha, H.astype(np.float32), y.astype(np.float32),
                                 sample_weight=mask)  # fmt: skip
    assert cert.bounds["dirichlet_seeger"].dtype == np.float64
    want = reference_certificate(alpha.astype(np.float64), H, y, rows=mask)
    np.testing.assert_allclose(cert.bounds["dirichlet_seeger"], want[0], atol=1e-10)
    assert cert.statistics.m == mask.sum()
    sliced = certify_dirichlet(alpha, H[mask > 0], y[mask > 0])
    np.testing.assert_allclose(cert.bounds["dirichlet_seeger"], sliced.bounds["dirichlet_seeger"])


def test_traced_certificate_in_the_working_precision_flags_invalid_alpha():
    H, y = problem(5)
    alpha = np.random.default_rng(6).uniform(0.5, 3.0, 2 * N)
    certify_traced = jax.jit(lambda a: certify_dirichlet(a, H, y))  # one compilation
    traced = certify_traced(alpha)
    concrete = certify_dirichlet(alpha, H, y)
    np.testing.assert_allclose(
        traced.bounds["dirichlet_seeger"], concrete.bounds["dirichlet_seeger"], rtol=1e-12
    )
    bad = certify_traced(alpha * np.r_[-1.0, np.ones(2 * N - 1)])
    assert not bool(bad.valid) and all(float(v) == 1.0 for v in bad.bounds.values())


@settings(max_examples=30)
@given(st.lists(st.floats(1e-2, 1e2), min_size=2 * N, max_size=2 * N), st.integers(0, 10**6))
def test_the_mean_vote_errs_at_most_twice_as_often_as_the_stochastic_vote(alpha, seed):
    H, y = problem(seed % 1000)
    alpha = np.asarray(alpha)
    risks = np.asarray(stochastic_risks(H, y, alpha))
    errs = y * (H @ (alpha[:N] - alpha[N:])) <= 0
    assert np.all(errs <= 2 * risks + 1e-12)  # per example, hence in expectation
    cert = certify_dirichlet(alpha, H, y)
    assert cert.majority_vote_risk <= mean_vote_bound(cert.bounds["dirichlet_seeger"]) + 1e-12


def test_gradients_are_finite_at_the_edges_and_match_finite_differences():
    H, y = problem(7)

    def bound(log_alpha):
        s = stochastic_statistics(H, y, jnp.exp(log_alpha), 1.0)
        return STOCHASTIC_BOUNDS["dirichlet_seeger"].value(None, s, DELTA, jnp.nan)

    grad = jax.jit(jax.grad(bound))
    for scale in (-7.0, 0.0, 7.0):  # alpha ~ 1e-3, 1, 1e3
        log_alpha = scale + np.random.default_rng(8).normal(0, 0.5, 2 * N)
        g = np.asarray(grad(log_alpha))
        assert np.isfinite(g).all()
        step = 1e-6
        fd = [(bound(log_alpha + step * e) - bound(log_alpha - step * e)) / (2 * step)
              for e in np.eye(2 * N)[:3]]  # fmt: skip
        np.testing.assert_allclose(g[:3], fd, rtol=1e-5, atol=1e-9)


# ------------------------------------------------------------------------------- learner
def fit(H, y, **kw):
    return minimize_dirichlet_bound(H, y, optimizer=OPTIMIZER, max_iter=STEPS, **kw)


def test_the_learner_lowers_the_bound_and_its_result_follows_the_protocol():
    H, y = problem(9)
    r = fit(H, y)
    at_prior = certify_dirichlet(np.ones(2 * N), H, y).bounds["dirichlet_seeger"]
    assert float(r.info.certified) < at_prior
    assert float(r.info.certified) == pytest.approx(float(r.objective), rel=1e-10)
    want = certify_dirichlet(r.info.alpha, H, y).bounds["dirichlet_seeger"]
    np.testing.assert_allclose(r.info.certified, want)
    np.testing.assert_allclose(r.q, r.info.alpha / np.sum(r.info.alpha), rtol=1e-12)
    np.testing.assert_allclose(r.weights, r.q[:N] - r.q[N:])
    assert r.q.shape == (2 * N,) and r.voters is None and int(r.steps) == STEPS
    assert isinstance(r.info, DirichletInfo) and r.info.trajectory.shape == (STEPS,)
    assert float(r.objective) <= float(np.min(r.info.trajectory)) + 1e-12  # the best is kept
    with pytest.raises(ValueError, match="certify_dirichlet"):
        certify(r, H, y)


def fit_at(H, y, delta, sample_weight, prior):
    return fit(H, y, delta=delta, sample_weight=sample_weight, prior=prior)


# One program each, shared by the two tests below (H and y are arguments, not constants): on
# M_FOLDS examples, with masks of M ones, so that the fit without jit on the sliced rows reuses
# the learner compiled for (M, N) by the tests above.
BATCHED_FIT = jax.jit(jax.vmap(fit_at, in_axes=(None, None, 0, 0, 0)))
JITTED_FIT = jax.jit(fit_at)
M_FOLDS = 3 * M // 2
FOLD_MASKS = np.stack([(np.arange(M_FOLDS) % 3 != k).astype(float) for k in range(3)])


def test_jit_no_jit_and_vmap_over_delta_and_fold_masks_agree():
    H, y = problem(10, M_FOLDS)
    deltas = np.array([0.01, 0.05, 0.2])
    batched = BATCHED_FIT(H, y, deltas, FOLD_MASKS, np.ones(3))
    for k in range(3):
        rows = FOLD_MASKS[k] > 0
        single = fit(H[rows], y[rows], delta=deltas[k])  # a 0/1 mask is slicing
        np.testing.assert_allclose(batched.info.alpha[k], single.info.alpha, rtol=1e-9)
        np.testing.assert_allclose(batched.objective[k], single.objective, rtol=1e-10)
        np.testing.assert_allclose(batched.info.certified[k], single.info.certified, rtol=1e-10)
        one = JITTED_FIT(H, y, deltas[k], FOLD_MASKS[k], 1.0)
        np.testing.assert_allclose(one.info.alpha, single.info.alpha, rtol=1e-9)


def test_vmap_over_the_prior_concentration_and_monte_carlo_risk():
    H, y = problem(11, M_FOLDS)
    priors = np.array([0.5, 1.0, 4.0])
    masks = np.repeat(FOLD_MASKS[:1], 3, axis=0)
    batched = BATCHED_FIT(H, y, np.full(3, DELTA), masks, priors)
    H, y = H[masks[0] > 0], y[masks[0] > 0]  # (M, N): the learner compiled above
    for k, b in enumerate(priors):
        np.testing.assert_allclose(batched.objective[k], fit(H, y, prior=b).objective, rtol=1e-10)
    mc = fit(H, y, risk="monte_carlo", key=jax.random.key(3), num_samples=4)
    assert np.isfinite(mc.info.trajectory).all() and np.isfinite(float(mc.info.certified))
    want = certify_dirichlet(mc.info.alpha, H, y).bounds["dirichlet_seeger"]
    np.testing.assert_allclose(mc.info.certified, want)  # the certificate is exact anyway


def test_float32_in_float32_out():
    H, y = problem(12)
    r = fit(H.astype(np.float32), y.astype(np.float32))
    assert r.q.dtype == np.float32 and r.info.alpha.dtype == np.float32
    assert r.objective.dtype == np.float32 and r.info.trajectory.dtype == np.float32
    assert r.info.certified.dtype == np.float64  # the concrete certificate
    ref = fit(H, y)
    np.testing.assert_allclose(r.info.certified, ref.info.certified, rtol=1e-3)


def test_keep_best_returns_the_smallest_value_met():
    def loss(x, t):
        value = jnp.sum((x - 3.0) ** 2)
        return value, value

    x, values, best = run_optimizer(loss, jnp.zeros(2), optax.sgd(1.1), 10, keep_best=True)
    assert float(best) == pytest.approx(min(float(np.min(values)), float(loss(x, 0)[0])))
    assert float(loss(x, 0)[0]) == pytest.approx(float(best))


# ----------------------------------------------------------------------- registry, inputs
def test_the_stochastic_bounds_are_registered_apart():
    assert set(STOCHASTIC_BOUNDS) >= {"dirichlet_seeger", "dirichlet_mcallester"}
    assert not set(STOCHASTIC_BOUNDS) & set(BOUNDS)
    assert all(spec.family == "dirichlet" for spec in STOCHASTIC_BOUNDS.values())
    H, y = problem(13)
    with pytest.raises(ValueError, match="certify_dirichlet"):
        certify(np.full(2 * N, 1 / (2 * N)), H, y, bounds=["dirichlet_seeger"])


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(alpha=np.r_[0.0, np.ones(2 * N - 1)]), "> 0"),
        (dict(alpha=np.r_[np.inf, np.ones(2 * N - 1)]), "NaN or inf"),
        (dict(alpha=np.ones(N + 1)), "shape"),
        (dict(prior=np.nan), "NaN or inf"),
        (dict(prior=-1.0), "> 0"),
        (dict(prior=np.ones(3)), "shape"),
        (dict(y=np.r_[np.zeros(1), np.ones(M - 1)]), "-1 or \\+1"),
        (dict(H=np.full((M, N), 0.5)), "binary"),
        (dict(delta=0.0), "delta"),
        (dict(sample_weight=np.full(M, 0.5)), "0/1 mask"),
        (dict(bounds=["seeger"]), "name each bound"),
    ],
)
def test_certify_dirichlet_refuses_bad_input(change, message):
    H, y = problem(14)
    args = dict(alpha=np.ones(2 * N), H=H, y=y) | change
    alpha, H, y = args.pop("alpha"), args.pop("H"), args.pop("y")
    with pytest.raises(ValueError, match=message):
        certify_dirichlet(alpha, H, y, **args)


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(prior=0.0), "> 0"),
        (dict(prior=np.r_[np.nan, np.ones(2 * N - 1)]), "NaN or inf"),
        (dict(prior=np.ones(N)), "one per column"),
        (dict(y=np.r_[2.0, np.ones(M - 1)]), "-1 or \\+1"),
        (dict(H=np.zeros((M, N))), "binary"),
        (dict(bound="catoni"), "unknown stochastic bound"),
        (dict(risk="sampled"), "risk must be"),
        (dict(delta=1.5), "delta"),
        (dict(max_iter=0), "max_iter"),
    ],
)
def test_the_learner_refuses_bad_input(change, message):
    H, y = problem(15)
    args = dict(H=H, y=y) | change
    H, y = args.pop("H"), args.pop("y")
    with pytest.raises(ValueError, match=message):
        minimize_dirichlet_bound(H, y, **args)
