"""Size assumptions: axes of arguments that broadcast against each other are compiled as the
same size and checked on entry; a call where NumPy would broadcast a size 1 instead gets the
general code for its signature. Either way the gradient is NumPy's, never a stale shape."""

import os
import re

import numpy as np
import pytest
from fd import numeric_grad

import jitgrad

HERE = os.path.abspath(__file__)


def bias_loss(W, b, x):
    h = np.tanh(x @ W + b)  # marker: bias
    return np.sum(h * h)


def literal_sizes(x):
    return np.sum((x + np.ones(3)) ** 2)


def checked_in_a_branch(x, y, flag):
    if flag > 0:
        return np.sum(np.exp(x * y))
    return np.sum(x) + np.sum(y)


def _check(g, f, args, wrt):
    got = g(*args)
    got = got if isinstance(got, tuple) else (got,)
    for k, gk in zip(wrt, got):
        want = numeric_grad(f, args, k)
        assert np.shape(gk) == np.shape(args[k])
        np.testing.assert_allclose(gk, want, rtol=1e-6, atol=1e-8)


def _line_of(marker):
    with open(HERE) as f:
        return next(n for n, line in enumerate(f, 1) if f"marker: {marker}" in line)


def test_the_common_case_is_compiled_with_a_check_on_entry():
    g = jitgrad.grad(bias_loss, wrt=(0, 1))
    rng = np.random.default_rng(0)
    _check(g, bias_loss, (rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))),
           (0, 1))
    src = g.source("forward")
    assert "_rt.same_size(_W_shape1, _b_shape0)" in src
    assert "_rt.add(" not in src  # the bias add is a plain loop over known-aligned axes
    assert "sum_to" not in g.source("adjoint")  # and its adjoint a known sum over the batch


def test_a_size_one_axis_switches_the_signature_to_the_general_code():
    g = jitgrad.grad(bias_loss, wrt=(0, 1))
    rng = np.random.default_rng(1)
    W, x = rng.normal(size=(3, 4)), rng.normal(size=(5, 3))
    _check(g, bias_loss, (W, rng.normal(size=4), x), (0, 1))
    _check(g, bias_loss, (W, rng.normal(size=1), x), (0, 1))  # b broadcast along W's columns
    assert "same_size" not in g.source()
    _check(g, bias_loss, (W, rng.normal(size=4), x), (0, 1))  # the general code serves both
    _check(g, bias_loss, (rng.normal(size=(3, 1)), rng.normal(size=4), x), (0, 1))


def test_a_literal_size_is_checked_too():
    g = jitgrad.grad(literal_sizes)
    _check(g, literal_sizes, (np.array([0.5, -1.0, 2.0]),), (0,))
    assert "_rt.same_size(" in g.source("forward")
    _check(g, literal_sizes, (np.array([0.7]),), (0,))


def test_an_assumption_made_in_a_branch_not_taken_is_still_safe():
    g = jitgrad.grad(checked_in_a_branch, wrt=(0, 1))
    rng = np.random.default_rng(2)
    for x, y, flag in [(rng.normal(size=3), rng.normal(size=1), -1.0),
                       (rng.normal(size=3), rng.normal(size=1), 1.0),
                       (rng.normal(size=3), rng.normal(size=3), 1.0)]:
        _check(g, checked_in_a_branch, (x, y, flag), (0, 1))


def test_sizes_that_do_not_broadcast_are_a_shape_error_at_the_users_line():
    g = jitgrad.grad(bias_loss, wrt=(0, 1))
    rng = np.random.default_rng(3)
    with pytest.raises(jitgrad.ShapeError) as info:
        g(rng.normal(size=(3, 4)), rng.normal(size=2), rng.normal(size=(5, 3)))
    assert f'line {_line_of("bias")}:' in str(info.value)
    assert "h = np.tanh(x @ W + b)" in str(info.value)


def test_the_seed_loss_is_fused_loops_and_blas_only():
    """What the size checks buy on the two-layer loss: every elementwise operation, spread,
    sum and max of both passes, the row max's tie shares too, sits in a loop nest; besides the
    matmuls (BLAS, through `_rt.matmul`) only allocations and checks are calls."""
    from jitgrad.tools.demo import loss

    rng = np.random.default_rng(4)
    args = (rng.normal(size=(8, 16)), rng.normal(size=16), rng.normal(size=(16, 4)),
            rng.normal(size=4), rng.normal(size=(5, 8)), np.eye(4)[rng.integers(0, 4, 5)])
    g = jitgrad.grad(loss, wrt=(0, 1, 2, 3))
    _check(g, loss, args, (0, 1, 2, 3))
    calls = sorted({line.split("_rt.")[1].split("(")[0] for line in g.source().splitlines()
                    if "_rt." in line and not line.lstrip().startswith("#")})
    # (`ne`: the quotient rule's pole mask, y != 0, at the softmax denominator's own (n, 1)
    # shape, outside the (n, k) nest)
    # (`entry_of`: a row sum or max held in a local while its nest runs, stored back as the
    # array stores it: `backend/numba/accumulators`)
    assert calls == ["empty", "entry_of", "full", "matmul", "ne", "nonempty", "same_size",
                     "zeros"]


def row_max_loss(x, w):
    z = x * w
    return np.sum(np.max(z, axis=1)) + np.sum(np.min(z, axis=0))


def test_a_fused_max_propagates_nan_and_refuses_an_empty_axis():
    g = jitgrad.value_and_grad(row_max_loss, wrt=1)
    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(3, 4)), rng.normal(size=4)
    _check(jitgrad.grad(row_max_loss, wrt=(1,)), row_max_loss, (x, w), (1,))
    assert "if " in g.source("forward", x, w)  # the max and min are accumulated in the nest
    x[1, 2] = np.nan
    value, _ = g(x, w)
    assert np.isnan(value)
    with pytest.raises(ValueError, match="zero-size"):
        g(np.ones((3, 0)), np.ones(0))


def test_a_first_call_that_breaks_an_assumption_compiles_only_the_general_code(monkeypatch):
    from jitgrad.backend.numba import compile as jcompile

    loads = []
    real_load = jcompile.load
    monkeypatch.setattr(jcompile, "load", lambda *a, **k: loads.append(a[0]) or real_load(*a, **k))
    g = jitgrad.grad(bias_loss, wrt=(0, 1))
    rng = np.random.default_rng(6)
    _check(g, bias_loss, (rng.normal(size=(3, 4)), rng.normal(size=1), rng.normal(size=(5, 3))),
           (0, 1))
    assert loads == ["bias_loss"]  # one build compiled, not the one assuming b's size is W's
    # what the call's sizes tell is assumed instead: b's axis is 1, a broadcast known while
    # building (checked on entry); a call where it is not gets the general code
    assert "_rt.same_size(1, _b_shape0)" in g.source("forward")
    assert "broadcast_size" not in g.source()
    _check(g, bias_loss, (rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))),
           (0, 1))
    assert loads == ["bias_loss", "bias_loss"] and "same_size" not in g.source()


def state_equation(s, t, p):
    """The pattern of pyhpc-benchmarks' equation of state: two fields of one shape, and a
    pressure per level of shape (1, 1, levels) that broadcasts against them."""
    a = s * (0.5 + 0.1 * t)
    b = 1.0 / (1.0 + t * t + 0.01 * s)
    c = a * p + b * np.sqrt(p)
    return np.sum(c * c) + np.sum(s * b / (1.0 + 0.001 * p))


def test_sizes_of_the_first_call_guide_the_assumptions():
    """The example call's sizes decide what is assumed: s and t the same shape, p's first two
    axes 1 (NumPy broadcasts them), its last the fields' last. Every nest then has sizes known
    while building: no run-time broadcasting code (the equation of state's gradient was
    8,254 lines with it, 2,287 without). Against JAX and central differences, compiled."""
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(7)
    args = (rng.uniform(1, 2, (4, 3, 2)), rng.uniform(-1, 1, (4, 3, 2)),
            rng.uniform(1, 2, (1, 1, 2)))
    g = jitgrad.grad(state_equation, wrt=(0, 1, 2))
    _check(g, state_equation, args, (0, 1, 2))
    def jax_state_equation(s, t, p):  # the same, written with jnp
        a = s * (0.5 + 0.1 * t)
        b = 1.0 / (1.0 + t * t + 0.01 * s)
        c = a * p + b * jnp.sqrt(p)
        return jnp.sum(c * c) + jnp.sum(s * b / (1.0 + 0.001 * p))

    want = jax.grad(jax_state_equation, argnums=(0, 1, 2))(*map(jnp.asarray, args))
    for got, w in zip(g(*args), want):
        np.testing.assert_allclose(got, np.asarray(w), rtol=1e-10)
    src = g.source()
    assert "broadcast_size" not in src and "sum_to" not in src
    assert "_rt.same_size(1, _p_shape0)" in src and "_rt.same_size(1, _p_shape1)" in src


def pairwise_steps(pos, vel, mass, nt):
    """nbody's pattern: columns sliced from the start (``pos[:, 0:1]``), their pairwise
    differences, accelerations joined by np.hstack, and a time loop that updates ``vel`` and
    ``pos`` in place and rebinds ``acc``."""
    def accel(pos):
        x, y = pos[:, 0:1], pos[:, 1:2]
        dx, dy = x.T - x, y.T - y
        w = 1.0 / (dx * dx + dy * dy + 0.1) ** 1.5
        return np.hstack(((dx * w) @ mass, (dy * w) @ mass))

    vel -= np.mean(mass * vel, axis=0) / np.mean(mass)  # (mass: a column, as NumPy reads)
    acc = accel(pos)
    energy = 0.0
    for _ in range(nt):
        vel += 0.05 * acc
        pos += 0.1 * vel
        acc = accel(pos)
        energy = energy + np.sum(mass * vel * vel)
    return energy + np.sum(pos * pos)


def test_slices_from_the_start_carried_arrays_and_joins_have_known_sizes():
    """``pos[:, 0:1]`` is one column where the first call's ``pos`` has at least one
    (assumed, checked on entry: ``size_at_least``); an array a loop carries keeps its initial
    array's sizes (checked at the end of the body where it is rebound); np.hstack of columns
    has as many columns as they add up to. So no nest broadcasts at run time (nbody's
    gradient: 108 run-time broadcasts before, 4 after). A call whose ``pos`` has too few
    columns for the slices gets the general code. Compiled, against central differences."""
    rng = np.random.default_rng(11)
    args = (rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), rng.uniform(1, 2, (5, 1)), 3)

    def loss(pos, vel, mass, nt):
        return pairwise_steps(pos.copy(), vel.copy(), mass, nt)

    g = jitgrad.grad(loss, wrt=(0, 1, 2))
    _check(g, loss, args, (0, 1, 2))
    src = g.source(*args)
    assert "broadcast_size" not in src
    assert "_rt.size_at_least(_pos_shape1, 2)" in src
    # one column only: pos[:, 1:2] is empty (its sum 0); the general code agrees with NumPy
    g2 = jitgrad.grad(two_columns, wrt=0)
    _check(g2, two_columns, (rng.normal(size=(5, 2)),), (0,))
    assert "_rt.size_at_least(_pos_shape1, 2)" in g2.source()
    _check(g2, two_columns, (rng.normal(size=(4, 1)),), (0,))
    assert "size_at_least" not in g2.source()


def two_columns(pos):
    x, y = pos[:, 0:1], pos[:, 1:2]
    return np.sum((x.T - x) ** 2) + np.sum(y * y) * np.sum(x)


def staggered(u, w):
    """vadv's pattern: a face-centred ``w`` with one row more than the cell-centred ``u``,
    its neighbours averaged (``w[1:] + w[:-1]``) and met with ``u``'s columns in a loop."""
    out = np.zeros(u.shape[:2])
    for k in range(u.shape[2]):
        flux = 0.5 * (w[1:, :, k] + w[:-1, :, k])
        out = out + flux * u[:, :, k] - np.sin(out) * 0.1
    return np.sum(out * out)


def test_a_slice_that_drops_a_row_meets_an_axis_one_shorter():
    """``w[1:]`` meets ``u`` where the first call's ``w`` has one row more: assumed the same
    size, checked on entry (``u.shape[0] + 1 == w.shape[0]``), so no nest broadcasts at run
    time (vadv's gradient: 45 run-time broadcasts before, 0 after). A call where ``w`` has two
    rows (NumPy broadcasts its slices of one row against ``u``) gets the general code. Compiled, against
    central differences."""
    rng = np.random.default_rng(12)
    g = jitgrad.grad(staggered, wrt=(0, 1))
    _check(g, staggered, (rng.normal(size=(4, 3, 3)), rng.normal(size=(5, 3, 3))), (0, 1))
    src = g.source()
    assert "broadcast_size" not in src and "sum_to" not in src
    assert re.search(r"(_t\d+) = _u_shape0 \+ 1\n.*\n\s*_rt\.same_size\(\1, _w_shape0\)", src)
    _check(g, staggered, (rng.normal(size=(4, 3, 3)), rng.normal(size=(2, 3, 3))), (0, 1))
    assert "broadcast_size" in g.source()


def conv_norm(x, w):
    """resnet's pattern: a convolution by windows ``x[:, i:i + K]`` of as many rows as the
    kernel ``w``, then a batch normalisation of its output."""
    K = w.shape[0]
    H = x.shape[1] - K + 1
    out = np.empty((x.shape[0], H, x.shape[2]))
    for i in range(H):
        out[:, i, :] = np.sum(x[:, i:i + K, :] * w[np.newaxis, :, :], axis=1)
    mean = np.mean(out, axis=0, keepdims=True)
    z = (out - mean) / np.sqrt(np.std(out, axis=0, keepdims=True) + 1e-5)
    return np.sum(z * z * z)


def windows_to_the_end(x, w):
    s = 0.0
    for i in range(x.shape[0]):  # (the last window has one entry: NumPy broadcasts it)
        s = s + np.sum(np.sin(x[i:i + w.shape[0]] * w))
    return s


def test_a_window_as_long_as_the_kernel_has_its_size():
    """``x[:, i:i + K]`` with ``K = w.shape[0]`` is ``K`` long: assumed, and checked right
    after the read, so the product with ``w`` and everything after it has sizes known while
    building (resnet's gradient: 40 run-time broadcasts before, 2 after). A window cut short
    at the end of the axis (NumPy broadcasts its one entry) gets the general code. Compiled,
    against central differences."""
    rng = np.random.default_rng(13)
    g = jitgrad.grad(conv_norm, wrt=(0, 1))
    _check(g, conv_norm, (rng.normal(size=(4, 6, 3)), rng.normal(size=(3, 3))), (0, 1))
    src = g.source()
    assert "broadcast_size" not in src and "sum_to" not in src
    assert re.search(r"= x\[:, i:_t\d+, :\]\n\s*(_t\d+) = _t\d+\.shape\[1\]\n\s*"
                     r"_rt\.same_size\(\1, _t\d+\)", src)
    g2 = jitgrad.grad(windows_to_the_end, wrt=(0, 1))
    _check(g2, windows_to_the_end, (rng.normal(size=5), rng.normal(size=1)), (0, 1))
    assert "same_size" in g2.source()
    _check(g2, windows_to_the_end, (rng.normal(size=5), rng.normal(size=2)), (0, 1))
    assert "same_size" not in g2.source() and "broadcast_size" in g2.source()


def gp_like(log_amp, x, y):
    n = x.shape[0]
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            d = x[i] - x[j]
            K[i, j] = np.exp(log_amp - 0.5 * d * d)
    K = K + 0.1 * np.eye(n)
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y - np.sin(x))  # (y and x then assumed the same size)
    return 0.5 * (z @ z) + 0.5 * np.linalg.slogdet(K)[1] + np.sum(np.tril(np.linalg.inv(L)))


def test_square_matrices_and_counts_have_known_sizes():
    """``np.eye(n)`` is n by n, ``inv(a)`` and ``cholesky(a)`` have ``a``'s shape, and
    ``arange(0, n, 1)`` has n entries (the triangles of cholesky's rules are masks made from
    two of them): a Gaussian process's gradient and Hessian-vector product broadcast nothing
    at run time, nor sum or spread a cotangent to a shape (the bench's ``gp``: its HVP 545 ->
    338 generated lines, 41 run-time broadcasts -> 1, Numba's compile of it 14 s -> 4 s; the
    one left there is ``solve(L, y)``'s, of ``y``'s size, meeting one of ``x``'s, two
    arguments nothing assumes the same size). Read from the source (nothing compiled); the
    values of such gradients are the corpus's (gaussian_nll_cholesky, triangular_parts,
    eye_shift, ...), checked against central differences there."""
    rng = np.random.default_rng(5)
    args = (0.1, np.sort(rng.uniform(0.0, 3.0, 6)), rng.normal(size=6))
    grad_src = jitgrad.grad(gp_like, wrt=(0, 1)).source(*args)
    hvp_src = jitgrad.hvp(gp_like, wrt=0).source(*args, 1.0)
    for src in (grad_src, hvp_src):
        assert "broadcast" not in src and "sum_to" not in src
