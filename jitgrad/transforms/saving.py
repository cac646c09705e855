"""Where each forward value the adjoint reads comes from (`Saver`), and the wiring for it.

Takes the reverse transform's result (`reverse_context.ReverseContext`: the adjoint blocks,
each forward variable's home block, the loops' reverse counters) after the adjoint is built; runs
as the pass `SAVING` (`transforms.passes`). Guarantees
(rule 5 of the memory model, `reverse` module docstring): every forward value the adjoint reads
is available there, at the cheapest of: rebuilt from the reverse counter (a ``for`` index, an
induction variable, a counter the loop only counts up: `Saver.counted`), taken from the next
iteration's entry value (a carried update), recomputed (cheap arithmetic, a read of an array
nothing writes), read from one snapshot of an array (`Saver.snapshot`), made ``empty`` of its
sizes (an array in a loop that the adjoint reads only for its shape: `Saver.rebuild_shaped`),
returned by the forward kernel (top level), or pushed on a typed stack where it is computed
and popped where its adjoint block begins. Saved versions of an array written in place are copies, one name each.
"""

from __future__ import annotations

import dataclasses

from jitgrad.core import ops
from jitgrad.core.ir import (
    Atom,
    Block,
    Const,
    Eqn,
    For,
    If,
    Namer,
    Repeat,
    Storage,
    Var,
    While,
    defs,
    dims_of,
    sub_blocks,
    used_atoms,
    walk,
)
from jitgrad.core.types import INT, Type
from jitgrad.prims import primitives
from jitgrad.transforms.passes import GradientWork, Pass
from jitgrad.transforms.recompute import planned
from jitgrad.transforms.reverse_context import ReverseContext


@dataclasses.dataclass
class _Placement:
    """`Saver.apply`'s decisions so far."""

    loops: dict  # loop body -> its loop
    prologue: dict = dataclasses.field(default_factory=dict)  # block -> eqns before the pops
    rebuilt: dict = dataclasses.field(default_factory=dict)  # block -> eqns after the pops
    saves: dict = dataclasses.field(default_factory=dict)  # (block, var) -> (var, copy)
    done: set = dataclasses.field(default_factory=set)  # values already rebuilt


class Saver:
    """Decides where each forward value the adjoint reads comes from, and wires it up."""

    def __init__(self, ctx: ReverseContext):
        self.ctx = ctx
        self.fn = fn = ctx.fn
        self.storage = Storage(fn)
        self.needed: dict[Block, dict[Var, tuple[Var, bool]]] = {}  # block -> var -> (v, copy)
        self.replayed: set[Block] = set()  # blocks of loops the adjoint will replay (`recompute`)
        self.read_whole: set = set()  # what the adjoint reads other than entry by entry
        self.contents_read: set = set()  # what the adjoint reads other than for its shape
        self.sizes_read: dict = {}  # (block, size token) -> its size, read in that block
        self.made_again = True  # top-level arrays may be made again (`elementwise_again`)
        self.again: list[Var] = []  # the arrays made again
        self.capacity: dict[For, Var] = {}  # top-level for loop -> its trip count
        self.defining: dict[Var, Eqn] = {}  # var -> the equation that computes it
        self.trips_of: dict[Var, object] = {}  # trips var -> its loop
        self.order: dict[Var, int] = {}  # var -> position in program order
        for n, s in enumerate(walk(fn.body)):
            if isinstance(s, Eqn):
                for o in s.outs:
                    self.defining[o] = s
                    self.order[o] = n
            elif isinstance(s, (For, While)):
                self.trips_of[s.trips] = s
                self.order[s.trips] = n
        # where each value is made and each array written: (position, the loops around it)
        self.made_at: dict[Var, tuple[int, tuple]] = {}
        self.writes: dict[Var, list[tuple[int, tuple]]] = {}  # memory class -> its writes
        self._positions(fn.body, ())

    def _positions(self, block: Block, loops: tuple) -> None:
        for s in block.stmts:
            at = (len(self.made_at) + sum(map(len, self.writes.values())), loops)
            if isinstance(s, Eqn):
                for o in s.outs:
                    self.made_at[o] = at
                if ops.flags(s.prim).writes_into_first and isinstance(s.ins[0], Var):
                    self.writes.setdefault(self.storage.find(s.ins[0]), []).append(at)
            inner = loops + (s,) if isinstance(s, (For, While)) else loops
            for b in sub_blocks(s):
                self._positions(b, inner)

    def unchanged_after(self, array: Var, v: Var) -> bool:
        """Whether nothing writes into ``array``'s memory once ``v`` is made: every write
        comes before it, and none in a loop around it (a later iteration would write after
        it), so the adjoint reads the same values there as the forward pass did."""
        if not self.storage.written(array):
            return True
        if v not in self.made_at:
            return False
        at, loops = self.made_at[v]
        return all(w_at < at and not any(loop in w_loops for loop in loops)
                   for w_at, w_loops in self.writes.get(self.storage.find(array), []))

    def collect(self, ablock: Block, chain: list[Block]):
        fblock = self.ctx.forward_of_block.get(ablock)
        if fblock is not None:
            chain = chain + [fblock]
        for s in ablock.stmts:
            if isinstance(s, Eqn):
                shape_only = ops.flags(s.prim).shape_only
                for k, a in enumerate(s.ins):
                    self.note(a, chain, k in shape_only)
                if not _fuses(s):
                    self.read_whole.update(s.ins)
            elif isinstance(s, If):
                self.note(s.cond, chain, False)
            elif isinstance(s, Repeat):
                self.note(s.trips, chain, False)
            for b in sub_blocks(s):
                self.collect(b, chain)

    def note(self, a, chain, shape_only: bool):
        if not isinstance(a, Var) or a not in self.ctx.home:
            return  # a constant, or a variable of the adjoint itself
        ih = self.ctx.iter_home.get(a)
        home = ih if ih is not None and any(b is ih for b in chain) else self.ctx.home[a]
        entry = self.needed.setdefault(home, {})
        if not shape_only:
            self.contents_read.add(a)
        copy = self.storage.written(a) and not shape_only and not self.unchanged_after(a, a)
        old = entry.get(a)
        entry[a] = (a, copy or (old[1] if old else False))

    def apply(self, adj_top: Block, namer: Namer):
        """Insert saves into the forward body and pops into the adjoint; return the top-level
        values to pass and the stacks to pass.

        Each value the adjoint reads is placed (`place`): rebuilt, recomputed or read from a
        snapshot where it can be, else saved. Rebuilding one may need others (its inputs),
        which are placed in turn. A value that nothing reads but for its shape, once every
        other value is placed (a rebuild reads its inputs' contents), is made `empty` of its
        sizes where it can be (`rebuild_shaped`)."""
        self.collect(adj_top, [])
        plan = _Placement({s.body: s for s in walk(self.fn.body) if isinstance(s, (For, While))})
        work = [(home_block, v, copy) for home_block, entries in self.needed.items()
                for v, copy in entries.values()]
        shaped = []  # (placed last, when their contents are still unread)
        while work:
            while work:
                home_block, v, copy = work.pop()
                if v not in self.contents_read and self.sizes_named(v):
                    shaped.append((home_block, v, copy))
                    continue
                needs = self.place(plan, home_block, v, copy)
                self.contents_read.update(a for _, a, _ in needs)
                work += needs
            work = [w for w in shaped if w[1] in self.contents_read]
            shaped = [w for w in shaped if w[1] not in self.contents_read]
        for home_block, v, copy in shaped:
            self.rebuild_shaped(plan, home_block, v)
        top_saved, stacks, pops, renames = self.wire_saves(plan.saves, namer)
        for v in self.again:  # (its own name: the forward pass may still make and keep it)
            renames[v] = _version_name(v, namer)
        for home_block in dict.fromkeys([*plan.prologue, *pops, *plan.rebuilt]):  # fixed order
            ablock = self.ctx.adjoint_of_block[home_block]
            ablock.stmts[:0] = (plan.prologue.get(home_block, []) + pops.get(home_block, [])
                                + self.in_forward_order(plan.rebuilt.get(home_block, [])))
        if self.again:
            _before_first_read(self.ctx.adjoint_of_block[self.fn.body],
                               sorted(self.again, key=lambda v: self.order.get(v, 0)))
        _rename_reads(adj_top, renames)
        return top_saved, stacks

    def place(self, plan: _Placement, home_block: Block, v: Var, copy: bool) -> list:
        """Decide where the adjoint of ``home_block`` gets ``v`` (``copy``: a version written
        in place later, so a saved value must be a copy); return the further values the
        decision needs, as ``(home block, value, copy)``."""
        loop = plan.loops.get(home_block)
        for rebuild in (self.rebuild_index, self.rebuild_induction, self.rebuild_counted,
                        self.rebuild_carried, self.rebuild_recomputed, self.rebuild_snapshot):
            needs = rebuild(plan, loop, home_block, v, copy)
            if needs is not None:
                return needs
        key = (home_block, v)
        if key not in plan.saves or (copy and not plan.saves[key][1]):
            plan.saves[key] = (v, copy or plan.saves.get(key, (v, False))[1])
        return []

    def _needs(self, atoms, home_block: Block) -> list:
        """The forward values among ``atoms``, to be placed for ``home_block`` (not copies)."""
        return [(self.where(a, home_block), a, False) for a in atoms
                if isinstance(a, Var) and a in self.ctx.home]

    def rebuild_index(self, plan, loop, home_block, v, copy):
        """A ``for`` loop's index: ``start + k * step`` from the reverse counter."""
        if not (isinstance(loop, For) and v is loop.index):
            return None
        if v in plan.done:
            return []
        plan.done.add(v)
        plan.rebuilt.setdefault(home_block, []).append(Eqn(
            "loop_index", [v], [self.ctx.counter_of(loop), loop.start, loop.step], {},
            loop.loc))
        return [(self.ctx.home[a], a, False) for a in (loop.start, loop.step)
                if isinstance(a, Var) and a in self.ctx.home]

    def rebuild_induction(self, plan, loop, home_block, v, copy):
        """``i = i0 + k * step`` at iteration k: rebuilt like the index, no tape."""
        induction = self.induction(loop, v)
        if induction is None:
            return None
        if v in plan.done:
            return []
        plan.done.add(v)
        init, step = induction
        plan.rebuilt.setdefault(home_block, []).append(Eqn(
            "loop_index", [v], [self.ctx.counter_of(loop), init, step], {}, loop.loc))
        return self._needs([init], home_block)

    def rebuild_counted(self, plan, loop, home_block, v, copy):
        """``v = v_end - (what the body added)``: rebuilt backwards, no tape."""
        counted = self.counted(loop, v) if not copy else None
        if counted is None:
            return None
        if v in plan.done:
            return []
        plan.done.add(v)
        update, inputs = counted
        # the update rebuilds the loop's index first: the only rebuild of it
        plan.done.add(loop.index)
        plan.rebuilt[home_block] = update + [
            e for e in plan.rebuilt.get(home_block, []) if not (
                e.prim == "loop_index" and e.outs[0] is loop.index)]
        return self._needs(inputs, home_block) + [(self.ctx.home[v], v, False)]

    def rebuild_carried(self, plan, loop, home_block, v, copy):
        """A carried value's update at the end of an iteration is the carried value at the
        start of the next one: the adjoint keeps the value it popped one reverse iteration
        earlier."""
        carry = None if loop is None or copy else next(
            (c for c in loop.carries if c.update is v and self.ctx.iter_home.get(v) is None),
            None)
        if carry is None:
            return None
        plan.prologue.setdefault(home_block, []).append(
            Eqn("assign", [v], [carry.var], {}, loop.loc))
        return [(home_block, carry.var, False), (self.ctx.home[carry.var], carry.var, False)]

    def rebuild_recomputed(self, plan, loop, home_block, v, copy):
        """Cheap arithmetic, or a read of an array nothing writes: computed again."""
        eqn = self.recomputable(v, home_block, plan.loops)
        if eqn is None:
            return None
        if v in plan.done:
            return []
        plan.done.add(v)
        plan.rebuilt.setdefault(home_block, []).append(eqn)
        return self._needs(eqn.ins if isinstance(eqn, Eqn) else (), home_block)

    def rebuild_snapshot(self, plan, loop, home_block, v, copy):
        """An element of an array written later: read from a copy of the array saved once."""
        snapshot = self.snapshot(v, home_block)
        if snapshot is None:
            return None
        eqn, where = snapshot
        needs = []
        if v not in plan.done:
            plan.done.add(v)
            plan.rebuilt.setdefault(home_block, []).append(
                Eqn(eqn.prim, [v], list(eqn.ins), dict(eqn.params), eqn.loc))
            needs = self._needs(eqn.ins[1:], home_block)
        return needs + [(where, eqn.ins[0], True)]

    def sizes_named(self, v: Var) -> bool:
        """Whether ``v`` is an array made in a loop or branch whose size tokens are literals
        or the parameters' axes (`rebuild_shaped` can make it)."""
        if not v.type.ndim or v.dims is None or self.ctx.home.get(v) is self.fn.body:
            return False
        params = set(self.fn.params)
        return all((isinstance(tok, int) and not isinstance(tok, bool)) or (
            isinstance(tok, tuple) and len(tok) == 2 and tok[0] in params
            and isinstance(tok[1], int)) for tok in v.dims)

    def rebuild_shaped(self, plan, home_block, v):
        """An array in a loop or branch that the adjoint reads only for its shape (the
        ``like`` of a sum's cotangent spread back: ``shape_only`` operands) is made ``empty``
        of its sizes there (`sizes_named`), instead of pushed once per iteration."""
        if v in plan.done:
            return
        plan.done.add(v)
        loc = self.defining[v].loc if v in self.defining else None
        sizes, made = [], []
        for tok in v.dims:
            if isinstance(tok, int):
                sizes.append(Const(tok))
                continue
            n = self.sizes_read.get((home_block, tok))
            if n is None:  # (one read of each parameter's size per block)
                n = self.sizes_read[home_block, tok] = Var(self.ctx.namer.fresh("_dim"), INT)
                made.append(Eqn("shape_dim", [n], [tok[0]], {"axis": tok[1]}, loc))
            self.order[n] = min(self.order.get(n, self.order.get(v, 0)), self.order.get(v, 0))
            sizes.append(n)
        plan.rebuilt.setdefault(home_block, []).extend(
            made + [Eqn("empty", [v], sizes, {"kind": v.type.kind}, loc)])

    def wire_saves(self, saves: dict, namer: Namer):
        """Return or push each saved value: (top-level (forward atom, adjoint parameter)
        pairs, the stacks to pass, the pops per forward block, the adjoint's new names)."""
        top_saved: list[tuple[Atom, Var]] = []
        stacks: list[Var] = []
        params = set(self.fn.params)
        pops: dict[Block, list] = {}
        renames: dict[Var, Var] = {}  # version -> its name in the adjoint
        for (home_block, _), (v, copy) in saves.items():
            # Versions of one array share its name in the forward code (they are one
            # storage); in the adjoint each saved version is its own value, with its own name
            # (one name wherever it is saved: a loop's pops and the value after the loop).
            if v in params:
                continue
            if v not in renames and (v.storage is not None or copy):
                renames[v] = _version_name(v, namer)
            own = renames.get(v, v)
            if home_block is self.fn.body:
                if copy:
                    saved = Var(namer.fresh("_save_" + v.name.lstrip("_")), v.type)
                    _insert_after_def(self.fn.body, v, Eqn("copy", [saved], [v], {}, None),
                                      self.ctx)
                    top_saved.append((saved, own))
                else:
                    top_saved.append((v, own))
                continue
            pop, new = self.stack(v, copy, home_block, namer, own)
            pops.setdefault(home_block, []).append(pop)
            stacks += new
        return top_saved, stacks, pops, renames

    def induction(self, loop, v: Var):
        """``(init, step)`` if ``v`` is an integer carried by the ``for`` loop ``loop`` and
        updated by ``v + step`` (a constant) at the top of its body: its value at iteration
        ``k`` is ``init + k * step``, rebuilt from the reverse counter like the index."""
        if not isinstance(loop, For) or v.type.kind != "i" or v.type.ndim:
            return None
        for c in loop.carries:
            if c.var is v:
                e = self.defining.get(c.update)
                if (e is not None and e.prim == "add" and e in loop.body.stmts
                        and len(e.ins) == 2 and e.ins[0] is v and isinstance(e.ins[1], Const)
                        and isinstance(e.ins[1].value, int)):
                    return c.init, e.ins[1]
        return None

    def counted(self, loop, v: Var):
        """For an integer ``v`` carried by the ``for`` loop ``loop`` that its body only counts
        up (``v + c`` at the top level of the body, or an inner ``for`` loop without ``break``
        that adds a constant step each iteration, like ADBench's ``idx``): equations that
        rebuild ``v`` at the start of a reverse iteration from its value at the start of the
        next one, which the adjoint still holds (after the last, the value after the loop),
        minus what the iteration added: the inner loops' trip counts times their steps, and
        the constants. Returns (equations, the variables they read) or None."""
        if not isinstance(loop, For) or v.type.kind != "i" or v.type.ndim:
            return None
        carry = next((c for c in loop.carries if c.var is v), None)
        if carry is None or self.induction(loop, v) is not None:
            return None
        top = loop.body.stmts
        u, constant, inner = carry.update, 0, []
        while u is not v:
            e = self.defining.get(u)
            if e is not None and any(t is e for t in top):
                if not (e.prim == "add" and isinstance(e.ins[0], Var) and isinstance(
                        e.ins[1], Const) and isinstance(e.ins[1].value, int)):
                    return None
                constant, u = constant + e.ins[1].value, e.ins[0]
                continue
            f = next((t for t in top if isinstance(t, For) and any(
                c.var is u for c in t.carries)), None)
            step = None if f is None or f.exit_flag is not None else self.induction(f, u)
            if step is None or not isinstance(step[0], Var):
                return None
            inner.append((f, step[1].value))
            u = step[0]
        if not inner:
            return None
        ancestors = set(self._ancestors(loop.body))
        inputs = []
        for f, _ in inner:  # its range must be known at the start of the reverse iteration
            for a in (f.start, f.stop, f.step):
                if isinstance(a, Var) and a is not loop.index:
                    if a not in self.ctx.home or self.ctx.home[a] not in ancestors:
                        return None
                    inputs.append(a)
        for a in (loop.start, loop.step):
            if isinstance(a, Var):
                inputs.append(a)
        out = [Eqn("loop_index", [loop.index], [self.ctx.counter_of(loop), loop.start,
                                                loop.step], {}, loop.loc)]
        added: Atom = Const(constant)
        for f, step in inner:
            trips = Var(self.ctx.namer.fresh("_trips"), INT)
            out.append(Eqn("trip_count", [trips], [f.start, f.stop, f.step], {}, f.loc))
            if step != 1:
                scaled = Var(self.ctx.namer.fresh("_added"), INT)
                out.append(Eqn("mul", [scaled], [trips, Const(step)], {}, f.loc))
                trips = scaled
            total = Var(self.ctx.namer.fresh("_added"), INT)
            out.append(Eqn("add", [total], [added, trips], {}, f.loc))
            added = total
        out.append(Eqn("sub", [v], [v, added], {}, loop.loc))
        return out, inputs

    def _ancestors(self, block: Block):
        """The forward blocks strictly enclosing ``block``."""
        while block in self.ctx.parent:
            block = self.ctx.parent[block][1]
            yield block

    def where(self, a: Var, home_block: Block) -> Block:
        """The block whose value of ``a`` an equation in ``home_block`` reads: the loop body
        that carries it, when ``home_block`` is inside that body; else where it is defined."""
        ih = self.ctx.iter_home.get(a)
        if ih is not None and _inside(self.ctx.parent, home_block, ih):
            return ih
        return self.ctx.home[a]

    def snapshot(self, v: Var, home_block: Block) -> tuple[Eqn, Block] | None:
        """``(v = a[i], block)`` when ``v``, an element of a 1-D float array ``a`` written in
        place later, is read inside a loop over ``a``'s length nested in the block that made
        this version of ``a``: saving ``a`` there once (its length in values, no more often
        than that loop runs) is cheaper than a push per element read, and the adjoint reads
        ``a[i]`` from the saved copy. (ADBench's GMM reads ``xc[c]`` d(d-1)/2 times per
        component, ``xc`` holds d values.)"""
        eqn = self.defining.get(v)
        if (eqn is None or eqn.prim != "getitem" or v.type.ndim
                or eqn.params.get("index_spec") != ("i",)):
            return None
        a = eqn.ins[0]
        if not (isinstance(a, Var) and a.type.ndim == 1 and a.type.kind == "f"
                and self.storage.written(a)):
            return None
        length = dims_of(a.root)[0]
        where = self.where(a, home_block)
        block = home_block
        while block is not where:
            if block not in self.ctx.parent:
                return None
            stmt, block = self.ctx.parent[block]
            if (isinstance(stmt, For) and stmt.start == Const(0) and stmt.step == Const(1)
                    and _token(stmt.stop) == length is not None):
                return eqn, where
        return None

    def recomputable(self, v: Var, home_block: Block, loops) -> Eqn | None:
        """An equation that rebuilds the scalar ``v`` in the adjoint more cheaply than a tape:
        ``v`` is computed by scalar arithmetic or a read of an array nothing writes into, in a
        loop or branch, or it is the trip count of a loop that cannot exit early; or an
        array at the top level (`elementwise_again`)."""
        if home_block is self.fn.body:
            return self.elementwise_again(v)
        eqn = self.defining.get(v)
        if v.type.ndim:  # a view by basic indexing of an array nothing writes after it
            if eqn is None or not ops.flags(eqn.prim).view or any(
                    isinstance(a, Var) and a.type.ndim for a in eqn.ins[1:]) or not (
                    isinstance(eqn.ins[0], Var) and self.unchanged_after(eqn.ins[0], v)):
                return None
            return Eqn(eqn.prim, [v], list(eqn.ins), dict(eqn.params), eqn.loc)
        if eqn is None:
            loop = self.trips_of.get(v)
            if loop is not None and isinstance(loop, For) and loop.exit_flag is None:
                return Eqn("trip_count", [v], [loop.start, loop.stop, loop.step], {}, loop.loc)
            return None
        p = primitives.PRIMITIVES.get(eqn.prim)
        if p is None or not (p.elementwise or p.flags.recomputable):
            return None
        if any(a.type.ndim for a in eqn.ins[1:] if eqn.prim == "getitem") or (
                eqn.prim != "getitem" and any(a.type.ndim for a in eqn.ins)):
            return None
        if eqn.prim == "getitem" and not self.unchanged_after(eqn.ins[0], v):
            return None
        if ops.flags(eqn.prim).costly and home_block in self.replayed:
            return None  # the replay computed it already: a push is cheaper than a third time
        return Eqn(eqn.prim, [v], list(eqn.ins), dict(eqn.params), eqn.loc)

    def elementwise_again(self, v: Var) -> Eqn | None:
        """An equation that makes the top-level array ``v`` again in the adjoint: ``v`` is
        cheap elementwise arithmetic (not ``costly``) of arrays the adjoint reads anyway (so
        no array is kept for it), none of them written once ``v`` is made, and nothing writes
        into ``v``.
        Both kernels read it entry by entry only (elementwise operations and sums, which the
        backend writes into its loop nests), so the adjoint's nests compute it where they
        read it, and the forward pass neither keeps nor makes it: softmax's ``e / s``, which
        the forward pass only sums and whose adjoint reads ``e`` and ``s`` anyway (an array
        and two passes over memory fewer)."""
        eqn = self.defining.get(v)
        if (not self.made_again or not v.type.ndim or eqn is None or not _fuses(eqn) or ops.flags(eqn.prim).sums
                or ops.flags(eqn.prim).costly or self.storage.written(v) or v in self.read_whole
                or v is self.fn.result or v in self.fn.aux or not all(
                    _fuses(s) for s in walk(self.fn.body) if v in used_atoms(s))):
            return None
        read = self.needed.get(self.fn.body, {})
        for a in eqn.ins:
            if isinstance(a, Var) and a.type.ndim and not (
                    a in read and self.unchanged_after(a, v)):
                return None
        self.again.append(v)
        return Eqn(eqn.prim, [v], list(eqn.ins), dict(eqn.params), eqn.loc)

    def in_forward_order(self, eqns: list) -> list:
        return sorted(eqns, key=lambda e: self.order.get(e.outs[0], 0))

    def stack(self, v: Var, copy: bool, home_block: Block, namer: Namer, own: Var):
        """A typed stack for ``v``: allocated before the top-level statement holding its block,
        pushed where ``v`` is computed; returns the pop for the adjoint and the new variables.

        A copy of a 1-D float array goes onto a flat stack (one float array: the values, then
        their count), so a snapshot costs no allocation; other arrays go onto a list.

        A scalar pushed at most once per iteration of a ``for`` loop gets room for the loop's
        trip count before the loop starts, so the push itself is a plain store (a check for a
        full stack in the loop would cost more than the store)."""
        base = v.name.lstrip("_")
        tape = Var(namer.fresh("_tape_" + base), Type(v.type.kind, v.type.ndim + 1))
        count = Var(namer.fresh("_n_" + base), INT)
        home = _find_block(self.fn.body, home_block)
        top_stmt = _top_level_ancestor(self.ctx.parent, home, self.fn.body)
        capacity: Atom = Const(16)
        loop = self.pushing_loop(home) if v.type.ndim == 0 else None
        if loop is not None:
            trips = self.trip_count(loop, namer)
            if loop is top_stmt:
                capacity = trips
            else:
                _insert_before(self.ctx.parent[loop.body][1], loop,
                               Eqn("reserve", [tape], [tape, count, trips], {}, None))
        flat = copy and v.type.ndim == 1 and v.type.kind == "f"  # copies into one float array
        _insert_before(self.fn.body, top_stmt, Eqn(
            "stack_alloc", [tape, count], [capacity], {"kind": v.type.kind, "ndim": v.type.ndim,
                                                       "flat": flat}, None))
        push = Eqn("push", [], [tape, count, v],
                   {"copy": copy, "ndim": v.type.ndim, "exact": loop is not None, "flat": flat},
                   None)
        _insert_push(home, v, push, self.ctx)
        return (Eqn("pop", [own], [tape, count], {"ndim": v.type.ndim, "flat": flat}, None),
                [tape, count])

    def pushing_loop(self, home: Block):
        """The ``for`` loop one of whose iterations runs ``home`` at most once, if any."""
        block = home
        while block in self.ctx.parent:
            stmt, outer = self.ctx.parent[block]
            if isinstance(stmt, For) and stmt.body is block:
                return stmt
            if not isinstance(stmt, If):
                return None
            block = outer
        return None

    def trip_count(self, loop: For, namer: Namer) -> Var:
        """``len(range(...))`` of ``loop``, computed once just before it."""
        trips = self.capacity.get(loop)
        if trips is None:
            trips = self.capacity[loop] = Var(namer.fresh("_trip_count"), INT)
            _insert_before(self.ctx.parent[loop.body][1], loop, Eqn(
                "trip_count", [trips], [loop.start, loop.stop, loop.step], {}, None))
        return trips


def _fuses(s) -> bool:
    """Whether the statement ``s`` reads its arrays entry by entry in a loop nest the backend
    writes (an elementwise operation or a sum), so an array it reads need not exist whole."""
    p = primitives.PRIMITIVES.get(s.prim) if isinstance(s, Eqn) else None
    return p is not None and (p.elementwise or ops.flags(s.prim).sums)


def _before_first_read(block: Block, made: list) -> None:
    """Each statement of ``block`` that makes one of ``made`` (in forward order) moved to just
    before the first statement that reads it: an array made again goes into the loop nest
    that reads it, not ahead of the nests before it."""
    for v in reversed(made):
        k = next(j for j, s in enumerate(block.stmts) if isinstance(s, Eqn) and v in s.outs)
        e = block.stmts.pop(k)
        first = next((j for j, s in enumerate(block.stmts) if v in used_atoms(s)), k)
        block.stmts.insert(first, e)


def _rename_reads(block: Block, renames: dict) -> None:
    """Every read of a renamed forward variable in ``block`` reads its new name instead."""
    for s in walk(block):
        if isinstance(s, Eqn):
            s.ins = [renames.get(a, a) if isinstance(a, Var) else a for a in s.ins]
            s.outs = [renames.get(o, o) for o in s.outs]
        elif isinstance(s, If) and isinstance(s.cond, Var):
            s.cond = renames.get(s.cond, s.cond)
        elif isinstance(s, Repeat) and isinstance(s.trips, Var):
            s.trips = renames.get(s.trips, s.trips)


def _version_name(v: Var, namer: Namer) -> Var:
    """A variable for one saved version of an array in the adjoint (``p`` -> ``p_v1``)."""
    return Var(namer.fresh(v.name + "_v"), v.type, dims=v.dims)


def _token(a) -> object:
    """The size token an integer stands for: a literal's value, or the token of the size it
    was read from (``d = x.shape[1]``); None if unknown."""
    if isinstance(a, Const):
        return a.value if isinstance(a.value, int) else None
    return a.dims[0] if a.dims else None


def _inside(parent, block: Block, outer: Block) -> bool:
    """Whether ``block`` is ``outer`` or nested in it."""
    while True:
        if block is outer:
            return True
        if block not in parent:
            return False
        block = parent[block][1]


def _find_block(top: Block, block: Block) -> Block:
    """``block``, which must be ``top`` or nested in it."""
    if top is block:
        return top
    for s in walk(top):
        for b in sub_blocks(s):
            if b is block:
                return b
    raise KeyError(block)


def _top_level_ancestor(parent, block: Block, top: Block):
    stmt = None
    while block is not top:
        stmt, block = parent[block]
    return stmt


def _insert_before(block: Block, anchor, stmt):
    for k, s in enumerate(block.stmts):
        if s is anchor:
            block.stmts.insert(k, stmt)
            return
    raise AssertionError("anchor not found")


def _insert_after_def(block: Block, v: Var, stmt, ctx: ReverseContext):
    home = ctx.home[v]
    for k, s in enumerate(home.stmts):
        if v in defs(s) and not (isinstance(s, (For, While)) and ctx.iter_home.get(v) is
                                  home):
            home.stmts.insert(k + 1, stmt)
            return
    raise AssertionError(f"definition of {v.name} not found")


def _insert_push(home: Block, v: Var, push: Eqn, ctx: ReverseContext):
    """Push where ``v``'s value for ``home`` is known: after its definition, or for a loop's
    carried value or index, at the start of each iteration."""
    if ctx.iter_home.get(v) is home:
        home.stmts.insert(0, push)
        return
    for k, s in enumerate(home.stmts):
        if v in defs(s):
            home.stmts.insert(k + 1, push)
            return
    # a loop index: defined by the loop whose body this is
    home.stmts.insert(0, push)


def save_values(work: GradientWork) -> None:
    """The pass: every forward value the adjoint reads made available there (module
    docstring); ``work.saved`` and ``work.stacks`` are what the forward kernel hands over."""
    saver = Saver(work.context)
    saver.replayed = planned(work.function) if work.settings.recompute else set()
    saver.made_again = work.settings.made_again
    work.saved, work.stacks = saver.apply(work.adjoint, work.context.namer)


SAVING = Pass("saving", save_values, reads=("function", "context", "adjoint"),
              writes=("saved", "stacks"), needs=("reverse",))
