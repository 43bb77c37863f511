"""Certificates: every registered bound of a learned vote, in float64, at the boundary."""

from pacbound._src.certify import (
    BOUNDS,
    DEFAULT_BOUNDS,
    DEFAULT_STOCHASTIC_BOUNDS,
    STOCHASTIC_BOUNDS,
    Bound,
    BoundSpec,
    Certificate,
    catoni_bound,
    certify,
    certify_margins,
    general_loss_bound,
    register_bound,
)
from pacbound._src.stochastic_votes import (
    certify_dirichlet,
)

__all__ = [
    "BOUNDS",
    "DEFAULT_BOUNDS",
    "DEFAULT_STOCHASTIC_BOUNDS",
    "STOCHASTIC_BOUNDS",
    "Bound",
    "BoundSpec",
    "Certificate",
    "catoni_bound",
    "certify",
    "certify_dirichlet",
    "certify_margins",
    "general_loss_bound",
    "register_bound",
]
