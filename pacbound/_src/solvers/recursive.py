"""Recursive PAC-Bayes ([WZCS24]) as a learner of a majority vote over finite voters.

The sample is split at random (``key``) into ``T`` chunks of geometric sizes, the paper's
split: ``N_t = floor(m / 2^(T - t))`` examples in ``S_1..S_t`` (``|S_1| = |S_2| = m / 2^(T-1)``,
``|S_T| = m / 2``). ``pi_0`` is uniform over ``[H, -H]``; stage ``t`` learns
``pi_t = softmax(ln pi_{t-1} + theta)`` on ``S_1..S_t`` by ``max_iter`` optimizer steps on
its own bound (the split-kl of :func:`pacbound.bounds.recursive_pac_bayes_bound` with the
statistics of ``S_1..S_t`` and the ``n_t = |S_t..S_T|`` of its certificate, as the authors'
``n_posterior``), then certifies it on ``U_t = S_t..S_T`` (every example for ``t = 1``),
where ``pi_{t-1}``, a function of ``S_1..S_{t-1}``, has seen nothing. The recursion
``B_t = E_t + gamma B_{t-1}`` gives ``info.certified``, a bound on ``R(MV_{pi_T})`` that holds
with probability ``1 - delta``: ``2 B_T`` for the first-order (Gibbs) loss of [WZCS24],
``4 B_T`` for the tandem loss (second order; the theorem in
:mod:`pacbound._src.bounds.recursive`). :func:`pacbound.certify.certify` cannot certify it from
``q`` alone (its prior is data-dependent): the certificate is the learner's.

With votes in ``{-1, +1}`` the Gibbs and tandem losses of ``pi`` at an example are exact
(``p_i = E_pi[1[h errs]]``, ``p_i^2``), and so are the excess loss's rates: with ``a_i`` for
``pi_t`` and ``b_i`` for ``pi_{t-1}`` (``h ~ pi_t``, ``h' ~ pi_{t-1}`` independent),
``P(f >= 0) = 1 - (1 - a) b``, ``P(f >= 1 - gamma) = a``, ``P(f >= 1) = a (1 - b)``.

Differences from the authors' code (github:pyijiezhang/rpb, neural networks): their stage
``t`` trains on ``S_t`` alone (``loadbatches_train``), this one on ``S_1..S_t`` (the paper's
``U_t^train``; both are valid, a posterior may read any data); they minimize a relaxed
``fclassic`` objective, this the bound itself; they sample networks (a second kl-inverse at
``delta_test``), here the expectations over finite voters are exact.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.typing import ArrayLike

from pacbound._src.bounds.recursive import split_kl_values, stage_bounds
from pacbound._src.learning.bound_objective import DEFAULT_OPTIMIZER, check_run, run_optimizer
from pacbound._src.protocol import LearnerResult, learner_status, votes_matrix
from pacbound._src.solvers.direct import _prior
from pacbound._src.validation import (
    check_labels,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
)

__all__ = ["RecursiveInfo", "recursive_pac_bayes"]

LOSSES = ("gibbs", "tandem")


class RecursiveInfo(NamedTuple):
    """What :func:`recursive_pac_bayes` adds to the :class:`LearnerResult`.

    Attributes:
      certified: the bound on ``R(MV)`` of the final posterior, ``min(1, 2 B_T)`` (Gibbs) or
        ``min(1, 4 B_T)`` (tandem), with probability ``1 - delta``.
      stage_bounds: ``(T,)`` ``B_t``, the bound on the loss (Gibbs or tandem) of ``pi_t``.
      excess_bounds: ``(T,)`` ``E_t``, the split-kl bound on stage ``t``'s excess loss
        (``E_1 = B_1``).
      rates: ``(T, 3)`` the certified rates of ``1[f >= 0], 1[f >= 1 - gamma], 1[f >= 1]``.
      kl: ``(T,)`` ``KL(pi_t||pi_{t-1})`` (twice it for the tandem loss).
      n: ``(T,)`` the certificates' sizes ``n_t = |S_t..S_T|``.
      posteriors: ``(T, 2n)`` ``pi_1..pi_T`` (``pi_t`` is stage ``t + 1``'s prior).
      chunks: ``(m,)`` int32, each example's chunk ``0..T-1`` (``-1``: weight 0).
    """

    certified: jax.Array
    stage_bounds: jax.Array
    excess_bounds: jax.Array
    rates: jax.Array
    kl: jax.Array
    n: jax.Array
    posteriors: jax.Array
    chunks: jax.Array


def geometric_chunks(key: jax.Array, kept: jax.Array, stages: int) -> tuple[jax.Array, jax.Array]:
    """``(chunk, ends)``: each example's chunk (``-1`` where not ``kept``) in a uniformly random
    order drawn from ``key``, and ``ends[t] = N_{t+1} = floor(m_kept / 2^(T-t-1))``. The
    ``j``-th kept example draws its uniform from ``fold_in(key, j)``: dropping examples by
    weight 0 gives the chunks that slicing them off would.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> chunk, ends = geometric_chunks(jax.random.key(0), jnp.ones(8, bool), 3)
      >>> ends.tolist(), sorted(chunk.tolist())  # |S_1| = |S_2| = 2, |S_3| = 4
      ([2, 4, 8], [0, 0, 1, 1, 2, 2, 2, 2])
    """
    index = jnp.cumsum(kept) - 1
    uniform = jax.vmap(lambda j: jax.random.uniform(jax.random.fold_in(key, j)))(index)
    draw = jnp.where(kept, uniform, 2.0)
    rank = jnp.argsort(jnp.argsort(draw))
    count = jnp.sum(kept)
    ends = jnp.floor(count * 2.0 ** (np.arange(stages) - stages + 1.0)).astype(jnp.int32)
    chunk = jnp.sum(rank[:, None] >= ends[None, :], axis=1).astype(jnp.int32)
    return jnp.where(kept, chunk, -1), ends


def _rates(errors, q, prior, tandem: bool) -> jax.Array:
    """``(m, 3)`` per example: ``1 - (1 - a) b``, ``a``, ``a (1 - b)``."""
    a, b = errors @ q, errors @ prior
    if tandem:
        a, b = a * a, b * b
    return jnp.stack([1.0 - (1.0 - a) * b, a, a * (1.0 - b)], axis=-1)


def _log_posterior(log_prior, theta):
    return jax.nn.log_softmax(log_prior + theta)


def _kl(log_q, log_p):
    return jnp.maximum(jnp.sum(jnp.exp(log_q) * (log_q - log_p)), 0.0)


@functools.partial(jax.jit, static_argnames=("stages", "tandem", "optimizer", "max_iter"))
def _recursive(errors, v, gamma, delta, key, log_prior, *, stages, tandem, optimizer, max_iter):
    columns = errors.shape[1]
    dtype = errors.dtype
    chunk, ends = geometric_chunks(key, v > 0, stages)
    starts = jnp.concatenate([jnp.zeros(1, jnp.int32), ends[:-1]])
    n_val = (ends[-1] - starts).astype(dtype)
    gammas = jnp.where(jnp.arange(stages) == 0, 0.0, gamma).astype(dtype)
    values = jnp.stack([-gammas, jnp.zeros_like(gammas), 1.0 - gammas, jnp.ones_like(gammas)], 1)
    factor = 2.0 if tandem else 1.0

    def stage(log_prior, s):
        train = (chunk >= 0) & (chunk <= s)
        held = chunk >= s  # U_t = S_t..S_T (every kept example at s = 0; -1 never)
        weights = jnp.where(train, v, 0.0)
        weights = weights / jnp.maximum(jnp.sum(weights), jnp.finfo(dtype).tiny)

        def loss_fn(theta, t):
            log_q = _log_posterior(log_prior, theta)
            rates = weights @ _rates(errors, jnp.exp(log_q), jnp.exp(log_prior), tandem)
            kl = factor * _kl(log_q, log_prior)
            value = split_kl_values(rates, kl, n_val[s], delta, values[s], stages)
            return value, value

        theta, trajectory, _ = run_optimizer(
            loss_fn, jnp.zeros(columns, dtype), optimizer, max_iter
        )
        log_q = _log_posterior(log_prior, theta)
        rows = held.astype(dtype) / jnp.maximum(jnp.sum(held), 1).astype(dtype)
        rates = rows @ _rates(errors, jnp.exp(log_q), jnp.exp(log_prior), tandem)
        kl = factor * _kl(log_q, log_prior)
        return log_q, (log_q, jnp.clip(rates, 0.0, 1.0), kl, trajectory)

    _, (log_qs, rates, kls, trajectories) = jax.lax.scan(stage, log_prior, jnp.arange(stages))
    E, B = stage_bounds(rates, kls, n_val, delta, values, gammas)
    return jnp.exp(log_qs), rates, kls, n_val, E, B, chunk, trajectories


def _check(H, y, gamma, delta, stages, loss, max_iter, sample_weight) -> None:
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}; got {loss!r}")
    check_votes(H, binary=True)
    m = jnp.shape(H)[0]
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    check_run(delta, max_iter, None)
    check_positive_int("n_stages", stages)
    check_scalar("gamma", gamma, 0.0, 1.0)
    if m < 2 ** (stages - 1):
        raise ValueError(f"n_stages={stages} needs m >= 2^(n_stages - 1) = {2 ** (stages - 1)}")


def recursive_pac_bayes(
    voters: ArrayLike,
    y: ArrayLike,
    gamma: ArrayLike = 0.5,
    *,
    sample_weight: ArrayLike | None = None,
    n_stages: int = 4,
    loss: str = "gibbs",
    delta: ArrayLike = 0.05,
    key: jax.Array | None = None,
    max_iter: int = 200,
    optimizer: optax.GradientTransformation | None = None,
    tol: ArrayLike = 1e-4,
    prior: ArrayLike | None = None,
) -> LearnerResult:
    """Recursive PAC-Bayes ([WZCS24]'s recursive procedure) over the voters ``[H, -H]``: ``T``
    priors built recursively over geometric chunks of the sample (module docstring), certified
    by the recursive bound :func:`pacbound.bounds.recursive_pac_bayes_bound` at ``delta``.

    ``loss="gibbs"`` is the paper's first-order form (``R(MV) <= 2 B_T``); ``loss="tandem"``
    the second-order one (``R(MV) <= 4 B_T`` with ``2 KL``, derived in
    :mod:`pacbound._src.bounds.recursive`). Traced: ``gamma``, ``delta``, ``key``,
    ``sample_weight`` (``jax.vmap`` over them compiles once); static: ``n_stages``,
    ``max_iter``, ``optimizer``, ``loss``.

    Args:
      voters: ``H`` ``(m, n)`` votes in ``{-1, +1}`` (the 0-1 loss of each voter; a family is
        refused).
      y: labels in ``{-1, +1}``.
      gamma: ``gamma_t`` of every stage ``t >= 2``, in ``[0, 1]`` (the paper's 1/2).
      sample_weight: ``(m,)`` weights ``>= 0``: the chunks are drawn among the examples of
        positive weight; the stages' objectives weigh them as repetitions; the certificates
        count each once (repeated examples are no independent draws).
      n_stages: ``T`` (static), with ``m >= 2^(T-1)``.
      loss: ``"gibbs"`` or ``"tandem"``.
      delta: the confidence of the whole recursion (``delta / T`` per stage).
      key: PRNG key of the chunks; default ``jax.random.key(0)``. Same key, same chunks, same
        posteriors.
      max_iter: optimizer steps per stage (static; all run).
      optimizer: an optax ``GradientTransformation``; default ``optax.adam(0.05)``.
      tol: ``converged`` when the last stage's last step changed its bound by at most ``tol``
        (relative).
      prior: ``pi_0`` over the ``2n`` columns of ``[H, -H]``, positive, chosen before seeing
        the sample; default uniform.

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q = pi_T`` over ``[H, -H]``, ``objective``
      ``B_T``, ``steps = T max_iter``, ``info`` a ``RecursiveInfo`` (per-stage bounds, rates,
      KLs, sizes, the posteriors ``pi_1..pi_T``, the chunks, ``certified``).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> x = jax.random.uniform(jax.random.key(1), (400,))
      >>> y = jnp.where(x > 0.5, 1.0, -1.0)
      >>> H = jnp.where(x[:, None] > jnp.linspace(0.05, 0.95, 10)[None, :], 1.0, -1.0)
      >>> r = recursive_pac_bayes(H, y, 0.5, n_stages=3, max_iter=50)
      >>> r.info.stage_bounds.shape, bool(r.info.certified < 1.0)
      ((3,), True)
    """
    H = votes_matrix(voters, "recursive_pac_bayes")
    _check(H, y, gamma, delta, n_stages, loss, max_iter, sample_weight)
    dtype = float_dtype(H, y)
    H, y = jnp.asarray(H, dtype), jnp.asarray(y, dtype)
    m, n = H.shape
    errors = (1.0 - y[:, None] * jnp.concatenate([H, -H], axis=1)) / 2.0
    v = jnp.ones(m, dtype) if sample_weight is None else jnp.asarray(sample_weight, dtype)
    log_prior = jnp.log(_prior(prior, 2 * n, dtype))
    qs, rates, kls, n_val, E, B, chunk, trajectories = _recursive(
        errors, v, jnp.asarray(gamma, dtype), jnp.asarray(delta, dtype),
        jax.random.key(0) if key is None else key, log_prior, stages=n_stages,
        tandem=loss == "tandem", optimizer=optimizer or DEFAULT_OPTIMIZER, max_iter=max_iter,
    )  # fmt: skip
    scale = 4.0 if loss == "tandem" else 2.0  # exact
    certified = jnp.minimum(scale * B[-1], 1.0)
    info = RecursiveInfo(certified, B, E, rates, kls, n_val, qs, chunk)
    q = qs[-1]
    last = trajectories[-1]
    converged = jnp.abs(last[-1] - last[-2]) <= tol * jnp.abs(last[-1]) if max_iter > 1 else True
    steps = jnp.asarray(n_stages * max_iter, jnp.int32)
    weights = q[:n] - q[n:]
    status = learner_status(converged)
    return LearnerResult(q, weights, B[-1], steps, status, None, jnp.int32(2 * n), info=info)
