"""Independent NumPy reference for CB-Boost and GB-CB-Boost (bauvin2020).

Written from the paper text (``shared/papers/bauvin2020-cb-boost.txt``) and ``shared/design.md``
only, never from the JAX implementation. float64, Python loops, clarity over speed.

Source: Bauvin, Capponi, Roy, Laviolette, "Fast greedy C-bound minimization with guarantees",
Machine Learning 109, 2020 ("bauvin2020").

Notation (all means over the m training examples; f, g are vectors of voter or vote outputs,
f_i = f(x_i); a vote F = sum_s alpha_s h_s with alpha_s >= 0 need not be normalized):

- Def. 9, margin (first moment of the margin):      gamma(f)  = (1/m) sum_i y_i f_i
- Def. 10, squared normalized L2 norm (second moment of the margin, as y_i^2 = 1):
                                                    nu(f)     = (1/m) sum_i f_i^2
- Def. 8, agreement ratio:                          tau(f, g) = (1/m) sum_i f_i g_i
- Empirical C-bound (Def. 7), scale invariant in F:  C(F) = 1 - gamma(F)^2 / nu(F)
  (taken as 1 when gamma(F) <= 0, where Cor. 1 says nothing).

One direction (Thm 3). For the current vote F and a candidate voter h, the C-bound along
F + alpha h, alpha >= 0, is 1 - (gamma(F) + alpha gamma(h))^2 / (nu(F) + 2 alpha tau + alpha^2
nu(h)). Setting the derivative to zero gives the two stationary points alpha = -gamma(F)/gamma(h)
(mean margin 0, C = 1) and

    alpha* = (gamma(h) nu(F) - gamma(F) tau(F, h)) / (gamma(F) nu(h) - gamma(h) tau(F, h)),

which for voters in {-1, +1} (nu(h) = 1) is the paper's printed form
(gamma(h) nu(F) - gamma(F) tau) / (gamma(F) - gamma(h) tau). It is the minimizer over
alpha >= 0 exactly when gamma(h) > 0, gamma(F) > 0, the denominator is > 0 (the paper's
tau < gamma(F) / gamma(h) when nu(h) = 1) and the numerator is > 0 (alpha* > 0; the paper's
statement omits this last condition, but when the numerator is <= 0 the unconstrained optimum
is at alpha <= 0, C increases along alpha >= 0 and the direction is a dead end). Otherwise
alpha* = 0 (no decrease): such a candidate is "inadmissible" here.

Exact decrease (Property 1). With N = gamma(h) nu(F) - gamma(F) tau(F, h),

    S = C(F) - C(F + alpha* h) = N^2 / (nu(F) (nu(F) nu(h) - tau(F, h)^2)),

the paper's S_t with nu(h) = 1 (derivation: max over alpha of the Rayleigh-type quotient is
g^T G^-1 g with g = (gamma(F), gamma(h)), G = [[nu(F), tau], [tau, nu(h)]]; subtracting
gamma(F)^2 / nu(F) leaves the expression above).

Training-error bound (Cor. 2). For paper iteration t (t = 1 is the initial voter):

    R_S(B_Q) <= 1 - (1/m) (sum_i y_i [h_I1(x_i) + alpha_I2 h_I2(x_i)])^2
                       / sum_i (y_i [h_I1(x_i) + alpha_I2 h_I2(x_i)])^2  - sum_{j=3}^t S_j,

i.e. the C-bound of the two-voter vote (initial weight 1 on h_I1) minus the exact decreases of
the later iterations: a SUM over iterations (not a product), equal to the current C-bound in
exact arithmetic, and a training-error bound by Cor. 1 (C-bound >= P_S(margin <= 0) when the
mean margin is > 0).

Round bookkeeping used by every function here: ``n_rounds`` is the paper's T, the number of
iterations INCLUDING the initialization. Index r = 0 of every returned array is the initial
voter (alpha 1, decrease 0); index r >= 1 is paper iteration t = r + 1. When no admissible
direction is left, the remaining entries are: selected -1, alpha 0, decrease 0, and the C-bound
and error bound held at their last value.

Resolved ambiguities (the text lacks Algorithm 1's figure and Appendix B):

- Thm 3 defines F_k as the vote WITHOUT h_k and alpha as h_k's whole weight; this reference
  follows the brief and the boosting reading: F is the whole current vote and alpha* is added
  to h_k's weight (F_{t} = F_{t-1} + alpha* h_k), which only matters when h_k is re-selected.
  The initial weight is 1 (Cor. 2's h_I1 + alpha_I2 h_I2), so the alphas are on that scale.
- Directions with gamma(h) <= 0 are excluded as Thm 3 requires, although some of them do lower
  the C-bound (alpha > 0 with gamma(h) < 0 and h anti-correlated with F's errors).
- gamma(h) > 0 with a denominator <= 0 and numerator > 0 would mean C decreases towards
  alpha -> infinity (h alone beats F); excluded too (no finite minimizer). It cannot happen for
  {-1, +1} voters since the best-margin start already has the best single-voter C-bound.

Run ``python tests/reference/cbboost_numpy.py`` for the self-check.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------------
# 1. Statistics of Defs. 8-10 and the C-bound
# --------------------------------------------------------------------------------------------


def margin_gamma(f: np.ndarray, y: np.ndarray) -> float:
    """bauvin2020 Def. 9: gamma(f) = (1/m) sum_i y_i f(x_i)."""
    return float(np.mean(np.asarray(y, float) * np.asarray(f, float)))


def norm_nu(f: np.ndarray) -> float:
    """bauvin2020 Def. 10: nu(f) = (1/m) sum_i f(x_i)^2."""
    f = np.asarray(f, float)
    return float(np.mean(f * f))


def agreement_tau(f: np.ndarray, g: np.ndarray) -> float:
    """bauvin2020 Def. 8: tau(f, g) = (1/m) sum_i f(x_i) g(x_i)."""
    return float(np.mean(np.asarray(f, float) * np.asarray(g, float)))


def cbound_of_vote(F: np.ndarray, y: np.ndarray) -> float:
    """Empirical C-bound (Def. 7) of an unnormalized vote F (outputs F(x_i)).

    C = 1 - gamma(F)^2 / nu(F) = 1 - mu1^2 / mu2 of the margin y F (scale invariant);
    1 when gamma(F) <= 0 (mu1 <= 0).
    """
    g = margin_gamma(F, y)
    if g <= 0.0:
        return 1.0
    return 1.0 - g * g / norm_nu(F)


def cbound_of_combination(H: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """C-bound 1 - mu1^2 / mu2 of the margin y * (H @ w) / sum(w); 1 if mu1 <= 0.

    mu1 = mean margin, mu2 = mean squared margin (means over the m examples).
    """
    H = np.asarray(H, float)
    y = np.asarray(y, float)
    w = np.asarray(w, float)
    margin = y * (H @ w) / np.sum(w)
    mu1 = float(np.mean(margin))
    mu2 = float(np.mean(margin**2))
    if mu1 <= 0.0:
        return 1.0
    return 1.0 - mu1 * mu1 / mu2


def cbound_gradient(H: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Gradient of the C-bound of F = H @ w with respect to the (unnormalized) weights w.

    From C = 1 - gamma(F)^2 / nu(F): dgamma/dw_k = gamma(h_k), dnu/dw_k = 2 tau(F, h_k), so
    dC/dw_k = -2 gamma(F) (gamma(h_k) nu(F) - gamma(F) tau(F, h_k)) / nu(F)^2,
    i.e. -2 gamma(F) / nu(F)^2 times Thm 3's numerator. (Formula valid where gamma(F) > 0.)
    """
    H = np.asarray(H, float)
    F = H @ np.asarray(w, float)
    gF, nF = margin_gamma(F, y), norm_nu(F)
    grad = np.empty(H.shape[1])
    for k in range(H.shape[1]):
        h = H[:, k]
        grad[k] = -2.0 * gF * (margin_gamma(h, y) * nF - gF * agreement_tau(F, h)) / nF**2
    return grad


# --------------------------------------------------------------------------------------------
# 2. One direction: Theorem 3 and Property 1
# --------------------------------------------------------------------------------------------


def optimal_step(F: np.ndarray, h: np.ndarray, y: np.ndarray) -> tuple[float, float, bool]:
    """Thm 3 step and Property 1 decrease for adding alpha * h (alpha >= 0) to the vote F.

    Returns (alpha_star, decrease, admissible). admissible requires gamma(h) > 0,
    gamma(F) > 0, gamma(F) nu(h) - gamma(h) tau > 0 (Thm 3's tau < gamma(F) / gamma(h) for
    nu(h) = 1) and gamma(h) nu(F) - gamma(F) tau > 0 (alpha* > 0). Inadmissible: (0, 0, False).
    """
    gh, gF = margin_gamma(h, y), margin_gamma(F, y)
    nh, nF = norm_nu(h), norm_nu(F)
    tau = agreement_tau(F, h)
    numerator = gh * nF - gF * tau
    denominator = gF * nh - gh * tau
    if not (gh > 0.0 and gF > 0.0 and denominator > 0.0 and numerator > 0.0):
        return 0.0, 0.0, False
    alpha_star = numerator / denominator
    decrease = numerator**2 / (nF * (nF * nh - tau**2))
    return alpha_star, decrease, True


def initial_voter(H: np.ndarray, y: np.ndarray) -> int:
    """Algorithm 1 initialization: the voter with the best margin gamma(h) (first on ties)."""
    H = np.asarray(H, float)
    margins = np.array([margin_gamma(H[:, k], y) for k in range(H.shape[1])])
    return int(np.argmax(margins))


# --------------------------------------------------------------------------------------------
# 3. The greedy loop shared by CB-Boost and GB-CB-Boost
# --------------------------------------------------------------------------------------------


def _candidates(H, y, F, used, allow_reselect):
    """Thm 3 step, Property 1 decrease and C-bound after the step for every admissible voter."""
    out = {}
    for k in range(H.shape[1]):
        if used[k] and not allow_reselect:
            continue
        alpha, decrease, admissible = optimal_step(F, H[:, k], y)
        if admissible:
            out[k] = (alpha, decrease, cbound_of_vote(F + alpha * H[:, k], y))
    return out


def _choose_cbboost(H, y, F, cands):
    """CB-Boost (Sect. 3.2 exhaustive search, Alg. 1 line 12): smallest C-bound after the step."""
    return min(cands, key=lambda k: (cands[k][2], k))


def _choose_gradient(H, y, F, cands):
    """GB-CB-Boost: steepest coordinate, most negative dC/dalpha_k, among admissible voters."""
    gF, nF = margin_gamma(F, y), norm_nu(F)

    def dC(k):
        h = H[:, k]
        return -2.0 * gF * (margin_gamma(h, y) * nF - gF * agreement_tau(F, h)) / nF**2

    return min(cands, key=lambda k: (dC(k), k))


def _corollary2_bounds(cbound_init, cbound_two, decreases, n_done):
    """Cor. 2 per round: r = 0 -> C(h_I1) (Cor. 1); r = 1 -> C(h_I1 + alpha_I2 h_I2);
    r >= 2 (paper t = r + 1 > 2) -> C(h_I1 + alpha_I2 h_I2) - sum_{j=3}^{t} S_j, with S_j stored
    at decreases[j - 1]. Rounds past the stop hold the last value."""
    bounds = np.empty(len(decreases))
    bounds[0] = cbound_init
    for r in range(1, len(decreases)):
        if n_done < 2:  # no second voter was ever added
            bounds[r] = cbound_init
        else:
            last = min(r, n_done - 1)
            bounds[r] = cbound_two - float(np.sum(decreases[2 : last + 1]))
    return bounds


def _greedy_boost(H, y, n_rounds, allow_reselect, choose):
    H = np.asarray(H, float)
    y = np.asarray(y, float)
    n = H.shape[1]
    if n_rounds < 1:
        raise ValueError("n_rounds (the paper's T, initialization included) must be >= 1")
    alpha_vec = np.zeros(n)
    selected = np.full(n_rounds, -1, dtype=int)
    alphas = np.zeros(n_rounds)
    decreases = np.zeros(n_rounds)
    cbounds = np.empty(n_rounds)

    # Algorithm 1, lines 1-4: start from the best-margin voter with weight 1.
    first = initial_voter(H, y)
    alpha_vec[first] = 1.0
    F = H[:, first].copy()
    used = np.zeros(n, dtype=bool)
    used[first] = True
    selected[0], alphas[0] = first, 1.0
    cbounds[0] = cbound_of_combination(H, y, alpha_vec)
    n_done = 1  # number of iterations actually performed (initialization included)

    # Lines 5-13: for t = 2..T, best Thm 3 step over every direction, then update the vote.
    for r in range(1, n_rounds):
        cands = _candidates(H, y, F, used, allow_reselect)
        if not cands:  # no direction decreases the C-bound: stop
            cbounds[r:] = cbounds[r - 1]
            break
        k = choose(H, y, F, cands)
        alpha, decrease, _ = cands[k]
        alpha_vec[k] += alpha  # F_{t} = F_{t-1} + alpha* h_k (unnormalized)
        F = F + alpha * H[:, k]
        used[k] = True
        selected[r], alphas[r], decreases[r] = k, alpha, decrease
        cbounds[r] = cbound_of_combination(H, y, alpha_vec)
        n_done += 1

    cbound_two = cbounds[0]
    if n_done >= 2:  # Cor. 2's first term written out: vote h_I1 + alpha_I2 h_I2
        cbound_two = cbound_of_vote(H[:, selected[0]] + alphas[1] * H[:, selected[1]], y)
    return {
        "weights": alpha_vec / np.sum(alpha_vec),
        "cbounds": cbounds,
        "selected": selected,
        "alphas": alphas,
        "decreases": decreases,
        "error_bounds": _corollary2_bounds(cbounds[0], cbound_two, decreases, n_done),
        "unnormalized_weights": alpha_vec,
        "n_iterations": n_done,
    }


def cbboost_reference(
    H: np.ndarray, y: np.ndarray, n_rounds: int, allow_reselect: bool = True
) -> dict[str, np.ndarray]:
    """CB-Boost, bauvin2020 Algorithm 1 (Thm 3 steps, exhaustive direction choice).

    Args:
      H: (m, n) voter outputs (the paper's voters are in {-1, +1}; [-1, 1] is handled by the
        nu(h) terms of Thm 3 / Property 1).
      y: (m,) labels in {-1, +1}.
      n_rounds: the paper's T, iterations including the initialization.
      allow_reselect: if False, a voter already in the vote cannot be chosen again.

    Returns a dict: 'weights' (n,) distribution over H's columns; per round (length n_rounds,
    index 0 = initial voter) 'cbounds', 'selected' (-1 after a stop), 'alphas' (weight added,
    1 for the initial voter), 'decreases' (Property 1's S_t, 0 at index 0 and after a stop),
    'error_bounds' (Cor. 2); also 'unnormalized_weights' and 'n_iterations'.
    """
    return _greedy_boost(H, y, n_rounds, allow_reselect, _choose_cbboost)


def gbcbboost_reference(
    H: np.ndarray, y: np.ndarray, n_rounds: int, allow_reselect: bool = True
) -> dict[str, np.ndarray]:
    """GB-CB-Boost (bauvin2020 Sect. 3.2): gradient-chosen direction, Thm 3 step.

    Direction: the voter k with the most negative partial derivative dC/dalpha_k of the C-bound
    at the current weights (steepest coordinate descent), restricted to the voters where Thm 3
    gives a positive step (for those dC/dalpha_k < 0 automatically). As
    dC/dalpha_k = -2 gamma(F) N_k / nu(F)^2 with N_k = gamma(h_k) nu(F) - gamma(F) tau(F, h_k),
    this is argmax_k N_k. The ranking is the same for the gradient in normalized weights q.
    Same bookkeeping and return dict as ``cbboost_reference``.
    """
    return _greedy_boost(H, y, n_rounds, allow_reselect, _choose_gradient)


# --------------------------------------------------------------------------------------------
# 4. Self-check
# --------------------------------------------------------------------------------------------


def _random_problem(rng, m=60, n=20, n_informative=4, real_valued=False):
    y = rng.choice([-1.0, 1.0], size=m)
    H = rng.choice([-1.0, 1.0], size=(m, n))
    flip = rng.uniform(0.2, 0.4, size=n_informative)
    for j in range(n_informative):
        H[:, j] = np.where(rng.uniform(size=m) < flip[j], -y, y)
    if real_valued:
        H = H * rng.uniform(0.1, 1.0, size=(m, n))
    return H, y


def _cbound_along(F, h, y, grid):
    """C(F + a h) for every a in grid (vectorized over the grid, same formula as Def. 7)."""
    votes = F[None, :] + np.asarray(grid, float)[:, None] * h[None, :]
    mu1 = np.mean(y[None, :] * votes, axis=1)
    mu2 = np.mean(votes**2, axis=1)
    return np.where(mu1 > 0.0, 1.0 - mu1**2 / mu2, 1.0)


def _line_min_check(F, h, y, alpha_star):
    """alpha* minimizes C(F + alpha h) over alpha >= 0: dense grid and minimize_scalar."""
    from scipy.optimize import minimize_scalar

    def c(a):
        return cbound_of_vote(F + a * h, y)

    top = 10.0 * alpha_star + 10.0
    grid = np.concatenate([np.linspace(0.0, top, 20001), np.geomspace(1e-8, 1e6, 4001)])
    c_grid = float(np.min(_cbound_along(F, h, y, grid)))
    res = minimize_scalar(c, bounds=(0.0, top), method="bounded", options={"xatol": 1e-12})
    assert c(alpha_star) <= c_grid + 1e-13, (c(alpha_star), c_grid)
    assert c(alpha_star) <= res.fun + 1e-13, (c(alpha_star), res.fun)
    assert abs(res.x - alpha_star) <= 1e-4 * max(1.0, alpha_star), (res.x, alpha_star)


def _check_run(H, y, out, label, check_dead_ends):
    n = H.shape[1]
    w = out["unnormalized_weights"]
    assert np.isclose(out["weights"].sum(), 1.0) and np.all(out["weights"] >= 0.0)
    assert np.isclose(cbound_of_combination(H, y, w), out["cbounds"][out["n_iterations"] - 1])
    # Replay the rounds: C-bound after = before - S_t (Property 1), alpha* is a line minimizer.
    F = H[:, out["selected"][0]].copy()
    assert out["selected"][0] == initial_voter(H, y)
    for r in range(1, out["n_iterations"]):
        k, a, s = out["selected"][r], out["alphas"][r], out["decreases"][r]
        before, after = out["cbounds"][r - 1], out["cbounds"][r]
        assert abs(before - s - after) <= 1e-10, (label, r, before - s - after)
        assert after <= before + 1e-12 and s > 0.0
        _line_min_check(F, H[:, k], y, a)
        if check_dead_ends:  # every inadmissible direction with gamma(h) > 0 gives no decrease
            for j in range(n):
                if not optimal_step(F, H[:, j], y)[2] and margin_gamma(H[:, j], y) > 0.0:
                    grid = np.concatenate(
                        [np.linspace(0.0, 50.0, 20001), np.geomspace(1e-8, 1e6, 2001)]
                    )
                    c_line = _cbound_along(F, H[:, j], y, grid)
                    assert np.min(c_line) >= cbound_of_vote(F, y) - 1e-12, (label, r, j)
        F = F + a * H[:, k]
    assert np.all(np.diff(out["cbounds"]) <= 1e-12), label
    # Cor. 2 equals the C-bound (exact arithmetic) and bounds the training error of B_Q.
    assert np.allclose(out["error_bounds"], out["cbounds"], atol=1e-10), label
    margins = y * (H @ out["weights"])
    for r in range(len(out["cbounds"])):
        w_r = np.zeros(n)
        for t in range(min(r, out["n_iterations"] - 1) + 1):
            w_r[out["selected"][t]] += out["alphas"][t]
        err_r = np.mean(y * (H @ w_r) <= 0.0)  # ties counted as errors (stricter than Def. 3)
        assert out["error_bounds"][r] >= err_r - 1e-12, (label, r)
    print(
        f"{label}: T={len(out['cbounds'])} iterations={out['n_iterations']} "
        f"C: {out['cbounds'][0]:.4f} -> {out['cbounds'][-1]:.4f}, "
        f"train err {np.mean(margins <= 0.0):.3f}, voters used {np.count_nonzero(w)}"
    )


def _self_check():
    rng = np.random.default_rng(0)
    for trial in range(5):
        H, y = _random_problem(rng)
        # C-bound helpers agree and are scale invariant.
        w = rng.uniform(size=H.shape[1])
        assert np.isclose(cbound_of_combination(H, y, w), cbound_of_vote(H @ w, y))
        assert np.isclose(cbound_of_combination(H, y, 7.0 * w), cbound_of_combination(H, y, w))
        # Analytic gradient vs central finite differences.
        w = np.zeros(H.shape[1])
        w[initial_voter(H, y)] = 1.0
        w += 0.1 * rng.uniform(size=H.shape[1])
        eps = 1e-6
        fd = np.array(
            [
                (
                    cbound_of_combination(H, y, w + eps * e)
                    - cbound_of_combination(H, y, w - eps * e)
                )
                / (2 * eps)
                for e in np.eye(H.shape[1])
            ]
        )
        assert np.allclose(cbound_gradient(H, y, w), fd, atol=1e-7)

        cb = cbboost_reference(H, y, n_rounds=30)
        _check_run(H, y, cb, f"[{trial}] CB-Boost reselect", check_dead_ends=True)
        cb_no = cbboost_reference(H, y, n_rounds=30, allow_reselect=False)
        _check_run(H, y, cb_no, f"[{trial}] CB-Boost no-reselect", check_dead_ends=False)
        chosen = cb_no["selected"][cb_no["selected"] >= 0]
        assert len(set(chosen.tolist())) == len(chosen)
        gb = gbcbboost_reference(H, y, n_rounds=30)
        _check_run(H, y, gb, f"[{trial}] GB-CB-Boost", check_dead_ends=False)
        # GB's choice is the admissible voter with the most negative gradient (replayed).
        w_gb = np.zeros(H.shape[1])
        w_gb[gb["selected"][0]] = 1.0
        for r in range(1, gb["n_iterations"]):
            g = cbound_gradient(H, y, w_gb)
            F = H @ w_gb
            ok = [j for j in range(H.shape[1]) if optimal_step(F, H[:, j], y)[2]]
            assert gb["selected"][r] == ok[int(np.argmin(g[ok]))]
            w_gb[gb["selected"][r]] += gb["alphas"][r]
        # CB-Boost's greedy choice is at least as good as GB's for the first added voter.
        assert cb["cbounds"][1] <= gb["cbounds"][1] + 1e-12

    # Real-valued voters in [-1, 1]: Thm 3 / Property 1 with nu(h) != 1.
    H, y = _random_problem(rng, real_valued=True)
    _check_run(H, y, cbboost_reference(H, y, 20), "[real] CB-Boost", check_dead_ends=False)
    print("cbboost_numpy self-check passed")


if __name__ == "__main__":
    _self_check()
