"""benchmarks/device_check.py (issue #36 point 8) cannot rot: its dry run (CPU, tiny sizes)
writes every section with no violation; and a few fast checks of its kind, marked ``gpu``
(``pytest -m gpu`` on a machine with an accelerator), run on the default device."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import device_check as DC  # noqa: E402


# the whole script at tiny sizes: about 85 s of CPU, mostly compiling (the thorough tier)
@pytest.mark.thorough
def test_dry_run_writes_every_section_without_violations(tmp_path):
    out = tmp_path / "device_check.json"
    env = {**os.environ, "PYTHONPATH": str(BENCHMARKS.parent)}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "device_check.py"), "--dry-run", "--json", str(out)],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert {"machine", "bounds", "learners", "timings", "violations"} <= set(result)
    assert result["violations"] == 0
    rows = result["bounds"]["rows"]
    assert {r["bound"] for r in rows} >= {"kl_inv_upper", "seeger", "pac_bound_1", "tnd_kl"}
    assert all(r["violations"] == 0 and r["undecided"] == 0 for r in rows), rows
    assert {"float32", "float64"} == {r["dtype"] for r in rows}
    assert result["bounds"]["reference"].startswith("decimal")  # the device machine's
    assert result["learners"]["rows"] and not result["learners"]["errors"]
    assert all(r["max_abs_dq"] < 1e-5 for r in result["learners"]["rows"])
    assert len(result["timings"]["rows"]) == len(DC.WORKLOADS)
    assert all(r["device_s"] > 0 for r in result["timings"]["rows"])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["kl_inv_upper", "kl_inv_lower", "seeger", "tnd_kl"])
def test_certified_on_the_default_device(name, dtype):
    draws = DC.draw(np.random.default_rng(1), 200 if dtype == np.float32 else 6)
    row = DC.check_bound(name, draws, dtype, recheck=200)
    assert row["violations"] == 0 and row["undecided"] == 0, row


def test_the_references_know_their_values():
    A = DC.precise_arithmetic()
    assert str(DC.xi_value(1000, True)).startswith("40.3032")  # design.md
    assert DC.xi_value(2, True) == 2.5 and DC.xi_value(2, False) == 2.5
    q, eps = np.array([0.1, 0.0, 0.3]), np.array([0.05, 0.2, 0.0])
    for arithmetic in (DC.FAST, A):
        up = DC.to_float(DC.inv_up(arithmetic, arithmetic.num(q), arithmetic.num(eps)))
        kl = DC.binary_kl(DC.FAST, q, up)
        np.testing.assert_allclose(kl[:2], eps[:2], rtol=1e-9)
        assert up[2] == q[2]


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["cbboost", "cbboost_stumps"])
def test_learner_jit_equals_vmap_on_the_default_device(name):
    if name not in DC.solvers.LEARNERS:
        pytest.skip(f"{name} is not a registered learner")
    row = DC.check_learner(name, DC.stump_problem(90, 3))
    assert row["max_abs_dq"] < 1e-5, row
