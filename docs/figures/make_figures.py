"""Make the figures of the documentation (``docs/figures/*.png``), from a quick run.

On the bundled breast-cancer set (roy2016's split, 10 decision stumps per feature, as
``pacbound demo``): MinCq over a grid of margins ``mu`` and CB-Boost over its rounds, each
posterior certified by every default bound of :data:`pacbound.certify.DEFAULT_BOUNDS` at
``delta = 0.05``, against the vote's risk on the training and the test halves.

    python docs/figures/make_figures.py   # about a minute on a laptop CPU

needs the ``sklearn`` and ``plot`` extras. The PNG is committed; the docs build does not run
this script.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from pacbound import datasets, solvers, voters
from pacbound.certify import DEFAULT_BOUNDS, certify

HERE = os.path.dirname(os.path.abspath(__file__))
DELTA = 0.05


def sample():
    """The demo's data: stump votes on roy2016's train / test halves of breast cancer."""
    data = datasets.load("breast_cancer")
    split = datasets.roy2016_split(data.X, data.y, seed=0)
    stumps = voters.fit_stumps(split.X_train, 10)
    return (
        (np.asarray(stumps.votes(split.X_train)), split.y_train),
        (np.asarray(stumps.votes(split.X_test)), split.y_test),
    )


def vote_risk(H, y, weights):
    """The majority vote's 0-1 risk (a tie counts as an error)."""
    return float(np.mean(np.asarray(y) * (np.asarray(H) @ np.asarray(weights)) <= 0))


def curves(results, train, test):
    """Every default bound, the training and the test risk of each result."""
    rows = []
    for r in results:
        cert = certify(r, *train, delta=DELTA)
        rows.append(
            {
                **{k: float(v) for k, v in cert.bounds.items()},
                "train risk": vote_risk(*train, r.weights),
                "test risk": vote_risk(*test, r.weights),
            }
        )
    return {k: np.array([row.get(k, np.nan) for row in rows]) for k in rows[0]}


def panel(ax, x, values, xlabel, title, log=False):
    for name in DEFAULT_BOUNDS:
        if name in values and np.isfinite(values[name]).any():
            ax.plot(x, values[name], marker=".", label=name)
    for name, style in (("train risk", "k:"), ("test risk", "k-")):
        ax.plot(x, values[name], style, linewidth=2, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("bound on R(B_Q) / risk")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    if log:
        ax.set_xscale("log")


def main():
    train, test = sample()
    mus = np.geomspace(0.005, 0.95, 9) * float(solvers.max_realizable_mu(*train))
    mincq = [solvers.mincq(*train, mu) for mu in mus]
    rounds = np.array([1, 2, 5, 10, 20, 50, 100])
    full = solvers.cbboost(*train, int(rounds[-1]))
    truncate = solvers.traits(solvers.cbboost).truncate
    cbboost = [truncate(full, int(t)) for t in rounds]

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    panel(axes[0], mus, curves(mincq, train, test), "MinCq margin mu", "MinCq", log=True)
    panel(axes[1], rounds, curves(cbboost, train, test), "rounds", "CB-Boost", log=True)
    axes[1].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    fig.suptitle(f"Certified bounds (delta = {DELTA}) on breast cancer, 10 stumps per feature")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "bounds_breast_cancer.png"), dpi=110)


if __name__ == "__main__":
    main()
