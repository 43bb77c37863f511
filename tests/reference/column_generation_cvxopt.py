"""CVXOPT / HiGHS references of the four column-generation programs (roy2016 §4-6).

Written from the paper text and ``shared/design.md`` only, never from the JAX code: each program
is handed whole (all the columns it is given) to an interior-point QP solver (CVXOPT) or to
HiGHS (``scipy.optimize.linprog``), in float64 and with tight tolerances, and the examples'
dual weights ``alpha`` are read off the solver's multipliers. ``w`` are example weights
(``None``: all 1; integer weights repeat examples, zeros drop them).

- CqBoost, program (2) with ``mu1 >= mu`` (design.md's trap):
  ``min (1/W) sum_k w_k (H q)_k^2  s.t.  (1/W) sum_k w_k y_k (H q)_k >= mu, q >= 0, 1^T q = 1``;
  KKT (5) re-derived for that sign: ``alpha_k = w_k (beta - 2 gamma_k) / W``.
- MDBoost (roy2016 §6): ``min (D/2) gamma^T A_w gamma - w^T gamma``, ``gamma = diag(y) H q``,
  ``q`` in the simplex, ``A_w = W / (W - 1) (diag(w) - w w^T / W)``; ``alpha = w - D A_w gamma``.
- CG-Boost (roy2016 §6, constraint ``>= 1``): ``min q^T q / 2 + C w^T xi  s.t.
  diag(y) H q + xi >= 1, q, xi >= 0``; ``alpha`` = the margin constraints' multipliers.
- LPBoost (the ``L1`` soft-margin LP): ``min 1^T q + C w^T xi`` under the same constraints.

Every function returns :class:`Solution` ``(objective, q, alpha, nu)``: a column ``h`` violates
the dual constraint when ``sum_k alpha_k y_k h(x_k) > nu``.
"""

from __future__ import annotations

from typing import NamedTuple

import cvxopt
import numpy as np
from scipy.optimize import linprog

TIGHT = {"abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12, "maxiters": 300}
cvxopt.solvers.options["show_progress"] = False


class Solution(NamedTuple):
    objective: float
    q: np.ndarray
    alpha: np.ndarray
    nu: float


def _weights(y, w):
    return np.ones(len(y)) if w is None else np.asarray(w, np.float64)


def _qp(P, c, G, h, A=None, b=None):
    """CVXOPT's ``min x^T P x / 2 + c^T x  s.t.  G x <= h, A x = b``: ``(x, z, y)``."""
    args = [cvxopt.matrix(np.asarray(t, np.float64)) for t in (P, c, G, h)]
    if A is not None:
        args += [cvxopt.matrix(np.asarray(A, np.float64)), cvxopt.matrix(np.asarray(b, np.float64))]
    try:
        sol = cvxopt.solvers.qp(*args, options={**TIGHT, "show_progress": False})
    except ValueError:  # CVXOPT's rare "domain error" at tight tolerances: retry at 1e-9
        loose = {**TIGHT, "abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9}
        sol = cvxopt.solvers.qp(*args, options={**loose, "show_progress": False})
    x = np.array(sol["x"]).ravel()
    y = np.array(sol["y"]).ravel() if A is not None else np.zeros(0)
    return x, np.array(sol["z"]).ravel(), y


def cqboost_qp(H, y, mu, w=None) -> Solution:
    """Program (2) with ``mu1 >= mu``; ``beta`` and ``nu`` from CVXOPT's multipliers."""
    H, y, w = np.asarray(H, np.float64), np.asarray(y, np.float64), _weights(y, w)
    W, n = w.sum(), H.shape[1]
    G, m_s = H.T @ (w[:, None] * H) / W, H.T @ (w * y) / W
    if n == 1:  # one column: q = 1, no interior for CVXOPT; beta = 0 unless mu1 = mu exactly
        return Solution(G[0, 0], np.ones(1), -2 * w * y * H[:, 0] / W, -2 * G[0, 0])
    ineq = np.vstack([-np.eye(n), -m_s[None, :]])
    q, z, eq = _qp(2 * G, np.zeros(n), ineq, np.r_[np.zeros(n), -mu], np.ones((1, n)), [1.0])
    beta, gamma = z[-1], y * (H @ q)
    return Solution(q @ G @ q, q, w * (beta - 2 * gamma) / W, eq[0])


def mdboost_qp(H, y, D, w=None) -> Solution:
    """MDBoost's primal over all the given columns (``gamma`` eliminated)."""
    H, y, w = np.asarray(H, np.float64), np.asarray(y, np.float64), _weights(y, w)
    W, n = w.sum(), H.shape[1]
    A = W / (W - 1) * (np.diag(w) - np.outer(w, w) / W)
    K = y[:, None] * H
    P, c = D * K.T @ A @ K, -K.T @ w
    if n == 1:  # one column: q = 1; nu = edge of that column
        gamma = K[:, 0]
        alpha = w - D * A @ gamma
        return Solution(D / 2 * gamma @ A @ gamma - w @ gamma, np.ones(1), alpha, K[:, 0] @ alpha)
    q, _, eq = _qp(P, c, -np.eye(n), np.zeros(n), np.ones((1, n)), [1.0])
    gamma = K @ q
    return Solution(D / 2 * gamma @ A @ gamma - w @ gamma, q, w - D * A @ gamma, eq[0])


def cgboost_qp(H, y, C, w=None) -> Solution:
    """CG-Boost's primal in ``(q, xi)``; ``alpha`` = multipliers of ``K q + xi >= 1``."""
    H, y, w = np.asarray(H, np.float64), np.asarray(y, np.float64), _weights(y, w)
    (m, n), K = H.shape, y[:, None] * H
    P = np.diag(np.r_[np.ones(n), np.zeros(m)])
    ineq = np.block(
        [[-K, -np.eye(m)], [-np.eye(n), np.zeros((n, m))], [np.zeros((m, n)), -np.eye(m)]]
    )
    x, z, _ = _qp(P, np.r_[np.zeros(n), C * w], ineq, np.r_[-np.ones(m), np.zeros(n + m)])
    q, xi = x[:n], x[n:]
    return Solution(q @ q / 2 + C * w @ np.maximum(xi, 0), q, z[:m], 0.0)


def lpboost_lp(H, y, C, w=None) -> Solution:
    """LPBoost's ``L1`` soft-margin LP by HiGHS; ``alpha`` from the inequality marginals."""
    H, y, w = np.asarray(H, np.float64), np.asarray(y, np.float64), _weights(y, w)
    (m, n), K = H.shape, y[:, None] * H
    res = linprog(
        np.r_[np.ones(n), C * w], A_ub=-np.hstack([K, np.eye(m)]), b_ub=-np.ones(m),
        bounds=(0, None), method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )  # fmt: skip
    assert res.status == 0, res.message
    return Solution(res.fun, res.x[:n], -res.ineqlin.marginals, 1.0)


def max_violation(H, y, solution_alpha, nu) -> float:
    """``max_i sum_k alpha_k y_k H_ki - nu``: the dual certificate over all columns of ``H``."""
    return float(np.max(np.asarray(H).T @ (np.asarray(y) * np.asarray(solution_alpha))) - nu)


def stump_problem(m: int = 80, features=(0, 7, 20, 22, 27), n_thresholds: int = 4, seed: int = 0):
    """A small wdbc problem: ``(X, y, H)`` with ``H = [S, -S]`` the stumps of ``X`` (roy2016 §7
    protocol in miniature: tanh-normalized features, equally spaced thresholds)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:, list(features)], 2.0 * y - 1
    train = _stratified_train(y, m, seed)
    X, y = X[train], y[train]
    std = X.std(axis=0)
    X = np.tanh((X - X.mean(axis=0)) / np.where(std > 0, std, 1.0))  # roy2016 §7's tanh
    S = np.where(
        X[:, np.repeat(np.arange(X.shape[1]), n_thresholds)] > _thresholds(X, n_thresholds),
        1.0,
        -1.0,
    )
    return X, y, np.hstack([S, -S])


def _stratified_train(y, m: int, seed: int) -> np.ndarray:
    """``m`` training indices, each class its share (largest remainders), in a seeded random
    order: the rule of pacbound's documented ``stratified_split``, so that the problem is the
    one the learners' tests were tuned on (classes with enough examples: no clipping)."""
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    quota = m * counts / len(y)
    take = np.floor(quota).astype(int)
    take[np.argsort(-(quota - take), kind="stable")[: m - take.sum()]] += 1
    rng = np.random.default_rng(seed)
    parts = [rng.permutation(np.flatnonzero(inverse == c)) for c in range(len(classes))]
    return rng.permutation(np.concatenate([p[:k] for p, k in zip(parts, take, strict=True)]))


def _thresholds(X, k):
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (lo[:, None] + np.arange(1, k + 1)[None, :] / (k + 1) * (hi - lo)[:, None]).ravel()


def all_stumps(X):
    """Every stump ``+1 if x_f > t`` between consecutive distinct values, and its complement:
    the candidate set of the matrix-free search, materialized (``(m, 2 P)``, same order)."""
    X = np.asarray(X, np.float64)
    m, d = X.shape
    cols = []
    for f in range(d):
        v = np.sort(X[:, f])
        for k in range(m - 1):
            t = v[k] + (v[k + 1] - v[k]) / 2
            col = np.where(X[:, f] > t, 1.0, -1.0) if v[k] < v[k + 1] else np.full(m, np.nan)
            cols.append(col)
    S = np.stack(cols, axis=1)
    return np.hstack([S, -S])
