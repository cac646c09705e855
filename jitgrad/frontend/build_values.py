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

import ast
import collections
import inspect
import sys
import types as pytypes

import numpy as np

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.core.ir import Var
from jitgrad.frontend.build_ast import (
    LIBRARIES,
    CalledFromLibrary,
    CarryAttribute,
    LocalFunction,
    PeelLoop,
    RunTimeRange,
    Undefined,
    fn_name,
    is_atom_value,
)
from jitgrad.frontend.dict_carries import (
    DictPart,
    attribute_dict_parts,
    carried_dict,
    grown,
    holding_attributes,
)
from jitgrad.lang import (
    complex_pairs,
    numpy_api,
    numpy_positions,
    numpy_written,
    scipy_api,
    symbolic,
)
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


def _made_with_inner(cls, args, kwargs):
    """``cls(*args, **kwargs)`` run while building, and the other objects whose ``__init__``
    ran during it (made by it: EBM's ``self.ins = P2Insolation(...)``), seen by a profile
    hook on the calls of ``__init__`` (any hook already set still sees every event)."""
    inner, previous = [], sys.getprofile()

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "__init__" and frame.f_code.co_argcount:
            inner.append(frame.f_locals.get(frame.f_code.co_varnames[0]))
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(hook)
    try:
        made = cls(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return made, [o for o in inner if o is not made]


def _wraps_run_time(obj) -> bool:
    """Whether an attribute of ``obj``, made by running its ``__init__`` while building, is an
    array of Python objects holding run-time values: NumPy's ``np.asarray(x)`` of a value known
    only at run time (GPy's ``self.lengthscale = np.asarray(lengthscale)``). Such an object is
    made again with its ``__init__`` built as the user's code (`build_instance`)."""
    for value in vars(obj).values():
        if isinstance(value, np.ndarray) and value.dtype == object and any(
                _holds_run_time(v) for v in value.flat):
            return True
    return False


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
            if value.dtype == object and _holds_run_time(value.ravel().tolist()):
                # NumPy's own function run on a list holding values of the graph
                # (``np.diag([1.0, 1.0, d])``): it placed them, or combined them with Python's
                # operators, which record; the array of those entries is the value
                return symbolic.NUMPY[np.array](value.tolist())
            if value.dtype.kind == "c":  # a complex array: its two parts (`complex_pairs`)
                return complex_pairs.Complex(self.known(value.real.copy(), node),
                                             self.known(value.imag.copy(), node))
            return self.constant_array(getattr(node.func, "attr", "c") if hasattr(node, "func")
                                       else "c", value, node)
        if isinstance(value, numpy_positions.OuterIndex):  # np.ix_(rows, cols): an index
            return value
        if isinstance(value, tuple):
            items = tuple(self.known(v, node) for v in value)
            return type(value)(*items) if _is_namedtuple(type(value)) else items
        if isinstance(value, list):
            return tuple(self.known(v, node) for v in value)
        return value

    def call_on_constants(self, fn, args, kwargs, node):
        """A library function outside the table, on arguments all known while building: run
        now. Returns NotImplemented when an argument is a run-time value. A range of bounds
        made of the arguments' sizes (``combinations(range(n_features), k)``) is the range of
        their values in the call (`size_decided`: the build holds for them)."""
        args = tuple(self.range_decided(a) for a in args)
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

    def range_decided(self, r):
        if not isinstance(r, RunTimeRange):
            return r
        bounds = [self.size_decided(b) for b in (r.start, r.stop, r.step)]
        return range(*bounds) if all(type(b) is int for b in bounds) else r

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
                made, inner = _made_with_inner(fn, args, kwargs)
                if is_user_object(made) and _wraps_run_time(made):
                    made = self.build_instance(fn, args, kwargs, node)  # (np.asarray(x))
                    if made is NotImplemented:
                        raise UnsupportedError(
                            f"making a {fn.__name__} from run-time values: its __init__ "
                            "gives NumPy a run-time value (np.asarray(x)), and the class "
                            "makes its objects with its own __new__", self.loc(node))
                    return made
                for obj in (made, *inner):  # (and the objects its __init__ made: climlab's
                    if is_user_object(obj) and id(obj) not in self.made_objects:  # processes)
                        self.made_objects[id(obj)] = (obj, self.gb.block)
                        self.note_owned_arrays(obj)
                return made
            except JitgradError as e:
                made = self.build_instance(fn, args, kwargs, node)
                if made is not NotImplemented:
                    return made
                raise UnsupportedError(f"making a {fn.__name__} from run-time values: "
                                       f"{e.message}", self.loc(node)) from None
            except Exception as e:  # noqa: BLE001 - its __init__ on run-time values
                made = self.build_instance(fn, args, kwargs, node)  # (p[i, t[0]] of a
                if made is not NotImplemented:  # run-time p: its __init__ built, as above)
                    return made
                raise UnsupportedError(f"making a {fn.__name__} while building the gradient "
                                       f"failed ({type(e).__name__}: {e}): its __init__ runs "
                                       "on the values passed, and may store them or compute "
                                       "with operators, not call NumPy on run-time values",
                                       self.loc(node)) from None
        return NotImplemented

    def set_attribute(self, target, value) -> None:
        """``obj.attr = value``: the attribute of an object made while building this gradient,
        set then, as its ``__init__`` sets them. Under a branch or inside a loop that runs at
        run time the attribute is a variable of that branch or loop, as a name is: merged after
        the ``if`` (`merge_attributes`), carried by the loop (`attribute_carries`). An object
        made before the call (a global, an argument, a class) keeps the attributes it had: the
        gradient reads them as they were."""
        obj = self.expr(target.value)
        if target.attr == "shape" and isinstance(obj, Sym) and isinstance(target.value, ast.Name):
            self.set_shape(target, obj, value)  # rval.shape = samples.shape
            return
        self.set_attribute_of(obj, target.attr, value, target)

    def set_attribute_of(self, obj, attr: str, value, node) -> None:
        """``obj.attr = value`` (or ``setattr(obj, attr, value)``) of an object made while
        building this gradient (`set_attribute`)."""
        if isinstance(obj, LocalFunction):  # `apogee.terminal = True`: an event's flags,
            setattr(obj, attr, value)  # for the call given it (solve_ivp refuses events=)
            return
        made = self.made_objects.get(id(obj))
        if made is None or made[0] is not obj:
            what = "a class" if isinstance(obj, type) else f"a {type(obj).__name__}"
            raise UnsupportedError(
                f"assignment to the attribute .{attr} of {what} made before the "
                "function was called (a global, an argument or a class, whose attributes the "
                "gradient reads as they were when it was built): make the object inside the "
                "function, or keep the new value in a variable", self.loc(node))
        setattr(obj, attr, value)

    def set_shape(self, target, array, shape) -> None:
        """``x.shape = s`` of a named array: ``x`` is its entries in shape ``s`` (NumPy changes
        that array object's shape in place; another name for the same object would see it
        too, and is refused)."""
        name = target.value.id
        if any(k != name and isinstance(v, Sym) and v.atom is array.atom
               for k, v in self.env.items()):
            raise UnsupportedError(f"setting .shape of `{name}`, which another name holds too "
                                   f"(NumPy changes both): write `{name} = "
                                   f"{name}.reshape(...)`", self.loc(target))
        self.env[name] = numpy_api.np_reshape(array, shape)

    def note_owned_arrays(self, obj) -> None:
        """The arrays NumPy made for ``obj``'s attributes while its ``__init__`` ran, held by
        the object alone (``self.steps = np.zeros(n, np.int32)``): the build may make them
        arrays of the graph when the function changes them (`own_array_attribute`)."""
        for value in vars(obj).values():
            if isinstance(value, np.ndarray) and sys.getrefcount(value) <= 3:
                self.owned_arrays[id(value)] = value  # (the dict, `value`, the argument)

    def own_array_attribute(self, obj, attr: str, node):
        """``obj.attr``, an array NumPy made while building that the function changes
        (``self.steps += 1``, or carried by a loop): from here on an array of the graph, a
        copy of its contents, which the attribute holds; the graph's copies of it read before
        are out of date (NumPy would show the change through them: a read is refused). An
        array something else may hold too (a global, an argument, another object's attribute,
        which NumPy would change with it) is refused."""
        held = vars(obj)[attr]
        others = [v for o, _ in self.made_objects.values() for k, v in (
            vars(o).items() if hasattr(o, "__dict__") else ()) if not (o is obj and k == attr)]
        if id(held) not in self.owned_arrays or any(v is held for v in others):
            raise UnsupportedError(
                f"changing the attribute .{attr} of a {type(obj).__name__}, an array that "
                "something else may hold too (a global, an argument, another object), which "
                "NumPy would change in place for every holder: write `obj.attr = obj.attr + "
                "...` (a new array), or give the object an array of its own "
                "(`np.zeros(n)`, `a.copy()`)", self.loc(node))
        for copy in self.attribute_reads.pop(id(held), ()):
            self.gb.mark_stale(copy)
        value = symbolic.record("copy", self.global_value(attr, held, node, "attribute"))
        setattr(obj, attr, value)
        return value

    # -- attributes as variables of branches and loops ---------------------------------------

    def attribute_state(self) -> dict:
        """The attributes of each object made while building, now: {id: (object, a copy of
        its attributes)} (those without a ``__dict__`` have none to change)."""
        state = {}
        for key, (obj, _) in self.made_objects.items():
            try:
                state[key] = (obj, dict(vars(obj)))
            except TypeError:
                continue
        return state

    @staticmethod
    def restore_attributes(state: dict) -> None:
        """Each object's attributes as ``state`` (`attribute_state`) holds them."""
        for obj, attrs in state.values():
            held = vars(obj)
            held.clear()
            held.update(attrs)

    def attribute_name(self, key, attr: str) -> str:
        """The environment name an object's attribute is merged or carried under: internal
        (``%``), its generated name the attribute's, numbered by the order the objects were
        made in (never by their ids, so the generated source is the same on every run)."""
        return f"%{attr}@attr{list(self.made_objects).index(key):04d}"

    def changed_attributes(self, before: dict) -> dict:
        """{(id, attribute): its value now} for those objects of ``before`` whose attribute
        was set since (a new value, or an attribute it did not have)."""
        changed = {}
        for key, (obj, attrs) in before.items():
            for attr, value in vars(obj).items():
                if attr not in attrs or attrs[attr] is not value:
                    changed[(key, attr)] = value
        return changed

    def merge_attributes(self, before: dict, env_t: dict, after_t: dict, env_e: dict,
                         after_e: dict) -> dict:
        """The attributes set on either side of an ``if`` on a run-time value (``after_t``,
        ``after_e``: `changed_attributes` of each side), as names of each side's environment
        (`build_if` merges them as names: one type after it, as Numba). Returns {name: (object,
        attribute)}; an attribute set on one side only that the object did not have before is
        undefined after the ``if``."""
        names = {}
        for key, attr in dict.fromkeys([*after_t, *after_e]):
            obj, attrs = before[key]
            name = self.attribute_name(key, attr)
            names[name] = (obj, attr)
            why = Undefined(f"the attribute .{attr} is set in only one branch of an `if` on "
                            "a value known only at run time, and the object had none before "
                            "it: set it before the `if` too")
            for env, after in ((env_t, after_t), (env_e, after_e)):
                env[name] = after.get((key, attr), attrs.get(attr, why))
        return names

    def attribute_carries(self, stmt) -> dict:
        """The attributes of objects made before the loop ``stmt`` that it carries (found by
        an earlier attempt at the build: `CarryAttribute`), put into the environment under
        their names (`attribute_name`). Returns {name: (object, attribute)}."""
        wanted = self.seeds.attributes.get(self.loop_key(stmt), ())
        names, dicts = {}, {}
        for key, (obj, attrs) in self.attribute_state().items():
            for attr in attrs:
                if (type(obj).__qualname__, attr) in wanted:
                    name = self.attribute_name(key, attr)
                    if carried_dict(attrs[attr]):  # (its entries: `dict_carries`)
                        attribute_dict_parts(self, attr, attrs[attr], name, names, dicts, stmt)
                        continue
                    names[name] = (obj, attr)
                    self.env[name] = self.own_array_attribute(obj, attr, stmt) if isinstance(
                        attrs[attr], np.ndarray) else attrs[attr]
        self.__dict__.setdefault("attribute_names", {}).update(names)
        return names

    def check_attributes_carried(self, stmt, before: dict, carried: dict) -> dict:
        """After an attempt at a loop's body: an attribute the body set on an object made
        before the loop, which had it before and the loop does not carry yet, starts the
        build again with the loop carrying it (`CarryAttribute`). Returns the attributes the
        object did not have before the loop: undefined after it (set only inside)."""
        new = {}
        carried_pairs = set()
        for a in carried.values():
            holders = a.group.holders if isinstance(a, DictPart) else [a]
            carried_pairs.update((id(obj), attr) for obj, attr in holders)
        for key, attr in self.changed_attributes(before):
            obj, attrs = before[key]
            if attr not in attrs:
                new[(key, attr)] = obj
            elif (key, attr) not in carried_pairs:
                if isinstance(attrs[attr], dict) and grown(attrs[attr], getattr(
                        obj, attr)) and self.peels(stmt):
                    raise PeelLoop(self.loop_key(stmt))  # `self.diagnostics["OLR"] = OLR`
                if not (is_atom_value(attrs[attr]) or isinstance(attrs[attr], np.ndarray)
                        or carried_dict(attrs[attr])):
                    raise UnsupportedError(
                        f"the attribute .{attr} of a {type(obj).__name__} made before this "
                        f"loop (a {type(attrs[attr]).__name__} there) is set inside the loop, "
                        "which runs at run time: a loop carries numbers and arrays (one type "
                        "each, as in Numba); give the attribute a number or an array before "
                        "the loop", self.loc(stmt))
                raise CarryAttribute(self.loop_key(stmt), (type(obj).__qualname__, attr))
        return new

    def same_dict(self, held: dict, read: dict) -> dict:
        """``obj.d`` of an object made while building, a dict ``held`` read as ``read`` (its
        entries as the graph holds them): the one dict every holder sees, so that a change
        made through one name for it reaches the others as in Python (``sub.state =
        self.state``, then ``self.state[k] = v``). Where reading made new entries (an array
        NumPy made), the attributes holding ``held`` hold ``read`` from here on, unless
        something else (a name, an item, a global) holds it too."""
        if isinstance(held, collections.OrderedDict):
            return read  # (read as a dict, its views Python's dict's: `build_containers`)
        if all(read[k] is v for k, v in held.items()):
            return held
        holders = holding_attributes(self.made_objects, held)
        if self.holders(held) or any(v is held for v in self.src.fn.__globals__.values()):
            return read
        read = self.dict_like(held, read)  # (of its class: radvel's `Parameters(dict)`)
        for o, a in holders:
            setattr(o, a, read)
        return read

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
        if isinstance(value, Undefined) and id(base) in self.made_objects:
            # set on some paths of an `if` only (`merge_attributes`): AttributeError elsewhere
            found = self.assigned_on_some_paths(
                self.attribute_name(id(base), attr), value,
                numpy_written.attribute_set_on_this_path, node)
            value = value if found is None else found
        if isinstance(value, Undefined):
            raise UnsupportedError(value.why, self.loc(node))
        if isinstance(value, Sym) and isinstance(value.atom, Var):
            if value.atom in self.gb.view_of:  # a view: as its array holds it now
                now = self.follow(value.atom, attr, node)
                return value if now is value.atom else self.gb.sym(now)
            if self.gb.is_stale(value.atom):  # written through a view of it since (its
                now = self.follow(value.atom, f"the attribute .{attr}", node)  # row: `m[1][1]
                if id(base) in self.made_objects:  # *= f`): its current version, or refused
                    setattr(base, attr, self.gb.sym(now))
                return self.gb.sym(now)
        if isinstance(value, (Sym, complex_pairs.Complex)) or inspect.ismethod(value) or \
                callable(value):
            return value  # (a Complex: a complex argument's attribute, its two parts)
        if isinstance(value, (tuple, list)):  # (a frozen distribution: read as a global is)
            return tuple(v if isinstance(v, Sym) else self.global_value(
                f"{attr}_{k}", v, node, "attribute") if scipy_api.frozen_distribution(v)
                is not None else self.known(v, node) for k, v in enumerate(value))
        read = self.global_value(attr, value, node, "attribute")
        if isinstance(value, dict) and id(base) in self.made_objects:
            read = self.same_dict(value, read)
        if isinstance(value, np.ndarray) and isinstance(read, Sym):  # (`augment_attribute`)
            self.attribute_reads.setdefault(id(value), []).append(read.atom)
        return read

