"""Fitted scikit-learn ensembles as voter sets, with their out-of-bag masks.

A random forest (``RandomForestClassifier``, ``ExtraTreesClassifier``) or a
``BaggingClassifier``, binary or multiclass, is a majority vote of its ``n`` members. Each
member was trained on a bootstrap sample (or a subsample) of the ``m`` training examples and
never saw the others, its *out-of-bag* set ``OOB_j``; so its losses on ``OOB_j`` are unbiased
and the PAC-Bayes bounds of :mod:`pacbound._src.bounds.second_order` can be computed on them
without a
held-out set (Lorenzen, Igel and Seldin, "On PAC-Bayesian bounds for random forests", Machine
Learning 108, 2019: every voter on its own ``OOB_j``, ``n = min_j |OOB_j|``; every pair on
``OOB_j cap OOB_k``, ``n2 = min_{j,k} |OOB_j cap OOB_k|``; Masegosa et al. 2020 for pairs).

* :func:`ensemble_voters` ``(model, X, y=None)`` -> :class:`EnsembleVoters`: every member's
  predicted class index on the training inputs ``X`` and the ``(m, n)`` out-of-bag mask read
  from ``model.estimators_samples_`` (scikit-learn's own bookkeeping: the mask is the one its
  ``oob_decision_function_`` averages over).
* :func:`ensemble_predictions` ``(model, X)``: the members' class indices on any inputs.
* :func:`class_indices` ``(y, classes)``: labels as indices into ``classes``.
* :func:`vote_shares` ``(predictions, rho, n_classes)``: ``rho``'s weight on each class,
  ``sum_j rho_j 1[h_j(x) = c]``; the majority vote is its argmax.

NumPy only, never traced. scikit-learn is imported when a model is read (the ``sklearn``
extra): the core install does not need it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "EnsembleVoters",
    "class_indices",
    "ensemble_predictions",
    "ensemble_voters",
    "vote_shares",
]

_SKLEARN_HINT = "ensemble voters need scikit-learn: pip install pacbound[sklearn]"


class EnsembleVoters(NamedTuple):
    """A fitted ensemble's members evaluated on its training inputs.

    Attributes:
      predictions: ``(m, n)`` int32, the class index ``h_j(x_i)`` (into ``classes``) member
        ``j`` predicts for example ``i``.
      oob_mask: ``(m, n)`` bool, ``True`` where example ``i`` is out of member ``j``'s bag.
      classes: ``(C,)`` the model's ``classes_`` (the labels the indices stand for).
      labels: ``(m,)`` int32, ``y`` as indices into ``classes``, or ``None`` when no ``y`` was
        given.
    """

    predictions: np.ndarray
    oob_mask: np.ndarray
    classes: np.ndarray
    labels: np.ndarray | None


def _supported_types() -> tuple[type, ...]:
    try:
        from sklearn.ensemble import (
            BaggingClassifier,
            ExtraTreesClassifier,
            RandomForestClassifier,
        )
    except ImportError as err:
        raise ImportError(_SKLEARN_HINT) from err
    return RandomForestClassifier, ExtraTreesClassifier, BaggingClassifier


def _check_model(model: Any) -> None:
    """A fitted, single-output forest or bagging classifier of scikit-learn."""
    supported = _supported_types()
    if not isinstance(model, supported):
        names = ", ".join(t.__name__ for t in supported)
        raise ValueError(f"the model must be one of {names}; got {type(model).__name__}")
    if not hasattr(model, "estimators_"):
        raise ValueError(f"this {type(model).__name__} is not fitted: call fit(X, y) first")
    if getattr(model, "n_outputs_", 1) != 1:
        raise ValueError("multi-output ensembles are not supported: fit one label column")


def _members(model: Any) -> list[tuple[Any, Any]]:
    """``(estimator, feature indices or None)`` per member (bagging may subsample features)."""
    features = getattr(model, "estimators_features_", None)
    if features is None:
        return [(est, None) for est in model.estimators_]
    return list(zip(model.estimators_, features, strict=True))


def _inputs(model: Any, X: Any) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] != model.n_features_in_:
        raise ValueError(
            f"X must be a non-empty (m, {model.n_features_in_}) matrix (the model's features); "
            f"got shape {X.shape}"
        )
    return X


def ensemble_predictions(model: Any, X: Any) -> np.ndarray:
    """Every member's predicted class index on ``X``: ``(m, n)`` int32, indices into
    ``model.classes_`` (scikit-learn trains the members on the encoded labels).

    Raises:
      ImportError: scikit-learn is not installed (the ``sklearn`` extra).
      ValueError: an unsupported or unfitted model, or ``X`` of the wrong shape.

    Example:
      >>> import numpy as np
      >>> from sklearn.ensemble import RandomForestClassifier
      >>> X, y = np.arange(8.0).reshape(-1, 1), np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
      >>> forest = RandomForestClassifier(3, random_state=0).fit(X, y)
      >>> P = ensemble_predictions(forest, X)
      >>> P.shape, str(P.dtype), sorted(set(P.ravel().tolist())) <= [0, 1]  # indices into classes_
      ((8, 3), 'int32', True)
    """
    _check_model(model)
    X = _inputs(model, X)
    n_classes = len(model.classes_)
    columns: list[np.ndarray] = []
    for est, features in _members(model):
        out = np.asarray(est.predict(X if features is None else X[:, features]))
        index = out.astype(np.int32)
        if not (np.array_equal(index, out) and index.min() >= 0 and index.max() < n_classes):
            raise ValueError(
                f"member {len(columns)} predicts values outside the class indices "
                f"0..{n_classes - 1}"
            )
        columns.append(index)
    return np.stack(columns, axis=1)


def _oob_mask(model: Any, m: int) -> np.ndarray:
    """``(m, n)`` out-of-bag mask from ``model.estimators_samples_`` (the in-bag indices)."""
    if not getattr(model, "bootstrap", True) and not hasattr(model, "estimators_features_"):
        raise ValueError(
            f"this {type(model).__name__} was fitted with bootstrap=False: every tree saw every "
            "example, so there are no out-of-bag sets; refit with bootstrap=True or bound on a "
            "held-out split"
        )
    samples = model.estimators_samples_
    mask = np.ones((m, len(samples)), bool)
    for j, inbag in enumerate(samples):
        inbag = np.asarray(inbag)
        if inbag.dtype == bool:  # a boolean mask rather than indices
            inbag = np.flatnonzero(inbag)
        if inbag.size and inbag.max() >= m:
            raise ValueError(
                f"member {j} was trained on example {inbag.max()}, beyond X's {m} rows: X must "
                "be the training inputs, in the order given to fit"
            )
        mask[inbag, j] = False
    empty = np.flatnonzero(~mask.any(axis=0))
    if empty.size:
        raise ValueError(
            f"members {empty[:10].tolist()} have no out-of-bag example (their samples hold "
            "every training example): refit with bootstrap=True / max_samples < 1, or bound "
            "on a held-out split"
        )
    return mask


def class_indices(y: Any, classes: Any) -> np.ndarray:
    """``y`` as int32 indices into the sorted ``classes`` (a model's ``classes_``).

    Raises:
      ValueError: ``y`` not 1-D, or a label that is not among ``classes`` (naming it).

    Example:
      >>> class_indices(["b", "a", "b"], ["a", "b"]).tolist()
      [1, 0, 1]
      >>> class_indices(["c"], ["a", "b"])
      Traceback (most recent call last):
        ...
      ValueError: labels ['c'] are not among the classes ['a', 'b']
    """
    y, classes = np.asarray(y), np.asarray(classes)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    index = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    unknown = classes[index] != y
    if unknown.any():
        found = np.unique(y[unknown])[:10].tolist()
        raise ValueError(f"labels {found} are not among the classes {classes.tolist()[:20]}")
    return index.astype(np.int32)


def ensemble_voters(model: Any, X: Any, y: Any = None) -> EnsembleVoters:
    """A fitted ensemble as a voter set with its out-of-bag masks (Lorenzen et al. 2019).

    Args:
      model: a fitted ``RandomForestClassifier``, ``ExtraTreesClassifier`` (both with
        ``bootstrap=True``) or ``BaggingClassifier`` (bootstrap, or subsampling with
        ``max_samples < 1``), binary or multiclass.
      X: ``(m, d)`` the training inputs, in the order given to ``fit`` (the in-bag indices
        point into them).
      y: ``(m,)`` the training labels (optional): returned as class indices.

    Returns:
      :class:`EnsembleVoters`: predictions ``(m, n)`` (class indices), the out-of-bag mask,
      the classes and the labels' indices.

    Raises:
      ImportError: scikit-learn is not installed (the ``sklearn`` extra).
      ValueError: an unsupported or unfitted model, a forest fitted with ``bootstrap=False``,
        a member without out-of-bag examples, ``X`` that is not the training inputs' shape,
        or a label outside the model's classes.

    Example:
      >>> import numpy as np
      >>> from sklearn.ensemble import RandomForestClassifier
      >>> X, y = np.arange(8.0).reshape(-1, 1), np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
      >>> forest = RandomForestClassifier(3, random_state=0).fit(X, y)
      >>> voters = ensemble_voters(forest, X, y)
      >>> voters.predictions.shape, voters.oob_mask.shape, voters.classes.tolist()
      ((8, 3), (8, 3), ['a', 'b'])
      >>> voters.labels.tolist(), bool(voters.oob_mask.any(axis=0).all())  # OOB sets
      ([0, 0, 0, 0, 1, 1, 1, 1], True)
    """
    predictions = ensemble_predictions(model, X)
    m = predictions.shape[0]
    mask = _oob_mask(model, m)
    labels = None
    if y is not None:
        labels = class_indices(y, model.classes_)
        if labels.shape != (m,):
            raise ValueError(f"y must have one label per row of X ({m}); got {labels.shape}")
    return EnsembleVoters(predictions, mask, np.asarray(model.classes_), labels)


def vote_shares(predictions: Any, rho: Any, n_classes: int) -> np.ndarray:
    """``(m, C)`` weights ``sum_j rho_j 1[h_j(x_i) = c]`` of the vote ``MV_rho``; each row sums
    to 1 for a distribution ``rho``, and ``MV_rho(x_i) = argmax_c`` (ties: the smallest
    index).

    Example:
      >>> import numpy as np
      >>> predictions = np.array([[0, 0, 1], [1, 2, 2]])  # class indices of 3 voters
      >>> vote_shares(predictions, [0.5, 0.25, 0.25], 3).tolist()
      [[0.75, 0.25, 0.0], [0.0, 0.5, 0.5]]
    """
    predictions, rho = np.asarray(predictions), np.asarray(rho, np.float64)
    shares = np.zeros((predictions.shape[0], n_classes))
    for c in range(n_classes):
        shares[:, c] = (predictions == c) @ rho
    return shares
