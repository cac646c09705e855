"""A package Numba needs that is not installed reaches the user as one line with its fix.

SciPy is simulated missing by putting ``None`` in ``sys.modules`` for the module Numba imports
for BLAS (``import`` then raises ModuleNotFoundError), and a fresh cache folder makes Numba
compile (a warm disk cache would load machine code without asking for SciPy).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import jitgrad
from jitgrad import __main__ as cli
from jitgrad import compile as _compile

MESSAGE = "jitgrad needs SciPy for matrix products (numba uses its BLAS): pip install scipy"

MODEL = '''
import numpy as np


def env_matmul_loss(W, x):
    return np.sum(np.tanh(x @ W))
'''


@pytest.fixture
def no_scipy(monkeypatch, tmp_path):
    monkeypatch.setenv("JITGRAD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, "scipy.linalg.cython_blas", None)


def test_message_names_scipy_and_its_fix():
    assert _compile.SCIPY_MISSING == MESSAGE


def test_detects_numba_blas_import_error_and_its_chain():
    try:
        try:
            raise ModuleNotFoundError("No module named 'scipy'", name="scipy")
        except ImportError:
            raise ImportError("scipy 0.16+ is required for linear algebra")
    except ImportError as e:
        numba_error = e
    assert _compile.missing_dependency(numba_error) == MESSAGE
    wrapped = RuntimeError("Failed in nopython mode pipeline (step: native lowering)")
    wrapped.__cause__ = numba_error
    assert _compile.missing_dependency(wrapped) == MESSAGE
    assert _compile.missing_dependency(ValueError("incompatible array sizes")) is None
    assert _compile.missing_dependency(ModuleNotFoundError("x", name="numpyish")) is None


def test_missing_scipy_is_one_line_with_the_fix(no_scipy):
    def env_loss(W, x):
        return np.sum(np.tanh(x @ W))

    g = jitgrad.grad(env_loss)
    with pytest.raises(jitgrad.MissingDependencyError) as info:
        g(np.ones((3, 2)), np.ones((4, 3)))
    assert str(info.value) == MESSAGE
    assert isinstance(info.value, ImportError)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no Numba traceback


def test_cli_prints_the_one_line_and_fails(no_scipy, tmp_path, capsys):
    model = tmp_path / "env_model.py"
    model.write_text(MODEL)
    rc = cli.main(["check", f"{model}:env_matmul_loss", "--sig", "f64[:,:], f64[:,:]"])
    assert rc == 1
    assert capsys.readouterr().err == f"error: {MESSAGE}\n"
