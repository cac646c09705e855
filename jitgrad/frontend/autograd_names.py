"""autograd's NumPy and SciPy read as NumPy and SciPy (issue #43).

Code written for autograd imports ``autograd.numpy as np`` and ``autograd.scipy.special``; its
functions are NumPy's and SciPy's, wrapped so that autograd's tracer sees them. jitgrad does
not run that tracer: a call of one of them is built as a call of the function it stands for,
so the derivative is jitgrad's own rule of that NumPy or SciPy function.

* A *primitive* (``autograd.extend.primitive``, marked ``_is_autograd_primitive``) keeps the
  function it wraps in ``.fun``: ``autograd.numpy.sin.fun is numpy.sin``,
  ``autograd.scipy.stats.norm.pdf.fun`` is SciPy's bound ``norm.pdf``. autograd's own
  primitives (``.fun`` defined in autograd: ``autograd.scipy.signal.convolve``) are left as
  they are; jitgrad's tables name them. One no table names is the Python code it wraps
  (`primitive_body`: ``fixed_point``'s loop), differentiated as jitgrad differentiates it.
* A *no-trace primitive* (``np.shape``, ``np.ndim``, ``autograd.builtins.isinstance``) is the
  function behind its ``__wrapped__``.
* A Python function autograd writes over NumPy's (``np.concatenate``, ``np.stack``,
  ``np.mean``, ``np.where``, ``np.linalg.norm``...) stands for the function of the same name
  in the NumPy or SciPy module its namespace mirrors.
* autograd's integer types (``np.int64``: a subclass whose constructor it does not trace)
  are NumPy's.
* ``autograd.builtins.list``, ``tuple`` and ``dict`` are Python's; autograd's ``np.r_`` and
  ``np.c_`` are NumPy's.
* autograd's ``grad``, ``value_and_grad``, ``jacobian`` and ``hessian`` of ``(fun, argnum)``,
  called inside a differentiated function, are jitgrad's of ``(fun, wrt=argnum)``
  (`TRANSFORMS`, filled by the package, a layer above: ``jitgrad.grad(g)(x)`` in a body is
  built as `custom_call` builds it). autograd's ``elementwise_grad`` is jitgrad's grad of the
  sum of the result (autograd's is the vjp of ones: the same). A function those transforms made
  (``df = grad(fun)``, then ``df(x)`` in the function) is jitgrad's of the same ``fun``; so
  is one handed to jitgrad's own ``grad`` or ``value_and_grad`` (`as_jitgrads`).
"""

from __future__ import annotations

import builtins
import importlib
import os
import sys
import types

# autograd's namespace -> the module it mirrors
MIRRORS = (("autograd.numpy", "numpy"), ("autograd.numpy.linalg", "numpy.linalg"),
           ("autograd.numpy.fft", "numpy.fft"), ("autograd.numpy.random", "numpy.random"),
           ("autograd.scipy.special", "scipy.special"), ("autograd.scipy.linalg", "scipy.linalg"),
           ("autograd.scipy.integrate", "scipy.integrate"),
           ("autograd.scipy.stats", "scipy.stats"))

# autograd.differential_operators' name -> jitgrad's transform taking (fun, argnum=0)
TRANSFORMS: dict[str, object] = {}
_TRACER = os.path.join("autograd", "tracer.py")
_WRAP_UTIL = os.path.join("autograd", "wrap_util.py")
_TABLE: dict[int, object] = {}
_SEEN: set[str] = set()


def _fill():
    """Name autograd's Python wrappers in the mirrored namespaces loaded so far."""
    for ours, theirs in MIRRORS:
        if ours in _SEEN or ours not in sys.modules:
            continue
        _SEEN.add(ours)
        try:
            target = importlib.import_module(theirs)
        except ImportError:
            continue
        for name, obj in vars(sys.modules[ours]).items():
            if name in ("r_", "c_") and hasattr(target, name) or (callable(obj) and not isinstance(obj, type)
                    and str(getattr(obj, "__module__", "")).startswith("autograd")
                    and not hasattr(obj, "fun") and hasattr(target, name)):  # np.r_[a, b]: objects
                _TABLE[id(obj)] = getattr(target, name)
    builtins_module = sys.modules.get("autograd.builtins")
    if builtins_module is not None and "autograd.builtins" not in _SEEN:
        _SEEN.add("autograd.builtins")
        for name in ("list", "tuple", "dict"):
            _TABLE[id(getattr(builtins_module, name))] = getattr(builtins, name)
    operators = sys.modules.get("autograd.differential_operators")
    if operators is not None and "autograd.differential_operators" not in _SEEN:
        _SEEN.add("autograd.differential_operators")
        for name, transform in TRANSFORMS.items():
            _TABLE[id(getattr(operators, name))] = transform


def stands_for(fn):
    """The NumPy, SciPy or Python function autograd's ``fn`` stands for; ``fn`` itself when
    it is not one of autograd's."""
    if getattr(fn, "_is_autograd_primitive", False) is True:
        inner = getattr(fn, "fun", None)
        if inner is not None and not str(getattr(inner, "__module__", "")).startswith("autograd"):
            return inner
        return fn
    if getattr(fn, "_is_primitive", False) is True and \
            getattr(getattr(fn, "__code__", None), "co_filename", "").endswith(_TRACER):
        # autograd's notrace_primitive: np.shape, np.ndim, isinstance; the function it wraps
        # is its __wrapped__ or (autograd's own ``wraps``, which does not set it) the f_raw
        # of its closure
        if hasattr(fn, "__wrapped__"):
            return fn.__wrapped__
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        if "f_raw" in cells:
            return cells["f_raw"].cell_contents
    if "autograd" not in sys.modules:
        return fn
    if isinstance(fn, type) and fn.__qualname__.endswith("wrap_intdtype.<locals>.IntdtypeSubclass"):
        return fn.__bases__[0]  # autograd's np.int64: NumPy's, its constructor not traced
    made = _made_transform(fn)
    if made is not None:
        return made
    _fill()
    return _TABLE.get(id(fn), fn)


def primitive_body(fn):
    """The Python function an autograd primitive of autograd's own wraps (its ``.fun``:
    ``autograd.misc.fixed_points.fixed_point``'s loop), for one no table of jitgrad's names
    (the builder asks last, after its tables); ``fn`` itself for anything else. Its derivative
    is jitgrad's of that code: of the value it computes (fixed_point's: of the iterate it
    returns, through its loop; autograd's rule is the implicit one at the limit, which differs
    from it by about the iteration's tolerance)."""
    inner = getattr(fn, "fun", None)
    if getattr(fn, "_is_autograd_primitive", False) is True and isinstance(inner, types.FunctionType):
        return inner
    return fn


def as_jitgrads(fn):
    """``fn``, or jitgrad's transform where ``fn`` is a function autograd's ``grad(fun)`` (or
    value_and_grad, jacobian, hessian, elementwise_grad) made: what the entry points
    differentiate when handed one (``jitgrad.grad(autograd.grad(f))`` is grad of grad)."""
    return (_made_transform(fn) if "autograd" in sys.modules else None) or fn


def _made_transform(fn):
    """jitgrad's transform for a function autograd's ``grad(fun, argnum)`` (or
    value_and_grad, jacobian, hessian) made (its ``nary_f``, of ``fun``, ``argnum`` and the
    operator in its closure), or None for any other ``fn``."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name != "nary_f" or not code.co_filename.endswith(_WRAP_UTIL):
        return None
    cells = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
    op = cells.get("unary_operator")
    name = getattr(op, "__name__", None)
    if (getattr(op, "__module__", None) != "autograd.differential_operators"
            or name not in TRANSFORMS or cells.get("nary_op_args")
            or cells.get("nary_op_kwargs")):
        return None
    argnum = cells.get("argnum", 0)
    fun = _made_transform(cells["fun"]) or cells["fun"]  # grad(grad(f)): jitgrad's of jitgrad's
    return TRANSFORMS[name](fun, tuple(argnum) if isinstance(argnum, list) else argnum)
