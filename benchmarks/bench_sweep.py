"""Cross-validation as one compiled call: pacbound.sweep against GridSearchCV and a Python loop.

Protocol (roy2016 §7's model selection): scikit-learn's breast cancer set (wdbc, 569 × 30),
5 stratified folds (:func:`pacbound.sweep.stratified_folds`, seed 0), 10 decision stumps per
feature fitted on each training fold (thresholds from training data only), float64.

* MinCq over 15 values of ``mu`` (laviolette2011 Program 1 on the 300 stumps):
  - ``pacbound``: ``sweep.cross_validate(mincq, X, y, stump_voters(10), folds=5, mu=mus)``,
    folds as example-weight masks, 5 folds × 15 ``mu`` in one ``jax.vmap`` call, plus the refit;
    ``batch_size=1``: the same call with the 15 ``mu`` one after the other (``lax.map``) and
    only the 5 folds in lockstep (a vmapped ``while`` loop runs until its slowest lane);
  - ``loop``: a Python loop of 75 single ``mincq`` calls on the sliced training folds, plus the
    refit (jitted; the compilations are counted in its first pass);
  - ``GridSearchCV``: scikit-learn around ``CvxoptMinCq``, a small estimator written here that
    solves Program 1 with ``cvxopt.solvers.qp`` (same folds, same stumps, refit included),
    ``n_jobs=1`` and ``n_jobs=-1``.
* CB-Boost with ``T`` up to 500 on the 300 stumps (it weighs them and their complements, 600
  voters): ``pacbound`` reads the 500 prefixes of one run per fold
  (``n_rounds=np.arange(1, 501)``); ``loop`` runs one ``cbboost(H_f, y_f, 500)`` per sliced
  fold and scores its 500 prefixes.

Rows ``f32``: the same in float32 (the library's default precision; MinCq then stops at a
relative duality gap of ``1e-5`` instead of ``1e-6``, in one precision instead of two).

Columns: ``first_s`` is the wall time of the first call in a fresh process (compilation
included), ``steady_s`` the median of ``--repeats`` later calls, ``compile_s`` their
difference; ``x_vs_pacbound`` the first-call time over pacbound's first call (and the steady
ratio); ``mean_risk`` / ``selected`` the selected cell's mean validation risk and value. The
machines are shared and noisy: quote ratios of one run.

Run: ``python benchmarks/bench_sweep.py [--repeats 3] [--json PATH]``; prints the table and
writes ``benchmarks/results/bench_sweep.json`` (or ``PATH``).
"""

from __future__ import annotations

import argparse
import os
import time

import cvxopt
import jax
import numpy as np
from common import median_time, print_table, write_json
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, PredefinedSplit

jax.config.update("jax_enable_x64", True)

from pacbound import sweep  # noqa: E402
from pacbound.solvers import cbboost, mincq, weights_after  # noqa: E402
from pacbound.voters import fit_stumps  # noqa: E402

FOLDS, MUS, MAX_T = 5, np.linspace(0.01, 0.18, 15), 500


def stump_votes(stumps, X) -> np.ndarray:
    """``h_j(x) = +1 if x[f_j] > t_j else -1`` in NumPy."""
    features, thresholds = (np.asarray(a) for a in stumps)
    return np.where(X[:, features] > thresholds, 1.0, -1.0)


class CvxoptMinCq(ClassifierMixin, BaseEstimator):
    """MinCq (laviolette2011 Program 1) on stumps fitted in ``fit``, solved by CVXOPT's QP:
    ``min Q^T M Q - A^T Q`` s.t. ``m_S^T Q = mu / 2 + sum(m_S) / (2n)``, ``0 <= Q <= 1/n``,
    ``M = H^T H / m``, ``A = M 1 / n``; the vote puts ``2 Q_j - 1/n`` on ``h_j``."""

    def __init__(self, mu: float = 0.1, n_thresholds: int = 10):
        self.mu = mu
        self.n_thresholds = n_thresholds

    def fit(self, X, y):
        self.stumps_ = fit_stumps(X, self.n_thresholds)
        H = stump_votes(self.stumps_, X)
        m, n = H.shape
        M, m_s = H.T @ H / m, H.T @ y / m
        G = np.vstack([np.eye(n), -np.eye(n)])
        h = np.concatenate([np.full(n, 1 / n), np.zeros(n)])
        b = np.array([self.mu / 2 + m_s.sum() / (2 * n)])
        args = (2 * M, -M.sum(axis=1) / n, G, h, m_s[None, :], b)
        quiet = {"show_progress": False}
        Q = np.ravel(cvxopt.solvers.qp(*(cvxopt.matrix(a) for a in args), options=quiet)["x"])
        self.weights_ = 2 * Q - 1 / n
        self.classes_ = np.array([-1.0, 1.0])
        return self

    def predict(self, X):
        return np.where(stump_votes(self.stumps_, X) @ self.weights_ > 0, 1.0, -1.0)


def risk(H, y, q) -> float:
    """Majority-vote risk of ``q`` over ``H``'s columns or over ``[H, -H]`` (ties: errors)."""
    q, n = np.asarray(q), H.shape[1]
    w = q if q.shape[0] == n else q[:n] - q[n:]
    return float(np.mean(y * (H @ w) <= 0))


def fold_data(X, y, fold, dtype=np.float64):
    """Per fold: sliced training votes, held-out votes (stumps from the training fold only)."""
    voters = sweep.stump_voters(10, dtype)
    for f in range(FOLDS):
        transform = voters(X[fold != f])
        yield (np.asarray(transform(X[fold != f])), y[fold != f],
               np.asarray(transform(X[fold == f])), y[fold == f])  # fmt: skip


def mincq_loop(X, y, fold, dtype=np.float64) -> tuple[float, float]:
    y = y.astype(dtype)
    risks = np.array([[risk(Hv, yv, mincq(Ht, yt, mu).q) for mu in MUS.astype(dtype)]
                      for Ht, yt, Hv, yv in fold_data(X, y, fold, dtype)])  # fmt: skip
    best = int(np.argmin(risks.mean(0)))
    H = np.asarray(sweep.stump_voters(10, dtype)(X)(X))
    jax.block_until_ready(mincq(H, y, MUS.astype(dtype)[best]))  # refit
    return float(risks.mean(0)[best]), float(MUS[best])


def cbboost_loop(X, y, fold) -> tuple[float, float]:
    prefixes = jax.jit(jax.vmap(weights_after, in_axes=(None, 0)))
    rounds = np.arange(1, MAX_T + 1)
    risks = np.array([[risk(Hv, yv, q) for q in prefixes(cbboost(Ht, yt, MAX_T), rounds)]
                      for Ht, yt, Hv, yv in fold_data(X, y, fold)])  # fmt: skip
    best = int(np.argmin(risks.mean(0)))
    H = np.asarray(sweep.stump_voters(10)(X)(X))
    jax.block_until_ready(cbboost(H, y, MAX_T))  # refit
    return float(risks.mean(0)[best]), float(rounds[best])


def grid_search(X, y, fold, n_jobs) -> tuple[float, float]:
    search = GridSearchCV(CvxoptMinCq(), {"mu": list(MUS)}, cv=PredefinedSplit(fold),
                          n_jobs=n_jobs)  # fmt: skip
    search.fit(X, y)
    return float(1 - search.best_score_), float(search.best_params_["mu"])


def timed(run, repeats: int) -> tuple[float, float, tuple]:
    """First call's wall time, the median of later calls, and the first call's output."""
    t0 = time.perf_counter()
    out = jax.block_until_ready(run())
    first = time.perf_counter() - t0
    return first, median_time(run, repeats=repeats, warmup=False), out


def pacbound_cv(learner, X, y, dtype=np.float64, **grids):
    voters = sweep.stump_voters(10, dtype)
    y = y.astype(dtype)

    def run():
        cv = sweep.cross_validate(learner, X, y, voters, folds=FOLDS, **grids)
        jax.block_until_ready(cv.refit)
        return float(cv.mean_risk[cv.best_index]), float(next(iter(cv.best_values.values())))

    return run


HEADER = ["task", "impl", "first_s", "steady_s", "compile_s", "x_vs_pacbound_first",
          "x_vs_pacbound_steady", "mean_risk", "selected"]  # fmt: skip


def rows_for(task, runs, repeats) -> list[list]:
    """Time each ``(impl, run)``; ratios against the first (pacbound) row."""
    rows, base = [], None
    for impl, run, reps in runs:
        first, steady, (mean_risk, selected) = timed(run, reps or 1)
        steady = steady if reps else first
        base = base or (first, steady)
        rows.append([task, impl, first, steady, max(first - steady, 0.0), first / base[0],
                     steady / base[1], mean_risk, selected])  # fmt: skip
        print_table(HEADER, rows[-1:])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)
    X, labels = load_breast_cancer(return_X_y=True)
    y = 2.0 * labels - 1
    fold = sweep.stratified_folds(y, FOLDS, seed=0)
    r, f32 = args.repeats, np.float32
    mincq_runs = [
        ("pacbound cross_validate", pacbound_cv(mincq, X, y, mu=MUS), r),
        ("pacbound batch_size=1", pacbound_cv(mincq, X, y, mu=MUS, batch_size=1), r),
        ("loop of pacbound mincq", lambda: mincq_loop(X, y, fold), r),
        ("pacbound cross_validate f32", pacbound_cv(mincq, X, y, f32, mu=MUS), r),
        ("loop of pacbound mincq f32", lambda: mincq_loop(X, y, fold, f32), r),
        ("GridSearchCV+CVXOPT n_jobs=1", lambda: grid_search(X, y, fold, 1), 0),
        ("GridSearchCV+CVXOPT n_jobs=-1", lambda: grid_search(X, y, fold, -1), 0),
    ]
    rounds = np.arange(1, MAX_T + 1)
    cbboost_runs = [
        ("pacbound cross_validate", pacbound_cv(cbboost, X, y, n_rounds=rounds), r),
        ("loop of pacbound cbboost", lambda: cbboost_loop(X, y, fold), r),
    ]
    rows = rows_for(f"MinCq 5 folds x {len(MUS)} mu", mincq_runs, r)
    rows += rows_for(f"CB-Boost 5 folds x T<={MAX_T}", cbboost_runs, r)
    print()
    print_table(HEADER, rows)
    settings = {"folds": FOLDS, "mus": MUS.tolist(), "max_T": MAX_T, "repeats": r,
                "n_stumps": 10 * X.shape[1], "m": X.shape[0],
                "load_average_1_5_15_min": os.getloadavg()}  # fmt: skip
    records = [dict(zip(HEADER, row)) for row in rows]
    path = write_json("bench_sweep", {"settings": settings, "rows": records}, args.json)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
