"""Lists, dicts and sets whose length and keys are known while building, changed in place:
``lst[1] = v``, ``lst.pop()``, ``lst.insert(0, v)``, ``lst.extend(...)``, ``lst.reverse()``,
``lst.sort()``, ``d["k"] = v``, ``d.pop(k)``, ``s.add(3)``, and ``heapq``'s functions.

Part of `build.Builder` (a mixin). The builder holds such a list as a tuple of values (graph
values and numbers), a dict as a dict of them, a set of numbers or strings known while building
as a frozenset. A change in place builds the new tuple, dict or set and binds it to the name
the user changed. Guarantees:

* Python's aliasing is kept or refused, never lost: a change to a list, dict or set that
  another name (or an item of another container, or a caller's name) also holds is refused,
  since the other name would not see it; so is a change to a global, a closure's variable, or
  one inside a loop of the graph (the name would change from one iteration to the next:
  the refusal says to make the list an array before the loop).
* An order that depends on run-time values (``lst.sort()``, ``heapq``) is the order Python
  computes: ``sort`` is NumPy's stable sort (`build_builtins`); a heap of run-time numbers
  becomes an array, and heapq's sift loops (the algorithm of CPython's ``heapq``) are built as
  loops of comparisons and in-place writes, which the gradient follows (each entry's
  derivative is that of the item moved there). Of numbers known while building, heapq runs
  while building.
"""

from __future__ import annotations

import ast
import heapq
from collections import OrderedDict

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.build_ast import BuildList, UnrollLoop
from jitgrad.frontend.desugar import hashable
from jitgrad.frontend.dict_carries import holding_attributes
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym

_LIST_METHODS = {"append", "extend", "insert", "pop", "reverse", "sort", "clear", "copy",
                 "remove"}
_DICT_METHODS = {"pop", "update", "clear", "copy", "setdefault", "popitem"}
_SET_METHODS = {"add", "discard", "remove", "update", "clear", "copy"}

_TO_ARRAY = ("make the list an array before the loop (`acc = np.array([0.0, 0.0])`, "
             "`acc = np.zeros(n)`) and write into it (`acc[i] = v`), or build it by appending "
             "in the loop (`out = []`, then `out.append(v)`)")


class BuildMethod:
    """``lst.pop`` of a container known while building: called, it changes the container
    (`Containers.change`)."""

    takes_complex = False  # called before complex arguments are looked at (`Calls.call`)

    def __init__(self, builder, target, base, attr):
        self.builder, self.target, self.base, self.attr = builder, target, base, attr

    def __call__(self, args, kwargs, node):
        return self.builder.container_method(self, args, kwargs, node)


def is_container_method(base, attr) -> bool:
    if isinstance(base, frozenset):
        return attr in _SET_METHODS
    if isinstance(base, dict):
        return attr in _DICT_METHODS
    return isinstance(base, tuple) and not hasattr(type(base), "_fields") and \
        attr in _LIST_METHODS


class Containers:
    """Methods mixed into `build.Builder`."""

    # -- the name that changes -----------------------------------------------------------

    def change(self, target, old, new, node) -> None:
        """Bind ``new``, the changed ``old``, to the name ``target`` (an AST node) holds it
        by, refusing what would lose Python's aliasing (the module's guarantees)."""
        what = _kind(old)
        holder = None if isinstance(target, ast.Name) else self.attribute_holder(target, old)
        if holder is not None and not self.in_loop:
            ordered = type(getattr(*holder[0])) is OrderedDict  # (read as a dict: kept one)
            new = OrderedDict(new) if ordered and type(new) is dict else new
            for obj, attr in holder:  # `self.at_node[k] = v`: the object's attribute, changed
                setattr(obj, attr, new)  # (every attribute holding it: climlab's `state`)
            return
        if not isinstance(target, ast.Name):
            raise UnsupportedError(f"changing a {what} in place that is not a name of the "
                                   f"function (`{ast.unparse(target)}`): assign it to a name "
                                   "first, change it, and store it back", self.loc(node))
        name = target.id
        if self.env.get(name) is not old:
            copy = {"dict": "dict", "set": "set", "iterator": "iter"}.get(what, "list")
            raise UnsupportedError(f"changing the {what} `{name}` in place, a global or a "
                                   "closure's variable: copy it into a local name first "
                                   f"(`{name}2 = {copy}({name})`)", self.loc(node))
        if self.in_loop and self.loops_building and \
                id(old) not in self.held_before_loop[-1]:
            pass  # made in this iteration of the innermost loop: each iteration its own
        elif self.in_loop and self.loops_building and \
                self.loop_key(self.loops_building[-1]) in self.unrollable:
            raise UnrollLoop(self.loop_key(self.loops_building[-1]))  # a few iterations: each
        elif self.in_loop:  # copy of the body changes the list as Python does
            raise UnsupportedError(f"changing the {what} `{name}` in place inside a loop (its "
                                   "length or entries would change from one iteration to the "
                                   f"next); {_TO_ARRAY}", self.loc(node))
        callers = self.callers_holding(old)
        if self.holders(old) > 1 and callers is None:
            copy = {"dict": "dict", "set": "set", "iterator": "iter"}.get(what, "list")
            raise UnsupportedError(f"changing the {what} `{name}` in place while another name "
                                   "(or an item of a list or dict, or a caller's argument) "
                                   "holds it too: jitgrad holds it by value, so the other "
                                   f"would not see the change; copy it first (`{name} = "
                                   f"{copy}({name})`)", self.loc(node))
        self.env[name] = new
        for b, n in callers or ():
            b.env[n] = new  # the caller's name sees the change, as Python's would
        for obj, attr in holding_attributes(self.made_objects, old):
            setattr(obj, attr, new)  # `d = p.params; d["a"] = v`: p.params sees it too

    def attribute_holder(self, target, old):
        """[(object, attribute), ...] where ``target`` (an AST node) reads ``old`` as an
        attribute of an object made while building (``self.at_node``, ``getattr(self, "at_" +
        at)``), and only attributes of such objects hold it (no name, item or global: a change
        made to each of them is then the change Python makes); None otherwise."""
        if isinstance(target, ast.Attribute):
            obj_node, attr = target.value, target.attr
        elif (isinstance(target, ast.Call) and isinstance(target.func, ast.Name)
              and self.lookup(target.func.id, target) is getattr and len(target.args) == 2
              and not target.keywords):
            obj_node, attr = target.args[0], target.args[1]
        else:
            return None
        if any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await)) for part in
               (obj_node, attr) if isinstance(part, ast.AST) for n in ast.walk(part)):
            return None  # (read again here: only what reading cannot change)
        obj = self.expr(obj_node)
        attr = self.expr(attr) if isinstance(attr, ast.AST) else attr
        if not isinstance(attr, str) or id(obj) not in self.made_objects:
            return None
        raw = getattr(obj, attr, None)  # (`old` is as the read gave it: a copy of a dict)
        if not (type(raw) is type(old) or type(raw) is OrderedDict and type(old) is dict) or \
                self.holders(raw) or self.holders(old) or any(
                v is raw for v in self.src.fn.__globals__.values()):
            return None  # (a global's dict: Python would change the global too)
        return holding_attributes(self.made_objects, raw) or None

    def callers_holding(self, obj):
        """The callers' names that hold ``obj``, a container this function changes in place
        (`change`), as (builder, name) pairs; None where the change could not reach every
        holder as Python's does: where an item of a container or a function this one is
        nested in holds it, where a caller builds a loop that began with it (the change would
        be made once per iteration), or where a caller's statement that makes the call names
        it again (its other use may have been read before the call, as a value: the caller
        would read the container as it was, ``g(d, f(d))``). Python passes a dict, list or set
        by reference: the pymoo form ``out = {}; problem._evaluate(x, out); out["F"]``."""
        found, b = [], self.caller
        while b is not None:
            names = [n for n, v in b.env.items() if v is obj]
            if names:
                if b.in_loop and not (b.loops_building and
                                      id(obj) not in b.held_before_loop[-1]):
                    return None
                stmt = getattr(b, "current_stmt", None)
                uses = sum(1 for x in ast.walk(stmt) if isinstance(x, ast.Name) and
                           x.id in names) if stmt is not None else 2
                if uses != 1:
                    return None
                found.extend((b, n) for n in names)
            b = b.caller
        own = sum(1 for v in self.env.values() if v is obj)
        if not found or self.holders(obj) != own + len(found):
            return None
        return found

    def holders(self, obj) -> int:
        """How many places hold ``obj``: names of this function, of its callers and of the
        functions it is nested in, and items of the containers they hold."""
        count, seen, builders = 0, set(), []
        b = self
        while b is not None:
            builders.append(b)
            b = b.caller
        b = self.enclosing
        while b is not None:
            builders.append(b)
            b = b.enclosing
        stack = [v for b in builders for v in b.env.values()]
        while stack:
            v = stack.pop()
            if v is obj:
                count += 1
                continue
            if isinstance(v, (tuple, dict)) and id(v) not in seen:
                seen.add(id(v))
                stack.extend(v.values() if isinstance(v, dict) else v)
        return count

    # -- item assignment -----------------------------------------------------------------

    def container_setitem(self, target, container, value, op=None) -> None:
        """``lst[k] = v``, ``d["a"] = v`` (``op``: ``lst[k] += v``), the index or key known
        while building."""
        key = self.expr(target.slice)
        if isinstance(key, Sym):
            self.unroll_for_index(target)  # `op_list[n] = sx` in `for n in range(3)`: unrolled
            raise UnsupportedError(f"item assignment into a {_kind(container)} at an index "
                                   "known only at run time: the items of a list whose length "
                                   "is known while building are separate values; "
                                   f"{_TO_ARRAY}", self.loc(target))
        try:
            if isinstance(container, dict):
                if op is not None:
                    value = self.apply_op(op, container[key], value, target)
                new = self.dict_like(container, {**container, key: value})
            else:
                items = list(container)
                if op is not None:
                    value = self.apply_op(op, items[key], value, target)
                if isinstance(key, slice):
                    value = self.sequence_of(value, target)
                items[key] = value
                new = BuildList(items)
        except (TypeError, IndexError, KeyError, ValueError) as e:
            raise UnsupportedError(f"item assignment: {type(e).__name__}: {e}",
                                   self.loc(target)) from None
        self.change(target.value, container, new, target)

    def dict_like(self, old: dict, items: dict) -> dict:
        """The new version of the dict ``old`` holding ``items``: of its class, with its
        attributes, where it is of a class of the user's deriving from dict (radvel's
        ``Parameters(dict)`` with ``num_planets``), made in this build if ``old`` was."""
        if type(old) is dict or not hasattr(old, "__dict__"):
            return items
        new = type(old).__new__(type(old))
        dict.update(new, items)
        vars(new).update(vars(old))
        if id(old) in self.made_objects:
            self.made_objects[id(new)] = (new, self.made_objects[id(old)][1])
        return new

    def sequence_of(self, value, node) -> tuple:
        if isinstance(value, Sym) and value.ndim and isinstance(value.shape[0], int):
            return tuple(self.unpack_rows(value, value.shape[0], node))
        if isinstance(value, (tuple, list, range, str)):
            return tuple(value)
        if isinstance(value, dict):
            return tuple(value)
        raise UnsupportedError("a sequence whose length is known while building is needed "
                               "here (a list, a tuple, or an array of known length)",
                               self.loc(node))

    # -- methods -------------------------------------------------------------------------

    def container_method(self, m: BuildMethod, args, kwargs, node):
        base, attr = m.base, m.attr
        if attr == "copy":
            return BuildList(base) if isinstance(base, tuple) else (
                dict(base) if isinstance(base, dict) else frozenset(base))
        try:
            if isinstance(base, frozenset):
                new, result = self.set_method(base, attr, args, node)
            elif isinstance(base, dict):
                items = dict(base)
                result = getattr(items, attr)(*args, **kwargs)
                new = self.dict_like(base, items)
            else:
                new, result = self.list_method(base, attr, args, kwargs, node)
        except (TypeError, IndexError, KeyError, ValueError) as e:
            raise UnsupportedError(f".{attr}(): {type(e).__name__}: {e}",
                                   self.loc(node)) from None
        self.change(m.target, base, new, node)
        return result

    def list_method(self, base, attr, args, kwargs, node):
        items = list(base)
        if attr == "sort":
            if set(kwargs) - {"reverse"}:
                raise UnsupportedError("list.sort() of values known only at run time takes "
                                       "reverse= only (a key orders by what the build cannot "
                                       "see): sort an array of keys with np.argsort",
                                       self.loc(node))
            return BuildList(self.call(sorted, (base,), kwargs, node)), None
        if attr == "remove" and any(isinstance(v, Sym) for v in (*items, *args)):
            raise UnsupportedError("list.remove() of values known only at run time (which item "
                                   "goes depends on run-time equality): build the list "
                                   "without the item, or use `del`-free indexing "
                                   "(`lst.pop(k)` with k known while building)",
                                   self.loc(node))
        if attr == "extend":
            args = (self.sequence_of(args[0], node),)
        result = getattr(items, attr)(*args, **kwargs)
        return BuildList(items), result

    def set_method(self, base, attr, args, node):
        for a in args:
            if isinstance(a, Sym) or isinstance(a, (tuple, frozenset)) and any(
                    isinstance(v, Sym) for v in a):
                raise UnsupportedError(_SET_OF_RUN_TIME, self.loc(node))
        items = set(base)
        result = getattr(items, attr)(*args)
        return frozenset(items), result

    # -- displays and comprehensions known while building -----------------------------------

    def expr_Set(self, node):
        items = self.items(node.elts)
        return self.known_set(items, node)

    def known_set(self, items, node) -> frozenset:
        if any(isinstance(v, Sym) or not hashable(v) for v in items):
            raise UnsupportedError(_SET_OF_RUN_TIME, self.loc(node))
        return frozenset(items)

    def expr_SetComp(self, node):
        return self.known_set(self.unrolled(node, lambda: [self.expr(node.elt)]), node)

    def expr_DictComp(self, node):
        pairs = self.unrolled(node, lambda: [(self.expr(node.key), self.expr(node.value))])
        for k, _ in pairs:
            if isinstance(k, Sym) or not hashable(k):
                raise UnsupportedError("a dict comprehension whose keys are known only at run "
                                       "time: jitgrad takes keys known while building "
                                       "(`{k: x[k] for k in range(3)}`)", self.loc(node))
        return dict(pairs)

    def unrolled(self, node, each, generators=None) -> list:
        """The values ``each()`` gives for every binding of a comprehension's ``for`` clauses,
        unrolled while building: each clause's sequence must be known while building (a
        tuple or list, a range of known bounds, a dict's keys, a string), its ``if`` tests
        too."""
        generators = node.generators if generators is None else generators
        if not generators:
            return each()
        gen, rest = generators[0], generators[1:]
        seq = self.expr(gen.iter)
        if isinstance(seq, Sym) and seq.ndim and isinstance(seq.shape[0], int):
            seq = self.unpack_rows(seq, seq.shape[0], gen.iter)
        if isinstance(seq, (type({}.keys()), type({}.values()), type({}.items()))):
            seq = tuple(seq)  # (`d.items()` of a dict known while building)
        if not isinstance(seq, (tuple, list, range, dict, str, frozenset)) or gen.is_async:
            raise UnsupportedError(f"a {_comp_kind(node)} over a sequence known only at run "
                                   "time: jitgrad unrolls it while building, so it takes a "
                                   "tuple or list, a range of known bounds, a dict or a set; "
                                   "write a loop instead", self.loc(gen.iter))
        names = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        saved = {n: self.env[n] for n in names if n in self.env}
        out = []
        try:
            if isinstance(seq, frozenset) and not isinstance(node, ast.SetComp):
                raise UnsupportedError(f"a {_comp_kind(node)} over a set (its order is "
                                       "Python's hash order, which the build does not follow): "
                                       "iterate over `sorted(s)`", self.loc(gen.iter))
            for v in seq:
                self.assign(gen.target, v)
                tests = [self.expr(t) for t in gen.ifs]
                if any(isinstance(t, Sym) for t in tests):
                    raise UnsupportedError(f"an `if` of a {_comp_kind(node)} known only at "
                                           "run time: write a loop instead", self.loc(gen))
                if all(tests):
                    out.extend(self.unrolled(node, each, rest))
        finally:
            for n in names:
                self.env.pop(n, None)
            self.env.update(saved)
        return out

    # -- heapq ---------------------------------------------------------------------------

    def heapq_call(self, fn, args, kwargs, node):
        """heapq's functions on a list known while building (`Containers`)."""
        if fn in (heapq.nsmallest, heapq.nlargest):
            if kwargs or len(args) != 2 or isinstance(args[0], Sym):
                raise UnsupportedError(f"heapq.{fn.__name__} takes n known while building and "
                                       "a list (no key=)", self.loc(node))
            k, seq = args
            ordered = self.call(sorted, (self.sequence_of(seq, node),),
                                {"reverse": fn is heapq.nlargest}, node)
            return BuildList(ordered[:k])  # as heapq's documentation defines them
        if kwargs or not args:
            raise UnsupportedError(f"heapq.{fn.__name__} takes the heap and its item "
                                   "positionally", self.loc(node))
        heap, target = args[0], node.args[0]
        if isinstance(heap, tuple) and not any(isinstance(v, Sym) for v in (*heap, *args[1:])):
            items = list(heap)  # numbers known while building: heapq itself, now
            try:
                result = fn(items, *args[1:])
            except (TypeError, IndexError) as e:
                raise UnsupportedError(f"heapq.{fn.__name__}: {type(e).__name__}: {e}",
                                       self.loc(node)) from None
            self.change(target, heap, BuildList(items), node)
            return result
        return self.heap_at_run_time(fn, heap, args[1:], target, node)

    def heap_at_run_time(self, fn, heap, rest, target, node):
        """A heap of numbers known at run time: an array (of known length), its sift loops
        built as CPython's heapq runs them."""
        if not isinstance(target, ast.Name):
            raise UnsupportedError(f"heapq.{fn.__name__} of a heap that is not a name of the "
                                   "function", self.loc(node))
        name = target.id
        if self.in_loop and fn in (heapq.heappush, heapq.heappop):
            raise UnsupportedError(f"heapq.{fn.__name__} inside a loop: the heap's length would "
                                   "change from one iteration to the next, which a loop of "
                                   "the gradient does not carry; make the heap before the "
                                   "loop and keep its length there (heapq.heapreplace, "
                                   "heapq.heappushpop), or sort the items (`np.sort`)",
                                   self.loc(node))
        if isinstance(heap, tuple):
            if not all(isinstance(v, (Sym, int, float)) and not isinstance(v, bool)
                       and symbolic.ndim_of(v) == 0 for v in heap):
                raise UnsupportedError(f"heapq.{fn.__name__} of items known only at run time "
                                       "takes numbers (not tuples or arrays)", self.loc(node))
            array = symbolic.NUMPY[np.array]([float(v) if not isinstance(v, Sym) else v
                                              for v in heap] or [0.0])
            if not heap:
                array = array[0:0]
            self.change(target, heap, array, node)
        elif not (isinstance(heap, Sym) and heap.ndim == 1):
            raise UnsupportedError(f"heapq.{fn.__name__} of a list of numbers (its items "
                                   "compared as numbers: not tuples or arrays)", self.loc(node))
        for v in rest:
            if symbolic.ndim_of(v) or not isinstance(v, (Sym, int, float)):
                raise UnsupportedError(f"heapq.{fn.__name__} pushes numbers", self.loc(node))
        values = {"JGV": float(rest[0]) if rest and not isinstance(rest[0], Sym) else
                  (rest[0] if rest else 0.0)}
        if fn is heapq.heappush:  # one entry longer, the item at the end, then sifted
            self.env[name] = symbolic.NUMPY[np.concatenate](
                (self.env[name], symbolic.NUMPY[np.array]([values["JGV"]])))
        text, result = _HEAP_TEXT[fn.__name__](name)
        out = self.build_written(text, node, {"JGV": "item", "JGR": "result", "JGP": "pos",
                                              "JGC": "child", "JGS": "start", "JGN": "new",
                                              "JGQ": "parent", "JGK": "k",
                                              "JGL": "length"}, values,
                                 results=("JGR",) if result else ())
        return out["JGR"] if result else None


_SET_OF_RUN_TIME = ("a set of values known only at run time (how many items it has depends on "
                    "which are equal, a piecewise constant the gradient cannot follow): jitgrad "
                    "takes sets of numbers or strings known while building; for the distinct "
                    "values of an array use np.unique")


def _sift_up(name, pos="0"):
    """CPython's ``_siftup(heap, pos)`` on a heap of JGL items: down to a leaf along the
    smaller children, then back up (``_siftdown``) to the new item's place."""
    return (f"JGS = {pos}\nJGP = {pos}\nJGN = {name}[JGP]\nJGC = 2 * JGP + 1\n"
            "while JGC < JGL:\n"
            "    if JGC + 1 < JGL:\n"  # (nested: `and` of run-time values reads both)
            f"        if not ({name}[JGC] < {name}[JGC + 1]):\n"
            "            JGC = JGC + 1\n"
            f"    {name}[JGP] = {name}[JGC]\n"
            "    JGP = JGC\n"
            "    JGC = 2 * JGP + 1\n"
            f"{name}[JGP] = JGN\n" + _sift_down(name))


def _sift_down(name):
    """CPython's ``_siftdown(heap, JGS, JGP)``: the item at JGP up while it is less than its
    parent."""
    return (f"JGN = {name}[JGP]\n"
            "while JGP > JGS:\n"
            "    JGQ = (JGP - 1) // 2\n"
            f"    if JGN < {name}[JGQ]:\n"
            f"        {name}[JGP] = {name}[JGQ]\n"
            "        JGP = JGQ\n"
            "    else:\n"
            "        break\n"
            f"{name}[JGP] = JGN\n")


def _indent(text):
    return "".join("    " + line + "\n" for line in text.splitlines())


def _length(name):
    return f"JGL = {name}.shape[0]\n"


_EMPTY = "if JGL == 0:\n    raise IndexError('index out of range')\n"


def _heapify(name):
    return (_length(name) + "JGK = JGL // 2 - 1\nwhile JGK >= 0:\n" +
            _indent(_sift_up(name, "JGK")) + "    JGK = JGK - 1\n", False)


def _heappush(name):  # (the item already appended)
    return _length(name) + "JGS = 0\nJGP = JGL - 1\n" + _sift_down(name), False


def _heappop(name):
    return (_length(name) + _EMPTY + f"JGR = {name}[JGL - 1]\n"
            f"{name} = {name}[:JGL - 1].copy()\nJGL = JGL - 1\n"
            f"if JGL > 0:\n    JGK = JGR\n    JGR = {name}[0]\n    {name}[0] = JGK\n" +
            _indent(_sift_up(name)), True)


def _heapreplace(name):
    return (_length(name) + _EMPTY + f"JGR = {name}[0]\n{name}[0] = JGV\n" +
            _sift_up(name), True)


def _heappushpop(name):
    return (_length(name) + "JGR = JGV\nif JGL > 0:\n"
            f"    if {name}[0] < JGV:\n        JGR = {name}[0]\n        {name}[0] = JGV\n" +
            _indent(_indent(_sift_up(name))), True)


_HEAP_TEXT = {"heapify": _heapify, "heappush": _heappush, "heappop": _heappop,
              "heapreplace": _heapreplace, "heappushpop": _heappushpop}
HEAPQ = {getattr(heapq, k) for k in (*_HEAP_TEXT, "nsmallest", "nlargest")}


def _kind(v) -> str:
    return "dict" if isinstance(v, dict) else "set" if isinstance(v, frozenset) else (
        "list" if isinstance(v, tuple) else "iterator")


def _comp_kind(node) -> str:
    return {ast.SetComp: "set comprehension", ast.DictComp: "dict comprehension"}.get(
        type(node), "comprehension")

