"""Views followed to their array: reads after a write, and writes through a view.

Part of `build.Builder` (a mixin). The builder knows how every view of basic indexing, ``.T``
and newaxis was taken (`GraphBuilder.view_of`: its array, the operation, the index), as Numba
code's aliasing is static. Guarantees:

* **A read** of a view (`follow`) whose array was written in place since the view was taken
  takes the view again from the array's current version (the memory model's rule: every name
  for a buffer means its newest version), as NumPy would show the new values through it. Where
  the builder does not know the array's current version (a write under a branch that merged
  no name for it, a loop that rebinds it), the read is refused as before (`stale_message`).
* **A write** through a view (`write_through`), ``u[idx] = v`` with ``u = U[k]``, is a write
  into the array at the composed index (``U[k, idx] = v``): a new version of the array's
  buffer, as any in-place write, which every name for the array then means; the view's own
  names are taken again when read. Where an index does not compose (a step or bounds inside
  the view, a ``.T`` written over a region of rank two or more), the view's values with the
  update are written back over its whole region (``tmp = u.copy(); tmp[idx] = v; U[k] = tmp``):
  sound, and linear in the view's size per write.
* A write through a view of an argument of the differentiated function makes the argument be
  copied on entry, as any write into it (`GraphBuilder.check_writable`).
* Views the builder does not follow (a reshape, which NumPy may copy; a view carried by a loop
  that rebinds it, or merged after a branch) keep today's refusals.
"""

from __future__ import annotations

import ast

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import Const, Eqn, Var
from jitgrad.lang import symbolic
from jitgrad.prims import primitives


class Views:
    """The `Builder`'s views: methods mixed into `build.Builder`."""

    # -- reads ---------------------------------------------------------------------------

    def follow(self, v: Var, name: str, node) -> Var:
        """``v`` as its memory holds it now: a view taken again from its array's current
        version when that changed (or ``v`` itself); an array its current version. Refused
        where that version is not known."""
        gb = self.gb
        rec = gb.view_of.get(v)
        if rec is None:
            c = v
            while c in gb.latest:
                gb.followed.add(c)  # a loop checks the versions it lent were right (`Loops`)
                c = gb.latest[c]
            if gb.is_stale(c):
                raise UnsupportedError(symbolic.stale_message(f"`{name}`"), self.loc(node))
            return c
        base, prim, others, params = rec
        b = self.follow(base, name, node)
        if b is base and not gb.is_stale(v):
            return v
        key = (v, gb.block)
        r = gb.retaken.get(key)
        if r is not None and gb.view_of.get(r, (None,))[0] is b and not gb.is_stale(r):
            return r
        r = gb.apply(primitives.PRIMITIVES[prim], [gb.sym(b), *others], params).atom
        gb.retaken[key] = r
        return r

    def read_through(self, view: Var, spec, idx):
        """An entry of the view ``view`` (fresh) read as the entry of its array: (array,
        spec, operands), or None where the index does not name one entry or does not compose,
        or the view adds an axis (``expand_dims``; the view itself is read then). No view is
        then taken per entry read in a loop."""
        base, prim, others, params = self.gb.view_of[view]
        if prim == "expand_dims" or sum(s != "i" for s in spec) or (
                len(spec) != view.type.ndim):
            return None
        composed = compose(prim, params, list(others), spec, list(idx), view.type.ndim, 0)
        if composed is None:
            return None
        if base in self.gb.view_of:
            deeper = self.read_through(base, *composed)
            if deeper is not None:
                return deeper
        return (self.gb.sym(base), *composed)

    def view_root(self, v: Var) -> Var:
        """The array a (chain of) followed view(s) ``v`` was taken from, as the builder knows
        it now (no code emitted)."""
        while v in self.gb.view_of:
            v = self.gb.view_of[v][0]
        return self.gb.current(v)

    # -- writes --------------------------------------------------------------------------

    def write_through(self, name: str, node, view: Var, spec, idx, value) -> None:
        """``name[spec, idx] = value`` where ``name`` is the followed view ``view``: a write
        into its array at the composed index, or its region written back whole."""
        view = self.follow(view, name, node)
        base, prim, others, params = self.gb.view_of[view]
        composed = compose(prim, params, list(others), spec, list(idx), view.type.ndim,
                           symbolic.ndim_of(value))
        if composed is None:
            tmp = symbolic.record("copy", self.gb.sym(view))
            tmp = self.write_version(name, node, tmp.atom, spec, idx, value)
            spec2, idx2, value2 = write_back(prim, params, list(others), tmp, base.type.ndim)
        else:
            (spec2, idx2), value2 = composed, value
        if base in self.gb.view_of:
            self.write_through(name, node, base, spec2, idx2, value2)
        else:
            self.write_version(name, node, base, spec2, idx2, value2)

    def can_detach(self, view: Var) -> bool:
        """Whether all that shares ``view``'s memory was made in this iteration of the
        innermost loop being built, or outside any loop (`detach_view`)."""
        here = set(self.gb.made[self.loop_made:])
        return all(u in here for u in self.gb.memory_class(view))

    def detach_view(self, name: str, node, view: Var) -> Var:
        """A write into ``view``, a view the builder does not follow to its array (a reshape,
        which NumPy makes a view of a contiguous array and a copy of another): the view is
        copied, and the write goes into the copy, which every name for the view then means;
        every other array sharing its memory is out of date (`GraphBuilder.outdate`: a read
        is refused), so no later read can tell whether NumPy viewed or copied. Done only where
        all that shares the memory was made in this iteration of the innermost loop being built
        (or outside any loop): an array made before the loop would be read again by the next
        iteration, which the build does not see. Else refused as before. A loop whose body
        writes into such a view by its name detaches it before the loop (`loop_carries`)."""
        gb = self.gb
        if not self.can_detach(view):
            if view in gb.fresh_if_ran:
                self.detach_fresh(name, node, view)
                return gb.current(view)
            gb.refuse_view_write(name)
        copy = symbolic.record("copy", gb.sym(view)).atom
        gb.outdate(view)
        gb.newer(view, copy)
        for alias, v in list(self.env.items()):  # this function's names for the view
            if isinstance(v, symbolic.Sym) and v.atom is view:
                self.env[alias] = gb.sym(copy)
        return copy


    def detach_fresh(self, name: str, node, view: Var) -> None:
        """A write into ``view``, the value after a loop of an array the loop makes afresh on
        each iteration (`Loops.fresh_if_ran`), which shares memory with the array it held
        before the loop only where the loop ran no iteration: the compiled code raises
        ValueError there (Python would write into that earlier array), and otherwise the
        write goes into a copy, which every name for the view then means; the view itself
        is out of date (a read of it elsewhere is refused), the earlier array is not."""
        gb = self.gb
        trips, loc, carried = gb.fresh_if_ran[view]
        saved_loc = gb.loc
        gb.loc = loc
        message = (f"jitgrad: `{carried}` is written after the loop at line {loc.lineno}, "
                   "which ran no iteration, so it is still the array it was before the loop, "
                   "which Python would write into; the gradient does not follow that: run the "
                   "loop at least once, or .copy() the array before writing")
        self.build_if(symbolic.record("eq", gb.sym(trips), 0),
                      lambda: gb.block.stmts.append(Eqn("raise_error", [], [], {
                          "exc": "ValueError", "msg": message}, loc)),
                      lambda: None, node if node is not None else ast.Pass(
                          lineno=loc.lineno, col_offset=loc.col))
        copy = symbolic.record("copy", gb.sym(view)).atom
        gb.loc = saved_loc
        gb.mark_stale(view)
        gb.newer(view, copy)
        for alias, v in list(self.env.items()):  # this function's names for the view
            if isinstance(v, symbolic.Sym) and v.atom is view:
                self.env[alias] = gb.sym(copy)


def view_bases(stmts, written: set[str]) -> set[str]:
    """The arrays a loop body may write into through views it takes (``row = U[i]`` then
    ``row[:] = ...``, ``row *= s``, ``kernel(row)``: ``written`` names those; or ``row.fill(v)``): ``U``, and
    so on down a chain of views taken of views."""
    taken: dict[str, set[str]] = {}
    written = set(written)
    for stmt in stmts:
        for node in ast.walk(stmt):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("fill", "sort")
                    and isinstance(node.func.value, ast.Name)):
                written.add(node.func.value.id)  # `row.fill(v)`, `row.sort()` write into row
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, (ast.Subscript, ast.Attribute))):
                a = node.value
                while isinstance(a, (ast.Subscript, ast.Attribute)):
                    a = a.value
                if isinstance(a, ast.Name):
                    taken.setdefault(node.targets[0].id, set()).add(a.id)
    out, todo = set(), list(written)
    while todo:
        for b in taken.get(todo.pop(), ()):
            if b not in out:
                out.add(b)
                todo.append(b)
    return out


def _groups(spec, atoms) -> list:
    """An index as (item, its operands) pairs: an integer has one, a slice one per bound."""
    out, k = [], 0
    for item in spec:
        n = 1 if item == "i" else sum(item[1:]) if isinstance(item, tuple) else 0
        out.append((item, list(atoms[k:k + n])))
        k += n
    return out


def _flat(groups) -> tuple:
    return tuple(g[0] for g in groups), [a for g in groups for a in g[1]]


def _known(a):
    """The value of an integer known while building (a Python int or a constant), or None."""
    if isinstance(a, Const):
        a = a.value
    return a if isinstance(a, int) and not isinstance(a, bool) else None


def compose(prim, params, others, spec, idx, ndim, value_ndim):
    """The index into the view's array that ``view[spec, idx]`` names: (spec, operands), or
    None where it does not compose exactly (or the value would need reshaping)."""
    w = _groups(spec, idx)
    if any(g[0] == "n" for g in w) or len(w) > ndim:
        return None
    w += [(":", [])] * (ndim - len(w))
    if prim == "getitem":
        out, rest = [], iter(w)
        for item, ats in _groups(params["index_spec"], others):
            if item == "i":
                out.append((item, ats))
                continue
            sub = next(rest)
            if item == ":" or sub[0] == ":":
                out.append(sub if item == ":" else (item, ats))
                continue
            # an integer into a slice: only ``x[lo:][j]`` with both known and not negative
            lo = _known(ats[0]) if item[1] else 0
            j = _known(sub[1][0]) if sub[0] == "i" else None
            if item[2] or item[3] or lo is None or lo < 0 or j is None or j < 0:
                return None
            out.append(("i", [lo + j]))
        out += list(rest)
        return _flat(out)
    if prim == "transpose":
        if sum(g[0] != "i" for g in w) > 1:
            return None  # a region of rank 2 would need its value transposed: written back
        axes = params.get("axes") or tuple(reversed(range(ndim)))
        out = [None] * ndim
        for k, g in enumerate(w):
            out[axes[k]] = g
        return _flat(out)
    if prim == "expand_dims":
        axis = params["axis"]
        item, ats = w[axis]
        if not (item == ":" or (item == "i" and _known(ats[0]) in (0, -1))):
            return None
        rest = w[:axis] + w[axis + 1:]
        if value_ndim > sum(g[0] != "i" for g in rest):
            return None
        return _flat(rest)
    return None


def write_back(prim, params, others, tmp, base_ndim):
    """(spec, operands, value) writing the view's whole region of its array with ``tmp`` (the
    view's values, updated)."""
    if prim == "getitem":
        return params["index_spec"], others, tmp
    full = ((":",) * base_ndim, [])
    if prim == "transpose":
        axes = params.get("axes")
        inverse = None if axes is None else tuple(sorted(range(len(axes)), key=axes.__getitem__))
        return (*full, symbolic.record("transpose", tmp, axes=inverse) if inverse
                else symbolic.record("transpose", tmp))
    axis = params["axis"]  # expand_dims: the unit axis indexed away
    spec = (":",) * axis + ("i",)
    return (*full, symbolic.record("getitem", tmp, 0, index_spec=spec))
