"""NumPy (and a few SciPy) functions jitgrad writes in Python, for the frontend to build as the
user's own code.

Where a NumPy function's work depends on a length known only at run time (Horner's rule over
a polynomial's coefficients, a long division), or must raise where NumPy raises (an array too
short for np.gradient, a non-finite entry), no composition made while building can do it; a
loop or a branch can. These functions are that loop,
written in the Python jitgrad takes: a handler returns ``symbolic.written(fn, ...)``, and the
frontend builds ``fn``'s source in the caller's place (`symbolic.Written`), so its loops are
loops of the graph and are differentiated as the user's are. Called on values that are not
symbolic (the tape's), they simply run.

They are never called by the user directly: their handlers (in `numpy_composed`,
`numpy_api`) check the arguments (vectors of coefficients) and the options NumPy's functions
take.
"""

from __future__ import annotations

import numpy as np


def polyval(x, c):
    """Horner's rule, from the highest coefficient down (as NumPy evaluates it)."""
    n = c.shape[0]
    out = c[n - 1] + x * 0.0
    for k in range(n - 2, -1, -1):
        out = out * x + c[k]
    return out


def matrix_power(a, n):
    """np.linalg.matrix_power of a power known only at run time: the product of ``n``
    factors, in a loop (the identity, of ``a``'s sizes, where ``n == 0``)."""
    if a.shape[0] != a.shape[1]:
        raise ValueError("np.linalg.matrix_power: the matrix must be square")
    if n < 0:
        raise ValueError("jitgrad: np.linalg.matrix_power of a negative power known only at "
                         "run time; write np.linalg.matrix_power(np.linalg.inv(a), -n)")
    out = a * 0.0
    for i in range(a.shape[0]):
        out[i, i] = 1.0
    for _ in range(n):
        out = out @ a
    return out


def polyval_legacy(p, x):
    """np.polyval: the coefficients from the highest power down."""
    out = p[0] + x * 0.0
    for k in range(1, p.shape[0]):
        out = out * x + p[k]
    return out


def polyval_at_complex(p, xr, xi):
    """np.polyval of real coefficients at the complex ``xr + 1j * xi`` (parts of one shape):
    Horner's rule on the two parts."""
    out_re = p[0] + xr * 0.0
    out_im = xr * 0.0
    for k in range(1, p.shape[0]):
        re = out_re * xr - out_im * xi + p[k]
        out_im = out_re * xi + out_im * xr
        out_re = re
    return out_re + 1j * out_im


# The [13/13] Pade approximant's coefficients and the largest 1-norm it is used at unscaled
# (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(a):
    """The matrix exponential: ``a`` scaled by ``2**-s`` to a 1-norm of at most theta_13, the
    [13/13] Pade approximant ``(v - u)^-1 (v + u)``, squared ``s`` times. SciPy chooses a
    lower degree for smaller norms; the results agree to rounding."""
    b = _PADE13
    norm = np.max(np.sum(np.abs(a), axis=0))
    s = 0
    if norm > _THETA13:
        s = int(np.ceil(np.log2(norm / _THETA13)))
    a = a / 2.0 ** s
    ident = np.eye(a.shape[0])
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a2 @ a4
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def continuous_are(a, b, q, r):
    """The stabilising solution of ``a^T x + x a - x b r^-1 b^T x + q = 0``: ``u2 u1^-1`` of
    the eigenvectors ``[u1; u2]`` of the Hamiltonian matrix's n eigenvalues of negative real
    part (the complex solve written as its real block system), symmetrised as SciPy's. Raises
    where q or r is not symmetric, or eigenvalues lie on the imaginary axis, as SciPy does."""
    n = a.shape[0]
    for m in (q, r):
        if np.max(np.abs(m - m.T)) > 1e-13 * max(1.0, np.max(np.abs(m))):
            raise ValueError("solve_continuous_are: q and r should be symmetric")
    g = b @ np.linalg.solve(r, b.T)
    h = np.zeros((2 * n, 2 * n))
    h[:n, :n] = a
    h[:n, n:] = -g
    h[n:, :n] = -q
    h[n:, n:] = -a.T
    w, v = np.linalg.eig(h + 0j)
    order = np.argsort(w.real)
    if w.real[order[n - 1]] >= 0.0 or w.real[order[n]] <= 0.0:
        raise ValueError("solve_continuous_are: the Hamiltonian matrix has eigenvalues on the "
                         "imaginary axis (the pair is not stabilisable and detectable)")
    u = v[:, order[:n]]
    m = u[:n].T
    rhs = u[n:].T
    big = np.zeros((2 * n, 2 * n))
    big[:n, :n] = m.real
    big[:n, n:] = -m.imag
    big[n:, :n] = m.imag
    big[n:, n:] = m.real
    y = np.linalg.solve(big, np.concatenate((rhs.real, rhs.imag), axis=0))
    x = y[:n].T
    return (x + x.T) / 2.0


def vectorized_call(f, x):
    """``np.vectorize(f)(x)`` of one array: ``f`` (a number of a number) of each entry, in
    order, in an array of ``x``'s shape."""
    flat = np.ravel(x)
    out = np.empty(flat.shape[0])
    for i in range(flat.shape[0]):
        out[i] = f(flat[i])
    return out.reshape(x.shape)


def polyadd(c1, c2):
    """The sum, its trailing zeros removed (NumPy trims the operands and the result)."""
    c1 = np.polynomial.polyutils.trimseq(c1)
    c2 = np.polynomial.polyutils.trimseq(c2)
    out = np.zeros(max(c1.shape[0], c2.shape[0]))
    out[:c1.shape[0]] += c1
    out[:c2.shape[0]] += c2
    return np.polynomial.polyutils.trimseq(out)


def polysub(c1, c2):
    c1 = np.polynomial.polyutils.trimseq(c1)
    c2 = np.polynomial.polyutils.trimseq(c2)
    out = np.zeros(max(c1.shape[0], c2.shape[0]))
    out[:c1.shape[0]] += c1
    out[:c2.shape[0]] -= c2
    return np.polynomial.polyutils.trimseq(out)


def polydiv(c1, c2):
    """Quotient and remainder by long division, from the highest power down, as NumPy
    divides."""
    c1 = np.polynomial.polyutils.trimseq(c1)
    c2 = np.polynomial.polyutils.trimseq(c2)
    n1 = c1.shape[0]
    n2 = c2.shape[0]
    scale = c2[n2 - 1]
    if scale == 0.0:
        raise ZeroDivisionError("polydiv: the divisor is the zero polynomial")
    if n1 < n2:
        return c1[:1] * 0.0, c1
    if n2 == 1:
        return c1 / scale, c1[:1] * 0.0
    rest = c1.copy()
    lower = c2[:n2 - 1] / scale
    for j in range(n1 - 1, n2 - 2, -1):
        rest[j - n2 + 1:j] -= lower * rest[j]
    return rest[n2 - 1:] / scale, np.polynomial.polyutils.trimseq(rest[:n2 - 1])


def as_series(alist, trim):
    """numpy.polynomial.polyutils.as_series of a tuple or list known while building: each
    entry a float vector, its trailing zeros removed where ``trim``."""
    out = ()
    for a in alist:
        a = np.atleast_1d(a) * 1.0
        if trim:
            a = np.polynomial.polyutils.trimseq(a)
        out = out + (a,)
    return list(out)


def gradient(f, pairs, edge_order, single):
    """np.gradient along each (axis, spacing) of ``pairs`` (a tuple known while building):
    one array, or a list of them."""
    out = ()
    for axis, h in pairs:
        out = out + (gradient_along(f, axis, h, edge_order),)
    if single:
        return out[0]
    return list(out)


def gradient_along(f, axis, h, edge_order):
    """Central differences inside, one-sided ones of ``edge_order`` at both ends, as NumPy
    computes them with an even spacing ``h``."""
    g = np.moveaxis(f, axis, 0)
    n = g.shape[0]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    inner = (g[2:] - g[:n - 2]) / (2.0 * h)
    if edge_order == 1:
        first = (g[1:2] - g[0:1]) / h
        last = (g[n - 1:] - g[n - 2:n - 1]) / h
    else:
        first = (-1.5 * g[0:1] + 2.0 * g[1:2] - 0.5 * g[2:3]) / h
        last = (1.5 * g[n - 1:] - 2.0 * g[n - 2:n - 1] + 0.5 * g[n - 3:n - 2]) / h
    return np.moveaxis(np.concatenate((first, inner, last)), 0, axis)


def gradient_at(f, x, axis):
    """np.gradient along ``axis`` at the coordinates ``x`` (uneven spacing, edge_order 1), as
    NumPy computes it: inside, the second-order difference of the two neighbours weighted by
    the spacings on each side; at the ends, the one-sided first difference."""
    g = np.moveaxis(f, axis, 0)
    n = g.shape[0]
    if n < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    if x.shape[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    dx = x[1:] - x[:n - 1]
    d1 = dx[:n - 2]
    d2 = dx[1:]
    shape = (n - 2,) + (1,) * (g.ndim - 1)  # the weights along the first axis
    a = np.reshape(-d2 / (d1 * (d1 + d2)), shape)
    b = np.reshape((d2 - d1) / (d1 * d2), shape)
    c = np.reshape(d1 / (d2 * (d1 + d2)), shape)
    inner = a * g[:n - 2] + b * g[1:n - 1] + c * g[2:]
    first = (g[1:2] - g[0:1]) / dx[0]
    last = (g[n - 1:] - g[n - 2:n - 1]) / dx[n - 2]
    return np.moveaxis(np.concatenate((first, inner, last)), 0, axis)


def pad_mirrored(x, steps, skip):
    """np.pad with mode 'reflect' (``skip`` 1: the edge not repeated) or 'symmetric' (0),
    along each (axis, before, after) of ``steps`` in turn, as NumPy pads."""
    for axis, before, after in steps:
        g = np.moveaxis(x, axis, 0)
        n = g.shape[0]
        if n < max(before, after) + skip:
            raise ValueError("np.pad: jitgrad mirrors an axis once, so the pad must be "
                             "narrower than the axis (NumPy mirrors again); pad in steps")
        head = np.flip(g[skip:skip + before], 0)
        tail = np.flip(g[n - skip - after:n - skip], 0)
        x = np.moveaxis(np.concatenate((head, g, tail)), 0, axis)
    return x


def view_as(x, itemsize, name):
    """``x.view(dtype)`` of the array's own kind: the same array, where its entries have the
    dtype's width."""
    if x.itemsize != itemsize:
        raise TypeError("x.view(dtype) with a dtype of another width than the array's: "
                        "jitgrad takes views as the array's own dtype only")
    return x


def asarray_chkfinite(a):
    """The array itself, once every entry is checked to be finite (as NumPy raises)."""
    if not np.all(np.isfinite(a)):
        raise ValueError("array must not contain infs or NaNs")
    return a



def cov_weighted(m, fw, aw, ddof, normalised_by, one_variable):
    """``np.cov`` of the variables in ``m``'s rows with frequency weights ``fw`` and
    observation weights ``aw`` (a vector each, or 1.0 where not given), checked as NumPy checks
    them; ``normalised_by`` is NumPy's choice of denominator: 0 the weights' sum ``v1``, 1
    ``v1 - ddof``, 2 ``v1 - ddof * sum(w * aw) / v1``."""
    if np.any(fw < 0):
        raise ValueError("fweights cannot be negative")
    if np.any(aw < 0):
        raise ValueError("aweights cannot be negative")
    w = fw * aw
    v1 = np.sum(w)
    centred = m - np.reshape(np.sum(m * w, axis=1) / v1, (-1, 1))
    fact = v1
    if normalised_by == 1:
        fact = v1 - ddof
    if normalised_by == 2:
        fact = v1 - ddof * np.sum(w * aw) / v1
    c = (centred * w) @ np.transpose(centred) / fact
    if one_variable:
        return c[0, 0]
    return c


def rankdata(a, method):
    """``scipy.stats.rankdata`` of a vector: each entry's rank from 1 in sorted order, ties
    given the mean of their ranks ("average"), the least ("min"), the greatest ("max"), the
    count of distinct values up to them ("dense"), or their order of appearance ("ordinal");
    all NaN if an entry is NaN (SciPy's nan_policy="propagate"). Ranks are numbers made from
    comparisons: their derivative is zero wherever it exists, as a sort's order."""
    order = np.argsort(a, kind="mergesort")
    n = a.shape[0]
    out = np.zeros(n)
    i = 0
    distinct = 0
    while i < n:
        j = i  # the entries order[i..j] are equal
        while j + 1 < n and a[order[j + 1]] == a[order[i]]:
            j += 1
        distinct += 1
        for k in range(i, j + 1):
            if method == "average":
                out[order[k]] = 0.5 * (i + j) + 1.0
            elif method == "min":
                out[order[k]] = i + 1.0
            elif method == "max":
                out[order[k]] = j + 1.0
            elif method == "dense":
                out[order[k]] = distinct * 1.0
            else:
                out[order[k]] = k + 1.0
        i = j + 1
    if np.any(np.isnan(a)):
        out = out + np.nan
    return out


def spearmanr(a, b, alternative):
    """``scipy.stats.spearmanr`` of two vectors: Pearson's correlation of their average ranks,
    with its p-value from Student's t with n - 2 degrees of freedom, as SciPy computes it."""
    import scipy.stats
    return scipy.stats.pearsonr(rankdata(a, "average"), rankdata(b, "average"),
                                alternative=alternative)


def lfilter(b, a, x):
    """scipy.signal.lfilter of a vector, from a zero state: `lfilter_zi`'s output only."""
    n = max(a.shape[0], b.shape[0])
    return lfilter_zi(b, a, x, np.zeros(n - 1))[0]


def lfilter_zi(b, a, x, zi):
    """scipy.signal.lfilter(b, a, x, zi=zi) of a vector: the transposed direct form II, as
    SciPy computes it (the coefficients divided by a[0], both padded with zeros to one
    length; each output the first state plus b[0] x, then the states moved along). Returns
    the output and the final state."""
    n = max(a.shape[0], b.shape[0])
    bb = np.zeros(n)
    aa = np.zeros(n)
    bb[:b.shape[0]] = b / a[0]
    aa[:a.shape[0]] = a / a[0]
    z = np.zeros(n - 1)
    z[:] = zi
    y = np.zeros(x.shape[0])
    for m in range(x.shape[0]):
        ym = bb[0] * x[m]
        if n > 1:
            ym = ym + z[0]
        for k in range(n - 2):
            z[k] = bb[k + 1] * x[m] + z[k + 1] - aa[k + 1] * ym
        if n > 1:
            z[n - 2] = bb[n - 1] * x[m] - aa[n - 1] * ym
        y[m] = ym
    return y, z


def over_stack(fn, a, settings):
    """``fn`` (a function of one matrix: np.linalg.inv, svd...) of each matrix of the stack
    ``a`` (rank 3 or more), as NumPy's np.linalg maps it over the leading axes: the stack seen
    as one list of matrices, each result written into its row of an array of results (of the
    first matrix's result's shape), reshaped to the leading axes. ``fn`` returns an array or
    a number."""
    lead = a.shape[:-2]
    mats = np.reshape(a, (-1, a.shape[-2], a.shape[-1]))
    if mats.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    first = fn(mats[0], *settings)
    out = np.zeros((mats.shape[0],) + np.shape(first))
    out[0] = first
    for i in range(1, mats.shape[0]):
        out[i] = fn(mats[i], *settings)
    return np.reshape(out, lead + np.shape(first))


def over_stack_pair(fn, a, settings, result):
    """`over_stack` of a function whose result is a pair (np.linalg.eigh's, slogdet's),
    returned as ``result`` (the named tuple NumPy returns)."""
    lead = a.shape[:-2]
    mats = np.reshape(a, (-1, a.shape[-2], a.shape[-1]))
    if mats.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    x, y = fn(mats[0], *settings)
    xs = np.zeros((mats.shape[0],) + np.shape(x))
    ys = np.zeros((mats.shape[0],) + np.shape(y))
    xs[0] = x
    ys[0] = y
    for i in range(1, mats.shape[0]):
        xs[i], ys[i] = fn(mats[i], *settings)
    return result(np.reshape(xs, lead + np.shape(x)), np.reshape(ys, lead + np.shape(y)))


def over_stack_triple(fn, a, settings, result):
    """`over_stack` of a function whose result is three arrays (np.linalg.svd's U, S, Vh)."""
    lead = a.shape[:-2]
    mats = np.reshape(a, (-1, a.shape[-2], a.shape[-1]))
    if mats.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    x, y, z = fn(mats[0], *settings)
    xs = np.zeros((mats.shape[0],) + np.shape(x))
    ys = np.zeros((mats.shape[0],) + np.shape(y))
    zs = np.zeros((mats.shape[0],) + np.shape(z))
    xs[0] = x
    ys[0] = y
    zs[0] = z
    for i in range(1, mats.shape[0]):
        xs[i], ys[i], zs[i] = fn(mats[i], *settings)
    return result(np.reshape(xs, lead + np.shape(x)), np.reshape(ys, lead + np.shape(y)),
                  np.reshape(zs, lead + np.shape(z)))


def solve_for(b, a):
    """np.linalg.solve(a, b), with the right-hand side first (`over_stack` maps its first
    argument)."""
    return np.linalg.solve(a, b)


def solve_stacks(a, b):
    """np.linalg.solve of a stack of matrices ``a`` and a stack of right-hand sides ``b`` (each
    a matrix) of the same leading axes: each system on its own."""
    for k in range(a.ndim - 2):
        if a.shape[k] != b.shape[k]:
            raise ValueError("jitgrad: np.linalg.solve of stacks whose leading axes differ "
                             "(jitgrad does not broadcast them: repeat the smaller stack)")
    mats = np.reshape(a, (-1, a.shape[-2], a.shape[-1]))
    rhs = np.reshape(b, (-1, b.shape[-2], b.shape[-1]))
    out = np.zeros(rhs.shape)
    for i in range(mats.shape[0]):
        out[i] = np.linalg.solve(mats[i], rhs[i])
    return np.reshape(out, b.shape)


def _conv_window(n, m, mode):
    """The start and length, in the full convolution (of length n + m - 1), of autograd's
    ``mode`` of sizes n (A's) and m (B's) along one convolved axis."""
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":  # A's size, centred (SciPy's)
        return (m - 1) // 2, n
    return min(n, m) - 1, abs(n - m) + 1


def convolve_runtime_1(a, b, spec, mode):
    """autograd's convolve along one axis whose sizes are known only at run time: ``a`` with
    its convolved axis first, ``b`` with its convolved axis last; the full convolution is the
    sum over a's offsets w of ``einsum(spec, a[w], b)`` added at w along the last axis, then
    ``mode``'s window of it (``spec`` None: ``a`` is a vector, each term ``a[w] * b``)."""
    n = a.shape[0]
    m = b.shape[b.ndim - 1]
    out = np.zeros((b if spec is None else np.einsum(spec, a[0], b)).shape[:-1] + (n + m - 1,))
    for w in range(n):
        out[..., w:w + m] += a[w] * b if spec is None else np.einsum(spec, a[w], b)
    start, length = _conv_window(n, m, mode)
    return out[..., start:start + length]


def convolve_runtime_2(a, b, spec, mode):
    """`convolve_runtime_1` along two axes (``a``'s first two, ``b``'s last two)."""
    n1 = a.shape[0]
    n2 = a.shape[1]
    m1 = b.shape[b.ndim - 2]
    m2 = b.shape[b.ndim - 1]
    if mode == "valid" and (n1 - m1) * (n2 - m2) < 0:
        raise ValueError("jitgrad: autograd's convolve in mode 'valid': one array must be "
                         "larger than the other along all convolved dimensions")
    out = np.zeros((b if spec is None else np.einsum(spec, a[0, 0], b)).shape[:-2]
                   + (n1 + m1 - 1, n2 + m2 - 1))
    for w1 in range(n1):
        for w2 in range(n2):
            out[..., w1:w1 + m1, w2:w2 + m2] += \
                a[w1, w2] * b if spec is None else np.einsum(spec, a[w1, w2], b)
    start1, length1 = _conv_window(n1, m1, mode)
    start2, length2 = _conv_window(n2, m2, mode)
    return out[..., start1:start1 + length1, start2:start2 + length2]


def one_entry(x):
    """The entry of an array of one entry: what autograd's grad differentiates where the
    function returns such an array (`frontend.build`, ``one_entry``)."""
    if x.size != 1:
        raise ValueError("jitgrad: autograd's grad of a function whose result is an array of "
                         "more than one entry (it takes a scalar or an array of one entry)")
    return np.reshape(x, ())


def matrix_norms(m, ord, shape):
    """np.linalg.norm of order ``ord`` of each matrix of the stack ``m`` (its last two axes),
    reshaped to ``shape`` (None: as it is): the singular values' sum, largest or smallest, or
    the largest or smallest absolute column (1) or row (inf) sum."""
    if ord == "nuc":
        value = np.sum(np.linalg.svd(m, compute_uv=False), axis=-1)
    elif ord == 2:
        value = np.max(np.linalg.svd(m, compute_uv=False), axis=-1)
    elif ord == -2:
        value = np.min(np.linalg.svd(m, compute_uv=False), axis=-1)
    elif ord == 1:
        value = np.max(np.sum(np.abs(m), axis=-2), axis=-1)
    elif ord == -1:
        value = np.min(np.sum(np.abs(m), axis=-2), axis=-1)
    elif ord > 0:
        value = np.max(np.sum(np.abs(m), axis=-1), axis=-1)
    else:
        value = np.min(np.sum(np.abs(m), axis=-1), axis=-1)
    if shape is None:
        return value
    return np.reshape(value, shape)


def ufunc_outer(ufunc, a, b):
    """``u.outer(a, b)``: ``u`` of every pair, ``a``'s axes first, as NumPy defines it (``a``
    given one axis of size 1 for each of ``b``'s, then broadcast)."""
    a = np.asarray(a)
    b = np.asarray(b)
    return ufunc(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b)


def assigned_on_this_path(assigned, value):
    """``value`` of a name an ``if`` assigns on some of its paths only: Python raises
    UnboundLocalError where it is read on another, and so does this, at run time."""
    if not assigned:
        raise UnboundLocalError("a local variable read after an `if` that assigns it on some "
                                "of its paths only, on a path that did not assign it")
    return value


def attribute_set_on_this_path(assigned, value):
    """``value`` of an attribute an ``if`` sets on some of its paths only, on an object that
    had none before: Python raises AttributeError where it is read on another, and so does
    this, at run time."""
    if not assigned:
        raise AttributeError("an attribute read after an `if` that sets it on some of its "
                             "paths only, on a path that did not set it")
    return value


def list_index(items, value):
    """``out.index(value)`` of a list that is the array ``items`` of its items: the first
    position holding ``value``; Python raises ValueError where none does, and so does this."""
    found = items == value
    if not np.any(found):
        raise ValueError("list.index(x): x not in list")
    return np.argmax(found)


def list_count(items, value):
    """``out.count(value)`` of a list that is the array ``items`` of its items."""
    return np.sum(items == value)


def truth_of_one_entry(x):
    """``if a:`` of an array, as NumPy takes it: the truth of its one entry; NumPy raises for
    any other size, and so does this, at run time."""
    if x.size != 1:
        raise ValueError("the truth value of an array with other than one element is "
                         "ambiguous (use a.any() or a.all())")
    return np.reshape(x, ())


def multivariate_normal_logpdf_singular(dev, cov):
    """scipy.stats.multivariate_normal.logpdf with allow_singular=True, of ``dev = x - mean``
    (a vector or rows), as SciPy computes it: the eigenvalues of ``cov`` above SciPy's cutoff
    kept (its pseudo-determinant and pseudo-inverse), -inf where ``dev`` leaves the span of
    their eigenvectors, and SciPy's error for a matrix that is not positive semidefinite."""
    s, u = np.linalg.eigh(cov)
    eps = 1e6 * 2.220446049250313e-16 * np.max(np.abs(s))
    if np.min(s) < -eps:
        raise ValueError("The input matrix must be symmetric positive semidefinite.")
    keep = s > eps
    safe = np.where(keep, s, 1.0)
    log_pdet = np.sum(np.where(keep, np.log(safe), 0.0))
    proj = dev @ u
    maha = np.sum(proj ** 2 * np.where(keep, 1.0 / safe, 0.0), axis=-1)
    off_support = np.sum(np.where(keep, 0.0, proj) ** 2, axis=-1)
    out = -0.5 * (np.sum(keep) * 1.8378770664093453 + log_pdet + maha)  # (log 2 pi)
    return np.where(np.sqrt(off_support) < 1e3 * eps, out, -np.inf)


def exp_of(fn, *args, **kwargs):
    """The exp of another of these functions' value (a density from its logarithm)."""
    return np.exp(fn(*args, **kwargs))


def complex_prod(rows, axis_back=None, ones=None):
    """np.prod of a complex array along its first axis (its handler, `complex_numpy.prod`,
    moved the axis there): the product carried by a loop, so its derivative is exact where an
    entry is 0 (a quotient by the entry is not); ``axis_back``, ``ones``: NumPy's keepdims,
    the axis (or every axis, ``ones`` the shape of 1s) put back."""
    out = rows[0]
    for k in range(1, rows.shape[0]):
        out = out * rows[k]
    if axis_back is not None:
        out = np.expand_dims(out, axis_back)
    if ones is not None:
        out = np.reshape(out, ones)
    return out


def _joined(re, im, lead, is_complex):
    """A stack of results from its parts' rows (``im`` unused for a real result)."""
    re = np.reshape(re, lead + re.shape[1:])
    if is_complex:
        return re + 1j * np.reshape(im, lead + im.shape[1:])
    return re


def complex_over_stack(fn, x, y, settings, complex_result):
    """`over_stack` of a complex stack ``x + iy`` for ``fn`` of one result (np.linalg.svd
    with compute_uv=False, eigvals, a norm): the parts of each result written into their rows
    (``complex_result``: whether the result is complex)."""
    xs = np.reshape(x, (-1, x.shape[-2], x.shape[-1]))
    ys = np.reshape(y, (-1, y.shape[-2], y.shape[-1]))
    if xs.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    first = fn(xs[0] + 1j * ys[0], *settings)
    re = np.zeros((xs.shape[0],) + np.shape(first))
    im = np.zeros((xs.shape[0],) + np.shape(first))
    re[0] = np.real(first)
    im[0] = np.imag(first)
    for i in range(1, xs.shape[0]):
        r = fn(xs[i] + 1j * ys[i], *settings)
        re[i] = np.real(r)
        im[i] = np.imag(r)
    return _joined(re, im, x.shape[:-2], complex_result)


def complex_over_stack_pair(fn, x, y, settings, complex_result, result):
    """`complex_over_stack` for ``fn`` of two results (np.linalg.eigh's, eig's), returned as
    ``result`` (NumPy's named tuple); ``complex_result``: whether each is complex."""
    xs = np.reshape(x, (-1, x.shape[-2], x.shape[-1]))
    ys = np.reshape(y, (-1, y.shape[-2], y.shape[-1]))
    if xs.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    a, b = fn(xs[0] + 1j * ys[0], *settings)
    a_re = np.zeros((xs.shape[0],) + np.shape(a))
    a_im = np.zeros((xs.shape[0],) + np.shape(a))
    b_re = np.zeros((xs.shape[0],) + np.shape(b))
    b_im = np.zeros((xs.shape[0],) + np.shape(b))
    a_re[0], a_im[0], b_re[0], b_im[0] = np.real(a), np.imag(a), np.real(b), np.imag(b)
    for i in range(1, xs.shape[0]):
        a, b = fn(xs[i] + 1j * ys[i], *settings)
        a_re[i], a_im[i], b_re[i], b_im[i] = np.real(a), np.imag(a), np.real(b), np.imag(b)
    lead = x.shape[:-2]
    return result(_joined(a_re, a_im, lead, complex_result[0]),
                  _joined(b_re, b_im, lead, complex_result[1]))


def complex_over_stack_triple(fn, x, y, settings, complex_result, result):
    """`complex_over_stack` for ``fn`` of three results (np.linalg.svd's U, S, Vh)."""
    xs = np.reshape(x, (-1, x.shape[-2], x.shape[-1]))
    ys = np.reshape(y, (-1, y.shape[-2], y.shape[-1]))
    if xs.shape[0] == 0:
        raise ValueError("jitgrad: np.linalg of an empty stack of matrices")
    a, b, c = fn(xs[0] + 1j * ys[0], *settings)
    a_re = np.zeros((xs.shape[0],) + np.shape(a))
    a_im = np.zeros((xs.shape[0],) + np.shape(a))
    b_re = np.zeros((xs.shape[0],) + np.shape(b))
    b_im = np.zeros((xs.shape[0],) + np.shape(b))
    c_re = np.zeros((xs.shape[0],) + np.shape(c))
    c_im = np.zeros((xs.shape[0],) + np.shape(c))
    a_re[0], a_im[0], b_re[0], b_im[0] = np.real(a), np.imag(a), np.real(b), np.imag(b)
    c_re[0], c_im[0] = np.real(c), np.imag(c)
    for i in range(1, xs.shape[0]):
        a, b, c = fn(xs[i] + 1j * ys[i], *settings)
        a_re[i], a_im[i], b_re[i], b_im[i] = np.real(a), np.imag(a), np.real(b), np.imag(b)
        c_re[i], c_im[i] = np.real(c), np.imag(c)
    lead = x.shape[:-2]
    return result(_joined(a_re, a_im, lead, complex_result[0]),
                  _joined(b_re, b_im, lead, complex_result[1]),
                  _joined(c_re, c_im, lead, complex_result[2]))


def interp1d_at(x_new, x, y, bounds_error, below, above, assume_sorted):
    """A ``scipy.interpolate.interp1d(x, y)`` (linear, ``y`` a vector) called at ``x_new``:
    the points sorted unless ``assume_sorted``, ValueError as SciPy raises it where
    ``bounds_error`` and an entry is outside the points, else ``below`` / ``above`` there."""
    if not assume_sorted:
        order = np.argsort(x, kind="stable")
        x = x[order]
        y = y[order]
    if bounds_error:
        if np.any(x_new < x[0]):
            raise ValueError("A value in x_new is below the interpolation range.")
        if np.any(x_new > x[-1]):
            raise ValueError("A value in x_new is above the interpolation range.")
    return np.interp(x_new, x, y, left=below, right=above)


def complex_as_real(x, y):
    """The real matrix ``[[x, -y], [y, x]]`` that represents the complex matrix ``x + iy``
    (sums and products of such matrices represent those of the complex ones)."""
    return np.concatenate((np.concatenate((x, -y), axis=1),
                           np.concatenate((y, x), axis=1)), axis=0)


def complex_expm(x, y):
    """scipy.linalg.expm of the complex matrix ``x + iy``: the exponential of the real matrix
    that represents it (`complex_as_real`) represents its exponential."""
    n = x.shape[0]
    e = expm(complex_as_real(x, y))
    return e[:n, :n] + 1j * e[n:, :n]


def complex_inv(x, y):
    """np.linalg.inv of the complex matrix ``x + iy``, by the real matrix that represents it."""
    n = x.shape[0]
    e = np.linalg.inv(complex_as_real(x, y))
    return e[:n, :n] + 1j * e[n:, :n]


def complex_solve(x, y, br, bi):
    """np.linalg.solve of the complex system ``(x + iy) z = br + i bi`` (``b`` a vector or a
    matrix of columns), by the real system that represents it."""
    n = x.shape[0]
    u = np.linalg.solve(complex_as_real(x, y), np.concatenate((br, bi), axis=0))
    return u[:n] + 1j * u[n:]
