"""``jitgrad.vmap(f, in_axes)(*args)`` called inside a differentiated function (JAX's pairwise
kernel idiom, ``vmap(lambda x: vmap(lambda y: k(x, y))(xs))(xs)``): built as the loop it
stands for, ``f`` of each row of the mapped arguments, the results stacked along a new first
axis, so the gradient flows through ``f`` as through any loop (``vmap`` itself, called from
Python, compiles its own loop: `jitgrad.vmap`). Takes ``in_axes`` of 0 or None per argument
(an int for all) and ``out_axes=0``; the mapped arguments' first axes the same length.

The loop is a Python function written here per pattern of mapped arguments (its text in
`linecache`, as `compose`'s Jacobians are), inlined by the builder with ``f`` (a function
known while building: a lambda or a ``def`` of the differentiated function, or any other).
These handlers are `build_builtins.BY_NAME`'s and `BUILTINS`' entries.
"""

from __future__ import annotations

import functools
import linecache

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.symbolic import Sym

_ROWS = """\
def vmapped_{key}(f, {params}):
    first = f({first})
    out = np.empty(({n},) + np.shape(first))
    out[0] = first
    for i in range(1, {n}):
        out[i] = f({row})
    return out
"""
_MADE: dict[tuple, object] = {}


def _rows_function(mapped: tuple):
    """The loop for arguments ``mapped`` (True: mapped along axis 0), written once."""
    made = _MADE.get(mapped)
    if made is None:
        names = [f"a{k}" for k in range(len(mapped))]
        n = f"{names[mapped.index(True)]}.shape[0]"
        key = "".join("m" if m else "c" for m in mapped)
        text = _ROWS.format(key=key, params=", ".join(names), n=n,
                            first=", ".join(f"{a}[0]" if m else a for a, m in zip(names, mapped)),
                            row=", ".join(f"{a}[i]" if m else a for a, m in zip(names, mapped)))
        filename = f"<jitgrad vmap inside a differentiated function: {key}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np}
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
        made = _MADE[mapped] = namespace[f"vmapped_{key}"]
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
    if kwargs or len(axes) != len(values) or any(a not in (0, None) for a in axes) or \
            0 not in axes:
        raise UnsupportedError(
            f"jitgrad.vmap inside a differentiated function with in_axes={in_axes!r} for "
            f"{len(values)} arguments passed by position: it takes 0 (mapped along the first "
            "axis) or None per argument, at least one mapped (np.moveaxis the axis first)",
            b.loc(node))
    mapped = tuple(a == 0 for a in axes)
    for v, m in zip(values, mapped):
        if m and not (isinstance(v, Sym) and v.ndim) and not isinstance(v, np.ndarray):
            raise UnsupportedError("jitgrad.vmap inside a differentiated function maps arrays "
                                   "along their first axis (a tree or a number here)",
                                   b.loc(node))
    return b.inline(_rows_function(mapped), (f, *values), {}, node)


HANDLERS = {("jitgrad.vmap", "vmap"): build_vmap}
