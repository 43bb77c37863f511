"""Test configuration: float64 on, shared data located, hypothesis profiles.

Tests run with ``jax_enable_x64`` on so references can be compared at 1e-10; float32
behaviour is tested by passing float32 inputs explicitly (JAX keeps their dtype).
"""

import contextlib
import gc
import os
import tempfile
from pathlib import Path

import jax
import pytest
from hypothesis import HealthCheck, settings
from jax import monitoring

jax.config.update("jax_enable_x64", True)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
os.environ.setdefault("PACBOUND_DATA", str(SHARED_DATA))
# The command and the estimators' fit() keep compiled programs on disk (JAX's persistent cache),
# as they do for every user: here in a folder of this run's own, never the user's cache. The
# user's own JAX cache settings are set aside; the suite compiles with XLA's default flags.
os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)
os.environ.pop("PACBOUND_NO_COMPILATION_CACHE", None)
os.environ.setdefault(
    "PACBOUND_COMPILATION_CACHE_DIR", tempfile.mkdtemp(prefix="pacbound-test-cache-")
)


def xla_flags(*flags: str) -> str:
    """``XLA_FLAGS`` as this process has them, with ``flags`` added (for a subprocess)."""
    return " ".join([os.environ.get("XLA_FLAGS", ""), *flags]).strip()


# XLA:CPU keeps memory mappings for every compiled program; one process compiling the whole
# suite's programs would pass the kernel's limit (``vm.max_map_count``, 65 530) and abort
_MAPS = Path("/proc/self/maps")
_MAPPING_LIMIT = 45_000  # one test adds at most a few thousand


def _mappings() -> int:
    """The process's memory mappings (one line each of /proc/self/maps)."""
    with _MAPS.open("rb") as maps:
        return maps.read().count(b"\n")


@pytest.fixture(autouse=True)
def _release_compiled_programs():
    """Drop JAX's compiled programs after a test once the process holds more than
    ``_MAPPING_LIMIT`` mappings (Linux; elsewhere there is no such limit to guard). Programs
    compiled once (the certified bounds take seconds each) are kept across tests and modules
    until then, instead of being compiled again by every module."""
    yield
    if not _MAPS.exists() or _mappings() <= _MAPPING_LIMIT:
        return
    jax.clear_caches()
    gc.collect()


@pytest.fixture
def shared_data() -> Path:
    """The read-only benchmark data beside the checkout; skips when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@contextlib.contextmanager
def _no_compilation():
    compiles = []
    events = ("/jax/core/compile/backend_compile_duration", "/jax/compilation_cache/cache_hits")
    listener = lambda name, *_, **kw: compiles.append(name) if name in events else None  # noqa: E731
    monitoring.register_event_duration_secs_listener(listener)
    monitoring.register_event_listener(listener)  # a program read back from the disk cache
    try:
        yield
    finally:
        monitoring.unregister_event_duration_listener(listener)
        monitoring.unregister_event_listener(listener)
    assert compiles == [], f"XLA compiled {len(compiles)} program(s) inside the block"


@pytest.fixture
def no_compilation():
    """A context manager that fails the test if XLA compiles anything inside its block."""
    return _no_compilation
