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
gives a tuple; an integer, bool or complex argument in ``wrt`` is refused with a clear error.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import os

import numpy as np

from jitgrad import compose, explain, pipeline
from jitgrad.core import ir, pytree
from jitgrad.core.errors import (
    JitgradError,
    Loc,
    NotReversible,
    ShapeError,
    SignatureError,
    SizesDiffer,
    UnsupportedError,
    api_boundary,
    hide_internal_frames,
)
from jitgrad.core.types import SeqType, Type, type_of_value
from jitgrad.frontend import draws
from jitgrad.frontend.parse import FunctionSource


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
    shared: bool = False  # handed to Numba code by `GradFunction.njit`: it may compile more
    frozen: bool = False  # Numba's compiling switched off: the entry of a fast call (`_freeze`)


def _as_scalar(a):
    return a[()]


def _as_float64(a):
    return a.astype(np.float64)


def _freeze(compiled: Compiled) -> None:
    """No more signatures for this entry: a call that skips jitgrad's own type check
    (`GradFunction._fast`) finds a signature jitgrad chose, or a TypeError from Numba."""
    compiled.backend.freeze(compiled.entry)
    compiled.frozen = True


def _thaw(compiled: Compiled) -> None:
    """Numba may compile the entry again (for another layout of the same kinds and ranks)."""
    compiled.backend.thaw(compiled.entry)
    compiled.frozen = False


@dataclasses.dataclass(eq=False)
class Generated:
    """One specialisation's generated module, before compiling: ``pipeline.load(stem, source,
    names)`` compiles it; ``names[-1]`` is the entry (the gradient, one function)."""

    stem: str
    source: str
    names: list  # the module's functions, the entry last
    assume_sizes: bool  # whether ``graph_ir`` begins with size checks (see `_sizes_hold`)
    ir: ir.Function
    gradient: object
    ir_text: str
    graph_ir: ir.Function
    line_locs: list


_ndarray = np.ndarray  # one global lookup per argument in the call path, not two
_SEQUENCES = pipeline.SEQUENCES


class GradFunction:
    """A function's gradient (or value and gradient), compiled per call signature."""

    jitgrad_transform = "grad"  # what `parse` refuses to read as a plain function

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
        self.options = pipeline.Options(parallel=self.parallel, memory_cap=self.memory_cap,
                                        **(strategies or {}))
        if self.parallel:  # the threading layer, before anything launches Numba's threads
            self.options.implementation.prepare_parallel()
        self.src = FunctionSource.of(fn)
        self.param_names = [a.arg for a in self.src.node.args.args]
        self.signature = inspect.signature(self.src.fn)
        self.wrt_tuple = isinstance(wrt, (tuple, list))
        self.wrt = self.src.wrt_positions(wrt)
        self.n_params = len(self.param_names)
        self._calls: dict[tuple, tuple] = {}  # argument key -> (Compiled, argument casts, result converter)
        self._by_types: dict[tuple, Compiled] = {}  # kinds and ranks -> Compiled
        self._last: Compiled | None = None
        # The last call's compiled entry when that call needed nothing but the call (every
        # argument an array, nothing converted, no shared-memory check): the next call goes
        # straight to it, and Numba's dispatcher, whose compiling is switched off, checks the
        # argument types (a TypeError sends the call down the full path).
        self._fast = None
        # A function that calls a jitgrad transform (``grad(g)(x)`` in its body) is not
        # reversible (`NotReversible`): from its first call on, forward mode takes it.
        self._forward_mode: compose.NestedGrad | None = None
        functools.update_wrapper(self, self.src.fn, updated=())

    def position(self, w) -> int:
        return self.src.wrt_positions(w)[0]

    # -- calling -------------------------------------------------------------------------

    def bind_arguments(self, args, kwargs) -> tuple:
        return compose.bind_arguments(self.signature, self.param_names, self.src.qualname,
                                      args, kwargs)

    def __call__(self, *args, **kwargs):
        try:
            fast = self._fast
            if fast is not None and not kwargs:
                try:
                    return fast(*args)
                except TypeError:
                    pass  # Numba has no compiled signature for these: the full path decides
                except Exception as e:  # noqa: BLE001 - sorted out in _recover
                    return self._recover(e, self._last, args)
            if kwargs or len(args) != self.n_params:
                args = self.bind_arguments(args, kwargs)
            if self._forward_mode is not None:
                return self._forward_mode(*args)
            key = tuple([(a.dtype, a.ndim) if type(a) is _ndarray else type(a) for a in args])
            call = self._calls.get(key)
            if call is None:
                if any(isinstance(a, _SEQUENCES) for a in args):  # items travel one by one
                    return self._call_with_sequences(args)
                try:
                    call = self._calls[key] = self._specialise(args)
                except NotReversible:
                    return self._by_forward_mode(args)
            compiled, casts, post = call
            self._last = compiled
            if compiled.ir.written_params:
                self._refuse_shared_memory(compiled, args)
            if casts:  # 0-d arrays travel as scalars, other float arrays as float64
                args = [casts[k](a) if k in casts else a for k, a in enumerate(args)]
            if compiled.ir.draws is not None:  # np.random's draws, made now (`draws`)
                args = [*args, *compiled.ir.draws.replay(args, args)]
            if compiled.frozen:
                _thaw(compiled)
            try:
                out = compiled.entry(*args)  # exactly what the caller gets, up to dtypes
            except Exception as e:  # noqa: BLE001 - sorted out in _recover
                out = self._recover(e, compiled, args)
            self._fast = None
            if (not (casts or post or compiled.ir.written_params or compiled.shared
                     or compiled.ir.draws is not None)
                    and all(type(a) is _ndarray for a in args) and compiled.backend.compiles()):
                _freeze(compiled)
                self._fast = compiled.entry  # the next call with these types goes straight in
            return post(out) if post else out
        except JitgradError as err:  # the user's line, not jitgrad's frames
            raise hide_internal_frames(err)  # JITGRAD_TRACEBACK=full shows them

    def _call_with_sequences(self, args):
        """A call with tuple or list arguments: keyed by the kinds and ranks of their items
        too, and made with the items in their place (what the generated code takes)."""
        key = tuple([pytree.key_of(a) for a in args])
        call = self._calls.get(key)
        if call is None:
            try:
                call = self._calls[key] = self._specialise(args)
            except NotReversible:
                return self._by_forward_mode(args)
        compiled, casts, post = call
        self._last = compiled
        arguments, args = args, pipeline.flatten(args)
        if compiled.ir.written_params:
            self._refuse_shared_memory(compiled, args)
        if casts:
            args = [casts[k](a) if k in casts else a for k, a in enumerate(args)]
        if compiled.ir.draws is not None:
            args = [*args, *compiled.ir.draws.replay(args, arguments)]
        self._fast = None
        if compiled.frozen:
            _thaw(compiled)
        try:
            out = compiled.entry(*args)
        except Exception as e:  # noqa: BLE001 - sorted out in _recover
            out = self._recover(e, compiled, args)
        return post(out) if post else out

    def _by_forward_mode(self, args):
        """The gradient of a function that calls a jitgrad transform (`NotReversible`): by
        forward mode from now on (`compose.NestedGrad`), as grad of a transform is."""
        if self.has_aux:
            raise NotReversible(f"{self.src.qualname} calls a jitgrad transform and has "
                                "has_aux=True: forward mode takes no aux yet",
                                self.src.loc(self.src.node))
        self._forward_mode = compose.NestedGrad(
            self.fn, tuple(self.wrt) if self.wrt_tuple else self.wrt[0],
            with_value=self.with_value)
        return self._forward_mode(*args)

    def _refuse_draws(self, compiled: Compiled, what: str) -> None:
        if compiled.ir.draws is not None:
            raise pipeline.refuse_draws(self.src, compiled.ir.draws.first_loc, what)

    def _refuse_shared_memory(self, compiled: Compiled, args) -> None:
        pipeline.refuse_shared_memory(self.src, compiled.ir.written_params, args,
                             lambda j: _param_name(compiled.ir, j))

    def _recover(self, e: Exception, compiled: Compiled, args):
        """A call that failed inside compiled code. A broken size assumption gets the general
        code for its signature (kept from then on), a damaged disk cache a fresh compile;
        anything else is explained at the user's line."""
        if isinstance(e, SizesDiffer):
            compiled = self._generalise(compiled)
        elif compiled.backend.is_cache_damage(e):
            compiled.backend.drop_disk_cache(compiled.entry)
        else:
            explain.raise_explained(e, compiled, args)
        self._last = compiled
        self._fast = None
        if compiled.frozen:
            _thaw(compiled)
        try:
            return compiled.entry(*args)
        except Exception as again:  # noqa: BLE001 - explained like the first failure
            explain.raise_explained(again, compiled, args)

    def _generalise(self, compiled: Compiled) -> Compiled:
        """The signature's code without size assumptions: NumPy broadcasting at run time."""
        general = self._by_types[compiled.types] = self._compile(compiled.types,
                                                                 assume_sizes=False)
        for key, (c, casts, post) in self._calls.items():
            if c is compiled:
                self._calls[key] = (general, casts, post)
        return general

    def _specialise(self, args):
        """Compile (or reuse) the kernels for these arguments' kinds and ranks; return them
        with what the call must convert on the way in (0-d arrays) and out (dtypes)."""
        types = self.types_of(args)
        compiled = self._by_types.get(types)
        if compiled is None:
            compiled = self._by_types[types] = self._compile(types, args=args)
        flat = pipeline.flatten(args)
        # 0-d arrays travel as scalars; other float arrays as float64 (the gradient is computed
        # in float64, and Numba's `@` refuses mixed dtypes), their gradients converted back
        casts = {k: _as_scalar for k, a in enumerate(flat)
                   if type(a) is np.ndarray and a.ndim == 0}
        casts.update({k: _as_float64 for k, a in enumerate(flat) if type(a) is np.ndarray
                        and a.ndim and a.dtype.kind == "f" and a.dtype != np.float64})
        return compiled, casts, self.post_for(args, types, compiled.ir.aux_structure)

    def post_for(self, args, types, aux_structure=None):
        """What turns the entry's result for ``args`` (of ``types``) into the caller's: dtypes
        back to the arguments', a tree argument's gradients into its tree, aux into its tree
        (None: nothing to do). `jitgrad.dask` applies it to the blocks' sum."""
        if not any(isinstance(t, SeqType) for t in types):
            post = self.result_post([pipeline.result_converter(args[k]) for k in self.wrt])
        else:
            post = self._post_grouped(args, types)
        if self.has_aux:
            post = self._with_aux(aux_structure, post)
        return post

    def _with_aux(self, structure, post):
        """The result of a ``has_aux`` call, as JAX gives it: ``(gradients, aux)`` from grad,
        ``((value, aux), gradients)`` from value_and_grad; aux rebuilt as the tree the
        function returned."""
        def tree(flat):
            return pytree.unflatten(structure, list(flat))

        if self.with_value:
            def out(result):
                (value, aux), g = result
                value, g = post((value, g)) if post else (value, g)
                return (value, tree(aux)), g
        else:
            def out(result):
                g, aux = result
                return (post(g) if post else g), tree(aux)
        return out

    def _flat_wrt(self, types) -> list[int]:
        """The positions of the ``wrt`` arguments among the generated code's parameters (a
        tree argument stands for one parameter per leaf; its integer and bool leaves are not
        differentiated)."""
        return pytree.float_leaf_positions(types, self.wrt)

    def _post_grouped(self, args, types):
        """The result of a call with tree arguments: the gradient of a tree argument is a tree
        of the same structure (``None`` at its integer and bool leaves); dtypes as
        `pipeline.result_converter` makes them."""
        trees = []  # per wrt argument: None (one gradient) or (its type, which leaves are floats)
        converters = []
        for k in self.wrt:
            if isinstance(types[k], SeqType):
                floats = [u.kind == "f" for u in pytree.leaf_types(types[k])]
                trees.append((types[k], floats))
                converters += [pipeline.result_converter(a) for a, f in
                               zip(pytree.leaves(args[k]), floats) if f]
            else:
                trees.append(None)
                converters.append(pipeline.result_converter(args[k]))
        single = not self.wrt_tuple and trees[0] is None

        def grads(gs):
            if single:
                return converters[0](gs) if converters[0] else gs
            flat = iter([c(g) if c else g for c, g in zip(converters, gs)])
            out = []
            for tree in trees:
                if tree is None:
                    out.append(next(flat))
                else:
                    t, floats = tree
                    out.append(pytree.unflatten(t, [next(flat) if f else None for f in floats]))
            return tuple(out) if self.wrt_tuple else out[0]
        return (lambda out: (out[0], grads(out[1]))) if self.with_value else grads

    def types_of(self, args) -> tuple:
        """The signature (kind and rank of every argument, a tree's structure) these arguments
        are compiled for; refuses integer or bool arguments in ``wrt``."""
        types = []
        for k, (name, a) in enumerate(zip(self.param_names, args)):
            if isinstance(a, _SEQUENCES):
                try:
                    types.append(pytree.type_of_tree(a, f"argument {name!r}"))
                except SignatureError as e:
                    raise SignatureError(e.message, self.src.loc(self.src.node.args.args[k])) \
                        from None
                continue
            types.append(type_of_value(a, f"argument {name!r}"))
        for k in self.wrt:
            if isinstance(types[k], SeqType):
                if not any(u.kind == "f" for u in pytree.leaf_types(types[k])):
                    what = {"str": "is a str (a switch the gradient is built for)",
                            "none": "is None", "generator": "is a random generator"}.get(
                                types[k].container,
                                                   "holds no float or float array")
                    raise SignatureError(
                        f"cannot differentiate with respect to argument "
                        f"{self.param_names[k]!r}: it {what}", self.src.loc(self.src.node))
                continue
            if types[k].kind != "f":
                raise SignatureError(
                    f"cannot differentiate with respect to argument {self.param_names[k]!r}: it "
                    f"is {'an integer' if types[k].kind == 'i' else 'a bool'} "
                    f"({type(args[k]).__name__}); pass a float or a float array",
                    self.src.loc(self.src.node))
        return tuple(types)

    def result_post(self, converters: list):
        """What turns the entry's result into the caller's dtypes (None: nothing to do)."""
        if not any(converters):
            return None

        def grads(gs):
            if not self.wrt_tuple:
                return converters[0](gs)
            return tuple(c(g) if c else g for c, g in zip(converters, gs))
        return (lambda out: (out[0], grads(out[1]))) if self.with_value else grads

    def _compile(self, types: tuple, assume_sizes: bool = True, args=None) -> Compiled:
        """Build, transform, emit and compile for ``types``. Given the call's ``args``, a build
        whose size assumptions they break is not compiled: the general one is, at once."""
        g = self.generate(types, assume_sizes, examples=() if args is None else (args,),
                          replays_draws=True)
        path, fns = pipeline.load(g.stem, g.source, g.names, self.options)
        return Compiled(types, g.ir, g.source, path, fns[g.names[-1]], g.names[-1], g.gradient,
                        g.ir_text, g.graph_ir, g.line_locs, self.options.implementation)

    def generate(self, types: tuple, assume_sizes: bool = True, examples=(),
                 replays_draws: bool = False) -> Generated:
        """The generated module for ``types``, not compiled (`pipeline.load` compiles it, in
        this process or another). A build whose size assumptions any of the argument tuples
        in ``examples`` breaks is replaced by the general one. ``replays_draws``: the caller
        makes np.random's draws before each call (`draws.DrawPlan.replay`); else they are
        refused."""
        fn_ir, assume_sizes = pipeline.build_graph(self.src, types, examples,
                                                   assume_sizes=assume_sizes,
                                                   has_aux=self.has_aux,
                                                   replays_draws=replays_draws)
        ir_text = ir.format_function(fn_ir)  # before the transform adds its saves
        graph_ir = copy.deepcopy(fn_ir)
        grad = pipeline.reverse(fn_ir, self._flat_wrt(types), self.options)
        signature = ", ".join(f"{n}: {t}" for n, t in zip(self.param_names, types))
        single = not self.wrt_tuple and not isinstance(types[self.wrt[0]], SeqType)
        source, line_locs, names = pipeline.lower_gradient(
            grad, signature, [self.param_names[k] for k in self.wrt], self.options,
            entry="value_and_grad" if self.with_value else "grad", single=single)
        return Generated(self.src.node.name, source, names, assume_sizes, fn_ir, grad, ir_text,
                         graph_ir, line_locs)

    def compiled_call(self, args):
        """``(entry, flat, post)`` for a call with ``args``: the compiled entry (a Numba
        dispatcher), the arguments as it takes them (a tree's leaves in its place, 0-d
        arrays as floats, float arrays as float64), and what turns its result into the
        caller's (None: nothing). `jitgrad.vmap` calls the entry in a compiled loop."""
        args = tuple(args) if len(args) == self.n_params else self.bind_arguments(args, {})
        compiled, casts, post = self._specialise(args)
        self._refuse_draws(compiled, "jitgrad.vmap (it calls the compiled code in a loop)")
        flat = pipeline.flatten(args)
        if compiled.ir.written_params:
            self._refuse_shared_memory(compiled, flat)
        flat = [casts[k](a) if k in casts else a for k, a in enumerate(flat)]
        compiled.shared = True  # Numba code calls it with types of its own: it compiles
        self._fast = None
        if compiled.frozen:
            _thaw(compiled)
        return compiled.entry, flat, post

    def jitgrad_trace(self, types: tuple, args: tuple):
        """This gradient as IR for ``types`` (`jitgrad.compose`): what a transform of it
        (``jacobian(grad(f))``, ``grad(grad(f))``) differentiates by forward mode."""
        if self.has_aux:
            raise UnsupportedError(f"{self!r} has has_aux=True and is transformed again, "
                                   "which jitgrad does not do yet: transform the gradient "
                                   "without aux, and compute aux on its own")
        fn_ir, _ = pipeline.build_graph(self.src, types, () if args is None else (args,))
        try:
            return compose.gradient_trace(fn_ir, self._flat_wrt(types), self.with_value,
                                          self.wrt_tuple, dataclasses.replace(
                                              self.options, parallel=False))
        except NotReversible:  # it calls a transform: forward mode, as its calls take
            return compose.NestedGrad(self.fn, tuple(self.wrt) if self.wrt_tuple else
                                      self.wrt[0], with_value=self.with_value
                                      ).jitgrad_trace(types, args)

    # -- looking inside ------------------------------------------------------------------

    def _for(self, args, kwargs) -> Compiled:
        if args or kwargs:
            return self._specialise(self.bind_arguments(args, kwargs))[0]
        if self._last is None:
            raise JitgradError("no signature compiled yet: call the function first, or pass "
                               "example arguments")
        return self._last

    @api_boundary
    def njit(self, *args, **kwargs):
        """The compiled entry for these example arguments' signature: a Numba dispatcher that
        ``@numba.njit`` code can call (an SGD loop that never returns to Python). It takes the
        arguments positionally and returns what the entry returns: the gradient (a tuple for a
        tuple ``wrt``; ``(value, gradients)`` for `value_and_grad`), in float64, with 0-d arrays
        passed as scalars. Under ``JITGRAD_DISABLE_JIT=1`` it is the plain Python function."""
        compiled = self._for(args, kwargs)
        self._refuse_draws(compiled, ".njit() (Numba code calls the compiled code itself)")
        compiled.shared = True  # Numba code may call it with types of its own: it compiles
        self._fast = None
        if compiled.frozen:
            _thaw(compiled)
        return compiled.entry

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
        if part is None:
            return compiled.source
        blocks = compiled.source.split("\n\n\n")
        entry = next(b for b in blocks if b.startswith(f"def {compiled.entry_name}(")) + "\n"
        if part == "entry":
            return entry
        start = entry.index(f"# -- {part} pass")
        start = entry.rindex("\n", 0, start) + 1
        end = entry.find("    # -- adjoint pass") if part == "forward" else len(entry)
        return entry[start:end]

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


def _param_name(fn, k: int) -> str:
    names = dict(fn.written_params)
    return names.get(k, fn.params[k].name)


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
    `compose.NestedGrad` (forward mode over the transform's own trace)."""
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
        wrt = tuple(k for k, a in enumerate(args)
                    if isinstance(a, (float, np.floating))
                    or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
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
    for k, got in zip(g.wrt, grads):
        want = numeric_grad(f, args, k, eps)
        err = np.abs(np.asarray(got) - want)
        scale = atol + rtol * np.abs(want)
        rel = float(np.max(err / (np.abs(want) + atol))) if np.size(err) else 0.0
        worst = max(worst, rel)
        if np.any(err > scale) or not np.all(np.isfinite(got)):
            name = g.param_names[k]
            raise GradientCheckError(
                f"gradient with respect to {name!r} disagrees with finite differences: "
                f"max abs error {float(np.max(err)):.3g}\n jitgrad: {got}\n finite diff: {want}")
    return worst


__all__ = [
    "GradFunction",
    "Loc",
    "ShapeError",
    "Type",
    "check_grad",
    "grad",
    "value_and_grad",
]
