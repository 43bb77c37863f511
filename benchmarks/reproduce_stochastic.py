"""zantedeschi2021's binary stump experiments (data-independent prior), and the other bound
minimizers on the same splits: ``python benchmarks/reproduce_stochastic.py [--quick]``.

The paper's protocol (its code, github.com/vzantedeschi/StocMV at ce0d3bd: ``real.sh``,
``real.py``, ``config/real.yaml``, ``data/real_datasets.py``, ``models/stumps.py``): for
``num_trials = 10`` seeds ``23042021 + i``, a stratified 80 / 20 train / test split
(``train_test_split(stratify=y, test_size=0.2)`` under that seed); 10 thresholds per feature
(here :func:`pacbound.voters.fit_stumps`), every stump in both directions; the prior
``Dir(1, ..., 1)``; Seeger's bound at ``delta = 0.05`` minimized by Adam (learning rate 0.1);
reported: the bound on the training set and the stochastic vote's exact expected risk on the
test set, mean and standard deviation (``np.std``) over the trials. Mushroom is ordinally
encoded as in the paper (codes in order of first appearance); the other sets load through
:func:`pacbound.datasets.load_registered`.

Learners on each split: the Dirichlet learner (exact risk; the paper's Monte Carlo risk; the
paper's plateau rule per step; an informed prior learned on half of the training set), and the
finite posteriors over the same ``[H, -H]``: first order (``minimize_bound(..., "seeger")``,
the paper's "FO"), C-bound (``"pac_bound_2"``), TND (the paper's "SO") and CCTND
(:mod:`pacbound._src.second_order_minimize`, each descending an unclipped surrogate where its bound
is flat at 1, certified by the bound itself). Training in float32 (the paper's PyTorch default),
certificates in float64. Results: ``results/reproduce_stochastic.{json,md}``; needs
``PACBOUND_DATA`` (e.g. ``../shared/data``) or ``--data-dir``.
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
from common import RESULTS, write_json
from sklearn.model_selection import train_test_split

from pacbound._src.datasets.registry import load_registered
from pacbound._src.loss_statistics import loss_statistics, tandem_risk
from pacbound._src.second_order_minimize import OBJECTIVES, bound_data
from pacbound._src.solvers.informed_prior import (
    complemented_errors,
    dirichlet_prior_learner,
    informed_prior,
    second_order_prior_learner,
    split_for_prior,
)
from pacbound._src.solvers.stochastic import PAPER_OPTIMIZER
from pacbound._src.stochastic_votes import stochastic_risks
from pacbound.certify import certify
from pacbound.kl import kl_divergence, kl_inv_upper
from pacbound.solvers import minimize_bound, minimize_dirichlet_bound
from pacbound.voters import fit_stumps, votes

SEED, TRIALS, DELTA = 23042021, 10, 0.05
PAPER_SETS = ("haberman", "mushroom")  # the paper's binary sets with a file here
EXTRA_SETS = ("ionosphere", "wdbc", "australian", "pima")  # not in the paper's table

# The paper's binary table (data-independent prior, M = 10 stumps per feature, Seeger, prior 1),
# in %, (mean, std) over 10 trials, as printed by the authors' notebooks/Real-Binary.ipynb:
# name -> method -> (test error, bound). FO: first order, SO: second order (tandem).
PAPER = {
    "haberman": {
        "exact": ((29.84, 7.34), (46.97, 17.69)), "MC": ((30.10, 7.21), (47.34, 17.57)),
        "FO": ((25.48, 3.37), (75.24, 1.78)), "SO": ((26.45, 2.99), (110.60, 1.65)),
    },
    "tictactoe": {
        "exact": ((30.91, 2.10), (42.49, 0.53)), "MC": ((30.84, 2.38), (43.07, 0.72)),
        "FO": ((29.22, 2.77), (76.48, 1.48)), "SO": ((30.52, 3.55), (100.25, 0.99)),
    },
    "svmguide1": {
        "exact": ((6.11, 0.25), (11.38, 0.61)), "MC": ((6.27, 0.40), (11.79, 0.68)),
        "FO": ((6.83, 0.00), (18.62, 0.00)), "SO": ((6.83, 0.00), (31.06, 0.36)),
    },
    "mushroom": {
        "exact": ((1.30, 0.35), (4.77, 0.26)), "MC": ((1.23, 0.23), (5.42, 0.20)),
        "FO": ((4.60, 0.36), (12.31, 0.22)), "SO": ((4.60, 0.36), (21.27, 0.31)),
    },
    "phishing": {
        "exact": ((8.12, 0.35), (13.50, 0.19)), "MC": ((7.74, 0.42), (14.62, 0.28)),
        "FO": ((11.26, 0.58), (25.75, 0.32)), "SO": ((10.10, 0.73), (35.67, 0.21)),
    },
    "codrna": {
        "exact": ((11.77, 0.16), (15.16, 0.17)), "MC": ((13.13, 3.43), (16.48, 2.86)),
        "FO": ((23.52, 0.35), (49.45, 0.47)), "SO": ((22.93, 1.43), (60.59, 0.20)),
    },
    "adult": {
        "exact": ((23.49, 1.99), (25.42, 1.07)), "MC": ((24.07, 0.00), (26.46, 0.09)),
        "FO": ((22.14, 0.36), (46.93, 0.19)), "SO": ((17.02, 0.29), (53.33, 0.09)),
    },
}  # fmt: skip
OURS_FOR_PAPER = {"exact": "dirichlet", "MC": "dirichlet_mc", "FO": "first_order", "SO": "tnd"}

LEARNERS = (
    "dirichlet", "dirichlet_mc", "dirichlet_plateau", "dirichlet_informed",
    "first_order", "cbound", "tnd", "cctnd",
)  # fmt: skip
LABELS = {
    "dirichlet": "Dirichlet, exact risk",
    "dirichlet_mc": "Dirichlet, MC risk",
    "dirichlet_plateau": "Dirichlet, paper's plateau rule",
    "dirichlet_informed": "Dirichlet, informed prior (1/2)",
    "first_order": "first order (2 x Seeger)",
    "cbound": "C-bound (PAC-Bound 2)",
    "tnd": "TND",
    "cctnd": "CCTND",
}
STOCHASTIC = {"dirichlet", "dirichlet_mc", "dirichlet_plateau", "dirichlet_informed"}


def tnd_unclipped(rho, kl, data):
    """The paper's "SO" objective, ``4 kl^-1_up(T(rho), (2 KL + ln(2 sqrt(n2) / delta)) / n2)``,
    not clipped at 1 (TND is flat there, at the uniform posterior on hard sets)."""
    eps = (2.0 * kl + jnp.log(2.0 * jnp.sqrt(data.n2) / data.delta)) / data.n2
    return 4.0 * kl_inv_upper(tandem_risk(data.stats, rho), eps)


def cctnd_surrogate(rho, kl, data):
    """CCTND where it is below 1, ``1 + tnd_unclipped`` where it is flat at 1."""
    value = OBJECTIVES["cctnd"](rho, kl, data)
    return jnp.where(value < 1.0, value, 1.0 + tnd_unclipped(rho, kl, data))


SURROGATES = {"tnd": tnd_unclipped, "cctnd": cctnd_surrogate}


def learner_data(H, y):
    """The second-order statistics of ``[H, -H]`` on the sample (``n = n2 = m``)."""
    return bound_data(loss_statistics(complemented_errors(H, y)), len(y), len(y), DELTA)


def load_mushroom_ordinal(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """KEEL mushroom, each categorical feature coded 1, 2, ... in order of first appearance
    (the paper's ``OrdinalEncoder``); poisonous -> +1."""
    rows = [
        line.strip().split(",") for line in open(data_dir / "keel/mushroom.dat") if line.strip()
    ]
    cells = np.array(rows)
    codes = []
    for column in cells[:, :-1].T:
        _, first, inverse = np.unique(column, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first))  # levels ranked by first appearance
        codes.append(rank[inverse] + 1.0)
    return np.stack(codes, axis=1), np.where(cells[:, -1] == "p", 1.0, -1.0)


def load(name: str, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    if name == "mushroom":
        return load_mushroom_ordinal(data_dir)
    return load_registered(name, data_dir, return_X_y=True)


def mv_error(H: np.ndarray, y: np.ndarray, weights) -> float:
    """Empirical risk of the vote ``sign(H w)``, a tie an error."""
    return float(np.mean(y * (H @ np.asarray(weights, np.float64)) <= 0))


def run_dirichlet(kind, Ht, yt, Hs, ys, seed):
    """(bound, test stochastic risk, test mean-vote error, extras) of one Dirichlet fit."""
    if kind == "dirichlet_informed":
        split = split_for_prior(len(yt), 0.5, seed)
        out = informed_prior(dirichlet_prior_learner(), Ht, yt, split)
        alpha, bound, m = np.asarray(out.result.info.alpha), float(out.bound), out.m
    else:
        options = {
            "dirichlet": {},
            "dirichlet_mc": dict(risk="monte_carlo", key=jax.random.key(seed)),
            "dirichlet_plateau": dict(optimizer=PAPER_OPTIMIZER),
        }[kind]
        r = minimize_dirichlet_bound(Ht, yt, "seeger", delta=DELTA, **options)
        alpha, bound, m = np.asarray(r.info.alpha), float(r.info.certified), len(yt)
    with jax.enable_x64(True):
        test = float(np.mean(stochastic_risks(Hs.astype(np.float64), ys, alpha.astype(np.float64))))
    n = Ht.shape[1]
    q = alpha / alpha.sum()
    return bound, test, mv_error(Hs, ys, q[:n] - q[n:]), {"m": m, "alpha_sum": float(alpha.sum())}


def run_finite(kind, Ht, yt, Hs, ys):
    """(bound on R(B_Q), test error of B_Q, extras) of one finite-posterior fit."""
    if kind in ("first_order", "cbound"):
        name = "seeger" if kind == "first_order" else "pac_bound_2"
        r = minimize_bound(Ht, yt, name, delta=DELTA)
        cert = certify(r, Ht, yt, bounds=[name], delta=DELTA)
        return (
            float(cert.bounds[name]),
            mv_error(Hs, ys, r.weights),
            {"kl": float(cert.statistics.kl)},
        )
    learner = second_order_prior_learner(kind, delta=DELTA, surrogate=SURROGATES[kind])
    result = learner.fit(Ht, yt, None)
    with jax.enable_x64(True):
        rho = np.asarray(result.rho, np.float64)
        rho = rho / rho.sum()
        bound = float(
            learner.certify(result._replace(rho=jnp.asarray(rho)), Ht.astype(np.float64), yt, None)
        )
        unclipped = float(tnd_unclipped(jnp.asarray(rho), kl_divergence(rho, 1 / rho.size),
                                        learner_data(Ht.astype(np.float64), yt)))  # fmt: skip
    n = Ht.shape[1]
    return bound, mv_error(Hs, ys, rho[:n] - rho[n:]), {"tnd_unclipped": unclipped}


def one_trial(X, y, trial, learners):
    seed = SEED + trial
    Xt, Xs, yt, ys = train_test_split(X, y, stratify=y, test_size=0.2, random_state=seed)
    stumps = fit_stumps(Xt, 10)
    Ht = np.asarray(votes(stumps, Xt, dtype=jnp.float32))
    Hs = np.asarray(votes(stumps, Xs, dtype=jnp.float32))
    yt, ys = yt.astype(np.float32), ys.astype(np.float64)
    rows = {}
    for kind in learners:
        start = time.perf_counter()
        if kind in STOCHASTIC:
            bound, test, mean_vote, extra = run_dirichlet(kind, Ht, yt, Hs, ys, seed)
            extra = {"mean_vote_test": mean_vote, "mean_vote_bound": min(1.0, 2 * bound), **extra}
        else:
            bound, test, extra = run_finite(kind, Ht, yt, Hs, ys)
        rows[kind] = {"bound": bound, "test": test, "seconds": time.perf_counter() - start, **extra}
    return rows, {"m_train": len(yt), "m_test": len(ys), "voters": 2 * Ht.shape[1]}


def summarize(trials: list[dict]) -> dict:
    """mean and np.std (the paper's) of every number over the trials; the first trial's time
    (compilation included) apart."""
    out = {}
    for kind in trials[0]:
        values = {k: np.array([t[kind][k] for t in trials]) for k in trials[0][kind]}
        out[kind] = {k: (float(v.mean()), float(v.std())) for k, v in values.items()}
        seconds = values["seconds"]
        out[kind]["first_seconds"] = float(seconds[0])
        out[kind]["warm_seconds"] = float(np.median(seconds[1:])) if len(seconds) > 1 else None
    return out


def pct(pair) -> str:
    return f"{100 * pair[0]:.2f} ± {100 * pair[1]:.2f}"


def paper_table(results: dict, trials: int) -> list[str]:
    lines = [
        f"### zantedeschi2021 binary stumps: ours / paper (%, mean ± std over {trials} splits)",
        "",
        "| dataset | method | test ours | test paper | bound ours | bound paper |",
        "|---|---|---|---|---|---|",
    ]
    for name in PAPER:
        for method, (test, bound) in PAPER[name].items():
            ours = results.get(name, {}).get("summary", {}).get(OURS_FOR_PAPER[method])
            key = "tnd_unclipped" if method == "SO" else "bound"  # the paper's SO is unclipped
            t, b = (pct(ours["test"]), pct(ours[key])) if ours else ("no data", "no data")
            lines.append(
                f"| {name} | {method} | {t} | {test[0]:.2f} ± {test[1]:.2f} | {b} | "
                f"{bound[0]:.2f} ± {bound[1]:.2f} |"
            )
    return lines


def table(title: str, results: dict, learners: list[str], cell, first="dataset") -> list[str]:
    """A markdown table: one row per dataset, ``cell(summary_of_learner)`` per learner."""
    lines = ["", f"### {title}", "", f"| {first} | " + " | ".join(LABELS[k] for k in learners)]
    lines[-1] += " |"
    lines.append("|---" * (len(learners) + 1) + "|")
    for name, r in results.items():
        head = (
            f"{name} ({r['info']['m_train']}, {r['info']['voters']})"
            if first != "dataset"
            else name
        )
        cells = [cell(r["summary"][k]) if k in r["summary"] else "" for k in learners]
        lines.append(f"| {head} | " + " | ".join(cells) + " |")
    return lines


def warm(s: dict) -> str:
    rest = "-" if s["warm_seconds"] is None else f"{s['warm_seconds']:.1f}"
    return f"{s['first_seconds']:.1f} / {rest}"


def markdown(results: dict, trials: int) -> str:
    shown = [k for k in LEARNERS if any(k in r["summary"] for r in results.values())]
    stochastic = [k for k in shown if k in STOCHASTIC]
    lines = paper_table(results, trials)
    lines += table(
        "Every learner on the same splits: certificate / test error (%)", results, shown,
        lambda s: f"{pct(s['bound'])} / {pct(s['test'])}", "dataset (m train, voters)",
    )  # fmt: skip
    if stochastic:
        lines += table(
            "Mean vote of the Dirichlet posteriors: 2 x bound / test error (%)", results,
            stochastic, lambda s: f"{pct(s['mean_vote_bound'])} / {pct(s['mean_vote_test'])}",
        )  # fmt: skip
    lines += table(
        "Seconds per fit: the first (compiling) / median of the rest", results, shown, warm
    )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("PACBOUND_DATA", "../shared/data"))
    parser.add_argument("--datasets", default=",".join(PAPER_SETS + EXTRA_SETS))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--trials", type=int, default=TRIALS)
    parser.add_argument("--quick", action="store_true", help="2 trials, haberman only")
    parser.add_argument("--out", default="reproduce_stochastic")
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if not data_dir.is_dir():
        print(f"no data directory {data_dir}: set PACBOUND_DATA or --data-dir", file=sys.stderr)
        return 2
    names = ["haberman"] if args.quick else args.datasets.split(",")
    trials = 2 if args.quick else args.trials
    learners = args.learners.split(",")
    results = {}
    for name in names:
        X, y = load(name, data_dir)
        start, rows = time.perf_counter(), []
        for trial in range(trials):
            row, info = one_trial(X, y, trial, learners)
            rows.append(row)
            print(name, trial, {k: round(v["bound"], 4) for k, v in row.items()}, flush=True)
        info |= {"seconds": time.perf_counter() - start, "load": os.getloadavg()[0]}
        results[name] = {"info": info, "summary": summarize(rows), "trials": rows}
        payload = {"protocol": __doc__, "delta": DELTA, "trials": trials, "results": results}
        write_json(args.out, payload)
        (RESULTS / f"{args.out}.md").write_text(markdown(results, trials))
    print(markdown(results, trials))
    return 0


if __name__ == "__main__":
    sys.exit(main())
