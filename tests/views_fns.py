"""Writing through views (issue #25 item 4): the idioms of Numba simulation code.

Each function writes into an array through a view of it (a row, a slice, a strided slice,
``.T``, a newaxis, a view of a view), in straight code, loops, branches and callees, then
reads the array (and often the view again). `test_views` checks each against plain Python,
central differences and the tape, and that the caller's arrays are unchanged.
"""

import numpy as np


def row_filled(U, x):
    u = U[0]  # a view of an argument: U is copied on entry, the caller's U is unchanged
    u[:] = np.sin(x) * 2.0
    return np.sum(U * U) + np.sum(u)


def row_of_copy_filled(U, x):
    V = U.copy()
    u = V[1]
    u[:] = x * 3.0
    return np.sum(V ** 2)


def row_written_in_loop(U, x):
    u = U[1]
    for j in range(x.shape[0]):
        u[j] = u[j] * x[j] + 0.5 * u[j - 1]
    return np.sum(U ** 2)


def row_plus_equals(A, w):
    v = A[1]
    v += w
    return np.sum(np.sin(A)) + np.sum(v * w)


def row_times_equals(A, s):
    row = A[2, :]
    row *= s
    return np.sum(A * A)


def segment_zeroed(x):
    seg = x[1:3]
    seg[:] = 0.0
    return np.sum(x * x) + np.sum(np.exp(x))


def segment_written_in_loop(x):
    seg = x[1:]
    for j in range(seg.shape[0] - 1):
        seg[j] = seg[j] * 3.0 + seg[j + 1]
    return np.sum(x ** 2)


def view_of_slice_filled(x):
    x[1:][...] = x[:-1] * 2.0
    return np.sum(x ** 3)


def view_of_view(x):
    y = x * 2.0
    u = y[1:]
    w = u[1:]
    w[0] = 3.0 * w[1]
    w[:] *= u[0]
    return np.sum(y * y) + np.sum(u)


def transposed_writes(A, x):
    At = A.T
    At[1] = x[:3]
    At[2, 1] = 4.0 * x[0]
    At[1:3, 0:2] = np.outer(x[:2], x[1:3])  # a region of rank 2: written back
    return np.sum(A ** 3)


def strided_writes(x):
    seg = x[::2]
    seg[1] = seg[0] * 5.0  # a step: the view's values written back over its region
    seg += 1.0
    return np.sum(x ** 3)


def newaxis_writes(x):
    v = x[None]
    v[0, 1] = 3.0 * x[2]
    v[:, 2:] = 1.0
    return np.sum(x ** 2)


def view_read_after_write(x):
    z = x * 2.0
    y = z[1:]
    z[1] = 5.0  # y shows the new value, as in NumPy
    return np.sum(y * x[1:])


def loop_reads_view_of_written_array(x):
    A = x.copy()
    row = A[0:2]
    s = 0.0
    for i in range(x.shape[0]):
        s += row[0] * x[i]  # row[0] is A[0], written by the previous iteration
        A[0] = s * 2.0
    return s


def scale_row(r, x):
    for j in range(r.shape[0]):
        r[j] = r[j] * x[j]


def kernel_on_rows(U, x):
    for i in range(U.shape[0]):
        scale_row(U[i], x)  # the callee writes into a view of U
    return np.sum(U ** 2)


def rows_in_loop(U, x):
    for i in range(U.shape[0]):
        row = U[i]
        row[:] = row * x + 1.0
    return np.sum(U ** 2)


def written_on_branch(U, x):
    u = U[0]
    if x[0] > 0.0:
        u[:] = x
    else:
        u[1:] = x[:-1] * 3.0
    return np.sum(U * U) + np.sum(u)


def written_in_while(U, x):
    u = U[1]
    k = 0
    while k < 3:
        u[k] = u[k] + x[k] * u[k + 1]
        k += 1
    return np.sum(U ** 2)


def filled_row(U, s):
    u = U[1]
    u.fill(s)
    return np.sum(U * U)


def heat_rows(u0, alpha):
    """Explicit heat steps, each row of U one time level (Numba simulation style)."""
    n = u0.shape[0]
    U = np.zeros((4, n))
    U[0] = u0
    for t in range(3):
        u = U[t]
        un = U[t + 1]
        un[0] = u[0]
        un[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            un[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return np.sum(U[3] ** 2) + np.sum(U[1])


def leapfrog(q0, p0, dt):
    """Positions and momenta as two rows of one state array, updated through views."""
    S = np.zeros((2, q0.shape[0]))
    q = S[0]
    p = S[1]
    q[:] = q0
    p[:] = p0
    for _ in range(3):
        p -= 0.5 * dt * np.sin(q)
        q += dt * p
        p -= 0.5 * dt * np.sin(q)
    return np.sum(S[0] ** 2) + np.sum(np.cos(S[1]))


# Edge cases: out=, an array with no name, run-time and negative row indices, nested loops,
# a view of an array the loop rebinds, columns, aliases of views, branches, steps, .T in loops.
def out_into_row(U, x):
    u = U[1]
    np.exp(u, out=u)
    return np.sum(U * x)
def row_of_unnamed_array(x):
    u = np.zeros((3, 4))[1]
    for j in range(4):
        u[j] = x[j] * u[j - 1] + x[j]
    return np.sum(u * u)
def rows_at_negative_indices(U, x):
    for k in range(3):
        u = U[k - 3]
        u[1:] += x[:-1] * u[0]
    return np.sum(U ** 2)
def row_per_outer_iteration(U, x):
    for i in range(3):
        u = U[i]
        for j in range(1, 4):
            u[j] = u[j - 1] * x[j] + u[j]
    return np.sum(U ** 2)
def view_of_array_rebound_in_loop(x):
    y = x.copy()
    for i in range(3):
        y = y * 1.5
        seg = y[1:]
        seg *= x[0]
    return np.sum(y ** 2)
def column_written_in_loop(A, x):
    c = A[:, 2]
    for i in range(3):
        c[i] = c[i] * x[i] + c[i - 1]
    return np.sum(A ** 2)
def alias_of_view_written(U, x):
    u = U[0]
    w = u
    w[:] = x
    u[1] = 3.0 * u[2]
    return np.sum(U ** 2) + np.sum(w)
def view_read_after_writes_into_array(U, x):
    u = U[2]
    U[2, 1] = x[0] * 4.0
    U *= 2.0
    return np.sum(u * x)
def branch_in_loop_over_row(U, x):
    u = U[1]
    for j in range(4):
        if x[j] > 0.0:
            u[j] = x[j] * u[j - 1]
        else:
            u[j] *= 0.5
    return np.sum(U ** 2) + np.sum(u)
def strided_view_in_loop(x):
    ev = x[::2]
    for j in range(ev.shape[0]):
        ev[j] = ev[j] * 2.0 + x[1]
    return np.sum(x ** 2)
def reversed_view_written(x):
    r = x[::-1]
    r[0] = x[0] * 3.0
    r[1:] += 1.0
    return np.sum(x ** 3)
def transpose_rows_in_loop(A, x):
    At = A.T
    for j in range(4):
        At[j] = At[j] * x[j]
        At[j, 0] += 1.0
    return np.sum(A ** 2)


def row_in_nested_loops(U, x):
    u = U[0]
    for i in range(3):
        for j in range(2):
            u[j] = u[j] * x[j] + x[i]
        U[1] = U[1] + u
    return np.sum(U ** 2) + np.sum(u * u)


# The same computations written into the arrays themselves: the tape (which refuses writes
# through views) differentiates these, an oracle independent of jitgrad's view handling. The
# tape refuses writes into its arguments and into np.zeros: they copy, and allocate from x.


def row_filled_direct(U, x):
    U = U.copy()
    U[0, :] = np.sin(x) * 2.0
    return np.sum(U * U) + np.sum(U[0])


def row_written_in_loop_direct(U, x):
    U = U.copy()
    for j in range(x.shape[0]):
        U[1, j] = U[1, j] * x[j] + 0.5 * U[1, j - 1]
    return np.sum(U ** 2)


def row_plus_equals_direct(A, w):
    A = A.copy()
    A[1] = A[1] + w
    return np.sum(np.sin(A)) + np.sum(A[1] * w)


def segment_written_in_loop_direct(x):
    x = x.copy()
    for j in range(x.shape[0] - 2):
        x[1 + j] = x[1 + j] * 3.0 + x[2 + j]
    return np.sum(x ** 2)


def transposed_writes_direct(A, x):
    A = A.copy()
    A[:, 1] = x[:3]
    A[1, 2] = 4.0 * x[0]
    A[0:2, 1:3] = np.outer(x[:2], x[1:3]).T
    return np.sum(A ** 3)


def strided_writes_direct(x):
    x = x.copy()
    x[2] = x[0] * 5.0
    x[0::2] = x[0::2] + 1.0
    return np.sum(x ** 3)


def heat_rows_direct(u0, alpha):
    n = u0.shape[0]
    U = np.outer(np.ones(4), u0) * 0.0
    U[0] = u0
    for t in range(3):
        U[t + 1, 0] = U[t, 0]
        U[t + 1, n - 1] = U[t, n - 1]
        for i in range(1, n - 1):
            U[t + 1, i] = U[t, i] + alpha * (U[t, i - 1] - 2.0 * U[t, i] + U[t, i + 1])
    return np.sum(U[3] ** 2) + np.sum(U[1])


def leapfrog_direct(q0, p0, dt):
    S = np.outer(np.ones(2), q0) * 0.0
    S[0] = q0
    S[1] = p0
    for _ in range(3):
        S[1] = S[1] - 0.5 * dt * np.sin(S[0])
        S[0] = S[0] + dt * S[1]
        S[1] = S[1] - 0.5 * dt * np.sin(S[0])
    return np.sum(S[0] ** 2) + np.sum(np.cos(S[1]))
