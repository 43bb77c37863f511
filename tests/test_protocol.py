"""The learner protocol (issue #15): one test over every learner of the registry, dense and
matrix-free, and over a user-written learner that follows the documented protocol.

Each learner: the signature vocabulary (``H, y``, hyperparameters, keyword-only
``sample_weight`` and options named ``tol`` / ``max_iter``, none of the retired names), the
one result base (``q`` a distribution over ``[H, -H]``, ``weights = q[:n] - q[n:]``, ``steps``,
``converged``, ``info``), a certificate of the result equal to the normalized posterior's
(independent NumPy reference; in the thorough tier for the matrix-free learners beyond one of
each loop and for kl_ql / kl_el, which share kl_coordinate_descent's), and ``jit`` == ``vmap``
over fold masks == no-jit (in the thorough tier for the learners whose own module checks it in
the default run, and for the matrix-free learners beyond one of each kind).
"""

import functools
import inspect
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import solvers, sweep
from pacbound._src.protocol import posterior_from_weights
from pacbound._src.stochastic_votes import certify_dirichlet
from pacbound.certify import certify
from pacbound.solvers import LearnerResult, Status, learner
from pacbound.voters import stump_search
from tests.reference import bounds_numpy as R

RETIRED = {"eps", "epsilon", "rtol", "max_sweeps", "steps"}

# case -> (hyperparameters, static options) for a small run: a learner's name over H, or
# "<name>_stumps": the same learner over a stump search (the Voters protocol)
EXAMPLES = {
    "mincq": ((0.05,), {}),
    "tmincq": ((0.05,), {"H_unlabeled": "unlabeled"}),
    "cqboost": ((0.05,), {"max_columns": 6}),
    "cqboost_stumps": ((0.05,), {"max_columns": 6}),
    "lpboost": ((1.0,), {"max_columns": 6}),
    "lpboost_stumps": ((1.0,), {"max_columns": 6}),
    "cgboost": ((1.0,), {"max_columns": 6}),
    "cgboost_stumps": ((1.0,), {"max_columns": 6}),
    "mdboost": ((10.0,), {"max_columns": 6}),
    "mdboost_stumps": ((10.0,), {"max_columns": 6}),
    "cbboost": ((6,), {}),
    "gbcbboost": ((6,), {}),
    "cbboost_stumps": ((6,), {}),
    "gbcbboost_stumps": ((6,), {}),
    "adaboost": ((6,), {}),
    "adaboost_stumps": ((6,), {}),
    "vebboost": ((0.5, 6), {}),
    "vebboost_stumps": ((0.5, 6), {}),
    "kl_coordinate_descent": ((1.0, 0.5), {"max_iter": 50}),
    "kl_ql": ((1.0, 0.5), {"max_iter": 50}),
    "kl_el": ((1.0, 0.5), {"max_iter": 50}),
    "minimize_bound": (("seeger",), {"max_iter": 30}),
    "minimize_dirichlet_bound": (("seeger",), {"max_iter": 30}),
    "recursive_pac_bayes": ((0.5,), {"n_stages": 3, "max_iter": 30}),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(48, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.normal(size=48) > 0, 1.0, -1.0)
    thresholds = np.quantile(X, [0.25, 0.5, 0.75], axis=0).T.ravel()
    H = np.where(X[:, np.repeat(np.arange(3), 3)] > thresholds, 1.0, -1.0)
    masks = np.stack([np.arange(48) % 3 != k for k in range(2)]).astype(np.float64)
    return X, y, H, stump_search(X), masks


def _matrix_free(name: str) -> bool:
    """Whether the case runs its learner over a stump search (a Voters family)."""
    return name.endswith("_stumps")


def _learner(name: str):
    return solvers.LEARNERS[name.removesuffix("_stumps")]


def _call(name, data, fn=None, **extra):
    _, y, H, search, _ = data
    fn = fn or _learner(name)
    hyper, options = EXAMPLES[name]
    options = {k: (H[:10] if v == "unlabeled" else v) for k, v in options.items()}
    first = search if _matrix_free(name) else H
    return fn(first, y, *hyper, **options, **extra)


def test_every_registered_learner_has_an_example():
    assert set(solvers.LEARNERS) == {name for name in EXAMPLES if not _matrix_free(name)}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_signature_vocabulary(name):
    fn = _learner(name)
    params = inspect.signature(fn).parameters
    first = list(params)[:2]
    assert first in (["voters", "y"], ["H", "y"]), first
    weight = params["sample_weight"]
    assert weight.kind is inspect.Parameter.KEYWORD_ONLY and weight.default is None
    assert not RETIRED & set(params), RETIRED & set(params)
    assert fn.__doc__ and fn.__name__ == name.removesuffix("_stumps")


# The matrix-free learners read the stumps through one of two loops: the boosting rounds
# (cbboost here) or column generation's pricing (cqboost here); the other
# learners of each kind are rechecked by the thorough tier, as in test_scale.
ONE_OF_THEIR_KIND = {
    "adaboost_stumps", "cgboost_stumps", "gbcbboost_stumps", "lpboost_stumps", "mdboost_stumps",
    "vebboost_stumps",
}  # fmt: skip


# The result base is built by the code each learner shares with its kind (the boosting rounds'
# or column generation's result of one matrix-free learner, kl_coordinate_descent's for kl_ql
# and kl_el): by default every dense learner, one matrix-free learner of each loop and
# kl_coordinate_descent; the rest in the thorough tier.
SHARED_RESULT_BASE = ONE_OF_THEIR_KIND | {"kl_el", "kl_ql"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.thorough) if name in SHARED_RESULT_BASE else name
        for name in sorted(EXAMPLES)
    ],
)
def test_one_result_base_and_its_certificate(name, data):
    X, y, H, _, _ = data
    r = _call(name, data)
    assert isinstance(r, LearnerResult) and isinstance(r.info, tuple)
    q, w = np.asarray(r.q, np.float64), np.asarray(r.weights, np.float64)
    n = q.size // 2
    assert q.shape == (2 * n,) and (q >= 0).all() and q.sum() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(w, q[:n] - q[n:], atol=1e-12)
    assert np.asarray(r.steps).dtype.kind == "i" and np.asarray(r.converged).dtype == bool
    matrix_free = _matrix_free(name)
    assert (r.voters is not None) == matrix_free
    votes = np.asarray(r.voters.votes(X, jnp.float64)) if matrix_free else H
    if int(r.family) == solvers.Family.DIRICHLET:  # a stochastic vote
        with pytest.raises(ValueError, match="certify_dirichlet"):
            certify(r, H, y)
        cert = certify_dirichlet(r.info.alpha, H, y, bounds=["dirichlet_seeger"])
        np.testing.assert_allclose(cert.bounds["dirichlet_seeger"], r.info.certified, rtol=1e-6)
        return
    # two bounds, one of the first moment and one of the second; each bound's value against
    # its reference is test_certify's (PAC-Bound 2 alone would take ~20 s to compile here)
    cert = certify(r, X if matrix_free else H, y, bounds=["seeger", "cbound_roy2016"])
    Hs = np.concatenate([votes, -votes], axis=1)
    mu1, mu2 = R.moments(Hs, y, q / q.sum())
    if matrix_free:  # the prior: uniform over every candidate stump and its complement
        kl = R.kl_divergence(q[q > 0], np.full(int((q > 0).sum()), 0.5 / r.info.n_candidates))
    else:
        kl = R.kl_divergence(q / q.sum(), np.full(2 * n, 0.5 / n))
    want = {
        "seeger": 2 * R.seeger((1 - mu1) / 2, kl, len(y), 0.05),
        "cbound_roy2016": R.cbound_roy2016(mu1, mu2, kl, len(y), 0.05),
    }
    for bound, value in want.items():
        np.testing.assert_allclose(cert.bounds[bound], min(value, 1.0), rtol=1e-7, err_msg=bound)
    assert cert.majority_vote_risk <= min(cert.bounds.values())


# Linear programs over every stump: ties between candidate stumps make the optimal vertex
# non-unique, and jit / vmap may round to another optimal one; the program's value is unique.
DEGENERATE_PROGRAMS = {"lpboost_stumps", "cgboost_stumps"}


# Learners whose own module checks jit == no-jit == vmap over 0/1 fold masks in the default
# run (test_column_generation_learners, test_cbboost, test_adaboost, test_vebboost,
# test_stochastic), or which share their solver with a learner kept here (kl_ql and kl_el run
# kl_coordinate_descent's solver, with its vmap tests in test_kl_coordinate): rechecked by the
# thorough tier only.
CHECKED_IN_THEIR_MODULES = {
    "adaboost", "cbboost", "cqboost", "kl_el", "kl_ql", "lpboost", "minimize_dirichlet_bound",
    "vebboost",
}  # fmt: skip
THOROUGH_IF_CHECKED = [
    pytest.param(name, marks=pytest.mark.thorough)
    if name in CHECKED_IN_THEIR_MODULES | ONE_OF_THEIR_KIND
    else name
    for name in sorted(EXAMPLES)
]


@pytest.mark.parametrize("name", THOROUGH_IF_CHECKED)
def test_jit_vmap_over_fold_masks_and_no_jit_agree(name, data):
    X, masks = data[0], data[-1]
    matrix_free = _matrix_free(name)

    def run(mask):
        r = _call(name, data, sample_weight=mask)
        if name in DEGENERATE_PROGRAMS:
            return r.objective, r.steps
        # a matrix-free learner's model is its vote (a stump and its complement of opposite
        # polarity are one voter)
        return r.voters.votes(X, r.q.dtype) @ r.weights if matrix_free else r.q

    loop = jax.tree.map(lambda *xs: np.stack(xs), *[run(m) for m in masks])
    first = jax.tree.map(lambda x: x[0], loop)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), jax.jit(run)(masks[0]), first
    )
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), jax.vmap(run)(masks), loop
    )


# --------------------------------------------------------- a user-written learner
class EdgeInfo(NamedTuple):
    edges: jax.Array


@learner()
def edge_vote(H, y, temperature, *, sample_weight=None):
    """A toy learner following the protocol: weights proportional to the voters' weighted
    edges, sharpened by ``temperature`` (softmax over ``[H, -H]``)."""
    H, y = jnp.asarray(H, jnp.float64), jnp.asarray(y, jnp.float64)
    w = jnp.ones_like(y) if sample_weight is None else jnp.asarray(sample_weight, y.dtype)
    edges = H.T @ (w * y) / jnp.sum(w)
    q = jax.nn.softmax(temperature * jnp.concatenate([edges, -edges]))
    n = edges.shape[0]
    result_weights = q[:n] - q[n:]
    one, status = jnp.ones((), jnp.int32), jnp.int32(Status.SUCCESSFUL)
    return LearnerResult(q, result_weights, jnp.zeros(()), one, status, prior_size=jnp.int32(2 * n),
                         info=EdgeInfo(edges))  # fmt: skip


def test_a_user_written_learner_works_in_sweeps_and_certificates(data):
    _, y, H, _, _ = data
    r = edge_vote(H, y, 5.0)
    assert certify(r, H, y, bounds=["seeger"]).valid  # every default bound: test_certify
    g = sweep.grid(edge_vote, H, y, temperature=np.array([1.0, 5.0]))
    np.testing.assert_allclose(g.result.q[1], r.q, atol=1e-12)
    temperatures = np.array([1.0, 5.0, 0.2])
    cv = sweep.cross_validate(edge_vote, H, y, folds=3, temperature=temperatures)
    # the criterion computed here: each fold's held-out majority-vote risk of the vote fitted
    # on the other folds (zero weight on the held-out examples), ties counted as errors
    fold = sweep.stratified_folds(y, 3, 0)
    risks = np.array([[np.mean(y[fold == k] * (H[fold == k] @ np.asarray(edge_vote(
        H, y, t, sample_weight=(fold != k).astype(float)).weights)) <= 0)
        for t in temperatures] for k in range(3)])  # fmt: skip
    np.testing.assert_allclose(cv.risks, risks, atol=1e-12)
    assert cv.best_values["temperature"] == temperatures[np.argmin(risks.mean(axis=0))]
    s = sweep.select_by_bound(edge_vote, H, y, bound="seeger", temperature=temperatures)
    # the criterion: 2 x Seeger's bound (the vote's) at delta / 3 for each cell's posterior
    bounds = []
    for t in temperatures:
        q = np.asarray(edge_vote(H, y, t).q)
        mu1, _ = R.moments(np.concatenate([H, -H], axis=1), y, q)
        kl = R.kl_divergence(q, np.full(q.size, 1 / q.size))
        bounds.append(min(1.0, 2 * R.seeger((1 - mu1) / 2, kl, len(y), 0.05 / 3)))
    np.testing.assert_allclose(s.bounds, bounds, rtol=1e-7)
    assert s.best_values["temperature"] == temperatures[np.argmin(bounds)]
    partial = functools.partial(edge_vote, temperature=2.0)
    np.testing.assert_allclose(partial(H, y).q, edge_vote(H, y, 2.0).q)


def test_posterior_from_weights_states_any_signed_vote():
    w = jnp.array([0.5, -0.25, 0.0])
    q = posterior_from_weights(w)
    np.testing.assert_allclose(q, [2 / 3, 0, 0, 0, 1 / 3, 0])
    np.testing.assert_allclose(posterior_from_weights(jnp.zeros(2)), np.full(4, 0.25))
