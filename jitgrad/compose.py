"""Transforms of transforms: what lets every entry point take the result of any of them.

Every function jitgrad returns can *trace* itself: for one call signature it gives its
computation as IR (`Traced`: parameters, a body, the atoms it returns, and how they become
the caller's result). A plain Python function traces to its built graph; a `GradFunction` to
its gradient kernel (the reverse transform's forward and adjoint kernels, one after the
other); a `NestedGrad` to one forward-mode pass per argument it differentiates.

The derivative of a traced function is taken by forward mode (`transforms.forward`), which
applies to any kernel, the reverse transform's stacks and reversed loops included:

* `ForwardKernels` compiles, per call signature and set of seeded arguments, the tangent
  transform of a function's trace: one kernel returning its values and their tangents. `jvp`,
  `hvp`, `hessian` and the forward-mode `jacobian` call it.
* `NestedGrad` is `grad` / `value_and_grad` of a function that is itself a transform: one
  tangent pass per entry of the arguments it differentiates (``grad(grad(f))(x)`` is one pass).
  Traced again (``grad(grad(grad(f)))``), it differentiates scalar arguments only; an array
  argument there is refused by name.

* `jacobian_trace` is the trace of ``jacobian(f)`` (of one argument): a function written
  here that calls ``f``'s tangent (`TangentFunction`) once per entry of the argument, in a
  loop, so a differentiated function can call a Jacobian and ``jacobian(jacobian(f))`` is
  forward mode over that loop.

Guarantees: a function that cannot be traced (a `hessian`, a `jacobian` of several arguments
or with ``has_aux``) is refused with a clear `UnsupportedError`, never differentiated as the
function it wraps; every derivative is of the order asked for.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import linecache

import numpy as np

from jitgrad import pipeline
from jitgrad.core import pytree
from jitgrad.core.errors import NotReversible, SignatureError, UnsupportedError, api_boundary
from jitgrad.core.ir import (
    Block,
    Const,
    Eqn,
    Kernel,
    Var,
    format_function,
    graft,
    names_in,
)
from jitgrad.core.types import SeqType, Type
from jitgrad.frontend.parse import FunctionSource, resolve_wrt, signature_of


def is_transform(fn) -> bool:
    """Whether ``fn`` is a function jitgrad returned (a gradient, a Jacobian, ...)."""
    return isinstance(getattr(fn, "jitgrad_transform", None), str)


def param_names(fn) -> list[str]:
    """The parameter names of a plain function or of a transform (its function's own)."""
    names = getattr(fn, "param_names", None)
    if is_transform(fn) and names is not None:
        return list(names)
    return FunctionSource.of(fn).param_names


def source_of(fn) -> FunctionSource:
    """The plain function at the bottom of a stack of transforms."""
    while is_transform(fn):
        fn = getattr(fn, "fn", None) or fn.__wrapped__
    return FunctionSource.of(fn)


def qualname(fn) -> str:
    """How messages name ``fn``: a transform by its repr (``<jitgrad.grad of f wrt x>``)."""
    return repr(fn) if is_transform(fn) else FunctionSource.of(fn).qualname


# ----------------------------------------------------------------------------- traces


@dataclasses.dataclass(eq=False)
class Traced:
    """One call signature's computation as IR. ``returns``: the flat list of returned atoms;
    ``pack(values)`` turns the flat list of their values into the caller's result (a float,
    an array, a tuple); ``fn_ir``: the built graph underneath (its names, its `Namer`)."""

    params: list[Var]
    body: Block
    returns: list
    fn_ir: object
    pack: object


def _examples(args) -> tuple:
    return () if args is None else (args,)


def _single(values):
    return values[0]


def trace(fn, types: tuple, args: tuple | None) -> Traced:
    """``fn``'s computation for ``types`` (``args``: an example call, or None while building
    another graph), fresh IR each time."""
    if is_transform(fn):
        tracer = getattr(fn, "jitgrad_trace", None)
        if tracer is None:
            raise UnsupportedError(
                f"{fn!r} cannot be transformed again: jitgrad differentiates grad, "
                "value_and_grad, jacobian (of one argument) and plain functions. "
                "Differentiate the function instead (jacobian(grad(f)) is the Hessian)")
        return tracer(types, args)
    src = FunctionSource.of(fn)
    fn_ir, _ = pipeline.build_graph(src, types, _examples(args), any_result=True)
    return Traced(list(fn_ir.params), fn_ir.body, [fn_ir.result], fn_ir, _single)


def trace_gradient(fn, positions: list[int], types: tuple, args: tuple) -> Traced:
    """The trace of ``value_and_grad(fn, wrt=positions)``: returns ``[value, *gradients]``."""
    if not is_transform(fn):
        src = FunctionSource.of(fn)
        fn_ir, _ = pipeline.build_graph(src, types, _examples(args))
        try:
            params, body, returns = pipeline.gradient_kernel(fn_ir, list(positions))
            return Traced(params, body, returns, fn_ir, tuple)
        except NotReversible:
            pass  # it calls a transform: forward mode, as for a transform
    return NestedGrad(fn, tuple(positions), with_value=True).jitgrad_trace(types, args)


def gradient_trace(fn_ir, wrt: list[int], with_value: bool, wrt_tuple: bool,
                   settings=pipeline.DEFAULT, regroup=list) -> Traced:
    """A built graph's gradient as a `Traced` (what `GradFunction.jitgrad_trace` gives).
    ``wrt``: the flat positions differentiated; ``regroup``: one gradient per ``wrt``
    argument from the flat ones (a tree argument's as its tree)."""
    params, body, returns = pipeline.gradient_kernel(fn_ir, list(wrt), settings)

    def grads(values):
        per_argument = regroup(list(values))
        return tuple(per_argument) if wrt_tuple else per_argument[0]

    if with_value:
        return Traced(params, body, returns, fn_ir, lambda v: (v[0], grads(v[1:])))
    return Traced(params, body, returns[1:], fn_ir, grads)


# ----------------------------------------------------------------------------- forward mode


@dataclasses.dataclass(eq=False)
class TangentKernel:
    """One compiled forward-mode kernel: ``entry(*args, *tangents of the seeded args)``
    returns the traced values, then their tangents (``n_values`` of each, or what ``kind``
    returns)."""

    source: str
    entry: object
    path: str
    ir_text: str
    result_ndim: int  # of the first traced value
    n_values: int
    pack: object  # the trace's: flat values -> the caller's result
    written_params: tuple = ()  # (position, name) of the arguments the function writes into
    graph: object = None  # the graph as built: its opening checks say which sizes it takes


class ForwardKernels:
    """A function's forward-mode kernels (the function plain or a transform), per call
    signature, seeded arguments and kind:

    * ``"jvp"``: the trace's values, then their tangents;
    * ``"hvp"``: the tangents of the gradient with respect to the seeds (forward over reverse);
    * ``"value_grad_hvp"``: the value, the gradients, then their tangents.
    """

    def __init__(self, fn):
        self.fn = fn
        self.src = source_of(fn)
        self.param_names = param_names(fn)
        self.qualname = qualname(fn)
        self._kernels: dict[tuple, list[TangentKernel]] = {}

    def types(self, args) -> tuple:
        if len(args) != len(self.param_names):
            raise SignatureError(f"{self.qualname} takes {len(self.param_names)} arguments, "
                                 f"got {len(args)}")
        out = []
        for n, a in zip(self.param_names, args):
            if pytree.is_tree(a) and is_transform(self.fn):
                raise SignatureError(f"forward mode of a transform does not take tree "
                                     f"arguments ({n!r}) yet")
            out.append(pytree.type_of_tree(a, f"argument {n!r}"))
        return tuple(out)

    def kernel(self, args, seeds: tuple, kind: str) -> TangentKernel:
        """The kernel for ``args`` (trees of a plain function's arguments: `types` refuses
        them for a transform) with tangents for the leaves at the flat positions ``seeds`` (a
        leaf argument is one leaf)."""
        types = self.types(args)
        leaf_types = [u for t in types for u in pytree.leaf_types(t)]
        paths = [p for n, t in zip(self.param_names, types) for p in pytree.leaf_paths(t, n)]
        for k in seeds:
            if leaf_types[k].kind != "f":
                raise SignatureError(f"cannot differentiate with respect to argument "
                                     f"{paths[k]!r}: it is not a float or a float array")
        built = self._kernels.setdefault((types, seeds, kind), [])
        # (one per pattern of sizes its build assumed, `pipeline.sizes_hold`)
        k = next((k for k in built if pipeline.sizes_hold(k.graph, args)), None)
        if k is None:
            k = self.compile(types, seeds, kind, args)
            built.append(k)
        pipeline.refuse_shared_memory(self.src, k.written_params, pipeline.flatten(args),
                                      lambda j: paths[j])
        return k

    def compile(self, types, seeds, kind, args) -> TangentKernel:
        if kind == "jvp":
            t = trace(self.fn, types, args)
        else:
            t = trace_gradient(self.fn, list(seeds), types, args)
        fn_ir = t.fn_ir
        ir_text = format_function(fn_ir)
        graph = copy.deepcopy(fn_ir)
        paths = [p for n, ty in zip(self.param_names, types) for p in pytree.leaf_paths(ty, n)]
        names = [paths[k] for k in seeds]
        if kind == "jvp":
            what = f"tangents of: {', '.join(names)}"
            doc = (f"The value and its tangent (forward mode), given the tangents _d_* of "
                   f"{', '.join(names)}.")
        else:
            what = f"Hessian-vector product with respect to: {', '.join(names)}"
            doc = (f"{'The value, the gradient, and the' if kind != 'hvp' else 'The'} Hessian "
                   f"times the tangents _d_* of {', '.join(names)} (forward over reverse).")
        new_body, tparams, touts = pipeline.forward(t.params, t.body, t.returns,
                                                    [t.params[k] for k in seeds], fn_ir.namer)
        # What is not returned is not computed (dead code, and Numba drops it).
        outs = {"jvp": list(t.returns) + touts, "hvp": touts[1:],
                "value_grad_hvp": list(t.returns) + touts[1:]}[kind]
        kernel = Kernel(f"{fn_ir.name}_{kind}", list(t.params) + tparams, new_body, outs,
                        fn_ir.loc)
        pipeline.optimise_kernel(kernel)
        signature = ", ".join(f"{n}: {ty}" for n, ty in zip(self.param_names, types))
        source, _ = pipeline.lower_kernel(kernel, fn_ir, signature, what, doc)
        path, fns = pipeline.load(f"{self.src.fn.__name__}_{kind}", source, [kernel.name])
        first = t.returns[0]
        return TangentKernel(source, fns[kernel.name], path, ir_text, first.type.ndim,
                             len(t.returns), t.pack, tuple(fn_ir.written_params), graph)


_FORWARD: dict[object, ForwardKernels] = {}


def forward_kernels(fn) -> ForwardKernels:
    """The (cached) `ForwardKernels` of ``fn``."""
    k = _FORWARD.get(fn)
    if k is None:
        k = _FORWARD[fn] = ForwardKernels(fn)
    return k


def plain(a):
    """A 0-d array as the float the generated code takes; a float16 array or number as
    float64 (Numba has no float16 arithmetic; `calling.casts_for` does the same)."""
    if isinstance(a, np.ndarray) and a.dtype == np.float16:
        a = a.astype(np.float64)
    elif isinstance(a, np.float16):
        return float(a)
    return a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a


def is_float(a) -> bool:
    return isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray)
                                                    and a.dtype.kind == "f")


def jacobians_forward(fn, positions: list[int], args, leafwise: bool = False) -> tuple:
    """``(values, jacobians)``: ``fn``'s traced values at ``args``, and for each of them the
    Jacobians with respect to the arguments at ``positions`` (``jacobians[r][n]`` has shape
    ``values[r].shape + args[positions[n]].shape``): one tangent pass per argument entry.
    ``leafwise``: tree arguments are taken, and ``n`` counts the float leaves of the arguments
    at ``positions`` (`seed_positions` order; `pytree.regroup` rebuilds their trees);
    otherwise a tree argument is refused."""
    fk = forward_kernels(fn)
    trees = [n for n, a in zip(fk.param_names, args) if pytree.is_tree(a) and
             not isinstance(a, (str, type(None)))]
    if trees and not leafwise:
        raise SignatureError(f"forward mode over {fk.qualname} does not take tree arguments "
                             f"yet ({trees[0]!r}): pass its leaves as arguments of their own")
    args = tuple(plain(a) for a in args)
    seeds = seed_positions(fk.types(args), positions)
    k = fk.kernel(args, seeds, "jvp")
    flat = [plain(a) for a in pytree.leaves(args)]
    return _columns(k, flat, [flat[s] for s in seeds])


def _columns(k, flat: list, xs: list) -> tuple:
    """The kernel ``k``'s values and their Jacobians with respect to the seeded leaves ``xs``
    (one tangent pass per entry)."""
    zeros = [np.zeros(np.shape(x)) if np.ndim(x) else 0.0 for x in xs]
    values = None
    jacs = None
    for n, x in enumerate(xs):
        shape = np.shape(x)
        basis = np.zeros(shape)
        for i in np.ndindex(*shape):
            basis[i] = 1.0
            ts = list(zeros)
            ts[n] = basis if shape else 1.0
            out = k.entry(*flat, *ts)
            if values is None:
                values = list(out[:k.n_values])
                jacs = [[np.zeros(np.shape(v) + np.shape(xp)) for xp in xs] for v in values]
            for r in range(k.n_values):
                jacs[r][n][(...,) + i] = out[k.n_values + r]
            basis[i] = 0.0
    return values, jacs, k


def seed_positions(types, positions) -> tuple:
    """The flat positions (among every argument's leaves) of what is differentiated: an
    argument at ``positions``, or each float leaf of a tree argument there (its integer and
    bool leaves are not)."""
    seeds, n = [], 0
    for k, t in enumerate(types):
        if k in positions:
            floats = pytree.float_leaf_positions([t], [0])
            seeds += [n + j for j in floats] if isinstance(t, SeqType) else [n]
        n += pytree.n_leaves(t)
    return tuple(seeds)


def leaf_seeds(args, positions) -> tuple:
    """The flat positions of the arguments at ``positions`` among the generated code's
    parameters, for calls whose only trees are strings and None (no leaves: built in, not
    passed)."""
    starts, n = [], 0
    for a in args:
        starts.append(n)
        n += 0 if isinstance(a, str) or a is None else 1
    return tuple(starts[j] for j in positions)


def leaves_of(args) -> tuple:
    """The arguments as the generated code takes them, for calls whose only trees are
    strings and None: those left out, 0-d arrays as floats."""
    return tuple(plain(a) for a in args if not isinstance(a, str) and a is not None)


def as_result(a):
    return float(a) if isinstance(a, np.ndarray) and a.ndim == 0 else a


class NestedGrad:
    """``grad(T)`` and ``value_and_grad(T)`` of a transform ``T`` (``grad(grad(f))``): by
    forward mode over ``T``'s trace, one tangent pass per entry of each ``wrt`` argument. ``T``
    must return one float."""

    jitgrad_transform = "grad"

    @api_boundary
    def __init__(self, fn, wrt=0, *, with_value: bool = False):
        if not callable(fn):
            raise TypeError(f"jitgrad.grad needs a function, got {type(fn).__name__}")
        self.fn = fn
        self.with_value = with_value
        self.param_names = param_names(fn)
        self.wrt_tuple = isinstance(wrt, (tuple, list))
        self.wrt = resolve_wrt(self.param_names, qualname(fn), wrt)
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "f")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _check(self, args) -> None:
        for k in self.wrt:
            if not is_float(args[k]) and not isinstance(args[k], (dict, tuple, list)):
                raise SignatureError(f"cannot differentiate with respect to argument "
                                     f"{self.param_names[k]!r}: it is not a float or a float "
                                     "array")

    @api_boundary
    def __call__(self, *args, **kwargs):
        args = bind_arguments(signature_of(source_of(self.fn).fn), self.param_names,
                              repr(self), args, kwargs)
        self._check(args)
        values, jacs, k = jacobians_forward(self.fn, self.wrt, args, leafwise=True)
        if k.n_values != 1 or np.ndim(values[0]) != 0:
            raise SignatureError(
                f"grad needs a function that returns one float; {self.fn!r} returns "
                + (f"{k.n_values} values" if k.n_values != 1
                   else f"an array of shape {np.shape(values[0])}")
                + ": use jitgrad.jacobian for the derivative of an array")
        types = forward_kernels(self.fn).types(tuple(plain(a) for a in args))
        leaves = pytree.leaves(tuple(args))
        seeds = seed_positions(types, self.wrt)
        gs = pytree.regroup(types, self.wrt, [like(as_result(j), leaves[s])
                                              for j, s in zip(jacs[0], seeds)])
        g = tuple(gs) if self.wrt_tuple else gs[0]
        return (as_result(values[0]), g) if self.with_value else g

    def jitgrad_trace(self, types: tuple, args: tuple) -> Traced:
        """This gradient as IR: the inner function's trace once per ``wrt`` argument, each
        copy differentiated by forward mode with its seed's tangent 1.0. Scalar ``wrt`` only."""
        if len(self.wrt) == 1 and not self.with_value and types[self.wrt[0]].ndim:
            return gradient_by_tangents_trace(self, self.wrt[0], types, args)
        for k in self.wrt:
            if types[k].ndim:
                raise UnsupportedError(
                    f"{self!r} differentiates the array argument {self.param_names[k]!r} "
                    "among others (or with its value), and is transformed again: three "
                    "derivatives deep, jitgrad takes one array argument (or floats). "
                    "Differentiate with respect to one, or call this gradient outside "
                    "the transform")
        first = None
        stmts = []
        grads = []
        for k in self.wrt:
            t = trace(self.fn, types, args)
            if first is None:
                first = t
                namer = t.fn_ir.namer
                namer.used |= names_in(t.body) | {p.name for p in t.params}
            else:
                t.returns = graft(t.body, t.returns, t.params, first.params, namer)
                t.params = first.params
            out = t.returns[0]
            if len(t.returns) != 1 or out.type != Type("f", 0):
                raise SignatureError(f"grad needs a function that returns one float; "
                                     f"{self.fn!r} returns "
                                     + (f"{len(t.returns)} values" if len(t.returns) != 1
                                        else f"{out.type}"))
            body, tparams, touts = pipeline.forward(t.params, t.body, [out], [t.params[k]],
                                                    namer)
            stmts.append(Eqn("assign", [tparams[0]], [Const(1.0)], {}, None))
            stmts += body.stmts
            grads.append(touts[0])
            if len(grads) == 1:
                value = out

        def pack_grads(vs):
            return tuple(vs) if self.wrt_tuple else vs[0]

        if self.with_value:
            return Traced(first.params, Block(stmts), [value, *grads], first.fn_ir,
                          lambda v: (v[0], pack_grads(v[1:])))
        return Traced(first.params, Block(stmts), grads, first.fn_ir, pack_grads)

    def __repr__(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        wrt = ", ".join(self.param_names[k] for k in self.wrt)
        return f"<jitgrad.{kind} of {self.fn!r} wrt {wrt}>"


class TangentFunction:
    """``fn``'s tangent in the direction of its argument ``k``: called as ``T(*args, t)``, it
    gives ``d fn(*args) / d args[k] . t`` (forward mode over ``fn``'s trace), for a function
    of one result. A transform that traces itself (`jitgrad_trace`): what `jacobian`'s trace
    calls once per entry of the argument."""

    jitgrad_transform = "jvp"

    def __init__(self, fn, k: int):
        self.fn, self.k = fn, k
        self.param_names = [*param_names(fn), "_tangent"]
        self.__wrapped__ = fn

    def __call__(self, *args):
        raise UnsupportedError(f"{self!r} is called inside a transformed function only")

    def jitgrad_trace(self, types: tuple, args: tuple) -> Traced:
        *types, tangent_type = types
        t = trace(self.fn, tuple(types), None)
        if len(t.returns) != 1:
            raise UnsupportedError(f"the jacobian of {self.fn!r}, which returns "
                                   f"{len(t.returns)} values, inside a transformed function "
                                   "(one array result)")
        if tangent_type != types[self.k]:
            raise SignatureError(f"{self!r}: a tangent of type {tangent_type} for an "
                                 f"argument of type {types[self.k]}")
        body, tparams, touts = pipeline.forward(t.params, t.body, t.returns,
                                                [t.params[self.k]], t.fn_ir.namer)
        return Traced(list(t.params) + tparams, body, [touts[0]], t.fn_ir, _single)

    def __repr__(self) -> str:
        return f"<jitgrad tangent of {self.fn!r} wrt {self.param_names[self.k]}>"


_JACOBIAN_SOURCE = """\
def jacobian_of_{name}({params}):
    units = np.eye(np.size({x}))
    first = tangent({params}, np.reshape(units[0], np.shape({x})))
    out = np.zeros((np.size({x}),) + np.shape(first))
    out[0] = first
    for i in range(1, np.size({x})):
        out[i] = tangent({params}, np.reshape(units[i], np.shape({x})))
    return np.reshape(np.moveaxis(out, 0, -1), np.shape(first) + np.shape({x}))
"""
_JACOBIAN_OF_FLOAT = """\
def jacobian_of_{name}({params}):
    return tangent({params}, 1.0)
"""
_JACOBIANS: dict = {}


def jacobian_trace(fn, k: int, types: tuple, args) -> Traced:
    """The trace of ``jacobian(fn, wrt=k)``: a function written here (Python source, built
    as the user's code is) that calls ``fn``'s tangent (`TangentFunction`) once per entry of
    argument ``k``, in a loop, and stacks the columns: forward mode over ``fn``'s trace, the
    loop's trip count the argument's size at run time. What lets a differentiated function
    call a Jacobian, and ``jacobian(jacobian(f))`` take one."""
    template = _JACOBIAN_OF_FLOAT if types[k].ndim == 0 else _JACOBIAN_SOURCE
    made = _by_tangents((fn, k, types[k].ndim == 0), template, "jacobian", fn, k, len(types))
    return trace(made, types, args)


def _by_tangents(key, template: str, kind: str, fn, k: int, n_args: int):
    """The function ``template`` writes (``{kind}_of_{name}``, calling ``fn``'s tangent along
    argument ``k``), made once per ``key`` and kept in ``_JACOBIANS``; its text is in
    linecache, so tracebacks and the builder read it."""
    made = _JACOBIANS.get(key)
    if made is None:
        params = ", ".join(f"a{j}" for j in range(n_args))
        name = "".join(c if c.isalnum() else "_" for c in getattr(fn, "__name__", "f"))
        text = template.format(name=name, params=params, x=f"a{k}")
        filename = f"<jitgrad {kind} of {name} wrt {k}: {len(_JACOBIANS)}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np, "tangent": TangentFunction(fn, k)}
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
        made = _JACOBIANS[key] = namespace[f"{kind}_of_{name}"]
    return made


_GRADIENT_BY_TANGENTS = """\
def gradient_of_{name}({params}):
    units = np.eye(np.size({x}))
    out = np.zeros(np.size({x}))
    for i in range(np.size({x})):
        out[i] = np.sum(tangent({params}, np.reshape(units[i], np.shape({x}))))
    return np.reshape(out, np.shape({x}))
"""


def gradient_by_tangents_trace(nested: NestedGrad, k: int, types: tuple, args) -> Traced:
    """The trace of ``nested`` (a gradient of a transform) with respect to its array argument
    ``k``: a function written here that takes ``fn``'s tangent along each unit vector of the
    argument, in a loop (one forward pass per entry, as `jacobian_trace`'s), each entry of the
    gradient that tangent. ``fn`` returns one float; or an array, summed, where it is
    autograd's ``elementwise_grad`` (``one_entry == "sum"``: the gradient of the sum). What
    lets ``egrad(egrad(f))`` of an array be differentiated once more."""
    fn = nested.fn
    t = trace(fn, types, None)
    summed = getattr(nested, "one_entry", False) == "sum"
    if len(t.returns) != 1 or t.returns[0].type.kind != "f" or (
            t.returns[0].type.ndim and not summed):
        raise SignatureError(f"grad needs a function that returns one float; {fn!r} returns "
                             + (f"{len(t.returns)} values" if len(t.returns) != 1
                                else f"{t.returns[0].type}"))
    made = _by_tangents(("gradient", fn, k), _GRADIENT_BY_TANGENTS, "gradient", fn, k,
                        len(types))
    return trace(made, types, args)


def like(g, x):
    """A derivative in its argument's dtype and kind (float32 in, float32 out; a 0-d array
    for a 0-d array)."""
    if isinstance(x, np.ndarray):
        return np.asarray(g, dtype=x.dtype) if x.ndim == 0 or x.dtype != np.float64 else g
    return g


def bind_arguments(signature: inspect.Signature, names: list[str], qualname: str, args,
                   kwargs=None) -> tuple:
    """The call's arguments by position, keywords and defaults filled in as Python binds
    them (typed lists, bytes...: as lists and arrays, `pytree.plain`); a call that does not
    fit is a `SignatureError` naming the function."""
    if not kwargs and len(args) == len(names) and (not names or signature.parameters[
            names[-1]].kind is not inspect.Parameter.VAR_POSITIONAL):
        return pytree.plain_arguments(tuple(args))
    try:
        bound = signature.bind(*args, **(kwargs or {}))
    except TypeError as e:
        raise SignatureError(f"{qualname}(): {e}") from None
    bound.apply_defaults()
    return pytree.plain_arguments(tuple(bound.arguments[n] for n in names))


__all__ = [
    "ForwardKernels",
    "NestedGrad",
    "TangentKernel",
    "Traced",
    "bind_arguments",
    "forward_kernels",
    "is_transform",
    "jacobians_forward",
    "leaf_seeds",
    "leaves_of",
    "param_names",
    "seed_positions",
    "trace",
    "trace_gradient",
]
