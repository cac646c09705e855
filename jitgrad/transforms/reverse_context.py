"""What the reverse transform shows the passes after it, and the one thing they may ask of it.

`transforms.reverse` differentiates a function's IR statement by statement into an adjoint
body. The passes that then decide how forward values reach that body — `saving` (each value
rebuilt, recomputed, read from a snapshot or pushed), the loop strategies `recompute` and
`checkpoint`, and `recompute.mark_ascending` — read the transform's result through a
`ReverseContext` and nothing else:

* **where forward values live:** ``home`` (the block each value is defined in), ``iter_home``
  (for a loop-carried value or a loop index: the loop body where each iteration's value
  lives), ``parent`` (a block's statement and the block around it);
* **which adjoint block is which:** ``adjoint_of_block`` and ``forward_of_block``;
* **the loops' adjoints:** ``repeat_of`` (a forward loop's ``Repeat``) and ``seeded`` (its
  active carried values whose adjoint is not zero when the loop's adjoint begins);
* **activity and adjoint variables:** `is_active`, `adjoint_key` (the versions of an array
  written in place share their first version's adjoint), `adjoint_of` (an active value's
  adjoint variable) and `outer_targets` (the adjoints a statement's adjoint adds into that
  live outside it).

The context is read-only: its maps are `types.MappingProxyType` views. A pass acts on the
transform in one way only, `counter_of`, which gives a loop's adjoint its reverse iteration
counter (made on first use, so the adjoint numbers its iterations only where a pass reads
them). What a pass changes beyond that is the IR it is handed (the forward and adjoint
bodies) and the saved values and stacks it returns (`transforms.passes.GradientWork`).

While the transform runs, an equation's reverse rule that is built from user code (a
``custom_vjp``'s ``bwd``, `custom_rule`) writes into the adjoint through an `AdjointWriter`:
where statements go, whether an input is active, an input's value, and adding a contribution.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Protocol

from jitgrad.core.ir import Block, Eqn, Function, Namer, Repeat, Var
from jitgrad.lang.symbolic import GraphBuilder


@dataclasses.dataclass(frozen=True)
class ReverseContext:
    """The reverse transform's result as the passes after it may read it (module docstring)."""

    fn: Function  # the forward function (its body gets the saves)
    namer: Namer  # fresh names for both kernels
    home: Mapping[Var, Block]
    iter_home: Mapping[Var, Block]
    parent: Mapping[Block, tuple]  # block -> (its statement, the block around it)
    adjoint_of_block: Mapping[Block, Block]
    forward_of_block: Mapping[Block, Block]
    repeat_of: Mapping[object, Repeat]  # forward loop (For or While) -> its adjoint loop
    seeded: Mapping[object, list]  # forward loop -> carries whose adjoint is seeded after it
    is_active: Callable[[object], bool]  # an atom that carries an adjoint
    adjoint_key: Callable[[Var], Var]  # the value whose adjoint ``v``'s is
    adjoint_of: Callable[[Var], Var]  # the adjoint variable of an active value
    outer_targets: Callable[[object], list]  # a statement's adjoints that live outside it
    counter_of: Callable[[object], Var]  # a loop's reverse iteration counter (made on first use)


class AdjointWriter(Protocol):
    """What a reverse rule built from user code may use of the transform (module docstring)."""

    @property
    def graph(self) -> GraphBuilder:
        """The builder whose current block the adjoint statements go into."""

    def is_active(self, a) -> bool:
        """Whether the atom ``a`` carries an adjoint."""

    def value(self, a):
        """The forward value of the atom ``a`` as the adjoint reads it."""

    def add(self, x: Var, contribution, e: Eqn) -> None:
        """Add ``e``'s ``contribution`` (at the broadcast shape) to ``x``'s adjoint."""


__all__ = ["AdjointWriter", "ReverseContext"]
