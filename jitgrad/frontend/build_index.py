"""Building subscripts: index expressions to index specs, reads and gathers.

Part of `build.Builder` (a mixin, under `build_exprs.Expressions`). Takes a subscript's AST
(``x[i, 1:n, None]``, ``x[idx]``, ``x[mask]``, ``a[rows, cols]``, a ``slice`` object, an
index tuple from ``np.ndindex``); gives ``(spec, atoms)`` for the ``getitem``/``setitem``
primitives, or the gather an advanced index is (positions checked at run time). Guarantees:
an index jitgrad cannot follow is refused at the user's line, saying what to write instead.
"""

from __future__ import annotations

import ast

import numpy as np

from jitgrad.core import ir
from jitgrad.core.errors import ShapeError, UnsupportedError, refused
from jitgrad.core.ir import Var
from jitgrad.frontend import autograd_names
from jitgrad.frontend.build_ast import RunTimeRange, UnrollLoop
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.desugar import int_literal
from jitgrad.lang import (
    complex_pairs,
    numpy_api,
    numpy_positions,
    numpy_shape,
    scipy_sparse,
    symbolic,
)
from jitgrad.lang.size_tokens import size_token
from jitgrad.lang.symbolic import Sym
from jitgrad.prims import primitives


class Indexing:
    """Methods mixed into `build.Builder` through `build_exprs.Expressions`."""

    # -- indexing ------------------------------------------------------------------------

    def index(self, node, store: bool = False):
        """An index expression → (spec, atoms) for getitem/setitem; None items → newaxis.
        ``store``: the index is written through (a refused mask then says how to write)."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        spec, atoms = [], []
        gathered = None  # (axis, array): one integer array among slices (`x[:, idx]`)
        paired = None  # an integer vector right after that one (`x[..., rows, cols]`)
        leading = None  # a boolean mask first, over the leading axes, beside other items
        for item in items:
            if isinstance(item, ast.Slice):
                flags = []
                for part in (item.lower, item.upper, item.step):
                    if part is None:
                        flags.append(False)
                        continue
                    v = self.expr(part)
                    self.check_int(v, part)
                    atoms.append(v)
                    flags.append(True)
                spec.append(":" if not any(flags) else ("s", *flags))
                continue
            if (item is items[0] and all(isinstance(i, ast.Slice) and i.lower is None
                                         and i.upper is None and i.step is None
                                         for i in items[1:])
                    and isinstance(item, (ast.List, ast.Tuple)) and item.elts
                    and all(int_literal(e) is not None for e in item.elts)):
                # x[[0, 2, -1]]: rows at constant integers
                rows = np.array([int_literal(e) for e in item.elts], dtype=np.int64)
                return ("a",), [self.constant_array("rows", rows, item)]
            v = self.expr(item)
            if isinstance(v, np.ndarray) and v.ndim and v.dtype.kind in "iub":
                # an item of a global tuple of index arrays (`LT[0]`): a constant array
                v = self.constant_array("index", v if v.dtype.kind == "b"
                                        else v.astype(np.int64), item)
            if len(items) > 1 and (_integers(v) or isinstance(v, (tuple, list)) and not v):
                # x[3, 2:, [1, 3]]: a list or tuple beside other items is an index array in
                # NumPy (not more items of the index; an empty one selects nothing there)
                v = self.constant_array("index", np.array(v, dtype=np.int64), item)
            if isinstance(v, numpy_positions.OuterIndex):  # K[np.ix_(rows, cols)]
                if len(items) != 1:
                    raise UnsupportedError("np.ix_ beside other index items (index with it "
                                           "alone: `K[np.ix_(rows, cols)]`)", self.loc(item))
                return ("o",), [self.index_vector(u, item) for u in v.vectors]
            if (isinstance(v, tuple) and len(items) > 1 and len(v) == 1
                    and isinstance(v[0], Sym) and v[0].ndim == 1 and v[0].type.kind == "i"):
                # b[i, 1] with i = np.nonzero(m): NumPy reads the tuple (idx,) beside other
                # items as the index array of shape (1, n) it makes
                v = symbolic.NUMPY[np.expand_dims](v[0], 0)
            if v is None or isinstance(v, slice):  # s = slice(1, n); x[s]
                self.known_index_item(v, item, spec, atoms)
                continue
            if isinstance(v, tuple) and len(items) == 1 and v and all(
                    isinstance(e, Sym) and e.ndim == 1 and e.type.kind == "i" for e in v):
                # x[np.nonzero(m)]: a tuple of index arrays, one per axis (one or two)
                if len(v) == 1:
                    return ("a",), [v[0]]
                if len(v) == 2:
                    return ("p",), list(v)
                raise self.array_index_refused(v[0], len(v), store, item)
            if isinstance(v, tuple):  # x[idx] with idx = (i, j), as np.ndindex gives, or
                for e in v:          # idx = (slice(None), 1)
                    if e is Ellipsis and "e" in spec:
                        raise ShapeError("an index can only have a single ellipsis (...)",
                                         self.loc(item))
                    self.known_index_item(e, item, spec, atoms)
                continue
            if v is Ellipsis:
                if "e" in spec:
                    raise ShapeError("an index can only have a single ellipsis (...)",
                                     self.loc(item))
                spec.append("e")
                continue
            if isinstance(v, Sym) and v.ndim:
                rows_only = item is items[0] and all(  # x[idx, :], x[mask, :, :]: as x[idx]
                    isinstance(i, ast.Slice) and i.lower is None and i.upper is None
                    and i.step is None for i in items[1:])
                if (len(items) == 1 or rows_only) and v.ndim == 1 and v.type.kind == "i":
                    return ("a",), [v]  # x[idx]: rows of x at the integers idx
                if len(items) == 1 and v.type.kind == "b" or rows_only and v.ndim == 1 and \
                        v.type.kind == "b":
                    return ("m",), [v]  # x[mask]: the entries (or rows) where mask holds
                if len(items) == 2 and item is items[0] and v.ndim == 1 and v.type.kind == "i":
                    w = self.expr(items[1])  # a[rows, cols]: one entry per pair
                    if _integers(w):  # a[rows, (3, 3, 2)]: the constant tuple an array
                        w = self.constant_array("index", np.array(w, dtype=np.int64),
                                                items[1])
                    if isinstance(w, Sym) and w.ndim == 1 and w.type.kind == "i":
                        return ("p",), [v, w]
                if v.type.kind == "b" and item is items[0]:
                    leading = v  # x[mask, 0], x[mask2d, :, 1]: the mask over the first axes
                    spec.extend([":"] * v.ndim)
                    continue
                if (v.type.kind == "i" or v.type.kind == "b" and v.ndim == 1) and not store \
                        and gathered is None:
                    gathered = (len(spec), v)  # x[:, idx], x[idx2d], x[:, mask]: a gather
                    spec.append(":")           # along an axis (a mask: at its True entries)
                    continue
                if paired is None and not store and gathered is not None and \
                        gathered[0] == len(spec) - 1 and _int_vector(gathered[1]) and \
                        _int_vector(v):
                    paired = v  # x[..., rows, cols]: one entry of those two axes per pair
                    spec.append(":")
                    continue
                raise self.array_index_refused(v, len(items), store, item)
            self.check_int(v, item)
            spec.append("i")
            atoms.append(v)
        if leading is not None:
            if gathered is not None or "n" in spec:
                raise refused("indexing with a boolean mask beside an index array or None",
                              "mask write" if store else "mask read", self.loc(node))
            return ("q", tuple(spec)), [leading] + atoms
        if gathered is not None:
            if "n" in spec:
                raise refused("indexing with an integer array beside None", "integer arrays",
                              self.loc(node))
            if paired is not None and "i" in spec:
                raise refused("indexing with two integer arrays beside integers",
                              "integer arrays", self.loc(node))
            if paired is not None:  # (the rank the ellipsis stands for: `gather_pairs`)
                return ("xp", gathered[0], tuple(spec)), atoms + [gathered[1], paired]
            if "e" in spec:  # (the rank the ellipsis stands for: `gather_along`)
                return ("xe", gathered[0], tuple(spec)), atoms + [gathered[1]]
            return gather_spec(tuple(spec), gathered[0]), atoms + [gathered[1]]
        return tuple(spec), atoms

    def index_vector(self, v, node):
        """An integer vector of an index as a value of the graph (a constant if known)."""
        return v if isinstance(v, Sym) else self.constant_array(
            "index", np.asarray(v, dtype=np.int64), node)

    def outer_block(self, array, index, node):
        """``K[np.ix_(rows, cols)]``: the block of the matrix at those rows and columns, the
        rows gathered, then the columns of those (each gather's adjoint adds up repeats)."""
        if not isinstance(array, Sym) or array.ndim != 2:
            raise UnsupportedError("np.ix_ of two vectors indexes a matrix", self.loc(node))
        rows, cols = index[1]
        taken = self.getitem(array, (("a",), [rows]), node)
        return self.gather_along(taken, (("x", 1, (":", ":"), False), [cols]), node)

    def known_index_item(self, v, node, spec, atoms) -> None:
        """One item of an index held in a value (``s = slice(1, n)``, an entry of a tuple
        ``idx = (slice(None), 1)``): None, a slice, an ellipsis or an integer."""
        if v is None:
            spec.append("n")
        elif v is Ellipsis:
            spec.append("e")
        elif isinstance(v, slice):
            parts = (v.start, v.stop, v.step)
            for part in parts:
                if part is not None:
                    self.check_int(part, node)
                    atoms.append(part)
            flags = [p is not None for p in parts]
            spec.append(":" if not any(flags) else ("s", *flags))
        else:
            if isinstance(v, Sym) and v.ndim:  # b[i, 1] with i = np.nonzero(m): NumPy reads
                raise UnsupportedError(   # the tuple (idx,) as an index array of shape (1, n)
                    "an index holding a tuple of index arrays beside other items (`b[i, 1]` "
                    "with `i = np.nonzero(m)`, which NumPy reads as an index array of shape "
                    "(1, n)); index with the array itself: `b[i[0], 1]`", self.loc(node))
            self.check_int(v, node)
            spec.append("i")
            atoms.append(v)

    def array_index_refused(self, v, n_items: int, store: bool, node) -> UnsupportedError:
        """The refusal of the array ``v`` among ``n_items`` index items, with the form that
        works: np.where for a mask, a loop for integer arrays jitgrad does not take."""
        loc = self.loc(node)
        if v.type.kind == "b":
            return refused("indexing with a boolean mask", "mask write" if store else "mask read",
                           loc)
        if v.type.kind != "i":
            return refused("indexing with an array of floats", "integer arrays", loc)
        if store:
            return refused("writing through an integer-array index", "integer-array write", loc)
        if n_items > 1:
            return refused("indexing with an integer array beside other indices",
                           "integer arrays", loc)
        return refused(f"indexing with an integer array of rank {v.ndim}", "integer arrays", loc)

    def check_int(self, v, node):
        phrase = getattr(node, "jitgrad_try_index", None)
        if phrase and (isinstance(v, (bool, np.bool_)) or isinstance(v, Sym) and (
                v.type.kind == "b" and not v.ndim)):
            raise UnsupportedError(
                "try/except is supported only around code that cannot raise (the compiled "
                f"gradient does not catch exceptions); here {phrase}: a condition as the "
                "index, which indexes a number (TypeError in Python, and none for a 0-d "
                "array, which jitgrad does not tell apart) or adds an axis to an array; "
                "test the condition with `if` instead", self.loc(node))
        if isinstance(v, Sym):
            if v.type.kind != "i":
                raise UnsupportedError("an index must be an integer", self.loc(node))
        elif not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise UnsupportedError("an index must be an integer", self.loc(node))

    def advanced_positions(self, array, index, node):
        """The positions an advanced index (``x[idx]``, ``x[mask]``, ``a[rows, cols]``) names
        in ``array`` (`index_positions`, checked at run time), and whether they count rows
        of it (else entries of its first two axes, or of all of it for a mask of its shape)."""
        spec, atoms = index
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("an index array reads from an array", self.loc(node))
        if spec == ("a",):
            return symbolic.record("index_positions", atoms[0], array, kind="rows"), True
        if spec == ("m",):
            mask = atoms[0]
            if mask.ndim == array.ndim:
                return symbolic.record("index_positions", mask, array, kind="mask"), \
                    array.ndim == 1
            if mask.ndim == 1:
                return symbolic.record("index_positions", mask, array, kind="mask_rows"), True
            raise refused(f"indexing with a boolean mask of rank {mask.ndim} on an array of "
                          f"rank {array.ndim}", "mask read", self.loc(node))
        if array.ndim < 2:
            raise ShapeError(f"too many indices for an array of rank {array.ndim}",
                             self.loc(node))
        return symbolic.record("index_positions", atoms[0], atoms[1], array, kind="pairs"), \
            False

    def take_at(self, array, positions, rows: bool):
        """``array``'s rows at ``positions`` (``rows``), or the entries at flat positions of
        its first two axes (all of a matrix's): a gather, whose adjoint adds up repeats."""
        if rows and array.ndim <= 2:
            return symbolic.record("take", array, positions)
        lead = array.shape[0] if rows else array.shape[0] * array.shape[1]
        rest = tuple(array.shape[1 if rows else 2:])
        if not rest:  # a matrix's entries: of its flattened vector
            return symbolic.record("take", numpy_api.np_reshape(array, (lead,)), positions)
        flat = numpy_api.np_reshape(array, (lead, array.size // lead))
        return numpy_api.np_reshape(symbolic.record("take", flat, positions),
                                    (positions.shape[0],) + rest)

    def gather_along(self, array, index, node):
        """``x[:, idx]``, ``x[idx2d]``, ``x[idx, 0]``: the slices and integers read first,
        then the entries at the integer array (of any rank) along its axis, whose axes take
        that axis's place (or come first, where a slice stands between the integers and the
        array, as NumPy orders them): a gather of rows, positions checked at run time, whose
        adjoint adds up repeats."""
        if index[0][0] == "xe":  # x[..., idx]: the ellipsis as the full slices it stands for
            (_, at, spec), atoms = index
            spec, at = _without_ellipsis(spec, at, array)
            index = gather_spec(spec, at), atoms
        (_, axis, spec, front), atoms = index
        idx = atoms[-1]
        if not isinstance(array, Sym) or len(spec) > array.ndim:
            raise ShapeError("too many indices for the array", self.loc(node))
        sliced = self.getitem(array, (spec, atoms[:-1]), node)
        moved = numpy_shape.np_moveaxis(sliced, axis, 0) if axis else sliced
        flat = numpy_api.np_reshape(idx, (-1,)) if idx.ndim != 1 else idx
        positions = symbolic.record("index_positions", flat, moved,
                                    kind="mask_rows" if idx.type.kind == "b" else "rows")
        taken = self.take_at(moved, positions, True)
        if idx.ndim != 1:
            taken = numpy_api.np_reshape(taken, tuple(idx.shape) + tuple(moved.shape[1:]))
        if axis and not front:
            d = idx.ndim
            taken = numpy_api.np_transpose(taken, tuple(range(d, d + axis)) + tuple(range(d))
                                           + tuple(range(d + axis, taken.ndim)))
        return taken

    def gather_pairs(self, array, index, node):
        """``x[..., rows, cols]``, ``x[:, rows, cols]``: the slices read first, then one entry
        of the two axes at each (row, col) pair (`advanced_positions`' pairs, checked at run
        time), the pairs' axis standing where those two axes stood, as NumPy places adjacent
        index arrays."""
        (_, at, spec), atoms = index
        spec, at = _without_ellipsis(spec, at, array)
        if not isinstance(array, Sym) or len(spec) > array.ndim:
            raise ShapeError("too many indices for the array", self.loc(node))
        rows, cols = atoms[-2:]
        sliced = self.getitem(array, (spec, atoms[:-2]), node)
        # the cols' axis first, then the rows' before it
        moved = numpy_shape.np_moveaxis(numpy_shape.np_moveaxis(sliced, at + 1, 0), at + 1, 0)
        positions = symbolic.record("index_positions", rows, cols, moved, kind="pairs")
        taken = self.take_at(moved, positions, False)
        return numpy_shape.np_moveaxis(taken, 0, at) if at else taken

    def leading_mask_positions(self, array, mask, node):
        """The positions of ``mask``'s True entries among the entries of ``array``'s first
        ``mask.ndim`` axes taken together (flat, in C order), checked at run time to have the
        mask's shape there, as NumPy checks a boolean index."""
        k = mask.ndim
        if not isinstance(array, Sym) or array.ndim < k:
            raise ShapeError(f"too many indices for an array of rank {symbolic.ndim_of(array)}",
                             self.loc(node))
        if k == 1:
            return symbolic.record("index_positions", mask, array, kind="mask_rows")
        lead = array  # the first k axes alone (a view, read for its shape)
        if array.ndim > k:
            lead = symbolic.record("getitem", array, *([0] * (array.ndim - k)),
                                   index_spec=(":",) * k + ("i",) * (array.ndim - k))
        return symbolic.record("index_positions", mask, lead, kind="mask")

    def masked_leading(self, array, index, node):
        """``x[mask, 0]``, ``x[mask2d, :, 1:]``: the other items read first (a view, whose
        first axes are the mask's), then the entries of those axes where the mask holds (a
        gather of rows of the view with its masked axes flattened, whose adjoint adds back)."""
        (_, spec), (mask, *atoms) = index
        sliced = self.getitem(array, (spec, atoms), node)
        positions = self.leading_mask_positions(sliced, mask, node)
        if mask.ndim == 1:
            return self.take_at(sliced, positions, True)
        rest = tuple(sliced.shape[mask.ndim:])
        flat = numpy_api.np_reshape(sliced, (-1,) + rest)
        return self.take_at(flat, positions, True)

    def check_try_index(self, array, index, node) -> None:
        """``node`` (a subscript) in a try whose handlers do not catch IndexError
        (`parse.mark_try_indices`): taken where the compiled code raises IndexError exactly
        where NumPy does, so that neither runs a handler: a mask or an integer array (their
        positions are checked at run time) or slices alone (which never raise); an integer,
        which Numba does not check, or a number indexed, is refused."""
        phrase = getattr(getattr(node, "slice", None), "jitgrad_try_index", None)
        if phrase is None:
            return
        spec = index[0]
        if isinstance(array, Sym) and array.ndim and (
                spec in (("a",), ("m",), ("p",)) or all(s == ":" or isinstance(s, tuple)
                                                        and s[0] == "s" for s in spec)):
            return
        if isinstance(array, Sym) and array.ndim and spec == ("i",) and getattr(
                node.slice, "jitgrad_in_range", False):
            return  # ``x[i]`` in ``for i in range(len(x))`` (`parse._in_range`)
        why = ("an integer index is not checked by the compiled code" if isinstance(
            array, Sym) and array.ndim else "indexing a number raises TypeError in Python, "
            "and indexing a 0-d array does not, which jitgrad does not tell apart")
        raise UnsupportedError(
            "try/except is supported only around code that cannot raise (the compiled "
            f"gradient does not catch exceptions); here {phrase}: {why}. Test the "
            "condition with `if` instead, or move the index out of the try", self.loc(node))

    def check_rows_indexed(self, node) -> str | None:
        """A row of a table read at run time is an array standing for a list: taken where it
        is indexed (``T[i][j]``) or its length taken, directly or through the name it is
        assigned to, where a list and an array agree (not ``+``, ``*``, ``==``)."""
        parents = {id(c): p for p in ast.walk(self.src.node) for c in ast.iter_child_nodes(p)}
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return None
        target = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
            target = parent.targets[0]
        elif isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)), ast.Assign):
            outer = parents[id(parent)]
            t = outer.targets[0] if len(outer.targets) == 1 else None
            if isinstance(t, ast.Tuple) and len(t.elts) == len(parent.elts):
                target = t.elts[[id(e) for e in parent.elts].index(id(node))]
        if isinstance(target, ast.Name) and all(
                _indexed_or_measured(n, parents) for n in ast.walk(self.src.node)
                if isinstance(n, ast.Name) and n.id == target.id
                and isinstance(n.ctx, ast.Load)):
            return target.id
        raise UnsupportedError(
            "a row of a list of lists read with a run-time index is read as an array, which "
            "jitgrad takes only where the row is indexed (`table[i][j]`) or its len taken (a "
            "list and an array differ in +, * and ==): index it, or write the table as a "
            "NumPy array", self.loc(node))

    def table_array(self, table, node):
        """A nested tuple or list of numbers (0-d run-time values too), every level of one
        length, as the array of its entries (of numbers alone, a constant of the graph named
        after the global); a ragged one, or one of other values, is refused."""
        name = node.value.id if isinstance(getattr(node, "value", None), ast.Name) else "table"
        _table_shape(table, name, self.loc(node))
        if not _holds_sym_nested(table):
            return self.constant_array(name, np.array(table), node)

        def stacked(item):
            if isinstance(item, (tuple, list)):
                return symbolic.NUMPY[np.stack]([stacked(v) for v in item])
            return item
        return stacked(table)

    def unroll_for_index(self, node) -> None:
        """A tuple, list or string known while building indexed (or sliced) by a run-time
        value inside loops being built: the innermost of them over a range of a few iterations known while
        building, or over ``range(len(x))`` of an argument of a few rows in the example call
        (`Loops.assumed_stop`), is unrolled (`UnrollLoop`), its index then a number; else
        nothing."""
        for loop in reversed(getattr(self, "loops_building", [])):
            if self.loop_key(loop) in self.unrollable or self.loop_key(loop) in self.assumable:
                raise UnrollLoop(self.loop_key(loop))

    def unroll_for_name(self, node) -> None:
        """An attribute named by a run-time value inside loops being built: the innermost of
        them over a range of a few iterations known while building, or over ``range(len(x))``
        of an argument of a few rows in the example call (`Loops.assumed_stop`), is unrolled
        (`UnrollLoop`); else nothing."""
        for loop in reversed(getattr(self, "loops_building", [])):
            if self.loop_key(loop) in self.unrollable or self.loop_key(loop) in self.assumable:
                raise UnrollLoop(self.loop_key(loop))

    def getitem(self, array, index, node):
        self.check_try_index(array, index, node)
        if isinstance(array, complex_pairs.Complex):  # z[i]: of each part
            return complex_pairs.pair(
                *(self.getitem(part, index, node) if symbolic.ndim_of(part) else part
                  for part in (array.re, array.im)))
        if index[0] == ("o",):
            return self.outer_block(array, index, node)
        if index[0] and index[0][0] in ("x", "xe"):
            return self.gather_along(array, index, node)
        if index[0] and index[0][0] == "xp":
            return self.gather_pairs(array, index, node)
        if index[0] and index[0][0] == "q":
            return self.masked_leading(array, index, node)
        if index[0] in (("a",), ("m",), ("p",)):
            positions, rows = self.advanced_positions(array, index, node)
            if index[0] == ("m",) and index[1][0].ndim == array.ndim and array.ndim > 2:
                flat = numpy_api.np_reshape(array, (array.size,))
                return symbolic.record("take", flat, positions)
            return self.take_at(array, positions, rows)
        spec, atoms = expand_ellipsis(index, array)
        if not isinstance(array, Sym):
            if isinstance(array, str) and not any(isinstance(a, Sym) for a in atoms):
                try:  # "abcdef"[1:4], s[0]: a string known while building
                    return array[primitives.index_value(spec, atoms)[0]] if spec[0] != "i" \
                        else array[atoms[0]]
                except IndexError as e:
                    raise UnsupportedError(f"IndexError: {e}", self.loc(node)) from None
            if isinstance(array, (tuple, list)):
                if len(spec) == 1 and spec[0] == "i" and not isinstance(atoms[0], Sym):
                    return array[atoms[0]]
                if len(spec) == 1 and spec[0] != "i" and not any(isinstance(a, Sym)
                                                                  for a in atoms):
                    return tuple(array[primitives.index_value(spec, atoms)[0]])
                if (len(spec) == 1 and spec[0] == "i" and isinstance(atoms[0], Sym) and array
                        and all(symbolic.ndim_of(a) == 0 and not isinstance(a, bool)
                                and isinstance(a, (Sym, int, float)) for a in array)):
                    # `(a, b, c)[i]` of numbers, i known at run time: a vector, then a read
                    return symbolic.record("getitem", symbolic.NUMPY[np.stack](list(array)), atoms[0],
                                    index_spec=("i",))
                if (len(spec) == 1 and spec[0] == "i" and isinstance(atoms[0], Sym) and array
                        and any(isinstance(a, symbolic.COMPLEX_TYPES) for a in array)
                        and all(symbolic.ndim_of(a) == 0 and not isinstance(a, bool) and
                                isinstance(a, (Sym, int, float, *symbolic.COMPLEX_TYPES))
                                for a in array)):
                    # a list of complex numbers (a constellation), i known at run time: the
                    # vectors of their parts, then a read of each
                    parts = [complex_pairs.lift(a) for a in array]
                    return complex_pairs.pair(*(symbolic.record(
                        "getitem", symbolic.NUMPY[np.stack]([getattr(p, k) for p in parts]),
                        atoms[0], index_spec=("i",)) for k in ("re", "im")))
                if spec[0] == "i" and any(isinstance(a, Sym) for a in atoms) and all(
                        isinstance(row, (tuple, list)) for row in array):
                    # `table[i]` of a list of lists of numbers (a module's table), i known at
                    # run time: the table as an array, then a read of its row
                    row = self.getitem(self.table_array(array, node), index, node)
                    if isinstance(row, Sym) and row.ndim:
                        self.table_rows.add(self.check_rows_indexed(node))
                    return row
            if isinstance(array, (tuple, list, str)) and any(isinstance(a, Sym) for a in atoms):
                self.unroll_for_index(node)  # `Hc[j]`, `names[j:i]` in a short loop: unrolled
            raise UnsupportedError("indexing this value", self.loc(node))
        if (isinstance(array.atom, Var) and array.atom in self.gb.view_of and "n" not in spec
                and not self.gb.is_stale(array.atom)):  # `u[j]` of `u = U[k]`: `U[k, j]`
            array, spec, atoms = self.read_through(array.atom, spec, atoms) or (array, spec,
                                                                                atoms)
        plain = [s for s in spec if s != "n"]
        if len(plain) > array.ndim:
            raise ShapeError(f"too many indices for an array of rank {array.ndim}",
                             self.loc(node))
        result = array
        if plain and not all(s == ":" for s in plain):
            result = symbolic.record("getitem", array, *atoms, index_spec=tuple(plain))
            self.window_lengths(result, plain, atoms)
        # newaxis: insert unit axes where the None items stood
        pos = 0
        for s in spec:
            if s == "n":
                result = symbolic.record("expand_dims", result, axis=pos)
                pos += 1
            elif s != "i":
                pos += 1
        return result

    def window_lengths(self, result, spec, atoms) -> None:
        """A slice ``x[a:a + K]`` whose length ``K`` is a size (``input[:, i:i + K]``, a
        window that the loop's bounds keep inside the axis) is ``K`` long: assumed, so what
        it meets (``weights``, of ``K`` rows) has sizes known while building, and checked
        right after the read (``same_size``: a call where a window is cut short gets the
        general code, as for every assumption). Not in the general build, nor inside a
        ``prange`` loop (Numba cannot raise from its threads)."""
        gb = self.gb
        if not (gb.assume_sizes and isinstance(result, Sym) and isinstance(result.atom, Var)
                and result.atom.dims is not None) or any(
                getattr(s, "jitgrad_prange", False) for s in self.loops_building):
            return
        out, dims, bounds, axis = result.atom, list(result.atom.dims), list(atoms), 0
        for item in spec:
            if item == "i":
                bounds.pop(0)
                continue
            if item != ":":
                start, stop, step = (gb.atom(bounds.pop(0), check=False) if present else None
                                     for present in item[1:])
                length = self.window_length(start, stop, step)
                if length is not None and dims[axis] == (out, axis):  # (a size of its own)
                    n = gb.atom(symbolic.record("shape_dim", result, axis=axis), check=False)
                    gb.block.stmts.append(ir.Eqn("same_size", [], [n, length], {}, gb.loc))
                    dims[axis] = gb.canonical(size_token(length))
            axis += 1
        out.dims = tuple(dims)

    def window_length(self, start, stop, step):
        """The atom ``K`` of a slice ``start:start + K`` (step 1) where ``K`` stands for a
        size (`size_tokens.size_token`), else None."""
        if step is not None and not (isinstance(step, ir.Const) and step.value == 1):
            return None
        made = self.gb.scalar_defs.get(stop) if isinstance(stop, Var) else None
        if made is None or made[0] != "add" or start is None or start not in made[1]:
            return None
        length = made[1][1] if made[1][0] is start else made[1][0]
        if not isinstance(length, Var) or length.type.kind != "i":
            return None
        token = size_token(length)
        return length if token is not None and not isinstance(token, int) else None

    def expr_Subscript(self, node):
        value = self.expr(node.value)
        key = node.slice
        if isinstance(value, dict):  # a dict (an argument's tree, or built): by a known key
            k = key.value if isinstance(key, ast.Constant) else self.expr(key)
            if isinstance(k, Sym) or not (isinstance(k, (str, int, tuple))
                                          or is_user_object(k)):
                self.unroll_for_index(key)  # (radvel's params["per{}".format(n)] in `for n
                # in range(1, 3)`: that loop unrolled, its key then a string)
                raise UnsupportedError("a dict is read with a key known while building "
                                       "(params['W1'], or a name bound to one)", self.loc(key))
            if k not in value:
                raise UnsupportedError(f"the dict has no key {k!r} (its keys: "
                                       f"{', '.join(map(repr, value))})", self.loc(key))
            return value[k]
        if type(value).__module__ == "typing" or getattr(value, "__module__", None) == "typing":
            k = self.expr(key)  # Literal["a", "b"], Optional[int]: a type hint, made now
            if _holds_sym(k):
                raise UnsupportedError("a type hint subscripted with a run-time value",
                                       self.loc(key))
            return value[k]
        if isinstance(value, scipy_sparse.Sparse):  # A[rows, :]: of its dense value
            return self.sparse_getitem(value, key)
        value = value if isinstance(value, Sym) else autograd_names.stands_for(value)
        if value is np.r_ or value is np.c_:
            return self.concatenated(value is np.c_, node.slice)
        if value is np.mgrid or value is np.ogrid:
            return self.grid(value is np.ogrid, node.slice)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            raise refused(f"indexing with a string ([{key.value!r}], a dict's key) of a "
                          "value that is not a dict argument", "dict", self.loc(key))
        return self.getitem(value, self.index(node.slice), node)

    def sparse_getitem(self, value, key):
        """``A[rows, :]``, ``A[:, cols]``, ``A[1:3]``, ``A[i, j]`` of a scipy.sparse matrix
        (`scipy_sparse.index_keys`): each axis in turn, a slice as written (the rank kept)."""
        items = key.elts if isinstance(key, ast.Tuple) else [key]
        keys = [slice(None) if isinstance(item, ast.Slice) else self.expr(item)
                for item in items]
        read, taken = tuple(keys), scipy_sparse.index_keys(value, tuple(keys))
        if taken is None:  # A[i, j]: the entry
            return self.dense_getitem(value.dense, read, key)
        dense = value.dense
        for axis, k in enumerate(taken):  # dense[k, :], then dense[:, k]
            if k is None and axis < len(items) and isinstance(items[axis], ast.Slice):
                k = items[axis]  # (a slice: its own node, built as written)
            if k is not None:
                dense = self.dense_getitem(dense, (k, None) if axis == 0 else (None, k), key)
        return scipy_sparse.Sparse(dense, value.matrix)

    def dense_getitem(self, dense, keys: tuple, key):
        """``dense[keys]`` (a None key: ``:``; a slice's node: that slice), built as the
        user's subscript of names bound to the keys' values."""
        at = []
        for axis, k in enumerate(keys):
            if k is None or isinstance(k, ast.Slice):
                at.append(k or ast.Slice())
                continue
            hidden = f"%sparse_index{axis}@{key.lineno}:{key.col_offset}"
            self.env[hidden] = k
            at.append(ast.Name(hidden, ast.Load()))
        index = ast.Tuple(at, ast.Load())
        for sub in ast.walk(index):
            if not hasattr(sub, "lineno") or sub is index or isinstance(sub, ast.Name):
                ast.copy_location(sub, key)
        try:
            return self.getitem(dense, self.index(index), key)
        finally:
            for axis in range(len(keys)):
                self.env.pop(f"%sparse_index{axis}@{key.lineno}:{key.col_offset}", None)

    def concatenated(self, columns: bool, key):
        """``np.r_[a, b, 2.0]``: the items (numbers and arrays; a slice ``0:n`` is
        ``np.arange``) at least 1-D, joined along the first axis; ``np.c_[...]``: at least
        2-D, a vector as a column, joined along the last."""
        parts = []
        for item in key.elts if isinstance(key, ast.Tuple) else [key]:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                raise refused(f"np.{'c_' if columns else 'r_'} with the directive "
                              f"{item.value!r}", "np.r_/np.c_ of numbers and arrays",
                              self.loc(item))
            if isinstance(item, ast.Slice):
                ends = [None if p is None else self.expr(p)
                        for p in (item.lower, item.upper, item.step)]
                if any(isinstance(e, (Sym, complex)) for e in ends):
                    raise refused("a slice in np.r_ or np.c_ with run-time ends or a "
                                  "complex step (np.linspace)", "np.r_ with known slices",
                                  self.loc(item))
                v = symbolic.NUMPY[np.arange](*[0 if ends[0] is None else ends[0], ends[1],
                                                1 if ends[2] is None else ends[2]])
            else:
                v = self.expr(item)
            if isinstance(v, RunTimeRange):  # range(n) of a run-time n: NumPy's arange
                v = symbolic.NUMPY[np.arange](v.start, v.stop, v.step)
            v = self.known(symbolic.NUMPY[np.atleast_1d](v), item)
            if columns and symbolic.ndim_of(v) == 1:
                v = symbolic.NUMPY[np.reshape](v, (-1, 1))
            parts.append(v)
        return symbolic.NUMPY[np.concatenate](tuple(parts), axis=-1 if columns else 0)


    def grid(self, open_: bool, key):
        """``np.mgrid[:ny, :nx]`` (``np.ogrid``): each slice an ``np.arange`` (a complex step
        ``5j``: ``np.linspace`` of that many points, the end included), their ``np.meshgrid``
        with ``indexing="ij"`` (sparse for ogrid); mgrid's result is the stack of them (it
        unpacks as ``y, x = np.mgrid[...]``), ogrid's the tuple."""
        axes = []
        for item in key.elts if isinstance(key, ast.Tuple) else [key]:
            if not isinstance(item, ast.Slice):
                raise refused("np.mgrid or np.ogrid with other than slices", "np.mgrid[a:b, "
                              "c:d]", self.loc(item))
            start, stop, step = [None if p is None else self.expr(p)
                                 for p in (item.lower, item.upper, item.step)]
            start = 0 if start is None else start
            if isinstance(step, complex):
                if step.real or not float(step.imag).is_integer():
                    raise refused("a complex step other than a whole number of points",
                                  "np.mgrid[a:b:5j]", self.loc(item))
                axes.append(symbolic.NUMPY[np.linspace](start, stop, int(abs(step.imag))))
            else:
                axes.append(symbolic.NUMPY[np.arange](start, stop, 1 if step is None else step))
        if len(axes) == 1:
            return axes[0]
        grids = symbolic.NUMPY[np.meshgrid](*axes, indexing="ij", sparse=open_)
        return tuple(grids) if open_ else symbolic.NUMPY[np.stack](tuple(grids))


def expand_ellipsis(index, array):
    """``...`` in an index stands for as many full slices as the array has axes left over."""
    spec, atoms = index
    if "e" not in spec:
        return spec, atoms
    left = max(symbolic.ndim_of(array) - sum(s not in ("n", "e") for s in spec), 0)
    k = spec.index("e")
    return spec[:k] + (":",) * left + spec[k + 1:], atoms


def gather_spec(spec: tuple, at: int) -> tuple:
    """The index of a gather along an axis (`Indexing.gather_along`): ``spec`` (no
    ellipsis) with the integer array at ``at``, the axis it gathers along once the integers
    are read, and whether its axes come first: NumPy puts the index's axes where the integers
    and the array stand when they are side by side, else first."""
    advanced = [k for k, s in enumerate(spec) if s == "i"] + [at]
    front = max(advanced) - min(advanced) + 1 != len(advanced)
    axis = sum(1 for s in spec[:at] if s != "i")
    return ("x", axis, spec, front)


def _without_ellipsis(spec: tuple, at: int, array) -> tuple:
    """``spec`` with its ellipsis as the full slices it stands for in ``array``, and the
    position ``at`` of an item after it moved with them."""
    if "e" not in spec:
        return spec, at
    expanded, _ = expand_ellipsis((spec, []), array)
    return expanded, at + (len(expanded) - len(spec) if spec.index("e") < at else 0)


def _int_vector(v) -> bool:
    return isinstance(v, Sym) and v.ndim == 1 and v.type.kind == "i"


def _holds_sym(value) -> bool:
    if isinstance(value, tuple):
        return any(_holds_sym(v) for v in value)
    return isinstance(value, Sym)


def _integers(v) -> bool:
    """Whether ``v`` is a non-empty list or tuple of integers known while building."""
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(
        isinstance(e, (int, np.integer)) and not isinstance(e, bool) for e in v)


def _table_shape(table, name, loc) -> tuple:
    """The shape of a nested tuple or list of numbers read as an array, or the refusal."""
    if not isinstance(table, (tuple, list)):
        if symbolic.ndim_of(table) == 0 and isinstance(table, (Sym, int, float)) \
                and not isinstance(table, bool):
            return ()
        raise UnsupportedError(
            f"`{name}` indexed with a run-time value holds a {type(table).__name__}: jitgrad "
            "reads a list of lists indexed at run time as an array, so its entries must be "
            "numbers", loc)
    shapes = {_table_shape(item, name, loc) for item in table}
    if len(shapes) != 1:
        raise UnsupportedError(
            f"`{name}` indexed with a run-time value is read as an array, so its rows must "
            "all have one length (this one is ragged or empty): pad the rows into a "
            "rectangular table, or index with a value known while building", loc)
    return (len(table), *shapes.pop())


def _holds_sym_nested(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_holds_sym_nested(v) for v in value)
    return isinstance(value, Sym)


def _indexed_or_measured(name_node, parents) -> bool:
    """Whether this read of a name is ``name[...]`` or ``len(name)``."""
    parent = parents.get(id(name_node))
    if isinstance(parent, ast.Subscript) and parent.value is name_node:
        return True
    return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
            and parent.func.id == "len" and parent.args == [name_node])
