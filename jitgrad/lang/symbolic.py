"""Symbolic values: NumPy code run on stand-ins that record IR equations.

`GraphBuilder` appends typed equations to a current `Block`; `Sym` is a value it knows only by
type (kind and rank). A `Sym` speaks NumPy: operators, ``np.exp(s)`` (through
``__array_ufunc__``), ``np.sum(s, axis=1)`` (through ``__array_function__``), ``s.T``,
``s.shape``. Both the parser (evaluating the user's expressions) and the reverse transform
(running the derivative rules of `jitgrad.prims`) build IR this way, so a rule written once in NumPy
runs on arrays in the tape and on `Sym`s here.

Every array value carries a size token per axis (`ir.Var.dims`). With ``assume_sizes``, two
argument axes that broadcast against each other are taken to be the same size and share one
token; `GraphBuilder.size_checks` lists the run-time checks that make that safe.

Guarantees: constants fold at build time (an operation on known numbers is computed, not
emitted); a NumPy function outside the table raises `UnsupportedError` naming it; every size
assumption is between argument axes (or an argument axis and a literal size) and has a check.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import operator
from collections.abc import Callable

import numpy as np

from jitgrad.core import ops
from jitgrad.core.errors import Loc, UnsupportedError
from jitgrad.core.ir import (
    Block,
    Const,
    Eqn,
    Namer,
    Var,
    defs,
    dims_of,
    equation_key,
    walk,
)
from jitgrad.core.types import FLOAT, INT, Type
from jitgrad.lang.size_assumptions import SizeAssumptions
from jitgrad.lang.size_tokens import result_dims, size_token  # noqa: F401 - re-exported
from jitgrad.prims import primitives


class GraphBuilder(SizeAssumptions):
    """Appends equations to ``self.block``; folds constants; hands out names."""

    def __init__(self, namer: Namer, assume_sizes: bool = False):
        self.namer = namer
        self.block = Block()
        self.root = self.block  # the function's own block: what runs on every call
        # an array a loop made afresh on each iteration, after the loop -> (the loop's count
        # of iterations, its loc, the name): `Loops.fresh_if_ran`
        self.fresh_if_ran: dict = {}
        self.loc: Loc | None = None
        # Size assumptions (see `assume_same_sizes`): when on, two argument axes that broadcast
        # against each other are taken to be the same size, and the pairs are kept in
        # ``assumed`` for the run-time check. ``same`` is a union-find over size tokens.
        self.assume_sizes = assume_sizes
        self.same: dict = {}
        self.assumed: list[tuple] = []  # (token, token, loc): parameter axes, ints, or a slice of one
        self.at_least: list[tuple] = []  # (parameter axis token, count, loc): no fewer entries
        self.made: list[Var] = []  # every variable made here whose dims may need renaming
        # a loop's carried array -> its initial array, of the same shape where the body only
        # writes it in place (read by the check of a list's rows, `build_lists`)
        self.shape_from: dict = {}
        self.param_axes: dict = {}  # size token of a parameter's axis -> (parameter, axis)
        # The example call's sizes of the parameters' axes (`set_example`): token -> size
        self.example_sizes: dict = {}
        # a real matrix's eig typed complex (`numpy_linalg.np_eig`): set where a call found
        # complex eigenvalues in the build that typed it real (`errors.ComplexEigenvalues`)
        self.complex_eig = False
        # The example call's values of its bool arguments (`set_example`): parameter -> value
        self.example_flags: dict = {}
        # Arrays that may share memory (views, in-place versions, a loop's carried array and
        # its initial value) form one class. Each array value is stamped with its class's count
        # of in-place writes when it is made: a value read after a later write to its class
        # (through another name, or a view) would show values the graph does not know about.
        # Every table here is keyed by the `Var` itself (hashed by identity), never by its
        # ``id()``: the builder drops variables (a loop body is built again until its carried
        # types settle), and a later variable may reuse a dropped one's id, which would inherit
        # its memory class, stamp or newer version. A key keeps its variable alive.
        self.memory: dict[Var, Var] = {}  # union-find: var -> parent
        self.writes: dict[Var, int] = {}  # class root -> in-place writes so far
        self.stamp: dict[Var, int] = {}  # array var -> its class's writes when made
        self.views: set[Var] = set()  # views (slices, .T, reshapes)
        # How each view was taken: view -> (base, primitive, other operands, params), for the
        # views NumPy makes whatever the array's layout (basic indexing, .T, newaxis; not a
        # reshape, `Flags.view_if_contiguous`). A view read after a write into its array is
        # taken again from the array's newer version, and a write through it becomes a write
        # into the array (`frontend.build_views`).
        self.view_of: dict[Var, tuple] = {}
        self.retaken: dict[tuple, Var] = {}  # (view, block) -> the view taken again there
        # as_strided(x, shape, strides) read as a gather: its result -> (x, the sizes and
        # strides, the number of axes), for a write through it (`build_stmts.write_strided`)
        self.strided_of: dict[Var, tuple] = {}
        self.followed: set[Var] = set()  # versions whose newer version a view was taken from
        self.param_vars: list[Var] = []  # the parameters (the caller's arrays)
        self.constant_arrays: set[Var] = set()  # global arrays read as constants
        # arrays whose entries are known while building (constants, np.array of numbers), as
        # made (a later write makes a new version): what a replayed draw's parameters read
        self.known_values: dict[Var, np.ndarray] = {}
        self.grafted: list[str] = []  # the jitgrad transforms called in the body (`Function.grafted`)
        # A loop's carried array that holds another carried array's memory from the second
        # iteration on (`u, unew = unew, u`): the arguments that memory may be.
        self.holds_params: dict[Var, list[Var]] = {}
        # In the user's code an operation's array result is new memory, as in NumPy, even when
        # an identity folds it (``x * 1.0``); the adjoint's own arithmetic may alias.
        self.new_arrays = False
        self.latest: dict[Var, Var] = {}  # version -> the version that replaced it
        self.tags = 0  # hidden names' suffixes (`new_tag`)
        self.shared: dict | None = None  # operations made inside `sharing`, by their key
        # scalar result -> (primitive, inputs) of the comparisons and the affine steps before
        # them: what `frontend.implied` reads to decide a recursion's test from its caller's
        self.scalar_defs: dict[Var, tuple] = {}
        # scalars computed from the arguments' sizes alone -> (primitive, inputs, params), and
        # the tests on them decided from the example call's sizes (`SizeAssumptions.decide`)
        self.size_values: dict[Var, tuple] = {}
        self.decided: list[tuple] = []  # (test, its value, loc)

    # -- atoms ---------------------------------------------------------------------------

    def constant_array(self, value: np.ndarray, base: str = "c") -> Var:
        """The array ``value`` (float, integer or bool, rank 1 or more) as a constant of the
        graph, its contents fixed now, as Numba freezes a global array."""
        kind = {"u": "i"}.get(value.dtype.kind, value.dtype.kind)
        t = Type(kind, value.ndim)
        out = self.emit("constant", [], {"name": primitives.constant_array_name(
            value.astype({"f": np.float64, "i": np.int64, "b": np.bool_}[kind])), "type": t}, t,
            base=base)
        out.dims = tuple(int(n) for n in value.shape)
        self.restamp(out)
        self.constant_arrays.add(out)
        self.known_values[out] = value
        return out

    def atom(self, value, check: bool = True):
        """The IR atom of a value; ``check``: refuse a read of an array whose memory was
        written in place since it was made (bookkeeping that reads no values passes False)."""
        if isinstance(value, Sym):
            value = value.atom
        if isinstance(value, Var):
            if check and self.is_stale(value):
                what = "an array here" if value.name.startswith("_") else f"`{value.name}`"
                raise UnsupportedError(stale_message(what), self.loc)
            return value
        if isinstance(value, Const):
            return value
        if isinstance(value, (bool, np.bool_)):
            return Const(bool(value))
        if isinstance(value, (int, np.integer)):
            return Const(int(value))
        if isinstance(value, (float, np.floating)):
            return Const(float(value))
        if isinstance(value, COMPLEX_TYPES):
            raise UnsupportedError("a complex number cannot be used here (jitgrad computes a "
                                   "complex number as its real and imaginary parts: take "
                                   "z.real, z.imag or abs(z))", self.loc)
        if isinstance(value, SPARSE_TYPES):
            raise UnsupportedError("a scipy.sparse matrix (or the np.matrix it gives) cannot be "
                                   "used here as an array: take A.toarray() (np.asarray(m)), "
                                   "and write its products A @ x", self.loc)
        raise UnsupportedError(f"a value of type {type(value).__name__} cannot be used here",
                               self.loc)

    def new_tag(self) -> int:
        """A number no other hidden name of this build has (a counter, not an ``id()``)."""
        self.tags += 1
        return self.tags

    def sym(self, atom) -> Sym:
        return Sym(self, atom)

    def new_var(self, type_: Type, base: str | None = None) -> Var:
        return Var(self.namer.fresh(base) if base else self.namer.temp(), type_)

    def emit(self, prim: str, ins: list, params: dict, out_type: Type, base=None) -> Var:
        out = self.new_var(out_type, base)
        self.made.append(out)
        self.block.stmts.append(Eqn(prim, [out], list(ins), dict(params), self.loc))
        if not out_type.ndim and ops.flags(prim).implied_step:
            self.scalar_defs[out] = (prim, tuple(ins))
        if not out_type.ndim:
            self.note_size_value(out, prim, ins, params)
        if out_type.ndim:  # every array is stamped when made: a read after a write through
            self.restamp(out)  # another name for its memory is then refused (`is_stale`)
        return out

    @contextlib.contextmanager
    def sharing(self):
        """Inside, an operation made again on the same inputs with the same parameters is the
        first one's result (the reverse transform runs one equation's rules inside: the two
        contributions of ``x * x``, ``g * x`` each, are one product). Only values: no effects,
        allocations or views, which are memory of their own."""
        saved, self.shared = self.shared, {}
        try:
            yield
        finally:
            self.shared = saved

    def _share_key(self, prim: primitives.Primitive, atoms: list, params: dict):
        f = prim.flags
        if self.shared is None or f.effects or f.buffer or f.allocates or f.shares_first_input \
                or f.may_return_input:
            return None
        return equation_key(prim.name, atoms, params)

    # -- applying a primitive ------------------------------------------------------------

    def apply(self, prim: primitives.Primitive, args, params) -> Sym | object:
        # A list or tuple where a primitive takes a value is an array_like, as in NumPy
        # (``np.maximum(x, [0.5, 1.0])``): the array np.array makes of it.
        # A NumPy array computed while building (from constants) is a constant of the graph.
        args = [NUMPY[np.array](a) if isinstance(a, (list, tuple)) else self.sym(
            self.constant_array(a)) if _constant_array(a) else a for a in args]
        # (an array's size is read whether or not its memory was written since: no values)
        atoms = [self.atom(a, check=prim.name != "shape_dim") for a in args]
        if all(isinstance(a, Const) for a in atoms) and not prim.flags.allocates:
            value = prim.impl(*(a.value for a in atoms), **params)
            return python_scalar(value)
        simplified = _simplify(prim.name, atoms)
        if simplified is not None:
            if isinstance(simplified, Var) and simplified.type.ndim and self.new_arrays:
                return self.apply(primitives.PRIMITIVES["copy"], [simplified], {})
            return self.sym(simplified) if isinstance(simplified, Var) else simplified.value
        key = self._share_key(prim, atoms, params)
        if key is not None and key in self.shared:
            return self.sym(self.shared[key])
        types = [a.type for a in atoms]
        out_type = prim.type_rule(types, params)
        if prim.elementwise and self.assume_sizes:
            self.assume_same_sizes([a for a in atoms if a.type.ndim])
        if prim.flags.contracts and self.assume_sizes and all(a.type.ndim for a in atoms[:2]):
            self.assume_same_size(dims_of(atoms[0])[-1], dims_of(atoms[1])[0], broadcasts=False)
        out = self.emit(prim.name, atoms, params, out_type)
        out.dims = result_dims(prim, atoms, params, out_type,
                               self.assume_at_least if self.assume_sizes else None)
        if out.dims is not None and self.same:  # (a slice assumed an axis's size)
            out.dims = tuple(d if d is None else self.canonical(d) for d in out.dims)
        if out.dims is not None and any(d is None for d in out.dims):  # sizes of its own
            out.dims = tuple((out, k) if d is None else d for k, d in enumerate(out.dims))
        if prim.name == "shape_dim":
            out.dims = (dims_of(atoms[0])[params["axis"]],)  # the size itself, as a token
        if out_type.ndim:
            if prim.flags.view and isinstance(atoms[0], Var):
                self.views.add(out)
                if not prim.flags.view_if_contiguous:  # a view whatever the layout: followed
                    self.view_of[out] = (atoms[0], prim.name, atoms[1:], dict(params))
            if (prim.flags.view or prim.name == "setitem") and isinstance(atoms[0], Var):
                self.share_memory(out, atoms[0])
            self.restamp(out)
        if key is not None:
            self.shared[key] = out
        return self.sym(out)

    # -- sizes: what is assumed of the arguments' shapes ---------------------------------

    def set_params(self, params: list[Var]) -> None:
        self.param_vars = list(params)
        for p in params:
            p.dims = tuple((p, k) for k in range(p.type.ndim))
            self.param_axes.update({t: (p, k) for k, t in enumerate(p.dims)})
            self.made.append(p)

    # -- memory: which array values may alias --------------------------------------------

    def _find(self, v: Var) -> Var:
        while self.memory.get(v, v) is not v:
            v = self.memory[v]
        return v

    def share_memory(self, a: Var, b: Var) -> None:
        """``a`` and ``b`` may be the same memory (a view, a version, a carried array)."""
        ra, rb = self._find(a), self._find(b)
        if ra is not rb:
            self.memory[ra] = rb
            self.writes[rb] = self.writes.get(rb, 0) + self.writes.get(ra, 0)

    def same_view(self, a: Var, b: Var) -> None:
        """``a`` may be ``b`` (a loop's carried value, a merged value): a view if ``b`` is."""
        if b in self.views:
            self.views.add(a)

    def memory_state(self) -> tuple:
        """A copy of the memory bookkeeping, to undo a loop body built again (its types
        changed): the writes of the attempt given up must not make earlier arrays stale."""
        return (dict(self.memory), dict(self.writes), dict(self.stamp), set(self.views),
                dict(self.latest), dict(self.view_of))

    def restore_memory_state(self, state: tuple) -> None:
        memory, writes, stamp, views, latest, view_of = state
        self.memory, self.writes, self.stamp = dict(memory), dict(writes), dict(stamp)
        self.views, self.latest, self.view_of = set(views), dict(latest), dict(view_of)

    def writes_to(self, v: Var) -> int:
        return self.writes.get(self._find(v), 0)

    def restamp(self, v: Var) -> None:
        """``v`` holds the current contents of its memory."""
        self.stamp[v] = self.writes_to(v)

    def mark_stale(self, v: Var) -> None:
        self.stamp[v] = -1

    def is_stale(self, v: Var) -> bool:
        return v in self.stamp and self.stamp[v] != self.writes_to(v)

    def note_write(self, version: Var) -> None:
        """``version`` is the new contents of its memory after an in-place write."""
        root = self._find(version)
        self.writes[root] = self.writes.get(root, 0) + 1
        self.restamp(version)

    def newer(self, old: Var, new: Var) -> None:
        """``new`` is what ``old``'s memory holds now (a write, a loop, a branch)."""
        self.latest[old] = new

    def merge_versions(self, then: dict, orelse: dict, merges) -> None:
        """After an ``if`` whose branches left the versions ``then`` and ``orelse``: an array
        that became one value on each side is now the value merged from them; one that
        changed on a side without such a merge stays out of date (its reads are refused)."""
        def current(table, v):
            while v in table:
                v = table[v]
            return v
        merged = {(m.init, m.update): m.var for m in merges
                  if isinstance(m.init, Var) and isinstance(m.update, Var)}
        for k in dict.fromkeys([*then, *orelse]):
            if then.get(k) is orelse.get(k):
                continue  # the same link on both sides (one lent to a loop's body): kept; a
                # later link where the sides part is merged or dropped, and `current` sees it
            t, e = current(then, k), current(orelse, k)
            if t is e:
                continue
            if (t, e) in merged:
                self.latest[k] = merged[(t, e)]
            else:
                self.latest.pop(k, None)

    def forget_versions_in(self, blocks) -> None:
        """Versions made inside a loop body or branch are out of scope after it: an array
        whose latest known version is one of them stays out of date (its reads are refused)."""
        inner = {v for b in blocks for s in walk(b) for v in defs(s)}
        for k in [k for k, v in self.latest.items() if self.current(v) in inner]:
            del self.latest[k]

    def current(self, v: Var) -> Var:
        """The latest version of ``v``'s memory that the builder knows of."""
        while v in self.latest:
            v = self.latest[v]
        return v

    def check_writable(self, array: Var, name: str) -> None:
        """Before ``name[...] = v`` writes into ``array``: an argument's memory is the caller's,
        so the build starts again with that argument copied on entry (`WritesArgument`). (A
        write into a view the builder does not follow: `build_views.Views.detach_view`.)"""
        cls = self._find(array)
        for p in self.param_vars:
            if p.type.ndim and self._find(p) is cls:
                raise WritesArgument(p)
        for held, params in self.holds_params.items():
            if params and self._find(held) is cls:
                raise WritesArgument(params[0])

    def refuse_view_write(self, name: str) -> None:
        raise UnsupportedError(
            f"writing into `{name}`, a view of another array that jitgrad cannot follow "
            "to that array here (a view carried by a loop or merged after a branch, or a "
            "reshape of an array made before the loop that writes): write into the array "
            "itself (`U[k, j] = ...`), or .copy() the view first", self.loc)

    def memory_class(self, v: Var) -> list[Var]:
        """The arrays known to share ``v``'s memory (``v`` among them)."""
        root = self._find(v)
        return [root, *(u for u in {**self.memory, **self.stamp}
                        if u is not root and self._find(u) is root)]

    def outdate(self, v: Var) -> None:
        """Every array sharing ``v``'s memory is out of date (a read is refused), as after a
        write none of them sees."""
        root = self._find(v)
        self.writes[root] = self.writes.get(root, 0) + 1


class WritesArgument(Exception):
    """Internal: the function writes into the memory of argument ``param`` (under any name,
    in a callee, through a loop); `build.build` starts again, copying it on entry."""

    def __init__(self, param: Var):
        super().__init__(param.name)
        self.param = param


def stale_message(what: str) -> str:
    return (f"{what} shares memory with an array written in place after it was made (it is a "
            "view — a slice, .T, reshape — or another name for it); NumPy would show the new "
            "values through it, which jitgrad does not follow. Take it after the write, or "
            ".copy() it")


def python_scalar(value):
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
    if ops.flags(name).additive and _is(b, 0) and isinstance(a, Var) and a.type.kind == "f":
        return a
    if name == "add" and _is(a, 0) and isinstance(b, Var) and b.type.kind == "f":
        return b
    if name == "div" and _is(b, 1) and isinstance(a, Var) and a.type.kind == "f":
        return a
    if name == "pow" and _is(b, 1) and isinstance(a, Var) and a.type.kind == "f":
        return a
    return None


# ----------------------------------------------------------------------------- Sym


def _constant_array(a) -> bool:
    """Whether ``a`` is a NumPy array the graph can hold as a constant."""
    return isinstance(a, np.ndarray) and a.ndim > 0 and a.dtype.kind in "fiub"


def record(name, *args, **params):
    """Apply the primitive ``name``: on a Sym (or a tape Tensor) it records an equation, on
    numbers NumPy computes it."""
    return primitives.PRIMITIVES[name](*args, **params)


def _boolean(name, bits, op, *operands):
    """``a & b``, ``a | b``, ``a ^ b``, ``~a``: on booleans (masks) the logical operation
    ``name``; on integers (a boolean among them counting as 0 or 1, as in NumPy) the bit
    operation ``bits``; on floats refused, as NumPy refuses them."""
    kinds = [v.type.kind if isinstance(v, Sym) else "b" if isinstance(v, (bool, np.bool_))
             else "i" if isinstance(v, (int, np.integer)) else "f" for v in operands]
    if name is not None and all(k == "b" for k in kinds):
        return record(name, *operands)
    if "f" in kinds:
        raise UnsupportedError(f"`{op}` of a float (NumPy takes integers and booleans)",
                               loc_of(*operands))
    return record(bits, *(record("cast", v, kind="i") if k == "b" else v
                          for v, k in zip(operands, kinds)))


_REAL_OPERANDS: tuple = ()  # (Sym, Python's and NumPy's real numbers and arrays: below)


def _other(o) -> bool:
    """Whether ``o`` is an operand a Sym's arithmetic leaves to `_other_operand`: anything
    but a Sym, a real number or a real array."""
    return not isinstance(o, _REAL_OPERANDS) or (
        isinstance(o, np.ndarray) and o.dtype.kind == "c")


# `complex_pairs.binary`, the arithmetic of complex values (set there: this module imports
# nothing of the language above it)
COMPLEX_ARITHMETIC: list = []
_REFLECTED = {operator.add: "__radd__", operator.sub: "__rsub__", operator.mul: "__rmul__",
              operator.truediv: "__rtruediv__", operator.pow: "__rpow__",
              operator.matmul: "__rmatmul__"}


def _other_operand(op, a, b, own):
    """``op(a, b)`` with a Sym and an operand of another kind (`_other`): of a complex value
    (a complex number or array, a `complex_pairs.Complex`), complex arithmetic on the parts;
    of an object whose class defines the reflected operator (QuTiP's ``Qobj.__rmul__``),
    NotImplemented, so that Python calls it (``x * q`` is ``q.__rmul__(x)``, as NumPy's
    arrays defer to such an operand); anything else the Sym's ``own`` (refused there)."""
    o = b if isinstance(a, Sym) else a
    if isinstance(o, COMPLEX_TYPES) or (isinstance(o, np.ndarray) and o.dtype.kind == "c"):
        return COMPLEX_ARITHMETIC[0](op, a, b)
    if o is b and getattr(type(o), _REFLECTED[op], None) is not None:
        return NotImplemented
    return own(a, b)


def _operators(op, own):
    """A Sym's operator ``op`` and its reflected form: ``own(a, b)``, or `_other_operand`."""
    def forward(self, o):
        return _other_operand(op, self, o, own) if _other(o) else own(self, o)

    def reflected(self, o):
        return _other_operand(op, o, self, own) if _other(o) else own(o, self)
    return forward, reflected


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
    # (a complex operand, or one of another kind that defines the reflected operator:
    # `_other_operand`)
    __add__, __radd__ = _operators(operator.add, lambda a, b: record("add", a, b))
    __sub__, __rsub__ = _operators(operator.sub, lambda a, b: record("sub", a, b))
    __mul__, __rmul__ = _operators(operator.mul, lambda a, b: record("mul", a, b))
    __truediv__, __rtruediv__ = _operators(operator.truediv, lambda a, b: record("div", a, b))
    __pow__ = _operators(operator.pow, lambda a, b: NUMPY[np.power](a, b))[0]
    __rpow__ = _operators(operator.pow, lambda a, b: record("pow", a, b))[1]
    __matmul__, __rmatmul__ = _operators(operator.matmul, lambda a, b: NUMPY[np.matmul](a, b))
    def __floordiv__(self, o): return record("floordiv", self, o)
    def __rfloordiv__(self, o): return record("floordiv", o, self)
    def __mod__(self, o): return record("mod", self, o)
    def __rmod__(self, o): return record("mod", o, self)
    def __neg__(self): return record("neg", self)
    def __pos__(self): return self
    def __abs__(self): return record("abs", self)
    def __lt__(self, o): return record("lt", self, o)
    def __le__(self, o): return record("le", self, o)
    def __gt__(self, o): return record("gt", self, o)
    def __ge__(self, o): return record("ge", self, o)
    def __eq__(self, o): return record("eq", self, o)  # noqa: E704
    def __ne__(self, o): return record("ne", self, o)
    def __and__(self, o): return _boolean("logical_and", "bitwise_and", "&", self, o)
    def __rand__(self, o): return _boolean("logical_and", "bitwise_and", "&", o, self)
    def __or__(self, o): return _boolean("logical_or", "bitwise_or", "|", self, o)
    def __ror__(self, o): return _boolean("logical_or", "bitwise_or", "|", o, self)
    def __xor__(self, o): return _boolean("ne", "bitwise_xor", "^", self, o)
    def __rxor__(self, o): return _boolean("ne", "bitwise_xor", "^", o, self)
    def __invert__(self): return _boolean("logical_not", "invert", "~", self)
    def __lshift__(self, o): return _boolean(None, "left_shift", "<<", self, o)
    def __rlshift__(self, o): return _boolean(None, "left_shift", "<<", o, self)
    def __rshift__(self, o): return _boolean(None, "right_shift", ">>", self, o)
    def __rrshift__(self, o): return _boolean(None, "right_shift", ">>", o, self)
    __hash__ = object.__hash__

    # -- array attributes and methods ----------------------------------------------------
    @property
    def T(self):
        return record("transpose", self)

    @property
    def shape(self):
        # a size known while building is that number (a constant array's, np.array([a, b])'s
        # first: colour's `if xy.shape[-1] == 2:` is decided then); the others are read
        # (a 0-d integer's dims hold the size it stands for, not axes: none here)
        dims = dims_of(self.atom) if self.ndim else ()
        return tuple(d if type(d) is int else record("shape_dim", self, axis=k)
                     for k, d in enumerate(dims))

    @property
    def size(self):
        # known while building where every size is (as `shape`'s: np.atleast_1d(a).size of a
        # number is 1, girth's `if np.atleast_1d(d).size == 1:` decided then); else read
        if not self.ndim:
            return 1
        dims = dims_of(self.atom)
        return math.prod(dims) if all(type(d) is int for d in dims) else record("size", self)

    # ndarray's methods take NumPy's parameters in NumPy's order (dtype and out among them)
    def sum(self, *args, **kw): return NUMPY[np.sum](self, *args, **kw)
    def mean(self, *args, **kw): return NUMPY[np.mean](self, *args, **kw)
    def max(self, *args, **kw): return NUMPY[np.max](self, *args, **kw)
    def min(self, *args, **kw): return NUMPY[np.min](self, *args, **kw)
    def dot(self, o): return NUMPY[np.dot](self, o)
    def copy(self): return record("copy", self)
    def transpose(self, *axes): return NUMPY[np.transpose](self, axes or None)
    def item(self): return METHODS["item"](self)
    def any(self, *args, **kw): return METHODS["any"](self, *args, **kw)
    def all(self, *args, **kw): return METHODS["all"](self, *args, **kw)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1:  # (a tuple, a list, an array of sizes or one size: np.reshape's)
            shape = shape[0]
        return NUMPY[np.reshape](self, shape, order=order)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        # (order, casting, subok: the values are the same; copy=False to its own dtype is
        # the array itself, as in NumPy, so that a write into either is seen in both)
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return METHODS["astype"](self, dtype)

    @property
    def dtype(self):  # np.zeros(n, dtype=x.dtype)
        return np.dtype({"f": np.float64, "i": np.int64, "b": np.bool_}[self.type.kind])

    def prod(self, *args, **kw): return NUMPY[np.prod](self, *args, **kw)
    def var(self, *args, **kw): return NUMPY[np.var](self, *args, **kw)
    def std(self, *args, **kw): return NUMPY[np.std](self, *args, **kw)
    def cumsum(self, *args, **kw): return NUMPY[np.cumsum](self, *args, **kw)
    def cumprod(self, *args, **kw): return NUMPY[np.cumprod](self, *args, **kw)
    def ravel(self, order="C"): return NUMPY[np.ravel](self, order)
    def flatten(self, order="C"): return NUMPY[np.ravel](self, order).copy()
    def squeeze(self, axis=None): return NUMPY[np.squeeze](self, axis)
    def repeat(self, repeats, axis=None): return NUMPY[np.repeat](self, repeats, axis)
    def swapaxes(self, a, b): return NUMPY[np.swapaxes](self, a, b)
    def diagonal(self, offset=0, axis1=0, axis2=1):
        return NUMPY[np.diagonal](self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1): return NUMPY[np.trace](self, offset, axis1, axis2)

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


def builder_of(*values) -> GraphBuilder | None:
    for v in values:
        if isinstance(v, Sym):
            return v.builder
    return None


def loc_of(*values):
    b = builder_of(*values)
    return b.loc if b else None


def is_size(x) -> bool:
    """Whether ``x`` is an array's size along an axis (``x.shape[k]``, ``len(x)``), which NumPy
    gives as a Python int: a run-time integer whose one token is that size (`apply`)."""
    return (isinstance(x, Sym) and isinstance(x.atom, Var) and x.atom.type.ndim == 0
            and x.atom.type.kind == "i" and x.atom.dims is not None and len(x.atom.dims) == 1)


def records(x) -> bool:
    """Whether ``x`` records operations (a `Sym` here, a tape `Tensor`) rather than holding
    a value NumPy computes with."""
    return hasattr(type(x), "_jitgrad_apply")


def smaller(a, b):
    """``min(a, b)`` of two sizes or numbers, recorded when either is a value of the graph."""
    return record("minimum", a, b) if records(a) or records(b) else min(a, b)


def larger(a, b):
    """``max(a, b)``, as `smaller`."""
    return record("maximum", a, b) if records(a) or records(b) else max(a, b)


def all_known(*xs) -> bool:
    """Whether every one of ``xs`` is known while building (none records operations): a
    NumPy function called on them is NumPy's own."""
    return not any(records(x) for x in xs)


def numpy_handler(fn):
    """The handler of the NumPy function ``fn`` (`NUMPY`): what a composition calls to use
    another NumPy function on values of the graph."""
    return NUMPY[fn]


def ndim_of(x) -> int:
    return x.ndim if records(x) else np.ndim(x)


# The builders being built into, innermost last: an allocation none of whose arguments is
# symbolic (np.zeros(3)) goes to the innermost.
_BUILDING: list[GraphBuilder] = []


@contextlib.contextmanager
def building(gb: GraphBuilder):
    """Within the block, `current_builder()` is ``gb``."""
    _BUILDING.append(gb)
    try:
        yield gb
    finally:
        _BUILDING.pop()


def current_builder() -> GraphBuilder | None:
    """The innermost builder being built into (None outside any build)."""
    return _BUILDING[-1] if _BUILDING else None


@dataclasses.dataclass(frozen=True)
class Written:
    """A NumPy function's result still to be built: ``fn``, a plain Python function of
    jitgrad's own (`lang.numpy_written`), called on ``args`` and ``kwargs``. The frontend
    builds its source in the caller's place, as it builds the user's own functions, so a loop
    over a length known only at run time (Horner's rule over the coefficients) is a loop of
    the graph, differentiated as the user's loops are. A handler returns it as its result
    (never to another handler)."""

    fn: Callable
    args: tuple
    kwargs: dict


def written(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` built from its source where an argument is a `Sym`
    (`Written`); run as Python on anything else (the tape's values, NumPy's)."""
    def symbolic(v):
        return isinstance(v, Sym) or (isinstance(v, (tuple, list)) and any(map(symbolic, v)))
    if any(map(symbolic, (*args, *kwargs.values()))):
        return Written(fn, args, kwargs)
    return fn(*args, **kwargs)


# The NumPy surface: `numpy_api` and `numpy_shape` fill these tables when `jitgrad.lang` is
# imported; Sym's operators and methods dispatch through them (this module imports neither).
NUMPY: dict = {}  # NumPy (and operator/math) function -> its handler on Syms and numbers
METHODS: dict = {}  # array method with no NumPy function of its own ("astype", "item") -> handler
# The types of complex values: Python's and NumPy's, and `complex_pairs.Complex` (added there)
COMPLEX_TYPES: tuple = (complex, np.complexfloating)
_REAL_OPERANDS = (Sym, int, float, bool, np.ndarray, np.integer, np.floating, np.bool_, list,
                  tuple, str)
# A scipy.sparse matrix while building and the np.matrix it gives (`scipy_sparse`, added there)
SPARSE_TYPES: tuple = ()

__all__ = [
    "FLOAT",
    "INT",
    "METHODS",
    "NUMPY",
    "GraphBuilder",
    "Sym",
    "Written",
    "builder_of",
    "building",
    "current_builder",
    "loc_of",
    "ndim_of",
    "python_scalar",
    "record",
    "records",
    "result_dims",
    "written",
]
