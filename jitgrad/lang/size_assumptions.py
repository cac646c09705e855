"""Sizes assumed equal while building: axes of arguments that broadcast against each other.

Part of `symbolic.GraphBuilder` (a mixin; it holds ``same``, ``assumed``, ``param_axes``,
``example_sizes``, ``made`` and ``loc``). Guarantees: two axes of arguments (or an axis and a
literal size) that meet in an elementwise operation or a contraction are assumed to be one
size, in one class of tokens (`size_class`), and every such assumption becomes a ``same_size``
check that the forward pass runs first (`size_checks`); where an example call's sizes differ
and one is 1, that one is assumed to be 1 instead (a broadcast known while building). An
argument axis sliced from its start (``pos[:, 0:1]``) is assumed to have at least the slice's
stop entries where the example call's has (`assume_at_least`, checked by ``size_at_least``),
so the slice's size is known. A call that breaks an assumption gets the general code (`api`).
"""

from __future__ import annotations

from jitgrad.core.ir import Const, Eqn, dims_of
from jitgrad.core.types import Type


def _less(token) -> bool:
    """Whether ``token`` is a slice's size, ``("less", axis token, dropped)``."""
    return isinstance(token, tuple) and len(token) == 3 and token[0] == "less"


class SizeAssumptions:
    """`symbolic.GraphBuilder`'s size assumptions (see the module)."""

    def set_example(self, args) -> None:
        """The sizes of an example call's arguments (one per parameter, in order), which guide
        the size assumptions (`assume_same_size`)."""
        for p, a in zip(self.param_vars, args):
            shape = getattr(a, "shape", None)
            if isinstance(shape, tuple) and len(shape) == p.type.ndim:
                self.example_sizes.update(zip(p.dims, shape))

    def size_class(self, token):
        while token in self.same:
            token = self.same[token]
        return token

    def assume_same_sizes(self, arrays: list) -> None:
        """Two axes that broadcast against each other and whose sizes are not known while
        building are, nearly always, the same size (``x @ W + b``); NumPy also allows either to
        be 1. Where both are axes of arguments (or one is a literal size), assume they are the
        same: the forward pass checks it first thing (``same_size``), and a call that breaks it
        gets the general code (`api`), which broadcasts and unbroadcasts at run time."""
        ndim = max((a.type.ndim for a in arrays), default=0)
        for k in range(ndim):
            first = None
            for a in arrays:
                j = k - (ndim - a.type.ndim)
                if j < 0:
                    continue
                t = self.size_class(dims_of(a)[j])
                if t == 1:
                    continue
                if first is None or t == first:
                    first = t
                    continue
                self.assume_same_size(first, t)
                if self.size_class(first) == 1:  # (it was assumed to be 1: `assume_same_size`)
                    first = self.size_class(t)

    def assume_same_size(self, first, t, broadcasts: bool = True) -> None:
        """Assume that the axes of size tokens ``first`` and ``t`` are the same size, when both
        are axes of arguments or one is a literal (checked first thing, as above); where the
        example call's sizes differ and the axes ``broadcasts``, that the one of size 1 is 1.
        Two slices that drop as many entries of two axes (``u[1:-1]``, ``v[2:]``) are the
        same size where the axes are: assumed so where the example call's sizes agree."""
        first, t = self.size_class(first), self.size_class(t)
        if _less(first) and _less(t) and first[2] == t[2]:
            self.assume_same_size(first[1], t[1], broadcasts=False)
            return
        if first == t or not all(isinstance(x, int) or x in self.param_axes for x in (first, t)) or (
                isinstance(first, int) and isinstance(t, int)):
            return  # (two different literals: NumPy's own error, at run time)
        sizes = [x if isinstance(x, int) else self.example_sizes.get(x) for x in (first, t)]
        if None not in sizes and sizes[0] != sizes[1]:
            # The example call's sizes differ: the axis of size 1 broadcasts. Assume it is 1
            # (a broadcast known while building: a constant index, a sum over that axis in the
            # adjoint); sizes that differ otherwise are NumPy's error, raised at run time.
            if sizes[1] == 1:
                first, t, sizes = t, first, sizes[::-1]
            if not broadcasts or sizes[0] != 1 or isinstance(first, int):
                return
            t = 1
        keep, drop = (t, first) if isinstance(t, int) else (first, t)
        self.same[drop] = keep
        self.assumed.append((keep, drop, self.loc))
        self.rename_sizes()

    def assume_at_least(self, token, m: int) -> bool:
        """Whether an axis of size token ``token`` has at least ``m`` entries: known (a
        literal), or assumed where it is an argument's axis and the example call's has (a
        slice ``pos[:, 0:1]`` is then of size 1 while building, so what it meets broadcasts
        as known; checked first thing, ``size_at_least``, as `assume_same_size`'s are)."""
        t = self.size_class(token)
        if isinstance(t, int):
            return t >= m
        n = self.example_sizes.get(t)
        if t not in self.param_axes or n is None or n < m:
            return False
        if not any(a == t and b >= m for a, b, _ in self.at_least):
            self.at_least.append((t, m, self.loc))
        return True

    def rename_sizes(self) -> None:
        """Every variable's dims in terms of one token per class of same-size axes."""
        def canon(t):
            if isinstance(t, tuple) and t and t[0] == "broadcast":
                return ("broadcast",) + tuple(canon(x) for x in t[1:])
            if isinstance(t, tuple) and t and t[0] == "less":  # (a slice's: `_slice_size`)
                return ("less", canon(t[1]), t[2])
            return self.size_class(t)
        for v in self.made:
            if v.dims is not None:
                v.dims = tuple(canon(t) for t in v.dims)

    def size_checks(self) -> list[Eqn]:
        """The forward pass's first statements: one ``same_size`` per assumption."""
        out = []
        reads: dict = {}

        def size(token, loc):
            if isinstance(token, int):
                return Const(token)
            if token not in reads:
                p, k = self.param_axes[token]
                v = self.new_var(Type("i", 0), f"_{p.name}_shape{k}")
                v.dims = (self.size_class(token),)
                out.append(Eqn("shape_dim", [v], [p], {"axis": k}, loc))
                reads[token] = v
            return reads[token]

        for keep, drop, loc in self.assumed:
            a, b = size(keep, loc), size(drop, loc)
            out.append(Eqn("same_size", [], [a, b], {}, loc))
        for token, m, loc in self.at_least:
            out.append(Eqn("size_at_least", [], [size(token, loc), Const(m)], {}, loc))
        return out
