"""The machinery shared by :mod:`pacbound._src.estimators`: the base classifier, save and load.

Import the estimators and voter sets from :mod:`pacbound._src.estimators`.

:class:`MajorityVoteClassifier` validates the input (scikit-learn's checks, plus binary labels
mapped to ``±1``), fits a voter set, asks its subclass to run a learner of
:mod:`pacbound._src.solvers` (the learner protocol: a :class:`~pacbound._src.solvers.LearnerResult`
whose posterior ``Q`` is over the self-complemented voters ``[H, -H]``), predicts with the
sign of the vote ``H (Q_+ - Q_-)`` and certifies ``Q`` on the training sample with the bound
registry (:func:`pacbound.certify.certify_margins`; uniform prior over the ``2n`` columns).
``save`` / ``load`` write one ``.npz`` file holding the arrays and a JSON metadata string (no
pickle).
"""

from __future__ import annotations

import inspect
import json
import time
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from pacbound._src.certify import BOUNDS, DEFAULT_BOUNDS, certify_margins, is_quasi_uniform
from pacbound._src.compilation_cache import enable_compilation_cache
from pacbound._src.estimators.voter_sets import VOTER_SETS, RBFVoters, StumpVoters, voter_set
from pacbound._src.validation import check_delta, check_sample_weight, check_votes

__all__ = ["BOUND_KINDS", "MajorityVoteClassifier", "RBFVoters", "StumpVoters", "TrainingStats"]

BOUND_KINDS = DEFAULT_BOUNDS
"""The bounds :meth:`MajorityVoteClassifier.bound` knows: the registry's default bounds
(:data:`pacbound.certify.DEFAULT_BOUNDS`, every one computable from the training margins);
a bound registered there is an estimator's bound too."""
_FORMAT = "pacbound.estimator/1"


# -------------------------------------------------------------------------- the base
class TrainingStats(NamedTuple):
    """Statistics of the fitted vote on the (unweighted) training sample.

    Attributes:
      m: number of training examples.
      mu1, mu2: first and second moments of the margin ``y H q`` (roy2016 Definition 2).
      kl: ``KL(Q || uniform)`` over the ``2n`` columns of ``[H, -H]``.
      risk: the majority vote's training risk (a tie counts as an error).
    """

    m: int
    mu1: float
    mu2: float
    kl: float
    risk: float


def _kl_to_uniform(q: np.ndarray) -> float:
    positive = q[q > 0]
    return float(np.sum(positive * np.log(positive * q.size)))


class MajorityVoteClassifier(ClassifierMixin, BaseEstimator):
    """Base class: a weighted majority vote of ``voters`` whose posterior a learner chooses.

    A classifier is a declaration: ``_learner`` (the learner it runs), ``_hyperparameters``
    (the learner's positional hyperparameters, with the estimator's defaults: the learner has
    none), ``_options`` (the learner's keyword options it exposes, whose defaults are the
    learner's own: one source of defaults) and ``_extra`` (the estimator's own parameters,
    with their defaults). Its ``__init__`` is generated from them (scikit-learn reads its
    signature) and ``_solve(H, y, w)`` runs the learner on votes ``H`` ``(m, n)``, labels
    ``y`` in ``{-1, +1}`` and example weights ``w`` (None when none are given).

    Fitted attributes: ``classes_`` (``classes_[1]`` is ``+1``), ``voters_``, ``posterior_``
    (over the ``2n`` columns of ``[H, -H]``), ``n_voters_`` (columns with non-zero weight),
    ``n_iter_`` and ``converged_`` (the learner's ``steps`` and ``converged``),
    ``train_stats_``, ``train_margins_`` (the margins the certificate reads), ``fit_time_``
    (seconds), ``n_features_in_``.
    """

    _learner: Callable | None = None
    _hyperparameters: dict[str, Any] = {}  # noqa: RUF012 (a declaration, read-only)
    _options: tuple[str, ...] = ()
    _extra: dict[str, Any] = {}  # noqa: RUF012
    _needs_binary_votes = False  # AdaBoost and VEB-Boost need ±1 votes
    _fitted_arrays: tuple[str, ...] = ()  # fitted attributes (arrays) that save / load keep

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _set_params(self, params: dict[str, Any]) -> None:
        """Store the constructor's arguments (``locals()`` of ``__init__``) unchanged."""
        kept = {k: v for k, v in params.items() if k not in ("self", "__class__")}
        self.__dict__.update(kept)  # vars(self); typeshed types vars() as read-only

    def _solve(self, H: jax.Array, y: np.ndarray, w: np.ndarray | None):
        """The declared learner on ``H``, ``y`` and ``w`` with this estimator's parameters."""
        assert self._learner is not None, f"{type(self).__name__} declares no _learner"
        args = [getattr(self, name) for name in self._hyperparameters]
        options = {name: getattr(self, name) for name in self._options}
        return self._learner(H, y, *args, sample_weight=w, **options, **self._solve_options(H))

    def _solve_options(self, H: jax.Array) -> dict[str, Any]:
        """Learner options computed from the estimator's own parameters (none by default)."""
        return {}

    def _labels(self, y: np.ndarray) -> np.ndarray:
        check_classification_targets(y)
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        self.classes_ = np.unique(y)
        if kind != "binary" or len(self.classes_) != 2:
            found = self.classes_.tolist()[:10]
            if len(self.classes_) < 2:
                raise ValueError(f"y has one class only (labels found: {found}); need two")
            raise ValueError(
                f"Only binary classification is supported. The type of the target is {kind}; "
                f"{len(self.classes_)} labels found: {found}"
            )
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def _weights(self, sample_weight, X, y: np.ndarray) -> np.ndarray:
        w = np.asarray(sample_weight, np.float64)  # sample_weight is not None here
        check_sample_weight(w, len(y))
        if np.unique(y[w > 0]).size < 2:
            raise ValueError("examples of one class only have non-zero sample_weight")
        return w

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` ``(m, d)``, binary labels ``y`` (any two classes) and optional example
        weights (a zero weight removes the example)."""
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight=None):
        enable_compilation_cache()  # once compiled, a program is kept on disk (opt out: env)
        start = time.perf_counter()
        X, y = validate_data(self, X, y, dtype=(np.float64, np.float32))
        y = self._labels(y)
        w = None if sample_weight is None else self._weights(sample_weight, X, y)
        rows = slice(None) if w is None else w > 0  # zero weight = example removed
        self.voters_ = voter_set(self.voters, self.n_stumps).fit(X[rows], y[rows])
        H = self.voters_.votes(X)
        check_votes(H, "voters.votes(X)")
        if self._needs_binary_votes and not (np.abs(np.asarray(H)) == 1).all():
            raise ValueError(f"{type(self).__name__} needs binary (±1) voters such as 'stumps'")
        result = self._solve(H, y, w)
        q = np.asarray(result.q, np.float64)
        if not (np.isfinite(q).all() and q.min() >= 0 and q.sum() > 0):
            raise ValueError(f"{type(self).__name__}: the learner returned no distribution")
        self.posterior_ = q / q.sum()
        self.n_voters_ = int(np.count_nonzero(self.posterior_))
        self.n_iter_, self.converged_ = int(result.steps), bool(result.converged)
        margins = y * self._vote(H)
        self.train_margins_ = margins
        self.train_stats_ = TrainingStats(
            len(y), float(margins.mean()), float((margins**2).mean()),
            _kl_to_uniform(self.posterior_), float((margins <= 0).mean()),
        )  # fmt: skip
        self.fit_time_ = time.perf_counter() - start
        return self

    def _vote(self, H) -> np.ndarray:
        n = self.posterior_.size // 2
        weights = self.posterior_[:n].astype(np.float64) - self.posterior_[n:]
        return np.asarray(H, np.float64) @ weights

    def decision_function(self, X) -> np.ndarray:
        """The weighted vote ``sum_j Q(h_j) h_j(x)`` over ``[H, -H]``; ``> 0`` predicts
        ``classes_[1]``."""
        return self._vote(self._votes_on(X))

    def _votes_on(self, X) -> jax.Array:
        """The fitted voters' votes ``H`` on ``X``, checked as at fit time."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=(np.float64, np.float32))
        return self.voters_.votes(X)

    def predict(self, X) -> np.ndarray:
        """``classes_[1]`` where the vote is positive, ``classes_[0]`` elsewhere (ties too)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]

    def bound(self, kind: str = "cbound_roy2016", delta: float = 0.05) -> float:
        """A bound on the true risk of the majority vote, certified on the training sample.

        Holds with probability ``1 - delta`` over the draw of the (unweighted) training sample,
        with the uniform prior over the ``2n`` columns of ``[H, -H]``, provided the bound,
        ``delta`` and the voters were fixed before seeing the sample (choosing the best of
        ``K`` bounds costs ``delta / K``: :meth:`certificate`'s ``best`` does it). Stumps'
        thresholds come from the training inputs' range (never the labels), the papers'
        convention; RBF voters centred on training points (laviolette2011 §6) depend on the
        sample, so their "bound" is no guarantee and a warning says so. Computed in float64
        by :func:`pacbound.certify.certify_margins`.

        Args:
          kind: a name of :data:`BOUND_KINDS` (:data:`pacbound.certify.DEFAULT_BOUNDS`),
            e.g. ``"seeger"``, ``"pac_bound_2"``, ``"tnd"``, ``"split_kl"``; a bound of the
            quasi-uniform family (``"cbound_quasi_uniform"``) for quasi-uniform posteriors
            only (MinCq, KL coordinate descent).
          delta: confidence in ``(0, 1]``.
        """
        return float(self.certificate(delta, [kind]).bounds[kind])

    def certificate(self, delta: float = 0.05, kinds=None):
        """Every bound of ``kinds`` (default: all that cover the posterior) at ``delta`` each,
        and ``best``, the smallest at ``delta / K``: a
        :class:`pacbound.certify.Certificate` (see :meth:`bound` for the conditions)."""
        check_is_fitted(self)
        check_delta(delta)
        quasi = bool(is_quasi_uniform(self.posterior_)) and self.train_stats_.m > 8
        if kinds is None:
            kinds = [k for k in BOUND_KINDS if quasi or BOUNDS[k].family != "quasi_uniform"]
        for kind in kinds:
            if kind not in BOUND_KINDS:
                raise ValueError(f"unknown bound kind {kind!r}; choose one of {BOUND_KINDS}")
        if getattr(self.voters_, "sample_dependent", False):
            warnings.warn(
                f"{type(self.voters_).__name__} are built from the training examples: a bound "
                "with a prior fixed before the sample does not cover them",
                stacklevel=3,
            )
        kl = self.train_stats_.kl
        return certify_margins(
            self.train_margins_, kl, bounds=kinds, delta=delta, quasi_uniform=quasi
        )

    # ------------------------------------------------------------------- save / load
    def save(self, path) -> None:
        """Write the fitted classifier to ``path`` (``.npz``: arrays + JSON metadata, no pickle).

        Raises:
          ValueError: a voter set other than the built-in ones (it cannot be stored).
        """
        check_is_fitted(self)
        voter_set = self.voters_
        if type(voter_set) not in VOTER_SETS.values():
            raise ValueError(f"save supports the voter sets {sorted(VOTER_SETS)} only")
        voter_params, voter_arrays = voter_set.state()
        params = self.get_params()
        if not isinstance(params["voters"], str):
            params["voters"] = {"kind": voter_set.kind, "params": voter_params}
        meta = {
            "format": _FORMAT, "class": type(self).__name__, "params": params,
            "voters": {"kind": voter_set.kind, "params": voter_params},
            "train_stats": self.train_stats_._asdict(), "fit_time": self.fit_time_,
            "n_iter": self.n_iter_, "converged": self.converged_,
            "n_features_in": self.n_features_in_,
        }  # fmt: skip
        arrays = {f"voters.{k}": v for k, v in voter_arrays.items()}
        arrays.update(posterior=self.posterior_, classes=loadable_array(self.classes_))
        arrays.update(train_margins=self.train_margins_)
        arrays.update({name: getattr(self, name) for name in self._fitted_arrays})
        if hasattr(self, "feature_names_in_"):
            arrays["feature_names_in"] = loadable_array(self.feature_names_in_)
        with open(path, "wb") as f:
            np.savez(f, metadata=np.array(json.dumps(meta, default=json_scalar)), **arrays)

    @classmethod
    def load(cls, path) -> MajorityVoteClassifier:
        """Read a classifier written by :meth:`save` (of this class, or of any when called on
        :class:`MajorityVoteClassifier`)."""
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("metadata")))
        if meta.get("format") != _FORMAT or meta.get("class") not in _CLASSES:
            raise ValueError(f"{path} is not a saved pacbound estimator")
        klass = _CLASSES[meta["class"]]
        if not issubclass(klass, cls):
            raise ValueError(f"{path} holds a {klass.__name__}, not a {cls.__name__}")
        params, spec = meta["params"], meta["voters"]
        voter_set = VOTER_SETS[spec["kind"]]
        if isinstance(params["voters"], dict):
            params["voters"] = voter_set(**spec["params"])
        out = klass(**params)
        prefix = "voters."
        fitted = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
        out.voters_ = voter_set.from_state(spec["params"], fitted)
        out.posterior_, out.classes_ = arrays["posterior"], arrays["classes"]
        out.train_margins_ = arrays["train_margins"]
        for name in klass._fitted_arrays:
            setattr(out, name, arrays[name])
        if "feature_names_in" in arrays:
            out.feature_names_in_ = arrays["feature_names_in"].astype(object)
        out.n_voters_ = int(np.count_nonzero(out.posterior_))
        out.train_stats_ = TrainingStats(**meta["train_stats"])
        out.fit_time_, out.n_features_in_ = meta["fit_time"], meta["n_features_in"]
        out.n_iter_, out.converged_ = meta["n_iter"], meta["converged"]
        return out

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _CLASSES[cls.__name__] = cls
        if cls._learner is not None and "__init__" not in vars(cls):
            cls.__init__ = _declared_init(cls)


_VOTERS = {"voters": "stumps", "n_stumps": 10}  # every estimator's voter set


def _declared_init(cls: type[MajorityVoteClassifier]) -> Callable:
    """``__init__`` of a declared classifier: its hyperparameters (positional or keyword),
    then, keyword-only, the learner's options with the learner's defaults, the estimator's own
    parameters and the voters; it stores them unchanged, as scikit-learn requires."""
    learner = inspect.signature(cls._learner).parameters  # type: ignore[arg-type]
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    params += [P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in cls._hyperparameters.items()]
    params += [P(n, P.KEYWORD_ONLY, default=learner[n].default) for n in cls._options]
    params += [P(n, P.KEYWORD_ONLY, default=d) for n, d in {**cls._extra, **_VOTERS}.items()]
    signature = inspect.Signature(params)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        self._set_params(bound.arguments)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


_CLASSES: dict[str, type] = {}


def json_scalar(value: Any) -> Any:
    """NumPy scalars in the parameters (``mu=np.float64(0.1)``) as Python numbers."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot save the parameter value {value!r} as JSON")


def loadable_array(values: np.ndarray) -> np.ndarray:
    """An array ``np.load`` reads without pickle: object arrays of strings become ``str``."""
    values = np.asarray(values)
    return values.astype(str) if values.dtype == object else values
