"""JAX's persistent compilation cache for the command line and the estimators.

XLA compiles every program once per process; the persistent cache keeps the compiled programs
on disk, so a second ``pacbound demo`` (or a second process fitting the same estimators on data
of the same shapes) skips compilation. :func:`enable_compilation_cache` turns it on in the
user's cache directory (``$XDG_CACHE_HOME/pacbound/jax``, else ``~/.cache/pacbound/jax``), unless

* the environment variable ``PACBOUND_NO_COMPILATION_CACHE`` is set (to anything), or
* the user already chose a cache directory (``jax_compilation_cache_dir`` or the
  ``JAX_COMPILATION_CACHE_DIR`` environment variable): theirs wins.

Library functions never call it on import: only the ``pacbound`` command and the estimators'
``fit`` do, and ``PACBOUND_COMPILATION_CACHE_DIR`` chooses another folder.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import jax
from jax import monitoring

__all__ = ["Compilations", "cache_directory", "counting_compilations", "enable_compilation_cache"]

# JAX's monitoring events: an executable requested (compiled, or read from the persistent
# cache), and one read from the cache
_COMPILED = "/jax/core/compile/backend_compile_duration"
_FROM_CACHE = "/jax/compilation_cache/cache_hits"


def cache_directory() -> Path:
    """Where pacbound keeps compiled programs: ``PACBOUND_COMPILATION_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/pacbound/jax``, else ``~/.cache/pacbound/jax``.

    Example:
      >>> import os
      >>> from unittest import mock
      >>> with mock.patch.dict(os.environ, {"PACBOUND_COMPILATION_CACHE_DIR": "/tmp/jax-cache"}):
      ...     print(cache_directory())
      /tmp/jax-cache
    """
    chosen = os.environ.get("PACBOUND_COMPILATION_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pacbound" / "jax"


def enable_compilation_cache() -> Path | None:
    """Turn on JAX's persistent compilation cache in :func:`cache_directory` (every program
    that took at least 0.1 s to compile is kept); returns the folder, or ``None`` when opted
    out, when the user set a cache of their own, or when the folder cannot be created.

    Example:
      >>> import os
      >>> from unittest import mock
      >>> with mock.patch.dict(os.environ, {"PACBOUND_NO_COMPILATION_CACHE": "1"}):
      ...     print(enable_compilation_cache())  # opted out: nothing changed
      None
    """
    if os.environ.get("PACBOUND_NO_COMPILATION_CACHE"):
        return None
    # jax's Config stub declares none of its options (they are set at runtime)
    user_dir = jax.config.jax_compilation_cache_dir  # type: ignore[attr-defined]
    if user_dir or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None
    folder = cache_directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return folder


@dataclasses.dataclass
class Compilations:
    """How many programs XLA compiled (``compiled``) and how many the persistent cache served
    (``from_cache``) while :func:`counting_compilations` was open; programs already compiled
    in this process count in neither (they are reused in memory). JAX times every request for
    an executable, read from the cache or compiled, under one event (``requests``)."""

    requests: int = 0
    from_cache: int = 0

    @property
    def compiled(self) -> int:
        """The requests the cache did not serve: programs XLA compiled."""
        return self.requests - self.from_cache

    def summary(self) -> str:
        """One phrase for the command's last line.

        Example:
          >>> Compilations(requests=43, from_cache=40).summary()
          '3 programs compiled, 40 read from the compilation cache'
          >>> Compilations(requests=12, from_cache=12).summary()
          'nothing compiled: 12 programs read from the compilation cache'
        """
        cached = f"{self.from_cache} read from the compilation cache"
        if self.compiled == 0 and self.from_cache:
            return f"nothing compiled: {self.from_cache} programs read from the compilation cache"
        return f"{self.compiled} program{'' if self.compiled == 1 else 's'} compiled, {cached}"


_OPEN: list[Compilations] = []


def _on_duration(event: str, duration_secs: float, **kwargs: str | int) -> None:
    if event == _COMPILED:
        for counts in _OPEN:
            counts.requests += 1


def _on_event(event: str, **kwargs: str | int) -> None:
    if event == _FROM_CACHE:
        for counts in _OPEN:
            counts.from_cache += 1


_LISTENING: list[bool] = []


@contextlib.contextmanager
def counting_compilations() -> Iterator[Compilations]:
    """Count the programs compiled and those read from the persistent cache inside the block,
    from JAX's monitoring events.

    Example:
      >>> import jax, numpy as np
      >>> with counting_compilations() as counts:
      ...     _ = jax.jit(lambda x: x * 3 + 1)(np.arange(5.0))
      >>> counts.compiled + counts.from_cache  # one new program: compiled, or read from disk
      1
    """
    if not _LISTENING:  # JAX keeps its listeners for the process: register them once
        monitoring.register_event_duration_secs_listener(_on_duration)
        monitoring.register_event_listener(_on_event)
        _LISTENING.append(True)
    counts = Compilations()
    _OPEN.append(counts)
    try:
        yield counts
    finally:
        _OPEN.remove(counts)
