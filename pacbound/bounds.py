"""PAC-Bayes bounds, composed from the margins, the kl terms and the C-bound.

Every bound is a pure function of statistics of the sample (risks, moments, KL, ``m``) and of
``delta``, jittable, differentiable and broadcasting over all of its numeric arguments, so
``jax.vmap`` sweeps ``delta``, ``kl`` or a prior with one compilation. Each docstring says
whether it bounds the Gibbs risk ``R(G_Q)`` or the majority-vote risk ``R(B_Q)``, and holds
with probability at least ``1 - delta`` over the draw of the ``m`` examples, for all
posteriors ``Q`` simultaneously. Arguments are not validated here (they may be traced):
``delta`` must lie in ``(0, 1]`` and ``m >= 1`` (``>= 2`` for ``empirical_bernstein``,
``> 8`` for ``cbound_quasi_uniform``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import gammaln, xlogy
from jax.typing import ArrayLike

from pacbound.cbound import cbound, cbound_from_risk, cbound_trinomial_sup
from pacbound.kl import kl_inv_lower, kl_inv_upper

__all__ = [
    "catoni",
    "cbound_quasi_uniform",
    "cbound_roy2016",
    "empirical_bernstein",
    "exponential_loss_constants",
    "general_loss",
    "mcallester",
    "pac_bound_0",
    "pac_bound_1",
    "pac_bound_2",
    "quadratic_loss_constants",
    "seeger",
    "xi",
]


def _maurer_log_term(m: ArrayLike, delta: ArrayLike) -> jax.Array:
    """``ln(2 sqrt(m) / delta)``, the confidence term of Maurer's (2004) bounds."""
    return jnp.log(2.0 * jnp.sqrt(m)) - jnp.log(delta)


def mcallester(risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike) -> jax.Array:
    """McAllester's bound, Maurer's form, on the **Gibbs** risk:

    .. math:: R(G_Q) \\le R_S(G_Q) + \\sqrt{(KL(Q||P) + \\ln(2\\sqrt{m}/\\delta)) / (2m)}.
    """
    return risk + jnp.sqrt((kl + _maurer_log_term(m, delta)) / (2.0 * m))


def seeger(risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike) -> jax.Array:
    """Seeger's bound (Maurer's constant) on the **Gibbs** risk:

    .. math:: R(G_Q) \\le kl^{-1}_{up}(R_S(G_Q), (KL(Q||P) + \\ln(2\\sqrt{m}/\\delta)) / m).

    Twice it bounds the majority-vote risk, ``R(B_Q) <= 2 R(G_Q)``. Never looser than
    ``mcallester`` (Pinsker's inequality).
    """
    return kl_inv_upper(risk, (kl + _maurer_log_term(m, delta)) / m)


def catoni(
    risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike, c: ArrayLike
) -> jax.Array:
    """Catoni's bound in germain2009 Theorem 3.1, on the **Gibbs** risk, for any ``c > 0``:

    .. math:: R(G_Q) \\le \\frac{1}{1 - e^{-c}}
              \\Big[c\\,R_S(G_Q) + \\frac{KL(Q||P) + \\ln(1/\\delta)}{m}\\Big].

    ``c`` is fixed before seeing the sample; a grid of ``k`` values needs ``delta / k``.
    """
    return (c * risk + (kl - jnp.log(delta)) / m) / -jnp.expm1(-c)


def exponential_loss_constants(gamma: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(c_a, k_bar)`` of the exponential loss ``exp(-margin / gamma)`` (germain2009 §4).

    ``c_a = e^{1/gamma} - 1`` and ``k_bar = gamma^{-1} / (1 - e^{-1/gamma})``.
    """
    inv = 1.0 / jnp.asarray(gamma, jnp.result_type(gamma, float))
    return jnp.expm1(inv), inv / -jnp.expm1(-inv)


def quadratic_loss_constants(gamma: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """``(c_a, k_bar)`` of the quadratic loss ``(margin / gamma - 1)^2`` (germain2009 §4).

    ``c_a = 2/gamma + 1/gamma^2`` and ``k_bar = (2 gamma + 2) / (2 gamma + 1)``.
    """
    gamma = jnp.asarray(gamma, jnp.result_type(gamma, float))
    return 2.0 / gamma + 1.0 / gamma**2, (2.0 * gamma + 2.0) / (2.0 * gamma + 1.0)


def general_loss(
    empirical_loss: ArrayLike,
    kl: ArrayLike,
    m: ArrayLike,
    delta: ArrayLike,
    c: ArrayLike,
    c_a: ArrayLike,
    k_bar: ArrayLike,
) -> jax.Array:
    """germain2009 Theorem 3.2: a bound on the expected convex loss ``zeta_Q``, hence on the
    **majority-vote** risk (``zeta_Q(x, y) >= I(W_Q(x, y) > 1/2)``), for any ``c = C' > 0``:

    .. math:: \\zeta_Q \\le g(c_a, C') + \\frac{C'}{1 - e^{-C'}}\\Big[\\hat\\zeta_Q
              + \\frac{2 c_a}{m C'}\\big(\\bar k\\,KL(Q||P) + \\ln\\frac{1}{\\delta}\\big)\\Big],
              \\quad g(c_a, C') = 1 - c_a + \\frac{C'}{1 - e^{-C'}} (c_a - 1).

    Args:
      empirical_loss: ``hat zeta_Q``, the mean loss over the sample.
      kl: ``KL(Q||P)``.
      m: sample size.
      delta: confidence.
      c: Catoni's constant ``C'``.
      c_a, k_bar: the loss's constants, from ``exponential_loss_constants`` or
        ``quadratic_loss_constants``.
    """
    scale = c / -jnp.expm1(-c)
    g = 1.0 - c_a + scale * (c_a - 1.0)
    return g + scale * (empirical_loss + 2.0 * c_a / (m * c) * (k_bar * kl - jnp.log(delta)))


def cbound_roy2016(
    mu1: ArrayLike, mu2: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """roy2016 Theorem 2: the C-bound with KL, on the **majority-vote** risk:

    ``R(B_Q) <= 1 - max(0, mu1_low)^2 / min(1, mu2_up)`` with

    * ``mu1_low = mu1 - sqrt(2/m [KL + ln(2 sqrt(m) / (delta/2))])``,
    * ``mu2_up = mu2 + sqrt(2/m [2 KL + ln(2 sqrt(m) / (delta/2))])``.

    (The paper prints ``max(0, mu1_low^2)``; the proof needs ``mu1_low > 0``.)
    """
    log_term = _maurer_log_term(m, delta / 2.0)
    mu1_low = mu1 - jnp.sqrt(2.0 / m * (kl + log_term))
    mu2_up = mu2 + jnp.sqrt(2.0 / m * (2.0 * kl + log_term))
    return cbound(mu1_low, jnp.minimum(1.0, mu2_up))


def cbound_quasi_uniform(
    mu1: ArrayLike, mu2: ArrayLike, m: ArrayLike, delta: ArrayLike, bound: ArrayLike = 1.0
) -> jax.Array:
    """laviolette2011 Theorem 2: KL-free C-bound for quasi-uniform posteriors, on the
    **majority-vote** risk, for voters bounded by ``B = bound`` and ``m > 8``.

    Each of ``|mu1^D - mu1^S| <= 2B sqrt(ln(2 sqrt(m) / d') / (2m))`` and
    ``|mu2^D - mu2^S| <= 2B^2 sqrt(ln(2 sqrt(m) / d') / (2m))`` holds with probability
    ``1 - d'`` for every quasi-uniform ``Q``; with ``d' = delta / 2`` (union bound)

    ``R(B_Q) <= 1 - max(0, mu1 - eps_1)^2 / min(B^2, mu2 + eps_2)``, the two deviations above.
    """
    deviation = 2.0 * jnp.sqrt(_maurer_log_term(m, delta / 2.0) / (2.0 * m))
    return cbound(mu1 - bound * deviation, jnp.minimum(bound**2, mu2 + bound**2 * deviation))


def empirical_bernstein(
    mean: ArrayLike, variance: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """Maurer & Pontil (2009) Theorem 4, for i.i.d. variables in ``[0, 1]`` and ``m >= 2``:

    .. math:: E[Z] \\le \\bar Z + \\sqrt{\\frac{2 V_m \\ln(2/\\delta)}{m}}
              + \\frac{7 \\ln(2/\\delta)}{3 (m - 1)},

    with ``V_m`` the unbiased sample variance. The penalized objective of VEB-Boost.
    """
    log_term = jnp.log(2.0) - jnp.log(delta)
    return mean + jnp.sqrt(2.0 * variance * log_term / m) + 7.0 * log_term / (3.0 * (m - 1.0))


_XI_CHUNK = 1024


def _stirling_error(n: jax.Array) -> jax.Array:
    """``ln n! - (n + 1/2) ln n + n - ln sqrt(2 pi)``: exact below 15, asymptotic series above
    (error below 1e-16), so no large ``ln n!`` is ever subtracted."""
    small = gammaln(n + 1.0) - xlogy(n + 0.5, n) + n - 0.5 * jnp.log(2.0 * jnp.pi)
    inv2 = 1.0 / jnp.maximum(n, 15.0) ** 2
    series = (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680)))) / (
        jnp.maximum(n, 15.0)
    )
    return jnp.where(n < 15.0, small, series)


@jax.jit
def xi(m: ArrayLike) -> jax.Array:
    """``xi(m) = sum_{k=0}^m C(m, k) (k/m)^k (1 - k/m)^(m-k)`` (Germain et al., JMLR 2015).

    Each term is the binomial probability ``P(Bin(m, k/m) = k)``; by Loader's saddle-point
    form it is ``sqrt(m / (2 pi k (m - k))) exp(s(m) - s(k) - s(m - k))`` for ``0 < k < m``,
    with ``s`` the Stirling error (the deviance terms vanish at ``p = k/m``), accurate to a few
    ulps in float32 and float64 alike. Summed in chunks of 1024 inside ``lax.while_loop``, so
    ``m`` may be traced. ``xi(m) ~ sqrt(pi m / 2)``; ``xi(1000) = 40.3032...``.
    """
    m = lax.stop_gradient(jnp.asarray(m, jnp.result_type(m, float)))
    chunks = jnp.floor(m / _XI_CHUNK) + 1.0

    def body(state):
        i, total = state
        k = i * _XI_CHUNK + jnp.arange(_XI_CHUNK, dtype=m.dtype)
        inner = (k > 0) & (k < m)
        kk, rest = jnp.where(inner, k, 1.0), jnp.where(inner, m - k, 1.0)
        log_term = _stirling_error(m) - _stirling_error(kk) - _stirling_error(rest)
        term = jnp.sqrt(m / (2.0 * jnp.pi * kk * rest)) * jnp.exp(log_term)
        return i + 1.0, total + jnp.sum(jnp.where(inner, term, 0.0))

    _, inner_sum = lax.while_loop(lambda s: s[0] < chunks, body, (jnp.zeros_like(m), m * 0))
    return inner_sum + jnp.where(m > 0, 2.0, 1.0)


def _xi_like(m: ArrayLike, *like: ArrayLike) -> jax.Array:
    """``xi(m)`` in the float dtype of the bound's other arguments (``m`` is often an int)."""
    return xi(m).astype(jnp.result_type(*like, float))


def pac_bound_0(gibbs_risk: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike):
    """PAC-Bound 0 (Germain et al., JMLR 2015) on the **majority-vote** risk:

    .. math:: R(B_Q) \\le 2\\,kl^{-1}_{up}(R_S(G_Q), (KL + \\ln(\\xi(m)/\\delta)) / m).
    """
    log_term = jnp.log(_xi_like(m, gibbs_risk, kl, delta) / delta)
    return 2.0 * kl_inv_upper(gibbs_risk, (kl + log_term) / m)


def pac_bound_1(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 1 (Germain et al., JMLR 2015) on the **majority-vote** risk: the C-bound
    ``1 - (1 - 2r)^2 / (1 - 2d)`` at the pessimistic Gibbs risk and disagreement

    .. math:: r = \\min(1/2, kl^{-1}_{up}(R_S, (KL + \\ln(2\\xi(m)/\\delta))/m)), \\quad
              d = \\max(0, kl^{-1}_{low}(d_S, (2KL + \\ln(2\\xi(m)/\\delta))/m)).
    """
    log_term = jnp.log(2.0 * _xi_like(m, gibbs_risk, disagreement, kl, delta) / delta)
    r = jnp.minimum(0.5, kl_inv_upper(gibbs_risk, (kl + log_term) / m))
    d = jnp.maximum(0.0, kl_inv_lower(disagreement, (2.0 * kl + log_term) / m))
    return cbound_from_risk(r, d)


def pac_bound_2(
    gibbs_risk: ArrayLike, disagreement: ArrayLike, kl: ArrayLike, m: ArrayLike, delta: ArrayLike
) -> jax.Array:
    """PAC-Bound 2 (Germain et al., JMLR 2015) on the **majority-vote** risk: the largest
    C-bound ``1 - (1 - 2e - d)^2 / (1 - 2d)`` over joint errors and disagreements with

    .. math:: kl(e_S, d_S \\| e, d) \\le (2KL + \\ln((\\xi(m) + m)/\\delta)) / m,
              \\quad d \\le 2(\\sqrt e - e), \\quad 2e + d < 1,

    ``e_S = R_S(G_Q) - d_S / 2``. Solved to ~1e-12 inside jit by ``cbound_trinomial_sup``;
    differentiable by the envelope theorem.
    """
    xi_m = _xi_like(m, gibbs_risk, disagreement, kl, delta)
    eps = (2.0 * kl + jnp.log((xi_m + m) / delta)) / m
    return cbound_trinomial_sup(gibbs_risk - disagreement / 2.0, disagreement, eps)
