"""PAC-Bayes-Unexpected-Bernstein (``pbub``, Mhammedi et al. NeurIPS 2019 Thm 1) and CCPBUB
(``ccpbub``, Wu et al. NeurIPS 2021): the mpmath reference of the papers' formulas
(tests/reference/unexpected_bernstein_mpmath.py) to 1e-9 in float64 and 1e-5 in float32, never
above the certified value; jit == no-jit == vmap; gradients against finite differences and
finite at the edges; the theory's inequalities; the registry; the authors' code's formula."""

import math

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from hypothesis import Phase, given, settings

from pacbound import bounds
from pacbound._src.certify import as_bound, vote_statistics
from pacbound.certify import BOUNDS, DEFAULT_BOUNDS, certify
from tests.reference import unexpected_bernstein_mpmath as R
from tests.reference.strategies import Draws, seeds

N = 30  # draws per hypothesis example, one compiled call per bound and dtype
EXAMPLES = 3
PHASES = (Phase.explicit, Phase.generate)  # no shrinking: the failure message names the draw
TOLERANCE = {np.float32: 1e-5, np.float64: 1e-9}  # relative to max(1, |exact|)


def _pbub_draws(seed):
    d = Draws(seed, N)
    b = d.floats(0.1, 10.0, log=True)
    return {
        "loss": b * d.floats(-1.0, 1.0),
        "second_moment": b**2 * d.floats(0.0, 1.0) ** 2,
        "kl": d.floats(0.0, 20.0) * d.floats(0.0, 1.0) ** 2,
        "n": d.sizes(1, 10**9),
        "delta": d.floats(1e-6, 1.0, log=True),
        "b": b,
    }


def _ccpbub_draws(seed):
    """Binary-vote statistics: Gibbs risk g, joint error e in [g^2, g], mu in [-1/2, 0.49]."""
    d = Draws(seed, N)
    g = d.floats(0.0, 0.5)
    return {
        "g": g,
        "e": g * g + d.floats(0.0, 1.0) * (g - g * g),
        "kl": d.floats(0.0, 20.0) * d.floats(0.0, 1.0) ** 2,
        "n2": d.sizes(1, 10**9),
        "delta": d.floats(1e-6, 1.0, log=True),
        "mu": d.floats(-0.5, 0.49),
        "n_mu": np.where(d.floats(0.0, 1.0) < 0.5, 1, 20),
    }


def _mu_tandem(e, g, mu):
    """The mu-tandem risk and second moment of binary votes (the docstring of ``ccpbub``)."""
    risk = e - 2 * mu * g + mu**2
    second = (1 - 2 * mu) ** 2 * e + 2 * mu**2 * (1 - 2 * mu) * g + mu**4
    return risk, second


def _cast(s, dtype):
    return {k: (v if k in ("n", "n2", "n_mu") else np.asarray(v, dtype)) for k, v in s.items()}


def _compare(ours, exact, dtype, scale=1.0):
    """``ours >= exact`` everywhere and within the tolerance (times ``scale``) of it."""
    exact = np.array([float(x) for x in exact])  # rounded to nearest: within 1e-16 relative
    ours = np.asarray(ours, np.float64)
    magnitude = np.maximum(np.abs(exact), 1.0)
    below = exact - ours - 1e-15 * magnitude
    assert np.all(below <= 0), (dtype, float(below.max()), int(np.argmax(below)))
    above = (ours - exact) / magnitude
    assert np.all(above <= TOLERANCE[dtype] * scale), (dtype, float(above.max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, phases=PHASES)
@given(seed=seeds())
def test_pbub_is_certified_and_matches_the_mpmath_reference(dtype, seed):
    s = _cast(_pbub_draws(seed), dtype)
    ours = bounds.pbub(s["loss"], s["second_moment"], s["kl"], s["n"], s["delta"], s["b"])
    assert ours.dtype == dtype
    keys = ("loss", "second_moment", "kl", "n", "delta", "b")
    exact = [R.pbub(*(s[k][i] for k in keys)) for i in range(N)]
    _compare(ours, exact, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, phases=PHASES)
@given(seed=seeds())
def test_ccpbub_is_certified_and_matches_the_mpmath_reference(dtype, seed):
    s = _cast(_ccpbub_draws(seed), dtype)
    risk, second = (
        np.asarray(x, dtype) for x in _mu_tandem(*(s[k].astype(float) for k in ("e", "g", "mu")))
    )
    ours = bounds.ccpbub(risk, second, s["kl"], s["n2"], s["delta"], s["mu"], s["n_mu"])
    assert ours.dtype == dtype
    exact = [
        R.ccpbub(
            risk[i], second[i], s["kl"][i], s["n2"][i], s["delta"][i], s["mu"][i], s["n_mu"][i]
        )
        for i in range(N)
    ]
    # the quotient by (1/2 - mu)^2 scales the numerator's roundings
    _compare(ours, exact, dtype, np.maximum(1.0, 0.25 / (0.5 - s["mu"].astype(float)) ** 2))


def test_the_grid_follows_the_paper_with_its_two_ends():
    """k = ceil(log2(sqrt(n / ln(1/delta)) / 2)): 4 at n = 1000, delta = 0.05 (the reference),
    at least 1 where the formula gives k <= 0 (n < 4 ln(1/delta)), capped at 64 at delta = 1;
    at n = 10, delta = 0.05 the value is that of the single point eta = 1 / (2b)."""
    assert R.grid_size(1000, 0.05) == 4 and R.grid_size(10, 0.05) == 1
    assert R.grid_size(5, 1.0) == 64
    loss, v, kl, delta, b = 0.2, 0.1, 0.5, 0.05, 1.5
    psi = -math.log(0.5) - 0.5
    one_point = loss + psi / (0.5 * b) * v + (kl + math.log(1 / delta)) * 2 * b / 10
    assert float(bounds.pbub(loss, v, kl, 10, delta, b)) == pytest.approx(one_point, rel=1e-12)
    assert np.isfinite(float(bounds.pbub(loss, v, kl, 1000, 1.0)))


def test_jit_no_jit_and_vmap_agree():
    args = (jnp.array([0.1, 0.3]), jnp.array([0.05, 0.3]), jnp.array([1.0, 4.0]), 2000, 0.05)
    mu = jnp.array([-0.3, 0.2])
    with jax.disable_jit():
        eager = bounds.pbub(*args), bounds.ccpbub(*args, mu)
    jitted = jax.jit(bounds.pbub)(*args), jax.jit(bounds.ccpbub)(*args, mu)
    mapped = (
        jax.vmap(bounds.pbub, (0, 0, 0, None, None))(*args),
        jax.vmap(bounds.ccpbub, (0, 0, 0, None, None, 0))(*args, mu),
    )
    for a, b, c in zip(eager, jitted, mapped):
        np.testing.assert_allclose(a, b, rtol=1e-14)
        np.testing.assert_allclose(a, c, rtol=1e-14)
    grid = bounds.pbub(0.1, 0.1, jnp.array([[0.0], [1.0]]), jnp.array([100, 1000, 10**6]), 0.05)
    assert grid.shape == (2, 3)


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize(
    ("fn", "args", "names"),
    [
        (bounds.pbub, (0.2, 0.15, 2.0, 3000, 0.05, 1.5), ("loss", "v", "kl", "n", "delta", "b")),
        (
            lambda *a: bounds.ccpbub(*a, clip=False),
            (0.02, 0.015, 2.0, 3000, 0.05, 0.1),
            ("risk", "v", "kl", "n2", "delta", "mu"),
        ),
    ],
    ids=["pbub", "ccpbub"],
)
def test_gradients_match_finite_differences(fn, args, names):
    float_args = [i for i, name in enumerate(names) if name not in ("n", "n2")]
    grads = jax.grad(fn, float_args)(*(jnp.float64(a) for a in args))
    for i, g in zip(float_args, grads):

        def along(x, i=i):
            return float(fn(*(x if j == i else a for j, a in enumerate(args))))

        np.testing.assert_allclose(float(g), _central(along, args[i]), rtol=1e-5, atol=1e-9)


_GRAD_PBUB = jax.jit(jax.grad(bounds.pbub, (0, 1, 2, 4)))
_GRAD_CCPBUB = jax.jit(jax.grad(lambda *a: bounds.ccpbub(*a, clip=False), (0, 1, 2, 4, 5)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_are_finite_at_the_edges(dtype):
    f = dtype
    edges = [(0.0, 0.0, 0.0, 1, 1.0), (1.0, 1.0, 50.0, 10**9, 1e-12), (0.0, 0.0, 0.0, 10**9, 1.0)]
    for loss, v, kl, n, delta in edges:
        g = _GRAD_PBUB(f(loss), f(v), f(kl), n, f(delta))
        assert all(np.isfinite(x) for x in g), (loss, v, kl, n, delta)
        for mu in (-0.5, 0.0, 0.49):
            g = _GRAD_CCPBUB(f(loss * 0.25), f(v * 0.25), f(kl), n, f(delta), f(mu))
            assert all(np.isfinite(x) for x in g), (loss, v, kl, n, delta, mu)


def test_out_of_domain_is_refused_naming_the_argument():
    with pytest.raises(ValueError, match=r"^pbub: b must lie in"):
        bounds.pbub(0.1, 0.1, 1.0, 100, 0.05, 0.0)
    with pytest.raises(ValueError, match=r"^ccpbub: mu must lie in"):
        bounds.ccpbub(0.1, 0.1, 1.0, 100, 0.05, 0.5)
    with pytest.raises(ValueError, match=r"^ccpbub: mu_tandem_second_moment must lie in"):
        bounds.ccpbub(0.1, jnp.array([0.1, np.nan]), 1.0, 100, 0.05, 0.0)


def test_the_theorys_inequalities():
    # the elementary inequality under the theorem (xi = -X / b >= -1, lambda = eta b < 1):
    # exp(lambda xi - psi(lambda) xi^2) <= 1 + lambda xi
    lam, xi = np.linspace(0, 0.999, 200)[:, None], np.linspace(-1, 50, 2000)[None, :]
    psi = -np.log1p(-lam) - lam
    assert np.all(lam * xi - psi * xi**2 <= np.log1p(lam * xi) + 1e-12)
    rng = np.random.default_rng(3)
    loss, v = rng.uniform(0, 1, 50), rng.uniform(0, 1, 50)
    kl, n, delta = rng.uniform(0, 5, 50), rng.integers(1, 10**6, 50), rng.uniform(1e-4, 1, 50)
    value = np.asarray(bounds.pbub(loss, v, kl, n, delta))
    assert np.all(value >= np.minimum(loss, 1.0))  # never below the empirical loss
    assert np.all(np.asarray(bounds.pbub(loss, v + 0.1, kl, n, delta)) >= value)  # up in V
    assert np.all(np.asarray(bounds.pbub(loss, v, kl + 0.1, n, delta)) >= value)  # up in KL
    # ccpbub at a fixed mu is pbub on the mu-tandem loss (b = (1 - mu)^2, 2 KL, n2) over
    # (1/2 - mu)^2: the two public functions agree to b's roundings
    for mu in (-0.4, 0.0, 0.25):
        e, g = 0.03, 0.15
        risk, second = _mu_tandem(e, g, mu)
        numerator = bounds.pbub(risk, second, 2 * 1.5, 5000, 0.05, (1 - mu) ** 2)
        direct = float(numerator) / (0.5 - mu) ** 2
        ours = float(bounds.ccpbub(risk, second, 1.5, 5000, 0.05, mu, clip=False))
        assert ours == pytest.approx(direct, rel=1e-12)
        assert ours >= risk / (0.5 - mu) ** 2  # above the empirical Chebyshev-Cantelli value
    # a grid of n_mu values of mu costs delta / n_mu
    assert float(bounds.ccpbub(0.02, 0.015, 1.0, 5000, 0.05, 0.1, 20)) == pytest.approx(
        float(bounds.ccpbub(0.02, 0.015, 1.0, 5000, 0.05 / 20, 0.1)), rel=1e-12
    )


def _pair_second_moment(H, y, q, mu):
    """E_{q^2} E_S[L_mu(h, h')^2] by brute force over pairs, with l = (1 - y h) / 2."""
    losses = (1 - y[:, None] * H) / 2
    centred = (losses - mu) ** 2  # (m, voters)
    return float(np.einsum("j,k,ij,ik->", q, q, centred, centred) / len(y))


def test_the_second_moment_from_the_margins():
    """Exact for ±1 voters, an upper bound for voters in [-1, 1] (l^2 <= l)."""
    rng = np.random.default_rng(0)
    y = np.sign(rng.standard_normal(300))
    q = rng.dirichlet(np.ones(6))
    for H, exact in (
        (np.sign(rng.standard_normal((300, 6))), True),
        (rng.uniform(-1, 1, (300, 6)), False),
    ):
        margins = jnp.asarray(y * (H @ q))
        s = vote_statistics(as_bound("ccpbub"), margins, jnp.float64(0.0), 300)
        for mu in (-0.5, -0.1, 0.0, 0.3, 0.49):
            ours, brute = float(s.mu_tandem_second_moment(mu)), _pair_second_moment(H, y, q, mu)
            if exact:
                assert ours == pytest.approx(brute, rel=1e-10)
            else:
                assert ours >= brute - 1e-12


def _votes(m=3000, voters=7, error=0.15, seed=0):
    rng = np.random.default_rng(seed)
    y = np.sign(rng.standard_normal(m))
    H = y[:, None] * np.where(rng.random((m, voters)) < error, -1.0, 1.0)
    return H, y, np.ones(voters) / voters


def test_registered_and_certified_as_the_reference_computes():
    H, y, q = _votes()
    cert = certify(q, H, y, bounds=["pbub", "ccpbub"], delta=0.05)
    s = cert.statistics
    r, e, kl, m = (float(x) for x in (s.gibbs_risk, s.joint_error, s.kl, s.m))
    assert float(cert.bounds["pbub"]) == pytest.approx(
        min(1.0, 2 * float(R.pbub(r, r, kl, m, 0.05))), rel=1e-9
    )
    grid = np.asarray(as_bound("ccpbub").c_grid)  # -0.50, -0.45, ..., 0.45: delta / 20 each
    values = [float(R.ccpbub(*_mu_tandem(e, r, mu), kl, m, 0.05 / len(grid), mu)) for mu in grid]
    assert float(cert.bounds["ccpbub"]) == pytest.approx(min(values), rel=1e-9)
    assert float(cert.c["ccpbub"]) == pytest.approx(grid[int(np.argmin(values))])
    assert float(cert.bounds["ccpbub"]) >= float(cert.majority_vote_risk)
    assert not {"pbub", "ccpbub"} & set(DEFAULT_BOUNDS)  # compile time: asked for by name
    assert BOUNDS["ccpbub"].grid and BOUNDS["ccpbub"].grid_scale == "linear"


def _authors_pbub_opt(risk, second, n2, kl, mu, delta):
    """The authors' code (MajorityVoteBounds, mvb/bounds/ccpbub.py, ``_PBUB_opt``), in our own
    words: with b = (1 - mu)^2, the coefficient (-g b - ln(1 - g b)) / (g b^2) of the second
    moment, k = ceil(log(sqrt(n2 / ln(1/delta)) / 2) / log 2), the complexity (2 KL +
    ln(k / delta)) / n2, the smallest of risk + coefficient * second + complexity / g over
    g = 1 / (2^(i+1) b), i = 0 .. k - 1; CCPBUB is that over (1/2 - mu)^2, at most 1."""
    b = (1 - mu) ** 2
    k = math.ceil(math.log(math.sqrt(n2 / math.log(1 / delta)) / 2) / math.log(2))
    comp = (2 * kl + math.log(k / delta)) / n2
    best = math.inf
    for i in range(k):
        g = 1 / (2 ** (i + 1) * b)
        coefficient = (-g * b - math.log(1 - g * b)) / (g * b**2)
        best = min(best, risk + coefficient * second + comp / g)
    return min(1.0, best / (0.5 - mu) ** 2)


def test_agrees_with_the_authors_code_where_it_is_defined():
    """The authors' grid is the paper's ({1 / (2^i b) : i = 1..k}, the same k): on the same
    inputs the two agree to rounding. Where they differ, the paper is followed:

    * ``k <= 0`` (``n2 < 4 ln(1/delta)``): their grid is empty and ``ln(k / delta)`` undefined;
      k = 1 here (one point is a valid union bound).
    * their ``CCPBUB(..)`` without an optimizer evaluates one fixed ``gamma = 0.5`` while paying
      ``ln(k / delta)`` for the whole grid (valid, since 0.5 is the grid's first point at mu = 0,
      but not its minimum; off the grid for mu != 0, and undefined for ``mu <= 1 - sqrt 2``,
      where ``gamma b >= 1``); the grid minimum is what Theorem 1 allows, and it is below.
    * ``optimizeCCPBUB`` picks mu among 400 values of [-1/2, 1/2) with the full delta; a mu
      chosen on the data needs the union bound over the candidates (``n_mu`` here, the
      registry's ``delta / k`` over its grid), without which the minimum is not a certificate.
    """
    for mu, n2, kl in ((0.0, 1000, 1.0), (-0.3, 5000, 3.0), (0.25, 20000, 0.5), (-0.5, 300, 0.0)):
        e, g = 0.04, 0.18
        risk, second = _mu_tandem(e, g, mu)
        theirs = _authors_pbub_opt(risk, second, n2, kl, mu, 0.05)
        ours = float(bounds.ccpbub(risk, second, kl, n2, 0.05, mu))
        assert ours == pytest.approx(theirs, rel=1e-9), mu
    risk, second = _mu_tandem(0.04, 0.18, 0.0)  # their fixed gamma = 0.5 at mu = 0 (b = 1)
    for n2 in (1000, 20000):
        k = math.ceil(math.log2(math.sqrt(n2 / math.log(20)) / 2))
        complexity = (2.0 + math.log(k / 0.05)) / n2 / 0.5
        fixed = (risk + (-0.5 - math.log(0.5)) / 0.5 * second + complexity) / 0.25
        ours = float(bounds.ccpbub(risk, second, 1.0, n2, 0.05, 0.0))
        assert ours <= fixed * (1 + 1e-12)  # equal at n2 = 1000: the first point is the best
    assert ours < 0.9 * fixed  # at n2 = 20000 a smaller eta of the grid is much better


def test_minimize_bound_descends_ccpbub():
    from pacbound.solvers import minimize_bound

    H, y, _ = _votes(m=1500, voters=5, seed=1)
    result = minimize_bound(H, y, "ccpbub", max_iter=50)
    cert = certify(result, H, y, bounds=["ccpbub"])
    uniform = certify(np.ones(10) / 10, H, y, bounds=["ccpbub"])
    assert float(cert.bounds["ccpbub"]) <= float(uniform.bounds["ccpbub"]) + 1e-9


def test_the_mpmath_reference_is_the_papers_formula_at_one_point():
    """A hand evaluation at n = 1000, delta = 0.05 (k = 4), b = 1: the reference's value."""
    with mp.workdps(30):
        k = 4
        terms = [
            mp.mpf(0.1)
            + (-mp.log(1 - mp.mpf(2) ** -i) - mp.mpf(2) ** -i) * 2**i * mp.mpf(0.1)
            + (1 + mp.log(k / mp.mpf(0.05))) * 2**i / 1000
            for i in range(1, k + 1)
        ]
        assert abs(min(terms) - R.pbub(0.1, 0.1, 1.0, 1000, 0.05)) < 1e-25


def _ensemble(m=800, n=6, classes=3, seed=0):
    """Voters right with probability 0.75-0.9, else a random other class; ~40% out of bag."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, m)
    right = rng.random((m, n)) < rng.uniform(0.75, 0.9, n)
    other = (y[:, None] + rng.integers(1, classes, (m, n))) % classes
    return np.where(right, y[:, None], other).astype(np.int32), y, rng.random((m, n)) < 0.4


def test_the_ensemble_bound_on_request_matches_a_direct_computation():
    """``ccpbub`` of pacbound.ensembles: each pair's mu-tandem risk and second moment over the
    examples the pair shares out of bag (computed here from the error matrix and the mask),
    n2 = the least pair count, the best of the 40-value mu grid at delta / 40 (the reference)."""
    from pacbound._src import ensemble_bounds as EB

    predictions, y, mask = _ensemble()
    statistics = EB.ensemble_statistics(predictions, y, 3, mask=mask)
    rho = np.random.default_rng(1).dirichlet(np.ones(6))
    cert = EB.certify_ensemble(statistics, rho, bounds=["tnd", "ccpbub"])
    errors, shared = (predictions != y[:, None]).astype(float), mask.astype(float)
    pairs = shared.T @ shared
    kl, n2 = float(np.sum(rho * np.log(rho * 6))), int(pairs.min())
    values = []
    for mu in EB.MU_GRID:
        loss = shared * (errors - mu)  # (l_j - mu) where j is out of bag, else 0
        risk = rho @ ((loss.T @ loss) / pairs) @ rho
        second = rho @ (((loss**2).T @ loss**2) / pairs) @ rho
        values.append(float(R.ccpbub(risk, second, kl, n2, 0.05 / len(EB.MU_GRID), mu)))
    assert cert.bounds["ccpbub"] == pytest.approx(min(values), rel=1e-9)
    assert cert.parameters["ccpbub"] == pytest.approx(EB.MU_GRID[int(np.argmin(values))])
    assert "ccpbub" not in EB._checked_names(statistics, None)  # computed only when named
    result = EB.optimize_posterior(statistics, "ccpbub", steps=30)
    again = EB.certify_ensemble(statistics, np.asarray(result.rho, np.float64), bounds=["ccpbub"])
    uniform = EB.certify_ensemble(statistics, np.full(6, 1 / 6), bounds=["ccpbub"])
    assert again.bounds["ccpbub"] <= uniform.bounds["ccpbub"]
    assert again.bounds["ccpbub"] == pytest.approx(float(result.bound), rel=1e-4)
