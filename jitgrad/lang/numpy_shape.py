"""More of NumPy's array surface, each function written with existing primitives.

`numpy_api.py` holds the basic handlers; this module adds its own to the same table
(`symbolic.NUMPY`), by concept:

- axis permutations: `swapaxes`, `moveaxis`, `rollaxis`, `flipud`, `fliplr`, `rot90`;
- rank padding and repetition: `atleast_1d/2d/3d`, `repeat` along an axis, `tile`;
- products over named axes: `dot` of any ranks, `inner`, `tensordot`, `kron`, `cross`,
  `convolve`;
- diagonals with an offset: `diagonal`, `trace`, `diag(v, k)`, `tril`/`triu` of stacks;
- splitting and stacking by axis name: `hsplit`, `vsplit`, `dsplit`, `column_stack`,
  `row_stack`, `append`;
- norms over an axis, and vector p-norms;
- ``nan_to_num`` and casts written as ``np.int64(x)``;
- NumPy's complex-part functions on real arrays (`real`, `imag`, `conj`, `angle`).

None adds a derivative rule: each records primitives whose rules exist, so the derivative
follows. Functions Numba does not compile and that have no exact rewrite here are refused with
a reason (`REFUSED`), before their arguments are read.
"""

from __future__ import annotations

import math

import numpy as np

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.core.ir import Var
from jitgrad.lang.numpy_api import (
    apply_alloc,
    matmul,
    norm_axis,
    np_cast,
    np_concatenate,
    np_expand_dims,
    np_flip,
    np_ravel,
    np_reduce,
    np_reshape,
    np_reshape_like,
    np_stack,
    np_stack_axis,
    np_sum,
    np_transpose,
    np_where,
    record_even_on_numbers,
    split_handler,
)
from jitgrad.lang.numpy_args import array_like, as_array
from jitgrad.lang.symbolic import (
    NUMPY,
    Sym,
    all_known,
    larger,
    loc_of,
    ndim_of,
    record,
    records,
    smaller,
)


def _ones(x, dims):
    """Ones of shape ``dims`` in the graph of ``x`` (a plain array for the tape)."""
    return apply_alloc("ones", dims, "f") if isinstance(x, Sym) else np.ones(dims)


def _zeros(x, dims):
    return apply_alloc("zeros", dims, "f") if isinstance(x, Sym) else np.zeros(dims)


def _last(x, k, nd=None):
    """``x[..., k]``: entry ``k`` along the last axis."""
    nd = x.ndim if nd is None else nd
    return record("getitem", x, k, index_spec=(":",) * (nd - 1) + ("i",))


# -- axis permutations ----------------------------------------------------------------------


def np_swapaxes(x, axis1, axis2):
    if all_known(x):
        return np.swapaxes(x, axis1, axis2)
    a, b = (norm_axis(v, x.ndim, loc_of(x)) for v in (axis1, axis2))
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return np_transpose(x, tuple(perm))


def np_moveaxis(x, source, destination):
    if all_known(x):
        return np.moveaxis(x, source, destination)
    s, d = (norm_axis(v, x.ndim, loc_of(x)) for v in (source, destination))
    if isinstance(s, tuple) or isinstance(d, tuple):
        raise UnsupportedError("np.moveaxis of several axes", loc_of(x))
    perm = [k for k in range(x.ndim) if k != s]
    perm.insert(d, s)
    return np_transpose(x, tuple(perm))


def np_rollaxis(x, axis, start=0):
    if all_known(x):
        return np.rollaxis(x, axis, start)
    a = norm_axis(axis, x.ndim, loc_of(x))
    start = start + x.ndim if start < 0 else start
    if not 0 <= start <= x.ndim:
        raise ShapeError(f"np.rollaxis: start {start} is out of bounds", loc_of(x))
    if a < start:
        start -= 1
    perm = [k for k in range(x.ndim) if k != a]
    perm.insert(start, a)
    return np_transpose(x, tuple(perm))


def np_flipud(x):
    return np.flipud(x) if all_known(x) else np_flip(x, 0)


def np_fliplr(x):
    return np.fliplr(x) if all_known(x) else np_flip(x, 1)


def np_rot90(x, k=1, axes=(0, 1)):
    if all_known(x):
        return np.rot90(x, k, axes)
    a, b = (norm_axis(v, x.ndim, loc_of(x)) for v in axes)
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return np_flip(np_flip(x, a), b)
    if k == 1:
        return np_swapaxes(np_flip(x, b), a, b)
    return np_flip(np_swapaxes(x, a, b), b)


# -- rank padding and repetition ------------------------------------------------------------


def _atleast(n):
    def f(x, *more):
        if more:  # np.atleast_1d(x, a, b): the tuple of each, as NumPy returns it
            return tuple(f(v) for v in (x, *more))
        if all_known(x):
            return getattr(np, f"atleast_{n}d")(x)
        if x.ndim >= n:
            return x
        if x.ndim == 0:
            return np_reshape(np_stack([x]), (1,) * n)
        shape = tuple(x.shape)
        if n == 2 or x.ndim == 1 and n == 3:
            shape = (1,) + shape
        return np_reshape(x, shape + (1,) * (n - len(shape)))
    return f


def _integer(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) or records(v) and (
        v.dtype.kind == "i" and ndim_of(v) == 0)


def np_repeat(x, repeats, axis=None):
    if all_known(x):
        return np.repeat(x, repeats, axis)
    if ndim_of(repeats) or not _integer(repeats):
        raise UnsupportedError("np.repeat with one integer count (as Numba)", loc_of(x))
    if axis is None:
        x, axis = np_ravel(x), 0
    elif x.ndim == 0:
        raise ShapeError("np.repeat of a scalar along an axis", loc_of(x))
    a = norm_axis(axis, x.ndim, loc_of(x))
    dims = [1] * (x.ndim + 1)
    dims[a + 1] = repeats
    copies = np_expand_dims(x, a + 1) * _ones(x, tuple(dims))
    shape = list(x.shape)
    shape[a] = shape[a] * repeats
    return np_reshape(copies, tuple(shape))


def np_tile(x, reps):
    if all_known(x):
        return np.tile(x, reps)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    if not all(_integer(r) and (records(r) or r >= 0) for r in reps):
        raise UnsupportedError("np.tile with integer repetitions", loc_of(x))
    d = max(x.ndim, len(reps))
    shape = (1,) * (d - x.ndim) + tuple(x.shape)
    reps = (1,) * (d - len(reps)) + reps
    spread = np_reshape(x, tuple(v for s in shape for v in (1, s)))  # (1, s0, 1, s1, ...)
    copies = spread * _ones(x, tuple(v for r in reps for v in (r, 1)))
    return np_reshape(copies, tuple(r * s for r, s in zip(reps, shape)))


# -- products over named axes ---------------------------------------------------------------


def np_tensordot(a, b, axes=2):
    if all_known(a, b):
        return np.tensordot(a, b, axes)
    na, nb = ndim_of(a), ndim_of(b)
    loc = loc_of(a, b)
    if isinstance(axes, (int, np.integer)):
        sa, sb = list(range(na - axes, na)), list(range(axes))
    else:
        sa, sb = ([v] if isinstance(v, (int, np.integer)) else list(v) for v in axes)
    sa = [norm_axis(v, na, loc) for v in sa]
    sb = [norm_axis(v, nb, loc) for v in sb]
    if len(sa) != len(sb):
        raise ShapeError("np.tensordot: the two lists of axes differ in length", loc)
    if na == 0 or nb == 0:
        return a * b
    fa = [k for k in range(na) if k not in sa]
    fb = [k for k in range(nb) if k not in sb]
    at = np_transpose(a, tuple(fa + sa))
    bt = np_transpose(b, tuple(sb + fb))
    if not fa and not fb:
        return np_sum(at * bt)
    if not sa:  # an outer product
        return np_reshape(np_ravel(at), tuple(a.shape) + (1,) * nb) * bt
    free_a = tuple(a.shape[k] for k in fa)
    free_b = tuple(b.shape[k] for k in fb)
    inner = 1
    for k in sa:
        inner = inner * a.shape[k]
    na_rows = 1
    for s in free_a:
        na_rows = na_rows * s
    nb_cols = 1
    for s in free_b:
        nb_cols = nb_cols * s
    left = np_reshape(at, (na_rows, inner)) if fa else np_reshape(at, (inner,))
    right = np_reshape(bt, (inner, nb_cols)) if fb else np_reshape(bt, (inner,))
    return np_reshape(matmul(left, right), free_a + free_b)


def np_dot(a, b, out=None):
    if out is not None:  # np.dot(a, b, out) with an array: a write into it
        raise UnsupportedError("np.dot(a, b, out) into an array: write `out[...] = "
                               "np.dot(a, b)`", loc_of(a, b))
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        return a * b
    if na <= 2 and nb <= 2:
        return matmul(a, b)
    return np_tensordot(a, b, ([na - 1], [max(nb - 2, 0)]))


def np_inner(a, b):
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        return a * b
    return np_tensordot(a, b, ([na - 1], [nb - 1]))


def np_convolve(a, v, mode="full"):
    """The discrete convolution of two vectors: each a[i] * v row of their outer product,
    shifted right by i (a reshape of the rows padded with zeros), summed over i."""
    if all_known(a, v):
        return np.convolve(a, v, mode)
    if ndim_of(a) != 1 or ndim_of(v) != 1 or mode not in ("full", "same", "valid"):
        raise UnsupportedError("np.convolve of two vectors, mode 'full', 'same' or 'valid'",
                               loc_of(a, v))
    n, m = a.shape[0], v.shape[0]
    rows = record("outer", a, v)  # (n, m)
    padded = np_concatenate([rows, _zeros(a if isinstance(a, Sym) else v, (n, n))], axis=1)
    width = n + m - 1
    flat = record("getitem", np_ravel(padded), n * width, index_spec=(("s", False, True, False),))
    full = np_sum(np_reshape(flat, (n, width)), axis=0)
    if mode == "full":
        return full
    short = smaller(n, m)
    start = (short - 1) // 2 if mode == "same" else short - 1
    length = larger(n, m) if mode == "same" else larger(n, m) - short + 1
    return record("getitem", full, start, start + length, index_spec=(("s", True, True, False),))


def np_kron(a, b):
    if all_known(a, b):
        return np.kron(a, b)
    a, b = as_array(a), as_array(b)
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        return a * b
    if na != nb:  # the lower rank's array takes leading axes of size 1, as NumPy's kron
        a = np_reshape(a, (1,) * (nb - na) + a.shape) if na < nb else a
        b = np_reshape(b, (1,) * (na - nb) + b.shape) if nb < na else b
    wa = np_reshape(a, tuple(v for s in a.shape for v in (s, 1)))  # (m, 1, n, 1, ...)
    wb = np_reshape(b, tuple(v for s in b.shape for v in (1, s)))  # (1, p, 1, q, ...)
    return np_reshape(wa * wb, tuple(s * t for s, t in zip(a.shape, b.shape)))


def np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if all_known(a, b):
        return np.cross(a, b, axisa, axisb, axisc, axis)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = np_moveaxis(a, axisa, -1) if ndim_of(a) > 1 else a
    b = np_moveaxis(b, axisb, -1) if ndim_of(b) > 1 else b
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        raise ShapeError("np.cross of scalars", loc_of(a, b))
    # vectors of 3 entries along the last axis (Numba's np.cross; 2-entry vectors: cross2d)
    a0, a1, a2 = (_last(a, k) for k in range(3))
    b0, b1, b2 = (_last(b, k) for k in range(3))
    c = np_stack_axis([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return np_moveaxis(c, -1, axisc) if ndim_of(c) > 1 else c


# -- diagonals with an offset ----------------------------------------------------------------


def np_diagonal(x, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the planes (axis1, axis2), as NumPy: a strided slice of each
    plane's flattened entries, along a new last axis."""
    if all_known(x):
        return np.diagonal(x, offset, axis1, axis2)
    if records(offset) or x.ndim < 2:
        raise UnsupportedError("np.diagonal of an array of rank 2 or more, with a constant "
                               "offset", loc_of(x))
    a1, a2 = (norm_axis(v, x.ndim, loc_of(x)) for v in (axis1, axis2))
    if a1 == a2:
        raise ShapeError("np.diagonal: axis1 and axis2 cannot be the same", loc_of(x))
    y = np_transpose(x, tuple(k for k in range(x.ndim) if k not in (a1, a2)) + (a1, a2))
    n, m = y.shape[-2], y.shape[-1]
    flat = np_reshape(y, tuple(y.shape[:-2]) + (n * m,))
    if offset >= 0:
        start, count = offset, larger(0, smaller(n, m - offset))
    else:
        start, count = -offset * m, larger(0, smaller(n + offset, m))
    spec = (":",) * (x.ndim - 2) + (("s", True, True, True),)
    return record("getitem", flat, start, start + count * (m + 1), m + 1, index_spec=spec)


def np_trace(x, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if dtype is not None or out is not None:
        raise UnsupportedError("np.trace with dtype= or out=", loc_of(x))
    if all_known(x):
        return np.trace(x, offset, axis1, axis2)
    return np_sum(np_diagonal(x, offset, axis1, axis2), axis=-1)


def np_diag(v, k=0):
    if all_known(v):
        return np.diag(v, k)
    if records(k):
        raise UnsupportedError("np.diag with a constant offset k", loc_of(v))
    if v.ndim == 2:
        return np_diagonal(v, k)
    if v.ndim != 1:
        raise UnsupportedError("np.diag of an array of rank other than 1 or 2", loc_of(v))
    n = v.shape[0]
    eye = record("eye", n) if isinstance(v, Sym) else np.eye(len(v))
    square = eye * v  # the entries of v on the diagonal, zeros elsewhere
    if k == 0:
        return square
    j = abs(k)
    side = _zeros(v, (n, j))
    band = _zeros(v, (j, n + j))
    if k > 0:  # v on the k-th diagonal above the main one: zeros on the left and below
        return np_concatenate([np_concatenate([side, square], axis=1), band], axis=0)
    return np_concatenate([band, np_concatenate([square, side], axis=1)], axis=0)


def _triangle(lower):
    def f(x, k=0):
        if all_known(x):
            return (np.tril if lower else np.triu)(x, k)
        if x.ndim < 2 or records(k):
            raise UnsupportedError(f"np.{'tril' if lower else 'triu'} of an array of rank 2 "
                                   "or more, with a constant k", loc_of(x))
        rows = np_expand_dims(record("arange", 0, x.shape[-2], 1), 1)
        cols = np_expand_dims(record("arange", 0, x.shape[-1], 1), 0)
        keep = (cols - rows <= k) if lower else (cols - rows >= k)
        return np_where(keep, x, 0.0)
    return f


# -- splitting and stacking by axis name ---------------------------------------------------


def _split_along(name, axis_of):
    def f(x, sections):
        if all_known(x):
            return tuple(getattr(np, name)(x, sections))
        axis = axis_of(x.ndim)
        if axis is None:
            raise ShapeError(f"np.{name} of an array of rank {x.ndim}", loc_of(x))
        return split_handler("split", True)(x, sections, axis)
    return f


def np_column_stack(tup):
    if records(tup):  # one array: its rows, each a column
        if tup.ndim == 1:  # its entries, each a 1 x 1 column
            return np_reshape(tup, (1, tup.shape[0]))
        if tup.ndim > 2:  # its rows (arrays) joined along their axis 1
            return NUMPY[np.concatenate](tup, axis=1)
        return np_transpose(tup)
    tup = list(tup)
    if all_known(*tup):
        return np.column_stack(tup)
    cols = [np_expand_dims(a, 1) if ndim_of(a) == 1 else a for a in tup]
    return np_concatenate(cols, axis=1)


def np_append(arr, values, axis=None):
    if all_known(arr, values):
        return np.append(arr, values, axis)
    if axis is not None:
        return np_concatenate([arr, values], axis=axis)
    pieces = [np_ravel(v) if ndim_of(v) else np_stack([v]) for v in (arr, values)]
    return np_concatenate(pieces, axis=0)


# -- cleaning and casting -------------------------------------------------------------------


def np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if all_known(x):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    big = np.finfo(np.float64).max
    top = big if posinf is None else float(posinf)
    bottom = -big if neginf is None else float(neginf)
    infinite = np_where(record("isnan", x), False, record("logical_not", record("isfinite", x)))
    x = np_where(infinite, np_where(x > 0.0, top, bottom), x)
    return np_where(record("isnan", x), float(nan), x)


def np_float32(value=0.0):
    """The value (or each entry) rounded to float32, then carried on as float64."""
    if all_known(value):
        return np.float32(value)
    return record("round_float32",
                  np_cast(value, np.float64) if value.type.kind != "f" else value)


def _cast_to(dtype):
    def f(value):
        if all_known(value):
            return dtype(value)
        return np_cast(value, dtype)
    return f


def np_norm(x, ord=None, axis=None, keepdims=False):
    if all_known(x):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    loc = loc_of(x)
    if axis is None and x.ndim > 2 and ord is None:
        axis = tuple(range(x.ndim))
    if axis is not None:
        axis = norm_axis(axis, x.ndim, loc)
    vector = (axis is None and x.ndim == 1) or isinstance(axis, int)
    if ord is None or ord == "fro" and not vector or ord == 2 and vector:
        return record("sqrt", np_sum(record("square", x), axis, keepdims))
    if vector and ord in (math.inf, -math.inf):
        return np_reduce("max" if ord > 0 else "min", record("abs", x), axis, keepdims)
    if vector and ord == 1:
        return np_sum(record("abs", x), axis, keepdims)
    if vector and isinstance(ord, (int, float)) and not isinstance(ord, bool) and ord > 1:
        total = np_sum(record("pow", record("abs", x), float(ord)), axis, keepdims)
        return record("pow", total, 1.0 / ord)
    raise UnsupportedError(f"np.linalg.norm with ord={ord!r} (jitgrad: vector norms of order "
                           "p >= 1 and inf; of a matrix, 'fro', 'nuc', 2, -2, 1, -1, inf, "
                           "-inf)", loc)


# -- complex parts of real arrays ------------------------------------------------------------


def _real_only(name, fn, value):
    def f(x, *args):
        if all_known(x):
            return fn(x, *args)
        if x.dtype.kind == "c":
            raise UnsupportedError(f"np.{name} of a complex array", loc_of(x))
        return value(x)
    return f


def _zero_like(x):
    return x * 0.0 if ndim_of(x) == 0 else record("zeros_like", x)


def np_take_along_axis(arr, indices, axis):
    """``np.take_along_axis``: the entries of ``arr`` at the flat positions the index names
    (`index_positions`, checked at run time), gathered in the index's shape; the adjoint adds
    a repeated position's gradients up."""
    if all_known(arr) and all_known(indices):
        return np.take_along_axis(arr, indices, axis)
    loc = loc_of(arr, indices)
    if not ((isinstance(indices, Sym) and indices.type.kind == "i") or (
            isinstance(indices, np.ndarray) and indices.dtype.kind in "iu")):
        raise UnsupportedError("np.take_along_axis with an index that is not an integer array",
                               loc)
    if axis is None:
        arr, axis = np_ravel(arr), 0
    if ndim_of(arr) != indices.ndim:
        raise ShapeError(f"np.take_along_axis: the index has rank {indices.ndim}, the array "
                         f"rank {ndim_of(arr)}; they must match", loc)
    axis = norm_axis(axis, arr.ndim, loc)
    positions = record("index_positions", indices, arr, kind="along", axis=axis)
    return np_reshape_like(record("take", np_ravel(arr), positions), indices)


def _without_ellipsis(terms, out, arrow: bool, operands, loc):
    """Einsum terms with each ``...`` replaced by letters of their own, right-aligned across
    the operands as NumPy broadcasts them; the output's ``...`` (or, with no ``->``, the
    broadcast axes first) the same letters."""
    if len(terms) != len(operands):
        raise ShapeError(f"np.einsum: {len(terms)} terms for {len(operands)} operands", loc)
    used = set("".join(terms) + out)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    counts = [ndim_of(op) - len(t.replace("...", "")) if "..." in t else 0
              for t, op in zip(terms, operands)]
    if any(n < 0 for n in counts) or any(t.count("...") > 1 or ("." in t.replace("...", ""))
                                         for t in terms + [out]):
        raise ShapeError("np.einsum: an ellipsis that does not fit its operand", loc)
    width = max(counts, default=0)
    letters = "".join(spare[:width])
    new_terms = [t.replace("...", letters[width - n:]) for t, n in zip(terms, counts)]
    if arrow:
        out = out.replace("...", letters)
    else:
        joined = "".join(t.replace("...", "") for t in terms)
        out = letters + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    return new_terms, out


def _einsum_terms(subscripts, operands, loc):
    """The input terms and the output term of an einsum subscript string (the output, when
    not written, as NumPy makes it: the letters used once, in alphabetical order)."""
    if not isinstance(subscripts, str):
        raise UnsupportedError("np.einsum takes a subscript string ('ij,jk->ik')", loc)
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if "." in spec:  # '...': the leading axes the letters leave, written out (ranks are known)
        terms, out = _without_ellipsis(terms, out, bool(arrow), operands, loc)
    if len(terms) != len(operands):
        raise ShapeError(f"np.einsum: {len(terms)} terms for {len(operands)} operands", loc)
    for t, op in zip(terms, operands):
        if not all(c.isalpha() for c in t) or len(t) != ndim_of(op):
            raise ShapeError(f"np.einsum: the term {t!r} does not fit an operand of rank "
                             f"{ndim_of(op)}", loc)
        if any(t.count(c) > 2 for c in t):
            raise UnsupportedError(f"np.einsum with a letter three times in one term ({t!r}): "
                                   "use np.diagonal", loc)
    letters = "".join(terms)
    if not arrow:
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(out)) != len(out) or not all(c in letters for c in out):
        raise ShapeError(f"np.einsum: the output {out!r} must name letters of the inputs, "
                         "once each", loc)
    return terms, out


def _einsum_sublists(args, loc):
    """einsum's sublist form, ``np.einsum(a, [0, 1], b, [1, 2], [0, 2])``, as its subscript
    string and operands (``'ab,bc->ac'``, ``(a, b)``): axis labels 0-51 are letters."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sublist):
        if not isinstance(sublist, (list, tuple)) or not all(
                k is Ellipsis or isinstance(k, (int, np.integer)) and 0 <= k < len(letters)
                for k in sublist):
            raise UnsupportedError("np.einsum's sublists must be lists of axis labels 0 to 51 "
                                   "(and an ellipsis)", loc)
        return "".join("..." if k is Ellipsis else letters[k] for k in sublist)

    operands, terms = args[0::2], [term(s) for s in args[1::2]]
    out = term(operands[-1]) if len(args) % 2 else None
    operands = operands[:-1] if out is not None else operands
    return ",".join(terms) + ("" if out is None else "->" + out), operands


def np_einsum(subscripts, *operands, optimize=False):
    """``np.einsum`` with a subscript string (or in its sublist form), written with what
    jitgrad differentiates: letters used by one operand only and not in the output summed
    first; two operands that share only summed letters contracted by np.tensordot (a matrix
    product); anything else a broadcast product summed over the letters the output leaves
    out."""
    if not isinstance(subscripts, str):
        subscripts, operands = _einsum_sublists((subscripts, *operands),
                                                loc_of(subscripts, *operands))
    operands = tuple(as_array(op) for op in operands)
    if all_known(*operands):
        return np.einsum(subscripts, *operands)
    loc = loc_of(*operands)
    terms, out = _einsum_terms(subscripts, operands, loc)
    ops = []
    for t, op in zip(terms, operands):
        for c in [c for c in dict.fromkeys(t) if t.count(c) == 2]:  # 'ii': the diagonal
            p, q = t.index(c), t.rindex(c)
            op = np_diagonal(op, 0, p, q)  # its axis goes last
            t = "".join(d for k, d in enumerate(t) if k not in (p, q)) + c
        alone = tuple(k for k, c in enumerate(t)
                      if c not in out and sum(c in u for u in terms) == 1)
        if alone:
            op = np_sum(op, axis=alone)
            t = "".join(c for k, c in enumerate(t) if k not in alone)
        ops.append((t, op))
    if len(ops) == 2:
        (ta, a), (tb, b) = ops
        shared = [c for c in ta if c in tb]
        if shared and not any(c in out for c in shared):
            r = np_tensordot(a, b, ([ta.index(c) for c in shared], [tb.index(c) for c in shared]))
            rt = [c for c in ta if c not in shared] + [c for c in tb if c not in shared]
            return np_transpose(r, tuple(rt.index(c) for c in out)) if len(out) > 1 else r
    order = out + "".join(sorted({c for t, _ in ops for c in t} - set(out)))
    product = None
    for t, op in ops:
        mine = [c for c in order if c in t]
        if len(mine) > 1:
            op = np_transpose(op, tuple(t.index(c) for c in mine))
        for k, c in enumerate(order):
            if c not in t:
                op = np_expand_dims(op, k)
        product = op if product is None else product * op
    summed = tuple(range(len(out), len(order)))
    return np_sum(product, axis=summed) if summed else product


def np_indices(dimensions, dtype=int, sparse=False):
    """``np.indices(shape)`` of sizes known only at run time (an argument's shape): the
    integer grids of ``np.meshgrid(..., indexing="ij")`` of ``arange`` of each, stacked."""
    if all_known(*dimensions):
        return np.indices(tuple(dimensions), dtype=dtype, sparse=sparse)
    if sparse or np.dtype(dtype).kind != "i":
        raise UnsupportedError("np.indices(shape) with an integer dtype, not sparse",
                               loc_of(*dimensions))
    grids = np_meshgrid(*[NUMPY[np.arange](d) for d in dimensions], indexing="ij")
    return np_stack(list(grids))


def np_meshgrid(*xs, indexing="xy", sparse=False, copy=True):
    """Coordinate matrices of 1-D arrays: each array broadcast along the others' axes (with
    ``indexing="xy"`` the first two axes swapped, as NumPy does); ``sparse=True`` keeps the
    size-1 axes."""
    if all_known(*xs):
        return tuple(np.meshgrid(*xs, indexing=indexing, sparse=sparse, copy=copy))
    xs = [as_array(x) for x in xs]
    if any(ndim_of(x) != 1 for x in xs):
        raise UnsupportedError("np.meshgrid of 1-D arrays", loc_of(*xs))
    if indexing not in ("xy", "ij"):
        raise UnsupportedError(f"np.meshgrid: indexing={indexing!r}", loc_of(*xs))
    n = len(xs)
    axes = list(range(n))  # the output axis each input runs along
    if indexing == "xy" and n >= 2:
        axes[0], axes[1] = 1, 0
    size = [None] * n
    for x, axis in zip(xs, axes):
        size[axis] = x.shape[0]
    grids = [np_reshape(x, tuple(size[axis] if j == axis else 1 for j in range(n)))
             for x, axis in zip(xs, axes)]
    if sparse:
        return tuple(grids)
    ones = NUMPY[np.ones](tuple(size))
    return tuple(g * ones for g in grids)  # each broadcast to the full grid


def np_isscalar(x) -> bool:
    """Whether ``x`` is a number (a run-time number included), not an array or a tuple."""
    if isinstance(x, Sym):
        return x.ndim == 0
    return bool(np.isscalar(x))


# Refused before their arguments are read, with the reason (Numba compiles none of them, or
# jitgrad has no exact rewrite yet).
REFUSED = {
    np.frombuffer: "np.frombuffer is not supported (the build knows an array's kind, not its "
                   "bytes): jitgrad passes a bytes or bytearray argument as its uint8 array, "
                   "so read it directly (`b[0]`, `len(b)`), or pass np.frombuffer(b, dtype) "
                   "as the argument",
}

def np_arange(start, stop=None, step=None, dtype=None):
    """np.arange; where the start or the step is a float of the graph, each entry is ``start
    + k * step`` in the derivative too (the count, set by ``stop``, is piecewise constant):
    NumPy's values plus ``start - stop_gradient(start)`` and ``k * (step - ...)``, zeros."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    out = record_even_on_numbers("arange", start, stop, step)
    if isinstance(out, Sym) and (_float_of_graph(start) or _float_of_graph(step)):
        k = record_even_on_numbers("arange", 0, out.shape[0], 1)  # np.arange(x[0], 3.0, 0.25)
        out = record("stop_gradient", out)
        if _float_of_graph(start):
            out = out + (start - record("stop_gradient", start))
        if _float_of_graph(step):
            out = out + k * (step - record("stop_gradient", step))
    return out if dtype is None else np_cast(out, dtype)


def _float_of_graph(v) -> bool:
    return isinstance(v, Sym) and isinstance(v.atom, Var) and v.atom.type.kind == "f"


def np_linspace(start, stop, num=50, endpoint=True, **kw):
    """``num`` points ``(stop - start) / gaps`` apart: ``num - 1`` gaps, ``num`` without end."""
    if kw or not isinstance(endpoint, (bool, np.bool_)):
        raise UnsupportedError("np.linspace with arguments other than start, stop, num and an "
                               "endpoint known while building", loc_of(start, stop, num))
    last = num - 1 if endpoint else num
    gaps = record("maximum", last, 1) if records(num) else max(last, 1)
    return start + np_arange(num) * ((stop - start) / gaps)


NUMPY.update({
    np.arange: np_arange, np.linspace: np_linspace,
    np.swapaxes: np_swapaxes, np.moveaxis: np_moveaxis, np.rollaxis: np_rollaxis,
    np.flipud: np_flipud, np.fliplr: np_fliplr, np.rot90: np_rot90,
    np.atleast_1d: _atleast(1), np.atleast_2d: _atleast(2), np.atleast_3d: _atleast(3),
    np.repeat: np_repeat, np.tile: np_tile, np.meshgrid: np_meshgrid, np.indices: np_indices,
    np.isscalar: np_isscalar,
    # (array_like: a list or tuple given for an array is the array it makes, as in NumPy)
    np.dot: array_like(np_dot, 0, 1), np.inner: array_like(np_inner, 0, 1),
    np.tensordot: array_like(np_tensordot, 0, 1), np.kron: array_like(np_kron, 0, 1),
    np.convolve: array_like(np_convolve, 0, 1), np.cross: array_like(np_cross, 0, 1),
    np.diagonal: np_diagonal, np.trace: np_trace, np.diag: np_diag,
    np.tril: _triangle(True), np.triu: _triangle(False),
    np.hsplit: _split_along("hsplit", lambda nd: 1 if nd > 1 else 0 if nd == 1 else None),
    np.vsplit: _split_along("vsplit", lambda nd: 0 if nd >= 2 else None),
    np.dsplit: _split_along("dsplit", lambda nd: 2 if nd >= 3 else None),
    np.column_stack: np_column_stack, np.append: array_like(np_append, 0, 1),
    np.linalg.norm: np_norm,
    np.nan_to_num: np_nan_to_num,
    np.take_along_axis: np_take_along_axis, np.einsum: np_einsum,
    np.int64: _cast_to(np.int64), np.int32: _cast_to(np.int32),
    np.float64: _cast_to(np.float64), np.float32: np_float32, np.bool_: _cast_to(np.bool_),
    np.real: _real_only("real", np.real, lambda x: x),
    np.conj: _real_only("conj", np.conj, lambda x: x),
    np.real_if_close: _real_only("real_if_close", np.real_if_close, lambda x: x),
    np.imag: _real_only("imag", np.imag, _zero_like),
    np.angle: _real_only("angle", np.angle, lambda x: np_where(x < 0.0, math.pi, 0.0)),
})
