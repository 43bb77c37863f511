"""What the second-order bounds share: the dtype rule, Maurer's confidence term, the clip to
``[0, 1]`` and the parametric Chebyshev-Cantelli oracle bound of [WMLIS21].

* ``as_floats(*stats)``: the statistics in one float dtype (``None`` passes through).
* ``maurer_term(n, delta, factor)``: ``ln(factor sqrt(n) / delta)``.
* ``clip_unit(x, clip)``: ``x`` clipped to ``[0, 1]`` when ``clip`` (a bound on a probability).
* ``chebyshev_cantelli(numerator, mu)``: ``[numerator]_+ / (1/2 - mu)^2``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["as_floats", "chebyshev_cantelli", "clip_unit", "maurer_term"]


def as_floats(*stats: ArrayLike | None) -> list[jax.Array | None]:
    """The statistics in one float dtype: float32, float64 when a float input is float64.

    Sizes such as ``n`` are cast to it afterwards, so a Python or NumPy integer never promotes.

    Example:
      >>> [None if s is None else str(s.dtype) for s in as_floats(1, 0.5, None)]
      ['float32', 'float32', None]
    """
    dtype = jnp.result_type(*(s for s in stats if s is not None), float)
    return [None if s is None else jnp.asarray(s, dtype) for s in stats]


def maurer_term(n: jax.Array, delta: jax.Array, factor: float) -> jax.Array:
    """``ln(factor sqrt(n) / delta)``: Maurer's (2004) term of PAC-Bayes-kl, ``factor = 2`` per
    inequality (``4`` when ``delta`` is split between two).

    Example:
      >>> round(float(maurer_term(1000.0, 0.05, 2.0)), 4)  # ln(2 sqrt(1000) / 0.05)
      7.1428
    """
    return jnp.log(factor * jnp.sqrt(n)) - jnp.log(delta)


def clip_unit(x: jax.Array, clip: bool = True) -> jax.Array:
    """``x`` clipped to ``[0, 1]`` when ``clip`` (a certificate), at least 0 otherwise (the raw
    value a minimizer follows above 1).

    Example:
      >>> import jax.numpy as jnp
      >>> x = jnp.array([-0.1, 0.5, 1.2])
      >>> [round(float(v), 4) for v in clip_unit(x)]
      [0.0, 0.5, 1.0]
      >>> [round(float(v), 4) for v in clip_unit(x, False)]  # only at least 0
      [0.0, 0.5, 1.2]
    """
    return jnp.clip(x, 0.0, 1.0) if clip else jnp.maximum(x, 0.0)


def chebyshev_cantelli(numerator: jax.Array, mu: jax.Array) -> jax.Array:
    """The parametric Chebyshev-Cantelli oracle bound of [WMLIS21] (Wu, Masegosa, Lorenzen,
    Igel, Seldin, NeurIPS 2021, Sec. 3; "Thm 7" in the authors' scripts): for every
    ``mu < 1/2``,

    .. math:: L(MV_\\rho) \\le \\frac{\\mathbb E_{\\rho^2}[L_\\mu(h, h')]}{(1/2 - \\mu)^2},
              \\quad L_\\mu(h, h') = (1[h \\text{ errs}] - \\mu)(1[h' \\text{ errs}] - \\mu),

    from ``MV`` erring only where ``W = E_rho[1[h errs]] >= 1/2`` and Cantelli's inequality
    on ``(W - mu)^2``. ``numerator`` is an upper bound on ``E_{rho^2}[L_mu] = E[(W - mu)^2]
    >= 0``, so its negative part is dropped. Unclipped above (see ``clip_unit``).

    Example:
      >>> round(float(chebyshev_cantelli(0.05, 0.0)), 4)  # mu = 0: four times the tandem risk
      0.2
    """
    return jnp.maximum(numerator, 0.0) / (0.5 - mu) ** 2
