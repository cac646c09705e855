"""`vmap(f, in_axes=0, out_axes=0)`: ``f`` mapped over a batch axis, as JAX's ``vmap``, by a
compiled loop around ``f``'s compiled code (`backend.numba.batch`), ``numba.prange`` with
``parallel=True``; never a Python loop around the user's code. The one exception is a function
jitgrad made that runs compiled code itself (``jitgrad_rows``: the ``vjp_fn`` of `jitgrad.vjp`,
the Cookbook's ``vmap(vjp_fun)(M)``): called once per row, the rows' results stacked.

``f`` is a plain function (compiled with ``numba.njit``, `pipeline.compile_plain`) or a `jitgrad.grad` /
`jitgrad.value_and_grad` result (its compiled entry): ``vmap(grad(loss), in_axes=(None, 0,
0))(w, X, Y)`` is the per-example gradient. ``in_axes`` is an int, None, or one int or None
per argument; a batched argument is an array whose axis ``in_axes[k]`` is the batch (all of
the same size); an unbatched one may be anything ``f`` takes (a dict of parameters too).
``out_axes`` puts the batch axis of every result leaf there. A result tree (a tuple of
gradients, a dict of them) comes back with each leaf stacked.

The first row is called from Python once, to learn the result's structure and shapes (and to
compile ``f``); the loop then runs every row. Results are float64 (a float32 argument's
gradients too). What cannot be mapped is refused: a batched tree argument, rows whose results
change shape, a transform other than grad and value_and_grad.
"""

from __future__ import annotations

import functools
import inspect
import re

import numpy as np

from jitgrad import compose, pipeline
from jitgrad.api import GradFunction
from jitgrad.core import pytree
from jitgrad.core.errors import SignatureError, UnsupportedError, api_boundary, instead
from jitgrad.core.settings import Settings
from jitgrad.frontend import draws


def _paths(structure, prefix: str = "") -> list[str]:
    """How to reach each leaf of a result (`pytree.structure` of tuples): ``[1][0]``."""
    if structure is pytree.LEAF:
        return [prefix]
    return [p for j, item in enumerate(structure.items) for p in _paths(item, f"{prefix}[{j}]")]


class VmapFunction:
    """``vmap(f, in_axes, out_axes)`` (see the module's docstring)."""

    jitgrad_transform = "vmap"

    @api_boundary
    def __init__(self, fn, in_axes=0, out_axes=0, parallel: bool = False):
        if not callable(fn):
            raise TypeError(f"jitgrad.vmap needs a function, got {type(fn).__name__}")
        if compose.is_transform(fn) and not isinstance(fn, GradFunction):
            raise UnsupportedError(f"jitgrad.vmap maps plain functions and the results of "
                                   f"jitgrad.grad and value_and_grad; {fn!r} is neither")
        if not (isinstance(out_axes, int) and not isinstance(out_axes, bool)):
            raise SignatureError(f"out_axes is an int (one axis for every result), got "
                                 f"{out_axes!r}")
        self.fn = fn
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.parallel = bool(parallel)
        self.rows = getattr(fn, "jitgrad_rows", False) is True  # jitgrad's vjp_fn: per row
        self.param_names = list(inspect.signature(fn).parameters) if self.rows else \
            compose.param_names(fn)
        self.__wrapped__ = fn

    def _axes(self, args) -> list:
        axes = self.in_axes
        if not isinstance(axes, (tuple, list)):
            axes = [axes] * len(args)
        if len(axes) != len(args):
            raise SignatureError(f"in_axes has {len(axes)} entries for {len(args)} arguments")
        out = []
        for name, ax, a in zip(self.param_names, axes, args):
            if ax is None:
                out.append(None)
                continue
            if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)):
                raise SignatureError(f"in_axes entries are ints or None, got {ax!r}")
            if not isinstance(a, np.ndarray) or a.ndim == 0:
                what = "a tree" if pytree.is_tree(a) else type(a).__name__
                raise SignatureError(f"argument {name!r} is mapped over axis {ax}, but it is "
                                     f"{what}: a mapped argument is an array (pass None in "
                                     "in_axes for an argument shared by every row)")
            if a.dtype.kind == "c":
                raise SignatureError(f"argument {name!r} is a complex array mapped over axis "
                                     f"{ax}: vmap maps real arrays (map its real and imaginary "
                                     "parts as two arguments and write re + 1j * im inside)")
            if not -a.ndim <= ax < a.ndim:
                raise SignatureError(f"in_axes {ax} is out of range for argument {name!r} of "
                                     f"rank {a.ndim}")
            out.append(int(ax) % a.ndim)
        if all(ax is None for ax in out):
            raise SignatureError("in_axes maps no argument: give at least one an axis")
        return out

    @api_boundary
    def __call__(self, *args):
        if len(args) != len(self.param_names):
            raise SignatureError(f"{compose.qualname(self.fn)} takes {len(self.param_names)} "
                                 f"arguments, got {len(args)}")
        axes = self._axes(args)
        rows = [a if ax is None else a if ax == 0 else np.ascontiguousarray(np.moveaxis(a, ax, 0))
                for a, ax in zip(args, axes)]  # (contiguous rows: Numba's np.dot wants them)
        sizes = {name: r.shape[0] for name, r, ax in zip(self.param_names, rows, axes)
                 if ax is not None}
        if len(set(sizes.values())) != 1:
            raise SignatureError(f"the mapped axes differ in size: {sizes}")
        n = next(iter(sizes.values()))
        if n == 0:
            raise SignatureError("the mapped axis is empty: vmap needs at least one row")
        if self.rows:
            return self._call_per_row(rows, axes, n)
        first = [r[0] if ax is not None else r for r, ax in zip(rows, axes)]
        entry, flat_first, post = self._entry(first)
        # the arguments as the entry takes them: a tree's leaves in its place, float64
        flat_rows, batched = [], []
        for r, ax in zip(rows, axes):
            if ax is None:
                leaves = pytree.leaves(r) if pytree.is_tree(r) else [r]
                flat_rows += leaves
            else:
                batched.append(len(flat_rows))
                flat_rows.append(r)
        flat_rows = [_entry_arg(a, f) for a, f in zip(flat_rows, flat_first)]
        try:
            result = entry(*flat_first)
        except Exception as e:
            if post is not None or isinstance(self.fn, GradFunction) or \
                    not pipeline.backend_of(Settings()).is_compile_error(e):
                raise
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # (Numba's colours)
            first_line = next((ln.strip().rstrip(".") for ln in text.splitlines()
                               if ln.strip() and not ln.startswith("Failed in")),
                              type(e).__name__)
            raise UnsupportedError(
                f"jitgrad.vmap compiles a plain function with numba.njit, which could not "
                f"compile {compose.qualname(self.fn)}: {first_line}. Map a function Numba "
                "compiles (no jitgrad transform or closure over a row inside it), or call "
                "vmap inside a function jitgrad differentiates, where it is a loop") from None
        structure = pytree.structure(result, lambda v: not isinstance(v, tuple))
        leaves = pytree.leaves(result) if structure is not pytree.LEAF else [result]
        outs = [np.empty((n,) + np.shape(v), dtype=np.asarray(v).dtype) for v in leaves]
        loop = pipeline.batch_loop(entry, len(flat_rows), tuple(batched),
                                   tuple(_paths(structure)),
                                   Settings(parallel=self.parallel))
        try:
            loop(*flat_rows, *outs)
        except ValueError as e:
            raise SignatureError(f"a row's result does not have the first row's shape ({e})") \
                from None
        stacked = pytree.unflatten(structure, outs) if structure is not pytree.LEAF else outs[0]
        value = post(stacked) if post else stacked
        if self.out_axes:
            value = _tree_map(lambda o: np.moveaxis(o, 0, self.out_axes), value)
        return value

    def _call_per_row(self, rows, axes, n):
        """``fn`` (compiled code of jitgrad's, `rows`) called for each row: its results, a
        value or a tuple of them (None entries kept), stacked along ``out_axes``."""
        results = [self.fn(*(r[i] if ax is not None else r for r, ax in zip(rows, axes)))
                   for i in range(n)]

        def stacked(values):
            if all(v is None for v in values):
                return None
            return np.moveaxis(np.stack(values), 0, self.out_axes)
        if isinstance(results[0], tuple):
            return tuple(stacked([r[j] for r in results]) for j in range(len(results[0])))
        return stacked(results)

    def _entry(self, first):
        """The compiled entry for one row, that row's arguments as it takes them, and what
        turns its (stacked) result into the caller's (a gradient tree's structure)."""
        if isinstance(self.fn, GradFunction):
            return self.fn.compiled_call(first)
        if any(pytree.is_tree(a) for a in first):
            raise UnsupportedError("vmap of a plain function takes arrays and numbers; map "
                                   "jitgrad.grad(f) to pass trees")
        if isinstance(self.fn, functools.partial):  # (Numba compiles the function as it is)
            raise UnsupportedError(f"vmap of {self.fn!r}: Numba compiles a plain function, not "
                                   "a partial; map a def that calls it (`def g(w, x): return "
                                   "f(w, x, scale=3.0)`), or jitgrad.grad of the partial")
        found = draws.random_call_in(self.fn)
        if found:  # Numba's np.random draws from a generator of its own, not NumPy's
            raise UnsupportedError(
                f"vmap of {compose.qualname(self.fn)}, which calls np.random ({found}): the "
                "compiled loop would draw from Numba's generator, not NumPy's, so the values "
                f"would differ from NumPy's; {instead('draws elsewhere')}")
        return pipeline.compile_plain(self.fn), list(first), None

    def __repr__(self) -> str:
        return f"<jitgrad.vmap of {compose.qualname(self.fn)} in_axes={self.in_axes!r}>"


def _entry_arg(batched, row):
    """A batched argument as the entry takes its rows: float64 when the row is (a 0-d row
    is a float already)."""
    if isinstance(batched, np.ndarray) and isinstance(row, float) and batched.dtype != np.float64:
        return batched.astype(np.float64)
    if isinstance(batched, np.ndarray) and isinstance(row, np.ndarray) and row.dtype != batched.dtype:
        return batched.astype(row.dtype)
    return batched


def _tree_map(f, tree):
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {k: _tree_map(f, v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_tree_map(f, v) for v in tree)
    return f(tree)


@api_boundary
def vmap(fn, in_axes=0, out_axes=0, *, parallel=False):
    """``fn`` mapped over axis ``in_axes`` of its arguments, as JAX's ``vmap``: a compiled
    loop (``numba.prange`` with ``parallel=True``). See `VmapFunction`."""
    return VmapFunction(fn, in_axes, out_axes, parallel)


__all__ = ["VmapFunction", "vmap"]
