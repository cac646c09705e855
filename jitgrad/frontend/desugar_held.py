"""A fresh list an object's attribute holds and the statements after it change in place,
rewritten as a name's list, stored back into the attribute after them.

jitgrad changes a list in place through a name of the function (`build_containers.Containers
.change`), so lifecontingencies' life table, ``self.lx = [radix]`` then
``self.lx.append(self.lx[-1] * (1 - q))`` in a loop, is read as the name's list it amounts to:

    self.lx = [radix]                         _lx_c0 = [radix]
    for q in qx[:-1]:                         for q in qx[:-1]:
        self.lx.append(self.lx[-1] * ...) ->      _lx_c0.append(_lx_c0[-1] * ...)
    self.lx = np.array(self.lx)               _lx_c0 = np.array(_lx_c0)
    self.dx = self.lx * qx                    self.dx = _lx_c0 * qx
                                              self.lx = _lx_c0
                                              del _lx_c0

Takes a function's AST; rewrites it in place, before the lists are lowered (`desugar_lists`).
Guarantees: the values are Python's. The attribute ``obj.X`` is assigned a fresh list (a
display, a list comprehension or ``list(...)``: nothing else holds it), and the statements
rewritten are the run that follows it in its block in which ``obj`` appears only as the holder
of attributes read or written (``obj.a``: never alone, never a method call ``obj.m(...)``,
never rebound), so nothing reaches the list but ``obj.X`` (now the name) or the names the run
binds to it, which the builder's rules for names cover. The run stops before a statement that
could leave it other than at its end (``return``, ``yield``, a ``break`` or ``continue`` of a
loop around it) or defines a function, lambda or class; nothing inside a ``try`` is
rewritten (an exception caught there would leave the attribute unset). Only a run that
changes the list in place is rewritten; new nodes carry the assignment's location.
"""

from __future__ import annotations

import ast

from jitgrad.frontend.desugar import Fresh, locate

# The methods of a list that change it in place
_CHANGES = frozenset({"append", "extend", "insert", "pop", "remove", "sort", "reverse",
                      "clear"})
_LEAVES = (ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal,
           ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def desugar_held(fn_node: ast.FunctionDef, fresh: Fresh) -> None:
    """Rewrite the lists ``fn_node`` changes through an object's attribute (see the module)."""
    fn_node.body = _block(fn_node.body, fresh)


def _block(stmts: list, fresh) -> list:
    for s in stmts:
        if isinstance(s, (ast.Try, *_LEAVES)) or s.__class__.__name__ == "TryStar":
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list):
                setattr(s, field, _block(getattr(s, field), fresh))
    out, k = [], 0
    while k < len(stmts):
        s = stmts[k]
        held = _fresh_list_attribute(s)
        if held is None:
            out.append(s)
            k += 1
            continue
        obj, attr = held
        end = k + 1
        while end < len(stmts) and _only_attributes(stmts[end], obj):
            end += 1
        run = stmts[k + 1:end]
        if not any(_changes(r, obj, attr) for r in run):
            out.append(s)
            k += 1
            continue
        name = fresh(attr)
        start = ast.Assign(targets=[ast.Name(name, ast.Store())], value=s.value)
        rename = _AttributeAsName(obj, attr, name)
        store = ast.Assign(targets=[ast.Attribute(ast.Name(obj, ast.Load()), attr, ast.Store())],
                           value=ast.Name(name, ast.Load()))
        unbind = ast.Delete(targets=[ast.Name(name, ast.Del())])
        new = [start, *(rename.visit(r) for r in run), store, unbind]
        for n in (start, store, unbind):
            locate(n, s)
        out += new
        k = end
    return out


def _fresh_list_attribute(s) -> tuple[str, str] | None:
    """(obj, X) where ``s`` is ``obj.X = <a fresh list>``."""
    if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
        return None
    t, v = s.targets[0], s.value
    if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)):
        return None
    fresh_list = isinstance(v, (ast.List, ast.ListComp)) or (
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "list")
    return (t.value.id, t.attr) if fresh_list else None


def _only_attributes(s, obj) -> bool:
    """Whether ``obj`` appears in ``s`` only as ``obj.a`` (not a method call), and ``s``
    cannot leave the run but at its end."""
    parents = {id(c): p for p in ast.walk(s) for c in ast.iter_child_nodes(p)}
    for n in ast.walk(s):
        if isinstance(n, (*_LEAVES, ast.Try)) or \
                n.__class__.__name__ == "TryStar":
            return False
        if isinstance(n, ast.Name) and n.id == obj:
            p = parents.get(id(n))
            if not (isinstance(p, ast.Attribute) and p.value is n):
                return False
            q = parents.get(id(p))
            if isinstance(q, ast.Call) and q.func is p:
                return False
    return not _escapes(s, inside_loop=False)


def _escapes(node, inside_loop: bool) -> bool:
    """Whether a ``break``/``continue`` in ``node`` belongs to a loop around it."""
    if isinstance(node, (ast.Break, ast.Continue)):
        return not inside_loop
    if isinstance(node, _LOOPS):
        return any(_escapes(c, False) for c in node.orelse) or \
            _escapes(node.iter if not isinstance(node, ast.While) else node.test, inside_loop)
    return any(_escapes(c, inside_loop) for c in ast.iter_child_nodes(node))


def _is_attr(node, obj, attr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and \
        isinstance(node.value, ast.Name) and node.value.id == obj


def _changes(s, obj, attr) -> bool:
    """Whether ``s`` changes the list ``obj.attr`` in place."""
    for n in ast.walk(s):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in _CHANGES and _is_attr(n.func.value, obj, attr):
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, (ast.Store, ast.Del)) and \
                _is_attr(n.value, obj, attr):
            return True
        if isinstance(n, ast.AugAssign) and _is_attr(n.target, obj, attr):
            return True
    return False


class _AttributeAsName(ast.NodeTransformer):
    """``obj.X`` (read or written) as the name ``name``."""

    def __init__(self, obj, attr, name):
        self.obj, self.attr, self.name = obj, attr, name

    def visit_Attribute(self, node):
        if _is_attr(node, self.obj, self.attr):
            return ast.copy_location(ast.Name(self.name, node.ctx), node)
        self.generic_visit(node)
        return node
