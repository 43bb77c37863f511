"""``pacbound reproduce``: the papers' Table 1 protocols from the command line.

``pacbound reproduce roy2016-table1 | germain2009-table1 [--data-dir DIR] [--datasets a,b]
[--learners a,b] [--quick] [--folds K] [--grid-values N] [--json FILE] [--markdown FILE]`` runs
:func:`pacbound._src.apps.reproduce.runner.reproduce` with a progress line on stderr, prints the
markdown table (ours beside the paper's) and saves the JSON (after every row, so a long run
keeps its partial results) and the markdown. ``benchmarks/reproduce_*.py`` call :func:`main`
with the benchmark's output files as defaults. Bad arguments raise ``ValueError`` (one line,
exit 2).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from pacbound._src.apps.reproduce.paper_tables import GERMAIN2009_TABLE1, ROY2016_TABLE1

__all__ = ["TABLES", "Progress", "add_arguments", "main", "markdown", "register", "run"]

TABLES = ("roy2016-table1", "germain2009-table1")
_LABELS = {
    "cqboost": "CqBoost", "mdboost": "MDBoost", "lpboost": "LPBoost", "cgboost": "CG-Boost",
    "adaboost": "AdaBoost", "mincq": "MinCq", "cbboost": "CB-Boost", "ridge": "RR",
    "kl-el": "KL-EL", "kl-ql": "KL-QL",
}  # fmt: skip


class Progress:
    """A one-line text progress bar on stderr, ``[ 3/42] 12s sonar CqBoost``, redrawn in place
    (carriage return) and ended with a newline when ``done == total``."""

    def __init__(self, stream=None):
        self.stream, self.start = stream or sys.stderr, time.perf_counter()

    def __call__(self, done: int, total: int, label: str) -> None:
        elapsed = time.perf_counter() - self.start
        line = f"[{done:>{len(str(total))}}/{total}] {elapsed:.0f}s {label}"
        print(f"\r{line:<72}", end="\n" if done == total else "", file=self.stream, flush=True)


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [n for n in text.split(",") if n.strip()]


def add_arguments(parser: argparse.ArgumentParser, *, json_default=None, md_default=None):
    """The options of ``reproduce`` (without the table), shared with the benchmark scripts.

    Example:
      >>> import argparse
      >>> parser = argparse.ArgumentParser()
      >>> add_arguments(parser)
      >>> sorted(vars(parser.parse_args([])))[:4]
      ['data_dir', 'datasets', 'folds', 'grid_values']
    """
    parser.add_argument("--data-dir", help="shared data folder (default: $PACBOUND_DATA)")
    parser.add_argument("--datasets", type=_names, help="comma-separated subset of the table")
    parser.add_argument("--learners", type=_names, help="comma-separated subset of learners")
    parser.add_argument("--quick", action="store_true", help="4 grid values and 3 folds")
    parser.add_argument("--folds", type=int, help="cross-validation folds (default: paper's)")
    parser.add_argument("--grid-values", type=int, help="values kept per grid (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and the folds")
    parser.add_argument("--json", default=json_default, help="write the results as JSON")
    parser.add_argument("--markdown", default=md_default, help="write the markdown table")
    parser.add_argument("--no-progress", action="store_true", help="no progress line")


def register(commands) -> None:
    """Add ``reproduce`` to the ``pacbound`` command's argparse subparsers.

    Example:
      >>> import argparse
      >>> commands = argparse.ArgumentParser(prog="pacbound").add_subparsers()
      >>> register(commands)
      >>> args = commands.choices["reproduce"].parse_args(["roy2016-table1"])
      >>> args.table, args.run is run
      ('roy2016-table1', True)
    """
    p = commands.add_parser("reproduce", help="the papers' Table 1 protocols on the shared data")
    p.add_argument("table", choices=TABLES, help="which paper's table")
    add_arguments(p)
    p.set_defaults(run=run)


def _write_json(payload: dict, path: str | None) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(payload, indent=1) + "\n")


def run(args: argparse.Namespace) -> None:
    """Run a protocol as the command line asks: progress, JSON, markdown on stdout.

    Example:
      A data folder without the table's files: the dataset is skipped, and said so.

      >>> import argparse, tempfile
      >>> commands = argparse.ArgumentParser(prog="pacbound").add_subparsers()
      >>> register(commands)
      >>> with tempfile.TemporaryDirectory() as d:
      ...     run(commands.choices["reproduce"].parse_args(
      ...         ["roy2016-table1", "--data-dir", d, "--datasets", "pima", "--no-progress"]))
      ### roy2016-table1: test risk, ours / paper (folds=5, values=None, seed=0)
      ...
      Skipped (no file in the data folder): pima
    """
    from pacbound._src.apps.reproduce.runner import reproduce

    payload = reproduce(
        args.table,
        data_dir=args.data_dir,
        dataset_names=args.datasets,
        learners=args.learners,
        quick=args.quick,
        folds=args.folds,
        grid_values=args.grid_values,
        seed=args.seed,
        progress=None if args.no_progress else Progress(),
        on_row=lambda p: _write_json(p, args.json),
    )
    _write_json(payload, args.json)
    text = markdown(payload)
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text, end="")


def _paper(table: str, dataset: str, learner: str) -> float:
    if table.startswith("roy2016"):
        cell = ROY2016_TABLE1.get(dataset, {}).get(learner)
    else:
        row = GERMAIN2009_TABLE1.get(dataset)
        cell = row.results.get(learner) if row else None
    return math.nan if cell is None else cell.risk


def _grid(rows: list[dict], table: str, key: str) -> tuple[list, list, dict]:
    """datasets, learners and ``{(dataset, learner): (ours, paper)}`` from the rows."""
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    cells = {(r["dataset"], r["learner"]): (r[key], _paper(table, r["dataset"], r["learner"]))
             for r in rows}  # fmt: skip
    return datasets, learners, cells


def _fmt(ours: float, paper: float) -> str:
    return f"{ours:.3f}" + ("" if math.isnan(paper) else f" / {paper:.3f}")


def _summary(learners: list, cells: dict) -> list[str]:
    lines = ["", "| learner | mean ours | mean paper | better / tied / worse | datasets |"]
    lines.append("|---|---|---|---|---|")
    for learner in learners:
        pairs = [v for (_, lrn), v in cells.items() if lrn == learner and not math.isnan(v[1])]
        if not pairs:
            continue
        ours, paper = (sum(p[i] for p in pairs) / len(pairs) for i in (0, 1))
        better = sum(round(o, 3) < p for o, p in pairs)
        tied = sum(round(o, 3) == p for o, p in pairs)
        lines.append(
            f"| {_LABELS.get(learner, learner)} | {ours:.3f} | {paper:.3f} | "
            f"{better} / {tied} / {len(pairs) - better - tied} | {len(pairs)} |"
        )
    return lines


def markdown(payload: dict[str, Any]) -> str:
    """Test risks as a markdown table, ``ours / paper`` per dataset and learner, then the mean
    and the better / tied / worse count (ours rounded to the paper's 3 decimals) per learner.

    Example:
      >>> rows = [{"dataset": "australian", "learner": "mincq", "test_risk": 0.13}]
      >>> payload = {"table": "roy2016-table1", "settings": {"folds": 5}, "rows": rows}
      >>> print(markdown(payload))
      ### roy2016-table1: test risk, ours / paper (folds=5)
      <BLANKLINE>
      | dataset | MinCq |
      |---|---|
      | australian | 0.130 / 0.145 |
      <BLANKLINE>
      | learner | mean ours | mean paper | better / tied / worse | datasets |
      |---|---|---|---|---|
      | MinCq | 0.130 | 0.145 | 1 / 0 / 0 | 1 |
      <BLANKLINE>
    """
    table, rows = payload["table"], payload["rows"]
    datasets, learners, cells = _grid(rows, table, "test_risk")
    settings = ", ".join(f"{k}={v}" for k, v in payload["settings"].items() if k != "learners")
    lines = [f"### {table}: test risk, ours / paper ({settings})", ""]
    lines.append("| dataset | " + " | ".join(_LABELS.get(k, k) for k in learners) + " |")
    lines.append("|---" * (len(learners) + 1) + "|")
    for name in datasets:
        row = [_fmt(*cells[name, k]) if (name, k) in cells else "" for k in learners]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    lines += _summary(learners, cells)
    if payload.get("skipped"):
        lines += ["", "Skipped (no file in the data folder): " + ", ".join(payload["skipped"])]
    return "\n".join(lines) + "\n"


def main(table: str, argv: list[str] | None = None, script: str | None = None) -> int:
    """Entry point of ``benchmarks/reproduce_*.py``: ``table`` fixed, the command's options;
    ``script`` (the caller's ``__file__``) makes ``results/<script name>.json`` and ``.md``
    beside it the default outputs.

    Returns:
      The exit status: 0, or 2 after one line on stderr for a ``ValueError`` / ``OSError``.

    Example:
      >>> import contextlib, io, tempfile
      >>> with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()):
      ...     ok = main("roy2016-table1", ["--data-dir", d, "--no-progress"])
      >>> ok, main("roy2016-table1", ["--datasets", "no_such_set", "--no-progress"])
      (0, 2)
    """
    stem = None if script is None else Path(script).resolve().parent / "results" / Path(script).stem
    parser = argparse.ArgumentParser(description=f"reproduce {table}")
    add_arguments(parser, json_default=stem and f"{stem}.json", md_default=stem and f"{stem}.md")
    args = parser.parse_args(argv)
    args.table = table
    try:
        run(args)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
