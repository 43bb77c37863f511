"""Plots of bounds and risks (matplotlib, the optional ``plot`` extra).

Every function draws on ``ax`` (a new figure's axes when ``None``) and returns the axes, so
plots compose; :func:`save` writes a figure. Curves are ``{label: values}`` dicts of NumPy or
JAX arrays, one line each.

* :func:`plot_rounds` -- bound and risk vs boosting round, e.g. CB-Boost's per-round empirical
  C-bound (``CBBoostResult.cbounds``, bauvin2020 Property 1) beside the test risk of each
  round's prefix vote (:func:`prefix_risks`).
* :func:`plot_risk_vs_mu` -- risk (and bounds) vs the first-moment constraint ``mu`` of MinCq
  / CqBoost (laviolette2011 Program 1, roy2016 (3)), log scale.
* :func:`plot_bound_vs_delta` -- certified bounds vs the confidence parameter ``delta``.
* :func:`plot_compare` -- per learner, test risk and certified bound as grouped bars
  (``pacbound compare --plot``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pacbound._src.learning.candidates import split_index


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ImportError("plots need matplotlib: install pacbound[plot]") from err
    return plt


def _axes(ax):
    return _pyplot().subplots()[1] if ax is None else ax


def _lines(x, curves: Mapping[str, Any], xlabel: str, ylabel: str, *, logx: bool, ax, title):
    """One line per curve over ``x``, labelled, with a legend; the shared plotting core."""
    ax = _axes(ax)
    x = np.asarray(x)
    for label, values in curves.items():
        values = np.asarray(values, dtype=float)
        if values.shape != x.shape:
            raise ValueError(f"curve {label!r} has shape {values.shape}; x has {x.shape}")
        ax.plot(x, values, marker="." if len(x) <= 30 else None, label=label)
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title or "")
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def prefix_risks(H: Any, y: Any, selected: Any, alphas: Any) -> np.ndarray:
    """Zero-one risk on ``(H, y)`` of every prefix of a boosting run.

    Round ``t``'s vote is ``sum_{s <= t} alphas[s] c_s`` with ``c_s`` the column
    ``selected[s]`` of ``[H, -H]`` (a boosting learner's ``info.selected`` / ``info.alphas``);
    idle rounds (``selected = -1``) add nothing. A tie (vote 0) counts as an error.

    Returns:
      ``(T,)`` risks.

    Example:
      >>> import numpy as np
      >>> H = np.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = np.array([1., 1., -1., -1.])
      >>> prefix_risks(H, y, np.array([0, 4, 5]), np.ones(3)).tolist()  # h_0, then -h_1, -h_2
      [0.25, 0.5, 0.0]
    """
    H, y = np.asarray(H, dtype=float), np.asarray(y, dtype=float)
    base, sign = (np.asarray(a) for a in split_index(np.asarray(selected), H.shape[1]))
    alphas = np.asarray(alphas, dtype=float)
    steps = (sign * alphas)[:, None] * H[:, base].T
    votes = np.cumsum(steps, axis=0)
    return np.mean(y[None, :] * votes <= 0, axis=1)


def plot_rounds(curves: Mapping[str, Any], *, ax=None, title: str | None = None):
    """Bounds and risks vs boosting round (rounds numbered from 1).

    Example:
      >>> import matplotlib
      >>> matplotlib.use("Agg")
      >>> ax = plot_rounds({"train risk": [0.25, 0.25, 0.0]})
      >>> ax.get_lines()[0].get_xdata().tolist()  # rounds numbered from 1
      [1, 2, 3]
    """
    length = len(np.asarray(next(iter(curves.values()))))
    return _lines(
        np.arange(1, length + 1), curves, "round", "risk / bound", logx=False, ax=ax, title=title
    )


def plot_risk_vs_mu(mu: Any, curves: Mapping[str, Any], *, ax=None, title: str | None = None):
    """Risks (and bounds) vs MinCq / CqBoost's ``mu``, log scale.

    Example:
      >>> import matplotlib
      >>> matplotlib.use("Agg")
      >>> ax = plot_risk_vs_mu([0.05, 0.1], {"test risk": [0.2, 0.15], "C-bound": [0.6, 0.5]})
      >>> ax.get_xscale(), len(ax.get_lines())
      ('log', 2)
    """
    return _lines(mu, curves, r"$\mu$", "risk / bound", logx=True, ax=ax, title=title)


def plot_bound_vs_delta(
    delta: Any, curves: Mapping[str, Any], *, ax=None, title: str | None = None
):
    """Certified bounds vs the confidence parameter ``delta``, log scale.

    Example:
      >>> import matplotlib
      >>> matplotlib.use("Agg")
      >>> ax = plot_bound_vs_delta([0.01, 0.05], {"seeger": [0.31, 0.28], "catoni": [0.33, 0.3]})
      >>> ax.get_xscale(), len(ax.get_lines())
      ('log', 2)
    """
    return _lines(delta, curves, r"$\delta$", "bound", logx=True, ax=ax, title=title)


def plot_compare(
    rows: Sequence[Mapping[str, Any]],
    *,
    keys: Sequence[str] = ("test_risk", "bound"),
    ax=None,
    title: str | None = None,
):
    """Grouped bars, one group per learner (``row["learner"]``), one bar per key.

    Args:
      rows: ``{"learner": name, "test_risk": ..., "bound": ...}`` per learner (``pacbound
        compare``'s JSON rows); a missing or ``None`` value draws no bar.
      keys: the values to draw, in order.

    Example:
      >>> import matplotlib
      >>> matplotlib.use("Agg")
      >>> rows = [{"learner": "mincq", "test_risk": 0.1, "bound": 0.4},
      ...         {"learner": "adaboost", "test_risk": 0.12, "bound": 0.5}]
      >>> ax = plot_compare(rows)
      >>> len(ax.patches)  # 2 learners x 2 keys
      4
    """
    ax = _axes(ax)
    x, width = np.arange(len(rows)), 0.8 / len(keys)
    for k, key in enumerate(keys):
        values = [np.nan if r.get(key) is None else float(r[key]) for r in rows]
        ax.bar(x + (k - (len(keys) - 1) / 2) * width, values, width, label=key.replace("_", " "))
    ax.set_xticks(x, [str(r["learner"]) for r in rows], rotation=30, ha="right")
    ax.set(ylabel="risk / bound", title=title or "")
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    return ax


def save(ax_or_fig, path: str | Path, **kwargs) -> Path:
    """Save the figure of ``ax_or_fig`` (axes or figure) to ``path`` (format from suffix).

    Example:
      >>> import matplotlib, tempfile, pathlib
      >>> matplotlib.use("Agg")
      >>> ax = plot_rounds({"train risk": [0.25, 0.0]})
      >>> with tempfile.TemporaryDirectory() as d:
      ...     path = save(ax, pathlib.Path(d) / "rounds.png")
      ...     path.name, path.stat().st_size > 0
      ('rounds.png', True)
    """
    fig = getattr(ax_or_fig, "figure", ax_or_fig)
    fig.tight_layout()
    fig.savefig(path, **kwargs)
    return Path(path)
