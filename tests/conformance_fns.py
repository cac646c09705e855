"""Conformance probes for issue #43: one tiny function per feature of the spec.

The spec is three public surfaces (see tests/conformance.py for the table of rows):

1. Python and NumPy as Numba compiles them (Numba's reference pages "Supported Python
   features" and "Supported NumPy features"); these probes are code numba.njit compiles
   (helpers they call are @numba.njit, as Numba requires).
2. NumPy and SciPy as autograd differentiates them (autograd/numpy/numpy_vjps.py,
   numpy_jvps.py, linalg.py, fft.py and autograd/scipy/); plain NumPy/SciPy as autograd
   users write it.
3. Plain Python used around numbers.

Every probe takes a float or a small float array (plus non-differentiable extras) and
returns a float.  Written for this table; no code is taken from Numba or autograd.
"""

import cmath
import collections
import copy
import ctypes
import ctypes.util
import dataclasses
import enum
import functools
import heapq
import itertools
import math
import operator
import random
import warnings
from functools import partial

import numpy as np
import scipy._lib.array_api_extra as xpx
import scipy.integrate
import scipy.interpolate
import scipy.linalg
import scipy.optimize
import scipy.signal
import scipy.sparse
import scipy.sparse.linalg
import scipy.spatial.distance
import scipy.special
import scipy.stats
from numba import literal_unroll, njit, objmode
from numba import types as nbt
from numba.typed import Dict as TDict
from numba.typed import List as TList
from numba.typed import Set as TSet
from scipy._lib._array_api import array_namespace, xp_promote

import jitgrad

# =====================================================================================
# 1a. numba-python: "Supported Python features"
# =====================================================================================

# ---- Language / Constructs --------------------------------------------------------

def npy_if_elif_else(x):
    if x > 1.0:
        y = x * x
    elif x > 0.0:
        y = 3.0 * x * x
    else:
        y = -x
    return y


def npy_while(x):
    s = 0.0
    k = 0
    while k < 4:
        s = s * x + 1.0
        k += 1
    return s


def npy_for_range(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def npy_for_in_array(x):
    s = 0.0
    for v in x:
        s += math.sin(v)
    return s


def npy_break(x):
    s = 0.0
    for i in range(x.shape[0]):
        if s > 1.0:
            break
        s += x[i] * x[i]
    return s


def npy_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.5:
            continue
        s += x[i] ** 3
    return s


@njit
def _gen_powers(x, n):
    p = 1.0
    for i in range(n):
        yield p
        p = p * x


def npy_yield(x):
    s = 0.0
    for v in _gen_powers(x, 4):
        s += v
    return s


def npy_assert(x):
    assert x > 0.0
    return math.log(x) * x


def npy_assert_msg(x):
    assert x.shape[0] > 1, "need at least two entries"
    return np.sum(x * x)


def npy_try_except_bare(x):
    try:
        y = x * x
    except:
        y = 0.0
    return y


def npy_try_except_exception(x):
    try:
        y = math.sqrt(x) * x
    except Exception:
        y = 0.0
    return y


def npy_try_except_else_finally(x):
    y = 0.0
    try:
        y = x * 2.0
    except Exception:
        y = -1.0
    else:
        y = y * x
    finally:
        y = y + x
    return y


def npy_try_finally(x):
    y = x
    try:
        y = y * y
    finally:
        y = y + 1.0
    return y


def npy_raise_class(x):
    if x < 0.0:
        raise ValueError
    return x * x


def npy_raise_args(x):
    if x.shape[0] == 0:
        raise ValueError("empty input")
    return np.sum(np.exp(x))


class NpyUserError(ValueError):
    """An exception class of the user's (Numba raises these too)."""


def npy_raise_user_class(x):
    if x < -100.0:
        raise NpyUserError("x too small")
    return x * x


def npy_raise_runtime_cond(x):
    s = np.sum(x)
    if s < -100.0:
        raise ValueError("sum too small")
    return s * s


def npy_objmode(x):
    y = x * x
    with objmode(k="int64"):
        k = len("abc")
    return y * k


def npy_list_comprehension(x):
    a = np.array([v * v for v in x])
    return np.sum(a)


def npy_array_comprehension_nested(x):
    n = x.shape[0]
    a = np.array([[x[i] * x[j] for i in range(n)] for j in range(n)])
    return np.sum(np.sin(a))


def npy_list_comprehension_sum(x):
    return sum([math.exp(v) for v in x])


def npy_nested_list_comprehension(x):
    rows = [[x[i] * j for j in range(3)] for i in range(x.shape[0])]
    s = 0.0
    for r in rows:
        for v in r:
            s += v * v
    return s


# ---- Functions --------------------------------------------------------------------

@njit
def _axpy(a, x, y=1.0):
    return a * x + y


@njit
def _sum_star(*args):
    s = 0.0
    for a in args:
        s += a
    return s


@njit
def _sq(t):
    return t * t


@njit
def _apply(fn, t):
    return fn(t) + t


@njit
def _rpow(x, n):
    if n == 0:
        return 1.0
    return x * _rpow(x, n - 1)


@njit
def _rsum(x, i):
    if i < 0:
        return 0.0
    return x[i] * x[i] + _rsum(x, i - 1)


def npy_call_named(x):
    return _axpy(y=0.5, x=x, a=3.0) * x


def npy_call_default(x):
    return _axpy(2.0, x) * x


def npy_call_star_args(x):
    return _sum_star(x, x * x, 2.0)


def npy_inner_function(x):
    def sq(t):
        return t * t + 1.0
    return sq(x) * sq(2.0 * x)


def npy_closure_variable(x):
    c = 3.0 * x

    def f(t):
        return t * c
    return f(x) + f(1.0)


def npy_nonlocal_once(x):
    acc = 0.0

    def setit(t):
        nonlocal acc
        acc = t * t
    setit(x)
    return acc + x


def npy_function_as_argument(x):
    return _apply(_sq, x)


def npy_recursion(x):
    return _rpow(x, 3)


def npy_recursion_array(x):
    return _rsum(x, x.shape[0] - 1)


# ---- Generators -------------------------------------------------------------------

def npy_generator_next(x):
    g = _gen_powers(x, 3)
    a = next(g)
    b = next(g)
    c = next(g)
    return a + b * c


# ---- Built-in types ---------------------------------------------------------------

def npy_int_arith(x):
    n = 7 // 2 + 3 % 2
    return x * x * n


def npy_int_attrs(x):
    k = 3
    return x * (k.real + k.imag + k.conjugate())


def npy_bool_truth(x):
    flag = True
    if flag and not False:
        return x * x
    return x


def npy_float_real(x):
    return x.real * x


def npy_float_imag(x):
    return x.imag + x * x


def npy_float_conjugate(x):
    return x.conjugate() * x


def npy_complex_arith(x):
    z = complex(x, 0.5)
    w = z * z + 1.0
    return w.real + w.imag


def npy_complex_conjugate(x):
    z = complex(x, 2.0)
    return (z * z.conjugate()).real


def npy_complex_abs(x):
    z = complex(x, 0.5)
    return abs(z * z)


def npy_str_concat(x):
    s = "ab" + "cd"
    return x * x * len(s)


def npy_str_repeat(x):
    s = "ab" * 3
    return x * x * len(s)


def npy_str_in(x):
    if "b" in "abc":
        return x * x
    return x


def npy_str_compare(x):
    if "abc" < "abd":
        return x * x
    return x


def npy_str_of_int(x):
    s = str(123)
    return x * x * len(s)


def npy_str_strip_upper_find(x):
    s = "  hello  ".strip().upper()
    n = s.find("L")
    return x * x * (n + 1)


def npy_str_split_join(x):
    parts = "a,b,c".split(",")
    s = "-".join(parts)
    return x * x * len(s)


def npy_str_startswith(x):
    s = "model_v2"
    if s.startswith("model") and s.endswith("2"):
        return x * x
    return x


def npy_str_replace_count(x):
    s = "aXbXc".replace("X", "")
    return x * x * (len(s) + s.count("b"))


def npy_str_is_methods(x):
    s = "123"
    if s.isdigit() and not s.isalpha():
        return x * x
    return x


def npy_str_fstring(x):
    n = 3
    s = f"step_{n}"
    return x * x * len(s)


def npy_str_slice(x):
    s = "abcdef"[1:4]
    return x * x * len(s)


def npy_tuple_construct(x):
    t = (x, 2.0 * x, 3.0)
    return t[0] * t[1] + t[2]


def npy_tuple_unpack(x):
    a, b = (x, x * x)
    return a * b


def npy_tuple_compare(x):
    if (1, 2) < (1, 3):
        return x * x
    return x


def npy_tuple_iterate(x):
    t = (x, 2.0, x * x)
    s = 0.0
    for v in t:
        s += v * v
    return s


def npy_tuple_index_runtime(x):
    t = (x, 2.0 * x, x * x)
    s = 0.0
    for i in range(3):
        s += t[i] * (i + 1)
    return s


def npy_tuple_concat(x):
    t = (x, 1.0) + (x * x,)
    return t[0] + t[2] * t[1]


def npy_tuple_const_slice(x):
    t = (x, 2.0 * x, 3.0 * x, 4.0)
    u = t[1:3]
    return u[0] * u[1]


def npy_tuple_index_method(x):
    t = (1, 2, 3)
    k = t.index(2)
    return x ** (k + 1)


def npy_tuple_heterogeneous(x):
    t = (x, 2, "a")
    return t[0] * t[1]


def npy_literal_unroll(x):
    t = (x, 2, 0.5)
    s = 0.0
    for v in literal_unroll(t):
        s += v * x
    return s


def npy_list_literal(x):
    lst = [x, 2.0 * x, x * x]
    return lst[0] + lst[1] * lst[2]


def npy_list_append_loop(x):
    lst = []
    for i in range(x.shape[0]):
        lst.append(x[i] ** 2)
    s = 0.0
    for v in lst:
        s += v
    return s


def npy_list_of_arrays(x):
    lst = []
    for i in range(3):
        lst.append(x * (i + 1.0))
    s = 0.0
    for a in lst:
        s += np.sum(a * a)
    return s


def npy_list_setitem(x):
    lst = [1.0, 2.0, 3.0]
    lst[1] = x * x
    return lst[0] + lst[1] * lst[2]


def npy_list_pop(x):
    lst = [x, x * x, 3.0]
    v = lst.pop()
    w = lst.pop(0)
    return v * w + lst[0]


def npy_list_insert(x):
    lst = [1.0, 2.0]
    lst.insert(1, x)
    return lst[0] + lst[1] * lst[1] + lst[2]


def npy_list_extend(x):
    lst = [x]
    lst.extend([x * x, 2.0])
    return lst[0] * lst[1] + lst[2]


def npy_list_reverse(x):
    lst = [x, 2.0, 3.0]
    lst.reverse()
    return lst[0] * lst[2]


def npy_list_sort(x):
    lst = [x[0], x[1], x[2]]
    lst.sort()
    return lst[0] + 2.0 * lst[1] + 3.0 * lst[2]


def npy_list_slice(x):
    lst = [x, 2.0 * x, x * x]
    tail = lst[1:]
    return tail[0] * tail[1]


def npy_list_len_index_count(x):
    lst = [1, 2, 2, 3]
    return x * x * (len(lst) + lst.index(3) + lst.count(2))


def npy_list_argument(x, lst):
    s = 0.0
    for v in lst:
        s += v * x
    return s * x


def npy_list_in(x):
    lst = [1, 2, 3]
    if 2 in lst:
        return x * x
    return x


def npy_list_initial_value(x):
    lst = [1, 2, 3]
    return x * lst[0] + x * x * lst[2]


def npy_typed_list_inside(x):
    lst = TList()
    for v in x:
        lst.append(v * v)
    s = 0.0
    for v in lst:
        s += v
    return s


def npy_typed_list_argument(x, lst):
    s = 0.0
    for i in range(len(lst)):
        s += lst[i] * x * x
    return s


def npy_typed_list_nested(x):
    outer = TList()
    for i in range(2):
        inner = TList()
        for v in x:
            inner.append(v * (i + 1.0))
        outer.append(inner)
    s = 0.0
    for inner in outer:
        for v in inner:
            s += v * v
    return s


def npy_literal_list(x):
    cfg = ["scale", 2]
    return x * x * cfg[1]


def npy_set_in(x):
    s = {1, 2, 3}
    if 2 in s:
        return x * x
    return x


def npy_set_add_len(x):
    s = set()
    s.add(3)
    s.add(3)
    s.add(4)
    return x * x * len(s)


def npy_set_of_values(x):
    s = {x[0], x[1], x[0]}
    return np.sum(x * x) * len(s)


def npy_typed_set(x):
    s = TSet()
    s.add(1)
    s.add(2)
    return x * x * len(s)


def npy_dict_empty_setitem(x):
    d = dict()
    d["a"] = x * x
    d["b"] = 2.0
    return d["a"] * d["b"]


def npy_dict_braces(x):
    d = {"a": x, "b": 3.0}
    return d["a"] * d["b"] * d["a"]


def npy_dict_int_keys_loop(x):
    d = {}
    for i in range(x.shape[0]):
        d[i] = x[i] ** 2
    s = 0.0
    for k in d:
        s += d[k]
    return s


def npy_dict_from_iterable(x):
    d = dict([(1, x), (2, 2.0 * x)])
    return d[1] * d[2]


def npy_dict_comprehension(x):
    d = {i: x[i] * x[i] for i in range(3)}
    return d[0] + d[1] * d[2]


def npy_typed_dict_empty(x):
    d = TDict.empty(key_type=nbt.int64, value_type=nbt.float64)
    for i in range(x.shape[0]):
        d[i] = math.exp(x[i])
    s = 0.0
    for v in d.values():
        s += v
    return s


def npy_typed_dict_argument(x, d):
    return x * x * d["w"]


def npy_dict_items(x):
    d = {"a": x, "b": x * x}
    s = 0.0
    for k, v in d.items():
        s += v
    return s


def npy_dict_get(x):
    d = {"a": x * x}
    return d.get("a", 0.0) + d.get("c", 1.0)


def npy_dict_in_len(x):
    d = {"a": 1.0, "b": 2.0}
    if "a" in d:
        return x * x * len(d)
    return x


def npy_literal_str_key_dict(x):
    d = {"a": x, "b": 2, "c": "name"}
    return d["a"] * d["a"] * d["b"]


def npy_dict_pop(x):
    d = {1: x, 2: x * x}
    v = d.pop(2)
    return v + d[1]


@njit
def _maybe_scale(x, w):
    if w is None:
        return x * x
    return x * w


def npy_none_identity(x):
    return _maybe_scale(x, None)


def npy_bytes_len(x, b):
    return x * x * len(b) + b[0]


def npy_bytearray_iter(x, b):
    s = 0
    for c in b:
        s += c
    return x * x * s


def npy_memoryview(x, m):
    return x * x * (len(m) + m.ndim)


# ---- Built-in functions -----------------------------------------------------------

def npy_abs(x):
    return abs(x) * x


def npy_bool(x):
    if bool(x):
        return x * x
    return x


def npy_chr_ord(x):
    c = chr(65)
    return x * x * (ord(c) - 64)


def npy_complex_builtin(x):
    z = complex(x, x * x)
    return z.real + z.imag


def npy_divmod(x):
    q, r = divmod(x, 0.3)
    return r * r + q


def npy_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s += i * v * v
    return s


@njit
def _positive(t):
    return t > 0.5


def npy_filter(x):
    s = 0.0
    for v in filter(_positive, x):
        s += v * v
    return s


def npy_float_builtin(x):
    n = 3
    return float(n) * x * x


def npy_getattr(x):
    return getattr(x, "real") * x


def npy_hasattr(x):
    if hasattr(x, "shape"):
        return np.sum(x * x)
    return 0.0


def npy_hash(x):
    h = hash(7)
    return x * x * (h % 5)


def npy_int_builtin(x):
    n = int(x * 3.0)
    return x * x * n


def npy_iter_next(x):
    it = iter(x)
    a = next(it)
    b = next(it)
    return a * b


def npy_isinstance(x):
    if isinstance(x, float):
        return x * x
    return x


def npy_len(x):
    return np.sum(x) * len(x)


def npy_min_max(x):
    return max(x, 0.5) * min(x, 2.0)


def npy_min_max_array(x):
    return max(x) - min(x)


def npy_map(x):
    s = 0.0
    for v in map(_sq, x):
        s += v
    return s


def npy_print(x):
    y = x * x
    print("value", 1)
    return y


def npy_range_step(x):
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -2):
        s += x[i] * x[i]
    return s


def npy_repr(x):
    s = repr(42)
    return x * x * len(s)


def npy_round(x):
    return round(x) * x


def npy_round_ndigits(x):
    return round(x, 1) * x + x * x


def npy_sorted(x):
    t = sorted([x[2], x[0], x[1]])
    return t[0] * 1.0 + t[1] * 2.0 + t[2] * 3.0


def npy_sum(x):
    return sum(x) * sum(x)


def npy_str_builtin(x):
    return x * x * len(str(10))


def npy_type(x):
    if type(x) is float:
        return x * x
    return x


def npy_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


# ---- Standard library modules -----------------------------------------------------

def npy_array_array(x, a):
    return x * x * a[0] + len(a)


def npy_cmath_acos(x):
    return cmath.acos(complex(x, 0.2)).real


def npy_cmath_acosh(x):
    return cmath.acosh(complex(x, 0.2)).real


def npy_cmath_asin(x):
    return cmath.asin(complex(x, 0.2)).real


def npy_cmath_asinh(x):
    return cmath.asinh(complex(x, 0.2)).real


def npy_cmath_atan(x):
    return cmath.atan(complex(x, 0.2)).real


def npy_cmath_atanh(x):
    return cmath.atanh(complex(x, 0.2)).real


def npy_cmath_cos(x):
    return cmath.cos(complex(x, 0.2)).real


def npy_cmath_cosh(x):
    return cmath.cosh(complex(x, 0.2)).real


def npy_cmath_exp(x):
    return cmath.exp(complex(x, 0.2)).real


def npy_cmath_isfinite(x):
    if cmath.isfinite(complex(x, 0.0)):
        return x * x
    return x


def npy_cmath_isinf(x):
    if cmath.isinf(complex(x, 0.0)):
        return x
    return x * x


def npy_cmath_isnan(x):
    if cmath.isnan(complex(x, 0.0)):
        return x
    return x * x


def npy_cmath_log(x):
    return cmath.log(complex(x, 0.2)).real


def npy_cmath_log10(x):
    return cmath.log10(complex(x, 0.2)).real


def npy_cmath_phase(x):
    return cmath.phase(complex(x, 0.5))


def npy_cmath_polar(x):
    r, phi = cmath.polar(complex(x, 0.5))
    return r * phi


def npy_cmath_rect(x):
    return cmath.rect(x, 0.3).imag


def npy_cmath_sin(x):
    return cmath.sin(complex(x, 0.2)).real


def npy_cmath_sinh(x):
    return cmath.sinh(complex(x, 0.2)).real


def npy_cmath_sqrt(x):
    return cmath.sqrt(complex(x, 0.2)).real


def npy_cmath_tan(x):
    return cmath.tan(complex(x, 0.2)).real


def npy_cmath_tanh(x):
    return cmath.tanh(complex(x, 0.2)).real


Point = collections.namedtuple("Point", ["px", "py"])


def npy_namedtuple(x):
    p = Point(px=x, py=2.0)
    return p.px * p.py * p.px


def npy_namedtuple_index(x):
    p = Point(x, x * x)
    a, b = p
    return p[0] * b + a


_libm = ctypes.CDLL(ctypes.util.find_library("m"))
c_cos = _libm.cos
c_cos.argtypes = (ctypes.c_double,)
c_cos.restype = ctypes.c_double


def npy_ctypes_call(x):
    return c_cos(x) * x


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


class Scale(enum.IntEnum):
    ONE = 1
    THREE = 3


def npy_enum(x):
    m = Mode.FAST
    if m == Mode.FAST:
        return x * x
    return x


def npy_intenum(x):
    return x * x * Scale.THREE.value


def npy_math_acos(x):
    return math.acos(x)


def npy_math_acosh(x):
    return math.acosh(x)


def npy_math_asin(x):
    return math.asin(x)


def npy_math_asinh(x):
    return math.asinh(x)


def npy_math_atan(x):
    return math.atan(x)


def npy_math_atan2(x):
    return math.atan2(x, 0.7) + math.atan2(0.3, x)


def npy_math_atanh(x):
    return math.atanh(x)


def npy_math_ceil(x):
    return math.ceil(x) * x


def npy_math_copysign(x):
    return math.copysign(x, -1.0) * x + math.copysign(2.0, x) * x


def npy_math_cos(x):
    return math.cos(x)


def npy_math_cosh(x):
    return math.cosh(x)


def npy_math_degrees(x):
    return math.degrees(x)


def npy_math_erf(x):
    return math.erf(x)


def npy_math_erfc(x):
    return math.erfc(x)


def npy_math_exp(x):
    return math.exp(x)


def npy_math_exp2(x):
    return math.exp2(x)


def npy_math_expm1(x):
    return math.expm1(x)


def npy_math_fabs(x):
    return math.fabs(x) * x


def npy_math_floor(x):
    return math.floor(x) * x


def npy_math_frexp(x):
    m, e = math.frexp(x)
    return m * e + m


def npy_math_gamma(x):
    return math.gamma(x)


def npy_math_gcd(x):
    return x * x * math.gcd(12, 18)


def npy_math_hypot(x):
    return math.hypot(x, 0.4)


def npy_math_isfinite(x):
    if math.isfinite(x):
        return x * x
    return x


def npy_math_isinf(x):
    if math.isinf(x):
        return x
    return x * x


def npy_math_isnan(x):
    if math.isnan(x):
        return x
    return x * x


def npy_math_ldexp(x):
    return math.ldexp(x, 3)


def npy_math_lgamma(x):
    return math.lgamma(x)


def npy_math_log(x):
    return math.log(x)


def npy_math_log2(x):
    return math.log2(x)


def npy_math_log10(x):
    return math.log10(x)


def npy_math_log1p(x):
    return math.log1p(x)


def npy_math_nextafter(x):
    return math.nextafter(x, 10.0) * x


def npy_math_pow(x):
    return math.pow(x, 2.5) + math.pow(1.5, x)


def npy_math_radians(x):
    return math.radians(x)


def npy_math_sin(x):
    return math.sin(x)


def npy_math_sinh(x):
    return math.sinh(x)


def npy_math_sqrt(x):
    return math.sqrt(x)


def npy_math_tan(x):
    return math.tan(x)


def npy_math_tanh(x):
    return math.tanh(x)


def npy_math_trunc(x):
    return math.trunc(x) * x


def npy_math_constants(x):
    return math.pi * x * x + math.e * x


# operator ---------------------------------------------------------------------------

def npy_op_add(x):
    return operator.add(x, x * x)


def npy_op_and(x):
    if operator.and_(x > 0.0, x < 5.0):
        return x * x
    return x


def npy_op_eq(x):
    if operator.eq(x, 3.0):
        return x
    return x * x


def npy_op_floordiv(x):
    return operator.floordiv(x, 0.3) * x


def npy_op_ge(x):
    if operator.ge(x, 0.1):
        return x * x
    return x


def npy_op_gt(x):
    if operator.gt(x, 0.1):
        return x * x
    return x


def npy_op_iadd(x):
    return operator.iadd(x, x * x)


def npy_op_iand(x):
    k = operator.iand(6, 3)
    return x * x * k


def npy_op_ifloordiv(x):
    return operator.ifloordiv(x, 0.3) * x


def npy_op_ilshift(x):
    return x * x * operator.ilshift(1, 2)


def npy_op_imatmul(x, w):
    return np.sum(operator.imatmul(x, w))


def npy_op_imod(x):
    return operator.imod(x, 0.3) * x


def npy_op_imul(x):
    return operator.imul(x, x)


def npy_op_invert(x):
    return x * x * operator.invert(-3)


def npy_op_ior(x):
    return x * x * operator.ior(4, 1)


def npy_op_ipow(x):
    return operator.ipow(x, 3.0)


def npy_op_irshift(x):
    return x * x * operator.irshift(8, 2)


def npy_op_isub(x):
    return operator.isub(x * x, 3.0 * x)


def npy_op_itruediv(x):
    return operator.itruediv(1.0, x)


def npy_op_ixor(x):
    return x * x * operator.ixor(5, 1)


def npy_op_le(x):
    if operator.le(x, 5.0):
        return x * x
    return x


def npy_op_lshift(x):
    return x * x * operator.lshift(1, 3)


def npy_op_lt(x):
    if operator.lt(x, 5.0):
        return x * x
    return x


def npy_op_matmul(x, w):
    return np.sum(operator.matmul(w, x) ** 2)


def npy_op_mod(x):
    return operator.mod(x, 0.3) * x


def npy_op_mul(x):
    return operator.mul(x, x)


def npy_op_ne(x):
    if operator.ne(x, 3.0):
        return x * x
    return x


def npy_op_neg(x):
    return operator.neg(x) * x * x


def npy_op_not(x):
    if operator.not_(x > 5.0):
        return x * x
    return x


def npy_op_or(x):
    if operator.or_(x > 5.0, x > 0.1):
        return x * x
    return x


def npy_op_pos(x):
    return operator.pos(x) * x


def npy_op_pow(x):
    return operator.pow(x, 3.0) + operator.pow(2.0, x)


def npy_op_rshift(x):
    return x * x * operator.rshift(16, 2)


def npy_op_sub(x):
    return operator.sub(x * x, x)


def npy_op_truediv(x):
    return operator.truediv(x * x, 1.0 + x)


def npy_op_xor(x):
    return x * x * operator.xor(6, 3)


# functools --------------------------------------------------------------------------

@njit
def _mul(a, b):
    return a * b


def npy_functools_reduce(x):
    return functools.reduce(_mul, x, 1.0)


# random (draws pass through: the gradient does not depend on them) -----------------

def npy_random_random(x):
    random.seed(1)
    r = random.random()
    return x * x + r


def npy_random_gauss(x):
    random.seed(2)
    return x * x + random.gauss(0.0, 1.0)


def npy_random_uniform(x):
    random.seed(3)
    return x * x + random.uniform(1.0, 2.0)


def npy_random_randint(x):
    random.seed(4)
    k = random.randint(1, 3)
    return x * x * k


def npy_random_randrange(x):
    random.seed(5)
    k = random.randrange(1, 10, 2)
    return x * x * k


def npy_random_getrandbits(x):
    random.seed(6)
    k = random.getrandbits(3)
    return x * x + k


def npy_random_shuffle(x):
    random.seed(7)
    idx = np.arange(4)
    random.shuffle(idx)
    return x * x * idx[0]


def npy_random_distributions(x):
    random.seed(8)
    r = (random.betavariate(2.0, 3.0) + random.expovariate(1.5) + random.gammavariate(2.0, 1.0)
         + random.lognormvariate(0.0, 0.5) + random.normalvariate(0.0, 1.0)
         + random.paretovariate(3.0) + random.triangular(0.0, 1.0, 0.5)
         + random.vonmisesvariate(0.0, 1.0) + random.weibullvariate(1.0, 2.0))
    return x * x + r


# heapq ------------------------------------------------------------------------------

def npy_heapq_heapify_heappop(x):
    h = [x[0], x[1], x[2], x[3]]
    heapq.heapify(h)
    a = heapq.heappop(h)
    b = heapq.heappop(h)
    return a + 2.0 * b


def npy_heapq_heappush(x):
    h = [x[0]]
    heapq.heappush(h, x[1])
    heapq.heappush(h, x[2])
    return heapq.heappop(h) * 3.0 + h[0]


def npy_heapq_heappushpop(x):
    h = [x[0], x[1]]
    heapq.heapify(h)
    v = heapq.heappushpop(h, x[2])
    return v * 2.0 + h[0]


def npy_heapq_heapreplace(x):
    h = [x[0], x[1]]
    heapq.heapify(h)
    v = heapq.heapreplace(h, x[2])
    return v * 2.0 + h[0] * h[1]


def npy_heapq_nlargest(x):
    t = heapq.nlargest(2, [x[0], x[1], x[2], x[3]])
    return t[0] * 2.0 + t[1]


def npy_heapq_nsmallest(x):
    t = heapq.nsmallest(2, [x[0], x[1], x[2], x[3]])
    return t[0] * 2.0 + t[1]


# =====================================================================================
# 1b. numba-numpy: "Supported NumPy features"
# =====================================================================================

# ---- Scalar types -----------------------------------------------------------------

def nnp_scalar_int64(x):
    return np.int64(x * 3.0) * x


def nnp_scalar_bool(x):
    b = np.bool_(x > 0.5)
    if b:
        return x * x
    return x


def nnp_scalar_float64(x):
    return np.float64(x) * x


def nnp_scalar_float32(x):
    return float(np.float32(x)) * 2.0


def nnp_scalar_complex128(x):
    z = np.complex128(x)
    return (z * z).real


def nnp_scalar_datetime(x, t):
    days = (t[1] - t[0]).astype(np.int64)
    return x * x * days


def nnp_scalar_view_bitcast(x):
    i = np.float64(x).view(np.int64)
    if i > 0:
        return x * x
    return x


REC_T = np.dtype([("w", np.float64), ("k", np.int64)])


def nnp_structured_scalar_read(x, rec):
    return x * x * rec["w"] + rec["k"] * x


def nnp_structured_scalar_attr(x, rec):
    return x * x * rec.w


def nnp_structured_array_write(x):
    a = np.zeros(2, dtype=REC_T)
    a[0]["w"] = x * x
    a[1]["w"] = 3.0 * x
    return a[0]["w"] * a[1]["w"]


# ---- Array access -----------------------------------------------------------------

def nnp_iterate_2d(x):
    s = 0.0
    for row in x:
        s += np.sum(row * row) * row[0]
    return s


def nnp_basic_index_slice(x):
    return np.sum(x[1:, ::2] * x[0, 0]) + x[-1, -1] ** 2


def nnp_newaxis(x):
    return np.sum(x[:, None] * x[None, :]) + np.sum(x[np.newaxis, :] ** 3)


def nnp_fancy_one_array(x, idx):
    return np.sum(x[idx] ** 2)


def nnp_fancy_two_arrays(x, i, j):
    return np.sum(x[i, j] ** 2)


def nnp_fancy_multidim_index(x, idx):
    return np.sum(x[idx] ** 2)


def nnp_fancy_with_slice(x, idx):
    return np.sum(x[:, idx] ** 2)


def nnp_bool_mask(x):
    return np.sum(x[x > 0.5] ** 2)


def nnp_setitem_slice(x):
    y = np.zeros(6)
    y[1:5] = x * x
    y[0] = x[0]
    return np.sum(y * np.arange(6.0))


def nnp_setitem_fancy(x, idx):
    y = np.zeros(5)
    y[idx] = x[:3] ** 2
    return np.sum(y * np.arange(1.0, 6.0))


def nnp_setitem_mask(x):
    y = x.copy()
    y[y > 0.5] = 0.0
    return np.sum(y * y)


def nnp_mask_rows_and_column(a):
    rows = a[:, 0] > 0.5
    return np.sum(a[rows, 1] * a[rows, 2])


def nnp_mask_columns(a):
    return np.sum(a[:, a[0] > 0.4] ** 2)


def nnp_mask_leading_axes(t):
    m = t[:, :, 0] > 0.4
    u = t * 1.5
    u[m, 1] = t[m, 2] ** 2
    return np.sum(np.sin(t[m, 1:])) + np.sum(u * t)


def nnp_setitem_mask_column(a):
    out = a.copy()
    rows = a[:, 0] > 0.5
    out[rows, 1] = a[rows, 2] ** 2
    return np.sum(out * a)


def nnp_ellipsis(x):
    return np.sum(x[..., 0] ** 2)


# ---- Attributes -------------------------------------------------------------------

def nnp_attr_dtype(x):
    y = np.zeros(x.shape, dtype=x.dtype)
    y[:] = x * x
    return np.sum(y)


def nnp_attr_flags(x):
    if x.flags.c_contiguous:
        return np.sum(x * x)
    return np.sum(x)


def nnp_attr_flat_iter(x):
    s = 0.0
    for v in x.flat:
        s += v * v
    return s


def nnp_attr_flat_index(x):
    return x.flat[2] * x.flat[4] + x.flat[0]


def nnp_attr_itemsize_nbytes(x):
    return np.sum(x * x) * (x.nbytes // x.itemsize)


def nnp_attr_ndim(x):
    return np.sum(x ** 3) * x.ndim


def nnp_attr_shape_size(x):
    n, m = x.shape
    return np.sum(x * x) / x.size * n * m


def nnp_attr_strides(x):
    return np.sum(x * x) * (x.strides[1] // 8)


def nnp_attr_T(x):
    return np.sum(x.T * np.arange(x.size).reshape(x.T.shape))


def nnp_attr_real(x):
    return np.sum(x.real * x)


def nnp_attr_imag(x):
    return np.sum(x.imag + x * x)


# ---- Calculation (methods) --------------------------------------------------------

def nnp_m_all_any(x):
    if (x > 0.0).all() and (x > 0.8).any():
        return np.sum(x * x)
    return np.sum(x)


def nnp_m_clip(x):
    return np.sum(x.clip(0.3, 0.8) ** 2)


def nnp_m_conj(x):
    return np.sum(x.conj() * x)


def nnp_m_conjugate(x):
    return np.sum(x.conjugate() * x)


def nnp_m_cumprod(x):
    return np.sum(x.cumprod())


def nnp_m_cumsum(x):
    return np.sum(x.cumsum() ** 2)


def nnp_m_max(x):
    return x.max() * 2.0 + np.sum(x)


def nnp_m_mean(x):
    return x.mean() ** 2


def nnp_m_min(x):
    return x.min() * 2.0 + np.sum(x)


def nnp_m_nonzero(x):
    idx = (x > 0.5).nonzero()[0]
    return np.sum(x[idx] ** 2)


def nnp_m_prod(x):
    return x.prod()


def nnp_m_std(x):
    return x.std()


def nnp_m_take(x):
    return np.sum(x.take(np.array([0, 2, 2])) ** 2)


def nnp_m_var(x):
    return x.var()


def nnp_f_prod(x):
    return np.prod(x)


def nnp_f_cumprod(x):
    return np.sum(np.cumprod(x))


def nnp_f_std_var(x):
    return np.std(x) + np.var(x)


def nnp_f_take(x):
    return np.sum(np.take(x, np.array([3, 0, 1])) ** 2)


# ---- Other methods ----------------------------------------------------------------

def nnp_m_argmax(x):
    return x[x.argmax()] * 2.0 + np.sum(x)


def nnp_m_argmin(x):
    return x[x.argmin()] * 2.0 + np.sum(x)


def nnp_m_argmax_axis(x):
    idx = x.argmax(axis=1)
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i, idx[i]]
    return s


def nnp_f_argpartition(x):
    idx = np.argpartition(x, 1)
    return x[idx[0]] * 3.0 + x[idx[1]]


def nnp_m_argsort(x):
    idx = x.argsort()
    return np.sum(x[idx] * np.arange(1.0, x.size + 1.0))


def nnp_m_argsort_kind(x):
    idx = np.argsort(x, kind="mergesort")
    return np.sum(x[idx] * np.arange(1.0, x.size + 1.0))


def nnp_m_astype(x):
    return np.sum(x.astype(np.float64) ** 2) + np.sum(x.astype(np.int64)) * 0.0


def nnp_m_copy(x):
    y = x.copy()
    y[0] = 0.0
    return np.sum(y * x)


def nnp_m_dot(x, w):
    return np.sum(w.dot(x) ** 2)


def nnp_m_flatten(x):
    return np.sum(x.flatten() * np.arange(x.size))


def nnp_m_item(x):
    return x[1:2].item() * x[0]


def nnp_m_ptp(x):
    return np.ptp(x) * np.sum(x)


def nnp_m_ravel(x):
    return np.sum(x.ravel() * np.arange(x.size))


def nnp_m_repeat(x):
    return np.sum(x.repeat(2) * np.arange(2 * x.size))


def nnp_m_reshape(x):
    return np.sum(x.reshape(2, 3) * np.arange(6.0).reshape(2, 3))


def nnp_m_reshape_tuple(x):
    return np.sum(x.reshape((3, -1)) ** 2 * np.arange(3.0)[:, None])


def nnp_m_sort(x):
    y = x.copy()
    y.sort()
    return np.sum(y * np.arange(1.0, x.size + 1.0))


def nnp_m_sum_axis(x):
    return np.sum(x.sum(axis=0) ** 2) + np.sum(x.sum(1) ** 3)


def nnp_m_sum_dtype(x):
    return x.sum(dtype=np.float64) ** 2


def nnp_m_tobytes(x):
    b = x.tobytes()
    return np.sum(x * x) * len(b)


def nnp_m_transpose(x):
    return np.sum(x.transpose() * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_m_view(x):
    v = x.view(np.float64)
    return np.sum(v * v)


def nnp_m_contains(x):
    if 0.3 in x:
        return np.sum(x)
    return np.sum(x * x)


# ---- Functions / Linear algebra ---------------------------------------------------

def nnp_la_dot(x, w):
    return np.dot(w, x) @ np.dot(w, x)


def nnp_la_dot_matrix(x, w):
    return np.sum(np.dot(x, w) ** 2)


def nnp_la_kron(x, w):
    return np.sum(np.kron(x, w) ** 2)


def nnp_la_outer(x):
    return np.sum(np.sin(np.outer(x, x)))


def nnp_la_trace(x):
    return np.trace(x @ x)


def nnp_la_vdot(x):
    return np.vdot(x, x * 2.0 + 1.0)


def nnp_la_matmul_op(x, w):
    return np.sum((x @ w) @ w.T)


def nnp_la_cholesky(x):
    a = x @ x.T + 3.0 * np.eye(x.shape[0])
    return np.sum(np.linalg.cholesky(a))


def nnp_la_cond(x):
    return np.linalg.cond(x + 3.0 * np.eye(x.shape[0]))


def nnp_la_det(x):
    return np.linalg.det(x)


def nnp_la_eig(x):
    a = x + x.T
    w, v = np.linalg.eig(a)
    return np.sum(w.real ** 2)


def nnp_la_eigh(x):
    a = x + x.T
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, w.size + 1.0))


def nnp_la_eigvals(x):
    a = x + x.T
    return np.sum(np.linalg.eigvals(a).real ** 2)


def nnp_la_eigvalsh(x):
    a = x + x.T
    return np.sum(np.linalg.eigvalsh(a) * np.arange(1.0, x.shape[0] + 1.0))


def nnp_la_inv(x):
    return np.sum(np.linalg.inv(x))


def nnp_la_lstsq(x, b):
    sol, res, rank, sv = np.linalg.lstsq(x, b)
    return np.sum(sol ** 2)


def nnp_la_matrix_power(x):
    return np.sum(np.linalg.matrix_power(x, 3))


def nnp_la_matrix_rank(x):
    return np.sum(x * x) * np.linalg.matrix_rank(x)


def nnp_la_norm(x):
    return np.linalg.norm(x)


def nnp_la_norm_ord(x):
    return np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf) + np.linalg.norm(x, 2)


def nnp_la_pinv(x):
    return np.sum(np.linalg.pinv(x))


def nnp_la_qr(x):
    q, r = np.linalg.qr(x)
    return np.sum(np.abs(np.diag(r)))


def nnp_la_slogdet(x):
    sign, logdet = np.linalg.slogdet(x)
    return logdet


def nnp_la_solve(x, b):
    return np.sum(np.linalg.solve(x, b))


def nnp_la_svd(x):
    u, s, vt = np.linalg.svd(x)
    return np.sum(s)


def nnp_la_eigh_upper(x):
    w, v = np.linalg.eigh(x + x.T, UPLO="U")
    return np.sum(w * np.arange(1.0, w.size + 1.0)) + np.sum(v[:, 1] ** 4)


def nnp_la_norm_matrix_orders(x):
    return (np.linalg.norm(x, 1) + np.linalg.norm(x, -1) * 2.0 + np.linalg.norm(x, np.inf) * 3.0
            + np.linalg.norm(x, -np.inf) * 4.0 + np.linalg.norm(x, -2) * 5.0)


def nnp_la_qr_r(x):
    return np.sum(np.linalg.qr(x, mode="r") ** 2 * np.arange(1.0, 4.0))


def nnp_la_svd_vectors(x):
    u, s, vt = np.linalg.svd(x)
    return np.sum((u * vt[:, 0]) ** 3) + np.sum(s * np.arange(1.0, 4.0))


# ---- Functions / Reductions -------------------------------------------------------

def nnp_r_diff(x):
    return np.sum(np.diff(x) ** 2) + np.sum(np.diff(x, 2) ** 2)


def nnp_r_amin_amax(x):
    return np.amax(x) * 2.0 - np.amin(x) + np.min(x) * np.max(x)


def nnp_r_median(x):
    return np.median(x) * np.sum(x)


def nnp_r_nancumprod(x):
    return np.sum(np.nancumprod(x))


def nnp_r_nancumsum(x):
    return np.sum(np.nancumsum(x) ** 2)


def nnp_r_nanmax_nanmin(x):
    return np.nanmax(x) * 2.0 + np.nanmin(x)


def nnp_r_nanmean(x):
    return np.nanmean(x) ** 2


def nnp_r_nanmedian(x):
    return np.nanmedian(x) * np.sum(x)


def nnp_r_nanpercentile(x):
    return np.nanpercentile(x, 30.0)


def nnp_r_nanquantile(x):
    return np.nanquantile(x, 0.3)


def nnp_r_nanprod(x):
    return np.nanprod(x)


def nnp_r_nanstd(x):
    return np.nanstd(x) + np.nanstd(x, ddof=1)


def nnp_r_nansum(x):
    return np.nansum(x) ** 2


def nnp_r_nanvar(x):
    return np.nanvar(x)


def nnp_r_percentile(x):
    return np.percentile(x, 30.0)


def nnp_r_percentile_list_axis(x):
    lo, hi = np.percentile(x, [25, 75], axis=1)
    return np.sum((hi - lo) * np.arange(1.0, 4.0))


def nnp_r_quantile_list_keepdims(x):
    q = np.quantile(x, [0.1, 0.6], axis=0, keepdims=True)
    return np.sum(q * q)


def nnp_putmask(x):
    y = x * 2.0
    np.putmask(y, x > 0.5, 0.25)
    return np.sum(y * y)


def nnp_r_quantile(x):
    return np.quantile(x, 0.3)


def nnp_r_average(x):
    return np.average(x) + np.average(x, weights=np.arange(1.0, x.size + 1.0))


def nnp_r_nan_in_data(x):
    y = x.copy()
    y[1] = np.nan
    return np.nansum(y * y) + np.nanmean(y)


# ---- Functions / Polynomials ------------------------------------------------------

def nnp_poly_class(x):
    p = np.polynomial.polynomial.Polynomial(x)
    return np.sum(p.coef ** 2)


def nnp_poly_polyadd(x):
    return np.sum(np.polynomial.polynomial.polyadd(x, x[:2]) ** 2)


def nnp_poly_polydiv(x):
    q, r = np.polynomial.polynomial.polydiv(x, np.array([1.0, 2.0]))
    return np.sum(q ** 2) + np.sum(r ** 2)


def nnp_poly_polyint(x):
    return np.sum(np.polynomial.polynomial.polyint(x, 1) ** 2)


def nnp_poly_polymul(x):
    return np.sum(np.polynomial.polynomial.polymul(x, x))


def nnp_poly_polysub(x):
    return np.sum(np.polynomial.polynomial.polysub(x, x[::-1] * 2.0) ** 2)


def nnp_poly_polyval(x):
    return np.sum(np.polynomial.polynomial.polyval(np.array([0.5, 1.5]), x))


def nnp_poly_polyval_at(x, c):
    return np.sum(np.polynomial.polynomial.polyval(x, c))


def nnp_polyval_complex(p, w):
    h = np.polyval(p[:2], 1j * w) / np.polyval(p, 1j * w)
    return np.sum(np.abs(h)) + np.sum(np.unwrap(np.angle(h)))


def nnp_polyfit(x, y):
    slope, intercept = np.polyfit(x, y, 1)
    return slope * 2.0 + intercept + np.sum(np.polyfit(x, y, 2) ** 2)


def nnp_poly_as_series(x):
    s = np.polynomial.polyutils.as_series((x, x * 2.0))
    return np.sum(s[0] * s[1])


def nnp_poly_trimseq(x):
    return np.sum(np.polynomial.polyutils.trimseq(x) ** 2)


# ---- Functions / Other functions --------------------------------------------------

def nnp_o_allclose(x):
    if np.allclose(x, x + 1e-12):
        return np.sum(x * x)
    return np.sum(x)


def nnp_o_append(x):
    return np.sum(np.append(x, x[:2] * 3.0) ** 2)


def nnp_o_arange(x):
    return np.sum(x * np.arange(x.size)) + np.sum(np.arange(0.0, 1.0, 0.25) * x)


def nnp_o_argwhere(x):
    idx = np.argwhere(x > 0.5)
    s = 0.0
    for k in range(idx.shape[0]):
        s += x[idx[k, 0]] ** 2
    return s


def nnp_o_around(x):
    return np.sum(np.around(x * 1.37, 1) * x)  # (1.37: no entry at a rounding tie)


def nnp_o_array_from_scalars(x):
    a = np.array([x, 2.0 * x, x * x])
    return np.sum(a * a)


def nnp_o_array_equal(x):
    if np.array_equal(x, x):
        return np.sum(x * x)
    return np.sum(x)


def nnp_o_array_split(x):
    parts = np.array_split(x, 3)
    return np.sum(parts[0] ** 2) + np.sum(parts[2] ** 3)


def nnp_o_asarray(x):
    return np.sum(np.asarray(x) ** 2)


def nnp_o_asarray_chkfinite(x):
    return np.sum(np.asarray_chkfinite(x) ** 2)


def nnp_o_ascontiguousarray(x):
    return np.sum(np.ascontiguousarray(x.T) * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_o_asfortranarray(x):
    return np.sum(np.asfortranarray(x) ** 2)


def nnp_o_atleast_1d(x):
    return np.sum(np.atleast_1d(x) ** 2)


def nnp_o_atleast_2d(x):
    return np.sum(np.atleast_2d(x) ** 2)


def nnp_o_atleast_3d(x):
    return np.sum(np.atleast_3d(x) ** 2)


def nnp_o_windows(x):
    n = x.size
    w = np.bartlett(n) + np.blackman(n) + np.hamming(n) + np.hanning(n) + np.kaiser(n, 3.0)
    return np.sum(w * x * x)


def nnp_o_bincount_weights(x, idx):
    return np.sum(np.bincount(idx, weights=x) ** 2)


def nnp_o_bincount(x, idx):
    c = np.bincount(idx)
    return np.sum(x * x) * c[1]


def nnp_o_broadcast_to(x):
    return np.sum(np.broadcast_to(x, (3, x.size)) * np.arange(3.0)[:, None])


def nnp_o_broadcast_arrays(x, y):
    a, b = np.broadcast_arrays(x, y)
    return np.sum(a * b)


def nnp_o_broadcast_shapes(x):
    s = np.broadcast_shapes((3, 1), (1, 4))
    return np.sum(x * x) * s[0]


def nnp_o_column_stack(x):
    return np.sum(np.column_stack((x, x * x)) * np.arange(2.0))


def nnp_o_concatenate(x):
    return np.sum(np.concatenate((x, x[1:] * 2.0)) ** 2)


def nnp_o_convolve(x):
    return np.sum(np.convolve(x, np.array([1.0, -2.0, 0.5])) ** 2)


def nnp_o_convolve_mode(x):
    return np.sum(np.convolve(x, x, "same") ** 2)


def nnp_o_copy(x):
    y = np.copy(x)
    y[0] = 1.0
    return np.sum(y * x)


def nnp_o_corrcoef(x, y):
    return np.sum(np.corrcoef(x, y))


def nnp_o_correlate(x):
    return np.sum(np.correlate(x, np.array([1.0, 0.5])) ** 2)


def nnp_o_count_nonzero(x):
    return np.sum(x * x) * np.count_nonzero(x > 0.5)


def nnp_o_cov(x):
    return np.sum(np.cov(x))


def nnp_o_cov_options(x):
    return (np.sum(np.cov(x, rowvar=False, bias=True) ** 2) + np.sum(np.cov(x, ddof=2))
            + np.sum(np.cov(x[0], x[1] * x[2]) * np.arange(4.0).reshape(2, 2)))


def nnp_o_cov_one_row(x):
    # one variable as a 2-D row: NumPy squeezes the 1x1 covariance to a number
    return np.sum((np.cov(x[None, :]) * x)[0] * x)


def nnp_o_cov_weights(x):
    # frequency weights (integers) and observation weights computed from x
    return (np.sum(np.cov(x, fweights=np.array([2, 1, 3, 1])) ** 2)
            + np.sum(np.cov(x, fweights=np.array([1, 2, 1, 1]), aweights=x[0] ** 2)))


def nnp_o_cross(x, y):
    return np.sum(np.cross(x, y) ** 2)


def nnp_o_delete(x):
    return np.sum(np.delete(x, 1) ** 2 * np.arange(1.0, x.size))


def nnp_o_diag(x):
    return np.sum(np.diag(x) * np.arange(1.0, 4.0)) + np.sum(np.diag(np.diag(x)) ** 2)


def nnp_o_diagflat(x):
    return np.sum(np.diagflat(x) @ np.ones(x.size) * x)


def nnp_o_digitize(x):
    b = np.digitize(x, np.array([0.25, 0.5, 0.75]))
    return np.sum(x * x * b)


def nnp_o_dsplit(x):
    a, b = np.dsplit(x, 2)
    return np.sum(a * a) + np.sum(b ** 3)


def nnp_o_dstack(x):
    return np.sum(np.dstack((x, x * x)) * np.arange(2.0))


def nnp_o_dtype(x):
    y = np.zeros(x.size, np.dtype("float64"))
    y[:] = x
    return np.sum(y * y)


def nnp_o_ediff1d(x):
    return np.sum(np.ediff1d(x) ** 2)


def nnp_o_empty(x):
    y = np.empty(x.size)
    for i in range(x.size):
        y[i] = x[i] * x[i]
    return np.sum(y)


def nnp_o_empty_like(x):
    y = np.empty_like(x)
    y[:] = np.sin(x)
    return np.sum(y)


def nnp_o_expand_dims(x):
    return np.sum(np.expand_dims(x, 0) * np.expand_dims(x, 1))


def nnp_o_extract(x):
    return np.sum(np.extract(x > 0.5, x) ** 2)


def nnp_o_eye(x):
    return np.sum((x + np.eye(x.shape[0])) ** 2) + np.sum(np.eye(3, 4) * 0.0)


def nnp_o_fill_diagonal(x):
    a = np.zeros((x.size, x.size))
    np.fill_diagonal(a, x)
    return np.sum(a @ a)


def nnp_o_fill_diagonal_scalar(x):
    a = np.ones((3, 3)) * x
    np.fill_diagonal(a, 2.0)
    return np.sum(a * a)


def nnp_o_flatnonzero(x):
    idx = np.flatnonzero(x > 0.5)
    return np.sum(x[idx] ** 2)


def nnp_o_flip(x):
    return np.sum(np.flip(x) * np.arange(x.size))


def nnp_o_fliplr(x):
    return np.sum(np.fliplr(x) * np.arange(x.size).reshape(x.shape))


def nnp_o_flipud(x):
    return np.sum(np.flipud(x) * np.arange(x.size).reshape(x.shape))


def nnp_o_full(x):
    return np.sum(np.full(3, x) * np.arange(3.0)) * x


def nnp_o_full_like(x):
    return np.sum(np.full_like(x, 2.0) * x * x)


def nnp_o_geomspace(x):
    return np.sum(np.geomspace(x, 4.0, 5))


def nnp_o_histogram(x):
    h, edges = np.histogram(x, 3)
    return np.sum(x * x) * h[0]


def nnp_o_histogram_weights_range(x):
    # azimint_hist's weighted over plain counts; a fixed range, weights of the data's values
    counts = np.histogram(x, 3, range=(0.3, 0.8))[0]
    sums, edges = np.histogram(x, 3, range=(0.3, 0.8), weights=x * x)
    return np.sum(sums / counts) + np.sum(edges)


def nnp_o_histogram_density(x):
    # edges from the data's min and max: the densities' derivative flows through the widths
    d, edges = np.histogram(x, 3, density=True)
    return np.sum(d * np.arange(1.0, 4.0)) + np.sum(edges ** 2)


def nnp_o_hsplit(x):
    a, b = np.hsplit(x, 2)
    return np.sum(a * a) + np.sum(b ** 3)


def nnp_o_hstack(x):
    return np.sum(np.hstack((x, x * x)) * np.arange(2 * x.size))


def nnp_o_identity(x):
    return np.sum((x @ np.identity(x.shape[0])) ** 2)


def nnp_o_indices(x):
    ii = np.indices((2, 3))
    return np.sum(x * ii[0]) + np.sum(x * x * ii[1])


def nnp_o_insert(x):
    return np.sum(np.insert(x, 1, 5.0) ** 2 * np.arange(x.size + 1))


def nnp_o_isclose(x):
    m = np.isclose(x, 0.3)
    return np.sum(np.where(m, 0.0, x * x))


def nnp_o_iscomplex_isreal(x):
    if np.iscomplexobj(x) or np.any(np.iscomplex(x)) or not np.all(np.isreal(x)):
        return np.sum(x)
    return np.sum(x * x)


def nnp_o_isrealobj_isscalar(x):
    if np.isrealobj(x) and not np.isscalar(x):
        return np.sum(x * x)
    return np.sum(x)


def nnp_o_isin(x):
    m = np.isin(np.arange(x.size), np.array([1, 3]))
    return np.sum(np.where(m, x * x, x))


def nnp_o_isneginf_isposinf(x):
    y = x * x
    if np.any(np.isneginf(y)) or np.any(np.isposinf(y)):
        return 0.0
    return np.sum(y)


def nnp_o_interp_fp(x):
    return np.sum(np.interp(np.array([0.25, 1.5, 2.75]), np.arange(x.size * 1.0), x) ** 2)


def nnp_o_interp_x(x):
    return np.sum(np.interp(x, np.array([0.0, 0.5, 1.0]), np.array([1.0, 3.0, 2.0])) ** 2)


def nnp_o_intersect1d(x):
    common = np.intersect1d(x, np.array([0.3, 0.45]))
    return np.sum(x * x) + np.sum(common)


def nnp_o_linspace(x):
    return np.sum(np.linspace(x, 2.0 * x + 1.0, 5) ** 2)


def nnp_o_logspace(x):
    return np.sum(np.logspace(x, 1.0, 4))


def nnp_o_moveaxis(x):
    return np.sum(np.moveaxis(x, 0, -1) * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_o_nan_to_num(x):
    return np.sum(np.nan_to_num(np.log(x)) ** 2)


def nnp_o_ndenumerate(x):
    s = 0.0
    for idx, v in np.ndenumerate(x):
        s += v * v * (idx[0] + 1)
    return s


def nnp_o_ndindex(x):
    s = 0.0
    for idx in np.ndindex(x.shape):
        s += x[idx] ** 3
    return s


def nnp_o_nditer(x):
    s = 0.0
    for v in np.nditer(x):
        s += v.item() ** 2
    return s


def nnp_o_ones(x):
    return np.sum(np.ones(x.size) * x * x) + np.sum(np.ones((2, 2)))


def nnp_o_ones_like(x):
    return np.sum((np.ones_like(x) + x) ** 2)


def nnp_o_partition(x):
    p = np.partition(x, 1)
    return p[0] * 3.0 + p[1] + np.sum(x)


def nnp_o_ptp(x):
    return np.ptp(x) ** 2


def nnp_o_ravel(x):
    return np.sum(np.ravel(x) * np.arange(x.size))


def nnp_o_repeat(x):
    return np.sum(np.repeat(x, 3) * np.arange(3 * x.size))


def nnp_o_reshape(x):
    return np.sum(np.reshape(x, (3, 2)) * np.arange(6.0).reshape(3, 2))


def nnp_o_resize(x):
    return np.sum(np.resize(x, 7) * np.arange(7.0))


def nnp_o_roll(x):
    return np.sum(np.roll(x, 1) * np.arange(x.size))


def nnp_o_roots(x):
    r = np.roots(np.array([1.0, -x, 2.0]))
    return np.sum(r.real)


def nnp_o_rot90(x):
    return np.sum(np.rot90(x) * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_o_row_stack(x):
    return np.sum(np.row_stack((x, x * x)) * np.arange(2.0)[:, None])


def nnp_o_searchsorted(x):
    k = np.searchsorted(np.array([0.2, 0.5, 0.8]), x[0])
    return np.sum(x * x) * (k + 1)


def nnp_o_select(x):
    return np.sum(np.select([x < 0.4, x >= 0.4], [x * x, 3.0 * x]))


def nnp_o_setxor_setdiff_union(x):
    a = np.setxor1d(np.array([1, 2, 3]), np.array([2, 3, 4]))
    b = np.setdiff1d(np.array([1, 2, 3]), np.array([2]))
    c = np.union1d(np.array([1, 2]), np.array([2, 5]))
    return np.sum(x * x) * (a.size + b.size + c.size)


def nnp_o_union1d_values(x):
    return np.sum(np.union1d(x, np.array([5.0])) ** 2)


def nnp_o_unique_values(x):
    return np.sum(np.unique(x) ** 2)


def nnp_o_shape(x):
    return np.sum(x * x) * np.shape(x)[0]


def nnp_o_sinc(x):
    return np.sum(np.sinc(x))


def nnp_o_sort(x):
    return np.sum(np.sort(x) * np.arange(1.0, x.size + 1.0))


def nnp_o_sort_2d(x):
    return np.sum(np.sort(x) * np.arange(1.0, x.shape[1] + 1.0))


def nnp_o_split(x):
    a, b = np.split(x, 2)
    return np.sum(a * a) + np.sum(b ** 3)


def nnp_o_split_indices(x):
    a, b, c = np.split(x, [1, 3])
    return np.sum(a * a) + np.sum(b ** 3) + np.sum(c)


def nnp_o_stack(x):
    return np.sum(np.stack((x, x * x)) * np.arange(2.0)[:, None])


def nnp_o_stack_axis(x):
    return np.sum(np.stack((x, x * x), 1) * np.arange(2.0))


def nnp_o_swapaxes(x):
    return np.sum(np.swapaxes(x, 0, 1) * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_o_take_along_axis(x, idx):
    return np.sum(np.take_along_axis(x, idx, 1) ** 2)


def nnp_o_transpose(x):
    return np.sum(np.transpose(x) * np.arange(x.size).reshape(x.shape[1], x.shape[0]))


def nnp_o_trapezoid(x):
    return np.trapezoid(x * x) + np.trapezoid(x, dx=0.5)


def nnp_o_trapezoid_x(x):
    return np.trapezoid(np.array([1.0, 2.0, 0.5, 3.0]), x)


def nnp_o_tri(x):
    return np.sum(np.tri(x.shape[0]) * x * x)


def nnp_o_tril(x):
    return np.sum(np.tril(x) ** 2) + np.sum(np.tril(x, -1))


def nnp_o_tril_indices(x):
    i, j = np.tril_indices(x.shape[0])
    return np.sum(x[i, j] ** 2)


def nnp_o_tril_indices_from(x):
    i, j = np.tril_indices_from(x, -1)
    return np.sum(x[i, j] ** 2)


def nnp_o_trim_zeros(x):
    y = np.zeros(x.size + 2)
    y[1:-1] = x
    return np.sum(np.trim_zeros(y) ** 2)


def nnp_o_triu(x):
    return np.sum(np.triu(x) ** 2) + np.sum(np.triu(x, 1))


def nnp_o_triu_indices(x):
    i, j = np.triu_indices(x.shape[0])
    return np.sum(x[i, j] ** 2)


def nnp_o_triu_indices_from(x):
    i, j = np.triu_indices_from(x, 1)
    return np.sum(x[i, j] ** 2)


def nnp_o_unique(x, k):
    u = np.unique(k)
    return np.sum(x * x) * u.size


def nnp_o_unwrap(x):
    return np.sum(np.unwrap(x * 4.0) ** 2)


def nnp_o_vander(x):
    return np.sum(np.vander(x, 3))


def nnp_o_vsplit(x):
    a, b = np.vsplit(x, 2)
    return np.sum(a * a) + np.sum(b ** 3)


def nnp_o_vstack(x):
    return np.sum(np.vstack((x, x * x)) * np.arange(2.0)[:, None])


def nnp_o_where(x):
    return np.sum(np.where(x > 0.5, x * x, 3.0 * x))


def nnp_o_where_one_arg(x):
    idx = np.where(x > 0.5)[0]
    return np.sum(x[idx] ** 2)


def nnp_o_zeros(x):
    y = np.zeros((2, x.size))
    y[0] = x
    y[1] = x * x
    return np.sum(y * y)


def nnp_o_zeros_like(x):
    y = np.zeros_like(x)
    y += x * 2.0
    return np.sum(y * x)


def nnp_o_frombuffer(x, b):
    a = np.frombuffer(b, dtype=np.uint8)
    return np.sum(x * x) * a[0]


# ---- Functions / constructors, machine parameters, literal arrays -----------------

def nnp_ctor_ints(x):
    return x * x * (np.int8(2) + np.int16(2) + np.int32(2) + np.int64(2) + np.uint8(1)
                    + np.uint16(1) + np.uint32(1) + np.uint64(1) + np.intc(1) + np.intp(1)
                    + np.uintc(1) + np.uintp(1))


def nnp_ctor_float32(x):
    return float(np.float64(np.float32(x))) * 2.0


def nnp_ctor_complex64(x):
    return float(np.complex64(2.0).real) * x * x


def nnp_ctor_sequence(x):
    return np.sum(np.float64(x) * 2.0)


def nnp_iinfo(x):
    return x * x * (np.iinfo(np.int8).max // 100)


def nnp_finfo(x):
    return x * x + np.finfo(np.float64).eps * x


def nnp_literal_array_tuple(x):
    a = np.array(((x, 2.0 * x), (x * x, 1.0)))
    return np.sum(a @ a)


# ---- Modules / random -------------------------------------------------------------

def nnp_gen_standard_normal(x, rng):
    z = rng.standard_normal(x.size)
    return np.sum(x * x) + np.sum(z)


def nnp_gen_normal_loc(x, rng):
    s = 0.0
    for i in range(x.size):
        s += rng.normal(x[i], 0.5) ** 2
    return s


def nnp_gen_normal_scale(x, rng):
    s = 0.0
    for i in range(x.size):
        s += rng.normal(0.0, x[i]) ** 2
    return s


def nnp_gen_uniform(x, rng):
    u = rng.uniform(0.0, 1.0, x.size)
    return np.sum(x * x * u)


def nnp_gen_uniform_bounds(x, rng):
    s = 0.0
    for i in range(x.size):
        s += rng.uniform(x[i], x[i] + 1.0) ** 2
    return s


def nnp_gen_random(x, rng):
    return np.sum(x * x) + rng.random()


def nnp_gen_integers(x, rng):
    k = rng.integers(1, 4)
    return np.sum(x * x) * k


def nnp_gen_exponential(x, rng):
    return np.sum(x * x) + rng.exponential(2.0)


def nnp_gen_other(x, rng):
    r = (rng.beta(2.0, 3.0) + rng.chisquare(2.0) + rng.gamma(2.0) + rng.laplace()
         + rng.logistic() + rng.lognormal() + rng.pareto(3.0) + rng.poisson(2.0)
         + rng.standard_cauchy() + rng.standard_exponential() + rng.standard_gamma(2.0)
         + rng.standard_t(3.0) + rng.triangular(0.0, 0.5, 1.0) + rng.wald(1.0, 1.0)
         + rng.weibull(2.0) + rng.rayleigh() + rng.power(2.0) + rng.geometric(0.5))
    return np.sum(x * x) + r


def nnp_gen_permutation(x, rng):
    p = rng.permutation(x.size)
    return np.sum(x[p] * np.arange(x.size))


def nnp_gen_shuffle(x, rng):
    y = x.copy()
    rng.shuffle(y)
    return np.sum(y * np.arange(x.size))


def nnp_rs_seed_rand(x):
    np.random.seed(0)
    return np.sum(x * x) + np.random.rand()


def nnp_rs_randn(x):
    np.random.seed(1)
    z = np.random.randn(x.size)
    return np.sum(x * x + z)


def nnp_rs_random_sample(x):
    np.random.seed(2)
    return np.sum(x * x * (1.0 + np.random.random(x.size))) + np.random.random_sample() + np.random.sample()


def nnp_rs_ranf(x):
    np.random.seed(2)
    return np.sum(x * x) + np.random.ranf()


def nnp_rs_randint(x):
    np.random.seed(3)
    k = np.random.randint(1, 4)
    return np.sum(x * x) * k


def nnp_rs_choice(x):
    np.random.seed(4)
    idx = np.random.choice(x.size, 3)
    return np.sum(x[idx] ** 2)


def nnp_rs_permutation(x):
    np.random.seed(5)
    return np.sum(np.random.permutation(x) * np.arange(x.size))


def nnp_rs_shuffle(x):
    np.random.seed(6)
    y = x.copy()
    np.random.shuffle(y)
    return np.sum(y * np.arange(x.size))


def nnp_rs_normal_loc(x):
    np.random.seed(7)
    s = 0.0
    for i in range(x.size):
        s += np.random.normal(x[i], 0.5) ** 2
    return s


def nnp_rs_normal_scale(x):
    np.random.seed(8)
    s = 0.0
    for i in range(x.size):
        s += np.random.normal(1.0, x[i]) ** 2
    return s


def nnp_rs_standard_normal(x):
    np.random.seed(9)
    return np.sum(x + x * np.random.standard_normal(x.size))


def nnp_rs_uniform_bounds(x):
    np.random.seed(10)
    s = 0.0
    for i in range(x.size):
        s += np.random.uniform(x[i], 2.0 * x[i]) ** 2
    return s


def nnp_rs_distributions(x):
    np.random.seed(11)
    r = (np.random.beta(2.0, 3.0) + np.random.binomial(5, 0.3) + np.random.chisquare(2.0)
         + np.random.exponential(1.0) + np.random.f(3.0, 4.0) + np.random.gamma(2.0)
         + np.random.geometric(0.5) + np.random.gumbel(0.0, 1.0) + np.random.hypergeometric(5, 5, 3)
         + np.random.laplace() + np.random.logistic() + np.random.lognormal()
         + np.random.logseries(0.5) + np.random.negative_binomial(3, 0.5)
         + np.random.noncentral_chisquare(2.0, 1.0) + np.random.pareto(3.0)
         + np.random.poisson(2.0) + np.random.power(2.0) + np.random.rayleigh()
         + np.random.standard_cauchy() + np.random.standard_exponential()
         + np.random.standard_gamma(2.0) + np.random.standard_t(3.0)
         + np.random.triangular(0.0, 0.5, 1.0) + np.random.vonmises(0.0, 1.0)
         + np.random.wald(1.0, 1.0) + np.random.weibull(2.0) + np.random.zipf(2.0))
    return np.sum(x * x) + r


def nnp_rs_dirichlet_multinomial(x):
    np.random.seed(12)
    d = np.random.dirichlet(np.array([1.0, 2.0, 3.0]))
    m = np.random.multinomial(10, np.array([0.2, 0.3, 0.5]))
    return np.sum(x * x) * (d[0] + m[0])


# ---- Modules / stride_tricks ------------------------------------------------------

def nnp_as_strided(x):
    v = np.lib.stride_tricks.as_strided(x, shape=(3, 2), strides=(8, 8))
    return np.sum(v * np.arange(6.0).reshape(3, 2))


def nnp_as_strided_diagonal_write(a):
    b = a @ a
    n = b.shape[0]
    d = np.lib.stride_tricks.as_strided(b, shape=(n,), strides=((n + 1) * b.itemsize,))
    d[:] = a[0] * 2.0
    return np.sum(b * a)


def nnp_sliding_window_view(x):
    w = np.lib.stride_tricks.sliding_window_view(x, 3)
    return np.sum(w * w * np.arange(3.0))


# ---- Standard ufuncs (on floats and arrays; both argument slots of binary ones) ------

# Math operations
def nu_add(x): return np.add(x, 0.3) * np.add(0.3, x)
def nu_subtract(x): return np.subtract(x, 0.3) * np.subtract(2.0, x)
def nu_multiply(x): return np.multiply(x, 0.3) + np.multiply(x, x)
def nu_divide(x): return np.divide(x, 0.3) + np.divide(0.3, x)
def nu_logaddexp(x): return np.logaddexp(x, 0.3) + np.logaddexp(0.1, x)
def nu_logaddexp2(x): return np.logaddexp2(x, 0.3) + np.logaddexp2(0.1, x)
def nu_true_divide(x): return np.true_divide(x, 0.3) + np.true_divide(0.3, x)
def nu_floor_divide(x): return np.floor_divide(x, 0.3) * x
def nu_negative(x): return np.negative(x) * x
def nu_power(x): return np.power(x, 2.5) + np.power(1.5, x)
def nu_float_power(x): return np.float_power(x, 2.5) + np.float_power(1.5, x)
def nu_remainder(x): return np.remainder(x, 0.3) * x
def nu_mod(x): return np.mod(x, 0.3) * x + np.mod(2.0, x)
def nu_fmod(x): return np.fmod(x, 0.3) * x + np.fmod(2.0, x)
def nu_divmod(x):
    q, r = np.divmod(x, 0.3)
    return q * x + r * r
def nu_abs(x): return np.abs(x) * x
def nu_absolute(x): return np.absolute(x) * x
def nu_fabs(x): return np.fabs(x) * x
def nu_rint(x): return np.rint(x) * x
def nu_sign(x): return np.sign(x) * x * x
def nu_conj(x): return np.conj(x) * x
def nu_exp(x): return np.exp(x)
def nu_exp2(x): return np.exp2(x)
def nu_log(x): return np.log(x)
def nu_log2(x): return np.log2(x)
def nu_log10(x): return np.log10(x)
def nu_expm1(x): return np.expm1(x)
def nu_log1p(x): return np.log1p(x)
def nu_sqrt(x): return np.sqrt(x)
def nu_square(x): return np.square(x)
def nu_cbrt(x): return np.cbrt(x)
def nu_reciprocal(x): return np.reciprocal(x)
def nu_conjugate(x): return np.conjugate(x) * x
def nu_gcd_lcm(x): return x * x * (np.gcd(12, 18) + np.lcm(2, 3))


# Trigonometric functions
def nu_sin(x): return np.sin(x)
def nu_cos(x): return np.cos(x)
def nu_tan(x): return np.tan(x)
def nu_arcsin(x): return np.arcsin(x)
def nu_arccos(x): return np.arccos(x)
def nu_arctan(x): return np.arctan(x)
def nu_arctan2(x): return np.arctan2(x, 0.7) + np.arctan2(0.3, x)
def nu_hypot(x): return np.hypot(x, 0.7) + np.hypot(0.3, x)
def nu_sinh(x): return np.sinh(x)
def nu_cosh(x): return np.cosh(x)
def nu_tanh(x): return np.tanh(x)
def nu_arcsinh(x): return np.arcsinh(x)
def nu_arccosh(x): return np.arccosh(x)
def nu_arctanh(x): return np.arctanh(x)
def nu_deg2rad(x): return np.deg2rad(x)
def nu_rad2deg(x): return np.rad2deg(x)
def nu_degrees(x): return np.degrees(x)
def nu_radians(x): return np.radians(x)


# Bit-twiddling functions (on integers: no derivative flows, the float part does)
def nu_bitwise(x):
    k = np.bitwise_and(6, 3) + np.bitwise_or(4, 1) + np.bitwise_xor(5, 1) + np.bitwise_not(-3)
    return x * x * k
def nu_invert_bool(x):
    m = np.invert(x > 0.5)
    return np.sum(np.where(m, x, x * x))
def nu_shifts(x): return x * x * (np.left_shift(1, 3) + np.right_shift(16, 2))


# Comparison functions
def nu_greater(x): return np.sum(np.where(np.greater(x, 0.5), x * x, x))
def nu_greater_equal(x): return np.sum(np.where(np.greater_equal(x, 0.5), x * x, x))
def nu_less(x): return np.sum(np.where(np.less(x, 0.5), x * x, x))
def nu_less_equal(x): return np.sum(np.where(np.less_equal(x, 0.5), x * x, x))
def nu_not_equal(x): return np.sum(np.where(np.not_equal(x, 0.5), x * x, x))
def nu_equal(x): return np.sum(np.where(np.equal(x, 0.5), x, x * x))
def nu_logical_and(x): return np.sum(np.where(np.logical_and(x > 0.2, x < 0.6), x * x, x))
def nu_logical_or(x): return np.sum(np.where(np.logical_or(x < 0.2, x > 0.6), x * x, x))
def nu_logical_xor(x): return np.sum(np.where(np.logical_xor(x > 0.2, x > 0.6), x * x, x))
def nu_logical_not(x): return np.sum(np.where(np.logical_not(x > 0.6), x * x, x))
def nu_maximum(x): return np.sum(np.maximum(x, 0.5) ** 2)
def nu_minimum(x): return np.sum(np.minimum(x, 0.5) ** 2)
def nu_fmax(x): return np.sum(np.fmax(x, 0.5) ** 2)
def nu_fmin(x): return np.sum(np.fmin(x, 0.5) ** 2)
def nu_comparison_ops(x): return np.sum((x > 0.5) * x * x + (x <= 0.5) * x)


# Floating functions
def nu_isfinite(x): return np.sum(np.where(np.isfinite(x), x * x, 0.0))
def nu_isinf(x): return np.sum(np.where(np.isinf(x), 0.0, x * x))
def nu_isnan(x): return np.sum(np.where(np.isnan(x), 0.0, x * x))
def nu_signbit(x): return np.sum(np.where(np.signbit(x - 0.5), x, x * x))
def nu_copysign(x): return np.sum(np.copysign(x, -1.0) * x + np.copysign(2.0, x - 0.5) * x)
def nu_nextafter(x): return np.sum(np.nextafter(x, 10.0) * x)
def nu_ldexp(x): return np.sum(np.ldexp(x, 3))
def nu_floor(x): return np.sum(np.floor(x * 3.0) * x)
def nu_ceil(x): return np.sum(np.ceil(x * 3.0) * x)
def nu_trunc(x): return np.sum(np.trunc(x * 3.0) * x)
def nu_spacing(x): return np.sum(np.spacing(x) + x * x)


# Datetime functions
def nu_isnat(x, t):
    if np.isnat(t):
        return x
    return x * x


# =====================================================================================
# 2a. autograd-numpy: NumPy as autograd differentiates it (numpy_vjps.py, numpy_jvps.py,
#     linalg.py, fft.py), written as plain NumPy.
# =====================================================================================

# ---- Non-differentiable functions (nograd_functions) ------------------------------

def ag_floor(x): return np.sum(np.floor(3.0 * x) * x)
def ag_ceil(x): return np.sum(np.ceil(3.0 * x) * x)
def ag_round(x): return np.sum(np.round(x * 1.37, 1) * x)
def ag_rint(x): return np.sum(np.rint(3.0 * x) * x)
def ag_around(x): return np.sum(np.around(3.0 * x) * x)
def ag_fix(x): return np.sum(np.fix(3.0 * x) * x)
def ag_trunc(x): return np.sum(np.trunc(3.0 * x) * x)
def ag_all(x): return np.sum(x * x) if np.all(x > 0.0) else np.sum(x)
def ag_any(x): return np.sum(x * x) if np.any(x > 0.8) else np.sum(x)
def ag_argmax(x): return x[np.argmax(x)] * np.sum(x)
def ag_argmin(x): return x[np.argmin(x)] * np.sum(x)
def ag_argpartition(x): return np.sum(x[np.argpartition(x, 2)[:2]] ** 2)
def ag_argsort(x): return np.sum(x[np.argsort(x)] * np.arange(x.size))
def ag_argwhere(x): return np.sum(x[np.argwhere(x > 0.5)[:, 0]] ** 2)
def ag_nonzero(x): return np.sum(x[np.nonzero(x > 0.5)] ** 2)
def ag_flatnonzero(x): return np.sum(x[np.flatnonzero(x > 0.5)] ** 2)
def ag_count_nonzero(x): return np.sum(x * x) * np.count_nonzero(x > 0.5)
def ag_searchsorted(x): return np.sum(x * np.searchsorted(np.array([0.25, 0.5, 0.75]), x))
def ag_sign(x): return np.sum(np.sign(x - 0.5) * x)
def ag_ndim(x): return np.sum(x * x) * np.ndim(x)
def ag_shape(x): return np.sum(x * x) * np.shape(x)[0]
def ag_floor_divide(x): return np.sum(np.floor_divide(x, 0.3) * x)
def ag_logical_and(x): return np.sum(np.logical_and(x > 0.2, x < 0.6) * x)
def ag_logical_or(x): return np.sum(np.logical_or(x < 0.2, x > 0.6) * x)
def ag_logical_not(x): return np.sum(np.logical_not(x > 0.6) * x)
def ag_logical_xor(x): return np.sum(np.logical_xor(x > 0.2, x > 0.6) * x)
def ag_isfinite(x): return np.sum(np.isfinite(x) * x)
def ag_isinf(x): return np.sum(~np.isinf(x) * x)
def ag_isnan(x): return np.sum(~np.isnan(x) * x)
def ag_isneginf(x): return np.sum(~np.isneginf(x) * x)
def ag_isposinf(x): return np.sum(~np.isposinf(x) * x)
def ag_allclose(x): return np.sum(x * x) if np.allclose(x, x) else 0.0
def ag_isclose(x): return np.sum(np.isclose(x, 0.3) * x + x * x)
def ag_array_equal(x): return np.sum(x * x) if np.array_equal(x, x) else 0.0
def ag_array_equiv(x): return np.sum(x * x) if np.array_equiv(x, x) else 0.0
def ag_greater(x): return np.sum(np.greater(x, 0.5) * x)
def ag_greater_equal(x): return np.sum(np.greater_equal(x, 0.5) * x)
def ag_less(x): return np.sum(np.less(x, 0.5) * x)
def ag_less_equal(x): return np.sum(np.less_equal(x, 0.5) * x)
def ag_equal(x): return np.sum(np.equal(x, 0.5) * x + x)
def ag_not_equal(x): return np.sum(np.not_equal(x, 0.5) * x)
def ag_iscomplexobj(x): return np.sum(x) if np.iscomplexobj(x) else np.sum(x * x)
def ag_iscomplex(x): return np.sum(np.iscomplex(x) * x + x * x)
def ag_size(x): return np.sum(x * x) * np.size(x)
def ag_isscalar(x): return np.sum(x) if np.isscalar(x) else np.sum(x * x)
def ag_isreal(x): return np.sum(np.isreal(x) * x * x)
def ag_zeros_like(x): return np.sum((np.zeros_like(x) + x) ** 2)
def ag_ones_like(x): return np.sum(np.ones_like(x) * x * x)
def ag_empty_like(x):
    y = np.empty_like(x)
    y[:] = 2.0
    return np.sum(y * x)
def ag_full_like(x): return np.sum(np.full_like(x, 3.0) * x)
def ag_result_type(x): return np.sum(x.astype(np.result_type(x, 1.0)) ** 2)


# ---- Binary ufuncs (array and broadcast operands) ---------------------------------

def ag_add(x, w): return np.sum(np.add(w, x) ** 2)
def ag_multiply(x, w): return np.sum(np.multiply(w, x) ** 2)
def ag_subtract(x, w): return np.sum(np.subtract(w, x) ** 2)
def ag_divide(x, w): return np.sum(np.divide(w, x) + np.divide(x, w + 2.0))
def ag_maximum(x, w): return np.sum(np.maximum(w, x) ** 2)
def ag_minimum(x, w): return np.sum(np.minimum(w, x) ** 2)
def ag_fmax(x, w): return np.sum(np.fmax(w, x) ** 2)
def ag_fmin(x, w): return np.sum(np.fmin(w, x) ** 2)
def ag_logaddexp(x, w): return np.sum(np.logaddexp(w, x))
def ag_logaddexp2(x, w): return np.sum(np.logaddexp2(w, x))
def ag_true_divide(x, w): return np.sum(np.true_divide(x, w + 2.0))
def ag_mod(x, w): return np.sum(np.mod(x, 0.3) * w + np.mod(2.0, x))
def ag_remainder(x, w): return np.sum(np.remainder(x, 0.3) * w + np.remainder(2.0, x))
def ag_power(x, w): return np.sum(np.power(x, w + 1.0) + np.power(w + 1.0, x))
def ag_arctan2(x, w): return np.sum(np.arctan2(x, w + 1.0) + np.arctan2(w, x))
def ag_hypot(x, w): return np.sum(np.hypot(x, w))
def ag_operators(x, w): return np.sum((w + x) * (w - x) / (x + 1.0) ** 2)


# ---- Simple grads (unary, on arrays) ----------------------------------------------

def ag_negative(x): return np.sum(np.negative(x) * x)
def ag_abs(x): return np.sum(np.abs(x - 0.5))
def ag_absolute(x): return np.sum(np.absolute(x - 0.5) ** 3)
def ag_fabs(x): return np.sum(np.fabs(x - 0.5))
def ag_reciprocal(x): return np.sum(np.reciprocal(x))
def ag_exp(x): return np.sum(np.exp(x))
def ag_exp2(x): return np.sum(np.exp2(x))
def ag_expm1(x): return np.sum(np.expm1(x))
def ag_log(x): return np.sum(np.log(x))
def ag_log2(x): return np.sum(np.log2(x))
def ag_log10(x): return np.sum(np.log10(x))
def ag_log1p(x): return np.sum(np.log1p(x))
def ag_sin(x): return np.sum(np.sin(x))
def ag_cos(x): return np.sum(np.cos(x))
def ag_tan(x): return np.sum(np.tan(x))
def ag_arcsin(x): return np.sum(np.arcsin(x))
def ag_arccos(x): return np.sum(np.arccos(x))
def ag_arctan(x): return np.sum(np.arctan(x))
def ag_sinh(x): return np.sum(np.sinh(x))
def ag_cosh(x): return np.sum(np.cosh(x))
def ag_tanh(x): return np.sum(np.tanh(x))
def ag_arcsinh(x): return np.sum(np.arcsinh(x))
def ag_arccosh(x): return np.sum(np.arccosh(x + 1.0))
def ag_arctanh(x): return np.sum(np.arctanh(x))
def ag_rad2deg(x): return np.sum(np.rad2deg(x) ** 2)
def ag_degrees(x): return np.sum(np.degrees(x) ** 2)
def ag_deg2rad(x): return np.sum(np.deg2rad(x) ** 2)
def ag_radians(x): return np.sum(np.radians(x) ** 2)
def ag_square(x): return np.sum(np.square(x))
def ag_sqrt(x): return np.sum(np.sqrt(x))
def ag_sinc(x): return np.sum(np.sinc(x))
def ag_nan_to_num(x): return np.sum(np.nan_to_num(x * x))


# ---- Shapes, joins, splits --------------------------------------------------------

def ag_reshape(x): return np.sum(np.reshape(x, (2, 3)) * np.arange(6.0).reshape(2, 3))
def ag_reshape_order_f(x): return np.sum(np.reshape(x, (2, 3), order="F") * np.arange(6.0).reshape(2, 3))
def ag_roll_axis(x): return np.sum(np.roll(x, 1, axis=1) * np.arange(x.size).reshape(x.shape))
def ag_array_split_axis(x):
    a, b = np.array_split(x, 2, axis=1)
    return np.sum(a ** 2) + np.sum(b ** 3)
def ag_split_axis(x):
    a, b = np.split(x, 2, axis=0)
    return np.sum(a ** 2) + np.sum(b ** 3)
def ag_vsplit(x):
    a, b = np.vsplit(x, 2)
    return np.sum(a ** 2) + np.sum(b ** 3)
def ag_hsplit(x):
    a, b = np.hsplit(x, [1])
    return np.sum(a ** 2) + np.sum(b ** 3)
def ag_dsplit(x):
    a, b = np.dsplit(x, 2)
    return np.sum(a ** 2) + np.sum(b ** 3)
def ag_ravel(x): return np.sum(np.ravel(x) * np.arange(x.size))
def ag_ravel_order_f(x): return np.sum(np.ravel(x, order="F") * np.arange(x.size))
def ag_expand_dims(x): return np.sum(np.expand_dims(x, 1) * np.expand_dims(x, 0))
def ag_squeeze(x): return np.sum(np.squeeze(x) * np.arange(x.size))
def ag_squeeze_axis(x): return np.sum(np.squeeze(x, axis=0) * np.arange(x.size))
def ag_hstack_rows(x): return np.sum(np.hstack(x) * np.arange(x.size).reshape(3, 8))
def ag_column_stack_vector(x): return np.sum(np.sin(np.column_stack(x)) * np.arange(x.size))
def ag_matmul_vector_stack(x, v): return np.sum(np.sin(v[:3] @ x)) + np.sum((x @ v) ** 2)
def ag_einsum_ellipsis_product(x, m):
    return np.sum(np.sin(np.einsum("...ij,jk->...ik", x, m))) + np.sum(
        np.einsum(m, [0, 1], x, [Ellipsis, 1, 2], [Ellipsis, 0, 2]) ** 2)
def ag_diag(x): return np.sum(np.diag(x, 1) ** 2) + np.sum(np.diag(x) ** 3)
def ag_diag_build(x): return np.sum(np.diag(x, -1) @ np.arange(x.size + 1.0))
def ag_flipud(x): return np.sum(np.flipud(x) * np.arange(x.size).reshape(x.shape))
def ag_fliplr(x): return np.sum(np.fliplr(x) * np.arange(x.size).reshape(x.shape))
def ag_rot90(x): return np.sum(np.rot90(x, 2) * np.arange(x.size).reshape(x.shape))
def ag_trace(x): return np.trace(x, 1) + np.trace(x) ** 2
def ag_full(x): return np.sum(np.full((2, 3), x) * np.arange(6.0).reshape(2, 3))
def ag_triu(x): return np.sum(np.triu(x, 1) ** 2) + np.sum(np.triu(x))
def ag_tril(x): return np.sum(np.tril(x, -1) ** 2) + np.sum(np.tril(x))
def ag_clip(x): return np.sum(np.clip(x, 0.3, 0.8) ** 2)
def ag_swapaxes(x): return np.sum(np.swapaxes(x, 0, 2) * np.arange(x.size).reshape(x.shape[2], x.shape[1], x.shape[0]))
def ag_moveaxis(x): return np.sum(np.moveaxis(x, 0, 2) * np.arange(x.size).reshape(x.shape[1], x.shape[2], x.shape[0]))
def ag_rollaxis(x): return np.sum(np.rollaxis(x, 2) * np.arange(x.size).reshape(x.shape[2], x.shape[0], x.shape[1]))
def ag_transpose_axes(x): return np.sum(np.transpose(x, (1, 2, 0)) * np.arange(x.size).reshape(x.shape[1], x.shape[2], x.shape[0]))
def ag_broadcast_to(x): return np.sum(np.broadcast_to(x, (2, 3, 4)) * np.arange(24.0).reshape(2, 3, 4))
def ag_repeat_axis(x): return np.sum(np.repeat(x, 2, axis=1) * np.arange(2.0 * x.size).reshape(x.shape[0], -1))
def ag_tile(x): return np.sum(np.tile(x, (2, 1)) * np.arange(2.0 * x.size).reshape(2 * x.shape[0], -1))
def ag_concatenate_axis(x): return np.sum(np.concatenate([x, x ** 2], axis=1) * np.arange(2.0 * x.size).reshape(x.shape[0], -1))
def ag_hstack(x): return np.sum(np.hstack([x, x * x]) * np.arange(2.0 * x.size))
def ag_vstack(x): return np.sum(np.vstack([x, x * x]) * np.arange(2.0)[:, None])
def ag_column_stack(x): return np.sum(np.column_stack([x, x * x]) * np.arange(2.0))
def ag_stack(x): return np.sum(np.stack([x, x * x], axis=-1) * np.arange(2.0))
def ag_dstack(x): return np.sum(np.dstack([x, x * x]) * np.arange(2.0))
def ag_append(x): return np.sum(np.append(x, x[:1] * 3.0) ** 2)
def ag_append_axis(x): return np.sum(np.append(x, x * 2.0, axis=0) ** 2)
def ag_atleast_1d(x): return np.sum(np.atleast_1d(x) ** 2)
def ag_atleast_2d(x): return np.sum(np.atleast_2d(x) ** 2)
def ag_atleast_3d(x): return np.sum(np.atleast_3d(x) ** 2)
def ag_pad_constant(x): return np.sum(np.pad(x, (1, 2)) * np.arange(x.size + 3.0))
def ag_pad_edge(x): return np.sum(np.pad(x, 1, mode="edge") * np.arange(x.size + 2.0))
def ag_pad_reflect(x): return np.sum(np.pad(x, 2, mode="reflect") * np.arange(x.size + 4.0))
def ag_array_from_scalars(x): return np.sum(np.array([x[0] * x[1], x[2], 3.0]) ** 2)
def ag_array_from_arrays(x): return np.sum(np.array([x, 2.0 * x]) * np.arange(2.0)[:, None])
def ag_select(x): return np.sum(np.select([x < 0.4, x > 0.6], [x * x, 3.0 * x], default=x))


# ---- Complex parts ----------------------------------------------------------------

def ag_real(x): return np.sum(np.real(x) ** 2)
def ag_imag(x): return np.sum(np.imag(x) + x ** 2)
def ag_conj(x): return np.sum(np.conj(x) * x)
def ag_conjugate(x): return np.sum(np.conjugate(x) * x)
def ag_angle(x): return np.sum(np.angle(x - 0.5) + x * x)
def ag_real_if_close(x): return np.sum(np.real_if_close(x) ** 2)
def ag_complex_roundtrip(x):
    z = x + 1j * x * x
    return np.sum(np.abs(z) ** 2) + np.sum(np.real(z * np.conj(z)))


def ag_complex_var_std(x):
    z = x + 1j * np.sin(3.0 * x)
    return np.var(z) + np.std(z, ddof=1)


def ag_complex_norms(x):
    z = x + 1j * np.cos(x)
    return (np.linalg.norm(z) + np.linalg.norm(z[0], 3) + np.linalg.norm(z, "fro")
            + np.linalg.norm(z, 1))


def ag_complex_exp_log(x):
    z = x + 0.5j * x * x
    return np.sum(np.real(np.expm1(z) * np.log1p(z)) + np.imag(np.exp2(z) + np.log2(z)))


def ag_complex_max_min(x):
    z = x * x + 1j * np.sin(2.0 * x)
    return np.sum(np.real(np.max(z, axis=0) * (0.6 - 0.2j))) + np.imag(np.min(z))


def ag_complex_prod(x):
    z = x + 1j * np.cos(x)
    return np.sum(np.imag(np.prod(z, axis=1))) + np.real(np.prod(z))


def ag_complex_products(x):
    z = x + 1j * x[::-1]
    return (np.sum(np.real(np.kron(z, z))) + np.sum(np.imag(np.tensordot(z, z, axes=([1], [1]))))
            + np.sum(np.real(np.einsum("ij,ij->j", z, np.conj(z)))))


# ---- where, cross, linspace, astype, diff, gradient, kron -------------------------

def ag_where(x): return np.sum(np.where(x > 0.5, x * x, np.sin(x)))
def ag_cross(x, y): return np.sum(np.cross(x, y) ** 2)
def ag_cross_axis(x, y): return np.sum(np.cross(x, y, axis=0) ** 2)
def ag_linspace(x): return np.sum(np.linspace(x, 3.0 * x, 5) ** 2)
def ag_astype(x): return np.sum(x.astype(np.float64) ** 2)
def ag_diff_axis(x): return np.sum(np.diff(x, axis=0) ** 2) + np.sum(np.diff(x, n=2, axis=1) ** 2)
def ag_gradient(x): return np.sum(np.gradient(x) ** 2)
def ag_gradient_2d(x):
    gy, gx = np.gradient(x)
    return np.sum(gy ** 2 + gx ** 3)
def ag_kron(x, w): return np.sum(np.kron(x, w) ** 2)


# ---- Reductions -------------------------------------------------------------------

def ag_sum_axis_keepdims(x): return np.sum(np.sum(x, axis=1, keepdims=True) * x)
def ag_mean_axis(x): return np.sum(np.mean(x, axis=0) ** 2)
def ag_prod_axis(x): return np.sum(np.prod(x, axis=1))
def ag_var_ddof(x): return np.var(x, ddof=1) + np.sum(np.var(x, axis=0))
def ag_std_axis(x): return np.sum(np.std(x, axis=1)) + np.std(x, ddof=1)
def ag_max_axis(x): return np.sum(np.max(x, axis=0) ** 2)
def ag_min_axis(x): return np.sum(np.min(x, axis=1, keepdims=True) * x)
def ag_amax(x): return np.amax(x) * 2.0 + np.sum(x)
def ag_amin(x): return np.amin(x) * 2.0 + np.sum(x)
def ag_max_ties(x): return np.max(np.array([x[0], x[0], x[1]])) * 3.0
def ag_cumsum_axis(x): return np.sum(np.cumsum(x, axis=1) ** 2)
def ag_cumsum_flat(x): return np.sum(np.cumsum(x) ** 2)


# ---- Products ---------------------------------------------------------------------

def ag_inner(x, w): return np.sum(np.inner(w, x) ** 2)
def ag_matmul(x, w): return np.sum(np.matmul(w, x) ** 2)
def ag_matmul_stack(x, w): return np.sum(np.matmul(x, w) ** 2)
def ag_dot_nd(x, w): return np.sum(np.dot(x, w) ** 2)
def ag_dot_vec(x): return np.dot(x, x)
def ag_tensordot(x, w): return np.sum(np.tensordot(x, w, axes=([1, 2], [0, 1])) ** 2)
def ag_tensordot_int(x, w): return np.sum(np.tensordot(x, w, 1) ** 2)
def ag_outer(x): return np.sum(np.outer(x, x[::-1]) ** 2)
def ag_einsum_matmul(x, w): return np.sum(np.einsum("ij,jk->ik", w, x) ** 2)
def ag_einsum_trace(x): return np.einsum("ii", x) ** 2
def ag_einsum_batch(x, w): return np.sum(np.einsum("bij,bjk->bik", x, x) ** 2) + np.einsum("i,i->", w[0], w[0])
def ag_einsum_ellipsis(x): return np.sum(np.einsum("...ij->...ji", x) * np.arange(x.size).reshape(x.shape[0], x.shape[2], x.shape[1]))
def ag_diagonal(x): return np.sum(np.diagonal(x, 1) ** 2) + np.sum(np.diagonal(x) ** 3)
def ag_diagonal_axes(x): return np.sum(np.diagonal(x, 0, 1, 2) ** 2)


# ---- Sorting ----------------------------------------------------------------------

def ag_sort(x): return np.sum(np.sort(x) * np.arange(x.size))
def ag_sort_axis(x): return np.sum(np.sort(x, axis=0) * np.arange(x.size).reshape(x.shape))
def ag_partition(x): return np.sum(np.partition(x, 2)[:2] ** 2) + np.partition(x, 2)[2] * 3.0


# ---- Indexing (ArrayBox.__getitem__) ----------------------------------------------

def ag_getitem_slices(x): return np.sum(x[1:, ::2] ** 2) + x[0, -1]
def ag_getitem_int_array(x): return np.sum(x[np.array([0, 2, 2])] ** 2)
def ag_getitem_list(x): return np.sum(x[[0, 2, 2]] ** 2)
def ag_getitem_mask(x): return np.sum(x[x > 0.5] ** 2)
def ag_getitem_pair(x): return np.sum(x[np.array([0, 1]), np.array([2, 0])] ** 2)
def ag_getitem_mixed(x): return np.sum(x[:, np.array([0, 2])] ** 2)
def ag_getitem_newaxis(x): return np.sum(x[:, None] * x[None, :])
def ag_getitem_list_beside(x):  # a list (or tuple) beside other items is an index array
    t = np.reshape(x, (2, 2, 3))
    return np.sum(t[1, 1:, [0, 2]] ** 3) + np.sum(t[(1, 0), 0] * np.arange(1.0, 4.0))
def ag_r_c(x):  # autograd's numpy_wrapper r_ and c_, NumPy's
    return np.sum(np.r_[x[0], x[1] ** 2, 3.0, 0:2] * np.arange(1.0, 10.0)) \
        + np.sum(np.c_[x[0], x[:3, :2]] ** 3)


# ---- numpy.linalg -----------------------------------------------------------------

def ag_la_det(x): return np.linalg.det(x)
def ag_la_slogdet(x): return np.linalg.slogdet(x)[1]
def ag_la_inv(x): return np.sum(np.linalg.inv(x) ** 2)
def ag_la_pinv(x): return np.sum(np.linalg.pinv(x) ** 2)
def ag_la_solve(x, b): return np.sum(np.linalg.solve(x, b) ** 2)
def ag_la_solve_b(b, x): return np.sum(np.linalg.solve(x, b) ** 2)
def ag_la_norm(x): return np.linalg.norm(x)
def ag_la_norm_axis(x): return np.sum(np.linalg.norm(x, axis=1))
def ag_la_norm_ord1(x): return np.linalg.norm(x, ord=1)
def ag_la_norm_fro(x): return np.linalg.norm(x, "fro")
def ag_la_norm_nuc(x): return np.linalg.norm(x, "nuc")
def ag_la_norm_2mat(x): return np.linalg.norm(x, 2)
def ag_la_eigh_upper_signs(x):  # not symmetric: NumPy's eigenvectors read the upper triangle
    w, v = np.linalg.eigh(x + np.array([[0.0, 0.0, 0.0], [-1.5, 0.0, 0.0], [1.1, -0.9, 0.0]]),
                          "U")
    return np.sum(w * np.arange(1.0, 4.0)) + np.sum(v[:, 0] ** 3)  # an odd power: signs count


def ag_la_eigh(x):
    w, v = np.linalg.eigh(x + x.T)
    return np.sum(w * np.arange(1.0, w.size + 1.0)) + np.sum(v[:, 0] ** 4)
def ag_la_eig(x):
    w, v = np.linalg.eig(x + x.T)
    return np.sum(np.real(w) ** 2)
def ag_la_cholesky(x): return np.sum(np.linalg.cholesky(x @ x.T + np.eye(x.shape[0])))
def ag_la_svd(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s ** 2 * np.arange(1.0, s.size + 1.0))
def ag_la_svd_values(x): return np.sum(np.linalg.svd(x, compute_uv=False))


def ag_la_svd_complex(x):
    u, s, vh = np.linalg.svd(x + 1j * x[:, ::-1], full_matrices=False)
    return np.sum(np.abs(u) * 0.7) + np.sum(s * np.arange(1.0, s.size + 1.0)) + np.sum(
        np.abs(vh[:, :2]))


def ag_la_norm_nuc_complex(x):
    return np.linalg.norm(x + 1j * x.T ** 2, "nuc")


def ag_la_eigh_complex(x):
    a = x + 1j * (x - x.T)  # Hermitian
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.arange(1.0, 4.0)) + np.sum(np.abs(v) * x)


def ag_la_eig_complex(x):
    w, v = np.linalg.eig(x + 0.5j * x.T @ x)
    return np.sum(np.abs(w)) + np.sum(w.imag) + np.sum(np.abs(v) * x)
def ag_la_inv_stack(x): return np.sum(np.linalg.inv(x) ** 2)
def ag_la_det_stack(x): return np.sum(np.linalg.det(x))
def ag_la_svd_stack(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s ** 2 * np.arange(1.0, s.shape[-1] + 1.0)) + np.sum(np.linalg.svd(x, compute_uv=False))
def ag_la_eigh_stack(x):
    w, v = np.linalg.eigh(x + np.swapaxes(x, -1, -2))
    return np.sum(w * np.arange(1.0, w.shape[-1] + 1.0)) + np.sum(v[..., 0] ** 4)
def ag_la_cholesky_stack(x):
    return np.sum(np.linalg.cholesky(x @ np.swapaxes(x, -1, -2) + np.eye(x.shape[-1])))
def ag_la_slogdet_stack(x): return np.sum(np.linalg.slogdet(x)[1])
def ag_la_inv_stack4(x): return np.sum(np.linalg.inv(np.reshape(x, (1, 2, 3, 3))) ** 2)
def ag_la_pinv_stack(x): return np.sum(np.linalg.pinv(x) ** 2)
def ag_la_solve_stack(a, b): return np.sum(np.sin(np.linalg.solve(a, b)))
def ag_la_norm_nuc_axis(x): return np.sum(np.linalg.norm(x, "nuc", axis=(0, 2)) ** 2)


# ---- numpy.fft --------------------------------------------------------------------

def ag_fft(x): return np.sum(np.abs(np.fft.fft(x)) ** 2)
def ag_ifft(x): return np.sum(np.real(np.fft.ifft(x)) * np.arange(x.size))
def ag_fft2(x): return np.sum(np.abs(np.fft.fft2(x)) ** 2)
def ag_ifft2(x): return np.sum(np.real(np.fft.ifft2(x)) * np.arange(x.size).reshape(x.shape))
def ag_fftn(x): return np.sum(np.abs(np.fft.fftn(x)) ** 2)
def ag_ifftn(x): return np.sum(np.imag(np.fft.ifftn(x)) * np.arange(x.size).reshape(x.shape))
def ag_rfft(x): return np.sum(np.abs(np.fft.rfft(x)) ** 2 * np.arange(1.0, x.size // 2 + 2.0))
def ag_irfft(x): return np.sum(np.fft.irfft(x) * np.arange(2.0 * (x.size - 1)))
def ag_rfft2(x): return np.sum(np.abs(np.fft.rfft2(x)) ** 2)
def ag_irfft2(x): return np.sum(np.fft.irfft2(x) ** 2)
def ag_rfftn(x): return np.sum(np.abs(np.fft.rfftn(x)) ** 2)
def ag_irfftn(x): return np.sum(np.fft.irfftn(x) ** 2)
def ag_fft_n(x):
    return (np.sum(np.abs(np.fft.fft(x, n=6)) ** 2) + np.sum(np.fft.rfft(x, n=3).imag)
            + np.sum(np.fft.irfft(x + 1j * x, n=9) * np.arange(9)))
def ag_fft_s(x):
    return np.sum(np.abs(np.fft.fft2(x, s=(3, 2))) ** 2) + np.sum(
        np.fft.irfftn(x, s=(1, 5), axes=(0, 1)) ** 2)
def ag_fftshift(x): return np.sum(np.fft.fftshift(x) * np.arange(x.size))
def ag_ifftshift(x): return np.sum(np.fft.ifftshift(x) * np.arange(x.size))


# =====================================================================================
# 2b. autograd-scipy: SciPy as autograd wraps it (autograd/scipy/)
# =====================================================================================

# ---- scipy.special ----------------------------------------------------------------

def as_beta(x): return np.sum(scipy.special.beta(x, 2.0) + scipy.special.beta(1.5, x))
def as_betaln(x): return np.sum(scipy.special.betaln(x, 2.0) + scipy.special.betaln(1.5, x))
def as_betainc(x): return np.sum(scipy.special.betainc(2.0, 3.0, x))
def as_polygamma(x): return np.sum(scipy.special.polygamma(1, x))
def as_polygamma0(x): return np.sum(scipy.special.polygamma(0, x))
def as_psi(x): return np.sum(scipy.special.psi(x))
def as_digamma(x): return np.sum(scipy.special.digamma(x))
def as_gamma(x): return np.sum(scipy.special.gamma(x))
def as_gammaln(x): return np.sum(scipy.special.gammaln(x))
def as_gammainc(x): return np.sum(scipy.special.gammainc(2.0, x))
def as_gammaincc(x): return np.sum(scipy.special.gammaincc(2.0, x))
def as_gammainc_shape(x):
    return np.sum(scipy.special.gammainc(x + 1.0, 1.5) + scipy.special.gammaincc(2.0 * x, 0.8))


def as_gammaincinv(x): return np.sum(scipy.special.gammaincinv(x + 1.0, x * 0.9))


def as_wofz(x): return np.sum(np.real(scipy.special.wofz((x - 0.4) + 0.7j * x)))
def as_wofz_real(x): return np.sum(np.imag(scipy.special.wofz(2.0 * x)))
def as_loggamma_complex(x):
    return np.sum(np.real(scipy.special.loggamma(x + 1.0 + 0.5j * x)))


def as_erf_complex(x):
    z = x - 0.3 + 0.8j * x
    return np.sum(np.real(scipy.special.erf(z)) + np.imag(scipy.special.erfc(2.0 * z)))


def as_gammasgn(x): return np.sum(scipy.special.gammasgn(x) * x * x)
def as_rgamma(x): return np.sum(scipy.special.rgamma(x))
def as_multigammaln(x): return scipy.special.multigammaln(x, 3)
def as_j0(x): return np.sum(scipy.special.j0(x))
def as_y0(x): return np.sum(scipy.special.y0(x))
def as_j1(x): return np.sum(scipy.special.j1(x))
def as_y1(x): return np.sum(scipy.special.y1(x))
def as_jn(x): return np.sum(scipy.special.jn(2, x))
def as_yn(x): return np.sum(scipy.special.yn(2, x))
def as_i0(x): return np.sum(scipy.special.i0(x))
def as_i1(x): return np.sum(scipy.special.i1(x))
def as_iv(x): return np.sum(scipy.special.iv(2, x))
def as_ive(x): return np.sum(scipy.special.ive(2, x))
def as_erf(x): return np.sum(scipy.special.erf(x))
def as_erfc(x): return np.sum(scipy.special.erfc(x))
def as_erfinv(x): return np.sum(scipy.special.erfinv(x))
def as_erfcinv(x): return np.sum(scipy.special.erfcinv(x))
def as_logit(x): return np.sum(scipy.special.logit(x))
def as_expit(x): return np.sum(scipy.special.expit(x))
def as_logsumexp(x): return scipy.special.logsumexp(x)
def as_logsumexp_axis(x): return np.sum(scipy.special.logsumexp(x, axis=1, keepdims=True) * x)
def as_logsumexp_b(x): return scipy.special.logsumexp(x, b=np.array([0.5, 1.0, 2.0, 1.5]))


# ---- scipy.stats ------------------------------------------------------------------

def as_beta_cdf(x): return np.sum(scipy.stats.beta.cdf(x, 2.0, 3.0))
def as_beta_logpdf(x): return np.sum(scipy.stats.beta.logpdf(x, 2.0, 3.0))
def as_beta_logpdf_ab(a): return np.sum(scipy.stats.beta.logpdf(0.3, a, a + 1.0))
def as_beta_pdf(x): return np.sum(scipy.stats.beta.pdf(x, 2.0, 3.0))
def as_chi2_cdf(x): return np.sum(scipy.stats.chi2.cdf(x, 3.0))
def as_chi2_logpdf(x): return np.sum(scipy.stats.chi2.logpdf(x, 3.0))
def as_chi2_pdf(x): return np.sum(scipy.stats.chi2.pdf(x, 3.0))
def as_dirichlet_logpdf(x): return scipy.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), x)
def as_dirichlet_logpdf_x(x):
    p = x / np.sum(x)
    return scipy.stats.dirichlet.logpdf(p, np.array([1.5, 2.0, 3.0]))
def as_dirichlet_pdf(x): return scipy.stats.dirichlet.pdf(np.array([0.2, 0.3, 0.5]), x)
def as_gamma_cdf(x): return np.sum(scipy.stats.gamma.cdf(x, 2.0))
def as_gamma_logpdf(x): return np.sum(scipy.stats.gamma.logpdf(x, 2.0))
def as_gamma_logpdf_a(a): return np.sum(scipy.stats.gamma.logpdf(1.3, a))
def as_gamma_pdf(x): return np.sum(scipy.stats.gamma.pdf(x, 2.0))
def as_mvn_logpdf(x): return scipy.stats.multivariate_normal.logpdf(x, np.zeros(3), np.eye(3) * 2.0)
def as_mvn_logpdf_mean(m): return scipy.stats.multivariate_normal.logpdf(np.array([0.1, 0.2, 0.3]), m, np.eye(3))
def as_mvn_logpdf_cov(c): return scipy.stats.multivariate_normal.logpdf(np.array([0.1, 0.2, 0.3]), np.zeros(3), c @ c.T + np.eye(3))
def as_mvn_pdf(x): return scipy.stats.multivariate_normal.pdf(x, np.zeros(3), np.eye(3) * 2.0)
def as_mvn_entropy(c): return scipy.stats.multivariate_normal.entropy(np.zeros(3), c @ c.T + np.eye(3))
def as_norm_pdf(x): return np.sum(scipy.stats.norm.pdf(x, 0.2, 1.5))
def as_norm_cdf(x): return np.sum(scipy.stats.norm.cdf(x))
def as_norm_sf(x): return np.sum(scipy.stats.norm.sf(x, loc=0.1))
def as_norm_logpdf(x): return np.sum(scipy.stats.norm.logpdf(x, 0.1, 2.0))
def as_norm_logpdf_loc_scale(s): return np.sum(scipy.stats.norm.logpdf(np.array([0.3, 0.9]), s, s + 1.0))
def as_norm_logcdf(x): return np.sum(scipy.stats.norm.logcdf(x))
def as_norm_logsf(x): return np.sum(scipy.stats.norm.logsf(x))
def as_poisson_cdf(mu): return np.sum(scipy.stats.poisson.cdf(np.array([1.0, 2.0, 4.0]), mu))
def as_poisson_logpmf(mu): return np.sum(scipy.stats.poisson.logpmf(np.array([1, 2, 4]), mu))
def as_poisson_pmf(mu): return np.sum(scipy.stats.poisson.pmf(np.array([1, 2, 4]), mu))
def as_t_pdf(x): return np.sum(scipy.stats.t.pdf(x, 4.0))
def as_t_cdf(x): return np.sum(scipy.stats.t.cdf(x, 4.0, 0.1, 1.5))
def as_t_logpdf(x): return np.sum(scipy.stats.t.logpdf(x, 4.0, 0.1, 1.5))
def as_t_logpdf_df(df): return np.sum(scipy.stats.t.logpdf(np.array([0.3, 1.2]), df))
def as_t_logcdf(x): return np.sum(scipy.stats.t.logcdf(x, 4.0))


# ---- scipy.signal -----------------------------------------------------------------

def as_signal_convolve(x): return np.sum(scipy.signal.convolve(x, np.array([1.0, -0.5, 0.25])) ** 2)
def as_signal_convolve_valid(x): return np.sum(scipy.signal.convolve(x, x[::-1], mode="valid") ** 2)
def as_signal_convolve_same_longer(x): return np.sum(scipy.signal.convolve(x[:2], x * x, mode="same") * np.array([1.0, 3.0]))
def as_signal_convolve_2d(x): return np.sum(scipy.signal.convolve(x, np.array([[1.0, 0.5], [0.25, -1.0]])) ** 2)
def as_signal_convolve2d_same(x): return np.sum(scipy.signal.convolve2d(x, np.array([[1.0, 0.5], [0.25, -1.0]]), mode="same") * x)
def as_signal_convolve2d_valid(x): return np.sum(scipy.signal.convolve2d(np.array([[1.0, 0.5], [0.25, -1.0]]), x, mode="valid") ** 2)


# ---- scipy.linalg -----------------------------------------------------------------

def as_linalg_sqrtm(x): return np.sum(scipy.linalg.sqrtm(x @ x.T + np.eye(x.shape[0])).real)
def as_linalg_solve_triangular(x, b): return np.sum(scipy.linalg.solve_triangular(np.tril(x), b, lower=True) ** 2)
def as_linalg_solve_triangular_b(b, x): return np.sum(scipy.linalg.solve_triangular(np.triu(x), b) ** 2)
def as_linalg_solve_banded(x, b): return np.sum(scipy.linalg.solve_banded((1, 1), x, b) ** 2)
def as_linalg_solve_sylvester(x): return np.sum(scipy.linalg.solve_sylvester(x, x.T + np.eye(x.shape[0]), np.ones(x.shape)) ** 2)
def as_linalg_solve(x, b): return np.sum(scipy.linalg.solve(x, b) ** 2)
def as_linalg_lyapunov(x): return np.sum(scipy.linalg.solve_continuous_lyapunov(x - 3.0 * np.eye(x.shape[0]), -x @ x.T) ** 2)
def as_linalg_discrete_lyapunov(x): return np.sum(scipy.linalg.solve_discrete_lyapunov(0.5 * x, x @ x.T) ** 2)
def as_linalg_expm(x): return np.sum(scipy.linalg.expm(4.0 * x) * x)
def as_linalg_cholesky(x): return np.sum(scipy.linalg.cholesky(x @ x.T + np.eye(x.shape[0]), lower=True))


# ---- scipy.integrate.odeint -------------------------------------------------------

def _decay(y, t, k):
    return -k * y


def as_odeint_y0(y0):
    ys = scipy.integrate.odeint(_decay, y0, np.array([0.0, 0.5, 1.0]), args=(0.7,))
    return np.sum(ys[-1] ** 2)


def _decay_k(y, t, k):
    return -k * y


def as_odeint_args(k):
    ys = scipy.integrate.odeint(_decay_k, np.array([1.0, 2.0]), np.array([0.0, 0.5, 1.0]), args=(k,))
    return np.sum(ys[-1])


# ---- scipy.optimize root finders, scipy.stats.pearsonr -------------------------------

def as_brentq_closure(a, c):
    g = lambda x: np.tanh(a * x) + x - c  # a closure over both arguments
    return scipy.optimize.brentq(g, -5.0, 5.0, xtol=1e-14) ** 2


def as_newton(a, c):
    g = lambda x: x + a * np.sin(x) - c
    x1 = scipy.optimize.newton(g, 0.5, fprime=lambda x: 1.0 + a * np.cos(x), tol=1e-13)
    x2 = scipy.optimize.newton(g, 0.5, tol=1e-13)  # the secant
    return x1 * x2


def as_root_scalar(a, c):
    s1 = scipy.optimize.root_scalar(lambda x: np.tanh(a * x) + x - c, bracket=(-5.0, 5.0),
                                    xtol=1e-14)
    both = lambda x: (x ** 3 + a * x - c, 3.0 * x ** 2 + a)
    s2 = scipy.optimize.root_scalar(both, x0=1.0, fprime=True, xtol=1e-13)
    return s1.root * s2.root if s1.converged and s2.converged else 0.0


def as_spearmanr(x, y):
    res = scipy.stats.spearmanr(x, np.exp(y))
    return res.statistic + 0.1 * res.pvalue + np.sum(scipy.stats.rankdata(x, "min") * np.arange(6.0))


def as_pearsonr(x, y):
    res = scipy.stats.pearsonr(x, np.exp(y))
    return res[0] + 0.1 * res.pvalue


# =====================================================================================
# 3. python: plain Python used around numbers
# =====================================================================================

# ---- Lambdas ----------------------------------------------------------------------

def py_lambda_local(x):
    f = lambda t: t * t + 1.0
    return f(x) * f(2.0 * x)


def _call_with(fn, x):
    return fn(x) + fn(0.5 * x)


def py_lambda_as_argument(x):
    return np.sum(_call_with(lambda t: np.sin(t) * t, x))


def py_lambda_immediate(x):
    return (lambda a, b: a * b + a)(x, x * x)


def py_lambda_default_arg(x):
    f = lambda t, k=3.0: k * t * t
    return f(x) + f(x, 0.5)


def py_lambda_closure(x):
    c = x * 2.0
    f = lambda t: t * c
    return f(x)


def py_lambda_in_comprehension(x):
    fs = [lambda t: t * t, lambda t: np.sin(t)]
    return sum(f(x) for f in fs)


def _make_scaler(k):
    return lambda t: k * t * t


def py_lambda_returned(x):
    f = _make_scaler(3.0)
    return f(x)


# ---- Closures ---------------------------------------------------------------------

def py_closure_over_local(x):
    a = 3.0 * x

    def g(t):
        return a * t
    return g(x) + g(1.0)


def py_closure_nested(x):
    a = x * x

    def outer(t):
        def inner(s):
            return a * s + t
        return inner(t) * t
    return outer(x)


def py_closure_nonlocal_accumulate(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v
    for i in range(x.shape[0]):
        add(x[i] * x[i])
    return total


def _make_loss(reg):
    def loss(w):
        return np.sum(w * w) + reg * np.sum(np.abs(w))
    return loss


_loss_l1 = _make_loss(0.3)


def _make_loss_arr(target):
    def loss(w):
        return np.sum((w - target) ** 2)
    return loss


_loss_target = _make_loss_arr(np.array([0.1, 0.2, 0.3, 0.4]))


def _make_counter_loss(n):
    def loss(w):
        s = 0.0
        for i in range(n):
            s += np.sum(w ** (i + 1))
        return s
    return loss


_loss_counter = _make_counter_loss(3)


def _outer_factory():
    scale = 2.0

    def fn(w):
        return scale * np.sum(np.exp(w))
    return fn


_loss_factory_local = _outer_factory()


def py_closure_inner_returned(x):
    def make(k):
        def h(t):
            return k * t
        return h
    h = make(3.0)
    return h(x) * x


# ---- Functions passed as arguments ------------------------------------------------

def _square(t):
    return t * t


def _apply_twice(fn, t):
    return fn(fn(t))


def py_function_argument_global(x):
    return _apply_twice(_square, x)


def py_function_argument_numpy(x):
    return np.sum(_apply_twice(np.sin, x))


def py_function_argument_math(x):
    return _apply_twice(math.exp, x)


def py_function_in_tuple(x):
    fs = (np.sin, np.cos, _square)
    s = 0.0
    for f in fs:
        s += f(x)
    return s


def py_function_argument_to_probe(x, fn):
    return np.sum(fn(x) * x)


def py_functools_partial(x):
    f = partial(_apply_twice, _square)
    return f(x)


def py_partial_argument_to_probe(x, fn):
    return np.sum(fn(x) * x)


def _squares_of(v):
    for i in range(v.shape[0]):
        yield v[i] * v[i]


def py_generator_function_sum(x):
    return sum(_squares_of(x)) + x[0] * next(_squares_of(x))


# ---- *args / **kwargs -------------------------------------------------------------

def _star_sum(*args):
    s = 0.0
    for a in args:
        s = s + a * a
    return s


def _kw_model(x, **kwargs):
    return x * kwargs["a"] + kwargs["b"] * x * x


def _kw_defaults(x, a=1.0, b=2.0):
    return a * x + b * x * x


def py_star_args_call(x):
    return _star_sum(x, 2.0 * x, 3.0)


def py_star_args_unpack(x):
    t = (x, x * x)
    return _star_sum(*t)


def py_kwargs_def(x):
    return _kw_model(x, a=2.0, b=0.5)


def py_kwargs_unpack_call(x):
    kw = {"a": 0.5, "b": 3.0}
    return _kw_defaults(x, **kw)


def py_star_args_probe(x, *rest):
    return x * x * len(rest) + x * rest[0]


def py_keyword_only(x, *, k=2.0):
    return k * x * x


# ---- Recursion --------------------------------------------------------------------

def _power_rec(t, n):
    if n == 0:
        return 1.0
    return t * _power_rec(t, n - 1)


def _horner_rec(c, t, i):
    if i == len(c) - 1:
        return c[i]
    return c[i] + t * _horner_rec(c, t, i + 1)


def py_recursion_static_depth(x):
    return _power_rec(x, 4)


def py_recursion_array_depth(x):
    return _horner_rec(x, 0.7, 0)


def _rec_runtime(t, n):
    if n <= 0:
        return t
    return np.sin(_rec_runtime(t, n - 1))


def py_recursion_runtime_depth(x, n):
    return _rec_runtime(x, n)


def _reflected_cdf(x):
    t = 1.0 / (1.0 + 0.2316419 * abs(x))
    if x >= 0.0:
        return 1.0 - 0.39894228 * math.exp(-0.5 * x * x) * t * (
            0.31938153 + t * (-0.356563782 + t * 1.781477937))
    return 1.0 - _reflected_cdf(-x)


def py_recursion_reflected(x):
    return _reflected_cdf(x) + x * _reflected_cdf(-x)


# ---- Default arguments ------------------------------------------------------------

def _scaled(t, k=2.0, p=2):
    return k * t ** p


def py_default_args(x):
    return _scaled(x) + _scaled(x, 0.5) + _scaled(x, p=3)


def py_default_in_probe(x, k=3.0):
    return k * np.sum(x * x)


def py_default_none(x, w=None):
    if w is None:
        w = np.ones_like(x)
    return np.sum(w * x * x)


def py_string_switch(x, mode="l2"):
    if mode == "l2":
        return np.sum(x * x)
    return np.sum(np.abs(x))


# ---- Slices as values -------------------------------------------------------------

def py_slice_object(x):
    s = slice(1, 3)
    return np.sum(x[s] ** 2)


def py_slice_reversed(x):
    s = slice(None, None, -1)
    return np.sum(x[s] * np.arange(x.size))


def _sum_over(x, s):
    return np.sum(x[s] ** 2)


def py_slice_passed(x):
    return _sum_over(x, slice(0, 2)) + _sum_over(x, slice(2, None))


def py_slice_tuple_index(x):
    idx = (slice(None), 1)
    return np.sum(x[idx] ** 2)


def py_slice_in_loop(x):
    s = 0.0
    for k in range(1, 3):
        s += np.sum(x[k - 1:k + 1] ** 2)
    return s


# ---- Tuples and lists of arrays ---------------------------------------------------

def _two_outputs(x):
    return x * 2.0, np.sin(x)


def py_tuple_of_arrays_returned(x):
    a, b = _two_outputs(x)
    return np.sum(a * b)


def py_tuple_of_arrays_index(x):
    t = (x, x * x, np.cos(x))
    return np.sum(t[0] * t[2]) + np.sum(t[-2])


def py_list_of_arrays_literal(x):
    lst = [x, x * 2.0, np.exp(x)]
    s = 0.0
    for a in lst:
        s += np.sum(a * a)
    return s


def py_list_of_arrays_index(x):
    lst = [x, x * x]
    return np.sum(lst[0] * lst[1])


def py_stack_list_from_loop(x):
    rows = []
    for i in range(3):
        rows.append(x * (i + 1.0))
    m = np.stack(rows)
    return np.sum(m * np.arange(m.size).reshape(m.shape))


def py_array_from_list_of_arrays(x):
    rows = []
    for i in range(3):
        rows.append(np.sin(x + i))
    return np.sum(np.array(rows) ** 2)


def py_concatenate_list_from_loop(x):
    parts = []
    for i in range(2):
        parts.append(x[i:] * (i + 1.0))
    return np.sum(np.concatenate(parts) ** 2)


def py_vstack_list_comprehension(x):
    return np.sum(np.vstack([x * k for k in range(3)]) ** 2)


def py_list_of_arrays_len_zip(x):
    a = [x, 2.0 * x]
    b = [x * x, np.ones_like(x)]
    s = 0.0
    for p, q in zip(a, b):
        s += np.sum(p * q)
    return s * len(a)


def py_tuple_argument_tree(params, x):
    w, b = params
    return np.sum((x * w + b) ** 2)


def py_dict_argument_tree(params, x):
    return np.sum((x * params["w"] + params["b"]) ** 2)


# ---- Unpacking in loop headers, loop else, names read after a loop ----------------

def py_for_unpack_zip(x):
    s = 0.0
    for a, b in zip(x, x[::-1]):
        s += a * b
    return s


def py_for_enumerate_zip(x):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, x * x)):
        s += i * a + b
    return s


def py_for_nested_unpack(x):
    s = 0.0
    for (a, b), c in zip(zip(x, x[1:]), x[2:]):
        s += a * b * c
    return s


def py_for_starred_unpack(x):
    s = 0.0
    for first, *rest in [(x[0], x[1], x[2]), (x[1], x[2], x[3])]:
        s += first * sum(rest)
    return s


def py_for_over_rows_unpack(x):
    s = 0.0
    for a, b in x:
        s += a * b
    return s


def py_for_tuple_of_pairs(x):
    s = 0.0
    for k, w in ((0, 0.5), (2, 1.5)):
        s += w * x[k] ** 2
    return s


def py_for_dict_items(x):
    d = {"a": 1.0, "b": 2.0}
    s = 0.0
    for k, v in d.items():
        s += v * np.sum(x ** 2)
    return s


def py_for_else(x):
    s = 0.0
    for i in range(x.size):
        if x[i] > 10.0:
            break
        s += x[i] ** 2
    else:
        s = s * 2.0
    return s


def py_for_else_break_taken(x):
    s = 1.0
    for i in range(x.size):
        s *= x[i]
        if x[i] > 0.6:
            break
    else:
        s = 0.0
    return s


def py_while_else(x):
    s = 0.0
    k = 0
    while k < x.size:
        s += x[k] * x[k]
        k += 1
    else:
        s = s + x[0]
    return s


def py_loop_name_read_after(x):
    for i in range(x.size):
        last = x[i] * x[i]
    return last * 2.0


def py_loop_index_read_after(x):
    for i in range(x.size):
        pass
    return x[i] ** 3


def py_while_true_break(x):
    y = x
    n = 0
    while True:
        y = np.sin(y)
        n += 1
        if n >= 3:
            break
    return np.sum(y)


def py_early_return_in_loop(x):
    for i in range(x.size):
        if x[i] > 0.6:
            return x[i] ** 2
    return 0.0


def py_nested_break_flag(x):
    s = 0.0
    done = False
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s += x[i, j] ** 2
            if s > 1.0:
                done = True
                break
        if done:
            break
    return s


def py_loop_shrinking_carry(x):
    e = x * 1.0
    s = 0.0
    for k in range(3):  # each iteration one entry shorter: the loop is unrolled
        e = e[1:] - 0.5 * e[:-1]
        s += np.sum(e ** 2) * (k + 1)
    return s


# ---- isinstance and `in` on values known while building ---------------------------

def py_isinstance_float(x):
    if isinstance(x, float):
        return x * x
    return np.sum(x * x)


def py_isinstance_ndarray(x):
    if isinstance(x, np.ndarray) and x.ndim == 1:
        return np.sum(x ** 3)
    return 0.0


def py_isinstance_tuple_types(x):
    if isinstance(2, (int, float)):
        return np.sum(x * x)
    return np.sum(x)


def py_in_tuple_constant(x):
    k = 2
    if k in (1, 2, 3):
        return np.sum(x * x)
    return np.sum(x)


def py_in_string_argument(x, mode):
    if mode in ("a", "b"):
        return np.sum(x * x)
    return np.sum(x)


def py_in_dict_keys(x):
    d = {"w": 2.0}
    if "w" in d:
        return d["w"] * np.sum(x * x)
    return np.sum(x)


def py_not_in(x):
    if 5 not in [1, 2, 3]:
        return np.sum(x * x)
    return np.sum(x)


# ---- Comprehensions and generator expressions -------------------------------------

def py_list_comprehension(x):
    ys = [v * v for v in x]
    return sum(ys)


def py_list_comprehension_if(x):
    ys = [v * v for v in x if v > 0.5]
    return sum(ys)


def py_nested_comprehension(x):
    m = np.array([[a * b for a in x] for b in x])
    return np.sum(np.sin(m))


def py_generator_sum(x):
    return sum(x[i] * x[i] for i in range(x.size))


def py_generator_max(x):
    return max(v * v for v in x)


def py_generator_any_static(x):
    if any(k > 2 for k in (1, 2, 3)):
        return np.sum(x * x)
    return np.sum(x)


def py_dict_comprehension(x):
    d = {k: x[k] ** 2 for k in range(3)}
    return d[0] + d[1] * d[2]


def py_set_comprehension(x):
    s = {k % 2 for k in range(5)}
    return np.sum(x * x) * len(s)


def py_comprehension_over_zip(x):
    return sum([a * b for a, b in zip(x, x[1:])])


# ---- map / zip / enumerate / reversed / sorted on static things --------------------

def py_map_static(x):
    ks = list(map(lambda k: k * 2.0, (1.0, 2.0, 3.0)))
    return np.sum(x * x) * ks[2]


def py_map_over_array(x):
    return sum(map(np.sin, x))


def py_zip_static_tuples(x):
    s = 0.0
    for i, w in zip((0, 1, 2), (0.5, 1.0, 1.5)):
        s += w * x[i] ** 2
    return s


def py_enumerate_static(x):
    s = 0.0
    for i, w in enumerate((0.5, 1.0, 1.5)):
        s += w * x[i] ** 2
    return s


def py_enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, 1):
        s += i * v * v
    return s


def py_reversed_static(x):
    s = 0.0
    for k in reversed((0, 1, 2)):
        s = s * x[k] + 1.0
    return s


def py_reversed_range(x):
    s = 0.0
    for i in reversed(range(x.size)):
        s = s * 0.5 + x[i] ** 2
    return s


def py_sorted_static(x):
    ks = sorted((3, 1, 2))
    return np.sum(x[ks[0]:ks[2]] ** 2)


def py_sorted_runtime_values(x):
    vs = sorted([x[0], x[1], x[2]])
    return vs[0] + 2.0 * vs[1] + 3.0 * vs[2]


def py_sorted_key(x):
    pairs = sorted([(2, 0.5), (0, 1.5), (1, 1.0)], key=lambda p: p[0])
    s = 0.0
    for k, w in pairs:
        s += w * x[k] ** 2
    return s


def py_itertools_product(x):
    s = 0.0
    for i, j in itertools.product(range(2), range(2)):
        s += x[i] * x[j + 1]
    return s


def py_range_len(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] ** 2
    return s


# ---- Other forms around numbers ---------------------------------------------------

def py_chained_comparison(x):
    if 0.0 < x < 1.0:
        return x * x
    return x


def py_augmented_ops(x):
    y = x
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    y **= 2
    return y


def py_augmented_matmul(x, w):
    y = x.copy()
    y @= w
    return np.sum(y ** 2)


def py_multiple_assign(x):
    a = b = x * x
    return a + b * x


def py_swap(x):
    a, b = x, x * x
    a, b = b, a + b
    return a * b


def py_starred_assign(x):
    a, *rest = (x, 2.0 * x, 3.0)
    return a * rest[0] + rest[1]


def py_ternary(x):
    return x * x if x > 0.5 else -x


def py_walrus(x):
    if (y := x * x) > 0.1:
        return y * x
    return x


def py_global_constant(x):
    return SCALE * x * x


SCALE = 2.5
WEIGHTS = np.array([0.5, 1.0, 1.5, 2.0])


def py_global_array(x):
    return np.sum(WEIGHTS * x * x)


def py_math_constants(x):
    return math.pi * x + np.e * x * x + math.tau * 0.0 + np.pi * x


def py_pow_builtin(x):
    return pow(x, 3) + pow(2.0, x)


def py_abs_min_max(x):
    return abs(x - 2.0) + max(x, 1.0, 0.5) * min(x, 2.0)


def py_divmod_builtin(x):
    q, r = divmod(x, 0.4)
    return r ** 2 + q


def py_float_int_casts(x):
    return float(x) * x + int(3.7) * x


def py_item_and_float_of_element(x):
    return x[0].item() * float(x[1]) + x[2]


def py_math_log_base(x):
    return math.log(x, 3.0)


def py_fsum(x):
    return math.fsum([x * x, 2.0 * x, 1.0])


def py_try_except_domain_handler(x):
    try:
        y = math.log(x - 1.0)  # x < 1: ValueError, the handler's value
    except ValueError:
        y = x * x
    return y * x


def py_try_mask_and_in_range(x):
    y = np.cos(x)
    try:
        y[x > 0.5] = y[x > 0.5] * x[x > 0.5]  # a mask's shape is checked at run time
    except TypeError:
        y = y * x
    for i in range(len(y)):
        try:
            y[i] = y[i] * (i + 1.0)  # in range: i runs over range(len(y))
        except TypeError:
            pass
    return np.sum(y * x)


def _py_scaled(x, scale=None):
    if scale is None or np.allclose(scale, 1.0):
        return x * x
    return x * scale


def py_or_short_circuits_none(x):
    return _py_scaled(x) + _py_scaled(x, 2.0)


def py_and_guards_an_index(x):
    total = 0.0
    for i in range(x.shape[0]):
        j = 0
        while j < x.shape[0] and x[j] < 10.0 + i:  # x[x.shape[0]] would raise
            total += x[j] * x[i]
            j += 1
        if j >= x.shape[0] or x[j] > 100.0:
            total += x[i]
    return total


def _py_grid(x, n):
    return np.reshape(np.exp(x) * 0.5, (n, -1))


def py_write_into_reshape(x):
    g = _py_grid(x, 2)
    g -= 0.25 * np.roll(g, 1, axis=0)  # a reshape of a new array, written in place
    w = np.kron(np.ones(2), np.array([2.0, 4.0]))[:3]
    w[0] = w[-1] = 1.0
    return np.sum(g * g) + w @ x[:3]


def py_ufunc_out_where(x):
    big = np.zeros(x.shape, dtype=bool)
    np.greater_equal(np.abs(x), 0.5, where=x > 0.0, out=big)
    acc = np.ones_like(x)
    np.multiply(x, 3.0, out=acc, where=x < 0.0)
    return np.sum(np.where(big, x * x, x)) + np.sum(acc * acc)


def py_try_except_zero_division(x):
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = 0.0
    return y * x + y


def py_assert_shape(x):
    assert x.ndim == 1, "expected a vector"
    return np.sum(x * x)


def py_raise_on_bad_input(x):
    if x.ndim != 1:
        raise ValueError("expected a vector")
    return np.sum(np.exp(x))


def py_del_statement(x):
    tmp = x * 2.0
    y = tmp * x
    del tmp
    return y


def py_pass_and_docstring(x):
    """A docstring."""
    pass
    return x * x


def py_fstring_passes_through(x):
    label = f"loss at {3}"
    return x * x * (len(label) > 0)


def py_print_passes_through(x):
    y = x * x
    print("debug", y)
    return y


def py_warnings_warn_passes_through(x):
    y = x * x
    if y > 100.0:
        warnings.warn("y is large", RuntimeWarning)
    return y


def py_while_counter(x):
    y = x
    while y < 10.0:
        y = y * 1.5
    return y


def py_nested_function_tuple_return(x):
    def stats(v):
        return np.mean(v), np.std(v)
    m, s = stats(x)
    return m * s


@dataclasses.dataclass
class Params:
    scale: float
    shift: float


class Model:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.sum(self.w * x * x)


def py_dataclass_params(x, p):
    return p.scale * x * x + p.shift


def py_method_call_on_object(x, model):
    return model.apply(x)


def py_dict_param_update(x):
    p = {"a": x, "b": 1.0}
    p["b"] = x * x
    return p["a"] * p["b"]


def py_list_index_assign_in_loop(x):
    acc = [0.0, 0.0]
    for i in range(x.size):
        acc[i % 2] = acc[i % 2] + x[i] ** 2
    return acc[0] * acc[1]


def py_tuple_returned_from_branch(x):
    if x > 0.5:
        a, b = x, x * x
    else:
        a, b = x * x, x
    return a * b + a


def py_conditional_import_free_numpy_alias(x):
    xp = np
    return xp.sum(xp.exp(x))


def py_ellipsis_index(x):
    return np.sum(x[..., 1] ** 2)


def py_none_index(x):
    return np.sum(x[None] * x[:, None])


def py_negative_step_slice(x):
    return np.sum(x[::-1] * x)


def py_bool_arith(x):
    return np.sum((x > 0.5) * x * x + (x <= 0.5) * x)


def py_int_float_mix(x):
    n = 3
    return x ** n / n + n * x


def py_string_format_method(x):
    s = "{}-{}".format(1, 2)
    return x * x * len(s)


def py_ndarray_allocation_size(x):
    # NPBench's nbody: `KE = np.ndarray(Nt + 1, dtype=np.float64)`, then filled in a loop
    energy = np.ndarray(x.size + 1, dtype=np.float64)
    energy[0] = 0.0
    for i in range(x.size):
        energy[i + 1] = energy[i] + x[i] ** 2
    return np.sum(energy)


def py_ndarray_allocation(x):
    # NPBench's `out = np.ndarray((n, m), dtype=A.dtype)`, then filled: an allocation (np.empty)
    out = np.ndarray((x.size, 2), dtype=x.dtype)
    for i in range(x.size):
        out[i, 0] = x[i] * x[i]
        out[i, 1] = np.sin(x[i])
    return np.sum(out)


# ---- lists, generators and objects across calls (issue #43, the held-out gallery's forms) ---

def _appended_states(x):
    h = x * 0.5
    out = [h]
    for k in range(3):
        h = np.tanh(h + x[k])
        out.append(h)
    return out


def py_list_returned_by_callee(x):
    hs = _appended_states(x)
    return np.sum(hs[len(hs) - 1]) + np.sum(np.array(hs)) * 0.1


def _three_parts(x):
    return x[:2] * 2.0, x[1:3], x[2:]


def py_zip_star_call_appending(x):
    out = []
    for a, b, c in zip(*_three_parts(x)):
        out.append(a * b + c)
    return np.sum(np.array(out) ** 2)


_PAIR_SIZES = [(2, 1), (1, 2)]


def _pair_layers(v):
    for m, n in _PAIR_SIZES:
        yield v[: m * n].reshape((m, n)), v[m * n: m * n + n]
        v = v[(m + 1) * n:]


def py_generator_of_tuples(x):
    v = np.concatenate((x, x[:3]))
    h = np.ones((1, 2)) * x[0]
    for W, b in _pair_layers(v):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def py_tuple_of_generator_in_nested_def(x):
    def trim(*values, tol=1e-3):
        return tuple(0.0 if abs(v) < tol else v * 2.0 for v in values)

    a, b, c = trim(x[0], x[1], x[2])
    return a * b + c


def _doubling(func):
    @functools.wraps(func)
    def wrapper(*args):
        return 2.0 * func(*args)
    return wrapper


@_doubling
def _doubled_sin_sum(v):
    return np.sum(np.sin(v))


def py_module_functools_wraps_computes(x):
    return _doubled_sin_sum(x) + 1.0  # the wrapper's 2.0 * runs (not read via __wrapped__)


def py_fromiter_of_named_map(x):
    it = map(lambda v: v * v, x)
    return np.sum(np.fromiter(it, dtype=float))


def py_if_elif_without_else(x):
    if x.shape[0] == 0:
        s = np.zeros(1)
    elif x.shape[0] >= 1:  # assigned on every path taken; read as Python reads it
        s = x * 2.0
    return np.sum(s * s)


def py_nested_functools_wraps(x):
    def base(v):
        return np.sin(v)

    @functools.wraps(base)
    def scaled(v):
        return base(v) * 2.0

    return np.sum(scaled(x))


class _Slot:
    pass


_SLOTS = (_Slot(), _Slot())
_SLOT_TABLE = {_SLOTS[0]: (slice(np.int64(0), np.int64(2)), (2,)),
               _SLOTS[1]: (slice(np.int64(2), np.int64(4)), (2, 1))}


def py_dict_keyed_by_objects(x):
    total = 0.0
    for slot in _SLOTS:
        idxs, shape = _SLOT_TABLE[slot]
        total += np.sum(np.reshape(x[idxs], shape) ** 2)
    return total


class _Cart:
    """A stepper keeping its state on self, as simulators' step methods do."""

    def __init__(self):
        self.state = None
        self.steps = 0

    def step(self, force):
        x, v = self.state
        v = v + 0.1 * (force - np.sin(x))
        self.state = (x + 0.1 * v, v)
        self.steps += 1


def py_object_attribute_set(x):
    cart = _Cart()
    cart.state = (x[0], x[1])
    for f in (x[2], x[3]):
        cart.step(f)
    return cart.state[0] * cart.state[1] + cart.steps


class _Walker:
    """An object whose method sets attributes under run-time branches (issue #43)."""

    def __init__(self, n):
        self.pos = 0.0
        self.hist = np.zeros(n)
        self.count = np.zeros(n, dtype=np.int64)

    def move(self, v):
        if v > 0.5:
            self.pos = self.pos + v * v
        else:
            self.pos = self.pos - np.sin(v)
        self.count += 1
        return self.pos


def py_attribute_in_run_time_branch(x):
    w = _Walker(2)
    w.move(x[0])
    return w.pos * x[1] + w.move(x[2])


def py_attribute_in_run_time_loop(x):
    w = _Walker(x.shape[0])
    for i in range(x.shape[0]):
        w.hist = w.hist + x[i] * w.pos
        w.move(x[i])
    return w.pos + np.sum(w.hist ** 2)


def py_attribute_array_iadd(x):
    w = _Walker(4)
    w.count += 2
    w.hist += x * x
    return np.sum(w.hist * w.count) + np.sum(w.count)


def _len_or_one(y):
    try:
        n = len(y)
    except TypeError:
        n = 1
    return n


def py_try_len_type_error(x):
    return np.sum(x) / _len_or_one(x) + x[0] / _len_or_one(x[1])


def py_loop_rebinds_view_first(x):
    out = np.zeros((4, x.shape[0]))
    out[0] = x
    y = x
    for i in range(3):
        y = out[i]
        out[i + 1] = np.tanh(y) + 0.5 * y
    return np.sum(out[-1] ** 2)


def py_write_after_fresh_loop(x):
    z = x[::-1]
    for _ in range(x.shape[0]):
        z = np.sin(z) + 0.3 * z
    z[0] = z[-1] * z[1]
    return np.sum(z ** 2)


_MODE = "plain"


def _set_mode(mode):
    global _MODE
    _MODE = mode


class _Mode:
    def __init__(self, mode):
        self.mode, self.previous = mode, _MODE

    def __enter__(self):
        _set_mode(self.mode)
        return self

    def __exit__(self, *exc):
        _set_mode(self.previous)


def _moded(x):
    return x * 0.5 if _MODE == "half" else x


def py_with_own_manager(x):
    with _Mode("half") as m:
        y = _moded(x) * (2.0 if m.mode == "half" else 1.0)
    return y * _moded(x)


def py_global_set(x):
    _set_mode("half")
    y = _moded(x)
    _set_mode("plain")
    return y + _moded(x) ** 2


def py_starred_generator(x):
    return np.sum(np.stack(tuple([*(np.sin(x) * k for k in (1.0, 2.0))]))) + max(
        *(x[k] for k in (0, 2)))


def py_isinstance_tuple_display(x):
    pair = (x, 2.0 * x)
    return pair[0] * pair[1] if isinstance(pair, tuple) else x


# ---- forms from the third held-out batch of real code (issue #43, hb3b) ----------------------


class _OutProblem:
    """A problem whose ``evaluate`` writes its results into the dict its caller passes."""

    def __init__(self, n_obj):
        self.n_obj = n_obj

    def evaluate(self, x, out):
        out["F"] = np.cos(x) * self.n_obj
        out["F"] = -out["F"]


def py_dict_written_by_callee(x):
    out = {}
    _OutProblem(2).evaluate(x, out)
    return np.sum(out["F"] * x)


def py_list_of_arrays_range_attribute(x):
    p = _OutProblem(3)
    rows = []
    for i in range(p.n_obj):
        rows.append(x[: x.shape[0] - i].sum() * x)
    return np.sum(np.column_stack(rows) ** 2)


def py_unpack_list_comprehension(x):
    a, b = [float(v) * 2.0 for v in x[:2]]
    return a * b + np.sum(x)


def py_itertools_tee_pairwise(x):
    first, second = itertools.tee((0, 2, 3, 4))
    next(second, None)
    return sum(np.sum(x[s:e]) ** 2 for s, e in zip(first, second))


class _Lazy:
    def __init__(self, x):
        self.x = x
        self._cached = None

    @property
    def cached(self):
        if self._cached is None:
            self._cached = np.exp(self.x)
        return self._cached


def py_property_computed_lazily(x):
    lazy = _Lazy(x)
    return np.sum(lazy.cached) + np.sum(lazy.cached * x)


class _Metric:
    def __init__(self, metric=None):
        self.has_custom_metric = metric is not None


def py_is_false_known_while_building(x):
    return np.sum(x * 2.0 if _Metric().has_custom_metric is False else x)


def py_deepcopy_then_write(x):
    y = copy.deepcopy(x)
    y[0] = 1.0
    return np.sum(y * x)


def np_clip_out_by_position(x):
    y = x * 2.0
    np.clip(y, 0.6, 1.5, y)
    return np.sum(y * x)


def np_median_along_axis(m):
    return np.sum(np.median(m, axis=1) ** 2) + np.sum(np.median(m, axis=0, keepdims=True) * m)


def sp_pdist_cosine(m):
    return np.sum(scipy.spatial.distance.pdist(m, metric="cosine") ** 2)


def sp_frozen_norm_runtime_params(x):
    return np.sum(scipy.stats.norm(x[0], x[1] + 1.0).logpdf(x))


_FROZEN_MVN = scipy.stats.multivariate_normal(np.array([0.2, 0.5, 0.1, 0.7]),
                                              np.diag([1.0, 2.0, 0.5, 1.5]))


def sp_frozen_mvn_made_outside(x):
    return _FROZEN_MVN.logpdf(x) + np.log(_FROZEN_MVN.pdf(x * 0.5))


@njit
def _njit_square_sum(v):
    return np.sum(v * v)


def py_numba_py_func(x):
    y = x + 1.0
    y.setflags(write=False)
    return _njit_square_sum.py_func(y)


def sp_hyp1f1_hyp2f1(x):
    return np.sum(scipy.special.hyp1f1(0.5, 1.5, -x * x) + scipy.special.hyp2f1(1.0, 1.5, 2.5, -x))


def as_log1p_expm1(x):
    return np.sum(scipy.special.log1p(x) * scipy.special.expm1(x))


def as_xlog1py(x):
    return np.sum(scipy.special.xlog1py(x, x * 2.0)) + scipy.special.xlog1py(0.0, -1.0)


def as_cosm1(x):
    return np.sum(scipy.special.cosm1(x * 3.0))


def as_poch(x):
    return np.sum(scipy.special.poch(x + 1.0, 0.5) + scipy.special.poch(x, x))


def as_i0e_i1e(x):
    return np.sum(scipy.special.i0e(x - 0.5) * scipy.special.i1e(x))


def as_linalg_inv_det(a):
    return np.sum(scipy.linalg.inv(a, check_finite=False)) + scipy.linalg.det(a)


def as_xp_namespace(x):
    xp = array_namespace(x)
    x = xp_promote(x, force_floating=True, xp=xp)
    return xp.sum(xp.exp(xpx.atleast_nd(x[0], ndim=2, xp=xp)) * x)


def as_xp_apply_where_fill(x):
    c = x - 0.5  # log(c) is NaN where c < 0, in the branch apply_where discards
    return np.sum(xpx.apply_where(c > 0, (x, c), lambda x, c: np.log(c) * x, fill_value=0.0))


def as_xp_apply_where_f2(x):
    def below(x):
        return -x * x

    return np.sum(xpx.apply_where(x > 0.5, x, lambda x: np.sqrt(x - 0.5), below))


# -- forms from held-out real code, batch 4 (hb4b) ---------------------------------------------

def py_map_unpacked_display(x, m):
    a, b = map(np.asarray, (x, m))  # items of different ranks
    p, q = map(np.multiply, (a, a), (a, 2.0))
    return np.sum(p * q) + np.sum(b * b)


def py_shape_in_tuple_of_shapes(m):
    n, d = m.shape
    assert m.shape in ((n, d), (n, d, d))
    return np.sum(np.sin(m))


_TABLE_EDGES = [0.4, 0.6, 0.8]
_TABLE = [[1.5, 0.40, 0.10],
          [1.2, 0.55, 0.20],
          [0.9, 0.70, 0.35],
          [0.6, 0.85, 0.50]]


def py_module_table_row_at_run_time(x):
    total = 0.0
    for k in range(x.shape[0]):
        for i in range(len(_TABLE_EDGES)):
            if x[k] <= _TABLE_EDGES[i]:
                row = _TABLE[i]
                break
            elif i == len(_TABLE_EDGES) - 1:
                row = _TABLE[-1]
        total += row[0] * x[k] + row[1] * x[k] ** 2 + _TABLE[k][2] * x[k] ** 3
    return total


def py_and_or_number_operand_in_test(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * (3.0 if x[i] > 0.5 and i % 2 else 1.0)
        if i % 3 or x[i] < 0.4:
            total += x[i] ** 2
    return total


def py_truth_of_one_entry_array(x):
    y = x[1:2] - 0.9
    if y.real < 0.0:
        y *= -1.0
    return np.sum(y ** 3) + np.sum(x)


def np_ufunc_outer(x, m):
    return (np.sum(np.sin(np.multiply.outer(x, x[:2]))) + np.sum(np.subtract.outer(m, x) ** 2)
            + np.sum(np.maximum.outer(x, 0.5)))


def npy_mask_product_indexes(x):
    m = np.less_equal(x, 1.0) * np.greater(x, -1.0)  # a boolean array, as NumPy's
    y = np.zeros(x.shape)
    y[m] = x[m] ** 2
    return np.sum(y)


def npy_piecewise(x):
    return np.sum(np.piecewise(x, [x < 0.0, x >= 0.0], [lambda v: v ** 2, lambda v: np.sin(v)]))


# -- forms from held-out real code, batch 5 (hb5a) ---------------------------------------------

def tsplit(a):
    a = np.asarray(a, np.float64)
    return np.array([a[..., k] for k in range(a.shape[-1])])


def tstack(a):
    a = np.asarray(a, np.float64)
    return np.concatenate([x[..., None] for x in a], axis=-1)


def py_rows_of_a_stack_in_a_comprehension(m):
    r0, r1, r2 = tsplit(m.T)  # columns of m.T: the rows of m
    return np.sum(tstack([r0 * r1, r1 - r2, r2]) ** 2)


def py_list_in_a_helper_per_call_site(m):
    a, b, c = tsplit(m.T)
    x, y = tsplit(np.array([0.3127, 0.3290]))  # a constant of another shape
    return np.sum(a * x + b * y + c) + np.sum(np.ones(np.shape(x)) * 2.0)


def np_root_slope_under_where(x):
    z = np.clip(x - 0.4, 0.0, 1.0)  # an entry clipped to 0, where the root is discarded
    return np.sum(np.where(z <= 0.0031308, 12.92 * z, 1.055 * z ** (1 / 2.4) - 0.055) ** 2)


def np_roots_of_a_list(x):
    r = np.roots([1.0, -(x[0] + 2.0), x[1] * x[2]])
    return max([v.real for v in r])


def np_modf(x):
    frac, whole = np.modf(x * 3.0 + 2.0)
    return np.sum(frac ** 2 + whole * x)


def np_gradient_at_coordinates(x):
    z = np.array([0.0, 0.5, 1.5, 3.0])
    return np.sum(np.sin(np.gradient(x, z, axis=0)))
# ---- held-out forms (issue #43, hsizeif): tests on sizes, arrays grown in loops --------

def py_rank_differs_on_size_test(w):
    if len(w) == 4:  # the weights end with a bias
        b = w[-1:]
        w = w[:-1]
    else:
        b = 0.0
    return np.sum(np.log1p(np.exp(w * 2.0 + b)))


def py_none_on_size_test(x):
    weights = x[::-1] if x.shape[0] > 2 else None
    if weights is None:
        return np.sum(x ** 2)
    return np.sum(weights * x ** 2)


def py_elif_on_length_ranks_differ(x):
    n = x.shape[0]
    if n == 1:
        s = x[0]
    elif n == 2:
        s = x[0] * x[1]
    else:
        s = x
    return np.sum(s * s)


def py_array_grown_by_hstack_in_loop(x, n):
    X = x[:, None]
    for i in range(n):
        X = np.hstack([X, (x ** (i + 2))[:, None]])
    return np.sum(np.sin(X))


def py_array_grown_by_append_in_loop(x, n):
    out = np.zeros(0)
    for k in range(n):
        out = np.append(out, np.sum(x * (k + 1.0)))
    return np.sum(out ** 2)


def _rotation(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s], [s, c]])


def py_list_comprehension_of_matrices(x, n):
    Rs = [_rotation(x[i]) for i in range(n)]
    P = np.eye(2)
    for R in Rs:
        P = P @ R
    return np.sum(P * np.arange(4.0).reshape(2, 2)) + np.sum(np.stack(Rs) ** 2 * x[0])


def py_vstack_matrix_and_vector(x):
    return np.sum(np.vstack([np.outer(x, x), x]) ** 2) + np.sum(np.hstack([x, 1.0]) * 2.0)


# ---- held-out forms (issue #43, hb6b): scatter-adds, blocks, complex writes, objects --------

def np_add_at_rows_and_pairs(x):
    out = x.copy()
    idx = np.array([0, 2, 0, 3])
    np.add.at(out, idx, x * x)
    np.subtract.at(out, np.array([1, 1]), x[:2])
    M = np.zeros((4, 2))
    np.add.at(M, (idx, np.array([0, 1, 0, 1])), np.sin(x))
    return np.sum(out ** 2) + np.sum(M ** 3)


def np_ix_block_read_and_add(x):
    K = np.zeros((4, 4))
    for k in range(3):
        dofs = [k, k + 1]
        K[np.ix_(dofs, dofs)] += x[k] * np.array([[1.0, -1.0], [-1.0, 1.0]])
    K += np.eye(4)
    free = np.arange(1, 4)
    return np.sum(np.linalg.solve(K[np.ix_(free, free)], x[1:]))


def np_diag_of_a_list_of_values(x):
    d = np.sign(x[0] - 0.1)
    return np.sum(np.diag([1.0, x[1], d * x[2]]) @ np.outer(x[:3], x[1:]))


def py_complex_array_written(x):
    Y = np.zeros((3, 3), dtype=complex)
    for k in range(2):
        Y[k, k + 1] += 1.0 / (x[k] + 1j * x[k + 1])
    S = x[:3] + 0j
    S[1] -= 0.5j * x[3]
    return np.sum(np.abs(Y @ S) ** 2) + np.sum(np.diag(S).imag) + np.sum(x[:3])


class _Mapping:
    def __init__(self, p):
        self.b = np.empty((2, p.shape[0]))
        for i in range(2):
            self.b[i] = p * (i + 1.0)


class _Rating:
    def __init__(self, mu, sigma):
        self.mu, self.sigma = mu, sigma

    def __iter__(self):
        return iter((self.mu, self.sigma))


def py_object_attribute_item_and_iter(x):
    m = _Mapping(x)
    m.b[0, 1] = x[3] ** 2
    mu, sigma = _Rating(x[0], x[1] * x[2])
    return np.sum(m.b ** 2) + mu * sigma


def _read_as_a_list(ks, ws):
    top = ks.index(max(ks))
    total = 0.0
    for k, w in zip(ks, ws):
        total += k * w
    return total + ws[top] * min(ks) + sorted(ks)[1] * len(ks) + sum(ks)


def py_list_comprehension_to_a_helper(x):
    return _read_as_a_list([np.exp(v) for v in x], [0.4, 0.3, 0.2, 0.1])


def py_tolist_to_a_helper(x):
    return _read_as_a_list(x.tolist(), (x * 0.5).tolist())


def _gap(v, zs, ks):
    return sum(z * (k - v) for z, k in zip(zs, ks))


def py_list_through_a_solvers_args(x):
    ks = [np.exp(v) for v in x]
    v = scipy.optimize.brentq(_gap, -10.0, 10.0, args=(x.tolist(), ks))
    return v * np.sum(x)


def _triangle(xs, rows):
    idx = range(len(xs))
    total = 0.0
    for i in idx:
        for j in idx:
            total += xs[i] * rows[i][j] * xs[j]
    return total


def py_range_held_in_a_name(x):
    return _triangle(x.tolist(), np.outer(x, x).tolist())


def py_number_or_one_entry_array_across_if(x, t):
    if t > 0.0:
        c = np.apply_over_axes(np.mean, x, 0)
    else:
        c = 0.25
    return np.sum((x - c) ** 2 * x)


def py_bool_argument_array_or_none(x, flag):
    w = x[::-1] * 2.0 if flag else None
    if flag:
        return np.sum(w * x)
    return np.sum(x ** 2)


def py_omitted_int_default_known(x, n=4):
    t, w = np.polynomial.legendre.leggauss(n)
    return np.sum(w * np.exp(-x[0] * t ** 2)) + np.sum(x[:n] ** 2)


def py_list_of_rows_reversed_run_time_count(x):
    rows = []
    for k in range(x.shape[0]):
        rows.append(x * (k + 1.0))
    rows.reverse()
    return np.sum(np.array(rows)[0] * x) + len(rows)


def np_matrix_power_run_time(x):
    a = np.outer(x, x[::-1]) * 0.5
    return np.sum(np.linalg.matrix_power(a, x.shape[0] - 1))


def py_repeated_list_into_numpy(x):
    m = np.outer(x, x)
    return np.sum(np.dot(m * m, [1.0] * m.shape[1]) ** 0.5)
# ---- held-out forms (issue #43, hb7a): decorators over *args, interpolation, masks, operators

def _as_arrays(f):
    def wrapper(*args):
        isarray = np.any([hasattr(a, "__array__") for a in args])
        newargs = []
        for arg in args:
            if isarray:
                newargs.append(np.asarray(arg, dtype=float))
            else:
                newargs.append(arg)
        return f(*newargs)
    return wrapper


@_as_arrays
def _weighted(s, t):
    return np.sum(s * t)


def py_decorator_appends_args_under_if(x):
    return _weighted(x, x[::-1]) + _weighted(x[:2], 2.0)


def np_interp_at_a_matrix_and_mask_write_rank4(x):
    speeds = 4.0 + 6.0 * np.outer(x, x)
    thrust = np.interp(speeds, [3.0, 5.0, 8.0, 12.0], [0.9, 0.8, 0.7, 0.4])
    c = np.ones((2, 2, 2, 2)) * x[0] + np.arange(16.0).reshape(2, 2, 2, 2) * x[1]
    c[~(c > 3.0)] = 0.0
    return np.sum(thrust * speeds) + np.sum(c ** 2)


class _Op:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=complex)

    def __add__(self, other):
        return _Op(self.data + other.data)

    def __rmul__(self, other):
        return _Op(other * self.data)


def py_user_operators_on_a_complex_matrix(x):
    H = 0.5 * x[0] * _Op(np.diag([1.0, -1.0])) + x[1] * _Op([[0, -1j], [1j, 0]])
    Z = H.data + x[2] * np.eye(2, dtype=complex)
    return np.sum(np.abs(np.linalg.solve(Z + 2.0 * np.eye(2), np.array([1.0, 1j])))) \
        + np.real(np.trace(np.linalg.inv(Z + 3.0 * np.eye(2))))


def py_emath_arcsin_past_the_domain(x):
    n = np.array([1.0, 1.5 + 0.01 * x[0], 1.0])
    return np.sum(np.abs(np.cos(np.emath.arcsin(n[1] * np.sin(x[1] + 0.6) / n)))) + x[2]
# ---- scipy.sparse as a value type; complex eigenvalues of a real matrix (issue #43, hsparse) --

def py_sparse_coo_assembly_spsolve(x):
    rows = np.array([0, 1, 1, 2, 2, 3])
    cols = np.array([0, 1, 1, 2, 3, 3])
    K = scipy.sparse.coo_matrix((np.r_[x, x[:2]] + 1.0, (rows, cols)), shape=(4, 4)).tocsc()
    K = K + K.T + scipy.sparse.eye(4)
    return np.sum(scipy.sparse.linalg.spsolve(K, x) ** 2) + K.diagonal() @ x


def py_sparse_matrix_star_is_a_product(x):
    C = scipy.sparse.csr_matrix((np.ones(3), (np.arange(3), np.array([0, 2, 1]))),
                                shape=(3, 4))
    Y = scipy.sparse.diags(x[:3])
    A = C.T * Y * C
    return np.sum((A * x) ** 2) + np.sum(A.multiply(A).toarray())


def nn_eigvals_of_a_real_matrix_complex(x):
    L = np.zeros((4, 4))
    L[0] = x
    L[1, 0], L[2, 1], L[3, 2] = 0.5, 0.7, x[0]
    w = np.linalg.eigvals(L)
    return np.max(np.abs(w)) + np.sum(w.real ** 2)


def py_continuous_are_lqr(x):
    a = np.array([[0.0, 1.0], [2.0, -0.3]]) + 0.1 * np.outer(x[:2], x[2:])
    b = np.array([[0.0], [1.0]])
    q = np.diag(x[:2] + 1.0)
    r = np.array([[x[3]]])
    p = scipy.linalg.solve_continuous_are(a, b, q, r)
    return np.sum(p ** 2) + np.sum(np.linalg.solve(r, b.T @ p) ** 2)
# ---- held-out forms (issue #43, hb7b): names, attributes on some paths, dict attributes ------

_NAMES = ["a", "b", "c"]
_WEIGHT = {"a": 0.5, "b": 1.5, "c": 2.0}
_PROGENY = {"a": ["b", "c"], "b": ["c"], "c": []}


def py_global_names_and_a_short_loop_unrolled(x, names=_NAMES, progeny=_PROGENY):
    w = np.array([_WEIGHT[n] for n in names])
    total = np.sum(w * x[:3])
    for j in range(len(names)):
        for i in range(j + 1, len(names)):
            for p in names[j:i]:
                if names[i] in progeny[p]:
                    total += x[j] * x[i] * (progeny[p].index(names[i]) + 1)
    mult = 1.0
    for k in range(1, 3):
        mult += x ** (2 * k)
    return total + np.sum(mult)


class _Zone:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi
        self.at_node = {}

    def add_field(self, name, values, at="node"):
        getattr(self, "at_" + at)[name] = values
        return values

    def demand(self, t):
        if self.lo <= t <= self.hi:
            self.energy = t * t
        elif t > self.hi:
            self.energy = self.hi * t
        elif t < self.lo:
            self.energy = self.lo
        return self.energy


def py_attribute_on_some_paths_and_dict_attribute(x):
    z = _Zone(0.4, 0.8)
    h = z.add_field("h", x * 2.0)
    h[1:] += h[:-1]
    return z.demand(x[0]) + z.demand(x[3]) + np.sum(z.at_node["h"] ** 2)


def np_concatenate_lists_and_complex_lstsq(x):
    flux = np.concatenate(([x[0] * 0.5], x[1:] * x[:-1], [x[-1]]))
    E = np.exp(1j * np.outer(np.arange(6.0), [0.3, 0.9]))
    B = np.hstack((E, np.conj(E)))
    h = np.cos(np.arange(6.0) * x[1]) + x[2]
    c = np.linalg.lstsq(B, h.astype(complex), rcond=None)[0]
    return np.sum(flux ** 2) + np.sum(np.abs(c) ** 2)


def py_list_rebound_to_its_own_comprehension(x):
    ys = [2.0 * v for v in x]
    ys = [y * y + 1.0 for y in ys]
    return sum(ys)


# ---- Forms from held-out real code (batch 8, hobj) ---------------------------------------

class _Level:
    """A state rebuilt by each step (QuTiP's Qobj, TrueSkill's Rating): never changed in place."""

    def __init__(self, v, tag):
        self.v = v
        self.tag = tag

    def __add__(self, other):
        return _Level(self.v + other.v, self.tag)

    def __rmul__(self, c):
        return _Level(c * self.v, self.tag)


def py_object_rebound_in_a_run_time_loop(x):
    s = _Level(x, "s")
    for k in range(x.shape[0]):
        if x[k] > 0.5:
            s = s + 0.1 * s
        else:
            s = s + 0.2 * _Level(np.sin(s.v), "t")
    return np.sum(s.v ** 2)


def _decay_density(z, a):
    return np.exp(-a * z) / (1.0 + z)


def py_quad_finite_and_infinite_limits(x):
    near = scipy.integrate.quad(_decay_density, 0.0, x[0] + 1.0, args=(x[1],))[0]
    return near + scipy.integrate.quad(lambda z: np.exp(-x[2] * z * z), x[3], np.inf)[0]


def py_lambertw_real_and_axis_writes(x):
    w = scipy.special.lambertw(x * 3.0).real
    y = np.zeros((4, 3))
    idx = np.array([2, 0, 2])
    y[idx, 1] = w[:3]  # the last write of index 2 wins
    y[1, 1:] += x[:2]
    return np.sum(np.sin(y) * np.arange(1.0, 13.0).reshape(4, 3)) + np.sum(w)


def _information(t, x):
    return np.sum(x * x / (1.0 + np.exp(-x * t)))


def py_try_zero_division_around_a_call(x):
    try:
        return 1 / np.sqrt(_information(0.3, x))
    except ZeroDivisionError:
        return float("inf")


# ---- held-out forms (issue #43, hb8a): signs in loops, module state, attributes' lists -------


def py_signed_terms_in_run_time_loops(x):
    val = 0.0
    for i in range(2):
        for j in range(2):
            val += (-1) ** (i + j) * x[i] * np.exp(x[2 + j])
    return val


_CURRENT_SCALE = None


def _set_scale(s):
    global _CURRENT_SCALE
    _CURRENT_SCALE = {"scale": s}


def py_module_variable_set_before_read(x):
    _set_scale(x[0] * 2.0)
    return _CURRENT_SCALE["scale"] * np.sum(x ** 2)


class _Maps:
    def __init__(self, fns, weights):
        self.fns = fns
        self.weights = weights

    def __call__(self, m):
        for f in reversed(self.fns):
            m = f(m)
        return sum(w * np.sum(f(m)) for w, f in zip(self.weights, self.fns))


def py_zip_reversed_over_attribute_lists(x):
    return _Maps([np.exp, np.sin], [x[0], 0.5])(x)


def py_sparse_diags_rectangular_attribute(x):
    n = 3
    D = scipy.sparse.diags([-np.ones(n), np.ones(n)], [0, 1], shape=(n, n + 1))
    return np.sum((D @ (x * x)) ** 2)


def py_complex_stack_inv_zeros_like(x):
    z = np.zeros((2, 2, 2), dtype=complex)
    z[:, 0, 0] = 3.0 + x[:2] + 1j * x[2:]
    z[:, 1, 1] = 2.0 + 1j * x[0]
    z[:, 0, 1] = x[3]
    F = np.zeros_like(z)
    F[:, 0, 0] = F[:, 1, 1] = 2.0 if np.shape(50) == () else 1.0  # (z0 of a number)
    return np.sum(np.abs(np.linalg.inv(z) @ F) ** 2)


def _solved(m):
    e = m * 1.0
    for _ in range(3):
        e = e - (e - 0.2 * np.sin(e) - m) / (1.0 - 0.2 * np.cos(e))
    if e.size > 1:
        return e
    else:
        return e[0]


def py_size_test_returns_other_ranks(x):
    return np.sum(_solved(x.copy())) + _solved(x[:1]) ** 2


class _Params(dict):
    def __init__(self, n):
        super().__init__()
        self.n = n


def py_dict_subclass_keys_by_format(x):
    p = _Params(2)
    for k, name in enumerate(("a1", "a2")):
        p[name] = x[k]
    return sum(p["a{}".format(i)] * x[2 + i - 1] for i in range(1, p.n + 1))


# -- forms from held-out real code (hleft7: lists the batches still refused) ----------------

def _layers(d_list):
    d = np.array(d_list, dtype=float)
    return np.sum(np.exp(-1.0 / d[1:-1]))


def py_list_of_an_array_joined_and_appended(x):
    d = [np.inf] + list(x) + [np.inf]
    nodes = list(x)
    for k in range(3):
        nodes.append(nodes[k] * nodes[-1])
    return _layers(d) + nodes[-1] + len(nodes)


_NAMES = ("a", "b", "c")


def py_dict_of_zip_and_a_dict_entry_written(x):
    p = dict(zip(_NAMES, x))
    S = {k: np.zeros(2) for k in ("S1", "ST")}
    for j in range(2):
        S["S1"][j] = p["a"] * x[j]
    return np.sum(S["S1"]) + p["b"] * p["c"]


# hb8c: forms of the example galleries (autograd's, JAX's)
def _marginal(x, scale=2.0, negative=False):
    out = scale * np.sum(np.tanh(x) ** 2)
    return -out if negative else out


py_functools_partial_differentiated = partial(_marginal, negative=True)


def py_vmap_of_lambdas_inside(x):
    xs = np.reshape(x, (2, 2))
    cov = jitgrad.vmap(lambda a: jitgrad.vmap(lambda b: np.exp(-np.sum((a - b) ** 2)))(xs))(xs)
    return np.sum(cov * cov)


# ---- held-out forms (issue #43, hb8b): parts made by __init__, list states, growing lists -----


class _Limits:
    def __init__(self):
        self.low = None


class _VehicleParams:
    def __init__(self):
        self.limits = _Limits()


def py_init_made_parts_and_a_list_state(x):
    p = _VehicleParams()
    p.limits.low = 0.4
    u = [x[0], 0.0]
    t = 0.0
    while t < 1.0:
        u = [u[0] + 0.1 * u[1], u[1] - 0.1 * x[1] * u[0]]
        t += 0.1
    return np.sum(np.maximum(x, p.limits.low)) + u[0] + u[1]


def py_list_read_in_the_loop_appending_to_it(x):
    temps = [x[0]]
    for k in range(10):
        temps.append(temps[-1] + 0.1 * (x[1] - temps[-1] * temps[-1]) * len(temps))
    return np.mean(temps[len(temps) // 2:]) + temps[-1]


_KNOTS6 = np.arange(6.0)


def py_int_list_ix_and_cubic_spline(x):
    K = np.outer(x, x) + np.diag(x + 2.0)
    keep = [i for i in range(K.shape[0]) if i != 1]
    y = np.concatenate([x, x[:2] ** 2])
    spline = scipy.interpolate.CubicSpline(_KNOTS6, y, bc_type="natural")
    w = scipy.linalg.eigh(K, eigvals_only=True, subset_by_index=[0, 1])
    return np.sum(K[np.ix_(keep, keep)] ** 2) + np.sum(spline(x * 4.0)) + w[0]


def py_cumulative_trapezoid_block_delete_ellipsis(x):
    c = scipy.integrate.cumulative_trapezoid(x ** 2, np.cumsum(x), initial=0)
    k = np.outer(x[:2], x[:2])
    ke = np.block([[k, -k], [-k, 2.0 * k]])
    D = np.concatenate([x, x[:2]])
    T = D[..., np.array([[0, 1, 3], [1, 2, 4], [3, 4, 5]])]
    return np.sum(c * c) + np.sum(np.delete(ke, [0, 2], axis=1) ** 2) + np.sum(T @ T)


# ---- held-out forms (issue #43, hb9b): held lists, properties, filters, arange of the graph --


class _LifeTable:
    def __init__(self, qx):
        self.lx = [1.0]
        for q in qx[:-1]:
            self.lx.append(self.lx[-1] * (1 - q))
        self.lx = np.array(self.lx)


class _Model:
    def __init__(self):
        self._nodes = collections.OrderedDict()

    def add(self, name, value):
        self._nodes[name] = value

    @property
    def names(self):
        return [n for n in self._nodes if n != "r"]


def py_held_list_ordered_dict_property(x):
    m = _Model()
    m.add("r", 1.0)
    m.add("a", x[0] ** 2)
    m.add("b", x[1] * x[2])
    return np.sum(_LifeTable(x).lx) + sum(m._nodes[n] for n in m.names)


def py_arange_of_graph_start_and_filters(x, fs=100.0):
    grid = np.arange(x[0], 3.0, 0.25)
    b, a = scipy.signal.butter(2, [4.0, 20.0], btype="bandpass", fs=fs)
    s = np.sin(np.arange(30) / 2.0) * x[1] + x[2]
    f, p = scipy.signal.welch(s, fs=4.0, nperseg=8)
    return np.sum(grid ** 2) + np.sum(scipy.signal.filtfilt(b, a, s) ** 2) + np.sum(p * f)


def py_binom_pmf_mad_and_pairs(x):
    p = np.concatenate([np.zeros(1), x[:2], np.ones(1)])
    P = scipy.stats.binom.pmf(np.arange(4)[:, None], 3, p)
    obs = [(0, 1), (2, 3), (3, 0)]
    ll = 0.0
    for (t0, c0), (t1, c1) in zip(obs[:-1], obs[1:]):
        ll += x[c0] * x[c1] * (t1 - t0)
    return np.sum(P * np.arange(4.0)[:, None] ** 2) + ll + \
        scipy.stats.median_abs_deviation(x * np.arange(1.0, 5.0)) + \
        sum(np.sum(t) ** 2 for t in np.array_split(x, len(x) // 2))


# ---- held-out forms (issue #43, hb9c): JAX's Autodiff Cookbook -----------------------------


def py_jvp_and_vjp_inside(x):
    g = jitgrad.jvp(jitgrad.grad(lambda v: np.sum(np.tanh(v) ** 2)), (x,), (x[::-1],))[1]
    y, back = jitgrad.vjp(np.sin, x)
    return np.sum(g * x) + np.sum(np.vstack([back(y), (y,)]) ** 2)


def py_vmap_of_a_vjp_fn_along_axis_1(x):
    m = np.reshape(x, (2, 2))
    _y, back = jitgrad.vjp(lambda v: np.tanh(v @ m), x[:2])
    J, = jitgrad.vmap(back)(np.eye(2))
    cols = jitgrad.vmap(lambda c: (np.cos(c), np.sum(c)), in_axes=1)(m)
    return np.sum(J * m) + np.sum(cols[0]) + np.sum(cols[1] ** 2)


def py_raise_to_a_returning_handler(x):
    s = np.sum(x)
    try:
        if s < 3:
            return 2 * s ** 3
        else:
            raise ValueError
    except ValueError:
        return np.pi * s


py_ufunc_differentiated = np.tanh


class _Stepper:
    def __init__(self, x):
        self.state = {"T": x[:2] * 1.0, "S": x[2]}
        self.sub = _Limits()
        self.sub.state = self.state  # one dict, two holders
        self.diagnostics = {}

    def step(self):
        olr = 0.5 + 0.2 * self.state["T"]
        self.diagnostics["OLR"] = olr
        self.state["T"] = self.state["T"] + 0.1 * (self.state["S"] - olr)


def py_dict_carried_by_a_loop(x):
    s = _Stepper(x)
    for _ in range(20):  # more than unrolled: a loop, its first iteration apart
        s.step()
    d = {"a": x[0], "b": x[:2] * 1.0}
    for _ in range(int(x.shape[0]) * 5):
        d["b"] = d["b"] * 0.9 + d["a"]
    return np.sum(s.sub.state["T"] ** 2) + np.sum(s.diagnostics["OLR"]) + np.sum(d["b"])


def _osc(t, y, k):
    return [y[1], -k * y[0]]


def py_solve_ivp_and_einsum_diagonal_written(x):
    sol = scipy.integrate.solve_ivp(_osc, (1.0, 0.0), [x[0], 0.0], t_eval=[0.5, 0.0],
                                    args=(x[1],), rtol=1e-10, atol=1e-10)
    F = np.zeros((2, 2, 2))
    np.einsum("ijj->ij", F)[...] = x[:2]
    return np.sum(sol.y ** 2) + np.sum(F @ F * np.arange(8.0).reshape(2, 2, 2))


def _kinematic(x):
    return x[0] * x[1] + np.sin(x[2])


def py_list_slice_passed_on(x):
    state = [x[k] * 1.5 for k in range(len(x))] + [0.2]
    x_ks = state[1:4]
    return _kinematic(x_ks) + state[0] * state[-1]


def py_sph_harm_y_real_basis(x):
    theta, phi = np.arccos(np.clip(x[:3] - 0.3, -1.0, 1.0)), x[1:] * 2.0
    cols = []
    for m in range(-2, 3):
        Y = scipy.special.sph_harm_y(2, abs(m), theta, phi)
        cols.append(np.sqrt(2) * Y.imag if m < 0 else Y.real if m == 0 else np.sqrt(2) * Y.real)
    B = np.column_stack(cols)
    return np.sum(B @ np.arange(1.0, 6.0)) + np.sum(np.abs(
        scipy.special.sph_harm_y(3, -1, theta, phi)) ** 2)


_GRID_X, _GRID_Y = np.linspace(0.0, 1.0, 6), np.linspace(0.0, 2.5, 5)
_POLAR = scipy.interpolate.RectBivariateSpline(
    _GRID_X, _GRID_Y, np.add.outer(np.sin(3.0 * _GRID_X), np.cos(_GRID_Y)), kx=3, ky=2)


def py_rect_bivariate_spline_ev(x):
    return np.sum(_POLAR.ev(x, 2.0 * x)) + np.sum(_POLAR(x[:2], x[2:] + 1.0) ** 2)


def py_fftfreq_pad_trapezoid_of_runtime_sizes(x):
    n = x.shape[0]
    padded = np.pad(x, [(n // 2, 1)], mode="constant")
    m = np.outer(x, x[::-1])
    return (np.sum(np.fft.fftfreq(n) * x) + np.sum(padded ** 2)
            + np.sum(np.trapezoid(m, x, axis=1)) + math.factorial(n - 1) * x[0])
