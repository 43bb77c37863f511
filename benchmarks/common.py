"""Shared helpers of the benchmark scripts: timing, tables, JSON results.

Timings are medians of repeated calls after one warm-up call (compilation excluded unless a
script times it separately), with ``jax.block_until_ready`` on every result. The machines are
shared and noisy: quote ratios between rows of one run, not absolute times.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import jax

RESULTS = Path(__file__).resolve().parent / "results"


def median_time(fn: Callable, *args, repeats: int = 5, warmup: bool = True) -> float:
    """Median wall time in seconds of ``fn(*args)``, blocking on its result."""
    if warmup:
        jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def print_table(header: Sequence[str], rows: Sequence[Sequence]) -> None:
    """Print rows as an aligned plain-text table (floats with 4 significant digits)."""
    cells = [[f"{c:.4g}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))


def write_json(name: str, payload: dict, path: str | Path | None = None) -> Path:
    """Write ``payload`` plus the machine's description to ``results/<name>.json`` (or path)."""
    out = Path(path) if path else RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    machine = {
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "jax": jax.__version__,
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
    }
    out.write_text(json.dumps({"machine": machine, **payload}, indent=2) + "\n")
    return out
