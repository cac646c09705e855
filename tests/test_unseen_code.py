"""Regression tests for the wrong gradient and the crashes that code from outside the test suite
found (issue #42). Every gradient is compiled with Numba, as users run it, and checked against
central differences (`fd.numeric_grad`, at two steps) and, where JAX is installed, against JAX.

* **Loops over a tuple, with a jump** (the wrong gradient). A loop over a tuple known while
  building (``for kr in (0, 1):``) is unrolled, one copy of its body per item. A ``continue``
  or ``break`` in it was dropped at the top level and, inside a ``range`` loop, ended the
  *enclosing* loop's iteration: the contributions after it were lost. Ocean and climate
  models write their staggered-grid stencils this way (an isoneutral-mixing kernel: offsets
  ``kr``/``ip`` in (0, 1), the surface layer skipped with ``continue``, slopes tapered by
  ``tanh``, ``min``/``max`` limiters); `staggered_slopes` is a program of that class.
* **A conditional expression in both branches of another**: an internal KeyError.
* **Integer arrays in products and linear algebra**: ``H = np.array([[1, 0], ...])`` then
  ``H @ x`` with float ``x`` did not type in Numba (NumPy converts the integers to float).
* ``for``/``while`` ... ``else`` (refused before; issue 43's loop forms).
* **np.array's dtype given positionally** (``np.array(rows, float)``) was taken for an
  integer array, and a write of floats into it refused for the wrong reason.
* **array_like arguments**: a list or tuple where NumPy takes an array (``np.cross([0, 0, 1],
  h)``: an AttributeError), and einsum's sublist form (``np.einsum(M, [0, 1], [1, 0])``: a
  RecursionError).
"""

from __future__ import annotations

import inspect
import linecache
import math

import numpy as np
import pytest
from fd import check_two_steps

import jitgrad
from jitgrad.lang import symbolic

# ----------------------------------------------------------------- loops over tuples, with jumps

KISO_STEEP = 0.5  # the limiter's floor (a module constant, as the models keep theirs)


def _taper(s):
    """A slope taper between 0 and 1, as ocean models limit steep isopycnal slopes."""
    return 0.5 * (1.0 + np.tanh((0.8 - abs(s)) / 0.5))


def staggered_slopes(temp, dz, dx, kappa, out):
    """Slopes on a staggered grid: vertical gradients on the cells' lower faces first (the
    bottom face's set to 0 through a negative index), then for each cell the faces above and
    below (``kr``) and the two horizontal neighbours (``ip``), the surface face skipped with
    ``continue``; steep slopes tapered, and the result limited from below."""
    nx, nz = temp.shape
    dtdz = np.empty_like(temp)
    for i in range(nx):
        for k in range(nz - 1):
            dtdz[i, k] = (temp[i, k + 1] - temp[i, k]) / dz[k]
        dtdz[i, -1] = 0.0
    for i in range(nx - 1):
        for k in range(nz):
            total = 0.0
            for kr in (0, 1):
                if k == 0 and kr == 0:
                    continue  # no face above the surface
                for ip in (0, 1):
                    dtdx = (temp[i + 1, k] - temp[i, k]) / dx[i]
                    slope = -dtdx / min(-0.1, -dtdz[i + ip, k + kr - 1])
                    total += dz[k + kr - 1] * max(KISO_STEEP, kappa * _taper(slope))
            out[i, k] = total / (4.0 * dz[k])


def staggered_loss(temp, dz, dx, kappa):
    out = np.zeros(temp.shape)
    staggered_slopes(temp, dz, dx, kappa, out)
    return np.sum(out * np.arange(1.0, out.size + 1.0).reshape(out.shape))


def tuple_loop_continue(x):
    s = 0.0
    for c in (0.5, 1.5, 2.5):
        if c < 1.0:
            continue
        s += x[0] * c
    return s + x[1]


def tuple_loop_break_at_run_time(x):
    s = 0.0
    for c in (0.5, 1.5, 2.5):
        if x[0] * c > 1.0:
            break  # known at run time only: the copies after it run under `if not break`
        s += x[1] * c
    return s + x[2]


def tuple_loop_return(x):
    for c in (1.0, 2.0, 3.0):
        if x[0] * c > 2.0:
            return x[1] * c
    return x[2]


def tuple_loop_continue_inside_range(x):
    s = 0.0
    for i in range(3):
        for c in (1, 2):
            if x[i] > 0.0:
                continue  # the tuple loop's own iteration ends, not the range loop's
            s += x[i] * c
        s += 0.5 * x[i]
    return s


def zipped_tuples_continue(x):
    out = np.zeros(3)
    for c, w in zip((0, 1, 2), (0.5, 1.0, 2.0)):
        if c == 1:
            continue
        out[c] = x[c] * w
    return np.sum(out ** 2)


OFFSETS = ((0, 1), (1, 0))  # module-level pairs, as models keep their stencils' offsets
WEIGHTS = [(0.5, 1.0), (2.0, 0.25)]


def module_level_pairs(x):
    s = 0.0
    for kr, ip in OFFSETS:
        if kr == 1 and x[ip] > 5.0:
            continue
        s += x[kr] * (ip + 1.0)
    for a, b in WEIGHTS:
        s += a * x[0] * x[1] + b
    return s


def _temperature_column(rng):
    """A stratified column (temperature rising with the level index) with horizontal gradients
    of a few tenths of the vertical ones: the taper is neither 0 nor 1."""
    base = np.linspace(7.0, 10.0, 3)[None, :] + np.array([0.0, 1.5, 2.0, 4.5])[:, None]
    return base + 0.05 * rng.standard_normal((4, 3))


RNG = np.random.default_rng(42)
TEMP = _temperature_column(RNG)
DZ = np.array([1.0, 1.3, 1.7])
DX = np.array([2.0, 2.2, 1.9, 2.1])
KAPPA = 0.9

TUPLE_LOOP_CASES = [
    (staggered_loss, (TEMP, DZ, DX, KAPPA), (0, 1, 2, 3)),
    (tuple_loop_continue, (np.array([0.7, -0.4, 1.1]),), (0,)),
    (tuple_loop_break_at_run_time, (np.array([0.5, -0.4, 1.1]),), (0,)),
    (tuple_loop_break_at_run_time, (np.array([0.9, -0.4, 1.1]),), (0,)),
    (tuple_loop_break_at_run_time, (np.array([-0.3, -0.4, 1.1]),), (0,)),
    (tuple_loop_return, (np.array([0.8, -0.3, 0.4]),), (0,)),
    (tuple_loop_return, (np.array([1.3, -0.3, 0.4]),), (0,)),
    (tuple_loop_return, (np.array([0.1, -0.3, 0.4]),), (0,)),
    (tuple_loop_continue_inside_range, (np.array([0.8, -0.3, 0.4]),), (0,)),
    (zipped_tuples_continue, (np.array([0.8, -0.3, 0.4]),), (0,)),
    (module_level_pairs, (np.array([0.8, -0.3]),), (0,)),
]


def check_against_differences(fn, args, wrt):
    """jitgrad's value and gradients (`fd.check_two_steps`)."""
    value, grads = jitgrad.value_and_grad(fn, wrt=tuple(wrt))(*args)
    return check_two_steps(fn, args, wrt, value, grads, value_rtol=1e-12)


@pytest.mark.parametrize(("fn", "args", "wrt"), TUPLE_LOOP_CASES,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(TUPLE_LOOP_CASES)])
def test_jumps_in_loops_over_tuples(fn, args, wrt):
    check_against_differences(fn, args, wrt)


def test_the_staggered_slopes_exercise_the_taper_and_the_limiter():
    """The inputs reach the taper's smooth part and both sides of the limiter, so the test can
    see a lost contribution (a gradient of 0 from a taper at 0 or 1 would hide it)."""
    dtdz = np.zeros_like(TEMP)
    dtdz[:, :-1] = np.diff(TEMP, axis=1) / DZ[:-1]
    tapers = np.array([_taper((TEMP[i, k] - TEMP[i + 1, k]) / DX[i]
                              / min(-0.1, -dtdz[i + ip, k + kr - 1]))
                       for i in range(3) for k in range(3) for kr in (0, 1) for ip in (0, 1)
                       if k or kr])
    assert np.sum((tapers > 0.1) & (tapers < 0.9)) >= 8
    limited = KAPPA * tapers < KISO_STEEP
    assert 0 < np.sum(limited) < len(tapers)


# ------------------------------------------------------------------- for ... else, while ... else


def first_crossing(x, limit):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
        if s > limit:
            break
    else:  # no crossing: runs only when the loop did not break
        s = s * 0.5
    return s


def crossing_over_a_tuple(x, limit):
    s = 0.0
    for c in (1.0, 2.0, 3.0):
        s += c * x[0]
        if s > limit:
            break
    else:
        s = -s
    return s


def newton_sqrt(x, tol):
    y = x
    k = 0
    while k < 20:
        y = y - (y * y - 2.0 * x) / (2.0 * y)
        k += 1
        if abs(y * y - 2.0 * x) < tol:
            break
    else:  # not converged
        y = 0.0 * y
    return y


def nested_loop_else(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            if j > i:
                break  # the inner loop's break: the inner else is skipped, not the outer
            s += x[i] * x[j]
        else:
            s += 10.0 * x[i]
    else:  # noqa: PLW0120 - an else with no break of its own always runs
        s *= 2.0
    return s


LOOP_ELSE = np.array([0.6, 0.8, 1.1])


@pytest.mark.parametrize(("fn", "args"), [
    (first_crossing, (LOOP_ELSE, 0.5)), (first_crossing, (LOOP_ELSE, 10.0)),
    (crossing_over_a_tuple, (LOOP_ELSE, 1.0)), (crossing_over_a_tuple, (LOOP_ELSE, 10.0)),
    (newton_sqrt, (1.3, 1e-12)), (newton_sqrt, (1.3, -1.0)), (nested_loop_else, (LOOP_ELSE,))])
def test_else_on_loops(fn, args):
    check_against_differences(fn, args, (0,))


# ----------------------------------------------------------------- nested conditional expressions


def nested_ifexp(x, c, d):
    a = x * 2.0
    return (a if c > 0.0 else x) if d > 0.0 else (x * x if c > 1.0 else a * x)


@pytest.mark.parametrize(("c", "d"), [(1.0, 1.0), (-1.0, 1.0), (2.0, -1.0), (0.5, -1.0)])
def test_a_conditional_expression_in_both_branches_of_another(c, d):
    check_against_differences(nested_ifexp, (1.5, c, d), (0,))


# ------------------------------------------------------------------ integer arrays and dtypes


def integer_observation(x, P):
    """A Kalman-style observation matrix written as integers, used with float arrays."""
    H = np.array([[1, 0, 0, 0], [0, 1, 0, 0]])
    z = H @ x
    S = H @ P @ H.T + np.eye(2)
    return np.sum(z * np.linalg.solve(S, z)) + np.linalg.det(np.array([[2, 1], [1, 3]]) + S)


def positional_float_dtype(x):
    A = np.array([[1, 0, 0], [1, 0, 0]], float)  # NumPy: a float array
    A[0, 1] = x[0] * 2.0
    B = np.asarray([[0, 1, 0]], np.float64)
    B[0, 2] = x[1]
    return np.sum(A @ x) + np.sum(B @ x) + np.sum(np.array([1, 2, 3], "f8") * x)


def test_integer_matrices_in_products_and_linear_algebra():
    x = np.array([0.3, -0.8, 1.1, 0.4])
    P = np.array([[1.0, 0.2, 0.0, 0.1], [0.2, 2.0, 0.3, 0.0], [0.0, 0.3, 1.5, 0.2],
                  [0.1, 0.0, 0.2, 1.2]])
    check_against_differences(integer_observation, (x, P), (0, 1))


def test_np_array_dtype_given_positionally():
    g, = check_against_differences(positional_float_dtype, (np.array([0.7, -1.2, 0.4]),), (0,))
    assert np.all(g != 0.0)


# ----------------------------------------------------------------------- array_like arguments

UP = [0, 0, 1]


def cross_with_a_list(h):
    return np.sum(np.cross(UP, h) * np.array([1.0, -2.0, 0.5])) + np.sum(
        np.cross(h, (1.0, 0.0, 0.0)) ** 2)


def einsum_sublists(h):
    M = np.outer(h, h + 1.0)
    return (np.sum(np.einsum(M, (0, 1), (1, 0)) * np.arange(9.0).reshape(3, 3))
            + np.sum(np.einsum(M, [0, 1], h, [1], [0]) ** 2) + np.einsum(M, [0, 0]))


def lists_where_numpy_takes_arrays(h):
    return (np.dot([1, 2, 3], h) + np.sum(np.outer([1.0, 2.0], h) ** 2)
            + np.sum(np.maximum(h, [0.5, 0.5, 0.5])) + np.sum(np.convolve(h, [0.25, 0.5, 0.25]))
            + np.sum(h * [1.0, 2.0, 3.0]) + np.mean([h[0], h[1]]) + np.max([h[0], h[1], 0.1])
            + np.sum(np.exp([h[0], h[2]])) + np.vdot(np.array([1.0, 2.0, 3.0]) * 2.0, h))


ARRAY_LIKE = np.array([0.3, 0.7, 1.1])


@pytest.mark.parametrize("fn", [cross_with_a_list, einsum_sublists,
                                lists_where_numpy_takes_arrays])
def test_array_like_arguments(fn):
    check_against_differences(fn, (ARRAY_LIKE,), (0,))


def test_einsum_sublists_malformed_are_refused_with_a_reason():
    def f(h):
        return np.sum(np.einsum(np.outer(h, h), [0, 60], [0]))  # (NumPy: labels 0 to 51)
    with pytest.raises(jitgrad.UnsupportedError, match="sublists"):
        jitgrad.grad(f)(ARRAY_LIKE)


# ----------------------------------------------------- NumPy's parameters, in NumPy's order


def positional_numpy_arguments(A):
    """Positional arguments as NumPy binds them: np.sum's third is dtype (it was taken for
    keepdims), np.max's third is out, the methods' second is dtype."""
    col = np.sum(A, 0, float)  # shape (3,): no keepdims
    row = np.max(A, 1, None, True)  # shape (2, 1)
    kept = A.sum(1, None, None, True)  # shape (2, 1)
    return (np.sum(col * np.array([1.0, 2.0, 3.0])) + np.sum(row * A) + np.sum(kept * A)
            + np.sum(np.cumsum(A, 1, float) ** 2) + np.sum(np.std(A, 0, float, None, 1))
            + np.sum(np.array(A, copy=True) ** 3) + np.mean(A, 1, np.float64) @ [1.0, -1.0])


def test_positional_arguments_mean_what_they_mean_in_numpy():
    A = np.array([[0.3, 0.7, 1.1], [0.2, -0.5, 0.9]])
    check_against_differences(positional_numpy_arguments, (A,), (0,))


# Parameters named otherwise than NumPy names them, with the same meaning at that position
# (none today: the scalar types' constructors take NumPy's `value`).
RENAMED: dict = {}


def test_numpy_handlers_take_numpys_optional_parameters_in_numpys_order():
    """A handler's optional positional parameters have NumPy's names, in NumPy's order: a
    positional argument reaches the parameter NumPy would bind it to."""
    def positional(fn):
        return [p for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    checked = 0
    for fn, handler in symbolic.NUMPY.items():
        try:
            theirs, ours = positional(fn), positional(handler)
        except (TypeError, ValueError):  # ufuncs and builtins: no signature to read
            continue
        required = sum(p.default is p.empty for p in theirs)
        renamed = RENAMED.get(fn.__name__, {})
        for p, q in list(zip(theirs, ours))[required:]:
            assert renamed.get(p.name, p.name) == q.name, (
                f"np.{fn.__name__}: NumPy's parameter {p.name!r} is the handler's {q.name!r}")
            checked += 1
    assert checked > 100


# ------------------------------------------------------------------------------------ JAX


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def staggered_jax(temp, dz, dx, kappa):
        dtdz = jnp.zeros(temp.shape).at[:, :-1].set(jnp.diff(temp, axis=1) / dz[:-1])
        total = jnp.zeros(temp.shape)
        nx, nz = temp.shape
        for i in range(nx - 1):
            for k in range(nz):
                acc = 0.0
                for kr in (0, 1):
                    if k == 0 and kr == 0:
                        continue
                    for ip in (0, 1):
                        dtdx = (temp[i + 1, k] - temp[i, k]) / dx[i]
                        slope = -dtdx / jnp.minimum(-0.1, -dtdz[i + ip, k + kr - 1])
                        taper = 0.5 * (1.0 + jnp.tanh((0.8 - jnp.abs(slope)) / 0.5))
                        acc = acc + dz[k + kr - 1] * jnp.maximum(KISO_STEEP, kappa * taper)
                total = total.at[i, k].set(acc / (4.0 * dz[k]))
        return jnp.sum(total * jnp.arange(1.0, total.size + 1.0).reshape(total.shape))

    want = jax.grad(staggered_jax, argnums=(0, 1, 2, 3))(TEMP, DZ, DX, KAPPA)
    got = jitgrad.grad(staggered_loss, wrt=(0, 1, 2, 3))(TEMP, DZ, DX, KAPPA)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)

    h = ARRAY_LIKE
    want = jax.grad(lambda h: jnp.sum(jnp.cross(jnp.array([0.0, 0.0, 1.0]), h)
                                      * jnp.array([1.0, -2.0, 0.5]))
                    + jnp.sum(jnp.cross(h, jnp.array([1.0, 0.0, 0.0])) ** 2))(h)
    np.testing.assert_allclose(jitgrad.grad(cross_with_a_list)(h), want, rtol=1e-12)
    M = lambda h: jnp.outer(h, h + 1.0)
    want = jax.grad(lambda h: jnp.sum(M(h).T * jnp.arange(9.0).reshape(3, 3))
                    + jnp.sum((M(h) @ h) ** 2) + jnp.trace(M(h)))(h)
    np.testing.assert_allclose(jitgrad.grad(einsum_sublists)(h), want, rtol=1e-12)
    assert math.isfinite(float(want[0]))


# ------------------------------------------------------------------ a source changed on disk


def test_a_source_changed_since_import_is_refused_not_misread(tmp_path, monkeypatch):
    """A module edited after it was imported: the function's first line now starts another
    `def`. jitgrad read that one (a KeyError on its parameters); now it says what happened."""
    path = tmp_path / "edited_module.py"
    path.write_text("import numpy as np\n\n\ndef loss(x):\n    return np.sum(x ** 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_module

    path.write_text("import numpy as np\n\n\ndef other(z, w):\n    return z\n\n\n"
                    "def loss(x):\n    return np.sum(x ** 2)\n")
    linecache.checkcache(str(path))
    with pytest.raises(jitgrad.UnsupportedError, match="has changed since it was imported"):
        jitgrad.grad(edited_module.loss)(ARRAY_LIKE)


# ---------------------------------------------- issue 43: views, ufunc keywords, try, and `or`
# Held-out code wrote these forms; each is written here anew, all in one function (one compile):
# * a write into a reshape of a fresh array (a callee's ``np.reshape(flat, shape)`` then the
#   caller's ``v -= ...``, in a loop), into a slice of one (``np.kron(...)[:n]``, then
#   ``w[0] = w[-1] = 1.0``), and into one made before a loop that writes it: the view is
#   written as a copy of it, and its array, which NumPy may or may not have changed, is never
#   read again (a read is refused);
# * a ufunc's ``out=`` and ``where=`` (a comparison into a bool array, a product into floats);
# * ``if scale is None or np.allclose(scale, 1.0)`` with ``scale`` None: ``or`` short-circuits
#   while building, and np.allclose(None, ...) is never built;
# * a try around a mask's write and a read at ``i`` in ``for i in range(len(y))``: neither
#   raises where the compiled code would not (a mask's shape is checked at run time).


def _as_grid(a, n):
    flat = np.exp(a[:2 * n]) * 0.5
    return np.reshape(flat, (n, 2))


def held_out_forms(x, s, scale=None):
    total = 0.0
    for k in range(2):
        v = _as_grid(x * (k + 1.0), 3)
        v -= 0.25 * np.roll(v, 1, axis=0) * s
        total = total + np.sum(v * v)
    w = np.kron(np.ones(3), np.array([2.0, 4.0]))[:5]
    w[0] = w[-1] = 1.0
    grid = (x * 0.5).reshape(2, 3)
    for r in range(2):  # written in a loop, made before it: copied before the loop
        grid[r, 0] = grid[r, 2] * s
    total = total + np.sum(grid * grid)
    big = np.zeros(x.shape, dtype=bool)
    np.greater_equal(np.abs(x), 0.5, where=x > 0.0, out=big)
    acc = np.ones_like(x)
    np.multiply(x, s, out=acc, where=x < 0.0)
    if scale is None or np.allclose(scale, 1.0):
        c = s
    else:
        c = scale
    y = np.sin(x)
    try:
        y[big] = -y[big]
    except TypeError:
        y = -y
    for i in range(len(y)):
        try:
            y[i] = y[i] * (i + 1.0)
        except TypeError:
            pass
    return total + (w @ x[:5]) * c + np.sum(acc * acc) + np.sum(y * x)


HELD_OUT_X = np.array([0.9, -0.3, 0.2, -0.8, 0.6, -1.1])


def test_held_out_forms_against_differences_and_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    grads = check_against_differences(held_out_forms, (HELD_OUT_X, 0.7), (0, 1))

    def forms_jax(x, s):
        total = 0.0
        for k in range(2):
            v = (jnp.exp((x * (k + 1.0))[:6]) * 0.5).reshape(3, 2)
            v = v - 0.25 * jnp.roll(v, 1, axis=0) * s
            total = total + jnp.sum(v * v)
        w = jnp.array([1.0, 4.0, 2.0, 4.0, 1.0])
        grid = (x * 0.5).reshape(2, 3)
        grid = grid.at[:, 0].set(grid[:, 2] * s)
        total = total + jnp.sum(grid * grid)
        big = (jnp.abs(x) >= 0.5) & (x > 0.0)
        acc = jnp.where(x < 0.0, x * s, 1.0)
        y = jnp.where(big, -jnp.sin(x), jnp.sin(x)) * jnp.arange(1.0, 7.0)
        return total + (w @ x[:5]) * s + jnp.sum(acc * acc) + jnp.sum(y * x)

    want = jax.grad(forms_jax, argnums=(0, 1))(HELD_OUT_X, 0.7)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12)


def test_held_out_forms_refused_where_python_may_differ():
    """A reshape's array read after a write through it (a new array's, an argument's written
    in a loop); ``where=`` without ``out=`` (NumPy
    leaves those entries uninitialised); an integer index in a try not proven in range."""
    def reads_array_after(x):
        y = x * 2.0
        v = y.reshape(2, -1)
        v[0, 0] = 1.0
        return np.sum(y)

    def argument_read_after(x):
        v = x.reshape(2, -1)
        for r in range(2):
            v[r, 0] = v[r, 1] * 3.0
        return np.sum(v * v) + np.sum(x)

    def where_without_out(x):
        return np.sum(np.exp(x, where=x > 0.0))

    def index_in_try(x, i):
        y = x * 2.0
        try:
            y[i + 1] = 0.0
        except TypeError:
            pass
        return np.sum(y)

    for fn, args, match in [
            (reads_array_after, (HELD_OUT_X,), "`y` shares memory with an array written"),
            (argument_read_after, (HELD_OUT_X,), "`x` shares memory with an array written"),
            (where_without_out, (HELD_OUT_X,), r"where=\) without out=.*np\.where"),
            (index_in_try, (HELD_OUT_X, 1),
             r"here `y\[i \+ 1\]`.*an integer index is not checked")]:
        with pytest.raises(jitgrad.UnsupportedError, match=match):
            jitgrad.grad(fn)(*args)
