"""Source → AST → fence: reading a plain Python function and refusing what jitgrad cannot do.

`FunctionSource.of(fn)` reads and parses a function once (numba dispatchers and decorators are
unwrapped to the Python function; a jitgrad transform is refused) and runs the *fence*: every statement and expression form
jitgrad does not handle is refused there, before any work, with the user's file, line and a
caret. `frontend/build.py` then turns the fenced AST into IR for one call signature.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import inspect
import linecache
import sys
import textwrap
import types as pytypes
from typing import ClassVar

import numpy as np

from jitgrad.core.errors import Loc, SignatureError, UnsupportedError, refused
from jitgrad.frontend import caught_raises, partial_entry
from jitgrad.frontend.desugar import REDUCERS, Fresh, desugar
from jitgrad.frontend.desugar_forms import desugar_forms
from jitgrad.frontend.desugar_generators import desugar_generators
from jitgrad.frontend.desugar_grown import desugar_grown
from jitgrad.frontend.desugar_held import desugar_held
from jitgrad.frontend.desugar_lists import lower_lists
from jitgrad.frontend.desugar_nonlocal import desugar_nonlocal

# ----------------------------------------------------------------------------- reading source


@dataclasses.dataclass(eq=False)
class FunctionSource:
    fn: pytypes.FunctionType
    filename: str
    first_line: int  # line number of the `def` in the file
    indent: int  # columns removed by dedent
    node: ast.FunctionDef
    lines: list[str]  # the file's lines, for error messages
    names: set[str]  # every identifier the function uses (generated names avoid them)
    local_name: str | None = None  # a function defined inside another: its qualified name

    _cache: ClassVar[dict] = {}

    @classmethod
    def of(cls, fn) -> FunctionSource:
        code = getattr(fn, "__code__", None)
        key = (fn, code)
        hit = cls._cache.get(key)
        if hit is None:
            hit = cls._cache[key] = _read(fn)
        return hit

    @classmethod
    def remember(cls, fn, src: FunctionSource) -> None:
        """``fn``'s source is ``src`` (a function made while building, whose text is not in
        its file: `local_transforms.lift`)."""
        cls._cache[(fn, fn.__code__)] = src

    def loc(self, node: ast.AST | None) -> Loc:
        if node is None or not hasattr(node, "lineno"):
            node = self.node
        lineno = self.first_line + node.lineno - 1
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        return Loc(self.filename, lineno, node.col_offset + self.indent, line.rstrip("\n"))

    @property
    def qualname(self) -> str:
        return self.local_name or self.fn.__qualname__

    @property
    def param_names(self) -> list[str]:
        """The arguments of the function as an entry point (`check_entry`)."""
        return [a.arg for a in self.entry_params]

    @property
    def entry_params(self) -> list[ast.arg]:
        """The parameters of the function as an entry point (`check_entry`): its positional
        ones, then its ``*args`` (one argument, the tuple of the values passed there)."""
        check_entry(self)
        a = self.node.args
        return [*a.args, *([a.vararg] if a.vararg else ())]

    def wrt_positions(self, wrt) -> list[int]:
        """The argument positions ``wrt`` names (`resolve_wrt`)."""
        return resolve_wrt(self.param_names, self.qualname, wrt)

    def local(self, node: ast.FunctionDef) -> FunctionSource:
        """A function defined inside this one (its `LocalDef`), read from the same file."""
        return dataclasses.replace(self, node=node,
                                   local_name=f"{self.qualname}.<locals>.{node.name}")


class LocalDef(ast.stmt):
    """A ``def`` inside the function, set aside: walks over the enclosing body do not enter
    it (its returns and assignments are its own); the builder binds its name when it runs."""

    _fields = ()

    def __init__(self, node: ast.FunctionDef):
        super().__init__(lineno=node.lineno, col_offset=node.col_offset)
        self.node = node


class _SetAsideLocalDefs(ast.NodeTransformer):
    def visit_FunctionDef(self, node):
        self.generic_visit(node)  # the defs inside it first
        return LocalDef(node)


def unwrap(fn):
    """The plain Python function behind a Numba dispatcher or a wrapper object (lru_cache's).
    A decorator's wrapper that is a Python function is that function: its own code runs
    around the one it wraps (``@wraps(f) def w(*a): return 2 * f(*a)``), so reading the
    wrapped function's source through ``__wrapped__`` would lose it. A jitgrad transform
    (a gradient, a Hessian, a Jacobian: it says so with ``jitgrad_transform``) is refused: its
    ``__wrapped__`` is the function it differentiates, whose source is not its own."""
    kind = getattr(fn, "jitgrad_transform", None)
    if isinstance(kind, str):
        inner = getattr(getattr(fn, "__wrapped__", None), "__qualname__", "a function")
        raise UnsupportedError(
            f"the jitgrad.{kind} of {inner} is not a plain Python function: jitgrad.grad, "
            "value_and_grad, jvp, vjp, jacobian, hessian and hvp take it (grad(grad(f)) is "
            "the second derivative), and so does a differentiated function that calls it; "
            "this entry point does not")
    for attr in ("py_func", "__wrapped__"):
        if attr == "__wrapped__" and isinstance(fn, pytypes.FunctionType):
            break  # a decorator's wrapper (functools.wraps) is code of its own: read it
        inner = getattr(fn, attr, None)
        if inner is not None and inner is not fn:
            return unwrap(inner)
    return fn


def signature_of(fn) -> inspect.Signature:
    """``inspect.signature(fn)``, of a decorator's wrapper itself where it is a Python function
    (`unwrap` reads its code, not that of the function it wraps)."""
    fn = partial_entry.ufunc_function(fn)  # np.tanh: the function written for it
    return inspect.signature(fn, follow_wrapped=not isinstance(fn, pytypes.FunctionType))


def resolve_wrt(names: list[str], qualname: str, wrt) -> list[int]:
    """The argument positions ``wrt`` names among ``names``: a position (negative counts from
    the end, as in Python), a name, or a tuple or list of them. Anything else, a position out
    of range, a repeated argument or an empty tuple is a `SignatureError`. Every entry point
    resolves its ``wrt`` here."""
    positions = []
    for w in (wrt if isinstance(wrt, (tuple, list)) else (wrt,)):
        if isinstance(w, str):
            if w not in names:
                raise SignatureError(f"{qualname} has no argument named {w!r} (its "
                                     f"arguments: {', '.join(names)})")
            k = names.index(w)
        elif isinstance(w, (int, np.integer)) and not isinstance(w, (bool, np.bool_)):
            if not -len(names) <= int(w) < len(names):
                raise SignatureError(f"wrt={int(w)} is out of range: {qualname} takes "
                                     f"{len(names)} arguments ({', '.join(names)}; a *args "
                                     "parameter is one argument, a tuple, whose gradient is "
                                     "a tuple)")
            k = int(w) % len(names)
        else:
            raise SignatureError(f"wrt must name arguments by position or name, got {w!r}")
        if k in positions:
            raise SignatureError(f"wrt names argument {names[k]!r} twice")
        positions.append(k)
    if not positions:
        raise SignatureError("wrt is empty: name at least one argument to differentiate")
    return positions


def check_entry(src: FunctionSource) -> None:
    """The differentiated function itself takes its arguments by position: each is a value of
    the call signature, its ``*args`` one tuple argument (a tree). (A function it calls may
    take any parameters: it is built inline, its ``*args`` a tuple and its ``**kwargs`` a
    dict of the values passed.)"""
    args = src.node.args
    if getattr(src.node, "jitgrad_generator", False):
        raise UnsupportedError(f"{src.qualname} is a generator: jitgrad differentiates a "
                               "function that returns a number (it may loop over a "
                               "generator's items)", src.loc(src.node))
    if args.kwarg or args.posonlyargs or any(d is None for d in args.kw_defaults):
        raise UnsupportedError(
            "the differentiated function takes **kwargs, positional-only or keyword-only "
            "parameters without defaults: name its arguments (`def f(x, y)`), or wrap it "
            "(`def loss(x, y): return f(x, y)`); the functions it calls may take any parameters",
            src.loc(src.node))


def _read(fn) -> FunctionSource:
    fn = partial_entry.rule_function(fn)  # a custom_vjp function: a call of it (its rule)
    fn = partial_entry.ufunc_function(unwrap(fn))  # np.tanh: ``def tanh(x)`` written for it
    if isinstance(fn, functools.partial):  # its remaining parameters, as a function's
        fn = partial_entry.as_function(fn) or fn
    name = getattr(fn, "__qualname__", repr(fn))
    if isinstance(fn, functools.partial):
        raise UnsupportedError(f"{name} leaves a keyword-only parameter without a default (a "
                               "keyword bound before a positional one): write the function "
                               "(`def loss(a, c): return f(a, 2.0, c)`)")
    if not isinstance(fn, pytypes.FunctionType):
        raise UnsupportedError(f"{name} is not a plain Python function (a {type(fn).__name__})")
    code = fn.__code__
    filename = code.co_filename
    where = Loc(filename, code.co_firstlineno, 0,
                linecache.getline(filename, code.co_firstlineno).rstrip("\n"))
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        raise UnsupportedError(f"{name} is a coroutine", where)
    if fn.__name__ == "<lambda>":
        return _read_lambda(fn, where)
    try:
        # (by its code: inspect follows a decorator's __wrapped__ to the function it wraps)
        src_lines, first = inspect.getsourcelines(fn.__code__ if hasattr(fn, "__wrapped__")
                                                  else fn)
    except (OSError, TypeError) as e:
        raise UnsupportedError(f"the source of {name} is not available ({e}); jitgrad reads "
                               "the function's source, so it must live in a file", where) from None
    text = "".join(src_lines)
    dedented = textwrap.dedent(text)
    indent = len(src_lines[0]) - len(src_lines[0].lstrip()) if src_lines else 0
    if len(dedented) == len(text):
        indent = 0
    tree = ast.parse(dedented)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise UnsupportedError(f"{name}: could not find its `def` in the source", where)
    # The file may have changed since the function was imported: its line then starts another
    written = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    # (the code's own name: functools.wraps gives a decorator's inner function another
    # __name__, autograd's `flatten` is `nary_operator`)
    if node.name != code.co_name or tuple(written) != params:
        raise UnsupportedError(
            f"the source of {name} in {filename} has changed since it was imported (line "
            f"{first} now holds `def {node.name}(...)`): import it again, or restart", where)
    _mangle_private_names(node, code)
    return _prepared(fn, node, filename, first, indent,
                     linecache.getlines(filename) or text.splitlines(True))


def _mangle_private_names(node: ast.FunctionDef, code) -> None:
    """``self.__const_c`` in a method of ``class SkewStudent``: the attribute
    ``_SkewStudent__const_c``, as Python mangles a private name written in a class (the names
    the compiled code reads say which)."""
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo += [k for k in c.co_consts if isinstance(k, pytypes.CodeType)]
    for sub in ast.walk(node):
        attr = sub.attr if isinstance(sub, ast.Attribute) else None
        if attr is None or not attr.startswith("__") or attr.endswith("__") or attr in names:
            continue
        mangled = [n for n in names if n.endswith(attr) and n.startswith("_")
                   and not n.startswith("__") and n[1:-len(attr)].isidentifier()]
        if len(mangled) == 1:
            sub.attr = mangled[0]


def _read_lambda(fn, where) -> FunctionSource:
    """``jitgrad.grad(lambda p: loss(p, x, y))``: the lambda's expression, found in its file
    by its line and parameters (and, where one line holds several such lambdas, by the
    column its code starts at), read as ``def lambda_(p): return loss(p, x, y)``."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise UnsupportedError("the source of this lambda is not available: jitgrad reads the "
                               "function's source, so it must live in a file", where)
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        raise UnsupportedError("the file holding this lambda no longer parses", where) from None
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno
             and tuple(a.arg for a in (*n.args.posonlyargs, *n.args.args,
                                       *n.args.kwonlyargs)) == params]
    if len(found) > 1:  # several on the line: the one whose body holds the code's start
        positions = code.co_positions() if hasattr(code, "co_positions") else ()  # 3.11+
        cols = [p[2] for p in positions if p[0] == code.co_firstlineno
                and p[2] is not None and p[3] is not None and p[3] > p[2]]  # (not RESUME)
        start = min(cols) if cols else -1
        found = [n for n in found if n.body.col_offset <= start
                 and (n.body.end_lineno, n.body.end_col_offset) >= (code.co_firstlineno, start)]
        found = found[-1:]  # the innermost
    if len(found) != 1:
        raise UnsupportedError("jitgrad could not find this lambda in its file (has the file "
                               "changed since it was imported?); define it with `def`", where)
    lam = found[0]
    node = ast.FunctionDef(name="lambda_", args=lam.args, body=[ast.Return(lam.body)],
                           decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:
        node.type_params = []
    ast.copy_location(node, lam)
    node.body[0].lineno, node.body[0].col_offset = lam.body.lineno, lam.body.col_offset
    ast.fix_missing_locations(node)
    return _prepared(fn, node, code.co_filename, 1, 0, lines)


def _prepared(fn, node, filename, first, indent, lines) -> FunctionSource:
    """The function's AST rewritten to the forms the builder takes, then fenced."""
    fresh = Fresh.of(node)
    desugar_generators(node, fresh, FunctionSource(fn, filename, first, indent, node, lines,
                                                   set()).loc)
    desugar_nonlocal(node, fresh, FunctionSource(fn, filename, first, indent, node, lines,
                                                 set()).loc)
    where = FunctionSource(fn, filename, first, indent, node, lines, set()).loc
    rebound = _not_builtins(fn, node)
    outer = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(
        n.ctx, (ast.Store, ast.Del))} | {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
    for nested in _nested_defs(node):  # innermost first: each rewritten as its own function
        desugar_forms(nested, fn, fresh)  # (`v_func = lambda x: ...` inside a nested def)
        desugar(nested, rebound, fresh)
        lower_lists(nested, fn, fresh, where, bound=outer)
    desugar_forms(node, fn, fresh)
    desugar(node, rebound, fresh)
    desugar_held(node, fresh)
    desugar_grown(node, fn, fresh)
    lower_lists(node, fn, fresh, where)
    desugar_forms(node, fn, fresh)  # (a walrus or a lambda in a comprehension, now a loop)
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    names |= {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
    src = FunctionSource(fn, filename, first, indent, node, lines, names)
    fence(src)
    node.body = [_SetAsideLocalDefs().visit(stmt) for stmt in node.body]
    return src


def _nested_defs(node) -> list:
    """The functions defined inside ``node`` (at any depth), the innermost first."""
    out = []
    for child in ast.iter_child_nodes(node):
        out += _nested_defs(child)
        if isinstance(child, ast.FunctionDef):
            out.append(child)
    return out


def _not_builtins(fn, node) -> set[str]:
    """The reductions' names (`desugar.REDUCERS`) that mean something else in ``fn``: assigned
    or bound in it, or a global or closure variable of that name."""
    bound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
             and isinstance(n.ctx, (ast.Store, ast.Del))}
    bound |= {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
    bound |= {d.name for d in ast.walk(node) if isinstance(d, ast.FunctionDef)}
    bound |= set(fn.__code__.co_freevars) | set(fn.__globals__)
    return {name for name in REDUCERS if name in bound}


# ----------------------------------------------------------------------------- the fence

_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.If, ast.For, ast.While,
               ast.Break, ast.Continue, ast.Pass, ast.Expr, ast.Assert, ast.Raise, ast.Try,
               ast.Import, ast.ImportFrom, ast.With, ast.Delete, ast.Global)
_EXPRESSIONS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name, ast.Constant,
                ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.IfExp, ast.Dict,
                ast.Starred, ast.JoinedStr, ast.Set, ast.SetComp, ast.DictComp, ast.FormattedValue, ast.withitem, ast.keyword, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
_REFUSED_NAMES = {
    ast.ClassDef: "a class definition",
    ast.AsyncFunctionDef: "an async function", ast.Lambda: "a lambda", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Await: "await",
    ast.Nonlocal: "nonlocal",
    ast.Match: "match",
}
# refused with the form that works (a key of `errors.INSTEAD`)
_REFUSED_WITH_HINT = {
    ast.ListComp: ("a list comprehension", "list comprehension"),
    ast.GeneratorExp: ("a generator expression", "generator expression"),
    ast.NamedExpr: ("the walrus operator here", "walrus"),
}
if hasattr(ast, "TryStar"):
    _REFUSED_NAMES[ast.TryStar] = "try/except*"


_CLASS_DECORATORS = {"staticmethod", "classmethod", "property"}


def fence(src: FunctionSource) -> None:
    """Refuse, with its location, the first construct jitgrad does not support."""
    node = src.node
    # Decorators (numba.njit, jitgrad.grad) are fine: jitgrad reads the undecorated body.
    # Strings and f-strings are values known while building (a switch's value, a message, a
    # label); the builder refuses one where a number is needed.
    for stmt in node.body:
        for sub in ast.walk(stmt):
            what = _REFUSED_NAMES.get(type(sub))
            if what:
                raise UnsupportedError(f"{what} is not supported", src.loc(sub))
            if getattr(sub, "jitgrad_map_filter", False):
                raise UnsupportedError(
                    "map or filter here (jitgrad takes one in a `for`, unpacked, or under "
                    "list, tuple, sum, max, min, any or all) is not supported; "
                    "write the loop or a list comprehension", src.loc(sub))
            if type(sub) in _REFUSED_WITH_HINT:
                raise refused(*_REFUSED_WITH_HINT[type(sub)], src.loc(sub))
            if isinstance(sub, ast.Dict) and not all(
                    k is None or isinstance(k, ast.Constant) and isinstance(k.value, (str, int))
                    and not isinstance(k.value, bool) for k in sub.keys):
                raise refused("a dict whose keys are not constants",
                              "dict", src.loc(sub))
            if isinstance(sub, ast.FunctionDef):  # a nested function: built where called
                for d in sub.decorator_list:  # (its decorators: applied where it is defined,
                    if isinstance(d, ast.Name) and d.id in _CLASS_DECORATORS and (  # build)
                            d.id not in src.fn.__globals__):
                        raise UnsupportedError(
                            f"a decorator on a nested function is not supported here: "
                            f"@{d.id} makes a method of a class; define the function without "
                            "it", src.loc(sub))
                continue
            if isinstance(sub, ast.stmt) and not isinstance(sub, _STATEMENTS):
                raise UnsupportedError(f"the statement {type(sub).__name__} is not supported",
                                       src.loc(sub))
            if isinstance(sub, ast.expr) and not isinstance(sub, _EXPRESSIONS):
                raise UnsupportedError(f"the expression {type(sub).__name__} is not supported",
                                       src.loc(sub))
            if isinstance(sub, ast.Try):
                _fence_try(src, sub, stmt)
            if isinstance(sub, ast.Constant) and isinstance(sub.value, bytes):
                raise UnsupportedError("bytes are not supported", src.loc(sub))


# ----------------------------------------------------------------------------- try/except
# The body of a `try` is taken and its handlers dropped only where nothing in it can raise at
# run time without the compiled code raising too: then the handler either never runs, or the
# call fails loudly where Python would have run it. Anything that may raise in Python but not
# in compiled code (an index Numba does not check, a division that gives inf, `math.sqrt` of
# a negative that gives nan, a call that is not NumPy's) is refused, naming what may raise.
# Allowed: NumPy's arithmetic and functions; `x.shape[k]` (its rank is checked while
# building: a wrong rank is refused then); and `np.linalg`'s functions, which raise
# `LinAlgError` in compiled code exactly where NumPy does (the same LAPACK check), so a call
# that would take the handler raises instead, with the user's line.

_SAFE_TRY_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.If,
                   ast.Return)
_SAFE_TRY_EXPRS = (ast.Name, ast.Constant, ast.Attribute, ast.Tuple, ast.List, ast.BinOp,
                   ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp, ast.Call, ast.keyword,
                   ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
_SAFE_TRY_OPS = (ast.Add, ast.Sub, ast.Mult, ast.MatMult)
# array methods that raise for no array (without arguments)
_SAFE_METHODS = frozenset({"flatten", "ravel", "copy", "sum", "mean", "transpose", "cumsum",
                           "prod", "conj", "conjugate", "any", "all"})


# `math` functions that raise ValueError outside their domain, and the test of it (on ``v``,
# the argument's source); a try may check them (`guards`)
MATH_DOMAINS = {"sqrt": "{v} < 0.0", "log": "{v} <= 0.0", "log10": "{v} <= 0.0",
                "log2": "{v} <= 0.0", "log1p": "{v} <= -1.0", "acos": "abs({v}) > 1.0",
                "asin": "abs({v}) > 1.0", "acosh": "{v} < 1.0", "atanh": "abs({v}) >= 1.0"}
_GUARDED_OPS = (ast.Div, ast.FloorDiv, ast.Mod)
_GUARDED_STMTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass, ast.Return)


def _math_domain(src: FunctionSource, node) -> str | None:
    """The name of the `math` function ``node`` calls with one argument, if it is one of
    `MATH_DOMAINS`."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
            and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
        return None
    module = src.fn.__globals__.get(node.func.value.id)
    name = node.func.attr
    if getattr(module, "__name__", None) == "math" and name in MATH_DOMAINS:
        return name
    return None


def cholesky_call(src: FunctionSource, node) -> bool:
    """Whether ``node`` calls np.linalg.cholesky or scipy.linalg.cholesky on a matrix given
    first (LinAlgError where it is not positive definite: a try tests that at run time)."""
    if not (isinstance(node, ast.Call) and node.args and not isinstance(node.args[0],
                                                                        ast.Starred)):
        return False
    func, parts = node.func, []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    obj = src.fn.__globals__.get(func.id)
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    scipy_linalg = sys.modules.get("scipy.linalg")
    return obj is not None and (obj is np.linalg.cholesky or scipy_linalg is not None
                                and obj is getattr(scipy_linalg, "cholesky", None))


def guards(src: FunctionSource, stmt) -> list[tuple[str, ast.expr]]:
    """What may raise in ``stmt`` that a try checks at run time, in the order Python
    evaluates it: ("zero", divisor) for a division, a floor division or a modulo (Python
    raises ZeroDivisionError for a zero of its own numbers), (name, argument) for the `math`
    functions of `MATH_DOMAINS` (ValueError outside their domain), ("cholesky", matrix) for a
    Cholesky factorisation (LinAlgError where the matrix is not positive definite)."""
    found = []

    def walk(node):
        for child in ast.iter_child_nodes(node):
            walk(child)
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, _GUARDED_OPS):
            found.append(("zero", node.right if isinstance(node, ast.BinOp) else node.value))
        name = _math_domain(src, node)
        if name is not None:
            found.append((name, node.args[0]))
        if cholesky_call(src, node):
            found.append(("cholesky", node.args[0]))
    walk(stmt)
    return found


def _may_raise(src: FunctionSource, node: ast.AST, guarded: bool = False,
               deferred: list | None = None) -> str | None:
    """What in ``node`` may raise in Python where compiled code would not (a phrase), or None:
    NumPy's functions (not random; linalg raises in both), + - * @, ``x.shape[k]``,
    comparisons and branches are taken as safe; with ``guarded``, also what a try checks at
    run time (`guards`). With ``deferred`` (a list), a subscript is taken too, its index
    added to the list for the build to check (`mark_try_indices`)."""
    if guarded and (isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(
            node.op, _GUARDED_OPS) or _math_domain(src, node) is not None
            or cholesky_call(src, node)):
        return next((found for child in ast.iter_child_nodes(node)
                     if (found := _may_raise(src, child, guarded))), None)
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and not isinstance(node.op, _SAFE_TRY_OPS) \
            and _ARITHMETIC_CAUGHT[-1]:
        return f"`{ast.unparse(node)}` (a division or power may raise ZeroDivisionError " \
               "or OverflowError in Python)"
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape" and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)):
        return _may_raise(src, node.value.value)  # x.shape[0]: its rank is known while building
    if isinstance(node, ast.Subscript):
        phrase = f"`{ast.unparse(node)}` (an index may raise IndexError)"
        if deferred is None:
            return phrase
        deferred.append((node.slice, phrase))
        return _may_raise(src, node.value, guarded, deferred) or _may_raise(
            src, node.slice, guarded, deferred)
    if isinstance(node, ast.Slice) and deferred is not None:  # bounds are clipped: no raise
        return next((found for part in (node.lower, node.upper, node.step) if part is not None
                     if (found := _may_raise(src, part, guarded, deferred))), None)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _SAFE_METHODS and not node.args and not node.keywords:
        return _may_raise(src, node.func.value)  # x.flatten(), np.array(...).copy()
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
            and not node.keywords and not isinstance(node.args[0], ast.Starred)
            and src.fn.__globals__.get(node.func.id, getattr(builtins, node.func.id, None))
            is builtins.len):
        # len(x): a size known while building (len of a number is refused then)
        return _may_raise(src, node.args[0], guarded, deferred)
    if isinstance(node, ast.Call):
        obj = _called_object(src, node)
        where = str(getattr(obj, "__module__", None) or getattr(obj, "__name__", "") or "")
        if isinstance(obj, np.ufunc):
            where = "numpy"
        if not callable(obj) or not (where == "numpy" or where.startswith("numpy.")):
            return f"`{ast.unparse(node)}` (a call that is not a NumPy function may raise)"
        if where.startswith("numpy.random"):
            return f"`{ast.unparse(node)}` (it may raise)"
    if isinstance(node, ast.stmt) and not isinstance(node, _SAFE_TRY_STMTS):
        return f"a {type(node).__name__.lower()} statement"
    if isinstance(node, ast.expr) and not isinstance(node, _SAFE_TRY_EXPRS):
        return f"`{ast.unparse(node)}`"
    for child in ast.iter_child_nodes(node):
        found = _may_raise(src, child, guarded, deferred)
        if found:
            return found
    return None


def _called_object(src: FunctionSource, call: ast.Call):
    """The object ``call`` calls, where its function is a global name or a chain of attributes
    of one (``np.linalg.cholesky``); None otherwise."""
    func, parts = call.func, []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    obj = src.fn.__globals__.get(func.id) if isinstance(func, ast.Name) else None
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    return obj


def _linalg_call(src: FunctionSource, node) -> bool:
    """Whether ``node`` calls a function of np.linalg or scipy.linalg (LinAlgError)."""
    if not isinstance(node, ast.Call):
        return False
    obj = _called_object(src, node)
    where = str(getattr(obj, "__module__", None) or "")
    return callable(obj) and where.startswith(("numpy.linalg", "scipy.linalg"))


def _catches(src: FunctionSource, node: ast.Try, error: type) -> bool:
    """Whether a handler of ``node`` may catch ``error`` (a bare except, or a type not known
    now, is taken as catching it)."""
    for h in node.handlers:
        if h.type is None:
            return True
        for k in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]):
            t = caught_raises.named_global(src, k)
            if not (isinstance(t, type) and issubclass(t, BaseException)) or issubclass(
                    error, t):
                return True
    return False


def _catches_index_error(src: FunctionSource, node: ast.Try) -> bool:
    """Whether a handler of ``node`` may catch IndexError (one whose type is not a builtin
    exception known now is taken as catching it)."""
    for h in node.handlers:
        kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        for k in kinds:
            t = None
            if isinstance(k, ast.Name):
                t = src.fn.__globals__.get(k.id, getattr(builtins, k.id, None))
            if not (isinstance(t, type) and issubclass(t, BaseException)) or issubclass(
                    IndexError, t):
                return True
    return False


def _catches_zero_division_only(src: FunctionSource, node: ast.Try) -> bool:
    """Whether every handler of ``node`` names ZeroDivisionError alone, without ``as``."""
    return bool(node.handlers) and all(
        h.type is not None and h.name is None and not isinstance(h.type, ast.Tuple)
        and caught_raises.named_global(src, h.type) is ZeroDivisionError for h in node.handlers)


def _catches_type_errors_only(src: FunctionSource, node: ast.Try) -> bool:
    """Whether every handler of ``node`` names builtin exceptions that the types of the values
    decide (TypeError, AttributeError, NameError and their subclasses), without ``as``:
    the build decides such a try (`build_try.Handlers.decided_try`)."""
    for h in node.handlers:
        kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        for k in kinds:
            t = src.fn.__globals__.get(k.id, getattr(builtins, k.id, None)) if isinstance(
                k, ast.Name) else None
            if not (isinstance(t, type) and issubclass(t, (TypeError, AttributeError,
                                                           NameError))) or h.name:
                return False
    return bool(node.handlers)


def mark_try_indices(found: list) -> None:
    """The subscripts of a try's body that its handlers do not catch IndexError from: each
    index (an `ast` node) is marked with the phrase that refuses it, and the build accepts it
    only where the compiled code raises IndexError exactly where NumPy does (masks and integer
    arrays, whose positions are checked at run time; slices, which never raise):
    `build_index.Indexing.check_try_index`."""
    for index, phrase in found:
        index.jitgrad_try_index = phrase


def _under_if(root, node) -> bool:
    """Whether ``node`` is inside an ``if`` statement of ``root``."""
    return root is not None and any(isinstance(n, ast.If) and n is not node and any(
        m is node for m in ast.walk(n)) for n in ast.walk(root))


def _loops_around(root, node) -> list:
    """The ``for`` statements of ``root`` (itself one of them) that hold ``node``."""
    if root is node:
        return []
    for child in ast.iter_child_nodes(root):
        inner = _loops_around(child, node)
        if inner is not None:
            return [root, *inner] if isinstance(root, ast.For) else inner
    return None


def _rebinds(loop: ast.For, names: set) -> bool:
    """Whether ``loop``'s body may bind one of ``names`` again."""
    for sub in ast.walk(ast.Module(body=loop.body + loop.orelse, type_ignores=[])):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)) and (
                sub.id in names):
            return True
        if isinstance(sub, (ast.Global, ast.Nonlocal)) and names & set(sub.names):
            return True
    return False


def _in_range(loops: list, index, array) -> bool:
    """Whether ``array[index]`` is proven in range: ``index`` the target of a loop around it
    over ``range(len(array))`` or ``range(array.shape[0])``, which binds neither again."""
    if not (isinstance(index, ast.Name) and isinstance(array, ast.Name)):
        return False
    for loop in loops:
        it = loop.iter
        if not (isinstance(loop.target, ast.Name) and loop.target.id == index.id
                and isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id == "range" and len(it.args) == 1 and not it.keywords):
            continue
        n = it.args[0]
        if ast.dump(n) not in (ast.dump(ast.parse(f"len({array.id})", mode="eval").body),
                               ast.dump(ast.parse(f"{array.id}.shape[0]", mode="eval").body)):
            continue
        return not _rebinds(loop, {index.id, array.id, "range", "len"})
    return False


# whether the try being fenced may catch what a division or a power raises (ZeroDivisionError,
# OverflowError: ArithmeticError); where it cannot, they raise through it as outside a try
_ARITHMETIC_CAUGHT = [True]


def _fence_try(src: FunctionSource, node: ast.Try, root=None) -> None:
    caught_raises.inline_handlers(src, node)  # ``raise E`` a handler catches: its body
    _ARITHMETIC_CAUGHT.append(_catches(src, node, ZeroDivisionError)
                              or _catches(src, node, OverflowError))
    try:
        _fence_try_body(src, node, root)
    finally:
        _ARITHMETIC_CAUGHT.pop()


def _fence_try_body(src: FunctionSource, node: ast.Try, root=None) -> None:
    """A `try` whose body cannot raise runs its body (and ``else``, ``finally``). One whose
    body is assignments and expressions where only divisions and `math`'s domain errors may
    raise is checked at run time (``jitgrad_guarded``: `build_stmts.Statements.stmt_Try`).
    A subscript, where no handler catches IndexError, is left to the build to check
    (`mark_try_indices`). Otherwise it is refused: the compiled code does not catch
    exceptions; where its handlers catch only what Python raises for the types of the
    values, whatever they are (TypeError, AttributeError, NameError), the build decides it
    (``jitgrad_refusal``: `build_try.Handlers.decided_try`), or refuses it there; so is one
    under an ``if`` (refused where it is built: not in a branch the build does not take)."""
    if node.handlers and all(isinstance(s, _GUARDED_STMTS) for s in node.body) and all(
            h.name is None for h in node.handlers) and not any(
            _may_raise(src, s, guarded=True) for s in node.body) and any(
            guards(src, s) for s in node.body):
        node.jitgrad_guarded = True
        return
    deferred = None if _catches_index_error(src, node) else []
    for stmt in node.body:
        if (isinstance(stmt, ast.Expr) and _linalg_call(src, stmt.value)
                and _catches(src, node, np.linalg.LinAlgError)):
            raise UnsupportedError(
                f"`{ast.unparse(stmt.value)}` inside a try whose handler catches LinAlgError, "
                "its result unused: the compiled gradient does not catch exceptions, and a "
                "call whose value is not read is not made; test the matrix with "
                "`np.linalg.cholesky` alone in the try (jitgrad checks that at run time), or "
                "use the result", src.loc(stmt))
        found = _may_raise(src, stmt, deferred=deferred)
        if found and _catches_zero_division_only(src, node) and not any(
                isinstance(s, (ast.Break, ast.Continue)) for b in node.body
                for s in ast.walk(b)):
            # only a zero divisor is caught: the build checks each division of numbers at run
            # time and raises there (`build_try.Handlers.zero_checked_try`)
            node.jitgrad_zero_checked = True
            return
        if found:
            refusal = UnsupportedError(
                "try/except is supported only around code that cannot raise (the compiled "
                f"gradient does not catch exceptions); here {found}: test the condition "
                "with `if` instead, or move the call out of the try", src.loc(stmt))
            if not _catches_type_errors_only(src, node) and not _under_if(root, node):
                raise refusal
            # decided where it is built, or refused there (a try under an `if` the build
            # may not take, `if fprime:` of a constant, is refused only where it is built)
            node.jitgrad_refusal = refusal
            return
    loops = _loops_around(root, node) or [] if root is not None else []
    for sub in ast.walk(ast.Module(body=node.body, type_ignores=[])):
        if isinstance(sub, ast.Subscript) and _in_range(loops, sub.slice, sub.value):
            sub.slice.jitgrad_in_range = True  # read by `build_index.Indexing.check_try_index`
    mark_try_indices(deferred or [])
