"""An entry a loop accumulates into, held in a local variable while the loop runs.

`emit` writes a reduction along a nest's innermost axis as an update of one entry per
iteration (softmax's row sum: ``tmp_sum[_i0, _i1, _i2, 0] += e``). LLVM keeps such an entry in
memory, loaded and stored every iteration, because it cannot tell that the loop's other stores
(``tmp_out[_i0, _i1, _i2, _i3] = e``) never write it: a chain of a store and a load per entry,
which also keeps the loop from being vectorised. Where the entry is one the loop cannot reach
any other way, it is read into a local before the loop, updated there, and stored after it.

`hold_accumulators` does that on the generated source's text and its Python syntax tree (like
`split`, a property of the compiled form). Takes the source and the entry's name; returns the source and, per line, the input line it came from. In function ``name``, an
innermost loop (``for _ik in range(...)`` of `emit`'s nests, holding no loop) gets
``_accN = a[I]`` before it, its reads of ``a[I]`` read ``_accN``, its writes write it (converted
as the array stores it: ``_rt.entry_of(a, v)``, rounded to float32 in a float32 build), and
``a[I] = _accN`` after it, when:

* ``a`` is an array the function allocated (``_rt.empty((...))`` and its kin, bound once)
  whose memory no other name may hold (`_Function.may_share`);
* every mention of ``a`` in the loop is the entry ``a[I]``, one index ``I`` throughout, made of
  the enclosing loops' counters and zeros, none bound in the loop, and the loop writes it;
* each counter in ``I`` runs over the length of ``a``'s axis it indexes and each zero indexes an
  axis of length 1 (so ``a[I]`` is an entry even when the loop runs no iteration);
* the loop leaves early nowhere (``break``, ``continue``, ``return``).

Guarantees: the entry goes through the same operations, on the same values, in the same order
(each write rounded as the array's store rounds it), and ends with the same value; nothing else
reads it while the loop runs.
"""

from __future__ import annotations

import ast

from jitgrad.core import ops
from jitgrad.prims import primitives

EXITS = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom)
# `runtime` helpers that make a fresh array whose shape is their first argument (a tuple of
# sizes): ``_rt.empty((n, m))``, ``zeros``, ``ones``, ``full``.
ALLOCATORS = frozenset(n for n, f in ops.FLAGS.items()
                       if f.allocates and f.buffer and f.sizes_from is not None)
# `runtime` helpers whose result is a new array, never one of their operands or a view of
# one (the elementwise primitives'): an array passed to them shares no memory with the result.
FRESH_RESULTS = frozenset(n for n, p in primitives.PRIMITIVES.items() if p.elementwise
                          and not (ops.flags(n).view or ops.flags(n).may_return_input
                                   or ops.flags(n).same_value))


def hold_accumulators(source: str, name: str) -> tuple[str, list[int]]:
    """``(source, origin)``: see the module docstring; ``origin[k]`` is the input line of
    output line ``k`` (1-based; ``origin[0]`` is 0)."""
    lines = source.split("\n")
    tree = ast.parse(source)
    fdef = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name),
                None)
    if fdef is None:
        return source, list(range(len(lines) + 1))
    fn = None  # (made on the first loop with a candidate: most functions have none)
    used = None
    edits = []  # (loop, [(name, index source, [(node, kind)])])
    taken = 0

    def visit(node, enclosing):
        nonlocal fn
        for child in ast.iter_child_nodes(node):
            if _counter(child) is not None:
                inner = enclosing + [child]
                if not any(isinstance(n, (ast.For, ast.While)) for b in child.body
                           for n in ast.walk(b)):
                    if not _candidate(child):
                        continue
                    fn = fn or _Function(fdef)
                    held = _held(child, enclosing, fn, lines)
                    if held:
                        edits.append((child, held))
                else:
                    visit(child, inner)
            elif isinstance(child, (ast.For, ast.While, ast.If)):
                visit(child, enclosing)
    visit(fdef, [])
    if not edits:
        return source, list(range(len(lines) + 1))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    reads: dict[int, list] = {}  # line -> [(start, end, local)]
    writes: dict[int, tuple] = {}  # line -> (statement, kind, array, local)
    before, after = {}, {}
    for loop, held in edits:
        indent = " " * loop.col_offset
        for arr, index, uses in held:
            while f"_acc{taken}" in used:
                taken += 1
            acc = f"_acc{taken}"
            taken += 1
            entry = f"{arr}[{index}]"
            before.setdefault(loop.lineno, []).append(f"{indent}{acc} = {entry}")
            after.setdefault(loop.end_lineno, []).append(f"{indent}{entry} = {acc}")
            for node, kind, stmt in uses:
                if kind == "read":
                    reads.setdefault(node.lineno, []).append(
                        (node.col_offset, node.end_col_offset, acc))
                else:
                    writes[node.lineno] = (stmt, kind, arr, acc)

    def render(k, start, end):
        text = lines[k - 1]
        inside = sorted((r for r in reads.get(k, ()) if start <= r[0] and r[1] <= end),
                        reverse=True)
        part = text[start:end]
        for s0, s1, acc in inside:
            part = part[:s0 - start] + acc + part[s1 - start:]
        return part

    line_text = {}
    for k in range(1, len(lines) + 1):
        if k not in reads and k not in writes:
            line_text[k] = lines[k - 1]
            continue
        n = len(lines[k - 1])
        if k not in writes:
            line_text[k] = render(k, 0, n)
            continue
        stmt, kind, arr, acc = writes[k]
        value = render(k, stmt.value.col_offset, stmt.value.end_col_offset)
        if kind == "update":
            value = f"{acc} {OPS[type(stmt.op)]} ({value})"
        line_text[k] = (render(k, 0, stmt.col_offset) + f"{acc} = _rt.entry_of({arr}, {value})"
                        + render(k, stmt.end_col_offset, n))
    out, origin = [], [0]
    for k in range(1, len(lines) + 1):
        for text in before.get(k, ()):
            out.append(text)
            origin.append(k)
        out.append(line_text[k])
        origin.append(k)
        for text in after.get(k, ()):
            out.append(text)
            origin.append(k)
    return "\n".join(out), origin


OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _candidate(loop) -> bool:
    """Whether ``loop`` writes an entry whose index does not name its counter (cheap)."""
    counter = loop.target.id
    for n in ast.walk(loop):
        targets = n.targets if isinstance(n, ast.Assign) else (
            [n.target] if isinstance(n, ast.AugAssign) else ())
        for t in targets:
            if isinstance(t, ast.Subscript) and not any(
                    isinstance(m, ast.Name) and m.id == counter for m in ast.walk(t.slice)):
                return True
    return False


def _held(loop, enclosing, fn: _Function, lines) -> list:
    """[(array, index source, uses)] of the entries ``loop`` may hold (module docstring)."""
    if any(isinstance(n, EXITS) for n in ast.walk(loop)):
        return []
    parents = _parents(loop)
    bound_inside = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
    ranges = {x.target.id: x.iter for x in enclosing}
    found: dict[str, list] = {}
    bad = set()
    for n in ast.walk(loop):
        if not isinstance(n, ast.Name) or n.id not in fn.shapes:
            continue
        p = parents.get(id(n))
        if not (isinstance(p, ast.Subscript) and p.value is n) or p.lineno != p.end_lineno:
            bad.add(n.id)
            continue
        stmt = parents.get(id(p))
        if isinstance(stmt, ast.AugAssign) and stmt.target is p:
            if type(stmt.op) not in OPS or stmt.lineno != stmt.end_lineno:
                bad.add(n.id)
                continue
            kind = "update"
        elif isinstance(p.ctx, ast.Store):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and stmt.lineno == stmt.end_lineno):
                bad.add(n.id)
                continue
            kind = "store"
        else:
            kind, stmt = "read", None
        found.setdefault(n.id, []).append((p, kind, stmt))
    out = []
    for arr, uses in found.items():
        if arr in bad or fn.may_share(arr) or not any(k != "read" for _, k, _ in uses):
            continue
        texts = {ast.dump(p.slice) for p, _, _ in uses}
        if len(texts) != 1:
            continue
        sub = uses[0][0]
        idx = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        shape = fn.shapes[arr]
        if len(idx) != len(shape) or not all(_in_bounds(e, s, ranges, bound_inside, fn)
                                             for e, s in zip(idx, shape)):
            continue
        index = lines[sub.lineno - 1][sub.slice.col_offset:sub.slice.end_col_offset]
        out.append((arr, index, uses))
    return out


def _in_bounds(entry, size, ranges, bound_inside, fn: _Function) -> bool:
    """Whether index ``entry`` of an axis of length ``size`` is in it whenever the enclosing
    loops run: a zero of an axis of length 1, or an enclosing loop's counter over ``size``."""
    if isinstance(entry, ast.Constant) and entry.value == 0 and not isinstance(entry.value, bool):
        return isinstance(size, ast.Constant) and size.value == 1
    if not isinstance(entry, ast.Name) or entry.id in bound_inside or entry.id not in ranges:
        return False
    r = ranges[entry.id]
    return len(r.args) == 1 and fn.canonical(r.args[0]) == fn.canonical(size)


def _counter(node) -> int | None:
    """k for a nest's loop ``for _ik in range(...)`` (`emit`'s counters), else None."""
    if (isinstance(node, ast.For) and isinstance(node.target, ast.Name)
            and node.target.id.startswith("_i") and node.target.id[2:].isdigit()
            and not node.orelse and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range"
            and not node.iter.keywords):
        return int(node.target.id[2:])
    return None


def _allocation(stmt) -> tuple[str, list] | None:
    """(name, the shape's entries) of ``name = _rt.empty((a, b), ...)`` and its kin."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):
        return None
    f = stmt.value.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            and f.value.id == "_rt" and f.attr in ALLOCATORS and stmt.value.args
            and isinstance(stmt.value.args[0], ast.Tuple)):
        return None
    return stmt.targets[0].id, stmt.value.args[0].elts


def _stored_names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)}


class _Function:
    """What the function's top level says of its names: allocations, bindings, aliases."""

    def __init__(self, fdef: ast.FunctionDef):
        binds: dict[str, int] = {}
        for node in ast.walk(fdef):
            for n in _stored_names(node) if isinstance(node, (ast.Assign, ast.AugAssign,
                                                               ast.AnnAssign)) else ():
                binds[n] = binds.get(n, 0) + 1
        for a in fdef.args.args:
            binds[a.arg] = binds.get(a.arg, 0) + 1
        self.bound = set(binds)
        self.shared = None  # (`may_share`)
        self.shapes = {}
        for s in fdef.body:
            made = _allocation(s)
            if made and binds.get(made[0]) == 1:
                self.shapes[made[0]] = made[1]
        self.fdef = fdef

    def canonical(self, node) -> str:
        """``node``'s text with each ``a.shape[k]`` of an allocation as its shape's entry."""
        class Sizes(ast.NodeTransformer):
            def visit_Subscript(inner, n):
                v = n.value
                if (isinstance(v, ast.Attribute) and v.attr == "shape"
                        and isinstance(v.value, ast.Name) and v.value.id in self.shapes
                        and isinstance(n.slice, ast.Constant)
                        and isinstance(n.slice.value, int)):
                    entries = self.shapes[v.value.id]
                    if 0 <= n.slice.value < len(entries):
                        return inner.visit(entries[n.slice.value])
                return inner.generic_visit(n)
        return ast.dump(Sizes().visit(ast.parse(ast.unparse(node), mode="eval")))

    def may_share(self, name: str) -> bool:
        """Whether a name other than ``name`` may hold its memory: bound from an expression
        that mentions it other than by its shape or one entry (see `_entry_of`), or looped
        over; an array passed whole to a helper of `FRESH_RESULTS` is not."""
        if self.shared is None:
            self.shared = set()
            for node in ast.walk(self.fdef):
                if isinstance(node, ast.For):
                    self.shared |= _whole_names(node.iter, self)
                if not isinstance(node, ast.Assign):
                    continue
                v = node.value
                if (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute)
                        and isinstance(v.func.value, ast.Name) and v.func.value.id == "_rt"
                        and v.func.attr in FRESH_RESULTS and not v.keywords):
                    for a in v.args:
                        if not isinstance(a, ast.Name):
                            self.shared |= _whole_names(a, self)
                else:
                    self.shared |= _whole_names(v, self)
        return name in self.shared


def _entry_of(sub, fn: _Function) -> list | None:
    """The index entries of ``a[i, j]`` reading one entry of allocation ``a``, else None."""
    if not (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name)):
        return None
    shape = fn.shapes.get(sub.value.id)
    idx = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    if shape is None or len(idx) != len(shape):
        return None
    for e in idx:
        if any(isinstance(n, (ast.Slice, ast.Starred, ast.Call, ast.Subscript))
               for n in ast.walk(e)):
            return None
    return idx


def _whole_names(expr, fn: _Function) -> set[str]:
    """The names ``expr`` mentions other than as ``name.shape`` or one entry."""
    skip = set()
    for n in ast.walk(expr):
        if (isinstance(n, ast.Attribute) and n.attr == "shape"
                or isinstance(n, ast.Subscript) and _entry_of(n, fn) is not None):
            skip.add(id(n.value))
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name) and id(n) not in skip}


def _parents(node) -> dict:
    out = {}
    for p in ast.walk(node):
        for c in ast.iter_child_nodes(p):
            out[id(c)] = p
    return out
