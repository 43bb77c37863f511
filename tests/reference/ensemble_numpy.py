"""Independent NumPy/SciPy reference for the mu-grid bounds of an ensemble's vote (what
``pacbound.ensemble_bounds`` certifies as ``ccpbb`` and ``split_kl``), never importing pacbound.

- wu2021 (Wu, Masegosa, Lorenzen, Igel, Seldin, NeurIPS 2021), Thm 15: CCPBB, Chebyshev-Cantelli
  with PAC-Bayes-Bennett and the empirical variance bound on the tandem loss with offset mu,
  ``L(MV) <= PBB_mu / (1/2 - mu)^2`` (``second_order_numpy.ccpbb_bound``);
- wu2022 (Wu, Seldin, NeurIPS 2022), Sec. 4: Chebyshev-Cantelli with PAC-Bayes-split-kl on the
  same loss split at its middle value (``second_order_numpy.split_kl_tandem_bound``).

The offset enters the loss, so each mu is its own inequality: the bound is the minimum over a
grid fixed before the data, each grid value at ``delta / |grid|`` (the union bound). The grid
is the one pacbound's documentation states, 40 values in ``[-1/2, 1/2)`` with step 1/40.
"""

import numpy as np

from tests.reference import second_order_numpy as SO

MU_GRID = -0.5 + np.arange(40) / 40.0


def grid_bounds(E, rho, kl, n2, delta, mask=None, mu_grid=MU_GRID):
    """``{"ccpbb": values, "split_kl": values}``: each bound at every ``mu`` of ``mu_grid`` with
    confidence ``delta / len(mu_grid)`` (the certificate is their minimum), from the error
    matrix ``E`` (``(n, voters)``, 0/1), the posterior ``rho``, ``KL(rho||pi)``, the pair
    sample size ``n2`` and the out-of-bag ``mask`` (``None``: every example for every voter)."""
    share = delta / len(mu_grid)
    ccpbb, split = [], []
    for mu in mu_grid:
        tandem = SO.mu_tandem_risk(E, rho, mu, mask)
        variance = SO.mu_tandem_variance(E, rho, mu, mask)
        ccpbb.append(SO.ccpbb_bound(tandem, variance, kl, n2, share, mu))
        plus, minus = SO.mu_tandem_split_risks(E, rho, mu, mask)
        split.append(SO.split_kl_tandem_bound(plus, minus, kl, n2, share, mu))
    return {"ccpbb": np.array(ccpbb), "split_kl": np.array(split)}
