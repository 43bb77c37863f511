"""pacbound._src.apps.reproduce.runner / cli_reproduce / paper_tables: the papers' Table 1
protocols.

End-to-end runs use the shared data (skipped without it) on a tiny setting: one small dataset,
2 grid values, 2 folds. The slow-marked test runs a full roy2016 table row.
"""

import argparse
import json
import re

import numpy as np
import pytest

from pacbound import sweep
from pacbound._src.apps.reproduce import command as cli_reproduce
from pacbound._src.apps.reproduce import runner as reproduce
from pacbound._src.apps.reproduce.baselines import ridge_votes
from pacbound._src.apps.reproduce.paper_tables import (
    GERMAIN2009_TABLE1,
    ROY2016_LEARNERS,
    ROY2016_TABLE1,
    PaperCell,
)
from pacbound._src.datasets.registry import REGISTRY
from pacbound.solvers import adaboost


# ------------------------------------------------------------------ the papers' numbers
def test_roy2016_table_shape_and_spot_values():
    assert len(ROY2016_TABLE1) == 23
    assert all(tuple(row) == ROY2016_LEARNERS for row in ROY2016_TABLE1.values())
    cells = [c for row in ROY2016_TABLE1.values() for c in row.values()]
    assert all(0.0 <= c.risk < 0.5 and c.cols >= 1 for c in cells)
    # MinCq keeps every self-complemented stump: 2 x 10 per attribute
    assert all(row["mincq"].cols % 20 == 0 for row in ROY2016_TABLE1.values())
    assert ROY2016_TABLE1["ionosphere"]["cgboost"] == PaperCell(0.091, 340)
    assert ROY2016_TABLE1["breast"]["lpboost"] == PaperCell(0.037, 20)  # OCR's "2 0*"
    assert ROY2016_TABLE1["zoo"]["mincq"] == PaperCell(0.039, 320)


def test_germain2009_sizes_agree_with_the_registry():
    assert len(GERMAIN2009_TABLE1) == 20
    sonar = GERMAIN2009_TABLE1["sonar"]
    assert (sonar.n_train, sonar.n_test, sonar.n_features) == (104, 104, 60)
    assert sonar.results["kl-ql"] == PaperCell(0.115, None, 1000.0, 0.1)
    checked = 0
    for name, row in GERMAIN2009_TABLE1.items():
        entry = REGISTRY.get(name.partition(":")[0])
        found = re.search(rf"germain2009 {re.escape(row.paper_name)} (\d+)\+(\d+)", entry.papers)
        if found:  # the registry transcribed |S|+|T| independently
            assert (int(found[1]), int(found[2])) == (row.n_train, row.n_test), name
            checked += 1
    assert checked >= 10


# ------------------------------------------------------------------ protocol pieces
def test_subgrid_keeps_the_ends():
    values = tuple(range(15))
    assert reproduce._subgrid(values, None) == values
    assert reproduce._subgrid(values, 2) == (0, 14)
    assert reproduce._subgrid(values, 4) == (0, 5, 9, 14)
    assert reproduce._subgrid(values, 20) == values


def test_roy2016_grids_are_the_papers():
    learners = reproduce.PROTOCOLS["roy2016-table1"].learners
    mu = np.array(learners["cqboost"].grid["mu"])
    np.testing.assert_allclose(mu[[0, -1]], [1e-2, 10**-0.5])
    assert len(mu) == 15 and np.allclose(np.diff(np.log10(mu)), 1.5 / 14)
    np.testing.assert_allclose(learners["lpboost"].grid["C"][::14], [1e-3, 1e3])
    np.testing.assert_allclose(learners["mdboost"].grid["D"][::14], [1.0, 100.0])


def test_ridge_votes_is_the_closed_form():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1.0, -1.0)
    # independent: stumps at k / 5 of each feature's range, ridge normal equations
    lo, hi = X.min(0), X.max(0)
    t = lo[:, None] + np.arange(1, 5)[None, :] / 5 * (hi - lo)[:, None]
    H = np.where(X[:, :, None] > t[None], 1.0, -1.0).reshape(60, 12)
    v = np.linalg.solve(H.T @ H + 0.5 * np.eye(12), H.T @ y)
    result = ridge_votes(H, y, 2.0)
    np.testing.assert_allclose(result.info.coefficients, v, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(result.weights, v / np.abs(v).sum(), rtol=1e-8, atol=1e-12)
    mask = (np.arange(60) % 4 != 0).astype(float)
    np.testing.assert_allclose(
        ridge_votes(H, y, 2.0, sample_weight=mask).q, ridge_votes(H[mask > 0], y[mask > 0], 2.0).q
    )


def test_selection_is_sweep_cross_validation_and_the_refit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    spec = reproduce.LearnerSpec("AdaBoost", "adaboost", {"n_rounds": (1, 3, 8)}, {})
    fitted = reproduce.select_and_fit(spec, X, y, folds=3, n_stumps=3)
    separate = [
        sweep.cross_validate(adaboost, X, y, sweep.stump_voters(3), folds=3, refit_best=False,
                             n_rounds=np.array([t])).mean_risk[0]
        for t in (1, 3, 8)
    ]  # fmt: skip
    assert fitted.cv_risk == pytest.approx(min(separate))
    T = fitted.chosen["n_rounds"]
    assert T == (1, 3, 8)[int(np.argmin(separate))]
    direct = adaboost(np.asarray(fitted.voters(X)), y, T)
    np.testing.assert_allclose(fitted.result.q, direct.q, atol=1e-12)


def test_bad_names_are_value_errors():
    with pytest.raises(ValueError, match="unknown table"):
        reproduce.reproduce("roy2099-table1")
    with pytest.raises(ValueError, match=r"unknown datasets \['nope'\]"):
        reproduce.reproduce("roy2016-table1", dataset_names=["wine", "nope"])
    with pytest.raises(ValueError, match="unknown learners"):
        reproduce.reproduce("germain2009-table1", learners=["mincq"])
    with pytest.raises(ValueError, match="no datasets given"):
        reproduce.reproduce("germain2009-table1", dataset_names=[])
    with pytest.raises(ValueError, match="need folds >= 2"):
        reproduce.reproduce("germain2009-table1", folds=1)


def test_markdown_table_and_summary():
    rows = [
        {"dataset": "wine", "learner": "mincq", "test_risk": 0.051},
        {"dataset": "wine", "learner": "cbboost", "test_risk": 0.10},
        {"dataset": "zoo", "learner": "mincq", "test_risk": 0.039},
    ]
    payload = {"table": "roy2016-table1", "settings": {"folds": 5}, "rows": rows}
    payload["skipped"] = {"balance": "no file"}
    text = cli_reproduce.markdown(payload)
    assert "| wine | 0.051 / 0.056 | 0.100 |" in text  # CB-Boost: no paper number
    assert "| zoo | 0.039 / 0.039 |  |" in text
    # MinCq: wine better (0.051 < 0.056), zoo tied; means over both datasets
    assert "| MinCq | 0.045 | 0.048 | 1 / 1 / 0 | 2 |" in text
    assert "CB-Boost |" not in text.split("mean ours")[1]
    assert text.rstrip().endswith("Skipped (no file in the data folder): balance")


def test_progress_line(capsys):
    bar = cli_reproduce.Progress()
    bar(1, 3, "wine MinCq")
    assert capsys.readouterr().err.startswith("\r[1/3] 0s wine MinCq  ")
    bar(3, 3, "zoo MinCq")
    assert capsys.readouterr().err.endswith("zoo MinCq".ljust(72 - 9) + "\n")


# ------------------------------------------------------------------ end to end (shared data)
def test_roy2016_tiny_end_to_end(shared_data):
    payload = reproduce.reproduce(
        "roy2016-table1", data_dir=shared_data, dataset_names=["wine"], learners=["mincq"],
        folds=2, grid_values=2,
    )  # fmt: skip
    (row,) = payload["rows"]
    assert (row["dataset"], row["learner"], row["n_train"], row["n_test"]) == (
        "wine",
        "mincq",
        89,
        89,
    )
    assert row["params"]["mu"] in (0.01, pytest.approx(10**-0.5))
    assert 0 < row["n_voters"] <= 2 * 10 * 13  # of the self-complemented stumps
    assert 0.0 <= row["test_risk"] < 0.2  # the paper: 0.056
    assert payload["settings"]["learners"]["mincq"]["mu"][0] == 0.01


def test_command_end_to_end(shared_data, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="pacbound")
    cli_reproduce.register(parser.add_subparsers(dest="command", required=True))
    out = tmp_path / "r.json"
    args = parser.parse_args(
        ["reproduce", "germain2009-table1", "--data-dir", str(shared_data), "--datasets",
         "sonar", "--learners", "ridge,adaboost", "--folds", "2", "--grid-values", "2",
         "--json", str(out), "--markdown", str(tmp_path / "r.md")]
    )  # fmt: skip
    args.run(args)
    captured = capsys.readouterr()
    assert "[2/2]" in captured.err
    assert "| sonar | " in captured.out and "/ 0.192 |" in captured.out  # RR's 0.192
    payload = json.loads(out.read_text())
    assert [r["learner"] for r in payload["rows"]] == ["ridge", "adaboost"]
    assert payload["rows"][0]["params"]["C"] in (0.02, 1000.0)
    assert payload["rows"][1]["n_train"] == 104
    assert (tmp_path / "r.md").read_text() == captured.out


def test_script_reports_bad_input_in_one_line(capsys):
    assert cli_reproduce.main("roy2016-table1", ["--datasets", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown datasets ['nope']" in err


@pytest.mark.slow
def test_roy2016_full_row(shared_data):
    """A full table row (wine, every learner, 15 values, 5 folds) near the paper's."""
    payload = reproduce.reproduce("roy2016-table1", data_dir=shared_data, dataset_names=["wine"])
    risks = {r["learner"]: r["test_risk"] for r in payload["rows"]}
    assert set(risks) == set(reproduce.PROTOCOLS["roy2016-table1"].learners)
    for learner, cell in ROY2016_TABLE1["wine"].items():
        assert risks[learner] <= cell.risk + 0.1, learner
