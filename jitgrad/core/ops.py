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
    """An operation's properties. Memory: ``view`` (the result is a NumPy view of input 0:
    writes through one reach the other), ``read_only_view`` (a broadcast view of input 0),
    ``writes_into_first`` (writes into input 0's memory; the result is that memory),
    ``may_return_input`` (the result may be input 0 itself). Effects: ``effects`` (never
    dropped or moved by the optimiser), ``tape`` (the tape's own push/pop/stacks),
    ``accumulates`` (adds into, or zeroes part of, an adjoint accumulator). Values:
    ``allocates`` (a fresh array, never folded to a constant while building), ``buffer`` (a
    fresh array the program may fill in place: never merged with an equal one), ``costly``
    (worth keeping rather than recomputing), ``nonlinear`` (f(a + b) != f(a) + f(b), e.g. of
    a sum over data rows), ``linear`` (one input, linear in it), ``nonnegative`` (an integer
    result that is never negative), ``no_tangent`` (loop and tape bookkeeping: its result
    carries no derivative), ``raises`` (the user's own raise: a loop that holds one runs
    serially, since Numba cannot raise from a parallel loop's threads). Inputs: ``shape_only`` (positions read for
    their shape alone), ``index_from`` (the position where index atoms begin)."""

    view: bool = False
    read_only_view: bool = False
    writes_into_first: bool = False
    may_return_input: bool = False
    effects: bool = False
    tape: bool = False
    accumulates: bool = False
    allocates: bool = False
    buffer: bool = False
    costly: bool = False
    nonlinear: bool = False
    linear: bool = False
    nonnegative: bool = False
    no_tangent: bool = False
    raises: bool = False
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

declare("assign", may_return_input=True)  # out = in (a copy of the reference)
# The tape: stack_alloc(n) makes a stack, reserve(stack, n) grows it, push(stack, k, value),
# pop(stack, k) -> value.
declare("stack_alloc", effects=True, tape=True, nonnegative=True)
declare("reserve", effects=True, tape=True, may_return_input=True)  # (the same stack)
declare("push", effects=True, tape=True, may_return_input=True)  # (the stack holds the value)
declare("pop", effects=True, tape=True, may_return_input=True)  # (the value the stack held)
# Adjoint accumulation into arrays jitgrad owns: acc += g; acc[idx] = 0.
declare("iadd", effects=True, writes_into_first=True, accumulates=True)
declare("zero_at", effects=True, writes_into_first=True, accumulates=True, index_from=1)
# Loop bookkeeping: a loop's trip count, the index of iteration k, counters of iterations.
declare("trip_count", nonnegative=True, no_tangent=True)
declare("loop_index", no_tangent=True)
declare("count_reset", effects=True, nonnegative=True, no_tangent=True)
declare("count_tick", effects=True, no_tangent=True)
declare("count_max", effects=True, no_tangent=True)
