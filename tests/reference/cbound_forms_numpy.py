"""Independent NumPy/SciPy references for the C-bound's PAC-Bayes forms on an ensemble's vote.

Written from the papers' formulas, never from pacbound (nothing here imports it):

- Viallard, Germain, Habrard, Morvant, "Self-bounding majority vote learning algorithms by the
  direct minimization of a tight PAC-Bayesian C-bound", ECML-PKDD 2021: the C-bound
  ``C(r, d) = 1 - (1 - 2r)^2 / (1 - 2d)`` at a PAC-Bayes upper bound on the Gibbs risk ``r``
  and a lower bound on the disagreement ``d`` (Seeger form: kl-inverses; McAllester form:
  square-root deviations) and the sup of the C-bound over a trinomial kl-ball on the joint error
  and the disagreement (joint form, PAC-Bound 2 of Germain et al., JMLR 2015).
- For a vote of any number of classes, the disagreement is replaced by the pairs' split rate
  ``d' = E_{rho^2}[P(exactly one of h, h' errs)]`` and the joint error by the tandem error
  ``e = E_{rho^2}[P(both err)]``; out of bag each voter's loss is a mean over its own
  out-of-bag examples (sample size ``n = min_j``) and each pair's over the examples both left
  out (``n2 = min_{j,k}``), as the tandem bound of Masegosa et al. (NeurIPS 2020) does.
- Constants: ``2 xi(n)`` (Seeger, ``delta / 2`` per term), ``4 sqrt(n)`` (McAllester, Maurer's
  ``2 sqrt(n)`` at ``delta / 2``), ``xi(n2) + n2`` (joint).

Float64 references (``seeger``, ``mcallester``, ``joint``) use ``scipy.optimize.brentq`` for
the kl-inverses and, for the joint form, the 1-D profile over ``d`` of the largest feasible
joint error (brentq on the trinomial kl itself), maximized on a grid and refined by a bounded
Brent search (the C-bound is concave and the ball convex, so the profile is unimodal).
``ld_*``: extended-precision values *not above* the exact bounds (inner ends of bisection
brackets), from :mod:`tests.reference.mpmath_bounds`, for the certification checks.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from tests.reference import mpmath_bounds as mpb
from tests.reference.bounds_numpy import (
    binary_kl,
    kl_inv_lower,
    kl_inv_upper,
    log_xi,
    trinomial_kl,
)

__all__ = [
    "cbound",
    "joint",
    "ld_joint",
    "ld_mcallester",
    "ld_seeger",
    "mcallester",
    "mp_mcallester",
    "mp_seeger",
    "pair_statistics",
    "posterior_statistics",
    "seeger",
]


def pair_statistics(predictions, labels, mask=None):
    """Per-voter risks, per-pair both-err and exactly-one-errs rates, and ``(n, n2)``.

    Each voter's risk is over the rows where it is evaluated (``mask[:, j]``), each pair's rates
    over the rows where both are.
    """
    errors = np.asarray(predictions) != np.asarray(labels)[:, None]
    mask = np.ones(errors.shape, bool) if mask is None else np.asarray(mask, bool)
    k = errors.shape[1]
    risks = np.array([errors[mask[:, j], j].mean() for j in range(k)])
    both, one, counts = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k), int)
    for j in range(k):
        for i in range(k):
            rows = mask[:, j] & mask[:, i]
            counts[j, i] = rows.sum()
            a, b = errors[rows, j], errors[rows, i]
            both[j, i] = np.mean(a & b)
            one[j, i] = np.mean(a ^ b)
    return {
        "risks": risks,
        "both": both,
        "one": one,
        "n": int(mask.sum(axis=0).min()),
        "n2": int(counts.min()),
    }


def posterior_statistics(stats, rho):
    """``(gibbs risk, joint error, split rate, KL(rho || uniform))`` at ``rho``."""
    rho = np.asarray(rho, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = float(np.sum(np.where(rho > 0, rho * np.log(rho * rho.size), 0.0)))
    return (
        float(rho @ stats["risks"]),
        float(rho @ stats["both"] @ rho),
        float(rho @ stats["one"] @ rho),
        max(kl, 0.0),
    )


def cbound(r, d):
    """``1 - (1 - 2r)^2 / (1 - 2d)``; 1 where ``r >= 1/2`` or ``d >= 1/2``."""
    if r >= 0.5 or d >= 0.5:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - (1.0 - 2.0 * r) ** 2 / (1.0 - 2.0 * d))))


def seeger(r, d, kl, n, n2, delta):
    """Seeger form: ``C(r_up, d_low)`` with ``r_up = kl^-1_up(r, (KL + ln(2 xi(n)/delta))/n)``
    and ``d_low = kl^-1_low(min(d, 1/2), (2KL + ln(2 xi(n2)/delta))/n2)``."""
    r_up = kl_inv_upper(r, (kl + math.log(2.0) + log_xi(n) - math.log(delta)) / n)
    level = (2.0 * kl + math.log(2.0) + log_xi(n2) - math.log(delta)) / n2
    d_low = kl_inv_lower(min(d, 0.5), level)
    return cbound(min(r_up, 0.5), max(d_low, 0.0))


def mcallester(r, d, kl, n, n2, delta):
    """McAllester form: ``r_up = r + sqrt((KL + ln(4 sqrt(n)/delta)) / (2n))``, ``d_low = d -
    sqrt((2 KL + ln(4 sqrt(n2)/delta)) / (2 n2))``."""
    r_up = r + math.sqrt((kl + math.log(4.0 * math.sqrt(n) / delta)) / (2.0 * n))
    d_low = min(d, 0.5) - math.sqrt((2.0 * kl + math.log(4.0 * math.sqrt(n2) / delta)) / (2.0 * n2))
    return cbound(min(r_up, 0.5), max(d_low, 0.0))


def joint_eps(kl, n2, delta):
    """``(2 KL + ln((xi(n2) + n2) / delta)) / n2``."""
    return (2.0 * kl + math.log(math.exp(log_xi(n2)) + n2) - math.log(delta)) / n2


def _joint_profile(d, e_s, d_s, eps):
    """Largest C-bound on the slice of disagreement ``d`` of the ball (``-inf`` if empty)."""
    if not 0.0 <= d < 0.5:
        return -math.inf
    e_star = (1.0 - d) * e_s / (1.0 - d_s)  # the kl's minimizer in e on this slice
    if trinomial_kl(e_s, d_s, e_star, d) > eps:
        return -math.inf
    top = (1.0 - d) / 2.0
    if trinomial_kl(e_s, d_s, top, d) <= eps:
        return 1.0
    e = brentq(lambda x: trinomial_kl(e_s, d_s, x, d) - eps, e_star, top, xtol=1e-16, rtol=1e-15)
    return 1.0 - (1.0 - 2.0 * e - d) ** 2 / (1.0 - 2.0 * d)


def joint(e_s, d_s, kl, n2, delta, n_grid=401):
    """Joint form: ``sup 1 - (1 - 2e - d)^2 / (1 - 2d)`` over ``kl(e_S, d_S || e, d) <= eps``,
    ``2e + d < 1`` (1 when ``d_S > 1/2``)."""
    if d_s > 0.5:
        return 1.0
    eps = joint_eps(kl, n2, delta)
    lo, hi = kl_inv_lower(d_s, eps), min(kl_inv_upper(d_s, eps), 0.5)
    ds = np.linspace(lo, hi, n_grid)
    values = np.array([_joint_profile(d, e_s, d_s, eps) for d in ds])
    i = int(np.argmax(values))
    best = float(values[i])
    if best >= 1.0:
        return 1.0
    a, b = ds[max(i - 1, 0)], ds[min(i + 1, n_grid - 1)]
    res = minimize_scalar(
        lambda d: -_joint_profile(d, e_s, d_s, eps),
        bounds=(a, b),
        method="bounded",
        options={"xatol": 1e-14},
    )
    if np.isfinite(res.fun):
        best = max(best, float(-res.fun))
    return float(min(1.0, best))


# ------------------------------------------------------------------------------ certification
def mp_seeger(r, d, kl, n, n2, delta):
    """The Seeger form at 50 digits (mpmath; exact for the given floats)."""
    mp = mpb.mp
    with mp.workdps(mpb.DPS):
        log_delta = mp.log(mp.mpf(float(delta)))
        level_r = (mp.mpf(float(kl)) + mp.log(2 * mpb.mp_xi(n)) - log_delta) / n
        level_d = (2 * mp.mpf(float(kl)) + mp.log(2 * mpb.mp_xi(n2)) - log_delta) / n2
        r_up = min(mp.mpf(0.5), mpb.mp_kl_inv_upper(r, level_r))
        d_low = max(mp.mpf(0), mpb.mp_kl_inv_lower(min(float(d), 0.5), level_d))
        return _mp_cbound(r_up, d_low)


def mp_mcallester(r, d, kl, n, n2, delta):
    """The McAllester form at 50 digits."""
    mp = mpb.mp
    with mp.workdps(mpb.DPS):
        kl, delta = mp.mpf(float(kl)), mp.mpf(float(delta))
        r_up = mp.mpf(float(r)) + mp.sqrt((kl + mp.log(4 * mp.sqrt(n) / delta)) / (2 * n))
        d_low = mp.mpf(min(float(d), 0.5)) - mp.sqrt(
            (2 * kl + mp.log(4 * mp.sqrt(n2) / delta)) / (2 * n2)
        )
        return _mp_cbound(min(r_up, mp.mpf(0.5)), max(d_low, mp.mpf(0)))


def _mp_cbound(r, d):
    if r >= 0.5 or d >= 0.5:
        return mpb.mp.mpf(1)
    return max(mpb.mp.mpf(0), 1 - (1 - 2 * r) ** 2 / (1 - 2 * d))


def ld_seeger(r, d, kl, n, n2, delta):
    """:func:`mp_seeger` rounded to the nearest float: a float ``>=`` the exact bound is ``>=``
    it (rounding is monotone), so a certified value must be."""
    return float(mp_seeger(r, d, kl, n, n2, delta))


def ld_mcallester(r, d, kl, n, n2, delta):
    """Float of :func:`mp_mcallester`."""
    return float(mp_mcallester(r, d, kl, n, n2, delta))


def ld_joint(e_s, d_s, kl, n2, delta):
    """The joint form in long double at a feasible point (a value ``<=`` the supremum)."""
    kl_ld, delta_ld = np.longdouble(float(kl)), np.longdouble(float(delta))
    n2_ld = np.longdouble(int(n2))
    eps = (2 * kl_ld + np.log(mpb.ld_xi(int(n2)) + n2_ld) - np.log(delta_ld)) / n2_ld
    return float(mpb.ld_trinomial_sup(float(e_s), float(d_s), eps))


def _self_check():
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = rng.beta(1.0, 4.0, size=400)
        r, e = float(w.mean()), float((w**2).mean())
        d = 2.0 * (r - e)
        for n, n2 in ((400, 400), (300, 120)):
            args = (r, d, 0.3, n, n2, 0.05)
            assert abs(seeger(*args) - ld_seeger(*args)) < 1e-12
            assert abs(mcallester(*args) - ld_mcallester(*args)) < 1e-12
            assert abs(joint(e, d, 0.3, n2, 0.05) - ld_joint(e, d, 0.3, n2, 0.05)) < 1e-9
    assert binary_kl(0.1, 0.1) == 0.0
    print("cbound_forms_numpy self-check passed")


if __name__ == "__main__":
    _self_check()
