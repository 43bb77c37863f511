"""Baselines on wdbc stumps: KL-QL / KL-EL (germain2009), VEB-Boost, AdaBoost.

Protocol: scikit-learn's breast cancer set (wdbc, malignant = +1), the roy2016 split
(:func:`pacbound.datasets.roy2016_split`: 284 training, 285 test examples), 10 stumps per
feature (:func:`pacbound.voters.fit_stumps`, 300 stumps; ``[H, -H]`` for the boosters).

* KL-QL and KL-EL run Algorithm 1 until no weight moves by more than ``--epsilon`` in a sweep,
  with the Wdbc hyperparameters of germain2009 Table 1 as we read the garbled table
  (KL-EL ``C = 500, gamma = 0.02``; KL-QL ``C = 1000, gamma = 0.1``). The NumPy reference
  (``tests/reference/boosting_numpy.py``, a Python loop with ``brentq``) runs the same pair
  orders and must reach the same objective.
* VEB-Boost (``lambda = 0.5``) and AdaBoost run ``--rounds`` rounds over ``[H, -H]``, against
  the NumPy references and scikit-learn's ``AdaBoostClassifier`` with depth-1 trees on the
  300 stump columns (the same voters; trees choose by Gini impurity, not weighted error).
* AdaBoost over every threshold (matrix-free :func:`adaboost`) against scikit-learn
  on the raw features (the same split points).

Times: compilation (first call minus a steady call) reported apart; steady times are medians
(:mod:`benchmarks.common`). Training objective: ``f`` (KL), the first display ``J(f)``
(VEB-Boost), the mean exponential loss with AdaBoost's ``alpha`` (AdaBoost). float64 for the
comparison with NumPy; float32 rows for the KL learners::

    python benchmarks/bench_baselines.py [--rounds 200] [--epsilon 1e-6] [--repeats 3]
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from pacbound import datasets, voters
from pacbound._src.solvers.adaboost import adaboost
from pacbound._src.solvers.kl_coordinate import kl_coordinate_descent, pair_order
from pacbound._src.solvers.vebboost import vebboost
from pacbound.margins import majority_vote_risk
from pacbound.voters import stumps_vote

ROOT = Path(__file__).resolve().parents[1]


def boosting_reference():
    """``tests/reference/boosting_numpy.py`` (the repository root is not a package path)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("tests.reference.boosting_numpy")


KL_SETTINGS = [("KL-QL", "quadratic", 1000.0, 0.1), ("KL-EL", "exponential", 500.0, 0.02)]
LAMBDA = 0.5
COLUMNS = ["method", "impl", "dtype", "compile_s", "run_s", "iters", "train_obj", "train_risk",
           "test_risk", "note"]  # fmt: skip


def _row(method, impl, run_s, iters, train_obj, risks=("", ""), note="", compile_s=0.0,
         dtype="float64") -> list:  # fmt: skip
    return [method, impl, dtype, compile_s, run_s, iters, train_obj, *risks, note]


def _data(seed: int) -> dict:
    X, y = datasets.load("breast_cancer", return_X_y=True)
    split = datasets.roy2016_split(X, y, seed=seed)
    stumps = voters.fit_stumps(split.X_train, 10)

    def votes(Z):
        return np.asarray(voters.votes(stumps, Z, dtype=jnp.float64))

    H, Ht = votes(split.X_train), votes(split.X_test)
    return {
        "X": split.X_train,
        "Xt": split.X_test,
        "y": split.y_train.astype(float),
        "yt": split.y_test.astype(float),
        "H": H,
        "Ht": Ht,
        "Hc": np.concatenate([H, -H], 1),  # the NumPy references take [H, -H] explicitly
    }


def timed(repeats: int, fn, *args, **kwargs) -> tuple[object, float, float]:
    """``(result, compile_s, run_s)`` of ``fn(*args, **kwargs)``: the first call minus the
    median steady call (one steady call when the first takes over 10 s)."""
    fn = functools.partial(fn, *args, **kwargs)
    start = time.perf_counter()
    result = jax.block_until_ready(fn())
    first = time.perf_counter() - start
    run = median_time(fn, repeats=repeats if first < 10 else 1, warmup=False)
    return result, max(first - run, 0.0), run


def once(fn, *args, **kwargs) -> tuple[object, float]:
    """``(result, seconds)`` of one call (the references: Python loops, no compilation)."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def _risks(d, weights, train: str, test: str) -> tuple[float, float]:
    """Majority-vote risks on train and test of ``sign(H @ weights)``."""
    return (
        float(majority_vote_risk(d[train], d["y"], weights)),
        float(majority_vote_risk(d[test], d["yt"], weights)),
    )


def _kl_rows(d, key, args) -> list[list]:
    rows = []
    for name, loss, C, gamma in KL_SETTINGS:
        sweeps64 = args.max_sweeps
        for dtype in (np.float64, np.float32):
            H, y = d["H"].astype(dtype), d["y"].astype(dtype)

            def run(H=H, y=y, loss=loss, C=C, gamma=gamma):
                return kl_coordinate_descent(
                    H, y, C, gamma, loss=loss, key=key, tol=args.epsilon,
                    max_iter=args.max_sweeps,
                )  # fmt: skip

            res, comp, t = timed(args.repeats, run)
            sweeps = int(res.steps)
            sweeps64 = sweeps if dtype == np.float64 else sweeps64
            risks = _risks(d, np.asarray(res.weights, np.float64), "H", "Ht")
            note = f"C={C:g} gamma={gamma:g} converged={bool(res.converged)} "
            note += f"bound={float(res.info.bound):.3g}"
            rows.append(_row(name, "pacbound", t, sweeps, float(res.objective), risks, note,
                             comp, np.dtype(dtype).name))  # fmt: skip
        if args.reference:
            rows.append(_kl_reference_row(d, key, name, loss, C, gamma, sweeps64, args.epsilon))
    return rows


def _kl_reference_row(d, key, name, loss, C, gamma, sweeps, epsilon) -> list:
    """The NumPy loop on the same pair orders (hence the same iterates) as pacbound."""
    n = d["H"].shape[1]
    orders = np.asarray(jax.vmap(lambda s: pair_order(key, s, n))(jnp.arange(sweeps)))
    reference = boosting_reference().kl_coordinate_descent_reference
    ref, t = once(lambda: reference(d["H"], d["y"], C, gamma, loss, orders, eps=epsilon))
    risks = _risks(d, ref["w"], "H", "Ht")
    note = f"converged={ref['converged']}"
    return _row(name, "numpy reference", t, ref["n_sweeps"], ref["objective"], risks, note)


def _sklearn_row(name, X, y, Xt, yt, rounds, note) -> list:
    """scikit-learn's AdaBoost with depth-1 trees; its SAMME weights are ``2 alpha``."""
    clf = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1), n_estimators=rounds)
    _, t = once(lambda: clf.fit(X, y))
    f = sum(w / 2 * e.predict(X) for e, w in zip(clf.estimators_, clf.estimator_weights_))
    risks = (float(np.mean(clf.predict(X) != y)), float(np.mean(clf.predict(Xt) != yt)))
    exp_loss = float(np.mean(np.exp(-y * f)))
    return _row(name, "scikit-learn", t, len(clf.estimators_), exp_loss, risks, note)


def _veb_rows(d, args) -> list[list]:
    res, comp, t = timed(args.repeats, lambda: vebboost(d["H"], d["y"], LAMBDA, args.rounds))
    done = int(res.steps)
    risks = _risks(d, res.weights, "H", "Ht")
    rows = [_row("VEB-Boost", "pacbound", t, done, float(res.info.costs[-1]), risks,
                 f"lambda={LAMBDA}", comp)]  # fmt: skip
    grid = jax.vmap(lambda lam: vebboost(d["H"], d["y"], lam, args.rounds))
    _, comp, t = timed(args.repeats, lambda: grid(jnp.linspace(0.0, 1.0, 11)))
    rows.append(_row("VEB-Boost, 11 lambdas", "pacbound vmap", t, args.rounds, "",
                     note="lambda = 0, 0.1, ..., 1 in one call", compile_s=comp))  # fmt: skip
    if args.reference:
        loop = boosting_reference().vebboost_reference
        ref, t = once(loop, d["Hc"], d["y"], LAMBDA, args.rounds)
        same = bool(np.array_equal(ref["selected"], res.info.selected))
        rows.append(_row("VEB-Boost", "numpy reference", t, ref["n_rounds_done"],
                         ref["costs"][-1], note=f"same rounds as pacbound: {same}"))  # fmt: skip
    return rows


def _adaboost_rows(d, args) -> list[list]:
    name, rounds = "AdaBoost, 300 stumps", args.rounds
    res, comp, t = timed(args.repeats, lambda: adaboost(d["H"], d["y"], rounds))
    done = int(res.steps)
    risks = _risks(d, res.weights, "H", "Ht")
    rows = [_row(name, "pacbound", t, done, float(res.info.losses[-1]), risks, "", comp)]
    if args.reference:
        ref, t = once(lambda: boosting_reference().adaboost_reference(d["Hc"], d["y"], rounds))
        same = bool(np.array_equal(ref["selected"], res.info.selected))
        note = f"same rounds as pacbound: {same}"
        rows.append(_row(name, "numpy reference", t, ref["n_rounds_done"],
                         ref["exp_losses"][-1], note=note))  # fmt: skip
    note = "depth-1 trees on the stump columns (Gini)"
    rows.append(_sklearn_row(name, d["H"], d["y"], d["Ht"], d["yt"], rounds, note))
    name, search = "AdaBoost, all thresholds", voters.stump_search(d["X"])
    res, comp, t = timed(args.repeats, lambda: adaboost(search, d["y"], rounds))
    risks = tuple(float(np.mean(y * np.asarray(stumps_vote(res.voters, res.weights, X)) <= 0))
                  for X, y in ((d["X"], d["y"]), (d["Xt"], d["yt"])))  # fmt: skip
    done = int(res.steps)
    rows.append(_row(name, "pacbound matrix-free", t, done, float(res.info.losses[-1]), risks, "",
                     comp))  # fmt: skip
    note = "depth-1 trees on the raw features (Gini)"
    rows.append(_sklearn_row(name, d["X"], d["y"], d["Xt"], d["yt"], rounds, note))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--epsilon", type=float, default=1e-6)
    parser.add_argument("--max-sweeps", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-reference", dest="reference", action="store_false",
                        help="skip the NumPy reference loops")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    d = _data(args.seed)
    rows = _kl_rows(d, jax.random.key(args.seed), args) + _veb_rows(d, args)
    rows += _adaboost_rows(d, args)
    print(f"wdbc: {len(d['y'])} train / {len(d['yt'])} test examples, {d['H'].shape[1]} "
          f"stumps; epsilon = {args.epsilon}, {args.rounds} rounds")  # fmt: skip
    print_table(COLUMNS, rows)
    settings = {**vars(args), "json": None, "kl": KL_SETTINGS, "lambda": LAMBDA}
    out = write_json("bench_baselines", {"settings": settings, "columns": COLUMNS, "rows": rows},
                     args.json)  # fmt: skip
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
