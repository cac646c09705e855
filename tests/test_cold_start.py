"""What keeps a first call cheap to compile (issue #24; the times are in bench/cold_start.py):
generated code allocates through the runtime, whose allocations are intrinsics (a few
instructions in the caller, nothing compiled of their own) and whose other helpers Numba
compiles once per machine (`warming.warm` makes the common ones ready), never with an inline
``np.empty``/``np.zeros`` form that Numba compiles anew in every process; and a gradient is one
function."""

import math
import re

import numba
import numpy as np
import parallel_fns as P
import pytest
from fd import numeric_grad

import jitgrad
from bench import problems
from jitgrad import pipeline, tape
from jitgrad.backend.numba import runtime

# Inline forms that Numba compiles anew in each process (30-250 ms each on a first call).
INLINE_ALLOCATION = re.compile(r"np\.(empty|zeros|ones|full)(_like)?\(|[^._\w]max\(0, ")


def loop_with_tape(w, x):
    h = 0.0
    total = 0.0
    for t in range(x.shape[0]):
        h = np.tanh(w * h + x[t])
        z = np.zeros(3)
        z[1] = h
        total += h * h + np.sum(z * z)
    return total


def fresh_prange_rows(w, x):  # likewise, parallel: each chunk stores its partial gradient
    total = 0.0
    for i in numba.prange(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[i, j] * w[j]
        total += s * s
    return total


def fresh_log_softmax(z):  # likewise: a row max (its tie shares), kept, and sums over rows
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    return np.sum(np.log(np.sum(e, axis=1)) + m[:, 0])


def fresh_recurrence(w, x):  # compiled only by the warm test below
    h = 0.0
    total = 0.0
    for t in range(x.shape[0]):
        h = math.sin(w * h - x[t])
        total += h * x[t]
    return total


CASES = [  # (function, arguments, wrt, parallel)
    (loop_with_tape, (0.5, np.linspace(-1.0, 1.0, 7)), (0, 1), False),
    (problems.gmm_nll, problems.make_gmm(n=20, d=3, K=4), (0, 1, 2), False),
    (P.rowwise_logsumexp, (np.linspace(-1.0, 1.0, 40).reshape(10, 4), np.ones(4) * 0.3),
     (0, 1), True),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_generated_code_allocates_through_the_runtime(k):
    fn, args, wrt, parallel = CASES[k]
    g = jitgrad.value_and_grad(fn, wrt=wrt, parallel=parallel)
    value, grads = g(*args)
    source = g.source()
    code = "\n".join(line.split("#")[0] for line in source.splitlines())
    assert not INLINE_ALLOCATION.findall(code), INLINE_ALLOCATION.findall(code)
    assert "_rt.empty(" in code or "_rt.zeros(" in code
    assert value == pytest.approx(fn(*args), rel=1e-12)
    for k_arg, got in zip(wrt, grads):
        ref = numeric_grad(fn, args, k_arg)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7)


def test_a_gradient_module_is_one_function_with_both_passes():
    g = jitgrad.grad(loop_with_tape, wrt=(0, 1))
    g(*CASES[0][1])
    defs = re.findall(r"^def (\w+)\(", g.source(), re.MULTILINE)
    assert defs == ["loop_with_tape_grad"]
    assert g.source("forward").lstrip().startswith("# -- forward pass")
    assert g.source("adjoint").lstrip().startswith("# -- adjoint pass")


def test_warm_makes_the_runtime_ready_and_generated_code_then_compiles_no_helper(
        tmp_path, monkeypatch):
    monkeypatch.setenv("JITGRAD_CACHE_DIR", str(tmp_path))  # gradients compiled, not loaded
    n = pipeline.warm()
    assert n > 100
    # and jitgrad's bytecode, which Python reads even where it does not write it
    # (PYTHONDONTWRITEBYTECODE): every module of the package has its .pyc
    import importlib.util
    import pathlib

    package = pathlib.Path(jitgrad.__file__).parent
    missing = [str(p) for p in package.rglob("*.py")
               if not pathlib.Path(importlib.util.cache_from_source(str(p))).exists()]
    assert not missing, missing[:3]
    for name in ("larger", "nonnegative", "add", "mul"):
        assert getattr(runtime, name).signatures, name
    for name in ("empty", "zeros", "ones", "full"):  # intrinsics: nothing to compile or load
        assert not isinstance(getattr(runtime, name), numba.core.registry.CPUDispatcher), name
    # after warm, a new gradient's first call compiles its own function and no runtime helper
    before = {name: len(fn.signatures) for name, fn in vars(runtime).items()
              if isinstance(fn, numba.core.registry.CPUDispatcher)}
    g = jitgrad.grad(fresh_recurrence, wrt=(0, 1))
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(g(0.25, x)[1], numeric_grad(fresh_recurrence, (0.25, x), 1),
                               rtol=1e-6, atol=1e-9)
    z = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    np.testing.assert_allclose(jitgrad.grad(fresh_log_softmax)(z),
                               numeric_grad(fresh_log_softmax, (z,), 0), rtol=1e-6, atol=1e-9)
    w = np.linspace(-0.5, 0.5, 3)
    np.testing.assert_allclose(jitgrad.grad(fresh_prange_rows, parallel=True)(w, z[:, :3]),
                               numeric_grad(fresh_prange_rows, (w, z[:, :3]), 0),
                               rtol=1e-6, atol=1e-9)
    after = {name: len(fn.signatures) for name, fn in vars(runtime).items()
             if isinstance(fn, numba.core.registry.CPUDispatcher)}
    assert after == before


def horner_sum(x, y):  # x read four times, y three: accumulations into their adjoints
    v = 0.3 + x * (0.2 + x * (0.1 + x * (0.05 + x * y)))
    w = 1.0 + y * (0.5 + y * v)
    return np.sum(v * w)


def shifted_products(x):  # views of an array beside the adjoint's accumulations
    y = x * x
    z = y[1:] * y[:-1]
    return np.sum(z * y[1:]) + np.sum(y * x)


def test_accumulations_into_an_adjoint_join_the_loop_nest():
    """``_b_x += c`` of a value computed in a nest is done in the nest, entry by entry, and
    so are the updates of an adjoint the nest itself computes (``_b_x = _b_x + c``, then
    ``_b_x += c``: its element, stored once): the adjoint is one nest. The long straight-line
    kernel's module went from 1,660 lines (119 nests) to 1,145 (38), then to 1,019 (2)."""
    from jitgrad import tape

    x, y = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 1.5, 6)
    g = jitgrad.grad(horner_sum, wrt=(0, 1))
    got = g(x, y)
    ref = tape.grad(horner_sum, wrt=(0, 1))(x, y)
    for k in range(2):
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-12)
        np.testing.assert_allclose(got[k], numeric_grad(horner_sum, (x, y), k), rtol=1e-6)
    adjoint = g.source("adjoint")
    assert adjoint.count("for _i0 in range") == 1
    assert "_b_x[_i0] = _e_b_x" in adjoint and "_b_y[_i0] = _e_b_y" in adjoint
    assert adjoint.count("_b_x[_i0] =") == 1  # stored once, after its last update


def alias_update(x):  # z is y's array: it sees the update
    y = x * 2.0
    z = y
    y += x * x
    return np.sum(z * x) + np.sum(y)


def alias_then_rebind(x):  # y + ... is a new array: z keeps the old one
    y = x * 2.0
    z = y
    y = y + x * x
    return np.sum(z * y)


def alias_of_an_update(x):
    y = x * 3.0
    y = y + x
    w = y
    y += x * x
    w *= 2.0
    return np.sum(w * y)


@pytest.mark.parametrize("fn", [alias_update, alias_then_rebind, alias_of_an_update])
def test_a_copy_in_a_nest_sees_the_updates_its_array_sees(fn):
    """A copy (``z = y``) is the array: it sees an update in place (``y += c``) and not a
    rebinding (``y = y + c``, a new array). With nests now taking in copies and updates,
    the gradient still follows NumPy's semantics."""
    from jitgrad import tape

    x = np.linspace(-1.0, 1.5, 5)
    got = jitgrad.grad(fn)(x.copy())
    np.testing.assert_allclose(got, tape.grad(fn)(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_grad(fn, (x,), 0), rtol=1e-6)


def test_an_accumulation_beside_a_view_stays_out_of_the_nest():
    """A view read in the nest may be the accumulated array at other positions: then the
    accumulation is not moved into the nest (here ``_b_y[:-1] += ...`` and ``y[1:]``)."""
    from jitgrad import tape

    x = np.linspace(-1.0, 2.0, 7)
    g = jitgrad.grad(shifted_products)
    got = g(x)
    np.testing.assert_allclose(got, tape.grad(shifted_products)(x), rtol=1e-12)
    np.testing.assert_allclose(got, numeric_grad(shifted_products, (x,), 0), rtol=1e-6)


def squared_sine(x):
    r = np.sin(x)
    return np.cos(r * r)


def test_the_two_contributions_of_a_square_are_one_product():
    """``r * r``'s rule gives ``g * r`` for each factor: one product, added twice (the same
    sum to the bit), not two products (a line less to compile per square: losses are full of
    them)."""
    g = jitgrad.grad(squared_sine)
    got = g(0.7)
    assert got == pytest.approx(numeric_grad(squared_sine, (0.7,), 0), rel=1e-8)
    assert got == tape.grad(squared_sine)(0.7)
    adjoint = g.source("adjoint")
    products = [line for line in adjoint.splitlines() if re.search(r"= _b_\w+ \* r$", line)]
    assert len(products) == 1, adjoint


def unproven_sizes(m, b, c):  # sizes the fused nests cannot prove equal: a reversed slice's, a loop's
    a = np.linalg.inv(m)[::-1]  # (inv's result alone has m's shape)
    for _ in range(2):
        a = a + 0.1 * m  # (a carried value)
    u = a + b[:, None]  # a column broadcast along the rows
    v = u * c  # a row broadcast down the columns
    w = np.where(v > 0.0, v, 0.5 * v)
    z = -w / (2.0 + a * a) - c
    return np.sum(z * z)


def test_arrays_of_unproven_sizes_are_loops_of_the_gradient_not_runtime_calls():
    """add, sub, mul, div, neg and where of float arrays whose sizes the emitter cannot prove
    equal are a nest in the generated function that broadcasts at run time, not a call of
    the runtime's helper: a helper's code (Numba's broadcasting kernel, ~300 kB of IR) would
    be linked into the function and optimised again by LLVM (issue #46). Gradients against
    central differences and JAX; NumPy's broadcasting error for sizes that do not broadcast."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((4, 3)) @ rng.standard_normal((3, 4)) + 4.0 * np.eye(4)
    args = (m, rng.standard_normal(4), rng.standard_normal(4))
    g = jitgrad.value_and_grad(unproven_sizes, wrt=(0, 1, 2))
    value, grads = g(*args)
    code = "\n".join(line.split("#")[0] for line in g.source().splitlines())
    calls = re.findall(r"_rt\.(add|sub|mul|div|neg|where)\(", code)
    assert not calls, calls
    assert "_rt.broadcast_size(" in code  # (NumPy's error, raised in a call: no branch here)
    assert value == pytest.approx(unproven_sizes(*args), rel=1e-12)
    for k in range(3):
        np.testing.assert_allclose(grads[k], numeric_grad(unproven_sizes, args, k),
                                   rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="broadcast"):
        g(m, args[1], np.ones(3))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def reference(m, b, c):
        a = jnp.linalg.inv(m)[::-1]
        for _ in range(2):
            a = a + 0.1 * m
        v = (a + b[:, None]) * c
        w = jnp.where(v > 0.0, v, 0.5 * v)
        z = -w / (2.0 + a * a) - c
        return jnp.sum(z * z)

    oracle = jax.grad(reference, argnums=(0, 1, 2))(*args)
    for k in range(3):
        np.testing.assert_allclose(grads[k], np.asarray(oracle[k]), rtol=1e-10, atol=1e-12)


def allocations(w, x):  # every allocation of generated code: zeros, ones, full, empty; f, i, b
    n = x.shape[0]
    acc = np.zeros((n, 3))
    for i in range(n):
        for j in range(3):
            acc[i, j] = w[j] * x[i]
    seen = np.zeros(n, np.int64)
    mask = np.ones((n, 3), np.bool_)
    s = np.ones(n) * 0.5 + np.full(n, 2.0)
    e = np.empty(n)
    total = 0.0
    for i in range(n):
        e[i] = s[i] * x[i]
        seen[i] = i % 2
        if mask[i, 0] and seen[i] == 1:
            total += e[i] * w[0]
    m = np.max(acc, axis=1)  # its running max starts from _rt.full(..., -np.inf)
    # w[1]'s gradient: the sum of a vector, summed inside its nest (sum_all: `_sums` below)
    return np.sum(m * s) + np.sum(acc * acc) + total + np.sum(np.sin(w[0] * x + w[1]))


@numba.njit
def _made(n):
    return (runtime.empty((n, 2)), runtime.zeros(n, np.int64), runtime.ones((n, 2, 2), np.bool_),
            runtime.full((n,), -1.5), runtime.zeros((0, n)), runtime.ones(n))


@numba.njit
def _sums(a, b, c, d):  # np.sum's own beside the runtime's, in one compile
    return ((runtime.sum_all(a), runtime.sum_all(b), runtime.sum_all(c), runtime.sum_all(d)),
            (np.sum(a), np.sum(b), np.sum(c), np.sum(d)))


def test_allocations_are_intrinsics_with_numpys_results():
    """The runtime's allocations and its sum of an array are intrinsics (nothing compiled of
    their own, so a first gradient on a new machine compiles none): NumPy's shapes, dtypes, C
    order, contents and error for a negative size; Numba's np.sum to the bit (any layout);
    and a compiled gradient through each of them against JAX and central differences."""
    a, b, c, d, e, f = _made(3)
    assert (a.shape, a.dtype, a.flags.c_contiguous) == ((3, 2), np.float64, True)
    np.testing.assert_array_equal(b, np.zeros(3, np.int64))
    assert b.dtype == np.int64 and c.dtype == np.bool_ and c.shape == (3, 2, 2) and c.all()
    np.testing.assert_array_equal(d, np.full(3, -1.5))
    assert e.shape == (0, 3) and e.strides == (24, 8)
    np.testing.assert_array_equal(f, np.ones(3))
    assert _made(0)[0].shape == (0, 2)
    with pytest.raises(ValueError, match="negative dimensions"):
        _made(-1)
    rng = np.random.default_rng(5)
    m = rng.standard_normal((37, 29))
    ours, numbas = _sums(rng.standard_normal(1001), m, m.T, m[::2, 1::3])
    assert ours == numbas  # the same additions in the same order
    assert _sums(np.ones(0), m[:0], m.T[:, :0], m[:0, ::2])[0] == (0.0,) * 4
    w, x = np.array([0.3, -0.2, 0.5]), np.linspace(-1.0, 1.0, 6)
    g = jitgrad.value_and_grad(allocations, wrt=(0, 1))
    value, grads = g(w, x)
    code = "\n".join(line.split("#")[0] for line in g.source().splitlines())
    for call in ("_rt.zeros((n, 3))", "_rt.zeros((n,), np.int64)", "_rt.ones((n, 3), np.bool_)",
                 "_rt.ones((n,))", "_rt.full((n,), 2.0)", "_rt.empty((n,))", "-np.inf)"):
        assert call in code, call
    assert value == pytest.approx(allocations(w, x), rel=1e-12)
    for k in range(2):
        np.testing.assert_allclose(grads[k], numeric_grad(allocations, (w, x), k),
                                   rtol=1e-6, atol=1e-8)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def reference(w, x):
        acc = x[:, None] * w[None, :]
        s = 2.5
        odd = jnp.arange(x.shape[0]) % 2 == 1
        total = jnp.sum(jnp.where(odd, s * x * w[0], 0.0))
        return (jnp.sum(jnp.max(acc, axis=1) * s) + jnp.sum(acc * acc) + total
                + jnp.sum(jnp.sin(w[0] * x + w[1])))

    oracle = jax.grad(reference, argnums=(0, 1))(w, x)
    for k in range(2):
        np.testing.assert_allclose(grads[k], np.asarray(oracle[k]), rtol=1e-12, atol=1e-12)


@numba.njit
def _checked(n, m, k):
    runtime.same_size(n, m)
    runtime.nonempty(k)
    return runtime.broadcast_size(n, m), runtime.broadcast_size(1, m), runtime.broadcast_size(n, 1)


def test_the_size_checks_are_intrinsics_raising_numpys_errors():
    """same_size, broadcast_size and nonempty (939 of the 1,716 generated modules of
    `tests/generated_sources.py` call one) are compares and branches written into the caller,
    not helpers compiled on a machine's first gradient: their sizes and errors."""
    from jitgrad.core.errors import SizesDiffer

    assert _checked(3, 3, 1) == (3, 3, 3) and _checked(1, 1, 2) == (1, 1, 1)
    with pytest.raises(SizesDiffer, match="assumed the same size"):
        _checked(3, 4, 1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        _checked(3, 3, 0)
    broadcast = numba.njit(lambda n, m: runtime.broadcast_size(n, m))
    assert (broadcast(1, 5), broadcast(5, 1), broadcast(5, 5), broadcast(np.int32(1), 7)) == \
        (5, 5, 5, 7)
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        broadcast(3, 4)
    at_least = numba.njit(lambda n, m: runtime.size_at_least(n, m))
    at_least(3, 3), at_least(4, np.int32(3))
    with pytest.raises(SizesDiffer, match="at least so many entries"):
        at_least(2, 3)
    for name in ("same_size", "size_at_least", "broadcast_size", "nonempty", "sum_all",
                 "tanh_scalar"):
        assert not isinstance(getattr(runtime, name), numba.core.registry.CPUDispatcher), name


def hoisted_nest(x, w):  # the inner loop's adjoint reads i + a, x[i + a] and its cosine's
    n = x.shape[0]       # derivative once, before it, and is empty for a = 0
    k = w.shape[0]
    total = 0.0
    for i in range(n - k + 1):
        s = 0.0
        for a in range(k):
            for b in range(a):
                s += w[b] * x[i + a - b] * np.cos(x[i + a])
            s += x[i + a] ** 2
        total += np.sin(s)
    return total


def test_values_hoisted_out_of_a_loop_are_defined_on_both_sides_of_their_if():
    """What an adjoint loop reads unchanged is computed once, before it, if it runs
    (`optimise.invariant_reads_hoisted`); read by nothing after the loop, each such value has a
    name of its own that the ``else`` sets to zero, so that Numba's SSA pass does not merge an
    undefined name into every loop head of the nest (0.03 s of typing in the bench's conv2d).
    Gradients against central differences and JAX, with inner loops that do not run."""
    rng = np.random.default_rng(5)
    args = (rng.standard_normal(8), rng.standard_normal(3))
    g = jitgrad.grad(hoisted_nest, wrt=(0, 1))
    grads = g(*args)
    code = "\n".join(line for line in g.source().splitlines() if not line.strip().startswith("#"))
    guarded = re.search(r"if _runs\w*:\n((?: +\w+ = .*\n)+) +else:\n((?: +\w+ = .*\n)+)", code)
    assert guarded, code
    made = [line.split(" = ")[0].strip() for line in guarded[1].splitlines()]
    zeroed = [line.strip() for line in guarded[2].splitlines()]
    assert len(made) >= 2 and zeroed == [f"{v} = {'0' if v == made[0] else '0.0'}"
                                         for v in made], (made, zeroed)
    for k in range(2):
        np.testing.assert_allclose(grads[k], numeric_grad(hoisted_nest, args, k),
                                   rtol=1e-6, atol=1e-8)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    m, k = args[0].shape[0] - args[1].shape[0] + 1, args[1].shape[0]
    i2, a2 = (t.ravel() for t in np.meshgrid(np.arange(m), np.arange(k), indexing="ij"))
    i3, a3, b3 = np.array([(i, a, b) for i in range(m) for a in range(k) for b in range(a)]).T

    def reference(x, w):  # the same sums, as scatter-adds of index triples and pairs
        s = jnp.zeros(m).at[i3].add(w[b3] * x[i3 + a3 - b3] * jnp.cos(x[i3 + a3]))
        return jnp.sum(jnp.sin(s.at[i2].add(x[i2 + a2] ** 2)))

    oracle = jax.grad(reference, argnums=(0, 1))(*args)
    for k in range(2):
        np.testing.assert_allclose(grads[k], np.asarray(oracle[k]), rtol=1e-12, atol=1e-12)


def test_a_hoisted_value_read_after_its_loop_keeps_its_name():
    """`optimise._Liveness`: a value read after its loop (before a statement that surely
    defines it again) is live there, and keeps its name and its old value when the loop does
    not run; a read inside a loop whose own hoist defines the value is not a read of it."""
    from jitgrad.core.ir import Block, Carry, Const, Eqn, If, Repeat, Var
    from jitgrad.core.types import BOOL, FLOAT, INT
    from jitgrad.transforms.optimise import _Liveness

    i, n, v, u = Var("i", INT), Var("n", INT), Var("v", FLOAT), Var("u", FLOAT)
    hoist = If(Var("_runs", BOOL), Block([Eqn("add", [v], [Const(1.0), Const(2.0)], {}, None)]),
               Block([]), [Carry(v, v, v)], None)
    loop = Repeat(n, Block([Eqn("mul", [u], [v, v], {}, None)]), counter=i)
    read = Eqn("mul", [u], [v, Const(2.0)], {}, None)
    define = Eqn("assign", [v], [Const(0.0)], {}, None)
    for after, live in (([read], True), ([define, read], False), ([], False)):
        body = Block([hoist, loop, *after])
        scan = _Liveness({}, {id(hoist)}, {v: {id(loop)}}, [])
        assert scan.live_after(loop, body, v) is live
    outer = Repeat(n, Block([hoist, loop]), counter=i)  # the next iteration's loop reads
    body = Block([outer])                                # its own hoist's value
    scan = _Liveness({id(outer.body): (outer, body)}, {id(hoist)}, {v: {id(loop)}}, [])
    assert scan.live_after(loop, outer.body, v) is False
    returned = _Liveness({}, {id(hoist)}, {v: {id(loop)}}, [v])  # the kernel returns it
    assert returned.live_after(loop, Block([hoist, loop]), v) is True


def index_forms(w, x):  # index items LLVM sees are never negative, and ones it does not
    n = x.shape[0]
    total = 0.0
    for i in range(n - 2):
        for j in range(1, 3):
            total += w[j] * x[i + j] * x[i]  # range indices and their sum: plain
    for r in range(n):
        for c in range(r + 1, n):  # a range from a variable start: c unsigned
            total += x[r] * x[c] * w[0]
    for s in range(0, n, 2):  # step 2: s unsigned
        total += x[s] ** 2
    m = 0
    for t in range(n):
        total += w[2] * x[m] * x[t]  # a counter carried by hand: m unsigned
        m += 1  # noqa: SIM113 -- the form under test
    return total


def test_index_items_llvm_sees_are_never_negative_are_written_plain():
    """`signs.evident_nonnegative`: an index item that is a ``range(n)`` or ``range(1, n)``
    loop's index (or a copy or sum of such) is written as it is, since LLVM removes Numba's
    wrap-around check for it and the ``np.uint64`` cast cost a call to type and lower (conv2d's
    gradient: 0.31 -> 0.28 s of compile); one LLVM cannot see is non-negative keeps the cast.
    The gradient against central differences and JAX."""
    rng = np.random.default_rng(6)
    args = (rng.standard_normal(3), rng.standard_normal(7))
    g = jitgrad.grad(index_forms, wrt=(0, 1))
    grads = g(*args)
    code = "\n".join(line for line in g.source().splitlines() if not line.strip().startswith("#"))
    for plain in ("= w[j]", "= x[i]", "_g_x[i] +=", "_g_w[j] +=", "= x[t]"):
        assert plain in code, plain
    assert re.search(r"= x\[_t\d+\]", code)  # i + j
    for unsigned in ("c", "s", "m"):
        assert f"= x[np.uint64({unsigned})]" in code, unsigned
    assert not re.search(r"np\.uint64\((i|j|t|r)\)", code)
    for k in range(2):
        np.testing.assert_allclose(grads[k], numeric_grad(index_forms, args, k),
                                   rtol=1e-6, atol=1e-8)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def reference(w, x):  # the same sums, whole-array
        pairs = w[1] * jnp.sum(x[1:-1] * x[:-2]) + w[2] * jnp.sum(x[2:] * x[:-2])
        upper = w[0] * (jnp.sum(x) ** 2 - jnp.sum(x * x)) / 2
        return pairs + upper + jnp.sum(x[::2] ** 2) + w[2] * jnp.sum(x * x)

    oracle = jax.grad(reference, argnums=(0, 1))(*args)
    np.testing.assert_allclose(index_forms(*args), float(reference(*args)), rtol=1e-12)
    for k in range(2):
        np.testing.assert_allclose(grads[k], np.asarray(oracle[k]), rtol=1e-12, atol=1e-12)
