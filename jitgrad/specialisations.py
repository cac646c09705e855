"""One gradient's compiled code per call signature, and the one way a call runs it.

Takes a `calling.CallingConvention` (the parameters, which of them are differentiated, the
result's shape) and the `core.settings.Settings` to compile with. Holds the specialisations
(`Compiled`: the IR, the generated source, the compiled entry) by signature (kind and rank of
every argument, a tree's structure), and the `Call` that reaches one by argument key (dtypes
too: what the call converts on the way in and out). Guarantees:

- a signature is built, transformed, emitted and compiled once (`specialise`); a build whose
  size assumptions the arguments of its first call break is compiled without them at once;
- a call (`run`) gives the entry the arguments as it takes them (`entry_arguments`: a tree's
  leaves in its place, conversions, no shared memory with an argument it writes into), with
  np.random's draws made first, and returns the result in the caller's types;
- arguments whose float arrays are all float32 get a float32 build (`calling.float32_build`,
  `Settings.float32`: no conversions, float32 arrays inside, float32 gradients), a
  specialisation of its own; where the backend cannot compile it (a helper or an operation that
  refuses the mix of float32 arrays and the float64 arrays or numbers the build makes), the
  call gets the float64 build, kept for its argument key (`as_float64`);
- a failure inside compiled code (`recover`): a broken size assumption gets the general code
  for its signature, kept from then on; a damaged disk cache a fresh compile; anything else is
  explained at the user's line (`explain`);
- the fast path: after a call that needed nothing but the call (every argument an array,
  nothing converted), `fast` is its compiled entry with the backend's compiling switched off
  (`freeze`), so that it takes the signatures jitgrad chose and raises a TypeError for any
  other. `fast` is set only while its entry is frozen: `thaw`, the one way to switch compiling
  on again, drops it first.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import warnings
from typing import NamedTuple

import numpy as np

from jitgrad import explain, pipeline
from jitgrad.calling import CallingConvention, casts_for, float32_build
from jitgrad.core import ir, pytree
from jitgrad.core.errors import ComplexEigenvalues, JitgradError, RecompileWarning, SizesDiffer
from jitgrad.core.settings import Settings
from jitgrad.core.types import SeqType


@dataclasses.dataclass(eq=False)
class Compiled:
    """One specialisation: the IR, the generated source, and the compiled entry."""

    types: tuple
    ir: ir.Function
    source: str
    path: str
    entry: object  # the compiled entry (both passes in one function): what a call returns
    entry_name: str  # <name>_value_and_grad or <name>_grad
    gradient: object  # the reverse.Gradient (forward and adjoint kernels as IR)
    ir_text: str  # the forward graph as built, printed
    graph_ir: ir.Function  # the forward graph as built (the transform adds saves to `ir`)
    line_locs: list  # the user's Loc behind each generated line (index: line number - 1)
    backend: object = None  # the backend package that compiled it (`pipeline.BACKENDS`)
    shared: bool = False  # handed to Numba code (`Specialisations.share`): it may compile more
    frozen: bool = False  # the backend's compiling switched off (`Specialisations.freeze`)
    assume_sizes: bool = True  # whether it assumes argument axes the same size (`for_sizes`)
    float32: bool = False  # a float32 build (`Settings.float32`): its float arrays are float32
    complex_eig: bool = False  # a real matrix's eig built complex (`for_complex_eigenvalues`)

    def source_part(self, part: str) -> str:
        """A part of the entry's source: "entry" (the whole function), "forward" or
        "adjoint" (that pass, from its ``# --`` line)."""
        blocks = self.source.split("\n\n\n")
        entry = next(b for b in blocks if b.startswith(f"def {self.entry_name}(")) + "\n"
        if part == "entry":
            return entry
        if f"# -- {part} pass" not in entry:  # a long entry cut into parts (`split`)
            entry = self.source
        start = entry.index(f"# -- {part} pass")
        start = entry.rindex("\n", 0, start) + 1
        end = entry.find("    # -- adjoint pass") if part == "forward" else len(entry)
        return entry[start:end]


@dataclasses.dataclass(eq=False)
class Generated:
    """One specialisation's generated module, before compiling: ``pipeline.load(stem, source,
    names)`` compiles it; ``names[-1]`` is the entry (the gradient, one function)."""

    stem: str
    source: str
    names: list  # the module's functions, the entry last
    assume_sizes: bool  # whether ``graph_ir`` begins with size checks (`pipeline.sizes_hold`)
    ir: ir.Function
    gradient: object
    ir_text: str
    graph_ir: ir.Function
    line_locs: list


class Call(NamedTuple):
    """How a call with one argument key reaches its specialisation."""

    compiled: Compiled
    casts: dict  # position among the entry's arguments -> conversion (`calling.casts_for`)
    post: object  # the entry's result -> the caller's (`CallingConvention.post_for`); None: as is
    trees: bool  # an argument is a tree (or None, a str): the entry takes its leaves instead


_ndarray = np.ndarray  # one global lookup per argument in the call path, not two


REBUILDS_BEFORE_WARNING = 3  # distinct gradients of one function's code for one signature
_SOURCES_OF_CODE: dict[tuple, set[int]] = {}  # (code, types) -> hashes of generated sources
_WARNED: set = set()  # the code objects warned about


def warn_of_rebuilds(src, types: tuple, source: str) -> None:
    """Warn (`RecompileWarning`, once per function) when a function's code has been compiled
    for the same signature with `REBUILDS_BEFORE_WARNING` different generated sources: a
    closure made again for each minibatch (``def loss(w): ... X_batch ...``) whose values
    jitgrad reads as constants of the build. Passing them as arguments compiles once."""
    code = getattr(src.fn, "__code__", None)
    if code is None or code in _WARNED:
        return
    # (builds for other size patterns of the arguments, `pipeline.build_graph`, are not
    # rebuilds: counted apart, by their checks)
    checks = tuple(sorted(set(re.findall(r"_rt\.(?:same_size|size_at_least)\([^)]*\)",
                                         source))))
    seen = _SOURCES_OF_CODE.setdefault((code, types, checks), set())
    seen.add(hash(source))
    if len(seen) < REBUILDS_BEFORE_WARNING:
        return
    _WARNED.add(code)
    loc = src.loc(src.node)
    warnings.warn_explicit(
        f"jitgrad has compiled {src.qualname} {len(seen)} times for the same argument types, "
        f"each time for other values of {', '.join(_values_read(src.fn)) or 'what it reads'}: "
        "jitgrad reads what a function closes over (and the globals it reads) as constants of "
        "its gradient, so a function made again for each minibatch compiles a new gradient "
        "each time (seconds each). Pass those values as arguments instead, e.g. "
        "grad(loss)(w, X_batch, y_batch), and the gradient compiles once",
        RecompileWarning, loc.filename, loc.lineno)


def _values_read(fn) -> list[str]:
    """The names of the numbers and arrays ``fn`` closes over or reads as globals."""
    code = fn.__code__
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    names = []
    for name in code.co_freevars + code.co_names:
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:  # an empty cell
                continue
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        else:
            continue
        if isinstance(value, (int, float, np.ndarray, np.number)) and not isinstance(value, bool):
            names.append(name)
    return list(dict.fromkeys(names))


class Specialisations:
    """The compiled code of one gradient, by signature, and the calls into it."""

    def __init__(self, convention: CallingConvention, settings: Settings):
        self.convention = convention
        self.settings = settings
        # (signature (kinds, ranks, trees), float32 build?) -> Compiled
        self.by_types: dict[tuple, Compiled] = {}
        # every specialisation compiled for a signature: they differ in the sizes they assume
        # equal and the sides of tests on sizes they were built for (`for_sizes`)
        self.for_types: dict[tuple, list[Compiled]] = {}  # (same keys)
        self.calls: dict[tuple, Call] = {}  # argument key (dtypes too) -> Call
        self.last: Compiled | None = None  # the last call's (what `GradFunction.source` shows)
        # The last call's compiled entry, frozen, when that call needed nothing but the call:
        # `GradFunction.__call__` calls it first, and a TypeError sends the call down the full
        # path (`run`). Its specialisation is `last`.
        self.fast = None

    # -- specialising --------------------------------------------------------------------

    def call_for(self, args) -> Call:
        """The `Call` for these (bound) arguments, specialised on the first call with their
        key. A call with tree arguments is keyed by the kinds and ranks of their items too.
        Raises `NotReversible` for a function reverse mode does not take."""
        key = tuple([(a.dtype, a.ndim) if type(a) is _ndarray else type(a) for a in args])
        call = self.calls.get(key)
        if call is None:
            if any(pytree.is_tree(a) for a in args):  # items travel one by one
                key = tuple([pytree.key_of(a) for a in args])
                call = self.calls.get(key)
            if call is None:
                call = self.calls[key] = self.specialise(args)
        return call

    def specialise(self, args, float32: bool | None = None) -> Call:
        """Compile (or reuse) the kernels for these arguments' kinds and ranks (a float32
        build when every float array among them is float32, unless ``float32`` says);
        return them with what the call must convert on the way in (0-d arrays, float arrays of
        a float64 build) and out (dtypes)."""
        types = self.convention.types_of(args)
        flat = pipeline.flatten(args)
        if float32 is None:
            float32 = float32_build(flat)
        compiled = self.by_types.get((types, float32))
        if compiled is None:
            compiled = self.by_types[types, float32] = self.compile(types, args=args,
                                                                    float32=float32)
        trees = any(pytree.is_tree(a) for a in args)
        return Call(compiled, casts_for(flat, float32),
                    self.convention.post_for(args, types, compiled.ir.aux_structure, float32),
                    trees)

    def as_float64(self, call: Call, args) -> Call:
        """The float64 build's `Call` for ``args`` (bound), whose float32 build ``call`` the
        backend refused to compile, in its place for their argument key from now on."""
        float64 = self.specialise(args, float32=False)
        for key, other in self.calls.items():
            if other is call:
                self.calls[key] = float64
        return float64

    def compiled_for(self, args=None, float32: bool | None = None) -> Compiled:
        """The specialisation for ``args`` (bound example arguments; ``float32`` as
        `specialise`'s), compiled if need be; without them, the last call's."""
        if args is not None:
            return self.specialise(args, float32).compiled
        if self.last is None:
            raise JitgradError("no signature compiled yet: call the function first, or pass "
                               "example arguments")
        return self.last

    def compile(self, types: tuple, assume_sizes: bool = True, args=None,
                float32: bool = False, complex_eig: bool = False) -> Compiled:
        """Build, transform, emit and compile for ``types`` (``float32``: a float32 build;
        ``complex_eig``: a real matrix's eigenvalues built complex). Given the call's
        ``args``, a build whose size assumptions they break is not compiled: the general one
        is, at once."""
        g = self.generate(types, assume_sizes, examples=() if args is None else (args,),
                          replays_draws=True, float32=float32, complex_eig=complex_eig)
        warn_of_rebuilds(self.convention.src, (types, float32), g.source)
        settings = dataclasses.replace(self.settings, float32=float32)
        path, fns = pipeline.load(g.stem, g.source, g.names, settings)
        compiled = Compiled(types, g.ir, g.source, path, fns[g.names[-1]], g.names[-1],
                            g.gradient, g.ir_text, g.graph_ir, g.line_locs,
                            pipeline.backend_of(self.settings), assume_sizes=g.assume_sizes,
                            float32=float32, complex_eig=complex_eig)
        self.for_types.setdefault((types, float32), []).append(compiled)
        return compiled

    def generate(self, types: tuple, assume_sizes: bool = True, examples=(),
                 replays_draws: bool = False, float32: bool = False,
                 complex_eig: bool = False) -> Generated:
        """The generated module for ``types``, not compiled (`pipeline.load` compiles it, in
        this process or another). A build whose size assumptions any of the argument tuples
        in ``examples`` breaks is replaced by the general one. ``replays_draws``: the caller
        makes np.random's draws before each call (`draws.DrawPlan.replay`); else they are
        refused. ``float32``: its new float arrays float32 (`Settings.float32`)."""
        conv = self.convention
        settings = dataclasses.replace(self.settings, float32=float32)
        fn_ir, assume_sizes = pipeline.build_graph(conv.src, types, examples,
                                                   assume_sizes=assume_sizes,
                                                   has_aux=conv.has_aux,
                                                   replays_draws=replays_draws,
                                                   complex_eig=complex_eig)
        ir_text = ir.format_function(fn_ir)  # before the transform adds its saves
        graph_ir = copy.deepcopy(fn_ir)
        grad = pipeline.reverse(fn_ir, conv.flat_wrt(types), settings,
                               value_needed=conv.with_value)
        signature = ", ".join(f"{n}: {t}" for n, t in zip(conv.param_names, types))
        single = not conv.wrt_tuple and not isinstance(types[conv.wrt[0]], SeqType)
        if float32:  # (its float numbers stay float64)
            signature = signature.replace("f64[", "f32[")
        source, line_locs, names = pipeline.lower_gradient(
            grad, signature, [conv.param_names[k] for k in conv.wrt], settings,
            entry="value_and_grad" if conv.with_value else "grad", single=single)
        return Generated(conv.src.node.name, source, names, assume_sizes, fn_ir, grad, ir_text,
                         graph_ir, line_locs)

    # -- calling -------------------------------------------------------------------------

    def entry_arguments(self, call: Call, args):
        """``args`` (bound) as the entry of ``call`` takes them: a tree's leaves in its place,
        converted (`casts_for`); refused if one shares memory with an argument the function
        writes into. The draws are not among them (`run` makes them)."""
        compiled, casts, _, trees = call
        flat = pipeline.flatten(args) if trees else args
        if compiled.ir.written_params:
            self.convention.refuse_shared_memory(compiled.ir, flat)
        if casts:  # 0-d arrays travel as scalars, other float arrays as float64
            flat = [casts[k](a) if k in casts else a for k, a in enumerate(flat)]
        return flat

    def run(self, call: Call, args):
        """The caller's result of a call with ``args`` (bound; their `Call` from `call_for`):
        the compiled entry's, converted. A call that needed nothing but the entry's call makes
        the next with the same types fast."""
        compiled, casts, post, trees = call
        self.last = compiled
        flat = self.entry_arguments(call, args)
        if compiled.ir.draws is not None:  # np.random's draws, made now (`draws`)
            flat = [*flat, *compiled.ir.draws.replay(flat, args)]
        self.thaw(compiled)
        try:
            out = compiled.entry(*flat)  # exactly what the caller gets, up to dtypes
        except Exception as e:  # noqa: BLE001 - sorted out in recover
            if compiled.float32 and compiled.backend.is_compile_error(e):
                return self.run(self.as_float64(call, args), args)  # it refuses the mix
            out = self.recover(e, compiled, flat)
            compiled = self.last  # the code that answered (general, after a broken assumption)
        if (not (casts or post or trees or compiled.ir.written_params or compiled.shared
                 or compiled.ir.draws is not None)
                and all(type(a) is _ndarray for a in args) and compiled.backend.compiles()):
            self.freeze(compiled)  # the next call with these types goes straight in
        return post(out) if post else out

    def recover(self, e: Exception, compiled: Compiled, flat):
        """The entry's result after a call (``flat``: the entry's arguments) that failed inside
        compiled code. A broken size assumption gets the general code for its signature (kept
        from then on), a damaged disk cache a fresh compile, complex eigenvalues of a real
        matrix whose eig was built real the build with complex ones (kept from then on);
        anything else is explained at the user's line."""
        if isinstance(e, SizesDiffer):
            compiled = self.for_sizes(compiled, flat)
        elif isinstance(e, ComplexEigenvalues) and not compiled.complex_eig:
            compiled = self.for_complex_eigenvalues(compiled, flat)
        elif compiled.backend.is_cache_damage(e):
            compiled.backend.drop_disk_cache(compiled.entry)
        else:
            explain.raise_explained(e, compiled, flat)
        self.last = compiled
        self.thaw(compiled)
        try:
            return compiled.entry(*flat)
        except Exception as again:  # noqa: BLE001 - explained like the first failure
            explain.raise_explained(again, compiled, flat)

    def for_sizes(self, compiled: Compiled, flat) -> Compiled:
        """The signature's code for the sizes of a call (``flat``: the entry's arguments)
        that ``compiled``'s opening checks refuse: one compiled before whose checks they
        pass, else a new build for them. A broken size assumption gets the general code
        (NumPy broadcasting at run time), kept for the signature from then on; a test on
        sizes that takes the other side (`SizeAssumptions.decide`), code built for that side."""
        broken = pipeline.broken_checks(compiled.graph_ir, flat)
        key = (compiled.types, compiled.float32)
        others = [c for c in self.for_types.get(key, ()) if c is not compiled]
        if broken:
            found = next((c for c in others if pipeline.sizes_hold(c.graph_ir, flat)), None)
        else:  # the opening checks hold: one inside the code broke (a write's `same_size`)
            found = next((c for c in others if not c.assume_sizes), None)
        if found is None:
            assume = compiled.assume_sizes and bool(broken) and "assumed" not in broken
            found = self.compile(compiled.types, assume_sizes=assume, args=flat,
                                 float32=compiled.float32, complex_eig=compiled.complex_eig)
        return self.replace(compiled, found)

    def for_complex_eigenvalues(self, compiled: Compiled, flat) -> Compiled:
        """The signature's code with a real matrix's eig built complex (NumPy's eig gives
        complex eigenvalues where they are; the build typed them real and a call found them
        complex): kept for the signature from then on (its values are the same where the
        eigenvalues are real)."""
        found = self.compile(compiled.types, assume_sizes=compiled.assume_sizes, args=flat,
                             float32=compiled.float32, complex_eig=True)
        return self.replace(compiled, found)

    def replace(self, compiled: Compiled, found: Compiled) -> Compiled:
        """``found`` answers the calls ``compiled`` answered, from now on."""
        self.by_types[compiled.types, compiled.float32] = found
        for key, call in self.calls.items():
            if call.compiled is compiled:
                self.calls[key] = call._replace(compiled=found)
        return found

    # -- the backend's compiling switched off and on ---------------------------------------

    def freeze(self, compiled: Compiled) -> None:
        """No more signatures for this entry, which becomes the fast path: a call that skips
        jitgrad's own type check finds a signature jitgrad chose, or a TypeError."""
        compiled.backend.freeze(compiled.entry)
        compiled.frozen = True
        self.fast = compiled.entry

    def thaw(self, compiled: Compiled) -> None:
        """The backend may compile the entry again (for another layout of the same kinds and
        ranks): no fast path until a call sets one again."""
        self.fast = None
        if compiled.frozen:
            compiled.backend.thaw(compiled.entry)
            compiled.frozen = False

    def share(self, compiled: Compiled):
        """The compiled entry, handed to Numba code (`GradFunction.njit`, `jitgrad.vmap`),
        which calls it with types of its own: it compiles for them, from now on."""
        compiled.shared = True
        self.thaw(compiled)
        return compiled.entry
