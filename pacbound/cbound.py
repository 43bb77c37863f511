"""The C-bound: from margin moments, from risk and disagreement, and its supremum."""

from pacbound._src.cbound import (
    cbound,
    cbound_from_risk,
    cbound_trinomial_sup,
    cbound_upper,
    empirical_cbound,
)

__all__ = [
    "cbound",
    "cbound_from_risk",
    "cbound_trinomial_sup",
    "cbound_upper",
    "empirical_cbound",
]
