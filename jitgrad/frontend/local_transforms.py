"""jitgrad's transforms of a function defined inside the differentiated one (issue #43).

``grad(inner)(2.0)`` in a body, where ``inner`` is a `LocalFunction` that reads the enclosing
function's values (``inner = lambda y: x * y``). The factory call (``grad(inner)``) makes a
`LocalTransform`, which remembers the factories and their arguments. When it is called, the
function is *lifted* (`lift`): each name it reads from the enclosing functions becomes, as read
at that moment (as Python reads a closure's cell when the function runs),

- a parameter of its own after its own parameters, where the value holds a run-time value (an
  array, a number computed from the arguments, a tuple of them), or
- a constant of its globals, where the value is known while building (a number, a module, a
  function, a tuple of them).

The transform of the lifted function is then called as ``jitgrad.grad(g)(y, x)`` of a
module-level ``g`` is (`custom_call.build_transform_call`): its trace grafted into the graph,
so the derivative with respect to the values it closed over flows through it.

Guarantees: the lifted function reads exactly the values the local one would at that call; a
value it cannot take (another function defined inside, a list being built) is refused by name,
as is a function with ``*args``, keyword-only or ``**kwargs`` parameters.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import types as pytypes

from jitgrad.core import pytree
from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.build_ast import LocalFunction, fn_name
from jitgrad.frontend.parse import FunctionSource, LocalDef
from jitgrad.lang.symbolic import Sym

DEFINE_OUTSIDE = ("define it outside (at module level, passing what it closed over as "
                  "arguments), and jitgrad builds its transform inside this gradient")


class LocalTransform:
    """``factory(inner, ...)`` of a `LocalFunction` ``inner`` (or of another LocalTransform):
    made when it is called (`build_call`), the closure read then."""

    def __init__(self, factory, args: tuple, kwargs: dict):
        self.factory, self.args, self.kwargs = factory, args, kwargs
        self.inner = next(a for a in (*args, *kwargs.values())
                          if isinstance(a, (LocalFunction, LocalTransform)))
        self.local = self.inner if isinstance(self.inner, LocalFunction) else self.inner.local
        self.__qualname__ = f"{fn_name(factory)} of {self.local.__qualname__}"

    def __call__(self, *args, **kwargs):  # a function value; only the builder calls it
        raise TypeError(f"{self.__qualname__} is built by the builder")

    def made(self, lifted):
        """The transform itself, of the lifted function."""
        inner = lifted if self.inner is self.local else self.inner.made(lifted)
        args = tuple(inner if a is self.inner else a for a in self.args)
        kwargs = {k: inner if v is self.inner else v for k, v in self.kwargs.items()}
        return self.factory(*args, **kwargs)


def takes(fn_args) -> bool:
    """Whether a factory's arguments (``jitgrad.grad(inner, ...)``) hold a local function."""
    return any(isinstance(a, (LocalFunction, LocalTransform)) for a in fn_args)


def build_call(builder, transform: LocalTransform, args, kwargs, node):
    """``grad(inner)(y)``: the transform of ``inner`` lifted, called with ``y`` and the
    values ``inner`` closed over."""
    local = transform.local
    sig = local.signature()
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
           for p in sig.parameters.values()):
        raise UnsupportedError(
            f"{transform.__qualname__}: a function defined inside the differentiated one, with "
            f"*args, keyword-only or **kwargs parameters; name its parameters, or {DEFINE_OUTSIDE}",
            builder.loc(node))
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UnsupportedError(f"{transform.__qualname__}: {e}", builder.loc(node)) from None
    bound.apply_defaults()
    lifted, closed = lift(local, node)
    made = transform.made(lifted)
    values = dict(zip(sig.parameters, bound.args))
    values.update(closed)
    return builder.call(made, tuple(values[name] for name in made.param_names), {}, node)


def lift(local: LocalFunction, node) -> tuple[pytypes.FunctionType, dict]:
    """``local`` as a plain function of its own parameters and then of the run-time values it
    reads from the enclosing functions (returned with those values, by name), the constants it
    reads from them in its globals."""
    src, builder = local.src, local.builder
    if any(isinstance(n, ast.Nonlocal) for n in _nodes(src.node)):
        raise UnsupportedError(f"a transform of {_what(local)}, a function defined inside the "
                               "differentiated one, that assigns a `nonlocal` name; "
                               + DEFINE_OUTSIDE, builder.loc(node))
    run_time, constants = {}, {}
    for name in free_names(src.node):
        if not _encloses(builder, name):
            continue  # a global or a builtin: the lifted function's globals are the same
        value = builder.lookup(name, node)
        if any(isinstance(v, Sym) for v in pytree.leaves(value)) if pytree.is_tree(value) \
                else isinstance(value, Sym):
            run_time[name] = value
        elif _constant(value):
            constants[name] = value
        else:
            raise UnsupportedError(
                f"a transform of {_what(local)}, a function defined inside the differentiated one, "
                f"which reads `{name}` ({_kind(value)}) from the function around it; "
                f"pass `{name}` as an argument, or {DEFINE_OUTSIDE}", builder.loc(node))
    tree = copy.deepcopy(src.node)
    tree.args.args += [ast.arg(arg=name, lineno=tree.lineno, col_offset=tree.col_offset)
                       for name in run_time]
    tree.args.defaults = []  # (every argument is passed: `build_call` binds the defaults)
    params = [a.arg for a in (*tree.args.posonlyargs, *tree.args.args)]
    module = compile(f"def {tree.name}({', '.join(params)}): pass", src.filename, "exec")
    code = next(c for c in module.co_consts if isinstance(c, pytypes.CodeType))  # (its text is
    code = code.replace(co_firstlineno=src.first_line + tree.lineno - 1)  # `tree`, remembered)
    fn = pytypes.FunctionType(code, {**src.fn.__globals__, **constants}, tree.name)
    fn.__qualname__ = local.__qualname__
    FunctionSource.remember(fn, dataclasses.replace(src, fn=fn, node=tree))
    return fn, run_time


def _encloses(builder, name) -> bool:
    """Whether ``name`` is a variable of a function around the local one (not a global)."""
    b = builder
    while b is not None:
        if name in b.env:
            return True
        if b.enclosing is None:
            return b.src.local_name is None and name in b.src.fn.__code__.co_freevars
        b = b.enclosing
    return False


def _constant(value) -> bool:
    """A value known while building that the lifted function can read as a global."""
    if isinstance(value, tuple):
        return all(_constant(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str)) or (
        isinstance(value, (pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType,
                           type)) or (callable(value) and not isinstance(
                               value, (LocalFunction, LocalTransform)) and inspect.isroutine(value)))


def free_names(fn: ast.FunctionDef) -> list[str]:
    """The names ``fn`` reads that no scope inside it binds, in the order they first appear:
    the names it reads from the functions around it (or its globals)."""
    bound = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                             *([fn.args.vararg] if fn.args.vararg else ()),
                             *([fn.args.kwarg] if fn.args.kwarg else ()))}
    read, inner, declared = [], [], set()
    todo = [*fn.body, *fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
    while todo:
        n = todo.pop(0)
        if isinstance(n, LocalDef):
            bound.add(n.node.name)
            inner.append(n.node)
            todo += [*n.node.args.defaults, *(d for d in n.node.args.kw_defaults if d)]
            continue
        if isinstance(n, ast.Lambda):
            lam = ast.FunctionDef(name="lambda", args=n.args, body=[ast.Expr(n.body)],
                                  decorator_list=[])
            inner.append(lam)
            todo += list(n.args.defaults)
            continue
        if isinstance(n, ast.Global):
            declared.update(n.names)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            read.append(n.id)
        elif isinstance(n, ast.Name):
            bound.add(n.id)
        todo += list(ast.iter_child_nodes(n))
    for sub in inner:
        read += free_names(sub)
    return [n for n in dict.fromkeys(read) if n not in bound and n not in declared]


def _what(local: LocalFunction) -> str:
    name = local.__qualname__.split(".")[-1]
    return "a lambda" if name.startswith("_lambda") else f"`{name}`"


def _nodes(node):
    """Every node inside ``node``, the functions defined inside it (`LocalDef`) included."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo += [n.node] if isinstance(n, LocalDef) else list(ast.iter_child_nodes(n))


def _kind(value) -> str:
    if isinstance(value, (LocalFunction, LocalTransform)):
        return "a function defined inside it too"
    return f"a {type(value).__name__}"
