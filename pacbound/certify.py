"""Certificates: every registered bound of a learned vote, in float64, at the Python boundary.

:func:`certify` evaluates the bound registry (:data:`BOUNDS`; a new bound is one
:func:`register_bound` call, :meth:`Bound.catoni` and :meth:`Bound.general_loss` make the
parametrized ones) on a :class:`~pacbound.solvers.LearnerResult` or a posterior, against the
uniform prior over the learner's self-complemented voters (``result.prior_size``);
:func:`certify_margins` from margins, :func:`certify_dirichlet` for Dirichlet stochastic votes
(:data:`STOCHASTIC_BOUNDS`). A :class:`Certificate` states what it assumes.
"""

from pacbound._src.certify import (
    BOUNDS,
    DEFAULT_BOUNDS,
    DEFAULT_STOCHASTIC_BOUNDS,
    STOCHASTIC_BOUNDS,
    Bound,
    BoundSpec,
    Certificate,
    certify,
    certify_margins,
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
    "certify",
    "certify_dirichlet",
    "certify_margins",
    "register_bound",
]
