"""Building writes into arrays: ``x[i] = v``, ``x[mask, 0] = v``, ``K[np.ix_(r, c)] += ke``,
``np.add.at(a, idx, v)``, writes through views and strided views, into an array attribute
(``self.b[i] = v``) and into a complex array (each part), and the versions they make.

Part of `build.Builder` (a mixin, through `build_stmts.Statements`). Guarantees: every write
into an array makes a new version that every name for its buffer then means (the memory model:
`docs/how-it-works.md`); a write through a view or a strided view is written into the array it
views; a write through a boolean mask or an index array is a scatter at those positions.
"""

from __future__ import annotations

import ast

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError, refused
from jitgrad.core.ir import (
    Eqn,
    Var,
    dims_of,
)
from jitgrad.frontend.build_index import expand_ellipsis
from jitgrad.frontend.build_values import is_user_object
from jitgrad.lang import complex_pairs, symbolic
from jitgrad.lang.size_tokens import result_dims
from jitgrad.lang.symbolic import Sym
from jitgrad.prims import primitives


class Writes:
    """`build_stmts.Statements`'s writes into arrays (see the module)."""

    def setitem(self, target, array, index, value) -> None:
        self.check_try_index(array, index, target)
        if isinstance(array, Sym) and array.atom in self.gb.strided_of:
            self.write_strided(target, array, index, value)  # `view(A)[:] = 0.0`
        elif isinstance(target.value, ast.Name):
            self.write(target.value.id, target, array, index, value)
        elif (isinstance(array, Sym) and isinstance(array.atom, Var)
              and array.atom in self.gb.view_of):  # `x[1:][0] = v`, `A.T[0] = v`
            self.write(ast.unparse(target.value), target, array, index, value)
        elif isinstance(target.value, ast.Attribute):  # self.b[i] = v
            self.write_attribute_item(target, array, index, value)
        elif isinstance(target.value, ast.Subscript) and isinstance(
                self.expr(target.value.value), dict):  # S["S1"][j] = v
            self.write_entry_item(target, array, index, value)
        else:
            raise UnsupportedError("item assignment must name the array (`y[i] = ...`) or a "
                                   "view of it (`y[1:][i] = ...`)", self.loc(target))

    def write_einsum_view(self, target, value) -> bool:
        """``np.einsum("ijj->ij", F)[...] = v`` (scikit-rf's ``s2z``): NumPy's einsum of one
        named array that repeats one label and keeps every label once, in order, is a view of
        that array's diagonal; the whole view written is the loop ``for k in range(n): F[:, k,
        k] = w[:, k]`` over the diagonal, ``w = v + np.zeros(shape)``: the value broadcast to
        the view's shape (real or complex).
        Returns False for any other target (refused by the caller)."""
        call = target.value
        if not (isinstance(call, ast.Call) and len(call.args) == 2 and not call.keywords
                and isinstance(call.args[0], ast.Constant) and isinstance(
                    call.args[0].value, str) and isinstance(call.args[1], ast.Name)
                and self.expr(call.func) is np.einsum):
            return False
        spec = call.args[0].value.replace(" ", "")
        ins, _, out = spec.partition("->")
        labels = "".join(dict.fromkeys(ins))
        twice = [c for c in labels if ins.count(c) == 2]
        whole = (isinstance(target.slice, ast.Constant) and target.slice.value is Ellipsis) or (
            isinstance(target.slice, ast.Slice) and target.slice.lower is None and
            target.slice.upper is None and target.slice.step is None)
        if not (whole and "." not in spec and out == labels and len(twice) == 1 and
                len(ins) == len(labels) + 1 and ins.isalpha()):
            return False
        tag = self.gb.new_tag()
        k, w, v, zeros = (f"%{n}@{tag}" for n in ("k", "w", "v", "zeros"))
        self.env[v], self.env[zeros] = value, np.zeros

        def name(n, store=False):
            return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())

        def at(spec_labels, store, base):
            elts = [name(k) if c == twice[0] else ast.Slice() for c in spec_labels]
            return ast.Subscript(value=name(base), slice=ast.Tuple(elts=elts, ctx=ast.Load()),
                                 ctx=ast.Store() if store else ast.Load())

        array = call.args[1].id

        def size(j):
            return ast.Subscript(value=ast.Attribute(value=name(array), attr="shape",
                                                     ctx=ast.Load()),
                                 slice=ast.Constant(j), ctx=ast.Load())

        shape = ast.Tuple(elts=[size(ins.index(c)) for c in out], ctx=ast.Load())
        n = size(ins.index(twice[0]))
        stmts = [ast.Assign(targets=[name(w, True)], value=ast.BinOp(  # (v broadcast)
                     left=name(v), op=ast.Add(), right=ast.Call(func=name(zeros), args=[shape],
                                                                keywords=[]))),
                 ast.For(target=name(k, True), iter=ast.Call(func=name("range"), args=[n],
                                                             keywords=[]),
                         body=[ast.Assign(targets=[at(ins, True, array)],
                                          value=at(out, False, w))], orelse=[])]
        for s in stmts:
            self.build_stmt(ast.fix_missing_locations(ast.copy_location(s, target)))
        return True

    def write_attribute_item(self, target, array, index, value) -> None:
        """``obj.attr[index] = value``: written into the array the attribute holds, which
        the attribute then holds (`set_attribute`: an object made inside the function); an
        array NumPy made while building becomes one of the graph first
        (`own_array_attribute`). Every name for the array sees the write, as for ``y[i]``."""
        holder = target.value
        obj = self.expr(holder.value)
        if is_user_object(obj) and isinstance(vars(obj).get(holder.attr), np.ndarray):
            array = self.own_array_attribute(obj, holder.attr, holder)
        self.set_attribute(holder, self.written_in_a_slot(holder, target, array, index, value))

    def write_entry_item(self, target, array, index, value) -> None:
        """``d[key][index] = value`` of a dict ``d``: written into the array the entry holds,
        which the entry then holds (stored as ``d[key] = ...`` is, `build_containers`); every
        name for the array sees the write, as for ``y[i]``."""
        holder = target.value
        self.assign(holder, self.written_in_a_slot(holder, target, array, index, value))

    def written_in_a_slot(self, holder, target, array, index, value):
        """``array`` with ``target``'s write made, through a name of its own standing for the
        holder (``obj.attr``, ``d[key]``) while it is written: the new version of it."""
        slot = "".join(c if c.isalnum() else "_" for c in ast.unparse(holder))
        self.env[slot] = array
        try:
            self.write(slot, target, array, index, value)
            return self.env[slot]
        finally:
            del self.env[slot]

    def write(self, name, node, array, index, value) -> None:
        """``name[index] = value``, in place: a new version of the same storage (through a
        view: of its array's storage, `write_through`)."""
        if isinstance(array, complex_pairs.Complex):
            self.write_complex(name, node, array, index, value)
            return
        if index[0] in (("a",), ("m",), ("p",)):
            self.write_advanced(name, node, array, index, value)
            return
        if index[0] == ("o",):
            self.write_block(name, node, array, index, value)
            return
        if index[0] and index[0][0] == "q":
            self.write_masked_leading(name, node, array, index, value)
            return
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("item assignment to something that is not an array",
                                   self.loc(node))
        spec, idx = expand_ellipsis(index, array)
        if isinstance(value, Sym) and value.type.kind == "f" and array.type.kind != "f":
            raise UnsupportedError("writing floats into an integer array", self.loc(node))
        if isinstance(array.atom, Var) and array.atom in self.gb.view_of:
            self.write_through(name, node, array.atom, spec, idx, value)
            return  # the view's names stay: a read takes the view again (`follow`)
        self.env[name] = self.write_version(name, node, array.atom, spec, idx, value)

    def write_complex(self, name, node, array, index, value) -> None:
        """``z[index] = w`` into a complex array (`complex_pairs.Complex`): the same write
        into each part, ``z.real[index] = w.real`` and ``z.imag[index] = w.imag``. A part
        known while building (a constant, or the zero imaginary part of a real array) is
        first an array of the graph, as ``np.array`` makes it."""
        w = complex_pairs.lift(value)
        parts = []
        for k, (part, other, v) in enumerate(((array.re, array.im, w.re),
                                              (array.im, array.re, w.im))):
            part = complex_pairs.full(part, other)
            if not isinstance(part, Sym) or part.ndim == 0:
                raise UnsupportedError("item assignment to something that is not an array",
                                       self.loc(node))
            if self.part_shared(part, array):  # (a copy: this complex array's own part)
                part = symbolic.NUMPY[np.copy](part)
            slot = "".join(c if c.isalnum() else "_" for c in name) + (  # (a name the
                "__real", "__imag")[k]  # loop of a scatter can write into)
            self.env[slot] = part
            try:
                self.write(slot, node, part, index, v)
                parts.append(self.env[slot])
            finally:
                del self.env[slot]
        if any(v is array for o, _ in self.made_objects.values()
               for v in (vars(o).values() if hasattr(o, "__dict__") else ())):
            raise UnsupportedError(f"writing into the complex array `{name}`, which an "
                                   "object's attribute holds too (NumPy changes it for both): "
                                   "write `z = z.copy()` first, or into the attribute itself",
                                   self.loc(node))
        written = complex_pairs.Complex(*parts)
        for alias, v in list(self.env.items()):  # every name for it sees the write
            if v is array:
                self.env[alias] = written
        self.env[name] = written

    def part_shared(self, part, array) -> bool:
        """Whether the part of the complex ``array`` may be memory something else holds:
        complex arithmetic keeps a real array as a part (``x + 0j`` has the part ``x``), which
        NumPy's new complex array does not share, so the write goes into a copy."""
        gb = self.gb
        if not isinstance(part.atom, Var) or part.atom.root in gb.constant_arrays or \
                part.atom in gb.views:
            return True
        cls = gb._find(part.atom)
        if any(p.type.ndim and gb._find(p) is cls for p in gb.param_vars):
            return True
        for v in self.env.values():
            if v is array:
                continue
            held = (v.re, v.im) if isinstance(v, complex_pairs.Complex) else (v,)
            if any(isinstance(q, Sym) and isinstance(q.atom, Var) and gb._find(q.atom) is cls
                   for q in held):
                return True
        return False

    def write_version(self, name, node, old, spec, idx, value) -> Sym:
        """The new version of ``old`` (an array, not a view) with ``value`` written at the
        index; every name for ``old`` then means it."""
        if old.root in self.gb.constant_arrays:
            raise UnsupportedError(f"writing into `{name}`, a global array (or one a closure "
                                   "captured), which jitgrad reads as a constant, as Numba does; "
                                   ".copy() it first", self.loc(node))
        self.gb.check_writable(old, name)
        if old in self.gb.views:  # a view not followed to its array (a reshape)
            old = self.detach_view(name, node, old)
        params = {"index_spec": spec}
        if self.write_fits(old, spec, idx, value):
            params["fits"] = True
        out = self.gb.apply(primitives.PRIMITIVES["setitem"], [self.gb.sym(old), value] + idx,
                            params)
        self.gb.note_write(out.atom)  # every older value of this memory is now out of date
        out.atom.name = old.name  # same storage, same name in the generated code
        out.atom.storage = old.root
        self.gb.namer.used.add(old.name)
        self.gb.newer(old, out.atom)
        for alias, v in list(self.env.items()):  # every name for this array sees the write
            if isinstance(v, Sym) and v.atom is old:
                self.env[alias] = out
        return out

    def write_fits(self, old, spec, idx, value) -> bool:
        """Whether the array ``value`` written at ``old[idx]`` has the slot's sizes: assumed
        where the sizes are arguments' (`SizeAssumptions.assume_write_fits`, checked first
        thing), and otherwise checked here, before the write (``same_size`` of the two
        lengths: a call that breaks it gets the general code, as for every assumption). Not
        inside a ``prange`` loop (Numba cannot raise from its threads) nor in the general
        build, nor for a value of lower rank or one that visibly broadcasts: the write's
        adjoint then sums the slot's adjoint back to the value's shape."""
        gb = self.gb
        if not (gb.assume_sizes and isinstance(value, Sym) and value.ndim):
            return False
        getitem = primitives.PRIMITIVES["getitem"]
        atoms = [old] + [gb.atom(i, check=False) for i in idx]
        slot_type = getitem.type_rule([a.type for a in atoms], {"index_spec": spec})
        if slot_type.ndim != value.ndim:
            return False
        slot = result_dims(getitem, atoms, {"index_spec": spec}, slot_type)
        if slot is not None:
            unknown = gb.assume_write_fits(slot, dims_of(value.atom))
        elif 1 in dims_of(value.atom):
            unknown = None  # (a visible broadcast)
        else:
            unknown = list(range(value.ndim))
        if unknown is None:
            return False
        if unknown and any(getattr(s, "jitgrad_prange", False) for s in self.loops_building):
            return False
        if unknown:  # (the slot of a whole-array write is the array)
            view = gb.sym(old) if all(i == ":" for i in spec) else gb.apply(
                getitem, [gb.sym(old)] + idx, {"index_spec": spec})
            for k in unknown:
                a, b = (gb.atom(symbolic.record("shape_dim", x, axis=k), check=False)
                        for x in (view, value))
                gb.block.stmts.append(Eqn("same_size", [], [a, b], {}, gb.loc))
        return True

    def write_advanced(self, name, node, array, index, value) -> None:
        """``x[idx] = v``, ``x[mask] = v``, ``a[rows, cols] = v`` (and ``+=``, which reads the
        entries first, as NumPy does): a loop that writes each position named in turn, as
        NumPy assigns them (a repeated index keeps the last value written). The loop's writes
        are ordinary in-place writes, so their adjoints are those of ``x[i] = v``."""
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("item assignment to something that is not an array",
                                   self.loc(node))
        if index[0] == ("m",) and index[1][0].ndim == array.ndim and array.ndim > 2:
            if symbolic.ndim_of(value) == 0:  # `c[~mask] = 0.0` (FLORIS' wake fields)
                self.write_number_through_mask(name, node, array, index[1][0], value)
                return
            raise refused("writing other than a number through a boolean mask of rank 3 or "
                          "more (of the array's rank)", "mask write", self.loc(node))
        positions, rows = self.advanced_positions(array, index, node)
        self.scatter(name, node, array, positions, rows, value)

    def write_number_through_mask(self, name, node, array, mask, value) -> None:
        """``x[mask] = v`` with ``mask`` of ``x``'s shape and ``v`` a number: every entry
        written in place, ``x[...] = np.where(mask, v, x)`` (the entries where the mask is
        True become ``v``, as NumPy assigns them); a mask of other sizes raises IndexError,
        as NumPy's does."""
        checks = "".join(f"if JGM.shape[{k}] != JGX.shape[{k}]:\n    raise IndexError("
                         f"'boolean index did not match the indexed array along axis {k}')\n"
                         for k in range(array.ndim))
        self.build_written(checks + f"{name}[...] = JGW(JGM, JGV, JGX)\n", node,
                           {"JGM": "mask", "JGV": "value", "JGX": "array", "JGW": "where"},
                           {"JGM": mask, "JGV": value, "JGX": array, "JGW": np.where})

    def write_block(self, name, node, array, index, value) -> None:
        """``K[np.ix_(rows, cols)] = v`` (and ``+=``, which reads the block first): a loop
        over the rows and columns named, each entry an ordinary in-place write (a repeated
        position keeps the last value written, as NumPy assigns); ``v`` a matrix of the
        block's shape, a row for every row, or a number."""
        if not isinstance(array, Sym) or array.ndim != 2:
            raise UnsupportedError("np.ix_ of two vectors indexes a matrix", self.loc(node))
        v_ndim = symbolic.ndim_of(value)
        if v_ndim > 2:
            raise ShapeError(f"the value has rank {v_ndim}; the block indexed has rank 2",
                             self.loc(node))
        each = ("JGV", "JGV[JGJ]", "JGV[JGI, JGJ]")[v_ndim]
        sizes = ((), ("JGV.shape[0] != JGC.shape[0]",),  # (no broadcasting of a row or a
                 ("JGV.shape[0] != JGR.shape[0]", "JGV.shape[1] != JGC.shape[0]"))[v_ndim]
        checks = "".join(f"if {c}:\n    raise ValueError('shape mismatch: the values do not "
                         "match the block indexed')\n" for c in sizes)  # column: raised)
        text = (checks + "for JGI in range(JGR.shape[0]):\n"
                "    for JGJ in range(JGC.shape[0]):\n"
                f"        {name}[JGR[JGI], JGC[JGJ]] = {each}\n")
        rows, cols = index[1]
        self.build_written(text, node, {"JGR": "rows", "JGC": "cols", "JGV": "values",
                                        "JGI": "i", "JGJ": "j"},
                           {"JGR": rows, "JGC": cols, "JGV": value})

    def ufunc_at(self, call) -> bool:
        """``np.add.at(a, idx, v)`` and ``np.subtract.at`` (a statement): ``a[idx[k]] += v[k]``
        for each k, in a loop of in-place writes into the array the name ``a`` holds (a
        repeated index adds up, as np.add.at does); ``idx`` an integer vector, or a tuple of
        them, one per leading axis; ``v`` one entry per index, or one for all. False when the
        call is not one of these (it is built, and refused, as an expression)."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "at"
                and isinstance(func.value, ast.Attribute)
                and func.value.attr in ("add", "subtract") and len(call.args) == 3
                and not call.keywords and isinstance(call.args[0], ast.Name)):
            return False
        ufunc = self.expr(func.value)
        if ufunc not in (np.add, np.subtract):
            return False
        name = call.args[0].id
        array = self.lookup(name, call.args[0])
        index = self.expr(call.args[1])
        value = self.expr(call.args[2])
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError(f"np.{ufunc.__name__}.at into something that is not an "
                                   "array", self.loc(call))
        columns = list(index) if isinstance(index, tuple) else [index]
        columns = [symbolic.NUMPY[np.asarray](c) if isinstance(c, list) else c for c in columns]
        columns = [c if isinstance(c, Sym) else self.constant_array(
            "index", np.asarray(c, dtype=np.int64), call) for c in columns]
        if len(columns) > array.ndim or any(c.ndim != 1 or c.type.kind != "i"
                                            for c in columns):
            raise refused(f"np.{ufunc.__name__}.at with an index other than an integer vector "
                          "or a tuple of them", "ufunc.at", self.loc(call))
        per_item = array.ndim - len(columns)
        v_ndim = symbolic.ndim_of(value)
        if v_ndim > per_item + 1:
            raise ShapeError(f"the value has rank {v_ndim}; the entries indexed have rank "
                             f"{per_item + 1}", self.loc(call))
        each = "JGV[JGK]" if v_ndim == per_item + 1 else "JGV"
        at = ", ".join(f"JGP{j}[JGK]" for j in range(len(columns)))
        op = "+=" if ufunc is np.add else "-="
        text = "".join(f"if JGP{j}.shape[0] != JGP0.shape[0]:\n    raise ValueError("
                       "'shape mismatch: the index arrays differ in length')\n"
                       for j in range(1, len(columns)))
        if v_ndim == per_item + 1:
            text += ("if JGV.shape[0] != JGP0.shape[0]:\n    raise ValueError('shape "
                     "mismatch: the values do not match the entries indexed')\n")
        text += f"for JGK in range(JGP0.shape[0]):\n    {name}[{at}] {op} {each}\n"
        self.build_written(text, call, {"JGV": "values", "JGK": "k"} | {
            f"JGP{j}": f"index{j}" for j in range(len(columns))}, {"JGV": value} | {
            f"JGP{j}": c for j, c in enumerate(columns)})
        return True

    def write_strided(self, node, view, index, value) -> None:
        """A write through ``view = as_strided(x, shape, strides)`` (`numpy_sorting.as_strided`):
        the view read again from x's current version, written at the index, then its entries
        written back into x at their positions (a loop, as `scatter`), which are checked at run
        time to be distinct (a write through overlapping windows is refused there). Every name
        for x, and for the view, then means the new values."""
        gb = self.gb
        base, sizes, ndim = gb.strided_of[view.atom]
        base = gb.current(base)
        if base.type.ndim > 2:
            raise UnsupportedError("writing through np.lib.stride_tricks.as_strided of an "
                                   "array of rank 3 or more; write into the array itself",
                                   self.loc(node))
        x = gb.sym(base)
        positions = symbolic.record("strided_positions", x, *sizes, ndim=ndim, distinct=True)
        shape = tuple(sizes[:ndim])
        fresh = symbolic.NUMPY[np.reshape](symbolic.record("take", symbolic.NUMPY[np.ravel](x),
                                                           positions), shape)
        if index[0] and (index[0][0] in ("x", "q") or index[0] in (("a",), ("m",), ("p",))):
            raise UnsupportedError("writing through np.lib.stride_tricks.as_strided at an index "
                                   "array or a mask; write at slices and integers",
                                   self.loc(node))
        spec, idx = expand_ellipsis(index, fresh)
        copy = symbolic.record("copy", fresh)
        updated = self.write_version("as_strided", node, copy.atom, spec, idx, value)
        flat = symbolic.NUMPY[np.ravel](updated)
        self.scatter_into(node, x, positions, flat)
        new_base = gb.current(base)
        again = symbolic.NUMPY[np.reshape](symbolic.record(
            "take", symbolic.NUMPY[np.ravel](gb.sym(new_base)), positions), shape)
        gb.share_memory(again.atom, new_base)
        gb.restamp(again.atom)
        gb.strided_of[again.atom] = (new_base, sizes, ndim)
        for alias, v in list(self.env.items()):  # the view's names see the write
            if isinstance(v, Sym) and v.atom is view.atom:
                self.env[alias] = again

    def scatter_into(self, node, x, positions, flat) -> None:
        """``x.flat[positions[k]] = flat[k]`` for each k, in a loop of in-place writes into
        ``x`` (a vector or a matrix), which every name for x then sees."""
        at = "JGP[JGK]" if x.ndim == 1 else "JGP[JGK] // JGM, JGP[JGK] % JGM"
        values = {"JGP": positions, "JGV": flat, "JGX": x}
        if x.ndim == 2:
            values["JGM"] = x.shape[1]
        self.build_written(f"for JGK in range(JGP.shape[0]):\n    JGX[{at}] = JGV[JGK]\n",
                           node, {"JGP": "positions", "JGV": "values", "JGM": "cols",
                                  "JGK": "k", "JGX": "array"}, values)

    def write_masked_leading(self, name, node, array, index, value) -> None:
        """``x[mask, 0] = v``, ``x[mask2d, :, 1] = v``: a mask over the first one or two axes
        beside other items: the loop of `scatter`, each position's write taking the other
        items too (``x[p, 0] = v[k]``)."""
        (_, spec), (mask, *atoms) = index
        if not isinstance(array, Sym) or array.ndim < len(spec):
            raise ShapeError("too many indices for the array", self.loc(node))
        spec, atoms = expand_ellipsis((spec, atoms), array)
        if mask.ndim > 2:
            raise refused(f"writing through a boolean mask of rank {mask.ndim} beside other "
                          "indices", "mask write", self.loc(node))
        rest, atoms = [], list(atoms)
        for item in spec[mask.ndim:]:  # each item after the mask's axes, as a value
            if item == "i":
                rest.append(atoms.pop(0))
            elif item == ":":
                rest.append(slice(None))
            else:  # ("s", has_start, has_stop, has_step)
                rest.append(slice(*(atoms.pop(0) if flag else None for flag in item[1:])))
        positions = self.leading_mask_positions(array, mask, node)
        self.scatter(name, node, array, positions, mask.ndim == 1, value, rest)

    def scatter(self, name, node, array, positions, rows: bool, value, rest=()) -> None:
        """Write ``value`` into ``name`` (``array``) at ``positions``: its rows (``rows``), or
        flat positions of its first two axes, one after the other in a loop (a repeated
        position keeps the last value, as NumPy assigns), each with the index items ``rest``
        after them (integers, slices); a value with one entry per position is checked to
        have as many."""
        flat_of_vector = not rows and array.ndim == 1
        per_item = array.ndim - (1 if rows or flat_of_vector else 2) - sum(
            not isinstance(r, slice) for r in rest)
        v_ndim = symbolic.ndim_of(value)
        while v_ndim > per_item + 1 and isinstance(value.atom, Var) and \
                dims_of(value.atom)[0] == 1:  # a leading axis of length 1, as NumPy drops it
            value = symbolic.NUMPY[np.squeeze](value, 0)  # (x[idx] = v of shape (1, n))
            v_ndim -= 1
        if v_ndim > per_item + 1:
            raise ShapeError(f"the value has rank {v_ndim}; the entries indexed have rank "
                             f"{per_item + 1}", self.loc(node))
        at = "JGP[JGK]" if rows or flat_of_vector else "JGP[JGK] // JGM, JGP[JGK] % JGM"
        at += "".join(f", JGR{j}" for j in range(len(rest)))
        each = "JGV[JGK]" if v_ndim == per_item + 1 else "JGV"
        text = (f"for JGK in range(JGP.shape[0]):\n    {name}[{at}] = {each}\n")
        if v_ndim == per_item + 1:
            text = ("if JGV.shape[0] != JGP.shape[0]:\n    raise ValueError('shape mismatch: "
                    "the values do not match the entries indexed')\n") + text
        values = {"JGP": positions, "JGV": value} | {f"JGR{j}": r for j, r in enumerate(rest)}
        if not (rows or flat_of_vector):
            values["JGM"] = array.shape[1]
        self.build_written(text, node, {"JGP": "positions", "JGV": "values", "JGM": "cols",
                                        "JGK": "k"} | {f"JGR{j}": f"item{j}"
                                                       for j in range(len(rest))}, values)

    def build_written(self, text: str, node, labels: dict, values: dict,
                      results: tuple = (), parts: dict | None = None) -> dict:
        """Build ``text``, statements jitgrad writes for the user's ``node`` (a loop of
        writes), in its place and with its location. Its placeholder names (``JGK``...: the
        keys of ``labels``) become names the user's code cannot use (``%k@line:col``), bound
        to ``values`` for this build only. A statement ``NAME`` of ``text`` that is a key of
        ``parts`` stands for those statements of the user's (with their own locations).
        Returns the values the placeholders ``results`` hold at the end."""
        tag = f"@{node.lineno}:{node.col_offset}"
        hidden = {k: f"%{label}{tag}" for k, label in labels.items()}
        stmts = ast.parse(text).body
        for stmt in stmts:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and sub.id in hidden:
                    sub.id = hidden[sub.id]
                if hasattr(sub, "lineno"):
                    ast.copy_location(sub, node)
        if parts:
            stmts = _spliced(stmts, parts)
        for k, v in values.items():
            self.env[hidden[k]] = v
        try:
            self.build_stmts(stmts)
            return {k: self.lookup(hidden[k], node) for k in results}
        finally:
            for h in hidden.values():
                self.env.pop(h, None)

    def see_writes(self) -> None:
        """After a call: the names for arrays the callee wrote into hold the new versions."""
        for name, v in list(self.env.items()):
            if isinstance(v, Sym) and v.ndim and isinstance(v.atom, Var):
                now = self.gb.current(v.atom)
                if now is not v.atom:
                    self.env[name] = self.gb.sym(now)

    def write_along_axis(self, target, value_of, op=None) -> bool:
        """``x[i, idx] = v`` (or ``op=``): one 1-D integer array ``idx`` beside integers and
        slices, written as NumPy writes it, through a view: ``t = np.moveaxis(x[i, :], p, 0)``
        (the array's axis first), then ``t[idx] = v'`` with ``v`` broadcast to the shape
        NumPy gives ``x[i, idx]`` (its index array's axis where NumPy puts it: in place when
        the integers and ``idx`` are adjacent, else first) and that axis moved first. So the
        last write of a repeated index wins, and ``+=`` adds once per index, as NumPy's; the
        adjoint is the 1-D write's. ``value_of()`` gives ``v``. Returns whether it wrote
        (False: another index; its items are names and constants, read again there)."""
        items = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        if len(items) < 2 or any(isinstance(i, ast.Starred) or (
                isinstance(i, ast.Constant) and i.value in (None, Ellipsis)) for i in items):
            return False
        if not all(_plain(i) if not isinstance(i, ast.Slice) else all(
                p is None or _plain(p) for p in (i.lower, i.upper, i.step)) for i in items) \
                or not any(isinstance(i, (ast.Name, ast.Attribute)) for i in items):
            return False  # (read twice where another index takes it: names only)
        tag = f"@{self.gb.new_tag()}"

        def hidden(kind, v):
            name = f"%{kind}{tag}_{len(self.env)}"
            self.env[name] = v
            return ast.Name(id=name, ctx=ast.Load())

        values = [None if isinstance(i, ast.Slice) else self.expr(i) for i in items]
        arrays = [k for k, v in enumerate(values) if isinstance(v, Sym) and v.ndim]
        if len(arrays) != 1:
            return False
        k = arrays[0]
        idx = values[k]
        rows_only = k == 0 and all(isinstance(i, ast.Slice) and i.lower is None and i.upper
                                   is None and i.step is None for i in items[1:])
        if idx.ndim != 1 or idx.type.kind != "i" or rows_only or not all(
                v is None or isinstance(v, int) or isinstance(v, Sym) and v.type.kind == "i"
                for v in values):
            return False
        basic = []
        for item, v in zip(items, values):
            if item is items[k]:
                basic.append(ast.Slice())
            elif v is None:
                basic.append(ast.Slice(*(None if p is None else hidden("bound", self.expr(p))
                                         for p in (item.lower, item.upper, item.step))))
            else:
                basic.append(hidden("at", v))
        slices = [isinstance(i, ast.Slice) for i in items]
        p = sum(slices[:k])  # idx's axis in the view (the integers' axes dropped)
        advanced = [j for j, s in enumerate(slices) if not s]
        adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
        q = sum(slices[:advanced[0]]) if adjacent else 0  # its axis in NumPy's x[i, idx]
        loc = self.loc(target)
        view = f"jg_view_{self.gb.new_tag()}"  # (a name the scatter's written code reads)
        self.build_stmt(ast.fix_missing_locations(ast.copy_location(ast.Assign(
            targets=[ast.Name(id=view, ctx=ast.Store())], value=ast.Subscript(
                value=target.value, slice=ast.Tuple(elts=basic, ctx=ast.Load()),
                ctx=ast.Load())), target)))
        self.gb.loc = loc
        if p:  # (the name dropped again after the write)
            self.env[view] = symbolic.NUMPY[np.moveaxis](self.env[view], p, 0)
        moved = self.env[view]
        shape = (*moved.shape[1:q + 1], idx.shape[0], *moved.shape[q + 1:])
        value = symbolic.NUMPY[np.broadcast_to](value_of(), shape)
        if q:
            value = symbolic.NUMPY[np.moveaxis](value, q, 0)
        slot = ast.Subscript(value=ast.Name(id=view, ctx=ast.Load()),
                             slice=hidden("index", idx), ctx=ast.Store())
        stmt = ast.Assign(targets=[slot], value=hidden("value", value)) if op is None else \
            ast.AugAssign(target=slot, op=op, value=hidden("value", value))
        self.build_stmt(ast.fix_missing_locations(ast.copy_location(stmt, target)))
        self.env.pop(view, None)
        return True


def _spliced(block: list, parts: dict) -> list:
    """``block`` with each statement ``NAME`` (a key of ``parts``) replaced by its statements,
    in nested bodies too."""
    out = []
    for s in block:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Name) and s.value.id in parts:
            out += parts[s.value.id]
            continue
        for field in ("body", "orelse"):
            if getattr(s, field, None):
                setattr(s, field, _spliced(getattr(s, field), parts))
        out.append(s)
    return out


def _plain(node) -> bool:
    """A name, an attribute of one, or a constant (a negated one too): read again at no cost."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, (ast.Name, ast.Constant))
