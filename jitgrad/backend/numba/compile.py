"""Generated source → a real file → ``numba.njit``. One of the two modules that import Numba
(the other, `runtime_linalg`, declares BLAS and LAPACK routines to it).

Takes module source text (from `emit`) and the names of its functions. Guarantees:

* The source lives in a real ``.py`` file under the cache folder (``JITGRAD_CACHE_DIR``, else the
  user's cache folder), named by a hash of its text: tracebacks, ``inspect``, pdb and Numba's own
  messages show it, and Numba's ``cache=True`` can persist the machine code next to it, so a
  second process skips compilation.
* A file is created once, atomically (write a temporary file, then link it into place; a file
  that is already there with the same text is left alone, so its time stamp, which Numba's cache
  checks, stays valid). Two processes creating the same entry at once both succeed; an entry
  whose text is damaged is rewritten; a Numba cache that cannot be loaded is recompiled.
* ``JITGRAD_DISABLE_JIT=1`` (or Numba's ``NUMBA_DISABLE_JIT=1``) runs the generated source as plain
  Python, so pdb and print work inside it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
import types

import numba
import numpy as np
from llvmlite import ir as llvm_ir

from jitgrad.core.errors import MissingDependencyError
from jitgrad.prims.primitives import CONSTANT_ARRAYS

# numba.njit(parallel=...): only prange loops; no parallel NumPy expressions or reductions
NUMBA_OPTIONS = {"prange": True, "comprehension": False, "reduction": False, "setitem": False,
                 "inplace_binop": False, "numpy": False, "stencil": False, "fusion": False}

# Numba's own NUMBA_DISABLE_JIT=1 (its decorators then return the plain functions) means the same
DISABLE_JIT = (os.environ.get("JITGRAD_DISABLE_JIT", "") not in ("", "0")
               or bool(numba.config.DISABLE_JIT))

# Scalar division by zero gives inf or nan, as NumPy does (and as the array code does), instead
# of Python's ZeroDivisionError: the derivative of np.arcsin at 1 is inf, not an exception.
ERROR_MODEL = "numpy"

# Numba compiles, beside a function and its wrapper for Python callers, a C wrapper for its use
# as a first-class function value (`numba.types.FunctionType`, a ``cfunc``'s address), which
# neither generated code nor the runtime is ever used as. Not made: a tenth of a small
# gradient's compile (rnn's 0.204 -> 0.183 s of CPU, median of 8 pairs of fresh processes).
NO_CFUNC = {"no_cfunc_wrapper": True}

# Every build is compiled with ``nogil=True``: a running gradient lets other Python threads run
# (a Dask worker's event loop keeps serving transfers and heartbeats while a block computes).
# Numba's disk cache does not key its entries by these options, so the cache folder carries a
# format tag: entries compiled by an earlier jitgrad with other options are never loaded.
# jg3: the runtime helpers moved to jitgrad.backend.numba.runtime (generated code imports them).
CACHE_FORMAT = "jg3"


def jit(fn=None, *, needs=None, inline=False, any_layout=False, choose=None):
    """``numba.njit(cache=True)`` for a runtime helper, or the function itself under
    ``JITGRAD_DISABLE_JIT=1``. ``needs``: called before the helper's first compile or cache
    load (`runtime_linalg.link_routines`: the BLAS and LAPACK symbols its code calls by name).

    ``any_layout``: the helper is compiled for arrays of any layout (Numba's ``'A'``), whatever
    the layouts of its arguments: one compile serves a matrix and its transpose (a LAPACK
    wrapper, which copies its operand first, gains nothing from knowing the layout while
    compiling, and each signature cost 0.3-0.8 s on a machine's first gradient).

    ``choose(*argument_types)``: the plain function to compile for those argument types in
    place of ``fn``'s body (None: the body), made a signature of the helper itself (a float64
    matrix's LAPACK routine, NumPy's own for other dtypes). One compiled function per
    signature, where an ``overload`` reached through the helper compiled two (0.2 s more per
    signature, and its code optimised twice).

    Called from compiled code, a Numba function is compiled for its arguments' types as the
    caller has them, constants as literals: ``_rt.zeros((n, 1))`` and ``_rt.larger(0, n)``
    would each get a signature of their own per constant, compiled in a first call and never
    made ready by `runtime.warm`. A helper's calls are typed without literals instead
    (``(int64, int64)``; a tuple of ints as ``UniTuple(int64, k)``), which Numba reaches from
    the literal by a safe conversion.

    The disk cache is switched on at the helper's first compile (or cache load), not when
    the module is imported: Numba's ``cache=True`` checks that the cache folder is writable
    by creating a temporary file there, once per function, and the runtime has over a
    hundred helpers of which a gradient calls a few (0.08 s of every process's first
    gradient here, its code loaded from the cache or not)."""
    if fn is None:
        return lambda f: jit(f, needs=needs, inline=inline, any_layout=any_layout, choose=choose)
    if DISABLE_JIT:
        return fn
    if inline:
        return numba.njit(error_model=ERROR_MODEL, inline="always", **NO_CFUNC)(fn)
    dispatcher = numba.njit(error_model=ERROR_MODEL, **NO_CFUNC)(fn)
    typed = dispatcher.get_call_template
    compile_now = dispatcher.compile
    caching = []
    chosen = {}  # a function `choose` named -> its own dispatcher (cached like this one)

    def get_call_template(args, kws):
        return typed([_unliteral(a) for a in args], {k: _unliteral(v) for k, v in kws.items()})

    def compile_cached(sig):
        if not caching:
            if needs is not None:
                needs()
            dispatcher.enable_caching()
            caching.append(True)
        args, _ = numba.core.sigutils.normalize_signature(sig)
        if any_layout:
            args = tuple(_any_layout(a) for a in args)
        made = dispatcher.overloads.get(args)
        if made is not None:
            return made.entry_point
        body = choose(*args) if choose is not None else None
        if body is None:
            return compile_now(args)
        if body not in chosen:
            chosen[body] = numba.njit(error_model=ERROR_MODEL, **NO_CFUNC)(body)
            _enable_stable_caching(chosen[body])
        chosen[body].compile(args)
        made = chosen[body].overloads[args]
        dispatcher.add_overload(made)  # callers type and link it as this helper's
        return made.entry_point

    dispatcher.get_call_template = get_call_template
    dispatcher.compile = compile_cached
    return dispatcher


def _enable_stable_caching(dispatcher) -> None:
    """Numba's disk cache for ``dispatcher``, whose function may be a closure made by a
    factory (`runtime_linalg`'s products, one per layout and precision): Numba keys a
    closure's entries by a pickle of its cells, and the BLAS routines and intrinsics in them
    pickle differently in every process, so such an entry was never found again. Here a cell
    is keyed by what it names (`_stable_cell`); a closure with a cell of another kind keeps
    Numba's own key."""
    py_func = dispatcher.py_func
    described = py_func.__closure__ and _stable_cell(tuple(c.cell_contents
                                                           for c in py_func.__closure__))
    if not described:  # not a closure (Numba's key is stable), or cells of another kind
        dispatcher.enable_caching()
        return

    class StableCache(numba.core.caching.FunctionCache):
        def _index_key(self, sig, codegen):
            code = hashlib.sha256(py_func.__code__.co_code).hexdigest()
            cells_key = hashlib.sha256(repr(described).encode()).hexdigest()
            return (sig, codegen.magic_tuple(), (code, cells_key))

    dispatcher._cache = StableCache(py_func)


def _stable_cell(value):
    """A description of a closure cell's value that is the same in every process: numbers,
    strings and None as themselves, tuples item by item, an external function (a BLAS
    routine) by its symbol and signature, a Numba or LLVM type by its name, a function or an
    intrinsic by its module, qualified name and cells; None for anything else."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return ("value", repr(value))  # (a NumPy scalar's repr names its type)
    if isinstance(value, tuple):
        items = tuple(_stable_cell(v) for v in value)
        return None if any(i is None for i in items) else ("tuple", items)
    if isinstance(value, numba.core.types.ExternalFunction):
        return ("external", value.symbol, str(value.sig))
    if isinstance(value, (numba.core.types.Type, llvm_ir.Type)):
        return ("type", type(value).__name__, str(value))
    if isinstance(value, numba.core.extending._Intrinsic):
        value = value._defn
    if isinstance(value, types.FunctionType):  # and what its own closure holds
        cells = _stable_cell(tuple(c.cell_contents for c in value.__closure__ or ()))
        return None if cells is None else ("function", value.__module__, value.__qualname__,
                                             cells)
    return None


def _any_layout(t):
    """An array type as the same array of any layout (``'A'``); other types as they are."""
    return t.copy(layout="A") if isinstance(t, numba.core.types.Array) else t


class _Intrinsic(numba.core.extending._Intrinsic):
    """A Numba intrinsic that Python can call too, as the plain function it stands for."""

    def __init__(self, name, defn, plain=None, **kwargs):
        super().__init__(name, defn, **kwargs)
        self._plain = plain

    def __call__(self, *args, **kwargs):
        return self._plain(*args, **kwargs)


def intrinsic(plain):
    """``@intrinsic(plain)`` over a Numba intrinsic's typing function (``(typingctx, *args) ->
    (signature, codegen)``): a runtime helper whose instructions Numba writes into the calling
    function, with nothing of its own to compile, cache or load (a helper compiled on a
    machine's first gradient cost 0.05-0.4 s). ``plain`` is the same function in Python: what
    a call from Python runs (a generated module replayed as Python to find a failing line,
    `explain`), and the helper itself under ``JITGRAD_DISABLE_JIT=1``."""

    def make(defn):
        if DISABLE_JIT:
            return plain
        made = _Intrinsic(defn.__name__, defn, plain)
        made._register()
        return made

    return make


def _unliteral(t):
    """``t`` without literal types, a tuple's items too (a tuple of one item type becomes a
    ``UniTuple``)."""
    if isinstance(t, numba.core.types.BaseTuple) and not isinstance(t, numba.core.types.NamedTuple):
        items = [_unliteral(x) for x in t]
        if items and all(x == items[0] for x in items):
            return numba.core.types.UniTuple(items[0], len(items))
        return numba.core.types.Tuple(items) if items else t
    return numba.core.types.unliteral(t)


def njit_plain(fn, parallel: bool = False):
    """``numba.njit(nogil=True)`` of a function jitgrad did not generate (a user's plain
    function, `batch`'s loop); with ``parallel``, its prange loops only (`NUMBA_OPTIONS`).
    Not cached: the function need not live in a file."""
    options = {"nogil": True, "error_model": ERROR_MODEL}
    if parallel:
        options["parallel"] = dict(NUMBA_OPTIONS)  # Numba empties the dict it gets
    return numba.njit(**options)(fn)


PRANGE = numba.prange


def _chunksize_setter():
    """``set_chunksize(size)``: Numba's ``set_parallel_chunksize`` for compiled code, returning
    the size it replaces (0: Numba's default, one equal slice of a ``prange`` loop per thread,
    fixed when the loop starts).

    A parallel gradient's chunk loop runs with size 1: each of its chunks goes to the next free
    thread. With one slice per thread, a thread that starts late (waking from its passive wait)
    or runs slower (another process on its core) holds up the loop's end: the bench GMM with
    ``prange`` at n = 10^3 took 0.70 of the serial time at 2 threads with slices, 0.58 with
    chunks handed out one by one; the chunks' partial results are still combined in chunk
    order, so the sums do not change.

    The setting belongs to the calling thread, and is read when it starts a ``prange`` loop.
    ``numba.set_parallel_chunksize`` itself, called from a compiled function, goes through a
    ctypes pointer, which Numba's disk cache refuses; this calls the C function by its name,
    which Numba's threading layer registers when it starts (a parallel function's compile, and
    its load from the cache, start it first). Under ``JITGRAD_DISABLE_JIT=1`` nothing runs in
    parallel, and it does nothing."""
    if DISABLE_JIT:
        return lambda size: 0
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def set_chunksize(typingctx, size):
        if not isinstance(size, numba.core.types.Integer):
            return None
        uintp = numba.core.types.uintp

        def codegen(context, builder, signature, args):
            # declared as Numba's parallel loops declare them (a module holds one declaration)
            word = context.get_value_type(uintp)
            get = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(word, []), "get_parallel_chunksize")
            set_ = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [word]), "set_parallel_chunksize")
            before = builder.call(get, [])
            builder.call(set_, [context.cast(builder, args[0], signature.args[0], uintp)])
            return before

        return uintp(size), codegen

    return set_chunksize


set_chunksize = _chunksize_setter()


def _thread_count_setters():
    """``limit_threads(n)`` and ``set_threads(n)``: the calling thread's count of threads for
    the ``prange`` loops it starts (Numba's ``set_num_threads``), for compiled code.

    ``limit_threads(n)`` lowers it to at most ``n`` (at least 1) and returns what it was;
    ``set_threads`` puts that back after the loop. A chunk loop of one chunk then runs on the
    calling thread without waking another (2 us instead of 35-45 us with OpenMP waiting
    passively, measured here), and a loop of fewer chunks than threads wakes only as many as
    it has chunks. Like `set_chunksize`, these call Numba's C functions by name (its own
    ``set_num_threads`` in compiled code goes through ctypes, which the disk cache refuses).
    The count belongs to the calling thread. Under ``JITGRAD_DISABLE_JIT=1``: nothing."""
    if DISABLE_JIT:
        return (lambda n: 1), (lambda n: None)
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    def declared(builder):
        # get_num_threads as Numba's own compiled code declares it (a module holds one)
        word = ir.IntType(numba.core.types.intp.bitwidth)
        get = cgutils.get_or_insert_function(builder.module, ir.FunctionType(word, []),
                                             "get_num_threads")
        set_ = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ir.IntType(32)]), "set_num_threads")
        return word, get, set_

    @intrinsic
    def limit_threads(typingctx, n):
        if not isinstance(n, numba.core.types.Integer):
            return None

        def codegen(context, builder, signature, args):
            word, get, set_ = declared(builder)
            before = builder.call(get, [])
            at_most = context.cast(builder, args[0], signature.args[0], numba.core.types.intp)
            one = ir.Constant(word, 1)
            at_most = builder.select(builder.icmp_signed("<", at_most, one), one, at_most)
            fewer = builder.select(builder.icmp_signed("<", at_most, before), at_most, before)
            builder.call(set_, [builder.trunc(fewer, ir.IntType(32))])
            return before

        return numba.core.types.intp(n), codegen

    @intrinsic
    def set_threads(typingctx, n):
        if not isinstance(n, numba.core.types.Integer):
            return None

        def codegen(context, builder, signature, args):
            set_ = declared(builder)[2]
            count = context.cast(builder, args[0], signature.args[0], numba.core.types.intp)
            builder.call(set_, [builder.trunc(count, ir.IntType(32))])
            return context.get_dummy_value()

        return numba.core.types.none(n), codegen

    return limit_threads, set_threads


limit_threads, set_threads = _thread_count_setters()


def vectorize(fn):
    """A scalar function applied to scalars and to arrays entry by entry: a Numba ufunc
    (compiled on first use, cached), or ``np.vectorize`` under ``JITGRAD_DISABLE_JIT=1``."""
    if DISABLE_JIT:
        import numpy as np

        v = np.vectorize(fn, otypes=[float])
        return lambda *xs: v(*xs) if any(np.ndim(x) for x in xs) else fn(*xs)
    return numba.vectorize(cache=True)(fn)


@functools.cache
def runtime_digest() -> str:
    """A short hash of the runtime's source (``runtime*.py`` here, and `jitgrad.prims`, whose
    functions the runtime compiles). Numba keeps a generated module's machine code with the
    runtime helpers' code linked into it, and keys it by the module's own file only: a new
    runtime (an upgrade, an edit) gets a cache folder of its own, so no module runs a helper's
    old code."""
    here = os.path.dirname(os.path.abspath(__file__))
    prims = os.path.join(os.path.dirname(os.path.dirname(here)), "prims")
    paths = sorted(os.path.join(here, f) for f in os.listdir(here)
                   if f.startswith("runtime") and f.endswith(".py"))
    paths += sorted(os.path.join(prims, f) for f in os.listdir(prims) if f.endswith(".py"))
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()[:8]


_SCIPY_SPECIAL = "scipy.special.cython_special"
_LINKED: set = set()


def scipy_c_function(name: str, signature):
    """A C function of SciPy's Cython API (``scipy.linalg.cython_blas``, ``cython_lapack``,
    ``scipy.special.cython_special``) for compiled code, of Numba ``signature``.

    Compiled code calls it by a name of its own, ``jitgrad_<name>``, which `link_scipy` binds
    to the function's address in this process before any code calling it is compiled or
    loaded: code that calls a function by name can be kept in Numba's disk cache, where a
    ctypes pointer (an address of this process) cannot."""
    return numba.core.types.ExternalFunction(f"jitgrad_{name}", signature)


def link_libc_function(name: str, signature):
    """A function of the C library (``madvise``) for compiled code, bound at once in this
    process under a name of ours, ``jitgrad_<name>``, as `scipy_c_function`s are: code calling
    it stays in Numba's disk cache."""
    if name not in _LINKED:
        import ctypes

        from llvmlite import binding

        binding.add_symbol(f"jitgrad_{name}",
                           ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value)
        _LINKED.add(name)
    return numba.core.types.ExternalFunction(f"jitgrad_{name}", signature)


def link_scipy(module: str, names) -> None:
    """Bind each `scipy_c_function` of ``names``, from SciPy's Cython ``module``, to its address
    in this process (once; the module is imported at the first)."""
    if DISABLE_JIT:
        return
    from llvmlite import binding
    from numba.core.extending import get_cython_function_address

    for name in names:
        if name not in _LINKED:
            binding.add_symbol(f"jitgrad_{name}", get_cython_function_address(module, name))
            _LINKED.add(name)


def scipy_kernel(name: str, n_args: int):
    """The C function ``name`` of scipy.special.cython_special (its key in ``__pyx_capi__``:
    ``__pyx_fuse_1jv`` is the real jv), of ``n_args`` doubles and Cython's skip-dispatch flag
    (pass 0), returning a double: SciPy's own kernel for compiled code (`scipy_c_function`;
    `link_scipy_kernels` binds it). Under ``JITGRAD_DISABLE_JIT=1``: a ctypes function of
    the same C function, found at its first call."""
    if DISABLE_JIT:
        found = []

        def call(*args):
            if not found:
                import ctypes

                from numba.core.extending import get_cython_function_address
                proto = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * n_args,
                                         ctypes.c_int)
                found.append(proto(get_cython_function_address(_SCIPY_SPECIAL, name)))
            return found[0](*args)
        return call
    f64 = numba.core.types.float64
    return scipy_c_function(name, f64(*[f64] * n_args, numba.core.types.int32))


def link_scipy_kernels(names) -> None:
    """`link_scipy` of SciPy's special functions ``names`` (`scipy_kernel`)."""
    link_scipy(_SCIPY_SPECIAL, names)


def cache_dir(parallel: bool = False) -> str:
    """Where generated modules live: one folder per Python/Numba variant, jitgrad cache format
    and runtime (`runtime_digest`), and a folder of its own for ``parallel=True`` builds
    (Numba's disk cache ignores the parallel option: numba #6845)."""
    base = os.environ.get("JITGRAD_CACHE_DIR")
    if not base:
        root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(root, "jitgrad")
    variant = (f"py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}"
               f"-{CACHE_FORMAT}-{runtime_digest()}")
    if DISABLE_JIT:
        variant += "-nojit"
    if parallel:
        variant += "-parallel"
    path = os.path.join(base, variant)
    os.makedirs(path, exist_ok=True)
    return path


def _write_once(path: str, text: str) -> None:
    data = text.encode()
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return  # already there: keep its time stamp
        damaged = True
    except FileNotFoundError:
        damaged = False
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if damaged:
            os.replace(tmp, path)
            tmp = None
        else:
            try:
                os.link(tmp, path)  # fails if another process created it first: keep theirs
            except FileExistsError:
                pass
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def module_path(stem: str, source: str, parallel: bool = False) -> str:
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    stem = re.sub(r"\W", "_", stem)
    return os.path.join(cache_dir(parallel), f"{stem}_{digest}.py")


def load(stem: str, source: str, names: list[str], inline: list[str] = (),
         parallel: bool = False) -> tuple[str, dict]:
    """Write ``source`` to its file, import it, jit ``names``; return (path, {name: function}).

    Functions in ``inline`` are inlined into their callers at Numba's IR level: the entry that
    calls both kernels is then compiled as one function, once (a jitted callee would be
    optimised again inside its caller, which doubles compile time). Every function is compiled
    with ``nogil=True``; ``parallel``: also ``parallel=`` (`NUMBA_OPTIONS`, prange loops
    only)."""
    path = module_path(stem, source, parallel)
    _write_once(path, source)
    mod_name = "jitgrad_generated." + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # Numba's disk cache re-imports the module by name
    spec.loader.exec_module(module)
    for name in set(re.findall(r"\b_const_[0-9a-f]{16}\b", source)):
        setattr(module, name, CONSTANT_ARRAYS[name])  # a frozen global array (prims/alloc.py)
    functions = {}
    for name in [p for n in names for p in (*parts_of(source, n), n)]:
        py_fn = getattr(module, name)
        options = {"nogil": True, **NO_CFUNC}
        if parallel and "_prange(" in _function_source(source, name):
            options["parallel"] = dict(NUMBA_OPTIONS)  # Numba empties the dict it gets
            choose_threading_layer()
        fn = py_fn if DISABLE_JIT else numba.njit(
            cache=True, error_model=ERROR_MODEL,
            # (Numba's parallel array analysis fails on the inlined kernels: call them)
            inline="always" if name in inline and not parallel else "never", **options)(py_fn)
        setattr(module, name, fn)  # the entry calls the jitted kernels through the module
        functions[name] = fn
    return path, functions


def parts_of(source: str, name: str) -> list[str]:
    """The parts that the long function ``name`` of a generated module was cut into
    (`split.split_function`), in order: each is compiled before it (the function calls them)."""
    return re.findall(rf"^def ({re.escape(name)}_part[0-9]+)\(", source, re.MULTILINE)


def _libgomp_loaded() -> bool:
    """Whether GNU OpenMP is in the process already (it reads OMP_WAIT_POLICY once, when it
    loads): from /proc/self/maps on Linux; elsewhere, assume not."""
    try:
        with open("/proc/self/maps") as f:
            return "libgomp" in f.read()
    except OSError:
        return False


def choose_threading_layer() -> None:
    """Numba's threading layer for parallel builds, set before the first parallel launch
    unless the user chose one (``NUMBA_THREADING_LAYER``, ``numba.config.THREADING_LAYER``).

    Numba's default here is GNU OpenMP, whose threads spin between parallel loops: on 2 shared
    cores that made a parallel gradient 2.2x slower than the serial one. jitgrad keeps Numba's
    order (TBB, OpenMP, workqueue) with ``OMP_WAIT_POLICY=passive`` (set only if unset) when
    libgomp has not loaded yet; when it has (another library loaded it, spinning), OpenMP goes
    after Numba's ``workqueue`` layer, which does not spin (it must not be entered from two
    Python threads at once)."""
    if os.environ.get("NUMBA_THREADING_LAYER") or numba.config.THREADING_LAYER != "default":
        return  # the user's choice
    try:
        numba.threading_layer()
        return  # launched already: too late to choose
    except ValueError:
        pass
    if not _libgomp_loaded():
        os.environ.setdefault("OMP_WAIT_POLICY", "passive")
        if os.environ["OMP_WAIT_POLICY"].lower() == "passive":
            return  # Numba's order, OpenMP waiting passively
    numba.config.THREADING_LAYER_PRIORITY = ["tbb", "workqueue", "omp"]


def _function_source(source: str, name: str) -> str:
    """The text of ``def name`` in a generated module (its functions are two lines apart)."""
    return next((b for b in source.split("\n\n\n") if b.startswith(f"def {name}(")), "")


def is_compile_error(exc: BaseException) -> bool:
    return isinstance(exc, (numba.core.errors.TypingError, numba.core.errors.LoweringError,
                            numba.core.errors.UnsupportedError))


SCIPY_MISSING = ("jitgrad needs SciPy for matrix products and np.linalg (numba uses its BLAS "
                 "and LAPACK): pip install scipy")


def require_scipy(source: str, uses_scipy) -> bool:
    """Whether ``source`` calls a runtime helper named in ``uses_scipy`` (`runtime.USES_SCIPY`:
    BLAS or LAPACK); raise `MissingDependencyError` (one line, with the fix) when it does and
    SciPy's BLAS or LAPACK cannot be imported. Such a helper loaded from a warm cache never
    asks for SciPy while compiling, and the process would abort at the call."""
    if not re.search(r"\b_rt\.(" + "|".join(uses_scipy) + r")\(", source):
        return False
    try:
        import scipy.linalg.cython_blas
        import scipy.linalg.cython_lapack  # noqa: F401
    except ImportError:
        raise MissingDependencyError(SCIPY_MISSING) from None
    return True


def missing_dependency(exc: BaseException) -> str | None:
    """The one-line message, with its fix, when ``exc`` (or an exception it was raised from)
    says a package Numba needs is not installed; else None. Numba compiles ``@``/``np.dot`` to
    BLAS calls it finds through ``scipy.linalg.cython_blas``, and raises "scipy 0.16+ is required
    for linear algebra" (possibly wrapped in its own error) when SciPy is missing."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if (isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] == "scipy"
                or "required for linear algebra" in str(exc)):
            return SCIPY_MISSING
        exc = exc.__cause__ or exc.__context__
    return None


def is_cache_damage(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while Numba loaded a compiled function from its disk cache."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.replace(os.sep, "/").endswith("numba/core/caching.py"):
            return True
        tb = tb.tb_next
    return False


def drop_disk_cache(fn) -> None:
    """Forget a Numba disk cache that could not be loaded, so the next call recompiles."""
    cache = getattr(fn, "_cache", None)
    if cache is not None:
        with contextlib.suppress(Exception):  # a damaged cache is what we are recovering from
            cache.flush()
