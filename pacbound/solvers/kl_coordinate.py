"""KL-regularized coordinate descent: germain2009 Algorithm 1 ("f minimization").

On the self-complemented set ``[H, -H]`` of ``2n`` voters, a *quasi-uniform* posterior has
``Q_j + Q_{j+n} = 1/n`` and is given by ``w_j = Q_j - Q_{j+n}`` in ``[-1/n, 1/n]``
(germain2009 §4.1); its vote is ``H @ w``. Algorithm 1 minimizes (§4)

.. math:: f(w) = C \\sum_{i=1}^m \\zeta(y_i\\, w \\cdot h(x_i)) + KL(Q_w \\| P), \\qquad
          C = C' / (2 c_a \\bar k),

with the quadratic loss ``zeta(M) = (M / gamma - 1)^2`` (KL-QL) or the exponential loss
``zeta(M) = exp(-M / gamma)`` (KL-EL), one complement pair at a time: sweep over the pairs in
a random order, move ``w_j`` to the minimizer of ``f`` along that coordinate (eq. 2: the root
of eq. 7 or 10), clip to ``[-1/n, 1/n]`` (steps 5-7), update the loss state in ``Theta(m)``
(eqs. 11-14), and stop when no weight moved by more than ``epsilon`` in a sweep.

The loss state is ``D = y w.h - gamma`` (quadratic, eqs. 6, 11, 13) or ``log D = -y w.h /
gamma`` (exponential, eqs. 9, 12, 14, kept in logs so small ``gamma`` cannot overflow). It
is recomputed from ``w`` after each sweep (one ``H @ w``), so rounding never accumulates.

Each coordinate step solves ``l(u) + r(u) = 0`` for ``u = n w_j`` in ``[-1, 1]``, where ``l``
is the loss's derivative (linear for KL-QL; ``e^{p + ku} - e^{q - ku}`` for KL-EL, so ``H``
must be ``{-1, 0, 1}``-valued) and ``r`` the regularizer's: ``atanh(u)`` for KL (eq. 4),
``2u`` for the l2 relaxation ``n ||w||^2`` (eq. 16) and ``sign(u)`` for the l1 relaxation
``||w||_1`` (eq. 17). ``r`` is infinite at the ends of the box for KL and the exponential
terms can span hundreds of orders of magnitude, so Newton's method may crawl; the root is
found by bisection with ``mantissa + 3`` steps, within a few ulps (absolute in ``u``) for
every input, in ``Theta(1)`` time once the sums of eq. 7 / 10 are known. With KL the root is
strictly inside the box in exact arithmetic, so steps 6-7 fire only by rounding; with the
relaxations they are real.

The reported bound is Theorem 3.2 at ``C' = 2 c_a k_bar C``: it equals a constant plus
``C' / (1 - e^{-C'}) * 2 c_a k_bar / (m C') * f(w)``, so minimizing ``f`` minimizes it.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from pacbound.bounds import exponential_loss_constants, general_loss, quadratic_loss_constants
from pacbound.kl import quasi_uniform_kl
from pacbound.validation import (
    check_delta,
    check_labels,
    check_positive_int,
    check_scalar,
    check_votes,
    float_dtype,
    is_concrete,
)

__all__ = [
    "KLCoordinateResult",
    "kl_coordinate_descent",
    "kl_el",
    "kl_ql",
    "pair_order",
    "regularized_objective",
]

LOSSES = ("quadratic", "exponential")
RELAXATIONS = ("kl", "l2", "l1")


class KLCoordinateResult(NamedTuple):
    """Result of :func:`kl_coordinate_descent`.

    Attributes:
      w: ``(n,)`` weights ``Q_j - Q_{j+n}`` in ``[-1/n, 1/n]``; the vote is ``H @ w``.
      q: ``(2n,)`` the posterior over ``[H, -H]``: ``((1/n + w) / 2, (1/n - w) / 2)``.
      objective: ``f(w)`` (with the relaxed regularizer for ``l2`` / ``l1``).
      objectives: ``(max_sweeps,)`` ``f`` after each sweep; NaN after the last one.
      sweeps: int32 number of sweeps run.
      converged: whether the last sweep moved no weight by more than ``epsilon``.
      bound: germain2009 Theorem 3.2 on the expected loss (hence on ``R(B_Q)``) at
        ``C' = 2 c_a k_bar C`` and the true ``KL(Q||P)``, for the given ``delta``.
    """

    w: jax.Array
    q: jax.Array
    objective: jax.Array
    objectives: jax.Array
    sweeps: jax.Array
    converged: jax.Array
    bound: jax.Array


class _Carry(NamedTuple):
    w: jax.Array  # (n,)
    state: jax.Array  # (m,) D (quadratic) or log D (exponential)
    sweep: jax.Array  # sweeps done
    change: jax.Array  # largest |dw| of the last sweep
    objectives: jax.Array  # (max_sweeps,)


def pair_order(key: jax.Array | None, sweep: ArrayLike, n: int) -> jax.Array:
    """The order in which sweep ``sweep`` (0-based) visits the ``n`` pairs (Algorithm 1 §4.1:
    "mix at random the n boolean complement pairs"): a permutation drawn from
    ``fold_in(key, sweep)``, or ``0..n-1`` when ``key`` is None."""
    if key is None:
        return jnp.arange(n)
    return jax.random.permutation(jax.random.fold_in(key, sweep), n)


def _loss_state(margin, gamma, loss):
    """eq. 6 ``D = M - gamma`` or the log of eq. 9, ``-M / gamma``, from the margins ``M``."""
    return margin - gamma if loss == "quadratic" else -margin / gamma


def _loss_sum(state, gamma, loss):
    """``sum_i zeta_i``: ``(D / gamma)^2`` or ``exp(log D)``."""
    return jnp.sum((state / gamma) ** 2) if loss == "quadratic" else jnp.sum(jnp.exp(state))


def _regularizer(w, relaxation):
    n = w.shape[-1]
    if relaxation == "kl":
        return quasi_uniform_kl(w)
    return n * jnp.sum(w**2) if relaxation == "l2" else jnp.sum(jnp.abs(w))


def _exp_difference(a, b):
    """``e^a - e^b`` without ``inf - inf``: ``+-inf`` on overflow, never NaN."""
    gap = -jnp.expm1(-jnp.abs(a - b))
    return jnp.where(a == b, 0.0, jnp.sign(a - b) * jnp.exp(jnp.maximum(a, b)) * gap)


def _loss_slope_coefficients(state, z, z2, w_k, C, gamma, n, loss):
    """The coefficients of ``l(u) = d/dv [C sum_i zeta_i]`` at ``w_k = v = u / n``.

    Quadratic (eq. 7): ``c0 + c1 u`` with ``c0 = 2C/gamma^2 (sum D z - w_k sum z^2)``,
    ``c1 = 2C/gamma^2 sum z^2 / n``. Exponential (eq. 10): ``e^{c0 + k u} - e^{c1 - k u}``
    with ``k = 1/(n gamma)``, ``c0 = ln(C/gamma) + ln sum_{z<0} D - w_k / gamma`` and
    ``c1 = ln(C/gamma) + ln sum_{z>0} D + w_k / gamma`` (``z = y h`` in ``{-1, 0, 1}``).
    """
    if loss == "quadratic":
        scale = 2.0 * C / gamma**2
        return scale * (jnp.dot(state, z) - w_k * z2), scale * z2 / n
    top = jnp.max(state)
    d = jnp.exp(state - top)
    base = jnp.log(C / gamma) + top
    wrong, right = jnp.sum(jnp.where(z < 0, d, 0.0)), jnp.sum(jnp.where(z > 0, d, 0.0))
    return base + jnp.log(wrong) - w_k / gamma, base + jnp.log(right) + w_k / gamma


def _loss_slope(coef, u, n, gamma, loss):
    c0, c1 = coef
    if loss == "quadratic":
        return c0 + c1 * u
    k = 1.0 / (n * gamma)
    return _exp_difference(c0 + k * u, c1 - k * u)


def _bisect(g, lo, hi, steps):
    """Root of the increasing ``g`` on ``[lo, hi]``, clipped to the ends (steps 6-7)."""

    def step(_, bracket):
        a, b = bracket
        mid = a + (b - a) / 2
        up = g(mid) > 0
        return jnp.where(up, a, mid), jnp.where(up, mid, b)

    a, b = lax.fori_loop(0, steps, step, (lo, hi))
    root = a + (b - a) / 2
    return jnp.where(g(hi) <= 0, hi, jnp.where(g(lo) >= 0, lo, root))


def _coordinate_minimizer(slope, relaxation, dtype):
    """``u`` in ``[-1, 1]`` minimizing the 1-D objective whose loss derivative is ``slope``."""
    steps = jnp.finfo(dtype).nmant + 3
    one = jnp.ones((), dtype)
    if relaxation == "kl":  # eq. 4: dKL/dv = (1/2) ln((1 + u) / (1 - u)) = atanh(u)
        return _bisect(lambda u: slope(u) + jnp.arctanh(u), -one, one, steps)
    if relaxation == "l2":  # d/dv n v^2 = 2 u
        return _bisect(lambda u: slope(u) + 2.0 * u, -one, one, steps)
    # l1: d/dv |v| = sign(u), [-1, 1] at 0; so u = 0 when |slope(0)| <= 1, else u < 0 solves
    # slope(u) - 1 = 0 (slope(0) > 1) and u > 0 solves slope(u) + 1 = 0 (slope(0) < -1)
    at_zero = slope(0.0 * one)
    negative = at_zero > 0
    lo = jnp.where(negative, -one, 0.0 * one)
    u = _bisect(lambda u: slope(u) + jnp.where(negative, -one, one), lo, lo + 1.0, steps)
    return jnp.where(jnp.abs(at_zero) <= 1.0, 0.0 * one, u)


def _sweep(carry, Z, z2, order, C, gamma, loss, relaxation):
    """One pass of steps 3-8 over the pairs in ``order``; returns ``(w, state, max |dw|)``."""
    n = Z.shape[0]

    def pair(i, inner):
        w, state, change = inner
        k = order[i]
        z = Z[k]
        coef = _loss_slope_coefficients(state, z, z2[k], w[k], C, gamma, n, loss)
        slope = functools.partial(_loss_slope, coef, n=n, gamma=gamma, loss=loss)
        w_k = _coordinate_minimizer(slope, relaxation, w.dtype) / n  # exactly +-1/n at the ends
        step = w_k - w[k]
        state = state + z * step if loss == "quadratic" else state - z * (step / gamma)
        return w.at[k].set(w_k), state, jnp.maximum(change, jnp.abs(step))

    zero = jnp.zeros((), carry.w.dtype)
    return lax.fori_loop(0, n, pair, (carry.w, carry.state, zero))


@functools.partial(jax.jit, static_argnames=("loss", "relaxation", "max_sweeps", "shuffle"))
def _solve(H, y, C, gamma, key, epsilon, delta, loss, relaxation, max_sweeps, shuffle):
    dtype = float_dtype(H, y)  # int8 votes compute in y's float type
    y = y.astype(dtype)
    Z = (y[:, None] * H.astype(dtype)).T  # (n, m): row j is y * h_j
    C, gamma, epsilon, delta = (jnp.asarray(a, dtype) for a in (C, gamma, epsilon, delta))
    n, m = Z.shape
    z2 = jnp.sum(Z**2, axis=1)

    def body(c: _Carry) -> _Carry:
        order = pair_order(key if shuffle else None, c.sweep, n)
        w, _, change = _sweep(c, Z, z2, order, C, gamma, loss, relaxation)
        state = _loss_state(w @ Z, gamma, loss)  # refresh: no drift from the updates
        f = C * _loss_sum(state, gamma, loss) + _regularizer(w, relaxation)
        return _Carry(w, state, c.sweep + 1, change, c.objectives.at[c.sweep].set(f))

    def cond(c: _Carry):
        return (c.sweep < max_sweeps) & (c.change > epsilon)

    w0 = jnp.zeros(n, dtype)
    init = _Carry(w0, _loss_state(jnp.zeros(m, dtype), gamma, loss), jnp.int32(0),
                  jnp.asarray(jnp.inf, dtype), jnp.full(max_sweeps, jnp.nan, dtype))  # fmt: skip
    c = lax.while_loop(cond, body, init)
    constants = quadratic_loss_constants if loss == "quadratic" else exponential_loss_constants
    c_a, k_bar = constants(gamma)
    mean_loss = _loss_sum(c.state, gamma, loss) / m
    bound = general_loss(mean_loss, quasi_uniform_kl(c.w), m, delta, 2 * c_a * k_bar * C, c_a,
                         k_bar)  # fmt: skip
    q = jnp.concatenate([(1.0 / n + c.w) / 2, (1.0 / n - c.w) / 2])
    objective = c.objectives[jnp.maximum(c.sweep - 1, 0)]
    return KLCoordinateResult(c.w, q, objective, c.objectives, c.sweep, c.change <= epsilon, bound)


def _check(H, y, C, gamma, epsilon, delta, loss, relaxation, max_sweeps) -> None:
    """Host-side checks; value checks only on concrete (not traced) arguments."""
    if loss not in LOSSES or relaxation not in RELAXATIONS:
        raise ValueError(f"loss must be one of {LOSSES} and relaxation one of {RELAXATIONS}; "
                         f"got {loss!r}, {relaxation!r}")  # fmt: skip
    check_positive_int("max_sweeps", max_sweeps)
    check_votes(H)
    check_labels(y, jnp.shape(H)[0])
    if loss == "exponential" and is_concrete(H) and not np.isin(np.asarray(H), (-1, 0, 1)).all():
        raise ValueError("the exponential loss (eq. 10) needs votes in {-1, 0, +1}")
    check_scalar("C", C, 0.0, low_open=True)
    check_scalar("gamma", gamma, 0.0, low_open=True)
    check_scalar("epsilon", epsilon, 0.0)
    check_delta(delta)


def kl_coordinate_descent(
    H: ArrayLike,
    y: ArrayLike,
    C: ArrayLike,
    gamma: ArrayLike,
    *,
    loss: str = "quadratic",
    relaxation: str = "kl",
    key: jax.Array | None = None,
    epsilon: ArrayLike = 1e-6,
    max_sweeps: int = 1000,
    delta: ArrayLike = 0.05,
) -> KLCoordinateResult:
    """germain2009 Algorithm 1: minimize ``f(w) = C sum_i zeta_i + KL`` by coordinate descent.

    The voters are the ``n`` columns of ``H`` and their complements (the pairs of §4.1: do
    *not* pass ``[H, -H]``). ``C``, ``gamma``, ``epsilon`` and ``delta`` are traced, so
    ``jax.vmap`` sweeps them with one compilation (``loss``, ``relaxation``, ``max_sweeps``
    are static).

    Args:
      H: votes ``(m, n)`` in ``[-1, 1]``; in ``{-1, 0, 1}`` for the exponential loss.
      y: labels in ``{-1, +1}``, ``(m,)``; the computation runs in their float dtype (or
        ``H``'s, if wider and floating).
      C: the weight of the empirical loss (``C = C' / (2 c_a k_bar)``), ``> 0``.
      gamma: the loss's margin scale, ``> 0``.
      loss: ``"quadratic"`` (KL-QL, eq. 7) or ``"exponential"`` (KL-EL, eq. 10).
      relaxation: ``"kl"`` (Algorithm 1), ``"l2"`` (``n ||w||^2``, eq. 16) or ``"l1"``
        (``||w||_1``) in place of KL, under the box ``|w_j| <= 1/n``. Both bound KL from
        above with the same ``C``; eq. 17 divides by ``n``, so its ``C''`` is ``C / n``.
      key: a ``jax.random`` key for the order of the pairs in each sweep
        (:func:`pair_order`); ``None`` visits them in index order.
      epsilon: stop after a sweep that moves no weight by more than ``epsilon`` (absolute, as
        in §4.1; float32 rounding keeps moving weights by up to ~1e-8).
      max_sweeps: the most sweeps run (static; the length of ``objectives``).
      delta: the confidence of the reported bound.

    Returns:
      :class:`KLCoordinateResult`; ``objectives`` decreases sweep after sweep.

    Raises:
      ValueError: for malformed ``H`` / ``y``, labels other than ±1 (or a single class), NaN
        votes, non-ternary votes with the exponential loss, or ``C``, ``gamma``, ``epsilon``,
        ``delta`` out of range (checked when not traced).

    Example:
      >>> H = voters.votes(voters.fit_stumps(X), X)  # doctest: +SKIP
      >>> res = kl_coordinate_descent(H, y, 1.0, 0.1, key=jax.random.key(0))  # doctest: +SKIP
    """
    _check(H, y, C, gamma, epsilon, delta, loss, relaxation, max_sweeps)
    shuffle = key is not None
    key = key if shuffle else jax.random.key(0)
    return _solve(jnp.asarray(H), jnp.asarray(y), C, gamma, key, epsilon, delta, loss,
                  relaxation, int(max_sweeps), shuffle)  # fmt: skip


kl_ql = functools.partial(kl_coordinate_descent, loss="quadratic")
kl_ql.__doc__ = "KL-QL: :func:`kl_coordinate_descent` with the quadratic loss (germain2009 eq. 7)."
kl_el = functools.partial(kl_coordinate_descent, loss="exponential")
kl_el.__doc__ = "KL-EL: :func:`kl_coordinate_descent` with the exponential loss (eq. 10)."


@functools.partial(jax.jit, static_argnames=("loss", "relaxation"))
def regularized_objective(
    H: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    C: ArrayLike,
    gamma: ArrayLike,
    loss: str = "quadratic",
    relaxation: str = "kl",
) -> jax.Array:
    """``f(w) = C sum_i zeta(y_i w.h(x_i)) + R(w)`` computed directly (germain2009 §4, eq. 17).

    ``R`` is ``KL(Q_w||P)`` (``relaxation="kl"``), ``n ||w||^2`` (``"l2"``) or ``||w||_1``
    (``"l1"``); ``zeta(M) = (M/gamma - 1)^2`` or ``exp(-M/gamma)``.
    """
    w = jnp.asarray(w)
    margin = jnp.asarray(y, w.dtype) * (jnp.asarray(H, w.dtype) @ w)
    state = _loss_state(margin, gamma, loss)
    return C * _loss_sum(state, gamma, loss) + _regularizer(w, relaxation)
