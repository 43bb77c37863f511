"""PAC-Bound 1' and 2' of Germain et al. (2015): C-bounds on the majority vote.

The C-bound ``1 - (1 - 2 R(G_Q))^2 / (1 - 2 d_Q)`` bounds ``R(B_Q)`` from the Gibbs risk and
the disagreement (equivalently the joint error ``e_Q = R(G_Q) - d_Q / 2``). PAC-Bound 1'
estimates the disagreement on unlabeled examples; PAC-Bound 2' is PAC-Bound 2 (the trinomial
kl-ball on ``(e, d)``, :func:`pacbound.bounds.pac_bound_2`) with the joint error also capped by
its own PAC-Bayes-kl bound, on the labeled sample only (as in the authors' public code).

Source: [GLLMR15] Germain, Lacasse, Laviolette, Marchand, Roy, "Risk bounds for the majority
vote: from a PAC-Bayesian analysis to a learning algorithm", JMLR 16, 2015.

Functions: ``pac_bound_1_prime``, ``pac_bound_2_prime``.

Certified values (:mod:`pacbound._src.bounds.second_order.common`): a float ``>=`` the exact value
of each formula for the given floats. The levels are rounded up (``xi(m)`` itself is rounded
up, :func:`pacbound.bounds.xi`), the kl-inverses certified; PAC-Bound 1' rounds its C-bound up
(:func:`pacbound.cbound.cbound_upper`), PAC-Bound 2' takes its supremum from
:func:`pacbound.cbound.cbound_trinomial_sup` with the joint-error cap (the same certified
search as PAC-Bound 2: outward slice values and concavity cuts, so that a comparison decided
by rounding costs tightness, never validity; within ~1e-13 of the supremum in float64 and
~1e-5 in float32).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.bounds.first_order import xi
from pacbound._src.bounds.second_order.common import as_floats, clip_unit
from pacbound._src.cbound import cbound_trinomial_sup, cbound_upper
from pacbound._src.kl import kl_inv_lower, kl_inv_upper, round_down, round_up
from pacbound._src.validation import CONFIDENCE, HALF, NONNEGATIVE, SIZE, UNIT, domains

__all__ = ["pac_bound_1_prime", "pac_bound_2_prime"]

_LOG = 4.0  # the library's log, in u (pacbound._src.kl, "Certified kl-inverses")


def log_level(
    kl_term: jax.Array,
    log_argument: jax.Array,
    argument_roundings: float,
    delta: jax.Array,
    m: jax.Array,
) -> jax.Array:
    """``(kl_term + ln(log_argument) - ln(delta)) / m`` rounded up, for ``kl_term >= 0`` exact,
    ``log_argument >= 2`` within ``argument_roundings`` u (so its log within
    ``argument_roundings / ln 2 + 4`` u) and ``delta <= 1``: two sums of terms ``>= 0`` (2 u),
    ``m`` (its conversion) and the division (2 u)."""
    value = (jnp.maximum(kl_term, 0.0) + jnp.log(log_argument) - jnp.log(delta)) / m
    return round_up(value, argument_roundings / math.log(2.0) + _LOG + 4.0)


def xi_up(m: jax.Array) -> jax.Array:
    """``xi(m)`` rounded up, in ``m``'s float dtype; ``m`` was rounded to it (1 u), which moves
    ``xi ~ sqrt(pi m / 2)`` by half as much: 1 u is charged for it where ``xi`` is used."""
    return xi(m).astype(m.dtype)


@domains(
    gibbs_risk=UNIT,
    disagreement=HALF,
    kl=NONNEGATIVE,
    m=SIZE,
    m_unlabeled=SIZE,
    delta=CONFIDENCE,
)
def pac_bound_1_prime(
    gibbs_risk: ArrayLike,
    disagreement: ArrayLike,
    kl: ArrayLike,
    m: ArrayLike,
    m_unlabeled: ArrayLike,
    delta: ArrayLike,
) -> jax.Array:
    """PAC-Bound 1' ([GLLMR15]; binary votes): PAC-Bound 1 with the disagreement estimated on
    ``m'`` unlabeled examples, ``delta / 2`` each:

    .. math:: C = 1 - \\frac{(1 - 2r)^2}{1 - 2d}, \\quad r = \\min\\big(\\tfrac12, kl^{-1}_{up}(
              R_S, \\tfrac{KL + \\ln(2\\xi(m)/\\delta)}{m})\\big), \\quad d = \\max\\big(0,
              kl^{-1}_{low}(d_{S'}, \\tfrac{2KL + \\ln(2\\xi(m')/\\delta)}{m'})\\big).

    Certified (module docstring): the levels rounded up, the certified kl-inverses, and the
    C-bound rounded up from ``1 - 2r`` rounded down and ``1 - 2d`` rounded up.

    Args:
      gibbs_risk: ``R_S(G_Q)`` on the ``m`` labeled examples.
      disagreement: ``d_{S'}`` on the ``m'`` unlabeled examples.
      kl, m, m_unlabeled, delta: ``KL(Q||P)``, the two sizes, the confidence.

    Example:
      >>> round(float(pac_bound_1_prime(0.2, 0.3, 1.0, 1000, 5000, 0.05)), 4)  # 5000 unlabeled
      0.4749
    """
    gibbs_risk, disagreement, kl, delta = as_floats(gibbs_risk, disagreement, kl, delta)
    m, m_u = jnp.asarray(m, kl.dtype), jnp.asarray(m_unlabeled, kl.dtype)
    risk_level = log_level(kl, 2.0 * xi_up(m), 1.0, delta, m)
    dis_level = log_level(2.0 * kl, 2.0 * xi_up(m_u), 1.0, delta, m_u)
    r = jnp.minimum(0.5, kl_inv_upper(jnp.clip(gibbs_risk, 0.0, 1.0), risk_level))
    d = kl_inv_lower(jnp.clip(disagreement, 0.0, 0.5), dis_level)
    return clip_unit(cbound_upper(round_down(1.0 - 2.0 * r, 1.0), round_up(1.0 - 2.0 * d, 1.0)))


@domains(gibbs_risk=UNIT, disagreement=HALF, kl=NONNEGATIVE, m=SIZE, delta=CONFIDENCE)
@jax.jit
def pac_bound_2_prime(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 2' ([GLLMR15]; binary votes, as in the authors' public code): PAC-Bound 2 with
    the joint error also bounded on its own, ``delta / 2`` each:

    .. math:: \\sup\\ 1 - \\frac{(1 - 2e - d)^2}{1 - 2d}\\ \\text{over}\\ kl(e_S, d_S \\| e, d)
              \\le \\frac{2KL + \\ln(2(\\xi(m) + m)/\\delta)}{m},\\ 2e + d < 1,\\
              e \\le \\min\\big(\\tfrac12, kl^{-1}_{up}(e_S, \\tfrac{2KL + \\ln(2\\xi(m)/
              \\delta)}{m})\\big),

    ``e_S = R_S(G_Q) - d_S / 2``. The supremum is :func:`pacbound.cbound.cbound_trinomial_sup`
    with the joint error capped: certified (a float ``>=`` the exact supremum; ``e_S``, the
    levels and the cap rounded up, as the supremum increases with each). Its gradient is the
    constrained envelope theorem's, ``dV = lam_kl (d eps - d_theta kl) + lam_cap d cap`` with
    the KKT multipliers at the optimum (the maximum often sits on the kink where the cap starts
    to bind).

    Example:
      >>> round(float(pac_bound_2_prime(0.2, 0.3, 1.0, 1000, 0.05)), 4)  # empirical C-bound 0.28
      0.3281
    """
    gibbs_risk, disagreement, kl, delta = as_floats(gibbs_risk, disagreement, kl, delta)
    m = jnp.asarray(m, kl.dtype)
    risk, dis = jnp.clip(gibbs_risk, 0.0, 1.0), jnp.clip(disagreement, 0.0, 0.5)
    joint = round_up(jnp.maximum(risk - dis / 2.0, 0.0), 1.0)  # the supremum increases in it
    xi_m = xi_up(m)
    cap = jnp.minimum(0.5, kl_inv_upper(joint, log_level(2.0 * kl, 2.0 * xi_m, 1.0, delta, m)))
    eps = log_level(2.0 * kl, 2.0 * (xi_m + m), 3.0, delta, m)  # xi, m and their sum: 3 u
    return cbound_trinomial_sup(joint, dis, eps, cap)
