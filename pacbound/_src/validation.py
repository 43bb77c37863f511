"""Checks at the Python boundary of the solvers: a clear ``ValueError``, never a silent NaN.

Solvers validate their arguments here, before tracing, and keep a jittable core that checks
nothing. Shape checks always run; value checks (finite, in range, labels) run only on concrete
arrays, so a solver called inside ``jax.jit`` or ``jax.vmap`` skips them instead of failing.
The value checks of a ``jax.Array`` are reductions on its own devices (only scalars come back
to the host), so that votes sharded over devices
(:func:`pacbound._src.sweep.sharding.shard_examples`) are never gathered to check them.
"""

from __future__ import annotations

import functools
from typing import SupportsFloat, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "check_delta",
    "check_features",
    "check_labels",
    "check_matrix",
    "check_positive_int",
    "check_sample_weight",
    "check_scalar",
    "check_votes",
    "float_dtype",
    "is_concrete",
]


def is_concrete(*xs) -> bool:
    """Whether no argument is a tracer (value checks run only then).

    Example:
      >>> import jax
      >>> is_concrete(1.0), bool(jax.jit(is_concrete)(1.0))  # a tracer inside jit
      (True, False)
    """
    return not any(isinstance(x, jax.core.Tracer) for x in xs)


def float_dtype(*xs: ArrayLike) -> jnp.dtype:
    """The computation dtype: float32, or float64 when a floating input is float64.

    Integer and low-precision inputs (``int8`` / ``bfloat16`` votes) compute in float32.

    Example:
      >>> import jax.numpy as jnp
      >>> str(float_dtype(jnp.ones(2, jnp.int8), 1.0))  # int8 votes compute in float32
      'float32'
    """
    floats = [
        jnp.asarray(x).dtype for x in xs if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating)
    ]
    return jnp.result_type(*floats, jnp.float32)


def _check_2d(X: ArrayLike, name: str, columns: str) -> None:
    shape = np.shape(X)
    if len(shape) != 2 or 0 in shape:
        raise ValueError(f"{name} must be a non-empty 2-D (examples, {columns}) array; got {shape}")


def _on_device(fn):
    """A jitted check of a concrete ``jax.Array`` on its own devices, evaluated now even when
    called while tracing (a concrete array closed over by a user's ``jit``)."""
    compiled = jax.jit(fn)

    @functools.wraps(fn)
    def run(*args):
        with jax.ensure_compile_time_eval():
            return compiled(*args)

    return run


@_on_device
def _device_range(x: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    return jnp.min(x), jnp.max(x), jnp.all(jnp.abs(x) == 1)


def _range(values: ArrayLike) -> tuple[float, float, bool]:
    """``(min, max, every |entry| = 1)`` in the array's own dtype (no float copy of a large int8
    ``H``; on its devices for a ``jax.Array``); NaN shows up in the extremes."""
    if isinstance(values, jax.Array):
        lo, hi, binary = _device_range(values)
        return float(lo), float(hi), bool(binary)
    values = np.asarray(values)
    with np.errstate(invalid="ignore"):  # NaN in bfloat16 reductions warns
        return float(values.min()), float(values.max()), bool((np.abs(values) == 1).all())


def _finite_range(values: ArrayLike, name: str) -> tuple[float, float, bool]:
    """:func:`_range`; ValueError if NaN or inf is among the entries."""
    lo, hi, binary = _range(values)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} has NaN or inf entries")
    return lo, hi, binary


def check_matrix(X: ArrayLike, name: str = "X") -> None:
    """``X`` a non-empty ``(m, d)`` matrix of features, finite (unbounded otherwise).

    Example:
      >>> import numpy as np
      >>> check_matrix(np.array([[0.0, 5.0]]))
      >>> check_matrix(np.array([[0.0, float("nan")]]))
      Traceback (most recent call last):
        ...
      ValueError: X has NaN or inf entries
    """
    _check_2d(X, name, "features")
    if is_concrete(X):
        _finite_range(X, name)


def check_votes(H: ArrayLike, name: str = "H", *, binary: bool = False) -> None:
    """``H`` a non-empty ``(m, n)`` matrix, finite with entries in ``[-1, 1]`` (or ``{-1, 1}``).

    Example:
      >>> import numpy as np
      >>> check_votes(np.array([[1.0, -0.5]]))
      >>> check_votes(np.array([[0.5, 2.0]]))
      Traceback (most recent call last):
        ...
      ValueError: H must have entries in [-1, 1]; max |entry| 2
    """
    _check_2d(H, name, "voters")
    if not is_concrete(H):
        return
    lo, hi, is_binary = _finite_range(H, name)
    if binary and not is_binary:
        raise ValueError(f"{name} must hold binary votes -1 / +1")
    if max(-lo, hi) > 1 + 1e-6:
        raise ValueError(f"{name} must have entries in [-1, 1]; max |entry| {max(-lo, hi):g}")


def check_labels(y: ArrayLike, m: int) -> None:
    """``y`` of shape ``(m,)`` with labels in ``{-1, +1}``, both present.

    Example:
      >>> import numpy as np
      >>> check_labels(np.array([1.0, -1.0]), 2)
      >>> check_labels(np.array([1.0, 0.0]), 2)
      Traceback (most recent call last):
        ...
      ValueError: labels must be -1 or +1; found [0.0, 1.0]
    """
    if np.shape(y) != (m,):
        raise ValueError(f"y must have shape ({m},), one label per example; got {np.shape(y)}")
    if is_concrete(y) and not (isinstance(y, jax.Array) and bool(_labels_ok(y))):
        found = np.unique(np.asarray(y))
        if not np.isin(found, (-1, 1)).all():
            raise ValueError(f"labels must be -1 or +1; found {found.tolist()[:10]}")
        if len(found) < 2:
            raise ValueError(f"both classes are needed; every label is {found.tolist()}")


@_on_device
def _labels_ok(y: jax.Array) -> jax.Array:
    """Labels in ``{-1, +1}`` with both present, on ``y``'s devices (the host reads the labels
    only to name what is wrong)."""
    return jnp.all((y == 1) | (y == -1)) & jnp.any(y == 1) & jnp.any(y == -1)


def check_positive_int(name: str, value) -> None:
    """``value`` a Python / NumPy integer ``>= 1`` (a static size or loop length).

    Example:
      >>> check_positive_int("max_iter", 10)
      >>> check_positive_int("max_iter", 0)
      Traceback (most recent call last):
        ...
      ValueError: max_iter must be an integer >= 1; got 0
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")


def check_scalar(
    name: str,
    value: ArrayLike,
    low: float = -np.inf,
    high: float = np.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """A scalar hyperparameter in ``[low, high]`` (ends open as asked) when concrete.

    Example:
      >>> check_scalar("gamma", 0.5, 0.0)
      >>> check_scalar("gamma", -1.0, 0.0)
      Traceback (most recent call last):
        ...
      ValueError: gamma must be finite and lie in [0, inf); got -1
    """
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a scalar (jax.vmap over several); got {np.shape(value)}")
    if not is_concrete(value):
        return
    v = float(cast(SupportsFloat, value))  # a concrete real scalar
    above = v > low if low_open else v >= low
    below = v < high if high_open else v <= high
    if not (np.isfinite(v) and above and below):
        opened, closed = low_open or low == -np.inf, high_open or high == np.inf
        interval = f"{'(' if opened else '['}{low:g}, {high:g}{')' if closed else ']'}"
        raise ValueError(f"{name} must be finite and lie in {interval}; got {v:g}")


def check_delta(delta: ArrayLike) -> None:
    """The confidence ``delta`` in ``(0, 1]``.

    Example:
      >>> check_delta(0.05)
      >>> check_delta(0.0)
      Traceback (most recent call last):
        ...
      ValueError: delta must be finite and lie in (0, 1]; got 0
    """
    check_scalar("delta", delta, 0.0, 1.0, low_open=True)


def check_sample_weight(weight: ArrayLike | None, m: int) -> None:
    """Example weights of shape ``(m,)``, finite, ``>= 0`` and not all zero (``None`` is fine).

    Example:
      >>> import numpy as np
      >>> check_sample_weight(np.array([0.0, 2.0]), 2)
      >>> check_sample_weight(np.array([0.0, 0.0]), 2)
      Traceback (most recent call last):
        ...
      ValueError: sample_weight must be finite, >= 0 and not all zero
    """
    if weight is None:
        return
    if np.shape(weight) != (m,):
        raise ValueError(f"sample_weight must have shape ({m},); got {np.shape(weight)}")
    if is_concrete(weight) and not _weights_ok(weight):
        raise ValueError("sample_weight must be finite, >= 0 and not all zero")


@_on_device
def _device_weights_ok(w: jax.Array) -> jax.Array:
    return jnp.all(jnp.isfinite(w) & (w >= 0)) & (jnp.sum(w) > 0)


def _weights_ok(weight: ArrayLike) -> bool:
    """Finite, ``>= 0``, not all zero (on the weights' devices for a ``jax.Array``)."""
    if isinstance(weight, jax.Array):
        return bool(_device_weights_ok(weight))
    w = np.asarray(weight, np.float64)
    return bool(np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0)


def check_features(X: ArrayLike, name: str = "X") -> np.ndarray:
    """Host-side check that ``X`` is a finite, non-empty ``(m, d)`` float matrix.

    Raises:
      ValueError: naming the problem (dimension, emptiness, NaN or inf entries and where).

    Example:
      >>> check_features([[1.0, 2.0]]).shape
      (1, 2)
      >>> check_features([[1.0, float("inf")]])
      Traceback (most recent call last):
        ...
      ValueError: X has 1 non-finite (NaN/inf) entries, first inf at row 0, feature 1; impute or ...
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (m, d); got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) and X.dtype != jnp.bfloat16:
        raise ValueError(f"{name} must be numeric; got dtype {X.dtype}")
    bad = ~np.isfinite(X.astype(np.float64))
    if bad.any():
        rows, cols = np.nonzero(bad)
        kind = "NaN" if np.isnan(X[rows[0], cols[0]]) else "inf"
        raise ValueError(
            f"{name} has {bad.sum()} non-finite (NaN/inf) entries, first {kind} at row "
            f"{rows[0]}, feature {cols[0]}; impute or drop them before fitting"
        )
    return X
