"""scikit-learn's ``check_estimator`` on every estimator of :data:`ESTIMATORS` and on
:class:`ForestClassifier`, with small hyperparameters (3 stumps per feature, few rounds or
columns, 5 trees).

Each check fits on data of its own shape, and each new shape compiles the learner again, so
one estimator's checks cost 5-60 s of compilation. The estimators whose learners compile fast
run in the default tier, the others under ``-m thorough`` (CI runs both), here and in
tests/test_estimator_checks_columns.py. The modules are apart from tests/test_estimators.py
so that pytest-xdist runs them on different workers.

Every expected failure says why (``xfail_strict``: each must fail for real).
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from pacbound.estimators import ESTIMATORS, ForestClassifier

# small settings; the column-generation baselines run to convergence (max_columns 60: at 5 they
# stop early, and which of the columns tied on the checks' 15 x 30 set enters first depends
# on rounding, so the weighted and the repeated fits differ)
SETTINGS = {
    "mincq": {},
    "cqboost": {"max_columns": 5},
    "cbboost": {"n_rounds": 5},
    "gbcbboost": {"n_rounds": 5},
    "klboost": {"max_iter": 20},
    "vebboost": {"n_rounds": 5},
    "bound": {"max_iter": 20, "objective": "seeger"},  # PAC-Bound 2 compiles for ~25 s
    "adaboost": {"n_rounds": 5},
    "mdboost": {"max_columns": 60},
    "lpboost": {"max_columns": 5},
    "cgboost": {"max_columns": 60},
}
CHECKED = {name: ESTIMATORS[name](n_stumps=3, **kw) for name, kw in SETTINGS.items()}
# bounds on a held-out half: out of bag, two of 5 trees often share no example of the checks'
# 10-30 examples (a ValueError says so)
CHECKED["forest"] = ForestClassifier("rf", 5, max_iter=20, oob=0.5, random_state=0)
# check_estimator's CPU time per estimator (one process, XLA's default emitters, 2-core
# machine): forest 7 s, vebboost 26, adaboost 27, klboost 27, cbboost 38 (the default tier:
# ~125 s); gbcbboost 37, bound 54, mincq 65, cqboost 68 here and mdboost 93, lpboost, cgboost
# in tests/test_estimator_checks_columns.py (the thorough tier, two modules for two workers)
DEFAULT_TIER = ("cbboost", "klboost", "adaboost", "vebboost", "forest")
THOROUGH_TIER = ("gbcbboost", "bound", "mincq", "cqboost")
COLUMNS_TIER = ("mdboost", "lpboost", "cgboost")
assert set(DEFAULT_TIER + THOROUGH_TIER + COLUMNS_TIER) == set(CHECKED)

EXPECTED_FAILED: dict[str, dict[str, str]] = {
    "MinCqClassifier": {
        "check_sample_weight_equivalence_on_dense_data": "issue #36: MinCq stops at a "
        "certified duality gap (rtol 1e-6 on mu2), so the weighted and the repeated fits "
        "agree to about that tolerance (2e-8 here), not to the check's rtol 1e-7 / atol 1e-9",
    },
}


def expected_failed(estimator) -> dict[str, str]:
    return EXPECTED_FAILED.get(type(estimator).__name__, {})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # the forest's OOB warnings on the checks' tiny sets
        warnings.filterwarnings("ignore", "Some inputs do not have OOB scores")
        warnings.filterwarnings("ignore", "invalid value encountered in divide")
        yield


@parametrize_with_checks([CHECKED[n] for n in DEFAULT_TIER], expected_failed_checks=expected_failed)
def test_check_estimator(estimator, check):
    check(estimator)


@pytest.mark.thorough
@parametrize_with_checks(
    [CHECKED[n] for n in THOROUGH_TIER], expected_failed_checks=expected_failed
)
def test_check_estimator_thorough(estimator, check):
    check(estimator)
