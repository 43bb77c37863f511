"""Bounds as objectives of gradient-based minimization: which bound, its statistics, its value.

A :class:`Bound` names a PAC-Bayes bound on the majority-vote risk ``R(B_Q)`` of
:mod:`pacbound.bounds` (static name, traced numbers); :func:`margin_stats` reduces margins to
what the bounds read (moments, mean loss, ``KL``, ``m``); :func:`objective` is the value to
descend (with a ``1 + mcallester`` fallback where a C-bound form is trivially 1) and
:func:`certify` the certificate on the whole sample (the minimum over Catoni's ``C`` grid at
``delta / k`` for the grid bounds). :func:`run_optimizer` runs any optax optimizer on such an
objective in one ``lax.scan``. Shared by :mod:`pacbound.solvers.direct` (finite voters) and
:mod:`pacbound.solvers.gaussian_mixture` (Gaussian mixtures of linear voters).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax import lax
from jax.typing import ArrayLike

from pacbound import bounds
from pacbound.validation import check_delta, check_positive_int

__all__ = [
    "BOUND_NAMES",
    "DEFAULT_OPTIMIZER",
    "GRID_BOUNDS",
    "Bound",
    "BoundStats",
    "as_bound",
    "batch_rows",
    "cast_bound",
    "catoni_bound",
    "certify",
    "check_run",
    "general_loss_bound",
    "margin_stats",
    "objective",
    "run_optimizer",
]


@functools.partial(
    jax.tree_util.register_dataclass, data_fields=["gamma", "c_grid"], meta_fields=["name", "loss"]
)
@dataclasses.dataclass(frozen=True)
class Bound:
    """Which bound to minimize: a pytree whose ``name`` / ``loss`` are static and whose numbers
    (``gamma``, ``c_grid``) are traced, so ``jax.vmap`` sweeps them with one compilation.

    Attributes:
      name: one of :data:`BOUND_NAMES`.
      loss: ``"exponential"`` or ``"quadratic"`` for ``"general_loss"`` (germain2009 §4).
      gamma: the loss's margin scale ``gamma`` (``"general_loss"`` only).
      c_grid: the ``k`` values of Catoni's constant ``C`` (``"catoni"``, ``"general_loss"``).
        By a union bound each grid value gets ``delta / k``: ``C`` is optimized continuously
        (clipped to the grid's range) jointly with ``Q`` at level ``delta / k``, and the
        certificate is the smallest bound over the grid at ``delta / k``.
    """

    name: str
    loss: str = ""
    gamma: jax.Array | None = None
    c_grid: jax.Array | None = None


def catoni_bound(c_grid: ArrayLike | None = None) -> Bound:
    """``2 x`` germain2009 Thm 3.1 on ``R(B_Q)``, ``C`` over ``c_grid`` (default 32 values,
    geometric in ``[1e-2, 1e2]``) by a union bound (``delta / k`` each)."""
    return Bound("catoni", c_grid=_grid(c_grid))


def general_loss_bound(
    loss: str = "exponential", gamma: ArrayLike = 1.0, c_grid: ArrayLike | None = None
) -> Bound:
    """germain2009 Thm 3.2 with the exponential loss ``exp(-M / gamma)`` or the quadratic loss
    ``(M / gamma - 1)^2`` of the margin ``M`` (§4), ``C'`` over ``c_grid`` as in
    :func:`catoni_bound`. germain2009 states it for ``±1`` voters."""
    return Bound("general_loss", loss, jnp.asarray(gamma), _grid(c_grid))


def _grid(c_grid: ArrayLike | None) -> jax.Array:
    return jnp.geomspace(1e-2, 1e2, 32) if c_grid is None else jnp.atleast_1d(c_grid)


class BoundStats(NamedTuple):
    """What the bounds read: margin moments, the mean general loss, ``KL`` and ``m``."""

    mu1: jax.Array
    mu2: jax.Array
    loss: jax.Array
    kl: jax.Array
    m: jax.Array | int

    @property
    def risk(self):  # Gibbs risk (1 - mu1) / 2, clipped against rounding (|vote| <= sum q = 1)
        return jnp.clip((1.0 - self.mu1) / 2.0, 0.0, 1.0)

    @property
    def dis(self):  # disagreement (1 - mu2) / 2, <= 2 risk so the joint error is >= 0
        return jnp.clip((1.0 - self.mu2) / 2.0, 0.0, jnp.minimum(0.5, 2.0 * self.risk))


_LOSSES = {
    "exponential": (lambda margin, g: jnp.exp(-margin / g), bounds.exponential_loss_constants),
    "quadratic": (lambda margin, g: (margin / g - 1.0) ** 2, bounds.quadratic_loss_constants),
}

_VALUES: dict[str, Callable] = {
    "seeger": lambda b, s, dl, c: 2.0 * bounds.seeger(s.risk, s.kl, s.m, dl),
    "pac_bound_0": lambda b, s, dl, c: bounds.pac_bound_0(s.risk, s.kl, s.m, dl),
    "catoni": lambda b, s, dl, c: 2.0 * bounds.catoni(s.risk, s.kl, s.m, dl, c),
    "general_loss": lambda b, s, dl, c: bounds.general_loss(
        s.loss, s.kl, s.m, dl, c, *_LOSSES[b.loss][1](b.gamma)
    ),
    "cbound_roy2016": lambda b, s, dl, c: bounds.cbound_roy2016(s.mu1, s.mu2, s.kl, s.m, dl),
    "pac_bound_1": lambda b, s, dl, c: bounds.pac_bound_1(s.risk, s.dis, s.kl, s.m, dl),
    "pac_bound_2": lambda b, s, dl, c: bounds.pac_bound_2(s.risk, s.dis, s.kl, s.m, dl),
    "cbound_quasi_uniform": lambda b, s, dl, c: bounds.cbound_quasi_uniform(s.mu1, s.mu2, s.m, dl),
}
BOUND_NAMES = tuple(_VALUES)
GRID_BOUNDS = ("catoni", "general_loss")
_CBOUND_FORMS = ("cbound_roy2016", "pac_bound_1", "pac_bound_2", "cbound_quasi_uniform")


def as_bound(bound: str | Bound) -> Bound:
    """A checked :class:`Bound` from a name or a :class:`Bound` (defaults filled in)."""
    out = bound if isinstance(bound, Bound) else Bound(str(bound))
    if out.name not in _VALUES:
        raise ValueError(f"unknown bound {out.name!r}; choose one of {BOUND_NAMES}")
    if out.name == "general_loss" and out.loss == "" and out.gamma is None:
        out = general_loss_bound(c_grid=out.c_grid)
    if out.name in GRID_BOUNDS and out.c_grid is None:
        out = dataclasses.replace(out, c_grid=_grid(None))
    if out.name == "general_loss" and out.loss not in _LOSSES:
        raise ValueError(f"general_loss needs loss in {tuple(_LOSSES)}; got {out.loss!r}")
    return out


def margin_stats(bound: Bound, margins: jax.Array, kl: jax.Array, m) -> BoundStats:
    """Statistics of a bound from margins (of the whole sample or of a batch); ``m`` is the
    size of the whole sample, which the complexity terms use."""
    loss = 0.0
    if bound.name == "general_loss":
        loss = jnp.mean(_LOSSES[bound.loss][0](margins, bound.gamma))
    loss = jnp.asarray(loss, margins.dtype)
    return BoundStats(jnp.mean(margins), jnp.mean(margins**2), loss, kl, m)


def objective(bound: Bound, stats: BoundStats, delta, log_c) -> tuple[jax.Array, jax.Array]:
    """``(surrogate, value)``: the bound (grid bounds at ``C = exp(log_c)`` clipped to the
    grid's range, level ``delta / k``) and the value whose gradient is followed (``1 +
    mcallester`` where a C-bound form is exactly 1, i.e. trivial and flat)."""
    c, level = jnp.nan, delta
    if bound.name in GRID_BOUNDS:
        c = jnp.clip(jnp.exp(log_c), jnp.min(bound.c_grid), jnp.max(bound.c_grid))
        level = delta / bound.c_grid.shape[0]
    value = _VALUES[bound.name](bound, stats, level, c)
    surrogate = value
    if bound.name in _CBOUND_FORMS:
        fallback = 1.0 + bounds.mcallester(stats.risk, stats.kl, stats.m, delta)
        surrogate = jnp.where(value < 1.0, value, fallback)
    return surrogate, value


def certify(bound: Bound, stats: BoundStats, delta) -> tuple[jax.Array, jax.Array]:
    """``(certified bound, C used)``: the bound from whole-sample statistics; for the grid
    bounds the minimum over ``c_grid`` at ``delta / k`` (``C = nan`` for the others)."""
    if bound.name not in GRID_BOUNDS:
        return _VALUES[bound.name](bound, stats, delta, jnp.nan), jnp.asarray(jnp.nan, delta.dtype)
    level = delta / bound.c_grid.shape[0]
    values = jax.vmap(lambda c: _VALUES[bound.name](bound, stats, level, c))(bound.c_grid)
    best = jnp.argmin(values)
    return values[best], bound.c_grid[best]


def run_optimizer(loss_fn: Callable, params, optimizer, steps: int):
    """``steps`` optimizer steps on ``loss_fn(params, t) -> (surrogate, value)`` in one
    ``lax.scan``; returns the final parameters, the ``(steps,)`` values before each step and
    the value at the final parameters (one more pass, whose update is discarded)."""

    def step(carry, t):
        params, state = carry
        (surrogate, value), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, t)
        extra = {}
        if isinstance(optimizer, optax.GradientTransformationExtraArgs):  # e.g. optax.lbfgs
            extra = dict(value=surrogate, grad=grads, value_fn=lambda p: loss_fn(p, t)[0])
        updates, new_state = optimizer.update(grads, state, params, **extra)
        new = (optax.apply_updates(params, updates), new_state)
        return jax.tree.map(lambda a, b: jnp.where(t < steps, a, b), new, carry), value

    init = (params, optimizer.init(params))
    (params, _), values = lax.scan(step, init, jnp.arange(steps + 1))
    return params, values[:steps], values[steps]


def batch_rows(key, t, m: int, batch_size: int | None, *arrays):
    """The rows of ``arrays`` for step ``t``: all of them, or ``batch_size`` drawn uniformly
    with replacement (an unbiased estimate of every mean over the sample)."""
    if batch_size is None:
        return arrays
    idx = jax.random.randint(jax.random.fold_in(key, t), (batch_size,), 0, m)
    return tuple(a[idx] for a in arrays)


def check_run(delta: ArrayLike, steps: int, batch_size: int | None) -> None:
    """The optimizer loop's arguments (shared with :mod:`pacbound.solvers.gaussian_mixture`):
    ``delta`` in ``(0, 1]``, ``steps >= 1`` and ``batch_size`` ``None`` or ``>= 1``."""
    check_delta(delta)
    check_positive_int("steps", steps)
    if batch_size is not None:
        check_positive_int("batch_size", batch_size)


def cast_bound(bound: Bound, dtype) -> Bound:
    """``bound`` with its numbers in the working dtype (no float64 creeping into float32 runs)."""
    return jax.tree.map(lambda x: jnp.asarray(x, dtype), bound)


DEFAULT_OPTIMIZER = optax.adam(0.05)
