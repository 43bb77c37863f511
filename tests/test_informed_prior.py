"""Informed priors: the split, the certificate on the bound part with its m, the roles swapped,
and a prior that never reads the bound part's labels, for the three kinds of bound minimizers."""

import numpy as np
import optax
import pytest

from pacbound._src.loss_statistics import tandem_risk
from pacbound._src.solvers.informed_prior import (
    dirichlet_prior_learner,
    informed_prior,
    second_order_prior_learner,
    smoothed,
    softmax_prior_learner,
    split_for_prior,
)
from pacbound._src.stochastic_votes import certify_dirichlet
from pacbound.certify import certify

M, N = 60, 4
LEARNERS = {
    "dirichlet": dirichlet_prior_learner(max_iter=20, optimizer=optax.adam(0.1)),
    "softmax": softmax_prior_learner("seeger", max_iter=20),
    "tnd": second_order_prior_learner("tnd", steps=20),
}


def problem(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], M)
    right = rng.random((M, N)) < np.linspace(0.6, 0.8, N)
    return np.where(right, y[:, None], -y[:, None]), y


def test_split_for_prior_is_a_seeded_partition():
    split = split_for_prior(M, 0.3, seed=1)
    assert len(split.prior_part) == 18 and len(split.bound_part) == M - 18
    assert np.array_equal(np.sort(np.r_[split.prior_part, split.bound_part]), np.arange(M))
    again = split_for_prior(M, 0.3, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(split, again))
    assert not np.array_equal(split.prior_part, split_for_prior(M, 0.3, seed=2).prior_part)
    swapped = split.swap()
    assert np.array_equal(swapped.prior_part, split.bound_part)
    for m, fraction in ((1, 0.5), (M, 0.0), (M, 1.0)):
        with pytest.raises(ValueError, match="fraction"):
            split_for_prior(m, fraction, 0)


@pytest.mark.parametrize("kind", LEARNERS)
def test_the_certificate_is_on_the_bound_part_with_its_m(kind):
    H, y = problem(1)
    split = split_for_prior(M, 0.5, seed=3)
    out = informed_prior(LEARNERS[kind], H, y, split)
    assert out.m == len(split.bound_part)
    Hb, yb = H[split.bound_part], y[split.bound_part]
    if kind == "dirichlet":
        cert = certify_dirichlet(out.result.info.alpha, Hb, yb, prior=out.prior)
        assert cert.statistics.m == out.m
        np.testing.assert_allclose(out.bound, cert.bounds["dirichlet_seeger"])
        np.testing.assert_array_equal(out.prior, out.prior_result.info.alpha)
    elif kind == "softmax":
        cert = certify(out.result, Hb, yb, bounds=["seeger"], prior=out.prior)
        assert cert.statistics.m == out.m
        np.testing.assert_allclose(out.bound, cert.bounds["seeger"])
        np.testing.assert_allclose(out.prior, smoothed(out.prior_result.q))
    else:
        np.testing.assert_allclose(out.bound, out.result.bound, rtol=1e-10)
    assert 0 < float(out.bound) <= 1


@pytest.mark.parametrize("kind", LEARNERS)
def test_the_prior_never_reads_the_bound_parts_labels_and_roles_swap(kind):
    H, y = problem(2)
    split = split_for_prior(M, 0.5, seed=4)
    learner = LEARNERS[kind]
    out = informed_prior(learner, H, y, split)
    flipped = y.copy()
    flipped[split.bound_part] *= -1  # the bound part's labels, all changed
    other = informed_prior(learner, H, flipped, split)
    np.testing.assert_array_equal(out.prior, other.prior)
    # swapped roles: the same two-step pipeline with the parts exchanged, m the other part's
    swapped = informed_prior(learner, H, y, split.swap())
    assert swapped.m == len(split.prior_part)
    A, B = split.bound_part, split.prior_part  # prior now learned on the old bound part
    prior = learner.to_prior(learner.fit(H[A], y[A], None))
    np.testing.assert_allclose(swapped.prior, prior)
    result = learner.fit(H[B], y[B], prior)
    np.testing.assert_allclose(swapped.bound, learner.certify(result, H[B], y[B], prior))


def test_an_informed_dirichlet_prior_tightens_the_bound_on_learnable_data():
    H, y = problem(5)
    split = split_for_prior(M, 0.5, seed=6)
    learner = LEARNERS["dirichlet"]
    out = informed_prior(learner, H, y, split)
    Hb, yb = H[split.bound_part], y[split.bound_part]
    uninformed = learner.certify(learner.fit(Hb, yb, None), Hb, yb, None)
    assert float(out.bound) < float(uninformed)


def test_overlapping_parts_are_refused():
    H, y = problem(7)
    split = split_for_prior(M, 0.5, seed=8)
    bad = split._replace(bound_part=np.r_[split.bound_part, split.prior_part[:1]])
    with pytest.raises(ValueError, match="share"):
        informed_prior(LEARNERS["softmax"], H, y, bad)


def _tandem_surrogate(rho, kl, data):
    """An unclipped TND-like objective (4 x the tandem risk plus a KL term), for the test."""
    return 4.0 * tandem_risk(data.stats, rho) + kl / data.n2


def test_a_surrogate_is_descended_and_the_objective_certified():
    H, y = problem(9)
    learner = second_order_prior_learner("tnd", surrogate=_tandem_surrogate, steps=20)
    result = learner.fit(H, y, None)
    plain = LEARNERS["tnd"].fit(H, y, None)
    assert not np.allclose(result.rho, plain.rho)  # another objective was descended
    bound = learner.certify(result, H, y, None)
    np.testing.assert_allclose(bound, LEARNERS["tnd"].certify(result, H, y, None))
