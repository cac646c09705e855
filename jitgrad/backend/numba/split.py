"""A long generated function cut into several compiled functions (issue #45: compile time).

Numba compiles a function in passes whose cost grows faster than its length: its type
inference, and LLVM's optimisation passes, over one function of thousands of lines (the
gradient of the pyhpc equation of state was 8,000 lines, one function) take minutes where the
same lines as functions of a few hundred lines each take seconds. `split_function` cuts the
body of a long function at its top-level statements into *parts*, each a function of its own
that the function calls in order: a part takes the variables it reads that are set before it,
and returns those it sets that are read after it. The lines themselves are not changed, only
moved (with their comments: each part is a run of the user's lines' commented blocks), so the
gradient computes the same values in the same order; arrays are passed by reference, so a
part's writes into them are seen after it, as before.

This works on the generated source's text and its Python syntax tree, after `emit`: the parts
are a property of the compiled form, not of the gradient.
"""

from __future__ import annotations

import ast
import collections

# A function longer than SPLIT_LINES lines is cut into parts of about PART_LINES lines each
# (one top-level statement is never cut: a part can be longer). A part is optimised again
# where Numba links it into the entry, so a cut pays only for long functions: first calls,
# CPU, uncut against cut at 600 lines (quiet machine, the same modules otherwise):
# channel_flow (1,987 lines) 32.0 -> 26.0 s, but nbody (1,417) 26.7 -> 31.4 s, vadv (913)
# 17.5 -> 22.8 s, cavity_flow (830) 11.6 -> 19.8 s.
SPLIT_LINES = 1500
PART_LINES = 250
# A loop that names a tape (see `_Cutter.shares_list`) stays in the entry: its body is cut
# when it is longer than this (a part's code is optimised again where it is linked into the
# entry, so short bodies cut into parts cost more than they save: resnet's adjoint loops of
# 20 to 250 lines, cut, took its first call from 74 to 107 s of CPU).
SMALL_LOOP = 250
# A run that takes more names than MAX_ARGS, or sets more than MAX_RETURNS read after it,
# stays where it is: Numba's and LLVM's work on a call of a hundred arrays, or a tuple of them
# returned, costs more than the cut saves (the equation of state's fused loops, each a part
# taking 60 to 120 arrays: first gradient 20 s of CPU uncut, 29 s cut; channel_flow's parts,
# at most 35 in and 23 out, 27 s cut against 33 s uncut).
MAX_ARGS = 48
MAX_RETURNS = 24
# A run of fewer lines than this stays where it is (a function costs Numba a fixed time too).
MIN_PART = 40


def _names(node, ctx) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _exposed(stmts) -> tuple[set[str], set[str]]:
    """(names read before they are surely set, names surely set) by ``stmts`` run in order."""
    exposed, sure = set(), set()
    for s in stmts:
        e, d = _exposed_one(s)
        exposed |= e - sure
        sure |= d
    return exposed, sure


def _exposed_one(s) -> tuple[set[str], set[str]]:
    if isinstance(s, (ast.For, ast.AsyncFor)):
        e, _ = _exposed(s.body)
        e2, _ = _exposed(s.orelse)
        targets = _names(s.target, ast.Store)
        return _names(s.iter, ast.Load) | (e - targets) | e2, set()
    if isinstance(s, ast.While):
        e, _ = _exposed(s.body)
        e2, _ = _exposed(s.orelse)
        return _names(s.test, ast.Load) | e | e2, set()
    if isinstance(s, ast.If):
        e1, d1 = _exposed(s.body)
        e2, d2 = _exposed(s.orelse)
        return _names(s.test, ast.Load) | e1 | e2, d1 & d2
    if isinstance(s, ast.AugAssign):
        return _names(s, ast.Load) | _names(s.target, ast.Store), _names(s.target, ast.Store)
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        stored = _names(s, ast.Store)
        # a name bound by a plain assignment is set; one stored inside a subscript or
        # attribute target is read (the array is written into)
        return _names(s, ast.Load), stored
    if isinstance(s, (ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Pass, ast.Break,
                      ast.Continue)):
        return _names(s, ast.Load), _names(s, ast.Store)
    # anything else (with, try, nested functions, del, ...): read all it names, set nothing
    return _names(s, ast.Load) | _names(s, ast.Store), set()


def _is_empty_container(node) -> bool:
    if isinstance(node, (ast.List, ast.Dict, ast.Set, ast.Tuple)) and not getattr(
            node, "elts", getattr(node, "keys", None)):
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("list", "dict", "set") and not node.args)


def _splittable(s, in_loop: bool = False) -> bool:
    """Whether the statement ``s`` may move into a part: no return, nothing that binds
    names in a scope of its own or deletes them, no break or continue of a loop around it."""
    if isinstance(s, (ast.Return, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                      ast.ClassDef, ast.Delete, ast.Global, ast.Nonlocal, ast.Yield,
                      ast.YieldFrom, ast.Await, ast.Try, ast.With, ast.NamedExpr,
                      ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return False
    if isinstance(s, (ast.Break, ast.Continue)):
        return in_loop
    loop = isinstance(s, (ast.For, ast.While))
    return all(_splittable(c, in_loop or loop and c in s.body)
               for c in ast.iter_child_nodes(s))


def _has_inner_loop(loop) -> bool:
    """Whether a loop's body holds a loop. Only such a body is cut: the body of an innermost
    loop is straight-line scalar code (a fused elementwise nest), cheap for Numba to compile
    in one piece, and cut it becomes a call per iteration passing every array it touches
    (the equation of state's fused loop: five parts, first gradient 2.8 -> 7.0 s of CPU)."""
    return any(isinstance(n, (ast.For, ast.While)) for c in loop.body for n in ast.walk(c))


class _Cutter:
    """Cuts the body of one function (`split_function`)."""

    def __init__(self, fn, lines, name, params, local, part_lines):
        self.lines, self.name, self.params, self.local = lines, name, params, local
        self.empty = {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign)
                      and _is_empty_container(n.value) for t in n.targets
                      if isinstance(t, ast.Name)}
        self.forward_made = set()
        self.mentions = collections.Counter(
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in self.empty)
        self.part_lines = part_lines
        self.defs = []  # (text, line of the source or 0) of the parts, in order
        self.parts = []

    def groups(self, stmts, starts, marker, adjoint):
        """Runs of movable statements of about part_lines lines, and the rest: [kind,
        [statement indices], lines], kind "part", "keep" (stays where it is) or "loop" (a
        long loop, whose body is cut)."""
        groups = []
        for k, s in enumerate(stmts):
            size = s.end_lineno - starts[k] + 1
            loop = (isinstance(s, (ast.For, ast.While)) and not s.orelse and len(s.body) > 1
                    and _splittable(s) and _has_inner_loop(s))
            if not _splittable(s):
                kind = "keep"
            elif self.deferred(s) is not None:
                kind = "part"
            elif self.shares_list(s, adjoint or marker is not None and k >= marker):
                kind = "loop" if loop and size > SMALL_LOOP else "keep"
            else:
                kind = "loop" if loop and size > self.part_lines else "part"
            # a part appends what it taped after its call: a name it has appended is not
            # set again in it
            pending = {self.deferred(stmts[j]) for j in groups[-1][1]} if groups else set()
            if (groups and groups[-1][0] == kind and kind != "loop" and k != marker
                    and (kind == "keep" or groups[-1][2] + size <= self.part_lines)
                    and not (kind == "part" and pending & _names(s, ast.Store))):
                groups[-1][1].append(k)
                groups[-1][2] += size
            else:
                groups.append([kind, [k], size])
        for g in groups:  # a few lines are not worth a function of their own
            if g[0] == "part" and g[2] < MIN_PART:
                g[0] = "keep"
        return groups

    def deferred(self, s) -> str | None:
        """The name ``s`` appends to a tape, when ``s`` is ``tape.append(name)`` on one line:
        a part holding it returns ``name`` and its call appends it (the list stays typed in
        the function that made it, and a loop that tapes can be cut all the same)."""
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                and s.lineno == s.end_lineno):
            return None
        call = s.value
        if (isinstance(call.func, ast.Attribute) and call.func.attr == "append"
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.empty
                and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
                and not call.keywords):
            return call.args[0].id
        return None

    def shares_list(self, s, adjoint: bool) -> bool:
        """Whether ``s`` names a list made empty (a tape) that is named outside it too: Numba
        types an empty list by what is appended to it in the same function, so all that names
        it stays in one function, the entry, up to the adjoint pass, which finds a list the
        forward pass made typed (a list the adjoint pass makes stays in the entry)."""
        counts = collections.Counter(n.id for n in ast.walk(s) if isinstance(n, ast.Name))
        return any(0 < counts[n] < self.mentions[n] for n in self.empty
                   if not (adjoint and n in self.forward_made))

    def cut(self, stmts, first, live, depth, adjoint=False, sure=frozenset()):
        """The lines (text, source line) standing for ``stmts`` (from source line
        ``first``, indented ``depth`` + 1 levels), whose variables ``live`` are read after
        them and ``sure`` are set on every path before them; parts go to ``self.defs``. A
        run whose inputs are not all surely set before it, or whose outputs not all surely
        set after it, stays where it is: its call would pass or return a name that may be
        unbound (set under a branch, read under the same branch), where the lines themselves
        never read it unset."""
        lines = self.lines
        starts, prev_end = [], first - 1
        for s in stmts:
            starts.append(prev_end + 1)
            prev_end = s.end_lineno
        marker = next((k for k, st in enumerate(starts) if depth == 0 and any(
            lines[i - 1].strip().startswith("# -- adjoint pass")
            for i in range(st, stmts[k].lineno))), None)
        if depth == 0:  # the lists the forward pass makes are typed in the adjoint pass
            self.forward_made = set() if marker is None else {
                t.id for s in stmts[:marker] for n in ast.walk(s)
                if isinstance(n, ast.Assign) and _is_empty_container(n.value)
                for t in n.targets if isinstance(t, ast.Name)}
        groups = self.groups(stmts, starts, marker, adjoint)
        # liveness, backwards: what each group must hand on
        ins, outs, live_at = [None] * len(groups), [None] * len(groups), [None] * len(groups)
        for gi in range(len(groups) - 1, -1, -1):
            block = [stmts[k] for k in groups[gi][1]]
            exposed, surely_set = _exposed(block)
            # the appends a part defers run after it: they read what it returns
            own = [s for s in block if groups[gi][0] != "part" or self.deferred(s) is None]
            appended = {self.deferred(s) for s in block} - {None}
            own_exposed, _ = _exposed(own)
            written = set()
            for s in own:
                written |= _names(s, ast.Store)
            live_at[gi] = set(live)
            outs[gi] = sorted(written & (live | appended) & self.local)
            ins[gi] = sorted(own_exposed & self.local)
            live = (live - surely_set) | exposed
        pad = "    " * (depth + 1)
        out = []
        sure = set(sure) | set(self.params)
        for gi, (kind, idx, _) in enumerate(groups):
            a, b = starts[idx[0]], stmts[idx[-1]].end_lineno
            block = [stmts[k] for k in idx]
            _, sets = _exposed(block)
            if kind == "part" and (len(ins[gi]) > MAX_ARGS or len(outs[gi]) > MAX_RETURNS or not (
                    set(ins[gi]) <= sure and set(outs[gi]) <= sure | sets)):
                kind = "keep"
            if kind == "keep":
                out += [(lines[i - 1], i) for i in range(a, b + 1)]
            elif kind == "loop":
                loop = stmts[idx[0]]
                head_end = loop.body[0].lineno - 1
                # the comments before the body's first statement go with the body
                while head_end > loop.lineno and lines[head_end - 1].strip().startswith("#"):
                    head_end -= 1
                out += [(lines[i - 1], i) for i in range(a, head_end + 1)]
                exposed, _ = _exposed_one(loop)
                around = live_at[gi] | exposed
                targets = _names(loop.target, ast.Store) if isinstance(loop, ast.For) else set()
                out += self.cut(loop.body, head_end + 1, around, depth + 1,
                                adjoint or marker is not None and idx[0] >= marker,
                                sure | targets)
            else:
                later = [stmts[k] for k in idx if self.deferred(stmts[k]) is not None]
                skip = {s.lineno for s in later}
                if len(later) == len(idx):  # appends only: no part
                    out += [(lines[i - 1], i) for i in range(a, b + 1)]
                else:
                    out.append((pad + self.part(idx, stmts, a, b, ins[gi], outs[gi], depth,
                                                skip), 0))
                    out += [(lines[s.lineno - 1], s.lineno) for s in later]
            sure |= sets
        return out

    def part(self, idx, stmts, a, b, ins, outs, depth, skip=frozenset()):
        """Write the part of source lines a..b, but those in ``skip``, into ``self.defs``;
        return its call."""
        lines, cut = self.lines, 4 * depth
        part = f"{self.name}_part{len(self.parts) + 1}"
        self.parts.append(part)
        args = [p for p in self.params if p in ins] + [v for v in ins if v not in self.params]
        self.defs.append((f"def {part}({', '.join(args)}):", 0))
        doc = (f'    """Lines {a}-{b} of {self.name}, a function of its own: compiled apart, '
               'in less time."""')
        self.defs.append((doc, 0))
        for i in range(a, b + 1):
            if i in skip:
                continue
            text = lines[i - 1]
            self.defs.append((text[cut:] if text[:cut].strip() == "" else text, i))
        if outs:
            self.defs.append((f"    return {', '.join(outs)}" + ("," if len(outs) == 1 else ""),
                              0))
        self.defs += [("", 0), ("", 0)]
        call = f"{part}({', '.join(args)})"
        if outs:
            call = f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}"
        return call


def split_function(source: str, name: str, split_lines: int | None = None,
                   part_lines: int | None = None):
    """``source`` (a generated module) with its function ``name`` cut into parts when it is
    longer than ``split_lines`` lines. Returns ``(source, parts, origin)``: the new module, the
    names of the parts (in order; empty when not cut), and for each line of the new module the
    number (from 1) of the line of ``source`` it is, or 0 for a line the cut wrote."""
    split_lines = SPLIT_LINES if split_lines is None else split_lines
    part_lines = PART_LINES if part_lines is None else part_lines
    lines = source.split("\n")
    unchanged = (source, [], list(range(1, len(lines) + 1)))
    tree = ast.parse(source)
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name), None)
    if fn is None or fn.end_lineno - fn.lineno + 1 <= split_lines:
        return unchanged
    if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.decorator_list:
        return unchanged
    body = list(fn.body)
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc = body.pop(0)
    if not body:
        return unchanged
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    local = set(params)
    for s in body:
        local |= _names(s, ast.Store)
    cutter = _Cutter(fn, lines, name, params, local, part_lines)
    first = doc.end_lineno + 1 if doc is not None else body[0].lineno
    entry = cutter.cut(body, first, set(), 0)
    if len(cutter.parts) < 2:
        return unchanged
    head = [(lines[i - 1], i) for i in range(1, fn.lineno)]
    top = [(lines[i - 1], i) for i in range(fn.lineno, first)]  # the def and its docstring
    tail = [(lines[i - 1], i) for i in range(fn.end_lineno + 1, len(lines) + 1)]
    new = head + cutter.defs + top + entry + tail
    return "\n".join(t for t, _ in new), cutter.parts, [i for _, i in new]
