"""Recursive PAC-Bayes (Wu, Zhang, Chérief-Abdellatif, Seldin, NeurIPS 2024): the bound
``recursive_pac_bayes_bound`` (its one stage: PAC-Bayes-split-kl for K values) and the learner
``recursive_pac_bayes``, against references written here (mpmath, NumPy, SciPy: nothing from
pacbound) and against the formulas of the authors' code (github:pyijiezhang/rpb,
``rpb/eval.py``: ``compute_B_1``, ``compute_E_t``, ``compute_B_t``), transcribed below.
"""

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from scipy import optimize

from pacbound import sweep
from pacbound.bounds import pac_bayes_split_kl, recursive_pac_bayes_bound, seeger
from pacbound.solvers import recursive_pac_bayes
from tests.reference.strategies import Draws, seeds


@pytest.fixture(autouse=True, scope="module")
def _mpmath_precision():
    """30 digits for this module's references (mpmath's precision is global:
    a module-level assignment would leak into, or be undone by, other modules)."""
    with mpmath.workdps(30):
        yield


PHASES = (Phase.explicit, Phase.generate)


# ------------------------------------------------------------------ independent references
def kl_mp(q, p):
    q, p = mpmath.mpf(q), mpmath.mpf(p)
    left = 0 if q == 0 else q * mpmath.log(q / p)
    right = 0 if q == 1 else (1 - q) * mpmath.log((1 - q) / (1 - p))
    return left + right


def kl_up_mp(q, eps):
    """The root of ``kl(q||p) = eps`` in ``[q, 1]`` (1 if there is none), by bisection."""
    q, eps = mpmath.mpf(q), mpmath.mpf(eps)
    if q == 1 or kl_mp(q, 1 - mpmath.mpf(10) ** -28) <= eps:
        return mpmath.mpf(1)
    lo, hi = q, mpmath.mpf(1)
    for _ in range(100):  # 2^-100: far below float64's resolution
        mid = (lo + hi) / 2
        if kl_mp(q, mid) > eps:
            hi = mid
        else:
            lo = mid
    return hi


def recursive_mp(rates, kl, n, delta, values, gamma):
    """The paper's recursion, each stage its K-valued PAC-Bayes-split-kl, in
    mpmath at the given floats (the zero-width segments cost no confidence)."""
    T = len(kl)
    B = mpmath.mpf(0)
    stages = []
    for t in range(T):
        b = [mpmath.mpf(float(x)) for x in values[t]]
        widths = [b[j] - b[j - 1] for j in range(1, len(b))]
        k = max(sum(w > 0 for w in widths), 1)
        n_t = mpmath.mpf(float(n[t]))
        eps = (
            mpmath.mpf(float(kl[t]))
            + mpmath.log(2 * k * T * mpmath.sqrt(n_t) / mpmath.mpf(float(delta)))
        ) / n_t
        E = b[0] + sum(
            w * kl_up_mp(float(r), eps) for w, r in zip(widths, rates[t], strict=True) if w > 0
        )
        B = E + mpmath.mpf(float(gamma[t])) * B if t else E
        stages.append(B)
    return stages


def _kl_sup(q, rhs):
    """The authors' ``solve_kl_sup``: ``x > q`` with ``kl(q||x) = rhs``, capped at ``1 - 1e-9``."""

    def f(x):
        return sum(a * math.log(a / b) for a, b in ((q, x), (1 - q, 1 - x)) if a > 0) - rhs

    if f(1.0 - 1e-9) <= 0.0:
        return 1.0 - 1e-9
    return optimize.brentq(f, q, 1.0 - 1e-11, xtol=1e-15, rtol=1e-15)


def authors_bound(loss_1, kl, n, T, gamma, excess, delta):
    """``compute_B_t(compute_B_1(...), [compute_E_t(...)], gamma)[-1]`` of rpb/eval.py on exact
    statistics. Their code first inverts ``kl`` at ``ln(T / delta_test) / n`` (``B_1``) and
    ``ln(K T / delta_test) / n`` (``E_t``): the Monte Carlo estimate of a network's loss from
    sampled weights. Over finite voters the expectations are exact, so that step (and its
    share of the confidence) is the identity here; the rest is their formula."""
    B = _kl_sup(loss_1, (kl[0] + math.log(2 * T * math.sqrt(n[0]) / delta)) / n[0])
    rv = np.array([-1.0, 0.0, 1.0]) if gamma == 1 else np.array([-gamma, 0.0, 1 - gamma, 1.0])
    widths = rv[1:] - rv[:-1]
    K = len(widths)
    for t in range(1, T):
        E = rv[0]
        for w, r in zip(widths, excess[t - 1], strict=True):
            level = (kl[t] + math.log(K * T * 2 * math.sqrt(n[t]) / delta)) / n[t]
            E += w * _kl_sup(r, level)
        B = B * gamma + E
    return B


# ------------------------------------------------------------------ the statistics
def _values(gamma, T):
    first = [[0.0, 0.0, 1.0, 1.0]]  # stage 1: the 0-1 loss (gamma_1 = 0)
    return np.array(first + [[-gamma, 0.0, 1.0 - gamma, 1.0]] * (T - 1))


def _stages(seed, T, gamma):
    """Rates of a consistent run: per-example Gibbs losses ``a`` (posterior) and ``b`` (prior)
    averaged into ``P(f >= 0), P(f >= 1 - gamma), P(f >= 1)``."""
    rng = np.random.default_rng(seed)
    rates = []
    for _ in range(T):
        a, b = rng.uniform(0, 0.4, 50), rng.uniform(0, 0.4, 50)
        rates.append([np.mean(1 - (1 - a) * b), np.mean(a), np.mean(a * (1 - b))])
    kl = rng.uniform(0, 5, T) * (rng.random(T) > 0.1)
    n = np.sort(rng.integers(10, 10**6, T))[::-1].astype(float)
    return np.array(rates), kl, n, np.full(T, gamma)


N = 8  # problems per hypothesis example, one call per dtype


@st.composite
def stage_draws(draw):
    """``N`` recursions of one depth ``T`` in {1, 2, 4}, gamma in {0, 1/4, 1/2, 0.9, 1}, delta
    log-uniform in ``[1e-6, 1]``, sizes up to 1e6, KL up to 5 (0 for a tenth)."""
    d = Draws(draw(seeds()), N)
    T = int(d.rng.choice([1, 2, 4]))
    gamma = float(d.rng.choice([0.0, 0.25, 0.5, 0.9, 1.0]))
    stages = [_stages(int(d.rng.integers(2**32)), T, gamma) for _ in range(N)]
    rates, kl, n, g = (np.stack(x) for x in zip(*stages, strict=True))
    values = np.broadcast_to(_values(gamma, T), (N, T, 4))
    return rates, kl, n, d.floats(1e-6, 1.0, log=True), values, g


# ------------------------------------------------------------------ the bound
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(max_examples=5, deadline=None, phases=PHASES, derandomize=True)
@given(draw=stage_draws())
def test_bound_is_certified_and_tight_against_mpmath(dtype, draw):
    """Never below the exact value at the given floats; within 1e-9 (float64) / 1e-5
    (float32) of it (the bound's scale is 1)."""
    rates, kl, n, delta, values, gamma = (np.asarray(a, dtype) for a in draw)
    got = jax.jit(recursive_pac_bayes_bound)(rates, kl, n, delta, values, gamma)
    assert got.dtype == dtype and got.shape == (N,)
    for i in range(N):
        exact = recursive_mp(rates[i], kl[i], n[i], delta[i], values[i], gamma[i])[-1]
        assert mpmath.mpf(float(got[i])) >= exact, (i, float(got[i]), float(exact))
        assert float(got[i]) - float(exact) <= (1e-9 if dtype == np.float64 else 1e-5)


def test_one_stage_of_three_values_is_the_ternary_split_kl():
    """K = 3: the ternary PAC-Bayes-split-kl of Wu and Seldin 2022 (its minus part's lower
    inverse is the first segment's upper one), float64, 1e-12."""
    cases = np.array([
        (0.05, 0.1, 1.0, 1000, -1.0, 0.0, 1.0),
        (0.2, 0.01, 0.0, 50, -0.25, 0.0625, 0.5625),
        (0.0, 0.3, 7.0, 10**6, 0.0, 0.5, 2.0),
    ])  # fmt: skip
    for dtype, tol in [(np.float64, 1e-12)]:
        plus, minus, kl, n, a, mid, b = cases.astype(dtype).T
        ternary = pac_bayes_split_kl(plus, minus, kl, n, dtype(0.05), a, mid, b)
        rates = np.stack([1.0 - minus / (mid - a), plus / (b - mid)], -1)[:, None].astype(dtype)
        values = np.stack([a, mid, b], -1)[:, None]
        ours = recursive_pac_bayes_bound(rates, kl[:, None], n[:, None], dtype(0.05), values,
                                         np.zeros((3, 1), dtype))  # fmt: skip
        np.testing.assert_allclose(ours, ternary, rtol=0, atol=tol)


def test_one_stage_of_two_values_is_seeger():
    got = recursive_pac_bayes_bound([[0.3]], [2.0], [500.0], 0.05, [[0.0, 1.0]], [0.0])
    assert abs(float(got) - float(seeger(0.3, 2.0, 500, 0.05))) < 1e-12


@pytest.mark.parametrize("gamma", [0.25, 0.5, 1.0])
def test_agrees_with_the_authors_formulas(gamma):
    """Their ``compute_B_t`` on the same statistics, float64, 1e-9. Their code and ours agree
    for ``0 < gamma <= 1``; at ``gamma = 0`` theirs keeps three segments (two of width 0) in
    ``ln(2 K T sqrt(n) / delta)``, K = 3: valid but looser than the paper's count of the
    values of the loss (here k = 1); ``test_gamma_zero_counts_one_segment`` pins ours. Their
    ``solve_kl_sup`` also returns ``1 - 1e-9`` where the root lies above it (a value below the
    formula's, by at most 1e-9, on vacuous stages only); ours returns the root itself."""
    T = 4
    rates, kl, n, g = _stages(7, T, gamma)
    got = recursive_pac_bayes_bound(rates, kl, n, 0.05, _values(gamma, T), g)
    excess = rates[1:, [0, 2]] if gamma == 1 else rates[1:]  # their rv at 1: (-1, 0, 1)
    theirs = authors_bound(rates[0][1], kl, n, T, gamma, excess, 0.05)
    assert abs(float(got) - theirs) < 1e-9


def test_gamma_zero_counts_one_segment():
    """gamma = 0: the excess loss is the 0-1 loss; one segment, so the stage is Seeger's bound at
    delta / T."""
    got = recursive_pac_bayes_bound(
        [[0.9, 0.2, 0.1]], [1.0], [800.0], 0.05, [[0.0, 0.0, 1.0, 1.0]], [0.0]
    )
    assert abs(float(got) - float(seeger(0.2, 1.0, 800, 0.05))) < 1e-12


def test_jit_vmap_and_finite_gradients():
    rates, kl, n, gamma = _stages(3, 3, 0.5)
    values = _values(0.5, 3)
    args = tuple(jnp.asarray(a) for a in (rates, kl, n, 0.05, values, gamma))
    plain = recursive_pac_bayes_bound(*args)
    assert float(jax.jit(recursive_pac_bayes_bound)(*args)) == float(plain)
    stacked = [jnp.stack([a, a]) for a in args]
    batched = jax.vmap(recursive_pac_bayes_bound)(*stacked)
    assert batched.shape == (2,) and float(batched[0]) == float(plain)

    def f(r, k):
        return recursive_pac_bayes_bound(r, k, args[2], args[3], args[4], args[5])

    g_rates, g_kl = jax.jit(jax.grad(f, argnums=(0, 1)))(args[0], args[1])
    assert np.all(np.isfinite(g_rates)) and np.all(np.isfinite(g_kl))
    h = 1e-6
    for i, j in [(0, 1), (1, 0), (2, 2)]:
        e = jnp.zeros_like(args[0]).at[i, j].set(h)
        fd = (f(args[0] + e, args[1]) - f(args[0] - e, args[1])) / (2 * h)
        assert abs(float(fd) - float(g_rates[i, j])) < 1e-4 * max(1.0, abs(float(fd)))
    e = jnp.zeros_like(args[1]).at[1].set(h)
    fd = (f(args[0], args[1] + e) - f(args[0], args[1] - e)) / (2 * h)
    assert abs(float(fd) - float(g_kl[1])) < 1e-4 * max(1.0, abs(float(fd)))


def test_clear_errors():
    good = ([[0.3]], [1.0], [100.0], 0.05, [[0.0, 1.0]], [0.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        recursive_pac_bayes_bound(*good[:4], [[1.0, 0.0]], good[5])
    with pytest.raises(ValueError, match="K - 1"):
        recursive_pac_bayes_bound([[0.3, 0.1]], *good[1:])
    with pytest.raises(ValueError, match="rates"):
        recursive_pac_bayes_bound([[math.nan]], *good[1:])


# ------------------------------------------------------------------ the learner
def stump_problem(m=600, d=3, k=8, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, d))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0) * np.where(rng.random(m) < noise, -1.0, 1.0)
    H = np.where(X[:, :, None] > np.linspace(0.1, 0.9, k), 1.0, -1.0).reshape(m, d * k)
    return H, y


def learner_reference(H, y, info, delta, gamma, tandem, prior=None):
    """The certificate recomputed from the returned chunks and posteriors with NumPy and
    mpmath: rates on ``U_t = S_t..S_T``, ``KL(pi_t||pi_{t-1})``, the recursion."""
    T = info.posteriors.shape[0]
    errors = (1 - y[:, None] * np.concatenate([H, -H], axis=1)) / 2
    chunk = np.asarray(info.chunks)
    first = np.full(errors.shape[1], 1 / errors.shape[1]) if prior is None else prior
    priors = [first, *np.asarray(info.posteriors, np.float64)]
    rates, kls, ns = [], [], []
    for t in range(T):
        rows = chunk >= t
        a, b = errors[rows] @ priors[t + 1], errors[rows] @ priors[t]
        if tandem:
            a, b = a * a, b * b
        rates.append([np.mean(1 - (1 - a) * b), np.mean(a), np.mean(a * (1 - b))])
        q, p = priors[t + 1], priors[t]
        kls.append((2 if tandem else 1) * np.sum(q * np.log(q / p)))
        ns.append(rows.sum())
    gammas = np.array([0.0] + [gamma] * (T - 1))
    return recursive_mp(rates, kls, ns, delta, _values(gamma, T), gammas)


M, STAGES, STEPS = 256, 3, 40  # one compilation per loss, shared by the learner's tests
RUN = {"n_stages": STAGES, "max_iter": STEPS}


@pytest.mark.parametrize("loss", ["gibbs", "tandem"])
def test_learner_certificate_matches_the_reference(loss):
    H, y = stump_problem(M)
    r = recursive_pac_bayes(H, y, 0.5, loss=loss, **RUN)
    stages = learner_reference(H, y, r.info, 0.05, 0.5, loss == "tandem")
    for got, exact in zip(np.asarray(r.info.stage_bounds), stages, strict=True):
        assert mpmath.mpf(float(got)) >= exact and float(got) - float(exact) < 1e-9
    scale = 4 if loss == "tandem" else 2
    assert abs(float(r.info.certified) - min(1.0, scale * float(stages[-1]))) < 1e-9
    assert np.asarray(r.info.n).tolist() == [256, 192, 128]  # U_1 = S; |S_1| = |S_2| = 64
    mv_errors = np.mean(np.sign(H @ np.asarray(r.weights)) != y)
    assert float(r.info.certified) >= mv_errors
    prior = np.random.default_rng(5).uniform(0.1, 1.0, 2 * H.shape[1])
    prior /= prior.sum()  # a data-free pi_0 of our own: traced, the same compilation
    r = recursive_pac_bayes(H, y, 0.5, loss=loss, prior=prior, **RUN)
    stages = learner_reference(H, y, r.info, 0.05, 0.5, loss == "tandem", prior)
    assert abs(float(r.info.stage_bounds[-1]) - float(stages[-1])) < 1e-9


def test_learner_one_stage_is_seeger_and_reproducible():
    H, y = stump_problem(M, seed=1)
    r = recursive_pac_bayes(H, y, 0.5, n_stages=1, max_iter=STEPS)
    q = np.asarray(r.q)
    gibbs = np.mean((1 - y[:, None] * np.concatenate([H, -H], 1)) / 2 @ q)
    kl = np.sum(q * np.log(q * q.size))
    assert abs(float(r.objective) - float(seeger(gibbs, kl, M, 0.05))) < 1e-9
    a, b, c = (recursive_pac_bayes(H, y, 0.5, key=jax.random.key(k), **RUN) for k in (3, 3, 4))
    assert np.array_equal(a.info.chunks, b.info.chunks) and np.array_equal(a.q, b.q)
    assert not np.array_equal(a.info.chunks, c.info.chunks)


def test_learner_zero_weights_are_slicing():
    H, y = stump_problem(M, seed=2)
    w = np.ones(M)
    w[::4] = 0.0
    r = recursive_pac_bayes(H, y, 0.5, sample_weight=w, **RUN)
    kept = w > 0
    sliced = recursive_pac_bayes(H[kept], y[kept], 0.5, **RUN)
    assert np.all(np.asarray(r.info.chunks)[~kept] == -1)
    assert np.array_equal(np.asarray(r.info.chunks)[kept], sliced.info.chunks)
    np.testing.assert_allclose(r.q, sliced.q, atol=1e-12)
    np.testing.assert_allclose(r.info.certified, sliced.info.certified, atol=1e-12)


@pytest.mark.thorough  # vmap over the learner: test_protocol's fold masks check it by default
def test_learner_sweeps_over_gamma():
    H, y = stump_problem(M, seed=2)
    cells = sweep.grid(recursive_pac_bayes, H, y, options=RUN, gamma=np.array([0.25, 0.5]))
    one = recursive_pac_bayes(H, y, 0.25, **RUN).info.certified  # gamma traced: no recompile
    assert abs(float(cells.result.info.certified[0]) - float(one)) < 1e-9


@pytest.mark.thorough  # float32: the bound's own float32 certificate is checked by default
@pytest.mark.parametrize("loss", ["gibbs", "tandem"])
def test_learner_float32_certificate(loss):
    """A float32 run's stage bounds against the reference on its own posteriors and chunks:
    the statistics are float32 sums (not certified: ~m u), the bound within 1e-5."""
    H, y = stump_problem(M)
    r = recursive_pac_bayes(H.astype(np.float32), y.astype(np.float32), 0.5, loss=loss, **RUN)
    assert r.q.dtype == np.float32 and r.info.certified.dtype == np.float32
    stages = learner_reference(H, y, r.info, 0.05, 0.5, loss == "tandem")
    for got, exact in zip(np.asarray(r.info.stage_bounds), stages, strict=True):
        assert abs(float(got) - float(exact)) < 1e-5


def test_geometric_chunks_are_the_authors_split():
    """rpb_train.py's geometric ``T_splits`` for 60000 examples, T = 8 and T = 4, as cumulative
    ends ``N_t = floor(m / 2^(T - t))``."""
    from pacbound._src.solvers.recursive import geometric_chunks

    theirs = {8: [468, 469, 938, 1875, 3750, 7500, 15000, 30000], 4: [7500, 7500, 15000, 30000]}
    for T, splits in theirs.items():
        _, ends = geometric_chunks(jax.random.key(0), jnp.ones(60000, bool), T)
        assert np.asarray(ends).tolist() == np.cumsum(splits).tolist()


def test_learner_refuses_bad_inputs():
    H, y = stump_problem(m=16)
    with pytest.raises(ValueError, match="gamma"):
        recursive_pac_bayes(H, y, 1.5)
    with pytest.raises(ValueError, match="n_stages"):
        recursive_pac_bayes(H, y, 0.5, n_stages=6)
    with pytest.raises(ValueError, match="loss"):
        recursive_pac_bayes(H, y, 0.5, loss="third")
    with pytest.raises(ValueError):
        recursive_pac_bayes(H * 0.5, y, 0.5)  # votes must be +-1
