"""Checks shared by ``test_corpus.py`` and ``test_corpus_loops.py``.

jitgrad transforms are built once per (case, wrt) and reused for every point of the case;
all points of a case have the same argument types and shapes, so each transform compiles
once.  Reference gradients come from ``fd.numeric_grad`` (never from jitgrad) and are cached.
"""

import functools
import inspect

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad

VALUE_RTOL = 1e-10
VALUE_ATOL = 1e-12


def point_params(cases):
    """pytest params (case, point index), one per point of every case."""
    return [pytest.param(c, i, id=f"{c.name}-p{i}") for c in cases for i in range(len(c.points))]


def case_params(cases):
    return [pytest.param(c, id=c.name) for c in cases]


def copied(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def arg_names(case):
    return list(inspect.signature(case.fn).parameters)


@functools.cache
def value_and_grad_fn(case, wrt):
    return jitgrad.value_and_grad(case.fn, wrt=wrt)


@functools.cache
def grad_fn(case, wrt):
    return jitgrad.grad(case.fn, wrt=wrt)


@functools.cache
def reference_value(case, idx):
    return float(case.fn(*copied(case.points[idx])))


@functools.cache
def reference_grad(case, idx, k):
    return numeric_grad(case.fn, case.points[idx], k)


def call_checked(f, case, idx):
    """Call ``f`` on copies of point ``idx`` and check it left its arguments untouched."""
    args = copied(case.points[idx])
    out = f(*args)
    for k, (a, orig) in enumerate(zip(args, case.points[idx])):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, orig, err_msg=f"{case.name}: argument {k} mutated")
    return out


def check_value(case, idx, value):
    expected = reference_value(case, idx)
    assert np.ndim(value) == 0, f"{case.name}: value has shape {np.shape(value)}"
    np.testing.assert_allclose(float(value), expected, rtol=VALUE_RTOL, atol=VALUE_ATOL,
                               err_msg=f"{case.name}: value differs from plain Python")


def check_grad(case, idx, k, g):
    """``g`` (jitgrad's gradient w.r.t. argument ``k`` at point ``idx``) vs central FD."""
    x = case.points[idx][k]
    what = f"{case.name}: gradient w.r.t. argument {k} ({arg_names(case)[k]})"
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{what} is {type(g).__name__}, expected ndarray"
        assert g.shape == x.shape, f"{what} has shape {g.shape}, expected {x.shape}"
        assert g.dtype == np.float64, f"{what} has dtype {g.dtype}"
    else:
        assert isinstance(g, float), f"{what} is {type(g).__name__}, expected float"
    assert np.all(np.isfinite(g)), f"{what} is not finite: {g}"
    ref = reference_grad(case, idx, k)
    scale = max(1.0, abs(reference_value(case, idx)), float(np.max(np.abs(ref))))
    np.testing.assert_allclose(g, ref, rtol=case.tol, atol=1e-2 * case.tol * scale,
                               err_msg=f"{what} differs from finite differences")


def check_value_and_grad(case, idx):
    check_value_and_grad_result(case, idx, call_checked(value_and_grad_fn(case, case.wrt),
                                                        case, idx))


def check_value_and_grad_result(case, idx, out):
    """``out``: what a ``value_and_grad(case.fn, wrt=case.wrt)`` (jitgrad's, or another
    implementation's, e.g. ``jitgrad.tape``) returned at point ``idx``."""
    assert isinstance(out, tuple) and len(out) == 2, f"{case.name}: expected (value, grads)"
    value, grads = out
    check_value(case, idx, value)
    assert isinstance(grads, tuple), f"{case.name}: wrt is a tuple, so grads must be a tuple"
    assert len(grads) == len(case.wrt), f"{case.name}: {len(grads)} grads for wrt={case.wrt}"
    for k, g in zip(case.wrt, grads):
        check_grad(case, idx, k, g)


def check_single_grad(case, by):
    """``jitgrad.grad`` with one position (``by="position"``) or one argument name."""
    k = case.wrt[-1]
    wrt = k if by == "position" else arg_names(case)[k]
    g = call_checked(grad_fn(case, wrt), case, 0)
    assert not isinstance(g, tuple), f"{case.name}: wrt={wrt!r} must give a single gradient"
    check_grad(case, 0, k, g)


def check_tape_agrees(case, idx, tape_refuses=()):
    """The tape (``jitgrad.tape``) as the third oracle: its value and gradient against plain
    Python and finite differences, and against jitgrad's gradient (to 1e-8). A case named in
    ``tape_refuses`` must be refused by the tape (``math.*`` calls, arrays built from lists)."""
    from jitgrad import UnsupportedError, tape

    tape_fn = tape.value_and_grad(case.fn, wrt=case.wrt)
    if case.name in tape_refuses:
        with pytest.raises(UnsupportedError):
            tape_fn(*copied(case.points[idx]))
        return
    out = call_checked(tape_fn, case, idx)
    check_value_and_grad_result(case, idx, out)
    _, grads = out
    _, jg_grads = call_checked(value_and_grad_fn(case, case.wrt), case, idx)
    for k, g, jg in zip(case.wrt, grads, jg_grads):
        np.testing.assert_allclose(g, jg, rtol=1e-8, atol=1e-12 * max(1.0, np.max(np.abs(jg))),
                                   err_msg=f"{case.name}: tape and jitgrad disagree (arg {k})")
