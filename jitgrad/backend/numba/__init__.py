"""The Numba backend: generated Python source that ``numba.njit`` compiles.

`emit` writes the module (one operation per line, commented with the user's line), `runtime`
holds the loop helpers the generated code calls, `compile` writes the module to a real file
and jits it. Generated code imports `jitgrad.backend.numba.runtime` by path (cache format jg3).
"""

from jitgrad.backend.numba import compile as _compile_module
from jitgrad.backend.numba.batch import batch_loop, compile_plain
from jitgrad.backend.numba.emit import emit_kernel, emit_module, entry_name
from jitgrad.core.settings import DEFAULT, Settings


def load(stem, source, names, inline=(), settings: Settings = DEFAULT):
    """Compile a module (`compile.load`; with Numba's ``parallel=True`` under
    ``settings.parallel``): (its path, {name: compiled function}). A module whose products or
    linear algebra need SciPy, which is missing, is refused first (`compile.require_scipy`),
    else the BLAS and LAPACK routines it calls are bound (`runtime_linalg.link_routines`); the ufuncs
    it calls are made first (`runtime.bind_ufuncs`)."""
    from jitgrad.backend.numba import runtime

    if _compile_module.require_scipy(source, runtime.USES_SCIPY):
        runtime.link_routines()  # its code may come from the disk cache: the routines' names first
    runtime.bind_ufuncs(source)
    return _compile_module.load(stem, source, names, inline=list(inline),
                                parallel=settings.parallel)


# What a call needs to know about compiled entries (`jitgrad.specialisations`).


def warm(report=None) -> int:
    """Make the runtime's common signatures ready in Numba's disk cache (`runtime.warm`):
    once per machine, then a new gradient's first call compiles only its own code."""
    from jitgrad.backend.numba import warming

    return warming.warm(report)


def prepare_parallel() -> None:
    """Before a parallel build's first launch: choose Numba's threading layer
    (`compile.choose_threading_layer`), unless the user did or the layer has launched."""
    _compile_module.choose_threading_layer()


def compiles() -> bool:
    """Whether entries are compiled (False under ``JITGRAD_DISABLE_JIT=1``: plain Python)."""
    return not _compile_module.DISABLE_JIT


def freeze(entry) -> None:
    """No more signatures for this compiled entry: a call of another type raises TypeError."""
    entry.disable_compile()


def thaw(entry) -> None:
    """The entry may compile new signatures again."""
    entry.disable_compile(False)


is_cache_damage = _compile_module.is_cache_damage  # (error) -> a damaged disk cache?
drop_disk_cache = _compile_module.drop_disk_cache  # (entry) -> recompile it on its next call
missing_dependency = _compile_module.missing_dependency  # (error) -> the fix's text, or None
is_compile_error = _compile_module.is_compile_error  # (error) -> Numba could not compile it?

__all__ = ["batch_loop", "compile_plain", "compiles", "drop_disk_cache", "emit_kernel", "emit_module", "entry_name", "freeze",
           "is_cache_damage", "is_compile_error", "load", "missing_dependency", "prepare_parallel",
           "thaw", "warm"]
