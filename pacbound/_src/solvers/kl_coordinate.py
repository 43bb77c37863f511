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
(eqs. 11-14), and stop when no weight moved by more than ``epsilon`` (``tol``) in a sweep.

The loss state is ``D = y w.h - gamma`` (quadratic, eqs. 6, 11, 13) or ``log D = -y w.h /
gamma`` (exponential, eqs. 9, 12, 14, kept in logs so small ``gamma`` cannot overflow). It
is recomputed from ``w`` after each sweep (one ``H @ w``), so rounding never accumulates.

Each coordinate step solves ``l(u) + r(u) = 0`` for ``u = n w_j`` in ``[-1, 1]``
(:mod:`pacbound._src.learning.coordinate_step`: a bisection within a few ulps, ``Theta(1)`` once the
sums of eq. 7 / 10 are known).

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

from pacbound._src.bounds import exponential_loss_constants, general_loss, quadratic_loss_constants
from pacbound._src.kl import quasi_uniform_kl
from pacbound._src.learning.coordinate_step import (
    coordinate_minimizer,
    loss_slope,
    loss_slope_coefficients,
)
from pacbound._src.protocol import LearnerResult, learner_status, variant, votes_matrix
from pacbound._src.validation import (
    check_data,
    check_delta,
    check_positive_int,
    check_scalar,
    float_dtype,
    is_concrete,
)

__all__ = [
    "KLCoordinateInfo",
    "example_scales",
    "kl_coordinate_descent",
    "kl_el",
    "kl_ql",
    "pair_order",
    "regularized_objective",
]

LOSSES = ("quadratic", "exponential")
RELAXATIONS = ("kl", "l2", "l1")


class KLCoordinateInfo(NamedTuple):
    """What :func:`kl_coordinate_descent` adds to the :class:`LearnerResult`.

    Attributes:
      objectives: ``(max_iter,)`` ``f`` after each sweep; NaN after the last one.
      bound: germain2009 Theorem 3.2 on the expected loss (hence on ``R(B_Q)``) at
        ``C' = 2 c_a k_bar C`` and the true ``KL(Q||P)``, for the given ``delta``. It holds
        for the ``C`` and ``gamma`` fixed before seeing the sample: selecting them among ``K``
        grid cells by this value costs ``delta / K`` (the union bound).
    """

    objectives: jax.Array
    bound: jax.Array


class _Carry(NamedTuple):
    w: jax.Array  # (n,)
    state: jax.Array  # (m,) D (quadratic) or log D (exponential)
    sweep: jax.Array  # sweeps done
    change: jax.Array  # largest |dw| of the last sweep
    objectives: jax.Array  # (max_iter,)


def pair_order(key: jax.Array | None, sweep: ArrayLike, n: int) -> jax.Array:
    """The order in which sweep ``sweep`` (0-based) visits the ``n`` pairs (Algorithm 1 §4.1:
    "mix at random the n boolean complement pairs"): a permutation drawn from
    ``fold_in(key, sweep)``, or ``0..n-1`` when ``key`` is None.

    Example:
      >>> import jax
      >>> pair_order(None, 0, 4).tolist()
      [0, 1, 2, 3]
      >>> sorted(pair_order(jax.random.key(0), 1, 4).tolist())  # a permutation
      [0, 1, 2, 3]
    """
    if key is None:
        return jnp.arange(n)
    return jax.random.permutation(jax.random.fold_in(key, sweep), n)


def _loss_state(margin, gamma, loss):
    """eq. 6 ``D = M - gamma`` or the log of eq. 9, ``-M / gamma``, from the margins ``M``."""
    return margin - gamma if loss == "quadratic" else -margin / gamma


def example_scales(sample_weight, y):
    """``(s, m)``: the example weights ``s = v`` (all 1 when ``v = sample_weight`` is None)
    and the sample size ``m = sum_i v_i``; the loss term is ``C sum_i s_i zeta_i``. A weight
    is a repetition: ``v_i = k`` counts example ``i`` ``k`` times, in the loss and in ``m``
    (scikit-learn's convention), so ``v = 0`` removes it.

    Example:
      >>> import jax.numpy as jnp
      >>> s, m = example_scales(jnp.array([1., 3., 0., 0.]), jnp.ones(4))
      >>> s.tolist(), float(m)  # example 1 counted three times: a sample of 4
      ([1.0, 3.0, 0.0, 0.0], 4.0)
    """
    if sample_weight is None:
        return jnp.ones_like(y), jnp.asarray(y.shape[0], y.dtype)
    v = jnp.asarray(sample_weight, y.dtype)
    return v, jnp.sum(v)


def _loss_sum(state, gamma, loss, s):
    """``sum_i s_i zeta_i``: ``zeta = (D / gamma)^2`` or ``exp(log D)``."""
    zeta = (state / gamma) ** 2 if loss == "quadratic" else jnp.exp(state)
    return jnp.sum(jnp.where(s > 0, s * zeta, 0))


def _regularizer(w, relaxation):
    n = w.shape[-1]
    if relaxation == "kl":
        return quasi_uniform_kl(w)
    return n * jnp.sum(w**2) if relaxation == "l2" else jnp.sum(jnp.abs(w))


def _sweep(carry, Z, z2, s, order, C, gamma, loss, relaxation):
    """One pass of steps 3-8 over the pairs in ``order``; returns ``(w, state, max |dw|)``."""
    n = Z.shape[0]

    def pair(i, inner):
        w, state, change = inner
        k = order[i]
        z = Z[k]
        coef = loss_slope_coefficients(state, z, z2[k], w[k], C, gamma, n, loss, s)
        slope = functools.partial(loss_slope, coef, n=n, gamma=gamma, loss=loss)
        w_k = coordinate_minimizer(slope, relaxation, w.dtype) / n  # exactly +-1/n at the ends
        step = w_k - w[k]
        state = state + z * step if loss == "quadratic" else state - z * (step / gamma)
        return w.at[k].set(w_k), state, jnp.maximum(change, jnp.abs(step))

    zero = jnp.zeros((), carry.w.dtype)
    return lax.fori_loop(0, n, pair, (carry.w, carry.state, zero))


@functools.partial(jax.jit, static_argnames=("loss", "relaxation", "max_iter", "shuffle"))
def _solve(H, y, C, gamma, key, tol, delta, sample_weight, loss, relaxation, max_iter, shuffle):
    dtype = float_dtype(H, y)  # int8 votes compute in y's float type
    y = y.astype(dtype)
    Z = (y[:, None] * H.astype(dtype)).T  # (n, m): row j is y * h_j
    C, gamma, tol, delta = (jnp.asarray(a, dtype) for a in (C, gamma, tol, delta))
    n, m = Z.shape
    s, m_eff = example_scales(sample_weight, y)
    z2 = Z**2 @ s

    def body(c: _Carry) -> _Carry:
        order = pair_order(key if shuffle else None, c.sweep, n)
        w, _, change = _sweep(c, Z, z2, s, order, C, gamma, loss, relaxation)
        state = _loss_state(w @ Z, gamma, loss)  # refresh: no drift from the updates
        f = C * _loss_sum(state, gamma, loss, s) + _regularizer(w, relaxation)
        return _Carry(w, state, c.sweep + 1, change, c.objectives.at[c.sweep].set(f))

    def cond(c: _Carry):
        return (c.sweep < max_iter) & (c.change > tol)

    w0 = jnp.zeros(n, dtype)
    init = _Carry(w0, _loss_state(jnp.zeros(m, dtype), gamma, loss), jnp.int32(0),
                  jnp.asarray(jnp.inf, dtype), jnp.full(max_iter, jnp.nan, dtype))  # fmt: skip
    c = lax.while_loop(cond, body, init)
    constants = quadratic_loss_constants if loss == "quadratic" else exponential_loss_constants
    c_a, k_bar = constants(gamma)
    mean_loss = _loss_sum(c.state, gamma, loss, s) / m_eff
    bound = general_loss(mean_loss, quasi_uniform_kl(c.w), m_eff, delta, 2 * c_a * k_bar * C,
                         c_a, k_bar)  # fmt: skip
    q = jnp.concatenate([(1.0 / n + c.w) / 2, (1.0 / n - c.w) / 2])
    objective = c.objectives[jnp.maximum(c.sweep - 1, 0)]
    info = KLCoordinateInfo(c.objectives, bound)
    status, size = learner_status(c.change <= tol), jnp.int32(q.shape[-1])
    return LearnerResult(q, c.w, objective, c.sweep, status, None, size, info=info)


def _check(H, y, C, gamma, tol, delta, loss, relaxation, max_iter, sample_weight) -> None:
    """Host-side checks; value checks only on concrete (not traced) arguments."""
    if loss not in LOSSES or relaxation not in RELAXATIONS:
        raise ValueError(f"loss must be one of {LOSSES} and relaxation one of {RELAXATIONS}; "
                         f"got {loss!r}, {relaxation!r}")  # fmt: skip
    check_positive_int("max_iter", max_iter)
    check_data(H, y, sample_weight)
    if loss == "exponential" and is_concrete(H) and not np.isin(np.asarray(H), (-1, 0, 1)).all():
        raise ValueError("the exponential loss (eq. 10) needs votes in {-1, 0, +1}")
    check_scalar("C", C, 0.0, low_open=True)
    check_scalar("gamma", gamma, 0.0, low_open=True)
    check_scalar("tol", tol, 0.0)
    check_delta(delta)


def kl_coordinate_descent(
    voters: ArrayLike,
    y: ArrayLike,
    C: ArrayLike,
    gamma: ArrayLike,
    *,
    loss: str = "quadratic",
    relaxation: str = "kl",
    sample_weight: ArrayLike | None = None,
    key: jax.Array | None = None,
    tol: ArrayLike = 1e-6,
    max_iter: int = 1000,
    delta: ArrayLike = 0.05,
) -> LearnerResult:
    """germain2009 Algorithm 1: minimize ``f(w) = C sum_i zeta_i + KL`` by coordinate descent.

    The voters are the ``n`` columns of ``H`` and their complements (the pairs of §4.1: do
    *not* pass ``[H, -H]``). ``C``, ``gamma``, ``tol`` and ``delta`` are traced, so
    ``jax.vmap`` sweeps them with one compilation (``loss``, ``relaxation``, ``max_iter``
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
      tol: stop after a sweep that moves no weight by more than ``tol`` (absolute, §4.1's
        ``epsilon``; float32 rounding keeps moving weights by up to ~1e-8).
      max_iter: the most sweeps run (static; the length of ``info.objectives``).
      delta: the confidence of the reported bound.
      sample_weight: ``(m,)`` example weights ``v >= 0`` (traced: a ``jax.vmap`` over 0/1 fold
        masks compiles once), read as repetitions (scikit-learn's convention): the loss term
        is ``C sum_i v_i zeta_i`` and the bound is Theorem 3.2 with ``m = sum_i v_i`` and the
        weighted mean loss ``sum_i v_i zeta_i / sum_i v_i``. So an integer weight ``k`` is
        exactly ``k`` copies of the example, and 0/1 weights are exactly slicing ``H`` and
        ``y`` (the bound is then valid for the kept sample). ``C`` weighs one unit of weight:
        scaling every weight by ``a`` is ``C -> a C`` (as scikit-learn's ``SVC`` rescales
        ``C`` per sample). Other than 0/1 weights give a "bound" computed as if the weighted
        sample were drawn, which is no PAC-Bayes guarantee (repeated examples are not
        independent draws).

    Returns:
      :class:`~pacbound.solvers.LearnerResult`: ``q`` the quasi-uniform posterior
      ``((1/n + w) / 2, (1/n - w) / 2)`` over ``[H, -H]``, ``weights = w``, ``objective``
      ``f(w)`` (with the relaxed regularizer for ``l2`` / ``l1``), ``steps`` the sweeps run,
      ``converged`` whether the last sweep moved no weight by more than ``tol``, ``info`` a
      :class:`KLCoordinateInfo` (``objectives`` decreases sweep after sweep).

    Raises:
      ValueError: for malformed ``H`` / ``y``, labels other than ±1 (or a single class), NaN
        votes, non-ternary votes with the exponential loss, or ``C``, ``gamma``, ``tol``,
        ``delta`` out of range (checked when not traced).

    Example:
      >>> import jax, jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> res = kl_coordinate_descent(H, y, 1.0, 0.5, key=jax.random.key(0), max_iter=20)
      >>> float(jnp.mean(jnp.sign(H @ res.weights) != y)), round(float(res.q.sum()), 4)
      (0.0, 1.0)
    """
    H = votes_matrix(voters, "kl_coordinate_descent")
    _check(H, y, C, gamma, tol, delta, loss, relaxation, max_iter, sample_weight)
    shuffle = key is not None
    key = key if shuffle else jax.random.key(0)
    return _solve(jnp.asarray(H), jnp.asarray(y), C, gamma, key, tol, delta, sample_weight,
                  loss, relaxation, int(max_iter), shuffle)  # fmt: skip


_VARIANT_DOC = """{title}:
    :func:`kl_coordinate_descent` with the {loss} loss (germain2009 eq. {eq}):
    ``kl_coordinate_descent(voters, y, C, gamma, loss="{loss}", ...)``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> r = {name}(H, y, 1.0, 0.5, max_iter=20)
      >>> float(jnp.mean(jnp.sign(H @ r.weights) != y)), round(float(r.q.sum()), 4)
      (0.0, 1.0)
    """

# KL-QL and KL-EL: the two losses of germain2009 (eqs. 7 and 10), one docstring between them
kl_ql, kl_el = (
    variant(
        kl_coordinate_descent,
        name,
        _VARIANT_DOC.format(title=title, loss=loss, eq=eq, name=name),
        loss=loss,
    )
    for name, title, loss, eq in (
        ("kl_ql", "KL-QL", "quadratic", 7),
        ("kl_el", "KL-EL", "exponential", 10),
    )
)
__test__ = {"kl_ql": kl_ql.__doc__, "kl_el": kl_el.__doc__}  # partials: doctest finds them here


@functools.partial(jax.jit, static_argnames=("loss", "relaxation"))
def regularized_objective(
    H: ArrayLike,
    y: ArrayLike,
    w: ArrayLike,
    C: ArrayLike,
    gamma: ArrayLike,
    loss: str = "quadratic",
    relaxation: str = "kl",
    sample_weight: ArrayLike | None = None,
) -> jax.Array:
    """``f(w) = C sum_i zeta(y_i w.h(x_i)) + R(w)`` computed directly (germain2009 §4, eq. 17).

    ``R`` is ``KL(Q_w||P)`` (``relaxation="kl"``), ``n ||w||^2`` (``"l2"``) or ``||w||_1``
    (``"l1"``); ``zeta(M) = (M/gamma - 1)^2`` or ``exp(-M/gamma)``; with ``sample_weight``,
    ``zeta_i`` is scaled by ``s_i`` of :func:`example_scales`.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., -1.])
      >>> w = jnp.zeros(3)  # the uniform posterior: KL = 0, every margin 0
      >>> float(regularized_objective(H, y, w, 1.0, 0.5))  # C sum_i (0 / gamma - 1)^2 = 4
      4.0
    """
    w = jnp.asarray(w)
    y = jnp.asarray(y, w.dtype)
    margin = y * (jnp.asarray(H, w.dtype) @ w)
    state = _loss_state(margin, gamma, loss)
    s, _ = example_scales(sample_weight, y)
    return C * _loss_sum(state, gamma, loss, s) + _regularizer(w, relaxation)
