"""Multiclass majority-vote statistics and C-bounds from the papers' definitions, in plain NumPy
loops (Laviolette et al., Neurocomputing 2017; Viallard et al., ECML-PKDD 2021). Never pacbound.
"""

import numpy as np


def probabilities(votes, k):
    """(m, n, K) class probabilities; one-hot for (m, n) label votes."""
    votes = np.asarray(votes)
    if votes.ndim == 3:
        return votes.astype(float)
    return (votes[:, :, None] == np.arange(k)[None, None, :]).astype(float)


def statistics(votes, y, q, k, weight=None):
    """Definitions by sums over voters and pairs of voters, example by example."""
    p = probabilities(votes, k)
    m, n, _ = p.shape
    weight = np.ones(m) if weight is None else np.asarray(weight, float)
    weight = weight / weight.sum()
    out = dict(margins=np.zeros(m), mu1=0.0, mu2=0.0, gibbs=0.0, joint=0.0, dis=0.0, mv=0.0)
    for i in range(m):
        score = np.zeros(k)
        for j in range(n):
            score += q[j] * p[i, j]
        yi = int(y[i])
        margin = score[yi] - max(score[c] for c in range(k) if c != yi)
        out["margins"][i] = margin
        gibbs = sum(q[j] * (1.0 - p[i, j, yi]) for j in range(n))
        joint = dis = 0.0
        for j in range(n):
            for jj in range(n):
                joint += q[j] * q[jj] * (1.0 - p[i, j, yi]) * (1.0 - p[i, jj, yi])
                dis += q[j] * q[jj] * (1.0 - float(p[i, j] @ p[i, jj]))
        w = weight[i]
        out["mu1"] += w * margin
        out["mu2"] += w * margin**2
        out["gibbs"] += w * gibbs
        out["joint"] += w * joint
        out["dis"] += w * dis
        out["mv"] += w * float(margin <= 0)
    return out


def cbound_moments(mu1, mu2):
    """Laviolette et al. 2017: 1 - mu1^2 / mu2 where mu1 > 0, else 1."""
    return 1.0 - mu1**2 / mu2 if (mu1 > 0 and mu2 > 0) else 1.0


def cbound_relaxed(r, e):
    """ECML21 / Laviolette 2017 relaxation: 1 - (1 - 2r)^2 / (1 - 4r + 4e) where r < 1/2."""
    return 1.0 - (1.0 - 2.0 * r) ** 2 / (1.0 - 4.0 * r + 4.0 * e) if r < 0.5 else 1.0


def pac_cbound(gibbs, joint, kl, m, delta):
    """PAC-Bayes form of the relaxation (germain2015 PAC-Bound 1's proof with the pairwise loss
    "exactly one of two voters errs", whose Q^2-mean is d' = 2 (r - e) and KL(Q^2 || P^2) = 2 KL):
    r = min(1/2, kl^-1_up(r_S, (KL + ln(2 xi(m)/delta))/m)),
    d' = max(0, kl^-1_low(d'_S, (2 KL + ln(2 xi(m)/delta))/m)), bound 1 - (1-2r)^2 / (1-2d').
    """
    from tests.reference import bounds_numpy as BR  # NumPy/SciPy only, never pacbound

    log_term = np.log(2.0) + BR.log_xi(m) - np.log(delta)
    r = min(0.5, BR.kl_inv_upper(gibbs, (kl + log_term) / m))
    d = max(0.0, BR.kl_inv_lower(2.0 * (gibbs - joint), (2.0 * kl + log_term) / m))
    if r >= 0.5 or d >= 0.5:
        return 1.0
    return float(1.0 - (1.0 - 2.0 * r) ** 2 / (1.0 - 2.0 * d))
