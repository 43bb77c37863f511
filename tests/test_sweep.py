"""pacbound.sweep: grids equal Python loops, masked folds equal slicing, one compilation,
chunked and sharded runs equal a single call (8 CPU devices in a subprocess)."""

import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import solvers, sweep
from pacbound._src.sweep import paths as grid_paths
from pacbound._src.sweep import sharding
from pacbound._src.sweep.cells import Plan, grid_chunk, zero_one_risk
from pacbound.solvers import cbboost, mincq
from pacbound.voters import fit_stumps, votes
from tests.conftest import xla_flags
from tests.reference import bounds_numpy as R

ROUNDS = np.array([1, 3, 6])
TOLS = np.array([0.0, 1e-3])
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(39, 3))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=39) > 0, 1.0, -1.0)
    return X, y, np.asarray(votes(fit_stumps(X, 4), X, dtype=jnp.float64))


def _risk(H, y, q):
    """Majority-vote risk in NumPy, a tie counting as an error."""
    return np.mean(y * (H @ np.asarray(q)) <= 0)


def test_grid_equals_python_loop(data):
    _, y, H = data
    g = sweep.grid(cbboost, H, y, tol=TOLS, n_rounds=ROUNDS)
    assert list(g.values["tol"]) == [t for t in TOLS for _ in ROUNDS]  # rounds axis last
    assert list(g.values["n_rounds"]) == list(ROUNDS) * len(TOLS)
    for i, (tol, T) in enumerate(zip(g.values["tol"], g.values["n_rounds"])):
        r = cbboost(H, y, int(T), tol=tol)  # a run of exactly T rounds
        np.testing.assert_allclose(g.result.q[i], r.q, atol=1e-12)
        np.testing.assert_allclose(g.result.info.cbounds[i, :T], r.info.cbounds, atol=1e-12)
    zipped = sweep.grid(cbboost, H, y, zip=True, tol=TOLS, n_rounds=ROUNDS[1:])
    np.testing.assert_allclose(zipped.result.q, np.asarray(g.result.q)[[1, 5]], atol=1e-12)


def test_mincq_masked_folds_equal_explicit_slicing(data):
    _, y, H = (a.astype(np.float32) for a in data)  # float32: one precision, a smaller program
    mus = np.array([0.05, 0.1], np.float32)
    cv = sweep.cross_validate(mincq, H, y, folds=3, refit_best=False, mu=mus)  # 13 per fold
    fold = sweep.stratified_folds(y, 3, seed=0)
    for f in range(3):
        train, held = fold != f, fold == f
        for i, mu in enumerate(mus):
            r = mincq(H[train], y[train], mu)
            vote = H[held] @ np.asarray(r.weights)
            assert cv.risks[f, i] == pytest.approx(np.mean(y[held] * vote <= 0))
    assert cv.refit is None


def test_mincq_grid_runs_as_one_path_equal_to_single_solves(data):
    _, y, H = (a.astype(np.float32) for a in data)
    mus = np.array([0.1, 0.05], np.float32)  # unsorted: the path sorts and unsorts
    assert grid_paths.solves_as_path(mincq, {"mu": mus}, {"tol": 1e-5})
    assert grid_paths.solves_as_path(functools.partial(mincq, atol=0.0), {"mu": mus}, {})
    assert not grid_paths.solves_as_path(mincq, {"mu": mus}, {"q0": np.ones(8)})
    g = sweep.grid(mincq, H, y, mu=mus)
    for i, mu in enumerate(mus):
        single = mincq(H, y, mu)
        gaps = float(g.result.info.duality_gap[i] + single.info.duality_gap)
        assert abs(float(g.result.objective[i] - single.objective)) <= gaps + 1e-7
        assert bool(g.result.converged[i])


def test_bound_selection_is_a_union_bound(data):
    _, y, H = data
    s = sweep.select_by_bound(
        cbboost, H, y, bound="pac_bound_1", delta=0.1, tol=TOLS, n_rounds=ROUNDS
    )  # the grid test's shapes: compiled already
    assert s.delta == pytest.approx(0.1 / (len(TOLS) * len(ROUNDS)))
    Hs = np.concatenate([H, -H], axis=1)  # the posteriors are over [H, -H]
    for i, q in enumerate(np.asarray(s.result.q)):
        mu1, mu2 = np.mean(y * (Hs @ q)), np.mean((Hs @ q) ** 2)
        support = q > 0
        kl = np.sum(q[support] * np.log(q[support] * len(q)))
        ref = R.pac_bound_1((1 - mu1) / 2, (1 - mu2) / 2, kl, len(y), s.delta)
        np.testing.assert_allclose(s.bounds[i], min(ref, 1.0), rtol=1e-9)
    assert s.best_index == int(np.argmin(s.bounds))
    assert s.best_values["n_rounds"] == s.values["n_rounds"][s.best_index]


def test_partial_learners_keep_their_declared_traits(data):
    """Sweeps ask the learner (issue #15): a functools.partial still reads prefixes."""
    _, y, H = data
    partial = functools.partial(cbboost, allow_reselect=False)
    g = sweep.grid(partial, H, y, n_rounds=ROUNDS)
    for i, T in enumerate(ROUNDS):
        r = cbboost(H, y, int(T), allow_reselect=False)
        np.testing.assert_allclose(g.result.q[i], r.q, atol=1e-12)


# LPBoost and CG-Boost share their master (soft_margin_spec) and its normalization: LPBoost is
# rechecked in the thorough tier
@pytest.mark.parametrize("name", ["cgboost", pytest.param("lpboost", marks=pytest.mark.thorough)])
def test_selection_certifies_normalized_soft_margin_posteriors(data, name):
    """Issue #20 items 5-6: LPBoost / CG-Boost posteriors are normalized before any bound sees
    them (their program's q summed to 1.229) and no cell is NaN."""
    _, y, H = data
    Hs = np.concatenate([H, -H], axis=1)
    learner = solvers.LEARNERS[name]
    s = sweep.select_by_bound(learner, H, y, bound="seeger", C=np.geomspace(1e-5, 1e3, 4),
                              options={"max_columns": 10})  # fmt: skip
    assert np.isfinite(s.bounds).all() and (s.bounds <= 1).all()
    for i, q in enumerate(np.asarray(s.result.q)):
        assert q.sum() == pytest.approx(1.0) and (q >= 0).all()
        mu1 = np.mean(y * (Hs @ q))
        kl = np.sum(q[q > 0] * np.log(q[q > 0] * len(q)))
        ref = 2 * R.seeger((1 - mu1) / 2, kl, len(y), s.delta)
        np.testing.assert_allclose(s.bounds[i], min(ref, 1.0), rtol=1e-9)


def test_selection_refuses_quasi_uniform_bounds_and_certifies_one_voter(data):
    """Issue #20 item 7: a quasi-uniform bound is refused for posteriors outside that family,
    and a one-voter posterior gets no NaN."""
    _, y, H = data
    with pytest.raises(ValueError, match="quasi-uniform"):
        sweep.select_by_bound(cbboost, H, y, bound="cbound_quasi_uniform", n_rounds=ROUNDS)
    one = sweep.select_by_bound(cbboost, H, y, bound="pac_bound_2", n_rounds=np.array([1]))
    assert np.isfinite(one.bounds).all()  # a one-voter posterior: no NaN (item 7)


def test_stratified_folds(data):
    _, y, _ = data
    fold = sweep.stratified_folds(y, 3, seed=1)
    sizes = np.bincount(fold)
    assert sizes.max() - sizes.min() <= 1
    for label in (-1, 1):
        per_class = np.bincount(fold[y == label], minlength=3)
        assert per_class.max() - per_class.min() <= 1


def test_masked_folds_equal_explicit_slicing(data):
    X, y, _ = data
    cv = sweep.cross_validate(cbboost, X, y, sweep.stump_voters(4), folds=3, n_rounds=ROUNDS)
    fold = sweep.stratified_folds(y, 3, seed=0)
    for f in range(3):
        train, held = fold != f, fold == f
        stumps = fit_stumps(X[train], 4)  # thresholds from the training fold only
        H_train, H_held = (
            np.asarray(votes(stumps, X[s], dtype=jnp.float64)) for s in (train, held)
        )
        r = cbboost(H_train, y[train], int(ROUNDS.max()))
        for i, T in enumerate(ROUNDS):
            q = _prefix(r, T)
            assert cv.risks[f, i] == pytest.approx(_risk(H_held, y[held], q))
    assert cv.best_index == int(np.argmin(cv.mean_risk))
    T = cv.best_values["n_rounds"]
    full = cbboost(np.asarray(votes(fit_stumps(X, 4), X, dtype=jnp.float64)), y, int(T))
    np.testing.assert_allclose(cv.refit.q, full.q, atol=1e-12)


def _prefix(result, T):
    """The vote after T rounds over [H, -H], from the per-round alphas (as bauvin2020
    Algorithm 1 sums them)."""
    info = result.info
    alphas, selected = np.asarray(info.alphas[:T]), np.asarray(info.selected[:T])
    q = np.zeros(result.q.shape[0])
    np.add.at(q, selected[selected >= 0], alphas[selected >= 0])
    q = q / q.sum()
    n = q.size // 2
    return q[:n] - q[n:]  # the vote's weights on H


def _compilations(fn):
    """XLA compilations during ``fn()``."""
    events = []

    def listener(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            events.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        fn()
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return len(events)


def test_new_grid_values_do_not_recompile(data):
    X, y, H = data
    voters = sweep.stump_voters(4)

    def run(tols, rounds):
        sweep.grid(cbboost, H, y, tol=tols, n_rounds=rounds)
        sweep.cross_validate(cbboost, H, y, folds=3, tol=tols, n_rounds=rounds)
        sweep.cross_validate(cbboost, X, y, voters, folds=3, seed=2, tol=tols, n_rounds=rounds)

    run(TOLS, ROUNDS)
    assert _compilations(lambda: run(TOLS + 1e-4, np.array([2, 4, 6]))) == 0


def _same(a, b):
    """Equal but for the last bits (XLA's batched kernels round per batch size)."""
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_chunked_equals_unchunked(data):
    _, y, H = data
    tols = np.array([0.0, 1e-4, 1e-3])
    whole = sweep.grid(cbboost, H, y, tol=tols, n_rounds=ROUNDS)
    plan = Plan(cbboost, (), "n_rounds", int(ROUNDS.max()))
    cells = ({"tol": tols}, np.tile(ROUNDS, (3, 1)))
    need = sharding._bytes(grid_chunk, plan, sharding.cell_mesh(), cells, (H, y, {}), 1)
    seen = []
    parts = sweep.grid(cbboost, H, y, tol=tols, n_rounds=ROUNDS, memory_budget=need,
                       progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert seen == [(1, 3), (2, 3), (3, 3)]  # one cell fits the budget
    jax.tree.map(_same, whole.result, parts.result)
    batched = sweep.grid(cbboost, H, y, tol=tols, n_rounds=ROUNDS, batch_size=2)  # lax.map
    jax.tree.map(_same, whole.result, batched.result)
    with pytest.raises(ValueError, match="memory_budget"):
        sweep.grid(cbboost, H, y, tol=tols, n_rounds=ROUNDS, memory_budget=need // 2)


def test_bad_inputs_raise(data):
    X, y, H = data
    stumps = sweep.stump_voters()
    cases = [
        (lambda: sweep.grid(cbboost, H, y), "at least one"),
        (lambda: sweep.grid(cbboost, H, y, n_rounds=[]), "non-empty"),
        (lambda: sweep.grid(cbboost, H, y, n_rounds=[0, 2]), "integers >= 1"),
        (lambda: sweep.grid(cbboost, H, y, tol=[0.0, np.nan], n_rounds=[2]), "NaN"),
        (lambda: sweep.grid(cbboost, H, y, mu=[0.1]), "no argument 'mu'"),
        (lambda: sweep.grid(cbboost, H, y, zip=True, tol=[0.0], n_rounds=[1, 2]), "one length"),
        (lambda: sweep.grid(cbboost, H, 2 * y, n_rounds=[2]), "labels"),
        (lambda: sweep.grid(cbboost, H, y, n_rounds=[2], chunk_size=0), "chunk_size"),
        (lambda: sweep.grid(cbboost, H, y, n_rounds=[2], batch_size=0), "batch_size"),
        (lambda: sweep.grid(cbboost, H, y, n_rounds=[2], devices=[]), "at least one device"),
        (lambda: sweep.cross_validate(cbboost, H, y, folds=1, n_rounds=[2]), "folds"),
        (lambda: sweep.cross_validate(cbboost, H, y, folds=40, n_rounds=[2]), "smallest class"),
        (lambda: sweep.cross_validate(zero_one_risk, H, y, n_rounds=[2]), "sample_weight"),
        (lambda: sweep.cross_validate(cbboost, X * np.nan, y, stumps, n_rounds=[2]), "NaN"),
        (lambda: sweep.select_by_bound(cbboost, H, y, bound="nope", n_rounds=[2]), "bound"),
        (lambda: sweep.select_by_bound(cbboost, H, y, delta=0.0, n_rounds=[2]), "delta"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()


SHARDED = """
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
from pacbound import sweep
from pacbound.solvers import cbboost
assert len(jax.devices()) == 8
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.where(X[:, 0] + 0.8 * rng.normal(size=40) > 0, 1.0, -1.0)
H = np.asarray(sweep.stump_voters(4)(X)(X))
kw = dict(tol=np.array([0.0, 1e-4, 1e-3, 1e-2, 1e-1]), n_rounds=np.array([1, 3, 6]))
one, eight = jax.devices()[:1], jax.devices()
same = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
g1, g8 = (sweep.grid(cbboost, H, y, devices=d, **kw) for d in (one, eight))
jax.tree.map(same, g1.result, g8.result)
assert len(g8.result.q.sharding.device_set) == 8
cv = [sweep.cross_validate(cbboost, X, y, sweep.stump_voters(4), folds=3, devices=d,
                          refit_best=False, **kw)
      for d in (one, eight)]
same(cv[0].risks, cv[1].risks)
print("ok")
"""


def test_sharded_over_8_devices_equals_one_device():
    env = dict(os.environ, XLA_FLAGS=xla_flags("--xla_force_host_platform_device_count=8"),
               JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))  # fmt: skip
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SHARDED)], env=env,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]
