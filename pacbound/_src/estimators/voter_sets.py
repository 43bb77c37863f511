"""The voter sets of :mod:`pacbound._src.estimators`: decision stumps and label-signed RBF voters.

Import :class:`StumpVoters` and :class:`RBFVoters` from :mod:`pacbound._src.estimators`.

A voter set is fitted on the training sample (``fit(X, y) -> self``) and evaluated as the
``(m, n)`` vote matrix ``H[i, j] = h_j(x_i)`` in ``[-1, 1]`` (``votes(X)``), whose
self-complemented columns ``[H, -H]`` the estimators weight (roy2016 §7). The built-in sets
describe themselves as JSON-able constructor parameters plus fitted arrays (``state`` /
``from_state``), which ``MajorityVoteClassifier.save`` and ``load`` store without pickle;
:func:`voter_set` turns an estimator's ``voters=`` parameter into a fresh voter set.
"""

from __future__ import annotations

import copy
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pacbound._src.voters.rbf import median_pairwise_distance, signed_rbf_votes
from pacbound._src.voters.stumps import Stumps, fit_stumps, votes

__all__ = ["VOTER_SETS", "RBFVoters", "StumpVoters", "VoterSet", "float_dtype", "voter_set"]


def float_dtype():
    """float32, or float64 when ``jax_enable_x64`` is on.

    Example:
      >>> str(float_dtype())  # JAX's default precision (float64 under jax_enable_x64)
      'float32'
    """
    return jax.dtypes.canonicalize_dtype(np.float64)


class VoterSet:
    """A voter set: ``fit(X, y) -> self``, then ``votes(X)``, the ``(m, n)`` matrix in [-1, 1].

    Any object with these two methods can be passed as ``voters=``; the built-in sets also
    save and load (their constructor parameters and fitted arrays are listed in ``_params`` /
    ``_fitted``).
    """

    kind: str
    _params: tuple[str, ...]
    _fitted: tuple[str, ...]
    sample_dependent = False  # built from the training examples (a PAC-Bayes prior cannot be)

    def __repr__(self) -> str:
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self._params)
        return f"{type(self).__name__}({args})"

    def state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """``(params, arrays)``: JSON-able constructor parameters and the fitted arrays."""
        return {p: getattr(self, p) for p in self._params}, {
            a: np.asarray(getattr(self, a)) for a in self._fitted
        }

    @classmethod
    def from_state(cls, params: dict[str, Any], arrays: dict[str, np.ndarray]) -> VoterSet:
        out = cls(**params)
        for name in cls._fitted:
            value = arrays[name]
            setattr(out, name, value.item() if value.ndim == 0 else value)
        return out


class StumpVoters(VoterSet):
    """Decision stumps, ``n_thresholds`` equally spaced per feature (roy2016 §7;
    :func:`pacbound._src.voters.fit_stumps`); ``voters="stumps"`` is ``StumpVoters(n_stumps)``."""

    kind, _params, _fitted = "stumps", ("n_thresholds",), ("features_", "thresholds_")

    def __init__(self, n_thresholds: int = 10):
        self.n_thresholds = n_thresholds

    def fit(self, X, y=None) -> StumpVoters:
        stumps = fit_stumps(X, self.n_thresholds)
        self.features_ = np.asarray(stumps.features)
        self.thresholds_ = np.asarray(stumps.thresholds)
        return self

    def votes(self, X) -> jax.Array:
        stumps = Stumps(jnp.asarray(self.features_), jnp.asarray(self.thresholds_))
        return votes(stumps, X, dtype=float_dtype())


class RBFVoters(VoterSet):
    """Label-signed RBF voters ``y_j k(x_j, x)`` centred on the training points
    (laviolette2011 §6; :func:`pacbound._src.voters.signed_rbf_votes`); ``gamma=None`` takes the
    median pairwise distance. ``voters="rbf"`` is ``RBFVoters()``."""

    kind, _params = "rbf", ("gamma",)
    _fitted = ("centers_", "center_labels_", "gamma_")
    sample_dependent = True

    def __init__(self, gamma: float | None = None):
        self.gamma = gamma

    def fit(self, X, y) -> RBFVoters:
        self.centers_, self.center_labels_ = np.asarray(X), np.asarray(y, np.float64)
        gamma = median_pairwise_distance(X) if self.gamma is None else self.gamma
        self.gamma_ = float(gamma) if float(gamma) > 0 else 1.0  # all points equal: any width
        return self

    def votes(self, X) -> jax.Array:
        return signed_rbf_votes(self.centers_, self.center_labels_, X, self.gamma_)


VOTER_SETS = {cls.kind: cls for cls in (StumpVoters, RBFVoters)}


def voter_set(spec: Any, n_stumps: int) -> Any:
    """A fresh, unfitted voter set from ``voters=`` (the estimator's parameter is not touched).

    Example:
      >>> import numpy as np
      >>> stumps = voter_set("stumps", 5)  # 5 thresholds per feature
      >>> stumps
      StumpVoters(n_thresholds=5)
      >>> X, y = np.arange(8.0).reshape(4, 2), np.array([-1.0, -1.0, 1.0, 1.0])
      >>> stumps.fit(X, y).votes(X).shape  # 2 features x 5 thresholds
      (4, 10)
      >>> voter_set("trees", 5)
      Traceback (most recent call last):
        ...
      ValueError: voters must be 'stumps', 'rbf' or a voter set object; got 'trees'
    """
    if isinstance(spec, str):
        if spec == "stumps":
            return StumpVoters(n_stumps)
        if spec == "rbf":
            return RBFVoters()
        raise ValueError(f"voters must be 'stumps', 'rbf' or a voter set object; got {spec!r}")
    if not (callable(getattr(spec, "fit", None)) and callable(getattr(spec, "votes", None))):
        raise ValueError(f"a voters object needs fit(X, y) and votes(X) methods; got {spec!r}")
    return copy.deepcopy(spec)
