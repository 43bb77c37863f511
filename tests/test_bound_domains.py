"""The bounds' domains: every public bound (and kl / C-bound function of sample statistics)
refuses, at concrete inputs, each argument outside its theorem's domain with a ``ValueError``
naming the argument, elementwise for arrays, and checks nothing under ``jax.jit``,
``jax.vmap`` or ``jax.grad`` (issue #36, point 6).

The table below is written from the theorems, not read from the declarations; the coverage
test ties the two together (every public function declares its domains, and every declared
argument has out-of-domain cases here).
"""

import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound import cbound as cbound_face  # its private module lists no names of its own
from pacbound._src import bounds, cbound, kl  # every checked function, public or not
from pacbound._src.validation import UNIT, domains

NAN, INF = math.nan, math.inf
GIBBS = {"risk": 0.1, "kl": 1.0, "m": 1000, "delta": 0.05}
BAD_GIBBS = {
    "risk": [-0.1, 1.5, NAN],
    "kl": [-1.0, NAN],
    "m": [0, 0.5, INF, NAN],
    "delta": [0.0, -0.1, 2.0, NAN],
}
COMMON = {"kl": [-1.0, NAN], "delta": [0.0, 2.0, NAN]}  # the KL and the confidence of any bound
H = [[1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
Y = [1.0, 1.0, -1.0, 1.0]
Q3 = [1 / 3, 1 / 3, 1 / 3]

# function: (arguments inside the domain, {argument: values outside it})
CASES = {
    bounds.mcallester: (GIBBS, BAD_GIBBS),
    bounds.seeger: (GIBBS, BAD_GIBBS),
    bounds.catoni: ({**GIBBS, "c": 1.0}, {**BAD_GIBBS, "c": [0.0, -1.0, INF, NAN]}),
    bounds.exponential_loss_constants: ({"gamma": 1.0}, {"gamma": [0.0, -1.0, NAN]}),
    bounds.quadratic_loss_constants: ({"gamma": 1.0}, {"gamma": [0.0, -1.0, NAN]}),
    bounds.general_loss: (
        {
            "empirical_loss": 0.3,
            "kl": 1.0,
            "m": 1000,
            "delta": 0.05,
            "c": 1.0,
            "c_a": 3.0,
            "k_bar": 4 / 3,
        },
        {
            "empirical_loss": [NAN, INF],
            **COMMON,
            "m": [0],
            "c": [0.0],
            "c_a": [0.0, NAN],
            "k_bar": [0.5, NAN],
        },
    ),
    bounds.cbound_roy2016: (
        {"mu1": 0.6, "mu2": 0.5, "kl": 1.0, "m": 1000, "delta": 0.05},
        {"mu1": [-1.5, 1.5, NAN], "mu2": [-0.1, 1.5, NAN], **COMMON, "m": [0]},
    ),
    bounds.cbound_quasi_uniform: (
        {"mu1": 0.6, "mu2": 0.5, "m": 1000, "delta": 0.05, "bound": 1.0},
        {
            "mu1": [NAN, -INF],
            "mu2": [-0.1, NAN],
            "m": [8, 5],
            "delta": [0.0, 2.0],
            "bound": [0.0, -1.0],
        },
    ),
    bounds.empirical_bernstein: (
        {"mean": 0.1, "variance": 0.09, "m": 1000, "delta": 0.05},
        {"mean": [-0.1, 1.5], "variance": [-0.1, NAN], "m": [1, 0], "delta": [0.0, 2.0]},
    ),
    bounds.xi: ({"m": 1000}, {"m": [-1, INF, NAN]}),
    bounds.dirichlet_margin: (
        {
            "margin_loss": 0.05,
            "kl": 5.0,
            "m": 2000,
            "delta": 0.05,
            "concentration": 1000.0,
            "gamma": 0.5,
        },
        {
            "margin_loss": [-0.1, 1.5, NAN],
            **COMMON,
            "m": [0, INF],
            "concentration": [0.0, -1.0, INF, NAN],
            "gamma": [0.0, -0.5, NAN],
        },
    ),
    bounds.pac_bound_0: (
        {"gibbs_risk": 0.1, "kl": 1.0, "m": 1000, "delta": 0.05},
        {"gibbs_risk": [-0.1, 1.5], **COMMON, "m": [0]},
    ),
    **{
        f: (
            {"gibbs_risk": 0.2, "disagreement": 0.25, "kl": 1.0, "m": 1000, "delta": 0.05},
            {"gibbs_risk": [-0.1, 1.5], "disagreement": [-0.1, 0.6, NAN], **COMMON, "m": [0]},
        )
        for f in (bounds.pac_bound_1, bounds.pac_bound_2, bounds.pac_bound_2_prime)
    },
    bounds.pac_bound_1_prime: (
        {
            "gibbs_risk": 0.2,
            "disagreement": 0.3,
            "kl": 1.0,
            "m": 1000,
            "m_unlabeled": 5000,
            "delta": 0.05,
        },
        {"gibbs_risk": [1.5], "disagreement": [0.6], **COMMON, "m": [0], "m_unlabeled": [0.5]},
    ),
    bounds.first_order_kl: (
        {"gibbs_risk": 0.2, "kl": 1.0, "n": 1000, "delta": 0.05},
        {"gibbs_risk": [-0.1, 1.5, NAN], **COMMON, "n": [0, NAN]},
    ),
    **{
        f: (
            {"tandem_risk": 0.05, "kl": 1.0, "n2": 1000, "delta": 0.05},
            {"tandem_risk": [-0.1, 1.5, NAN], **COMMON, "n2": [0]},
        )
        for f in (bounds.tnd_kl, bounds.tnd_optimal_lambda, bounds.tnd_lambda_optimal)
    },
    bounds.tnd_lambda: (
        {"tandem_risk": 0.05, "kl": 1.0, "n2": 1000, "delta": 0.05, "lam": 0.5},
        {"tandem_risk": [1.5], **COMMON, "n2": [0], "lam": [0.0, 2.0, -1.0, NAN]},
    ),
    bounds.dis: (
        {"gibbs_risk": 0.2, "disagreement": 0.3, "kl": 1.0, "n": 1000, "m": 1000, "delta": 0.05},
        {"gibbs_risk": [1.5], "disagreement": [-0.1, 1.5], **COMMON, "n": [0], "m": [0]},
    ),
    bounds.cctnd: (
        {
            "tandem_risk": 0.05,
            "gibbs_risk": 0.2,
            "kl": 1.0,
            "n": 1000,
            "n2": 1000,
            "delta": 0.05,
            "mu": 0.0,
        },
        {
            "tandem_risk": [1.5],
            "gibbs_risk": [-0.1],
            **COMMON,
            "n": [0],
            "n2": [0],
            "mu": [0.5, 1.0, NAN],
        },
    ),
    **{
        f: (
            {
                "tandem_risk": 0.02,
                "gibbs_risk": 0.2,
                "kl": 1.0,
                "n": 1000,
                "n2": 1000,
                "delta": 0.05,
            },
            {"tandem_risk": [1.5], "gibbs_risk": [-0.1, NAN], **COMMON, "n": [0], "n2": [0]},
        )
        for f in (bounds.cctnd_optimal_mu, bounds.cctnd_optimal)
    },
    bounds.pac_bayes_split_kl: (
        {
            "plus_mean": 0.05,
            "minus_mean": 0.1,
            "kl": 1.0,
            "n": 1000,
            "delta": 0.05,
            "a": -1.0,
            "mid": 0.0,
            "b": 1.0,
        },
        {
            "plus_mean": [-0.1],
            "minus_mean": [-0.1, NAN],
            **COMMON,
            "n": [0],
            "a": [-INF, NAN],
            "mid": [2.0, -2.0, NAN],
            "b": [INF, NAN],
        },
    ),
    bounds.recursive_pac_bayes_bound: (
        {
            "rates": [[0.9, 0.2, 0.1]],
            "kl": [1.0],
            "n": [100.0],
            "delta": 0.05,
            "values": [[-0.5, 0.0, 0.5, 1.0]],
            "gamma": [0.5],
        },
        {
            "rates": [-0.1, 1.5, NAN],
            **COMMON,
            "n": [0, NAN],
            "values": [INF, NAN],
            "gamma": [-1.0, NAN],
        },
    ),
    bounds.split_kl_mu_tandem: (
        {
            "both": 0.05,
            "one": 0.3,
            "neither": 0.65,
            "kl": 1.0,
            "n2": 1000,
            "delta": 0.05,
            "mu": 0.0,
            "n_mu": 1,
        },
        {
            "both": [1.5],
            "one": [-0.1],
            "neither": [1.5, NAN],
            **COMMON,
            "n2": [0],
            "mu": [0.5, 1.0],
            "n_mu": [0],
        },
    ),
    bounds.mu_tandem_range: ({"mu": 0.25}, {"mu": [0.75, NAN]}),
    bounds.variance_upper_bound: (
        {"variance": 0.04, "kl": 1.0, "n2": 1000, "delta": 0.05, "mu": 0.0, "c1": 1.05},
        {"variance": [-0.1, NAN], **COMMON, "n2": [1, 1.5], "mu": [0.75], "c1": [1.0, 0.5]},
    ),
    bounds.pac_bayes_bennett: (
        {
            "mean": 0.05,
            "variance_bound": 0.07,
            "kl": 1.0,
            "n2": 1000,
            "delta": 0.05,
            "mu": 0.0,
            "variance_delta": 0.05,
            "c2": 1.05,
        },
        {
            "mean": [NAN],
            "variance_bound": [-0.1],
            **COMMON,
            "n2": [1],
            "mu": [0.75],
            "variance_delta": [0.0, 2.0],
            "c2": [1.0],
        },
    ),
    bounds.ccpbb: (
        {
            "mu_tandem_risk": 0.05,
            "mu_tandem_variance": 0.04,
            "kl": 1.0,
            "n2": 1000,
            "delta": 0.05,
            "mu": 0.0,
            "n_mu": 1,
            "c1": 1.05,
            "c2": 1.05,
        },
        {
            "mu_tandem_risk": [NAN],
            "mu_tandem_variance": [-0.1],
            **COMMON,
            "n2": [1],
            "mu": [0.5],
            "n_mu": [0],
            "c1": [1.0],
            "c2": [0.5],
        },
    ),
    bounds.ccpbb_over_mu: (
        {
            "mu_grid": [0.0, 0.1, 0.2],
            "mu_tandem_risks": [0.05, 0.03, 0.02],
            "mu_tandem_variances": [0.04, 0.04, 0.04],
            "kl": 1.0,
            "n2": 1000,
            "delta": 0.05,
            "c1": 1.05,
            "c2": 1.05,
        },
        {
            "mu_grid": [0.5, NAN],
            "mu_tandem_risks": [NAN],
            "mu_tandem_variances": [-0.1],
            **COMMON,
            "n2": [1],
            "c1": [1.0],
            "c2": [1.0],
        },
    ),
    bounds.pbub: (
        {"loss": 0.1, "second_moment": 0.1, "kl": 1.0, "n": 1000, "delta": 0.05, "b": 1.0},
        {
            "loss": [NAN, INF],
            "second_moment": [-0.1, NAN],
            **COMMON,
            "n": [0, 0.5, NAN],
            "b": [0.0, -1.0, INF, NAN],
        },
    ),
    bounds.ccpbub: (
        {
            "mu_tandem_risk": 0.05,
            "mu_tandem_second_moment": 0.03,
            "kl": 1.0,
            "n2": 1000,
            "delta": 0.05,
            "mu": 0.0,
            "n_mu": 1,
        },
        {
            "mu_tandem_risk": [NAN, -INF],
            "mu_tandem_second_moment": [-0.1, NAN],
            **COMMON,
            "n2": [0, NAN],
            "mu": [0.5, 1.0, NAN],
            "n_mu": [0],
        },
    ),
    **{  # the C-bound forms of Viallard et al. 2021 (cbound_forms)
        f: (
            {"gibbs_risk": 0.2, "split_rate": 0.3, "kl": 1.0, "n": 1000, "n2": 800, "delta": 0.05},
            {
                "gibbs_risk": [-0.1, 1.5, NAN],
                "split_rate": [-0.1, 1.5, NAN],
                **COMMON,
                "n": [0, NAN],
                "n2": [0, NAN],
            },
        )
        for f in (bounds.cbound_seeger, bounds.cbound_mcallester)
    },
    bounds.cbound_joint: (
        {"joint_error": 0.05, "split_rate": 0.3, "kl": 1.0, "n2": 800, "delta": 0.05},
        {"joint_error": [-0.1, 1.5, NAN], "split_rate": [-0.1, 1.5], **COMMON, "n2": [0]},
    ),
    bounds.chebyshev_cantelli: (
        {"numerator": 0.05, "mu": 0.0},
        {"numerator": [NAN], "mu": [0.5, NAN]},
    ),
    bounds.mu_tandem_variance_coefficients: (
        {"votes": H, "y": Y, "q": Q3, "rows": [1.0, 1.0, 1.0, 0.0]},
        {"votes": [2.0, NAN], "y": [2.0], "q": [-0.1, 1.5], "rows": [2.0]},
    ),
    bounds.mu_tandem_variance_at: (
        {"coefficients": [0.0972, -0.3333, 0.4444], "mu": 0.0, "m": 4},
        {"coefficients": [NAN, INF], "mu": [0.75], "m": [0]},
    ),
    bounds.binomial_log_cdf: (
        {"k": 3, "n": 10, "p": 0.3},
        {"k": [-1, 11, NAN], "n": [0], "p": [-0.1, 1.5, NAN]},
    ),
    bounds.binomial_tail_inversion: (
        {"k": 3, "n": 10, "delta": 0.05},
        {"k": [-1, 11], "n": [0], "delta": [0.0, 2.0, NAN]},
    ),
    bounds.majority_vote_test_set_bound: (
        {
            "predictions": [[0, 0, 1], [1, 2, 2], [2, 0, 1]],
            "y": [0, 2, 1],
            "rho": Q3,
            "delta": 0.05,
            "classes": [0, 1, 2],
        },
        {"delta": [0.0, 2.0, NAN]},
    ),
    # pacbound.kl
    kl.kl_divergence: ({"q": [0.5, 0.5], "p": [0.25, 0.75]}, {"q": [-0.1, 1.5], "p": [NAN]}),
    kl.binary_kl: ({"q": 0.5, "p": 0.25}, {"q": [-0.1, 1.5], "p": [1.5, NAN]}),
    kl.binary_kl_interval: ({"q": 0.1, "p": 0.3}, {"q": [-0.1], "p": [1.5, NAN]}),
    kl.trinomial_kl: (
        {"q1": 0.5, "q2": 0.0, "p1": 0.25, "p2": 0.0},
        {"q1": [-0.1], "q2": [1.5], "p1": [NAN], "p2": [-0.5]},
    ),
    **{
        f: ({"q": 0.1, "eps": 0.05}, {"q": [-0.1, 1.5, NAN], "eps": [-1.0, NAN]})
        for f in (kl.kl_inv_upper, kl.kl_inv_lower, kl.kl_inv_upper_interval)
    },
    kl.gaussian_mixture_kl_bound: (
        {"q": [0.5, 0.5], "centers": [[1.0, 0.0], [0.0, 2.0]]},
        {"q": [-0.5], "centers": [NAN, INF]},
    ),
    kl.quasi_uniform_kl: ({"w": [1 / 3, 0.0, 0.0]}, {"w": [NAN, INF]}),
    # pacbound.cbound
    cbound.cbound: ({"mu1": 0.5, "mu2": 0.5}, {"mu1": [1.5, -1.5, NAN], "mu2": [-0.5, 1.5]}),
    cbound.cbound_from_risk: (
        {"gibbs_risk": 0.25, "disagreement": 0.25},
        {"gibbs_risk": [-0.1, 1.5], "disagreement": [0.75, NAN]},
    ),
    cbound.empirical_cbound: (
        {"H": H, "y": Y, "q": Q3},
        {"H": [2.0, NAN], "y": [-2.0], "q": [1.5]},
    ),
    cbound.multiclass_cbound: (  # class labels (or probabilities) and y: _check_multiclass
        {"votes": np.full((4, 3, 2), 0.5), "y": [0, 1, 1, 0], "q": Q3},
        {"votes": [-1.0, NAN], "q": [1.5, NAN]},
    ),
    cbound.cbound_upper: ({"mu1": 0.5, "mu2": 0.5}, {"mu1": [NAN, INF], "mu2": [-0.5]}),
    cbound.cbound_trinomial_sup: (
        {"joint_error": 0.1, "disagreement": 0.2, "eps": 0.05, "joint_error_cap": 0.3},
        {"joint_error": [1.5], "disagreement": [0.6], "eps": [-1.0], "joint_error_cap": [NAN]},
    ),
}
UNCHECKED = {kl.round_up, kl.round_down, bounds.majority_vote_errors}  # no sample statistics
NOT_DIFFERENTIABLE = {bounds.exponential_loss_constants}  # rounded up by nextafter


def _name(fn) -> str:
    return fn.__name__


def _replaced(value, bad, array: bool):
    """``bad`` itself, or ``value`` as an array (``(2, 1)`` for a scalar) with its last element
    replaced by ``bad`` (always for an array ``value``)."""
    if not array:
        return bad
    x = np.array(value, np.float64)
    x = np.full((2, 1), x) if x.ndim == 0 else x.copy()  # (2, 1): broadcasts against a grid
    x.flat[-1] = bad
    return x


def _positional(fn, arguments: dict) -> list:
    """The arguments in signature order, defaults filling the gaps."""
    parameters = list(inspect.signature(fn).parameters.values())
    last = max(i for i, p in enumerate(parameters) if p.name in arguments)
    values = [arguments.get(p.name, p.default) for p in parameters[: last + 1]]
    return [np.asarray(v) if isinstance(v, list) else v for v in values]


def _cases(both_forms: bool) -> list:
    """``(fn, arg, bad, array)`` for every out-of-domain value: a scalar argument replaced by it
    and (``both_forms``) as one element of an array, an array argument as one element."""
    return [
        pytest.param(fn, arg, bad, array, id=f"{_name(fn)}-{arg}={bad}{'-array' * array}")
        for fn, (good, bad_values) in CASES.items()
        for arg, values in bad_values.items()
        for bad in values
        for array in ((True,) if np.ndim(good[arg]) else (False, True)[: 1 + both_forms])
    ]


def test_every_public_function_declares_its_domains_and_is_tested():
    public = {
        getattr(module, name)
        for module in (bounds, kl, cbound_face)
        for name in module.__all__
        if callable(getattr(module, name)) and not inspect.ismodule(getattr(module, name))
    }
    assert public - UNCHECKED == set(CASES)
    for fn, (good, bad_values) in CASES.items():
        assert set(fn.domains) == set(bad_values), _name(fn)
        assert set(good) <= set(inspect.signature(fn).parameters), _name(fn)


@pytest.mark.parametrize(("fn", "arg", "bad", "array"), _cases(both_forms=True))
def test_out_of_domain_raises_naming_the_argument(fn, arg, bad, array):
    good, _ = CASES[fn]
    arguments = {**good, arg: _replaced(good[arg], bad, array)}
    with pytest.raises(ValueError, match=rf"^{_name(fn)}: {arg} must lie in "):
        fn(**arguments)


@pytest.mark.parametrize(("fn", "arg", "bad", "array"), _cases(both_forms=False))
def test_out_of_domain_under_jit_does_not_raise(fn, arg, bad, array):
    good, _ = CASES[fn]
    arguments = {**good, arg: _replaced(good[arg], bad, array)}
    jax.jit(fn).trace(*_positional(fn, arguments))  # traced, never checked


@pytest.mark.parametrize(
    ("fn", "arg"),
    [
        pytest.param(fn, arg, id=f"{_name(fn)}-{arg}")
        for fn, (_, bad_values) in CASES.items()
        for arg in bad_values
    ],
)
def test_out_of_domain_under_vmap_and_grad_does_not_raise(fn, arg):
    good, bad_values = CASES[fn]
    bad = _replaced(good[arg], bad_values[arg][0], np.ndim(good[arg]) > 0)
    args = _positional(fn, good)
    i = list(inspect.signature(fn).parameters).index(arg)
    batch = np.stack([np.asarray(good[arg], np.float64), np.broadcast_to(bad, np.shape(good[arg]))])
    in_axes = [None] * len(args)
    in_axes[i] = 0
    jax.make_jaxpr(jax.vmap(fn, in_axes=in_axes))(*args[:i], batch, *args[i + 1 :])

    def total(x):
        outputs = fn(*args[:i], x, *args[i + 1 :])
        return sum(jnp.sum(leaf) for leaf in jax.tree.leaves(outputs))

    if fn not in NOT_DIFFERENTIABLE:
        jax.make_jaxpr(jax.grad(total))(
            jnp.asarray(np.broadcast_to(bad, np.shape(good[arg])), float)
        )


def test_rounding_past_a_closed_end_and_the_ends_themselves_are_accepted():
    assert float(bounds.seeger(-1e-9, -1e-9, 1, 1.0)) <= 1.0  # rounding: clipped, not refused
    assert float(bounds.seeger(1.0 + 1e-9, INF, 1000, 0.05)) == 1.0  # KL = inf: vacuous
    assert float(bounds.binomial_tail_inversion(10, 10, 0.05)) == 1.0  # k = n
    assert np.isfinite(bounds.cctnd(0.05, 0.2, 1.0, 1000, 1000, 0.05, -10.0))  # any mu < 1/2
    assert float(bounds.pac_bound_1(0.2, 0.5, 0.0, 1, 1.0)) <= 1.0


def test_only_the_outermost_checked_call_checks():
    @domains(risk=UNIT)
    def inner(risk):
        return risk

    @domains(risk=UNIT)
    def outer(risk):
        return inner(risk - 2.0)  # a derived value outside inner's domain passes through

    assert outer(0.5) == -1.5
    with pytest.raises(ValueError, match=r"^inner: risk must lie in"):
        inner(-1.5)
    with pytest.raises(ValueError, match=r"^outer: risk must lie in"):
        outer(2.0)
    assert inner(0.5) == 0.5  # the boundary is reset after a refusal


def test_a_concrete_argument_beside_traced_ones_is_checked():
    with pytest.raises(ValueError, match=r"^seeger: m must lie in"):
        jax.jit(lambda risk: bounds.seeger(risk, 1.0, 0, 0.05))(0.1)  # m = 0 is a constant
    with pytest.raises(ValueError, match=r"^seeger: kl must lie in"):
        jax.grad(bounds.seeger)(0.1, -1.0, 1000, 0.05)  # kl is not differentiated


def test_a_large_array_is_checked_on_its_device():
    risks = jnp.full(10_000, 0.1).at[-1].set(1.5)
    with pytest.raises(ValueError, match=r"^seeger: risk must lie in \[0, 1\]; got 1.5"):
        bounds.seeger(risks, 1.0, 1000, 0.05)
