"""New arrays for generated code (``_rt.<name>``, re-exported by `runtime`): allocations,
``np.eye``, ``np.arange``, ``np.outer``, and a reshape of any layout.

Takes shapes (an int or a tuple of ints) and arrays; guarantees NumPy's results (float64 unless
a dtype is given). Why the backend has them: Numba compiles every inline ``np.empty``/
``np.zeros``/``np.zeros_like`` form anew in each process (30-250 ms each, a third of a small
gradient's compile) and NumPy's eye, arange and outer for 0.3-1.2 s. The allocations
(``empty``, ``zeros``, ``ones``, ``full``) are intrinsics: a few instructions written into the
caller (ask the allocator for the bytes, fill them), with nothing of their own to compile or
load, so a first gradient on a new machine does not compile them (a helper compiled on first
use took 0.15-0.37 s each: the helper, NumPy's allocation inside it, the link). The others
compile once per machine (`compile.jit`; `warming.warm` compiles the common shapes ahead of
use). The generated code names the allocations through `lowering.allocation`: ``_rt.<how>(shape[,
np.int64 | np.bool_])``.

Large arrays in transparent huge pages, as NumPy's: a new array of 4 MiB or more is advised
(``madvise(MADV_HUGEPAGE)``, Linux, before its first write, in `_new_array`), so its first
write faults once per 2 MiB instead of once per 4 KiB. NumPy does this for every array it
allocates; Numba's allocator does not, and a gradient writing a new 160 MB adjoint spent 2/3
of that loop in page faults (atax at NPBench's preset S: 113 ms to fill it, 34 ms advised).
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_new_ref
from numba.extending import overload
from numba.np.arrayobj import make_array, populate_array

from jitgrad.backend.numba.compile import DISABLE_JIT, intrinsic, jit, link_libc_function
from jitgrad.backend.numba.runtime_loops import trip_count

_HUGE_BYTES = 1 << 22  # NumPy's threshold for the advice (numpy/_core/src/multiarray/alloc.c)
_PAGE = 4096
_MADV_HUGEPAGE = 14  # Linux's value
_ADVISE = sys.platform.startswith("linux") and not DISABLE_JIT
if _ADVISE:  # bound in this process as jitgrad_madvise (`compile.link_libc_function`)
    link_libc_function("madvise", types.int32(types.uintp, types.uintp, types.int32))


def _advise_huge_pages(builder, data, nbytes):
    """Code advising the kernel to back ``nbytes`` at ``data`` with huge pages when they are
    4 MiB or more (from the first whole page; a hint, its result unused)."""
    intp = nbytes.type
    large = builder.icmp_unsigned(">=", nbytes, ir.Constant(intp, _HUGE_BYTES))
    with builder.if_then(large, likely=False):
        address = builder.ptrtoint(data, intp)
        start = builder.and_(builder.add(address, ir.Constant(intp, _PAGE - 1)),
                             ir.Constant(intp, ~(_PAGE - 1)))
        length = builder.sub(nbytes, builder.sub(start, address))
        advise = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), [intp, intp, ir.IntType(32)]),
            "jitgrad_madvise")
        builder.call(advise, [start, length, ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])


def _rank(shape):
    """The rank of an allocation's shape type (an integer, or a tuple of integers), or None."""
    if isinstance(shape, types.Integer):
        return 1
    if isinstance(shape, types.BaseTuple) and all(isinstance(t, types.Integer) for t in shape):
        return len(shape)
    return None


def _element(dtype, default=types.float64):
    """The element type a dtype argument names (``np.int64``, ``np.bool_``; ``default`` when
    omitted), or None."""
    if dtype is None or isinstance(dtype, (types.Omitted, types.NoneType)):
        return default
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):
        return dtype.dtype
    return None


def _new_array(context, builder, arrtype, shape_type, shape):
    """Code for a new C-ordered array of ``arrtype`` and the given shape (its contents
    undefined): checks the sizes (ValueError for a negative one or a byte count that overflows,
    as NumPy), asks Numba's allocator for the bytes. Returns the array's structure and its
    number of items."""
    intp = context.get_value_type(types.intp)
    if isinstance(shape_type, types.Integer):
        items, item_types = [shape], [shape_type]
    else:
        items = cgutils.unpack_tuple(builder, shape, len(shape_type))
        item_types = list(shape_type)
    dims = [context.cast(builder, v, t, types.intp) for v, t in zip(items, item_types)]
    data_type = context.get_data_type(arrtype.dtype)
    itemsize = ir.Constant(intp, context.get_abi_sizeof(data_type))
    count = ir.Constant(intp, 1)
    overflow = ir.Constant(ir.IntType(1), 0)
    for d in dims:
        with cgutils.if_unlikely(builder, builder.icmp_signed("<", d, ir.Constant(intp, 0))):
            context.call_conv.return_user_exc(builder, ValueError,
                                              ("negative dimensions not allowed",))
        product = builder.smul_with_overflow(count, d)
        count = builder.extract_value(product, 0)
        overflow = builder.or_(overflow, builder.extract_value(product, 1))
    nbytes = builder.smul_with_overflow(count, itemsize)
    overflow = builder.or_(overflow, builder.extract_value(nbytes, 1))
    with cgutils.if_unlikely(builder, overflow):
        context.call_conv.return_user_exc(builder, ValueError, ("array is too big",))
    align = context.get_constant(types.uint32,
                                 context.get_preferred_array_alignment(arrtype.dtype))
    meminfo = context.nrt.meminfo_alloc_aligned(builder, builder.extract_value(nbytes, 0), align)
    if _ADVISE:
        _advise_huge_pages(builder, context.nrt.meminfo_data(builder, meminfo),
                           builder.extract_value(nbytes, 0))
    strides, step = [], itemsize
    for d in reversed(dims):  # C order: the last index moves fastest
        strides.insert(0, step)
        step = builder.mul(step, d)
    array = make_array(arrtype)(context, builder)
    populate_array(array, data=builder.bitcast(context.nrt.meminfo_data(builder, meminfo),
                                               data_type.as_pointer()),
                   shape=cgutils.pack_array(builder, dims, ty=intp),
                   strides=cgutils.pack_array(builder, strides, ty=intp),
                   itemsize=itemsize, meminfo=meminfo)
    return array, count


def float_dtype(x):
    """The dtype of a float array made from ``x``: float32 for a float32 array (a float32
    build's arrays stay float32, `runtime_float32`), float64 for anything else."""
    return np.float32 if isinstance(x, np.ndarray) and x.dtype == np.float32 else np.float64


@overload(float_dtype, inline="always")
def _float_dtype_impl(x):
    if isinstance(x, types.Array) and x.dtype == types.float32:
        return lambda x: np.float32
    return lambda x: np.float64


def entry_of(a, v):
    """``v`` as an entry of array ``a`` holds it (rounded to a float32 array's precision, say):
    what ``a[i] = v`` stores, for a value held in a local in its place (`accumulators`)."""
    return a.dtype.type(v)


@overload(entry_of, inline="always")
def _entry_of_impl(a, v):
    dtype = a.dtype
    return lambda a, v: dtype(v)


def _allocation(fill, plain, default=types.float64):
    """An intrinsic ``(shape, dtype=default)`` -> a new array, filled with ``fill`` (a number;
    None: left as allocated); ``plain``: NumPy's function, for Python."""

    @intrinsic(plain)
    def allocate(typingctx, shape, dtype=None):
        rank, element = _rank(shape), _element(dtype, default)
        if rank is None or element is None:
            return None
        arrtype = types.Array(element, rank, "C")

        def codegen(context, builder, signature, args):
            array, count = _new_array(context, builder, arrtype, signature.args[0], args[0])
            if fill is not None:
                _fill(context, builder, array, count, element, context.get_constant(element, fill))
            return impl_ret_new_ref(context, builder, arrtype, array._getvalue())

        return arrtype(shape, types.Omitted(None) if dtype is None else dtype), codegen

    return allocate


def _fill(context, builder, array, count, element, value):
    """Code that stores ``value`` (of type ``element``) in each of the array's ``count`` items
    (zero: one memset)."""
    if isinstance(value, ir.Constant) and value.constant in (0, 0.0, False):
        nbytes = builder.mul(count, array.itemsize)
        cgutils.memset(builder, array.data, nbytes, 0)
        return
    with cgutils.for_range(builder, count) as loop:
        context.pack_value(builder, element, value, builder.gep(array.data, [loop.index]))


def _full_of(element, plain):
    """An intrinsic ``(shape, value)`` -> ``np.full(shape, value)`` of ``element``, as
    `_allocation`'s; ``plain``: NumPy's, for Python."""

    @intrinsic(plain)
    def full(typingctx, shape, value):
        rank = _rank(shape)
        if rank is None or not isinstance(value, (types.Integer, types.Float, types.Boolean)):
            return None
        arrtype = types.Array(element, rank, "C")

        def codegen(context, builder, signature, args):
            array, count = _new_array(context, builder, arrtype, signature.args[0], args[0])
            _fill(context, builder, array, count, element,
                  context.cast(builder, args[1], signature.args[1], element))
            return impl_ret_new_ref(context, builder, arrtype, array._getvalue())

        return arrtype(shape, value), codegen

    return full


empty = _allocation(None, lambda shape, dtype=np.float64: np.empty(shape, dtype))
zeros = _allocation(0, lambda shape, dtype=np.float64: np.zeros(shape, dtype))
ones = _allocation(1, lambda shape, dtype=np.float64: np.ones(shape, dtype))
full = _full_of(types.float64, lambda shape, value: np.full(shape, value, np.float64))

# A float32 build's (`runtime_float32`): float arrays in float32 unless a dtype is given
empty32 = _allocation(None, lambda shape, dtype=np.float32: np.empty(shape, dtype),
                      types.float32)
zeros32 = _allocation(0, lambda shape, dtype=np.float32: np.zeros(shape, dtype), types.float32)
ones32 = _allocation(1, lambda shape, dtype=np.float32: np.ones(shape, dtype), types.float32)
full32 = _full_of(types.float32, lambda shape, value: np.full(shape, value, np.float32))


@jit
def eye(n):
    """``np.eye(n)``; see the allocations above (Numba's own took 0.6 s in each process)."""
    out = zeros((n, n))
    for k in range(n):
        out[k, k] = 1.0
    return out


@jit
def eye32(n):
    """``np.eye(n)`` of a float32 build (`runtime_float32`)."""
    out = zeros32((n, n))
    for k in range(n):
        out[k, k] = 1.0
    return out


@jit
def arange(start, stop, step):
    """``np.arange(start, stop, step)`` of integers (0.3 s in each process as NumPy's)."""
    n = trip_count(start, stop, step)
    out = empty(n, np.int64)
    for k in range(n):
        out[k] = start + k * step
    return out


@jit
def outer(x, y):
    """``np.outer(x, y)`` of float vectors, as loops (NumPy's took 1.2 s in each process)."""
    xf = x.ravel()
    yf = y.ravel()
    out = empty((xf.size, yf.size))
    for i in range(xf.size):
        for j in range(yf.size):
            out[i, j] = xf[i] * yf[j]
    return out


@jit
def outer32(x, y):
    """``np.outer(x, y)`` of a float32 build (`runtime_float32`)."""
    xf = x.ravel()
    yf = y.ravel()
    out = empty32((xf.size, yf.size))
    for i in range(xf.size):
        for j in range(yf.size):
            out[i, j] = xf[i] * yf[j]
    return out


@jit
def reshape(x, shape):
    """``x.reshape(shape)`` for any layout (Numba reshapes contiguous arrays only)."""
    return np.ascontiguousarray(x).reshape(shape)
