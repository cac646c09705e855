"""The intermediate representation: flat typed equations in structured blocks.

A `Function` is a list of parameters, a `Block` of statements and a result. A statement is an
`Eqn` (one primitive applied to atoms, defining new variables), a `For`, a `While` or an `If`.
Within a block every variable is defined once (SSA); a value that changes across loop iterations
or branches is a `Carry`/merge variable of the structure, assigned at its entry and updated at
the end of each iteration or branch. Every statement carries the user's `Loc`.

Guarantees: names are unique within a function (the `Namer` hands them out deterministically);
`verify` checks that every variable is defined before use; `format_function` prints a compact,
typed, one-operation-per-line listing.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Union

from jitgrad.core import ops
from jitgrad.core.errors import Loc
from jitgrad.core.types import Type


@dataclasses.dataclass(eq=False)
class Var:
    name: str
    type: Type
    # For an array written in place, a variable that held its storage before (`setitem`
    # returns a new version of the same storage; a loop's carried array that the body only
    # writes in place is its initial value's storage); `root` follows the chain to the first.
    # None: the variable owns its storage.
    storage: Var | None = dataclasses.field(default=None, repr=False)
    # What is known of the sizes, one token per axis: an int (1 after keepdims, None indexing
    # or a literal), or a token shared by axes known to be equal. None: nothing is known.
    dims: tuple | None = dataclasses.field(default=None, repr=False)

    @property
    def root(self) -> Var:
        v = self
        while v.storage is not None:
            v = v.storage
        return v

    def __repr__(self) -> str:
        return self.name


@dataclasses.dataclass(frozen=True)
class Const:
    """A value known when jitgrad builds the graph: a number, a bool, None, or a tuple of them."""

    value: object

    @property
    def type(self) -> Type:
        v = self.value
        if isinstance(v, bool):
            return Type("b", 0)
        if isinstance(v, int):
            return Type("i", 0)
        return Type("f", 0)

    def __repr__(self) -> str:
        return repr(self.value)


Atom = Union[Var, Const]  # noqa: UP007 - a runtime alias, must work on Python 3.10


@dataclasses.dataclass(eq=False)
class Eqn:
    prim: str
    outs: list[Var]
    ins: list[Atom]
    params: dict
    loc: Loc | None

    @property
    def out(self) -> Var:
        return self.outs[0]


@dataclasses.dataclass(eq=False)
class Carry:
    """A variable carried through a loop or merged after a branch.

    For a loop: ``var`` takes ``init`` before the loop and ``update`` at the end of each
    iteration; after the loop ``var`` holds the last value. For an `If`: ``var`` takes ``init``
    (the value from the then-branch) or ``update`` (from the else-branch).
    """

    var: Var
    init: Atom
    update: Atom


@dataclasses.dataclass(eq=False)
class Block:
    stmts: list = dataclasses.field(default_factory=list)


class LoopPlan(enum.Enum):
    """How a top-level loop's adjoint gets the forward values it reads. The loop strategies
    (`transforms.recompute`, then `transforms.checkpoint`) choose it, later ones and
    `transforms.parallel` read it; the loop's ``note`` says it in the generated code."""

    TAPED = "taped"  # every iteration pushes what its adjoint reads; the adjoint pops it
    RECOMPUTED = "recomputed"  # iterations are independent: the adjoint recomputes each one
    FUSED = "fused"  # each iteration's adjoint runs right after it, in the forward pass
    NO_TAPE = "no tape"  # the adjoint rebuilds what it reads (nothing to save)
    CHECKPOINTED = "checkpointed"  # states saved per segment; each segment runs again


def plan_loop(loop, rep, plan: LoopPlan, note: str, reason: str | None = None) -> None:
    """Record the plan of a forward loop and of its adjoint ``Repeat``, with the comment the
    generated code shows on both and, for a taped loop, why it is taped."""
    for s in (loop, rep):
        s.plan, s.plan_reason, s.note = plan, reason, note


@dataclasses.dataclass(eq=False)
class For:
    """``for index in range(start, stop, step)``; exits early after an iteration where
    ``exit_flag`` (a carried bool) is true. ``trips`` counts the iterations run."""

    index: Var
    start: Atom
    stop: Atom
    step: Atom
    body: Block
    carries: list[Carry]
    trips: Var
    exit_flag: Atom | None
    loc: Loc | None
    note: str | None = None  # the generated code's comment on the loop (how it is reversed)
    parallel: bool = False  # written with numba.prange (run in parallel under parallel=True)
    plan: LoopPlan | None = None  # how its adjoint gets what it reads (`plan_loop`)
    plan_reason: str | None = None  # why it is taped (when it is)


@dataclasses.dataclass(eq=False)
class While:
    """``while cond``: ``cond_block`` computes ``cond`` from the carried values before each
    iteration; ``trips`` counts the iterations run."""

    cond_block: Block
    cond: Atom
    body: Block
    carries: list[Carry]
    trips: Var
    loc: Loc | None
    exit_flag: Atom | None = None


@dataclasses.dataclass(eq=False)
class If:
    cond: Atom
    then: Block
    orelse: Block
    merges: list[Carry]  # var = init if cond else update
    loc: Loc | None


@dataclasses.dataclass(eq=False)
class Repeat:
    """Adjoint code only: run ``body`` ``trips`` times (a loop's iterations, in reverse)."""

    trips: Atom
    body: Block
    counter: Var | None = None  # when set: counts the iterations down, trips-1 .. 0
    note: str | None = None  # the generated code's comment on the loop
    parallel: bool = False  # `parallel.py`: counter runs 0 .. trips-1 with numba.prange
    low: Atom | None = None  # with a counter: it stops at ``low`` (a checkpointed segment)
    ascending: bool = False  # the iterations commute: run low .. trips-1 (`recompute.commutes`)
    plan: LoopPlan | None = None  # its forward loop's plan (`plan_loop`)
    plan_reason: str | None = None


@dataclasses.dataclass(eq=False)
class Function:
    name: str
    params: list[Var]
    body: Block
    result: Atom
    loc: Loc | None
    namer: Namer | None = None  # the names handed out so far (the transform adds its own)
    # The array parameters the function writes into (copied on entry): (position, the user's
    # name). An argument passed twice, or sharing memory with another, must then be refused.
    written_params: tuple = ()
    # The jitgrad transforms called in the body (``jitgrad.grad(g)(x)``), grafted in as their
    # own IR (`graft`): a gradient's code is not SSA, so only forward mode takes this graph.
    grafted: tuple = ()
    # ``has_aux``: the function returns (value, aux); the aux tree's leaves (atoms) and its
    # structure (`pytree.structure`), returned beside the value, never differentiated.
    aux: list = dataclasses.field(default_factory=list)
    aux_structure: object = None
    # np.random draws in the body (`frontend.draws.DrawPlan`): made in Python before each call
    # and passed as the hidden parameters that end ``params``. None: no draws.
    draws: object = None


class Namer:
    """Deterministic fresh names that never clash with the user's own names.

    A user's variable keeps its name the first time (``h``); later versions and every generated
    name (``h_1``, ``_t3``, ``_b_h``) avoid both the names handed out and ``reserved``, the
    identifiers of the user's source.
    """

    def __init__(self, reserved=()):
        self.reserved: set[str] = set(reserved)
        self.used: set[str] = set()
        self.counters: dict[str, int] = {}

    def _taken(self, name: str) -> bool:
        return name in self.used or name in self.reserved

    def fresh(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        n = self.counters.get(base, 0)
        while True:
            n += 1
            name = f"{base}_{n}"
            if not self._taken(name):
                self.counters[base] = n
                self.used.add(name)
                return name

    def temp(self, prefix: str = "_t") -> str:
        n = self.counters.get(prefix, -1)
        while True:
            n += 1
            name = f"{prefix}{n}"
            if not self._taken(name):
                self.counters[prefix] = n
                self.used.add(name)
                return name


def dims_of(a) -> tuple:
    """Size tokens of an atom's axes; an axis nothing is known about gets its own token,
    ``(a, k)``: it holds the variable itself (compared by identity), not its ``id()``, which a
    later variable could reuse once ``a`` is dropped and so seem to have the same sizes."""
    if isinstance(a, Var):
        return a.dims if a.dims is not None else tuple((a, k) for k in range(a.type.ndim))
    return ()


def broadcast_dims(*dims: tuple) -> tuple:
    """The size tokens of a broadcast result (right-aligned, as NumPy broadcasts)."""
    ndim = max((len(d) for d in dims), default=0)
    out = []
    for k in range(ndim):
        size = 1
        for d in dims:
            j = k - (ndim - len(d))
            if j < 0 or d[j] == 1:
                continue
            size = d[j] if size in (1, d[j]) else ("broadcast", size, d[j])
        out.append(size)
    return tuple(out)


# ----------------------------------------------------------------------------- walking


def sub_blocks(stmt) -> list[Block]:
    if isinstance(stmt, (For, Repeat)):
        return [stmt.body]
    if isinstance(stmt, While):
        return [stmt.cond_block, stmt.body]
    if isinstance(stmt, If):
        return [stmt.then, stmt.orelse]
    return []


def defs(stmt) -> list[Var]:
    """Every variable a statement defines: an equation's outputs, the carried or merged values,
    a loop's trip count and index."""
    if isinstance(stmt, Eqn):
        return list(stmt.outs)
    if isinstance(stmt, If):
        return [m.var for m in stmt.merges]
    if isinstance(stmt, Repeat):
        return []
    out = [c.var for c in stmt.carries] + [stmt.trips]
    if isinstance(stmt, For):
        out.append(stmt.index)
    return out


def direct_uses(stmt) -> list[Atom]:
    """Atoms a statement reads itself: an equation's inputs; a loop's bounds, condition and exit
    flag; a branch's condition; the carried or merged values (not its blocks' equations)."""
    if isinstance(stmt, Eqn):
        return list(stmt.ins)
    out: list[Atom] = []
    if isinstance(stmt, For):
        out += [stmt.start, stmt.stop, stmt.step]
    if isinstance(stmt, (If, While)):
        out.append(stmt.cond)
    if isinstance(stmt, (For, While)) and stmt.exit_flag is not None:
        out.append(stmt.exit_flag)
    if isinstance(stmt, Repeat):
        out.append(stmt.trips)
        if stmt.low is not None:
            out.append(stmt.low)
    carries = stmt.merges if isinstance(stmt, If) else getattr(stmt, "carries", [])
    for c in carries:
        out += [c.init, c.update]
    return out


def used_atoms(stmt) -> list[Atom]:
    """Atoms a statement reads, its own blocks' reads included."""
    out = direct_uses(stmt)
    for b in sub_blocks(stmt):
        for s in b.stmts:
            out += used_atoms(s)
    return out


def walk(block: Block):
    """Every statement in a block, nested ones included, in program order."""
    for s in block.stmts:
        yield s
        for b in sub_blocks(s):
            yield from walk(b)


def replace_vars(block: Block, mapping: dict) -> None:
    """Replace variables (``var -> new atom``) everywhere in ``block``, in place: every read
    and every definition, loop bounds, indices, trip counts and carried values included."""
    def r(a):
        return mapping.get(a, a) if isinstance(a, Var) else a

    def carries(cs):
        for c in cs:
            c.var, c.init, c.update = r(c.var), r(c.init), r(c.update)

    for s in walk(block):
        if isinstance(s, Eqn):
            s.ins = [r(a) for a in s.ins]
            s.outs = [r(o) for o in s.outs]
        elif isinstance(s, If):
            s.cond = r(s.cond)
            carries(s.merges)
        elif isinstance(s, Repeat):
            s.trips, s.counter, s.low = r(s.trips), r(s.counter), r(s.low)
        else:
            carries(s.carries)
            s.trips = r(s.trips)
            s.exit_flag = r(s.exit_flag)
            if isinstance(s, For):
                s.start, s.stop, s.step, s.index = r(s.start), r(s.stop), r(s.step), r(s.index)
            else:
                s.cond = r(s.cond)




def graft(body: Block, returns: list, params: list[Var], replacements: list, namer: Namer):
    """Make another function's ``body`` part of this one, in place: its ``params`` replaced by
    ``replacements`` (atoms of this function) everywhere, their size tokens and storage
    included, and every other variable renamed by ``namer``. Returns the returned atoms with
    the replacements made."""
    mapping = dict(zip(params, replacements))
    replace_vars(body, mapping)
    keep = {id(a) for a in replacements if isinstance(a, Var)}

    def token(t):
        if isinstance(t, tuple) and len(t) == 2 and t[0] in mapping:
            new = mapping[t[0]]
            dims = dims_of(new) if isinstance(new, Var) else ()
            return dims[t[1]] if t[1] < len(dims) else t
        return mapping.get(t, t) if isinstance(t, Var) else t

    seen: set[int] = set()
    renamed: dict[str, str] = {}  # one name, one variable: every object of a name renamed alike
    for s in walk(body):
        atoms = defs(s) + used_atoms(s) + ([s.counter] if isinstance(s, Repeat) else [])
        for a in atoms:
            if not isinstance(a, Var) or id(a) in keep or id(a) in seen:
                continue
            seen.add(id(a))
            if a.name not in renamed:  # (a loop's carried value: its own object of the name)
                renamed[a.name] = namer.fresh(a.name)
            a.name = renamed[a.name]
            if a.storage is not None and a.storage in mapping:
                new = mapping[a.storage]
                a.storage = new if isinstance(new, Var) else None
            if a.dims is not None:
                a.dims = tuple(token(t) for t in a.dims)
    return [mapping.get(a, a) if isinstance(a, Var) else a for a in returns]


def bounds(s) -> list:
    """A loop's or branch's own reads other than its carried values."""
    out = [s.cond] if isinstance(s, (If, While)) else []
    if isinstance(s, For):
        out += [s.start, s.stop, s.step]
    if getattr(s, "exit_flag", None) is not None:
        out.append(s.exit_flag)
    return [a for a in out if isinstance(a, Var)]


def free_vars(block: Block) -> list[Var]:
    """Variables ``block`` reads that it does not define (in first-use order)."""
    defined = set()
    for s in walk(block):
        for v in defs(s):
            defined.add(v)
        if isinstance(s, For):
            defined.add(s.index)
    out, seen = [], set()
    for s in walk(block):
        for a in direct_uses(s):
            if isinstance(a, Var) and a not in defined and a not in seen:
                seen.add(a)
                out.append(a)
    return out


def clone(block: Block) -> Block:
    """The same statements, new objects (the variables are shared)."""
    out = []
    for s in block.stmts:
        if isinstance(s, Eqn):
            out.append(Eqn(s.prim, list(s.outs), list(s.ins), dict(s.params), s.loc))
        elif isinstance(s, For):
            out.append(For(s.index, s.start, s.stop, s.step, clone(s.body), copy_carries(s.carries),
                           s.trips, s.exit_flag, s.loc))
        elif isinstance(s, While):
            out.append(While(clone(s.cond_block), s.cond, clone(s.body), copy_carries(s.carries),
                             s.trips, s.loc, s.exit_flag))
        elif isinstance(s, If):
            out.append(If(s.cond, clone(s.then), clone(s.orelse), copy_carries(s.merges), s.loc))
        else:
            raise TypeError(f"cannot copy {type(s).__name__}")
    return Block(out)


def copy_carries(carries) -> list[Carry]:
    return [Carry(c.var, c.init, c.update) for c in carries]


def names_in(body: Block) -> set[str]:
    """Every variable name ``body`` defines or reads."""
    return {a.name for s in walk(body)
            for a in defs(s) + used_atoms(s) + ([s.counter] if isinstance(s, Repeat) else [])
            if isinstance(a, Var)}


class VarUnion:
    """A union-find over variables (hashed by identity, as the passes' other tables: an
    ``id()`` key outlives its variable when a pass drops it, and a new one may reuse it):
    the classes of arrays that may share memory, which `Storage`, `MayShare` and the contents
    pass (`transforms.contents`) each join by their own rules."""

    def __init__(self):
        self.parent: dict[Var, Var] = {}

    def find(self, v: Var) -> Var:
        while self.parent.get(v, v) is not v:
            v = self.parent[v]
        return v

    def union(self, a: Var, b: Var) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


class Storage(VarUnion):
    """The forward IR's variables that may share memory (views, in-place versions, carried
    and merged values); ``written(v)``: whether any version of ``v``'s memory is written in
    place."""

    def __init__(self, fn: Function):
        super().__init__()
        self.mutated: set[Var] = set()
        for s in walk(fn.body):
            if isinstance(s, Eqn):
                if (ops.flags(s.prim).shares_first_input and s.ins and isinstance(s.ins[0], Var)
                        and s.out.type.ndim):
                    self.union(s.out, s.ins[0])
            else:  # (a Repeat, a fused loop's adjoint inside the forward body, carries none)
                carries = s.merges if isinstance(s, If) else getattr(s, "carries", ())
                for c in carries:
                    if c.var.type.ndim:
                        for a in (c.init, c.update):
                            if isinstance(a, Var):
                                self.union(c.var, a)
        for s in walk(fn.body):
            if isinstance(s, Eqn) and s.prim == "setitem":
                self.mutated.add(self.find(s.out))

    def written(self, v: Var) -> bool:
        return v.type.ndim > 0 and self.find(v) in self.mutated


class MayShare(VarUnion):
    """Which arrays of a kernel's body may share memory: a union-find over views, versions,
    aliases (``assign``), carried and merged values and stacked arrays (conservative: the
    adjoint reassigns its names), and the classes an equation writes into (`setitem`, and the
    adjoint's `iadd`, `add_at`, `zero_at`). `Storage` is the forward IR's exact counterpart.
    Used by forward mode (what to copy) and `optimise.sums_in_registers` (what may alias)."""

    def __init__(self, body: Block):
        super().__init__()
        written = []
        for s in walk(body):
            if isinstance(s, Eqn):
                arrays = [a for a in list(s.outs) + list(s.ins)
                          if isinstance(a, Var) and a.type.ndim]
                flags = ops.flags(s.prim)
                if (flags.shares_first_input or flags.may_return_input) and len(arrays) > 1:
                    first = s.ins[0] if s.prim != "push" else s.ins[2]
                    for a in arrays:
                        if a is not first and isinstance(first, Var):
                            self.union(a, first)
                if flags.writes_into_first and isinstance(s.ins[0], Var):
                    written.append(s.ins[0])
            elif isinstance(s, (If, For, While)):
                for c in (s.merges if isinstance(s, If) else s.carries):
                    for a in (c.init, c.update):
                        if isinstance(a, Var) and c.var.type.ndim:
                            self.union(c.var, a)
        self.written_roots = {self.find(v) for v in written}

    def written(self, v: Var) -> bool:
        return self.find(v) in self.written_roots


def replace_atom(blocks, old: Var, new) -> None:
    """Every read of ``old`` in ``blocks`` (nested statements included) reads ``new``."""
    def sub(a):
        return new if a is old else a
    for b in blocks:
        for s in walk(b):
            if isinstance(s, Eqn):
                s.ins = [sub(a) for a in s.ins]
                continue
            for name in ("start", "stop", "step", "cond", "exit_flag"):
                if getattr(s, name, None) is not None:
                    setattr(s, name, sub(getattr(s, name)))
            for c in getattr(s, "carries", []) + getattr(s, "merges", []):
                c.init, c.update = sub(c.init), sub(c.update)

def holds_storage_of(value: Var, array: Var, blocks) -> bool:
    """Whether ``value``, made in ``blocks``, is ``array``'s own memory: a version written in
    place (``value.root``), or a value merged after an ``if`` or carried by an inner loop whose
    every source is. Such a value is what the caller's names for ``array`` see after a loop
    in a called function (the loop may write in place under a branch)."""
    sources: dict[Var, list] = {}
    for b in blocks:
        for s in walk(b):
            if isinstance(s, If):
                for m in s.merges:
                    sources[m.var] = [m.init, m.update]
            elif isinstance(s, (For, While)):
                for c in s.carries:
                    sources[c.var] = [c.init, c.update]
    seen: set[Var] = set()

    def holds(v) -> bool:
        if not isinstance(v, Var):
            return False
        v = v.root  # a version written in place is its first version's memory
        if v is array or v in seen:  # (an inner loop's carried value refers to itself)
            return True
        if v not in sources:
            return False
        seen.add(v)
        return all(holds(u) for u in sources[v])

    return holds(value)


# ----------------------------------------------------------------------------- verifier


def verify(fn: Function) -> None:
    """Raise AssertionError if a variable is used before it is defined or defined twice
    (twice is allowed in a graph with `Function.grafted` code)."""
    defined: set[Var] = set(fn.params)
    seen: set[Var] = set(defined)

    def define(v: Var):
        assert fn.grafted or v not in seen, f"{v.name} defined twice"
        seen.add(v)
        defined.add(v)

    def use(a: Atom, where: str):
        if isinstance(a, Var):
            assert a in defined, f"{a.name} used before definition in {where}"

    def block(b: Block, scope: set[Var]):
        nonlocal defined
        saved = defined
        defined = set(scope)
        for s in b.stmts:
            stmt(s)
        result = defined
        defined = saved
        return result

    def stmt(s):
        if isinstance(s, Eqn):
            for a in s.ins:
                use(a, s.prim)
            for o in s.outs:
                define(o)
            return
        if isinstance(s, If):
            use(s.cond, "if")
            t = block(s.then, defined)
            e = block(s.orelse, defined)
            for m in s.merges:
                if isinstance(m.init, Var):
                    assert m.init in t, f"{m.init.name} not defined in then-branch"
                if isinstance(m.update, Var):
                    assert m.update in e, f"{m.update.name} not defined in else-branch"
                define(m.var)
            return
        if isinstance(s, Repeat):  # a grafted gradient's adjoint loop (not SSA: no carries)
            for a in (s.trips, s.low):
                if a is not None:
                    use(a, "repeat")
            inner = set(defined)
            if s.counter is not None:
                seen.add(s.counter)
                inner.add(s.counter)
            defined.update(block(s.body, inner))
            return
        carries = s.carries
        for c in carries:
            use(c.init, "loop entry")
        inner = set(defined) | {c.var for c in carries}
        for c in carries:
            seen.add(c.var)
        if isinstance(s, For):
            for a in (s.start, s.stop, s.step):
                use(a, "range")
            inner.add(s.index)
            seen.add(s.index)
            body_defs = block(s.body, inner)
        else:
            cond_defs = block(s.cond_block, inner)
            assert not isinstance(s.cond, Var) or s.cond in cond_defs, "while condition"
            body_defs = block(s.body, cond_defs)
        for c in carries:
            if isinstance(c.update, Var):
                assert c.update in body_defs, f"{c.update.name} not defined in loop body"
            defined.add(c.var)
        define(s.trips)

    final = block(fn.body, defined)
    if isinstance(fn.result, Var):
        assert fn.result in final, "result undefined"


# ----------------------------------------------------------------------------- printer


def _fmt_params(params: dict) -> str:
    if not params:
        return ""
    items = ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "index_spec")
    if "index_spec" in params:
        items = ", ".join(x for x in (items, f"index={params['index_spec']}") if x)
    return f"[{items}]"


def equation_key(prim: str, ins: list, params: dict) -> tuple:
    """What makes two equations compute the same value: primitive, inputs (variables by
    identity, constants by type and value) and parameters (`optimise.common_subexpressions`,
    `GraphBuilder.sharing`)."""
    return (prim,
            tuple(("v", a) if isinstance(a, Var) else ("c", type(a.value).__name__, a.value)
                  for a in ins),
            tuple(sorted((k, repr(v)) for k, v in params.items())))


def format_block(block: Block, indent: int = 1) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    for s in block.stmts:
        if isinstance(s, Eqn):
            outs = ", ".join(f"{o.name}:{o.type}" for o in s.outs)
            ins = " ".join(repr(a) for a in s.ins)
            where = f"  # {s.loc.short()}" if s.loc else ""
            lhs = f"{outs} = " if outs else ""
            lines.append(f"{pad}{lhs}{s.prim}{_fmt_params(s.params)} {ins}".rstrip() + where)
        elif isinstance(s, If):
            merges = ", ".join(f"{m.var.name}={m.init!r}|{m.update!r}" for m in s.merges)
            lines.append(f"{pad}if {s.cond!r}:  # merges {merges or '-'}")
            lines += format_block(s.then, indent + 1)
            lines.append(f"{pad}else:")
            lines += format_block(s.orelse, indent + 1)
        elif isinstance(s, Repeat):
            counter = f" {s.counter.name} =" if s.counter is not None else ""
            lines.append(f"{pad}repeat{counter} {s.trips!r} times (reversed):")
            lines += format_block(s.body, indent + 1)
        else:
            carries = ", ".join(f"{c.var.name}={c.init!r}->{c.update!r}" for c in s.carries)
            if isinstance(s, For):
                head = f"for {s.index.name} in range({s.start!r}, {s.stop!r}, {s.step!r})"
                if s.exit_flag is not None:
                    head += f" until {s.exit_flag!r}"
                lines.append(f"{pad}{head}:  # carries {carries or '-'}; trips {s.trips.name}")
                lines += format_block(s.body, indent + 1)
            else:
                lines.append(f"{pad}while {s.cond!r}:  # carries {carries or '-'}; trips "
                             f"{s.trips.name}")
                lines += format_block(s.cond_block, indent + 2)
                lines.append(f"{pad}  do:")
                lines += format_block(s.body, indent + 2)
    return lines


def format_function(fn: Function) -> str:
    params = ", ".join(f"{p.name}:{p.type}" for p in fn.params)
    lines = [f"{{ lambda ; {params} . let"]
    lines += format_block(fn.body, 2)
    lines.append(f"  in ( {fn.result!r} ) }}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- kernels


@dataclasses.dataclass(eq=False)
class Kernel:
    """A function to emit: parameters, body, the atoms it returns."""

    name: str
    params: list[Var]
    body: Block
    returns: list[Atom]
    loc: Loc | None = None
    aux: list = dataclasses.field(default_factory=list)  # returned too (a forward's `Function.aux`)


@dataclasses.dataclass(eq=False)
class Gradient:
    """What the transform produces: two kernels and how they fit together."""

    forward: Kernel  # returns (value, *saved)
    adjoint: Kernel  # takes (*params, *saved); returns the gradients of wrt
    fn: Function
    wrt: list[int]
    repeats: dict = dataclasses.field(default_factory=dict)  # forward loop -> its Repeat
