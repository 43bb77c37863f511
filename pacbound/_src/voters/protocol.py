"""The ``Voters`` protocol: what a learner needs of a voter family it searches, matrix-free.

A learner takes ``voters``: a vote matrix ``H`` ``(m, n)`` (any array), or any object with
these four methods. The candidates sit in a 2-D layout ``(rows, cols)`` of which
``candidate_mask()`` says which positions are voters; candidate ``b`` is the row-major flat
index. Every candidate is offered with its complement ``-h_b`` (the learners weigh the
self-complemented family). The exact stump search (:func:`pacbound.voters.stump_search`) and
the histogram search (:func:`pacbound.voters.histogram_search`) implement it; so can a user's
own family (trees, kernels, features): docs/protocol.md has a worked example.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from pacbound._src.validation import float_dtype

__all__ = ["Voters", "family_sample", "is_voters"]


@runtime_checkable
class Voters(Protocol):
    """A voter family a learner searches without materializing its votes.

    The methods are traced inside the learners' jitted programs (they must be pure JAX; the
    object is a pytree argument, e.g. a ``NamedTuple`` of arrays). Votes lie in ``[-1, 1]``;
    CB-Boost's ``nu(h) = sum_i w_i h(x_i)^2`` takes ``sum_i w_i`` (``±1`` votes) unless the
    family defines ``candidate_squares(w)`` ``-> (rows, cols)``.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> isinstance(voters.stump_search(jnp.arange(4.0).reshape(4, 1)), Voters)
      True
    """

    def candidate_edges(self, a: jax.Array) -> jax.Array:
        """``(rows, cols)`` edges ``sum_i a_i h_b(x_i)`` of every candidate on the training
        sample, for example weights ``a`` ``(m,)`` (any value where the mask is False)."""
        ...

    def candidate_mask(self) -> jax.Array:
        """``(rows, cols)`` bool: which positions are candidates."""
        ...

    def candidate_votes(self, b: jax.Array, dtype: Any) -> jax.Array:
        """``(m,)`` votes of candidate ``b`` (a traced int32 flat index) on the training
        sample, in ``dtype``."""
        ...

    def candidate_voters(self, b: jax.Array) -> Any:
        """The candidates ``b`` (an int array) as voters on new points: an object (a pytree)
        whose ``votes(X, dtype=...)`` gives their ``(m', len(b))`` votes on ``X``."""
        ...


def is_voters(voters: Any) -> bool:
    """Whether ``voters`` implements :class:`Voters` (else it is taken as a vote matrix).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> X = jnp.arange(6.0).reshape(6, 1)
      >>> is_voters(voters.stump_search(X)), is_voters(voters.votes(voters.fit_stumps(X), X))
      (True, False)
    """
    return isinstance(voters, Voters)


def family_sample(voters: Any, *others: ArrayLike) -> tuple[int, Any]:
    """``(m, dtype)`` of a :class:`Voters` family: the number of training examples (the length
    of a candidate's votes, from the methods' shapes alone) and the computation dtype (float64
    when one of the family's arrays or of ``others`` is, float32 otherwise).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> m, dtype = family_sample(voters.stump_search(jnp.arange(6.0).reshape(6, 1)))
      >>> m, str(dtype)
      (6, 'float32')
    """
    leaves, treedef = jax.tree.flatten(voters)
    dtype = jnp.dtype(float_dtype(*leaves, *others))
    shapes = tuple(jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x)) for x in leaves)
    return _examples(treedef, shapes, dtype), dtype


@functools.lru_cache(maxsize=64)
def _examples(treedef, shapes: tuple, dtype) -> int:
    """The examples a family of these shapes was built on (traced once per type and shapes)."""
    family = jax.tree.unflatten(treedef, shapes)
    return jax.eval_shape(lambda f: f.candidate_votes(jnp.int32(0), dtype), family).shape[0]
