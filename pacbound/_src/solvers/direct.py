"""Direct gradient minimization of a PAC-Bayes bound over the posterior, with a certificate.

:func:`minimize_bound` runs any optax optimizer for a fixed number of steps inside one jitted
``lax.scan`` on a bound of the registry (:data:`pacbound.certify.BOUNDS`), seen as a function
of the posterior ``Q`` over the self-complemented set ``[H, -H]`` (the learner protocol,
:mod:`pacbound._src.protocol`):

* ``posterior="softmax"``: ``Q = softmax(ln P + theta)`` over the ``2n`` columns of
  ``[H, -H]`` against a prior ``P`` (uniform by default), with the exact ``KL(Q||P)``;
  ``theta = 0`` (``Q = P``) at the start.
* ``posterior="quasi_uniform"``: ``Q(h_j) = (1/n + w_j) / 2`` and ``Q(-h_j) = (1/n - w_j) / 2``
  with ``w = tanh(theta) / n`` (laviolette2011 §2); the vote is ``H w``. Every bound applies
  with ``KL(Q||P)`` (``<= ln 2`` for the uniform ``P``), and so does the KL-free bound of
  laviolette2011 Thm 2.

The vote is ``H (Q_+ - Q_-)``, so its moments are quadratic in those weights: with ``n <= m``
and the whole sample each step costs ``O(n^2)`` from ``H^T y`` and ``H^T H`` computed once.
The objective is the bound itself (:func:`pacbound._src.certify.bound_value`), estimated on
minibatches when ``batch_size`` is set; where a C-bound form is trivial (exactly 1, gradient 0:
e.g. at the uniform ``Q``) the step follows ``1 + mcallester`` until the bound becomes
informative. Whatever was optimized, ``info.certified`` is :func:`pacbound.certify.certify`'s
value for the returned ``Q`` on the whole sample (float64 at the Python boundary): a bound on
``R(B_Q)`` that holds with probability ``1 - delta`` for every posterior at once, so it is
valid whatever the optimizer did, for the bound, prior and ``delta`` fixed in advance.
Reference: Viallard, Germain, Habrard, Morvant, ECML-PKDD 2021 (direct C-bound minimization).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.typing import ArrayLike

from pacbound._src.certify import Bound, VoteStatistics, as_bound, certify, vote_statistics
from pacbound._src.kl import kl_divergence
from pacbound._src.learning.bound_objective import (
    DEFAULT_OPTIMIZER,
    batch_rows,
    cast_bound,
    check_run,
    objective,
    run_optimizer,
)
from pacbound._src.margins import correctness_votes
from pacbound._src.protocol import LearnerResult, learner_status, votes_matrix
from pacbound._src.validation import (
    check_labels,
    check_sample_weight,
    check_votes,
    float_dtype,
    is_concrete,
)

__all__ = ["DirectInfo", "minimize_bound"]

POSTERIORS = ("softmax", "quasi_uniform", "simplex")


class DirectInfo(NamedTuple):
    """What :func:`minimize_bound` adds to the :class:`LearnerResult`.

    Attributes:
      certified: the bound on ``R(B_Q)`` at the returned ``Q`` on the whole sample
        (:func:`pacbound.certify.certify`; grid bounds at their best ``C`` over the grid).
      c: Catoni's constant of the certificate (grid bounds; ``nan`` otherwise).
      trajectory: ``(max_iter,)`` the bound's value before each step (a batch estimate with
        minibatches).
      kl: ``KL(Q||P)``.
      gibbs_risk: the empirical Gibbs risk at ``Q``.
      majority_vote_risk: the empirical risk of ``B_Q`` (ties are errors).
    """

    certified: jax.Array
    c: jax.Array
    trajectory: jax.Array
    kl: jax.Array
    gibbs_risk: jax.Array
    majority_vote_risk: jax.Array


def _posterior(kind: str, theta: jax.Array, prior: jax.Array):
    """``(q, u, KL)``: the distribution over ``[H, -H]`` (over ``H`` for ``"simplex"``), the
    vote weights on ``H`` (the vote is ``H u``) and ``KL(Q||P)``."""
    n = prior.shape[0] // 2
    if kind == "simplex":
        q = jax.nn.softmax(jnp.log(prior) + theta)
        return q, q, kl_divergence(q, prior)
    if kind == "softmax":
        q = jax.nn.softmax(jnp.log(prior) + theta)
        return q, q[:n] - q[n:], kl_divergence(q, prior)
    w = jnp.tanh(theta) / n
    q = jnp.concatenate([(1.0 / n + w) / 2.0, (1.0 / n - w) / 2.0])
    return q, w, kl_divergence(q, prior)


class _Sample(NamedTuple):
    """The sample as the steps read it: the votes, the labels, the example weights ``v``
    (``sum v = 1`` over the examples kept), their count ``m`` and, for full-sample steps with
    ``n <= m``, the moments' matrices ``a = H^T (v y)`` and ``G = H^T diag(v) H``."""

    H: jax.Array
    y: jax.Array
    v: jax.Array
    m: jax.Array
    a: jax.Array | None
    gram: jax.Array | None


def _statistics(bound: Bound, sample: _Sample, u, kl, key, t, batch_size) -> VoteStatistics:
    if sample.gram is not None:
        zero = jnp.zeros((), u.dtype)
        return VoteStatistics(sample.a @ u, u @ sample.gram @ u, zero, kl, sample.m)
    m = sample.H.shape[0]
    Hb, yb, vb = batch_rows(key, t, m, batch_size, sample.H, sample.y, sample.v)
    return vote_statistics(bound, yb * (Hb @ u), kl, sample.m, vb)


@functools.partial(jax.jit, static_argnames=("posterior", "optimizer", "max_iter", "batch_size"))
def _minimize(bound, H, y, v, prior, delta, key, *, posterior, optimizer, max_iter, batch_size):
    m, n = H.shape
    gram = batch_size is None and bound.name != "general_loss" and n <= m
    count = jnp.sum(v)  # a weight is a repetition: m = sum v (the kept examples for 0/1)
    v = v / jnp.sum(v)
    a, G = (H.T @ (v * y), H.T @ (v[:, None] * H)) if gram else (None, None)
    sample = _Sample(H, y, v, count, a, G)

    def loss_fn(params, t):
        theta, log_c = params
        _, u, kl = _posterior(posterior, theta, prior)
        stats = _statistics(bound, sample, u, kl, key, t, batch_size)
        return objective(bound, stats, delta, log_c)

    params = (
        jnp.zeros(prior.shape[0] if posterior != "quasi_uniform" else n, H.dtype),
        jnp.zeros((), H.dtype),
    )
    (theta, _), trajectory, final = run_optimizer(loss_fn, params, optimizer, max_iter)
    return (*_posterior(posterior, theta, prior), trajectory, final)


# ------------------------------------------------------------------ thin validated boundary
def _prior(prior: ArrayLike | None, columns: int, dtype) -> jax.Array:
    """The prior (uniform by default), checked: ``(columns,)``, positive, summing to 1."""
    prior = jnp.full(columns, 1.0 / columns, dtype) if prior is None else jnp.asarray(prior, dtype)
    if prior.shape != (columns,):
        raise ValueError(f"prior must have shape ({columns},), one mass per posterior voter")
    if is_concrete(prior):
        p = np.asarray(prior, np.float64)
        if not (np.all(p > 0) and abs(p.sum() - 1) < 1e-5):
            raise ValueError("prior must be a distribution with positive masses summing to 1")
    return prior


def _check(H, y, bound: Bound, posterior, delta, max_iter, batch_size, sample_weight) -> None:
    if posterior not in POSTERIORS:
        raise ValueError(f"posterior must be one of {POSTERIORS}; got {posterior!r}")
    check_votes(H)
    m = jnp.shape(H)[0]
    if y is not None:  # None: the correctness votes of a multiclass vote (labels all 1)
        check_labels(y, m)
    check_sample_weight(sample_weight, m)
    check_run(delta, max_iter, batch_size)
    if bound.name == "cbound_quasi_uniform" and (posterior != "quasi_uniform" or m <= 8):
        raise ValueError("cbound_quasi_uniform needs posterior='quasi_uniform' and m > 8")


def minimize_bound(
    voters: ArrayLike,
    y: ArrayLike,
    bound: str | Bound = "pac_bound_2",
    *,
    sample_weight: ArrayLike | None = None,
    posterior: str | None = None,
    optimizer: optax.GradientTransformation | None = None,
    max_iter: int = 1000,
    tol: ArrayLike = 1e-4,
    prior: ArrayLike | None = None,
    delta: ArrayLike = 0.05,
    key: jax.Array | None = None,
    batch_size: int | None = None,
    num_classes: int | None = None,
) -> LearnerResult:
    """Minimize a PAC-Bayes bound over the posterior ``Q`` on ``[H, -H]`` by gradient steps.

    A vote of ``K`` classes (``voters`` of shape ``(m, n, K)`` class probabilities, e.g. trees'
    leaf distributions, or ``(m, n)`` class labels with ``num_classes=K``; ``y`` in
    ``0..K-1``) is learned on its correctness votes
    :func:`~pacbound._src.margins.correctness_votes` ``C`` (``C q = 1 - 2 w``, ``w`` the mass on
    wrong classes) with labels 1, over ``Q`` on the ``n`` voters only (``posterior="simplex"``:
    a label voter's complement is no voter). Every registered margin-moment bound is then a
    bound on the multiclass vote's risk (the vote errs only where ``w >= 1/2``): the C-bound's
    PAC-Bayes forms of Viallard et al. (ECML-PKDD 2021) are ``"pac_bound_1"`` (their Seeger
    form, with ``xi(m)`` for their ``2 sqrt(m)``), ``"cbound_roy2016"`` (the McAllester form)
    and ``"pac_bound_2"`` (the joint form on ``(e, d')``, ``d' = 2 (r - e)``), minimized as in
    that paper by a gradient method on a softmax parametrization (their Adam; here any optax
    optimizer). The certificate is :func:`~pacbound.certify.certify`'s multiclass one.

    Validates its inputs when they are concrete; traceable, so ``jax.vmap`` over ``delta``,
    ``prior``, ``key``, ``sample_weight`` or a :class:`~pacbound.certify.Bound`'s numbers
    compiles once, and ``jax.grad`` of ``.info.certified`` with respect to them differentiates
    through the steps (and the kl-inverse's implicit derivative). One compilation per (bound
    name, shapes, ``optimizer`` object, ``max_iter``, ``batch_size``): reuse the optimizer
    object to reuse it.

    Args:
      voters: the votes ``H`` ``(m, n)`` in ``[-1, 1]``, as the user has them (the learner
        weighs ``[H, -H]``; a :class:`~pacbound.voters.Voters` family is refused).
      y: labels in ``{-1, +1}``, ``(m,)``.
      bound: a name in :data:`pacbound.certify.BOUNDS` or a :class:`~pacbound.certify.Bound`
        (:meth:`~pacbound.certify.Bound.catoni`, :meth:`~pacbound.certify.Bound.general_loss`).
      sample_weight: ``(m,)`` example weights ``>= 0``, read as repetitions (scikit-learn's
        convention): the objective's statistics are weighted means and its ``m`` is
        ``sum v``, so an integer weight ``k`` is ``k`` copies of the example and a 0/1 mask is
        exactly that fold. The certificate (``info``) is on the examples of positive weight,
        each counted once: repeated examples are not independent draws.
      posterior: ``"softmax"`` (the default for ``±1`` votes) or ``"quasi_uniform"`` over
        ``[H, -H]`` (module docstring), or ``"simplex"``: ``Q = softmax(ln P + theta)`` over
        ``H``'s ``n`` columns, no complement (the only one, and the default, for ``K`` classes).
      optimizer: any optax ``GradientTransformation``; default ``optax.adam(0.05)``. Those
        taking extra arguments (``optax.lbfgs``'s line search) get ``value``, ``grad`` and
        ``value_fn``.
      max_iter: the number of optimizer steps (static; all of them run).
      tol: ``converged`` when the last step changed the bound by at most ``tol`` (relative).
      prior: ``P`` over the ``2n`` columns of ``[H, -H]`` (the ``n`` of ``H`` for
        ``"simplex"``), positive; default uniform. Chosen before seeing the sample.
      delta: confidence, in ``(0, 1]``.
      key: PRNG key of the minibatches; default ``jax.random.key(0)``.
      batch_size: estimate the bound on this many examples per step (drawn with replacement);
        ``None`` (default) uses the whole sample. The certificate always uses all of it.
      num_classes: ``K`` for ``(m, n)`` class-label votes (static); ``None`` for ``±1`` votes
        or ``(m, n, K)`` probabilities.

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q`` over ``[H, -H]`` (over ``H`` for
      ``"simplex"``), ``weights``
      the vote's weights on ``H``, ``objective`` the bound at ``q`` (at the optimized ``C``
      for grid bounds), ``steps = max_iter``, ``info`` a :class:`DirectInfo`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = minimize_bound(H, y, "seeger", max_iter=20)
      >>> round(float(r.q.sum()), 4), int(r.steps)  # 4 examples: every bound is vacuous
      (1.0, 20)
      >>> votes = jnp.tile(jnp.array([[0, 0, 1], [1, 2, 1], [2, 2, 0], [0, 1, 0]]), (50, 1))
      >>> labels = jnp.tile(jnp.array([0, 1, 2, 0]), 50)  # 3 classes, m = 200
      >>> r = minimize_bound(votes, labels, "seeger", num_classes=3, max_iter=50)
      >>> r.q.shape, round(float(r.info.majority_vote_risk), 4)  # the vote of 3 label voters
      ((3,), 0.0)
    """
    votes = votes_matrix(voters, "minimize_bound")
    multiclass = num_classes is not None or np.ndim(votes) == 3
    posterior = posterior or ("simplex" if multiclass else "softmax")
    if multiclass and posterior != "simplex":
        raise ValueError(
            f"a vote of K classes weighs its n voters (posterior='simplex'): a label voter's "
            f"complement is no voter, so {posterior!r} does not apply"
        )
    H = correctness_votes(votes, y, num_classes) if multiclass else votes
    dtype = float_dtype(H, y) if not multiclass else H.dtype
    bound = cast_bound(as_bound(bound), dtype)
    _check(
        H, None if multiclass else y, bound, posterior, delta, max_iter, batch_size, sample_weight
    )
    m, n = jnp.shape(H)
    columns = n if posterior == "simplex" else 2 * n
    given_prior, prior = prior, _prior(prior, columns, dtype)
    labels, H = y, jnp.asarray(H, dtype)
    y = jnp.ones(m, dtype) if multiclass else jnp.asarray(y, dtype)
    v = jnp.ones(m, dtype) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    q, u, kl, trajectory, final = _minimize(
        bound, H, y, v, prior, jnp.asarray(delta, dtype),
        jax.random.key(0) if key is None else key, posterior=posterior,
        optimizer=optimizer or DEFAULT_OPTIMIZER, max_iter=max_iter, batch_size=batch_size,
    )  # fmt: skip
    rows = None if sample_weight is None else (v > 0).astype(dtype)
    cert = certify(
        q, votes if multiclass else H, labels if multiclass else y, bounds=[bound], delta=delta,
        prior=given_prior, sample_weight=rows, num_classes=num_classes,
    )  # fmt: skip
    info = DirectInfo(
        cert.bounds[bound.name], cert.c[bound.name], trajectory, kl,
        cert.statistics.gibbs_risk, cert.majority_vote_risk,
    )  # fmt: skip
    converged = jnp.abs(trajectory[-1] - final) <= tol * jnp.abs(final)
    steps, size = jnp.asarray(max_iter, jnp.int32), jnp.int32(q.shape[-1])
    return LearnerResult(q, u, final, steps, learner_status(converged), None, size, info=info)
