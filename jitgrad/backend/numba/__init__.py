"""The Numba backend: generated Python source that ``numba.njit`` compiles.

`emit` writes the module (one operation per line, commented with the user's line), `runtime`
holds the loop helpers the generated code calls, `compile` writes the module to a real file
and jits it. Generated code imports `jitgrad.backend.numba.runtime` by path (cache format jg3).
"""

from jitgrad.backend.numba import compile as _compile_module
from jitgrad.backend.numba.emit import emit_kernel, emit_module, entry_name


def load(stem, source, names, inline=(), parallel=False):
    """Compile a module (`compile.load`): (its path, {name: compiled function})."""
    return _compile_module.load(stem, source, names, inline=list(inline), parallel=parallel)


__all__ = ["emit_kernel", "emit_module", "entry_name", "load"]
