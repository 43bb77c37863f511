"""Every PAC-Bayes bound of pacbound, as pure functions of statistics of a sample."""

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
    "cctnd",
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
    "quadratic_loss_constants",
    "seeger",
    "split_kl_mu_tandem",
    "tnd_kl",
    "tnd_lambda",
    "xi",
]
