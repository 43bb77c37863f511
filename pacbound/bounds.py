"""Every PAC-Bayes bound of pacbound, as pure functions of statistics of a sample.

Each function takes the statistics a theorem reads (risks, margin moments, tandem risks, KL,
sample sizes) and ``delta``, is jittable, differentiable, broadcasts over its numeric arguments,
and returns a certified value: never below the exact value of its formula for the given floats,
in float32 and float64. Arguments are validated only at concrete inputs (never under a trace).
The registry that names them for certification and for the minimizers is
:mod:`pacbound.certify`.

* Gibbs-risk bounds: :func:`mcallester`, :func:`seeger`, :func:`catoni`, :func:`general_loss`
  (germain2009 Thm 3.2, with :func:`exponential_loss_constants` /
  :func:`quadratic_loss_constants`), :func:`empirical_bernstein`;
* majority-vote bounds of germain2015: :func:`pac_bound_0`, :func:`pac_bound_1`,
  :func:`pac_bound_2` (with :func:`xi`), the C-bound forms :func:`cbound_roy2016` (roy2016
  Thm 2) and :func:`cbound_quasi_uniform` (laviolette2011 Thm 2);
* second-order bounds: :func:`tnd_kl`, :func:`tnd_lambda`, :func:`dis` (Masegosa et al. 2020),
  :func:`cctnd`, :func:`ccpbb`, :func:`pac_bayes_bennett` (Wu et al. 2021),
  :func:`split_kl_mu_tandem`, :func:`pac_bayes_split_kl` (Wu and Seldin 2022),
  :func:`pac_bound_1_prime`, :func:`pac_bound_2_prime`, :func:`pbub` (PAC-Bayes-Unexpected-
  Bernstein, Mhammedi et al. 2019) and :func:`ccpbub` (its Chebyshev-Cantelli form on the
  mu-tandem loss, Wu et al. 2021);
* the margin bound of the deterministic vote through Dirichlet posteriors:
  :func:`dirichlet_margin` (biggs2022);
* Recursive PAC-Bayes (Wu, Zhang, Chérief-Abdellatif, Seldin 2024):
  :func:`recursive_pac_bayes_bound` (its one-stage case is PAC-Bayes-split-kl for ``K`` values);
* test-set bounds: :func:`binomial_tail_inversion`, :func:`majority_vote_test_set_bound`
  (Langford 2005 Thm 3.3).
"""

from pacbound._src.bounds.first_order import (
    catoni,
    cbound_quasi_uniform,
    cbound_roy2016,
    empirical_bernstein,
    exponential_loss_constants,
    general_loss,
    mcallester,
    pac_bound_0,
    pac_bound_1,
    pac_bound_2,
    quadratic_loss_constants,
    seeger,
    xi,
)
from pacbound._src.bounds.margin import dirichlet_margin
from pacbound._src.bounds.recursive import recursive_pac_bayes_bound
from pacbound._src.bounds.second_order.bennett import (
    ccpbb,
    pac_bayes_bennett,
)
from pacbound._src.bounds.second_order.germain import (
    pac_bound_1_prime,
    pac_bound_2_prime,
)
from pacbound._src.bounds.second_order.split_kl import (
    pac_bayes_split_kl,
    split_kl_mu_tandem,
)
from pacbound._src.bounds.second_order.tandem import (
    cctnd,
    dis,
    tnd_kl,
    tnd_lambda,
)
from pacbound._src.bounds.second_order.unexpected_bernstein import ccpbub, pbub
from pacbound._src.bounds.test_set import (
    binomial_tail_inversion,
    majority_vote_test_set_bound,
)

__all__ = [
    "binomial_tail_inversion",
    "catoni",
    "cbound_quasi_uniform",
    "cbound_roy2016",
    "ccpbb",
    "ccpbub",
    "cctnd",
    "dirichlet_margin",
    "dis",
    "empirical_bernstein",
    "exponential_loss_constants",
    "general_loss",
    "majority_vote_test_set_bound",
    "mcallester",
    "pac_bayes_bennett",
    "pac_bayes_split_kl",
    "pac_bound_0",
    "pac_bound_1",
    "pac_bound_1_prime",
    "pac_bound_2",
    "pac_bound_2_prime",
    "pbub",
    "quadratic_loss_constants",
    "recursive_pac_bayes_bound",
    "seeger",
    "split_kl_mu_tandem",
    "tnd_kl",
    "tnd_lambda",
    "xi",
]
