"""The ``pacbound`` command end to end: subprocesses for the real runs, ``main`` for bad input."""

import json
import os
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from pacbound._src.apps.cli import COLUMNS, DEMO_SETTINGS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pacbound", *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )  # fmt: skip


def test_demo_prints_the_table_and_what_it_compiled(tmp_path):
    # a cache folder of its own: the first run compiles, the second reads the cache
    cache = {"PACBOUND_COMPILATION_CACHE_DIR": str(tmp_path / "cache")}
    out = _run("demo", "--learners", "mincq,cbboost,adaboost", "--stumps", "2", env=cache)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("breast_cancer") and "284 training / 285 test" in lines[0]
    assert lines[1].split()[0] == "learner" and "PAC-Bound" in lines[1]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:5]}
    assert set(rows) == {"mincq", "cbboost", "adaboost"}
    for cells in rows.values():
        test_risk, train_risk, cbound, roy, pb2, best = (float(c.rstrip("*")) for c in cells[:6])
        assert 0 <= test_risk < 0.2 and train_risk <= cbound <= min(roy, 1.0) + 1e-9
        assert train_risk <= pb2 <= 1.0 and min(roy, pb2) <= best <= 1.0  # best: at delta / 2
        assert all(c.endswith("*") == (float(c.rstrip("*")) == 1.0) for c in cells[3:6])
    # MinCq's mu = 0.05 fixes its mean margin: vacuous at m = 284, said under the table
    assert rows["mincq"][3:6] == ["1.0000*"] * 3
    assert lines[5].startswith("* vacuous (1, the trivial bound): at m = 284 training examples")
    assert "mincq mu1 0.050 vs " in lines[5]
    assert lines[5].endswith("Informative here: cbboost, adaboost")
    done = r"done in [\d.]+ s: (\d+) programs compiled, (\d+) read from the compilation cache"
    first = re.fullmatch(done, lines[6])
    assert first and int(first[1]) > 0, lines[6]
    again = _run("demo", "--learners", "mincq,cbboost,adaboost", "--stumps", "2", env=cache)
    second = re.fullmatch(done, again.stdout.splitlines()[6])  # what took >= 0.1 s is kept
    assert second and int(second[2]) > 0 and int(second[1]) < int(first[1]), again.stdout


def test_datasets_lists_the_names():
    out = _run("datasets")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "bundled with scikit-learn (offline): breast_cancer, digits, iris, wine"
    assert lines[1].startswith("registered (the papers' sets;")
    assert {line.split()[0] for line in lines[2:-1]} >= {"sonar", "letter", "mnist", "twonorm"}


def test_compare_on_a_csv_file_writes_json(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    labels = np.where(X[:, 0] - X[:, 2] > 0, "yes", "no")
    path = tmp_path / "toy.csv"
    rows = [f"{a:.6f},{b:.6f},{c:.6f},{lab}" for (a, b, c), lab in zip(X, labels)]
    path.write_text("\n".join(rows) + "\n")  # no header: load_file's default
    plot = ["--plot", str(tmp_path / "bars.png")] if find_spec("matplotlib") else []
    out = _run("compare", "--data", str(path), "--learners", "adaboost", "--stumps", "2",
               "--json", str(tmp_path / "out.json"), *plot)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not plot or (tmp_path / "bars.png").stat().st_size > 1000
    report = json.loads((tmp_path / "out.json").read_text())
    assert (report["train"], report["test"], report["features"]) == (60, 60, 3)
    assert report["settings"] == {"adaboost": DEMO_SETTINGS["adaboost"]}
    (row,) = report["results"]
    assert row["learner"] == "adaboost" and set(COLUMNS) <= set(row)
    assert 0 <= row["test_risk"] < 0.3 and row["train_risk"] <= row["cbound_roy2016"]
    assert row["n_voters"] >= 1 and row["fit_time_s"] > 0


def test_bad_input_in_a_subprocess_exits_2_with_one_line():
    out = _run("demo", "--delta", "2")
    assert out.returncode == 2 and out.stdout == ""
    expected = "pacbound: error: --delta must be in (0, 1]; got 2.0"
    assert out.stderr.strip().splitlines() == [expected]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: command"),
        (["fly"], "invalid choice: 'fly'"),
        (["compare"], "the following arguments are required: --data"),
        (["demo", "--delta", "abc"], "argument --delta: invalid float value: 'abc'"),
        (["demo", "--learners", "mincq,xgboost"], "unknown learners ['xgboost']"),
        (["demo", "--stumps", "0"], "--stumps must be >= 1"),
        (
            ["compare", "--data", "no_such_set"],
            "unknown dataset 'no_such_set': not bundled, not registered and not a file "
            "(`pacbound datasets` lists the names)",
        ),
        (["compare", "--data", "breast_cancer", "--unknown"], "unrecognized arguments"),
        (["demo", "--json", "/nonexistent/dir/out.json"], "does not exist"),  # before fitting
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pacbound: error: ") and message in err


def _bad_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Files the command must refuse on one line: ``{case: (path, the line printed)}``."""
    rng = np.random.default_rng(1)
    rows = [[f"{v:.3f}" for v in rng.normal(size=2)] + [lab] for lab in ["yes", "no"] * 20]
    text = [*rows[:7], ["0.5", "abc", "yes"], *rows[8:]]  # one stray word among numbers
    one_class = [[*r[:2], "yes"] for r in rows]
    for name, table in (("text.csv", text), ("one_class.csv", one_class)):
        (folder / name).write_text("".join(",".join(r) + "\n" for r in table))
    return {
        "missing": (folder / "absent.csv", f"no such file: {folder / 'absent.csv'}"),
        "missing_no_suffix": (folder / "absent", f"no such file: {folder / 'absent'}"),
        "non_numeric": (folder / "text.csv", "feature 'x1' is not numeric: 'abc' at row 7"),
        "one_class": (folder / "one_class.csv", "a single class: labels found {'yes': 40}"),
    }


@pytest.mark.parametrize("case", ["missing", "missing_no_suffix", "non_numeric", "one_class"])
@pytest.mark.parametrize("command", ["compare", "bounds"])
def test_bad_data_files_exit_2_with_one_line(capsys, tmp_path, command, case):
    path, message = _bad_files(tmp_path)[case]
    assert main([command, "--data", str(path)]) == 2
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert out.out == "" and len(lines) == 1, out.err
    assert lines[0].startswith(f"pacbound: error: {message}"), lines[0]
    assert "not registered" not in lines[0]  # not the ~50 dataset names


def test_plot_without_matplotlib_is_refused_before_fitting(capsys, tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert main(["demo", "--plot", str(tmp_path / "p.png")]) == 2
    assert "pip install pacbound[plot]" in capsys.readouterr().err


def test_subcommands_register_in_one_function():
    commands = build_parser()._subparsers._group_actions[0].choices
    assert {"demo", "compare"} <= set(commands)


def test_version():
    from pacbound import __version__

    out = _run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"pacbound {__version__}"


def test_persistent_compilation_cache_in_the_user_cache_folder(tmp_path):
    """The command and the estimators keep compiled programs under the user's cache folder;
    ``PACBOUND_NO_COMPILATION_CACHE`` opts out."""
    code = (
        "import jax, numpy as np; from pacbound._src.compilation_cache import "
        "enable_compilation_cache as e; print(e()); jax.jit(lambda x: x * 2)(np.ones(3))"
    )
    drop = ("PACBOUND_NO_COMPILATION_CACHE", "PACBOUND_COMPILATION_CACHE_DIR")  # the suite's own
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(XDG_CACHE_HOME=str(tmp_path), JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(tmp_path / "pacbound" / "jax"), out.stderr
    env["PACBOUND_NO_COMPILATION_CACHE"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "None", out.stderr
