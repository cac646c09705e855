"""A package Numba needs that is not installed reaches the user as one line with its fix.

SciPy is simulated missing in a fresh process (Numba keeps the matrix-product code it compiled
earlier in a process, without asking for SciPy again) by putting ``None`` in ``sys.modules`` for
the module Numba imports for BLAS, so that ``import`` raises ModuleNotFoundError. The product
runs in `runtime.matmul`, which a warm Numba cache loads without asking for SciPy (the process
then aborted at the call): jitgrad checks for SciPy before loading such a module
(`compile.require_scipy`), so the message comes whether the runtime's cache is warm or not.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from jitgrad.backend.numba import compile as _compile

MESSAGE = ("jitgrad needs SciPy for matrix products and np.linalg (numba uses its BLAS and "
           "LAPACK): pip install scipy")

MODEL = '''
import numpy as np


def env_matmul_loss(W, x):
    return np.sum(np.tanh(x @ W))
'''

HIDE_SCIPY = "import sys; sys.modules['scipy.linalg.cython_blas'] = None\n"

API = HIDE_SCIPY + '''
import numpy as np
import jitgrad
from env_model import env_matmul_loss

try:
    jitgrad.grad(env_matmul_loss)(np.ones((3, 2)), np.ones((4, 3)))
except jitgrad.MissingDependencyError as e:
    assert isinstance(e, ImportError)
    assert e.__cause__ is None and e.__suppress_context__  # no Numba traceback chained
    print(e)
'''

CLI = HIDE_SCIPY + '''
from jitgrad.tools.cli import main
sys.exit(main(["check", "env_model.py:env_matmul_loss", "--sig", "f64[:,:], f64[:,:]"]))
'''


def run(script: str, folder) -> subprocess.CompletedProcess:
    (folder / "env_model.py").write_text(MODEL)
    env = dict(os.environ, JITGRAD_CACHE_DIR=str(folder / "cache"),
               PYTHONPATH=os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH"))
                                          if p))
    return subprocess.run([sys.executable, "-c", script], check=False, cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)


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


@pytest.mark.slow
def test_missing_scipy_is_one_line_with_the_fix(tmp_path):
    done = run(API, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == MESSAGE + "\n"


@pytest.mark.slow
def test_cli_prints_the_one_line_and_fails(tmp_path):
    done = run(CLI, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"error: {MESSAGE}\n"
    assert done.stdout == ""
