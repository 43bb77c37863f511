"""Multiclass margins, statistics and C-bounds against tests/reference/multiclass_numpy.py."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pacbound import bounds as B
from pacbound import cbound as C
from pacbound import margins as M
from tests.reference import multiclass_numpy as R


def draw(seed, m=17, n=5, k=3, probs=False):
    rng = np.random.default_rng(seed)
    if probs:
        votes = rng.dirichlet(np.full(k, 0.7), (m, n))
    else:
        votes = rng.integers(0, k, (m, n))
    y = rng.integers(0, k, m)
    q = rng.dirichlet(np.full(n, 0.5))
    w = rng.uniform(0.1, 2.0, m)
    return votes, y, q, w


def check(stats, ref, atol):
    np.testing.assert_allclose(stats.margins, ref["margins"], atol=atol)
    for name, key in [
        ("mu1", "mu1"),
        ("mu2", "mu2"),
        ("gibbs_risk", "gibbs"),
        ("joint_error", "joint"),
        ("disagreement", "dis"),
        ("majority_vote_risk", "mv"),
    ]:
        np.testing.assert_allclose(getattr(stats, name), ref[key], atol=atol, err_msg=name)
    np.testing.assert_allclose(stats.one_error, 2 * (ref["gibbs"] - ref["joint"]), atol=atol)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), st.booleans(), st.booleans())
def test_statistics_match_reference(seed, k, probs, weighted):
    votes, y, q, w = draw(seed, k=k, probs=probs)
    w = w if weighted else None
    ref = R.statistics(votes, y, q, k, w)
    check(M.multiclass_margins(votes, y, q, num_classes=k, sample_weight=w), ref, 1e-9)
    stats32 = M.multiclass_margins(
        votes if not probs else votes.astype(np.float32),
        y,
        q.astype(np.float32),
        num_classes=k,
        sample_weight=None if w is None else w.astype(np.float32),
    )
    assert stats32.mu1.dtype == jnp.float32
    for name, key in [("mu1", "mu1"), ("mu2", "mu2"), ("gibbs_risk", "gibbs")]:
        np.testing.assert_allclose(getattr(stats32, name), ref[key], atol=1e-5)
    np.testing.assert_allclose(
        C.multiclass_cbound(votes, y, q, num_classes=k, sample_weight=w),
        R.cbound_moments(ref["mu1"], ref["mu2"]),
        atol=1e-9,
    )
    np.testing.assert_allclose(
        C.multiclass_cbound(votes, y, q, num_classes=k, sample_weight=w, relaxed=True),
        R.cbound_relaxed(ref["gibbs"], ref["joint"]),
        atol=1e-9,
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.booleans())
def test_cbounds_upper_bound_the_majority_vote_risk(seed, k, probs):
    votes, y, q, w = draw(seed, m=31, n=7, k=k, probs=probs)
    # a vote tilted toward the truth so that the conditions mu1 > 0 / r < 1/2 often hold
    if not probs:
        good = np.random.default_rng(seed).random(votes.shape) < 0.6
        votes = np.where(good, y[:, None], votes)
    s = M.multiclass_margins(votes, y, q, num_classes=k, sample_weight=w)
    if s.mu1 > 0:
        assert C.multiclass_cbound(votes, y, q, k, w) >= s.majority_vote_risk - 1e-12
    if s.gibbs_risk < 0.5:
        assert C.multiclass_cbound(votes, y, q, k, w, relaxed=True) >= (
            s.majority_vote_risk - 1e-12
        )
    # the relaxation's certified PAC-Bayes form: PAC-Bound 1 at (r_S, d'_S)
    for kl in (0.0, 0.5, 3.0):
        pb = B.pac_bound_1(s.gibbs_risk, s.one_error, kl, 31, 0.05)
        assert pb >= C.multiclass_cbound(votes, y, q, k, w, relaxed=True) - 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_two_classes_equal_the_binary_functions(seed):
    rng = np.random.default_rng(seed)
    H = rng.choice([-1.0, 1.0], (19, 6))
    y = rng.choice([-1.0, 1.0], 19)
    q = rng.dirichlet(np.full(6, 0.5))
    s = M.multiclass_margins(((H + 1) / 2).astype(int), ((y + 1) / 2).astype(int), q, 2)
    np.testing.assert_allclose(s.margins, M.margins(H, y, q), atol=1e-12)
    np.testing.assert_allclose((s.mu1, s.mu2), M.margin_moments(H, y, q), atol=1e-12)
    np.testing.assert_allclose(s.gibbs_risk, M.gibbs_risk(H, y, q), atol=1e-12)
    np.testing.assert_allclose(s.joint_error, M.joint_error(H, y, q), atol=1e-12)
    np.testing.assert_allclose(s.disagreement, M.disagreement(H, q), atol=1e-12)
    np.testing.assert_allclose(s.one_error, M.disagreement(H, q), atol=1e-12)
    np.testing.assert_allclose(s.majority_vote_risk, M.majority_vote_risk(H, y, q), atol=1e-12)
    labels = ((H + 1) / 2).astype(int), ((y + 1) / 2).astype(int), q
    np.testing.assert_allclose(
        C.multiclass_cbound(*labels, 2), C.empirical_cbound(H, y, q), atol=1e-12
    )
    np.testing.assert_allclose(
        C.multiclass_cbound(*labels, 2, relaxed=True), C.empirical_cbound(H, y, q), atol=1e-12
    )


def test_gradients_match_finite_differences():
    votes, y, q, w = draw(5, probs=True)
    a = np.log(q)

    def f(a, relaxed):
        return C.multiclass_cbound(votes, y, jax.nn.softmax(a), sample_weight=w, relaxed=relaxed)

    def g(a):
        s = M.multiclass_margins(votes, y, jax.nn.softmax(a), sample_weight=w)
        return s.mu2 + s.joint_error - s.disagreement + s.gibbs_risk

    for fn in (lambda a: f(a, False), lambda a: f(a, True), g):
        grad = jax.grad(fn)(jnp.asarray(a))
        assert np.all(np.isfinite(grad))
        h = 1e-6
        for i in range(len(a)):
            e = np.zeros_like(a)
            e[i] = h
            fd = (fn(jnp.asarray(a + e)) - fn(jnp.asarray(a - e))) / (2 * h)
            np.testing.assert_allclose(grad[i], fd, atol=1e-6)


def test_jit_equals_eager_equals_vmap():
    votes, y, q, _ = draw(9, k=4)
    rng = np.random.default_rng(1)
    qs = rng.dirichlet(np.ones(5), 3)
    ws = rng.uniform(0, 1, (3, 17)) * (rng.random((3, 17)) < 0.7)  # fold masks
    ws[:, 0] = 1.0

    def f(q, w):
        return M.multiclass_margins(votes, y, q, 4, w).mu1, C.multiclass_cbound(
            votes, y, q, 4, w, relaxed=True
        )

    eager = [f(qi, wi) for qi, wi in zip(qs, ws)]
    jitted = [jax.jit(f)(qi, wi) for qi, wi in zip(qs, ws)]
    mapped = jax.vmap(f)(qs, ws)
    for i in range(3):
        for t in range(2):
            np.testing.assert_allclose(jitted[i][t], eager[i][t], atol=1e-12)
            np.testing.assert_allclose(mapped[t][i], eager[i][t], atol=1e-12)
    # jit over traced labels and votes validates nothing and still runs
    traced = jax.jit(lambda v, yy: M.multiclass_margins(v, yy, q, 4).mu1)(votes, y)
    np.testing.assert_allclose(traced, f(q, None)[0], atol=1e-12)


def test_validation_at_concrete_inputs():
    votes, y, q, _ = draw(2, k=3)
    with pytest.raises(ValueError, match=r"y must hold class labels in 0\.\.2"):
        M.multiclass_margins(votes, np.where(y == 0, 3, y), q, 3)
    with pytest.raises(ValueError, match="votes must hold class labels"):
        M.multiclass_margins(np.where(votes == 0, -1, votes), y, q, 3)
    with pytest.raises(ValueError, match="num_classes is required"):
        M.multiclass_margins(votes, y, q)
    with pytest.raises(ValueError, match="y must have shape"):
        M.multiclass_margins(votes, y[:-1], q, 3)
    with pytest.raises(ValueError, match="q must have shape"):
        M.multiclass_margins(votes, y, q[:-1], 3)
    with pytest.raises(ValueError, match="votes must be"):
        M.multiclass_margins(votes[0], y, q, 3)
    p = np.ones((17, 5, 3)) / 3
    with pytest.raises(ValueError, match="num_classes=4"):
        M.multiclass_margins(p, y, q, 4)
    with pytest.raises(ValueError, match="sample_weight"):
        M.multiclass_margins(votes, y, q, 3, np.zeros(17))
    with pytest.raises(ValueError, match="class probabilities in"):
        M.multiclass_margins(np.where(np.arange(3) == 0, np.nan, p), y, q)
    with pytest.raises(ValueError, match="multiclass_margins: q must lie in"):
        M.multiclass_margins(votes, y, np.where(np.arange(5) == 0, np.nan, q), 3)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(3, 6),
    st.floats(0.0, 5.0),
    st.sampled_from([50, 300, 2000]),
    st.floats(0.01, 0.5),
)
def test_pac_bayes_multiclass_cbound_is_certified(seed, k, kl, m, delta):
    votes, y, q, w = draw(seed, m=40, n=6, k=k)
    good = np.random.default_rng(seed + 1).random(votes.shape) < 0.7
    votes = np.where(good, y[:, None], votes)
    ref = R.statistics(votes, y, q, k, w)
    exact = R.pac_cbound(ref["gibbs"], ref["joint"], kl, m, delta)
    s = M.multiclass_margins(votes, y, q, k, w)
    value64 = B.pac_bound_1(s.gibbs_risk, s.one_error, kl, m, delta)
    np.testing.assert_allclose(value64, exact, atol=1e-9)
    assert value64 >= exact - 1e-12
    s32 = M.multiclass_margins(votes, y, q.astype(np.float32), k, w.astype(np.float32))
    value32 = B.pac_bound_1(s32.gibbs_risk, s32.one_error, np.float32(kl), m, np.float32(delta))
    assert value32.dtype == jnp.float32
    np.testing.assert_allclose(value32, exact, atol=1e-5)
    # outward from the float32 statistics it was given
    r32, d32 = float(s32.gibbs_risk), float(s32.one_error)
    assert (
        float(value32)
        >= R.pac_cbound(r32, r32 - d32 / 2, float(np.float32(kl)), m, float(np.float32(delta)))
        - 1e-12
    )
    assert value64 >= s.majority_vote_risk - 1e-12 or s.gibbs_risk >= 0.5


def test_relaxation_and_moment_form_are_not_ordered_beyond_two_classes():
    # K = 3, q = (.6, .3, .1): margins (.3, .2) vary but 1 - 2w = .2 twice, so the relaxation is
    # 0 and the moment form 1 - .25^2 / .065 > 0: the relaxation can be the smaller one ...
    votes, y, q = np.array([[0, 2, 1], [0, 1, 1]]), np.array([0, 0]), np.array([0.6, 0.3, 0.1])
    np.testing.assert_allclose(C.multiclass_cbound(votes, y, q, 3, relaxed=True), 0.0, atol=1e-12)
    np.testing.assert_allclose(C.multiclass_cbound(votes, y, q, 3), 1 - 0.0625 / 0.065, atol=1e-12)
    # ... or the larger one
    votes, y = np.array([[1, 1, 1], [2, 0, 1], [0, 1, 2]]), np.array([1, 1, 2])
    q = np.ones(3) / 3
    np.testing.assert_allclose(C.multiclass_cbound(votes, y, q, 3), 2 / 3, atol=1e-12)
    np.testing.assert_allclose(
        C.multiclass_cbound(votes, y, q, 3, relaxed=True), 0.9696969696969697, atol=1e-12
    )
    # a tie (M = 0) is an error, as in the binary majority_vote_risk
    s = M.multiclass_margins(np.array([[0, 1, 2], [0, 0, 0]]), np.array([0, 0]), q, 3)
    assert float(s.majority_vote_risk) == 0.5


def test_certify_margins_certifies_a_multiclass_posterior():
    from pacbound import certify as Ce

    rng = np.random.default_rng(3)
    k, m = 5, 2000
    y = rng.integers(0, k, m)
    votes = np.where(rng.random((m, 9)) < 0.65, y[:, None], rng.integers(0, k, (m, 9)))
    q = rng.dirichlet(np.ones(9))
    s = M.multiclass_margins(votes, y, q, k)
    ref = R.statistics(votes, y, q, k)
    np.testing.assert_allclose(np.mean(s.correct_margins), 1 - 2 * ref["gibbs"], atol=1e-12)
    np.testing.assert_allclose(
        np.mean(s.correct_margins**2), 1 - 4 * ref["gibbs"] + 4 * ref["joint"], atol=1e-12
    )
    cert = Ce.certify_margins(
        s.correct_margins, 0.4, bounds=("seeger", "pac_bound_1", "pac_bound_2", "tnd", "cctnd")
    )
    exact = R.pac_cbound(ref["gibbs"], ref["joint"], 0.4, m, 0.05)
    np.testing.assert_allclose(cert.bounds["pac_bound_1"], exact, atol=1e-9)
    assert cert.bounds["pac_bound_1"] >= exact - 1e-12  # the reference carries ~1e-15
    for name, value in cert.bounds.items():
        assert s.majority_vote_risk <= value <= 1.0, name
    # its majority_vote_risk is P(w >= 1/2), an upper bound on the multiclass one
    assert cert.majority_vote_risk >= s.majority_vote_risk


def _kl_uniform(q):
    q = np.asarray(q, float)
    return float(np.sum(q[q > 0] * np.log(q[q > 0])) + np.log(q.size))


def _informative(seed, m, n, k, probs):
    votes, y, q, _ = draw(seed, m=m, n=n, k=k, probs=probs)
    rng = np.random.default_rng(seed + 7)
    if probs:
        votes = votes.copy()
        votes[np.arange(m), :, y] += rng.uniform(0.0, 2.0, (m, n))
        votes /= votes.sum(-1, keepdims=True)
    else:
        votes = np.where(rng.random(votes.shape) < 0.6, y[:, None], votes)
    return votes, y, q


@pytest.mark.parametrize("probs", [False, True], ids=["labels", "probabilities"])
def test_certify_takes_a_multiclass_posterior(probs):
    from pacbound.certify import certify

    k, m, delta = 4, 300, 0.05
    votes, y, q = _informative(11, m, 7, k, probs)
    ref = R.statistics(votes, y, q, k)
    cert = certify(q, votes, y, num_classes=None if probs else k, delta=delta)
    exact = R.pac_cbound(ref["gibbs"], ref["joint"], _kl_uniform(q), m, delta)
    np.testing.assert_allclose(cert.bounds["pac_bound_1"], exact, atol=1e-9)
    assert cert.bounds["pac_bound_1"] >= exact - 1e-12
    np.testing.assert_allclose(cert.majority_vote_risk, ref["mv"], atol=1e-12)
    np.testing.assert_allclose(cert.statistics.gibbs_risk, ref["gibbs"], atol=1e-12)
    for name, value in cert.bounds.items():
        assert ref["mv"] <= value <= 1.0, name
    # a fold mask certifies that fold, as on the fold's examples alone
    mask = (np.arange(m) % 3 != 0).astype(float)
    folded = certify(q, votes, y, num_classes=None if probs else k, sample_weight=mask)
    alone = certify(q, votes[mask > 0], y[mask > 0], num_classes=None if probs else k)
    for name in alone.bounds:
        np.testing.assert_allclose(folded.bounds[name], alone.bounds[name], atol=1e-12)
    np.testing.assert_allclose(folded.majority_vote_risk, alone.majority_vote_risk, atol=1e-12)
    # traced (jit) in float32 is the float64 certificate to float32 accuracy
    traced = jax.jit(
        lambda q: certify(
            q, votes.astype(np.float32) if probs else votes, y, num_classes=None if probs else k
        ).bounds["pac_bound_2"]
    )
    np.testing.assert_allclose(
        traced(jnp.asarray(q, jnp.float32)), cert.bounds["pac_bound_2"], atol=1e-5
    )


def test_certify_multiclass_with_two_classes_is_the_binary_certificate():
    from pacbound.certify import certify

    votes, y, q = _informative(5, 200, 6, 2, False)
    cert = certify(q, votes, y, num_classes=2)
    binary = certify(q, 2.0 * votes - 1.0, 2.0 * y - 1.0)
    for name, value in binary.bounds.items():
        np.testing.assert_allclose(cert.bounds[name], value, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(cert.majority_vote_risk, binary.majority_vote_risk, atol=1e-12)


def test_certify_refuses_what_a_multiclass_vote_cannot_be():
    from pacbound.certify import certify

    votes, y, q = _informative(2, 60, 5, 3, False)
    with pytest.raises(ValueError, match="weighs the 5 voters"):
        certify(np.ones(10) / 10, votes, y, num_classes=3)
    with pytest.raises(ValueError, match="binary votes only"):
        certify(q, votes, y, num_classes=3, H_unlabeled=votes)
    with pytest.raises(ValueError, match=r"class labels in 0\.\.2"):
        certify(q, votes, y + 1, num_classes=3)
    with pytest.raises(ValueError, match="num_classes=K"):  # class labels without num_classes
        certify(q, votes, y)


@pytest.mark.parametrize("bound", ["pac_bound_1", "pac_bound_2", "cbound_roy2016"])
def test_minimize_bound_learns_a_multiclass_vote(bound):
    from pacbound.certify import certify
    from pacbound.solvers import minimize_bound

    k, m, n = 3, 400, 6
    votes, y, _ = _informative(23, m, n, k, True)
    uniform = certify(np.ones(n) / n, votes, y, bounds=[bound]).bounds[bound]
    r = minimize_bound(votes, y, bound, max_iter=150)
    assert r.q.shape == (n,) and int(r.prior_size) == n
    assert float(r.info.certified) < float(uniform)
    again = certify(r, votes, y, bounds=[bound])
    np.testing.assert_allclose(r.info.certified, again.bounds[bound], atol=1e-12)
    q = np.asarray(r.q, float)
    ref = R.statistics(votes, y, q, k)
    np.testing.assert_allclose(r.info.majority_vote_risk, ref["mv"], atol=1e-12)
    if bound == "pac_bound_1":
        exact = R.pac_cbound(ref["gibbs"], ref["joint"], _kl_uniform(q), m, 0.05)
        np.testing.assert_allclose(r.info.certified, exact, atol=1e-9)
        assert float(r.info.certified) >= exact - 1e-12
    assert float(r.info.certified) >= ref["mv"]


def test_minimize_bound_multiclass_two_classes_jit_vmap_and_folds():
    from pacbound.solvers import minimize_bound

    votes, y, _ = _informative(4, 200, 5, 2, False)
    r = minimize_bound(votes, y, "seeger", num_classes=2, max_iter=60)
    binary = minimize_bound(
        2.0 * votes - 1.0, 2.0 * y - 1.0, "seeger", posterior="simplex", max_iter=60
    )
    np.testing.assert_allclose(r.q, binary.q, atol=1e-10)
    np.testing.assert_allclose(r.info.certified, binary.info.certified, atol=1e-12)
    deltas = jnp.array([0.05, 0.2])
    swept = jax.vmap(
        lambda d: minimize_bound(votes, y, "seeger", num_classes=2, max_iter=60, delta=d).q
    )(deltas)
    for i, d in enumerate(deltas):
        one = minimize_bound(votes, y, "seeger", num_classes=2, max_iter=60, delta=d)
        np.testing.assert_allclose(swept[i], one.q, atol=1e-10)
    mask = (np.arange(200) % 4 != 0).astype(float)
    folded = minimize_bound(votes, y, "seeger", num_classes=2, max_iter=60, sample_weight=mask)
    alone = minimize_bound(votes[mask > 0], y[mask > 0], "seeger", num_classes=2, max_iter=60)
    np.testing.assert_allclose(folded.q, alone.q, atol=1e-8)
    with pytest.raises(ValueError, match="posterior='simplex'"):
        minimize_bound(votes, y, "seeger", num_classes=2, posterior="softmax")


@pytest.mark.parametrize("name", ["mincq", "cbboost", "cqboost", "adaboost"])
def test_binary_learners_refuse_multiclass_labels_with_the_way_out(name):
    from pacbound import solvers

    votes, y, _ = _informative(1, 40, 4, 3, False)
    args = {"mincq": (0.1,), "cbboost": (3,), "cqboost": (0.1,), "adaboost": (3,)}[name]
    with pytest.raises(ValueError, match="num_classes=K"):
        getattr(solvers, name)(votes.astype(float), y.astype(float), *args)


def test_grid_sweeps_a_multiclass_learner_in_one_call():
    from pacbound.solvers import minimize_bound
    from pacbound.sweep import grid

    votes, y, _ = _informative(8, 150, 5, 3, False)
    options = {"max_iter": 40, "num_classes": 3}
    out = grid(minimize_bound, votes, y, delta=np.array([0.05, 0.2]), options=options)
    assert out.result.q.shape == (2, 5)
    for i, d in enumerate([0.05, 0.2]):
        one = minimize_bound(votes, y, delta=d, **options)
        np.testing.assert_allclose(out.result.q[i], one.q, atol=1e-10)
        np.testing.assert_allclose(out.result.info.certified[i], one.info.certified, atol=1e-9)
    with pytest.raises(ValueError, match=r"class labels in 0\.\.2"):
        grid(minimize_bound, votes, y + 1, delta=np.array([0.05]), options=options)
