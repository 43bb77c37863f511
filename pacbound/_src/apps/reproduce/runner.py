"""The papers' Table 1 protocols, shared by ``pacbound reproduce`` and ``benchmarks/``.

The protocols (learners, grids, folds) are in :mod:`.protocols`, the published numbers in
:mod:`.paper_tables`; :mod:`.command` holds the command and renders the markdown tables.

Cross-validation is :func:`pacbound._src.sweep.cross_validate` on the learners of
:mod:`pacbound._src.solvers` (and the ridge baseline): stratified, seeded folds as zero-weight
masks, the decision stumps fitted on each training fold, folds x grid in one compiled call,
ties to the first grid point, and the refit on the whole training set; a grid of boosting rounds
(AdaBoost, CB-Boost) is read from the prefixes of one run of the largest (the learners' declared
``truncate``). ``quick`` keeps 4 values of each grid (ends included) and 3 folds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, cast

import numpy as np

from pacbound import datasets, sweep, voters
from pacbound._src.apps.reproduce.paper_tables import GERMAIN2009_TABLE1
from pacbound._src.apps.reproduce.protocols import LEARNERS, PROTOCOLS, LearnerSpec, Protocol
from pacbound._src.datasets.registry import load_registered, resolve_data_dir

__all__ = ["PROTOCOLS", "Fitted", "LearnerSpec", "Protocol", "reproduce", "select_and_fit"]

QUICK_VALUES, QUICK_FOLDS = 4, 3
N_STUMPS = 10  # stumps per feature, both papers


def _subgrid(values: tuple, n: int | None) -> tuple:
    """``n`` values spread over ``values``, both ends included (all of them when ``None``)."""
    if n is None or n >= len(values):
        return values
    if n == 1:
        return values[:1]
    return tuple(
        values[i] for i in sorted({round(i * (len(values) - 1) / (n - 1)) for i in range(n)})
    )


class Fitted(NamedTuple):
    """A learner's selected fit: its result, the voters (``X -> H``), the chosen values and
    their mean cross-validation risk (NaN with no grid)."""

    result: Any
    voters: Callable
    chosen: dict[str, Any]
    cv_risk: float

    def risk(self, X: np.ndarray, y: np.ndarray) -> float:
        """The majority vote's zero-one risk on ``(X, y)`` (a tie is an error)."""
        vote = np.asarray(self.voters(X), np.float64) @ np.asarray(self.result.weights)
        return float(np.mean(y * vote <= 0))


def select_and_fit(
    spec: LearnerSpec, X: np.ndarray, y: np.ndarray, *, folds: int, values: int | None = None,
    seed: int = 0, n_stumps: int = N_STUMPS,
) -> Fitted:  # fmt: skip
    """Choose the spec's hyperparameters by stratified k-fold CV, refit on all of ``(X, y)``.

    :func:`pacbound._src.sweep.cross_validate` with the stumps fitted on each training fold; the
    first grid point with the lowest mean held-out risk wins (as ``GridSearchCV``).

    Args:
      values: keep this many values of each grid, spread over it (``None``: all).

    Example:
      >>> import numpy as np
      >>> X = np.arange(8.0).reshape(8, 1); y = np.array([-1., -1., -1., -1., 1., 1., 1., 1.])
      >>> spec = LearnerSpec("AdaBoost", "adaboost", {"n_rounds": (1, 5)}, {})
      >>> fitted = select_and_fit(spec, X, y, folds=2, n_stumps=1)
      >>> fitted.chosen, fitted.cv_risk, fitted.risk(X, y)
      ({'n_rounds': 1}, 0.125, 0.0)
    """
    learner, stumps = LEARNERS[spec.learner], sweep.stump_voters(n_stumps)
    if not spec.grid:
        transform = stumps(X)
        return Fitted(learner(transform(X), y, **spec.fixed), transform, {}, float("nan"))
    grids: dict[str, Any] = {k: np.asarray(_subgrid(v, values)) for k, v in spec.grid.items()}
    cv = sweep.cross_validate(
        learner, X, y, stumps, folds=folds, seed=seed, options=dict(spec.fixed), batch_size=1,
        **grids,
    )  # fmt: skip
    fitted_voters = cast(Callable, cv.voters)  # fitted: voters given and refit_best
    return Fitted(cv.refit, fitted_voters, cv.best_values, float(cv.mean_risk[cv.best_index]))


def _split(protocol: Protocol, name: str, X: np.ndarray, y: np.ndarray, seed: int):
    if protocol.name.startswith("roy2016"):
        split = datasets.roy2016_split(X, y, seed=seed)
    else:
        row = GERMAIN2009_TABLE1[name]
        n_train = min(row.n_train, round(len(y) * row.n_train / (row.n_train + row.n_test)))
        split = datasets.train_test_split(X, y, n_train, seed=seed)
    if not protocol.normalize:
        return split
    params = voters.fit_tanh_normalization(split.X_train)
    norm = [np.asarray(voters.tanh_normalize(params, x), np.float64) for x in split[::2]]
    return datasets.Split(norm[0], split.y_train, norm[1], split.y_test)


def _check_names(protocol: Protocol, names: Iterable[str] | None, allowed, kind: str):
    names = tuple(allowed) if names is None else tuple(n.strip().lower() for n in names)
    if not names:
        raise ValueError(f"no {kind} given")
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {kind} {unknown} for {protocol.name}; known: {list(allowed)}")
    return names


def _grids(protocol: Protocol, learners, cv) -> dict[str, dict]:
    """The grids each learner is searched over, as the JSON records them."""
    return {
        k: {p: list(_subgrid(v, cv["values"])) for p, v in protocol.learners[k].grid.items()}
        for k in learners
    }


def _learner_row(spec, split, **cv) -> dict[str, Any]:
    start = time.perf_counter()
    fitted = select_and_fit(spec, split.X_train, split.y_train, **cv)
    return {
        "params": {k: float(v) for k, v in fitted.chosen.items()},
        "cv_risk": None if np.isnan(fitted.cv_risk) else fitted.cv_risk,
        "test_risk": fitted.risk(split.X_test, split.y_test),
        "n_voters": int(np.count_nonzero(np.asarray(fitted.result.q))),
        "seconds": time.perf_counter() - start,
    }


def reproduce(
    table: str,
    *,
    data_dir: str | os.PathLike | None = None,
    dataset_names: Iterable[str] | None = None,
    learners: Iterable[str] | None = None,
    quick: bool = False,
    folds: int | None = None,
    grid_values: int | None = None,
    seed: int = 0,
    progress: Callable[[int, int, str], None] | None = None,
    on_row: Callable[[dict], None] | None = None,
) -> dict[str, Any]:
    """Run a paper's Table 1 protocol; one row per (dataset, learner) beside the paper's.

    Args:
      table: a key of :data:`PROTOCOLS`.
      data_dir: the shared data folder (default ``$PACBOUND_DATA``).
      dataset_names: a subset of the table's datasets (default: all with a file).
      learners: a subset of the protocol's learners (default: all).
      quick: 4 grid values and 3 folds instead of the paper's (shorthand for the next two).
      folds: number of cross-validation folds (default: the paper's).
      grid_values: keep this many values of each grid, ends included (default: all).
      seed: seed of the train/test split and of the folds.
      progress: called as ``progress(done, total, label)`` before and after each row.
      on_row: called with the payload after each row (to save partial results).

    Raises:
      ValueError: unknown table, dataset or learner. FileNotFoundError: no data folder.

    Example:
      A set without a file in the data folder is skipped (and said so); ``quick`` keeps 3 folds
      and 4 values of each grid, its ends included:

      >>> import tempfile
      >>> with tempfile.TemporaryDirectory() as d:
      ...     out = reproduce("roy2016-table1", data_dir=d, dataset_names=["pima"], quick=True)
      >>> out["rows"], list(out["skipped"]), out["settings"]["folds"]
      ([], ['pima'], 3)
      >>> [round(float(v), 3) for v in out["settings"]["learners"]["mincq"]["mu"]]
      [0.01, 0.034, 0.092, 0.316]
    """
    if table not in PROTOCOLS:
        raise ValueError(f"unknown table {table!r}; known: {sorted(PROTOCOLS)}")
    protocol = PROTOCOLS[table]
    if (folds is not None and folds < 2) or (grid_values is not None and grid_values < 1):
        raise ValueError(f"need folds >= 2 and grid_values >= 1; got {folds}, {grid_values}")
    names = _check_names(protocol, dataset_names, protocol.datasets, "datasets")
    chosen = _check_names(protocol, learners, protocol.learners, "learners")
    data_dir = resolve_data_dir(data_dir)
    folds = folds or (QUICK_FOLDS if quick else protocol.folds)
    grid_values = grid_values or (QUICK_VALUES if quick else None)
    cv = {"folds": folds, "values": grid_values, "seed": seed}
    payload: dict[str, Any] = {
        "table": table,
        "settings": {**cv, "learners": _grids(protocol, chosen, cv)},
    }
    payload.update(rows=[], skipped={})
    total, done = len(names) * len(chosen), 0
    report = progress or (lambda done, total, label: None)
    for name in names:
        try:
            data = load_registered(name, data_dir)
        except FileNotFoundError as err:
            payload["skipped"][name] = str(err)
            done += len(chosen)
            report(done, total, f"{name}: skipped (no file)")
            continue
        split = _split(protocol, name, data.X, data.y, seed)
        shape = {"n_train": len(split.y_train), "n_test": len(split.y_test)}
        for key in chosen:
            label = f"{name} {protocol.learners[key].label}"
            report(done, total, label)
            row = _learner_row(protocol.learners[key], split, **cv)
            payload["rows"].append({"dataset": name, "learner": key, **shape, **row})
            done += 1
            report(done, total, label)
            if on_row is not None:
                on_row(payload)
    return payload
