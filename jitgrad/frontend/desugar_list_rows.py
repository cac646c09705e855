"""Lists that `desugar_lists` makes arrays of their items, beyond ``out = []`` and a loop that
only appends: ``list(x)`` of an array (`list_copies`), a list read in the loop that appends to
it (`reads_while_appending`: the items appended so far), lists made by a tuple assignment or
held by a dict (`split_displays`, `entry_appends`).

Takes the `desugar_lists._Lists` of a function (its AST and the reads `list_reads.ListReads`
checks) and rewrites the AST in place, or raises `UnsupportedError` naming the user's line.
Guarantees:

* ``list(x)``, with the list displays ``+`` joins it to (``[inf] + list(d) + [inf]``), becomes
  ``%list_of(x)`` (the array of ``x``'s rows where ``x`` is an array whose length is known only
  at run time; Python's ``list`` otherwise) only where every read of it (of the name bound to
  it) is one an array of its items gives the same meaning to; elsewhere it stays as written.
  ``+`` of it and a display is a join (`list_reads.joined_items`), never NumPy's addition.
* In the loop that appends to ``out`` (an array written at ``k``, the count of the items so
  far), ``out[i]`` reads ``out[i % k]`` after a check that raises IndexError where Python's list
  would (``-k <= i < k``; for a constant ``c >= 0``, ``out[c]`` after ``k > c``), and ``len(out)``
  is ``k``. The index is a number, a name or arithmetic of them, the read not under a
  conditional expression, ``and``/``or``, a comprehension, a nested function or a ``while``
  test; any other read there is refused, saying what to write.
* ``a, b = [], []`` before a loop appending to them is two assignments (two lists, not one
  empty tuple held twice) (`split_displays`); a ``for`` loop whose only reads of the dict
  ``d`` are ``d[K].append(v)`` (and ``if d:``) appends to ``_l = list(d[K])``, stored back
  after the loop where ``d`` is a dict (`entry_appends`; the builder refuses it where another
  name holds that list, `build_lists.check_list_rows`).
"""

from __future__ import annotations

import ast
import copy

from jitgrad.core.errors import UnsupportedError, instead
from jitgrad.frontend.desugar import SCOPES, locate, replace_statement
from jitgrad.frontend.list_reads import locate_as, store_names
from jitgrad.frontend.list_reads import name_node as _name


def _replace_child(holder, old, new) -> None:
    for field, value in ast.iter_fields(holder):
        if value is old:
            setattr(holder, field, new)
        elif isinstance(value, list) and any(v is old for v in value):
            value[next(k for k, v in enumerate(value) if v is old)] = new


def _mentions(node, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _call(fn_name, *args):
    return ast.Call(_name(fn_name), list(args), [])


def _parents(root) -> dict:
    return {id(c): p for p in ast.walk(root) for c in ast.iter_child_nodes(p)}


# -- list() of an array ----------------------------------------------------------------------

def list_copies(lists) -> None:
    """``list(x)`` as the module says; ``lists``: the function's `desugar_lists._Lists`."""
    lists.parents = _parents(lists.root)
    calls = [n for n in ast.walk(lists.root) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "list"
             and "list" not in lists.bound and "list" not in lists.globals
             and len(n.args) == 1 and not isinstance(n.args[0], ast.Starred)
             and not n.keywords]
    for call in calls:
        parent = lists.parents.get(id(call))
        if isinstance(parent, ast.For) and parent.iter is call:
            continue  # (`for v in list(x)`: the loop's own)
        expr = _joined_lists(lists, call)
        holder = lists.parents.get(id(expr))
        if (isinstance(holder, ast.Assign) and holder.value is expr
                and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
            what = lists.alias_misuse(holder.targets[0].id, expr)
        else:
            what = lists.misuse(expr)
        if not what:
            call.func = locate_as(_name("%list_of"), call.func)


def _joined_lists(lists, expr):
    """``expr`` (a list) and the list displays ``+`` joins to it, as ``%joined`` of them
    (`list_reads.joined_items`: Python's join of lists known while building, the rows of both
    where one is an array of its items); the outermost join."""
    while True:
        op = lists.parents.get(id(expr))
        if not (isinstance(op, ast.BinOp) and isinstance(op.op, ast.Add)):
            return expr
        other = op.right if op.left is expr else op.left
        if not (isinstance(other, ast.List) and not any(
                isinstance(e, ast.Starred) for e in other.elts)):
            return expr
        holder = lists.parents.get(id(op))
        call = locate_as(ast.Call(_name("%joined"), [op.left, op.right], []), op)
        _replace_child(holder, op, call)
        for a in (op.left, op.right):
            lists.parents[id(a)] = call
        lists.parents[id(call)] = holder
        expr = call


# -- lists made by other statements: `a, b = [], []`, a dict's list --------------------------

def split_displays(lists, s, stmts) -> list:
    """``nbrs, offs = [], []`` where a loop of ``stmts`` appends to one of them: one
    assignment each (two lists, each its own array), the displays reading neither
    name."""
    t, v = (s.targets[0], s.value) if isinstance(s, ast.Assign) and len(
        s.targets) == 1 else (None, None)
    if not (isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple)
            and len(t.elts) == len(v.elts)
            and all(isinstance(n, ast.Name) for n in t.elts)
            and all(isinstance(e, ast.List) for e in v.elts)):
        return [s]
    names = {n.id for n in t.elts}
    if len(names) < len(t.elts) or any(_mentions(e, n) for e in v.elts for n in names) \
            or not any(isinstance(u, ast.For) and lists.appends_in(u, n)
                       for u in stmts for n in names):
        return [s]
    return [locate_as(ast.Assign([_name(n.id, True)], e), s)
            for n, e in zip(t.elts, v.elts)]


def entry_appends(lists, loop) -> list:
    """A ``for`` loop whose only reads of the dict ``d`` are ``d[K].append(v)`` (``K`` a
    constant; POT's ``log['err'].append(err)``): ``_l = list(d[K])``, the loop appending to
    ``_l``, then ``d[K] = _l`` (the list held by the dict changed as a name's is; lowered
    as ``out = list(x)`` then appends is, `appended`)."""
    if not isinstance(loop, ast.For) or "list" in lists.bound or "list" in lists.globals:
        return [loop]
    found = {}
    for n in ast.walk(loop):
        if (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "append"
                and isinstance(n.value.func.value, ast.Subscript)
                and isinstance(n.value.func.value.value, ast.Name)
                and isinstance(n.value.func.value.slice, ast.Constant)):
            entry = n.value.func.value
            found.setdefault((entry.value.id, entry.slice.value), []).append(entry)
    out_before, out_after = [], []
    for (d, key), entries in found.items():
        tests = {id(t.test) for t in ast.walk(loop) if isinstance(t, ast.If)}
        mentions = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == d
                    and id(n) not in tests]  # (`if log:`: its keys, not the list)
        if len(mentions) != len(entries) or d in store_names([loop]):
            continue
        held = lists.fresh(f"{d}_{key}" if isinstance(key, str) and key.isidentifier()
                          else d)
        for e in entries:
            parent = next(p for p in ast.walk(loop) if isinstance(p, ast.Attribute)
                          and p.value is e)
            parent.value = locate_as(_name(held), e)
        entry = _call("%entry_items", _name(d), ast.Constant(key))
        out_before.append(locate_as(ast.Assign([_name(held, True)], ast.Call(
            _name("list"), [entry], [])), loop))
        out_before[-1].jitgrad_entry = f"{d}[{key!r}]"  # (no other holder of it:
        # `Builder.check_list_rows`)
        out_after.append(locate_as(ast.If(_call("%is_dict", _name(d)), [ast.Assign(
            [ast.Subscript(_name(d), ast.Constant(key), ast.Store())], _name(held))],
            []), loop))
    return out_before + [loop] + out_after


# -- the list read in the loop that appends to it --------------------------------------------

_PURE = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
         ast.expr_context)


def reads_while_appending(lists, loop: ast.For, name: str, buffer: str, k: str,
                          reads: list) -> None:
    """Rewrite ``reads`` (the Name nodes reading the list ``name`` in ``loop``, which writes
    its items into ``buffer`` at ``k``) as the module says, or refuse one."""
    if not reads:
        return
    parents = _parents(loop)
    for node in {id(n): n for n in reads}.values():
        parent = parents.get(id(node))
        stmt = _statement_of(lists, node, parents, name)
        if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                and parent.func.id == "len" and "len" not in lists.bound
                and "len" not in lists.globals and parent.args == [node]
                and not parent.keywords):
            _replace_child(parents[id(parent)], parent, locate_as(_name(k), parent))
            continue
        if not (isinstance(parent, ast.Subscript) and parent.value is node
                and isinstance(parent.ctx, ast.Load)
                and not isinstance(parent.slice, (ast.Slice, ast.Tuple))
                and all(isinstance(n, _PURE) for n in ast.walk(parent.slice))):
            lists.refuse(f"reading the list `{name}` in the loop that appends to it other than "
                         f"as `{name}[i]` (i a number, a name or arithmetic of them) or "
                         f"`len({name})`", node)
        index = parent.slice
        constant = index.value if isinstance(index, ast.Constant) else None
        if isinstance(constant, bool) or (
                constant is not None and not isinstance(constant, int)):
            lists.refuse(f"indexing the list `{name}` by {constant!r}", node)
        count = _name(k)
        if constant is not None and constant >= 0:
            bad = ast.Compare(count, [ast.LtE()], [ast.Constant(constant)])
            at = ast.Constant(constant)
        else:
            bad = ast.UnaryOp(ast.Not(), ast.Compare(
                ast.UnaryOp(ast.USub(), _name(k)), [ast.LtE(), ast.Lt()],
                [index, _name(k)]))
            at = ast.BinOp(copy.deepcopy(index), ast.Mod(), _name(k))
        check = ast.If(bad, [ast.Raise(ast.Call(_name("IndexError"), [ast.Constant(
            "list index out of range")], []), None)], [])
        locate(check, node)
        parent.value = locate_as(_name(buffer), node)
        parent.slice = locate_as(at, index)
        replace_statement(loop, stmt, [check, stmt])


def _statement_of(lists, node, parents, name):
    """The statement of ``loop`` that evaluates ``node`` once each time it runs; refused
    where ``node`` may not be evaluated (a conditional expression, ``and``/``or``) or is
    evaluated again (a comprehension, a nested function, a ``while`` test)."""
    n = node
    while not isinstance(n, ast.stmt):
        p = parents[id(n)]
        if isinstance(p, (ast.IfExp, ast.BoolOp, *SCOPES)) or isinstance(p, ast.While) and (
                p.test is n):
            raise UnsupportedError(
                f"reading the list `{name}` in the loop that appends to it, under "
                f"`{type(p).__name__}` (a list appended in a loop is an array of its items, "
                f"read there as the items so far): read it into a name first, in a statement "
                f"of its own; {instead('list')}", lists.where(node))
        n = p
    return n
