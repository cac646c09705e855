"""jitgrad.tape: PyTorch-like semantics, and the whole corpus against two independent oracles.

For every point of the corpus the tape's value and gradient are checked against plain Python
and central finite differences (the tolerances of ``corpus_check``), and against jitgrad's
compiled gradient to 1e-8: three independent computations must agree. The tape refuses what it
cannot record (``math.*`` on a value that carries a gradient, writes of such a value into a
plain ``np.zeros``/``np.ones``/``np.empty``/``np.full`` array); those points are listed in
``REFUSED`` with the reason and checked to raise, never skipped.
"""

import ast
import math
import pathlib
import time

import numpy as np
import pytest
from corpus import LOOP_CASES, RETURNS_IN_LOOP_CASES, STRAIGHT_CASES
from corpus_check import (
    call_checked,
    check_value_and_grad_result,
    copied,
    point_params,
    value_and_grad_fn,
)
from fd import numeric_grad

import jitgrad
from jitgrad import JitgradError, ShapeError, SignatureError, UnsupportedError, tape
from jitgrad.prims.primitives import RULES
from jitgrad.tape import Tensor

CASES = STRAIGHT_CASES + LOOP_CASES + RETURNS_IN_LOOP_CASES

# ---------------------------------------------------------------------------------------------
# Expected refusals: case name -> (the source fragment of the line the error points at, the
# points that refuse; None: all of them). Every one is a value that carries a gradient going
# through float(): a math.* function, or a write into a plain NumPy array.
# ---------------------------------------------------------------------------------------------

ALL = None
REFUSED = {
    # math.* functions call float() on their argument: they cannot be recorded
    "math_scalars": ("math.exp(a)", ALL),
    "math_more": ("math.tan(a)", ALL),
    "rnn_scalar": ("math.tanh(a * h + x[i])", ALL),
    "logsumexp_loop": ("math.exp(x[i] - m)", ALL),
    "accumulate_mod_k": ("math.exp(0.5 * x[i])", ALL),
    "newton_sqrt": ("math.sin(g)", ALL),
    "rk2_pendulum": ("math.sin(th)", ALL),
    "while_sum": ("math.exp(-x[i] * x[i])", ALL),
    "continue_loop": ("math.sqrt(x[i])", ALL),
    "branch_outside_loop": ("math.sin(s)", {2}),  # only the point whose branch calls math.sin
    "early_return_branch": ("math.log(s)", {0}),  # only the point whose branch calls math.log
    "pairwise_distances": ("math.sqrt(d2 + 1e-3)", ALL),
    "gradient_descent": ("math.cos(x)", ALL),
    "power_iteration": ("math.sqrt(np.sum(v * v))", ALL),
    "piecewise_elementwise": ("math.log(x[i])", ALL),
    "softmax_ce_loop": ("math.exp(z[i] - m)", ALL),
    "gated_rnn_helper": ("math.exp(-t)", ALL),
    "trapezoid": ("math.exp(-theta * t * t)", ALL),
    "row_normalize": ("math.sqrt(norm)", ALL),
    "empty_fill": ("math.cos(x[i])", ALL),
    # a value with a gradient written into an array from np.zeros/np.ones/np.empty/np.full
    "accumulate_mod": ("out[i % 3] += x[i] * x[i]", ALL),
    "matvec_loops": ("y[i] += A[i, j] * x[j]", ALL),
    "row_assign": ("Y[i, :] = np.tanh(X[i, :] * w) + 1.0", ALL),
    "slice_assign": ("y[0:n] = x", ALL),
    "block_assign": ("y[start:stop] = x[start:stop] * (1.0 + start)", ALL),
    "ones_product": ("p[i] = p[i - 1] * x[i - 1]", ALL),
    "full_alloc": ("y[i] = y[i] * x[i] + SHIFT", ALL),
    "conv1d": ("y[i] += x[i + j] * w[j]", ALL),
    "matmul_loops": ("C[i, j] += A[i, p] * B[p, j]", ALL),
    "forward_substitution": ("y[i] = s / L[i, i]", ALL),
}

JITGRAD_RTOL = 1e-8


def refuses(case, idx) -> bool:
    entry = REFUSED.get(case.name)
    return entry is not None and (entry[1] is ALL or idx in entry[1])


@pytest.mark.parametrize(("case", "idx"), point_params(CASES))
def test_corpus_three_oracles(case, idx):
    tape_fn = tape.value_and_grad(case.fn, wrt=case.wrt)
    if refuses(case, idx):
        fragment = REFUSED[case.name][0]
        with pytest.raises(UnsupportedError, match="carries a gradient") as info:
            tape_fn(*copied(case.points[idx]))
        assert fragment in str(info.value), str(info.value)
        return
    out = call_checked(tape_fn, case, idx)
    check_value_and_grad_result(case, idx, out)  # vs plain Python and finite differences
    value, grads = out
    jg_value, jg_grads = call_checked(value_and_grad_fn(case, case.wrt), case, idx)
    np.testing.assert_allclose(value, jg_value, rtol=JITGRAD_RTOL, atol=1e-12)
    for k, g, jg in zip(case.wrt, grads, jg_grads):
        assert type(g) is type(jg), f"{case.name}: tape gives {type(g)}, jitgrad {type(jg)}"
        scale = max(1.0, float(np.max(np.abs(jg))))
        np.testing.assert_allclose(g, jg, rtol=JITGRAD_RTOL, atol=1e-12 * scale,
                                   err_msg=f"{case.name}: tape and jitgrad disagree (arg {k})")


def test_refusal_table_is_exact():
    names = {c.name: c for c in CASES}
    for name, (_, points) in REFUSED.items():
        assert name in names, f"REFUSED lists {name}, which is not a corpus case"
        if points is not ALL:
            assert points <= set(range(len(names[name].points))), name
    n_points = sum(len(c.points) for c in CASES)
    n_refused = sum(refuses(c, i) for c in CASES for i in range(len(c.points)))
    assert n_refused < n_points / 2  # most of the corpus runs on the tape


# ---------------------------------------------------------------------------------------------
# PyTorch semantics
# ---------------------------------------------------------------------------------------------


def test_square_backward():
    x = Tensor(3.0, requires_grad=True)
    y = np.square(x)
    assert float(y.detach()) == 9.0 and y.detach().item() == 9.0 and y.numpy() == 9.0
    y.backward()
    assert x.grad == 6.0 and type(x.grad) is float


def test_item_keeps_the_gradient():
    x = Tensor(np.array([2.0]), requires_grad=True)
    y = x.item() * 3.0  # differentiable, as in jitgrad's compiled code
    y.backward()
    np.testing.assert_array_equal(x.grad, [3.0])
    assert type(Tensor(np.array([2.0])).item()) is float


def test_backward_accumulates_and_reset():
    x = Tensor(3.0, requires_grad=True)
    y = x * x
    y.backward()
    y.backward()  # the graph is kept: a second backward adds the same gradient again
    assert x.grad == 12.0
    x.grad = None
    (x * x * x).backward()
    assert x.grad == 27.0


def test_array_grad_accumulates_in_a_fresh_array():
    x = Tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    y = np.sum(x * x)
    y.backward()
    first = x.grad
    y.backward()
    np.testing.assert_array_equal(first, [2.0, 4.0, 6.0])  # not changed by the second call
    np.testing.assert_array_equal(x.grad, [4.0, 8.0, 12.0])
    assert x.grad.dtype == np.float64


def test_backward_refuses_non_scalar_and_constants():
    x = Tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ShapeError, match="needs a scalar"):
        (x * 2.0).backward()
    assert issubclass(ShapeError, ValueError) and issubclass(ShapeError, JitgradError)
    (x * 2.0).backward(gradient=np.array([1.0, 0.0, 2.0]))  # explicit seed of the same shape
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, 4.0])
    with pytest.raises(JitgradError, match="does not require gradients"):
        Tensor(2.0).backward()


def test_detach_stops_gradient():
    x = Tensor(2.0, requires_grad=True)
    y = x * x.detach() + np.exp(x.detach())
    y.backward()
    assert x.grad == 2.0
    assert not x.detach().requires_grad and x.requires_grad and (x * x).requires_grad
    assert x.is_leaf and not (x * x).is_leaf


def test_requires_grad_refuses_integers():
    with pytest.raises(SignatureError):
        Tensor(np.arange(3), requires_grad=True)
    with pytest.raises(SignatureError):
        Tensor(3, requires_grad=True)


def test_deep_scalar_chain():
    """10^5 steps (3 * 10^5 nodes): no recursion limit, and seconds, not minutes."""
    n = 100_000

    def chain(x):
        h = 0.0
        for _ in range(n):
            h = np.tanh(0.9 * h + x)
        return h

    start = time.perf_counter()
    value, g = tape.value_and_grad(chain)(0.3)
    elapsed = time.perf_counter() - start
    h = d = 0.0  # forward-mode reference: d = dh/dx
    for _ in range(n):
        h = math.tanh(0.9 * h + 0.3)
        d = (1.0 - h * h) * (0.9 * d + 1.0)
    assert value == pytest.approx(h, rel=1e-12)
    assert g == pytest.approx(d, rel=1e-10)
    assert elapsed < 30.0, f"{elapsed:.1f} s"


def test_methods_attributes_and_indexing():
    rng = np.random.default_rng(0)
    A0, w0 = rng.normal(size=(3, 4)), rng.normal(size=4)

    def f(A, w):
        assert A.shape == (3, 4) and A.ndim == 2 and A.T.shape == (4, 3) and len(A) == 3
        s = A.sum(axis=0) @ w + A.mean() * A.max() - A.min(axis=1, keepdims=True).sum()
        s = s + A.reshape(12)[2:5].dot(A.copy()[1, 1:4]) + A.reshape((2, 6)).sum()
        s = s + np.sum(A[:, None] * w[None, :, None]) + A[-1, -1] ** 2 + A.T[0].sum()
        s = s + np.sum(np.sum(A, axis=0, keepdims=True) @ A.T) + np.sum(A @ w)
        s = s + np.sum(np.maximum(A, 0.0) + np.where(A > 0.2, A * 2.0, w * w))
        return s + sum(row[0] for row in A) + A[1:2, 2:3].reshape(1)[0] ** 3

    _check_against_fd(f, (A0, w0))


def test_numpy_functions_record():
    x0 = np.array([0.5, -1.0, 2.0])

    def f(x):
        y = np.exp(x) + np.sin(x) * np.cos(x) - np.sqrt(np.abs(x)) + np.log1p(x * x)
        y = y + np.clip(x, -0.5, 1.0) + np.minimum(x, 0.7) + np.transpose(x)
        y = y + np.reshape(x, (3, 1))[:, 0] + np.expand_dims(x, 0)[0] + np.power(x, 2)
        return np.mean(y) + np.max(y) + np.dot(x, y) + np.outer(x, x).sum()

    _check_against_fd(f, (x0,))


def test_python_control_flow_and_builtins():
    def f(x, a):
        s = 0.0
        for i in range(len(x)):
            if x[i] > 0:
                s += x[i] * a
            else:
                s -= abs(x[i])
        for v in x:
            s += min(v, a) * max(v, 0.1)
        k = 0
        while s > 1.0 and k < 3:
            s = s * 0.5
            k += 1
        return s + int(a > 0) * a

    _check_against_fd(f, (np.array([0.3, -1.2, 0.8]), 0.6))


def test_math_on_a_gradient_tensor_is_refused_with_the_line():
    def f(x):
        return math.exp(x) + 1.0

    with pytest.raises(UnsupportedError, match="np.exp") as info:
        tape.grad(f)(1.0)
    assert "return math.exp(x) + 1.0" in str(info.value)
    assert "test_tape.py" in str(info.value)
    # on a tensor without gradient, float() is harmless
    assert math.exp(Tensor(0.0)) == 1.0
    assert math.exp(Tensor(0.0, requires_grad=True).detach()) == 1.0


def test_writes_into_plain_arrays_are_refused():
    def scalar_write(x):
        y = np.zeros(3)
        y[0] = x[0] * 2.0
        return np.sum(y)

    def inplace_add(x):
        y = np.zeros(3)
        y += x
        return np.sum(y)

    with pytest.raises(UnsupportedError, match="carries a gradient"):
        tape.grad(scalar_write)(np.ones(3))
    with pytest.raises(UnsupportedError, match="out="):
        tape.grad(inplace_add)(np.ones(3))


def test_writes_into_tensor_arrays_are_recorded():
    def f(x):
        y = np.zeros_like(x)
        z = np.copy(x)
        y[0] = x[1] * x[2]
        y[1:3] = x[0:2] ** 2
        y[2] += x[0]
        z[0] = 5.0
        z *= x
        w = np.ones_like(x)
        w[1] = x[1]
        return np.sum(y * y) + np.sum(z) + np.sum(w * x)

    _check_against_fd(f, (np.array([0.4, -0.7, 1.3]),))


def test_inplace_update_is_seen_by_aliases():
    """``B += 1`` on an array is in place (NumPy semantics): an alias sees it."""

    def f(x):
        B = x.copy()
        C = B
        B += 1.0
        return np.sum(C * C)

    value, g = tape.value_and_grad(f)(np.array([1.0, 2.0, 3.0]))
    assert value == 29.0
    np.testing.assert_array_equal(g, [4.0, 6.0, 8.0])


def test_writes_into_leaves_and_views_are_refused():
    def write_leaf(x):
        x[0] = 1.0
        return np.sum(x)

    def write_view(x):
        y = x.copy()
        y[0][0] = 1.0
        return np.sum(y)

    def stale_view(x):
        y = x.copy()
        row = y[0]
        y[0, 1] = 5.0  # NumPy: row shows the write
        return np.sum(row)

    with pytest.raises(UnsupportedError, match="leaf"):
        tape.grad(write_leaf)(np.ones(3))
    with pytest.raises(UnsupportedError, match="view"):
        tape.grad(write_view)(np.ones((2, 2)))
    with pytest.raises(UnsupportedError, match="before a write"):
        tape.grad(stale_view)(np.ones((2, 2)))


def test_unsupported_numpy_is_refused():
    with pytest.raises(UnsupportedError, match=r"np\.poly"):
        tape.grad(lambda x: np.sum(np.poly(x)))(np.ones(3))
    with pytest.raises(UnsupportedError, match=r"np\.gcd"):
        tape.grad(lambda x: np.sum(np.gcd(x, 2)))(np.ones(3))
    with pytest.raises(UnsupportedError, match="fancy"):  # a mask of another rank
        tape.grad(lambda x: np.sum(x[np.array([[True], [False], [True]])]))(np.ones(3))
    with pytest.raises(UnsupportedError, match="fancy"):  # an integer array beside an integer
        tape.grad(lambda x: np.sum(x[np.array([0, 1]), 0]))(np.ones((3, 2)))


def test_masks_and_index_pairs_read_and_write():
    """The tape's reads and writes through masks, index vectors and pairs of them (repeated
    positions included) against central differences."""
    def f(x, idx):
        y = x * 1.0
        y[idx] += 2.0 * x[:3]
        y[y > 1.0] = 0.5
        z = y.reshape(2, 3)
        return np.sum(z[np.array([0, 1, 1]), np.array([2, 0, 2])] ** 2) + np.sum(y[y < 0.0] ** 3)
    x = np.array([0.3, -1.2, 0.8, 2.0, -0.4, 0.6])
    idx = np.array([1, 4, 1])
    g = tape.grad(f)(x, idx)
    np.testing.assert_allclose(g, numeric_grad(f, (x, idx), 0), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------------------------------------
# tape.grad: the signature and result types of jitgrad.grad
# ---------------------------------------------------------------------------------------------


def _poly(a, x, n):
    return np.sum(a * x ** 2) * n


def test_grad_types_and_wrt_forms():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = tape.grad(_poly)(0.5, x, 2)
    assert type(g) is float and g == pytest.approx(60.0)
    gx = tape.grad(_poly, wrt="x")(0.5, x, 2)
    assert gx.shape == x.shape and gx.dtype == np.float64
    np.testing.assert_allclose(gx, 2.0 * x)
    both = tape.grad(wrt=(1, "a"))(_poly)(0.5, x, 2)
    assert isinstance(both, tuple) and len(both) == 2
    np.testing.assert_allclose(both[0], gx)
    value, g0 = tape.value_and_grad(_poly, wrt=[0])(0.5, x=x, n=2)
    assert value == pytest.approx(30.0) and isinstance(g0, tuple)
    g32 = tape.grad(_poly, wrt=1)(0.5, x.astype(np.float32), 2)
    assert g32.dtype == np.float32
    g0d = tape.grad(_poly, wrt=0)(np.array(0.5), x, 2)
    assert isinstance(g0d, np.ndarray) and g0d.shape == ()


def test_grad_errors():
    with pytest.raises(SignatureError, match="integer"):
        tape.grad(_poly, wrt=2)(0.5, np.ones(2), 2)
    with pytest.raises(SignatureError, match="no argument named"):
        tape.grad(_poly, wrt="y")
    with pytest.raises(SignatureError, match="out of range"):
        tape.grad(_poly, wrt=3)
    with pytest.raises(TypeError, match="'list' and 'int'"):  # a list of leaves, as in Python
        tape.grad(_poly, wrt=1)(0.5, [1.0, 2.0], 2)
    with pytest.raises(ShapeError, match="must return a scalar"):
        tape.grad(lambda x: x * 2.0)(np.ones(3))


def _mlp_loss(params, x, y):
    h = np.tanh(x @ params["W"] + params["b"])
    z = h @ params["head"][0] + params["head"][1] * params["scale"]
    loss = np.mean((z - y) ** 2)
    return loss, {"mse": loss, "first": z[0], "steps": params["steps"]}


def test_dict_parameters_and_has_aux_as_jitgrad_takes_them():
    """A dict of parameters (nested, with an integer leaf) and ``has_aux``: the tape gives
    jitgrad.grad's structure and central differences' values, and aux as the function
    returned it (plain values, no tensors)."""
    rng = np.random.default_rng(3)
    params = {"W": rng.normal(size=(3, 4)), "b": rng.normal(size=4),
              "head": (rng.normal(size=4), 0.3), "scale": 1.5, "steps": 7}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    (value, aux), (g, gx) = tape.value_and_grad(_mlp_loss, wrt=(0, 1), has_aux=True)(
        params, x, y)
    g_only, aux_only = tape.grad(_mlp_loss, has_aux=True)(params, x, y)
    assert aux == aux_only and aux["steps"] == 7 and not isinstance(aux["mse"], Tensor)
    assert value == pytest.approx(aux["mse"]) and g["steps"] is None

    def leaf(path):
        def f(v):
            p = {**params, "head": tuple(params["head"])}
            if path == ("head", 0):
                p["head"] = (v, p["head"][1])
            elif path == ("head", 1):
                p["head"] = (p["head"][0], v)
            else:
                p[path[0]] = v
            return _mlp_loss(p, x, y)[0]
        return f

    for path, got in [(("W",), g["W"]), (("b",), g["b"]), (("head", 0), g["head"][0]),
                      (("head", 1), g["head"][1]), (("scale",), g["scale"])]:
        start = params[path[0]] if len(path) == 1 else params["head"][path[1]]
        np.testing.assert_allclose(got, numeric_grad(leaf(path), (start,), 0), rtol=1e-6,
                                   atol=1e-9)
        assert type(got) is type(start)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: _mlp_loss(params, v, y)[0], (x,), 0),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_only["W"], g["W"], rtol=0, atol=0)
    with pytest.raises(ShapeError, match="pair"):
        tape.grad(lambda v: np.sum(v), has_aux=True)(np.ones(2))


def test_gradient_of_an_unused_argument_is_zero():
    g = tape.grad(lambda x, y: np.sum(y * y), wrt=(0, 1))(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(g[0], np.zeros(2))
    np.testing.assert_array_equal(g[1], 2.0 * np.ones(3))
    assert tape.grad(lambda x: 3.0)(1.0) == 0.0


def test_getitem_accumulation_matches_the_rule():
    """The in-place scatter-add of reads is RULES["getitem"] without a zero array per read."""
    x0 = np.arange(12.0).reshape(3, 4)
    x = Tensor(x0, requires_grad=True)
    reads = [((1, 2), ("i", "i")), ((0,), ("i",)), ((1, 3), (":", ("s", True, True, False)))]
    total, expected = 0.0, np.zeros_like(x0)
    for idx, spec in reads:
        r = jitgrad.prims.primitives.PRIMITIVES["getitem"](x, *idx, index_spec=spec)
        weight = np.arange(1.0, 1.0 + np.size(r.value)).reshape(np.shape(r.value))
        total = total + np.sum(r * weight)
        expected += RULES["getitem"][0](weight, r.value, x0, *idx, index_spec=spec)
    total.backward()
    np.testing.assert_array_equal(x.grad, expected)


def test_tape_does_not_use_the_source_transform():
    """The tape is an independent oracle: each module of the package imports only the
    primitive and rule tables, the NumPy handlers, the errors and the tape's own modules."""
    paths = sorted(pathlib.Path(tape.__file__).parent.glob("*.py"))
    assert len(paths) > 1 and pathlib.Path(tape.__file__) in paths
    for path in paths:
        tree = ast.parse(path.read_text())
        relative = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level}
        assert relative <= {None, "errors", "rules"}, path.name
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert names.isdisjoint({"api", "parse", "reverse", "emit", "compile", "optimise",
                                 "runtime"}), path.name
        ours = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and not n.level and n.module.split(".")[0] == "jitgrad"}
        assert {m.split(".")[1] for m in ours} <= {"core", "prims", "lang", "tape"}, path.name


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _check_against_fd(f, args):
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    value, grads = tape.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(float(f(*args)), rel=1e-12)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(f, args, k), rtol=1e-6, atol=1e-8)
