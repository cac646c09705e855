"""A failure inside the generated code names the user's line that produced it."""

import os

import numpy as np
import pytest
from errors_fns import mismatched

import jitgrad

HERE = os.path.dirname(__file__)


def marker_line(marker):
    with open(os.path.join(HERE, "errors_fns.py")) as f:
        for n, line in enumerate(f, 1):
            if f"marker: {marker}" in line:
                return n
    raise AssertionError(marker)


def test_runtime_error_reports_the_user_line():
    g = jitgrad.grad(mismatched)
    g(np.ones((3, 2)), np.ones((4, 3)))  # compiles and runs for these shapes
    with pytest.raises(jitgrad.JitgradError) as info:
        g(np.ones((3, 2)), np.ones((4, 5)))  # x @ W no longer lines up
    text = str(info.value)
    assert "ValueError" in text
    path = os.path.join(HERE, "errors_fns.py")
    assert f'File "{path}", line {marker_line("matmul")}:' in text
    assert "h = np.tanh(x @ W)" in text
    assert "generated line:" in text
    assert isinstance(info.value, jitgrad.ShapeError)  # also a ValueError, as NumPy raises
