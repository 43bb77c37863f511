"""Independent NumPy/SciPy references for KL-regularized coordinate descent, VEB-Boost, AdaBoost.

Written from the papers (``shared/papers``) and ``shared/design.md`` only, never from the JAX
implementation. float64, Python loops, clarity over speed.

Sources:

- germain2009: Germain, Lacasse, Laviolette, Marchand, Shanian, "From PAC-Bayes bounds to KL
  regularization", NIPS 2009 (section 4: eqs. 1-14, Algorithm 1 "f minimization", eqs. 15-17).
- shivaswamy: Shivaswamy & Jebara, "Variational Empirical Bernstein Boosting" (Fig. 1, Lemma 1,
  Thm 2, the cost of the first display).
- AdaBoost: Freund & Schapire 1997 (discrete AdaBoost), as a plain loop.

germain2009, quasi-uniform posteriors (section 4.1)
---------------------------------------------------
Self-complemented set {h_1..h_n, h_{n+1}..h_{2n}} with h_{n+i} = -h_i (columns ``[H, -H]``);
uniform prior P_i = 1/(2n); Q_i + Q_{n+i} = 1/n; w_i = Q_i - Q_{n+i} in [-1/n, 1/n], so

    Q_i = (1/n + w_i) / 2,   Q_{n+i} = (1/n - w_i) / 2,   y sum_k Q_k h_k(x) = y w . h(x),
    KL(Q||P) = sum_k Q_k ln(2n Q_k)      (0 ln 0 = 0)
             = (1/n) sum_i [(1 + n w_i)/2 ln(1 + n w_i) + (1 - n w_i)/2 ln(1 - n w_i)].

Objective (section 4, first display) and the role of C:

    f(Q) = C * sum_{i=1}^m zeta(x_i, y_i) + KL(Q||P),      C = C' / (2 c_a k_bar),

C multiplies the SUM over the m examples (eq. 3 writes it C m d(zeta_hat)/d(delta) with
zeta_hat = (1/m) sum_i zeta); it is NOT a multiplier of the mean. Losses of the margin
M_i = y_i w . h(x_i):
    quadratic   zeta_i = (M_i / gamma - 1)^2,        exponential   zeta_i = exp(-M_i / gamma).

One coordinate (eq. 1): w_j <- w_j + delta, Q_j += delta/2, Q_{n+j} -= delta/2. With
a_i = y_i h_j(x_i) (a_i in {-1, +1} for binary voters, any value in [-1, 1] is accepted):

    dKL/ddelta = (1/2) ln[(Q_j + delta/2) / (Q_{n+j} - delta/2)] = atanh(n (w_j + delta))   (eq. 4)
    quadratic (eqs. 5-7), D_i = y_i w . h(x_i) - gamma (eq. 6):
        d(sum zeta)/ddelta = (2/gamma^2) sum_i (D_i + a_i delta) a_i
                           = 2 m delta / gamma^2 + (2/gamma^2) sum_i D_i a_i  when a_i^2 = 1,
    exponential (eqs. 8-10), D_i = exp(-y_i w . h(x_i) / gamma) (eq. 9):
        d(sum zeta)/ddelta = -(1/gamma) sum_i a_i D_i exp(-a_i delta / gamma)
                           = (e^{delta/gamma}/gamma) sum_{h_j(x_i) != y_i} D_i
                             - (e^{-delta/gamma}/gamma) sum_{h_j(x_i) = y_i} D_i  when a_i = +-1.
    delta* solves  C d(sum zeta)/ddelta + atanh(n (w_j + delta)) = 0   (eqs. 7 and 10).

The left side is strictly increasing in delta and tends to -inf / +inf at the ends of the open
interval w_j + delta in (-1/n, 1/n), so delta* always exists strictly inside in exact
arithmetic: the clipping steps 6-7 of Algorithm 1 only fire in floating point. Here brentq
brackets the new weight v = w_j + delta on [-(1 - tau)/n, (1 - tau)/n] (tau = 1e-13, where the
log term is finite); when the derivative has no sign change on that bracket the root lies
within tau/n of a box end and v is clipped to that end exactly (steps 6-7: Q_j = 1/n,
Q_{n+j} = 0 or the reverse). D is then updated by eq. 11 (D_i += a_i delta) or eq. 12
(D_i *= exp(-a_i delta / gamma)), starting from eq. 13 (D_i = -gamma) or eq. 14 (D_i = 1).

Sweeps (section 4.1, after Algorithm 1): sweep s visits the pairs in the order ``order[s]`` (a
permutation of 0..n-1, the caller's shuffle); stop after the first sweep whose largest applied
|delta| is <= eps, or after the available sweeps.

l2 / l1 relaxations (eqs. 15-17), C taken as the printed C''
-------------------------------------------------------------
    "l2":  f_l2(w) = C * sum_i zeta_i + ||w||_2^2,    |w_j| <= 1/n    (eq. 17 with C'' = C)
    "l1":  f_l1(w) = C * sum_i zeta_i + ||w||_1,      |w_j| <= 1/n
Eq. 16 gives KL <= n ||w||_2^2 and the l1 step gives KL <= ||w||_1, so for the same w
    f(w; C) <= n * f_l2(w; C / n)   and   f(w; C) <= f_l1(w; C):
eq. 17's C'' equals C/n when it is read as a relaxation of f with constant C (C'' = C for l1).
Coordinate updates (1-D convex problems in the new weight v, with L'(v) the derivative above
at delta = v - w_j):
    l2: minimize C L(v) + v^2 on [-1/n, 1/n]: v* solves C L'(v) + 2 v = 0, clipped to the box.
        Quadratic loss in closed form: v* = clip((2C/gamma^2)(A w_j - B) / ((2C/gamma^2) A + 2))
        with A = sum_i a_i^2, B = sum_i D_i a_i.
    l1: minimize C L(v) + |v| on [-1/n, 1/n]: v* = 0 if |C L'(0)| <= 1 (L'(0) at delta = -w_j);
        if C L'(0) < -1, v* > 0 solves C L'(v) + 1 = 0 on (0, 1/n] (1/n if no root);
        if C L'(0) > +1, v* < 0 solves C L'(v) - 1 = 0 on [-1/n, 0) (-1/n if no root).
All are solved by the same routine: clip when the derivative does not change sign on the
interval, brentq otherwise.

VEB-Boost (shivaswamy)
----------------------
Cost of the first display (m examples; the paper writes n):
    cost(f) = S1^2 + lam (m S2 - S1^2),  S1 = sum_i e^{-y_i f(x_i)},  S2 = sum_i e^{-2 y_i f(x_i)}.
Fig. 1: w_i = 1/m, f = 0; each round u_i = lam m w_i^2 + (1 - lam) w_i; G = column of H with the
largest u-weighted edge sum_i u_i y_i h(x_i) (first index on ties), I = {G(x_i) = y_i},
J = {G(x_i) != y_i};
    alpha_s = (1/4) ln(sum_{i in I} u_i / sum_{j in J} u_j);   break if alpha_s < 0;
    f += alpha_s G;   w_i <- w_i exp(-y_i G(x_i) alpha_s) / Z_s  (sum w = 1).
The figure's text prints the ratio as sum_J u / sum_I u; that is the OCR/typesetting slip:
Lemma 1's cost U_I e^{-2 alpha} + U_J e^{2 alpha} is minimized at e^{4 alpha} = U_I / U_J,
and the printed ratio would make every better-than-chance learner break at once.
Zero weighted error (U_J = 0, alpha = +inf): the round is NOT applied; the loop stops with
stop_reason "perfect" and that column in ``perfect_learner``. U_I = 0 (alpha = -inf) stops as
"negative" like any alpha < 0. alpha = 0 exactly is applied (a no-op), as the figure says.

Run ``python tests/reference/boosting_numpy.py`` for the self-check.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar
from scipy.special import xlogy

_BRENT_XTOL = 1e-16
_BRENT_RTOL = 4.0 * np.finfo(float).eps
_KL_BOX_MARGIN = 1e-13  # tau: brentq bracket for the KL update is |n v| <= 1 - tau
_LOSSES = ("quadratic", "exponential")
_RELAXATIONS = ("kl", "l2", "l1")


# --------------------------------------------------------------------------------------------
# 0. Input checks
# --------------------------------------------------------------------------------------------


def _check_labels(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"y must be a 1-D array of -1/+1 labels, found {np.unique(y)}")
    return y


def _check_voters(H: np.ndarray, y: np.ndarray, binary: bool) -> np.ndarray:
    H = np.asarray(H, dtype=float)
    if H.ndim != 2 or H.shape[0] != y.shape[0]:
        raise ValueError(f"H must be (m, n) with m = {y.shape[0]}, got {H.shape}")
    if binary and not np.all(np.isin(H, (-1.0, 1.0))):
        raise ValueError("H must have entries in {-1, +1} for this learner")
    if not binary and np.any(np.abs(H) > 1.0):
        raise ValueError("H must have entries in [-1, 1]")
    return H


def _check_loss(loss: str, gamma: float) -> None:
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
    if not gamma > 0.0:
        raise ValueError(f"gamma must be > 0, got {gamma}")


# --------------------------------------------------------------------------------------------
# 1. Objectives from the definitions (germain2009 section 4, eqs. 16-17)
# --------------------------------------------------------------------------------------------


def quasi_uniform_posterior(w: np.ndarray) -> np.ndarray:
    """q (2n,) = [(1/n + w)/2, (1/n - w)/2]: Q_i and Q_{n+i} of germain2009 section 4.1."""
    w = np.asarray(w, dtype=float)
    n = w.shape[0]
    return np.concatenate([(1.0 / n + w) / 2.0, (1.0 / n - w) / 2.0])


def kl_to_uniform(q: np.ndarray) -> float:
    """KL(Q||P) = sum_k Q_k ln(Q_k / P_k) with P uniform on len(q) voters (0 ln 0 = 0)."""
    q = np.asarray(q, dtype=float)
    return float(np.sum(xlogy(q, q * q.shape[0])))


def losses(H: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float, loss: str) -> np.ndarray:
    """zeta_i from the margin M_i = y_i w . h(x_i): (M/gamma - 1)^2 or exp(-M/gamma)."""
    _check_loss(loss, gamma)
    margin = np.asarray(y, float) * (np.asarray(H, float) @ np.asarray(w, float))
    if loss == "quadratic":
        return (margin / gamma - 1.0) ** 2
    return np.exp(-margin / gamma)


def kl_objective(H, y, w, C, gamma, loss) -> float:
    """germain2009 f(Q) = C * sum_i zeta_Q(x_i, y_i) + KL(Q||P), Q quasi-uniform from w.

    C multiplies the sum (not the mean) over the m examples; P is uniform on the 2n voters
    of the self-complemented set [H, -H].
    """
    return float(
        C * np.sum(losses(H, y, w, gamma, loss)) + kl_to_uniform(quasi_uniform_posterior(w))
    )


def relaxed_objective(H, y, w, C, gamma, loss, relaxation) -> float:
    """The objective minimized by ``kl_coordinate_descent_reference`` for ``relaxation``.

    "kl": kl_objective; "l2": C sum zeta + ||w||_2^2 (eq. 17, C'' = C); "l1": C sum zeta + ||w||_1.
    """
    if relaxation == "kl":
        return kl_objective(H, y, w, C, gamma, loss)
    w = np.asarray(w, dtype=float)
    data_term = C * np.sum(losses(H, y, w, gamma, loss))
    if relaxation == "l2":
        return float(data_term + np.sum(w * w))
    if relaxation == "l1":
        return float(data_term + np.sum(np.abs(w)))
    raise ValueError(f"relaxation must be one of {_RELAXATIONS}, got {relaxation!r}")


# --------------------------------------------------------------------------------------------
# 2. The loss state D_w (eqs. 6, 9, 11-14) and one coordinate's derivative
# --------------------------------------------------------------------------------------------


def _initial_state(m: int, gamma: float, loss: str) -> np.ndarray:
    """Eq. 13 (D = -gamma, quadratic) or eq. 14 (D = 1, exponential): the state at w = 0."""
    return np.full(m, -gamma) if loss == "quadratic" else np.ones(m)


def _loss_derivative(D, a, delta, gamma, loss) -> float:
    """d/ddelta of sum_i zeta_i when w_j += delta, a_i = y_i h_j(x_i) (eqs. 5 and 8)."""
    if loss == "quadratic":
        return float(2.0 / gamma**2 * np.sum((D + a * delta) * a))
    return float(-np.sum(a * D * np.exp(-a * delta / gamma)) / gamma)


def _update_state(D, a, delta, gamma, loss) -> np.ndarray:
    """Eq. 11 (D_i += a_i delta) or eq. 12 (D_i *= exp(-a_i delta / gamma))."""
    if loss == "quadratic":
        return D + a * delta
    return D * np.exp(-a * delta / gamma)


def _argmin_convex_1d(derivative, lo: float, hi: float) -> float:
    """Minimizer on [lo, hi] of a convex function given its nondecreasing derivative."""
    if derivative(lo) >= 0.0:
        return lo
    if derivative(hi) <= 0.0:
        return hi
    return brentq(derivative, lo, hi, xtol=_BRENT_XTOL, rtol=_BRENT_RTOL, maxiter=500)


def _new_weight(D, a, w_j, n, C, gamma, loss, relaxation) -> float:
    """Exact minimizer v of the objective along coordinate j (module docstring)."""

    def data_slope(v):
        return C * _loss_derivative(D, a, v - w_j, gamma, loss)

    if relaxation == "kl":
        edge = (1.0 - _KL_BOX_MARGIN) / n
        v = _argmin_convex_1d(lambda v: data_slope(v) + np.arctanh(n * v), -edge, edge)
        # Steps 6-7 of Algorithm 1: a root beyond the bracket is within tau/n of the box end.
        return -1.0 / n if v == -edge else (1.0 / n if v == edge else v)
    if relaxation == "l2":
        return _argmin_convex_1d(lambda v: data_slope(v) + 2.0 * v, -1.0 / n, 1.0 / n)
    # l1: subgradient C L'(v) + sign(v), with [-1, 1] at v = 0.
    slope_at_zero = data_slope(0.0)
    if slope_at_zero < -1.0:
        return _argmin_convex_1d(lambda v: data_slope(v) + 1.0, 0.0, 1.0 / n)
    if slope_at_zero > 1.0:
        return _argmin_convex_1d(lambda v: data_slope(v) - 1.0, -1.0 / n, 0.0)
    return 0.0


# --------------------------------------------------------------------------------------------
# 3. Algorithm 1 (f minimization) and its l2 / l1 relaxations
# --------------------------------------------------------------------------------------------


def _check_order(order, n, n_sweeps):
    order = np.asarray(order)
    if order.ndim != 2 or order.shape[1] != n or not np.issubdtype(order.dtype, np.integer):
        raise ValueError(f"order must be an integer (n_sweeps, {n}) array, got {order.shape}")
    for row in order:
        if not np.array_equal(np.sort(row), np.arange(n)):
            raise ValueError("each row of order must be a permutation of 0..n-1")
    max_sweeps = order.shape[0] if n_sweeps is None else int(n_sweeps)
    if max_sweeps > order.shape[0]:
        raise ValueError(f"n_sweeps = {max_sweeps} > {order.shape[0]} rows of order")
    return order, max_sweeps


def kl_coordinate_descent_reference(
    H, y, C, gamma, loss, order, n_sweeps=None, eps=1e-8, relaxation="kl"
) -> dict:
    """germain2009 Algorithm 1 ("f minimization") on the self-complemented set [H, -H].

    Minimizes (module docstring for the derivations)
        "kl": f(w) = C sum_i zeta_i + KL(Q_w || P)      (C multiplies the sum over examples)
        "l2": C sum_i zeta_i + ||w||_2^2,  "l1": C sum_i zeta_i + ||w||_1
    over the box |w_j| <= 1/n, one exact coordinate minimization per visited pair, from w = 0.

    Args:
        H: (m, n) voter outputs in [-1, 1]. y: (m,) labels in {-1, +1}.
        C: weight of the summed loss; gamma > 0: loss scale; loss: "quadratic" | "exponential".
        order: (K, n) integers; row s is the pair order of sweep s (a permutation).
        n_sweeps: at most this many sweeps (default K). eps: stop after a sweep whose largest
            applied |delta| is <= eps (a negative eps runs every sweep).
        relaxation: "kl" | "l2" | "l1".

    Returns a dict: w (n,), q (2n,) = [(1/n + w)/2, (1/n - w)/2], objective (the minimized one,
    after the last sweep), initial_objective (w = 0), sweep_objectives (after each sweep done),
    max_abs_delta (per sweep), n_sweeps (done), converged, D (final eq. 6/9 state),
    kl_objective (f of the final w, also for the relaxations).
    """
    y = _check_labels(y)
    H = _check_voters(H, y, binary=False)
    _check_loss(loss, gamma)
    if relaxation not in _RELAXATIONS:
        raise ValueError(f"relaxation must be one of {_RELAXATIONS}, got {relaxation!r}")
    m, n = H.shape
    order, max_sweeps = _check_order(order, n, n_sweeps)

    w = np.zeros(n)
    D = _initial_state(m, gamma, loss)
    sweep_objectives, max_abs_delta = [], []
    converged = False
    for s in range(max_sweeps):
        largest = 0.0
        for j in order[s]:
            a = y * H[:, j]
            v = _new_weight(D, a, w[j], n, C, gamma, loss, relaxation)
            delta = v - w[j]
            w[j] = v
            D = _update_state(D, a, delta, gamma, loss)
            largest = max(largest, abs(delta))
        sweep_objectives.append(relaxed_objective(H, y, w, C, gamma, loss, relaxation))
        max_abs_delta.append(largest)
        if largest <= eps:
            converged = True
            break
    return {
        "w": w,
        "q": quasi_uniform_posterior(w),
        "objective": sweep_objectives[-1] if sweep_objectives else float(C * m),
        "initial_objective": relaxed_objective(H, y, np.zeros(n), C, gamma, loss, relaxation),
        "sweep_objectives": np.array(sweep_objectives),
        "max_abs_delta": np.array(max_abs_delta),
        "n_sweeps": len(sweep_objectives),
        "converged": converged,
        "D": D,
        "kl_objective": kl_objective(H, y, w, C, gamma, loss),
    }


# --------------------------------------------------------------------------------------------
# 4. VEB-Boost (shivaswamy Fig. 1) and discrete AdaBoost
# --------------------------------------------------------------------------------------------


def vebboost_cost(f: np.ndarray, y: np.ndarray, lam: float) -> float:
    """(sum_i e^{-y_i f_i})^2 + lam (m sum_i e^{-2 y_i f_i} - (sum_i e^{-y_i f_i})^2)."""
    e = np.exp(-np.asarray(y, float) * np.asarray(f, float))
    s1 = np.sum(e)
    return float(s1**2 + lam * (e.shape[0] * np.sum(e * e) - s1**2))


def lemma1_cost(u: np.ndarray, correct: np.ndarray, alpha: float) -> float:
    """shivaswamy eq. (1): U_I e^{-2 alpha} + U_J e^{2 alpha} with u = lam m w^2 + (1-lam) w."""
    return float(np.sum(u[correct]) * np.exp(-2 * alpha) + np.sum(u[~correct]) * np.exp(2 * alpha))


def theorem2_cost(w: np.ndarray, margins: np.ndarray, lam: float, alpha: float) -> float:
    """shivaswamy Thm 2 cost for normalized w and margins y_i G(x_i) in {-1, +1}."""
    e = w * np.exp(-alpha * margins)
    s1 = np.sum(e)
    return float(s1**2 + lam * (w.shape[0] * np.sum(e * e) - s1**2))


def vebboost_reference(H, y, lam, n_rounds) -> dict:
    """VEB-Boost (shivaswamy Fig. 1) with weak learners = the columns of H (entries +-1).

    Include complements ([H, -H]) in H if they should be available. Each round picks the column
    maximizing sum_i u_i y_i h(x_i) (first on ties), alpha_s = (1/4) ln(U_I / U_J) (Lemma 1),
    stops if alpha_s < 0 or if the column has zero u-weighted error (module docstring).

    Returns a dict: selected (n_rounds,) ints, alphas (n_rounds,), f (m,) training outputs,
    costs (n_rounds + 1,) with costs[0] at f = 0 (= m^2), weights (m,) final normalized w,
    n_rounds_done, stop_reason ("n_rounds" | "negative" | "perfect"), perfect_learner (-1 or
    the column). Rounds after a stop: selected -1, alpha 0, cost held at its last value.
    """
    y = _check_labels(y)
    H = _check_voters(H, y, binary=True)
    if lam < 0.0:
        raise ValueError(f"lam must be >= 0 (Thm 2 needs 0 <= lam <= 1), got {lam}")
    m = H.shape[0]
    w = np.full(m, 1.0 / m)
    f = np.zeros(m)
    selected = np.full(n_rounds, -1)
    alphas = np.zeros(n_rounds)
    costs = np.full(n_rounds + 1, vebboost_cost(f, y, lam))
    stop_reason, perfect_learner, done = "n_rounds", -1, 0
    for s in range(n_rounds):
        u = lam * m * w**2 + (1.0 - lam) * w
        j = int(np.argmax((u * y) @ H))
        correct = H[:, j] == y
        u_right, u_wrong = np.sum(u[correct]), np.sum(u[~correct])
        if u_wrong == 0.0:
            stop_reason, perfect_learner = "perfect", j
            break
        if u_right == 0.0 or u_right < u_wrong:
            stop_reason = "negative"
            break
        alpha = 0.25 * np.log(u_right / u_wrong)
        f = f + alpha * H[:, j]
        w = w * np.exp(-y * H[:, j] * alpha)
        w = w / np.sum(w)
        selected[s], alphas[s], done = j, alpha, s + 1
        costs[s + 1 :] = vebboost_cost(f, y, lam)
    return {
        "selected": selected,
        "alphas": alphas,
        "f": f,
        "costs": costs,
        "weights": w,
        "n_rounds_done": done,
        "stop_reason": stop_reason,
        "perfect_learner": perfect_learner,
    }


def adaboost_reference(H, y, n_rounds) -> dict:
    """Discrete AdaBoost on the columns of H (entries +-1).

    D_1 = 1/m; round t: err_j = sum_i D_i [h_j(x_i) != y_i], pick the smallest (first on ties),
    alpha_t = (1/2) ln((1 - err)/err), f += alpha_t h, D_i <- D_i exp(-alpha_t y_i h(x_i)) / Z_t.
    Stops (round not applied) if err >= 1/2 ("no_edge") or err == 0 ("perfect", column in
    perfect_learner; scikit-learn's SAMME instead keeps that learner with weight 1 and stops).
    scikit-learn's SAMME weight is log((1-err)/err) = 2 alpha_t; its sample weights agree.

    Returns a dict: selected, alphas, errors (n_rounds,), f (m,), exp_losses (n_rounds + 1,)
    = mean_i exp(-y_i f_i) after each round (index 0: f = 0), weights (m,), n_rounds_done,
    stop_reason, perfect_learner. Rounds after a stop: selected -1, alpha 0, error nan, loss held.
    """
    y = _check_labels(y)
    H = _check_voters(H, y, binary=True)
    m = H.shape[0]
    D = np.full(m, 1.0 / m)
    f = np.zeros(m)
    selected = np.full(n_rounds, -1)
    alphas = np.zeros(n_rounds)
    errors = np.full(n_rounds, np.nan)
    exp_losses = np.ones(n_rounds + 1)
    stop_reason, perfect_learner, done = "n_rounds", -1, 0
    for t in range(n_rounds):
        weighted_errors = D @ (H != y[:, None])
        j = int(np.argmin(weighted_errors))
        err = float(weighted_errors[j])
        if err <= 0.0:
            stop_reason, perfect_learner = "perfect", j
            break
        if err >= 0.5:
            stop_reason = "no_edge"
            break
        alpha = 0.5 * np.log((1.0 - err) / err)
        f = f + alpha * H[:, j]
        D = D * np.exp(-alpha * y * H[:, j])
        D = D / np.sum(D)
        selected[t], alphas[t], errors[t], done = j, alpha, err, t + 1
        exp_losses[t + 1 :] = np.mean(np.exp(-y * f))
    return {
        "selected": selected,
        "alphas": alphas,
        "errors": errors,
        "f": f,
        "exp_losses": exp_losses,
        "weights": D,
        "n_rounds_done": done,
        "stop_reason": stop_reason,
        "perfect_learner": perfect_learner,
    }


# --------------------------------------------------------------------------------------------
# 5. Self-check
# --------------------------------------------------------------------------------------------


def _problem(seed=0, m=50, n=12, n_informative=3, flip=0.25):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=m)
    H = rng.choice([-1.0, 1.0], size=(m, n))
    for j in range(n_informative):
        H[:, j] = y * np.where(rng.random(m) < flip, -1.0, 1.0)
    return H, y, rng


def _lbfgsb_kl(H, y, C, gamma, loss):
    """Direct minimization of f(w) (gradient from the definitions) on the shrunk box."""
    n = H.shape[1]

    def fun(w):
        margin = y * (H @ w)
        if loss == "quadratic":
            dzeta = 2.0 * (margin / gamma - 1.0) / gamma
        else:
            dzeta = -np.exp(-margin / gamma) / gamma
        grad = C * (H.T @ (dzeta * y)) + np.arctanh(n * w)  # dKL/dw_i = atanh(n w_i), eq. 4
        return kl_objective(H, y, w, C, gamma, loss), grad

    bound = 1.0 / n - 1e-12
    res = minimize(
        fun,
        np.zeros(n),
        jac=True,
        method="L-BFGS-B",
        bounds=[(-bound, bound)] * n,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxcor": 30},
    )
    return res.x, res.fun


def _lbfgsb_relaxed(H, y, C, gamma, loss, relaxation):
    """l2: direct; l1: split w = p - r, p, r in [0, 1/n] (smooth, same minimum)."""
    n = H.shape[1]

    def data(w):
        margin = y * (H @ w)
        if loss == "quadratic":
            return C * np.sum((margin / gamma - 1) ** 2), C * H.T @ (
                2 * (margin / gamma - 1) / gamma * y
            )
        e = np.exp(-margin / gamma)
        return C * np.sum(e), C * H.T @ (-e / gamma * y)

    if relaxation == "l2":

        def fun(w):
            val, grad = data(w)
            return val + w @ w, grad + 2 * w

        bounds = [(-1.0 / n, 1.0 / n)] * n
        x0 = np.zeros(n)
    else:

        def fun(pr):
            val, grad = data(pr[:n] - pr[n:])
            return val + np.sum(pr), np.concatenate([grad + 1, -grad + 1])

        bounds = [(0.0, 1.0 / n)] * (2 * n)
        x0 = np.zeros(2 * n)
    res = minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000, "maxcor": 30},
    )
    w = res.x if relaxation == "l2" else res.x[:n] - res.x[n:]
    return w, res.fun


def _check_kl_cd(H, y, rng):
    m, n = H.shape
    order = np.array([rng.permutation(n) for _ in range(20000)])
    settings = [(0.02, 1.0), (0.2, 0.3), (5.0, 0.2), (0.05, 0.05)]
    for loss in _LOSSES:
        for C, gamma in settings:
            out = kl_coordinate_descent_reference(H, y, C, gamma, loss, order, eps=1e-12)
            w, hist = out["w"], out["sweep_objectives"]
            assert out["converged"], (loss, C, gamma, out["n_sweeps"])
            assert np.isclose(out["initial_objective"], C * m)  # zeta = 1 at w = 0, KL = 0
            full = np.concatenate([[out["initial_objective"]], hist])
            assert np.all(np.diff(full) <= 1e-12 * np.abs(full[1:]) + 1e-13), (loss, C, gamma)
            assert np.all(np.abs(w) <= 1.0 / n)
            # state D (eqs. 11-14) equals its definition (eqs. 6, 9)
            margin = y * (H @ w)
            D_def = margin - gamma if loss == "quadratic" else np.exp(-margin / gamma)
            assert np.allclose(out["D"], D_def, rtol=1e-10, atol=1e-12)
            # q and the closed-form KL
            q = out["q"]
            assert np.isclose(q.sum(), 1.0) and np.all(q >= 0)
            nw = n * w
            kl_closed = np.sum(xlogy((1 + nw) / 2, 1 + nw) + xlogy((1 - nw) / 2, 1 - nw)) / n
            assert np.isclose(kl_to_uniform(q), kl_closed, rtol=1e-12, atol=1e-15)
            # global minimum of the convex f over the box
            w_ref, f_ref = _lbfgsb_kl(H, y, C, gamma, loss)
            assert out["objective"] <= f_ref + 1e-9 * max(1.0, abs(f_ref)), (loss, C, gamma)
            assert abs(out["objective"] - f_ref) <= 1e-7 * max(1.0, abs(f_ref)), (loss, C, gamma)
            assert np.allclose(w, w_ref, atol=1e-5 / n), (loss, C, gamma, w - w_ref)
            at_box = int(np.sum(np.abs(w) == 1.0 / n))
            print(
                f"  kl  {loss:11s} C={C:<5} gamma={gamma:<5} f={out['objective']:.10f} "
                f"lbfgsb={f_ref:.10f} sweeps={out['n_sweeps']} at_box={at_box}"
            )


def _check_relaxations(H, y, rng):
    n = H.shape[1]
    order = np.array([rng.permutation(n) for _ in range(20000)])
    for relaxation in ("l2", "l1"):
        for loss in _LOSSES:
            for C, gamma in [(0.02, 1.0), (0.5, 0.3), (5.0, 0.2)]:
                out = kl_coordinate_descent_reference(
                    H, y, C, gamma, loss, order, eps=1e-13, relaxation=relaxation
                )
                full = np.concatenate([[out["initial_objective"]], out["sweep_objectives"]])
                assert out["converged"]
                assert np.all(np.diff(full) <= 1e-12 * np.abs(full[1:]) + 1e-13)
                w_ref, f_ref = _lbfgsb_relaxed(H, y, C, gamma, loss, relaxation)
                assert out["objective"] <= f_ref + 1e-9 * max(1.0, abs(f_ref))
                assert abs(out["objective"] - f_ref) <= 1e-7 * max(1.0, abs(f_ref))
                assert np.allclose(out["w"], w_ref, atol=1e-5 / n)
                print(
                    f"  {relaxation}  {loss:11s} C={C:<5} gamma={gamma:<5} "
                    f"f={out['objective']:.10f} ref={f_ref:.10f} sweeps={out['n_sweeps']} "
                    f"zeros={int(np.sum(out['w'] == 0))}"
                )
    # KL <= n ||w||^2 (eq. 16) and KL <= ||w||_1 on random feasible w
    for _ in range(200):
        w = rng.uniform(-1, 1, n) / n
        kl = kl_to_uniform(quasi_uniform_posterior(w))
        assert kl <= n * np.sum(w * w) + 1e-15 and kl <= np.sum(np.abs(w)) + 1e-15
        assert (
            kl_objective(H, y, w, 0.3, 0.5, "exponential")
            <= n * relaxed_objective(H, y, w, 0.3 / n, 0.5, "exponential", "l2") + 1e-12
        )


def _check_vebboost(H, y):
    Hc = np.concatenate([H, -H], axis=1)
    m = H.shape[0]
    for lam in (0.0, 0.5, 1.0):
        out = vebboost_reference(Hc, y, lam, 40)
        costs = out["costs"]
        assert np.isclose(costs[0], m**2)
        assert np.all(np.diff(costs) <= 1e-12 * costs[:-1]), lam  # Thm 2: monotone
        # replay: Lemma 1 minimizer, Thm 2 bound, weights proportional to exp(-y f)
        w, f = np.full(m, 1.0 / m), np.zeros(m)
        for s in range(out["n_rounds_done"]):
            j, alpha = out["selected"][s], out["alphas"][s]
            u = lam * m * w**2 + (1 - lam) * w
            correct = Hc[:, j] == y
            best = minimize_scalar(
                lambda a, u=u, c=correct: lemma1_cost(u, c, a),
                bounds=(-5, 5),
                method="bounded",
                options={"xatol": 1e-12},
            )
            assert abs(best.x - alpha) < 1e-6
            margins = y * Hc[:, j]
            for a in (0.0, alpha, 0.5 * alpha, 2 * alpha):
                bound = lemma1_cost(u, correct, a)
                assert theorem2_cost(w, margins, lam, a) <= bound * (1 + 1e-12)
            assert np.isclose(theorem2_cost(w, margins, lam, 0.0), lemma1_cost(u, correct, 0.0))
            f = f + alpha * Hc[:, j]
            w = np.exp(-y * f) / np.sum(np.exp(-y * f))
        assert np.allclose(w, out["weights"]) and np.allclose(f, out["f"])
        print(
            f"  veb lam={lam}: rounds={out['n_rounds_done']} stop={out['stop_reason']} "
            f"cost {costs[0]:.1f} -> {costs[-1]:.4f}"
        )
    # the printed ratio sum_J u / sum_I u would give alpha < 0 at round 1
    u = np.full(m, 1.0 / m)
    j = int(np.argmax((u * y) @ Hc))
    assert np.sum(u[Hc[:, j] != y]) < np.sum(u[Hc[:, j] == y])
    # a perfect column stops without being applied
    out = vebboost_reference(np.column_stack([y, Hc]), y, 0.5, 5)
    assert out["stop_reason"] == "perfect" and out["perfect_learner"] == 0
    assert out["n_rounds_done"] == 0 and np.all(out["costs"] == m**2)


def _check_adaboost(H, y):
    Hc = np.concatenate([H, -H], axis=1)
    out = adaboost_reference(Hc, y, 40)
    losses_ = out["exp_losses"]
    assert np.all(np.diff(losses_) <= 1e-12)
    done = out["n_rounds_done"]
    err = out["errors"][:done]
    Z = 2 * np.sqrt(err * (1 - err))
    assert np.allclose(losses_[1 : done + 1], np.cumprod(Z))  # mean exp loss = prod Z_t
    e = np.exp(-y * out["f"])
    assert np.allclose(out["weights"], e / e.sum())
    # VEB-Boost with lam = 0 takes the same first learner with half of AdaBoost's alpha
    veb = vebboost_reference(Hc, y, 0.0, 1)
    assert veb["selected"][0] == out["selected"][0]
    assert np.isclose(veb["alphas"][0], out["alphas"][0] / 2)
    print(f"  adaboost: rounds={done} exp loss {losses_[0]:.3f} -> {losses_[-1]:.6f}")


def _self_check():
    H, y, rng = _problem()
    print("KL coordinate descent (Algorithm 1) vs L-BFGS-B:")
    _check_kl_cd(H, y, rng)
    print("l2 / l1 relaxations vs L-BFGS-B:")
    _check_relaxations(H, y, rng)
    print("VEB-Boost:")
    _check_vebboost(H, y)
    print("AdaBoost:")
    _check_adaboost(H, y)
    # real-valued voters in [-1, 1] for the KL learner
    Hr = np.tanh(2 * rng.standard_normal(H.shape))
    order = np.array([rng.permutation(H.shape[1]) for _ in range(20000)])
    for loss in _LOSSES:
        out = kl_coordinate_descent_reference(Hr, y, 0.3, 0.4, loss, order, eps=1e-12)
        _, f_ref = _lbfgsb_kl(Hr, y, 0.3, 0.4, loss)
        assert abs(out["objective"] - f_ref) <= 1e-7 * max(1.0, abs(f_ref))
    print("all boosting_numpy self-checks passed")


if __name__ == "__main__":
    _self_check()
