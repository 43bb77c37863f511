"""Every PAC-Bayes bound of pacbound, as pure functions of statistics of a sample.

Each function takes the statistics a theorem reads (risks, margin moments, tandem risks, KL,
sample sizes) and ``delta``, is jittable, differentiable, broadcasts over its numeric
arguments, and returns a certified value: never below the exact value of its formula for the
given floats, in float32 and float64 (see each module's "Certified values"). The registry that
names them for certification and for the minimizers is :mod:`pacbound._src.certify`.

Domains: called with concrete arguments, every function checks each of them elementwise
against its theorem's domain (its ``domains`` attribute, :func:`pacbound._src.validation.domains`)
and raises a ``ValueError`` naming the function, the argument and a value outside it: sizes
``>= 1`` (or more where the theorem needs it), ``delta`` in ``(0, 1]``, a KL, a variance or a
level ``>= 0``, a risk, joint error or rate in ``[0, 1]``, a disagreement in ``[0, 1/2]``,
``mu < 1/2``, grid ratios ``> 1``, and never NaN; a statistic rounded at most ``1e-6`` past a
closed end is clipped instead. Under ``jax.jit``, ``jax.vmap`` or ``jax.grad`` the traced
arguments are not checked (the compiled program checks nothing).

* :mod:`~pacbound._src.bounds.first_order`: Gibbs-risk bounds (McAllester, Seeger's kl form,
  Catoni), the majority-vote bounds of germain2015 (PAC-Bound 0, 1, 2) and the C-bound forms
  (roy2016 Thm 3, laviolette2011 Thm 2), the general-loss bound of germain2009 and the
  empirical Bernstein bound.
* :mod:`~pacbound._src.bounds.second_order`: the bounds since 2019: the tandem bounds TND and DIS
  (Masegosa et al. 2020), CCTND and CCPBB (Wu et al. 2021), PAC-Bayes-split-kl on the
  mu-tandem loss (Wu and Seldin 2022), PAC-Bound 1' and 2' (germain2015),
  PAC-Bayes-Unexpected-Bernstein (Mhammedi et al. 2019) and CCPBUB (Wu et al. 2021).
* :mod:`~pacbound._src.bounds.margin`: the Dirichlet margin bound on the deterministic vote
  (biggs2022).
* :mod:`~pacbound._src.bounds.recursive`: Recursive PAC-Bayes (Wu, Zhang, Chérief-Abdellatif,
  Seldin 2024) with PAC-Bayes-split-kl for losses of ``K`` values.
* :mod:`~pacbound._src.bounds.test_set`: the binomial test-set bound (Langford 2005 Thm 3.3) and
  its use on a majority vote's held-out errors.

Every public name of the three modules is available here, e.g.
``pacbound._src.bounds.seeger``, ``pacbound._src.bounds.tnd_kl``,
``pacbound._src.bounds.binomial_tail_inversion``.
"""

from pacbound._src.bounds import first_order, margin, recursive, second_order, test_set
from pacbound._src.bounds.first_order import *  # noqa: F403
from pacbound._src.bounds.margin import *  # noqa: F403
from pacbound._src.bounds.recursive import *  # noqa: F403
from pacbound._src.bounds.second_order import *  # noqa: F403
from pacbound._src.bounds.test_set import *  # noqa: F403

__all__ = [
    "first_order",
    "margin",
    "recursive",
    "second_order",
    "test_set",
    *first_order.__all__,
    *margin.__all__,
    *recursive.__all__,
    *second_order.__all__,
    *test_set.__all__,
]
