"""`Tensor`: a float or NumPy array whose NumPy operations the tape records.

Takes the user's NumPy code running on tensors: operators, ufuncs (``__array_ufunc__``), NumPy
functions (``__array_function__``), methods, indexing and in-place writes, each sent through
`jitgrad.lang.symbolic.NUMPY` (or the handlers here) to a primitive of
`jitgrad.prims.primitives`. Guarantees: every value is computed by the primitive's NumPy
``impl`` (or NumPy's float64 scalar operators, the same IEEE result); a node (`graph`'s layout)
is recorded whenever a gradient can flow; writes are copy-on-write, and a view taken before a
write into its array is refused when used (`STALE`).
"""

from __future__ import annotations

import itertools
import math
import operator
import weakref

import numpy as np

from jitgrad.core.errors import JitgradError, ShapeError, SignatureError, UnsupportedError
from jitgrad.lang import numpy_api, numpy_reductions, symbolic
from jitgrad.prims import primitives
from jitgrad.prims.primitives import RULES
from jitgrad.tape.errors import lost_gradient_error, stale_view_error, user_loc
from jitgrad.tape.graph import LEAF, backward, gc_paused

_ndarray = np.ndarray
_new = object.__new__
_PRIMS = primitives.PRIMITIVES
_RULES_GET = RULES.get
_GETITEM = _PRIMS["getitem"]
_SETITEM = _PRIMS["setitem"]
_EXPAND_DIMS = _PRIMS["expand_dims"]
_SCALAR_FLOATS = (float, np.float64)
_SCALAR_NUMBERS = (float, np.float64, int)
_f64 = np.float64
# Binary primitives computed on two scalars (one of them a float) with NumPy's float64 scalar
# operators rather than the ufunc: the same value (one IEEE operation, NumPy's rules for
# division by zero), ten times less overhead.
_SCALAR_OPS = {_PRIMS[name]: fn for name, fn in (
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
    ("div", operator.truediv), ("lt", operator.lt), ("le", operator.le), ("gt", operator.gt),
    ("ge", operator.ge), ("eq", operator.eq), ("ne", operator.ne))}
_INT_TYPES = (int, np.int64, np.int32, np.intp)
_seq = itertools.count()  # the order nodes are recorded in (a node's layout: `graph`)


class Stale:
    """Marks a view taken before a write into the tensor it views (``Tensor._base``)."""

    __slots__ = ()


STALE = Stale()


# ----------------------------------------------------------------------------- Tensor


def _as_value(value):
    if isinstance(value, Tensor):
        return value.value
    if isinstance(value, (list, tuple)):
        return np.array(value, dtype=np.float64)
    if isinstance(value, (_ndarray, bool, int, float, np.number, np.bool_)):
        return value
    raise TypeError(f"a Tensor holds a number or a NumPy array, not {type(value).__name__}")


def _float_leaf_value(value, what="a Tensor that requires gradients"):
    """``value`` as a leaf value (float, or float64 array); refuses non-float values."""
    if isinstance(value, _ndarray):
        if value.dtype.kind != "f":
            raise SignatureError(f"{what} must hold floats, not an array of {value.dtype}")
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, (float, np.floating)):
        return float(value)
    raise SignatureError(f"{what} must hold floats, not {type(value).__name__}")


def _make(value, node):
    t = _new(_ArrayTensor if type(value) is _ndarray and value.ndim else Tensor)
    t.value = value
    t.grad = None
    t._node = node
    t._base = None
    t._views = None
    return t


def _is_float(v) -> bool:
    if type(v) in _SCALAR_FLOATS:
        return True
    if type(v) is _ndarray:
        return v.dtype.kind == "f"
    return isinstance(v, (float, np.floating))


def _record(prim, args, params):
    """Run ``prim`` on the values of ``args``; record a node if a gradient can flow."""
    vals = []
    parents = None
    for k, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._base is STALE:
                raise stale_view_error()
            vals.append(a.value)
            n = a._node
            if n is not None:
                if parents is None:
                    parents = [None] * len(args)
                parents[k] = a if n is LEAF else n
        else:
            vals.append(a)
    fast = _SCALAR_OPS.get(prim)
    if (fast is not None and type(vals[0]) in _SCALAR_NUMBERS and type(vals[1]) in _SCALAR_NUMBERS
            and (type(vals[0]) in _SCALAR_FLOATS or type(vals[1]) in _SCALAR_FLOATS)):
        out = fast(_f64(vals[0]), vals[1])  # NumPy scalar arithmetic: the same IEEE result
    else:
        out = prim.impl(*vals, **params)
    node = None
    if parents is not None:
        rules = _RULES_GET(prim.name)
        if rules is not None and _is_float(out):
            nr = len(rules)
            for k, p in enumerate(parents):
                if p is not None and k < nr and rules[k] is not None:
                    node = (next(_seq), prim, rules, parents, vals, params, out)
                    break
    t = _make(out, node)
    if type(out) is _ndarray and out.base is not None:
        _track_view(t, args)
    return t


def _track_view(t, args) -> None:
    """Remember that ``t`` shares storage with a tensor it was computed from (NumPy view)."""
    for a in args:
        if isinstance(a, Tensor) and type(a.value) is _ndarray and np.may_share_memory(
                t.value, a.value):
            root = a._base if a._base is not None else a
            t._base = root
            if root._node is LEAF:  # never written: its views never go stale
                return
            views = root._views
            if views is None:
                root._views = [weakref.ref(t)]
                return
            views.append(weakref.ref(t))
            if len(views) >= 64 and (len(views) & (len(views) - 1)) == 0:
                views[:] = [r for r in views if r() is not None]
            return


def _index_int(v):
    if isinstance(v, Tensor):
        v = v.value
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, _ndarray) and v.ndim):
        raise UnsupportedError("indexing with an array or a bool (fancy or boolean indexing) "
                               "is not supported; index with integers and slices", user_loc())
    try:
        return operator.index(v)
    except TypeError:
        raise UnsupportedError(f"an index must be an integer, not {type(v).__name__}",
                               user_loc()) from None


def _advanced(x, key):
    """An advanced index of ``x`` (jitgrad's forms: a boolean mask of x's shape or over its
    rows, a pair of integer vectors ``a[rows, cols]``): ``(positions, rows)``, the positions
    it names (NumPy's `index_positions`) and whether they are rows of x (else flat positions
    of its first two axes); None for any other index."""
    def plain(v):
        return v.value if isinstance(v, Tensor) else v
    shape = _shape_of(x)
    positions = _PRIMS["index_positions"].impl
    k = plain(key)
    if type(k) is _ndarray and k.dtype.kind == "b":
        if k.ndim == len(shape):
            return positions(k, x.value, kind="mask"), len(shape) == 1
        if k.ndim == 1:
            return positions(k, x.value, kind="mask_rows"), True
    if (type(k) is tuple and len(k) == 2 and all(type(plain(i)) is _ndarray and plain(i).ndim
                                                 == 1 and plain(i).dtype.kind in "iu"
                                                 for i in k)):
        return positions(plain(k[0]), plain(k[1]), x.value, kind="pairs"), False
    return None


def _index(key):
    """A Python index → (index_spec, index values, newaxis positions), as jitgrad's parser
    builds them: items "i" (an integer), ":" (a full slice), ("s", has_start, has_stop,
    has_step); ``None`` items become expand_dims after the read."""
    if type(key) is not tuple:
        key = (key,)
    spec, vals, newaxes, pos = [], [], [], 0
    for item in key:
        if item is None:
            newaxes.append(pos)
            pos += 1
        elif type(item) is slice:
            flags = []
            for part in (item.start, item.stop, item.step):
                if part is not None:
                    vals.append(_index_int(part))
                flags.append(part is not None)
            spec.append(("s", *flags) if any(flags) else ":")
            pos += 1
        elif item is Ellipsis:
            raise UnsupportedError("... in an index is not supported", user_loc())
        else:
            vals.append(_index_int(item))
            spec.append("i")
    return tuple(spec), vals, newaxes


def _shape_of(x):
    return np.shape(x.value if isinstance(x, Tensor) else x)


class Tensor:
    """A float or NumPy array whose NumPy operations are recorded for ``backward()``.

    ``Tensor(value, requires_grad=False)``; a tensor holding an array of rank >= 1 also
    supports indexing, ``len``, iteration and in-place writes.
    """

    __slots__ = ("__weakref__", "_base", "_node", "_views", "grad", "value")
    __array_priority__ = 1000

    def __new__(cls, value, requires_grad=False):
        value = _as_value(value)
        if requires_grad:
            value = _float_leaf_value(value)
        t = _make(value, LEAF if requires_grad else None)
        return t

    # -- gradients -----------------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """True for a leaf that requires gradients and for every result computed from one."""
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        if not self.is_leaf:
            raise JitgradError("requires_grad can only be changed on a leaf tensor (one not "
                               "computed from tensors that require gradients); use detach()")
        if flag:
            self.value = _float_leaf_value(self.value)
            self._node = LEAF
        else:
            self._node = None

    @property
    def is_leaf(self) -> bool:
        return self._node is None or self._node is LEAF

    def backward(self, gradient=None) -> None:
        """Add d(self)/d(leaf) to ``leaf.grad`` of every leaf that requires gradients.

        ``self`` must be a scalar unless ``gradient`` (of self's shape) is given. The graph is
        kept: calling ``backward()`` again adds the same gradients again.
        """
        if self._base is STALE:
            raise stale_view_error()
        shape = np.shape(self.value)
        if gradient is None:
            if shape:
                raise ShapeError(f"backward() needs a scalar; this tensor has shape {shape} "
                                 "(reduce it, e.g. with np.sum, or pass gradient=)")
            seed = 1.0
        else:
            seed = gradient.value if isinstance(gradient, Tensor) else gradient
            if np.shape(seed) != shape:
                raise ShapeError(f"backward(gradient=...): the gradient has shape "
                                 f"{np.shape(seed)}, the tensor has shape {shape}")
        if self._node is None:
            raise JitgradError("backward() on a tensor that does not require gradients (it "
                               "depends on no tensor created with requires_grad=True)")
        with gc_paused():
            backward(self, seed)

    def detach(self) -> Tensor:
        """The same value, cut from the graph (no gradient flows through it)."""
        if self._base is STALE:
            raise stale_view_error()
        t = _make(self.value, None)
        if type(self.value) is _ndarray and self.value.ndim:
            _track_view(t, (self,))
        return t

    def numpy(self):
        """The plain value (float or ndarray), without gradient tracking."""
        if self._base is STALE:
            raise stale_view_error()
        return self.value

    def item(self):
        """The single element: a Python number, or a scalar tensor if gradients flow."""
        if self._node is not None:
            return _PRIMS["reshape_like"](self, 0.0)
        v = self.value
        return v.item() if isinstance(v, (_ndarray, np.generic)) else v

    # -- conversions: control flow works on values; losing a gradient raises -------------

    def __float__(self):
        if self._node is not None:
            raise lost_gradient_error("float()")
        if self._base is STALE:
            raise stale_view_error()
        return float(self.value)

    def __array__(self, dtype=None, copy=None):
        if self._node is not None:
            raise lost_gradient_error("conversion to a NumPy array")
        if self._base is STALE:
            raise stale_view_error()
        if copy:
            return np.array(self.value, dtype=dtype, copy=True)
        return np.asarray(self.value, dtype=dtype)

    def __bool__(self):
        if self._base is STALE:
            raise stale_view_error()
        return bool(self.value)

    def __int__(self):
        return int(self.value)

    def __index__(self):
        return operator.index(self.value)

    def __floor__(self):
        return math.floor(self.value)

    def __ceil__(self):
        return math.ceil(self.value)

    def __trunc__(self):
        return math.trunc(self.value)

    def __format__(self, spec):
        return format(self.value, spec)

    def __repr__(self) -> str:
        flag = ", requires_grad=True" if self._node is not None else ""
        return f"Tensor({self.value!r}{flag})"

    __hash__ = object.__hash__

    # -- array attributes ----------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        return np.shape(self.value)

    @property
    def ndim(self) -> int:
        return np.ndim(self.value)

    @property
    def size(self) -> int:
        return np.size(self.value)

    @property
    def dtype(self):
        return np.asarray(self.value).dtype

    @property
    def T(self):
        return _record(_PRIMS["transpose"], (self,), {})

    def sum(self, axis=None, keepdims=False):
        return _sum(self, axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        return _mean(self, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        return _max(self, axis, keepdims)

    def min(self, axis=None, keepdims=False):
        return _min(self, axis, keepdims)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return numpy_api.np_reshape(self, tuple(_index_int(d) for d in shape))

    def copy(self):
        return _copy(self)

    def dot(self, other):
        return symbolic.NUMPY[np.dot](self, other)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return numpy_api.np_transpose(self, axes or None)

    def astype(self, dtype):
        return numpy_api.np_cast(self, dtype)

    def prod(self, axis=None, keepdims=False): return numpy_reductions.np_prod(self, axis, keepdims)
    def var(self, *args, **kw): return numpy_reductions.np_var(self, *args, **kw)
    def std(self, *args, **kw): return numpy_reductions.np_std(self, *args, **kw)
    def cumsum(self, axis=None): return numpy_reductions.np_cumsum(self, axis)
    def cumprod(self, axis=None): return numpy_reductions.np_cumprod(self, axis)
    def ravel(self): return numpy_api.np_ravel(self)

    @property
    def flat(self): return numpy_api.np_ravel(self)  # read only: x.flat[i]
    def flatten(self): return _copy(numpy_api.np_ravel(self))
    def squeeze(self, axis=None): return numpy_api.np_squeeze(self, axis)
    def repeat(self, repeats, axis=None): return symbolic.NUMPY[np.repeat](self, repeats, axis)
    def swapaxes(self, a, b): return symbolic.NUMPY[np.swapaxes](self, a, b)
    def diagonal(self, offset=0, axis1=0, axis2=1):
        return symbolic.NUMPY[np.diagonal](self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1): return symbolic.NUMPY[np.trace](self, offset, axis1, axis2)

    # -- NumPy protocols -----------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        handler = symbolic.NUMPY.get(ufunc)
        if method != "__call__" or handler is None or kwargs:
            name = f"np.{ufunc.__name__}" + (f".{method}" if method != "__call__" else "")
            if "out" in kwargs:
                raise UnsupportedError(
                    f"{name}(..., out=) on a Tensor: an in-place update of a plain NumPy array "
                    "with a tensor (`y += t` where y is np.zeros(...)) cannot be recorded; "
                    "allocate y from a tensor (np.zeros_like(x), x.copy())", user_loc())
            if handler is not None and method == "__call__":
                raise UnsupportedError(f"{name}(..., {', '.join(kwargs)}=) is not supported",
                                       user_loc())
            raise UnsupportedError(f"{name} is not supported on Tensors (jitgrad has no "
                                   "derivative rule for it)", user_loc())
        return handler(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        handler = _FUNCTIONS.get(func) or symbolic.NUMPY.get(func)
        if handler is None:
            raise UnsupportedError(f"np.{func.__name__} is not supported on Tensors (jitgrad "
                                   "has no derivative rule for it)", user_loc())
        return handler(*args, **kwargs)

    def _jitgrad_apply(self, prim, args, params):
        return _record(prim, args, params)

    # -- operators -----------------------------------------------------------------------

    def __add__(self, o): return _record(_ADD, (self, o), {})
    def __radd__(self, o): return _record(_ADD, (o, self), {})
    def __sub__(self, o): return _record(_SUB, (self, o), {})
    def __rsub__(self, o): return _record(_SUB, (o, self), {})
    def __mul__(self, o): return _record(_MUL, (self, o), {})
    def __rmul__(self, o): return _record(_MUL, (o, self), {})
    def __truediv__(self, o): return _record(_DIV, (self, o), {})
    def __rtruediv__(self, o): return _record(_DIV, (o, self), {})
    def __floordiv__(self, o): return _record(_PRIMS["floordiv"], (self, o), {})
    def __rfloordiv__(self, o): return _record(_PRIMS["floordiv"], (o, self), {})
    def __mod__(self, o): return _record(_PRIMS["mod"], (self, o), {})
    def __rmod__(self, o): return _record(_PRIMS["mod"], (o, self), {})
    def __pow__(self, o): return _record(_POW, (self, o), {})
    def __rpow__(self, o): return _record(_POW, (o, self), {})
    def __matmul__(self, o): return numpy_api.matmul(self, o)
    def __rmatmul__(self, o): return numpy_api.matmul(o, self)
    def __neg__(self): return _record(_PRIMS["neg"], (self,), {})
    def __pos__(self): return self
    def __abs__(self): return _record(_PRIMS["abs"], (self,), {})
    def __lt__(self, o): return _record(_PRIMS["lt"], (self, o), {})
    def __le__(self, o): return _record(_PRIMS["le"], (self, o), {})
    def __gt__(self, o): return _record(_PRIMS["gt"], (self, o), {})
    def __ge__(self, o): return _record(_PRIMS["ge"], (self, o), {})
    def __eq__(self, o): return _record(_PRIMS["eq"], (self, o), {})  # noqa: E704
    def __ne__(self, o): return _record(_PRIMS["ne"], (self, o), {})
    def __and__(self, o): return _record(_PRIMS["logical_and"], (self, o), {})
    def __rand__(self, o): return _record(_PRIMS["logical_and"], (o, self), {})
    def __or__(self, o): return _record(_PRIMS["logical_or"], (self, o), {})
    def __ror__(self, o): return _record(_PRIMS["logical_or"], (o, self), {})
    def __xor__(self, o): return _record(_PRIMS["ne"], (self, o), {})
    def __rxor__(self, o): return _record(_PRIMS["ne"], (o, self), {})
    def __invert__(self): return _record(_PRIMS["logical_not"], (self,), {})


_ADD, _SUB, _MUL, _DIV, _POW = (_PRIMS["add"], _PRIMS["sub"], _PRIMS["mul"], _PRIMS["div"],
                                _PRIMS["pow"])


class _ArrayTensor(Tensor):
    """A tensor holding an array of rank >= 1: indexing, ``len``, iteration, writes.

    (A separate class so that NumPy does not take a scalar tensor for a sequence: writing one
    into a plain array then reaches ``__float__`` and its clear error.)
    """

    __slots__ = ()

    def __len__(self):
        return len(self.value)

    def __iter__(self):
        for k in range(len(self.value)):
            yield _record(_GETITEM, (self, k), {"index_spec": ("i",)})

    def __getitem__(self, key):
        if type(key) in _INT_TYPES:
            return _record(_GETITEM, (self, key), {"index_spec": ("i",)})
        if type(key) is tuple and key and all(type(k) in _INT_TYPES for k in key):
            return _record(_GETITEM, (self, *key), {"index_spec": ("i",) * len(key)})
        idx = key.value if isinstance(key, Tensor) else key
        if type(idx) is _ndarray and idx.ndim == 1 and idx.dtype.kind in "iu":
            return _record(primitives.PRIMITIVES["take"], (self, idx), {})  # x[idx], as jitgrad reads it
        advanced = _advanced(self, key)
        if advanced is not None:  # the entries at the positions: a take of rows
            positions, rows = advanced
            shape = self.shape
            lead = shape[0] if rows else shape[0] * shape[1]
            rest = tuple(shape[1 if rows else 2:])
            flat = self if rows else _record(_PRIMS["reshape"], (self, lead, *rest), {})
            return _record(primitives.PRIMITIVES["take"], (flat, positions), {})
        spec, vals, newaxes = _index(key)
        out = self
        if spec and not all(s == ":" for s in spec):
            out = _record(_GETITEM, (self, *vals), {"index_spec": spec})
        elif self._base is STALE:
            raise stale_view_error()
        for pos in newaxes:
            out = _record(_EXPAND_DIMS, (out,), {"axis": pos})
        return out

    def _check_writable(self) -> None:
        if self._node is LEAF:
            raise UnsupportedError("writing into a leaf tensor that requires gradients (an "
                                   "argument being differentiated); copy it first "
                                   "(y = x.copy())", user_loc())
        if self._base is STALE:
            raise stale_view_error()
        if self._base is not None:
            raise UnsupportedError("writing into a view of another array (the result of "
                                   "indexing, reshaping, transposing or detach()) is not "
                                   "supported by the tape; write into the array itself "
                                   "(`Y[i, j] = v`, not `Y[i][j] = v`)", user_loc())

    def _become(self, new: Tensor) -> None:
        """Take the value and node of ``new`` (same shape): an in-place update of self."""
        views = self._views
        if views:
            for r in views:
                v = r()
                if v is not None:
                    v._base = STALE
        self._views = None
        self.value = new.value
        self._node = new._node

    def __setitem__(self, key, v):
        self._check_writable()
        idx = key.value if isinstance(key, Tensor) else key
        if type(idx) is _ndarray and idx.ndim == 1 and idx.dtype.kind in "iu":
            return self._write_at(_PRIMS["index_positions"].impl(idx, self.value, kind="rows"),
                                  True, v)
        advanced = _advanced(self, key)
        if advanced is not None:
            return self._write_at(*advanced, v)
        if type(key) in _INT_TYPES:
            spec, vals, newaxes = ("i",), (key,), ()
        else:
            spec, vals, newaxes = _index(key)
        if newaxes:
            raise UnsupportedError("None (np.newaxis) in the index of a write", user_loc())
        self._become(_record(_SETITEM, (self, v, *vals), {"index_spec": spec}))

    def _write_at(self, positions, rows: bool, v) -> None:
        """``x[idx] = v`` (and ``x[mask] = v``, ``a[rows, cols] = v``): one write per
        position, in order (a repeated position keeps the last value, as NumPy assigns)."""
        shape = self.shape
        per_item = len(shape) - (1 if rows or len(shape) == 1 else 2)
        each = np.ndim(v.value if isinstance(v, Tensor) else v) == per_item + 1
        if each and np.shape(v.value if isinstance(v, Tensor) else v)[0] != len(positions):
            raise ValueError("shape mismatch: the values do not match the entries indexed")
        for k, p in enumerate(positions):
            at = int(p) if rows or len(shape) == 1 else (int(p) // shape[1], int(p) % shape[1])
            self[at] = v[k] if each else v

    def _inplace(self, prim, o):
        self._check_writable()
        new = _record(prim, (self, o), {})
        if np.shape(new.value) != np.shape(self.value):
            raise ValueError(f"non-broadcastable output operand with shape {self.shape} "
                             f"doesn't match the broadcast shape {new.shape}")
        if not np.can_cast(new.value.dtype, self.value.dtype, "same_kind"):
            raise TypeError(f"in-place {prim.name}: cannot cast {new.value.dtype} to "
                            f"{self.value.dtype}")
        self._become(new)
        return self

    def __iadd__(self, o): return self._inplace(_ADD, o)
    def __isub__(self, o): return self._inplace(_SUB, o)
    def __imul__(self, o): return self._inplace(_MUL, o)
    def __itruediv__(self, o): return self._inplace(_DIV, o)
    def __ipow__(self, o): return self._inplace(_POW, o)
    def __ifloordiv__(self, o): return self._inplace(_PRIMS["floordiv"], o)
    def __imod__(self, o): return self._inplace(_PRIMS["mod"], o)


# ----------------------------------------------------------------------------- NumPy functions
# The handlers of `symbolic.NUMPY` listed here test `isinstance(x, Sym)` to tell a recorded
# value from a plain one, so on a Tensor they would recurse (np.sum, np.mean, np.max, np.min,
# np.ndim) or return a constant (np.zeros_like, np.ones_like) or the argument itself
# (np.copy). These do the same normalisation for tensors and end in the same primitives.


def _reduce(op):
    prim = _PRIMS[op]

    def reduce(x, axis=None, keepdims=False, **unsupported):
        if unsupported:
            raise UnsupportedError(f"np.{op}(..., {', '.join(unsupported)}=) is not supported",
                                   user_loc())
        if not isinstance(x, Tensor):
            return getattr(np, op)(x, axis=axis, keepdims=keepdims)
        ndim = np.ndim(x.value)
        axis = numpy_api.norm_axis(axis, ndim, None)
        if ndim == 0:
            return x
        if isinstance(axis, tuple):  # several axes: one at a time, highest first
            for a in sorted(axis, reverse=True):
                x = _record(prim, (x,), {"axis": a, "keepdims": bool(keepdims)})
            return x
        return _record(prim, (x,), {"axis": axis, "keepdims": bool(keepdims)})

    return reduce


_sum, _max, _min = _reduce("sum"), _reduce("max"), _reduce("min")


def _mean(x, axis=None, keepdims=False, **unsupported):
    if not isinstance(x, Tensor):
        return np.mean(x, axis=axis, keepdims=keepdims)
    total = _sum(x, axis, keepdims, **unsupported)
    shape = np.shape(x.value)
    if not shape:
        return total
    axis = numpy_api.norm_axis(axis, len(shape), None)
    if axis is None:
        count = int(np.prod(shape))
    else:
        count = 1
        for a in axis if isinstance(axis, tuple) else (axis,):
            count *= shape[a]
    return total / count


def _like(name):
    prim = _PRIMS[name]

    def like(x, dtype=None, **unsupported):
        if unsupported:
            raise UnsupportedError(f"np.{name}(..., {', '.join(unsupported)}=) is not "
                                   "supported", user_loc())
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise UnsupportedError(f"np.{name} with a non-float dtype", user_loc())
        return _record(prim, (x,), {})

    return like


def _copy(x, **unsupported):
    if unsupported:
        raise UnsupportedError(f"np.copy(..., {', '.join(unsupported)}=) is not supported",
                               user_loc())
    if isinstance(x, Tensor) and type(x.value) is _ndarray:
        return _record(_PRIMS["copy"], (x,), {})
    return x  # a number is immutable: its copy is itself


_FUNCTIONS = {
    np.sum: _sum, np.mean: _mean, np.max: _max, np.min: _min, np.amax: _max, np.amin: _min,
    np.zeros_like: _like("zeros_like"), np.ones_like: _like("ones_like"), np.copy: _copy,
    np.ndim: lambda x: len(_shape_of(x)), np.shape: _shape_of,
    np.size: lambda x, axis=None: (int(np.prod(_shape_of(x))) if axis is None
                                   else _shape_of(x)[axis]),
}
