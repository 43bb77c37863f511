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

import os
from pathlib import Path

import jax

__all__ = ["cache_directory", "enable_compilation_cache"]


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
