"""Regression tests for the wrong answers and crashes found at the seams (issue #21).

Each function here came back silently wrong or crashed inside jitgrad before the fix: a called
function's writes into its caller's array inside a loop with a branch (the gradient was zero),
rows read through negative integer indices (no gradient), ``np.power(x, 0.0)`` at 0 (NaN), and a
``return`` under a condition known to be true inside a loop (an internal AttributeError).
Every gradient is compiled with Numba, as users run it, and checked against central differences
(`fd.numeric_grad`), against the interpreted tape where it can run the function, and against JAX
where JAX is installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad
from jitgrad import tape

RTOL, ATOL = 1e-6, 1e-9


def assert_close(got, want, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- called functions
# A helper that writes into its caller's array inside a loop whose body has a branch.


def clip_below_zero(p, s):
    for t in range(2):
        s[t] = p[0] * 3.0
        if s[t] < 0.0:  # noqa: PLR1730 - the branch is what is tested
            s[t] = 0.0


def clipped_loss(p):
    s = np.zeros(2)
    clip_below_zero(p, s)
    return s[0] + s[1]


def variance_recursion(omega, alpha, r, h):
    """A GARCH-like variance recursion with a clipping step, written into the caller's h."""
    for t in range(1, r.shape[0]):
        h[t] = omega + alpha * r[t - 1] * r[t - 1] + 0.5 * h[t - 1]
        if h[t] < 0.05:  # noqa: PLR1730 - the branch is what is tested
            h[t] = 0.05


def garch_nll(params, r):
    h = np.empty(r.shape[0])
    h[0] = 0.1
    variance_recursion(params[0], params[1], r, h)
    total = 0.0
    for t in range(r.shape[0]):
        total += math.log(h[t]) + r[t] * r[t] / h[t]
    return 0.5 * total


def nested_writes(x, out):
    """Writes into the caller's array in a loop nest, under branches on both levels."""
    for i in range(out.shape[0]):
        if x[i] > 0.0:
            for j in range(2):
                out[i] += x[i] * (j + 1.0)
                if out[i] > 2.0:
                    out[i] = 2.0 + 0.1 * out[i]
        else:
            out[i] = x[i] * x[i]


def nested_loss(x):
    out = np.zeros(x.shape[0])
    for _ in range(2):
        nested_writes(x, out)
    return np.sum(out * out)


def one_write_per_branch(x, s):
    for t in range(x.shape[0]):
        if x[t] > 0.0:
            s[t] = x[t] * 2.0
        else:
            s[t] = x[t] * x[t]


def branch_loss(x):
    s = np.zeros(x.shape[0])
    one_write_per_branch(x, s)
    return np.sum(np.sin(s))


def while_writes(p, s):
    t = 0
    while t < 3:
        s[t] = p[0] * (t + 1.0)
        if s[t] > 2.5:
            s[t] = 2.5 + 0.5 * p[1]
        t += 1


def while_loss(p):
    s = np.zeros(3)
    while_writes(p, s)
    return np.sum(s * s)


def write_one(p, s, t):
    s[t] = p[t] * 3.0
    if s[t] > 1.0:
        s[t] = 1.0 + p[t]


def called_in_a_loop(p):
    s = np.zeros(3)
    for t in range(3):
        write_one(p, s, t)
    return np.sum(s * s)


CALLEE_CASES = [
    (clipped_loss, (np.array([1.0, 2.0]),), [6.0, 0.0]),
    (clipped_loss, (np.array([-1.0, 2.0]),), [0.0, 0.0]),
    (garch_nll, (np.array([0.2, 0.3]), np.array([0.5, -1.2, 0.3, 2.0, -0.7, 0.1])), None),
    (nested_loss, (np.array([0.3, -0.8, 1.7, 0.9]),), None),
    (branch_loss, (np.array([0.3, -0.8, 1.7, -0.2]),), None),
    (while_loss, (np.array([1.2, 0.7, -0.4]),), [12.0, 2.85, 0.0]),
    (called_in_a_loop, (np.array([1.2, 0.2, -0.4]),), None),
]


@pytest.mark.parametrize("fn, args, expected", CALLEE_CASES,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CALLEE_CASES)])
def test_a_callee_writes_into_its_callers_array_in_a_loop_with_a_branch(fn, args, expected):
    value, g = jitgrad.value_and_grad(fn)(*args)
    assert value == pytest.approx(fn(*[a.copy() for a in args]), rel=1e-12)
    assert_close(g, numeric_grad(fn, args, 0))
    if expected is not None:
        assert_close(g, expected)


def test_a_read_of_an_array_a_callee_wrote_is_never_out_of_date():
    """The safety net beneath the fix: with the caller's name left on the array's old version
    (as before the fix), the read after the call is refused, not silently stale."""
    import jitgrad.frontend.build_carries as loops  # (where loops decide what they carry)

    real = loops.holds_storage_of
    loops.holds_storage_of = lambda value, array, blocks: value.root is array  # the old rule
    try:
        def fresh(p):  # a new function: nothing cached
            s = np.zeros(2)
            clip_below_zero(p, s)
            return s[0] + s[1]
        with pytest.raises(jitgrad.UnsupportedError, match="written in place after it was made"):
            jitgrad.grad(fresh)(np.array([1.0, 2.0]))
    finally:
        loops.holds_storage_of = real


# ----------------------------------------------------------------------------- negative indices


def rows_squared(W, idx):
    return np.sum(W[idx] ** 2)


def rows_weighted(W, idx):
    R = W[idx]
    return np.sum(R * np.arange(1.0, R.size + 1.0).reshape(R.shape))


def constant_negative_rows(W):
    return np.sum(np.sin(W[[-1, 0, -1, 2]]))


def last_column_as_rows(W, new_W):
    # autograd's own test: indices made from data, some negative
    return np.sum(new_W[np.int64(W[:, -1])] ** 2)


def stack_rows(T, idx):
    return np.sum(T[idx] * T[idx])


def scalar_negative_index(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i - 2] * x[i]  # i - 2 is negative for the first two steps
    return total


def negative_index_writes(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i - 1] = x[i] * x[i]
    y[-2] += x[0]
    return np.sum(y * np.arange(1.0, y.shape[0] + 1.0))


def sorted_weights(x):
    order = np.argsort(x)  # integers built from data (np.argsort was documented, not wired)
    return np.sum(x[order] * np.arange(1.0, x.shape[0] + 1.0)) + x[order[-1]] ** 2


def indices_from_data(x, A):
    rows = np.int64(np.floor(np.abs(x) * 2.0)) - 3  # some negative, some repeated
    return np.sum(A[rows] * A[rows])


def literal_index_array(W):
    idx = np.array([-1, -2, 0, -1])  # integers, as NumPy makes them (was a float array)
    return np.sum(W[idx] @ W[0])


rng = np.random.default_rng(21)
W4 = rng.standard_normal(4)
W43 = rng.standard_normal((4, 3))
T423 = rng.standard_normal((4, 2, 3))
IDX = np.array([-1, 0, 2, -1, -4])
NEGATIVE_CASES = [
    (rows_squared, (W4, IDX), 0),
    (rows_squared, (W43, IDX), 0),
    (rows_weighted, (W43, np.array([3, -3, -3, 0])), 0),
    (constant_negative_rows, (W43,), 0),
    (last_column_as_rows, (np.array([[0.3, -1.0], [0.1, 2.0], [0.7, -3.0]]), W43), 1),
    (stack_rows, (T423, IDX), 0),
    (scalar_negative_index, (W4 + 0.0,), 0),
    (negative_index_writes, (rng.standard_normal(5),), 0),
    (sorted_weights, (rng.standard_normal(5),), 0),
    (literal_index_array, (rng.standard_normal((4, 4)),), 0),
    (indices_from_data, (np.array([0.2, 1.3, 0.6, 1.2, 0.1]), W43), 1),
]


@pytest.mark.parametrize("fn, args, wrt", NEGATIVE_CASES,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(NEGATIVE_CASES)])
def test_negative_and_repeated_indices_take_their_gradient(fn, args, wrt):
    value, g = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    want = numeric_grad(fn, args, wrt)
    assert_close(g, want)
    assert np.count_nonzero(want), "the case must reach some entry"


def test_an_index_out_of_bounds_raises_in_the_adjoint_too():
    f = jitgrad.grad(rows_squared)
    with pytest.raises((IndexError, jitgrad.JitgradError)):
        f(W4, np.array([0, -5]))


def test_negative_rows_on_the_tape():
    g = tape.grad(rows_squared, wrt=0)(W43, IDX)
    assert_close(g, numeric_grad(rows_squared, (W43, IDX), 0))


def test_negative_rows_second_order():
    def cubed(W, idx):
        return np.sum(W[idx] ** 3)
    H = jitgrad.hessian(cubed, wrt=0)(W4, IDX)
    counts = np.zeros(4)
    np.add.at(counts, IDX, 1.0)
    assert_close(H, np.diag(6.0 * counts * W4), rtol=1e-10)


# ----------------------------------------------------------------------------- powers at zero


def power_zero(x):
    return np.sum(np.power(x, 0.0))


def power_zero_int(x):
    return np.sum(x ** 0) + np.sum(x * x ** 0)


def power_of(x, y):
    return np.sum(np.power(x, y))


def integer_powers_of_negative_bases(x):
    return np.sum(x ** 2) + np.sum(x ** 3) - np.sum(np.power(x, 4.0))


POW_X = np.array([0.0, 1.0, -2.0, 0.5])


def test_power_zero_has_zero_gradient_at_zero():
    assert_close(jitgrad.grad(power_zero)(POW_X), np.zeros(4), atol=0)
    assert_close(jitgrad.grad(power_zero_int)(POW_X), np.ones(4), atol=0)


def test_power_with_an_exponent_known_only_at_run_time():
    gx = jitgrad.grad(power_of, wrt=0)(POW_X, 0.0)
    assert_close(gx, np.zeros(4), atol=0)
    gx = jitgrad.grad(power_of, wrt=0)(POW_X, 2.0)
    assert_close(gx, 2.0 * POW_X, atol=0)
    gx, gy = jitgrad.grad(power_of, wrt=(0, 1))(np.array([0.0, 1.5, 2.0]), 3.0)
    assert_close(gx, 3.0 * np.array([0.0, 1.5, 2.0]) ** 2)
    assert gy == pytest.approx(1.5 ** 3 * math.log(1.5) + 8.0 * math.log(2.0))


def test_power_second_order_at_zero():
    assert_close(jitgrad.hessian(power_zero)(POW_X), np.zeros((4, 4)), atol=0)
    assert_close(jitgrad.hessian(power_of, wrt=0)(POW_X, 0.0), np.zeros((4, 4)), atol=0)
    assert_close(jitgrad.hessian(power_of, wrt=0)(POW_X, 2.0), 2.0 * np.eye(4), atol=0)


def test_integer_powers_of_negative_bases():
    x = np.array([-1.5, -0.3, 0.0, 2.0])
    g = jitgrad.grad(integer_powers_of_negative_bases)(x)
    assert_close(g, 2 * x + 3 * x ** 2 - 4 * x ** 3)


# ----------------------------------------------------------------------------- constant exits


def return_under_true(x):
    s = 0.0
    for i in range(3):
        s += x * (i + 1)
        if True:
            return s
    return s


def return_under_known_condition(x):
    s = 0.0
    for i in range(3):
        s += x * (i + 1)
        if i >= 0:
            return s * s
    return s


@pytest.mark.parametrize("fn, want", [(return_under_true, 1.0),
                                      (return_under_known_condition, 4.0)])
def test_a_return_under_a_condition_known_to_be_true(fn, want):
    g = jitgrad.grad(fn)
    assert g(2.0) == pytest.approx(want)
    assert numeric_grad(fn, (2.0,), 0) == pytest.approx(want, rel=1e-6)
    assert "until " in g.ir()  # the IR printer crashed on a constant exit flag


# ----------------------------------------------------------------------------- JAX, if installed


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    g = jitgrad.grad(rows_squared)(W43, IDX)
    assert_close(g, jax.grad(lambda W: jnp.sum(W[IDX] ** 2))(W43), rtol=1e-12)
    g = jitgrad.grad(power_zero)(POW_X)
    # (JAX's float exponent gives NaN at x = 0, its integer one 0, as autograd: 0 is the value)
    assert_close(g, jax.grad(lambda x: jnp.sum(jnp.power(x, 0)))(POW_X), atol=0)
    H = jitgrad.hessian(power_of, wrt=0)(POW_X, 0.0)
    assert_close(H, jax.hessian(lambda x: jnp.sum(jnp.power(x, 0)))(POW_X), atol=0)
    x = np.array([-1.5, -0.3, 0.0, 2.0])
    want = jax.grad(lambda x: jnp.sum(x ** 2) + jnp.sum(x ** 3) - jnp.sum(jnp.power(x, 4.0)))(x)
    assert_close(jitgrad.grad(integer_powers_of_negative_bases)(x), want, rtol=1e-12)


# ----------------------------------------------------------------------------- transforms of
# transforms and wrt (nesting itself: tests/test_nesting.py)


def cube(x):
    return x ** 3


def three(a, b, c):
    return a * b * c


@pytest.mark.parametrize("make", [
    lambda: jitgrad.grad(jitgrad.hessian(cube)),
    lambda: jitgrad.jacobian(jitgrad.hessian(cube)),
], ids=["grad-hessian", "jacobian-hessian"])
def test_a_transform_that_cannot_be_traced_is_refused_not_unwrapped(make):
    """grad(grad(f)) once read f's own source through ``__wrapped__`` and returned f' again (3
    for x**3 at 1, not 6). What still cannot be nested is refused, never unwrapped."""
    with pytest.raises(jitgrad.UnsupportedError, match="cannot be transformed again"):
        make()(1.0)


def _outer_waves(x):
    return np.sin(np.outer(x, x)) + np.cos(np.dot(x, x))


def _sines_of_jacobian(x):
    return np.sum(np.sin(jitgrad.jacobian(_outer_waves)(x)))


def test_jacobian_of_jacobian_and_a_jacobian_called_inside():
    """A Jacobian traces itself (a loop of tangents, `compose.jacobian_trace`): the Jacobian
    of a Jacobian is the second derivative (the Hessian of a scalar function, as `hessian`
    gives it), and a differentiated function may call one (its gradient against central
    differences)."""
    assert jitgrad.jacobian(jitgrad.jacobian(cube))(1.0) == pytest.approx(6.0)
    x = np.array([0.3, -0.7, 0.4])
    second = jitgrad.jacobian(jitgrad.jacobian(_outer_waves))(x)
    assert second.shape == (3, 3, 3, 3)
    np.testing.assert_allclose(second[0, 1], jitgrad.hessian(lambda x: _outer_waves(x)[0, 1])(x),
                               rtol=1e-12, atol=1e-14)
    g = jitgrad.grad(_sines_of_jacobian)(x)
    np.testing.assert_allclose(g, numeric_grad(_sines_of_jacobian, (x,), 0), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("entry", ["grad", "value_and_grad", "jacobian", "hessian", "hvp"])
@pytest.mark.parametrize("wrt, message", [
    (5, "out of range"), (-4, "out of range"), ((0, 0), "twice"), ((0, "a"), "twice"),
    (1.0, "by position or name"), (True, "by position or name"), ("d", "no argument named"),
    ((), "empty"),
])
def test_wrt_is_resolved_in_one_place(entry, wrt, message):
    if entry in ("hessian", "hvp") and isinstance(wrt, tuple) and len(wrt) == 2:
        message = "several arguments|twice"
    if entry in ("hessian", "hvp") and wrt == ():
        message = "several arguments|empty"
    with pytest.raises(jitgrad.SignatureError, match=message):
        getattr(jitgrad, entry)(three, wrt=wrt)


def test_a_negative_wrt_counts_from_the_end():
    assert jitgrad.grad(three, wrt=-1)(2.0, 3.0, 4.0) == pytest.approx(6.0)
    J = jitgrad.jacobian(three, wrt=-1)(2.0, 3.0, 4.0)
    assert float(J) == pytest.approx(6.0)


def _loop_energy(a, x):
    n = x.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = math.exp(-a * (x[i] - x[j]) ** 2)
    return np.sum(K * K)


_d_loop_energy = jitgrad.grad(_loop_energy)


def _along_a_gradient_with_a_loop(a, x):
    return 2.0 * _d_loop_energy(a, x) + a


def test_gradient_of_a_gradient_whose_adjoint_is_a_loop():
    """A function calling a module-level gradient of a loop: the inner gradient's graph has
    its adjoint loop (`ir.Repeat`), which verifying the grafted graph once crashed on; the
    outer gradient (forward mode over the graft) against central differences."""
    x = np.array([0.3, 1.2, 0.7])
    got = jitgrad.grad(_along_a_gradient_with_a_loop)(0.4, x)
    assert got == pytest.approx(float(numeric_grad(_along_a_gradient_with_a_loop, (0.4, x), 0)),
                                rel=1e-6)
