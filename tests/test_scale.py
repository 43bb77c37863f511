"""Scale (issue #18): every matrix-free learner on either stump search, and learning with the
examples sharded over devices (8 simulated CPU devices in a subprocess).

* With ``max_bins`` at least the number of distinct values of every feature, the histogram
  search holds exactly the exact search's stumps in the same order, so every matrix-free
  learner (the four boosting learners and the four column generators) returns the same stumps
  and the same posterior on either (float64; float32 for one learner of each family).
* With few bins, a learner on the histogram search equals the dense learner on the
  materialized stumps of that binning (brute force: every candidate's votes on ``X``).
* :func:`pacbound.sweep.shard_examples` pads and places the examples; every learner that reads
  ``H`` or the codes once a round (boosting, column generation's pricing, MinCq,
  ``minimize_bound``) gives the one-device model from the sharded arrays, each device holding
  ``1/8`` of the examples, with no all-gather in the compiled program.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from pacbound import voters
from pacbound._src.solvers.adaboost import adaboost
from pacbound._src.solvers.cbboost import cbboost, gbcbboost
from pacbound._src.solvers.cgboost import cgboost
from pacbound._src.solvers.cqboost import cqboost
from pacbound._src.solvers.lpboost import lpboost
from pacbound._src.solvers.mdboost import mdboost
from pacbound._src.solvers.vebboost import vebboost
from pacbound._src.sweep.sharding import EXAMPLES, shard_examples
from pacbound._src.voters import histogram as hs
from pacbound.solvers import cqboost_max_mu
from tests.conftest import xla_flags

ROOT = Path(__file__).resolve().parents[1]
M, D, T = 48, 3, 8  # one shape for most tests: JAX compiles once per shape

# name: (matrix-free learner, hyperparameters after y (a function of the search and y), options)
LEARNERS = {
    "cbboost": (cbboost, lambda s, y: (T,), {}),
    "gbcbboost": (gbcbboost, lambda s, y: (T,), {}),
    "adaboost": (adaboost, lambda s, y: (T,), {}),
    "vebboost": (vebboost, lambda s, y: (0.5, T), {}),
    "cqboost": (cqboost, lambda s, y: (0.9 * cqboost_max_mu(s, y),), {"max_columns": 30}),
    "lpboost": (lpboost, lambda s, y: (1.0,), {"max_columns": 30}),
    "cgboost": (cgboost, lambda s, y: (0.1,), {"max_columns": 30}),
    "mdboost": (mdboost, lambda s, y: (10.0,), {"max_columns": 30}),
}
# float32 for one learner of each family (every run is one more compilation of a learner);
# the default run keeps those two and CB-Boost in float64; the other learners price their
# columns through the same search (thorough)
DEFAULT_CASES = {("cbboost", np.float64), ("cbboost", np.float32), ("cqboost", np.float32)}
CASES = [
    pytest.param(name, dtype, marks=() if (name, dtype) in DEFAULT_CASES else pytest.mark.thorough)
    for name, dtype in [(name, np.float64) for name in LEARNERS]
    + [("cbboost", np.float32), ("cqboost", np.float32)]
]
# float32 column generation: the master problem is solved iteratively to a tolerance, and the
# two searches sum the edges in different orders, so the masters' iterates differ by rounding
ATOL = {np.float64: 1e-9, np.float32: {"cbboost": 2e-5, "cqboost": 1e-4}}


def _data(dtype, seed=0):
    """Continuous, tied (few values) and binary features; labels from the first two."""
    rng = np.random.default_rng(seed)
    X = np.stack(
        [rng.normal(size=M), np.round(rng.normal(size=M) * 2), rng.integers(0, 2, M) * 1.0], 1
    )
    y = np.where(X[:, 0] + 0.4 * X[:, 1] + 0.8 * rng.normal(size=M) > 0, 1.0, -1.0)
    return X.astype(dtype), y.astype(dtype)


def _vote(result, X):
    return np.asarray(voters.stumps_vote(result.voters, result.weights, X), np.float64)


def _chosen(result):
    """The distinct stumps with mass, as sorted ``(feature, threshold, sign)`` triples."""
    q = np.asarray(result.q, np.float64)
    n = q.size // 2
    features = np.asarray(result.voters.features)
    thresholds = np.asarray(result.voters.thresholds, np.float64)
    return sorted(
        (int(features[j % n]), float(thresholds[j % n]), 1 if j < n else -1)
        for j in np.flatnonzero(q > 0)
    )


@pytest.mark.parametrize("name, dtype", CASES)
def test_histogram_search_with_enough_bins_gives_the_exact_search_model(name, dtype):
    learner, hyper, options = LEARNERS[name]
    X, y = _data(dtype)
    exact, histogram = voters.stump_search(X), hs.histogram_search(X, 64)
    assert max(np.unique(X[:, f]).size for f in range(D)) <= 64
    args = hyper(exact, y)
    a, b = learner(exact, y, *args, **options), learner(histogram, y, *args, **options)
    assert int(a.info.n_candidates) == int(b.info.n_candidates)
    assert _chosen(a) == _chosen(b) and int(a.steps) == int(b.steps)
    assert bool(a.converged) == bool(b.converged)
    atol = ATOL[dtype] if dtype == np.float64 else ATOL[dtype][name]
    assert b.q.dtype == dtype and a.q.dtype == dtype
    np.testing.assert_allclose(np.sort(b.q), np.sort(a.q), atol=atol)
    np.testing.assert_allclose(_vote(b, X), _vote(a, X), atol=atol)
    np.testing.assert_allclose(b.objective, a.objective, rtol=atol)


# CB-Boost in float64: the same brute force in the other dtype (thorough)
@pytest.mark.parametrize(
    "learner, dense, dtype",
    [
        pytest.param(cbboost, cbboost, np.float64, marks=pytest.mark.thorough),
        (adaboost, adaboost, np.float32),
    ],
)
def test_few_bins_equal_the_dense_learner_on_the_binned_stumps(learner, dense, dtype):
    """Brute force: the candidates of a 5-bin search as a dense ``H`` (every valid candidate's
    votes on ``X``, in the search's row-major order, so ties go to the same stump)."""
    args = (T,)
    X, y = _data(dtype, seed=1)
    search = hs.histogram_search(X, 5)
    index = np.flatnonzero(np.asarray(search.candidate_mask()))
    stumps = search.candidate_voters(jnp.asarray(index))
    H = np.asarray(voters.votes(stumps, X, dtype=dtype))
    free, full = learner(search, y, *args), dense(H, y, *args)
    assert int(free.info.n_candidates) == H.shape[1] == index.size
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_vote(free, X), H @ np.asarray(full.weights, np.float64),
                               rtol=rtol, atol=rtol)  # fmt: skip
    np.testing.assert_allclose(free.objective, full.objective, rtol=rtol)
    n = H.shape[1]
    dense_chosen = sorted(
        (int(stumps.features[j % n]), float(stumps.thresholds[j % n]), 1 if j < n else -1)
        for j in np.flatnonzero(np.asarray(full.q) > 0)
    )
    assert _chosen(free) == dense_chosen


def test_shard_examples_pads_with_zero_weight_and_places_by_examples():
    X, y = _data(np.float64)
    y = y[:-3]  # 45 examples
    search = hs.histogram_search(X[:-3], 16)
    (sharded, ys, w), devices = shard_examples(search, y), jax.devices()
    m_pad = -(-45 // len(devices)) * len(devices)
    assert sharded.codes.shape == (D, m_pad) and ys.shape == w.shape == (m_pad,)
    np.testing.assert_array_equal(np.asarray(sharded.codes)[:, :45], search.codes)
    np.testing.assert_array_equal(np.asarray(sharded.codes)[:, 45:], 0)
    np.testing.assert_array_equal(w, np.r_[np.ones(45), np.zeros(m_pad - 45)])
    np.testing.assert_array_equal(ys[:45], y)
    assert sharded.shards.axis == EXAMPLES and sharded.codes.sharding.spec == P(None, EXAMPLES)
    np.testing.assert_array_equal(sharded.candidate_mask(), search.candidate_mask())
    H, _, w2 = shard_examples(np.ones((45, 2), np.int8), y, np.arange(45.0))
    assert H.dtype == jnp.int8 and H.shape == (m_pad, 2) and w2.dtype == jnp.float64
    np.testing.assert_array_equal(w2[:45], np.arange(45.0))


def test_shard_examples_bad_inputs():
    X, y = _data(np.float64)
    cases = [
        ((voters.stump_search(X), y), "histogram stump search"),
        ((np.ones(M), y), "2-D"),
        ((np.ones((M, 2)), y[:-1]), "shape"),
        ((np.ones((M, 2)), y * 2), "labels"),
        ((np.ones((M, 2)), y, -np.ones(M)), "sample_weight"),
    ]
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            shard_examples(*args)
    with pytest.raises(ValueError, match="at least one device"):
        shard_examples(np.ones((M, 2)), y, devices=[])


def test_device_side_checks_name_the_problem():
    """Value checks of ``jax.Array`` inputs run on their devices and say the same."""
    X, y = _data(np.float64)
    H = jnp.asarray(np.where(X[:, :2] > 0, 1.0, -1.0))
    for args, match in [
        ((H.at[0, 0].set(jnp.nan), jnp.asarray(y), T), "NaN"),
        ((H * 0.5, jnp.asarray(y), T), "binary"),
        ((H, jnp.asarray(y * 2), T), "labels must be -1 or \\+1"),
        ((H, jnp.ones(M), T), "both classes"),
    ]:
        with pytest.raises(ValueError, match=match):
            adaboost(*args)
    with pytest.raises(ValueError, match="sample_weight"):
        cbboost(H, jnp.asarray(y), T, sample_weight=jnp.zeros(M))


# AdaBoost: the same histogram pricing in the same rounds' loop (thorough)
@pytest.mark.parametrize("learner", [cbboost, pytest.param(adaboost, marks=pytest.mark.thorough)])
def test_histogram_run_plans_at_most_3x_the_codes(learner):
    """Issue #18 item 3, from XLA's plan of the whole compiled learner (100 rounds) at HIGGS's
    shape, ``m = 2^20`` examples of ``d = 28`` features (compiled, never run): arguments,
    temporaries and outputs together at most 3x the ``uint8`` codes, temporaries below one
    ``(d, m)`` float32 array (no per-round ``(d, m)`` gather: the exact search's round has one).
    """
    m, d, bins = 1 << 20, 28, 256
    f32 = jax.ShapeDtypeStruct((m,), jnp.float32)
    search = hs.HistogramSearch(
        jax.ShapeDtypeStruct((d, m), jnp.uint8),
        jax.ShapeDtypeStruct((d, bins - 1), jnp.float32),
        jax.ShapeDtypeStruct((d, bins), jnp.int32),
    )
    fit = jax.jit(lambda s, y, w: learner(s, y, 100, sample_weight=w))
    plan = fit.lower(search, f32, f32).compile().memory_analysis()
    if plan is None:
        pytest.skip("this backend gives no memory analysis")
    peak = plan.argument_size_in_bytes + plan.temp_size_in_bytes + plan.output_size_in_bytes
    codes = d * m
    assert peak - plan.alias_size_in_bytes <= 3 * codes + 64 * d * bins
    assert plan.temp_size_in_bytes < 4 * d * m


SHARDED = """
import re, sys
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
from pacbound.sweep import shard_examples
from pacbound.solvers import (adaboost, cbboost, cqboost, gbcbboost, mincq, minimize_bound,
    vebboost)
from pacbound.voters import histogram_search
devices = jax.devices()
assert len(devices) == 8
rng = np.random.default_rng(0)
m = 8 * 40 + 3  # padded to 328
X = rng.normal(size=(m, 4))
y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.8 * rng.normal(size=m) > 0, 1.0, -1.0)
w = rng.uniform(0.5, 2.0, m)
search = histogram_search(X, 16)
H = np.where(X[:, :2, None] > np.linspace(-1, 1, 8), 1.0, -1.0).reshape(m, 16)
H8 = H.astype(np.int8)
# the boosting loops (matrix-free on the codes, dense on float and int8 H), column
# generation's pricing on the codes, MinCq and a direct bound minimizer on H
# "<name>_stumps": the learner over the histogram search's codes
cases = {
    "cbboost_stumps": (cbboost, search, (10,), {}),
    "gbcbboost_stumps": (gbcbboost, search, (10,), {}),
    "adaboost_stumps": (adaboost, search, (10,), {}),
    "vebboost_stumps": (vebboost, search, (0.5, 10), {}),
    "cqboost_stumps": (cqboost, search, (0.1,), dict(max_columns=10)),
    "cbboost": (cbboost, H, (10,), {}),
    "adaboost": (adaboost, H8, (10,), {}), "mincq": (mincq, H, (0.05,), {}),
    "minimize_bound": (minimize_bound, H, ("seeger",), dict(max_iter=20)),
}
learners = [cases[name] for name in sys.argv[1:]]
# minimize_bound: Adam steps carry the other summation order's rounding
rtols = {"minimize_bound": 1e-6}
for fn, voters, args, options in learners:
    one = fn(voters, y, *args, sample_weight=w, **options)
    sharded, ys, ws = shard_examples(voters, y, w)
    assert ws.shape == (328,) and float(ws[m:].sum()) == 0
    data = sharded.codes if hasattr(sharded, "codes") else sharded
    axis = 1 if hasattr(sharded, "codes") else 0
    for array in (data, ys, ws):
        shards = array.addressable_shards
        assert len(shards) == 8 and all(s.data.shape[axis % s.data.ndim] == 41 for s in shards)
    eight = fn(sharded, ys, *args, sample_weight=ws, **options)
    rtol = rtols.get(fn.__name__, 1e-9)
    np.testing.assert_allclose(eight.q, one.q, rtol=rtol, atol=1e-12, err_msg=fn.__name__)
    np.testing.assert_allclose(eight.objective, one.objective, rtol=rtol, err_msg=fn.__name__)
    if eight.voters is not None:
        np.testing.assert_array_equal(eight.voters.thresholds, one.voters.thresholds)
    print(fn.__name__, "ok")
if "cbboost_stumps" in sys.argv:  # the compiled rounds: no all-gather, 1/8 of the examples
    from pacbound._src.learning.boosting import _boost
    from pacbound._src.solvers.cbboost import CBBOOST
    sharded, ys, ws = shard_examples(search, y, w)
    compiled = _boost.lower(CBBOOST, sharded, ys, ws, 10, (True, 0.0)).compile()
    text = compiled.as_text()
    assert "all-gather" not in text and "all-reduce" in text
    codes_bytes = sharded.codes.nbytes // 8 + 2 * ys.nbytes // 8
    assert compiled.memory_analysis().argument_size_in_bytes < codes_bytes + 4096
print("ok")
"""


# by default one learner of each kind: matrix-free boosting, column generation's pricing, int8
# boosting, MinCq and a bound minimizer on float H; the other boosting learners read the codes
# or H through the same rounds' loop (thorough)
SHARDED_LEARNERS = [
    ["cbboost_stumps", "cqboost_stumps", "adaboost", "mincq", "minimize_bound"],
    pytest.param(["gbcbboost_stumps", "adaboost_stumps", "vebboost_stumps", "cbboost"],
                 marks=pytest.mark.thorough),
]  # fmt: skip


@pytest.mark.parametrize("names", SHARDED_LEARNERS, ids=["default", "boosting"])
def test_sharded_over_8_devices_equals_one_device(names):
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, XLA_FLAGS=xla_flags("--xla_force_host_platform_device_count=8"),
               JAX_PLATFORMS="cpu", PYTHONPATH=path)  # fmt: skip
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SHARDED), *names], env=env,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        run.stdout[-2000:] + run.stderr[-3000:]
    )
