"""The conformance table for issue #43: what jitgrad should differentiate.

Each row is one feature of one of three public surfaces:

- "numba-python" / "numba-numpy": Numba's reference pages "Supported Python features"
  (docs/source/reference/pysupported.rst) and "Supported NumPy features"
  (numpysupported.rst); `section` is the page's heading.
- "autograd-numpy" / "autograd-scipy": every function HIPS/autograd gives a VJP
  (autograd/numpy/numpy_vjps.py, numpy_jvps.py, linalg.py, fft.py, autograd/scipy/);
  `section` names the file and group.
- "python": plain Python used around numbers.

`kind` is what jitgrad should do:
  "differentiates"  the gradient matches central finite differences;
  "passes through"  the feature carries no derivative (strings, I/O, integer bit tricks,
                    random draws...) inside a function that is otherwise differentiable;
                    the gradient still matches finite differences;
  "no derivative"   the feature's output is piecewise constant (floor, argmax, sign,
                    comparisons): jitgrad should give it a zero gradient, as JAX does
                    (the probes mix it with a differentiable part, so the whole gradient
                    still matches finite differences), or refuse with a reason.

`args()` returns a fresh tuple each call; the points are away from kinks and domain edges.
Run the table with tests/conformance_run.py.
"""

from __future__ import annotations

import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from numba import types as nbt
from numba.typed import Dict as TDict
from numba.typed import List as TList

from tests import conformance_fns as F

D, P, N = "differentiates", "passes through", "no derivative"
NP, NN, AN, AS, PY = "numba-python", "numba-numpy", "autograd-numpy", "autograd-scipy", "python"
PIECEWISE = "piecewise constant output"


@dataclass(frozen=True)
class Row:
    id: str
    source: str
    section: str
    feature: str
    fn: Callable
    args: Callable[[], tuple]
    wrt: Any = 0
    kind: str = D
    reason: str = ""
    opts: dict = field(default_factory=dict, hash=False, compare=False)   # rtol, fd_eps


# ---- argument factories -------------------------------------------------------------

class Fresh:
    """An argument made anew for every call (generators, typed containers, buffers)."""

    def __init__(self, make):
        self.make = make


def _copy(v):
    if isinstance(v, Fresh):
        return v.make()
    if isinstance(v, np.ndarray):
        return v.copy()
    if isinstance(v, tuple):
        return tuple(_copy(e) for e in v)
    if isinstance(v, list):
        return [_copy(e) for e in v]
    if isinstance(v, dict):
        return {k: _copy(e) for k, e in v.items()}
    return v


def A(*vals):
    return lambda: tuple(_copy(v) for v in vals)


def S(v):
    return A(float(v))


_a = np.array
V = _a([0.35, 0.72, 0.46, 0.91])                 # distinct, in (0, 1), away from 0.5
V2 = _a([0.21, 0.58, 0.33, 0.84])
V3 = _a([0.35, 0.72, 0.46])
V3B = _a([0.62, -0.27, 0.81])
V6 = _a([0.35, 0.72, 0.46, 0.91, 0.63, 0.28])
MP = _a([[0.35, 0.72, 0.46], [0.91, 0.63, 0.28], [0.55, 0.82, 0.17]])     # positive entries
MI = _a([[1.2, 0.3, -0.2], [0.1, 0.9, 0.4], [-0.3, 0.2, 1.1]])            # well conditioned
MI2 = _a([[0.8, -0.1, 0.3], [0.2, 1.3, 0.1], [0.0, 0.4, 0.9]])
M23 = _a([[0.35, 0.72, 0.46], [0.91, 0.63, 0.28]])
M24 = _a([[0.15, 0.52, 0.66, 0.31], [0.87, 0.24, 0.58, 0.43]])
M32 = M23.T.copy()
M34 = _a([[0.35, 0.72, 0.46, 0.12], [0.91, 0.63, 0.28, 0.77], [0.55, 0.82, 0.17, 0.41]])
M43 = M34.T.copy()
M42 = _a([[0.3, 0.8], [0.6, 0.1], [0.9, 0.4], [0.2, 0.7]])
R14 = V.reshape(1, 4).copy()
T234 = (np.arange(24.0).reshape(2, 3, 4) * 0.37 % 1.0) + 0.05
T233 = np.stack([MI, MI2])
BANDED = _a([[0.0, 0.2, 0.3, 0.1], [2.0, 2.5, 1.8, 2.2], [0.3, 0.1, 0.2, 0.0]])

_ROWS: list[Row] = []


def r(feature, fn, args, kind=D, wrt=0, reason="", **opts):
    return (feature, fn, args, kind, wrt, reason, opts)


def block(source, section, rows):
    for feature, fn, args, kind, wrt, reason, opts in rows:
        if kind == N and not reason:
            reason = PIECEWISE
        opts = dict(opts)
        rid = opts.pop("id", None) or fn.__name__.replace("_", "-")
        _ROWS.append(Row(rid, source, section, feature, fn, args, wrt, kind, reason, opts))


def _tlist():
    lst = TList()
    lst.append(1.0)
    lst.append(2.5)
    return lst


def _tdict():
    d = TDict.empty(key_type=nbt.unicode_type, value_type=nbt.float64)
    d["w"] = 2.0
    return d


def _rec():
    return np.array([(2.0, 3)], dtype=F.REC_T)[0]


def _record():
    return np.rec.array([(2.0, 3)], dtype=F.REC_T)[0]


def _rng():
    return np.random.default_rng(0)


# =====================================================================================
# numba-python: "Supported Python features"
# =====================================================================================

block(NP, "Language / Constructs", [
    r("if .. elif .. else", F.npy_if_elif_else, S(0.7)),
    r("while", F.npy_while, S(0.7)),
    r("for .. in range", F.npy_for_range, A(V)),
    r("for .. in array", F.npy_for_in_array, A(V)),
    r("break", F.npy_break, A(V)),
    r("continue", F.npy_continue, A(V)),
    r("basic generator: yield", F.npy_yield, S(0.7)),
    r("assert", F.npy_assert, S(0.7)),
    r("assert with message", F.npy_assert_msg, A(V)),
    r("try .. except (bare)", F.npy_try_except_bare, S(0.7)),
    r("try .. except Exception", F.npy_try_except_exception, S(0.7)),
    r("try .. except .. else .. finally", F.npy_try_except_else_finally, S(0.7)),
    r("try .. finally", F.npy_try_finally, S(0.7)),
    r("raise SomeException", F.npy_raise_class, S(0.7)),
    r("raise SomeException(<arguments>)", F.npy_raise_args, A(V)),
    r("raise under a run-time condition", F.npy_raise_runtime_cond, A(V)),
    r("raise of an exception class of the user's", F.npy_raise_user_class, S(0.7)),
    r("with numba.objmode()", F.npy_objmode, S(0.7), P),
    r("list comprehension", F.npy_list_comprehension, A(V)),
    r("array comprehension (np.array of nested list comprehension)", F.npy_array_comprehension_nested, A(V)),
    r("list comprehension summed", F.npy_list_comprehension_sum, A(V)),
    r("nested list comprehension", F.npy_nested_list_comprehension, A(V)),
])

block(NP, "Language / Functions", [
    r("function call with named arguments", F.npy_call_named, S(0.7)),
    r("argument with default value", F.npy_call_default, S(0.7)),
    r("*args (a tuple)", F.npy_call_star_args, S(0.7)),
    r("locally defined inner function", F.npy_inner_function, S(0.7)),
    r("closure variable in inner function", F.npy_closure_variable, S(0.7)),
    r("nonlocal assigned once in inner function", F.npy_nonlocal_once, S(0.7)),
    r("functions as arguments", F.npy_function_as_argument, S(0.7)),
    r("recursive calls", F.npy_recursion, S(0.7)),
    r("recursive calls over an array", F.npy_recursion_array, A(V)),
])

block(NP, "Language / Generators", [
    r("generator with next()", F.npy_generator_next, S(0.7)),
])

block(NP, "Built-in types / int, bool", [
    r("int arithmetic", F.npy_int_arith, S(0.7), P),
    r("int .real .imag .conjugate()", F.npy_int_attrs, S(0.7), P),
    r("bool truth values", F.npy_bool_truth, S(0.7), P),
])

block(NP, "Built-in types / float, complex", [
    r("float .real", F.npy_float_real, S(0.7)),
    r("float .imag", F.npy_float_imag, S(0.7)),
    r("float .conjugate()", F.npy_float_conjugate, S(0.7)),
    r("complex arithmetic", F.npy_complex_arith, S(0.7)),
    r("complex .conjugate()", F.npy_complex_conjugate, S(0.7)),
    r("abs of complex", F.npy_complex_abs, S(0.7)),
])

block(NP, "Built-in types / str", [
    r("str + (concatenation)", F.npy_str_concat, S(0.7), P),
    r("str * (repetition)", F.npy_str_repeat, S(0.7), P),
    r("str in / .contains()", F.npy_str_in, S(0.7), P),
    r("str comparison", F.npy_str_compare, S(0.7), P),
    r("str(int)", F.npy_str_of_int, S(0.7), P),
    r("str .strip() .upper() .find()", F.npy_str_strip_upper_find, S(0.7), P),
    r("str .split() .join()", F.npy_str_split_join, S(0.7), P),
    r("str .startswith() .endswith()", F.npy_str_startswith, S(0.7), P),
    r("str .replace() .count()", F.npy_str_replace_count, S(0.7), P),
    r("str .isdigit() .isalpha()", F.npy_str_is_methods, S(0.7), P),
    r("f-string without format spec", F.npy_str_fstring, S(0.7), P),
    r("str slice", F.npy_str_slice, S(0.7), P),
])

block(NP, "Built-in types / tuple", [
    r("tuple construction", F.npy_tuple_construct, S(0.7)),
    r("tuple unpacking", F.npy_tuple_unpack, S(0.7)),
    r("comparison between tuples", F.npy_tuple_compare, S(0.7), P),
    r("iteration over a homogeneous tuple", F.npy_tuple_iterate, S(0.7)),
    r("tuple indexing with a run-time index", F.npy_tuple_index_runtime, S(0.7)),
    r("addition (concatenation) between tuples", F.npy_tuple_concat, S(0.7)),
    r("slicing tuples with a constant slice", F.npy_tuple_const_slice, S(0.7)),
    r("the index method on tuples", F.npy_tuple_index_method, S(0.7), P),
    r("heterogeneous tuple, constant index", F.npy_tuple_heterogeneous, S(0.7)),
    r("literal_unroll over a heterogeneous tuple", F.npy_literal_unroll, S(0.7)),
])

block(NP, "Built-in types / list", [
    r("list construction", F.npy_list_literal, S(0.7)),
    r("list.append in a loop", F.npy_list_append_loop, A(V)),
    r("list of arrays", F.npy_list_of_arrays, A(V)),
    r("list setitem", F.npy_list_setitem, S(0.7)),
    r("list.pop", F.npy_list_pop, S(0.7)),
    r("list.insert", F.npy_list_insert, S(0.7)),
    r("list.extend", F.npy_list_extend, S(0.7)),
    r("list.reverse", F.npy_list_reverse, S(0.7)),
    r("list.sort", F.npy_list_sort, A(V)),
    r("list slice", F.npy_list_slice, S(0.7)),
    r("len, list.index, list.count", F.npy_list_len_index_count, S(0.7), P),
    r("reflected list argument", F.npy_list_argument, A(0.7, [1.0, 2.0, 3.0])),
    r("in on a list", F.npy_list_in, S(0.7), P),
    r("list initial values", F.npy_list_initial_value, S(0.7)),
    r("typed.List created inside", F.npy_typed_list_inside, A(V)),
    r("typed.List argument", F.npy_typed_list_argument, A(0.7, Fresh(_tlist))),
    r("nested typed.List", F.npy_typed_list_nested, A(V)),
    r("literal list", F.npy_literal_list, S(0.7), P),
])

block(NP, "Built-in types / set", [
    r("set literal and in", F.npy_set_in, S(0.7), P),
    r("set.add and len", F.npy_set_add_len, S(0.7), P),
    r("set of float values (len)", F.npy_set_of_values, A(V), N, reason="set membership of values is piecewise constant"),
    r("typed.Set", F.npy_typed_set, S(0.7), P),
])

block(NP, "Built-in types / Typed Dict", [
    r("dict() and setitem", F.npy_dict_empty_setitem, S(0.7)),
    r("{} with string keys", F.npy_dict_braces, S(0.7)),
    r("dict with int keys filled in a loop", F.npy_dict_int_keys_loop, A(V)),
    r("dict(iterable)", F.npy_dict_from_iterable, S(0.7)),
    r("dictionary comprehension", F.npy_dict_comprehension, A(V)),
    r("typed.Dict.empty(key_type, value_type)", F.npy_typed_dict_empty, A(V)),
    r("typed.Dict argument", F.npy_typed_dict_argument, A(0.7, Fresh(_tdict))),
    r("dict .items()", F.npy_dict_items, S(0.7)),
    r("dict .get()", F.npy_dict_get, S(0.7)),
    r("in and len on a dict", F.npy_dict_in_len, S(0.7), P),
    r("dict .pop()", F.npy_dict_pop, S(0.7)),
    r("heterogeneous literal string key dictionary", F.npy_literal_str_key_dict, S(0.7)),
])

block(NP, "Built-in types / None", [
    r("None identity testing (optional)", F.npy_none_identity, S(0.7)),
])

block(NP, "Built-in types / bytes, bytearray, memoryview", [
    r("bytes indexing and len", F.npy_bytes_len, A(0.7, b"abc"), P),
    r("bytearray iteration", F.npy_bytearray_iter, A(0.7, Fresh(lambda: bytearray(b"ab"))), P),
    r("memoryview len and ndim", F.npy_memoryview, A(0.7, Fresh(lambda: memoryview(np.arange(3.0)))), P),
])

block(NP, "Built-in functions", [
    r("abs", F.npy_abs, S(0.7)),
    r("bool", F.npy_bool, S(0.7), N),
    r("chr, ord", F.npy_chr_ord, S(0.7), P),
    r("complex", F.npy_complex_builtin, S(0.7)),
    r("divmod", F.npy_divmod, S(0.7)),
    r("enumerate", F.npy_enumerate, A(V)),
    r("filter", F.npy_filter, A(V)),
    r("float", F.npy_float_builtin, S(0.7), P),
    r("getattr with a string literal", F.npy_getattr, S(0.7)),
    r("hasattr", F.npy_hasattr, A(V), P),
    r("hash", F.npy_hash, S(0.7), P),
    r("int (one argument)", F.npy_int_builtin, S(0.7), N),
    r("iter, next (one argument)", F.npy_iter_next, A(V)),
    r("isinstance", F.npy_isinstance, S(0.7), P),
    r("len", F.npy_len, A(V), P),
    r("min, max of numbers", F.npy_min_max, S(0.7)),
    r("min, max of an array", F.npy_min_max_array, A(V)),
    r("map", F.npy_map, A(V)),
    r("print (numbers and strings)", F.npy_print, S(0.7), P),
    r("range with a negative step", F.npy_range_step, A(V)),
    r("repr", F.npy_repr, S(0.7), P),
    r("round", F.npy_round, S(0.7), N),
    r("round with ndigits", F.npy_round_ndigits, S(0.7), N),
    r("sorted", F.npy_sorted, A(V)),
    r("sum", F.npy_sum, A(V)),
    r("str", F.npy_str_builtin, S(0.7), P),
    r("type (one argument)", F.npy_type, S(0.7), P),
    r("zip", F.npy_zip, A(V, V2)),
])

block(NP, "Standard library modules / array", [
    r("array.array indexing and len", F.npy_array_array, A(0.7, Fresh(lambda: array.array("d", [2.0, 3.0]))), P),
])

block(NP, "Standard library modules / cmath", [
    r("cmath.acos", F.npy_cmath_acos, S(0.7)),
    r("cmath.acosh", F.npy_cmath_acosh, S(1.7)),
    r("cmath.asin", F.npy_cmath_asin, S(0.7)),
    r("cmath.asinh", F.npy_cmath_asinh, S(0.7)),
    r("cmath.atan", F.npy_cmath_atan, S(0.7)),
    r("cmath.atanh", F.npy_cmath_atanh, S(0.7)),
    r("cmath.cos", F.npy_cmath_cos, S(0.7)),
    r("cmath.cosh", F.npy_cmath_cosh, S(0.7)),
    r("cmath.exp", F.npy_cmath_exp, S(0.7)),
    r("cmath.isfinite", F.npy_cmath_isfinite, S(0.7), N),
    r("cmath.isinf", F.npy_cmath_isinf, S(0.7), N),
    r("cmath.isnan", F.npy_cmath_isnan, S(0.7), N),
    r("cmath.log", F.npy_cmath_log, S(0.7)),
    r("cmath.log10", F.npy_cmath_log10, S(0.7)),
    r("cmath.phase", F.npy_cmath_phase, S(0.7)),
    r("cmath.polar", F.npy_cmath_polar, S(0.7)),
    r("cmath.rect", F.npy_cmath_rect, S(0.7)),
    r("cmath.sin", F.npy_cmath_sin, S(0.7)),
    r("cmath.sinh", F.npy_cmath_sinh, S(0.7)),
    r("cmath.sqrt", F.npy_cmath_sqrt, S(0.7)),
    r("cmath.tan", F.npy_cmath_tan, S(0.7)),
    r("cmath.tanh", F.npy_cmath_tanh, S(0.7)),
])

block(NP, "Standard library modules / collections", [
    r("namedtuple: named constructor parameters, attribute access", F.npy_namedtuple, S(0.7)),
    r("namedtuple: positional, indexing, unpacking", F.npy_namedtuple_index, S(0.7)),
])

block(NP, "Standard library modules / ctypes", [
    r("calling a ctypes function (libm cos)", F.npy_ctypes_call, S(0.7)),
])

block(NP, "Standard library modules / enum", [
    r("enum.Enum", F.npy_enum, S(0.7), P),
    r("enum.IntEnum", F.npy_intenum, S(0.7), P),
])

block(NP, "Standard library modules / math", [
    r("math.acos", F.npy_math_acos, S(0.7)),
    r("math.acosh", F.npy_math_acosh, S(1.7)),
    r("math.asin", F.npy_math_asin, S(0.7)),
    r("math.asinh", F.npy_math_asinh, S(0.7)),
    r("math.atan", F.npy_math_atan, S(0.7)),
    r("math.atan2", F.npy_math_atan2, S(0.7)),
    r("math.atanh", F.npy_math_atanh, S(0.7)),
    r("math.ceil", F.npy_math_ceil, S(0.7), N),
    r("math.copysign", F.npy_math_copysign, S(0.7)),
    r("math.cos", F.npy_math_cos, S(0.7)),
    r("math.cosh", F.npy_math_cosh, S(0.7)),
    r("math.degrees", F.npy_math_degrees, S(0.7)),
    r("math.erf", F.npy_math_erf, S(0.7)),
    r("math.erfc", F.npy_math_erfc, S(0.7)),
    r("math.exp", F.npy_math_exp, S(0.7)),
    r("math.exp2", F.npy_math_exp2, S(0.7)),
    r("math.expm1", F.npy_math_expm1, S(0.7)),
    r("math.fabs", F.npy_math_fabs, S(0.7)),
    r("math.floor", F.npy_math_floor, S(1.7), N),
    r("math.frexp", F.npy_math_frexp, S(2.7)),
    r("math.gamma", F.npy_math_gamma, S(1.7)),
    r("math.gcd", F.npy_math_gcd, S(0.7), P),
    r("math.hypot", F.npy_math_hypot, S(0.7)),
    r("math.isfinite", F.npy_math_isfinite, S(0.7), N),
    r("math.isinf", F.npy_math_isinf, S(0.7), N),
    r("math.isnan", F.npy_math_isnan, S(0.7), N),
    r("math.ldexp", F.npy_math_ldexp, S(0.7)),
    r("math.lgamma", F.npy_math_lgamma, S(1.7)),
    r("math.log", F.npy_math_log, S(0.7)),
    r("math.log2", F.npy_math_log2, S(0.7)),
    r("math.log10", F.npy_math_log10, S(0.7)),
    r("math.log1p", F.npy_math_log1p, S(0.7)),
    r("math.nextafter", F.npy_math_nextafter, S(0.7)),
    r("math.pow", F.npy_math_pow, S(0.7)),
    r("math.radians", F.npy_math_radians, S(0.7)),
    r("math.sin", F.npy_math_sin, S(0.7)),
    r("math.sinh", F.npy_math_sinh, S(0.7)),
    r("math.sqrt", F.npy_math_sqrt, S(0.7)),
    r("math.tan", F.npy_math_tan, S(0.7)),
    r("math.tanh", F.npy_math_tanh, S(0.7)),
    r("math.trunc", F.npy_math_trunc, S(1.7), N),
    r("math.pi, math.e", F.npy_math_constants, S(0.7)),
])

block(NP, "Standard library modules / operator", [
    r("operator.add", F.npy_op_add, S(0.7)),
    r("operator.and_", F.npy_op_and, S(0.7), N),
    r("operator.eq", F.npy_op_eq, S(0.7), N),
    r("operator.floordiv", F.npy_op_floordiv, S(0.7), N),
    r("operator.ge", F.npy_op_ge, S(0.7), N),
    r("operator.gt", F.npy_op_gt, S(0.7), N),
    r("operator.iadd", F.npy_op_iadd, S(0.7)),
    r("operator.iand", F.npy_op_iand, S(0.7), P),
    r("operator.ifloordiv", F.npy_op_ifloordiv, S(0.7), N),
    r("operator.ilshift", F.npy_op_ilshift, S(0.7), P),
    r("operator.imatmul", F.npy_op_imatmul, A(MI, MI2)),
    r("operator.imod", F.npy_op_imod, S(0.7)),
    r("operator.imul", F.npy_op_imul, S(0.7)),
    r("operator.invert", F.npy_op_invert, S(0.7), P),
    r("operator.ior", F.npy_op_ior, S(0.7), P),
    r("operator.ipow", F.npy_op_ipow, S(0.7)),
    r("operator.irshift", F.npy_op_irshift, S(0.7), P),
    r("operator.isub", F.npy_op_isub, S(0.7)),
    r("operator.itruediv", F.npy_op_itruediv, S(0.7)),
    r("operator.ixor", F.npy_op_ixor, S(0.7), P),
    r("operator.le", F.npy_op_le, S(0.7), N),
    r("operator.lshift", F.npy_op_lshift, S(0.7), P),
    r("operator.lt", F.npy_op_lt, S(0.7), N),
    r("operator.matmul", F.npy_op_matmul, A(V3, MI)),
    r("operator.mod", F.npy_op_mod, S(0.7)),
    r("operator.mul", F.npy_op_mul, S(0.7)),
    r("operator.ne", F.npy_op_ne, S(0.7), N),
    r("operator.neg", F.npy_op_neg, S(0.7)),
    r("operator.not_", F.npy_op_not, S(0.7), N),
    r("operator.or_", F.npy_op_or, S(0.7), N),
    r("operator.pos", F.npy_op_pos, S(0.7)),
    r("operator.pow", F.npy_op_pow, S(0.7)),
    r("operator.rshift", F.npy_op_rshift, S(0.7), P),
    r("operator.sub", F.npy_op_sub, S(0.7)),
    r("operator.truediv", F.npy_op_truediv, S(0.7)),
    r("operator.xor", F.npy_op_xor, S(0.7), P),
])

block(NP, "Standard library modules / functools", [
    r("functools.reduce with initializer", F.npy_functools_reduce, A(V)),
])

block(NP, "Standard library modules / random", [
    r("random.seed, random.random", F.npy_random_random, S(0.7), P),
    r("random.gauss", F.npy_random_gauss, S(0.7), P),
    r("random.uniform", F.npy_random_uniform, S(0.7), P),
    r("random.randint", F.npy_random_randint, S(0.7), P),
    r("random.randrange", F.npy_random_randrange, S(0.7), P),
    r("random.getrandbits", F.npy_random_getrandbits, S(0.7), P),
    r("random.shuffle of an array", F.npy_random_shuffle, S(0.7), P),
    r("random.*variate, triangular", F.npy_random_distributions, S(0.7), P),
])

block(NP, "Standard library modules / heapq", [
    r("heapq.heapify, heapq.heappop", F.npy_heapq_heapify_heappop, A(V)),
    r("heapq.heappush", F.npy_heapq_heappush, A(V)),
    r("heapq.heappushpop", F.npy_heapq_heappushpop, A(V)),
    r("heapq.heapreplace", F.npy_heapq_heapreplace, A(V)),
    r("heapq.nlargest", F.npy_heapq_nlargest, A(V)),
    r("heapq.nsmallest", F.npy_heapq_nsmallest, A(V)),
])


# =====================================================================================
# numba-numpy: "Supported NumPy features"
# =====================================================================================

_F32 = {"rtol": 1e-3, "fd_eps": 1e-3}

block(NN, "Scalar types", [
    r("integers: np.int64(x)", F.nnp_scalar_int64, S(0.7), N),
    r("booleans: np.bool_", F.nnp_scalar_bool, S(0.7), N),
    r("real numbers: np.float64", F.nnp_scalar_float64, S(0.7)),
    r("real numbers: np.float32", F.nnp_scalar_float32, S(0.7), **_F32),
    r("complex numbers: np.complex128", F.nnp_scalar_complex128, S(0.7)),
    r("datetimes and timedeltas", F.nnp_scalar_datetime, A(0.7, np.array(["2020-01-01", "2020-01-04"], dtype="datetime64[D]")), P),
    r("view(np.<dtype>) bitcast", F.nnp_scalar_view_bitcast, S(0.7), N),
    r("structured scalar: member lookup with a constant string", F.nnp_structured_scalar_read, A(0.7, Fresh(_rec)), P),
    r("structured scalar: attribute access", F.nnp_structured_scalar_attr, A(0.7, Fresh(_record)), P),
])

block(NN, "Array types / Array access", [
    r("iteration over a 2-D array", F.nnp_iterate_2d, A(MP)),
    r("basic indexing and slicing", F.nnp_basic_index_slice, A(MP)),
    r("None / np.newaxis indices", F.nnp_newaxis, A(V)),
    r("fancy indexing: one integer array", F.nnp_fancy_one_array, A(V, np.array([0, 2, 2]))),
    r("fancy indexing: multiple array indices", F.nnp_fancy_two_arrays, A(MP, np.array([0, 1, 2]), np.array([2, 0, 2]))),
    r("fancy indexing: multidimensional index array", F.nnp_fancy_multidim_index, A(V, np.array([[0, 1], [2, 2]]))),
    r("fancy indexing: array beside a slice", F.nnp_fancy_with_slice, A(MP, np.array([0, 2]))),
    r("boolean mask indexing", F.nnp_bool_mask, A(V)),
    r("setitem through a slice", F.nnp_setitem_slice, A(V)),
    r("setitem through an integer array", F.nnp_setitem_fancy, A(V, np.array([0, 2, 4]))),
    r("setitem through a boolean mask", F.nnp_setitem_mask, A(V)),
    r("boolean mask over the rows beside an integer", F.nnp_mask_rows_and_column, A(MP)),
    r("boolean mask beside a slice (columns)", F.nnp_mask_columns, A(M34)),
    r("setitem through a boolean mask beside an integer", F.nnp_setitem_mask_column, A(MP)),
    r("boolean mask over two leading axes beside a slice, read and written",
      F.nnp_mask_leading_axes, A(T234)),
    r("Ellipsis index", F.nnp_ellipsis, A(MP)),
])

block(NN, "Array types / Structured array access", [
    r("structured array: setitem and getitem of a field", F.nnp_structured_array_write, S(0.7)),
])

block(NN, "Array types / Attributes", [
    r("ndarray.dtype", F.nnp_attr_dtype, A(V)),
    r("ndarray.flags", F.nnp_attr_flags, A(V)),
    r("ndarray.flat iteration", F.nnp_attr_flat_iter, A(MP)),
    r("ndarray.flat indexing", F.nnp_attr_flat_index, A(MP)),
    r("ndarray.itemsize, ndarray.nbytes", F.nnp_attr_itemsize_nbytes, A(V)),
    r("ndarray.ndim", F.nnp_attr_ndim, A(V)),
    r("ndarray.shape, ndarray.size", F.nnp_attr_shape_size, A(M23)),
    r("ndarray.strides", F.nnp_attr_strides, A(MP)),
    r("ndarray.T", F.nnp_attr_T, A(M23)),
    r("ndarray.real", F.nnp_attr_real, A(V)),
    r("ndarray.imag", F.nnp_attr_imag, A(V)),
])

block(NN, "Array types / Calculation", [
    r("ndarray.all, ndarray.any", F.nnp_m_all_any, A(V), N),
    r("ndarray.clip", F.nnp_m_clip, A(V)),
    r("ndarray.conj", F.nnp_m_conj, A(V)),
    r("ndarray.conjugate", F.nnp_m_conjugate, A(V)),
    r("ndarray.cumprod", F.nnp_m_cumprod, A(V)),
    r("ndarray.cumsum", F.nnp_m_cumsum, A(V)),
    r("ndarray.max", F.nnp_m_max, A(V)),
    r("ndarray.mean", F.nnp_m_mean, A(V)),
    r("ndarray.min", F.nnp_m_min, A(V)),
    r("ndarray.nonzero", F.nnp_m_nonzero, A(V)),
    r("ndarray.prod", F.nnp_m_prod, A(V)),
    r("ndarray.std", F.nnp_m_std, A(V)),
    r("ndarray.take", F.nnp_m_take, A(V)),
    r("ndarray.var", F.nnp_m_var, A(V)),
    r("np.prod", F.nnp_f_prod, A(V)),
    r("np.cumprod", F.nnp_f_cumprod, A(V)),
    r("np.std, np.var", F.nnp_f_std_var, A(V)),
    r("np.take", F.nnp_f_take, A(V)),
])

block(NN, "Array types / Other methods", [
    r("ndarray.argmax", F.nnp_m_argmax, A(V), N),
    r("ndarray.argmin", F.nnp_m_argmin, A(V), N),
    r("ndarray.argmax with axis", F.nnp_m_argmax_axis, A(MP), N),
    r("np.argpartition", F.nnp_f_argpartition, A(V), N),
    r("ndarray.argsort", F.nnp_m_argsort, A(V), N),
    r("np.argsort with kind", F.nnp_m_argsort_kind, A(V), N),
    r("ndarray.astype", F.nnp_m_astype, A(V)),
    r("ndarray.copy", F.nnp_m_copy, A(V)),
    r("ndarray.dot", F.nnp_m_dot, A(V3, MI)),
    r("ndarray.flatten", F.nnp_m_flatten, A(M23)),
    r("ndarray.item", F.nnp_m_item, A(V)),
    r("np.ptp", F.nnp_m_ptp, A(V)),
    r("ndarray.ravel", F.nnp_m_ravel, A(M23)),
    r("ndarray.repeat", F.nnp_m_repeat, A(V)),
    r("ndarray.reshape", F.nnp_m_reshape, A(V6)),
    r("ndarray.reshape with a tuple and -1", F.nnp_m_reshape_tuple, A(V6)),
    r("ndarray.sort", F.nnp_m_sort, A(V)),
    r("ndarray.sum with axis", F.nnp_m_sum_axis, A(M23)),
    r("ndarray.sum with dtype", F.nnp_m_sum_dtype, A(V)),
    r("ndarray.tobytes", F.nnp_m_tobytes, A(V), P),
    r("ndarray.transpose", F.nnp_m_transpose, A(M23)),
    r("ndarray.view", F.nnp_m_view, A(V)),
    r("ndarray.__contains__", F.nnp_m_contains, A(V), N),
])

block(NN, "Functions / Linear algebra", [
    r("np.dot (matrix-vector)", F.nnp_la_dot, A(V3, MI)),
    r("np.dot (matrix-matrix)", F.nnp_la_dot_matrix, A(MP, MI)),
    r("np.kron", F.nnp_la_kron, A(V3, V[:2].copy())),
    r("np.outer", F.nnp_la_outer, A(V)),
    r("np.trace", F.nnp_la_trace, A(MP)),
    r("np.vdot", F.nnp_la_vdot, A(V)),
    r("@ (PEP 465)", F.nnp_la_matmul_op, A(M23, MI)),
    r("np.linalg.cholesky", F.nnp_la_cholesky, A(MP)),
    r("np.linalg.cond", F.nnp_la_cond, A(MP)),
    r("np.linalg.det", F.nnp_la_det, A(MI)),
    r("np.linalg.eig", F.nnp_la_eig, A(MP)),
    r("np.linalg.eigh", F.nnp_la_eigh, A(MP)),
    r("np.linalg.eigvals", F.nnp_la_eigvals, A(MP)),
    r("np.linalg.eigvalsh", F.nnp_la_eigvalsh, A(MP)),
    r("np.linalg.inv", F.nnp_la_inv, A(MI)),
    r("np.linalg.lstsq", F.nnp_la_lstsq, A(M43, V)),
    r("np.linalg.matrix_power", F.nnp_la_matrix_power, A(MI)),
    r("np.linalg.matrix_rank", F.nnp_la_matrix_rank, A(MI), N),
    r("np.linalg.norm", F.nnp_la_norm, A(MP)),
    r("np.linalg.norm with ord", F.nnp_la_norm_ord, A(V)),
    r("np.linalg.pinv", F.nnp_la_pinv, A(MI)),
    r("np.linalg.qr", F.nnp_la_qr, A(MI)),
    r("np.linalg.slogdet", F.nnp_la_slogdet, A(MI)),
    r("np.linalg.solve", F.nnp_la_solve, A(MI, V3)),
    r("np.linalg.svd", F.nnp_la_svd, A(MP)),
    r("np.linalg.eigh with UPLO='U'", F.nnp_la_eigh_upper, A(MP)),
    r("np.linalg.norm of a matrix, ord 1, -1, inf, -inf, -2", F.nnp_la_norm_matrix_orders,
      A(MI)),
    r("np.linalg.qr with mode='r'", F.nnp_la_qr_r, A(M43)),
    r("np.linalg.svd singular vectors (full_matrices=True, square)", F.nnp_la_svd_vectors,
      A(MI)),
])

block(NN, "Functions / Reductions", [
    r("np.diff (n)", F.nnp_r_diff, A(V)),
    r("np.amin, np.amax, np.min, np.max", F.nnp_r_amin_amax, A(V)),
    r("np.median", F.nnp_r_median, A(V)),
    r("np.nancumprod", F.nnp_r_nancumprod, A(V)),
    r("np.nancumsum", F.nnp_r_nancumsum, A(V)),
    r("np.nanmax, np.nanmin", F.nnp_r_nanmax_nanmin, A(V)),
    r("np.nanmean", F.nnp_r_nanmean, A(V)),
    r("np.nanmedian", F.nnp_r_nanmedian, A(V)),
    r("np.nanpercentile", F.nnp_r_nanpercentile, A(V)),
    r("np.nanquantile", F.nnp_r_nanquantile, A(V)),
    r("np.nanprod", F.nnp_r_nanprod, A(V)),
    r("np.nanstd (ddof)", F.nnp_r_nanstd, A(V)),
    r("np.nansum", F.nnp_r_nansum, A(V)),
    r("np.nanvar", F.nnp_r_nanvar, A(V)),
    r("np.percentile", F.nnp_r_percentile, A(V)),
    r("np.quantile", F.nnp_r_quantile, A(V)),
    r("np.percentile of a list of q along an axis", F.nnp_r_percentile_list_axis, A(M34)),
    r("np.quantile of a list of q, keepdims", F.nnp_r_quantile_list_keepdims, A(M34)),
    r("np.putmask with a number", F.nnp_putmask, A(M34)),
    r("a mask made as the product of two comparisons, indexing", F.npy_mask_product_indexes,
      A(V * 3.0 - 1.5)),
    r("np.piecewise with lambdas", F.npy_piecewise, A(V * 3.0 - 1.5)),
    r("np.average (weights)", F.nnp_r_average, A(V)),
    r("nan-reductions over data holding a NaN", F.nnp_r_nan_in_data, A(V)),
])

block(NN, "Functions / Polynomials", [
    r("np.polynomial.polynomial.Polynomial", F.nnp_poly_class, A(V)),
    r("polyadd", F.nnp_poly_polyadd, A(V)),
    r("polydiv", F.nnp_poly_polydiv, A(V)),
    r("polyint", F.nnp_poly_polyint, A(V)),
    r("polymul", F.nnp_poly_polymul, A(V)),
    r("polysub", F.nnp_poly_polysub, A(V)),
    r("polyval (wrt coefficients)", F.nnp_poly_polyval, A(V)),
    r("polyval (wrt points)", F.nnp_poly_polyval_at, A(V, np.array([1.0, 2.0, 0.5]))),
    r("np.polyval at a complex argument (a transfer function at 1j w)",
      F.nnp_polyval_complex, A(V, np.array([0.5, 1.5, 3.0]))),
    r("np.polyfit", F.nnp_polyfit, A(np.array([0.5, 1.0, 2.0, 3.5, 5.0]),
                                     np.array([3.0, 2.2, 1.6, 0.9, 0.4]))),
    r("polyutils.as_series", F.nnp_poly_as_series, A(V)),
    r("polyutils.trimseq", F.nnp_poly_trimseq, A(V)),
])

block(NN, "Functions / Other functions", [
    r("np.allclose", F.nnp_o_allclose, A(V), N),
    r("np.append", F.nnp_o_append, A(V)),
    r("np.arange", F.nnp_o_arange, A(V), P),
    r("np.argwhere", F.nnp_o_argwhere, A(V), N),
    r("np.around", F.nnp_o_around, A(V), N),
    r("np.array of scalars", F.nnp_o_array_from_scalars, S(0.7)),
    r("np.array_equal", F.nnp_o_array_equal, A(V), N),
    r("np.array_split", F.nnp_o_array_split, A(V6)),
    r("np.asarray", F.nnp_o_asarray, A(V)),
    r("np.asarray_chkfinite", F.nnp_o_asarray_chkfinite, A(V)),
    r("np.ascontiguousarray", F.nnp_o_ascontiguousarray, A(M23)),
    r("np.asfortranarray", F.nnp_o_asfortranarray, A(M23)),
    r("np.atleast_1d", F.nnp_o_atleast_1d, A(V)),
    r("np.atleast_2d", F.nnp_o_atleast_2d, A(V)),
    r("np.atleast_3d", F.nnp_o_atleast_3d, A(V)),
    r("np.bartlett, blackman, hamming, hanning, kaiser", F.nnp_o_windows, A(V), P),
    r("np.bincount with weights", F.nnp_o_bincount_weights, A(V, np.array([0, 1, 1, 3]))),
    r("np.bincount", F.nnp_o_bincount, A(V, np.array([0, 1, 1, 3])), P),
    r("np.broadcast_to", F.nnp_o_broadcast_to, A(V)),
    r("np.broadcast_arrays", F.nnp_o_broadcast_arrays, A(V, M24)),
    r("np.broadcast_shapes", F.nnp_o_broadcast_shapes, A(V), P),
    r("np.column_stack", F.nnp_o_column_stack, A(V)),
    r("np.concatenate (tuple)", F.nnp_o_concatenate, A(V)),
    r("np.convolve", F.nnp_o_convolve, A(V)),
    r("np.convolve with mode", F.nnp_o_convolve_mode, A(V)),
    r("np.copy", F.nnp_o_copy, A(V)),
    r("np.corrcoef", F.nnp_o_corrcoef, A(V, V2)),
    r("np.correlate", F.nnp_o_correlate, A(V)),
    r("np.count_nonzero", F.nnp_o_count_nonzero, A(V), N),
    r("np.cov", F.nnp_o_cov, A(M23)),
    r("np.cov with rowvar=False, bias=, ddof=, y=", F.nnp_o_cov_options, A(M34)),
    r("np.cov with fweights= and aweights=", F.nnp_o_cov_weights, A(M34)),
    r("np.cov of one variable as a row (a number, as NumPy squeezes it)", F.nnp_o_cov_one_row,
      A(V)),
    r("np.cross", F.nnp_o_cross, A(V3, V3B)),
    r("np.delete", F.nnp_o_delete, A(V)),
    r("np.diag", F.nnp_o_diag, A(MP)),
    r("np.diagflat", F.nnp_o_diagflat, A(V)),
    r("np.digitize", F.nnp_o_digitize, A(V), N),
    r("np.dsplit", F.nnp_o_dsplit, A(T234)),
    r("np.dstack", F.nnp_o_dstack, A(V)),
    r("np.dtype", F.nnp_o_dtype, A(V)),
    r("np.ediff1d", F.nnp_o_ediff1d, A(V)),
    r("np.empty then filled", F.nnp_o_empty, A(V)),
    r("np.empty_like then filled", F.nnp_o_empty_like, A(V)),
    r("np.expand_dims", F.nnp_o_expand_dims, A(V)),
    r("np.extract", F.nnp_o_extract, A(V)),
    r("np.eye", F.nnp_o_eye, A(MP)),
    r("np.fill_diagonal with an array", F.nnp_o_fill_diagonal, A(V)),
    r("np.fill_diagonal with a constant", F.nnp_o_fill_diagonal_scalar, S(0.7)),
    r("np.flatnonzero", F.nnp_o_flatnonzero, A(V)),
    r("np.flip", F.nnp_o_flip, A(V)),
    r("np.fliplr", F.nnp_o_fliplr, A(M23)),
    r("np.flipud", F.nnp_o_flipud, A(M23)),
    r("np.full (fill value)", F.nnp_o_full, S(0.7)),
    r("np.full_like", F.nnp_o_full_like, A(V)),
    r("np.geomspace (start)", F.nnp_o_geomspace, S(0.7)),
    r("np.histogram", F.nnp_o_histogram, A(V), N),
    r("np.histogram with range= and weights=", F.nnp_o_histogram_weights_range, A(V6)),
    r("np.histogram with density= (edges from the data)", F.nnp_o_histogram_density, A(V6)),
    r("np.hsplit", F.nnp_o_hsplit, A(M24)),
    r("np.hstack", F.nnp_o_hstack, A(V)),
    r("np.identity", F.nnp_o_identity, A(MP)),
    r("np.indices", F.nnp_o_indices, A(M23), P),
    r("np.insert", F.nnp_o_insert, A(V)),
    r("np.isclose", F.nnp_o_isclose, A(V), N),
    r("np.iscomplex, np.iscomplexobj, np.isreal", F.nnp_o_iscomplex_isreal, A(V), N),
    r("np.isrealobj, np.isscalar", F.nnp_o_isrealobj_isscalar, A(V), N),
    r("np.isin", F.nnp_o_isin, A(V), N),
    r("np.isneginf, np.isposinf", F.nnp_o_isneginf_isposinf, A(V), N),
    r("np.interp (wrt fp)", F.nnp_o_interp_fp, A(V)),
    r("np.interp (wrt x)", F.nnp_o_interp_x, A(V)),
    r("np.intersect1d", F.nnp_o_intersect1d, A(V), N, reason="set operations select equal values"),
    r("np.linspace (start, stop)", F.nnp_o_linspace, S(0.7)),
    r("np.logspace (start)", F.nnp_o_logspace, S(0.7)),
    r("np.moveaxis", F.nnp_o_moveaxis, A(M23)),
    r("np.nan_to_num", F.nnp_o_nan_to_num, A(V)),
    r("np.ndenumerate", F.nnp_o_ndenumerate, A(M23)),
    r("np.ndindex", F.nnp_o_ndindex, A(M23)),
    r("np.nditer", F.nnp_o_nditer, A(V)),
    r("np.ones", F.nnp_o_ones, A(V)),
    r("np.ones_like", F.nnp_o_ones_like, A(V)),
    r("np.partition", F.nnp_o_partition, A(V)),
    r("np.ptp", F.nnp_o_ptp, A(V)),
    r("np.ravel", F.nnp_o_ravel, A(M23)),
    r("np.repeat", F.nnp_o_repeat, A(V)),
    r("np.reshape", F.nnp_o_reshape, A(V6)),
    r("np.resize", F.nnp_o_resize, A(V)),
    r("np.roll", F.nnp_o_roll, A(V)),
    r("np.roots", F.nnp_o_roots, S(3.1)),
    r("np.rot90", F.nnp_o_rot90, A(M23)),
    r("np.row_stack", F.nnp_o_row_stack, A(V)),
    r("np.searchsorted", F.nnp_o_searchsorted, A(V), N),
    r("np.select", F.nnp_o_select, A(V)),
    r("np.setxor1d, np.setdiff1d, np.union1d of integers", F.nnp_o_setxor_setdiff_union, A(V), P),
    r("np.union1d of values", F.nnp_o_union1d_values, A(V)),
    r("np.unique of values", F.nnp_o_unique_values, A(V)),
    r("np.shape", F.nnp_o_shape, A(V), P),
    r("np.sinc", F.nnp_o_sinc, A(V)),
    r("np.sort", F.nnp_o_sort, A(V)),
    r("np.sort of a matrix (last axis)", F.nnp_o_sort_2d, A(M23)),
    r("np.split (sections)", F.nnp_o_split, A(V)),
    r("np.split (indices)", F.nnp_o_split_indices, A(V)),
    r("np.stack", F.nnp_o_stack, A(V)),
    r("np.stack with axis", F.nnp_o_stack_axis, A(V)),
    r("np.swapaxes", F.nnp_o_swapaxes, A(M23)),
    r("np.take_along_axis", F.nnp_o_take_along_axis, A(M23, np.array([[0, 2], [1, 1]]))),
    r("np.transpose", F.nnp_o_transpose, A(M23)),
    r("np.trapezoid (y, dx)", F.nnp_o_trapezoid, A(V)),
    r("np.trapezoid (wrt x)", F.nnp_o_trapezoid_x, A(V)),
    r("np.tri", F.nnp_o_tri, A(MP)),
    r("np.tril (k)", F.nnp_o_tril, A(MP)),
    r("np.tril_indices", F.nnp_o_tril_indices, A(MP)),
    r("np.tril_indices_from", F.nnp_o_tril_indices_from, A(MP)),
    r("np.trim_zeros", F.nnp_o_trim_zeros, A(V)),
    r("np.triu (k)", F.nnp_o_triu, A(MP)),
    r("np.triu_indices", F.nnp_o_triu_indices, A(MP)),
    r("np.triu_indices_from", F.nnp_o_triu_indices_from, A(MP)),
    r("np.unique of integers", F.nnp_o_unique, A(V, np.array([1, 2, 2, 3])), P),
    r("np.unwrap", F.nnp_o_unwrap, A(V)),
    r("np.vander", F.nnp_o_vander, A(V)),
    r("np.vsplit", F.nnp_o_vsplit, A(M24)),
    r("np.vstack", F.nnp_o_vstack, A(V)),
    r("np.where (three arguments)", F.nnp_o_where, A(V)),
    r("np.where (one argument)", F.nnp_o_where_one_arg, A(V)),
    r("np.zeros then written", F.nnp_o_zeros, A(V)),
    r("np.zeros_like then added to", F.nnp_o_zeros_like, A(V)),
    r("np.frombuffer", F.nnp_o_frombuffer, A(V, b"abc"), P),
])

block(NN, "Functions / Other functions (constructors, machine parameters, literal arrays)", [
    r("np.int8 ... np.uintp constructors", F.nnp_ctor_ints, S(0.7), P),
    r("np.float32 constructor", F.nnp_ctor_float32, S(0.7), **_F32),
    r("np.complex64 constructor", F.nnp_ctor_complex64, S(0.7), P),
    r("np.float64 constructor", F.nnp_ctor_sequence, S(0.7)),
    r("np.iinfo", F.nnp_iinfo, S(0.7), P),
    r("np.finfo", F.nnp_finfo, S(0.7), P),
    r("np.array of a nested tuple (literal array)", F.nnp_literal_array_tuple, S(0.7)),
])

block(NN, "Modules / random / Generator Objects", [
    r("Generator.standard_normal", F.nnp_gen_standard_normal, A(V, Fresh(_rng)), P),
    r("Generator.normal (wrt loc)", F.nnp_gen_normal_loc, A(V, Fresh(_rng))),
    r("Generator.normal (wrt scale)", F.nnp_gen_normal_scale, A(V, Fresh(_rng))),
    r("Generator.uniform", F.nnp_gen_uniform, A(V, Fresh(_rng)), P),
    r("Generator.uniform (wrt bounds)", F.nnp_gen_uniform_bounds, A(V, Fresh(_rng))),
    r("Generator.random", F.nnp_gen_random, A(V, Fresh(_rng)), P),
    r("Generator.integers", F.nnp_gen_integers, A(V, Fresh(_rng)), P),
    r("Generator.exponential", F.nnp_gen_exponential, A(V, Fresh(_rng)), P),
    r("Generator.beta ... zipf (other distributions)", F.nnp_gen_other, A(V, Fresh(_rng)), P),
    r("Generator.permutation", F.nnp_gen_permutation, A(V, Fresh(_rng))),
    r("Generator.shuffle", F.nnp_gen_shuffle, A(V, Fresh(_rng))),
])

block(NN, "Modules / random / RandomState and legacy Random number generation", [
    r("np.random.seed, np.random.rand", F.nnp_rs_seed_rand, A(V), P),
    r("np.random.randn", F.nnp_rs_randn, A(V), P),
    r("np.random.random, random_sample, sample", F.nnp_rs_random_sample, A(V), P),
    r("np.random.ranf", F.nnp_rs_ranf, A(V), P),
    r("np.random.randint", F.nnp_rs_randint, A(V), P),
    r("np.random.choice", F.nnp_rs_choice, A(V)),
    r("np.random.permutation", F.nnp_rs_permutation, A(V)),
    r("np.random.shuffle", F.nnp_rs_shuffle, A(V)),
    r("np.random.normal (wrt loc)", F.nnp_rs_normal_loc, A(V)),
    r("np.random.normal (wrt scale)", F.nnp_rs_normal_scale, A(V)),
    r("np.random.standard_normal", F.nnp_rs_standard_normal, A(V)),
    r("np.random.uniform (wrt bounds)", F.nnp_rs_uniform_bounds, A(V)),
    r("np.random distributions (beta ... zipf)", F.nnp_rs_distributions, A(V), P),
    r("np.random.dirichlet, np.random.multinomial", F.nnp_rs_dirichlet_multinomial, A(V), P),
])

block(NN, "Modules / stride_tricks", [
    r("as_strided", F.nnp_as_strided, A(V)),
    r("as_strided: a matrix's diagonal written through", F.nnp_as_strided_diagonal_write, A(MP)),
    r("sliding_window_view", F.nnp_sliding_window_view, A(V)),
])

block(NN, "Standard ufuncs / Math operations", [
    r("add", F.nu_add, S(0.7)),
    r("subtract", F.nu_subtract, S(0.7)),
    r("multiply", F.nu_multiply, S(0.7)),
    r("divide", F.nu_divide, S(0.7)),
    r("logaddexp", F.nu_logaddexp, S(0.7)),
    r("logaddexp2", F.nu_logaddexp2, S(0.7)),
    r("true_divide", F.nu_true_divide, S(0.7)),
    r("floor_divide", F.nu_floor_divide, S(0.7), N),
    r("negative", F.nu_negative, S(0.7)),
    r("power", F.nu_power, S(0.7)),
    r("float_power", F.nu_float_power, S(0.7)),
    r("remainder", F.nu_remainder, S(0.7)),
    r("mod", F.nu_mod, S(0.7)),
    r("fmod", F.nu_fmod, S(0.7)),
    r("divmod", F.nu_divmod, S(0.7)),
    r("abs", F.nu_abs, S(0.7)),
    r("absolute", F.nu_absolute, S(0.7)),
    r("fabs", F.nu_fabs, S(0.7)),
    r("rint", F.nu_rint, S(0.7), N),
    r("sign", F.nu_sign, S(0.7), N),
    r("conj", F.nu_conj, S(0.7)),
    r("exp", F.nu_exp, S(0.7)),
    r("exp2", F.nu_exp2, S(0.7)),
    r("log", F.nu_log, S(0.7)),
    r("log2", F.nu_log2, S(0.7)),
    r("log10", F.nu_log10, S(0.7)),
    r("expm1", F.nu_expm1, S(0.7)),
    r("log1p", F.nu_log1p, S(0.7)),
    r("sqrt", F.nu_sqrt, S(0.7)),
    r("square", F.nu_square, S(0.7)),
    r("cbrt", F.nu_cbrt, S(0.7)),
    r("reciprocal", F.nu_reciprocal, S(0.7)),
    r("conjugate", F.nu_conjugate, S(0.7)),
    r("gcd, lcm", F.nu_gcd_lcm, S(0.7), P),
])

block(NN, "Standard ufuncs / Trigonometric functions", [
    r("sin", F.nu_sin, S(0.7)),
    r("cos", F.nu_cos, S(0.7)),
    r("tan", F.nu_tan, S(0.7)),
    r("arcsin", F.nu_arcsin, S(0.7)),
    r("arccos", F.nu_arccos, S(0.7)),
    r("arctan", F.nu_arctan, S(0.7)),
    r("arctan2", F.nu_arctan2, S(0.7)),
    r("hypot", F.nu_hypot, S(0.7)),
    r("sinh", F.nu_sinh, S(0.7)),
    r("cosh", F.nu_cosh, S(0.7)),
    r("tanh", F.nu_tanh, S(0.7)),
    r("arcsinh", F.nu_arcsinh, S(0.7)),
    r("arccosh", F.nu_arccosh, S(1.7)),
    r("arctanh", F.nu_arctanh, S(0.7)),
    r("deg2rad", F.nu_deg2rad, S(0.7)),
    r("rad2deg", F.nu_rad2deg, S(0.7)),
    r("degrees", F.nu_degrees, S(0.7)),
    r("radians", F.nu_radians, S(0.7)),
])

block(NN, "Standard ufuncs / Bit-twiddling functions", [
    r("bitwise_and, bitwise_or, bitwise_xor, bitwise_not (integers)", F.nu_bitwise, S(0.7), P),
    r("invert (booleans)", F.nu_invert_bool, A(V), N),
    r("left_shift, right_shift", F.nu_shifts, S(0.7), P),
])

block(NN, "Standard ufuncs / Comparison functions", [
    r("greater", F.nu_greater, A(V), N),
    r("greater_equal", F.nu_greater_equal, A(V), N),
    r("less", F.nu_less, A(V), N),
    r("less_equal", F.nu_less_equal, A(V), N),
    r("not_equal", F.nu_not_equal, A(V), N),
    r("equal", F.nu_equal, A(V), N),
    r("logical_and", F.nu_logical_and, A(V), N),
    r("logical_or", F.nu_logical_or, A(V), N),
    r("logical_xor", F.nu_logical_xor, A(V), N),
    r("logical_not", F.nu_logical_not, A(V), N),
    r("maximum", F.nu_maximum, A(V)),
    r("minimum", F.nu_minimum, A(V)),
    r("fmax", F.nu_fmax, A(V)),
    r("fmin", F.nu_fmin, A(V)),
    r("comparison operators as 0/1 factors", F.nu_comparison_ops, A(V), N),
])

block(NN, "Standard ufuncs / Floating functions", [
    r("isfinite", F.nu_isfinite, A(V), N),
    r("isinf", F.nu_isinf, A(V), N),
    r("isnan", F.nu_isnan, A(V), N),
    r("signbit", F.nu_signbit, A(V), N),
    r("copysign", F.nu_copysign, A(V)),
    r("nextafter", F.nu_nextafter, A(V)),
    r("ldexp", F.nu_ldexp, A(V)),
    r("floor", F.nu_floor, A(V), N),
    r("ceil", F.nu_ceil, A(V), N),
    r("trunc", F.nu_trunc, A(V), N),
    r("spacing", F.nu_spacing, A(V), N),
])

block(NN, "Standard ufuncs / Datetime functions", [
    r("isnat", F.nu_isnat, A(0.7, np.datetime64("2020-01-01")), P),
])


# =====================================================================================
# autograd-numpy: numpy_vjps.py / numpy_jvps.py / linalg.py / fft.py
# =====================================================================================

block(AN, "numpy_vjps.py / Non-differentiable functions", [
    r(name, fn, A(V), N) for name, fn in [
        ("np.floor", F.ag_floor), ("np.ceil", F.ag_ceil), ("np.round", F.ag_round),
        ("np.rint", F.ag_rint), ("np.around", F.ag_around), ("np.fix", F.ag_fix),
        ("np.trunc", F.ag_trunc), ("np.all", F.ag_all), ("np.any", F.ag_any),
        ("np.argmax", F.ag_argmax), ("np.argmin", F.ag_argmin),
        ("np.argpartition", F.ag_argpartition), ("np.argsort", F.ag_argsort),
        ("np.argwhere", F.ag_argwhere), ("np.nonzero", F.ag_nonzero),
        ("np.flatnonzero", F.ag_flatnonzero), ("np.count_nonzero", F.ag_count_nonzero),
        ("np.searchsorted", F.ag_searchsorted), ("np.sign", F.ag_sign), ("np.ndim", F.ag_ndim),
        ("np.shape", F.ag_shape), ("np.floor_divide", F.ag_floor_divide),
        ("np.logical_and", F.ag_logical_and), ("np.logical_or", F.ag_logical_or),
        ("np.logical_not", F.ag_logical_not), ("np.logical_xor", F.ag_logical_xor),
        ("np.isfinite", F.ag_isfinite), ("np.isinf", F.ag_isinf), ("np.isnan", F.ag_isnan),
        ("np.isneginf", F.ag_isneginf), ("np.isposinf", F.ag_isposinf),
        ("np.allclose", F.ag_allclose), ("np.isclose", F.ag_isclose),
        ("np.array_equal", F.ag_array_equal), ("np.array_equiv", F.ag_array_equiv),
        ("np.greater", F.ag_greater), ("np.greater_equal", F.ag_greater_equal),
        ("np.less", F.ag_less), ("np.less_equal", F.ag_less_equal), ("np.equal", F.ag_equal),
        ("np.not_equal", F.ag_not_equal), ("np.iscomplexobj", F.ag_iscomplexobj),
        ("np.iscomplex", F.ag_iscomplex), ("np.size", F.ag_size), ("np.isscalar", F.ag_isscalar),
        ("np.isreal", F.ag_isreal), ("np.zeros_like", F.ag_zeros_like),
        ("np.ones_like", F.ag_ones_like), ("np.empty_like", F.ag_empty_like),
        ("np.full_like", F.ag_full_like), ("np.result_type", F.ag_result_type),
    ]
])

block(AN, "numpy_vjps.py / Binary ufuncs", [
    r(name, fn, A(V, M24)) for name, fn in [
        ("np.add", F.ag_add), ("np.multiply", F.ag_multiply), ("np.subtract", F.ag_subtract),
        ("np.divide", F.ag_divide), ("np.maximum", F.ag_maximum), ("np.minimum", F.ag_minimum),
        ("np.fmax", F.ag_fmax), ("np.fmin", F.ag_fmin), ("np.logaddexp", F.ag_logaddexp),
        ("np.logaddexp2", F.ag_logaddexp2), ("np.true_divide", F.ag_true_divide),
        ("np.mod", F.ag_mod), ("np.remainder", F.ag_remainder), ("np.power", F.ag_power),
        ("np.arctan2", F.ag_arctan2), ("np.hypot", F.ag_hypot),
        ("+ - * / ** with broadcasting", F.ag_operators),
    ]
])

block(AN, "numpy_vjps.py / Simple grads", [
    r(name, fn, A(V)) for name, fn in [
        ("np.negative", F.ag_negative), ("np.abs", F.ag_abs), ("np.absolute", F.ag_absolute),
        ("np.fabs", F.ag_fabs), ("np.reciprocal", F.ag_reciprocal), ("np.exp", F.ag_exp),
        ("np.exp2", F.ag_exp2), ("np.expm1", F.ag_expm1), ("np.log", F.ag_log),
        ("np.log2", F.ag_log2), ("np.log10", F.ag_log10), ("np.log1p", F.ag_log1p),
        ("np.sin", F.ag_sin), ("np.cos", F.ag_cos), ("np.tan", F.ag_tan),
        ("np.arcsin", F.ag_arcsin), ("np.arccos", F.ag_arccos), ("np.arctan", F.ag_arctan),
        ("np.sinh", F.ag_sinh), ("np.cosh", F.ag_cosh), ("np.tanh", F.ag_tanh),
        ("np.arcsinh", F.ag_arcsinh), ("np.arccosh", F.ag_arccosh), ("np.arctanh", F.ag_arctanh),
        ("np.rad2deg", F.ag_rad2deg), ("np.degrees", F.ag_degrees), ("np.deg2rad", F.ag_deg2rad),
        ("np.radians", F.ag_radians), ("np.square", F.ag_square), ("np.sqrt", F.ag_sqrt),
        ("np.sinc", F.ag_sinc), ("np.nan_to_num", F.ag_nan_to_num),
    ]
])

block(AN, "numpy_vjps.py / Shapes, joins and splits", [
    r("np.reshape", F.ag_reshape, A(V6)),
    r("np.reshape with order='F'", F.ag_reshape_order_f, A(V6)),
    r("np.roll with axis", F.ag_roll_axis, A(M23)),
    r("np.array_split with axis", F.ag_array_split_axis, A(M23)),
    r("np.split with axis", F.ag_split_axis, A(M24)),
    r("np.vsplit", F.ag_vsplit, A(M24)),
    r("np.hsplit at indices", F.ag_hsplit, A(M23)),
    r("np.dsplit", F.ag_dsplit, A(T234)),
    r("np.ravel", F.ag_ravel, A(M23)),
    r("np.ravel with order='F'", F.ag_ravel_order_f, A(M23)),
    r("np.expand_dims", F.ag_expand_dims, A(V)),
    r("np.squeeze (no axis)", F.ag_squeeze, A(R14)),
    r("np.squeeze with axis", F.ag_squeeze_axis, A(R14)),
    r("np.hstack of one array of rank 3", F.ag_hstack_rows, A(T234)),
    r("np.column_stack of one vector", F.ag_column_stack_vector, A(V)),
    r("np.matmul of a vector and a stack", F.ag_matmul_vector_stack, A(T234, V), wrt=(0, 1)),
    r("np.einsum with an ellipsis, a product", F.ag_einsum_ellipsis_product, A(T234, M43),
      wrt=(0, 1)),
    r("np.diag (read, k)", F.ag_diag, A(MP)),
    r("np.diag (build, k)", F.ag_diag_build, A(V)),
    r("np.flipud", F.ag_flipud, A(M23)),
    r("np.fliplr", F.ag_fliplr, A(M23)),
    r("np.rot90 (k)", F.ag_rot90, A(M23)),
    r("np.trace (offset)", F.ag_trace, A(MP)),
    r("np.full (fill value)", F.ag_full, S(0.7)),
    r("np.triu (k)", F.ag_triu, A(MP)),
    r("np.tril (k)", F.ag_tril, A(MP)),
    r("np.clip", F.ag_clip, A(V)),
    r("np.swapaxes", F.ag_swapaxes, A(T234)),
    r("np.moveaxis", F.ag_moveaxis, A(T234)),
    r("np.rollaxis", F.ag_rollaxis, A(T234)),
    r("np.transpose with axes", F.ag_transpose_axes, A(T234)),
    r("np.broadcast_to", F.ag_broadcast_to, A(V)),
    r("np.repeat with axis", F.ag_repeat_axis, A(M23)),
    r("np.tile", F.ag_tile, A(M23)),
    r("np.concatenate (list, axis)", F.ag_concatenate_axis, A(M23)),
    r("np.hstack", F.ag_hstack, A(V)),
    r("np.vstack", F.ag_vstack, A(V)),
    r("np.column_stack", F.ag_column_stack, A(V)),
    r("np.stack (axis=-1)", F.ag_stack, A(V)),
    r("np.dstack", F.ag_dstack, A(V)),
    r("np.append", F.ag_append, A(V)),
    r("np.append with axis", F.ag_append_axis, A(M23)),
    r("np.atleast_1d", F.ag_atleast_1d, A(V)),
    r("np.atleast_2d", F.ag_atleast_2d, A(V)),
    r("np.atleast_3d", F.ag_atleast_3d, A(V)),
    r("np.pad (constant)", F.ag_pad_constant, A(V)),
    r("np.pad (edge)", F.ag_pad_edge, A(V)),
    r("np.pad (reflect)", F.ag_pad_reflect, A(V)),
    r("np.array of scalars (array_from_args)", F.ag_array_from_scalars, A(V)),
    r("np.array of arrays", F.ag_array_from_arrays, A(V)),
    r("np.select", F.ag_select, A(V)),
])

block(AN, "numpy_vjps.py / Complex parts", [
    r("np.real", F.ag_real, A(V)),
    r("np.imag", F.ag_imag, A(V)),
    r("np.conj", F.ag_conj, A(V)),
    r("np.conjugate", F.ag_conjugate, A(V)),
    r("np.angle (of a real array)", F.ag_angle, A(V), N),
    r("np.real_if_close", F.ag_real_if_close, A(V)),
    r("complex intermediate (x + 1j*y, abs, conj)", F.ag_complex_roundtrip, A(V)),
    r("np.var, np.std of a complex array", F.ag_complex_var_std, A(V)),
    r("np.linalg.norm of a complex array (2, 3, 'fro', 1)", F.ag_complex_norms, A(M23)),
    r("np.expm1, np.log1p, np.exp2, np.log2 of a complex array", F.ag_complex_exp_log,
      A(V)),
    r("np.kron, np.tensordot, np.einsum of complex arrays", F.ag_complex_products, A(M23)),
    r("np.max, np.min of a complex array (NumPy's order)", F.ag_complex_max_min, A(M23)),
    r("np.prod of a complex array", F.ag_complex_prod, A(M23)),
])

block(AN, "numpy_vjps.py / where, cross, linspace, astype, diff, gradient, kron", [
    r("np.where", F.ag_where, A(V)),
    r("np.cross", F.ag_cross, A(V3, V3B)),
    r("np.cross with axis", F.ag_cross_axis, A(M32, M32[::-1].copy())),
    r("np.linspace (start, stop)", F.ag_linspace, S(0.7)),
    r("ndarray.astype", F.ag_astype, A(V)),
    r("np.diff (n, axis)", F.ag_diff_axis, A(MP)),
    r("np.gradient", F.ag_gradient, A(V)),
    r("np.gradient of a matrix", F.ag_gradient_2d, A(MP)),
    r("np.kron", F.ag_kron, A(V3, MP)),
])

block(AN, "numpy_vjps.py / Reductions", [
    r("np.sum (axis, keepdims)", F.ag_sum_axis_keepdims, A(M23)),
    r("np.mean (axis)", F.ag_mean_axis, A(M23)),
    r("np.prod (axis)", F.ag_prod_axis, A(M23)),
    r("np.var (ddof, axis)", F.ag_var_ddof, A(M23)),
    r("np.std (axis, ddof)", F.ag_std_axis, A(M23)),
    r("np.max (axis)", F.ag_max_axis, A(M23)),
    r("np.min (axis, keepdims)", F.ag_min_axis, A(M23)),
    r("np.amax", F.ag_amax, A(V)),
    r("np.amin", F.ag_amin, A(V)),
    r("np.max over tied entries", F.ag_max_ties, A(np.array([0.9, 0.3]))),
    r("np.cumsum (axis)", F.ag_cumsum_axis, A(M23)),
    r("np.cumsum (flattened)", F.ag_cumsum_flat, A(M23)),
])

block(AN, "numpy_vjps.py / Products", [
    r("np.inner", F.ag_inner, A(V, M24)),
    r("np.matmul", F.ag_matmul, A(V, M24)),
    r("np.matmul of a stack of matrices", F.ag_matmul_stack, A(T234, M42)),
    r("np.dot of N-d arrays", F.ag_dot_nd, A(T234, M42)),
    r("np.dot of vectors", F.ag_dot_vec, A(V)),
    r("np.tensordot (axes lists)", F.ag_tensordot, A(T234, M34)),
    r("np.tensordot (integer axes)", F.ag_tensordot_int, A(M23, M34)),
    r("np.outer", F.ag_outer, A(V)),
    r("np.einsum ('ij,jk->ik')", F.ag_einsum_matmul, A(M34, M23)),
    r("np.einsum ('ii')", F.ag_einsum_trace, A(MP)),
    r("np.einsum (batched, 'i,i->')", F.ag_einsum_batch, A(T233, M23)),
    r("np.einsum with '...'", F.ag_einsum_ellipsis, A(T234)),
    r("np.diagonal (offset)", F.ag_diagonal, A(MP)),
    r("np.diagonal (axis1, axis2)", F.ag_diagonal_axes, A(T233)),
])

block(AN, "numpy_vjps.py / Sorting", [
    r("np.sort", F.ag_sort, A(V)),
    r("np.sort (axis=0)", F.ag_sort_axis, A(M23)),
    r("np.partition", F.ag_partition, A(V)),
])

block(AN, "numpy_vjps.py / Indexing (ArrayBox.__getitem__, untake)", [
    r("slices and integers", F.ag_getitem_slices, A(MP)),
    r("integer array", F.ag_getitem_int_array, A(V)),
    r("list of integers", F.ag_getitem_list, A(V)),
    r("boolean mask", F.ag_getitem_mask, A(V)),
    r("pair of integer arrays", F.ag_getitem_pair, A(M23)),
    r("slice and integer array", F.ag_getitem_mixed, A(M23)),
    r("None (newaxis)", F.ag_getitem_newaxis, A(V)),
    r("a list or tuple beside other items", F.ag_getitem_list_beside, A(M43)),
])

block(AN, "numpy_wrapper.py", [
    r("np.r_ and np.c_", F.ag_r_c, A(M43)),
])

block(AN, "linalg.py", [
    r("np.linalg.det", F.ag_la_det, A(MI)),
    r("np.linalg.slogdet", F.ag_la_slogdet, A(MI)),
    r("np.linalg.inv", F.ag_la_inv, A(MI)),
    r("np.linalg.pinv", F.ag_la_pinv, A(M23)),
    r("np.linalg.solve (wrt a)", F.ag_la_solve, A(MI, V3)),
    r("np.linalg.solve (wrt b)", F.ag_la_solve_b, A(V3, MI)),
    r("np.linalg.norm", F.ag_la_norm, A(MP)),
    r("np.linalg.norm (axis)", F.ag_la_norm_axis, A(MP)),
    r("np.linalg.norm (ord=1, vector)", F.ag_la_norm_ord1, A(V)),
    r("np.linalg.norm ('fro')", F.ag_la_norm_fro, A(MP)),
    r("np.linalg.norm ('nuc')", F.ag_la_norm_nuc, A(MP)),
    r("np.linalg.norm (ord=2, matrix)", F.ag_la_norm_2mat, A(MP)),
    r("np.linalg.eigh", F.ag_la_eigh, A(MP)),
    r("np.linalg.eigh with UPLO='U' (NumPy's eigenvectors)", F.ag_la_eigh_upper_signs,
      A(MI2 + 2.0 * np.eye(3))),
    r("np.linalg.eig", F.ag_la_eig, A(MP)),
    r("np.linalg.cholesky", F.ag_la_cholesky, A(MP)),
    r("np.linalg.svd", F.ag_la_svd, A(M23)),
    r("np.linalg.svd (compute_uv=False)", F.ag_la_svd_values, A(M23)),
    r("np.linalg.inv of a stack", F.ag_la_inv_stack, A(T233)),
    r("np.linalg.det of a stack", F.ag_la_det_stack, A(T233)),
    r("np.linalg.svd of a stack", F.ag_la_svd_stack, A(T234)),
    r("np.linalg.eigh of a stack", F.ag_la_eigh_stack, A(T233)),
    r("np.linalg.cholesky of a stack", F.ag_la_cholesky_stack, A(T233)),
    r("np.linalg.slogdet of a stack", F.ag_la_slogdet_stack, A(T233)),
    r("np.linalg.inv of a stack of rank 4", F.ag_la_inv_stack4, A(T233)),
    r("np.linalg.pinv of a stack", F.ag_la_pinv_stack, A(T234)),
    r("np.linalg.solve of stacks", F.ag_la_solve_stack, A(T233, T234[:, :, :2]), wrt=(0, 1)),
    r("np.linalg.norm ('nuc', axis of a stack)", F.ag_la_norm_nuc_axis, A(T234)),
    r("np.linalg.svd of a complex matrix", F.ag_la_svd_complex, A(M23)),
    r("np.linalg.norm ('nuc') of a complex matrix", F.ag_la_norm_nuc_complex, A(MP)),
    r("np.linalg.eigh of a complex Hermitian matrix", F.ag_la_eigh_complex, A(MP)),
    r("np.linalg.eig of a complex matrix", F.ag_la_eig_complex, A(MP)),
])

block(AN, "fft.py", [
    r("np.fft.fft", F.ag_fft, A(V)),
    r("np.fft.ifft", F.ag_ifft, A(V)),
    r("np.fft.fft2", F.ag_fft2, A(M23)),
    r("np.fft.ifft2", F.ag_ifft2, A(M23)),
    r("np.fft.fftn", F.ag_fftn, A(M23)),
    r("np.fft.ifftn", F.ag_ifftn, A(M23)),
    r("np.fft.rfft", F.ag_rfft, A(V)),
    r("np.fft.irfft", F.ag_irfft, A(V)),
    r("np.fft.rfft2", F.ag_rfft2, A(M23)),
    r("np.fft.irfft2", F.ag_irfft2, A(M23)),
    r("np.fft.rfftn", F.ag_rfftn, A(M23)),
    r("np.fft.irfftn", F.ag_irfftn, A(M23)),
    r("np.fft.fftshift", F.ag_fftshift, A(V)),
    r("np.fft.ifftshift", F.ag_ifftshift, A(V)),
    r("np.fft.fft, rfft, irfft with n= (cut or padded)", F.ag_fft_n, A(V)),
    r("np.fft.fft2, irfftn with s= (cut or padded)", F.ag_fft_s, A(M23)),
])


# =====================================================================================
# autograd-scipy: autograd/scipy/{special,stats,signal,linalg,integrate}.py
# =====================================================================================

block(AS, "special.py", [
    r("scipy.special.beta", F.as_beta, A(V)),
    r("scipy.special.betaln", F.as_betaln, A(V)),
    r("scipy.special.betainc (wrt x)", F.as_betainc, A(V)),
    r("scipy.special.polygamma (n=1)", F.as_polygamma, A(V)),
    r("scipy.special.polygamma (n=0)", F.as_polygamma0, A(V)),
    r("scipy.special.psi", F.as_psi, A(V)),
    r("scipy.special.digamma", F.as_digamma, A(V)),
    r("scipy.special.gamma", F.as_gamma, A(V)),
    r("scipy.special.gammaln", F.as_gammaln, A(V)),
    r("scipy.special.gammainc (wrt x)", F.as_gammainc, A(V)),
    r("scipy.special.gammaincc (wrt x)", F.as_gammaincc, A(V)),
    r("scipy.special.gammainc, gammaincc (wrt the shape a)", F.as_gammainc_shape, A(V)),
    r("scipy.special.gammaincinv (wrt a and y)", F.as_gammaincinv, A(V)),
    r("scipy.special.wofz of a complex argument", F.as_wofz, A(V)),
    r("scipy.special.wofz of a real argument", F.as_wofz_real, A(V)),
    r("scipy.special.loggamma of a complex argument", F.as_loggamma_complex, A(V)),
    r("scipy.special.erf, erfc of a complex argument", F.as_erf_complex, A(V)),
    r("scipy.special.gammasgn", F.as_gammasgn, A(V), N),
    r("scipy.special.rgamma", F.as_rgamma, A(V)),
    r("scipy.special.multigammaln", F.as_multigammaln, S(2.5)),
    r("scipy.special.log1p, expm1 (NumPy's twins)", F.as_log1p_expm1, A(V)),
    r("scipy.special.xlog1py", F.as_xlog1py, A(V)),
    r("scipy.special.cosm1", F.as_cosm1, A(V)),
    r("scipy.special.poch", F.as_poch, A(V)),
    r("scipy.special.i0e, i1e", F.as_i0e_i1e, A(V)),
    r("scipy.special.j0", F.as_j0, A(V)),
    r("scipy.special.y0", F.as_y0, A(V)),
    r("scipy.special.j1", F.as_j1, A(V)),
    r("scipy.special.y1", F.as_y1, A(V)),
    r("scipy.special.jn", F.as_jn, A(V)),
    r("scipy.special.yn", F.as_yn, A(V)),
    r("scipy.special.i0", F.as_i0, A(V)),
    r("scipy.special.i1", F.as_i1, A(V)),
    r("scipy.special.iv", F.as_iv, A(V)),
    r("scipy.special.ive", F.as_ive, A(V)),
    r("scipy.special.erf", F.as_erf, A(V)),
    r("scipy.special.erfc", F.as_erfc, A(V)),
    r("scipy.special.erfinv", F.as_erfinv, A(V * 0.9)),
    r("scipy.special.erfcinv", F.as_erfcinv, A(V)),
    r("scipy.special.logit", F.as_logit, A(V)),
    r("scipy.special.expit", F.as_expit, A(V)),
    r("scipy.special.logsumexp", F.as_logsumexp, A(V)),
    r("scipy.special.logsumexp (axis, keepdims)", F.as_logsumexp_axis, A(M23)),
    r("scipy.special.logsumexp (b)", F.as_logsumexp_b, A(V)),
])

block(AS, "stats/", [
    r("scipy.stats.beta.cdf", F.as_beta_cdf, A(V)),
    r("scipy.stats.beta.logpdf (wrt x)", F.as_beta_logpdf, A(V)),
    r("scipy.stats.beta.logpdf (wrt a, b)", F.as_beta_logpdf_ab, S(1.5)),
    r("scipy.stats.beta.pdf", F.as_beta_pdf, A(V)),
    r("scipy.stats.chi2.cdf", F.as_chi2_cdf, A(V)),
    r("scipy.stats.chi2.logpdf", F.as_chi2_logpdf, A(V)),
    r("scipy.stats.chi2.pdf", F.as_chi2_pdf, A(V)),
    r("scipy.stats.dirichlet.logpdf (wrt alpha)", F.as_dirichlet_logpdf, A(np.array([1.5, 2.0, 3.0]))),
    r("scipy.stats.dirichlet.logpdf (wrt x)", F.as_dirichlet_logpdf_x, A(V3)),
    r("scipy.stats.dirichlet.pdf", F.as_dirichlet_pdf, A(np.array([1.5, 2.0, 3.0]))),
    r("scipy.stats.gamma.cdf", F.as_gamma_cdf, A(V)),
    r("scipy.stats.gamma.logpdf (wrt x)", F.as_gamma_logpdf, A(V)),
    r("scipy.stats.gamma.logpdf (wrt a)", F.as_gamma_logpdf_a, S(2.0)),
    r("scipy.stats.gamma.pdf", F.as_gamma_pdf, A(V)),
    r("scipy.stats.multivariate_normal.logpdf (wrt x)", F.as_mvn_logpdf, A(V3)),
    r("scipy.stats.multivariate_normal.logpdf (wrt mean)", F.as_mvn_logpdf_mean, A(V3)),
    r("scipy.stats.multivariate_normal.logpdf (wrt cov)", F.as_mvn_logpdf_cov, A(MP)),
    r("scipy.stats.multivariate_normal.pdf", F.as_mvn_pdf, A(V3)),
    r("scipy.stats.multivariate_normal.entropy", F.as_mvn_entropy, A(MP)),
    r("scipy.stats.norm.pdf", F.as_norm_pdf, A(V)),
    r("scipy.stats.norm.cdf", F.as_norm_cdf, A(V)),
    r("scipy.stats.norm.sf", F.as_norm_sf, A(V)),
    r("scipy.stats.norm.logpdf (wrt x)", F.as_norm_logpdf, A(V)),
    r("scipy.stats.norm.logpdf (wrt loc, scale)", F.as_norm_logpdf_loc_scale, S(0.5)),
    r("scipy.stats.norm.logcdf", F.as_norm_logcdf, A(V)),
    r("scipy.stats.norm.logsf", F.as_norm_logsf, A(V)),
    r("scipy.stats.poisson.cdf (wrt mu)", F.as_poisson_cdf, S(2.5)),
    r("scipy.stats.poisson.logpmf (wrt mu)", F.as_poisson_logpmf, S(2.5)),
    r("scipy.stats.poisson.pmf (wrt mu)", F.as_poisson_pmf, S(2.5)),
    r("scipy.stats.t.pdf", F.as_t_pdf, A(V)),
    r("scipy.stats.t.cdf (loc, scale)", F.as_t_cdf, A(V)),
    r("scipy.stats.t.logpdf (loc, scale)", F.as_t_logpdf, A(V)),
    r("scipy.stats.t.logpdf (wrt df)", F.as_t_logpdf_df, S(4.0)),
    r("scipy.stats.t.logcdf", F.as_t_logcdf, A(V)),
])

block(AS, "signal.py", [
    r("scipy.signal.convolve", F.as_signal_convolve, A(V)),
    r("scipy.signal.convolve (mode='valid')", F.as_signal_convolve_valid, A(V)),
    r("scipy.signal.convolve (mode='same', the longer second)", F.as_signal_convolve_same_longer,
      A(V)),
    r("scipy.signal.convolve (2-D)", F.as_signal_convolve_2d, A(MP)),
    r("scipy.signal.convolve2d (mode='same')", F.as_signal_convolve2d_same, A(MP)),
    r("scipy.signal.convolve2d (mode='valid', the larger second)", F.as_signal_convolve2d_valid, A(MP)),
])

block(AS, "SciPy's array-API plumbing (scipy._lib)", [
    r("array_namespace, xp_promote, atleast_nd", F.as_xp_namespace, A(V)),
    r("apply_where with a lambda and fill_value (NaN in the discarded branch)",
      F.as_xp_apply_where_fill, A(V)),
    r("apply_where with f2 a nested function", F.as_xp_apply_where_f2, A(V)),
])

block(AS, "linalg.py", [
    r("scipy.linalg.inv, det (NumPy's twins)", F.as_linalg_inv_det, A(MI)),
    r("scipy.linalg.sqrtm", F.as_linalg_sqrtm, A(MP)),
    r("scipy.linalg.solve_triangular (wrt a)", F.as_linalg_solve_triangular, A(MP, V3)),
    r("scipy.linalg.solve_triangular (wrt b)", F.as_linalg_solve_triangular_b, A(V3, MP)),
    r("scipy.linalg.solve_banded", F.as_linalg_solve_banded, A(BANDED, V)),
    r("scipy.linalg.solve_sylvester", F.as_linalg_solve_sylvester, A(MP)),
    r("scipy.linalg.solve_continuous_lyapunov", F.as_linalg_lyapunov, A(MP)),
    r("scipy.linalg.solve_discrete_lyapunov", F.as_linalg_discrete_lyapunov, A(MP)),
    r("scipy.linalg.expm (a norm that is scaled and squared)", F.as_linalg_expm, A(MP)),
    r("scipy.linalg.solve (wrapped namespace)", F.as_linalg_solve, A(MI, V3)),
    r("scipy.linalg.cholesky (wrapped namespace)", F.as_linalg_cholesky, A(MP)),
])

block(AS, "integrate.py", [
    r("scipy.integrate.odeint (wrt y0)", F.as_odeint_y0, A(np.array([1.0, 2.0])), rtol=1e-3, fd_eps=1e-4),
    r("scipy.integrate.odeint (wrt args)", F.as_odeint_args, S(0.7), rtol=1e-3, fd_eps=1e-4),
])

block(AS, "optimize and stats, called in numerical code", [
    r("scipy.optimize.brentq of a closure (implicit function theorem)", F.as_brentq_closure,
      A(0.7, 1.3), wrt=(0, 1)),
    r("scipy.optimize.newton: Newton's method (fprime) and the secant", F.as_newton,
      A(0.7, 1.3), wrt=(0, 1)),
    r("scipy.optimize.root_scalar: bracket, fprime=True, its .root and .converged",
      F.as_root_scalar, A(0.7, 1.3), wrt=(0, 1)),
    r("scipy.stats.pearsonr (statistic and p-value)", F.as_pearsonr, A(V6, V6[::-1] * V6),
      wrt=(0, 1)),
    r("scipy.stats.spearmanr and rankdata (ranks of the data)", F.as_spearmanr,
      A(V6, V6[::-1] + 0.05 * V6), N, wrt=(0, 1), reason="ranks are piecewise constant in the data"),
])


# =====================================================================================
# python: plain Python used around numbers
# =====================================================================================

block(PY, "Lambdas", [
    r("local lambda", F.py_lambda_local, S(0.7)),
    r("lambda passed as an argument", F.py_lambda_as_argument, A(V)),
    r("lambda called where it is written", F.py_lambda_immediate, S(0.7)),
    r("lambda with a default argument", F.py_lambda_default_arg, S(0.7)),
    r("lambda closing over a local", F.py_lambda_closure, S(0.7)),
    r("lambdas in a list, called in a generator expression", F.py_lambda_in_comprehension, S(0.7)),
    r("lambda returned by a helper", F.py_lambda_returned, S(0.7)),
])

block(PY, "Closures", [
    r("closure over a local", F.py_closure_over_local, S(0.7)),
    r("nested closures", F.py_closure_nested, S(0.7)),
    r("closure accumulating with nonlocal", F.py_closure_nonlocal_accumulate, A(V)),
    r("closure from a factory: captured number", F._loss_l1, A(V), id="py-closure-factory-number"),
    r("closure from a factory: captured array", F._loss_target, A(V), id="py-closure-factory-array"),
    r("closure from a factory: captured loop count", F._loss_counter, A(V), id="py-closure-factory-count"),
    r("closure from a factory: captured local of the factory", F._loss_factory_local, A(V), id="py-closure-factory-local"),
    r("inner factory returning a closure", F.py_closure_inner_returned, S(0.7)),
])

block(PY, "Functions passed as arguments", [
    r("global function passed to a helper", F.py_function_argument_global, S(0.7)),
    r("NumPy ufunc passed to a helper", F.py_function_argument_numpy, A(V)),
    r("math function passed to a helper", F.py_function_argument_math, S(0.7)),
    r("tuple of functions iterated", F.py_function_in_tuple, S(0.7)),
    r("function as an argument of the differentiated function", F.py_function_argument_to_probe, A(V, np.tanh)),
    r("functools.partial", F.py_functools_partial, S(0.7)),
    r("functools.partial as an argument of the differentiated function", F.py_partial_argument_to_probe, A(V, partial(np.power, 1.5))),
    r("sum of a generator's items", F.py_generator_function_sum, A(V)),
])

block(PY, "*args and **kwargs", [
    r("call of a *args function", F.py_star_args_call, S(0.7)),
    r("*tuple at the call", F.py_star_args_unpack, S(0.7)),
    r("**kwargs in the definition", F.py_kwargs_def, S(0.7)),
    r("**dict at the call", F.py_kwargs_unpack_call, S(0.7)),
    r("*args in the differentiated function", F.py_star_args_probe, A(0.7, 2.0, 3.0)),
    r("keyword-only argument with a default", F.py_keyword_only, S(0.7)),
])

block(PY, "Recursion", [
    r("recursion of static depth", F.py_recursion_static_depth, S(0.7)),
    r("recursion over a tree argument's length", F.py_recursion_array_depth, A(V)),
    r("recursion of run-time depth", F.py_recursion_runtime_depth, A(0.7, 3)),
    r("recursion ended by its caller's branch (f(x) = 1 - f(-x))", F.py_recursion_reflected,
      S(0.7)),
])

block(PY, "Default arguments", [
    r("helper with default arguments", F.py_default_args, S(0.7)),
    r("default argument of the differentiated function", F.py_default_in_probe, A(V)),
    r("None default replaced in the body", F.py_default_none, A(V)),
    r("string default used as a switch", F.py_string_switch, A(V)),
])

block(PY, "Slices as values", [
    r("slice object", F.py_slice_object, A(V)),
    r("slice(None, None, -1)", F.py_slice_reversed, A(V)),
    r("slice passed to a helper", F.py_slice_passed, A(V)),
    r("tuple of slice and integer as an index", F.py_slice_tuple_index, A(M23)),
    r("slice bounds from the loop variable", F.py_slice_in_loop, A(V)),
])

block(PY, "Tuples and lists of arrays", [
    r("tuple of arrays returned by a helper", F.py_tuple_of_arrays_returned, A(V)),
    r("tuple of arrays indexed", F.py_tuple_of_arrays_index, A(V)),
    r("list of arrays (literal) iterated", F.py_list_of_arrays_literal, A(V)),
    r("list of arrays indexed", F.py_list_of_arrays_index, A(V)),
    r("np.stack of a list built in a loop", F.py_stack_list_from_loop, A(V)),
    r("np.array of a list of arrays built in a loop", F.py_array_from_list_of_arrays, A(V)),
    r("np.concatenate of a list of arrays of different lengths", F.py_concatenate_list_from_loop, A(V)),
    r("np.vstack of a list comprehension of arrays", F.py_vstack_list_comprehension, A(V)),
    r("zip and len of lists of arrays", F.py_list_of_arrays_len_zip, A(V)),
    r("tuple argument (tree)", F.py_tuple_argument_tree, A((np.array([0.5, 1.5, 1.0, 2.0]), 0.3), V)),
    r("dict argument (tree)", F.py_dict_argument_tree, A({"w": np.array([0.5, 1.5, 1.0, 2.0]), "b": 0.3}, V)),
])

block(PY, "Loop headers, loop else, names after loops", [
    r("for a, b in zip(...)", F.py_for_unpack_zip, A(V)),
    r("for i, (a, b) in enumerate(zip(...))", F.py_for_enumerate_zip, A(V)),
    r("for (a, b), c in zip(zip(...), ...)", F.py_for_nested_unpack, A(V)),
    r("for first, *rest in ...", F.py_for_starred_unpack, A(V)),
    r("for a, b in rows of a matrix", F.py_for_over_rows_unpack, A(M32)),
    r("for k, w in a tuple of pairs", F.py_for_tuple_of_pairs, A(V)),
    r("for k, v in d.items()", F.py_for_dict_items, A(V)),
    r("for ... else (no break)", F.py_for_else, A(V)),
    r("for ... else (break taken)", F.py_for_else_break_taken, A(V)),
    r("while ... else", F.py_while_else, A(V)),
    r("name assigned in a loop, read after it", F.py_loop_name_read_after, A(V)),
    r("loop variable read after the loop", F.py_loop_index_read_after, A(V)),
    r("while True with break", F.py_while_true_break, A(V)),
    r("return inside a loop", F.py_early_return_in_loop, A(V)),
    r("break out of nested loops with a flag", F.py_nested_break_flag, A(MP)),
    r("a loop of a few iterations carrying an array that shrinks (e = e[1:])",
      F.py_loop_shrinking_carry, A(V6)),
])

block(PY, "isinstance and in on values known while building", [
    r("isinstance(x, float)", F.py_isinstance_float, S(0.7)),
    r("isinstance(x, np.ndarray)", F.py_isinstance_ndarray, A(V)),
    r("isinstance with a tuple of types", F.py_isinstance_tuple_types, A(V)),
    r("in on a constant tuple", F.py_in_tuple_constant, A(V)),
    r("in on a string argument", F.py_in_string_argument, A(V, "a")),
    r("in on dict keys", F.py_in_dict_keys, A(V)),
    r("not in on a constant list", F.py_not_in, A(V)),
])

block(PY, "Comprehensions and generator expressions", [
    r("list comprehension", F.py_list_comprehension, A(V)),
    r("list comprehension with if", F.py_list_comprehension_if, A(V)),
    r("nested list comprehension to an array", F.py_nested_comprehension, A(V)),
    r("sum of a generator expression", F.py_generator_sum, A(V)),
    r("max of a generator expression", F.py_generator_max, A(V)),
    r("any of a generator expression over constants", F.py_generator_any_static, A(V)),
    r("dict comprehension", F.py_dict_comprehension, A(V)),
    r("set comprehension of integers", F.py_set_comprehension, A(V), P),
    r("list comprehension over zip", F.py_comprehension_over_zip, A(V)),
    r("tuple() of a generator expression, in a nested function", F.py_tuple_of_generator_in_nested_def, A(V)),
])

block(PY, "Lists, generators and objects across calls", [
    r("a list appended to in a callee, returned to the caller", F.py_list_returned_by_callee, A(V)),
    r("for over zip(*f(x)), appending", F.py_zip_star_call_appending, A(V)),
    r("a generator yielding tuples of arrays", F.py_generator_of_tuples, A(V)),
    r("@functools.wraps on a nested function", F.py_nested_functools_wraps, A(V)),
    r("@functools.wraps decorator whose wrapper computes", F.py_module_functools_wraps_computes,
      A(V)),
    r("np.fromiter of a map held in a name", F.py_fromiter_of_named_map, A(V)),
    r("if/elif without else, name read after", F.py_if_elif_without_else, A(V)),
    r("a dict keyed by objects, holding slices", F.py_dict_keyed_by_objects, A(V)),
])

block(PY, "map, zip, enumerate, reversed, sorted", [
    r("map of a lambda over constants", F.py_map_static, A(V)),
    r("sum(map(np.sin, x))", F.py_map_over_array, A(V)),
    r("zip of constant tuples", F.py_zip_static_tuples, A(V)),
    r("enumerate of a constant tuple", F.py_enumerate_static, A(V)),
    r("enumerate with start", F.py_enumerate_start, A(V)),
    r("reversed of a constant tuple", F.py_reversed_static, A(V)),
    r("reversed(range(...))", F.py_reversed_range, A(V)),
    r("sorted of constants", F.py_sorted_static, A(V)),
    r("sorted of run-time values", F.py_sorted_runtime_values, A(V)),
    r("sorted with key=", F.py_sorted_key, A(V)),
    r("itertools.product of ranges", F.py_itertools_product, A(V)),
    r("range(len(x))", F.py_range_len, A(V)),
])

block(PY, "Other forms around numbers", [
    r("chained comparison", F.py_chained_comparison, S(0.7)),
    r("augmented assignments += *= -= /= **=", F.py_augmented_ops, S(0.7)),
    r("@= on an array", F.py_augmented_matmul, A(MI, MI2)),
    r("a = b = expr", F.py_multiple_assign, S(0.7)),
    r("swap a, b = b, a + b", F.py_swap, S(0.7)),
    r("starred assignment a, *rest = ...", F.py_starred_assign, S(0.7)),
    r("conditional expression", F.py_ternary, S(0.7)),
    r("walrus in an if test", F.py_walrus, S(0.7)),
    r("module-level numeric constant", F.py_global_constant, S(0.7)),
    r("module-level array", F.py_global_array, A(V)),
    r("attributes set on an object made in the function (self.state in a method)",
      F.py_object_attribute_set, A(V)),
    r("an attribute set under an if on a run-time value (merged after it)",
      F.py_attribute_in_run_time_branch, A(V)),
    r("attributes changed in a run-time loop (carried by it)", F.py_attribute_in_run_time_loop,
      A(V)),
    r("obj.attr += v on an array the object made in __init__", F.py_attribute_array_iadd, A(V)),
    r("try: len(y) except TypeError, decided by the type of y", F.py_try_len_type_error, A(V)),
    r("a loop rebinding a view of the array it writes before reading it (y = out[i])",
      F.py_loop_rebinds_view_first, A(V)),
    r("a write after a loop into the array it made afresh on each iteration",
      F.py_write_after_fresh_loop, A(V)),
    r("with of a context manager of one's own class", F.py_with_own_manager, S(0.7)),
    r("global g set by a function, read by another", F.py_global_set, S(0.7)),
    r("f(*(g(v) for v in t)), a starred generator", F.py_starred_generator, A(V)),
    r("isinstance of a tuple written (a, b)", F.py_isinstance_tuple_display, S(0.7)),
    r("math.pi, np.e, math.tau, np.pi", F.py_math_constants, S(0.7)),
    r("pow builtin", F.py_pow_builtin, S(0.7)),
    r("abs, min, max builtins", F.py_abs_min_max, S(0.7)),
    r("divmod builtin", F.py_divmod_builtin, S(0.7)),
    r("float() and int() casts", F.py_float_int_casts, S(0.7)),
    r(".item() and float() of an element", F.py_item_and_float_of_element, A(V)),
    r("math.log with a base", F.py_math_log_base, S(0.7)),
    r("math.fsum", F.py_fsum, S(0.7)),
    r("try/except ZeroDivisionError", F.py_try_except_zero_division, S(0.7)),
    r("try/except ValueError whose handler runs", F.py_try_except_domain_handler, S(0.7)),
    r("try around writes at a mask and at x[i] in range(len(x))", F.py_try_mask_and_in_range,
      A(V)),
    r("`x is None or f(x)` with x None (short-circuit)", F.py_or_short_circuits_none, S(0.7)),
    r("`j < n and x[j] < t` at run time: x[j] read only where j < n", F.py_and_guards_an_index,
      A(V)),
    r("write into a reshape of a new array", F.py_write_into_reshape, A(V6)),
    r("ufunc out= and where=", F.py_ufunc_out_where, A(V3B)),
    r("assert on a shape", F.py_assert_shape, A(V)),
    r("raise on a bad shape", F.py_raise_on_bad_input, A(V)),
    r("del statement", F.py_del_statement, S(0.7)),
    r("pass and docstring", F.py_pass_and_docstring, S(0.7)),
    r("f-string", F.py_fstring_passes_through, S(0.7), P),
    r("print", F.py_print_passes_through, S(0.7), P),
    r("warnings.warn", F.py_warnings_warn_passes_through, S(0.7), P),
    r("while with a run-time trip count", F.py_while_counter, S(0.7)),
    r("nested function returning a tuple", F.py_nested_function_tuple_return, A(V)),
    r("dataclass argument", F.py_dataclass_params, A(0.7, F.Params(2.0, 1.0))),
    r("method call on an object argument", F.py_method_call_on_object, A(V, F.Model(np.array([1.0, 2.0, 0.5, 1.5])))),
    r("dict entry updated", F.py_dict_param_update, S(0.7)),
    r("list entries updated in a loop", F.py_list_index_assign_in_loop, A(V)),
    r("tuple assigned on both branches", F.py_tuple_returned_from_branch, S(0.7)),
    r("NumPy module alias (xp = np)", F.py_conditional_import_free_numpy_alias, A(V)),
    r("x[..., k]", F.py_ellipsis_index, A(M23)),
    r("x[None] * x[:, None]", F.py_none_index, A(V)),
    r("x[::-1]", F.py_negative_step_slice, A(V)),
    r("booleans as 0/1 factors", F.py_bool_arith, A(V)),
    r("int and float mixed", F.py_int_float_mix, S(0.7)),
    r("str.format", F.py_string_format_method, S(0.7), P),
    r("np.ndarray(shape, dtype) as an allocation", F.py_ndarray_allocation, A(V)),
    r("np.ndarray(n + 1, dtype=np.float64) of a computed size", F.py_ndarray_allocation_size,
      A(V)),
])


block(PY, "Forms from held-out real code (batch 3)", [
    r("a dict a called function writes into, read by the caller", F.py_dict_written_by_callee,
      A(V)),
    r("arrays appended over range(self.n), stacked by np.column_stack",
      F.py_list_of_arrays_range_attribute, A(V)),
    r("a, b = [list comprehension]", F.py_unpack_list_comprehension, A(V)),
    r("itertools.tee, next(it, None) and zip (pairwise)", F.py_itertools_tee_pairwise, A(V)),
    r("@property computed once and cached on self", F.py_property_computed_lazily, A(V)),
    r("flag is False of a bool known while building", F.py_is_false_known_while_building,
      A(V)),
    r("copy.deepcopy of an array, then written into", F.py_deepcopy_then_write, A(V)),
    r("a Numba function called through .py_func; x.setflags(write=False)",
      F.py_numba_py_func, A(V)),
])
block(NN, "Forms from held-out real code (batch 3)", [
    r("np.clip(a, lo, hi, out) with out by position", F.np_clip_out_by_position, A(V)),
    r("np.median(a, axis=k), keepdims=True", F.np_median_along_axis, A(M34)),
])
block(AS, "Forms from held-out real code (batch 3)", [
    r("scipy.spatial.distance.pdist(X, metric='cosine')", F.sp_pdist_cosine, A(M34)),
    r("scipy.stats.norm(mu, sd).logpdf of run-time parameters",
      F.sp_frozen_norm_runtime_params, A(V)),
    r("a frozen multivariate_normal made outside: .logpdf, .pdf",
      F.sp_frozen_mvn_made_outside, A(V)),
    r("scipy.special.hyp1f1 and hyp2f1 in their last argument", F.sp_hyp1f1_hyp2f1, A(V)),
])

block(PY, "Forms from held-out real code (batch 4)", [
    r("a, b = map(f, (x, m)) of a tuple written out (items of different ranks)",
      F.py_map_unpacked_display, A(V, M34), wrt=(0, 1)),
    r("x.shape in ((n, d), (n, d, d))", F.py_shape_in_tuple_of_shapes, A(M34)),
    r("a module's list of lists, a row read with a run-time index",
      F.py_module_table_row_at_run_time, A(V)),
    r("and/or with a number operand in a test (x[i] > 0 and i % 2)",
      F.py_and_or_number_operand_in_test, A(V)),
    r("if y < 0.0 of an array of one entry", F.py_truth_of_one_entry_array, A(V)),
])
block(NN, "Forms from held-out real code (batch 4)", [
    r("ufunc.outer (np.multiply.outer, np.subtract.outer, np.maximum.outer)",
      F.np_ufunc_outer, A(V, M34), wrt=(0, 1)),
])

block(PY, "Forms from held-out real code (batch 5)", [
    r("a list comprehension of arrays over the rows of np.asarray([a, b, c])",
      F.py_rows_of_a_stack_in_a_comprehension, A(M34)),
    r("a list built in a helper called on two shapes", F.py_list_in_a_helper_per_call_site,
      A(M34)),
])
block(NN, "Forms from held-out real code (batch 5)", [
    r("x ** (1 / 2.4) at 0 on the side np.where discards", F.np_root_slope_under_where, A(V)),
    r("np.roots of a list of computed coefficients", F.np_roots_of_a_list, A(V)),
    r("np.modf", F.np_modf, A(V)),
    r("np.gradient(f, coordinates, axis=0)", F.np_gradient_at_coordinates, A(V)),
])

block(PY, "Forms from held-out real code (tests on sizes, grown arrays)", [
    r("a name of another rank on each side of `if len(w) == n`", F.py_rank_differs_on_size_test,
      A(V)),
    r("None on one side of a test on x.shape[0]", F.py_none_on_size_test, A(V)),
    r("if/elif on x.shape[0], a number or an array", F.py_elif_on_length_ranks_differ, A(V)),
    r("X = np.hstack([X, col]) in a loop of run-time count", F.py_array_grown_by_hstack_in_loop,
      A(V, 3)),
    r("out = np.append(out, v) in a loop of run-time count", F.py_array_grown_by_append_in_loop,
      A(V, 3)),
    r("a list comprehension of 2x2 matrices, of run-time count, stacked",
      F.py_list_comprehension_of_matrices, A(V, 3)),
    r("np.vstack of a matrix and a vector; np.hstack of a vector and a number (NumPy's, not "
      "Numba's)", F.py_vstack_matrix_and_vector, A(V)),
])

block(NN, "Forms from held-out real code (batch 6)", [
    r("np.add.at / np.subtract.at with an index vector or a tuple of them",
      F.np_add_at_rows_and_pairs, A(V)),
    r("K[np.ix_(dofs, dofs)] += ke and K[np.ix_(free, free)]", F.np_ix_block_read_and_add,
      A(V)),
    r("np.diag of a list holding values", F.np_diag_of_a_list_of_values, A(V)),
])
block(PY, "Forms from held-out real code (batch 6)", [
    r("a complex array allocated, written in place in a loop and through x + 0j",
      F.py_complex_array_written, A(V)),
    r("obj.attr[i] = v; a, b = obj through its class's __iter__",
      F.py_object_attribute_item_and_iter, A(V)),
])
block(PY, "Forms from held-out real code (lists into helpers, kinds across ifs)", [
    r("a list comprehension passed to a helper: index, max, min, zip, sorted, len, sum",
      F.py_list_comprehension_to_a_helper, A(V)),
    r("x.tolist() passed to a helper that reads it as a list", F.py_tolist_to_a_helper, A(V)),
    r("lists passed through brentq's args= to the function solved",
      F.py_list_through_a_solvers_args, A(V)),
    r("cmps = range(len(xs)) held in a name, looped over; a matrix's .tolist() rows",
      F.py_range_held_in_a_name, A(V)),
    r("a number on one side of a run-time if, an array of one entry on the other",
      F.py_number_or_one_entry_array_across_if, A(V, 1.0)),
    r("the same, the number's side", F.py_number_or_one_entry_array_across_if, A(V, -1.0),
      id="py-number-or-one-entry-array-across-if-number"),
    r("x if flag else None on a bool argument (its value keys the code)",
      F.py_bool_argument_array_or_none, A(V, True)),
    r("the same, flag False", F.py_bool_argument_array_or_none, A(V, False),
      id="py-bool-argument-array-or-none-false"),
])
block(PY, "Forms from held-out real code (omitted defaults, lists over run-time counts)", [
    r("an omitted int default is a constant of the build (leggauss(n))",
      F.py_omitted_int_default_known, A(V)),
    r("a list of rows appended over a run-time count, .reverse()d",
      F.py_list_of_rows_reversed_run_time_count, A(V)),
    r("np.linalg.matrix_power with a power known only at run time",
      F.np_matrix_power_run_time, A(V)),
    r("[1.0] * n given straight to np.dot", F.py_repeated_list_into_numpy, A(V)),
])

block(PY, "Forms from held-out real code (batch 7)", [
    r("a decorator appending *args under an if, then f(*newargs)",
      F.py_decorator_appends_args_under_if, A(V)),
    r("operators of the user's class (0.5 * q: its __rmul__) on a complex matrix; complex "
      "solve and inv", F.py_user_operators_on_a_complex_matrix, A(V)),
    r("np.emath.arcsin past the real domain (complex)", F.py_emath_arcsin_past_the_domain,
      A(V)),
])
block(NN, "Forms from held-out real code (batch 7)", [
    r("np.interp at a matrix of points; x[mask] = 0.0 through a mask of rank 4",
      F.np_interp_at_a_matrix_and_mask_write_rank4, A(V)),
])

block(PY, "Forms from held-out real code (scipy.sparse, eig)", [
    r("scipy.sparse coo_matrix assembly (duplicates add up), + A.T, eye, spsolve, diagonal",
      F.py_sparse_coo_assembly_spsolve, A(V)),
    r("scipy.sparse csr_matrix: * is the matrix product (C.T * Y * C, A * x), multiply",
      F.py_sparse_matrix_star_is_a_product, A(V)),
    r("scipy.linalg.solve_continuous_are (LQR of an unstable system) and its gain",
      F.py_continuous_are_lqr, A(V)),
])
block(NN, "Forms from held-out real code (scipy.sparse, eig)", [
    r("np.linalg.eigvals of a real matrix with complex eigenvalues (built again complex)",
      F.nn_eigvals_of_a_real_matrix_complex, A(V)),
])

block(PY, "Forms from held-out real code (batch 7b)", [
    r("a global list of names; a tuple sliced by the indices of short loops (unrolled); "
      "mult = 1.0 becoming an array in a short loop", F.py_global_names_and_a_short_loop_unrolled,
      A(V)),
    r("an attribute set on some paths of an if/elif chain; getattr(self, 'at_' + at)[k] = v",
      F.py_attribute_on_some_paths_and_dict_attribute, A(V)),
    r("x = [f(v) for v in x], a list rebound to a comprehension over itself",
      F.py_list_rebound_to_its_own_comprehension, A(V)),
])
block(NN, "Forms from held-out real code (batch 7b)", [
    r("np.concatenate of lists holding values; complex np.hstack, astype(complex), lstsq",
      F.np_concatenate_lists_and_complex_lstsq, A(V)),
])

block(PY, "Forms from held-out real code (batch 8: objects in loops, quad, lambertw)", [
    r("an object of the user's class rebound in a loop over a run-time count, on both sides "
      "of an if", F.py_object_rebound_in_a_run_time_loop, A(V)),
    r("scipy.integrate.quad of a function with args=, and of a closure to np.inf",
      F.py_quad_finite_and_infinite_limits, A(V)),
    r("scipy.special.lambertw(z).real; x[idx, 1] = v (repeated index) and x[1, 1:] += v",
      F.py_lambertw_real_and_axis_writes, A(V)),
    r("try: 1 / np.sqrt(f(x)) except ZeroDivisionError, f the user's function",
      F.py_try_zero_division_around_a_call, A(V)),
])

block(PY, "Forms from held-out real code (batch 8a)", [
    r("(-1) ** (i + j) in loops that run at run time", F.py_signed_terms_in_run_time_loops,
      A(V)),
    r("a module variable set (global g) before any read, left set",
      F.py_module_variable_set_before_read, A(V)),
    r("for over zip()/reversed() of lists an object's attributes hold",
      F.py_zip_reversed_over_attribute_lists, A(V)),
    r("scipy.sparse.diags of a rectangular shape", F.py_sparse_diags_rectangular_attribute,
      A(V)),
    r("np.linalg.inv of a stack of complex matrices; np.zeros_like of a complex array",
      F.py_complex_stack_inv_zeros_like, A(V)),
    r("if e.size > 1: return e / else: return e[0] (decided by the call's sizes)",
      F.py_size_test_returns_other_ranks, A(V)),
    r("a dict of the user's class keeps its attributes; d['a{}'.format(i)] in a short loop",
      F.py_dict_subclass_keys_by_format, A(V)),
])

block(PY, "Forms from held-out real code (lists, hleft7)", [
    r("list(x) of a run-time length joined by + to list displays, and appended to in a loop "
      "that reads the items so far (nodes[k], nodes[-1], len)",
      F.py_list_of_an_array_joined_and_appended, A(V)),
    r("`dict(zip(NAMES, x))`; `S['S1'][j] = v` into a dict's array",
      F.py_dict_of_zip_and_a_dict_entry_written, A(V)),
])

block(PY, "Forms from held-out real code (batch 8c: example galleries)", [
    r("a functools.partial as the differentiated function (JAX's GP example)",
      F.py_functools_partial_differentiated, A(V), id="py-functools-partial-differentiated"),
    r("jitgrad.vmap of a lambda calling vmap of a lambda, inside the function (a Gram matrix)",
      F.py_vmap_of_lambdas_inside, A(V)),
])

block(PY, "Forms from held-out real code (batch 8b)", [
    r("objects an __init__ makes, their attributes set after; a list state rebound in a while",
      F.py_init_made_parts_and_a_list_state, A(V)),
    r("xs[-1] and len(xs) in the loop appending to xs; np.mean(xs[k:]) of a list",
      F.py_list_read_in_the_loop_appending_to_it, A(V)),
    r("a list of ints is an int array (K[np.ix_(keep, keep)]); CubicSpline of graph values; "
      "eigh subset_by_index", F.py_int_list_ix_and_cubic_spline, A(V)),
    r("scipy.integrate.cumulative_trapezoid; np.block; np.delete along axis 1; D[..., idx2d]",
      F.py_cumulative_trapezoid_block_delete_ellipsis, A(V)),
])

block(PY, "Forms from held-out real code (batch 9b)", [
    r("`self.lx = [1.0]` then `self.lx.append(...)` in a loop; an OrderedDict attribute a "
      "method writes; a @property returning a list comprehension",
      F.py_held_list_ordered_dict_property, A(V)),
    r("`np.arange(x[0], 3.0, 0.25)` (a start of the graph); butter of a float default + "
      "filtfilt; scipy.signal.welch", F.py_arange_of_graph_start_and_filters, A(V)),
    r("binom.pmf at p = 0 and 1; `zip(obs[:-1], obs[1:])` of known pairs; "
      "median_abs_deviation; `np.array_split(x, len(x) // 2)`", F.py_binom_pmf_mad_and_pairs, A(V)),
])

block(PY, "Forms from held-out real code (batch 9c: JAX's Autodiff Cookbook)", [
    r("jitgrad.jvp(grad(f), (x,), (v,)) and y, vjp_fn = jitgrad.vjp(f, x) inside the function; "
      "np.vstack of a list of tuples", F.py_jvp_and_vjp_inside, A(V)),
    r("jitgrad.vmap of a vjp_fn inside the function; vmap with in_axes=1 of a function "
      "returning a tuple", F.py_vmap_of_a_vjp_fn_along_axis_1, A(V)),
    r("raise ValueError in a try whose except ValueError returns",
      F.py_raise_to_a_returning_handler, A(V)),
    r("a NumPy ufunc as the differentiated function (grad(np.tanh))",
      F.py_ufunc_differentiated, S(0.35), id="py-ufunc-differentiated"),
])

block(PY, "Forms from held-out real code (hleft8)", [
    r("a dict two objects' attributes hold, changed by a loop of 20 steps (its first iteration "
      "apart: new keys); a local dict changed by a loop (not unrolled)",
      F.py_dict_carried_by_a_loop, A(V)),
    r("scipy.integrate.solve_ivp backwards with t_eval; np.einsum('ijj->ij', F)[...] = v",
      F.py_solve_ivp_and_einsum_diagonal_written, A(V), rtol=1e-6),
    r("a slice of a list bound to a name and passed on (x_ks = x[1:4])",
      F.py_list_slice_passed_on, A(V)),
    r("scipy.special.sph_harm_y of orders known while building (dipy's real SH basis)",
      F.py_sph_harm_y_real_basis, A(V)),
])

block(PY, "Forms from held-out real code (batch 9a)", [
    r("a RectBivariateSpline made outside, .ev(x, y) and called on a grid at values of the graph",
      F.py_rect_bivariate_spline_ev, A(V)),
    r("np.fft.fftfreq, np.pad, np.trapezoid(axis=1) and math.factorial of an argument's size",
      F.py_fftfreq_pad_trapezoid_of_runtime_sizes, A(V)),
])

ROWS: list[Row] = list(_ROWS)

_ids = [row.id for row in ROWS]
assert len(_ids) == len(set(_ids)), "duplicate row ids"
