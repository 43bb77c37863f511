"""Independent NumPy/SciPy references for pacbound's statistics, kl tools and PAC-Bayes bounds.

Written from the papers (``shared/papers``) and the pinned formulas of ``shared/design.md``
only, never from the JAX implementation. Everything is float64, scalar, and favours clarity
over speed: Python loops, ``scipy.optimize.brentq`` for kl inverses, an explicit 2-D search
for PAC-Bound 2.

Sources (abbreviations used in the docstrings):

- germain2009: Germain, Lacasse, Laviolette, Marchand, Shanian, "From PAC-Bayes bounds to KL
  regularization", NIPS 2009 (Thm 3.1, Thm 3.2, section 4).
- laviolette2011: Laviolette, Marchand, Roy, "From PAC-Bayes bounds to quadratic programs for
  majority votes" (MinCq), ICML 2011 (Thm 1, Thm 2).
- roy2016: Roy, Laviolette, Marchand, "From PAC-Bayes bounds to convex programs" (CqBoost),
  AISTATS 2016 (Thm 2).
- germain2015: Germain, Lacasse, Laviolette, Marchand, Roy, "Risk bounds for the majority vote:
  from a PAC-Bayesian analysis to a learning algorithm", JMLR 16, 2015 (PAC-Bounds 0, 1, 2 as
  pinned in design.md).
- maurer2009: Maurer & Pontil, "Empirical Bernstein bounds and sample variance penalization",
  COLT 2009 (Thm 4).
- maurer2004: Maurer, "A note on the PAC-Bayesian theorem" (the 2 sqrt(m) / xi(m) constants).

Run ``python tests/reference/bounds_numpy.py`` for the self-check.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.special import gammaln, logsumexp

_BRENT_XTOL = 1e-15
_BRENT_RTOL = 4.0 * np.finfo(float).eps


# --------------------------------------------------------------------------------------------
# 1. Voter statistics from their classical definitions (voters with outputs in {-1, +1})
# --------------------------------------------------------------------------------------------


def _as_pm1_problem(H, y, q):
    H = np.asarray(H, dtype=float)
    q = np.asarray(q, dtype=float)
    if H.ndim != 2 or q.shape != (H.shape[1],):
        raise ValueError(f"H must be (m, n) and q (n,), got {H.shape} and {q.shape}")
    if y is not None:
        y = np.asarray(y, dtype=float)
        if y.shape != (H.shape[0],):
            raise ValueError(f"y must be (m,), got {y.shape}")
    return H, y, q


def gibbs_risk_pm1(H, y, q):
    """Empirical Gibbs risk R_S(G_Q) = sum_j q_j * mean_i 1[H_ij != y_i]."""
    H, y, q = _as_pm1_problem(H, y, q)
    return float(sum(q[j] * np.mean(H[:, j] != y) for j in range(H.shape[1])))


def disagreement_pm1(H, q):
    """Empirical disagreement d_S = sum_{j,k} q_j q_k mean_i 1[H_ij != H_ik]."""
    H, _, q = _as_pm1_problem(H, None, q)
    n = H.shape[1]
    return float(sum(q[j] * q[k] * np.mean(H[:, j] != H[:, k]) for j in range(n) for k in range(n)))


def joint_error_pm1(H, y, q):
    """Empirical joint error e_S = sum_{j,k} q_j q_k mean_i 1[H_ij != y_i and H_ik != y_i]."""
    H, y, q = _as_pm1_problem(H, y, q)
    n = H.shape[1]
    err = H != y[:, None]
    return float(
        sum(q[j] * q[k] * np.mean(err[:, j] & err[:, k]) for j in range(n) for k in range(n))
    )


def mv_risk(H, y, q):
    """Empirical majority-vote risk mean_i 1[y_i * (H q)_i <= 0] (a tie counts as an error)."""
    H, y, q = _as_pm1_problem(H, y, q)
    return float(np.mean(y * (H @ q) <= 0.0))


def moments(H, y, q):
    """First and second moments of the Q-margin, (mean_i y_i (Hq)_i, mean_i (Hq)_i^2).

    Computed with explicit Python loops over examples and voters (no matrix product).
    """
    H, y, q = _as_pm1_problem(H, y, q)
    m, n = H.shape
    s1 = 0.0
    s2 = 0.0
    for i in range(m):
        vote = 0.0
        for j in range(n):
            vote += q[j] * H[i, j]
        s1 += y[i] * vote
        s2 += vote * vote
    return s1 / m, s2 / m


# --------------------------------------------------------------------------------------------
# 2. Divergences
# --------------------------------------------------------------------------------------------


def _kl_term(q, p):
    """q ln(q / p) with 0 ln(0 / p) = 0 and +inf when q > 0 = p."""
    if q == 0.0:
        return 0.0
    if p == 0.0:
        return math.inf
    return q * (math.log(q) - math.log(p))


def _check_unit(name, v):
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got {v}")


def binary_kl(q, p):
    """kl(q || p) = q ln(q/p) + (1-q) ln((1-q)/(1-p)); 0 ln 0 = 0; +inf off the support."""
    q, p = float(q), float(p)
    _check_unit("q", q)
    _check_unit("p", p)
    return _kl_term(q, p) + _kl_term(1.0 - q, 1.0 - p)


def trinomial_kl(q1, q2, p1, p2):
    """KL between (q1, q2, 1-q1-q2) and (p1, p2, 1-p1-p2); 0 ln 0 = 0; +inf off the support."""
    q1, q2, p1, p2 = float(q1), float(q2), float(p1), float(p2)
    q3 = 1.0 - q1 - q2
    p3 = 1.0 - p1 - p2
    for name, v in (("q1", q1), ("q2", q2), ("p1", p1), ("p2", p2)):
        _check_unit(name, v)
    # tolerate round-off on the third cell
    q3 = 0.0 if -1e-15 < q3 < 0.0 else q3
    p3 = 0.0 if -1e-15 < p3 < 0.0 else p3
    if q3 < 0.0 or p3 < 0.0:
        raise ValueError("q1 + q2 and p1 + p2 must not exceed 1")
    return _kl_term(q1, p1) + _kl_term(q2, p2) + _kl_term(q3, p3)


def kl_divergence(q, p):
    """KL(Q || P) = sum_i q_i ln(q_i / p_i) for discrete distributions; 0 ln 0 = 0."""
    q = np.asarray(q, dtype=float).ravel()
    p = np.asarray(p, dtype=float).ravel()
    if q.shape != p.shape:
        raise ValueError(f"shapes differ: {q.shape} vs {p.shape}")
    return float(sum(_kl_term(float(a), float(b)) for a, b in zip(q, p, strict=True)))


# --------------------------------------------------------------------------------------------
# 3. kl inverses
# --------------------------------------------------------------------------------------------


def kl_inv_upper(q, eps, xtol=_BRENT_XTOL):
    """sup{p in [q, 1] : kl(q || p) <= eps}, by brentq (xtol 1e-15, rtol 4 eps_machine).

    The default xtol is absolute: roots within ~1e-15 of 1 (or, for kl_inv_lower, of 0) are
    exact in p to ~1e-15 only, not relatively; pass e.g. xtol=1e-300 for relative accuracy.
    """
    q, eps = float(q), float(eps)
    _check_unit("q", q)
    if eps < 0.0 or math.isnan(eps):
        raise ValueError(f"eps must be >= 0, got {eps}")
    if eps == 0.0 or q == 1.0:
        return q
    if math.isinf(eps):
        return 1.0
    top = math.nextafter(1.0, 0.0)
    if binary_kl(q, top) <= eps:  # the root would pass 1
        return 1.0
    return float(
        brentq(lambda p: binary_kl(q, p) - eps, q, top, xtol=xtol, rtol=_BRENT_RTOL, maxiter=2000)
    )


def kl_inv_lower(q, eps, xtol=_BRENT_XTOL):
    """inf{p in [0, q] : kl(q || p) <= eps}, by brentq (xtol 1e-15, rtol 4 eps_machine)."""
    q, eps = float(q), float(eps)
    _check_unit("q", q)
    if eps < 0.0 or math.isnan(eps):
        raise ValueError(f"eps must be >= 0, got {eps}")
    if eps == 0.0 or q == 0.0:
        return q
    if math.isinf(eps):
        return 0.0
    bottom = math.nextafter(0.0, 1.0)
    if binary_kl(q, bottom) <= eps:  # the root would pass 0
        return 0.0
    return float(
        brentq(
            lambda p: binary_kl(q, p) - eps, bottom, q, xtol=xtol, rtol=_BRENT_RTOL, maxiter=2000
        )
    )


# --------------------------------------------------------------------------------------------
# 4. xi(m)
# --------------------------------------------------------------------------------------------


def log_xi(m):
    """ln xi(m), xi(m) = sum_{k=0}^m C(m,k) (k/m)^k (1-k/m)^(m-k), in log space (0^0 = 1)."""
    m = int(m)
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    k = np.arange(m + 1, dtype=float)
    log_binom = gammaln(m + 1.0) - gammaln(k + 1.0) - gammaln(m - k + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(k > 0, k * np.log(k / m), 0.0)
        b = np.where(k < m, (m - k) * np.log1p(-k / m), 0.0)
    return float(logsumexp(log_binom + a + b))


def xi(m):
    """xi(m) = sum_k C(m,k) (k/m)^k (1-k/m)^(m-k) (germain2015, maurer2004)."""
    return math.exp(log_xi(m))


def xi_exact(m):
    """xi(m) as an exact Fraction (for small m; Fraction(0) ** 0 == 1)."""
    return sum(
        math.comb(m, k) * Fraction(k, m) ** k * Fraction(m - k, m) ** (m - k) for k in range(m + 1)
    )


# --------------------------------------------------------------------------------------------
# 5a. Bounds on the Gibbs risk R(G_Q) (R(B_Q) <= 2 R(G_Q))
# --------------------------------------------------------------------------------------------


def mcallester(risk, kl, m, delta):
    """McAllester bound in Maurer's form on the Gibbs risk R(G_Q) (design.md, pinned):

    R(G_Q) <= R_S(G_Q) + sqrt((KL + ln(2 sqrt(m) / delta)) / (2 m)), at most 1 (a risk).
    """
    return min(
        1.0, float(risk + math.sqrt((kl + math.log(2.0 * math.sqrt(m) / delta)) / (2.0 * m)))
    )


def seeger(risk, kl, m, delta):
    """Seeger / Maurer kl bound on the Gibbs risk R(G_Q) (design.md, pinned):

    R(G_Q) <= kl^-1_up(R_S(G_Q), (KL + ln(2 sqrt(m) / delta)) / m).
    """
    return kl_inv_upper(risk, (kl + math.log(2.0 * math.sqrt(m) / delta)) / m)


def catoni(risk, kl, m, delta, c):
    """Catoni-form bound on the Gibbs risk R(G_Q), germain2009 Thm 3.1 (any C' = c > 0):

    R(G_Q) <= [c R_S(G_Q) + (KL + ln(1/delta)) / m] / (1 - exp(-c)), at most 1 (a risk).
    """
    return min(1.0, float((c * risk + (kl + math.log(1.0 / delta)) / m) / (-math.expm1(-c))))


def general_loss(empirical_loss, kl, m, delta, c, c_a, k_bar):
    """Bound on the expected loss zeta_Q (hence on R(B_Q)), germain2009 Thm 3.2:

    zeta_Q <= g(c_a, C') + C'/(1 - e^-C') [zeta_hat + 2 c_a/(m C') (k_bar KL + ln(1/delta))],
    g(c_a, C') = 1 - c_a + C'/(1 - e^-C') (c_a - 1).

    Re-derived here from Thm 3.1 applied to the transformed posterior Q-bar, with
    zeta = 1 + c_a (2 R(G_Qbar) - 1) and KL(Qbar||Pbar) = k_bar KL(Q||P): it matches the text.
    """
    factor = c / (-math.expm1(-c))
    g = 1.0 - c_a + factor * (c_a - 1.0)
    slack = 2.0 * c_a / (m * c) * (k_bar * kl + math.log(1.0 / delta))
    return float(g + factor * (empirical_loss + slack))


def exponential_loss_constants(gamma):
    """(c_a, k_bar) of the exponential loss exp((2W-1)/gamma), germain2009 section 4:

    c_a = e^(1/gamma) - 1, k_bar = (1/gamma) / (1 - e^(-1/gamma)).
    """
    t = 1.0 / gamma
    return float(math.expm1(t)), float(t / (-math.expm1(-t)))


def quadratic_loss_constants(gamma):
    """(c_a, k_bar) of the quadratic loss ((1-2W)/gamma - 1)^2, germain2009 section 4:

    c_a = 2/gamma + 1/gamma^2, k_bar = (2 gamma + 2) / (2 gamma + 1).
    """
    return float(2.0 / gamma + 1.0 / gamma**2), float((2.0 * gamma + 2.0) / (2.0 * gamma + 1.0))


def _constants_from_coefficients(log_abs_a, ks):
    """c_a = sum |a_k|, k_bar = sum |a_k| k / c_a, from ln|a_k| (log space)."""
    log_c_a = logsumexp(log_abs_a)
    log_k_sum = logsumexp(log_abs_a + np.log(ks))
    return float(math.exp(log_c_a)), float(math.exp(log_k_sum - log_c_a))


def exponential_loss_constants_series(gamma, K=200):
    """(c_a, k_bar) of exp(x / gamma), x = 2W - 1, from its Taylor series 1 + sum a_k x^k.

    a_0 = exp(0) = 1 (so the loss has the form 1 + sum_{k>=1} a_k x^k required by
    germain2009), a_k = gamma^-k / k! for k >= 1. Summed up to K in log space; the truncation
    is negligible only when 1/gamma is well below K (the tail starts to shrink at k > 1/gamma).
    The closed forms of germain2009 section 4 agree with this series (checked in __main__).
    """
    ks = np.arange(1, int(K) + 1, dtype=float)
    log_abs_a = -ks * math.log(gamma) - gammaln(ks + 1.0)
    return _constants_from_coefficients(log_abs_a, ks)


def quadratic_loss_constants_series(gamma):
    """(c_a, k_bar) of ((1 - 2W)/gamma - 1)^2 = (-x/gamma - 1)^2, x = 2W - 1, from its expansion.

    The polynomial is 1 + (2/gamma) x + (1/gamma^2) x^2: the constant term is 1, as
    germain2009 requires, and c_a = 2/gamma + 1/gamma^2, k_bar = (2/gamma + 2/gamma^2) / c_a =
    (2 gamma + 2)/(2 gamma + 1), which agrees with the paper's closed forms.
    """
    poly = np.polynomial.Polynomial([-1.0, -1.0 / gamma]) ** 2  # (-1 - x/gamma)^2
    coef = poly.coef
    if not math.isclose(coef[0], 1.0, rel_tol=0.0, abs_tol=1e-12):
        raise ValueError(f"constant term of the quadratic loss is {coef[0]}, expected 1")
    a = np.abs(coef[1:])
    ks = np.arange(1, len(coef), dtype=float)
    c_a = float(np.sum(a))
    return c_a, float(np.sum(a * ks) / c_a)


# --------------------------------------------------------------------------------------------
# 5b. C-bound forms (bounds on the majority-vote risk R(B_Q))
# --------------------------------------------------------------------------------------------


def cbound(mu1, mu2):
    """C-bound, laviolette2011 Thm 1: R(B_Q) <= 1 - mu1^2 / mu2 if mu1 > 0 (and mu2 > 0), else 1."""
    if mu1 > 0.0 and mu2 > 0.0:
        return float(1.0 - mu1**2 / mu2)
    return 1.0


def cbound_roy2016(mu1, mu2, kl, m, delta):
    """PAC-Bayes C-bound with KL on R(B_Q), roy2016 Thm 2 (voters in [-1, 1]):

    R(B_Q) <= 1 - max(0, mu1_low)^2 / min(1, mu2_up),
    mu1_low = mu1 - sqrt(2/m [KL + ln(2 sqrt(m) / (delta/2))]),
    mu2_up  = mu2 + sqrt(2/m [2 KL + ln(2 sqrt(m) / (delta/2))]).

    The paper prints the numerator as max(0, (mu1_low)^2), which would be a no-op max and would
    reward a negative lower bound; the meaning (C-bound needs a positive first moment) is
    max(0, mu1_low)^2, i.e. the bound is 1 when mu1_low <= 0.
    """
    log_term = math.log(2.0 * math.sqrt(m) / (delta / 2.0))
    mu1_low = mu1 - math.sqrt(2.0 / m * (kl + log_term))
    mu2_up = mu2 + math.sqrt(2.0 / m * (2.0 * kl + log_term))
    if mu1_low <= 0.0:
        return 1.0
    return float(1.0 - mu1_low**2 / min(1.0, mu2_up))


def cbound_quasi_uniform(mu1, mu2, m, delta, bound=1.0):
    """KL-free C-bound on R(B_Q) for quasi-uniform Q on B-bounded voters, laviolette2011 Thm 2.

    Each of |M_Q^D - M_Q^S| <= 2B sqrt(ln(2 sqrt(m)/delta')) / sqrt(2m) and
    |M_{Q^2}^D - M_{Q^2}^S| <= 2B^2 sqrt(ln(2 sqrt(m)/delta')) / sqrt(2m) holds with probability
    1 - delta'; a union bound with delta' = delta/2 gives

    R(B_Q) <= 1 - max(0, mu1 - eps1)^2 / min(B^2, mu2 + eps2).

    What I read in the OCR text: "2B/In 2™ ... Vam" i.e. 2B sqrt(ln(2 sqrt(m)/delta))/sqrt(2m)
    (and 2B^2 for the second moment), stated for m >= 8 (Maurer's lemma). Re-derived from the
    proof: E_S E_{h~P} exp(m kl(.)) <= 2 sqrt(m) and kl >= 2(q-p)^2 with q - p = (M^D - M^S)/(2B)
    give m (M^D - M^S)^2 / (2B^2) <= ln(2 sqrt(m)/delta), i.e. |M^D - M^S| <=
    B sqrt(2 ln(2 sqrt(m)/delta)/m) = 2B sqrt(ln(2 sqrt(m)/delta))/sqrt(2m): consistent.
    """
    root = math.sqrt(math.log(2.0 * math.sqrt(m) / (delta / 2.0))) / math.sqrt(2.0 * m)
    mu1_low = mu1 - 2.0 * bound * root
    mu2_up = mu2 + 2.0 * bound**2 * root
    if mu1_low <= 0.0:
        return 1.0
    return float(1.0 - mu1_low**2 / min(bound**2, mu2_up))


def empirical_bernstein(mean, variance, m, delta):
    """Empirical Bernstein upper bound on E[Z] for Z in [0, 1], maurer2009 Thm 4:

    E Z <= mean + sqrt(2 V ln(2/delta) / m) + 7 ln(2/delta) / (3 (m - 1)),
    V the unbiased sample variance (divisor m - 1) of the m observations; at most 1 (Z <= 1).
    """
    log_term = math.log(2.0 / delta)
    value = mean + math.sqrt(2.0 * variance * log_term / m) + 7.0 * log_term / (3.0 * (m - 1.0))
    return min(1.0, float(value))


# --------------------------------------------------------------------------------------------
# 5c. germain2015 PAC-Bounds 0, 1, 2 (on R(B_Q)), as pinned in design.md
# --------------------------------------------------------------------------------------------


def pac_bound_0(gibbs, kl, m, delta):
    """germain2015 PAC-Bound 0 on R(B_Q): 2 kl^-1_up(R_S(G_Q), (KL + ln(xi(m)/delta)) / m),
    capped at 1 (a risk; the literal formula reaches 2).
    """
    return min(1.0, 2.0 * kl_inv_upper(gibbs, (kl + log_xi(m) - math.log(delta)) / m))


def pac_bound_1(gibbs, dis, kl, m, delta):
    """germain2015 PAC-Bound 1 on R(B_Q): the C-bound 1 - (1 - 2r)^2 / (1 - 2d) with

    r = min(1/2, kl^-1_up(R_S(G_Q), (KL + ln(2 xi(m)/delta)) / m)),
    d = max(0, kl^-1_low(d_S, (2 KL + ln(2 xi(m)/delta)) / m)).
    Returns 1 when r = 1/2 (first moment bound not positive) or d >= 1/2.
    """
    log_term = math.log(2.0) + log_xi(m) - math.log(delta)
    r = min(0.5, kl_inv_upper(gibbs, (kl + log_term) / m))
    d = max(0.0, kl_inv_lower(dis, (2.0 * kl + log_term) / m))
    if r >= 0.5 or d >= 0.5:
        return 1.0
    return float(1.0 - (1.0 - 2.0 * r) ** 2 / (1.0 - 2.0 * d))


def _pb2_objective(e, d):
    """C-bound in joint error e and disagreement d: 1 - (1 - 2e - d)^2 / (1 - 2d)."""
    return 1.0 - (1.0 - 2.0 * e - d) ** 2 / (1.0 - 2.0 * d)


def _pb2_eps(kl, m, delta):
    return (2.0 * kl + math.log(xi(m) + m) - math.log(delta)) / m


def _pb2_reaches_line(e_s, d_s, eps):
    """Whether {trinomial kl(e_s, d_s || e, d) <= eps} meets the line 2e + d = 1 (d < 1/2).

    Along the line (e, d) = ((1 - d)/2, d) the trinomial kl is convex in d, so its minimum over
    d in [0, 1/2] decides. On the line the curve constraint d <= 2(sqrt(e) - e) holds for all
    d <= 1/2, so the sup of the objective is then 1 (approached from inside).
    """
    if 2.0 * e_s + d_s >= 1.0:
        return True

    def on_line(d):
        return trinomial_kl(e_s, d_s, (1.0 - d) / 2.0, d)

    ds = np.linspace(0.0, 0.5, 2001)
    vals = np.array([on_line(d) for d in ds])
    i = int(np.argmin(vals))
    lo, hi = ds[max(i - 1, 0)], ds[min(i + 1, len(ds) - 1)]
    res = minimize_scalar(on_line, bounds=(lo, hi), method="bounded", options={"xatol": 1e-15})
    return bool(min(vals[i], res.fun) <= eps)


def _pb2_feasible(e, d, e_s, d_s, eps, tol=1e-12):
    if not (0.0 <= e and 0.0 <= d and 2.0 * e + d < 1.0):
        return False
    if d > 2.0 * (math.sqrt(e) - e) + tol:
        return False
    return trinomial_kl(e_s, d_s, e, d) <= eps + tol


def _pb2_grid(e_s, d_s, eps, n_grid):
    """Dense grid over the box holding the feasible set; returns (points, values) sorted desc."""
    # marginals of a trinomial kl-ball satisfy the binary kl constraint (data processing)
    e_lo, e_hi = kl_inv_lower(e_s, eps), min(0.5, kl_inv_upper(e_s, eps))
    d_lo, d_hi = kl_inv_lower(d_s, eps), min(0.5, kl_inv_upper(d_s, eps))
    E, D = np.meshgrid(np.linspace(e_lo, e_hi, n_grid), np.linspace(d_lo, d_hi, n_grid))
    E, D = E.ravel(), D.ravel()
    r_s = max(0.0, 1.0 - e_s - d_s)
    with np.errstate(divide="ignore", invalid="ignore"):

        def term(q, p):
            return np.where(q > 0.0, q * (np.log(q) - np.log(p)), 0.0)

        kl3 = term(e_s, E) + term(d_s, D) + term(r_s, 1.0 - E - D)
        kl3 = np.where(np.isnan(kl3), np.inf, kl3)
        ok = (kl3 <= eps) & (D <= 2.0 * (np.sqrt(E) - E)) & (2.0 * E + D < 1.0)
        val = np.where(ok, 1.0 - (1.0 - 2.0 * E - D) ** 2 / (1.0 - 2.0 * D), -np.inf)
    order = np.argsort(-val)
    order = order[np.isfinite(val[order])]
    return np.stack([E[order], D[order]], axis=1), val[order]


def _pb2_slsqp(e_s, d_s, eps, start):
    """Refine one start with SLSQP (analytic gradients); returns (value, (e, d)) or None."""
    r_s = max(0.0, 1.0 - e_s - d_s)
    tiny = 1e-14

    def neg_obj(x):
        return -_pb2_objective(x[0], x[1])

    def neg_obj_grad(x):
        e, d = x
        g = 1.0 - 2.0 * e - d
        return -np.array(
            [4.0 * g / (1.0 - 2.0 * d), 2.0 * g * (2.0 * e - d) / (1.0 - 2.0 * d) ** 2]
        )

    def kl_con(x):
        return eps - trinomial_kl(e_s, d_s, max(x[0], 0.0), max(x[1], 0.0))

    def kl_con_grad(x):
        e, d = x
        rest = r_s / (1.0 - e - d)
        return -np.array(
            [rest - (e_s / e if e_s > 0 else 0.0), rest - (d_s / d if d_s > 0 else 0.0)]
        )

    cons = [
        {"type": "ineq", "fun": kl_con, "jac": kl_con_grad},
        {
            "type": "ineq",
            "fun": lambda x: 2.0 * (math.sqrt(x[0]) - x[0]) - x[1],
            "jac": lambda x: np.array([1.0 / math.sqrt(x[0]) - 2.0, -1.0]),
        },
        {
            "type": "ineq",
            "fun": lambda x: 1.0 - 2.0 * x[0] - x[1] - tiny,
            "jac": lambda x: np.array([-2.0, -1.0]),
        },
    ]
    lo_e = max(kl_inv_lower(e_s, eps), tiny)
    lo_d = max(kl_inv_lower(d_s, eps), 0.0 if d_s == 0.0 else tiny)
    bounds = [(lo_e, 0.5), (lo_d, 0.5 - tiny)]
    try:
        res = minimize(
            neg_obj,
            np.asarray(start, dtype=float),
            jac=neg_obj_grad,
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options={"ftol": 1e-16, "maxiter": 500},
        )
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    e, d = float(res.x[0]), float(res.x[1])
    if not _pb2_feasible(e, d, e_s, d_s, eps):
        return None
    return _pb2_objective(e, d), (e, d)


def _pb2_profile(e_s, d_s, eps, n_grid=2001):
    """Cross-check: for fixed d the objective increases in e, so the sup lies at the largest
    feasible e, e_max(d) (root of the trinomial kl in e, left of the line 2e + d = 1); maximize
    the profile over d on a 1-D grid, then refine with a bounded Brent search.
    Valid only when the kl-ball does not reach the line (checked before).
    """
    d_lo = kl_inv_lower(d_s, eps)
    d_hi = min(kl_inv_upper(d_s, eps), 0.5)

    def profile(d):
        if not (0.0 <= d < 0.5):
            return -math.inf
        # minimizer of the kl in e for this d; the minimum is binary kl(d_S || d)
        e_star = (1.0 - d) * e_s / (1.0 - d_s)
        if trinomial_kl(e_s, d_s, e_star, d) > eps:
            return -math.inf
        top = (1.0 - d) / 2.0
        if trinomial_kl(e_s, d_s, top, d) <= eps:  # touches the line: the sup is 1
            return 1.0
        e_max = brentq(
            lambda e: trinomial_kl(e_s, d_s, e, d) - eps,
            e_star,
            top,
            xtol=_BRENT_XTOL,
            rtol=_BRENT_RTOL,
        )
        if d > 2.0 * (math.sqrt(e_max) - e_max):  # whole slice above the curve
            return -math.inf
        return _pb2_objective(e_max, d)

    ds = np.linspace(d_lo, d_hi, n_grid)
    vals = np.array([profile(d) for d in ds])
    i = int(np.argmax(vals))
    best = vals[i]
    lo, hi = ds[max(i - 1, 0)], ds[min(i + 1, n_grid - 1)]
    res = minimize_scalar(
        lambda d: -profile(d), bounds=(lo, hi), method="bounded", options={"xatol": 1e-14}
    )
    if np.isfinite(res.fun) and -res.fun > best:
        best = -res.fun
    return float(best)


def pac_bound_2_details(gibbs, dis, kl, m, delta, n_grid=801, n_starts=8):
    """All pieces of germain2015 PAC-Bound 2 (see pac_bound_2): dict with grid, slsqp, profile."""
    d_s = float(dis)
    e_s = float(gibbs) - d_s / 2.0
    if -1e-14 < e_s < 0.0:
        e_s = 0.0
    if e_s < 0.0:
        raise ValueError(f"gibbs - dis/2 = {e_s} < 0: inconsistent (gibbs, dis)")
    if 2.0 * e_s + d_s < 1.0 and d_s > 2.0 * (math.sqrt(e_s) - e_s) + 1e-12:
        raise ValueError(f"(gibbs, dis) = ({gibbs}, {dis}) has mu1^2 > mu2: no voters give it")
    eps = _pb2_eps(kl, m, delta)
    out = {"e_s": e_s, "d_s": d_s, "eps": eps}
    if _pb2_reaches_line(e_s, d_s, eps):
        out.update(reaches_line=True, grid=1.0, slsqp=1.0, profile=1.0, value=1.0)
        return out
    points, vals = _pb2_grid(e_s, d_s, eps, n_grid)
    grid_best = float(vals[0]) if len(vals) else _pb2_objective(e_s, d_s)
    starts = [points[k] for k in range(min(n_starts, len(points)))]
    starts += [np.array([e_s, d_s]), np.array([max(e_s, 1e-6) * 1.5, d_s * 0.8])]
    refined = [_pb2_slsqp(e_s, d_s, eps, s) for s in starts]
    slsqp_best = max((r[0] for r in refined if r is not None), default=-math.inf)
    profile_best = _pb2_profile(e_s, d_s, eps)
    value = max(grid_best, slsqp_best, profile_best, _pb2_objective(e_s, d_s))
    out.update(
        reaches_line=False, grid=grid_best, slsqp=slsqp_best, profile=profile_best, value=value
    )
    return out


def pac_bound_2(gibbs, dis, kl, m, delta):
    """germain2015 PAC-Bound 2 on R(B_Q) (design.md, pinned):

    sup of 1 - (1 - 2e - d)^2 / (1 - 2d) over (e, d) with
    trinomial kl(e_S, d_S || e, d) <= (2 KL + ln((xi(m) + m)/delta)) / m,
    d <= 2 (sqrt(e) - e), 2e + d < 1, e, d >= 0; e_S = gibbs - dis/2, d_S = dis.
    The sup is 1 when the kl-ball reaches the line 2e + d = 1.

    Computed as the max over a dense (e, d) grid, SLSQP refinements from the best grid points
    (plus the empirical point), and a 1-D profile over d with an exact root in e.
    """
    return float(pac_bound_2_details(gibbs, dis, kl, m, delta)["value"])


# --------------------------------------------------------------------------------------------
# 6. Self-check
# --------------------------------------------------------------------------------------------


def _self_check():
    rng = np.random.default_rng(0)

    # voter statistics: classical definitions vs the margin identities for +-1 voters
    m, n = 200, 7
    H = rng.choice([-1.0, 1.0], size=(m, n))
    y = rng.choice([-1.0, 1.0], size=m)
    H[:, 0] = y * np.where(rng.random(m) < 0.8, 1.0, -1.0)  # one good voter
    q = rng.dirichlet(np.ones(n))
    g, d, e = gibbs_risk_pm1(H, y, q), disagreement_pm1(H, q), joint_error_pm1(H, y, q)
    mu1, mu2 = moments(H, y, q)
    assert math.isclose(g, (1.0 - mu1) / 2.0, abs_tol=1e-12)
    assert math.isclose(d, (1.0 - mu2) / 2.0, abs_tol=1e-12)
    assert math.isclose(g, e + d / 2.0, abs_tol=1e-12)
    assert mv_risk(H, y, q) <= 2.0 * g + 1e-12
    assert mv_risk(H, y, q) <= cbound(mu1, mu2) + 1e-12
    print(f"stats: gibbs={g:.6f} dis={d:.6f} joint={e:.6f} mu1={mu1:.6f} mu2={mu2:.6f}")

    # divergences
    assert binary_kl(0.0, 0.0) == 0.0 and binary_kl(1.0, 1.0) == 0.0
    assert math.isinf(binary_kl(0.5, 0.0)) and math.isinf(binary_kl(0.5, 1.0))
    assert math.isclose(binary_kl(0.0, 0.5), math.log(2.0))
    assert math.isclose(trinomial_kl(0.2, 0.3, 0.2, 0.3), 0.0, abs_tol=1e-15)
    assert math.isinf(trinomial_kl(0.2, 0.3, 0.0, 0.3))
    assert math.isclose(
        trinomial_kl(0.2, 0.3, 0.1, 0.4), kl_divergence([0.2, 0.3, 0.5], [0.1, 0.4, 0.5])
    )
    assert math.isclose(kl_divergence([0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]), math.log(1.5))

    # kl inverses invert, and their edges
    for qq in (0.0, 1e-6, 0.01, 0.1, 0.3, 0.5, 0.9, 0.999):
        for ee in (1e-8, 1e-3, 0.05, 0.5, 3.0):
            up, lo = kl_inv_upper(qq, ee), kl_inv_lower(qq, ee)
            assert lo <= qq <= up
            # a tiny xtol inverts the kl itself to near machine precision ...
            up_t, lo_t = kl_inv_upper(qq, ee, xtol=1e-300), kl_inv_lower(qq, ee, xtol=1e-300)
            if up_t < 1.0 - 1e-13:
                assert math.isclose(binary_kl(qq, up_t), ee, rel_tol=1e-7, abs_tol=1e-14)
            if lo_t > 0.0:
                assert math.isclose(binary_kl(qq, lo_t), ee, rel_tol=1e-7, abs_tol=1e-14)
            # ... and the default xtol = 1e-15 is that accurate in p (absolutely)
            assert abs(up - up_t) <= 2e-15 + 1e-14 * up_t
            assert abs(lo - lo_t) <= 2e-15 + 1e-14 * lo_t
    assert kl_inv_upper(0.3, 0.0) == 0.3 and kl_inv_lower(0.3, 0.0) == 0.3
    assert kl_inv_upper(1.0, 0.2) == 1.0 and kl_inv_lower(0.0, 0.2) == 0.0
    assert kl_inv_upper(0.0, 50.0) == 1.0 and kl_inv_lower(1.0, 800.0) == 0.0
    assert math.isclose(kl_inv_upper(0.0, math.log(2.0)), 0.5, rel_tol=1e-13)

    # xi(m): known values, exact fractions for small m, sqrt(pi m / 2) growth
    for mm in range(1, 30):
        assert math.isclose(xi(mm), float(xi_exact(mm)), rel_tol=1e-12), mm
    assert xi_exact(1) == 2 and xi_exact(2) == Fraction(5, 2)
    assert math.isclose(xi(1000), 40.30321292, rel_tol=1e-9)
    assert math.isclose(xi(100), 13.20996063, rel_tol=1e-9)
    assert math.sqrt(math.pi * 1000 / 2) < xi(1000) < 2.0 * math.sqrt(1000)
    print(f"xi(100) = {xi(100):.12f}  xi(1000) = {xi(1000):.12f}")

    # general-loss constants: closed forms of germain2009 vs Taylor series
    for gam in (0.05, 0.1, 0.5, 1.0, 3.0):
        ce, ke = exponential_loss_constants(gam)
        cs, ks = exponential_loss_constants_series(gam)
        assert math.isclose(ce, cs, rel_tol=1e-12) and math.isclose(ke, ks, rel_tol=1e-12)
        cq, kq = quadratic_loss_constants(gam)
        cs, ks = quadratic_loss_constants_series(gam)
        assert math.isclose(cq, cs, rel_tol=1e-12) and math.isclose(kq, ks, rel_tol=1e-12)
    # with c_a = 1, k_bar = 1 Thm 3.2 reduces to 2 * (Thm 3.1 on R_S = (zeta_hat)/2) ... check
    zeta_hat = 0.4
    assert math.isclose(
        general_loss(zeta_hat, 2.0, 500, 0.05, 1.3, 1.0, 1.0),
        2.0 * catoni(zeta_hat / 2.0, 2.0, 500, 0.05, 1.3),
        rel_tol=1e-13,
    )

    # Gibbs-risk bounds: ordering sanity
    r, klv, mm, dl = 0.1, 5.0, 500, 0.05
    s_val = seeger(r, klv, mm, dl)
    assert r < s_val <= mcallester(r, klv, mm, dl) + 1e-12
    print(f"seeger(0.1, 5, 500, 0.05) = {s_val:.12f}")
    print(f"mcallester(0.1, 5, 500, 0.05) = {mcallester(r, klv, mm, dl):.12f}")
    print(f"catoni(0.1, 5, 500, 0.05, c=1) = {catoni(r, klv, mm, dl, 1.0):.12f}")

    # C-bound forms
    assert cbound(0.0, 0.5) == 1.0 and cbound(-0.1, 0.5) == 1.0 and cbound(0.3, 0.0) == 1.0
    cr = cbound_roy2016(0.3, 0.35, 1.0, 1000, 0.05)
    assert cbound(0.3, 0.35) < cr < 1.0
    assert cbound_roy2016(0.3, 0.35, 0.0, 10**12, 0.05) - cbound(0.3, 0.35) < 1e-4
    cq = cbound_quasi_uniform(0.3, 0.35, 1000, 0.05)
    assert cbound(0.3, 0.35) < cq < cr
    print(f"cbound_roy2016(0.3, 0.35, 1, 1000, 0.05) = {cr:.12f}")
    print(f"cbound_quasi_uniform(0.3, 0.35, 1000, 0.05) = {cq:.12f}")
    z = rng.random(50)
    eb = empirical_bernstein(z.mean(), z.var(ddof=1), 50, 0.05)
    assert eb > z.mean()
    print(f"empirical_bernstein(..) = {eb:.12f}")

    # germain2015 PAC-Bounds
    gib, dis, klv, mm, dl = 0.3, 0.35, 0.0, 1000, 0.05
    p0, p1 = pac_bound_0(gib, klv, mm, dl), pac_bound_1(gib, dis, klv, mm, dl)
    det = pac_bound_2_details(gib, dis, klv, mm, dl)
    p2 = det["value"]
    emp = cbound(1.0 - 2.0 * gib, 1.0 - 2.0 * dis)
    print(f"pac_bound_0 = {p0:.12f}  pac_bound_1 = {p1:.12f}  pac_bound_2 = {p2:.12f}")
    print(f"  pb2 grid={det['grid']:.12f} slsqp={det['slsqp']:.12f} profile={det['profile']:.12f}")
    assert emp < p2 < 1.0 and emp < p1 < 1.0
    assert det["grid"] <= p2 + 1e-15
    assert abs(det["grid"] - p2) < 2e-3  # grid resolution
    assert abs(det["slsqp"] - det["profile"]) <= 1e-7 * p2
    assert abs(det["slsqp"] - p2) <= 1e-7 * p2

    # more PAC-Bound 2 cases: empirical point is feasible, methods agree, KL large -> 1
    for gib, dis, klv, mm in [
        (0.2, 0.3, 0.0, 500),
        (0.25, 0.2, 2.0, 2000),
        (0.1, 0.15, 0.5, 300),
        (0.35, 0.45, 0.0, 5000),
        (0.15, 0.0, 0.0, 1000),
        (0.3, 0.4, 0.0, 100000),
        (0.3, 0.419, 0.1, 3000),
        (0.3, 0.42, 0.0, 3000),
        (0.01, 0.015, 0.0, 200),
    ]:
        det = pac_bound_2_details(gib, dis, klv, mm, 0.05)
        emp = cbound(1.0 - 2.0 * gib, 1.0 - 2.0 * dis)
        assert det["value"] >= emp - 1e-12, (gib, dis, det)
        if not det["reaches_line"]:
            assert abs(det["slsqp"] - det["profile"]) <= 1e-7 * det["value"], det
            assert abs(det["grid"] - det["value"]) < 5e-3, det
        print(f"  pb2({gib}, {dis}, {klv}, {mm}) = {det['value']:.12f} (C_S = {emp:.6f})")
    assert pac_bound_2(0.3, 0.35, 200.0, 1000, 0.05) == 1.0
    print("self-check passed")


if __name__ == "__main__":
    _self_check()
