"""KL-regularized coordinate descent (germain2009 Algorithm 1) against the independent NumPy
reference and the paper's claims.

One shape, (40, 8) votes, so that each (loss, relaxation) pair compiles once.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

from pacbound._src.learning import coordinate_step
from pacbound._src.solvers import kl_coordinate as klcd
from pacbound._src.solvers.kl_coordinate import (
    kl_coordinate_descent,
    kl_el,
    kl_ql,
    pair_order,
    regularized_objective,
)
from pacbound.bounds import exponential_loss_constants, general_loss, quadratic_loss_constants
from pacbound.kl import quasi_uniform_kl
from tests.reference.boosting_numpy import kl_coordinate_descent_reference

M, N = 40, 8
KEY = jax.random.key(3)
SETTINGS = {"quadratic": [(0.05, 0.3), (2.0, 0.1)], "exponential": [(0.05, 1.0), (0.5, 0.2)]}


def _problem(seed=0, real_valued=False):
    """(40, 8) ±1 votes, 3 of them informative (25% noise); labels ±1."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=M)
    H = rng.choice([-1.0, 1.0], size=(M, N))
    for j in range(3):
        H[:, j] = y * np.where(rng.random(M) < 0.25, -1.0, 1.0)
    if real_valued:
        H = H * rng.uniform(0.2, 1.0, size=H.shape)
    return H, y


@functools.cache
def _orders(sweeps):
    """The pair orders of the first ``sweeps`` sweeps under ``KEY`` (for the reference)."""
    return np.asarray(jax.vmap(lambda s: pair_order(KEY, s, N))(jnp.arange(sweeps)))


@pytest.mark.parametrize("relaxation", ["kl", "l2", "l1"])
@pytest.mark.parametrize("loss", ["quadratic", "exponential"])
def test_matches_reference_sweep_by_sweep(loss, relaxation):
    H, y = _problem()
    for C, gamma in SETTINGS[loss]:
        res = kl_coordinate_descent(H, y, C, gamma, loss=loss, relaxation=relaxation, key=KEY,
                                    tol=1e-12, max_iter=400)  # fmt: skip
        # eq. 17's C'' is C / n when the l2 term is read as eq. 16's bound n ||w||^2 on KL
        C_ref = C / N if relaxation == "l2" else C
        scale = N if relaxation == "l2" else 1.0
        ref = kl_coordinate_descent_reference(H, y, C_ref, gamma, loss, _orders(400), eps=1e-12,
                                              relaxation=relaxation)  # fmt: skip
        sweeps = int(res.steps)
        assert bool(res.converged) and ref["converged"]
        assert sweeps == ref["n_sweeps"]
        np.testing.assert_allclose(res.weights, ref["w"], rtol=0, atol=1e-12 / N)
        np.testing.assert_allclose(res.q, ref["q"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.info.objectives[:sweeps], scale * ref["sweep_objectives"],
                                   rtol=1e-11)  # fmt: skip
        assert np.all(np.isnan(np.asarray(res.info.objectives[sweeps:])))
        assert float(res.objective) == pytest.approx(scale * ref["objective"], rel=1e-11)
        # the paper's monotone decrease: exact coordinate minimization never increases f
        full = np.concatenate([[C * M], np.asarray(res.info.objectives[:sweeps])])
        assert np.all(np.diff(full) <= 1e-12 * full[1:])
        assert np.all(np.abs(np.asarray(res.weights)) <= 1.0 / N)


@pytest.mark.parametrize("loss", ["quadratic", "exponential"])
def test_objective_and_bound_of_theorem_3_2(loss):
    """``objective`` is ``f`` computed directly; the bound is Thm 3.2 at ``C' = 2 c_a k C``,
    and along the iterates it is an increasing affine function of ``f`` (so minimizing ``f``
    with ``C = C' / (2 c_a k_bar)`` minimizes the bound)."""
    H, y = _problem(1)
    C, gamma = SETTINGS[loss][1]
    c_a, k_bar = (quadratic_loss_constants if loss == "quadratic" else exponential_loss_constants)(
        gamma
    )
    c_a, k_bar = float(c_a), float(k_bar)
    c_prime = 2 * c_a * k_bar * C
    points = []
    for tol in (3e-2, 1e-3, 1e-12):  # traced: three stopping points, one compilation
        res = kl_coordinate_descent(H, y, C, gamma, loss=loss, key=KEY, tol=tol,
                                    max_iter=400)  # fmt: skip
        f = regularized_objective(H, y, res.weights, C, gamma, loss=loss)
        assert float(res.objective) == pytest.approx(float(f), rel=1e-12)
        margin = y * (H @ np.asarray(res.weights))
        zeta = (margin / gamma - 1) ** 2 if loss == "quadratic" else np.exp(-margin / gamma)
        kl = float(quasi_uniform_kl(res.weights))
        expected = general_loss(zeta.mean(), kl, M, 0.05, c_prime, c_a, k_bar)
        assert float(res.info.bound) == pytest.approx(float(expected), rel=1e-12)
        points.append((float(f), float(res.info.bound)))
    (f1, b1), (f2, b2), (f3, b3) = points
    assert f3 < f2 < f1 and b3 < b2 < b1
    slope = c_prime / -np.expm1(-c_prime) * 2 * c_a * k_bar / (M * c_prime)
    tol = 1e-13 * abs(b3)  # the bound is large (g(c_a, C')): differences lose digits
    assert (b1 - b3) == pytest.approx(slope * (f1 - f3), rel=1e-9, abs=tol)
    assert (b2 - b3) == pytest.approx(slope * (f2 - f3), rel=1e-9, abs=tol)


def test_real_valued_voters_quadratic_loss():
    H, y = _problem(2, real_valued=True)
    res = kl_ql(H, y, 0.3, 0.4, key=KEY, tol=1e-12, max_iter=400)
    ref = kl_coordinate_descent_reference(H, y, 0.3, 0.4, "quadratic", _orders(400), eps=1e-12)
    np.testing.assert_allclose(res.weights, ref["w"], rtol=0, atol=1e-12 / N)
    assert int(res.steps) == ref["n_sweeps"]


def test_vmap_over_hyperparameters_equals_jit_without_recompiling():
    H, y = _problem()
    Cs, gammas = jnp.array([0.05, 0.5, 3.0]), jnp.array([0.2, 0.5, 1.0])

    def run(C, gamma, **kwargs):
        return kl_el(H, y, C, gamma, **{"key": KEY, "tol": 1e-10, "max_iter": 400, **kwargs})

    batched = jax.vmap(run)(Cs, gammas)
    compiled = None
    for i in range(3):
        single = run(float(Cs[i]), float(gammas[i]))
        compiled = compiled or klcd._solve._cache_size()
        np.testing.assert_allclose(batched.weights[i], single.weights, rtol=0, atol=1e-14)
        np.testing.assert_allclose(batched.info.objectives[i], single.info.objectives, rtol=1e-13)
        assert int(batched.steps[i]) == int(single.steps)
        assert float(batched.info.bound[i]) == pytest.approx(float(single.info.bound), rel=1e-12)
    run(7.0, 0.3, key=jax.random.key(9), tol=1e-7, delta=0.1)
    assert klcd._solve._cache_size() == compiled  # new values, same program


@pytest.mark.parametrize("loss", ["quadratic", "exponential"])
def test_float32(loss):
    H, y = _problem()
    C, gamma = SETTINGS[loss][1]
    r64 = kl_coordinate_descent(H, y, C, gamma, loss=loss, key=KEY, tol=1e-12, max_iter=400)
    r32 = kl_coordinate_descent(H.astype(np.float32), y.astype(np.float32), C, gamma, loss=loss,
                                key=KEY, tol=1e-7, max_iter=400)  # fmt: skip
    assert r32.weights.dtype == jnp.float32 and r32.info.bound.dtype == jnp.float32
    assert bool(r32.converged)
    np.testing.assert_allclose(r32.weights, r64.weights, rtol=0, atol=2e-5 / N)
    assert float(r32.objective) == pytest.approx(float(r64.objective), rel=1e-5)
    assert np.all(np.abs(np.asarray(r32.weights, np.float64)) <= 1.0 / np.float32(N))


def test_coordinate_minimizer_is_exact_in_extreme_regimes():
    """The bisection of eq. 7 / 10 agrees with brentq to a few ulps of the box, including
    slopes of 1e12 and exponentials of e^600 that defeat plain Newton steps."""
    cases = [("quadratic", (-3e12, 5e11)), ("quadratic", (4.0, 0.01)),
             ("quadratic", (-1e-3, 1e9)), ("exponential", (-53.3, -49.0)),
             ("exponential", (50.0, -28.0)), ("exponential", (2.0, 3.0))]  # fmt: skip
    n, gamma = 2, 1 / 1300.0  # k = 1 / (n gamma) = 650
    for loss, coef in cases:
        coef = tuple(jnp.float64(c) for c in coef)
        slope = lambda u, coef=coef, loss=loss: coordinate_step.loss_slope(coef, u, n, gamma, loss)  # noqa: E731
        u = float(coordinate_step.coordinate_minimizer(slope, "kl", jnp.float64))

        def g(t, slope=slope):  # in t = atanh(u), finite everywhere
            return t + float(slope(jnp.tanh(jnp.float64(t))))

        if g(40.0) <= 0 or g(-40.0) >= 0:  # the root is beyond float precision of a box end
            expected = 1.0 if g(40.0) <= 0 else -1.0
        else:
            expected = np.tanh(brentq(g, -40, 40, xtol=1e-300, rtol=1e-15))
        assert abs(u - expected) <= 32 * np.finfo(float).eps, (loss, coef, u, expected)


def test_box_clipping_and_pair_order():
    H, y = _problem()
    res = kl_coordinate_descent(H, y, 0.05, 0.5, relaxation="l1", tol=1e-12, max_iter=400)
    w = np.asarray(res.weights)
    assert np.any(np.abs(w) == 1.0 / N)  # steps 6-7 hit the box exactly
    assert np.any(w == 0.0)  # and l1 zeroes weak voters
    assert np.array_equal(np.asarray(pair_order(None, 5, N)), np.arange(N))
    perm = np.asarray(pair_order(KEY, 5, N))
    assert np.array_equal(np.sort(perm), np.arange(N))


@pytest.mark.parametrize("loss", ["quadratic", "exponential"])
def test_integer_weights_are_repetitions_and_masks_equal_slicing(loss):
    """``C sum v zeta`` with ``m = sum v``: integer weights are the repeated sample (at the same
    ``C``, bound included); 0/1 weights are slicing."""
    H, y = _problem(4)
    C, gamma = SETTINGS[loss][1]
    v = np.random.default_rng(5).integers(0, 3, M).astype(float)
    rep, keep = np.repeat(np.arange(M), v.astype(int)), v > 0
    kwargs = {"loss": loss, "key": KEY, "tol": 1e-12, "max_iter": 400}
    res = kl_coordinate_descent(H, y, C, gamma, sample_weight=v, **kwargs)
    ref = kl_coordinate_descent_reference(H[rep], y[rep], C, gamma, loss, _orders(400),
                                          eps=1e-12)  # fmt: skip
    np.testing.assert_allclose(res.weights, ref["w"], rtol=0, atol=1e-12 / N)
    assert float(res.objective) == pytest.approx(ref["objective"], rel=1e-11)
    f = regularized_objective(H, y, res.weights, C, gamma, loss=loss, sample_weight=v)
    assert float(res.objective) == pytest.approx(float(f), rel=1e-12)
    repeated = kl_coordinate_descent(H[rep], y[rep], C, gamma, **kwargs)
    np.testing.assert_allclose(res.weights, repeated.weights, rtol=0, atol=1e-12 / N)
    assert float(res.info.bound) == pytest.approx(float(repeated.info.bound), rel=1e-12)

    masked = kl_coordinate_descent(H, y, C, gamma, sample_weight=1.0 * keep, **kwargs)
    sliced = kl_coordinate_descent(H[keep], y[keep], C, gamma, **kwargs)
    np.testing.assert_allclose(masked.weights, sliced.weights, rtol=0, atol=1e-14)
    assert int(masked.steps) == int(sliced.steps)
    assert float(masked.objective) == pytest.approx(float(sliced.objective), rel=1e-12)
    assert float(masked.info.bound) == pytest.approx(float(sliced.info.bound), rel=1e-12)
    doubled = kl_coordinate_descent(H, y, C / 2, gamma, sample_weight=2.0 * keep, **kwargs)
    np.testing.assert_allclose(doubled.weights, sliced.weights, rtol=0, atol=1e-12 / N)  # C v


def test_vmap_over_fold_masks_equals_single_runs():
    H, y = _problem(5)
    folds = (np.arange(M)[None, :] % 3 != np.arange(3)[:, None]).astype(float)

    def run(v):
        return kl_ql(H, y, 0.5, 0.3, key=KEY, tol=1e-10, max_iter=400, sample_weight=v)

    batched = jax.vmap(run)(folds)
    for i in range(3):
        single = run(folds[i])
        np.testing.assert_allclose(batched.weights[i], single.weights, rtol=0, atol=1e-14)
        assert float(batched.info.bound[i]) == pytest.approx(float(single.info.bound), rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": np.r_[np.ones(M - 1), 2.0]}, "labels"),
        ({"y": np.ones(M - 1)}, "shape"),
        ({"H": np.full((M, N), np.nan)}, "NaN"),
        ({"H": np.full((M, N), 0.5), "loss": "exponential"}, "-1, 0"),
        ({"C": 0.0}, r"C must be finite and lie in \(0, inf\)"),
        ({"gamma": -1.0}, r"gamma must be finite and lie in \(0, inf\)"),
        ({"tol": -1.0}, "tol"),
        ({"delta": 0.0}, "delta"),
        ({"loss": "hinge"}, "loss must be"),
        ({"relaxation": "l3"}, "relaxation"),
        ({"max_iter": 0}, "max_iter"),
        ({"sample_weight": -np.ones(M)}, "sample_weight"),
        ({"sample_weight": np.ones(M - 1)}, "sample_weight"),
    ],
)
def test_validation(kwargs, match):
    H, y = _problem()
    args = {"H": H, "y": y, "C": 1.0, "gamma": 0.5, **kwargs}
    with pytest.raises(ValueError, match=match):
        kl_coordinate_descent(args.pop("H"), args.pop("y"), args.pop("C"), args.pop("gamma"),
                              **args)  # fmt: skip
