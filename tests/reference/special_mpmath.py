"""High-precision mpmath references for ``pacbound._src.special``: values and derivatives of the
regularized incomplete beta function ``I_x(a, b)``, ``ln B(a, b)`` and the Stirling and
digamma remainders.

Written from the definitions only, never from the JAX implementation:

- values: ``mpmath.betainc(a, b, 0, x, regularized=True)`` while ``a + b <= 200``; beyond,
  where its alternating hypergeometric series needs thousands of bits (minutes at
  ``a = b = 1e4``), the positive-term form DLMF 8.17.8,
  ``I_x(a, b) = x^a (1-x)^b / (a B(a, b)) 2F1(a + b, 1; a + 1; x)``, by ``mpmath.hyp2f1``;
- derivatives in ``a`` and ``b``: ``mpmath.diff`` (finite differences at raised working
  precision) of the same function; in ``x``: the Beta density in closed form.

Every quantity is computed on the smaller tail (``x <= a / (a + b)``: ``I_x(a, b)``; beyond:
``1 - I_{1-x}(b, a)``, differentiated as ``-d I_{1-x}(b, a)``), so derivatives of values near 1
keep their relative accuracy. Inputs are Python floats, taken exactly.

Run ``python tests/reference/special_mpmath.py`` for the self-check: the two value formulas
agree; the derivatives match ``mpmath.quad`` of the differentiated integrand and the closed
forms ``I_x(a, 1) = x^a``, ``I_x(1, b) = 1 - (1-x)^b``.
"""

from __future__ import annotations

import mpmath as mp

DPS = 40
_BETAINC_UP_TO = 200.0


def _lower_tail(a, b, x):
    """``I_x(a, b)`` at the ambient mpmath precision (``a, b, x`` are mpf)."""
    if a + b <= _BETAINC_UP_TO:
        return mp.betainc(a, b, 0, x, regularized=True)
    power = mp.exp(a * mp.log(x) + b * mp.log1p(-x) - mp.log(a) - mp.log(mp.beta(a, b)))
    return power * mp.hyp2f1(a + b, 1, a + 1, x)


def _oriented(a: float, b: float, x: float):
    """``(a', b', x', sign)``: the smaller tail is ``I_{x'}(a', b')`` and ``I = (1 - sign) / 2 +
    sign * I_{x'}(a', b')``."""
    a, b, x = mp.mpf(a), mp.mpf(b), mp.mpf(x)
    if x * (a + b) <= a:
        return a, b, x, 1
    return b, a, 1 - x, -1


def betainc(a: float, b: float, x: float) -> float:
    """``I_x(a, b)`` to double precision (``0 < x < 1``, ``a, b > 0``)."""
    with mp.workdps(DPS):
        a1, b1, x1, sign = _oriented(a, b, x)
        tail = _lower_tail(a1, b1, x1)
        return float(tail if sign > 0 else 1 - tail)


def beta_density(a: float, b: float, x: float) -> float:
    """``d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)``."""
    with mp.workdps(DPS):
        a, b, x = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        log_density = (a - 1) * mp.log(x) + (b - 1) * mp.log1p(-x) - mp.log(mp.beta(a, b))
        return float(mp.exp(log_density))


def betainc_gradient(a: float, b: float, x: float) -> tuple[float, float, float]:
    """``(dI/da, dI/db, dI/dx)`` to about ``1e-15`` relative.

    ``mpmath.diff`` with the default step at ``DPS`` digits: the function is evaluated at the
    raised working precision ``diff`` sets, so the differences keep ~25 digits.
    """
    with mp.workdps(DPS):
        a1, b1, x1, sign = _oriented(a, b, x)
        tail = lambda p, q: _lower_tail(p, q, x1)  # noqa: E731
        d_first = sign * mp.diff(tail, (a1, b1), (1, 0))
        d_second = sign * mp.diff(tail, (a1, b1), (0, 1))
        d_a, d_b = (d_first, d_second) if sign > 0 else (d_second, d_first)
        return float(d_a), float(d_b), beta_density(a, b, x)


def log_beta(a: float, b: float) -> float:
    """``ln B(a, b)``."""
    with mp.workdps(DPS):
        return float(mp.log(mp.beta(a, b)))


def stirling_remainder(z: float) -> float:
    """``ln Gamma(z) - (z - 1/2) ln z + z - ln sqrt(2 pi)``."""
    with mp.workdps(DPS):
        z = mp.mpf(z)
        return float(mp.loggamma(z) - (z - 0.5) * mp.log(z) + z - mp.log(2 * mp.pi) / 2)


def digamma_minus_log(z: float) -> float:
    """``psi(z) - ln z``."""
    with mp.workdps(DPS):
        return float(mp.digamma(z) - mp.log(z))


def _quad_gradient_in_a(a: float, b: float, x: float) -> float:
    """``dI/da`` by quadrature, for the self-check only: ``d/da`` under the integral sign,
    ``int_0^x (ln t - psi(a) + psi(a+b)) t^(a-1) (1-t)^(b-1) dt / B(a, b)``."""
    with mp.workdps(DPS):
        a, b, x = mp.mpf(a), mp.mpf(b), mp.mpf(x)
        shift = mp.digamma(a + b) - mp.digamma(a)

        def integrand(t):
            return (mp.log(t) + shift) * t ** (a - 1) * (1 - t) ** (b - 1)

        mode, spread = a / (a + b), mp.sqrt(a * b / (a + b) ** 3)
        inner = [mode + k * spread for k in (-4, -2, -1, 0, 1, 2, 4)]
        points = [0, *(t for t in inner if 0 < t < x), x]
        return float(mp.quad(integrand, points) / mp.beta(a, b))


def _self_check() -> None:
    for a, b, x in [(2.0, 3.0, 0.4), (0.5, 7.5, 0.1), (30.0, 50.0, 0.45), (120.0, 90.0, 0.6)]:
        with mp.workdps(DPS):
            direct = mp.betainc(a, b, 0, x, regularized=True)
            a_, b_, x_ = mp.mpf(a), mp.mpf(b), mp.mpf(x)
            power = x_**a_ * (1 - x_) ** b_ / (a_ * mp.beta(a_, b_))
            series = power * mp.hyp2f1(a_ + b_, 1, a_ + 1, x_)
        assert abs(direct - series) < 1e-30, (a, b, x)
    for a, b, x in [(2.0, 3.0, 0.4), (0.5, 7.5, 0.1), (30.0, 50.0, 0.45)]:
        grad_a = betainc_gradient(a, b, x)[0]
        assert abs(grad_a - _quad_gradient_in_a(a, b, x)) <= 1e-13 * abs(grad_a), (a, b, x)
    # Closed forms, both value branches: I_x(a, 1) = x^a and I_x(1, b) = 1 - (1 - x)^b.
    for a, x in [(0.3, 0.2), (7.5, 0.8), (300.5, 0.995), (2e3, 0.9995)]:
        with mp.workdps(DPS):
            exact = mp.mpf(x) ** a * mp.log(x)
        assert abs(betainc_gradient(a, 1.0, x)[0] - exact) <= 1e-14 * abs(exact), (a, x)
        assert abs(betainc(a, 1.0, x) - x**a) <= 1e-15
        with mp.workdps(DPS):
            exact = -((1 - mp.mpf(1 - x)) ** a) * mp.log(1 - mp.mpf(1 - x))
        assert abs(betainc_gradient(1.0, a, 1 - x)[1] - exact) <= 1e-14 * abs(exact), (a, x)
    assert abs(betainc(1e4, 1e4, 0.5) - 0.5) < 1e-15
    print("special_mpmath self-check passed")


if __name__ == "__main__":
    _self_check()
