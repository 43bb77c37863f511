"""The shared boundary checks: a ``ValueError`` naming the problem, silence on good input, and
value checks skipped (shape checks kept) on traced arguments."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pacbound._src.validation import (
    check_delta,
    check_labels,
    check_matrix,
    check_positive_int,
    check_sample_weight,
    check_scalar,
    check_votes,
    float_dtype,
    is_concrete,
)

Y = np.array([1.0, -1.0, 1.0])


def traced(check, x, *static, **kwargs):
    """Run ``check(x, *static)`` with ``x`` traced by ``jax.jit``."""
    return jax.jit(lambda x: check(x, *static, **kwargs) or x)(x)


def test_is_concrete():
    assert is_concrete(np.ones(2), jnp.ones(2), 1.0, None)
    seen = []
    jax.jit(lambda x: seen.append(is_concrete(np.ones(2), x)) or x)(1.0)
    assert seen == [False]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((np.ones(2, np.float32), np.ones(2, np.int64)), jnp.float32),
        ((np.ones(2, np.int8), np.ones(2)), jnp.float64),  # x64 is on in the tests
        ((np.ones(2, np.int8), np.ones(2, np.int64)), jnp.float32),
        ((jnp.ones(2, jnp.bfloat16), np.ones(2, np.float32)), jnp.float32),
        ((np.ones(2, np.float32), np.ones(2, np.float64)), jnp.float64),
    ],
)
def test_float_dtype(args, expected):
    assert float_dtype(*args) == expected


@pytest.mark.parametrize(
    ("H", "kwargs", "match"),
    [
        (np.ones(3), {}, r"H must be a non-empty 2-D \(examples, voters\) array; got \(3,\)"),
        (np.ones((0, 2)), {}, "non-empty"),
        (np.array([[1.0, np.nan]]), {}, "H has NaN or inf"),
        (np.array([[1.0, -np.inf]]), {}, "H has NaN or inf"),
        (np.array([[0.5, -2.0]]), {}, r"H must have entries in \[-1, 1\]; max \|entry\| 2"),
        (np.array([[0.5, 1.0]]), {"binary": True}, "H must hold binary votes -1 / \\+1"),
        (np.array([[3, 1]], np.int8), {"name": "V"}, r"V must have entries in \[-1, 1\]"),
    ],
)
def test_check_votes_refuses(H, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_votes(H, **kwargs)


def test_check_votes_accepts_and_skips_values_under_jit():
    check_votes(np.array([[0.5, -1.0], [1.0 + 1e-7, 0.0]]))
    check_votes(np.array([[1, -1]], np.int8), binary=True)
    check_votes(jnp.array([[1, -1]], jnp.bfloat16), binary=True)
    traced(check_votes, np.array([[np.nan, 2.0]]), binary=True)
    with pytest.raises(ValueError, match="2-D"):
        traced(check_votes, np.ones(3))


def test_check_matrix():
    check_matrix(np.array([[5.0, -7.0]]), "Phi")  # unbounded
    with pytest.raises(ValueError, match=r"Phi must be a non-empty 2-D \(examples, features\)"):
        check_matrix(np.ones(3), "Phi")
    with pytest.raises(ValueError, match="Phi has NaN or inf"):
        check_matrix(np.array([[np.inf]]), "Phi")
    traced(check_matrix, np.array([[np.nan]]))


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (np.ones(4), r"y must have shape \(3,\), one label per example; got \(4,\)"),
        (np.array([1.0, 0.0, -1.0]), r"labels must be -1 or \+1; found \[-1.0, 0.0, 1.0\]"),
        (np.array([1.0, 1.0, 1.0]), r"both classes are needed; every label is \[1.0\]"),
    ],
)
def test_check_labels_refuses(y, match):
    with pytest.raises(ValueError, match=match):
        check_labels(y, 3)


def test_check_labels_accepts_and_skips_values_under_jit():
    check_labels(Y, 3)
    check_labels(np.array([1, -1], np.int32), 2)
    traced(check_labels, np.array([0.0, 2.0, 1.0]), 3)
    with pytest.raises(ValueError, match="shape"):
        traced(check_labels, np.ones(4), 3)


@pytest.mark.parametrize("value", [0, -3, 2.0, True, None, np.float64(3.0)])
def test_check_positive_int_refuses(value):
    message = f"n_rounds must be an integer >= 1; got {value!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        check_positive_int("n_rounds", value)


def test_check_positive_int_accepts():
    check_positive_int("n_rounds", 1)
    check_positive_int("n_rounds", np.int64(7))


@pytest.mark.parametrize(
    ("value", "kwargs", "match"),
    [
        (np.ones(2), {}, r"tol must be a scalar \(jax.vmap over several\); got \(2,\)"),
        (-1.0, {"low": 0.0}, r"tol must be finite and lie in \[0, inf\); got -1"),
        (0.0, {"low": 0.0, "low_open": True}, r"tol must be finite and lie in \(0, inf\)"),
        (1.0, {"low": 0.0, "high": 1.0, "high_open": True}, r"lie in \[0, 1\); got 1"),
        (np.nan, {}, r"tol must be finite and lie in \(-inf, inf\); got nan"),
        (np.inf, {"low": 0.0}, r"tol must be finite"),
    ],
)
def test_check_scalar_refuses(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_scalar("tol", value, **kwargs)


def test_check_scalar_accepts_and_skips_values_under_jit():
    check_scalar("tol", 0.0, 0.0)
    check_scalar("lam", jnp.asarray(1.0), 0.0, 1.0)
    traced(lambda v: check_scalar("tol", v, 0.0), -1.0)
    with pytest.raises(ValueError, match="scalar"):
        traced(lambda v: check_scalar("tol", v, 0.0), np.ones(2))
    # jax.vmap over a hyperparameter hands each call a traced scalar
    jax.vmap(lambda v: check_scalar("tol", v, 0.0) or v)(jnp.array([-1.0, 2.0]))


@pytest.mark.parametrize("delta", [0.0, -0.1, 1.5, np.nan])
def test_check_delta_refuses(delta):
    with pytest.raises(ValueError, match=r"delta must be finite and lie in \(0, 1\]"):
        check_delta(delta)


def test_check_delta_accepts():
    check_delta(1.0)
    check_delta(np.float32(0.05))
    traced(check_delta, 2.0)


@pytest.mark.parametrize(
    ("weight", "match"),
    [
        (np.ones(4), r"sample_weight must have shape \(3,\); got \(4,\)"),
        (np.array([1.0, -1.0, 1.0]), "sample_weight must be finite, >= 0 and not all zero"),
        (np.zeros(3), "not all zero"),
        (np.array([1.0, np.inf, 1.0]), "finite"),
    ],
)
def test_check_sample_weight_refuses(weight, match):
    with pytest.raises(ValueError, match=match):
        check_sample_weight(weight, 3)


def test_check_sample_weight_accepts_and_skips_values_under_jit():
    check_sample_weight(None, 3)
    check_sample_weight(np.array([0.0, 2.0, 1.0]), 3)
    traced(check_sample_weight, -np.ones(3), 3)
    with pytest.raises(ValueError, match="shape"):
        traced(check_sample_weight, np.ones(4), 3)
