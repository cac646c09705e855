"""What a loop carries: the variables of its carried names, and the checks on them.

Part of `build.Builder` (a mixin, through `build_loops.Loops`). Guarantees: carried names get one
variable per attempt, of the kinds found so far (`new_carry_vars`, `make_carries`); names for
one array before the loop share a variable unless kept apart; a carried array keeps its shape
(checked at run time where the build cannot tell), carried storage a loop writes into is
shared, unchanged carries are dropped, and a loop whose carried names join other arrays, or
which leaves a version stale that is read afterwards, is refused at the user's line.
"""

from __future__ import annotations

import ast
import itertools

from jitgrad.core.errors import ShapeError, UnsupportedError
from jitgrad.core.ir import (
    Carry,
    Eqn,
    Var,
    defs,
    dims_of,
    holds_storage_of,
    replace_atom,
    used_atoms,
    walk,
)
from jitgrad.core.types import Type, promote_kinds
from jitgrad.frontend.build_ast import (
    Undefined,
    UnrollLoop,
    base,
    is_atom_value,
)
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym
from jitgrad.prims.primitives import PRIMITIVES


def _sliced(update: Var, body) -> bool:
    """Whether ``update``, at the end of a loop's body, is a slice of an array (``e[1:]``) or
    made entry by entry from slices (``e[1:] - e[:-1]``): its shape changes with the slice
    bounds, so the loop carries arrays of other shapes (not an array made anew, whose size
    jitgrad only cannot prove equal)."""
    made = {o: s for s in walk(body) if isinstance(s, Eqn) for o in s.outs}
    todo, seen = [update], set()
    while todo:
        v = todo.pop()
        e = made.get(v)
        if e is None or id(v) in seen:
            continue
        seen.add(id(v))
        if e.prim == "getitem" and any(isinstance(i, tuple) and i[0] == "s"
                                       for i in e.params["index_spec"]):
            return True
        row = PRIMITIVES.get(e.prim)
        if row is not None and row.elementwise:
            todo += [a for a in e.ins if isinstance(a, Var) and a.type.ndim]
    return False


def assigned_first(body, name: str) -> bool:
    """Whether each iteration of a loop over ``body`` binds ``name`` (``y = x[i]``) before it
    reads it: a statement of the body itself that assigns it, with no statement before it
    that mentions it (conservatively: any statement that names it, or may jump, ends the
    search)."""
    for s in body:
        names = {n.id for n in ast.walk(s) if isinstance(n, ast.Name)}
        if isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets) \
                and name in {t.id for t in s.targets}:
            return name not in {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)}
        if name in names or any(isinstance(n, (ast.Break, ast.Continue, ast.Return))
                                for n in ast.walk(s)):
            return False
    return False


class Carries:
    """`build_loops.Loops`'s carried names (see the module)."""

    def new_carry_vars(self, carried, kinds, apart, unfollowed=(), seeded=()):
        """One attempt's variables for the carried names, of the kinds found so far: names for
        one array before the loop share one variable (unless ``apart``), and an array variable
        starts out as its initial value (same memory, same view, as stale as it). Unless
        ``unfollowed``, a carried view is taken as its initial view was (`Views.follow`), and
        a carried array is, inside the body, the newer version of its initial array (checked
        after the body by `find_wrongly_followed`). A float array has its initial array's
        sizes (the end of the body checks that it keeps them, `check_carried_shape`; not a
        name ``seeded`` with zeros). Returns (name -> variable, array variable -> its write
        count before the body)."""
        carry_vars: dict[str, Var] = {}
        by_init: dict[Var, Var] = {}  # names for one array share its carried variable
        writes_before: dict[Var, int] = {}
        for n in carried:
            init = self.gb.atom(self.env[n], check=False)
            if (kinds[n].ndim and isinstance(init, Var) and init in by_init
                    and n not in apart):
                carry_vars[n] = by_init[init]
                continue
            v = carry_vars[n] = self.gb.new_var(kinds[n], base(n))
            if (v.type.ndim and v.type.kind == "f" and isinstance(init, Var)
                    and init.type.ndim == v.type.ndim and n not in seeded):
                v.dims = dims_of(init)
                self.gb.made.append(v)  # (renamed with the classes of sizes)
            if v.type.ndim and isinstance(init, Var):  # it starts as its initial value
                # (the shape a list's rows take from it: its initial one's, which the write
                # of each row checks at run time, `build_lists`)
                self.gb.shape_from.setdefault(v, init)
                if n not in apart:
                    by_init[init] = v
                self.gb.share_memory(v, init)
                self.gb.same_view(v, init)
                writes_before[v] = self.gb.writes_to(v)
            self.gb.restamp(v)
            if isinstance(init, Var) and self.gb.is_stale(init):
                self.gb.mark_stale(v)  # an out-of-date array stays out of date when carried
            if v.type.ndim and isinstance(init, Var) and n not in unfollowed:
                if init in self.gb.view_of:
                    self.gb.view_of[v] = self.gb.view_of[init]
                elif init not in self.gb.latest and init not in self.gb.views:
                    self.gb.newer(init, v)
        return carry_vars, writes_before

    def followed_view(self, *carry_vars) -> bool:
        """Whether one of the carried variables is a view taken as its initial view was (it
        shares its array's memory, and is taken again from it when read: `Views.follow`)."""
        return any(v in self.gb.view_of for v in carry_vars)

    def find_wrongly_followed(self, carried, carry_vars, env_end, blocks, unfollowed) -> bool:
        """After an attempt: a carried view taken as its initial view was must still be that
        view at the end of the body (not rebound), and a carried array lent to views as the
        newer version of its initial array must hold that array's memory throughout (written
        in place only). Otherwise the name joins ``unfollowed``; returns whether one did (the
        body must be built again)."""
        changed = False
        for n in carried:
            v, init = carry_vars[n], self.gb.atom(self.env[n], check=False)
            if n in unfollowed or not (v.type.ndim and isinstance(init, Var)):
                continue
            end = self.gb.atom(env_end[n], check=False)
            if v in self.gb.view_of:
                wrong = end is not v
            else:
                wrong = init in self.gb.followed and not (
                    isinstance(end, Var) and holds_storage_of(end, v, blocks))
            if wrong:
                unfollowed.add(n)
                changed = True
        return changed

    def note_taken_over_params(self, carry_vars, takes_over):
        """A name that holds another's array from the second iteration on (``takes_over``: n ->
        m) may hold an argument's array: a write into it may be a write into that argument."""
        for n, m in takes_over.items():
            init = self.gb.atom(self.env[m], check=False)
            if isinstance(init, Var):
                self.gb.holds_params[carry_vars[n]] = [
                    p for p in self.gb.param_vars
                    if p.type.ndim and self.gb._find(p) is self.gb._find(init)]

    def widen_carried_kinds(self, stmt, carried, kinds, env_end) -> bool:
        """Check each carried name's value at the end of the body (defined, one atom, the rank
        it had before the loop) and widen ``kinds`` to hold it (an int that becomes a float).
        Returns whether a kind widened (the body must be built again)."""
        changed = False
        for n in carried:
            end = env_end.get(n)
            if isinstance(end, Undefined) or end is None:
                raise UnsupportedError(f"`{base(n)}` may be undefined at the end of the "
                                       "loop body", self.loc(stmt))
            if isinstance(end, symbolic.COMPLEX_TYPES) and self.loop_key(stmt) in \
                    self.unrollable:  # `sig = np.array([])`, then joined with complex
                raise UnrollLoop(self.loop_key(stmt))  # pieces over a few iterations
            if isinstance(end, symbolic.COMPLEX_TYPES):
                raise UnsupportedError(f"`{base(n)}` becomes a complex number inside the loop: "
                                       f"start it as one before the loop (`{base(n)} = 0j`)",
                                       self.loc(stmt))
            if not is_atom_value(end):
                raise UnsupportedError(f"`{base(n)}` changes kind inside the loop",
                                       self.loc(stmt))
            t_end = self.gb.atom(end, check=False).type
            if t_end.ndim != kinds[n].ndim:
                if self.loop_key(stmt) in self.unrollable:  # `mult = 1.0`, then `mult += x`
                    raise UnrollLoop(self.loop_key(stmt))  # over a few iterations: unrolled
                raise ShapeError(f"`{base(n)}` is a {kinds[n]} before the loop and a "
                                 f"{t_end} inside it", self.loc(stmt))
            kind = promote_kinds(kinds[n].kind, t_end.kind)
            if kind != kinds[n].kind:
                kinds[n] = Type(kind, kinds[n].ndim)
                changed = True
        return changed

    def find_take_overs(self, carried, carry_vars, kinds, env_end, takes_over) -> bool:
        """Arrays swapped by the body (``u, unew = unew, u``): a name that ends the body holding
        another carried name's array takes it over, recorded in ``takes_over``. Returns whether
        one was found (the body must be built again)."""
        changed = False
        for n, m in itertools.permutations(carried, 2):
            end = self.gb.atom(env_end[n], check=False)
            if (n not in takes_over and carry_vars[n] is not carry_vars[m]
                    and kinds[n].ndim and isinstance(end, Var)
                    and not self.followed_view(carry_vars[n], carry_vars[m])
                    and self.gb._find(end) is self.gb._find(carry_vars[m])):
                takes_over[n] = m
                changed = True
        return changed

    def find_carries_apart(self, carried, carry_vars, env_end, writes_before, apart) -> bool:
        """Two names for one array before the loop (``y = y0``) that the body rebinds apart
        (``y = g(y)``) and never writes into are two arrays from the second iteration on: they
        join ``apart`` and get a carried variable each. Returns whether a pair was found (the
        body must be built again)."""
        changed = False
        for n, m in itertools.combinations(carried, 2):
            v = carry_vars[n]
            if (v is carry_vars[m] and self.gb.atom(env_end[n], check=False)
                    is not self.gb.atom(env_end[m], check=False)
                    and self.gb.writes_to(v) == writes_before[v]):
                apart |= {n, m}
                changed = True
        return changed

    def make_carries(self, stmt, carried, carry_vars, kinds, env_end, body, blocks):
        """One `Carry` per carried variable: its initial value and its update at the end of
        ``body``, each cast to the carried kind. Names sharing a variable must still name one
        array at the end of the body (refused otherwise). An array only written in place makes
        its initial array hold the loop's value afterwards."""
        carries = []
        first_name: dict[Var, str] = {}
        seeded = self.seeds.get(self.loop_key(stmt), {})  # assigned only inside (`seed_names`)
        for n in carried:
            var = carry_vars[n]
            if var in first_name:  # another name for the same array
                other = first_name[var]
                if self.gb.atom(env_end[n], check=False) is not self.gb.atom(
                        env_end[other], check=False):
                    raise UnsupportedError(
                        f"`{base(n)}` and `{base(other)}` name the same array before the "
                        "loop but not at the end of its body: jitgrad cannot follow which "
                        "array each names from one iteration to the next", self.loc(stmt))
                continue
            first_name[var] = n
            init = self.cast_in(self.gb.block, self.env[n], kinds[n].kind)
            update = self.cast_in(body, env_end[n], kinds[n].kind)
            carries.append(Carry(var, init, update))
            if not (isinstance(update, Var) and holds_storage_of(update, var, blocks)
                    or n in seeded):  # (rebound; a seeded name's zeros are never read)
                self.check_carried_shape(base(n), var, update, body, stmt)
            if (var.type.ndim and isinstance(init, Var) and isinstance(update, Var)
                    and holds_storage_of(update, var, blocks)):  # only written in place:
                self.gb.newer(init, var)  # after the loop the initial array holds its value
            self.gb.latest.pop(var, None)
        return carries

    def check_carried_shape(self, name, var, update, body, stmt) -> None:
        """A float array the loop carries must keep its shape: its adjoint is one array of that
        shape across the iterations. Where the body rebinds it (an array only written in
        place keeps its shape) and the sizes of the new value are not the carried ones' while
        building (``h = h[1:]``, ``h = h @ W``), the end of the body checks
        them (`prims.shape.same_carried_size`), raising ValueError at run time rather than
        leaving the adjoint to read past its array."""
        if not (var.type.ndim and var.type.kind == "f" and isinstance(update, Var)
                and update is not var):
            return
        same = self.gb.size_class
        if self.loop_key(stmt) in self.unrollable and _sliced(update, body) and any(
                same(new) != same(old) for new, old in zip(dims_of(update), dims_of(var))):
            raise UnrollLoop(self.loop_key(stmt))  # a few iterations: each its own arrays
        saved = self.gb.block
        self.gb.block = body
        try:
            for k, (new, old) in enumerate(zip(dims_of(update), dims_of(var))):
                if same(new) == same(old):
                    continue
                sizes = [self.gb.atom(symbolic.record("shape_dim", self.gb.sym(a), axis=k))
                         for a in (update, var)]
                body.stmts.append(Eqn("same_carried_size", [], sizes, {"name": name},
                                      self.loc(stmt)))
        finally:
            self.gb.block = saved

    def share_written_storage(self, carries) -> None:
        """An array the body only writes in place: one storage, before the loop and in it;
        its shape, that of its initial array (`GraphBuilder.shape_from`)."""
        shape_from = self.gb.shape_from
        for c in carries:
            if (c.var.type.ndim and isinstance(c.init, Var) and isinstance(c.update, Var)
                    and c.update.root is c.var):
                c.var.storage = c.init.root
                shape_from[c.var] = c.init  # (written in place: its shape is the initial's)
                if c.var.dims is None:  # and so its sizes (colour's H[H < 0] += 360, then
                    c.var.dims = dims_of(c.init)  # np.array([L, C, H]): rows of one size)

    def drop_unchanged_carries(self, carries, carry_vars, blocks) -> list:
        """The carries the loop keeps: an array the body never rebinds nor writes is its initial
        value, so its carried variable is replaced by that value in ``blocks`` and
        ``carry_vars``, and dropped."""
        kept = []
        for c in carries:
            if c.var.type.ndim and c.update is c.var and isinstance(c.init, Var):
                replace_atom(blocks, c.var, c.init)
                for n, v in list(carry_vars.items()):
                    if v is c.var:
                        carry_vars[n] = c.init
                if self.gb.latest.get(c.init) is c.var:
                    del self.gb.latest[c.init]
                continue
            kept.append(c)
        return kept

    def check_no_joined_carries(self, carried, carry_vars, writes_before, env_end, stmt):
        """Two names for two arrays before the loop that name one array at the end of its body
        (``fx = fxnew``) are one array from the second iteration on: a write into it shows
        through both names, which the carried values (one per name) do not follow. Refused
        when the body writes into it in place; without writes the two values stay equal."""
        body = stmt.body if isinstance(stmt, (ast.For, ast.While)) else []
        for n, m in itertools.combinations(carried, 2):
            v, w = carry_vars[n], carry_vars[m]
            if v is w or not v.type.ndim or self.followed_view(v, w):
                continue
            a = self.gb.atom(env_end[n], check=False)
            b = self.gb.atom(env_end[m], check=False)
            if not (isinstance(a, Var) and isinstance(b, Var) and a.type.ndim
                    and self.gb._find(a) is self.gb._find(b)):
                continue
            written = any(self.gb.writes_to(x) != writes_before.get(x, self.gb.writes_to(x))
                          for x in (v, w))
            first = [k for k in (n, m) if assigned_first(body, k)]
            if written and first:  # its carried value is never read in the body: taken
                self.unread_carries.update(first)  # (and refused after the loop)
                continue
            if written and (v in self.gb.views or w in self.gb.views):
                view, of = (n, m) if v in self.gb.views else (m, n)
                raise UnsupportedError(
                    f"`{base(view)}`, a view of `{base(of)}` that this loop writes through, is "
                    "taken again inside the loop under the name it had before it: jitgrad "
                    "cannot follow which part of the array it is from one iteration to the "
                    f"next. Give the view taken inside the loop a name of its own, or write "
                    f"into `{base(of)}` itself", self.loc(stmt))
            if written:
                raise UnsupportedError(
                    f"`{base(n)}` and `{base(m)}` name one array from the second iteration of "
                    "this loop on (one is assigned the other), and the loop writes into it in "
                    "place, so a write shows through both names, which jitgrad does not "
                    f"follow. Assign a copy (`{base(n)} = {base(m)}.copy()`)", self.loc(stmt))

    def check_no_stale_reads(self, result, carry_vars, stmt) -> set[Var]:
        """An array read in the loop whose memory the loop writes into later in the body,
        under another name, shows new values from the second iteration on: refuse it. That is
        an array made before the loop, or a carried one whose value at the end of the body is
        out of date (a view of the array written). Return the carried arrays that are out of
        date after the loop but not read in it (reading them after the loop is refused)."""
        blocks = [result["body"]] + ([result["cond_block"]] if "cond_block" in result else [])
        inside = set(carry_vars.values())
        for b in blocks:
            for s in walk(b):
                inside.update(defs(s))
        stale_carries = set()
        for n, v in carry_vars.items():
            end = result["env_end"].get(n)
            if v.type.ndim and isinstance(end, Sym) and isinstance(end.atom, Var) and (
                    self.gb.is_stale(end.atom)):
                stale_carries.add(v)
        names = {v.atom: n for n, v in self.env.items() if isinstance(v, Sym)
                 and isinstance(v.atom, Var)}
        names.update({v: n for n, v in carry_vars.items() if isinstance(v, Var)})
        for b in blocks:
            for s in b.stmts:
                for a in used_atoms(s):
                    if isinstance(a, Var) and a.type.ndim and (
                            a in stale_carries
                            or (a not in inside and self.gb.is_stale(a))):
                        what = f"`{base(names[a])}`" if a in names else "an array"
                        raise UnsupportedError(
                            f"{what} is read in this loop and shares memory with an array "
                            "the loop writes into in place, so from the second iteration on it "
                            "shows new values, which jitgrad does not follow. Index the array "
                            "itself inside the loop, or .copy() it before the loop",
                            self.loc(stmt))
        return stale_carries
