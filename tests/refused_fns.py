"""Functions jitgrad must refuse, used by ``test_refusals.py``.

They live in a real file because jitgrad reads a function's source. The line where jitgrad
should point carries a marker comment ``# refused: <tag>``; the tests look the marker up to
find the expected line number, so lines can be added or moved freely. Each tag is unique.

Nothing here is meant to be differentiated successfully.
"""

import contextlib
import math

import numpy as np

WEIGHTS = np.array([1.0, 2.0, 3.0])  # a global array: read as a constant, never written
LABELS = {"weights", "bias"}  # a global set


# ----------------------------------------------------------------------------- decoration time
# The fence (and the reading of the source) refuses these when `jitgrad.grad(f)` is called.


def uses_try(x):
    try:
        y = 1.0 / x  # refused: try (a division, and a branch in the try)
        if y > 1.0:
            y = y - 1.0
    except (ZeroDivisionError, OverflowError):  # (ZeroDivisionError alone: checked, built)
        y = x
    return y


def try_around_a_call(x):
    try:
        y = math.gamma(x)  # refused: try-call
    except ValueError:
        y = x
    return y


def uses_with(x):
    with contextlib.suppress(ValueError):  # refused: with
        y = x / 2.0
    return y


def uses_string(x):
    name = "x"
    return x + name  # refused: string


def domain_error(message):
    return ValueError(message)


def uses_raise(x):
    if x > 0.0:
        raise domain_error("x must not be positive")  # refused: raise
    return x


def reraises(x):
    if x > 0.0:
        raise  # refused: bare-raise  # noqa: PLE0704
    return x


def raise_with_runtime_message(x):
    if x > 0.0:
        raise ValueError(f"x = {x} must not be positive")  # refused: raise-message
    return x


def raises_every_iteration(x):
    total = 0.0
    for i in range(3):  # refused: raise-every-iteration
        total += x * i
        raise ValueError("not converged")
    return total


def _always_raises(x):
    raise RuntimeError("unreachable in a good run")


def calls_raising_helper_in_branch(x):
    y = x
    if x > 0.0:
        y = _always_raises(x)  # refused: raising-helper
    return y


def string_against_number(x, mode):
    if mode == x:  # refused: string-vs-number
        return x
    return 2.0 * x


def uses_nested_def(x):
    @staticmethod
    def inner(t):  # refused: nested-def
        return t * t

    return inner(x)


def uses_class(x):
    class Box:  # refused: class
        pass

    return x


def uses_inner_lambda(x):
    k = 0.0
    while (lambda t: t * t)(k) < x:  # refused: inner-lambda  # noqa: PLC3002
        k += 1.0
    return k * x


def uses_list_comprehension(x):
    k = 0.0
    while len([v for v in x if v > k]) > 1:  # refused: listcomp
        k += 1.0
    return np.sum(x) * k


def uses_generator_expression(x):
    return np.prod(np.fromiter((x * k for k in range(3)), np.float64, 3))  # refused: genexp


def uses_dict(x):
    d = {("a", 1): x}  # refused: dict
    return d["a"]


def uses_fstring(x):
    label = f"{x}"
    return label == "1.0"  # refused: fstring


def uses_walrus(x):
    y = x
    while (y := y * 2.0) < 1.0:  # refused: walrus
        x = x + y
    return x


def uses_del(x):
    d = {"a": x, "b": 2.0}
    del d["b"]  # refused: del
    return d["a"]


def returns_complex(x):
    return x * 2j  # refused: returns-complex


def uses_match(x):
    match x:  # refused: match
        case _:
            return x


def uses_kwargs(x, **options):  # refused: varargs
    return x * options["scale"]


def uses_kwonly(x, *, scale):  # refused: kwonly
    return x * scale


def is_generator(x):  # refused: generator
    yield x * x


class Model:
    """Methods and callable objects are not plain functions."""

    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return self.scale * x * x

    def __call__(self, x):
        return self.scale * x * x


def make_closure():
    scale = {2.0: 1.0}.keys()  # a dict view: not a constant jitgrad reads

    def scaled(x):
        return scale[0] * x  # refused: closure

    return scaled


closure = make_closure()

lambda_fn = lambda x: x * x  # refused: lambda

# A function without source: created by exec, so inspect cannot read it.
_namespace: dict = {}
exec("def no_source(x):\n    return x * x\n", _namespace)  # noqa: S102
no_source = _namespace["no_source"]


# ----------------------------------------------------------------------------- first call
# These pass the fence; building the graph for the arguments' types refuses them.


def returns_array(x):
    return x * 2.0  # refused: returns-array


def returns_tuple(x):
    return x, x * 2.0  # refused: returns-tuple


def returns_nothing(x):  # refused: returns-nothing
    x * 2.0


def tensorinv_sum(x):
    return np.sum(np.linalg.tensorinv(x, 1))  # refused: tensorinv


def poly_sum(x):
    return np.sum(np.poly(x))  # refused: poly


def polyder_sum(x):
    return np.sum(np.polyder(x))  # refused: polyder


def fancy_index(x, idx):
    return np.sum(x[idx, None])  # refused: fancy-index


def boolean_index(x):
    return np.sum(x[x[:, None] > 0.0])  # refused: bool-index


def global_array(x):
    WEIGHTS[0] = 1.0  # refused: global-array
    return np.sum(x * WEIGHTS)


def global_set(x):
    return x * len(LABELS)  # refused: global-set


def print_as_value(x):
    shown = print(x)  # refused: print-value
    return x * x + (shown is None)


def printing_a_writing_call(x):
    y = x * 1.0
    print(fill_first(y))  # refused: print-call
    return y * y


def printing_a_sort(x):
    y = x * 1.0
    print(y.sort())  # refused: print-sort
    return np.sum(y * x)


def printing_a_draw(x):
    print(np.random.normal())  # refused: print-draw
    return np.sum(x)


def fill_first(y):
    y[0] = 5.0
    return y[0]


def uses_hash(x):
    return hash(x) + x  # refused: hash


def uses_sorted_builtin(x):
    return sorted(x)[1]  # refused: sorted-builtin


def recursive(x, n):
    if n <= 0:
        return x
    return x * recursive(x, n - 1)  # refused: recursion


def rank_changing_loop(x):
    s = 0.0
    for _k in range(x.shape[0]):  # refused: rank-loop (of a run-time count; a few is unrolled)
        s = s + x
    return np.sum(s)


def rank_changing_branch(x, flag):
    if flag > 0.0:  # refused: rank-branch
        y = x
    else:
        y = 0.0
    return np.sum(y)


def array_condition(x):
    if x > 0.0:  # refused: array-condition
        return 1.0
    return np.sum(x)


def shift_operator(x, n):
    return (x << n) * 2.0  # refused: lshift


def is_comparison(x):
    y = x
    if x is y:  # refused: is
        return 0.0
    return x


def array_attribute(x):
    return np.sum(x.base)  # refused: attribute


def missing_numpy_name(x):
    return np.no_such_function(x)  # refused: missing-np


def unpack_number(x):
    a, b = x[0]  # refused: unpack-number
    return a * b


def axis_out_of_bounds(x):
    return np.sum(x, axis=2)  # refused: axis-bounds


def float_index(x):
    return x[1.0]  # refused: float-index


def too_many_indices(x):
    return x[0, 0]  # refused: too-many-indices


def scalar_matmul(a, b):
    return np.sum(a @ b)  # refused: scalar-matmul


def undefined_name(x):
    return x * not_defined_anywhere  # refused: undefined-name  # noqa: F821


def callee_with_string(t):
    s = "abc"
    return t * s  # refused: callee-string


def calls_bad_helper(x):
    return callee_with_string(x)  # refused: calls-bad-helper


def callee_with_hash(t):
    return hash(t) + t  # refused: callee-hash


def calls_hashing_helper(x):
    return callee_with_hash(x) * 2.0  # refused: calls-hashing-helper


def write_into_view(x):
    for _ in range(2):  # x, made before this loop, is read again by its next iteration
        y = x.reshape(3, 1)  # a reshape: NumPy copies a non-contiguous array, so not followed
        for i in range(2):
            y[i, 0] = x[i] * 0.5  # refused: view-write
    return np.sum(x * x)


def stale_view(x):
    z = x * 2.0
    y = z.reshape(3, 1)
    z[1] = 5.0
    return np.sum(y * 2.0)  # refused: stale-view


def loop_reads_view(x):
    A = x.copy()
    row = A.reshape(3, 1)
    s = 0.0
    for i in range(x.shape[0]):  # refused: loop-view
        s += row[0, 0] * x[i]
        A[0] = s * 2.0
    return s


def view_rebound_in_loop(U, x):
    u = U[0]
    for j in range(3):  # refused: view-rebound
        s = u[0]  # (the view of the last iteration read: `u = U[j]` first is taken)
        u = U[j]
        u[j] = x[j] * s
    return np.sum(U * U)


def loop_joins_two_arrays(x):
    """`fx = fxnew` in the loop: one array under two names from the second iteration on."""
    fx = x.copy()
    fxnew = np.zeros_like(x)
    for _ in range(2):  # refused: joined-carries
        for i in range(1, x.shape[0] - 1):
            fxnew[i] = fx[i] + 0.2 * (fx[i - 1] - 2.0 * fx[i] + fx[i + 1])
        fx = fxnew
    return np.sum(fxnew * fxnew)


def broadcast_mismatch(x, y):
    return np.sum(x + y)  # refused: broadcast


def math_comb(x, n):
    return x * math.comb(n, 2)  # refused: math-comb


def gcd_ufunc(x, n):
    return x * np.gcd(n, 6)  # refused: gcd


def float_axis_vector(x):
    return np.sum(x, axis=0.5)  # refused: float-axis-vector


# ----------------------------------------------------------------------------- common idioms
# Refused with the form that works named in the message (`jitgrad.core.errors.INSTEAD`).


def appends_to_list(x):
    out = [x[0]]
    alias = out
    out.append(x[1] * 2.0)  # refused: append (while `alias` holds the list too)
    return alias[-1]


def reads_a_dict(params):
    return params["w"] * 2.0  # refused: dict-key


def masked_write_rank3(x):
    y = x.copy()
    y[y < 0.0] = x[y < 0.0] * 2.0  # refused: mask-write
    return np.sum(y)


def uses_einsum_diagonal(a):
    return np.sum(np.einsum("iii->i", a))  # refused: einsum-diagonal


def take_along_without_axis_rank(logp, y):
    return np.sum(np.take_along_axis(logp, y, axis=1))  # refused: take-along


def put_along_into_a_view(a, idx):
    b = a.copy()
    np.put_along_axis(b[1:], idx, 0.0, axis=1)  # refused: put-along
    return np.sum(b)


def bitwise_and_float(x):
    return np.sum(x & 1)  # refused: bitwise


def out_into_a_new_array(x):
    y = x.copy()
    np.exp(x[1:], out=np.empty(2))  # refused: out-new
    return np.sum(y)


def writes_through_indices_beside_an_integer(x, idx):
    y = np.zeros((5, 2, 5))
    y[idx, 0, idx] += x  # refused: index-write-beside (one array beside integers is taken)
    return np.sum(y)


def matrix_index(x, idx):
    return np.sum(x[idx, idx])  # refused: matrix-index


# ----------------------------------------------------------------------------- signatures
# Supported code; the tests call these with arguments jitgrad must refuse.


def plain(x, n):  # refused: def-plain
    return x * n
