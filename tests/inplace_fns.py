"""Functions that write into arrays: the memory model's regression table (issue #10).

Each was once a silently wrong gradient, a false refusal or a modified argument. They are
written as a user writes them: in-place operators, aliases, writes by a called function into
the caller's array, output-argument kernels that return nothing, writes in loops and branches.
"""

import numpy as np


def exp_then_halve(x):  # two saved versions of p once shared one name in the adjoint
    p = np.exp(x)
    p /= 2.0
    return np.log(p).sum()


def normalise_slice(x):
    y = x[1:] * 2.0
    m = np.max(y)
    y /= m
    return np.sum(y)


def fill(u, D):
    for i in range(u.shape[0]):
        D[i] = 2.0 * u[i]
    return D


def callee_fills_caller_array(u):  # the callee once wrote into a copy
    D = np.zeros_like(u)
    fill(u, D)
    return np.sum(D)


def times_one_then_update(x):  # x * 1.0 is a new array, not another name for x
    p = x * 1.0
    p /= 2.0
    return np.sum(p * p)


def scale_in_place(x, s):  # the adjoint of *= needs y before the update
    y = np.sin(x)
    y *= s
    return np.sum(y * y)


def outer_times_one(x, B):
    v = np.outer(x, B[2])
    v *= 1.0
    return np.sum(v)


def alias_before_loop(x):  # `a` sees the loop's writes into b
    b = np.zeros(3)
    a = b
    for k in range(3):
        b[k] = x[k] * 2.0
    return np.sum(a * a)


def alias_of_argument_in_loop(x):  # writes into the caller's x under another name
    acc = x
    for _ in range(2):
        acc += 1.0
    return np.sum(x * x)


def outer_of_overwritten(x, s):  # np.outer's adjoint needs b before the second write
    b = np.zeros(3)
    b[0] = x[0]
    c = np.outer(b, x)
    b[0] = s
    return np.sum(c) + np.sum(b)


def square_into(x, out):  # a Numba output-argument kernel: returns nothing
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]


def output_argument_kernel(x, w):
    out = np.zeros_like(x)
    square_into(x, out)
    return np.sum(out * w)


def kernel_in_loop(x, w):  # a callee's write inside the caller's loop
    out = np.zeros_like(x)
    total = 0.0
    for _ in range(3):
        square_into(x * w, out)
        total += np.sum(out)
        w = w * 0.5
    return total


def scale_rows(A, s):
    for i in range(A.shape[0]):
        A[i] *= s


def callee_updates_argument(A, s):  # a called function updating an argument of f
    scale_rows(A, s)
    return np.sum(A * A)


def write_on_one_branch(x, s):
    y = np.cos(x)
    if s > 0.0:
        y[0] = s * s
    else:
        y[1] = s
    return np.sum(y * x)


def branch_in_callee(u, D, s):
    if s > 0.0:
        D[0] = s * u[0]
    return D


def callee_writes_on_branch(u, s):
    D = np.ones_like(u)
    branch_in_callee(u, D, s)
    return np.sum(D * u)


def slice_writes(x):
    y = np.zeros(5)
    y[1:4] = x * 2.0
    y[0] = y[1] + y[3]
    y[2:] *= y[0]
    return np.sum(y * y)


def column_and_row_writes(A, v):
    B = A.copy()
    B[:, 0] = v
    B[1, :] += v[:3]
    return np.sum(B * A)


def self_shift(x):  # the right-hand side reads the memory being written
    y = x * 1.0
    y[1:] = y[:-1] * 0.5
    return np.sum(y * y)


def reassigned_after_write(x):
    y = np.exp(x)
    y[0] = 1.0
    z = y
    y = y * 2.0
    z[1] = 3.0
    return np.sum(y) + np.sum(z * z)


def write_through_alias(x):  # was refused: an argument written under another name
    y = x
    y[0] = 0.0
    return np.sum(y * y) + np.sum(x)


def loop_reads_alias(x):  # was refused: C names A, so it sees A's writes
    A = x.copy()
    C = A
    s = 0.0
    for i in range(x.shape[0]):
        s += C[0] * x[i]
        A[0] = A[0] + s
    return s


def whole_array_writes(x, y):
    z = np.zeros_like(x)
    z[:] = y * 2.0
    z[...] *= x
    w = z.copy()
    w[...] = 0.5
    z += w
    return np.sum(z * z)


def ellipsis_row_write(A, v):
    B = A * 1.0
    B[0, ...] = v
    B[..., 1] *= 2.0
    return np.sum(B * A)


def fill_scaled(out, v, s):
    out[:] = v * s


def kernel_feeds_carried_scalar(x, s):  # the carried array's update is rebuilt in reverse
    o = np.zeros_like(x)
    for _ in range(3):
        fill_scaled(o, x, s)
        s = s + np.sum(o)
    return s


def double_then_add(D, u):
    D *= 2.0
    D += u
    return np.sum(D)


def callee_returns_sum_after_writes(x, u):
    D = x * 1.0
    t = double_then_add(D, u)
    return t + np.sum(D * D)


def mix_first_two(a):
    a[0] = a[0] * a[1]
    a[1] = a[0] + 1.0


def callee_called_twice(x):
    y = x + 0.0
    mix_first_two(y)
    mix_first_two(y)
    return np.sum(y * x)


def writes_in_while(x, s):
    y = np.cos(x)
    i = 0
    while i < 2:
        y[i] = y[i] * s
        i += 1
    return np.sum(y * y)


def whole_update_in_loop(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * 2.0
        y *= 0.5
    return np.sum(y * x)


def repeated_expression_written(x, A):  # np.square(x) twice: two arrays, one written into
    a0 = np.square(x)
    a0[-1] -= A[-1, -1]
    return np.mean(np.square(x)) + np.sum(a0)


def decay_rate(y):
    return -0.5 * y


def alias_rebound_in_loop(y0, h):  # y names y0's array only until the loop rebinds it
    y = y0
    for _ in range(3):
        y = y + h * decay_rate(y)
    return np.sum(y * y) + np.sum(y0)


def mean_axis0_of_vector(x):  # issue #10's g6: a reduction with axis= of a 1-D array crashed
    return np.mean(np.sin(x), axis=0) ** 2


def sine_of(v):
    return np.sin(v)


def add_rows(M, v):
    for i in range(M.shape[0]):
        M[i, :] += sine_of(v)


def callee_reads_array_in_loop(x, A):  # v is passed to a function in a loop, never written
    A[:, 0] = A[-1, -1] / (1.0 + A[-1, -1] * A[-1, -1])
    add_rows(A, x)
    return np.sum(A * A) + np.sum(np.sin(x))


def noop_kernel(D, c):
    pass


def alias_rebound_then_called(x, y, A):  # a0 = A, rebound in a loop: A keeps its own array
    A /= 2.0
    a0 = A
    for _ in range(3):
        a0 = np.tanh(np.outer(y, x) + a0 / (1.0 + A * A))
    noop_kernel(a0, 1.0)
    return np.sum(a0) + np.sum(A * A)


# Increments ``y[i] += u``: their adjoint passes the element's adjoint to u and leaves it in
# place (`reverse._increments`); an adjoint loop adding into one fixed element adds into a
# scalar instead (`optimise.sums_in_registers`).


def increments_in_a_loop(x, w):  # += and -=, the second reading another element (y[-1] at 0)
    y = x * 1.0
    for i in range(y.shape[0]):
        y[i] += w * x[i] ** 2
        y[i] -= 0.5 * np.sin(y[i - 1])
    return np.sum(y * y)


def increment_from_the_left_and_of_itself(x, w):  # y[i] = u + y[i]; y[i] += y[i] * w
    y = np.cos(x)
    for i in range(y.shape[0]):
        y[i] = w * x[i] + y[i]
        y[i] += y[i] * w
    return np.sum(y * y * y)


def triangle_by_columns(L, x):  # ADBench's Q x: out[r] += L[idx] * x[c] over r, c fixed
    d = x.shape[0]
    out = np.exp(x)
    idx = 0
    for c in range(d):
        for r in range(c + 1, d):
            out[r] += L[idx] * x[c]
            idx += 1
    return np.sum(out * out)


def fixed_element_written_in_the_loop(x, w):  # y[c] is read and, at r == c, written
    y = x * 1.0
    c = 1
    for r in range(y.shape[0]):
        y[r] += y[c] * w[r]
    return np.sum(y * y)


def empty_inner_loops_past_the_end(x):  # for c >= d the inner loop is empty: x[c] never read
    d = x.shape[0]
    out = x * x
    for c in range(d + 2):
        for r in range(c + 1, d):
            out[r] += np.sin(x[c]) * x[r]
    return np.sum(out * out)


def incremented_value_read_again(x, w):  # z = y[i] + u is written and also read
    y = np.sin(x)
    total = 0.0
    for i in range(y.shape[0]):
        z = y[i] + w * x[i]
        y[i] = z
        total += z * z
    return total + np.sum(y * x)


def matvec_in_place(A, x):  # i is read in the written index, never rebound
    y = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            y[i] += A[i, j] * x[j]
    return np.sum(np.tanh(y))
