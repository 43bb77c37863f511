"""The ``pacbound`` command (console script and ``python -m pacbound``).

* ``pacbound demo``: every learner of :mod:`pacbound._src.estimators` on the bundled breast-cancer
  set with roy2016's split (half for training, at most 500) and 10 decision stumps per feature;
  a table of test risk, empirical C-bound, certified bounds, voters used and fit time.
* ``pacbound compare --data NAME|PATH``: the same table on any dataset
  :func:`pacbound._src.datasets.load` reads; ``--json FILE`` writes it (one row per learner, the
  rows :func:`pacbound.plots.plot_compare` draws) and ``--plot FILE`` draws it
  (matplotlib).
* ``pacbound reproduce roy2016-table1 | germain2009-table1``: the papers' Table 1 protocols
  (:mod:`pacbound._src.apps.reproduce.command`, :mod:`pacbound._src.apps.reproduce.runner`).
* ``pacbound bounds --data NAME|PATH [--ensemble rf --trees 100]``: a forest's every
  second-order bound, uniform and optimized posteriors, with test risks
  (:mod:`pacbound._src.apps.bounds`).
* ``pacbound datasets``: the names ``--data`` takes: scikit-learn's bundled sets and the
  registered papers' sets, each with whether its file is under ``$PACBOUND_DATA``.

Bad arguments or input end with a one-line message on stderr and exit status 2. A subcommand
is added by one ``register(commands)`` function appended to :data:`SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable

from pacbound import __version__, datasets
from pacbound._src.apps.bounds import register as register_bounds
from pacbound._src.apps.report import run_report
from pacbound._src.apps.reproduce.command import register as register_reproduce
from pacbound._src.bounds import xi
from pacbound._src.cbound import cbound
from pacbound._src.compilation_cache import enable_compilation_cache
from pacbound._src.datasets.loaders import BUNDLED
from pacbound._src.datasets.registry import REGISTRY

# fixed, sensible hyperparameters of each learner in the demo (no cross-validation)
DEMO_SETTINGS: dict[str, dict] = {
    "mincq": {"mu": 0.05},
    "cqboost": {"mu": 0.05, "max_columns": 50},
    "cbboost": {"n_rounds": 50},
    "gbcbboost": {"n_rounds": 50},
    "klboost": {"C": 10.0, "gamma": 0.1, "max_iter": 200},
    "vebboost": {"lam": 0.5, "n_rounds": 50},
    "bound": {"objective": "pac_bound_2", "max_iter": 300},
    "adaboost": {"n_rounds": 50},
    "mdboost": {"D": 10.0, "max_columns": 50},
    "lpboost": {"C": 1.0, "max_columns": 50},
    "cgboost": {"C": 1.0, "max_columns": 50},
}
# the bounds printed for each learner: each holds at delta on its own; "best" is the smaller of
# the two recomputed at delta / 2 (the union bound), so that it holds at delta too
TABLE_BOUNDS = ("cbound_roy2016", "pac_bound_2")
# JSON key -> table header, in table order
COLUMNS = {
    "test_risk": "test risk", "train_risk": "train risk", "cbound": "C-bound",
    "cbound_roy2016": "roy2016", "pac_bound_2": "PAC-Bound 2", "best_bound": "best",
    "n_voters": "voters", "fit_time_s": "fit (s)",
}  # fmt: skip


class UsageError(Exception):
    """Bad arguments or input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit status 2 in main
        raise UsageError(message)


# ----------------------------------------------------------------------- the table
def _learners(spec: str) -> list[str]:
    names = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = sorted(set(names) - set(DEMO_SETTINGS))
    if unknown or not names:
        raise UsageError(f"unknown learners {unknown}; choose among {','.join(DEMO_SETTINGS)}")
    return names


def _row(name: str, clf, split, delta: float) -> dict:
    s = clf.train_stats_
    certificate = clf.certificate(delta, TABLE_BOUNDS)
    return {
        "learner": name,
        "test_risk": 1.0 - clf.score(split.X_test, split.y_test),
        "train_risk": s.risk,
        "cbound": float(cbound(s.mu1, s.mu2)),
        **{b: float(certificate.bounds[b]) for b in TABLE_BOUNDS},
        "best_bound": float(certificate.best[1]),
        "n_voters": clf.n_voters_,
        "fit_time_s": clf.fit_time_,
        "mu1": s.mu1,
        "kl": s.kl,
    }


def compare_learners(args: argparse.Namespace) -> dict:
    """Fit each learner of ``args.learners`` on the roy2016 split of ``args.data``."""
    from pacbound._src.estimators.classifiers import ESTIMATORS

    if not 0.0 < args.delta <= 1.0:
        raise UsageError(f"--delta must be in (0, 1]; got {args.delta}")
    if args.stumps < 1:
        raise UsageError(f"--stumps must be >= 1; got {args.stumps}")
    names = _learners(args.learners)
    data = datasets.load(args.data)
    split = datasets.roy2016_split(data.X, data.y, seed=args.seed)
    rows = []
    for name in names:
        clf = ESTIMATORS[name](n_stumps=args.stumps, **DEMO_SETTINGS[name])
        rows.append(_row(name, clf.fit(split.X_train, split.y_train), split, args.delta))
    return {
        "data": data.name, "train": len(split.y_train), "test": len(split.y_test),
        "features": split.X_train.shape[1], "stumps_per_feature": args.stumps,
        "delta": args.delta, "seed": args.seed, "settings": {n: DEMO_SETTINGS[n] for n in names},
        "results": rows,
    }  # fmt: skip


_VACUOUS = 1.0 - 5e-5  # prints as 1.0000: the trivial bound


def _vacuous_note(report: dict) -> str | None:
    """One line on the rows whose bounds are 1: each vote's mean margin ``mu1`` against what the
    bounds take from it at this ``m`` (roy2016's deviation of ``mu1``, PAC-Bound 2's kl radius),
    and the learners whose bounds say something."""
    rows = report["results"]
    vacuous = [r for r in rows if any(r[b] >= _VACUOUS for b in TABLE_BOUNDS)]
    if not vacuous:
        return None
    m, delta = report["train"], report["delta"]
    roy = math.log(4.0 * math.sqrt(m) / delta)  # roy2016 Thm 2 at delta / 2
    pb2 = math.log((float(xi(m)) + m) / delta)
    each = "; ".join(
        f"{r['learner']} mu1 {r['mu1']:.3f} vs {math.sqrt(2.0 * (r['kl'] + roy) / m):.3f} "
        f"and {(2.0 * r['kl'] + pb2) / m:.3f}"
        for r in vacuous
    )
    useful = [r["learner"] for r in rows if r["best_bound"] < _VACUOUS]
    return (
        f"* vacuous (1, the trivial bound): at m = {m} training examples these votes' mean "
        f"margin mu1 is too small for what the bounds take from it, roy2016's deviation "
        f"sqrt(2 (KL + ln(4 sqrt(m) / delta)) / m) and PAC-Bound 2's kl radius "
        f"(2 KL + ln((xi(m) + m) / delta)) / m: {each}. Informative here: "
        f"{', '.join(useful) if useful else 'none (a larger sample or a larger margin)'}"
    )


def format_table(report: dict) -> str:
    """The report as a fixed-width text table; a bound of 1 (vacuous) is starred, and a line
    under the table says why and which learners' bounds are informative."""
    head = (
        f"{report['data']}: {report['train']} training / {report['test']} test examples, "
        f"{report['features']} features x {report['stumps_per_feature']} stumps (and their "
        f"complements); each bound holds with probability 1 - {report['delta']} (best: the "
        f"smaller at delta / {len(TABLE_BOUNDS)}, union bound)"
    )
    width = max(len(row["learner"]) for row in report["results"]) + 2
    lines = [head, "learner".ljust(width) + "".join(f"{c:>13}" for c in COLUMNS.values())]
    bounds = (*TABLE_BOUNDS, "best_bound")
    for row in report["results"]:
        cells = [
            f"{row[c]:>13d}"
            if c == "n_voters"
            else f"{row[c]:>12.4f}*"
            if c in bounds and row[c] >= _VACUOUS
            else f"{row[c]:>13.4f}"
            for c in COLUMNS
        ]
        lines.append(row["learner"].ljust(width) + "".join(cells))
    note = _vacuous_note(report)
    return "\n".join(lines + ([note] if note else []))


def _compare_figure(report: dict):
    from pacbound._src.apps import plots

    keys = ("test_risk", "cbound_roy2016", "pac_bound_2")
    title = f"{report['data']} (delta = {report['delta']})"
    return plots.plot_compare(report["results"], keys=keys, title=title)


def run_compare(args: argparse.Namespace) -> None:
    run_report(args, compare_learners, format_table, _compare_figure)


def _table_options(p: argparse.ArgumentParser, data_default: str | None) -> None:
    data_help = "dataset name (`pacbound datasets` lists them) or file path"
    if data_default is None:
        p.add_argument("--data", required=True, help=data_help)
    else:
        p.add_argument("--data", default=data_default, help=data_help)
    names = ",".join(DEMO_SETTINGS)
    p.add_argument("--learners", default=names, help=f"comma-separated subset of {names}")
    p.add_argument("--delta", type=float, default=0.05, help="confidence parameter in (0, 1]")
    p.add_argument("--stumps", type=int, default=10, help="stumps per feature")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    p.add_argument("--json", metavar="FILE", help="write the table as JSON")
    p.add_argument("--plot", metavar="FILE", help="bar chart of risks and bounds (matplotlib)")
    p.set_defaults(run=run_compare)


def register_demo(commands) -> None:
    what = "every learner on the bundled breast-cancer set (roy2016 split, 10 stumps per feature)"
    p = commands.add_parser("demo", help=what, description=what)
    _table_options(p, "breast_cancer")


def register_compare(commands) -> None:
    what = "compare the learners on a dataset (name or file), roy2016 split"
    p = commands.add_parser("compare", help=what, description=what)
    _table_options(p, None)


def list_datasets(args: argparse.Namespace) -> None:
    """Print the names ``--data`` takes: bundled, then registered (with their files' status)."""
    folder = os.environ.get("PACBOUND_DATA")
    print("bundled with scikit-learn (offline): " + ", ".join(sorted(BUNDLED)))
    where = f"under PACBOUND_DATA={folder}" if folder else "PACBOUND_DATA is not set"
    print(f"registered (the papers' sets; {where}):")
    width = max(map(len, REGISTRY)) + 2
    for name, entry in sorted(REGISTRY.items()):
        if entry.path is None:
            status = f"no file: OpenML {entry.openml}"
        elif folder and os.path.isfile(os.path.join(folder, entry.path)):
            status = "present"
        else:
            status = f"missing: {entry.path}"
        print(f"  {name:<{width}}{status:<42}{entry.papers}")
    print("or a file path (CSV, KEEL .dat, ARFF); NAME:AvB picks two classes (iris:0v1)")


def register_datasets(commands) -> None:
    what = "list the dataset names --data takes"
    p = commands.add_parser("datasets", help=what, description=what)
    p.set_defaults(run=list_datasets)


SUBCOMMANDS: list[Callable] = [
    register_demo, register_compare, register_reproduce, register_bounds, register_datasets,
]  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    description = "Learn weighted majority votes with PAC-Bayesian bounds and certify them."
    parser = _Parser(prog="pacbound", description=description)
    parser.add_argument("--version", action="version", version=f"pacbound {__version__}")
    parser.add_argument(
        "--no-cache", action="store_true",
        help="do not keep compiled programs on disk (default: JAX's persistent compilation "
        "cache under ~/.cache/pacbound/jax; or set PACBOUND_NO_COMPILATION_CACHE)",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", required=True)
    for register in SUBCOMMANDS:
        register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if not args.no_cache:
            enable_compilation_cache()
        args.run(args)
    except (UsageError, ValueError, KeyError, ImportError, OSError) as err:
        message = str(err.args[0] if isinstance(err, KeyError) and err.args else err)
        print(f"pacbound: error: {' '.join(message.split())}", file=sys.stderr)
        return 2
    return 0
