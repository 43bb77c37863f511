"""First calls (issue #37 point 1): what a user waits for in a fresh process, cold and warm.

Every item runs in a **fresh process** (``sys.executable -c ...``, started in an empty
temporary folder so that only ``PYTHONPATH`` chooses the checkout), with ``JAX_PLATFORMS=cpu``,
XLA's default flags (``XLA_FLAGS`` cleared) and no ``JAX_ENABLE_X64`` /
``JAX_COMPILATION_CACHE_DIR`` from the caller:

* **cold**: JAX's persistent compilation cache off (``PACBOUND_NO_COMPILATION_CACHE=1``);
* **warm**: on, in a fresh temporary ``PACBOUND_COMPILATION_CACHE_DIR`` for the item, after one
  priming run of the same item that filled it (the library items turn the cache on with
  pacbound's own ``enable_compilation_cache``, as the command and the estimators do; the
  ``pacbound demo`` item does it itself).

Items: ``import pacbound``; every function of ``pacbound.bounds.__all__`` on plausible scalar
statistics (:data:`BOUND_ARGUMENTS`; a bound without an entry there is reported, not run), in
float32 and in float64 (``jax_enable_x64`` and float64 inputs); ``certify.certify(result, H, y)``
with the default bounds, ``result`` a 6-round CB-Boost (breast cancer, ``voters.fit_stumps(X,
10)``, ``voters.votes``: ``H`` is 569 x 300); each learner of ``solvers.LEARNERS`` on that ``H``
(small settings, :data:`EXAMPLES`) and the greedy ones over ``voters.stump_search(X)``;
``solvers.minimize_bound`` (30 steps) for each bound of ``certify.BOUNDS`` it accepts (a
refusal is reported); ``sweep.grid(solvers.mincq, H, y, mu=<15 values>)``; the ``pacbound demo``
console command (the entry point the checkout's ``pyproject.toml`` declares, whole process).

Columns: ``cold`` / ``warm`` the item's call, timed inside the child from just before it to
after ``jax.block_until_ready`` of its result (setup, such as loading the data or fitting the
learner ``certify`` reads, is outside; for the demo, the whole process); ``wall`` the whole
child process as the parent saw it (interpreter start and imports included); ``new/base`` the
new cold call over the baseline's. ``--baseline PATH`` runs the same items, cold, against
another checkout (``PYTHONPATH=PATH``; on a checkout whose learners took a stump search through
separate ``<name>_stumps`` functions, those are called); an item that does not exist on one
side shows ``-``. ``--quick`` runs a few items (a smoke test). The machines are shared and
noisy: quote ratios of one sitting, not absolute times.

Run: ``python benchmarks/bench_first_call.py [--baseline PATH] [--quick] [--json PATH]``;
prints the table and writes ``benchmarks/results/bench_first_call.json`` (or ``PATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from learner_examples import EXAMPLES, GREEDY

# this file is also the children's code: nothing above imports JAX or pacbound, so that the
# ``import pacbound`` item is timed from a bare interpreter
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MARK = "@@first-call@@ "

# plausible statistics of a sample of m = 500 for each public bound (read from its signature and
# docstring); a float becomes an array of the item's dtype, an int stays a Python int (a count),
# a list becomes an array (integer if its entries are)
STATS = {"kl": 2.0, "delta": 0.05}
GIBBS = {"risk": 0.1, **STATS, "m": 500}
VOTE = {"gibbs_risk": 0.15, "disagreement": 0.2, **STATS, "m": 500}
BOUND_ARGUMENTS: dict[str, dict] = {
    "binomial_tail_inversion": {"k": 3, "n": 100, "delta": 0.05},
    "catoni": {**GIBBS, "c": 1.0},
    "cbound_quasi_uniform": {"mu1": 0.3, "mu2": 0.2, "m": 500, "delta": 0.05},
    "cbound_roy2016": {"mu1": 0.3, "mu2": 0.2, **STATS, "m": 500},
    "ccpbb": {"mu_tandem_risk": 0.05, "mu_tandem_variance": 0.01, **STATS, "n2": 500, "mu": 0.1},
    "cctnd": {"tandem_risk": 0.05, "gibbs_risk": 0.15, **STATS, "n": 500, "n2": 500, "mu": 0.1},
    "ccpbub": {
        "mu_tandem_risk": 0.05,
        "mu_tandem_second_moment": 0.04,
        **STATS,
        "n2": 500,
        "mu": 0.1,
    },
    "dirichlet_margin": {
        "margin_loss": 0.05,
        **STATS,
        "m": 500,
        "concentration": 1000.0,
        "gamma": 0.5,
    },
    "pbub": {"loss": 0.1, "second_moment": 0.1, **STATS, "n": 500},
    "recursive_pac_bayes_bound": {
        "rates": [[0.0, 0.2, 0.0], [0.9, 0.15, 0.05]],
        "kl": [2.0, 0.5],
        "n": [1000.0, 500.0],
        "delta": 0.05,
        "values": [[0.0, 0.0, 0.0, 1.0], [-0.5, 0.0, 0.5, 1.0]],
        "gamma": [0.0, 0.5],
    },
    "dis": {"gibbs_risk": 0.15, "disagreement": 0.2, **STATS, "n": 500, "m": 500},
    "empirical_bernstein": {"mean": 0.1, "variance": 0.05, "m": 500, "delta": 0.05},
    "exponential_loss_constants": {"gamma": 0.5},
    # c_a and k_bar: the exponential loss's at gamma = 0.5
    "general_loss": {
        "empirical_loss": 0.3,
        **STATS,
        "m": 500,
        "c": 1.0,
        "c_a": 6.39,
        "k_bar": 2.31,
    },
    # the docstring's example: 3 held-out examples, 3 voters, 3 classes
    "majority_vote_test_set_bound": {
        "predictions": [[0, 0, 1], [1, 2, 2], [2, 0, 1]],
        "y": [0, 2, 1],
        "rho": [1 / 3, 1 / 3, 1 / 3],
        "delta": 0.05,
        "classes": [0, 1, 2],
    },
    "mcallester": GIBBS,
    "pac_bayes_bennett": {"mean": 0.05, "variance_bound": 0.01, **STATS, "n2": 500, "mu": 0.1},
    "pac_bayes_split_kl": {
        "plus_mean": 0.1,
        "minus_mean": 0.05,
        **STATS,
        "n": 500,
        "a": -0.5,
        "mid": 0.0,
        "b": 1.0,
    },
    "pac_bound_0": {"gibbs_risk": 0.15, **STATS, "m": 500},
    "pac_bound_1": VOTE,
    "pac_bound_1_prime": {**VOTE, "m_unlabeled": 1000},
    "pac_bound_2": VOTE,
    "pac_bound_2_prime": VOTE,
    "quadratic_loss_constants": {"gamma": 0.5},
    "seeger": GIBBS,
    "split_kl_mu_tandem": {
        "both": 0.05,
        "one": 0.2,
        "neither": 0.75,
        **STATS,
        "n2": 500,
        "mu": 0.1,
    },
    "tnd_kl": {"tandem_risk": 0.05, **STATS, "n2": 500},
    "tnd_lambda": {"tandem_risk": 0.05, **STATS, "n2": 500, "lam": 1.0},
    "xi": {"m": 500},
}

GRID_MUS = [round(0.01 + 0.019 * k, 3) for k in range(15)]  # 0.01 ... 0.276 < max mu 0.319
QUICK_BOUNDS = ("seeger", "pac_bound_2", "tnd_kl")


# ------------------------------------------------------------------ the child (a fresh process)


def _report(**fields) -> None:
    print(MARK + json.dumps(fields), flush=True)


def _problem(np, datasets, voters):
    """Breast cancer, 10 stumps per feature: ``(X, y, H)`` as NumPy float32 arrays."""
    X, y = datasets.load("breast_cancer", return_X_y=True)
    X, y = np.asarray(X, np.float32), np.asarray(y, np.float32)
    return X, y, np.asarray(voters.votes(voters.fit_stumps(X, 10), X))


def _bound_call(spec, pb):
    fn = getattr(pb.bounds, spec["name"], None)
    if fn is None:
        return None
    import jax.numpy as jnp

    dtype = jnp.dtype(spec["dtype"])

    def array(v):
        if isinstance(v, float):
            return jnp.asarray(v, dtype)
        if isinstance(v, list):
            return jnp.asarray(v, dtype if isinstance(v[0], float) else None)
        return v

    kwargs = {k: array(v) for k, v in BOUND_ARGUMENTS[spec["name"]].items()}
    return lambda: fn(**kwargs)


def _learner_call(spec, pb, np):
    X, y, H = _problem(np, pb.datasets, pb.voters)
    name, family = spec["name"], spec["family"]
    hyper, options = EXAMPLES[name]
    options = {k: (H[:10] if v == "unlabeled" else v) for k, v in options.items()}
    fn = pb.solvers.LEARNERS.get(name)
    if hasattr(pb.solvers, f"{name}_stumps"):  # a checkout before one protocol: it called
        if "max_columns" in options:  # the column cap max_iter, and took a stump search
            options["max_iter"] = options.pop("max_columns")  # through <name>_stumps
        fn = getattr(pb.solvers, f"{name}_stumps") if family else fn
    if fn is None:
        return None
    first = pb.voters.stump_search(X) if family else H
    return lambda: fn(first, y, *hyper, **options)


def _setup(spec, pb, jax, np):
    """The item's call (a function of no argument), or ``None`` when this checkout lacks it."""
    kind = spec["kind"]
    if kind == "bound":
        return _bound_call(spec, pb)
    if kind == "learner":
        return _learner_call(spec, pb, np)
    _, y, H = _problem(np, pb.datasets, pb.voters)
    if kind == "certify":
        result = jax.block_until_ready(pb.solvers.cbboost(H, y, 6))
        return lambda: pb.certify.certify(result, H, y)
    if kind == "minimize_bound":
        posterior = "quasi_uniform" if spec["name"] == "cbound_quasi_uniform" else "softmax"
        return lambda: pb.solvers.minimize_bound(
            H, y, spec["name"], posterior=posterior, max_iter=30
        )
    if kind == "grid":
        mus = np.asarray(GRID_MUS, np.float32)
        return lambda: pb.sweep.grid(pb.solvers.mincq, H, y, mu=mus)
    raise ValueError(f"unknown item kind {kind!r}")


def _enable_cache() -> str:
    try:
        from pacbound._src.compilation_cache import enable_compilation_cache
    except ImportError:  # a checkout whose modules were all public
        from pacbound.compilation_cache import enable_compilation_cache
    folder = enable_compilation_cache()
    if folder is None:
        raise RuntimeError("the compilation cache did not turn on")
    return str(folder)


def _names(pb) -> dict:
    """What this checkout offers: its public bounds, learners and registered bounds."""
    return {
        "bounds": [n for n in pb.bounds.__all__ if callable(getattr(pb.bounds, n, None))],
        "learners": list(pb.solvers.LEARNERS),
        "registry": {n: bool(s.default) for n, s in pb.certify.BOUNDS.items()},
    }


def child(argument: str) -> None:
    """Run one item (``argument``: its JSON spec) and print what it measured after MARK."""
    spec = json.loads(argument)
    start = time.perf_counter()
    import pacbound

    import_s = time.perf_counter() - start
    if spec["kind"] == "import":
        return _report(seconds=import_s, file=pacbound.__file__)
    import jax

    if spec.get("dtype") == "float64":
        jax.config.update("jax_enable_x64", True)
    import numpy as np

    import pacbound.bounds
    import pacbound.certify
    import pacbound.datasets
    import pacbound.solvers
    import pacbound.sweep
    import pacbound.voters

    if spec["kind"] == "names":
        return _report(file=pacbound.__file__, **_names(pacbound))
    cache = _enable_cache() if "PACBOUND_COMPILATION_CACHE_DIR" in os.environ else None
    try:
        call = _setup(spec, pacbound, jax, np)
        if call is None:
            return _report(missing=True, file=pacbound.__file__)
        start = time.perf_counter()
        jax.block_until_ready(call())
        seconds = time.perf_counter() - start
    except Exception as error:  # reported: the other items still run
        why = "refused" if spec["kind"] == "minimize_bound" else "error"  # a bound it rejects
        return _report(**{why: f"{type(error).__name__}: {error}"[:300]}, file=pacbound.__file__)
    _report(seconds=seconds, import_s=import_s, cache=cache, file=pacbound.__file__)


# ------------------------------------------------------------------ the parent


# the caller's settings a child must not inherit
CLEARED = ("XLA_FLAGS", "JAX_ENABLE_X64", "JAX_COMPILATION_CACHE_DIR",
           "PACBOUND_COMPILATION_CACHE_DIR", "PACBOUND_NO_COMPILATION_CACHE")  # fmt: skip


def environment(checkout: Path, cache_dir: str | None) -> dict:
    """The child's environment: this checkout only, CPU, XLA's defaults, the cache as asked."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "XLA_FLAGS",
            "JAX_ENABLE_X64",
            "JAX_COMPILATION_CACHE_DIR",
            "PACBOUND_COMPILATION_CACHE_DIR",
            "PACBOUND_NO_COMPILATION_CACHE",
        )
    }
    env.update(PYTHONPATH=str(checkout), JAX_PLATFORMS="cpu")
    if cache_dir is None:
        env["PACBOUND_NO_COMPILATION_CACHE"] = "1"
    else:
        env["PACBOUND_COMPILATION_CACHE_DIR"] = cache_dir
    return env


def demo_command(checkout: Path) -> list[str]:
    """``pacbound demo`` as the console script runs it: the checkout's declared entry point."""
    scripts = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts["pacbound"].split(":")
    code = (
        f"import sys; from {module} import {function} as main; "
        "sys.argv[0] = 'pacbound'; sys.exit(main())"
    )
    return [sys.executable, "-c", code, "demo"]


def run_child(checkout: Path, spec: dict, cache_dir: str | None, timeout: float) -> dict:
    """One fresh process for ``spec``: what it reported, with its wall time (``wall_s``)."""
    if spec["kind"] == "demo":
        command = demo_command(checkout)
    else:
        code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_first_call as b; "
        command = [sys.executable, "-c", code + "b.child(sys.argv[1])", json.dumps(spec)]
    with tempfile.TemporaryDirectory(prefix="first-call-cwd-") as cwd:
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  cwd=cwd, env=environment(checkout, cache_dir))  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["exit"])[-1][:300], "wall_s": wall}
    if spec["kind"] == "demo":
        return {"seconds": wall, "wall_s": wall}
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(MARK)]
    if not lines:
        return {"error": "the child reported nothing", "wall_s": wall}
    out = {**json.loads(lines[-1].removeprefix(MARK)), "wall_s": wall}
    if not Path(out.get("file", str(checkout))).resolve().is_relative_to(checkout.resolve()):
        return {"error": f"imported pacbound from {out['file']}, not {checkout}", "wall_s": wall}
    return out


def measure(checkout: Path, spec: dict, warm: bool, timeout: float) -> dict:
    """Cold (cache off); then, when ``warm``, a priming run and the warm run in a fresh cache."""
    runs = {"cold": run_child(checkout, spec, None, timeout)}
    if warm and "seconds" in runs["cold"]:
        with tempfile.TemporaryDirectory(prefix="first-call-cache-") as cache:
            runs["prime"] = run_child(checkout, spec, cache, timeout)
            runs["warm"] = run_child(checkout, spec, cache, timeout)
    return runs


def items(names: dict, quick: bool) -> tuple[list[dict], list[str]]:
    """The items (specs with a label and a group) and the bounds without arguments here."""
    bound_names = [n for n in names["bounds"] if n in BOUND_ARGUMENTS]
    lacking = [n for n in names["bounds"] if n not in BOUND_ARGUMENTS]
    learners = [n for n in names["learners"] if n in EXAMPLES]
    registry = list(names["registry"])
    if quick:
        bound_names = [n for n in bound_names if n in QUICK_BOUNDS]
        learners, registry = [n for n in learners if n == "cbboost"], []
    out = [{"kind": "import", "label": "import pacbound"}]
    for name in bound_names:
        for dtype in ("float32", "float64"):
            out.append(
                {"kind": "bound", "name": name, "dtype": dtype, "label": f"bounds.{name} {dtype}"}
            )
    out.append({"kind": "certify", "label": "certify(result, H, y) default bounds"})
    for name in learners:
        out.append({"kind": "learner", "name": name, "family": False, "label": f"{name}(H)"})
    for name in [] if quick else [n for n in learners if n in GREEDY]:
        out.append(
            {"kind": "learner", "name": name, "family": True, "label": f"{name}(stump_search(X))"}
        )
    for name in registry:
        out.append(
            {"kind": "minimize_bound", "name": name, "label": f"minimize_bound(H, y, {name!r})"}
        )
    if not quick:
        out.append({"kind": "grid", "label": "sweep.grid(mincq, H, y, mu=15 values)"})
        out.append({"kind": "demo", "label": "pacbound demo (whole process)"})
    return out, lacking


def cell(run: dict | None, key: str = "seconds"):
    """A table cell: seconds, ``-`` when the item does not exist there, else why not."""
    if run is None or run.get("missing"):
        return "-"
    if "refused" in run:
        return "refused"
    return run[key] if key in run else "error"


def ratio(a, b):
    return a / b if isinstance(a, float) and isinstance(b, float) and b > 0 else "-"


HEADER = [
    "item",
    "base cold",
    "new cold",
    "new/base",
    "new warm",
    "warm/cold",
    "base wall",
    "new wall",
]


def table_row(row: dict) -> list:
    base, new = row.get("baseline", {}).get("cold"), row["new"]["cold"]
    warm = row["new"].get("warm")
    return [row["label"], cell(base), cell(new), ratio(cell(new), cell(base)), cell(warm),
            ratio(cell(warm), cell(new)), cell(base, "wall_s"), cell(new, "wall_s")]  # fmt: skip


def list_names(checkout: Path, timeout: float) -> dict:
    out = run_child(checkout, {"kind": "names"}, None, timeout)
    if "bounds" not in out:
        raise SystemExit(f"cannot list the items of {checkout}: {out}")
    return out


def git_head(checkout: Path) -> str | None:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip() or None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout")
    parser.add_argument("--quick", action="store_true", help="a few items (smoke test)")
    parser.add_argument("--no-warm", action="store_true", help="cold runs only")
    parser.add_argument("--only", action="append", help="the items whose label contains this")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process")
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sides = {"new": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    names = {side: list_names(path, args.timeout) for side, path in sides.items()}
    specs, lacking = items(names["new"], args.quick)
    specs = [s for s in specs if not args.only or any(o in s["label"] for o in args.only)]
    from common import print_table, write_json  # JAX in this process only, never a child's

    name = "bench_first_call_quick" if args.quick else "bench_first_call"
    payload = {
        "quick": args.quick,
        "only": args.only,
        "complete": False,
        "checkouts": {side: {"path": str(p), "commit": git_head(p)} for side, p in sides.items()},
        "settings": {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": None, "warm": not args.no_warm},
        "bounds_without_arguments": lacking,
        "baseline_bounds_not_on_new": sorted(
            set(names.get("baseline", names["new"])["bounds"]) - set(names["new"]["bounds"])
        ),
        "load_average": {"start": os.getloadavg()},
        "rows": [],
    }
    for spec in specs:
        row = {"label": spec.pop("label"), "spec": spec}
        if args.baseline:  # interleaved with the new code's runs: the same load for both
            row["baseline"] = {"cold": run_child(sides["baseline"], spec, None, args.timeout)}
        row["new"] = measure(REPO, spec, not args.no_warm, args.timeout)
        payload["rows"].append(row)
        print(*(c if isinstance(c, str) else f"{c:.4g}" for c in table_row(row)), sep="  ",
              flush=True)  # fmt: skip
        write_json(name, payload, args.json)  # so far: a long run leaves its rows if stopped
    payload["load_average"]["end"] = os.getloadavg()
    payload["complete"], payload["seconds"] = True, time.perf_counter() - started
    print()
    print_table(HEADER, [table_row(r) for r in payload["rows"]])
    for r in payload["rows"]:
        for side in ("baseline", "new"):
            for kind, run in r.get(side, {}).items():
                if "error" in run or "refused" in run:
                    why = run.get("error") or run.get("refused")
                    print(f"  {r['label']} [{side} {kind}]: {why}")
    if lacking:
        print(f"  not measured (no arguments in BOUND_ARGUMENTS): {', '.join(lacking)}")
    print(f"wrote {write_json(name, payload, args.json)} ({payload['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))  # common.py
    raise SystemExit(main())
