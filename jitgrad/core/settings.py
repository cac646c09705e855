"""How a function is compiled: one value from the public API to the backend.

`Settings` is made once per `GradFunction` (and for each transform's own build) and handed
down unchanged: the pipeline reads it to choose passes (`transforms.passes.Pass.when`), the loop
strategies read their switches and the memory cap from it, and the backend reads ``parallel``
from it when it writes and compiles a module. Nothing keeps a copy of a field of it elsewhere,
and no module-level switch changes it.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Settings:
    """``parallel``: prange loops run in parallel (`transforms.parallel`; the backend compiles
    with Numba's ``parallel=True``); ``memory_cap``: bytes a loop's tape may hold before it is
    checkpointed (`transforms.checkpoint`; None: no cap); ``backend``: the key in
    `pipeline.BACKENDS`; ``recompute``, ``fuse``, ``ascending``: the loop strategies
    (`transforms.recompute`), on unless a test compares without one; ``chunks``: a parallel
    loop's number of chunks (None: as many as pay for themselves; tests set a number to run
    several chunks on small inputs); ``in_place``: the adjoint adds into arrays it owns in
    place (`in_place.adds_in_place`; off for a gradient that forward mode differentiates
    again, whose tangents of the sums fuse into the adjoint's loops as they are);
    ``made_again``: a top-level array of cheap elementwise arithmetic is made again in the
    adjoint instead of kept (`saving.Saver.elementwise_again`; off there too: forward mode
    joins both kernels into one, where nothing is kept and it would be computed twice);
    ``float32``: the float arrays the generated code makes are float32, for arguments whose
    float arrays all are (`calling.float32_build`; the backend's `runtime_float32`)."""

    parallel: bool = False
    memory_cap: int | None = None
    backend: str = "numba"
    recompute: bool = True  # independent loops recomputed or fused (else taped)
    fuse: bool = True  # a loop that feeds one sum fused (else recomputed)
    ascending: bool = True  # a loop adjoint whose iterations commute runs forwards
    chunks: int | None = None
    in_place: bool = True  # adjoint accumulations into owned arrays update them in place
    made_again: bool = True  # cheap top-level arrays made again in the adjoint, not kept
    float32: bool = False  # new float arrays float32 (every float array argument is)


DEFAULT = Settings()

__all__ = ["DEFAULT", "Settings"]
