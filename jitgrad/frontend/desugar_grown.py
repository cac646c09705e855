"""Arrays grown in a loop, rewritten as the list of their pieces joined after it.

``X = np.hstack([X, col])`` on each iteration of a loop makes a carried array that changes
shape from one iteration to the next, which jitgrad's gradient does not keep (it holds one
array of the carried array's shape for its adjoint). Joining is associative, so the loop

    for i in range(n):              _X_parts = []
        ...                         for i in range(n):
        X = np.hstack([X, col])         ...
        ...                  ->         _X_parts.append(col)
                                        ...
                                    X = np.hstack([X, np.hstack(_X_parts)])

computes the same ``X``: a list built in a loop, which the list lowering (`desugar_lists`)
makes an array of its pieces, allocated before the loop.

Takes a function's AST and the function (its globals say what ``np.hstack`` is); rewrites
the AST in place, before the lists are lowered. Guarantees: only a ``for`` loop whose count
is not written out (``range(n)``, not ``range(3)``, whose iterations the builder unrolls) is
rewritten (a list appended to in a ``while`` loop is not an array the builder allocates), for a name ``X`` assigned in its body (outside any loop nested in it) exactly
once, by ``np.hstack``, ``np.vstack``, ``np.column_stack`` or ``np.concatenate`` of
``[X, piece]`` (its ``axis=`` kept), or ``np.append(X, piece[, axis])``, and read or
assigned nowhere else in the loop (its test, iterable and ``else`` included; the piece does
not read it). ``np.append`` without an axis flattens: its pieces are ``np.ravel(piece)``,
and the join ``np.append(X, np.concatenate(parts))``. New nodes carry the location of the
statement they replace; the loop, and the code around it, are otherwise as written.
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from jitgrad.frontend.desugar import SCOPES, Fresh, hashable, locate, replace_statement

# How each NumPy function that joins arrays takes them: "sequence" (a list or tuple of the
# arrays, then ``axis``) or "pair" (``np.append(arr, values, axis)``)
JOINS = {np.hstack: "sequence", np.vstack: "sequence", np.column_stack: "sequence",
         np.concatenate: "sequence", np.append: "pair"}
_LOOPS = (ast.For, ast.While)


def desugar_grown(fn_node: ast.FunctionDef, fn, fresh: Fresh) -> None:
    """Rewrite the arrays ``fn_node`` grows in its loops (see the module)."""
    globals_ = getattr(fn, "__globals__", {})
    fn_node.body = _blocks(fn_node.body, globals_, fresh)


def _blocks(stmts: list, globals_, fresh) -> list:
    """``stmts`` with their loops rewritten, the innermost first."""
    out = []
    for s in stmts:
        if not isinstance(s, SCOPES + (ast.FunctionDef, ast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, _blocks(getattr(s, field), globals_, fresh))
            for h in getattr(s, "handlers", []):
                h.body = _blocks(h.body, globals_, fresh)
        if isinstance(s, ast.For) and not _count_written_out(s):
            out += _grown(s, globals_, fresh)
        else:
            out.append(s)
    return out


def _count_written_out(loop) -> bool:
    """A ``for`` over ``range`` of literals, or over a literal tuple or list."""
    it = loop.iter
    if isinstance(it, (ast.Tuple, ast.List)):
        return True
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
        it.func.id == "range" and all(isinstance(a, ast.Constant) for a in it.args)


def _grown(loop, globals_, fresh) -> list:
    """The statements that replace ``loop``: for each array it grows, the list of pieces
    before it, and the join after it."""
    before, after = [], []
    for name, stmt, join in _growths(loop, globals_):
        parts = fresh(f"{name}_parts")
        append = ast.Expr(ast.Call(ast.Attribute(ast.Name(parts, ast.Load()), "append",
                                                 ast.Load()), [join.piece(stmt.value)], []))
        replace_statement(loop, stmt, [append])
        before.append(ast.Assign([ast.Name(parts, ast.Store())], ast.List([], ast.Load())))
        after.append(ast.Assign([ast.Name(name, ast.Store())],
                                join.joined(name, ast.Name(parts, ast.Load()))))
        for new in (before[-1], after[-1], append):
            locate(new, stmt)
    return before + [loop] + after


class _Join:
    """One growing call: its function node, its arguments, and how to join the pieces."""

    def __init__(self, call: ast.Call, form: str, fn):
        self.call, self.form, self.fn = call, form, fn

    def axis(self) -> list:
        """The call's ``axis`` as keywords (None: absent), for both joins."""
        c = self.call
        k = 1 if self.form == "sequence" else 2
        if len(c.args) > k:
            return [ast.keyword("axis", c.args[k])]
        return [kw for kw in c.keywords if kw.arg == "axis"]

    def flattens(self) -> bool:
        return self.fn is np.append and not self.axis()

    def piece(self, call: ast.Call):
        p = call.args[0].elts[1] if self.form == "sequence" else call.args[1]
        if self.flattens():
            return ast.Call(self._numpy("ravel"), [p], [])
        return p

    def joined(self, name: str, parts: ast.expr) -> ast.expr:
        """``name`` and the pieces in ``parts`` joined as the call joined them one by one."""
        axis = self.axis()
        if self.flattens():
            inner = ast.Call(self._numpy("concatenate"), [parts], [])
            return ast.Call(copy.deepcopy(self.call.func), [ast.Name(name, ast.Load()), inner],
                            [])
        inner = ast.Call(copy.deepcopy(self.call.func), [parts], copy.deepcopy(axis))
        if self.form == "pair":
            return ast.Call(copy.deepcopy(self.call.func),
                            [ast.Name(name, ast.Load()), inner], copy.deepcopy(axis))
        both = ast.List([ast.Name(name, ast.Load()), inner], ast.Load())
        return ast.Call(copy.deepcopy(self.call.func), [both], copy.deepcopy(axis))

    def _numpy(self, attr: str):
        return ast.Attribute(copy.deepcopy(self.call.func.value), attr, ast.Load())


def _join_of(stmt, globals_) -> tuple[str, _Join] | None:
    """(name, join) of ``name = np.hstack([name, piece])`` and its kin, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)):
        return None
    name, call = stmt.targets[0].id, stmt.value
    fn = _resolve(call.func, globals_)
    form = JOINS.get(fn) if hashable(fn) else None
    if form is None or any(kw.arg != "axis" for kw in call.keywords):
        return None
    if form == "sequence":
        ok = len(call.args) in (1, 2) and isinstance(call.args[0], (ast.List, ast.Tuple)) and \
            len(call.args[0].elts) == 2 and _is_name(call.args[0].elts[0], name) and \
            (fn is np.concatenate or (len(call.args) == 1 and not call.keywords))
    else:
        ok = len(call.args) in (2, 3) and _is_name(call.args[0], name)
    join = _Join(call, form, fn)
    if not ok or join.flattens() and not isinstance(call.func, ast.Attribute):
        return None
    return name, join


def _growths(loop, globals_) -> list:
    """(name, statement, join) of each array ``loop`` grows and reads nowhere else."""
    found = {}
    for stmt in _own_statements(loop.body):
        grown = _join_of(stmt, globals_)
        if grown is not None:
            found.setdefault(grown[0], []).append((stmt, grown[1]))
    out = []
    for name, uses in found.items():
        if len(uses) != 1:
            continue
        stmt, join = uses[0]
        piece = join.piece(stmt.value)
        others = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
        own = [stmt.targets[0], stmt.value.args[0].elts[0] if join.form == "sequence"
               else stmt.value.args[0]]
        if any(n not in own for n in others) or any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(piece)):
            continue
        out.append((name, stmt, join))
    return out


def _own_statements(stmts: list):
    """The statements in ``stmts`` and the blocks nested in them, not inside a nested loop or
    a ``def``."""
    for s in stmts:
        yield s
        if isinstance(s, _LOOPS + (ast.FunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list):
                yield from _own_statements(block)
        for h in getattr(s, "handlers", []):
            yield from _own_statements(h.body)


def _resolve(node, globals_):
    """The object ``np.hstack`` (or a name bound to it) spells in the module's globals."""
    if isinstance(node, ast.Name):
        return globals_.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, globals_)
        return getattr(base, node.attr, None) if base is not None else None
    return None



def _is_name(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
