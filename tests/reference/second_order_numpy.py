"""Independent NumPy/SciPy references for second-order bounds on the weighted majority vote.

Written straight from the papers, never from pacbound's JAX code: float64, scalar, Python loops
over voters and pairs, ``scipy.optimize.brentq`` for kl inverses (imported from
``tests.reference.bounds_numpy``), ``scipy.special.betainccinv`` for the binomial tail. Clarity over
speed.

Sources (abbreviations used in the docstrings):

- masegosa2020: Masegosa, Lorenzen, Igel, Seldin, "Second order PAC-Bayesian bounds for the
  weighted majority vote", NeurIPS 2020, arXiv 2007.13532.
- wu2021: Wu, Masegosa, Lorenzen, Igel, Seldin, "Chebyshev-Cantelli PAC-Bayes-Bennett inequality
  for the weighted majority vote", NeurIPS 2021, arXiv 2106.13624.
- wu2022: Wu, Seldin, "Split-kl and PAC-Bayes-split-kl inequalities for ternary random
  variables", NeurIPS 2022, arXiv 2206.00706.
- germain2015: Germain, Lacasse, Laviolette, Marchand, Roy, "Risk bounds for the majority vote:
  from a PAC-Bayesian analysis to a learning algorithm", JMLR 16, 2015 (PAC-Bounds 1', 2').
- langford2005: Langford, "Tutorial on practical prediction theory for classification", JMLR 6,
  2005 (binomial tail inversion, test set bound).
- lorenzen2019: Lorenzen, Igel, Seldin, "On PAC-Bayesian bounds for random forests", Machine
  Learning 108, 2019 (out-of-bag estimates).
- thiemann2017: Thiemann, Igel, Wintenberger, Seldin, "A strongly quasiconvex PAC-Bayesian
  bound", ALT 2017 (PAC-Bayes-lambda).
- tolstikhin2013: Tolstikhin, Seldin, "PAC-Bayes-Empirical-Bernstein inequality", NeurIPS 2013.
- maurer2004: Maurer, "A note on the PAC-Bayesian theorem" (the 2 sqrt(n) and xi(n) constants).

Provenance. The full text of wu2022 (its anonymous submission version) was read; it gives the
split-kl (its Thm 4), PAC-Bayes-split-kl (Thm 7), the test set bound as cited from langford2005
(Thm 8) and the split point chosen for the tandem loss with an offset. The bodies of masegosa2020,
wu2021 and germain2015 could not be opened from this session: their formulas below are as I know
the papers, each re-derived in its docstring, and cross-checked against the facts in the authors'
public code (github StephanLorenzen/MajorityVoteBounds for masegosa2020/wu2021/wu2022, and
GRAAL-Research/majority-vote-bounds for germain2015; read, never copied). Theorem numbers of
masegosa2020/wu2021 are given where the authors' code names them, otherwise by section/name only.
Every place where the authors' code does something else is noted in the docstring.

Conventions (one way everywhere):

- ``E``: ``(n_examples, n_voters)`` error indicators, ``E[i, j] = 1[h_j(x_i) != y_i]`` in {0, 1}.
- ``mask``: ``(n_examples, n_voters)`` booleans, ``mask[i, j]`` True iff example i may be used to
  evaluate voter j (out-of-bag for j, lorenzen2019). ``None`` means every example for every voter.
  A voter's empirical loss averages over its own examples; a pair's over the examples usable for
  both (the intersection of the two out-of-bag sets).
- ``weights``: optional ``(n_examples,)`` non-negative example weights (weighted means).
- ``rho``: ``(n_voters,)`` posterior, a probability vector.
- ``kl``: KL(rho || pi) in nats, of the posterior over *voters*. Pair (tandem) bounds use
  KL(rho^2 || pi^2) = 2 KL(rho || pi) internally; pass the voters' KL.
- ``n``: sample size of first-order statistics (out-of-bag: min_j |OOB_j|); ``n2``: of pair
  statistics (out-of-bag: min_{j,k} |OOB_j ∩ OOB_k|); see ``oob_sample_sizes``.
- ``delta``: confidence in (0, 1). Bounds on the majority-vote risk L(MV) (a probability) are
  clipped to [0, 1] when ``clip=True`` (the default); ``clip=False`` returns the literal formula.

Run ``python tests/reference/second_order_numpy.py`` for a printout of a few values.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import betainccinv, lambertw
from scipy.stats import binom

from tests.reference.bounds_numpy import (
    binary_kl,
    kl_inv_lower,
    kl_inv_upper,
    log_xi,
    trinomial_kl,
)

__all__ = [
    "bennett_gamma_grid",
    "bennett_optimal_gamma",
    "binomial_tail",
    "binomial_tail_inversion",
    "c_tandem_oracle_bound",
    "cbound_kl_ball_sup",
    "cc_oracle_bound",
    "cc_oracle_optimal_mu",
    "ccpbb_bound",
    "ccpbb_bound_grid",
    "cctnd_bound",
    "dis_bound",
    "disagreement",
    "disagreement_matrix",
    "error_matrix",
    "first_order_bound",
    "gibbs_risk",
    "majority_vote_risk",
    "mu_tandem_range",
    "mu_tandem_risk",
    "mu_tandem_split_risks",
    "mu_tandem_variance",
    "oob_sample_sizes",
    "pac_bayes_bennett_bound",
    "pac_bayes_lambda_bound",
    "pac_bayes_split_kl_bound",
    "pac_bayes_variance_bound",
    "pac_bound_1_prime",
    "pac_bound_2_prime",
    "paper_mu_grid",
    "split_kl_bound",
    "split_kl_inverse",
    "split_kl_tandem_bound",
    "split_kl_tandem_bound_grid",
    "tandem_risk",
    "tandem_risk_matrix",
    "test_set_bound",
    "tnd_bound",
    "tnd_lambda_bound",
    "tnd_optimal_lambda",
    "variance_lambda_grid",
    "variance_optimal_lambda",
]

_ROUND_OFF = 1e-12


# --------------------------------------------------------------------------------------------
# 0. Argument checks
# --------------------------------------------------------------------------------------------


def _unit(name, v):
    """A float in [0, 1] (round-off of 1e-12 outside is clipped back)."""
    v = float(v)
    if math.isnan(v) or v < -_ROUND_OFF or v > 1.0 + _ROUND_OFF:
        raise ValueError(f"{name} must lie in [0, 1], got {v}")
    return min(max(v, 0.0), 1.0)


def _delta(delta):
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    return delta


def _size(name, n, minimum=1):
    n = float(n)
    if not (math.isfinite(n) and n >= minimum):
        raise ValueError(f"{name} must be a finite number >= {minimum}, got {n}")
    return n


def _kl(kl):
    kl = float(kl)
    if not (math.isfinite(kl) and kl >= 0.0):
        raise ValueError(f"kl must be finite and >= 0, got {kl}")
    return kl


def _offset(mu):
    mu = float(mu)
    if not (math.isfinite(mu) and mu < 0.5):
        raise ValueError(f"mu must be finite and < 1/2, got {mu}")
    return mu


def _clip(value, clip):
    return min(max(float(value), 0.0), 1.0) if clip else float(value)


def _errors(E, mask, weights):
    """Checked (E, mask, weights) as float, bool, float arrays."""
    E = np.asarray(E, dtype=float)
    if E.ndim != 2:
        raise ValueError(f"E must be (n_examples, n_voters), got shape {E.shape}")
    if not np.all((E == 0.0) | (E == 1.0)):
        raise ValueError("E must hold 0/1 error indicators")
    mask = np.ones(E.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != E.shape:
        raise ValueError(f"mask must have the shape of E {E.shape}, got {mask.shape}")
    weights = np.ones(E.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    if weights.shape != (E.shape[0],) or not np.all(np.isfinite(weights) & (weights >= 0.0)):
        raise ValueError(f"weights must be ({E.shape[0]},), finite and >= 0")
    return E, mask, weights


def _posterior(rho, n_voters):
    rho = np.asarray(rho, dtype=float)
    if rho.shape != (n_voters,) or np.any(rho < 0.0) or abs(rho.sum() - 1.0) > 1e-9:
        raise ValueError(f"rho must be a probability vector of length {n_voters}")
    return rho


# --------------------------------------------------------------------------------------------
# 1. Statistics (any labels, any number of classes unless said otherwise)
# --------------------------------------------------------------------------------------------


def error_matrix(predictions, y):
    """E[i, j] = 1[predictions[i, j] != y[i]] as floats (labels of any type, any number of classes).

    Args:
        predictions: ``(n_examples, n_voters)`` predicted labels, ``predictions[i, j] = h_j(x_i)``.
        y: ``(n_examples,)`` true labels.
    """
    P, y = np.asarray(predictions), np.asarray(y)
    if P.ndim != 2 or y.shape != (P.shape[0],):
        raise ValueError(f"predictions must be (n, M) and y (n,), got {P.shape} and {y.shape}")
    return (P != y[:, None]).astype(float)


def _voter_means(values, mask, weights):
    """Per voter j: weighted mean of values[:, j] over the examples usable for j."""
    out = np.empty(values.shape[1])
    for j in range(values.shape[1]):
        w = weights * mask[:, j]
        if w.sum() <= 0.0:
            raise ValueError(f"voter {j} has no example to be evaluated on")
        out[j] = np.sum(w * values[:, j]) / w.sum()
    return out


def _pair_means(pair_values, mask, weights):
    """Per pair (j, k): weighted mean of pair_values(j, k) over the examples usable for both."""
    M = mask.shape[1]
    out = np.empty((M, M))
    for j in range(M):
        for k in range(M):
            w = weights * (mask[:, j] & mask[:, k])
            if w.sum() <= 0.0:
                raise ValueError(f"voters {j} and {k} share no example to be evaluated on")
            out[j, k] = np.sum(w * pair_values(j, k)) / w.sum()
    return out


def gibbs_risk(E, rho, mask=None, weights=None):
    """Empirical Gibbs risk E_rho[L^(h)] = sum_j rho_j L^(h_j, S_j).

    L^(h_j, S_j) = mean of E[i, j] over the examples usable for voter j (all, or its out-of-bag
    set S_j with ``mask``, lorenzen2019 / masegosa2020 section 4), weighted by ``weights``.
    """
    E, mask, weights = _errors(E, mask, weights)
    return float(_posterior(rho, E.shape[1]) @ _voter_means(E, mask, weights))


def tandem_risk_matrix(E, mask=None, weights=None):
    """Empirical tandem losses T[j, k] = L^(h_j, h_k) (masegosa2020, definition of the tandem loss).

    L^(h, h') = mean over the examples usable for both voters of 1[h errs] 1[h' errs]
    (with ``mask``: over the intersection of the two out-of-bag sets). T[j, j] = L^(h_j).
    """
    E, mask, weights = _errors(E, mask, weights)
    return _pair_means(lambda j, k: E[:, j] * E[:, k], mask, weights)


def tandem_risk(E, rho, mask=None, weights=None):
    """Empirical tandem risk E_{rho^2}[L^(h, h')] = sum_{j,k} rho_j rho_k T[j, k] (masegosa2020)."""
    T = tandem_risk_matrix(E, mask, weights)
    rho = _posterior(rho, T.shape[0])
    return float(rho @ T @ rho)


def disagreement_matrix(predictions, mask=None, weights=None):
    """Empirical disagreements D[j, k] = mean over shared examples of 1[h_j(x) != h_k(x)].

    No labels are used (masegosa2020 section 3, germain2015): the examples may be unlabeled.
    """
    P = np.asarray(predictions)
    if P.ndim != 2:
        raise ValueError(f"predictions must be (n_examples, n_voters), got {P.shape}")
    _, mask, weights = _errors(np.zeros(P.shape), mask, weights)
    return _pair_means(lambda j, k: (P[:, j] != P[:, k]).astype(float), mask, weights)


def disagreement(predictions, rho, mask=None, weights=None):
    """Empirical expected disagreement E_{rho^2}[D^(h, h')] = sum_{j,k} rho_j rho_k D[j, k]."""
    D = disagreement_matrix(predictions, mask, weights)
    rho = _posterior(rho, D.shape[0])
    return float(rho @ D @ rho)


def mu_tandem_range(mu):
    """(a, middle, b): the three values of the tandem loss with offset mu, sorted (wu2021, wu2022).

    l_mu(h, h') = (1[h errs] - mu)(1[h' errs] - mu) takes the values mu^2 (both right),
    -mu (1 - mu) (one wrong), (1 - mu)^2 (both wrong). For 0 <= mu < 1/2:
    a = -mu(1-mu) <= mu^2 <= (1-mu)^2 = b, range b - a = 1 - mu; for mu < 0:
    a = mu^2 <= -mu(1-mu) <= (1-mu)^2 = b, range 1 - 2 mu. Hence the range
    K_mu = max(1 - mu, 1 - 2 mu) of wu2021. The middle value is wu2022's split point ("for
    alpha >= 0 we took mu = alpha^2, and for alpha < 0 we took mu = -alpha(1 - alpha)").
    """
    mu = _offset(mu)
    values = sorted([mu * mu, -mu * (1.0 - mu), (1.0 - mu) ** 2])
    return values[0], values[1], values[2]


def _mu_tandem_values(E, mu):
    return lambda j, k: (E[:, j] - mu) * (E[:, k] - mu)


def mu_tandem_risk(E, rho, mu, mask=None, weights=None):
    """Empirical tandem risk with offset mu, E_{rho^2}[L^_mu(h, h')] (wu2021).

    L^_mu(h, h') = mean over shared examples of (1[h errs] - mu)(1[h' errs] - mu). Without a mask
    it equals E_{rho^2}[L^(h,h')] - 2 mu E_rho[L^(h)] + mu^2; with out-of-bag masks the Gibbs part
    is averaged over the pairs' intersections, so the identity holds only approximately.
    """
    E, mask, weights = _errors(E, mask, weights)
    rho = _posterior(rho, E.shape[1])
    return float(rho @ _pair_means(_mu_tandem_values(E, _offset(mu)), mask, weights) @ rho)


def mu_tandem_variance(E, rho, mu, mask=None):
    """E_{rho^2}[V^_mu(h, h')]: rho^2-average of the pairs' unbiased sample variances (wu2021).

    V^_mu(h, h') = 1/(n_hh' - 1) sum_i (l_mu,i - L^_mu(h, h'))^2 over the n_hh' shared examples
    (the empirical variance of tolstikhin2013 used in the variance bound of wu2021). Needs
    n_hh' >= 2 for every pair.
    """
    E, mask, _ = _errors(E, mask, None)
    rho = _posterior(rho, E.shape[1])
    values = _mu_tandem_values(E, _offset(mu))
    M = E.shape[1]
    V = np.empty((M, M))
    for j in range(M):
        for k in range(M):
            v = values(j, k)[mask[:, j] & mask[:, k]]
            if v.size < 2:
                raise ValueError(f"voters {j} and {k} share fewer than 2 examples")
            V[j, k] = np.sum((v - v.mean()) ** 2) / (v.size - 1)
    return float(rho @ V @ rho)


def mu_tandem_split_risks(E, rho, mu, mask=None, weights=None, split=None):
    """(E_{rho^2}[L^+], E_{rho^2}[L^-]) of the tandem loss with offset mu split at ``split``.

    wu2022 section 3.3: l^+ = max(0, l_mu - split), l^- = max(0, split - l_mu), so that
    l_mu = split + l^+ - l^-. ``split`` defaults to the middle value of ``mu_tandem_range(mu)``.
    """
    E, mask, weights = _errors(E, mask, weights)
    rho = _posterior(rho, E.shape[1])
    a, middle, b = mu_tandem_range(mu)
    split = middle if split is None else float(split)
    if not a <= split <= b:
        raise ValueError(f"split must lie in [{a}, {b}], got {split}")
    values = _mu_tandem_values(E, float(mu))
    plus = _pair_means(lambda j, k: np.maximum(0.0, values(j, k) - split), mask, weights)
    minus = _pair_means(lambda j, k: np.maximum(0.0, split - values(j, k)), mask, weights)
    return float(rho @ plus @ rho), float(rho @ minus @ rho)


def oob_sample_sizes(mask):
    """(n, n2) = (min_j |OOB_j|, min_{j,k} |OOB_j ∩ OOB_k|) from an out-of-bag mask (lorenzen2019).

    ``mask[i, j]`` True iff example i is out-of-bag for voter j. n is the sample size of the
    first-order bounds (each voter's loss is an average over at least n examples), n2 of the
    tandem / disagreement bounds (masegosa2020 section 4). The pair minimum runs over all (j, k),
    diagonal included (|OOB_j ∩ OOB_j| = |OOB_j| >= any off-diagonal entry, so it changes nothing
    when there are two voters or more).
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be (n_examples, n_voters), got {mask.shape}")
    counts = mask.astype(np.int64)
    pairs = counts.T @ counts
    return int(counts.sum(axis=0).min()), int(pairs.min())


def majority_vote_risk(predictions, y, rho, weights=None):
    """Empirical risk of the rho-weighted majority vote argmax_y sum_j rho_j 1[h_j(x) = y].

    Ties count as errors (a label whose vote ties with another's is not a win); the oracle bounds
    hold for this conservative risk, since an error or a tie forces W_rho = E_rho[1[h errs]] >= 1/2.
    """
    P, y = np.asarray(predictions), np.asarray(y)
    rho = _posterior(rho, P.shape[1])
    w = np.ones(P.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    errors = np.empty(P.shape[0])
    for i in range(P.shape[0]):
        scores = {}
        for j, label in enumerate(P[i]):
            scores[label] = scores.get(label, 0.0) + rho[j]
        best = max(scores.values())
        winners = [lab for lab, s in scores.items() if s >= best - 1e-12]
        errors[i] = 0.0 if winners == [y[i]] else 1.0
    return float(np.sum(w * errors) / np.sum(w))


# --------------------------------------------------------------------------------------------
# 2. masegosa2020: first-order, tandem (TND) and disagreement (DIS) bounds
# --------------------------------------------------------------------------------------------


def first_order_bound(gibbs, kl, n, delta, clip=True):
    """First-order bound on L(MV) compared with in masegosa2020 (PAC-Bayes-kl + folk theorem):

    L(MV) <= 2 kl^{-1,+}(E_rho[L^(h)], (KL(rho||pi) + ln(2 sqrt(n)/delta)) / n),

    the first-order oracle bound L(MV) <= 2 E_rho[L(h)] with the PAC-Bayes-kl inequality
    (Seeger 2002, maurer2004) on E_rho[L(h)].

    Args:
        gibbs: empirical Gibbs risk E_rho[L^(h)] in [0, 1].
        kl: KL(rho || pi) over voters.
        n: labeled sample size of the Gibbs risk (out-of-bag: min_j |OOB_j|).
        delta: confidence.
        clip: clip to [0, 1] (the authors' code caps kl^{-1} at 1, so returns up to 2).
    """
    g, kl, n, delta = _unit("gibbs", gibbs), _kl(kl), _size("n", n), _delta(delta)
    return _clip(2.0 * kl_inv_upper(g, (kl + math.log(2.0 * math.sqrt(n) / delta)) / n), clip)


def tnd_bound(tandem, kl, n2, delta, clip=True):
    """TND, masegosa2020 empirical tandem bound (second-order oracle bound + PAC-Bayes-kl):

    L(MV) <= 4 kl^{-1,+}(E_{rho^2}[L^(h,h')], (2 KL(rho||pi) + ln(2 sqrt(n2)/delta)) / n2).

    From the second-order oracle bound L(MV) <= 4 E_{rho^2}[L(h,h')] (masegosa2020 section 2; wu2021
    restates it as its Thm 3, per the authors' script CCOracle_vs_TND.py): MV errs => W_rho >= 1/2,
    E_{rho^2}[L(h,h')] = E_D[W_rho^2], and Markov on W^2. Then PAC-Bayes-kl on the pairs, with
    KL(rho^2||pi^2) = 2 KL(rho||pi).

    Args:
        tandem: empirical tandem risk E_{rho^2}[L^(h,h')] in [0, 1].
        kl: KL(rho || pi) over voters.
        n2: sample size of the tandem losses (out-of-bag: min_{j,k} |OOB_j ∩ OOB_k|).
    """
    t, kl, n2, delta = _unit("tandem", tandem), _kl(kl), _size("n2", n2), _delta(delta)
    eps = (2.0 * kl + math.log(2.0 * math.sqrt(n2) / delta)) / n2
    return _clip(4.0 * kl_inv_upper(t, eps), clip)


def pac_bayes_lambda_bound(empirical, kl, n, delta, lam):
    """PAC-Bayes-lambda inequality (thiemann2017), for all lam in (0, 2) simultaneously:

    E_rho[L] <= E_rho[L^] / (1 - lam/2) + (KL + ln(2 sqrt(n)/delta)) / (lam (1 - lam/2) n).

    (A relaxation of PAC-Bayes-kl, so it is never below the kl form with the same KL, n, delta.)
    """
    lam = float(lam)
    if not 0.0 < lam < 2.0:
        raise ValueError(f"lam must lie in (0, 2), got {lam}")
    e, kl, n, delta = _unit("empirical", empirical), _kl(kl), _size("n", n), _delta(delta)
    slack = (kl + math.log(2.0 * math.sqrt(n) / delta)) / (lam * (1.0 - lam / 2.0) * n)
    return e / (1.0 - lam / 2.0) + slack


def tnd_lambda_bound(tandem, kl, n2, delta, lam, clip=True):
    """TND in lambda form (masegosa2020, the bound their optimization minimizes):

    L(MV) <= 4 (E_{rho^2}[L^(h,h')] / (1 - lam/2)
                + (2 KL(rho||pi) + ln(2 sqrt(n2)/delta)) / (lam (1 - lam/2) n2)),  lam in (0, 2).

    Arguments as ``tnd_bound``; lam in (0, 2).
    """
    return _clip(4.0 * pac_bayes_lambda_bound(tandem, 2.0 * _kl(kl), n2, delta, lam), clip)


def tnd_optimal_lambda(tandem, kl, n2, delta):
    """Closed-form minimizer of ``tnd_lambda_bound`` in lam (masegosa2020, after thiemann2017):

    lam* = 2 / (sqrt(2 n2 E_{rho^2}[L^(h,h')] / (2 KL + ln(2 sqrt(n2)/delta)) + 1) + 1).
    """
    t, kl, n2, delta = _unit("tandem", tandem), _kl(kl), _size("n2", n2), _delta(delta)
    c = 2.0 * kl + math.log(2.0 * math.sqrt(n2) / delta)
    return 2.0 / (math.sqrt(2.0 * n2 * t / c + 1.0) + 1.0)


def dis_bound(gibbs, disagreement, kl, n, m_unlabeled, delta, clip=True):
    """DIS, masegosa2020 bound for binary classification with unlabeled data:

    L(MV) <= 4 kl^{-1,+}(E_rho[L^(h)], (KL + ln(4 sqrt(n)/delta)) / n)
             - 2 kl^{-1,-}(E_{rho^2}[D^(h,h')], (2 KL + ln(4 sqrt(m)/delta)) / m),

    From the binary identity E_{rho^2}[L(h,h')] = E_rho[L(h)] - E_{rho^2}[D(h,h')]/2, the
    second-order oracle bound, and PAC-Bayes-kl upper (Gibbs) and lower (disagreement) bounds at
    delta/2 each (hence 4 sqrt(.) instead of 2 sqrt(.)). Binary labels only.

    Args:
        gibbs: empirical Gibbs risk on labeled data, sample size n (out-of-bag: min_j |OOB_j|).
        disagreement: empirical disagreement E_{rho^2}[D^], an average over m examples.
        m_unlabeled: m, the number of examples the disagreement averages over (unlabeled ones,
            plus labeled ones with their labels ignored if the caller pooled them; out-of-bag:
            the minimum over pairs of the shared examples).
        clip: clip to [0, 1] (the authors' code clips at 1 only).
    """
    g, d = _unit("gibbs", gibbs), _unit("disagreement", disagreement)
    kl, n, m, delta = _kl(kl), _size("n", n), _size("m_unlabeled", m_unlabeled), _delta(delta)
    g_up = kl_inv_upper(g, (kl + math.log(4.0 * math.sqrt(n) / delta)) / n)
    d_low = kl_inv_lower(d, (2.0 * kl + math.log(4.0 * math.sqrt(m) / delta)) / m)
    return _clip(4.0 * g_up - 2.0 * d_low, clip)


# --------------------------------------------------------------------------------------------
# 3. wu2021: Chebyshev-Cantelli oracle bound, CCTND, PAC-Bayes-Bennett, CCPBB
# --------------------------------------------------------------------------------------------


def cc_oracle_bound(tandem, gibbs, mu, clip=True):
    """Chebyshev-Cantelli oracle bound (wu2021; "Thm 7" in the authors' script), mu < 1/2:

    L(MV) <= E_{rho^2}[L_mu(h,h')] / (1/2 - mu)^2
           = (E_{rho^2}[L(h,h')] - 2 mu E_rho[L(h)] + mu^2) / (1/2 - mu)^2.

    Derivation: MV errs => W_rho >= 1/2; P(W >= 1/2) <= P((W - mu)^2 >= (1/2 - mu)^2) <=
    E[(W - mu)^2] / (1/2 - mu)^2 and E[(W - mu)^2] = E[W^2] - 2 mu E[W] + mu^2. mu = 0 is the
    second-order oracle bound 4 E_{rho^2}[L(h,h')]. Works for true or empirical (T, G).
    """
    t, g, mu = float(tandem), float(gibbs), _offset(mu)
    return _clip((t - 2.0 * mu * g + mu * mu) / (0.5 - mu) ** 2, clip)


def cc_oracle_optimal_mu(tandem, gibbs):
    """Minimizer of ``cc_oracle_bound`` in mu (wu2021): mu* = (G/2 - T)/(1/2 - G), for G < 1/2.

    From d/dmu [(T - 2 mu G + mu^2)/(1/2 - mu)^2] = 0. The value there is ``c_tandem_oracle_bound``
    (the authors' script lists the CC oracle results as Thms 5, 7, 8; numbers unverified).
    """
    t, g = float(tandem), float(gibbs)
    if not g < 0.5:
        raise ValueError(f"gibbs must be < 1/2, got {g}")
    return (0.5 * g - t) / (0.5 - g)


def c_tandem_oracle_bound(tandem, gibbs):
    """C-bound in tandem form (wu2021, masegosa2020), G < 1/2, value of cc_oracle_bound at mu*:

    L(MV) <= (E_{rho^2}[L(h,h')] - E_rho[L(h)]^2) / (E_{rho^2}[L(h,h')] - E_rho[L(h)] + 1/4).
    """
    t, g = float(tandem), float(gibbs)
    return (t - g * g) / (t - g + 0.25)


def cctnd_bound(tandem, gibbs, kl, n, n2, delta, mu, clip=True):
    """CCTND (wu2021): the Chebyshev-Cantelli oracle bound with PAC-Bayes-kl estimates.

    L(MV) <= (T_up - 2 mu G_mu + mu^2) / (1/2 - mu)^2, with
    T_up = kl^{-1,+}(E_{rho^2}[L^(h,h')], (2 KL + ln(4 sqrt(n2)/delta)) / n2),
    G_mu = kl^{-1,-}(E_rho[L^(h)], (KL + ln(4 sqrt(n)/delta)) / n) if mu >= 0, and
    G_mu = kl^{-1,+}(same) if mu < 0.

    The two PAC-Bayes-kl events (tandem, Gibbs) take delta/2 each. The Gibbs event bounds
    kl(G^ || G), which gives the upper and the lower inverse at once, and the oracle bound holds
    for every mu < 1/2 deterministically: the bound holds for all mu simultaneously, so ``mu`` may
    be a grid (array) and the minimum over it is returned with no union bound. (The authors' code
    uses these same constants; its optimizer updates mu by the closed form of Thm 8 on the
    bounds.)

    Args:
        tandem: E_{rho^2}[L^(h,h')], sample size n2 (pairs; out-of-bag min over pairs).
        gibbs: E_rho[L^(h)], sample size n (voters; out-of-bag min over voters).
        kl: KL(rho || pi) over voters.
        mu: offset(s) < 1/2, a float or an array (minimum taken).
    """
    t, g, kl = _unit("tandem", tandem), _unit("gibbs", gibbs), _kl(kl)
    n, n2, delta = _size("n", n), _size("n2", n2), _delta(delta)
    t_up = kl_inv_upper(t, (2.0 * kl + math.log(4.0 * math.sqrt(n2) / delta)) / n2)
    eps_g = (kl + math.log(4.0 * math.sqrt(n) / delta)) / n
    g_low, g_up = kl_inv_lower(g, eps_g), kl_inv_upper(g, eps_g)
    values = []
    for m in np.atleast_1d(np.asarray(mu, dtype=float)):
        m = _offset(m)
        g_mu = g_low if m >= 0.0 else g_up
        values.append((t_up - 2.0 * m * g_mu + m * m) / (0.5 - m) ** 2)
    return _clip(min(values), clip)


def pac_bayes_variance_bound(variance_hat, kl, n, delta, lam, loss_range, union=1):
    """PAC-Bayes-Empirical-Bernstein bound on the variance (tolstikhin2013; wu2021 Thm 13 as the
    authors' code names it), for losses of range ``loss_range`` = K and lam in (0, 2(n-1)/n):

    E_rho[V(h)] <= E_rho[V^(h)] / (1 - lam n/(2(n-1)))
                   + K^2 (KL + ln(union/delta)) / (n lam (1 - lam n/(2(n-1)))),

    V^ the unbiased sample variance (divisor n - 1). ``union`` is the size of the lam grid when lam
    is picked from it (union bound delta/union per grid point); 1 for a lam fixed in advance.
    For the tandem loss with offset pass KL = 2 KL(rho||pi) and K = K_mu.
    """
    v, kl, n, delta = float(variance_hat), _kl(kl), _size("n", n, 2), _delta(delta)
    lam, K = float(lam), float(loss_range)
    t = lam * n / (2.0 * (n - 1.0))
    if not (0.0 < t < 1.0 and v >= 0.0 and K > 0.0):
        raise ValueError(f"need 0 < lam < 2(n-1)/n, variance >= 0, range > 0; got {lam}, {v}, {K}")
    return v / (1.0 - t) + K * K * (kl + math.log(union / delta)) / (n * lam * (1.0 - t))


def variance_lambda_grid(n, delta, c1=1.05):
    """The lam grid of the variance bound (wu2021 experiments; constants from the authors' code).

    With t = lam n / (2(n-1)): t_i = c1^i t_min, i = 0..k_lam - 1,
    t_min = 1 / (sqrt((n-1)/ln(1/delta) + 1) + 1), k_lam = ceil(ln(1/(2 t_min)) / ln c1), so the
    grid spans [t_min, 1/2). t_min is the optimal t of the bound at the largest empirical variance
    with KL = 0. Returns the lam values (2 (n-1) t / n); their number is the union size.
    """
    n, delta = _size("n", n, 2), _delta(delta)
    t_min = 1.0 / (math.sqrt((n - 1.0) / math.log(1.0 / delta) + 1.0) + 1.0)
    k = max(1, math.ceil(math.log(1.0 / (2.0 * t_min)) / math.log(c1)))
    t = t_min * c1 ** np.arange(k)
    return 2.0 * (n - 1.0) * t / n


def variance_optimal_lambda(variance_hat, kl, n, delta, loss_range):
    """Minimizer of ``pac_bayes_variance_bound`` (union 1): t* = 1 / (sqrt(V^ / C + 1) + 1),

    C = K^2 (KL + ln(1/delta)) / (2 (n-1)), lam* = 2 (n-1) t* / n (as in the authors' code, which
    then moves to the grid point nearest to it).
    """
    n, K = _size("n", n, 2), float(loss_range)
    c = K * K * (_kl(kl) + math.log(1.0 / _delta(delta))) / (2.0 * (n - 1.0))
    t = 1.0 / (math.sqrt(float(variance_hat) / c + 1.0) + 1.0)
    return 2.0 * (n - 1.0) * t / n


def pac_bayes_bennett_bound(loss_hat, variance, kl, n, delta, gamma, loss_range, union=1):
    """PAC-Bayes-Bennett inequality (wu2021 Thm 9 as the authors' code names it), gamma > 0:

    E_rho[L(h)] <= E_rho[L^(h)] + phi(gamma K) / (gamma K^2) E_rho[V(h)]
                   + (KL + ln(union/delta)) / (gamma n),      phi(x) = e^x - x - 1,

    for losses with E[l] - l <= K (K = the range of the loss; wu2021 uses K_mu = max(1-mu, 1-2mu)
    for the tandem loss with offset), V(h) the true variance (or an upper bound on it: the
    coefficient is positive). Derivation: Bennett's lemma E e^{gamma X} <= e^{phi(gamma K) V/K^2}
    for X = E l - l <= K, E X = 0, then Donsker-Varadhan. ``union``: size of the gamma grid.
    (An earlier version of the authors' code used K = (1-mu)^2, the maximum of the loss, which is
    not an upper bound on E l - l when mu > 0; the published code uses K_mu, as here.)
    """
    kl, n, delta = _kl(kl), _size("n", n), _delta(delta)
    gamma, K = float(gamma), float(loss_range)
    if not (gamma > 0.0 and K > 0.0 and variance >= 0.0):
        raise ValueError(f"need gamma > 0, range > 0, variance >= 0; got {gamma}, {K}, {variance}")
    x = gamma * K
    coefficient = (math.expm1(x) - x) / (gamma * K * K)
    return (
        float(loss_hat)
        + coefficient * float(variance)
        + (kl + math.log(union / delta)) / (gamma * n)
    )


def bennett_optimal_gamma(variance, kl, n, delta, loss_range):
    """Minimizer of ``pac_bayes_bennett_bound`` (union 1) in gamma (wu2021):

    gamma* = (1 + W_0((K^2 C / V - 1) / e)) / K, C = (KL + ln(1/delta)) / n
    (the stationarity condition e^x (x - 1) + 1 = K^2 C / V with x = gamma K).
    """
    K = float(loss_range)
    c = (_kl(kl) + math.log(1.0 / _delta(delta))) / _size("n", n)
    return (1.0 + lambertw((K * K * c / float(variance) - 1.0) / math.e, 0).real) / K


def bennett_gamma_grid(n, delta_bennett, delta_variance, loss_range, c2=1.05):
    """The gamma grid of the PAC-Bayes-Bennett bound in CCPBB (wu2021; constants from the code).

    gamma_i = c2^i gamma_min, i = 0..k_gamma - 1, k_gamma = ceil(ln(gamma_max/gamma_min) / ln c2):
    gamma_min = (1 + W_0((4 ln(1/delta_bennett)/n - 1)/e)) / K, the optimal gamma at the largest
    variance K^2/4 with KL = 0; gamma_max = -(W_{-1}(-alpha e^{-alpha}) + alpha) / K,
    alpha = 1 / (1 + K^2/V_min), V_min = 2 K^2 ln(1/delta_variance)/(n-1) the smallest value the
    variance bound can take; beyond gamma_max the variance term alone, phi(gamma K)/(gamma K^2)
    V_min, exceeds K and the bound is vacuous (solve e^x = 1 + x/alpha, x = gamma K).
    """
    n, K = _size("n", n, 2), float(loss_range)
    db, dv = _delta(delta_bennett), _delta(delta_variance)
    g_min = (1.0 + lambertw((4.0 * math.log(1.0 / db) / n - 1.0) / math.e, 0).real) / K
    v_min = 2.0 * K * K * math.log(1.0 / dv) / (n - 1.0)
    alpha = 1.0 / (1.0 + K * K / v_min)
    g_max = -(lambertw(-alpha * math.exp(-alpha), -1).real + alpha) / K
    k = max(1, math.ceil(math.log(g_max / g_min) / math.log(c2)))
    return g_min * c2 ** np.arange(k)


def ccpbb_bound(
    mu_tandem,
    mu_variance,
    kl,
    n2,
    delta,
    mu,
    lam=None,
    gamma=None,
    c1=1.05,
    c2=1.05,
    clip=True,
    code_union=False,
):
    """CCPBB (wu2021) for one offset mu < 1/2: Chebyshev-Cantelli + PAC-Bayes-Bennett + variance.

    L(MV) <= B_mu / (1/2 - mu)^2,
    B_mu = E_{rho^2}[L^_mu] + phi(gamma K)/(gamma K^2) V_bar
           + (2 KL + ln(k_gamma/delta2))/(gamma n2),
    V_bar = min(K^2/4, E_{rho^2}[V^_mu]/(1 - t) + K^2 (2 KL + ln(k_lam/delta1))/(n2 lam (1 - t))),
    t = lam n2/(2(n2-1)), K = K_mu = max(1-mu, 1-2mu), delta1 = delta2 = delta/2.

    lam, gamma: None = the grids ``variance_lambda_grid(n2, delta/2, c1)`` and
    ``bennett_gamma_grid(n2, delta/2, delta/2, K, c2)`` with their union bounds (k_lam, k_gamma the
    grid sizes), and the minimum over each grid (every grid point is covered by the union bound;
    the authors' code takes instead the grid point nearest to the closed-form optimum, which is
    never smaller). A float = that value with no union (ln(1/delta_i)).
    Differences from the authors' code, where I could not read the paper: their Bennett term uses
    ln(k_gamma k_lam/delta2) (larger, still valid); mine uses ln(k_gamma/delta2), the union the
    derivation needs; ``code_union=True`` reproduces theirs (ln(k_gamma k_lam/delta2), with the
    grid sizes counted even for a given lam / gamma, as their code does). K^2/4 caps the variance
    of a variable of range K (as in their code).

    Args:
        mu_tandem: E_{rho^2}[L^_mu(h,h')] (``mu_tandem_risk``), sample size n2.
        mu_variance: E_{rho^2}[V^_mu(h,h')] (``mu_tandem_variance``, unbiased, per pair).
        kl: KL(rho || pi) over voters (2 KL is used for pairs).
        n2: pair sample size (out-of-bag: min_{j,k} |OOB_j ∩ OOB_k|), >= 2.
    """
    mu, kl, n2, delta = _offset(mu), _kl(kl), _size("n2", n2, 2), _delta(delta)
    a, _, b = mu_tandem_range(mu)
    K, half = b - a, delta / 2.0
    lam_grid, gamma_grid = (
        variance_lambda_grid(n2, half, c1),
        bennett_gamma_grid(n2, half, half, K, c2),
    )
    lams = lam_grid if lam is None else [lam]
    gammas = gamma_grid if gamma is None else [gamma]
    k_lam = len(lam_grid) if code_union else len(lams)
    k_gamma = len(gamma_grid) * len(lam_grid) if code_union else len(gammas)
    v_bar = min(
        pac_bayes_variance_bound(mu_variance, 2.0 * kl, n2, half, x, K, k_lam) for x in lams
    )
    v_bar = min(v_bar, K * K / 4.0)
    numerator = min(
        pac_bayes_bennett_bound(mu_tandem, v_bar, 2.0 * kl, n2, half, g, K, k_gamma) for g in gammas
    )
    return _clip(max(numerator, 0.0) / (0.5 - mu) ** 2, clip)


def paper_mu_grid():
    """The offsets searched in wu2021/wu2022's experiments: mu_i = -1/2 + i/400, i = 0..399.

    (From the authors' code, ``optimizeCCPBB`` / ``optimizeCCPBSkl``; they search it by a
    ternary-like search, not exhaustively, and add no union bound over it.)
    """
    return -0.5 + np.arange(400) / 400.0


def ccpbb_bound_grid(mu_grid, mu_tandems, mu_variances, kl, n2, delta, c1=1.05, c2=1.05, clip=True):
    """CCPBB minimized over a grid of offsets with a union bound: each mu at delta/|grid|.

    The offset enters the loss itself, so unlike CCTND each mu is a separate inequality; choosing
    mu after seeing the data needs the union bound (the authors' code has none, see
    ``paper_mu_grid``). ``mu_tandems[i]``, ``mu_variances[i]`` are the statistics at
    ``mu_grid[i]``.
    """
    mus = np.atleast_1d(np.asarray(mu_grid, dtype=float))
    if np.shape(mu_tandems) != mus.shape or np.shape(mu_variances) != mus.shape:
        raise ValueError("mu_tandems and mu_variances must match mu_grid")
    share = _delta(delta) / mus.size
    return min(
        ccpbb_bound(t, v, kl, n2, share, m, c1=c1, c2=c2, clip=clip)
        for m, t, v in zip(mus, np.ravel(mu_tandems), np.ravel(mu_variances))
    )


# --------------------------------------------------------------------------------------------
# 4. wu2022: split-kl, PAC-Bayes-split-kl, the split-kl tandem bound
# --------------------------------------------------------------------------------------------


def split_kl_inverse(plus, minus, a, b, split, eps_plus, eps_minus=None):
    """Split-kl upper inverse (wu2022 eq. 5 / Thm 7 with the epsilon given), a <= split <= b:

    split + (b - split) kl^{-1,+}(plus/(b - split), eps_plus)
          - (split - a) kl^{-1,-}(minus/(split - a), eps_minus),

    plus = mean of max(0, Z - split), minus = mean of max(0, split - Z); a side with zero width
    contributes 0. ``eps_minus`` defaults to ``eps_plus``.
    """
    a, b, split = float(a), float(b), float(split)
    if not a <= split <= b or a == b:
        raise ValueError(f"need a <= split <= b and a < b, got {a}, {split}, {b}")
    eps_minus = eps_plus if eps_minus is None else eps_minus
    up = 0.0
    if b > split:
        up = (b - split) * kl_inv_upper(_unit("plus/(b-split)", plus / (b - split)), eps_plus)
    low = 0.0
    if split > a:
        low = (split - a) * kl_inv_lower(_unit("minus/(split-a)", minus / (split - a)), eps_minus)
    return split + up - low


def split_kl_bound(plus, minus, n, delta, a, b, split):
    """Split-kl inequality (wu2022 Thm 4): for i.i.d. Z_i in [a, b], with probability >= 1-delta

    E Z <= split + (b - split) kl^{-1,+}(p^+/(b - split), ln(2/delta)/n)
                 - (split - a) kl^{-1,-}(p^-/(split - a), ln(2/delta)/n)

    (kl upper and lower inequalities, Langford 2005 / Foong et al., at delta/2 each).
    """
    n, delta = _size("n", n), _delta(delta)
    return split_kl_inverse(plus, minus, a, b, split, math.log(2.0 / delta) / n)


def pac_bayes_split_kl_bound(plus, minus, kl, n, delta, a, b, split):
    """PAC-Bayes-split-kl inequality (wu2022 Thm 7): with probability >= 1-delta, for all rho,

    E_rho[L] <= split + (b - split) kl^{-1,+}(E_rho[L^+]/(b - split), eps)
                      - (split - a) kl^{-1,-}(E_rho[L^-]/(split - a), eps),
    eps = (KL(rho||pi) + ln(4 sqrt(n)/delta)) / n

    (PAC-Bayes-kl upper bound on E_rho[L^+] and lower bound on E_rho[L^-] at delta/2 each).
    """
    kl, n, delta = _kl(kl), _size("n", n), _delta(delta)
    eps = (kl + math.log(4.0 * math.sqrt(n) / delta)) / n
    return split_kl_inverse(plus, minus, a, b, split, eps)


def split_kl_tandem_bound(tandem_plus, tandem_minus, kl, n2, delta, mu, clip=True):
    """CCPBSkl (wu2022 section 4.2): Chebyshev-Cantelli + PAC-Bayes-split-kl on the offset tandem.

    L(MV) <= U_mu / (1/2 - mu)^2, U_mu = ``pac_bayes_split_kl_bound`` on the pairs (KL -> 2 KL,
    n -> n2) for l_mu in [a, b] = [min, max] of its values, split at the middle value
    (``mu_tandem_range``): mu^2 if mu >= 0, -mu(1-mu) if mu < 0. At mu = 0 the minus side is empty
    and the bound is TND at delta/2.

    Args:
        tandem_plus, tandem_minus: ``mu_tandem_split_risks(E, rho, mu, mask)``, sample size n2.
        kl: KL(rho || pi) over voters. mu: the offset (wu2022 calls it alpha), < 1/2.
    """
    a, split, b = mu_tandem_range(mu)
    u = pac_bayes_split_kl_bound(tandem_plus, tandem_minus, 2.0 * _kl(kl), n2, delta, a, b, split)
    return _clip(max(u, 0.0) / (0.5 - float(mu)) ** 2, clip)


def split_kl_tandem_bound_grid(mu_grid, tandem_pluses, tandem_minuses, kl, n2, delta, clip=True):
    """``split_kl_tandem_bound`` minimized over a grid of offsets, each at delta/|grid|.

    A union bound (the authors' code searches ``paper_mu_grid`` without one). The statistics
    ``tandem_pluses[i]``, ``tandem_minuses[i]`` are those at ``mu_grid[i]``.
    """
    mus = np.atleast_1d(np.asarray(mu_grid, dtype=float))
    if np.shape(tandem_pluses) != mus.shape or np.shape(tandem_minuses) != mus.shape:
        raise ValueError("tandem_pluses and tandem_minuses must match mu_grid")
    share = _delta(delta) / mus.size
    return min(
        split_kl_tandem_bound(p, q, kl, n2, share, m, clip)
        for m, p, q in zip(mus, np.ravel(tandem_pluses), np.ravel(tandem_minuses))
    )


# --------------------------------------------------------------------------------------------
# 5. germain2015: PAC-Bound 1' and 2'
# --------------------------------------------------------------------------------------------


def pac_bound_1_prime(gibbs, disagreement, kl, m, m_prime, delta):
    """germain2015 PAC-Bound 1' (semi-supervised C-bound) on L(MV), binary labels:

    1 - (1 - 2 r)^2 / (1 - 2 d),
    r = min(1/2, kl^{-1,+}(R_S(G_Q), (KL + ln(2 xi(m)/delta)) / m))         (m labeled examples),
    d = max(0, kl^{-1,-}(d_S', (2 KL + ln(2 xi(m')/delta)) / m'))           (m' unlabeled examples),
    xi(m) = sum_k C(m,k) (k/m)^k (1-k/m)^(m-k); 1 when r = 1/2 or d >= 1/2.

    Equal to PAC-Bound 1 when m' = m. (Formula and sample roles agree with the GRAAL code
    ``pac_bound_one_prime``.)
    """
    g, d_s = _unit("gibbs", gibbs), _unit("disagreement", disagreement)
    kl, m, mp, delta = _kl(kl), _size("m", m), _size("m_prime", m_prime), _delta(delta)
    r = min(0.5, kl_inv_upper(g, (kl + math.log(2.0) + log_xi(int(m)) - math.log(delta)) / m))
    eps_d = (2.0 * kl + math.log(2.0) + log_xi(int(mp)) - math.log(delta)) / mp
    d = max(0.0, kl_inv_lower(d_s, eps_d))
    if r >= 0.5 or d >= 0.5:
        return 1.0
    return float(1.0 - (1.0 - 2.0 * r) ** 2 / (1.0 - 2.0 * d))


def _cbound_slice(e_s, d_s, eps, e_cap, d):
    """sup over e of F(e, d) = 1 - (1-2e-d)^2/(1-2d) on the feasible slice at fixed d, or -inf.

    For fixed d, F increases in e (dF/de = 4(1-2e-d)/(1-2d) > 0), the trinomial kl is convex in e
    with minimum binary kl(d_S || d) at e* = (1-d) e_S/(1-d_S), and d <= 2(sqrt(e) - e) means
    e >= ((1 - sqrt(1-2d))/2)^2 (its upper root lies beyond the line 2e + d = 1). So the sup is at
    the largest e of the kl slice below min(e_cap, (1-d)/2), if that e passes the curve.
    """
    if not 0.0 <= d < 0.5 or binary_kl(d_s, d) > eps:
        return -math.inf
    line = (1.0 - d) / 2.0
    top = min(line, e_cap)

    def excess(e):
        return trinomial_kl(e_s, d_s, e, d) - eps

    e_star = (1.0 - d) * e_s / (1.0 - d_s)
    if excess(top) <= 0.0:
        e_hi = top
    elif e_star >= top:
        return -math.inf
    elif excess(e_star) >= 0.0:  # the slice is the single point e* (up to round-off)
        e_hi = e_star
    else:
        e_hi = brentq(  # (excess is flat and noisy near e*: Brent may need many bisections)
            excess, e_star, top, xtol=1e-15, rtol=4.0 * np.finfo(float).eps, maxiter=2000
        )
    if e_hi < ((1.0 - math.sqrt(1.0 - 2.0 * d)) / 2.0) ** 2 - 1e-13:
        return -math.inf
    if e_hi >= line:
        return 1.0  # the slice reaches 2e + d = 1: the sup 1 is approached from inside
    return 1.0 - (1.0 - 2.0 * e_hi - d) ** 2 / (1.0 - 2.0 * d)


def cbound_kl_ball_sup(joint_error, disagreement, eps, joint_error_cap=0.5, n_grid=801):
    """sup F(e, d) = 1 - (1 - 2e - d)^2/(1 - 2d) over trinomial kl(e_S, d_S || e, d) <= eps,
    d <= 2(sqrt(e) - e), 2e + d < 1, 0 <= e <= joint_error_cap (germain2015 PAC-Bounds 2, 2').

    Profile method, independent of bounds_numpy's grid/SLSQP: for each d the sup over e is
    ``_cbound_slice`` (exact root in e); the profile is maximized over d on a grid of ``n_grid``
    points of the d-range of the ball (binary kl(d_S || d) <= eps), then refined by a
    golden-section search between the best point's neighbours. 1 when the ball meets the line
    2e + d = 1 below the cap.
    """
    e_s, d_s = _unit("joint_error", joint_error), _unit("disagreement", disagreement)
    eps, cap = float(eps), float(joint_error_cap)
    if 2.0 * e_s + d_s >= 1.0:
        return 1.0  # the empirical point itself is on the line 2e + d = 1
    d_lo, d_hi = kl_inv_lower(d_s, eps), min(kl_inv_upper(d_s, eps), math.nextafter(0.5, 0.0))

    def profile(d):
        return _cbound_slice(e_s, d_s, eps, cap, float(d))

    ds = np.linspace(d_lo, d_hi, n_grid)
    values = np.array([profile(d) for d in ds])
    i = int(np.argmax(values))
    best = float(values[i])
    if best >= 1.0 or not math.isfinite(best):
        return 1.0 if best >= 1.0 else best
    lo, hi = float(ds[max(i - 1, 0)]), float(ds[min(i + 1, n_grid - 1)])
    return max(best, _refine_maximum(profile, lo, hi))


def _refine_maximum(f, lo, hi, iterations=90):
    """max of a unimodal f on [lo, hi] by golden-section search (0.618^90 ~ 1e-19 of the bracket).

    The profile has a kink at its maximum where the cap e <= joint_error_cap starts to bind, so
    a derivative-based or sqrt(eps)-tolerance search (scipy's bounded Brent stops at ~1e-8 of d)
    leaves up to ~1e-9 on the table there; bracket reduction does not.
    """
    r = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(iterations):
        x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
        if f(x1) >= f(x2):
            hi = x2
        else:
            lo = x1
    value = f((lo + hi) / 2.0)
    return value if math.isfinite(value) else -math.inf


def pac_bound_2_prime(gibbs, disagreement, kl, m, delta):
    """germain2015 PAC-Bound 2' on L(MV), binary labels: PAC-Bound 2 with a separate cap on e.

    sup F(e, d) over trinomial kl(e_S, d_S || e, d) <= (2 KL + ln(2 (xi(m) + m)/delta)) / m,
    d <= 2(sqrt(e) - e), 2e + d < 1, e <= e_up,
    e_up = min(1/2, kl^{-1,+}(e_S, (2 KL + ln(2 xi(m)/delta)) / m)), e_S = gibbs - disagreement/2,
    (both events at delta/2). Everything on the same m labeled examples.

    Note: the brief described 2' as using unlabeled data; the GRAAL code
    (``pac_bound_two_prime``: "we add a constraint a bound on the joint error by bounding its value
    individually") has the form above, which I follow; I could not open the JMLR text to check.
    The sup is computed exactly (``cbound_kl_ball_sup``). The GRAAL/authors' solver
    (``maximize_c_bound_under_constraints``) searches d from 0 at each e, skipping the lower kl
    root ("Hack"), so it can return F at points outside the kl ball, above the true sup: e.g.
    gibbs 0.3, disagreement 0.4, KL 0, m 5000, delta 0.05 gives 0.4721 there, 0.39750 here.
    """
    g, d_s = _unit("gibbs", gibbs), _unit("disagreement", disagreement)
    kl, m, delta = _kl(kl), _size("m", m), _delta(delta)
    e_s = g - d_s / 2.0
    if -1e-14 < e_s < 0.0:
        e_s = 0.0
    if e_s < 0.0:
        raise ValueError(f"gibbs - disagreement/2 = {e_s} < 0: inconsistent inputs")
    lx = log_xi(int(m))
    e_up = min(0.5, kl_inv_upper(e_s, (2.0 * kl + math.log(2.0) + lx - math.log(delta)) / m))
    eps = (2.0 * kl + math.log(2.0) + math.log(math.exp(lx) + m) - math.log(delta)) / m
    return cbound_kl_ball_sup(e_s, d_s, eps, e_up)


# --------------------------------------------------------------------------------------------
# 6. langford2005: binomial tail inversion and the test set bound
# --------------------------------------------------------------------------------------------


def binomial_tail(k, n, p):
    """Bin(n, k, p) = P(X <= k), X ~ Binomial(n, p) = sum_{j<=k} C(n,j) p^j (1-p)^(n-j)."""
    return float(binom.cdf(k, n, p))


def binomial_tail_inversion(k, n, delta):
    """Bin^{-1}(n, k, delta) = max{p in [0, 1] : Bin(n, k, p) >= delta} (langford2005).

    Bin(n, k, p) = 1 - I_p(k+1, n-k) (regularized incomplete beta), decreasing in p, so the max
    solves 1 - I_p(k+1, n-k) = delta: p = betainccinv(k+1, n-k, delta); 1 when k = n
    (the one-sided Clopper-Pearson upper limit). ``betainccinv`` takes delta itself: the form
    betaincinv(k+1, n-k, 1-delta) loses up to 1e-7 relative accuracy for small delta, since 1-delta
    rounds delta's digits away (checked against mpmath at 50 digits in the self-test).

    Args:
        k: number of errors, an integer in [0, n]. n: number of test examples. delta: confidence.
    """
    n, delta = _size("n", n), _delta(delta)
    k = float(k)
    if not (k == math.floor(k) and 0.0 <= k <= n and n == math.floor(n)):
        raise ValueError(f"k and n must be integers with 0 <= k <= n, got {k}, {n}")
    if k == n:
        return 1.0
    return float(betainccinv(k + 1.0, n - k, delta))


def test_set_bound(errors, n, delta):
    """Test set bound (langford2005; cited as Thm 8 in wu2022): for a classifier fixed before
    seeing the n i.i.d. test examples, with probability >= 1 - delta,
    L(c) <= Bin^{-1}(n, errors, delta), errors = number of test mistakes (an integer).
    """
    return binomial_tail_inversion(errors, n, delta)


test_set_bound.__test__ = False  # a library function, not a pytest test


# --------------------------------------------------------------------------------------------
# 7. A printout
# --------------------------------------------------------------------------------------------


def _demo():
    rng = np.random.default_rng(0)
    n_ex, M = 400, 5
    y = rng.integers(0, 3, n_ex)
    P = np.where(rng.random((n_ex, M)) < 0.7, y[:, None], rng.integers(0, 3, (n_ex, M)))
    mask = rng.random((n_ex, M)) < 0.6
    E, rho = error_matrix(P, y), np.full(M, 1.0 / M)
    n, n2 = oob_sample_sizes(mask)
    g, t = gibbs_risk(E, rho, mask), tandem_risk(E, rho, mask)
    print(f"n={n} n2={n2} gibbs={g:.6f} tandem={t:.6f} MV={majority_vote_risk(P, y, rho):.6f}")
    print(f"FO={first_order_bound(g, 0.0, n, 0.05):.6f} TND={tnd_bound(t, 0.0, n2, 0.05):.6f}")
    print(f"CCTND={cctnd_bound(t, g, 0.0, n, n2, 0.05, paper_mu_grid()):.6f}")
    mu = 0.1
    mt, mv = mu_tandem_risk(E, rho, mu, mask), mu_tandem_variance(E, rho, mu, mask)
    plus, minus = mu_tandem_split_risks(E, rho, mu, mask)
    print(f"CCPBB(mu=0.1)={ccpbb_bound(mt, mv, 0.0, n2, 0.05, mu):.6f}")
    print(f"CCPBSkl(mu=0.1)={split_kl_tandem_bound(plus, minus, 0.0, n2, 0.05, mu):.6f}")
    print(f"test set bound(10, 100, 0.05)={test_set_bound(10, 100, 0.05):.6f}")


if __name__ == "__main__":
    _demo()
