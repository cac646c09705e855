"""Lists built in the function, by appending in a loop or by a list comprehension, rewritten
as arrays filled in that loop, before the fence reads the function (after `desugar.desugar`).

Takes a function's AST, the function (its globals say what ``np`` and ``len`` are) and a way to
locate a node (`parse._read`); rewrites the AST in place or raises `UnsupportedError`.
Guarantees:

* A list comprehension in a statement evaluated once where it stands (an assignment, a
  return, an expression statement, an ``if`` test) becomes, just before it, ``name = []`` and
  the loop it stands for appending its items (its variables renamed, as `desugar` does);
  ``y = [...]`` appends into ``y`` itself (one that reads ``y``, ``x = [f(v) for v in x]``,
  into a new list first, then copied into ``y``).
* ``out = []`` followed by a ``for`` loop that appends to ``out`` becomes, just before that
  loop, ``out = np.empty(count)`` and the loop writes ``out[k] = v; k += 1`` instead. The count
  is the loop's number of iterations (the product over nested loops, summed over the appends),
  computed when the loop starts from ``range``'s bounds (a constant step), ``len`` of the
  sequence, the shortest of a ``zip``. When an append may not run every iteration (under an
  ``if``, in a loop with ``break``, ``continue`` or ``return``), that count is an upper bound and
  after the loop ``out = out[:k].copy()``: the items appended, in their order.
* So that the list may be an array: each item must be a number or an array whose shape
  is known before the loop (from the arguments' shapes and constants: the list is then the
  array of those rows, ``np.stack`` of it), which the builder checks (``Assign.jitgrad_append``;
  a tuple appended is refused), the list is not
  read in the loop that fills it (appending only), and everywhere else it is used as NumPy
  and Python's reductions would use an array of its items (`list_reads`: ``np.array(out)``,
  a NumPy function's argument, ``sum``, ``len``, ``max``, ``min``, ``sorted``, ``out[i]``,
  ``for v in out``, ``zip`` and ``enumerate`` of it, ``out.index(v)``, passed to your own
  function that reads it so, or returned to a caller that does). Anything else (``out + [v]``,
  ``out * 2``, a slice, ``out ==``, a second loop appending) is refused, naming it and what to
  write instead. A loop whose count is not known when it starts (a ``while``, an inner loop
  whose bounds depend on the outer one) is refused the same way.
* ``a.tolist()`` is the array itself (a copy, ``np.array(a)``), a list read as above.
"""

from __future__ import annotations

import ast
import builtins
import copy

import numpy as np

from jitgrad.core.errors import UnsupportedError, instead
from jitgrad.frontend.desugar import (
    ROOTS,
    SCOPES,
    Fresh,
    GeneratorCalls,
    Rename,
    Swap,
    int_literal,
    locate,
    outermost,
    renamable,
    replace_statement,
    rewrite_blocks,
    targets,
)
from jitgrad.frontend.desugar_list_rows import (
    entry_appends,
    list_copies,
    reads_while_appending,
    split_displays,
)
from jitgrad.frontend.list_reads import (
    LIST_INTRINSICS,
    ListReads,
    locate_as,
    store_names,
)
from jitgrad.frontend.list_reads import name_node as _name

# The functions the rewritten code calls, by names no source can spell (the builder's
# `lookup` reads them first), so that the user's own `np`, `len` or `max` cannot change them.
INTRINSICS = {"%empty": np.empty, "%full": np.full, "%array": np.array, "%len": builtins.len,
              "%range": builtins.range, "%enumerate": builtins.enumerate,
              "%max": builtins.max, "%min": builtins.min,
              }


def items_of(items):
    """A generator's items (`desugar_generators`): the array of the list of them, or, where
    the list is one of Python's (its loop unrolled while building), the tuple of them (the
    builder reads it, `build_builtins`)."""
    return tuple(items) if isinstance(items, (list, tuple)) else np.array(items)


INTRINSICS["%items"] = items_of


def zip_count(*seqs):
    """The number of items ``zip(*seqs)`` gives (the builder reads it as the least of the
    sequences' lengths, `build_builtins`): the count of a loop over ``zip(*parts)``."""
    return min(len(s) for s in seqs)


INTRINSICS["%zip_count"] = zip_count


def range_items(name, *bounds):
    """The indices of ``range(*bounds)`` as a tuple: a loop that appends arrays of other
    shapes to the list ``name``, unrolled while building (`_Lists.unrolled_alternative`),
    where its bounds are numbers known then (``range(self.n_obj)``). Bounds known only at
    run time, or more than `UNROLLED_AT_MOST` iterations, are refused."""
    what = (f"appending to `{name}` arrays whose shape is known only inside the loop (or "
            "values other than numbers, or reading the list as only Python's is read: "
            "`*out`, `out + [...]`)")
    if not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in bounds):
        raise UnsupportedError(
            f"{what}, in a loop whose count is known only at run time (a list built in a "
            "loop is an array of its items, allocated before the loop from the arguments' "
            f"shapes); {instead('list of arrays')}")
    indices = tuple(range(*(int(b) for b in bounds)))
    if len(indices) > UNROLLED_AT_MOST:
        raise UnsupportedError(
            f"{what}, in a loop of {len(indices)} iterations (jitgrad unrolls such a loop up "
            f"to {UNROLLED_AT_MOST} iterations); {instead('list of arrays')}")
    return indices


INTRINSICS["%range_items"] = range_items


def entry_items(d, key):
    """``d[key]`` of a dict (a list a loop appends to, `_Lists.entry_appends`); of anything
    else (``log = False``: the loop's ``if log:`` never appends) an empty list."""
    return d[key] if isinstance(d, dict) else []


def is_dict(d) -> bool:
    return isinstance(d, dict)


INTRINSICS["%entry_items"] = entry_items
INTRINSICS["%is_dict"] = is_dict
INTRINSICS.update(LIST_INTRINSICS)


def lower_lists(fn_node: ast.FunctionDef, fn, fresh: Fresh, where, bound=()) -> None:
    """Rewrite ``fn_node``'s list comprehensions and appended lists as arrays (see the
    module). ``where(node)``: the `Loc` of a node, for refusals; ``bound``: names the
    enclosing function binds (for a nested function)."""
    lists = _Lists(fn, fn_node, fresh, where)
    lists.bound |= set(bound)
    lists.repeated_operands(fn_node)
    fn_node.body = lists.comprehensions(fn_node.body)
    fn_node.body = lists.indexed_dicts(fn_node.body)
    fn_node.body = lists.appended(fn_node.body)
    lists.written_in_loops()
    lists.heaps()
    lists.tolists()
    list_copies(lists)


# NumPy functions whose every positional argument is an array operand (`repeated_operands`;
# of the others, only the first is)
_OPERANDS = {"dot", "inner", "outer", "vdot", "maximum", "minimum", "where", "interp", "clip",
             "add", "subtract", "multiply", "divide", "power", "hypot", "arctan2"}
UNROLLED_AT_MOST = 16  # iterations of a loop unrolled for a list of arrays of other shapes
_HEAPQ_CHANGES = {"heapify", "heappush", "heappop", "heappushpop", "heapreplace"}


def _mentions(node, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))





def _call(fn_name, *args):
    return ast.Call(_name(fn_name), list(args), [])


class _Lists(ListReads):
    """The rewriting of one function's lists (`lower_lists`); their reads: `ListReads`."""

    # -- list comprehensions: a list appended in a loop --------------------------------------

    def comprehensions(self, stmts: list) -> list:
        out = []
        for s in stmts:
            rewrite_blocks(s, self.comprehensions)
            root = "test" if isinstance(s, ast.If) else "value" if isinstance(s, ROOTS) else None
            expr = getattr(s, root, None) if root else None
            if expr is None:
                out.append(s)
                continue
            expr = GeneratorCalls(lambda n: n in self.bound or n in self.globals).visit(expr)
            setattr(s, root, expr)
            if (isinstance(s, ast.Assign) and len(s.targets) == 1 and s.value is expr
                    and isinstance(s.targets[0], ast.Name) and isinstance(expr, ast.ListComp)
                    and renamable(expr)):  # y = [...]: appended into y
                y = s.targets[0].id
                if any(isinstance(n, ast.Name) and n.id == y for n in ast.walk(expr)):
                    # `x = [f(v) for v in x]`: a new list filled first, then x its copy
                    made = self.fresh("list")
                    out += self.comprehensions(self.filling(expr, made))
                    item = self.fresh("v")
                    expr = ast.ListComp(_name(item), [ast.comprehension(
                        _name(item, True), _name(made), [], 0)])
                    locate(expr, s)
                out += self.comprehensions(self.filling(expr, y))
                continue
            replaced = {}
            for comp in outermost(expr, lambda n: isinstance(n, ast.ListComp) and renamable(n)):
                name = self.fresh("list")
                out += self.comprehensions(self.filling(comp, name))
                replaced[id(comp)] = ast.copy_location(_name(name), comp)
            if replaced:
                setattr(s, root, Swap(replaced).visit(expr))
            out.append(s)
        return out

    def filling(self, comp: ast.ListComp, name: str) -> list:
        """``name = []`` and the loop appending ``comp``'s items to it."""
        mapping = {n: self.fresh(n.lstrip("_") or "v") for g in comp.generators
                   for n in targets(g.target)}
        rename = Rename(mapping)
        body = [ast.Expr(ast.Call(ast.Attribute(_name(name), "append", ast.Load()),
                                  [rename.visit(comp.elt)], []))]
        for g in reversed(comp.generators):
            for cond in reversed(g.ifs):
                body = [ast.If(rename.visit(cond), body, [])]
            body = [ast.For(rename.visit(g.target), rename.visit(g.iter), body, [])]
        statements = [ast.Assign([_name(name, True)], ast.List([], ast.Load()))] + body
        for s in statements:
            locate(s, comp)
        return statements

    # -- appended lists: arrays ------------------------------------------------------------------

    def repeated(self, s) -> ast.stmt:
        """``us = [0.0] * n`` (a list of one number, repeated; ``n`` may be known only at run
        time), used as an array: ``us = np.full(n, 0.0)``, a float array (its entries are
        written as floats)."""
        v = getattr(s, "value", None)
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and isinstance(v, ast.BinOp)
                and isinstance(v.op, ast.Mult)):
            return s
        lst, count = (v.left, v.right) if isinstance(v.left, ast.List) else (v.right, v.left)
        if not (isinstance(lst, ast.List) and len(lst.elts) == 1
                and isinstance(lst.elts[0], ast.Constant)
                and type(lst.elts[0].value) in (int, float)):
            return s
        name = s.targets[0].id
        self.check_uses(name, s, [])
        full = ast.copy_location(ast.Assign([_name(name, True)], _call(
            "%full", count, ast.Constant(float(lst.elts[0].value)))), s)
        locate(full, s)
        return full

    def repeated_operands(self, root) -> None:
        """``np.dot(v * v, [1.0] * v.shape[1])``: a list of one number repeated (``n`` may be
        known only at run time) given straight to a NumPy function that reads it as an array
        (`ListReads.reads_as_array`; as its first argument, or any of an operation of arrays,
        `_OPERANDS`) is that array, ``np.full(max(n, 0), 1.0)``. Anywhere else
        (``[1.0] * n + [0.0] * m``, a name bound to it) it stays Python's list."""
        for call in ast.walk(root):
            if not (isinstance(call, ast.Call) and self.reads_as_array(call)):
                continue
            name = getattr(call.func, "attr", getattr(call.func, "id", ""))
            for k, a in enumerate(call.args):
                if not (isinstance(a, ast.BinOp) and isinstance(a.op, ast.Mult)) or (
                        k and name not in _OPERANDS):  # (np.reshape(x, [2] * k): a shape)
                    continue
                lst, count = (a.left, a.right) if isinstance(a.left, ast.List) else (
                    a.right, a.left)
                if (isinstance(lst, ast.List) and len(lst.elts) == 1 and isinstance(
                        lst.elts[0], ast.Constant) and type(lst.elts[0].value) in (
                        int, float, bool) and not isinstance(count, ast.List)):
                    call.args[k] = locate_as(_call("%full", _call(
                        "%max", count, ast.Constant(0)), lst.elts[0]), a)

    def appended(self, stmts: list) -> list:
        for s in stmts:
            rewrite_blocks(s, self.appended)
        out = [t for s in stmts for t in split_displays(self, self.repeated(s), stmts)]
        out = [t for s in out for t in entry_appends(self, s)]
        j = 0
        while j < len(out):
            s = out[j]
            if (isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.List)
                    and not any(isinstance(e, ast.Starred) for e in s.value.elts)):
                name = s.targets[0].id
                later = next((k for k in range(j + 1, len(out)) if _mentions(out[k], name)),
                             None)
                if later is not None and isinstance(out[later], ast.While) and self.appends_in(
                        out[later], name):
                    self.refuse(f"appending to `{name}` in a while loop (the number of items "
                                "is not known when the loop starts)", out[later])
                if later is not None and isinstance(out[later], ast.For) and self.appends_in(
                        out[later], name) and not hasattr(out[later], "jitgrad_list_of"):
                    # xs = [x0] then appends: x0 evaluated where the list was made, written
                    # first into the array (a trajectory that starts with its initial state)
                    first = [self.fresh(f"{name.lstrip('_')}_first") for _ in s.value.elts]
                    held = [ast.copy_location(ast.Assign([_name(t, True)], e), s)
                            for t, e in zip(first, s.value.elts)]
                    for h in held:
                        locate(h, s)
                    out[j:later + 1] = held + out[j + 1:later] + self.lower(
                        name, out[later], s, out[later + 1:], first)
                    continue  # (what follows `out = [...]` is at j now)
            if (isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and self.is_list_call(s.value)):
                name = s.targets[0].id  # `out = list(x)` then appends: x's rows first
                later = next((k for k in range(j + 1, len(out)) if _mentions(out[k], name)),
                             None)
                if later is not None and isinstance(out[later], ast.For) and self.appends_in(
                        out[later], name):
                    rows = self.fresh(f"{name.lstrip('_')}_rows")
                    held = locate_as(ast.Assign([_name(rows, True)], s.value.args[0]), s)
                    held.jitgrad_rows_of = s  # (the builder: an array, or Python's list)
                    out[j:later + 1] = [held] + out[j + 1:later] + self.lower(
                        name, out[later], s, out[later + 1:], rows=rows)
                    continue
            j += 1
        return out

    def is_list_call(self, value) -> bool:
        """Whether ``value`` is ``list(x)``, of Python's ``list``."""
        return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id == "list" and "list" not in self.bound
                and "list" not in self.globals and len(value.args) == 1
                and not isinstance(value.args[0], ast.Starred) and not value.keywords)

    def appends_in(self, loop: ast.For, name: str) -> bool:
        return any(self.is_append(n, name) for n in ast.walk(loop))

    def lower(self, name: str, loop: ast.For, made: ast.Assign, after: list,
              first: list | None = None, rows: str | None = None) -> list:
        """The statements replacing ``loop`` (which appends to ``name``, made by ``made``
        empty, holding the values of the names ``first``, or the rows of the array the name
        ``rows`` holds, ``list(x)``): the allocation, the first items, the loop writing into
        it, and the trim."""
        first = first or []
        if first:  # (a list of arrays may take its rows' shape from its first item)
            made.jitgrad_first = first[0]
        if rows:  # (its rows take the shape of x's)
            made.jitgrad_first_rows = rows
        appends, conditional, jumps, reads = [], False, False, []
        assigned = store_names([loop])

        def visit(node, chain, under_if):
            nonlocal conditional, jumps
            if isinstance(node, (ast.Break, ast.Continue, ast.Return)):
                conditional = jumps = True
            if self.is_append(node, name):
                call = node.value
                if len(call.args) != 1 or call.keywords:
                    self.refuse("`.append` with other than one argument", node)
                appends.append((node, list(chain)))
                conditional = conditional or under_if
                for child in ast.walk(call.args[0]):
                    visit(child, chain, under_if)  # (the item must not read the list)
                return
            if isinstance(node, ast.Name) and node.id == name:
                reads.append(node)  # (the items so far: `reads_while_appending`)
                return
            if isinstance(node, (ast.While, *SCOPES)) and _mentions(node, name):
                self.refuse(f"appending to `{name}` in a "
                            f"{'while loop' if isinstance(node, ast.While) else 'nested scope'}"
                            " (its count is not known when the loop starts)", node)
            if isinstance(node, ast.For) and node is not loop:
                chain = chain + [node]
            under = under_if or isinstance(node, (ast.If, ast.Try))
            for child in ast.iter_child_nodes(node):
                visit(child, chain, under)

        visit(loop, [loop], False)
        hoisted = self.spread_once(loop)
        total, unknown = None, None
        for node, chain in appends:
            product = None
            for f in chain:
                trips = self.trip_count(f)
                if trips is None or (f is not loop and {  # (the loop's own: read once)
                        n.id for n in ast.walk(trips) if isinstance(n, ast.Name)} & assigned):
                    unknown = unknown or f
                    continue
                product = trips if product is None else ast.BinOp(product, ast.Mult(), trips)
            total = product if total is None else ast.BinOp(total, ast.Add(), product)
        unrolled = self.unrolled_alternative(name, loop, made, appends, jumps, first, rows)
        if unknown is not None and (unrolled is None or rows or not isinstance(
                loop.iter, ast.Call) or getattr(loop.iter.func, "id", None) != "range"):
            self.refuse(f"appending to `{name}` in a loop whose number of iterations "
                        "is not known when the outer loop starts", unknown)
        if unknown is not None:  # (pysindy's combinations over range(degree + 1)): Python's
            return unrolled  # list, its loops unrolled where they run over values known
            # while building (the outer over `range` of bounds known then or made of the
            # arguments' sizes, `Builder.size_decided`); refused at run time ones
        self.check_uses(name, loop, after, made if unrolled is not None else None)
        count, k = self.fresh(f"{name.lstrip('_')}_n"), self.fresh(f"{name.lstrip('_')}_k")
        buffer = self.fresh(f"{name.lstrip('_')}_buf") if conditional else name
        for node, _ in appends:
            write = ast.Assign([ast.Subscript(_name(buffer), _name(k), ast.Store())],
                               node.value.args[0])
            write.jitgrad_append = name  # the builder checks the item: a number or an array
            write.jitgrad_list = made  # (the list's key: where it was made)
            step = ast.AugAssign(_name(k, True), ast.Add(), ast.Constant(1))
            for s in (write, step):
                ast.copy_location(s, node)
                locate(s, node)
            replace_statement(loop, node, [write, step])
        reads_while_appending(self, loop, name, buffer, k, reads)
        if first:
            total = ast.BinOp(total, ast.Add(), ast.Constant(len(first)))
        if rows:
            total = ast.BinOp(total, ast.Add(), _call("%len", _name(rows)))
        start = [ast.Assign([_name(count, True)], total),
                 ast.Assign([_name(buffer, True)], _call("%empty", _name(count))),
                 ast.Assign([_name(k, True)], ast.Constant(0))]
        start[1].jitgrad_list = made  # its rows take the items' shape (`Builder`)
        start = hoisted + start
        if rows:  # x's rows, the items the list was made with
            start += [ast.Assign([ast.Subscript(_name(buffer), ast.Slice(
                None, _call("%len", _name(rows)), None), ast.Store())], _name(rows)),
                ast.Assign([_name(k, True)], _call("%len", _name(rows)))]
            start[-2].jitgrad_rows_write = True  # (none, of an empty list: `Builder`)
        for item in first:  # the items the list was made with
            write = ast.Assign([ast.Subscript(_name(buffer), _name(k), ast.Store())],
                               _name(item))
            write.jitgrad_append, write.jitgrad_list = name, made
            start += [write, ast.AugAssign(_name(k, True), ast.Add(), ast.Constant(1))]
        for s in start:
            locate(s, made)
        last = []
        if conditional:
            trimmed = ast.Subscript(_name(buffer), ast.Slice(None, _name(k), None), ast.Load())
            last = [ast.Assign([_name(name, True)], ast.Call(
                ast.Attribute(trimmed, "copy", ast.Load()), [], []))]
            for s in last:
                locate(s, loop)
        if unrolled is not None:  # (the builder takes it if the items' shapes differ)
            made.jitgrad_unrollable = True
            group = getattr(loop, "jitgrad_unroll_group", None)
            if group is None:  # the first list the loop appends to: its alternative (the loop
                group = loop.jitgrad_unroll_group = ([made], unrolled)  # as written) stands
            else:  # for every list the loop appends to, each then made empty before it, and
                group[0].append(made)  # is taken where any of them is to be Python's list
                group[1].insert(len(group[1]) - 1, unrolled[0])
            for j, stmt in enumerate(start + [loop] + last):
                stmt.jitgrad_unrolled = (group[0], group[1] if j == 0 and group[0][0] is made
                                         else None)
        return start + [loop] + last

    def unrolled_alternative(self, name, loop, made, appends, jumps, first, rows=None):
        """For a list made empty and appended to, once per iteration, by a loop over
        ``range`` of a few constant bounds: the same statements with the loop over the
        tuple of its indices (unrolled while building, the list a list of its items), which
        the builder takes where the items are arrays whose shapes differ (`build_lists`)."""
        it = loop.iter
        if rows:  # `out = list(x)` of x known while building: Python's list, the loop as
            again = copy.deepcopy(loop)  # written (unrolled where it runs over values known
            again.jitgrad_list_of, again.jitgrad_list_made = name, made  # then)
            listed = locate_as(ast.Assign([_name(name, True)], ast.Call(
                _name("list"), [_name(rows)], [])), made)
            return [listed, again]
        if first or jumps:  # (inner loops: unrolled where they run over values known then)
            return None
        again = copy.deepcopy(loop)
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and "range" not in self.bound and "range" not in self.globals):
            bounds = [int_literal(a) for a in it.args]
            if it.keywords or not 1 <= len(bounds) <= 3:
                return None
            if None in bounds:  # bounds the builder knows (`self.n_obj`): its indices then
                again.iter = locate_as(_call("%range_items", ast.Constant(name),
                                             *copy.deepcopy(it.args)), it)
            else:
                indices = tuple(range(*bounds)) if bounds[-1] != 0 or len(bounds) < 3 else None
                if indices is None or len(indices) > UNROLLED_AT_MOST:
                    return None
                again.iter = locate_as(ast.Tuple([ast.Constant(i) for i in indices],
                                                 ast.Load()), it)
        # (any other loop: as written; the builder unrolls it where it runs over a tuple or
        # list known while building, and refuses a list appended to in a loop it runs)
        for inner in ast.walk(again):  # (inner loops appending too: `range(n_features)`
            if isinstance(inner, ast.For) and inner is not again and self.appends_in(
                    inner, name):  # of an argument's axis unrolled for its value)
                inner.jitgrad_list_of, inner.jitgrad_list_made = name, made
        again.jitgrad_list_of = name  # (a loop the builder runs, not unrolled: refused)
        again.jitgrad_list_made = made
        empty = locate_as(ast.Assign([_name(name, True)], ast.List([], ast.Load())), made)
        return [empty, again]

    def spread_once(self, loop: ast.For) -> list:
        """``for a, b in zip(*parts(x))``: each spread value that is not a name is bound to a
        new name before the loop (its count and its items then read it, evaluated once, as
        Python evaluates it); the assignments."""
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "zip" and "zip" not in self.bound):
            return []
        out = []
        for a in it.args:
            if isinstance(a, ast.Starred) and not isinstance(a.value, ast.Name):
                held = self.fresh("spread")
                out.append(locate_as(ast.Assign([_name(held, True)], a.value), loop))
                a.value = locate_as(_name(held), a.value)
        return out

    def trip_count(self, loop: ast.For):
        """The AST of ``loop``'s number of iterations, or None."""
        return self.count_of(loop.iter)

    def count_of(self, it):
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip"
                and "zip" not in self.bound and not it.keywords
                and any(isinstance(a, ast.Starred) for a in it.args)):
            if not all(isinstance(getattr(a, "value", a), ast.Name) for a in it.args):
                return None  # (a spread call: evaluated once, by the loop only)
            return _call("%zip_count", *copy.deepcopy(it.args))
        if isinstance(it, ast.Call) and not any(isinstance(a, ast.Starred) for a in it.args):
            f = it.func
            fname = f.id if isinstance(f, ast.Name) and f.id not in self.bound else (
                f.attr if isinstance(f, ast.Attribute) else None)
            if fname in ("range", "prange") and not it.keywords and 1 <= len(it.args) <= 3:
                args = [copy.deepcopy(a) for a in it.args]
                if len(args) == 1:
                    return _call("%max", args[0], ast.Constant(0))
                step = 1 if len(args) == 2 else int_literal(args[2])
                if step is None or step == 0:
                    return None
                a, b = args[0], args[1]
                span = ast.BinOp(b, ast.Sub(), a) if step > 0 else ast.BinOp(a, ast.Sub(), b)
                if abs(step) != 1:
                    span = ast.BinOp(ast.BinOp(span, ast.Add(), ast.Constant(abs(step) - 1)),
                                     ast.FloorDiv(), ast.Constant(abs(step)))
                return _call("%max", span, ast.Constant(0))
            if fname in ("reversed", "enumerate") and it.args:
                return self.count_of(it.args[0])
            if fname == "zip" and it.args and not it.keywords:
                parts = [self.count_of(a) for a in it.args]
                if any(p is None for p in parts):
                    return None
                return parts[0] if len(parts) == 1 else _call("%min", *parts)
            if fname == "ndindex":
                return None
        return _call("%len", copy.deepcopy(it))

    # -- dicts filled by a loop's index --------------------------------------------------------

    def indexed_dicts(self, stmts: list) -> list:
        """``d = {}`` followed by ``for i in range(n): ... d[i] = v ...`` (the write at the top
        of the body, no ``break``, ``continue`` or ``return`` in the loop): its keys are 0 to
        n - 1 in order, so it is the list appended in that loop, when every other read of it
        is ``d[k]``, ``len(d)``, ``for k in d`` (``range(len(d))``), ``d.keys()``,
        ``d.values()`` (the list) or ``d.items()`` (``enumerate``). Otherwise it is left to
        the builder (a dict a loop changes: refused there, saying what to write)."""
        for s in stmts:
            rewrite_blocks(s, self.indexed_dicts)
        for j, s in enumerate(stmts):
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Dict)
                    and not s.value.keys):
                continue
            name = s.targets[0].id
            later = next((k for k in range(j + 1, len(stmts)) if _mentions(stmts[k], name)),
                         None)
            loop = stmts[later] if later is not None else None
            write = self.index_write(loop, name) if isinstance(loop, ast.For) else None
            if write is None:
                continue
            reads = self.dict_reads(name, write)
            if reads is None:
                continue
            s.value = ast.copy_location(ast.List([], ast.Load()), s.value)
            append = ast.Expr(ast.Call(ast.Attribute(_name(name), "append", ast.Load()),
                                       [write.value], []))
            locate(append, write)
            loop.body[loop.body.index(write)] = ast.copy_location(append, write)
            for parent, field, new in reads:
                setattr(parent, field, new)
        return stmts

    def index_write(self, loop: ast.For, name: str):
        """The statement ``name[i] = v`` at the top of ``loop``'s body, ``loop`` running
        ``i`` over ``range(n)`` (or ``range(0, n)``) without jumps, or None."""
        it, target = loop.iter, loop.target
        if not (isinstance(target, ast.Name) and isinstance(it, ast.Call) and not it.keywords
                and isinstance(it.func, ast.Name) and it.func.id == "range"
                and "range" not in self.bound and "range" not in self.globals
                and (len(it.args) == 1 or len(it.args) == 2 and isinstance(it.args[0], ast.Constant)
                     and it.args[0].value == 0) and not loop.orelse):
            return None
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield))
               for n in ast.walk(loop)) or target.id in store_names(loop.body):
            return None
        writes = [b for b in loop.body if isinstance(b, ast.Assign) and len(b.targets) == 1
                  and isinstance(b.targets[0], ast.Subscript)
                  and isinstance(b.targets[0].value, ast.Name) and b.targets[0].value.id == name
                  and isinstance(b.targets[0].slice, ast.Name)
                  and b.targets[0].slice.id == target.id]
        mentions = [n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name]
        return writes[0] if len(writes) == 1 and len(mentions) == 1 else None

    def dict_reads(self, name: str, write) -> list | None:
        """How to read the list a dict filled by a loop's index becomes, read by read:
        (node, field, new node); None where a read is not one of those `indexed_dicts` takes
        or the name is bound elsewhere."""
        parents = {id(c): p for p in ast.walk(self.root) for c in ast.iter_child_nodes(p)}
        target = write.targets[0].value
        out = []
        stores = 0
        for node in ast.walk(self.root):
            if not (isinstance(node, ast.Name) and node.id == name) or node is target:
                continue
            if not isinstance(node.ctx, ast.Load):
                stores += 1
                continue
            parent = parents.get(id(node))
            grand = parents.get(id(parent))

            def length():
                return _call("%len", _name(name))
            if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(
                    parent.ctx, ast.Load) and not isinstance(parent.slice, (ast.Slice, ast.Tuple)):
                continue
            if isinstance(parent, ast.Call) and parent.args == [node] and isinstance(
                    parent.func, ast.Name) and parent.func.id == "len" and "len" not in self.bound \
                    and "len" not in self.globals:
                continue
            if isinstance(parent, ast.For) and parent.iter is node:
                out.append((parent, "iter", locate_as(_call("%range", length()), node)))
                continue
            if (isinstance(parent, ast.Attribute) and isinstance(grand, ast.Call)
                    and grand.func is parent and not grand.args and not grand.keywords
                    and parent.attr in ("keys", "values", "items")):
                new = {"keys": lambda: _call("%range", length()), "values": lambda: _name(name),
                       "items": lambda: _call("%enumerate", _name(name))}[parent.attr]()
                holder = parents.get(id(grand))
                field = next((f for f, v in ast.iter_fields(holder) if v is grand), None)
                if field is None:
                    return None  # (inside a list of arguments: not rewritten)
                out.append((holder, field, locate_as(new, grand)))
                continue
            return None
        return out if stores == 1 else None

    # -- lists written in a loop ---------------------------------------------------------------

    def written_in_loops(self) -> None:
        """``acc = [0.0, 0.0]`` whose items a loop writes (``acc[i % 2] += v``): the list is
        made as the array of its items (``np.array([0.0, 0.0])``) when nothing else binds the
        name and every read of it reads an array of its items alike (`misuse`); otherwise it
        stays a list, which a loop cannot change (refused there, saying so)."""
        made = {}  # name -> its one assignment of a list display
        stores: dict = {}
        for node in ast.walk(self.root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stores[node.id] = stores.get(node.id, 0) + 1
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.List)
                    and node.value.elts
                    and not any(isinstance(e, ast.Starred) for e in node.value.elts)):
                made[node.targets[0].id] = node
        params = {a.arg for a in ast.walk(self.root) if isinstance(a, ast.arg)}
        written = set()
        for loop in ast.walk(self.root):
            if isinstance(loop, (ast.For, ast.While)):
                for node in ast.walk(loop):
                    targets_ = node.targets if isinstance(node, ast.Assign) else [
                        node.target] if isinstance(node, ast.AugAssign) else []
                    written |= {t.value.id for t in targets_ if isinstance(t, ast.Subscript)
                                and isinstance(t.value, ast.Name)
                                and not isinstance(t.slice, ast.Slice)}
        candidates = {n for n in written if n in made and stores.get(n) == 1 and n not in params}
        if not candidates:
            return
        self.parents = {id(c): p for p in ast.walk(self.root) for c in ast.iter_child_nodes(p)}
        for name in sorted(candidates):
            if any(isinstance(node, ast.Name) and node.id == name
                   and isinstance(node.ctx, ast.Load) and self.misuse(node)
                   for node in ast.walk(self.root)):
                continue
            assign = made[name]
            assign.value = ast.copy_location(_call("%array", assign.value), assign.value)
            locate(assign.value, assign)

    # -- an array's .tolist() --------------------------------------------------------------------

    def tolists(self) -> None:
        """``a.tolist()``: the list of an array's entries (of its rows, as lists, for a
        matrix), read as the array itself (a copy, ``np.array(a)``), with every read of the
        list checked as an appended list's are (`check_uses`, `misuse`): ``xs = a.tolist()``
        each read of ``xs``, ``f(a.tolist())`` how ``f`` reads it."""
        calls = [n for n in ast.walk(self.root) if isinstance(n, ast.Call) and not n.args
                 and not n.keywords and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "tolist"]
        if not calls:
            return
        for call in calls:
            call.args = [call.func.value]
            call.func = locate_as(_name("%array"), call.func)
        self.parents = {id(c): p for p in ast.walk(self.root) for c in ast.iter_child_nodes(p)}
        for call in calls:
            parent = self.parents.get(id(call))
            if (isinstance(parent, ast.Assign) and len(parent.targets) == 1
                    and isinstance(parent.targets[0], ast.Name)):
                self.check_uses(parent.targets[0].id, parent, [])
                self.parents = {id(c): p for p in ast.walk(self.root)
                                for c in ast.iter_child_nodes(p)}
                continue
            what = self.misuse(call)
            if what:
                self.refuse(f"the list `{ast.unparse(call.args[0])}.tolist()` {what} (the "
                            "list is an array in the gradient)", call)

    # -- heaps ---------------------------------------------------------------------------------

    def heaps(self) -> None:
        """A list heapq's functions change in place may become an array (a heap of numbers
        known only at run time, `build_containers`): refuse every other read of it that an
        array of its items would not give the same meaning to (as for an appended list)."""
        calls = [n for n in ast.walk(self.root) if isinstance(n, ast.Call) and n.args
                 and isinstance(n.args[0], ast.Name) and self.is_heapq_change(n.func)]
        if not calls:
            return
        self.parents = {id(c): p for p in ast.walk(self.root) for c in ast.iter_child_nodes(p)}
        firsts = {id(c.args[0]) for c in calls}
        stores: dict = {}
        for node in ast.walk(self.root):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                stores[node.id] = stores.get(node.id, 0) + 1
        for name in sorted({c.args[0].id for c in calls}):
            for node in ast.walk(self.root):
                if (isinstance(node, ast.Name) and node.id == name and id(node) not in firsts
                        and isinstance(node.ctx, ast.Load)):
                    what = self.misuse(node)
                    if what:
                        raise UnsupportedError(
                            f"the heap `{name}` {what} is not supported: a heap of numbers "
                            "known only at run time is an array in the gradient; read it "
                            f"through heapq's functions, `{name}[0]`, len, sum, min, max, "
                            f"`for v in {name}` and NumPy's functions (`np.sort({name})`)",
                            self.where(node))
            if stores.get(name) != 1:
                continue
            for node in ast.walk(self.root):  # made as the array of its items: a loop may
                if (isinstance(node, ast.Assign) and len(node.targets) == 1  # push onto it
                        and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name
                        and isinstance(node.value, ast.List) and not any(
                            isinstance(e, ast.Starred) for e in node.value.elts)):
                    made = _call("%array", node.value) if node.value.elts else _call(
                        "%empty", ast.Constant(0))
                    node.value = locate_as(made, node.value)

    def is_heapq_change(self, func) -> bool:
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self.globals.get(func.value.id)
            return (func.value.id not in self.bound and func.attr in _HEAPQ_CHANGES
                    and getattr(module, "__name__", None if module is not None else
                                func.value.id) == "heapq")  # (or imported in the function)
        if isinstance(func, ast.Name) and func.id not in self.bound:
            value = self.globals.get(func.id)
            return getattr(value, "__module__", None) in ("heapq", "_heapq") and \
                getattr(value, "__name__", None) in _HEAPQ_CHANGES
        return False
