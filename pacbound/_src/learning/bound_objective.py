"""Bounds as objectives of gradient-based minimization, shared by the bound minimizers.

The bounds themselves live in the one registry, :mod:`pacbound._src.certify` (:class:`Bound`,
:func:`~pacbound._src.certify.bound_value`); here: :func:`objective`, the value a minimizer
descends (with a ``1 + mcallester`` fallback where a bound is flat at 1: a trivial C-bound, or a
bound clipped at 1), :func:`run_optimizer`, any optax optimizer on such an objective in one
``lax.scan``, :func:`batch_rows` for minibatches and the boundary checks. Shared by
:mod:`pacbound._src.solvers.direct` (finite voters) and
:mod:`pacbound._src.solvers.gaussian_mixture`
(Gaussian mixtures of linear voters).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax
from jax import lax
from jax.typing import ArrayLike

from pacbound._src import bounds
from pacbound._src.certify import BOUNDS, Bound, VoteStatistics, bound_value
from pacbound._src.validation import check_delta, check_positive_int

__all__ = [
    "DEFAULT_OPTIMIZER",
    "batch_rows",
    "cast_bound",
    "check_run",
    "objective",
    "run_optimizer",
]


def objective(bound: Bound, stats: VoteStatistics, delta, log_c) -> tuple[jax.Array, jax.Array]:
    """``(surrogate, value)``: the bound (:func:`pacbound._src.certify.bound_value`, grid bounds at
    ``C = exp(log_c)`` within the grid's range, level ``delta / k``) and the value whose
    gradient is followed: ``1 + mcallester`` where a bound with a flat region is ``>= 1``
    (a C-bound form is the constant 1 where ``mu1 <= 0``; a bound clipped at 1 is flat above
    it), until the bound becomes informative.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.certify import VoteStatistics, as_bound
      >>> f32 = jnp.float32
      >>> stats = VoteStatistics(f32(-0.1), f32(0.5), 0.0, f32(0.0), f32(100))
      >>> surrogate, value = objective(as_bound("cbound_roy2016"), stats, 0.05, 0.0)  # mu1 <= 0
      >>> float(value), bool(surrogate > 1.0)  # the gradient follows 1 + McAllester instead
      (1.0, True)
    """
    value = bound_value(bound, stats, delta, log_c)
    if not BOUNDS[bound.name].flat:
        return value, value
    fallback = 1.0 + bounds.mcallester(stats.gibbs_risk, stats.kl, stats.m, delta)
    return jnp.where(value < 1.0, value, fallback), value


def run_optimizer(loss_fn: Callable, params, optimizer, steps: int, keep_best: bool = False):
    """``steps`` optimizer steps on ``loss_fn(params, t) -> (surrogate, value)`` in one
    ``lax.scan``; returns the final parameters, the ``(steps,)`` values before each step and
    the value at the final parameters (one more pass, whose update is discarded). With
    ``keep_best`` (static), the parameters of the smallest value met (the final ones included)
    and that value instead of the final ones.

    ``value`` may also be a pair ``(value, aux)``: ``aux`` (any pytree, e.g. the statistics the
    value was computed from) is returned with it, as ``(value, aux)`` at the returned
    parameters, so that nothing needs computing again after the scan (the objective then
    appears once in the compiled program).

    Example:
      >>> import jax.numpy as jnp, optax
      >>> loss = lambda p, t: ((p - 3.0) ** 2, (p - 3.0) ** 2)  # (surrogate, value)
      >>> params, values, final = run_optimizer(loss, jnp.float32(0.0), optax.sgd(0.25), 10)
      >>> round(float(params), 3), values.shape, float(final) < float(values[0])
      (2.997, (10,), True)
      >>> loss = lambda p, t: ((p - 3.0) ** 2, ((p - 3.0) ** 2, p - 3.0))  # (value, aux)
      >>> params, values, (final, gap) = run_optimizer(loss, jnp.float32(0.0), optax.sgd(0.25), 10)
      >>> round(float(gap), 3)
      -0.003
    """
    shapes = jax.eval_shape(loss_fn, params, 0)[1]
    with_aux = isinstance(shapes, tuple)

    def step(carry, t):
        params, state, kept = carry
        (surrogate, out), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, t)
        value = out[0] if with_aux else out
        keep = value < kept[1] if keep_best else t == steps  # the best, or the final pass
        kept = jax.tree.map(lambda a, b: jnp.where(keep, a, b), (params, value, out), kept)
        extra = {}
        if isinstance(optimizer, optax.GradientTransformationExtraArgs):  # e.g. optax.lbfgs
            extra = dict(value=surrogate, grad=grads, value_fn=lambda p: loss_fn(p, t)[0])
        updates, new_state = optimizer.update(grads, state, params, **extra)
        new = (optax.apply_updates(params, updates), new_state)
        new = jax.tree.map(lambda a, b: jnp.where(t < steps, a, b), new, (params, state))
        return (*new, kept), value

    out = jax.tree.map(lambda x: jnp.full(x.shape, jnp.inf, x.dtype), shapes)
    value = out[0] if with_aux else out
    init = (params, optimizer.init(params), (params, value, out))
    (_, _, (kept_params, _, kept_out)), values = lax.scan(step, init, jnp.arange(steps + 1))
    return kept_params, values[:steps], kept_out


def batch_rows(key, t, m: int, batch_size: int | None, *arrays):
    """The rows of ``arrays`` for step ``t``: all of them, or ``batch_size`` drawn uniformly
    with replacement (an unbiased estimate of every mean over the sample).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> x = jnp.arange(6.0)
      >>> key = jax.random.key(0)
      >>> batch_rows(key, 0, 6, None, x)[0].shape, batch_rows(key, 0, 6, 2, x)[0].shape
      ((6,), (2,))
    """
    if batch_size is None:
        return arrays
    idx = jax.random.randint(jax.random.fold_in(key, t), (batch_size,), 0, m)
    return tuple(a[idx] for a in arrays)


def check_run(delta: ArrayLike, max_iter: int, batch_size: int | None) -> None:
    """The optimizer loop's arguments (shared with :mod:`pacbound._src.solvers.gaussian_mixture`):
    ``delta`` in ``(0, 1]``, ``max_iter >= 1`` and ``batch_size`` ``None`` or ``>= 1``.

    Example:
      >>> check_run(0.05, 100, None)
      >>> check_run(0.05, 100, 0)
      Traceback (most recent call last):
      ...
      ValueError: ...
    """
    check_delta(delta)
    check_positive_int("max_iter", max_iter)
    if batch_size is not None:
        check_positive_int("batch_size", batch_size)


def cast_bound(bound: Bound, dtype) -> Bound:
    """``bound`` with its numbers in the working dtype (no float64 creeping into float32 runs).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound._src.certify import as_bound
      >>> b = cast_bound(as_bound("catoni"), jnp.float32)
      >>> b.name, str(b.c_grid.dtype)
      ('catoni', 'float32')
    """
    return jax.tree.map(lambda x: jnp.asarray(x, dtype), bound)


DEFAULT_OPTIMIZER = optax.adam(0.05)
