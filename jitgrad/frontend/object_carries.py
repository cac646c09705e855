"""A loop over a run-time count that rebinds a name to an object of the user's class (QuTiP's
``psi = psi + dt * (H * psi)``, TrueSkill's ``me = Rating(mu, sigma)``): the loop carries the
object's attribute values instead.

Part of `build.Builder` (a mixin, under `build_loops.Loops`). Takes a ``for`` or ``while``
statement that `Loops.loop_carries` found rebinding such a name (`CarryObject`, seeded by
`build.build`). Its numbers and arrays (real or complex: `LoopHeaders.complex_carries` then
parts a complex one) are carried under hidden names: ``n_a, n_b = n.a, n.b`` before the loop,
at the end of its body and before each ``continue`` and ``break`` of it; ``n = <a copy of the
object with those values>`` where the body begins and after the loop. Guarantees: the class
and every other attribute (strings, tuples, Python integers, other objects) are fixed while
building; a body whose object differs in them, or that also changes the object in place, is
refused naming the line, never carried wrongly.
"""

from __future__ import annotations

import ast
import copy

import numpy as np

from jitgrad.core.errors import JitgradError, UnsupportedError
from jitgrad.frontend.build_ast import Undefined, is_atom_value
from jitgrad.frontend.build_containers import BuildMethod
from jitgrad.frontend.build_values import is_user_object
from jitgrad.lang import complex_pairs


def carried_attribute(value) -> bool:
    """Whether a loop carries an attribute holding ``value``: a number or an array, real or
    complex, other than a Python integer or bool (a size or a flag: kept as built)."""
    if type(value) in (int, bool):
        return False
    return is_atom_value(value) or complex_pairs.is_complex(value) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "fc")


class _Parts(BuildMethod):
    """The object's carried attributes as a tuple (``split``) or an object of the template's
    class holding them (``join``): called by the rewritten loop while building."""

    takes_complex = True

    def __init__(self, builder, name, template, attrs, join):
        self.builder, self.name, self.template = builder, name, template
        self.attrs, self.join = attrs, join
        self.made: dict[int, tuple] = {}  # objects joined: id -> (object, attributes set)

    def __call__(self, args, kwargs, node):
        if self.join:
            obj = copy.copy(self.template)
            for attr, value in zip(self.attrs, args):
                setattr(obj, attr, value)
            self.made[id(obj)] = (obj, dict(vars(obj)))
            return obj
        (obj,) = args
        self.check(obj, node)
        return tuple(getattr(obj, a) for a in self.attrs)

    def check(self, obj, node) -> None:
        """Refuse an object the loop cannot carry as it carries the template."""
        cls, name = type(self.template).__name__, self.name
        where = self.builder.loc(node)
        if type(obj) is not type(self.template):
            raise UnsupportedError(
                f"`{name}` holds a {cls} before this loop over a run-time count and a "
                f"{type(obj).__name__} at the end of its body: a loop carries one kind of "
                "value per name (as Numba); keep it a " + cls, where)
        fixed = {a: v for a, v in vars(self.template).items() if a not in self.attrs}
        held = vars(obj)
        for attr in (*self.attrs, *fixed):
            if attr not in held:
                raise UnsupportedError(f"`{name}` (a {cls}) has no attribute .{attr} at the "
                                       "end of this loop's body, which it had before the loop: "
                                       "a loop carries the same attributes each iteration",
                                       where)
        changed = [a for a in held if a not in self.attrs and (
            a not in fixed or not _same(held[a], fixed[a]))]
        if changed:
            raise UnsupportedError(
                f"`{name}` (a {cls}) is rebuilt in this loop over a run-time count with "
                f".{changed[0]} different from before the loop (a {type(held[changed[0]]).__name__}"
                "): the loop carries its numbers and arrays, and its other attributes must stay "
                "as they were (sizes, names, other objects): give it the same ones each "
                "iteration, or make it a number or an array", where)
        made = self.made.get(id(obj))
        if made is not None and any(held.get(a) is not v for a, v in made[1].items()):
            raise UnsupportedError(
                f"`{name}` (a {cls}) is rebound in this loop over a run-time count and its "
                "attributes are also set in place (`obj.attr = ...`): do one or the other "
                f"(`{name} = {cls}(...)` with the new values)", where)


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and not isinstance(a, np.ndarray) and bool(a == b)
    except Exception:  # noqa: BLE001 (a comparison Python cannot make: not the same)
        return False


class ObjectCarries:
    """Methods mixed into `build.Builder` through `build_loops.Loops`."""

    def object_carries(self, stmt) -> bool:
        """Build ``stmt`` as the loop over the attributes of the objects it rebinds (those
        seeded for it: `CarryObject`). Returns whether it did."""
        if getattr(stmt, "jitgrad_object_parts", False):
            return False
        seeded = self.seeds.objects.get(self.loop_key(stmt), ())
        names = sorted(n for n in seeded if is_user_object(self.env.get(n)))
        if not names:
            return False
        tag = f"@{self.gb.new_tag()}"
        splits, joins, parts = {}, {}, {}
        for n in names:
            template = self.env[n]
            attrs = [a for a, v in vars(template).items() if carried_attribute(v)]
            parts[n] = [f"%{n}_{a}{tag}" for a in attrs]
            for kind, join in (("split", False), ("join", True)):
                key = f"%{kind}_{n}{tag}"
                self.env[key] = _Parts(self, n, template, attrs, join)
                (joins if join else splits)[n] = key

        def load(name):
            return ast.Name(id=name, ctx=ast.Load())

        def split(n):
            targets = ast.Tuple(elts=[ast.Name(id=p, ctx=ast.Store()) for p in parts[n]],
                                ctx=ast.Store())
            return ast.Assign(targets=[targets], value=ast.Call(
                func=load(splits[n]), args=[load(n)], keywords=[]))

        def joined(n):
            return ast.Call(func=load(joins[n]), args=[load(p) for p in parts[n]], keywords=[])

        loop = self.with_parts(stmt, names, split, joined)
        loop.jitgrad_object_parts = True
        for s in [split(n) for n in names]:
            self.build_stmt(ast.fix_missing_locations(ast.copy_location(s, stmt)))
        for n in names:  # within the loop, the object is made from its parts
            self.env[n] = Undefined(f"`{n}` is an object whose attributes the loop carries")
        self.build_stmt(loop)
        for n in names:
            self.build_stmt(ast.fix_missing_locations(ast.copy_location(ast.Assign(
                targets=[ast.Name(id=n, ctx=ast.Store())], value=joined(n)), stmt)))
        return True


def merged_object(merge, name: str, vt, ve):
    """After an ``if`` on a run-time value, ``name`` holding an object of the user's class on
    each side (``me = rate(me, opp)`` on one, ``me = rate(me, opp, drawn=True)`` on the
    other): an object of that class whose numbers and arrays are merged as names are
    (``merge(name, a, b)``), its other attributes the same on both sides. None where the two
    are not such objects; an `Undefined` where they differ otherwise. The object is a new
    one, which the function cannot change in place (`Values.set_attribute_of`), so no other
    holder of either side's object can miss a change."""
    if not (is_user_object(vt) and is_user_object(ve) and type(vt) is type(ve)):
        return None
    at, ae = vars(vt), vars(ve)
    if set(at) != set(ae):
        return Undefined(f"`{name}` holds a {type(vt).__name__} with other attributes on each "
                         "branch")
    out = copy.copy(vt)
    for attr, a in at.items():
        b = ae[attr]
        if a is b:
            continue
        if carried_attribute(a) and carried_attribute(b):
            try:
                setattr(out, attr, merge(f"{name}_{attr}", a, b))
            except JitgradError as e:  # (ranks that differ: unreadable after, as before)
                return Undefined(f"`{name}` holds a {type(vt).__name__} whose .{attr} differs "
                                 f"in kind on the two branches: {e.message}")
        elif not _same(a, b):
            return Undefined(f"`{name}` holds a {type(vt).__name__} whose .{attr} differs on "
                             "the two branches (not a number or an array)")
    return out
