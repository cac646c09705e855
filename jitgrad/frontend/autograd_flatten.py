"""autograd's ``flatten`` (``autograd.misc.flatten``) as the builder takes it (issue #43): of
a tuple, list or dict of arrays and numbers known while building, the vector of its leaves and
the function that makes the tree again from such a vector. autograd's own code runs its
tracer, which jitgrad does not read; these handlers are `build_builtins.BY_NAME`'s and
`BUILTINS`' entries, called with the builder, the evaluated arguments and the call's node.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym


def _tree_leaves(value) -> list:
    """The leaves of a tuple, list or dict (its keys sorted) of arrays and numbers, in the
    order autograd's ``flatten`` takes them."""
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _tree_leaves(v)]
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _tree_leaves(value[k])]
    return [value]


def build_flatten(b, args, kwargs, node):
    """autograd's ``flatten(value)`` (``autograd.misc.flatten``), of a tree known while
    building: the vector of its leaves, each raveled, one after the other (its own code runs
    autograd's tracer, which jitgrad does not read), and the function that makes the tree
    again from such a vector."""
    if len(args) != 1 or kwargs:
        raise UnsupportedError("flatten() takes one tree of arrays", b.loc(node))
    parts = []
    for leaf in _tree_leaves(args[0]):
        if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            leaf = b.known(np.array([float(leaf)]), node)
        if not isinstance(leaf, Sym) or leaf.type.kind == "c":
            raise UnsupportedError("flatten() of a tree whose leaves are arrays and numbers",
                                   b.loc(node))
        parts.append(symbolic.NUMPY[np.ravel](leaf))
    if not parts:
        raise UnsupportedError("flatten() of an empty tree", b.loc(node))
    vector = symbolic.NUMPY[np.concatenate](tuple(parts))
    return vector, functools.partial(unflatten_like, args[0])


def unflatten_like(tree, vector):
    """The function autograd's ``flatten`` returns, for ``tree`` (the builder calls it,
    `build_unflatten`)."""


def build_unflatten(b, args, kwargs, node):
    """``unflatten(v)``: the tree ``flatten`` was given, made of the entries of ``v``, in
    order (each leaf's entries reshaped to its shape)."""
    tree, vector = args
    if not (isinstance(vector, Sym) and vector.ndim == 1):
        raise UnsupportedError("unflatten() of a vector", b.loc(node))
    start = 0

    def build(t):
        nonlocal start
        if isinstance(t, (tuple, list)):
            return type(t)(build(v) for v in t) if isinstance(t, list) else tuple(
                build(v) for v in t)
        if isinstance(t, dict):
            made = {k: build(t[k]) for k in sorted(t)}
            return {k: made[k] for k in t}
        if not isinstance(t, Sym) or not t.ndim:
            value = symbolic.record("getitem", vector, start, index_spec=("i",))
            start = start + 1
            return value
        stop = start + t.size
        value = symbolic.record("getitem", vector, start, stop,
                                index_spec=(("s", True, True, False),))
        start = stop
        return symbolic.NUMPY[np.reshape](value, t.shape)
    return build(tree)


def is_flatten_funcs_unflatten(fn, src) -> bool:
    """Whether ``fn``, called in ``src``, is the ``unflatten`` autograd's ``flatten_func``
    closes over: autograd's ``make_vjp`` function (the vjp of its ``_flatten``), called in the
    function ``flatten_func`` returns (``lambda _x, *args: flatten(func(unflatten(_x),
    *args))[0]``, in autograd's flatten.py), where it is that by construction."""
    code = getattr(fn, "__code__", None)
    return (code is not None and code.co_name == "vjp"
            and code.co_filename.endswith(os.path.join("autograd", "core.py"))
            and src.filename.endswith(os.path.join("autograd", "misc", "flatten.py")))


def build_flatten_funcs_unflatten(b, fn, args, kwargs, node):
    """``unflatten(_x)`` in ``flatten_func``'s function: the tree ``flatten`` was given, its
    structure and shapes read by calling autograd's ``unflatten`` on zeros of the vector's
    length in the call being built (plain NumPy, no gradient), then made of ``_x``'s entries as
    `build_unflatten` makes it."""
    vector = args[0] if len(args) == 1 and not kwargs else None
    size = None
    if isinstance(vector, Sym) and vector.ndim == 1:  # (its length in the example call, the
        size = vector.size if isinstance(vector.size, int) else b.decided_length(vector)  # build
    if size is None:  # checking it first thing: `decided_length`)
        raise UnsupportedError("flatten_func's unflatten of a vector (of a length known while "
                               "building)", b.loc(node))
    template = fn(np.zeros(size))

    def as_known(t):
        if isinstance(t, (tuple, list)):
            return type(t)(as_known(v) for v in t)
        if isinstance(t, dict):
            return {k: as_known(v) for k, v in t.items()}
        return b.known(np.asarray(t, dtype=float), node) if np.ndim(t) else 0.0
    return build_unflatten(b, (as_known(template), vector), {}, node)


HANDLERS = {("autograd.misc.flatten", "flatten"): build_flatten}
