"""The margin bound of a deterministic majority vote through Dirichlet posteriors (biggs2022).

Biggs, Zantedeschi, Guedj, "On margins and generalisation for voting classifiers", NeurIPS
2022 (arXiv 2206.04607), the Dirichlet margin bound; the constants below are derived here
(the statement and its proof, step by step, are in :func:`dirichlet_margin`'s docstring) and
differ from the authors' code (``core/margin_bounds.py`` of
github.com/vzantedeschi/dirichlet-margin-bound) in one place: the concentration term.

The object bounded is the *deterministic* vote ``MV_theta(x) = sign(sum_j theta_j h_j(x))`` of
``{-1, +1}`` voters: a Dirichlet posterior ``Dir(K theta)`` centred on ``theta`` only serves the
proof, and ``K > 0`` is free (the PAC-Bayes bound holds for every posterior at once, so ``K``
may be chosen after seeing the sample, on a grid or continuously, with no union bound); the
margin threshold ``gamma`` sets the loss the PAC-Bayes bound is applied to, so choosing it
among ``k`` values fixed in advance costs ``delta / k``.

Certified values as in :mod:`pacbound._src.bounds.first_order` ("Certified values"): the
concentration term is rounded up (its exponent rounded down first), the kl-inverse is
certified and sees its arguments rounded up (it increases in both), the final sum is rounded
up; the result is never below the exact value of the formula for the given floats.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.bounds.first_order import at_most_one, floats_with_size, seeger_level
from pacbound._src.kl import kl_inv_upper, round_down, round_up
from pacbound._src.validation import CONFIDENCE, NONNEGATIVE, POSITIVE, SIZE, UNIT, domains

__all__ = ["dirichlet_margin"]

_LOG_OR_EXP = 4.0  # the library's exp within 4 u (first_order's error model)


def margin_tail(concentration: ArrayLike, gamma: ArrayLike) -> jax.Array:
    """``exp(-(K + 1) gamma^2 / 8)`` rounded up: the probability that the margin of
    ``rho ~ Dir(K theta)`` lies ``gamma / 2`` or more on one side of ``theta``'s margin
    (:func:`dirichlet_margin`, step 2). The exponent ``(K + 1) gamma^2 / 8`` carries 3 u (the
    sum, the square, the product; ``/ 8`` is exact) and is rounded down, so the exponential,
    within 4 u, is rounded up by 4.

    Example:
      >>> round(float(margin_tail(100.0, 0.5)), 4)  # exp(-101 / 32)
      0.0426
    """
    concentration, gamma = jnp.broadcast_arrays(*floats_with_size(concentration, gamma, m=1.0)[:2])
    exponent = round_down((concentration + 1.0) * (gamma * gamma) / 8.0, 3.0)
    return round_up(jnp.exp(-exponent), _LOG_OR_EXP)


@domains(
    margin_loss=UNIT,
    kl=NONNEGATIVE,
    m=SIZE,
    delta=CONFIDENCE,
    concentration=POSITIVE,
    gamma=POSITIVE,
)
def dirichlet_margin(
    margin_loss: ArrayLike,
    kl: ArrayLike,
    m: ArrayLike,
    delta: ArrayLike,
    concentration: ArrayLike,
    gamma: ArrayLike,
) -> jax.Array:
    """The Dirichlet margin bound on the **deterministic** majority vote's risk (biggs2022),
    clipped to 1:

    .. math:: R(MV_\\theta) \\le kl^{-1}_{up}\\Big(\\hat R^\\gamma_S(\\theta) + \\epsilon,\\;
              \\frac{KL(Dir(K\\theta) \\| Dir(\\beta)) + \\ln(2\\sqrt m/\\delta)}{m}\\Big)
              + \\epsilon, \\qquad \\epsilon = e^{-(K+1)\\gamma^2/8},

    ``hat R^gamma_S(theta) = (1/m) sum_i 1[M_theta(x_i, y_i) <= gamma]`` the empirical margin
    loss, ``M_theta = y sum_j theta_j h_j(x)`` the margin in ``[-1, 1]`` (pacbound's margin;
    the authors' code thresholds the wrong voters' weight ``W = (1 - M) / 2`` at
    ``1/2 - gamma'``, that is ``gamma = 2 gamma'``). With probability at least ``1 - delta``
    over the ``m`` examples it holds for every ``theta`` in the simplex's interior and every
    ``K > 0`` at once, ``gamma`` and the prior ``Dir(beta)`` fixed before seeing the sample
    (``delta / k`` each for ``k`` values of ``gamma``).

    Proof, for ``{-1, +1}`` voters. (1) Under ``rho ~ Dir(K theta)`` the wrong voters' weight
    is ``W_rho ~ Beta(K W_theta, K (1 - W_theta))`` (the Dirichlet's aggregation property), of
    mean ``W_theta``. (2) A ``Beta(a, b)`` variable is ``1 / (4 (a + b + 1))``-sub-Gaussian
    (Marchal and Arbel 2017), so each tail of ``W_rho - W_theta`` beyond ``t`` is at most
    ``exp(-2 (K + 1) t^2)``, and each tail of ``M_rho - M_theta = -2 (W_rho - W_theta)``
    beyond ``gamma / 2`` at most ``epsilon``. (3) With the loss
    ``l(rho, x, y) = 1[M_rho <= gamma / 2]``: where ``M_theta <= 0``,
    ``1 <= E_rho l + epsilon``; where ``M_theta > gamma``, ``E_rho l <= epsilon``. So
    ``R(MV_theta) <= L_D(Dir(K theta)) + epsilon`` (a tie counts as an error) and
    ``L_S(Dir(K theta)) <= hat R^gamma_S + epsilon``. (4) Seeger's bound with Maurer's constant
    on the ``[0, 1]`` loss ``l`` (for every posterior at once), and ``kl^-1_up`` increasing in
    its first argument.

    The authors' code (``margin_bound`` of ``core/margin_bounds.py``) has ``epsilon =
    exp(-(K + 1) gamma'^2)`` = ``exp(-(K + 1) gamma^2 / 4)``, twice this exponent: it needs
    the tail ``exp(-4 (K + 1) t^2)``, which a ``Beta(K/2, K/2)`` variable exceeds (its tail
    nears the Gaussian one of variance ``1 / (4 (K + 1))``); the tests show a point where it
    fails. Their grids (``real_margin.py``): ``gamma`` over a grid fixed in advance with
    ``delta / k``, ``K`` minimized freely (golden section), as here.

    Args:
      margin_loss: ``hat R^gamma_S(theta)``, in ``[0, 1]``.
      kl: ``KL(Dir(K theta) || Dir(beta))`` (:func:`pacbound.kl.dirichlet_kl`).
      m: sample size.
      delta: confidence (``delta / k`` for a grid of ``k`` values of ``gamma``).
      concentration: ``K > 0``.
      gamma: the margin threshold ``> 0``.

    Returns:
      The bound, clipped to 1; its derivative is the unclipped formula's (in ``kl``, ``K``,
      ``gamma``; the margin loss is a step function of ``theta``).

    Example:
      >>> b = dirichlet_margin(0.05, 5.0, 2000, 0.05, 1000.0, 0.5)  # epsilon = exp(-1001 / 32)
      >>> round(float(b), 4), bool(b < dirichlet_margin(0.05, 5.0, 2000, 0.05, 100.0, 0.5))
      (0.0781, True)
    """
    loss, kl, delta, concentration, gamma, m = floats_with_size(
        margin_loss, kl, delta, concentration, gamma, m=m
    )
    tail = margin_tail(concentration, gamma)
    stochastic_loss = round_up(jnp.clip(loss, 0.0, 1.0) + tail, 1.0)  # two terms >= 0
    inverse = kl_inv_upper(jnp.minimum(stochastic_loss, 1.0), seeger_level(kl, m, delta))
    return at_most_one(round_up(inverse + tail, 1.0))
