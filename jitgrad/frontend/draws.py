"""``np.random`` draws inside a differentiated function: constants of the call, replayed.

The compiled code draws nothing. While building, each draw (``np.random.normal(mu, sigma)``,
``rng.random(n)``, ``np.random.randint(0, k, n)``) becomes a hidden parameter of the graph,
appended after the user's: a standard normal, a uniform on [0, 1) or an integer array (inside
``for`` loops, one entry per iteration: ``z[k]``). The draw's value is written on top of it in
the graph, as NumPy computes it: ``loc + scale * z``, ``low + (high - low) * u``, so ``loc``,
``scale``, ``low`` and ``high`` are differentiable (the reparameterisation).

A `DrawPlan` keeps, in program order, the draws, the seeds (``np.random.seed(0)``) and the
generators made in the function (``np.random.default_rng(0)``), with the loops around them.
At each call, before the compiled code runs, `DrawPlan.replay` makes them in Python from the
user's own generator (NumPy's global one, a module-level ``Generator``/``RandomState`` read by
name at each call, one a closure captured, or one made in the function): the generator
advances exactly as it does when NumPy runs the function, and the values are NumPy's (a loop
whose body draws one thing draws all its iterations at once; NumPy fills an array in the order
of the scalar draws, and `tests/test_draws.py` checks it). The same values serve the forward and
the adjoint pass.

``exponential`` is ``scale * e``, ``e`` a standard exponential, so ``scale`` is differentiable
too. Every other distribution (``gamma``, ``poisson``, ``beta``, ``permutation(n)``,
``choice(n, k)``, ...) is replayed as the user called it, at its point in the generator's
stream (`_as_drawn`); its parameters carry no derivative through it, so they must be known
while building.

Refused, at the user's line: a draw whose count is known only at run time (inside a ``while``
loop, a branch on a run-time value, a loop that may exit early, a loop whose bounds or a size
computed from values that change inside a loop), a distribution replayed as drawn whose
parameters are computed in the function, what works in place (``shuffle``), and every entry
point that does not replay (`pipeline.build_graph` refuses a graph with draws unless asked).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import random
import textwrap
import types

import numpy as np

from jitgrad.core import ir
from jitgrad.core.errors import JitgradError, Loc, UnsupportedError, refused
from jitgrad.core.ir import Const, Var
from jitgrad.core.types import Type
from jitgrad.frontend.draw_sizes import size_in_loop
from jitgrad.lang import symbolic
from jitgrad.lang.symbolic import Sym
from jitgrad.prims import primitives

GENERATORS = (np.random.RandomState, np.random.Generator)
_GLOBAL = np.random.mtrand._rand  # what np.random.normal(...) and np.random.seed(...) use

# The methods replayed, by kind: "normal" (z: standard normal), "uniform" (u: [0, 1)),
# "integers" (replayed as called), with their signatures as NumPy's.
_METHODS = {
    "normal": ("normal", lambda loc=0.0, scale=1.0, size=None: (loc, scale, size)),
    "standard_normal": ("normal", lambda size=None, dtype=None: (0.0, 1.0, size, dtype)),
    "randn": ("normal", lambda *dims: (0.0, 1.0, dims)),
    "exponential": ("exponential", lambda scale=1.0, size=None: (0.0, scale, size)),
    "standard_exponential": ("exponential", lambda size=None: (0.0, 1.0, size)),
    "uniform": ("uniform", lambda low=0.0, high=1.0, size=None: (low, high, size)),
    "random": ("uniform", lambda size=None, dtype=None: (0.0, 1.0, size, dtype)),
    "random_sample": ("uniform", lambda size=None: (0.0, 1.0, size)),
    "sample": ("uniform", lambda size=None: (0.0, 1.0, size)),
    "ranf": ("uniform", lambda size=None: (0.0, 1.0, size)),
    "rand": ("uniform", lambda *dims: (0.0, 1.0, dims)),
    "randint": ("integers", lambda low, high=None, size=None, dtype=None:
                (low, high, size, dtype, False)),
    "integers": ("integers", lambda low, high=None, size=None, dtype=None, endpoint=False:
                 (low, high, size, dtype, endpoint)),
}
_LEGACY_ONLY = {"randn", "rand", "random_sample", "sample", "ranf", "randint", "seed"}
# What a generator does in place, or with a draw of the caller's values: never replayed.
_NOT_REPLAYED = {"shuffle", "bytes", "spawn", "set_state", "get_state", "jumped", "tomaxint"}
_GENERATOR_ONLY = {"integers"}


# ----------------------------------------------------------------------------- generators


ARGUMENTS = "%arguments"  # in a replay's ``made``: the call's arguments, as the user gave them


@dataclasses.dataclass(eq=False)
class GeneratorRef:
    """A generator the function draws from, as a value while building: an object (NumPy's
    global one, a closure's), a module-level name (read again at each call, as Python would),
    or one the function makes (``made``: its `MakeGenerator`)."""

    legacy: bool  # a RandomState (else a Generator)
    obj: object = None
    globals: dict | None = None
    name: str | None = None
    made: MakeGenerator | None = None
    argument: int | None = None  # the differentiated function's argument at this position
    python: bool = False  # a `random.Random` (Python's `random` module), not NumPy's

    def resolve(self, made: dict):
        """The generator itself, at a call: ``made`` holds those the function made, and the
        call's arguments (under `ARGUMENTS`)."""
        if self.made is not None:
            return made[self.made]
        if self.argument is not None:
            return made[ARGUMENTS][self.argument]
        if self.name is None:
            return self.obj
        obj = self.globals.get(self.name)
        if not isinstance(obj, np.random.RandomState if self.legacy else np.random.Generator):
            raise JitgradError(f"the global `{self.name}` was a "
                               f"{'RandomState' if self.legacy else 'Generator'} when the "
                               f"gradient was built and is now a {type(obj).__name__}")
        return obj


@dataclasses.dataclass(eq=False)
class DrawMethod:
    """``rng.normal`` (before it is called): a generator's method, while building."""

    ref: GeneratorRef
    name: str


def generator_value(value, name: str, globals_: dict | None):
    """A global (read by ``name`` in ``globals_`` at each call) or a closure's variable that is
    a NumPy generator, as the builder's value for it; None for anything else."""
    if not isinstance(value, GENERATORS):
        return None
    legacy = isinstance(value, np.random.RandomState)
    if globals_ is not None:
        return GeneratorRef(legacy, globals=globals_, name=name)
    return GeneratorRef(legacy, obj=value)


def method_of(ref: GeneratorRef, attr: str, loc: Loc | None) -> DrawMethod:
    """``rng.<attr>``: a method jitgrad replays, else refused."""
    if attr == "shuffle":  # in place, of an array it names (`_reordering`)
        return DrawMethod(ref, attr)
    known = attr in _METHODS or attr == "seed"
    if known and attr in (_GENERATOR_ONLY if ref.legacy else _LEGACY_ONLY):
        known = False
    kind = "RandomState" if ref.legacy else "Generator"
    method = getattr(np.random.RandomState if ref.legacy else np.random.Generator, attr, None)
    if not known and callable(method) and not attr.startswith("_") and attr not in _NOT_REPLAYED:
        return DrawMethod(ref, attr)  # another distribution: replayed as drawn (`_as_drawn`)
    if not known:
        if callable(method):
            raise refused(f"the {kind} method .{attr}", "distribution", loc)
        raise UnsupportedError(f"the attribute .{attr} of a {kind}", loc)
    return DrawMethod(ref, attr)


def handles(fn) -> bool:
    """Whether calling ``fn`` is this module's: a generator's method, np.random's functions."""
    if isinstance(fn, DrawMethod):
        return True
    if isinstance(getattr(fn, "__self__", None), (*GENERATORS, random.Random)):
        return True
    return str(getattr(fn, "__module__", None) or "").startswith("numpy.random") or (
        isinstance(fn, type) and issubclass(fn, (*GENERATORS, np.random.BitGenerator)))


# ----------------------------------------------------------------------------- the plan


@dataclasses.dataclass(eq=False)
class Draw:
    """One draw site: its hidden parameter (loops' axes first, then the draw's shape)."""

    var: Var
    kind: str  # "normal", "uniform", "exponential", "integers", "drawn"
    source: GeneratorRef
    shape: tuple  # of shapes (tuples of atoms): the draw's shape is their broadcast
    bounds: tuple  # "integers": (low, high, endpoint) atoms (high may be None)
    loc: Loc | None
    call: tuple = ()  # "drawn": (method name, its arguments, its keywords), all constants


@dataclasses.dataclass(eq=False)
class Seed:
    source: GeneratorRef
    value: object  # an atom, or None
    loc: Loc | None


@dataclasses.dataclass(eq=False)
class MakeGenerator:
    legacy: bool  # np.random.RandomState(seed), else np.random.default_rng(seed)
    value: object  # an atom, or None
    loc: Loc | None


@dataclasses.dataclass(eq=False)
class Loop:
    """A ``for`` loop around draws: its bounds (atoms) and what it draws, in order."""

    index: Var
    start: object
    stop: object
    step: object
    body: list
    loc: Loc | None


def _walk(nodes):
    for n in nodes:
        yield n
        if isinstance(n, Loop):
            yield from _walk(n.body)


@dataclasses.dataclass(eq=False)
class DrawPlan:
    """What a call draws before the compiled code runs (`Function.draws`)."""

    nodes: list
    params: list  # the user's parameters (flattened), whose values the replay reads
    # per top-level node, (prim, outs, ins, params) equations: what computes its sizes and
    # bounds (and those of the draws and loops inside it) from the parameters and earlier draws
    programs: dict
    hidden: list  # the hidden parameters, in the order the compiled code takes them

    def __deepcopy__(self, memo):  # fixed once built; it holds the user's generators and globals
        return self

    @property
    def first_loc(self) -> Loc | None:
        return next((n.loc for n in _walk(self.nodes)), None)

    def sources(self) -> list:
        return [n.source for n in _walk(self.nodes) if isinstance(n, (Draw, Seed))]

    def replay(self, args, arguments=()) -> list:
        """The hidden arguments for a call with the (flattened) ``args``: the draws, made from
        the user's generators in program order (a generator passed as an argument is read
        from ``arguments``, the call's arguments as the user gave them)."""
        env = dict(zip(self.params, args))
        out: dict = {}
        self._run(self.nodes, (), env, out, {ARGUMENTS: tuple(arguments)}, {})
        return [out[v] for v in self.hidden]

    def _run(self, nodes, prefix, env, out, made, trips):
        for n in nodes:
            for prim, outs, ins, params in self.programs.get(n, ()):
                value = primitives.PRIMITIVES[prim].impl(*(_value(a, env) for a in ins),
                                                         **params)
                if len(outs) == 1:
                    env[outs[0]] = value
                else:
                    env.update(zip(outs, value))
            if isinstance(n, Draw):
                value = _draw(n, n.source.resolve(made), _shape(n, env), env)
                if prefix:
                    out[n.var][prefix] = value
                else:
                    out[n.var] = env[n.var] = _scalar(value, n.var.type.kind) \
                        if np.ndim(value) == 0 else value
            elif isinstance(n, Seed):
                n.source.resolve(made).seed(_value(n.value, env))
            elif isinstance(n, MakeGenerator):
                seed = _value(n.value, env)
                made[n] = (np.random.RandomState if n.legacy else np.random.default_rng)(seed)
            else:
                count = trips.setdefault(n, len(range(*(_value(a, env) for a in (
                    n.start, n.stop, n.step)))))
                for d in _walk(n.body):  # the buffers of the draws inside, once
                    if isinstance(d, Draw) and d.var not in out:
                        out[d.var] = env[d.var] = np.empty(self._outer(d, env, trips) + _shape(d, env),
                                              np.int64 if d.var.type.kind == "i" else np.float64)
                chain = _single_draw(n)
                if chain is not None and chain.kind != "drawn":  # all its iterations at once
                    d = chain
                    full = out[d.var].shape[len(prefix):]
                    out[d.var][prefix] = _draw(d, d.source.resolve(made), full, env)
                    continue
                for k in range(count):
                    self._run(n.body, prefix + (k,), env, out, made, trips)

    def _outer(self, d: Draw, env, trips) -> tuple:
        """The trip counts of the loops around ``d``."""
        def path(nodes, acc):
            for n in nodes:
                if n is d:
                    return acc
                if isinstance(n, Loop):
                    found = path(n.body, acc + (n,))
                    if found is not None:
                        return found
            return None
        return tuple(trips.setdefault(n, len(range(*(_value(a, env) for a in (
            n.start, n.stop, n.step))))) for n in path(self.nodes, ()))


def _single_draw(loop: Loop) -> Draw | None:
    """The one draw a loop nest makes (loops inside loops, one draw at the bottom), else None."""
    while len(loop.body) == 1 and isinstance(loop.body[0], Loop):
        loop = loop.body[0]
    if len(loop.body) == 1 and isinstance(loop.body[0], Draw):
        return loop.body[0]
    return None


def _value(a, env):
    if a is None:
        return None
    if isinstance(a, Const):
        return a.value
    v = env[a]
    return v.item() if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and
                                                     v.ndim == 0) else v


def _shape(d: Draw, env) -> tuple:
    shapes = [tuple(int(_value(a, env)) for a in s) for s in d.shape]
    return np.broadcast_shapes(*shapes) if shapes else ()


def _draw(d: Draw, gen, shape: tuple, env):
    size = shape if shape else None
    if d.kind == "drawn":  # the distribution as the user called it, parameters and all
        name, args, kwargs = d.call
        args = tuple(_value(a, env) if isinstance(a, (Var, Const)) else a for a in args)
        if name == "permutation" and isinstance(gen, random.Random):  # random.shuffle(x)
            order = list(range(args[0]))  # (its swaps depend on the length only)
            gen.shuffle(order)
            return np.array(order, dtype=np.int64)
        return getattr(gen, name)(*args, **kwargs)
    if d.kind == "normal":
        return gen.standard_normal(size)
    if d.kind == "exponential":
        return gen.standard_exponential(size)
    if d.kind == "uniform":
        return gen.random_sample(size) if isinstance(gen, np.random.RandomState) \
            else gen.random(size)
    low, high, endpoint = (_value(a, env) for a in d.bounds)
    if isinstance(gen, np.random.RandomState):
        return gen.randint(low, high, size, dtype=np.int64)
    return gen.integers(low, high, size, dtype=np.int64, endpoint=endpoint)


def _scalar(value, kind: str):
    return int(value) if kind == "i" else float(value)


# ----------------------------------------------------------------------------- building


class Recorder:
    """Collects a build's draws (one per `build.build` attempt, shared by inlined calls)."""

    def __init__(self, gb):
        self.gb = gb
        self.nodes: list = []
        self.stack: list = []  # Loop frames and (why, loc) markers, innermost last

    def _here(self) -> list:
        for f in reversed(self.stack):
            if isinstance(f, Loop):
                return f.body
        return self.nodes

    @contextlib.contextmanager
    def run_time(self, why: str, loc: Loc | None):
        """Inside a ``while`` loop or a branch on a run-time value: no draw."""
        self.stack.append((why, loc))
        try:
            yield
        finally:
            self.stack.pop()

    @contextlib.contextmanager
    def loop(self, index: Var, start, stop, step, loc: Loc | None):
        """A ``for`` loop's body; yields its `Loop` (`attach` it once the loop is built)."""
        frame = Loop(index, self.gb.atom(start), self.gb.atom(stop), self.gb.atom(step), [], loc)
        self.stack.append(frame)
        try:
            yield frame
        finally:
            self.stack.pop()

    def attach(self, frame: Loop, exit_flag, loc: Loc | None) -> None:
        """The loop's last build, in its place; a loop that draws and may exit early is
        refused (how many draws it makes is known only at run time)."""
        if not frame.body:
            return
        if exit_flag is not None:
            raise refused("a draw (np.random) inside a loop that may exit early (break or "
                          "return)", "draw at run time", loc)
        self._here().append(frame)

    def _refuse_run_time(self, what: str, loc) -> None:
        for f in reversed(self.stack):
            if not isinstance(f, Loop):
                why, where = f
                raise refused(f"{what} inside {why} (line {where.lineno if where else '?'}): "
                              "how many values it draws is known only at run time, so it "
                              "cannot be drawn before the call", "draw at run time", loc)

    def add(self, node) -> None:
        self._refuse_run_time(_what(node), node.loc)
        self._here().append(node)

    def hidden_var(self, kind: str, shape: tuple) -> tuple:
        """A hidden parameter for a draw of ``shape`` here, and its value at this iteration."""
        loops = [f for f in self.stack if isinstance(f, Loop)]
        ndim = len(loops) + len(shape)
        var = Var(self.gb.namer.fresh("_draw"), Type("i" if kind in ("integers", "drawn_int")
                                                     else "f", ndim))
        tokens = [None if a is None else symbolic.size_token(a) for a in shape]
        var.dims = tuple((var, k) for k in range(len(loops))) + tuple(
            (var, len(loops) + k) if t is None else t for k, t in enumerate(tokens))
        self.gb.made.append(var)
        value = self.gb.sym(var)
        if loops:
            ks = []
            for f in loops:
                k = self.gb.sym(f.index)
                start, step = _py(self.gb, f.start), _py(self.gb, f.step)
                if not (isinstance(start, int) and start == 0):
                    k = k - start
                if not (isinstance(step, int) and step == 1):
                    k = k // step
                ks.append(k)
            value = symbolic.record("getitem", value, *ks, index_spec=("i",) * len(ks))
            if shape:  # a new array, as NumPy's draw is (not a view the user cannot write into)
                value = value.copy()
        return var, value

    def finish(self, params: list[Var], body: ir.Block) -> DrawPlan | None:
        """The plan, with the program that computes its sizes and bounds from the parameters;
        refuses a size or bound that changes inside a loop."""
        if not self.nodes:
            return None
        defs: dict = {}
        for s in ir.walk(body):
            if isinstance(s, ir.Eqn):
                for o in s.outs:
                    defs[o] = s
        order = {id(s): k for k, s in enumerate(ir.walk(body))}
        known = set(params)  # and the draws made before (their values are known by then)
        programs = {}
        done: dict = {}  # equation -> when its inputs were all needed
        for top in self.nodes:
            needed: dict = {}

            def need(a, node, what, needed=needed) -> None:
                if not isinstance(a, Var) or a in known or id(a) in needed:
                    return
                eqn = defs.get(a)
                if eqn is not None and eqn.prim == "shape_dim":
                    saved = dict(needed)
                    try:  # of an array computed from the parameters: as it is computed
                        need(eqn.ins[0], node, what)
                    except UnsupportedError:  # made in a loop: from its size's token
                        needed.clear()
                        needed.update(saved)
                        eqn = size_in_loop(self.gb, eqn, defs, order) or eqn
                if eqn is None or eqn.prim not in primitives.PRIMITIVES:
                    raise refused(f"{what} is computed from a value that changes inside a "
                                  "loop (a loop index, a carried value or a draw of the "
                                  "loop)", "draw at run time", node.loc)
                needed[id(a)] = eqn
                for b in eqn.ins:
                    need(b, node, what)
                done[id(eqn)] = len(done)  # (after what it reads: the order among ties)

            for n in _walk([top]):
                if isinstance(n, Draw):
                    for a in [x for s in n.shape for x in s] + list(n.bounds):
                        need(a, n, "the size or bounds of this draw")
                elif isinstance(n, (Seed, MakeGenerator)):
                    need(n.value, n, "this seed")
                else:
                    for a in (n.start, n.stop, n.step):
                        need(a, n, "the range of this loop, around a draw,")
            eqns = sorted({id(e): e for e in needed.values()}.values(),
                          key=lambda e: (order[id(e)], done.get(id(e), 0)))
            programs[top] = [(e.prim, list(e.outs), list(e.ins), dict(e.params)) for e in eqns]
            known.update(e for eqn in eqns for e in eqn.outs)
            known.update(n.var for n in _walk([top]) if isinstance(n, Draw))
        hidden = [n.var for n in _walk(self.nodes) if isinstance(n, Draw)]
        return DrawPlan(self.nodes, list(params), programs, hidden)


def _what(node) -> str:
    return {Seed: "seeding", MakeGenerator: "making a generator"}.get(type(node), "a draw "
                                                                      "(np.random)")


def _py(gb, atom):
    return atom.value if isinstance(atom, Const) else gb.sym(atom)


def build_call(builder, recorder: Recorder, fn, args, kwargs, node):
    """A call of NumPy's random functions or a generator's method, while building: the
    draw's value (a `Sym` or a number), a new generator (`GeneratorRef`), or None (a seed)."""
    loc = builder.loc(node)
    gb = builder.gb
    if isinstance(fn, DrawMethod):
        ref, name = fn.ref, fn.name
    elif isinstance(getattr(fn, "__self__", None), GENERATORS):
        ref = GeneratorRef(isinstance(fn.__self__, np.random.RandomState), obj=fn.__self__)
        name = fn.__name__
        if name != "shuffle":
            method_of(ref, name, loc)
    elif isinstance(getattr(fn, "__self__", None), random.Random):  # Python's random module
        ref, name = GeneratorRef(False, obj=fn.__self__, python=True), fn.__name__
        if name == "shuffle":  # of an array: its positions replayed, as NumPy's shuffle
            return _reordering(builder, recorder, ref, name, args, kwargs, node)
        if name != "seed":
            return _as_drawn(recorder, ref, name, args, kwargs, loc)
    elif fn is np.random.seed:
        ref, name = GeneratorRef(True, obj=_GLOBAL), "seed"
    elif fn is np.random.sample or fn is np.random.ranf:  # aliases, not methods of _GLOBAL
        ref, name = GeneratorRef(True, obj=_GLOBAL), "random_sample"
    elif fn is np.random.default_rng or fn is np.random.RandomState:
        seed = _bind(lambda seed=None: seed, args, kwargs, fn, loc)
        made = MakeGenerator(fn is np.random.RandomState, _int_atom(gb, seed, "a seed", loc),
                             loc)
        recorder.add(made)
        return GeneratorRef(made.legacy, made=made)
    elif isinstance(fn, type):
        raise UnsupportedError(f"{_fn_name(fn)}(...) inside the function is not supported: "
                               "make the generator with np.random.default_rng(seed) (or "
                               "np.random.RandomState(seed)), or make it at module level",
                               loc)
    else:
        raise refused(f"{_fn_name(fn)}", "distribution", loc)
    if name in ("permutation", "shuffle", "choice") and (name == "shuffle" or any(
            isinstance(v, Sym) for v in (*args, *kwargs.values()))):
        return _reordering(builder, recorder, ref, name, args, kwargs, node)
    if name == "seed":
        seed = _bind(lambda seed=None: seed, args, kwargs, name, loc)
        recorder.add(Seed(ref, _int_atom(gb, seed, "a seed", loc), loc))
        return None
    if name not in _METHODS:
        return _as_drawn(recorder, ref, name, args, kwargs, loc)
    kind, signature = _METHODS[name]
    bound = _bind(signature, args, kwargs, name, loc)
    if kind == "integers":
        low, high, size, dtype, endpoint = bound
        _default_dtype(dtype, np.int64, name, loc)
        if not isinstance(endpoint, bool):
            raise UnsupportedError("endpoint= must be True or False, known while building", loc)
        bounds = (_int_atom(gb, low, "low", loc), _int_atom(gb, high, "high", loc),
                  Const(endpoint))
        shape = _size(gb, size, [], loc)
    else:
        if len(bound) == 4:
            _default_dtype(bound[3], np.float64, name, loc)
        a, b, size = bound[:3]
        for v in (a, b):
            if isinstance(v, Sym) and v.type.kind == "b" or not isinstance(
                    v, (Sym, int, float, np.number)) or isinstance(v, bool):
                raise UnsupportedError(f"np.random {name}: its parameters must be numbers or "
                                       "float arrays", loc)
        shape = _size(gb, size, [a, b], loc)
        bounds = ()
    gb.loc = loc
    rank = max((len(s) for s in shape), default=0)
    atoms = shape[0] if len(shape) == 1 else (None,) * rank
    var, value = recorder.hidden_var(kind, tuple(atoms))
    recorder.add(Draw(var, kind, ref, shape, bounds, loc))
    if kind == "exponential" and not (isinstance(b, (int, float)) and b == 1):
        value = b * value  # scale * e, as NumPy computes it
    if kind == "normal":  # loc + scale * z, as NumPy computes it
        if not (isinstance(b, (int, float)) and b == 1):
            value = b * value
        if not (isinstance(a, (int, float)) and a == 0):
            value = value + a
    elif kind == "uniform" and not (isinstance(a, (int, float)) and a == 0
                                    and isinstance(b, (int, float)) and b == 1):
        value = a + (b - a) * value  # low + (high - low) * u
    return value


def _as_drawn(recorder: Recorder, ref: GeneratorRef, name: str, args, kwargs, loc):
    """Any other distribution (``rng.gamma(2.0, size=3)``, ``rng.permutation(5)``): replayed
    as the user called it, from the same generator at the same point of its stream. Its
    parameters carry no derivative through it, so they must be known while building
    (numbers, constant arrays): a parameter computed in the function is refused."""
    def known(v):  # np.array([1.0, 2.0]) written in the function: its value
        gb = recorder.gb
        if isinstance(v, Sym) and v.atom in gb.known_values and not gb.is_stale(v.atom):
            return gb.known_values[v.atom]
        return v
    args = tuple(known(v) for v in args)
    kwargs = {k: known(v) for k, v in kwargs.items()}
    for v in (*args, *kwargs.values()):
        if isinstance(v, Sym) or not isinstance(v, (int, float, bool, str, np.number,
                                                     np.ndarray, tuple, list, type(None))):
            raise UnsupportedError(
                f"np.random {name} with a parameter computed in the function: jitgrad replays "
                f"{name} before the call, so its parameters must be known then (numbers or "
                "constant arrays); draw a standard variate (standard_normal, random, "
                "standard_exponential) and transform it in the function instead", loc)
    probe = (random.Random if ref.python else np.random.RandomState if ref.legacy
             else np.random.default_rng)(0)
    try:
        sample = np.asarray(getattr(probe, name)(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - NumPy's own message, at the user's line
        raise UnsupportedError(f"np.random {name}: {e}", loc) from None
    if sample.dtype.kind not in "biuf":
        raise UnsupportedError(f"np.random {name} draws {sample.dtype} values", loc)
    kind = "drawn_int" if sample.dtype.kind in "biu" else "drawn"
    shape = tuple(Const(int(n)) for n in sample.shape)
    gb = recorder.gb
    gb.loc = loc
    var, value = recorder.hidden_var(kind, shape)
    recorder.add(Draw(var, "drawn", ref, (shape,) if shape else (), (), loc,
                      (name, tuple(args), dict(kwargs))))
    return value


def _reordering(builder, recorder: Recorder, ref: GeneratorRef, name: str, args, kwargs,
                node):
    """``rng.permutation(x)``, ``rng.shuffle(x)`` (in place), ``rng.choice(x, k)`` of an
    array of the function, or of a size known only at run time: the positions are drawn
    before the call (``rng.permutation(n)``, ``rng.choice(n, k)``, which move the generator
    as NumPy's calls on the array do, and whose entries NumPy reads in that order), and the
    array's rows are gathered at them, so its gradient goes back through the positions."""
    loc = builder.loc(node)
    gb = builder.gb
    if ref.python and name != "shuffle":
        raise refused(f"random.{name}", "distribution", loc)
    if name == "choice":
        a, size, replace, p = _bind(lambda a, size=None, replace=True, p=None, axis=0,
                                    shuffle=True: (a, size, replace, p), args, kwargs, name, loc)
        if not all(isinstance(v, (int, bool, tuple, list, np.ndarray, type(None)))
                   for v in (size, replace, p)) or (
                       kwargs.get("axis", 0) != 0 or kwargs.get("shuffle", True) is not True):
            raise UnsupportedError("np.random choice of an array or size computed in the "
                                   "function takes size=, replace= and p= known while "
                                   "building (numbers, constant arrays)", loc)
        shape = () if size is None else tuple(size) if isinstance(size, (tuple, list)) \
            else (size,)
    else:
        (a,) = _bind(lambda x: (x,), args, kwargs, name, loc)
        shape = None
    array = isinstance(a, Sym) and a.ndim > 0
    if not array and not (isinstance(a, Sym) and a.ndim == 0 and a.type.kind == "i"):
        raise UnsupportedError(f"np.random {name} of an array or an integer", loc)
    if name == "shuffle" and not (array and isinstance(node.args[0] if node.args else None,
                                                        ast.Name)):
        raise UnsupportedError("rng.shuffle(x) shuffles an array it names in place "
                               "(`rng.shuffle(x)`); for a copy: x[rng.permutation(len(x))]",
                               loc)
    n = a.shape[0] if array else a
    count = _int_atom(gb, n, "a size", loc)
    if name == "choice":
        call = ("choice", (count,), {"size": size, "replace": replace, "p": p})
        shape = tuple(Const(int(k)) for k in shape)
    else:
        call, shape = ("permutation", (count,), {}), (count,)
    gb.loc = loc
    var, positions = recorder.hidden_var("drawn_int", shape)
    recorder.add(Draw(var, "drawn", ref, (shape,) if shape else (), (count,), loc, call))
    if not array:
        return positions
    if symbolic.ndim_of(positions) == 0:
        return symbolic.record("getitem", a, positions, index_spec=("i",))
    values = builder.getitem(a, (("a",), [positions]), node)
    if name != "shuffle":
        return values
    target = ast.copy_location(ast.Subscript(value=node.args[0], slice=ast.Constant(Ellipsis),
                                             ctx=ast.Store()), node)
    builder.assign(target, values)
    return None


def _fn_name(fn) -> str:
    name = getattr(fn, "__name__", type(fn).__name__)
    return f"np.random.{name}"


def _bind(signature, args, kwargs, name, loc):
    try:
        return signature(*args, **kwargs)
    except TypeError as e:
        label = name if isinstance(name, str) else _fn_name(name)
        raise UnsupportedError(f"np.random {label}: {e}", loc) from None


def _default_dtype(dtype, default, name, loc) -> None:
    if dtype is not None and np.dtype(dtype) != np.dtype(default):
        raise UnsupportedError(f"np.random {name} with dtype={np.dtype(dtype).name}: jitgrad "
                               f"replays the default dtype ({np.dtype(default).name}) only", loc)


def _int_atom(gb, v, what: str, loc):
    """An integer (or None) known before the call: a constant, or one computed from the
    arguments' values and shapes (checked when the plan is finished)."""
    if v is None:
        return None
    if isinstance(v, Sym) and v.ndim == 0 and v.type.kind in "ib":
        return gb.atom(v)
    if isinstance(v, (int, np.integer)):
        return Const(int(v))
    got = type(v).__name__ if not isinstance(v, Sym) else "an array" if v.ndim else "a float"
    raise UnsupportedError(f"np.random: {what} must be an integer, got {got}", loc)


def _size(gb, size, operands, loc) -> tuple:
    """The draw's shape as a tuple of shapes (tuples of integer atoms) to broadcast: ``size``,
    else the array operands' shapes (``np.random.normal(mu)`` draws mu's shape)."""
    if size is None:
        return tuple(tuple(_int_atom(gb, d, "a size", loc) for d in v.shape)
                     for v in operands if isinstance(v, Sym) and v.ndim)
    if isinstance(size, (tuple, list)):
        return (tuple(_int_atom(gb, d, "a size", loc) for d in size),)
    return ((_int_atom(gb, size, "a size", loc),),)


# ----------------------------------------------------------------------------- plain code


def random_call_in(fn, depth: int = 3) -> str | None:
    """Where ``fn`` (or a plain function it calls, ``depth`` deep) calls np.random or a
    generator's method, as ``"file:line: source"``, else None. `jitgrad.vmap` of a plain
    function compiles it with Numba, whose np.random has a generator of its own: it refuses
    rather than draw other values than NumPy's."""
    try:
        lines, first = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    names = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        if _filled(cell):
            names[name] = cell.cell_contents
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        attrs, base = [], node.func
        while isinstance(base, ast.Attribute):
            attrs.append(base.attr)
            base = base.value
        obj = names.get(base.id) if isinstance(base, ast.Name) else None
        for attr in reversed(attrs):
            if isinstance(obj, GENERATORS):
                obj = DrawMethod(GeneratorRef(False), attr)
                break
            obj = getattr(obj, attr, None)
        if obj is not None and handles(obj):
            where = f"{inspect.getsourcefile(fn)}:{first + node.lineno - 1}"
            return f"{where}: {ast.unparse(node)}"
        if depth and isinstance(obj, types.FunctionType) and obj is not fn:
            found = random_call_in(obj, depth - 1)
            if found:
                return found
    return None


# ----------------------------------------------------------------------------- state


def generator_states(fn, plan: DrawPlan | None = None, args=()) -> list:
    """The state of every generator ``fn`` may draw from (NumPy's global one, its module's
    and its closure's generators, those ``plan`` draws from, those among the call's ``args``),
    to `restore`: `jitgrad.check_grad` gives each evaluation the same draws."""
    found = [_GLOBAL, random._inst]  # NumPy's and Python's global generators
    values = [] if plan is None else [s.resolve({}) for s in plan.sources()
                                      if s.made is None and s.argument is None]
    values += list(args)
    values += list(getattr(fn, "__globals__", {}).values())
    values += [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())
               if _filled(c)]
    for v in values:
        if isinstance(v, (*GENERATORS, random.Random)) and all(v is not f for f in found):
            found.append(v)
    return [(g, g.get_state() if isinstance(g, np.random.RandomState)
             else g.getstate() if isinstance(g, random.Random)
             else g.bit_generator.state) for g in found]


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def restore(states) -> None:
    for g, state in states:
        if isinstance(g, np.random.RandomState):
            g.set_state(state)
        elif isinstance(g, random.Random):
            g.setstate(state)
        else:
            g.bit_generator.state = state
