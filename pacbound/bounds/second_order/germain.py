"""PAC-Bound 1' and 2' of Germain et al. (2015): C-bounds on the majority vote.

The C-bound ``1 - (1 - 2 R(G_Q))^2 / (1 - 2 d_Q)`` bounds ``R(B_Q)`` from the Gibbs risk and
the disagreement (equivalently the joint error ``e_Q = R(G_Q) - d_Q / 2``). PAC-Bound 1'
estimates the disagreement on unlabeled examples; PAC-Bound 2' is PAC-Bound 2 (the trinomial
kl-ball on ``(e, d)``, :func:`pacbound.bounds.pac_bound_2`) with the joint error also capped by
its own PAC-Bayes-kl bound, on the labeled sample only (as in the authors' public code).

Source: [GLLMR15] Germain, Lacasse, Laviolette, Marchand, Roy, "Risk bounds for the majority
vote: from a PAC-Bayesian analysis to a learning algorithm", JMLR 16, 2015.

Functions: ``pac_bound_1_prime``, ``pac_bound_2_prime``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from pacbound.bounds.first_order import xi
from pacbound.bounds.second_order.common import as_floats, clip_unit
from pacbound.cbound import cbound_from_risk
from pacbound.kl import binary_kl, kl_inv_lower, kl_inv_upper, trinomial_kl
from pacbound.numerics import golden_section_argmax

__all__ = ["pac_bound_1_prime", "pac_bound_2_prime"]


def _xi_in(m, dtype):
    return xi(m).astype(dtype)


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
    risk_term = (kl + jnp.log(2.0 * _xi_in(m, kl.dtype) / delta)) / m
    dis_term = (2.0 * kl + jnp.log(2.0 * _xi_in(m_u, kl.dtype) / delta)) / m_u
    r = jnp.minimum(0.5, kl_inv_upper(gibbs_risk, risk_term))
    d = jnp.maximum(0.0, kl_inv_lower(disagreement, dis_term))
    return clip_unit(cbound_from_risk(r, d))


def _slice_top(d, joint, dis_s, eps):
    """The largest joint error ``e`` on the slice of disagreement ``d`` of the trinomial kl-ball:
    by the chain rule ``kl(e_S, d_S || e, d) = kl(d_S||d) + (1 - d_S) kl(e_S/(1-d_S) ||
    e/(1-d))``, it is ``(1 - d) kl^-1_up(e_S/(1-d_S), (eps - kl(d_S||d)) / (1 - d_S))``."""
    slack = jnp.maximum(eps - binary_kl(dis_s, d), 0.0) / (1.0 - dis_s)
    return (1.0 - d) * kl_inv_upper(joint / (1.0 - dis_s), slack)


def _capped_slice(d, joint, dis_s, eps, joint_cap):
    """Largest C-bound on the slice of disagreement ``d`` with the joint error capped (the
    C-bound increases with ``e``)."""
    e = jnp.minimum(_slice_top(d, joint, dis_s, eps), joint_cap)
    return cbound_from_risk(e + d / 2.0, d)


def _cbound(e, d):
    return cbound_from_risk(e + d / 2.0, d)


def _multipliers(e, d, joint, dis_s, eps, joint_cap):
    """KKT multipliers ``(lam_kl, lam_cap)`` of ``max C(e, d)`` under ``g1 = kl(e_S, d_S || e, d)
    - eps <= 0`` and ``g2 = e - cap <= 0`` at the optimum ``(e, d)``: ``grad C = lam_kl grad g1
    + lam_cap grad g2``. Where the cap (nearly) binds, both from the 2x2 system (exact at the
    kink where both bind, ``lam_kl ~ 0`` when only the cap does); elsewhere the kl constraint
    alone (``lam_cap = 0``)."""
    c_e, c_d = jax.grad(lambda e, d: jnp.sum(_cbound(e, d)), argnums=(0, 1))(e, d)
    k_e, k_d = jax.grad(lambda e, d: jnp.sum(trinomial_kl(joint, dis_s, e, d)), (0, 1))(e, d)
    near_cap = _slice_top(d, joint, dis_s, eps) >= joint_cap * (1.0 - jnp.sqrt(_eps(e)))
    lam_both = c_d / jnp.where(k_d != 0, k_d, 1.0) * (k_d != 0)
    lam_kl = jnp.where(near_cap, lam_both, c_e / jnp.where(k_e > 0, k_e, 1.0) * (k_e > 0))
    lam_cap = jnp.where(near_cap, c_e - lam_both * k_e, 0.0)
    return lam_kl, lam_cap


def _eps(x):
    return jnp.finfo(x.dtype).eps


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

    ``e_S = R_S(G_Q) - d_S / 2``. The C-bound is concave and the feasible set convex, so the
    best slice of fixed ``d`` (closed form, the cap applied) is a concave function of ``d``,
    maximized by golden-section search. The maximum often sits on the kink where the cap starts
    to bind, so the gradient is the constrained envelope theorem's, ``dV = lam_kl (d eps -
    d_theta kl) + lam_cap d cap`` with the KKT multipliers at the optimum (holding ``d``
    fixed, the unconstrained envelope, would be wrong there).

    Example:
      >>> round(float(pac_bound_2_prime(0.2, 0.3, 1.0, 1000, 0.05)), 4)  # empirical C-bound 0.28
      0.3281
    """
    gibbs_risk, disagreement, kl, delta = as_floats(gibbs_risk, disagreement, kl, delta)
    m = jnp.asarray(m, kl.dtype)
    xi_m = _xi_in(m, kl.dtype)
    joint = jnp.maximum(gibbs_risk - disagreement / 2.0, 0.0)
    joint_cap = jnp.minimum(0.5, kl_inv_upper(joint, (2.0 * kl + jnp.log(2.0 * xi_m / delta)) / m))
    eps = (2.0 * kl + jnp.log(2.0 * (xi_m + m) / delta)) / m
    joint, disagreement, eps, joint_cap = jnp.broadcast_arrays(joint, disagreement, eps, joint_cap)
    fixed = tuple(lax.stop_gradient(x) for x in (joint, disagreement, eps, joint_cap))
    d_lo = kl_inv_lower(fixed[1], fixed[2])
    d_hi = jnp.minimum(kl_inv_upper(fixed[1], fixed[2]), 0.5)
    d = golden_section_argmax(_capped_slice, d_lo, d_hi, fixed)
    e = jnp.minimum(_slice_top(d, *fixed[:3]), fixed[3])
    lam_kl, lam_cap = _multipliers(e, d, *fixed)
    lagrangian = lam_kl * (eps - trinomial_kl(joint, disagreement, e, d)) + lam_cap * joint_cap
    value = _cbound(e, d) + lagrangian - lax.stop_gradient(lagrangian)
    return clip_unit(value)
