"""Loop headers rewritten as loops over ``range``: ``enumerate``, ``zip`` (of arrays, and of
``range``), ``reversed``, ``numba.prange``, ``np.ndindex`` and ``itertools.product`` of
``range``s.

Part of `build.Builder` (a mixin, under `build_loops.Loops`). Takes a ``for`` statement;
returns one whose iterator is ``range(...)`` and whose body starts by assigning the user's
target from the sequences (evaluated once, before the loop, into hidden names), or the
statement unchanged (a ``range`` loop, or a loop over tuples known while building, which
`Loops.build_unrolled` unrolls). Guarantees: the user's target sees, in each iteration, the
item Python's iterator would give.

A loop that reassigns a name holding a complex number (`complex_pairs`) carries its two real
parts instead (`complex_carries`): a loop carries real values only.
"""

from __future__ import annotations

import ast
import copy
import itertools

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.build_ast import BuildIterator, Undefined, assigned_names, is_prange
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.desugar import int_literal
from jitgrad.lang import complex_pairs, symbolic
from jitgrad.lang.symbolic import Sym


class LoopHeaders:
    """Methods mixed into `build.Builder` through `build_loops.Loops`."""

    def complex_carries(self, stmt) -> bool:
        """A ``for`` or ``while`` that reassigns ``z``, a complex number, built as the loop
        over its parts: ``z_re, z_im = z.real, z.imag`` before it; in it, ``z = complex(z_re,
        z_im)`` first, the parts taken again at the end of the body and before each
        ``continue`` and ``break`` of this loop (its test and iterator read ``complex(z_re,
        z_im)``); ``z = complex(z_re, z_im)`` after it. Returns whether it did (False: the
        loop carries no complex number, or is that rewritten loop)."""
        if getattr(stmt, "jitgrad_complex_parts", False):
            return False
        names = sorted(n for n in assigned_names(stmt.body)
                       if complex_pairs.is_complex(self.env.get(n)))
        if not names:
            return False
        tag = f"@{self.gb.new_tag()}"
        self.env["%complex" + tag] = complex
        parts = {n: (f"%{n.lstrip('%')}_re{tag}", f"%{n.lstrip('%')}_im{tag}")
                 for n in names}  # (a part of an object carried by a loop: `object_carries`)

        def load(name):
            return ast.Name(id=name, ctx=ast.Load())

        def joined(n):
            return ast.Call(func=load("%complex" + tag), args=[load(p) for p in parts[n]],
                            keywords=[])

        def split(n):
            targets = ast.Tuple(elts=[ast.Name(id=p, ctx=ast.Store()) for p in parts[n]],
                                ctx=ast.Store())
            value = ast.Tuple(elts=[ast.Attribute(value=load(n), attr=a, ctx=ast.Load())
                                    for a in ("real", "imag")], ctx=ast.Load())
            return ast.Assign(targets=[targets], value=value)

        loop = self.with_parts(stmt, names, split, joined)
        loop.jitgrad_complex_parts = True
        before = [ast.fix_missing_locations(ast.copy_location(split(n), stmt)) for n in names]
        after = [ast.fix_missing_locations(ast.copy_location(_assign(n, joined(n)), stmt))
                 for n in names]
        for s in before:
            self.build_stmt(s)
        for n in names:  # within the loop, z is made from its parts
            self.env[n] = Undefined(f"`{n}` is a complex number carried by the loop")
        self.build_stmt(loop)
        for s in after:
            self.build_stmt(s)
        return True

    @staticmethod
    def with_parts(stmt, names, split, joined):
        """The loop ``stmt`` carrying each of ``names`` as parts: its body begins by making
        the name from them (``n = joined(n)``, an expression), and takes them again
        (``split(n)``, a statement) at its end and before each ``continue`` and ``break`` of
        this loop; its test or iterator reads the name made from its parts."""

        class Reads(ast.NodeTransformer):  # n read in the test or iterator: its parts joined
            def visit_Name(self, node):
                if node.id in names and isinstance(node.ctx, ast.Load):
                    return joined(node.id)
                return node

        def splits_before_jumps(stmts):
            out = []
            for s in stmts:
                if isinstance(s, (ast.Continue, ast.Break)):
                    out += [split(n) for n in names]
                elif isinstance(s, (ast.If, ast.With, ast.Try)):
                    s = copy.copy(s)
                    for field in ("body", "orelse", "finalbody"):
                        if hasattr(s, field):
                            setattr(s, field, splits_before_jumps(getattr(s, field)))
                    if isinstance(s, ast.Try):
                        s.handlers = [copy.copy(h) for h in s.handlers]
                        for h in s.handlers:
                            h.body = splits_before_jumps(h.body)
                out.append(s)
            return out

        loop = copy.copy(stmt)
        loop.body = ([_assign(n, joined(n)) for n in names] + splits_before_jumps(stmt.body)
                     + [split(n) for n in names])
        if isinstance(loop, ast.While):
            loop.test = Reads().visit(copy.deepcopy(stmt.test))
        else:
            loop.iter = Reads().visit(copy.deepcopy(stmt.iter))
        return ast.fix_missing_locations(ast.copy_location(loop, stmt))

    def as_range_loop(self, stmt):
        """``for`` over ``enumerate``, ``zip``, ``reversed`` and ``numba.prange``, rewritten as a
        loop over ``range`` whose body starts by assigning the target from the sequences:
        ``for i, (a, b) in enumerate(zip(x, y))`` runs as ``for k in range(n): i, (a, b) =
        k, (x[k], y[k])``. The sequences are evaluated once, before the loop."""
        it = stmt.iter
        if not isinstance(it, ast.Call):
            return stmt
        fn = self.expr(it.func)
        tag = f"@{self.gb.new_tag()}"

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

        if is_prange(fn):  # numba.prange is range here; the loop is marked (`parallel.py`)
            node = new_loop(call("range", *it.args), stmt.target, [])
            node.jitgrad_prange = True
            return node
        if fn is reversed and len(it.args) == 1 and isinstance(it.args[0], ast.Call) and (
                self.expr(it.args[0].func) in (range,) or is_prange(self.expr(it.args[0].func))):
            inner = it.args[0]
            bounds = [self.expr(a) for a in inner.args]
            start, stop, step = {1: [0, *bounds, 1], 2: [*bounds, 1], 3: bounds}.get(
                len(bounds), [None] * 3)
            if not isinstance(step, int) or isinstance(step, bool) or step == 0:
                raise UnsupportedError("reversed(range(...)) needs a constant, nonzero integer "
                                       "step", self.loc(inner))
            count = (stop - start + step - (1 if step > 0 else -1)) // step
            count = symbolic.record("maximum", count, 0) if isinstance(count, Sym) else max(count, 0)
            last = start + (count - 1) * step
            return new_loop(call("range", hidden("rlast", last), hidden("rend", start - step),
                                 ast.Constant(-step)), stmt.target, [])
        if fn is np.ndindex:
            return self.ndindex_loop(stmt, it, hidden, new_loop, call)
        if fn in (np.ndenumerate, np.nditer):
            return self.entries_loop(fn, stmt, it, hidden, new_loop, call)
        if fn is itertools.product and it.args and not it.keywords and all(
                isinstance(a, ast.Call) and self.expr(a.func) is range and len(a.args) == 1
                and not a.keywords for a in it.args):
            # itertools.product(range(n), range(m)): np.ndindex(n, m), row-major as product
            sizes = ast.copy_location(ast.Call(func=it.func, args=[a.args[0] for a in it.args],
                                               keywords=[]), it)
            return self.ndindex_loop(stmt, sizes, hidden, new_loop, call)
        if fn not in (enumerate, zip, reversed) or self.python_sequences(it):
            return stmt  # (of tuples known while building: unrolled, as a tuple is)
        length, item = self.loop_items(it, hidden)
        k = ast.Name(id=f"%k{tag}", ctx=ast.Store())
        prologue = [ast.Assign(targets=[stmt.target], value=item(ast.Name(id=k.id,
                                                                          ctx=ast.Load())))]
        return new_loop(call("range", hidden("n", length)), k, prologue)

    def entries_loop(self, fn, stmt, it, hidden, new_loop, call):
        """``for idx, v in np.ndenumerate(x)`` and ``for v in np.nditer(x)`` (one array, read):
        the loop of ``np.ndindex(x.shape)``, whose body starts with ``idx, v = idx, x[idx]``
        (``v`` an entry, a number; NumPy's nditer gives a 0-d array, whose ``.item()`` and
        arithmetic are the number's)."""
        what = "np.ndenumerate" if fn is np.ndenumerate else "np.nditer"
        if len(it.args) != 1 or it.keywords or isinstance(it.args[0], ast.Starred):
            raise UnsupportedError(f"{what} of one array, read only (no flags, op_flags or "
                                   "several operands): for writes, loop over np.ndindex(x.shape) "
                                   "and write x[idx]", self.loc(it))
        x = self.expr(it.args[0])
        if not (isinstance(x, Sym) and x.ndim):
            raise UnsupportedError(f"{what} of an array", self.loc(it))
        array = hidden("array", x)
        idx = f"%idx@{self.gb.new_tag()}"
        entry = ast.Subscript(value=array, slice=ast.Name(id=idx, ctx=ast.Load()),
                              ctx=ast.Load())
        item = ast.Tuple(elts=[ast.Name(id=idx, ctx=ast.Load()), entry], ctx=ast.Load()) \
            if fn is np.ndenumerate else entry
        shape = ast.copy_location(ast.Call(func=it.func, args=[hidden("shape", x.shape)],
                                           keywords=[]), it)
        return self.ndindex_loop(stmt, shape, hidden, new_loop, call,
                                 ast.Name(id=idx, ctx=ast.Store()),
                                 [ast.Assign(targets=[stmt.target], value=item)])

    def ndindex_loop(self, stmt, it, hidden, new_loop, call, target=None, then=()):
        """``for idx in np.ndindex(shape)`` as one loop over the flat position ``k``, whose body
        starts with ``idx = (k // stride0 % n0, k // stride1 % n1, ...)`` (row-major, as
        NumPy's order; ``target`` instead of the loop's own, then the statements ``then``);
        ``break`` and ``continue`` keep their meaning."""
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
        k = ast.Name(id=f"%k@{self.gb.new_tag()}", ctx=ast.Store())
        parts = []
        for d, s in zip(dims, strides):
            part = ast.BinOp(left=ast.Name(id=k.id, ctx=ast.Load()), op=ast.FloorDiv(),
                             right=hidden("stride", s))
            parts.append(ast.BinOp(left=part, op=ast.Mod(), right=hidden("dim", d)))
        prologue = [ast.Assign(targets=[target or stmt.target], value=ast.Tuple(
            elts=parts, ctx=ast.Load()))] + list(then)
        return new_loop(call("range", hidden("n", total)), k, prologue)

    def python_sequences(self, node) -> bool:
        """Whether ``zip``/``enumerate``/``reversed`` call ``node`` runs over tuples or lists
        known while building only (names bound to them, attributes of the user's objects
        holding them, or written out), read without building anything."""
        seqs = node.args[:1] if isinstance(node.func, ast.Name) and node.func.id in (
            "enumerate", "reversed") else node.args
        # sorted(d) of a dict: its keys (a dict argument's other orders are not the caller's)
        known = (tuple, list, dict, str) if isinstance(node.func, ast.Name) and \
            node.func.id == "sorted" else (tuple, list, str)  # (a string's characters)
        beside = isinstance(node.func, ast.Name) and node.func.id == "zip" and any(
            isinstance(a, (ast.Tuple, ast.List)) or isinstance(self.held_attribute(a), known)
            or isinstance(a, ast.Name) and a.id not in self.env
            and isinstance(self.src.fn.__globals__.get(a.id), known)
            for a in seqs)  # zip(NAMES, x): x's rows (`_rows_decided`) beside known names
        for a in seqs:
            if beside and isinstance(a, ast.Name) and isinstance(self.env.get(a.id), Sym) \
                    and self.env[a.id].ndim:
                continue
            if isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id in (
                    "zip", "enumerate", "reversed", "list", "tuple", "sorted") and (
                    a.func.id not in self.env):
                if not self.python_sequences(a):
                    return False
            elif isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and \
                    a.func.attr in ("keys", "values", "items") and not a.args and \
                    isinstance(a.func.value, ast.Name) and \
                    isinstance(self.env.get(a.func.value.id), dict):
                continue  # a dict's keys, values or items (`build_builtins`: their tuple)
            elif not (isinstance(a, (ast.Tuple, ast.List)) or (
                    isinstance(a, ast.Name) and isinstance(self.env.get(
                        a.id, self.src.fn.__globals__.get(a.id)), known)) or isinstance(
                    self.held_attribute(a), known) or (
                    isinstance(a, ast.Name) and isinstance(self.env.get(a.id), BuildIterator)
                    and isinstance(self.env[a.id].seq, tuple)) or (  # (iter or tee of a tuple)
                    self.known_slice(a, known))):
                return False
        return bool(seqs)

    def known_slice(self, node, known) -> bool:
        """Whether ``node`` is a slice with literal bounds of a tuple or list known while
        building (``observed[:-1]``, ``zip(obs[:-1], obs[1:])``'s pairs)."""
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and all(
            p is None or int_literal(p) is not None
            for p in (node.slice.lower, node.slice.upper, node.slice.step)) and isinstance(
            self.held_attribute(node.value) if not isinstance(node.value, ast.Name) else
            self.env.get(node.value.id, self.src.fn.__globals__.get(node.value.id)), known)

    def held_attribute(self, node):
        """The value an attribute chain ``obj.a.b`` of the user's objects holds (in their
        ``__dict__``: no property run, nothing built), else None (SimPEG's
        ``zip(self.multipliers, self.objfcts)``, ``reversed(self.maps)``: lists of objects)."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if not isinstance(node, ast.Attribute):
            return None
        base = self.held_attribute(node.value)
        return vars(base).get(node.attr) if is_user_object(base) else None

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
            args = []
            for a in node.args:  # zip(*pairs): the sequences of a tuple known while building
                if not isinstance(a, ast.Starred):
                    args.append(a)
                    continue
                seqs = self.expr(a.value)
                if not isinstance(seqs, (tuple, list)):
                    raise UnsupportedError("zip(*seqs) of a tuple known while building",
                                           self.loc(a))
                args += [ast.copy_location(hidden("seq", v), a) for v in seqs]
            parts = [self.loop_items(a, hidden) for a in args]
            n = parts[0][0]
            for m, _ in parts[1:]:
                n = symbolic.record("minimum", n, m) if isinstance(n, Sym) or isinstance(m, Sym) \
                    else min(n, m)
            return n, lambda k: ast.Tuple(elts=[item(k) for _, item in parts], ctx=ast.Load())
        if fn is range and 1 <= len(node.args) <= 3 and not node.keywords:
            bounds = [self.expr(a) for a in node.args]  # range(...) inside zip or enumerate
            start, stop, step = {1: [0, *bounds, 1], 2: [*bounds, 1], 3: bounds}[len(bounds)]
            if not isinstance(step, int) or isinstance(step, bool) or step == 0:
                raise UnsupportedError("range() inside zip() needs a constant, nonzero "
                                       "integer step", self.loc(node))
            count = (stop - start + step - (1 if step > 0 else -1)) // step
            count = symbolic.record("maximum", count, 0) if isinstance(count, Sym) \
                else max(count, 0)
            first, stride = hidden("start", start), hidden("step", step)
            return count, lambda k: ast.BinOp(left=first, op=ast.Add(), right=ast.BinOp(
                left=k, op=ast.Mult(), right=stride))
        if fn is reversed and len(node.args) == 1 and not node.keywords:
            seq = self.expr(node.args[0])
            seq = symbolic.NUMPY[np.flip](seq, 0) if isinstance(seq, Sym) else seq
        else:
            seq = self.expr(node)
        if isinstance(seq, (list, tuple)) and seq and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in seq):
            seq = self.known(np.asarray(seq), node)  # numbers known while building, beside
            # a run-time array (`zip(zs, ks)`): the constant array of them
        elif isinstance(seq, (list, tuple)) and seq and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) or
                isinstance(v, Sym) and not v.ndim and v.type.kind in "if" for v in seq):
            seq = symbolic.NUMPY[np.array](list(seq))  # numbers some known only at run time
            # (an argument's shape, `zip(image.shape, pad)`): the array of them
        if not (isinstance(seq, Sym) and seq.ndim >= 1):
            raise UnsupportedError("enumerate(), zip() and reversed() in a `for` run over "
                                   "arrays (or reversed(range(...)))", self.loc(node))
        name = hidden("seq", seq)
        return seq.shape[0], lambda k: ast.Subscript(value=name, slice=k, ctx=ast.Load())


def _assign(name: str, value) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value)
