"""One process of tests/test_multihost.py: a grid and a cross-validation, saved with NumPy.

Run as ``python tests/multihost_worker.py OUT PROCESS_ID NUM_PROCESSES PORT`` with
``JAX_PLATFORMS=cpu`` and ``XLA_FLAGS=--xla_force_host_platform_device_count=K``. With
``NUM_PROCESSES > 1`` it first calls :func:`jax.distributed.initialize` with the coordinator on
``127.0.0.1:PORT`` and CPU collectives over gloo (gloo listens on the address the host name
resolves to), as the docs tell a multi-host user to do;
then every process runs the same sweeps on the same host arrays (the public entry points only)
and writes every leaf of every result to ``OUT/process_<PROCESS_ID>.npz``.
"""

import sys
from pathlib import Path

import jax
import numpy as np

DEVICES = 4  # the global device count in every configuration the test runs
MUS = np.array([0.2, 0.05, 0.1], np.float32)  # unsorted, 3 cells on 4 devices: padded
ROUNDS = np.array([1, 3, 6])
TOLS = np.array([0.0, 1e-4, 1e-3, 1e-2, 1e-1], np.float32)  # 5 cells: 2 chunks of 4


def problem() -> tuple[np.ndarray, np.ndarray]:
    """30 examples, 3 features, noisy labels; float32 (one precision, smaller programs)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)).astype(np.float32)
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=30) > 0, 1.0, -1.0).astype(np.float32)
    return X, y


def sweeps() -> dict[str, np.ndarray]:
    """``sweep.grid`` (MinCq's ``mu``, solved as one path) and ``sweep.cross_validate``
    (CB-Boost with stumps fitted per training fold, rounds as a prefix, the 5 cells in two
    chunks of 4, each chunk's results read back to the host of every process)."""
    from pacbound import solvers, sweep

    X, y = problem()
    H = np.asarray(sweep.stump_voters(3)(X)(X))
    g = sweep.grid(solvers.mincq, H, y, mu=MUS)
    cv = sweep.cross_validate(solvers.cbboost, X, y, sweep.stump_voters(3), folds=3,
                              chunk_size=4, tol=TOLS, n_rounds=ROUNDS)  # fmt: skip
    if jax.process_count() > 1:  # one chunk's results: gathered onto every process's devices
        assert len(g.result.q.sharding.device_set) == DEVICES and g.result.q.is_fully_replicated
    out = {"cv.best_index": np.asarray(cv.best_index), "cv.H": np.asarray(cv.voters(X))}
    trees = {
        "grid.result": g.result,
        "grid.values": g.values,
        "cv.refit": cv.refit,
        "cv.risks": cv.risks,
        "cv.mean_risk": cv.mean_risk,
        "cv.values": cv.values,
    }
    for name, tree in trees.items():
        for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
            out[name + jax.tree_util.keystr(path)] = np.asarray(leaf)
    return out


def main(out: str, process_id: int, num_processes: int, port: int) -> None:
    if num_processes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        address = f"127.0.0.1:{port}"  # bound there too, not on every interface (the default)
        jax.distributed.initialize(coordinator_address=address, num_processes=num_processes,
                                   process_id=process_id, coordinator_bind_address=address,
                                   initialization_timeout=120)  # fmt: skip
    assert jax.process_count() == num_processes and jax.process_index() == process_id
    assert jax.device_count() == DEVICES, jax.devices()
    np.savez(Path(out) / f"process_{process_id}.npz", **sweeps())
    print("ok", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:]))
