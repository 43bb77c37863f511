"""KL terms: divergences, the binary and trinomial kl, and the differentiable kl-inverses."""

from pacbound._src.dirichlet import (
    dirichlet_kl,
)
from pacbound._src.kl import (
    binary_kl,
    gaussian_mixture_kl_bound,
    kl_divergence,
    kl_inv_lower,
    kl_inv_upper,
    quasi_uniform_kl,
    trinomial_kl,
)

__all__ = [
    "binary_kl",
    "dirichlet_kl",
    "gaussian_mixture_kl_bound",
    "kl_divergence",
    "kl_inv_lower",
    "kl_inv_upper",
    "quasi_uniform_kl",
    "trinomial_kl",
]
