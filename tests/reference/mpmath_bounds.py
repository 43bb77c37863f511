"""High-precision references for the certified kl-inverses and PAC-Bayes bounds.

Written from the formulas of ``shared/design.md`` and the papers only, never from the JAX code.
Two layers:

* ``mp_*``: scalar mpmath at 50 significant digits, exact for the given floating inputs to far
  below float64 resolution (the inputs are converted exactly, every operation is carried with
  about 166 bits). Slow (milliseconds per call): spot checks, regressions, derivatives.
* ``ld_*``: vectorized NumPy in x87 extended precision (``np.longdouble``, 64-bit significand,
  unit roundoff 5.4e-20), used for the bulk property tests. kl-inverses are bisections that
  return a bracket ``lo <= root <= hi`` of width ~1e-19 (relative); the bounds are evaluated
  with that bracket's inner end where that makes the reference a value *not above* the exact
  bound (a bound is then certified when it is ``>=`` the reference). ``check_ld_against_mp``
  compares the two layers.

``xi(m) = sum_k C(m, k) (k/m)^k (1 - k/m)^(m-k)`` (Germain et al., 2015) equals
``int_0^inf e^-x (1 + x/m)^m dx`` (expand the binomial: ``int e^-x x^k = k!``), which is also
``1 + Q(m)`` with Ramanujan's ``Q`` function. ``mp_xi`` integrates that form with mpmath;
``ld_xi`` uses the exact sum for ``m < 128`` and, above, ``xi = 1 + (A - D) / 2`` with
``A = m! e^m / m^m`` (Stirling's series) and ``D = 2/3 + 8/(135 m) - 16/(2835 m^2) - ...``
(twice Ramanujan's theta series, coefficients checked against ``mp_xi`` in the self-check).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath as mp
import numpy as np

LD = np.longdouble
DPS = 50

# ------------------------------------------------------------------------------------------
# 1. mpmath, scalar
# ------------------------------------------------------------------------------------------


def _mpf(x):
    return mp.mpf(float(x)) if not isinstance(x, mp.mpf) else x


def mp_binary_kl(q, p):
    """kl(q || p) with 0 log 0 = 0, at 50 digits (at least)."""
    with mp.workdps(max(DPS, mp.mp.dps)):
        q, p = _mpf(q), _mpf(p)
        out = mp.mpf(0)
        if q > 0:
            out += q * mp.log(q / p) if p > 0 else mp.inf
        if q < 1:
            out += (1 - q) * mp.log((1 - q) / (1 - p)) if p < 1 else mp.inf
        return +out


def _mp_bisect(f, lo, hi, steps=200):
    """Bracket [lo, hi] of the sign change of an increasing f (f(lo) <= 0 < f(hi))."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return lo, hi


def mp_kl_inv_upper(q, eps):
    """The exact root sup {p in [q, 1]: kl(q||p) <= eps} (an mpf, 50 digits)."""
    with mp.workdps(DPS):
        q, eps = _mpf(q), _mpf(eps)
        if eps == 0 or q == 1:
            return q
        lo, hi = _mp_bisect(lambda p: mp_binary_kl(q, p) - eps, q, mp.mpf(1))
        return (lo + hi) / 2


def mp_kl_inv_lower(q, eps):
    """The exact root inf {p in [0, q]: kl(q||p) <= eps} (an mpf, 50 digits)."""
    with mp.workdps(DPS):
        q, eps = _mpf(q), _mpf(eps)
        if eps == 0 or q == 0:
            return q
        lo, hi = _mp_bisect(lambda p: eps - mp_binary_kl(q, p), mp.mpf(0), q)
        return (lo + hi) / 2


def mp_kl_inv_derivatives(q, eps, upper=True):
    """(dp/dq, dp/deps) of the kl-inverse by the implicit function theorem, in mpmath."""
    with mp.workdps(DPS):
        q, eps = _mpf(q), _mpf(eps)
        p = mp_kl_inv_upper(q, eps) if upper else mp_kl_inv_lower(q, eps)
        kl_p = (p - q) / (p * (1 - p))
        kl_q = mp.log(q / p) - mp.log((1 - q) / (1 - p))
        return -kl_q / kl_p, 1 / kl_p


def mp_xi(m):
    """xi(m) = int_0^inf exp(-x) (1 + x/m)^m dx, by mpmath quadrature (50 digits)."""
    with mp.workdps(DPS):
        m = mp.mpf(int(m))
        s = mp.sqrt(m)
        f = lambda x: mp.exp(-x + m * mp.log1p(x / m))  # noqa: E731
        return mp.quad(f, [0, s, 3 * s, 10 * s, 40 * s, mp.inf])


def _mp_log_term(m, delta, mult=1):
    return mp.log(2 * mp.sqrt(mp.mpf(int(m)))) - mp.log(_mpf(delta) / mult)


def mp_seeger(risk, kl, m, delta):
    """kl^-1_up(R_S, (KL + ln(2 sqrt(m)/delta)) / m)."""
    with mp.workdps(DPS):
        eps = (_mpf(kl) + _mp_log_term(m, delta)) / int(m)
        return mp_kl_inv_upper(risk, eps)


def mp_pac_bound_0(risk, kl, m, delta):
    """min(1, 2 kl^-1_up(R_S, (KL + ln(xi(m)/delta)) / m))."""
    with mp.workdps(DPS):
        eps = (_mpf(kl) + mp.log(mp_xi(m)) - mp.log(_mpf(delta))) / int(m)
        return min(mp.mpf(1), 2 * mp_kl_inv_upper(risk, eps))


# ------------------------------------------------------------------------------------------
# 2. extended precision, vectorized
# ------------------------------------------------------------------------------------------


def _ld(*xs):
    """Arrays in long double; float inputs converted exactly, long-double inputs kept."""
    return [
        np.asarray(x) if np.asarray(x).dtype == LD else np.asarray(x, dtype=float).astype(LD)
        for x in xs
    ]


def _ld_log_ratio(num, den, diff):
    """ln(num / den) with diff = num - den: log1p(diff/den) near 1, the plain log away from it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(den > 0, den, 1)
        near = np.abs(diff) < safe / 2
        return np.where(near, np.log1p(diff / safe), np.log(num / safe))


def ld_binary_kl(q, p):
    """kl(q||p) = [d - q ln(p/q)] + [-d - (1-q) ln((1-p)/(1-q))], d = p - q, in long double.

    Each bracket is >= 0; the logs avoid cancellation near p = q (log1p) and near p = 0 or 1
    (plain log of the ratio).
    """
    q, p = np.broadcast_arrays(*_ld(q, p))
    d = p - q
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(q > 0, d - q * _ld_log_ratio(p, q, d), d)
        b = np.where(q < 1, -d - (1 - q) * _ld_log_ratio(1 - p, 1 - q, -d), -d)
    return a + b


def ld_kl_inv(q, eps, upper=True, halvings=100):
    """Bracket (lo, hi) of the kl-inverse by bisection in long double, for arrays q, eps.

    ``lo <= root <= hi`` up to long-double rounding in kl (relative 1e-19 in p); the width is
    ``2^-halvings`` of [q, 1] (upper); the lower root is first bracketed within a factor 4 by
    geometric halvings from the smallest normal long double, then halved (relative width
    ~1e-19 down to 1e-4900).
    """
    q, eps = np.broadcast_arrays(*_ld(q, eps))
    if upper:
        lo, hi = q.copy(), np.ones_like(q)
    else:  # geometric halvings while the bracket spans orders of magnitude
        lo, hi = np.full_like(q, np.finfo(LD).smallest_normal), q.copy()
    for _ in range(halvings):
        mid = np.where(hi > 4 * lo, np.sqrt(lo * hi), (lo + hi) / 2) if not upper else (lo + hi) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = ld_binary_kl(q, mid) <= eps
        if upper:
            lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
        else:
            lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    zero = eps == 0
    lo, hi = np.where(zero, q, lo), np.where(zero, q, hi)
    return lo, hi


def ld_kl_inv_upper(q, eps):
    """(lo, hi) bracket of kl^-1_up."""
    return ld_kl_inv(q, eps, True)


def ld_kl_inv_lower(q, eps):
    """(lo, hi) bracket of kl^-1_low."""
    return ld_kl_inv(q, eps, False)


_STIRLING = [LD(1) / 12, -LD(1) / 360, LD(1) / 1260, -LD(1) / 1680, LD(1) / 1188]
# D(m) = 2 theta(m), Ramanujan's theta: 1/3 + 4/(135 m) - 8/(2835 m^2) - 16/(8505 m^3) + ...
_THETA2 = [
    LD(2) / 3,
    LD(8) / 135,
    -LD(16) / 2835,
    -LD(32) / 8505,
    LD(17984) / 12629925,
    LD(668288) / 492567075,
    -LD(1397504) / 1477701225,
]


@functools.cache
def _ld_xi_exact(m):
    """xi(m) for small m from the exact rational sum (the terms k = 0 and k = m are 1)."""
    total = sum(
        math.comb(m, k) * Fraction(k, m) ** k * Fraction(m - k, m) ** (m - k) for k in range(1, m)
    )
    return LD(2) + LD(total.numerator) / LD(total.denominator)


def ld_xi(m):
    """xi(m) in long double for an array of integers m >= 1 (see the module docstring)."""
    m = np.asarray(m)
    flat = m.ravel()
    out = np.empty(flat.shape, dtype=LD)
    for i, mi in enumerate(flat.tolist()):
        mi = int(mi)
        if mi < 128:
            out[i] = LD(2) if mi == 1 else _ld_xi_exact(mi)
            continue
        x = LD(mi)
        inv = 1 / x
        s = sum(c * inv ** (2 * j + 1) for j, c in enumerate(_STIRLING))
        a = np.sqrt(8 * np.arctan(LD(1)) * x) * np.exp(s)
        d = sum(c * inv**j for j, c in enumerate(_THETA2))
        out[i] = 1 + (a - d) / 2
    return out.reshape(m.shape)


def ld_log_term(m, delta):
    """ln(2 sqrt(m) / delta) in long double."""
    m, delta = _ld(m, delta)
    return np.log(2 * np.sqrt(m)) - np.log(delta)


def ld_mcallester(risk, kl, m, delta):
    risk, kl, m = _ld(risk, kl, m)
    return np.minimum(1, risk + np.sqrt((kl + ld_log_term(m, delta)) / (2 * m)))


def ld_seeger(risk, kl, m, delta):
    """Bracket (lo, hi) of Seeger's bound."""
    kl, m = _ld(kl, m)
    return ld_kl_inv_upper(risk, (kl + ld_log_term(m, delta)) / m)


def ld_catoni(risk, kl, m, delta, c):
    risk, kl, m, delta, c = _ld(risk, kl, m, delta, c)
    return np.minimum(1, (c * risk + (kl - np.log(delta)) / m) / -np.expm1(-c))


def ld_general_loss(loss, kl, m, delta, c, c_a, k_bar):
    loss, kl, m, delta, c, c_a, k_bar = _ld(loss, kl, m, delta, c, c_a, k_bar)
    scale = c / -np.expm1(-c)
    g = 1 - c_a + scale * (c_a - 1)
    return g + scale * (loss + 2 * c_a / (m * c) * (k_bar * kl - np.log(delta)))


def ld_cbound(mu1, mu2):
    """1 - mu1^2 / mu2 where mu1 > 0 and mu2 > 0, else 1."""
    mu1, mu2 = np.broadcast_arrays(*_ld(mu1, mu2))
    ok = (mu1 > 0) & (mu2 > 0)
    return np.where(ok, 1 - mu1**2 / np.where(ok, mu2, 1), LD(1))


def ld_cbound_roy2016(mu1, mu2, kl, m, delta):
    mu1, mu2, kl, m = _ld(mu1, mu2, kl, m)
    log_term = ld_log_term(m, np.asarray(delta, float) / 2)
    mu1_low = mu1 - np.sqrt(2 / m * (kl + log_term))
    mu2_up = mu2 + np.sqrt(2 / m * (2 * kl + log_term))
    return ld_cbound(mu1_low, np.minimum(1, mu2_up))


def ld_cbound_quasi_uniform(mu1, mu2, m, delta):
    mu1, mu2, m = _ld(mu1, mu2, m)
    dev = 2 * np.sqrt(ld_log_term(m, np.asarray(delta, float) / 2) / (2 * m))
    return ld_cbound(mu1 - dev, np.minimum(1, mu2 + dev))


def ld_empirical_bernstein(mean, variance, m, delta):
    mean, variance, m, delta = _ld(mean, variance, m, delta)
    log_term = np.log(LD(2)) - np.log(delta)
    value = mean + np.sqrt(2 * variance * log_term / m) + 7 * log_term / (3 * (m - 1))
    return np.minimum(1, value)


def ld_pac_bound_0(risk, kl, m, delta):
    """Bracket (lo, hi) of min(1, 2 kl^-1_up(R_S, (KL + ln(xi(m)/delta))/m))."""
    kl, delta = _ld(kl, delta)
    eps = (kl + np.log(ld_xi(m)) - np.log(delta)) / np.asarray(m).astype(LD)
    lo, hi = ld_kl_inv_upper(risk, eps)
    return np.minimum(1, 2 * lo), np.minimum(1, 2 * hi)


def ld_pac_bound_1(risk, dis, kl, m, delta):
    """PAC-Bound 1 at the inner ends of the kl-inverse brackets (a value <= the exact bound)."""
    kl, delta = _ld(kl, delta)
    log_term = np.log(2 * ld_xi(m)) - np.log(delta)
    m = np.asarray(m).astype(LD)
    r = np.minimum(0.5, ld_kl_inv_upper(risk, (kl + log_term) / m)[0])
    d = np.maximum(0, ld_kl_inv_lower(dis, (2 * kl + log_term) / m)[1])
    return ld_cbound(1 - 2 * r, 1 - 2 * d)


def _ld_slice(d, e_s, d_s, eps):
    """Largest C-bound over the e-slice of the trinomial ball at disagreement d (inner end)."""
    slack = np.maximum(eps - ld_binary_kl(d_s, d), 0) / (1 - d_s)
    e = (1 - d) * ld_kl_inv(e_s / (1 - d_s), slack, True, halvings=72)[0]
    margin = 1 - 2 * np.minimum(e, (1 - d) / 2) - d
    on_line = margin <= 0
    return np.where(on_line, LD(1), 1 - margin**2 / np.where(on_line, 1, 1 - 2 * d))


def ld_trinomial_sup(e_s, d_s, eps, steps=75):
    """sup of the C-bound over kl(e_S, d_S || e, d) <= eps, 2e + d <= 1, by golden sections
    over d of the slice maxima (the C-bound is jointly concave, the ball convex). The value is
    at a feasible point, so it is <= the supremum (to long-double rounding)."""
    e_s, d_s, eps = np.broadcast_arrays(*_ld(e_s, d_s, eps))
    lo = ld_kl_inv_lower(d_s, eps)[1]
    hi = np.minimum(ld_kl_inv_upper(d_s, eps)[0], LD(0.5))
    ratio = (np.sqrt(LD(5)) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = _ld_slice(x1, e_s, d_s, eps), _ld_slice(x2, e_s, d_s, eps)
    best = np.maximum(f1, f2)
    for _ in range(steps):
        left = f1 >= f2
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
        new = np.where(left, hi - ratio * (hi - lo), lo + ratio * (hi - lo))
        f_new = _ld_slice(new, e_s, d_s, eps)
        x1, x2, f1, f2 = (
            np.where(left, new, x2),
            np.where(left, x1, new),
            np.where(left, f_new, f2),
            np.where(left, f1, f_new),
        )
        best = np.maximum(best, f_new)
    empirical = ld_cbound(1 - 2 * e_s - d_s, 1 - 2 * d_s)
    return np.maximum(best, empirical)


def ld_pac_bound_2(risk, dis, kl, m, delta):
    kl, delta, risk, dis = _ld(kl, delta, risk, dis)
    eps = (2 * kl + np.log(ld_xi(m) + np.asarray(m).astype(LD)) - np.log(delta)) / np.asarray(
        m
    ).astype(LD)
    return ld_trinomial_sup(np.maximum(risk - dis / 2, 0), dis, eps)


# ------------------------------------------------------------------------------------------
# 3. self-check: the long-double layer against mpmath
# ------------------------------------------------------------------------------------------


def check_ld_against_mp(n=60, seed=0):
    """Max relative gaps of ld_xi and ld_kl_inv_* to their mpmath versions (printed)."""
    rng = np.random.default_rng(seed)
    ms = np.unique(np.r_[1, 2, 5, 127, 128, 129, 1000, np.exp(rng.uniform(np.log(10), 20.7, 30))])
    ms = ms.astype(np.int64)
    gaps = {
        int(mi): abs(
            float((LD(ld_xi(mi)) - LD(mp.nstr(mp_xi(mi), 30))) / LD(mp.nstr(mp_xi(mi), 30)))
        )
        for mi in ms
    }
    print({k: f"{v:.1e}" for k, v in gaps.items() if v > 1e-18})
    xi_gap = max(gaps.values())
    q = rng.uniform(0, 0.5, n)
    eps = np.exp(rng.uniform(np.log(1e-14), np.log(5.0), n))
    inv_gap = 0.0
    for upper in (True, False):
        lo, hi = ld_kl_inv(q, eps, upper)
        for i in range(n):
            exact = (mp_kl_inv_upper if upper else mp_kl_inv_lower)(q[i], eps[i])
            ex = LD(mp.nstr(exact, 30))
            assert lo[i] - abs(ex) * LD(4e-19) <= ex <= hi[i] + abs(ex) * LD(4e-19), (q[i], eps[i])
            inv_gap = max(inv_gap, float((hi[i] - lo[i]) / max(ex, LD(1e-300))))
    print(f"ld_xi vs mp_xi: max rel gap {xi_gap:.2e}; kl-inverse bracket width {inv_gap:.2e}")
    return xi_gap, inv_gap


if __name__ == "__main__":
    check_ld_against_mp()
