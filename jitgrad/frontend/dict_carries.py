"""A dict of numbers and arrays under keys known while building, changed by a loop that runs
at run time (climlab's ``self.state[name] = self.state[name] + tend * dt`` in a method a loop of
time steps calls; a local ``d["a"] = d["a"] * 0.9``): the loop carries each entry.

Takes, from `build_loops.Loops` and `build_values.Values`, a dict a loop changes: held by a
local name (`Loops.carry_parts`) or by attributes of objects made while building
(`Values.attribute_carries`; every attribute holding that one dict, as climlab's process and its
subprocess hold one ``state``). Guarantees: each entry is one carried variable; where the body
begins the holders hold one new dict of the entries' variables (of the dict's class), and after
the loop one dict of the carried values, so that every holder sees every change as Python's
would. A body that leaves the dict with other keys, entries other than real numbers and arrays,
or its holders holding different dicts, is refused naming the loop, never carried wrongly.
"""

from __future__ import annotations

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.build_ast import PeelLoop, is_atom_value
from jitgrad.lang import symbolic

CARRIED_AT_MOST = 64  # entries of one dict carried by a loop


def carried_dict(value) -> bool:
    """Whether a loop may carry ``value`` entry by entry: a dict of 1..64 real numbers and
    arrays under keys known while building."""
    return isinstance(value, dict) and 0 < len(value) <= CARRIED_AT_MOST and all(
        (is_atom_value(v) and not isinstance(v, symbolic.COMPLEX_TYPES)) or (
            isinstance(v, np.ndarray) and v.dtype.kind in "fiub") for v in value.values())


def grown(before: dict, end) -> bool:
    """Whether ``end`` is ``before`` given new keys (a loop's first iteration may be built
    apart: `PeelLoop`)."""
    return carried_dict(end) and list(end)[:len(before)] == list(before) and len(end) > len(
        before)


class DictGroup:
    """One dict carried by a loop: ``template`` (the dict before the loop), ``holders`` (the
    (object, attribute) pairs holding it; empty for a local name's) and ``names`` (key -> the
    internal name its entry is carried under)."""

    def __init__(self, template: dict, holders: list, names: dict):
        self.template, self.holders, self.names = template, holders, names

    def made(self, builder, values) -> dict:
        """A dict of the template's class holding ``values`` (in the template's key order)."""
        return builder.dict_like(self.template, dict(zip(self.template, values)))

    def hold(self, builder, env) -> dict:
        """Where the body begins: the holders hold one dict of the carried variables."""
        d = self.made(builder, [env[n] for n in self.names.values()])
        for obj, attr in self.holders:
            setattr(obj, attr, d)
        return d

    def end(self, end, what: str, where, peel=None) -> dict:
        """{name: entry} of ``end``, the dict at the end of the body; refused where it is not
        the carried one changed in its entries only. ``peel``: the key of a loop that may be
        built again with its first iteration apart (`PeelLoop`), where the body gave the dict
        new keys."""
        why = None
        if not isinstance(end, dict):
            why = f"a {type(end).__name__}"
        elif list(end) != list(self.template):
            new = [k for k in end if k not in self.template]
            if new and peel is not None and grown(self.template, end):
                raise PeelLoop(peel)
            why = f"given the key {new[0]!r}" if new else "with keys removed"
        elif not carried_dict(end):
            why = "holding values other than real numbers and arrays"
        if why is not None:
            raise UnsupportedError(
                f"{what}, a dict of numbers and arrays before this loop that runs at run time, "
                f"is {why} at the end of its body: a loop carries the same entries each "
                "iteration; set every key before the loop (`d[key] = np.zeros(n)`), or make it "
                "an array", where)
        return {self.names[k]: v for k, v in end.items()}

    def end_of_holders(self, what: str, where, peel=None) -> dict:
        """`end` of the dict the holders hold at the end of the body (one dict for all)."""
        held = [getattr(obj, attr) for obj, attr in self.holders]
        if any(d is not held[0] for d in held):
            raise UnsupportedError(
                f"{what} holds a dict that another attribute holds too before this loop, and "
                "the two hold different dicts at the end of its body: a loop carries one dict "
                "for both (keep them one dict, or copy it before the loop: `dict(d)`)", where)
        return self.end(held[0], what, where, peel)

    def after(self, builder, carried_values) -> dict:
        """After the loop: one dict of the carried values, which the holders hold."""
        d = self.made(builder, carried_values)
        for obj, attr in self.holders:
            setattr(obj, attr, d)
        return d


class DictPart:
    """An entry of a carried dict (`DictGroup`) under an internal name: ``key``."""

    def __init__(self, group: DictGroup, key):
        self.group, self.key = group, key


def attribute_groups(attributes: dict) -> list:
    """The `DictGroup`s among a loop's carried attributes ({name: (object, attribute) or
    `DictPart`}), each once."""
    groups = {}
    for a in attributes.values():
        if isinstance(a, DictPart):
            groups[id(a.group)] = a.group
    return list(groups.values())


def holding_attributes(made_objects: dict, value) -> list:
    """The (object, attribute) pairs among the objects made while building that hold ``value``."""
    return [(o, k) for o, _ in made_objects.values() if hasattr(o, "__dict__")
            for k, v in vars(o).items() if v is value]


def entry_value(builder, name: str, value, node):
    """A carried entry as the graph holds it: an array NumPy made while building (climlab's
    ``Field(Ts)``), a copy of its contents."""
    if isinstance(value, np.ndarray):
        return symbolic.record("copy", builder.constant_array(name, np.asarray(value), node))
    return value


def attribute_dict_parts(builder, attr, value, name: str, names: dict, seen: dict,
                         node) -> None:
    """Into ``names`` ({name: `DictPart`}) and the builder's environment: the entries of the
    dict ``value`` that an attribute ``attr`` holds, carried under ``name@key<k>``; a dict
    already carried for another holder (``seen``: id -> group) is carried once."""
    if id(value) in seen:
        return
    if builder.holders(value):
        raise UnsupportedError(
            f"the attribute .{attr}, a dict that a name (or an item of a list or dict) holds "
            "too, is changed by this loop that runs at run time: the loop carries the "
            "attribute's entries, which the other holder would not see; read the dict "
            f"through the attribute only (`obj.{attr}[key]`)", builder.loc(node))
    holders = holding_attributes(builder.made_objects, value)
    group = DictGroup(value, holders, {k: f"{name}@key{i}" for i, k in enumerate(value)})
    seen[id(value)] = group
    for k, n in group.names.items():
        names[n] = DictPart(group, k)
        builder.env[n] = entry_value(builder, f"{attr}_{k}", value[k], node)
