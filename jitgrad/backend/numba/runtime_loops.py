"""Integer and stack helpers of generated loops and tapes (``_rt.<name>``, re-exported by
`runtime`): trip counts, high-water marks, stacks that grow, the check of a size assumption, and
the length two axes broadcast to.

Takes integers and 1-D stacks (arrays); guarantees Python's ``len(range(...))`` and ``max``,
stacks that keep their items, and `SizesDiffer` where an assumed size differs. Why the backend
has them: written inline, each would be compiled anew in every process (Numba's builtin ``max``
is an overload it compiles per use); these compile once per machine (`compile.jit`). The checks
generated code calls most (`same_size`, `broadcast_size`; `runtime_reduce.nonempty` too) are
intrinsics instead: a compare and a branch written into the caller, nothing compiled of their
own (on a machine's first gradient each was a helper compile, 0.05-0.1 s).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils

from jitgrad.backend.numba.compile import intrinsic, jit
from jitgrad.core.errors import SizesDiffer

_SIZES_DIFFER = ("an argument axis the compiled code assumed the same size as another differs "
                 "(NumPy broadcasts a size 1)")
_TOO_FEW = "an argument axis the compiled code assumed to have at least so many entries has fewer"
_NO_BROADCAST = "operands could not be broadcast together"


def _raise_unless(context, builder, ok, exception, message):
    """Code raising ``exception(message)`` where the i1 value ``ok`` is false."""
    with cgutils.if_unlikely(builder, builder.not_(ok)):
        context.call_conv.return_user_exc(builder, exception, (message,))


def _size_check(comparison: str, message: str):
    """The typing function of a size check written into the caller: integers ``n`` and ``m``
    compared by ``comparison`` (an LLVM signed predicate), else `SizesDiffer(message)`."""
    def check(typingctx, n, m):
        if not (isinstance(n, types.Integer) and isinstance(m, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            n, m = (context.cast(builder, v, t, types.int64)
                    for v, t in zip(args, signature.args))
            _raise_unless(context, builder, builder.icmp_signed(comparison, n, m), SizesDiffer,
                          message)
            return context.get_dummy_value()

        return types.none(n, m), codegen
    return check


_same_size = _size_check("==", _SIZES_DIFFER)  # `same_size`
_size_at_least = _size_check(">=", _TOO_FEW)  # `size_at_least`
_same_size.__name__ = _same_size.__qualname__ = "_same_size"  # (Numba names intrinsics so)
_size_at_least.__name__ = _size_at_least.__qualname__ = "_size_at_least"


def _broadcast_size(typingctx, n, m):
    """`broadcast_size`, written into the caller."""
    if not (isinstance(n, types.Integer) and isinstance(m, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        n, m = (context.cast(builder, v, t, types.int64) for v, t in zip(args, signature.args))
        one = ir.Constant(n.type, 1)
        n_is_one = builder.icmp_signed("==", n, one)
        fits = builder.or_(n_is_one, builder.or_(builder.icmp_signed("==", m, one),
                                                 builder.icmp_signed("==", m, n)))
        _raise_unless(context, builder, fits, ValueError, _NO_BROADCAST)
        return builder.select(n_is_one, m, n)

    return types.int64(n, m), codegen


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


def _plain_same_size(n, m):
    """The check of a size assumption (`symbolic.GraphBuilder.assume_same_sizes`)."""
    if n != m:
        raise SizesDiffer(_SIZES_DIFFER)


def _plain_size_at_least(n, m):
    """The check of an assumed least size (`size_assumptions.SizeAssumptions.assume_at_least`)."""
    if n < m:
        raise SizesDiffer(_TOO_FEW)


def _plain_broadcast_size(n, m):
    """The length two axes of lengths ``n`` and ``m`` broadcast to, as NumPy (ValueError when
    neither is 1 and they differ): a call, so a generated broadcasting nest holds no branch
    of its own (Numba's SSA pass recurses once per block, and a long gradient of many such
    nests exceeded Python's recursion limit)."""
    if n == 1:
        return m
    if m != 1 and m != n:
        raise ValueError(_NO_BROADCAST)
    return n


same_size = intrinsic(_plain_same_size)(_same_size)
size_at_least = intrinsic(_plain_size_at_least)(_size_at_least)
broadcast_size = intrinsic(_plain_broadcast_size)(_broadcast_size)


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
    for k in range(n):  # not bigger[:n] = tape[:n]: see `grow`
        bigger[k] = tape[k]
    return bigger


@jit
def grow(tape):
    """A stack twice as long holding the same items (called when a push finds it full)."""
    bigger = np.empty(max(16, 2 * tape.shape[0]), dtype=tape.dtype)
    # A loop, not Numba's ``bigger[:m] = tape``: that statement compiles Numba's shape-mismatch
    # message (``raise_with_shape_context``), about 2 s of CPU once per process, for a copy
    # whose shapes agree by construction.
    for k in range(tape.shape[0]):
        bigger[k] = tape[k]
    return bigger
