"""Column generation on wdbc stumps: pacbound (JAX masters) against CVXOPT / HiGHS masters.

Protocol (roy2016 §7): scikit-learn's breast cancer set (wdbc), the roy2016 split
(:func:`pacbound.datasets.roy2016_split`: 284 training, 285 test examples), features
tanh-normalized on the training set (:func:`pacbound.voters.fit_tanh_normalization`), 10 stumps
per feature (``S``: 300 voters; the learners weigh ``[S, -S]``, 600 voters), ``tol = 1e-6``.

For CqBoost (``mu``), LPBoost and CG-Boost (``C``) and MDBoost (``D``), at one value of the
hyperparameter inside roy2016's grid, two implementations of the same Algorithm 1 (price every
column by its edge ``sum_k alpha_k y_k H_ki``, add the steepest, stop when none exceeds
``nu + tol``; roy2016 (6)):

* ``pacbound``: the library's jitted ``lax.while_loop`` with JAX masters (FISTA for CqBoost /
  MDBoost, an interior-point method for LPBoost / CG-Boost);
* ``reference``: a Python loop written here, each restricted program solved from scratch by
  CVXOPT (QPs) or HiGHS (LPBoost's LP) through ``tests/reference/column_generation_cvxopt.py``.

Columns: wall time (pacbound: median of ``--repeats`` steady calls, one when a call takes
over 10 s, compilation apart; the reference: one run), the final objective, its relative
difference to the *full* program over all 600 columns (the same reference solvers), columns
used (non-zero weights above ``1e-9`` of the largest), column-generation iterations, whether
the dual certificate was reached, and the test risk of the majority vote (ties count as
errors). A last row per learner times one
``jax.vmap`` call over 5 hyperparameter values (2 for CG-Boost, whose reference is slow)
against a Python loop of single (jitted, already compiled) calls and as many sequential
reference runs (``rel_to_full`` there: the largest relative difference to the reference's
objectives). On a CPU the vmapped lanes run in lockstep (every while loop runs until its
slowest lane), so the loop is faster there; ``vmap`` is for accelerators and one-call CV.

Run: ``python benchmarks/bench_column_generation.py [--repeats 3] [--seed 0] [--no-sweep]``;
prints the table and writes ``benchmarks/results/bench_column_generation.json``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from sklearn.datasets import load_breast_cancer

jax.config.update("jax_enable_x64", True)

from pacbound import datasets, voters  # noqa: E402
from pacbound._src.solvers.cgboost import cgboost  # noqa: E402
from pacbound._src.solvers.cqboost import cqboost  # noqa: E402
from pacbound._src.solvers.lpboost import lpboost  # noqa: E402
from pacbound._src.solvers.mdboost import mdboost  # noqa: E402
from pacbound.margins import majority_vote_risk  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EPS = 1e-6


def _reference():
    """``tests/reference/column_generation_cvxopt.py`` (the root is not on the path)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("tests.reference.column_generation_cvxopt")


REF = _reference()

# name, pacbound learner, reference program, value, sweep, max_columns, Algorithm 1's start
LEARNERS = [
    ("CqBoost", cqboost, REF.cqboost_qp, 0.3, (0.2, 0.25, 0.3, 0.35, 0.4), 200,
     lambda m, h: (np.full(m, 1 / m), -np.inf)),
    ("MDBoost", mdboost, REF.mdboost_qp, 10.0, (3.0, 10.0, 20.0, 50.0, 100.0), 200,
     lambda m, h: (np.ones(m), -np.inf)),
    ("LPBoost", lpboost, REF.lpboost_lp, 1.0, (0.03, 0.1, 0.3, 1.0, 3.0), 100,
     lambda m, h: (np.full(m, h), 1.0)),
    ("CG-Boost", cgboost, REF.cgboost_qp, 0.1, (0.01, 1.0), 400,
     lambda m, h: (np.full(m, h), 0.0)),
]  # fmt: skip


def load(seed: int) -> dict:
    X, y = load_breast_cancer(return_X_y=True)
    split = datasets.roy2016_split(X, 2.0 * y - 1, seed=seed)
    norm = voters.fit_tanh_normalization(split.X_train)
    Xtr, Xte = (voters.tanh_normalize(norm, Z) for Z in (split.X_train, split.X_test))
    stumps = voters.fit_stumps(Xtr, 10)

    def votes(Z):
        return np.asarray(voters.votes(stumps, Z, dtype=jnp.float64))

    # the learners take S and weigh [S, -S]; the reference and the test risk use [S, -S]
    S, St = votes(Xtr), votes(Xte)
    return {"S": S, "H": np.hstack([S, -S]), "y": np.asarray(split.y_train, float),
            "Ht": np.hstack([St, -St]), "yt": np.asarray(split.y_test, float)}  # fmt: skip


def reference_cg(program, start, H, y, value, max_columns):
    """roy2016 Algorithm 1 in Python, the restricted program re-solved by CVXOPT / HiGHS."""
    alpha, nu = start(len(y), value)
    selected, solution, violation = [], None, np.inf
    while True:
        edges = H.T @ (y * alpha)
        edges[selected] = -np.inf
        j = int(np.argmax(edges))  # the steepest edge; nu = -inf: the first column always enters
        violation = edges[j] - nu
        if violation <= EPS or len(selected) == max_columns:
            break
        selected.append(j)
        solution = program(H[:, selected], y, value)
        alpha, nu = solution.alpha, solution.nu
    q = np.zeros(H.shape[1])
    q[selected] = solution.q
    return q, solution.objective, len(selected), violation <= EPS


def _columns(q) -> int:
    q = np.asarray(q)
    return int((q > 1e-9 * q.max()).sum()) if q.max() > 0 else 0


def compare(name, fit, program, value, max_columns, start, data, repeats) -> list[list]:
    S, H, y, Ht, yt = data["S"], data["H"], data["y"], data["Ht"], data["yt"]
    full = program(H, y, value).objective

    def run():
        return fit(S, y, value, tol=EPS, max_columns=max_columns)

    t0 = time.perf_counter()
    r = jax.block_until_ready(run())
    first = time.perf_counter() - t0
    steady = median_time(run, repeats=repeats if first < 10 else 1, warmup=False)
    t0 = time.perf_counter()
    q_ref, obj_ref, iters_ref, conv_ref = reference_cg(program, start, H, y, value, max_columns)
    ref_s = time.perf_counter() - t0
    rows = []
    for impl, q, obj, iters, conv, secs, comp in (
        ("pacbound", r.q, float(r.objective), int(r.steps), bool(r.converged), steady,
         max(first - steady, 0.0)),
        ("reference", q_ref, obj_ref, iters_ref, conv_ref, ref_s, 0.0),
    ):  # fmt: skip
        risk = float(majority_vote_risk(Ht, yt, jnp.asarray(q)))
        rows.append([name, value, impl, comp, secs, obj, abs(obj - full) / abs(full),
                     _columns(q), iters, bool(conv), risk])  # fmt: skip
    return rows


def sweep(name, fit, program, values, max_columns, start, data) -> list[list]:
    """One ``jax.vmap`` call over the values against sequential reference runs."""
    S, H, y = data["S"], data["H"], data["y"]
    grid = jnp.asarray(values)

    def run():
        return jax.vmap(lambda v: fit(S, y, v, tol=EPS, max_columns=max_columns))(grid)

    jax.block_until_ready(run())
    t0 = time.perf_counter()
    r = jax.block_until_ready(run())
    secs = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready([fit(S, y, v, tol=EPS, max_columns=max_columns) for v in values])
    loop_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    refs = [reference_cg(program, start, H, y, v, max_columns) for v in values]
    ref_s = time.perf_counter() - t0
    gaps = [abs(float(o) - ref[1]) / abs(ref[1]) for o, ref in zip(r.objective, refs)]
    label = f"{values[0]}..{values[-1]}"
    k = len(values)
    return [[name, label, f"pacbound vmap x{k}", 0.0, secs, "", float(max(gaps)), "",
             int(jnp.max(r.steps)), bool(jnp.all(r.converged)), ""],
            [name, label, f"pacbound loop x{k}", 0.0, loop_s, "", "", "", "", "", ""],
            [name, label, f"reference x{k}", 0.0, ref_s, "", "", "", max(t[2] for t in refs),
             bool(all(t[3] for t in refs)), ""]]  # fmt: skip


HEADER = ["learner", "value", "impl", "compile_s", "run_s", "objective", "rel_to_full",
          "columns", "cg_iters", "certified", "test_risk"]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-sweep", action="store_true")
    args = parser.parse_args()
    data = load(args.seed)
    rows = []
    for name, fit, program, value, values, max_columns, start in LEARNERS:
        rows += compare(name, fit, program, value, max_columns, start, data, args.repeats)
        if not args.no_sweep:
            rows += sweep(name, fit, program, values, max_columns, start, data)
        print_table(HEADER, rows[-5 if not args.no_sweep else -2 :])
        print(flush=True)
    print_table(HEADER, rows)
    records = [dict(zip(HEADER, row)) for row in rows]
    settings = {"seed": args.seed, "eps": EPS, "repeats": args.repeats,
                "shape": list(data["H"].shape)}  # fmt: skip
    path = write_json("bench_column_generation", {"settings": settings, "rows": records})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
