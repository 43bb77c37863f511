"""Second-order bounds on a forest: every bound and its gradient for a batch of posteriors, and
the TND / CCTND optimizers, pacbound vs a NumPy/SciPy implementation of the same formulas.

Problem: ``--voters`` (100) trees voting on ``--examples`` (10^5) binary-labelled examples with
bootstrap out-of-bag masks (each example out of bag for a tree with probability
``(1 - 1/m)^m ~ e^-1``), correlated errors (example difficulty, tree skill); ``n = min_j
|OOB_j|``, ``n2 = min_{j,k} |OOB_j cap OOB_k|``; ``--posteriors`` (10^4) Dirichlet posteriors.

* Statistics: the per-tree risks and the tandem / pair-risk matrices from the masked error
  matrix, once (``pacbound._src.loss_statistics`` vs the same three products in NumPy).
* Batch: for each bound, its value and gradient in ``rho`` for every posterior. pacbound:
  ``jax.jit(jax.vmap(jax.value_and_grad(objective)))`` of the library's objectives
  (``second_order_minimize.OBJECTIVES``, plus PAC-Bound 1' and 2'); the kl-inverses by Newton
  with implicit derivatives, PAC-Bound 2' by golden section with the KKT envelope gradient.
  NumPy (vectorized over the posteriors, float64): the quadratic forms as one matrix product
  per statistic, kl-inverses by bisection (60 halvings) with the same implicit derivatives,
  the CCPBB grids as array minima with the gradient at the minimizing grid point, PAC-Bound 2'
  by the same golden section (slices by bisection) and KKT gradient, the chain rule to ``rho``
  written out: the same formulas, the speed of NumPy. Values and gradients are compared
  before timing. A third column times the papers' style, one posterior at a time through the
  scalar SciPy reference ``tests/reference/second_order_numpy.py`` (values only, on
  ``--loop-posteriors``, scaled).
* Optimizers: Masegosa et al.'s alternating TND scheme (RProp steps on the lambda form at
  fixed lambda, then the closed-form lambda; the authors' scheme and optimizer family) written
  in NumPy, against ``second_order_minimize.minimize_bound("tnd")`` (gradient descent on the kl
  form in one jitted scan) run for the fewest steps reaching the NumPy scheme's final TND
  bound; the same for CCTND (Wu et al.'s alternation of gradient steps at fixed mu and the
  closed-form mu).

Timings are medians after a warm-up (compilation excluded, reported apart); the machine's load
average is recorded (the development machine is 2 cores shared by several people)::

    python benchmarks/bench_second_order.py [--examples 100000] [--voters 100]
        [--posteriors 10000] [--json PATH]
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from scipy import special

from pacbound._src import loss_statistics as LS
from pacbound._src import second_order_minimize as SM
from pacbound._src.bounds import second_order as so
from pacbound._src.bounds.first_order import xi

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.reference import second_order_numpy as REF

DELTA, MU = 0.05, 0.1  # confidence; the fixed mu of CCPBB and split-kl in the batch


# ------------------------------------------------------------------------------ the problem
def make_forest(m: int, n: int, seed: int = 0):
    """0/1 errors of ``n`` trees on ``m`` examples (difficulty x skill, correlated) and their
    bootstrap out-of-bag masks."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(-1.6, 1.2, (m, 1))
    skill = rng.normal(0.0, 0.3, (1, n))
    errors = (rng.random((m, n)) < special.expit(difficulty - skill)).astype(np.float64)
    mask = (rng.random((m, n)) < (1.0 - 1.0 / m) ** m).astype(np.float64)
    return errors, mask


# ---------------------------------------------------------------------------- pacbound side
def _pac_bound_1_prime(rho, kl, d):
    dis = LS.quadratic_form(d.disagreement, rho)
    return so.pac_bound_1_prime(LS.gibbs_risk(d.stats, rho), dis, kl, d.n, d.m_unlabeled, d.delta)


def _pac_bound_2_prime(rho, kl, d):
    dis = LS.quadratic_form(d.disagreement, rho)
    return so.pac_bound_2_prime(LS.gibbs_risk(d.stats, rho), dis, kl, d.n, d.delta)


OBJECTIVES = {
    **{k: v for k, v in SM.OBJECTIVES.items()},
    "pac_bound_1_prime": _pac_bound_1_prime,
    "pac_bound_2_prime": _pac_bound_2_prime,
}


def pacbound_batch(name: str):
    """``rhos (B, n) -> (values (B,), gradients (B, n))`` of one bound, jitted."""
    objective = OBJECTIVES[name]

    def one(rho, data, log_prior):
        kl = jnp.sum(rho * (jnp.log(rho) - log_prior))
        return objective(rho, kl, data)

    batched = jax.vmap(jax.value_and_grad(one), in_axes=(0, None, None))
    return jax.jit(batched)


# ------------------------------------------------------------------------------- NumPy side
def np_statistics(errors, mask):
    """risks, tandem T, pair risks P and pair counts, as ``loss_statistics`` with a mask."""
    masked = errors * mask
    counts = mask.T @ mask
    tandem = masked.T @ masked / counts
    pair_risks = masked.T @ mask / counts
    return np.diagonal(pair_risks).copy(), tandem, pair_risks, counts


def np_kl(q, p):
    return special.xlogy(q, q) - special.xlogy(q, p) + special.xlogy(1 - q, 1 - q) - (
        special.xlogy(1 - q, 1 - p))  # fmt: skip


def np_kl_inverse(q, eps, upper: bool, halvings: int = 60):
    """``(p, dp/dq, dp/deps)``: the kl-inverse by bisection and its implicit derivatives."""
    lo, hi = (q.copy(), np.ones_like(q)) if upper else (np.zeros_like(q), q.copy())
    for _ in range(halvings):
        mid = (lo + hi) / 2
        inside = np_kl(q, mid) <= eps
        if upper:
            lo, hi = np.where(inside, mid, lo), np.where(inside, hi, mid)
        else:
            lo, hi = np.where(inside, lo, mid), np.where(inside, mid, hi)
    p = (lo + hi) / 2
    kl_p = (p - q) / (p * (1 - p))
    kl_q = np.log(q * (1 - p)) - np.log(p * (1 - q))
    return p, -kl_q / kl_p, 1.0 / kl_p


class NumpyData:
    """The statistic matrices and numbers of the NumPy side."""

    def __init__(self, errors, mask, delta=DELTA, mu=MU):
        self.risks, self.tandem, pair_risks, counts = np_statistics(errors, mask)
        either = pair_risks + pair_risks.T
        self.one, self.neither = either - 2 * self.tandem, 1 - either + self.tandem
        self.n = int(np.diagonal(counts).min())
        self.n2 = int(counts.min())
        self.delta, self.mu = delta, mu
        values = ((1 - mu) ** 2, -mu * (1 - mu), mu**2)
        rates = (self.tandem, self.one, self.neither)
        mean = sum(v * r for v, r in zip(values, rates))
        self.mu_tandem = mean
        spread = sum(r * (v - mean) ** 2 for v, r in zip(values, rates))
        self.mu_variance = counts / (counts - 1) * spread
        self.grids = ccpbb_grids(self.n2, delta, mu)
        self.log_xi_n = float(np.log(xi(self.n)))
        self.log_xi_n2 = float(np.log(xi(self.n2)))


def quadratic(matrix, rhos):
    """``rho^T A rho`` and its gradient ``2 A rho`` (A symmetric) for every posterior."""
    product = rhos @ matrix
    return np.einsum("bi,bi->b", product, rhos), 2 * product


def np_stats(d: NumpyData, rhos, keys=("gibbs", "tandem", "one", "mu_tandem", "mu_variance")):
    """The statistics ``keys`` and KL to the uniform prior, each with its gradient in rho."""
    out = {}
    if "gibbs" in keys:
        out["gibbs"] = (rhos @ d.risks, np.broadcast_to(d.risks, rhos.shape))
    for key in set(keys) - {"gibbs"}:
        out[key] = quadratic(getattr(d, key), rhos)
    log_ratio = np.log(rhos * rhos.shape[1])
    out["kl"] = (np.sum(rhos * log_ratio, axis=1), log_ratio + 1)
    return out


def chain(stats, partials):
    """value gradient in rho from the partial derivatives in the statistics."""
    return sum(p[:, None] * stats[k][1] for k, p in partials.items())


def np_first_order(d, s):
    g, kl = s["gibbs"][0], s["kl"][0]
    p, p_q, p_e = np_kl_inverse(g, (kl + np.log(2 * np.sqrt(d.n) / d.delta)) / d.n, True)
    return 2 * p, {"gibbs": 2 * p_q, "kl": 2 * p_e / d.n}


def np_tnd(d, s):
    t, kl = s["tandem"][0], s["kl"][0]
    p, p_q, p_e = np_kl_inverse(t, (2 * kl + np.log(2 * np.sqrt(d.n2) / d.delta)) / d.n2, True)
    return 4 * p, {"tandem": 4 * p_q, "kl": 8 * p_e / d.n2}


def np_tnd_lambda(d, s):
    t, kl = s["tandem"][0], s["kl"][0]
    c = 2 * kl + np.log(2 * np.sqrt(d.n2) / d.delta)
    lam = 2 / (np.sqrt(2 * d.n2 * t / c + 1) + 1)
    scale = 1 - lam / 2
    value = 4 * (t / scale + c / (lam * scale * d.n2))
    return value, {"tandem": 4 / scale, "kl": 8 / (lam * scale * d.n2)}


def np_dis(d, s):
    g, dis, kl = s["gibbs"][0], s["one"][0], s["kl"][0]
    up, up_q, up_e = np_kl_inverse(g, (kl + np.log(4 * np.sqrt(d.n) / d.delta)) / d.n, True)
    eps = (2 * kl + np.log(4 * np.sqrt(d.n2) / d.delta)) / d.n2
    low, low_q, low_e = np_kl_inverse(dis, eps, False)
    grads = {"gibbs": 4 * up_q, "one": -2 * low_q, "kl": 4 * up_e / d.n - 4 * low_e / d.n2}
    return 4 * up - 2 * low, grads


def np_cctnd(d, s):
    mu, value, (t_q, t_e), (gm_q, gm_e) = np_cctnd_best(d, s)
    scale = (0.5 - mu) ** 2
    grads = {"tandem": t_q / scale, "gibbs": -2 * mu * gm_q / scale}
    grads["kl"] = (2 * t_e / d.n2 - 2 * mu * gm_e / d.n) / scale
    return value, grads


def np_cctnd_best(d, s):
    """CCTND's closed-form best mu on each branch (G_low for mu >= 0, G_up below), the value
    there and the derivatives of T_up and of the branch's G in (statistic, eps)."""
    t, g, kl = s["tandem"][0], s["gibbs"][0], s["kl"][0]
    t_up, t_q, t_e = np_kl_inverse(t, (2 * kl + np.log(4 * np.sqrt(d.n2) / d.delta)) / d.n2, True)
    eps = (kl + np.log(4 * np.sqrt(d.n) / d.delta)) / d.n
    (g_lo, lo_q, lo_e), (g_up, up_q, up_e) = (np_kl_inverse(g, eps, u) for u in (False, True))

    def value(mu, gm):
        return (t_up - 2 * mu * gm + mu**2) / (0.5 - mu) ** 2

    stationary = [(0.5 * gm - t_up) / np.where(gm < 0.5, 0.5 - gm, 1.0) for gm in (g_lo, g_up)]
    mu_plus = np.where(g_lo < 0.5, np.clip(stationary[0], 0, 0.5 - 1e-16), 0.0)
    mu_minus = np.where(g_up < 0.5, np.minimum(stationary[1], 0), 0.0)
    plus = value(mu_plus, g_lo) <= value(mu_minus, g_up)
    mu = np.where(plus, mu_plus, mu_minus)
    gm = np.where(plus, g_lo, g_up)
    return mu, value(mu, gm), (t_q, t_e), (np.where(plus, lo_q, up_q), np.where(plus, lo_e, up_e))


def ccpbb_grids(n2, delta, mu, c=1.05):
    """The lambda (as t) and gamma grids of CCPBB at delta / 2 each, from the reference."""
    half, k = delta / 2, max(1 - mu, 1 - 2 * mu)
    lam = REF.variance_lambda_grid(n2, half, c)
    return lam * n2 / (2 * (n2 - 1)), REF.bennett_gamma_grid(n2, half, half, k, c)


def np_ccpbb(d, s):
    mean, var, kl = s["mu_tandem"][0], s["mu_variance"][0], s["kl"][0]
    t, gammas = d.grids
    k, half = max(1 - d.mu, 1 - 2 * d.mu), d.delta / 2
    comp = k**2 * (2 * kl[:, None] + np.log(len(t) / half)) / (2 * (d.n2 - 1))
    v_all = var[:, None] / (1 - t) + comp / (t * (1 - t))
    i = np.argmin(v_all, axis=1)
    ti = t[i]
    v_bar = v_all[np.arange(len(i)), i]
    capped = v_bar < k**2 / 4
    v_use = np.minimum(v_bar, k**2 / 4)
    coef = (np.expm1(gammas * k) - gammas * k) / (gammas * k**2)
    b_all = (
        mean[:, None]
        + coef * v_use[:, None]
        + (2 * kl[:, None] + np.log(len(gammas) / half)) / (gammas * d.n2)
    )
    j = np.argmin(b_all, axis=1)
    num, cj, gj = b_all[np.arange(len(j)), j], coef[j], gammas[j]
    scale = (0.5 - d.mu) ** 2
    dv = np.where(capped, cj, 0.0)
    grads = {
        "mu_tandem": np.full_like(num, 1 / scale),
        "mu_variance": dv / (1 - ti) / scale,
        "kl": (dv * k**2 / ((d.n2 - 1) * ti * (1 - ti)) + 2 / (gj * d.n2)) / scale,
    }
    return np.maximum(num, 0) / scale, grads


def np_split_kl(d, s):
    mu, kl = d.mu, s["kl"][0]
    both, one = s["tandem"][0], s["one"][0]
    low, mid, high = -mu * (1 - mu), mu**2, (1 - mu) ** 2  # mu >= 0: minus part is "one"
    eps = (2 * kl + np.log(4 * np.sqrt(d.n2) / d.delta)) / d.n2
    up, up_q, up_e = np_kl_inverse(both, eps, True)
    dn, dn_q, dn_e = np_kl_inverse(one, eps, False)
    scale = (0.5 - mu) ** 2
    num = mid + (high - mid) * up - (mid - low) * dn
    grads = {
        "tandem": (high - mid) * up_q / scale,
        "one": -(mid - low) * dn_q / scale,
        "kl": 2 * ((high - mid) * up_e - (mid - low) * dn_e) / d.n2 / scale,
    }
    return num / scale, grads


def np_cbound(r, dis):
    return 1 - (1 - 2 * r) ** 2 / (1 - 2 * dis)


def np_pac_bound_1_prime(d, s):
    g, dis, kl = s["gibbs"][0], s["one"][0], s["kl"][0]
    log2 = np.log(2 / d.delta)
    r, r_q, r_e = np_kl_inverse(g, (kl + log2 + d.log_xi_n) / d.n, True)
    low, low_q, low_e = np_kl_inverse(dis, (2 * kl + log2 + d.log_xi_n2) / d.n2, False)
    c_r = 4 * (1 - 2 * r) / (1 - 2 * low)
    c_d = -2 * (1 - 2 * r) ** 2 / (1 - 2 * low) ** 2
    grads = {"gibbs": c_r * r_q, "one": c_d * low_q, "kl": c_r * r_e / d.n + 2 * c_d * low_e / d.n2}
    return np_cbound(r, low), grads


def _slice_top(dd, e_s, d_s, eps):
    slack = np.maximum(eps - np_kl(d_s, dd), 0) / (1 - d_s)
    return (1 - dd) * np_kl_inverse(e_s / (1 - d_s), slack, True)[0]


def np_pac_bound_2_prime(d, s, steps=60):
    """Golden section over d of the capped slice maximum, KKT multipliers for the gradient."""
    g, dis, kl = s["gibbs"][0], s["one"][0], s["kl"][0]
    m, e_s = d.n, np.maximum(g - dis / 2, 1e-300)
    cap, cap_q, cap_e = np_kl_inverse(e_s, (2 * kl + np.log(2 / d.delta) + d.log_xi_n) / m, True)
    cap = np.minimum(cap, 0.5)
    eps = (2 * kl + np.log(2 * (np.exp(d.log_xi_n) + m) / d.delta)) / m
    lo, hi = np_kl_inverse(dis, eps, False)[0], np.minimum(np_kl_inverse(dis, eps, True)[0], 0.5)

    def profile(dd):
        e = np.minimum(_slice_top(dd, e_s, dis, eps), cap)
        return np_cbound(e + dd / 2, dd)

    ratio = (np.sqrt(5) - 1) / 2
    for _ in range(steps):
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left = profile(x1) >= profile(x2)
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
    dd = (lo + hi) / 2
    top = _slice_top(dd, e_s, dis, eps)
    e = np.minimum(top, cap)
    rest, rest_s = 1 - e - dd, 1 - e_s - dis
    c_e = 4 * (1 - 2 * e - dd) / (1 - 2 * dd)
    c_d = 2 * (1 - 2 * e - dd) / (1 - 2 * dd) - 2 * (1 - 2 * e - dd) ** 2 / (1 - 2 * dd) ** 2
    k_e, k_d = -e_s / e + rest_s / rest, -dis / dd + rest_s / rest  # d kl / d (e, d)
    near_cap = top >= cap * (1 - 1.5e-8)
    lam_both = c_d / k_d
    lam_kl = np.where(near_cap, lam_both, c_e / k_e)
    lam_cap = np.where(near_cap, c_e - lam_both * k_e, 0.0)
    kl_es = np.log(e_s / e) - np.log(rest_s / rest)  # d kl / d e_S
    kl_ds = np.log(dis / dd) - np.log(rest_s / rest)  # d kl / d d_S
    grads = {  # e_S = gibbs - one / 2, d_S = one
        "gibbs": -lam_kl * kl_es + lam_cap * cap_q,
        "one": -lam_kl * (kl_ds - kl_es / 2) - lam_cap * cap_q / 2,
        "kl": lam_kl * 2 / m + lam_cap * cap_e * 2 / m,
    }
    return np_cbound(e + dd / 2, dd), grads


NUMPY = {  # name -> (value and partial derivatives, the statistics it reads)
    "first_order": (np_first_order, ("gibbs",)),
    "tnd": (np_tnd, ("tandem",)),
    "tnd_lambda": (np_tnd_lambda, ("tandem",)),
    "dis": (np_dis, ("gibbs", "one")),
    "cctnd": (np_cctnd, ("gibbs", "tandem")),
    "ccpbb": (np_ccpbb, ("mu_tandem", "mu_variance")),
    "split_kl": (np_split_kl, ("tandem", "one")),
    "pac_bound_1_prime": (np_pac_bound_1_prime, ("gibbs", "one")),
    "pac_bound_2_prime": (np_pac_bound_2_prime, ("gibbs", "one")),
}


def numpy_batch(name: str, d: NumpyData, rhos):
    """``(values, gradients)`` of one bound for every posterior, clipped as the library's."""
    bound, keys = NUMPY[name]
    stats = np_stats(d, rhos, keys)
    value, partials = bound(d, stats)
    inside = (value > 0) & (value < 1)
    return np.clip(value, 0, 1), chain(stats, partials) * inside[:, None]


# --------------------------------------------------------------- the papers' scalar loop
def reference_loop(name: str, d: NumpyData, rhos):
    """One posterior at a time through the scalar SciPy reference (values only)."""
    stats = np_stats(d, rhos)
    columns = {k: v[0] for k, v in stats.items()}
    return np.asarray([_reference_value(name, d, columns, i) for i in range(len(rhos))])


def _reference_value(name, d, s, i):
    g, t, one, kl = s["gibbs"][i], s["tandem"][i], s["one"][i], s["kl"][i]
    n, n2, delta, mu = d.n, d.n2, d.delta, d.mu
    if name == "first_order":
        return REF.first_order_bound(g, kl, n, delta)
    if name == "tnd":
        return REF.tnd_bound(t, kl, n2, delta)
    if name == "tnd_lambda":
        return REF.tnd_lambda_bound(t, kl, n2, delta, REF.tnd_optimal_lambda(t, kl, n2, delta))
    if name == "dis":
        return REF.dis_bound(g, one, kl, n, n2, delta)
    if name == "cctnd":  # the papers' 400-point grid of mu
        return REF.cctnd_bound(t, g, kl, n, n2, delta, REF.paper_mu_grid())
    if name == "ccpbb":
        return REF.ccpbb_bound(s["mu_tandem"][i], s["mu_variance"][i], kl, n2, delta, mu)
    if name == "split_kl":
        return REF.split_kl_tandem_bound((1 - 2 * mu) * t, mu * one, kl, n2, delta, mu)
    if name == "pac_bound_1_prime":
        return REF.pac_bound_1_prime(g, one, kl, n, n2, delta)
    return REF.pac_bound_2_prime(g, one, kl, n, delta)


# ------------------------------------------------------------------------------ optimizers
def np_rprop(theta, grad, state, eta=(0.5, 1.2), steps=(1e-6, 50.0)):
    """One RProp step (optax.rprop's rule): sign steps with per-coordinate step sizes."""
    prev, size = state
    agree = grad * prev
    size = np.where(agree > 0, np.minimum(size * eta[1], steps[1]), size)
    size = np.where(agree < 0, np.maximum(size * eta[0], steps[0]), size)
    grad = np.where(agree < 0, 0.0, grad)
    return theta - size * np.sign(grad), (grad, size)


def _softmax(theta):
    z = np.exp(theta - theta.max())
    return z / z.sum()


def np_alternating(objective_grad, update, d: NumpyData, outer=10, inner=100, lr=0.05):
    """The papers' scheme: ``inner`` RProp steps on the bound at a fixed parameter, then the
    parameter's closed-form update; returns the final rho and parameter."""
    n_voters = len(d.risks)
    theta = np.zeros(n_voters)
    rho = _softmax(theta)
    parameter = update(d, rho)
    for _ in range(outer):
        state = (np.zeros(n_voters), np.full(n_voters, lr))
        for _ in range(inner):
            rho = _softmax(theta)
            g_rho = objective_grad(d, rho, parameter)
            g_theta = rho * (g_rho - rho @ g_rho)
            theta, state = np_rprop(theta, g_theta, state)
        rho = _softmax(theta)
        parameter = update(d, rho)
    return rho, parameter


def _one(d, rho, keys=("gibbs", "tandem")):
    return np_stats(d, rho[None, :], keys)


def tnd_lambda_grad(d, rho, lam):
    s = _one(d, rho, ("tandem",))
    scale = 1 - lam / 2
    return chain(s, {"tandem": np.array([4 / scale]), "kl": np.array([8 / (lam * scale * d.n2)])})[
        0
    ]


def tnd_lambda_update(d, rho):
    s = _one(d, rho, ("tandem",))
    c = 2 * s["kl"][0] + np.log(2 * np.sqrt(d.n2) / d.delta)
    return float(2 / (np.sqrt(2 * d.n2 * s["tandem"][0] / c + 1) + 1)[0])


def cctnd_grad(d, rho, mu):
    s = _one(d, rho)
    t, g, kl = s["tandem"][0], s["gibbs"][0], s["kl"][0]
    _, t_q, t_e = np_kl_inverse(t, (2 * kl + np.log(4 * np.sqrt(d.n2) / d.delta)) / d.n2, True)
    eps = (kl + np.log(4 * np.sqrt(d.n) / d.delta)) / d.n
    _, g_q, g_e = np_kl_inverse(g, eps, mu < 0)
    scale = (0.5 - mu) ** 2
    partials = {"tandem": t_q / scale, "gibbs": -2 * mu * g_q / scale}
    partials["kl"] = (2 * t_e / d.n2 - 2 * mu * g_e / d.n) / scale
    return chain(s, partials)[0]


def cctnd_update(d, rho):
    return float(np_cctnd_best(d, _one(d, rho))[0][0])


def np_bound_at(name, d, rho):
    bound, keys = NUMPY[name]
    return float(bound(d, _one(d, rho, keys))[0][0])


# ------------------------------------------------------------------------------ main
def compare(ours, theirs):
    (v1, g1), (v2, g2) = ours, theirs
    scale = max(np.max(np.abs(g2)), 1e-300)
    return float(np.max(np.abs(np.asarray(v1) - v2))), float(
        np.max(np.abs(np.asarray(g1) - g2)) / scale
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--voters", type=int, default=100)
    parser.add_argument("--posteriors", type=int, default=10_000)
    parser.add_argument("--loop-posteriors", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)
    load_before = os.getloadavg()

    errors, mask = make_forest(args.examples, args.voters)
    rhos = np.random.default_rng(1).dirichlet(np.full(args.voters, 2.0), args.posteriors)

    # statistics
    E, M = jnp.asarray(errors), jnp.asarray(mask)
    t_stats = median_time(lambda: LS.loss_statistics(E, mask=M), repeats=args.repeats)
    t_np_stats = median_time(lambda: np_statistics(errors, mask), repeats=args.repeats)
    stats = LS.loss_statistics(E, mask=M)
    n, n2 = LS.sample_sizes(mask)
    dis_matrix = stats.pair_risks + stats.pair_risks.T - 2 * stats.tandem
    data = SM.bound_data(stats, n, n2, DELTA, mu=MU, disagreement=dis_matrix, m_unlabeled=n2)
    d = NumpyData(errors, mask)
    assert (d.n, d.n2) == (n, n2)
    log_prior = jnp.full(args.voters, -np.log(args.voters))

    rows, diffs, record = [], {}, {}
    total = {"pacbound": 0.0, "numpy": 0.0, "loop": 0.0}
    rho_j = jnp.asarray(rhos)
    for name in NUMPY:
        fn = pacbound_batch(name)
        start = time.perf_counter()
        ours = jax.block_until_ready(fn(rho_j, data, log_prior))
        compile_s = time.perf_counter() - start
        theirs = numpy_batch(name, d, rhos)
        diffs[name] = compare(ours, theirs)
        t_ours = median_time(fn, rho_j, data, log_prior, repeats=args.repeats)
        t_np = median_time(numpy_batch, name, d, rhos, repeats=args.repeats, warmup=False)
        k = args.loop_posteriors
        t_loop = median_time(reference_loop, name, d, rhos[:k], repeats=1, warmup=False)
        t_loop *= args.posteriors / k
        loop_vals = reference_loop(name, d, rhos[:k])
        diffs[name] += (float(np.max(np.abs(np.asarray(ours[0][:k]) - loop_vals))),)
        rows.append([name, t_ours, t_np, t_np / t_ours, t_loop, t_loop / t_ours, compile_s])
        record[name] = dict(zip(["pacbound_s", "numpy_s", "numpy_ratio", "loop_s", "loop_ratio",
                                 "compile_s"], rows[-1][1:]))  # fmt: skip
        for key, value in zip(("pacbound", "numpy", "loop"), (t_ours, t_np, t_loop)):
            total[key] += value
    rows.append(["all bounds", total["pacbound"], total["numpy"],
                 total["numpy"] / total["pacbound"], total["loop"],
                 total["loop"] / total["pacbound"], float("nan")])  # fmt: skip

    print(f"{args.posteriors:,} posteriors, {args.voters} trees, m = {args.examples:,} "
          f"(OOB n = {n}, n2 = {n2}), value + gradient in rho, float64")  # fmt: skip
    print(f"statistics: pacbound {t_stats:.3f} s, NumPy {t_np_stats:.3f} s "
          f"({t_np_stats / t_stats:.2f}x)")  # fmt: skip
    print_table(
        ["bound", "pacbound s", "numpy s", "x numpy", "scipy loop s (values)", "x loop",
         "compile s"], rows,
    )  # fmt: skip
    print("max |value diff|, max |grad diff| / max |grad| vs NumPy, max |value diff| vs loop:")
    print({k: tuple(f"{x:.1e}" for x in v) for k, v in diffs.items()})

    optimizers = run_optimizers(stats, data, d, args)
    load_after = os.getloadavg()
    print(f"load average before / after: {load_before} / {load_after}")
    out = write_json(
        "bench_second_order",
        {
            "examples": args.examples,
            "voters": args.voters,
            "posteriors": args.posteriors,
            "n": n,
            "n2": n2,
            "statistics_s": {"pacbound": t_stats, "numpy": t_np_stats},
            "batch": record,
            "batch_total": total,
            "batch_ratio_vs_numpy": total["numpy"] / total["pacbound"],
            "batch_ratio_vs_scipy_loop_values": total["loop"] / total["pacbound"],
            "differences": diffs,
            "optimizers": optimizers,
            "load_average": {"before": load_before, "after": load_after},
        },
        args.json,
    )
    print(f"wrote {out}")


def steps_to_reach(name, data, prior, target, candidates=(25, 50, 100, 200, 300, 500, 1000)):
    """The fewest steps (of ``candidates``) at which the gradient route's bound is <= target."""
    for steps in candidates:
        result = SM.minimize_bound(name, data, prior, steps=steps)
        if float(result.bound) <= target + 1e-12:
            return steps, float(result.bound)
    return candidates[-1], float(result.bound)


def run_optimizers(stats, data, d, args):
    prior = np.full(args.voters, 1.0 / args.voters)
    report = {}
    schemes = {
        "tnd": (tnd_lambda_grad, tnd_lambda_update, "tnd"),
        "cctnd": (cctnd_grad, cctnd_update, "cctnd"),
    }
    rows = []
    for name, (grad, update, bound_name) in schemes.items():
        t_np = median_time(np_alternating, grad, update, d, repeats=1, warmup=False)
        rho, _ = np_alternating(grad, update, d)
        target = np_bound_at(bound_name, d, rho)  # the kl-form bound at the scheme's rho
        steps, reached = steps_to_reach(name, data, prior, target)
        run = functools.partial(SM.minimize_bound, name, data, prior, None, steps)
        t_ours = median_time(run, repeats=args.repeats)
        rows.append([name, t_np, target, t_ours, reached, steps, t_np / t_ours])
        report[name] = dict(numpy_alternating_s=t_np, numpy_bound=target, pacbound_s=t_ours,
                            pacbound_bound=reached, pacbound_steps=steps,
                            ratio=t_np / t_ours)  # fmt: skip
    print("optimizers: the papers' alternating scheme in NumPy (10 x 100 RProp steps) vs the "
          "gradient route's fewest steps reaching its bound")  # fmt: skip
    print_table(["bound", "numpy s", "numpy bound", "pacbound s", "pacbound bound", "steps",
                 "x numpy"], rows)  # fmt: skip
    return report


if __name__ == "__main__":
    main()
