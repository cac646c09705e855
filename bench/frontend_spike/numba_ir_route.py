"""Spike of route (b) for issue #43: Numba's front end → Numba IR → Python source → jitgrad.

Numba reads the *bytecode* (so it does not care how a form was spelled), inlines closures and
lambdas called where they are defined, and hands back a CFG of untyped IR blocks. This module
translates that CFG back into the small Python subset jitgrad's AST frontend differentiates:
assignments, operators, calls to globals, subscripts (slices rebuilt), in-place writes,
``for v in range(...)`` (recovered from Numba's getiter/iternext/pair_first pattern), ``while``
(both the header-test and the rotated do-while shapes CPython 3.11 emits), ``if``/``else``
(structured with immediate post-dominators), ``break``/``continue`` and ``return``.

On top of the bare translation, a few specialisations that need the call's arguments (as
Numba's typed passes would): ``*args`` expanded to one parameter per argument, string/None
and function-valued arguments baked in as constants, ``isinstance`` on a parameter folded,
constant branches pruned, functions passed as arguments (globals or lambdas, their captured
variables lifted into extra parameters) specialised into the callee, a variable chosen
between two functions turned into an integer tag and a conditional call. Module-level Python
helpers are translated too (recursion is refused). Every emitted statement is preceded by a
``# line N: <user's source>`` comment when the user's line changes.

Public: ``lower(fn, args=None) -> str`` and ``grad_via_numba_ir(fn, wrt=0)``.
"""

from __future__ import annotations

import builtins
import importlib.util
import inspect
import itertools
import linecache
import math
import operator
import os
import sys
import tempfile
import types as pytypes

import numpy as np
from numba.core import compiler, ir
from numba.core.analysis import compute_cfg_from_blocks


class Refused(Exception):
    """Route (b) does not translate this (or Numba's front end refused it)."""

    def __init__(self, message, loc=None):
        where = f"{loc.filename}:{loc.line}: " if loc is not None and loc.line else ""
        super().__init__(where + message)
        self.loc = loc


BINOPS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.is_: "is",
    operator.is_not: "is not",
}
INPLACE = {
    operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=", operator.itruediv: "/=",
    operator.ifloordiv: "//=", operator.imod: "%=", operator.ipow: "**=",
    operator.imatmul: "@=", operator.iand: "&=", operator.ior: "|=", operator.ixor: "^=",
}
UNARY = {operator.neg: "-", operator.pos: "+", operator.not_: "not ", operator.invert: "~"}
FOLDABLE = {**{k: k for k in BINOPS}, operator.contains: operator.contains}
LIBRARY_MODULES = ("numpy", "math", "scipy", "builtins", "cmath", "operator")


# ----------------------------------------------------------------------------- values


class V:
    """What a variable stands for while translating: source text plus, for values known at
    translation time, a kind and a payload (a constant, a callable, a slice, an iterator)."""

    __slots__ = ("atom", "kind", "payload", "text")

    def __init__(self, text, atom=True, kind=None, payload=None):
        self.text, self.atom, self.kind, self.payload = text, atom, kind, payload

    def op(self):  # as an operand
        return self.text if self.atom else f"({self.text})"


def const_v(value):
    if isinstance(value, slice):
        return V(f"slice({value.start!r}, {value.stop!r}, {value.step!r})", kind="slice",
                 payload=[const_v(p) if p is not None else None
                          for p in (value.start, value.stop, value.step)])
    if isinstance(value, tuple):
        items = [const_v(v) for v in value]
        return V("(" + "".join(i.text + ", " for i in items) + ")", kind="tuple",
                 payload=items)
    if isinstance(value, float) and not math.isfinite(value):
        return V(f"float({str(value)!r})", kind="const", payload=value)
    text = repr(value)
    return V(text, atom=not text.startswith("-"), kind="const", payload=value)


def index_text(v):
    """Text of ``v`` inside ``[...]``: a slice value becomes ``a:b:c``."""
    if v.kind == "slice":
        parts = ["" if p is None or (p.kind == "const" and p.payload is None) else p.text
                 for p in v.payload]
        while len(parts) > 2 and parts[-1] == "":
            parts.pop()
        return ":".join(parts)
    if v.kind == "tuple":
        return ", ".join(index_text(i) for i in v.payload) or "()"
    return v.text


class FnValue:
    """A callable known at translation time: a library function (emitted by name), or a
    Python function to translate (with captured values lifted into extra arguments)."""

    def __init__(self, obj, text=None, captured=(), code=None):
        self.obj, self.text, self.captured, self.code = obj, text, list(captured), code


def is_library(obj):
    mod = getattr(obj, "__module__", None) or ""
    if isinstance(obj, (pytypes.BuiltinFunctionType, type, np.ufunc)):
        return True
    return mod.split(".")[0] in LIBRARY_MODULES


# ----------------------------------------------------------------------------- the module


class Module:
    """The translated module: one Python function per (function, specialisation)."""

    def __init__(self):
        self.functions: list[str] = []
        self.env: dict = {}  # names the module must hold (global arrays, constants, modules)
        self.done: dict = {}  # specialisation key → generated name
        self.stack: list = []
        self.taken: set = set()

    def fresh(self, hint):
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "f"
        for k in itertools.count():
            name = hint if k == 0 else f"{hint}_{k}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def bind_global(self, name, value):
        """A name the generated module must provide, holding ``value``."""
        if self.env.get(name, value) is not value:
            name = self.fresh(name)
        self.env[name] = value
        self.taken.add(name)
        return name

    def function(self, pyfn, *, code=None, nlifted=0, args=None, loc=None, bound=None):
        """The generated name of ``pyfn`` translated (``code``: a lambda's code object; its
        free variables become ``nlifted`` trailing parameters)."""
        key = (code or pyfn.__code__, tuple(sorted((bound or {}).items(), key=str)),
               None if args is None else tuple(spec_key(a) for a in args))
        if key in self.done:
            return self.done[key]
        if key[0] in [k[0] for k in self.stack]:
            raise Refused(f"recursion: {getattr(pyfn, '__name__', '?')} calls itself", loc)
        self.stack.append(key)
        try:
            name = self.fresh(getattr(pyfn, "__name__", "fn").replace("<lambda>", "lam"))
            self.done[key] = name
            text = FunctionLowerer(self, pyfn, name, args=args, bound=bound or {},
                                   lifted=nlifted).run()
            self.functions.append(text)
            return name
        finally:
            self.stack.pop()

    def source(self):
        head = ['"""Generated by bench/frontend_spike/numba_ir_route.py (route b)."""', "",
                "import math", "", "import numpy as np", "", ""]
        return "\n".join(head) + "\n\n".join(self.functions) + "\n"


def spec_key(a):
    if isinstance(a, (str, type(None), bool)) or callable(a):
        return ("value", a if not callable(a) else id(a))
    if isinstance(a, np.ndarray):
        return ("array", a.ndim, a.dtype.str)
    if isinstance(a, tuple):
        return ("tuple", tuple(spec_key(x) for x in a))
    return ("type", type(a).__name__)


def baked(a):
    """Arguments that are baked into the translation as constants, not passed."""
    return isinstance(a, (str, type(None))) or callable(a)


# ----------------------------------------------------------------------------- one function


class FunctionLowerer:
    def __init__(self, module: Module, pyfn, name, *, args, bound, lifted):
        self.m, self.fn, self.name, self.args, self.bound = module, pyfn, name, args, bound
        self.nlifted = lifted
        try:
            self.ir = compiler.run_frontend(pyfn, inline_closures=True)
        except Exception as e:
            raise Refused(f"numba front end: {type(e).__name__}: {str(e).splitlines()[0]}",
                          None) from e
        self.blocks = self.ir.blocks
        self.cfg = compute_cfg_from_blocks(self.blocks)
        self.pdoms = self.cfg.post_dominators()
        self.loops = self.cfg.loops()
        self.params: set = set()
        self.known: dict[str, V] = {}  # variables replaced by their value everywhere
        self.pending: dict[str, V] = {}  # single-use temporaries folded into their use
        self.renamed: dict[str, str] = {}
        self.names: set[str] = set()
        self.skip: set[int] = set()
        self.last_line = None
        self.w = 0
        self._count_uses()

    # ------------------------------------------------------------------- bookkeeping

    def _count_uses(self):
        self.uses: dict[str, int] = {}
        self.use_block: dict[str, int] = {}
        self.stmt_block: dict[int, int] = {}
        for label, block in self.blocks.items():
            for stmt in block.body:
                self.stmt_block[id(stmt)] = label
                if isinstance(stmt, ir.Assign):
                    val = stmt.value
                    vs = [val] if isinstance(val, ir.Var) else (
                        val.list_vars() if isinstance(val, ir.Expr) else [])
                else:
                    vs = stmt.list_vars()
                for v in vs:
                    self.uses[v.name] = self.uses.get(v.name, 0) + 1
                    self.use_block[v.name] = label
        self.ndefs = {k: len(v) for k, v in self.ir._definitions.items()}

    def ident(self, name):
        if name in self.renamed:
            return self.renamed[name]
        clean = name
        if name.startswith(("$", "closure__")) or "." in name:
            tail = name.split("__v")[-1] if name.startswith("closure__") else name
            tail = "".join(c if c.isalnum() else "_" for c in tail.lstrip("$"))
            tail = tail.lstrip("0123456789_") or "t"
            clean = "_" + tail.split("_")[0][:12]
        clean = self.m.fresh(clean) if clean in self.names or clean in self.m.taken \
            else clean
        self.names.add(clean)
        self.m.taken.add(clean) if clean.startswith("_") else None
        self.renamed[name] = clean
        return clean

    def value(self, var: ir.Var) -> V:
        n = var.name
        if n in self.known:
            return self.known[n]
        if n in self.pending:
            return self.pending.pop(n)
        if not self.ir._definitions.get(n) and n not in self.params:
            raise Refused(f"Numba's IR reads {n!r}, which it never defines (a Numba front-end "
                          "bug)", var.loc)
        return V(self.ident(n))

    # ------------------------------------------------------------------- entry

    def run(self):
        code = self.fn.__code__
        nargs = code.co_argcount
        params = list(code.co_varnames[:nargs])
        self.params = set(code.co_varnames[:nargs + 1]) | set(code.co_freevars)
        has_var = bool(code.co_flags & inspect.CO_VARARGS)
        out_params = []
        args = self.args
        self.arg_values = {}
        for k, p in enumerate(params):
            if k in self.bound:
                fv = self.bound[k]
                caps = [self.ident(f"{p}_{j}") for j in range(len(fv.captured))]
                self.known[p] = V(p, kind="fn", payload=FnValue(fv.obj, fv.text, caps,
                                                                fv.code))
                out_params += caps
                continue
            if args is not None and k < len(args):
                self.arg_values[p] = args[k]
                if baked(args[k]):
                    self.known[p] = self.bake(args[k], p)
                    continue
            out_params.append(self.ident(p))
        if has_var:
            vname = code.co_varnames[nargs]
            if args is None:
                raise Refused("*args needs the call's arguments (lower(fn, args))", None)
            extra = args[nargs:]
            items = []
            for j, a in enumerate(extra):
                if baked(a):
                    items.append(self.bake(a, f"{vname}_{j}"))
                else:
                    pn = self.ident(f"{vname}_{j}")
                    out_params.append(pn)
                    items.append(V(pn))
            self.known[vname] = V("(" + "".join(i.text + ", " for i in items) + ")",
                                  kind="tuple", payload=items)
        if code.co_flags & inspect.CO_VARKEYWORDS or code.co_kwonlyargcount:
            raise Refused("keyword-only or **kwargs parameters", None)
        for j, fv in enumerate(code.co_freevars[:self.nlifted]):
            pn = self.ident(f"{fv}")
            out_params.append(pn)
            self.known[f"__lifted_{fv}"] = V(pn)
        self.lines = []
        self.walk(self.cfg.entry_point(), None, None, 1)
        header = f"def {self.name}({', '.join(out_params)}):"
        return "\n".join([header] + self.lines)

    def bake(self, a, name):
        if callable(a):
            if is_library(a):
                return V(self.m.bind_global(getattr(a, "__name__", name), a), kind="fn",
                         payload=FnValue(a, None))
            return V(name, kind="fn", payload=FnValue(a, None))
        return const_v(a)

    # ------------------------------------------------------------------- emission

    def emit(self, ind, text, loc=None):
        if loc is not None and loc.line and loc.line != self.last_line:
            self.last_line = loc.line
            src = linecache.getline(loc.filename, loc.line).strip()
            self.lines.append("    " * ind + f"# line {loc.line}: {src}"[:100])
        self.lines.append("    " * ind + text)

    def flush(self, ind, reads=None):
        """Emit pending folded temporaries (those reading a name in ``reads``, or all)."""
        for n in list(self.pending):
            v = self.pending[n]
            if reads is None or any(r in v.text for r in reads):
                del self.pending[n]
                self.emit(ind, f"{self.ident(n)} = {v.text}")

    # ------------------------------------------------------------------- control flow

    def ipdom(self, label):
        strict = self.pdoms[label] - {label}
        for c in strict:
            if self.pdoms[c] == strict:
                return c
        return None

    def walk(self, label, stop, loop, ind, entering=None):
        """Emit the region from ``label`` until ``stop`` (exclusive)."""
        start = len(self.lines)
        while label is not None and label != stop:
            if loop is not None and label != entering:
                if label == loop["header"]:
                    if loop["kind"] == "top":
                        self.block_stmts(loop["header"], ind)
                        neg = "not " if loop["neg"] else ""
                        self.emit(ind, f"{loop['flag']} = {neg}{self.cond(loop['header']).op()}")
                    self.emit(ind, "continue")
                    return
                if label == loop["exit"]:
                    self.emit(ind, "break")
                    return
            if label in self.loops and label != entering and (
                    loop is None or loop["header"] != label):
                label = self.emit_loop(label, ind, guard=None)
                continue
            entering = None
            block = self.blocks[label]
            self.block_stmts(label, ind)
            term = block.terminator
            if isinstance(term, ir.Return):
                rv = self.value(term.value)
                self.flush(ind)
                self.emit(ind, f"return {rv.text}", term.loc)
                return
            if isinstance(term, ir.Raise) and term.exception is not None:
                ev = self.value(term.exception)
                self.flush(ind)
                self.emit(ind, f"raise {ev.text}", term.loc)
                return
            self.flush(ind) if not isinstance(term, ir.Branch) else None
            if isinstance(term, ir.StaticRaise):
                cls = term.exc_class.__name__ if term.exc_class else "Exception"
                if term.exc_class and getattr(builtins, cls, None) is not term.exc_class:
                    cls = self.m.bind_global(cls, term.exc_class)
                args = ", ".join(repr(a) for a in (term.exc_args or ()))
                self.emit(ind, f"raise {cls}({args})", term.loc)
                return
            if isinstance(term, ir.Raise):
                if term.exception is None:
                    raise Refused("a bare raise", term.loc)
                self.emit(ind, f"raise {self.value(term.exception).text}", term.loc)
                return
            if isinstance(term, ir.Jump):
                label = term.target
                continue
            if not isinstance(term, ir.Branch):
                raise Refused(f"terminator {type(term).__name__}", term.loc)
            c = self.value(term.cond)
            if loop is not None and loop["kind"] == "rotated" and label == loop["latch"]:
                self.flush(ind)
                neg = term.truebr != loop["header"]
                self.emit(ind, f"{loop['flag']} = {'not ' if neg else ''}{c.op()}", term.loc)
                return
            if c.kind == "const":  # a branch decided at translation time
                self.flush(ind)
                label = term.truebr if c.payload else term.falsebr
                continue
            guard = self.guarded_loop(term)
            if guard is not None:
                header, negate = guard
                self.flush(ind)
                flag = self.m.fresh("_go")
                self.emit(ind, f"{flag} = {'not ' if negate else ''}{c.op()}", term.loc)
                label = self.emit_loop(header, ind, guard=flag)
                continue
            self.flush(ind)
            join = self.ipdom(label)
            if loop is not None and join is not None and join not in loop["body"]:
                join = None
            self.emit(ind, f"if {c.text}:", term.loc)
            self.arm(term.truebr, join, loop, ind + 1)
            else_at = len(self.lines)
            self.emit(ind, "else:")
            self.arm(term.falsebr, join, loop, ind + 1)
            if self.lines[else_at + 1:] == ["    " * (ind + 1) + "pass"]:
                del self.lines[else_at:]
            label = join
        if len(self.lines) == start:
            self.emit(ind, "pass")
        elif self.lines[start].strip() == "pass" and len(self.lines) > start + 1:
            del self.lines[start]

    def arm(self, label, join, loop, ind):
        n = len(self.lines)
        self.walk(label, join, loop, ind)
        if len(self.lines) == n:
            self.emit(ind, "pass")

    def guarded_loop(self, term):
        """``branch c, H, X`` in front of a rotated while loop with header H and exit X."""
        for header, other, negate in ((term.truebr, term.falsebr, False),
                                      (term.falsebr, term.truebr, True)):
            lp = self.loops.get(header)
            if lp is not None and other in lp.exits and self.loop_shape(header)[0] == \
                    "rotated":
                return header, negate
        return None

    def loop_shape(self, header):
        lp = self.loops[header]
        hb = self.blocks[header]
        if any(isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
               and s.value.op == "iternext" for s in hb.body):
            return "for", None
        exiting = [b for b in lp.body
                   if any(s not in lp.body for s, _ in self.cfg.successors(b))]
        term = hb.terminator
        if len(exiting) == 1:
            t = self.blocks[exiting[0]].terminator
            if isinstance(t, ir.Branch) and header in (t.truebr, t.falsebr):
                return "rotated", exiting[0]
        if isinstance(term, ir.Branch) and (term.truebr in lp.body) != (term.falsebr in
                                                                        lp.body):
            return "top", None
        return "true", None

    def emit_loop(self, header, ind, guard):
        lp = self.loops[header]
        kind, latch = self.loop_shape(header)
        if kind == "for":
            return self.emit_for(header, ind)
        hb = self.blocks[header]
        if kind == "top":
            term = hb.terminator
            inside = term.truebr if term.truebr in lp.body else term.falsebr
            exit_ = term.falsebr if inside == term.truebr else term.truebr
            flag = self.m.fresh("_go")
            self.block_stmts(header, ind)
            c = self.cond(header)
            neg = inside != term.truebr
            self.emit(ind, f"{flag} = {'not ' if neg else ''}{c.op()}", term.loc)
            self.emit(ind, f"while {flag}:")
            ctx = {"header": header, "exit": exit_, "kind": "top", "body": lp.body, "flag": flag,
                       "neg": neg}
            self.walk(inside, header, ctx, ind + 1)
            self.block_stmts(header, ind + 1)
            self.emit(ind + 1, f"{flag} = {'not ' if neg else ''}{self.cond(header).op()}")
            return exit_
        if kind == "rotated":
            t = self.blocks[latch].terminator
            exit_ = t.falsebr if t.truebr == header else t.truebr
            if guard is None:
                guard = self.m.fresh("_go")
                self.emit(ind, f"{guard} = True")
            self.emit(ind, f"while {guard}:")
            ctx = {"header": header, "exit": exit_, "kind": "rotated", "body": lp.body, "flag": guard,
                       "latch": latch}
            self.walk(header, None, ctx, ind + 1, entering=header)
            return exit_
        exits = sorted(lp.exits)
        normal = [x for x in exits if not isinstance(self.blocks[x].terminator,
                                                     (ir.Return, ir.StaticRaise))]
        if len(normal) > 1:
            raise Refused("loop with several exits", hb.loc)
        exit_ = normal[0] if normal else None
        self.emit(ind, "while True:")
        ctx = {"header": header, "exit": exit_, "kind": "true", "body": lp.body}
        self.walk(header, None, ctx, ind + 1, entering=header)
        return exit_

    def cond(self, label):
        term = self.blocks[label].terminator
        return self.value(term.cond)

    def emit_for(self, header, ind):
        hb = self.blocks[header]
        body = [s for s in hb.body if not isinstance(s, ir.Del)]
        term = hb.terminator
        try:
            nxt, first, second = body[0], body[1], body[2]
            assert nxt.value.op == "iternext" and first.value.op == "pair_first"
            assert second.value.op == "pair_second" and term.cond.name == second.target.name
        except (AssertionError, AttributeError, IndexError):
            raise Refused("a for loop whose header is not iternext/pair_first/pair_second",
                          hb.loc) from None
        it = self.value(nxt.value.value)
        if it.kind != "iter":
            raise Refused("a for loop over an iterator made elsewhere", hb.loc)
        aliases = {first.target.name}
        for s in body[3:-1]:
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
                    s.value.name in aliases:
                aliases.add(s.target.name)
            else:
                raise Refused("a for-loop header with extra work", s.loc)
        inside, exit_ = term.truebr, term.falsebr
        ib = self.blocks[inside]
        target = None
        for s in ib.body[:1]:
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var) and \
                    s.value.name in aliases and not s.target.name.startswith("$"):
                target = self.ident(s.target.name)
                self.skip.add(id(s))
        if target is None:
            target = self.ident(first.target.name)
        for a in aliases:
            self.known[a] = V(target)
        self.flush(ind)
        self.emit(ind, f"for {target} in {it.text}:", nxt.loc)
        ctx = {"header": header, "exit": exit_, "kind": "for", "body": self.loops[header].body}
        n = len(self.lines)
        self.walk(inside, header, ctx, ind + 1)
        if len(self.lines) == n:
            self.emit(ind + 1, "pass")
        return exit_

    # ------------------------------------------------------------------- statements

    def block_stmts(self, label, ind):
        for stmt in self.blocks[label].body[:-1]:
            if id(stmt) in self.skip or isinstance(stmt, ir.Del):
                continue
            self.stmt(stmt, ind)

    def stmt(self, s, ind):
        if isinstance(s, ir.Assign):
            return self.assign(s, ind)
        if isinstance(s, ir.SetItem):
            t, i, v = self.value(s.target), self.value(s.index), self.value(s.value)
            self.flush(ind)
            self.emit(ind, f"{t.op()}[{index_text(i)}] = {v.text}", s.loc)
            return
        if isinstance(s, ir.StaticSetItem):
            t, v = self.value(s.target), self.value(s.value)
            self.flush(ind)
            self.emit(ind, f"{t.op()}[{index_text(const_v(s.index))}] = {v.text}", s.loc)
            return
        if isinstance(s, ir.Print):
            args = ", ".join(self.value(a).text for a in s.args)
            self.flush(ind)
            self.emit(ind, f"print({args})", s.loc)
            return
        raise Refused(f"statement {type(s).__name__}", s.loc)

    def assign(self, s, ind):
        name, val, loc = s.target.name, s.value, s.loc
        if isinstance(val, ir.Arg):
            if val.name == name:
                return
            v = self.known.get(val.name) or V(self.ident(val.name))
        elif isinstance(val, ir.Var):
            if name.startswith(("$", "closure__")) and self.ndefs.get(name, 1) == 1 and \
                    self.ndefs.get(val.name, 0) == 1 and val.name not in self.pending:
                self.known[name] = self.value(val)  # a copy of a value never reassigned
                return
            v = self.value(val)
        elif isinstance(val, ir.Const):
            v = const_v(val.value)
        elif isinstance(val, (ir.Global, ir.FreeVar)):
            v = self.global_v(val, loc)
        elif isinstance(val, ir.Expr):
            v = self.expr(val, loc, ind, name)
            if v is None:
                return
        else:
            raise Refused(f"value {type(val).__name__}", loc)
        single = self.ndefs.get(name, 1) == 1
        if v.kind in ("const", "fn", "module", "slice", "iter", "tuple", "class") and \
                single and (v.kind != "tuple" or all(
                    i.kind in ("const", "slice", "fn", "module", "class")
                    for i in v.payload)):
            self.known[name] = v
            return
        tags = self.__dict__.setdefault("fn_tags", {})
        if isinstance(val, ir.Var) and val.name in tags:
            tags[name] = tags[val.name]
        if v.kind == "fn" and not single:
            v = self.tag_fn(name, v)
        if name.startswith(("$", "closure__")) and self.uses.get(name) == 1 and \
                self.use_block.get(name) is not None and single and v.kind != "fn" and \
                self.in_block(s, name):
            self.pending[name] = v
            return
        if self.uses.get(name, 0) == 0 and isinstance(val, ir.Expr) and val.op == "call":
            self.flush(ind)
            self.emit(ind, v.text, loc)  # a call for its effect: its value is unused
            return
        target = self.ident(name)
        if v.text == target:
            return
        self.flush(ind, reads=[target])
        if v.kind == "fn":
            raise Refused("a Python function stored where the translator cannot follow it",
                          loc)
        self.emit(ind, f"{target} = {v.text}", loc)

    def in_block(self, s, name):
        return self.use_block.get(name) == self.stmt_block.get(id(s))

    def tag_fn(self, name, v):
        """A variable assigned different functions in different branches: an int tag."""
        tags = self.__dict__.setdefault("fn_tags", {})
        table = tags.setdefault(name, [])
        if v.payload not in table:
            table.append(v.payload)
        return V(str(table.index(v.payload)), kind="tag")

    def global_v(self, g, loc):
        val, gname = g.value, g.name
        if isinstance(g, ir.FreeVar) and self.nlifted:
            lifted = self.known.get(f"__lifted_{gname}")
            if lifted is not None:
                return lifted
        if isinstance(val, pytypes.ModuleType):
            return V(self.m.bind_global(gname, val), kind="module", payload=val)
        if isinstance(val, (bool, int, float, complex, str, type(None))):
            return const_v(val)
        if val is getattr(builtins, gname, object()):
            return V(gname, kind="fn" if callable(val) else "class", payload=FnValue(
                val, gname))
        if callable(val) and not isinstance(val, type):
            if is_library(val):
                return V(self.m.bind_global(gname, val), kind="fn",
                         payload=FnValue(val, None))
            return V(gname, kind="fn", payload=FnValue(val, None))
        if isinstance(val, type):
            return V(self.m.bind_global(gname, val), kind="class", payload=val)
        if isinstance(val, (np.ndarray, tuple, np.generic)):
            return V(self.m.bind_global(gname, val))
        raise Refused(f"global {gname!r} of type {type(val).__name__}", loc)

    # ------------------------------------------------------------------- expressions

    def expr(self, e, loc, ind, target):
        op = e.op
        if op == "binop":
            lhs, rhs = self.value(e.lhs), self.value(e.rhs)
            if e.fn is operator.contains:
                lhs, rhs = rhs, lhs
                sym = "in"
            else:
                sym = BINOPS.get(e.fn)
                if sym is None:
                    raise Refused(f"operator {e.fn}", loc)
            folded = self.fold(e.fn, lhs, rhs)
            if folded is not None:
                return folded
            return V(f"{lhs.op()} {sym} {rhs.op()}", atom=False)
        if op == "inplace_binop":
            lhs, rhs = self.value(e.lhs), self.value(e.rhs)
            sym = INPLACE.get(e.fn)
            if sym is None:
                raise Refused(f"operator {e.fn}", loc)
            self.flush(ind)
            self.emit(ind, f"{lhs.text} {sym} {rhs.text}", loc)
            return lhs
        if op == "unary":
            v = self.value(e.value)
            sym = UNARY.get(e.fn) if not isinstance(e.fn, str) else {
                "-": "-", "+": "+", "not": "not ", "~": "~"}.get(e.fn)
            if sym is None:
                raise Refused(f"unary {e.fn}", loc)
            if v.kind == "const" and sym == "not ":
                return const_v(not v.payload)
            if v.kind == "const" and sym == "-" and isinstance(v.payload, (int, float)):
                return const_v(-v.payload)
            return V(f"{sym}{v.op()}", atom=False)
        if op == "call":
            return self.call(e, loc, ind)
        if op == "getattr":
            v = self.value(e.value)
            if v.kind == "module":
                attr = getattr(v.payload, e.attr)
                if isinstance(attr, pytypes.ModuleType):
                    return V(f"{v.text}.{e.attr}", kind="module", payload=attr)
                return V(f"{v.text}.{e.attr}", kind="fn" if callable(attr) else None,
                         payload=FnValue(attr, f"{v.text}.{e.attr}"))
            return V(f"{v.op()}.{e.attr}")
        if op in ("getitem", "static_getitem"):
            v = self.value(e.value)
            idx = self.value(e.index) if op == "getitem" or e.index_var is not None and \
                e.index_var.name in self.known else const_v(e.index)
            if op == "static_getitem" and e.index_var is not None:
                self.uses[e.index_var.name] = 0
            if v.kind == "tuple" and idx.kind == "const" and isinstance(idx.payload, int):
                return v.payload[idx.payload]
            return V(f"{v.op()}[{index_text(idx)}]")
        if op == "build_tuple":
            items = [self.value(i) for i in e.items]
            return V("(" + "".join(i.text + ", " for i in items) + ")", kind="tuple",
                     payload=items)
        if op == "build_list":
            items = [self.value(i) for i in e.items]
            return V("[" + ", ".join(i.text for i in items) + "]")
        if op == "cast":
            return self.value(e.value)
        if op == "getiter":
            v = self.value(e.value)
            return V(v.text, kind="iter", payload=v)
        if op == "exhaust_iter":
            return self.value(e.value)
        if op == "make_function":
            return self.make_function(e, loc)
        raise Refused(f"Numba IR expression {op!r}", loc)

    def fold(self, fn, lhs, rhs):
        if lhs.kind == "const" and rhs.kind == "const":
            try:
                if fn is operator.contains:
                    return const_v(lhs.payload in rhs.payload)
                return const_v(fn(lhs.payload, rhs.payload))
            except Exception:  # noqa: BLE001
                return None
        if fn is operator.contains and lhs.kind == "const" and rhs.kind == "tuple" and \
                all(i.kind == "const" for i in rhs.payload):
            return const_v(lhs.payload in [i.payload for i in rhs.payload])
        return None

    def make_function(self, e, loc):
        code = e.code
        captured = []
        if e.closure is not None:
            cl = self.value(e.closure)
            if cl.kind != "tuple":
                raise Refused("a closure whose cells are not a literal tuple", loc)
            captured = [c.text for c in cl.payload]
        if e.defaults is not None:
            raise Refused("a lambda with default arguments", loc)
        cells = tuple(pytypes.CellType(0.0) for _ in code.co_freevars)
        pyfn = pytypes.FunctionType(code, self.fn.__globals__, code.co_name, None,
                                    cells or None)
        return V(f"<{code.co_name}>", kind="fn", payload=FnValue(pyfn, None, captured, code))

    def call(self, e, loc, ind):
        f = self.value(e.func)
        args = [self.value(a) for a in e.args]
        kws = [(k, self.value(v)) for k, v in e.kws]
        if e.vararg is not None:
            star = self.value(e.vararg)
            if star.kind != "tuple":
                raise Refused("f(*xs) with xs not a tuple known here", loc)
            args += star.payload
        if e.varkwarg is not None:
            raise Refused("f(**kw)", loc)
        if e.func.name in getattr(self, "fn_tags", {}):  # a function chosen at run time
            return self.tagged_call(e, loc, args, kws)
        fv = f.payload if f.kind in ("fn", "class") else None
        obj = fv.obj if isinstance(fv, FnValue) else fv
        if obj is bool and len(args) == 1 and not kws:
            return args[0]
        if obj is slice and not kws:
            parts = (args + [None, None, None])[:3] if len(args) > 1 else [None, args[0],
                                                                          None]
            return V(f"slice({', '.join(a.text if a else 'None' for a in parts)})",
                     kind="slice", payload=parts)
        if obj is len and len(args) == 1 and args[0].kind == "tuple":
            return const_v(len(args[0].payload))
        if obj is isinstance and len(args) == 2:
            return self.fold_isinstance(e, args, loc)
        if obj is not getattr(sys.modules.get("numba"), "prange", range) and \
                getattr(obj, "__module__", "").startswith("numba") or type(obj).__module__.startswith(
                "numba"):
            raise Refused(f"Numba lowered this to its own intrinsic {obj!r} (try/except, "
                          "with, ...)", loc)
        if obj is map and len(args) == 2 and args[0].kind == "fn" and \
                args[1].kind == "tuple":
            items = [self.call_value(args[0], [i], loc) for i in args[1].payload]
            return V("(" + "".join(i.text + ", " for i in items) + ")", kind="tuple",
                     payload=items)
        if obj is sum and len(args) == 1 and args[0].kind == "tuple" and args[0].payload:
            return V(" + ".join(i.op() for i in args[0].payload), atom=False)
        if obj in (map, filter, sorted, zip, enumerate) and any(
                a.kind == "fn" for a in args):
            raise Refused(f"{obj.__name__}() of a function over a run-time iterable", loc)
        if any(a.kind == "fn" and (a.payload.code is not None or not is_library(
                a.payload.obj)) for a in args + [v for _, v in kws]) and (
                not isinstance(fv, FnValue) or is_library(fv.obj)):
            raise Refused("a Python function passed to a library function", loc)
        if obj is range or obj is getattr(sys.modules.get("numba"), "prange", range):
            rname = "range" if obj is range else self.m.bind_global("prange", obj)
            text = f"{rname}({', '.join(a.text for a in args)})"
            return V(text, kind="range")
        if isinstance(fv, FnValue) and (fv.code is not None or not is_library(fv.obj)) \
                and not isinstance(fv.obj, type):
            return self.call_python(fv, e, args, kws, loc)
        ftext = f.text if f.kind != "fn" or fv.text is None else fv.text
        parts = [a.text for a in args] + [f"{k}={v.text}" for k, v in kws]
        return V(f"{ftext}({', '.join(parts)})")

    def call_value(self, f, args, loc):
        """``f(*args)`` for a function value ``f`` (map's unrolled calls)."""
        fv = f.payload
        if fv.code is not None or not is_library(fv.obj):
            e = pytypes.SimpleNamespace(args=[], kws=())
            return self.call_python(fv, e, args, [], loc)
        return V(f"{fv.text or self.m.bind_global(fv.obj.__name__, fv.obj)}("
                 f"{', '.join(a.text for a in args)})")

    def fold_isinstance(self, e, args, loc):
        var = e.args[0].name
        value = self.arg_values.get(var, None)
        cls = args[1]
        def unwrap(v):
            p = v.payload
            return p.obj if isinstance(p, FnValue) else p
        classes = unwrap(cls) if cls.kind in ("class", "fn") else (
            tuple(unwrap(i) for i in cls.payload) if cls.kind == "tuple" else None)
        if var in self.arg_values and classes is not None:
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value[()]
            return const_v(isinstance(value, classes))
        raise Refused("isinstance on something other than a parameter of the call", loc)

    def tagged_call(self, e, loc, args, kws):
        name = e.func.name
        table = getattr(self, "fn_tags", {}).get(name)
        if not table:
            raise Refused("a call through a variable not known to be a function", loc)
        tag = self.ident(name)
        parts = ", ".join([a.text for a in args] + [f"{k}={v.text}" for k, v in kws])
        texts = []
        for fv in table:
            if fv.code is not None or not is_library(fv.obj):
                callee = self.m.function(fv.obj, code=fv.code, nlifted=len(fv.captured),
                                         loc=loc)
                texts.append(f"{callee}({', '.join([parts] + fv.captured).strip(', ')})")
            else:
                texts.append(f"{fv.text or self.m.bind_global(fv.obj.__name__, fv.obj)}"
                             f"({parts})")
        text = texts[-1]
        for k in range(len(texts) - 2, -1, -1):
            text = f"{texts[k]} if {tag} == {k} else ({text})"
        return V(text, atom=False)

    def call_python(self, fv, e, args, kws, loc):
        """A call to a Python function: translated (and specialised on function-valued
        arguments, whose captured values are passed in their place)."""
        if kws:
            sig = inspect.signature(fv.obj)
            try:
                bound = sig.bind(*range(len(args)), **{k: len(args) + j
                                                      for j, (k, _) in enumerate(kws)})
            except TypeError as err:
                raise Refused(f"call: {err}", loc) from None
            allv = args + [v for _, v in kws]
            args = [allv[i] for i in bound.args]
        bound_fns = {}
        passed = []
        for k, a in enumerate(args):
            if a.kind == "fn":
                inner = a.payload
                if inner.text is None and is_library(inner.obj):
                    inner = FnValue(inner.obj, self.m.bind_global(inner.obj.__name__,
                                                                  inner.obj))
                bound_fns[k] = inner
                passed += inner.captured
            else:
                passed.append(a.text)
        nparams = fv.obj.__code__.co_argcount
        if fv.obj.__code__.co_flags & inspect.CO_VARARGS and len(args) > nparams:
            raise Refused("a call with *args into a helper (spike: top level only)", loc)
        if len(args) < nparams and fv.obj.__defaults__:
            missing = nparams - len(args)
            passed += [const_v(d).text for d in fv.obj.__defaults__[-missing:]]
        key_bound = {k: FnValue(b.obj, b.text, [f"c{j}" for j in range(len(b.captured))],
                                b.code) for k, b in bound_fns.items()}
        callee = self.m.function(fv.obj, code=fv.code, nlifted=len(fv.captured), loc=loc,
                                 bound=key_bound)
        return V(f"{callee}({', '.join(passed + fv.captured)})")


# ----------------------------------------------------------------------------- public


def full_arguments(fn, args):
    """The call's arguments with the defaults filled in (positionally)."""
    try:
        ba = inspect.signature(fn).bind(*args)
        ba.apply_defaults()
        return list(ba.args)
    except (TypeError, ValueError):
        return list(args)


def _module_for(fn, args=None):
    args = None if args is None else full_arguments(fn, args)
    m = Module()
    m.function(fn, args=None if args is None else tuple(args))
    return m


def lower(fn, args=None) -> str:
    """Numba IR of ``fn`` as Python source in jitgrad's subset (``args``: the call's
    arguments, for *args expansion and the specialisations that need values)."""
    return _module_for(fn, args).source()


_counter = itertools.count()
_tmpdir = None


def load(fn, args=None):
    """Translate, write to a real .py file and import it: (module, name of the entry)."""
    global _tmpdir
    m = _module_for(fn, args)
    src = m.source()
    if _tmpdir is None:
        _tmpdir = tempfile.mkdtemp(prefix="jitgrad_route_b_")
    modname = f"route_b_{fn.__name__.replace('<', '').replace('>', '')}_{next(_counter)}"
    path = os.path.join(_tmpdir, modname + ".py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    for k, v in m.env.items():
        if k not in ("np", "math") or getattr(mod, k, None) is not v:
            setattr(mod, k, v)
    return mod, m.done[next(iter(m.done))], src


def grad_via_numba_ir(fn, wrt=0):
    """``jitgrad.grad`` of ``fn`` through route (b): translate per argument types, then
    differentiate the translation. ``wrt`` is an int position in the call's arguments."""
    import jitgrad

    cache = {}

    def g(*args):
        full = full_arguments(fn, args)
        key = tuple(spec_key(a) for a in full)
        if key not in cache:
            mod, name, _ = load(fn, full)
            cache[key] = getattr(mod, name)
        keep = [a for a in full if not baked(a)]
        if baked(full[wrt]):
            raise Refused("differentiating with respect to a baked argument")
        pos = sum(1 for a in full[:wrt] if not baked(a))
        return jitgrad.grad(cache[key], wrt=pos)(*keep)

    return g
