"""Multi-host sweeps (issue #36 point 7): two local processes joined by
``jax.distributed.initialize`` on 127.0.0.1, two CPU devices each, get from ``sweep.grid`` and
``sweep.cross_validate`` the results one process with four devices gets.

The processes are subprocesses running tests/multihost_worker.py: the two of the distributed
run and a third, single-process reference, started together. Each saves every leaf of its
results with NumPy; the two distributed processes must hold identical arrays (the cells'
results are gathered onto every process, the refit is the same program on the same data), and
those must equal the reference's to float32 rounding (``rtol=1e-6``, integers and booleans
exactly): every cell is the same per-device program on its own lane, whatever the process
count (they come out bitwise equal here; the tolerance only allows for another XLA)."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from tests.conftest import xla_flags

ROOT = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).with_name("multihost_worker.py")
TIMEOUT = 240  # seconds for all three processes (each about 11 s of CPU time)


def _no_cpu_collectives() -> str | None:
    """Why this JAX cannot run collectives across CPU processes, or None when it can: that
    needs the ``jax_cpu_collectives_implementation`` option (the worker selects ``"gloo"``,
    which older versions did not default to) and a jaxlib built with gloo's TCP collectives."""
    if not hasattr(jax.config, "jax_cpu_collectives_implementation"):
        return f"jax {jax.__version__} has no jax_cpu_collectives_implementation option"
    extension = None
    for name in ("_jax", "xla_extension"):  # jaxlib's extension module, newer name first
        try:
            extension = getattr(__import__("jax._src.lib", fromlist=[name]), name)
            break
        except (ImportError, AttributeError):
            continue
    if extension is not None and not hasattr(extension, "make_gloo_tcp_collectives"):
        return f"jaxlib {jax.__version__} is built without gloo CPU collectives"
    return None  # (a jaxlib whose extension is not found here: run, and fail if it cannot)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp: Path, process_id: int, num_processes: int, port: int) -> subprocess.Popen:
    """A worker with ``4 / num_processes`` CPU devices; it saves its results in
    ``tmp/<num_processes>/`` and its output in ``tmp/<num_processes>.<process_id>.{out,err}``."""
    out = tmp / str(num_processes)
    out.mkdir(exist_ok=True)
    devices = f"--xla_force_host_platform_device_count={4 // num_processes}"
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS=xla_flags(devices),
               PYTHONPATH=str(ROOT))  # fmt: skip
    env.pop("JAX_ENABLE_X64", None)  # float32 in every process alike
    command = [sys.executable, str(WORKER), str(out), str(process_id), str(num_processes),
               str(port)]  # fmt: skip
    log = tmp / f"{num_processes}.{process_id}"
    with open(f"{log}.out", "w") as stdout, open(f"{log}.err", "w") as stderr:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout, stderr=stderr)


def _wait(processes: dict[str, subprocess.Popen], tmp: Path) -> None:
    """Wait for every process; on a failure or the timeout kill the others, and fail with
    every process's exit code and the tail of its stderr."""
    deadline = time.monotonic() + TIMEOUT
    try:
        while any(p.poll() is None for p in processes.values()):
            if any(p.poll() not in (None, 0) for p in processes.values()):
                break  # a process failed: its peer would wait for it in a collective
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        for p in processes.values():
            if p.poll() is None:
                p.kill()
            p.wait()
    if any(p.returncode != 0 for p in processes.values()):
        report = [f"a process failed or {TIMEOUT} s passed; the others were killed (code -9)"]
        for name, p in processes.items():
            err = (tmp / f"{name}.err").read_text()[-3000:]
            report.append(f"--- process {name}: exit code {p.returncode}, stderr:\n{err}")
        pytest.fail("\n".join(report))


def _load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as saved:
        return dict(saved)


def test_two_processes_equal_one_process(tmp_path):
    reason = _no_cpu_collectives()
    if reason is not None:
        pytest.skip(f"no multi-process CPU collectives: {reason}")
    port = _free_port()
    processes = {f"2.{i}": _start(tmp_path, i, 2, port) for i in range(2)}
    processes["1.0"] = _start(tmp_path, 0, 1, 0)  # the reference, alongside
    _wait(processes, tmp_path)
    reference = _load(tmp_path / "1" / "process_0.npz")
    first, second = (_load(tmp_path / "2" / f"process_{i}.npz") for i in range(2))
    assert {"grid.result.q", "cv.risks", "cv.refit.q", "cv.H"} <= reference.keys()
    assert first.keys() == second.keys() == reference.keys()
    for key, want in reference.items():
        np.testing.assert_array_equal(second[key], first[key], err_msg=key)  # bit for bit
        if np.issubdtype(want.dtype, np.inexact):
            np.testing.assert_allclose(first[key], want, rtol=1e-6, atol=0, err_msg=key)
        else:
            np.testing.assert_array_equal(first[key], want, err_msg=key)
