"""Sizes assumed equal while building: axes of arguments that broadcast against each other.

Part of `symbolic.GraphBuilder` (a mixin; it holds ``same``, ``assumed``, ``param_axes``,
``example_sizes``, ``made`` and ``loc``). Guarantees: two axes of arguments (or an axis and a
literal size) that meet in an elementwise operation or a contraction are assumed to be one
size, in one class of tokens (`size_class`), and every such assumption becomes a ``same_size``
check that the forward pass runs first (`size_checks`); where an example call's sizes differ
and one is 1, that one is assumed to be 1 instead (a broadcast known while building). An
argument axis sliced from its start (``pos[:, 0:1]``) is assumed to have at least the slice's
stop entries where the example call's has (`assume_at_least`, checked by ``size_at_least``),
so the slice's size is known; a slice that drops entries of an argument's axis (``wcon[1:]``)
and meets another argument's axis is assumed as long as it where the example call's sizes say
so (`assume_slice_size`, checked as ``same_size(m + dropped, n)``). A call that breaks an
assumption gets the general code (`api`).
"""

from __future__ import annotations

import numpy as np

from jitgrad.core import ops
from jitgrad.core.ir import Const, Eqn, Var, dims_of
from jitgrad.core.types import Type
from jitgrad.lang.size_tokens import plus
from jitgrad.prims.primitives import PRIMITIVES


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
            if p.type.kind == "b" and not p.type.ndim and isinstance(a, (bool, np.bool_)):
                self.example_flags[p] = bool(a)  # (a bool argument: `decide_flag`)

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
        first, t = self.canonical(first), self.canonical(t)
        if _less(first) and _less(t) and first[2] == t[2]:
            self.assume_same_size(first[1], t[1], broadcasts=False)
            return
        if _less(first) != _less(t):
            self.assume_slice_size(*((first, t) if _less(first) else (t, first)))
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

    def assume_slice_size(self, less, t) -> None:
        """Assume that a slice dropping entries of an argument's axis (``wcon[1:]``, size
        token ``less``: ``("less", n, dropped)``) is as long as the axis of token ``t`` (an
        argument's, or a literal size) that it meets (``u[:, :, k]``, where ``wcon`` has one
        row more than ``u``), where the example call's sizes say so: checked first thing as
        ``same_size(m + dropped, n)`` (`size_checks`)."""
        n, dropped = less[1], less[2]
        if not (n in self.param_axes and (isinstance(t, int) or t in self.param_axes)):
            return
        sizes = [self.example_sizes.get(n), t if isinstance(t, int) else self.example_sizes.get(t)]
        if None in sizes or sizes[0] - dropped != sizes[1] or sizes[1] < 1:
            return  # (a slice of size 1 that broadcasts, or sizes that differ: at run time)
        self.same[less] = t
        self.assumed.append((t, less, self.loc))
        self.rename_sizes()

    def canonical(self, t):
        """Size token ``t`` in terms of one token per class of same-size axes."""
        if isinstance(t, tuple) and t and t[0] == "broadcast":
            return ("broadcast",) + tuple(self.canonical(x) for x in t[1:])
        if isinstance(t, tuple) and t and t[0] == "less":  # (a slice's: `_slice_size`)
            less = plus(self.canonical(t[1]), -t[2])  # (or assumed an axis's size)
            return self.size_class(less) if less in self.same else less
        return self.size_class(t)

    def assume_at_least(self, token, m) -> bool:
        """Whether an axis of size token ``token`` has at least ``m`` entries (a literal, or a
        size ``base + c`` of an argument's axis, `size_tokens.plus`): known (a literal), or
        assumed where it is an argument's axis and the example call's has (a slice ``pos[:,
        0:1]`` is then of size 1 while building, so what it meets broadcasts as known;
        ``in_field[1:I + 3]`` is ``I + 2`` long; checked first thing, ``size_at_least``, as
        `assume_same_size`'s are)."""
        t = self.size_class(token)
        if isinstance(t, int) and isinstance(m, int):
            return t >= m
        n = self.example_sizes.get(t)
        least = m if isinstance(m, int) else self._example_plus(m)
        if t not in self.param_axes or n is None or least is None or n < least:
            return False
        if not any(a == t and (b == m or isinstance(b, int) and isinstance(m, int) and b >= m)
                   for a, b, _ in self.at_least):
            self.at_least.append((t, m, self.loc))
        return True

    def _example_plus(self, m):
        """The example call's value of the size ``base + c`` (`size_tokens.plus`) of an
        argument's axis ``base``; None for any other token."""
        if not (isinstance(m, tuple) and len(m) == 3 and m[0] == "less"):
            return None
        base = self.size_class(m[1])
        n = self.example_sizes.get(base) if base in self.param_axes else None
        return None if n is None else n - m[2]

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

    # -- tests on sizes -------------------------------------------------------------------

    def note_size_value(self, out: Var, prim: str, ins: list, params: dict) -> None:
        """Keep ``out`` (a scalar just made) in ``size_values`` when it is computed from the
        arguments' sizes alone: a size read off an argument (or off an axis of the size of
        an argument's axis, or of a literal size), or a pure scalar operation on such values
        and literals."""
        flags = ops.flags(prim)
        if flags.reads_size:
            x = ins[0]
            axes = [dims_of(x)[params["axis"]]] if prim == "shape_dim" else dims_of(x) \
                if isinstance(x, Var) else ()  # (`E.size` of E = M * 1.0: M's sizes)
            if x in self.param_axes_of or isinstance(x, Var) and all(
                    self._argument_size(t) for t in axes):
                self.size_values[out] = (prim, tuple(ins), dict(params))
            return
        if flags.effects or flags.raises or flags.checks_sizes or flags.allocates or \
                flags.tape or not any(isinstance(a, Var) for a in ins):
            return
        if all(isinstance(a, Const) or a in self.size_values or a in self.example_flags
               for a in ins):
            self.size_values[out] = (prim, tuple(ins), dict(params))

    @property
    def param_axes_of(self) -> set:
        return {p for p, _ in self.param_axes.values()}

    def _argument_size(self, token) -> bool:
        token = self.size_class(token)
        return isinstance(token, int) or token in self.param_axes

    def size_value(self, atom):
        """The value of ``atom`` in the example call, when it is computed from the
        arguments' sizes alone (`note_size_value`) and they are known; else None."""
        if isinstance(atom, Const):
            return atom.value
        if atom in self.example_flags:
            return self.example_flags[atom]
        made = self.size_values.get(atom)
        if made is None:
            return None
        prim, ins, params = made
        if prim == "shape_dim":
            token = self.size_class(dims_of(ins[0])[params["axis"]])
            return token if isinstance(token, int) else self.example_sizes.get(token)
        if ops.flags(prim).reads_size:  # of an argument: read off an array of its shape
            shape = [self.size_value(Const(t)) if isinstance(t, int) else
                     self.example_sizes.get(self.size_class(t)) for t in dims_of(ins[0])]
            if None in shape:
                return None
            return PRIMITIVES[prim].impl(np.broadcast_to(0.0, shape), **params)
        values = [self.size_value(a) for a in ins]
        if None in values:
            return None
        return PRIMITIVES[prim].impl(*values, **params)

    def decide(self, test) -> bool | None:
        """The value of the scalar ``test`` in the example call, when it is computed from the
        arguments' sizes alone: the code built from here on holds for calls where it has
        that value only, and the forward pass checks it first thing (`size_checks`)."""
        value = self.size_value(test)
        if value is None:
            return None
        self.decided.append((test, bool(value), self.loc))
        return bool(value)

    def decided_size(self, n):
        """The run-time integer ``n`` (a `Sym`) as the number it is in the example call, where
        it is made of the arguments' sizes alone (the build then holds for that value only,
        `decide`: built again for another); else ``n``."""
        if not (hasattr(n, "atom") and not n.ndim and n.type.kind == "i"):
            return n
        value = self.size_value(self.atom(n, check=False))
        if value is None or not self.decide(self.atom(n == int(value), check=False)):
            return n
        return int(value)

    def decide_flag(self, test) -> bool | None:
        """The value of the scalar ``test`` in the example call, when it is computed from the
        call's bool arguments (and sizes) alone and reads at least one of them (``if
        calc_second_order:``, ``x if flag else None``): decided as a test on sizes is
        (`decide`), so that each value of the argument gets code of its own, as JAX's
        ``static_argnums`` would; None otherwise."""
        def reads_flag(atom) -> bool:
            if atom in self.example_flags:
                return True
            made = self.size_values.get(atom)
            return made is not None and any(reads_flag(a) for a in made[1])
        return self.decide(test) if reads_flag(test) else None

    def size_checks(self) -> list[Eqn]:
        """The forward pass's first statements: one ``same_size`` per assumption, then the
        tests decided from the example call's sizes (`decide`), computed again from the
        arguments' sizes and checked to take the same side."""
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
            a = size(keep, loc)
            if _less(drop) and isinstance(keep, int):  # (a slice's size, `assume_slice_size`)
                a, drop = Const(keep + drop[2]), drop[1]
            elif _less(drop):  # m + dropped == n
                a, more = self.new_var(Type("i", 0)), a
                out.append(Eqn("add", [a], [more, Const(drop[2])], {}, loc))
                drop = drop[1]
            out.append(Eqn("same_size", [], [a, size(drop, loc)], {}, loc))
        again: dict = {}

        def computed(atom, loc):  # ``atom`` computed again from the arguments' sizes
            if isinstance(atom, Const) or atom in self.example_flags:
                return atom  # (a bool argument: read as it is)
            if atom not in again:
                prim, ins, params = self.size_values[atom]
                if prim == "shape_dim":
                    again[atom] = size(self.size_class(dims_of(ins[0])[params["axis"]]), loc)
                    return again[atom]
                if not ops.flags(prim).reads_size:
                    ins = [computed(a, loc) for a in ins]
                elif ins[0] not in self.param_axes_of:  # read off an array the function
                    # made of the arguments' sizes (`E.size`, E = M * 1.0): off an empty
                    # array of those sizes, made here
                    shape = [size(self.size_class(t), loc) for t in dims_of(ins[0])]
                    blank = self.new_var(Type("f", len(shape)))
                    out.append(Eqn("empty", [blank], shape, {"kind": "f"}, loc))
                    ins = [blank, *ins[1:]]
                v = again[atom] = self.new_var(atom.type)
                out.append(Eqn(prim, [v], list(ins), dict(params), loc))
            return again[atom]

        for test, value, loc in self.decided:
            v = computed(test, loc)
            if v.type.kind != "i":
                v, cast = self.new_var(Type("i", 0)), v
                out.append(Eqn("cast", [v], [cast], {"kind": "i"}, loc))
            out.append(Eqn("same_size", [], [v, Const(int(value))], {"test": True}, loc))
        for token, m, loc in self.at_least:
            least = Const(m) if isinstance(m, int) else self.new_var(Type("i", 0))
            if not isinstance(m, int):  # base + c
                out.append(Eqn("add", [least], [size(m[1], loc), Const(-m[2])], {}, loc))
            out.append(Eqn("size_at_least", [], [size(token, loc), least], {}, loc))
        return out
