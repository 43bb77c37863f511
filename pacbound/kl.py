"""KL terms: divergences, the binary and trinomial kl, and the differentiable kl-inverses.

:func:`kl_divergence`, :func:`binary_kl`, :func:`trinomial_kl`, the kl-inverses
:func:`kl_inv_upper` / :func:`kl_inv_lower` (a few ulps, rounded outward, implicit-function
gradients), :func:`quasi_uniform_kl`, :func:`gaussian_mixture_kl_bound` and
:func:`dirichlet_kl`.
"""

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
