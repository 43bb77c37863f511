"""Second-order bounds with PAC-Bayes-kl: first-order, TND (kl and lambda forms), DIS, CCTND.

The tandem loss of a pair of voters, ``1[h errs] 1[h' errs]``, has the ``rho^2``-average
``E_{rho^2}[L(h, h')] = E_D[W^2]``, ``W = E_rho[1[h errs]]``, and the majority vote errs only
where ``W >= 1/2``: Markov's inequality on ``W^2`` gives the second-order oracle bound
``L(MV) <= 4 E_{rho^2}[L(h, h')]`` ([MLIS20]), Cantelli's on ``(W - mu)^2`` the parametric
one of [WMLIS21]; PAC-Bayes-kl (Seeger 2002, Maurer 2004) over ``rho^2`` (with
``KL(rho^2||pi^2) = 2 KL(rho||pi)``) turns them into empirical bounds.

Sources: [MLIS20] Masegosa, Lorenzen, Igel, Seldin, "Second order PAC-Bayesian bounds for the
weighted majority vote", NeurIPS 2020 (arXiv 2007.13532); [WMLIS21] Wu, Masegosa, Lorenzen,
Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett inequality for the weighted majority
vote", NeurIPS 2021 (arXiv 2106.13624); Thiemann, Igel, Wintenberger, Seldin, "A strongly
quasiconvex PAC-Bayesian bound", ALT 2017 (PAC-Bayes-lambda).

Functions: ``first_order_kl``; ``tnd_kl``, ``tnd_lambda``, ``tnd_optimal_lambda``,
``tnd_lambda_optimal``; ``dis``; ``cctnd``, ``cctnd_optimal_mu``, ``cctnd_optimal``. Conventions
(sizes, ``kl``, clipping) in :mod:`pacbound._src.bounds.second_order`.

Certified values (:mod:`pacbound._src.bounds.second_order.common`): each bound is a float ``>=``
the exact value of its formula for the given floats. The kl forms round their levels up
(``common.kl_level``) before the certified kl-inverses (``kl_inv_upper`` from above,
``kl_inv_lower`` from below, as the bound decreases in the latter); the multiplications by 2
and 4 are exact; DIS rounds its difference up, CCTND its numerator (terms of both signs:
``common.sum_up``) and the Chebyshev-Cantelli quotient; the lambda form counts its 14.2
roundings. ``lam`` and ``mu`` are exact as given: the bounds hold for every value of them, so
the optimized forms are certified at the float the optimizer returns.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound._src.bounds.first_order import seeger
from pacbound._src.bounds.second_order.common import (
    as_floats,
    chebyshev_cantelli,
    clip_unit,
    kl_level,
    maurer_term,
    sum_up,
)
from pacbound._src.kl import kl_inv_lower, kl_inv_upper, round_up
from pacbound._src.validation import (
    BELOW_HALF,
    CONFIDENCE,
    NONNEGATIVE,
    SIZE,
    UNIT,
    Domain,
    domains,
)

__all__ = [
    "cctnd",
    "cctnd_optimal",
    "cctnd_optimal_mu",
    "dis",
    "first_order_kl",
    "tnd_kl",
    "tnd_lambda",
    "tnd_lambda_optimal",
    "tnd_optimal_lambda",
]


@domains(gibbs_risk=UNIT, kl=NONNEGATIVE, n=SIZE, delta=CONFIDENCE)
def first_order_kl(
    gibbs_risk: ArrayLike, kl: ArrayLike, n: ArrayLike, delta: ArrayLike, clip: bool = True
) -> jax.Array:
    """First-order bound ``L(MV) <= 2 E_rho[L(h)]`` with PAC-Bayes-kl ([MLIS20] Sec. 2, the
    first-order oracle bound; Seeger 2002, Maurer 2004):

    .. math:: L(MV_\\rho) \\le \\min\\big(1,\\ 2\\,kl^{-1}_{up}\\big(\\hat L(\\rho),
              \\frac{KL(\\rho\\|\\pi) + \\ln(2\\sqrt n/\\delta)}{n}\\big)\\big).

    Args:
      gibbs_risk: ``E_rho[L_hat(h)]``.
      kl: ``KL(rho||pi)``.
      n: sample size of the Gibbs risk.
      delta: confidence.
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value.

    Example:
      >>> round(float(first_order_kl(0.2, 1.0, 1000, 0.05)), 4)  # Gibbs risk 0.2, KL 1
      0.5083
    """
    gibbs_risk, kl, delta = as_floats(gibbs_risk, kl, delta)
    return clip_unit(2.0 * seeger(gibbs_risk, kl, jnp.asarray(n, kl.dtype), delta), clip)


@domains(tandem_risk=UNIT, kl=NONNEGATIVE, n2=SIZE, delta=CONFIDENCE)
def tnd_kl(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike, clip: bool = True
) -> jax.Array:
    """TND bound, kl form ([MLIS20], second-order oracle bound ``L(MV) <= 4 E_{rho^2}[L(h,
    h')]`` with PAC-Bayes-kl on the tandem loss over ``rho^2``):

    .. math:: L(MV_\\rho) \\le \\min\\big(1,\\ 4\\,kl^{-1}_{up}\\big(\\hat T(\\rho),
              \\frac{2 KL(\\rho\\|\\pi) + \\ln(2\\sqrt{n_2}/\\delta)}{n_2}\\big)\\big).

    Args:
      tandem_risk: ``E_{rho^2}[L_hat(h, h')]``.
      kl: ``KL(rho||pi)``.
      n2: sample size of the tandem losses.
      delta: confidence.
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value.

    Example:
      >>> round(float(tnd_kl(0.05, 1.0, 1000, 0.05)), 4)  # tandem risk 0.05
      0.3401
    """
    tandem_risk, kl, delta = as_floats(tandem_risk, kl, delta)
    eps = kl_level(2.0 * kl, jnp.asarray(n2, kl.dtype), delta, 2.0)
    return clip_unit(4.0 * kl_inv_upper(tandem_risk, eps), clip)


@domains(
    tandem_risk=UNIT,
    kl=NONNEGATIVE,
    n2=SIZE,
    delta=CONFIDENCE,
    lam=Domain(0.0, 2.0, low_open=True, high_open=True),
)
def tnd_lambda(
    tandem_risk: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    lam: ArrayLike,
    clip: bool = True,
) -> jax.Array:
    """TND bound, lambda form ([MLIS20], PAC-Bayes-lambda of Thiemann et al. 2017 on the tandem
    loss), for every ``lam`` in ``(0, 2)`` simultaneously (so ``lam`` may depend on the data):

    .. math:: L(MV_\\rho) \\le \\min\\Big(1,\\ 4\\Big[\\frac{\\hat T(\\rho)}{1 - \\lambda/2} +
              \\frac{2 KL(\\rho\\|\\pi) + \\ln(2\\sqrt{n_2}/\\delta)}
              {\\lambda (1 - \\lambda/2) n_2}\\Big]\\Big).

    A relaxation of ``tnd_kl`` (never below it). Rounded up by its roundings: ``1 - lam/2`` 1 u,
    the risk term 2 u; the complexity's numerator 8.2 u (the log term 7.2, the sum), its
    denominator 4 u (``n2`` included), the quotient 1 u; the sum 1 u: 14.2 u.

    Example:
      >>> b = tnd_lambda(0.05, 1.0, 1000, 0.05, 0.5)
      >>> round(float(b), 4), bool(b >= tnd_kl(0.05, 1.0, 1000, 0.05))
      (0.3642, True)
    """
    tandem_risk, kl, delta, lam = as_floats(tandem_risk, kl, delta, lam)
    n2 = jnp.asarray(n2, kl.dtype)
    scale = 1.0 - lam / 2.0
    complexity = (2.0 * jnp.maximum(kl, 0.0) + maurer_term(n2, delta, 2.0)) / (lam * scale * n2)
    value = jnp.maximum(tandem_risk, 0.0) / scale + complexity
    return clip_unit(round_up(4.0 * value, 14.2), clip)


@domains(tandem_risk=UNIT, kl=NONNEGATIVE, n2=SIZE, delta=CONFIDENCE)
def tnd_optimal_lambda(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """The ``lam`` minimizing ``tnd_lambda`` ([MLIS20]; Thiemann et al. 2017):

    .. math:: \\lambda^* = \\frac{2}{\\sqrt{2 n_2 \\hat T(\\rho) / (2KL + \\ln(2\\sqrt{n_2}/
              \\delta)) + 1} + 1} \\in (0, 1].

    Example:
      >>> round(float(tnd_optimal_lambda(0.05, 1.0, 1000, 0.05)), 4)
      0.4489
    """
    tandem_risk, kl, delta = as_floats(tandem_risk, kl, delta)
    n2 = jnp.asarray(n2, kl.dtype)
    complexity = 2.0 * kl + maurer_term(n2, delta, 2.0)
    return 2.0 / (jnp.sqrt(2.0 * n2 * tandem_risk / complexity + 1.0) + 1.0)


@domains(tandem_risk=UNIT, kl=NONNEGATIVE, n2=SIZE, delta=CONFIDENCE)
def tnd_lambda_optimal(
    tandem_risk: ArrayLike, kl: ArrayLike, n2: ArrayLike, delta: ArrayLike, clip: bool = True
) -> jax.Array:
    """``tnd_lambda`` at ``tnd_optimal_lambda``; its gradient is the envelope theorem's (the
    bound's partial derivatives at the optimal ``lam``, held fixed).

    Example:
      >>> b = tnd_lambda_optimal(0.05, 1.0, 1000, 0.05)
      >>> round(float(b), 4), bool(b <= tnd_lambda(0.05, 1.0, 1000, 0.05, 0.5))
      (0.3629, True)
    """
    lam = lax.stop_gradient(tnd_optimal_lambda(tandem_risk, kl, n2, delta))
    return tnd_lambda(tandem_risk, kl, n2, delta, lam, clip)


@domains(gibbs_risk=UNIT, disagreement=UNIT, kl=NONNEGATIVE, n=SIZE, m=SIZE, delta=CONFIDENCE)
def dis(
    gibbs_risk: ArrayLike,
    disagreement: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    m: ArrayLike,
    delta: ArrayLike,
    clip: bool = True,
) -> jax.Array:
    """DIS bound for **binary** classification ([MLIS20]: ``E_{rho^2}[L(h, h')] = E_rho[L(h)] -
    E_{rho^2}[D(h, h')] / 2``), with the disagreement estimated on ``m`` (possibly unlabeled)
    examples; ``delta`` split in two (``ln(4 sqrt(.) / delta)``):

    .. math:: L(MV_\\rho) \\le 4\\,kl^{-1}_{up}\\big(\\hat L(\\rho), \\frac{KL + \\ln(4\\sqrt n/
              \\delta)}{n}\\big) - 2\\,kl^{-1}_{low}\\big(\\hat D(\\rho), \\frac{2KL +
              \\ln(4\\sqrt m/\\delta)}{m}\\big),

    clipped to ``[0, 1]``.

    Args:
      gibbs_risk: ``E_rho[L_hat(h)]`` on ``n`` labeled examples.
      disagreement: ``E_{rho^2}[D_hat(h, h')]`` on ``m`` examples (unlabeled, or labeled and
        unlabeled together; ``min`` of the pair counts out of bag).
      kl, n, m, delta: ``KL(rho||pi)``, the two sample sizes, the confidence.
      clip: clip to ``[0, 1]`` (the certificate); ``False`` for the raw value (at least 0).

    Example:
      >>> round(float(dis(0.2, 0.3, 1.0, 1000, 1000, 0.05)), 4)  # tandem risk 0.2 - 0.3 / 2
      0.5488
    """
    gibbs_risk, disagreement, kl, delta = as_floats(gibbs_risk, disagreement, kl, delta)
    n, m = jnp.asarray(n, kl.dtype), jnp.asarray(m, kl.dtype)
    gibbs_up = kl_inv_upper(gibbs_risk, kl_level(kl, n, delta, 4.0))
    dis_low = kl_inv_lower(disagreement, kl_level(2.0 * kl, m, delta, 4.0))
    return clip_unit(round_up(4.0 * gibbs_up - 2.0 * dis_low, 1.0), clip)


# ------------------------------------------------------------------ Chebyshev-Cantelli (CCTND)


def _cctnd_parts(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(T_up, G_low, G_up)``: the PAC-Bayes-kl inversions of CCTND, ``delta / 2`` each. The
    two upper inversions are one call on stacked arguments: XLA compiles every call site of a
    kl-inverse anew, so one site compiles in about half the time of two."""
    tandem_risk, gibbs_risk, kl, delta = as_floats(tandem_risk, gibbs_risk, kl, delta)
    n, n2 = jnp.asarray(n, kl.dtype), jnp.asarray(n2, kl.dtype)
    tandem_eps = kl_level(2.0 * kl, n2, delta, 4.0)
    eps = kl_level(kl, n, delta, 4.0)
    stacked = jnp.stack(jnp.broadcast_arrays(tandem_risk, gibbs_risk, tandem_eps, eps))
    tandem_up, gibbs_up = kl_inv_upper(stacked[:2], stacked[2:])  # (risks, their levels)
    return tandem_up, kl_inv_lower(stacked[1], stacked[3]), gibbs_up


def _cctnd_value(
    tandem_up: jax.Array, gibbs_low: jax.Array, gibbs_up: jax.Array, mu: jax.Array
) -> jax.Array:
    """The Chebyshev-Cantelli bound with the pessimistic Gibbs risk on the side ``mu``'s sign
    asks for, rounded up: ``-2 mu G`` and ``mu^2`` carry one rounding each (``u`` times their
    magnitude, added to ``sum_up``'s)."""
    gibbs = jnp.where(mu >= 0, gibbs_low, gibbs_up)
    pull, square = -2.0 * mu * gibbs, mu**2
    roundoff = float(jnp.finfo(pull.dtype).eps) / 2.0
    own = lax.stop_gradient(jnp.abs(pull) + square) * roundoff
    return chebyshev_cantelli(sum_up(tandem_up, pull, square, own), mu)


@domains(
    tandem_risk=UNIT,
    gibbs_risk=UNIT,
    kl=NONNEGATIVE,
    n=SIZE,
    n2=SIZE,
    delta=CONFIDENCE,
    mu=BELOW_HALF,
)
def cctnd(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    mu: ArrayLike,
    clip: bool = True,
) -> jax.Array:
    """CCTND bound ([WMLIS21]): the Chebyshev-Cantelli oracle bound ``L(MV) <= (E_{rho^2}[L(h,
    h')] - 2 mu E_rho[L(h)] + mu^2) / (1/2 - mu)^2`` with PAC-Bayes-kl on the tandem loss
    (``n2``) and on the Gibbs risk (``n``), ``delta / 2`` each:

    .. math:: L(MV_\\rho) \\le \\frac{kl^{-1}_{up}(\\hat T, \\frac{2KL + \\ln(4\\sqrt{n_2}/
              \\delta)}{n_2}) - 2\\mu\\,\\tilde L + \\mu^2}{(1/2 - \\mu)^2}, \\quad
              \\tilde L = kl^{-1}_{low / up}\\big(\\hat L, \\frac{KL + \\ln(4\\sqrt n/\\delta)}{n}
              \\big)\\ \\text{for}\\ \\mu \\ge 0 / \\mu < 0.

    Both kl inequalities are two-sided and hold for all ``rho`` at once, and ``mu`` enters only
    after them, so the bound holds for every ``mu < 1/2`` simultaneously: ``mu`` may be chosen
    from the data (``cctnd_optimal``) without a union bound. At ``mu = 0`` it is ``tnd_kl`` at
    ``delta / 2``. Clipped to ``[0, 1]`` unless ``clip`` is ``False``.

    Example:
      >>> b = cctnd(0.05, 0.2, 1.0, 1000, 1000, 0.05, 0.0)
      >>> tnd = tnd_kl(0.05, 1.0, 1000, 0.025)  # mu = 0: TND at delta / 2, to rounding
      >>> round(float(b), 4), bool(abs(b - tnd) < 1e-5)
      (0.3462, True)
    """
    parts = _cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta)
    return clip_unit(_cctnd_value(*parts, jnp.asarray(mu, parts[0].dtype)), clip)


def _stationary_mu(tandem_up: jax.Array, gibbs: jax.Array) -> jax.Array:
    """Stationary point ``(G/2 - T) / (1/2 - G)`` of ``(T - 2 mu G + mu^2) / (1/2 - mu)^2``
    (a minimum when ``G < 1/2``)."""
    return (0.5 * gibbs - tandem_up) / jnp.where(gibbs < 0.5, 0.5 - gibbs, 1.0)


@domains(tandem_risk=UNIT, gibbs_risk=UNIT, kl=NONNEGATIVE, n=SIZE, n2=SIZE, delta=CONFIDENCE)
def cctnd_optimal_mu(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """The ``mu < 1/2`` minimizing ``cctnd``, in closed form ([WMLIS21], the update
    ``mu = (G/2 - T) / (1/2 - G)`` of its alternating minimization), on each of the two
    branches (``G = G_low`` for ``mu >= 0``, ``G_up`` for ``mu < 0``), the better one kept.

    Example:
      >>> round(float(cctnd_optimal_mu(0.02, 0.2, 1.0, 1000, 1000, 0.05)), 3)
      0.083
    """
    return _optimal_mu(*_cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta))


def _optimal_mu(tandem_up: jax.Array, gibbs_low: jax.Array, gibbs_up: jax.Array) -> jax.Array:
    """``cctnd_optimal_mu`` from the inversions (``_cctnd_parts``)."""
    upper = 0.5 - jnp.finfo(tandem_up.dtype).eps
    mu_plus = jnp.clip(_stationary_mu(tandem_up, gibbs_low), 0, upper)
    mu_plus = jnp.where(gibbs_low < 0.5, mu_plus, 0)
    mu_minus = jnp.where(gibbs_up < 0.5, jnp.minimum(_stationary_mu(tandem_up, gibbs_up), 0), 0)
    plus = _cctnd_value(tandem_up, gibbs_low, gibbs_up, mu_plus)
    minus = _cctnd_value(tandem_up, gibbs_low, gibbs_up, mu_minus)
    return jnp.where(plus <= minus, mu_plus, mu_minus)


@domains(tandem_risk=UNIT, gibbs_risk=UNIT, kl=NONNEGATIVE, n=SIZE, n2=SIZE, delta=CONFIDENCE)
def cctnd_optimal(
    tandem_risk: ArrayLike,
    gibbs_risk: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
    clip: bool = True,
) -> jax.Array:
    """``cctnd`` at ``cctnd_optimal_mu`` (valid: CCTND holds for all ``mu`` at once); gradient
    by the envelope theorem (``mu`` held at its optimum).

    Example:
      >>> b = cctnd_optimal(0.02, 0.2, 1.0, 1000, 1000, 0.05)
      >>> round(float(b), 4), bool(b < cctnd(0.02, 0.2, 1.0, 1000, 1000, 0.05, 0.0))
      (0.1619, True)
    """
    parts = _cctnd_parts(tandem_risk, gibbs_risk, kl, n, n2, delta)  # once, for mu and value
    mu = lax.stop_gradient(_optimal_mu(*parts))
    return clip_unit(_cctnd_value(*parts, mu), clip)
