"""Edges ``sum_i a_i h_j(x_i)`` of every column of a materialized voter matrix, one read of it.

A greedy round (bauvin2020 Algorithm 1) or a column-generation pricing step (roy2016 Alg. 1)
needs ``H^T a`` for a new ``a`` each time while ``H`` never changes, so the product is set up
once (:func:`prepare_votes`, its own compiled call, before the learner's: a
:class:`PreparedVotes`) and then costs one read of ``H`` (:func:`column_edges`):

* Float votes, in the computation dtype, stay ``(m, n)``: ``a @ H`` is one matrix-vector
  product at about memory speed on XLA:CPU (a transposed copy reads faster, by at most 2x,
  but XLA:CPU's transposition costs about a hundred such reads).
* Integer votes (``int8`` ±1 / 0, a quarter of float32's bytes) are stored transposed,
  ``(n, m)`` int8, and ``a`` is split into ``K`` signed base-128 digits, ``a = s sum_k d_k
  128^-k`` with ``d_k`` in ``[-64, 64]`` and ``s`` a power of two (exact arithmetic): one
  ``int8 x int8 -> int32`` product ``H^T [d_1 .. d_K]``, which XLA:CPU runs as an int8 GEMM
  at memory speed (only with ``H``'s contracted axis minor, hence the transposition; a float
  conversion of ``H`` is compute-bound at several reads), gives every edge to
  ``2^-(7K - 1)`` of ``max |a|``: ``K = 4`` digits for float32 (finer than its 24 bits),
  ``K = 8`` for float64 (exact). Integer sums are exact while ``64 m < 2^31`` (``m`` below
  33 million examples).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

__all__ = [
    "PreparedVotes",
    "column_edges",
    "int8_digits",
    "prepare_votes",
    "square_edges",
    "votes_column",
]

_DIGIT_BITS = 7  # signed base-128 digits: |d| <= 64 fits int8 with room for the rounding


class PreparedVotes(NamedTuple):
    """``H`` as the operand of :func:`column_edges` (:func:`prepare_votes`; a pytree, so it
    passes through ``jax.jit`` and ``jax.vmap``).

    Attributes:
      data: ``(n, m)`` int8 (integer votes, transposed) or ``(m, n)`` in the computation dtype.
    """

    data: jax.Array

    @property
    def transposed(self) -> bool:
        """Whether ``data`` is the transposed int8 copy."""
        return self.data.dtype == jnp.int8

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape ``(m, n)`` of ``H``."""
        return self.data.shape[::-1] if self.transposed else self.data.shape


def prepare_votes(H: ArrayLike | PreparedVotes, dtype) -> PreparedVotes:
    """``H`` ``(m, n)`` as the operand of :func:`column_edges` for a computation in ``dtype``.

    Integer votes (entries in ``{-1, 0, 1}``): ``(n, m)`` int8, the one transposed copy, made
    by its own compiled call so that XLA neither folds the transposition into the products
    nor repeats it for each of them (nor, traced inside a learner's program, turns the first
    products into int32 ones over a fused transposition: learners prepare their votes before
    their loop's compiled call). Other votes: ``(m, n)`` in ``dtype`` (``H`` itself when it
    already is; float32 ``H`` under float64 is converted once here, not every round).
    Prepared votes are returned as they are (float ones converted to ``dtype`` if needed), so
    :func:`pacbound._src.learning.candidates.dense_candidates` takes either.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1, 1, -1], [1, -1, 1], [-1, 1, 1], [1, 1, 1]], jnp.int8)
      >>> v = prepare_votes(H, jnp.float32)  # integer votes: one transposed int8 copy
      >>> v.data.shape, v.transposed, prepare_votes(H.astype(jnp.float32), jnp.float32).transposed
      ((3, 4), True, False)
    """
    if isinstance(H, PreparedVotes):
        data = H.data if H.transposed else H.data.astype(dtype)
        return PreparedVotes(data)
    H = jnp.asarray(H)
    if jnp.issubdtype(H.dtype, jnp.integer):
        return PreparedVotes(_transposed_int8(H))
    return PreparedVotes(H.astype(dtype))


@jax.jit
def _transposed_int8(H: jax.Array) -> jax.Array:
    return H.T.astype(jnp.int8)


def int8_digits(a: jax.Array, n_digits: int) -> tuple[jax.Array, jax.Array]:
    """``a = scale * sum_k digits[:, k] 128^-k``, up to ``scale * 2^-(7 n_digits - 6)``.

    ``scale`` is the power of two with ``max |a| < 64 scale``, so every step (scaling,
    rounding, subtracting the digit, multiplying by 128) is exact in ``a``'s dtype.

    Returns:
      ``(digits, scale)``: ``(m, n_digits)`` int8 in ``[-64, 64]`` and a scalar.

    Example:
      >>> import jax.numpy as jnp
      >>> digits, scale = int8_digits(jnp.array([0.75, -0.5]), 2)
      >>> str(digits.dtype), (scale * (digits[:, 0] + digits[:, 1] / 128.0)).tolist()
      ('int8', [0.75, -0.5])
    """
    _, exponent = jnp.frexp(jnp.max(jnp.abs(a)))  # max |a| = f 2^e, f in [0.5, 1)
    scale = jnp.ldexp(jnp.ones((), a.dtype), exponent - (_DIGIT_BITS - 1))
    rest, digits = a / scale, []
    for _ in range(n_digits):
        digit = jnp.round(rest)
        digits.append(digit)
        rest = (rest - digit) * 2**_DIGIT_BITS
    return jnp.stack(digits, axis=-1).astype(jnp.int8), scale


def _n_digits(dtype) -> int:
    """Digits covering the mantissa: 4 for float32 (27 bits), 8 for float64 (55 bits)."""
    bits = jnp.finfo(dtype).nmant + 1
    return 1 + -(-(bits - (_DIGIT_BITS - 1)) // _DIGIT_BITS)


def column_edges(votes: PreparedVotes, a: jax.Array) -> jax.Array:
    """``H^T a`` (``(n,)``, in ``a``'s dtype) from ``votes = prepare_votes(H, a.dtype)``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1, 1, -1], [1, -1, 1], [-1, 1, 1], [1, 1, 1]], jnp.int8)
      >>> column_edges(prepare_votes(H, jnp.float32), jnp.array([1., 1., -1., -1.])).tolist()
      [2.0, -2.0, -2.0]
    """
    if not votes.transposed:
        return a @ votes.data
    digits, scale = int8_digits(a, _n_digits(a.dtype))
    sums = lax.dot_general(
        votes.data, digits, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32
    ).astype(a.dtype)
    edges = sums[:, -1]
    for k in range(digits.shape[1] - 2, -1, -1):  # Horner from the smallest digit
        edges = sums[:, k] + edges / 2**_DIGIT_BITS
    return edges * scale


def square_edges(votes: PreparedVotes, w: jax.Array) -> jax.Array:
    """``sum_i w_i h_j(x_i)^2`` for every column: one fused pass over float votes, one int8
    product with ``|H| = H^2`` for int8 votes (XLA:CPU reduces int8 several times slower).

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1., 0., -1.], [1., -1., 0.]])
      >>> square_edges(prepare_votes(H, jnp.float32), jnp.array([0.25, 0.75])).tolist()
      [1.0, 0.75, 0.25]
    """
    if votes.transposed:
        return column_edges(PreparedVotes(jnp.abs(votes.data)), w)
    return jnp.sum(w[:, None] * votes.data**2, axis=0)


def votes_column(votes: PreparedVotes, k: jax.Array, dtype) -> jax.Array:
    """Column ``k`` of ``H`` in ``dtype``, ``(m,)``, from ``votes = prepare_votes(H, ...)``.

    Example:
      >>> import jax.numpy as jnp
      >>> H = jnp.array([[1, 1, -1], [1, -1, 1], [-1, 1, 1], [1, 1, 1]], jnp.int8)
      >>> votes_column(prepare_votes(H, jnp.float32), jnp.int32(2), jnp.float32).tolist()
      [-1.0, 1.0, 1.0, 1.0]
    """
    axis = 0 if votes.transposed else 1
    return lax.dynamic_index_in_dim(votes.data, k, axis=axis, keepdims=False).astype(dtype)
