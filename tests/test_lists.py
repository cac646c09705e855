"""Python over arrays and lists (issue #25, item 3): lists appended in a ``for`` loop and list
comprehensions (arrays filled in the loop, `frontend/desugar_lists.py`), local lambdas, the
walrus operator, ``functools.reduce`` (`frontend/desugar_forms.py`), Python's builtins and
arithmetic on tuples and lists known while building, ``operator`` functions, dicts made in the
function; and the refusals of what cannot be an array.

Each gradient (compiled, as users run it) is checked against central differences
(``fd.numeric_grad``) and the tape, which runs the Python function itself.
"""

from __future__ import annotations

import functools
import operator
from functools import reduce

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad
from jitgrad import tape

W3 = [0.2, 0.3, 0.5]  # a global list of weights, read as a constant

# ---- lists appended in a loop ---------------------------------------------------------------


def appended_squares(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * x[i])
    return sum(out) + np.sum(np.array(out)) * out[0] + len(out) * out[-1]


def appended_where_positive(x):  # an append under a run-time condition
    pos = []
    for v in x:
        if v > 0.0:
            pos.append(np.exp(v))
    return np.mean(np.array(pos)) + len(pos)


def appended_until_break(x, w):
    terms = []
    for i in range(x.shape[0]):
        if x[i] > 2.0:
            break
        terms.append(x[i] * w[i])
    total = 0.0
    for t in terms:
        total += t * t
    return total


def appended_nested(a, x):
    n, m = a.shape
    flat = []
    for i in range(n):
        for j in range(m):
            flat.append(a[i, j] * x[j])
    grid = np.array(flat).reshape(n, m)
    return np.sum(np.tanh(grid) ** 2)


def appended_twice_per_step(x):
    pairs = []
    for i in range(1, x.shape[0], 2):
        pairs.append(x[i - 1] * x[i])
        pairs.append(x[i] - x[i - 1])
    return np.dot(pairs, pairs)


def appended_rows_each_step(x):  # a list made afresh in an outer loop
    total = 0.0
    for t in range(3):
        row = []
        for i, (a, b) in enumerate(zip(x, x[::-1])):
            row.append(a * b * (t + 1) + i)
        total += max(row) + np.std(row)
    return total


def appended_then_rebound(x):
    out = []
    for k in reversed(range(x.shape[0])):
        out.append(np.sin(x[k]))
    out = np.array(out)
    out = out * 2.0 + 1.0
    return np.sum(out * out)


# ---- list comprehensions --------------------------------------------------------------------


def comprehension_array(x):
    y = np.array([x[i] * 2.0 for i in range(x.shape[0])])
    return np.sum(y * y)


def comprehension_zip(x, w):
    y = [a * b for a, b in zip(x, w)]
    return sum(y) + np.max(y) + y[1] * len(y)


def comprehension_filtered(x):
    big = [v * v for v in x if abs(v) > 0.5]
    return np.sum(np.log1p(big))


def comprehension_of_constants(x):
    return np.sum(np.exp([c * x[i] for i, c in enumerate(W3)]))


def comprehension_nested(a):
    return np.mean([a[i, j] ** 2 for i in range(a.shape[0]) for j in range(a.shape[1])
                    if i != j])


# ---- lambdas, walrus, reduce ----------------------------------------------------------------


def local_lambda(x, s):
    sq = lambda t: t * t
    scaled = lambda t, k=2.0: k * s * t
    return np.sum(sq(x)) + np.sum(scaled(x)) + sq(s)


def walrus_in_if_and_return(x):
    if (total := np.sum(x * x)) > 1.0:
        return total * (m := np.max(x)) + m
    return (y := np.sum(x)) * y


def reduce_forms(x):
    a = reduce(operator.mul, (x[0], x[1], x[2]))
    b = functools.reduce(lambda p, q: p + q * q, [x[0], x[1]], 0.5)
    c = reduce(operator.mul, (1.0 + v for v in x), 1.0)
    d = reduce(operator.add, x)

    def harmonic(u, v):
        return u * v / (u + v)

    e = reduce(harmonic, [np.exp(v) for v in x])
    return a + b + c + d + e


def fold_by_hand(x):  # what reduce(operator.add, x) stands for
    acc = 0.0
    n = 0
    for v in x:
        if n == 0:
            acc = v  # the first item starts the sum afresh: not a running sum
        else:
            acc = acc + v
        n += 1  # noqa: SIM113
    return acc * acc


def empty_reduce(x):
    return reduce(operator.mul, (v for v in x if v > 100.0))


# ---- builtins and arithmetic on constant tuples and lists, operator, dicts ---------------------


def constant_sequences(x):
    w = (3.0, 1.0, 2.0)
    s = sorted(w)
    r = sorted(w, reverse=True)
    t = 0.0
    for i, c in enumerate(w):
        t += c * x[i]
    for a, b in zip(s, list(r)):
        t += a * b * x[0]
    for c in reversed(tuple(w)):
        t = t * 0.5 + c * x[1]
    return t + len(w) * x[2] * s[0] + np.sum(np.array(W3) * x) + W3[2] * x[1]


def operator_functions(a, x):
    return np.sum(operator.matmul(a, x)) + operator.add(x[0], x[1]) * operator.neg(x[2])


def dict_of_values(x, b):
    p = {"w": x, "scale": 2.0, "shift": b}
    q = {0: p["w"] * p["scale"], 1: p["shift"]}
    return np.sum(np.tanh(q[0] + q[1])) * p["scale"]


def appends_rows(x):
    rows = []
    for i in range(3):
        rows.append(x * i)
    return np.sum(np.array(rows))


def _appends_rows(x):  # for the tape: the same sum without a list of arrays
    return np.sum(x * 0.0) + np.sum(x * 1.0) + np.sum(x * 2.0)


X = np.array([0.7, -1.2, 1.9, 0.4, -0.3])
W = np.array([0.5, 1.5, -0.8, 2.0, 1.1])
A = np.array([[0.3, -0.7, 1.2, 0.1, 0.5], [0.9, 0.2, -0.4, 0.6, -1.1], [0.0, 1.3, 0.8, -0.2, 0.4]])

CASES = [
    (appends_rows, (X,)),  # a list of arrays: the array of its rows
    (appended_squares, (X,)),
    (appended_where_positive, (X,)),
    (appended_until_break, (X, W)),
    (appended_until_break, (np.array([0.5, 1.0, 2.5, 0.3]), W[:4])),
    (appended_nested, (A, X)),
    (appended_twice_per_step, (X,)),
    (appended_rows_each_step, (X,)),
    (appended_then_rebound, (X,)),
    (comprehension_array, (X,)),
    (comprehension_zip, (X, W)),
    (comprehension_filtered, (X,)),
    (comprehension_of_constants, (X[:3],)),
    (comprehension_nested, (A[:, :3],)),
    (local_lambda, (X, 0.7)),
    (walrus_in_if_and_return, (X,)),
    (walrus_in_if_and_return, (X * 0.1,)),
    (reduce_forms, (np.array([0.9, 1.1, 1.3]),)),
    (fold_by_hand, (X,)),
    (constant_sequences, (X[:3],)),
    (operator_functions, (A, X)),
    (dict_of_values, (X, 0.3)),
]

# The tape runs the Python function itself, on Tensors; NumPy cannot take a list of Tensors
# (np.array(out) converts each to a float), so for the functions that hand a list to NumPy the
# tape runs their twin, written with arrays as one would without lists.


def _appended_squares(x):
    out = x * x
    return np.sum(out) + np.sum(out) * out[0] + len(out) * out[-1]


def _appended_where_positive(x):
    pos = np.exp(x[x > 0.0])
    return np.mean(pos) + len(pos)


def _appended_nested(a, x):
    return np.sum(np.tanh(a * x) ** 2)


def _appended_twice_per_step(x):
    p = x[1::2] * x[0::2][:len(x) // 2]
    q = x[1::2] - x[0::2][:len(x) // 2]
    return np.sum(p * p) + np.sum(q * q)


def _appended_rows_each_step(x):
    total = 0.0
    for t in range(3):
        row = x * x[::-1] * (t + 1) + np.arange(len(x))
        total += np.max(row) + np.std(row)
    return total


def _appended_then_rebound(x):
    out = np.sin(x[::-1]) * 2.0 + 1.0
    return np.sum(out * out)


def _comprehension_array(x):
    y = x * 2.0
    return np.sum(y * y)


def _comprehension_zip(x, w):
    y = x * w
    return np.sum(y) + np.max(y) + y[1] * len(y)


def _comprehension_filtered(x):
    return np.sum(np.log1p(x[np.abs(x) > 0.5] ** 2))


def _comprehension_of_constants(x):
    return np.sum(np.exp(np.array(W3) * x))


def _comprehension_nested(a):
    off = np.ones(a.shape) - np.eye(a.shape[0], a.shape[1])
    return np.sum(a ** 2 * off) / np.sum(off)


TWINS = {f: globals()["_" + f.__name__] for f in (
    appends_rows, appended_squares, appended_where_positive, appended_nested, appended_twice_per_step,
    appended_rows_each_step, appended_then_rebound, comprehension_array, comprehension_zip,
    comprehension_filtered, comprehension_of_constants, comprehension_nested)}


@pytest.mark.parametrize(("fn", "args"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_gradient_matches_differences_and_tape(fn, args):
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-8)
        on_tape = tape.grad(TWINS.get(fn, fn), wrt=k)(*args)
        np.testing.assert_allclose(g, on_tape, rtol=1e-10, atol=1e-12)


def test_an_appended_list_becomes_an_array_filled_in_its_loop():
    source = jitgrad.grad(appended_where_positive).source(X)
    assert "pos.append(np.exp(v))" in source  # the user's line, as the comment
    assert ".append(" not in source.split("# --")[1].replace("pos.append(np.exp(v))", "")


def test_reduce_of_nothing_raises_as_python():
    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        jitgrad.grad(empty_reduce)(X)


# ---- refused, with the user's line and what to write instead ---------------------------------


def joins_lists(x):
    out = [v * 2.0 for v in x]
    joined = out + [1.0]  # (read straight as an array, np.sum(out + [1.0]) joins the rows)
    return np.sum(joined)


def appends_ragged(x):
    rows = []
    for i in range(x.shape[0]):  # (unrolled for the call's length: a list of the rows)
        rows.append(x[:i + 1] * 2.0)  # a row longer each time
    return np.sum(np.array(rows))


def appends_in_a_while(x):
    out = []
    k = 0
    while k < 3:
        out.append(x[k])
        k += 1
    return np.sum(np.array(out))


def appends_in_a_triangle(x):
    out = []
    for i in range(x.shape[0]):
        for j in range(i):
            out.append(x[i] * x[j])
    return np.sum(np.array(out))


def reads_while_appending(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] + (out[i - 1] if i > 0 else 0.0))
    return np.sum(np.array(out))


def returns_the_list(x):
    return [v * 2.0 for v in x]


def _helper(values):
    rest = values[1:]  # (a slice of a list given to it, bound to a name read as a list's)
    return values[0] + np.sum(rest)


def passes_the_list(x):
    out = [v * 2.0 for v in x]
    return _helper(out)


def slices_the_list(x):
    out = [v * 2.0 for v in x]
    tail = out[1:]  # a list, read as the array's slice is (`more list forms`)
    return np.sum(tail)


def _reads_a_slice(values):
    return values[0] + np.sum(values[1:])


def reduces_slices(x):
    out = [v * 2.0 for v in x]
    return np.sum(out[1:]) + _reads_a_slice(out) + sum(out[:2])


def walrus_in_a_while(x):
    k = 0
    total = 0.0
    while (k := k + 1) < 3:
        total += x[k]
    return total


def sorted_of_an_array(x):
    return sorted(x)[0]  # noqa: FURB192


REFUSED = [
    (joins_lists, "the list `out` in arithmetic", "read it as one"),
    (appends_in_a_while, "appending to `out` in a while loop", "preallocate"),
    (reads_while_appending, "reading the list `out` in the loop that appends", "preallocate"),
    (returns_the_list, "returned", "np.array(out)"),
    (walrus_in_a_while, "the walrus operator here", "on a line of its own"),
    (sorted_of_an_array, "sorted() of an array", "np.sort"),
]


def test_lists_over_counts_of_the_arguments_sizes_unrolled():
    """Items of other shapes, or an inner count set by the outer loop, over ``range`` of an
    argument's length: the loops unrolled for the call's length (hleft7; the build holds for
    it), a list of the items: the triangle's gradient as central differences give it; the
    ragged rows' np.array fails as NumPy's does (ValueError)."""
    value, g = jitgrad.value_and_grad(appends_in_a_triangle)(X.copy())
    np.testing.assert_allclose(value, appends_in_a_triangle(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(appends_in_a_triangle, (X.copy(),), 0),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError):
        appends_ragged(X.copy())
    with pytest.raises(ValueError):
        jitgrad.grad(appends_ragged)(X.copy())


@pytest.mark.parametrize(("fn", "what", "hint"), REFUSED,
                         ids=lambda c: getattr(c, "__name__", None) or "")
def test_refused_with_the_line_and_what_to_write(fn, what, hint):
    with pytest.raises(jitgrad.UnsupportedError) as info:
        jitgrad.grad(fn)(X.copy())
    message = str(info.value)
    assert what in message and hint in message
    assert 'test_lists.py", line' in message


# ---- more forms: two lists in one loop, list(generator), a walrus in a comprehension ---------


def two_lists_one_loop(x, w):
    num = []
    den = []
    for n in range(x.shape[0]):
        num.append(w[n] * np.exp(x[n]))
        den.append(np.exp(x[n]))
    return sum(num) / sum(den)


def list_of_a_generator(x):
    logs = list(np.log1p(v * v) for v in x)  # noqa: C400
    return np.sum(logs) * logs[0]


def walrus_in_a_comprehension(x):
    kept = [y for v in x if (y := v * v) > 0.2]
    return np.sum(kept) * len(kept)


def rows_by_comprehension(a, x):  # a scalar per row of a matrix
    return np.max([np.dot(row, x) for row in a])


def _two_lists_one_loop(x, w):
    return np.sum(w * np.exp(x)) / np.sum(np.exp(x))


def _list_of_a_generator(x):
    logs = np.log1p(x * x)
    return np.sum(logs) * logs[0]


def _walrus_in_a_comprehension(x):
    sq = x * x
    return np.sum(sq[sq > 0.2]) * np.sum(sq > 0.2)


def _rows_by_comprehension(a, x):
    return np.max(a @ x)


def _reduces_slices(x):
    return 2.0 * (np.sum(x[1:]) + x[0] + np.sum(x[1:]) + np.sum(x[:2]))


def _passes_the_list(x):
    return 2.0 * (x[0] + np.sum(x[1:]))


def _slices_the_list(x):
    return 2.0 * np.sum(x[1:])


TWINS.update({two_lists_one_loop: _two_lists_one_loop, list_of_a_generator: _list_of_a_generator,
              walrus_in_a_comprehension: _walrus_in_a_comprehension,
              rows_by_comprehension: _rows_by_comprehension, reduces_slices: _reduces_slices,
              passes_the_list: _passes_the_list, slices_the_list: _slices_the_list})


@pytest.mark.parametrize(("fn", "args"), [
    (two_lists_one_loop, (X, W)), (list_of_a_generator, (X,)),
    (walrus_in_a_comprehension, (X,)), (rows_by_comprehension, (A, X)),
    (reduces_slices, (X,)), (passes_the_list, (X,)), (slices_the_list, (X,))],
    ids=lambda c: getattr(c, "__name__", ""))
def test_more_list_forms(fn, args):
    test_gradient_matches_differences_and_tape(fn, args)
