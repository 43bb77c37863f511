"""The independent references check themselves: each module of tests/reference/ that carries a
self-check (its ``python tests/reference/<module>.py``) runs it here, so that a reference that
drifted fails the suite instead of passing its error on to the tests that trust it."""

import pytest

from tests.reference import (
    boosting_numpy,
    bounds_numpy,
    cbboost_numpy,
    mpmath_bounds,
    special_mpmath,
)


def test_bounds_numpy_self_check():
    """Margin identities, divergences, kl-inverses, xi(m), the general-loss constants."""
    bounds_numpy._self_check()


def test_boosting_numpy_self_check():
    """KL coordinate descent, its l2 / l1 relaxations, VEB-Boost and AdaBoost against
    L-BFGS-B and their definitions."""
    boosting_numpy._self_check()


def test_special_mpmath_self_check():
    """The regularized incomplete beta and its derivatives against series and closed forms."""
    special_mpmath._self_check()


def test_mpmath_bounds_long_double_against_mpmath():
    """The long-double xi(m) and kl-inverse brackets against their 50-digit mpmath versions:
    the brackets hold the exact roots (asserted inside) and both gaps stay at long-double
    rounding."""
    xi_gap, bracket_width = mpmath_bounds.check_ld_against_mp()
    assert xi_gap <= 1e-18 and bracket_width <= 1e-18, (xi_gap, bracket_width)


@pytest.mark.thorough
def test_cbboost_numpy_self_check():
    """CB-Boost's closed forms, gradients and dead ends (test_cbboost checks the library
    against this reference by default)."""
    cbboost_numpy._self_check()
