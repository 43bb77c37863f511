"""The Voters protocol (issue #35): a voter family written here, not in pacbound, plugs into
the greedy learners matrix-free, into certify and into a sweep; each learner over it makes
the same choices as over the family's materialized votes; the learners that read every
voter's votes refuse it with a TypeError."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import solvers, sweep, voters
from pacbound.certify import certify


class Directions(NamedTuple):
    """Selected voters ``h(x) = sign(x . w)``, one column of ``W`` each."""

    W: jax.Array

    def votes(self, X, dtype=jnp.float32):
        return jnp.sign(jnp.asarray(X, self.W.dtype) @ self.W).astype(dtype)


class Hyperplanes(NamedTuple):
    """Voters ``h_b(x) = sign(x . W[:, b])`` for ``B`` fixed directions, never stored as votes:
    every edge is computed from the inputs on the fly (layout ``(1, B)``)."""

    X: jax.Array
    W: jax.Array

    def candidate_edges(self, a):
        return (a @ jnp.sign(self.X @ self.W))[None]

    def candidate_mask(self):
        return jnp.ones((1, self.W.shape[1]), bool)

    def candidate_votes(self, b, dtype):
        return jnp.sign(self.X @ self.W[:, b]).astype(dtype)

    def candidate_voters(self, b):
        return Directions(self.W[:, b])


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = np.where(X @ np.array([1.0, -0.7, 0.3, 0.0]) + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    W = rng.normal(size=(4, 12))
    family = Hyperplanes(jnp.asarray(X), jnp.asarray(W))
    H = np.sign(X @ W)
    return X, y, family, H


CASES = {
    "cbboost": (8,),
    "gbcbboost": (8,),
    "adaboost": (8,),
    "vebboost": (0.5, 8),
    "cqboost": (0.1,),
    "lpboost": (1.0,),
    "cgboost": (1.0,),
    "mdboost": (10.0,),
}


def test_the_family_implements_the_protocol(problem):
    _, _, family, _ = problem
    assert isinstance(family, voters.Voters)
    assert not isinstance(np.ones((3, 2)), voters.Voters)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_learner_over_the_family_votes_as_over_its_votes(name, problem):
    X, y, family, H = problem
    learner = solvers.LEARNERS[name]
    free = learner(family, y, *CASES[name])
    dense = learner(H, y, *CASES[name])
    assert isinstance(free.voters, Directions)
    vote_free = np.asarray(free.voters.votes(X, jnp.float64)) @ np.asarray(free.weights)
    vote_dense = H @ np.asarray(dense.weights)
    np.testing.assert_allclose(vote_free, vote_dense, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(free.objective, dense.objective, rtol=1e-5, atol=1e-7)
    assert int(free.status) == int(dense.status)
    assert int(free.prior_size) == int(dense.prior_size) == 2 * H.shape[1]


def test_certify_takes_the_family_prior(problem):
    X, y, family, H = problem
    free = solvers.cbboost(family, y, 8)
    dense = solvers.cbboost(H, y, 8)
    a = certify(free, X, y, bounds=["seeger", "cbound_roy2016"]).bounds
    b = certify(dense, H, y, bounds=["seeger", "cbound_roy2016"]).bounds
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-6)


def test_a_sweep_over_the_family_equals_single_runs(problem):
    _, y, family, _ = problem
    result = sweep.grid(solvers.cqboost, family, y, mu=[0.05, 0.1])
    for k, mu in enumerate([0.05, 0.1]):
        single = solvers.cqboost(family, y, mu)
        np.testing.assert_allclose(result.result.objective[k], single.objective, rtol=1e-6)


@pytest.mark.parametrize("name", ["mincq", "tmincq", "kl_ql", "minimize_bound"])
def test_learners_that_read_every_vote_refuse_a_family(name, problem):
    _, y, family, _ = problem
    args = {"mincq": (0.05,), "tmincq": (0.05,), "kl_ql": (1.0, 0.5),
            "minimize_bound": ("seeger",)}[name]  # fmt: skip
    options = {"H_unlabeled": family} if name == "tmincq" else {}
    with pytest.raises(TypeError, match="needs the vote matrix H"):  # kl_ql: its base's name
        solvers.LEARNERS[name](family, y, *args, **options)
