"""The public entry points: `grad`, `value_and_grad`, `check_grad`.

Arguments may be trees (`core.pytree`: dicts, lists, tuples of numbers and arrays): the
generated code takes their leaves, the gradient of a tree has its structure. ``has_aux=True``:
the function returns ``(value, aux)``, and the call returns JAX's ``(g, aux)`` or ``((value,
aux), g)``. The result of `grad` of a jitgrad transform (``grad(grad(f))``) is a
`compose.NestedGrad`; a `GradFunction` traces itself for other transforms (`jitgrad_trace`).

`grad(f, wrt=...)` reads and fences ``f`` at once (unsupported code is refused at decoration),
and at each call specialises to the arguments' signature (kind and rank of every argument, as
Numba specialises), runs the pipeline parse → reverse → optimise → emit → compile once per
signature, and calls the compiled entry. Guarantees: each gradient has its argument's type and
shape (float in, float out; array in, array of the same shape and dtype out); a tuple ``wrt``
gives a tuple; an integer or bool argument in ``wrt`` is refused with a clear error; a complex
argument's gradient is complex, ``dL/d(re) - 1j * dL/d(im)`` (JAX's convention, `core.pytree`).

`GradFunction` is a façade: how it is called and what it returns is `jitgrad.calling`, the
compiled code per signature and the calls into it `jitgrad.specialisations`, what a failed call
tells the user `jitgrad.explain`.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import numpy as np

from jitgrad import compose, pipeline
from jitgrad.calling import CallingConvention
from jitgrad.core import pytree
from jitgrad.core.errors import (
    JitgradError,
    Loc,
    NotReversible,
    ShapeError,
    SignatureError,
    UnsupportedError,
    api_boundary,
    hide_internal_frames,
)
from jitgrad.core.settings import Settings
from jitgrad.core.types import Type
from jitgrad.frontend import autograd_names, draws
from jitgrad.frontend.parse import FunctionSource
from jitgrad.specialisations import Compiled, Generated, Specialisations


class GradFunction:
    """A function's gradient (or value and gradient), compiled per call signature.

    The public face of two parts: its `calling.CallingConvention` (``convention``: binding the
    arguments, the signature they are compiled for, the result in the caller's types) and its
    `specialisations.Specialisations` (``specialisations``: the compiled code per signature,
    the calls into it, recovery after a failed call, the fast path)."""

    jitgrad_transform = "grad"  # what `parse` refuses to read as a plain function
    # autograd's grad, called in a differentiated function (`_as_autograds`): a result array
    # of one entry is differentiated as its entry, as autograd does (jitgrad's and JAX's grad
    # take a scalar)
    one_entry = False

    @api_boundary
    def __init__(self, fn, wrt=0, *, with_value: bool = False, has_aux: bool = False,
                 parallel: bool = False, memory_cap: int | None = None,
                 strategies: dict | None = None):
        if not callable(fn):
            raise TypeError(f"jitgrad.grad needs a function, got {type(fn).__name__}")
        self.fn = fn
        self.with_value = with_value
        self.has_aux = bool(has_aux)  # fn returns (value, aux): JAX's conventions
        self.parallel = bool(parallel)  # prange loops run in parallel (`jitgrad.transforms.parallel`)
        if memory_cap is None and os.environ.get("JITGRAD_MEMORY_CAP"):
            memory_cap = int(os.environ["JITGRAD_MEMORY_CAP"])  # a default for every gradient
        if memory_cap is not None and (isinstance(memory_cap, bool) or not isinstance(
                memory_cap, (int, np.integer)) or memory_cap < 64):
            raise SignatureError(f"memory_cap is a number of bytes (at least 64), got "
                                 f"{memory_cap!r}")
        self.memory_cap = None if memory_cap is None else int(memory_cap)  # `checkpoint`
        # ``strategies``: loop strategies switched off by name (tests compare without them)
        self.settings = Settings(parallel=self.parallel, memory_cap=self.memory_cap,
                                **(strategies or {}))
        if self.parallel:  # the threading layer, before anything launches Numba's threads
            pipeline.backend_of(self.settings).prepare_parallel()
        self.src = FunctionSource.of(fn)
        self.convention = convention = CallingConvention(self.src, wrt, with_value, self.has_aux)
        # The convention's parameters, read here, by `jitgrad.dask` and the command line:
        self.param_names, self.signature = convention.param_names, convention.signature
        self.n_params, self.wrt, self.wrt_tuple = (convention.n_params, convention.wrt,
                                                   convention.wrt_tuple)
        self.specialisations = Specialisations(convention, self.settings)
        # A function that calls a jitgrad transform (``grad(g)(x)`` in its body) is not
        # reversible (`NotReversible`): from its first call on, forward mode takes it.
        self._forward_mode: compose.NestedGrad | None = None
        functools.update_wrapper(self, self.src.fn, updated=())

    # -- calling -------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        specialisations = self.specialisations
        try:
            fast = specialisations.fast  # see `Specialisations.fast`
            if fast is not None and not kwargs:
                try:
                    return fast(*args)
                except TypeError:
                    pass  # Numba has no compiled signature for these: the full path decides
                except Exception as e:  # noqa: BLE001 - sorted out in recover
                    return specialisations.recover(e, specialisations.last, args)
            if kwargs or len(args) != self.n_params:
                args = self.bind_arguments(args, kwargs)
            args = pytree.plain_arguments(args)  # typed lists, bytes...: lists, arrays
            if self._forward_mode is None:
                try:
                    call = specialisations.call_for(args)
                except NotReversible:
                    self._forward_mode = self._by_forward_mode()
                else:
                    return specialisations.run(call, args)
            return self._forward_mode(*pytree.without_omitted(args))
        except JitgradError as err:  # the user's line, not jitgrad's frames
            raise hide_internal_frames(err)  # JITGRAD_TRACEBACK=full shows them

    def _by_forward_mode(self) -> compose.NestedGrad:
        """This gradient by forward mode (`compose.NestedGrad`), as grad of a transform is:
        what takes a function that calls a jitgrad transform (`NotReversible`)."""
        if self.has_aux:
            raise NotReversible(f"{self.src.qualname} calls a jitgrad transform and has "
                                "has_aux=True: forward mode takes no aux yet",
                                self.src.loc(self.src.node))
        return compose.NestedGrad(self.fn, tuple(self.wrt) if self.wrt_tuple else self.wrt[0],
                                  with_value=self.with_value)

    def position(self, w) -> int:
        """`CallingConvention.position`: the position of parameter ``w`` (position or name)."""
        return self.convention.position(w)

    def bind_arguments(self, args, kwargs) -> tuple:
        """`CallingConvention.bind_arguments`: the arguments in parameter order."""
        return self.convention.bind_arguments(args, kwargs)

    def types_of(self, args) -> tuple:
        """`CallingConvention.types_of`: the signature ``args`` are compiled for."""
        return self.convention.types_of(args)

    def post_for(self, args, types, aux_structure=None):
        """`CallingConvention.post_for`: what turns the entry's result into the caller's."""
        return self.convention.post_for(args, types, aux_structure)

    def result_post(self, converters: list):
        """`CallingConvention.result_post`: the entry's result into the caller's dtypes."""
        return self.convention.result_post(converters)

    def generate(self, types: tuple, assume_sizes: bool = True, examples=(),
                 replays_draws: bool = False) -> Generated:
        """`Specialisations.generate`: the generated module for ``types``, not compiled."""
        return self.specialisations.generate(types, assume_sizes, examples, replays_draws)

    def compiled_call(self, args):
        """``(entry, flat, post)`` for a call with ``args``: the compiled entry (a Numba
        dispatcher), the arguments as it takes them (a tree's leaves in its place, 0-d
        arrays as floats, float arrays as float64), and what turns its result into the
        caller's (None: nothing). `jitgrad.vmap` calls the entry in a compiled loop."""
        args = tuple(args) if len(args) == self.n_params else self.bind_arguments(args, {})
        call = self.specialisations.specialise(args, float32=False)  # (Numba types its calls)
        self.convention.refuse_draws(call.compiled.ir,
                                     "jitgrad.vmap (it calls the compiled code in a loop)")
        flat = list(self.specialisations.entry_arguments(call, args))
        return self.specialisations.share(call.compiled), flat, call.post

    def jitgrad_trace(self, types: tuple, args: tuple):
        """This gradient as IR for ``types`` (`jitgrad.compose`): what a transform of it
        (``jacobian(grad(f))``, ``grad(grad(f))``) differentiates by forward mode."""
        if self.has_aux:
            raise UnsupportedError(f"{self!r} has has_aux=True and is transformed again, "
                                   "which jitgrad does not do yet: transform the gradient "
                                   "without aux, and compute aux on its own")
        fn_ir, _ = pipeline.build_graph(self.src, types, () if args is None else (args,),
                                        one_entry=self.one_entry)
        try:
            return compose.gradient_trace(
                fn_ir, self.convention.flat_wrt(types), self.with_value, self.wrt_tuple,
                dataclasses.replace(self.settings, parallel=False),
                lambda flat: pytree.regroup(types, self.wrt, flat))
        except NotReversible:  # it calls a transform: forward mode, as its calls take
            return self._by_forward_mode().jitgrad_trace(types, args)

    # -- looking inside ------------------------------------------------------------------

    def _for(self, args, kwargs, float32: bool | None = None) -> Compiled:
        """The specialisation for example arguments (``float32``: `Specialisations.specialise`'s),
        or the last call's without them."""
        return self.specialisations.compiled_for(
            self.bind_arguments(args, kwargs) if args or kwargs else None, float32)

    @api_boundary
    def njit(self, *args, **kwargs):
        """The compiled entry for these example arguments' signature: a Numba dispatcher that
        ``@numba.njit`` code can call (an SGD loop that never returns to Python). It takes the
        arguments positionally and returns what the entry returns: the gradient (a tuple for a
        tuple ``wrt``; ``(value, gradients)`` for `value_and_grad`), in float64, with 0-d arrays
        passed as scalars. Under ``JITGRAD_DISABLE_JIT=1`` it is the plain Python function."""
        compiled = self._for(args, kwargs, float32=False)
        self.convention.refuse_draws(compiled.ir,
                                     ".njit() (Numba code calls the compiled code itself)")
        return self.specialisations.share(compiled)

    @api_boundary
    def source(self, *args, **kwargs) -> str:
        """The generated module, for the last call or for example arguments. Its gradient is
        one function, the forward pass then the adjoint pass: ``source("forward")`` or
        ``source("adjoint")`` gives that part of it (from its ``# --`` line), ``source("entry")``
        the whole function."""
        part = None
        if args and isinstance(args[0], str) and args[0] in ("forward", "adjoint", "entry"):
            part, args = args[0], args[1:]
        compiled = self._for(args, kwargs)
        return compiled.source if part is None else compiled.source_part(part)

    @api_boundary
    def ir(self, *args, **kwargs) -> str:
        """The forward graph in the compact, typed IR form."""
        return self._for(args, kwargs).ir_text

    @api_boundary
    def graph(self, *args, adjoint: bool = False, path: str | None = None, **kwargs) -> str:
        """The operations graph as Graphviz DOT text (with ``adjoint=True``, the adjoint's
        operations too, in red); with ``path``, also rendered there by the ``dot`` program
        (format from the suffix: .svg, .png)."""
        from jitgrad.core.graphviz import render, to_dot

        c = self._for(args, kwargs)
        text = to_dot(c.ir, c.gradient.adjoint) if adjoint else to_dot(c.graph_ir)
        if path is not None:
            render(text, path)
        return text

    def __repr__(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        wrt = [self.param_names[k] for k in self.wrt]
        return f"<jitgrad.{kind} of {self.src.qualname} wrt {', '.join(wrt)}>"


# ----------------------------------------------------------------------------- public API


@api_boundary
def grad(fn=None, wrt=0, *, has_aux=False, parallel=False, memory_cap=None):
    """The gradient of a scalar function: ``@grad``, ``@grad(wrt=...)`` or ``grad(f, wrt)``.

    ``wrt`` is an argument position, an argument name, or a tuple of them (a tuple gives a tuple
    of gradients). ``parallel=True`` runs ``numba.prange`` loops in parallel, forward and
    adjoint, with the same result at any thread count (`jitgrad.transforms.parallel`). ``memory_cap``
    (bytes; default: none) bounds the tape of a loop whose iterations depend on one another:
    such a loop is checkpointed, and its body runs twice (`jitgrad.transforms.checkpoint`).
    ``has_aux=True``: the function returns ``(value, aux)``; the call returns
    ``(gradient, aux)``, aux any tree of numbers and arrays, as JAX does.
    """
    options = {"parallel": parallel, "memory_cap": memory_cap, "has_aux": has_aux}
    if fn is None:
        return api_boundary(lambda f: _gradient(f, wrt, False, options))
    if isinstance(fn, (int, str, tuple, list)) and not callable(fn):
        wrt_given = fn
        return api_boundary(lambda f: _gradient(f, wrt_given, False, options))
    return _gradient(fn, wrt, False, options)


def _gradient(fn, wrt, with_value: bool, options: dict):
    """A `GradFunction` of a plain function; of a transform (``grad(grad(f))``), its
    `compose.NestedGrad` (forward mode over the transform's own trace). A function autograd's
    ``grad(f)`` made is jitgrad's grad of ``f`` (`autograd_names.as_jitgrads`)."""
    fn = autograd_names.as_jitgrads(fn)
    if compose.is_transform(fn):
        if options.get("has_aux"):
            raise UnsupportedError(f"has_aux=True with {fn!r}: a gradient of a transform "
                                   "takes no aux yet; give the aux to the inner function's "
                                   "own call")
        return compose.NestedGrad(fn, wrt, with_value=with_value)
    return GradFunction(fn, wrt, with_value=with_value, **options)


@api_boundary
def value_and_grad(fn=None, wrt=0, *, has_aux=False, parallel=False, memory_cap=None):
    """Like `grad`, returning ``(value, gradient)`` (with ``has_aux=True``: ``((value, aux),
    gradient)``, as JAX does)."""
    options = {"parallel": parallel, "memory_cap": memory_cap, "has_aux": has_aux}
    if fn is None:
        return api_boundary(lambda f: _gradient(f, wrt, True, options))
    return _gradient(fn, wrt, True, options)


@api_boundary
def show(fn, *args, wrt=0) -> None:
    """Print the graph and the generated code of ``fn``'s gradient for these example arguments."""
    g = fn if isinstance(fn, GradFunction) else GradFunction(fn, wrt)
    print(g.ir(*args))
    print()
    print(g.source(*args))


class GradientCheckError(JitgradError, AssertionError):
    """`check_grad` found a gradient that disagrees with finite differences."""


def numeric_grad(f, args, k, eps=1e-6):
    """Central finite differences of ``f(*args)`` with respect to argument ``k``."""
    args = list(args)
    x = args[k]
    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape)
        flat = x.astype(np.float64).copy()
        for i in np.ndindex(*x.shape):
            orig = flat[i]
            flat[i] = orig + eps
            args[k] = flat.copy()
            up = f(*args)
            flat[i] = orig - eps
            args[k] = flat.copy()
            down = f(*args)
            flat[i] = orig
            g[i] = (up - down) / (2 * eps)
        return g
    args[k] = float(x) + eps
    up = f(*args)
    args[k] = float(x) - eps
    down = f(*args)
    return (up - down) / (2 * eps)


@api_boundary
def check_grad(fn, *args, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Compare jitgrad's gradient with central finite differences; raise on a mismatch.

    ``wrt`` defaults to every float argument. Returns the worst relative error found.
    """
    src_fn = fn.fn if isinstance(fn, GradFunction) else fn
    if wrt is None:
        wrt = tuple(k for k, a in enumerate(args) if _has_float(a))
    wrt = tuple(wrt) if isinstance(wrt, (tuple, list)) else (wrt,)
    g = GradFunction(src_fn, wrt)
    try:
        plan = g._for(args, {}).ir.draws  # compiled first: nothing is drawn yet
    except NotReversible:
        plan = None  # forward mode, which refuses draws
    before = draws.generator_states(src_fn, plan, args)
    grads = g(*args)
    f = src_fn
    if plan is not None:
        after = draws.generator_states(src_fn, plan, args)

        def f(*a):  # np.random inside: every evaluation sees the draws jitgrad's call saw
            draws.restore(before)
            value = src_fn(*a)
            draws.restore(after)  # the generator ends as one call leaves it
            return value
    worst = 0.0
    for k, tree in zip(g.wrt, grads):
        for name, got, want in _compared(f, args, k, tree, g.param_names[k], eps):
            err = np.abs(np.asarray(got) - want)
            scale = atol + rtol * np.abs(want)
            rel = float(np.max(err / (np.abs(want) + atol))) if np.size(err) else 0.0
            worst = max(worst, rel)
            if np.any(err > scale) or not np.all(np.isfinite(got)):
                raise GradientCheckError(
                    f"gradient with respect to {name!r} disagrees with finite differences: "
                    f"max abs error {float(np.max(err)):.3g}\n jitgrad: {got}\n finite diff: "
                    f"{want}")
    return worst


def _has_float(a) -> bool:
    """A float, a float array, or a tree with one among its leaves."""
    if pytree.is_tree(a):
        return any(t.kind == "f" for t in pytree.leaf_types(
            pytree.type_of_tree(a, "argument", complex_parts=True)))
    return isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray)
                                                   and a.dtype.kind == "f")


def _compared(f, args, k, got, name, eps):
    """(how the user writes the leaf, jitgrad's gradient, central differences) for argument
    ``k``, or for each float leaf of it when it is a tree (``params['W']``)."""
    arg = args[k]
    if not pytree.is_tree(arg):
        yield name, got, numeric_grad(f, args, k, eps)
        return
    t = pytree.type_of_tree(arg, name, complex_parts=True)  # (a complex one: its two parts)
    values, gots = pytree.leaves(arg), pytree.leaves_like(got, arg, name)
    for j, (leaf_type, path) in enumerate(zip(pytree.leaf_types(t), pytree.leaf_paths(t, name))):
        if leaf_type.kind != "f":
            continue

        def at_leaf(*a, j=j):  # f with leaf j of argument k as its argument k
            tree = pytree.unflatten(t, values[:j] + [a[k]] + values[j + 1:], strings=True)
            return f(*a[:k], tree, *a[k + 1:])

        yield path, gots[j], numeric_grad(at_leaf, args[:k] + (values[j],) + args[k + 1:], k,
                                          eps)


__all__ = [
    "GradFunction",
    "Loc",
    "ShapeError",
    "Type",
    "check_grad",
    "grad",
    "value_and_grad",
]
