"""benchmarks/bench_first_call.py (issue #37 point 1) cannot rot: its ``--quick`` run (fresh
processes, cache off then primed) writes a row per item with a positive time for each run, and
every public bound has scalar arguments in its table."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pacbound import bounds

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import bench_first_call as FC  # noqa: E402


def test_every_public_bound_has_arguments():
    callables = [n for n in bounds.__all__ if callable(getattr(bounds, n))]
    assert sorted(set(callables) - set(FC.BOUND_ARGUMENTS)) == []


@pytest.mark.thorough
def test_quick_run_writes_cold_and_warm_rows(tmp_path):
    out = tmp_path / "first_call.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_first_call.py"), "--quick", "--json", str(out)],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert {"machine", "checkouts", "rows", "load_average"} <= set(result) and result["quick"]
    assert result["bounds_without_arguments"] == []
    rows = {r["label"]: r for r in result["rows"]}
    assert "import pacbound" in rows and "cbboost(H)" in rows
    assert any(label.startswith("certify(") for label in rows)
    assert {"bounds.seeger float32", "bounds.seeger float64"} <= set(rows)
    for label, row in rows.items():
        assert set(row["new"]) == {"cold", "prime", "warm"}, label
        for run in row["new"].values():
            assert run["seconds"] > 0 and run["wall_s"] >= run["seconds"], (label, run)
        if row["spec"]["kind"] != "import":
            assert row["new"]["cold"]["cache"] is None and row["new"]["warm"]["cache"], label
    assert "new cold" in done.stdout and "warm/cold" in done.stdout  # the table printed
