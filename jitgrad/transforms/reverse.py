"""Reverse mode: one forward IR function → a forward kernel that saves, and an adjoint kernel.

Takes an `ir.Function` and the parameters to differentiate. Guarantees:

* **Activity.** Only values that depend on a ``wrt`` parameter *and* reach the result get an
  adjoint ("active"); nothing else is differentiated or saved.
* **Symbolic zeros.** An adjoint is nothing until its first contribution, which is assigned
  (``_b_x = c``); later ones add. An adjoint that a loop body or a branch adds into while it is
  defined outside it is materialised (zeros) before that loop or branch.
* **Unbroadcasting in one place** (`_unbroadcast`): elementwise rules return their share at the
  broadcast shape; it is summed back to the input's shape here.
* **Memory model** (the builder, `frontend/build.py`, resolves it; this module relies on it):

  - *Buffers.* Every array value lives in a buffer. Arithmetic, `np.zeros`-like allocation
    and ``.copy()`` make a new buffer (``x * 1.0`` too, although it folds). Views (basic
    slicing, ``.T``, reshape), assignment ``a = b`` and passing an array to a called function
    share the caller's buffer: Python passes arrays by reference.
  - *Versions.* An in-place write (``y[i] = v``, ``y *= s``, a callee's ``out[i] = ...``) makes
    a new SSA version of the buffer (``setitem``), emitted in place under the buffer's name.
    Every name for the buffer (aliases, the callers' names after a call, the names a loop
    carries, the merged value after a branch) then means the new version. A view taken
    before the write is out of date: a view of basic indexing or ``.T`` is taken again from
    the new version when read, and a write through it is a write into its array
    (`frontend.build_views`); reading any other out-of-date view is refused. Nothing is ever
    read in an out-of-date version by the forward code.
  - *Arguments.* The differentiated function's arguments that it writes into (under any name,
    in a callee, in a loop) are copied on entry, so the caller's arrays are never modified;
    a called function's arguments are not copied.
  - *Shadows.* All versions of a buffer written in place share one adjoint array (its shadow).
    The adjoint of a read adds into the shadow at the place read; the adjoint of
    ``setitem(y, v, idx)`` takes the shadow's slot (a copy) as ``v``'s share, zeroes the slot
    (the write killed what was there), then adds that share into ``v``'s adjoint (``v`` may
    share the buffer). An increment ``y[i] += u`` of one element leaves the slot and gives it
    to ``u``: the zeroing and the read's re-adding cancel (`_increments`).
  - *Saving.* The adjoint reads forward values by their forward names. A value of the
    top-level block is returned by the forward kernel. A value computed inside a loop or branch
    is rebuilt in the adjoint when that is cheap (a ``for`` index from the reverse counter, a
    trip count, scalar arithmetic or a read of an array nothing writes into, a carried value's
    update from the next iteration's entry value, an integer the loop only counts up from its
    next entry value minus what the iteration added: `saving.Saver.counted`); otherwise it is pushed
    on its own typed stack where it is computed and popped where the adjoint of that block
    begins. A version of a buffer written in place is saved as a copy (a snapshot) where it is
    made, and in the adjoint every saved version is its own variable (``p_v``, ``p_v_1``): one
    name, one version. An element read of such a version, inside a loop over its length, is
    read from the version's snapshot instead of pushed (`saving.Saver.snapshot`); copies of 1-D float
    arrays go onto one flat float stack (values, then their count).
* **Loops** run backwards as ``for _ in range(trips)``; a loop-carried value's adjoint is
  carried backwards the same way.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from jitgrad.core import ops
from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import (
    Atom,
    Block,
    Const,
    Eqn,
    For,
    Function,
    Gradient,
    If,
    Kernel,
    Namer,
    Repeat,
    Var,
    While,
    defs,
    dims_of,
    equation_key,
    sub_blocks,
    used_atoms,
    walk,
)
from jitgrad.core.types import INT, Type
from jitgrad.lang.symbolic import GraphBuilder, Sym
from jitgrad.prims import primitives
from jitgrad.prims.primitives import RULES
from jitgrad.transforms.custom_rule import reverse_custom
from jitgrad.transforms.passes import GradientWork, Pass
from jitgrad.transforms.reverse_context import ReverseContext


@dataclasses.dataclass(eq=False)
class _Adj:
    var: Var  # the adjoint variable, ``_b_<name>``
    zero: bool = True  # no contribution yet
    owned: bool = False  # an array jitgrad allocated: in-place updates are safe
    const: float | None = None  # a scalar adjoint known while building (the seed's neighbours)


# ----------------------------------------------------------------------------- analyses


def _home_map(fn: Function):
    """For every variable: the block it is defined in, and for loop-carried values and loop
    indices the loop body where each iteration's value lives."""
    home: dict[Var, Block] = {p: fn.body for p in fn.params}
    iter_home: dict[Var, Block] = {}
    parent: dict[Block, tuple] = {}  # block -> (stmt, enclosing block)

    def block(b: Block):
        for s in b.stmts:
            if isinstance(s, Eqn):
                for o in s.outs:
                    home[o] = b
                continue
            for sb in sub_blocks(s):
                parent[sb] = (s, b)
                block(sb)
            if isinstance(s, If):
                for m in s.merges:
                    home[m.var] = b
            else:
                for c in s.carries:
                    home[c.var] = b
                    iter_home[c.var] = s.body
                home[s.trips] = b
                if isinstance(s, For):
                    home[s.index] = s.body
    block(fn.body)
    return home, iter_home, parent


def _varied(fn: Function, wrt_vars) -> set[Var]:
    varied = {v for v in wrt_vars}

    def mark(v):
        if v not in varied and v.type.kind == "f":
            varied.add(v)
            return True
        return False

    def is_v(a):
        return isinstance(a, Var) and a in varied

    changed = True
    while changed:
        changed = False
        for s in walk(fn.body):
            if isinstance(s, Eqn):
                rules = RULES.get(s.prim)
                if rules and any(is_v(a) and k < len(rules) and rules[k] is not None
                                 for k, a in enumerate(s.ins)):
                    for o in s.outs:
                        changed |= mark(o)
            elif isinstance(s, If):
                for m in s.merges:
                    if is_v(m.init) or is_v(m.update):
                        changed |= mark(m.var)
            else:
                for c in s.carries:
                    if is_v(c.init) or is_v(c.update):
                        changed |= mark(c.var)
    return varied


def _useful(fn: Function) -> set[Var]:
    useful: set[Var] = {fn.result} if isinstance(fn.result, Var) else set()

    def mark(a):
        if isinstance(a, Var) and a not in useful:
            useful.add(a)
            return True
        return False

    stmts = list(walk(fn.body))
    changed = True
    while changed:
        changed = False
        for s in reversed(stmts):
            if isinstance(s, Eqn):
                if any(o in useful for o in s.outs):
                    rules = RULES.get(s.prim) or ()
                    for k, a in enumerate(s.ins):
                        if k < len(rules) and rules[k] is not None:
                            changed |= mark(a)
            elif isinstance(s, If):
                for m in s.merges:
                    if m.var in useful:
                        changed |= mark(m.init) | mark(m.update)
            else:
                for c in s.carries:
                    if c.var in useful:
                        changed |= mark(c.init) | mark(c.update)
    return useful


def _increments(fn: Function) -> dict[Eqn, tuple[Eqn, int]]:
    """The element increments ``y[i] += u`` (and ``-=``): ``y' = setitem(y, w, i)`` of a scalar
    element where ``w = t + u`` (or ``t - u``, ``u + t``) and ``t = y[i]``, read from the same
    version at the same index. For each such ``setitem``: the addition and the position of
    ``u`` in it.

    Its adjoint sends the slot's adjoint to ``u`` and leaves the slot as it is
    (``reverse_setitem``): zeroing the slot for the write and adding the same amount back
    through ``t``'s share of the addition cancel, so the adjoint neither zeroes nor re-adds in
    memory. What ``w`` and ``t`` receive from their other uses (``y[i] += y[i] * s``, ``z`` in
    ``z = y[i] + u; y[i] = z; total += z``) still flows through the addition and the read."""
    made = {s.out: s for s in walk(fn.body) if isinstance(s, Eqn) and len(s.outs) == 1}
    found = {}
    for s in walk(fn.body):
        if not (isinstance(s, Eqn) and s.prim == "setitem"):
            continue
        y, w, idx = s.ins[0], s.ins[1], s.ins[2:]
        spec = s.params["index_spec"]
        add = made.get(w) if isinstance(w, Var) else None
        if (add is None or not ops.flags(add.prim).additive or w.type.ndim
                or any(item != "i" for item in spec)):
            continue
        slot = equation_key("getitem", [y, *idx], {"index_spec": spec})  # the read y[i]
        for k in ((1,) if add.prim == "sub" else (1, 0)):
            read = made.get(add.ins[1 - k]) if isinstance(add.ins[1 - k], Var) else None
            if read is not None and equation_key(read.prim, read.ins, read.params) == slot:
                found[s] = (add, k)
                break
    return found


# ----------------------------------------------------------------------------- the transform


class _Reverse:
    def __init__(self, fn: Function, wrt: list[int], namer: Namer, seed: Var | None = None):
        self.fn = fn
        self.wrt = wrt
        self.namer = namer
        self.seed = seed  # a cotangent parameter (`vjp.py`); None: the result's adjoint is 1
        self.gb = GraphBuilder(namer)
        self.home, self.iter_home, self.parent = _home_map(fn)
        wrt_vars = [fn.params[k] for k in wrt]
        varied = _varied(fn, wrt_vars)
        useful = _useful(fn)
        self.mutated_roots = {s.out.root for s in walk(fn.body)
                              if isinstance(s, Eqn) and s.prim == "setitem"}
        active = {i for i in varied if i in useful}
        self.active_keys: set[Var] = set()
        self.vars: dict[Var, Var] = {p: p for p in fn.params}
        for s in walk(fn.body):
            for v in defs(s):
                self.vars[v] = v
        for i in active:
            self.active_keys.add(self.key(self.vars[i]))
        self.adj: dict[Var, _Adj] = {}
        self.repeat_of: dict[For | While, Repeat] = {}  # forward loop -> its adjoint loop
        # forward loop -> its active carried values whose adjoint is not zero when the
        # loop's adjoint begins (what the code after the loop sends back into it)
        self.seeded: dict[For | While, list] = {}
        self.adjoint_of_block: dict[Block, Block] = {}  # forward block -> adjoint block
        self.forward_of_block: dict[Block, Block] = {}  # adjoint block -> forward block
        self.increments = _increments(fn)

    # -- adjoint bookkeeping -------------------------------------------------------------

    def key(self, v: Var) -> Var:
        """Versions of an array written in place share their first version's adjoint."""
        return v.root if v.root in self.mutated_roots else v

    def is_active(self, a) -> bool:
        return isinstance(a, Var) and self.key(a) in self.active_keys

    def state(self, v: Var) -> _Adj:
        k = self.key(v)
        st = self.adj.get(k)
        if st is None:
            st = self.adj[k] = _Adj(Var(self.namer.fresh("_b_" + k.name.lstrip("_")),
                                            Type("f", k.type.ndim), dims=dims_of(k)))
        return st

    def grad_of(self, v: Var):
        st = self.state(v)
        if st.const is not None:
            return st.const
        return None if st.zero else self.gb.sym(st.var)

    def put(self, target: Var, prim: str, ins: list, params=None):
        self.gb.block.stmts.append(Eqn(prim, [target] if target is not None else [],
                                       list(ins), dict(params or {}), self.gb.loc))

    def acc(self, x: Var, c) -> None:
        """Add the contribution ``c`` to the adjoint of ``x``."""
        atom = self.gb.atom(c)
        if isinstance(atom, Const) and atom.value == 0 and not isinstance(atom.value, bool):
            return
        st = self.state(x)
        if isinstance(atom, Const) and not x.type.ndim and (st.zero or st.const is not None):
            st.const = (st.const or 0.0) + float(atom.value)
            st.zero = False
            return
        if st.const is not None:
            self.materialise(x)
        if st.zero:
            if x.type.ndim and atom.type.ndim != x.type.ndim:
                atom = self.gb.atom(primitives.broadcast_like(self.gb.sym(atom), self.gb.sym(x)))
            self.put(st.var, "assign", [atom])
            st.zero, st.owned = False, False
        elif x.type.ndim and st.owned:
            self.put(None, "iadd", [st.var, atom])
        else:
            self.put(st.var, "add", [st.var, atom])
            st.owned = bool(x.type.ndim)  # a fresh array from the addition

    @property
    def graph(self) -> GraphBuilder:
        """Where adjoint statements are built (`reverse_context.AdjointWriter`)."""
        return self.gb

    def add(self, x: Var, c, e: Eqn) -> None:
        """Add ``e``'s contribution ``c`` (at the broadcast shape) to the adjoint of ``x``."""
        self.acc(x, self.unbroadcast(c, x, e))

    def materialise(self, x: Var) -> None:
        """Make ``x``'s adjoint a real value jitgrad owns (before a loop or branch adds to it)."""
        st = self.state(x)
        if st.const is not None:
            self.put(st.var, "assign", [Const(st.const)])
            st.const, st.zero, st.owned = None, False, True
        elif st.zero:
            if x.type.ndim:
                self.put(st.var, "zeros_like", [x])
            else:
                self.put(st.var, "assign", [Const(0.0)])
            st.zero, st.owned = False, True
        elif x.type.ndim and not st.owned:
            self.put(st.var, "copy", [st.var])
            st.owned = True

    # -- blocks --------------------------------------------------------------------------

    def reverse_block(self, fblock: Block) -> Block:
        ablock = Block()
        self.adjoint_of_block[fblock] = ablock
        self.forward_of_block[ablock] = fblock
        saved = self.gb.block
        self.gb.block = ablock
        try:
            self.prologue(fblock)
            for s in reversed(fblock.stmts):
                self.gb.loc = s.loc
                if isinstance(s, Eqn):
                    self.reverse_eqn(s)
                elif isinstance(s, If):
                    self.reverse_if(s)
                else:
                    self.reverse_loop(s)
        finally:
            self.gb.block = saved
        return ablock

    def prologue(self, fblock: Block):
        """At the start of a loop body's adjoint: carried adjoints move to their updates."""
        owner = self.parent.get(fblock)
        if owner is None or not isinstance(owner[0], (For, While)) or owner[0].body is not fblock:
            return
        loop = owner[0]
        carries = [c for c in loop.carries if self.is_active(c.var)
                   and not (isinstance(c.update, Var) and self.key(c.update) is self.key(c.var))]
        # an update that is itself carried, or a version of a carried array (whose adjoint is
        # that array's), is read before any adjoint is zeroed: the carries are one parallel
        # assignment (`u, unew = unew, u`)
        loop_keys = {self.key(c.var) for c in loop.carries}
        swaps = []
        for c in carries:
            g = self.gb.sym(self.state(c.var).var)
            if isinstance(c.update, Var) and self.key(c.update) in loop_keys:
                tmp = self.gb.new_var(self.state(c.var).var.type, "_b_swap")
                self.put(tmp, "assign", [g.atom])
                swaps.append((c, tmp))
            elif self.is_active(c.update):
                self.acc(c.update, g)
                if c.var.type.ndim:
                    self.state(c.update).owned = True  # the carried name is rebound below
        for c in carries:
            st = self.state(c.var)
            if c.var.type.ndim:
                self.put(st.var, "zeros_like", [st.var])
            else:
                self.put(st.var, "assign", [Const(0.0)])
            st.zero, st.owned = False, True
        for c, tmp in swaps:
            if self.is_active(c.update):
                self.acc(c.update, self.gb.sym(tmp))

    def counter_of(self, loop) -> Var:
        """The reverse iteration number of ``loop``'s adjoint (trips-1 down to 0)."""
        rep = self.repeat_of[loop]
        if rep.counter is None:
            rep.counter = Var(self.namer.fresh("_k"), INT)
        return rep.counter

    def outer_targets(self, stmt) -> list[Var]:
        """Active adjoints that ``stmt``'s adjoint adds into but that live outside it."""
        inside: set[Var] = set()
        versions = []
        for s in walk(Block([stmt])):
            for v in defs(s):
                inside.add(v)
                versions.append(v)
        out, seen = [], set()
        for a in used_atoms(stmt) + versions:
            if not isinstance(a, Var) or not self.is_active(a):
                continue
            k = self.key(a)
            if k in inside or k in seen:
                continue
            seen.add(k)
            out.append(k)
        return out

    def reverse_loop(self, s):
        self.seeded[s] = [c for c in s.carries if self.is_active(c.var) and (
            not self.state(c.var).zero or self.state(c.var).const is not None)]
        for x in self.outer_targets(s):
            self.materialise(x)
        for c in s.carries:
            if self.is_active(c.var):
                self.materialise(c.var)
        body = self.reverse_block(s.body)
        self.repeat_of[s] = Repeat(s.trips, body)
        self.gb.block.stmts.append(self.repeat_of[s])
        for c in s.carries:
            if self.is_active(c.var) and self.is_active(c.init) and self.key(c.init) is not self.key(
                    c.var):  # (an array written in place shares its adjoint with its init)
                self.acc(c.init, self.gb.sym(self.state(c.var).var))

    def reverse_if(self, s: If):
        for x in self.outer_targets(s):
            self.materialise(x)
        branches = []
        for fblock, pick in ((s.then, "init"), (s.orelse, "update")):
            ablock = Block()
            saved = self.gb.block
            self.gb.block = ablock
            for m in s.merges:
                value = getattr(m, pick)
                if self.is_active(m.var) and self.is_active(value):
                    g = self.grad_of(m.var)
                    if g is not None:
                        self.acc(value, g)
            self.gb.block = saved
            inner = self.reverse_block(fblock)
            ablock.stmts += inner.stmts
            self.adjoint_of_block[fblock] = ablock
            self.forward_of_block[ablock] = fblock
            branches.append(ablock)
        self.gb.loc = s.loc
        if branches[0].stmts or branches[1].stmts:
            self.gb.block.stmts.append(If(s.cond, branches[0], branches[1], [], s.loc))

    # -- equations -----------------------------------------------------------------------

    def value(self, a):
        return self.gb.sym(a) if isinstance(a, Var) else a.value

    def reverse_eqn(self, e: Eqn):
        out = e.out if e.outs else None
        if out is None or not self.is_active(out):
            return
        g = self.grad_of(out)
        if g is None:
            return
        if e.prim == "setitem":
            return self.reverse_setitem(e, g)
        prim = primitives.PRIMITIVES.get(e.prim)
        if prim is not None and prim.custom_rule:  # a user's rule: into several adjoints
            return reverse_custom(self, e, g)
        if e.prim == "getitem":
            x = e.ins[0]
            if self.is_active(x):
                self.add_at(x, g, e.ins[1:], e.params["index_spec"])
            return
        rules = RULES.get(e.prim)
        if rules is None:
            return
        ins = [self.value(a) for a in e.ins]
        ans = self.gb.sym(out)
        elementwise = primitives.PRIMITIVES[e.prim].elementwise
        with self.gb.sharing():  # x * x: one product g * x, added twice
            for k, a in enumerate(e.ins):
                if k >= len(rules) or rules[k] is None or not self.is_active(a):
                    continue
                try:
                    c = rules[k](g, ans, *ins, **e.params)
                except UnsupportedError as err:  # a rule's refusal: at the operation's line
                    if err.loc is None:
                        raise type(err)(err.message, e.loc, err.during) from None
                    raise
                if elementwise:
                    c = self.unbroadcast(c, a, e)
                self.acc(a, c)

    def unbroadcast(self, c, x: Var, e: Eqn):
        """The single place where a broadcast contribution is summed back to ``x``'s shape.

        Where the sizes are known while building (the same size token, or a size-1 axis of
        ``x`` from keepdims, None indexing or a literal), the sum is written out or skipped;
        otherwise a run-time check (``_rt.sum_to``) does it."""
        if not isinstance(c, Sym):
            return c if x.type.ndim == 0 else primitives.sum_to_like(c, self.gb.sym(x))
        if x.type.ndim == 0:  # (a sum the loop nests accumulate, as any other)
            return primitives.reduce_sum(c, axis=None, keepdims=False) if c.ndim else c
        cd, xd = dims_of(c.atom), dims_of(x)
        lead = len(cd) - len(xd)
        if lead < 0 or not all(xd[k] == 1 or xd[k] == cd[lead + k] for k in range(len(xd))):
            return primitives.sum_to_like(c, self.gb.sym(x))
        for _ in range(lead):
            c = primitives.reduce_sum(c, axis=0, keepdims=False)
        for k in range(len(xd)):
            if xd[k] == 1 and cd[lead + k] != 1:
                c = primitives.reduce_sum(c, axis=k, keepdims=True)
        return c

    def add_at(self, x: Var, g, idx: list, spec):
        self.ensure_owned(x)
        st = self.state(x)
        self.put(None, "add_at", [st.var, self.gb.atom(g)] + list(idx), {"index_spec": spec})

    def ensure_owned(self, x: Var):
        st = self.state(x)
        if st.zero:
            self.put(st.var, "zeros_like", [x])
            st.zero, st.owned = False, True
        elif not st.owned:
            self.put(st.var, "copy", [st.var])
            st.owned = True

    def reverse_setitem(self, e: Eqn, g):
        """``y2 = setitem(y1, v, idx)``: the slot's adjoint goes to ``v``, then the slot's
        adjoint is zeroed (the write killed what ``y1`` held there). ``v`` may share ``y``'s
        storage (``y *= 1.0``, ``y[1:] = y[:-1]``): its share is taken as a copy first and
        added only after the zeroing. An increment (``y[i] += u``, `_increments`) leaves the
        slot as it is and gives its adjoint to ``u``. The share is summed back to ``v``'s
        shape only where ``v`` may broadcast: not where the builder checked that it has the
        slot's sizes (``fits``, `build_writes.write_fits`), or their size tokens are the same.
        A write of the whole array at the top level hands its adjoint over (`hand_over`)."""
        x, v, idx = e.ins[0], e.ins[1], e.ins[2:]
        spec = e.params["index_spec"]
        if e in self.increments:  # y[i] += u: the slot's adjoint goes to u and stays
            add, k = self.increments[e]
            u = add.ins[k]
            if self.is_active(u):
                c = primitives.getitem(g, *[self.value(i) for i in idx], index_spec=spec)
                ins = [self.value(a) for a in add.ins]
                self.acc(u, RULES[add.prim][k](c, self.gb.sym(add.out), *ins))
            return
        fits = e.params.get("fits") or dims_of(v) == dims_of(x)
        if (fits and all(item == ":" for item in spec) and self.home.get(e.out) is self.fn.body
                and self.is_active(v) and self.key(v) is not self.key(x)):  # (not x[:] = x)
            self.hand_over(x, v)
            return
        c = None
        if self.is_active(v):
            c = primitives.getitem(g, *[self.value(i) for i in idx], index_spec=spec)
            if isinstance(c, Sym) and c.ndim:
                c = primitives.copy(c)
            if isinstance(c, Sym) and c.ndim and not (e.params.get("fits")
                                                      or dims_of(c.atom) == dims_of(v)):
                c = primitives.sum_to_like(c, self.gb.sym(v))
        self.ensure_owned(x)
        st = self.state(x)
        self.put(None, "zero_at", [st.var] + list(idx), {"index_spec": spec})
        if c is not None:
            self.acc(v, c)

    def hand_over(self, x: Var, v: Var) -> None:
        """``x[:] = v`` at the top level, ``v`` of ``x``'s sizes: the write killed all of
        ``x``, so ``x``'s adjoint becomes ``v``'s share as it is (no copy of the slot, no
        zeroing) and ``x``'s adjoint is zero again (symbolic: the next contribution is
        assigned, into a new array). At the top level only: a loop or branch that adds into
        ``x``'s adjoint keeps one array for it."""
        st = self.state(x)
        if st.zero:
            return
        self.acc(v, self.gb.sym(st.var))
        st.zero, st.owned = True, False

    # -- the whole function ----------------------------------------------------------------

    def run(self) -> tuple[Block, list[Atom]]:
        top = Block()
        self.gb.block = top
        self.gb.loc = self.fn.loc
        if self.is_active(self.fn.result):
            self.acc(self.fn.result, Const(1.0) if self.seed is None else self.gb.sym(self.seed))
        inner = self.reverse_block(self.fn.body)
        top.stmts += inner.stmts
        self.adjoint_of_block[self.fn.body] = top
        self.forward_of_block[top] = self.fn.body
        self.gb.block = top
        self.gb.loc = self.fn.loc
        grads = []
        for k in self.wrt:
            p = self.fn.params[k]
            st = self.state(p)
            if st.const is not None:
                self.materialise(p)
            if st.zero:
                if p.type.ndim:
                    self.put(st.var, "zeros_like", [p])
                else:
                    self.put(st.var, "assign", [Const(0.0)])
                st.zero = False
            grads.append(st.var)
        return top, grads

    def context(self) -> ReverseContext:
        """What the passes after this one may read (`reverse_context`)."""
        return ReverseContext(
            fn=self.fn, namer=self.namer, home=MappingProxyType(self.home),
            iter_home=MappingProxyType(self.iter_home), parent=MappingProxyType(self.parent),
            adjoint_of_block=MappingProxyType(self.adjoint_of_block),
            forward_of_block=MappingProxyType(self.forward_of_block),
            repeat_of=MappingProxyType(self.repeat_of), seeded=MappingProxyType(self.seeded),
            is_active=self.is_active, adjoint_key=self.key,
            adjoint_of=lambda v: self.state(v).var, outer_targets=self.outer_targets,
            counter_of=self.counter_of)


# ----------------------------------------------------------------------------- entry point


def shape_stand_ins(block: Block, params: list[Var]) -> None:
    """An adjoint equation that reads a forward array only for its shape reads an argument
    with the same size tokens instead (their sizes are equal by construction, or checked on
    entry), so that the forward pass need not keep that array for the adjoint."""
    by_dims: dict = {}
    for p in params:
        if p.type.ndim and p.dims is not None:
            by_dims.setdefault(p.dims, p)
    for s in walk(block):
        if isinstance(s, Eqn):
            for k in ops.flags(s.prim).shape_only:
                a = s.ins[k]
                if isinstance(a, Var) and a.type.ndim and a.dims in by_dims:
                    s.ins[k] = by_dims[a.dims]


def differentiate(work: GradientWork) -> None:
    """The pass: the adjoint body of ``work.function`` for the parameters ``work.wrt``, its
    results, and the context the passes after it read."""
    fn = work.function
    rev = _Reverse(fn, list(work.wrt), fn.namer, work.cotangent)
    work.adjoint, work.gradients = rev.run()
    work.context = rev.context()


def stand_ins(work: GradientWork) -> None:
    """The pass of `shape_stand_ins` on the adjoint body."""
    shape_stand_ins(work.adjoint, work.function.params)


def kernels(work: GradientWork) -> None:
    """The pass that ends reverse mode: the forward kernel returns the value, the saved values
    and the stacks; the adjoint kernel takes the parameters, those, and a cotangent last."""
    fn, saved, stacks = work.function, work.saved, work.stacks
    forward = Kernel(fn.name + "_forward", list(fn.params), fn.body,
                     [fn.result] + [a for a, _ in saved] + stacks, fn.loc, list(fn.aux))
    adj_params = list(fn.params) + [v for _, v in saved] + stacks
    if work.cotangent is not None:
        adj_params.append(work.cotangent)
    adjoint = Kernel(fn.name + "_adjoint", adj_params, work.adjoint, work.gradients, fn.loc)
    work.gradient = Gradient(forward, adjoint, fn, list(work.wrt), dict(work.context.repeat_of))


REVERSE = Pass("reverse", differentiate, reads=("function", "wrt"),
               writes=("adjoint", "gradients", "context"))
SHAPE_STAND_INS = Pass("shape stand-ins", stand_ins, reads=("function", "adjoint"), writes=(),
                       needs=("reverse",))
KERNELS = Pass("kernels", kernels, reads=("function", "context", "adjoint", "gradients", "saved",
                                          "stacks"), writes=("gradient",), needs=("saving",))

__all__ = ["KERNELS", "REVERSE", "SHAPE_STAND_INS", "differentiate", "kernels"]
