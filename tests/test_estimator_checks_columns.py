"""``check_estimator`` on the column-generation baselines (MDBoost, LPBoost, CG-Boost) under
``-m thorough``: the settings and expected failures of tests/test_estimator_checks.py, in a
module of their own so that pytest-xdist runs them beside the other thorough checks."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from tests.test_estimator_checks import CHECKED, COLUMNS_TIER, expected_failed


@pytest.mark.thorough
@parametrize_with_checks([CHECKED[n] for n in COLUMNS_TIER], expected_failed_checks=expected_failed)
def test_check_estimator_columns(estimator, check):
    check(estimator)
