"""Every bound of an ensemble's vote: statistics and bounds against an independent NumPy /
SciPy computation, the inequalities the theory promises on a held-out set, the minimizers and
the report, and the boundary checks."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from pacbound._src import ensemble_bounds as EB
from tests.reference import ensemble_numpy as EN

DELTA = 0.05


def _votes(m=600, n=8, classes=3, seed=0, oob=True):
    """Voters right with probability 0.7-0.9, else a random other class; ~40% out of bag."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, m)
    right = rng.random((m, n)) < rng.uniform(0.7, 0.9, n)
    other = (y[:, None] + rng.integers(1, classes, (m, n))) % classes
    predictions = np.where(right, y[:, None], other).astype(np.int32)
    mask = rng.random((m, n)) < 0.4 if oob else None
    return predictions, y, mask


# ------------------------------------------------------------------ independent reference
def _kl_bernoulli(p, q):
    terms = [a * math.log(a / b) for a, b in ((p, q), (1 - p, 1 - q)) if a > 0]
    return sum(terms)


def _kl_inv(p, eps, upper=True):
    if upper:
        return (
            1.0
            if _kl_bernoulli(p, 1.0 - 1e-15) <= eps
            else brentq(lambda q: _kl_bernoulli(p, q) - eps, p, 1.0 - 1e-15, xtol=1e-14)
        )
    return (
        0.0
        if _kl_bernoulli(p, 1e-15) <= eps
        else brentq(lambda q: _kl_bernoulli(p, q) - eps, 1e-15, p, xtol=1e-14)
    )


def _reference_statistics(predictions, y, mask):
    E = (predictions != y[:, None]).astype(float)
    M = np.ones_like(E) if mask is None else mask.astype(float)
    pairs = M.T @ M
    risks = (M * E).sum(0) / M.sum(0)
    tandem = (M * E).T @ (M * E) / pairs
    return E, M, risks, tandem, int(M.sum(0).min()), int(pairs.min())


def _reference_bounds(predictions, y, mask, rho, delta=DELTA):
    E, _, risks, tandem, n, n2 = _reference_statistics(predictions, y, mask)
    g, t = rho @ risks, rho @ tandem @ rho
    kl = float(np.sum(rho * np.log(rho * len(rho))))
    out = {
        "first_order": min(1, 2 * _kl_inv(g, (kl + math.log(2 * math.sqrt(n) / delta)) / n)),
        "tnd": min(1, 4 * _kl_inv(t, (2 * kl + math.log(2 * math.sqrt(n2) / delta)) / n2)),
    }
    t_up = _kl_inv(t, (2 * kl + math.log(4 * math.sqrt(n2) / delta)) / n2)
    eps = (kl + math.log(4 * math.sqrt(n) / delta)) / n
    g_low, g_up = _kl_inv(g, eps, upper=False), _kl_inv(g, eps)
    mus = np.arange(-0.5, 0.4999, 1e-4)
    cc = (t_up - 2 * mus * np.where(mus >= 0, g_low, g_up) + mus**2) / (0.5 - mus) ** 2
    out["cctnd"] = float(np.clip(cc, 0, 1).min())
    out["grids"] = EN.grid_bounds(E, rho, kl, n2, delta, mask)  # each mu at delta / 40
    out["ccpbb"], out["split_kl"] = (float(out["grids"][k].min()) for k in ("ccpbb", "split_kl"))
    return out, (g, t, kl, n, n2)


# --------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("oob", [True, False])
def test_statistics_and_bounds_match_an_independent_computation(oob):
    predictions, y, mask = _votes(m=2500 if oob else 600, oob=oob)  # every bound below 1
    statistics = EB.ensemble_statistics(predictions, y, 3, mask=mask)
    rho = np.random.default_rng(1).dirichlet(np.ones(8))
    expected, (g, t, kl, n, n2) = _reference_bounds(predictions, y, mask, rho)
    assert (statistics.n, statistics.n2) == (n, n2)
    cert = EB.certify_ensemble(statistics, rho, delta=DELTA)
    assert tuple(cert.bounds) == (
        "first_order", "tnd", "cctnd", "ccpbb", "split_kl",
        "cbound_seeger", "cbound_mcallester", "cbound_joint",
    )  # the C-bound forms against their own reference: test_ensemble_cbound  # fmt: skip
    assert max(cert.bounds.values()) < 0.95
    np.testing.assert_allclose([cert.gibbs_risk, cert.tandem_risk, cert.kl], [g, t, kl], rtol=1e-12)
    for name in ("first_order", "tnd", "ccpbb", "split_kl"):
        np.testing.assert_allclose(cert.bounds[name], expected[name], rtol=1e-9, err_msg=name)
    assert expected["cctnd"] - 1e-6 <= cert.bounds["cctnd"] <= expected["cctnd"] + 1e-12
    for name in ("ccpbb", "split_kl"):  # the mu reached is the reference's best on the grid
        (at,) = np.flatnonzero(np.isclose(EN.MU_GRID, cert.parameters[name], rtol=0, atol=1e-12))
        np.testing.assert_allclose(expected["grids"][name][at], expected[name], rtol=1e-9)
    union = EB.certify_ensemble(statistics, rho, delta=DELTA / len(cert.bounds))
    assert cert.best == (min(union.bounds, key=union.bounds.get), min(union.bounds.values()))
    assert cert.best[1] >= min(cert.bounds.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_a_held_out_set_every_bound_is_above_the_empirical_vote_risk(seed):
    """With no mask, the oracle inequalities hold for the empirical distribution itself, and
    each bound only adds to the empirical quantity (kl inversions, Bennett terms)."""
    predictions, y, _ = _votes(m=150, seed=seed, oob=False)
    statistics = EB.ensemble_statistics(predictions, y, 3)
    rng = np.random.default_rng(seed)
    for rho in (np.full(8, 1 / 8), rng.dirichlet(np.ones(8)), rng.dirichlet(0.2 * np.ones(8))):
        risk = EB.majority_vote_risk(predictions, y, rho, 3)
        cert = EB.certify_ensemble(statistics, rho, delta=DELTA)
        assert all(value >= risk for value in cert.bounds.values()), (risk, cert.bounds)
        assert cert.bounds["tnd"] >= min(1.0, 4 * cert.tandem_risk)
        assert cert.bounds["first_order"] >= min(1.0, 2 * cert.gibbs_risk)


def test_majority_vote_risk_counts_ties_as_errors():
    predictions = np.array([[0, 1], [0, 0], [1, 1], [2, 1]])
    y = np.array([0, 0, 0, 1])
    assert EB.majority_vote_risk(predictions, y, [0.5, 0.5], 3) == 0.75  # ties, wrong, tie
    assert EB.majority_vote_risk(predictions, y, [0.6, 0.4], 3) == 0.5


def test_dis_with_unlabeled_inputs_for_binary_votes():
    predictions, y, mask = _votes(classes=2)
    unlabeled, _, _ = _votes(m=100, classes=2, seed=5)
    statistics = EB.ensemble_statistics(predictions, y, 2, mask=mask, unlabeled=unlabeled)
    rows = np.concatenate([predictions, unlabeled])
    seen = np.concatenate([mask, np.ones(unlabeled.shape, bool)]).astype(float)
    differ = (rows[:, :, None] != rows[:, None, :]).astype(float)
    D = np.einsum("ij,ik,ijk->jk", seen, seen, differ) / (seen.T @ seen)
    np.testing.assert_allclose(statistics.disagreement, D, rtol=1e-12)
    assert statistics.m_unlabeled == int((seen.T @ seen).min())
    rho = np.full(8, 1 / 8)
    cert = EB.certify_ensemble(statistics, rho, delta=DELTA)
    assert "dis" in cert.bounds
    d, m_u, n = rho @ D @ rho, statistics.m_unlabeled, statistics.n
    eps_g = (cert.kl + math.log(4 * math.sqrt(n) / DELTA)) / n
    eps_d = (2 * cert.kl + math.log(4 * math.sqrt(m_u) / DELTA)) / m_u
    expected = 4 * _kl_inv(cert.gibbs_risk, eps_g) - 2 * _kl_inv(d, eps_d, upper=False)
    np.testing.assert_allclose(cert.bounds["dis"], np.clip(expected, 0, 1), rtol=1e-9)
    np.testing.assert_allclose(cert.disagreement, d, rtol=1e-12)


# The report around two minimizers by default (TND's, and DIS's, which reads the unlabeled
# votes); each minimizer's own result is test_second_order_minimize's. Every available bound's
# minimizer in the thorough tier.
ALL_OBJECTIVES = (
    "first_order", "tnd", "dis", "cctnd", "ccpbb", "split_kl",
    "cbound_seeger", "cbound_mcallester", "cbound_joint",
)  # fmt: skip
REPORTED = [("tnd", "dis"), pytest.param(ALL_OBJECTIVES, marks=pytest.mark.thorough)]


@pytest.mark.parametrize("objectives", REPORTED, ids=["tnd_dis", "all"])
def test_each_minimizer_improves_its_bound_and_the_report(objectives):
    predictions, y, mask = _votes(classes=2, m=300)
    unlabeled, _, _ = _votes(m=100, classes=2, seed=5)
    statistics = EB.ensemble_statistics(predictions, y, 2, mask=mask, unlabeled=unlabeled)
    test_predictions, test_y, _ = _votes(m=200, classes=2, seed=9, oob=False)
    chosen = None if objectives == ALL_OBJECTIVES else list(objectives)  # None: every bound
    report = EB.ensemble_report(
        statistics, objectives=chosen, test=(test_predictions, test_y), steps=200
    )
    names = [row.name for row in report.rows]
    assert names == ["uniform", *objectives]
    uniform = report.rows[0].certificate.bounds
    for row in report.rows:
        np.testing.assert_allclose(row.rho.sum(), 1.0, atol=1e-12)
        assert row.test_risk == EB.majority_vote_risk(test_predictions, test_y, row.rho, 2)
        assert row.seconds > 0 and set(row.certificate.bounds) == set(uniform)
        if row.name != "uniform":
            assert row.certificate.bounds[row.name] <= uniform[row.name] + 1e-6, row.name
    tnd = EB.optimize_posterior(statistics, "tnd", steps=200)
    again = EB.certify_ensemble(statistics, np.asarray(tnd.rho, np.float64), bounds=["tnd"])
    np.testing.assert_allclose(again.bounds["tnd"], float(tnd.bound), rtol=1e-4)
    assert (report.n, report.n2, report.n_voters, report.n_classes) == (
        statistics.n, statistics.n2, 8, 2,
    )  # fmt: skip


def test_boundary_checks():
    predictions, y, mask = _votes()
    statistics = EB.ensemble_statistics(predictions, y, 3, mask=mask)
    rho = np.full(8, 1 / 8)
    for delta in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            EB.certify_ensemble(statistics, rho, delta=delta)
    with pytest.raises(ValueError, match="sum to 1"):
        EB.certify_ensemble(statistics, 2 * rho)
    with pytest.raises(ValueError, match=">= 0"):
        EB.certify_ensemble(statistics, np.r_[-0.125, 0.375, rho[2:]])
    with pytest.raises(ValueError, match="last axis of length 8"):
        EB.certify_ensemble(statistics, np.full(5, 0.2))
    with pytest.raises(ValueError, match="distinct bounds among"):
        EB.certify_ensemble(statistics, rho, bounds=["tnd", "c_bound"])
    with pytest.raises(ValueError, match="needs binary votes and unlabeled"):
        EB.certify_ensemble(statistics, rho, bounds=["dis"])
    with pytest.raises(ValueError, match="needs binary votes and unlabeled"):
        EB.optimize_posterior(statistics, "dis")
    with pytest.raises(ValueError, match="below 1/2"):
        EB.certify_ensemble(statistics, rho, mu_grid=[0.0, 0.5])
    with pytest.raises(ValueError, match="binary votes"):
        EB.ensemble_statistics(predictions, y, 3, mask=mask, unlabeled=predictions)
    with pytest.raises(ValueError, match=r"class indices in 0\.\.2"):
        EB.ensemble_statistics(predictions + 1, y, 3)
    with pytest.raises(ValueError, match="integer class indices"):
        EB.ensemble_statistics(predictions.astype(float), y, 3)
    with pytest.raises(ValueError, match="labels must have shape"):
        EB.ensemble_statistics(predictions, y[:-1], 3)
    empty = mask.copy()
    empty[:, 3] = False
    with pytest.raises(ValueError, match="at least one evaluated example"):
        EB.ensemble_statistics(predictions, y, 3, mask=empty)
