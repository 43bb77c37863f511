"""CqBoost, MDBoost, LPBoost and CG-Boost (roy2016 §4-6) against CVXOPT / HiGHS.

The learners take the voters ``S`` as the user has them and weigh ``[S, -S]`` implicitly; the
references solve the same programs on the materialized ``H = [S, -S]``. The four learners
share their tests (restricted and full programs against the references, zero weights against
slicing, ``jit`` / ``vmap`` over the hyperparameter and fold masks without recompiling, in
float64 and float32, the matrix-free stumps, a posterior that sums to 1); each keeps its own
reference checks (``_check_*``) and tests below. One small wdbc problem, ``(80, 20)`` votes.
"""

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import voters
from pacbound._src.learning.candidates import split_index
from pacbound._src.solvers.cgboost import cgboost
from pacbound._src.solvers.cqboost import cqboost, cqboost_max_mu
from pacbound._src.solvers.lpboost import lpboost
from pacbound._src.solvers.mdboost import mdboost
from pacbound.margins import margin_moments
from pacbound.voters import stump_search
from tests.reference import column_generation_cvxopt as ref

MAX_COLUMNS = 40


def _split(H):
    """The voters ``S`` the user has, from the reference's ``H = [S, -S]``."""
    return H[:, : H.shape[1] // 2]


def _program_q(r, size):
    """The program's own (unnormalized) weights scattered onto the ``size`` columns of
    ``[S, -S]``."""
    selected = np.asarray(r.info.selected)
    q = np.zeros(size)
    np.add.at(q, selected[selected >= 0], np.asarray(r.info.program_weights)[selected >= 0])
    return q


def _check_posterior(r, size, rtol=1e-12):
    """``q`` is the program's weights normalized over ``[S, -S]`` (uniform for the empty vote)
    and ``weights = q[:n] - q[n:]``."""
    q, program = np.asarray(r.q, np.float64), _program_q(r, size)
    assert q.shape == (size,) and np.all(q >= 0)
    np.testing.assert_allclose(q.sum(), 1, rtol=rtol)
    expected = program / program.sum() if program.sum() > 0 else np.full(size, 1 / size)
    np.testing.assert_allclose(q, expected, rtol=rtol, atol=rtol / size)
    q = np.asarray(r.q)  # the difference in the result's dtype
    np.testing.assert_allclose(  # one rounding: the difference may be fused under jit
        np.asarray(r.weights),
        q[: size // 2] - q[size // 2 :],
        rtol=0,
        atol=4 * np.finfo(q.dtype).eps,
    )


def _check_cqboost(H, y, mu, r, full):
    """Program (3)'s constraints; its objective is ``mu2`` of the vote; sparse."""
    q = np.asarray(r.q)
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    mu1, mu2 = margin_moments(H, y, q)
    assert float(mu1) >= mu - 1e-12
    np.testing.assert_allclose(float(mu2), float(r.objective), rtol=1e-12)
    assert ref.max_violation(H, y, r.info.alpha, float(r.info.nu)) <= 1e-6
    assert int((q > 0).sum()) < H.shape[1]


def _check_mdboost(H, y, D, r, full):
    """roy2016 §6: the objective is ``m [D m / (2 (m - 1)) (mu2 - mu1^2) - mu1]``."""
    q, m = np.asarray(r.q), len(y)
    assert np.all(q >= 0) and abs(q.sum() - 1) < 1e-12
    mu1, mu2 = (float(t) for t in margin_moments(H, y, q))
    np.testing.assert_allclose(
        m * (D * m / (2 * (m - 1)) * (mu2 - mu1**2) - mu1), float(r.objective), rtol=1e-10
    )
    assert ref.max_violation(H, y, r.info.alpha, float(r.info.nu)) <= 1e-6


def _check_lpboost(H, y, C, r, full):
    """``1^T q + C sum xi`` in the LP's ``q``; duals in ``[0, C]``, feasible for ``edge <= 1``
    on every column; the vote ``S @ weights`` is the LP's up to its scale ``1^T q``."""
    q, alpha = _program_q(r, H.shape[1]), np.asarray(r.info.alpha)
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q.sum() + C * slack.sum(), float(r.objective), rtol=1e-12)
    assert np.all(q >= 0) and np.all(alpha >= 0) and np.all(alpha <= C + 1e-12)
    assert ref.max_violation(H, y, alpha, 1.0) <= 1e-6
    vote = _split(H) @ np.asarray(r.weights)
    np.testing.assert_allclose(vote * q.sum(), H @ q, atol=1e-12)


def _check_cgboost(H, y, C, r, full):
    """``q^T q / 2 + C sum xi``; the QP's ``q`` is unique; ``edge_i <= q_i`` on every column."""
    q = _program_q(r, H.shape[1])
    np.testing.assert_allclose(q, full.q, atol=1e-5)
    np.testing.assert_allclose(np.asarray(r.q), full.q / full.q.sum(), atol=1e-5)
    slack = np.maximum(0, 1 - y * (H @ q))
    np.testing.assert_allclose(q @ q / 2 + C * slack.sum(), float(r.objective), rtol=1e-12)
    assert np.max(H.T @ (y * np.asarray(r.info.alpha)) - q) <= 1e-6


class Case(NamedTuple):
    fit: Callable
    fit_stumps: Callable
    program: Callable  # the reference: program(H, y, value, w=None) -> ref.Solution
    values: tuple  # checked against the reference
    value: float  # of the weighted, vmapped and float32 runs
    check: Callable  # the learner's own checks: check(H, y, value, result, full_solution)
    unique_q: bool  # the optimal q is unique (not LPBoost's LP)
    stumps: Callable  # (X, y, search) -> (X, y, value, max_iter) of the matrix-free test


CASES = {
    "cqboost": Case(cqboost, cqboost, ref.cqboost_qp, (0.2, 0.35), 0.3, _check_cqboost,
                    True, lambda X, y, s: (X, y, 0.9 * float(cqboost_max_mu(s, y)), 60)),
    "mdboost": Case(mdboost, mdboost, ref.mdboost_qp, (1.0, 30.0), 10.0, _check_mdboost,
                    True, lambda X, y, s: (X, y, 10.0, 60)),
    "lpboost": Case(lpboost, lpboost, ref.lpboost_lp, (0.05, 1.0), 0.5, _check_lpboost,
                    False, lambda X, y, s: (X, y, 1.0, 60)),
    # CG-Boost's L2 optimum is dense (half the stumps): a smaller sample, 2 features
    "cgboost": Case(cgboost, cgboost, ref.cgboost_qp, (0.01, 0.3), 0.1, _check_cgboost,
                    True, lambda X, y, s: (X[:40, :2], y[:40], 0.01, 90)),
}  # fmt: skip
VALUES = [(name, v) for name, case in CASES.items() for v in case.values]
# The four learners share the driver (Algorithm 1, its pricing over ``S`` or the stumps, the
# sample weights' checks) and two master solvers: CqBoost's and MDBoost's simplex QP, LPBoost's
# and CG-Boost's interior point (``soft_margin_spec``). Where a test re-checks that shared code
# the default run keeps one learner of each master and marks the others thorough.
DEFAULT_LEARNERS = {"cqboost", "lpboost"}


def _one_per_master(names=CASES, default=DEFAULT_LEARNERS):
    return [n if n in default else pytest.param(n, marks=pytest.mark.thorough) for n in names]


@pytest.fixture(scope="module")
def problem():
    return ref.stump_problem()


@pytest.fixture(scope="module")
def solved(problem):
    """``solved(name, value)``: the learner's run at ``value`` on ``S``, computed once."""
    _, y, H = problem
    cache = {}

    def get(name, value):
        if (name, value) not in cache:
            cache[name, value] = CASES[name].fit(_split(H), y, value, max_columns=MAX_COLUMNS)
        return cache[name, value]

    return get


@pytest.mark.parametrize(("name", "value"), VALUES)
def test_matches_reference_restricted_and_full(problem, solved, name, value):
    """The learner on ``S`` solves the reference's program on ``[S, -S]``: restricted to the
    columns it selected, and over all of them."""
    _, y, H = problem
    case, r = CASES[name], solved(name, value)
    assert bool(r.converged) and int(r.steps) == int(r.info.n_columns)
    cols = np.asarray(r.info.selected)[: int(r.steps)]
    full = case.program(H, y, value)
    restricted = case.program(H[:, cols], y, value)
    np.testing.assert_allclose(float(r.objective), restricted.objective, rtol=1e-8)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    # the dual certificate: no column outside the program violates edge <= nu by > tol
    others = np.setdiff1d(np.arange(H.shape[1]), cols)
    assert ref.max_violation(H[:, others], y, r.info.alpha, float(r.info.nu)) <= 1e-6
    assert float(r.info.max_violation) <= 1e-6
    assert r.voters is None and r.info.n_candidates is None
    case.check(H, y, value, r, full)


@pytest.mark.parametrize(("name", "value"), VALUES)
def test_posterior_is_the_normalized_program(problem, solved, name, value):
    """``q`` sums to 1 over ``[S, -S]`` for every learner (LPBoost's and CG-Boost's programs
    do not: their ``q`` is divided by its sum)."""
    _check_posterior(solved(name, value), problem[2].shape[1])


# CG-Boost weighs the examples in LPBoost's master (``soft_margin_spec``): thorough
@pytest.mark.parametrize("name", _one_per_master(default={"cqboost", "mdboost", "lpboost"}))
def test_zero_weights_equal_slicing(problem, name):
    _, y, H = problem
    S, case = _split(H), CASES[name]
    keep = np.arange(len(y)) % 4 != 1
    masked = case.fit(S, y, case.value, max_columns=MAX_COLUMNS, sample_weight=keep.astype(float))
    sliced = case.fit(S[keep], y[keep], case.value, max_columns=MAX_COLUMNS)
    np.testing.assert_allclose(float(masked.objective), float(sliced.objective), rtol=1e-8)
    if case.unique_q:
        np.testing.assert_allclose(np.asarray(masked.q), np.asarray(sliced.q), atol=1e-6)
    np.testing.assert_array_equal(np.asarray(masked.info.alpha)[~keep], 0)
    weighted = case.program(H, y, case.value, keep.astype(float))
    np.testing.assert_allclose(float(masked.objective), weighted.objective, rtol=1e-6)


# float64: as tight as the single runs are; float32: within float32's master tolerance
AGREEMENT = {np.float64: (1e-9, 1e-7), np.float32: (1e-4, 1e-4)}  # objective rtol, q atol


# float64: test_protocol checks jit == vmap == no-jit over fold masks for every learner
# (MDBoost and CG-Boost included, each in float64)
@pytest.mark.parametrize(
    "dtype",
    [pytest.param(np.float64, marks=pytest.mark.thorough, id="float64"), np.float32],
    ids=["float64", "float32"],
)
@pytest.mark.parametrize("name", _one_per_master())
def test_jit_vmap_and_eager_agree_without_recompiling(problem, name, dtype, no_compilation):
    """``jit`` == no-jit == ``vmap`` over the hyperparameter and 0/1 fold masks; new values of
    the hyperparameter, ``tol`` and the masks compile nothing."""
    _, y, H = problem
    S, y, case = _split(H).astype(dtype), y.astype(dtype), CASES[name]
    values = jnp.array(case.values, dtype)
    folds = jnp.asarray(np.arange(len(y))[None, :] % 2 != np.arange(2)[:, None], dtype)

    def run(value, w, tol=1e-6):
        return case.fit(S, y, value, sample_weight=w, tol=tol, max_columns=MAX_COLUMNS)

    jitted, swept = jax.jit(run), jax.vmap(run)(values, folds)
    rtol, atol = AGREEMENT[dtype]
    for i, value in enumerate(case.values):
        single = run(value, folds[i])
        assert single.q.dtype == dtype  # (float32's CG-Boost at C = 0.3 leaves a master
        assert bool(single.converged) or dtype == np.float32  # solve uncertified, as before)
        _check_posterior(single, 2 * S.shape[1], rtol=10 * jnp.finfo(dtype).eps)
        lane = jax.tree.map(lambda t: t[i], swept)  # noqa: B023
        for other in (jitted(values[i], folds[i], 1e-6), lane):
            np.testing.assert_allclose(other.objective, single.objective, rtol=rtol)
            if case.unique_q:
                np.testing.assert_allclose(other.q, single.q, atol=atol)
            np.testing.assert_allclose(other.q.sum(), 1, rtol=10 * jnp.finfo(dtype).eps)
    new_values, new_folds = values * 1.1, folds[::-1]  # (eager ops compile kernels)
    with no_compilation():  # new values, tol and folds: traced
        run(case.value * 0.9, new_folds[0], 1e-7)
        jitted(new_values[0], new_folds[1], 1e-7)
        jax.vmap(run)(new_values, new_folds)


@pytest.mark.parametrize("name", CASES)
def test_float32(problem, name):
    _, y, H = problem
    case = CASES[name]
    r = case.fit(_split(H).astype(np.float32), y.astype(np.float32), case.value,
                 max_columns=MAX_COLUMNS)  # fmt: skip
    for t in (r.q, r.weights, r.objective, r.info.program_weights, r.info.alpha):
        assert t.dtype == jnp.float32
    full = case.program(H, y, case.value)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-4)


def _stump_columns(search, selected, m):
    """The columns of ``ref.all_stumps`` that self-complemented stump indices name."""
    d, P = search.candidate_mask().shape
    base, sign = (np.asarray(t) for t in split_index(jnp.asarray(selected), d * P))
    feature, k = np.divmod(base, P)
    return feature * (m - 1) + k + (sign < 0) * d * (m - 1)


# the stump pricing is the driver's: CG-Boost stands for the interior point (its problem is
# the smaller one)
@pytest.mark.parametrize("name", _one_per_master(default={"cqboost", "cgboost"}))
def test_matrix_free_stumps_equal_all_materialized_stumps(problem, name):
    case = CASES[name]
    X, y, value, max_iter = case.stumps(problem[0], problem[1], stump_search(problem[0]))
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    search = stump_search(X)
    r = case.fit_stumps(search, y, value, max_columns=max_iter)
    assert bool(r.converged)
    full = case.program(H_all[:, valid], y, value)
    np.testing.assert_allclose(float(r.objective), full.objective, rtol=1e-6)
    assert int(r.info.n_candidates) == valid.sum() // 2  # the stumps, without complements
    # the slots are the materialized columns they name, and the vote is theirs
    n = int(r.steps)
    sel = _stump_columns(search, np.asarray(r.info.selected)[:n], len(y))
    assert not np.isnan(H_all[:, sel]).any()
    program = np.asarray(r.info.program_weights)[:n]
    vote = np.asarray(voters.votes(r.voters, X, dtype=jnp.float64) @ r.weights)
    np.testing.assert_allclose(vote, H_all[:, sel] @ program / program.sum(), atol=1e-12)
    np.testing.assert_allclose(float(jnp.sum(r.q)), 1, rtol=1e-12)
    # every voter (stump, side) is listed once with mass
    q, T = np.asarray(r.q), max_iter
    listed = [(f, t, side) for side, mass in ((1, q[:T]), (-1, q[T:]))
              for f, t, w in zip(np.asarray(r.voters.features), np.asarray(r.voters.thresholds),
                                 mass) if w > 0]  # fmt: skip
    assert len(listed) == len(set(listed)) == int((program > 0).sum())
    others = np.setdiff1d(np.flatnonzero(valid), sel)
    assert ref.max_violation(H_all[:, others], y, r.info.alpha, float(r.info.nu)) <= 1e-6


# ----------------------------------------------------------------- learner-specific tests
def test_cqboost_duals_match_the_kkt_conditions(problem, solved):
    """alpha = w (beta - 2 gamma) / W: the same dual point as CVXOPT's, up to its accuracy."""
    _, y, H = problem
    r = solved("cqboost", 0.35)
    full = ref.cqboost_qp(H, y, 0.35)
    np.testing.assert_allclose(np.asarray(r.info.alpha), full.alpha, atol=1e-7)
    np.testing.assert_allclose(float(r.info.nu), full.nu, atol=1e-7)


def test_cqboost_unreachable_mu_names_the_largest(problem):
    X, y, H = problem
    S = _split(H)
    largest = float(cqboost_max_mu(S, y))
    np.testing.assert_allclose(largest, np.max(H.T @ y) / len(y))  # over [S, -S]
    H_all = ref.all_stumps(X)
    valid = ~np.isnan(H_all).any(axis=0)
    np.testing.assert_allclose(float(cqboost_max_mu(stump_search(X), y)),
                               np.max(H_all[:, valid].T @ y) / len(y))  # fmt: skip
    with pytest.raises(ValueError, match=f"largest reachable mu is {largest:.6g}"):
        cqboost(S, y, largest + 1e-3, max_columns=MAX_COLUMNS)
    with pytest.raises(ValueError, match="mu"):
        cqboost(S, y, -0.1)
    traced = jax.jit(lambda mu: cqboost(S, y, mu, max_columns=MAX_COLUMNS))(largest + 1e-3)
    assert not bool(traced.converged)  # no check under jit: flagged instead


def test_mdboost_checks(problem):
    S, y = _split(problem[2]), problem[1]
    with pytest.raises(ValueError, match="D"):
        mdboost(S, y, 0.0)
    with pytest.raises(ValueError, match="sum"):
        mdboost(S, y, 1.0, sample_weight=np.eye(len(y))[0])


def test_lpboost_empty_vote_is_the_uniform_posterior(problem):
    """With C small, q = 0 is optimal: no edge C sum_k y_k h(x_k) exceeds 1; the posterior of
    that empty vote is uniform over [S, -S] (vote 0)."""
    _, y, H = problem
    C = 0.5 / np.max(H.T @ y)
    r = lpboost(_split(H), y, C, max_columns=MAX_COLUMNS)
    assert int(r.steps) == 0 and bool(r.converged)
    np.testing.assert_array_equal(np.asarray(r.info.program_weights), 0)
    np.testing.assert_allclose(np.asarray(r.q), 1 / H.shape[1], rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(r.weights), 0)
    _check_posterior(r, H.shape[1])
    np.testing.assert_allclose(float(r.objective), ref.lpboost_lp(H, y, C).objective, rtol=1e-9)


def test_issue_20_soft_margin_posteriors_are_normalized():
    """Issue #20 item 5: on the full breast-cancer set (stumps of ``fit_stumps(X, 10)``,
    float32), CG-Boost at ``C = 3.98e-4`` (30 columns) has program weights summing to 1.229,
    which ``select_by_bound`` certified as a posterior; LPBoost at small ``C`` returned
    ``q = 0``. Both posteriors are now distributions over ``[S, -S]``."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    S = voters.votes(voters.fit_stumps(X, 10), X)
    y = (2.0 * y - 1).astype(np.float32)
    r = cgboost(S, y, np.geomspace(1e-5, 1e-3, 6)[4], max_columns=30)
    assert r.q.dtype == jnp.float32
    np.testing.assert_allclose(float(jnp.sum(r.info.program_weights)), 1.229, atol=1e-3)
    _check_posterior(r, 2 * S.shape[1], rtol=1e-6)
    empty = lpboost(S, y, 1e-5, max_columns=30)
    assert int(empty.steps) == 0
    _check_posterior(empty, 2 * S.shape[1], rtol=1e-6)
