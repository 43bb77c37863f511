"""Running a report command: outputs checked before any fitting, then the report built, timed,
printed, written as JSON and drawn.

* :func:`check_output`: an output file's folder exists and is writable.
* :func:`run_report`: the common run of ``pacbound compare`` and ``pacbound bounds``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from collections.abc import Callable
from typing import Any

from pacbound._src.compilation_cache import counting_compilations

__all__ = ["check_output", "run_report"]


def check_output(path: str | None, flag: str) -> None:
    """An output file's folder must exist and be writable, checked before any fitting.

    Args:
      path: the file to be written, or ``None`` (nothing to check).
      flag: the command-line option that named it, for the message.

    Raises:
      ValueError: the folder does not exist or is not writable.

    Example:
      >>> import tempfile
      >>> with tempfile.TemporaryDirectory() as folder:
      ...     check_output(folder + "/out.json", "--json")  # fine: nothing raised
      >>> check_output("/nonexistent/dir/out.json", "--json")
      Traceback (most recent call last):
      ...
      ValueError: --json /nonexistent/dir/out.json: the folder /nonexistent/dir does not exist ...
    """
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ValueError(f"{flag} {path}: the folder {folder} does not exist or is not writable")


def run_report(
    args: argparse.Namespace,
    build: Callable[[argparse.Namespace], dict],
    format_table: Callable[[dict], str],
    figure: Callable[[dict], Any],
) -> dict:
    """Build a report, print its table, write ``args.json`` and draw ``args.plot``.

    The outputs (and matplotlib, when ``args.plot`` is set) are checked first, so that a bad
    path fails before the long part. ``report["wall_time_s"]`` is the build's wall time,
    compilation included; ``report["programs_compiled"]`` and ``report["programs_from_cache"]``
    count what XLA compiled and what the persistent cache served meanwhile (the last line
    says both).

    Args:
      args: parsed arguments with ``json`` and ``plot`` (file paths or ``None``).
      build: ``args -> report`` (a JSON-serializable dict).
      format_table: ``report -> str``, the printed table.
      figure: ``report -> matplotlib figure``, drawn when ``args.plot`` is set.

    Returns:
      The report.

    Example:
      >>> import argparse, json, tempfile
      >>> with tempfile.TemporaryDirectory() as folder:
      ...     args = argparse.Namespace(json=folder + "/r.json", plot=None)
      ...     report = run_report(
      ...         args, lambda a: {"rows": [1, 2]}, lambda r: f"{len(r['rows'])} rows", None
      ...     )
      ...     sorted(json.load(open(args.json)))
      2 rows
      done in ... s: 0 programs compiled, 0 read from the compilation cache
      ['programs_compiled', 'programs_from_cache', 'rows', 'wall_time_s']
    """
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib: pip install pacbound[plot]")
    check_output(args.json, "--json")
    check_output(args.plot, "--plot")
    start = time.perf_counter()
    with counting_compilations() as programs:
        report = build(args)
    report["wall_time_s"] = time.perf_counter() - start
    report["programs_compiled"], report["programs_from_cache"] = (
        programs.compiled,
        programs.from_cache,
    )
    print(format_table(report))
    print(f"done in {report['wall_time_s']:.1f} s: {programs.summary()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    if args.plot:
        from pacbound._src.apps import plots

        plots.save(figure(report), args.plot)
    return report
