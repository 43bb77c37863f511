"""Direct gradient minimization of PAC-Bayes bounds over the posterior, with certificates.

:func:`minimize_bound` runs any optax optimizer for a fixed number of steps inside one jitted
``lax.scan`` on a bound of :mod:`pacbound.bounds`, seen as a function of the posterior ``Q``
over the columns of a voter matrix ``H``:

* ``posterior="softmax"``: ``Q = softmax(ln P + theta)`` against a prior ``P`` (uniform by
  default), with the exact ``KL(Q||P)``; ``theta = 0`` (``Q = P``) at the start.
* ``posterior="quasi_uniform"``: on the self-complemented set ``[H, -H]`` (built with
  :func:`pacbound.voters.self_complemented`; ``H`` holds the first ``n`` voters),
  ``Q(h_j) = (1/n + w_j) / 2`` and ``Q(-h_j) = (1/n - w_j) / 2`` with ``w = tanh(theta) / n``
  (laviolette2011 §2); the margin is ``y H w``. Every bound applies with ``KL(Q||P)``
  (``<= ln 2`` for the uniform ``P``), and so does the KL-free bound of laviolette2011 Thm 2.

Whatever was optimized, the result's ``certified`` is the bound recomputed on the whole sample
at the returned ``Q``, with the exact kl-inverse and the bound's own constants: a bound on the
majority-vote risk ``R(B_Q)`` that holds with probability ``1 - delta`` (the bounds hold for
all posteriors at once, so it is valid whatever the optimizer did; in full-sample runs the
scan's last pass evaluates it, from the moments ``a^T u`` and ``u^T (H^T H / m) u``, equal to
the margins' up to rounding, with ``a = H^T y / m``). The objective itself is
the same bound, estimated on minibatches when ``batch_size`` is set; where a C-bound form is
trivial (exactly 1, gradient 0: e.g. at the uniform ``Q`` on ``[H, -H]``) the step follows
``1 + mcallester`` instead, until the bound becomes informative.

Bounds (:class:`Bound`; a name is enough for the parameter-free ones), all on ``R(B_Q)``:
``"seeger"`` (``2 x`` Seeger-Maurer on the Gibbs risk), ``"pac_bound_0"``, ``"catoni"`` (``2 x``
germain2009 Thm 3.1), ``"general_loss"`` (germain2009 Thm 3.2), ``"cbound_roy2016"`` (roy2016
Thm 2), ``"pac_bound_1"``, ``"pac_bound_2"`` (Germain et al., JMLR 2015) and
``"cbound_quasi_uniform"`` (laviolette2011 Thm 2, quasi-uniform posteriors only).
Reference: Viallard, Germain, Habrard, Morvant, ECML-PKDD 2021 (direct C-bound minimization).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.typing import ArrayLike

from pacbound.kl import kl_divergence
from pacbound.solvers.bound_objective import (
    BOUND_NAMES,
    DEFAULT_OPTIMIZER,
    GRID_BOUNDS,
    Bound,
    BoundStats,
    as_bound,
    batch_rows,
    cast_bound,
    catoni_bound,
    certify,
    check_run,
    general_loss_bound,
    margin_stats,
    objective,
    run_optimizer,
)
from pacbound.validation import check_delta, check_labels, check_votes, float_dtype, is_concrete

__all__ = [
    "BOUND_NAMES",
    "Bound",
    "DirectResult",
    "catoni_bound",
    "certify_posterior",
    "general_loss_bound",
    "minimize_bound",
]


class DirectResult(NamedTuple):
    """Result of :func:`minimize_bound` (and of :func:`certify_posterior`).

    Attributes:
      q: the posterior over the columns of ``H`` (of ``[H, -H]`` when quasi-uniform).
      certified: the bound on ``R(B_Q)`` recomputed on the whole sample at ``q``.
      trajectory: ``(steps,)`` bound value before each step (a batch estimate with minibatches).
      kl: ``KL(Q||P)``.
      gibbs_risk, mu1, mu2: empirical Gibbs risk and margin moments at ``q``.
      majority_vote_risk: empirical risk of ``B_Q`` (ties are errors).
      c: Catoni's constant of the certificate (grid bounds; ``nan`` otherwise).
    """

    q: jax.Array
    certified: jax.Array
    trajectory: jax.Array
    kl: jax.Array
    gibbs_risk: jax.Array
    mu1: jax.Array
    mu2: jax.Array
    majority_vote_risk: jax.Array
    c: jax.Array


def _posterior(kind: str, theta: jax.Array, prior: jax.Array):
    """``(q, u, KL)``: the distribution, the vote weights on ``H`` (``vote = H u``), the KL."""
    if kind == "softmax":
        q = jax.nn.softmax(jnp.log(prior) + theta)
        return q, q, kl_divergence(q, prior)
    n = theta.shape[0]
    w = jnp.tanh(theta) / n
    q = jnp.concatenate([(1.0 / n + w) / 2.0, (1.0 / n - w) / 2.0])
    return q, w, kl_divergence(q, prior)


def _summary(bound, H, y, q, u, kl, delta, trajectory, certified=None) -> DirectResult:
    margins = y * (H @ u)
    stats = margin_stats(bound, margins, kl, jnp.asarray(H.shape[0], H.dtype))
    if certified is None:
        certified, c = certify(bound, stats, delta)
    else:  # the bound at q on the whole sample, already computed by the optimizer's last pass
        c = jnp.asarray(jnp.nan, delta.dtype)
    mv_risk = jnp.mean((margins <= 0).astype(margins.dtype))
    return DirectResult(q, certified, trajectory, kl, stats.risk, stats.mu1, stats.mu2, mv_risk, c)


_summary_jit = jax.jit(_summary)


@functools.partial(jax.jit, static_argnames=("posterior", "optimizer", "steps", "batch_size"))
def _minimize(bound, H, y, prior, delta, key, *, posterior, optimizer, steps, batch_size):
    m, n = H.shape
    m_f = jnp.asarray(m, H.dtype)  # a Python int would promote the bounds to float64 under x64
    # the moments are quadratic in u: with n <= m, (H^T y / m, H^T H / m) make each step O(n^2)
    gram = batch_size is None and bound.name != "general_loss" and n <= m
    a, gram_matrix = (H.T @ y / m, H.T @ H / m) if gram else (None, None)

    def loss_fn(params, t):
        theta, log_c = params
        _, u, kl = _posterior(posterior, theta, prior)
        if gram:
            stats = BoundStats(a @ u, u @ gram_matrix @ u, jnp.zeros((), u.dtype), kl, m_f)
        else:
            Hb, yb = batch_rows(key, t, m, batch_size, H, y)
            stats = margin_stats(bound, yb * (Hb @ u), kl, m_f)
        return objective(bound, stats, delta, log_c)

    params = (jnp.zeros(n, H.dtype), jnp.zeros((), H.dtype))
    (theta, _), trajectory, final = run_optimizer(loss_fn, params, optimizer, steps)
    exact = batch_size is None and bound.name not in GRID_BOUNDS  # final is the certificate
    return (*_posterior(posterior, theta, prior), trajectory, final if exact else None)


# ------------------------------------------------------------------ thin validated boundary
def _prior(prior: ArrayLike | None, columns: int, dtype) -> jax.Array:
    """The prior (uniform by default), checked: ``(columns,)``, positive, summing to 1."""
    prior = jnp.full(columns, 1.0 / columns, dtype) if prior is None else jnp.asarray(prior, dtype)
    if prior.shape != (columns,):
        raise ValueError(
            f"prior must have shape ({columns},), one mass per column; got {prior.shape}"
        )
    if is_concrete(prior):
        p = np.asarray(prior, np.float64)
        if not (np.all(p > 0) and abs(p.sum() - 1) < 1e-5):
            raise ValueError("prior must be a distribution with positive masses summing to 1")
    return prior


def minimize_bound(
    bound: str | Bound,
    H: ArrayLike,
    y: ArrayLike,
    *,
    posterior: str = "softmax",
    optimizer: optax.GradientTransformation | None = None,
    steps: int = 1000,
    prior: ArrayLike | None = None,
    delta: ArrayLike = 0.05,
    key: jax.Array | None = None,
    batch_size: int | None = None,
) -> DirectResult:
    """Minimize a PAC-Bayes bound over the posterior ``Q`` by gradient steps; certify it.

    Validates its inputs when they are concrete; traceable, so ``jax.vmap`` over ``delta``,
    ``prior``, ``key`` or a :class:`Bound`'s numbers compiles once, and ``jax.grad`` of
    ``.certified`` with respect to them differentiates through the steps (and the kl-inverse's
    implicit derivative). One compilation per (bound name, shapes, ``optimizer`` object,
    ``steps``, ``batch_size``): reuse the optimizer object to reuse it.

    Args:
      bound: a name in :data:`BOUND_NAMES` or a :class:`Bound` (:func:`catoni_bound`,
        :func:`general_loss_bound`).
      H: votes ``(m, n)`` in ``[-1, 1]`` (the first ``n`` voters of ``[H, -H]`` when
        ``posterior="quasi_uniform"``).
      y: labels in ``{-1, +1}``, ``(m,)``.
      posterior: ``"softmax"`` or ``"quasi_uniform"`` (module docstring).
      optimizer: any optax ``GradientTransformation``; default ``optax.adam(0.05)``. Those
        taking extra arguments (``optax.lbfgs``'s line search) get ``value``, ``grad`` and
        ``value_fn``.
      steps: number of steps (static).
      prior: ``P`` over the ``n`` columns (``2n`` when quasi-uniform), positive; default
        uniform. Chosen before seeing the sample.
      delta: confidence, in ``(0, 1]``.
      key: PRNG key of the minibatches; default ``jax.random.key(0)``.
      batch_size: estimate the bound on this many examples per step (drawn with replacement);
        ``None`` (default) uses the whole sample. The certificate always uses all of it.

    Returns:
      :class:`DirectResult`.
    """
    if posterior not in ("softmax", "quasi_uniform"):
        raise ValueError(f"posterior must be 'softmax' or 'quasi_uniform'; got {posterior!r}")
    check_votes(H)
    m, n = jnp.shape(H)
    check_labels(y, m)
    check_run(delta, steps, batch_size)
    dtype = float_dtype(H, y)
    bound = cast_bound(as_bound(bound), dtype)
    if bound.name == "cbound_quasi_uniform" and (posterior != "quasi_uniform" or m <= 8):
        raise ValueError("cbound_quasi_uniform needs posterior='quasi_uniform' and m > 8")
    prior = _prior(prior, n if posterior == "softmax" else 2 * n, dtype)
    H, y, delta = jnp.asarray(H, dtype), jnp.asarray(y, dtype), jnp.asarray(delta, dtype)
    q, u, kl, trajectory, certified = _minimize(
        bound, H, y, prior, delta, jax.random.key(0) if key is None else key,
        posterior=posterior, optimizer=optimizer or DEFAULT_OPTIMIZER, steps=steps,
        batch_size=batch_size,
    )  # fmt: skip
    return _summary_jit(bound, H, y, q, u, kl, delta, trajectory, certified)


def certify_posterior(
    bound: str | Bound,
    H: ArrayLike,
    y: ArrayLike,
    q: ArrayLike,
    *,
    prior: ArrayLike | None = None,
    delta: ArrayLike = 0.05,
) -> DirectResult:
    """The certified bound of any posterior ``q`` over the columns of ``H`` (e.g. MinCq's over
    ``[H, -H]``), as :func:`minimize_bound` computes it (``trajectory`` is empty).

    ``"cbound_quasi_uniform"`` applies only if ``H`` is self-complemented (``[G, -G]``) and
    ``q`` quasi-uniform on it; that is the caller's claim, checked when concrete.
    """
    check_votes(H)
    m, n = jnp.shape(H)
    check_labels(y, m)
    check_delta(delta)
    dtype = float_dtype(H, y, q)
    bound = cast_bound(as_bound(bound), dtype)
    H, y, q = jnp.asarray(H, dtype), jnp.asarray(y, dtype), jnp.asarray(q, dtype)
    prior = _prior(prior, n, dtype)
    if bound.name == "cbound_quasi_uniform" and is_concrete(H, q):
        half, Hn, qn = n // 2, np.asarray(H), np.asarray(q)
        pairs = n % 2 == 0 and np.allclose(Hn[:, half:], -Hn[:, :half])
        if not (pairs and np.allclose(qn[:half] + qn[half:], 1.0 / half, atol=1e-6) and m > 8):
            raise ValueError("cbound_quasi_uniform needs H = [G, -G], quasi-uniform q and m > 8")
    kl, empty = kl_divergence(q, prior), jnp.zeros((0,), dtype)
    return _summary_jit(bound, H, y, q, q, kl, jnp.asarray(delta, dtype), empty)
