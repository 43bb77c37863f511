"""Certificates of Dirichlet stochastic majority votes over a voter matrix (zantedeschi2021).

A stochastic majority vote over the voters of ``H`` (or of ``[H, -H]``) draws its weights
``theta ~ Dir(alpha)`` for every prediction and predicts ``MV_theta(x) = sign(sum_j theta_j
h_j(x))`` (zantedeschi2021, Section 3); its risk is ``E_{theta ~ Dir(alpha)} R(MV_theta)``.
The bounds of the ``"dirichlet"`` family (:data:`pacbound.certify.STOCHASTIC_BOUNDS`) control
that expected risk from its exact empirical value and ``KL(Dir(alpha) || Dir(beta))``.

* ``vote_weights(errors, alpha)``: per example, the total concentration of the voters that err
  and of those that do not (``[H, -H]`` read implicitly: no ``2n``-column matrix is built).
* ``stochastic_risks(H, y, alpha)``: the exact per-example risk ``I_{1/2}(right, wrong)``.
* ``stochastic_statistics(...)``: the :class:`pacbound._src.certify.StochasticStatistics`.
* ``certify_dirichlet(alpha, H, y, ...)``: every registered stochastic bound, a
  :class:`pacbound.certify.Certificate` (float64 for concrete inputs, like
  :func:`pacbound.certify.certify`).
* ``mean_vote_bound(value)``: ``min(1, 2 value)``, a bound on the *mean* vote's risk.

Votes must be binary (``{-1, +1}``): the vote errs exactly when the weight of the wrong voters
is at least ``1/2``, the event whose probability is the incomplete beta function.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, SupportsFloat, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.certify import (
    DEFAULT_STOCHASTIC_BOUNDS,
    STOCHASTIC_BOUNDS,
    Certificate,
    StochasticStatistics,
    check_certificate_mask,
)
from pacbound._src.dirichlet import check_concentration, dirichlet_kl, voter_errors
from pacbound._src.special import betainc
from pacbound._src.validation import check_delta, check_labels, check_votes, is_concrete

__all__ = [
    "certify_dirichlet",
    "check_alpha",
    "mean_vote_bound",
    "stochastic_risks",
    "stochastic_statistics",
    "vote_weights",
]

# Full-precision products: the default float32 matmul on GPUs rounds its inputs to TF32.
_matmul = functools.partial(jnp.matmul, precision=jax.lax.Precision.HIGHEST)


def vote_weights(errors: jax.Array, alpha: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(wrong, right)``: per example, the total concentration of the erring voters and of the
    others, for ``alpha`` over ``[H, -H]`` (``(..., 2n)``, ``-h_j`` errs where ``h_j`` does not)
    or over ``H``'s columns (``(..., n)``):

    .. math:: b_i = \\sum_j \\alpha_j E_{ij} + \\alpha_{n+j} (1 - E_{ij}), \\qquad
              a_i = \\sum_j \\alpha_j (1 - E_{ij}) + \\alpha_{n+j} E_{ij}.

    Sums of non-negative terms (no cancellation, whatever the concentrations' scale), as full
    float32 products on accelerators (TF32 would round ``alpha`` to 10 bits); leading axes of
    ``alpha`` (Monte Carlo draws) broadcast, giving ``(..., m)``.

    Args:
      errors: ``(m, n)`` 0/1 errors ``1[h_j(x_i) != y_i]`` of the ``n`` voters of ``H``.
      alpha: concentrations (or weights) over ``[H, -H]`` or over ``H``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> from pacbound._src.dirichlet import voter_errors
      >>> wrong, right = vote_weights(voter_errors(H, y), jnp.ones(3))  # alpha over H's columns
      >>> wrong.tolist(), right.tolist()
      ([1.0, 1.0, 2.0, 0.0], [2.0, 2.0, 1.0, 3.0])
      >>> [w.tolist() for w in vote_weights(voter_errors(H, y), jnp.ones(6))]  # over [H, -H]
      [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
    """
    n = errors.shape[1]
    right = 1.0 - errors
    plus, minus = alpha[..., :n], alpha[..., n:]
    if alpha.shape[-1] == n:
        return _matmul(plus, errors.T), _matmul(plus, right.T)
    wrong = _matmul(plus, errors.T) + _matmul(minus, right.T)
    return wrong, _matmul(plus, right.T) + _matmul(minus, errors.T)


def stochastic_risks(H: ArrayLike, y: ArrayLike, alpha: ArrayLike) -> jax.Array:
    """Per-example expected risk ``P_{theta ~ Dir(alpha)}[MV_theta(x_i) != y_i]`` of binary
    votes, zantedeschi2021 Section 3: the erring voters' total weight is
    ``W_i ~ Beta(b_i, a_i)`` (:func:`vote_weights`), so the risk is
    ``P[W_i >= 1/2] = I_{1/2}(a_i, b_i)`` (a tie counts as an error; it has probability 0).

    Args:
      H: ``(m, n)`` votes in ``{-1, +1}``.
      y: ``(m,)`` labels in ``{-1, +1}``.
      alpha: ``(2n,)`` concentrations over ``[H, -H]`` or ``(n,)`` over ``H``'s columns.

    Returns:
      ``(m,)`` risks in ``[0, 1]``, in ``alpha``'s float dtype.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> [round(float(r), 4) for r in stochastic_risks(H, y, jnp.ones(3))]  # I_{1/2}(right, wrong)
      [0.25, 0.25, 0.75, 0.0]
    """
    alpha = jnp.asarray(alpha, jnp.result_type(alpha, float))
    wrong, right = vote_weights(voter_errors(H, y, alpha.dtype), alpha)
    return betainc(right, wrong, jnp.asarray(0.5, alpha.dtype))


def _mean(values: jax.Array, rows: jax.Array | None) -> jax.Array:
    return jnp.mean(values) if rows is None else jnp.sum(rows * values) / jnp.sum(rows)


def stochastic_statistics(
    H: ArrayLike,
    y: ArrayLike,
    alpha: ArrayLike,
    prior: ArrayLike,
    sample_weight: ArrayLike | None = None,
) -> StochasticStatistics:
    """The exact empirical expected risk (weighted mean of :func:`stochastic_risks`), the
    Dirichlet KL (:func:`pacbound.kl.dirichlet_kl`) and ``m`` (the number of examples of
    positive weight), which the ``"dirichlet"`` bounds read; traceable, checks nothing.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> y = jnp.array([1., 1., -1., 1.])
      >>> s = stochastic_statistics(jnp.tile(H, (250, 1)), jnp.tile(y, 250), jnp.ones(3), 1.0)
      >>> round(float(s.risk), 4), float(s.kl), float(s.m)
      (0.3125, 0.0, 1000.0)
    """
    alpha = jnp.asarray(alpha, jnp.result_type(alpha, float))
    rows = None if sample_weight is None else jnp.asarray(sample_weight, alpha.dtype)
    risk = _mean(stochastic_risks(H, y, alpha), rows)
    m = jnp.shape(H)[0] if rows is None else jnp.sum(rows > 0)
    kl = dirichlet_kl(alpha, jnp.asarray(prior, alpha.dtype))
    return StochasticStatistics(risk, kl, jnp.asarray(m, alpha.dtype))


def mean_vote_bound(value: ArrayLike) -> jax.Array:
    """``min(1, 2 value)``: a bound on the risk ``R(B_q)`` of the *mean* vote ``sign(H w)``,
    ``q = E[theta] = alpha / sum(alpha)``, from a bound ``value`` on the stochastic vote's
    expected risk ``E_{theta ~ Dir(alpha)} R(MV_theta)``.

    Proof (binary votes): on an example, the erring weight is ``W ~ Beta(b, a)``; the mean vote
    errs iff ``E[W] = b / (a + b) >= 1/2``, i.e. ``b >= a``, and then
    ``P[W >= 1/2] = 1 - I_{1/2}(b, a) >= 1 - I_{1/2}(a, a) = 1/2`` (``I_x`` decreases in its
    first parameter). So ``1[B_q errs] <= 2 P_theta[MV_theta errs]`` on every example, and in
    expectation over the data distribution. The same factor 2 as ``R(B_Q) <= 2 R(G_Q)``.

    Example:
      >>> round(float(mean_vote_bound(0.3)), 4), float(mean_vote_bound(0.7))
      (0.6, 1.0)
    """
    return jnp.minimum(2.0 * jnp.asarray(value), 1.0)


def check_alpha(alpha: ArrayLike, n: int, name: str = "alpha") -> None:
    """``alpha`` finite, positive concentrations over ``[H, -H]`` (``2n``) or ``H`` (``n``).

    Example:
      >>> import jax.numpy as jnp
      >>> check_alpha(jnp.ones(6), 3)  # over [H, -H] for 3 voters
      >>> check_alpha(jnp.ones(4), 3)
      Traceback (most recent call last):
        ...
      ValueError: alpha has shape (4,); H has 3 voters: give concentrations over the 6 ...
    """
    check_concentration(alpha, name)
    if jnp.shape(alpha) not in ((2 * n,), (n,)):
        raise ValueError(
            f"{name} has shape {jnp.shape(alpha)}; H has {n} voters: give concentrations over "
            f"the {2 * n} columns of [H, -H] or over H's {n}"
        )


def _check(alpha, H, y, prior, delta, sample_weight, names) -> None:
    check_votes(H, binary=True)
    m, n = jnp.shape(H)
    check_labels(y, m)
    check_alpha(alpha, n)
    if prior is not None:
        check_concentration(prior, "prior")
        if jnp.ndim(prior) == 1 and jnp.shape(prior) != jnp.shape(alpha):
            raise ValueError(f"prior must be a scalar or have alpha's shape {jnp.shape(alpha)}")
    check_delta(delta)
    check_certificate_mask(sample_weight, m)
    unknown = [b for b in names if b not in STOCHASTIC_BOUNDS]
    if unknown or len(set(names)) < len(names):
        raise ValueError(
            f"name each bound once, among {tuple(STOCHASTIC_BOUNDS)}; got {tuple(names)}"
        )


@functools.partial(jax.jit, static_argnames="names")
def _certify(alpha, H, y, prior, delta, rows, *, names):
    stats = stochastic_statistics(H, y, alpha, prior, rows)
    valid = jnp.all(jnp.isfinite(alpha) & (alpha > 0)) & jnp.all(prior > 0)

    def values(level):
        out = [STOCHASTIC_BOUNDS[b].value(None, stats, level, jnp.nan) for b in names]
        return jnp.where(valid, jnp.minimum(jnp.stack(out), 1.0), 1.0)

    n = H.shape[1]
    q = alpha / jnp.sum(alpha)
    weights = q[:n] - q[n:] if alpha.shape[0] == 2 * n else q
    errs = (y * (H.astype(alpha.dtype) @ weights) <= 0).astype(alpha.dtype)
    mean_vote_risk = _mean(errs, None if rows is None else (rows > 0).astype(alpha.dtype))
    return values(delta), values(delta / len(names)), stats, mean_vote_risk, valid


def certify_dirichlet(
    alpha: ArrayLike,
    H: ArrayLike,
    y: ArrayLike,
    *,
    prior: ArrayLike | None = None,
    bounds: Sequence[str] | None = None,
    delta: ArrayLike = 0.05,
    sample_weight: ArrayLike | None = None,
) -> Certificate:
    """Every registered stochastic bound on ``E_{theta ~ Dir(alpha)} R(MV_theta)``.

    Each value holds with probability at least ``1 - delta`` over the ``m`` i.i.d. examples,
    for every ``alpha`` at once, provided the prior ``Dir(beta)`` and the voters were fixed
    before seeing the sample (:mod:`pacbound._src.certify`'s conditions). zantedeschi2021: Seeger's
    bound (Maurer's constant ``ln(2 sqrt(m) / delta)``) and McAllester's, with the exact
    empirical risk (:func:`stochastic_risks`) and ``KL(Dir(alpha) || Dir(beta))``; no factor 2.
    The certified object is the *stochastic* vote; :func:`mean_vote_bound` turns a value into
    one for the mean vote ``sign(H (q_+ - q_-))``.

    Args:
      alpha: ``(2n,)`` concentrations over ``[H, -H]`` (the learner's ``info.alpha``) or
        ``(n,)`` over ``H``'s columns; finite and positive.
      H: ``(m, n)`` votes in ``{-1, +1}`` on the sample.
      y: ``(m,)`` labels in ``{-1, +1}``.
      prior: ``beta``, a scalar or ``alpha``'s shape, positive; default 1 on every voter (the
        paper's).
      bounds: names in :data:`pacbound.certify.STOCHASTIC_BOUNDS`; default
        :data:`pacbound.certify.DEFAULT_STOCHASTIC_BOUNDS`.
      delta: confidence in ``(0, 1]``.
      sample_weight: a 0/1 mask of the examples the certificate is on (a fold); default all.

    Returns:
      :class:`pacbound.certify.Certificate`: ``bounds`` (clipped to 1), ``c`` all ``nan``,
      ``best`` (the smallest at ``delta / K``), ``statistics`` a
      :class:`pacbound._src.certify.StochasticStatistics`, ``majority_vote_risk`` the empirical
      risk of the mean vote (a tie is an error), ``delta``, ``valid`` (``alpha`` and the prior
      positive and finite; under ``jit`` an invalid one makes every bound 1). Concrete inputs
      are validated and computed in float64 whatever the precision mode; traced ones in the
      working precision.

    Raises:
      ValueError: non-positive or non-finite concentrations, votes not in ``{-1, +1}``,
        labels outside ``{-1, +1}``, ``delta`` outside ``(0, 1]``, a mask that is not 0/1, or
        an unknown bound.

    Example:
      >>> import jax.numpy as jnp
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)
      >>> cert = certify_dirichlet(jnp.ones(3), H, y)  # Dir(1, 1, 1) over H's voters, m = 1000
      >>> {name: round(float(v), 4) for name, v in sorted(cert.bounds.items())}
      {'dirichlet_mcallester': 0.3723, 'dirichlet_seeger': 0.3695}
      >>> round(float(cert.statistics.risk), 4), float(cert.majority_vote_risk)  # the mean vote's
      (0.3125, 0.25)
    """
    names = tuple(DEFAULT_STOCHASTIC_BOUNDS if bounds is None else bounds)
    prior = jnp.ones((), jnp.result_type(alpha, float)) if prior is None else prior
    if not is_concrete(alpha, H, y, prior, delta, sample_weight):
        dtype = jnp.result_type(alpha, float)
        out = _certify(
            jnp.asarray(alpha, dtype), jnp.asarray(H), jnp.asarray(y, dtype),
            jnp.asarray(prior, dtype), jnp.asarray(delta, dtype),
            None if sample_weight is None else jnp.asarray(sample_weight, dtype), names=names,
        )  # fmt: skip
        return _certificate(names, out, delta)
    _check(alpha, H, y, prior, delta, sample_weight, names)
    with jax.enable_x64(True):
        f64 = functools.partial(np.asarray, dtype=np.float64)
        rows = None if sample_weight is None else f64(sample_weight)
        out = _certify(f64(alpha), f64(H), f64(y), f64(prior), f64(delta), rows, names=names)
        out = jax.tree.map(np.asarray, out)  # NumPy values outlive the x64 context
    return _certificate(names, out, np.float64(cast(SupportsFloat, delta)))


def _certificate(names: tuple[str, ...], out: tuple, delta: Any) -> Certificate:
    values, at_union, stats, mean_vote_risk, valid = out
    best = jnp.argmin(at_union) if not is_concrete(at_union) else int(np.argmin(at_union))
    best_name = names[best] if isinstance(best, int) else best
    return Certificate(
        {b: values[i] for i, b in enumerate(names)},
        {b: cast(jax.Array, np.float64(np.nan)) for b in names},  # no grid constant
        (best_name, at_union[best]),
        stats,
        mean_vote_risk,
        delta,
        valid,
    )
