"""Forward mode: the tangent transform of an IR kernel.

Takes a kernel's parameters, body and returned atoms, and the parameters that get a tangent
(the seeds). Returns a new body in which every statement is followed by the statements that
compute its result's tangent (``_d_x`` for ``x``), and the tangents of the returned atoms. The
same transform serves `jvp` (on the function's forward IR) and `hvp` (forward over reverse, on
the gradient's forward and adjoint kernels run one after the other), so it knows the adjoint's
own statements too. Guarantees:

* **Activity.** Only values that depend on a seed get a tangent. Activity is decided for the
  whole kernel before anything is written (a name the adjoint assigns several times, an array
  written in place, a stack: each has one tangent name), so a value whose tangent is needed
  somewhere has one everywhere it is defined (zeros where nothing active reached it).
* **One rule per primitive** (`primitives.JVPS`, beside the adjoint rules); a primitive whose
  derivative is zero (its row says ``zero_tangent``) gives a zero tangent; any other primitive
  with an active input is refused (`UnsupportedError` naming the user's line), never taken as zero.
* **Memory.** An array written in place (all its `setitem` versions, an adjoint the adjoint
  adds into) has one tangent buffer, written in place the same way (``_d_y[i] = t``). A tangent
  never shares memory that its value does not: where a rule's tangent is another value's
  tangent (``x + c`` with ``c`` constant) and either may share memory with an array written
  in place (`core.ir.MayShare`), it is copied.
* **Stacks.** A pushed value's tangent is pushed on a twin stack with its own counter, and
  popped where the value is popped.
* **Loops and branches** carry and merge tangents beside their values.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import (
    Atom,
    Block,
    Carry,
    Const,
    Eqn,
    For,
    If,
    MayShare,
    Namer,
    Repeat,
    Var,
    While,
    dims_of,
    walk,
)
from jitgrad.core.types import Type
from jitgrad.lang.symbolic import GraphBuilder
from jitgrad.prims import primitives
from jitgrad.prims.primitives import JVPS, JVPS_ALL, zero_tangent

# Statements that change an array (or a stack) in place: their first input is the target.


def _is_float(a) -> bool:
    return isinstance(a, Var) and a.type.kind == "f"


class _Forward:
    def __init__(self, params: list[Var], body: Block, seeds: list[Var], namer: Namer):
        self.params = params
        self.body = body
        self.namer = namer
        self.gb = GraphBuilder(namer)
        self.mutated_roots = {s.outs[0].root for s in walk(body)
                              if isinstance(s, Eqn) and s.prim == "setitem"}
        self.tangent: dict[Var, Var] = {}  # key -> its tangent variable
        self.owner: dict[Var, Var] = {}  # tangent variable -> the value it belongs to
        self.memory = MayShare(body)
        self.twin_count: dict[Var, Var] = {}  # stack counter -> the twin stack's counter
        self.active: set[Var] = {self.key(v) for v in seeds}
        self.seeds = [self.tangent_var(v) for v in seeds]
        self.find_active()

    # -- names ---------------------------------------------------------------------------

    def key(self, v: Var) -> Var:
        """Versions of an array written in place share one tangent (their first version's)."""
        return v.root if v.root in self.mutated_roots else v

    def is_active(self, a) -> bool:
        return isinstance(a, Var) and self.key(a) in self.active

    def tangent_var(self, v: Var) -> Var:
        k = self.key(v)
        t = self.tangent.get(k)
        if t is None:
            t = self.tangent[k] = Var(self.namer.fresh("_d_" + k.name.lstrip("_")),
                                          Type("f", k.type.ndim), dims=k.dims)
            self.owner[t] = k
        return t

    # -- activity ------------------------------------------------------------------------

    def find_active(self) -> None:
        """Mark, to a fixed point, every float value (by key) that depends on a seed."""
        changed = True

        def mark(*atoms) -> None:
            nonlocal changed
            for a in atoms:
                if _is_float(a) and self.key(a) not in self.active:
                    self.active.add(self.key(a))
                    changed = True

        while changed:
            changed = False
            for s in walk(self.body):
                if isinstance(s, Eqn):
                    self.mark_eqn(s, mark)
                elif isinstance(s, (If, For, While)):
                    carries = s.merges if isinstance(s, If) else s.carries
                    for c in carries:
                        if any(self.is_active(a) for a in (c.var, c.init, c.update)):
                            mark(c.var, c.init, c.update)

    def mark_eqn(self, e: Eqn, mark) -> None:
        prim, flags = e.prim, ops.flags(e.prim)
        if prim == "push":
            if self.is_active(e.ins[2]):
                mark(e.ins[0])
        elif flags.tape and flags.may_return_input:  # pop, reserve: the stack and its result
            if self.is_active(e.ins[0]) or self.is_active(e.outs[0]):
                mark(e.ins[0], e.outs[0])
        elif flags.adds_into:
            if self.is_active(e.ins[1]):
                mark(e.ins[0])
        elif prim == "setitem":
            if self.is_active(e.ins[0]) or self.is_active(e.ins[1]):
                mark(e.outs[0])
        elif zero_tangent(prim) or flags.no_tangent or flags.tape or flags.accumulates:
            return  # (the tape's stack_alloc, an accumulator's zero_at: nothing made active)
        elif any(self.is_active(a) for a in self.derivative_inputs(e)):
            mark(*e.outs)

    def derivative_inputs(self, e: Eqn) -> list:
        """The inputs of ``e`` through which a tangent can flow (all float inputs of a
        primitive without a rule: one of them active means refusing it)."""
        rules = JVPS.get(e.prim)
        if rules is None or e.prim in JVPS_ALL:
            return [a for a in e.ins if _is_float(a)]
        return [a for k, a in enumerate(e.ins) if k < len(rules) and rules[k] is not None]

    # -- building ------------------------------------------------------------------------

    def run(self, returns: list[Atom]) -> tuple[Block, list[Atom]]:
        top = Block()
        self.gb.block = top
        for p in self.params:  # a parameter written in place without a seed: zeros
            if self.is_active(p) and self.tangent_var(p) not in self.seeds:
                self.zero(p)
        top.stmts += self.block(self.body).stmts
        self.gb.block = top
        outs = [self.tangent_atom(a) for a in returns]
        return top, outs

    def put(self, out, prim: str, ins: list, params=None):
        self.gb.block.stmts.append(Eqn(prim, [out] if isinstance(out, Var) else list(out or []),
                                       list(ins), dict(params or {}), self.gb.loc))

    def zero(self, v: Var) -> None:
        """``v``'s tangent is zero here (a value no seed reached, by a name that has one)."""
        t = self.tangent_var(v)
        if v.type.ndim:
            self.put(t, "zeros_like", [v])
        else:
            self.put(t, "assign", [Const(0.0)])

    def tangent_atom(self, a: Atom) -> Atom:
        """The tangent of an atom where the current block reads it (zeros if inactive)."""
        if self.is_active(a):
            return self.tangent_var(a)
        if isinstance(a, Var) and a.type.ndim:
            t = self.gb.new_var(Type("f", a.type.ndim))
            t.dims = dims_of(a)
            self.put(t, "zeros_like", [a])
            return t
        return Const(0.0)

    def block(self, b: Block) -> Block:
        out = Block()
        saved = self.gb.block
        self.gb.block = out
        try:
            for s in b.stmts:
                self.gb.loc = getattr(s, "loc", None)
                if isinstance(s, Eqn):
                    self.eqn(s)
                elif isinstance(s, If):
                    self.branch(s)
                elif isinstance(s, Repeat):
                    out.stmts.append(Repeat(s.trips, self.block(s.body), s.counter, s.note,
                                            s.parallel, s.low))
                else:
                    self.loop(s)
        finally:
            self.gb.block = saved
        return out

    def carried(self, carries: list[Carry]) -> list[Carry]:
        """The active carries (or merges) that need a tangent beside them: an array carried
        in place shares its tangent buffer with its initial value and needs none."""
        out = []
        for c in carries:
            if not self.is_active(c.var):
                continue
            if isinstance(c.init, Var) and self.key(c.init) is self.key(c.var) and (
                    not isinstance(c.update, Var) or self.key(c.update) is self.key(c.var)):
                continue
            out.append(c)
        return out

    def tangent_in(self, a: Atom, block: Block) -> Atom:
        """`tangent_atom` read at the end of ``block``."""
        saved = self.gb.block
        self.gb.block = block
        try:
            return self.tangent_atom(a)
        finally:
            self.gb.block = saved

    def branch(self, s: If) -> None:
        then, orelse = self.block(s.then), self.block(s.orelse)
        self.gb.loc = s.loc
        merges = [Carry(self.tangent_var(m.var), self.tangent_in(m.init, then),
                        self.tangent_in(m.update, orelse)) for m in self.carried(s.merges)]
        self.gb.block.stmts.append(If(s.cond, then, orelse, list(s.merges) + merges, s.loc))

    def loop(self, s) -> None:
        carried = self.carried(s.carries)
        inits = [self.tangent_atom(c.init) for c in carried]  # read before the loop
        cond_block = self.block(s.cond_block) if isinstance(s, While) else None
        body = self.block(s.body)
        self.gb.loc = s.loc
        carries = list(s.carries) + [
            Carry(self.tangent_var(c.var), init, self.tangent_in(c.update, body))
            for c, init in zip(carried, inits)]
        if isinstance(s, For):
            new = For(s.index, s.start, s.stop, s.step, body, carries, s.trips, s.exit_flag,
                      s.loc, s.note, s.parallel)
        else:
            new = While(cond_block, s.cond, body, carries, s.trips, s.loc, s.exit_flag)
        self.gb.block.stmts.append(new)

    # -- equations -----------------------------------------------------------------------

    def eqn(self, e: Eqn) -> None:
        prim = e.prim
        block = self.gb.block.stmts
        handler = _TAPE_AND_IN_PLACE.get(prim)
        if handler is not None:
            block.append(e)
            handler(self, e)
            return
        outs = [o for o in e.outs if self.is_active(o)]
        if not outs:
            block.append(e)
            return
        if len(e.outs) != 1:
            raise UnsupportedError(f"forward mode cannot differentiate {prim} (several results)",
                                   e.loc)
        out = e.out
        active_ins = [k for k, a in enumerate(e.ins) if self.is_active(a)]
        if zero_tangent(prim) or not active_ins:
            block.append(e)
            self.zero(out)
            return
        if prim == "assign":
            block.append(e)
            self.assign_tangent(out, self.tangent_var(e.ins[0]), fresh=False)
            return
        rules = JVPS.get(prim)
        if rules is None and prim not in JVPS_ALL:
            raise UnsupportedError(
                f"forward mode has no tangent rule for {_what(prim)}; its input has a "
                "derivative here, so jitgrad refuses rather than take it as zero", e.loc,
                "building the tangent (forward-mode) code")
        # an input the equation overwrites (``_b_x = _b_x * c``) is read by the rule as it was
        ins = list(e.ins)
        names = {o.name for o in e.outs}
        for k, a in enumerate(ins):
            if isinstance(a, Var) and a.name in names:
                before = self.gb.new_var(a.type, "_was_" + a.name.lstrip("_"))
                block.append(Eqn("assign", [before], [a], {}, e.loc))
                ins[k] = before
        block.append(e)
        start = len(block)
        values = [self.gb.sym(a) if isinstance(a, Var) else a.value for a in ins]
        ans = self.gb.sym(out)
        try:
            if prim in JVPS_ALL:
                ts = [self.gb.sym(self.tangent_var(a)) if k in active_ins else None
                      for k, a in enumerate(e.ins)]
                c = JVPS_ALL[prim](ts, ans, *values, **e.params)
            else:
                c = None
                for k in active_ins:
                    if k >= len(rules) or rules[k] is None:
                        continue
                    part = rules[k](self.gb.sym(self.tangent_var(e.ins[k])), ans, *values,
                                    **e.params)
                    c = part if c is None else c + part
        except UnsupportedError as err:
            if err.loc is None:
                raise UnsupportedError(err.message, e.loc,
                                       "building the tangent (forward-mode) code") from None
            raise
        made = {o for s in block[start:] for o in getattr(s, "outs", [])}
        spread = primitives.PRIMITIVES[prim].elementwise and _may_broadcast(
            out, [e.ins[k] for k in active_ins])
        self.fit(out, c, made, spread)

    def fit(self, out: Var, c, made: set[Var], spread: bool = False) -> None:
        """Assign the tangent ``c`` (a Sym, a number, or None for zero) to ``out``'s tangent,
        broadcast to ``out``'s shape where ``spread`` (an elementwise rule's tangent has the
        shape of its active inputs, which NumPy may broadcast); a tangent that is not new
        memory is copied when it or ``out`` is written in place."""
        if c is None:
            return self.zero(out)
        atom = self.gb.atom(c, check=False)
        if isinstance(atom, Const):
            if out.type.ndim:
                if atom.value == 0:
                    return self.zero(out)
                atom = self.gb.atom(primitives.broadcast_like(atom.value, self.gb.sym(out)), False)
            else:
                self.put(self.tangent_var(out), "assign", [Const(float(atom.value))])
                return None
        elif out.type.ndim and (spread or atom.type.ndim != out.type.ndim):
            atom = self.gb.atom(primitives.broadcast_like(self.gb.sym(atom), self.gb.sym(out)), False)
            made = made | {atom}
        self.assign_tangent(out, atom, fresh=atom in made)
        return None

    def assign_tangent(self, out: Var, atom: Atom, fresh: bool) -> None:
        t = self.tangent_var(out)
        if atom is t:
            return
        if out.type.ndim and not fresh and isinstance(atom, Var) and (
                self.memory.written(out) or atom not in self.owner
                or self.memory.written(self.owner[atom])):
            atom = self.gb.atom(primitives.copy(self.gb.sym(atom)), False)
        self.put(t, "assign", [atom])

    # -- in-place writes and stacks ------------------------------------------------------

    def setitem(self, e: Eqn) -> None:
        if not self.is_active(e.outs[0]):
            return
        x, v, idx = e.ins[0], e.ins[1], e.ins[2:]
        t = self.tangent_var(x)
        tv = self.tangent_var(v) if self.is_active(v) else Const(0.0)
        self.put(t, "setitem", [t, tv] + list(idx), e.params)

    def add_into(self, e: Eqn) -> None:  # iadd, add_at: target += value
        if self.is_active(e.ins[1]):
            t = self.tangent_var(e.ins[0])
            self.put(None, e.prim, [t, self.tangent_var(e.ins[1])] + list(e.ins[2:]), e.params)

    def zero_at(self, e: Eqn) -> None:
        if self.is_active(e.ins[0]):
            t = self.tangent_var(e.ins[0])
            self.put(None, "zero_at", [t] + list(e.ins[1:]), e.params)

    def twin(self, count: Var) -> Var:
        t = self.twin_count.get(count)
        if t is None:
            t = self.twin_count[count] = Var(self.namer.fresh("_d" + count.name), count.type)
        return t

    def stack_alloc(self, e: Eqn) -> None:
        tape, count = e.outs
        if self.is_active(tape):
            self.put([self.tangent_var(tape), self.twin(count)], "stack_alloc", list(e.ins),
                     dict(e.params, kind="f"))

    def push(self, e: Eqn) -> None:
        tape, count, v = e.ins
        if self.is_active(tape):
            self.put(None, "push", [self.tangent_var(tape), self.twin(count),
                                    self.tangent_atom(v)], e.params)

    def pop(self, e: Eqn) -> None:
        tape, count = e.ins
        if self.is_active(tape):
            self.put(self.tangent_var(e.outs[0]), "pop", [self.tangent_var(tape),
                                                          self.twin(count)], e.params)

    def reserve(self, e: Eqn) -> None:
        tape, count, trips = e.ins
        if self.is_active(tape):
            t = self.tangent_var(tape)
            self.put(t, "reserve", [t, self.twin(count), trips], e.params)

    def counter(self, e: Eqn) -> None:
        """A stack counter reset or ticked: its twin too, once the twin stack exists."""
        count = e.outs[0] if e.prim == "count_reset" else e.ins[0]
        twin = self.twin_count.get(count)
        if twin is not None:
            self.put(twin if e.prim == "count_reset" else None, e.prim,
                     [] if e.prim == "count_reset" else [twin], e.params)

    def parallel(self, e: Eqn) -> None:
        raise UnsupportedError("forward mode does not take parallel=True code", e.loc)


_TAPE_AND_IN_PLACE = {
    "setitem": _Forward.setitem, "iadd": _Forward.add_into, "add_at": _Forward.add_into,
    "zero_at": _Forward.zero_at, "stack_alloc": _Forward.stack_alloc, "push": _Forward.push,
    "pop": _Forward.pop, "reserve": _Forward.reserve, "count_reset": _Forward.counter,
    "count_tick": _Forward.counter,
}
for _name in ("chunk_count", "chunk_at", "parts_alloc", "parts_set", "parts_add", "parts_max"):
    _TAPE_AND_IN_PLACE[_name] = _Forward.parallel


def _may_broadcast(out: Var, ins: list) -> bool:
    """Whether an elementwise result may be larger than one of its active inputs ``ins``:
    a lower rank, or an axis of size 1 (or of a size not known to match) against the
    result's. Axes with the same size token, or tokens the builder assumed equal (checked
    when the call starts), match."""
    od = out.dims
    for a in ins:
        if a.type.ndim < out.type.ndim:
            return True
        if od is None:
            continue
        for x, y in zip(reversed(dims_of(a)), reversed(od)):
            if x != y and (x == 1 or (isinstance(y, tuple) and y[:1] == ("broadcast",))):
                return True
    return False


def _what(prim: str) -> str:
    if prim.startswith("custom_vjp"):
        return "a custom_vjp function (its rule is a VJP; JAX refuses jvp of one too)"
    return f"the operation {prim!r}"


def tangents(params: list[Var], body: Block, returns: list[Atom], seeds: list[Var],
             namer: Namer) -> tuple[Block, list[Var], list[Atom]]:
    """The tangent transform: ``(body, tangent parameters (one per seed), tangents of the
    returned atoms)``; the body computes the values and their tangents."""
    fw = _Forward(params, body, seeds, namer)
    new_body, outs = fw.run(returns)
    return new_body, fw.seeds, outs


__all__ = ["tangents"]
