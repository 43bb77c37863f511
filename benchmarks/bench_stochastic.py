"""Dirichlet stochastic majority vote objective, value and gradient: pacbound vs PyTorch.

The objective of Zantedeschi et al. (NeurIPS 2021): Seeger's bound on the expected risk of the
stochastic majority vote with posterior ``Dir(alpha)`` and prior ``Dir(beta)``,

    kl^-1_up(mean_i I_{1/2}(right_i, wrong_i), (KL(Dir(alpha)||Dir(beta)) + ln(2 sqrt(m)/d)) / m),

``right_i`` / ``wrong_i`` the sums of the concentrations of the voters right / wrong on example
``i``, for ``m = 10^4`` examples and ``n = 1000`` voters; value and gradient in ``alpha``.

* pacbound: ``jax.jit(jax.value_and_grad(...))`` of ``pacbound._src.dirichlet.seeger_bound``,
  float64
  and float32 (``betainc``: the continued fraction in blocks of 8 steps until the value and its
  two parameter derivatives, carried in the same pass, settle over the whole batch).
* PyTorch (like for like): the same continued fraction with the same stopping rule (blocks of
  8 steps until every value moved by at most 16 ulps over a block, checked with ``.item()``
  after each block; the same cap), written with torch operations over all examples at once and
  differentiated by autograd through the loop (torch has no ``betainc`` differentiable in its
  parameters either; the authors' code calls a scalar routine per example). Reverse mode has
  no derivatives during the forward pass, so its rule watches the value only (it may stop a
  block before pacbound's). Prefactor from ``torch.lgamma``; the kl-inverse by bisection
  with its implicit derivative; float64 and float32, eager. The steps it took are in the JSON.
* SciPy: ``scipy.special.betainc`` for the value, central differences in each of the ``n``
  concentrations for the gradient, timed on ``--fd-coordinates`` and scaled to ``n``.

Values and gradients are compared with each other before timing (gradients as
``max |difference| / max |gradient|``). The pacbound and PyTorch rows are timed round-robin
(medians of ``--repeats`` rounds after one warm-up call each); compilation is timed
separately (first call minus a warm call)::

    python benchmarks/bench_stochastic.py [--examples 10000] [--voters 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from common import median_time, print_table, write_json
from scipy import special

from pacbound._src.dirichlet import seeger_bound

DELTA, PRIOR = 0.05, 1.0  # the authors' defaults: delta 0.05, prior Dir(1, ..., 1)
# pacbound._src.special.betainc's stopping rule, repeated in the PyTorch port.
BLOCK, SETTLE, MAX_STEPS = 8, 16.0, 1 << 16


def make_problem(m: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 0/1 error matrix with example difficulty and voter skill (so that some examples sit
    near a tie, where the fraction is slowest), and concentrations in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    difficulty, skill = rng.normal(-0.4, 1.0, (m, 1)), rng.normal(0.0, 0.5, (1, n))
    errors = (rng.uniform(size=(m, n)) < special.expit(difficulty - skill)).astype(np.float64)
    return errors, rng.uniform(0.5, 2.0, n)


def pacbound_objective():
    def objective(alpha, errors):
        return seeger_bound(errors, alpha, PRIOR, DELTA).bound

    return jax.jit(jax.value_and_grad(objective))


# ------------------------------------------------------------------------------------------
# PyTorch: the same algorithm with torch operations
# ------------------------------------------------------------------------------------------


def torch_functions(torch):
    """The objective in PyTorch, built lazily so the script runs without torch installed."""

    def step(k, state, a, b, c, x, y):
        num_prev, num, den_prev, den = state
        n = k + 1.0
        w = n * (b - n) * x / (a + (2 * k + 1))
        alpha = (a + k) * (a + b + k) * w * x / (a + (2 * k + 1))
        beta = n + w + (a + n) * (c + n * (1 + y)) / (a + (2 * k + 3))
        num_next, den_next = beta * num + alpha * num_prev, beta * den + alpha * den_prev
        scale = 1.0 / den_next
        return num * scale, num_next * scale, den * scale, 1.0

    taken = {}  # dtype -> steps of the last fraction

    def settled(new, old):
        """pacbound's rule: every finite element moved by <= SETTLE ulps (relative)."""
        moved = (new - old).abs() <= SETTLE * torch.finfo(new.dtype).eps * new.abs()
        return bool((moved | ~torch.isfinite(new)).all().item())

    def fraction(a, b, x, y, c):
        """Blocks of BLOCK steps until the value settles, or pacbound's cap."""
        state = (torch.zeros_like(x), torch.ones_like(x), torch.ones_like(x), a * c / (a + 1))
        total = (a + b).detach()
        largest = float(total[torch.isfinite(total)].max())
        cap = BLOCK * math.ceil(min(128 + 3 * math.sqrt(largest), MAX_STEPS) / BLOCK)
        value = state[1] / state[3]
        for start in range(0, cap, BLOCK):
            for k in range(start, start + BLOCK):
                state = step(k, state, a, b, c, x, y)
            value, previous = state[1] / state[3], value
            if settled(value.detach(), previous.detach()):
                break
        taken[str(x.dtype)] = start + BLOCK
        return value

    def betainc(a, b, x):
        """I_x(a, b) for 0 < x < 1: 0 where b = 0 (no voter wrong), 1 where a = 0."""
        inner, edge = (a > 0) & (b > 0), (a == 0).to(x.dtype)
        a, b = torch.where(inner, a, 1.0), torch.where(inner, b, 1.0)
        return torch.where(inner, regular_betainc(a, b, x), edge)

    def regular_betainc(a, b, x):
        swap = x > (a + 1) / (a + b + 2)
        a1, b1 = torch.where(swap, b, a), torch.where(swap, a, b)
        x1, y1 = torch.where(swap, 1 - x, x), torch.where(swap, x, 1 - x)
        c = 1 + a1 - (a1 + b1) * x1
        log_beta = torch.lgamma(a1) + torch.lgamma(b1) - torch.lgamma(a1 + b1)
        tail = torch.exp(a1 * torch.log(x1) + b1 * torch.log(y1) - log_beta)
        tail = tail * fraction(a1, b1, x1, y1, c)
        return torch.where(swap, 1 - tail, tail)

    def binary_kl(q, p):
        return q * torch.log(q / p) + (1 - q) * torch.log((1 - q) / (1 - p))

    class KlInverseUpper(torch.autograd.Function):
        """sup{p >= q : kl(q||p) <= eps} by bisection; implicit-function gradient."""

        @staticmethod
        def forward(ctx, q, eps):
            low, high = q.detach().clone(), torch.ones_like(q)
            for _ in range(60):
                mid = (low + high) / 2
                above = binary_kl(q, mid) > eps
                low, high = torch.where(above, low, mid), torch.where(above, mid, high)
            p = (low + high) / 2
            ctx.save_for_backward(q, p)
            return p

        @staticmethod
        def backward(ctx, grad):
            q, p = ctx.saved_tensors
            kl_p = (p - q) / (p * (1 - p))
            kl_q = torch.log(q * (1 - p)) - torch.log(p * (1 - q))
            return grad * -kl_q / kl_p, grad / kl_p

    def dirichlet_kl(alpha, beta):
        a0, b0 = alpha.sum(), beta.sum()
        norm = (
            torch.lgamma(a0) - torch.lgamma(b0) + (torch.lgamma(beta) - torch.lgamma(alpha)).sum()
        )
        return norm + ((alpha - beta) * (torch.digamma(alpha) - torch.digamma(a0))).sum()

    def value_and_grad(alpha_np, errors):
        alpha = torch.tensor(alpha_np, dtype=errors.dtype, requires_grad=True)
        m = errors.shape[0]
        wrong = errors @ alpha
        right = torch.clamp(alpha.sum() - wrong, min=0.0)  # as pacbound: one product
        risk = betainc(right, wrong, torch.full_like(wrong, 0.5)).mean()
        kl = dirichlet_kl(alpha, torch.full_like(alpha, PRIOR))
        level = (kl + math.log(2 * math.sqrt(m) / DELTA)) / m
        bound = KlInverseUpper.apply(risk, level)
        bound.backward()
        return bound.detach().numpy(), alpha.grad.numpy()

    return value_and_grad, taken


# ------------------------------------------------------------------------------------------
# SciPy: values by scipy.special.betainc, gradients by central differences
# ------------------------------------------------------------------------------------------


def scipy_bound(alpha: np.ndarray, errors: np.ndarray) -> float:
    from tests.reference.bounds_numpy import kl_inv_upper

    wrong, right = errors @ alpha, (1 - errors) @ alpha
    risk = float(np.mean(special.betainc(right, wrong, 0.5)))
    a0, n = alpha.sum(), len(alpha)
    kl = (
        special.gammaln(a0)
        - special.gammaln(n * PRIOR)
        + np.sum(special.gammaln(PRIOR) - special.gammaln(alpha))
        + np.sum((alpha - PRIOR) * (special.digamma(alpha) - special.digamma(a0)))
    )
    m = len(errors)
    return kl_inv_upper(risk, (kl + math.log(2 * math.sqrt(m) / DELTA)) / m)


def scipy_gradient(alpha, errors, coordinates, step=1e-6):
    eye = np.eye(len(alpha))
    return np.array(
        [
            (
                scipy_bound(alpha + step * eye[j], errors)
                - scipy_bound(alpha - step * eye[j], errors)
            )
            / (2 * step)
            for j in coordinates
        ]
    )


def interleaved_medians(calls: dict, repeats: int) -> dict:
    """Median seconds of each ``name -> (fn, args)``, timed round-robin after one warm-up each
    (the machines are shared: load drifts, and interleaving spreads it over every method)."""
    for fn, args in calls.values():
        jax.block_until_ready(fn(*args))
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, (fn, args) in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def compile_seconds(fn, *args) -> float:
    """First call (trace + compile + run) minus a warm call."""
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return first - (time.perf_counter() - start)


def pacbound_differences(results, alpha, errors, coordinates) -> tuple[dict, float]:
    """pacbound's float64 against SciPy (value, central differences) and float32 against
    float64; gradients as ``max |difference| / max |gradient|`` (the returned scale)."""
    value64, grad64 = results["float64"]
    fd = scipy_gradient(alpha, errors, coordinates)
    scale = float(np.max(np.abs(grad64)))
    return {
        "value_float64_vs_scipy": abs(float(value64) - scipy_bound(alpha, errors)),
        "grad_float64_vs_scipy_fd": float(np.max(np.abs(grad64[coordinates] - fd))) / scale,
        "value_float32_vs_float64": abs(float(results["float32"][0]) - float(value64)),
        "grad_float32_vs_float64": float(np.max(np.abs(results["float32"][1] - grad64))) / scale,
    }, scale


def torch_calls(alpha, errors, reference, scale, differences, steps) -> dict:
    """``name -> (fn, args)`` of the PyTorch objective in both dtypes (empty without torch),
    each first checked against pacbound's float64 ``reference = (value, gradient)``; the
    fraction's steps go to ``steps``."""
    try:
        import torch
    except ImportError:
        return {}
    (value_and_grad, taken), calls = torch_functions(torch), {}
    for dt in ("float64", "float32"):
        errors_t = torch.tensor(errors, dtype=getattr(torch, dt))
        value, grad = value_and_grad(alpha, errors_t)
        steps[f"torch {dt}"] = taken[str(errors_t.dtype)]
        differences[f"torch_{dt}_value_vs_pacbound_float64"] = abs(float(value - reference[0]))
        gap = float(np.max(np.abs(grad - reference[1]))) / scale
        differences[f"torch_{dt}_grad_vs_pacbound_float64"] = gap
        calls[f"torch {torch.__version__} {dt} (eager, autograd)"] = (
            value_and_grad,
            (alpha, errors_t),
        )
    return calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--voters", type=int, default=1_000)
    parser.add_argument("--fd-coordinates", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", default=None, help="output path (default results/)")
    args = parser.parse_args(argv)

    jax.config.update("jax_enable_x64", True)
    errors, alpha = make_problem(args.examples, args.voters)
    ours, dtypes = pacbound_objective(), ("float64", "float32")
    inputs = {dt: (jnp.asarray(alpha, dt), jnp.asarray(errors, dt)) for dt in dtypes}
    compiled = {f"pacbound {dt} (jit)": compile_seconds(ours, *inputs[dt]) for dt in dtypes}
    results = {dt: [np.asarray(t, np.float64) for t in ours(*inputs[dt])] for dt in dtypes}
    coordinates = np.arange(args.fd_coordinates)
    differences, scale = pacbound_differences(results, alpha, errors, coordinates)

    calls = {f"pacbound {dt} (jit)": (ours, inputs[dt]) for dt in dtypes}
    steps: dict[str, int] = {}
    calls |= torch_calls(alpha, errors, results["float64"], scale, differences, steps)
    seconds = interleaved_medians(calls, args.repeats)
    rows = [[name, seconds[name], compiled.get(name, 0.0)] for name in calls]
    fd_seconds = median_time(scipy_gradient, alpha, errors, coordinates, repeats=1, warmup=False)
    scaled = fd_seconds * args.voters / len(coordinates)
    rows.append(["scipy betainc + central differences (scaled)", scaled, 0.0])

    table = [[name, s, s / rows[0][1], c] for name, s, c in rows]
    print(
        f"Seeger bound on a Dirichlet stochastic majority vote, value + gradient: "
        f"m={args.examples:,} examples, n={args.voters:,} voters"
    )
    print_table(["method", "seconds", "x pacbound float64", "compile s"], table)
    print("differences:", {k: f"{v:.2e}" for k, v in differences.items()})
    print("PyTorch's fraction steps:", steps)
    payload = {
        "examples": args.examples,
        "voters": args.voters,
        "delta": DELTA,
        "prior": PRIOR,
        "load_average_1m": os.getloadavg()[0],
        "seconds": {r[0]: r[1] for r in rows},
        "compile_seconds": compiled,
        "ratio_to_pacbound_float64": {r[0]: r[2] for r in table},
        "differences": differences,
        "torch_fraction_steps": steps,
    }
    print(f"wrote {write_json('bench_stochastic', payload, args.json)}")


if __name__ == "__main__":
    main()
