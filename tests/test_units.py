"""Unit tests of jitgrad's pieces: the IR printer, the generated source, the rule table,
`check_grad`, return types, the decorator forms, the tie convention and argument safety.

The small functions differentiated here are defined in this file (jitgrad reads source). Golden
texts refer to their lines relative to each function's ``def`` (``co_firstlineno``), so adding
code above them does not break the goldens.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import re
import subprocess
import sys
import textwrap

import corpus
import corpus_more
import corpus_real
import corpus_shape
import corpus_surface
import numba
import numpy as np
import pytest

import jitgrad
import jitgrad.backend.numba.runtime
from jitgrad.api import GradientCheckError
from jitgrad.backend.numba import lowering
from jitgrad.core import ir as jir
from jitgrad.core import pytree as jpytree
from jitgrad.core import types as jtypes
from jitgrad.frontend import build as jbuild
from jitgrad.frontend import parse as jparse
from jitgrad.prims.elementwise import SCIPY_FUNCTIONS
from jitgrad.prims.primitives import PRIMITIVES, RULES

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.basename(__file__)

# ----------------------------------------------------------------------------- functions


def square(x):
    return x * x


def affine_sum(W, x, b):
    h = np.tanh(W @ x + b)
    return np.sum(h * h)


def branchy(x, y):
    if x > y:
        z = x * y
    else:
        z = x - y
    return z * 2.0


def sine_loop(x):
    s = 0.0
    for _ in range(3):
        s = s + np.sin(x * s + 1.0)
    return s


def two_args(x, y):
    return x * x * y + 3.0 * y


@jitgrad.grad
def deco_plain(x):
    return x * x * x


@jitgrad.grad(wrt=1)
def deco_wrt_position(x, y):
    return x * y * y


@jitgrad.grad("y")
def deco_wrt_name_positional(x, y):
    return x * y * y


@jitgrad.grad(wrt=("y", 0))
def deco_wrt_tuple(x, y):
    return x * y * y


@jitgrad.value_and_grad
def deco_value_and_grad(x):
    return np.sum(x * x)


def ternary(x, y):
    m = 2.0 * x if x > y else y
    return m * m


def step(x):
    if x > 0.0:
        return x + 1.0
    return x


def smooth(x, y):
    return np.sum(np.exp(0.5 * x) * y + np.sin(x * y))


def rarely_tested(x, a, b):
    """The differentiable primitives the corpus does not reach (see test_corpus_coverage)."""
    u = np.expm1(x) + np.sinh(x) + np.cosh(x) + np.arcsinh(x)
    v = np.arcsin(0.5 * x) + np.arccos(0.3 * x)
    w = np.sum(np.outer(a, b) ** 2)
    counts = np.bincount(np.array([1, 0, 1]), weights=x)  # a scatter-add of x
    z = np.sum(np.nextafter(x, 2.0) * x) + np.sum(counts ** 2) + np.sum(np.vander(a, 3) * b)
    z += np.sum(np.abs(np.fft.fft(x * b)) ** 2)  # the dft primitive
    return np.sum(u * v) + w + float(x[0]) * 2.0 + z


def mod_sum(x, y):
    return np.sum(np.mod(x, y))


def inf_masked(x):
    return np.sum(np.where(np.isinf(x), 0.0, x) ** 2)


def inf_masked_scalar(a, b):
    if math.isinf(a):
        return b * b
    return a * b


def relu(x):
    return np.maximum(x, 0.0)


def relu_min(x):
    return np.minimum(x, 0.0)


def relu_sum(x):
    return np.sum(np.maximum(x, 0.0))


def builtin_max(x, y):
    return max(x, y)


def builtin_min(x, y):
    return min(x, y)


def max_all(x):
    return np.max(x)


def min_all(x):
    return np.min(x)


def max_rows(x, w):
    return np.sum(np.max(x, axis=1) * w)


def method_max_cols(x):
    return np.sum(x.max(axis=0, keepdims=True))


def np_abs(x):
    return np.abs(x)


def np_abs_sum(x):
    return np.sum(np.abs(x))


def builtin_abs(x):
    return abs(x)


def math_fabs(x):
    return math.fabs(x)


def clip_sum(x):
    return np.sum(np.clip(x, -1.0, 1.0))


def sum_squares(x):
    return np.sum(x * x)


def write_first(x):
    x[0] = 0.0
    return np.sum(x * x)


def write_loop(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return np.sum(x)


def scale_in_place(x):
    x *= 3.0
    return np.sum(x)


def add_into_slice(x, y):
    x[1:] += y[1:]
    y[0] = 5.0
    return np.sum(x * y)


def write_row(A, v):
    A[0, :] = v
    return np.sum(A * A)


def write_int_arg(x, idx):
    idx[0] = 2
    return x[idx[0]] * x[idx[1]]


def write_via_alias(x):
    y = x
    y[0] = 0.0
    return np.sum(y * y)


def write_via_slice_view(x):
    y = x[1:]
    y[0] = 0.0
    return np.sum(x * x)


def write_via_reshape_view(x):
    y = x.reshape(x.shape[0])
    y[0] = 0.0
    return np.sum(x * x)


# ----------------------------------------------------------------------------- helpers


def lines_of(fn) -> tuple[int, ...]:
    """The file line numbers of ``fn``'s def and the next few lines."""
    first = fn.__code__.co_firstlineno
    return tuple(first + k for k in range(8))


# ----------------------------------------------------------------------------- first checks


def test_first_sanity_check():
    assert jitgrad.grad(square)(3.0) == 6.0


def test_value_and_grad_of_square():
    assert jitgrad.value_and_grad(square)(3.0) == (9.0, 6.0)


# ----------------------------------------------------------------------------- IR printer


def test_ir_square():
    g = jitgrad.grad(square)
    g(3.0)
    _, ret, *_ = lines_of(square)
    assert g.ir() == textwrap.dedent(f"""\
        {{ lambda ; x:f64 . let
            _t0:f64 = mul x x  # {BASE}:{ret}
          in ( _t0 ) }}""")


def test_ir_affine_sum():
    g = jitgrad.grad(affine_sum, wrt=(0, 2))
    g(np.ones((2, 3)), np.ones(3), np.ones(2))
    _, h, ret, *_ = lines_of(affine_sum)
    assert g.ir() == textwrap.dedent(f"""\
        {{ lambda ; W:f64[:,:], x:f64[:], b:f64[:] . let
            _W_shape1:i64 = shape_dim[axis=1] W  # {BASE}:{h}
            _x_shape0:i64 = shape_dim[axis=0] x  # {BASE}:{h}
            same_size _W_shape1 _x_shape0  # {BASE}:{h}
            _W_shape0:i64 = shape_dim[axis=0] W  # {BASE}:{h}
            _b_shape0:i64 = shape_dim[axis=0] b  # {BASE}:{h}
            same_size _W_shape0 _b_shape0  # {BASE}:{h}
            _t0:f64[:] = matmul W x  # {BASE}:{h}
            _t1:f64[:] = add _t0 b  # {BASE}:{h}
            h:f64[:] = tanh _t1  # {BASE}:{h}
            _t3:f64[:] = mul h h  # {BASE}:{ret}
            _t4:f64 = sum[axis=None, keepdims=False] _t3  # {BASE}:{ret}
          in ( _t4 ) }}""")


def test_ir_branch():
    g = jitgrad.grad(branchy, wrt=(0, 1))
    assert g(1.0, 2.0) == (2.0, -2.0)
    _, test, then, _, orelse, ret, *_ = lines_of(branchy)
    assert g.ir() == textwrap.dedent(f"""\
        {{ lambda ; x:f64, y:f64 . let
            _t0:bool = gt x y  # {BASE}:{test}
            if _t0:  # merges z_2=z|z_1
              z:f64 = mul x y  # {BASE}:{then}
            else:
              z_1:f64 = sub x y  # {BASE}:{orelse}
            _t3:f64 = mul z_2 2.0  # {BASE}:{ret}
          in ( _t3 ) }}""")


def test_ir_is_deterministic():
    texts = set()
    for _ in range(3):
        g = jitgrad.grad(branchy, wrt=(0, 1))
        g(3.0, 2.0)
        texts.add(g.ir())
        texts.add(g.ir())
        texts.add(g.ir(1.0, 2.0))
    assert len(texts) == 1


def test_ir_for_example_arguments_before_any_call():
    g = jitgrad.grad(square)
    with pytest.raises(jitgrad.JitgradError, match="no signature compiled yet"):
        g.ir()
    assert "mul x x" in g.ir(2.0)


def test_ir_of_a_loop_is_the_forward_graph():
    g = jitgrad.grad(sine_loop)
    jitgrad.check_grad(sine_loop, 0.7)
    g(0.7)
    fresh = jbuild.build(jparse.FunctionSource.of(sine_loop), [jtypes.FLOAT])
    assert g.ir() == jir.format_function(fresh)


# ----------------------------------------------------------------------------- generated source


def square_source_golden() -> str:
    first, ret, *_ = lines_of(square)
    return textwrap.dedent(f'''\
        # Generated by jitgrad from square ({BASE}:{first}); do not edit.
        # Specialised to: x: f64; gradient with respect to: x.
        import numpy as np

        import jitgrad.backend.numba.runtime as _rt


        def square_grad(x):
            """The gradient with respect to x: the forward pass, then the adjoint pass."""
            # -- forward pass: the value, and what the adjoint pass reads
            # -- adjoint pass: derivatives, from the value back to the arguments
            # {BASE}:{ret}: return x * x
            _b_x = x
            _b_x = _b_x + x
            return _b_x


        ''')


def test_source_of_square_golden():
    g = jitgrad.grad(square)
    g(3.0)
    assert g.source() == square_source_golden()


def test_source_is_deterministic():
    a = jitgrad.grad(square)
    b = jitgrad.value_and_grad(square)
    a(3.0)
    text = a.source()
    assert text == a.source(7.0)
    # value_and_grad differs only in computing the value, keeping it and returning it too
    # (grad computes none of it: the adjoint of x * x reads x alone)
    assert b.source("adjoint", 5.0) == a.source("adjoint").replace(
        "return _b_x", "return _value, _b_x")
    assert b.source("forward", 5.0) == a.source("forward") + (
        f"    # {BASE}:{lines_of(square)[1]}: return x * x\n    _t0 = x * x\n    _value = _t0\n")
    assert "0x" not in text
    assert "id(" not in text and "at 0x" not in text


def test_source_is_a_real_file_in_the_cache_folder():
    g = jitgrad.grad(square)
    g(3.0)
    path = g.specialisations.last.path
    assert os.path.isfile(path)
    with open(path, encoding="utf-8") as f:
        assert f.read() == g.source()
    cache = os.environ.get("JITGRAD_CACHE_DIR")
    if cache:
        assert os.path.realpath(path).startswith(os.path.realpath(cache) + os.sep)


_DETERMINISM_SCRIPT = r"""
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import jitgrad
from corpus import ALL_CASES
out = {}
for case in ALL_CASES:
    g = jitgrad.grad(case.fn, wrt=case.wrt)
    g(*case.points[0])
    text = g.source() + "\n----\n" + g.ir()
    out[case.name] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps(out, sort_keys=True))
"""

# Corpus functions with a run-time conditional expression (their merged values once carried an
# address in their names).
TERNARY_CASES = {"leaky_ternary", "max_pool", "ternary_scalar"}


@pytest.fixture(scope="module")
def corpus_text_by_hash_seed(tmp_path_factory):
    """A digest of the generated source and IR of every corpus case, computed in two processes
    with different hash seeds (in plain Python, JITGRAD_DISABLE_JIT=1, so nothing compiles)."""
    results = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, JITGRAD_DISABLE_JIT="1",
                   JITGRAD_CACHE_DIR=str(tmp_path_factory.mktemp("nojit")))
        proc = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT, HERE], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert results[0].keys() == results[1].keys()
    return results


def test_source_and_ir_identical_across_processes_and_hash_seeds(corpus_text_by_hash_seed):
    """The generated text must not depend on set order under hash randomisation, or on
    anything else that changes between processes: the disk cache is keyed by it."""
    first, second = corpus_text_by_hash_seed
    differ = {k for k in first if first[k] != second[k]}
    assert not differ, f"generated text differs between processes: {sorted(differ)}"


def test_ternary_source_has_no_address(corpus_text_by_hash_seed):
    g = jitgrad.grad(ternary, wrt=(0, 1))
    assert g(3.0, 2.0) == (24.0, 0.0)
    assert re.search(r"\d{6,}", g.source() + g.ir()) is None, g.source()
    first, second = corpus_text_by_hash_seed
    assert all(first[k] == second[k] for k in TERNARY_CASES)


# ----------------------------------------------------------------------------- rule table


DIFFERENTIABLE = sorted(n for n, p in PRIMITIVES.items() if p.differentiable)
ELEMENTWISE = sorted(n for n, p in PRIMITIVES.items() if p.elementwise)

@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_every_differentiable_primitive_has_a_rule(name):
    assert name in RULES
    rule = RULES[name]
    assert any(r is not None for r in rule), f"{name}: every input is marked non-differentiable"


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_belongs_to_a_differentiable_primitive(name):
    assert name in PRIMITIVES
    assert PRIMITIVES[name].differentiable


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_every_elementwise_primitive_has_a_runtime_function(name):
    rt = jitgrad.backend.numba.runtime
    # (a ufunc is made on first use: `runtime.bind_ufuncs` binds it for a module that calls it)
    fn = rt.ufunc(name) if name in rt.UFUNC_SCALARS else getattr(rt, name, None)
    assert fn is not None, f"jitgrad.backend.numba.runtime has no {name}"
    assert callable(fn)


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_has_a_lowering(name):
    """A primitive without a template in `lowering.LOWER` is written as NumPy's function of its
    name (or is a user's custom_vjp, lowered as a copy of its value)."""
    assert (name in lowering.LOWER or PRIMITIVES[name].custom_rule
            or callable(getattr(np, name, None))), f"{name}: no template and no np.{name}"


def test_lowering_names_only_primitives():
    assert set(lowering.LOWER) <= set(PRIMITIVES)


def test_mod_is_differentiated_all_the_same():
    """x % y has derivative 1 in x and -floor(x / y) in y (see the mod bug above)."""
    g = jitgrad.grad(mod_sum, wrt=(0, 1))(np.array([2.0, 3.5]), np.array([1.5, 1.0]))
    np.testing.assert_allclose(g[0], [1.0, 1.0])
    np.testing.assert_allclose(g[1], [-1.0, -3.0])


# Primitives the corpus does not reach through its forward graphs. Adjoint-only primitives are
# emitted by rules (the adjoints of broadcasting, reductions, reshapes and reads); the others
# are user-facing gaps of the corpus, exercised by `test_rarely_tested_primitives` below.
ADJOINT_ONLY = {"add_at", "broadcast_like", "reshape_like", "spread", "sum_to_like", "take_add",
                "trigamma", "tetragamma",  # the derivatives of digamma and trigamma
                "inverse_gaps", "sqrtm_adjoint",  # in the decompositions' rules
                "root_slope",  # in implicit_root's rule
                "gammainc_slope",  # in gammainc's, gammaincc's and gammaincinv's rules
                "digamma_re", "digamma_im"}  # in complex loggamma's rules
CORPUS_GAPS = {"arccos", "arcsin", "arcsinh", "bincount", "cast", "cosh", "dft", "expm1",
               "nextafter", "outer", "sinh", "vander"}
# Gaps tested in a test of their own (np.float32's rounding is too fine for the check below).
TESTED_ELSEWHERE = {"round_float32",  # tests/test_numpy_surface.py
                    "lambertw",  # scipy.special.lambertw(z).real: tests/test_object_loops_b8.py
                    "root_at", "implicit_root",  # brentq's roots: tests/test_scipy_solvers.py
                    "eigh_vectors_upper",  # eigh(a, "U"): tests/test_autograd_names.py
                    # scipy.special.wofz and complex loggamma: tests/test_complex_special.py
                    "wofz_re", "wofz_im", "loggamma_re", "loggamma_im",
                    # multivariate_normal(allow_singular=True)'s covariance, its derivative
                    # refused: tests/test_autograd_forms.py
                    "pseudo_covariance",
                    # complex svd, eigh and eig (and eig's adjoint's helper), against NumPy,
                    # JAX and central differences: tests/test_complex_linalg.py
                    "csvdvals", "csvd_u_re", "csvd_u_im", "csvd_vt_re", "csvd_vt_im",
                    "ceigvalsh", "ceigh_vectors_re", "ceigh_vectors_im", "ceig_values_re",
                    "ceig_values_im", "ceig_vectors_re", "ceig_vectors_im",
                    "inverse_square_gaps"}
# The decompositions, which the gradients of tests/test_linalg_decompositions.py compile
# (checked by `test_decompositions_are_in_their_test`).
DECOMPOSITIONS = {"companion", "eig_values", "eig_vectors", "eigh_vectors", "eigvalsh", "pinv",
                  "qr_q", "qr_r", "sqrtm", "svd_u", "svd_vt", "svdvals"}


def corpus_primitives() -> set[str]:
    used: set[str] = set()
    for case in (corpus.STRAIGHT_CASES + corpus.LOOP_CASES + corpus_surface.SURFACE_CASES
                 + corpus_real.REAL_CASES + corpus_more.MORE_CASES + corpus_shape.SHAPE_CASES):
        bound = inspect.signature(case.fn).bind(*case.points[0])
        bound.apply_defaults()  # penalised_fit(w, x, y, penalty="l2")
        types = [jpytree.type_of_tree(v, "argument") for v in bound.arguments.values()]
        fn_ir = jbuild.build(jparse.FunctionSource.of(case.fn), types)
        used |= {s.prim for s in jir.walk(fn_ir.body) if isinstance(s, jir.Eqn)}
    return used


def test_corpus_coverage():
    """Every differentiable primitive appears in some corpus function's forward IR, except the
    adjoint-only ones and the known gaps listed above."""
    known = ADJOINT_ONLY | CORPUS_GAPS | DECOMPOSITIONS | TESTED_ELSEWHERE
    assert known - set(PRIMITIVES) == set(), "stale names in the lists"
    missing = set(DIFFERENTIABLE) - corpus_primitives()
    # SciPy's special functions of their own: differentiated, compiled, in tests/test_special.py
    # (which checks that it uses each)
    unexpected = missing - known - set(SCIPY_FUNCTIONS)
    assert not unexpected, f"differentiable primitives no corpus function uses: {sorted(missing)}"


def test_rarely_tested_primitives():
    x = np.array([0.3, -0.5, 1.1])
    a = np.array([1.0, 2.0])
    b = np.array([0.5, -1.0, 3.0])
    worst = jitgrad.check_grad(rarely_tested, x, a, b)
    assert worst < 1e-5
    used = {s.prim for s in jir.walk(jbuild.build(jparse.FunctionSource.of(rarely_tested), [
        jtypes.type_of_value(v) for v in (x, a, b)]).body) if isinstance(s, jir.Eqn)}
    assert CORPUS_GAPS <= used


def test_decompositions_are_in_their_test():
    import test_linalg_decompositions as la

    used = set()
    for fn, x in la.FUNCTIONS:
        body = jbuild.build(jparse.FunctionSource.of(fn), [jtypes.type_of_value(x)]).body
        used |= {s.prim for s in jir.walk(body) if isinstance(s, jir.Eqn)}
    assert DECOMPOSITIONS <= used, DECOMPOSITIONS - used


def test_isinf_inside_a_gradient():
    """np.isinf / math.isinf: no derivative, a zero tangent; on arrays and on scalars."""
    x = np.array([0.5, np.inf, -1.5, -np.inf, 2.0])
    g = jitgrad.grad(inf_masked)(x)
    finite = np.isfinite(x)
    want = np.zeros_like(x)
    for k in np.flatnonzero(finite):  # central differences on the finite entries
        h = 1e-6 * max(1.0, abs(x[k]))
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        want[k] = (inf_masked(up) - inf_masked(down)) / (up[k] - down[k])
    np.testing.assert_allclose(g, want, rtol=1e-7)
    assert np.all(g[~finite] == 0.0)
    v = np.ones_like(x)
    np.testing.assert_allclose(jitgrad.hvp(inf_masked)(x, v), np.where(finite, 2.0, 0.0))
    assert jitgrad.grad(inf_masked_scalar, wrt=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    assert jitgrad.grad(inf_masked_scalar, wrt=1)(math.inf, 3.0) == 6.0
    # on arrays outside a fused loop, generated code calls _rt.isinf: NumPy's, compiled in place
    rt_isinf = numba.njit(lambda v: jitgrad.backend.numba.runtime.isinf(v))
    np.testing.assert_array_equal(rt_isinf(x), np.isinf(x))


# ----------------------------------------------------------------------------- check_grad


def test_check_grad_passes_on_a_smooth_function():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=4), rng.normal(size=4)
    worst = jitgrad.check_grad(smooth, x, y)
    assert isinstance(worst, float)
    assert 0.0 <= worst < 1e-5
    assert jitgrad.check_grad(smooth, x, y, wrt=1) < 1e-5
    assert jitgrad.check_grad(jitgrad.grad(smooth), x, y, wrt=(0, 1)) < 1e-5


def test_check_grad_accepts_a_kink_where_the_convention_matches():
    """At a symmetric kink the central difference is the mean of the one-sided slopes, which
    is jitgrad's convention: abs'(0) = 0, maximum(x, 0)' at 0 = 1/2."""
    jitgrad.check_grad(np_abs, 0.0)
    jitgrad.check_grad(relu, 0.0)


def test_check_grad_raises_at_a_discontinuity():
    """`step` jumps by 1 at x = 0: jitgrad gives the slope of the branch taken (1.0), the
    central difference sees the jump (~1 / (2 eps))."""
    assert jitgrad.grad(step)(0.0) == 1.0
    with pytest.raises(GradientCheckError, match="with respect to 'x' disagrees") as info:
        jitgrad.check_grad(step, 0.0)
    assert isinstance(info.value, AssertionError)
    jitgrad.check_grad(step, 0.5)  # fine away from the jump


# ----------------------------------------------------------------------------- return types


def test_float_in_float_out():
    g = jitgrad.grad(square)(3.0)
    assert type(g) is float
    assert g == 6.0
    v, g = jitgrad.value_and_grad(square)(3.0)
    assert type(v) is float
    assert type(g) is float


def test_numpy_scalars_keep_their_type():
    g32 = jitgrad.grad(square)(np.float32(3.0))
    assert type(g32) is np.float32
    assert g32 == 6.0
    g64 = jitgrad.grad(square)(np.float64(3.0))
    assert isinstance(g64, float)
    assert g64 == 6.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_array_gradient_has_the_arguments_dtype_and_shape(dtype, shape):
    x = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape).astype(dtype)
    g = jitgrad.grad(sum_squares)(x)
    assert isinstance(g, np.ndarray)
    assert g.dtype == dtype
    assert g.shape == shape
    np.testing.assert_allclose(g, 2.0 * x)


def least_squares(w, x, y):
    r = x @ w - y
    return 0.5 * np.sum(r * r)


def test_float32_arrays_through_matrix_products():
    """float32 arguments are computed in float32 (a float32 build: tests/test_float32.py), and
    their gradients come back in float32, the float64 gradient's to float32's precision."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(5)]
    args32 = [a.astype(np.float32) for a in args]
    g32 = jitgrad.grad(least_squares, wrt=(0, 1))(*args32)
    want = jitgrad.grad(least_squares, wrt=(0, 1))(*[a.astype(np.float64) for a in args32])
    for g, w in zip(g32, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_dim_array_in_zero_dim_array_out(dtype):
    x = np.array(3.0, dtype=dtype)
    g = jitgrad.grad(square)(x)
    assert isinstance(g, np.ndarray)
    assert g.ndim == 0
    assert g.dtype == dtype
    assert g == 6.0
    v, g = jitgrad.value_and_grad(square)(x)
    assert v == 9.0
    assert isinstance(g, np.ndarray)
    assert g.ndim == 0


def test_non_contiguous_arguments():
    base = np.arange(12.0).reshape(3, 4)
    for x in (base[:, 1], base.T, np.asfortranarray(base), base[::2, ::-1]):
        g = jitgrad.grad(sum_squares)(x)
        assert g.shape == x.shape
        np.testing.assert_allclose(g, 2.0 * x)


def test_gradients_are_fresh_arrays():
    """A returned gradient is the caller's to keep: modifying it changes no later result."""
    x = np.array([1.0, 2.0, 3.0])
    g = jitgrad.grad(sum_squares)
    first = g(x)
    assert not np.shares_memory(first, x)
    first[:] = 100.0
    np.testing.assert_allclose(g(x), 2.0 * x)


# ----------------------------------------------------------------------------- grad's forms


def test_grad_decorator_forms():
    assert isinstance(deco_plain, jitgrad.GradFunction)
    assert deco_plain(2.0) == 12.0
    assert deco_wrt_position(2.0, 3.0) == 12.0
    assert deco_wrt_name_positional(2.0, 3.0) == 12.0
    assert deco_wrt_tuple(2.0, 3.0) == (12.0, 9.0)
    value, grad = deco_value_and_grad(np.array([1.0, 2.0]))
    assert value == 5.0
    np.testing.assert_allclose(grad, [2.0, 4.0])


def test_grad_call_forms():
    assert jitgrad.grad(two_args)(2.0, 5.0) == 20.0
    assert jitgrad.grad(two_args, wrt=1)(2.0, 5.0) == 7.0
    assert jitgrad.grad(two_args, wrt="y")(2.0, 5.0) == 7.0
    assert jitgrad.grad(two_args, wrt=-1)(2.0, 5.0) == 7.0
    assert jitgrad.grad(two_args, 1)(2.0, 5.0) == 7.0
    assert jitgrad.grad(wrt="y")(two_args)(2.0, 5.0) == 7.0
    assert jitgrad.value_and_grad(two_args, wrt="y")(2.0, 5.0) == (35.0, 7.0)
    assert jitgrad.grad(two_args)(x=2.0, y=5.0) == 20.0
    assert jitgrad.grad(two_args)(2.0, y=5.0) == 20.0


def test_tuple_versus_single_wrt():
    single = jitgrad.grad(two_args, wrt=0)(2.0, 5.0)
    assert single == 20.0
    one = jitgrad.grad(two_args, wrt=(0,))(2.0, 5.0)
    assert one == (20.0,)
    assert jitgrad.grad(two_args, wrt=[0])(2.0, 5.0) == (20.0,)
    assert jitgrad.grad(two_args, wrt=(0, 1))(2.0, 5.0) == (20.0, 7.0)
    assert jitgrad.grad(two_args, wrt=(1, 0))(2.0, 5.0) == (7.0, 20.0)
    assert jitgrad.grad(two_args, wrt=("y", "x"))(2.0, 5.0) == (7.0, 20.0)
    v, gs = jitgrad.value_and_grad(two_args, wrt=(0, 1))(2.0, 5.0)
    assert (v, gs) == (35.0, (20.0, 7.0))


def test_grad_of_a_numba_function_reads_the_python_source():
    g = jitgrad.grad(numba.njit(square))
    assert g(3.0) == 6.0


def test_wrapper_metadata_and_repr():
    g = jitgrad.grad(two_args, wrt=(1, 0))
    assert g.__name__ == "two_args"
    assert g.__wrapped__ is two_args
    assert repr(g) == "<jitgrad.grad of two_args wrt y, x>"
    assert repr(jitgrad.value_and_grad(square)) == "<jitgrad.value_and_grad of square wrt x>"


# ----------------------------------------------------------------------------- tie convention


def test_maximum_at_a_tie_shares_half():
    assert jitgrad.grad(relu)(0.0) == 0.5
    assert jitgrad.grad(relu_min)(0.0) == 0.5
    np.testing.assert_array_equal(jitgrad.grad(relu_sum)(np.array([0.0, 2.0, -2.0])),
                                  [0.5, 1.0, 0.0])


def test_builtin_max_min_at_a_tie():
    assert jitgrad.grad(builtin_max, wrt=(0, 1))(1.5, 1.5) == (0.5, 0.5)
    assert jitgrad.grad(builtin_min, wrt=(0, 1))(1.5, 1.5) == (0.5, 0.5)


def builtin_max_of_rows(x):
    return np.sum(max(x))


def builtin_min_of_a_number(x):
    return min(x)


def test_builtin_max_min_of_one_iterable():
    """Python's max of a 1-D array is np.max's value, ties shared; of a 2-D array or of a
    number Python compares rows or fails: refused, pointing at np.max."""
    np.testing.assert_allclose(jitgrad.grad(builtin_max_of_rows)(np.array([1.0, 3.0, 3.0])),
                               [0.0, 0.5, 0.5])
    with pytest.raises(jitgrad.UnsupportedError, match=r"max\(\) of one array of rank 2"):
        jitgrad.grad(builtin_max_of_rows)(np.ones((2, 2)))
    with pytest.raises(jitgrad.UnsupportedError, match=r"use np.min\(x\)"):
        jitgrad.grad(builtin_min_of_a_number)(2.0)


def generator_keeps_its_names(a, b):
    x = 2.0
    s = sum(x * y for x, y in zip(a, b) if y > 0)
    return s * x  # the function's x, not the generator's


def max_of_an_empty_generator(a):
    return max(v for v in a[:0])


def generator_in_a_while_test(a):
    k = 0
    while sum(v for v in a[:k]) < 1.0:
        k += 1
    return a[0]


def test_reductions_of_generator_expressions():
    """sum/max/min/any/all of a comprehension are built as their loops (frontend/desugar.py):
    the comprehension's names stay its own, max of nothing raises as Python's does, and a
    comprehension evaluated more than once where it stands (a while test) is refused."""
    a, b = np.array([0.5, -2.0, 1.5]), np.array([1.0, -2.0, 3.0])
    value, grads = jitgrad.value_and_grad(generator_keeps_its_names, wrt=(0, 1))(a, b)
    assert value == pytest.approx(generator_keeps_its_names(a, b))
    np.testing.assert_allclose(grads[0], [2.0, 0.0, 6.0])
    np.testing.assert_allclose(grads[1], [1.0, 0.0, 3.0])
    source = jitgrad.grad(generator_keeps_its_names).source(a, b)
    assert "s = sum(x * y for x, y in zip(a, b) if y > 0)" in source  # the user's line
    with pytest.raises(ValueError, match=r"max\(\) arg is an empty sequence"):
        jitgrad.grad(max_of_an_empty_generator)(a)
    with pytest.raises(jitgrad.UnsupportedError, match="generator expression is not supported"):
        jitgrad.grad(generator_in_a_while_test)(a)


def test_max_over_ties_shares_equally():
    np.testing.assert_allclose(jitgrad.grad(max_all)(np.array([1.0, 3.0, 3.0, 2.0])),
                               [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_allclose(jitgrad.grad(min_all)(np.array([1.0, 1.0, 1.0, 2.0])),
                               [1 / 3, 1 / 3, 1 / 3, 0.0])
    np.testing.assert_allclose(jitgrad.grad(max_all)(np.array([[2.0, 2.0], [2.0, 2.0]])),
                               np.full((2, 2), 0.25))


def test_max_along_an_axis_over_ties():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_allclose(jitgrad.grad(max_rows)(x, np.array([1.0, 10.0])),
                               [[0.0, 0.5, 0.5], [10 / 3] * 3])
    y = np.array([[1.0, 5.0], [1.0, 4.0], [0.0, 5.0]])
    np.testing.assert_allclose(jitgrad.grad(method_max_cols)(y),
                               [[0.5, 0.5], [0.5, 0.0], [0.0, 0.5]])


def test_abs_at_zero_is_zero():
    assert jitgrad.grad(np_abs)(0.0) == 0.0
    assert jitgrad.grad(builtin_abs)(0.0) == 0.0
    assert jitgrad.grad(math_fabs)(0.0) == 0.0
    np.testing.assert_array_equal(jitgrad.grad(np_abs_sum)(np.array([0.0, -2.0, 2.0])),
                                  [0.0, -1.0, 1.0])


def test_clip_at_its_bounds_shares_half():
    np.testing.assert_allclose(jitgrad.grad(clip_sum)(np.array([-1.0, 0.0, 1.0, 2.0])),
                               [0.5, 1.0, 0.5, 0.0])


# ----------------------------------------------------------------------------- argument safety


def _check_untouched(fn, args, wrt):
    """Differentiate ``fn`` on ``args``; the caller's arrays keep their values; the value is
    the one NumPy computes on copies."""
    originals = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    for a, o in zip(args, originals):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, o)
    expected = fn(*[o.copy() if isinstance(o, np.ndarray) else o for o in originals])
    assert value == pytest.approx(expected)
    for k, g in zip(wrt, grads):
        assert not np.shares_memory(g, args[k])
    return grads


def test_caller_arrays_never_modified():
    x = np.array([1.0, 2.0, 3.0])
    (g,) = _check_untouched(write_first, (x,), (0,))
    np.testing.assert_allclose(g, [0.0, 4.0, 6.0])
    (g,) = _check_untouched(write_loop, (x,), (0,))
    np.testing.assert_allclose(g, [2.0, 2.0, 2.0])
    (g,) = _check_untouched(scale_in_place, (x,), (0,))
    np.testing.assert_allclose(g, [3.0, 3.0, 3.0])


def test_caller_arrays_never_modified_several_arguments():
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([4.0, 5.0, 6.0])
    gx, gy = _check_untouched(add_into_slice, (x, y), (0, 1))
    # x1 = [1, 7, 9], y1 = [5, 5, 6]: d/dx = y1, d/dy = [x1[0]] + (x1 + y1)[1:]
    np.testing.assert_allclose(gx, [5.0, 5.0, 6.0])
    np.testing.assert_allclose(gy, [0.0, 12.0, 15.0])
    (gx,) = _check_untouched(add_into_slice, (x, y), (0,))  # y written, not differentiated
    A = np.arange(6.0).reshape(2, 3)
    v = np.array([1.0, -1.0, 2.0])
    gA, gv = _check_untouched(write_row, (A, v), (0, 1))
    np.testing.assert_allclose(gA, [[0.0, 0.0, 0.0], [6.0, 8.0, 10.0]])
    np.testing.assert_allclose(gv, 2.0 * v)
    idx = np.array([0, 1])
    (gx,) = _check_untouched(write_int_arg, (x, idx), (0,))
    np.testing.assert_allclose(gx, [0.0, 3.0, 2.0])


def test_writes_through_an_alias_of_an_argument_work_on_a_copy():
    x = np.array([1.0, 2.0, 3.0])
    (g,) = _check_untouched(write_via_alias, (x,), (0,))
    np.testing.assert_allclose(g, [0.0, 4.0, 6.0])  # y[0] = 0 is a constant


def test_a_write_through_a_slice_of_an_argument_works_on_a_copy():
    """``y = x[1:]; y[0] = 0.0`` writes x[1] of x's copy (issue 25): the caller's x is kept."""
    x = np.array([1.0, 2.0, 3.0])
    (g,) = _check_untouched(write_via_slice_view, (x,), (0,))
    np.testing.assert_allclose(g, [2.0, 0.0, 6.0])


@pytest.mark.parametrize("fn", [write_via_reshape_view])
def test_writes_through_a_view_are_refused(fn):
    """Reading an argument after a write into its reshape is refused (NumPy may copy in a
    reshape, so it may or may not show the write); the caller's array is left as it was."""
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(jitgrad.UnsupportedError, match="`x` shares memory with an array "
                       "written in place"):
        jitgrad.value_and_grad(fn)(x)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


_NUMBA_DISABLED_SCRIPT = """
import numba
import numpy as np

import jitgrad


def square(x):
    return x * x


def total(w, x):
    s = 0.0
    for i in numba.prange(x.shape[0]):
        s += np.tanh(w * x[i])
    return s


x = np.linspace(-1.0, 1.0, 7)
g = jitgrad.grad(total, parallel=True)(0.3, x)
h = 1e-6
fd = (total(0.3 + h, x) - total(0.3 - h, x)) / (2 * h)
print(jitgrad.grad(square)(3.0), g, fd)
"""


def test_numbas_own_disable_jit_runs_the_generated_code_as_python(tmp_path):
    """``NUMBA_DISABLE_JIT=1`` (what a Numba user sets to step through their code) used to break
    ``import jitgrad``: Numba's decorators return plain functions, which have no dispatcher to
    configure. It now means what ``JITGRAD_DISABLE_JIT=1`` means, a parallel build included
    (its chunk size setting does nothing then)."""
    script = tmp_path / "disabled.py"
    script.write_text(_NUMBA_DISABLED_SCRIPT)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", JITGRAD_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("JITGRAD_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    square, g, fd = (float(v) for v in proc.stdout.split())
    assert square == 6.0
    assert abs(g - fd) <= 1e-8 * max(1.0, abs(fd)), (g, fd)
