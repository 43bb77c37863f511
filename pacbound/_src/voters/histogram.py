"""Histogram stump search: features binned once into ``uint8`` codes, one streaming pass a round.

The exact search (:mod:`pacbound._src.voters.exact_search`) keeps every threshold of every feature
at
the price of an ``int32`` order and a float threshold per training value (``8 d m`` bytes) and
one gather of ``d m`` weights a round. The histogram search of LightGBM (Ke et al., NeurIPS 2017,
§2.1, Algorithm 1) and XGBoost's ``hist`` method keeps ``d m`` bytes instead and the thresholds
between bins:

* :func:`bin_features` quantizes ``X`` once, on the host, into at most ``max_bins`` bins per
  feature (:class:`Binning`): code ``c`` of value ``x`` is the number of the feature's bin
  boundaries ``t_k`` below it, so that ``c > k  <=>  x > t_k`` and the stump
  ``h_{f,k}(x) = +1 if x_f > t_{f,k} else -1`` (roy2016 §7) is read off the codes;
* each round (:meth:`HistogramSearch.candidate_edges`) builds the weighted histogram
  ``H_f[b] = sum_{i: c_{if} = b} a_i`` of every feature in one pass over the codes, and the
  edge of every candidate from its prefix sums,

  .. math:: \\sum_i a_i h_{f,k}(x_i) = \\sum_b H_f[b] - 2 \\sum_{b \\le k} H_f[b].

Bins. The boundaries are midpoints of consecutive distinct training values (placed as
:class:`pacbound.voters.StumpSearch` places its thresholds), so equal values never
fall in two bins; a feature with at most ``max_bins`` distinct values gets one bin per value and the
histogram search finds exactly the stumps (thresholds and edges) of the exact search. A feature
with more distinct values gets equal-frequency cuts at distinct-value boundaries. Past
``sample_size`` examples the boundaries come from a fixed-seed subsample of that many training
rows, as LightGBM does (its ``bin_construct_sample_cnt``, 200 000); a feature whose subsample
holds at most ``max_bins`` distinct values is checked against the full column and re-binned
from it if the subsample missed a value, so the exactness above holds at every ``m``. Only
training inputs ever set boundaries. Missing values (NaN) get code 0 and the candidate
threshold ``-inf`` below every other bin: ``x > t`` is False for NaN, so
:func:`pacbound._src.voters.votes` on new data with missing values agrees with the training codes
(subnormal values count as zeros, as in XLA:CPU's flush-to-zero comparisons).

API: :func:`histogram_search` (= :func:`binned_search` of :func:`bin_features`) gives a
:class:`HistogramSearch` whose methods ``candidate_edges`` (:func:`histogram_edges`),
``candidate_mask``, ``candidate_votes``, ``candidate_voters`` and ``n_examples`` every
matrix-free stump search offers; :func:`histograms` is the pass itself.

Design of the pass (XLA:CPU; the figures are in ``benchmarks/results/bench_scale.json``): per
feature, a scatter-add of the example weights ``a`` at the ``uint8`` codes of a block of
:data:`CHUNK` examples, the features in a ``lax.fori_loop`` inside a ``lax.fori_loop`` over the
blocks. Codes are stored feature-major ``(d, m)`` so that a feature's codes are contiguous and
``a`` is scattered as it is (no ``(m, d)`` broadcast of ``a``, no flattened ``f * bins + c``
index); a block's ``a`` stays in cache while every feature reads it. A scatter adds its updates
in order, so a feature whose examples crowd into few bins (binary, categorical, mostly-zero
features) would chain its additions through one memory location: such a feature
(:func:`skewed_features`) is scattered into 8 interleaved copies of its histogram instead.
Per-block histograms are added to the running total, so float32 rounding grows with
``CHUNK + m / CHUNK`` rather than ``m``. Measured and dropped: ``segment_sum`` / scatter over all
features at once with a broadcast ``a``, a vmapped (batched) scatter, one-hot matmuls, 16 x 16
nibble matmuls, joint histograms of feature pairs, ``int32`` accumulation of quantized
weights. Memory per round: ``O(d CHUNK)`` bytes of block temporaries plus the ``(d, bins)``
histograms, no ``(d, m)`` float array. The pass is pure JAX (scatter-add is native on GPU and
TPU; there a larger ``chunk`` saves launches).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P
from jax.typing import ArrayLike

from pacbound._src.voters.stumps import Stumps

__all__ = [
    "CHUNK",
    "SAMPLE_SIZE",
    "Binning",
    "ExampleShards",
    "HistogramSearch",
    "bin_features",
    "binned_search",
    "histogram_edges",
    "histogram_search",
    "histograms",
    "skewed_features",
]

CHUNK = 65536  # examples per scatter block of the pass
SAMPLE_SIZE = 200_000  # rows that place the bin boundaries past this many examples
_ROWS = 1 << 18  # host binning: rows per block (bounds the temporaries at any m)
_TABLE_BITS = 20  # host binning: leading key bits looked up in a table before any search
_GROUP = 8  # host binning: features coded together (their look-up tables: 2 MiB each)
_LANES = 8  # interleaved histogram copies of a skewed feature
_SKEWED = 1 / 32  # a feature is skewed when two examples share a bin with this probability


class Binning(NamedTuple):
    """Training features quantized into at most ``max_bins`` bins per feature.

    Attributes:
      codes: ``(d, m)`` uint8, feature-major; ``codes[f, i] > k  <=>  X[i, f] > thresholds[f, k]``
        (NaN: code 0, below every threshold).
      thresholds: ``(d, max_bins - 1)`` in the features' float dtype: ``-inf`` first where the
        feature has missing values, then the bin boundaries, ascending, then ``+inf`` padding.
      counts: ``(d, max_bins)`` int32 training examples per bin.
    """

    codes: jax.Array
    thresholds: jax.Array
    counts: jax.Array


@jax.tree_util.register_static
@dataclasses.dataclass(frozen=True)
class ExampleShards:
    """The mesh axis a search's examples are split over (a static pytree node: no leaves, so
    ``jax.jit`` keys its cache on it and ``jax.vmap`` leaves it alone).

    Attributes:
      mesh: the :class:`jax.sharding.Mesh` the codes lie on.
      axis: the name of its axis along the examples.
    """

    mesh: Mesh
    axis: str


class HistogramSearch(NamedTuple):
    """Every stump ``x_f > thresholds[f, k]`` between two bins, searched by histograms.

    Candidate ``k`` of feature ``f`` (flat index ``f * P + k``, ``P = max_bins - 1``) votes
    ``+1`` on the examples whose code exceeds ``k``. The methods are those of every matrix-free
    stump search, so that a learner takes either this or the exact search. The first three
    attributes are those of the :class:`Binning` it searches.

    Attributes:
      codes: ``(d, m)`` uint8 bin of every training value.
      thresholds: ``(d, P)`` candidate thresholds in feature units.
      counts: ``(d, P + 1)`` int32 training examples per bin (padding examples, which
        :func:`pacbound.sweep.shard_examples` adds with weight 0, are not counted).
      shards: ``None``, or the :class:`ExampleShards` the codes' examples are split over
        (:func:`pacbound.sweep.shard_examples`): each device then builds the
        histograms of its own examples and the devices add them (one all-reduce of
        ``d max_bins`` numbers a pass).
    """

    codes: jax.Array
    thresholds: jax.Array
    counts: jax.Array
    shards: ExampleShards | None = None

    @property
    def n_examples(self) -> int:
        """``m``, the number of training examples (static)."""
        return self.codes.shape[1]

    def candidate_edges(self, a: ArrayLike) -> jax.Array:
        """``(d, P)`` edges ``sum_i a_i h_{f,k}(x_i)`` (:func:`histogram_edges`)."""
        return histogram_edges(self, a)

    def candidate_mask(self) -> jax.Array:
        """``(d, P)`` bool: which candidates are stumps, i.e. have training examples on both
        sides (the padding past a feature's last bin has none above it)."""
        below = jnp.cumsum(self.counts, axis=1)
        return (below[:, :-1] > 0) & (below[:, :-1] < below[:, -1:])

    def candidate_votes(self, index: ArrayLike, dtype=jnp.float32) -> jax.Array:
        """``(m,)`` votes ``h(x_i)`` in ``dtype`` of candidate ``index = f * P + k`` (traced)."""
        return _candidate_votes(self, index, dtype)

    def candidate_voters(self, index: ArrayLike) -> Stumps:
        """:class:`pacbound._src.voters.Stumps` of the candidates ``index`` (int array, any
        shape)."""
        index = jnp.asarray(index)
        positions = self.thresholds.shape[1]
        features = (index // positions).astype(jnp.int32)
        return Stumps(features, self.thresholds.reshape(-1)[index])


# ------------------------------------------------------------------ binning (host, NumPy)
def _check_binning(X: ArrayLike, max_bins: int, sample_size: int) -> np.ndarray:
    """``X`` as a float ``(m, d)`` NumPy array in JAX's dtype for it; ValueError otherwise."""
    if not (isinstance(max_bins, int | np.integer) and 2 <= max_bins <= 256):
        raise ValueError(f"max_bins must be an integer in [2, 256] (uint8 codes); got {max_bins!r}")
    if not (isinstance(sample_size, int | np.integer) and sample_size >= 2):
        raise ValueError(f"sample_size must be an integer >= 2; got {sample_size!r}")
    X = np.asarray(X)
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"X must be a non-empty 2-D (m, d) matrix; got shape {X.shape}")
    if not np.issubdtype(X.dtype, np.number) and X.dtype != jnp.bfloat16:
        raise ValueError(f"X must be numeric; got dtype {X.dtype}")
    dtype = jax.dtypes.canonicalize_dtype(jnp.promote_types(X.dtype, jnp.float32))
    return X.astype(dtype, copy=False)


def _missing_features(X: np.ndarray) -> np.ndarray:
    """``(d,)`` bool: features with a NaN; ValueError on an infinite entry (row blocks)."""
    missing = np.zeros(X.shape[1], bool)
    for start in range(0, X.shape[0], _ROWS):
        block = X[start : start + _ROWS]
        infinite = np.isinf(block)
        if infinite.any():
            row, col = np.argwhere(infinite)[0]
            raise ValueError(
                f"X has infinite entries, first at row {start + row}, feature {col}; only NaN "
                "(a missing value) is allowed besides finite values"
            )
        missing |= np.isnan(block).any(axis=0)
    return missing


def _flush_subnormals(x: np.ndarray) -> np.ndarray:
    """Subnormal values as (signed) zeros: XLA:CPU compares them so (flush-to-zero), and
    :func:`pacbound._src.voters.votes` must agree with the codes."""
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x * 0, x)


def _boundaries(values: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n_bins - 1`` boundaries of the sorted non-NaN ``values``, and the distinct values.

    Each boundary is the midpoint ``lo + (hi - lo) / 2`` of two consecutive distinct values
    (``lo`` if it rounds to ``hi``: :class:`pacbound.voters.StumpSearch`'s rule),
    after
    every distinct value when there are at most ``n_bins``, else after the distinct values where
    the cumulative count first reaches ``j n / n_bins``, ``j = 1 .. n_bins - 1``.
    """
    ends = np.append(np.flatnonzero(values[1:] != values[:-1]), values.size - 1)[: values.size]
    last = ends[:-1]  # the last index of every distinct value but the largest
    if ends.size > n_bins:
        targets = values.size * np.arange(1, n_bins) / n_bins
        cut = np.unique(np.searchsorted(ends + 1, targets))
        last = ends[cut[cut < ends.size - 1]]
    return _midpoints(values[last], values[last + 1]), values[ends]


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``lo + (hi - lo) / 2`` (``lo`` if it is not below ``hi``) as XLA:CPU computes it in the
    exact search: every subnormal result flushed to zero; ``-0`` made ``+0``."""
    with np.errstate(over="ignore"):
        mid = _flush_subnormals(lo + _flush_subnormals(_flush_subnormals(hi - lo) / 2))
    return np.where(mid < hi, mid, lo) + lo.dtype.type(0)


def _order_keys(x: np.ndarray) -> np.ndarray:
    """Unsigned integers ordered as the floats ``x`` (``-0`` just below ``+0``)."""
    bits = 8 * x.itemsize
    unsigned = x.view(f"u{x.itemsize}")
    sign = (x.view(f"i{x.itemsize}") >> (bits - 1)).view(unsigned.dtype)
    return unsigned ^ (sign | unsigned.dtype.type(1 << (bits - 1)))


def _bucket_table(boundaries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes by the leading ``_TABLE_BITS`` bits of the order key, and that shift.

    Entry ``b`` holds the number of boundaries in earlier buckets, plus ``0x100`` if a boundary
    falls in bucket ``b`` itself (its values then need a binary search).
    """
    shift = np.array(8 * boundaries.itemsize - _TABLE_BITS, f"u{boundaries.itemsize}")
    buckets = (_order_keys(boundaries) >> shift).astype(np.int64)
    lengths = np.diff(np.concatenate([[0], buckets + 1, [1 << _TABLE_BITS]]))
    table = np.repeat(np.arange(boundaries.size + 1, dtype=np.uint16), lengths)
    table[buckets] |= 0x100
    return table, shift


def _value_codes(x: np.ndarray, boundaries: np.ndarray, table, shift) -> np.ndarray:
    """``#{k: x > boundaries[k]}`` as uint8: a table look-up, a search where it is ambiguous."""
    entry = table.take(_order_keys(x) >> shift)
    codes = entry.astype(np.uint8)
    ambiguous = np.flatnonzero(entry >> 8)
    codes[ambiguous] = np.searchsorted(boundaries, x[ambiguous])
    return codes


def _block_codes(x: np.ndarray, boundaries, table, missing: bool, seen, out) -> bool:
    """Codes of one feature's block of values into ``out``; False if a value is not in ``seen``.

    ``seen``: the distinct values, one bin each, when they come from a subsample (``None``
    otherwise): a value outside it means the subsample missed one and the bins are not exact.
    """
    x = _flush_subnormals(x)
    codes = _value_codes(x, boundaries, *table)
    if seen is not None and not np.all((seen[codes] == x) | np.isnan(x)):
        return False
    if missing:
        codes += 1
        codes[np.isnan(x)] = 0
    out[:] = codes
    return True


def _codes(X: np.ndarray, boundaries, missing, seen, pool) -> tuple[np.ndarray, np.ndarray]:
    """``(d, m)`` uint8 codes and ``(d,)`` bool "every value was seen", by row blocks.

    Row blocks of up to :data:`_GROUP` features are transposed once (contiguous per feature)
    and coded on the ``pool``'s threads; the look-up tables of a group are built once.
    """
    (m, d), codes, exact = X.shape, np.empty(X.shape[::-1], np.uint8), np.ones(X.shape[1], bool)
    for lo in range(0, d, _GROUP):
        group = range(lo, min(d, lo + _GROUP))
        tables = [_bucket_table(boundaries[f]) for f in group]

        def block(start, group=group, tables=tables):
            values = np.ascontiguousarray(X[start : start + _ROWS, group.start : group.stop].T)
            for x, f, table in zip(values, group, tables):
                out = codes[f, start : start + x.size]
                if not _block_codes(x, boundaries[f], table, missing[f], seen[f], out):
                    exact[f] = False

        list(pool.map(block, range(0, m, _ROWS)))
    return codes, exact


def _sample(X: np.ndarray, sample_size: int, seed: int) -> np.ndarray:
    """``(d, n)``: every feature of ``min(m, sample_size)`` rows (fixed seed), feature-major."""
    if X.shape[0] > sample_size:
        rows = np.random.default_rng(seed).choice(X.shape[0], sample_size, replace=False)
        X = X[np.sort(rows)]
    return np.ascontiguousarray(X.T)


def _feature_bins(values: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_boundaries` of one feature's values (sorted here; NaNs dropped)."""
    values = np.sort(_flush_subnormals(values))
    return _boundaries(values[: np.searchsorted(values, np.nan)], n_bins)


def bin_features(
    X: ArrayLike, max_bins: int = 255, *, sample_size: int = SAMPLE_SIZE, seed: int = 0
) -> Binning:
    """Quantize the training features once into ``uint8`` bin codes (host side, NumPy).

    Bins are separated by midpoints of consecutive distinct values (never splitting equal
    values): one bin per distinct value when a feature has at most ``max_bins`` of them (minus
    one for the missing-value bin), else equal-frequency bins at distinct-value boundaries.
    Past ``sample_size`` examples the boundaries come from ``sample_size`` rows drawn without
    replacement (``seed``), as LightGBM does; a feature whose sample shows few distinct values
    is checked against, and if need be re-binned from, the full column. Codes are computed by a
    table look-up on the values' leading bits, with a binary search only where a bin boundary
    shares those bits, in row blocks on ``os.cpu_count()`` threads.

    Args:
      X: training features ``(m, d)``; NaN marks a missing value, infinities are refused.
      max_bins: bins per feature, in ``[2, 256]``; a feature with missing values spends one.
      sample_size: rows that place the boundaries when ``m`` is larger (``>= 2``).
      seed: the subsample's seed.

    Returns:
      :class:`Binning`; thresholds in ``X``'s float dtype (float32 unless x64 is on).

    Raises:
      ValueError: ``max_bins`` outside ``[2, 256]``, ``X`` not a non-empty numeric 2-D matrix,
        or an infinite entry (named by row and feature).

    Example:
      >>> import jax.numpy as jnp
      >>> binning = bin_features(jnp.array([[0., 3.], [1., 2.], [2., 1.], [3., 0.]]), max_bins=4)
      >>> binning.codes.tolist(), [float(t) for t in binning.thresholds[0]]  # one bin per value
      ([[0, 1, 2, 3], [3, 2, 1, 0]], [0.5, 1.5, 2.5])
    """
    X = _check_binning(X, max_bins, sample_size)
    missing = _missing_features(X)
    n_bins = max_bins - missing.astype(int)  # a feature with missing values spends one bin
    sampled = X.shape[0] > sample_size
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        bins = list(pool.map(_feature_bins, _sample(X, sample_size, seed), n_bins))
        boundaries = [b for b, _ in bins]
        seen = [v if sampled and v.size <= n else None for (_, v), n in zip(bins, n_bins)]
        codes, exact = _codes(X, boundaries, missing, seen, pool)
        for f in np.flatnonzero(~exact):  # the sample missed a value: bins from the full column
            boundaries[f] = _feature_bins(X[:, f], n_bins[f])[0]
            one = _codes(X[:, f : f + 1], boundaries[f : f + 1], missing[f : f + 1], [None], pool)
            codes[f] = one[0][0]
    return Binning(
        jnp.asarray(codes), jnp.asarray(_thresholds(boundaries, missing, max_bins, X.dtype)),
        jnp.asarray(np.stack([np.bincount(row, minlength=max_bins) for row in codes]), jnp.int32),
    )  # fmt: skip


def _thresholds(boundaries, missing, max_bins: int, dtype) -> np.ndarray:
    """``(d, max_bins - 1)``: ``-inf`` where a feature has missing values, its boundaries,
    ``+inf`` padding (no example is above it: ``x > inf`` is False as ``code > k`` is)."""
    thresholds = np.full((len(boundaries), max_bins - 1), np.inf, dtype)
    for f, row in enumerate(boundaries):
        row = np.concatenate([np.full(int(missing[f]), -np.inf, dtype), row])
        thresholds[f, : row.size] = row
    return thresholds


def binned_search(binning: Binning) -> HistogramSearch:
    """The :class:`HistogramSearch` over the candidates of a :class:`Binning`.

    Example:
      >>> import jax.numpy as jnp
      >>> binning = bin_features(jnp.array([[0., 3.], [1., 2.], [2., 1.], [3., 0.]]), max_bins=4)
      >>> search = binned_search(binning)
      >>> type(search).__name__, bool(search.candidate_mask().any())
      ('HistogramSearch', True)
    """
    return HistogramSearch(*binning)


def histogram_search(
    X: ArrayLike, max_bins: int = 255, *, sample_size: int = SAMPLE_SIZE, seed: int = 0
) -> HistogramSearch:
    """Bin ``X`` (:func:`bin_features`) and return its :class:`HistogramSearch`.

    Raises:
      ValueError: as :func:`bin_features`, or if no candidate splits the sample (every feature
        constant).

    Example:
      >>> import jax.numpy as jnp
      >>> X = jnp.array([[0., 3.], [1., 2.], [2., 1.], [3., 0.]]); y = jnp.array([-1., -1., 1., 1.])
      >>> search = histogram_search(X, max_bins=4)
      >>> search.codes.shape, str(search.codes.dtype)  # (d, m) bytes
      ((2, 4), 'uint8')
    """
    search = binned_search(bin_features(X, max_bins, sample_size=sample_size, seed=seed))
    if not bool(search.candidate_mask().any()):
        raise ValueError("every feature of X is constant: no decision stump splits the sample")
    return search


# ------------------------------------------------------------------ the rounds (JAX)
def _block_histograms(codes: jax.Array, a: jax.Array, skewed: jax.Array, bins: int) -> jax.Array:
    """``(d, bins)`` histograms of one block: per feature, ``a`` scattered at its codes.

    A scatter adds its updates one after the other, so updates of one bin in a row wait for
    each other; a skewed feature's example ``i`` goes to copy ``i mod _LANES`` of its histogram
    instead (the copies summed after), which keeps the additions independent.
    """
    lane = bins * (jnp.arange(codes.shape[1], dtype=jnp.int32) % _LANES)

    def plain(row):
        return jnp.zeros(bins, a.dtype).at[row].add(a)

    def interleaved(row):
        hists = jnp.zeros(_LANES * bins, a.dtype).at[row.astype(jnp.int32) + lane].add(a)
        return jnp.sum(hists.reshape(_LANES, bins), axis=0)

    def feature(f, hists):
        row = lax.dynamic_index_in_dim(codes, f, keepdims=False)
        hist = lax.cond(skewed[f], interleaved, plain, row)
        return lax.dynamic_update_index_in_dim(hists, hist, f, 0)

    return lax.fori_loop(0, codes.shape[0], feature, jnp.zeros((codes.shape[0], bins), a.dtype))


def skewed_features(counts: ArrayLike) -> jax.Array:
    """``(d,)`` bool: features whose two random examples share a bin with probability
    ``sum_b (counts_b / m)^2 > 1/32`` (their histograms are built in interleaved copies).

    Example:
      >>> import jax.numpy as jnp
      >>> counts = jnp.array([[1] * 64, [61] + [1] * 3 + [0] * 60])  # even / crowded into one bin
      >>> skewed_features(counts).tolist()
      [False, True]
    """
    counts = jnp.asarray(counts, jnp.float32)
    share = counts / jnp.sum(counts, axis=1, keepdims=True)
    return jnp.sum(share**2, axis=1) > _SKEWED


@functools.partial(jax.jit, static_argnames=("bins", "chunk"))
def histograms(
    codes: ArrayLike,
    a: ArrayLike,
    bins: int = 256,
    chunk: int = CHUNK,
    skewed: ArrayLike | None = None,
) -> jax.Array:
    """Weighted histograms ``H[f, b] = sum_{i: codes[f, i] = b} a_i`` in one pass over the codes.

    Blocks of ``chunk`` examples (a ``lax.fori_loop``; the remainder as one more block), each
    block's histograms added to the total; the features of a block in a ``lax.fori_loop``.

    Args:
      codes: ``(d, m)`` uint8 (or int) codes, every one ``< bins``.
      a: ``(m,)`` weights.
      bins: histogram length (static).
      chunk: examples per block (static).
      skewed: ``(d,)`` bool, features to build in interleaved copies (:func:`skewed_features`;
        the same sums, faster when few bins hold most examples). ``None``: none.

    Returns:
      ``(d, bins)`` in ``a``'s dtype.

    Example:
      >>> import jax.numpy as jnp
      >>> codes = jnp.array([[0, 1, 2, 3], [3, 2, 1, 0]], jnp.uint8)
      >>> histograms(codes, jnp.array([-1., -1., 1., 1.]), bins=4).tolist()  # a summed per bin
      [[-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]]
    """
    codes, a = jnp.asarray(codes), jnp.asarray(a)
    (d, m), blocks = codes.shape, codes.shape[1] // chunk
    skewed = jnp.zeros(d, bool) if skewed is None else jnp.asarray(skewed)

    def block(i, total):
        c = lax.dynamic_slice_in_dim(codes, i * chunk, chunk, axis=1)
        a_block = lax.dynamic_slice_in_dim(a, i * chunk, chunk)
        return total + _block_histograms(c, a_block, skewed, bins)

    total = jnp.zeros((d, bins), a.dtype)
    if blocks:
        total = lax.fori_loop(0, blocks, block, total)
    if blocks * chunk < m:
        rest = slice(blocks * chunk, m)
        total = total + _block_histograms(codes[:, rest], a[rest], skewed, bins)
    return total


@jax.jit
def histogram_edges(search: HistogramSearch, a: ArrayLike) -> jax.Array:
    """Edges ``sum_i a_i h_{f,k}(x_i)`` of every candidate, from one pass over the codes.

    ``sum_i a_i h_{f,k}(x_i) = sum_b H_f[b] - 2 sum_{b <= k} H_f[b]`` with ``H`` the weighted
    histograms (:func:`histograms`). Linear in ``a`` (differentiable; ``jax.vmap`` batches it).

    Args:
      search: from :func:`histogram_search`.
      a: example weights ``(m,)`` (e.g. ``y * u``).

    Returns:
      ``(d, P)`` edges in ``a``'s float dtype (at least float32); entries outside
      ``search.candidate_mask()`` are finite but no stumps.

    Example:
      >>> import jax.numpy as jnp
      >>> X = jnp.array([[0., 3.], [1., 2.], [2., 1.], [3., 0.]]); y = jnp.array([-1., -1., 1., 1.])
      >>> histogram_edges(histogram_search(X, max_bins=4), y).tolist()  # as stump_scores here
      [[2.0, 4.0, 2.0], [-2.0, -4.0, -2.0]]
    """
    a = jnp.asarray(a)
    a = a.astype(jnp.promote_types(a.dtype, jnp.float32))
    hists = _search_histograms(search, a)
    below = jnp.cumsum(hists, axis=1)[:, :-1]
    return jnp.sum(hists, axis=1, keepdims=True) - 2 * below


def _search_histograms(search: HistogramSearch, a: jax.Array) -> jax.Array:
    """:func:`histograms` of the search's codes; with ``search.shards``, each device's own
    examples (``jax.shard_map``) summed over the devices (``lax.psum``), so that no device
    reads another's codes."""
    bins = search.thresholds.shape[1] + 1
    skewed = skewed_features(search.counts)
    if search.shards is None:
        return histograms(search.codes, a, bins, skewed=skewed)
    axis = search.shards.axis

    def local(codes, a, skewed):
        return lax.psum(histograms(codes, a, bins, skewed=skewed), axis)

    specs = (P(None, axis), P(axis), P())
    mesh = search.shards.mesh
    run = jax.shard_map(local, mesh=mesh, in_specs=specs, out_specs=P(), check_vma=False)
    return run(search.codes, a, skewed)


@functools.partial(jax.jit, static_argnames="dtype")
def _candidate_votes(search: HistogramSearch, index: ArrayLike, dtype) -> jax.Array:
    feature, k = jnp.divmod(jnp.asarray(index), search.thresholds.shape[1])
    codes = lax.dynamic_index_in_dim(search.codes, feature, keepdims=False)
    return jnp.where(codes > k, 1, -1).astype(dtype)
