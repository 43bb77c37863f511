"""CB-Boost / GB-CB-Boost (bauvin2020) against the independent NumPy reference and the paper.

The learners take ``H`` as it is and weigh ``[H, -H]`` implicitly; the reference runs on the
materialized ``[H, -H]``, so its column indices are the learners' ``info.selected``. Shapes are
shared between tests so that few programs compile: dense problems are (60, 20), stump problems
use 50 examples and 3 features.

The protocol checks shared with the AdaBoost and VEB-Boost tests (prefixes, jit / vmap) are
defined here: :func:`check_prefixes`, :func:`check_jit_vmap`.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from pacbound import voters
from pacbound._src.learning.boosting import best_signed
from pacbound._src.learning.candidates import stump_posterior
from pacbound._src.protocol import traits
from pacbound._src.solvers.cbboost import cbboost, gbcbboost, one_direction_step, truncate_cbboost
from pacbound.cbound import empirical_cbound
from pacbound.margins import majority_vote_risk
from pacbound.voters import stumps_vote
from tests.reference.cbboost_numpy import cbboost_reference, gbcbboost_reference

T = 15
LEARNERS = {False: (cbboost, cbboost), True: (gbcbboost, gbcbboost)}


def _votes(seed, m=60, n=20, real_valued=False):
    """(m, n) votes, n // 4 informative ±1 voters, the rest noise, and their [H, -H]."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=m)
    H = rng.choice([-1.0, 1.0], size=(m, n))
    for j in range(n // 4):
        H[:, j] = np.where(rng.uniform(size=m) < rng.uniform(0.2, 0.4), -y, y)
    if real_valued:
        H = H * rng.uniform(0.1, 1.0, size=(m, n))
    return H, np.concatenate([H, -H], axis=1), y


def materialized_stumps(X):
    """Every stump of ``stump_search(X)`` as ``(m, n)`` votes, and each column's index into
    ``[S, -S]`` of the search's candidates (``complemented_index``), for the columns of
    ``[H, -H]``."""
    search = voters.stump_search(X)
    mask = np.asarray(search.candidate_mask())
    features, positions = np.nonzero(mask)
    stumps = voters.Stumps(jnp.asarray(features, jnp.int32), search.thresholds[features, positions])
    H = np.asarray(voters.votes(stumps, X, dtype=jnp.float64))
    base = features * mask.shape[1] + positions
    return search, H, np.concatenate([base, mask.size + base])


def _stump_problem(seed=0, m=50):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 + 0.4 * rng.standard_normal(m) > 0.4, 1.0, -1.0)
    return X, y, *materialized_stumps(X)


def _leaves(tree):
    return jax.tree.leaves(tree)  # None fields (dense results' stumps, slots) are no leaves


def assert_trees_close(a, b, rtol=0.0, atol=0.0):
    """Equal pytrees: integer and boolean leaves exactly, float leaves to ``rtol`` / ``atol``."""
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(_leaves(a), _leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape and x.dtype == y.dtype
        if np.issubdtype(x.dtype, np.floating):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(x, y)


def check_result(result):
    """The protocol's posterior: ``q`` a distribution over ``2n`` columns, ``weights`` its
    signed difference, and a matrix-free result's ``stumps`` / ``n_candidates``."""
    q, n = np.asarray(result.q, np.float64), result.q.shape[-1] // 2
    assert np.all(q >= 0) and q.sum() == pytest.approx(1.0, abs=1e-6)
    eps = np.finfo(result.q.dtype).eps  # XLA may fuse the difference with the normalization
    np.testing.assert_allclose(result.weights, result.q[:n] - result.q[n:], rtol=0, atol=2 * eps)
    assert result.steps == np.sum(np.asarray(result.info.selected) >= 0)
    if result.voters is not None:
        assert result.voters.features.shape == (n,) and int(result.info.n_candidates) > 0


def check_prefixes(learner, call, n_rounds, rounds, rtol=1e-12):
    """The declared prefix: ``truncate(result, T)`` is the result, and ``truncate(result, t)``
    is a run of ``t`` rounds (``call(t)``) with its later rounds read as rounds that did not
    vote; for matrix-free results ``q`` over ``[S, -S]`` of the ``T`` slots holds the run's
    ``q`` over its ``t`` slots."""
    declared = traits(learner)
    assert declared.prefix == "n_rounds" and declared.truncate is not None
    full = call(n_rounds)
    check_result(full)
    assert_trees_close(declared.truncate(full, n_rounds), full, rtol=1e-15)  # unfused: an ulp
    for t in rounds:
        short, cut = call(t), declared.truncate(full, t)
        check_result(cut)
        for key in ("objective", "steps", "converged"):
            assert_trees_close(getattr(cut, key), getattr(short, key), rtol=rtol)
        for key, value in short.info._asdict().items():
            kept = getattr(cut.info, key)
            if key == "slots" and value is not None:  # T + s (T slots) is t + s (t slots)
                kept = np.where(kept >= n_rounds, kept - n_rounds + t, kept)
            if value is not None and np.ndim(value) == 1:  # per round (T or T + 1 entries)
                assert_trees_close(kept[: value.shape[0]], value, rtol=rtol)
        assert np.all(np.asarray(cut.info.selected)[t:] == -1)
        assert np.all(np.asarray(cut.info.alphas)[t:] == 0)
        if full.voters is None:
            np.testing.assert_allclose(cut.q, short.q, rtol=rtol, atol=1e-15)
            continue
        on_slots = np.concatenate([np.arange(t), n_rounds + np.arange(t)])
        np.testing.assert_allclose(cut.q[on_slots], short.q, rtol=rtol, atol=1e-15)
        assert np.all(np.delete(np.asarray(cut.q), on_slots) == 0)
        assert_trees_close(jax.tree.map(lambda a, t=t: a[:t], cut.voters), short.voters)


def check_jit_vmap(fit, masks, rtol):
    """``fit(w)`` == ``jax.jit(fit)(w)`` == ``jax.vmap(fit)(masks)[i]`` for every mask ``w``."""
    batched, jitted = jax.vmap(fit)(masks), jax.jit(fit)
    for i, w in enumerate(masks):
        single = fit(w)
        check_result(single)
        assert_trees_close(jitted(w), single, rtol=rtol)
        assert_trees_close(jax.tree.map(lambda a, i=i: a[i], batched), single, rtol=rtol)


def fold_masks(m, k=3):
    """``(k, m)`` 0/1 masks: fold ``i`` drops the examples ``i, i + k, ...``."""
    return (np.arange(m)[None, :] % k != np.arange(k)[:, None]).astype(float)


def _assert_matches(result, ref, atol=1e-6):
    info = result.info
    np.testing.assert_array_equal(np.asarray(info.selected), ref["selected"])
    for key in ("cbounds", "decreases", "error_bounds"):
        np.testing.assert_allclose(getattr(info, key), ref[key], rtol=0, atol=atol, err_msg=key)
    np.testing.assert_allclose(info.alphas, ref["alphas"], rtol=1e-6)
    np.testing.assert_allclose(result.q, ref["weights"], rtol=0, atol=atol)
    np.testing.assert_allclose(result.objective, ref["cbounds"][-1], rtol=0, atol=atol)


@pytest.mark.parametrize("seed, real_valued", [(0, False), (1, False), (2, True)])
@pytest.mark.parametrize("allow_reselect", [True, False])
def test_cbboost_matches_reference(seed, real_valued, allow_reselect):
    H, Hc, y = _votes(seed, real_valued=real_valued)
    result = cbboost(H, y, T, allow_reselect=allow_reselect)
    ref = cbboost_reference(Hc, y, T, allow_reselect=allow_reselect)
    _assert_matches(result, ref)
    sel = ref["selected"][ref["selected"] >= 0]
    assert (len(set(sel)) < len(sel)) == allow_reselect  # re-selections are exercised
    assert result.steps == len(sel) and result.converged == (len(sel) < T)  # an idle round


@pytest.mark.parametrize("seed", [0, 3])
def test_gbcbboost_matches_reference(seed):
    H, Hc, y = _votes(seed)
    _assert_matches(gbcbboost(H, y, T), gbcbboost_reference(Hc, y, T))


def test_stops_cleanly_when_no_direction_decreases():
    H, _, y = _votes(4, n=3)
    H = np.concatenate([H, np.zeros((60, 17))], axis=1)  # zero voters: gamma = 0, never valid
    result = cbboost(H, y, T, allow_reselect=False)
    ref = cbboost_reference(np.concatenate([H, -H], axis=1), y, T, allow_reselect=False)
    _assert_matches(result, ref)
    idle = np.asarray(result.info.selected) < 0
    assert idle[-1] and np.all(idle[np.argmax(idle) :])  # once idle, idle for good
    stop = np.argmax(idle)
    assert np.all(np.asarray(result.info.decreases)[stop:] == 0)
    assert np.all(np.asarray(result.info.cbounds)[stop:] == result.info.cbounds[stop - 1])
    assert result.converged and result.steps == stop  # Algorithm 1 ran out of directions
    assert not truncate_cbboost(result, stop).converged
    assert truncate_cbboost(result, stop + 1).converged


@pytest.mark.parametrize("gradient", [False, True])
def test_property1_monotone_and_error_bound(gradient):
    H, Hc, y = _votes(5)
    result = LEARNERS[gradient][0](H, y, T)
    info = result.info
    cbs = np.asarray(info.cbounds)
    assert np.all(np.diff(cbs) <= 1e-12)
    np.testing.assert_allclose(info.decreases[1:], cbs[:-1] - cbs[1:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(info.error_bounds, cbs, rtol=0, atol=1e-12)  # Corollary 2
    prefixes = jax.vmap(lambda t: truncate_cbboost(result, t))(jnp.arange(1, T + 1))
    risks = jax.vmap(lambda q: majority_vote_risk(Hc, y, q))(prefixes.q)
    bounds = jax.vmap(lambda q: empirical_cbound(Hc, y, q))(prefixes.q)
    np.testing.assert_allclose(bounds, cbs, rtol=0, atol=1e-12)  # the prefixes' posteriors
    np.testing.assert_allclose(prefixes.objective, cbs, rtol=0, atol=0)
    assert np.all(np.asarray(risks) <= np.asarray(info.error_bounds) + 1e-12)
    np.testing.assert_allclose(prefixes.q[-1], result.q)
    np.testing.assert_allclose(H @ result.weights, Hc @ result.q, atol=1e-15)


def _first_near_in_complemented_order(signed, rtol):
    """NumPy: the first index of ``[H, -H]`` whose score is within ``rtol`` of the best."""
    flat = np.asarray(signed, np.float64).ravel()
    plus = np.where(np.isnan(flat) | (flat < 0), -np.inf, flat)
    minus = np.where(np.isnan(flat) | (flat >= 0), -np.inf, -flat)
    scores = np.concatenate([plus, minus])
    return int(np.argmax(scores >= scores.max() * (1 - rtol)))


# one compilation per rtol: an eager call traces best_signed's while loop anew and compiles it
_BEST_SIGNED = jax.jit(best_signed, static_argnums=1)
_BEST_SIGNED_VMAPPED = jax.jit(jax.vmap(best_signed, in_axes=(0, None)), static_argnums=1)


@settings(max_examples=100)
@given(
    values=st.lists(
        st.sampled_from([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, np.nan]), min_size=12, max_size=12
    ).filter(lambda v: not np.all(np.isnan(v))),
    jitter=st.booleans(),
    rtol=st.sampled_from([0.0, 1e-12]),
)
def test_best_signed_is_the_first_best_of_the_self_complemented_order(values, jitter, rtol):
    """Ties (exact, or within rtol after rounding) go to the lowest index of [H, -H], across
    rows and signs, as an argmax over the materialized set; vmapped the same."""
    signed = np.reshape(values, (3, 4))
    if jitter:  # rounding-level differences between equal scores
        signed = signed * (1 + 1e-15 * np.arange(12).reshape(3, 4))
    expected = _first_near_in_complemented_order(signed, rtol)
    assert int(_BEST_SIGNED(jnp.asarray(signed), rtol)) == expected
    pair = _BEST_SIGNED_VMAPPED(jnp.stack([signed, -signed]), rtol)
    assert int(pair[0]) == expected
    assert int(pair[1]) == _first_near_in_complemented_order(-signed, rtol)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31 - 1), scale=st.floats(0.1, 1.0))
def test_one_direction_step_is_the_line_minimum(seed, scale):
    """Theorem 3's step minimizes C(F + a h) over a >= 0; Property 1 is the exact decrease."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], 40)
    F = np.where(rng.uniform(size=40) < 0.3, -y, y) * rng.uniform(0.2, 1, 40)
    h = scale * rng.choice([-1.0, 1.0], 40) * np.where(rng.uniform(size=40) < 0.5, 1, 0.5)

    def c(a):
        v = F + a * h
        return 1 - np.mean(y * v) ** 2 / np.mean(v * v) if np.mean(y * v) > 0 else 1.0

    g_f, nu_f, g_h, nu_h, tau = (
        np.mean(y * F),
        np.mean(F * F),
        np.mean(y * h),
        np.mean(h * h),
        F @ h / 40,
    )
    s = one_direction_step(g_f, nu_f, g_h, nu_h, tau)
    line = minimize_scalar(c, bounds=(0, 1e3), method="bounded", options={"xatol": 1e-12})
    best = min(line.fun, c(0.0), *(c(a) for a in np.geomspace(1e-6, 1e6, 600)))
    if bool(s.valid):
        assert c(float(s.step)) <= best + 1e-10
        np.testing.assert_allclose(float(s.cbound), c(float(s.step)), atol=1e-12)
        np.testing.assert_allclose(float(s.decrease), c(0.0) - c(float(s.step)), atol=1e-12)
        return
    assert float(s.decrease) == 0 and float(s.step) == 0  # (g_h ~ 1e-17 is a rounded 0 margin)
    if g_f <= 0 or g_h <= 1e-12:  # outside Thm 3 (C(F) is the guarded 1): only "no step"
        return
    if g_f * nu_h - g_h * tau > 0:  # numerator <= 0: C grows along a >= 0
        assert best >= c(0.0) - 1e-9
    else:  # no finite minimizer: C falls towards C(h) = 1 - g_h^2 / nu_h, a -> inf
        assert best >= 1 - g_h**2 / nu_h - 1e-9


def test_int8_equals_float32_and_float32_close_to_float64():
    H, _, y = _votes(6)
    y32 = jnp.asarray(y, jnp.float32)
    r32 = cbboost(jnp.asarray(H, jnp.float32), y32, T)
    r8 = cbboost(jnp.asarray(H, jnp.int8), y32, T)
    r64 = cbboost(H, y, T)
    assert r32.objective.dtype == r8.q.dtype == jnp.float32 and r64.q.dtype == jnp.float64
    np.testing.assert_array_equal(r8.info.selected, r32.info.selected)
    np.testing.assert_array_equal(r32.info.selected, r64.info.selected)
    for a, b, tol in ((r8, r32, 1e-6), (r32, r64, 1e-5)):
        np.testing.assert_allclose(a.q, b.q, atol=tol)
        for key in ("alphas", "cbounds", "decreases", "error_bounds"):
            np.testing.assert_allclose(getattr(a.info, key), getattr(b.info, key), atol=tol)


def test_int8_digit_product():
    """int8 votes: a in base-128 int8 digits, exact int32 sums; the error bound of the digits."""
    from pacbound._src.learning.edges import column_edges, int8_digits, prepare_votes

    rng = np.random.default_rng(9)
    H = rng.choice([-1, 0, 1], size=(60, 40)).astype(np.int8)
    a = rng.standard_normal(60) * np.exp(rng.uniform(-15, 2, 60))
    for dtype, n_digits, bits in ((jnp.float64, 8, 55), (jnp.float32, 4, 27)):
        aj = jnp.asarray(a, dtype)
        digits, scale = int8_digits(aj, n_digits)
        assert digits.dtype == jnp.int8 and np.abs(np.asarray(digits)).max() <= 64
        back = np.asarray(digits, np.float64) @ 128.0 ** -np.arange(n_digits) * float(scale)
        exact = np.asarray(aj, np.float64)
        np.testing.assert_array_less(np.abs(back - exact), 2.0**-bits * np.abs(exact).max())
        edges = column_edges(prepare_votes(H, dtype), aj)
        assert edges.dtype == dtype
        limit = 60 * 2.0**-bits * np.abs(exact).max() + 4 * jnp.finfo(dtype).eps * np.abs(a).sum()
        np.testing.assert_allclose(edges, H.T.astype(np.float64) @ exact, rtol=0, atol=limit)


@pytest.mark.parametrize("gradient", [False, True])
def test_matrix_free_equals_materialized_stumps(gradient):
    """The same rounds as the dense learner on the materialized [S, -S] of every stump, the
    same vote, after every prefix."""
    X, y, search, H, index = _stump_problem()
    dense_learner, free_learner = LEARNERS[gradient]
    dense, free = dense_learner(H, y, 12), free_learner(search, y, 12)
    np.testing.assert_array_equal(free.info.selected, index[np.asarray(dense.info.selected)])
    for key in ("alphas", "cbounds", "decreases", "error_bounds"):
        np.testing.assert_allclose(getattr(free.info, key), getattr(dense.info, key), atol=1e-10)
    assert int(free.info.n_candidates) == H.shape[1] and free.q.shape == (24,)
    for t in (12, 5, 1):
        a, b = truncate_cbboost(free, t), truncate_cbboost(dense, t)
        np.testing.assert_allclose(stumps_vote(a.voters, a.weights, X), H @ b.weights, atol=1e-12)
        np.testing.assert_allclose(a.objective, b.objective, atol=1e-10)


# GB-CB-Boost: the same rounds' loop and truncate_cbboost as CB-Boost (thorough)
@pytest.mark.parametrize("gradient", [False, pytest.param(True, marks=pytest.mark.thorough)])
def test_prefixes_are_runs_of_fewer_rounds(gradient):
    H, _, y = _votes(3)
    dense_learner, free_learner = LEARNERS[gradient]
    check_prefixes(dense_learner, lambda t: dense_learner(H, y, t), T, (1, 2, 7))
    idle = np.concatenate([H[:, :3], np.zeros((60, 17))], axis=1)  # converges in 13 rounds
    # the rounds of the runs above and of test_matrix_free_equals_materialized_stumps: each
    # n_rounds is a compilation
    check_prefixes(dense_learner, lambda t: dense_learner(idle, y, t), T, (2, 7))
    _, ys, search, *_ = _stump_problem()  # 20 rounds re-select stumps
    check_prefixes(free_learner, lambda t: free_learner(search, ys, t), 20, (1, 12), 1e-10)


def test_reselected_stump_is_merged_on_its_first_slot():
    _, y, search, *_ = _stump_problem()
    free = cbboost(search, y, 20)
    sel = np.asarray(free.info.selected)
    first = {s: i for i, s in reversed(list(enumerate(sel)))}
    assert len(first) < len(sel)  # some stump was chosen in several rounds
    slots = np.asarray(free.info.slots)
    np.testing.assert_array_equal(slots % 20, [first[s] for s in sel])
    on = np.asarray(free.q) > 0
    assert on.sum() == len(first)  # every voter listed once with its mass
    alphas = np.asarray(free.info.alphas)
    np.testing.assert_allclose(np.bincount(slots, alphas, 40) / alphas.sum(), free.q, rtol=1e-12)
    stumps, q = stump_posterior(search, free.info.selected, free.info.alphas)
    assert_trees_close((stumps, q), (free.voters, free.q), rtol=1e-15)


# float64: test_protocol checks jit == vmap == no-jit over fold masks for every learner, and
# test_vmap_over_folds_equals_one_fold_at_a_time the float64 folds against slicing
@pytest.mark.parametrize(
    "dtype", [pytest.param(np.float64, marks=pytest.mark.thorough), np.float32]
)
def test_jit_vmap_over_folds_and_dtypes(dtype):
    H, _, y = _votes(7)
    masks = fold_masks(60).astype(dtype)
    H, y = H.astype(dtype), y.astype(dtype)
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    check_jit_vmap(lambda w: cbboost(H, y, T, sample_weight=w), masks, rtol)


# the rounds' loop of the dense learners above, priced over the stumps: test_protocol checks
# jit == vmap == no-jit over fold masks in float64 for cbboost, and for the other
# three in its thorough tier (thorough)
@pytest.mark.thorough
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matrix_free_jit_vmap_over_folds_and_dtypes(dtype):
    rtol = 1e-10 if dtype == np.float64 else 1e-4
    _, ys, search, *_ = _stump_problem()
    search = jax.tree.map(lambda a: a.astype(dtype) if a.dtype.kind == "f" else a, search)
    fit = lambda w: gbcbboost(search, ys.astype(dtype), 6, sample_weight=w)  # noqa: E731
    check_jit_vmap(fit, fold_masks(50).astype(dtype), rtol)
    assert fit(np.ones(50, dtype)).q.dtype == dtype


def test_vmap_over_folds_equals_one_fold_at_a_time():
    H, _, y = _votes(7)
    masks = fold_masks(60)
    fit = jax.jit(lambda w: cbboost(H, y, T, sample_weight=w))
    folds = jax.vmap(fit)(masks)
    sub = cbboost(H[masks[2] > 0], y[masks[2] > 0], T)  # weights 0/1 == dropping the rows
    np.testing.assert_allclose(sub.info.cbounds, folds.info.cbounds[2], atol=1e-12)
    np.testing.assert_array_equal(sub.info.selected, folds.info.selected[2])
    np.testing.assert_allclose(sub.q, folds.q[2], atol=1e-12)
    pair = jax.vmap(cbboost, in_axes=(0, 0, None))(np.stack([H, -H]), np.stack([y, -y]), T)
    np.testing.assert_allclose(pair.info.cbounds[0], pair.info.cbounds[1], atol=1e-12)


def test_numeric_hyperparameters_do_not_recompile(no_compilation):
    H, _, y = _votes(8)
    base = cbboost(H, y, T, tol=0.5, allow_reselect=True, sample_weight=np.ones(60))
    with no_compilation():
        stopped = cbboost(H, y, T, tol=1.0, allow_reselect=True, sample_weight=np.ones(60))
        once = cbboost(H, y, T, tol=0.0, allow_reselect=False, sample_weight=np.ones(60))
        cbboost(H, y, T, tol=0.0, allow_reselect=True, sample_weight=fold_masks(60)[0])
    assert np.all(np.asarray(stopped.info.selected)[1:] == -1)  # every decrease is below 1
    assert np.all(np.asarray(stopped.info.cbounds) == base.info.cbounds[0])
    assert stopped.converged and stopped.steps == 1
    sel = np.asarray(once.info.selected)
    assert len(set(sel[sel >= 0])) == np.sum(sel >= 0)


Y4 = np.array([1.0, -1, 1, -1])  # both classes: each case below has one defect


@pytest.mark.parametrize(
    "H, y, rounds, match",
    [
        (np.ones((4, 3)), np.array([0, 1, 0, 1.0]), 3, "labels"),
        (np.ones((4, 3)), np.ones(4), 3, "both classes"),
        (np.ones((4, 3)), np.ones(5), 3, "shape"),
        (np.full((4, 3), np.nan), Y4, 3, "NaN"),
        (2 * np.ones((4, 3)), Y4, 3, r"\[-1, 1\]"),
        (np.ones((4, 3)), Y4, 0, "n_rounds"),
        (np.ones(4), Y4, 3, "2-D"),
    ],
)
def test_validation(H, y, rounds, match):
    with pytest.raises(ValueError, match=match):
        cbboost(H, y, rounds)


def test_validation_of_weights_tol_and_stump_labels():
    with pytest.raises(ValueError, match="sample_weight"):
        cbboost(np.ones((4, 3)), Y4, 2, sample_weight=-np.ones(4))
    with pytest.raises(ValueError, match="tol"):
        gbcbboost(np.ones((4, 3)), Y4, 2, tol=-1.0)
    search = voters.stump_search(np.arange(8.0)[:, None])
    with pytest.raises(ValueError, match="shape"):
        cbboost(search, Y4, 2)
    with pytest.raises(ValueError, match="n_rounds"):
        gbcbboost(search, np.tile(Y4, 2), 0)
