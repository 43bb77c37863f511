"""pacbound._src.apps.plots: figures with the right axes and lines, saved to disk (Agg backend)."""

import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pacbound._src.apps import plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _labels(ax):
    return [line.get_label() for line in ax.get_lines()]


def test_rounds_lines_and_save(tmp_path):
    cbounds, risks = np.linspace(0.9, 0.4, 20), np.linspace(0.3, 0.1, 20)
    ax = plots.plot_rounds({"C-bound": cbounds, "test risk": risks}, title="CB-Boost")
    assert _labels(ax) == ["C-bound", "test risk"]
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), np.arange(1, 21))
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(), risks)
    assert ax.get_xlabel() == "round" and ax.get_title() == "CB-Boost"
    path = plots.save(ax, tmp_path / "rounds.png")
    assert path.stat().st_size > 0


def test_mu_and_delta_are_log_scaled(tmp_path):
    mu = np.logspace(-2, -0.5, 5)
    ax = plots.plot_risk_vs_mu(mu, {"MinCq": mu / 2, "CqBoost": mu / 3})
    assert ax.get_xscale() == "log" and len(ax.get_lines()) == 2
    delta = np.array([0.01, 0.05, 0.1])
    ax2 = plots.plot_bound_vs_delta(delta, {"PAC-Bound 2": [0.5, 0.45, 0.43]})
    assert ax2.get_xscale() == "log" and ax2.get_xlabel() == r"$\delta$"
    plots.save(ax2.figure, tmp_path / "delta.pdf")
    assert (tmp_path / "delta.pdf").stat().st_size > 0


def test_plots_compose_on_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert plots.plot_rounds({"x": [1.0, 2.0]}, ax=a) is a
    assert plots.plot_risk_vs_mu([0.1, 0.2], {"y": [0.3, 0.2]}, ax=b) is b
    assert len(fig.axes) == 2


def test_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="curve 'bad' has shape"):
        plots.plot_risk_vs_mu([0.1, 0.2, 0.3], {"bad": [1.0, 2.0]})


def test_compare_bars(tmp_path):
    rows = [
        {"learner": "MinCq", "test_risk": 0.05, "bound": 0.4},
        {"learner": "CB-Boost", "test_risk": 0.06, "bound": None},
    ]
    ax = plots.plot_compare(rows)
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, [0.05, 0.06, 0.4, np.nan])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["MinCq", "CB-Boost"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["test risk", "bound"]
    plots.save(ax, tmp_path / "compare.svg")


def test_prefix_risks_matches_a_loop():
    rng = np.random.default_rng(0)
    H = rng.choice([-1.0, 1.0], size=(30, 6))
    y = rng.choice([-1.0, 1.0], size=30)
    selected, alphas = np.array([2, 0, -1, 2, 5]), np.array([1.0, 0.5, 0.0, 0.3, 0.7])
    expected, vote = [], np.zeros(30)
    for j, a in zip(selected, alphas, strict=True):
        vote = vote + (a * H[:, j] if j >= 0 else 0.0)
        expected.append(np.mean(y * vote <= 0))
    np.testing.assert_allclose(plots.prefix_risks(H, y, selected, alphas), expected)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pacbound\[plot\]"):
        plots.plot_rounds({"x": [1.0]})
