"""Every learner of issue #6 on wdbc stumps, against its reference: time, agreement, test risk.

Protocol: the data of ``bench_column_generation.py`` (scikit-learn's breast cancer set, the
roy2016 split: 284 training / 285 test examples, tanh-normalized features, 10 stumps per
feature: ``H`` of 300 stumps, ``[H, -H]`` of 600 voters), float64. Each learner runs once
per implementation at one hyperparameter value:

* KL-QL (``C = 1000, gamma = 0.1``), KL-EL (``C = 500, gamma = 0.02``) on ``H`` (their pairs
  are ``H``'s columns and complements) until no weight moves by ``1e-6``, against the NumPy
  loop of ``tests/reference/boosting_numpy.py`` on the same pair orders;
* VEB-Boost (``lambda = 0.5``) and AdaBoost, ``--rounds`` rounds over ``[H, -H]``, against
  the NumPy loops, and AdaBoost also against scikit-learn's ``AdaBoostClassifier`` with
  depth-1 trees on ``H``'s columns (the same voters; trees split by Gini impurity, not by
  weighted error, so they may pick other stumps);
* MDBoost (``D = 10``), LPBoost (``C = 1``), CG-Boost (``C = 0.1``) by column generation over
  ``[H, -H]`` (``tol = 1e-6``), against ``bench_column_generation.reference_cg``: the same
  Algorithm 1 in Python with each restricted program solved by CVXOPT or HiGHS.

Columns: compilation (first call minus a steady call) and steady time (median of
``--repeats`` calls, ``benchmarks/common.median_time``; the references run once),
``speedup`` (reference time / pacbound's steady time, on reference rows), iterations (sweeps,
rounds that voted, columns added), the training objective (KL: ``f``; VEB-Boost: ``J(f)``;
AdaBoost: mean exponential loss; column generation: the program's primal), ``agreement``
(reference rows: ``|obj - obj_ref| / |obj_ref|``, and for scikit-learn the difference of
training risks), the voters with non-zero weight (KL: pairs with ``w_j != 0``) and the
training and test risks of the majority vote (ties count as errors)::

    python benchmarks/bench_learners.py [--rounds 200] [--repeats 3] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from bench_baselines import boosting_reference, once, timed
from bench_column_generation import EPS, LEARNERS, load, reference_cg
from common import print_table, write_json
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from pacbound._src.solvers.adaboost import adaboost
from pacbound._src.solvers.kl_coordinate import kl_coordinate_descent, pair_order
from pacbound._src.solvers.vebboost import vebboost
from pacbound.margins import majority_vote_risk

KL = {"KL-QL": ("quadratic", 1000.0, 0.1), "KL-EL": ("exponential", 500.0, 0.02)}
LAMBDA = 0.5
CG = {"MDBoost": "D=10", "LPBoost": "C=1", "CG-Boost": "C=0.1"}
HEADER = ["learner", "impl", "compile_s", "run_s", "speedup", "iters", "train_obj",
          "agreement", "voters", "train_risk", "test_risk"]  # fmt: skip


def _voters(weights) -> int:
    """Voters whose weight exceeds ``1e-9`` of the largest (in absolute value)."""
    a = np.abs(np.asarray(weights, np.float64))
    return int((a > 1e-9 * a.max()).sum()) if a.max() > 0 else 0


def _risks(d, weights, complemented: bool) -> list[float]:
    H, Ht = (d["H"], d["Ht"]) if complemented else (d["S"], d["St"])
    q = jnp.asarray(weights, jnp.float64)
    return [float(majority_vote_risk(H, d["y"], q)), float(majority_vote_risk(Ht, d["yt"], q))]


class Run(NamedTuple):
    """One implementation's outcome: objective, voter weights, times, iterations."""

    objective: float
    weights: np.ndarray
    run_s: float
    iters: int
    compile_s: float = 0.0


def _pair(name, d, ours: Run, ref: Run, impl: str, complemented=True) -> list[list]:
    """The rows of pacbound and of its reference."""

    def row(r: Run, who, speedup, agreement):
        return [name, who, r.compile_s, r.run_s, speedup, r.iters, r.objective, agreement,
                _voters(r.weights), *_risks(d, r.weights, complemented)]  # fmt: skip

    agreement = abs(ours.objective - ref.objective) / abs(ref.objective)
    return [row(ours, "pacbound", "", ""), row(ref, impl, ref.run_s / ours.run_s, agreement)]


def kl_rows(d, key, repeats) -> list[list]:
    rows, n = [], d["S"].shape[1]
    loop = boosting_reference().kl_coordinate_descent_reference
    for name, (loss, C, gamma) in KL.items():
        res, comp, run = timed(repeats, kl_coordinate_descent, d["S"], d["y"], C, gamma,
                                loss=loss, key=key, tol=EPS, max_iter=20_000)  # fmt: skip
        sweeps = int(res.steps)
        orders = np.asarray(jax.vmap(lambda s: pair_order(key, s, n))(jnp.arange(sweeps)))
        ref, ref_s = once(loop, d["S"], d["y"], C, gamma, loss, orders, eps=EPS)
        ours = Run(float(res.objective), res.weights, run, sweeps, comp)
        theirs = Run(ref["objective"], ref["w"], ref_s, ref["n_sweeps"])
        rows += _pair(name, d, ours, theirs, "numpy", complemented=False)
    return rows


def _column_weights(ref: dict, n: int) -> np.ndarray:
    """A NumPy reference's ``alpha`` summed per column."""
    sel = ref["selected"] >= 0
    return np.bincount(ref["selected"][sel], ref["alphas"][sel], n)


def boosting_rows(d, rounds, repeats) -> list[list]:
    # pacbound's learners take S and weigh [S, -S] (q over H's columns); the NumPy loops take H
    reference, n = boosting_reference(), d["H"].shape[1]
    res, comp, run = timed(repeats, vebboost, d["S"], d["y"], LAMBDA, rounds)
    ref, ref_s = once(reference.vebboost_reference, d["H"], d["y"], LAMBDA, rounds)
    ours = Run(float(res.info.costs[-1]), res.q, run, int(res.steps), comp)
    theirs = Run(ref["costs"][-1], _column_weights(ref, n), ref_s, ref["n_rounds_done"])
    rows = _pair("VEB-Boost", d, ours, theirs, "numpy")
    res, comp, run = timed(repeats, adaboost, d["S"], d["y"], rounds)
    ref, ref_s = once(reference.adaboost_reference, d["H"], d["y"], rounds)
    ours = Run(float(res.info.losses[-1]), res.q, run, int(res.steps), comp)
    theirs = Run(ref["exp_losses"][-1], _column_weights(ref, n), ref_s, ref["n_rounds_done"])
    rows += _pair("AdaBoost", d, ours, theirs, "numpy")
    return [*rows, _sklearn_row(d, rounds, ours, rows[-2][-2])]


def _sklearn_row(d, rounds, ours: Run, train_risk: float) -> list:
    """scikit-learn's AdaBoost, depth-1 trees on ``H``'s columns; SAMME weights ``2 alpha``."""
    clf = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=rounds)
    _, t = once(clf.fit, d["S"], d["y"])
    f = sum(w / 2 * e.predict(d["S"]) for e, w in zip(clf.estimators_, clf.estimator_weights_))
    train = float(np.mean(clf.predict(d["S"]) != d["y"]))
    test = float(np.mean(clf.predict(d["St"]) != d["yt"]))
    voters = len({(e.tree_.feature[0], e.predict(d["S"][:1])[0]) for e in clf.estimators_})
    return [
        "AdaBoost",
        "scikit-learn",
        0.0,
        t,
        t / ours.run_s,
        len(clf.estimators_),
        float(np.mean(np.exp(-d["y"] * f))),
        abs(train - train_risk),
        voters,
        train,
        test,
    ]


def cg_rows(d, repeats) -> list[list]:
    rows = []
    for name, fit, program, value, _, max_columns, start in LEARNERS:
        if name not in CG:
            continue
        res, comp, run = timed(
            repeats, fit, d["S"], d["y"], value, tol=EPS, max_columns=max_columns
        )
        (q, obj, iters, _), ref_s = once(
            reference_cg, program, start, d["H"], d["y"], value, max_columns
        )
        ours = Run(float(res.objective), res.q, run, int(res.steps), comp)
        rows += _pair(f"{name} {CG[name]}", d, ours, Run(obj, q, ref_s, iters), "cvxopt/HiGHS")
    return rows


def data(seed: int) -> dict:
    """``bench_column_generation.load`` plus ``St``: the 300 test stumps without complements."""
    d = load(seed)
    return {**d, "St": d["Ht"][:, : d["S"].shape[1]]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    d = data(args.seed)
    rows = kl_rows(d, jax.random.key(args.seed), args.repeats)
    rows += boosting_rows(d, args.rounds, args.repeats) + cg_rows(d, args.repeats)
    print(f"wdbc: {len(d['y'])} train / {len(d['yt'])} test, {d['S'].shape[1]} stumps")
    print_table(HEADER, rows)
    settings = {**vars(args), "json": None, "eps": EPS, "kl": KL, "lambda": LAMBDA, "cg": CG}
    records = [dict(zip(HEADER, row)) for row in rows]
    out = write_json("bench_learners", {"settings": settings, "rows": records}, args.json)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
