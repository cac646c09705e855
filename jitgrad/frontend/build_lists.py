"""Arrays the builder allocates for what a first attempt at a build learned: the array of a
list built by appending in a loop (`desugar_lists`), its rows of the items' shape.

Part of `build.Builder` (a mixin). Takes the statements `desugar_lists` marks
(``Assign.jitgrad_list``: the allocation; ``jitgrad_append``: an item's write) and the
`build.LoopSeeds` of earlier attempts. Guarantees: an item is a number, or an array whose
shape is made of constants and the arguments' axes (the first attempt raises `ListOfArrays`
with that shape, and the next allocates rows of it); anything else is refused at the user's
line, saying what to write instead.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError, instead
from jitgrad.core.ir import Var
from jitgrad.frontend.build_ast import INTEGERS, UNROLLED, BuildList, ListOfArrays
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym


def _constant(token):
    """A size token ``("less", n, k)`` (a slice dropping ``k`` entries of an axis of ``n``) of a
    constant ``n`` as the number it is; any other token as it is."""
    if isinstance(token, tuple) and len(token) == 3 and token[0] == "less" and all(
            type(t) is int for t in token[1:]):
        return max(0, token[1] - token[2])
    return token


def key_free(builder, stmt) -> bool:
    """Whether no earlier attempt decided the rows of the list ``stmt`` writes into."""
    return builder.list_key(stmt.jitgrad_list) not in builder.seeds.lists


class ListArrays:
    """Methods mixed into `build.Builder`."""

    def list_key(self, made) -> tuple:
        """Where the list is made, and the call sites that led there: a helper called twice
        (colour's tsplit of an (n, 3) argument, then of a constant of shape (2,)) makes a list
        of its own at each call, whose rows take that call's shape."""
        loc = self.src.loc(made)
        key, b = (loc.filename, loc.lineno, loc.col), self
        while b.caller is not None:
            key, b = key + b.call_site, b.caller
        return key

    def list_array(self, stmt, made):
        """The array a list built in a loop becomes (`desugar_lists`): one entry per item, or,
        once a first attempt found its items to be arrays (`ListOfArrays`), one row each."""
        count = self.expr(stmt.value.args[0])
        rows = getattr(made, "jitgrad_first_rows", None)
        if rows is not None and isinstance(self.env[rows], Sym):  # `out = list(x)`: x's
            # rows, then items of their shape (of an empty list: as `out = []`)
            x = self.env[rows]
            dims = tuple(symbolic.record("shape_dim", x, axis=a) for a in range(1, x.ndim))
        else:
            seeds = self.seeds.lists.get(self.list_key(made), ())
            if seeds == INTEGERS:  # of integers (`[i for i in range(n) if ...]`): as NumPy's
                return symbolic.NUMPY[np.empty](count, dtype=np.int64)
            dims = self.dims_of_rows(seeds, made)
        return symbolic.NUMPY[np.empty]((count, *dims)) if dims else \
            symbolic.NUMPY[np.empty](count)

    def dims_of_rows(self, rows, made=None) -> tuple:
        """The sizes `row_shape` describes, as values of this build (``("first", k)``: axis k
        of the first item of the list ``made`` made, evaluated before the loop)."""
        return tuple(r if isinstance(r, int) else symbolic.record(
            "shape_dim", self.env[made.jitgrad_first], axis=r[1]) if r[0] == "first" else
            symbolic.record("shape_dim", self.gb.sym(self.gb.param_vars[r[0]]), axis=r[1])
            for r in rows)

    def list_item(self, stmt, made):
        """The item a list's array is written at (`desugar_lists`); where it cannot be built
        in the loop the array is filled in (``(i,) * k`` of a run-time ``k``) and the loop has
        an unrolled alternative, that alternative (the list Python's, `UNROLLED`)."""
        try:
            return self.expr(stmt.value)
        except UnsupportedError:
            if getattr(made, "jitgrad_unrollable", False) and key_free(self, stmt):
                raise ListOfArrays(self.list_key(made), UNROLLED) from None
            raise

    def check_list_rows(self, x, made) -> None:
        """``out = list(x)`` appended to in a loop (`desugar_lists`): an array of numbers is
        the array of its rows, an empty list made in the function (``log['err']``, held
        by no other name: the loop's appends are the list's) an array of the items; anything
        else (a tuple known while building) Python's list, its loop unrolled
        (`desugar_lists.unrolled_alternative`)."""
        if getattr(made, "jitgrad_entry", False) and isinstance(x, tuple) and \
                self.holders(x) > 1:  # (`d[K].append(v)`: a change of the list itself)
            raise UnsupportedError(f"appending in a loop to `{made.jitgrad_entry}` while "
                                   "another name (or an item of a list or dict) holds the "
                                   "list too: "
                                   "jitgrad holds it by value, so the other would not see the "
                                   "appends; copy it first", self.loc(made))
        if isinstance(x, BuildList) and not x:
            return
        if not (isinstance(x, Sym) and x.ndim and x.type.kind in "fi") and \
                self.list_key(made) not in self.seeds.lists:
            raise ListOfArrays(self.list_key(made), UNROLLED)

    def check_list_item(self, name, value, stmt):
        """A list built in the function is an array of numbers, or of arrays whose shape is
        known before the loop (`desugar_lists`): refuse appending anything else."""
        if getattr(stmt.jitgrad_list, "jitgrad_python_list", None) and key_free(self, stmt):
            # read as only Python's list is (`*out`, `out + [...]`): its loop unrolled
            raise ListOfArrays(self.list_key(stmt.jitgrad_list), UNROLLED)
        rows = getattr(stmt.jitgrad_list, "jitgrad_first_rows", None)
        rows = rows if rows is not None and isinstance(self.env[rows], Sym) else None
        if rows is not None and (value.ndim if isinstance(value, Sym) else 0) != \
                self.env[rows].ndim - 1:  # `out = list(x)`: items of the rank of x's rows
            raise UnsupportedError(f"the items appended to `{name}` (made as list(x)) are "
                                   "not of the rank of x's rows", self.loc(stmt))
        if rows is not None and isinstance(value, Sym) and value.ndim:
            if value.type.kind not in "fi":
                raise UnsupportedError(f"appending a {value.type.kind} array to `{name}`",
                                       self.loc(stmt))
            return  # (its sizes: checked by the write)
        if isinstance(value, Sym) and value.ndim and value.type.kind in "fi":
            rows = self.row_shape(value)
            if rows is None and getattr(stmt.jitgrad_list, "jitgrad_first", None):
                # `out = [x0]`, made before the loop: the rows take x0's shape, known then
                # (each write checks its row's sizes at run time)
                rows = tuple(("first", k) for k in range(value.ndim))
            key = self.list_key(stmt.jitgrad_list)
            if rows is not None and key not in self.seeds.lists:
                raise ListOfArrays(key, rows)
            if rows is not None and len(self.seeds.lists[key]) != len(rows):
                raise UnsupportedError(f"the items appended to `{name}` change rank",
                                       self.loc(stmt))  # (sizes: checked by the write)
            if rows is not None:
                return
            if getattr(stmt.jitgrad_list, "jitgrad_unrollable", False) and \
                    key not in self.seeds.lists:  # a few iterations: unrolled, a list of them
                raise ListOfArrays(key, UNROLLED)
            raise UnsupportedError(f"appending to `{name}` arrays whose shape is known only "
                                   "inside the loop (a list of arrays is an array of rows, "
                                   "allocated before the loop from the arguments' shapes); "
                                   f"{instead('list of arrays')}", self.loc(stmt))
        if (not isinstance(value, (Sym, int, float)) or isinstance(value, bool)) and getattr(
                stmt.jitgrad_list, "jitgrad_unrollable", False) and key_free(self, stmt):
            # a list of tuples, or of other values known while building (types, strings,
            # functions, bools: `[hasattr(a, "__array__") for a in args]`): Python's list,
            # its loop unrolled
            raise ListOfArrays(self.list_key(stmt.jitgrad_list), UNROLLED)
        kind = (value.type.kind if isinstance(value, Sym) and not value.ndim else
                "f" if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
        self.note_integer_item(value, stmt)
        if kind not in ("f", "i"):
            what = (f"an array of rank {value.ndim}" if isinstance(value, Sym) and value.ndim
                    else "a bool" if kind == "b" or isinstance(value, bool)
                    else f"a {type(value).__name__}")
            raise UnsupportedError(f"a list of numbers only: appending {what} to `{name}` (or "
                                   f"making it an item of a list comprehension) is not "
                                   f"supported; {instead('list of arrays')}", self.loc(stmt))

    def size_decided(self, n):
        """The run-time integer ``n`` as the number it is in the example call, where it is
        made of the arguments' sizes alone (`GraphBuilder.decided_size`); else ``n``."""
        return self.gb.decided_size(n)

    def note_integer_item(self, value, stmt) -> None:
        """A list of numbers is an array of integers while every item appended is one (an
        int, or an integer of the graph: a loop's index), as NumPy's array of the list is:
        the first such item found starts the build again with an int64 array, and a number
        of another kind appended to it after that, with a float array (for good)."""
        integer = (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                   or isinstance(value, Sym) and not value.ndim and value.type.kind == "i")
        key = self.list_key(stmt.jitgrad_list)
        if integer and key_free(self, stmt):
            raise ListOfArrays(key, INTEGERS)
        if not integer and self.seeds.lists.get(key) == INTEGERS:
            raise ListOfArrays(key, ())

    def initial_size(self, token):
        """An axis of an array a loop carries (`GraphBuilder.shape_from`) as its initial
        array's axis."""
        while (isinstance(token, tuple) and len(token) == 2 and token not in self.gb.param_axes
               and token[0] in self.gb.shape_from and isinstance(token[1], int)):
            dims = self.gb.shape_from[token[0]].dims
            if dims is None or len(dims) <= token[1]:
                break
            token = self.gb.size_class(dims[token[1]])
        return token

    def row_shape(self, value) -> tuple | None:
        """``value``'s shape as constants and the arguments' axes (`ListOfArrays`), or None."""
        atom = value.atom
        while isinstance(atom, Var) and atom.dims is None and atom in self.gb.shape_from:
            atom = self.gb.shape_from[atom]  # written in place in a loop: its initial shape
        dims = atom.dims if isinstance(atom, Var) else None
        if dims is None:
            return None
        rows = []
        for token in dims:
            if isinstance(token, tuple) and token and token[0] == "broadcast":
                # the size of one of its parts (the others are that size or 1): an argument's
                # axis or a constant, where one is
                known = [_constant(self.initial_size(self.gb.size_class(t))) for t in token[1:]]
                known = [t for t in known if isinstance(t, int) and t != 1
                         or t in self.gb.param_axes]
                if not known:
                    return None
                token = known[0]
            token = _constant(self.initial_size(self.gb.size_class(token)))
            if isinstance(token, int):
                rows.append(token)
            elif token in self.gb.param_axes:
                param, axis = self.gb.param_axes[token]
                rows.append((self.gb.param_vars.index(param), axis))
            else:
                return None
        return tuple(rows)
