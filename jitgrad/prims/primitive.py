"""What a primitive is, and the tables its declarations fill.

A `Primitive` row says: its name, how NumPy computes it (``impl``, used by the tape and whenever
a rule runs on concrete arrays), the type of its result (``type_rule``), whether it has a
derivative, and its flags (`core.ops.Flags`). Its derivative rules are declared next to it, in
its family module (`elementwise`, `reductions`, `linalg`, `shape`, `indexing`, `alloc`), with
`defvjp` and `defjvp`; how the Numba backend writes it is the backend's business
(`jitgrad.backend.numba.lowering`). A primitive is callable: on arrays it runs ``impl``; on the
symbolic values of the transforms (`Sym`) and of the tape (`Tensor`) it records an operation.
That is how one rule table serves both the source transform and the interpreted tape.

Adjoint rules (`defvjp`): ``RULES[name]`` holds one function per input, ``vjp(g, ans, *ins,
**params)``, returning that input's share of the gradient given ``g``, the gradient of the
result ``ans``. Rules are plain NumPy on the values they are given: the tape runs them on
arrays, the source transform on `Sym`s, which record each operation as an equation of the
adjoint. ``None`` marks an input that takes no gradient (an index, a shape, a template). For
elementwise primitives (``elementwise=True``) a rule may return its share at the broadcast
shape of the result: the caller sums it back to the input's shape, in one place
(`unbroadcast`). Other rules return exactly the input's shape.

Tangent rules (`defjvp`): ``JVPS[name]`` holds one function per input, ``jvp(t, ans, *ins,
**params)``, giving that input's part of the result's tangent when the input's tangent is ``t``
(the parts add up; ``None``: an input with no derivative). ``JVPS_ALL[name]`` (`defjvp_all`)
takes all the tangents at once, for results built from every input. An elementwise primitive
needs no tangent rule of its own: its Jacobian is diagonal, so its adjoint rule (``g`` times
the partial derivative) applied to a tangent is its tangent rule, and `defvjp` takes it as
such unless `defjvp` says otherwise. A row declared ``zero_tangent=True`` has a derivative
that is zero wherever it exists (piecewise constant, or reading only a shape): forward mode
gives it a zero tangent (`zero_tangent`). Any other primitive without a tangent rule is
refused by forward mode when one of its inputs has a tangent.

Kinks and ties follow one convention: the derivative there is the mean of the one-sided
derivatives. So ``abs'(0) = 0``, ``maximum(a, b)`` at ``a == b`` sends half of ``g`` to each,
and ``max`` over an axis shares ``g`` equally among tied maxima. Primitives with zero
derivative almost everywhere (comparisons, ``sign``, ``floor``, ``//``) have no rule and pass
no gradient.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from jitgrad.core import ops
from jitgrad.core.errors import UnsupportedError

MAX_STACK = 64  # the most entries np.array([...]) / np.stack take (one rule per entry)

PRIMITIVES: dict[str, Primitive] = {}
RULES: dict[str, tuple] = {}
JVPS: dict[str, tuple] = {}
JVPS_ALL: dict[str, Callable] = {}


@dataclasses.dataclass(eq=False)
class Primitive:
    name: str
    impl: Callable
    type_rule: Callable  # (in_types, params) -> out Type
    differentiable: bool = True
    elementwise: bool = False  # broadcasts its array operands (adjoints are unbroadcast)
    custom_rule: bool = False  # a user's custom_vjp: the reverse transform builds its rule
    zero_tangent: bool = False  # derivative zero wherever it exists: forward mode's tangent is 0
    flags: ops.Flags = ops.NONE  # what the passes need to know (`core.ops.Flags`)

    def __call__(self, *args, **params):
        # A value that records operations (the transform's `Sym`, the tape's `Tensor`) says so
        # with a ``_jitgrad_apply`` method; anything else is computed with NumPy.
        for a in args:
            recorder = _recording_leaf(a)
            if recorder is not None:
                return type(recorder)._jitgrad_apply(recorder, self, args, params)
        out = self.impl(*args, **params)
        # a number in, a number out, as NumPy's ufuncs give (a vectorized impl gives 0-d)
        return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


def _recording_leaf(a):
    """``a`` if it records operations, else the first value in the list or tuple ``a`` (an
    array_like such as ``[x[0], 1.0]``) that does; None if nothing in it does."""
    if hasattr(type(a), "_jitgrad_apply"):
        return a
    if isinstance(a, (list, tuple)):
        for v in a:
            leaf = _recording_leaf(v)
            if leaf is not None:
                return leaf
    return None


_ROW_FIELDS = {"differentiable", "elementwise", "custom_rule", "zero_tangent"}


def primitive(name, impl, type_rule, **kw) -> Primitive:
    """Define the primitive ``name``; keywords are the row's fields (``differentiable``,
    ``elementwise``, ``custom_rule``, ``zero_tangent``) and its flags (`core.ops.Flags`:
    ``view``, ``shape_only``, ``costly``, ...), declared for every pass to read."""
    row = {k: v for k, v in kw.items() if k in _ROW_FIELDS}
    flags = ops.declare(name, **{k: v for k, v in kw.items() if k not in _ROW_FIELDS})
    p = Primitive(name, impl, type_rule, flags=flags, **row)
    PRIMITIVES[name] = p
    return p


def same_type(ts, p):
    """The type rule of a primitive whose result has the type of its first input."""
    return ts[0]


# ----------------------------------------------------------------------------- rule tables


def defvjp(name: str, *vjps) -> None:
    """The adjoint rules of ``name``, one per input (``None``: no gradient to that input). An
    elementwise primitive's rules are its tangent rules too, unless `defjvp` gives others."""
    assert name in PRIMITIVES, name
    RULES[name] = vjps
    if PRIMITIVES[name].elementwise and name not in JVPS:
        JVPS[name] = vjps


def defjvp(name: str, *jvps) -> None:
    """The tangent rules of ``name``, one per input (``None``: no derivative in that input)."""
    assert name in PRIMITIVES, name
    JVPS[name] = jvps


def defjvp_all(name: str, jvp) -> None:
    """A tangent rule taking every input's tangent at once (``None`` for an input without one):
    the result is built from every input, so its parts do not add up input by input."""
    assert name in PRIMITIVES, name
    JVPS_ALL[name] = jvp


def zero_tangent(name: str) -> bool:
    """Whether the operation ``name`` is a primitive declared ``zero_tangent``."""
    p = PRIMITIVES.get(name)
    return p is not None and p.zero_tangent


def no_tangent_rule(what: str):
    """A tangent rule that refuses: the input has a derivative jitgrad has no rule for."""
    def refuse(t, ans, *ins, **params):
        raise UnsupportedError(f"forward mode has no tangent rule for {what}")
    return refuse


def unbroadcast(contribution, like):
    """Sum an elementwise rule's ``contribution`` back to the shape of ``like`` (one place)."""
    c_ndim, x_ndim = np.ndim(contribution), np.ndim(like)
    if x_ndim == 0 and c_ndim == 0:
        return contribution
    return PRIMITIVES["sum_to_like"](contribution, like)
