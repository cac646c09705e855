"""What a parallel loop's generated code calls (``_rt.<name>``, re-exported by `runtime`): how
many chunks it runs in, a chunk's partial result stored, and the calling thread's chunk size and
thread count.

Takes the chunk loop's arguments; guarantees a chunk count that depends on the arguments alone
(`core.chunking.chunk_count`, compiled here: the cost model and its unit live there, with the
transforms' work estimate), so the sums are the same at any thread count. The thread settings
are `compile`'s (they call Numba's C functions by name).
"""

from __future__ import annotations

import numpy as np

from jitgrad.backend.numba.compile import (  # noqa: F401 - the thread settings, re-exported
    jit,
    limit_threads,
    set_chunksize,
    set_threads,
)
from jitgrad.core import chunking

chunk_count = jit(chunking.chunk_count)


@jit
def put_part(parts, chunk, part):
    """``parts[chunk] = part`` for a chunk's partial gradient (``parts`` C-contiguous, from
    `zeros`, ``part`` of its row's shape), as a loop: Numba's array assignment builds its
    shape-mismatch message from str and repr, 1.7 s of compile in every process that uses it."""
    row = parts[chunk].ravel()  # a view: the row of a C-contiguous array
    flat = np.ascontiguousarray(part).ravel()
    for k in range(flat.size):
        row[k] = flat[k]
