"""Scale (issue #18): the histogram stump search vs the exact search, LightGBM and scikit-learn.

Synthetic data shaped like HIGGS (d = 28: 21 "low-level" features, transverse momenta,
pseudorapidities, angles and 3-valued b-tags, then 7 "high-level" masses; labels from a fixed
logistic model; one fixed seed), m = 10^5 and 10^6 (``--huge`` adds 10^7). For every m:

* binning: :func:`pacbound._src.voters.histogram.bin_features` (max_bins = 255) vs LightGBM's
  ``lightgbm.Dataset(X, params={"max_bin": 255, "num_threads": 2}).construct()``;
* one round: :func:`pacbound._src.voters.histogram.histogram_edges` (every candidate's edge, one
  pass over the ``uint8`` codes) vs the physical floor, one NumPy pass over the same bytes
  (``codes.sum()``; also ``np.bincount`` of the weights, one feature, times d), and vs the exact
  search's round (:func:`pacbound.stump_edges`);
* the exact search's preparation (:func:`pacbound.voters.stump_search`) vs NumPy's argsort of
  the same columns (default kind and ``kind="stable"``);
* memory: the codes vs the exact search's cache; the temporaries of one compiled round
  (XLA's ``memory_analysis().temp_size_in_bytes``); the host peak of binning and of the exact
  preparation (``tracemalloc``, which sees NumPy's allocations, not XLA's buffers);
* learners: ``cbboost`` and ``adaboost`` (100 rounds; the exact search's 10 at
  m = 10^7, where its round takes seconds) on either search: compile
  time (first call minus a later one), time a round (a later call / 100), XLA's planned peak
  (arguments + temporaries + outputs of the whole compiled learner) over the codes' bytes;
* peers' rounds: LightGBM ``lgb.train`` (num_leaves = 2, max_bin = 255, Dataset built
  beforehand, ``(train(101) - train(1)) / 100``) with num_threads = 2 and = 1, and
  scikit-learn's ``HistGradientBoostingClassifier(max_leaf_nodes=2)``
  (``(fit(100) - fit(1)) / 99``, so its binning is excluded). A peer's round also computes
  gradients and updates scores, as the learners' rounds do;
* ratios: each learner's round over LightGBM's, scikit-learn's and one NumPy pass over the
  codes; end to end (preparation + compilation + 100 rounds) over LightGBM's (binning +
  100 rounds), printed and in the JSON (``rows[i]["ratios"]``).

``--sharded M`` also runs the histogram learners at m = M on 8 simulated CPU devices (a
subprocess) against one device and records the agreement and each device's share of the codes
(correctness, not speed). ``--variants`` also times the designs of the histogram pass
considered for the module at m = 10^6 (or the largest m asked for below it). Timings are
medians after a warm-up for jitted calls (compilation excluded), with
``jax.block_until_ready``, in wall and in process-CPU seconds (all threads; the fairer figure
when other jobs share the 2 cores, whose load average is recorded). LightGBM / scikit-learn
are skipped when missing::

    python benchmarks/bench_scale.py [--sizes 1e5 1e6] [--huge] [--variants] [--sharded 1e5]
        [--repeats 5]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
from common import RESULTS, print_table, write_json
from jax import lax

from pacbound import solvers, voters
from pacbound._src.voters import histogram as hs
from pacbound._src.voters.exact_search import stump_edges
from pacbound.certify import certify_margins

D, MAX_BINS, ROUNDS, SEED = 28, 255, 100, 0
EXACT_ROUNDS_HUGE = 10  # the exact search's learners at m = 10^7 (seconds a round)


def higgs_like(m: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(m, 28)`` float32 features in HIGGS's column layout and ``(m,)`` labels in {-1, +1}."""
    rng = np.random.default_rng(seed)
    cols = []
    for _ in range(6):  # lepton, missing energy (no eta, no b-tag), 4 jets: pT, eta, phi, btag
        cols += [rng.lognormal(0, 0.5, m), rng.normal(0, 1, m), rng.uniform(-1.74, 1.74, m)]
        cols.append(rng.choice([0.0, 1.087, 2.173], m, p=[0.5, 0.3, 0.2]))
    X = np.stack(cols, axis=1)[:, [0, 1, 2, 4, 6, *range(8, 24)]]  # 21 low-level columns
    masses = rng.lognormal(0, 0.3, (m, 7)) + 0.1 * X[:, :7]  # 7 high-level, correlated
    X = np.concatenate([X, masses], axis=1).astype(np.float32)
    w = np.random.default_rng(SEED + 1).normal(size=D)  # one labelling model for every sample
    logits = (X - X.mean(0)) / X.std(0) @ w / np.sqrt(D)
    y = np.where(rng.random(m) < 1 / (1 + np.exp(-logits)), 1.0, -1.0)
    return X, y.astype(np.float32)


def _times(fn, *args, repeats: int = 3, warmup: bool = False) -> tuple[float, float]:
    """Median wall and process-CPU seconds of ``fn(*args)``, blocking on its result.

    CPU time (all threads) is the fairer statistic when other jobs share the cores: it counts
    the work done, not the waiting; wall time counts both.
    """
    if warmup:
        jax.block_until_ready(fn(*args))
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(fn(*args))
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def _record(row: dict, name: str, times: tuple[float, float], scale: float = 1.0) -> None:
    row[f"{name}_s"], row[f"{name}_cpu_s"] = (scale * t for t in times)


def _host_peak(fn, *args) -> int:
    """Peak bytes of host allocations tracemalloc sees (NumPy's) during ``fn(*args)``."""
    tracemalloc.start()
    jax.block_until_ready(fn(*args))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _temp_bytes(fn, *args) -> int:
    """Temporary bytes XLA allocates for one compiled call of ``fn(*args)``."""
    analysis = jax.jit(fn).lower(*args).compile().memory_analysis()
    return int(analysis.temp_size_in_bytes) if analysis is not None else -1


def lightgbm_times(X, y, row: dict) -> None:
    """LightGBM binning (Dataset construct) and one boosting round of a 2-leaf tree, the round
    as ``(train(101) - train(1)) / 100`` (setup excluded), with 2 threads and with 1 (on a
    shared 2-core machine LightGBM's 2 OpenMP threads can be slower than one)."""
    try:
        import lightgbm as lgb
    except ImportError:
        row["lightgbm"] = "not installed"
        return
    for threads, name in ((2, "lgb"), (1, "lgb1")):
        params = {"max_bin": MAX_BINS, "num_threads": threads, "verbose": -1}

        def construct(params=params):
            return lgb.Dataset(X, (y > 0).astype(np.float32), params=params).construct()

        _record(row, f"{name}_bin", _times(construct))
        train = {**params, "objective": "binary", "num_leaves": 2, "learning_rate": 0.1}
        data = construct()

        def fit(rounds, train=train, data=data):
            return _times(lambda: lgb.train(train, data, num_boost_round=rounds), repeats=1)

        many, one = fit(ROUNDS + 1), fit(1)
        _record(row, f"{name}_round", [(t - u) / ROUNDS for t, u in zip(many, one)])


def sklearn_round(X, y, row: dict) -> None:
    """``(fit(100) - fit(1)) / 99`` of HistGradientBoostingClassifier(max_leaf_nodes=2)."""
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
    except ImportError:
        row["sklearn"] = "not installed"
        return

    def fit(rounds):
        model = HistGradientBoostingClassifier(
            max_leaf_nodes=2, max_iter=rounds, early_stopping=False, random_state=0
        )
        return _times(model.fit, X, y, repeats=1)

    many, one = fit(ROUNDS), fit(1)
    _record(row, "hgb_round", [(t - u) / (ROUNDS - 1) for t, u in zip(many, one)])


LEARNERS = {"cbboost": solvers.cbboost, "adaboost": solvers.adaboost}


def _program_bytes(fn, *args) -> dict:
    """XLA's planned bytes of one compiled call of ``fn(*args)`` (arguments, temporaries,
    outputs; aliased bytes counted once)."""
    a = jax.jit(fn).lower(*args).compile().memory_analysis()
    if a is None:
        return {}
    total = a.argument_size_in_bytes + a.output_size_in_bytes + a.temp_size_in_bytes
    return {
        "argument_bytes": int(a.argument_size_in_bytes),
        "temp_bytes": int(a.temp_size_in_bytes),
        "peak_bytes": int(total - a.alias_size_in_bytes),
    }


TEST_M, TEST_SEED, CHUNK = 10**5, SEED + 7, 10**6  # the test sample: same model, fresh seed
QUALITY = ("train_risk", "test_risk", "pac_bound_2", "cbound_roy2016")  # quality()'s keys


@jax.jit
def _block_margins(stumps, weights, Xb, yb):
    return yb * (stumps.votes(Xb, jnp.float32) @ weights.astype(jnp.float32))


def _margins(result, X, y) -> np.ndarray:
    """``y_i sum_s w_s S_s(x_i)`` of a matrix-free result, float32, in blocks of ``CHUNK``
    examples: ``pacbound.certify(result, X, y)`` would hold the ``(m, n)`` float64 votes of all
    of ``X`` at once, 8 GB at m = 10^7 and 100 rounds."""
    blocks = [(X[i : i + CHUNK], y[i : i + CHUNK]) for i in range(0, len(y), CHUNK)]
    return np.concatenate(
        [np.asarray(_block_margins(result.voters, result.weights, *b)) for b in blocks]
    )


def quality(result, X, y, X_test, y_test) -> dict:
    """Training and test risk of the majority vote (a tie counts as an error), and its
    PAC-Bound 2 (germain2015) and roy2016 C-bound at delta = 0.05 with the uniform prior over
    every candidate stump and its complement (:func:`pacbound.certify.certify_margins`; the
    ``KL`` as :func:`pacbound.certify.certify` computes it for a matrix-free result)."""
    q = np.asarray(result.q, np.float64)
    kl = float(np.sum(q[q > 0] * np.log(q[q > 0])) + np.log(2.0 * int(result.info.n_candidates)))
    margins = _margins(result, X, y)
    cert = certify_margins(margins, kl, bounds=["pac_bound_2", "cbound_roy2016"])
    return {
        "train_risk": float(np.mean(margins <= 0)),
        "test_risk": float(np.mean(_margins(result, X_test, y_test) <= 0)),
        "pac_bound_2": float(cert.bounds["pac_bound_2"]),
        "cbound_roy2016": float(cert.bounds["cbound_roy2016"]),
    }


def learner_times(search, X, y, test, search_name: str, row: dict, rounds: int = ROUNDS) -> None:
    """Compile time, time per round and planned memory of each learner in :data:`LEARNERS`.

    ``first`` = the first call (compilation + run), ``run`` = the median of later calls; the
    compile time is their difference and a round is ``run / rounds``.
    """
    y_train = jnp.asarray(y)
    for name, learner in LEARNERS.items():
        fit = jax.jit(functools.partial(learner, n_rounds=rounds))
        start = time.perf_counter()
        result = jax.block_until_ready(fit(search, y_train))
        first = time.perf_counter() - start
        key = f"{name}_{search_name}"
        run = _times(fit, search, y_train, repeats=1)
        _record(row, f"{key}_round", run, 1 / rounds)
        row[f"{key}_compile_s"] = first - run[0]
        row[f"{key}_steps"] = int(result.steps)
        row[f"{key}_rounds_run"] = rounds
        for stat, value in quality(result, X, y, *test).items():
            row[f"{key}_{stat}"] = value
        for stat, value in _program_bytes(fit, search, y_train).items():
            row[f"{key}_{stat}"] = value
        print(f"  {key}: {1e3 * row[f'{key}_round_s']:.1f} ms a round, test risk "
              f"{row[f'{key}_test_risk']:.4f}, PAC-Bound 2 {row[f'{key}_pac_bound_2']:.4f}",
              flush=True)  # fmt: skip


def bench_size(m: int, repeats: int) -> dict:
    X, y = higgs_like(m)
    a = jnp.asarray(y / m)
    row = {"m": m, "d": D, "load_before": os.getloadavg()[0]}
    _record(row, "bin", _times(hs.bin_features, X, MAX_BINS))
    row["bin_host_peak_bytes"] = _host_peak(hs.bin_features, X, MAX_BINS)
    search = hs.histogram_search(X, MAX_BINS)
    _record(row, "pass", _times(hs.histogram_edges, search, a, repeats=repeats, warmup=True))
    row["pass_temp_bytes"] = _temp_bytes(hs.histogram_edges, search, a)
    row["codes_bytes"] = search.codes.nbytes
    codes, a_np = np.asarray(search.codes), np.asarray(a)
    _record(row, "floor_sum", _times(lambda: codes.sum(dtype=np.uint64), repeats=repeats))
    _record(row, "floor_bincount", _times(np.bincount, codes[0], a_np, 256), D)
    XT = np.ascontiguousarray(X.T)
    _record(row, "argsort", _times(np.argsort, XT, 1, repeats=1))
    _record(row, "argsort_stable", _times(lambda: np.argsort(XT, 1, kind="stable"), repeats=1))
    exact = voters.stump_search(X)  # warm-up: compiles the midpoints for this shape
    _record(row, "exact_prep", _times(voters.stump_search, X, repeats=1))
    row["exact_prep_host_peak_bytes"] = _host_peak(voters.stump_search, X)
    row["exact_bytes"] = sum(x.nbytes for x in exact)
    times = _times(stump_edges, exact, a, repeats=repeats, warmup=True)
    _record(row, "exact_round", times)
    row["exact_round_temp_bytes"] = _temp_bytes(stump_edges, exact, a)
    # at m = 10^7 a round of the exact search takes seconds: its learners run EXACT_ROUNDS_HUGE
    # rounds there (the per-round time and the planned memory do not depend on the count)
    test = higgs_like(TEST_M, TEST_SEED)
    learner_times(exact, X, y, test, "exact", row, ROUNDS if m < 10**7 else EXACT_ROUNDS_HUGE)
    del exact
    learner_times(search, X, y, test, "hist", row)
    lightgbm_times(X, y, row)
    sklearn_round(X, y, row)
    row["load_after"] = os.getloadavg()[0]
    return row


# ------------------------------------------------------- designs of the pass (--variants)
def _flat_index(codes_md, bins):
    return codes_md.astype(jnp.int32) + bins * jnp.arange(codes_md.shape[1], dtype=jnp.int32)


def _scatter_all(codes_md, a, bins):  # every feature at once, a broadcast to (m, d)
    idx = _flat_index(codes_md, bins)
    data = jnp.broadcast_to(a[:, None], idx.shape)
    return jnp.zeros(idx.shape[1] * bins, a.dtype).at[idx].add(data).reshape(-1, bins)


def _segment_sum_all(codes_md, a, bins):
    idx = _flat_index(codes_md, bins)
    data = jnp.broadcast_to(a[:, None], idx.shape).ravel()
    return jax.ops.segment_sum(data, idx.ravel(), idx.shape[1] * bins).reshape(-1, bins)


def _vmapped_scatter(codes, a, bins):  # (d, m): one batched scatter
    return jax.vmap(lambda c: jnp.zeros(bins, a.dtype).at[c].add(a))(codes)


def _per_feature_whole(codes, a, bins):  # (d, m): lax.map over features, all m at once
    return lax.map(lambda c: jnp.zeros(bins, a.dtype).at[c].add(a), codes)


def _chunks(body, chunk):
    """``body(codes_md block, a block)`` summed over blocks of ``chunk`` examples (a scan)."""

    def run(codes_md, a, bins):
        n = codes_md.shape[0] // chunk
        d = codes_md.shape[1]
        blocks = (codes_md[: n * chunk].reshape(n, chunk, d), a[: n * chunk].reshape(n, chunk))
        init = jnp.zeros((d, bins), a.dtype)
        total = lax.scan(lambda h, x: (h + body(*x, bins), None), init, blocks)[0]
        return total + body(codes_md[n * chunk :], a[n * chunk :], bins)

    return run


def _one_hot(codes_md, a, bins):
    return jnp.einsum("c,cfb->fb", a, (codes_md[..., None] == jnp.arange(bins)).astype(a.dtype))


def _nibbles(codes_md, a, bins):  # hist_f = onehot_hi^T diag(a) onehot_lo, 16 x 16 blocks
    hi = (codes_md[..., None] >> 4) == jnp.arange(16, dtype=jnp.uint8)
    lo = (codes_md[..., None] & 15) == jnp.arange(16, dtype=jnp.uint8)
    prod = jnp.einsum("cfh,cfl->fhl", hi.astype(a.dtype), jnp.where(lo, a[:, None, None], 0))
    return prod.reshape(-1, 256)[:, :bins]


def _pairs(codes_md, a, bins):  # joint histograms of features (2j, 2j+1): half the scatters
    c = codes_md.astype(jnp.int32)
    idx = c[:, 0::2] * bins + c[:, 1::2] + bins * bins * jnp.arange(c.shape[1] // 2)
    joint = (
        jnp.zeros(c.shape[1] // 2 * bins * bins, a.dtype)
        .at[idx]
        .add(jnp.broadcast_to(a[:, None], idx.shape))
    )
    joint = joint.reshape(-1, bins, bins)
    return jnp.stack([joint.sum(2), joint.sum(1)], 1).reshape(-1, bins)


def _quantized(codes, a, bins):  # int32 accumulation of a on a 2^-20 grid (inexact)
    scale = jnp.max(jnp.abs(a)) / 2**20
    q = jnp.round(a / scale).astype(jnp.int32)
    hist = lax.map(lambda c: jnp.zeros(bins, jnp.int32).at[c].add(q), codes)
    return hist.astype(a.dtype) * scale


def pass_variants(m: int, repeats: int) -> list[dict]:
    """Time every considered design of one histogram pass against np.bincount."""
    X, y = higgs_like(m)
    codes = hs.bin_features(X, 256).codes
    codes_md, a = jnp.asarray(np.ascontiguousarray(np.asarray(codes).T)), jnp.asarray(y / m)
    ref = np.stack([np.bincount(c, np.asarray(a, np.float64), 256) for c in np.asarray(codes)])
    skewed = hs.skewed_features(hs.bin_features(X, 256).counts)

    def kept(c, a, bins):
        return hs.histograms(c, a, bins, skewed=skewed)

    designs = {
        "kept: per-feature scatter, fori over features in blocks of CHUNK, (d, m), "
        "skewed features in 8 interleaved copies": (kept, codes),
        "the same, no interleaved copies": (hs.histograms, codes),
        "scatter, all features at once, broadcast a, (m, d)": (_scatter_all, codes_md),
        "segment_sum, all features at once, (m, d)": (_segment_sum_all, codes_md),
        "scatter, all features, scan over 65536-blocks, (m, d)": (
            _chunks(_scatter_all, 65536), codes_md),
        "segment_sum, scan over 65536-blocks, (m, d)": (_chunks(_segment_sum_all, 65536), codes_md),
        "vmapped (batched) per-feature scatter, (d, m)": (_vmapped_scatter, codes),
        "per-feature scatter over all m (lax.map), (d, m)": (_per_feature_whole, codes),
        "joint histograms of feature pairs, scan, (m, d)": (_chunks(_pairs, 65536), codes_md),
        "one-hot matmul, scan over 1024-blocks, (m, d)": (_chunks(_one_hot, 1024), codes_md),
        "nibble 16x16 matmuls, scan over 1024-blocks, (m, d)": (_chunks(_nibbles, 1024), codes_md),
        "int32 accumulation of quantized a (lax.map), (d, m)": (_quantized, codes),
    }  # fmt: skip
    a_np, codes_np = np.asarray(a), np.asarray(codes)
    wall, cpu = _times(lambda: [np.bincount(c, a_np, 256) for c in codes_np], repeats=repeats)
    rows = [{"design": "NumPy bincount per feature (reference)", "s": wall, "cpu_s": cpu}]
    for name, (fn, c) in designs.items():
        run = jax.jit(functools.partial(fn, bins=256))
        wall, cpu = _times(run, c, a, repeats=repeats, warmup=True)
        error = float(np.max(np.abs(np.asarray(run(c, a), np.float64) - ref)) / np.abs(ref).max())
        rows.append({"design": name, "s": wall, "cpu_s": cpu, "max_rel_error": error})
        print(f"  {1e3 * wall:8.1f} ms wall {1e3 * cpu:8.1f} ms cpu  {name}", flush=True)
    return rows


def interleaving(m: int, repeats: int) -> list[dict]:
    """The kept pass with and without interleaved copies on uniform, 3-valued, equal codes."""
    rng = np.random.default_rng(SEED)
    a = jnp.asarray(rng.normal(size=m).astype(np.float32))
    sets = {
        "uniform over 255 bins": rng.integers(0, 255, (D, m)),
        "3 values (p = .5, .3, .2)": rng.choice(3, (D, m), p=[0.5, 0.3, 0.2]),
        "one value": np.zeros((D, m)),
    }
    rows = []
    for name, codes in sets.items():
        codes = jnp.asarray(codes.astype(np.uint8))
        row = {"codes": name}
        for label, skewed in (("plain", None), ("interleaved", np.ones(D, bool))):
            run = jax.jit(functools.partial(hs.histograms, bins=256, skewed=skewed))
            row[f"{label}_s"], row[f"{label}_cpu_s"] = _times(run, codes, a, warmup=True)
        print(f"  {name}: {row}", flush=True)
        rows.append(row)
    return rows


def _ratios(r: dict, unit: str) -> list:
    """One table row of ratios of ``unit`` ("s": wall, "cpu_s": CPU) times; nan if missing."""

    def t(name):
        return r.get(f"{name}_{unit}", float("nan"))

    return [
        r["m"], unit, t("bin") / t("lgb_bin"), t("pass") * 1e3, t("pass") / t("floor_sum"),
        t("pass") / t("floor_bincount"), t("exact_round") / t("pass"),
        t("exact_prep") / t("argsort"), t("exact_prep") / t("argsort_stable"),
        t("lgb_round") / t("pass"), t("hgb_round") / t("pass"),
        r["exact_bytes"] / r["codes_bytes"], r["pass_temp_bytes"] / r["codes_bytes"],
    ]  # fmt: skip


HEADER = [
    "m", "time", "bin/lgb", "pass ms", "pass/sum", "pass/bincount", "exact/pass",
    "prep/argsort", "prep/stable", "lgb round/pass", "hgb round/pass", "exact B/codes B",
    "pass temp/codes",
]  # fmt: skip


def learner_ratios(r: dict) -> dict:
    """Per learner and search: its round as a multiple of LightGBM's, scikit-learn's and one
    NumPy pass over the codes; its end to end (preparation + compilation + 100 rounds) as a
    multiple of LightGBM's (binning + 100 rounds); its planned peak memory over the codes."""
    nan = float("nan")
    lgb_total = r.get("lgb_bin_s", nan) + ROUNDS * r.get("lgb_round_s", nan)
    ratios = {}
    for name in LEARNERS:
        for search, prep in (("hist", "bin"), ("exact", "exact_prep")):
            key = f"{name}_{search}"
            round_s = r[f"{key}_round_s"]
            total = r[f"{prep}_s"] + r[f"{key}_compile_s"] + ROUNDS * round_s
            ratios[key] = {
                "round_ms": 1e3 * round_s,
                "round_over_lgb": round_s / r.get("lgb_round_s", nan),
                "round_over_hgb": round_s / r.get("hgb_round_s", nan),
                "round_over_numpy_pass": round_s / r["floor_sum_s"],
                "round_over_lgb_1_thread": round_s / r.get("lgb1_round_s", nan),
                "round_cpu_over_lgb_cpu": r[f"{key}_round_cpu_s"] / r.get("lgb_round_cpu_s", nan),
                "end_to_end_over_lgb": total / lgb_total,
                "peak_bytes_over_codes": r.get(f"{key}_peak_bytes", nan) / r["codes_bytes"],
                **{stat: r[f"{key}_{stat}"] for stat in QUALITY},
            }
    return ratios


LEARNER_HEADER = [
    "m", "learner", "round ms", "/lgb", "/hgb", "/numpy pass", "/lgb 1 thread", "cpu/lgb cpu",
    "end to end/lgb", "peak B/codes B", "train risk", "test risk", "PAC-Bound 2", "roy2016",
]  # fmt: skip


SHARDED = """
import json, sys, time
import jax, numpy as np
from bench_scale import LEARNERS, MAX_BINS, ROUNDS, higgs_like
from pacbound.sweep import shard_examples
from pacbound.voters import histogram_search
m = int(sys.argv[1])
X, y = higgs_like(m)
search = histogram_search(X, MAX_BINS)
sharded, ys, ws = shard_examples(search, y)
out = {"m": m, "devices": len(jax.devices()), "padded_m": int(ys.shape[0]),
       "codes_bytes_per_device": [s.data.nbytes for s in sharded.codes.addressable_shards]}
for name, learner in LEARNERS.items():
    one = learner(search, y, ROUNDS)
    eight = learner(sharded, ys, ROUNDS, sample_weight=ws)
    start = time.perf_counter()
    jax.block_until_ready(learner(sharded, ys, ROUNDS, sample_weight=ws))
    out[name] = {"max_abs_q_difference": float(np.max(np.abs(np.asarray(one.q - eight.q)))),
                 "same_stumps": bool(np.array_equal(one.voters.thresholds,
                                                    eight.voters.thresholds)),
                 "round_s": (time.perf_counter() - start) / ROUNDS}
print(json.dumps(out))
"""


def sharded_run(m: int, devices: int = 8) -> dict:
    """The histogram learners on ``devices`` simulated CPU devices (a subprocess, since the
    device count is fixed when jax starts) against one device: correctness, not speed."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               JAX_PLATFORMS="cpu")  # fmt: skip
    here = os.path.dirname(os.path.abspath(__file__))
    run = subprocess.run([sys.executable, "-c", SHARDED, str(m)], env=env, cwd=here,
                         capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(run.stdout.strip().splitlines()[-1])


def _previous_variants(path: str) -> dict | None:
    """The pass designs of an earlier run in ``path`` (kept when not re-measured)."""
    try:
        with open(path) as f:
            return json.load(f).get("pass_variants")
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e5, 1e6])
    parser.add_argument("--huge", action="store_true", help="add m = 10^7")
    parser.add_argument("--variants", action="store_true", help="time the pass designs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sharded", type=float, default=0,
                        help="also run the learners at this m on 8 simulated devices")  # fmt: skip
    parser.add_argument("--json", default=str(RESULTS / "bench_scale.json"))
    args = parser.parse_args(argv)
    sizes = [int(m) for m in args.sizes] + ([10**7] if args.huge else [])
    print(f"backend {jax.default_backend()}, load {os.getloadavg()}")
    rows = []
    for m in sizes:
        rows.append(bench_size(m, args.repeats))
        print({k: v for k, v in rows[-1].items()}, flush=True)
    variants, skew = [], []
    if args.variants:
        m = max([s for s in sizes if s <= 10**6], default=10**6)
        print(f"designs of the pass at m = {m}:")
        variants = pass_variants(m, args.repeats)
        print("interleaved copies:")
        skew = interleaving(m, args.repeats)
    print_table(HEADER, [_ratios(r, unit) for r in rows for unit in ("s", "cpu_s")])
    for r in rows:
        r["ratios"] = learner_ratios(r)
    table = [[r["m"], key, *v.values()] for r in rows for key, v in r["ratios"].items()]
    print_table(LEARNER_HEADER, table)
    print("pass = histogram_edges (ours); sum = one NumPy pass over the codes; bincount = "
          "np.bincount of one feature x d; exact = stump_edges; prep = stump_search")  # fmt: skip
    payload = {
        "rows": rows,
        "pass_variants": {"m": m, "rows": variants, "interleaving": skew}
        if variants
        else _previous_variants(args.json),
    }
    if args.sharded:
        payload["sharded_8_devices"] = sharded_run(int(args.sharded))
        print("8 simulated devices:", payload["sharded_8_devices"])
    write_json("bench_scale", payload, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
