"""Every learner refuses bad input at its boundary with a clear ValueError (issue #36 point 6):
NaN or infinite votes, labels {0, 1} or three classes, a short y, an empty H and a negative
sample_weight; the message names what is wrong. Nothing is compiled: the checks run before
the learner's program."""

import numpy as np
import pytest

from pacbound import solvers

# learner -> its hyperparameters for a small run (each learner's own tests cover the values)
HYPER = {
    "mincq": (0.05,),
    "tmincq": (0.05,),
    "cqboost": (0.05,),
    "lpboost": (1.0,),
    "cgboost": (1.0,),
    "mdboost": (10.0,),
    "cbboost": (3,),
    "gbcbboost": (3,),
    "adaboost": (3,),
    "vebboost": (0.5, 3),
    "kl_coordinate_descent": (1.0, 0.5),
    "kl_ql": (1.0, 0.5),
    "kl_el": (1.0, 0.5),
    "minimize_bound": ("seeger",),
    "minimize_dirichlet_bound": ("seeger",),
    "recursive_pac_bayes": (0.5,),
}


def test_every_learner_is_covered():
    assert set(HYPER) == set(solvers.LEARNERS)


def _problem():
    rng = np.random.default_rng(0)
    H = np.where(rng.normal(size=(12, 4)) > 0, 1.0, -1.0)
    y = np.where(np.arange(12) % 2 == 0, 1.0, -1.0)
    return H, y


def _with(votes, labels, **change):
    """``(H, y, sample_weight)`` with the changed ones replaced."""
    return change.get("H", votes), change.get("y", labels), change.get("sample_weight")


def _nan(H):
    H = H.copy()
    H[3, 1] = np.nan
    return H


def _inf(H):
    H = H.copy()
    H[0, 2] = np.inf
    return H


BAD = {
    "NaN votes": (lambda H, y: _with(H, y, H=_nan(H)), r"NaN|finite"),
    "infinite votes": (lambda H, y: _with(H, y, H=_inf(H)), r"finite|\[-1, 1\]|inf"),
    "labels {0, 1}": (lambda H, y: _with(H, y, y=(y > 0).astype(float)), r"label|\{-1, \+1\}|±1"),
    "three classes": (lambda H, y: _with(H, y, y=np.arange(12) % 3 - 1.0), r"label|class"),
    "short y": (lambda H, y: _with(H, y, y=y[:-1]), r"shape|length|examples|\(12"),
    "empty H": (lambda H, y: _with(H, y, H=H[:, :0]), r"empty|no voter|at least one|\(12, 0\)"),
    "negative sample_weight": (
        lambda H, y: _with(H, y, sample_weight=np.where(np.arange(12) == 4, -1.0, 1.0)),
        r"sample_weight",
    ),
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("name", sorted(HYPER))
def test_bad_input_is_refused_with_a_message(name, bad):
    H, y = _problem()
    make, message = BAD[bad]
    H, y, w = make(H, y)
    options = {"H_unlabeled": np.ones((3, H.shape[1]))} if name == "tmincq" else {}
    with pytest.raises(ValueError, match=message):
        solvers.LEARNERS[name](H, y, *HYPER[name], sample_weight=w, **options)
