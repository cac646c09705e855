"""Vector-Jacobian products and Jacobians of functions that return arrays, by reverse mode.

`vjp(f, *primals)` returns ``(value, vjp_fn)``: ``f``'s value, and a function taking a
cotangent (a float for a scalar ``f``, an array of the value's shape otherwise) and returning
one gradient per primal (``None`` for a non-float one). `jacobian(f, wrt=k)(*args)` returns
the array of shape ``value.shape + args[k].shape``: one VJP per entry of the value.

The pipeline is `api.GradFunction`'s (`jitgrad.pipeline`) with two differences: the builder
keeps an array result (``any_result=True``), and the reverse transform seeds the result's
adjoint with a cotangent parameter ``_ct`` instead of 1.0; the adjoint kernel takes it after
the saved values, and the module's entry is the "vjp" one. The forward kernel runs once per `vjp` (or per `jacobian` call), the
adjoint once per cotangent, both compiled as every gradient is (and cached on disk).
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from jitgrad import compose, pipeline
from jitgrad.core import ops, pytree
from jitgrad.core.errors import NotReversible, SignatureError, UnsupportedError, api_boundary
from jitgrad.core.ir import Const, Eqn, Var, dims_of, format_function, walk
from jitgrad.core.types import Type
from jitgrad.frontend.parse import FunctionSource, signature_of


@dataclasses.dataclass(eq=False)
class _Kernels:
    source: str
    forward: object  # (*args) -> (value, saved)
    adjoint: object  # (*args, saved + (ct,)) -> tuple of gradients
    entry: object  # (*args, ct) -> (value, gradients)
    result_ndim: int
    ir_text: str
    aux_structure: object = None  # has_aux: the aux tree's structure (forward returns its leaves)
    types: tuple = ()  # the arguments' types (trees as `SeqType`)
    wrt: tuple = ()  # the differentiated arguments' positions
    graph: object = None  # the graph as built: its opening checks say which sizes it takes

    def regroup(self, flat: list) -> list:
        """One gradient per ``wrt`` argument from the adjoint's flat ones (trees rebuilt)."""
        return pytree.regroup(self.types, self.wrt, list(flat))


class _VJP:
    """A function's VJP kernels, compiled per call signature and per set of wrt arguments."""

    def __init__(self, fn):
        self.fn = fn
        self.src = FunctionSource.of(fn)
        self.param_names = [a.arg for a in self.src.node.args.args]
        self._kernels: dict[tuple, list[_Kernels]] = {}

    def bind(self, args) -> tuple:
        """The arguments with the parameters' defaults filled in (``f(x, sigma=10.0)``)."""
        return compose.bind_arguments(signature_of(self.fn), self.param_names,
                                      self.src.qualname, args)

    def kernels(self, args, wrt: tuple, has_aux: bool = False) -> _Kernels:
        if len(args) != len(self.param_names):
            raise SignatureError(f"{self.src.qualname} takes {len(self.param_names)} arguments, "
                                 f"got {len(args)}")
        types = self.types(args)
        built = self._kernels.setdefault((types, wrt, has_aux), [])
        # (one per pattern of sizes its build assumed, `pipeline.sizes_hold`)
        k = next((k for k in built if pipeline.sizes_hold(k.graph, args)), None)
        if k is None:
            k = self.compile(types, wrt, args, has_aux)
            built.append(k)
        return k

    def types(self, args) -> tuple:
        """The arguments' types (a tree's `SeqType`), refused at the function's `def` line."""
        try:
            return tuple(pytree.type_of_tree(a, f"argument {n!r}")
                         for n, a in zip(self.param_names, args))
        except SignatureError as e:  # say which function's parameter, at its `def` line
            raise SignatureError(e.message, self.src.loc(self.src.node)) from None

    def mode(self, args, positions) -> str:
        """"forward" when the arguments at ``positions`` have fewer entries than the value
        (its size read from the arguments' shapes through the built graph's size tokens);
        "reverse" for tree arguments (forward mode does not take them)."""
        if any(pytree.is_tree(a) for a in args):
            return "reverse"
        n_in = sum(int(np.size(args[j])) for j in positions)
        types = self.types(args)
        fn_ir, _ = pipeline.build_graph(self.src, types, (args,), any_result=True)
        r = fn_ir.result
        if not isinstance(r, Var) or not r.type.ndim:
            return "reverse"
        n_out = _result_size(fn_ir, args)
        return "forward" if n_out is not None and n_in < n_out else "reverse"

    def compile(self, types, wrt, args, has_aux: bool = False) -> _Kernels:
        fn_ir, _ = pipeline.build_graph(self.src, types, (args,), any_result=True,
                                        has_aux=has_aux)
        ir_text = format_function(fn_ir)
        graph = copy.deepcopy(fn_ir)  # (before the transform adds its saves)
        r = fn_ir.result
        ndim = r.type.ndim
        ct = Var(fn_ir.namer.fresh("_ct"), Type("f", ndim),
                 dims=dims_of(r) if isinstance(r, Var) and ndim else None)
        grad = pipeline.reverse(fn_ir, pytree.float_leaf_positions(types, wrt), cotangent=ct)
        signature = ", ".join(f"{n}: {t}" for n, t in zip(self.param_names, types))
        wrt_names = [self.param_names[k] for k in wrt]
        source, _, names = pipeline.lower_gradient(grad, signature, wrt_names, pipeline.DEFAULT,
                                                   entry="vjp")
        _, fns = pipeline.load(self.src.fn.__name__ + "_vjp", source, names, inline=names[:2])
        return _Kernels(source, fns[names[0]], fns[names[1]], fns[names[2]], ndim, ir_text,
                        fn_ir.aux_structure if has_aux else None, types, tuple(wrt), graph)

    def run_forward(self, k: _Kernels, args):
        """``(value, saved, aux)``: the forward kernel's run (aux None without has_aux)."""
        out = k.forward(*pipeline.flatten(args))
        if k.aux_structure is None:
            return out[0], out[1], None
        return out[0], out[1], pytree.unflatten(k.aux_structure, list(out[2]))


def _result_size(fn_ir, args) -> int | None:
    """The number of entries of ``fn_ir``'s array result for these arguments, when its size
    tokens are axes of the arguments or literals, or when it is (a version of) an array
    allocated with sizes that are literals or integer arguments; else None."""
    sizes = {}
    for p, a in zip(fn_ir.params, args):
        for axis, token in enumerate(dims_of(p)):
            sizes.setdefault(token, np.shape(a)[axis])
    r = fn_ir.result
    if r.dims is not None and all(isinstance(t, int) or t in sizes for t in r.dims):
        return int(np.prod([t if isinstance(t, int) else sizes[t] for t in r.dims]))
    value = {p: a for p, a in zip(fn_ir.params, args)}
    for s in walk(fn_ir.body):
        flags = ops.flags(s.prim) if isinstance(s, Eqn) else ops.NONE
        if flags.allocates and flags.sizes_from is not None and s.outs and s.outs[0] is r.root:
            dims = s.ins[flags.sizes_from:]
            if all(isinstance(d, Const) or (d in value and np.ndim(value[d]) == 0)
                   for d in dims):
                return int(np.prod([d.value if isinstance(d, Const) else value[d]
                                    for d in dims]))
    return None


_CACHE: dict[object, _VJP] = {}


def _vjp_of(fn) -> _VJP:
    v = _CACHE.get(fn)
    if v is None:
        v = _CACHE[fn] = _VJP(fn)
    return v


_is_float = compose.is_float
_plain = compose.plain


@api_boundary
def vjp(fn, *primals, has_aux=False):
    """``(value, vjp_fn)``: ``fn(*primals)`` and its vector-Jacobian product, as in JAX.

    ``vjp_fn(cotangent)`` returns a tuple with one gradient per primal: the cotangent pulled
    back through ``fn`` (``None`` for an integer or bool primal). The forward pass runs once;
    each ``vjp_fn`` call runs the compiled adjoint. ``has_aux=True``: ``fn`` returns
    ``(value, aux)`` and the call returns ``(value, vjp_fn, aux)``, as JAX does."""
    if compose.is_transform(fn):
        if has_aux:
            raise UnsupportedError(f"has_aux=True with {fn!r}: a transform takes no aux yet")
        return _vjp_of_transform(fn, primals)
    v = _vjp_of(fn)
    primals = v.bind(primals)
    wrt = tuple(k for k, a in enumerate(primals) if _is_float(a) or (
        pytree.is_tree(a) and any(_is_float(leaf) for leaf in pytree.leaves(a))))
    args = tuple(_plain(a) for a in primals)
    if not wrt:
        if has_aux:
            value, aux = fn(*primals)
            return value, lambda ct: (None,) * len(primals), aux
        return fn(*primals), lambda ct: (None,) * len(primals)
    try:
        k = v.kernels(args, wrt, has_aux)
    except NotReversible:  # it calls a transform: forward mode
        if has_aux:
            raise
        return _vjp_of_transform(fn, primals)
    value, saved, aux = v.run_forward(k, args)
    flat = pipeline.flatten(args)
    converters = _leaf_converters(primals, wrt)
    shape = np.shape(value)

    @api_boundary
    def vjp_fn(ct):
        ct = np.asarray(ct, dtype=np.float64)
        if ct.shape != shape:
            raise SignatureError(f"the cotangent has shape {ct.shape}; the value has {shape}")
        gs = k.adjoint(*flat, saved + ((ct if k.result_ndim else float(ct)),))
        out = [None] * len(primals)
        for j, g in zip(wrt, k.regroup([c(g) if c else g for c, g in zip(converters, gs)])):
            out[j] = g
        return tuple(out)

    vjp_fn.jitgrad_rows = True  # `vmap` of it: one call per row (its compiled adjoint)
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def _leaf_converters(args, positions) -> list:
    """`pipeline.result_converter` of every float leaf of the arguments at ``positions``, in
    `pytree.float_leaf_positions` order."""
    return [pipeline.result_converter(leaf) for j in positions
            for leaf in (pytree.leaves(args[j]) if pytree.is_tree(args[j]) else [args[j]])
            if not pytree.is_tree(args[j]) or _is_float(leaf)]


def _vjp_of_transform(fn, primals):
    """`vjp` of a transform (``vjp(grad(f), x)``): its Jacobians by forward mode
    (`compose.jacobians_forward`), contracted with each cotangent."""
    wrt = [k for k, a in enumerate(primals) if _is_float(a)]
    values, jacs, k = compose.jacobians_forward(fn, wrt, primals)
    value = k.pack([compose.as_result(v) for v in values])
    shapes = [np.shape(v) for v in values]

    @api_boundary
    def vjp_fn(ct):
        cts = [ct] if k.n_values == 1 else list(ct)
        if len(cts) != k.n_values:
            raise SignatureError(f"the cotangent has {len(cts)} parts; the value has "
                                 f"{k.n_values}")
        out = [None] * len(primals)
        for n, j in enumerate(wrt):
            g = np.zeros(np.shape(primals[j]))
            for r, (c, shape) in enumerate(zip(cts, shapes)):
                c = np.asarray(c, dtype=np.float64)
                if c.shape != shape:
                    raise SignatureError(f"the cotangent has shape {c.shape}; the value has "
                                         f"{shape}")
                g = g + np.tensordot(c, jacs[r][n], axes=c.ndim)
            out[j] = compose.like(compose.as_result(g), primals[j])
        return tuple(out)

    vjp_fn.jitgrad_rows = True
    return value, vjp_fn


@api_boundary
def jacobian(fn, wrt=0, mode=None, has_aux=False):
    """``jacobian(f, wrt=k)(*args)``: the array of shape ``value.shape + args[k].shape`` (a
    tuple ``wrt`` gives a tuple of Jacobians).

    ``mode="reverse"``: one vector-Jacobian product per entry of the value (as JAX's
    ``jacrev``); ``mode="forward"``: one Jacobian-vector product per entry of the arguments
    (``jacfwd``, `compose.jacobians_forward`). By default the one with fewer products: forward when
    the arguments have fewer entries than the value, as far as the value's size is known from
    the arguments' shapes before running (otherwise reverse). ``has_aux=True``: ``f``
    returns ``(value, aux)`` and the call ``(jacobian, aux)``, as JAX does (reverse mode)."""
    many = isinstance(wrt, (tuple, list))
    if mode not in (None, "forward", "reverse"):
        raise SignatureError(f"mode must be 'forward', 'reverse' or None, got {mode!r}")
    if has_aux and mode == "forward":
        raise SignatureError("has_aux=True takes mode='reverse' (or None) for now")
    if compose.is_transform(fn):
        if has_aux:
            raise UnsupportedError(f"has_aux=True with {fn!r}: a transform takes no aux yet")
        return _jacobian_of_transform(fn, wrt, many)
    v = _vjp_of(fn)
    positions = v.src.wrt_positions(wrt)

    def _forward(args):
        _, jacs, _ = compose.jacobians_forward(fn, positions, args)
        return tuple(jacs[0]) if many else jacs[0][0]

    @api_boundary
    def jac(*args):
        for j in positions:
            if not (_is_float(args[j]) or pytree.is_tree(args[j])):
                raise SignatureError(f"cannot differentiate with respect to argument "
                                     f"{v.param_names[j]!r}: it is not a float or float array")
        args = v.bind(args)
        plain = tuple(_plain(a) for a in args)
        if not has_aux and (mode or v.mode(plain, positions)) == "forward":
            return _forward(args)
        try:
            k = v.kernels(plain, tuple(positions), has_aux)
        except NotReversible:  # it calls a transform: forward mode
            if has_aux:
                raise
            return _forward(args)
        value, saved, aux = v.run_forward(k, plain)
        flat = pipeline.flatten(plain)
        out_shape = np.shape(value)
        leaves = [leaf for j in positions for leaf, t in zip(
            pytree.leaves(args[j]) if pytree.is_tree(args[j]) else [args[j]],
            pytree.leaf_types(k.types[j])) if t.kind == "f"]
        jacs = [np.zeros(out_shape + np.shape(leaf)) for leaf in leaves]
        ct = np.zeros(out_shape)
        for i in np.ndindex(*out_shape):
            ct[i] = 1.0
            gs = k.adjoint(*flat, saved + ((ct if k.result_ndim else 1.0),))
            for J, g in zip(jacs, gs):
                J[i] = g  # (copied before the next row: a gradient may be `ct` itself)
            ct[i] = 0.0
        jacs = k.regroup(jacs)  # a tree argument's Jacobians as its tree
        result = tuple(jacs) if many else jacs[0]
        return (result, aux) if has_aux else result

    jac.__wrapped__ = fn
    jac.jitgrad_transform = "jacobian"
    jac.param_names = list(v.param_names)
    if not many and not has_aux:  # called inside a transformed function: its trace
        jac.jitgrad_trace = lambda types, args: compose.jacobian_trace(fn, positions[0],
                                                                        types, args)
    return jac


def _jacobian_of_transform(fn, wrt, many: bool):
    """`jacobian` of a transform (``jacobian(grad(f))`` is the Hessian): forward mode over its
    trace; a transform returning a tuple gives a tuple of Jacobians."""
    names = compose.param_names(fn)
    positions = compose.resolve_wrt(names, compose.qualname(fn), wrt)

    @api_boundary
    def jac(*args):
        for j in positions:
            if not _is_float(args[j]):
                raise SignatureError(f"cannot differentiate with respect to argument "
                                     f"{names[j]!r}: it is not a float or float array")
        _, jacs, k = compose.jacobians_forward(fn, positions, args)
        per_value = [tuple(compose.as_result(J) for J in row) if many
                     else compose.as_result(row[0]) for row in jacs]
        return k.pack(per_value)

    jac.__wrapped__ = fn
    jac.jitgrad_transform = "jacobian"
    jac.param_names = names
    if not many:  # jacobian(jacobian(f)), or called inside a transformed function
        jac.jitgrad_trace = lambda types, args: compose.jacobian_trace(fn, positions[0],
                                                                        types, args)
    return jac


__all__ = ["jacobian", "vjp"]
