"""`grad` and `value_and_grad` on the tape, with the signature and semantics of `jitgrad.grad`.

Takes a scalar function and the arguments to differentiate (positions, names, or a tuple of
them). Guarantees: the function runs once on leaf tensors in place of those arguments (a tuple
or list argument: one leaf per item) with Python's cyclic garbage collector paused; the
gradient comes back in each argument's type (a float for a float, a fresh array of the
argument's shape and dtype for an array), zero where no gradient flowed.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from jitgrad.core.errors import ShapeError, SignatureError
from jitgrad.tape.errors import stale_view_error
from jitgrad.tape.graph import backward, gc_paused
from jitgrad.tape.tensor import STALE, Tensor

_ndarray = np.ndarray


class TapeGradFunction:
    """A function's gradient (or value and gradient), computed by running it on the tape."""

    def __init__(self, fn, wrt=0, *, with_value: bool = False):
        if not callable(fn):
            raise TypeError(f"jitgrad.tape.grad needs a function, got {type(fn).__name__}")
        self.fn = fn
        self.with_value = with_value
        self.qualname = getattr(fn, "__qualname__", repr(fn))
        self.signature = inspect.signature(fn)
        self.param_names = [p.name for p in self.signature.parameters.values()
                            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self.wrt_tuple = isinstance(wrt, (tuple, list))
        self.wrt = [self._position(w) for w in (wrt if self.wrt_tuple else (wrt,))]
        if not self.wrt:
            raise SignatureError("wrt is empty: name at least one argument to differentiate")
        functools.update_wrapper(self, fn)

    def _position(self, w) -> int:
        if isinstance(w, bool) or not isinstance(w, (int, np.integer, str)):
            raise SignatureError(f"wrt must name arguments by position or name, got {w!r}")
        if isinstance(w, str):
            if w not in self.param_names:
                raise SignatureError(f"{self.qualname} has no argument named {w!r} "
                                     f"(its arguments: {', '.join(self.param_names)})")
            return self.param_names.index(w)
        n = len(self.param_names)
        if not -n <= int(w) < n:
            raise SignatureError(f"wrt={w} is out of range: {self.qualname} takes {n} "
                                 "arguments")
        return int(w) % n

    def __call__(self, *args, **kwargs):
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise SignatureError(f"{self.qualname}(): {e}") from None
        bound.apply_defaults()
        originals, leaves = {}, {}
        for k in self.wrt:
            name = self.param_names[k]
            if k not in leaves:
                originals[k] = bound.arguments[name]
                if isinstance(originals[k], (tuple, list)):  # a tuple of leaves, one per item
                    leaves[k] = type(originals[k])(_leaf_for(v, f"{name}[{j}]")
                                                   for j, v in enumerate(originals[k]))
                else:
                    leaves[k] = _leaf_for(originals[k], name)
                bound.arguments[name] = leaves[k]
        with gc_paused():
            out = self.fn(*bound.args, **bound.kwargs)
            value, root = self._scalar(out)
            if root is not None and root._node is not None:
                backward(root, 1.0)
        grads = tuple(type(originals[k])(_gradient_like(o, leaf.grad) for o, leaf in zip(
            originals[k], leaves[k])) if isinstance(originals[k], (tuple, list))
            else _gradient_like(originals[k], leaves[k].grad) for k in self.wrt)
        result = grads if self.wrt_tuple else grads[0]
        return (value, result) if self.with_value else result

    def _scalar(self, out):
        root = out if isinstance(out, Tensor) else None
        v = out.value if root is not None else out
        if root is not None and root._base is STALE:
            raise stale_view_error()
        if not isinstance(v, (_ndarray, bool, int, float, np.number, np.bool_)) or np.ndim(v):
            what = (f"an array of shape {np.shape(v)}" if isinstance(v, _ndarray)
                    else f"{type(v).__name__}")
            raise ShapeError(f"{self.qualname} must return a scalar to be differentiated; it "
                             f"returned {what}")
        if isinstance(v, _ndarray):
            v = v[()]
        if isinstance(v, np.floating):
            v = float(v)
        elif isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.bool_):
            v = bool(v)
        return v, root

    def __repr__(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        wrt = [self.param_names[k] for k in self.wrt]
        return f"<jitgrad.tape.{kind} of {self.qualname} wrt {', '.join(wrt)}>"


def _leaf_for(arg, name) -> Tensor:
    if isinstance(arg, (list, tuple)):
        raise SignatureError(f"argument {name!r} is a {type(arg).__name__}; pass a NumPy array")
    kind = None
    if isinstance(arg, (bool, np.bool_)) or (isinstance(arg, _ndarray) and arg.dtype.kind == "b"):
        kind = "a bool"
    elif isinstance(arg, (int, np.integer)) or (isinstance(arg, _ndarray)
                                                 and arg.dtype.kind in "iu"):
        kind = "an integer"
    elif isinstance(arg, (complex, np.complexfloating)) or (isinstance(arg, _ndarray)
                                                            and arg.dtype.kind == "c"):
        kind = "complex"
    elif not isinstance(arg, (float, np.floating, _ndarray)):
        kind = f"a {type(arg).__name__}"
    if kind is not None:
        raise SignatureError(f"cannot differentiate with respect to argument {name!r}: it is "
                             f"{kind} ({type(arg).__name__}); pass a float or a float array")
    return Tensor(arg, requires_grad=True)


def _gradient_like(arg, g):
    """The gradient in the argument's type: float in → float out; array in → same shape and
    dtype out (a fresh array)."""
    if isinstance(arg, _ndarray):
        if g is None:
            return np.zeros(arg.shape, dtype=arg.dtype)
        return np.array(g, dtype=arg.dtype).reshape(arg.shape)
    g = 0.0 if g is None else float(g)
    if isinstance(arg, np.floating) and not isinstance(arg, np.float64):
        return type(arg)(g)
    return g


def grad(fn=None, wrt=0):
    """The tape's gradient of a scalar function, with the signature of `jitgrad.grad`:
    ``@grad``, ``@grad(wrt=...)`` or ``grad(f, wrt)``; ``wrt`` is a position, a name, or a
    tuple of them (a tuple gives a tuple of gradients)."""
    if fn is None:
        return lambda f: TapeGradFunction(f, wrt)
    if isinstance(fn, (int, str, tuple, list)) and not callable(fn):
        wrt_given = fn
        return lambda f: TapeGradFunction(f, wrt_given)
    return TapeGradFunction(fn, wrt)


def value_and_grad(fn=None, wrt=0):
    """Like `grad`, returning ``(value, gradient)``."""
    if fn is None:
        return lambda f: TapeGradFunction(f, wrt, with_value=True)
    return TapeGradFunction(fn, wrt, with_value=True)
