"""Extended-precision references for the certified second-order bounds.

Written from the papers' formulas (the docstrings of ``tests/reference/second_order_numpy.py``
and [WMLIS21], [WS22], [GLLMR15]), never from the JAX code. Vectorized NumPy in x87 extended
precision (``np.longdouble``, unit roundoff 5.4e-20), with the kl-inverses bracketed by
``mpmath_bounds.ld_kl_inv`` (``lo <= root <= hi``); the grids' Lambert W values come from
mpmath at 50 digits. Each function returns ``(lo, hi)``: the exact value of the formula for the
given floats lies in ``[lo, hi]`` up to long-double rounding (a closed form gives ``lo = hi``),
so a certified bound is ``>= lo`` and its tightness loss is at most ``value - hi``.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

from tests.reference.mpmath_bounds import DPS, _ld, ld_binary_kl, ld_cbound, ld_kl_inv, ld_xi

LD = np.longdouble


def _level(kl_term, n, delta, factor):
    """(kl_term + ln(factor sqrt(n) / delta)) / n."""
    kl_term, n, delta = _ld(kl_term, n, delta)
    return (np.maximum(kl_term, 0) + np.log(factor * np.sqrt(n)) - np.log(delta)) / n


def _unit(lo, hi):
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


def tnd_kl(t, kl, n2, delta):
    lo, hi = ld_kl_inv(t, _level(2 * _ld(kl)[0], n2, delta, 2), True)
    return _unit(4 * lo, 4 * hi)


def tnd_lambda(t, kl, n2, delta, lam):
    t, kl, n2, delta, lam = _ld(t, kl, n2, delta, lam)
    scale = 1 - lam / 2
    value = 4 * (t / scale + n2 * _level(2 * kl, n2, delta, 2) / (lam * scale * n2))
    return _unit(value, value)


def dis(g, d, kl, n, m, delta):
    kl = _ld(kl)[0]
    up = ld_kl_inv(g, _level(kl, n, delta, 4), True)
    low = ld_kl_inv(d, _level(2 * kl, m, delta, 4), False)
    return _unit(4 * up[0] - 2 * low[1], 4 * up[1] - 2 * low[0])


def _chebyshev_cantelli(numerator, mu):
    return np.maximum(numerator, 0) / (LD(0.5) - mu) ** 2


def cctnd(t, g, kl, n, n2, delta, mu):
    kl, mu = _ld(kl, mu)
    tandem = ld_kl_inv(t, _level(2 * kl, n2, delta, 4), True)
    eps = _level(kl, n, delta, 4)
    g_low, g_up = ld_kl_inv(g, eps, False), ld_kl_inv(g, eps, True)
    # -2 mu G: at G's lower root for mu >= 0 (its upper end gives the smaller value)
    g_for_lo = np.where(mu >= 0, g_low[1], g_up[0])
    g_for_hi = np.where(mu >= 0, g_low[0], g_up[1])
    lo = _chebyshev_cantelli(tandem[0] - 2 * mu * g_for_lo + mu**2, mu)
    hi = _chebyshev_cantelli(tandem[1] - 2 * mu * g_for_hi + mu**2, mu)
    return _unit(lo, hi)


def split_kl_mu_tandem(both, one, neither, kl, n2, delta, mu):
    """[WS22]: mid + (b - mid) kl_up(both) - (mid - a) kl_low(minus rate), / (1/2 - mu)^2."""
    both, one, neither, kl, mu = _ld(both, one, neither, kl, mu)
    eps = _level(2 * kl, n2, delta, 4)
    high, mid_value, low_value = (1 - mu) ** 2, -mu * (1 - mu), mu**2
    a = np.where(mu >= 0, mid_value, low_value)
    mid = np.where(mu >= 0, low_value, mid_value)
    minus_rate = np.where(mu >= 0, one, neither)
    plus = ld_kl_inv(both, eps, True)
    minus = ld_kl_inv(minus_rate, eps, False)
    lo = mid + (high - mid) * plus[0] - (mid - a) * minus[1]
    hi = mid + (high - mid) * plus[1] - (mid - a) * minus[0]
    return _unit(_chebyshev_cantelli(lo, mu), _chebyshev_cantelli(hi, mu))


def pac_bound_1_prime(g, d, kl, m, m_u, delta):
    kl, delta = _ld(kl, delta)
    r_eps = (kl + np.log(2 * ld_xi(m)) - np.log(delta)) / np.asarray(m).astype(LD)
    d_eps = (2 * kl + np.log(2 * ld_xi(m_u)) - np.log(delta)) / np.asarray(m_u).astype(LD)
    r, dd = ld_kl_inv(g, r_eps, True), ld_kl_inv(d, d_eps, False)
    lo = ld_cbound(1 - 2 * np.minimum(0.5, r[0]), 1 - 2 * dd[1])
    hi = ld_cbound(1 - 2 * np.minimum(0.5, r[1]), 1 - 2 * dd[0])
    return _unit(lo, hi)


def _capped_slice(d, e_s, d_s, eps, cap):
    """C-bound at a feasible point of the slice of disagreement d (``-inf`` if none is known):
    ``e = min(cap, top of the slice)``, feasible when the slice's bottom is below the cap."""
    slack = (eps - ld_binary_kl(d_s, d)) / (1 - d_s)
    ok = slack >= 0
    slack = np.maximum(slack, 0)
    top = (1 - d) * ld_kl_inv(e_s / (1 - d_s), slack, True, halvings=72)[0]
    bottom = (1 - d) * ld_kl_inv(e_s / (1 - d_s), slack, False, halvings=72)[1]
    e = np.minimum(top, cap)
    ok &= bottom <= cap
    margin = 1 - 2 * np.minimum(e, (1 - d) / 2) - d
    value = np.where(margin <= 0, LD(1), 1 - margin**2 / np.where(margin <= 0, 1, 1 - 2 * d))
    return np.where(ok, value, -np.inf)


def capped_trinomial_sup(e_s, d_s, eps, cap, steps=70):
    """The C-bound's sup over kl(e_S, d_S || e, d) <= eps, e <= cap: golden sections over d of
    the capped slice maxima (concave in d), the best feasible value found (<= the sup)."""
    e_s, d_s, eps, cap = np.broadcast_arrays(*_ld(e_s, d_s, eps, cap))
    lo = ld_kl_inv(d_s, eps, False)[1]
    hi = np.minimum(ld_kl_inv(d_s, eps, True)[0], LD(0.5))
    ratio = (np.sqrt(LD(5)) - 1) / 2
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = (_capped_slice(x, e_s, d_s, eps, cap) for x in (x1, x2))
    best = np.maximum(f1, f2)
    for _ in range(steps):
        left = f1 >= f2
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
        new = np.where(left, hi - ratio * (hi - lo), lo + ratio * (hi - lo))
        f_new = _capped_slice(new, e_s, d_s, eps, cap)
        x1, x2 = np.where(left, new, x2), np.where(left, x1, new)
        f1, f2 = np.where(left, f_new, f2), np.where(left, f1, f_new)
        best = np.maximum(best, f_new)
    return np.maximum(best, ld_cbound(1 - 2 * e_s - d_s, 1 - 2 * d_s))


def pac_bound_2_prime(g, d, kl, m, delta):
    """[GLLMR15]'s 2' (the authors' code): the capped trinomial supremum; lo only (a feasible
    value), returned as both ends (its search is converged to far below float64's ulp)."""
    g, d, kl, delta = _ld(g, d, kl, delta)
    mm, xi = np.asarray(m).astype(LD), ld_xi(m)
    e_s = np.maximum(g - d / 2, 0)
    cap_level = (2 * kl + np.log(2 * xi) - np.log(delta)) / mm
    cap = np.minimum(LD(0.5), ld_kl_inv(e_s, cap_level, True)[0])
    eps = (2 * kl + np.log(2 * (xi + mm)) - np.log(delta)) / mm
    value = np.clip(capped_trinomial_sup(e_s, d, eps, cap), 0, 1)
    return value, value


# ------------------------------------------------------------------ grids (CCPBB, [WMLIS21])


def _lambert(x, branch):
    with mp.workdps(DPS):
        return LD(mp.nstr(mp.lambertw(mp.mpf(str(x)), branch).real, 30))


def _mu_range(mu):
    return np.maximum(1 - mu, 1 - 2 * mu)


def variance_bound(v, kl, n2, delta, mu, c1=1.05):
    """[WMLIS21] Thm 13: min over t_i = c1^i t_min, k_lambda points, of
    V / (1 - t) + K^2 (2KL + ln(k / delta)) / (2 (n2 - 1) t (1 - t))."""
    v, kl, n2, delta, mu, c1 = _ld(v, kl, n2, delta, mu, c1)
    root = np.sqrt((n2 - 1) / -np.log(delta) + 1)
    count = np.maximum(np.ceil(np.log((root + 1) / 2) / np.log(c1)), 1)
    out = np.full(v.shape, np.inf, dtype=LD)
    for i in range(int(count.max())):
        t = c1**i / (root + 1)
        value = np.maximum(v, 0) / (1 - t) + _mu_range(mu) ** 2 * (
            2 * kl + np.log(count) - np.log(delta)
        ) / (2 * (n2 - 1) * t * (1 - t))
        out = np.where(i < count, np.minimum(out, value), out)
    return out, out


def _gamma_grid(n2, delta, mu, c2):
    k = _mu_range(mu)
    z = (-4 * np.log(delta) / n2 - 1) / np.exp(LD(1))
    gamma_min = (1 + np.array([_lambert(x, 0) for x in z.ravel()], LD).reshape(z.shape)) / k
    v_min = -2 * k**2 * np.log(delta) / (n2 - 1)
    a = 1 / (1 + k**2 / v_min)
    arg = -a * np.exp(-a)
    w = np.array([_lambert(x, -1) for x in arg.ravel()], LD).reshape(arg.shape)
    gamma_max = -(w + a) / k
    count = np.maximum(np.ceil(np.log(gamma_max / gamma_min) / np.log(c2)), 1)
    return gamma_min, count


def bennett(mean, v, kl, n2, delta, mu, c2=1.05):
    """[WMLIS21] Thm 9 over its gamma grid: min over gamma of mean + phi(gamma K) / (gamma K^2)
    min(V, K^2 / 4) + (2KL + ln(k / delta)) / (gamma n2), phi(x) = e^x - x - 1."""
    mean, v, kl, n2, delta, mu, c2 = _ld(mean, v, kl, n2, delta, mu, c2)
    gamma_min, count = _gamma_grid(n2, delta, mu, c2)
    k = _mu_range(mu)
    v = np.maximum(np.minimum(v, k**2 / 4), 0)
    out = np.full(mean.shape, np.inf, dtype=LD)
    for i in range(int(count.max())):
        gamma = gamma_min * c2**i
        x = gamma * k
        phi = np.expm1(x) - x
        value = (
            mean
            + phi / (gamma * k**2) * v
            + (2 * kl + np.log(count) - np.log(delta)) / (gamma * n2)
        )
        out = np.where(i < count, np.minimum(out, value), out)
    return out, out


def ccpbb(mean, v, kl, n2, delta, mu):
    """[WMLIS21] Thm 15 at delta / 2 each, clipped to [0, 1]."""
    half = _ld(delta)[0] / 2
    variance = variance_bound(v, kl, n2, half, mu)[0]
    numerator = bennett(mean, variance, kl, n2, half, mu)[0]
    value = np.clip(_chebyshev_cantelli(numerator, _ld(mu)[0]), 0, 1)
    return value, value
