"""Writes into a region of an array (``x[1:-1, :] += g``, ``x[i] = row``, ``x += g``): `add_into`
and `copy_into`, re-exported by `runtime` (``_rt.add_into(region, value)``), NumPy's in-place
forms inside a compiled function. Compiled with `compile.jit`, once per machine and signature.

Why a helper: written inline, Numba expands each such statement into its broadcasting loops at
the call site, about two seconds of compile time per statement and superlinear in their number
(an adjoint of a stencil has dozens); as one call each, a gradient compiles a call per
statement and the helper once per machine and signature.

Why not Numba's own ``region += value`` inside the helper: compiled for a new signature (a
rank-4 view, say, which `warming` does not make ready) it took 3.6-5.2 s of CPU, most of it
the broadcasting machinery and the formatting of its error message (``str`` of shape tuples,
``str.join``); the loop nests below compile in 0.1-0.2 s. Each is written for its ranks
(`_nest_source`, a ``for`` per axis of the region): one nest for a value of the region's own
shape, one for a value broadcast along some axes (NumPy's rules: the value's axes are the
region's last ones, each of the region's size or 1; other sizes raise ValueError), one for a
number. A value whose memory overlaps the region's is copied first, as NumPy does.

Guarantees: the region afterwards holds what NumPy's ``region += value`` (``region[...] =
value``) leaves; the forms the nests do not cover (a rank-0 region, a value of higher rank than
the region, an integer region, a value of another kind) and a vector region written from a
number (`MIN_NEST_RANK`) are Numba's own statement, as before.
Under ``JITGRAD_DISABLE_JIT=1`` each helper is the NumPy statement.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload, register_jitable

from jitgrad.backend.numba.compile import ERROR_MODEL, jit


def _add_any(region, value):
    region += value


def _copy_any(region, value):
    region[...] = value


# Where no nest is written (a vector region, other kinds), the helper is compiled as the
# statement itself (`compile.jit`'s ``choose``): one function per signature, where the helper
# calling the overload compiled two (logreg's first gradient, 0.14 s of Numba's compile).
@jit(choose=lambda region, value: _add_any if _nest_for("+=", region, value) is None else None)
def add_into(region, value):
    """``region += value``, ``region`` a view (or a whole array) written in place."""
    _add_any(region, value)


@jit(choose=lambda region, value: _copy_any if _nest_for("=", region, value) is None else None)
def copy_into(region, value):
    """``region[...] = value``, ``region`` a view written in place."""
    _copy_any(region, value)


@register_jitable
def _extent(a):
    """The first and one-past-last byte addresses ``a``'s entries occupy."""
    low = high = a.ctypes.data
    for k in range(a.ndim):
        span = (a.shape[k] - 1) * a.strides[k]
        if a.shape[k] == 0:
            return low, low
        if span < 0:
            low += span
        else:
            high += span
    return low, high + a.itemsize


@register_jitable
def _overlaps(region, value):
    r0, r1 = _extent(region)
    v0, v1 = _extent(value)
    return r0 < v1 and v0 < r1


def _nest_source(op: str, n: int, m: int | None) -> str:
    """The helper for a region of rank ``n``: ``region[idx] <op> value[...]`` in a nest of
    ``n`` loops; ``m`` the value's rank (None: a number)."""
    idx = [f"i{k}" for k in range(n)]
    lines = ["def write(region, value):"]
    body = []
    if m is None:
        body.append((f"region[{', '.join(idx)}] {op} value", 0))
    else:
        lines.append("    if _overlaps(region, value):")
        lines.append("        value = value.copy()")
        for k in range(m):
            j = k + n - m
            lines.append(f"    s{k} = 0 if value.shape[{k}] == 1 else 1")
            lines.append(f"    if value.shape[{k}] != region.shape[{j}] and s{k}:")
            lines.append("        raise ValueError('could not broadcast the value into the region "
                         "it is written into')")
        whole = " and ".join(f"s{k}" for k in range(m)) or "True"
        same = ", ".join(idx[n - m:]) or "()"
        spread = ", ".join(f"i{k + n - m} * s{k}" for k in range(m)) or "()"
        body.append((f"region[{', '.join(idx)}] {op} value[{same}]", 1))
        body.append((f"region[{', '.join(idx)}] {op} value[{spread}]", 2))
    nests = {}
    for stmt, which in body:
        nest = []
        for k in range(n):
            nest.append("    " * (k + 1) + f"for i{k} in range(region.shape[{k}]):")
        nest.append("    " * (n + 1) + stmt)
        nests[which] = nest
    if m is None:
        lines += nests[0]
    else:
        lines.append(f"    if {whole}:")
        lines += ["    " + ln for ln in nests[1]]
        lines.append("    else:")
        lines += ["    " + ln for ln in nests[2]]
    return "\n".join(lines) + "\n"


_NESTS: dict = {}
# A vector region written from a number stays Numba's own statement (0.1-0.4 s to compile, no
# shape to check); from rank 2 the nests cost as much or (rank 4) far less. A vector region
# written from an array is a nest too: Numba's own statement compiles its shape-mismatch
# message (``raise_with_shape_context``: ``str`` of shapes, string concatenation), 2.6-3.3 s
# of CPU for the first such signature in a process, against 0.7-0.9 s for the nest, warm
# runtime or not (load ~10 on 2 cores); `warming` makes only C-ordered vectors ready, and a
# column ``p[1:-1, j]`` or a strided view is not one (adi, cavity_flow: 2.7-3.4 s each).
MIN_NEST_RANK = 2


def _nest(op: str, n: int, m: int | None):
    key = (op, n, m)
    if key not in _NESTS:
        scope = {"_overlaps": _overlaps}
        exec(compile(_nest_source(op, n, m), f"<jitgrad write {key}>", "exec"), scope)  # noqa: S102
        _NESTS[key] = scope["write"]
    return _NESTS[key]


def _nest_for(op: str, region, value):
    """The nest for these argument types, or None where Numba's own statement stays."""
    if not (isinstance(region, types.Array) and region.ndim >= 1
            and isinstance(region.dtype, (types.Float, types.Complex)) and region.mutable):
        return None
    if isinstance(value, (types.Float, types.Integer, types.Boolean)) or (
            isinstance(value, types.Complex) and isinstance(region.dtype, types.Complex)):
        return _nest(op, region.ndim, None) if region.ndim >= MIN_NEST_RANK else None
    if (isinstance(value, types.Array) and value.ndim <= region.ndim
            and isinstance(value.dtype, (types.Float, types.Integer, types.Boolean, types.Complex))
            and (isinstance(region.dtype, types.Complex) or not isinstance(value.dtype, types.Complex))):
        return _nest(op, region.ndim, value.ndim)
    return None


@overload(_add_any, jit_options={"error_model": ERROR_MODEL})
def _add_impl(region, value):
    nest = _nest_for("+=", region, value)
    return nest if nest is not None else _add_any


@overload(_copy_any, jit_options={"error_model": ERROR_MODEL})
def _copy_impl(region, value):
    nest = _nest_for("=", region, value)
    return nest if nest is not None else _copy_any


__all__ = ["add_into", "copy_into"]
