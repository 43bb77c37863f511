"""pacbound: weighted majority votes learned by minimizing PAC-Bayesian bounds, in JAX."""

from pacbound import bounds, cbound, kl, margins

__all__ = ["bounds", "cbound", "kl", "margins"]
__version__ = "0.1.0"
