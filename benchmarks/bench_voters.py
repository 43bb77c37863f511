"""Matrix-free best-stump search vs ``H.T @ a`` on a materialized stump matrix.

The column generator of CqBoost / LPBoost (roy2016 Alg. 1) needs
``argmax_h |sum_i a_i h(x_i)|`` over every decision stump. Two ways:

* matrix-free (:func:`pacbound.voters.best_stump`): features sorted once, then one gather, one
  cumulative sum and one argmax per call over all ``m - 1`` thresholds of every feature;
* materialized: ``H`` with one column per *distinct* threshold (the same voter set, ties
  removed), then ``H.T @ a`` and an argmax. When ``H`` exceeds ``--max-gib`` only its first
  columns are built and the time is extrapolated linearly (marked ``*``).

Also timed, for reference: the papers' 10 thresholds per feature (a much smaller voter set).
Needs the shared data (``PACBOUND_DATA`` or ``../shared/data``)::

    python benchmarks/bench_voters.py [--repeats 20] [--max-gib 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from pacbound import datasets, voters

DATASETS = {"letter": "letter:Avrest", "magic": "magic"}
GIB = 2.0**30


def _time(fn, *args, repeats: int) -> float:
    """Median wall time (seconds) of ``fn(*args)`` after one warm-up (compilation) call."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@jax.jit
def _dense_best(H: jax.Array, a: jax.Array) -> tuple[jax.Array, jax.Array]:
    edges = a @ H  # = H.T @ a; XLA:CPU runs the literal H.T @ a about 10x slower
    j = jnp.argmax(jnp.abs(edges))
    return j, edges[j]


def _distinct_stumps(search: voters.StumpSearch) -> voters.Stumps:
    valid = np.asarray(search.valid)
    features = np.nonzero(valid)[0].astype(np.int32)
    return voters.Stumps(jnp.asarray(features), jnp.asarray(search.thresholds)[valid])


def _materialized(X, a, stumps: voters.Stumps, max_bytes: float, repeats: int) -> dict:
    """Time ``H.T @ a`` (float32 H), on the first columns only when H is over ``max_bytes``."""
    m, n = X.shape[0], stumps.features.shape[0]
    cols = int(min(n, max_bytes // (4 * m)))
    sub = voters.Stumps(stumps.features[:cols], stumps.thresholds[:cols])
    start = time.perf_counter()
    H = jax.block_until_ready(voters.votes(sub, X, dtype=jnp.float32))
    build = time.perf_counter() - start
    seconds = _time(_dense_best, H, a, repeats=repeats) * n / cols
    del H
    return {"seconds": seconds, "build_seconds": build * n / cols, "extrapolated": cols < n}


def bench(name: str, spec: str, repeats: int, max_bytes: float) -> dict:
    ds = datasets.load(spec)
    X = jnp.asarray(ds.X, jnp.float32)
    m, d = X.shape
    a = jnp.asarray(ds.y / m, jnp.float32)  # y * u with uniform dual weights u = 1/m
    start = time.perf_counter()
    search = jax.block_until_ready(voters.stump_search(X))
    sort_seconds = time.perf_counter() - start
    mf_seconds = _time(voters.best_stump, search, a, repeats=repeats)
    stumps = _distinct_stumps(search)
    n = int(stumps.features.shape[0])
    dense = _materialized(X, a, stumps, max_bytes, repeats)
    ten = voters.fit_stumps(ds.X, 10)
    ten_seconds = _time(_dense_best, voters.votes(ten, X), a, repeats=repeats)
    best = voters.best_stump(search, a)
    cache = search.order.nbytes + search.thresholds.nbytes + search.valid.nbytes
    return {
        "dataset": name, "m": m, "d": d, "distinct_stumps": n, "positions": d * (m - 1),
        "matrix_free_seconds": mf_seconds, "sort_seconds": sort_seconds,
        "dense_seconds": dense["seconds"], "dense_build_seconds": dense["build_seconds"],
        "dense_extrapolated": dense["extrapolated"], "ratio": dense["seconds"] / mf_seconds,
        "ten_thresholds_seconds": ten_seconds, "best_edge": float(best.score),
        "matrix_free_bytes": cache, "matrix_free_call_bytes": 2 * d * m * 4,
        "dense_bytes_f32": 4 * m * n, "dense_bytes_int8": m * n,
        "dense_all_positions_bytes_f32": 4 * m * d * (m - 1),
    }  # fmt: skip


def _report(rows: list[dict]) -> None:
    print(f"backend: {jax.default_backend()}, {jax.devices()[0].device_kind}")
    head = (
        f"{'dataset':8} {'m':>6} {'d':>3} {'stumps':>7} {'free ms':>8} {'H.T@a ms':>9} "
        f"{'ratio':>6} {'10/feat ms':>10} {'free MiB':>9} {'H f32 MiB':>10} {'H int8':>8} "
        f"{'H all m-1 GiB':>13}"
    )
    print(head)
    for r in rows:
        star = "*" if r["dense_extrapolated"] else " "
        print(
            f"{r['dataset']:8} {r['m']:>6} {r['d']:>3} {r['distinct_stumps']:>7} "
            f"{1e3 * r['matrix_free_seconds']:>8.2f} {1e3 * r['dense_seconds']:>8.2f}{star} "
            f"{r['ratio']:>6.1f} {1e3 * r['ten_thresholds_seconds']:>10.3f} "
            f"{(r['matrix_free_bytes'] + r['matrix_free_call_bytes']) / 2**20:>9.1f} "
            f"{r['dense_bytes_f32'] / 2**20:>10.1f} {r['dense_bytes_int8'] / 2**20:>8.1f} "
            f"{r['dense_all_positions_bytes_f32'] / GIB:>13.1f}"
        )
    print("ratio = H.T@a time / matrix-free time; * = extrapolated from the columns that fit.")
    print("free MiB = sort cache + per-call gather/cumsum buffers; H = one column per distinct")
    print("threshold; 'H all m-1' = one column per sorted position (ties kept), float32.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--max-gib", type=float, default=1.0, help="largest H to build")
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = parser.parse_args(argv)
    os.environ.setdefault("PACBOUND_DATA", str(Path(__file__).parents[2] / "shared" / "data"))
    if not Path(os.environ["PACBOUND_DATA"]).is_dir():
        print(f"shared data not found at {os.environ['PACBOUND_DATA']}: skipping")
        return 0
    rows = [bench(k, v, args.repeats, args.max_gib * GIB) for k, v in DATASETS.items()]
    _report(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
