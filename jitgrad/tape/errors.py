"""The tape's refusals, located at the user's line.

Takes nothing but the running frames. Guarantees: `user_loc` is the innermost frame outside
the jitgrad package and NumPy (the user's line that caused an error), and each refusal here is
an `UnsupportedError` carrying it.
"""

from __future__ import annotations

import linecache
import os
import sys

import numpy as np

from jitgrad.core.errors import Loc, UnsupportedError

# The jitgrad package (this file is jitgrad/tape/errors.py): frames inside it are not the user's.
_JITGRAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


def user_loc() -> Loc | None:
    """The innermost frame outside jitgrad and NumPy: the user's line that caused an error."""
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if not (name.startswith((_JITGRAD_DIR + os.sep, _NUMPY_DIR + os.sep))):
            break
        f = f.f_back
    if f is None:
        return None
    code, lineno, col = f.f_code, f.f_lineno, 0
    try:
        pos = list(code.co_positions())[f.f_lasti // 2]
        if pos[0] == lineno and pos[2] is not None:
            col = pos[2]
    except (AttributeError, IndexError):
        pass
    line = linecache.getline(code.co_filename, lineno).rstrip("\n")
    return Loc(code.co_filename, lineno, col, line)


def lost_gradient_error(what: str) -> UnsupportedError:
    """The refusal of ``what`` (a conversion) on a tensor that carries a gradient."""
    return UnsupportedError(
        f"{what} of a Tensor that carries a gradient: the gradient would be lost. The tape "
        "records NumPy operations only: use np.exp, np.sqrt, ... instead of math.exp, "
        "math.sqrt, ...; write tensors only into arrays allocated from a tensor "
        "(np.zeros_like(x), np.copy(x), x.copy()), not into np.zeros(n)/np.empty/np.ones/"
        "np.full arrays; use t.detach() where dropping the gradient is meant", user_loc())


def stale_view_error() -> UnsupportedError:
    """The refusal to use a view taken before a write into the array it views."""
    return UnsupportedError(
        "this view of an array was taken before a write into that array: NumPy would show "
        "the write through the view, the tape cannot. Index the array again after the write, "
        "or take a copy (x[i].copy()) if the old values are meant", user_loc())
