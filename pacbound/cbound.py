"""The C-bound (laviolette2011 Thm 1): from margin moments, from risk and disagreement, and
its supremum over a trinomial kl-ball (germain2015's PAC-Bound 2).
"""

from pacbound._src.cbound import (
    cbound,
    cbound_from_risk,
    cbound_trinomial_sup,
    cbound_upper,
    empirical_cbound,
    multiclass_cbound,
)

__all__ = [
    "cbound",
    "cbound_from_risk",
    "cbound_trinomial_sup",
    "cbound_upper",
    "empirical_cbound",
    "multiclass_cbound",
]
