"""Building branches: ``if`` conditions, the two sides built from the versions known before
them, and the names they change merged after them.

Part of `build.Builder` (a mixin, split from `build_stmts`). Guarantees: each branch is built
from the versions known before it; a name changed on one side is merged (a `Choice`, or an
``If`` output cast to the kinds of both sides), except where it holds another rank or type on
each side of a test on the arguments' sizes alone: then only the side the example call's
sizes take is kept, and the forward pass checks first that a call's sizes take it
(`side_sizes_take`); a read of a name undefined on some path is refused; a side that raised
or returned never reaches the code after the ``if``.
"""

from __future__ import annotations

import ast

import numpy as np

from jitgrad.core.errors import RaisesInPython, ShapeError, UnsupportedError
from jitgrad.core.ir import Block, Carry, Const, If, Var, dims_of
from jitgrad.core.types import Type, promote_kinds
from jitgrad.frontend import implied
from jitgrad.frontend.build_ast import (
    NO_RETURN,
    RAISED,
    RETURNED,
    Choice,
    DefinedWhen,
    MaybeDefined,
    Undefined,
    UnrollLoop,
    base,
    is_atom_value,
    same_constant,
    same_structure,
)
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.object_carries import merged_object
from jitgrad.lang import complex_pairs, numpy_written, scipy_sparse, symbolic
from jitgrad.lang.symbolic import Sym


class Branches:
    """`build.Builder`'s branches (see the module)."""

    def condition(self, node):
        cond = self.expr_BoolOp(node, test=True) if isinstance(node, ast.BoolOp) \
            else self.expr(node)
        return self.truth(cond, node)

    def truth(self, cond, node):
        if isinstance(cond, Sym):
            size = self.example_size(cond) if cond.ndim else 1
            if size is not None and size != 1:  # (else checked at run time, below)
                raise UnsupportedError(
                    f"the truth value of an array is ambiguous (this one has {size} entries "
                    "in this call; NumPy takes that of an array of one entry only): use "
                    ".any(), np.where, or index an element", self.loc(node))
            if cond.ndim:  # of one entry, as NumPy takes it (checked at run time)
                cond = self.inline(numpy_written.truth_of_one_entry, [cond], {}, node)
            if cond.type.kind != "b":
                cond = cond != 0
            known = self.implied_by_caller(cond)
            return cond if known is None else known
        if isinstance(cond, (bool, int, float, np.number, np.bool_)) or cond is None:
            return bool(cond)
        if isinstance(cond, str):  # a switch known while building (`if window:`): Python's
            return bool(cond)
        if isinstance(cond, (tuple, list, dict, set, frozenset)):  # `if not series:`, POT's
            return len(cond) > 0  # `if log:`: a length known while building (a list grown at
            # run time is an array)
        raise UnsupportedError(f"a condition of type {type(cond).__name__}", self.loc(node))

    def example_size(self, array) -> int | None:
        """The number of entries of ``array`` as the sizes known while building (literals,
        the example call's sizes of the arguments' axes) give it, else None."""
        size = 1
        for token in dims_of(self.gb.atom(array, check=False)):
            token = self.gb.size_class(token)
            n = token if isinstance(token, int) else self.gb.example_sizes.get(token)
            if n is None:
                return None
            size *= n
        return size

    def implied_by_caller(self, cond):
        """In a function called by itself, a test the conditions of the branches it is called
        under decide (`implied`): True or False; else None."""
        chain, b = [], self.caller
        while b is not None:
            chain.append(b)
            b = b.caller
        if not any(b.src.fn is self.src.fn and b.src.node is self.src.node for b in chain):
            return None
        facts = [f for b in (self, *chain) for f in b.__dict__.get("branch_conds", ())]
        if not facts:
            return None
        return implied.decide(self.gb.scalar_defs, self.gb.atom(cond, check=False), facts)

    def in_block(self, fn, env):
        """Build ``fn`` in a block of its own (a branch, a loop's body), from ``env``: returns
        the block and the environment at its end. What Python raises on every path through
        the block, met while building it (`RaisesInPython`), counts the blocks it came
        through (``nested``: a try's body is one, `Handlers.decided_try`)."""
        saved_block, saved_env = self.gb.block, self.env
        conds = self.__dict__.setdefault("branch_conds", [])
        known = len(conds)
        self.gb.block, self.env = Block(), dict(env)
        try:
            fn()
            return self.gb.block, self.env
        except RaisesInPython as e:
            e.nested += 1
            raise
        finally:
            self.gb.block, self.env = saved_block, saved_env
            del conds[known:]  # what held past an `if` inside the block, no longer

    def build_if(self, cond, then_fn, else_fn, node) -> None:
        if isinstance(cond, Sym) and cond.ndim == 0:
            self.gb.loc = self.src.loc(node)  # (the check's line: the `if`'s)
            flag = self.gb.decide_flag(self.gb.atom(cond, check=False))
            cond = cond if flag is None else flag  # on a bool argument: its value's code
        if not isinstance(cond, Sym):
            (then_fn if cond else else_fn)()
            return
        loc = self.src.loc(node)
        before = self.env
        writes = dict(self.gb.writes)  # each branch sees the writes made before the `if` only
        latest = dict(self.gb.latest)  # and the versions known before it
        conds = self.__dict__.setdefault("branch_conds", [])
        with self.draws.run_time("a branch on a value known only at run time (a `continue`, "
                                 "`break` or `return` before it makes one too)", loc):
            conds.append((self.gb.atom(cond), True))
            attributes = self.attribute_state()  # the objects' attributes before the `if`
            try:
                then_block, env_t = self.in_block(then_fn, before)
            finally:
                conds.pop()
            set_then = self.changed_attributes(attributes)
            self.restore_attributes(attributes)  # the other side sees them as before the if
            self.stale_at_merge = self.stale_values(env_t)  # each side as its branch ends
            writes_then, self.gb.writes = self.gb.writes, dict(writes)
            latest_then, self.gb.latest = self.gb.latest, dict(latest)
            conds.append((self.gb.atom(cond), False))
            try:
                else_block, env_e = self.in_block(else_fn, before)
            finally:
                conds.pop()
            set_else = self.changed_attributes(attributes)
            self.restore_attributes(attributes)
        side = None if set_then or set_else else self.side_sizes_take(cond, env_t, env_e, loc)
        if side is not None:  # the side the example call's sizes take, alone
            block, self.env = (then_block, env_t) if side else (else_block, env_e)
            self.gb.block.stmts += block.stmts
            if side:
                self.gb.latest, self.gb.writes = latest_then, writes_then
            return
        self.stale_at_merge |= self.stale_values(env_e)
        attribute_names = self.merge_attributes(attributes, env_t, set_then, env_e, set_else)
        latest_else, self.gb.latest = self.gb.latest, latest
        for k, n in writes_then.items():  # after it, a write on either side counts
            self.gb.writes[k] = max(n, self.gb.writes.get(k, 0))
        ended_t, ended_e = (e.get(RETURNED) is True or bool(e.get(RAISED))
                            for e in (env_t, env_e))
        env_t, env_e = _past_a_return(*_past_a_raise(env_t, env_e))
        merges: list[Carry] = []
        env = {}
        pending = []
        for name in dict.fromkeys(list(env_t) + list(env_e)):
            vt = env_t.get(name, Undefined(f"`{name}` is assigned in only one branch"))
            ve = env_e.get(name, Undefined(f"`{name}` is assigned in only one branch"))
            merged = self.merge(name, vt, ve, then_block, else_block, loc, cond)
            if isinstance(merged, Undefined):
                merged = self.one_sided(name, merged, vt, ve, cond,
                                        (then_block, else_block, loc), pending)
                merged = self.maybe_defined(merged, vt, ve, (then_block, else_block, loc),
                                            pending)
            env[name] = self.merged_value(merged, merges)
        self.gb.loc = loc
        stmt = If(self.gb.atom(cond), then_block, else_block, merges, loc)
        for when in pending:
            when.stmt = stmt
        self.gb.block.stmts.append(stmt)
        self.gb.merge_versions(latest_then, latest_else, merges)
        for name, (obj, attr) in attribute_names.items():  # the merged attributes, set
            value = env.pop(name)
            if isinstance(value, Undefined) and "non-numeric" in value.why:
                kinds = [type(v).__name__ if not isinstance(v, Sym) else
                         "array" if v.ndim else "number" for v in (env_t[name], env_e[name])]
                value = Undefined(
                    f"the attribute .{attr} is a {kinds[0]} on one side of an `if` on a value "
                    f"known only at run time and a {kinds[1]} on the other: after the `if` it "
                    "holds one type (as a name does, and as in Numba); give it a value of one "
                    "type on both sides")
            setattr(obj, attr, value)
        self.env = env
        if ended_t != ended_e:  # the rest of this block runs only on the side that goes on
            conds.append((self.gb.atom(cond), ended_e))  # (until the block ends: `in_block`)

    def side_sizes_take(self, cond, env_t, env_e, loc) -> bool | None:
        """The side of an ``if`` on the arguments' sizes alone (``len(w) == n + 1``,
        ``x.shape[0] == 1``) that the example call takes, where a name holds values of
        another rank or type on each side (which no one variable holds after the ``if``):
        the code after it is built for that side only, and the forward pass checks first
        thing that a call's sizes take it (`SizeAssumptions.decide`; other sizes get code of
        their own). None where the sides merge, or the test is not decided so."""
        if any(e.get(k) is not None and e.get(k) is not False
               for e in (env_t, env_e) for k in (RETURNED, RAISED)):
            return None  # (a side that may have returned or raised: merged as it is)
        if not any(self.types_differ(env_t[k], env_e[k]) for k in env_t
                   if k in env_e and env_t[k] is not env_e[k]):
            return None
        self.gb.loc = loc  # (the check's line: the `if`'s)
        return self.gb.decide(self.gb.atom(cond, check=False))

    def types_differ(self, vt, ve) -> bool:
        """Whether values on the two sides of an ``if`` differ in rank, or are a number or
        an array on one side and something else (None, a tuple) on the other."""
        if isinstance(vt, Undefined) or isinstance(ve, Undefined) or \
                complex_pairs.is_complex(vt) or complex_pairs.is_complex(ve):
            return False
        numeric_t, numeric_e = is_atom_value(vt), is_atom_value(ve)
        if numeric_t and numeric_e:
            return self.gb.atom(vt, check=False).type.ndim != \
                self.gb.atom(ve, check=False).type.ndim
        if isinstance(vt, tuple) and isinstance(ve, tuple):
            return len(vt) != len(ve) or any(map(self.types_differ, vt, ve))
        return numeric_t != numeric_e and (vt is None or ve is None or any(
            isinstance(v, tuple) for v in (vt, ve)))

    def rows_as_arrays(self, name, value, other):
        """``value``, a list of numbers, as a constant array where ``name`` holds rows of a
        table read at run time (``row = T[i]`` on one side, ``row = T[-1]`` on the other),
        ``other`` a vector (of any length: a list and a vector agree in len and indexing)."""
        if not (isinstance(other, Sym) and base(name) in self.table_rows
                and isinstance(value, (tuple, list))
                and other.ndim == 1 and value and all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            return value
        return self.gb.sym(self.gb.constant_array(np.array(value, dtype=np.float64), "row"))

    def one_sided(self, name, undefined, vt, ve, cond, blocks, pending):
        """A number with a value on one side of the ``if`` only (the other leaves it
        undefined, whatever it was before): undefined after the ``if``, except where the same
        condition is tested again and takes the same side (`defined_when`)."""
        if isinstance(vt, Undefined) == isinstance(ve, Undefined):
            return undefined
        side = not isinstance(vt, Undefined)
        value = vt if side else ve
        if not (isinstance(value, Sym) and value.ndim == 0) or self.gb.atom(value).type.kind \
                not in "fib":
            return undefined
        when = DefinedWhen(self.gb.atom(cond), side, value, blocks, self.loops_here())
        pending.append(when)
        return Undefined(undefined.why, when=when)

    def maybe_defined(self, undefined, vt, ve, blocks, pending):
        """``undefined``, noting (`MaybeDefined`) the values of the sides that assign a number
        or an array, where one side does not (and no loop's seed is involved)."""
        sides = []
        for v in (vt, ve):
            if isinstance(v, Undefined):
                if v.seed is not None:
                    return undefined
                sides.append(v.maybe)  # (None: not assigned on that side)
            elif is_atom_value(v) and not isinstance(v, bool):
                sides.append(v)
            else:
                return undefined
        if all(s is None for s in sides):
            return undefined
        maybe = MaybeDefined(tuple(sides), blocks, self.loops_here())
        pending.append(maybe)
        made = Undefined(undefined.why, undefined.seed, undefined.when)
        made.like, made.maybe = undefined.like, maybe
        return made

    def materialise(self, name, maybe):
        """The value of a `MaybeDefined` after its ``if``, and whether it was assigned (a bool
        of the graph): merged into the ``if`` now (with those of the ``if``s inside it), a
        placeholder where it is not assigned."""
        if maybe.merged is None:
            then_block, else_block, loc = maybe.blocks
            parts = [s.merged if isinstance(s, MaybeDefined) and s.merged else
                     self.materialise(name, s) if isinstance(s, MaybeDefined) else
                     (None, False) if s is None else (s, True) for s in maybe.sides]
            like = next(v for v, _ in parts if v is not None)
            values = [self.placeholder(like, block) if v is None else v
                      for (v, _), block in zip(parts, (then_block, else_block))]
            value = self.merge(name, *values, then_block, else_block, loc)
            flag = self.merge(f"{base(name)}_assigned", parts[0][1], parts[1][1], then_block,
                              else_block, loc)
            for m in (value, flag):
                if isinstance(m, Carry):
                    maybe.stmt.merges.append(m)
            maybe.merged = tuple(self.gb.sym(m.var) if isinstance(m, Carry) else m
                                 for m in (value, flag))
        return maybe.merged

    def loops_here(self) -> tuple:
        """The loop statements being built around this point, outermost first."""
        return tuple(map(id, self.loops_building))

    def defined_when(self, name, undefined):
        """The value of a number assigned in one branch of an earlier ``if``, read inside a
        branch of an ``if`` on the same condition that takes the same side (None elsewhere):
        merged into the earlier ``if`` now, with zero on its other side (never read there:
        every read is under the condition)."""
        when = undefined.when
        if when is None or when.stmt is None or (when.cond, when.side) not in getattr(
                self, "branch_conds", ()) or self.loops_here()[:len(when.loops)] != when.loops:
            return None  # (read outside a loop it was assigned in: refused)
        if when.merged is None:
            then_block, else_block, loc = when.blocks
            zero = {"f": 0.0, "i": 0, "b": False}[self.gb.atom(when.value).type.kind]
            vt, ve = (when.value, zero) if when.side else (zero, when.value)
            merged = self.merge(name, vt, ve, then_block, else_block, loc)
            when.stmt.merges.append(merged)
            when.merged = self.gb.sym(merged.var)
        return when.merged

    def merged_value(self, merged, merges):
        """A merge's value after the `if`: its carries (also inside a tuple) become variables."""
        if isinstance(merged, Carry):
            merges.append(merged)
            return self.gb.sym(merged.var)
        if isinstance(merged, tuple):
            return _like(merged, [self.merged_value(m, merges) for m in merged])
        if isinstance(merged, complex_pairs.Complex):
            return complex_pairs.pair(self.merged_value(merged.re, merges),
                                      self.merged_value(merged.im, merges))
        if isinstance(merged, scipy_sparse.Sparse):
            return scipy_sparse.Sparse(self.merged_value(merged.dense, merges), merged.matrix)
        if is_user_object(merged) and any(isinstance(v, Carry) for v in vars(merged).values()):
            for attr, v in vars(merged).items():  # (made by `merged_object`: its own)
                setattr(merged, attr, self.merged_value(v, merges))
        return merged

    def placeholder(self, like, block):
        """A value of ``like``'s structure and types made in ``block``, for the side of a branch
        that has not returned (it is never read): zeros, and empty arrays."""
        if isinstance(like, tuple):
            return _like(like, [self.placeholder(v, block) for v in like])
        if not is_atom_value(like):
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

    def merge(self, name, vt, ve, then_block, else_block, loc, cond=None):
        if vt is ve:
            return vt
        if vt is NO_RETURN:
            vt = self.placeholder(ve, then_block)
        elif ve is NO_RETURN:
            ve = self.placeholder(vt, else_block)
        if (isinstance(vt, tuple) and isinstance(ve, tuple) and len(vt) == len(ve)
                and not same_structure(vt, ve)):  # a tuple returned on both sides
            return _like(vt, [self.merge(f"{name}_{k}", a, b, then_block, else_block, loc, cond)
                              for k, (a, b) in enumerate(zip(vt, ve))])
        if isinstance(vt, Undefined) or isinstance(ve, Undefined):
            undefined, other = (vt, ve) if isinstance(vt, Undefined) else (ve, vt)
            if isinstance(other, Undefined) or (isinstance(other, Sym) and other.ndim):
                return undefined.holding(other)
            return undefined
        if isinstance(vt, scipy_sparse.Sparse) or isinstance(ve, scipy_sparse.Sparse):
            if not (isinstance(vt, scipy_sparse.Sparse) and isinstance(ve, scipy_sparse.Sparse)
                    and vt.matrix == ve.matrix):
                return Undefined(f"`{name}` is a scipy.sparse matrix on one branch only (or a "
                                 "sparse matrix on one, a sparse array on the other)")
            return scipy_sparse.Sparse(self.merge(f"{name}_dense", vt.dense, ve.dense,
                                                  then_block, else_block, loc, cond), vt.matrix)
        if complex_pairs.is_complex(vt) or complex_pairs.is_complex(ve):  # part by part
            if not all(complex_pairs.is_complex(v) or is_atom_value(v) for v in (vt, ve)):
                return Undefined(f"`{name}` is a complex number on one branch only")
            zt, ze = complex_pairs.lift(vt), complex_pairs.lift(ve)
            return complex_pairs.Complex(
                self.merge(f"{name}_re", zt.re, ze.re, then_block, else_block, loc, cond),
                self.merge(f"{name}_im", zt.im, ze.im, then_block, else_block, loc, cond))
        if same_constant(vt, ve):
            return vt
        merged = merged_object(lambda n, a, b: self.merge(n, a, b, then_block, else_block, loc,
                                                          cond), name, vt, ve)
        if merged is not None:  # an object of the user's on both sides: by its attributes
            return merged
        vt, ve = self.rows_as_arrays(name, vt, ve), self.rows_as_arrays(name, ve, vt)
        if not (is_atom_value(vt) and is_atom_value(ve)):
            if same_structure(vt, ve):
                return vt
            if cond is not None and all(callable(v) and not isinstance(v, Sym) for v in (vt, ve)):
                return Choice(cond, vt, ve)  # f = np.sin if x > 0 else np.cos
            if self.in_loop and self.loops_building and \
                    self.loop_key(self.loops_building[-1]) in self.unrollable:
                # a loop of a few iterations known while building (MetPy's `tuple(indexer if
                # axis == i else slice(None) for i in range(ndim))`): unrolled, each copy's
                # condition known then
                raise UnrollLoop(self.loop_key(self.loops_building[-1]))
            return Undefined(f"`{name}` holds different non-numeric values on the two branches")
        tt, te = self.gb.atom(vt, check=False).type, self.gb.atom(ve, check=False).type
        if tt.ndim != te.ndim:
            promoted = self.number_as_array(name, vt, ve, then_block, else_block, loc)
            if promoted is None:
                raise ShapeError(
                    f"`{base(name)}` is a {tt} on one branch and a {te} on the other: after "
                    "an `if` on a value known only at run time a name holds one type (as in "
                    "Numba); jitgrad takes a number on one side and an array of one entry on "
                    "the other (`keepdims=True`) where no read asks its shape, else give it "
                    "the same rank on both sides (`np.full(x.shape, 0.0)` for the number "
                    "0)", loc)
            vt, ve = promoted
            tt, te = self.gb.atom(vt, check=False).type, self.gb.atom(ve, check=False).type
        kind = promote_kinds(tt.kind, te.kind)
        at = self.cast_in(then_block, vt, kind)
        ae = self.cast_in(else_block, ve, kind)
        var = self.gb.new_var(Type(kind, tt.ndim), base(name))
        for a in (at, ae):  # the merged array is one of the two: it may alias either
            if var.type.ndim and isinstance(a, Var):
                self.gb.share_memory(var, a)
                self.gb.same_view(var, a)
        self.gb.restamp(var)
        if any(isinstance(a, Var) and a in self.stale_at_merge for a in (at, ae)):
            self.gb.mark_stale(var)  # an out-of-date array stays out of date when merged
        return Carry(var, at, ae)

    def stale_values(self, env) -> set[Var]:
        return {v.atom for v in env.values() if isinstance(v, Sym)
                and isinstance(v.atom, Var) and self.gb.is_stale(v.atom)}

    def number_as_array(self, name, vt, ve, then_block, else_block, loc):
        """A number on one side of a run-time ``if`` and an array of one entry on the other
        (statsmodels' ``center``: ``np.apply_over_axes(np.median, a, 0)`` or ``0.0``): the
        number as an array of that shape (made on its side), where no read of the name after
        the ``if`` (at ``loc``) asks its shape or indexes it (`_reads_shape`): every other read (arithmetic,
        NumPy's functions) broadcasts an array of one entry as it does the number, to the
        same values. The two values, or None where this does not hold."""
        at, ae = self.gb.atom(vt, check=False), self.gb.atom(ve, check=False)
        if (at.type.ndim == 0) == (ae.type.ndim == 0):
            return None
        number_then = at.type.ndim == 0
        array = ae if number_then else at
        dims = dims_of(array) if isinstance(array, Var) else None
        if_node = next((n for n in ast.walk(self.src.node) if isinstance(n, (ast.If, ast.IfExp))
                        and (self.loc(n).lineno, self.loc(n).col) == (loc.lineno, loc.col)),
                       None)
        if not dims or not all(type(d) is int and d == 1 for d in dims) or if_node is None \
                or _reads_shape(self.src.node, base(name), if_node):
            return None
        saved, self.gb.block = self.gb.block, then_block if number_then else else_block
        try:
            filled = symbolic.NUMPY[np.full]((1,) * len(dims), vt if number_then else ve)
        finally:
            self.gb.block = saved
        return (filled, ve) if number_then else (vt, filled)

    def cast_in(self, block, value, kind):
        atom = self.gb.atom(value, check=False)
        if atom.type.kind == kind:
            return atom
        if isinstance(atom, Const):
            return Const({"f": float, "i": int, "b": bool}[kind](atom.value))
        saved = self.gb.block
        self.gb.block = block
        try:
            return self.gb.atom(symbolic.record("cast", self.gb.sym(atom), kind=kind))
        finally:
            self.gb.block = saved


def _reads_shape(fn_node, name, if_node) -> bool:
    """Whether a read of ``name`` after ``if_node`` in ``fn_node`` (or anywhere in a loop
    around it) may tell a number from an array of one entry: any read but an operand of
    arithmetic or a comparison, or an argument of NumPy's or math's functions other than those
    that read a shape (`_SHAPE_READERS`): an attribute (``.shape``), an index, ``len``, a
    return, another name bound to it, a function of the user's."""
    parents = {id(c): p for p in ast.walk(fn_node) for c in ast.iter_child_nodes(p)}
    loops, up = [], parents.get(id(if_node))
    while up is not None:
        if isinstance(up, (ast.For, ast.While)):
            loops.append(up)
        up = parents.get(id(up))
    again = {id(n) for loop in loops for n in ast.walk(loop)}
    end = (if_node.end_lineno, if_node.end_col_offset)
    for node in ast.walk(fn_node):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx,
                                                                               ast.Load)):
            continue
        if id(node) not in again and (node.lineno, node.col_offset) < end:
            continue  # (read before the `if` ends)
        parent = parents.get(id(node))
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            continue
        if isinstance(parent, ast.Call) and node in parent.args:
            f = parent.func
            module = f.value.id if isinstance(f, ast.Attribute) and isinstance(
                f.value, ast.Name) else None
            if module in _ARRAY_MODULES and f.attr not in _SHAPE_READERS:
                continue
        return True
    return False


# functions that read a value's shape or kind; modules whose functions broadcast their inputs
_SHAPE_READERS = {"shape", "ndim", "size", "atleast_1d", "atleast_2d", "squeeze", "ravel",
                  "reshape", "concatenate", "stack", "hstack", "vstack", "append", "outer",
                  "dot", "matmul", "diag", "asarray", "array", "copy", "transpose"}
_ARRAY_MODULES = {"np", "numpy", "math"}


def _like(tup: tuple, items: list) -> tuple:
    """``items`` as a tuple of ``tup``'s type: a namedtuple stays one (``results.root``)."""
    return type(tup)(*items) if hasattr(type(tup), "_fields") else tuple(items)


def _past_a_raise(env_t: dict, env_e: dict) -> tuple[dict, dict]:
    """The two branches' names as the code after the ``if`` sees them: a branch that raised
    never gets there, so the other's values stand (a placeholder on the raising side, never
    read); when both raised, so does the code after the ``if``."""
    raised_t, raised_e = env_t.get(RAISED), env_e.get(RAISED)
    if raised_t and raised_e or not (raised_t or raised_e):
        return env_t, env_e
    live, dead = (env_e, env_t) if raised_t else (env_t, env_e)
    # a value holding a Sym made on the live side gets a placeholder on the other; anything
    # else (flags, constants, functions) is taken as the live side's: no merge is made for it
    past = {k: NO_RETURN if _holds_sym(v) and dead.get(k) is not v else v
            for k, v in live.items()}
    return (past, live) if raised_t else (live, past)


def _past_a_return(env_t: dict, env_e: dict) -> tuple[dict, dict]:
    """A branch that returned on every path (``elif e < 0.7: return np.nan``) never reaches
    the code after the ``if``: a name the other branch assigns and it does not is that
    branch's value there (a placeholder on the returning side, never read), not a name
    "assigned in only one branch"."""
    ret_t, ret_e = env_t.get(RETURNED) is True, env_e.get(RETURNED) is True
    if ret_t == ret_e:
        return env_t, env_e
    live, dead = (env_e, dict(env_t)) if ret_t else (env_t, dict(env_e))
    for k, v in live.items():
        if k not in dead:
            dead[k] = NO_RETURN if _holds_sym(v) else v
    return (dead, live) if ret_t else (live, dead)


def _holds_sym(v) -> bool:
    if isinstance(v, (tuple, list)):
        return any(_holds_sym(u) for u in v)
    if isinstance(v, dict):
        return any(_holds_sym(u) for u in v.values())
    return isinstance(v, Sym)


# Array methods and NumPy functions that write into an array: never skipped inside print(...).
