"""``pacbound bounds``: how good is a forest's vote on this data, certifiably?

``pacbound bounds --data NAME|PATH [--ensemble rf|extra|bagging] [--trees 100] [--delta 0.05]
[--test-size 0.2] [--holdout FRACTION] [--objectives a,b] [--steps 1000] [--seed 0]
[--json FILE] [--plot FILE]`` loads any dataset :func:`pacbound._src.datasets.load` reads, with
all its classes (``multiclass=True``), splits off a stratified test set, trains the forest
(:class:`pacbound._src.estimators.ForestClassifier`) and prints, for the uniform posterior and the
minimizer of each bound (:data:`pacbound._src.ensemble_bounds.BOUNDS`, out of bag or on a held-out
fraction of the training part), every bound, the test risk of the vote and the time: TND,
CCTND, CCPBB, split-kl and, beside them, the C-bound's Seeger, McAllester and joint forms
(columns ``C Seeger``, ``C McAll.``, ``C joint``), whose minimizers are the direct C-bound
learners of Viallard et al. (ECML-PKDD 2021), for binary and multiclass data alike.
``--json`` writes the table (one row per posterior), ``--plot`` draws it as grouped bars
(:func:`pacbound.plots.plot_compare`). Output paths are checked before anything is
fitted; bad arguments end with one line on stderr and exit status 2 (:func:`pacbound._src.apps.cli.
main`).
"""

from __future__ import annotations

import argparse

from pacbound import datasets
from pacbound._src.apps.report import run_report
from pacbound._src.ensemble_bounds import BOUNDS, EnsembleReport

__all__ = ["bounds_report", "format_bounds_table", "register", "run_bounds"]

_ENSEMBLE_NAMES = {"rf": "random forest", "extra": "extra-trees", "bagging": "bagging"}
_COLUMNS = (
    "test_risk", "first_order", "tnd", "cctnd", "ccpbb", "split_kl",
    "cbound_seeger", "cbound_mcallester", "cbound_joint", "ccpbub", "best", "kl",
)  # fmt: skip
_HEADERS = {
    "test_risk": "test risk", "first_order": "first order", "kl": "KL",
    "cbound_seeger": "C Seeger", "cbound_mcallester": "C McAll.", "cbound_joint": "C joint",
}  # fmt: skip
_OBJECTIVES = tuple(b for b in BOUNDS if b != "dis")  # DIS needs unlabeled inputs
_ON_REQUEST = ("ccpbub",)  # minimized (and reported) only when --objectives names it
_DEFAULT_OBJECTIVES = tuple(b for b in _OBJECTIVES if b not in _ON_REQUEST)


def _objectives(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if "dis" in names:
        raise ValueError(
            "--objectives dis: the DIS bound needs unlabeled inputs, which this command does "
            "not take; give them in Python: ForestClassifier(objective='dis').fit(X, y, "
            "X_unlabeled=U) (pacbound.estimators), binary labels only"
        )
    unknown = sorted(set(names) - set(_OBJECTIVES))
    if unknown or not names:
        raise ValueError(f"unknown objectives {unknown}; choose among {','.join(_OBJECTIVES)}")
    return names


def _check_arguments(args: argparse.Namespace) -> None:
    if args.trees < 1:
        raise ValueError(f"--trees must be >= 1; got {args.trees}")
    if not 0.0 < args.delta <= 1.0:
        raise ValueError(f"--delta must be in (0, 1]; got {args.delta}")
    if not 0.0 < args.test_size < 1.0:
        raise ValueError(f"--test-size must be in (0, 1); got {args.test_size}")
    if args.holdout is not None and not 0.0 < args.holdout < 1.0:
        raise ValueError(f"--holdout must be in (0, 1); got {args.holdout}")
    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1; got {args.steps}")


def _row(row) -> dict:
    cert = row.certificate
    return {
        "posterior": row.name, "test_risk": row.test_risk, **cert.bounds,
        "best": cert.best[1], "best_bound": cert.best[0], "kl": cert.kl,
        "gibbs_risk": cert.gibbs_risk, "tandem_risk": cert.tandem_risk,
        "mu": cert.parameters, "time_s": row.seconds,
    }  # fmt: skip


def bounds_report(args: argparse.Namespace) -> dict:
    """Train the forest on the training part of ``args.data`` and report every posterior.

    Returns:
      A dict: the data and settings, ``n`` / ``n2`` (the examples each bound is computed on),
      ``fit_time_s`` and ``results``, one row per posterior (``"uniform"``, then the minimizer
      of each objective) with its test risk, every bound, the best one, ``kl`` and time.

    Example:
      The dataset is read first; an unknown one is refused before any tree is grown (a report
      on a real set takes a minute: one compilation per bound).

      >>> import argparse
      >>> commands = argparse.ArgumentParser(prog="pacbound").add_subparsers()
      >>> register(commands)
      >>> args = commands.choices["bounds"].parse_args(["--data", "no_such_set"])
      >>> bounds_report(args)
      Traceback (most recent call last):
      ...
      ValueError: unknown dataset 'no_such_set': not bundled, not registered and not a file ...
    """
    try:
        from pacbound._src.estimators.forest import ForestClassifier
    except ImportError as err:
        hint = "pacbound bounds needs scikit-learn: pip install pacbound[sklearn]"
        raise ImportError(hint) from err

    data = datasets.load(args.data, multiclass=True)
    split = datasets.train_test_split(data.X, data.y, 1.0 - args.test_size, seed=args.seed)
    oob = True if args.holdout is None else args.holdout
    clf = ForestClassifier(
        args.ensemble, args.trees, objective="uniform", delta=args.delta, oob=oob,
        max_iter=args.steps, random_state=args.seed,
    ).fit(split.X_train, split.y_train)  # fmt: skip
    report: EnsembleReport = clf.report(split.X_test, split.y_test, _objectives(args.objectives))
    return {
        "data": data.name, "classes": list(data.classes), "train": len(split.y_train),
        "test": len(split.y_test), "features": data.X.shape[1], "ensemble": args.ensemble,
        "trees": args.trees, "delta": args.delta, "seed": args.seed,
        "mode": "out-of-bag" if args.holdout is None else f"held-out {args.holdout}",
        "n": report.n, "n2": report.n2, "fit_time_s": clf.fit_time_,
        "results": [_row(row) for row in report.rows],
    }  # fmt: skip


def format_bounds_table(report: dict) -> str:
    """The report as a fixed-width text table.

    Example:
      >>> row = {"posterior": "uniform", "test_risk": 0.05, "first_order": 0.41, "tnd": 0.38,
      ...        "best": 0.39, "kl": 0.0, "time_s": 1.5}
      >>> report = {"data": "iris", "classes": [0, 1, 2], "train": 120, "test": 30,
      ...           "features": 4, "ensemble": "rf", "trees": 10, "fit_time_s": 0.2,
      ...           "mode": "out-of-bag", "n": 40, "n2": 12, "delta": 0.05, "results": [row]}
      >>> head, table = format_bounds_table(report).split("\\n", 1)
      >>> head.split(";")[0]
      'iris: 3 classes, 120 training / 30 test examples, 4 features'
      >>> print(table)
      posterior   test risk first order         tnd        best          KL    time (s)
      uniform        0.0500      0.4100      0.3800      0.3900      0.0000        1.50
    """
    head = (
        f"{report['data']}: {len(report['classes'])} classes, {report['train']} training / "
        f"{report['test']} test examples, {report['features']} features; "
        f"{_ENSEMBLE_NAMES[report['ensemble']]} of {report['trees']} trees "
        f"(fit {report['fit_time_s']:.1f} s); {report['mode']} bounds with n = {report['n']}, "
        f"n2 = {report['n2']}; each holds with probability 1 - {report['delta']} (best: the "
        "smallest at delta / K, union bound)"
    )
    columns = [c for c in _COLUMNS if c in report["results"][0]]
    width = max(len(r["posterior"]) for r in report["results"]) + 2
    titles = [_HEADERS.get(c, c) for c in columns]
    lines = [head, "posterior".ljust(width) + "".join(f"{t:>12}" for t in titles) + "    time (s)"]
    for row in report["results"]:
        cells = "".join(f"{row[c]:>12.4f}" for c in columns)
        lines.append(row["posterior"].ljust(width) + cells + f"{row['time_s']:>12.2f}")
    return "\n".join(lines)


def _bounds_figure(report: dict):
    from pacbound._src.apps import plots

    rows = [{"learner": r["posterior"], **r} for r in report["results"]]
    keys = ("test_risk", *(b for b in BOUNDS if b in report["results"][0]))
    title = f"{report['data']}: {report['trees']} trees (delta = {report['delta']})"
    return plots.plot_compare(rows, keys=keys, title=title)


def run_bounds(args: argparse.Namespace) -> None:
    """``pacbound bounds``: check the arguments and output paths, then print the table of
    :func:`bounds_report` (:func:`format_bounds_table`) and the wall time; write it as JSON
    (``--json``) and as grouped bars (``--plot``).

    Raises:
      ValueError: an argument out of range, an unknown objective, ``--plot`` without
        matplotlib or an output folder that does not exist (before anything is fitted).

    Example:
      >>> import argparse
      >>> commands = argparse.ArgumentParser(prog="pacbound").add_subparsers()
      >>> register(commands)
      >>> run_bounds(commands.choices["bounds"].parse_args(["--data", "iris", "--trees", "0"]))
      Traceback (most recent call last):
      ...
      ValueError: --trees must be >= 1; got 0
    """
    _check_arguments(args)
    _objectives(args.objectives)
    run_report(args, bounds_report, format_bounds_table, _bounds_figure)


def register(commands) -> None:
    """Add ``bounds`` to the ``pacbound`` command's argparse subparsers.

    Example:
      >>> import argparse
      >>> commands = argparse.ArgumentParser(prog="pacbound").add_subparsers()
      >>> register(commands)
      >>> args = commands.choices["bounds"].parse_args(["--data", "x.csv"])
      >>> args.trees, args.delta, args.run is run_bounds
      (100, 0.05, True)
    """
    what = "train a forest and print every bound for the uniform and each optimized posterior"
    p = commands.add_parser("bounds", help=what, description=what)
    p.add_argument(
        "--data", required=True, help="dataset name (pacbound._src.datasets.load) or file"
    )
    p.add_argument("--ensemble", choices=tuple(_ENSEMBLE_NAMES), default="rf")
    p.add_argument("--trees", type=int, default=100, help="number of trees")
    p.add_argument("--delta", type=float, default=0.05, help="confidence parameter in (0, 1]")
    p.add_argument("--test-size", type=float, default=0.2, help="test fraction (stratified)")
    p.add_argument(
        "--holdout", type=float, metavar="FRACTION",
        help="bound on this fraction of the training part (default: out of bag)",
    )  # fmt: skip
    p.add_argument(
        "--objectives", metavar="A,B",
        help=f"comma-separated bounds to minimize (default: {', '.join(_DEFAULT_OBJECTIVES)}: "
        "every bound but dis, which needs unlabeled inputs, and ccpbub, computed when named)",
    )  # fmt: skip
    p.add_argument("--steps", type=int, default=1000, help="optimizer steps per minimization")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and the forest")
    p.add_argument("--json", metavar="FILE", help="write the table as JSON")
    p.add_argument("--plot", metavar="FILE", help="bar chart of risks and bounds (matplotlib)")
    p.set_defaults(run=run_bounds)
