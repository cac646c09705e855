"""Symbolic values: NumPy code run on stand-ins that record IR equations.

`GraphBuilder` appends typed equations to a current `Block`; `Sym` is a value it knows only by
type (kind and rank). A `Sym` speaks NumPy: operators, ``np.exp(s)`` (through
``__array_ufunc__``), ``np.sum(s, axis=1)`` (through ``__array_function__``), ``s.T``,
``s.shape``. Both the parser (evaluating the user's expressions) and the reverse transform
(running the derivative rules of `rules.py`) build IR this way, so a rule written once in NumPy
runs on arrays in the tape and on `Sym`s here.

Every array value carries a size token per axis (`ir.Var.dims`). With ``assume_sizes``, two
argument axes that broadcast against each other are taken to be the same size and share one
token; `GraphBuilder.size_checks` lists the run-time checks that make that safe.

Guarantees: constants fold at build time (an operation on known numbers is computed, not
emitted); a NumPy function outside the table raises `UnsupportedError` naming it; every size
assumption is between argument axes (or an argument axis and a literal size) and has a check.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import primitives as P
from .errors import Loc, ShapeError, UnsupportedError
from .ir import Block, Const, Eqn, Namer, Var, broadcast_dims, dims_of
from .types import FLOAT, INT, Type

_NUMBER = (numbers.Number, np.number, np.bool_)


class GraphBuilder:
    """Appends equations to ``self.block``; folds constants; hands out names."""

    def __init__(self, namer: Namer, assume_sizes: bool = False):
        self.namer = namer
        self.block = Block()
        self.loc: Loc | None = None
        # Size assumptions (see `assume_same_sizes`): when on, two argument axes that broadcast
        # against each other are taken to be the same size, and the pairs are kept in
        # ``assumed`` for the run-time check. ``same`` is a union-find over size tokens.
        self.assume_sizes = assume_sizes
        self.same: dict = {}
        self.assumed: list[tuple] = []  # (token, token, loc), each a parameter axis or an int
        self.made: list[Var] = []  # every variable made here whose dims may need renaming
        self.param_axes: dict = {}  # size token of a parameter's axis -> (parameter, axis)
        # Arrays that may share memory (views, in-place versions, a loop's carried array and
        # its initial value) form one class. Each array value is stamped with its class's count
        # of in-place writes when it is made: a value read after a later write to its class
        # (through another name, or a view) would show values the graph does not know about.
        self.memory: dict[int, int] = {}  # union-find: id(var) -> id(parent)
        self.writes: dict[int, int] = {}  # id(class root) -> in-place writes so far
        self.stamp: dict[int, int] = {}  # id(array var) -> its class's writes when made
        self.views: set[int] = set()  # ids of views (slices, .T, reshapes)
        self.params: set[int] = set()  # ids of the parameters (the caller's arrays)

    # -- atoms ---------------------------------------------------------------------------

    def atom(self, value, check: bool = True):
        """The IR atom of a value; ``check``: refuse a read of an array whose memory was
        written in place since it was made (bookkeeping that reads no values passes False)."""
        if isinstance(value, Sym):
            value = value.atom
        if isinstance(value, Var):
            if check and self.is_stale(value):
                raise UnsupportedError(
                    f"`{value.name}` shares memory with an array written in place after "
                    f"`{value.name}` was made (it is a view — a slice, .T, reshape — or another "
                    "name for it); NumPy would show the new values through it, which jitgrad "
                    "does not follow. Take it after the write, or .copy() it", self.loc)
            return value
        if isinstance(value, Const):
            return value
        if isinstance(value, (bool, np.bool_)):
            return Const(bool(value))
        if isinstance(value, (int, np.integer)):
            return Const(int(value))
        if isinstance(value, (float, np.floating)):
            return Const(float(value))
        raise UnsupportedError(f"a value of type {type(value).__name__} cannot be used here",
                               self.loc)

    def sym(self, atom) -> Sym:
        return Sym(self, atom)

    def new_var(self, type_: Type, base: str | None = None) -> Var:
        return Var(self.namer.fresh(base) if base else self.namer.temp(), type_)

    def emit(self, prim: str, ins: list, params: dict, out_type: Type, base=None) -> Var:
        out = self.new_var(out_type, base)
        self.made.append(out)
        self.block.stmts.append(Eqn(prim, [out], list(ins), dict(params), self.loc))
        return out

    # -- applying a primitive ------------------------------------------------------------

    def apply(self, prim: P.Primitive, args, params) -> Sym | object:
        atoms = [self.atom(a) for a in args]
        if all(isinstance(a, Const) for a in atoms) and prim.name not in _NO_FOLD:
            value = prim.impl(*(a.value for a in atoms), **params)
            return _python_scalar(value)
        simplified = _simplify(prim.name, atoms)
        if simplified is not None:
            return self.sym(simplified) if isinstance(simplified, Var) else simplified.value
        types = [a.type for a in atoms]
        out_type = prim.type_rule(types, params)
        if prim.elementwise and self.assume_sizes:
            self.assume_same_sizes([a for a in atoms if a.type.ndim])
        out = self.emit(prim.name, atoms, params, out_type)
        out.dims = _dims(prim, atoms, params, out_type)
        if prim.name == "shape_dim":
            out.dims = (dims_of(atoms[0])[params["axis"]],)  # the size itself, as a token
        if out_type.ndim:
            if prim.name in _VIEWS and isinstance(atoms[0], Var):
                self.views.add(id(out))
            if (prim.name in _VIEWS or prim.name == "setitem") and isinstance(atoms[0], Var):
                self.share_memory(out, atoms[0])
            self.restamp(out)
        return self.sym(out)

    # -- sizes: what is assumed of the arguments' shapes ---------------------------------

    def set_params(self, params: list[Var]) -> None:
        self.params = {id(p) for p in params}
        for p in params:
            p.dims = tuple((id(p), k) for k in range(p.type.ndim))
            self.param_axes.update({t: (p, k) for k, t in enumerate(p.dims)})
            self.made.append(p)

    def size_class(self, token):
        while token in self.same:
            token = self.same[token]
        return token

    def assume_same_sizes(self, arrays: list) -> None:
        """Two axes that broadcast against each other and whose sizes are not known while
        building are, nearly always, the same size (``x @ W + b``); NumPy also allows either to
        be 1. Where both are axes of arguments (or one is a literal size), assume they are the
        same: the forward pass checks it first thing (``same_size``), and a call that breaks it
        gets the general code (`api`), which broadcasts and unbroadcasts at run time."""
        ndim = max((a.type.ndim for a in arrays), default=0)
        for k in range(ndim):
            first = None
            for a in arrays:
                j = k - (ndim - a.type.ndim)
                if j < 0:
                    continue
                t = self.size_class(dims_of(a)[j])
                if t == 1:
                    continue
                if first is None or t == first:
                    first = t
                    continue
                if not all(isinstance(x, int) or x in self.param_axes for x in (first, t)) or (
                        isinstance(first, int) and isinstance(t, int)):
                    continue  # two different literals: NumPy's own error, at run time
                keep, drop = (t, first) if isinstance(t, int) else (first, t)
                self.same[drop] = keep
                self.assumed.append((keep, drop, self.loc))
                self.rename_sizes()

    def rename_sizes(self) -> None:
        """Every variable's dims in terms of one token per class of same-size axes."""
        def canon(t):
            if isinstance(t, tuple) and t and t[0] == "broadcast":
                return ("broadcast",) + tuple(canon(x) for x in t[1:])
            return self.size_class(t)
        for v in self.made:
            if v.dims is not None:
                v.dims = tuple(canon(t) for t in v.dims)

    def size_checks(self) -> list[Eqn]:
        """The forward pass's first statements: one ``same_size`` per assumption."""
        out = []
        reads: dict = {}

        def size(token, loc):
            if isinstance(token, int):
                return Const(token)
            if token not in reads:
                p, k = self.param_axes[token]
                v = self.new_var(Type("i", 0), f"_{p.name}_shape{k}")
                v.dims = (self.size_class(token),)
                out.append(Eqn("shape_dim", [v], [p], {"axis": k}, loc))
                reads[token] = v
            return reads[token]

        for keep, drop, loc in self.assumed:
            a, b = size(keep, loc), size(drop, loc)
            out.append(Eqn("same_size", [], [a, b], {}, loc))
        return out

    # -- memory: which array values may alias --------------------------------------------

    def _find(self, i: int) -> int:
        while self.memory.get(i, i) != i:
            i = self.memory[i]
        return i

    def share_memory(self, a: Var, b: Var) -> None:
        """``a`` and ``b`` may be the same memory (a view, a version, a carried array)."""
        ra, rb = self._find(id(a)), self._find(id(b))
        if ra != rb:
            self.memory[ra] = rb
            self.writes[rb] = self.writes.get(rb, 0) + self.writes.get(ra, 0)

    def writes_to(self, v: Var) -> int:
        return self.writes.get(self._find(id(v)), 0)

    def restamp(self, v: Var) -> None:
        """``v`` holds the current contents of its memory."""
        self.stamp[id(v)] = self.writes_to(v)

    def is_stale(self, v: Var) -> bool:
        return id(v) in self.stamp and self.stamp[id(v)] != self.writes_to(v)

    def note_write(self, version: Var) -> None:
        """``version`` is the new contents of its memory after an in-place write."""
        root = self._find(id(version))
        self.writes[root] = self.writes.get(root, 0) + 1
        self.restamp(version)

    def check_writable(self, array: Var) -> None:
        """Before ``array[...] = v``: refuse what the graph could not follow."""
        if id(array) in self.views:
            raise UnsupportedError(
                f"writing into `{array.name}`, a view (a slice, .T or reshape) of another array, "
                "is not supported: write into the array itself, or .copy() the view first",
                self.loc)
        if id(array.root) in self.params:
            raise UnsupportedError(
                f"writing into `{array.name}`, which is an argument under another name: jitgrad "
                "copies an argument written in place only when it is written under its own "
                "name", self.loc)


def _size_token(a):
    """The size an integer atom stands for: a literal, or a value read from a shape."""
    if isinstance(a, Const):
        return a.value
    if a.type.ndim == 0 and a.dims is not None and len(a.dims) == 1:
        return a.dims[0]
    return None


def _dims(prim, atoms, params, out_type) -> tuple | None:
    """The size tokens of a primitive's result, from its operands' (None: unknown)."""
    name, arrays = prim.name, [a for a in atoms if a.type.ndim]
    if prim.elementwise:
        return broadcast_dims(*(dims_of(a) for a in arrays)) if arrays else ()
    d = dims_of(atoms[0]) if atoms else ()
    if name in ("sum", "max", "min"):
        axis, keep = params["axis"], params["keepdims"]
        if axis is None:
            return (1,) * len(d) if keep else ()
        return d[:axis] + ((1,) if keep else ()) + d[axis + 1:]
    if name == "matmul":
        a, b = d, dims_of(atoms[1])
        return (a[:-1] + b[1:]) if len(b) == 2 else a[:-1]  # (n, k) @ (k, m) -> (n, m)
    if name == "outer":
        return (d[0], dims_of(atoms[1])[0])
    if name == "transpose":
        axes = params.get("axes")
        return tuple(reversed(d)) if axes is None else tuple(d[k] for k in axes)
    if name == "expand_dims":
        return d[:params["axis"]] + (1,) + d[params["axis"]:]
    if name in ("reshape", "zeros", "ones", "empty", "full"):
        sizes = atoms[1:] if name in ("reshape", "full") else atoms
        tokens = tuple(_size_token(a) for a in sizes)
        return None if any(t is None for t in tokens) else tokens
    if name in ("reshape_like", "broadcast_like", "sum_to_like", "spread"):
        return dims_of(atoms[1])
    if name in ("choose_share", "copy", "cast", "zeros_like", "ones_like", "setitem"):
        return d
    if name == "getitem":
        spec, out = params["index_spec"], []
        for k, item in enumerate(spec):
            if item == ":":
                out.append(d[k])
            elif item != "i":
                return None  # a slice: a new size
        return tuple(out) + d[len(spec):]
    return None


_VIEWS = {"getitem", "transpose", "reshape", "reshape_like", "expand_dims"}
_NO_FOLD = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "copy"}


def _python_scalar(value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _is(atom, value) -> bool:
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == value


def _simplify(name: str, atoms):
    """Identities that keep the generated code free of ``0.0 * x`` and ``x * 1.0``."""
    if len(atoms) != 2:
        return None
    a, b = atoms
    if name == "mul":
        if _is(a, 1) and isinstance(b, Var) and b.type.kind == "f":
            return b
        if _is(b, 1) and isinstance(a, Var) and a.type.kind == "f":
            return a
    if name in ("add", "sub") and _is(b, 0) and isinstance(a, Var) and a.type.kind == "f":
        return a
    if name == "add" and _is(a, 0) and isinstance(b, Var) and b.type.kind == "f":
        return b
    if name == "div" and _is(b, 1) and isinstance(a, Var) and a.type.kind == "f":
        return a
    if name == "pow" and _is(b, 1) and isinstance(a, Var) and a.type.kind == "f":
        return a
    return None


# ----------------------------------------------------------------------------- Sym


def _apply(name, *args, **params):
    return P.PRIMITIVES[name](*args, **params)


class Sym:
    """A value known by its type only; NumPy operations on it record equations."""

    __array_priority__ = 1000

    def __init__(self, builder: GraphBuilder, atom):
        self.builder = builder
        self.atom = atom

    @property
    def type(self) -> Type:
        return self.atom.type

    @property
    def ndim(self) -> int:
        return self.atom.type.ndim

    def __repr__(self) -> str:
        return f"Sym({self.atom!r}: {self.type})"

    def _jitgrad_apply(self, prim, args, params):
        return self.builder.apply(prim, args, params)

    # Python truth and float conversion need a run-time value: refuse with the user's line.
    def __bool__(self):
        raise UnsupportedError(
            "this condition depends on run-time values where jitgrad needs it while building "
            "the graph (use it in an `if`/`while` statement, or np.where)", self.builder.loc)

    def __float__(self):
        raise UnsupportedError("float() of a run-time value inside an expression jitgrad "
                               "cannot follow", self.builder.loc)

    def __index__(self):
        raise UnsupportedError("a run-time value used where a constant integer is needed "
                               "(an axis, a reshape size in a tuple built by Python)",
                               self.builder.loc)

    def __iter__(self):
        raise UnsupportedError("iterating over an array outside a `for` statement",
                               self.builder.loc)

    def __len__(self):
        raise UnsupportedError("len() of a run-time value", self.builder.loc)

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, o): return _apply("add", self, o)
    def __radd__(self, o): return _apply("add", o, self)
    def __sub__(self, o): return _apply("sub", self, o)
    def __rsub__(self, o): return _apply("sub", o, self)
    def __mul__(self, o): return _apply("mul", self, o)
    def __rmul__(self, o): return _apply("mul", o, self)
    def __truediv__(self, o): return _apply("div", self, o)
    def __rtruediv__(self, o): return _apply("div", o, self)
    def __floordiv__(self, o): return _apply("floordiv", self, o)
    def __rfloordiv__(self, o): return _apply("floordiv", o, self)
    def __mod__(self, o): return _apply("mod", self, o)
    def __rmod__(self, o): return _apply("mod", o, self)
    def __pow__(self, o): return np_power(self, o)
    def __rpow__(self, o): return _apply("pow", o, self)
    def __matmul__(self, o): return _matmul(self, o)
    def __rmatmul__(self, o): return _matmul(o, self)
    def __neg__(self): return _apply("neg", self)
    def __pos__(self): return self
    def __abs__(self): return _apply("abs", self)
    def __lt__(self, o): return _apply("lt", self, o)
    def __le__(self, o): return _apply("le", self, o)
    def __gt__(self, o): return _apply("gt", self, o)
    def __ge__(self, o): return _apply("ge", self, o)
    def __eq__(self, o): return _apply("eq", self, o)  # noqa: E704
    def __ne__(self, o): return _apply("ne", self, o)
    def __and__(self, o): return _apply("logical_and", self, o)
    def __or__(self, o): return _apply("logical_or", self, o)
    def __invert__(self): return _apply("logical_not", self)
    __hash__ = object.__hash__

    # -- array attributes and methods ----------------------------------------------------
    @property
    def T(self):
        return _apply("transpose", self)

    @property
    def shape(self):
        return tuple(_apply("shape_dim", self, axis=k) for k in range(self.ndim))

    @property
    def size(self):
        return _apply("size", self) if self.ndim else 1

    def sum(self, axis=None, keepdims=False): return np_sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return np_mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return np_reduce("max", self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return np_reduce("min", self, axis, keepdims)
    def dot(self, o): return _matmul(self, o)
    def copy(self): return _apply("copy", self)
    def transpose(self, *axes): return np_transpose(self, axes or None)
    def item(self): return np_reshape_like(self, 0.0)

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        return np_reshape(self, shape)

    def astype(self, dtype):
        return np_cast(self, dtype)

    # -- the NumPy protocols -------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        handler = NUMPY.get(ufunc)
        if method != "__call__" or handler is None or kwargs:
            raise UnsupportedError(f"np.{ufunc.__name__}"
                                   f"{'.' + method if method != '__call__' else ''} is not "
                                   "supported", self.builder.loc)
        return handler(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        handler = NUMPY.get(func)
        if handler is None:
            raise UnsupportedError(f"np.{func.__name__} is not supported", self.builder.loc)
        return handler(*args, **kwargs)


def _builder_of(*values) -> GraphBuilder | None:
    for v in values:
        if isinstance(v, Sym):
            return v.builder
    return None


def _loc(*values):
    b = _builder_of(*values)
    return b.loc if b else None


def records(x) -> bool:
    """Whether ``x`` records operations (a `Sym` here, a tape `Tensor`) rather than holding
    a value NumPy computes with."""
    return hasattr(type(x), "_jitgrad_apply")


def ndim_of(x) -> int:
    return x.ndim if records(x) else np.ndim(x)


# ----------------------------------------------------------------------------- NumPy functions


def _norm_axis(axis, ndim, loc):
    if axis is None:
        return None
    if isinstance(axis, Sym):
        raise UnsupportedError("the axis must be a constant integer", loc)
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(_norm_axis(a, ndim, loc) for a in axis))
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise UnsupportedError(f"the axis must be an integer, not {axis!r}", loc)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ShapeError(f"axis {axis} is out of bounds for an array of dimension {ndim}", loc)
    return axis % ndim


def np_reduce(op, x, axis=None, keepdims=False, **unsupported):
    if unsupported:
        raise UnsupportedError(f"np.{op}(..., {', '.join(unsupported)}=) is not supported",
                               _loc(x))
    if not records(x):
        return getattr(np, op)(x, axis=axis, keepdims=keepdims)
    axis = _norm_axis(axis, x.ndim, _loc(x))
    if x.ndim == 0:
        return x
    if isinstance(axis, tuple):  # several axes: one at a time, highest first
        for a in sorted(axis, reverse=True):
            x = _apply(op, x, axis=a, keepdims=bool(keepdims))
        return x
    return _apply(op, x, axis=axis, keepdims=bool(keepdims))


def np_sum(x, axis=None, keepdims=False, **kw):
    return np_reduce("sum", x, axis, keepdims, **kw)


def np_mean(x, axis=None, keepdims=False, **kw):
    if not records(x):
        return np.mean(x, axis=axis, keepdims=keepdims)
    total = np_sum(x, axis, keepdims, **kw)
    if x.ndim == 0:
        return total
    axis = _norm_axis(axis, x.ndim, _loc(x))
    if axis is None:
        count = x.size
    else:
        count = 1
        for a in axis if isinstance(axis, tuple) else (axis,):
            count = count * x.shape[a]
    return total / count


def _matmul(a, b):
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0 or na > 2 or nb > 2:
        raise UnsupportedError(f"matrix product of operands of rank {na} and {nb} (jitgrad "
                               "supports 1-D and 2-D operands)", _loc(a, b))
    return _apply("matmul", a, b)


def np_transpose(x, axes=None):
    if axes is not None:
        axes = tuple(int(a) for a in axes)
        if axes == tuple(range(len(axes))):
            return x
        if ndim_of(x) == 2 or axes == tuple(reversed(range(len(axes)))):
            axes = None
    return _apply("transpose", x, axes=axes)


def np_reshape(x, shape):
    if not isinstance(shape, tuple):
        shape = (shape,)
    if any(isinstance(d, int) and d == -1 for d in shape):
        known = 1
        for d in shape:
            if not (isinstance(d, int) and d == -1):
                known = known * d
        shape = tuple(x.size // known if (isinstance(d, int) and d == -1) else d for d in shape)
    return _apply("reshape", x, *shape)


def np_reshape_like(x, like):
    return _apply("reshape_like", x, like)


def np_cast(x, dtype):
    kind = np.dtype(dtype).kind
    kind = {"u": "i"}.get(kind, kind)
    if kind not in "fib":
        raise UnsupportedError(f"conversion to {dtype}", _loc(x))
    return _apply("cast", x, kind=kind)


def _alloc(name):
    def alloc(shape, dtype=float, **kw):
        if kw:
            raise UnsupportedError(f"np.{name}(..., {', '.join(kw)}=) is not supported")
        dims = shape if isinstance(shape, (tuple, list)) else (shape,)
        kind = np.dtype(dtype).kind
        return _apply_alloc(name, dims, kind)
    return alloc


def _apply_alloc(name, dims, kind, fill=None):
    builder = _builder_of(*dims, fill)
    if builder is None:
        builder = _CURRENT[-1]
    atoms = [builder.atom(d) for d in dims]
    if any(a.type.kind != "i" or a.type.ndim for a in atoms):
        raise UnsupportedError("array sizes must be integers", builder.loc)
    if fill is not None:
        name, atoms, params = "full", [builder.atom(fill)] + atoms, {}
        out = builder.emit(name, atoms, params, Type(atoms[0].type.kind, len(dims)))
    else:
        params = {"kind": kind}
        out = builder.emit(name, atoms, params, Type(kind, len(dims)))
    out.dims = _dims(P.PRIMITIVES[name], atoms, params, out.type)
    return builder.sym(out)


# The builder whose block allocations go to when no argument is symbolic (np.zeros(3)).
_CURRENT: list[GraphBuilder] = []


def np_full(shape, fill_value, dtype=None):
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if dtype is not None:
        fill_value = float(fill_value) if np.dtype(dtype).kind == "f" else fill_value
    return _apply_alloc("full", dims, "f", fill=fill_value)


def _like(name):
    def like(x, dtype=None):
        if dtype is not None and np.dtype(dtype).kind != "f":
            raise UnsupportedError(f"np.{name} with a non-float dtype", _loc(x))
        if not records(x) or x.ndim == 0:
            return 0.0 if name == "zeros_like" else 1.0
        return _apply(name, x)
    return like


def np_copy(x):
    return _apply("copy", x) if records(x) else np.array(x, copy=True)


def np_where(cond, a, b):
    return _apply("where", cond, a, b)


def np_expand_dims(x, axis):
    axis = int(axis)
    axis = axis % (ndim_of(x) + 1)
    return _apply("expand_dims", x, axis=axis)


def np_clip(x, lo, hi):
    return _apply("minimum", _apply("maximum", x, lo), hi)


def np_power(x, y):
    if not records(y) and isinstance(y, (int, float)) and not isinstance(y, bool) and y == 2:
        return _apply("square", x)  # x * x: cheaper than pow, and so is its derivative
    return _apply("pow", x, y)


def _unary(name):
    return lambda x: _apply(name, x)


def _binary(name):
    return lambda x, y: _apply(name, x, y)


NUMPY: dict = {
    np.add: _binary("add"), np.subtract: _binary("sub"), np.multiply: _binary("mul"),
    np.divide: _binary("div"), np.true_divide: _binary("div"), np.power: np_power,
    np.negative: _unary("neg"), np.floor_divide: _binary("floordiv"), np.mod: _binary("mod"),
    np.maximum: _binary("maximum"), np.minimum: _binary("minimum"),
    np.less: _binary("lt"), np.less_equal: _binary("le"), np.greater: _binary("gt"),
    np.greater_equal: _binary("ge"), np.equal: _binary("eq"), np.not_equal: _binary("ne"),
    np.logical_and: _binary("logical_and"), np.logical_or: _binary("logical_or"),
    np.logical_not: _unary("logical_not"),
    np.abs: _unary("abs"), np.absolute: _unary("abs"), np.fabs: _unary("abs"),
    np.sign: _unary("sign"), np.floor: _unary("floor"), np.ceil: _unary("ceil"),
    np.isnan: _unary("isnan"), np.square: _unary("square"),
    np.sum: np_sum, np.mean: np_mean,
    np.max: lambda x, axis=None, keepdims=False, **kw: np_reduce("max", x, axis, keepdims, **kw),
    np.min: lambda x, axis=None, keepdims=False, **kw: np_reduce("min", x, axis, keepdims, **kw),
    np.amax: lambda x, axis=None, keepdims=False: np_reduce("max", x, axis, keepdims),
    np.amin: lambda x, axis=None, keepdims=False: np_reduce("min", x, axis, keepdims),
    np.matmul: _matmul, np.dot: _matmul, np.outer: _binary("outer"),
    np.transpose: np_transpose, np.reshape: np_reshape, np.expand_dims: np_expand_dims,
    np.where: np_where, np.clip: np_clip,
    np.zeros: _alloc("zeros"), np.ones: _alloc("ones"), np.empty: _alloc("empty"),
    np.full: np_full, np.zeros_like: _like("zeros_like"), np.ones_like: _like("ones_like"),
    np.copy: np_copy, np.ndim: ndim_of, np.shape: lambda x: x.shape,
}
for _name in ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arctan",
              "arcsin", "arccos", "sinh", "cosh", "arcsinh"):
    NUMPY[getattr(np, _name)] = _unary(_name)

# The math module and builtins on scalars map to the same primitives.
MATH: dict = {
    math.exp: "exp", math.log: "log", math.log1p: "log1p", math.expm1: "expm1",
    math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.tanh: "tanh",
    math.atan: "arctan", math.asin: "arcsin", math.acos: "arccos", math.sinh: "sinh",
    math.cosh: "cosh", math.asinh: "arcsinh", math.fabs: "abs", math.floor: "floor",
    math.ceil: "ceil", math.isnan: "isnan",
}

CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


def scalar_only(name, x, loc):
    if isinstance(x, Sym) and x.ndim:
        raise UnsupportedError(f"{name} of an array (use the np. function)", loc)


__all__ = ["FLOAT", "INT", "MATH", "NUMPY", "GraphBuilder", "Sym"]
