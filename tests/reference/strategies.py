"""Hypothesis strategies shared by the property tests of the certified bounds."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


def vector(n, lo, hi, log=False):
    """``n`` floats in ``[lo, hi]``, uniform, or log-uniform when ``log``."""
    if log:
        return arrays(np.float64, n, elements=st.floats(np.log(lo), np.log(hi))).map(np.exp)
    return arrays(np.float64, n, elements=st.floats(lo, hi))
