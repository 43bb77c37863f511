"""MinCq (laviolette2011 Program 1): pacbound against CVXOPT and the fast QP solvers on PyPI.

One run, the same problems, every solver to the same accuracy: Program 1's objective within
``--accuracy`` (1e-7) relative of a tight-tolerance reference, box and equality constraints met
to 1e-7. Each solver walks its tolerance ladder from loose to tight and is timed at the first
rung that reaches the accuracy (median of ``--repeats`` runs after a warm-up one); a solver
whose rung takes over ``--max-seconds`` stops there (reported as over the cap), one whose
projected time (``n^3`` from the previous size) is over it is skipped, and a peer whose 15
single solves would take over ``--max-sweep-seconds`` is skipped in the sweep. The peers'
rungs are their documented tolerances; pacbound's rung ``tol`` stops it once its certified
duality gap on ``mu2`` is ``<= tol (mu2 + c0)`` (``rtol = tol``, ``atol = tol c0``,
``c0 = 1^T M 1 / n^2``), which bounds the error of Program 1's objective ``(mu2 - c0) / 4`` by
``tol |mu2 + c0| / 4``. The reference is the lowest objective among the feasible solutions of
piqp and clarabel at tolerance 1e-12 and pacbound at 1e-10 (20 000 iterations at most; its
duality gap certifies it); the sweeps above ``--sweep-reference-max-n`` use pacbound's alone. The
machine is shared and noisy: compare the ratios of one run.

Problems: wdbc decision stumps (n = 300 voters, m = 569) and stumps on
``make_classification(n_samples=2n, n_features=n/10, n_informative=n/40, random_state=0)``,
10 thresholds per feature (n = 1 000, 2 000, 4 000). Single solves at ``mu = 0.1 mu_max``;
sweeps over 15 values ``geomspace(0.003, 0.5) mu_max``: one ``jax.vmap`` call, and one
continuation call (:func:`pacbound.solvers.solve_mincq_path`), against 15 sequential solves of
each peer. Every solver gets the problem prebuilt (the Gram matrix
``M = H^T H / m`` is computed once, outside the timings, and reported); pacbound's time
includes its power iteration for the step size; its compilation (once per shape) is reported
apart.

Run: ``python benchmarks/bench_mincq.py`` (the ``bench`` extra:
``pip install qpsolvers clarabel osqp piqp proxsuite daqp cvxopt``). Prints the table and writes
``benchmarks/results/bench_mincq.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from importlib import metadata
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import qpsolvers
import scipy.sparse as sp
from common import RESULTS, write_json
from sklearn.datasets import load_breast_cancer, make_classification

jax.config.update("jax_enable_x64", True)

from pacbound._src.learning.mincq_fista import solve_mincq  # noqa: E402
from pacbound._src.learning.mincq_gap import MinCqProblem  # noqa: E402
from pacbound._src.solvers.mincq_path import solve_mincq_path  # noqa: E402
from pacbound.voters import fit_stumps, votes  # noqa: E402

PEER_TOLERANCES = {
    "cvxopt": lambda t: {"abstol": t, "reltol": t, "feastol": t, "maxiters": 500},
    "piqp": lambda t: {"eps_abs": t, "eps_rel": t, "backend": "dense"},
    "proxqp": lambda t: {"eps_abs": t, "eps_rel": t, "backend": "dense"},
    "clarabel": lambda t: {"tol_gap_abs": t, "tol_gap_rel": t, "tol_feas": t},
    "osqp": lambda t: {"eps_abs": t, "eps_rel": t, "polishing": True, "max_iter": 200_000},
    "daqp": lambda t: {"primal_tol": t, "dual_tol": t},
}
SPARSE = {"clarabel", "osqp"}
PEER_LADDER = [1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
PACBOUND_LADDER = [1e-5, 3e-6, 1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 1e-10]


def stump_problem(n: int) -> tuple[str, np.ndarray, np.ndarray]:
    """``(name, H, y)``: the votes of 10 stumps per feature on the training examples."""
    if n == 300:
        X, y = load_breast_cancer(return_X_y=True)
        name = "wdbc stumps"
    else:
        X, y = make_classification(
            n_samples=2 * n, n_features=n // 10, n_informative=n // 40, random_state=0
        )
        name = "synthetic stumps"
    H = np.asarray(votes(fit_stumps(X, n_thresholds=10), X, dtype=jnp.float64))
    return name, H, 2.0 * y - 1


class Program1:
    """Program 1 as the QP ``min 1/2 Q^T P Q + c^T Q, m_S^T Q = rhs, 0 <= Q <= 1/n``."""

    def __init__(self, H: np.ndarray, y: np.ndarray):
        start = time.perf_counter()
        self.m, self.n = H.shape
        self.M = H.T @ H / self.m
        self.gram_seconds = time.perf_counter() - start
        self.A, self.m_s = self.M.mean(axis=1), H.T @ y / self.m
        self.mu_max = float(np.abs(self.m_s).mean())
        self.P, self.P_csc = 2 * self.M, sp.csc_matrix(2 * self.M)
        self.A_eq, self.A_eq_csc = self.m_s[None, :], sp.csc_matrix(self.m_s[None, :])
        self.c0 = float(self.M.sum()) / self.n**2
        self.problem = MinCqProblem(
            jnp.asarray(self.M), jnp.asarray(self.m_s), jnp.asarray(H.mean(0))
        )

    def rhs(self, mu: float) -> np.ndarray:
        return np.array([mu / 2 + self.m_s.sum() / (2 * self.n)])

    def evaluate(self, Q: np.ndarray | None, mu: float) -> dict:
        if Q is None or not np.all(np.isfinite(Q)):
            return {"objective": float("nan"), "box": float("inf"), "equality": float("inf")}
        u = 2 * self.n * Q - 1
        return {
            "objective": float(Q @ self.M @ Q - self.A @ Q),
            "box": float(max(0.0, np.abs(u).max() - 1)),
            "equality": float(abs(self.m_s @ u / self.n - mu) / mu),
        }

    def solve_peer(self, solver: str, mu: float, tol: float) -> tuple[np.ndarray | None, float]:
        sparse = solver in SPARSE
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                Q = qpsolvers.solve_qp(
                    self.P_csc if sparse else self.P, -self.A,
                    A=self.A_eq_csc if sparse else self.A_eq, b=self.rhs(mu),
                    lb=np.zeros(self.n), ub=np.full(self.n, 1.0 / self.n),
                    solver=solver, **PEER_TOLERANCES[solver](tol),
                )  # fmt: skip
            except Exception:  # a solver that fails at this tolerance has no solution here
                Q = None
        return Q, time.perf_counter() - start

    def solve_pacbound(self, mus, rtol: float, max_iter: int = 200_000, path: bool = False):
        """One solve (scalar ``mu``), one vmapped sweep or (``path``) one continuation sweep
        (:func:`~pacbound.solvers.solve_mincq_path`); returns ``(Q, seconds, iterations)``."""
        mus = jnp.asarray(mus)
        solve = solve_mincq if mus.ndim == 0 else (_path if path else _sweep)
        start = time.perf_counter()
        atol = rtol * self.c0
        result = jax.block_until_ready(solve(self.problem, mus, None, rtol, atol, max_iter))
        seconds = time.perf_counter() - start
        return np.asarray(result.q)[..., : self.n], seconds, np.asarray(result.steps)


_sweep = jax.jit(jax.vmap(solve_mincq, in_axes=(None, 0, None, None, None, None)))
_path = jax.jit(lambda p, mus, q0, rtol, atol, it: solve_mincq_path(p, mus, rtol, atol, it))


def compile_time(solve, problem, mus, c0: float) -> float:
    """Seconds to compile ``solve`` for these shapes ahead of time (call it before ``solve``
    has run on them, or the compilation cache answers)."""
    start = time.perf_counter()
    solve.lower(problem, mus, None, 1e-2, 1e-2 * c0, 200_000).compile()
    return time.perf_counter() - start


def accurate(ev: dict, reference: float, accuracy: float) -> bool:
    rel = abs(ev["objective"] - reference) / abs(reference)
    return rel <= accuracy and ev["box"] <= accuracy and ev["equality"] <= accuracy


def reference_objectives(prog: Program1, mus, peers: bool) -> np.ndarray:
    """Per ``mu``, the lowest objective of the feasible tight-tolerance solutions: pacbound's
    (one vmapped call, certified to 1e-10 by its duality gap) and, with ``peers``, piqp's and
    clarabel's."""
    mus = np.asarray(mus)  # a single mu goes through the single solve (no extra compilation)
    tight = prog.solve_pacbound(mus if len(mus) > 1 else mus[0], 1e-10, max_iter=20_000)[0]
    tight = tight.reshape(len(mus), -1)
    references = []
    for i, mu in enumerate(mus):
        candidates = [prog.solve_peer(s, mu, 1e-12)[0] for s in ("piqp", "clarabel") if peers]
        values = [prog.evaluate(Q, mu) for Q in (*candidates, tight[i])]
        ok = [v["objective"] for v in values if v["box"] <= 1e-9 and v["equality"] <= 1e-9]
        references.append(min(ok))
    return np.array(references)


def timed(run, repeats: int):
    """Median time of ``repeats`` calls of ``run()`` after a warm-up one (a single call when
    it takes over 5 s); returns the last output and that time."""
    out = run()
    if out[1] > 5:
        return out, out[1]
    times = []
    for _ in range(repeats):
        out = run()
        times.append(out[1])
    return out, statistics.median(times)


def ladder_single(prog, solver, mu, reference, args, start=None) -> dict:
    """Walk the tolerance ladder; time the first rung that is accurate.

    ``start``: for a solver that took over 10 s at the previous size, the rung that was
    accurate there; we begin one rung looser (to save the slow solvers' time).
    """
    rungs = PACBOUND_LADDER if solver == "pacbound" else PEER_LADDER
    if start in rungs:
        rungs = rungs[max(rungs.index(start) - 1, 0) :]
    record = {"solver": solver, "reached": False}
    for tol in rungs:
        if solver == "pacbound":
            (Q, _, its), seconds = timed(lambda t=tol: prog.solve_pacbound(mu, t), args.repeats)
            record["iterations"] = int(its)
        else:
            (Q, _), seconds = timed(lambda t=tol: prog.solve_peer(solver, mu, t), args.repeats)
        ev = prog.evaluate(Q, mu)
        rel = abs(ev["objective"] - reference) / abs(reference)
        record.update(tolerance=tol, seconds=seconds, rel_error=rel, box=ev["box"])
        record["equality"] = ev["equality"]
        if accurate(ev, reference, args.accuracy):
            record["reached"] = True
            break
        if seconds > args.max_seconds:
            record["capped"] = f"a rung took over --max-seconds {args.max_seconds:g} s"
            break
    return record


def single_solves(prog, args, skip: set, previous: dict) -> list[dict]:
    mu = 0.1 * prog.mu_max
    reference = reference_objectives(prog, [mu], peers=True)[0]
    prog.solve_pacbound(mu, 1e-2)  # compile once for this shape, outside the timings
    records = []
    for solver in ["pacbound", *args.peers]:
        if solver in skip:
            records.append({"solver": solver, "skipped": "projected time over --max-seconds"})
            continue
        records.append(ladder_single(prog, solver, mu, reference, args, previous.get(solver)))
        print(f"  {format_record(records[-1])}", flush=True)
    return records


def sweep(prog, args, singles: dict) -> list[dict]:
    mus = np.geomspace(0.003, 0.5, 15) * prog.mu_max
    peers = prog.n <= args.sweep_reference_max_n
    compile_seconds = {  # before any call for these shapes: later, XLA's cache answers
        "pacbound": compile_time(_sweep, prog.problem, jnp.asarray(mus), prog.c0),
        "pacbound-path": compile_time(_path, prog.problem, jnp.asarray(mus), prog.c0),
    }
    refs = reference_objectives(prog, mus, peers)
    prog.solve_pacbound(mus, 1e-2, path=True)  # warm up (reference_objectives ran the vmap)
    records = []
    for solver in ["pacbound", "pacbound-path", *args.peers]:
        ours = solver.startswith("pacbound")
        single = singles.get("pacbound" if ours else solver, {})
        if not single.get("reached"):
            records.append({"solver": solver, "skipped": "no accurate single solve"})
            continue
        if not ours and len(mus) * single["seconds"] > args.max_sweep_seconds:
            why = f"15 x its single solve over --max-sweep-seconds {args.max_sweep_seconds:g} s"
            records.append({"solver": solver, "skipped": why})
            print(f"  sweep {format_record(records[-1])}", flush=True)
            continue
        rungs = PACBOUND_LADDER if ours else PEER_LADDER
        rungs = [t for t in rungs if t <= single["tolerance"]] or [single["tolerance"]]
        for tol in rungs:
            if ours:
                path = solver == "pacbound-path"
                (Qs, _, its), seconds = timed(
                    lambda t=tol, p=path: prog.solve_pacbound(mus, t, path=p), 3
                )
            else:
                runs = [prog.solve_peer(solver, mu, tol) for mu in mus]
                Qs, seconds = [r[0] for r in runs], sum(r[1] for r in runs)
            evs = [prog.evaluate(Q, mu) for Q, mu in zip(Qs, mus, strict=True)]
            ok = all(accurate(e, r, args.accuracy) for e, r in zip(evs, refs, strict=True))
            worst = max(abs(e["objective"] - r) / abs(r) for e, r in zip(evs, refs, strict=True))
            record = {"solver": solver, "tolerance": tol, "seconds": seconds, "reached": ok}
            record.update(worst_rel_error=worst, per_solve=seconds / len(mus))
            if ours:
                record.update(iterations=[int(i) for i in its])
                record["compile_seconds"] = compile_seconds[solver]
            if ok or seconds > 15 * args.max_seconds:
                break
        records.append(record)
        print(f"  sweep {format_record(record)}", flush=True)
    return records


def format_record(r: dict) -> str:
    if "skipped" in r:
        return f"{r['solver']:>9}: skipped ({r['skipped']})"
    flag = "" if r["reached"] else "  NOT ACCURATE"
    its = r.get("iterations", "")
    its = f" its={its}" if isinstance(its, int) else ""
    return (
        f"{r['solver']:>9}: {r['seconds']:9.3f} s  tol={r['tolerance']:.0e}  "
        f"rel.err={r.get('rel_error', r.get('worst_rel_error')):.1e}{its}{flag}"
    )


def _cell(r: dict, base: float) -> str:
    if "skipped" in r:
        return "skipped"
    mark = "" if r["reached"] else " (over the time cap)" if "capped" in r else " (inaccurate)"
    return f"{r['seconds']:.3f} s ({r['seconds'] / base:.1f}x){mark}"


def print_table(results: list[dict], peers: list[str]) -> None:
    """Seconds and ratios to pacbound (``x`` > 1: pacbound is faster), then the targets."""
    head = "| n (problem) | pacbound | " + " | ".join(peers) + " |"
    print("\nsingle solve, mu = 0.1 mu_max, objective within 1e-7 relative of the reference")
    print(head + "\n|" + "---|" * (len(peers) + 2))
    for size in results:
        by = {r["solver"]: r for r in size["single"]}
        base = by["pacbound"]["seconds"]
        its = by["pacbound"].get("iterations")
        cells = [f"{base:.3f} s, {its} it"] + [_cell(by[p], base) for p in peers if p in by]
        print(f"| {size['n']} ({size['name']}) | " + " | ".join(cells) + " |")
    print("\nsweep of 15 mu: one vmapped pacbound call (and one path call) against 15 sequential")
    print(head.replace("pacbound", "pacbound (x its single solve) | path (x single)"))
    print("|" + "---|" * (len(peers) + 3))
    for size in (s for s in results if s.get("sweep")):
        by = {r["solver"]: r for r in size["sweep"]}
        base = by["pacbound"]["seconds"]
        single = next(r for r in size["single"] if r["solver"] == "pacbound")["seconds"]
        path = by["pacbound-path"].get("seconds", float("nan"))
        cells = [f"{base:.3f} s ({base / single:.1f}x)", f"{path:.3f} s ({path / single:.1f}x)"]
        cells += [_cell(by[p], base) for p in peers]
        print(f"| {size['n']} ({size['name']}) | " + " | ".join(cells) + " |")
    print(
        "\ntargets (single solve at n >= 1000: faster than every peer, >= 10x cvxopt; sweep <= 3x)"
    )
    for size in results:
        by = {r["solver"]: r for r in size["single"] if "skipped" not in r and r["reached"]}
        base = by["pacbound"]["seconds"]
        fastest = min(((r["seconds"], p) for p, r in by.items() if p != "pacbound"), default=None)
        if fastest is None:
            print(f"  n={size['n']}: no peer reached the accuracy within the caps")
            continue
        cvx = by.get("cvxopt", {}).get("seconds", float("nan")) / base
        line = f"  n={size['n']}: fastest peer {fastest[1]} {fastest[0] / base:.2f}x"
        line += f", cvxopt {cvx:.1f}x"
        if size.get("sweep"):
            by_sweep = {r["solver"]: r.get("seconds", float("nan")) for r in size["sweep"]}
            line += f", sweep {by_sweep['pacbound'] / base:.1f}x one solve"
            line += f" (path {by_sweep['pacbound-path'] / base:.1f}x)"
        print(line)


def versions() -> dict:
    names = ("jax", "optax", "numpy", "qpsolvers", "cvxopt", "piqp", "proxsuite", "clarabel")
    found = {}
    for package in (*names, "osqp", "daqp"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 2000, 4000])
    parser.add_argument("--sweep-sizes", type=int, nargs="*", default=[300, 1000, 2000, 4000])
    parser.add_argument("--peers", nargs="*", default=list(PEER_TOLERANCES))
    parser.add_argument("--accuracy", type=float, default=1e-7)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--max-sweep-seconds", type=float, default=600.0)
    parser.add_argument("--sweep-reference-max-n", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_mincq.json")
    args = parser.parse_args()
    results, last, rungs = [], {}, {}
    env = {"cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "versions": versions()}
    print(f"pacbound MinCq benchmark on {jax.default_backend()} ({env['cpu_count']} cores)")
    for n in args.sizes:
        name, H, y = stump_problem(n)
        prog = Program1(H, y)
        print(f"n={n} ({name}, m={prog.m}): Gram matrix {prog.gram_seconds:.2f} s (not timed)")
        skip = {s for s, (n0, t0) in last.items() if t0 * (n / n0) ** 3 > args.max_seconds}
        singles = single_solves(prog, args, skip, rungs)
        size = {"n": n, "m": prog.m, "name": name, "mu_max": prog.mu_max, "single": singles}
        size["gram_seconds"] = prog.gram_seconds
        by_solver = {r["solver"]: r for r in singles if "skipped" not in r}
        last.update({s: (n, r["seconds"]) for s, r in by_solver.items() if s != "pacbound"})
        slow = {s: r for s, r in by_solver.items() if r["reached"] and r["seconds"] > 10}
        rungs.update({s: r["tolerance"] for s, r in slow.items()})
        if n in args.sweep_sizes:
            size["sweep"] = sweep(prog, args, by_solver)
        results.append(size)
        payload = {"environment": env, "args": vars(args) | {"out": str(args.out)}}
        write_json("bench_mincq", payload | {"results": results}, args.out)
    print_table(results, args.peers)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
