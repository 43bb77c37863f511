"""scikit-learn classifiers over the learners of :mod:`pacbound._src.solvers`, one per learner.

Each class maps its hyperparameters to one solver call; the shared base
(:class:`MajorityVoteClassifier`) validates the input, maps any two labels to ``±1``
(``classes_[1]`` is ``+1``), fits the voters (``voters="stumps"`` with ``n_stumps``
thresholds per feature, ``"rbf"``, or a voter set object such as :class:`StumpVoters` /
:class:`RBFVoters` or your own with ``fit(X, y)`` and ``votes(X)``), predicts with the sign of
the weighted vote, certifies it (``bound(kind, delta)``) and saves / loads it (``.npz`` with
JSON metadata, no pickle). The posterior ``posterior_`` is over the ``2n`` columns of the
self-complemented set ``[H, -H]`` of the ``n`` fitted voters.

Numeric hyperparameters reach the jitted solvers as traced arrays: refitting with another
``mu``, ``C``, ``lam``, ... on data of the same shape does not recompile; sizes (``n_rounds``,
``max_iter`` where it is a buffer or a scan's length) and string options are static. Every
estimator accepts ``fit(X, y, sample_weight=...)``; a zero weight removes an example (from the
voters' fit too) and an integer weight ``k`` counts it ``k`` times (scikit-learn's convention,
MinCq to its stopping tolerance).

Each ``_solve`` is one learner call (the learner protocol, :mod:`pacbound._src.protocol`):
the learner takes the voters' votes ``H`` as they are and returns its posterior over
``[H, -H]``, so no estimator builds complements or normalizes weights itself.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from pacbound import solvers
from pacbound._src.estimators.base import MajorityVoteClassifier
from pacbound._src.learning.candidates import split_index


# ------------------------------------------------------------ the C-bound learners
class MinCqClassifier(MajorityVoteClassifier):
    """MinCq (laviolette2011 Program 1): the quasi-uniform posterior with first margin moment
    ``mu`` and the smallest second moment (:func:`pacbound.solvers.mincq`); ``mu`` above the
    largest realizable one is refused with a ``ValueError`` naming it. Fitted: ``n_iter_``
    FISTA iterations and ``converged_`` (the certified duality gap met before ``max_iter``)."""

    _learner = staticmethod(solvers.mincq)
    _hyperparameters = {"mu": 0.05}  # noqa: RUF012
    _options = ("max_iter",)


class CqBoostClassifier(MajorityVoteClassifier):
    """CqBoost (roy2016 Algorithm 1): column generation minimizing the C-bound at first margin
    moment ``mu`` (:func:`pacbound.solvers.cqboost`); ``tol`` stops it, ``max_columns`` caps
    the columns."""

    _learner = staticmethod(solvers.cqboost)
    _hyperparameters = {"mu": 0.05}  # noqa: RUF012
    _options = ("tol", "max_columns")


class _Boosting(MajorityVoteClassifier):
    """A learner that adds one weighted column of ``[H, -H]`` per round: its vote after ``t``
    rounds is the prefix ``sum_{s <= t} alpha_s h_{j_s}``, so one fit of ``T`` rounds holds every
    shorter one (``staged_decision_function``, as scikit-learn's boosting estimators).

    Fitted attributes: ``selected_`` ``(T,)`` the column of ``[H, -H]`` added each round (``-1``:
    none) and ``alphas_`` ``(T,)`` its weight."""

    _fitted_arrays = ("selected_", "alphas_")

    def _solve(self, H, y, w):
        result = super()._solve(H, y, w)
        info = result.info
        self.selected_, self.alphas_ = np.asarray(info.selected), np.asarray(info.alphas)
        return result

    def staged_decision_function(self, X):
        """Yield the vote on ``X`` after each round, ``1`` to ``n_rounds``, normalized as
        :meth:`decision_function` (the last one equals it); ``> 0`` predicts ``classes_[1]``."""
        H = np.asarray(self._votes_on(X), np.float64)
        base, sign = (np.asarray(a) for a in split_index(jnp.asarray(self.selected_), H.shape[1]))
        alphas = np.where(sign != 0, self.alphas_, 0.0)
        votes = np.cumsum(H[:, base] * (sign * alphas), axis=1)
        totals = np.cumsum(alphas)
        yield from (votes / np.where(totals > 0, totals, 1)).T


class CBBoostClassifier(_Boosting):
    """CB-Boost (bauvin2020 Algorithm 1): ``n_rounds`` greedy C-bound steps in closed form
    (:func:`pacbound.solvers.cbboost`)."""

    _learner = staticmethod(solvers.cbboost)
    _hyperparameters = {"n_rounds": 100}  # noqa: RUF012


class GBCBBoostClassifier(CBBoostClassifier):
    """GB-CB-Boost (bauvin2020 §3.2): CB-Boost along the C-bound's steepest direction."""

    _learner = staticmethod(solvers.gbcbboost)


class KLBoostClassifier(MajorityVoteClassifier):
    """KL-regularized coordinate descent (germain2009 Algorithm 1): KL-QL
    (``loss="quadratic"``) or KL-EL (``"exponential"``), weight ``C`` on the loss of margin
    scale ``gamma`` (:func:`pacbound.solvers.kl_coordinate_descent`). ``random_state`` seeds the
    order of the pairs in each sweep (``None``: index order). An integer ``sample_weight`` is
    that many copies of the example (``C`` weighs each one). Fitted: ``n_iter_`` sweeps run and
    ``converged_`` (``False`` when ``max_iter`` stopped it; large ``C`` with small ``gamma``
    may need more)."""

    _learner = staticmethod(solvers.kl_coordinate_descent)
    _hyperparameters = {"C": 1.0, "gamma": 1.0}  # noqa: RUF012
    _options = ("loss", "relaxation", "tol", "max_iter")
    _extra = {"random_state": None}  # noqa: RUF012

    def _solve_options(self, H):
        return {"key": None if self.random_state is None else jax.random.key(self.random_state)}


class VEBBoostClassifier(MajorityVoteClassifier):
    """VEB-Boost (Shivaswamy & Jebara, Fig. 1): boosting with a variance penalty ``lam`` in
    ``[0, 1]`` (:func:`pacbound.solvers.vebboost`); binary voters only."""

    _needs_binary_votes = True
    _learner = staticmethod(solvers.vebboost)
    _hyperparameters = {"lam": 0.5, "n_rounds": 100}  # noqa: RUF012


@functools.cache
def _adam(learning_rate: float) -> optax.GradientTransformation:
    """One optimizer object per learning rate, so refits reuse the compiled scan."""
    return optax.adam(learning_rate)


class BoundMinimizerClassifier(MajorityVoteClassifier):
    """Gradient minimization of a PAC-Bayes bound over the posterior
    (:func:`pacbound.solvers.minimize_bound`): ``max_iter`` Adam steps (``learning_rate``) on
    the bound named ``objective`` at ``delta``, over a ``"softmax"`` or ``"quasi_uniform"``
    posterior on ``[H, -H]``. ``delta`` is traced; a new ``learning_rate`` compiles once more.
    (The parameter is not called ``bound``: that is the certificate method of every
    estimator.)"""

    _learner = staticmethod(solvers.minimize_bound)
    _hyperparameters = {"objective": "pac_bound_2"}  # noqa: RUF012
    _options = ("delta", "max_iter", "posterior")
    _extra = {"learning_rate": 0.05}  # noqa: RUF012

    def _solve_options(self, H):
        return {"optimizer": _adam(float(self.learning_rate))}


# ------------------------------------------------------------------------ baselines
class AdaBoostClassifier(_Boosting):
    """Discrete AdaBoost for ``n_rounds`` rounds (:func:`pacbound.solvers.adaboost`); binary
    voters only."""

    _needs_binary_votes = True
    _learner = staticmethod(solvers.adaboost)
    _hyperparameters = {"n_rounds": 100}  # noqa: RUF012


class MDBoostClassifier(MajorityVoteClassifier):
    """MDBoost (roy2016 §6): margin mean against variance, trade-off ``D``
    (:func:`pacbound.solvers.mdboost`)."""

    _learner = staticmethod(solvers.mdboost)
    _hyperparameters = {"D": 10.0}  # noqa: RUF012
    _options = ("tol", "max_columns")


class LPBoostClassifier(MajorityVoteClassifier):
    """LPBoost (roy2016 §6): the L1 soft-margin LP, slack penalty ``C``
    (:func:`pacbound.solvers.lpboost`)."""

    _learner = staticmethod(solvers.lpboost)
    _hyperparameters = {"C": 1.0}  # noqa: RUF012
    _options = ("tol", "max_columns")


class CGBoostClassifier(MajorityVoteClassifier):
    """CG-Boost (roy2016 §6): the L2 soft-margin QP, slack penalty ``C``
    (:func:`pacbound.solvers.cgboost`)."""

    _learner = staticmethod(solvers.cgboost)
    _hyperparameters = {"C": 1.0}  # noqa: RUF012
    _options = ("tol", "max_columns")


ESTIMATORS: dict[str, type[MajorityVoteClassifier]] = {
    "mincq": MinCqClassifier,
    "cqboost": CqBoostClassifier,
    "cbboost": CBBoostClassifier,
    "gbcbboost": GBCBBoostClassifier,
    "klboost": KLBoostClassifier,
    "vebboost": VEBBoostClassifier,
    "bound": BoundMinimizerClassifier,
    "adaboost": AdaBoostClassifier,
    "mdboost": MDBoostClassifier,
    "lpboost": LPBoostClassifier,
    "cgboost": CGBoostClassifier,
}
