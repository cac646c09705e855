"""The one path from a function's source to compiled code, which every entry point takes.

    build (frontend) → common subexpressions → transform: reverse mode's passes
      (`GRADIENT_PASSES`) or forward mode → lower (backend: module source)
      → load (backend: compiled functions)

`grad`/`value_and_grad` (api), `jvp`/`hvp`/`hessian` (jvp), `vjp`/`jacobian` (vjp) and
`jitgrad.dask` call the steps below in this order; none of them builds, transforms or emits
on its own. One `core.settings.Settings` value carries the switches from the public API to the
backend; `BACKENDS` is where a backend registers (a backend is a package with the functions
`jitgrad.backend` lists).

Also here: the conventions every entry point shares for arguments and results (a tuple argument
travels as its items, a result returns to its argument's dtype, size assumptions are checked
against example arguments before compiling).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jitgrad.backend import numba as numba_backend
from jitgrad.core import ir, ops, pytree
from jitgrad.core.errors import NotReversible, SignatureError, UnsupportedError, instead
from jitgrad.core.ir import Gradient
from jitgrad.core.settings import DEFAULT, Settings
from jitgrad.frontend.build import build
from jitgrad.frontend.parse import FunctionSource
from jitgrad.prims.primitives import PRIMITIVES
from jitgrad.transforms import (
    batched,
    checkpoint,
    fuse_inner,
    in_place,
    optimise,
    parallel,
    recompute,
    reverse,
    saving,
)
from jitgrad.transforms.forward import tangents
from jitgrad.transforms.implicit import implicit_slopes
from jitgrad.transforms.optimise import (
    common_subexpressions,
    dead_code,
    drop_unread_accumulators,
    fold_assigns,
    scalars_out_of_products,
)
from jitgrad.transforms.passes import GradientWork, run_passes

BACKENDS = {"numba": numba_backend}  # name -> backend package: one line per backend


# Reverse mode, from a function's forward IR to its optimised forward and adjoint kernels: each
# pass declares what it reads, writes and needs (`transforms.passes`); a new pass is one module
# and one line here.
GRADIENT_PASSES = (
    parallel.SERIAL,  # without parallel=True, a prange loop is a range loop
    reverse.REVERSE,  # the adjoint body, statement by statement
    reverse.SHAPE_STAND_INS,  # an adjoint that reads an array for its shape reads an argument
    saving.SAVING,  # every forward value the adjoint reads: rebuilt, recomputed or pushed
    recompute.RECOMPUTE,  # independent loops fused or recomputed instead of taped
    fuse_inner.FUSE_INNER,  # inside those, inner loops whose seed is known fused as well
    checkpoint.CHECKPOINT,  # under a memory cap, taped loops run again in segments
    recompute.ASCENDING,  # loop adjoints whose iterations commute run forwards
    batched.BATCHED,  # a loop's rank-1 updates and mat-vec products: matrix products after it
    reverse.KERNELS,  # the forward and adjoint kernels
    optimise.OPTIMISE,  # dead code, folded assignments, sums in registers, hoisted reads
    in_place.IN_PLACE,  # the adjoint's sums into arrays it owns, added in place
    parallel.PARALLELISE,  # under parallel=True, loops run in chunks on every core
)


def backend_of(settings: Settings):
    """The backend package that ``settings`` names (`BACKENDS`)."""
    return BACKENDS[settings.backend]


# ----------------------------------------------------------------------------- the steps


def build_graph(src: FunctionSource, types, examples=(), any_result: bool = False,
                assume_sizes: bool = True, has_aux: bool = False, replays_draws: bool = False,
                one_entry: bool = False, complex_eig: bool = False):
    """The function's graph for ``types``, with common subexpressions merged, and whether it
    assumes equal sizes (``same_size`` checks; ``assume_sizes=False``: never). The first of
    the argument tuples in ``examples`` guides the assumptions (sizes it has different are
    not assumed equal; `build`); a build whose size assumptions one of them breaks is
    replaced by the general one at once. ``has_aux``: the function returns ``(value, aux)``
    (`ir.Function.aux`). A graph with np.random draws (`Function.draws`) is refused unless
    the caller replays them before each call (``replays_draws``: `api.GradFunction`).
    ``one_entry``: an array result of one entry is differentiated as its entry (`build`).
    ``complex_eig``: a real matrix's eigenvalues are built complex (`build`)."""
    example = flatten(examples[0]) if examples else None  # (its sizes decide tests on sizes)
    fn_ir = build(src, list(types), assume_sizes, any_result=any_result, has_aux=has_aux,
                  one_entry=one_entry, example=example, complex_eig=complex_eig)
    if fn_ir.draws is not None and not replays_draws:
        raise refuse_draws(src, fn_ir.draws.first_loc, "this transform (jvp, hvp, hessian, "
                           "vjp, jacobian, jitgrad.dask, or a transform of a transform)")
    if assume_sizes and not all(sizes_hold(fn_ir, a) for a in examples):
        fn_ir = build(src, list(types), False, any_result=any_result, has_aux=has_aux,
                      one_entry=one_entry, example=example, complex_eig=complex_eig)
        assume_sizes = False
    implicit_slopes(fn_ir)  # roots found by a loop (brentq): their slopes, by forward mode
    common_subexpressions(fn_ir)
    scalars_out_of_products(fn_ir)
    return fn_ir, assume_sizes


def reverse(fn_ir: ir.Function, wrt: list[int], settings: Settings = DEFAULT,
            cotangent: ir.Var | None = None, value_needed: bool = True) -> Gradient:
    """The forward and adjoint kernels of ``fn_ir`` for the parameters at ``wrt``: the passes
    of `GRADIENT_PASSES` that ``settings`` switches on. With a ``cotangent`` (a
    vector-Jacobian product), the adjoint is seeded with it and takes it as its last
    parameter. Without ``value_needed`` (the entry returns the gradients alone) the forward
    kernel computes only what the adjoint reads, and its first return is not defined."""
    if fn_ir.grafted:
        raise NotReversible(
            f"{fn_ir.name} calls {fn_ir.grafted[0]}: reverse mode does not differentiate a "
            "gradient's own code. jitgrad.grad and jitgrad.jacobian take it by forward mode "
            "(one pass per entry of the argument); elsewhere, differentiate the function "
            "that the inner gradient is taken of instead", fn_ir.loc)
    work = GradientWork(fn_ir, list(wrt), settings, cotangent, value_needed=value_needed)
    return run_passes(GRADIENT_PASSES, work).gradient


def gradient_kernel(fn_ir: ir.Function, wrt: list[int], settings: Settings = DEFAULT):
    """The gradient as one kernel's parts: the reverse transform's forward kernel, the saved
    values handed over by name, then its adjoint kernel. Returns ``(params, body, returns)``
    with ``returns = [value, *gradients]``: what forward mode differentiates again (`hvp`,
    `jitgrad.compose`)."""
    grad = reverse(fn_ir, wrt, dataclasses.replace(settings, parallel=False, in_place=False,
                                                   made_again=False))
    fwd, adj = grad.forward, grad.adjoint
    n = len(fwd.params)
    body = ir.Block(list(fwd.body.stmts))
    for ret, param in zip(fwd.returns[1:], adj.params[n:]):
        if ret is not param:
            body.stmts.append(ir.Eqn("assign", [param], [ret], {}, None))
    body.stmts += adj.body.stmts
    return list(fwd.params), body, [fwd.returns[0]] + list(adj.returns)


def forward(params, body, returns, seeded, namer):
    """The tangent transform (`transforms.forward`) of a kernel's body: (the new body, the
    tangent parameters of ``seeded``, the tangents of ``returns``)."""
    return tangents(params, body, returns, seeded, namer)


def optimise_kernel(kernel: ir.Kernel) -> None:
    """Drop from a plain kernel what its returns do not need: dead code, accumulators that
    are only added into, assignments folded into their uses."""
    live = {a for a in kernel.returns if isinstance(a, ir.Var)}
    dead_code(kernel.body, live)
    drop_unread_accumulators(kernel.body, live)
    dead_code(kernel.body, live)
    fold_assigns(kernel.body, live)


def lower_gradient(grad: Gradient, signature: str, wrt_names: list[str], settings: Settings,
                   entry: str = "value_and_grad", single: bool = False):
    """The module of a gradient: (source, the user's Loc per line, the names of its
    functions, the entry last). ``entry``: "grad" or "value_and_grad" (one function, both
    passes), or "vjp" (forward and adjoint kernels, and the entry that takes the cotangent
    and calls them: ``load(..., inline=names[:-1])``)."""
    backend = backend_of(settings)
    source, line_locs = backend.emit_module(grad, signature, wrt_names, entry=entry,
                                            single=single, settings=settings)
    names = [backend.entry_name(grad, entry)]
    if entry == "vjp":
        names = [grad.forward.name, grad.adjoint.name] + names
    return source, line_locs, names


def lower_kernel(kernel, fn_ir: ir.Function, signature: str, what: str, doc: str,
                 settings: Settings = DEFAULT):
    """The module of one plain kernel (forward mode): (source, the user's Loc per line)."""
    return backend_of(settings).emit_kernel(kernel, fn_ir, signature, what, doc)


def load(stem: str, source: str, names: list[str], settings: Settings = DEFAULT, inline=()):
    """Compile the module: (its file's path, {name: compiled function})."""
    return backend_of(settings).load(stem, source, names, inline=list(inline), settings=settings)


def warm(report=None, settings: Settings = DEFAULT) -> int:
    """Compile the backend's runtime ahead of use (``python -m jitgrad warm``, the demo):
    the number of signatures made ready; ``report(name, seconds)`` hears of each. Also
    jitgrad's own modules to bytecode (`compile_bytecode`)."""
    compile_bytecode()
    return backend_of(settings).warm(report)


def compile_bytecode() -> bool:
    """Write jitgrad's modules as bytecode beside their source (``__pycache__``). Python does
    that on import, except under PYTHONDONTWRITEBYTECODE (set on this project's machines and
    in many container images), where every process compiled all of jitgrad's source again:
    0.17 s of a warm process's first gradient here. Python reads existing bytecode under that
    setting too. Where the folder is read-only, nothing is written: False."""
    import compileall
    import os

    package = os.path.dirname(os.path.abspath(__file__))  # (this module is at its top)
    return bool(compileall.compile_dir(package, quiet=2))


def compile_plain(fn, settings: Settings = DEFAULT):
    """A user's plain function compiled by the backend as it is (`jitgrad.vmap` maps it)."""
    return backend_of(settings).compile_plain(fn)


def batch_loop(entry, n_args: int, batched: tuple, paths: tuple, settings: Settings = DEFAULT):
    """A compiled loop calling the compiled ``entry`` once per row of the ``batched``
    arguments, writing each result leaf into its output's row (`jitgrad.vmap`); a prange loop
    under ``settings.parallel``."""
    return backend_of(settings).batch_loop(entry, n_args, batched, paths, settings.parallel)


# ----------------------------------------------------------------------------- conventions


def flatten(args) -> list:
    """The arguments as the generated code takes them: a tree's leaves in its place
    (`core.pytree`)."""
    out = []
    for a in args:
        if pytree.is_tree(a):
            out.extend(pytree.leaves(a))
        else:
            out.append(a)
    return out


def sizes_hold(fn: ir.Function, args) -> bool:
    """Whether ``args`` meet the size assumptions of ``fn`` and take the sides of its tests
    on sizes that it was built for (`broken_checks`)."""
    return not broken_checks(fn, args)


def broken_checks(fn: ir.Function, args) -> set[str]:
    """The checks opening ``fn`` (``checks_sizes``: on reads of the arguments' sizes,
    ``reads_size``, and scalar arithmetic on them) that ``args`` break, evaluated here in
    Python: "assumed" (two axes assumed the same size) and "test" (a test on sizes decided
    while building, `SizeAssumptions.decide`)."""
    args = flatten(args)  # a tree's leaves in its place, as the parameters are
    value = {p: a for p, a in zip(fn.params, args)}
    broken = set()
    for s in fn.body.stmts:
        if not isinstance(s, ir.Eqn) or any(isinstance(a, ir.Var) and a not in value
                                            for a in s.ins):
            break
        flags = ops.flags(s.prim)
        ins = [value[a] if isinstance(a, ir.Var) else a.value for a in s.ins]
        if flags.checks_sizes:
            if not PRIMITIVES[s.prim].impl(*ins):  # (same_size, size_at_least)
                broken.add("test" if s.params.get("test") else "assumed")
        elif len(s.outs) == 1 and not s.outs[0].type.ndim and (flags.reads_size or not (
                flags.effects or flags.raises or flags.allocates) and all(
                isinstance(a, (int, np.integer, np.bool_)) for a in ins)):
            try:  # (integer arithmetic on sizes, or the function's own first lines)
                value[s.outs[0]] = PRIMITIVES[s.prim](*ins, **s.params)
            except Exception:  # noqa: BLE001 - no check past a line that fails on these
                break
        else:
            break
    return broken


def result_converter(arg, float32: bool = False):
    """How a gradient returns to its argument's type, or None when the compiled result
    already is one (a float64 array, a float). A ``float32`` build's gradient of a float32
    array is one, unless a helper made it float64: no copy then."""
    if isinstance(arg, np.ndarray):
        if arg.ndim == 0:
            return lambda g, dt=arg.dtype: np.asarray(g, dtype=dt)
        if float32 and arg.dtype == np.float32:
            return lambda g: g.astype(np.float32, copy=False)
        if arg.dtype != np.float64:
            return lambda g, dt=arg.dtype: g.astype(dt)
        return None
    if isinstance(arg, np.floating) and not isinstance(arg, np.float64):
        return type(arg)
    return None


def refuse_draws(src: FunctionSource, loc, what: str) -> UnsupportedError:
    """The refusal of np.random draws in ``src`` where ``what`` would not replay them (it
    would draw other values, or none, in its passes)."""
    return UnsupportedError(f"np.random draws inside {src.qualname} are constants of a call, "
                            "replayed before it by jitgrad.grad and value_and_grad only; "
                            f"{what} does not replay them (it would not see the same "
                            f"values): {instead('draws elsewhere')}", loc)


def refuse_shared_memory(src: FunctionSource, written_params, args, name_of) -> None:
    """The function writes into an argument (jitgrad copies it on entry): another argument
    that shares its memory (the same array passed twice, a view of it) would not see the write
    as it does in Python, so such a call is refused. ``written_params``: (position, name)
    pairs; ``name_of(j)``: the name of argument ``j``."""
    for k, name in written_params:
        for j, other in enumerate(args):
            if j != k and isinstance(other, np.ndarray) and np.may_share_memory(args[k], other):
                raise SignatureError(
                    f"{src.qualname} writes into its argument {name!r}, and another argument "
                    f"({name_of(j)!r}) shares its memory: jitgrad works on a copy of an argument "
                    "it writes into, so the other would not see the write. Pass a copy "
                    "(x.copy()) of one of them", src.loc(src.node))
