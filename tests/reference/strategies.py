"""Hypothesis strategies shared by the property tests of the certified bounds.

Hypothesis draws one seed per example and NumPy's generator draws every element of every
array from it, independently: an example of ``n`` inputs holds ``n`` distinct inputs.
(Hypothesis's own ``arrays`` without ``fill=`` fills most of an array with one repeated value,
and its first example is every element at its minimum.) A few elements of each array
(``EDGE_SHARE``) sit at an endpoint of their range, where the bounds clip and the kl-inverses
meet 0 or 1. Sample sizes are log-uniform integers: every order of magnitude as likely.
"""

import numpy as np
from hypothesis import strategies as st

EDGE_SHARE = 0.02  # of the elements of each array, set to one of its two endpoints


def seeds():
    """The one value hypothesis draws per example (shown in a failure's report)."""
    return st.integers(0, 2**63 - 1)


class Draws:
    """``n`` independent draws per call, from NumPy's generator seeded with ``seed``."""

    def __init__(self, seed: int, n: int):
        self.rng = np.random.default_rng(seed)
        self.n = n

    def floats(self, lo: float, hi: float, log: bool = False) -> np.ndarray:
        """Uniform in ``[lo, hi]`` (log-uniform when ``log``), a few at ``lo`` or ``hi``."""
        if log:
            x = np.exp(self.rng.uniform(np.log(lo), np.log(hi), self.n))
        else:
            x = self.rng.uniform(lo, hi, self.n)
        edge = self.rng.random(self.n) < EDGE_SHARE
        x[edge] = self.rng.choice([lo, hi], int(edge.sum()))
        return np.clip(x, lo, hi)

    def sizes(self, lo: int = 1, hi: int = 10**9) -> np.ndarray:
        """Log-uniform integers in ``[lo, hi]``: ``P(k)`` proportional to ``ln((k + 1) / k)``."""
        x = np.exp(self.rng.uniform(np.log(lo), np.log(hi + 1.0), self.n))
        return np.clip(np.floor(x), lo, hi).astype(np.int64)


def log_uniform_integers(lo: int, hi: int):
    """One log-uniform integer in ``[lo, hi]`` per example (hypothesis also tries the ends)."""
    return st.floats(np.log(lo), np.log(hi + 1.0)).map(
        lambda x: int(min(hi, max(lo, np.floor(np.exp(x)))))
    )
