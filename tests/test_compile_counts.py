"""A typical workflow compiles each of its programs once: run again on other data of the same
shapes and other hyperparameter values, fit, certify, sweep and predict lower no program.

JAX reports every lowering of a program to XLA (``/jax/core/compile/jaxpr_to_mlir_module_
duration``; a persistent-cache hit is lowered first, so it counts too): a workflow that lowers
nothing the second time reuses every program it compiled, whatever the values it is given.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import monitoring

from pacbound import solvers, sweep, voters
from pacbound.certify import certify

LOWERING = "/jax/core/compile/jaxpr_to_mlir_module_duration"


class _Lowerings:
    def __init__(self):
        self.count = 0
        self.active = False
        monitoring.register_event_duration_secs_listener(self._on)

    def _on(self, event, duration, **kwargs):
        if self.active and event == LOWERING:
            self.count += 1

    def during(self, fn):
        self.count, self.active = 0, True
        try:
            fn()
        finally:
            self.active = False
        return self.count


@pytest.fixture(scope="module")
def lowerings():
    return _Lowerings()


def _data(seed, m=60, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    return jnp.asarray(X), jnp.asarray(y)


def _workflow(seed, mu, n_rounds):
    X, y = _data(seed)
    H = voters.fit_stumps(X, 3).votes(X)
    r = solvers.mincq(H, y, mu)  # fit
    certify(r, H, y, delta=0.05)  # certify
    sweep.grid(solvers.mincq, H, y, mu=jnp.linspace(mu, 0.3, 5))  # sweep
    jax.block_until_ready(jnp.sign(H @ r.weights))  # predict
    s = solvers.cbboost(voters.stump_search(X), y, n_rounds)  # matrix-free
    jax.block_until_ready(s.voters.votes(X) @ s.weights)


def test_a_second_run_with_other_values_compiles_nothing(lowerings):
    first = lowerings.during(lambda: _workflow(0, 0.05, 8))
    second = lowerings.during(lambda: _workflow(1, 0.11, 8))
    assert first > 0  # the listener sees the first run's programs
    assert second == 0, f"the second run lowered {second} programs (the first: {first})"
