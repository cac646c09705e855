"""What the builder reads off the user's AST, and the small values its parts share.

Takes `ast` nodes of the function being built. Guarantees: nothing here builds IR; these are
questions about the source (which names a block assigns, whether a statement may jump, which
arguments a body writes into, how the user spelled a library function) and the markers the
builder's environment uses (`Undefined`, `NO_RETURN`, the flag names for break, continue and
return), and the function values it passes around (`LocalFunction`, `Choice`).
"""

from __future__ import annotations

import ast
import collections
import inspect
import operator

import numpy as np

from jitgrad.frontend.parse import FunctionSource
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym


class Undefined:
    """A name with no value on some path (defined in one branch, or only inside a loop).
    ``seed``: for a number defined only inside a loop, (the loop's key, its type): read
    after the loop, the build starts again with the name defined before it
    (`ReadAfterLoop`)."""

    def __init__(self, why: str, seed: tuple | None = None, when=None):
        self.why = why
        self.seed = seed
        self.when = when  # a `DefinedWhen`: the number is defined where that branch is taken
        self.like = None  # an array the name holds on the paths that define it
        self.maybe = None  # a `MaybeDefined`: its value and whether it is defined, at run time

    def holding(self, like) -> Undefined:
        """This, noting an array the name holds where it is defined (a loop that assigns it
        on some paths only is seeded with zeros of its shape, `after_loop`)."""
        if isinstance(like, Undefined):
            like = like.like
        if like is None or self.like is not None:
            return self
        made = Undefined(self.why, self.seed, self.when)
        made.like = like
        made.maybe = self.maybe
        return made


class DefinedWhen:
    """A number assigned in one branch of an ``if`` on a run-time condition: defined wherever
    that condition holds as it held there (``if fit_intercept: c = w[-2]``, read again under
    ``if fit_intercept:``). `build_branches.Branches.defined_when` merges it into the ``if``
    that assigned it (a placeholder on the other side, never read) on its first such read."""

    def __init__(self, cond, side: bool, value, blocks: tuple, loops: tuple):
        self.cond = cond  # the condition's atom (a Var)
        self.side = side  # True: assigned where it held
        self.value = value
        self.blocks = blocks  # (then_block, else_block, loc)
        self.loops = loops  # the loops around the ``if`` (`Branches.loops_here`)
        self.stmt = None  # the If, once made
        self.merged = None  # the merged value, once read


class MaybeDefined:
    """A name an ``if`` on a run-time condition assigns on some of its paths only (``if n == 0:
    ... elif n == 1: ... elif n >= 2: ...`` with no ``else``): Python raises UnboundLocalError
    where it is read on a path that did not assign it. ``sides``: each branch's value, a
    `MaybeDefined` of an ``if`` inside that branch, or None where it is not assigned.
    `build_branches.Branches.materialise` merges it into the ``if`` (a placeholder on a side
    that does not assign it) with a flag that says whether it was assigned, on its first read
    after the ``if``, which checks the flag at run time."""

    def __init__(self, sides: tuple, blocks: tuple, loops: tuple):
        self.sides = sides
        self.blocks = blocks  # (then_block, else_block, loc)
        self.loops = loops  # the loops around the ``if`` (`Branches.loops_here`)
        self.stmt = None  # the If, once made
        self.merged = None  # (the value, the flag), once read


class ReadAfterLoop(Exception):
    """Internal: a number assigned only inside a loop is read after it, as Python allows
    (it holds the last iteration's value). `build.build` starts again with the name defined
    as zero of its type before that loop (``seeds``), so that the loop carries it out."""

    def __init__(self, loop_key: tuple, name: str, type_):
        super().__init__(name)
        self.loop_key, self.name, self.type = loop_key, name, type_


class Choice:
    """One of two functions, by a condition known at run time (``f = np.sin if c else
    np.cos``): a call of it is built as an ``if`` calling each (`Expressions.call`)."""

    def __init__(self, cond, then, orelse):
        self.cond, self.then, self.orelse = cond, then, orelse

    def __call__(self, *args, **kwargs):
        raise TypeError("a Choice is called by the builder")


UNROLLED = "unrolled"  # the rows of a list of arrays whose shapes differ: its loop unrolled
INTEGERS = "integers"  # the items of a list of integers (indices): an array of int64


class ListOfArrays(Exception):
    """Internal: a list built in a loop (`desugar_lists`) has array items, of a shape made of
    constants and the arguments' axes (``rows``: an int, or (parameter position, axis), per
    axis; or ("first", axis): the first item's, made before the loop); `build.build` starts
    again with its array allocated with rows of that shape."""

    def __init__(self, key: tuple, rows: tuple):
        super().__init__(str(key))
        self.key, self.rows = key, rows


class CarryAttribute(Exception):
    """Internal: a loop's body changes an attribute of an object made before the loop (``key``:
    the loop's file, line and column; ``attr``: (its class's qualified name, the attribute));
    `build.build` starts again with that attribute carried by the loop as its names are
    (`Values.attribute_carries`)."""

    def __init__(self, key: tuple, attr: tuple):
        super().__init__(f"{key} {attr}")
        self.key, self.attr = key, attr


class CarryObject(Exception):
    """Internal: a loop over a run-time count rebinds ``name`` to an object of the user's
    class (``key``: the loop's file, line and column); `build.build` starts again with the
    loop carrying that object's attributes (`ObjectCarries.object_carries`)."""

    def __init__(self, key: tuple, name: str):
        super().__init__(f"{key} {name}")
        self.key, self.name = key, name


class PeelLoop(Exception):
    """Internal: a loop over a range of at least two iterations known while building gives a
    dict keys, or an object attributes, that it did not have before the loop (climlab's
    ``self.diagnostics["OLR"] = OLR`` into ``{}``); `build.build` starts again with the loop's
    first iteration built before it (``key``: its file, line and column), so that the loop
    carries them (`Loops.stmt_For`)."""

    def __init__(self, key: tuple):
        super().__init__(str(key))
        self.key = key


class UnrollLoop(Exception):
    """Internal: a loop over a range of a few iterations known while building carries an
    array whose shape may change from one iteration to the next (``h = h[1:]``); `build.build`
    starts again with that loop (its file, line and column: ``key``) unrolled, each iteration's
    arrays their own (`Loops.stmt_For`)."""

    def __init__(self, key: tuple):
        super().__init__(str(key))
        self.key = key


class Iterator:
    """What a generator's call gives while building (`desugar_generators`): the array (or
    tuple) of its items, and how many ``next`` has taken; a ``for`` over it runs over the
    rest, after which ``next`` is refused (Python's would depend on where the loop broke)."""

    def __init__(self, items, name: str):
        self.items, self.name = items, name
        self.taken = 0
        self.looped = False

    def rest(self):
        """The items ``next`` has not taken (None after a for loop over them)."""
        if self.looped:
            return None
        self.looped = True
        if not self.taken:
            return self.items
        if isinstance(self.items, tuple):
            return self.items[self.taken:]
        return symbolic.record("getitem", self.items, self.taken,
                               index_spec=(("s", True, False, False),))

    def take(self):
        """The next item."""
        k, self.taken = self.taken, self.taken + 1
        if isinstance(self.items, tuple):
            return self.items[k]
        return symbolic.record("getitem", self.items, k, index_spec=("i",))


class BuildIterator:
    """``it = iter(seq)`` (or one of ``itertools.tee(seq)``): the sequence and how many items
    ``next`` has taken (rebound to its name at each ``next``, as `build_containers` rebinds a
    changed list); ``used_up`` once a function read its rest (``zip(a, b)``)."""

    def __init__(self, seq, taken=0):
        self.seq, self.taken = seq, taken
        self.used_up = False


class BuildList(tuple):
    """A list made in the function (``[]``, a copy, a changed list), held by value as a tuple
    is; its own object even when empty, so that a change in place can tell its holders apart
    (`build_containers`)."""


class RunTimeText:
    """An f-string that formats a value known only at run time (a label, a log line): it may
    be assigned, printed or put in a raise's message (naming the value), never compared or
    computed with."""

    def __init__(self, source: str):
        self.source = source


class RunTimeRange:
    """``cmps = range(len(xs))``: a range whose bounds are known only at run time, held in a
    name; a ``for`` loop runs over it (`build_loops`) and ``len`` reads its count
    (`build_builtins`); anything else is refused. ``step`` is a nonzero int."""

    def __init__(self, start, stop, step: int):
        self.start, self.stop, self.step = start, stop, step


class RunTimeBytes:
    """``x.tobytes()``: the array's memory as bytes, whose length (``len(b)``, its ``nbytes``)
    is all jitgrad reads of it; the bytes themselves carry no derivative and are not a value
    the generated code computes with."""

    def __init__(self, length):
        self.length = length


class NoReturn:
    """The value to return before any ``return`` ran: merged with a returned value, it takes
    that value's shape (a placeholder on the side that has not returned, never read)."""


NO_RETURN = NoReturn()


BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.BitAnd: operator.and_,
           ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift}
CMPOPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
           ast.Eq: operator.eq, ast.NotEq: operator.ne}
BREAK, CONTINUE, RETURNED, RETVAL = "%break", "%continue", "%returned", "%retval"
# set once a `raise` ran on this path: the rest of the block is never reached
RAISED = "%raised"


def base(name: str) -> str:
    """The generated-code base name for an environment name (flags get a leading underscore)."""
    return "_" + name[1:].split("@")[0] if name.startswith("%") else name


def is_atom_value(v) -> bool:
    return isinstance(v, (Sym, bool, int, float, np.number, np.bool_))


def assigned_names(stmts) -> set[str]:
    """The names the statements bind or write into (a loop carries them): ``a`` in ``a = ...``,
    ``a, b = ...`` and ``for a in``; ``y`` in ``y[i] = ...`` and ``y[i][j] += ...`` (a new
    version of its array), but not ``i``, which the index only reads."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    out |= _bound_by(t)
            if isinstance(node, ast.Return):
                out |= {RETURNED, RETVAL}
    return out


def _bound_by(target) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_bound_by(t) for t in target.elts))
    if isinstance(target, (ast.Starred, ast.Subscript, ast.Attribute)):
        return _bound_by(target.value)  # the array written into
    return set()


def jumps(stmt, loop_level=True) -> bool:
    """Whether a statement may break, continue (at this loop level) or return."""
    for node in walk_same_loop(stmt):
        if isinstance(node, ast.Return):
            return True
        if loop_level and isinstance(node, (ast.Break, ast.Continue)):
            return True
    return False


def walk_same_loop(node):
    """ast.walk, not descending into nested loops (except for their returns)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.For, ast.While)):
            for sub in ast.walk(child):
                if isinstance(sub, ast.Return):
                    yield sub
            continue
        yield from walk_same_loop(child)


def is_prange(fn) -> bool:
    return getattr(fn, "__name__", None) == "prange" and str(
        getattr(fn, "__module__", "")).startswith("numba")


LIBRARIES = {"numpy", "scipy", "math", "builtins", "numba", "jitgrad", "random", "statistics",
              "cmath", "functools", "itertools", "operator"}


def fn_name(fn) -> str:
    """How the user wrote a library function: np.fft.fft, np.sort, math.gamma."""
    mod = str(getattr(fn, "__module__", None) or "")
    name = getattr(fn, "__name__", type(fn).__name__)
    if isinstance(fn, np.ufunc) and getattr(np, name, None) is not fn:
        return f"scipy.special.{name}"  # SciPy's special functions are ufuncs too
    if mod.startswith("numpy") or isinstance(fn, np.ufunc):
        public = [p for p in mod.split(".")[1:] if not p.startswith("_")]
        return ".".join(["np", *public, name])
    if mod == "math":
        return f"math.{name}"
    return name


def is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str)


def same_constant(a, b) -> bool:
    return (not isinstance(a, Sym) and not isinstance(b, Sym) and type(a) is type(b)
            and is_atom_value(a) and a == b)


def same_structure(a, b) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(x is y or same_constant(x, y) for x, y in zip(a, b))
    return a is b


def call_arguments(stmts, library) -> set[str]:
    """Names passed as arguments to a call that may write into them: any call but those
    ``library(func_node)`` knows are NumPy's, math's or builtins (which write into nothing)."""
    out: set[str] = set()
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and not library(node.func):
                for a in list(node.args) + [k.value for k in node.keywords]:
                    while isinstance(a, (ast.Subscript, ast.Attribute)):
                        a = a.value  # a view passed (`kernel(U[i])`): its array may be written
                    if isinstance(a, ast.Name):
                        out.add(a.id)
    return out


def subscript_targets(body) -> set[str]:
    out = set()
    for stmt in body:
        for node in ast.walk(stmt):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.add(t.value.id)
                if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name):
                    out.add(t.id)  # `x += 1` writes into x when x is an array
    return out


class CalledFromLibrary(TypeError):
    """A library's code called a `LocalFunction` with numbers (``minimize_scalar(lambda
    ...)`` run while building): only the builder can call one."""

    def __init__(self, fn: LocalFunction):
        super().__init__(f"{fn.__qualname__} is built inline by the builder")
        name = fn.__qualname__.split(".")[-1]
        self.name = "a lambda" if name.startswith("_lambda") else f"`{name}`"


CodeFacts = collections.namedtuple(
    "CodeFacts", ["co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_name"])


class LocalFunction:
    """A function defined inside the one being built: a closure over its names (read when it
    is called, as Python does), built inline where it is called."""

    def __init__(self, src: FunctionSource, builder, defaults: list):
        self.src, self.builder, self.defaults = src, builder, defaults
        self.__qualname__ = src.qualname

    def __call__(self, *args, **kwargs):  # a function value (`callable`); the builder calls it
        raise CalledFromLibrary(self)

    @property
    def __code__(self):
        """What its code object tells of its parameters (pysindy's
        ``f.__code__.co_argcount`` of a lambda in a library of functions), and its name."""
        a = self.src.node.args
        return CodeFacts(len(a.posonlyargs) + len(a.args), len(a.posonlyargs),
                         len(a.kwonlyargs), getattr(self.src.node, "name", "<lambda>"))

    def signature(self) -> inspect.Signature:
        """Python's binding rules for its ``def``: every parameter kind, with the defaults
        evaluated where the ``def`` ran (``defaults``: positional ones, then keyword-only)."""
        a, P, empty = self.src.node.args, inspect.Parameter, inspect.Parameter.empty
        positional = [(p, P.POSITIONAL_ONLY) for p in a.posonlyargs]
        positional += [(p, P.POSITIONAL_OR_KEYWORD) for p in a.args]
        n_pos_defaults = len(a.defaults)
        pos_defaults, kw_defaults = self.defaults[:n_pos_defaults], self.defaults[n_pos_defaults:]
        first_default = len(positional) - n_pos_defaults
        params = [P(p.arg, kind, default=pos_defaults[k - first_default]
                    if k >= first_default else empty)
                  for k, (p, kind) in enumerate(positional)]
        if a.vararg:
            params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
        params += [P(p.arg, P.KEYWORD_ONLY, default=empty if d is None else value)
                   for p, d, value in zip(a.kwonlyargs, a.kw_defaults, _kw_values(a, kw_defaults))]
        if a.kwarg:
            params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
        return inspect.Signature(params)


def _kw_values(a, kw_defaults):
    """The evaluated keyword-only defaults, one per keyword-only parameter (None where it has
    none)."""
    values = iter(kw_defaults)
    return [None if d is None else next(values) for d in a.kw_defaults]
