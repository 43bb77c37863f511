"""The suite's compiler setting gives users' numbers.

The default run compiles with XLA:CPU's elemental emitters (``tests/conftest.py``: a quarter
faster to compile); users get XLA's default MLIR fusion emitters. The certificates the default
run checks must be the numbers users get: every kl-inverse, every registered bound on the
margins' statistics, and ``certify`` / ``certify_dirichlet`` on a sample, in float32 and
float64, are computed in this process and in a fresh one with the other setting. Measured
(jax 0.10.2): 58 of the 64 sets are the same bit for bit; the grid bounds vmapped over
statistics differ on 5-17% of draws, by at most 10 ulps (float64: Catoni, general loss,
split-kl, CCPBB; float32: split-kl and CCPBB). Both settings are certified: the default tier
checks the certificates with the elemental emitters, the thorough tier (run by CI with
``PACBOUND_TEST_XLA_DEFAULTS=1``) with XLA's.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import kl
from pacbound._src.certify import VoteStatistics, as_bound, certified_value
from pacbound._src.stochastic_votes import certify_dirichlet
from pacbound.certify import BOUNDS, certify
from tests.conftest import FAST_EMITTERS, xla_accepts, xla_flags

ROOT = Path(__file__).resolve().parents[1]
DTYPES = (np.float32, np.float64)
MAX_ULPS = 16
VARIANCE_RANGES = [(0.0, 0.1), (-0.05, 0.05), (0.0, 0.1)]  # c0, c1, c2 of the pairs' variance


def _statistics(rng: np.random.Generator, size: int, dtype) -> VoteStatistics:
    """``size`` random statistics a posterior can reach (``mu1^2 <= mu2 <= 1``)."""
    mu1 = rng.uniform(-0.2, 0.9, size)
    mu2 = rng.uniform(mu1**2, 1.0)
    m = np.round(np.exp(rng.uniform(np.log(10), np.log(1e6), size)))
    fields = dict(
        mu1=mu1, mu2=mu2, loss=rng.uniform(0, 1, size), m=m,
        kl=np.exp(rng.uniform(np.log(1e-6), np.log(50.0), size)),
        unlabeled_disagreement=(1 - mu2) / 2 * rng.uniform(0.8, 1.2, size), m_unlabeled=2 * m,
        pair_variance=tuple(rng.uniform(lo, hi, size) for lo, hi in VARIANCE_RANGES),
    )  # fmt: skip
    return jax.tree.map(lambda x: jnp.asarray(x, dtype), VoteStatistics(**fields))


def values() -> dict[str, np.ndarray]:
    """Every certified number the default run checks, on fixed random inputs."""
    rng = np.random.default_rng(0)
    out = {}
    q, eps = rng.uniform(0, 1, 2000), np.exp(rng.uniform(np.log(1e-9), np.log(30.0), 2000))
    q[:200] = 0.0
    deltas = np.exp(rng.uniform(np.log(1e-6), 0.0, 500))
    for dtype in DTYPES:  # float32 as users run it, in JAX's default precision mode
        name = np.dtype(dtype).name
        with jax.enable_x64(dtype == np.float64):
            for inverse in (kl.kl_inv_upper, kl.kl_inv_lower):
                inverse_ = jax.jit(inverse)
                out[f"{inverse.__name__} {name}"] = inverse_(q.astype(dtype), eps.astype(dtype))
            stats = _statistics(rng, 500, dtype)
            for bound in map(as_bound, BOUNDS):
                value = jax.vmap(lambda s, d, b=bound: certified_value(b, s, d)[0])
                out[f"{bound.name} {name}"] = jax.jit(value)(stats, deltas.astype(dtype))
    H = np.where(rng.uniform(size=(200, 6)) < 0.7, 1.0, -1.0) * np.where(
        rng.uniform(size=200) < 0.5, 1.0, -1.0)[:, None]  # fmt: skip
    y = np.where(H[:, 0] > 0, 1.0, -1.0) * np.where(rng.uniform(size=200) < 0.8, 1.0, -1.0)
    posterior = rng.dirichlet(np.ones(12))
    every = [name for name, spec in BOUNDS.items() if spec.family is None]
    cert = certify(posterior, H, y, bounds=every, H_unlabeled=H[:50])
    out |= {f"certify {k}": v for k, v in cert.bounds.items()}
    with jax.enable_x64(False):  # traced: in the working precision
        traced = jax.jit(lambda p: certify(p, H, y).bounds)(posterior.astype(np.float32))
    out |= {f"certify float32 {k}": v for k, v in traced.items()}
    dirichlet = certify_dirichlet(rng.uniform(0.5, 5.0, 12), H, y)
    out |= {f"dirichlet {k}": v for k, v in dirichlet.bounds.items()}
    return {k: np.asarray(v) for k, v in out.items()}


SCRIPT = """
import sys
import jax, numpy as np
jax.config.update("jax_enable_x64", True)
from tests.test_xla_emitters import values
np.savez(sys.argv[1], **values())
"""


@pytest.mark.thorough
def test_the_suites_emitters_give_the_certificates_users_get(tmp_path):
    flags = xla_flags()
    if FAST_EMITTERS in flags:
        other = flags.replace(FAST_EMITTERS, "")
    elif xla_accepts(xla_flags(FAST_EMITTERS)):
        other = xla_flags(FAST_EMITTERS)
    else:  # an XLA without the flag: the suite runs with XLA's defaults, nothing to compare
        pytest.skip(f"this XLA does not accept {FAST_EMITTERS}")
    env = dict(os.environ, XLA_FLAGS=other.strip(), JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT),
               PACBOUND_TEST_XLA_DEFAULTS="1")  # fmt: skip
    path = tmp_path / "other.npz"
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(path)], env=env,
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    here, there = values(), np.load(path)
    assert sorted(here) == sorted(there.files)
    ulps = {k: _ulps(here[k], there[k]) for k in here}
    assert {k: u for k, u in ulps.items() if u > MAX_ULPS} == {}
    # bit for bit but the grid bounds vmapped over statistics (the measured exceptions)
    grid = {f"{name} {np.dtype(t).name}" for name in BOUNDS if BOUNDS[name].grid for t in DTYPES}
    assert {k: u for k, u in ulps.items() if u > 0 and k not in grid} == {}


def _ulps(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between ``a`` and ``b`` in units in the last place."""
    assert np.array_equal(np.isnan(a), np.isnan(b))
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    return float(np.max(np.abs(a - b) / np.spacing(np.maximum(np.abs(a), np.abs(b))), initial=0))
