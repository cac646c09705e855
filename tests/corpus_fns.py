"""Functions differentiated by the table-driven corpus tests (see ``corpus.py``).

Everything here is plain module-level Python with real source, because jitgrad reads a
function's source with ``inspect`` and emits Numba-compiled forward/adjoint code from it.

Three lists at the bottom of the module:

* ``STRAIGHT``: straight-line NumPy code (no loops, no branches, no in-place writes).
* ``LOOPS``: Numba-style code with ``for``/``while`` loops, branches, augmented assignment,
  in-place writes into freshly allocated arrays and integer index arithmetic.  Every function
  in this group is also valid ``numba.njit`` code.
* ``RETURNS_IN_LOOP``: loop functions that ``return`` from inside a loop, which jitgrad may
  refuse with ``UnsupportedError``.

Helpers (``softplus``, ``sigmoid``, ``affine``, ``gate``, ...) are only called by the corpus
functions (some call other helpers); they are not cases themselves.  Every corpus function returns a scalar and
never mutates its arguments.
"""

import math

import numpy as np

SCALE = 0.5
SHIFT = 1.5
LOG_2PI = 1.8378770664093453  # log(2 * pi)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def affine(W, x, b):
    return W @ x + b


def tanh_layer(W, x, b):
    return np.tanh(affine(W, x, b))


def logsumexp_helper(z):
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def scaled(x):
    return SCALE * x


def sigmoid_scalar(t):
    return 1.0 / (1.0 + math.exp(-t))


def gate(a, b, t):
    return sigmoid_scalar(a * t + b)


# --------------------------------------------------------------------------------------------
# STRAIGHT: straight-line code
# --------------------------------------------------------------------------------------------


def square(x):
    return np.square(x)


def square_sum(x):
    return np.sum(np.square(x))


def two_layer(W1, b1, W2, b2, inputs, y_true):
    h = np.maximum(inputs @ W1 + b1, 0.0)
    z = h @ W2 + b2
    z = z - np.max(z, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    return -np.mean(np.sum(y_true * np.log(p), axis=1))


def logistic_regression(w, b, X, y):
    p = sigmoid(X @ w + b)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def least_squares(x, A, b):
    return np.sum((A @ x - b) ** 2)


def softplus_sum(x):
    return np.sum(softplus(x))


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def gaussian_logpdf(x, mu, log_sigma):
    sigma = np.exp(log_sigma)
    z = (x - mu) / sigma
    return np.sum(-0.5 * z ** 2 - log_sigma - 0.5 * LOG_2PI)


def polynomial(x):
    return 3.0 * x ** 3 - 2.0 * x ** 2 + 0.5 * x - 7.0


def cube_float_power(x):
    return np.sum(x ** 3.0)


def int_power(x):
    return np.sum(x ** 2) + np.sum(x ** 3) * 0.25


def exp2_power(x):
    return np.sum(2.0 ** x)


def array_power(x, y):
    return np.sum(x ** y)


def scalar_power(a, b):
    return a ** b + b ** 0.5 + 1.5 ** a


def negative_power(x):
    return np.sum(x ** -2 + x ** -0.5)


def outer_broadcast(a, b):
    return np.sum(np.tanh(a + b) * a)


def outer_reshape(u, v):
    n = u.shape[0]
    m = v.shape[0]
    return np.sum(np.sin(u.reshape(n, 1) * v.reshape(1, m)))


def row_broadcast(X, v):
    return np.sum((X + v) ** 2 * v)


def col_broadcast(X, c):
    return np.sum(X * c - c ** 2)


def scalar_array(a, x):
    return np.sum(a * x * x + a ** 2 / (1.0 + x * x))


def rank0_broadcast(s, x):
    return np.sum(s * x + s * s)


def rank0_ops(s, t):
    return np.sum(np.exp(s) * t + np.sqrt(t * t + 1.0))


def rank3_matrix(T, M):
    return np.sum(T * M) + np.sum(T ** 2) * SCALE


def rank3_vector(T, v):
    return np.sum(np.sin(T - v))


def rank3_column(T, c):
    return np.mean(T * c + c)


def rank3_scalar(T, a):
    return np.sum(np.exp(a * T)) / T.shape[0]


def unary_negation(x, y):
    z = -x + y
    return -np.sum(-z * z) + np.sum(-(x * y))


def divisions(x, y):
    return np.sum(x / (1.0 + y * y)) + np.sum(1.0 / (2.0 + x * x)) + np.sum(y / 3.0)


def matvec(A, x):
    return np.sum(np.tanh(A @ x))


def vecvec(x, y):
    return (x @ y) ** 2


def matmat(A, B):
    return np.sum((A @ B) ** 2)


def vecmat(x, A):
    return np.sum(np.exp(0.3 * (x @ A)))


def quadratic_form(x, A):
    return x @ A @ x


def dot_vv(x, y):
    return np.dot(x, y) + np.dot(x, x) * SCALE


def dot_mv(A, x):
    return np.sum(np.dot(A, x) ** 2)


def dot_mm(A, B):
    return np.sum(np.cos(np.dot(A, B)))


def matmul_mm(A, B):
    return np.sum(np.matmul(A, B) * SCALE) + np.sum(np.matmul(A, B) ** 2)


def matmul_vm_mv(x, A, y):
    return np.sum(np.matmul(x, A) * 2.0) + np.matmul(np.matmul(x, A), y)


def transpose_attr(A, B):
    return np.sum((A.T @ B) ** 2)


def transpose_fn(A, w):
    return np.sum(np.transpose(A) @ A * w)


def reshape_args(x):
    X = x.reshape(3, 4)
    return np.sum(X @ X.T)


def reshape_tuple(X):
    v = X.reshape((6,))
    M = X.reshape(3, 2)
    flat = X.reshape(-1)
    return np.sum(v * v) + np.sum(M @ X) + flat[0]


def newaxis_rbf(x, y):
    d = x[:, None] - y[None, :]
    return np.sum(np.exp(-d * d))


def newaxis_keyword(x):
    d = x[:, np.newaxis] - x[np.newaxis, :]
    return np.sum(d * d * x)


def index_reads(x):
    return x[0] * x[2] + x[-1] ** 2 - x[1]


def index_2d_reads(A):
    return A[0, 1] * A[1, 0] - A[2, 2] ** 2 + A[-1, -1]


def slice_reads(x):
    return np.sum(x[1:3] ** 2) + np.sum(x[2:] * x[:-2]) + x[-1]


def column_read(A, k):
    return np.sum(A[:, k] ** 2) + np.sum(A[:, 0])


def row_read(A, i):
    return np.sum(np.sin(A[i])) + np.sum(A[i, 1:3])


def shape_unpack(X):
    n, d = X.shape
    return np.sum(X ** 2) / (n * d) + np.sum(X) / n


def shape_len(x):
    n = x.shape[0]
    m = len(x)
    return np.sum(x) / n + m * np.sum(x ** 2)



def log1p_fn(x):
    return np.sum(np.log1p(x * x)) + np.sum(np.log1p(np.exp(x)))


def sqrt_fn(x):
    return np.sum(np.sqrt(x)) + np.sqrt(np.sum(x * x))


def trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.tan(x))


def tanh_arctan(x):
    return np.sum(np.tanh(x) + np.arctan(2.0 * x))


def abs_fn(x):
    return np.sum(np.abs(x) * x) + np.sum(np.abs(x - 3.0))


def max_min_pair(x, y):
    return np.sum(np.maximum(x, y) ** 2 - np.minimum(x, 0.5 * y))


def relu_sq(x):
    return np.sum(np.maximum(x, 0.0) ** 2) + np.sum(np.maximum(0.0, x) * 3.0)


def where_branches(x):
    return np.sum(np.where(x > 0.0, x ** 2, -0.5 * x))


def where_pair(x, y):
    return np.sum(np.where(x < y, x * y, x + y))


def mask_multiply(x):
    mask = x > 0.5
    return np.sum(x * x * mask) + np.sum(np.exp(x) * (x <= 0.5))


def math_scalars(a, b):
    return math.exp(a) * math.log(b) + math.sqrt(b) + math.sin(a) * math.cos(b) + math.tanh(a * b)


def math_more(a):
    return math.tan(a) + math.atan(a) + math.log1p(a * a) + math.exp(-a) * math.cos(a)


def builtin_abs_min_max(a, b):
    return abs(a - b) + min(a, b) * max(a, 2.0 * b) + abs(a)


def sum_axis0(X):
    return np.sum(np.sum(X, axis=0) ** 2)


def mean_negative_axis(T):
    return np.sum(np.mean(T, axis=-1) ** 2) + np.sum(np.sum(T, axis=-2) * 0.5)


def max_axis1(X):
    return np.sum(np.max(X, axis=1)) + np.sum(np.min(X, axis=0) * 2.0)


def min_keepdims(X):
    return np.sum((X - np.min(X, axis=0, keepdims=True)) ** 2)


def centered_variance(X):
    c = X - np.mean(X, axis=1, keepdims=True)
    return np.sum(c ** 2) / X.shape[1]


def normalize_keepdims_neg(T):
    return np.sum(T / np.sum(T * T, axis=-2, keepdims=True))



def method_sum(x):
    return (x * x).sum() + x.sum()


def method_mean_axis(X):
    m = X.mean(axis=0)
    return m @ m + X.mean()


def method_max_min(x):
    return x.max() * 2.0 - x.min() + x.max() ** 2


def method_min_axis(X):
    return X.min(axis=1).sum() + X.max(axis=0).sum()


def layer_norm(x, g, b):
    mu = np.mean(x)
    var = np.mean((x - mu) ** 2)
    y = (x - mu) / np.sqrt(var + 1e-5) * g + b
    return np.sum(y ** 3)


def mlp_helpers(W1, b1, W2, x):
    h = tanh_layer(W1, x, b1)
    return np.sum(scaled(W2 @ h) ** 2)


def global_constants(x):
    return SCALE * np.sum(x ** 2) + SHIFT * np.sum(x) - SHIFT


def reassignment(x):
    y = x * 2.0
    y = np.sin(y) + x
    y = y * y
    x = y - x
    return np.sum(x * y)


def int_constants(x):
    return 3 * np.sum(x) + np.sum(x ** 2) * 2 - 1


def attention(Q, K, V):
    d = Q.shape[1]
    S = Q @ K.T / np.sqrt(d)
    S = S - np.max(S, axis=1, keepdims=True)
    P = np.exp(S)
    P = P / np.sum(P, axis=1, keepdims=True)
    return np.sum((P @ V) ** 2)



def cosine_similarity(x, y):
    return x @ y / (np.sqrt(x @ x) * np.sqrt(y @ y))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)



def gmm_loglik(x, mu, log_w):
    d = x[:, None] - mu[None, :]
    lp = log_w - 0.5 * d ** 2 - 0.5 * LOG_2PI
    m = np.max(lp, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(lp - m), axis=1)))


def elastic_net(w, X, y, lam):
    r = X @ w - y
    return np.mean(r ** 2) + lam * np.sum(np.abs(w)) + lam * np.sum(w ** 2)


def log_softmax_pick(z, k):
    return z[k] - logsumexp_helper(z)


def hinge_loss(w, X, y):
    return np.mean(np.maximum(0.0, 1.0 - y * (X @ w))) + 0.1 * (w @ w)


def softmax_regression(W, X, Y):
    Z = X @ W
    Z = Z - np.max(Z, axis=-1, keepdims=True)
    logp = Z - np.log(np.sum(np.exp(Z), axis=-1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


# Loop nests of the emitter: adjoints updated inside a nest, reductions over the first axis and
# over 3-D arrays accumulated in it, and argument axes compiled as the same size (bias) or not.


def nest_reuse(x, w):
    y = x * w
    z = y + x
    return np.sum(z * y) + np.sum(np.max(y, axis=0))


def nest_center_min(x):
    c = x - np.mean(x, axis=0)
    return np.sum(c ** 2) + np.sum(np.min(x, axis=0, keepdims=True) * x)


def nest_rank3(t):
    s = np.sum(t, axis=1)
    m = np.max(t, axis=2, keepdims=True)
    return np.sum(s * s) + np.sum(np.exp(t - m)) + np.max(t) + np.min(t, keepdims=True)[0, 0, 0]


def nest_bias_twice(x, b):
    y = np.tanh(x + b)
    y = y * y + b
    return np.sum(np.sum(y, axis=0) * b)


def nest_bias_size_one(x, b):  # called with b of size 1: the general code
    return nest_bias_twice(x, b)


def nest_column_row(a, b):
    return np.sum(np.sin(a * b) + a) + np.sum((a + b) ** 2)




# --------------------------------------------------------------------------------------------
# LOOPS: loops, branches, in-place writes (all valid numba.njit code)
# --------------------------------------------------------------------------------------------


def rnn_scalar(a, x):
    h = 0.0
    for i in range(len(x)):
        h = math.tanh(a * h + x[i])
    return h


def horner(coeffs, t):
    acc = 0.0
    for c in coeffs:
        acc = acc * t + c
    return acc


def horner_reverse(coeffs, t):
    n = coeffs.shape[0]
    acc = 0.0
    for i in range(n - 1, -1, -1):
        acc = acc * t + coeffs[i]
    return acc


def logsumexp_loop(x):
    n = x.shape[0]
    m = x[0]
    for i in range(1, n):
        if x[i] > m:  # noqa: PLR1730 (a branch on purpose)
            m = x[i]
    s = 0.0
    for i in range(n):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def huber(r, delta):
    total = 0.0
    for i in range(r.shape[0]):
        a = abs(r[i])
        if a <= delta:
            total += 0.5 * r[i] ** 2
        else:
            total += delta * (a - 0.5 * delta)
    return total


def cumulative_recurrence(x):
    n = x.shape[0]
    c = np.zeros_like(x)
    c[0] = x[0]
    for i in range(1, n):
        c[i] = 0.9 * c[i - 1] + x[i]
    return np.sum(c * c)


def accumulate_mod(x):
    out = np.zeros(3)
    for i in range(x.shape[0]):
        out[i % 3] += x[i] * x[i]
    return np.sum(np.sin(out))


def accumulate_mod_k(x, k):
    out = np.zeros(k)
    for i in range(len(x)):
        out[i % k] += math.exp(0.5 * x[i])
    return np.sum(np.log(out))


def matvec_loops(A, x):
    n, m = A.shape
    y = np.zeros(n)
    for i in range(n):
        for j in range(m):
            y[i] += A[i, j] * x[j]
    return np.sum(np.tanh(y))


def newton_sqrt(a):
    g = a
    step = 1.0
    it = 0
    while abs(step) > 1e-12 and it < 60:
        new = 0.5 * (g + a / g)
        step = new - g
        g = new
        it += 1
    return g * g * g + math.sin(g)


def newton_cuberoot(a):
    y = 1.0
    k = 0
    while k < 30:
        y = y - (y * y * y - a) / (3.0 * y * y)
        k += 1
    return y * a + y


def loop_break(x, limit):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
        if s > limit:
            break
    return s * 2.0 + limit


def clipped_update(x, lr):
    w = 0.0
    for i in range(x.shape[0]):
        step = lr * (w - x[i])
        if step > 0.3:
            step = 0.3
        elif step < -0.3:
            step = -0.3
        w = w - step
    return w * w + w


def clipped_minmax(x, lr):
    w = 1.0
    for i in range(x.shape[0]):
        g = w * w - x[i]
        w = w - max(-0.2, min(0.2, lr * g))
    return w * w + w


def damped_oscillator(k, c, x0, v0, dt, n):
    x = x0
    v = v0
    for i in range(n):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
    return x * x + 0.5 * v * v


def rk2_pendulum(theta0, omega0, g, n):
    th = theta0
    om = omega0
    dt = 0.05
    for i in range(n):
        th_mid = th + 0.5 * dt * om
        om_mid = om - 0.5 * dt * g * math.sin(th)
        th = th + dt * om_mid
        om = om - dt * g * math.sin(th_mid)
    return math.cos(th) + 0.5 * om * om


def rnn_array(W, xs):
    T, d = xs.shape
    h = np.zeros(d)
    for t in range(T):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def rnn_array_readout(W, U, v, xs):
    T = xs.shape[0]
    h = np.zeros(W.shape[0])
    total = 0.0
    for t in range(T):
        h = np.tanh(W @ h + U @ xs[t])
        total += v @ h
    return total


def range_ab(x, a, b):
    s = 0.0
    for i in range(a, b):
        s += x[i] ** 3 - x[i]
    return s


def range_step(x):
    s = 0.0
    for i in range(0, x.shape[0] - 1, 2):
        s += x[i] * x[i + 1]
    return s


def range_negative_step(x):
    s = 1.0
    for i in range(x.shape[0] - 1, 0, -2):
        s = s * 0.5 + x[i] * x[i - 1]
    return s


def while_sum(x):
    n = len(x)
    i = 0
    s = 0.0
    while i < n:
        s += math.exp(-x[i] * x[i])
        i += 1
    return s


def while_countdown(x, n):
    s = 0.0
    while n > 0:
        n -= 1
        s = s * 0.8 + x[n % x.shape[0]]
    return s * s


def bounded_while(x):
    s = 0.0
    i = 0
    while s < 3.0 and i < x.shape[0]:
        s += x[i] * x[i]
        i += 1
    return s


def continue_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        s += math.sqrt(x[i])
    return s


def branch_outside_loop(x):
    s = np.sum(x)
    if s > 1.0:
        r = s * s
    elif s < -1.0:
        r = -s
    else:
        r = math.sin(s)
    return r + np.sum(x ** 2)


def early_return_branch(x):
    s = np.sum(x * x)
    if s > 4.0:
        return math.log(s)
    return 0.25 * s


def leaky_ternary(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] if x[i] > 0.0 else 0.1 * x[i]
    return s * s


def ternary_scalar(a, b):
    m = a if a > b else b  # noqa: FURB136 (a ternary on purpose)
    return m * m + (a * b if a * b > 0.5 else a - b)


def aug_ops_names(x):
    s = 1.0
    t = 0.0
    for i in range(x.shape[0]):
        s *= 1.0 + 0.1 * x[i]
        s /= 1.01
        t += s
        t -= 0.01 * x[i] * x[i]
    return s + t


def aug_ops_subscript(A):
    n, m = A.shape
    B = A.copy()
    for i in range(n):
        for j in range(m):
            B[i, j] -= 0.5 * A[j, i]
            B[i, j] *= 1.0 + 0.1 * A[i, j]
            B[i, j] /= 2.0 + A[i, j] * A[i, j]
    return np.sum(B * B)


def row_assign(X, w):
    n, m = X.shape
    Y = np.empty((n, m))
    for i in range(n):
        Y[i, :] = np.tanh(X[i, :] * w) + 1.0
    return np.sum(Y ** 2)


def slice_assign(x):
    n = x.shape[0]
    y = np.zeros(2 * n)
    y[0:n] = x
    y[n:2 * n] = x * x
    return np.sum(np.exp(-y))


def block_assign(x, k):
    n = x.shape[0]
    y = np.zeros(n)
    for start in range(0, n, k):
        stop = min(start + k, n)
        y[start:stop] = x[start:stop] * (1.0 + start)
    return np.sum(np.sin(y))


def ones_product(x):
    n = x.shape[0]
    p = np.ones(n)
    for i in range(1, n):
        p[i] = p[i - 1] * x[i - 1]
    return np.sum(p)


def full_alloc(x):
    y = np.full(x.shape[0], 2.0)
    for i in range(x.shape[0]):
        y[i] = y[i] * x[i] + SHIFT
    return np.sum(y * y)


def copy_prefix(x):
    y = np.copy(x)
    for i in range(1, y.shape[0]):
        y[i] += 0.5 * y[i - 1]
    return np.sum(y ** 3)


def ones_like_weights(x):
    w = np.ones_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            w[i] = 2.0
    return np.sum(w * x * x)


def empty_fill(x):
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = math.cos(x[i])
    return np.sum(y * x)


def subtract_in_place(x, y):
    z = x.copy()
    for i in range(z.shape[0]):
        z[i] -= y[i] * z[i]
        z[i] /= 1.0 + y[i] * y[i]
    return np.sum(z * z)


def int_index_arith(x):
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        j = (i * 3) % n
        k = i // 2
        lo = max(i - 1, 0)
        hi = min(i + 1, n - 1)
        s += x[j] * x[k] + x[hi] - x[lo] * SCALE
    return s


def conv1d(x, w):
    n = x.shape[0]
    k = w.shape[0]
    y = np.zeros(n - k + 1)
    for i in range(n - k + 1):
        for j in range(k):
            y[i] += x[i + j] * w[j]
    return np.sum(y ** 2)


def running_max(x):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:  # noqa: PLR1730 (a branch on purpose)
            m = x[i]
    return m * m + x[0]


def pairwise_distances(X):
    n, d = X.shape
    s = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d2 = 0.0
            for k in range(d):
                diff = X[i, k] - X[j, k]
                d2 += diff * diff
            s += math.sqrt(d2 + 1e-3)
    return s


def gradient_descent(x0, lr, n):
    x = x0
    for i in range(n):
        g = 2.0 * (x - 3.0) + math.cos(x)
        x = x - lr * g
    return x * x


def power_iteration(A, n):
    v = np.ones(A.shape[0])
    for it in range(n):
        v = A @ v
        v = v / math.sqrt(np.sum(v * v))
    return v @ (A @ v)


def matmul_loops(A, B):
    n, k = A.shape
    m = B.shape[1]
    C = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            for p in range(k):
                C[i, j] += A[i, p] * B[p, j]
    return np.sum(C * C)


def forward_substitution(L, b):
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * y[j]
        y[i] = s / L[i, i]
    return np.sum(y * y)


def welford_variance(x):
    mean = 0.0
    m2 = 0.0
    count = 0
    for v in x:
        count += 1
        delta = v - mean
        mean += delta / count
        m2 += delta * (v - mean)
    return m2 / (count - 1)


def piecewise_elementwise(x):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            y[i] = math.log(x[i])
        elif x[i] > -1.0:
            y[i] = x[i] * x[i]
        else:
            y[i] = -x[i] - 0.5
    return np.sum(y)


def for_each_product(x):
    p = 1.0
    s = 0.0
    for v in x:
        p *= 1.0 + 0.2 * v
        s += v * p
    return s


def nested_break(X):
    n, m = X.shape
    total = 0.0
    for i in range(n):
        for j in range(m):
            if X[i, j] < -1.0:
                break
            total += X[i, j] ** 2
    return total



def softmax_ce_loop(z, k):
    n = z.shape[0]
    m = z[0]
    for i in range(1, n):
        m = max(m, z[i])
    s = 0.0
    for i in range(n):
        s += math.exp(z[i] - m)
    return math.log(s) + m - z[k]


def gated_rnn_helper(a, b, x):
    h = 0.0
    for i in range(x.shape[0]):
        g = gate(a, b, x[i])
        h = g * h + (1.0 - g) * math.tanh(x[i])
    return h


def parity_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if i % 2 == 0:
            s += x[i] * x[i]
        else:
            s -= 0.5 * x[i]
    return s


def heat_diffusion(u0, D, steps):
    u = u0.copy()
    n = u.shape[0]
    for t in range(steps):
        un = u.copy()
        for i in range(1, n - 1):
            un[i] = u[i] + D * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = un
    return np.sum(u ** 2)


def trapezoid(theta, n):
    h = 1.0 / n
    s = 0.0
    for i in range(n + 1):
        t = i * h
        f = math.exp(-theta * t * t)
        if i == 0 or i == n:
            s += 0.5 * f
        else:
            s += f
    return s * h


def max_pool(x):
    n = x.shape[0] // 2
    s = 0.0
    for i in range(n):
        a = x[2 * i]
        b = x[2 * i + 1]
        s += a * a if a > b else b
    return s



def sgd_linear(w0, X, y, lr):
    w = w0.copy()
    for i in range(X.shape[0]):
        err = X[i] @ w - y[i]
        w = w - lr * err * X[i]
    return np.sum(w * w)


def row_normalize(X):
    n, m = X.shape
    Y = np.zeros((n, m))
    for i in range(n):
        norm = 0.0
        for j in range(m):
            norm += X[i, j] * X[i, j]
        norm = math.sqrt(norm)
        for j in range(m):
            Y[i, j] = X[i, j] / norm
    return np.sum(Y[:, 0]) + np.sum(Y * Y * Y)


def lower_tri_sum(A):
    n = A.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1):
            s += A[i, j] * A[j, i]
    return s


def sign_counting(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0 and y[i] > 0.0:
            s += x[i] * y[i]
        elif x[i] > 0.0 or y[i] > 0.0:
            s += x[i] - y[i]
        else:
            s -= 0.5 * (x[i] + y[i]) ** 2
    return s



# --------------------------------------------------------------------------------------------
# RETURNS_IN_LOOP: return statements inside loops (jitgrad may refuse them)
# --------------------------------------------------------------------------------------------


def first_above(x, limit):
    for i in range(x.shape[0]):
        if x[i] > limit:
            return x[i] * x[i]
    return 0.1 * x[0] * x[0]


def partial_sum_return(x):
    s = 0.0
    for v in x:
        s += v * v
        if s > 2.0:
            return s * v
    return s


def newton_return(a):
    g = a
    it = 0
    while it < 8:
        new = 0.5 * (g + a / g)
        if abs(new - g) < 1e-12:
            return new * new * new
        g = new
        it += 1
    return g


STRAIGHT = [
    square, square_sum, two_layer, logistic_regression, least_squares, softplus_sum, logsumexp,
    gaussian_logpdf, polynomial, cube_float_power, int_power, exp2_power, array_power,
    scalar_power, negative_power, outer_broadcast, outer_reshape, row_broadcast, col_broadcast,
    scalar_array, rank0_broadcast, rank0_ops, rank3_matrix, rank3_vector, rank3_column,
    rank3_scalar, unary_negation, divisions, matvec, vecvec, matmat, vecmat, quadratic_form,
    dot_vv, dot_mv, dot_mm, matmul_mm, matmul_vm_mv, transpose_attr, transpose_fn,
    reshape_args, reshape_tuple, newaxis_rbf, newaxis_keyword, index_reads, index_2d_reads,
    slice_reads, column_read, row_read, shape_unpack, shape_len, log1p_fn, sqrt_fn, trig,
    tanh_arctan, abs_fn, max_min_pair, relu_sq, where_branches, where_pair, mask_multiply,
    math_scalars, math_more, builtin_abs_min_max, sum_axis0, mean_negative_axis, max_axis1,
    min_keepdims, centered_variance, normalize_keepdims_neg, method_sum, method_mean_axis,
    method_max_min, method_min_axis, layer_norm, mlp_helpers, global_constants, reassignment,
    int_constants, attention, cosine_similarity, rosenbrock, gmm_loglik, elastic_net,
    log_softmax_pick, hinge_loss, softmax_regression, nest_reuse, nest_center_min, nest_rank3,
    nest_bias_twice, nest_bias_size_one, nest_column_row,
]

LOOPS = [
    rnn_scalar, horner, horner_reverse, logsumexp_loop, huber, cumulative_recurrence,
    accumulate_mod, accumulate_mod_k, matvec_loops, newton_sqrt, newton_cuberoot, loop_break,
    clipped_update, clipped_minmax, damped_oscillator, rk2_pendulum, rnn_array,
    rnn_array_readout, range_ab, range_step, range_negative_step, while_sum, while_countdown,
    bounded_while, continue_loop, branch_outside_loop, early_return_branch, leaky_ternary,
    ternary_scalar, aug_ops_names, aug_ops_subscript, row_assign, slice_assign, block_assign,
    ones_product, full_alloc, copy_prefix, ones_like_weights, empty_fill, subtract_in_place,
    int_index_arith, conv1d, running_max, pairwise_distances, gradient_descent,
    power_iteration, matmul_loops, forward_substitution, welford_variance,
    piecewise_elementwise, for_each_product, nested_break, softmax_ce_loop, gated_rnn_helper,
    parity_branch, heat_diffusion, trapezoid, max_pool, sgd_linear, row_normalize,
    lower_tri_sum, sign_counting,
]

RETURNS_IN_LOOP = [first_above, partial_sum_return, newton_return]

HELPERS = [
    softplus, sigmoid, affine, tanh_layer, logsumexp_helper, scaled, sigmoid_scalar, gate,
]
