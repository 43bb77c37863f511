"""The C-bound learners of Viallard et al. (ECML-PKDD 2021) on a multiclass forest, out of bag:
pacbound vs a NumPy/SciPy implementation of the same objectives, and their bounds beside TND /
CCTND at each bound's own minimizer, in one run.

Problem: a 100-tree ``RandomForestClassifier`` on a multiclass KEEL set (``--data``, default
``satimage``, 6 classes; ``segment``, ``optdigits``, ... work too) from
``../shared/data/keel``, 80 / 20 stratified split (seed 0); scikit-learn's ``digits`` (10
classes) when the shared data are absent. Statistics out of bag (``n = min_j |OOB_j|``, ``n2 =
min_{j,k} |OOB_j cap OOB_k|``), ``delta = 0.05``, uniform prior over the trees.

* pacbound: :func:`pacbound.ensembles.optimize_posterior` (``--steps`` optax steps on ``rho =
  softmax(theta)`` from the uniform posterior in one jitted ``lax.scan``, float32, the certified
  bound as the objective): ``optax.rprop(0.05)`` (the library's default) for every objective,
  and for the C-bound forms also ``optax.contrib.cocob()`` (the authors' optimizer, COCOB-Backprop
  with alpha = 100) for ``2 x --steps`` steps (their 2000 epochs of full-batch steps at the
  default). Compilation is timed apart (the first call); the time to the final bound is the
  median of warm calls. Every posterior is certified in float64 by every bound
  (:func:`pacbound.ensembles.certify_ensemble`) and its vote's test risk measured.
* NumPy/SciPy: the same objectives (Seeger, McAllester, joint forms; kl-inverses by 60
  bisection halvings with implicit derivatives; the joint form's sup by golden section over the
  disagreement of the slice tops, its gradient by the envelope theorem), the chain rule to
  ``theta`` written out, and the same RProp steps, float64, one posterior: per-step cost, and
  the time to ``--numpy-steps`` steps (the joint form's Python loop is slow: fewer steps, the
  per-step cost scaled). Values are compared with pacbound's objective at the uniform posterior
  before timing.

Timings are medians after a warm-up; the load average is recorded (the development machine
is 2 cores shared by several people)::

    python benchmarks/bench_multiclass.py [--data satimage] [--trees 100] [--steps 1000]
        [--numpy-steps 200] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from common import median_time, print_table, write_json
from scipy import special

from pacbound import datasets
from pacbound._src import ensemble_bounds as EB
from pacbound._src import second_order_minimize as SM
from pacbound._src.bounds.first_order import xi
from pacbound._src.voters.ensembles import ensemble_predictions, ensemble_voters

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DATA = DATA if DATA.is_dir() else Path("/work/shared/data")
DELTA = 0.05
FORMS = ("cbound_seeger", "cbound_mcallester", "cbound_joint")
BASELINES = ("tnd", "cctnd")
_COCOB = optax.contrib.cocob()  # one object: the jitted minimizer keys on it


# ------------------------------------------------------------------------------ the problem
def load_problem(name: str, trees: int, seed: int = 0):
    """``(statistics, (test predictions, test labels), description)`` of the forest."""
    from sklearn.ensemble import RandomForestClassifier

    source = f"keel/{name}"
    try:
        from pacbound._src.datasets.loaders import load_registered

        if not DATA.is_dir():
            raise FileNotFoundError(DATA)
        data = load_registered(name, DATA, multiclass=True)
    except (FileNotFoundError, OSError) as err:
        print(f"{name}: shared data absent ({err}); falling back to scikit-learn's digits")
        data, source = datasets.load("digits", multiclass=True), "sklearn/digits"
    split = datasets.train_test_split(data.X, data.y, 0.8, seed=seed)
    start = time.perf_counter()
    forest = RandomForestClassifier(trees, random_state=seed, n_jobs=2)
    forest.fit(split.X_train, split.y_train)
    fit_s = time.perf_counter() - start
    voters = ensemble_voters(forest, split.X_train, split.y_train)
    n_classes = len(voters.classes)
    statistics = EB.ensemble_statistics(
        voters.predictions, voters.labels, n_classes, mask=voters.oob_mask
    )
    test_labels = np.searchsorted(voters.classes, split.y_test)
    test = (ensemble_predictions(forest, split.X_test), test_labels)
    description = {
        "data": source, "classes": n_classes, "train": len(split.y_train),
        "test": len(split.y_test), "features": data.X.shape[1], "trees": trees,
        "n": statistics.n, "n2": statistics.n2, "forest_fit_s": fit_s,
    }  # fmt: skip
    return statistics, test, description


# ------------------------------------------------------------------------------- NumPy side
def np_kl(q, p):
    return special.xlogy(q, q) - special.xlogy(q, p) + special.xlogy(1 - q, 1 - q) - (
        special.xlogy(1 - q, 1 - p))  # fmt: skip


def np_kl_inverse(q, eps, upper: bool, halvings: int = 60):
    """``(p, dp/dq, dp/deps)``: the kl-inverse by bisection and its implicit derivatives."""
    lo, hi = (q, 1.0) if upper else (0.0, q)
    for _ in range(halvings):
        mid = (lo + hi) / 2
        inside = np_kl(q, mid) <= eps
        if upper:
            lo, hi = (mid, hi) if inside else (lo, mid)
        else:
            lo, hi = (lo, mid) if inside else (mid, hi)
    p = (lo + hi) / 2
    if p <= 0.0 or p >= 1.0 or p == q:
        return p, 0.0, 0.0
    kl_p = (p - q) / (p * (1 - p))
    kl_q = np.log(q * (1 - p)) - np.log(p * (1 - q)) if 0 < q < 1 else 0.0
    return p, -kl_q / kl_p, 1.0 / kl_p


def np_cbound(r, d):
    """``(C, dC/dr, dC/dd)`` of ``1 - (1 - 2r)^2 / (1 - 2d)`` (1 and zero slopes if vacuous)."""
    if r >= 0.5 or d >= 0.5:
        return 1.0, 0.0, 0.0
    a, b = 1 - 2 * r, 1 - 2 * d
    return 1 - a * a / b, 4 * a / b, -2 * a * a / (b * b)


class NumpyObjective:
    """The three forms' values and gradients in ``theta``, float64, from the statistics."""

    def __init__(self, statistics):
        s = statistics.stats
        self.risks, self.both = np.asarray(s.risks), np.asarray(s.tandem)
        either = np.asarray(s.pair_risks) + np.asarray(s.pair_risks).T
        self.one = either - 2 * self.both
        self.n, self.n2 = statistics.n, statistics.n2
        self.log_xi_n, self.log_xi_n2 = (float(np.log(xi(k))) for k in (self.n, self.n2))

    def statistics(self, theta):
        rho = special.softmax(theta)
        log_ratio = np.log(rho * rho.size)
        kl = float(rho @ log_ratio)
        values = {
            "gibbs": (rho @ self.risks, self.risks),
            "both": (rho @ self.both @ rho, 2 * self.both @ rho),
            "one": (rho @ self.one @ rho, 2 * self.one @ rho),
            "kl": (kl, log_ratio + 1),
        }
        return rho, values

    def seeger(self, s):
        g, d, kl = s["gibbs"][0], s["one"][0], s["kl"][0]
        log2 = np.log(2 / DELTA)
        r, r_q, r_e = np_kl_inverse(g, (kl + log2 + self.log_xi_n) / self.n, True)
        low, low_q, low_e = np_kl_inverse(
            min(d, 0.5), (2 * kl + log2 + self.log_xi_n2) / self.n2, False
        )
        c, c_r, c_d = np_cbound(min(r, 0.5), low)
        return c, {
            "gibbs": c_r * r_q,
            "one": c_d * low_q,
            "kl": c_r * r_e / self.n + 2 * c_d * low_e / self.n2,
        }

    def mcallester(self, s):
        g, d, kl = s["gibbs"][0], s["one"][0], s["kl"][0]
        a = np.sqrt((kl + np.log(4 * np.sqrt(self.n) / DELTA)) / (2 * self.n))
        b = np.sqrt((2 * kl + np.log(4 * np.sqrt(self.n2) / DELTA)) / (2 * self.n2))
        c, c_r, c_d = np_cbound(min(g + a, 0.5), max(d - b, 0.0))
        c_d = c_d if d - b > 0 else 0.0
        kl_slope = c_r / (4 * self.n * a) - c_d / (2 * self.n2 * b)
        return c, {"gibbs": c_r, "one": c_d, "kl": kl_slope}

    def joint(self, s, steps: int = 60):
        e_s, d_s, kl = s["both"][0], s["one"][0], s["kl"][0]
        eps = (2 * kl + np.log(np.exp(self.log_xi_n2) + self.n2) - np.log(DELTA)) / self.n2
        rest_s = 1 - e_s - d_s

        def top(d):  # the slice's largest e, by the chain rule of the KL
            slack = max(eps - np_kl(d_s, d), 0.0) / (1 - d_s)
            return (1 - d) * np_kl_inverse(e_s / (1 - d_s), slack, True)[0]

        def profile(d):
            e = min(top(d), (1 - d) / 2)
            return np_cbound(e + d / 2, d)[0]

        lo, hi = np_kl_inverse(d_s, eps, False)[0], min(np_kl_inverse(d_s, eps, True)[0], 0.5)
        ratio = (np.sqrt(5) - 1) / 2
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1, f2 = profile(x1), profile(x2)
        for _ in range(steps):
            if f1 >= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = profile(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = profile(x2)
        d = (lo + hi) / 2
        e = top(d)
        value, c_r, _ = np_cbound(e + d / 2, d)
        if value >= 1.0:
            return 1.0, {"both": 0.0, "one": 0.0, "kl": 0.0}
        # envelope theorem: V = C(e(theta), d*), kl3(e_s, d_s || e, d*) = eps
        kl_e = -e_s / e + rest_s / (1 - e - d)
        slope = c_r / kl_e  # dC/de (dr = de) per unit of kl slack
        kl_es = np.log(e_s / e) - np.log(rest_s / (1 - e - d))
        kl_ds = np.log(d_s / d) - np.log(rest_s / (1 - e - d))
        return value, {"both": -slope * kl_es, "one": -slope * kl_ds, "kl": slope * 2 / self.n2}

    def value_and_grad(self, name, theta):
        rho, s = self.statistics(theta)
        value, partials = getattr(self, name.removeprefix("cbound_"))(s)
        g_rho = sum(p * s[k][1] for k, p in partials.items())
        return value, rho * (g_rho - rho @ g_rho)


def np_rprop(objective: NumpyObjective, name: str, steps: int, n_voters: int):
    """optax.rprop(0.05)'s steps (eta- 0.5, eta+ 1.2, step sizes in [1e-6, 50]), the best kept."""
    theta, prev = np.zeros(n_voters), np.zeros(n_voters)
    size = np.full(n_voters, 0.05)
    best = (np.inf, theta)
    for _ in range(steps):
        value, grad = objective.value_and_grad(name, theta)
        if value < best[0]:
            best = (value, theta.copy())
        sign = np.sign(grad * prev)
        size = np.clip(
            np.where(sign > 0, size * 1.2, np.where(sign < 0, size * 0.5, size)), 1e-6, 50
        )
        grad = np.where(sign < 0, 0.0, grad)
        theta = theta - np.sign(grad) * size
        prev = grad
    return best


# ------------------------------------------------------------------------------ the run
def run_pacbound(statistics, test, name, steps, optimizer=None):
    """``(row, rho)``: compile time, warm time to the final bound, the bounds at its rho."""

    def minimize():
        return EB.optimize_posterior(statistics, name, steps=steps, optimizer=optimizer)

    start = time.perf_counter()
    result = jax.block_until_ready(minimize())
    first = time.perf_counter() - start
    warm = median_time(minimize, repeats=3, warmup=False)
    rho = np.asarray(result.rho, np.float64)
    rho /= rho.sum()
    cert = EB.certify_ensemble(statistics, rho)
    risk = EB.majority_vote_risk(*test, rho, statistics.n_classes)
    return {
        "objective": name, "optimizer": "cocob" if optimizer is _COCOB else "rprop(0.05)",
        "steps": steps, "compile_s": max(first - warm, 0.0), "time_s": warm,
        "per_step_ms": 1e3 * warm / steps, "bound": float(result.bound), "test_risk": risk,
        "kl": cert.kl, **{k: v for k, v in cert.bounds.items()},
    }, rho  # fmt: skip


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="satimage")
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--numpy-steps", type=int, default=200)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    load = os.getloadavg()[0]
    statistics, test, description = load_problem(args.data, args.trees)
    print(description)
    uniform = np.full(args.trees, 1.0 / args.trees)
    base = EB.certify_ensemble(statistics, uniform)
    rows = [{
        "objective": "uniform", "optimizer": "-", "steps": 0, "compile_s": 0.0, "time_s": 0.0,
        "per_step_ms": 0.0, "bound": float("nan"),
        "test_risk": EB.majority_vote_risk(*test, uniform, statistics.n_classes), "kl": 0.0,
        **base.bounds,
    }]  # fmt: skip
    for name in (*FORMS, *BASELINES):
        rows.append(run_pacbound(statistics, test, name, args.steps)[0])
    for name in FORMS:
        rows.append(run_pacbound(statistics, test, name, 2 * args.steps, _COCOB)[0])

    # the NumPy implementation: values against pacbound's objectives, then timed
    objective = NumpyObjective(statistics)
    data = SM.bound_data(
        jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), statistics.stats),
        statistics.n, statistics.n2, jnp.float32(DELTA),
    )  # fmt: skip
    prior = jnp.full(args.trees, 1.0 / args.trees, jnp.float32)
    numpy_rows = []
    for name in FORMS:
        ours = float(SM.OBJECTIVES[name](prior, jnp.float32(0.0), data))
        value, _ = objective.value_and_grad(name, np.zeros(args.trees))
        steps = args.numpy_steps if name == "cbound_joint" else args.steps
        start = time.perf_counter()
        best, _ = np_rprop(objective, name, steps, args.trees)
        seconds = time.perf_counter() - start
        ours_row = next(r for r in rows if r["objective"] == name and r["optimizer"] != "cocob")
        numpy_rows.append({
            "objective": name, "uniform_numpy": value, "uniform_pacbound": ours,
            "numpy_steps": steps, "numpy_s": seconds, "numpy_per_step_ms": 1e3 * seconds / steps,
            "numpy_bound": best, "numpy_s_at_pacbound_steps": seconds / steps * args.steps,
            "pacbound_s": ours_row["time_s"], "pacbound_per_step_ms": ours_row["per_step_ms"],
            "pacbound_bound": ours_row["bound"],
        })  # fmt: skip

    columns = (
        "objective", "optimizer", "steps", "test_risk", "tnd", "cctnd", "cbound_seeger",
        "cbound_mcallester", "cbound_joint", "kl", "compile_s", "time_s", "per_step_ms",
    )  # fmt: skip
    print(f"\n{description['data']}: bounds at each minimizer (certified in float64), out of bag")
    print_table(columns, [[r[c] for c in columns] for r in rows])
    print(f"\npacbound vs NumPy/SciPy, the same objective and RProp steps ({args.steps} steps)")
    columns2 = ("objective", "uniform_pacbound", "uniform_numpy", "pacbound_per_step_ms",
                "numpy_per_step_ms", "pacbound_s", "numpy_s_at_pacbound_steps",
                "pacbound_bound", "numpy_bound", "numpy_steps")  # fmt: skip
    print_table(columns2, [[r[c] for c in columns2] for r in numpy_rows])
    out = write_json(
        "bench_multiclass",
        {"problem": description, "delta": DELTA, "steps": args.steps, "load_average": load,
         "rows": rows, "numpy": numpy_rows},
        args.json,
    )  # fmt: skip
    print(f"\nload average {load:.2f}; results in {out}")


if __name__ == "__main__":
    sys.exit(main())
