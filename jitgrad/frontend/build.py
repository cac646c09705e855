"""Fenced AST → IR, for one call signature.

`build(source, arg_types)` evaluates the function's body on symbolic values (`symbolic.Sym`) to
produce an `ir.Function`: straight-line code becomes flat equations, ``if``/``for``/``while``
become structured statements whose changing names are carried explicitly (SSA), and
``break``/``continue``/``return`` inside them become flags that guard the rest of the body.
Calls to the user's other plain functions are built inline.

`Builder` is assembled from its parts, one module each: statements (`build_stmts`),
branches (`build_branches`), loops (`build_loops`), views followed to their arrays (`build_views`),
expressions (`build_exprs`), calls (`build_calls`), values known while building: the user's objects,
library calls on constants (`build_values`), the arrays of lists built in loops
(`build_lists`); `build_ast` holds
what they read off the AST. This module binds the arguments, runs the body and checks the result.

Guarantees: the IR is verified (`ir.verify`); every equation has the user's location; anything
the builder cannot follow raises `UnsupportedError` naming it, never a silently different graph
(including a read of an array whose memory was written in place since it was made).
"""

from __future__ import annotations

import ast
import re

import numpy as np

from jitgrad.core import pytree
from jitgrad.core.errors import JitgradError, ShapeError, UnsupportedError
from jitgrad.core.ir import (
    Const,
    Function,
    Namer,
    Var,
    dims_of,
    verify,
)
from jitgrad.core.types import SeqType, Type
from jitgrad.frontend.build_ast import (
    NO_RETURN,
    RETURNED,
    RETVAL,
    CarryAttribute,
    CarryObject,
    ListOfArrays,
    PeelLoop,
    ReadAfterLoop,
    UnrollLoop,
    is_docstring,
    jumps,
    subscript_targets,
)
from jitgrad.frontend.build_branches import Branches
from jitgrad.frontend.build_calls import Calls
from jitgrad.frontend.build_containers import Containers
from jitgrad.frontend.build_exprs import Expressions
from jitgrad.frontend.build_lists import ListArrays
from jitgrad.frontend.build_loops import Loops
from jitgrad.frontend.build_stmts import Statements
from jitgrad.frontend.build_try import Handlers
from jitgrad.frontend.build_values import Values
from jitgrad.frontend.build_views import Views
from jitgrad.frontend.draws import GeneratorRef, Recorder
from jitgrad.frontend.parse import FunctionSource
from jitgrad.lang import complex_pairs, numpy_written, symbolic
from jitgrad.lang.symbolic import GraphBuilder, Sym


def declared_global(fn_node) -> frozenset:
    """The names ``fn_node`` declares ``global`` (not those of functions nested in it)."""
    names, todo = set(), list(fn_node.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Global):
            names.update(n.names)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                              ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return frozenset(names)

class Builder(Statements, Handlers, Branches, ListArrays, Containers, Loops, Views, Values, Calls,
              Expressions):
    """Evaluates one function's AST on symbolic values, appending IR to a `GraphBuilder`."""

    MAX_INLINE_DEPTH = 20

    def __init__(self, src: FunctionSource, gb: GraphBuilder, caller: Builder | None = None,
                 copied: frozenset = frozenset(), enclosing: Builder | None = None,
                 seeds: LoopSeeds | None = None):
        self.src = src
        self.gb = gb
        # numbers to define before a loop, found by an earlier attempt (`ReadAfterLoop`)
        self.seeds = caller.seeds if caller is not None else (
            seeds if seeds is not None else LoopSeeds())
        self.env: dict[str, object] = {}
        self.caller = caller
        self.call_site: tuple = ()  # where the caller calls it (`Calls.inline`)
        self.enclosing = enclosing  # for a nested function: the one it was defined in
        self.depth = 0 if caller is None else caller.depth + 1
        self.in_loop = False  # inside a loop of the graph (a `For` or `While`)
        self.zero_checks = 0  # inside a try catching ZeroDivisionError (`zero_checked_try`)
        # len(gb.made) where the innermost loop's body began, a caller's too (`detach_view`)
        self.loop_made = caller.loop_made if caller is not None else 0
        self.loops_building: list = []  # the loop statements being built, outermost first
        # for each: the ids of the containers that existed where it began (`held_ids`)
        self.held_before_loop: list = []
        self.in_unrolled_loop = False  # inside a loop over a tuple, unrolled while building
        # loops over a range of a few iterations known while building (their keys): unrolled
        # where they carry an array that changes shape (`UnrollLoop`)
        self.unrollable: set = set()
        # loops over range(len(x)) of an argument x of at most 16 rows in the example call:
        # unrolled, that size assumed, where their body names an attribute by the loop's
        # variable (`setattr(self, f"c{i}", c)`: `Indexing.unroll_for_name`)
        self.assumable: dict = {}
        # np.random's draws, seeds and generators, in program order (`frontend.draws`)
        self.draws = caller.draws if caller is not None else Recorder(gb)
        self.stale_at_merge: set[Var] = set()  # values out of date as a branch ends
        # the tuples written as tuple displays ``(a, b)`` (by id, kept alive): tuples for
        # certain, where a list is held as a tuple too (`build_builtins._b_isinstance`)
        self.tuple_displays = caller.tuple_displays if caller is not None else {}
        # the tuples that hold the caller's lists, passed as arguments (by id, kept alive)
        self.argument_lists = caller.argument_lists if caller is not None else {}
        # the user's objects made while building (by id: the object and the block it was made
        # in), whose attributes the function may assign (`Values.set_attribute`)
        self.made_objects = caller.made_objects if caller is not None else {}
        # the names assigned rows of lists of lists read with a run-time index, as arrays
        # (`Indexing.check_rows_indexed`): a list of numbers merges with them as an array
        self.table_rows = caller.table_rows if caller is not None else set()
        # the values of ``bool(x)`` of a run-time x: Python's bools (`is_none`: ``is True``)
        self.python_bools = caller.python_bools if caller is not None else set()
        # the arrays NumPy made for those objects' attributes (by id): the graph's copies of
        # them read so far, out of date once ``obj.attr += v`` updates the array in place
        self.attribute_reads = caller.attribute_reads if caller is not None else {}
        # those arrays held by their object alone (by id, kept alive): `own_array_attribute`
        self.owned_arrays = caller.owned_arrays if caller is not None else {}
        # the module globals the functions set (``global g``; `Statements.set_global`): by
        # (id of the module's namespace, name), the namespace and the value, read before the
        # module's own value
        self.globals_set = caller.globals_set if caller is not None else {}
        # module variables read (as the module holds them) before any `global` write here
        self.globals_read = caller.globals_read if caller is not None else set()
        self.global_names = declared_global(src.node)
        # the block the differentiated function's body is built in
        self.top_block = caller.top_block if caller is not None else gb.block
        # The differentiated function's arguments that it writes into (found by name, or by a
        # first build that met the write elsewhere: `symbolic.WritesArgument`).
        self.copied = (subscript_targets(src.node.body) | copied) if caller is None else set()

    # -- entry points --------------------------------------------------------------------

    def bind_params(self, values: list) -> None:
        """Bind the arguments. The differentiated function's arguments that it writes into are
        copied first (the caller's arrays are never modified); a called function's are not:
        Python passes arrays by reference, so its writes reach its caller's arrays."""
        for k, (name, value) in enumerate(zip(self.param_names(), values)):
            if name in self.copied and isinstance(value, Sym) and value.ndim:
                self.gb.loc = self.src.loc(self.src.node)
                value = value.copy()
            if isinstance(value, (tuple, dict)) and self.caller is None:  # a tree's arrays
                self.gb.loc = self.src.loc(self.src.node)
                value = _copy_written(value, name, self.copied)
                types = getattr(self, "tree_types", ())  # (set by `build`)
                if k < len(types):
                    _note_containers(self, types[k], value)
            self.env[name] = value
        if self.caller is None:  # keyword-only parameters with defaults: constants of the call
            for p in self.src.node.args.kwonlyargs:
                self.env[p.arg] = self.global_value(p.arg, self.src.fn.__kwdefaults__[p.arg],
                                                    p, "default")

    def param_names(self) -> list[str]:
        """The names a call binds: the differentiated function's positional arguments (its
        keyword-only ones take their defaults, `bind_params`); a called function's every
        parameter, in order (``*args`` bound to a tuple, ``**kwargs`` to a dict)."""
        a = self.src.node.args
        if self.caller is None:
            return self.src.param_names
        return [p.arg for p in (*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else ()),
                                *a.kwonlyargs, *([a.kwarg] if a.kwarg else ()))]

    def run_body(self):
        """Build the body; return the function's value (any Python value or `Sym`)."""
        result = self.run_statements()
        if self.caller is None:
            self.check_globals_restored()
        return result

    def check_globals_restored(self) -> None:
        """A module variable the build set (``global g``) must hold its module's value again
        when the differentiated function returns (as ``with`` blocks that set and restore a
        mode do): one left changed would be the next call's starting value in Python, which
        the gradient, built once and never changing the module, cannot follow. One the call
        sets before it reads it (colossus' ``setCosmology`` then ``getCurrent()``) is exempt:
        no value depends on what it held, so every call gives the same value and gradient
        (the gradient leaves the module's variable as it was, docs/supported.md)."""
        for key, (module, value) in self.globals_set.items():
            name, before = key[1], module.get(key[1])
            if key not in self.globals_read:
                continue
            same = value is before or (
                isinstance(value, (str, int, float, bool)) and type(value) is type(before)
                and value == before)
            if not same:
                raise UnsupportedError(
                    f"the global `{name}` is left changed when {self.src.qualname} returns "
                    "(in Python the next call would start from the new value; the gradient "
                    "does not change the module): restore it before returning (a with "
                    "block's __exit__ may), or return the value instead",
                    self.src.loc(self.src.node))

    def run_statements(self):
        self.env[RETURNED] = False
        body = [s for s in self.src.node.body if not is_docstring(s)]
        if body and isinstance(body[-1], ast.Return) and not any(
                jumps(s, loop_level=False) for s in body[:-1]):
            self.build_stmts(body[:-1])
            listed = getattr(body[-1], "jitgrad_returns_list", None)  # (`stmt_Return`)
            if listed is not None:
                self.return_list(listed, body[-1])
            for at, listed in getattr(body[-1], "jitgrad_returns_lists", {}).items():
                self.return_list(listed, body[-1], at)
            return self.expr(body[-1].value) if body[-1].value is not None else None
        if not any(isinstance(n, ast.Return) for s in body for n in ast.walk(s)):
            if self.caller is None:
                raise UnsupportedError(f"{self.src.qualname} returns nothing (None)",
                                       self.src.loc(self.src.node))
            self.build_stmts(body)  # a kernel that fills its output argument
            return None
        self.env[RETVAL] = NO_RETURN
        self.build_stmts(body)
        if self.env[RETVAL] is NO_RETURN:
            return None
        return self.lookup(RETVAL, self.src.node)

# ----------------------------------------------------------------------------- build


class LoopSeeds(dict):
    """The numbers assigned only inside a loop and read after it, by loop (its file, line and
    column) -> {name: type}, found by earlier attempts at a build (`ReadAfterLoop`);
    ``refused``: those a seed did not define (read where no loop sets them)."""

    def __init__(self):
        super().__init__()
        self.refused: set = set()
        self.lists: dict = {}  # a list built in a loop (its key) -> its rows' shape
        self.unrolled: set = set()  # loops unrolled: they carry arrays that change shape
        self.peeled: set = set()  # loops whose first iteration is built before them (`PeelLoop`)
        # a loop (its key) -> the attributes it carries: (class qualname, attribute) pairs
        self.attributes: dict = {}
        # a loop (its key) -> the names of objects it rebinds: it carries their attributes
        self.objects: dict = {}


def _leaf_name(path: str) -> str:
    """A parameter name for a tree's leaf: ``params['W1']`` -> ``params_W1``."""
    return re.sub(r"_+", "_", re.sub(r"[^0-9A-Za-z_]", "_", path)).rstrip("_")


class EmptyArgument(tuple):
    """An empty list or tuple of a tree argument, bound as an empty tuple of its own (not
    Python's one empty tuple, which every ``()`` is), so that isinstance can tell which the
    caller passed (`_note_containers`)."""

    __slots__ = ()


def _bound_tree(t: SeqType, syms: list):
    """The value a tree parameter is bound to: its structure holding the leaves' `Sym`s (a
    list as a tuple: the function reads it, jitgrad never lets it grow; a complex argument as
    the `complex_pairs.Complex` of its two parts)."""
    def tuples(v):
        if isinstance(v, (list, tuple)) and not v:
            return EmptyArgument()
        if isinstance(v, list):
            return tuple(tuples(u) for u in v)
        if isinstance(v, tuple) and hasattr(type(v), "_fields"):  # a namedtuple keeps its class
            return type(v)(*(tuples(u) for u in v))
        if isinstance(v, tuple):
            return tuple(tuples(u) for u in v)
        if isinstance(v, dict):
            return {k: tuples(u) for k, u in v.items()}
        return v
    return tuples(pytree.unflatten(t, syms, strings=True, pair=complex_pairs.Complex))


def _note_containers(builder, t, value):
    """The tuples a tree argument binds (`_bound_tree`) that stand for the caller's lists,
    and those that are its tuples, noted for isinstance (`build_builtins._b_isinstance`)."""
    if not isinstance(t, SeqType) or not isinstance(value, (tuple, dict)):
        return
    if t.container in ("tuple", "list") and isinstance(value, tuple) and (
            value or type(value) is EmptyArgument):
        (builder.tuple_displays if t.container == "tuple" else builder.argument_lists)[
            id(value)] = value
    items = [value[k] for k in t.keys] if isinstance(value, dict) and t.keys else value
    if t.container in ("tuple", "list", "dict") and len(items) == len(t.items):
        for u, v in zip(t.items, items):
            _note_containers(builder, u, v)


def _bound_argument(k: int, p, gb):
    """Argument ``k``'s value while building: a `Sym`, a tree of them, or, for a random
    generator, a reference to the call's own (`draws.GeneratorRef`: drawn from before each
    call)."""
    if not isinstance(p, tuple):
        return gb.sym(p)
    t, items = p
    if t.container == "generator":
        return GeneratorRef(t.value == "RandomState", argument=k)
    return _bound_tree(t, [gb.sym(v) for v in items])


def _aux_leaves(gb, aux):
    """The aux tree's structure and leaf atoms; an array leaf copied (a caller never gets a
    view of an argument, nor memory the gradient reuses)."""
    def leaf(v):
        return not isinstance(v, (tuple, list, dict)) and v is not None
    atoms = []
    for v in pytree.leaves(aux):
        if isinstance(v, Sym):
            atoms.append(gb.atom(v.copy() if v.ndim else v))
        elif isinstance(v, (bool, int, float)):
            atoms.append(Const(v))
        else:
            raise UnsupportedError(f"aux holds a {type(v).__name__}: it may hold numbers and "
                                   "arrays, in tuples, lists and dicts", gb.loc)
    return pytree.structure(aux, leaf), atoms


def _copy_written(value, path: str, copied):
    """A tree argument with the leaves the function writes into copied (by their paths)."""
    if isinstance(value, dict):
        return {k: _copy_written(v, f"{path}[{k!r}]", copied) for k, v in value.items()}
    if isinstance(value, tuple) and value:  # (an `EmptyArgument` kept: it is itself)
        items = tuple(_copy_written(v, f"{path}[{j}]", copied) for j, v in enumerate(value))
        return type(value)(*items) if hasattr(type(value), "_fields") else items  # (a namedtuple)
    if isinstance(value, Sym) and value.ndim and path in copied:
        return value.copy()
    return value



def build(src: FunctionSource, arg_types: list[Type], assume_sizes: bool = True,
          any_result: bool = False, has_aux: bool = False, one_entry: bool = False,
          example=None, complex_eig: bool = False) -> Function:
    """The IR of ``src`` specialised to ``arg_types`` (one per parameter). With
    ``assume_sizes``, axes of arguments that broadcast against each other are assumed to be
    the same size, and the function starts by checking it (`GraphBuilder.assume_same_sizes`);
    given an ``example`` call's arguments (one per parameter, a tree's leaves in its place),
    axes whose sizes differ there are not assumed equal, and one of size 1 is assumed to be 1.
    With ``any_result``, the result may be an array (`vjp`, `jacobian`); with ``one_entry``
    ``"sum"``, an array result is summed (autograd's elementwise_grad: the vjp of ones); with
    ``one_entry`` true (autograd's grad, which differentiates an array of one entry), an array
    result is taken as its entry (`numpy_written.one_entry`: raising at run time where it has more).
    With ``complex_eig``, a real matrix's eig and eigvals are complex values (`GraphBuilder`)."""
    names = src.entry_params
    if len(arg_types) != len(names):
        raise JitgradError(f"{src.qualname} takes {len(names)} arguments, got {len(arg_types)}")
    copied: set[str] = set()
    seeds = LoopSeeds()
    while True:
        namer = Namer(reserved=src.names | {"np", "_rt", "_value", "_saved", "_aux", "_"})
        gb = GraphBuilder(namer, assume_sizes)
        gb.complex_eig = complex_eig
        gb.new_arrays = True
        params, owners, grouped = [], [], []  # a tree argument: one parameter per leaf
        for a, t in zip(names, arg_types):
            if isinstance(t, SeqType):
                paths = pytree.leaf_paths(t, a.arg)
                items = [Var(namer.fresh(_leaf_name(path)), u)
                         for path, u in zip(paths, pytree.leaf_types(t))]
                params += items
                owners += paths
                grouped.append((t, items))
            else:
                params.append(Var(namer.fresh(a.arg), t))
                owners.append(a.arg)
                grouped.append(params[-1])
        builder = Builder(src, gb, copied=frozenset(copied), seeds=seeds)
        gb.set_params(params)
        if example is not None:
            gb.set_example(example)
        try:
            with symbolic.building(gb):
                builder.tree_types = [p[0] if isinstance(p, tuple) else None for p in grouped]
                builder.bind_params([_bound_argument(k, p, gb) for k, p in enumerate(grouped)])
                result = builder.run_body()
            break
        except ListOfArrays as r:  # a list of arrays: allocated again with rows of that shape
            seeds.lists[r.key] = r.rows
        except CarryAttribute as r:  # an object's attribute changed in a loop: carried by it
            if r.attr in seeds.attributes.get(r.key, ()):
                raise AssertionError(f"attribute {r.attr} carried by {r.key} and still "
                                     "changed") from None
            seeds.attributes.setdefault(r.key, set()).add(r.attr)
        except CarryObject as r:  # an object rebound in a loop: its attributes carried
            if r.name in seeds.objects.get(r.key, ()):
                raise AssertionError(f"object {r.name} carried by {r.key} and still "
                                     "rebound") from None
            seeds.objects.setdefault(r.key, set()).add(r.name)
        except PeelLoop as r:  # a loop gives dicts keys, objects attributes: first built apart
            if r.key in seeds.peeled:
                raise AssertionError(f"loop {r.key} peeled and still peeled again") from None
            seeds.peeled.add(r.key)
        except UnrollLoop as r:  # a few iterations whose arrays change shape: unrolled
            if r.key in seeds.unrolled:
                raise AssertionError(f"loop {r.key} unrolled and still built as a loop") from None
            seeds.unrolled.add(r.key)
        except ReadAfterLoop as r:  # a number set in a loop, read after it: defined before
            if r.name in seeds.get(r.loop_key, {}):
                seeds.refused.add((r.loop_key, r.name))
            seeds.setdefault(r.loop_key, {})[r.name] = r.type
        except symbolic.WritesArgument as w:  # written under another name: copy it on entry too
            name = owners[params.index(w.param)]
            if name in copied:
                raise AssertionError(f"argument {name} copied and still written") from None
            copied.add(name)
        except JitgradError as e:
            raise e.with_during(f"building the graph of {src.qualname}")
    aux = None
    if has_aux:  # (value, aux): aux is returned beside the value, never differentiated
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise ShapeError(f"with has_aux=True, {src.qualname} must return a pair (value, "
                             "aux)", src.loc(_last_return(src.node)))
        result, aux = result
        gb.loc = src.loc(_last_return(src.node))
        aux = _aux_leaves(gb, aux)
    if isinstance(result, (tuple, list)) or result is None:
        raise ShapeError(f"{src.qualname} must return a scalar to be differentiated (it "
                         f"returns {'None' if result is None else 'a tuple'})",
                         src.loc(_last_return(src.node)))
    if isinstance(result, Sym) and result.ndim and not any_result and not one_entry and all(
            type(d) is int and d == 1 for d in dims_of(result.atom)):
        one_entry = True  # an array of one entry known while building: that entry (autograd's)
    if isinstance(result, Sym) and result.ndim and one_entry and not any_result:
        gb.loc = src.loc(_last_return(src.node))
        with symbolic.building(gb):  # (checked at run time to have one entry)
            result = symbolic.NUMPY[np.sum](result) if one_entry == "sum" else \
                builder.inline(numpy_written.one_entry, [result], {}, _last_return(src.node))
    if isinstance(result, Sym) and result.ndim and not any_result:
        raise ShapeError(f"{src.qualname} must return a scalar to be differentiated; it "
                         f"returns an array of rank {result.ndim} (reduce it, e.g. np.sum; an "
                         "array of one entry, its shape known while building, is taken as "
                         "that entry)",
                         src.loc(_last_return(src.node)))
    if isinstance(result, symbolic.COMPLEX_TYPES):
        raise UnsupportedError(f"{src.qualname} returns a complex number: a gradient is of a "
                               "real value (return abs(z) ** 2, z.real or z.imag)",
                               src.loc(_last_return(src.node)))
    atom = gb.atom(result)
    if atom.type.kind != "f":
        gb.loc = src.loc(_last_return(src.node))
        atom = gb.atom(symbolic.record("cast", gb.sym(atom), kind="f")) if isinstance(atom, Var) \
            else Const(float(atom.value))
    gb.block.stmts[:0] = gb.size_checks()
    fn = Function(src.node.name, params, gb.block, atom, src.loc(src.node), namer)
    fn.written_params = tuple((k, owners[k]) for k, p in enumerate(params)
                              if owners[k] in builder.copied and p.type.ndim)
    fn.grafted = tuple(gb.grafted)
    fn.draws = builder.draws.finish(params, gb.block)
    if fn.draws is not None:  # the draws travel as hidden parameters, after the user's
        fn.params += fn.draws.hidden
    if aux is not None:
        fn.aux_structure, fn.aux = aux
    verify(fn)
    return fn


def _last_return(node):
    for stmt in reversed(node.body):
        if isinstance(stmt, ast.Return):
            return stmt
    return node
