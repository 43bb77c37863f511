"""Gaussian-mixture posteriors over linear voters (roy2016 §2-3), learned by gradient.

The voters are weight vectors ``v`` acting on fixed features ``phi(x)`` (the rows of ``Phi``)
and the posterior is the mixture ``Q = sum_i q_i N(w_i, I)`` of isotropic unit Gaussians
(roy2016 Eq. (1)); the prior is ``P = N(w_0, I)`` (``w_0 = 0`` in roy2016). The vote of ``Q``
on ``x`` is ``E_{v~Q} h_v(x) = sum_i q_i E_{v~N(w_i, I)} h_v(x)`` in closed form, with
``<v, phi(x)> ~ N(<w_i, phi(x)>, ||phi(x)||^2)``:

* ``voters="classifier"``, ``h_v(x) = sgn <v, phi(x)>``: ``F(<w_i, phi(x)> / ||phi(x)||)``
  with roy2016's sigmoid ``F(t) = -1 + sqrt(2/pi) int_{-inf}^t e^{-z^2/2} dz = erf(t /
  sqrt 2)``. roy2016 writes ``F(y <w_i, phi(x)>)``, which assumes ``||phi(x)|| = 1``;
  dividing by the norm makes it exact for any features.
* ``voters="linear"``, ``h_v(x) = clip(<v, phi(x)>, -1, 1)``: roy2016's linear functions
  ``<v, phi(x)>`` are unbounded under a Gaussian, so they are not the ``[-1, 1]`` voters that
  its Theorem 2 (and every bound here) assumes; clipped they are, and for ``Z ~ N(a, s^2)``
  ``E clip(Z, -1, 1) = Phi_c(b) - Phi_c(-c) + a (Phi_c(c) - Phi_c(b)) + s (phi(b) - phi(c))``,
  ``b = (-1 - a)/s``, ``c = (1 - a)/s`` (``Phi_c``, ``phi``: the normal cdf and density), which is
  ``clip(a)`` as ``s -> 0``.

Both votes are odd in ``<w, phi>``, so the margin is ``y`` times the vote, and the bounds of
:mod:`pacbound._src.certify` apply with ``KL(Q||P) <= (1/2) sum_i q_i ||w_i - w_0||^2``
(roy2016 §3, Jensen's inequality; every bound increases with KL, so certifying with this upper
bound is valid). Centres and weights (``q = softmax(logits)``) are learned jointly by any optax
optimizer in a jitted ``lax.scan``; the certificate is recomputed on the whole sample.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.scipy.special import erf, ndtr
from jax.typing import ArrayLike

from pacbound._src.certify import Bound, as_bound, certify_margins, vote_statistics
from pacbound._src.kl import gaussian_mixture_kl_bound
from pacbound._src.learning.bound_objective import (
    DEFAULT_OPTIMIZER,
    batch_rows,
    cast_bound,
    check_run,
    objective,
    run_optimizer,
)
from pacbound._src.protocol import Family, LearnerResult, learner_status
from pacbound._src.validation import (
    check_labels,
    check_matrix,
    check_positive_int,
    float_dtype,
    is_concrete,
)

__all__ = ["MixtureInfo", "minimize_mixture_bound", "mixture_predict", "mixture_votes"]

_VOTERS = ("classifier", "linear")


class MixtureInfo(NamedTuple):
    """What :func:`minimize_mixture_bound` adds to the :class:`LearnerResult` (whose ``q`` is
    over the ``n`` components and their complements, the complements' masses 0, and whose
    ``weights`` are the mixture weights ``q_i``).

    Attributes:
      centers: ``(n, N)`` Gaussian centres ``w_i``.
      certified: the bound on ``R(B_Q)`` on the whole sample
        (:func:`pacbound.certify.certify_margins` with the KL upper bound below; a Gaussian
        mixture is not a posterior over a finite voter set, so :func:`pacbound.certify.certify`
        does not apply to it).
      c: Catoni's constant of the certificate (grid bounds; ``nan`` otherwise).
      trajectory: ``(max_iter,)`` bound value before each step (batch estimate with
        minibatches).
      kl: the KL upper bound ``(1/2) sum_i q_i ||w_i - w_0||^2`` used by the certificate.
      gibbs_risk, majority_vote_risk: the empirical Gibbs and majority-vote risks.
    """

    centers: jax.Array
    certified: jax.Array
    c: jax.Array
    trajectory: jax.Array
    kl: jax.Array
    gibbs_risk: jax.Array
    majority_vote_risk: jax.Array


def _expected_votes(centers: jax.Array, Phi: jax.Array, voters: str) -> jax.Array:
    """``(m, n)`` matrix ``E_{v~N(w_i, I)} h_v(x_k)`` (module docstring)."""
    dtype = Phi.dtype
    scale = jnp.sqrt(jnp.maximum(jnp.sum(Phi**2, axis=1), jnp.finfo(dtype).tiny))[:, None]
    a = Phi @ centers.T
    if voters == "classifier":
        return erf(a / (jnp.sqrt(2.0).astype(dtype) * scale))
    lo, hi = (-1.0 - a) / scale, (1.0 - a) / scale
    density = jax.scipy.stats.norm.pdf
    tails = ndtr(-hi) - ndtr(lo)
    return tails + a * (ndtr(hi) - ndtr(lo)) + scale * (density(lo) - density(hi))


@functools.partial(jax.jit, static_argnames="voters")
def mixture_votes(
    centers: ArrayLike, weights: ArrayLike, Phi: ArrayLike, voters: str = "classifier"
) -> jax.Array:
    """The vote ``E_{v~Q} h_v(x) = sum_i q_i E_{v~N(w_i, I)} h_v(x)`` on every row of ``Phi``,
    in ``[-1, 1]`` (roy2016 §2); the margin is ``y`` times it.

    Example:
      >>> import jax.numpy as jnp
      >>> Phi = jnp.array([[1., 0.], [-1., 0.], [0., 0.]])
      >>> [round(float(v), 3) for v in mixture_votes(jnp.array([[5., 0.]]), jnp.ones(1), Phi)]
      [1.0, -1.0, 0.0]
    """
    Phi = jnp.asarray(Phi)
    Phi = Phi.astype(float_dtype(Phi))
    return _expected_votes(jnp.asarray(centers, Phi.dtype), Phi, voters) @ jnp.asarray(weights)


def mixture_predict(
    centers: ArrayLike, weights: ArrayLike, Phi: ArrayLike, voters: str = "classifier"
) -> jax.Array:
    """Labels of the majority vote ``B_Q(x) = sgn E_{v~Q} h_v(x)`` (``+1`` on ties).

    Example:
      >>> import jax.numpy as jnp
      >>> Phi = jnp.array([[1., 0.], [-1., 0.], [0., 0.]])
      >>> mixture_predict(jnp.array([[5., 0.]]), jnp.ones(1), Phi).tolist()  # +1 on the tie
      [1.0, -1.0, 1.0]
    """
    vote = mixture_votes(centers, weights, Phi, voters)
    return jnp.where(vote >= 0, 1.0, -1.0).astype(vote.dtype)


@functools.partial(jax.jit, static_argnames="voters")
def _margins_and_kl(centers, q, prior_center, Phi, y, voters):
    """The margins ``y E_{v~Q} h_v(x)`` and the KL upper bound of roy2016 §3."""
    vote = _expected_votes(centers, Phi, voters) @ q
    return y * vote, gaussian_mixture_kl_bound(q, centers - prior_center)


def _certificate(bound, centers, weights, prior_center, Phi, y, voters, delta):
    """The certificate of the learned mixture, in float64 at the Python boundary."""
    args = (centers, weights, prior_center, Phi, y)
    if not is_concrete(*args, delta):
        margins, kl = _margins_and_kl(*args, voters)
        return certify_margins(margins, kl, bounds=[bound], delta=delta), kl
    with jax.enable_x64(True):
        margins, kl = _margins_and_kl(*(np.asarray(a, np.float64) for a in args), voters)
        return certify_margins(margins, kl, bounds=[bound], delta=delta), np.asarray(kl)


@functools.partial(
    jax.jit, static_argnames=("n_components", "voters", "optimizer", "max_iter", "batch_size")
)
def _minimize(
    bound, Phi, y, prior_center, delta, key, init_scale, *, n_components, voters, optimizer,
    max_iter, batch_size,
):  # fmt: skip
    m, dim = Phi.shape
    init_key, batch_key = jax.random.split(key)
    noise = jax.random.normal(init_key, (n_components, dim), Phi.dtype)
    centers = prior_center + init_scale * noise
    params = (centers, jnp.zeros(n_components, Phi.dtype), jnp.zeros((), Phi.dtype))

    def loss_fn(params, t):
        centers, logits, log_c = params
        Phib, yb = batch_rows(batch_key, t, m, batch_size, Phi, y)
        margins, kl = _margins_and_kl(
            centers, jax.nn.softmax(logits), prior_center, Phib, yb, voters
        )
        return objective(bound, vote_statistics(bound, margins, kl, m), delta, log_c)

    (centers, logits, _), trajectory, final = run_optimizer(loss_fn, params, optimizer, max_iter)
    return centers, jax.nn.softmax(logits), trajectory, final


def minimize_mixture_bound(
    Phi: ArrayLike,
    y: ArrayLike,
    bound: str | Bound = "pac_bound_2",
    n_components: int = 4,
    *,
    voters: str = "classifier",
    optimizer: optax.GradientTransformation | None = None,
    max_iter: int = 1000,
    tol: ArrayLike = 1e-4,
    delta: ArrayLike = 0.05,
    key: jax.Array | None = None,
    prior_center: ArrayLike | None = None,
    init_scale: ArrayLike = 1.0,
    batch_size: int | None = None,
) -> LearnerResult:
    """Learn a Gaussian mixture over linear voters by minimizing a PAC-Bayes bound; certify it.

    The one learner whose voters are not a given ``H``: it learns them (their centres) on the
    features ``Phi``. Same bounds, contract and traceability as
    :func:`pacbound.solvers.minimize_bound` (``jax.vmap`` over ``delta``, ``prior_center``,
    ``key``), except ``"cbound_quasi_uniform"``, which needs a finite self-complemented set.

    Args:
      Phi: features ``phi(x)`` of the sample, ``(m, N)``, finite (append a constant column
        for an offset).
      y: labels in ``{-1, +1}``, ``(m,)``.
      bound: a bound name or a :class:`~pacbound.certify.Bound`.
      n_components: number of Gaussians ``n`` (static).
      voters: ``"classifier"`` (``sgn <v, phi>``) or ``"linear"`` (``clip(<v, phi>, -1, 1)``).
      optimizer: any optax ``GradientTransformation``; default ``optax.adam(0.05)``.
      max_iter: number of steps (static).
      tol: ``converged`` when the last step changed the bound by at most ``tol`` (relative).
      delta: confidence, in ``(0, 1]``.
      key: PRNG key of the initial centres and of the minibatches; default ``key(0)``.
      prior_center: ``w_0`` of the prior ``N(w_0, I)``, ``(N,)``; default 0.
      init_scale: initial centres ``w_0 + init_scale * N(0, I)``.
      batch_size: examples per step for the bound estimate (``None``: all).

    Returns:
      :class:`~pacbound.solvers.LearnerResult` with a :class:`MixtureInfo`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> Phi = jnp.array([[1., 0.5], [1., -0.5], [-1., 0.2], [-1., -0.3]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = minimize_mixture_bound(Phi, y, "seeger", 2, max_iter=20, key=jax.random.key(0))
      >>> round(float(r.weights.sum()), 4), r.info.centers.shape, int(r.steps)
      (1.0, (2, 2), 20)
      >>> float(r.info.majority_vote_risk), 0.0 < float(r.info.certified) <= 1.0
      (0.0, True)
    """
    check_matrix(Phi, "Phi")
    m, dim = jnp.shape(Phi)
    check_labels(y, m)
    dtype = float_dtype(Phi, y)
    bound = cast_bound(as_bound(bound), dtype)
    if bound.name == "cbound_quasi_uniform":
        raise ValueError("cbound_quasi_uniform needs a finite self-complemented voter set")
    if voters not in _VOTERS:
        raise ValueError(f"voters must be one of {_VOTERS}; got {voters!r}")
    check_positive_int("n_components", n_components)
    check_run(delta, max_iter, batch_size)
    prior_center = jnp.zeros(dim, dtype) if prior_center is None else jnp.asarray(prior_center)
    if prior_center.shape != (dim,):
        raise ValueError(f"prior_center must have shape ({dim},); got {prior_center.shape}")
    Phi, y, prior_center = (jnp.asarray(a, dtype) for a in (Phi, y, prior_center))
    centers, weights, trajectory, final = _minimize(
        bound, Phi, y, prior_center, jnp.asarray(delta, dtype),
        jax.random.key(0) if key is None else key,
        jnp.asarray(init_scale, dtype), n_components=n_components, voters=voters,
        optimizer=DEFAULT_OPTIMIZER if optimizer is None else optimizer, max_iter=max_iter,
        batch_size=batch_size,
    )  # fmt: skip
    cert, kl = _certificate(bound, centers, weights, prior_center, Phi, y, voters, delta)
    info = MixtureInfo(
        centers, cert.bounds[bound.name], cert.c[bound.name], trajectory, kl,
        cert.statistics.gibbs_risk, cert.majority_vote_risk,
    )  # fmt: skip
    q = jnp.concatenate([weights, jnp.zeros_like(weights)])
    converged = jnp.abs(trajectory[-1] - final) <= tol * jnp.abs(final)
    steps = jnp.asarray(max_iter, jnp.int32)
    family = jnp.int32(Family.GAUSSIAN_MIXTURE)
    return LearnerResult(q, weights, final, steps, learner_status(converged), None,
                         jnp.int32(q.shape[-1]), family, info)  # fmt: skip
