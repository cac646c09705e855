"""The tape's graph and its reverse walk.

Takes the nodes `tensor` records, each a tuple laid out as below, and a root tensor with a seed
(its gradient). Guarantees: `backward` visits every node the root depends on once, consumers
before producers, without recursion; it applies each primitive's rules of
`jitgrad.prims.primitives.RULES` (unbroadcasting elementwise ones) and adds the result to ``.grad``
of each leaf that requires gradients, as a float for a scalar leaf and a float64 array of the
leaf's shape otherwise. Recorded values are never mutated.
"""

from __future__ import annotations

import contextlib
import gc
import operator

import numpy as np

from jitgrad.core.errors import JitgradError
from jitgrad.prims import primitives
from jitgrad.prims.primitives import unbroadcast

_ndarray = np.ndarray
_GETITEM = primitives.PRIMITIVES["getitem"]


class Leaf:
    """Marks a leaf tensor that requires gradients (``Tensor._node``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<leaf>"


LEAF = Leaf()

# A node is a tuple (seq, prim, rules, parents, args, params, ans): ``parents[k]`` is the node
# of input ``k`` (a tuple), the leaf tensor itself, or None (no gradient); ``args`` are the
# input values as the primitive saw them. Values are never mutated after they are recorded.
_SEQ, _PRIM, _RULES, _PARENTS, _ARGS, _PARAMS, _ANS = range(7)


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a graph is built or walked.

    A graph is many small live objects and no garbage: every collection would traverse all of
    them again, which made a 10^5-step scalar loop 3-4x slower. Reference counting still frees
    everything that is not in a cycle.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _accumulate(grads, p, c) -> None:
    """Add contribution ``c`` to the gradient of ``p`` (a node or a leaf tensor).

    An entry is ``[gradient, owned, p]``: owned arrays belong to this pass and may be updated in
    place; others may be shared (a rule can return its ``g``) and are copied on update.
    """
    key = id(p)
    e = grads.get(key)
    if e is None:
        grads[key] = [c, False, p]
    elif e[1]:
        e[0] += c
    else:
        s = e[0] + c
        e[0] = s
        e[1] = type(s) is _ndarray


def _owned_buffer(grads, p, x):
    """The gradient buffer of ``p`` (whose value is ``x``), owned and writable."""
    key = id(p)
    e = grads.get(key)
    if e is None:
        buf = np.zeros(np.shape(x))
        grads[key] = [buf, True, p]
        return buf
    if not e[1]:
        e[0] = np.array(np.broadcast_to(e[0], np.shape(x)), dtype=np.float64)
        e[1] = True
    return e[0]


def backward(root, seed) -> None:
    """Add ``seed`` times d(root)/d(leaf) to ``.grad`` of every leaf ``root`` (a `Tensor`)
    depends on."""
    grads: dict = {}
    node = root._node
    if node is LEAF:
        _accumulate(grads, root, seed)
        _store_leaf_grads(grads)
        return
    # every node the root depends on, found without recursion
    nodes, seen, stack = [], {id(node)}, [node]
    while stack:
        n = stack.pop()
        nodes.append(n)
        for p in n[_PARENTS]:
            if type(p) is tuple and id(p) not in seen:
                seen.add(id(p))
                stack.append(p)
    nodes.sort(key=operator.itemgetter(_SEQ), reverse=True)  # consumers before producers
    grads[id(node)] = [seed, False, node]
    pop, get = grads.pop, grads.get
    for n in nodes:
        e = pop(id(n), None)
        if e is None:
            continue
        g = e[0]
        _, prim, rules, parents, args, params, ans = n
        if prim is _GETITEM:
            # the adjoint of a read is a scatter-add (RULES["getitem"]), done in place
            p = parents[0]
            if p is not None:
                buf = _owned_buffer(grads, p, args[0])
                buf[primitives.index_value(params["index_spec"], args[1:])] += g
            continue
        elementwise = prim.elementwise
        nr = len(rules)
        for k, p in enumerate(parents):
            if p is None or k >= nr:
                continue
            rule = rules[k]
            if rule is None:
                continue
            c = rule(g, ans, *args, **params)
            if elementwise and (type(c) is _ndarray or type(args[k]) is _ndarray):
                c = unbroadcast(c, args[k])  # (two scalars: nothing to sum)
            e = get(id(p))  # _accumulate, inlined: this loop is the backward pass's cost
            if e is None:
                grads[id(p)] = [c, False, p]
            elif e[1]:
                e[0] += c
            else:
                s = e[0] + c
                e[0] = s
                e[1] = type(s) is _ndarray
    _store_leaf_grads(grads)


def _store_leaf_grads(grads) -> None:
    for g, owned, leaf in grads.values():
        if type(leaf) is tuple:  # an unreachable node (cannot happen); nothing to store
            continue
        value = leaf.value
        if type(value) is _ndarray:
            if np.shape(g) != value.shape:
                raise JitgradError(f"internal error: gradient of shape {np.shape(g)} for a "
                                   f"leaf of shape {value.shape}")
            g = g if owned else np.array(g, dtype=np.float64)
            leaf.grad = g if leaf.grad is None else leaf.grad + g
        else:
            g = float(g)
            leaf.grad = g if leaf.grad is None else leaf.grad + g
