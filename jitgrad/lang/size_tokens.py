"""Size tokens: what a value's axes are known to be while building, for the loop nests.

Takes a primitive's row, its operand atoms (their ``dims``: a literal, an argument's axis
``(param, k)``, a slice's ``("less", token, dropped)``, a broadcast's ``("broadcast", ...)``)
and params; guarantees `result_dims`: the result's tokens, equal tokens meaning equal sizes
(None where nothing is known; a None among the tokens: that axis's size is its own), and `size_token`: the size an integer atom stands for.
"""

from __future__ import annotations

from jitgrad.core.ir import Const, Var, broadcast_dims, dims_of


def size_token(a):
    """The size an integer atom stands for: a literal, or a value read from a shape."""
    if isinstance(a, Const):
        return a.value
    if a.type.ndim == 0 and a.dims is not None and len(a.dims) == 1:
        return a.dims[0]
    return None


def result_dims(prim, atoms, params, out_type, at_least=None) -> tuple | None:
    """The size tokens of a primitive's result, from its operands' (None: unknown).
    ``at_least(token, m)``: whether an axis of size ``token`` may be assumed (or is known) to
    have at least ``m`` entries, which makes a slice ``x[a:b]`` of it ``b - a`` long."""
    name, arrays = prim.name, [a for a in atoms if a.type.ndim]
    if prim.elementwise:
        if not arrays and name == "add":  # ``n + 3`` of a size: a size too (`plus`)
            return _sum_size(atoms)
        return broadcast_dims(*(dims_of(a) for a in arrays)) if arrays else ()
    d = dims_of(atoms[0]) if atoms else ()
    flags = prim.flags
    if flags.reduction and "keepdims" in params:  # (np.prod over all, argmax: not followed)
        axis, keep = params["axis"], params["keepdims"]
        if axis is None:
            return (1,) * len(d) if keep else ()
        return d[:axis] + ((1,) if keep else ()) + d[axis + 1:]
    if name == "matmul":
        a, b = d, dims_of(atoms[1])
        return (a[:-1] + b[1:]) if len(b) == 2 else a[:-1]  # (n, k) @ (k, m) -> (n, m)
    if name == "solve" and atoms[0].type.ndim == 2:  # a x = b of one matrix: b's shape
        return dims_of(atoms[1])
    if (name == "concatenate" and d and isinstance(params.get("axis"), int)
            and all(isinstance(a, Var) for a in atoms) and len({a.type.ndim for a in atoms}) == 1):
        # (NumPy checks that the other axes agree; along the axis, known sizes add up)
        return _joined_dims([dims_of(a) for a in atoms], params["axis"] % len(d))
    if name == "outer":
        return (d[0], dims_of(atoms[1])[0])
    if name == "transpose":
        axes = params.get("axes")
        return tuple(reversed(d)) if axes is None else tuple(d[k] for k in axes)
    if name == "stack":  # np.array([a, b, c]) of items of one shape (NumPy's own check);
        # a number's dims are the size it stands for (`size_token`), not a shape
        return (len(atoms),) + (d if atoms[0].type.ndim else ())
    if name == "expand_dims":
        return d[:params["axis"]] + (1,) + d[params["axis"]:]
    if flags.sizes_from is not None:
        return tuple(size_token(a) for a in atoms[flags.sizes_from:])  # (None: a new size)
    if flags.square:  # eye(n): n by n; inv(a), cholesky(a): a's shape (or they raise)
        if atoms[0].type.ndim:
            return d
        n = size_token(atoms[0])
        return None if n is None else (n, n)
    if flags.counts:  # arange(0, n, 1): n entries (a shape's n, or a literal n >= 0)
        start, stop, step = atoms
        n = size_token(stop)
        known = (type(n) is int and n >= 0) if isinstance(stop, Const) else n is not None
        return ((n,) if known and isinstance(start, Const) and start.value == 0
                and isinstance(step, Const) and step.value == 1 else None)
    if name == "take_add":
        rows = size_token(atoms[2])
        return None if rows is None else (rows,) + dims_of(atoms[0])[1:]
    if flags.same_shape_as is not None:
        return dims_of(atoms[flags.same_shape_as])
    if name == "getitem":
        spec, out, bounds = params["index_spec"], [], list(atoms[1:])
        for k, item in enumerate(spec):
            if item == ":":
                out.append(d[k])
            elif item == "i":
                bounds.pop(0)
            else:
                parts = [bounds.pop(0) if present else None for present in item[1:]]
                out.append(_slice_size(d[k], *parts, at_least=at_least))  # (None: a new size)
        return tuple(out) + d[len(spec):]
    return None


def _joined_dims(dims, k) -> tuple:
    """np.concatenate's result along axis ``k``: the pieces' sizes off the axis where they
    agree, and along it their sum where all are constants (colour's tstack of k columns).
    None (a size of its own) where not known."""
    off = [d[:k] + d[k + 1:] for d in dims]
    along = [d[k] for d in dims]
    size = sum(along) if all(type(t) is int for t in along) else None
    rest = off[0] if all(d == off[0] for d in off) else (None,) * len(off[0])
    return rest[:k] + (size,) + rest[k:]


def plus(n, more: int):
    """The size token of ``n + more`` entries: ``("less", n, -more)`` in the form a slice's
    size takes (``n`` less ``dropped``), one level deep, so that sizes that are one count
    away from one axis compare equal however they were made (``a[1:][1:]`` and ``a[2:]``,
    ``lap[1:]`` of ``lap`` of ``n + 2`` entries and ``x[1:n + 2]``)."""
    if isinstance(n, tuple) and len(n) == 3 and n[0] == "less":
        n, more = n[1], more - n[2]
    if isinstance(n, int):
        return ("less", n, -more) if more < 0 else n + more
    return n if more == 0 else ("less", n, -more)


def _sum_size(atoms) -> tuple:
    """The dims of the scalar ``a + b``: ``(token,)`` when one is a size (`size_token`, not a
    literal) and the other a literal ``c >= 0`` (so the sum is a size too, never negative:
    ``I + 3``), else ``()``."""
    for a, b in (atoms, atoms[::-1]):
        t = size_token(a) if isinstance(a, Var) and a.type.kind == "i" else None
        if (t is not None and not isinstance(t, int) and isinstance(b, Const)
                and type(b.value) is int and b.value >= 0):
            return (plus(t, b.value),)
    return ()


def _offset(token):
    """``(base, more)`` with ``token`` the size ``base + more`` (`plus`)."""
    if isinstance(token, tuple) and len(token) == 3 and token[0] == "less":
        return token[1], -token[2]
    return token, 0


def _symbolic_slice_size(n, start: int, stop, at_least):
    """The size token of ``x[start:stop]`` along an axis of size token ``n``, ``stop`` a size
    ``base + c`` (`plus`, ``c >= start >= 0``: so ``stop >= start``, never negative), when the
    axis is known to have at least ``stop`` entries (``n`` is ``base + c'``, ``c' >= c``) or
    may be assumed to (``at_least(n, stop)``, checked first thing): ``stop - start`` long
    (hdiff's ``in_field[1:I + 3]`` of an axis of ``I + 4``). None otherwise."""
    base, more = _offset(stop)
    if more < start:
        return None
    n_base, n_more = _offset(n)
    if not (n_base == base and n_more >= more or at_least is not None and at_least(n, stop)):
        return None
    return plus(base, more - start)


def _slice_size(n, start, stop, step, at_least=None):
    """The size token of ``x[start:stop]`` along an axis of size token ``n``, when the bounds
    are constants that count from the two ends, ``start >= 0`` and ``stop <= 0`` (or absent),
    and the step is 1: the slice has ``max(0, n - (start - stop))`` entries, so slices that
    drop as many entries in all are the same size (``a[:-2]``, ``a[1:-1]``, ``a[2:]``), whatever
    ``n`` is. A slice between two counts from the start, ``0 <= start < stop``, is ``stop -
    start`` long where ``at_least(n, stop)`` holds (``x[:, 0:1]``). None for any other slice
    (its size is a new one)."""
    if (isinstance(stop, Var) and isinstance(start, (Const, type(None))) and step is None
            and (start is None or type(start.value) is int and start.value >= 0)):
        t = size_token(stop) if stop.type.kind == "i" else None
        if t is not None and not isinstance(t, int):
            return _symbolic_slice_size(n, 0 if start is None else start.value, t, at_least)
    values = []
    for part, absent in ((start, 0), (stop, 0), (step, 1)):
        if part is None:
            values.append(absent)
        elif isinstance(part, Const) and isinstance(part.value, int) and not isinstance(
                part.value, bool):
            values.append(part.value)
        else:
            return None
    first, last, stride = values
    if (stride == 1 and 0 <= first < last and stop is not None and at_least is not None
            and at_least(n, last)):
        return last - first
    if stride != 1 or first < 0 or last > 0 or (stop is not None and last == 0):
        return None  # (a[2:0] is empty: not the ends' count)
    return plus(n, last - first)
