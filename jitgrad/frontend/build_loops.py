"""Building loops: ``for`` over ranges and sequences, ``while``, and what they carry.

Part of `build.Builder` (a mixin). Guarantees: a loop's carried names (including arrays a
callee may write into, and aliases of one buffer) are explicit `ir.Carry` values; an exit
(``break``, ``return``) becomes a flag that guards the rest of the body; reading an array
version that a loop made stale is refused.
"""

from __future__ import annotations

import ast
import builtins
import types as pytypes

import numpy as np

from jitgrad.core import ops
from jitgrad.core.errors import ShapeError, UnsupportedError, instead
from jitgrad.core.ir import (
    Const,
    Eqn,
    For,
    Var,
    While,
    dims_of,
    walk,
)
from jitgrad.core.types import INT, Type
from jitgrad.frontend.build_ast import (
    BREAK,
    CONTINUE,
    NO_RETURN,
    RAISED,
    RETURNED,
    RETVAL,
    CarryObject,
    Iterator,
    PeelLoop,
    RunTimeRange,
    Undefined,
    UnrollLoop,
    assigned_names,
    base,
    call_arguments,
    is_atom_value,
    subscript_targets,
)
from jitgrad.frontend.build_builtins import BUILTINS, itertools_made
from jitgrad.frontend.build_carries import Carries
from jitgrad.frontend.build_loop_headers import LoopHeaders
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.build_views import view_bases
from jitgrad.frontend.desugar_lists import UNROLLED_AT_MOST
from jitgrad.frontend.dict_carries import (
    DictGroup,
    DictPart,
    attribute_groups,
    carried_dict,
    entry_value,
    holding_attributes,
)
from jitgrad.frontend.object_carries import ObjectCarries
from jitgrad.lang import numpy_api, symbolic
from jitgrad.lang.symbolic import Sym


def held_ids(values) -> set[int]:
    """The ids of the lists, tuples and dicts known while building among ``values`` and
    inside them: the containers that exist before a loop (`Containers.change`)."""
    ids, todo = set(), list(values)
    while todo:
        v = todo.pop()
        if isinstance(v, (tuple, list, dict)) and id(v) not in ids:
            ids.add(id(v))
            todo.extend(v.values() if isinstance(v, dict) else v)
    return ids

class Loops(LoopHeaders, ObjectCarries, Carries):
    """The `Builder`'s loops: methods mixed into `build.Builder`."""

    # -- loops ---------------------------------------------------------------------------

    def stmt_For(self, stmt):
        if self.object_carries(stmt) or self.complex_carries(stmt):
            return
        listed = getattr(stmt, "jitgrad_list_of", None)  # (`desugar_lists.unrolled_alternative`)
        stmt = self.as_range_loop(stmt)
        it = stmt.iter
        call = it if isinstance(it, ast.Call) else None
        fn = self.expr(call.func) if call is not None else None
        if fn is range and not isinstance(stmt.target, ast.Name):
            raise UnsupportedError("the loop variable of a range must be a single name",
                                   self.loc(stmt))
        if fn is range:
            if call.keywords or not 1 <= len(call.args) <= 3:
                raise UnsupportedError("range() takes 1 to 3 positional arguments",
                                       self.loc(call))
            bounds = [self.expr(a) for a in call.args]
            for b, a in zip(bounds, call.args):
                t = self.gb.atom(b).type if is_atom_value(b) else None
                if t is None or t.kind not in "ib" or t.ndim:
                    raise UnsupportedError("range() bounds must be integers", self.loc(a))
            start, stop, step = {1: [0, *bounds, 1], 2: [*bounds, 1], 3: bounds}[len(bounds)]
            if isinstance(step, int) and step == 0:
                raise ShapeError("range() step must not be zero", self.loc(call))
            stop = self.assumed_stop(stmt, start, stop, step)
            if all(type(b) is int for b in (start, stop, step)) and len(
                    range(start, stop, step)) >= 2 and peelable(stmt):
                if self.loop_key(stmt) in self.seeds.peeled:  # (`PeelLoop`): its first
                    self.build_unrolled(stmt, [start])  # iteration, then the others
                    start += step
                else:
                    self.__dict__.setdefault("peelable", set()).add(self.loop_key(stmt))
            if all(type(b) is int for b in (start, stop, step)) and \
                    len(range(start, stop, step)) <= UNROLLED_AT_MOST:
                if self.loop_key(stmt) in self.seeds.unrolled:  # its arrays change shape
                    self.build_unrolled(stmt, list(range(start, stop, step)))
                    return
                self.unrollable.add(self.loop_key(stmt))
            if listed is not None:  # a list of others over a count made of the arguments'
                known = [self.size_decided(b) for b in (start, stop, step)]  # sizes: unrolled
                if all(type(b) is int for b in known) and known[2] and len(  # for its value
                        range(*known)) <= UNROLLED_AT_MOST:  # in the call (`size_decided`)
                    self.build_unrolled(stmt, list(range(*known)))
                    return
            self.refuse_list_of_others(listed, stmt)
            self.build_for(stmt, stmt.target.id, start, stop, step, None)
            return
        seq = self.expr(it)
        if isinstance(seq, Iterator):  # a generator's items (`desugar_generators`)
            items = seq.rest()
            if items is None:
                raise UnsupportedError(f"a second for loop over the generator {seq.name} "
                                       "(which items remain depends on where the first "
                                       "stopped): make the generator again", self.loc(it))
            seq = items
        if isinstance(seq, RunTimeRange):  # `cmps = range(len(xs))`, then `for i in cmps`
            if not isinstance(stmt.target, ast.Name):
                raise UnsupportedError("the loop variable of a range must be a single name",
                                       self.loc(stmt))
            self.refuse_list_of_others(listed, stmt)
            self.build_for(stmt, stmt.target.id, seq.start, seq.stop, seq.step, None)
            return
        if isinstance(seq, Sym) and seq.ndim >= 1:
            rows = dims_of(seq.atom)[0]
            if listed is not None and type(rows) is int and rows <= UNROLLED_AT_MOST:
                # a list of arrays over rows counted while building (colour's
                # `[x[..., None] for x in np.asarray([X, Y, Z])]`): unrolled, a list of them
                self.build_unrolled(stmt, [symbolic.record("getitem", seq, k, index_spec=("i",))
                                           for k in range(rows)])
                return
            if not isinstance(stmt.target, ast.Name):  # for a, b in rows: each row unpacked
                row = ast.Name(id=f"%row@{self.gb.new_tag()}", ctx=ast.Store())
                unpack = ast.copy_location(ast.Assign(targets=[stmt.target], value=ast.Name(
                    id=row.id, ctx=ast.Load())), stmt)
                stmt = ast.fix_missing_locations(ast.copy_location(ast.For(
                    target=row, iter=stmt.iter, body=[unpack, *stmt.body], orelse=[],
                    type_comment=None), stmt))
            self.refuse_list_of_others(listed, stmt)
            self.build_for(stmt, "%i", 0, seq.shape[0], 1, (stmt.target.id, seq))
            return
        if isinstance(seq, (dict, type({}.items()), type({}.keys()), type({}.values()))) or \
                itertools_made(seq):
            seq = tuple(seq)  # a dict known while building: its keys, items or values; what
            # itertools made of values known then (`product(levels, repeat=2)`)
        if isinstance(seq, (tuple, list)):  # a Python tuple: unrolled
            self.build_unrolled(stmt, list(seq))
            return
        raise UnsupportedError("a for loop must run over range(...) or a 1-D array",
                               self.loc(it))

    def assumed_stop(self, stmt, start, stop, step):
        """``stop`` of ``range(start, stop, step)``; where it is made of the arguments' sizes
        alone (``len(x)``, ``x.shape[0] - 1``), ``start`` and ``step`` literals, the loop runs
        at most 16 times in the example call and is to be unrolled (`unroll_for_name`), its
        value in that call, decided as `size_decided` decides (checked first thing, built
        again for another). Else ``stop`` itself."""
        if not (isinstance(stop, Sym) and not stop.ndim and type(start) is int
                and type(step) is int and self.gb.assume_sizes):
            return stop
        n = self.gb.size_value(self.gb.atom(stop, check=False))
        if n is None or len(range(start, int(n), step)) > UNROLLED_AT_MOST:
            return stop
        key = self.loop_key(stmt)
        if key not in self.seeds.unrolled:
            self.assumable[key] = int(n)
            return stop
        return self.size_decided(stop)

    def refuse_list_of_others(self, name, stmt) -> None:
        """A loop appending to the list ``name`` tuples, or arrays of shapes known only inside
        it, runs over run-time values: refused (such a list is Python's, made while
        building, and so only in a loop unrolled then)."""
        use = getattr(getattr(stmt, "jitgrad_list_made", None), "jitgrad_python_list", None)
        if name is not None and use:
            raise UnsupportedError(
                f"the list `{name}` {use}: only Python's list is read so, made while building "
                "from a loop unrolled then, over a tuple or list known while building or over "
                f"`range` of at most 16 constant bounds; this loop runs over values known only "
                f"at run time; {instead('list')}", self.loc(stmt))
        if name is not None:
            raise UnsupportedError(
                f"appending to `{name}` tuples, or arrays whose shape is known only inside the "
                "loop, in a loop over values known only at run time (a loop over a tuple or "
                "list known while building, or over `range` of at most 16 constant bounds, is "
                f"unrolled and may); {instead('list of arrays')}", self.loc(stmt))

    def build_unrolled(self, stmt, items: list) -> None:
        """``for`` over a tuple or list known while building: the body once per item, in
        order. A ``continue`` ends its own copy of the body; a ``break`` or ``return`` skips
        the copies after it (known only at run time, they run under ``if not (break or
        return)``). The enclosing loop's break and continue flags are set aside meanwhile, so
        that a jump inside never reaches it."""
        outer = {n: self.env.pop(n) for n in (BREAK, CONTINUE) if n in self.env}
        saved_in_unrolled = self.in_unrolled_loop
        self.in_unrolled_loop = True
        try:
            self.unroll(stmt, items)
        finally:
            self.in_unrolled_loop = saved_in_unrolled
        for n in (BREAK, CONTINUE):
            self.env.pop(n, None)
        self.env.update(outer)

    def unroll(self, stmt, items: list) -> None:
        """`build_unrolled`'s copies of the body, from ``items[0]`` on."""
        for k, item in enumerate(items):
            self.env[BREAK] = self.env[CONTINUE] = False
            self.assign(stmt.target, item)
            self.build_stmts(stmt.body)
            if self.env.get(RAISED):
                return
            stop = False  # whether the copies after this one are skipped
            for n in (BREAK, RETURNED):
                v = self.env.get(n, False)
                if v is True:
                    return
                if v is not False:
                    stop = v if stop is False else symbolic.record("logical_or", stop, v)
            rest = items[k + 1:]
            if stop is not False and rest:
                self.gb.loc = self.src.loc(stmt)
                self.build_if(symbolic.record("logical_not", stop),
                              lambda rest=rest: self.unroll(stmt, rest), lambda: None, stmt)
                return

    def loop_carries(self, body_stmts, extra=(), stmt=None):
        """The names a loop carries: those it assigns, the arrays it passes to a function (which
        may write into them), and every other name for an array among those (an alias sees
        the writes). A loop of a few iterations known while building (``stmt``'s key among
        `unrollable`) that reassigns a value known while building (a list of slices, a tuple)
        is unrolled instead (`UnrollLoop`): each copy of the body sees that iteration's value."""
        if stmt is not None:  # the attributes it carries, under names (`attribute_carries`)
            extra = {*extra, *self.attribute_carries(stmt)}
        passed = {n for n in call_arguments(body_stmts, self.is_library_call)
                  if isinstance(self.env.get(n), Sym) and self.env[n].ndim}
        assigned = assigned_names(body_stmts)
        rebound = {n.id for s in body_stmts for n in ast.walk(s)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        for name in sorted(subscript_targets(body_stmts) - rebound):
            v = self.env.get(name)  # a reshape the body writes into: its copy, made here
            if isinstance(v, Sym) and isinstance(v.atom, Var) and v.atom in self.gb.views and (
                    v.atom not in self.gb.view_of and (self.can_detach(v.atom)
                                                       or v.atom in self.gb.fresh_if_ran)):
                self.gb.check_writable(v.atom, name)  # an argument's: copied on entry
                self.detach_view(name, None, v.atom)
        names = assigned | passed | set(extra)
        names |= {n for n in view_bases(body_stmts, subscript_targets(body_stmts) | passed)
                  if not _numbers_only(self.env.get(n))}  # (`v = p["Vr"]` reads a number)
        arrays = {v.atom for n, v in self.env.items()
                  if n in names and isinstance(v, Sym) and v.ndim}
        for v in list(arrays):  # a view written through: its array is written (`Views`)
            if isinstance(v, Var) and v in self.gb.view_of:
                root = self.view_root(v)
                arrays.add(root)
                if not any(isinstance(u, Sym) and u.atom is root for u in self.env.values()):
                    self.env[f"%array{self.gb.new_tag()}"] = self.gb.sym(root)  # unnamed
        names |= {n for n, v in self.env.items() if isinstance(v, Sym) and v.atom in arrays}
        carried = []
        for name in sorted(names):
            if name not in self.env:
                continue
            v = self.env[name]
            if isinstance(v, Undefined):
                continue
            if isinstance(v, symbolic.COMPLEX_TYPES):
                raise UnsupportedError(f"`{base(name)}` (a complex number) is reassigned inside "
                                       "a loop; a loop carries real values: carry its real and "
                                       f"imaginary parts (`{base(name)}_re, {base(name)}_im = "
                                       f"{base(name)}.real, {base(name)}.imag` before the loop "
                                       "and at the end of its body, and "
                                       f"`{base(name)} = complex({base(name)}_re, "
                                       f"{base(name)}_im)` where the body begins)", self.gb.loc)
            if is_user_object(v) and name not in rebound:
                continue  # `obj.attr = ...`: its attributes are carried (`attribute_carries`)
            if not is_atom_value(v) and stmt is not None and \
                    self.loop_key(stmt) in self.unrollable:
                raise UnrollLoop(self.loop_key(stmt))
            if is_user_object(v) and stmt is not None and name not in self.seeds.objects.get(
                    self.loop_key(stmt), ()):
                raise CarryObject(self.loop_key(stmt), name)  # its attributes carried
            if _parts_carried(v) and name in rebound:
                carried += self.carry_parts(name, v)  # `u = [u[0] + dt * k[0], ...]`
                continue
            if carried_dict(v) and self.holders(v) == 1 and not holding_attributes(
                    self.made_objects, v):  # `d["a"] = d["a"] * 0.9`, d its only holder
                carried += self.carry_parts(name, v)
                continue
            if isinstance(v, dict) and stmt is not None and self.peels(stmt):
                raise PeelLoop(self.loop_key(stmt))  # `d = {}`, then `d["a"] = v`
            if not is_atom_value(v):
                what = "dict" if isinstance(v, dict) else "set" if isinstance(
                    v, frozenset) else "list or tuple" if isinstance(v, tuple) else None
                hint = "" if what is None else (
                    f": jitgrad holds a {what} whose length is known while building as "
                    "separate values, which a loop cannot change from one iteration to the "
                    "next; make it an array before the loop (`acc = np.zeros(n)`, "
                    "`acc = np.array([0.0, 0.0])`, a dict with keys 0..n-1: `d = np.zeros(n)`) "
                    "and write into it (`acc[i] = v`), or append to a list in the loop "
                    "(`out = []`, then `out.append(v)`)")
                raise UnsupportedError(f"`{base(name)}` (a {what or type(v).__name__}) is "
                                       f"reassigned inside a loop{hint}", self.gb.loc)
            carried.append(name)
        return carried

    def carry_parts(self, name: str, value: tuple) -> list:
        """A list or tuple of numbers and arrays the loop rebinds to another of the same length
        (an integrator's state, ``u = [ui + dt * ki for ui, ki in zip(u, k)]``): carried as one
        variable per item, under internal names (``%u@part0``) the body's list is made of
        (`build_loop`) and the list is made of again after the loop
        (`attributes_after_loop`)."""
        names = []
        if isinstance(value, dict):  # a dict's entries (`dict_carries`)
            self.__dict__.setdefault("part_dicts", {})[name] = DictGroup(value, [], {
                key: f"%{name}@part{k}" for k, key in enumerate(value)})
        for k, item in enumerate(value.values() if isinstance(value, dict) else value):
            part = f"%{name}@part{k}"
            self.env[part] = entry_value(self, f"{base(name)}_{k}", item, self.gb.loc) if \
                isinstance(value, dict) else item
            self.__dict__.setdefault("part_names", {})[part] = (name, k)
            names.append(part)
        return names

    def peels(self, stmt) -> bool:
        """Whether the loop ``stmt`` may be built again with its first iteration apart
        (`PeelLoop`): a range of at least two iterations known while building, no exit."""
        key = self.loop_key(stmt)
        return key in getattr(self, "peelable", ()) and key not in self.seeds.peeled

    def parts_value(self, name: str, items: list):
        """The value a carried list or dict ``name`` (`carry_parts`) holds of its parts'
        ``items``: a tuple, or a dict of the dict's keys and class."""
        group = getattr(self, "part_dicts", {}).get(name)
        if group is not None and len(group.names) == len(items):
            return group.made(self, items)
        return tuple(items)

    def end_parts(self, name: str, names: list, result: dict, stmt) -> None:
        """The items of the carried list ``name`` at the end of the body (``result``'s), each
        its part's value there. A list comprehension of numbers there is an array of them
        (`desugar_lists`): its entries are the items. A body that leaves ``name`` a list of
        another length, or of other than numbers and arrays, is refused (a loop carries a
        fixed number of values)."""
        env_end = result["env_end"]
        end = env_end.get(name)
        group = getattr(self, "part_dicts", {}).get(name)
        if group is not None and group.names == dict(zip(group.template, names)):
            env_end.update(group.end(end, f"`{base(name)}`", self.src.loc(stmt),
                                     self.loop_key(stmt) if self.peels(stmt) else None))
            return
        rows = self.row_shape(end) if isinstance(end, Sym) and end.ndim else None
        if rows and rows[0] == len(names):
            saved, self.gb.block = self.gb.block, result["body"]
            try:
                end = tuple(symbolic.record("getitem", end, k, index_spec=("i",))
                            for k in range(len(names)))
            finally:
                self.gb.block = saved
        if not (isinstance(end, tuple) and len(end) == len(names) and _parts_carried(end)):
            what = f"of {len(end)} items" if isinstance(end, tuple) else \
                f"a {type(end).__name__}"
            raise UnsupportedError(
                f"`{base(name)}`, a list or tuple of {len(names)} numbers or arrays before the "
                f"loop, is {what} at the end of its body: a loop carries a fixed number of "
                "values; make it an array before the loop (`u = np.zeros(n)`) and write into "
                "it (`u[i] = v`), or keep its length", self.src.loc(stmt))
        for n, item in zip(names, end):
            env_end[n] = item

    def is_library_call(self, func) -> bool:
        """Whether ``func`` (a call's function node) names a NumPy, math or builtin function
        or an array method: resolved without building anything, so names and attributes of
        modules only. Anything else may be the user's function, which may write."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = self.env.get(func.value.id, self.src.fn.__globals__.get(func.value.id))
            if isinstance(base, Sym):
                return True  # an array method: x.sum(), x.copy()
            if isinstance(base, pytypes.ModuleType):
                fn = getattr(base, func.attr, None)
                return fn in symbolic.NUMPY or fn in numpy_api.MATH
            return False
        if isinstance(func, ast.Name) and func.id not in self.env:
            fn = self.src.fn.__globals__.get(func.id, getattr(builtins, func.id, None))
            return fn in symbolic.NUMPY or fn in numpy_api.MATH or fn in BUILTINS or fn is range
        return False

    def build_loop(self, stmt, carried, make_body_env, build_inside):
        """Build a loop body until the carried types settle; return what `build_inside` made.

        Takes the loop statement, the names it carries (`loop_carries`), ``make_body_env(env)``
        (binds the loop's own names in the body's environment) and ``build_inside(env)`` (builds
        the body in ``env``; returns a dict with "body", "env_end" and, for a ``while``,
        "cond_block"). The body is built again, up to six times, while an attempt finds that a
        carried kind widens or that carried names share or part arrays; an abandoned attempt
        leaves no writes behind. Returns (the carries the loop keeps, each carried name's
        variable in the body, what the last `build_inside` returned)."""
        kinds = {n: self.gb.atom(self.env[n], check=False).type for n in carried}
        attributes = {n: self.attribute_names[n] for n in carried
                      if n in getattr(self, "attribute_names", {})}
        parts = {n: self.part_names[n] for n in carried if n in getattr(self, "part_names", {})}
        before = self.attribute_state()
        set_inside = {}
        made_at = [0]  # where the last attempt at the body began in ``gb.made``

        def body_env(env):  # the carried attributes: the object holds the carried variable
            make_body_env(env)
            for n, a in attributes.items():
                if not isinstance(a, DictPart):
                    setattr(a[0], a[1], env[n])
            for group in attribute_groups(attributes):  # a carried dict: of its entries
                group.hold(self, env)
            for name, names in _by_list(parts).items():  # a carried list: of its parts
                env[name] = self.parts_value(name, [env[n] for n in names])

        def inside(env):  # and the body's last value of it is the name's
            made_at[0] = len(self.gb.made)
            try:
                result = build_inside(env)
                for n, a in attributes.items():
                    if not isinstance(a, DictPart):
                        result["env_end"][n] = getattr(a[0], a[1])
                for group in attribute_groups(attributes):
                    holder = group.holders[0]
                    result["env_end"].update(group.end_of_holders(
                        f"the attribute .{holder[1]} of a {type(holder[0]).__name__}",
                        self.src.loc(stmt), self.loop_key(stmt) if self.peels(stmt) else None))
                for name, names in _by_list(parts).items():
                    self.end_parts(name, names, result, stmt)
                set_inside.update(self.check_attributes_carried(stmt, before, attributes))
            finally:
                self.restore_attributes(before)
            return result

        apart: set[str] = set()  # names for one array that the body rebinds and never writes
        memory_before = self.gb.memory_state()
        takes_over: dict[str, str] = {}  # n -> m: n holds m's array from the 2nd iteration on
        unfollowed: set[str] = set()  # names whose view or newer version the body may not use
        followed_outside = self.gb.followed  # an enclosing loop's body checks these after it
        for _attempt in range(6):
            self.gb.restore_memory_state(memory_before)  # an abandoned attempt wrote nothing
            carry_vars, writes_before = self.new_carry_vars(
                carried, kinds, apart, unfollowed, self.seeds.get(self.loop_key(stmt), {}))
            self.gb.followed = set()
            self.note_taken_over_params(carry_vars, takes_over)
            inner_env = dict(self.env)
            for n, v in carry_vars.items():
                inner_env[n] = self.gb.sym(v)
            body_env(inner_env)
            result = inside(inner_env)
            env_end = result["env_end"]
            widened = self.widen_carried_kinds(stmt, carried, kinds, env_end)
            swapped = self.find_take_overs(carried, carry_vars, kinds, env_end, takes_over)
            parted = self.find_carries_apart(carried, carry_vars, env_end, writes_before, apart)
            blocks = [result["body"]] + ([result["cond_block"]] if "cond_block" in result
                                         else [])
            lent = self.find_wrongly_followed(carried, carry_vars, env_end, blocks, unfollowed)
            if not (widened or swapped or parted or lent):
                break
        self.gb.followed = followed_outside | self.gb.followed
        self.unread_carries = set()  # (`check_no_joined_carries`)
        self.check_no_joined_carries(carried, carry_vars, writes_before, env_end, stmt)
        result["unread"] = self.unread_carries
        out_of_date = self.check_no_stale_reads(result, carry_vars, stmt)
        for n in carried:  # the versions lent to the body (`new_carry_vars`), taken back
            init = self.env[n].atom if isinstance(self.env[n], Sym) else None
            if self.gb.latest.get(init) is carry_vars[n]:  # before the body's are forgotten
                del self.gb.latest[init]
        self.gb.forget_versions_in(blocks)
        for v in carry_vars.values():
            if v not in out_of_date:
                self.gb.restamp(v)  # after the loop it holds the current contents
        result["fresh"] = self.fresh_each_iteration(carried, carry_vars, env_end, made_at[0])
        carries = self.make_carries(stmt, carried, carry_vars, kinds, env_end, result["body"],
                                    blocks)
        self.share_written_storage(carries)
        result["attributes"] = (attributes, before, set_inside)
        result["parts"] = parts
        return self.drop_unchanged_carries(carries, carry_vars, blocks), carry_vars, result

    def fresh_each_iteration(self, carried, carry_vars, env_end, made_at: int) -> list:
        """The carried arrays the body binds to memory of its own each iteration (``sigma =
        np.hstack((sigma, col))``): all that shares the memory of the value at the end of the
        body was made in the body. After a loop that ran, such a name holds none of the memory
        it held before the loop; after one that ran no iteration it still holds it
        (`fresh_if_ran`)."""
        here = set(self.gb.made[made_at:])
        out = []
        for n in carried:
            end = env_end.get(n)
            if not (isinstance(end, Sym) and end.ndim and isinstance(end.atom, Var)):
                continue
            if self.gb._find(end.atom) is self.gb._find(carry_vars[n]):
                continue
            if all(u in here for u in self.gb.memory_class(end.atom)):
                out.append(n)
        return out

    def fresh_if_ran(self, result, carry_vars, trips, stmt) -> None:
        """After the loop: its arrays fresh on each iteration (`fresh_each_iteration`) are
        noted with the loop's count of iterations, so that a write into one that the builder
        cannot follow otherwise (its memory was an array made before the loop, or a view of
        one: `Views.detach_view`) checks at run time that the loop ran (else it raises, where
        Python would have written into that earlier array)."""
        for n in result["fresh"]:
            self.gb.fresh_if_ran[carry_vars[n]] = (trips, self.src.loc(stmt), base(n))

    def attributes_after_loop(self, result, carry_vars, ran: bool = True) -> None:
        """After a loop: each attribute it carries holds the carried variable (as a name
        does), taken out of the environment; one set only inside the loop, which the object
        did not have before it, is undefined after it. ``ran`` False: a loop that never runs
        (its condition false while building) leaves the attributes as they were."""
        for name in result["unread"] if ran else ():
            self.env[name] = Undefined(
                f"`{base(name)}` is rebound at the start of each iteration of the loop before "
                "it to an array the loop also names otherwise and writes into in place, which "
                "jitgrad follows inside the loop only: read it inside the loop, or assign it "
                "a copy there (`.copy()` of the value)")
        for name, names in _by_list(result["parts"]).items():  # a carried list: its parts'
            parts = [self.env.pop(n) for n in names]  # variables after the loop
            if ran:
                self.env[name] = self.parts_value(name, parts)
        attributes, before, set_inside = result["attributes"]
        if not ran:
            self.restore_attributes(before)
        for n, a in attributes.items():
            self.env.pop(n, None)
            if ran and not isinstance(a, DictPart):
                setattr(a[0], a[1], self.gb.sym(carry_vars[n]))
        for group in attribute_groups(attributes) if ran else ():
            group.after(self, [self.gb.sym(carry_vars[n]) for n in group.names.values()])
        if ran:
            for (_, attr), obj in set_inside.items():
                setattr(obj, attr, Undefined(
                    f"the attribute .{attr} is set only inside a loop that runs at run time, "
                    "and the object had none before it: set it before the loop too"))

    def build_for(self, stmt, target, start, stop, step, over):
        self.seed_names(stmt)
        flags = self.loop_flags(stmt.body)
        carried = self.loop_carries(stmt.body, flags, stmt)
        index = self.gb.new_var(INT, base(target) if target != "%i" else "_i")
        saved_in_loop = self.in_loop

        def body_env(env):
            env[target] = self.gb.sym(index)
            env[BREAK] = False
            env[CONTINUE] = False

        frames = []  # the draws of each attempt at the body (`draws.Recorder.loop`)

        def inside(env):
            def run():
                if over is not None:
                    name, seq = over
                    self.assign(ast.Name(id=name), symbolic.record(
                        "getitem", seq, self.gb.sym(index), index_spec=("i",)))
                with self.draws.loop(index, start, stop, step, self.src.loc(stmt)) as frame:
                    frames.append(frame)
                    self.build_stmts(stmt.body)
            self.in_loop, saved_made = True, self.loop_made
            self.loop_made = len(self.gb.made)  # what is made from here on: this iteration's
            try:
                body, env_end = self.in_block(run, env)
            finally:
                self.in_loop, self.loop_made = saved_in_loop, saved_made
            self.refuse_raise_on_every_path(env_end, stmt, "iteration of this loop")
            return {"body": body, "env_end": env_end}

        self.gb.loc = self.src.loc(stmt)
        self.loops_building.append(stmt)
        self.held_before_loop.append(held_ids([*self.env.values(), *(
            vars(obj) for obj, _ in self.made_objects.values())]))
        try:
            carries, carry_vars, result = self.build_loop(stmt, carried, body_env, inside)
        finally:
            self.loops_building.pop()
            self.held_before_loop.pop()
        exit_flag = self.exit_flag(result)
        self.draws.attach(frames[-1], exit_flag, self.src.loc(stmt))
        trips = self.gb.new_var(INT, "_trips")
        # A body that may raise (a raise, a run-time assert) runs as `range`: Numba cannot
        # raise from a parallel loop's threads.
        raises = any(isinstance(t, Eqn) and ops.flags(t.prim).raises
                     for t in walk(result["body"]))
        loop = For(index, self.gb.atom(start), self.gb.atom(stop), self.gb.atom(step),
                   result["body"], carries, trips, exit_flag, self.src.loc(stmt),
                   parallel=getattr(stmt, "jitgrad_prange", False) and not raises)
        self.gb.block.stmts.append(loop)
        self.after_loop(stmt, result["env_end"], carried, carry_vars)
        self.attributes_after_loop(result, carry_vars)
        self.fresh_if_ran(result, carry_vars, trips, stmt)

    def loop_flags(self, body):
        if not any(isinstance(n, ast.Return) for s in body for n in ast.walk(s)):
            return set()
        if self.env.get(RETVAL) is NO_RETURN:
            self.env[RETVAL] = 0.0  # a loop carries a number (its returns return numbers)
        return {RETURNED, RETVAL}

    def exit_flag(self, result):
        env_end = result["env_end"]
        flag = False
        for n in (BREAK, RETURNED):
            v = env_end.get(n, False)
            if v is True:
                flag = True
            elif v is not False and flag is not True:
                saved = self.gb.block
                self.gb.block = result["body"]
                flag = v if flag is False else symbolic.record("logical_or", flag, v)
                self.gb.block = saved
        if flag is False:
            return None
        if flag is True:
            return Const(True)
        return flag.atom

    def after_loop(self, stmt, env_end, carried, carry_vars):
        for name in env_end:
            if name in (BREAK, CONTINUE):
                continue
            if name in carry_vars:
                self.env[name] = self.gb.sym(carry_vars[name])
            elif name not in self.env:
                v = env_end[name]
                seed = None
                if isinstance(v, Undefined) and not name.startswith("%") and \
                        v.like is not None and is_atom_value(v.like):
                    # an array set on some paths only (a branch before a `break`): seeded
                    # as zeros of its shape, the loop carries it
                    t = self.gb.atom(v.like, check=False).type
                    rows = self.row_shape(v.like)
                    seed = (self.loop_key(stmt), (t, (0,) * t.ndim if rows is None else rows))
                elif isinstance(v, Undefined) and not name.startswith("%"):
                    # set on some paths only (a branch before a `break`): seeded as a number,
                    # the loop carries it (an array there is refused as a change of rank)
                    seed = (self.loop_key(stmt), (Type("f", 0), ()))
                elif is_atom_value(v) and not name.startswith("%"):
                    t = self.gb.atom(v, check=False).type
                    rows = self.row_shape(v) if t.ndim else ()
                    # (an array whose shape is known only in the loop starts empty: the loop
                    # carries it with sizes of its own, and it is read only if the loop ran)
                    seed = (self.loop_key(stmt), (t, (0,) * t.ndim if rows is None else rows))
                self.env[name] = Undefined(f"`{name}` is only defined inside a loop", seed)

    def loop_key(self, stmt) -> tuple:
        loc = self.src.loc(stmt)
        return (loc.filename, loc.lineno, loc.col)

    def seed_names(self, stmt) -> None:
        """The numbers and arrays assigned only inside this loop and read after it, or read in an iteration after the one that sets them
        (`ReadAfterLoop`), defined before it as zeros of their type: where the loop runs no
        iteration they hold zero (where Python would raise UnboundLocalError)."""
        for name, seed in self.seeds.get(self.loop_key(stmt), {}).items():
            if name not in self.env or isinstance(self.env[name], Undefined):
                type_, rows = seed if isinstance(seed, tuple) else (seed, ())
                if not type_.ndim:
                    self.env[name] = {"f": 0.0, "i": 0, "b": False}[type_.kind]
                    continue
                self.gb.loc = self.src.loc(stmt)
                self.env[name] = symbolic.NUMPY[np.zeros](self.dims_of_rows(rows), dtype={
                    "f": np.float64, "i": np.int64, "b": np.bool_}[type_.kind])

    def stmt_While(self, stmt):
        if self.object_carries(stmt) or self.complex_carries(stmt):
            return
        self.seed_names(stmt)
        flags = self.loop_flags(stmt.body)
        carried = self.loop_carries(stmt.body, flags, stmt)
        saved_in_loop = self.in_loop

        def body_env(env):
            env[BREAK] = False
            env[CONTINUE] = False

        def inside(env):
            holder = {}

            def cond_fn():
                holder["cond"] = self.condition(stmt.test)
            with self.draws.run_time("a while loop", self.src.loc(stmt)):
                cond_block, env_c = self.in_block(cond_fn, env)
                self.in_loop, saved_made = True, self.loop_made
                self.loop_made = len(self.gb.made)  # (as in `build_for`)
                try:
                    body, env_end = self.in_block(lambda: self.build_stmts(stmt.body), env_c)
                finally:
                    self.in_loop, self.loop_made = saved_in_loop, saved_made
            self.refuse_raise_on_every_path(env_end, stmt, "iteration of this loop")
            return {"cond_block": cond_block, "cond": holder["cond"], "body": body,
                    "env_end": env_end}

        self.gb.loc = self.src.loc(stmt)
        self.loops_building.append(stmt)
        self.held_before_loop.append(held_ids([*self.env.values(), *(
            vars(obj) for obj, _ in self.made_objects.values())]))
        try:
            carries, carry_vars, result = self.build_loop(stmt, carried, body_env, inside)
        finally:
            self.loops_building.pop()
            self.held_before_loop.pop()
        cond = result["cond"]
        if cond is False:
            self.attributes_after_loop(result, carry_vars, ran=False)
            return  # the loop never runs
        exit_flag = self.exit_flag(result)
        trips = self.gb.new_var(INT, "_trips")
        loop = While(result["cond_block"], self.gb.atom(cond), result["body"], carries, trips,
                     self.src.loc(stmt), exit_flag)
        self.gb.block.stmts.append(loop)
        self.after_loop(stmt, result["env_end"], carried, carry_vars)
        self.attributes_after_loop(result, carry_vars)
        self.fresh_if_ran(result, carry_vars, trips, stmt)


def peelable(stmt) -> bool:
    """Whether a ``for`` loop's first iteration may be built before it (`PeelLoop`): no
    ``break``, ``return`` or ``else`` (the iterations after the first always run)."""
    return not stmt.orelse and not any(isinstance(n, (ast.Break, ast.Return, ast.Yield))
                                       for s in stmt.body for n in ast.walk(s))


def _parts_carried(value) -> bool:
    """Whether ``value`` is a list or tuple (jitgrad holds both as tuples) of a few numbers and
    arrays: a loop that rebinds it may carry each item (`Loops.carry_parts`)."""
    return isinstance(value, tuple) and 0 < len(value) <= 64 and all(
        is_atom_value(v) and not isinstance(v, symbolic.COMPLEX_TYPES) for v in value)


def _by_list(parts: dict) -> dict:
    """{list name: its parts' internal names in order} of `Loops.carry_parts`' {part: (name, k)}."""
    out: dict = {}
    for part, (name, k) in sorted(parts.items(), key=lambda item: item[1]):
        out.setdefault(name, []).append(part)
    return out


def _numbers_only(value) -> bool:
    """Whether ``value`` is a dict or a tuple of numbers (known while building or not): an
    entry read from it is a number, never a view a loop could write through."""
    items = value.values() if isinstance(value, dict) else value if isinstance(
        value, tuple) else None
    return items is not None and all(
        isinstance(v, (int, float, bool)) or (isinstance(v, Sym) and not v.ndim) for v in items)
