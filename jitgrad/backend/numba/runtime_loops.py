"""Integer and stack helpers of generated loops and tapes (``_rt.<name>``, re-exported by
`runtime`): trip counts, high-water marks, stacks that grow, the check of a size assumption, and
the length two axes broadcast to.

Takes integers and 1-D stacks (arrays); guarantees Python's ``len(range(...))`` and ``max``,
stacks that keep their items, and `SizesDiffer` where an assumed size differs. Why the backend
has them: written inline, each would be compiled anew in every process (Numba's builtin ``max``
is an overload it compiles per use); these compile once per machine (`compile.jit`).
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import jit
from jitgrad.core.errors import SizesDiffer


@jit
def nonnegative(n):
    """``max(0, n)`` of an integer (a loop's trip count); see `larger`. One argument: a
    literal ``0`` passed in would make Numba compile (and cache) a signature per constant."""
    return max(0, n)


@jit
def larger(a, b):
    """``max(a, b)`` of two integers (a counter's high-water mark, a trip count): Numba's
    builtin ``max`` inline is an overload compiled anew in each process, this once."""
    return max(a, b)


@jit
def same_size(n, m):
    """The check of a size assumption (`symbolic.GraphBuilder.assume_same_sizes`)."""
    if n != m:
        raise SizesDiffer("an argument axis the compiled code assumed the same size as another "
                          "differs (NumPy broadcasts a size 1)")


@jit
def broadcast_size(n, m):
    """The length two axes of lengths ``n`` and ``m`` broadcast to, as NumPy (ValueError when
    neither is 1 and they differ): a call, so a generated broadcasting nest holds no branch
    of its own (Numba's SSA pass recurses once per block, and a long gradient of many such
    nests exceeded Python's recursion limit)."""
    if n == 1:
        return m
    if m != 1 and m != n:
        raise ValueError("operands could not be broadcast together")
    return n


@jit
def trip_count(start, stop, step):
    """``len(range(start, stop, step))``."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // (-step))


@jit
def reserve(tape, n, extra):
    """The stack ``tape`` (holding ``n`` items) with room for ``extra`` more."""
    if n + extra <= tape.shape[0]:
        return tape
    bigger = np.empty(max(n + extra, 2 * tape.shape[0]), dtype=tape.dtype)
    bigger[:n] = tape[:n]
    return bigger


@jit
def grow(tape):
    """A stack twice as long holding the same items (called when a push finds it full)."""
    bigger = np.empty(max(16, 2 * tape.shape[0]), dtype=tape.dtype)
    bigger[:tape.shape[0]] = tape
    return bigger
