"""Value types: what jitgrad knows about every value when it specialises a function.

A `Type` is a kind (``'f'`` float, ``'i'`` integer, ``'b'`` bool) and a rank (``ndim``, 0 for a
scalar). Sizes are not part of a type: one generated kernel serves every shape of a rank, as a
Numba signature does. The precise float width (float32 / float64) is left to Numba, which
compiles the same generated source for each.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from jitgrad.core.errors import SignatureError, instead

_KIND_ORDER = {"b": 0, "i": 1, "f": 2}


@dataclasses.dataclass(frozen=True)
class Type:
    kind: str  # 'f', 'i' or 'b'
    ndim: int

    def with_kind(self, kind: str) -> Type:
        return Type(kind, self.ndim)

    def __str__(self) -> str:
        name = {"f": "f64", "i": "i64", "b": "bool"}[self.kind]
        return name if self.ndim == 0 else f"{name}[{','.join(':' * self.ndim)}]"


@dataclasses.dataclass(frozen=True)
class SeqType:
    """A tree argument (`core.pytree`): a tuple, list or dict (or None, an empty tree) of
    numbers, arrays and trees; or a string, a tree without leaves whose value the build is
    specialised to (``mode == "fast"`` is decided while building). jitgrad passes its leaves to the generated code as separate
    arguments and hands the function the tree back (a list as a tuple)."""

    items: tuple  # of Type or SeqType (a dict's: in the order of ``keys``)
    # 'tuple', 'list', 'dict', 'none', 'str', 'omitted' (a default the caller left out, its
    # value a constant of the build: `pytree.Omitted`), 'generator', 'function', 'object' or
    # 'complex' (a complex number or array: its real and imaginary parts, `core.pytree`)
    container: str
    keys: tuple | None = None  # a dict's keys, sorted; an object's attribute names, sorted
    # a 'str': the string, a constant of the build (no leaves); a 'generator': its class's
    # name (Generator or RandomState: the call's own is drawn from, before the call); a
    # 'function': the function, a constant of the build; an 'object': its class; a
    # 'complex': the type it comes back in (Python's complex, or a NumPy complex dtype)
    value: object = None
    # a dict's keys in the caller's order, where it is not ``keys``' (sorted) order: the
    # function iterates the dict as Python would (``for k in d``), and the gradient's dict
    # comes back in that order; None when the caller's order is the sorted one
    order: tuple | None = None

    def __str__(self) -> str:
        if self.container == "none":
            return "None"
        if self.container == "str":
            return repr(self.value)
        if self.container == "omitted":
            return f"{self.value!r} (default)"
        if self.container == "generator":
            return f"np.random.{self.value}"
        if self.container == "function":
            return function_name(self.value)
        if self.container == "complex":
            return f"complex({self.items[0]})"
        if self.container == "object":
            return f"{self.value.__name__}(" + ", ".join(
                f"{k}={t}" for k, t in zip(self.keys, self.items)) + ")"
        if self.container == "dict":
            typed = dict(zip(self.keys, self.items))
            return "{" + ", ".join(f"{k!r}: {typed[k]}" for k in self.order or self.keys) + "}"
        return f"{self.container}({', '.join(str(t) for t in self.items)})"


def function_name(fn) -> str:
    """How a function argument is shown in a signature (never with its address)."""
    if isinstance(fn, functools.partial):
        return f"partial({function_name(fn.func)}, ...)"
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    return f"{module}.{getattr(fn, '__qualname__', getattr(fn, '__name__', type(fn).__name__))}"


FLOAT = Type("f", 0)
INT = Type("i", 0)
BOOL = Type("b", 0)


def promote_kinds(*kinds: str) -> str:
    """The kind of an arithmetic result, as NumPy computes it (bool < int < float)."""
    return max(kinds, key=_KIND_ORDER.__getitem__)


def broadcast_ndim(*types: Type) -> int:
    return max(t.ndim for t in types)


LOW_PRECISION = ("jitgrad converts a float16 argument to float64 on the way in, but not one "
                 "inside a tuple, list or dict: pass it as an argument of its own, or convert "
                 "it, x.astype(np.float64)")


def type_of_value(value, what: str = "argument", float16: bool = False) -> Type:
    """The `Type` of a run-time argument; refuses what jitgrad cannot compile. ``float16``:
    the caller converts float16 arrays and scalars to float64 (`calling.casts_for`); Numba
    has no float16 arithmetic."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return INT
    if isinstance(value, (float, np.floating)):
        if isinstance(value, np.floating) and value.dtype.itemsize < 4 and not float16:
            raise SignatureError(f"{what} has dtype {value.dtype}, which Numba cannot compile "
                                 f"({LOW_PRECISION})")
        return FLOAT
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        if kind == "f" and (value.dtype.itemsize >= 4 or float16):
            return Type("f", value.ndim)
        if kind == "f":
            raise SignatureError(f"{what} is an array of dtype {value.dtype}, which Numba cannot "
                                 f"compile ({LOW_PRECISION})")
        if kind in "iu":
            return Type("i", value.ndim)
        if kind == "b":
            return Type("b", value.ndim)
        raise SignatureError(
            f"{what} is an array of dtype {value.dtype}; jitgrad supports float32/float64, "
            "integer and bool arrays" + (
                " (pass a complex array's real and imaginary parts as two float arrays and "
                "write re + 1j * im inside the function)" if kind == "c" else
                " (complex numbers are not differentiated)")
        )
    if isinstance(value, dict):
        raise SignatureError(f"{what} is a dict; {instead('dict')}")
    if isinstance(value, (complex, np.complexfloating)):
        raise SignatureError(f"{what} is complex; jitgrad differentiates real functions only "
                             "(pass its real and imaginary parts as two float arguments and "
                             "write complex(re, im) inside the function)")
    if type(value).__module__.startswith("scipy.sparse"):
        raise SignatureError(
            f"{what} is a scipy.sparse {type(value).__name__}; jitgrad takes sparse matrices "
            "made inside the function, not passed to it: pass A.toarray() (and write @ for "
            "its products: an array's * is elementwise), or the data and indices to make it "
            "inside")
    raise SignatureError(
        f"{what} is a {type(value).__name__}; jitgrad takes floats, ints, bools and NumPy arrays"
    )
