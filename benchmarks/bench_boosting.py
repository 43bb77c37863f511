"""CB-Boost (bauvin2020 Algorithm 1): pacbound vs a NumPy implementation and AdaBoost.

Three problems, ``T = --rounds`` rounds each (default 100, the initial voter included):

* ``wdbc``: scikit-learn's breast cancer set, m = 569, 30 features x 10 stumps
  (``fit_stumps``): ``H`` has 300 columns, the learners weigh its ``[H, -H]``, n = 600 voters.
* ``synthetic``: ``make_classification(n_samples=6250, n_features=100, random_state=0)``, the
  first 5 000 examples train (m = 5 000, 100 x 10 stumps and their complements: n = 2 000),
  the last 1 250 test.
* ``magic``: m = 19 020, 10 features, every threshold of every feature and both signs
  (~380 000 stumps), matrix-free (``cbboost``, ``gbcbboost``); needs the shared data
  (``PACBOUND_DATA``, default ``../shared/data``) and is skipped with a message without it.

wdbc and magic train on the whole set (the m asked for), so their test risk is a 5-fold
cross-validation: pacbound runs the five folds as one ``jax.vmap`` over 0/1 example-weight
masks; the peers fit each fold (stumps / sorted features come from all features, never from the
held-out labels). Methods: pacbound float32 votes and int8 votes (dense problems), GB-CB-Boost,
a vectorized NumPy Algorithm 1 (every candidate's Theorem 3 closed form from the sums
``gamma(h)``, ``tau(F, h)``; float32 votes, float64 scalars) and scikit-learn's
``AdaBoostClassifier`` (SAMME, depth-1 trees) on the raw features.

The physical limit of a dense round is one read of ``H``: timed as the fastest NumPy pass over
the same bytes (a ``uint64`` sum over the buffer, or ``H.sum()``; ``read_GBps`` is the
bandwidth it gives); for a matrix-free round, one read of ``X``. A matrix-free round cannot
come near the latter: it gathers the ``d m`` example weights in every feature's sorted order
(indexed loads; the ``floor`` row times that gather alone), sums them blockwise and scores all
``d (m - 1)`` thresholds, each array ``m (d)`` floats like ``X`` itself. int8 votes are
transposed once per call (``build`` of the compiled call, outside the rounds). ``seconds``
are medians after a warm-up (compilation excluded); per-round times are ``(t(T) - t(1)) /
(T - 1)`` from the best of repeated calls, the statistic of the read limit (the 2-core
machine is shared and noisy). Run::

    python benchmarks/bench_boosting.py [--rounds 100] [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.ensemble import AdaBoostClassifier
from sklearn.tree import DecisionTreeClassifier

from pacbound import datasets, voters
from pacbound._src.solvers.cbboost import cbboost, gbcbboost
from pacbound.voters import stumps_vote

os.environ.setdefault("PACBOUND_DATA", str(Path(__file__).resolve().parents[2] / "shared/data"))


# ------------------------------------------------------------------ NumPy Algorithm 1
def numpy_cbboost(edges, column, gamma_h, nu_h, y, w, n_rounds):
    """Algorithm 1 in NumPy, vectorized over candidates; returns (selected, alphas, cbounds).

    ``edges(a)`` is ``sum_i a_i h(x_i)`` for every candidate, ``column(k)`` the votes of ``h_k``.
    The vote ``F`` is unnormalized as in the paper (initial weight 1); ``w`` weights examples.
    """
    y, w = y.astype(np.float64), w / w.sum()
    selected, alphas = [int(np.nanargmax(gamma_h))], [1.0]
    F = column(selected[0]).astype(np.float64)
    cbounds = [1 - (w @ (y * F)) ** 2 / (w @ F**2)]
    for _ in range(n_rounds - 1):
        g, nu = w @ (y * F), w @ F**2
        tau = edges((w * F).astype(np.float32)).astype(np.float64)
        num, den = gamma_h * nu - g * tau, nu_h * g - gamma_h * tau  # Theorem 3
        with np.errstate(invalid="ignore", divide="ignore"):
            valid = (gamma_h > 0) & (g > 0) & (den > 0) & (num > 0) & (nu * nu_h > tau**2)
            step = np.where(valid, num / den, 0)
            after = 1 - (g + step * gamma_h) ** 2 / (nu + 2 * step * tau + step**2 * nu_h)
        k = int(np.argmin(np.where(valid, after, np.inf)))
        if not valid[k]:
            selected, alphas, cbounds = [*selected, -1], [*alphas, 0.0], [*cbounds, cbounds[-1]]
            continue
        F = F + step[k] * column(k)
        selected.append(k), alphas.append(step[k])
        cbounds.append(1 - (w @ (y * F)) ** 2 / (w @ F**2))
    return np.array(selected), np.array(alphas), np.array(cbounds)


def _weights(selected, alphas, n):
    q = np.zeros(n)
    np.add.at(q, selected[selected >= 0], alphas[selected >= 0])
    return q / q.sum()


def numpy_dense(H, y, w, n_rounds):
    """NumPy Algorithm 1 on a materialized float32 ``H``; returns (q over columns, cbounds)."""
    w32 = w.astype(np.float32)
    gamma_h = ((w32 * y) @ H).astype(np.float64) / w.sum()
    nu_h = (w32 @ (H * H)).astype(np.float64) / w.sum()
    sel, alphas, cbs = numpy_cbboost(
        lambda a: a @ H, lambda k: H[:, k], gamma_h, nu_h, y, w, n_rounds
    )
    return _weights(sel, alphas, H.shape[1]), cbs


def numpy_stumps(order, valid, y, w, n_rounds):
    """NumPy Algorithm 1 over every stump, matrix-free: edges are ``sum(a) - 2 cumsum(a[order])``.

    Returns (per-round ``(position, sign)`` pairs with their weights, cbounds).
    """
    positions, m = valid.shape[1], order.shape[1]

    def edges(a):
        below = np.cumsum(a[order], axis=1)[:, :-1]
        return np.where(valid, a.sum() - 2 * below, np.nan).ravel()

    margins = edges((w * y).astype(np.float32)).astype(np.float64) / w.sum()
    signs = np.where(margins < 0, -1.0, 1.0)

    def column(k):
        h = np.empty(m)
        h[order[k // positions]] = np.where(np.arange(m) > k % positions, 1.0, -1.0) * signs[k]
        return h

    sel, alphas, cbs = numpy_cbboost(
        lambda a: signs * edges(a), column, np.abs(margins), 1.0, y, w, n_rounds
    )
    return (sel, signs[np.maximum(sel, 0)], alphas), cbs


def numpy_stumps_vote(order, positions, fitted):
    """The normalized vote of :func:`numpy_stumps` on its own training examples."""
    sel, signs, alphas = fitted
    vote = np.zeros(order.shape[1])
    for k, s, a in zip(sel, signs, alphas):
        if k >= 0:
            h = np.where(np.arange(order.shape[1]) > k % positions, 1.0, -1.0)
            vote[order[k // positions]] += a * s * h
    return vote / alphas.sum()


# ------------------------------------------------------------------------- helpers
def read_seconds(array: np.ndarray, repeats: int = 50) -> float:
    """Best NumPy pass over the array's bytes (a ``uint64`` sum of its buffer, or ``sum()``)."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    words = raw[: raw.size // 8 * 8].view(np.uint64)
    return min(best_time(p, repeats) for p in (words.sum, array.sum))


def adaboost(X, y, rounds):
    tree = DecisionTreeClassifier(max_depth=1)
    return AdaBoostClassifier(tree, n_estimators=rounds, random_state=0).fit(X, y)


def adaboost_cbound(model, X, y) -> float:
    """C-bound of AdaBoost's vote: its stumps' ±1 votes weighted by ``estimator_weights_``."""
    votes = np.stack([np.where(e.predict(X) > 0, 1.0, -1.0) for e in model.estimators_], 1)
    q = model.estimator_weights_[: votes.shape[1]]
    margin = y * (votes @ (q / q.sum()))
    return float(1 - margin.mean() ** 2 / (margin**2).mean())


def kfold_masks(m: int, k: int = 5, seed: int = 0) -> np.ndarray:
    """``(k, m)`` 0/1 training masks of a shuffled k-fold split."""
    fold = np.random.default_rng(seed).permutation(m) % k
    return (fold[None, :] != np.arange(k)[:, None]).astype(np.float32)


def held_out_risk(masks, y, votes) -> float:
    """Risk of ``votes[i]`` (fold i's vote on all m examples) on fold i's held-out examples."""
    wrong = (np.asarray(votes) * y[None, :] <= 0) & (masks == 0)
    return float(wrong.sum() / (masks == 0).sum())


def best_time(fn, repeats: int) -> float:
    """Fastest of ``repeats`` calls after a warm-up: the least disturbed run on a shared CPU."""
    jax.block_until_ready(fn())
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


def per_round(fn, rounds, repeats):
    """``(median time of fn(rounds), per-round time)``, the latter ``(t(T) - t(1)) / (T - 1)``
    from the best of ``2 * repeats`` calls of each (the same statistic as the read limit)."""
    total = median_time(lambda: fn(rounds), repeats=repeats)
    best, one = best_time(lambda: fn(rounds), 2 * repeats), best_time(lambda: fn(1), 2 * repeats)
    return total, (best - one) / (rounds - 1)


def row(dataset, method, m, n, seconds, cbound, risk, round_s=None, limit=None, build_s=None):
    """One table row; ``round_s`` / ``build_s`` (seconds) and ``limit = (seconds, bytes)`` of
    the one-read limit where they apply."""
    limit_s, nbytes = (None, None) if limit is None else limit
    ratio = None if round_s is None or limit_s is None else round_s / limit_s
    ms = lambda s: None if s is None else 1e3 * s  # noqa: E731
    return {
        "read_GBps": None if limit is None else nbytes / limit_s / 1e9,
        "build_ms": ms(build_s),
        "dataset": dataset,
        "method": method,
        "m": m,
        "n": n,
        "seconds": seconds,
        "round_ms": ms(round_s),
        "limit_ms": ms(limit_s),
        "ratio_to_limit": ratio,
        "train_cbound": cbound,
        "test_risk": risk,
    }


# ------------------------------------------------------------------------ problems
def bench_dense(name, Xtr, ytr, Xte, yte, rounds, repeats) -> list[dict]:
    """10 stumps per feature and their complements: pacbound (float32 / int8 ``H``, weighing
    ``[H, -H]`` implicitly), NumPy (on the materialized ``[H, -H]``), AdaBoost."""
    stumps = voters.fit_stumps(Xtr, 10)
    H = {
        key: voters.votes(stumps, Xtr, dtype=dt)
        for key, dt in (("float32", jnp.float32), ("int8", jnp.int8))
    }
    y32, m, n = jnp.asarray(ytr, jnp.float32), len(ytr), 2 * H["float32"].shape[1]
    masks = kfold_masks(m) if Xte is None else None  # no test set: 5-fold CV
    X_eval, y_eval = (Xtr, ytr) if Xte is None else (Xte, yte)
    H_eval = np.asarray(voters.self_complemented(voters.votes(stumps, X_eval)))

    def risk(qs):  # qs: (n,) for the test set, (5, n) for the CV folds
        votes = np.asarray(qs) @ H_eval.T
        if masks is None:
            return float(np.mean(votes * y_eval <= 0))
        return held_out_risk(masks, y_eval, votes)

    rows = []
    for label, key, fit in (
        ("pacbound", "float32", cbboost),
        ("pacbound", "int8", cbboost),
        ("pacbound GB", "float32", gbcbboost),
    ):
        h = H[key]
        build = median_time(lambda h=h: voters.votes(stumps, Xtr, h.dtype))
        total, rnd = per_round(lambda T, f=fit, h=h: f(h, y32, T), rounds, repeats)
        result = fit(h, y32, rounds)
        qs = result.q if masks is None else fit_folds(fit, h, y32, rounds, masks)
        limit = read_seconds(np.asarray(h)), np.asarray(h).nbytes
        cb = float(result.objective)
        rows.append(row(name, f"{label} {key} H", m, n, total, cb, risk(qs), rnd, limit, build))
    Hn, yn = np.asarray(voters.self_complemented(H["float32"])), np.asarray(ytr, np.float64)
    start = time.perf_counter()
    q, cbs = numpy_dense(Hn, yn, np.ones(m), rounds)
    total = time.perf_counter() - start
    one = best_time(lambda: numpy_dense(Hn, yn, np.ones(m), 1), repeats)
    if masks is not None:
        q = np.stack([numpy_dense(Hn, yn, w, rounds)[0] for w in masks])
    rnd, limit = (total - one) / (rounds - 1), (read_seconds(Hn), Hn.nbytes)
    rows.append(row(name, "NumPy Alg. 1 float32 H", m, n, total, cbs[-1], risk(q), rnd, limit))
    return [*rows, bench_adaboost(name, Xtr, ytr, Xte, yte, masks, rounds)]


def fit_folds(fit, H, y, rounds, masks):
    """The folds' ``q``, ``(k, n)``: one vmapped run over the 0/1 training masks."""
    return jax.vmap(lambda w: fit(H, y, rounds, sample_weight=w).q)(masks)


def bench_adaboost(name, Xtr, ytr, Xte, yte, masks, rounds) -> dict:
    """AdaBoost's fit time, its vote's C-bound, and its test (or 5-fold CV) risk."""
    start = time.perf_counter()
    model = adaboost(Xtr, ytr, rounds)
    total = time.perf_counter() - start
    if masks is None:
        risk = float(np.mean(model.predict(Xte) != yte))
    else:
        votes = [adaboost(Xtr[w > 0], ytr[w > 0], rounds).predict(Xtr) for w in masks]
        risk = held_out_risk(masks, ytr, np.stack(votes))
    cb = adaboost_cbound(model, Xtr, ytr)
    return row(name, "sklearn AdaBoost SAMME", len(ytr), "stumps", total, cb, risk)


def bench_magic(rounds, repeats) -> list[dict]:
    """Every threshold of every feature, matrix-free; 5-fold CV risk (pacbound: one vmap)."""
    try:
        ds = datasets.load("magic")
    except (OSError, ValueError) as err:
        print(f"magic skipped: the shared data is not there ({err})")
        return []
    X, y = np.asarray(ds.X, np.float32), np.asarray(ds.y, np.float64)
    y32, m = jnp.asarray(y, jnp.float32), X.shape[0]
    search = jax.block_until_ready(voters.stump_search(X))
    build = median_time(lambda: voters.stump_search(X), repeats=repeats)
    order, valid = np.asarray(search.order), np.asarray(search.valid)
    n, masks, limit = 2 * int(valid.sum()), kfold_masks(m), (read_seconds(X), X.nbytes)
    rows = []
    for label, learner in (
        ("pacbound matrix-free", cbboost),
        ("pacbound GB matrix-free", gbcbboost),
    ):

        def fit(T, w=None, learner=learner):
            return learner(search, y32, T, sample_weight=w)

        total, rnd = per_round(fit, rounds, repeats)
        folds = jax.vmap(lambda w, f=fit: f(rounds, w))(masks)
        risk = held_out_risk(
            masks, y, jax.vmap(lambda r: stumps_vote(r.voters, r.weights, X))(folds)
        )
        cb = float(fit(rounds).objective)
        rows.append(row("magic", label, m, n, total, cb, risk, rnd, limit, build))
    gather, a = jax.jit(lambda a: a[search.order]), jnp.asarray(y32)
    floor = best_time(lambda: gather(a), 2 * repeats)
    rows.append(row("magic", "floor: gather a[order]", m, n, floor, None, None, floor, limit))
    start = time.perf_counter()
    cbs = numpy_stumps(order, valid, y, np.ones(m), rounds)[1]
    total = time.perf_counter() - start
    one = best_time(lambda: numpy_stumps(order, valid, y, np.ones(m), 1), repeats)
    votes = [
        numpy_stumps_vote(order, valid.shape[1], numpy_stumps(order, valid, y, w, rounds)[0])
        for w in masks
    ]
    risk, rnd = held_out_risk(masks, y, np.stack(votes)), (total - one) / (rounds - 1)
    rows.append(row("magic", "NumPy Alg. 1 matrix-free", m, n, total, cbs[-1], risk, rnd, limit))
    return [*rows, bench_adaboost("magic", X, y, None, None, masks, rounds)]


def problems():
    X, y = load_breast_cancer(return_X_y=True)
    yield "wdbc", X, np.where(y == 0, 1.0, -1.0), None, None  # malignant = +1
    X, y = make_classification(n_samples=6250, n_features=100, random_state=0)
    y = np.where(y == 1, 1.0, -1.0)
    yield "synthetic", X[:5000], y[:5000], X[5000:], y[5000:]


def check_targets(rows) -> list[str]:
    """The issue's targets, each MET / NOT MET with the numbers behind it."""
    get = {(r["dataset"], r["method"]): r for r in rows}
    verdict = lambda ok: "MET    " if ok else "NOT MET"  # noqa: E731
    out = []
    for r in rows:
        if r["method"] in ("pacbound float32 H", "pacbound int8 H", "pacbound matrix-free"):
            what = "X" if "free" in r["method"] else "H"
            out.append(
                f"{verdict(r['ratio_to_limit'] <= 2)} {r['dataset']} {r['method']}: "
                f"round = {r['ratio_to_limit']:.2f} x one read of {what} (<= 2)"
            )
    for ds in ("wdbc", "synthetic"):
        a, b = get.get((ds, "pacbound int8 H")), get.get((ds, "pacbound float32 H"))
        if a and b:
            out.append(
                f"{verdict(a['round_ms'] < b['round_ms'])} {ds}: int8 round "
                f"{a['round_ms']:.3g} ms < float32 round {b['round_ms']:.3g} ms"
            )
    a, b = get.get(("synthetic", "pacbound float32 H")), get.get(("synthetic", _ADA))
    if a and b:
        speedup = b["seconds"] / (a["seconds"] + a["build_ms"] / 1e3)
        out.append(
            f"{verdict(speedup >= 10)} m = 5000: CB-Boost (building H included) {speedup:.1f}x "
            "faster than AdaBoost for the same rounds (>= 10x)"
        )
    for ds in ("wdbc", "synthetic", "magic"):
        jx = get.get((ds, "pacbound float32 H")) or get.get((ds, "pacbound matrix-free"))
        npy = get.get((ds, "NumPy Alg. 1 float32 H")) or get.get((ds, "NumPy Alg. 1 matrix-free"))
        if jx and npy:
            gap = abs(jx["train_cbound"] - npy["train_cbound"])
            out.append(
                f"{verdict(gap <= 1e-4)} {ds}: final C-bound |pacbound - NumPy| = "
                f"{gap:.2g} (<= 1e-4)"
            )
    return out


_ADA = "sklearn AdaBoost SAMME"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-magic", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for name, Xtr, ytr, Xte, yte in problems():
        rows += bench_dense(name, Xtr.astype(np.float32), ytr, Xte, yte, args.rounds, args.repeats)
    if not args.skip_magic:
        rows += bench_magic(args.rounds, args.repeats)
    print(f"backend {jax.default_backend()}, T = {args.rounds} rounds; limit = one NumPy read")
    keys = "dataset method m n build_ms seconds round_ms limit_ms read_GBps ratio_to_limit".split()
    keys += ["train_cbound", "test_risk"]
    print_table(keys, [["-" if r[k] is None else r[k] for k in keys] for r in rows])
    targets = check_targets(rows)
    print("\n".join(targets))
    payload = {"rounds": args.rounds, "rows": rows, "targets": targets}
    print(f"wrote {write_json('bench_boosting', payload, args.json)}")


if __name__ == "__main__":
    main()
