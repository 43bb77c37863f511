"""``pacbound bounds`` end to end (a subprocess on a small bundled set) and its bad input."""

import json
import os
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

pytest.importorskip("sklearn")
from pacbound._src.apps.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_bounds_on_a_bundled_multiclass_set_writes_json_and_plot(tmp_path):
    plot = ["--plot", str(tmp_path / "bars.png")] if find_spec("matplotlib") else []
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [sys.executable, "-m", "pacbound", "bounds", "--data", "iris", "--trees", "10",
         "--objectives", "tnd,cctnd,cbound_seeger", "--steps", "100",
         "--json", str(tmp_path / "out.json"),
         *plot],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("iris: 3 classes, 120 training / 30 test examples, 4 features")
    assert "random forest of 10 trees" in lines[0] and "out-of-bag bounds" in lines[0]
    assert lines[1].split()[:3] == ["posterior", "test", "risk"] and "cctnd" in lines[1]
    assert "C Seeger" in lines[1] and "C McAll." in lines[1] and "C joint" in lines[1]
    assert [line.split()[0] for line in lines[2:6]] == ["uniform", "tnd", "cctnd", "cbound_seeger"]
    assert re.fullmatch(
        r"done in [\d.]+ s: \d+ programs? compiled, \d+ read from the "
        r"compilation cache",
        lines[6],
    ), lines[6]
    assert not plot or (tmp_path / "bars.png").stat().st_size > 1000
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["classes"] == ["setosa", "versicolor", "virginica"]
    assert (report["train"], report["test"], report["trees"]) == (120, 30, 10)
    assert 0 < report["n2"] <= report["n"] < 120
    rows = {row["posterior"]: row for row in report["results"]}
    assert set(rows) == {"uniform", "tnd", "cctnd", "cbound_seeger"}
    for row in rows.values():
        assert 0 <= row["test_risk"] <= 0.2 and row["time_s"] > 0
        names = ("first_order", "tnd", "cctnd", "ccpbb", "split_kl", "cbound_seeger",
                 "cbound_mcallester", "cbound_joint")  # fmt: skip
        bounds = [row[b] for b in names]
        assert all(0 <= b <= 1 for b in bounds) and row["best"] >= min(bounds)
    assert rows["tnd"]["tnd"] <= rows["uniform"]["tnd"] + 1e-6
    seeger = rows["cbound_seeger"]["cbound_seeger"]
    assert seeger <= rows["uniform"]["cbound_seeger"] + 1e-6


# the held-out bounds are the estimator's (test_forest_estimator, default run); the command's
# --holdout flag in the thorough tier
@pytest.mark.thorough
def test_bounds_on_a_held_out_fraction(tmp_path, capsys):
    path = tmp_path / "r.json"
    argv = ["bounds", "--data", "breast_cancer", "--trees", "10", "--holdout", "0.4",
            "--objectives", "tnd", "--steps", "50", "--json", str(path)]  # fmt: skip
    assert main(argv) == 0
    report = json.loads(path.read_text())
    assert report["mode"] == "held-out 0.4" and report["n"] == report["n2"] == 182  # 0.4 x 455
    assert report["classes"] == ["malignant", "benign"]
    assert "held-out 0.4 bounds with n = 182" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bounds"], "the following arguments are required: --data"),
        (["bounds", "--data", "iris", "--trees", "0"], "--trees must be >= 1"),
        (["bounds", "--data", "iris", "--delta", "2"], "--delta must be in (0, 1]"),
        (["bounds", "--data", "iris", "--test-size", "1"], "--test-size must be in (0, 1)"),
        (["bounds", "--data", "iris", "--holdout", "0"], "--holdout must be in (0, 1)"),
        (["bounds", "--data", "iris", "--steps", "0"], "--steps must be >= 1"),
        (
            ["bounds", "--data", "iris", "--objectives", "tnd,dis"],
            "--objectives dis: the DIS bound needs unlabeled inputs, which this command does not "
            "take; give them in Python: ForestClassifier(objective='dis').fit(X, y, X_unlabeled=U)",
        ),
        (["bounds", "--data", "iris", "--objectives", "tnd,xyz"], "unknown objectives ['xyz']"),
        (["bounds", "--data", "iris", "--ensemble", "boost"], "invalid choice: 'boost'"),
        (["bounds", "--data", "no_such_set"], "unknown dataset 'no_such_set'"),
        (["bounds", "--data", "iris", "--json", "/nonexistent/dir/o.json"], "does not exist"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pacbound: error: ") and message in err[0]


def test_objectives_help_states_the_real_default(capsys):
    with pytest.raises(SystemExit):
        main(["bounds", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "(default: first_order, tnd, cctnd, ccpbb, split_kl, cbound_seeger, cbound_mcallester, "
        "cbound_joint: every bound but dis, which needs unlabeled inputs, and ccpbub, computed "
        "when named)" in text
    )
