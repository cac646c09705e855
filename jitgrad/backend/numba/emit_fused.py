"""Loop nests as source: a run of array operations over one shape becomes one loop nest.

`NestWriter` is the part of the module writer (`emit._Writer`, which inherits it) that finds
such runs in a block (`fusable_run`) and writes each as one nest (`fused`): no temporary
arrays, one pass over memory, results read later stored, reductions accumulated, an
adjoint updated in the nest updated in its element. It uses the writer's ``line``,
``comment_for``, ``namer``, ``uses``, ``views`` and ``kernel_ir``. What one iteration of a nest
reads of each operand is `emit_nest`'s. Guarantees: the nest computes what the run's
operations compute in order, entry by entry.
"""

from __future__ import annotations

from jitgrad.backend.numba.emit_nest import (
    REDUCE_INIT,
    nest_dims,
    nest_operands,
    nest_reads,
    summed_index,
    summed_shape,
)
from jitgrad.backend.numba.lowering import allocation, atom_source, primitive_source
from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Eqn,
    For,
    Repeat,
    Var,
    While,
    defs,
    dims_of,
    direct_uses,
    sub_blocks,
    walk,
)
from jitgrad.core.types import Type
from jitgrad.prims import primitives
from jitgrad.prims.primitives import index_source

# Statements in a row, which a nest cannot compute, that a run may step over (`hoppable`).
HOPS_AT_MOST = 8


class NestWriter:
    def fusable_run(self, stmts, k) -> tuple[list, list, list]:
        """The statements from ``stmts[k]`` that one loop nest over the first one's shape can
        compute: elementwise operations, copies, spreads and broadcasts onto that shape, and
        sums, maxima and minima of values of that shape (accumulated in the nest; nothing later
        in it reads them). With them, the loops' trip counts (`nest_sizes`), and the aliases
        among the statements taken, which the caller writes before the nest.

        An alias (``_b_a04 = _b_b4``: a copy of an array from outside the run, which is the
        array under a second name) does not end the run: it is made before the nest, when
        neither name is read or (re)bound by the run before it or bound after it, so that
        each name holds the same array throughout the nest as it would have in order.

        Adjoints accumulated in the run stay in it: ``_b_z += c`` into an array the run makes
        adds to its element (unless the run copied that element, ``_b_t = _b_z``: the copy is
        the same array, which sees the update), and ``_b_z = _b_z + c`` updates the element
        (the value is a new array, which the copy is not).  A name bound again to another
        value is taken once nothing else reads the value it held. In a nest of two or more
        loops, parts of one array may be added into more than once (a 2-D stencil's adjoint:
        ``_b_a[1:-1, :-2]``, ``_b_a[2:, 1:-1]`` and three more, one nest instead of five
        passes) when the run reads that array nowhere else: the additions commute, so each
        entry gets the same sum (in another order: rounding aside). Not in one loop, where
        jacobi_1d's three parts made its adjoint 1.13x as long as three passes."""
        first = stmts[k]
        if not isinstance(first, Eqn) or not first.outs or first.outs[0].dims is None:
            return [], [], []
        dims = nest_dims(first)
        run, made, sums, names = [], set(), set(), set()
        aliases, aliased, read = [], set(), set()
        bound: dict[str, Var] = {}  # name -> the value of the run it holds
        copied: set[Var] = set()  # values of the run copied in it (``_b_t = _b_z``)
        reads_in_run: dict[Var, int] = {}
        into: set[str] = set()  # arrays the run adds into a part of (`add_at`)
        accumulated: set[Var] = set()  # the memory the run adds into (`MayShare` classes)
        hops = 0  # statements in a row made before the nest (`hoppable`)
        for e in stmts[k:]:
            if not isinstance(e, Eqn):
                break
            reads = nest_reads(e, dims)
            if e.prim == "assign" and e.outs and isinstance(e.ins[0], Var) and (
                    e.ins[0] not in made and e.ins[0] not in sums and e.ins[0].type.ndim):
                # (a copy of an array from outside: cheaper as the alias it is)
                if (not run or e.outs[0].name in names | read or e.ins[0].name in names
                        or e.ins[0] in self.views):
                    break
                aliases.append(e)
                aliased |= {e.outs[0].name, e.ins[0].name}
                continue
            if reads is None and run and hops < HOPS_AT_MOST and self.hoppable(
                    e, made | sums, names, read, accumulated):
                # (computed before the nest, so that the run goes on after it)
                aliases.append(e)
                aliased.update(o.name for o in e.outs)
                hops += 1
                continue
            if reads is None or any(a in sums for a in e.ins):
                break
            hops = 0
            # (more parts of one array in a nest of two or more loops: in one loop, the parts
            # overlap along the only axis, and each entry's update waits for the last one's)
            if any(isinstance(a, Var) and a.name in into
                   for a in (e.ins[1:] if e.prim == "add_at" and len(dims) > 1 else e.ins)):
                break  # (an array written into a part of it is read at other positions)
            if not e.outs:  # an accumulation (`iadd`, `add_at`) into an array
                acc = e.ins[0]
                if acc in made and acc in copied:
                    break  # (the copy's element would miss the update its array sees)
                if acc not in made and (acc.name in names or acc in self.views):
                    break
                if e.prim == "add_at":  # (more parts of one array: the additions commute)
                    if acc in made or acc.name in read and acc.name not in into:
                        break
                    into.add(acc.name)
                accumulated.add(self.may_share.find(acc))
                run.append(e)
                self.count_reads(e, read, reads_in_run)
                continue
            out = e.outs[0]
            if out.name in aliased or e.prim == "assign" and e.ins[0] not in made:
                break
            if out.name in names:  # one name per value, unless the earlier one is done with
                earlier = bound[out.name]  # (or is this one: an adjoint updated, same element)
                if earlier not in made or earlier is not out and self.count_reads(
                        e, set(), dict(reads_in_run)).get(earlier, 0) < self.uses.get(earlier, 0):
                    break
            run.append(e)
            self.count_reads(e, read, reads_in_run)
            names.add(out.name)
            bound[out.name] = out
            if e.prim == "assign":
                copied.add(e.ins[0])
            (sums if e.prim in REDUCE_INIT else made).add(out)
        # Written in the nest, an array is read at the nest's position only: element i of the
        # accumulation lands before the element i + 1 reads. A view read in the same nest may
        # be the array at other positions, so then the run stops before the first write.
        writes = [j for j, e in enumerate(run) if not e.outs]
        written = {self.may_share.find(run[j].ins[0]) for j in writes}
        if writes and any(isinstance(a, Var) and a in self.views
                          and self.may_share.find(a) in written for e in run for a in e.ins):
            run = run[:writes[0]]
        sizes = self.nest_sizes(run) if run else None
        if sizes is None:
            return [], [], []
        # the statements taken are those up to the run's last (aliases after it are not)
        end = next(j for j in range(k + len(run) + len(aliases) - 1, k - 1, -1)
                   if stmts[j] is run[-1])
        aliases = [a for a in aliases if any(a is s for s in stmts[k:end])]
        return run, sizes, aliases

    def hoppable(self, e, run_values: set, bound: set, read: set, accumulated: set) -> bool:
        """Whether ``e``, which the nest cannot compute, may be computed before the nest, so
        that the run goes on after it (bicg's adjoint: the two products between the rank-1
        terms of ``dA``): a primitive with no effect and no write, reading no value of the run
        and no name the run binds, no memory the run adds into, and binding no name the run
        binds or reads. Those statements then run before the run's earlier ones, which
        neither they nor the run can tell."""
        flags = ops.flags(e.prim)
        if (not isinstance(e, Eqn) or not e.outs or e.prim not in primitives.PRIMITIVES
                or flags.effects or flags.writes_into_first or flags.adds_into
                or flags.accumulates or flags.raises or flags.checks_sizes):
            return False
        for a in e.ins:
            if isinstance(a, Var) and (a in run_values or a.name in bound or (
                    a.type.ndim and self.may_share.find(a) in accumulated)):
                return False
        return not any(o.name in bound or o.name in read for o in e.outs)

    @staticmethod
    def count_reads(e: Eqn, names: set, counts: dict) -> dict:
        """Add the names ``e`` reads to ``names`` and count its reads of each value into
        ``counts``; returns ``counts``."""
        for a in e.ins:
            if isinstance(a, Var):
                names.add(a.name)
                counts[a] = counts.get(a, 0) + 1
        return counts

    def nest_sizes(self, group) -> list[str] | None:
        """Source for each loop's trip count, read from the shape of a value the nest reads
        (or a literal size); None when some loop has no such source."""
        dims = nest_dims(group[0])
        inside = {v for e in group for v in e.outs}
        sizes = []
        for k, token in enumerate(dims):
            if isinstance(token, int):
                sizes.append(str(token))
                continue
            source = next((f"{a.name}.shape[{j}]" for e in group
                           for a, axes in zip(e.ins, nest_reads(e, dims))
                           if isinstance(a, Var) and a not in inside
                           and axes not in ("value", "into")
                           for j, ax in enumerate(axes) if ax == k), None)
            if source is None:
                return None
            sizes.append(source)
        return sizes

    def fused(self, group: list, sizes: list[str], indent: int, later: list | None):
        """One loop nest for a run of operations over the same shape: no temporary arrays,
        one pass over memory. Results read after the run are stored, sums accumulated. A
        result named like a value the nest reads (an adjoint updated, ``_b_x = _b_x + c``) is
        filled under a fresh name and takes its own after the nest.

        Takes the run (`fusable_run`), its loops' trip counts (`nest_sizes`), the indent, and
        the statements after the run at the top level of the kernel (None in a loop or branch,
        where any read counts)."""
        dims = nest_dims(group[0])
        from_nest, internal_uses, read_names = nest_operands(group)
        stored = self.stored_results(group, internal_uses, later)
        filled, element = self.nest_names(group, stored, read_names)
        self.comment_for(indent, group[0].loc)
        self.current = group[0].loc
        self.nest_allocations(group, sizes, filled, indent, self.reused_operands(group, filled))
        parts = self.parts_written(group, indent)
        idx = [f"_i{k}" for k in range(len(dims))]
        for k, size in enumerate(sizes):
            self.line(indent + k, f"for {idx[k]} in range({size}):")
        inner = indent + len(sizes)
        # an element updated in the nest (``_b_x += c``, ``_b_x = _b_x + c``) is stored once,
        # after its last update
        last_update = {}
        for j, (e, here) in enumerate(zip(group, from_nest)):
            if e.outs or here[0]:
                last_update[e.outs[0] if e.outs else e.ins[0]] = j
        for j, (e, here) in enumerate(zip(group, from_nest)):
            self.comment_for(inner, e.loc)
            self.current = e.loc
            args = nest_args(e, here, dims, idx, element)
            if e.prim == "add_at":  # into the part's entry here
                self.line(inner, f"{parts[e]}[{', '.join(idx)}] += {args[1]}")
            elif not e.outs:  # `iadd`: into an array's entry here, or an element of the nest
                self.line(inner, f"{args[0]} += {args[1]}")
            elif e.prim in REDUCE_INIT:
                self.nest_accumulate(e, args[0], filled, idx, inner)
                continue
            else:
                self.nest_element(e, args, element, inner)
            v = e.outs[0] if e.outs else e.ins[0]
            if v in filled and last_update.get(v) == j:
                self.line(inner, f"{filled[v]}[{', '.join(idx)}] = {element[v]}")
        self.current = group[-1].loc
        for v in dict.fromkeys(e.outs[0] for e in group if e.outs):
            if filled.get(v, v.name) != v.name:
                self.line(indent, f"{v.name} = {filled[v]}")
        self.last_loc = None

    def parts_written(self, group: list, indent: int) -> dict:
        """Before the nest: a view of each part of an array the nest adds into (``add_at``,
        basic indexing), which the nest then writes at its own position; returns them."""
        parts = {}
        for e in group:
            if e.prim == "add_at":
                a = [atom_source(x) for x in e.ins]
                spec = e.params["index_spec"]
                a[2:] = self.unsigned(spec, e.ins[2:], a[2:])
                parts[e] = self.namer.fresh("_into")
                self.line(indent, f"{parts[e]} = {index_source(a[0], spec, a[2:])}")
        return parts

    def stored_results(self, group: list, internal_uses: dict, later: list | None) -> list:
        """The results of a nest (other than its reductions) that must be stored in arrays: at
        the top level, those a later statement or the kernel's return reads (``later``: the
        statements after the run); in a loop or branch (``later`` None), those read more often
        than the nest itself reads them."""
        group = [e for e in group if e.outs]  # (an accumulation stores into its own array)
        if later is None:
            return [e.outs[0] for e in group if e.prim not in REDUCE_INIT and self.uses.get(
                e.outs[0], 0) > internal_uses.get(e.outs[0], 0)]
        read_later = {a for s in walk(Block(later)) for a in direct_uses(s)
                      if isinstance(a, Var)}
        read_later |= {a for a in self.kernel_ir.returns if isinstance(a, Var)}
        return [e.outs[0] for e in group
                if e.prim not in REDUCE_INIT and e.outs[0] in read_later]

    def nest_names(self, group: list, stored: list, read_names: set) -> tuple[dict, dict]:
        """(filled, element): the name each stored result or reduction is filled under (a
        fresh one when the nest reads a value of its name), and the fresh name of each
        non-reduction's element inside the nest. Fresh names are drawn in that order."""
        filled = {}  # out -> the name its array is filled under
        # (an accumulation has no result to name; an updated element is named once)
        group = list({e.outs[0]: e for e in reversed(group) if e.outs}.values())[::-1]
        for e in group:
            if e.prim in REDUCE_INIT or e.outs[0] in stored:
                v = e.outs[0]
                filled[v] = self.namer.fresh(v.name) if v.name in read_names else v.name
        element = {e.outs[0]: self.namer.fresh("_e_" + e.outs[0].name.lstrip("_"))
                   for e in group if e.prim not in REDUCE_INIT}
        return filled, element

    def note_positions(self, body: Block) -> None:
        """Where each statement of the kernel is (its place in `walk`'s order), the last place
        each variable is read, the block each is made in, which blocks a loop repeats, and
        the arrays made fresh (an allocating primitive's): what `reused_operands` asks."""
        self.position, self.last_read, self.made_in = {}, {}, {}
        self.loop_blocks, self.fresh, roots = set(), set(), {}

        def visit(b: Block, in_loop: bool):
            if in_loop:
                self.loop_blocks.add(id(b))
            for s in b.stmts:
                self.position[id(s)] = len(self.position)
                for a in direct_uses(s):
                    if isinstance(a, Var):
                        self.last_read[a] = self.position[id(s)]
                for v in defs(s):
                    self.made_in[v] = id(b)
                    r = self.may_share.find(v)
                    roots[r] = roots.get(r, 0) + 1
                if isinstance(s, Eqn) and s.outs and ops.flags(s.prim).buffer:
                    self.fresh.add(s.outs[0])
                for sub in sub_blocks(s):
                    visit(sub, in_loop or isinstance(s, (For, While, Repeat)))
                if not isinstance(s, Eqn):  # (a loop's or branch's own reads, after its body)
                    for a in direct_uses(s):
                        if isinstance(a, Var):
                            self.last_read[a] = len(self.position)

        visit(body, False)
        for a in self.kernel_ir.returns + self.kernel_ir.aux:
            if isinstance(a, Var):
                self.last_read[a] = len(self.position) + 1
        self.fresh = {v for v in self.fresh if roots.get(self.may_share.find(v), 0) == 1}

    def reused_operands(self, group: list, filled: dict) -> dict:
        """The array each stored result of the nest is filled into instead of a new one: an
        operand of its type and sizes that the kernel made fresh (`note_positions`), shares
        memory with no other variable, is read in the nest only at the nest's own position
        and no later than the result's element is stored, is added into nowhere in the nest,
        and is read nowhere after it (nor again in a loop around it unless made in the same
        block). go_fast's adjoint: ``_b_a = 1 + _b_trace * _g_a``, ``_g_a`` an n x n array
        of zeros with its diagonal set, filled in place instead of a second n x n array (an
        allocation of fresh pages, which cost more than the nest itself)."""
        if self.parallel or not group or id(group[-1]) not in self.position:
            return {}
        dims = nest_dims(group[0])
        end = self.position[id(group[-1])]
        in_loop = id(getattr(self, "nest_block", None)) in self.loop_blocks
        whole = tuple(range(len(dims)))
        reads: dict = {}  # operand -> (last place in the group it is read, read only whole)
        for j, e in enumerate(group):
            for a, axes in zip(e.ins, nest_reads(e, dims)):
                if isinstance(a, Var) and a.type.ndim:
                    ok = reads.get(a, (j, True))[1]
                    reads[a] = (j, ok and axes == whole)
        for e in group:
            if not e.outs and isinstance(e.ins[0], Var):  # (added into: not reusable)
                reads[e.ins[0]] = (len(group), False)
        stored = {}  # result -> where its element is stored (after its last update)
        for j, e in enumerate(group):
            v = e.outs[0] if e.outs else e.ins[0]
            if v in filled and e.prim not in REDUCE_INIT and (e.outs or v in stored):
                stored[v] = j
        reused, taken = {}, set()
        for v, j in stored.items():
            for x, (last, ok) in reads.items():
                if (ok and last <= j and x not in taken and x not in filled and x in self.fresh
                        and x.type == v.type and dims_of(x) == dims == dims_of(v)
                        and self.last_read.get(x, 0) <= end
                        and (not in_loop or self.made_in.get(x) == id(self.nest_block))):
                    reused[v] = x
                    taken.add(x)
                    break
        return reused

    def nest_allocations(self, group: list, sizes: list[str], filled: dict, indent: int,
                         reused: dict):
        """Before the nest: an empty array for each stored result (or the operand it is
        filled into, `reused_operands`), and each reduction's accumulator at its starting
        value (after checking, for a maximum or minimum, that the reduced extent is not
        empty)."""
        shape = "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"
        allocated = set()
        for e in group:
            if not e.outs or e.outs[0] not in filled or e.outs[0] in allocated:
                continue
            v = e.outs[0]
            allocated.add(v)
            if v in reused:
                self.line(indent, f"{filled[v]} = {reused[v].name}")
                continue
            if e.prim not in REDUCE_INIT:
                self.line(indent, f"{filled[v]} = {allocation('empty', shape, v.type.kind)}")
                continue
            init = REDUCE_INIT[e.prim]
            if e.prim != "sum":  # NumPy: no maximum or minimum of nothing
                axis = e.params["axis"]
                extent = " * ".join(sizes) if axis is None else sizes[axis]
                self.line(indent, f"_rt.nonempty({extent})")
            if v.type.ndim:
                kept = summed_shape(sizes, e.params)
                how = f"_rt.zeros({kept})" if e.prim == "sum" else f"_rt.full({kept}, {init})"
                self.line(indent, f"{filled[v]} = {how}")
            else:
                self.line(indent, f"{filled[v]} = {init}")

    def nest_accumulate(self, e: Eqn, x: str, filled: dict, idx: list[str], indent: int):
        """Inside the nest: add the element ``x`` into a sum's accumulator, or keep it if it
        beats a maximum's or minimum's (NaN wins, as in NumPy; the first of tied extremes is
        kept)."""
        out = e.outs[0]
        acc = filled[out] + (summed_index(idx, e.params) if out.type.ndim else "")
        if e.prim == "sum":
            self.line(indent, f"{acc} += {x}")
            return
        beats = ">" if e.prim == "max" else "<"
        self.line(indent, f"if {x} {beats} {acc} or {x} != {x}:")
        self.line(indent + 1, f"{acc} = {x}")

    def nest_element(self, e: Eqn, args: list[str], element: dict, indent: int):
        """Inside the nest: one element of ``e``'s result from its operands' elements
        (``args``), with the primitive's scalar template."""
        out = e.outs[0]
        flags = ops.flags(e.prim)
        scalar_types = [Type(a.type.kind, 0) for a in e.ins]
        if flags.broadcasts or e.prim == "assign":  # input 0's element
            expr = args[0]
        elif flags.outer_of is not None:  # (np.outer: the product of the two entries)
            expr = primitive_source(flags.outer_of, args, {}, scalar_types)
        else:
            expr = primitive_source(e.prim, args, e.params, scalar_types)
        self.line(indent, f"{element[out]} = {expr}")

    def broadcast_nest(self, e: Eqn, a: list[str], out: str, indent: int) -> bool:
        """Write ``out = e`` as a loop nest broadcasting at run time, when ``e``'s primitive
        is flagged ``broadcast_nest`` and it is on float arrays whose sizes the fused nests
        cannot prove equal (a loop's carried value, a factorisation's result); False, writing nothing, for
        anything else (the runtime helper then computes it).

        Why not the helper (``_rt.add``): Numba's ``x + y`` of arrays is its generic
        broadcasting kernel, about 300 kB of LLVM IR for two matrices, and a compiled function
        carries every helper it calls into its own module, which LLVM optimises and compiles
        again: five such calls were 1.5 MB of gp's 2.5 MB and most of its 12 s compile, on top
        of the helpers' own first compile (issue #46). A nest here is a few lines of the
        generated function. Sizes broadcast as NumPy's (ValueError when they do not); an axis
        of size 1 is read at index 0."""
        o = e.outs[0] if len(e.outs) == 1 else None
        if (not ops.flags(e.prim).broadcast_nest or o is None or o.type.kind != "f"
                or not o.type.ndim):
            return False
        for k, x in enumerate(e.ins):
            kinds = "b" if e.prim == "where" and k == 0 else "f"
            if x.type.ndim > o.type.ndim or (x.type.kind not in kinds if x.type.ndim
                                              else x.type.kind not in kinds + "fi"):
                return False
        d, od = o.type.ndim, dims_of(o)
        idx = [self.namer.fresh(f"_i{k}") for k in range(d)]
        reads = [[] for _ in e.ins]  # per operand: the index of each of its axes
        sizes = []
        for k in range(d):
            axis = [(n, x.type.ndim - d + k) for n, x in enumerate(e.ins)
                    if x.type.ndim - d + k >= 0]
            shapes = [f"{a[n]}.shape[{j}]" for n, j in axis]
            tokens = [dims_of(e.ins[n])[j] for n, j in axis]
            if all(t == od[k] or t == 1 for t in tokens) and not _broadcast_token(od[k]):
                # sizes known while building (one token, or a literal 1): no check, no step
                same = [s for s, t in zip(shapes, tokens) if t == od[k] != 1]
                sizes.append(same[0] if same else "1")
                for (n, _), t in zip(axis, tokens):
                    reads[n].append(idx[k] if t == od[k] != 1 else "0")
                continue
            if len(shapes) == 1:
                sizes.append(shapes[0])
            else:
                size = self.namer.fresh(f"_n{k}")
                sizes.append(size)
                broadcast = shapes[0]
                for s in shapes[1:]:  # (a call: no branch in the generated function)
                    broadcast = f"_rt.broadcast_size({broadcast}, {s})"
                self.line(indent, f"{size} = {broadcast}")
            for (n, j), s in zip(axis, shapes):
                if len(shapes) == 1 or dims_of(e.ins[n])[j] == od[k] != 1:
                    reads[n].append(idx[k])
                else:  # 0 where the operand's axis is broadcast
                    step = self.namer.fresh(f"_s{k}")
                    self.line(indent, f"{step} = int({s} != 1)")
                    reads[n].append(f"{idx[k]} * {step}")
        target = self.namer.fresh(out) if out in a else out
        shape = "(" + ", ".join(sizes) + ("," if d == 1 else "") + ")"
        self.line(indent, f"{target} = {allocation('empty', shape)}")
        for k in range(d):
            self.line(indent + k, f"for {idx[k]} in range({sizes[k]}):")
        args = [f"{a[n]}[{', '.join(r)}]" if x.type.ndim else a[n]
                for n, (x, r) in enumerate(zip(e.ins, reads))]
        scalar_types = [Type(x.type.kind, 0) for x in e.ins]
        element = primitive_source(e.prim, args, e.params, scalar_types)
        self.line(indent + d, f"{target}[{', '.join(idx)}] = {element}")
        if target != out:
            self.line(indent, f"{out} = {target}")
        return True


def _broadcast_token(token) -> bool:
    """Whether a size token is a broadcast of sizes not known to be equal (`ir.broadcast_dims`)."""
    return isinstance(token, tuple) and bool(token) and token[0] == "broadcast"


def nest_args(e: Eqn, here: list, dims: tuple, idx: list[str], element: dict) -> list[str]:
    """The source of each operand of ``e`` in one iteration of the nest (loop indices
    ``idx``): an element computed in the nest (``here``), a scalar as it is, or the
    operand's entry at the loops indexing its axes (0 for a broadcast axis)."""
    args = []
    for a, axes, h in zip(e.ins, nest_reads(e, dims), here):
        if h:
            args.append(element[a])
        elif axes == "value":
            args.append(atom_source(a))
        elif axes == "into":  # (the part of the array written: `NestWriter.parts_written`)
            args.append(None)
        else:
            args.append(f"{a.name}[{', '.join('0' if x is None else idx[x] for x in axes)}]")
    return args
