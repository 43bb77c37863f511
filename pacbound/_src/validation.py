"""Checks at the Python boundary of the solvers: a clear ``ValueError``, never a silent NaN.

Solvers validate their arguments here, before tracing, and keep a jittable core that checks
nothing. Shape checks always run; value checks (finite, in range, labels) run only on concrete
arrays, so a solver called inside ``jax.jit`` or ``jax.vmap`` skips them instead of failing.
The value checks of a ``jax.Array`` are reductions on its own devices (only scalars come back
to the host), so that votes sharded over devices
(:func:`pacbound.sweep.shard_examples`) are never gathered to check them.

The bounds' arguments are checked by one declaration at each public function, :func:`domains`
(argument name -> :class:`Domain`), under the same rule: concrete values only, elementwise.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import NamedTuple, SupportsFloat, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

__all__ = [
    "AT_MOST_HALF",
    "BELOW_HALF",
    "CONFIDENCE",
    "FINITE",
    "HALF",
    "NONNEGATIVE",
    "POSITIVE",
    "SIGNED",
    "SIZE",
    "STATISTIC_SLACK",
    "UNIT",
    "Domain",
    "check_data",
    "check_delta",
    "check_features",
    "check_labels",
    "check_matrix",
    "check_positive_int",
    "check_sample_weight",
    "check_scalar",
    "check_votes",
    "domains",
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
        raise ValueError(
            f"{name} must be a non-empty 2-D (examples, {columns}) array; got {shape}"
            + (_MULTICLASS if len(shape) == 3 and columns == "voters" else "")
        )


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


_MULTICLASS = (
    " (votes of K classes, (m, n) labels 0..K-1 or (m, n, K) class probabilities, go to certify "
    "and minimize_bound, with num_classes=K for labels, and to the ensembles' bounds; MinCq, "
    "CqBoost, CB-Boost, the KL-regularized and the boosting learners are binary: their programs "
    "weigh each voter's complement -h, which is no voter of K classes)"
)


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
    labels = lo >= 0 and hi >= 2 and bool(np.all(np.mod(np.asarray(H), 1) == 0))
    hint = _MULTICLASS if labels else ""  # votes that read as class labels 0..K-1
    if binary and not is_binary:
        raise ValueError(f"{name} must hold binary votes -1 / +1{hint}")
    if max(-lo, hi) > 1 + 1e-6:
        raise ValueError(f"{name} must have entries in [-1, 1]; max |entry| {max(-lo, hi):g}{hint}")


def check_labels(y: ArrayLike, m: int) -> None:
    """``y`` of shape ``(m,)`` with labels in ``{-1, +1}``, both present.

    Example:
      >>> import numpy as np
      >>> check_labels(np.array([1.0, -1.0]), 2)
      >>> check_labels(np.array([1.0, 0.0]), 2)
      Traceback (most recent call last):
        ...
      ValueError: labels must be -1 or +1; found [0.0, 1.0] (votes of K classes, ...
    """
    if np.shape(y) != (m,):
        raise ValueError(f"y must have shape ({m},), one label per example; got {np.shape(y)}")
    if is_concrete(y) and not (isinstance(y, jax.Array) and bool(_labels_ok(y))):
        found = np.unique(np.asarray(y))
        if not np.isin(found, (-1, 1)).all():
            raise ValueError(f"labels must be -1 or +1; found {found.tolist()[:10]}{_MULTICLASS}")
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


def check_data(
    H: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None, *, binary: bool = False
) -> int:
    """A learner's data: the votes ``H`` (:func:`check_votes`; ``binary``: in ``{-1, +1}``), one
    label per row (:func:`check_labels`) and the example weights (:func:`check_sample_weight`);
    returns ``m``, the number of examples.

    Example:
      >>> import numpy as np
      >>> check_data(np.array([[1.0, -0.5], [0.5, 1.0]]), np.array([1.0, -1.0]), None)
      2
      >>> check_data(np.array([[1.0, -0.5]]), np.array([1.0, -1.0]), None)
      Traceback (most recent call last):
        ...
      ValueError: y must have shape (1,), one label per example; got (2,)
    """
    check_votes(H, binary=binary)
    m = int(np.shape(H)[0])
    check_labels(y, m)
    check_sample_weight(sample_weight, m)
    return m


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


# ------------------------------------------------------------------------------------------
# The domains of the bounds' arguments, checked once, at the public boundary
# ------------------------------------------------------------------------------------------

STATISTIC_SLACK = 1e-6  # how far past a closed end a computed statistic may lie (its rounding)
_ON_HOST = 4096  # concrete jax.Arrays up to this size are read on the host, larger ones reduced
_F = TypeVar("_F", bound=Callable)


class Domain(NamedTuple):
    """The domain of one argument: every element between ``low`` and ``high``, ends open as
    asked, never NaN. An end is a number or the name of another argument of the function (then
    compared elementwise, broadcast); a closed end at ``inf`` admits ``inf``; ``slack`` widens
    the closed ends for a statistic that was computed (rounded), which the bounds clip.

    Example:
      >>> str(Domain(0.0, 1.0, low_open=True)), str(Domain(0.0, "n")), str(SIZE)
      ('(0, 1]', '[0, n]', '[1, inf)')
    """

    low: float | str = -np.inf
    high: float | str = np.inf
    low_open: bool = False
    high_open: bool = False
    slack: float = 0.0

    def __str__(self) -> str:
        low, high = (end if isinstance(end, str) else f"{end:g}" for end in (self.low, self.high))
        return f"{'(' if self.low_open else '['}{low}, {high}{')' if self.high_open else ']'}"


UNIT = Domain(0.0, 1.0, slack=STATISTIC_SLACK)  # a risk, a joint error, a rate: [0, 1]
HALF = Domain(0.0, 0.5, slack=STATISTIC_SLACK)  # the disagreement of votes in [-1, 1]
NONNEGATIVE = Domain(0.0, np.inf, slack=STATISTIC_SLACK)  # a KL, a variance, a level; inf too
CONFIDENCE = Domain(0.0, 1.0, low_open=True)  # delta
SIZE = Domain(1.0, np.inf, high_open=True)  # a sample size
POSITIVE = Domain(0.0, np.inf, low_open=True, high_open=True)
FINITE = Domain(-np.inf, np.inf, low_open=True, high_open=True)
SIGNED = Domain(-1.0, 1.0, slack=STATISTIC_SLACK)  # a margin's first moment, a vote
BELOW_HALF = Domain(-np.inf, 0.5, low_open=True, high_open=True)  # mu of a Chebyshev-Cantelli
AT_MOST_HALF = Domain(-np.inf, 0.5, low_open=True)  # mu of a mu-tandem loss's range K_mu


class _Boundary(threading.local):
    inside = False  # a checked function is running in this thread: nested calls check nothing


_BOUNDARY = _Boundary()
_TRACER = jax.core.Tracer


def domains(**by_argument: Domain) -> Callable[[_F], _F]:
    """Declares the domains of a public function's arguments, checked when it is called.

    Each declared argument that is concrete (not a tracer: ``jax.jit``, ``jax.vmap`` and
    ``jax.grad`` trace past the checks, at no cost in the compiled program) must lie in its
    :class:`Domain` elementwise, or the call raises a ``ValueError`` naming the function, the
    argument, its domain and a value found outside it. Arguments left at their default or
    ``None`` are not checked. Only the outermost checked call checks: the library's functions
    calling one another on derived values (a lower bound on ``mu1`` below ``-1``) pass through.
    The decorated function keeps its signature and docstring; ``fn.domains`` is the table.

    Example:
      >>> @domains(risk=UNIT, m=SIZE)
      ... def gap(risk, m):
      ...     return risk / m
      >>> gap(0.5, 10)
      0.05
      >>> gap(0.5, 0)
      Traceback (most recent call last):
        ...
      ValueError: gap: m must lie in [1, inf); got 0
    """

    def decorate(fn: _F) -> _F:
        parameters = inspect.signature(fn).parameters
        position = {name: i for i, name in enumerate(parameters)}
        ends = {end for d in by_argument.values() for end in d[:2] if isinstance(end, str)}
        unknown = (set(by_argument) | ends) - set(position)
        if unknown:
            raise TypeError(f"{fn.__name__} has no argument {sorted(unknown)}")
        defaults = {n: p.default for n, p in parameters.items() if p.default is not p.empty}
        # ends naming other arguments last: those arguments are checked first
        named = sorted(
            by_argument, key=lambda name: any(isinstance(e, str) for e in by_argument[name][:2])
        )
        checks = tuple((name, position[name], by_argument[name]) for name in named)

        function = fn.__name__

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if _BOUNDARY.inside:
                return fn(*args, **kwargs)
            _BOUNDARY.inside = True
            try:
                given = len(args)
                for name, i, domain in checks:
                    value = args[i] if i < given else kwargs.get(name, defaults.get(name))
                    if value is not None and not isinstance(value, _TRACER):
                        _check_domain(
                            function, name, value, domain, (position, defaults, args, kwargs)
                        )
                return fn(*args, **kwargs)
            finally:
                _BOUNDARY.inside = False

        checked.domains = dict(by_argument)  # type: ignore[attr-defined]
        return cast(_F, checked)

    return decorate


def _extremes(value) -> tuple[float, float] | None:
    """``(min, max)`` of the elements (NaN if one is NaN), ``None`` when there are none; a large
    ``jax.Array`` is reduced on its devices."""
    if isinstance(value, int | float):  # a Python scalar: the common case, kept fast
        return float(value), float(value)
    if isinstance(value, jax.Array) and value.size > _ON_HOST:
        lo, hi, _ = _device_range(value)
        return float(lo), float(hi)
    array = np.asarray(value)
    if array.size == 0:
        return None
    if array.ndim == 0:
        return float(array), float(array)
    with np.errstate(invalid="ignore"):
        return float(array.min()), float(array.max())


def _check_domain(function: str, name: str, value, domain: Domain, call: tuple) -> None:
    """``ValueError`` naming ``function``, ``name`` and an element outside ``domain`` (NaN is
    outside every domain); ``call`` is ``(position, defaults, args, kwargs)`` of the call."""
    low, high, low_open, high_open, slack = domain
    if isinstance(low, str) or isinstance(high, str):
        bad = _outside_named(value, domain, call)
    else:  # numeric ends: compare the extremes, the fast path
        extremes = _extremes(value)
        if extremes is None:
            return
        lo, hi = extremes
        if not (lo > low if low_open else lo >= low - slack):
            bad = lo
        elif not (hi < high if high_open else hi <= high + slack):
            bad = hi
        else:
            return
    if bad is not None:
        shape = np.shape(value)
        where = "" if shape == () else f" (an element of the {shape} array)"
        raise ValueError(f"{function}: {name} must lie in {domain}; got {bad:g}{where}")


def _outside_named(value, domain: Domain, call: tuple) -> float | None:
    """An element of ``value`` outside ``domain``, whose ends may name other arguments (compared
    elementwise; an end that is absent or traced bounds nothing); ``None`` if there is none."""
    x = np.asarray(value, np.float64)
    for end, below, open_ in (
        (domain.low, True, domain.low_open),
        (domain.high, False, domain.high_open),
    ):
        if isinstance(end, str):  # another argument
            position, defaults, args, kwargs = call
            i = position[end]
            end = args[i] if i < len(args) else kwargs.get(end, defaults.get(end))
        if end is None or not is_concrete(end):
            continue
        slack = 0.0 if open_ else domain.slack
        x, e = np.broadcast_arrays(x, np.asarray(end, np.float64))
        if below:
            inside = x > e if open_ else x >= e - slack
        else:
            inside = x < e if open_ else x <= e + slack
        inside |= np.isnan(e)  # a NaN end is its own argument's error
        if not inside.all():
            return float(x[~inside].flat[0])
    return None
