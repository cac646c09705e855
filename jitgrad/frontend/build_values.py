"""Values known while building that are not numbers or arrays: the user's objects, and library
functions called on constants.

Part of `build.Builder` (a mixin). Takes the values `build_exprs` evaluated; guarantees:

* A NumPy, SciPy or math function outside jitgrad's table, called on arguments that are all
  known while building (``np.meshgrid(np.arange(3), np.arange(2))`` of constants,
  ``np.sqrt(0.6)``, ``scipy.special.roots_legendre(5)``), is run then, as a global array is
  read: its result is a constant of the graph (`known`). With a run-time argument it stays
  refused, by name, where the user called it.
* The user's objects are values of the build, as Numba's frozen globals are: an attribute is
  read while building (an array attribute becomes a constant, or stays the run-time value it
  was made of), a method is built inline with ``self`` bound, a class is instantiated while
  building (its ``__init__`` runs on the values passed, run-time values included, so that
  ``State(x, v).x`` is ``x``). Anything that ``__init__`` cannot do with a run-time value is
  refused naming the class. An object made while building may have its attributes set by
  the function (``self.state = ...`` in a method) in the block it was made in
  (`set_attribute`); any other attribute is never written while building a gradient.
"""

from __future__ import annotations

import inspect
import types as pytypes

import numpy as np

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.core.ir import Var
from jitgrad.frontend.build_ast import LIBRARIES, CalledFromLibrary, fn_name
from jitgrad.lang import complex_pairs, scipy_api, symbolic
from jitgrad.lang.symbolic import Sym, Written

# Standard-library modules whose functions give the same result for the same arguments (no
# clock, no random state, no files): run while building on constants. Any other module's
# function (random.random(), time.time()) is refused: run once while building, its value would
# be frozen into every call.
PURE_STDLIB = frozenset({"collections", "itertools", "functools", "operator", "fractions",
                         "bisect", "string", "numbers", "enum", "dataclasses", "typing",
                         "copy", "cmath"})


# SciPy's samplers (``scipy.stats.norm.rvs``): random, so never run while building
_DRAWS = frozenset({"rvs", "random_state"})


def _holds_run_time(value) -> bool:
    if isinstance(value, Sym):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_run_time(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_run_time(v) for v in value.values())
    return False


def library_of(fn) -> str:
    return str(getattr(fn, "__module__", None) or "").split(".")[0]


def is_user_object(value) -> bool:
    """An instance of a class of the user's (not a library's, not a Python builtin)."""
    cls = type(value)
    return (not isinstance(value, (Sym, type, pytypes.ModuleType, pytypes.FunctionType))
            and library_of(cls) not in LIBRARIES and cls.__module__ != "builtins"
            and hasattr(value, "__dict__"))


def _is_namedtuple(cls) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


class Values:
    """The `Builder`'s values known while building: methods mixed into `build.Builder`."""

    def known(self, value, node):
        """A library's result made while building, as the graph takes it: NumPy scalars as
        Python numbers, arrays as constants of the graph, tuples item by item."""
        if isinstance(value, Written):  # a NumPy function jitgrad writes in Python
            return self.inline(value.fn, list(value.args), dict(value.kwargs), node)
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                return value.item()
            if value.dtype.kind == "c":  # a complex array: its two parts (`complex_pairs`)
                return complex_pairs.Complex(self.known(value.real.copy(), node),
                                             self.known(value.imag.copy(), node))
            return self.constant_array(getattr(node.func, "attr", "c") if hasattr(node, "func")
                                       else "c", value, node)
        if isinstance(value, tuple):
            items = tuple(self.known(v, node) for v in value)
            return type(value)(*items) if _is_namedtuple(type(value)) else items
        if isinstance(value, list):
            return tuple(self.known(v, node) for v in value)
        return value

    def call_on_constants(self, fn, args, kwargs, node):
        """A library function outside the table, on arguments all known while building: run
        now. Returns NotImplemented when an argument is a run-time value."""
        if _holds_run_time(args) or _holds_run_time(kwargs):
            return NotImplemented
        if getattr(fn, "__name__", "") in _DRAWS or "random" in str(getattr(fn, "__module__",
                                                                            "")).split("."):
            raise UnsupportedError(f"{fn_name(fn)} draws random numbers: run while building, "
                                   "its values would be the same at every call (draw with "
                                   "np.random, which jitgrad replays at each call)",
                                   self.loc(node))
        try:
            value = fn(*args, **kwargs)
        except CalledFromLibrary as e:  # the library's code called back into the user's
            raise UnsupportedError(
                f"{fn_name(fn)} given {e.name}, a function defined in the differentiated code: "
                f"jitgrad reads the user's code, not {fn_name(fn)}'s, which calls it with "
                "numbers. Write the computation in the function (a loop of Newton or gradient "
                "steps, say), or give it a derivative with jitgrad.custom_vjp",
                self.loc(node)) from None
        except Exception as e:  # noqa: BLE001 - the user's call failed as Python would
            raise JitgradError(f"{type(e).__name__} calling {fn_name(fn)}: {e}",
                               self.loc(node)) from None
        return self.known(value, node)

    def call_object(self, fn, args, kwargs, node):
        """A method of the user's object (its ``__call__`` when the object is called), or the
        user's class: built inline with ``self`` bound, or instantiated while building.
        Returns NotImplemented for anything else."""
        call = inspect.getattr_static(type(fn), "__call__", None)
        if is_user_object(fn) and isinstance(call, pytypes.FunctionType):
            fn = fn.__call__  # kernel(X): type(kernel).__call__(kernel, X)
        owner = getattr(fn, "__self__", None)
        if inspect.ismethod(fn) and (is_user_object(owner) or isinstance(owner, type)) \
                and library_of(fn.__func__) not in LIBRARIES \
                and isinstance(fn.__func__, pytypes.FunctionType):
            return self.inline(fn.__func__, (owner, *args), kwargs, node)
        if isinstance(fn, type) and (library_of(fn) not in LIBRARIES and fn.__module__ !=
                                     "builtins" or _is_namedtuple(fn)) and \
                not issubclass(fn, BaseException):
            try:
                made = fn(*args, **kwargs)
                if is_user_object(made):
                    self.made_objects[id(made)] = (made, self.gb.block)
                return made
            except JitgradError as e:
                made = self.build_instance(fn, args, kwargs, node)
                if made is not NotImplemented:
                    return made
                raise UnsupportedError(f"making a {fn.__name__} from run-time values: "
                                       f"{e.message}", self.loc(node)) from None
            except Exception as e:  # noqa: BLE001 - its __init__ on run-time values
                raise UnsupportedError(f"making a {fn.__name__} while building the gradient "
                                       f"failed ({type(e).__name__}: {e}): its __init__ runs "
                                       "on the values passed, and may store them or compute "
                                       "with operators, not call NumPy on run-time values",
                                       self.loc(node)) from None
        return NotImplemented

    def set_attribute(self, target, value) -> None:
        """``obj.attr = value``: the attribute of an object made while building this gradient,
        set then, as its ``__init__`` sets them, where the object was made in the block being
        built (not under a branch or in a loop that runs at run time, which would need the
        attribute to be a run-time variable). An object made before the call (a global, an
        argument, a class) keeps the attributes it had: the gradient reads them as they were."""
        obj = self.expr(target.value)
        made = self.made_objects.get(id(obj))
        if made is None or made[0] is not obj:
            what = "a class" if isinstance(obj, type) else f"a {type(obj).__name__}"
            raise UnsupportedError(
                f"assignment to the attribute .{target.attr} of {what} made before the "
                "function was called (a global, an argument or a class, whose attributes the "
                "gradient reads as they were when it was built): make the object inside the "
                "function, or keep the new value in a variable", self.loc(target))
        if made[1] is not self.gb.block:
            raise UnsupportedError(
                f"assignment to the attribute .{target.attr} under a branch or inside a loop "
                "that runs at run time, of an object made outside it (its attributes are "
                "values of the build, not run-time variables): keep the value in a variable "
                "of the loop or branch, and set the attribute after it", self.loc(target))
        setattr(obj, target.attr, value)

    def build_instance(self, cls, args, kwargs, node):
        """``cls(...)`` whose ``__init__`` computes with run-time values (``len(endog)``,
        ``np.ones(n)``): the object made by ``cls.__new__``, its ``__init__`` built inline as
        the user's code (its attribute assignments set while building). NotImplemented where
        the class makes its objects otherwise (its own ``__new__``, a builtin ``__init__``)."""
        init = getattr(cls, "__init__", None)
        if cls.__new__ is not object.__new__ or not isinstance(init, pytypes.FunctionType) \
                or library_of(init) in LIBRARIES:
            return NotImplemented
        obj = cls.__new__(cls)
        self.made_objects[id(obj)] = (obj, self.gb.block)  # its __init__ sets attributes
        self.inline(init, (obj, *args), kwargs, node)
        return obj

    def object_attribute(self, base, attr, node):
        """``obj.attr`` of the user's object (or class): read while building."""
        if not hasattr(base, attr):
            raise JitgradError(f"AttributeError: {type(base).__name__} has no attribute "
                               f"{attr!r}", self.loc(node))
        value = getattr(base, attr)
        if isinstance(value, Sym) and isinstance(value.atom, Var):
            if value.atom in self.gb.view_of:  # a view: as its array holds it now
                now = self.follow(value.atom, attr, node)
                return value if now is value.atom else self.gb.sym(now)
            if self.gb.is_stale(value.atom):
                raise UnsupportedError(symbolic.stale_message(f"the attribute .{attr}"),
                                       self.loc(node))
        if isinstance(value, Sym) or inspect.ismethod(value) or callable(value):
            return value
        if isinstance(value, (tuple, list)):  # (a frozen distribution: read as a global is)
            return tuple(v if isinstance(v, Sym) else self.global_value(
                f"{attr}_{k}", v, node, "attribute") if scipy_api.frozen_distribution(v)
                is not None else self.known(v, node) for k, v in enumerate(value))
        return self.global_value(attr, value, node, "attribute")
