"""Forward mode and second order: `jvp`, `hvp`, `hessian`.

`jvp(f, primals, tangents)` returns ``(value, tangent)``, as in JAX: the tangent transform
(`transforms/forward.py`) of ``f``'s forward IR, emitted as one kernel and compiled like every gradient
(Numba, cached on disk). `hvp(f, wrt=k)(*args, v)` is the Hessian of the scalar ``f`` with
respect to argument ``k`` times ``v``, by forward over reverse: the tangent transform of the
gradient's own kernels (`reverse.Gradient`: the forward kernel with its tape pushes, then the
adjoint with its pops, its reversed and recomputed loops), run as one kernel whose parameter
``k`` carries the tangent ``v``. The tangent of the gradient is the Hessian-vector product.
`hessian(f, wrt=k)(*args)` is one HVP per entry of argument ``k``.

The kernels are `compose.ForwardKernels` (which also serve the forward-mode Jacobian and
the derivatives of transforms), compiled once per call signature (kinds and ranks of the
arguments, as Numba specialises) and per set of seeded leaves. Each takes tree arguments: `jvp`
a tangent tree of the primal's structure, `hvp` a ``v`` of the argument's structure, and
`hessian` gives nested blocks as JAX does.
"""

from __future__ import annotations

import numpy as np

from jitgrad.compose import (
    TangentKernel,
    bind_arguments,
    forward_kernels,
    is_float,
    like,
    plain,
    qualname,
    seed_positions,
)
from jitgrad.core import pytree
from jitgrad.core.errors import SignatureError, api_boundary
from jitgrad.core.types import SeqType
from jitgrad.frontend.parse import resolve_wrt, signature_of


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
    t = forward_kernels(fn)
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise SignatureError(f"jvp got {len(primals)} primals and {len(tangents)} tangents")
    if len(primals) < len(t.param_names):  # defaults filled in, as a call binds them: fixed
        full = bind_arguments(signature_of(fn), t.param_names, t.qualname, primals)
        primals, tangents = full, tangents + (None,) * (len(full) - len(primals))
    # one entry per leaf: a tree primal's tangent is a tree of the same structure (or None)
    flat_p, flat_t, names = [], [], []
    for k, (p, d) in enumerate(zip(primals, tangents)):
        name = t.param_names[k]
        if pytree.is_tree(p):
            leaves = pytree.leaves(p)
            paths = pytree.leaf_paths(pytree.type_of_tree(p, f"argument {name!r}"), name)
            if _is_zero_tangent(d):
                d = [None] * len(leaves)
            else:
                d = pytree.leaves_like(d, p, f"the tangent of {name!r}")
            flat_p += leaves
            flat_t += d
            names += paths
        else:
            flat_p.append(p)
            flat_t.append(d)
            names.append(name)
    seeds = []
    for k, (p, d) in enumerate(zip(flat_p, flat_t)):
        if _is_zero_tangent(d):
            continue
        if not is_float(p):
            raise SignatureError(f"argument {names[k]!r} is not a float or a float "
                                 "array: its tangent must be None or 0")
        seeds.append(k)
    args = tuple(plain(a) for a in primals)
    k = t.kernel(args, tuple(seeds), "jvp")
    ts = [_tangent_arg(flat_t[j], flat_p[j], names[j]) for j in seeds]
    out = k.entry(*(plain(a) for a in flat_p), *ts)
    return k.pack(out[:k.n_values]), k.pack(out[k.n_values:])



class HVPFunction:
    """``hvp(f, wrt=k)``: called as ``(*args, v)``, the Hessian of ``f`` (a scalar function)
    with respect to argument ``k`` at ``args``, times ``v`` (``v`` has the shape of
    ``args[k]``; for a tree argument, ``v`` is a tree of its structure). With a tuple ``wrt``,
    ``v`` is a tuple (one entry per argument) and so is the product: entry ``a`` is ``sum_j
    H[a][j] v[j]``. Forward over reverse: about the cost of two or three gradients."""

    jitgrad_transform = "hvp"  # what `parse` refuses to read as a plain function

    @api_boundary
    def __init__(self, fn, wrt=0):
        self.t = forward_kernels(fn)
        self.wrt_tuple = isinstance(wrt, (tuple, list))
        self.positions = resolve_wrt(self.t.param_names, qualname(fn), wrt)
        self.wrt = self.positions[0]
        self.fn = fn

    def kernel(self, args, kind: str = "hvp") -> TangentKernel:
        args = tuple(plain(a) for a in args)
        return self.t.kernel(args, self.seeds(args), kind)

    def seeds(self, args) -> tuple:
        """The flat positions differentiated (`compose.seed_positions`)."""
        return seed_positions(self.t.types(args), self.positions)

    def _tangents(self, args, v) -> list:
        """The tangent arguments for ``v`` (one per seed: `seeds`)."""
        if not self.wrt_tuple:
            v = (v,)
        elif not isinstance(v, (tuple, list)) or len(v) != len(self.positions):
            raise SignatureError(f"wrt is a tuple of {len(self.positions)} arguments, so v must "
                                 f"be a tuple of {len(self.positions)} (one per argument)")
        out = []
        for d, k in zip(v, self.positions):
            name = self.t.param_names[k]
            if not pytree.is_tree(args[k]):
                out.append(_tangent_arg(d, args[k], name))
                continue
            t = pytree.type_of_tree(args[k], f"argument {name!r}")
            leaves = pytree.leaves(args[k])
            ds = pytree.leaves_like(d, args[k], f"v for {name!r}")
            out += [_tangent_arg(dj, leaf, path) for dj, leaf, path, u in zip(
                ds, leaves, pytree.leaf_paths(t, name), pytree.leaf_types(t)) if u.kind == "f"]
        return out

    def _shaped(self, parts, args):
        """One result per seed, as the caller's: per argument at ``wrt``, in its dtype, a tree
        argument's as its tree (None at integer and bool leaves)."""
        types = self.t.types(tuple(plain(a) for a in args))
        flat = iter(parts)
        out = []
        for k in self.positions:
            if isinstance(types[k], SeqType):
                leaves = iter(pytree.leaves(args[k]))
                out.append(pytree.unflatten(types[k], [
                    like(next(flat), leaf) if u.kind == "f" else None
                    for u, leaf in zip(pytree.leaf_types(types[k]), leaves)]))
            else:
                out.append(like(next(flat), args[k]))
        return tuple(out) if self.wrt_tuple else out[0]

    def bound(self, args) -> tuple:
        """The arguments with defaults filled in, as a call of the function binds them."""
        if len(args) == len(self.t.param_names):
            return tuple(args)
        return bind_arguments(signature_of(self.fn), self.t.param_names, self.t.qualname,
                              args)

    @api_boundary
    def value_grad_hvp(self, *args):
        """``(value, gradient, Hessian times v)`` from one compiled call (a kernel of its
        own); the last argument is ``v``."""
        *args, v = args
        args = self.bound(args)
        k = self.kernel(args, "value_grad_hvp")
        n = len(self.seeds(tuple(plain(a) for a in args)))
        out = k.entry(*flat_leaves(args), *self._tangents(args, v))
        return out[0], self._shaped(out[1:1 + n], args), self._shaped(out[1 + n:], args)

    @api_boundary
    def __call__(self, *args):
        *args, v = args
        args = self.bound(args)
        k = self.kernel(args)
        out = k.entry(*flat_leaves(args), *self._tangents(args, v))
        return self._shaped(out if isinstance(out, tuple) else (out,), args)

    @api_boundary
    def source(self, *args) -> str:
        """The generated kernel for these example arguments (``v`` last)."""
        return self.kernel(args[:-1]).source

    def __repr__(self) -> str:
        names = ", ".join(self.t.param_names[k] for k in self.positions)
        return f"<jitgrad.hvp of {self.t.src.qualname} wrt {names}>"


@api_boundary
def hvp(fn, wrt=0) -> HVPFunction:
    """The Hessian-vector product of a scalar function: ``hvp(f, wrt=k)(*args, v)`` (see
    `HVPFunction`). ``scipy.optimize.minimize(..., hessp=lambda x, p: h(x, data, p))``."""
    return HVPFunction(fn, wrt)


def flat_leaves(args) -> list:
    """The arguments as the generated code takes them: a tree's leaves in its place, 0-d
    arrays as floats (strings and None have no leaves)."""
    return [plain(a) for a in pytree.leaves(tuple(args))]


@api_boundary
def hessian(fn, wrt=0):
    """``hessian(f, wrt=k)(*args)``: the Hessian of the scalar ``f`` with respect to argument
    ``k``, of shape ``args[k].shape * 2`` (a float for a float argument): one Hessian-vector
    product per entry of ``args[k]``, all from one compiled kernel. With a tuple ``wrt`` the
    blocks, as JAX gives them: ``H[a][b]`` of shape ``args[a].shape + args[b].shape``. A tree
    argument (a dict of parameters) gives JAX's nested blocks: ``H['W']['b']`` of shape
    ``W.shape + b.shape`` (None where a leaf is an integer or a bool)."""
    h = HVPFunction(fn, wrt)

    @api_boundary
    def hess(*args):
        args = h.bound(args)
        k = h.kernel(args)
        flat_args = flat_leaves(args)
        seeds = h.seeds(tuple(plain(a) for a in args))
        xs = [flat_args[s] for s in seeds]  # the differentiated leaves
        zeros = [np.zeros(np.shape(x)) if np.ndim(x) else 0.0 for x in xs]
        blocks = [[np.zeros(np.shape(xa) + np.shape(xb)) for xb in xs] for xa in xs]
        for b, xb in enumerate(xs):
            shape = np.shape(xb)
            basis = np.zeros(shape)
            for i in np.ndindex(*shape):
                basis[i] = 1.0
                ts = list(zeros)
                ts[b] = basis if shape else 1.0
                column = k.entry(*flat_args, *ts)  # H[a][b] e_i for every a
                column = column if isinstance(column, tuple) else (column,)
                for a in range(len(xs)):
                    blocks[a][b][(...,) + i] = column[a]
                basis[i] = 0.0
        rows = [[float(blk) if blk.ndim == 0 else blk for blk in row] for row in blocks]
        # back to the arguments' structure: H[a][b] for the arguments at wrt, each a tree of
        # trees where an argument is a tree
        outer = h._shaped(list(range(len(xs))), args)  # the seed index at each leaf
        outer = outer if h.wrt_tuple else (outer,)

        def block_row(a_index):
            inner = h._shaped([rows[a_index][b] for b in range(len(xs))], args)
            return inner

        def nest(tree):
            if isinstance(tree, dict):
                return {key: nest(v) for key, v in tree.items()}
            if isinstance(tree, (tuple, list)):
                return type(tree)(nest(v) for v in tree)
            return None if tree is None else block_row(int(tree))

        result = tuple(nest(o) for o in outer)
        return result if h.wrt_tuple else result[0]

    hess.__wrapped__ = fn
    hess.jitgrad_transform = "hessian"
    hess.param_names = list(h.t.param_names)
    return hess


__all__ = ["hessian", "hvp", "jvp"]
