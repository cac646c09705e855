"""Fenced AST → IR, for one call signature.

`build(source, arg_types)` evaluates the function's body on symbolic values (`symbolic.Sym`) to
produce an `ir.Function`: straight-line code becomes flat equations, ``if``/``for``/``while``
become structured statements whose changing names are carried explicitly (SSA), and
``break``/``continue``/``return`` inside them become flags that guard the rest of the body.
Calls to the user's other plain functions are built inline.

Guarantees: the IR is verified (`ir.verify`); every equation has the user's location; anything
the builder cannot follow raises `UnsupportedError` naming it, never a silently different graph
(including a read of an array whose memory was written in place since it was made).
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import itertools
import operator
import types as pytypes

import numpy as np

from . import primitives as P
from . import symbolic as S
from .custom import custom_vjp
from .errors import JitgradError, Loc, ShapeError, UnsupportedError
from .ir import (
    Block,
    Carry,
    Const,
    Eqn,
    For,
    Function,
    If,
    Namer,
    Var,
    While,
    defs,
    used_atoms,
    verify,
    walk,
)
from .parse import FunctionSource, _unwrap
from .symbolic import GraphBuilder, Sym
from .types import INT, SeqType, Type, promote_kinds

# ----------------------------------------------------------------------------- building


class _Undefined:
    """A name with no value on some path (defined in one branch, or only inside a loop)."""

    def __init__(self, why: str):
        self.why = why


class _NoReturn:
    """The value to return before any ``return`` ran: merged with a returned value, it takes
    that value's shape (a placeholder on the side that has not returned, never read)."""


_NO_RETURN = _NoReturn()


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul}
_CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}
_BREAK, _CONTINUE, _RETURNED, _RETVAL = "%break", "%continue", "%returned", "%retval"


def _base(name: str) -> str:
    """The generated-code base name for an environment name (flags get a leading underscore)."""
    return "_" + name[1:].split("@")[0] if name.startswith("%") else name


def _is_atom_value(v) -> bool:
    return isinstance(v, (Sym, bool, int, float, np.number, np.bool_))


def _assigned_names(stmts) -> set[str]:
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            out.add(n.id)
            if isinstance(node, ast.Return):
                out |= {_RETURNED, _RETVAL}
    return out


def _jumps(stmt, loop_level=True) -> bool:
    """Whether a statement may break, continue (at this loop level) or return."""
    for node in _walk_same_loop(stmt):
        if isinstance(node, ast.Return):
            return True
        if loop_level and isinstance(node, (ast.Break, ast.Continue)):
            return True
    return False


def _walk_same_loop(node):
    """ast.walk, not descending into nested loops (except for their returns)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While)):
            for sub in ast.walk(child):
                if isinstance(sub, ast.Return):
                    yield sub
            continue
        yield from _walk_same_loop(child)


class Builder:
    """Evaluates one function's AST on symbolic values, appending IR to a `GraphBuilder`."""

    MAX_INLINE_DEPTH = 20

    def __init__(self, src: FunctionSource, gb: GraphBuilder, caller: Builder | None = None,
                 copied: frozenset = frozenset(), enclosing: Builder | None = None):
        self.src = src
        self.gb = gb
        self.env: dict[str, object] = {}
        self.caller = caller
        self.enclosing = enclosing  # for a nested function: the one it was defined in
        self.depth = 0 if caller is None else caller.depth + 1
        self.in_loop = False
        self.stale_at_merge: set[int] = set()
        # The differentiated function's arguments that it writes into (found by name, or by a
        # first build that met the write elsewhere: `symbolic.WritesArgument`).
        self.copied = (_subscript_targets(src.node.body) | copied) if caller is None else set()

    # -- entry points --------------------------------------------------------------------

    def bind_params(self, values: list) -> None:
        """Bind the arguments. The differentiated function's arguments that it writes into are
        copied first (the caller's arrays are never modified); a called function's are not:
        Python passes arrays by reference, so its writes reach its caller's arrays."""
        for name, value in zip(self.param_names(), values):
            if name in self.copied and isinstance(value, Sym) and value.ndim:
                self.gb.loc = self.src.loc(self.src.node)
                value = value.copy()
            if isinstance(value, tuple) and self.caller is None:  # a tuple argument's arrays
                self.gb.loc = self.src.loc(self.src.node)
                value = tuple(v.copy() if f"{name}[{k}]" in self.copied and v.ndim else v
                              for k, v in enumerate(value))
            self.env[name] = value

    def param_names(self) -> list[str]:
        return [a.arg for a in self.src.node.args.args]

    def run_body(self):
        """Build the body; return the function's value (any Python value or `Sym`)."""
        self.env[_RETURNED] = False
        body = [s for s in self.src.node.body if not _is_docstring(s)]
        if body and isinstance(body[-1], ast.Return) and not any(
                _jumps(s, loop_level=False) for s in body[:-1]):
            self.build_stmts(body[:-1])
            return self.expr(body[-1].value) if body[-1].value is not None else None
        if not any(isinstance(n, ast.Return) for s in body for n in ast.walk(s)):
            if self.caller is None:
                raise UnsupportedError(f"{self.src.qualname} returns nothing (None)",
                                       self.src.loc(self.src.node))
            self.build_stmts(body)  # a kernel that fills its output argument
            return None
        self.env[_RETVAL] = _NO_RETURN
        self.build_stmts(body)
        if self.env[_RETVAL] is _NO_RETURN:
            return None
        return self.lookup(_RETVAL, self.src.node)

    # -- statements ----------------------------------------------------------------------

    def build_stmts(self, stmts) -> None:
        for k, stmt in enumerate(stmts):
            self.build_stmt(stmt)
            if not _jumps(stmt, loop_level=self.in_loop):
                continue
            flag = self.jump_flag()
            if flag is True:
                return  # the rest cannot run
            if flag is False:
                continue
            rest = stmts[k + 1:]
            if rest:
                self.gb.loc = self.src.loc(rest[0])
                self.build_if(S._apply("logical_not", flag),
                              functools.partial(self.build_stmts, rest), lambda: None, rest[0])
            return

    def jump_flag(self):
        names = [_RETURNED] + ([_BREAK, _CONTINUE] if self.in_loop else [])
        flag = False
        for n in names:
            v = self.env.get(n, False)
            if v is True:
                return True
            if v is not False:
                flag = v if flag is False else S._apply("logical_or", flag, v)
        return flag

    def build_stmt(self, stmt) -> None:
        self.gb.loc = self.src.loc(stmt)
        method = getattr(self, "stmt_" + type(stmt).__name__)
        method(stmt)

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        if _is_docstring(stmt):
            return
        self.expr(stmt.value)  # evaluated for its checks; dead code removal drops it

    def stmt_Assign(self, stmt):
        value = self.expr(stmt.value)
        for target in stmt.targets:
            self.assign(target, value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value))

    def stmt_AugAssign(self, stmt):
        op = _BINOPS.get(type(stmt.op))
        if op is None:
            raise UnsupportedError(f"the operator {type(stmt.op).__name__}=", self.loc(stmt))
        if isinstance(stmt.target, ast.Name):
            current = self.lookup(stmt.target.id, stmt.target)
            value = self.apply_op(op, current, self.expr(stmt.value), stmt)
            if isinstance(current, Sym) and current.ndim:  # NumPy updates an array in place:
                full = ((":",) * current.ndim, [])  # every alias of it sees the new values
                self.write(stmt.target.id, stmt.target, current, full, value)
            else:
                self.assign(stmt.target, value)
        elif isinstance(stmt.target, ast.Subscript):
            array = self.expr(stmt.target.value)
            index = self.index(stmt.target.slice)
            current = self.getitem(array, index, stmt.target)
            value = self.apply_op(op, current, self.expr(stmt.value), stmt)
            self.setitem(stmt.target, array, index, value)
        else:
            raise UnsupportedError("augmented assignment to this target", self.loc(stmt.target))

    def stmt_Return(self, stmt):
        value = self.expr(stmt.value) if stmt.value is not None else None
        if self.in_loop and not _is_atom_value(value):
            raise UnsupportedError("a return inside a loop must return a number",
                                   self.loc(stmt))
        if self.in_loop and isinstance(value, Sym) and value.ndim:
            raise UnsupportedError("a return inside a loop must return a scalar (return an "
                                   "array from a branch, or after the loop)", self.loc(stmt))
        if value is None:
            raise UnsupportedError("a return without a value inside a loop or branch",
                                   self.loc(stmt))
        self.env[_RETVAL] = value
        self.env[_RETURNED] = True

    def stmt_Break(self, stmt):
        self.env[_BREAK] = True

    def stmt_Continue(self, stmt):
        self.env[_CONTINUE] = True

    def stmt_LocalDef(self, stmt):
        node = stmt.node
        defaults = [self.expr(d) for d in node.args.defaults]
        self.env[node.name] = _LocalFunction(self.src.local(node), self, defaults)

    def stmt_If(self, stmt):
        cond = self.condition(stmt.test)
        self.gb.loc = self.src.loc(stmt)
        self.build_if(cond, lambda: self.build_stmts(stmt.body),
                      lambda: self.build_stmts(stmt.orelse), stmt)

    # -- assignment ----------------------------------------------------------------------

    def assign(self, target, value) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = self.named(value, target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Sym):
                raise UnsupportedError("unpacking an array", self.loc(target))
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise UnsupportedError("unpacking needs a tuple of the same length",
                                       self.loc(target))
            for t, v in zip(target.elts, value):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            self.setitem(target, array, self.index(target.slice), value)
        else:
            raise UnsupportedError(f"assignment to {type(target).__name__}", self.loc(target))

    def named(self, value, name: str):
        """Give the variable the last equation defined the user's name, for readable code."""
        if isinstance(value, Sym) and isinstance(value.atom, Var):
            stmts = self.gb.block.stmts
            var = value.atom
            if (stmts and isinstance(stmts[-1], Eqn) and stmts[-1].outs[0] is var
                    and var.name.startswith("_t") and stmts[-1].prim != "setitem"):
                self.gb.namer.used.discard(var.name)
                var.name = self.gb.namer.fresh(_base(name))
        return value

    def setitem(self, target, array, index, value) -> None:
        if not (isinstance(target.value, ast.Name)):
            raise UnsupportedError("item assignment must name the array (`y[i] = ...`)",
                                   self.loc(target))
        self.write(target.value.id, target, array, index, value)

    def write(self, name, node, array, index, value) -> None:
        """``name[index] = value``, in place: a new version of the same storage."""
        if index[0] == ("a",):
            raise UnsupportedError("writing through an integer-array index (fancy indexing) "
                                   "is not supported; write in a loop", self.loc(node))
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("item assignment to something that is not an array",
                                   self.loc(node))
        spec, idx = _expand_ellipsis(index, array)
        if isinstance(value, Sym) and value.type.kind == "f" and array.type.kind != "f":
            raise UnsupportedError("writing floats into an integer array", self.loc(node))
        old = array.atom
        if id(old.root) in getattr(self.gb, "constant_arrays", ()):
            raise UnsupportedError(f"writing into `{name}`, a global array (or one a closure "
                                   "captured), which jitgrad reads as a constant, as Numba does; "
                                   ".copy() it first", self.loc(node))
        self.gb.check_writable(old, name)
        out = self.gb.apply(P.PRIMITIVES["setitem"], [array, value] + idx,
                            {"index_spec": spec})
        self.gb.note_write(out.atom)  # every older value of this memory is now out of date
        out.atom.name = old.name  # same storage, same name in the generated code
        out.atom.storage = old.root
        self.gb.namer.used.add(old.name)
        self.gb.newer(old, out.atom)
        for alias, v in list(self.env.items()):  # every name for this array sees the write
            if isinstance(v, Sym) and v.atom is old:
                self.env[alias] = out
        self.env[name] = out

    def see_writes(self) -> None:
        """After a call: the names for arrays the callee wrote into hold the new versions."""
        for name, v in list(self.env.items()):
            if isinstance(v, Sym) and v.ndim and isinstance(v.atom, Var):
                now = self.gb.current(v.atom)
                if now is not v.atom:
                    self.env[name] = self.gb.sym(now)

    # -- branches ------------------------------------------------------------------------

    def condition(self, node):
        cond = self.expr(node)
        return self.truth(cond, node)

    def truth(self, cond, node):
        if isinstance(cond, Sym):
            if cond.ndim:
                raise UnsupportedError("the truth value of an array is ambiguous (use .any(), "
                                       "np.where, or index an element)", self.loc(node))
            if cond.type.kind != "b":
                cond = cond != 0
            return cond
        if isinstance(cond, (bool, int, float, np.number, np.bool_)) or cond is None:
            return bool(cond)
        raise UnsupportedError(f"a condition of type {type(cond).__name__}", self.loc(node))

    def in_block(self, fn, env):
        saved_block, saved_env = self.gb.block, self.env
        self.gb.block, self.env = Block(), dict(env)
        try:
            fn()
            return self.gb.block, self.env
        finally:
            self.gb.block, self.env = saved_block, saved_env

    def build_if(self, cond, then_fn, else_fn, node) -> None:
        if not isinstance(cond, Sym):
            (then_fn if cond else else_fn)()
            return
        loc = self.src.loc(node)
        before = self.env
        writes = dict(self.gb.writes)  # each branch sees the writes made before the `if` only
        latest = dict(self.gb.latest)  # and the versions known before it
        then_block, env_t = self.in_block(then_fn, before)
        self.stale_at_merge = self.stale_values(env_t)  # each side as its branch ends
        writes_then, self.gb.writes = self.gb.writes, dict(writes)
        latest_then, self.gb.latest = self.gb.latest, dict(latest)
        else_block, env_e = self.in_block(else_fn, before)
        self.stale_at_merge |= self.stale_values(env_e)
        latest_else, self.gb.latest = self.gb.latest, latest
        for k, n in writes_then.items():  # after it, a write on either side counts
            self.gb.writes[k] = max(n, self.gb.writes.get(k, 0))
        merges: list[Carry] = []
        env = {}
        for name in dict.fromkeys(list(env_t) + list(env_e)):
            vt = env_t.get(name, _Undefined(f"`{name}` is assigned in only one branch"))
            ve = env_e.get(name, _Undefined(f"`{name}` is assigned in only one branch"))
            merged = self.merge(name, vt, ve, then_block, else_block, loc)
            env[name] = self.merged_value(merged, merges)
        self.gb.loc = loc
        self.gb.block.stmts.append(If(self.gb.atom(cond), then_block, else_block, merges, loc))
        self.gb.merge_versions(latest_then, latest_else, merges)
        self.env = env

    def merged_value(self, merged, merges):
        """A merge's value after the `if`: its carries (also inside a tuple) become variables."""
        if isinstance(merged, Carry):
            merges.append(merged)
            return self.gb.sym(merged.var)
        if isinstance(merged, tuple):
            return tuple(self.merged_value(m, merges) for m in merged)
        return merged

    def placeholder(self, like, block):
        """A value of ``like``'s structure and types made in ``block``, for the side of a branch
        that has not returned (it is never read): zeros, and empty arrays."""
        if isinstance(like, tuple):
            return tuple(self.placeholder(v, block) for v in like)
        if not _is_atom_value(like):
            return like
        t = self.gb.atom(like, check=False).type
        if not t.ndim:
            return {"f": 0.0, "i": 0, "b": False}[t.kind]
        saved, self.gb.block = self.gb.block, block
        try:
            out = self.gb.emit("empty", [Const(0)] * t.ndim, {"kind": t.kind}, t)
        finally:
            self.gb.block = saved
        out.dims = (0,) * t.ndim
        self.gb.restamp(out)
        return self.gb.sym(out)

    def merge(self, name, vt, ve, then_block, else_block, loc):
        if vt is ve:
            return vt
        if vt is _NO_RETURN:
            vt = self.placeholder(ve, then_block)
        elif ve is _NO_RETURN:
            ve = self.placeholder(vt, else_block)
        if (isinstance(vt, tuple) and isinstance(ve, tuple) and len(vt) == len(ve)
                and not _same_structure(vt, ve)):  # a tuple returned on both sides
            return tuple(self.merge(f"{name}_{k}", a, b, then_block, else_block, loc)
                         for k, (a, b) in enumerate(zip(vt, ve)))
        if isinstance(vt, _Undefined) or isinstance(ve, _Undefined):
            return vt if isinstance(vt, _Undefined) else ve
        if _same_constant(vt, ve):
            return vt
        if not (_is_atom_value(vt) and _is_atom_value(ve)):
            if _same_structure(vt, ve):
                return vt
            return _Undefined(f"`{name}` holds different non-numeric values on the two branches")
        tt, te = self.gb.atom(vt, check=False).type, self.gb.atom(ve, check=False).type
        if tt.ndim != te.ndim:
            raise ShapeError(f"`{_base(name)}` is a {tt} on one branch and a {te} on the "
                             "other", loc)
        kind = promote_kinds(tt.kind, te.kind)
        at = self.cast_in(then_block, vt, kind)
        ae = self.cast_in(else_block, ve, kind)
        var = self.gb.new_var(Type(kind, tt.ndim), _base(name))
        for a in (at, ae):  # the merged array is one of the two: it may alias either
            if var.type.ndim and isinstance(a, Var):
                self.gb.share_memory(var, a)
                self.gb.same_view(var, a)
        self.gb.restamp(var)
        if any(id(a) in self.stale_at_merge for a in (at, ae)):
            self.gb.mark_stale(var)  # an out-of-date array stays out of date when merged
        return Carry(var, at, ae)

    def stale_values(self, env) -> set[int]:
        return {id(v.atom) for v in env.values() if isinstance(v, Sym)
                and isinstance(v.atom, Var) and self.gb.is_stale(v.atom)}

    def cast_in(self, block, value, kind):
        atom = self.gb.atom(value, check=False)
        if atom.type.kind == kind:
            return atom
        if isinstance(atom, Const):
            return Const({"f": float, "i": int, "b": bool}[kind](atom.value))
        saved = self.gb.block
        self.gb.block = block
        try:
            return self.gb.atom(S._apply("cast", self.gb.sym(atom), kind=kind))
        finally:
            self.gb.block = saved

    # -- loops ---------------------------------------------------------------------------

    def stmt_For(self, stmt):
        stmt = self.as_range_loop(stmt)
        if not isinstance(stmt.target, ast.Name):
            raise UnsupportedError("the loop variable must be a single name", self.loc(stmt))
        it = stmt.iter
        call = it if isinstance(it, ast.Call) else None
        fn = self.expr(call.func) if call is not None else None
        if fn is range:
            if call.keywords or not 1 <= len(call.args) <= 3:
                raise UnsupportedError("range() takes 1 to 3 positional arguments",
                                       self.loc(call))
            bounds = [self.expr(a) for a in call.args]
            for b, a in zip(bounds, call.args):
                t = self.gb.atom(b).type if _is_atom_value(b) else None
                if t is None or t.kind not in "ib" or t.ndim:
                    raise UnsupportedError("range() bounds must be integers", self.loc(a))
            start, stop, step = {1: [0, *bounds, 1], 2: [*bounds, 1], 3: bounds}[len(bounds)]
            if isinstance(step, int) and step == 0:
                raise ShapeError("range() step must not be zero", self.loc(call))
            self.build_for(stmt, stmt.target.id, start, stop, step, None)
            return
        seq = self.expr(it)
        if isinstance(seq, Sym) and seq.ndim >= 1:
            n = seq.shape[0]
            self.build_for(stmt, "%i", 0, n, 1, (stmt.target.id, seq))
            return
        if isinstance(seq, (tuple, list)):  # a Python tuple: unrolled
            for v in seq:
                self.assign(stmt.target, v)
                self.build_stmts(stmt.body)
            return
        raise UnsupportedError("a for loop must run over range(...) or a 1-D array",
                               self.loc(it))

    def as_range_loop(self, stmt):
        """``for`` over ``enumerate``, ``zip``, ``reversed`` and ``numba.prange``, rewritten as a
        loop over ``range`` whose body starts by assigning the target from the sequences:
        ``for i, (a, b) in enumerate(zip(x, y))`` runs as ``for k in range(n): i, (a, b) =
        k, (x[k], y[k])``. The sequences are evaluated once, before the loop."""
        it = stmt.iter
        if not isinstance(it, ast.Call):
            return stmt
        fn = self.expr(it.func)
        tag = f"@{id(stmt)}"

        def hidden(kind, value):  # bind a value the rewritten loop reads to a hidden name
            name = f"%{kind}{tag}_{len(self.env)}"
            self.env[name] = value
            return ast.Name(id=name, ctx=ast.Load())

        def new_loop(iter_call, target, prologue):
            node = ast.copy_location(ast.For(target=target, iter=iter_call, body=prologue + list(
                stmt.body), orelse=stmt.orelse, type_comment=None), stmt)
            return ast.fix_missing_locations(node)  # new nodes get the loop's line

        def call(fn_name, *args):
            return ast.Call(func=ast.Name(id=fn_name, ctx=ast.Load()), args=list(args),
                            keywords=[])

        if _is_prange(fn):  # numba.prange is range here; the loop is marked (`parallel.py`)
            node = new_loop(call("range", *it.args), stmt.target, [])
            node.jitgrad_prange = True
            return node
        if fn is reversed and len(it.args) == 1 and isinstance(it.args[0], ast.Call) and (
                self.expr(it.args[0].func) in (range,) or _is_prange(self.expr(it.args[0].func))):
            inner = it.args[0]
            bounds = [self.expr(a) for a in inner.args]
            start, stop, step = {1: [0, *bounds, 1], 2: [*bounds, 1], 3: bounds}.get(
                len(bounds), [None] * 3)
            if not isinstance(step, int) or isinstance(step, bool) or step == 0:
                raise UnsupportedError("reversed(range(...)) needs a constant, nonzero integer "
                                       "step", self.loc(inner))
            count = (stop - start + step - (1 if step > 0 else -1)) // step
            count = S._apply("maximum", count, 0) if isinstance(count, Sym) else max(count, 0)
            last = start + (count - 1) * step
            return new_loop(call("range", hidden("rlast", last), hidden("rend", start - step),
                                 ast.Constant(-step)), stmt.target, [])
        if fn is np.ndindex:
            return self.ndindex_loop(stmt, it, hidden, new_loop, call)
        if fn not in (enumerate, zip, reversed):
            return stmt
        length, item = self.loop_items(it, hidden)
        k = ast.Name(id=f"%k{tag}", ctx=ast.Store())
        prologue = [ast.Assign(targets=[stmt.target], value=item(ast.Name(id=k.id,
                                                                          ctx=ast.Load())))]
        return new_loop(call("range", hidden("n", length)), k, prologue)

    def ndindex_loop(self, stmt, it, hidden, new_loop, call):
        """``for idx in np.ndindex(shape)`` as one loop over the flat position ``k``, whose body
        starts with ``idx = (k // stride0 % n0, k // stride1 % n1, ...)`` (row-major, as
        NumPy's order); ``break`` and ``continue`` keep their meaning."""
        if it.keywords or any(isinstance(a, ast.Starred) for a in it.args):
            raise UnsupportedError("np.ndindex takes a shape tuple or sizes", self.loc(it))
        dims = [self.expr(a) for a in it.args]
        if len(dims) == 1 and isinstance(dims[0], tuple):
            dims = list(dims[0])
        for d in dims:
            self.check_int(d, it)
        strides, total = [], 1
        for d in reversed(dims):
            strides.insert(0, total)
            total = total * d
        k = ast.Name(id=f"%k@{id(stmt)}", ctx=ast.Store())
        parts = []
        for d, s in zip(dims, strides):
            part = ast.BinOp(left=ast.Name(id=k.id, ctx=ast.Load()), op=ast.FloorDiv(),
                             right=hidden("stride", s))
            parts.append(ast.BinOp(left=part, op=ast.Mod(), right=hidden("dim", d)))
        prologue = [ast.Assign(targets=[stmt.target], value=ast.Tuple(elts=parts,
                                                                       ctx=ast.Load()))]
        return new_loop(call("range", hidden("n", total)), k, prologue)

    def loop_items(self, node, hidden):
        """(length, item) for a sequence ``for`` can run over: ``item(k)`` is the AST of its
        k-th element."""
        fn = self.expr(node.func) if isinstance(node, ast.Call) else None
        if fn is enumerate:
            starts = node.args[1:] + [k.value for k in node.keywords if k.arg == "start"]
            if len(node.args) + len(node.keywords) > 2 or len(starts) > 1 or any(
                    k.arg != "start" for k in node.keywords):
                raise UnsupportedError("enumerate() takes a sequence and a start",
                                       self.loc(node))
            start = starts[0] if starts else ast.Constant(0)
            n, inner = self.loop_items(node.args[0], hidden)
            first = hidden("start", self.expr(start))
            return n, lambda k: ast.Tuple(elts=[ast.BinOp(left=k, op=ast.Add(), right=first),
                                                inner(k)], ctx=ast.Load())
        if fn is zip and node.args and not node.keywords:
            parts = [self.loop_items(a, hidden) for a in node.args]
            n = parts[0][0]
            for m, _ in parts[1:]:
                n = S._apply("minimum", n, m) if isinstance(n, Sym) or isinstance(m, Sym) \
                    else min(n, m)
            return n, lambda k: ast.Tuple(elts=[item(k) for _, item in parts], ctx=ast.Load())
        if fn is reversed and len(node.args) == 1 and not node.keywords:
            seq = self.expr(node.args[0])
            seq = S.NUMPY[np.flip](seq, 0) if isinstance(seq, Sym) else seq
        else:
            seq = self.expr(node)
        if not (isinstance(seq, Sym) and seq.ndim >= 1):
            raise UnsupportedError("enumerate(), zip() and reversed() in a `for` run over "
                                   "arrays (or reversed(range(...)))", self.loc(node))
        name = hidden("seq", seq)
        return seq.shape[0], lambda k: ast.Subscript(value=name, slice=k, ctx=ast.Load())

    def loop_carries(self, body_stmts, extra=()):
        """The names a loop carries: those it assigns, the arrays it passes to a function (which
        may write into them), and every other name for an array among those (an alias sees
        the writes)."""
        passed = {n for n in _call_arguments(body_stmts, self.is_library_call)
                  if isinstance(self.env.get(n), Sym) and self.env[n].ndim}
        names = _assigned_names(body_stmts) | passed | set(extra)
        arrays = {id(v.atom) for n, v in self.env.items()
                  if n in names and isinstance(v, Sym) and v.ndim}
        names |= {n for n, v in self.env.items() if isinstance(v, Sym) and id(v.atom) in arrays}
        carried = []
        for name in sorted(names):
            if name not in self.env:
                continue
            v = self.env[name]
            if isinstance(v, _Undefined):
                continue
            if not _is_atom_value(v):
                raise UnsupportedError(f"`{_base(name)}` (a {type(v).__name__}) is reassigned "
                                       "inside a loop", self.gb.loc)
            carried.append(name)
        return carried

    def is_library_call(self, func) -> bool:
        """Whether ``func`` (a call's function node) names a NumPy, math or builtin function
        or an array method: resolved without building anything, so names and attributes of
        modules only. Anything else may be the user's function, which may write."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = self.env.get(func.value.id, self.src.fn.__globals__.get(func.value.id))
            if isinstance(base, Sym):
                return True  # an array method: x.sum(), x.copy()
            if isinstance(base, pytypes.ModuleType):
                fn = getattr(base, func.attr, None)
                return fn in S.NUMPY or fn in S.MATH
            return False
        if isinstance(func, ast.Name) and func.id not in self.env:
            fn = self.src.fn.__globals__.get(func.id, getattr(builtins, func.id, None))
            return fn in S.NUMPY or fn in S.MATH or fn in _BUILTINS or fn is range
        return False

    def build_loop(self, stmt, carried, make_body_env, build_inside):
        """Build a loop body until the carried types settle; return what `build_inside` made."""
        kinds = {n: self.gb.atom(self.env[n], check=False).type for n in carried}
        apart: set[str] = set()  # names for one array that the body rebinds and never writes
        for _attempt in range(6):
            carry_vars: dict[str, Var] = {}
            by_init: dict[int, Var] = {}  # names for one array share its carried variable
            writes_before: dict[int, int] = {}
            for n in carried:
                init = self.gb.atom(self.env[n], check=False)
                if (kinds[n].ndim and isinstance(init, Var) and id(init) in by_init
                        and n not in apart):
                    carry_vars[n] = by_init[id(init)]
                    continue
                v = carry_vars[n] = self.gb.new_var(kinds[n], _base(n))
                if v.type.ndim and isinstance(init, Var):  # it starts as its initial value
                    if n not in apart:
                        by_init[id(init)] = v
                    self.gb.share_memory(v, init)
                    self.gb.same_view(v, init)
                    writes_before[id(v)] = self.gb.writes_to(v)
                self.gb.restamp(v)
                if isinstance(init, Var) and self.gb.is_stale(init):
                    self.gb.mark_stale(v)  # an out-of-date array stays out of date when carried
            outer_env = self.env
            inner_env = dict(outer_env)
            for n, v in carry_vars.items():
                inner_env[n] = self.gb.sym(v)
            make_body_env(inner_env)
            result = build_inside(inner_env)
            env_end = result["env_end"]
            changed = False
            for n in carried:
                end = env_end.get(n)
                if isinstance(end, _Undefined) or end is None:
                    raise UnsupportedError(f"`{_base(n)}` may be undefined at the end of the "
                                           "loop body", self.loc(stmt))
                if not _is_atom_value(end):
                    raise UnsupportedError(f"`{_base(n)}` changes kind inside the loop",
                                           self.loc(stmt))
                t_end = self.gb.atom(end, check=False).type
                if t_end.ndim != kinds[n].ndim:
                    raise ShapeError(f"`{_base(n)}` is a {kinds[n]} before the loop and a "
                                     f"{t_end} inside it", self.loc(stmt))
                kind = promote_kinds(kinds[n].kind, t_end.kind)
                if kind != kinds[n].kind:
                    kinds[n] = Type(kind, kinds[n].ndim)
                    changed = True
            for n, m in itertools.combinations(carried, 2):  # `y = y0`, then `y = g(y)`:
                v = carry_vars[n]  # two arrays from the second iteration on; if the body never
                if (v is carry_vars[m] and self.gb.atom(env_end[n], check=False)  # writes, two
                        is not self.gb.atom(env_end[m], check=False)  # carried variables
                        and self.gb.writes_to(v) == writes_before[id(v)]):
                    apart |= {n, m}
                    changed = True
            if not changed:
                break
        out_of_date = self.check_no_stale_reads(result, carry_vars, stmt)
        self.gb.forget_versions_in([result["body"]] + (
            [result["cond_block"]] if "cond_block" in result else []))
        for v in carry_vars.values():
            if id(v) not in out_of_date:
                self.gb.restamp(v)  # after the loop it holds the current contents
        carries = []
        first_name: dict[int, str] = {}
        for n in carried:
            var = carry_vars[n]
            if id(var) in first_name:  # another name for the same array
                other = first_name[id(var)]
                if self.gb.atom(env_end[n], check=False) is not self.gb.atom(
                        env_end[other], check=False):
                    raise UnsupportedError(
                        f"`{_base(n)}` and `{_base(other)}` name the same array before the "
                        "loop but not at the end of its body: jitgrad cannot follow which "
                        "array each names from one iteration to the next", self.loc(stmt))
                continue
            first_name[id(var)] = n
            init = self.cast_in(self.gb.block, self.env[n], kinds[n].kind)
            update = self.cast_in(result["body"], env_end[n], kinds[n].kind)
            carries.append(Carry(var, init, update))
            if (var.type.ndim and isinstance(init, Var) and isinstance(update, Var)
                    and update.root is var):  # only written in place: after the loop, the
                self.gb.newer(init, var)  # initial array holds the carried value
            self.gb.latest.pop(id(var), None)
        for c in carries:  # an array the body only writes in place: one storage, before and in
            if (c.var.type.ndim and isinstance(c.init, Var) and isinstance(c.update, Var)
                    and c.update.root is c.var):
                c.var.storage = c.init.root
        kept = []
        for c in carries:  # an array the body never rebinds nor writes is its initial value
            if c.var.type.ndim and c.update is c.var and isinstance(c.init, Var):
                blocks = [result["body"]] + ([result["cond_block"]]
                                             if "cond_block" in result else [])
                _replace_atom(blocks, c.var, c.init)
                for n, v in list(carry_vars.items()):
                    if v is c.var:
                        carry_vars[n] = c.init
                if self.gb.latest.get(id(c.init)) is c.var:
                    del self.gb.latest[id(c.init)]
                continue
            kept.append(c)
        return kept, carry_vars, result

    def check_no_stale_reads(self, result, carry_vars, stmt) -> set[int]:
        """An array read in the loop whose memory the loop writes into later in the body,
        under another name, shows new values from the second iteration on: refuse it. That is
        an array made before the loop, or a carried one whose value at the end of the body is
        out of date (a view of the array written). Return the carried arrays that are out of
        date after the loop but not read in it (reading them after the loop is refused)."""
        blocks = [result["body"]] + ([result["cond_block"]] if "cond_block" in result else [])
        inside = {id(v) for v in carry_vars.values()}
        for b in blocks:
            for s in walk(b):
                for v in defs(s):
                    inside.add(id(v))
        stale_carries = set()
        for n, v in carry_vars.items():
            end = result["env_end"].get(n)
            if v.type.ndim and isinstance(end, Sym) and isinstance(end.atom, Var) and (
                    self.gb.is_stale(end.atom)):
                stale_carries.add(id(v))
        names = {id(v.atom): n for n, v in self.env.items() if isinstance(v, Sym)}
        names.update({id(v): n for n, v in carry_vars.items()})
        for b in blocks:
            for s in b.stmts:
                for a in used_atoms(s):
                    if isinstance(a, Var) and a.type.ndim and (
                            id(a) in stale_carries
                            or (id(a) not in inside and self.gb.is_stale(a))):
                        what = f"`{_base(names[id(a)])}`" if id(a) in names else "an array"
                        raise UnsupportedError(
                            f"{what} is read in this loop and shares memory with an array "
                            "the loop writes into in place, so from the second iteration on it "
                            "shows new values, which jitgrad does not follow. Index the array "
                            "itself inside the loop, or .copy() it before the loop",
                            self.loc(stmt))
        return stale_carries

    def build_for(self, stmt, target, start, stop, step, over):
        flags = self.loop_flags(stmt.body)
        carried = self.loop_carries(stmt.body, flags)
        index = self.gb.new_var(INT, _base(target) if target != "%i" else "_i")
        saved_in_loop = self.in_loop

        def body_env(env):
            env[target] = self.gb.sym(index)
            env[_BREAK] = False
            env[_CONTINUE] = False

        def inside(env):
            def run():
                if over is not None:
                    name, seq = over
                    self.assign(ast.Name(id=name), S._apply(
                        "getitem", seq, self.gb.sym(index), index_spec=("i",)))
                self.build_stmts(stmt.body)
            self.in_loop = True
            try:
                body, env_end = self.in_block(run, env)
            finally:
                self.in_loop = saved_in_loop
            return {"body": body, "env_end": env_end}

        self.gb.loc = self.src.loc(stmt)
        carries, carry_vars, result = self.build_loop(stmt, carried, body_env, inside)
        exit_flag = self.exit_flag(result)
        trips = self.gb.new_var(INT, "_trips")
        loop = For(index, self.gb.atom(start), self.gb.atom(stop), self.gb.atom(step),
                   result["body"], carries, trips, exit_flag, self.src.loc(stmt),
                   parallel=getattr(stmt, "jitgrad_prange", False))
        self.gb.block.stmts.append(loop)
        self.after_loop(result["env_end"], carried, carry_vars)

    def loop_flags(self, body):
        if not any(isinstance(n, ast.Return) for s in body for n in ast.walk(s)):
            return set()
        if self.env.get(_RETVAL) is _NO_RETURN:
            self.env[_RETVAL] = 0.0  # a loop carries a number (its returns return numbers)
        return {_RETURNED, _RETVAL}

    def exit_flag(self, result):
        env_end = result["env_end"]
        flag = False
        for n in (_BREAK, _RETURNED):
            v = env_end.get(n, False)
            if v is True:
                flag = True
            elif v is not False and flag is not True:
                saved = self.gb.block
                self.gb.block = result["body"]
                flag = v if flag is False else S._apply("logical_or", flag, v)
                self.gb.block = saved
        if flag is False:
            return None
        if flag is True:
            return Const(True)
        return flag.atom

    def after_loop(self, env_end, carried, carry_vars):
        for name in env_end:
            if name in (_BREAK, _CONTINUE):
                continue
            if name in carry_vars:
                self.env[name] = self.gb.sym(carry_vars[name])
            elif name not in self.env:
                self.env[name] = _Undefined(f"`{name}` is only defined inside a loop")

    def stmt_While(self, stmt):
        flags = self.loop_flags(stmt.body)
        carried = self.loop_carries(stmt.body, flags)
        saved_in_loop = self.in_loop

        def body_env(env):
            env[_BREAK] = False
            env[_CONTINUE] = False

        def inside(env):
            holder = {}

            def cond_fn():
                holder["cond"] = self.condition(stmt.test)
            cond_block, env_c = self.in_block(cond_fn, env)
            self.in_loop = True
            try:
                body, env_end = self.in_block(lambda: self.build_stmts(stmt.body), env_c)
            finally:
                self.in_loop = saved_in_loop
            return {"cond_block": cond_block, "cond": holder["cond"], "body": body,
                    "env_end": env_end}

        self.gb.loc = self.src.loc(stmt)
        carries, carry_vars, result = self.build_loop(stmt, carried, body_env, inside)
        cond = result["cond"]
        if cond is False:
            return  # the loop never runs
        exit_flag = self.exit_flag(result)
        trips = self.gb.new_var(INT, "_trips")
        loop = While(result["cond_block"], self.gb.atom(cond), result["body"], carries, trips,
                     self.src.loc(stmt), exit_flag)
        self.gb.block.stmts.append(loop)
        self.after_loop(result["env_end"], carried, carry_vars)

    # -- expressions ---------------------------------------------------------------------

    def loc(self, node) -> Loc:
        return self.src.loc(node)

    def expr(self, node):
        saved = self.gb.loc
        self.gb.loc = self.src.loc(node)
        try:
            method = getattr(self, "expr_" + type(node).__name__, None)
            if method is None:
                raise UnsupportedError(f"the expression {type(node).__name__} is not supported",
                                       self.loc(node))
            return method(node)
        finally:
            self.gb.loc = saved

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float)) or node.value in (None, Ellipsis):
            return node.value
        raise UnsupportedError(f"the constant {node.value!r} is not supported", self.loc(node))

    def lookup(self, name, node):
        if name in self.env:
            v = self.env[name]
            if isinstance(v, _Undefined):
                raise UnsupportedError(f"`{name}` may be undefined here: {v.why}",
                                       self.loc(node))
            if isinstance(v, Sym) and isinstance(v.atom, Var) and self.gb.is_stale(v.atom):
                raise UnsupportedError(S.stale_message(f"`{name}`"), self.loc(node))
            return v
        if self.enclosing is not None:  # a nested function reads its enclosing one's names
            return self.enclosing.lookup(name, node)
        code = self.src.fn.__code__
        if name in code.co_freevars and self.src.node.name == self.src.fn.__name__:
            # a closure's variable (`make_loss(reg)` returning `loss`): constant during a call
            try:
                value = self.src.fn.__closure__[code.co_freevars.index(name)].cell_contents
            except ValueError:
                raise JitgradError(f"NameError: free variable '{name}' referenced before "
                                   "assignment in the enclosing scope", self.loc(node)) from None
            return self.global_value(name, value, node, "closure variable")
        g = self.src.fn.__globals__
        if name in g:
            return self.global_value(name, g[name], node)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise JitgradError(f"NameError: name '{name}' is not defined", self.loc(node))

    def global_value(self, name, value, node, what="global"):
        if isinstance(value, (bool, int, float, np.number, np.bool_)):
            return S._python_scalar(value)
        if isinstance(value, (pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType,
                              np.ufunc, tuple)) or callable(value):
            return value
        if isinstance(value, np.ndarray):
            return self.constant_array(name, value, node)
        raise UnsupportedError(f"the {what} `{name}` of type {type(value).__name__}",
                               self.loc(node))

    def constant_array(self, name, value, node):
        """A global array (or one a closure captured) read as a constant, as Numba freezes it:
        its contents when the signature is first compiled."""
        kind = {"u": "i"}.get(value.dtype.kind, value.dtype.kind)
        if kind not in "fib" or value.ndim == 0:
            raise UnsupportedError(f"the global `{name}`: a {value.dtype} array of rank "
                                   f"{value.ndim} (jitgrad reads float, integer and bool arrays "
                                   "as constants)", self.loc(node))
        t = Type(kind, value.ndim)
        out = self.gb.emit("constant", [], {"name": P.constant_array_name(
            value.astype({"f": np.float64, "i": np.int64, "b": np.bool_}[kind])), "type": t}, t,
            base=name)
        out.dims = tuple(int(n) for n in value.shape)
        self.gb.restamp(out)
        if not hasattr(self.gb, "constant_arrays"):
            self.gb.constant_arrays = set()
        self.gb.constant_arrays.add(id(out))
        return self.gb.sym(out)

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, pytypes.ModuleType):
            if not hasattr(base, node.attr):
                raise UnsupportedError(f"{base.__name__}.{node.attr} does not exist",
                                       self.loc(node))
            value = getattr(base, node.attr)
            if base is np and node.attr in ("pi", "e", "inf", "nan", "newaxis"):
                return value
            if base is np and node.attr in ("float64", "float32", "int64", "int32", "bool_"):
                return value
            return value
        if isinstance(base, Sym):
            if node.attr in ("T", "shape", "ndim", "size", "dtype"):
                return getattr(base, node.attr)
            if node.attr == "flat":  # read only: x.flat[i] is the flattened array's entry i
                return S.NUMPY[np.ravel](base)
            if node.attr in ("sum", "mean", "max", "min", "dot", "copy", "transpose", "reshape",
                             "item", "astype", "prod", "var", "std", "cumsum", "cumprod", "ravel",
                             "flatten", "squeeze"):
                return getattr(base, node.attr)
            raise UnsupportedError(f"the array attribute .{node.attr} is not supported",
                                   self.loc(node))
        if isinstance(base, (int, float)) and node.attr in ("real",):
            return base
        raise UnsupportedError(f"the attribute .{node.attr} of a {type(base).__name__}",
                               self.loc(node))

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def apply_op(self, op, a, b, node):
        if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
            if op is operator.add and isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            raise UnsupportedError("arithmetic on tuples or lists", self.loc(node))
        if op is operator.matmul and not (isinstance(a, Sym) or isinstance(b, Sym)):
            raise UnsupportedError("@ needs arrays", self.loc(node))
        if op is operator.pow and isinstance(a, int) and isinstance(b, Sym):
            a = float(a)
        try:
            return op(a, b)
        except ZeroDivisionError:
            raise JitgradError("ZeroDivisionError in a constant expression",
                               self.loc(node)) from None

    def expr_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise UnsupportedError(f"the operator {type(node.op).__name__}", self.loc(node))
        return self.apply_op(op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            t = self.truth(v, node)
            return (not t) if not isinstance(t, Sym) else S._apply("logical_not", t)
        raise UnsupportedError(f"the operator {type(node.op).__name__}", self.loc(node))

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            fn = _CMPOPS.get(type(op))
            if fn is None:
                raise UnsupportedError(f"the comparison {type(op).__name__}", self.loc(node))
            right = self.expr(right_node)
            c = fn(left, right)
            result = c if result is True else self.logical("and", result, c, node)
            left = right
        return result

    def logical(self, kind, a, b, node):
        if not isinstance(a, Sym) and not isinstance(b, Sym):
            return (a and b) if kind == "and" else (a or b)
        for v in (a, b):
            if isinstance(v, Sym) and v.type.kind != "b":
                raise UnsupportedError(f"`{kind}` on non-boolean run-time values (jitgrad "
                                       "supports and/or between conditions)", self.loc(node))
        if not isinstance(a, Sym):
            return (b if a else False) if kind == "and" else (True if a else b)
        if not isinstance(b, Sym):
            return (a if b else False) if kind == "and" else (True if b else a)
        return S._apply("logical_and" if kind == "and" else "logical_or", a, b)

    def expr_BoolOp(self, node):
        kind = "and" if isinstance(node.op, ast.And) else "or"
        value = self.expr(node.values[0])
        for v in node.values[1:]:
            value = self.logical(kind, value, self.expr(v), node)
        return value

    def expr_IfExp(self, node):
        cond = self.condition(node.test)
        if not isinstance(cond, Sym):
            return self.expr(node.body if cond else node.orelse)
        key = f"%ifexp@{node.lineno}:{node.col_offset}"  # deterministic (no addresses)
        self.build_if(cond, lambda: self.env.__setitem__(key, self.expr(node.body)),
                      lambda: self.env.__setitem__(key, self.expr(node.orelse)), node)
        value = self.env.pop(key)
        if isinstance(value, _Undefined):
            raise UnsupportedError(value.why, self.loc(node))
        return value

    # -- indexing ------------------------------------------------------------------------

    def index(self, node):
        """An index expression → (spec, atoms) for getitem/setitem; None items → newaxis."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        spec, atoms = [], []
        for item in items:
            if isinstance(item, ast.Slice):
                flags = []
                for part in (item.lower, item.upper, item.step):
                    if part is None:
                        flags.append(False)
                        continue
                    v = self.expr(part)
                    self.check_int(v, part)
                    atoms.append(v)
                    flags.append(True)
                spec.append(":" if not any(flags) else ("s", *flags))
                continue
            v = self.expr(item)
            if v is None:
                spec.append("n")
                continue
            if isinstance(v, tuple):  # x[idx] with idx = (i, j), as np.ndindex gives
                for e in v:
                    self.check_int(e, item)
                    spec.append("i")
                    atoms.append(e)
                continue
            if v is Ellipsis:
                if "e" in spec:
                    raise ShapeError("an index can only have a single ellipsis (...)",
                                     self.loc(item))
                spec.append("e")
                continue
            if isinstance(v, Sym) and v.ndim:
                if len(items) == 1 and v.ndim == 1 and v.type.kind == "i":
                    return ("a",), [v]  # x[idx]: rows of x at the integers idx (read only)
                raise UnsupportedError("indexing with an array (fancy or boolean indexing) is "
                                       "not supported; index with integers and slices, or "
                                       "read rows with one 1-D integer array",
                                       self.loc(item))
            self.check_int(v, item)
            spec.append("i")
            atoms.append(v)
        return tuple(spec), atoms

    def check_int(self, v, node):
        if isinstance(v, Sym):
            if v.type.kind != "i":
                raise UnsupportedError("an index must be an integer", self.loc(node))
        elif not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise UnsupportedError("an index must be an integer", self.loc(node))

    def getitem(self, array, index, node):
        if index[0] == ("a",):
            if not isinstance(array, Sym) or array.ndim not in (1, 2):
                raise UnsupportedError("an integer-array index reads rows of a 1-D or 2-D "
                                       "array", self.loc(node))
            return S._apply("take", array, index[1][0])
        spec, atoms = _expand_ellipsis(index, array)
        if not isinstance(array, Sym):
            if isinstance(array, (tuple, list)):
                if len(spec) == 1 and spec[0] == "i" and not isinstance(atoms[0], Sym):
                    return array[atoms[0]]
                if len(spec) == 1 and spec[0] != "i" and not any(isinstance(a, Sym)
                                                                  for a in atoms):
                    return tuple(array[P._index_value(spec, atoms)[0]])
            raise UnsupportedError("indexing this value", self.loc(node))
        plain = [s for s in spec if s != "n"]
        if len(plain) > array.ndim:
            raise ShapeError(f"too many indices for an array of rank {array.ndim}",
                             self.loc(node))
        result = array
        if plain and not all(s == ":" for s in plain):
            result = S._apply("getitem", array, *atoms, index_spec=tuple(plain))
        # newaxis: insert unit axes where the None items stood
        pos = 0
        for s in spec:
            if s == "n":
                result = S._apply("expand_dims", result, axis=pos)
                pos += 1
            elif s != "i":
                pos += 1
        return result

    def expr_Subscript(self, node):
        value = self.expr(node.value)
        return self.getitem(value, self.index(node.slice), node)

    # -- calls ---------------------------------------------------------------------------

    def expr_Call(self, node):
        fn = self.expr(node.func)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if None in kwargs:
            raise UnsupportedError("**kwargs in a call", self.loc(node))
        return self.call(fn, args, kwargs, node)

    def call(self, fn, args, kwargs, node):
        if isinstance(fn, Sym) or fn is None:
            raise UnsupportedError("calling a value that is not a function", self.loc(node))
        if getattr(fn, "__self__", None) is not None and isinstance(fn.__self__, Sym):
            return fn(*args, **kwargs)  # an array method
        if isinstance(fn, _LocalFunction):
            return self.inline(fn, args, kwargs, node)
        if isinstance(fn, custom_vjp):  # a hand-written rule: `custom.py`
            return fn.build_call(self, args, kwargs, node)
        if fn in S.NUMPY:
            try:
                return S.NUMPY[fn](*args, **kwargs)
            except TypeError as e:
                raise UnsupportedError(f"{_fn_name(fn)}: {e}", self.loc(node)) from None
        if fn in S.MATH:
            for a in args:
                S.scalar_only(_fn_name(fn), a, self.loc(node))
            return S._apply(S.MATH[fn], *args) if any(isinstance(a, Sym) for a in args) \
                else fn(*args)
        handler = _BUILTINS.get(fn)
        if handler is not None:
            return handler(self, args, kwargs, node)
        target = _unwrap(fn)
        library = str(getattr(target, "__module__", None) or "").split(".")[0]
        if library == "numpy" or isinstance(fn, np.ufunc):
            # NumPy's own Python functions (np.fft.fft, np.sort...) are not the user's code
            # to inline: outside the table, they are refused where the user called them
            raise UnsupportedError(f"{_fn_name(fn)} is not supported", self.loc(node))
        if library in _LIBRARIES:
            raise UnsupportedError(f"calling {_fn_name(fn)} is not supported", self.loc(node))
        if isinstance(target, pytypes.FunctionType):
            return self.inline(target, args, kwargs, node)
        raise UnsupportedError(f"calling {_fn_name(fn)} is not supported", self.loc(node))

    def inline(self, fn, args, kwargs, node):
        if self.depth >= self.MAX_INLINE_DEPTH:
            raise UnsupportedError("recursion (or calls nested too deeply) is not supported",
                                   self.loc(node))
        local = isinstance(fn, _LocalFunction)
        src = fn.src if local else FunctionSource.of(fn)
        try:
            bound = (fn.signature() if local else inspect.signature(fn)).bind(*args, **kwargs)
        except TypeError as e:
            raise JitgradError(f"TypeError calling {src.qualname}: {e}",
                               self.loc(node)) from None
        bound.apply_defaults()
        callee = Builder(src, self.gb, self, enclosing=fn.builder if local else None)
        callee.bind_params([bound.arguments[n] for n in callee.param_names()])
        saved_loc = self.gb.loc
        try:
            result = callee.run_body()
        except JitgradError as e:
            raise e.with_during(f"building {src.qualname}, called at "
                                f"{self.loc(node).short()}")
        self.gb.loc = saved_loc
        self.see_writes()
        return result


class _LocalFunction:
    """A function defined inside the one being built: a closure over its names (read when it
    is called, as Python does), built inline where it is called."""

    def __init__(self, src: FunctionSource, builder: Builder, defaults: list):
        self.src, self.builder, self.defaults = src, builder, defaults
        self.__qualname__ = src.qualname

    def signature(self) -> inspect.Signature:
        names = [a.arg for a in self.src.node.args.args]
        first_default = len(names) - len(self.defaults)
        return inspect.Signature([inspect.Parameter(
            n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=(
                self.defaults[k - first_default] if k >= first_default
                else inspect.Parameter.empty)) for k, n in enumerate(names)])


def _is_prange(fn) -> bool:
    return getattr(fn, "__name__", None) == "prange" and str(
        getattr(fn, "__module__", "")).startswith("numba")


_LIBRARIES = {"numpy", "scipy", "math", "builtins", "numba", "jitgrad", "random", "statistics",
              "cmath", "functools", "itertools", "operator"}


def _fn_name(fn) -> str:
    """How the user wrote a library function: np.fft.fft, np.sort, math.gamma."""
    mod = str(getattr(fn, "__module__", None) or "")
    name = getattr(fn, "__name__", type(fn).__name__)
    if mod.startswith("numpy") or isinstance(fn, np.ufunc):
        public = [p for p in mod.split(".")[1:] if not p.startswith("_")]
        return ".".join(["np", *public, name])
    if mod == "math":
        return f"math.{name}"
    return name


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str)


def _same_constant(a, b) -> bool:
    return (not isinstance(a, Sym) and not isinstance(b, Sym) and type(a) is type(b)
            and _is_atom_value(a) and a == b)


def _same_structure(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(x is y or _same_constant(x, y) for x, y in zip(a, b))
    return a is b


def _expand_ellipsis(index, array):
    """``...`` in an index stands for as many full slices as the array has axes left over."""
    spec, atoms = index
    if "e" not in spec:
        return spec, atoms
    left = max(S.ndim_of(array) - sum(s not in ("n", "e") for s in spec), 0)
    k = spec.index("e")
    return spec[:k] + (":",) * left + spec[k + 1:], atoms


def _replace_atom(blocks, old: Var, new) -> None:
    """Every read of ``old`` in ``blocks`` (nested statements included) reads ``new``."""
    def sub(a):
        return new if a is old else a
    for b in blocks:
        for s in walk(b):
            if isinstance(s, Eqn):
                s.ins = [sub(a) for a in s.ins]
                continue
            for name in ("start", "stop", "step", "cond", "exit_flag"):
                if getattr(s, name, None) is not None:
                    setattr(s, name, sub(getattr(s, name)))
            for c in getattr(s, "carries", []) + getattr(s, "merges", []):
                c.init, c.update = sub(c.init), sub(c.update)


def _call_arguments(stmts, library) -> set[str]:
    """Names passed as arguments to a call that may write into them: any call but those
    ``library(func_node)`` knows are NumPy's, math's or builtins (which write into nothing)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and not library(node.func):
                for a in list(node.args) + [k.value for k in node.keywords]:
                    if isinstance(a, ast.Name):
                        out.add(a.id)
    return out


def _subscript_targets(body) -> set[str]:
    out = set()
    for stmt in body:
        for node in ast.walk(stmt):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.add(t.value.id)
                if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name):
                    out.add(t.id)  # `x += 1` writes into x when x is an array
    return out


# ----------------------------------------------------------------------------- builtins


def _b_abs(b, args, kwargs, node):
    (x,) = args
    return S._apply("abs", x) if isinstance(x, Sym) else abs(x)


def _b_minmax(which):
    def f(b, args, kwargs, node):
        if kwargs or len(args) < 2:
            raise UnsupportedError(f"{which}() of one iterable (use np.{which})", b.loc(node))
        result = args[0]
        for a in args[1:]:
            for v in (result, a):
                if isinstance(v, Sym) and v.ndim:
                    raise UnsupportedError(f"builtin {which}() of arrays (use np.{which}imum)",
                                           b.loc(node))
            if isinstance(result, Sym) or isinstance(a, Sym):
                result = S._apply("maximum" if which == "max" else "minimum", result, a)
            else:
                result = max(result, a) if which == "max" else min(result, a)
        return result
    return f


def _b_len(b, args, kwargs, node):
    (x,) = args
    if isinstance(x, Sym):
        if not x.ndim:
            raise UnsupportedError("len() of a scalar", b.loc(node))
        return x.shape[0]
    return len(x)


def _b_cast(kind):
    def f(b, args, kwargs, node):
        (x,) = args
        if isinstance(x, Sym):
            S.scalar_only(kind, x, b.loc(node))
            return S._apply("cast", x, kind={"float": "f", "int": "i", "bool": "b"}[kind])
        return {"float": float, "int": int, "bool": bool}[kind](x)
    return f


def _b_range(b, args, kwargs, node):
    raise UnsupportedError("range() outside a `for` statement", b.loc(node))


def _b_pow(b, args, kwargs, node):
    return args[0] ** args[1]


def _b_sum(b, args, kwargs, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise UnsupportedError("sum() takes a sequence and a start", b.loc(node))
    seq, total = args[0], (args[1] if len(args) == 2 else 0)
    if isinstance(seq, Sym):
        if not seq.ndim:
            raise UnsupportedError("sum() of a scalar", b.loc(node))
        return total + S.np_sum(seq, 0)  # over the first axis, as iterating does
    if isinstance(seq, (tuple, list)):
        for v in seq:
            total = total + v
        return total
    raise UnsupportedError("sum() of this value", b.loc(node))


_BUILTINS = {abs: _b_abs, sum: _b_sum, min: _b_minmax("min"), max: _b_minmax("max"), len: _b_len,
             float: _b_cast("float"), int: _b_cast("int"), bool: _b_cast("bool"),
             range: _b_range, pow: _b_pow}


# ----------------------------------------------------------------------------- build


def build(src: FunctionSource, arg_types: list[Type], assume_sizes: bool = True,
          any_result: bool = False) -> Function:
    """The IR of ``src`` specialised to ``arg_types`` (one per parameter). With
    ``assume_sizes``, axes of arguments that broadcast against each other are assumed to be
    the same size, and the function starts by checking it (`GraphBuilder.assume_same_sizes`).
    With ``any_result``, the result may be an array (`vjp`, `jacobian`)."""
    names = src.node.args.args
    if len(arg_types) != len(names):
        raise JitgradError(f"{src.qualname} takes {len(names)} arguments, got {len(arg_types)}")
    copied: set[str] = set()
    while True:
        namer = Namer(reserved=src.names | {"np", "_rt", "_value", "_saved", "_"})
        gb = GraphBuilder(namer, assume_sizes)
        gb.new_arrays = True
        params, owners, grouped = [], [], []  # a tuple argument: one parameter per item
        for a, t in zip(names, arg_types):
            if isinstance(t, SeqType):
                items = [Var(namer.fresh(f"{a.arg}_{k}"), u) for k, u in enumerate(t.items)]
                params += items
                owners += [f"{a.arg}[{k}]" for k in range(len(items))]
                grouped.append(items)
            else:
                params.append(Var(namer.fresh(a.arg), t))
                owners.append(a.arg)
                grouped.append(params[-1])
        builder = Builder(src, gb, copied=frozenset(copied))
        gb.set_params(params)
        S._CURRENT.append(gb)
        try:
            builder.bind_params([tuple(gb.sym(v) for v in p) if isinstance(p, list)
                                 else gb.sym(p) for p in grouped])
            result = builder.run_body()
            break
        except S.WritesArgument as w:  # written under another name: copy it on entry too
            name = owners[params.index(w.param)]
            if name in copied:
                raise AssertionError(f"argument {name} copied and still written") from None
            copied.add(name)
        except JitgradError as e:
            raise e.with_during(f"building the graph of {src.qualname}")
        finally:
            S._CURRENT.pop()
    if isinstance(result, (tuple, list)) or result is None:
        raise ShapeError(f"{src.qualname} must return a scalar to be differentiated (it "
                         f"returns {'None' if result is None else 'a tuple'})",
                         src.loc(_last_return(src.node)))
    if isinstance(result, Sym) and result.ndim and not any_result:
        raise ShapeError(f"{src.qualname} must return a scalar to be differentiated; it "
                         f"returns an array of rank {result.ndim} (reduce it, e.g. np.sum)",
                         src.loc(_last_return(src.node)))
    atom = gb.atom(result)
    if atom.type.kind != "f":
        gb.loc = src.loc(_last_return(src.node))
        atom = gb.atom(S._apply("cast", gb.sym(atom), kind="f")) if isinstance(atom, Var) \
            else Const(float(atom.value))
    gb.block.stmts[:0] = gb.size_checks()
    fn = Function(src.fn.__name__, params, gb.block, atom, src.loc(src.node), namer)
    fn.written_params = tuple((k, owners[k]) for k, p in enumerate(params)
                              if owners[k] in builder.copied and p.type.ndim)
    verify(fn)
    return fn


def _last_return(node):
    for stmt in reversed(node.body):
        if isinstance(stmt, ast.Return):
            return stmt
    return node
