"""Forward mode and second order: `jvp`, `hvp`, `hessian`, and the forward-mode Jacobian.

`jvp(f, primals, tangents)` returns ``(value, tangent)``, as in JAX: the tangent transform
(`transforms/forward.py`) of ``f``'s forward IR, emitted as one kernel and compiled like every gradient
(Numba, cached on disk). `hvp(f, wrt=k)(*args, v)` is the Hessian of the scalar ``f`` with
respect to argument ``k`` times ``v``, by forward over reverse: the tangent transform of the
gradient's own kernels (`reverse.Gradient`: the forward kernel with its tape pushes, then the
adjoint with its pops, its reversed and recomputed loops), run as one kernel whose parameter
``k`` carries the tangent ``v``. The tangent of the gradient is the Hessian-vector product.
`hessian(f, wrt=k)(*args)` is one HVP per entry of argument ``k``.

Kernels are compiled once per call signature (kinds and ranks of the arguments, as Numba
specialises) and per set of seeded arguments. Arguments that are tuples or lists are refused.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jitgrad import pipeline
from jitgrad.core.errors import SignatureError, api_boundary
from jitgrad.core.ir import Block, Eqn, Kernel, format_function
from jitgrad.core.types import type_of_value
from jitgrad.frontend.parse import FunctionSource


@dataclasses.dataclass(eq=False)
class TangentKernel:
    """One compiled forward-mode kernel and its generated source."""

    source: str
    entry: object  # (*args, *tangents of the seeded args) -> tuple (see `_Tangents.compile`)
    path: str
    ir_text: str
    result_ndim: int
    written_params: tuple = ()  # (position, name) of the arguments the function writes into


class _Tangents:
    """A function's forward-mode kernels, per call signature, seeded arguments and kind."""

    def __init__(self, fn):
        self.fn = fn
        self.src = FunctionSource.of(fn)
        self.param_names = [a.arg for a in self.src.node.args.args]
        self._kernels: dict[tuple, TangentKernel] = {}

    def types(self, args) -> tuple:
        if len(args) != len(self.param_names):
            raise SignatureError(f"{self.src.qualname} takes {len(self.param_names)} arguments, "
                                 f"got {len(args)}")
        out = []
        for n, a in zip(self.param_names, args):
            if isinstance(a, (tuple, list)):
                raise SignatureError(f"forward mode does not take tuple or list arguments "
                                     f"({n!r}): pass the items as arguments of their own")
            out.append(type_of_value(a, f"argument {n!r}"))
        return tuple(out)

    def kernel(self, args, seeds: tuple, kind: str) -> TangentKernel:
        types = self.types(args)
        for k in seeds:
            if types[k].kind != "f":
                raise SignatureError(f"cannot differentiate with respect to argument "
                                     f"{self.param_names[k]!r}: it is not a float or a float "
                                     "array")
        key = (types, seeds, kind)
        k = self._kernels.get(key)
        if k is None:
            k = self._kernels[key] = self.compile(types, seeds, kind, args)
        pipeline.refuse_shared_memory(self.src, k.written_params, args, lambda j: self.param_names[j])
        return k

    def compile(self, types, seeds, kind, args) -> TangentKernel:
        fn_ir, _ = pipeline.build_graph(self.src, types, (args,), any_result=kind == "jvp")
        ir_text = format_function(fn_ir)
        names = [self.param_names[k] for k in seeds]
        if kind == "jvp":
            params, body, returns = fn_ir.params, fn_ir.body, [fn_ir.result]
            what = f"tangents of: {', '.join(names)}"
            doc = (f"The value and its tangent (forward mode), given the tangents _d_* of "
                   f"{', '.join(names)}.")
        else:
            params, body, returns = _gradient_kernel(fn_ir, list(seeds))
            what = f"Hessian-vector product with respect to: {', '.join(names)}"
            doc = (f"{'The value, the gradient, and the' if kind != 'hvp' else 'The'} Hessian "
                   f"times the tangents _d_* of {', '.join(names)} (forward over reverse).")
        namer = fn_ir.namer
        new_body, tparams, touts = pipeline.forward(params, body, returns,
                                                    [params[k] for k in seeds], namer)
        # jvp: (value, its tangent); hvp: the gradients' tangents (the HVPs); value_grad_hvp:
        # (value, gradients, HVPs). What is not returned is not computed (Numba drops it).
        outs = {"jvp": list(returns) + touts, "hvp": touts[1:],
                "value_grad_hvp": list(returns) + touts[1:]}[kind]
        kernel = Kernel(f"{fn_ir.name}_{kind}", list(params) + tparams, new_body, outs, fn_ir.loc)
        pipeline.optimise_kernel(kernel)
        signature = ", ".join(f"{n}: {t}" for n, t in zip(self.param_names, types))
        source, _ = pipeline.lower_kernel(kernel, fn_ir, signature, what, doc)
        path, fns = pipeline.load(f"{self.src.fn.__name__}_{kind}", source, [kernel.name])
        r = fn_ir.result
        return TangentKernel(source, fns[kernel.name], path, ir_text, r.type.ndim,
                             tuple(fn_ir.written_params))


def _gradient_kernel(fn_ir, wrt: list[int]):
    """The gradient as one kernel: the reverse transform's forward kernel, the saved values
    handed over by name, then its adjoint kernel. Returns ``(params, body, returns)`` with
    ``returns = [value, *gradients]``."""
    grad = pipeline.reverse(fn_ir, wrt)
    fwd, adj = grad.forward, grad.adjoint
    n = len(fwd.params)
    body = Block(list(fwd.body.stmts))
    for ret, param in zip(fwd.returns[1:], adj.params[n:]):
        if ret is not param:
            body.stmts.append(Eqn("assign", [param], [ret], {}, None))
    body.stmts += adj.body.stmts
    return list(fwd.params), body, [fwd.returns[0]] + list(adj.returns)


_CACHE: dict[object, _Tangents] = {}


def _tangents_of(fn) -> _Tangents:
    t = _CACHE.get(fn)
    if t is None:
        t = _CACHE[fn] = _Tangents(fn)
    return t


def _is_float(a) -> bool:
    return isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray)
                                                    and a.dtype.kind == "f")


def _plain(a):
    return a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a


def _is_zero_tangent(t) -> bool:
    return t is None or (np.ndim(t) == 0 and not isinstance(t, np.ndarray) and t == 0)


def _tangent_arg(t, primal, name: str):
    """A tangent as the kernel takes it: float64 with the primal's shape."""
    t = np.asarray(t, dtype=np.float64)
    if t.shape != np.shape(primal):
        raise SignatureError(f"the tangent of {name!r} has shape {t.shape}; the argument has "
                             f"{np.shape(primal)}")
    return t if t.ndim else float(t)


@api_boundary
def jvp(fn, primals, tangents):
    """``(value, tangent)``: ``fn(*primals)`` and its Jacobian times ``tangents``, as in JAX.

    ``tangents`` has one entry per primal: an array of the primal's shape (a float for a
    float), or ``None`` or ``0`` for an argument that does not move (integer and bool
    arguments take only these). ``fn`` may return a float or an array; the tangent has its
    shape. Forward mode: one compiled pass computes both."""
    t = _tangents_of(fn)
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise SignatureError(f"jvp got {len(primals)} primals and {len(tangents)} tangents")
    seeds = []
    for k, (p, d) in enumerate(zip(primals, tangents)):
        if _is_zero_tangent(d):
            continue
        if not _is_float(p):
            raise SignatureError(f"argument {t.param_names[k]!r} is not a float or a float "
                                 "array: its tangent must be None or 0")
        seeds.append(k)
    args = tuple(_plain(a) for a in primals)
    k = t.kernel(args, tuple(seeds), "jvp")
    ts = [_tangent_arg(tangents[j], primals[j], t.param_names[j]) for j in seeds]
    value, tangent = k.entry(*args, *ts)
    return value, tangent


def jacobian_forward(fn, positions: list[int], args) -> list:
    """The Jacobians of ``fn`` with respect to the arguments at ``positions`` by forward mode:
    one JVP per entry of each argument (what `vjp.jacobian` uses when the arguments are
    smaller than the value)."""
    t = _tangents_of(fn)
    plain = tuple(_plain(a) for a in args)
    k = t.kernel(plain, tuple(positions), "jvp")
    zeros = [np.zeros(np.shape(args[j])) if np.ndim(args[j]) else 0.0 for j in positions]
    jacs = []
    for n, j in enumerate(positions):
        shape = np.shape(args[j])
        cols = None
        basis = np.zeros(shape)
        for i in np.ndindex(*shape):
            basis[i] = 1.0
            ts = list(zeros)
            ts[n] = basis if shape else 1.0
            value, tangent = k.entry(*plain, *ts)
            if cols is None:
                cols = np.zeros(np.shape(value) + shape)
            cols[(...,) + i] = tangent
            basis[i] = 0.0
        jacs.append(cols)
    return jacs


class HVPFunction:
    """``hvp(f, wrt=k)``: called as ``(*args, v)``, the Hessian of ``f`` (a scalar function)
    with respect to argument ``k`` at ``args``, times ``v`` (``v`` has the shape of
    ``args[k]``). With a tuple ``wrt``, ``v`` is a tuple (one entry per argument) and so is
    the product: entry ``a`` is ``sum_j H[a][j] v[j]``. Forward over reverse: about the cost of
    two or three gradients."""

    jitgrad_transform = "hvp"  # what `parse` refuses to read as a plain function

    @api_boundary
    def __init__(self, fn, wrt=0):
        self.t = _tangents_of(fn)
        self.wrt_tuple = isinstance(wrt, (tuple, list))
        self.positions = self.t.src.wrt_positions(wrt)
        self.wrt = self.positions[0]
        self.fn = fn

    def kernel(self, args, kind: str = "hvp") -> TangentKernel:
        return self.t.kernel(tuple(_plain(a) for a in args), tuple(self.positions), kind)

    def _tangents(self, args, v) -> list:
        """The tangent arguments for ``v`` (one per position in ``wrt``)."""
        if not self.wrt_tuple:
            v = (v,)
        elif not isinstance(v, (tuple, list)) or len(v) != len(self.positions):
            raise SignatureError(f"wrt is a tuple of {len(self.positions)} arguments, so v must "
                                 f"be a tuple of {len(self.positions)} (one per argument)")
        return [_tangent_arg(d, args[k], self.t.param_names[k])
                for d, k in zip(v, self.positions)]

    def _shaped(self, parts, args):
        out = tuple(_like(h, args[k]) for h, k in zip(parts, self.positions))
        return out if self.wrt_tuple else out[0]

    @api_boundary
    def value_grad_hvp(self, *args):
        """``(value, gradient, Hessian times v)`` from one compiled call (a kernel of its
        own); the last argument is ``v``."""
        *args, v = args
        k = self.kernel(args, "value_grad_hvp")
        n = len(self.positions)
        out = k.entry(*(_plain(a) for a in args), *self._tangents(args, v))
        return out[0], self._shaped(out[1:1 + n], args), self._shaped(out[1 + n:], args)

    @api_boundary
    def __call__(self, *args):
        *args, v = args
        k = self.kernel(args)
        return self._shaped(k.entry(*(_plain(a) for a in args), *self._tangents(args, v)), args)

    @api_boundary
    def source(self, *args) -> str:
        """The generated kernel for these example arguments (``v`` last)."""
        return self.kernel(args[:-1]).source

    def __repr__(self) -> str:
        names = ", ".join(self.t.param_names[k] for k in self.positions)
        return f"<jitgrad.hvp of {self.t.src.qualname} wrt {names}>"


def _like(g, x):
    if isinstance(x, np.ndarray):
        return np.asarray(g, dtype=x.dtype) if x.ndim == 0 or x.dtype != np.float64 else g
    return g


@api_boundary
def hvp(fn, wrt=0) -> HVPFunction:
    """The Hessian-vector product of a scalar function: ``hvp(f, wrt=k)(*args, v)`` (see
    `HVPFunction`). ``scipy.optimize.minimize(..., hessp=lambda x, p: h(x, data, p))``."""
    return HVPFunction(fn, wrt)


@api_boundary
def hessian(fn, wrt=0):
    """``hessian(f, wrt=k)(*args)``: the Hessian of the scalar ``f`` with respect to argument
    ``k``, of shape ``args[k].shape * 2`` (a float for a float argument): one Hessian-vector
    product per entry of ``args[k]``, all from one compiled kernel. With a tuple ``wrt`` the
    blocks, as JAX gives them: ``H[a][b]`` of shape ``args[a].shape + args[b].shape``."""
    h = HVPFunction(fn, wrt)

    @api_boundary
    def hess(*args):
        k = h.kernel(args)
        plain = tuple(_plain(a) for a in args)
        xs = [args[p] for p in h.positions]
        zeros = [np.zeros(np.shape(x)) if np.ndim(x) else 0.0 for x in xs]
        blocks = [[np.zeros(np.shape(xa) + np.shape(xb)) for xb in xs] for xa in xs]
        for b, xb in enumerate(xs):
            shape = np.shape(xb)
            basis = np.zeros(shape)
            for i in np.ndindex(*shape):
                basis[i] = 1.0
                ts = list(zeros)
                ts[b] = basis if shape else 1.0
                column = k.entry(*plain, *ts)  # H[a][b] e_i for every a
                for a in range(len(xs)):
                    blocks[a][b][(...,) + i] = column[a]
                basis[i] = 0.0
        blocks = [[float(blk) if blk.ndim == 0 else blk for blk in row] for row in blocks]
        if not h.wrt_tuple:
            return blocks[0][0]
        return tuple(tuple(row) for row in blocks)

    hess.__wrapped__ = fn
    hess.jitgrad_transform = "hessian"
    return hess


__all__ = ["hessian", "hvp", "jacobian_forward", "jvp"]
