"""The ``pacbound`` command (console script and ``python -m pacbound``).

``pacbound demo`` loads a bundled dataset, splits it as roy2016 §7 does (half for training,
at most 500), builds the self-complemented decision stumps of the papers (10 per feature)
and, for a few majority votes, prints the empirical statistics, the test risk and every
certified bound of :mod:`pacbound.bounds` at the chosen ``delta``.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax.numpy as jnp

from pacbound import bounds, datasets, voters
from pacbound.cbound import cbound
from pacbound.kl import kl_divergence
from pacbound.margins import disagreement, gibbs_risk, majority_vote_risk, margin_moments


class UsageError(Exception):
    """Bad arguments or input: reported on one line, exit status 2."""


def _demo_posteriors(H: jnp.ndarray, y: jnp.ndarray) -> dict[str, jnp.ndarray]:
    """Majority votes over the columns of ``H`` to certify (no learning involved)."""
    n = H.shape[1]
    edges = (y @ H) / H.shape[0]  # first margin moment of each voter
    positive = jnp.maximum(edges, 0.0)
    best = jnp.zeros(n).at[jnp.argmax(edges)].set(1.0)
    return {
        "best single stump": best,
        "edge-weighted vote": positive / positive.sum(),
        "edge^4-weighted vote": positive**4 / jnp.sum(positive**4),
    }


def _certify(H, y, q, H_test, y_test, delta: float) -> dict[str, float]:
    m, n = H.shape
    kl = kl_divergence(q, jnp.full(n, 1.0 / n))
    mu1, mu2 = margin_moments(H, y, q)
    r, d = gibbs_risk(H, y, q), disagreement(H, q)
    row = {
        "test risk": majority_vote_risk(H_test, y_test, q),
        "Gibbs risk": r,
        "C-bound (emp.)": cbound(mu1, mu2),
        "KL": kl,
        "2 x Seeger": 2.0 * bounds.seeger(r, kl, m, delta),
        "PAC-Bound 0": bounds.pac_bound_0(r, kl, m, delta),
        "PAC-Bound 1": bounds.pac_bound_1(r, d, kl, m, delta),
        "PAC-Bound 2": bounds.pac_bound_2(r, d, kl, m, delta),
        "roy2016 Thm 2": bounds.cbound_roy2016(mu1, mu2, kl, m, delta),
    }
    return {k: float(v) for k, v in row.items()}


def demo(args: argparse.Namespace) -> None:
    if not 0.0 < args.delta <= 1.0:
        raise UsageError(f"--delta must be in (0, 1], got {args.delta}")
    start = time.perf_counter()
    data = datasets.load(args.data)
    split = datasets.roy2016_split(data.X, data.y, seed=args.seed)
    stumps = voters.fit_stumps(split.X_train, n_thresholds=args.stumps)
    H = voters.self_complemented(voters.votes(stumps, split.X_train))
    H_test = voters.self_complemented(voters.votes(stumps, split.X_test))
    y, y_test = jnp.asarray(split.y_train, H.dtype), jnp.asarray(split.y_test, H.dtype)
    print(
        f"{data.name}: {len(y)} training / {len(y_test)} test examples, "
        f"{H.shape[1]} self-complemented stumps; bounds at delta = {args.delta}"
    )
    rows = {
        name: _certify(H, y, q, H_test, y_test, args.delta)
        for name, q in _demo_posteriors(H, y).items()
    }
    columns = list(next(iter(rows.values())))
    width = max(map(len, rows))
    print(" " * width + "".join(f"{c:>16}" for c in columns))
    for name, row in rows.items():
        print(name.ljust(width) + "".join(f"{row[c]:>16.4f}" for c in columns))
    print(f"done in {time.perf_counter() - start:.1f} s")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pacbound", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("demo", help="certify majority votes on a bundled dataset")
    p.add_argument("--data", default="breast_cancer", help="dataset name or file path")
    p.add_argument("--delta", type=float, default=0.05, help="confidence parameter in (0, 1]")
    p.add_argument("--stumps", type=int, default=10, help="thresholds per feature")
    p.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    p.set_defaults(run=demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.exit_on_error = False
    try:
        args = parser.parse_args(argv)
        args.run(args)
    except (UsageError, ValueError, ImportError, OSError, argparse.ArgumentError) as err:
        print(f"pacbound: error: {err}", file=sys.stderr)
        return 2
    return 0
