"""Second-order PAC-Bayes bounds on the risk of a weighted majority vote ``MV_rho``.

Every function is pure, jittable, differentiable in the statistics and ``kl`` (``rho`` enters
only through them), broadcasts over its numeric arguments and is vmappable; each returns a
bound on ``L(MV_rho)`` in ``[0, 1]`` (``clip=False``: the raw value, at least 0, that a
minimizer follows above 1) that holds with probability at least ``1 - delta`` for all
posteriors ``rho`` simultaneously (and for all values of the free parameter where the
docstring says so). The statistics come from :mod:`pacbound._src.loss_statistics` (or, for one
vote, from its margins: :mod:`pacbound._src.certify`); ``kl`` is ``KL(rho||pi)`` (pairs pay
``KL(rho^2||pi^2) = 2 KL``); ``n`` counts the examples of the Gibbs risk (``min_j |OOB_j|`` out
of bag) and ``n2`` those of the pair statistics (``min_{j,k} |OOB_j cap OOB_k|``). Concrete
arguments are checked against their domains (:mod:`pacbound.bounds`, "Domains"; traced ones
are not): ``delta`` in ``(0, 1]``, ``mu < 1/2`` (``<= 1/2`` where only ``K_mu`` reads it),
``lam`` in ``(0, 2)``, sizes ``>= 1`` (``n2 >= 2`` for the Bennett bounds and CCPBB), grid
ratios ``> 1``, risks, tandem risks and rates in ``[0, 1]``, a KL and a variance ``>= 0``.

Modules, one concept each (every public name is re-exported here):

* :mod:`~pacbound._src.bounds.second_order.tandem`: PAC-Bayes-kl on the Gibbs and tandem losses: the
  first-order bound, TND (kl and lambda forms), DIS, CCTND ([MLIS20], [WMLIS21]).
* :mod:`~pacbound._src.bounds.second_order.split_kl`: PAC-Bayes-split-kl and its bound on the
  mu-tandem
  loss ([WS22]).
* :mod:`~pacbound._src.bounds.second_order.bennett`: PAC-Bayes-Bennett, the variance bound and
  CCPBB with
  their lambda / gamma grids ([WMLIS21] Thms 9, 13, 15; [TS13]).
* :mod:`~pacbound._src.bounds.second_order.unexpected_bernstein`: PAC-Bayes-Unexpected-Bernstein
  and CCPBUB, its Chebyshev-Cantelli form on the mu-tandem loss ([MGG19] Thm 1, [WMLIS21]).
* :mod:`~pacbound._src.bounds.second_order.germain`: PAC-Bound 1' and 2' ([GLLMR15]).
* :mod:`~pacbound._src.bounds.second_order.cbound_forms`: the C-bound's Seeger, McAllester and
  joint forms on a vote of any number of classes, out of bag ([VGHM21]).
* :mod:`~pacbound._src.bounds.second_order.pair_variance`: CCPBB's average pair variance from a
  vote's
  votes (what :func:`pacbound.certify.certify` needs beyond the margins).
* :mod:`~pacbound._src.bounds.second_order.common`: the parametric Chebyshev-Cantelli oracle bound
  and the conventions shared by the others.

Sources: [MLIS20] Masegosa, Lorenzen, Igel, Seldin, NeurIPS 2020 (arXiv 2007.13532);
[WMLIS21] Wu, Masegosa, Lorenzen, Igel, Seldin, NeurIPS 2021 (arXiv 2106.13624); [WS22] Wu,
Seldin, NeurIPS 2022 (arXiv 2206.00706); [GLLMR15] Germain, Lacasse, Laviolette, Marchand,
Roy, JMLR 16, 2015; [VGHM21] Viallard, Germain, Habrard, Morvant, ECML-PKDD 2021; [MGG19]
Mhammedi, Grünwald, Guedj, NeurIPS 2019 (arXiv 1905.13367); [TS13] Tolstikhin, Seldin,
NeurIPS 2013.
"""

from pacbound._src.bounds.second_order.bennett import (
    GRID_SIZE,
    ccpbb,
    ccpbb_over_mu,
    mu_tandem_range,
    pac_bayes_bennett,
    variance_upper_bound,
)
from pacbound._src.bounds.second_order.cbound_forms import (
    cbound_joint,
    cbound_mcallester,
    cbound_seeger,
)
from pacbound._src.bounds.second_order.common import chebyshev_cantelli
from pacbound._src.bounds.second_order.germain import pac_bound_1_prime, pac_bound_2_prime
from pacbound._src.bounds.second_order.pair_variance import (
    mu_tandem_variance_at,
    mu_tandem_variance_coefficients,
)
from pacbound._src.bounds.second_order.split_kl import pac_bayes_split_kl, split_kl_mu_tandem
from pacbound._src.bounds.second_order.tandem import (
    cctnd,
    cctnd_optimal,
    cctnd_optimal_mu,
    dis,
    first_order_kl,
    tnd_kl,
    tnd_lambda,
    tnd_lambda_optimal,
    tnd_optimal_lambda,
)
from pacbound._src.bounds.second_order.unexpected_bernstein import ccpbub, pbub

__all__ = [
    "GRID_SIZE",
    "cbound_joint",
    "cbound_mcallester",
    "cbound_seeger",
    "ccpbb",
    "ccpbb_over_mu",
    "ccpbub",
    "cctnd",
    "cctnd_optimal",
    "cctnd_optimal_mu",
    "chebyshev_cantelli",
    "dis",
    "first_order_kl",
    "mu_tandem_range",
    "mu_tandem_variance_at",
    "mu_tandem_variance_coefficients",
    "pac_bayes_bennett",
    "pac_bayes_split_kl",
    "pac_bound_1_prime",
    "pac_bound_2_prime",
    "pbub",
    "split_kl_mu_tandem",
    "tnd_kl",
    "tnd_lambda",
    "tnd_lambda_optimal",
    "tnd_optimal_lambda",
    "variance_upper_bound",
]
