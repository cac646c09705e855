"""Where a list that is an array of its items in the gradient is read (one built by appending
or by a list comprehension, `desugar_lists`, or an array's ``.tolist()``): the reads an array of
its items gives the list's meaning, in the function that makes it, in a caller it returns it
to (`returned_list`), and in a function of the user's it is passed to (`list_parameters`).

Takes a function's AST (after `desugar_lists` rewrote its lists) and a way to locate a node.
Guarantees: every read of the list is one of ``np.array(out)``, a NumPy function's argument,
``sum``, ``len``, ``max``, ``min``, ``sorted`` (NumPy's sort), ``out[i]``, ``for v in out``,
``zip`` and ``enumerate`` of it, ``v in out``, ``out.index(v)`` and ``out.count(v)`` (the
intrinsics `LIST_INTRINSICS`, NumPy's reading of an array), an argument of a call the builder
checks in turn (``jitgrad_list_args`` on the call, or ``passed``: the callee's own reads, the
call refused if the function called is not the user's), or returned (to a caller that checks
its reads); anything else is refused, naming it and what to write instead.
"""

from __future__ import annotations

import ast

import numpy as np

from jitgrad.core.errors import UnsupportedError, instead
from jitgrad.frontend import autograd_names
from jitgrad.frontend.desugar import locate


def store_names(nodes) -> set[str]:
    """The names ``nodes`` assign."""
    return {n.id for node in nodes for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def name_node(n, store=False):
    """The AST of the name ``n``, read (or assigned)."""
    return ast.Name(n, ast.Store() if store else ast.Load())


def locate_as(node, like):
    ast.copy_location(node, like)
    locate(node, like)
    return node


def list_index(seq, value):
    """``seq.index(value)`` of a list that is an array of its items (`_Lists.misuse`; the
    builder reads an array's, `build_builtins`): Python's, of a list known while building."""
    return seq.index(value)


def list_count(seq, value):
    """``seq.count(value)``, as `list_index`."""
    return seq.count(value)


def sorted_items(seq, reverse=False):
    """``sorted(out)`` of a list that is an array of its items (`_Lists.misuse`; the builder
    sorts an array with NumPy, `build_builtins`): Python's, of a list known while building."""
    return sorted(seq, reverse=reverse)



# list methods that read the list, and the intrinsics that read an array of its items so
LIST_METHODS = {"index": "%list_index", "count": "%list_count"}
# what the reads are rewritten to call (`desugar_lists.INTRINSICS`)
def reversed_items(seq):
    """``out.reverse()`` of a list that is an array of its items (`ListReads.misuse`, which
    rebinds ``out`` to this): the array's rows in reverse order; Python's reversal of a list
    known while building (its loop unrolled)."""
    return tuple(reversed(seq)) if isinstance(seq, (list, tuple)) else seq[::-1]


def list_of(seq):
    """``list(x)`` whose every read an array of its items gives the same meaning
    (`_Lists.list_copies`): of an array whose length is known only at run time, the array of
    its rows (a copy; the builder's, `build_builtins`); of anything else, Python's ``list``
    (the builder's: a tuple of the items known while building)."""
    return list(seq)


def joined_items(a, b):
    """``a + b`` of lists one of which is an array of its items (`ListReads.joins`) and the
    other a list display: the rows of both, in order (NumPy's concatenation;
    the display stacked, its items of the rows' shape), read as an array is read; Python's
    join of lists known while building (their loops unrolled)."""
    return tuple(a) + tuple(b)


LIST_INTRINSICS = {"%list_index": list_index, "%list_count": list_count, "%sorted": sorted_items,
                   "%reversed": reversed_items, "%joined": joined_items,
                   "%list_of": list_of}



# NumPy functions that read a list of numbers as they read the 1-D array of its items
_NUMPY_READERS = {
    "array", "asarray", "asanyarray", "copy", "sum", "mean", "max", "min", "amax", "amin",
    "prod", "std", "var", "median", "average", "cumsum", "cumprod", "sort", "argsort",
    "argmax", "argmin", "dot", "inner", "outer", "vdot", "diff", "percentile", "quantile",
    "hstack", "flip", "linalg.norm", "any", "all", "size", "shape", "ravel", "stack",
    "concatenate", "vstack", "column_stack", "row_stack", "dstack",
    "where", "maximum", "minimum", "clip", "interp", "trapz", "trapezoid", "nansum",
    # (each takes np.asarray of its first argument: a list and the array of its items are one)
    "transpose", "diag", "diagflat", "diagonal", "trace", "squeeze", "reshape", "atleast_1d",
    "atleast_2d", "ix_", "delete", "take",
}
# NumPy's module, and the modules that mirror it (``import autograd.numpy as np``)
_NUMPY_NAMES = ("numpy", *(ours for ours, theirs in autograd_names.MIRRORS if theirs == "numpy"))
# (print: left out of the gradient; tuple and list: the rows of an array whose length is known
# while building, `build_builtins`)
_BUILTIN_READERS = {"sum", "len", "max", "min", "print", "tuple", "list"}


class ListReads:
    """The reads of a function's lists (see the module); `desugar_lists._Lists` rewrites
    them."""

    def __init__(self, fn, fn_node, fresh, where):
        self.fresh, self.where = fresh, where
        self.globals = getattr(fn, "__globals__", {})
        self.bound = store_names([fn_node]) | {a.arg for a in ast.walk(fn_node)
                                                if isinstance(a, ast.arg)}
        self.parents: dict = {}
        self.root = fn_node
        self.passed = None  # (`passes_list`)
        self.rewritten: dict = {}  # (`read_by`)

    def passes_list(self, call: ast.Call, key, node) -> None:
        """Record that ``call``'s argument ``key`` (a position or a keyword) is a list that is
        an array of its items (the builder checks how the function called reads it): on the
        call itself for a list made in the function, else in ``passed`` (for one given to it:
        a list in this call only, `list_parameters`)."""
        marks = self.passed if self.passed is not None else None
        held = marks.get(id(call), {}) if marks is not None else getattr(
            call, "jitgrad_list_args", {})
        held = {**held, key: ast.unparse(node)}
        if marks is not None:
            marks[id(call)] = held
        else:
            call.jitgrad_list_args = held

    def refuse(self, what, node, key="list"):
        raise UnsupportedError(f"{what} is not supported; {instead(key)}", self.where(node))

    @staticmethod
    def is_append(node, name) -> bool:
        return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "append"
                and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id == name)

    # -- where the list is read ------------------------------------------------------------------

    def check_uses(self, name: str, loop: ast.For, after: list, made=None) -> None:
        """Refuse every read of ``name`` outside ``loop`` that an array of its items would not
        give the same meaning to (see the module). Where the loop has an unrolled alternative
        (``made``, the list's creation, given: `unrolled_alternative`), such a read is not
        refused here but marks the list as Python's (``made.jitgrad_python_list``, the read):
        the builder unrolls the loop, the list a list of its items, or refuses the loop if it
        runs over values known only at run time (`build_loops.refuse_list_of_others`)."""
        self.parents = {id(c): p for p in ast.walk(self.root) for c in ast.iter_child_nodes(p)}
        inside = {id(n) for n in ast.walk(loop)}
        stop = next((k for k, s in enumerate(after) if isinstance(s, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in s.targets)), None)
        skipped = _shadowed(self.root, name) | self.other_lists_appended(name, loop)
        if stop is not None:  # rebound after the loop (`out = np.array(out)`): not the list
            skipped |= {id(n) for s in after[stop + 1:] for n in ast.walk(s)}
        for node in ast.walk(self.root):
            if (isinstance(node, ast.Name) and node.id == name and id(node) not in inside
                    and id(node) not in skipped and isinstance(node.ctx, ast.Load)):
                what = self.misuse(node)
                parent = self.parents.get(id(node))
                if what == "returned" and isinstance(parent, ast.Return):
                    # to a caller, which reads it as this function would (`returned_list`);
                    # the function differentiated refuses it (`build_stmts`)
                    parent.jitgrad_returns_list = name
                elif what == "returned":  # an item of the tuple returned
                    ret = self.parents[id(parent)]
                    at = dict(getattr(ret, "jitgrad_returns_lists", {}))
                    at[parent.elts.index(node)] = name
                    ret.jitgrad_returns_lists = at
                elif what and made is not None:  # (`*[getattr(m, n) for n in names]`)
                    if not hasattr(made, "jitgrad_python_list"):
                        made.jitgrad_python_list = what
                elif what:
                    self.refuse(f"the list `{name}` {what} (the list is an array in the "
                                "gradient)", node)

    def other_lists_appended(self, name: str, loop) -> set[int]:
        """The ``name`` of ``name.append(v)`` in a ``for`` loop, other than ``loop``, that
        follows ``name = [...]`` in its block (``x = [f(v) for v in x]`` in a loop, a list
        made first before it): another list bound to the same name, which `appended` makes
        an array in turn and whose reads it checks then."""
        out = set()
        for block in ast.walk(self.root):
            for field in ("body", "orelse", "finalbody"):
                stmts = getattr(block, field, None)
                if not isinstance(stmts, list):
                    continue
                made = False
                for s in stmts:
                    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(
                            s.targets[0], ast.Name) and s.targets[0].id == name:
                        made = isinstance(s.value, ast.List)
                    elif made and isinstance(s, ast.For) and s is not loop:
                        out |= {id(n.value.func.value) for n in ast.walk(s)
                                if self.is_append(n, name)}
                        made = False
                    elif any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s)):
                        made = False
        return out

    def misuse(self, node) -> str | None:
        """How reading ``node`` (the list) differs from reading an array, or None. Two reads
        are marked for the builder as they are found: ``out.index(v)`` and ``out.count(v)``
        become the intrinsics that read an array of its items so (`LIST_METHODS`), and a
        call that passes the list to a function not known to read it as an array records it
        (``call.jitgrad_list_args``: the builder checks the callee's own reads of it, or
        refuses the call, `build_calls`)."""
        parent = self.parents.get(id(node))
        holder = self.parents.get(id(parent))
        if isinstance(parent, ast.Tuple) and isinstance(holder, ast.Subscript) and \
                holder.slice is parent or isinstance(parent, ast.Subscript) and \
                parent.slice is node:
            return None  # K[keep, 1], x[idx]: an index array, as NumPy reads the list
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.slice, ast.Slice) and self.slice_read_as_array(parent):
                return None  # np.mean(errs[n // 2:]): the array's slice, read as NumPy would
            if isinstance(parent.slice, (ast.Slice, ast.Tuple)):
                return "sliced (a slice of a list is a list)"
            return None
        if isinstance(parent, ast.Attribute):
            call = self.parents.get(id(parent))
            if parent.attr == "reverse" and self.reverses_in_place(call, node):
                return None
            if parent.attr in LIST_METHODS and isinstance(call, ast.Call) and call.func is parent \
                    and len(call.args) == 1 and not call.keywords:
                self.read_by(call, LIST_METHODS[parent.attr], [node, *call.args])
                return None
            return f"used with .{parent.attr}"
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            call = self.parents.get(id(parent))
            if isinstance(call, ast.Call) and not self.reads_as_array(call):
                self.passes_list(call, parent.arg, node)
                return None
            return f"passed as {parent.arg}="
        holder = self.parents.get(id(parent))
        key = holder.arg if isinstance(holder, ast.keyword) and parent is holder.value else (
            holder.args.index(parent) if isinstance(holder, ast.Call) and any(
                a is parent for a in holder.args) else None)
        call = self.parents.get(id(holder)) if isinstance(holder, ast.keyword) else holder
        if isinstance(parent, ast.Tuple) and key is not None and isinstance(call, ast.Call) \
                and not any(isinstance(e, ast.Starred) for e in parent.elts) \
                and not self.reads_as_array(call):  # `brentq(f, a, b, args=(zs, ks))`: the
            self.passes_list(call, (key, parent.elts.index(node)), node)  # function called
            return None  # with them reads them (`build_calls`)
        if isinstance(parent, ast.Tuple) and isinstance(self.parents.get(id(parent)),
                                                        ast.Return) and not any(
                isinstance(e, ast.Starred) for e in parent.elts):
            return "returned"  # (as an item of the tuple returned: `check_uses`)
        if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], ast.Name):
            return self.alias_misuse(parent.targets[0].id, node)
        if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], (ast.Tuple, ast.List)) and not any(
                    isinstance(e, ast.Starred) for e in parent.targets[0].elts):
            return None  # `r, k = out`: its items, as an array's entries unpack
        if isinstance(parent, ast.For) and parent.iter is node:
            return None
        if isinstance(parent, ast.Call) and node in parent.args:
            if self.is_sorted(parent):  # sorted(out): the list of its items in order
                self.read_by(parent, "%sorted", parent.args)
                return self.sorted_uses(parent)
            if self.reads_as_array(parent):
                return None
            if self.is_append(self.parents.get(id(parent)), getattr(parent.func.value, "id",
                                                                    None)
                              if isinstance(parent.func, ast.Attribute) else None):
                return None  # a row of a list of lists: the builder checks its shape
            self.passes_list(parent, parent.args.index(node), node)
            return None
        if isinstance(parent, ast.BinOp) and self.joins(parent, node):
            return None
        if isinstance(parent, (ast.BinOp, ast.AugAssign)):
            return "in arithmetic (+ joins lists, * repeats them)"
        if isinstance(parent, ast.Return):
            return "returned"
        if isinstance(parent, ast.Compare) and all(
                isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
            return None  # `us is None`: a list is never None, nor an array
        if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(
                parent.ops[0], (ast.In, ast.NotIn)) and parent.comparators[0] is node:
            return None  # `v in out`: of an array, NumPy's (out == v).any(), as of the list
        if isinstance(parent, ast.Compare):
            return "compared"
        return f"used in `{ast.unparse(parent)}`" if parent is not None else "used here"

    def alias_misuse(self, name: str, node) -> str | None:
        """``v = out`` (``v = new_v`` at the end of a step): the list bound to another name
        too, which holds it (the array) wherever it is read; so every read of ``name`` is
        checked as the list's are (a read of what else ``name`` holds, conservatively too).
        The first misuse found, or None."""
        held = getattr(node, "id", None)
        seen = self.__dict__.setdefault("aliases", set())
        if name == held or name in seen:
            return None
        seen.add(name)
        skipped = _shadowed(self.root, name) | self.rebound_after(name, node)
        try:
            for read in ast.walk(self.root):
                if (isinstance(read, ast.Name) and read.id == name
                        and isinstance(read.ctx, ast.Load) and id(read) not in skipped):
                    what = self.misuse(read)
                    if what:
                        return f"bound to `{name}`, which is {what}"
        finally:
            seen.discard(name)
        return None

    def rebound_after(self, name: str, node) -> set[int]:
        """The nodes after ``name = <node>``, a statement of the function's own body, once a
        later statement of that body binds ``name`` again (``d = np.array(d)``): what they
        read is not the list."""
        stmt = node
        while stmt is not None and not (isinstance(stmt, ast.stmt)
                                        and self.parents.get(id(stmt)) is self.root):
            stmt = self.parents.get(id(stmt))
        body = self.root.body
        if stmt is None or not any(s is stmt for s in body):
            return set()
        at = next(k for k, s in enumerate(body) if s is stmt)
        stop = next((k for k in range(at + 1, len(body)) if isinstance(body[k], ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == name
                             for t in body[k].targets)), None)
        if stop is None:
            return set()
        return {id(n) for s in body[stop + 1:] for n in ast.walk(s)} | {
            id(t) for t in body[stop].targets}

    def joins(self, op: ast.BinOp, node) -> bool:
        """``[B] + out`` (or ``out + [...]``: a list display) read where an array of the
        items is read (``np.hstack([B] + [A @ B for ...])``): rewritten in place as
        ``%joined(left, right)``, the rows of both (`joined_items`). True where rewritten."""
        holder = self.parents.get(id(op))
        if not (isinstance(op.op, ast.Add) and isinstance(holder, ast.Call)
                and any(a is op for a in holder.args) and self.reads_as_array(holder)
                and self.passed is None):
            return False
        other = op.right if op.left is node else op.left  # (a name may be an array: `+`
        if not (isinstance(other, ast.List) and not any(  # of a list and an array adds)
                isinstance(e, ast.Starred) for e in other.elts)):
            return False
        call = locate_as(ast.Call(name_node("%joined"), [op.left, op.right], []), op)
        holder.args[next(k for k, a in enumerate(holder.args) if a is op)] = call
        for a in (op.left, op.right):
            self.parents[id(a)] = call
        self.parents[id(call)] = holder
        return True

    def reverses_in_place(self, call, node) -> bool:
        """``out.reverse()`` as a statement, of a list made in this function (no other name
        holds it: any other read of it is refused here): the statement calls
        ``%reversed(out)`` and rebinds ``out`` to it (``Expr.jitgrad_rebinds``, `build_stmts`).
        True where it was rewritten."""
        stmt = self.parents.get(id(call))
        if not (isinstance(call, ast.Call) and call.func is self.parents.get(id(node))
                and not call.args and not call.keywords and isinstance(stmt, ast.Expr)
                and self.passed is None):
            return False
        stmt.value = locate_as(ast.Call(name_node("%reversed"), [node], []), call)
        self.parents[id(node)] = stmt.value
        stmt.jitgrad_rebinds = node.id
        return True

    def read_by(self, call: ast.Call, intrinsic: str, args: list) -> None:
        """``call`` (``out.index(v)``, ``sorted(out)``) made a call of ``intrinsic`` with
        ``args`` (its keywords kept): rewritten in place for a list made in the function (it is
        one on every call); for one given to it (``passed`` is not None: a list in this call
        only), noted in ``rewritten`` (call id -> (intrinsic, args)), which the builder reads
        for this call of the function only (`build_calls`)."""
        if self.passed is not None:
            self.rewritten[id(call)] = (intrinsic, list(args))
            return
        call.func = locate_as(name_node(intrinsic), call.func)
        call.args = list(args)
        for a in args:
            self.parents[id(a)] = call

    def is_sorted(self, call: ast.Call) -> bool:
        f = call.func
        return (isinstance(f, ast.Name) and (f.id == "%sorted" or f.id == "sorted" and (
            "sorted" not in self.bound and "sorted" not in self.globals))
                and len(call.args) == 1 and all(k.arg == "reverse" for k in call.keywords))

    def sorted_uses(self, call: ast.Call) -> str | None:
        """``sorted(out)`` of a list that is an array of its items: a new such list (NumPy's
        sort of the items), whose own reads are checked as the list's are."""
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(
                parent.targets[0], ast.Name):
            self.check_uses(parent.targets[0].id, parent, [])
            return None
        return self.misuse(call)

    def slice_read_as_array(self, sliced: ast.Subscript) -> bool:
        """Whether the slice ``sliced`` of a list is read only as the same slice of the array
        of its items gives it: an argument of a function that reads its arguments as arrays
        (`reads_as_array`: ``np.mean(out[k:])``, ``sum(out[:n])``), the sequence of a
        ``for``, or bound to a name whose every read is one of a list's (CommonRoad's
        ``x_ks = x[0:5]``, then ``f(x_ks)``: `alias_misuse`)."""
        holder = self.parents.get(id(sliced))
        if isinstance(holder, ast.For) and holder.iter is sliced:
            return True
        if isinstance(holder, ast.Assign) and holder.value is sliced and len(
                holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
            return self.alias_misuse(holder.targets[0].id, sliced) is None
        return isinstance(holder, ast.Call) and any(a is sliced for a in holder.args) and \
            self.reads_as_array(holder) and not self.is_sorted(holder)

    def reads_as_array(self, call: ast.Call) -> bool:
        f = call.func
        if isinstance(f, ast.Name) and f.id in ("%items", "%reversed", "%joined"):
            return True
        if isinstance(f, ast.Name) and f.id not in self.bound:
            if f.id in _BUILTIN_READERS and f.id not in self.globals:
                return True
            if f.id in ("zip", "enumerate", "reversed") and f.id not in self.globals:
                parent = self.parents.get(id(call))  # in a for: over the items
                return (isinstance(parent, ast.For) and parent.iter is call) or (
                    isinstance(parent, ast.Call) and self.reads_as_array(parent))
            value = autograd_names.stands_for(self.globals.get(f.id))  # (anp.sum: np.sum)
            return isinstance(value, np.ufunc) or any(
                value is getattr(np, n, None) for n in _NUMPY_READERS if "." not in n)
        parts = []
        while isinstance(f, ast.Attribute):
            parts.insert(0, f.attr)
            f = f.value
        if isinstance(f, ast.Name) and f.id not in self.bound and \
                getattr(self.globals.get(f.id), "__name__", None) in _NUMPY_NAMES:
            obj = np
            for p in parts:
                obj = getattr(obj, p, None)
            return isinstance(obj, np.ufunc) or ".".join(parts) in _NUMPY_READERS
        return False


def _shadowed(root, name) -> set[int]:
    """The nodes of the functions nested in ``root`` that bind ``name`` themselves (a
    parameter or an assignment: their own variable, not the list of that name)."""
    out = set()
    for node in ast.walk(root):
        if node is not root and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                   ast.Lambda)):
            params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            body = node.body if isinstance(node.body, list) else [node.body]
            if name in params or name in store_names(body):
                out |= {id(n) for n in ast.walk(node)}
    return out


def returned_list(fn, fn_node, call: ast.Call, callee: str, where, at=True):
    """The reads, in the function ``fn_node``, of the list that ``call`` returned (one a
    called function built by appending or was given, the array of its items; ``at``: True
    for the value returned, or the positions of the lists in the tuple returned): each must be
    one an array of its items gives the same meaning to, as the callee's own reads are
    (`check_uses`); anything else is refused, naming it. Returns what the function returns
    of the lists in turn (True, positions in a tuple, or None; its own caller checks them)."""
    lists = ListReads(fn, fn_node, None, where)
    lists.parents = {id(c): p for p in ast.walk(fn_node) for c in ast.iter_child_nodes(p)}
    parent = lists.parents.get(id(call))
    names = None
    if (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name) and at is True):
        names = [parent.targets[0].id]
    elif (isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1
          and isinstance(parent.targets[0], ast.Tuple) and at is not True and all(
              isinstance(e, ast.Name) for e in parent.targets[0].elts)
          and max(at) < len(parent.targets[0].elts)):  # `v, xs, ys = f(...)`
        names = [parent.targets[0].elts[k].id for k in sorted(at)]
    elif at is not True:
        raise UnsupportedError(f"{callee} returns a tuple holding a list (an array of its items "
                               "in the gradient); unpack it where it is called "
                               "(`v, xs = f(...)`)", where(call))
    if names is None:
        reads = {ast.unparse(call): [call]}
    else:  # every read of the name (where it names something else too: taken as the list,
        reads = {name: [n for n in ast.walk(fn_node) if isinstance(n, ast.Name)  # to be safe)
                        and n.id == name and isinstance(n.ctx, ast.Load)] for name in names}
    returned = None
    for name, nodes in reads.items():
        shadowed = _shadowed(fn_node, name)
        for node in nodes:
            if id(node) in shadowed:
                continue
            what = lists.misuse(node)
            if what == "returned":
                returned = _returned_with(returned, node, lists.parents)
            elif what:
                raise UnsupportedError(f"the list `{name}` (built by appending in {callee}) "
                                       f"{what} is not supported (the list is an array in the "
                                       f"gradient); {instead('list')}", where(node))
    return returned


def _returned_with(returned, node, parents):
    """What a function returns of its lists (True: the value; a set of positions in a tuple),
    with ``node`` (a list returned, or an item of the tuple returned) added."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Return) or returned is True:
        return True
    return {*(returned or ()), parent.elts.index(node)}


def list_parameters(fn, fn_node, names, callee: str, where):
    """The reads, in the function ``fn_node``, of its parameters ``names``, which its caller
    gave lists that are arrays of their items: each must be one an array of its items gives
    the same meaning to (`_Lists.misuse`: a call passing it on is marked, the builder checks
    that callee in turn), else refused, naming it. Returns what the function returns of them
    (as `returned_list`), the calls that pass them on (call id -> argument -> name) and the
    calls that read them through an intrinsic (`ListReads.read_by`)."""
    lists = ListReads(fn, fn_node, None, where)
    lists.parents = {id(c): p for p in ast.walk(fn_node) for c in ast.iter_child_nodes(p)}
    lists.passed = {}
    returned = None
    for name in names:
        shadowed = _shadowed(fn_node, name)
        body = fn_node.body
        stop = next((k for k, s in enumerate(body) if isinstance(s, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in s.targets)), None)
        if stop is not None:  # rebound (`zs = np.asarray(zs)`): then not the list
            shadowed |= {id(n) for s in body[stop + 1:] for n in ast.walk(s)}
        for node in ast.walk(fn_node):
            if (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
                    and id(node) not in shadowed):
                what = lists.misuse(node)
                if what == "returned":
                    returned = _returned_with(returned, node, lists.parents)
                elif what:
                    raise UnsupportedError(
                        f"the list `{name}` (given to {callee} as a list its caller built, an "
                        f"array of its items in the gradient) {what} is not supported; "
                        f"{instead('list')}", where(node))
    return returned, lists.passed, lists.rewritten
