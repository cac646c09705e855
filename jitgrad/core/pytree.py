"""Pytrees: arguments that are dicts, lists and tuples, nested, of floats, ints, bools and
arrays (JAX's convention). The one flatten/unflatten at the boundary that every entry point
and `jitgrad.dask` share.

* A tree's *leaves* are its numbers and arrays in a fixed order: a tuple's and a list's items
  in order, a dict's values in the order of its sorted keys (as JAX orders them). ``None`` is
  an empty subtree: it has no leaves and comes back as ``None``. A dict's own order (the
  caller's) is kept beside (`SeqType.order`): the function sees the dict, and the gradient
  comes back, in that order, as Python iterates it (JAX gives sorted dicts back).
* A string is a tree without leaves that keeps its value: a switch known when the gradient is
  built (``if mode == "fast":``), so each string gets its own build, as each structure does.
  So is an int or bool default the caller leaves out (`Omitted`, as Numba's ``types.Omitted``).
* `type_of_tree` gives a tree's `SeqType` (its structure and its leaves' `Type`); `leaves`
  its values, `leaf_types` the types, in that order; `unflatten` rebuilds a tree of the same
  structure from one value per leaf (a gradient per leaf).

Guarantees: the order of the leaves depends on the keys only (never on the dict's insertion
order), so a tree's key for caching and its flat order agree; the insertion order is part of
the key (a dict in another order is another build: ``for k in d`` runs in another order).

* A complex number or array is a tree of two leaves, its real and imaginary parts (float
  arrays of its shape, in that order), when the caller allows it (`type_of_tree`'s
  ``complex_parts``: `grad` and `value_and_grad`; the other transforms refuse it). The
  function sees it as one complex value (the frontend binds the two parts as a
  `lang.complex_pairs.Complex`), and its gradient comes back as one complex value of the
  argument's dtype in JAX's convention for a real loss L: ``dL/d(re) - 1j * dL/d(im)``
  (autograd's too; `unflatten`), so that ``z - lr * g`` descends.
"""

from __future__ import annotations

import array
import functools
import types as pytypes

import numpy as np

from jitgrad.core.errors import SignatureError
from jitgrad.core.types import SeqType, Type, type_of_value

# a NumPy generator passed as an argument: a tree without leaves, as a string is; the
# function's draws from it are made before each call (`frontend.draws`)
GENERATORS = (np.random.Generator, np.random.RandomState)
# a function passed as an argument (``fit(x, np.tanh)``, a lambda, ``functools.partial``): a
# tree without leaves too, a constant of the build (called where the function calls it), so
# each function gets its own build, keyed by the function itself; a class too
# (``isinstance(x, kind)``, ``kind(...)``: `list`, `np.float32`)
FUNCTIONS = (pytypes.FunctionType, pytypes.BuiltinFunctionType, pytypes.MethodType, np.ufunc,
             functools.partial, type)


class Omitted:
    """A parameter's default the caller left out (``def f(x, n=6)`` called as ``f(x)``), as
    Numba's ``types.Omitted``: a tree without leaves that keeps its value, so the build knows
    it (``range(n)``, ``leggauss(n)``, shapes) and the call's key holds it. Only int, bool and
    float defaults are wrapped, a float one not when it is differentiated
    (`CallingConvention.bind_arguments`); a value the caller passes stays a run-time argument."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"Omitted({self.value!r})"


def without_omitted(args: tuple) -> tuple:
    """``args`` with each `Omitted` default as its value (for a path that calls Python)."""
    return tuple(a.value if isinstance(a, Omitted) else a for a in args)


CONTAINERS = (tuple, list, dict, str, type(None), Omitted, *GENERATORS, *FUNCTIONS)
# the modules whose objects are never read attribute by attribute as a tree
_NOT_OBJECTS = frozenset({"builtins", "numpy", "scipy", "numba", "jitgrad", "pandas", "jax",
                          "torch", "xarray", "dask"})


# buffers carry no derivative: read as the integer (or float) arrays of their items
BUFFERS = (bytes, bytearray, memoryview, array.array)


def plain_arguments(args: tuple) -> tuple:
    """``args`` with the containers Python and Numba have beside lists, dicts and arrays made
    into those (`plain`); the same tuple when there are none."""
    if not any(isinstance(a, BUFFERS) or _typed_container(a) for a in args):
        return args
    return tuple(plain(a) for a in args)


def plain(value):
    """A numba.typed.List as the list of its items, a numba.typed.Dict as the dict (the
    gradient of one is then that list's or dict's); bytes and bytearray as their uint8
    array, a memoryview and an array.array as the array of their items (a copy: the
    function's writes stay its own)."""
    kind = _typed_container(value)
    if kind == "List":
        return [plain(v) for v in value]
    if kind == "Dict":
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return np.frombuffer(bytes(value), dtype=np.uint8).copy()
    if isinstance(value, (memoryview, array.array)):
        return np.array(value)
    return value


def _typed_container(value) -> str | None:
    """"List" or "Dict" for numba.typed's (known by their module: only the backend imports
    numba)."""
    t = type(value)
    if str(getattr(t, "__module__", "")).startswith("numba.typed.") and \
            t.__name__ in ("List", "Dict"):
        return t.__name__
    return None


def is_object(value, depth: int = 0) -> bool:
    """A plain object (a dataclass instance, or an instance of the user's class) whose
    attributes are all numbers, arrays, trees, strings or functions: a tree whose items are
    its attributes (``p.scale``, ``model.w``), in the order of their sorted names; its
    gradient is an object of the same class holding the attributes' gradients. (Objects
    nested deeper than 32, or in a cycle, are not.)"""
    cls = type(value)
    if isinstance(value, (type, pytypes.ModuleType, *CONTAINERS)) or not hasattr(
            value, "__dict__") or cls.__module__.split(".")[0] in _NOT_OBJECTS or depth > 32:
        return False
    return all(isinstance(k, str) and (is_tree(v, depth + 1) or isinstance(
        v, (bool, int, float, np.number, np.bool_, np.ndarray))) for k, v in vars(value).items())


def is_complex(value) -> bool:
    """A complex number (Python's or NumPy's) or complex array: a tree of its two parts."""
    return isinstance(value, (complex, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c")


def complex_parts(value) -> tuple:
    """A complex number's or array's real and imaginary parts, as real numbers or
    C-contiguous float arrays of its shape (copies: never views into the caller's array)."""
    if isinstance(value, np.ndarray):
        return value.real.copy(), value.imag.copy()
    return value.real, value.imag


def is_tree(value, depth: int = 0) -> bool:
    """A tuple, list, dict, string, generator, function, plain object, complex value or None
    argument (a leaf is anything else)."""
    return isinstance(value, CONTAINERS) or is_complex(value) or is_object(value, depth)


def _without_leaves(value) -> bool:
    return value is None or isinstance(value, (str, Omitted, *GENERATORS, *FUNCTIONS))


def _sorted_keys(d: dict, what: str) -> list:
    keys = list(d)
    if not all(isinstance(k, str) for k in keys) and not all(
            isinstance(k, int) and not isinstance(k, bool) for k in keys):
        raise SignatureError(f"{what} is a dict whose keys are not all strings (or all "
                             "integers): jitgrad reads a dict argument by constant keys")
    return sorted(keys)


def _order(d: dict, keys) -> tuple | None:
    """``d``'s keys in its own order, if that is not ``keys``' (`SeqType.order`)."""
    own = tuple(d)
    return None if own == tuple(keys) else own


def type_of_tree(value, what: str, complex_parts: bool = False) -> SeqType | Type:
    """The type of an argument: a `Type` for a leaf, a `SeqType` (nested) for a tree. A
    complex value is a tree of its two parts with ``complex_parts``; else it is refused."""
    if is_complex(value):
        return _complex_type(value, what, complex_parts)
    if value is None:
        return SeqType((), "none")
    if isinstance(value, str):
        return SeqType((), "str", value=value)
    if isinstance(value, Omitted):
        return SeqType((), "omitted", value=value.value)
    if isinstance(value, GENERATORS):  # its kind: which methods it has
        return SeqType((), "generator", value=type(value).__name__)
    if isinstance(value, FUNCTIONS):
        return SeqType((), "function", value=value)
    if is_object(value):
        keys = tuple(sorted(vars(value)))
        return SeqType(tuple(type_of_tree(getattr(value, k), f"attribute {k!r} of {what}",
                                          complex_parts) for k in keys),
                       "object", keys, value=type(value))
    if isinstance(value, dict):
        keys = _sorted_keys(value, what)
        return SeqType(tuple(type_of_tree(value[k], f"entry {k!r} of {what}", complex_parts)
                             for k in keys),
                       "dict", tuple(keys), order=_order(value, keys))
    if isinstance(value, (tuple, list)):
        return SeqType(tuple(type_of_tree(v, f"item {j} of {what}", complex_parts)
                             for j, v in enumerate(value)), type(value).__name__)
    return type_of_value(value, what)


def _complex_type(value, what: str, allowed: bool) -> SeqType:
    """A complex argument's type: its two parts' (float, of its rank), the complex type it
    comes back in (`SeqType.value`: Python's ``complex`` or a NumPy dtype)."""
    if not allowed:
        raise SignatureError(f"{what} is complex: jitgrad.grad and value_and_grad take complex "
                             "arguments (as their real and imaginary parts), this transform "
                             "does not yet (pass the two parts as float arguments and write "
                             "re + 1j * im inside the function)")
    re, im = complex_parts(value)  # (complex256's parts: float128, computed in float64)
    kind = complex if isinstance(value, complex) else value.dtype
    return SeqType((type_of_value(re, what), type_of_value(im, what)), "complex", value=kind)


def leaves(value) -> list:
    """The tree's leaf values, in the order of `leaf_types`."""
    out: list = []
    _leaves(value, out)
    return out


def _leaves(value, out: list) -> None:
    if _without_leaves(value):
        return
    if is_complex(value):
        out.extend(complex_parts(value))
    elif isinstance(value, dict):
        for k in sorted(value):
            _leaves(value[k], out)
    elif is_object(value):
        for k in sorted(vars(value)):
            _leaves(getattr(value, k), out)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out)
    else:
        out.append(value)


def leaves_like(value, like, what: str) -> list:
    """``value``'s entries at ``like``'s leaves, in `leaves` order: ``value`` has ``like``'s
    structure, and may hold None where ``like`` has a leaf (a tangent: "does not move"). At a
    complex leaf of ``like``, ``value`` is a gradient (`unflatten`'s convention): its entries
    are the derivatives by the real and imaginary parts, ``g.real`` and ``-g.imag``."""
    out: list = []

    def walk(v, ref, where):
        if _without_leaves(ref):
            return
        if is_complex(ref):
            out.extend((None, None) if v is None else (np.real(v), -np.imag(v)))
        elif isinstance(ref, dict):
            if not isinstance(v, dict) or set(v) != set(ref):
                raise SignatureError(f"{what}{where} is not a dict with the keys "
                                     f"{sorted(ref, key=repr)}")
            for k in sorted(ref):
                walk(v[k], ref[k], f"{where}[{k!r}]")
        elif is_object(ref):
            if type(v) is not type(ref):
                raise SignatureError(f"{what}{where} is not a {type(ref).__name__}")
            for k in sorted(vars(ref)):
                walk(getattr(v, k), getattr(ref, k), f"{where}.{k}")
        elif isinstance(ref, (tuple, list)):
            if not isinstance(v, (tuple, list)) or len(v) != len(ref):
                raise SignatureError(f"{what}{where} is not a sequence of {len(ref)}")
            for j, (a, b) in enumerate(zip(v, ref)):
                walk(a, b, f"{where}[{j}]")
        else:
            if is_tree(v) and v is not None:
                raise SignatureError(f"{what}{where} is a tree where the argument has a leaf")
            out.append(v)

    walk(value, like, "")
    return out


def leaf_types(t) -> list[Type]:
    """The leaves' types of a (tree) type, in order."""
    if not isinstance(t, SeqType):
        return [t]
    return [u for item in t.items for u in leaf_types(item)]


def leaf_paths(t, name: str) -> list[str]:
    """How the user writes each leaf (``params['W1']``, ``layers[0][1]``), in order."""
    if not isinstance(t, SeqType):
        return [name]
    if t.container == "dict":
        return [p for k, item in zip(t.keys, t.items) for p in leaf_paths(item, f"{name}[{k!r}]")]
    if t.container == "object":
        return [p for k, item in zip(t.keys, t.items) for p in leaf_paths(item, f"{name}.{k}")]
    if t.container == "complex":
        return [f"{name}.real", f"{name}.imag"]
    return [p for j, item in enumerate(t.items) for p in leaf_paths(item, f"{name}[{j}]")]


def n_leaves(t) -> int:
    return len(leaf_types(t))


def unflatten(t, values: list, strings: bool = False, pair=None):
    """A tree of type ``t`` (its structure) holding ``values``, one per leaf, in order; a
    string is None there (a gradient has no entry for it), or itself with ``strings`` (the
    argument the function is built with). A complex leaf from its two parts: ``pair(re, im)``
    if given; else, with ``strings``, the value ``re + 1j * im``, and without, the gradient
    ``re - 1j * im`` of the derivatives ``re``, ``im`` by its parts (JAX's convention), each
    in the argument's complex type."""
    it = iter(values)
    out = _unflatten(t, it, strings, pair)
    return out


def _complex_of(kind, re, im):
    """``re + 1j * im`` in ``kind`` (Python's complex, or a NumPy complex dtype); an array
    when the parts are."""
    if kind is complex:
        return complex(re, im)
    if isinstance(re, np.ndarray) or isinstance(im, np.ndarray):
        out = np.empty(np.broadcast(re, im).shape, dtype=kind)
        out.real, out.imag = re, im
        return out
    return kind.type(complex(re, im))


def _unflatten(t, it, strings, pair):
    if not isinstance(t, SeqType):
        return next(it)
    if t.container == "complex":
        re, im = next(it), next(it)
        if pair is not None:
            return pair(re, im)
        return _complex_of(t.value, re, im if strings else -im)
    if t.container == "none":
        return None
    if t.container in ("str", "omitted"):
        return t.value if strings else None
    if t.container == "generator":
        return None  # (`build.build` binds the call's generator in its place)
    if t.container == "function":
        return t.value if strings else None
    items = [_unflatten(u, it, strings, pair) for u in t.items]
    if t.container == "dict":
        d = dict(zip(t.keys, items))
        return {k: d[k] for k in t.order} if t.order else d
    if t.container == "object":  # made without its __init__, its attributes set
        obj = t.value.__new__(t.value)
        obj.__dict__.update(zip(t.keys, items))
        return obj
    return list(items) if t.container == "list" else tuple(items)


LEAF = Type("f", 0)  # the leaf of a `structure`: what it holds is not recorded


def structure(value, is_leaf) -> SeqType | Type:
    """The structure of a tree whose leaves ``is_leaf`` says (`unflatten` rebuilds it)."""
    if value is None:
        return SeqType((), "none")
    if isinstance(value, dict):
        keys = sorted(value)
        return SeqType(tuple(structure(value[k], is_leaf) for k in keys), "dict", tuple(keys),
                       order=_order(value, keys))
    if isinstance(value, (tuple, list)) and not is_leaf(value):
        name = type(value).__name__
        if name == "BuildList":  # a list the builder changed (`build_ast.BuildList`): a tuple
            name = "tuple"
        return SeqType(tuple(structure(v, is_leaf) for v in value), name)
    return LEAF


def float_leaf_positions(types, positions) -> list[int]:
    """The flat positions (among every argument's leaves) of the float leaves of the
    arguments at ``positions``: what the reverse transform differentiates."""
    starts, n = [], 0
    for t in types:
        starts.append(n)
        n += n_leaves(t)
    return [starts[k] + j for k in positions
            for j, u in enumerate(leaf_types(types[k])) if u.kind == "f"]


def regroup(types, positions, flat: list) -> list:
    """One result per argument at ``positions`` from ``flat`` (one per float leaf, in
    `float_leaf_positions` order): a leaf argument's own, a tree argument's as its tree with
    None at integer, bool and None leaves."""
    it = iter(flat)
    out = []
    for k in positions:
        t = types[k]
        if isinstance(t, SeqType):
            out.append(unflatten(t, [next(it) if u.kind == "f" else None
                                     for u in leaf_types(t)]))
        else:
            out.append(next(it))
    return out


def _function_key(fn):
    """A function argument's key: the function; a ``functools.partial``, its function and the
    values it binds (with their types) when they can be keys, so that ``partial(f, 2.0)``
    made anew for each call is not a new build each time."""
    if isinstance(fn, functools.partial):
        bound = (tuple((type(a), a) for a in fn.args),
                 tuple(sorted((k, type(v), v) for k, v in fn.keywords.items())))
        try:
            hash(bound)
        except TypeError:
            return ("function", fn)
        return ("partial", _function_key(fn.func), bound)
    return ("function", fn)


def key_of(value):
    """A cache key for a call argument: dtype and rank of arrays, the type of others, and a
    tree's structure (its dict keys included)."""
    import numpy as np

    if type(value) is np.ndarray:
        return (value.dtype, value.ndim)
    if value is None:
        return None
    if isinstance(value, str):
        return (str, value)
    if isinstance(value, Omitted):
        return (Omitted, type(value.value), value.value)
    if isinstance(value, GENERATORS):  # (not which one: the call's own is drawn from; and
        return ("generator", type(value))  # never a plain call's key, whose leaves differ)
    if isinstance(value, FUNCTIONS):  # the function itself: another one is another build
        return _function_key(value)
    if is_object(value):
        return (type(value), tuple((k, key_of(getattr(value, k))) for k in sorted(vars(value))))
    if isinstance(value, dict):  # (its keys in its own order: `SeqType.order`)
        return (dict, tuple((k, key_of(value[k])) for k in value))
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(key_of(v) for v in value))
    return type(value)


__all__ = [
    "CONTAINERS",
    "FUNCTIONS",
    "LEAF",
    "Omitted",
    "complex_parts",
    "float_leaf_positions",
    "is_complex",
    "is_object",
    "is_tree",
    "key_of",
    "leaf_paths",
    "leaf_types",
    "leaves",
    "leaves_like",
    "n_leaves",
    "regroup",
    "structure",
    "type_of_tree",
    "unflatten",
    "without_omitted",
]
