"""Device check (issue #36 point 8): certified bounds, jit == vmap of every learner, timings.

One command for a machine with an accelerator (nothing to download; JAX, NumPy, SciPy,
scikit-learn and optax installed, pacbound by ``pip install --no-deps -e .``)::

    python benchmarks/device_check.py [--json PATH] [--dry-run]

1. **Certified bounds on the device.** Every bound of ``pacbound.bounds`` with a reference
   below, and ``kl.kl_inv_upper`` / ``kl_inv_lower``, jitted on the default device in float32
   and in float64, on seeded draws (risks, KL, ``m`` log-uniform in ``[1, 1e9]``, ``delta``, ...)
   against the exact value of its formula for the same floats, computed on the host: each
   bound must be ``>=`` it (``kl_inv_lower`` ``<=``). The references are written here, once,
   over two arithmetics: float64 NumPy (every float32 draw; the draws it cannot decide, within
   its ``1e-9`` relative error, are recomputed) and a precise one (``mpmath`` when importable,
   else ``decimal``; every float64 draw). kl-inverses by bisection (the precise one from a
   verified bracket around the float64 root); ``xi(m)`` by its series; the suprema of PAC-Bound
   2 and 2' from below, by a feasible point verified in the reference arithmetic. This tests
   the error model of ``pacbound.kl`` (1 ulp for libdevice's ``log`` / ``exp``) on the device.
2. **jit == vmap** for each learner of ``solvers.LEARNERS`` on breast-cancer stumps: a jitted
   call against row 0 of a call vmapped over two ``sample_weight`` fold masks (max ``|dq|``).
3. **Timings** (median of repeats after a warm-up, ``block_until_ready``) on the default
   device and on the CPU in the same run: ``sweep.grid`` of MinCq over 15 ``mu``, one MinCq
   fit, CB-Boost rounds over a histogram search (m = 10^6, d = 20), a batch of second-order
   bounds with their gradients.

``--dry-run``: the same code on the CPU at tiny sizes (a few tens of seconds), as the test
``tests/test_device_check.py`` runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import decimal
import functools
import math
import os
import sys
import time
from collections.abc import Callable
from typing import NamedTuple

if "--dry-run" in sys.argv:  # before JAX starts: the dry run is the CPU's, in the arithmetic
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # of the device machine (no mpmath there)
    os.environ.setdefault("PACBOUND_REFERENCE", "decimal")

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from learner_examples import EXAMPLES, GREEDY

from pacbound import bounds, datasets, kl, solvers, sweep, voters
from pacbound._src import loss_statistics
from pacbound._src.bounds.second_order.tandem import cctnd_optimal, first_order_kl

# ------------------------------------------------------------------ reference arithmetics


class Arithmetic(NamedTuple):
    """Elementwise real arithmetic on NumPy arrays (float64, or objects of a precise type)."""

    name: str
    num: Callable  # float64 / int array -> an array of this arithmetic, exactly
    log: Callable
    exp: Callable
    sqrt: Callable
    digits: int  # decimal digits carried
    margin: float  # relative error bound of a reference value in this arithmetic
    precise: bool


FAST = Arithmetic("float64", lambda a: np.asarray(a, np.float64), np.log, np.exp, np.sqrt,
                  15, 1e-9, False)  # fmt: skip


@functools.cache
def precise_arithmetic(digits: int = 36) -> Arithmetic:
    """mpmath at ``digits`` digits when importable (and ``PACBOUND_REFERENCE`` is not
    ``decimal``), else the standard library's decimal."""
    vec = functools.partial(np.frompyfunc, nin=1, nout=1)
    try:
        if os.environ.get("PACBOUND_REFERENCE") == "decimal":
            raise ImportError("decimal asked for")
        import mpmath

        mpmath.mp.dps = digits
        funcs = (mpmath.mpf, mpmath.log, mpmath.exp, mpmath.sqrt)
        name = f"mpmath {digits} digits"
    except ImportError:
        decimal.getcontext().prec = digits
        funcs = (decimal.Decimal, decimal.Decimal.ln, decimal.Decimal.exp, decimal.Decimal.sqrt)
        name = f"decimal {digits} digits"
    num, log, exp, sqrt = (vec(f) for f in funcs)
    return Arithmetic(name, lambda a: num(np.asarray(a).tolist()), log, exp, sqrt, digits,
                      0.0, True)  # fmt: skip


def where(c, a, b):
    return np.where(np.asarray(c, bool), a, b)


def lesser(a, b):
    return where(a < b, a, b)


def greater(a, b):
    return where(a > b, a, b)


def unit(x):
    return greater(lesser(x, 1), 0)


def to_float(x) -> np.ndarray:
    return np.asarray(x, dtype=object).astype(np.float64)


# ------------------------------------------------------------------ exact formulas


def binary_kl(A: Arithmetic, q, p):
    """``kl(q||p)`` with ``0 log 0 = 0`` (``inf`` outside the support)."""
    inside = np.asarray((p > 0) & (p < 1), bool)
    safe = where(inside, p, A.num(0.5))
    first = where(q > 0, q * A.log(where(q > 0, q, 1) / safe), 0)
    second = where(q < 1, (1 - q) * A.log(where(q < 1, 1 - q, 1) / (1 - safe)), 0)
    infinite = ((p <= 0) & (q > 0)) | ((p >= 1) & (q < 1))
    return where(infinite, A.num(np.inf), where(inside, first + second, 0))


def trinomial_kl(A: Arithmetic, e_s, d_s, e, d):
    """``kl(e_S, d_S || e, d)`` over (joint error, disagreement, the rest); inside only."""
    n_s, n = 1 - e_s - d_s, 1 - e - d
    terms = [where(s > 0, s * A.log(where(s > 0, s, 1) / where(s > 0, t, 1)), 0)
             for s, t in ((e_s, e), (d_s, d), (n_s, n))]  # fmt: skip
    return terms[0] + terms[1] + terms[2]


def bisect(A: Arithmetic, above: Callable, lo, hi, steps: int):
    """``(lo, hi)`` around the point where ``above`` turns true, ``above(lo)`` false."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        up = np.asarray(above(mid), bool)
        lo, hi = where(up, lo, mid), where(up, mid, hi)
    return lo, hi


def kl_root(A: Arithmetic, q, eps, upper: bool):
    """The root of ``kl(q||p) = eps`` in ``[q, 1]`` (``upper``) or ``[0, q]``: its lower end
    (``upper``) or its upper end, the side each bound below is conservative on."""
    if upper:
        lo, hi, above = q, A.num(np.ones(np.shape(q))), lambda p: binary_kl(A, q, p) > eps
    else:
        lo, hi, above = A.num(np.zeros(np.shape(q))), q, lambda p: binary_kl(A, q, p) <= eps
    steps = 220
    if A.precise:  # a verified bracket around the float64 root, then ~1e-35 relative
        guess = kl_root(FAST, to_float(q), to_float(eps), upper)
        g_lo, g_hi = A.num(guess * (1 - 1e-9) - 1e-300), A.num(guess * (1 + 1e-9) + 1e-300)
        g_lo, g_hi = greater(g_lo, lo), lesser(g_hi, hi)
        lo, hi = where(above(g_lo), lo, g_lo), where(above(g_hi), g_hi, hi)
        steps = int(A.digits * 3.33) - 20
    lo, hi = bisect(A, above, lo, hi, steps)
    # at eps = 0 the root is q; near it kl's sign is lost to cancellation (kl ~ (p - q)^2)
    return where(eps > 0, lo if upper else hi, q)


def inv_up(A, q, eps):
    return kl_root(A, q, eps, True)


def inv_low(A, q, eps):
    return kl_root(A, q, eps, False)


@functools.cache
def xi_value(m: int, precise: bool) -> object:
    """``xi(m) = 1 + Q(m)``, ``Q(m) = sum_k prod_{j<k} (1 - j/m)`` (Ramanujan), from below."""
    if not precise:
        k = np.arange(1, min(m - 1, 14 * math.isqrt(m) + 40) + 1)
        with np.errstate(divide="ignore"):
            return 2.0 + float(np.exp(np.cumsum(np.log1p(-k / m))).sum())
    A = precise_arithmetic()
    term, total, ten = A.num(np.array([1.0, 2.0, 10.0]))
    threshold = ten ** -(A.digits + 6)
    for k in range(1, m):
        term = term * (m - k) / m
        total += term
        if term < total * threshold:
            break
    return total


def xi(A: Arithmetic, m):
    return np.array([xi_value(int(v), A.precise) for v in to_float(m)], dtype=object if A.precise
                    else np.float64)  # fmt: skip


def maurer(A, m, delta, factor):
    """``ln(factor sqrt(m) / delta)``."""
    return A.log(factor * A.sqrt(m) / delta)


def cbound(mu1, mu2):
    """``1 - mu1^2 / mu2`` in ``[0, 1]``, 1 unless both are positive."""
    informative = (mu1 > 0) & (mu2 > 0)
    return where(informative, unit(1 - mu1**2 / where(informative, mu2, 1)), 1)


def cantelli(numerator, mu):
    return unit(greater(numerator, 0) * 4 / (1 - 2 * mu) ** 2)


def ref_mcallester(A, r, k, m, delta):
    return lesser(unit(r) + A.sqrt((k + maurer(A, m, delta, 2)) / (2 * m)), 1)


def ref_seeger(A, r, k, m, delta):
    return lesser(inv_up(A, unit(r), (k + maurer(A, m, delta, 2)) / m), 1)


def ref_catoni(A, r, k, m, delta, c):
    return lesser((c * unit(r) + (k - A.log(delta)) / m) / (1 - A.exp(-c)), 1)


def ref_pac_bound_0(A, r, k, m, delta):
    return lesser(2 * inv_up(A, unit(r), (k + A.log(xi(A, m) / delta)) / m), 1)


def ref_pac_bound_1(A, r, d, k, m, delta):
    level = A.log(2 * xi(A, m) / delta)
    risk = lesser(inv_up(A, unit(r), (k + level) / m), A.num(0.5))
    dis = greater(inv_low(A, lesser(d, A.num(0.5)), (2 * k + level) / m), 0)
    return cbound(1 - 2 * risk, 1 - 2 * dis)


def ref_cbound_roy2016(A, mu1, mu2, k, m, delta):
    deviation = [A.sqrt(2 * (j * k + maurer(A, m, delta, 4)) / m) for j in (1, 2)]
    mu1_low = greater(lesser(mu1, 1), -1) - deviation[0]
    return cbound(mu1_low, lesser(unit(mu2) + deviation[1], 1))


def ref_first_order_kl(A, r, k, n, delta):
    return lesser(2 * ref_seeger(A, r, k, n, delta), 1)


def ref_tnd_kl(A, t, k, n2, delta):
    return lesser(4 * inv_up(A, t, (2 * k + maurer(A, n2, delta, 2)) / n2), 1)


def ref_dis(A, r, d, k, n, m, delta):
    gibbs = inv_up(A, r, (k + maurer(A, n, delta, 4)) / n)
    return unit(4 * gibbs - 2 * inv_low(A, d, (2 * k + maurer(A, m, delta, 4)) / m))


def ref_cctnd(A, t, r, k, n, n2, delta, mu):
    tandem = inv_up(A, t, (2 * k + maurer(A, n2, delta, 4)) / n2)
    level = (k + maurer(A, n, delta, 4)) / n
    gibbs = where(mu >= 0, inv_low(A, r, level), inv_up(A, r, level))
    return cantelli(tandem - 2 * mu * gibbs + mu**2, mu)


def ref_split_kl_mu_tandem(A, both, one, neither, k, n2, delta, mu):
    positive = mu >= 0
    mid = where(positive, mu**2, -mu * (1 - mu))
    plus, minus = where(positive, 1 - 2 * mu, 1 - mu), where(positive, mu, -mu)
    eps = (2 * k + maurer(A, n2, delta, 4)) / n2
    rest = inv_low(A, unit(where(positive, one, neither)), eps)
    return cantelli(mid + plus * inv_up(A, unit(both), eps) - minus * rest, mu)


def ref_pac_bound_2(A, r, d, k, m, delta):
    e_s, d_s = greater(unit(r) - lesser(d, A.num(0.5)) / 2, 0), greater(lesser(d, A.num(0.5)), 0)
    return trinomial_sup(A, e_s, d_s, (2 * k + A.log((xi(A, m) + m) / delta)) / m, None)


def ref_pac_bound_2_prime(A, r, d, k, m, delta):
    e_s, d_s = greater(unit(r) - lesser(d, A.num(0.5)) / 2, 0), greater(lesser(d, A.num(0.5)), 0)
    cap = lesser(inv_up(A, e_s, (2 * k + A.log(2 * xi(A, m) / delta)) / m), A.num(0.5))
    return trinomial_sup(A, e_s, d_s, (2 * k + A.log(2 * (xi(A, m) + m) / delta)) / m, cap)


# ------------------------------------------------------------------ PAC-Bound 2's supremum


def slice_top(e_s, d_s, eps, d, cap):
    """float64: the largest joint error of the kl-ball's slice at ``d`` (``<= cap``), from
    inside; the slice's kl is convex in ``e``, least at ``e_S (1 - d) / (1 - d_S)``."""
    edge = (1 - d) / 2 * (1 - 1e-15)
    start = lesser(e_s * (1 - d) / np.maximum(1 - d_s, 1e-300), edge)
    lo, _ = bisect(FAST, lambda e: trinomial_kl(FAST, e_s, d_s, e, d) > eps, start, edge, 64)
    top = where(trinomial_kl(FAST, e_s, d_s, edge, d) <= eps, edge, lo)
    return top if cap is None else lesser(top, cap)


def best_point(e_s, d_s, eps, cap, grid: int = 16, steps: int = 25):
    """float64: ``(e, d)`` near the C-bound's maximum over the ball (a grid of slices, then a
    golden-section search on the concave slice maximum)."""
    d_lo, d_hi = inv_low(FAST, d_s, eps), lesser(inv_up(FAST, d_s, eps), 0.5 * (1 - 1e-12))
    value = lambda d: 1 - (1 - 2 * slice_top(e_s, d_s, eps, d, cap) - d) ** 2 / (1 - 2 * d)  # noqa: E731
    t = np.linspace(0, 1, grid)[:, None]
    ds = d_lo + t * (d_hi - d_lo)
    k = np.argmax(np.stack([value(row) for row in ds]), axis=0)
    cols = np.arange(ds.shape[1])
    a, b = ds[np.maximum(k - 1, 0), cols], ds[np.minimum(k + 1, grid - 1), cols]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(steps):
        x1, x2 = b - ratio * (b - a), a + ratio * (b - a)
        right = value(x2) > value(x1)
        a, b = where(right, x1, a), where(right, b, x2)
    d = (a + b) / 2
    return slice_top(e_s, d_s, eps, d, cap), d


def trinomial_sup(A, e_s, d_s, eps, cap):
    """A value ``<=`` the sup of ``1 - (1 - 2e - d)^2 / (1 - 2d)`` over ``kl(e_S, d_S || e, d)
    <= eps``, ``2e + d < 1`` (``e <= cap``): the C-bound at a point verified in ``A`` to lie in
    the set, the float64 maximizer moved towards the centre ``(e_S, d_S)`` until it does."""
    f = [to_float(x) for x in (e_s, d_s, eps)]
    e, d = best_point(*f, None if cap is None else to_float(cap))
    value = A.num(np.full(e.shape, -np.inf))
    for t in (1.0, 0.1, 1e-3, 1e-6, 1e-9, 1e-12, 0.0):  # from the centre out
        pe, pd = A.num(f[0] + t * (e - f[0])), A.num(f[1] + t * (d - f[1]))
        inside = (trinomial_kl(A, e_s, d_s, pe, pd) <= eps) & (2 * pe + pd < 1) & (pd < 0.5)
        inside = inside & (pe >= 0) & (pd >= 0) & (True if cap is None else pe <= cap)
        here = 1 - (1 - 2 * pe - pd) ** 2 / where(inside, 1 - 2 * pd, 1)
        value = where(inside, greater(value, here), value)
    return where(2 * e_s + d_s >= 1, 1, lesser(value, 1))


# ------------------------------------------------------------------ 1. certified bounds

INTEGERS = ("m", "n", "n2")
# name -> (the draws' columns in the function's order, its exact value, +1: the function
# returns a float >= it, -1: <= it)
REFERENCES: dict[str, tuple[tuple[str, ...], Callable, int]] = {
    "kl_inv_upper": (("risk", "eps"), inv_up, 1),
    "kl_inv_lower": (("risk", "eps"), inv_low, -1),
    "mcallester": (("risk", "kl", "m", "delta"), ref_mcallester, 1),
    "seeger": (("risk", "kl", "m", "delta"), ref_seeger, 1),
    "catoni": (("risk", "kl", "m", "delta", "c"), ref_catoni, 1),
    "pac_bound_0": (("risk", "kl", "m", "delta"), ref_pac_bound_0, 1),
    "pac_bound_1": (("risk", "dis", "kl", "m", "delta"), ref_pac_bound_1, 1),
    "pac_bound_2": (("risk", "dis", "kl", "m", "delta"), ref_pac_bound_2, 1),
    "pac_bound_2_prime": (("risk", "dis", "kl", "m", "delta"), ref_pac_bound_2_prime, 1),
    "cbound_roy2016": (("mu1", "mu2", "kl", "m", "delta"), ref_cbound_roy2016, 1),
    "first_order_kl": (("risk", "kl", "n", "delta"), ref_first_order_kl, 1),
    "tnd_kl": (("tandem", "kl", "n2", "delta"), ref_tnd_kl, 1),
    "dis": (("risk", "dis", "kl", "n", "m", "delta"), ref_dis, 1),
    "cctnd": (("tandem", "risk", "kl", "n", "n2", "delta", "mu"), ref_cctnd, 1),
    "split_kl_mu_tandem": (
        ("both", "one", "neither", "kl", "n2", "delta", "mu"),
        ref_split_kl_mu_tandem,
        1,
    ),
}
# compiled for half a minute each on a 2-core CPU: the dry run checks one, in float64 (the
# precise reference; the float64 one is the same code)
SLOW_TO_COMPILE = {"pac_bound_2": None, "pac_bound_2_prime": "float64"}


def draw(rng: np.random.Generator, size: int) -> dict[str, np.ndarray]:
    """Seeded statistics in and at the edges of their domains (float64; sizes int64)."""

    def log_uniform(lo, hi):
        return np.exp(rng.uniform(np.log(lo), np.log(hi), size))

    def some(x, value, share):
        return np.where(rng.random(size) < share, value, x)

    risk = np.where(rng.random(size) < 0.5, log_uniform(1e-9, 1.0), rng.uniform(0, 0.5, size))
    risk = some(some(risk, 0.0, 0.05), 0.5, 0.02)
    m = np.floor(log_uniform(1.0, 1e9 + 1)).astype(np.int64)
    mu1 = 1 - 2 * risk
    both, one, neither = rng.dirichlet(np.ones(3), size).T
    return {
        "risk": risk,
        "eps": some(log_uniform(1e-12, 10.0), 0.0, 0.02),
        "kl": some(log_uniform(1e-6, 1e3), 0.0, 0.1),
        "m": m,
        "n": m,
        "n2": np.maximum(1, np.floor(m * rng.uniform(0.3, 1.0, size))).astype(np.int64),
        "delta": some(log_uniform(1e-6, 1.0), 1.0, 0.02),
        "c": log_uniform(1e-3, 1e2),
        "dis": rng.uniform(0, 1, size) * np.minimum(0.5, 2 * risk),
        "tandem": risk * rng.uniform(0, 1, size),
        "mu1": mu1,
        "mu2": mu1**2 + (1 - mu1**2) * rng.uniform(0, 1, size),
        "mu": rng.uniform(-0.5, 0.45, size),
        "both": both,
        "one": one,
        "neither": neither,
    }


@contextlib.contextmanager
def x64(enabled: bool):
    previous = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", previous)


def as_seen(draws: dict, columns, dtype) -> list[np.ndarray]:
    """The inputs as the device sees them: floats in ``dtype``, sizes as integers."""
    ints = np.int64 if dtype == np.float64 else np.int32
    return [draws[c].astype(ints if c in INTEGERS else dtype) for c in columns]


def on_device(name: str, inputs: list[np.ndarray]) -> np.ndarray:
    fn = getattr(bounds, name, None) or getattr(kl, name)
    return np.asarray(jax.jit(fn)(*[jnp.asarray(x) for x in inputs]), np.float64)


def gaps(A: Arithmetic, reference, inputs, values, sign, index) -> tuple[np.ndarray, np.ndarray]:
    """``sign (value - exact)`` per draw of ``index``, in ``A``, rounded to float64."""
    exact = reference(A, *[A.num(x[index].astype(np.float64) if x.dtype.kind == "f"
                                 else x[index]) for x in inputs])  # fmt: skip
    gap = sign * (A.num(values[index]) - exact)
    return to_float(gap), np.abs(to_float(exact))


def check_bound(name: str, draws: dict, dtype, recheck: int) -> dict:
    """One bound in one dtype: the float64 reference first (float32), the precise one for every
    draw it leaves undecided (and for every float64 draw), at most ``recheck`` of them."""
    columns, reference, sign = REFERENCES[name]
    inputs = as_seen(draws, columns, dtype)
    with x64(dtype == np.float64):
        values = on_device(name, inputs)
    size = values.size
    trivial = values >= 1 if sign > 0 else values <= 0  # every exact value lies in [0, 1]
    gap, scale = np.full(size, np.inf), np.ones(size)
    undecided = ~trivial
    if dtype == np.float32:
        everything = np.arange(size)
        gap, scale = gaps(FAST, reference, inputs, values, sign, everything)
        undecided &= ~(gap > FAST.margin * scale)
    index = np.flatnonzero(undecided)[:recheck]
    if index.size:
        gap[index], scale[index] = gaps(precise_arithmetic(), reference, inputs, values, sign,
                                        index)  # fmt: skip
        undecided[index] = False
    decided = ~undecided & ~trivial
    violations = decided & (gap < 0)
    relative = gap / np.maximum(scale, 1e-300)
    return {
        "bound": name,
        "dtype": np.dtype(dtype).name,
        "draws": size,
        "precise": int(index.size),
        "violations": int(violations.sum()),
        "undecided": int(undecided.sum()),
        "max_shortfall_rel": float(max(0.0, -relative[decided].min(initial=0.0))),
        "min_excess_rel": float(relative[decided & ~violations].min(initial=np.inf)),
    }


def check_bounds(sizes: dict, dry_run: bool) -> dict:
    rng = np.random.default_rng(sizes["seed"])
    draws = {np.float32: draw(rng, sizes["draws32"]), np.float64: draw(rng, sizes["draws64"])}
    rows, skipped = [], {}
    deadline = time.perf_counter() + sizes["bounds_s"]
    names = [*kl.__all__, *bounds.__all__]
    for name in sorted(names, key=lambda n: n in SLOW_TO_COMPILE):  # the slow ones last
        if name not in REFERENCES:
            if callable(getattr(bounds, name, None)):
                skipped[name] = "no reference in this script"
            continue
        if time.perf_counter() > deadline:
            skipped[name] = f"not run: past the section's {sizes['bounds_s']} s"
            continue
        for dtype, sample in draws.items():
            if dry_run and SLOW_TO_COMPILE.get(name, np.dtype(dtype).name) != np.dtype(dtype).name:
                continue
            start = time.perf_counter()
            row = check_bound(name, sample, dtype, sizes["recheck"])
            rows.append({**row, "seconds": time.perf_counter() - start})
    missing = sorted(set(REFERENCES) - {r["bound"] for r in rows})
    return {"reference": precise_arithmetic().name, "rows": rows, "not_checked": skipped,
            "missing_from_pacbound": missing}  # fmt: skip


# ------------------------------------------------------------------ 2. jit == vmap

# the dry run checks the first of these that is registered (MinCq compiles in the timings;
# each learner's jit and vmap take 10-50 s to compile on a 2-core CPU)
DRY_LEARNERS = ("cbboost_stumps", "cbboost")


def stump_problem(rows: int | None, thresholds: int):
    """Breast-cancer stumps: ``(X, y, H)`` (float32) and two fold masks."""
    X, y = datasets.load("breast_cancer", return_X_y=True)
    X, y = np.asarray(X[:rows], np.float32), np.asarray(y[:rows], np.float32)
    H = np.asarray(voters.votes(voters.fit_stumps(X, n_thresholds=thresholds), X))
    masks = np.stack([np.arange(len(y)) % 3 != k for k in range(2)]).astype(np.float32)
    return X, y, H, masks


def takes_search(name: str) -> bool:
    """Whether the case runs its learner over a stump search instead of ``H``."""
    return name.endswith("_stumps")


def check_learner(name: str, problem) -> dict:
    X, y, H, masks = problem
    fn = solvers.LEARNERS[name.removesuffix("_stumps")]
    hyper, options = EXAMPLES[name.removesuffix("_stumps")]
    options = {k: (H[:10] if v == "unlabeled" else v) for k, v in options.items()}
    first = voters.stump_search(X) if takes_search(name) else H

    def run(weight):
        r = fn(first, y, *hyper, sample_weight=weight, **options)
        return r.q, r.objective

    (q, objective), (qs, objectives) = jax.jit(run)(masks[0]), jax.vmap(run)(masks)
    return {
        "learner": name,
        "max_abs_dq": float(jnp.max(jnp.abs(q - qs[0]))),
        "abs_dobjective": float(jnp.abs(objective - objectives[0])),
    }


def check_learners(sizes: dict, dry_run: bool) -> dict:
    problem = stump_problem(sizes["learner_rows"], sizes["thresholds"])
    names = [*solvers.LEARNERS, *(f"{n}_stumps" for n in GREEDY if n in solvers.LEARNERS)]
    if dry_run:
        names = [DRY_LEARNERS[0]]
    rows, errors, skipped = [], {}, {}
    deadline = time.perf_counter() + sizes["learners_s"]
    for name in names:
        if name.removesuffix("_stumps") not in EXAMPLES:
            errors[name] = "no example hyperparameters in this script"
            continue
        if time.perf_counter() > deadline:
            skipped[name] = f"not run: past the section's {sizes['learners_s']} s"
            continue
        start = time.perf_counter()
        try:
            row = check_learner(name, problem)
        except Exception as error:  # one learner's failure is reported, the others still run
            errors[name] = f"{type(error).__name__}: {error}"
            continue
        rows.append({**row, "seconds": time.perf_counter() - start})
    shape = list(problem[2].shape)
    return {"problem": f"breast_cancer stumps {shape}, 2 fold masks", "rows": rows,
            "errors": errors, "not_checked": skipped}  # fmt: skip


# ------------------------------------------------------------------ 3. timings


def mincq_grid(sizes):
    _, y, H, _ = stump_problem(sizes["learner_rows"], sizes["thresholds"])
    mus = np.linspace(0.05, 0.95, 15) * float(solvers.max_realizable_mu(H, y))
    return (lambda H, y: sweep.grid(solvers.mincq, H, y, mu=mus).result.q), (H, y)


def mincq_fit(sizes):
    _, y, H, _ = stump_problem(sizes["learner_rows"], sizes["thresholds"])
    mu = 0.3 * float(solvers.max_realizable_mu(H, y))
    return jax.jit(lambda H, y: solvers.mincq(H, y, mu).q), (H, y)


def histogram_rounds(sizes):
    """CB-Boost over a histogram search of a synthetic ``(m, d)`` problem (time per call of
    ``sizes['rounds']`` rounds)."""
    rng = np.random.default_rng(1)
    m, d = sizes["hist_m"], sizes["hist_d"]
    X = rng.normal(size=(m, d)).astype(np.float32)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=m) > 0, 1.0, -1.0).astype(np.float32)
    learner, rounds = solvers.cbboost, sizes["rounds"]
    return jax.jit(lambda s, y: learner(s, y, rounds).q), (voters.histogram_search(X), y)


def second_order_batch(sizes):
    """Value and gradient (in the posteriors' logits) of TND, CCTND at its best ``mu`` and the
    first-order bound for a batch of posteriors of one ensemble's loss statistics."""
    rng = np.random.default_rng(2)
    m, n, batch = sizes["so_m"], sizes["so_voters"], sizes["so_batch"]
    errors = (rng.random((m, n)) < rng.uniform(0.1, 0.4, n)).astype(np.float32)
    stats = loss_statistics.loss_statistics(errors)

    def total(logits, stats):
        rho = jax.nn.softmax(logits)
        divergence = jnp.sum(rho * jnp.log(n * rho))
        t, g = loss_statistics.tandem_risk(stats, rho), loss_statistics.gibbs_risk(stats, rho)
        return (bounds.tnd_kl(t, divergence, m, 0.05) + first_order_kl(g, divergence, m,
                0.05) + cctnd_optimal(t, g, divergence, m, m, 0.05))  # fmt: skip

    fn = jax.jit(jax.vmap(jax.value_and_grad(total), in_axes=(0, None)))
    return fn, (rng.normal(size=(batch, n)).astype(np.float32), stats)


WORKLOADS = {
    "sweep.grid mincq, 15 mu": mincq_grid,
    "mincq, one fit": mincq_fit,
    "cbboost over histogram_search": histogram_rounds,
    "second-order bounds + grad, batch": second_order_batch,
}


def time_workloads(sizes: dict) -> dict:
    devices = [jax.devices()[0]]
    if devices[0].platform != "cpu":
        devices.append(jax.devices("cpu")[0])
    rows = []
    for name, build in WORKLOADS.items():
        seconds = []
        for device in devices:
            with jax.default_device(device):
                fn, args = build(sizes)
                args = jax.device_put(args, device)
                seconds.append(median_time(fn, *args, repeats=sizes["repeats"]))
        ratio = seconds[1] / seconds[0] if len(seconds) > 1 else None
        rows.append({"workload": name, "device_s": seconds[0], "cpu_s": seconds[-1],
                     "cpu_over_device": ratio})  # fmt: skip
    return {"device": str(devices[0]), "sizes": sizes, "rows": rows}


# ------------------------------------------------------------------ the command

# sizes, and each section's time budget (it starts no new check past it): under 8 minutes
FULL = {
    "seed": 0, "draws32": 20_000, "draws64": 200, "recheck": 500, "bounds_s": 210,
    "learner_rows": None, "thresholds": 10, "learners_s": 150,
    "hist_m": 1_000_000, "hist_d": 20, "rounds": 20,
    "so_m": 100_000, "so_voters": 100, "so_batch": 10_000, "repeats": 5,
}  # fmt: skip
DRY = {
    **FULL, "draws32": 200, "draws64": 8, "recheck": 200,
    "learner_rows": 90, "thresholds": 3,
    "hist_m": 2_000, "hist_d": 4, "rounds": 3,
    "so_m": 300, "so_voters": 8, "so_batch": 4, "repeats": 2,
}  # fmt: skip


def report(results: dict) -> None:
    for section in ("bounds", "learners", "timings"):
        rows = results[section]["rows"]
        print(f"\n{section}")
        if rows:
            print_table(list(rows[0]), [[r[k] for k in rows[0]] for r in rows])
        for name, why in {**results[section].get("errors", {}),
                          **results[section].get("not_checked", {})}.items():  # fmt: skip
            print(f"  {name}: {why}")
    print(f"\nviolations: {results['violations']}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU, tiny sizes")
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)
    sizes = DRY if args.dry_run else FULL
    start = time.perf_counter()
    results = {
        "dry_run": args.dry_run,
        "bounds": check_bounds(sizes, args.dry_run),
        "learners": check_learners(sizes, args.dry_run),
        "timings": time_workloads(sizes),
    }
    results["violations"] = sum(r["violations"] for r in results["bounds"]["rows"])
    results["seconds"] = time.perf_counter() - start
    report(results)
    name = "device_check_dry_run" if args.dry_run else "device_check"
    print(f"wrote {write_json(name, results, args.json)} ({results['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
