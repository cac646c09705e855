"""Functions for the shape-and-axes corpus (``corpus_shape.py``), written here in the style of
the peers' tests and of public Numba kernels (issue #11, second round).

Each exercises what the first surface corpus left out: axis permutations (``swapaxes``,
``moveaxis``, ``rollaxis``, ``rot90``), repetition (``repeat`` along an axis, ``tile``),
products over named axes (``tensordot``, ``np.dot`` of a 3-D array, ``kron``, ``cross``),
diagonals with an offset, splits and stacks by axis name, norms over an axis and p-norms,
products and running sums along one axis, ``np.roll`` along an axis, ``arccosh``/``arctanh``/
``logaddexp2``, the complex-part functions on real arrays, square roots at zero (distance
matrices), loops that swap two arrays, ``x.fill``, string arguments. Every function returns a
scalar and leaves its arguments alone.
"""

import math
import operator

import numpy as np
from scipy import special
from scipy.stats import norm

# ---- axis permutations ----------------------------------------------------------------------


def permuted_weights(x, w):
    """A batch of images moved to channels-last three ways, weighted."""
    a = np.swapaxes(x, 0, 2)
    b = np.moveaxis(x, 0, -1)
    c = np.rollaxis(x, 2)
    return np.sum(a * w) + np.sum(b ** 2) + np.sum(np.sin(c))


def rotated_stencil(u):
    r = np.rot90(u)
    return np.sum(r[0] * 2.0) + np.sum(np.rot90(u, 2) * u) + np.sum(np.flipud(u) - np.fliplr(u))


def as_columns(v, m):
    return np.sum(np.atleast_2d(v) * m) + np.sum(np.atleast_3d(m) ** 2)


# ---- repetition -----------------------------------------------------------------------------


def upsample_rows(x):
    """Nearest-neighbour upsampling: each row twice, each column three times."""
    y = np.repeat(np.repeat(x, 2, axis=0), 3, axis=1)
    return np.sum(y * y) + np.sum(x.repeat(2) * 0.5)


def tiled_bias(b, x):
    return np.sum(np.tanh(x + np.tile(b, (x.shape[0], 1)))) + np.sum(np.tile(b, 2) * b[0])


# ---- products over named axes -----------------------------------------------------------------


def bilinear_form(a, w, b):
    """sum_ij a_i w_ijk b_jk... by tensordot, as autograd's tests and physics codes write it."""
    t = np.tensordot(w, b, axes=([1, 2], [0, 1]))
    return np.dot(a, t) + np.sum(np.tensordot(a, w, axes=1) ** 2)


def batched_dot(x, v):
    return np.sum(np.dot(x, v) ** 2) + np.sum(np.inner(x, x[0]))


def kron_block(a, b):
    return np.sum(np.kron(a, b) ** 2) + np.sum(np.kron(a[0], b[0]))


def torque(r, f):
    """The torque of forces f at positions r (rows of 3-vectors)."""
    tau = np.cross(r, f)
    return np.sum(tau ** 2) + np.sum(np.cross(r[0], f[1]))


# ---- diagonals ------------------------------------------------------------------------------


def banded_trace(a):
    return (np.trace(a, offset=1) + np.trace(a, -1) * 2.0 + np.sum(np.diagonal(a, 1) ** 2)
            + a.trace())


def tridiagonal(d, e):
    m = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    return np.sum(m @ m)


def masked_stack(x):
    """The lower triangles of a stack of matrices (tril of a 3-D array)."""
    return np.sum(np.tril(x, -1) ** 2) + np.sum(np.triu(x) * 0.5)


# ---- splits, stacks --------------------------------------------------------------------------


def split_by_name(x):
    left, right = np.hsplit(x, 2)
    top, bottom = np.vsplit(x, [1])
    return np.sum(left * right) + np.sum(top) - np.sum(bottom ** 2)


def stack_columns(a, b):
    m = np.column_stack((a, b))
    grown = np.append(a, b)
    return np.sum(m ** 2 * np.arange(2)) + np.sum(grown * grown[::-1])


# ---- reductions and scans along one axis ------------------------------------------------------


def row_products(x):
    return np.sum(np.prod(x, axis=1)) + np.sum(x.prod(axis=0, keepdims=True) * 2.0)


def product_rows_with_zero(x):
    return np.sum(np.prod(x, axis=0) ** 2)


def running_columns(x):
    c = np.cumsum(x, axis=0)
    return np.sum(c * c) + np.sum(np.cumsum(x, axis=1)[:, -1])


def rolled_rows(u):
    """A periodic Laplacian by np.roll along each axis (reaction-diffusion codes)."""
    lap = (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
           + np.roll(u, -2, axis=1) - 4 * u)
    return np.sum(lap * lap)


def axis_norms(x):
    return (np.sum(np.linalg.norm(x, axis=1)) + np.linalg.norm(x[0], ord=3)
            + np.linalg.norm(x[1], 1) + np.linalg.norm(x[2], np.inf) + np.linalg.norm(x, "fro"))


def deviations(x):
    """std with ddof along an axis, and of rows that can be constant (its gradient is 0)."""
    return np.sum(np.std(x, axis=0, ddof=1)) + np.std(x[0] * 0.0 + 1.5)


# ---- elementwise ------------------------------------------------------------------------------


def inverse_hyperbolic(x, y):
    return np.sum(np.arccosh(1.5 + x * x) + np.arctanh(0.5 * np.tanh(y)) + np.logaddexp2(x, y))


def real_parts(x):
    return np.sum(np.real(x) * np.conj(x) + np.imag(x) + np.angle(x))


def operator_forms(x, y):
    return (np.sum(operator.mod(x, 1.7) * y) + float(operator.abs(x[0]))
            + math.acosh(1.1 + x[1] ** 2) + math.atanh(0.5 * math.tanh(y[0])))


# ---- square roots at zero --------------------------------------------------------------------


def distance_matrix(x):
    """All pairwise distances, the zero diagonal included (sqrt(0): gradient 0, not NaN)."""
    n = x.shape[0]
    d = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(x.shape[1]):
                t = x[i, k] - x[j, k]
                s += t * t
            d[i, j] = np.sqrt(s)
    return np.sum(d)


def vectorised_distances(x):
    diff = x[:, None, :] - x[None, :, :]
    return np.sum(np.sqrt(np.sum(diff * diff, axis=2)))


# ---- loops that swap or fill arrays ----------------------------------------------------------


def relax(u, unew):
    for i in range(1, u.shape[0] - 1):
        unew[i] = 0.5 * (u[i - 1] + u[i + 1])


def jacobi_swaps(u):
    """Jacobi sweeps that swap the two buffers each step (`u, unew = unew, u`)."""
    unew = u.copy()
    for _ in range(3):
        relax(u, unew)
        u, unew = unew, u
    return np.sum(u * u)


def ewma_filled(data, alpha):
    out = np.empty(data.shape[0])
    out.fill(0.0)
    w = 1
    e = data[0]
    out[0] = e
    for i in range(1, data.shape[0]):
        w += (1 - alpha) ** i  # an int before the loop, a float in it
        e = e * (1 - alpha) + data[i]
        out[i] = e / w
    return np.sum(out * out)


def string_arguments(x):
    return np.sum(x.astype("float64") ** 2) + np.linalg.norm(x, ord="fro")


# ---- order statistics, cleaning, indexing forms ---------------------------------------------


def order_statistics(x):
    s = np.sort(x)
    return (np.sum(s * np.arange(s.shape[0])) + np.median(x) * 3.0 + np.percentile(x, 30)
            + np.quantile(x, 0.75))


def cleaned_logs(x):
    """log of negative entries is NaN; np.nan_to_num makes it 0 (and its gradient 0)."""
    return np.sum(np.nan_to_num(np.log(x)) * x)


def pick_by_index(a, b, c, i):
    """A tuple indexed at run time (Tangent's passthru_pack)."""
    x = a, b * 2.0, c
    return x[i] * x[0]


def rows_by_list(x):
    return np.sum(x[[0, 2, 2]] ** 2) + np.sum(x[[1]])


def one_array_stacks(m):
    return np.sum(np.vstack(m) * np.hstack(m)[: m.shape[1]]) + np.sum(np.column_stack(m) ** 2)


def rows_by_cast(w):
    """Row indices cast from a float column (autograd's test_cast_to_int)."""
    idx = np.int64(w[:, -1])
    return np.sum(w[:, :-1][idx] ** 2)


def stack_rows(x):
    """Rows of a stack by a list of integers (autograd's test_index_lists)."""
    return np.sum(x[[0, 2], :, :] ** 2) + np.sum(x[[1, 1]] * x[0])


# ---- SciPy functions NumPy-style kernels call ------------------------------------------------


def black_scholes_vectorised(s, k, t, r, sigma):
    """The NumPy-benchmark form, with scipy.stats.norm.cdf on arrays."""
    d1 = (np.log(s / k) + (r + 0.5 * sigma ** 2) * t) / (sigma * np.sqrt(t))
    d2 = d1 - sigma * np.sqrt(t)
    call = s * norm.cdf(d1) - k * np.exp(-r * t) * norm.cdf(d2)
    return np.sum(call) + np.sum(norm.pdf(d1, 0.1, 2.0) + norm.logpdf(d2, scale=sigma))


def logistic_special(w, x, y):
    p = special.expit(x @ w)
    return (-np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)) + special.logsumexp(x @ w)
            + np.sum(special.logsumexp(x, axis=1)) + np.sum(special.erf(w)))


def smoothed(signal, kernel):
    """Moving averages by np.convolve, in its three modes (Numba compiles np.convolve)."""
    return (np.sum(np.convolve(signal, kernel, mode="same") ** 2)
            + np.sum(np.convolve(kernel, signal, "valid") * 1.5) + np.sum(np.convolve(signal, kernel)))


def batched_matmul(a, b):
    """Stacks of matrices multiplied, broadcast over the leading axis (np.matmul, @)."""
    return np.sum(np.matmul(a, b) ** 2) + np.sum((a @ b[0]) * 0.5)
