"""``jitgrad.vmap(f, in_axes)(*args)`` called inside a differentiated function (JAX's pairwise
kernel idiom, ``vmap(lambda x: vmap(lambda y: k(x, y))(xs))(xs)``): built as the loop it
stands for, ``f`` of each row of the mapped arguments, the results stacked along a new first
axis, so the gradient flows through ``f`` as through any loop (``vmap`` itself, called from
Python, compiles its own loop: `jitgrad.vmap`). Takes ``in_axes`` of an axis or None per
argument (an int for all; a mapped axis other than 0 moved first, as ``np.moveaxis``) and
``out_axes=0``; the mapped arguments' mapped axes the same length. A function returning a
tuple (a ``vjp`` function's one entry per primal) gives a tuple of the entries stacked,
as JAX's ``vmap`` does: entry ``j`` is the loop over ``f(...)[j]``.

The loop is a Python function written here per pattern of mapped arguments (its text in
`linecache`, as `compose`'s Jacobians are), inlined by the builder with ``f`` (a function
known while building: a lambda or a ``def`` of the differentiated function, or any other).
These handlers are `build_builtins.BY_NAME`'s and `BUILTINS`' entries.
"""

from __future__ import annotations

import ast
import functools
import linecache
import types

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.frontend.parse import FunctionSource
from jitgrad.frontend.transform_calls import VjpInside
from jitgrad.lang.symbolic import Sym

_ROWS = """\
def vmapped_{key}(f, {params}):
    first = f({first}){item}
    out = np.empty(({n},) + np.shape(first))
    out[0] = first
    for i in range(1, {n}):
        out[i] = f({row}){item}
    return out
"""
_FIRST = """\
def vmapped_{key}(f, {params}):
    return f({first})
"""
_MADE: dict[tuple, object] = {}


def _rows_function(mapped: tuple, item: int | None = None, template: str = _ROWS):
    """The loop for arguments ``mapped`` (True: mapped along axis 0), written once; of the
    entry ``item`` of ``f``'s tuple result where it is not None (`_FIRST`: ``f`` of the first
    row only)."""
    made = _MADE.get((mapped, item, template))
    if made is None:
        names = [f"a{k}" for k in range(len(mapped))]
        n = f"{names[mapped.index(True)]}.shape[0]"
        key = "".join("m" if m else "c" for m in mapped) + ("" if item is None else f"_{item}") \
            + ("_first" if template is _FIRST else "")
        text = template.format(key=key, params=", ".join(names), n=n,
                            item="" if item is None else f"[{item}]",
                            first=", ".join(f"{a}[0]" if m else a for a, m in zip(names, mapped)),
                            row=", ".join(f"{a}[i]" if m else a for a, m in zip(names, mapped)))
        filename = f"<jitgrad vmap inside a differentiated function: {key}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np}
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
        made = _MADE[(mapped, item, template)] = namespace[f"vmapped_{key}"]
    return made


def mapped_call(f, in_axes, *args):
    """What ``vmap(f, in_axes)`` stands for while building; called by `build_mapped_call`."""


def build_vmap(b, args, kwargs, node):
    """``jitgrad.vmap(f, in_axes=0, out_axes=0)``: kept while building (a partial of
    `mapped_call`), built where it is called."""
    options = dict(zip(("in_axes", "out_axes"), args[1:]), **kwargs)
    f = args[0] if args else None
    if f is None or isinstance(f, Sym) or not callable(f) or set(options) - {"in_axes", "out_axes"}:
        raise UnsupportedError("jitgrad.vmap(f, in_axes, out_axes) of a function known while "
                               "building", b.loc(node))
    if options.get("out_axes", 0) != 0:
        raise UnsupportedError("jitgrad.vmap inside a differentiated function with out_axes="
                               f"{options['out_axes']!r}: it stacks along axis 0 (move the axis "
                               "after: np.moveaxis)", b.loc(node))
    return functools.partial(mapped_call, f, options.get("in_axes", 0))


def build_mapped_call(b, args, kwargs, node):
    """``vmap(f, in_axes)(*args)``: the loop over the rows of the mapped arguments."""
    f, in_axes, *values = args
    axes = (in_axes,) * len(values) if isinstance(in_axes, int) else tuple(in_axes)
    if kwargs or len(axes) != len(values) or any(
            a is not None and (isinstance(a, bool) or not isinstance(a, (int, np.integer)))
            for a in axes) or all(a is None for a in axes):
        raise UnsupportedError(
            f"jitgrad.vmap inside a differentiated function with in_axes={in_axes!r} for "
            f"{len(values)} arguments passed by position: it takes an axis or None per "
            "argument, at least one mapped", b.loc(node))
    mapped = tuple(a is not None for a in axes)
    values = list(values)
    for k, (v, a) in enumerate(zip(values, axes)):
        if a is not None and not (isinstance(v, Sym) and v.ndim) and not isinstance(v, np.ndarray):
            raise UnsupportedError("jitgrad.vmap inside a differentiated function maps arrays "
                                   "along an axis (a tree or a number here)", b.loc(node))
        if a is not None and a != 0:  # the mapped axis first, as np.moveaxis puts it
            values[k] = b.call(np.moveaxis, (v, int(a), 0), {}, node)
    first = b.inline(_rows_function(mapped, None, _FIRST), (f, *values), {}, node) \
        if _may_return_tuple(f) else None
    if isinstance(first, tuple):  # one loop per entry of the result
        return tuple(b.inline(_rows_function(mapped, j), (f, *values), {}, node)
                     for j in range(len(first)))
    return b.inline(_rows_function(mapped), (f, *values), {}, node)


def _may_return_tuple(f) -> bool:
    """Whether ``f``'s result may be a tuple, to be looked at before the loop is written: a
    ``vjp`` function inside a differentiated function (one entry per primal), or a function
    whose source has a ``return`` of a tuple display."""
    if isinstance(f, VjpInside):
        return True
    src = getattr(f, "src", None)  # a function defined inside (`LocalFunction`)
    if src is None and isinstance(f, types.FunctionType):
        try:
            src = FunctionSource.of(f)
        except UnsupportedError:
            return False
    node = getattr(src, "node", None)
    if node is None:
        return False
    return any(isinstance(n, ast.Return) and isinstance(n.value, ast.Tuple)
               for n in ast.walk(node)) or (isinstance(node, ast.Lambda)
                                            and isinstance(node.body, ast.Tuple))


HANDLERS = {("jitgrad.vmap", "vmap"): build_vmap}
