"""Direct bound minimization: certificates vs independent NumPy recomputation, optimality on a
tiny problem against SciPy, edges, minibatches, vmap / grad, Gaussian-mixture posteriors."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from scipy.optimize import minimize
from scipy.special import erf, ndtr

from pacbound._src.solvers.direct import minimize_bound
from pacbound._src.solvers.gaussian_mixture import (
    minimize_mixture_bound,
    mixture_predict,
    mixture_votes,
)
from pacbound._src.solvers.mincq import mincq
from pacbound.certify import Bound, certify
from tests.reference import bounds_numpy as R

OPT = optax.adam(0.05)  # one optimizer object: calls with equal shapes share a compilation
STEPS, DELTA = 200, 0.05
GRID = np.geomspace(0.1, 10.0, 8)
NAME = lambda case: getattr(case, "name", case)  # noqa: E731  (test ids)


def voters(m=200, n=6, seed=0, best=0.85):
    """±1 voters of accuracies from 0.55 to ``best`` and labels, float64."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], m)
    right = rng.random((m, n)) < np.linspace(0.55, best, n)
    return np.where(right, y[:, None], -y[:, None]), y


def pairs(H):
    return np.concatenate([H, -H], axis=1)


def reference_bound(bound, H, y, q, prior, delta=DELTA):
    """The bound at ``q`` over the columns of ``H``, from tests/reference only."""
    m = H.shape[0]
    mu1, mu2 = R.moments(H, y, q)
    kl = R.kl_divergence(q, prior)
    gibbs, dis = (1 - mu1) / 2, (1 - mu2) / 2
    k = len(GRID)
    if isinstance(bound, Bound) and bound.name == "catoni":
        return min(2 * R.catoni(gibbs, kl, m, delta / k, c) for c in GRID)
    if isinstance(bound, Bound):  # general loss
        margins = y * (H @ q)
        g = float(bound.gamma)
        loss, consts = {
            "exponential": (np.exp(-margins / g), R.exponential_loss_constants(g)),
            "quadratic": ((margins / g - 1) ** 2, R.quadratic_loss_constants(g)),
        }[bound.loss]
        return min(R.general_loss(loss.mean(), kl, m, delta / k, c, *consts) for c in GRID)
    return {
        "seeger": lambda: 2 * R.seeger(gibbs, kl, m, delta),
        "pac_bound_0": lambda: R.pac_bound_0(gibbs, kl, m, delta),
        "cbound_roy2016": lambda: R.cbound_roy2016(mu1, mu2, kl, m, delta),
        "pac_bound_1": lambda: R.pac_bound_1(gibbs, dis, kl, m, delta),
        "pac_bound_2": lambda: R.pac_bound_2(gibbs, dis, kl, m, delta),
        "cbound_quasi_uniform": lambda: R.cbound_quasi_uniform(mu1, mu2, m, delta),
    }[bound]()


SLOW = pytest.mark.slow  # the same code paths as a fast case; one more compilation each
# PAC-Bound 2 over the quasi-uniform family: the family is cbound_quasi_uniform's case, the
# bound's value and gradients are test_certify's and test_bounds' (~20 s to compile here)
THOROUGH = pytest.mark.thorough
CASES = [
    ("seeger", "softmax"),
    pytest.param("pac_bound_0", "softmax", marks=SLOW),
    (Bound.catoni(GRID), "softmax"),
    (Bound.general_loss("exponential", 0.5, GRID), "softmax"),
    pytest.param(Bound.general_loss("quadratic", 0.8, GRID), "softmax", marks=SLOW),
    ("cbound_roy2016", "softmax"),
    ("pac_bound_1", "softmax"),
    pytest.param("pac_bound_2", "softmax", marks=SLOW),
    pytest.param("pac_bound_2", "quasi_uniform", marks=THOROUGH),
    ("cbound_quasi_uniform", "quasi_uniform"),
]


@pytest.mark.parametrize(("bound", "posterior"), CASES, ids=NAME)
def test_certified_equals_independent_recomputation(bound, posterior):
    H, y = voters()
    Hs = pairs(H)
    res = minimize_bound(
        H, y, bound, posterior=posterior, optimizer=OPT, max_iter=STEPS, delta=DELTA
    )  # over [H, -H] whatever the posterior family
    q = np.asarray(res.q)
    assert q.shape == (12,) and np.isclose(q.sum(), 1) and (q >= 0).all()
    np.testing.assert_allclose(res.weights, q[:6] - q[6:], atol=1e-15)
    if posterior == "quasi_uniform":
        np.testing.assert_allclose(q[:6] + q[6:], 1 / 6, atol=1e-12)
    expected = reference_bound(bound, Hs, y, q, np.full(12, 1 / 12))
    np.testing.assert_allclose(res.info.certified, min(expected, 1.0), rtol=1e-7, atol=1e-9)
    stats = certify(res, H, y, bounds=["seeger"]).statistics
    np.testing.assert_allclose((stats.mu1, stats.mu2), R.moments(Hs, y, q), atol=1e-12)
    np.testing.assert_allclose(res.info.majority_vote_risk, R.mv_risk(Hs, y, q))
    assert R.mv_risk(Hs, y, q) <= res.info.certified <= 1.0  # clipped: Thm 3.2 is loose here
    trajectory = res.info.trajectory
    assert np.isfinite(trajectory).all() and trajectory[-1] < trajectory[0]


@THOROUGH  # both bounds on a quasi-uniform posterior: test_certify's quasi-uniform test
def test_certify_of_mincq_equals_independent_recomputation():
    H, y = voters()
    Hs = pairs(H)
    q = np.asarray(mincq(H, y, 0.3).q)
    for bound in ("seeger", "cbound_quasi_uniform"):
        res = certify(q, H, y, bounds=[bound], delta=DELTA)
        expected = reference_bound(bound, Hs, y, q, np.full(12, 1 / 12))
        np.testing.assert_allclose(res.bounds[bound], expected, rtol=1e-7)
    with pytest.raises(ValueError, match="quasi-uniform"):
        certify(np.eye(12)[0], H, y, bounds=["cbound_quasi_uniform"])


def test_seeger_reaches_the_scipy_optimum():
    H, y = voters(m=40, n=5, seed=1, best=0.7)
    m, n = H.shape[0], 2 * H.shape[1]  # the posterior is over [H, -H]
    Hs = pairs(H)

    def f(q):
        q = np.clip(q, 0, None) / np.clip(q, 0, None).sum()
        mu1, _ = R.moments(Hs, y, q)
        return 2 * R.seeger((1 - mu1) / 2, R.kl_divergence(q, np.full(n, 1 / n)), m, DELTA)

    best = min(
        minimize(f, q0, method="SLSQP", bounds=[(0, 1)] * n, options={"ftol": 1e-14},
                 constraints={"type": "eq", "fun": lambda q: q.sum() - 1}).fun
        for q0 in (np.full(n, 1 / n), np.eye(n)[-1] * 0.6 + 0.08)
    )  # fmt: skip
    res = minimize_bound(H, y, "seeger", optimizer=optax.lbfgs(), max_iter=50)
    np.testing.assert_allclose(res.objective, best, rtol=1e-8)  # the unclipped bound: 1.216
    assert res.info.certified == min(best, 1.0)  # certificates are clipped at 1
    assert 0.01 < np.asarray(res.q).max() < 0.99  # an interior optimum, not a vertex


@pytest.mark.parametrize("bound", ["seeger", "pac_bound_1", Bound.catoni(GRID)], ids=NAME)
def test_no_nan_when_q_concentrates_on_a_perfect_voter_or_risk_is_zero(bound):
    H, y = voters()
    H[:, 0] = y  # a perfect voter: Q concentrates on it
    for H_case in (H, np.tile(y[:, None], (1, 6))):  # ... and every voter perfect
        res = minimize_bound(H_case, y, bound, optimizer=OPT, max_iter=STEPS, delta=DELTA)
        res = res._replace(info=res.info._replace(c=0.0))  # c is nan off the grid
        for leaf in jax.tree_util.tree_leaves(res):
            assert not np.isnan(np.asarray(leaf)).any()
        assert res.info.majority_vote_risk == 0 and 0 < res.info.certified < 0.3
    prior = np.r_[1 - 11e-9, np.full(11, 1e-9)]  # a prior nearly a point mass
    res = minimize_bound(H, y, bound, optimizer=OPT, max_iter=STEPS, prior=prior)
    assert np.isfinite(res.info.certified) and np.isfinite(res.q).all()


def test_minibatches_estimate_then_certify_on_the_whole_sample_in_float32():
    H, y = voters()
    Hs = pairs(H)
    full = minimize_bound(H, y, "seeger", optimizer=OPT, max_iter=STEPS)
    H32, y32 = H.astype(np.float32), y.astype(np.float32)
    res = minimize_bound(H32, y32, "seeger", optimizer=OPT, max_iter=STEPS, batch_size=64)
    assert res.q.dtype == res.info.trajectory.dtype == jnp.float32
    assert res.info.certified.dtype == np.float64  # certificates are float64 at the boundary
    q = np.asarray(res.q, np.float64)
    expected = reference_bound("seeger", Hs, y, q / q.sum(), np.full(12, 1 / 12))
    np.testing.assert_allclose(res.info.certified, expected, rtol=1e-9)
    assert np.isfinite(res.info.trajectory).all()
    assert abs(float(res.info.certified) - float(full.info.certified)) < 0.02


def test_integer_weights_are_repetitions_and_masks_are_folds():
    """The objective reads ``sample_weight`` as repetitions (``m = sum v``); 0/1 weights are
    the fold, certificate included; a weighted certificate counts each example once."""
    H, y = voters(m=40)
    v = np.random.default_rng(1).integers(0, 3, 40).astype(float)
    rep, keep = np.repeat(np.arange(40), v.astype(int)), v > 0

    def fit(H, y, w=None):
        return minimize_bound(H, y, "seeger", optimizer=OPT, max_iter=50, sample_weight=w)

    weighted, repeated = fit(H, y, v), fit(H[rep], y[rep])
    np.testing.assert_allclose(weighted.q, repeated.q, rtol=1e-10, atol=1e-13)
    masked, sliced = fit(H, y, 1.0 * keep), fit(H[keep], y[keep])
    np.testing.assert_allclose(masked.q, sliced.q, rtol=1e-10, atol=1e-13)
    assert float(masked.info.certified) == pytest.approx(float(sliced.info.certified), rel=1e-10)
    once = certify(weighted.q, H[keep], y[keep], bounds=["seeger"], delta=DELTA)
    assert float(weighted.info.certified) == pytest.approx(float(once.bounds["seeger"]), rel=1e-10)


def test_vmap_over_delta_prior_and_seeds_equals_a_loop():
    H, y = voters()
    H, y = H.astype(np.float32), y.astype(np.float32)
    deltas = jnp.array([0.01, 0.05, 0.2], jnp.float32)
    priors = jnp.asarray(np.random.default_rng(3).dirichlet(np.ones(12), 3), jnp.float32)
    keys = jax.random.split(jax.random.key(1), 3)

    def run(delta, prior, key):
        res = minimize_bound(
            H, y, "seeger", optimizer=OPT, max_iter=STEPS, delta=delta, prior=prior, key=key,
            batch_size=64,
        )  # fmt: skip
        return res.info.certified, res.q

    got = jax.vmap(run)(deltas, priors, keys)
    for i in range(3):
        want = run(deltas[i], priors[i], keys[i])
        np.testing.assert_allclose(got[0][i], want[0], rtol=1e-5)
        np.testing.assert_allclose(got[1][i], want[1], rtol=1e-4, atol=1e-6)


def test_grad_of_certified_bound_wrt_delta_matches_finite_differences():
    """The certificate a minimization returns is differentiable in ``delta`` (through the
    kl-inverse's implicit derivative); each bound's own derivative in ``delta`` against finite
    differences is test_bounds'. Seeger's bound: its forward program is the seeger case's above."""
    H, y = voters()

    def certified(delta):
        return minimize_bound(
            H, y, "seeger", optimizer=OPT, max_iter=STEPS, delta=delta
        ).info.certified

    g = jax.grad(certified)(0.05)
    h = 1e-5
    fd = (certified(0.05 + h) - certified(0.05 - h)) / (2 * h)
    assert np.isfinite(g) and g < 0
    np.testing.assert_allclose(g, fd, rtol=1e-4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"y": np.r_[np.ones(199), 0.0]}, "labels must be -1 or \\+1"),
        ({"delta": 0.0}, "delta must be finite and lie in \\(0, 1\\]"),
        ({"delta": 1.5}, "delta must be finite and lie in \\(0, 1\\]"),
        ({"max_iter": 0}, "max_iter must be"),
        ({"H": np.full((200, 6), np.nan)}, "NaN or inf"),
        ({"H": np.full((200, 6), 2.0)}, "\\[-1, 1\\]"),
        ({"H": np.ones(200)}, "2-D"),
        ({"bound": "nope"}, "unknown bound"),
        ({"bound": "cbound_quasi_uniform"}, "quasi_uniform"),
        ({"posterior": "dirichlet"}, "posterior must be"),
        ({"prior": np.ones(6) / 6}, "prior must have shape"),
        ({"prior": np.r_[0.0, np.ones(11) / 11]}, "positive masses"),
        ({"sample_weight": -np.ones(200)}, "sample_weight"),
        ({"batch_size": 0}, "batch_size"),
        ({"bound": Bound("general_loss", "cubic", 1.0, GRID)}, "loss in"),
    ],
)
def test_invalid_inputs_are_refused(kwargs, message):
    H, y = voters()
    args = {"bound": "seeger", "H": H, "y": y, **kwargs}
    with pytest.raises(ValueError, match=message):
        minimize_bound(args.pop("H"), args.pop("y"), args.pop("bound"), **args)


# ------------------------------------------------------------------ Gaussian mixtures
def gaussian_problem(m=300, seed=0):
    """Two Gaussian blobs, features of varied norms plus a constant column."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], m)
    X = rng.normal(size=(m, 2)) + 1.5 * y[:, None] * np.array([1.0, 0.5])
    return np.c_[X, np.ones(m)], y


def reference_votes(W, q, Phi, voters):
    a, s = Phi @ W.T, np.linalg.norm(Phi, axis=1)[:, None]
    if voters == "classifier":
        return erf(a / (np.sqrt(2) * s)) @ q
    lo, hi = (-1 - a) / s, (1 - a) / s
    pdf = np.exp(-(lo**2) / 2) / np.sqrt(2 * np.pi), np.exp(-(hi**2) / 2) / np.sqrt(2 * np.pi)
    return (ndtr(-hi) - ndtr(lo) + a * (ndtr(hi) - ndtr(lo)) + s * (pdf[0] - pdf[1])) @ q


@pytest.mark.parametrize("voters_kind", ["classifier", "linear"])
def test_mixture_votes_equal_the_gaussian_expectation_by_monte_carlo(voters_kind):
    rng = np.random.default_rng(0)
    Phi, W, q = (
        rng.normal(size=(5, 3)) * [[0.2], [1], [3], [0.5], [2]],
        rng.normal(size=(2, 3)),
        np.r_[0.3, 0.7],
    )
    v = W[:, None, :] + rng.normal(size=(2, 200_000, 3))  # v ~ N(w_i, I)
    out = np.einsum("ksd,md->kms", v, Phi)
    h = np.sign(out) if voters_kind == "classifier" else np.clip(out, -1, 1)
    mc = q @ h.mean(axis=2)
    got = mixture_votes(W, q, Phi, voters_kind)
    np.testing.assert_allclose(got, mc, atol=6e-3)
    np.testing.assert_allclose(got, reference_votes(W, q, Phi, voters_kind), atol=1e-12)


@pytest.mark.parametrize("voters_kind", ["classifier", "linear"])
def test_mixture_certificate_equals_independent_recomputation(voters_kind):
    Phi, y = gaussian_problem()
    res = minimize_mixture_bound(
        Phi, y, "cbound_roy2016", 4, voters=voters_kind, optimizer=OPT, max_iter=STEPS
    )
    W, q = np.asarray(res.info.centers), np.asarray(res.weights)
    margins = y * reference_votes(W, q, Phi, voters_kind)
    mu1, mu2 = margins.mean(), (margins**2).mean()
    kl = 0.5 * sum(q[i] * W[i] @ W[i] for i in range(4))
    expected = R.cbound_roy2016(mu1, mu2, kl, len(y), DELTA)
    np.testing.assert_allclose(res.info.certified, expected, rtol=1e-7)
    np.testing.assert_allclose(res.info.kl, kl, rtol=1e-12)
    mv = np.mean(margins <= 0)
    assert mv <= res.info.certified < 0.8 and np.isfinite(res.info.trajectory).all()
    with pytest.raises(ValueError, match="Gaussian mixture"):
        certify(res, Phi, y)
    assert np.mean(np.asarray(mixture_predict(W, q, Phi, voters_kind)) != y) == pytest.approx(mv)


def mixture_certified(delta, center):
    Phi, y = gaussian_problem()
    return minimize_mixture_bound(
        Phi, y, "cbound_roy2016", 4, optimizer=OPT, max_iter=STEPS, delta=delta,
        prior_center=center,
    ).info.certified  # fmt: skip


def test_mixture_vmaps_over_delta_and_prior_center():
    deltas, centers = jnp.array([0.01, 0.1]), jnp.array([[0.0, 0, 0], [1.0, 0.5, 0]])
    values = jax.vmap(mixture_certified)(deltas, centers)
    for i in range(2):
        np.testing.assert_allclose(values[i], mixture_certified(deltas[i], centers[i]), rtol=1e-9)


@pytest.mark.slow
def test_mixture_grad_of_certified_bound_matches_finite_differences():
    center = jnp.array([0.1, 0.0, 0.0])
    g_delta, g_center = jax.grad(mixture_certified, argnums=(0, 1))(0.05, center)
    h = 1e-6
    fd = (mixture_certified(0.05 + h, center) - mixture_certified(0.05 - h, center)) / (2 * h)
    np.testing.assert_allclose(g_delta, fd, rtol=1e-4)
    assert np.isfinite(g_center).all()
