"""Sizes assumed equal while building: axes of arguments that broadcast against each other.

Part of `symbolic.GraphBuilder` (a mixin; it holds ``same``, ``assumed``, ``param_axes``,
``example_sizes``, ``made`` and ``loc``). Guarantees: two axes of arguments (or an axis and a
literal size) that meet in an elementwise operation or a contraction are assumed to be one
size, in one class of tokens (`size_class`), and every such assumption becomes a ``same_size``
check that the forward pass runs first (`size_checks`); where an example call's sizes differ
and one is 1, that one is assumed to be 1 instead (a broadcast known while building). A call
that breaks an assumption gets the general code (`api`).
"""

from __future__ import annotations

from jitgrad.core.ir import Const, Eqn, dims_of
from jitgrad.core.types import Type


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
        example call's sizes differ and the axes ``broadcasts``, that the one of size 1 is 1."""
        first, t = self.size_class(first), self.size_class(t)
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

    def canonical(self, t):
        """Size token ``t`` in terms of one token per class of same-size axes."""
        if isinstance(t, tuple) and t and t[0] == "broadcast":
            return ("broadcast",) + tuple(self.canonical(x) for x in t[1:])
        if isinstance(t, tuple) and t and t[0] == "less":  # (a slice's: `_slice_size`)
            return ("less", self.canonical(t[1]), t[2])
        return self.size_class(t)

    def rename_sizes(self) -> None:
        """Every variable's dims in terms of one token per class of same-size axes."""
        for v in self.made:
            if v.dims is not None:
                v.dims = tuple(self.canonical(t) for t in v.dims)

    def assume_write_fits(self, slot: tuple, value: tuple) -> list[int] | None:
        """A write ``x[idx] = v`` of an array of the slot's rank (``slot``, ``value``: their
        size tokens): NumPy broadcasts ``v`` to the slot, but nearly always ``v`` has the
        slot's sizes, and then the write's adjoint is the slot's adjoint itself (no sum back
        to ``v``'s shape, which would make the forward pass keep ``v`` for its shape alone).
        Assume so where the sizes are axes of arguments, or slices that drop as many entries
        of them (``B[1:-1] = A[:-2] + ...``: ``A`` and ``B`` the same length), checked first
        thing as every assumption; return the axes whose sizes are still not known equal (for
        a check where the write is), or None where ``v`` visibly broadcasts (an axis of size
        1, or assumed 1 from the example call, against one that is not)."""
        for ts, tv in zip(slot, value):
            ts, tv = self.canonical(ts), self.canonical(tv)
            if (isinstance(ts, tuple) and isinstance(tv, tuple) and ts[:1] == tv[:1] == ("less",)
                    and ts[2] == tv[2]):
                self.assume_same_size(ts[1], tv[1], broadcasts=False)
            elif tv != 1:
                self.assume_same_size(ts, tv)
        unknown = []
        for k, (ts, tv) in enumerate(zip(slot, value)):
            ts, tv = self.canonical(ts), self.canonical(tv)
            if ts == tv:
                continue
            if tv == 1 or isinstance(ts, int) and isinstance(tv, int):
                return None  # (two different literals: NumPy's error, at run time)
            unknown.append(k)
        return unknown

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
        return out
