"""Numba source for the parallel rewrite's operations (`transforms.parallel`).

`write_eqn` writes the chunk operations (chunk_count, chunk_at, parts_*, reuse) as Numba source; after a
kernel is written, `outline_chunks` moves each ``prange`` chunk body into a serial function of
its own. Takes the emitter's lines; guarantees the same sums at any thread count (partial
results are combined in chunk order).
"""

from __future__ import annotations

import ast
import re

from jitgrad.backend.numba.lowering import allocation
from jitgrad.core.ir import Eqn

# The chunk operations of `transforms.parallel`'s rewrite, written by `write_eqn`.
PRIMS = {"chunk_count", "chunk_at", "parts_alloc", "parts_set", "parts_add", "parts_max",
         "reuse"}


def write_eqn(w, e: Eqn, a: list[str], indent: int) -> None:
    """The source of one chunk operation (``w``: the emitter, `emit._Writer`)."""
    out = e.outs[0].name if e.outs else None
    p = e.params
    if e.prim == "chunk_count" and p.get("fixed") is not None:
        w.line(indent, f"{out} = {p['fixed']}")
    elif e.prim == "chunk_count":  # trips, work per iteration, then the accumulated arrays
        terms = [f"{x}.size" for x in a[2:]] + [str(p["scalars"])] * bool(p["scalars"])
        args = [a[0], a[1], " + ".join(terms) or "0"]
        # (a bare number would be typed as a literal: a signature of its own for each)
        args = [f"np.int64({x})" if x.lstrip("-").isdigit() else x for x in args]
        w.line(indent, f"{out} = _rt.chunk_count({', '.join(args)})")
    elif e.prim == "chunk_at":  # start + (c*T // n) * step: the first iteration of chunk c
        c, total, start, step, n = a
        k = f"({c} + 1) * {total} // {n}" if p["next"] else f"{c} * {total} // {n}"
        expr = k if step == "1" else f"({k}) * {step}"
        expr = expr if start == "0" else f"{start} + {expr}"
        expr = expr if not p["offset"] else f"{expr} - {-p['offset']}"
        w.line(indent, f"{out} = {expr}")
    elif e.prim == "parts_alloc":  # not zeroed: every chunk stores its whole slot (parts_set)
        if len(e.ins) > 1:
            shape = f"({a[0]},) + {a[1]}.shape"
            w.line(indent, f"{out} = {allocation('empty', shape)}")
        else:
            w.line(indent, f"{out} = {allocation('empty', a[0], p['kind'])}")
    elif e.prim == "reuse":  # a work array allocated once per chunk, refilled per iteration
        w.line(indent, f"{out} = {a[0]}")
        if p["fill"] is not None:
            w.line(indent, f"{out}[{', '.join([':'] * e.outs[0].type.ndim)}] = {p['fill']}")
    elif e.prim == "parts_set" and e.ins[2].type.ndim:  # see `runtime.put_part`
        w.line(indent, f"_rt.put_part({a[0]}, {a[1]}, {a[2]})")
    elif e.prim == "parts_set":
        w.line(indent, f"{a[0]}[{a[1]}] = {a[2]}")
    elif e.prim == "parts_add":  # in chunk order: the same sum at any thread count
        w.line(indent, f"for {p['name']} in range({a[2]}):")
        w.line(indent + 1, f"{a[0]} += {a[1]}[{p['name']}]")
    elif e.prim == "parts_max":
        w.line(indent, f"for {p['name']} in range({a[2]}):")
        w.line(indent + 1, f"{a[0]} = _rt.larger({a[0]}, {a[1]}[{p['name']}])")
    else:
        raise AssertionError(e.prim)


_PRANGE_LINE = re.compile(r"^( *)for (\w+) in _prange\((.+)\):$")


def outline_chunks(lines: list[str], locs: list, start: int, kernel: str) -> None:
    """Move the body of each chunk loop of the kernel written at ``lines[start:]`` into a
    function of its own, compiled by Numba as serial code and called from the ``prange`` loop
    (its lines and their `Loc` s move with it, before the kernel). Inside Numba's parallel
    loop the same body ran 1.3x slower (the loop-GMM adjoint: 7.5 ms against 6.0 ms), outside
    at the serial gradient's speed. A body that binds a name the kernel reads after the loop
    stays where it is.

    The chunk counter goes in as ``np.int64(c)``: Numba types it ``int64`` when it types the
    kernel but ``uint64`` when it lowers the parallel loop, and compiled the chunk function
    twice, once per signature (the ``prange`` cold program: 1.5-1.9 s -> 1.05-1.25 s)."""
    text = "\n".join(lines[start:])
    tree = ast.parse(text)
    kernel_names = {a.arg for a in tree.body[0].args.args} | _stored(tree)
    found = [k for k in range(start, len(lines)) if _PRANGE_LINE.match(lines[k])]
    outlined = []
    for n, at in enumerate(reversed(found)):
        prange_line = _PRANGE_LINE.match(lines[at])
        indent, counter = len(prange_line.group(1)), prange_line.group(2)
        end = at + 1
        while end < len(lines) and (len(lines[end]) - len(lines[end].lstrip())) > indent:
            end += 1
        body = [line[indent:] for line in lines[at + 1:end]]  # indented as a function's
        inner = ast.parse("def _f():\n" + "\n".join(body))
        stored = _stored(inner)
        if stored & _read_first(lines[end:]):
            continue
        params = []
        for node in ast.walk(inner):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    node.id not in stored and node.id in kernel_names and node.id not in params:
                params.append(node.id)
        name = f"{kernel}_chunk{len(found) - 1 - n}"
        args = [f"np.int64({x})" if x == counter else x for x in params]
        call = " " * (indent + 4) + f"{name}({', '.join(args)})"
        body_locs = locs[at + 1:end]
        lines[at + 1:end] = [call]
        locs[at + 1:end] = [body_locs[0] if body_locs else None]
        fn = ["@_jit", f"def {name}({', '.join(params)}):",
              '    """One chunk of a parallel loop: Numba compiles it as serial code."""']
        outlined.append((fn + body + ["", ""], [None] * len(fn) + body_locs + [None, None]))
    for fn_lines, fn_locs in outlined:  # (the last loop's first: they end up in order)
        lines[start:start] = fn_lines
        locs[start:start] = fn_locs


def _read_first(lines: list[str]) -> set[str]:
    """Names the rest of a kernel (``lines``, the end of its body) may read before binding
    them: read on or before the line of their first binding."""
    tree = ast.parse("def _f():\n" + "\n".join(line for line in lines if line.strip()))
    first_store: dict[str, int] = {}
    loads = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                first_store[node.id] = min(first_store.get(node.id, node.lineno), node.lineno)
            else:
                loads.append(node)
    return {n.id for n in loads if n.lineno <= first_store.get(n.id, n.lineno)}


def _stored(tree) -> set[str]:
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
