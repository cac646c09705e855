"""Named passes over the transformed kernels, run in a declared order.

Takes a `reverse.Gradient`; guarantees each pass keeps the values the kernels return and every
side effect (in-place writes, tape pushes and pops), and only removes or simplifies the rest.

Passes, in order:
* ``filled_products`` (`transforms.filled`): a matrix product by an array filled with one
  number (the cotangent of ``np.sum``) is a reduction of the other operand.
* ``dead_code``: drops equations whose results nothing reads (shape reads the builder made
  eagerly, branches of a rule that turned out zero, forward values the adjoint never needs).
* ``unread_contents`` (`transforms.contents`, on the forward kernel): writes whose contents
  neither the value nor the adjoint reads afterwards go, and a product or elementwise result
  read only for its shape is an ``empty`` array of its sizes (covariance's forward loop of
  products under ``jitgrad.grad``, whose ``cov`` the adjoint reads the shape of).
* ``copies_of_unread``: a copy of an array the kernel owns and nothing reads afterwards is the
  array itself.
* ``copies_of_unwritten`` (`transforms.unwritten`, on the forward kernel): a copy of an array
  that nothing writes (neither it nor the copy, nor the adjoint what is handed to it) is the
  array itself.
* ``dead_writes``: a full overwrite (``C[:] = ...``) of an array that nothing reads afterwards
  but views of it and more such writes (not an argument, not returned, not saved), with the
  value it writes (NPBench's ``C[:] = alpha * A @ B + beta * C`` under ``jitgrad.grad``: the
  forward product).
* ``common_subexpressions`` (on the forward IR, before the transform): computes a repeated
  operation once.
* ``fold_assigns``: writes a temporary's operation straight into the adjoint it is assigned to.
* ``sums_in_registers``: an adjoint loop that adds into one element of an array at an index
  the loop does not change adds into a scalar, added into the element after the loop.
* ``invariant_reads_hoisted``: an adjoint loop's read of an element that no iteration changes,
  and the numbers computed from it, are made once, before the loop, if the loop runs (under
  names of their own, set to zero if it does not, when nothing after the loop reads them).
* ``unused_saved``: a saved value the adjoint no longer reads (a fused loop's adjoint ran in
  the forward pass) is neither returned by the forward kernel nor passed to the adjoint.

``adds_in_place`` (`transforms.in_place`) runs after these, on the adjoint alone.
"""

from __future__ import annotations

from jitgrad.core import ops
from jitgrad.core.ir import (
    Block,
    Carry,
    Const,
    Eqn,
    If,
    MayShare,
    Namer,
    Repeat,
    Storage,
    Var,
    defs,
    dims_of,
    direct_uses,
    equation_key,
    replace_vars,
    sub_blocks,
    walk,
)
from jitgrad.core.types import BOOL, FLOAT
from jitgrad.transforms.contents import shape_only_saved, unread_contents
from jitgrad.transforms.filled import filled_products
from jitgrad.transforms.passes import GradientWork, Pass
from jitgrad.transforms.unwritten import copies_of_unwritten

# (``loop_index`` and ``assign`` in an adjoint prologue define values; they are pure.)


def dead_code(block: Block, live_out: set[Var]) -> None:
    """Remove pure equations whose outputs are not live, to a fixed point."""
    while _prune(block, _live_uses(block, set(live_out))):
        pass


def dead_writes(block: Block, live_out: set[Var], params: list[Var]) -> bool:
    """Drop the writes into arrays nothing reads (module docstring), then the dead code they
    leave; say whether any went. A ``setitem`` of the whole array (``x[:] = v``, ``v`` a
    number or of ``x``'s sizes by `dims_of`: a write that could raise, at a bad index or
    shape, is kept) goes when no member of ``x``'s alias class (`MayShare`) is a parameter or
    live once such writes are gone: liveness marked back from ``live_out``, the effects and
    the loops' and branches' own reads, to a fixed point, a class whose member turns out live
    keeping its writes (and what they read) in the next round."""
    alias = MayShare(block)
    stmts = list(walk(block))
    writes: dict[Var, list] = {}
    for s in stmts:
        if isinstance(s, Eqn) and s.prim == "setitem" and isinstance(s.ins[0], Var) and _whole(
                s, s.ins[0]):
            writes.setdefault(alias.find(s.ins[0]), []).append(s)
    kept = {alias.find(v) for v in list(live_out) + list(params)
            if isinstance(v, Var) and v.type.ndim}
    candidates = set(writes) - kept
    while candidates:
        removed = {id(e) for r in candidates for e in writes[r]}
        live = _marked_live(stmts, live_out, removed)
        bad = {alias.find(v) for v in live if v.type.ndim} & candidates
        if not bad:
            break
        candidates -= bad
    if not candidates:
        return False
    _drop_eqns(block, {id(e) for r in candidates for e in writes[r]})
    dead_code(block, live_out)
    return True


def _marked_live(stmts: list, live_out: set[Var], removed: set[int]) -> set[Var]:
    """The variables live back from ``live_out``, every effect's inputs and every loop's or
    branch's own reads, the equations in ``removed`` left out (flow-insensitive)."""
    live = {v for v in live_out if isinstance(v, Var)}
    changed = True
    while changed:
        changed = False
        for s in reversed(stmts):
            if isinstance(s, Eqn):
                if id(s) in removed or not (ops.flags(s.prim).effects
                                            or any(o in live for o in s.outs)):
                    continue
                uses = s.ins
            else:
                uses = direct_uses(s)
            for a in uses:
                if isinstance(a, Var) and a not in live:
                    live.add(a)
                    changed = True
    return live


def _whole(e: Eqn, x: Var) -> bool:
    """``x[:] = v`` (every item ``':'``), ``v`` a number or of ``x``'s sizes."""
    spec = e.params.get("index_spec")
    if not spec or any(item != ":" for item in spec) or len(spec) > x.type.ndim:
        return False
    v = e.ins[1]
    return isinstance(v, Const) or (isinstance(v, Var) and (
        v.type.ndim == 0 or dims_of(v) == dims_of(x)))


def _drop_eqns(block: Block, drop: set[int]) -> None:
    block.stmts[:] = [s for s in block.stmts if id(s) not in drop]
    for s in block.stmts:
        for sb in sub_blocks(s):
            _drop_eqns(sb, drop)


def _live_uses(block: Block, live: set[Var]) -> set[Var]:
    """Every variable used anywhere (conservative across loops and branches)."""
    for s in block.stmts:
        for a in direct_uses(s):
            if isinstance(a, Var):
                live.add(a)
        for sb in sub_blocks(s):
            _live_uses(sb, live)
    return live


def _prune(block: Block, live: set[Var]) -> bool:
    """Drop pure equations whose results are not live; say whether any went."""
    removed = False
    keep = []
    for s in block.stmts:
        if isinstance(s, Eqn) and not ops.flags(s.prim).effects and s.outs and not any(
                o in live for o in s.outs):
            removed = True
            continue
        for sb in sub_blocks(s):
            removed |= _prune(sb, live)
        keep.append(s)
    block.stmts[:] = keep
    return removed


def fold_assigns(block: Block, returned: set[Var]) -> None:
    """``_t1 = x * 2.0`` followed by ``_b_x = _t1`` becomes ``_b_x = x * 2.0`` when nothing
    else reads ``_t1``."""
    counts: dict[Var, int] = {}

    def count(b: Block):
        for s in b.stmts:
            for a in direct_uses(s):
                if isinstance(a, Var):
                    counts[a] = counts.get(a, 0) + 1
            for sb in sub_blocks(s):
                count(sb)
    count(block)

    def fold(b: Block):
        keep = []
        for s in b.stmts:
            for sb in sub_blocks(s):
                fold(sb)
            if (isinstance(s, Eqn) and s.prim == "assign" and keep and isinstance(keep[-1], Eqn)
                    and isinstance(s.ins[0], Var) and keep[-1].outs
                    and keep[-1].outs[0] is s.ins[0] and len(keep[-1].outs) == 1
                    and s.ins[0].name.startswith("_t") and counts.get(s.ins[0]) == 1
                    and s.ins[0] not in returned and not ops.flags(keep[-1].prim).effects
                    and s.outs[0] not in keep[-1].ins):
                prev = keep[-1]
                keep[-1] = Eqn(prev.prim, [s.outs[0]], prev.ins, prev.params, prev.loc)
                continue
            keep.append(s)
        b.stmts[:] = keep
    fold(block)


def _never_shared(prim: str) -> bool:
    """Equations common_subexpressions never merges: effects, fresh buffers (each is its own
    memory), and what the builder places on purpose (``never_merged``: copies, trip counts)."""
    flags = ops.flags(prim)
    return flags.effects or flags.buffer or flags.never_merged


def common_subexpressions(fn) -> None:
    """An equation repeating an earlier one (same primitive, inputs and parameters, in the same
    block or an enclosing one) reuses its result: the user who writes ``np.exp(z)`` twice gets
    it computed, and differentiated, once. Runs on the forward IR (SSA) before the transform.
    An array whose memory is written in place is not shared: ``a = np.square(x)`` written into
    and a later ``np.square(x)`` are two arrays."""
    replace: dict[Var, Var] = {}
    storage = Storage(fn)

    def sub(a):
        return replace.get(a, a) if isinstance(a, Var) else a

    def block(b: Block, seen: dict):
        seen = dict(seen)
        keep = []
        for s in b.stmts:
            if isinstance(s, Eqn):
                _substitute(s, sub)
            if (isinstance(s, Eqn) and len(s.outs) == 1 and not _never_shared(s.prim)
                    and not storage.written(s.out)):
                key = equation_key(s.prim, s.ins, s.params)
                if key in seen:
                    replace[s.out] = seen[key]
                    continue
                seen[key] = s.out
            for sb in sub_blocks(s):
                block(sb, seen)
            if not isinstance(s, Eqn):
                _substitute(s, sub)  # after its blocks: carried updates name values inside them
            keep.append(s)
        b.stmts[:] = keep
    block(fn.body, {})
    fn.result = sub(fn.result)
    fn.aux = [sub(a) for a in fn.aux]


def scalars_out_of_products(fn) -> None:
    """``(s * A) @ x`` becomes ``s * (A @ x)`` (a matrix scaled by a number, times a vector on
    either side: the result is smaller than the matrix) when nothing else reads the scaled
    matrix ``s * A`` and nothing writes into it: the
    number scales the product's result instead of a copy of the matrix (NPBench's gesummv,
    ``alpha * A @ x``: a pass writing and one reading a matrix fewer, in the forward pass and
    in the adjoint's ``(s * A).T @ g``). Runs on the forward IR (SSA) before the transform.
    The result differs from NumPy's by rounding (the products are the same sums, scaled after
    summing), as XLA's algebraic simplifier does the same."""
    from jitgrad.core.ir import Var as _Var  # (the module's name is in use for the class)

    uses: dict[Var, int] = {}
    for s in walk(fn.body):
        for a in direct_uses(s):
            if isinstance(a, _Var):
                uses[a] = uses.get(a, 0) + 1
    for a in [fn.result] + list(fn.aux):
        if isinstance(a, _Var):
            uses[a] = uses.get(a, 0) + 2
    storage = Storage(fn)

    def scaled(e, made: dict):
        """(the number, the array) when ``e`` is ``s * A`` made in this block, else None."""
        if not (isinstance(e, _Var) and e in made and uses.get(e) == 1
                and not storage.written(e) and e.type.kind == "f"):
            return None
        m = made[e]
        if m.prim != "mul" or len(m.ins) != 2:
            return None
        a, b = m.ins
        for number, array in ((a, b), (b, a)):
            if (not number.type.ndim and number.type.kind in ("f", "i")
                    and isinstance(array, _Var) and array.type.ndim == e.type.ndim == 2
                    and array.type.kind == "f" and dims_of(array) == dims_of(e)):
                return number, array, m
        return None

    def block(b: Block):
        made: dict = {}
        out = []
        for s in b.stmts:
            for sb in sub_blocks(s):
                block(sb)
            if (isinstance(s, Eqn) and s.prim == "matmul" and len(s.ins) == 2 and len(s.outs) == 1
                    and s.out.type.kind == "f" and s.out.type.ndim == 1):
                for k in (0, 1):
                    found = scaled(s.ins[k], made)
                    if found is None:
                        continue
                    number, array, m = found
                    out.remove(m)
                    product = _Var(fn.namer.temp(), s.out.type, dims=s.out.dims)
                    ins = list(s.ins)
                    ins[k] = array
                    out.append(Eqn("matmul", [product], ins, dict(s.params), s.loc))
                    s = Eqn("mul", [s.out], [number, product], {}, s.loc)
                    break
            if isinstance(s, Eqn) and len(s.outs) == 1:
                made[s.out] = s
            out.append(s)
        b.stmts[:] = out
    block(fn.body)


def _substitute(s, sub) -> None:
    if isinstance(s, Eqn):
        s.ins = [sub(a) for a in s.ins]
        return
    for name in ("start", "stop", "step", "cond", "exit_flag", "trips"):
        if hasattr(s, name) and getattr(s, name) is not None and not (
                name == "trips" and not isinstance(s, Repeat)):
            setattr(s, name, sub(getattr(s, name)))
    carries = s.merges if isinstance(s, If) else getattr(s, "carries", [])
    for c in carries:
        c.init, c.update = sub(c.init), sub(c.update)


def unused_saved(grad) -> None:
    """Drop the saved values (the forward kernel's returns after the value, the adjoint's
    parameters after the function's own, in the same order) that the adjoint never reads."""
    n = len(grad.fn.params)
    saved = grad.adjoint.params[n:n + len(grad.forward.returns) - 1]
    used = {a for a in grad.adjoint.returns if isinstance(a, Var)}
    _live_uses(grad.adjoint.body, used)
    keep = [k for k, v in enumerate(saved) if v in used]
    if len(keep) == len(saved):
        return
    grad.forward.returns[1:] = [grad.forward.returns[1 + k] for k in keep]
    grad.adjoint.params[n:n + len(saved)] = [saved[k] for k in keep]


def optimise(grad, value_needed: bool = True) -> None:
    """Run the passes in order on both kernels (the adjoint first: what it no longer reads,
    the forward kernel need not compute). Without ``value_needed`` (`jitgrad.grad`, whose
    caller gets the gradients alone), the function's value is not live: of a linear
    function (NPBench's ``np.sum(A @ x @ A)``) the forward pass computes no product at all."""
    for kernel in (grad.adjoint, grad.forward):
        returns = kernel.returns if value_needed or kernel is grad.adjoint else kernel.returns[1:]
        live = {a for a in returns + kernel.aux if isinstance(a, Var)}
        filled_products(kernel.body, grad.fn.namer, kernel.params)
        dead_code(kernel.body, live)
        if kernel is grad.forward:  # (`contents`: what the adjoint reads only the shape of)
            n = len(grad.fn.params)
            shapes = shape_only_saved(grad.adjoint.body, grad.adjoint.params[n:])
            kept = {r for r, p in zip(kernel.returns[1:], grad.adjoint.params[n:]) if p in shapes}
            kept -= set(kernel.returns[:1] if value_needed else ()) | set(kernel.aux)
            if unread_contents(kernel.body, returns + kernel.aux, kept, kernel.params,
                               grad.fn.namer):
                dead_code(kernel.body, live)
        copies_of_unread(kernel.body, live, kernel.params)
        if kernel is grad.forward:
            copies_of_unwritten(grad, value_needed)
            dead_writes(kernel.body, live, kernel.params)
        fold_assigns(kernel.body, live)
        sums_in_registers(kernel.body, kernel.params, grad.fn.namer)
        invariant_reads_hoisted(kernel.body, grad.fn.namer, kernel.returns + kernel.aux)
        if kernel is grad.adjoint:
            unused_saved(grad)


def _optimise(work: GradientWork) -> None:
    optimise(work.gradient, work.value_needed)


OPTIMISE = Pass("optimise", _optimise, reads=("gradient",), writes=(), needs=("kernels",))


def copies_of_unread(body: Block, live: set[Var], params: list[Var]) -> None:
    """``y = copy(x)`` at the kernel's top level becomes ``y = x`` (nothing, for ``x = copy(x)``)
    when nothing reads x's memory afterwards: no other name that may share it
    (`core.ir.MayShare`) is read after the copy or returned (but ``y``), none is passed in,
    and every name in its class is an equation's result, none a view nor a constant's
    read-only array (so the memory is an array the kernel made and owns). The reverse transform copies an adjoint it does not own
    before adding into it in place (``_b_a = _b_a.copy()``); once the owner is gone (NPBench's
    go_fast: the cotangent of ``np.sum``, summed by `filled_products`), the copy is a fresh
    array and a pass over memory for nothing."""
    alias = MayShare(body)
    group: dict[Var, set] = {}
    made_by_view = set()
    for s in walk(body):
        for a in direct_uses(s) + defs(s):
            if isinstance(a, Var) and a.type.ndim:
                group.setdefault(alias.find(a), set()).add(a)
        flags = ops.flags(s.prim) if isinstance(s, Eqn) else None
        from_nowhere = flags is not None and not makes_fresh_array(s) and not any(
            isinstance(a, Var) and a.type.ndim for a in s.ins)  # a constant's frozen memory
        for v in defs(s):
            if (flags is None or flags.view or flags.view_if_contiguous or flags.read_only_view
                    or from_nowhere):
                made_by_view.add(alias.find(v))
    passed = {alias.find(v) for v in params if v.type.ndim}
    for k, s in enumerate(body.stmts):
        if not (isinstance(s, Eqn) and s.prim == "copy" and isinstance(s.ins[0], Var)
                and s.ins[0].type.ndim and len(s.outs) == 1):
            continue
        root = alias.find(s.ins[0])
        if root in passed or root in made_by_view:
            continue
        others = group.get(root, set()) - {s.outs[0]}
        if others & live or any(isinstance(a, Var) and a in others
               for t in walk(Block(body.stmts[k + 1:])) for a in direct_uses(t)):
            continue
        body.stmts[k] = None if s.outs[0] is s.ins[0] else Eqn("assign", list(s.outs),
                                                                  list(s.ins), {}, s.loc)
    body.stmts[:] = [s for s in body.stmts if s is not None]


def makes_fresh_array(e: Eqn) -> bool:
    """Whether ``e``'s one result is a new array of its own (never an input's memory)."""
    from jitgrad.prims.primitive import PRIMITIVES

    flags = ops.flags(e.prim)
    if (len(e.outs) != 1 or not e.outs[0].type.ndim or flags.effects or flags.view
            or flags.view_if_contiguous or flags.read_only_view or flags.writes_into_first
            or flags.may_return_input or flags.same_value):
        return False
    row = PRIMITIVES.get(e.prim)
    return bool((row is not None and row.elementwise) or flags.outer_of or flags.contracts
                or flags.allocates)


def sums_in_registers(body: Block, params: list[Var], namer: Namer) -> None:
    """An adjoint loop that adds into one element of an array at an index it does not change
    (``_b_xc[c] += u`` in the loop over ``r`` of ADBench's ``out[r] += L[idx] * x[c]``) adds
    into a scalar instead (``_sum = _sum + u``), which goes into the element after the loop,
    if the loop ran (its index may be out of range otherwise). Numba cannot do this itself:
    it does not know that the loop's other writes (``_g_icf[k, idx] += ...``) never reach that
    element, so it loads and stores the element every iteration and leaves the loop scalar.

    Taken only when nothing in the loop reads or writes the array otherwise, under any name
    that may share its memory (`core.ir.MayShare`: a view, an assignment, a carried value),
    the array is not a kernel parameter (the caller could pass it twice), and the loop is not
    a parallel one.
    The sum is added in a different order (the loop's terms first), as a compiler reassociates
    a reduction."""
    alias = MayShare(body)
    passed = {alias.find(p) for p in params if p.type.ndim}
    _registers_in(body, alias, passed, namer)


def _registers_in(block: Block, alias: MayShare, passed: set, namer: Namer) -> None:
    out = []
    for s in block.stmts:
        for sb in sub_blocks(s):
            _registers_in(sb, alias, passed, namer)
        if not isinstance(s, Repeat) or s.parallel:
            out.append(s)
            continue
        inside: set[Var] = {s.counter} if s.counter is not None else set()
        arrays: dict[Var, int] = {}  # alias class -> references in the loop
        for t in walk(s.body):
            inside.update(defs(t))
            for a in direct_uses(t) + defs(t):
                if isinstance(a, Var) and a.type.ndim:
                    arrays[alias.find(a)] = arrays.get(alias.find(a), 0) + 1
        after = []
        for k, e in enumerate(s.body.stmts):
            if not (isinstance(e, Eqn) and e.prim == "add_at" and isinstance(e.ins[0], Var)
                    and not e.ins[1].type.ndim
                    and _one_element(e.params["index_spec"], e.ins[0])
                    and all(not (isinstance(a, Var) and a in inside) for a in e.ins[2:])):
                continue
            root = alias.find(e.ins[0])
            if root in passed or arrays.get(root) != 1:
                continue
            total = Var(namer.fresh("_sum_" + e.ins[0].name.lstrip("_")), FLOAT)
            out.append(Eqn("assign", [total], [Const(0.0)], {}, e.loc))
            s.body.stmts[k] = Eqn("add", [total], [total, e.ins[1]], {}, e.loc)
            once = Eqn("add_at", [], [e.ins[0], total] + e.ins[2:], dict(e.params), e.loc)
            low = s.low if s.low is not None else Const(0)
            if isinstance(s.trips, Const) and isinstance(low, Const) and s.trips.value > low.value:
                after.append(once)
                continue
            ran = Var(namer.fresh("_ran"), BOOL)
            after.append(Eqn("gt", [ran], [s.trips, low], {}, e.loc))
            after.append(If(ran, Block([once]), Block([]), [], e.loc))
        out.append(s)
        out += after
    block.stmts[:] = out


def invariant_reads_hoisted(body: Block, namer: Namer, returns=()) -> None:
    """An adjoint loop that reads the same element every iteration (``xc[c]`` in the loop over
    ``r`` of the adjoint of ADBench's ``qxc[r] += icf[k, idx] * xc[c]``), or computes the same
    number from such values (``np.cos(x[c])``), does it once, before the loop, under ``if`` the
    loop runs (the index may be out of range otherwise; the name keeps the value it had when
    it does not, as before). Numba cannot do it: the loop's writes (``_g_icf[k, idx] += ...``)
    might reach the element as far as it knows, so it loads it again every iteration.

    A hoisted value that nothing reads after the loop (`_live_after`) then takes a name of its
    own, which the ``else`` of that ``if`` sets to zero (read by nothing: the loop does not
    run). A name that one side of an ``if`` defines and the other not costs Numba's type
    inference dearly in a loop nest, where its SSA pass merges the undefined value into every
    loop head the name reaches: in the bench's ``conv2d`` gradient one such name took 0.03 s of
    0.09 s of typing (the compile: 0.40 s, 0.36 s with the name defined on both sides).

    Taken, in order, for the equations at the top of the loop's body that `_invariant` accepts:
    a float read at integer indices of an array that nothing in the loop writes into, under any
    name that may share its memory (`core.ir.MayShare`), or a pure operation on numbers; with
    every input defined outside the loop (or by an equation hoisted before it), its name defined
    once in the loop and not read in it before; the loop neither parallel nor checkpointed, nor
    at the kernel's top level (`parallel.parallelise`, which runs after, splits those)."""
    alias = MayShare(body)
    hoists: list = []  # (the `if` of the hoisted values, their loop, the block holding both)
    for s in body.stmts:  # a top-level loop may be split into parallel chunks later: not it
        for sb in sub_blocks(s):
            _hoist_in(sb, alias, namer, hoists)
    if hoists:
        _own_names(body, hoists, returns, namer)


def _hoist_in(block: Block, alias: MayShare, namer: Namer, hoists: list) -> None:
    out: list = []
    for s in block.stmts:
        for sb in sub_blocks(s):
            _hoist_in(sb, alias, namer, hoists)
        if isinstance(s, Repeat) and not s.parallel and s.low is None:
            made = _hoisted_reads(s, alias, namer)
            if made:
                hoists.append((made[-1], s, block))
            out += made
        out.append(s)
    block.stmts[:] = out


def _own_names(body: Block, hoists: list, returns, namer: Namer) -> None:
    """Each hoisted value that nothing reads after its loop: a fresh name in its ``if`` and
    its loop, set to zero in the ``else`` (see `invariant_reads_hoisted`)."""
    parent: dict[int, tuple] = {}  # id(block) -> (the statement holding it, that one's block)

    def index(block):
        for s in block.stmts:
            for b in sub_blocks(s):
                parent[id(b)] = (s, block)
                index(b)

    index(body)
    covers: dict[Var, set[int]] = {}  # value -> ids of the loops whose reads its hoists make
    for branch, rep, _ in hoists:
        for e in branch.then.stmts:
            covers.setdefault(e.out, set()).add(id(rep))
    scan = _Liveness(parent, {id(b) for b, _, _ in hoists}, covers, returns)
    for branch, rep, block in hoists:
        own = {e.out: Var(namer.fresh(e.out.name), e.out.type, dims=e.out.dims)
               for e in branch.then.stmts if not scan.live_after(rep, block, e.out)}
        if not own:
            continue
        replace_vars(Block([branch, rep]), own)
        branch.orelse.stmts += [Eqn("assign", [v], [Const(_ZERO[v.type.kind])], {}, branch.loc)
                                for v in own.values()]


_ZERO = {"f": 0.0, "i": 0, "b": False}  # by a scalar type's kind


class _Liveness:
    """Whether a hoisted value may be read after its loop, before a statement that surely
    defines it again. Conservative: a read anywhere inside a nested statement counts; only a
    top-level equation, or an ``if`` whose both sides do, defines surely. A loop whose values
    are hoisted reads them from its own hoist (``covers``), not from an earlier one."""

    def __init__(self, parent: dict, hoist_ifs: set, covers: dict, returns):
        self.parent, self.hoist_ifs, self.covers = parent, hoist_ifs, covers
        self.returns = [a for a in returns if isinstance(a, Var)]

    def live_after(self, stmt, block: Block, v: Var) -> bool:
        while True:
            k = next(i for i, s in enumerate(block.stmts) if s is stmt)
            found = self.first(block.stmts[k + 1:], v)
            if found is not None:
                return found == "read"
            up = self.parent.get(id(block))
            if up is None:  # the kernel's end
                return any(a is v for a in self.returns)
            holder, outer = up
            if self._reads(direct_uses(holder), v):  # carried, merged, bounds
                return True
            if not isinstance(holder, If) and any(  # the next iteration
                    self.first(b.stmts, v) == "read" for b in sub_blocks(holder)):
                return True
            stmt, block = holder, outer

    def first(self, stmts, v: Var) -> str | None:
        """``"read"`` if ``stmts`` may read ``v`` before surely defining it, ``"def"`` if
        they surely define it first, None if neither."""
        for s in stmts:
            if isinstance(s, Eqn):
                if self._reads(s.ins, v):
                    return "read"
                if any(o is v for o in s.outs):
                    return "def"
                continue
            if isinstance(s, If):
                uses = [s.cond] if id(s) in self.hoist_ifs else direct_uses(s)
                sides = [self.first(s.then.stmts, v), self.first(s.orelse.stmts, v)]
                if self._reads(uses, v) or "read" in sides:
                    return "read"
                if sides == ["def", "def"] or any(c.var is v for c in s.merges):
                    return "def"
                continue
            if self._reads(direct_uses(s), v):
                return "read"
            if not (isinstance(s, Repeat) and id(s) in self.covers.get(v, ())) and any(
                    self.first(b.stmts, v) == "read" for b in sub_blocks(s)):
                return "read"
            if any(c.var is v for c in getattr(s, "carries", ())):
                return "def"
        return None

    @staticmethod
    def _reads(atoms, v: Var) -> bool:
        return any(a is v for a in atoms)


def _hoisted_reads(rep: Repeat, alias: MayShare, namer: Namer) -> list:
    stmts = list(walk(rep.body))
    defined: dict[Var, int] = {rep.counter: 1} if rep.counter is not None else {}
    written: set[Var] = set()
    for t in stmts:
        for v in defs(t):
            defined[v] = defined.get(v, 0) + 1
        if isinstance(t, Eqn):
            flags = ops.flags(t.prim)
            if flags.writes_into_first and isinstance(t.ins[0], Var):
                written.add(alias.find(t.ins[0]))
            if flags.tape or (flags.effects and not flags.writes_into_first):
                written.update(alias.find(a) for a in list(t.ins) + list(t.outs)
                               if isinstance(a, Var) and a.type.ndim)
        elif not isinstance(t, Repeat):  # carried or merged arrays: a new version each time
            for a in direct_uses(t) + defs(t):
                if isinstance(a, Var) and a.type.ndim:
                    written.add(alias.find(a))
    hoisted: list[Eqn] = []
    made: set[Var] = set()  # the names the hoisted equations define
    read_so_far: set[Var] = set()
    for e in list(rep.body.stmts):
        if _invariant(e, defined, made, written, alias) and not any(
                o in read_so_far for o in e.outs):
            rep.body.stmts.remove(e)
            hoisted.append(e)
            made.update(e.outs)
            continue
        for t in walk(Block([e])):
            read_so_far.update(a for a in direct_uses(t) if isinstance(a, Var))
    if not hoisted:
        return []
    if not rep.body.stmts:  # nothing would be left to repeat: leave the loop as it was
        rep.body.stmts[:] = hoisted
        return []
    ran = Var(namer.fresh("_runs"), BOOL)
    merges = [Carry(e.out, e.out, e.out) for e in hoisted]  # unchanged if it does not run
    return [Eqn("gt", [ran], [rep.trips, Const(0)], {}, hoisted[0].loc),
            If(ran, Block(hoisted), Block([]), merges, hoisted[0].loc)]


def _invariant(e, defined: dict, made: set, written: set, alias: MayShare) -> bool:
    """Whether equation ``e`` at the top of a loop's body computes the same scalar every
    iteration: a float element read of an array the loop does not write, or a pure operation
    on numbers, from names the loop does not define (or hoisted ones), its name defined once."""
    if not (isinstance(e, Eqn) and len(e.outs) == 1 and not e.out.type.ndim
            and defined.get(e.out) == 1):
        return False
    if any(isinstance(a, Var) and a in defined and a not in made for a in e.ins):
        return False
    if e.prim == "getitem":
        return (e.out.type == FLOAT and isinstance(e.ins[0], Var)
                and _one_element(e.params["index_spec"], e.ins[0])
                and alias.find(e.ins[0]) not in written)
    flags = ops.flags(e.prim)
    return not (flags.effects or flags.tape or flags.allocates or flags.buffer or flags.raises
                or flags.no_tangent or flags.view or flags.read_only_view
                or any(isinstance(a, Var) and a.type.ndim for a in e.ins))


def _one_element(index_spec, array: Var) -> bool:
    """Whether an index names one element of ``array``: an integer for every axis."""
    return len(index_spec) == array.type.ndim and all(item == "i" for item in index_spec)


def drop_unread_accumulators(body: Block, live: set[Var]) -> None:
    """Drop the arrays that are only added into and never read (an HVP kernel does not
    return the gradient: its adjoint accumulators are written, not read). An array qualifies
    when it is not returned, every definition is ``zeros_like`` of an array (its shape) or
    an update of itself, and every other use is as the target of `add_at`/`iadd`/`zero_at`
    or the shape of a ``zeros_like`` (which then reads the shape's source instead)."""
    defs: dict[Var, list] = {}
    uses: dict[Var, list] = {}
    for s in walk(body):
        if isinstance(s, Eqn):
            for o in s.outs:
                defs.setdefault(o, []).append(s)
            for k, a in enumerate(s.ins):
                if isinstance(a, Var):
                    uses.setdefault(a, []).append((s, k))
        else:
            for a in direct_uses(s):
                if isinstance(a, Var):
                    uses.setdefault(a, []).append((s, -1))
    drop: set = set()  # the equations to remove
    for vid, ds in defs.items():
        v = ds[0].outs[0]
        if vid in live or not v.type.ndim or len(ds[0].outs) != 1:
            continue
        shapes = [d.ins[0] for d in ds if d.prim == "zeros_like"]
        updates = [d for d in ds if d.prim != "zeros_like"]
        if not shapes or not all(len(d.outs) == 1 and any(a is v for a in d.ins)
                                 and (d.prim == "add" or ops.flags(d.prim).same_value)
                                 for d in updates):
            continue
        readers = [(s, k) for s, k in uses.get(vid, []) if s not in updates]
        if not all(isinstance(s, Eqn) and k == 0 and (ops.flags(s.prim).accumulates
                                                      or s.prim == "zeros_like")
                   for s, k in readers):
            continue
        for s, _ in readers:
            if s.prim == "zeros_like":
                s.ins[0] = shapes[0]
            else:
                drop.add(s)
        drop |= {d for d in ds}

    def prune(b: Block):
        b.stmts[:] = [s for s in b.stmts if s not in drop]
        for s in b.stmts:
            for sb in sub_blocks(s):
                prune(sb)
    prune(body)
