"""Batched calls: a compiled loop around a compiled entry (`jitgrad.vmap`).

`batch_loop(entry, batched, paths, parallel)` returns a Numba function ``loop(*args, *outs)``
that calls ``entry`` once per row ``b`` of the batched arguments (``args[k][b]`` for ``k`` in
``batched``, the others as they are) and writes each result leaf (``paths``: how to reach it
in the entry's result, ``"[1][0]"``) into row ``b`` of its output. With ``parallel`` the rows
run in a ``numba.prange`` loop. The loop is generated source, one statement per line, and is
compiled once per (entry, batched, paths, parallel). The loop around a gradient's entry (a
function of a generated module) is a module of its own in the cache folder, which reads the
entry from the gradient's module: Numba caches it on disk as it caches the gradient, so a new
process loads it instead of compiling it again. A loop around a user's plain function is
compiled in each process (the function need not live in a file).
"""

from __future__ import annotations

from jitgrad.backend.numba import compile as _compile

_LOOPS: dict = {}
_PLAIN: dict = {}


def batch_source(n_args: int, batched: tuple, paths: tuple, parallel: bool) -> str:
    """The loop's source: ``def _batched(a0, .., out0, ..)``."""
    args = [f"a{k}" for k in range(n_args)]
    outs = [f"out{j}" for j in range(len(paths))]
    rows = ", ".join(f"a{k}[b]" if k in batched else f"a{k}" for k in range(n_args))
    loop = "_prange" if parallel else "range"
    lines = [f"def _batched({', '.join(args + outs)}):",
             f"    for b in {loop}(a{batched[0]}.shape[0]):",
             f"        r = _entry({rows})"]
    lines += [f"        {o}[b] = r{p}" for o, p in zip(outs, paths)]
    return "\n".join(lines) + "\n"


def compile_plain(fn):
    """A plain Python function compiled by ``numba.njit`` (once per function; itself under
    ``JITGRAD_DISABLE_JIT=1``): what `jitgrad.vmap` maps when it is not a gradient."""
    d = _PLAIN.get(fn)
    if d is None:
        d = _PLAIN[fn] = fn if _compile.DISABLE_JIT else _compile.njit_plain(fn)
    return d


def batch_module(module: str, name: str, n_args: int, batched: tuple, paths: tuple,
                 parallel: bool) -> str:
    """The source of a module holding the loop around the function ``name`` of the generated
    module ``module`` (imported already: its name is in ``sys.modules``)."""
    head = ["# jitgrad.vmap: a loop calling the gradient's entry once per row of the batched",
            "# arguments (cached on disk with it).", "import sys", ""]
    if parallel:
        head += ["from numba import prange as _prange", ""]
    head += [f"_entry = sys.modules[{module!r}].{name}", "", ""]
    return "\n".join(head) + batch_source(n_args, batched, paths, parallel)


def batch_loop(entry, n_args: int, batched: tuple, paths: tuple, parallel: bool = False):
    """The compiled loop (see the module's docstring); plain Python under
    ``JITGRAD_DISABLE_JIT=1``."""
    key = (entry, n_args, batched, paths, parallel)
    loop = _LOOPS.get(key)
    module = getattr(getattr(entry, "py_func", None), "__module__", None) or ""
    if loop is None and not _compile.DISABLE_JIT and module.startswith("jitgrad_generated."):
        name = entry.py_func.__name__
        source = batch_module(module, name, n_args, batched, paths, parallel)
        _, fns = _compile.load(f"{name}_vmap", source, ["_batched"], parallel=parallel)
        loop = _LOOPS[key] = fns["_batched"]
    if loop is None:
        namespace = {"_entry": entry, "_prange": _compile.PRANGE if parallel else range}
        exec(compile(batch_source(n_args, batched, paths, parallel), "<jitgrad.vmap>",  # noqa: S102
                     "exec"), namespace)
        fn = namespace["_batched"]
        if not _compile.DISABLE_JIT:
            fn = _compile.njit_plain(fn, parallel)
        loop = _LOOPS[key] = fn
    return loop


__all__ = ["batch_loop", "batch_module", "batch_source", "compile_plain"]
