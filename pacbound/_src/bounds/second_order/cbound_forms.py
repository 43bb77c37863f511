"""The C-bound's PAC-Bayes forms on an ensemble's vote, any number of classes, out of bag.

Viallard, Germain, Habrard, Morvant ([VGHM21], ECML-PKDD 2021) learn a majority vote by
minimizing, by gradient descent over the posterior, one of three PAC-Bayes bounds on the
C-bound ``C(r, d) = 1 - (1 - 2r)^2 / (1 - 2d)``: the **Seeger** form (``r`` and ``d`` each
from a kl-inverse), the **McAllester** form (each from a square-root deviation) and the
**joint** form (PAC-Bound 2 of [GLLMR15]: the worst C-bound over a trinomial kl-ball on the
joint error and the disagreement). Here they bound the vote of any number of classes:

* The vote errs only where ``W = E_rho[1[h errs]] >= 1/2``, so with ``r = E_D[W]`` (the Gibbs
  risk) and ``e = E_D[W^2] = E_{rho^2}[P(h and h' both err)]`` (the tandem, or joint, error),
  Cantelli's inequality gives ``L(MV_rho) <= 1 - (1 - 2r)^2 / (1 - 4r + 4e)``
  (:func:`pacbound.cbound.multiclass_cbound`, ``relaxed=True``), and
  ``1 - 4r + 4e = 1 - 2d'`` with ``d' = 2(r - e) = E_{rho^2}[P(exactly one of h, h' errs)]``,
  the rate of the pairs' "split" outcome. ``d' <= 2(sqrt(e) - e)`` (as ``r^2 <= e``), and for
  two classes ``d'`` is the disagreement and ``e`` the joint error of [GLLMR15]: the bounds
  below are theirs.
* ``r`` is the mean of a per-voter loss and ``(e, d')`` of a per-pair ternary outcome (both
  err / exactly one errs / neither), so PAC-Bayes bounds them with the prior ``pi`` (``pi^2``
  on pairs, ``KL(rho^2||pi^2) = 2 KL(rho||pi)``).

Out of bag (Lorenzen, Igel, Seldin 2019; as TND, [MLIS20]) each voter's loss is averaged over
the ``n_j >= n`` examples it left out and each pair's over the ``n_jk >= n2`` examples both
left out, so the Gibbs-risk term uses ``n = min_j n_j`` and the pair terms ``n2 = min n_jk``.
Why a smaller size is allowed: for each voter (pair) ``E_S exp(n kl(hat L || L)) <=
(E_S exp(n_j kl(hat L || L)))^{n / n_j} <= c(n_j)^{n / n_j} <= c(n)`` by Jensen, for the
constants ``c(n) = 2 xi(n), xi(n) + n, 4 sqrt(n)`` below, whose ``c(n)^{1/n}`` decreases in
``n``; the rest is the change of measure, Markov's inequality and the joint convexity of kl,
as in the held-out case. With a held-out set ``n = n2 = m`` and the bounds are [GLLMR15]'s.

The theorems, each holding with probability ``1 - delta`` for all ``rho`` at once:

* ``cbound_seeger``: ``C(r_up, d_low)``, ``r_up = min(1/2, kl^{-1}_up(hat r, (KL +
  ln(2 xi(n) / delta)) / n))``, ``d_low = max(0, kl^{-1}_low(hat d', (2 KL + ln(2 xi(n2) /
  delta)) / n2))`` ([VGHM21]'s Seeger form, ``delta / 2`` each; PAC-Bound 1 of
  [GLLMR15] at ``n = n2``; the authors' code uses ``2 sqrt(n) >= xi(n)``).
* ``cbound_mcallester``: ``C(r_up, d_low)``, ``r_up = hat r + sqrt((KL + ln(4 sqrt(n) /
  delta)) / (2n))``, ``d_low = hat d' - sqrt((2 KL + ln(4 sqrt(n2) / delta)) / (2 n2))``
  ([VGHM21]'s McAllester form, Maurer's ``2 sqrt(n)``, ``delta / 2`` each; roy2016 Thm 2 at
  ``n = n2`` with ``mu1 = 1 - 2 hat r``, ``mu2 = 1 - 2 hat d'``).
* ``cbound_joint``: ``sup C(e + d/2, d)`` over ``kl(hat e, hat d' || e, d) <= (2 KL +
  ln((xi(n2) + n2) / delta)) / n2``, ``2e + d < 1`` ([VGHM21]'s joint form, PAC-Bound 2 of
  [GLLMR15]; the authors' code uses ``2 sqrt(n2) + n2``); pair statistics only.

Sources: [VGHM21] Viallard, Germain, Habrard, Morvant, "Self-bounding majority vote learning
algorithms by the direct minimization of a tight PAC-Bayesian C-bound", ECML-PKDD 2021;
[GLLMR15] Germain, Lacasse, Laviolette, Marchand, Roy, JMLR 16, 2015; [MLIS20] Masegosa,
Lorenzen, Igel, Seldin, NeurIPS 2020; roy2016: Roy, Laviolette, Marchand, AISTATS 2016.

Certified values (:mod:`pacbound._src.bounds.second_order.common`): a float ``>=`` the exact
value of each formula for the given floats. The Seeger form is
:func:`pacbound.bounds.pac_bound_1_prime` with ``m' = n2`` (levels rounded up, certified
kl-inverses, the C-bound rounded up from ``1 - 2 r_up`` rounded down and ``1 - 2 d_low``
rounded up); the McAllester form rounds each deviation and sum outward; the joint form is
:func:`pacbound.cbound.cbound_trinomial_sup` at a level rounded up. An empirical ``hat d'``
above ``1/2`` (possible out of bag only; ``d' <= 1/2`` always) is clipped to ``1/2`` by the
first two forms (which decrease in it) and makes the joint form the trivial 1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.bounds.second_order.common import as_floats, kl_level
from pacbound._src.bounds.second_order.germain import log_level, pac_bound_1_prime, xi_up
from pacbound._src.cbound import cbound_trinomial_sup, cbound_upper
from pacbound._src.kl import round_down, round_up
from pacbound._src.validation import CONFIDENCE, NONNEGATIVE, SIZE, UNIT, domains

__all__ = ["cbound_joint", "cbound_mcallester", "cbound_seeger"]


@domains(gibbs_risk=UNIT, split_rate=UNIT, kl=NONNEGATIVE, n=SIZE, n2=SIZE, delta=CONFIDENCE)
def cbound_seeger(
    gibbs_risk: ArrayLike,
    split_rate: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """The C-bound's Seeger form ([VGHM21]; module docstring) on ``L(MV_rho)``, any classes:

    .. math:: 1 - \\frac{(1 - 2 r)^2}{1 - 2 d}, \\quad r = \\min\\big(\\tfrac12, kl^{-1}_{up}(
              \\hat r, \\tfrac{KL + \\ln(2\\xi(n)/\\delta)}{n})\\big), \\quad d = \\max\\big(0,
              kl^{-1}_{low}(\\hat d', \\tfrac{2KL + \\ln(2\\xi(n_2)/\\delta)}{n_2})\\big).

    Args:
      gibbs_risk: ``hat r = E_rho[L_hat(h)]`` (each voter on its ``>= n`` examples).
      split_rate: ``hat d' = E_{rho^2}[P_hat(exactly one of h, h' errs)]`` (each pair on its
        ``>= n2`` shared examples; the disagreement for two classes).
      kl: ``KL(rho||pi)``.
      n, n2: the Gibbs and pair sample sizes.
      delta: confidence.

    Example:
      >>> round(float(cbound_seeger(0.2, 0.3, 1.0, 1000, 500, 0.05)), 4)  # pairs on 500 examples
      0.5737
    """
    gibbs_risk, split_rate, kl, delta = as_floats(gibbs_risk, split_rate, kl, delta)
    return pac_bound_1_prime(gibbs_risk, jnp.clip(split_rate, 0.0, 0.5), kl, n, n2, delta)


def _deviation_up(kl_term: jax.Array, n: jax.Array, delta: jax.Array) -> jax.Array:
    """``sqrt((kl_term + ln(4 sqrt(n) / delta)) / (2n))`` rounded up: the level rounded up
    (``kl_level``), halved exactly, and the sqrt's rounding."""
    return round_up(jnp.sqrt(kl_level(kl_term, n, delta, 4.0) / 2.0), 1.0)


@domains(gibbs_risk=UNIT, split_rate=UNIT, kl=NONNEGATIVE, n=SIZE, n2=SIZE, delta=CONFIDENCE)
def cbound_mcallester(
    gibbs_risk: ArrayLike,
    split_rate: ArrayLike,
    kl: ArrayLike,
    n: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """The C-bound's McAllester form ([VGHM21]; module docstring) on ``L(MV_rho)``:

    .. math:: 1 - \\frac{(1 - 2 r)^2}{1 - 2 d}, \\quad r = \\min\\big(\\tfrac12, \\hat r +
              \\sqrt{\\tfrac{KL + \\ln(4\\sqrt n/\\delta)}{2n}}\\big), \\quad d = \\max\\big(0,
              \\hat d' - \\sqrt{\\tfrac{2KL + \\ln(4\\sqrt{n_2}/\\delta)}{2 n_2}}\\big).

    Never tighter than ``cbound_seeger`` up to its constants (Pinsker's inequality). Arguments as
    in ``cbound_seeger``.

    Example:
      >>> round(float(cbound_mcallester(0.2, 0.3, 1.0, 1000, 500, 0.05)), 4)
      0.6333
    """
    gibbs_risk, split_rate, kl, delta = as_floats(gibbs_risk, split_rate, kl, delta)
    kl = jnp.maximum(kl, 0.0)
    n_f, n2_f = jnp.asarray(n, kl.dtype), jnp.asarray(n2, kl.dtype)
    r_up = round_up(jnp.clip(gibbs_risk, 0.0, 1.0) + _deviation_up(kl, n_f, delta), 1.0)
    d_low = round_down(jnp.clip(split_rate, 0.0, 0.5) - _deviation_up(2.0 * kl, n2_f, delta), 1.0)
    mu1_low = round_down(1.0 - 2.0 * jnp.minimum(r_up, 0.5), 1.0)
    mu2_up = round_up(1.0 - 2.0 * jnp.maximum(d_low, 0.0), 1.0)
    return cbound_upper(mu1_low, jnp.minimum(mu2_up, 1.0))


@domains(joint_error=UNIT, split_rate=UNIT, kl=NONNEGATIVE, n2=SIZE, delta=CONFIDENCE)
def cbound_joint(
    joint_error: ArrayLike,
    split_rate: ArrayLike,
    kl: ArrayLike,
    n2: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """The C-bound's joint form ([VGHM21]; PAC-Bound 2 of [GLLMR15]) on ``L(MV_rho)``: the
    largest C-bound ``1 - (1 - 2e - d)^2 / (1 - 2d)`` over the trinomial kl-ball

    .. math:: kl(\\hat e, \\hat d' \\| e, d) \\le \\frac{2KL + \\ln((\\xi(n_2) + n_2)/\\delta)}
              {n_2}, \\quad 2e + d < 1,

    certified by :func:`pacbound.cbound.cbound_trinomial_sup` (envelope-theorem gradient).

    Args:
      joint_error: ``hat e = E_{rho^2}[P_hat(h and h' both err)]``, the tandem risk.
      split_rate: ``hat d'`` (``cbound_seeger``); ``hat e + hat d' <= 1`` (a pair's rates).
      kl, n2, delta: ``KL(rho||pi)``, the pair sample size, the confidence.

    Example:
      >>> round(float(cbound_joint(0.05, 0.3, 1.0, 500, 0.05)), 4)  # hat r = 0.05 + 0.3 / 2
      0.4323
    """
    joint_error, split_rate, kl, delta = as_floats(joint_error, split_rate, kl, delta)
    n2_f = jnp.asarray(n2, kl.dtype)
    eps = log_level(2.0 * kl, xi_up(n2_f) + n2_f, 3.0, delta, n2_f)  # xi, n2 and their sum: 3 u
    split = jnp.clip(split_rate, 0.0, 1.0)
    value = cbound_trinomial_sup(jnp.clip(joint_error, 0.0, 1.0), jnp.minimum(split, 0.5), eps)
    return jnp.where(split > 0.5, jnp.ones_like(value), value)
