"""The voters a greedy learner chooses from, each with its complement, and how a choice is named.

Boosting rounds (AdaBoost, VEB-Boost, CB-Boost) and column generation's pricing (CqBoost,
LPBoost, CG-Boost, MDBoost) all search a set of *base* voters ``h_b`` and their complements
``-h_b`` for the largest (signed) edge ``sum_i a_i s h_b(x_i)``. :class:`Candidates` gives them
one interface over

* the columns of a materialized ``H`` (:func:`dense_candidates`; base layout ``(1, n)``; the
  product ``H^T a`` is one read of ``H``, see :mod:`pacbound._src.learning.edges`), and
* every stump of a search (:func:`search_candidates`; base layout ``(d, P)``), exact
  (:class:`pacbound._src.voters.StumpSearch`) or on histograms
  (:class:`pacbound._src.voters.HistogramSearch`), never materialized.

**The one codec.** Base voter ``b`` is the row-major position in the layout; in the
self-complemented set ``[H, -H]`` (or ``[S, -S]``) ``+h_b`` has index ``b`` and ``-h_b`` index
``size + b`` (:func:`complemented_index`, :func:`split_index`). Dense results scatter their
choices onto the ``2n`` columns (:func:`posterior_over_columns`); matrix-free results list the
chosen stumps as slots and put each slot's mass on its sign's side (:func:`stump_posterior`),
merging a stump chosen more than once so that every voter appears once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src.learning.edges import column_edges, prepare_votes, square_edges, votes_column
from pacbound._src.protocol import complemented_posterior
from pacbound._src.validation import check_data, check_labels, check_sample_weight, float_dtype
from pacbound._src.voters.protocol import family_sample, is_voters

__all__ = [
    "Candidates",
    "candidates_of",
    "checked_data",
    "complemented_index",
    "dense_candidates",
    "posterior_over_columns",
    "search_candidates",
    "split_index",
    "stump_posterior",
]


class Candidates(NamedTuple):
    """Base voters in a 2-D layout, each offered with its complement.

    Attributes:
      edges: ``a -> (rows, cols)``, ``sum_i a_i h_b(x_i)`` of every base voter (any value where
        ``valid`` is False); ``-h_b`` has the opposite edge.
      valid: ``(rows, cols)`` bool, which positions are voters.
      votes: ``b -> (m,)`` the votes of base voter ``b`` (flat index) on the training examples.
      squares: ``w -> (rows, cols)``, ``sum_i w_i h_b(x_i)^2`` (CB-Boost's ``nu(h)``).
      search: the stump search behind the candidates (``None`` for a dense ``H``).
    """

    edges: Callable[[jax.Array], jax.Array]
    valid: jax.Array
    votes: Callable[[jax.Array], jax.Array]
    squares: Callable[[jax.Array], jax.Array]
    search: Any = None

    @property
    def size(self) -> int:
        """The number of base positions ``rows * cols`` (static)."""
        return self.valid.size


def dense_candidates(H: jax.Array, dtype) -> Candidates:
    """The ``n`` columns of ``H`` (layout ``(1, n)``), read once per edge computation.

    ``H`` is prepared once (:func:`pacbound._src.learning.edges.prepare_votes`: integer votes are
    stored transposed as int8 and multiplied exactly); the computation runs in ``dtype``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> c = dense_candidates(H, jnp.float32)
      >>> c.edges(jnp.array([1., 1., -1., -1.])).tolist(), c.votes(jnp.int32(2)).tolist()
      ([[2.0, -2.0, -2.0]], [-1.0, 1.0, 1.0, 1.0])
    """
    prepared = prepare_votes(H, dtype)
    n = H.shape[1]

    def votes(b):
        return votes_column(prepared, b, dtype)

    return Candidates(
        lambda a: column_edges(prepared, a)[None],
        jnp.ones((1, n), bool),
        votes,
        lambda w: square_edges(prepared, w)[None],
    )


def search_candidates(search: Any, dtype) -> Candidates:
    """Every stump of a search (exact or histogram), in the search's ``(d, P)`` layout.

    ``search`` provides ``candidate_edges(a)``, ``candidate_mask()``,
    ``candidate_votes(b, dtype)`` and ``candidate_voters(b)``; stumps vote ``±1``, so
    ``sum_i w_i h(x_i)^2 = sum_i w_i``.

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> c = search_candidates(voters.stump_search(jnp.arange(6.0).reshape(6, 1)), jnp.float32)
      >>> c.valid.shape, int(c.valid.sum())  # 5 thresholds split 6 distinct values
      ((1, 16), 5)
    """

    def edges(a):
        return search.candidate_edges(a.astype(dtype))

    def votes(b):
        return search.candidate_votes(b, dtype)

    mask = search.candidate_mask()
    squares = getattr(search, "candidate_squares", None)  # optional: votes that are not ±1
    if squares is None:
        squares = lambda w: jnp.broadcast_to(jnp.sum(w), mask.shape)  # noqa: E731
    return Candidates(edges, mask, votes, squares, search)


def candidates_of(voters: Any, dtype) -> Candidates:
    """The candidates of a greedy learner's first argument: a :class:`~pacbound.voters.Voters`
    family (:func:`search_candidates`) or the votes ``H`` (:func:`dense_candidates`).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 1., -1.], [1., -1., 1.], [-1., 1., 1.], [1., 1., 1.]])
      >>> c = candidates_of(H, jnp.float32)  # a dense H: its columns, layout (1, n)
      >>> c.valid.shape, c.size, c.search is None
      ((1, 3), 3, True)
    """
    if is_voters(voters):
        return search_candidates(voters, dtype)
    return dense_candidates(voters, dtype)


def checked_data(
    voters: Any, y: ArrayLike, sample_weight: ArrayLike | None, *, binary: bool = False
) -> jax.Array:
    """The checks of a greedy learner's data, at its boundary (before its compiled call): a
    vote matrix ``H`` (``binary``: votes in ``{-1, +1}``) or a family's sample, one label per
    example, the example weights; returns ``y`` in the computation dtype (float64 when ``H``,
    the family's arrays or ``y`` are, float32 otherwise).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> search = voters.stump_search(jnp.arange(6.0).reshape(6, 1))
      >>> y = checked_data(search, [1, 1, 1, -1, -1, -1], None)
      >>> str(y.dtype), y.shape
      ('float32', (6,))
    """
    if is_voters(voters):
        m, dtype = family_sample(voters, y)
        check_labels(y, m)
        check_sample_weight(sample_weight, m)
    else:
        check_data(voters, y, sample_weight, binary=binary)
        dtype = float_dtype(voters, y)
    return jnp.asarray(y, dtype)


def complemented_index(base: jax.Array, negative: jax.Array, size: int) -> jax.Array:
    """The index of ``+h_base`` (``base``) or ``-h_base`` (``size + base``) in the
    self-complemented set; int32.

    Example:
      >>> import jax.numpy as jnp
      >>> complemented_index(jnp.array([0, 2]), jnp.array([False, True]), 3).tolist()  # +h_0, -h_2
      [0, 5]
    """
    return (base + jnp.where(negative, size, 0)).astype(jnp.int32)


def split_index(index: jax.Array | np.ndarray, size: int) -> tuple[jax.Array, jax.Array]:
    """``(base, sign)`` of a self-complemented index (``sign`` is ``+1`` / ``-1``; an index
    ``< 0``, no choice, gives base 0 and sign 0).

    Example:
      >>> import jax.numpy as jnp
      >>> base, sign = split_index(jnp.array([0, 5, -1]), 3)
      >>> base.tolist(), sign.tolist()
      ([0, 2, 0], [1, -1, 0])
    """
    base = jnp.where(index >= 0, index % size, 0)
    sign = jnp.where(index < 0, 0, jnp.where(index < size, 1, -1))
    return base.astype(jnp.int32), sign


def posterior_over_columns(index: jax.Array, mass: jax.Array, n: int) -> jax.Array:
    """Masses ``mass`` (``(T,)``, ``>= 0``) put on self-complemented indices ``index`` (``-1``:
    none), summed per column of ``[H, -H]`` and normalized (uniform for an empty vote).

    Example:
      >>> import jax.numpy as jnp
      >>> q = posterior_over_columns(jnp.array([0, 4, 0, -1]), jnp.array([1., 2., 1., 5.]), 3)
      >>> q.tolist()  # h_0 got 1 + 1, -h_1 got 2; index -1 is no vote
      [0.5, 0.0, 0.0, 0.0, 0.5, 0.0]
    """
    slot = jnp.where(index >= 0, index, 2 * n)
    return complemented_posterior(jnp.zeros(2 * n, mass.dtype).at[slot].add(mass, mode="drop"))


def stump_posterior(search: Any, index: jax.Array, mass: jax.Array):
    """``(stumps, q)`` of matrix-free choices: slot ``t`` holds the stump of ``index[t]``
    (``(T,)`` self-complemented indices, ``-1``: none) and ``q`` ``(2T,)`` is over ``[S, -S]``.

    A stump chosen in several slots keeps its mass on its first slot (the later slots get 0),
    so that no voter is listed twice with mass: ``q`` is then a distribution over distinct
    voters, as its KL to a prior over all candidates needs. An empty vote gives the uniform
    ``q`` (vote 0).

    Example:
      >>> import jax.numpy as jnp
      >>> from pacbound import voters
      >>> search = voters.stump_search(jnp.arange(6.0).reshape(6, 1))
      >>> stumps, q = stump_posterior(search, jnp.array([0, 0, -1]), jnp.array([1., 1., 1.]))
      >>> [round(float(v), 3) for v in q]  # a stump chosen twice keeps all on its first slot
      [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    size = search.candidate_mask().size
    base, sign = split_index(index, size)
    same = (base[:, None] == base[None, :]) & (sign[None, :] != 0)
    first = jnp.argmax(same, axis=1)  # the first slot holding the same stump
    slot = jnp.where(sign < 0, index.shape[0] + first, first)
    slot = jnp.where(sign == 0, 2 * index.shape[0], slot)
    masses = jnp.zeros(2 * index.shape[0], mass.dtype).at[slot].add(mass, mode="drop")
    return search.candidate_voters(base), complemented_posterior(masses)
