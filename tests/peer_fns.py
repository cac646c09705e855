"""Functions of the kinds the closest peers' own suites differentiate (issue #11): Tangent's
``tests/functions.py`` (scalar control flow, overwrites, subscripts, packed arguments, calls,
loops writing rows) and autograd's NumPy tests (one NumPy function each). Written here for
jitgrad from the constructs those suites exercise, not copied from them. ``test_peer_fns.py``
sorts each into differentiated, refused (with the reason) or wrong/crashing, which must stay
empty.
"""

import numpy as np

# ---- Tangent-style: scalars, control flow, overwrites --------------------------------------------


def negate_then_square(a):
    b = -a
    return b * b


def rebind_argument(a):
    a = a * 2.5
    a = a + 1.0
    return a


def alias_then_rebind(a):
    b = a
    b = b * b
    return b + a


def scale_by_sign_branch(a):
    if a > 0.0:
        a = a * 4.0
    else:
        a = a * -1.5
    return a


def nested_branches(a):
    if a > 0.0:
        if a < 2.0:
            a = a * a
        else:
            a = a * 3.0
    else:
        a = 2.0 * a
    return a


def elif_chain(a, b):
    if a > b + 1.0:
        c = a * b
    elif a < b - 1.0:
        c = a / b
    else:
        c = a - b
    return c * c


def repeated_squaring(a, n):
    for _ in range(n):
        a = a * a
    return a


def loops_in_sequence(a, n):
    for _ in range(n):
        a = 0.9 * a + 0.1 * a * a
    b = a
    for _ in range(n + 2):
        b = b * 1.1
    return b


def branch_inside_loop(a):
    for _ in range(4):
        if a < 5.0:
            a = a * 1.5
    return a


def loop_inside_branch(a):
    if a < 3.0:
        for _ in range(3):
            a = a * a * 0.5
    return a


def nested_loops_scalar(a):
    for _ in range(2):
        for _ in range(2):
            a = a * 1.2 + 0.1
    return a


def while_halving(a):
    while np.abs(a) > 0.3:
        a = a * 0.5
    return a


def helper_product(a, b):
    return a * b


def calls_in_branches(a, b):
    if a > b:
        return helper_product(a, b)
    return helper_product(b, b)


def nested_def_in_loop(a, n):
    def step(u, v):
        return u * v * 0.5

    for _ in range(n):
        a = step(a, a) + 1.0
    return a


def augmented_ops(a):
    x = a * 2.0
    x *= x
    x -= a
    x /= 3.0
    return x


def unpack_packed_argument(abc):
    a, b, c = abc
    return a * b + c


def first_of_packed(abc):
    a, _, _ = abc
    return a * a


def pick_from_tuple_by_int(a, b, c, i):
    x = a, b, c
    return x[i]


def list_of_scalars_sum(a):
    b = [1.0, a * a, 2.0]
    return np.sum(np.array(b))


def dict_argument(d):
    return d["a"] * d["b"]


def list_comprehension(x):
    return np.sum(np.array([v * 2.0 for v in x]))


def returns_two_values(a):
    return a * 2.0, a


# ---- Tangent-style: arrays, subscripts, writes ---------------------------------------------------


def read_two_entries(x):
    return x[0] * x[2]


def overwrite_entry_of_argument(x):
    p = x[0] * x[1]
    x[0] = p
    return np.sum(x)


def write_from_squares(x):
    y = x ** 2.0
    x[1] = y[0] * y[2]
    return np.sum(x * y)


def copy_entries_in_loop(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * (i + 1.0)
    return np.sum(y)


def rows_from_entries(x):
    h = np.zeros((len(x), 3))
    for t in range(len(h)):
        h[t] = x[t]
    return np.sum(h * h)


def rnn_rows(inputs, w):
    h = np.zeros((4, 3))
    for t in range(3):
        h[t + 1] = np.dot(inputs[t], w) + h[t]
    return np.sum(h[1:] ** 2)


def bilinear_tanh(x, h, u, w, b):
    y = np.dot(x, w) + np.dot(h, u) + b
    return np.sum(np.tanh(y))


def tanh_classifier(inputs, labels, w, b):
    p = 0.5 * (np.tanh(inputs @ w + b) + 1.0)
    lik = p * labels + (1.0 - p) * (1.0 - labels)
    return -np.sum(np.log(lik))


def strided_newaxis(x):
    return np.sum(x[::2, np.newaxis] * 3.0)


# ---- autograd-style: one NumPy function each -----------------------------------------------------


def np_sum_axis_keepdims(x):
    return np.sum(np.sum(x ** 2, axis=1, keepdims=True) * x)


def np_mean_axis(x):
    return np.sum(np.mean(x, axis=0) ** 2)


def np_max_axis(x):
    return np.sum(np.max(x, axis=1))


def np_min_all(x):
    return np.min(x) * 2.0


def np_prod_axis(x):
    return np.sum(np.prod(x, axis=0))


def np_var_ddof(x):
    return np.var(x, ddof=1) + np.std(x, axis=0, ddof=1).sum()


def np_cumsum_axis(x):
    return np.sum(np.cumsum(x, axis=0) ** 2)


def np_cumprod_vector(x):
    return np.sum(np.cumprod(x))


def np_tensordot(a, b):
    return np.sum(np.tensordot(a, b, axes=1))


def np_kron(a, b):
    return np.sum(np.kron(a, b))


def np_cross(a, b):
    return np.sum(np.cross(a, b))


def np_einsum(a, b):
    return np.einsum("ij,jk->", a, b)


def np_outer_inner(a, b):
    return np.sum(np.outer(a, b)) + np.inner(a, b)


def np_trace_diag(x):
    return np.trace(x) + np.sum(np.diag(np.diag(x)))


def np_tril_triu(x):
    return np.sum(np.tril(x, -1) ** 2 + np.triu(x, 1))


def np_rot90(x):
    return np.sum(np.rot90(x) * np.arange(6.0).reshape(3, 2))


def np_flip_roll(x):
    return np.sum(np.flip(x) * np.roll(x, 2) * np.arange(5.0))


def np_diff_twice(x):
    return np.sum(np.diff(x, n=2) ** 2)


def np_concatenate_split(x, y):
    z = np.concatenate((x, y))
    a, b = np.split(z, 2)
    return np.sum(a * b)


def np_stack_hstack(x, y):
    return np.sum(np.stack((x, y), axis=1) ** 2) + np.sum(np.hstack((x, y)))


def np_tile(x):
    return np.sum(np.tile(x, 2) * np.arange(6.0))


def np_repeat(x):
    return np.sum(np.repeat(x, 2) * np.arange(6.0))


def np_sort(x):
    return np.sum(np.sort(x) * np.arange(4.0))


def np_median(x):
    return np.median(x)


def np_percentile(x):
    return np.percentile(x, 30.0)


def np_select_where(x):
    return np.sum(np.where(x > 0.0, x * x, -x))


def np_clip_keywords(x):
    return np.sum(np.clip(x, a_min=-0.5, a_max=0.5) ** 2)


def np_nan_to_num(x):
    return np.sum(np.nan_to_num(x))


def np_atleast_2d(x):
    return np.sum(np.atleast_2d(x) ** 2)


def np_reshape_transpose(x):
    return np.sum(x.reshape(3, 2).T @ np.ones(3))


def np_expand_squeeze(x):
    return np.sum(np.squeeze(np.expand_dims(x, 0), axis=0) ** 3)


def np_dot_matrix_vector(a, v):
    return np.sum(np.dot(a, v) ** 2)


def np_matmul_3d(a, b):
    return np.sum(np.matmul(a, b))


def np_linalg_norm_axis(x):
    return np.sum(np.linalg.norm(x, axis=1))


def np_logsumexp_by_hand(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def np_power_scalar_exponent(x, p):
    return np.sum(np.power(np.abs(x) + 1.0, p))


def np_fancy_2d(x):
    return np.sum(x[np.array([0, 2]), 1])


def np_boolean_mask(x):
    return np.sum(x[x > 0.0])


def np_astype_int(x):
    return np.sum(x * x.astype(np.int64))
