"""What every pass needs to know about an operation, declared once per operation.

An equation's ``prim`` names either a primitive (`jitgrad.prims`: a NumPy-level operation with
an implementation, a type rule and derivative rules, whose row declares its flags when it is
defined) or one of the internal operations below, which only the transforms create (the tape,
in-place accumulation, counters, loop bookkeeping). Passes ask ``ops.flags(name)``; none keeps
a set of names of its own.

Guarantees: a name is declared once (a second declaration is an error); an undeclared name has
no flags (pure, reads every input for its value).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Flags:
    """An operation's properties, declared on its row (an operation without a flag is treated
    as not having the property).

    Memory: ``view`` (the result is a NumPy view of input 0: writes through one reach the
    other), ``view_if_contiguous`` (a view only of a contiguous input 0: NumPy copies a
    strided one, as ``reshape`` does), ``read_only_view`` (a broadcast view of input 0),
    ``writes_into_first`` (writes into input 0's memory; the result is that memory),
    ``adds_into`` (adds input 1 into input 0's memory: ``acc += g``, ``np.add.at``),
    ``may_return_input`` (the result may be input 0 itself), ``same_value`` (the result is
    input 0's value: a copy, or the reference itself).

    Effects: ``effects`` (never dropped or moved by the optimiser), ``tape`` (the tape's own
    push/pop/stacks), ``grows_stack`` (may grow the tape's stack, input 0: a push, room
    reserved), ``accumulates`` (adds into, or zeroes part of, an adjoint accumulator),
    ``steps_counter`` (the position of an integer input it steps in place, ``count += 1``:
    the generated code binds that name again), ``raises`` (the user's own raise: a loop that
    holds one runs serially, since Numba cannot raise from a parallel loop's threads),
    ``checks_sizes`` (checks an assumption on sizes, raising when it does not hold; no
    result).

    Fresh arrays: ``allocates`` (a fresh array, never folded to a constant while building),
    ``buffer`` (a fresh array the program may fill in place: never merged with an equal one),
    ``zero_filled`` (a fresh array of zeros), ``uninitialised`` (a fresh array holding
    whatever its memory held: any fill will do).

    Values: ``costly`` (worth keeping rather than recomputing), ``recomputable`` (a scalar
    result the adjoint computes again from the inputs rather than saving it, as it does an
    elementwise primitive's: an entry read, a size read, a cast), ``nonlinear`` (f(a + b) !=
    f(a) + f(b), e.g. of a sum over data rows), ``linear`` (one input, linear in it),
    ``additive`` (input 0 plus or minus input 1), ``sums`` (adds input 0's entries up:
    over the axes it drops, or down to input 1's shape), ``extreme`` ("max" or "min": the result is
    the largest or the smallest of its inputs, or of input 0's entries), ``reduction``
    (reduces input 0 along ``params["axis"]``, over every entry when that is None or absent;
    with ``params["keepdims"]`` the axis stays, of size 1), ``nonnegative`` (an integer result
    that is never negative), ``no_tangent`` (loop and tape bookkeeping: its result carries no
    derivative), ``never_merged`` (placed by the builder on purpose: never merged with an
    equal one).

    Sizes: ``reads_size`` (an integer read off input 0's shape: an axis's length, the number
    of entries), ``counting`` (integer arithmetic counts are made of, ``+ - *``, a trip count,
    the counters: exact on integers, never raises), ``scales`` (entry by entry, the first
    operand times or over the second, ``*`` and ``/``: an array filled with one number scaled
    by a number is filled with the product or quotient), ``sizes_from`` (the position where the
    operands that are the result's sizes begin, one per axis: 0 in ``zeros(n, m)``, 1 in
    ``full(v, n, m)``), ``same_shape_as`` (the position of the input whose shape the result
    has: 0 for ``copy(x)``, 1 for ``broadcast_like(g, like)``), ``square`` (a square matrix of
    input 0's sides: ``eye(n)`` is n by n, ``inv(a)`` and ``cholesky(a)`` have ``a``'s shape,
    or fail; unlike ``same_shape_as``, not a result that its operands' shapes alone give: it
    may fail on their contents), ``counts`` (``arange(start, stop, step)``: ``stop`` entries
    when ``start`` is 0 and ``step`` 1), ``broadcasts`` (the result is
    input 0 broadcast to the shape of input 1: each entry is an entry of input 0),
    ``outer_of`` (the name of an elementwise primitive: entry ``[i, j]`` of the result is that
    primitive of input 0's entry ``i`` and input 1's entry ``j``, as ``np.outer`` is of
    ``mul``; a loop nest computes it entry by entry), ``contracts`` (input 0's last axis is
    summed against input 1's first, as in a matrix product: NumPy raises unless they are the
    same size), ``broadcast_nest`` (an elementwise primitive whose scalar form computes NumPy's
    value exactly: on float arrays whose sizes are not proven equal, the generated code is a
    loop nest that broadcasts at run time, not a runtime helper), ``implied_step`` (a
    comparison, a negation, ``+``/``-`` or ``not`` of scalars: the builder keeps such equations
    so that a recursion's test can be decided by its caller's, `frontend.implied`).

    Inputs: ``shape_only`` (positions read for their shape alone), ``index_from`` (the
    position where index atoms begin)."""

    view: bool = False
    view_if_contiguous: bool = False
    read_only_view: bool = False
    writes_into_first: bool = False
    adds_into: bool = False
    may_return_input: bool = False
    same_value: bool = False
    effects: bool = False
    tape: bool = False
    grows_stack: bool = False
    accumulates: bool = False
    steps_counter: int | None = None
    raises: bool = False
    checks_sizes: bool = False
    allocates: bool = False
    buffer: bool = False
    zero_filled: bool = False
    uninitialised: bool = False
    costly: bool = False
    recomputable: bool = False
    nonlinear: bool = False
    linear: bool = False
    additive: bool = False
    sums: bool = False
    extreme: str | None = None
    reduction: bool = False
    nonnegative: bool = False
    no_tangent: bool = False
    never_merged: bool = False
    reads_size: bool = False
    counting: bool = False
    scales: bool = False
    sizes_from: int | None = None
    same_shape_as: int | None = None
    square: bool = False
    counts: bool = False
    broadcasts: bool = False
    outer_of: str | None = None
    contracts: bool = False
    broadcast_nest: bool = False
    implied_step: bool = False
    shape_only: frozenset = frozenset()
    index_from: int | None = None

    @property
    def shares_first_input(self) -> bool:
        """The result is (part of) input 0's memory: a view, or a version written in place
        (``setitem``; the adjoint's accumulations into arrays jitgrad owns are not versions
        the program reads)."""
        return self.view or self.read_only_view or (self.writes_into_first
                                                    and not self.accumulates)


NONE = Flags()
FLAGS: dict[str, Flags] = {}


def declare(name: str, **flags) -> Flags:
    """Declare the flags of operation ``name`` (once)."""
    if name in FLAGS:
        raise AssertionError(f"operation {name!r} declared twice")
    if "shape_only" in flags:
        flags["shape_only"] = frozenset(flags["shape_only"])
    FLAGS[name] = Flags(**flags)
    return FLAGS[name]


def flags(name: str) -> Flags:
    """The flags of operation ``name`` (no flags for an undeclared one)."""
    return FLAGS.get(name, NONE)


# ----------------------------------------------------------------------------- internal ops
# Created by the transforms only; their Numba source is written by the backend's emitter.

declare("assign", may_return_input=True, same_value=True,
        never_merged=True)  # out = in (a copy of the reference, placed on purpose)
# The tape: stack_alloc(n) makes a stack, reserve(stack, n) grows it, push(stack, k, value),
# pop(stack, k) -> value (push and pop step the count k).
declare("stack_alloc", effects=True, tape=True, nonnegative=True)
declare("reserve", effects=True, tape=True, grows_stack=True,
        may_return_input=True)  # (the same stack)
declare("push", effects=True, tape=True, grows_stack=True,
        may_return_input=True, steps_counter=1)  # (the stack holds the value)
declare("pop", effects=True, tape=True, may_return_input=True,
        steps_counter=1)  # (the value the stack held)
# Adjoint accumulation into arrays jitgrad owns: acc += g; acc[idx] = 0.
declare("iadd", effects=True, writes_into_first=True, accumulates=True, adds_into=True)
declare("zero_at", effects=True, writes_into_first=True, accumulates=True, index_from=1)
# Loop bookkeeping: a loop's trip count, the index of iteration k, counters of iterations.
declare("trip_count", nonnegative=True, no_tangent=True, counting=True, never_merged=True)
declare("loop_index", no_tangent=True)
declare("count_reset", effects=True, nonnegative=True, no_tangent=True, counting=True)
declare("count_tick", effects=True, no_tangent=True, counting=True, steps_counter=0)
declare("count_max", effects=True, no_tangent=True, counting=True, extreme="max")
