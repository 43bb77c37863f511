"""mpmath references for PAC-Bayes-Unexpected-Bernstein and CCPBUB (imports nothing from
pacbound), written from the papers' formulas:

[MGG19] Mhammedi, Grünwald, Guedj, NeurIPS 2019, Theorem 1 (fixed prior): for a loss bounded
above by ``b``, with probability ``>= 1 - delta``, for all ``Q`` and all ``eta`` of the grid
``G = {1 / (2^i b) : i = 1..k}``, ``k = ceil(log2(sqrt(n / ln(1/delta)) / 2))``,

    E_Q[L] <= E_Q[L_S] + psi(eta b) / (eta b^2) E_Q[V_S] + (KL + ln(k / delta)) / (eta n),
    psi(u) = -ln(1 - u) - u,

``V_S`` the empirical second moment of the loss. ``k`` is at least 1 (the formula gives
``k <= 0`` for ``n < 4 ln(1/delta)``: one grid point is the least a union bound can hold) and at
most ``CAP`` (``k -> inf`` as ``delta -> 1``; any fixed ``k`` is a valid union bound): the
conventions pacbound documents. CCPBUB ([WMLIS21]): the same with the mu-tandem loss, ``b =
(1 - mu)^2``, ``2 KL``, ``n2``, ``delta / n_mu``, then ``max(., 0) / (1/2 - mu)^2`` clipped to
``[0, 1]``.

Every value is computed at ``DPS`` digits from the given floats converted exactly; the results
are mpmath numbers (the exact value of the formula to ~1e-45).
"""

from __future__ import annotations

import mpmath as mp

DPS = 60
CAP = 64


def _mpf(x) -> mp.mpf:
    """A float converted exactly (an mpmath number kept as it is)."""
    return x if isinstance(x, mp.mpf) else mp.mpf(float(x))


def grid_size(n, delta) -> int:
    """[MGG19]'s ``k``, at least 1 and at most ``CAP``."""
    with mp.workdps(DPS):
        log_inv = -mp.log(_mpf(delta))
        if log_inv == 0:
            return CAP
        k = mp.ceil(mp.log(mp.sqrt(_mpf(n) / log_inv) / 2, 2))
        return int(min(max(k, 1), CAP))


def psi(u: mp.mpf) -> mp.mpf:
    """``-ln(1 - u) - u``."""
    return -mp.log(1 - u) - u


def pbub_unclipped(loss, second_moment, kl_term, n, delta, b) -> mp.mpf:
    """``min_{eta in G}`` of Theorem 1's right-hand side (``kl_term``: KL, or 2 KL for pairs)."""
    with mp.workdps(DPS):
        loss, v, kl_term, n, delta, b = (
            _mpf(x) for x in (loss, second_moment, kl_term, n, delta, b)
        )
        k = grid_size(n, delta)
        complexity = max(kl_term, 0) + mp.log(k) - mp.log(delta)
        best = mp.inf
        for i in range(1, k + 1):
            eta = 1 / (mp.mpf(2) ** i * b)
            value = loss + psi(eta * b) / (eta * b**2) * max(v, 0) + complexity / (eta * n)
            best = min(best, value)
        return best


def pbub(loss, second_moment, kl, n, delta, b=1.0) -> mp.mpf:
    """[MGG19] Theorem 1 on ``E_Q[L]``, at most ``b`` (the loss is)."""
    with mp.workdps(DPS):
        return min(pbub_unclipped(loss, second_moment, kl, n, delta, b), _mpf(b))


def ccpbub(risk, second_moment, kl, n2, delta, mu, n_mu=1, clip=True) -> mp.mpf:
    """CCPBUB: PBUB on the mu-tandem loss, Chebyshev-Cantelli, clipped to ``[0, 1]``."""
    with mp.workdps(DPS):
        mu = _mpf(mu)
        level = _mpf(delta) / n_mu
        b = (1 - mu) ** 2
        numerator = pbub_unclipped(risk, second_moment, 2 * _mpf(kl), n2, level, b)
        value = max(numerator, 0) / (mp.mpf(1) / 2 - mu) ** 2
        return min(value, 1) if clip else value
