"""Passes as declared objects: what each reads, writes and needs, run in order from a list.

A gradient is made from a function's forward IR by a list of passes (`pipeline.GRADIENT_PASSES`),
each a `Pass` declared in the module that implements it. A pass is a function of one
`GradientWork` (the work in progress) that declares

* ``reads``: the fields of the work it reads (each must be set when it runs);
* ``writes``: the fields it may set or rebind (it may also change the IR it reads in place:
  the forward and adjoint bodies are built up that way);
* ``needs``: the passes that must have run before it;
* ``when``: a settings field (`core.settings.Settings`) that must be true for it to run, or
  ``"not <field>"``; None: it always runs.

`run_passes` checks the declarations as it goes: a pass that runs before what it needs, reads a
field not yet set, or rebinds a field it did not declare is an error of jitgrad's own (an
`AssertionError`), found by the first build that takes that path. A new pass is one module that
declares its `Pass` and one line in the list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from jitgrad.core.ir import Block, Function, Gradient, Var
from jitgrad.core.settings import Settings
from jitgrad.transforms.reverse_context import ReverseContext


@dataclasses.dataclass(eq=False)
class GradientWork:
    """A gradient in the making: what the passes read and write (each declares which)."""

    function: Function  # the forward IR (the passes add saves to its body)
    wrt: list[int]  # the parameters differentiated
    settings: Settings
    cotangent: Var | None = None  # a vector-Jacobian product's seed (`vjp`): the adjoint's last parameter
    value_needed: bool = True  # False for `grad`: nothing computes the value beyond what the adjoint reads
    context: ReverseContext | None = None  # the reverse transform's result (`reverse`)
    adjoint: Block | None = None  # the adjoint body
    gradients: list | None = None  # the adjoint's results, one per ``wrt``
    saved: list | None = None  # (forward value, adjoint parameter): what the forward kernel returns
    stacks: list | None = None  # the tape's stacks, passed from the forward kernel to the adjoint
    gradient: Gradient | None = None  # the forward and adjoint kernels


FIELDS = tuple(f.name for f in dataclasses.fields(GradientWork))


@dataclasses.dataclass(frozen=True)
class Pass:
    """One pass (module docstring)."""

    name: str
    run: Callable[[GradientWork], None]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    needs: tuple[str, ...] = ()
    when: str | None = None

    def __post_init__(self):
        unknown = [f for f in self.reads + self.writes if f not in FIELDS]
        if unknown:
            raise AssertionError(f"pass {self.name!r} declares unknown fields {unknown}")

    def enabled(self, settings: Settings) -> bool:
        """Whether ``when`` holds under ``settings``."""
        if self.when is None:
            return True
        negate, field = self.when.startswith("not "), self.when.removeprefix("not ")
        return bool(getattr(settings, field)) != negate


def run_passes(passes, work: GradientWork) -> GradientWork:
    """Run each enabled pass of ``passes`` in order on ``work``, checking its declarations."""
    done: set[str] = set()
    for p in passes:
        if not p.enabled(work.settings):
            continue
        missing = [n for n in p.needs if n not in done]
        unset = [f for f in p.reads if getattr(work, f) is None]
        if missing or unset:
            raise AssertionError(f"pass {p.name!r} runs before {missing} or reads unset {unset}")
        before = {f: getattr(work, f) for f in FIELDS}
        p.run(work)
        rebound = [f for f in FIELDS if getattr(work, f) is not before[f] and f not in p.writes]
        if rebound:
            raise AssertionError(f"pass {p.name!r} set {rebound}, which it does not declare")
        done.add(p.name)
    return work


__all__ = ["GradientWork", "Pass", "run_passes"]
