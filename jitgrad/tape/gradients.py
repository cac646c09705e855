"""`grad` and `value_and_grad` on the tape, with the signature and semantics of `jitgrad.grad`.

Takes a scalar function and the arguments to differentiate (positions, names, or a tuple of
them). An argument may be a tree (`core.pytree`: dicts, lists and tuples, nested, of numbers
and arrays), as `jitgrad.grad` takes it. ``has_aux=True``: the function returns ``(value,
aux)``, and the call returns ``(gradients, aux)`` (``((value, aux), gradients)`` from
`value_and_grad`), JAX's conventions, as `jitgrad.grad` does.

Guarantees: the function runs once on leaf tensors in place of those arguments' float leaves
with Python's cyclic garbage collector paused; the gradient comes back in each argument's type
and structure (a float for a float, a fresh array of the argument's shape and dtype for an
array, the same tree for a tree, with None for its integer, bool and string leaves, which are
not differentiated), zero where no gradient flowed. Aux comes back with plain values in place
of tensors.
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

    def __init__(self, fn, wrt=0, *, with_value: bool = False, has_aux: bool = False):
        if not callable(fn):
            raise TypeError(f"jitgrad.tape.grad needs a function, got {type(fn).__name__}")
        self.fn = fn
        self.with_value = with_value
        self.has_aux = bool(has_aux)
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
                leaves[k] = _leaves_for(originals[k], name)
                bound.arguments[name] = leaves[k]
        with gc_paused():
            out = self.fn(*bound.args, **bound.kwargs)
            aux = None
            if self.has_aux:
                if not isinstance(out, tuple) or len(out) != 2:
                    raise ShapeError(f"{self.qualname} has has_aux=True and must return a pair "
                                     f"(value, aux); it returned {type(out).__name__}")
                out, aux = out
            value, root = self._scalar(out)
            if root is not None and root._node is not None:
                backward(root, 1.0)
        grads = tuple(_gradients_like(originals[k], leaves[k]) for k in self.wrt)
        result = grads if self.wrt_tuple else grads[0]
        if self.has_aux:
            aux = _plain(aux)
            return ((value, aux), result) if self.with_value else (result, aux)
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


def _leaves_for(arg, name):
    """``arg`` with a leaf tensor in place of each float leaf (a tree keeps its structure; its
    integer, bool, string and None leaves stay as they are)."""
    if isinstance(arg, dict):
        return {key: _tree_leaf(v, f"{name}[{key!r}]") for key, v in arg.items()}
    if isinstance(arg, (tuple, list)):
        return type(arg)(_tree_leaf(v, f"{name}[{j}]") for j, v in enumerate(arg))
    return _leaf_for(arg, name)


def _tree_leaf(value, name):
    if isinstance(value, (dict, tuple, list)):
        return _leaves_for(value, name)
    if _not_differentiated(value):
        return value  # no gradient: None comes back in its place
    return _leaf_for(value, name)  # a float or float array (anything else is refused)


def _not_differentiated(value) -> bool:
    """An integer, bool, string or None leaf of a tree (as `jitgrad.grad` treats them)."""
    if isinstance(value, _ndarray):
        return value.dtype.kind in "biu"
    return value is None or isinstance(value, (bool, int, str, np.bool_, np.integer))


def _gradients_like(arg, leaves):
    """The gradients of ``arg`` from its ``leaves`` (`_leaves_for`), in its structure."""
    if isinstance(arg, dict):
        return {key: _gradients_like(v, leaves[key]) for key, v in arg.items()}
    if isinstance(arg, (tuple, list)):
        return type(arg)(_gradients_like(v, t) for v, t in zip(arg, leaves))
    if not isinstance(leaves, Tensor):
        return None
    return _gradient_like(arg, leaves.grad)


def _plain(aux):
    """``aux`` with each tensor's value in its place."""
    if isinstance(aux, Tensor):
        return aux.value
    if isinstance(aux, dict):
        return {key: _plain(v) for key, v in aux.items()}
    if isinstance(aux, (tuple, list)):
        return type(aux)(_plain(v) for v in aux)
    return aux


def _leaf_for(arg, name) -> Tensor:
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


def grad(fn=None, wrt=0, *, has_aux=False):
    """The tape's gradient of a scalar function, with the signature of `jitgrad.grad`:
    ``@grad``, ``@grad(wrt=...)`` or ``grad(f, wrt)``; ``wrt`` is a position, a name, or a
    tuple of them (a tuple gives a tuple of gradients). ``has_aux=True``: the function returns
    ``(value, aux)`` and the call ``(gradients, aux)``."""
    if fn is None:
        return lambda f: TapeGradFunction(f, wrt, has_aux=has_aux)
    if isinstance(fn, (int, str, tuple, list)) and not callable(fn):
        wrt_given = fn
        return lambda f: TapeGradFunction(f, wrt_given, has_aux=has_aux)
    return TapeGradFunction(fn, wrt, has_aux=has_aux)


def value_and_grad(fn=None, wrt=0, *, has_aux=False):
    """Like `grad`, returning ``(value, gradient)`` (with ``has_aux=True``: ``((value, aux),
    gradient)``)."""
    if fn is None:
        return lambda f: TapeGradFunction(f, wrt, with_value=True, has_aux=has_aux)
    return TapeGradFunction(fn, wrt, with_value=True, has_aux=has_aux)
