"""PAC-Bayes certificates of a majority vote: the one bound registry and the one ``certify``.

:data:`BOUNDS` maps a name to a :class:`BoundSpec`: a bound on the majority vote's true risk
``R(B_Q)`` as a function of a posterior's :class:`VoteStatistics` on the sample (margin
moments, ``KL(Q||P)``, ``m``; optionally the disagreement on unlabeled examples and the pairs'
variance) and of ``delta``. Every consumer reads this one table:
:func:`certify`, the gradient minimizers (:func:`pacbound.solvers.minimize_bound` descends
:func:`bound_value`), the sweeps' :func:`pacbound._src.sweep.select_by_bound`, the estimators'
``bound()`` and the ``pacbound`` command. Adding a bound is one :func:`register_bound` call.

**What a certificate promises.** Each value in :attr:`Certificate.bounds` is, with probability
at least ``1 - delta`` over the draw of the ``m`` i.i.d. examples, an upper bound on
``R(B_Q)`` *simultaneously for every posterior* ``Q`` (so whatever learner chose ``Q`` from the
sample), provided that

* the prior ``P`` (uniform over ``[H, -H]`` unless given) was fixed before seeing the sample,
  and so were the voters: voters centred on training points (RBF voters), or stumps whose
  thresholds come from the training *inputs* (the papers' and this library's stumps: from the
  inputs' range, never from the labels) make the prior depend on the sample, a standard
  relaxation the papers share; voters learned from the labels void the bound (use a held-out
  part of the sample for them, or the test-set bound);
* the bound, ``delta`` and the bound's constants were fixed before seeing the sample: choosing
  the best of ``K`` values (bounds, priors, ``delta``, Catoni's ``C``, a loss's ``gamma``)
  costs ``delta / K`` each (the union bound). Each value here holds at ``delta`` *on its own*;
  :meth:`Certificate.best` applies the union bound over the bounds it compares, and
  :func:`pacbound._src.sweep.select_by_bound` over the grid it selects from.

Every bound is clipped to at most 1 (a probability). A posterior outside a bound's family
(the quasi-uniform one of laviolette2011 Thm 2) gets no value for it.

**Stochastic votes.** :data:`STOCHASTIC_BOUNDS` holds the bounds of the ``"dirichlet"``
family (:func:`register_bound` routes a spec there by its family): bounds on the expected risk
``E_{theta ~ Dir(alpha)} R(MV_theta)`` of a stochastic majority vote (zantedeschi2021), read
from :class:`StochasticStatistics` (its exact empirical risk and the Dirichlet KL) instead of
margin moments. They bound another object than ``R(B_Q)`` and are certified by
:func:`pacbound.certify.certify_dirichlet`; :func:`certify` refuses a result whose
``family`` is ``Family.DIRICHLET``.

**The Dirichlet margin bound** (``"dirichlet_margin"``, biggs2022,
:func:`pacbound.bounds.dirichlet_margin`) is in :data:`BOUNDS`, not in
:data:`STOCHASTIC_BOUNDS`: it bounds the same object as the others, the deterministic vote
``R(B_Q)`` of a posterior ``q`` over the voters, and reads statistics of ``q``'s votes; the
Dirichlet ``Dir(K q)`` only serves its proof. So :func:`certify` computes it for any ``q``
(a learner's categorical result, or ``minimize_dirichlet_bound(..., "margin")``'s) and
:attr:`Certificate.best` may compare it with the others. It needs two statistics the margin
moments do not give (``needs=("dirichlet",)``): the margin losses ``P_S(M <= gamma)`` over its
grid of thresholds (``VoteStatistics.margin_losses``) and ``KL(Dir(K q) || Dir(beta))``
over its grid of concentrations (``VoteStatistics.dirichlet_kls``), both computed from the
votes (:func:`dirichlet_margin_statistics`), with the prior ``Dir(N P)`` for the prior masses
``P`` over the ``N`` entries of ``q`` (``Dir(1, ..., 1)`` for the default uniform ``P``, the
paper's). It applies to ``{-1, +1}`` votes and to a ``q`` positive on every voter (its value is
1 otherwise); it is not a default bound.

**Second-order bounds from the margins.** For a weighted majority vote the per-example
``rho``-weighted error is ``W_i = (1 - M_i) / 2`` (``M = y F`` the margin): the share of the
vote's mass on voters that err for ``±1`` voters, the expected error of real-valued voters in
``[-1, 1]`` read as random ``±1`` voters (whose pair losses are the bilinear extensions, with
the same ranges). So the Gibbs risk is ``E[W] = (1 - mu1) / 2``, the tandem risk
(Masegosa et al. 2020) ``E[W^2]`` (:attr:`VoteStatistics.joint_error`), the rate of pairs with
exactly one error ``E[2 W (1 - W)] = (1 - mu2) / 2`` (:attr:`VoteStatistics.disagreement`):
TND, CCTND, PAC-Bayes-split-kl on the mu-tandem loss, CCPBUB (its second moment from the joint
error and the Gibbs risk: :meth:`VoteStatistics.mu_tandem_second_moment`) and PAC-Bound 2' are
functions of the margin moments on a complete sample (``n = n2 = m``); DIS and PAC-Bound 1'
also need the disagreement on unlabeled examples (``certify(..., H_unlabeled=...)``), CCPBB the
pairs' variances, which the margins do not give (computed from the votes, only when asked for).

**Precision.** At the Python boundary (concrete inputs) :func:`certify` computes in float64
whatever the JAX precision mode (``jax.enable_x64`` for the call), from the posterior and
votes it was given, and validates the posterior: non-negative, summing to 1 (to ``1e-4``, then
normalized exactly). Under ``jax.jit`` / ``jax.vmap`` (traced inputs) it computes in the
working precision, normalizes the posterior, and flags it: ``valid = False`` (a negative mass
or a sum off 1 by more than ``1e-4``) makes every bound the trivial 1. The bounds of
:mod:`pacbound._src.bounds` round outward, so a traced float32 certificate is only as exact as its
float32 statistics; take the concrete call for the float64 one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from pacbound._src import bounds
from pacbound._src.bounds import second_order as so
from pacbound._src.dirichlet import dirichlet_kl_upper
from pacbound._src.kl import kl_divergence, round_up
from pacbound._src.margins import correctness_votes, multiclass_margins
from pacbound._src.protocol import Family, LearnerResult
from pacbound._src.validation import check_delta, check_labels, check_votes, is_concrete


# ------------------------------------------------------------------------ the statistics
class VoteStatistics(NamedTuple):
    """What the bounds read from a posterior ``Q``'s votes on a sample of ``m`` examples.

    Attributes:
      mu1, mu2: first and second moments of the margin ``M = y F`` (roy2016 Definition 2).
      loss: the mean of a general loss of the margin (germain2009 §4; 0 when no bound needs
        it).
      kl: ``KL(Q||P)``.
      m: the number of examples.
      unlabeled_disagreement: the disagreement ``(1 - E[F^2]) / 2`` on unlabeled examples
        (``F`` the vote; no label needed), or ``None`` (DIS, PAC-Bound 1').
      m_unlabeled: their number, or ``None``.
      pair_variance: ``(c0, c1, c2)``, the ``Q^2``-average of the pairs' biased variances of
        the mu-tandem loss is ``c0 + c1 mu + c2 mu^2``
        (:func:`pacbound._src.bounds.second_order.mu_tandem_variance_coefficients`), or ``None``
        (CCPBB).
      margin_losses: ``(k,)`` the empirical margin losses ``P_S(M <= gamma)`` at the ``k``
        thresholds of a ``dirichlet_margin`` bound's grid, or ``None``.
      dirichlet_kls: ``(l,)`` ``KL(Dir(K q) || Dir(beta))`` at the ``l`` concentrations of its
        grid (``inf`` where the bound does not apply), or ``None``.
    """

    mu1: jax.Array
    mu2: jax.Array
    loss: jax.Array
    kl: jax.Array
    m: jax.Array
    unlabeled_disagreement: jax.Array | None = None
    m_unlabeled: jax.Array | None = None
    pair_variance: jax.Array | None = None
    margin_losses: jax.Array | None = None
    dirichlet_kls: jax.Array | None = None

    @property
    def gibbs_risk(self) -> jax.Array:
        """``R_S(G_Q) = (1 - mu1) / 2``, clipped to ``[0, 1]`` against rounding."""
        return jnp.clip((1.0 - self.mu1) / 2.0, 0.0, 1.0)

    @property
    def disagreement(self) -> jax.Array:
        """``d_S = (1 - mu2) / 2``, clipped to ``[0, min(1/2, 2 R_S)]`` (its domain: the joint
        error ``R_S - d_S / 2`` is never negative)."""
        return jnp.clip((1.0 - self.mu2) / 2.0, 0.0, jnp.minimum(0.5, 2.0 * self.gibbs_risk))

    @property
    def joint_error(self) -> jax.Array:
        """``e_S = R_S - d_S / 2``: the tandem risk ``E_{Q^2} P(h, h' both err)`` for ``±1``
        voters (Masegosa et al. 2020), ``E[((1 - M) / 2)^2]`` in general."""
        return jnp.maximum(self.gibbs_risk - self.disagreement / 2.0, 0.0)

    @property
    def ternary_rates(self) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``(both, one, neither)``: the ``Q^2``-rates of pairs where both, exactly one or
        neither voter errs, ``E[W^2]``, ``E[2 W (1 - W)]``, ``E[(1 - W)^2]`` (they sum to 1)."""
        both, one = self.joint_error, self.disagreement
        return both, one, jnp.maximum(1.0 - both - one, 0.0)

    def mu_tandem_risk(self, mu: ArrayLike) -> jax.Array:
        """``E_{Q^2}[L_mu] = E[(W - mu)^2] = T - 2 mu R_S + mu^2`` (Wu et al. 2021)."""
        return self.joint_error - 2.0 * mu * self.gibbs_risk + mu**2

    def mu_tandem_second_moment(self, mu: ArrayLike) -> jax.Array:
        """An upper bound on ``E_{Q^2} E_S[L_mu^2]``, exact for ``±1`` voters: ``(1 - 2 mu)^2
        T + 2 mu^2 (1 - 2 mu) R_S + mu^4`` (CCPBUB's second moment). Per example,
        ``E_{Q^2}[L_mu^2] = (E_Q[(l - mu)^2])^2`` (the pair is independent) and ``(l - mu)^2
        <= l (1 - 2 mu) + mu^2`` for ``l`` in ``[0, 1]`` (``l^2 <= l``, equality for ``l`` in
        ``{0, 1}``), both sides ``>= 0``, so squaring keeps the order: ``<= (W (1 - 2 mu) +
        mu^2)^2``, whose mean over the sample expands to the formula (``T = E[W^2]``)."""
        offset = jnp.asarray(mu)
        slope = 1.0 - 2.0 * offset
        return slope**2 * self.joint_error + 2.0 * offset**2 * slope * self.gibbs_risk + offset**4

    def mu_tandem_variance(self, mu: ArrayLike) -> jax.Array:
        """The ``Q^2``-average of the pairs' unbiased variances of the mu-tandem loss (needs
        ``pair_variance``)."""
        return so.mu_tandem_variance_at(_needs(self.pair_variance, "ccpbb"), mu, self.m)


class StochasticStatistics(NamedTuple):
    """What the bounds of the ``"dirichlet"`` family read from a stochastic vote on a sample.

    Attributes:
      risk: the empirical expected risk ``E_{theta ~ Dir(alpha)} R_S(MV_theta)`` (exact).
      kl: ``KL(Dir(alpha) || Dir(beta))``.
      m: the number of examples.
    """

    risk: jax.Array
    kl: jax.Array
    m: jax.Array


# ---------------------------------------------------------------------- bounds as pytrees
@functools.partial(
    jax.tree_util.register_dataclass, data_fields=["gamma", "c_grid"], meta_fields=["name", "loss"]
)
@dataclasses.dataclass(frozen=True)
class Bound:
    """A registered bound with its constants: ``name`` / ``loss`` static, the numbers
    (``gamma``, ``c_grid``) traced, so ``jax.vmap`` sweeps them with one compilation.

    Attributes:
      name: a key of :data:`BOUNDS`.
      loss: ``"exponential"`` or ``"quadratic"`` for ``"general_loss"`` (germain2009 §4).
      gamma: the loss's margin scale (``"general_loss"``), or the grid of margin thresholds
        of ``"dirichlet_margin"`` (:meth:`Bound.dirichlet_margin`).
      c_grid: the ``k`` values of the bound's free constant: Catoni's ``C`` (``"catoni"``,
        ``"general_loss"``) or the offset ``mu < 1/2`` of the mu-tandem loss (``"split_kl"``,
        ``"ccpbb"``, ``"ccpbub"``): each value gets ``delta / k`` (union bound); the certificate
        is the smallest bound over the grid, and a minimizer moves the constant continuously
        within the grid's range. For ``"dirichlet_margin"``: the concentrations ``K`` (no union
        bound: the PAC-Bayes bound holds for every ``Dir(K q)`` at once).
    """

    name: str
    loss: str = ""
    gamma: jax.Array | None = None
    c_grid: jax.Array | None = None

    @classmethod
    def catoni(cls, c_grid: ArrayLike | None = None) -> Bound:
        """``2 x`` germain2009 Thm 3.1 on ``R(B_Q)``, ``C`` over ``c_grid`` (default 32 values,
        geometric in ``[1e-2, 1e2]``) by a union bound (``delta / k`` each).

        Example:
          >>> import jax.numpy as jnp
          >>> Bound.catoni().c_grid.shape, Bound.catoni(jnp.array([0.5, 1.0, 2.0])).c_grid.shape
          ((32,), (3,))
        """
        return cls("catoni", c_grid=_grid(c_grid))

    @classmethod
    def general_loss(
        cls, loss: str = "exponential", gamma: ArrayLike = 1.0, c_grid: ArrayLike | None = None
    ) -> Bound:
        """germain2009 Thm 3.2 with the exponential loss ``exp(-M / gamma)`` or the quadratic
        loss ``(M / gamma - 1)^2`` of the margin ``M`` (§4), ``C'`` over ``c_grid`` as in
        :meth:`Bound.catoni`. germain2009 states it for ``±1`` voters. Choosing ``gamma`` among
        ``K`` values after seeing the sample costs ``delta / K``.

        Example:
          >>> b = Bound.general_loss("quadratic", 0.5)
          >>> b.name, b.loss, float(b.gamma), b.c_grid.shape
          ('general_loss', 'quadratic', 0.5, (32,))
        """
        return cls("general_loss", loss, jnp.asarray(gamma), _grid(c_grid))

    @classmethod
    def dirichlet_margin(
        cls, gamma_grid: ArrayLike | None = None, concentration_grid: ArrayLike | None = None
    ) -> Bound:
        """The Dirichlet margin bound (biggs2022; :func:`pacbound.bounds.dirichlet_margin`) on
        the deterministic vote of ``q``, the smallest over the margin thresholds
        ``gamma_grid`` (``k`` values fixed in advance, ``delta / k`` each) and the
        concentrations ``concentration_grid`` (free: no union bound). Defaults: the authors'
        1000 thresholds (``real_margin.py``: ``logspace(-4, log10(1/2), 1000,
        endpoint=False)`` on the wrong voters' weight, doubled here to margins: ``2e-4`` to
        ``1``) and 57 concentrations geometric in ``[1, 1e7]``. The grids are stored in the
        working precision (float32 unless x64 is on): the bound holds at those floats, the
        thresholds the margins are counted at.

        Example:
          >>> b = Bound.dirichlet_margin()
          >>> b.gamma.shape, round(float(b.gamma[0]), 6), b.c_grid.shape
          ((1000,), 0.0002, (57,))
          >>> Bound.dirichlet_margin([0.0, 0.1])
          Traceback (most recent call last):
            ...
          ValueError: dirichlet_margin's grids must be finite and > 0; got ...
        """
        gammas = (
            jnp.asarray(np.geomspace(2e-4, 1.0, 1000, endpoint=False))
            if gamma_grid is None
            else jnp.atleast_1d(jnp.asarray(gamma_grid))
        )
        ks = (
            jnp.geomspace(1.0, 1e7, 57)
            if concentration_grid is None
            else jnp.atleast_1d(jnp.asarray(concentration_grid))
        )
        for grid in (gammas, ks):
            if is_concrete(grid) and not (np.isfinite(grid).all() and (np.asarray(grid) > 0).all()):
                raise ValueError(
                    f"dirichlet_margin's grids must be finite and > 0; got {np.asarray(grid)}"
                )
        return cls("dirichlet_margin", gamma=gammas, c_grid=ks)


def _grid(c_grid: ArrayLike | None) -> jax.Array:
    return jnp.geomspace(1e-2, 1e2, 32) if c_grid is None else jnp.atleast_1d(jnp.asarray(c_grid))


def _mu_grid(mu_grid: ArrayLike | None) -> jax.Array:
    """The offsets ``mu``: default the 20 values ``-0.50, -0.45, ..., 0.45``, fixed in advance
    (a union bound over 20 costs ``ln 20 / m``; the papers search ``(-1/2, 1/2)``)."""
    grid = jnp.linspace(-0.5, 0.45, 20) if mu_grid is None else jnp.atleast_1d(jnp.asarray(mu_grid))
    if is_concrete(grid) and not np.all(np.asarray(grid) < 0.5):
        raise ValueError(f"every mu of the grid must be < 1/2; got max {np.max(grid)}")
    return grid


def split_kl_bound(mu_grid: ArrayLike | None = None) -> Bound:
    """Chebyshev-Cantelli with PAC-Bayes-split-kl on the mu-tandem loss (Wu and Seldin 2022)
    over a grid of ``k`` offsets ``mu`` fixed before seeing the sample, ``delta / k`` each
    (default the 20 values ``-0.50, -0.45, ..., 0.45``).

    Example:
      >>> [round(float(mu), 2) for mu in split_kl_bound().c_grid[:3]]  # -0.50, -0.45, ..., 0.45
      [-0.5, -0.45, -0.4]
      >>> split_kl_bound([0.0, 0.6])
      Traceback (most recent call last):
        ...
      ValueError: every mu of the grid must be < 1/2; got max ...
    """
    return Bound("split_kl", c_grid=_mu_grid(mu_grid))


def ccpbb_bound(mu_grid: ArrayLike | None = None) -> Bound:
    """CCPBB (Wu et al. 2021, Thm 15) over a grid of ``k`` offsets ``mu`` fixed before seeing
    the sample, ``delta / k`` each (default as :func:`split_kl_bound`).

    Example:
      >>> [float(mu) for mu in ccpbb_bound([0.0, 0.25]).c_grid]
      [0.0, 0.25]
    """
    return Bound("ccpbb", c_grid=_mu_grid(mu_grid))


_LOSSES: dict[str, tuple[Callable, Callable]] = {
    "exponential": (lambda margin, g: jnp.exp(-margin / g), bounds.exponential_loss_constants),
    "quadratic": (lambda margin, g: (margin / g - 1.0) ** 2, bounds.quadratic_loss_constants),
}


# ------------------------------------------------------------------------- the registry
class BoundSpec(NamedTuple):
    """A registered bound on ``R(B_Q)``.

    Attributes:
      name: the registry key.
      value: ``value(bound, stats, delta, c) -> R(B_Q) bound`` (``c``: Catoni's constant for a
        bound with a ``c_grid``, ignored otherwise), pure and differentiable; it may exceed 1
        (certificates are clipped at 1, objectives are not).
      reference: paper and theorem.
      family: ``"quasi_uniform"`` when the bound holds only for quasi-uniform posteriors on a
        self-complemented set (laviolette2011 Thm 2), ``"dirichlet"`` for a bound on a
        Dirichlet stochastic vote's expected risk (``value`` reads
        :class:`StochasticStatistics`; kept in :data:`STOCHASTIC_BOUNDS`), ``None`` for every
        posterior.
      grid: whether the bound takes a ``c_grid`` (Catoni's constant, or ``mu``; union bound
        over it).
      flat: whether ``value`` is the constant 1 on a region (a C-bound form where ``mu1 <= 0``,
        a bound clipped at 1), where a minimizer must follow another slope.
      default: whether :func:`certify` computes it when no bound is named (and what it needs
        was given).
      needs: the optional statistics it reads: ``"unlabeled"`` (the disagreement on unlabeled
        examples: :func:`certify`'s ``H_unlabeled``), ``"pair_variance"`` (computed from the
        votes by :func:`certify` when such a bound is asked for). ``()`` for the bounds of
        the margins alone (every consumer can compute them).
      grid_scale: how a minimizer's free parameter ``log_c`` maps to the grid's constant:
        ``"log"`` (``C = exp(log_c)``, Catoni's positive constant) or ``"linear"``
        (``mu = log_c``, an offset of either sign).
    """

    name: str
    # unclipped; the statistics are a StochasticStatistics for the dirichlet family
    value: Callable[[Bound, Any, ArrayLike, ArrayLike], jax.Array]
    reference: str
    family: str | None = None
    grid: bool = False
    flat: bool = False
    default: bool = True
    needs: tuple[str, ...] = ()
    grid_scale: str = "log"


BOUNDS: dict[str, BoundSpec] = {}
STOCHASTIC_BOUNDS: dict[str, BoundSpec] = {}


# the optional fields of VoteStatistics that each kind of BoundSpec.needs fills
_NEEDED_FIELDS = {
    "unlabeled": ("unlabeled_disagreement", "m_unlabeled"),
    "pair_variance": ("pair_variance",),
    "dirichlet": ("margin_losses", "dirichlet_kls"),
}


def register_bound(spec: BoundSpec) -> None:
    """Add (or replace) a bound in :data:`BOUNDS` (in :data:`STOCHASTIC_BOUNDS` for the
    ``"dirichlet"`` family); every consumer sees it from then on.

    Example:
      >>> from pacbound import bounds
      >>> spec = BoundSpec(
      ...     "seeger_copy",
      ...     lambda b, s, delta, c: 2.0 * bounds.seeger(s.gibbs_risk, s.kl, s.m, delta),
      ...     "2 x Seeger, registered again under another name",
      ...     default=False,
      ... )
      >>> register_bound(spec)
      >>> "seeger_copy" in BOUNDS
      True
      >>> del BOUNDS["seeger_copy"]  # leave the registry as it was

    Raises:
      ValueError: ``spec.needs`` names a statistic :func:`certify` does not compute.
    """
    unknown = set(spec.needs) - set(_NEEDED_FIELDS)
    if unknown:
        raise ValueError(
            f"{spec.name} needs {sorted(unknown)}: certify computes only {sorted(_NEEDED_FIELDS)}"
        )
    (STOCHASTIC_BOUNDS if spec.family == "dirichlet" else BOUNDS)[spec.name] = spec


for _spec in (
    BoundSpec(
        "seeger",
        lambda b, s, dl, c: 2.0 * bounds.seeger(s.gibbs_risk, s.kl, s.m, dl),
        "2 x Seeger / Maurer on R(G_Q) (Germain et al. JMLR 2015 eq. 3; R(B_Q) <= 2 R(G_Q))",
    ),
    BoundSpec(
        "pac_bound_0",
        lambda b, s, dl, c: bounds.pac_bound_0(s.gibbs_risk, s.kl, s.m, dl),
        "PAC-Bound 0, Germain et al. JMLR 2015",
        flat=True,
    ),
    BoundSpec(
        "catoni",
        lambda b, s, dl, c: 2.0 * bounds.catoni(s.gibbs_risk, s.kl, s.m, dl, c),
        "2 x germain2009 Theorem 3.1 (Catoni), C over a grid",
        grid=True,
    ),
    BoundSpec(
        "general_loss",
        lambda b, s, dl, c: bounds.general_loss(
            s.loss, s.kl, s.m, dl, c, *_LOSSES[b.loss][1](b.gamma)
        ),
        "germain2009 Theorem 3.2 (exponential / quadratic loss), C over a grid",
        grid=True,
        default=False,
    ),
    BoundSpec(
        "cbound_roy2016",
        lambda b, s, dl, c: bounds.cbound_roy2016(s.mu1, s.mu2, s.kl, s.m, dl),
        "roy2016 Theorem 2 (C-bound with KL)",
        flat=True,
    ),
    BoundSpec(
        "pac_bound_1",
        lambda b, s, dl, c: bounds.pac_bound_1(s.gibbs_risk, s.disagreement, s.kl, s.m, dl),
        "PAC-Bound 1, Germain et al. JMLR 2015",
        flat=True,
    ),
    BoundSpec(
        "pac_bound_2",
        lambda b, s, dl, c: bounds.pac_bound_2(s.gibbs_risk, s.disagreement, s.kl, s.m, dl),
        "PAC-Bound 2, Germain et al. JMLR 2015",
        flat=True,
    ),
    BoundSpec(
        "cbound_quasi_uniform",
        lambda b, s, dl, c: bounds.cbound_quasi_uniform(s.mu1, s.mu2, s.m, dl),
        "laviolette2011 Theorem 2 (KL-free, quasi-uniform posteriors, m > 8)",
        family="quasi_uniform",
        flat=True,
    ),
    BoundSpec(
        "dirichlet_seeger",
        lambda b, s, dl, c: bounds.seeger(s.risk, s.kl, s.m, dl),
        "Seeger / Maurer on E_{Dir(alpha)} R(MV_theta), zantedeschi2021 (no factor 2)",
        family="dirichlet",
    ),
    BoundSpec(
        "dirichlet_mcallester",
        lambda b, s, dl, c: bounds.mcallester(s.risk, s.kl, s.m, dl),
        "McAllester / Maurer on E_{Dir(alpha)} R(MV_theta), zantedeschi2021's code",
        family="dirichlet",
    ),
):
    register_bound(_spec)


# ------------------------------------------------------- second-order bounds (issue #16)
def _needs(value: jax.Array | None, name: str) -> jax.Array:
    """A statistic a bound needs, or a clear error where the caller could not provide it."""
    if value is None:
        how = "H_unlabeled" if name in ("dis", "pac_bound_1_prime") else "the votes"
        raise ValueError(
            f"{name} needs statistics beyond the margin moments: certify it with {how} "
            "(pacbound._src.certify.certify)"
        )
    return value


def _dis(b: Bound, s: VoteStatistics, dl, c) -> jax.Array:
    dis_u = _needs(s.unlabeled_disagreement, "dis")
    m_u = cast(jax.Array, s.m_unlabeled)  # given with the unlabeled disagreement
    return so.dis(s.gibbs_risk, dis_u, s.kl, s.m, m_u, dl, clip=False)


def _pac_bound_1_prime(b: Bound, s: VoteStatistics, dl, c) -> jax.Array:
    dis_u = _needs(s.unlabeled_disagreement, "pac_bound_1_prime")
    m_u = cast(jax.Array, s.m_unlabeled)  # given with the unlabeled disagreement
    return so.pac_bound_1_prime(s.gibbs_risk, dis_u, s.kl, s.m, m_u, dl)


def _split_kl(b: Bound, s: VoteStatistics, dl, mu) -> jax.Array:
    return so.split_kl_mu_tandem(*s.ternary_rates, s.kl, s.m, dl, mu, clip=False)


def _ccpbub(b: Bound, s: VoteStatistics, dl, mu) -> jax.Array:
    second = s.mu_tandem_second_moment(mu)
    return so.ccpbub(s.mu_tandem_risk(mu), second, s.kl, s.m, dl, mu, clip=False)


def _ccpbb(b: Bound, s: VoteStatistics, dl, mu) -> jax.Array:
    variance = s.mu_tandem_variance(mu)
    return so.ccpbb(s.mu_tandem_risk(mu), variance, s.kl, s.m, dl, mu, clip=False)


for _spec in (
    BoundSpec(
        "tnd",
        lambda b, s, dl, c: so.tnd_kl(s.joint_error, s.kl, s.m, dl, clip=False),
        "TND, Masegosa et al. NeurIPS 2020 (4 x PAC-Bayes-kl on the tandem risk, 2 KL)",
    ),
    BoundSpec(
        "tnd_lambda",
        lambda b, s, dl, c: so.tnd_lambda_optimal(s.joint_error, s.kl, s.m, dl, clip=False),
        "TND, lambda form at the optimal lambda, Masegosa et al. NeurIPS 2020 (never below tnd)",
        default=False,
    ),
    BoundSpec(
        "cctnd",
        lambda b, s, dl, c: so.cctnd_optimal(
            s.joint_error, s.gibbs_risk, s.kl, s.m, s.m, dl, clip=False
        ),
        "CCTND at the best mu (no union bound needed), Wu et al. NeurIPS 2021",
    ),
    BoundSpec(
        "split_kl",
        _split_kl,
        "Chebyshev-Cantelli + PAC-Bayes-split-kl on the mu-tandem loss, Wu and Seldin NeurIPS "
        "2022, mu over a grid",
        grid=True,
        grid_scale="linear",
    ),
    BoundSpec(
        "pac_bound_2_prime",
        lambda b, s, dl, c: so.pac_bound_2_prime(s.gibbs_risk, s.disagreement, s.kl, s.m, dl),
        "PAC-Bound 2', Germain et al. JMLR 2015 (the authors' code: a kl cap on the joint error)",
        flat=True,
    ),
    BoundSpec(
        "dis",
        _dis,
        "DIS, Masegosa et al. NeurIPS 2020 (disagreement on unlabeled examples)",
        needs=("unlabeled",),
    ),
    BoundSpec(
        "pac_bound_1_prime",
        _pac_bound_1_prime,
        "PAC-Bound 1', Germain et al. JMLR 2015 (disagreement on unlabeled examples)",
        flat=True,
        needs=("unlabeled",),
    ),
    BoundSpec(
        "pbub",
        lambda b, s, dl, c: 2.0 * so.pbub(s.gibbs_risk, s.gibbs_risk, s.kl, s.m, dl),
        "2 x PAC-Bayes-Unexpected-Bernstein on R(G_Q), Mhammedi et al. NeurIPS 2019 Thm 1 (the "
        "second moment of a [0, 1] loss at most its mean; R(B_Q) <= 2 R(G_Q))",
        default=False,
    ),
    BoundSpec(
        "ccpbub",
        _ccpbub,
        "CCPBUB, Wu et al. NeurIPS 2021: Chebyshev-Cantelli + PAC-Bayes-Unexpected-Bernstein "
        "(Mhammedi et al. 2019 Thm 1) on the mu-tandem loss, mu over a grid",
        grid=True,
        default=False,
        grid_scale="linear",
    ),
    BoundSpec(
        "ccpbb",
        _ccpbb,
        "CCPBB, Wu et al. NeurIPS 2021 Thm 15, mu over a grid",
        grid=True,
        default=False,
        needs=("pair_variance",),
        grid_scale="linear",
    ),
):
    register_bound(_spec)


# ------------------------------------------------ the Dirichlet margin bound (issue #39)
def dirichlet_margin_statistics(
    margins: jax.Array,
    rows: jax.Array,
    theta: jax.Array,
    beta: jax.Array,
    bound: Bound,
    slack: ArrayLike,
) -> tuple[jax.Array, jax.Array]:
    """``(margin_losses, dirichlet_kls)`` for a ``dirichlet_margin`` :class:`Bound`: the
    margin loss ``P_S(M <= gamma)`` at each threshold of ``bound.gamma`` on the 0/1 ``rows``,
    counting the margins within ``slack`` above a threshold (the margins' rounding, so the
    count is never below the exact one) and rounded up by the division's u; and
    ``KL(Dir(K theta) || Dir(beta))`` at each concentration of ``bound.c_grid``, rounded up
    past its rounding errors (:func:`pacbound._src.dirichlet.dirichlet_kl_upper`; ``inf``
    where ``theta`` has a zero: ``Dir(K theta)`` is not a Dirichlet). Traceable.

    Example:
      >>> import jax.numpy as jnp
      >>> b = Bound.dirichlet_margin([0.5, 1.0], [10.0])
      >>> losses, kls = dirichlet_margin_statistics(
      ...     jnp.array([0.2, 0.6, 1.0, 1.0]), jnp.ones(4), jnp.ones(3) / 3, jnp.ones(3), b, 0.0)
      >>> [round(float(x), 4) for x in losses], round(float(kls[0]), 3)  # 1 and 4 of 4
      ([0.25, 1.0], 0.607)
    """
    gammas, ks = cast(jax.Array, bound.gamma), cast(jax.Array, bound.c_grid)
    below = (margins[:, None] <= gammas[None, :] + slack).astype(margins.dtype)
    count = jnp.matmul(rows, below, precision=jax.lax.Precision.HIGHEST)
    losses = round_up(count / jnp.sum(rows), 1.0)
    kls = jax.vmap(lambda k: dirichlet_kl_upper(k * theta, beta))(ks)
    return losses, jnp.where(jnp.all(theta > 0) & jnp.all(beta > 0), kls, jnp.inf)


def _dirichlet_margin(b: Bound, s: VoteStatistics, dl, c) -> jax.Array:
    """The smallest :func:`pacbound.bounds.dirichlet_margin` over the grids, ``delta / k``
    for the ``k`` thresholds (1 where a KL is infinite)."""
    losses = _needs(s.margin_losses, "dirichlet_margin")
    kls = cast(jax.Array, s.dirichlet_kls)  # computed with the margin losses
    gammas, ks = cast(jax.Array, b.gamma), cast(jax.Array, b.c_grid)
    finite = jnp.isfinite(kls)
    values = bounds.dirichlet_margin(
        losses[:, None], jnp.where(finite, kls, 0.0)[None, :], s.m, dl / gammas.shape[0],
        ks[None, :], gammas[:, None],
    )  # fmt: skip
    return jnp.min(jnp.where(finite[None, :], values, 1.0))


register_bound(
    BoundSpec(
        "dirichlet_margin",
        _dirichlet_margin,
        "biggs2022's Dirichlet margin bound on the deterministic vote of q (gamma over a grid "
        "with a union bound, K free; concentration term derived here, module margin)",
        default=False,
        needs=("dirichlet",),
    )
)

DEFAULT_BOUNDS = tuple(name for name, spec in BOUNDS.items() if spec.default and not spec.needs)
"""The bounds :func:`certify` computes when none is named: every default one that needs
nothing but the margins (and those needing unlabeled votes when ``H_unlabeled`` is given)."""
DEFAULT_STOCHASTIC_BOUNDS = tuple(n for n, spec in STOCHASTIC_BOUNDS.items() if spec.default)


def as_bound(bound: str | Bound) -> Bound:
    """A checked :class:`Bound` from a name or a :class:`Bound`, its defaults filled in.

    Example:
      >>> as_bound("catoni").c_grid.shape  # the default grid of Catoni's C filled in
      (32,)
      >>> as_bound("no_such_bound")
      Traceback (most recent call last):
        ...
      ValueError: unknown bound 'no_such_bound'; choose one of (...)
    """
    out = bound if isinstance(bound, Bound) else Bound(str(bound))
    if out.name in STOCHASTIC_BOUNDS:
        raise ValueError(
            f"{out.name!r} bounds a Dirichlet stochastic vote: certify it with "
            "pacbound._src.stochastic_votes.certify_dirichlet"
        )
    if out.name not in BOUNDS:
        raise ValueError(f"unknown bound {out.name!r}; choose one of {tuple(BOUNDS)}")
    if out.name == "general_loss" and out.loss == "" and out.gamma is None:
        out = Bound.general_loss(c_grid=out.c_grid)
    if out.name == "dirichlet_margin" and (out.gamma is None or out.c_grid is None):
        out = Bound.dirichlet_margin(out.gamma, out.c_grid)
    if BOUNDS[out.name].grid and out.c_grid is None:
        linear = BOUNDS[out.name].grid_scale == "linear"
        out = dataclasses.replace(out, c_grid=_mu_grid(None) if linear else _grid(None))
    if out.name == "general_loss" and out.loss not in _LOSSES:
        raise ValueError(f"general_loss needs loss in {tuple(_LOSSES)}; got {out.loss!r}")
    return out


def vote_statistics(
    bound: Bound, margins: jax.Array, kl: jax.Array, m: ArrayLike, weights: ArrayLike | None = None
) -> VoteStatistics:
    """:class:`VoteStatistics` of the margins ``y F`` (of the whole sample, or a batch's
    estimate), means weighted by ``weights`` (``None``: all 1); ``m`` is the size of the whole
    sample, which the complexity terms use.

    Example:
      >>> import jax.numpy as jnp
      >>> margins = jnp.array([1 / 3, 1 / 3, 1 / 3, 1.0])  # a batch of a sample of 1000
      >>> s = vote_statistics(as_bound("seeger"), margins, jnp.float32(0.0), 1000)
      >>> float(s.mu1), round(float(s.mu2), 4), float(s.m), float(s.gibbs_risk)
      (0.5, 0.3333, 1000.0, 0.25)
    """

    def mean(x):
        return jnp.mean(x) if weights is None else jnp.sum(weights * x) / jnp.sum(weights)

    loss = 0.0
    if bound.name == "general_loss":
        loss = mean(_LOSSES[bound.loss][0](margins, bound.gamma))
    dtype = margins.dtype
    return VoteStatistics(
        mean(margins), mean(margins**2), jnp.asarray(loss, dtype), kl, jnp.asarray(m, dtype)
    )


def bound_value(bound: Bound, stats: VoteStatistics, delta, log_c=0.0) -> jax.Array:
    """The bound, unclipped, at the grid constant ``C = exp(log_c)`` (``mu = log_c`` for a
    linear grid) clipped to the grid's range (grid bounds, at level ``delta / k``); the
    objective of the gradient minimizers.

    Example:
      >>> import jax.numpy as jnp
      >>> s = vote_statistics(as_bound("seeger"), jnp.array([1 / 3, 1 / 3, 1 / 3, 1.0]), 0.0, 1000)
      >>> round(float(bound_value(as_bound("seeger"), s, 0.05)), 4)  # 2 x Seeger, Gibbs risk 0.25
      0.6079
      >>> round(float(bound_value(Bound.catoni(), s, 0.05, log_c=0.0)), 4)  # Catoni at C = 1
      0.8114
    """
    spec, level = BOUNDS[bound.name], delta
    c: ArrayLike = jnp.nan
    if spec.grid:
        c_grid = cast(jax.Array, bound.c_grid)  # a grid bound carries its grid
        c = jnp.exp(log_c) if spec.grid_scale == "log" else log_c
        c = jnp.clip(c, jnp.min(c_grid), jnp.max(c_grid))
        level = delta / c_grid.shape[0]
    return spec.value(bound, stats, level, c)


def certified_value(bound: Bound, stats: VoteStatistics, delta) -> tuple[jax.Array, jax.Array]:
    """``(bound, C)``: the registered bound at ``delta``, clipped to at most 1; for a grid
    bound the smallest value over ``c_grid`` at ``delta / k`` and the constant (``C`` or
    ``mu``) reaching it (``nan`` for the others).

    Example:
      >>> import jax.numpy as jnp
      >>> s = vote_statistics(as_bound("seeger"), jnp.array([1 / 3, 1 / 3, 1 / 3, 1.0]), 0.0, 1000)
      >>> value, c = certified_value(Bound.catoni(), s, 0.05)  # the best C of the grid
      >>> round(float(value), 4), round(float(c), 3)
      (0.6233, 0.195)
    """
    spec = BOUNDS[bound.name]
    if not spec.grid:
        value = spec.value(bound, stats, delta, jnp.nan)
        return jnp.minimum(value, 1.0), jnp.full((), jnp.nan, stats.mu1.dtype)
    c_grid = cast(jax.Array, bound.c_grid)  # a grid bound carries its grid
    level = delta / c_grid.shape[0]
    values = jax.vmap(lambda c: spec.value(bound, stats, level, c))(c_grid)
    best = jnp.argmin(values)
    return jnp.minimum(values[best], 1.0), c_grid[best]


# --------------------------------------------------------------------------- certify
class Certificate(NamedTuple):
    """What :func:`certify` returns.

    Attributes:
      bounds: ``{name: value}``, each a bound on ``R(B_Q)`` that holds with probability at
        least ``1 - delta`` on its own (module docstring), clipped to at most 1.
      c: ``{name: C}`` the grid constant reached by the grid bounds (Catoni's ``C``, or ``mu``
        for ``split_kl`` / ``ccpbb`` / ``ccpbub``), ``nan`` for the others.
      best: ``(name, value)``: the smallest of ``bounds`` recomputed at ``delta / K`` for the
        ``K`` bounds compared (the union bound), so it holds with probability ``1 - delta``.
        Traced (under ``jit``), the name is its index in ``bounds``, an array.
      statistics: the posterior's :class:`VoteStatistics` on the sample (Gibbs risk,
        disagreement and joint error as properties).
      majority_vote_risk: the empirical risk of ``B_Q`` (a tie counts as an error).
      delta: the confidence.
      valid: whether the posterior was a distribution (always ``True`` for concrete inputs,
        which are validated; under ``jit`` an invalid one makes every bound 1).
    """

    bounds: dict[str, jax.Array]
    c: dict[str, jax.Array]
    best: tuple[str | jax.Array, jax.Array]
    statistics: VoteStatistics
    majority_vote_risk: jax.Array
    delta: jax.Array
    valid: jax.Array


class _Posterior(NamedTuple):
    """A posterior ready to certify: the votes ``V`` ``(m, k)`` of its voters (their
    complements too when ``complemented``: ``q`` is then over ``[V, -V]``), its masses ``q``
    and the prior (masses of ``q``'s shape, or a uniform prior over ``size >= len(q)`` voters
    given as ``log_size``); ``unlabeled``: the votes of the same voters on unlabeled
    examples, or ``None``."""

    votes: Any
    q: Any
    prior: Any
    log_size: Any
    complemented: bool
    unlabeled: Any = None


_TOLERANCE = 1e-4  # |sum q - 1| accepted before normalizing (float32 learners' rounding)


def _posterior(posterior: Any, H: Any, prior: Any, H_unlabeled: Any = None) -> _Posterior:
    """Read a learner result, or masses over ``H``'s columns or over ``[H, -H]``; the
    unlabeled votes are ``H_unlabeled`` itself, or the stumps' votes on those features."""
    if isinstance(posterior, LearnerResult):
        family = posterior.family  # read when concrete (a vmapped certificate checks nothing)
        concrete = is_concrete(family)
        if concrete and bool(np.any(np.asarray(family) == Family.DIRICHLET)):
            raise ValueError(
                "a Dirichlet posterior is a stochastic vote, not a finite posterior (q is only "
                "its mean): certify it with pacbound.certify.certify_dirichlet(r.info"
                ".alpha, H, y), or read info.certified"
            )
        if concrete and bool(np.any(np.asarray(family) == Family.GAUSSIAN_MIXTURE)):
            raise ValueError(
                "a Gaussian mixture is not a posterior over a finite voter set: its certificate "
                "is info.certified (certify_margins with its KL upper bound)"
            )
        q = jnp.asarray(posterior.q)
        if posterior.voters is not None:  # a family's selected voters: H holds the features X
            V = posterior.voters.votes(H, dtype=q.dtype)
            log_size = jnp.log(jnp.asarray(posterior.prior_size, q.dtype))
            U = None if H_unlabeled is None else posterior.voters.votes(H_unlabeled, dtype=q.dtype)
            return _Posterior(V, q, None, log_size, True, U)
        complemented = q.shape[-1] == 2 * np.shape(H)[1]  # a multiclass result weighs H only
        return _Posterior(H, q, prior, None, complemented, _unlabeled(H_unlabeled, H))
    q = jnp.asarray(posterior)
    n = np.shape(H)[1]
    if q.shape in ((2 * n,), (n,)):
        return _Posterior(H, q, prior, None, q.shape == (2 * n,), _unlabeled(H_unlabeled, H))
    raise ValueError(
        f"the posterior has shape {q.shape}; H has {n} voters: give masses over H's {n} "
        f"columns or over the {2 * n} of [H, -H]"
    )


def _unlabeled(H_unlabeled: Any, H: Any) -> Any:
    """The unlabeled votes, checked: the same voters (columns) as ``H``, in ``[-1, 1]``."""
    if H_unlabeled is None:
        return None
    n = np.shape(H)[1]
    if np.ndim(H_unlabeled) != 2 or np.shape(H_unlabeled)[1] != n:
        raise ValueError(
            f"H_unlabeled must be (m', {n}): the same voters' votes on unlabeled examples; got "
            f"shape {np.shape(H_unlabeled)}"
        )
    if is_concrete(H_unlabeled):
        check_votes(H_unlabeled, "H_unlabeled")
    return H_unlabeled


def _kl(q: jax.Array, prior: jax.Array | None, log_size: jax.Array | None) -> jax.Array:
    """``KL(Q||P)``: against the prior's masses, or the uniform prior over ``exp(log_size)``
    voters (``sum q ln q + log_size``; voters off ``q``'s support have mass 0)."""
    if prior is not None:
        return kl_divergence(q, prior)
    size = cast(jax.Array, log_size)  # a posterior without prior masses has a log_size
    return jnp.sum(jax.scipy.special.xlogy(q, q)) + size


def is_quasi_uniform(q: jax.Array | np.ndarray) -> jax.Array:
    """Whether ``q`` over ``[H, -H]`` has ``Q(h_j) + Q(-h_j) = 1/n`` for every ``j`` (to
    ``1e-6 / n``): laviolette2011's quasi-uniform family.

    Example:
      >>> import jax.numpy as jnp
      >>> bool(is_quasi_uniform(jnp.array([0.5, 0.0, 0.0, 0.5])))  # Q(h) + Q(-h) = 1/2 for both
      True
      >>> bool(is_quasi_uniform(jnp.array([1.0, 0.0, 0.0, 0.0])))  # Q(h_1) + Q(-h_1) = 1
      False
    """
    n = q.shape[0] // 2
    return jnp.all(jnp.abs(q[:n] + q[n:] - 1.0 / n) <= 1e-6 / n)


def _fields_read(bound: Bound, extra: dict) -> dict:
    """The optional statistics of ``extra`` that ``bound`` reads: a bound gets only those, so
    that its compiled program (:func:`_certified_levels`) is the same whatever else the
    certificate computes."""
    read = {field for need in BOUNDS[bound.name].needs for field in _NEEDED_FIELDS[need]}
    return {field: value for field, value in extra.items() if field in read}


def _vote_table(margins, rows, kl, bound_list, extra=None):
    """The statistics each bound of ``bound_list`` reads (:class:`VoteStatistics` of the
    margins ``y F`` on the ``rows`` (0/1) of the sample, with the ``extra`` optional fields it
    needs), the posterior's own statistics (with every ``extra`` field) and its majority-vote
    risk."""
    m = jnp.sum(rows)
    extra = extra or {}
    stats = tuple(
        vote_statistics(b, margins, kl, m, rows)._replace(**_fields_read(b, extra))
        for b in bound_list
    )
    base = vote_statistics(Bound("seeger"), margins, kl, m, rows)._replace(**extra)
    return stats, base, jnp.sum(rows * (margins <= 0)) / m


def _certificate(table, valid, quasi, delta, bound_list):
    """Every bound of ``bound_list`` from the statistics of :func:`_vote_table`; an invalid
    posterior, or one outside a bound's family, gets the trivial 1. The statistics depend on
    the sample's shape, the bounds only on scalars: :func:`_bound_table` is compiled once per
    bound list and precision, whatever the number of examples or voters."""
    stats, base, risk = table
    values, cs, best = _bound_table(bound_list, stats, valid, quasi, delta)
    return values, cs, best, base, risk, valid


def _bound_table(bound_list, stats, valid, quasi, delta):
    """``(values, constants, (argmin, min))``: each bound at ``delta`` and, for the union bound
    of :attr:`Certificate.best`, at ``delta / K``."""
    levels = jnp.stack([delta, delta / len(bound_list)])
    values, cs, at_union = {}, {}, []
    for b, s in zip(bound_list, stats, strict=True):
        value, c = _certified_levels(b, s, levels)
        covered = valid & (quasi if BOUNDS[b.name].family == "quasi_uniform" else True)
        values[b.name], cs[b.name] = jnp.where(covered, value[0], 1.0), c[0]
        at_union.append(jnp.where(covered, value[1], 1.0))
    union = jnp.stack(at_union)
    return values, cs, (jnp.argmin(union), jnp.min(union))


@jax.jit
def _certified_levels(bound, stats, levels):
    """One bound at several confidence levels (one vmapped evaluation), compiled once per bound
    and precision: any selection of bounds, on any sample shape, reuses it."""
    return jax.vmap(lambda level: certified_value(bound, stats, level))(levels)


def _rows(rows: Any, y: jax.Array) -> jax.Array:
    return jnp.ones(y.shape, y.dtype) if rows is None else (rows > 0).astype(y.dtype)


def _extra_statistics(votes, y, rows, q, weights, unlabeled, bound_list, complemented, prior,
                      log_size):  # fmt: skip
    """The optional statistics the requested bounds need: the disagreement on the unlabeled
    votes (when given) and, only for a bound that needs them, the pairs' variance and the
    Dirichlet margin bound's statistics."""
    extra = {}
    for b in bound_list:
        if "dirichlet" in BOUNDS[b.name].needs:
            extra.update(_dirichlet_extra(votes, y, rows, q, weights, b, prior, log_size))
    if unlabeled is not None:
        votes_u = unlabeled.astype(q.dtype) @ weights
        extra["unlabeled_disagreement"] = jnp.clip((1.0 - jnp.mean(votes_u**2)) / 2.0, 0.0, 0.5)
        extra["m_unlabeled"] = jnp.asarray(unlabeled.shape[0], q.dtype)
    if any("pair_variance" in BOUNDS[b.name].needs for b in bound_list):
        extra["pair_variance"] = so.mu_tandem_variance_coefficients(votes, y, q, rows, complemented)
    return extra


def _dirichlet_extra(votes, y, rows, q, weights, bound, prior, log_size) -> dict:
    """The ``dirichlet_margin`` statistics of ``q``: the prior is ``Dir(N P)`` for prior masses
    ``P`` over the ``N`` entries of ``q`` (``Dir(1, ..., 1)`` for the uniform one, the
    paper's); a uniform prior over more voters than ``q`` has (a family's selected voters)
    and non-binary votes leave the bound at 1 (infinite KL). The margins' slack:
    ``2 (n + 4) u`` (normalizing ``q``, the weights' difference, ``n`` products and sums)."""
    size = q.shape[0]
    if prior is None:
        beta = jnp.ones_like(q)
        covered = jnp.abs(log_size - jnp.log(jnp.asarray(size, q.dtype))) <= 1e-9
    else:
        beta, covered = size * prior.astype(q.dtype), jnp.ones((), bool)
    covered = covered & jnp.all(jnp.abs(votes) == 1)
    margins = y * jnp.matmul(votes, weights, precision=jax.lax.Precision.HIGHEST)  # no TF32
    slack = 2.0 * (votes.shape[1] + 4) * float(jnp.finfo(q.dtype).eps) / 2.0
    losses, kls = dirichlet_margin_statistics(margins, rows, q, beta, bound, slack)
    return {"margin_losses": losses, "dirichlet_kls": jnp.where(covered, kls, jnp.inf)}


@functools.partial(jax.jit, static_argnames=("complemented",))
def _sample_statistics(votes, y, rows, q, prior, log_size, bound_list, unlabeled, *, complemented):
    dtype = q.dtype
    y = y.astype(dtype)
    rows = _rows(rows, y)
    total = jnp.sum(q)
    valid = (jnp.min(q) >= 0) & (jnp.abs(total - 1) <= _TOLERANCE)
    q = jnp.maximum(q, 0) / total
    n = votes.shape[1]
    weights = q[:n] - q[n:] if complemented else q
    margins = y * (votes.astype(dtype) @ weights)
    kl = _kl(q, prior, log_size)
    quasi = is_quasi_uniform(q) & (jnp.sum(rows) > 8) if complemented else jnp.zeros((), bool)
    extra = _extra_statistics(
        votes.astype(dtype), y, rows, q, weights, unlabeled, bound_list, complemented, prior,
        log_size,
    )  # fmt: skip
    return _vote_table(margins, rows, kl, bound_list, extra), valid, quasi


def _certify(votes, y, rows, q, prior, log_size, delta, bound_list, unlabeled, *, complemented):
    table, valid, quasi = _sample_statistics(
        votes, y, rows, q, prior, log_size, bound_list, unlabeled, complemented=complemented
    )
    return _certificate(table, valid, quasi, delta, bound_list)


@jax.jit
def _margin_statistics(margins, rows, kl, bound_list):
    return _vote_table(margins, _rows(rows, margins), kl, bound_list)


def _certify_margins(margins, rows, kl, quasi, delta, bound_list):
    table = _margin_statistics(margins, rows, kl, bound_list)
    return _certificate(table, jnp.ones((), bool), quasi, delta, bound_list)


def check_certificate_mask(sample_weight: Any, m: int) -> None:
    """A certificate's ``sample_weight`` (concrete): ``None`` or a ``(m,)`` 0/1 mask of the
    examples it is on (a fold), with at least one 1.

    Example:
      >>> check_certificate_mask([1, 0, 1], 3)  # a fold: examples 0 and 2
      >>> check_certificate_mask([0.5, 1.0, 1.0], 3)
      Traceback (most recent call last):
        ...
      ValueError: a certificate holds for an unweighted i.i.d. sample: sample_weight must be ...
    """
    if sample_weight is None:
        return
    w = np.asarray(sample_weight)
    if w.shape != (m,) or not np.isin(w, (0, 1)).all() or w.sum() < 1:
        raise ValueError(
            "a certificate holds for an unweighted i.i.d. sample: sample_weight must be a "
            f"({m},) 0/1 mask (a fold) with at least one 1"
        )


def _check_posterior(post: _Posterior, y: Any, delta: Any, sample_weight: Any, labels=True) -> None:
    """Concrete inputs: votes, labels, ``delta``, 0/1 weights and ``q`` a distribution (to
    ``1e-4``)."""
    m = np.shape(post.votes)[0]
    if labels:
        check_labels(y, m)
    check_votes(post.votes, "the votes")
    check_delta(delta)
    check_certificate_mask(sample_weight, m)
    q = np.asarray(post.q, np.float64)
    if not np.isfinite(q).all() or q.min() < 0 or abs(q.sum() - 1) > _TOLERANCE:
        raise ValueError(
            f"the posterior must be a distribution (masses >= 0 summing to 1); got min "
            f"{q.min():.6g} and sum {q.sum():.10g}: normalize it (q / q.sum()) if it is the vote "
            "you mean"
        )
    if post.prior is not None:
        p = np.asarray(post.prior, np.float64)
        if p.shape != q.shape or not (p > 0).all() or abs(p.sum() - 1) > 1e-6:
            raise ValueError(
                f"the prior must be positive masses summing to 1 with the posterior's shape "
                f"{q.shape}; got shape {p.shape}, sum {p.sum():.10g}"
            )


def _default_names(quasi: bool, unlabeled: bool) -> list[str]:
    """The default bounds that cover the posterior and whose statistics are at hand."""
    names = [n for n in DEFAULT_BOUNDS if BOUNDS[n].family is None or quasi]
    if unlabeled:
        names += [n for n, spec in BOUNDS.items() if spec.default and spec.needs == ("unlabeled",)]
    return names


def _requested(bounds_: Sequence[str | Bound] | None, post: _Posterior, m: int):
    """The bounds to compute: the named ones (a family the posterior is outside of, or a
    statistic that cannot be had, raises), or every default bound that covers the posterior
    (with DIS and PAC-Bound 1' when unlabeled votes are given)."""
    quasi = post.complemented and m > 8 and bool(is_quasi_uniform(np.asarray(post.q, np.float64)))
    if bounds_ is None:
        return tuple(as_bound(n) for n in _default_names(quasi, post.unlabeled is not None))
    chosen = tuple(as_bound(b) for b in bounds_)
    for b in chosen:
        if BOUNDS[b.name].family == "quasi_uniform" and not quasi:
            raise ValueError(
                f"{b.name} holds only for quasi-uniform posteriors over [H, -H] "
                "(Q(h) + Q(-h) = 1/n for every voter) and m > 8; this posterior is not one"
            )
        if "unlabeled" in BOUNDS[b.name].needs and post.unlabeled is None:
            raise ValueError(f"{b.name} needs unlabeled examples: pass H_unlabeled")
        if "pair_variance" in BOUNDS[b.name].needs and m < 2:
            raise ValueError(f"{b.name} needs at least 2 examples (an empirical variance)")
        if "dirichlet" in BOUNDS[b.name].needs:
            check_votes(post.votes, "the votes", binary=True)
    if len({b.name for b in chosen}) < len(chosen):
        raise ValueError("name each bound once")
    return chosen


def certify(
    posterior: Any,
    H: ArrayLike,
    y: ArrayLike,
    *,
    bounds: Sequence[str | Bound] | None = None,
    delta: ArrayLike = 0.05,
    prior: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    H_unlabeled: ArrayLike | None = None,
    num_classes: int | None = None,
) -> Certificate:
    """Every registered PAC-Bayes bound on the true risk of a majority vote, on its sample.

    A vote of ``K`` classes (``H`` of shape ``(m, n, K)`` class probabilities, or ``(m, n)``
    class labels with ``num_classes=K``; ``y`` in ``0..K-1``) is certified as the binary
    problem :func:`~pacbound._src.margins.correctness_votes` ``(C, 1)`` whose margins are
    ``1 - 2 w`` (``w`` the posterior's mass on wrong classes): every margin-moment bound holds
    for it, since the vote errs only where ``w >= 1/2`` (docs: "Multiclass votes"). Its
    posterior weighs the ``n`` voters (a label voter's complement is no voter), against the
    uniform prior over them by default, and ``majority_vote_risk`` is the multiclass vote's.

    Args:
      posterior: a learner's result (:class:`pacbound._src.solvers.LearnerResult`), or masses over
        the ``n`` columns of ``H`` or over the ``2n`` of ``[H, -H]``.
      H: the ``(m, n)`` votes the posterior weighs (the training sample's), or, for a
        matrix-free result, the features ``X`` its ``stumps`` vote on.
      y: labels in ``{-1, +1}``, ``(m,)``.
      bounds: names or :class:`Bound` objects (:meth:`Bound.catoni`,
        :meth:`Bound.general_loss`); default every bound of :data:`DEFAULT_BOUNDS` whose family
        covers the posterior.
      delta: the confidence, in ``(0, 1]``; each bound holds with ``1 - delta`` on its own.
      prior: masses of the prior over the posterior's voters, fixed before seeing the sample;
        default uniform over ``[H, -H]`` (over ``H``'s columns for masses over them; over every
        candidate stump and its complement for a matrix-free result).
      sample_weight: a 0/1 mask of the examples of the sample (e.g. a fold's training
        examples; traced masks are read as ``weight > 0``); default all of them.
      H_unlabeled: ``(m', n)`` votes of the same voters on unlabeled examples drawn from the
        same distribution (for a matrix-free result, their features): the disagreement of DIS
        and PAC-Bound 1' is estimated on them (the labeled ``H`` may be appended, its labels
        unused). With it, the default bounds include those two. Binary votes only.
      num_classes: ``K`` for ``(m, n)`` class-label votes (static); ``None`` for ``±1`` votes
        or ``(m, n, K)`` class probabilities (``K`` is their last axis).

    Returns:
      :class:`Certificate`. Concrete inputs are validated and computed in float64 (module
      docstring); traced ones in the working precision.

    Raises:
      ValueError: a posterior that is not a distribution, malformed votes or labels, ``delta``
        outside ``(0, 1]``, an unknown bound, a named bound whose family (quasi-uniform)
        does not cover the posterior, or one that needs unlabeled votes not given.

    Example:
      >>> import jax.numpy as jnp
      >>> rows = jnp.array([[1., 1., -1.], [1., -1., 1.], [1., -1., -1.], [1., 1., 1.]])
      >>> H, y = jnp.tile(rows, (250, 1)), jnp.tile(jnp.array([1., 1., -1., 1.]), 250)  # m = 1000
      >>> cert = certify(jnp.ones(3) / 3, H, y, bounds=["seeger", "cbound_roy2016"])
      >>> float(cert.majority_vote_risk), float(cert.statistics.gibbs_risk)  # voters err 1 in 4
      (0.0, 0.25)
      >>> {name: round(float(v), 4) for name, v in sorted(cert.bounds.items())}
      {'cbound_roy2016': 0.6936, 'seeger': 0.6079}
      >>> cert.best[0], round(float(cert.best[1]), 4)  # the best at delta / 2
      ('seeger', 0.6133)
    """
    if num_classes is not None or np.ndim(H) == 3:
        return _certify_multiclass(
            posterior, H, y, num_classes, H_unlabeled, bounds, delta, prior, sample_weight
        )
    return _certify_posterior(
        _posterior(posterior, H, prior, H_unlabeled), y, bounds, delta, sample_weight
    )


def _certify_posterior(post, y, bounds, delta, sample_weight, labels=True) -> Certificate:
    """:func:`certify` of a read posterior (``labels``: check that ``y`` is ``±1`` with both
    classes; the correctness votes of a multiclass vote have ``y = 1``)."""
    if post.prior is None and post.log_size is None:  # uniform over the posterior's voters
        post = post._replace(log_size=np.log(np.shape(post.q)[0]))
    arrays = (post.votes, y, post.q, post.prior, delta, sample_weight, post.unlabeled)
    if not is_concrete(*arrays):
        names = bounds or _default_names(True, post.unlabeled is not None)
        return _run(post, y, sample_weight, delta, tuple(as_bound(b) for b in names))
    _check_posterior(post, y, delta, sample_weight, labels)
    m = np.shape(post.votes)[0] if sample_weight is None else int(np.sum(sample_weight))
    chosen = _requested(bounds, post, m)
    with jax.enable_x64(True):
        post = post._replace(
            votes=np.asarray(post.votes, np.float64),
            q=_float64(post.q),
            prior=_float64(post.prior),
            log_size=_float64(post.log_size),
            unlabeled=_float64(post.unlabeled),
        )
        return _to_numpy(_run(post, _float64(y), _float64(sample_weight), _float64(delta), chosen))


def _certify_multiclass(
    posterior, votes, y, num_classes, H_unlabeled, bounds, delta, prior, sample_weight
) -> Certificate:
    """:func:`certify` of a vote of ``K`` classes on its correctness votes ``(C, 1)``, with the
    multiclass vote's empirical risk."""
    if H_unlabeled is not None:
        raise ValueError("H_unlabeled (DIS, PAC-Bound 1') is for binary votes only")
    q = posterior.q if isinstance(posterior, LearnerResult) else posterior
    n = np.shape(votes)[1] if np.ndim(votes) >= 2 else 0
    if np.shape(q)[-1] != n:
        raise ValueError(
            f"a multiclass posterior weighs the {n} voters (a label voter's complement -h is no "
            f"voter of K classes); got masses of shape {np.shape(q)}"
        )
    mask = None if sample_weight is None else (jnp.asarray(sample_weight) > 0)
    concrete = is_concrete(q, votes, y, mask)
    with jax.enable_x64(True) if concrete else contextlib.nullcontext():  # float64 if concrete
        if concrete:
            votes = np.asarray(votes, np.float64) if np.ndim(votes) == 3 else votes
            q = np.asarray(q, np.float64)
        C = correctness_votes(votes, y, num_classes)
        ones = jnp.ones(C.shape[0], C.dtype)
        post = _posterior(posterior, C, prior)
        cert = _certify_posterior(post, ones, bounds, delta, sample_weight, labels=False)
        risk = multiclass_margins(votes, y, q, num_classes, mask).majority_vote_risk
    return cert._replace(majority_vote_risk=cast(Any, np.asarray(risk)) if concrete else risk)


def certify_margins(
    margins: ArrayLike,
    kl: ArrayLike,
    *,
    bounds: Sequence[str | Bound] | None = None,
    delta: ArrayLike = 0.05,
    sample_weight: ArrayLike | None = None,
    quasi_uniform: bool = False,
) -> Certificate:
    """The registered bounds from a posterior's margins ``y_i E_{h~Q} h(x_i)`` and its
    ``KL(Q||P)`` (or an upper bound on it: every bound increases with ``KL``).

    For posteriors that are not masses over a given voter matrix (a Gaussian mixture over
    linear voters, roy2016 §3) and for callers that kept the margins rather than the votes
    (the estimators). Same contract as :func:`certify` (float64 for concrete inputs). A bound
    of the quasi-uniform family applies only when ``quasi_uniform`` says the posterior is
    quasi-uniform over a self-complemented set (:func:`is_quasi_uniform`) and ``m > 8``.

    Example:
      >>> import jax.numpy as jnp
      >>> margins = jnp.tile(jnp.array([1 / 3, 1 / 3, 1 / 3, 1.0]), 250)  # m = 1000
      >>> cert = certify_margins(margins, 0.0, bounds=["seeger", "cbound_roy2016"])
      >>> {name: round(float(v), 4) for name, v in sorted(cert.bounds.items())}
      {'cbound_roy2016': 0.6936, 'seeger': 0.6079}
    """
    if bounds is None:
        bounds = [n for n in DEFAULT_BOUNDS if BOUNDS[n].family is None or quasi_uniform]
    chosen = tuple(as_bound(b) for b in bounds)
    if not quasi_uniform and any(BOUNDS[b.name].family is not None for b in chosen):
        raise ValueError("bounds of the quasi-uniform family need a quasi-uniform posterior")
    for b in chosen:
        if BOUNDS[b.name].needs:
            raise ValueError(
                f"{b.name} needs {BOUNDS[b.name].needs[0]} statistics that the margins do not "
                "give: certify it with the votes (pacbound._src.certify.certify)"
            )
    quasi = jnp.asarray(quasi_uniform) & (np.shape(margins)[0] > 8)
    if not is_concrete(margins, kl, delta, sample_weight):
        dtype = jnp.result_type(margins, float)
        out = _certify_margins(margins, sample_weight, kl, quasi, delta, _cast(chosen, dtype))
        return _finish(chosen, out, delta)
    check_delta(delta)
    with jax.enable_x64(True):
        args = (_float64(margins), _float64(sample_weight), _float64(kl), quasi, _float64(delta))
        out = _certify_margins(*args, _cast(chosen, jnp.float64))
        return _to_numpy(_finish(chosen, out, delta))


def _float64(x: Any) -> Any:
    return x if x is None else np.asarray(x, np.float64)


def _cast(chosen: tuple[Bound, ...], dtype) -> tuple[Bound, ...]:
    """The bounds' numbers in the working dtype."""
    return tuple(jax.tree.map(lambda v: jnp.asarray(v, dtype), b) for b in chosen)


def _finish(chosen: tuple[Bound, ...], out: tuple, delta: Any) -> Certificate:
    values, cs, (at, best), stats, risk, valid = out
    names = [b.name for b in chosen]
    best_name = names[int(at)] if is_concrete(at) else at
    return Certificate(values, cs, (best_name, best), stats, risk, jnp.asarray(delta), valid)


def _to_numpy(cert: Certificate) -> Certificate:
    """A float64 certificate as NumPy values (they outlive the ``enable_x64`` context)."""
    name, best = cert.best
    # best is converted apart (its name is no array): None keeps it out of the tree map
    plain = jax.tree.map(np.asarray, cert._replace(best=cast(Any, None)))
    return plain._replace(best=(name, np.asarray(best)))


def _run(post: _Posterior, y: Any, rows: Any, delta: Any, chosen: tuple[Bound, ...]):
    dtype = jnp.result_type(post.q, float)
    out = _certify(
        post.votes, jnp.asarray(y), rows, post.q, post.prior, post.log_size,
        jnp.asarray(delta, dtype), _cast(chosen, dtype), post.unlabeled,
        complemented=post.complemented,
    )  # fmt: skip
    return _finish(chosen, out, delta)
