"""Refusals: everything jitgrad does not support raises a clear, located error, never a guess.

For each construct: the exception type (`UnsupportedError`, `SignatureError`, `ShapeError`, all
`JitgradError`s), a message that names the construct, *when* it is raised (syntax-level refusals
when ``jitgrad.grad(f)`` is called, type-level ones at the first call), and for source-level
refusals the ``File "...", line N:`` header, the source line and a caret under the construct.
The functions live in ``refused_fns.py``; the expected line is the one carrying the marker
comment ``# refused: <tag>``, looked up in the file (never a hard-coded number).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np
import pytest
import refused_fns as R

import jitgrad
from jitgrad import JitgradError, ShapeError, SignatureError, UnsupportedError
from jitgrad.api import GradientCheckError

PATH = R.uses_try.__code__.co_filename
with open(PATH, encoding="utf-8") as _f:
    SOURCE_LINES = _f.read().splitlines()

V3 = np.array([1.0, -2.0, 3.0])
M22 = np.array([[2.0, 1.0], [1.0, 3.0]])


def marker_line(tag: str) -> int:
    """The 1-based line of refused_fns.py carrying ``# refused: <tag>`` (exactly one)."""
    pattern = re.compile(rf"# refused: {re.escape(tag)}(\s|$)")
    hits = [k + 1 for k, line in enumerate(SOURCE_LINES) if pattern.search(line)]
    assert len(hits) == 1, f"marker {tag!r} found on lines {hits}"
    return hits[0]


def assert_points_at(err: BaseException, tag: str, token: str | None = None) -> None:
    """``err`` shows the marked line: header with the right number, the line, a caret (under
    ``token`` when given)."""
    text = str(err)
    lineno = marker_line(tag)
    header = f'File "{PATH}", line {lineno}:'
    lines = text.splitlines()
    assert header in lines, f"expected {header!r} in:\n{text}"
    k = lines.index(header)
    source = SOURCE_LINES[lineno - 1].strip()
    assert lines[k + 1] == "    " + source, text
    caret = lines[k + 2]
    assert re.fullmatch(r" {4,}\^", caret), f"no caret line under the source in:\n{text}"
    if token is not None:
        col = len(caret) - 1 - 4
        assert source[col:].startswith(token), (
            f"caret at column {col} of {source!r}, expected it under {token!r}:\n{text}")


def test_path_is_the_refused_fns_file():
    here = os.path.dirname(os.path.abspath(__file__))
    assert os.path.samefile(PATH, os.path.join(here, "refused_fns.py"))


def test_error_hierarchy():
    for exc in (UnsupportedError, SignatureError, ShapeError, GradientCheckError):
        assert issubclass(exc, JitgradError)
    assert issubclass(SignatureError, TypeError)
    assert issubclass(ShapeError, ValueError)
    assert issubclass(GradientCheckError, AssertionError)
    assert jitgrad.UnsupportedError is UnsupportedError


# ----------------------------------------------------------------------------- decoration time


@dataclass(frozen=True)
class Fenced:
    """A function refused when ``jitgrad.grad(f)`` is called."""

    fn: str  # attribute of refused_fns
    message: str  # regex the message must match
    tag: str  # marker of the line the error points at
    token: str | None = None  # what the caret must be under (None: just a caret)
    exc: type = UnsupportedError


FENCED = [
    Fenced("uses_try", r"try/except is supported only around code that cannot raise \(the "
           r"compiled gradient does not catch exceptions\); here `1\.0 / x` \(a division",
           "try", "y = 1.0 / x"),
    Fenced("try_around_a_call", r"try/except is supported only around code that cannot "
           r"raise.*`math\.gamma\(x\)` \(a call that is not a NumPy function may raise\)",
           "try-call", "y = math.gamma"),
    Fenced("uses_nested_def", r"a decorator on a nested function is not supported",
           "nested-def", "def inner"),
    Fenced("uses_class", r"class definition is not supported", "class", "class Box"),
    Fenced("uses_inner_lambda", r"a lambda is not supported", "inner-lambda", "lambda"),
    Fenced("uses_list_comprehension", r"list comprehension is not supported; write a loop "
           r"into a preallocated array: `out = np.zeros\(n\)`", "listcomp", "[v for"),
    Fenced("uses_generator_expression", r"generator expression is not supported; write a loop "
           r"that accumulates", "genexp", "(x * k"),
    Fenced("uses_dict", r"a dict whose keys are not constants is not supported; jitgrad takes "
           r"dicts with constant keys", "dict", "{(\"a\", 1)"),
    Fenced("uses_walrus", r"the walrus operator here is not supported; jitgrad takes "
           r"`\(n := e\)` in an assignment", "walrus", "y := "),
    Fenced("uses_match", r"match is not supported", "match", "match"),
    Fenced("uses_kwargs", r"\*\*kwargs, positional-only or keyword-only "
           r"parameters without defaults: name its arguments", "varargs", "def"),
    Fenced("uses_kwonly", r"keyword-only", "kwonly", "def"),
    Fenced("is_generator", r"is_generator is a generator", "generator", "def"),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.fn) for c in FENCED])
def test_refused_at_decoration(case):
    fn = getattr(R, case.fn)
    with pytest.raises(case.exc) as info:
        jitgrad.grad(fn)
    assert re.search(case.message, info.value.message), str(info.value)
    assert_points_at(info.value, case.tag, case.token)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.fn) for c in FENCED[:6]])
def test_refused_at_decoration_in_every_form(case):
    """``@grad(wrt=...)``, ``grad(f, wrt)``, ``value_and_grad`` all read the source at once."""
    fn = getattr(R, case.fn)
    for make in (lambda f: jitgrad.grad(wrt=0)(f), lambda f: jitgrad.grad(f, wrt="x"),
                 jitgrad.value_and_grad, lambda f: jitgrad.value_and_grad(f, wrt=(0,))):
        with pytest.raises(case.exc, match=case.message):
            make(fn)


def test_function_without_source():
    with pytest.raises(UnsupportedError, match=r"source of no_source is not available"):
        jitgrad.grad(R.no_source)


def test_dynamic_lambda_has_no_source():
    fn = eval("lambda x: x * x")  # a lambda with no file behind it
    with pytest.raises(UnsupportedError, match="lambda"):
        jitgrad.grad(fn)


@pytest.mark.parametrize(("obj", "what"), [
    pytest.param(R.Model(2.0), r"not a plain Python function \(a Model\)", id="callable-object"),
    pytest.param(R.Model(2.0).loss, r"Model.loss is not a plain Python function \(a method\)",
                 id="bound-method"),
    # (a ufunc of one output is read as ``def sin(x): return np.sin(x)``: test_heldout_forms_b9c)
    pytest.param(np.divmod, r"not a plain Python function \(a ufunc\)", id="ufunc"),
    pytest.param(R.Model, r"not a plain Python function", id="class"),
])
def test_not_a_plain_function(obj, what):
    with pytest.raises(UnsupportedError, match=what):
        jitgrad.grad(obj)


def test_grad_of_a_function_defined_inside_reading_another():
    """A transform of a function defined inside the differentiated one is lifted (what it
    reads from the function around it passed as arguments: tests/test_autograd_forms.py);
    one that reads another function defined there is refused at the user's line, naming
    what it reads and what to write."""
    def loss(x):
        helper = lambda y: y ** 2
        inner = lambda y: np.sum(helper(y))
        return np.sum(jitgrad.grad(inner)(x) * x)

    with pytest.raises(UnsupportedError, match=r"a transform of `inner`, a function defined "
                                               r"inside the differentiated one, which reads "
                                               r"`helper` \(a function defined inside it too\)"):
        jitgrad.grad(loss)(np.ones(3))


def test_grad_of_a_non_callable_is_a_type_error():
    with pytest.raises(TypeError, match="needs a function"):
        jitgrad.GradFunction(3.5)


# ----------------------------------------------------------------------------- first call


@dataclass(frozen=True)
class Built:
    """A function accepted at decoration and refused when the first call builds its graph."""

    fn: str
    args: tuple
    message: str
    tag: str | None  # None: no location checked here
    token: str | None = None
    exc: type = UnsupportedError
    wrt: object = 0


BUILT = [
    Built("returns_array", (V3,), r"must return a scalar.*returns an array of rank 1",
          "returns-array", "return", ShapeError),
    Built("returns_tuple", (1.0,), r"must return a scalar.*returns a tuple", None,
          exc=ShapeError),
    Built("returns_nothing", (1.0,), r"returns nothing \(None\)", "returns-nothing", "def"),
    Built("returns_complex", (1.0,), r"returns a complex number: a gradient is of a real value "
          r"\(return abs\(z\) \*\* 2, z\.real or z\.imag\)", "returns-complex", "return"),
    Built("fancy_index", (V3, np.array([0, 2])), r"indexing with an integer array beside "
          r"None is not supported; one 1-D integer array reads rows \(`x\[idx\]`\), "
          "two read one entry per pair", "fancy-index", "idx"),
    Built("boolean_index", (V3,), r"indexing with a boolean mask of rank 2 on an array of rank "
          r"1 is not supported; keep the shape with `np.where\(mask, x, 0.0\)`", "bool-index",
          "x[x[:, None]"),
    Built("global_array", (V3,), r"writing into `WEIGHTS`, a global array",
          "global-array", "WEIGHTS"),
    Built("closure", (1.0,), r"the closure variable `scale` of type dict_keys", "closure", "scale"),
    Built("global_set", (1.0,), r"the global `LABELS` of type set", "global-set", "LABELS"),
    Built("print_as_value", (1.0,), r"print\(\.\.\.\) as a value is not supported; write "
          r"print\(\.\.\.\) as a statement of its own", "print-value", "print"),
    Built("printing_a_writing_call", (V3,), r"`fill_first\(y\)` inside print\(\.\.\.\); the "
          r"gradient leaves print\(\.\.\.\) out without evaluating its arguments",
          "print-call", "fill_first"),
    Built("printing_a_sort", (V3,), r"`y\.sort\(\)` inside print", "print-sort", "y.sort()"),
    Built("printing_a_draw", (V3,), r"`np\.random\.normal\(\)` inside print", "print-draw",
          "np.random"),
    Built("uses_del", (1.0,), r"del of an entry or an attribute \(jitgrad takes `del name`\)",
          "del", 'd["b"]'),
    Built("uses_with", (1.0,), r"a with statement \(jitgrad takes `with np.errstate",
          "with", "with"),
    Built("uses_string", (1.0,), r"arithmetic with a string", "string", "x + name"),
    Built("uses_fstring", (1.0,), r"comparing an f-string that formats a run-time value",
          "fstring", "label =="),
    Built("uses_hash", (1.0,), r"hash\(\) of a value known only at run time", "hash", "hash"),
    Built("uses_sorted_builtin", (V3,), r"sorted\(\) of an array or a run-time value outside "
          r"a `for` statement is not supported: use np\.sort\(x\)", "sorted-builtin",
          "sorted"),
    Built("math_comb", (1.5, 4), r"calling math.comb is not supported", "math-comb", "math.comb"),
    Built("gcd_ufunc", (1.5, 4), r"np.gcd is not supported", "gcd", "np.gcd"),
    Built("missing_numpy_name", (V3,), r"no_such_function does not exist", "missing-np",
          "np.no_such_function"),
    Built("recursive", (1.5, 3), r"recursion", "recursion", "recursive(x, n - 1)"),
    Built("rank_changing_loop", (V3,), r"`s` is a f64 before the loop and a f64\[:\] inside it",
          "rank-loop", "for", ShapeError),
    Built("rank_changing_branch", (V3, 1.0), r"`y` is a f64\[:\] on one branch and a f64 on "
          "the other", "rank-branch", "if", ShapeError),
    Built("array_condition", (V3,), r"truth value of an array is ambiguous", "array-condition",
          "x > 0.0"),
    Built("shift_operator", (1.0, 2), r"`<<` of a float \(NumPy takes integers and booleans\)",
          "lshift", "x << n"),
    Built("is_comparison", (1.0,), r"the comparison Is of two numbers or arrays \(jitgrad "
          r"takes `is` with None, classes, functions and objects\)", "is", "x is y"),
    Built("array_attribute", (V3,), r"the array attribute \.base is not supported", "attribute",
          "x.base"),
    Built("unpack_number", (np.array([1.0, 2.0]),), r"unpacking a number", "unpack-number",
          "a, b = x[0]"),
    Built("axis_out_of_bounds", (M22,), r"axis 2 is out of bounds for an array of dimension 2",
          "axis-bounds", "np.sum", ShapeError),
    Built("float_index", (V3,), r"an index must be an integer", "float-index", "1.0"),
    Built("too_many_indices", (V3,), r"too many indices for an array of rank 1",
          "too-many-indices", "x[0, 0]", ShapeError),
    Built("scalar_matmul", (np.ones((2, 2)), 1.5), r"matrix product of operands of "
          "rank 2 and 0", "scalar-matmul", "a @ b", wrt=(0, 1)),
    Built("calls_bad_helper", (1.0,), r"arithmetic with a string", "callee-string", "t * s"),
    Built("calls_hashing_helper", (1.0,), r"hash\(\) of a value known only at run time", "callee-hash",
          "hash"),
    Built("write_into_view", (V3,), r"writing into `y`, a view of another array that "
          r"jitgrad cannot follow .*a reshape of an array made before the loop", "view-write",
          "y[i, 0]"),
    Built("view_rebound_in_loop", (np.ones((3, 3)), V3), r"`u`, a view of `U` that this loop "
          "writes through, is taken again inside the loop", "view-rebound", "for"),
    Built("stale_view", (V3,), r"`y` shares memory with an array written in place after it "
          "was made", "stale-view", "y"),
    Built("loop_joins_two_arrays", (V3,), r"`fx` and `fxnew` name one array from the second "
          "iteration of this loop on", "joined-carries", "for _ in range(2)"),
    Built("loop_reads_view", (V3,), r"`row` is read in this loop and shares memory with an "
          "array the loop writes into", "loop-view", "for"),
    Built("undefined_name", (1.0,), r"NameError: name 'not_defined_anywhere' is not defined",
          "undefined-name", "not_defined_anywhere", JitgradError),
    # common idioms: the message names the construct and the form that works
    Built("appends_to_list", (V3,), r"changing the list `out` in place while another name .* "
          r"holds it too: jitgrad holds it by value, so the other would not see the change; "
          r"copy it first", "append", "out.append"),
    Built("masked_write_rank3", (np.ones((2, 2, 2)),), r"writing other than a number through a "
          r"boolean mask of rank 3 or more \(of the array's rank\) is not supported; write "
          r"`x = np\.where\(mask, value, x\)` instead", "mask-write", "y[y < 0.0]"),
    Built("uses_einsum_diagonal", (np.ones((2, 2, 2)),), r"np\.einsum with a letter three "
          r"times in one term \('iii'\): use np\.diagonal", "einsum-diagonal", "np.einsum"),
    Built("take_along_without_axis_rank", (M22, np.array([1, 0])), r"np\.take_along_axis: the "
          "index has rank 1, the array rank 2; they must match", "take-along",
          "np.take_along_axis", ShapeError),
    Built("put_along_into_a_view", (M22, np.array([[0], [1]])), r"np\.put_along_axis writes into "
          "an array it must name", "put-along", "np.put_along_axis"),
    Built("bitwise_and_float", (V3,), r"`&` of a float \(NumPy takes integers and booleans\)",
          "bitwise", None),
    Built("out_into_a_new_array", (V3,), r"out= must name an array \(`np\.exp\(x, out=x\)`\) "
          "or a view of one", "out-new", "np.empty(2)"),
    Built("writes_through_indices_beside_an_integer", (V3, np.array([0, 2, 4])), r"writing "
          r"through an integer-array index is not supported; write in a loop: `for k in "
          r"range\(idx\.shape\[0\]\): x\[idx\[k\]\] = v\[k\]`.*NumPy's `x\[idx\] \+= v` "
          "applies one update per index", "index-write-beside", "idx"),
    Built("matrix_index", (M22, np.zeros((2, 2), dtype=np.int64)), r"indexing with an "
          r"integer array beside other indices is not supported; one 1-D integer array reads "
          "rows", "matrix-index", "idx"),
    Built("uses_raise", (1.0,), r"raising `domain_error`: raise an exception class "
          r"\(ValueError, RuntimeError, or your own subclass of Exception\)", "raise",
          "domain_error"),
    Built("reraises", (1.0,), r"a bare `raise` and `raise \.\.\. from \.\.\.` are not "
          "supported", "bare-raise", "raise"),
    Built("raises_every_iteration", (1.0,), r"a raise on every path of an iteration of this "
          "loop is not supported", "raise-every-iteration", "for"),
    Built("calls_raising_helper_in_branch", (1.0,), r"a raise on every path of an inlined "
          "call", "raising-helper", "_always_raises"),
    Built("string_against_number", (1.0, "fast"), r"comparing the string 'fast' with a value "
          "that is not a string", "string-vs-number", "mode == x"),
    Built("reads_a_dict", (1.0,), r"indexing with a string \(\['w'\], a dict's key\) of a "
          r"value that is not a dict argument is not supported", "dict-key", '"w"'),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.fn) for c in BUILT])
def test_refused_at_first_call(case):
    g = jitgrad.grad(getattr(R, case.fn), wrt=case.wrt)  # accepted at decoration
    with pytest.raises(case.exc) as info:
        g(*case.args)
    err = info.value
    assert type(err) is case.exc, f"{type(err).__name__}: {err}"
    assert re.search(case.message, err.message), str(err)
    if case.tag is not None:
        assert_points_at(err, case.tag, case.token)
    # Not remembered as a success: the next call is refused again, with the same message.
    with pytest.raises(case.exc) as again:
        g(*case.args)
    assert str(again.value) == str(err)


def test_first_call_refusal_says_what_jitgrad_was_doing():
    with pytest.raises(UnsupportedError) as info:
        jitgrad.grad(R.uses_hash)(1.0)
    assert "During: building the graph of uses_hash" in str(info.value)


def test_refusal_in_a_helper_names_the_call_site():
    with pytest.raises(UnsupportedError) as info:
        jitgrad.grad(R.calls_hashing_helper)(1.0)
    call_line = marker_line("calls-hashing-helper")
    assert (f"During: building callee_with_hash, called at refused_fns.py:{call_line}"
            in str(info.value))


def test_refusal_is_per_signature():
    """A refusal for one signature does not poison others: the array version of
    ``array_condition`` is refused, the float version differentiates."""
    g = jitgrad.grad(R.array_condition)
    with pytest.raises(UnsupportedError):
        g(V3)
    assert g(2.0) == 0.0  # returns the constant 1.0
    assert g(-2.0) == 1.0  # returns np.sum(x) == x
    with pytest.raises(UnsupportedError):
        g(V3)


# Known bugs in the first-call refusals -------------------------------------------------------


@pytest.mark.parametrize(("fn", "args", "name", "tag"), [
    pytest.param("tensorinv_sum", (M22,), "tensorinv", "tensorinv", id="np.linalg.tensorinv"),
    pytest.param("poly_sum", (V3,), "poly", "poly", id="np.poly"),
    pytest.param("polyder_sum", (V3,), "polyder", "polyder", id="np.polyder"),
])
def test_unknown_numpy_function_refused_at_the_call(fn, args, name, tag):
    with pytest.raises(UnsupportedError) as info:
        jitgrad.grad(getattr(R, fn))(*args)
    assert re.search(rf"np\.\S*{name}\S* is not supported", info.value.message), str(info.value)
    assert_points_at(info.value, tag, "np.")


def test_returns_tuple_points_at_the_return():
    with pytest.raises(ShapeError) as info:
        jitgrad.grad(R.returns_tuple)(1.0)
    assert_points_at(info.value, "returns-tuple", "return")


def test_float_axis_refused():
    with pytest.raises(JitgradError) as info:
        jitgrad.grad(R.float_axis_vector)(V3)
    assert_points_at(info.value, "float-axis-vector")


def test_shapes_that_do_not_broadcast():
    with pytest.raises(ShapeError) as info:
        jitgrad.grad(R.broadcast_mismatch)(V3, np.ones(4))
    assert "broadcast" in str(info.value)
    assert_points_at(info.value, "broadcast")


# ----------------------------------------------------------------------------- signatures


def test_integer_in_wrt_is_refused_at_the_call():
    g = jitgrad.grad(R.plain, wrt=(0, 1))  # fine until called with an integer `n`
    with pytest.raises(SignatureError) as info:
        g(1.5, 3)
    err = info.value
    assert isinstance(err, TypeError)
    assert re.search(r"cannot differentiate with respect to argument 'n': it is an integer",
                     err.message)
    assert_points_at(err, "def-plain", "def")
    # the same call differentiating only x is fine: integers may be passed, not differentiated
    assert jitgrad.grad(R.plain, wrt=0)(1.5, 3) == 3.0


@pytest.mark.parametrize(("args", "what"), [
    pytest.param((1.5, True), "a bool", id="bool"),
    pytest.param((1.5, np.bool_(True)), "a bool", id="np.bool_"),
    pytest.param((1.5, np.int32(3)), "an integer", id="np.int32"),
    pytest.param((1.5, np.arange(3)), "an integer", id="int-array"),
    pytest.param((1.5, np.ones(3, dtype=bool)), "a bool", id="bool-array"),
])
def test_non_float_in_wrt(args, what):
    with pytest.raises(SignatureError, match=f"argument 'n': it is {what}"):
        jitgrad.grad(R.plain, wrt="n")(*args)


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(([(1.0, b"a"), 2.0], 2.0), r"item 1 of item 0 of argument 'x' is a bytes",
                 id="bytes-in-nested-list"),
    pytest.param(((1, 2), 2.0), r"argument 'x': it holds no float", id="ints-in-tuple"),
    pytest.param(((np.ones(3, dtype=np.float16), 1.0), 2.0), r"item 0 of argument 'x' is an "
                 r"array of dtype float16, which Numba cannot compile", id="float16-in-tuple"),
    pytest.param(((np.float16(1.0), 1.0), 2.0), r"dtype float16", id="float16-in-tuple"),
    pytest.param(("1.0", 2.0), r"argument 'x': it is a str \(a switch the gradient is built "
                 r"for\)", id="str"),
    pytest.param(({1: 1.0, "w": 2.0}, 2.0), r"argument 'x' is a dict whose keys are not all "
                 r"strings", id="dict-mixed-keys"),
    pytest.param((None, 2.0), r"argument 'x': it is None", id="None"),
    pytest.param((np.array([1.0, None]), 2.0), r"dtype object", id="object-array"),
])
def test_argument_types_refused_at_the_call(args, message):
    g = jitgrad.grad(R.plain)
    with pytest.raises(SignatureError, match=message):
        g(*args)


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    pytest.param((1.0,), {}, r"plain\(\): missing a required argument: 'n'", id="too-few"),
    pytest.param((1.0, 2.0, 3.0), {}, r"plain\(\): too many positional arguments",
                 id="too-many"),
    pytest.param((), {}, r"missing a required argument", id="none"),
    pytest.param((1.0,), {"m": 2.0}, r"plain\(\)", id="unknown-keyword"),
    pytest.param((1.0, 2.0), {"x": 2.0}, r"multiple values for argument 'x'", id="twice"),
])
def test_wrong_number_of_arguments(args, kwargs, message):
    with pytest.raises(SignatureError, match=message):
        jitgrad.grad(R.plain)(*args, **kwargs)


@pytest.mark.parametrize(("wrt", "message"), [
    pytest.param("m", r"plain has no argument named 'm' \(its arguments: x, n\)", id="missing"),
    pytest.param(2, r"wrt=2 is out of range: plain takes 2 arguments", id="range"),
    pytest.param(-3, r"wrt=-3 is out of range", id="negative-range"),
    pytest.param((0, "q"), r"no argument named 'q'", id="missing-in-tuple"),
    pytest.param(True, r"wrt must name arguments by position or name, got True", id="bool"),
    pytest.param(1.0, r"wrt must name arguments by position or name, got 1.0", id="float"),
    pytest.param((), r"wrt is empty", id="empty"),
])
def test_bad_wrt_refused_at_decoration(wrt, message):
    for make in (lambda: jitgrad.grad(R.plain, wrt=wrt),
                 lambda: jitgrad.grad(wrt=wrt)(R.plain),
                 lambda: jitgrad.value_and_grad(R.plain, wrt=wrt)):
        with pytest.raises(SignatureError, match=message):
            make()


def test_check_grad_with_nothing_to_differentiate():
    with pytest.raises(SignatureError, match="wrt is empty"):
        jitgrad.check_grad(R.plain, 3, 2)
