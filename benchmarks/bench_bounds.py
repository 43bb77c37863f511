"""Seeger's bound, value and gradient, on 10^6 (risk, KL) pairs: pacbound vs SciPy and NumPy.

* pacbound: ``jax.vmap(jax.value_and_grad(seeger, (0, 1)))`` jitted, float64 and float32;
  the certified kl-inverse (Newton steps in the logit and in ``p - q``, one verified outward
  step) plus its implicit-function derivative.
* SciPy: a Python loop of ``scipy.optimize.brentq`` per pair (xtol 1e-12), gradient from the
  same implicit-function formula; timed on ``--loop-pairs`` pairs and scaled per pair.
* NumPy: a vectorized bisection (50 halvings, ~1e-15 on [q, 1]) over all pairs, same gradient.

The three results are checked against each other before timing::

    python benchmarks/bench_bounds.py [--pairs 1000000] [--loop-pairs 20000] [--json PATH]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from scipy.optimize import brentq
from scipy.special import xlogy

from pacbound._src.bounds.first_order import seeger

M, DELTA = 1000, 0.05


def numpy_kl(q, p):
    return xlogy(q, q) - xlogy(q, p) + xlogy(1 - q, 1 - q) - xlogy(1 - q, 1 - p)


def implicit_gradient(q, p, eps_level):
    """d seeger / d risk and d seeger / d kl at the root ``p`` (eps = level, d eps/d kl = 1/m)."""
    kl_p = (p - q) / (p * (1 - p))
    kl_q = np.log(q * (1 - p)) - np.log(p * (1 - q))
    return -kl_q / kl_p, 1.0 / (M * kl_p)


def seeger_level(kl):
    return (kl + np.log(2 * np.sqrt(M) / DELTA)) / M


def scipy_loop(risks, kls):
    values = np.empty_like(risks)
    for i, (q, kl) in enumerate(zip(risks, kls)):
        eps = seeger_level(kl)
        hi = 1 - 1e-15
        values[i] = (
            hi
            if numpy_kl(q, hi) <= eps
            else brentq(lambda p, q=q, eps=eps: numpy_kl(q, p) - eps, q, hi, xtol=1e-12)
        )
    return values, implicit_gradient(risks, values, seeger_level(kls))


def numpy_bisection(risks, kls, halvings=50):
    eps = seeger_level(kls)
    lo, hi = risks.copy(), np.ones_like(risks)
    for _ in range(halvings):
        mid = (lo + hi) / 2
        above = numpy_kl(risks, mid) > eps
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    values = (lo + hi) / 2
    return values, implicit_gradient(risks, values, eps)


def pacbound_value_and_grad():
    f = jax.value_and_grad(lambda r, kl: seeger(r, kl, M, DELTA), argnums=(0, 1))
    return jax.jit(jax.vmap(f))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--loop-pairs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    risks = rng.uniform(0.01, 0.49, args.pairs)
    kls = rng.exponential(5.0, args.pairs)
    ours = pacbound_value_and_grad()

    (value, (g_risk, g_kl)) = ours(jnp.asarray(risks), jnp.asarray(kls))
    n = args.loop_pairs
    ref_value, (ref_g_risk, ref_g_kl) = scipy_loop(risks[:n], kls[:n])
    bis_value, _ = numpy_bisection(risks, kls)
    errors = {
        "value_vs_brentq": float(np.max(np.abs(value[:n] - ref_value))),
        "grad_risk_vs_brentq_rel": float(np.max(np.abs(g_risk[:n] / ref_g_risk - 1))),
        "grad_kl_vs_brentq_rel": float(np.max(np.abs(g_kl[:n] / ref_g_kl - 1))),
        "value_vs_bisection": float(np.max(np.abs(value - bis_value))),
    }

    t64 = median_time(ours, jnp.asarray(risks), jnp.asarray(kls), repeats=args.repeats)
    r32, k32 = jnp.asarray(risks, jnp.float32), jnp.asarray(kls, jnp.float32)
    t32 = median_time(ours, r32, k32, repeats=args.repeats)
    t_loop = median_time(scipy_loop, risks[:n], kls[:n], repeats=1, warmup=False)
    t_loop *= args.pairs / n
    t_bis = median_time(numpy_bisection, risks, kls, repeats=max(1, args.repeats // 2))

    rows = [
        ["pacbound float64 (jit+vmap)", t64, 1.0],
        ["pacbound float32 (jit+vmap)", t32, t32 / t64],
        ["scipy brentq loop (scaled)", t_loop, t_loop / t64],
        ["numpy vectorized bisection", t_bis, t_bis / t64],
    ]
    print(f"Seeger bound value + gradient, {args.pairs:,} pairs, m={M}, delta={DELTA}")
    print_table(["method", "seconds", "x pacbound float64"], rows)
    print("max differences:", {k: f"{v:.2e}" for k, v in errors.items()})
    out = write_json(
        "bench_bounds",
        {
            "pairs": args.pairs,
            "loop_pairs": n,
            "seconds": {r[0]: r[1] for r in rows},
            "speedup_vs_brentq_loop": t_loop / t64,
            "speedup_vs_numpy_bisection": t_bis / t64,
            "max_differences": errors,
        },
        args.json,
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
