"""Random programs that write into arrays, and a checker that holds jitgrad to plain Python.

Takes a seed (an int) and writes one small module of source text: an entry ``f`` over float64
1-D/2-D arrays (sizes 3, 4, 3x4) and float scalars that returns a float, plus helper functions
that write into their array arguments (with or without returning them, or returning nothing:
the Numba output-argument idiom). The grammar mixes allocation (``np.zeros``, ``zeros_like``,
``.copy()``, arithmetic), aliasing (``a = b``), views (basic slices, ``A[1]``, ``A[:, 0]``,
``.T``, ``reshape``), element and slice writes, whole-array in-place updates, reads (``np.sum``,
``np.max``, ``np.mean``, ``np.outer``, ``@``, ``np.sin``...), ``for`` loops with writes and
carried values, ``if`` on scalar conditions, early ``return`` inside loops, and helper calls.

Indices come in every sign: constants (``x[-1]``, ``A[-2, 1]``), computed at run time in loops
(``i - 4``, ``(k % 3) - 3``, ``-1 - j``, ``np.argmax(v) - 4``), and integer index arrays with
negative and repeated entries, read through (``x[ix]``, ``A[ix]``, ``x[[-1, 0, 2, 0]]``): module
constants (``IX0 = np.array([-1, 0, 2, 0])``), ``np.arange`` arithmetic, or built from data
(``np.int64(np.floor(np.tanh(e) * 2.5))``, ``.astype(np.int64)``, ``np.argsort(e)``, ``% n -
n``). Powers: at exponent 0 (``np.power(b, 0.0)``, ``b ** 0``), integer exponents of negative
bases (``b ** 3``, ``np.power(b, 2)``), with the base clipped at 0 by ``np.maximum(b, 0.0)``
so that powers at 0 depend on the input, and square roots of positive bases only. Helpers
write into their caller's arrays inside ``for`` loops and inside ``if`` branches in those
loops (``clip(p, s)``: ``s[t] = p[0] * 3.0; if s[t] < 0.0: s[t] = 0.0``), in nested loops with
a branch (``grid(M, v)``), one step per iteration of the caller's loop (``step(s, p, k)``),
through negative indices (``back(u, w)``), and return from inside a loop (``first(u)``).

Constructs real code found bugs in (issue 42; an ocean model's kernels, a Kalman filter,
rigid-body code): loops over literal tuples (``for kr in (0, 1):``, ``(0, 1, 2)``, ``(-1, 0,
1)``, floats; the tuple bound to a name in the function or at module level; ``zip`` and
``enumerate`` of tuples, tuples of pairs), nested in range loops and in each other, whose
bodies ``continue`` or ``break`` under conditions on the tuple variable, on the enclosing
index (``k == 0 and kr == 0``, ``k + kr - 1 < 0``) or on data (``v[k + kr - 1] > 0.0``), with
the tuple variable in index arithmetic (``k + kr - 1``, ``i + ip``) and in values, and sums
and writes after the jump: `st_tuple_loop` (any statements in the body) and `st_stencil`
(the kernel's shape: a sum reset per ``k``, tuple loops accumulating products at offset
indices, the sum written at ``k``). Conditional expressions nested in both branches,
``(a if c else b) if d else (e if g else h)``, conditions known only at run time (`ifexp`).
Literals met by float arrays (`st_literal`): integer matrices (``H = np.array([[1, 0, 0, 0],
[0, 1, 0, 0]])``, also inline and at module level) in ``H @ x``, ``np.dot(H, x)``, ``z @ H``;
``np.array([[1, 0, 0], [1, 0, 0]], float)`` (the dtype positional, or ``np.float64``,
``dtype=float``) then written with floats; ``np.cross([0, 0, 1], h)`` of a list or tuple
literal (`cross`). ``np.einsum`` in the sublist form, ``np.einsum(M, (0, 1), (1, 0))``,
``np.einsum(M, [0, 1], v, [1], [0])``, to a scalar with ``[]`` (`einsum`).

Guarantees, for a seed:

* the same source text on every run and machine (``random.Random(seed)`` only, no set or dict
  ordering, no time);
* the program runs as plain Python on the inputs of `inputs` (shapes are tracked while
  generating, values are kept bounded: ``sin``/``tanh``/``square``, division by ``1 + v*v``);
  a program for which it does not is classed ``GENBUG`` (a bug in this file, not in jitgrad).

`check` runs one program and classes it: ``ok``; ``refused`` (a `JitgradError` raised while
building: the message's first line is kept); ``WRONG refusal`` (a refusal no generated program
deserves, `WRONG_REFUSALS`: "writing floats into an integer array", the grammar writes floats
only into float arrays); ``WRONG value``; ``WRONG grad`` (against central differences,
`fd.numeric_grad`); ``WRONG tape`` (jitgrad matches the differences, the tape does not);
``MODIFIED`` (the caller's array changed); ``CRASH`` (any other exception, or a failure inside
the generated code, which jitgrad wraps as "error in the generated gradient code"; with
``--jit``, Numba failing to compile it).

Command line (``JITGRAD_DISABLE_JIT=1`` is set unless ``--jit``)::

    python tests/fuzz_gen.py --seeds 0:5000 [--jit] [--show N] [--jobs 2] [--json out.json]
    python tests/fuzz_gen.py --seed 17 --print        # the source of one program
    python tests/fuzz_gen.py --seed 17                # check one program, with details
    python tests/fuzz_gen.py --random 500             # fresh seeds, each printed
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import random
import re
import sys
import tempfile
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# The entry's possible arguments, in signature order: name -> shape (() is a Python float).
ARGS = (("x", (4,)), ("y", (3,)), ("A", (3, 4)), ("s", ()))
LITERALS = ("0.5", "1.5", "-0.7", "2.0", "0.25", "-1.2")
MAX_DEPTH = 2  # nesting of loops and branches

# ============================================================================= the generator


class Scope:
    """What a block may use: arrays (name -> shape, contiguous?), scalars, loop variables, and
    integer index arrays (name -> (length, bound): every entry is in ``[-bound, bound - 1]``, so
    it indexes any axis at least ``bound`` long, negative entries counting from the end)."""

    def __init__(self, arrays=None, contig=None, scalars=None, loops=None, ints=None,
                 ivars=None, fixed=None, mats=None):
        self.arrays: dict[str, tuple] = dict(arrays or {})
        self.contig: dict[str, bool] = dict(contig or {})
        self.scalars: list[str] = list(scalars or [])
        self.loops: list[tuple[str, int]] = list(loops or [])  # (name, trip count)
        self.ints: dict[str, tuple[int, int]] = dict(ints or {})
        # integer loop variables (range and literal-tuple loops): name -> (lowest, highest)
        self.ivars: dict[str, tuple[int, int]] = dict(ivars or {})
        self.fixed: list[str] = list(fixed or [])  # float loop variables: read, never assigned
        self.mats: dict[str, tuple] = dict(mats or {})  # integer matrix literals: name -> shape

    def child(self) -> Scope:
        return Scope(self.arrays, self.contig, self.scalars, self.loops, self.ints, self.ivars,
                     self.fixed, self.mats)

    def index_arrays(self, length: int) -> list[str]:
        """Integer arrays whose every entry indexes an axis of ``length``."""
        return [n for n, (_, bound) in self.ints.items() if bound <= length]

    def names(self, shape=None) -> list[str]:
        return [n for n, s in self.arrays.items() if shape is None or s == shape]


class Gen:
    """State of one program being generated: random source, lines, fresh names, helpers."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.lines: list[str] = []
        self.helpers: list[str] = []
        self.constants: list[str] = []  # module-level lines (integer index arrays)
        self.count = collections.Counter()
        self.depth = 0

    def fresh(self, prefix: str) -> str:
        self.count[prefix] += 1
        return f"{prefix}{self.count[prefix] - 1}"

    def emit(self, text: str) -> None:
        self.lines.append("    " * (self.depth + 1) + text)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]


def shape_text(shape: tuple) -> str:
    return str(shape[0]) if len(shape) == 1 else f"({shape[0]}, {shape[1]})"


# ----------------------------------------------------------------------------- indices


def index_for(g: Gen, sc: Scope, length: int) -> str:
    """An index into an axis of ``length``: a literal of either sign, one computed from a loop
    variable (``k % n``, ``k - n``, ``(k % n) - n``, ``n - 1 - k``), an entry of an integer
    index array, or ``np.argmax(v) - n`` of data."""
    if sc.loops and g.chance(0.7):
        k, n = g.pick(sc.loops)
        forms = [f"{k} % {length}", f"({k} + 1) % {length}", f"({k} % {length}) - {length}"]
        if n <= length:
            forms += [k, f"{length - 1} - {k}", f"{k} - {length}", f"-1 - {k}"]
        ints = sc.index_arrays(length)
        if ints and g.chance(0.3):
            ix = g.pick(ints)
            return f"{ix}[{k} % {sc.ints[ix][0]}]"
        return g.pick(forms)
    ints = sc.index_arrays(length)
    if ints and g.chance(0.1):
        ix = g.pick(ints)
        return f"{ix}[{g.r.randrange(-sc.ints[ix][0], sc.ints[ix][0])}]"
    same = sc.names((length,))
    if same and g.chance(0.08):
        return f"np.{g.pick(['argmax', 'argmin'])}({g.pick(same)}) - {length}"
    return g.pick([str(g.r.randrange(length)), "-1", str(-g.r.randrange(1, length + 1))])


# ----------------------------------------------------------------------------- scalar expressions


def scalar_leaf(g: Gen, sc: Scope) -> str:
    forms = ["lit", "elem"]
    if sc.scalars or sc.fixed:
        forms += ["var", "var"]
    kind = g.pick(forms)
    if kind == "lit":
        return g.pick(LITERALS)
    if kind == "var":
        return g.pick(sc.scalars + sc.fixed)
    v = g.pick(sc.names())
    shape = sc.arrays[v]
    if len(shape) == 1:
        return f"{v}[{index_for(g, sc, shape[0])}]"
    return f"{v}[{index_for(g, sc, shape[0])}, {index_for(g, sc, shape[1])}]"


def scalar_expr(g: Gen, sc: Scope, depth: int = 2) -> str:
    """A float expression: leaves, reductions of arrays, dots, sin/tanh, bounded division."""
    if depth <= 0 or g.chance(0.3):
        return scalar_leaf(g, sc)
    if g.chance(0.07):  # issue 42's families
        if g.chance(0.6):
            return ifexp(g, sc, lambda: scalar_expr(g, sc, depth - 1))
        return einsum(g, sc, (), depth - 1)
    kind = g.pick(["sum", "mean", "max", "mean0", "dot", "unary", "binop", "div", "sumouter",
                   "power"])
    shape = g.pick([(4,), (3,), (3, 4)])
    if kind == "power":
        return power(g, scalar_leaf(g, sc), scalar=True)
    if kind == "sum":
        return f"np.sum({array_expr(g, sc, shape, depth - 1)})"
    if kind == "mean":
        return f"np.mean({array_expr(g, sc, shape, depth - 1)})"
    if kind == "max":
        return f"np.max({array_expr(g, sc, shape, depth - 1)})"
    if kind == "mean0":  # a reduction with axis= of a 1-D array is a scalar (issue #10, g6)
        return f"np.mean({array_expr(g, sc, (shape[-1],), depth - 1)}, axis=0)"
    if kind == "dot":
        n = shape[-1]
        return f"({array_expr(g, sc, (n,), depth - 1)} @ {array_expr(g, sc, (n,), depth - 1)})"
    if kind == "sumouter":
        return (f"np.sum(np.outer({array_expr(g, sc, (3,), depth - 1)}, "
                f"{array_expr(g, sc, (4,), depth - 1)}))")
    if kind == "unary":
        return f"{g.pick(['np.sin', 'np.tanh'])}({scalar_expr(g, sc, depth - 1)})"
    if kind == "div":
        d = scalar_expr(g, sc, depth - 1)
        return f"({scalar_expr(g, sc, depth - 1)} / (1.0 + {d} * {d}))"
    op = g.pick(["+", "-", "*"])
    return f"({scalar_expr(g, sc, depth - 1)} {op} {scalar_expr(g, sc, depth - 1)})"


def power(g: Gen, base: str, scalar: bool) -> str:
    """A power of ``base`` (any sign): exponent 0 (``np.power(b, 0.0)``, ``b ** 0``), small
    integers (``b ** 2``, ``np.power(b, 3)``, ``b ** 3.0``: negative bases allowed), or a
    square root of a positive base (``(0.5 + b * b) ** 0.5``). With some chance the base is
    first clipped at 0 (``np.maximum(b, 0.0)``, ``max(b, 0.0)``), so that powers at 0 depend
    on the input. Never a fractional power of a negative number, nor a negative power of 0:
    the program stays valid plain Python."""
    if g.chance(0.35):
        base = f"max({base}, 0.0)" if scalar else f"np.maximum({base}, 0.0)"
    form = g.pick(["np.power({b}, 0.0)", "({b}) ** 0", "({b}) ** 2", "({b}) ** 3",
                   "np.power({b}, 2)", "np.power({b}, 3.0)", "({b}) ** 2.0", "({b}) ** 1",
                   "(0.5 + ({b}) * ({b})) ** 0.5", "(1.0 + ({b}) * ({b})) ** -1"])
    return form.format(b=base)


def bounded_scalar(g: Gen, sc: Scope) -> str:
    """A scalar of magnitude at most ~2, for factors applied repeatedly (``v *= ...``)."""
    if g.chance(0.4):
        return g.pick(LITERALS)
    if sc.scalars and g.chance(0.3):
        return g.pick(sc.scalars) if "s" not in sc.scalars or g.chance(0.5) else "s"
    return f"{g.pick(['np.tanh', 'np.sin'])}({scalar_expr(g, sc, 1)})"


# ----------------------------------------------------------------------------- array expressions


def gather(g: Gen, sc: Scope, shape: tuple) -> str | None:
    """Rows of an array read through integers: ``v[ix]`` with an index array of the scope, or
    a literal list ``v[[-1, 0, 2, 0]]`` (entries of either sign, often repeated); None when no
    array of the scope has rows of the right size."""
    m = shape[0]
    sources = [n for n, s in sc.arrays.items() if s[1:] == shape[1:] and len(s) == len(shape)]
    if not sources:
        return None
    v = g.pick(sources)
    n = sc.arrays[v][0]
    ints = [ix for ix in sc.index_arrays(n) if sc.ints[ix][0] == m]
    if ints and g.chance(0.9):
        return f"{v}[{g.pick(ints)}]"
    return f"{v}[{index_list(g, m, n)}]" if g.chance(0.12) else None


def index_list(g: Gen, m: int, n: int) -> str:
    """``[e0, ..., e(m-1)]``: entries in ``[-n, n - 1]``, at least one negative, and one
    repeated when ``m > 2``."""
    entries = [g.r.randrange(-n, n) for _ in range(m)]
    entries[g.r.randrange(m)] = -g.r.randrange(1, n + 1)
    if m > 2:
        a, b = g.r.sample(range(m), 2)
        entries[a] = entries[b]
    return "[" + ", ".join(map(str, entries)) + "]"


def array_leaf(g: Gen, sc: Scope, shape: tuple) -> str:
    gathered = gather(g, sc, shape) if g.chance(0.2) else None
    if gathered:
        return gathered
    names = sc.names(shape)
    if names and g.chance(0.85):
        return g.pick(names)
    transposed = sc.names(shape[::-1]) if len(shape) == 2 else []
    if transposed and g.chance(0.5):
        return f"{g.pick(transposed)}.T"
    if len(shape) == 1:
        rows = [n for n, s in sc.arrays.items() if len(s) == 2 and s[1] == shape[0]]
        if rows and g.chance(0.6):
            m = g.pick(rows)
            return f"{m}[{index_for(g, sc, sc.arrays[m][0])}]"
        longer = [n for n, s in sc.arrays.items() if len(s) == 1 and s[0] > shape[0]]
        if longer and g.chance(0.7):
            v = g.pick(longer)
            a = g.r.randrange(sc.arrays[v][0] - shape[0] + 1)
            return f"{v}[{a}:{a + shape[0]}]"
    return f"np.ones({shape_text(shape)}) * {scalar_leaf(g, sc)}"


def array_expr(g: Gen, sc: Scope, shape: tuple, depth: int = 2) -> str:
    """A new array of ``shape``: elementwise arithmetic, broadcasting, outer, ``@``, reductions."""
    if depth <= 0 or g.chance(0.3):
        return array_leaf(g, sc, shape)
    if shape == (3,) and g.chance(0.05):
        return cross(g, sc, depth - 1)
    if g.chance(0.1):  # issue 42's families
        kinds = ["ifexp", "einsum"]
        if len(shape) == 1 and shape[0] <= 4:
            kinds.append("intmat")
        kind = g.pick(kinds)
        if kind == "ifexp":
            return ifexp(g, sc, lambda: array_expr(g, sc, shape, depth - 1))
        if kind == "einsum":
            return einsum(g, sc, shape, depth - 1)
        mats = [h for h, s in sc.mats.items() if s[0] == shape[0]]
        if mats and g.chance(0.5):
            h = g.pick(mats)
            return f"({h} @ {array_expr(g, sc, (sc.mats[h][1],), depth - 1)})"
        n = g.pick([3, 4])
        return f"(np.array({int_matrix(g, shape[0], n)}) @ {array_expr(g, sc, (n,), depth - 1)})"
    forms = ["unary", "unary", "binop", "binop", "scale", "div", "power"]
    if len(shape) == 2:
        forms += ["outer", "rowbcast", "matmul"]
    else:
        forms += ["matvec", "reduce_axis"]
    kind = g.pick(forms)
    if kind == "power":
        return power(g, array_leaf(g, sc, shape), scalar=False)
    if kind == "unary":
        fn = g.pick(["np.sin", "np.tanh", "np.square", "np.exp(np.tanh", "np.cos"])
        inner = array_expr(g, sc, shape, depth - 1)
        return f"np.exp(np.tanh({inner}))" if fn == "np.exp(np.tanh" else f"{fn}({inner})"
    if kind == "binop":
        op = g.pick(["+", "-", "*"])
        return f"({array_expr(g, sc, shape, depth - 1)} {op} {array_expr(g, sc, shape, depth - 1)})"
    if kind == "scale":
        return f"({array_expr(g, sc, shape, depth - 1)} * {scalar_expr(g, sc, 1)})"
    if kind == "div":
        d = array_leaf(g, sc, shape)
        return f"({array_expr(g, sc, shape, depth - 1)} / (1.0 + {d} * {d}))"
    if kind == "outer":
        return (f"np.outer({array_expr(g, sc, (shape[0],), depth - 1)}, "
                f"{array_expr(g, sc, (shape[1],), depth - 1)})")
    if kind == "rowbcast":
        return (f"({array_expr(g, sc, shape, depth - 1)} {g.pick(['+', '*'])} "
                f"{array_expr(g, sc, (shape[1],), depth - 1)})")
    if kind == "matmul":
        mids = [s[1] for n, s in sc.arrays.items() if len(s) == 2 and s[0] == shape[0]]
        k = g.pick(mids) if mids else g.pick([3, 4])
        return (f"({array_expr(g, sc, (shape[0], k), depth - 1)} @ "
                f"{array_expr(g, sc, (k, shape[1]), depth - 1)})")
    if kind == "matvec":
        k = g.pick([3, 4])
        if g.chance(0.5):
            return (f"({array_expr(g, sc, (shape[0], k), depth - 1)} @ "
                    f"{array_expr(g, sc, (k,), depth - 1)})")
        return (f"({array_expr(g, sc, (k,), depth - 1)} @ "
                f"{array_expr(g, sc, (k, shape[0]), depth - 1)})")
    # reduce_axis: a 1-D array from a 2-D one
    k = g.pick([3, 4])
    red = g.pick(["np.sum", "np.mean", "np.max"])
    if g.chance(0.5):
        return f"{red}({array_expr(g, sc, (k, shape[0]), depth - 1)}, axis=0)"
    return f"{red}({array_expr(g, sc, (shape[0], k), depth - 1)}, axis=1)"


# ----------------------------------------------------------------------------- statements


def tamed(sc: Scope, rhs: str) -> str:
    """``np.tanh(rhs)`` inside loops: an update repeated n times then grows linearly at most."""
    return f"np.tanh({rhs})" if sc.loops else rhs


def st_alloc(g: Gen, sc: Scope) -> None:
    """A new array: zeros, zeros_like, ones_like, copy, or arithmetic (a fresh buffer)."""
    name = g.fresh("a")
    src = g.pick(sc.names())
    shape = sc.arrays[src]
    kind = g.pick(["zeros", "zeros_like", "ones_like", "copy", "npcopy", "expr", "expr", "times1"])
    if kind == "zeros":
        shape = g.pick([(3,), (4,), (3, 4)])
        g.emit(f"{name} = np.zeros({shape_text(shape)})")
    elif kind in ("zeros_like", "ones_like"):
        g.emit(f"{name} = np.{kind}({src})")
    elif kind == "copy":
        g.emit(f"{name} = {src}.copy()")
    elif kind == "npcopy":
        g.emit(f"{name} = np.copy({src})")
    elif kind == "times1":  # a new array, not an alias (issue #10, 3)
        g.emit(f"{name} = {src} * 1.0")
    else:
        g.emit(f"{name} = {array_expr(g, sc, shape)}")
    sc.arrays[name], sc.contig[name] = shape, True


def st_alias(g: Gen, sc: Scope) -> None:
    """``b = a``: a second name for the same storage."""
    src = g.pick(sc.names())
    name = g.fresh("a")
    g.emit(f"{name} = {src}")
    sc.arrays[name], sc.contig[name] = sc.arrays[src], sc.contig[src]


def st_view(g: Gen, sc: Scope) -> None:
    """A view: basic slices, a row, a column, ``.T``, ``reshape`` (of contiguous arrays only)."""
    two_d = [n for n, s in sc.arrays.items() if len(s) == 2]
    src = g.pick(two_d) if two_d and g.chance(0.5) else g.pick(sc.names())
    shape, contig = sc.arrays[src], sc.contig[src]
    options = []
    if len(shape) == 1:
        n = shape[0]
        options += [(f"{src}[1:]", (n - 1,), contig), (f"{src}[:-1]", (n - 1,), contig),
                    (f"{src}[1:3]", (min(n, 3) - 1,), contig),
                    (f"{src}[::2]", ((n + 1) // 2,), False)]
        if contig and n % 2 == 0:
            options.append((f"{src}.reshape(2, {n // 2})", (2, n // 2), True))
        if contig and n == 4:
            options.append((f"{src}.reshape(-1, 2)", (2, 2), True))
    else:
        r, c = shape
        i = g.r.randrange(r)
        j = g.r.randrange(c)
        options += [(f"{src}[{i}]", (c,), contig), (f"{src}[:, {j}]", (r,), False),
                    (f"{src}.T", (c, r), False), (f"{src}[1:, :]", (r - 1, c), contig),
                    (f"{src}[:, 1:]", (r, c - 1), False)]
        if contig:
            options.append((f"{src}.reshape({r * c})", (r * c,), True))
            options.append((f"{src}.reshape(-1)", (r * c,), True))
    text, vshape, vcontig = g.pick(options)
    if min(vshape) < 2:
        return
    name = g.fresh("v")
    g.emit(f"{name} = {text}")
    sc.arrays[name], sc.contig[name] = vshape, vcontig


def st_view_write(g: Gen, sc: Scope) -> None:
    """A write through a view (issue 25), as Numba simulation code writes them: a view taken
    (``w = A[i]``, ``A[i, :]``, ``A[:, j]``, ``A.T``, ``A[1:, :]``, ``A[i][1:]``, ``A.T[j]``,
    ``v[1:]``, ``v[1:3]``, ``v[::2]``, ``v[::-1]``, ``v[None]``, row indices of every sign,
    loop variables among them) and written through at once: ``w[:] = e``, ``w[k] op= e``,
    ``w op= e``, ``w.fill(e)``, a loop over its entries reading its neighbours
    (``w[q] = w[q] * b + w[q - 1]``); or a chained target, ``A[i][1:] = e``,
    ``v[1:][...] += e``. A named view stays in scope: later statements read and write it."""
    src = g.pick(sc.names())
    shape = sc.arrays[src]
    if len(shape) == 1:
        n = shape[0]
        options = [(f"{src}[1:]", (n - 1,)), (f"{src}[:-1]", (n - 1,)),
                   (f"{src}[1:3]", (min(n, 3) - 1,)), (f"{src}[::2]", ((n + 1) // 2,)),
                   (f"{src}[::-1]", (n,)), (f"{src}[None]", (1, n))]
    else:
        r, c = shape
        i, j = index_for(g, sc, r), index_for(g, sc, c)
        options = [(f"{src}[{i}]", (c,)), (f"{src}[{i}, :]", (c,)), (f"{src}[:, {j}]", (r,)),
                   (f"{src}.T", (c, r)), (f"{src}[1:, :]", (r - 1, c)),
                   (f"{src}[:, 1:]", (r, c - 1)), (f"{src}[{i}][1:]", (c - 1,)),
                   (f"{src}.T[{j}]", (r,))]
    text, vshape = g.pick(options)
    named = g.chance(0.7)
    target = text
    if named:
        target = g.fresh("w")
        g.emit(f"{target} = {text}")
        if min(vshape) >= 2:
            sc.arrays[target], sc.contig[target] = vshape, False
    kinds = ["all", "elem", "elem", "region"] + (["whole", "fill"] if named else [])
    if named and len(vshape) == 1 and g.depth < MAX_DEPTH and vshape[0] >= 2:
        kinds += ["loop", "loop"]
    kind = g.pick(kinds)
    op = g.pick(["=", "=", "+=", "-=", "*="])
    if kind == "all":
        rhs = scalar_expr(g, sc, 1) if g.chance(0.3) else array_expr(g, sc, vshape, 1)
        g.emit(f"{target}[{g.pick([':', '...'])}] {op if op != '*=' else '='} "
               f"{tamed(sc, rhs)}")
    elif kind == "elem":
        idx = ", ".join(index_for(g, sc, m) for m in vshape)
        rhs = bounded_scalar(g, sc) if op == "*=" else scalar_expr(g, sc)
        g.emit(f"{target}[{idx}] {op} {tamed(sc, rhs)}")
    elif kind == "region":
        if len(vshape) == 2:
            at, rshape = g.pick([(f"{index_for(g, sc, vshape[0])}", (vshape[1],)),
                                 (f":, {index_for(g, sc, vshape[1])}", (vshape[0],)),
                                 ("1:, :", (vshape[0] - 1, vshape[1]))])
        else:
            at, rshape = g.pick([("1:", (vshape[0] - 1,)), (":-1", (vshape[0] - 1,))])
        if min(rshape) < 1:
            return
        rhs = array_expr(g, sc, rshape, 1) if min(rshape) >= 2 else scalar_expr(g, sc, 1)
        g.emit(f"{target}[{at}] {op if op != '*=' else '+='} {tamed(sc, rhs)}")
    elif kind == "whole":
        if op in ("=", "*="):
            g.emit(f"{target} *= {bounded_scalar(g, sc)}")
        else:
            g.emit(f"{target} {op} {tamed(sc, array_expr(g, sc, vshape, 1))}")
    elif kind == "fill":
        g.emit(f"{target}.fill({tamed(sc, scalar_expr(g, sc, 1))})")
    else:
        q = next((k for k in ("q", "p", "m") if all(k != name for name, _ in sc.loops)), None)
        if q is None:
            return
        g.emit(f"for {q} in range({vshape[0]}):")
        g.depth += 1
        inner = sc.child()
        inner.loops.append((q, vshape[0]))
        g.emit(f"{target}[{q}] = np.tanh({target}[{q}] * {bounded_scalar(g, inner)} + "
               f"{target}[{q} - 1] * 0.5 + {scalar_expr(g, inner, 1)})")
        g.depth -= 1


def st_elem_write(g: Gen, sc: Scope) -> None:
    """``v[i] = e``, ``v[i] += e``, ``A[i, j] *= e``."""
    v = g.pick(sc.names())
    shape = sc.arrays[v]
    idx = ", ".join(index_for(g, sc, n) for n in shape)
    op = g.pick(["=", "=", "+=", "-=", "*="])
    rhs = bounded_scalar(g, sc) if op == "*=" else scalar_expr(g, sc)
    g.emit(f"{v}[{idx}] {op} {tamed(sc, rhs)}")


def st_slice_write(g: Gen, sc: Scope) -> None:
    """Slice writes: ``v[1:3] = e``, ``v[:] = e``, ``A[:, k] = v``, ``A[i, :] += v``, ``A[i] = s``."""
    v = g.pick(sc.names())
    shape = sc.arrays[v]
    op = g.pick(["=", "=", "+=", "-="])
    if len(shape) == 1:
        n = shape[0]
        options = [(f"{v}[:]", (n,)), (f"{v}[1:]", (n - 1,)), (f"{v}[:2]", (2,))]
        if n >= 3:
            options.append((f"{v}[1:3]", (2,)))
        target, tshape = g.pick(options)
    else:
        r, c = shape
        target, tshape = g.pick([(f"{v}[:, {index_for(g, sc, c)}]", (r,)),
                                 (f"{v}[{index_for(g, sc, r)}, :]", (c,)),
                                 (f"{v}[{index_for(g, sc, r)}]", (c,)),
                                 (f"{v}[1:, :]", (r - 1, c))])
    rhs = scalar_expr(g, sc, 1) if g.chance(0.25) else array_expr(g, sc, tshape)
    g.emit(f"{target} {op} {tamed(sc, rhs)}")


def st_inplace(g: Gen, sc: Scope) -> None:
    """Whole-array updates: ``v *= s``, ``v += w``, ``v /= 1 + m*m``, ``v -= e``."""
    v = g.pick(sc.names())
    shape = sc.arrays[v]
    kind = g.pick(["mul", "add", "div", "sub", "addrow"])
    if kind == "mul":
        g.emit(f"{v} *= {bounded_scalar(g, sc)}")
    elif kind == "add":
        g.emit(f"{v} += {tamed(sc, array_expr(g, sc, shape, 1))}")
    elif kind == "div":
        m = scalar_expr(g, sc, 1)
        g.emit(f"{v} /= (1.0 + {m} * {m})")
    elif kind == "sub":
        rhs = array_expr(g, sc, shape, 1) if g.chance(0.6) else scalar_expr(g, sc, 1)
        g.emit(f"{v} -= {tamed(sc, rhs)}")
    elif len(shape) == 2:
        g.emit(f"{v} += {array_expr(g, sc, (shape[1],), 1)}")
    else:
        m = g.pick(["np.max", "np.sum", "np.mean"])
        g.emit(f"{v} /= (1.0 + {m}({v}) ** 2)")


def st_scalar(g: Gen, sc: Scope) -> None:
    """A new scalar, or an update of one (carried when in a loop)."""
    if sc.scalars and g.chance(0.5):
        t = g.pick(sc.scalars)
        if t == "s" and g.chance(0.7):
            return
        form = g.pick(["+=", "tanh", "mix"])
        if form == "+=":
            g.emit(f"{t} += {tamed(sc, scalar_expr(g, sc))}")
        elif form == "tanh":
            g.emit(f"{t} = np.tanh({t} * {bounded_scalar(g, sc)} + {scalar_expr(g, sc)})")
        else:
            g.emit(f"{t} = 0.5 * {t} + {scalar_expr(g, sc)}")
        return
    t = g.fresh("t")
    g.emit(f"{t} = {scalar_expr(g, sc)}")
    sc.scalars.append(t)


def st_index(g: Gen, sc: Scope) -> None:
    """A new integer index array ``ix`` of length 3 or 4, its entries of either sign: a module
    constant ``IX = np.array([-1, 0, 2, 0])``, ``np.arange`` arithmetic (``np.arange(4) - 4``,
    ``(np.arange(4) * 3) % 3 - 3``), or built from data (``np.int64(np.floor(np.tanh(e) * 2.5))``,
    ``np.argsort(e)``, ``... % n - n``)."""
    m = g.pick([3, 4])
    bound = g.pick([3, 4])
    name = g.fresh("ix")
    kind = g.pick(["constant", "arange", "arange", "modulo", "floor", "floor", "astype",
                   "argsort"])
    if kind == "constant":
        const = name.upper()
        g.constants.append(f"{const} = np.array({index_list(g, m, bound)})")
        text = const
    elif kind == "arange":
        text = g.pick([f"np.arange({m}) - {m}", f"np.arange({m})[::-1] - {m}",
                       f"{m - 1} - np.arange({m})"])
        bound = max(bound, m)
    elif kind == "modulo":
        text = f"(np.arange({m}) * {g.r.randrange(1, 4)} + {g.r.randrange(3)}) % {bound}"
        text += g.pick(["", f" - {bound}"])
    elif kind in ("floor", "astype"):
        # tanh is in [-1, 1] (±1 exactly where it saturates): floor gives -bound .. bound - 1
        e = f"np.tanh({array_expr(g, sc, (m,), 1)}) * {bound - 0.5}"
        text = (f"np.int64(np.floor({e}))" if kind == "floor"
                else f"np.floor({e}).astype(np.int64)")
        if g.chance(0.4):
            text = f"{text} % {bound} - {bound}"
    else:
        text = f"np.argsort({array_expr(g, sc, (m,), 1)})" + g.pick(["", f" - {m}"])
        bound = max(bound, m)
    g.emit(f"{name} = {text}")
    sc.ints[name] = (m, bound)
    rows = [v for v, s in sc.arrays.items() if s[0] >= bound]
    if rows and g.chance(0.7):  # read through it at once: a new array of the rows
        v = g.pick(rows)
        new = g.fresh("a")
        g.emit(f"{new} = {v}[{name}]" + g.pick(["", " * 1.5", " + 0.0"]))
        sc.arrays[new], sc.contig[new] = (m,) + sc.arrays[v][1:], True


def st_rebind(g: Gen, sc: Scope) -> None:
    """``v = <expr>``: the name now points to a new buffer; its old aliases keep the old one."""
    v = g.pick(sc.names())
    shape = sc.arrays[v]
    g.emit(f"{v} = {tamed(sc, array_expr(g, sc, shape))}")
    sc.contig[v] = True


def st_loop(g: Gen, sc: Scope) -> None:
    """``for k in range(n)``: writes at ``k``, in-place updates, carried scalars, calls."""
    k = g.pick(["i", "j", "k"])
    if any(name == k for name, _ in sc.loops):
        return
    n = g.pick([2, 3, 4])
    g.emit(f"for {k} in range({n}):")
    inner = sc.child()
    inner.loops.append((k, n))
    inner.ivars[k] = (0, n - 1)
    g.depth += 1
    if sc.scalars and g.chance(0.5):  # a carried scalar
        t = g.pick(sc.scalars)
        if t != "s":
            g.emit(f"{t} = np.tanh({t} * {bounded_scalar(g, inner)} + {scalar_expr(g, inner, 1)})")
    block(g, inner, g.r.randint(1, 3), LOOP_STATEMENTS)
    g.depth -= 1
    sc.arrays.update((n_, s) for n_, s in inner.arrays.items() if n_ in sc.arrays)


def condition(g: Gen, sc: Scope) -> str:
    kind = g.pick(["scalar", "sum", "elem"])
    if kind == "scalar" and sc.scalars:
        return f"{g.pick(sc.scalars)} > {g.pick(['0.0', '0.3', '-0.5'])}"
    if kind == "sum":
        v = g.pick(sc.names())
        return f"np.sum({v}) > 0.0"
    return f"{scalar_leaf(g, sc)} < {scalar_leaf(g, sc)}"


def st_return(g: Gen, sc: Scope) -> None:
    """An early ``return`` inside a loop, under a condition on data or on a shape (known while
    building: constant True or False); only at the entry's own level (helpers have theirs)."""
    if not sc.loops:
        return
    v = g.pick(sc.names())
    cond = g.pick([condition(g, sc), condition(g, sc), f"{v}.shape[0] > 2",
                   f"{v}.shape[0] > 4"])
    g.emit(f"if {cond}:")
    g.depth += 1
    g.emit(f"return {result_expr(g, sc)}")
    g.depth -= 1


def st_if(g: Gen, sc: Scope) -> None:
    """``if <scalar condition>:`` with an optional ``else``; names made inside stay inside."""
    g.emit(f"if {condition(g, sc)}:")
    g.depth += 1
    block(g, sc.child(), g.r.randint(1, 2), BRANCH_STATEMENTS)
    g.depth -= 1
    if g.chance(0.5):
        g.emit("else:")
        g.depth += 1
        block(g, sc.child(), g.r.randint(1, 2), BRANCH_STATEMENTS)
        g.depth -= 1


# ----------------------------------------------------------------------------- helpers


def helper_fill(g: Gen, name: str) -> tuple[str, bool]:
    """``fill(u, D)``: a loop writing ``D[i]`` from ``u[i]``; returns D or nothing."""
    rhs = g.pick(["2.0 * u[i]", "np.sin(u[i]) + D[i]", "u[i] * u[i] * 0.5",
                  "D[i] * 0.5 + np.tanh(u[i])"])
    returns = g.chance(0.5)
    body = [f"def {name}(u, D):", "    for i in range(D.shape[0]):", f"        D[i] = {rhs}"]
    if returns:
        body.append("    return D")
    return "\n".join(body), returns


def helper_kernel(g: Gen, name: str) -> tuple[str, bool]:
    """An output-argument kernel ``kernel(u, out)`` returning nothing."""
    body = g.pick([
        ["    out[:] = np.tanh(u) * 1.5"],
        ["    for i in range(out.shape[0]):", "        out[i] = u[i] * u[i] + 0.5"],
        ["    out += np.sin(u)"],
        ["    out *= 0.5", "    out[0] = np.sum(u)"],
    ])
    return "\n".join([f"def {name}(u, out):"] + body), False


def helper_scale(g: Gen, name: str) -> tuple[str, bool]:
    """``scale(D, c)``: a whole-array update of the argument, returning nothing."""
    body = g.pick(["    D *= c", "    D += c * D", "    D /= (1.0 + c * c)"])
    return f"def {name}(D, c):\n{body}", False


def helper_rows(g: Gen, name: str) -> tuple[str, bool]:
    """``rows(M, v)``: writes every row of a 2-D argument."""
    rhs = g.pick(["M[i, :] = v * (i + 1.0)", "M[i, :] += np.sin(v)", "M[i] = M[i] * v"])
    return f"def {name}(M, v):\n    for i in range(M.shape[0]):\n        {rhs}", False


def helper_bump(g: Gen, name: str) -> tuple[str, bool]:
    """``bump(u)``: writes into its argument and returns it (an alias), or a scalar of it."""
    body = g.pick([["    u[0] += 1.0", "    return u"],
                   ["    u[1:] = u[:-1] * 0.5", "    return u"],
                   ["    t = np.sum(u * u)", "    u[-1] = 0.0", "    return t"]])
    return "\n".join([f"def {name}(u):"] + body), body[-1] == "    return t"


def helper_clip(g: Gen, name: str) -> tuple[str, bool]:
    """``clip(p, s)``: a loop writing ``s[t]`` from ``p``, then an ``if`` that may overwrite
    it (a variance recursion with a clipping step); returns nothing. Its writes must reach
    the caller's ``s`` (issue #21: they were lost, the gradient came back 0)."""
    rhs = g.pick(["p[0] * 3.0", "p[t % p.shape[0]] * 3.0", "np.sin(p[t % p.shape[0]]) + s[t]",
                  "0.5 * s[t - 1] + p[-1 - t % p.shape[0]]"])
    cond = g.pick(["s[t] < 0.0", "s[t] > 0.5", "p[t % p.shape[0]] > 0.0"])
    then = g.pick(["s[t] = 0.0", "s[t] = 0.5 * p[0]", "s[t] *= -1.0"])
    body = [f"def {name}(p, s):", "    for t in range(s.shape[0]):", f"        s[t] = {rhs}",
            f"        if {cond}:", f"            {then}"]
    if g.chance(0.4):
        body += ["        else:", "            s[t] += 0.25"]
    return "\n".join(body), False


def helper_grid(g: Gen, name: str) -> tuple[str, bool]:
    """``grid(M, v)``: nested loops over a 2-D argument with a branch in the inner one."""
    rhs = g.pick(["M[i, j] = v[j] * (i + 1.0)", "M[i, j] += np.tanh(v[j])",
                  "M[i, -1 - j] = M[i, j] * 0.5 + v[j]"])
    cond = g.pick(["M[i, j] > 0.5", "v[j] < 0.0", "(i + j) % 2 == 0"])
    then = g.pick(["M[i, j] = 0.5", "M[i, j] *= v[j]", "M[i - 1, j] += v[j]"])
    return "\n".join([f"def {name}(M, v):", "    for i in range(M.shape[0]):",
                      "        for j in range(M.shape[1]):", f"            {rhs}",
                      f"            if {cond}:", f"                {then}"]), False


def helper_step(g: Gen, name: str) -> tuple[str, bool]:
    """``step(s, p, k)``: one step of a recursion the caller's loop drives (``k`` is the
    caller's loop variable): writes ``s`` at ``k``, then clips it under an ``if``."""
    at = g.pick(["k % s.shape[0]", "k - s.shape[0]", "-1 - k % s.shape[0]"])
    rhs = g.pick(["p[k % p.shape[0]] * 3.0", f"s[{at}] * 0.5 + np.sin(p[0])",
                  "np.tanh(p[-1] + s[k % s.shape[0]])"])
    then = g.pick([f"s[{at}] = 0.0", f"s[{at}] *= 0.5", f"s[{at}] = p[0]"])
    return "\n".join([f"def {name}(s, p, k):", f"    s[{at}] = {rhs}",
                      f"    if s[{at}] < 0.0:", f"        {then}"]), False


def helper_first(g: Gen, name: str) -> tuple[str, bool]:
    """``first(u)``: a scalar returned from inside a loop, under a condition on data or on a
    shape (constant while building), with a fall-through ``return`` after the loop."""
    cond = g.pick(["u[i] > 0.3", "u[i] < -0.5", "u.shape[0] > 1", "u.shape[0] > 9"])
    ret = g.pick(["u[i] * 2.0", "np.sin(u[i]) + u[-1]", "u[i - u.shape[0]] ** 2"])
    return "\n".join([f"def {name}(u):", "    for i in range(u.shape[0]):",
                      f"        if {cond}:", f"            return {ret}",
                      "    return np.sum(u) * 0.5"]), True


def helper_negative(g: Gen, name: str) -> tuple[str, bool]:
    """``back(u, w)``: writes ``u`` through negative indices, constant and computed in a loop."""
    body = g.pick([["    u[-1] = w[0] * 2.0", "    u[-2] += np.sin(w[-1])"],
                   ["    for i in range(u.shape[0]):",
                    "        u[i - u.shape[0]] += w[-1 - i % w.shape[0]]"],
                   ["    for i in range(u.shape[0]):", "        if w[-1 - i % w.shape[0]] > 0.0:",
                    "            u[-1 - i] = 0.5 * u[i]"]])
    return "\n".join([f"def {name}(u, w):"] + body), False


HELPERS = (helper_fill, helper_kernel, helper_scale, helper_rows, helper_bump, helper_clip,
           helper_clip, helper_grid, helper_step, helper_step, helper_first, helper_negative)


def output_array(g: Gen, sc: Scope) -> str:
    """The 1-D array a helper writes into: often a new ``np.zeros(n)`` of the caller, made
    just before the call (or before the caller's loop: any 1-D name of the scope)."""
    one_d = [n for n, s in sc.arrays.items() if len(s) == 1]
    if one_d and g.chance(0.5):
        return g.pick(one_d)
    name = g.fresh("a")
    n = g.pick([2, 3, 4])
    g.emit(f"{name} = np.zeros({n})")
    sc.arrays[name], sc.contig[name] = (n,), True
    return name


def st_call(g: Gen, sc: Scope) -> None:
    """A call of a new helper defined in the module, on names of the caller (by reference)."""
    make = g.pick(HELPERS)
    name = g.fresh("h")
    text, flag = make(g, name)
    one_d = [n for n, s in sc.arrays.items() if len(s) == 1]
    if make in (helper_rows, helper_grid):
        two_d = [n for n, s in sc.arrays.items() if len(s) == 2]
        if not two_d:
            return
        m = g.pick(two_d)
        args = f"{m}, {array_expr(g, sc, (sc.arrays[m][1],), 1)}"
    elif make in (helper_clip, helper_negative, helper_step):
        target = output_array(g, sc)
        others = [n for n in one_d if n != target]
        p_ = (g.pick(others) if others and g.chance(0.5)
              else f"np.sin({array_expr(g, sc, g.pick([(3,), (4,)]), 1)})")
        if make is helper_clip:
            args = f"{p_}, {target}"
        elif make is helper_negative:
            args = f"{target}, {p_}"
        else:  # k >= 0: the caller's loop variable, or a constant
            k = g.pick(sc.loops)[0] if sc.loops else str(g.r.randrange(3))
            args = f"{target}, {p_}, {k}"
    elif make is helper_first:
        args = array_expr(g, sc, g.pick([(3,), (4,)]), 1)
    elif make is helper_scale:
        args = f"{g.pick(sc.names())}, {bounded_scalar(g, sc)}"
    elif make is helper_bump:
        if not one_d:
            return
        args = g.pick(one_d)
    else:
        if not one_d:
            return
        d = g.pick(one_d)
        u = array_expr(g, sc, sc.arrays[d], 1)
        args = f"{u}, {d}"
    g.helpers.append(text)
    if make is helper_bump and flag or make is helper_first:  # returns a scalar
        t = g.fresh("t")
        g.emit(f"{t} = {name}({args})")
        sc.scalars.append(t)
    elif (make is helper_fill and flag or make is helper_bump) and g.chance(0.6):
        target = args.split(", ")[-1]
        r = g.fresh("a")
        g.emit(f"{r} = {name}({args})")
        sc.arrays[r], sc.contig[r] = sc.arrays[target], sc.contig[target]
    else:
        g.emit(f"{name}({args})")


# ----------------------------------------------------------------------------- issue 42's families
# Constructs that real code (an ocean model's kernels, a Kalman filter, rigid-body code) found
# bugs in: loops over literal tuples with `continue`/`break`, conditional expressions nested in
# both branches, matrix literals of integers (or with a dtype given positionally), np.cross of
# a list literal, and einsum's sublist form.

TUPLE_VARS = ("kr", "ip", "jc", "ko", "kp", "jr")
FLOAT_VARS = ("cf", "cg", "ch")
INT_TUPLES = ((0, 1), (0, 1), (0, 1), (1, 0), (0, 1, 2), (0, 2), (-1, 0, 1), (2, 0, 1),
              (0, 1, 2, 3))
FLOAT_TUPLES = ((0.5, -1.0), (1.5, 0.25, -0.7), (-1.2, 2.0), (0.25, 0.5, 1.0))


def offset_index(g: Gen, sc: Scope, length: int, want: str | tuple | None = None) -> str:
    """An index into an axis of ``length`` from the scope's integer loop variables (range and
    literal-tuple loops), as stencils write them: ``k + kr - 1``, ``i + ip``, ``k - kr``,
    ``kr``, ``ip + 1``. ``want``: variables to include. Each variable's extent is known: a sum
    that could leave ``[-length, length - 1]`` is taken ``% length`` (negative sums inside it
    count from the end, as NumPy does)."""
    names = list(sc.ivars)
    if not names:
        return index_for(g, sc, length)
    wants = [want] if isinstance(want, str) else list(want or ())
    for _ in range(3):  # a sum that stays in bounds if one comes in three draws
        chosen = [w for w in wants if w in sc.ivars]
        others = [n for n in names if n not in chosen]
        extra = g.r.randint(0 if chosen else 1, max(0, min(2 - len(chosen), len(others))))
        chosen += g.r.sample(others, extra)
        text, lo, hi = "", 0, 0
        for k, name in enumerate(chosen):
            a, b = sc.ivars[name]
            if k and g.chance(0.2):
                text, lo, hi = f"{text} - {name}", lo - b, hi - a
            else:
                text, lo, hi = (f"{text} + {name}" if text else name), lo + a, hi + b
        c = g.pick([-1, -1, 0, 0, 0, 1, 2])
        if c:
            text, lo, hi = f"{text} {'+' if c > 0 else '-'} {abs(c)}", lo + c, hi + c
        if lo >= -length and hi <= length - 1:
            return text
    return f"({text}) % {length}"


def tuple_source(g: Gen, vals: tuple) -> str:
    """What a tuple loop runs over: the literal (``(0, 1)``), or a name bound to it, in the
    function (``offs0 = (0, 1)``, emitted here) or at module level (``OFFS0 = (0, 1)``)."""
    text = "(" + ", ".join(map(str, vals)) + ")"
    where = g.pick(["literal", "literal", "literal", "local", "module"])
    if where == "literal":
        return text
    if where == "local":
        name = g.fresh("offs")
        g.emit(f"{name} = {text}")
        return name
    name = g.fresh("OFFS")
    g.constants.append(f"{name} = {text}")
    return name


def tuple_loop_head(g: Gen, sc: Scope, floats: bool | None = None):
    """Emit the head of a loop over a literal tuple, with fresh variables: ``for kr in (0, 1):``
    (ints; floats with ``floats``), over pairs (``for kr, ip in ((0, 1), (1, 0)):``), or with a
    float alongside (``for kr, cf in zip((0, 1), (0.5, -1.0)):``, ``enumerate((0.5, 1.5))``).
    Returns the variables, the one jumps are conditioned on and its values, and the body's
    scope: integers with their extent (and as loop variables for `index_for` when not
    negative), floats as read-only scalars. None when the names are used up."""
    free = [n for n in TUPLE_VARS if n not in sc.ivars]
    ffree = [n for n in FLOAT_VARS if n not in sc.fixed]
    if len(free) < 2 or not ffree:
        return None
    if floats is None:
        floats = g.chance(0.2)
    inner = sc.child()
    form = "plain" if floats or g.chance(0.75) else g.pick(["zip", "enumerate", "pairs"])

    def add_int(name, vals):
        inner.ivars[name] = (min(vals), max(vals))
        if min(vals) >= 0:
            inner.loops.append((name, max(vals) + 1))

    def float_tuple(size):
        return tuple(float(g.pick(LITERALS)) for _ in range(size))

    if form == "plain":
        vals = g.pick(FLOAT_TUPLES if floats else INT_TUPLES)
        var = ffree[0] if floats else free[0]
        g.emit(f"for {var} in {tuple_source(g, vals)}:")
        if floats:
            inner.fixed.append(var)
        else:
            add_int(var, vals)
        return [var], var, vals, inner
    var, other = free[0], (free[1] if form == "pairs" else ffree[0])
    if form == "zip":
        vals = g.pick(INT_TUPLES)
        g.emit(f"for {var}, {other} in zip({tuple_source(g, vals)}, "
               f"{tuple_source(g, float_tuple(len(vals)))}):")
    elif form == "enumerate":
        size = g.pick([2, 3])
        vals = tuple(range(size))
        g.emit(f"for {var}, {other} in enumerate({tuple_source(g, float_tuple(size))}):")
    else:
        pairs = tuple((g.pick([0, 0, 1]), g.pick([0, 1, 2])) for _ in range(g.pick([2, 3])))
        vals = tuple(a for a, _ in pairs)
        add_int(other, tuple(b for _, b in pairs))
        g.emit(f"for {var}, {other} in {tuple_source(g, pairs)}:")
    add_int(var, vals)
    if form != "pairs":
        inner.fixed.append(other)
    return [var, other], var, vals, inner


def jump_condition(g: Gen, sc: Scope, var: str, vals: tuple, acc: str | None = None) -> str:
    """When a tuple loop's body jumps: on the tuple variable (``kr == 0``), on it and an
    enclosing loop's index (``k == 0 and kr == 0``, ``k + kr - 1 < 0``: the bounds guard of a
    stencil), on the enclosing index alone, or on run-time data (``v[k + kr - 1] > 0.0``,
    ``t > 0.5``)."""
    forms = []
    outer = [n for n in sc.ivars if n != var]
    if var in sc.ivars:
        v = g.pick(vals)
        forms += [f"{var} == {v}", f"{var} == {v}", f"{var} != {v}", f"{var} > {min(vals)}"]
        if outer:
            k = g.pick(outer)
            ka, kb = sc.ivars[k]
            forms += [f"{k} == {ka} and {var} == {v}", f"{k} == {ka} and {var} == {v}",
                      f"{k} + {var} - 1 < {ka}", f"{k} + {var} > {kb}", f"{var} > {k}"]
    else:
        forms += [f"{var} < 0.0", f"{var} > 1.0", f"{var} * {scalar_leaf(g, sc)} > 0.3"]
    if outer:
        k = g.pick(outer)
        forms += [f"{k} == {sc.ivars[k][1]}", f"{k} % 2 == 1"]
    v = g.pick(sc.names())
    idx = ", ".join(offset_index(g, sc, m, var if var in sc.ivars else None)
                    for m in sc.arrays[v])
    forms += [f"{v}[{idx}] > 0.0", f"{v}[{idx}] < -0.3",
              f"{scalar_leaf(g, sc)} < {scalar_leaf(g, sc)}"]
    if acc:
        forms += [f"{acc} > 0.5", f"{acc} < -0.2"]
    return g.pick(forms)


def st_jump(g: Gen, sc: Scope, var: str, vals: tuple, acc: str | None = None) -> None:
    """``if <condition>: continue`` (or ``break``) in a tuple loop's body, sometimes after a
    statement inside the branch."""
    g.emit(f"if {jump_condition(g, sc, var, vals, acc)}:")
    g.depth += 1
    if g.chance(0.2):
        st_offset_update(g, sc)
    g.emit("continue" if g.chance(0.55) else "break")
    g.depth -= 1


def st_offset_update(g: Gen, sc: Scope) -> None:
    """A write at an index of the loop variables whose value uses the tuple variable:
    ``t += np.tanh((kr + 0.5) * v[k + kr - 1])``, ``a[i + ip] += np.tanh(c * M[i, ip])``."""
    if not sc.ivars and not sc.fixed:
        st_elem_write(g, sc)
        return
    want = list(sc.ivars)[-1] if sc.ivars else None
    src = g.pick(sc.names())
    read = f"{src}[{', '.join(offset_index(g, sc, m, want) for m in sc.arrays[src])}]"
    coefs = ["0.5", scalar_leaf(g, sc)]
    if want:
        coefs += [f"({want} + 0.5)", f"({want} - 1.0)", f"{want}"]
    if sc.fixed:
        coefs += [sc.fixed[-1], sc.fixed[-1]]
    rhs = f"np.tanh({g.pick(coefs)} * {read})"
    scalars = [t for t in sc.scalars if t != "s"]
    if scalars and g.chance(0.4):
        g.emit(f"{g.pick(scalars)} {g.pick(['+=', '-='])} {rhs}")
        return
    dst = g.pick(sc.names())
    idx = ", ".join(offset_index(g, sc, m, want) for m in sc.arrays[dst])
    g.emit(f"{dst}[{idx}] {g.pick(['=', '+=', '+=', '-='])} {rhs}")


def st_tuple_loop(g: Gen, sc: Scope) -> None:
    """``for kr in (0, 1):`` (ints, sometimes floats; a literal or a name bound to one) whose
    body ``continue``s or ``break``s under a condition (`jump_condition`), with writes and
    accumulations before and after the jump; tuple loops nest in range loops and in each
    other. jitgrad unrolls them while building: a jump must end the tuple loop's iteration,
    not the enclosing range loop's (issue 42: it ended the range loop's, or was ignored)."""
    head = tuple_loop_head(g, sc)
    if head is None:
        st_offset_update(g, sc)
        return
    _, var, vals, inner = head
    g.depth += 1
    if g.chance(0.4):
        block(g, inner, 1, TUPLE_STATEMENTS)
    if g.chance(0.85):
        st_jump(g, inner, var, vals)
    block(g, inner, g.r.randint(1, 2), TUPLE_STATEMENTS)
    g.depth -= 1
    sc.arrays.update((n_, s) for n_, s in inner.arrays.items() if n_ in sc.arrays)


def stencil_term(g: Gen, sc: Scope, avoid: str, tvars: list[str], k: str) -> str:
    """A product of reads at offset indices of ``k`` and the tuple variables, and a value of
    these: ``dz[k + kr - 1] * x[k + ip, kr]``, ``v[k - kr] * (ip + 0.5)``, ``w[kr] * cf``."""
    sources = [n for n in sc.names() if n != avoid] or sc.names()
    factors = []
    for _ in range(g.pick([1, 2, 2])):
        v = g.pick(sources)
        idx = [offset_index(g, sc, m, (k, g.pick(tvars)) if g.chance(0.7) else g.pick(tvars))
               for m in sc.arrays[v]]
        factors.append(f"{v}[{', '.join(idx)}]")
    ints = [t for t in tvars if t in sc.ivars]
    if ints and g.chance(0.3):
        factors.append(f"({g.pick(ints)} + 0.5)")
    floats = [t for t in tvars if t in sc.fixed]
    if floats and g.chance(0.7):
        factors.append(g.pick(floats))
    return " * ".join(factors)


def st_stencil(g: Gen, sc: Scope) -> None:
    """The ocean-model kernel's shape: for each ``k`` (a new range loop, or the enclosing
    one's variable), a scalar reset to 0, tuple loops (often nested) that skip or stop under
    conditions and accumulate products at offset indices, then the result written at ``k``::

        for k in range(4):
            t3 = 0.0
            for kr in (0, 1):
                if k == 0 and kr == 0:
                    continue
                for ip in (0, 1):
                    t3 += v[k + kr - 1] * A[k + ip - 1, kr]
            a2[k] = t3 / (1.0 + d * d)
    """
    ranges = [n for n in sc.ivars if sc.ivars[n][0] == 0 and n in dict(sc.loops)]
    own = not ranges or g.depth == 0 or g.chance(0.3)
    names = [n for n in ("k", "j", "i") if n not in sc.ivars]
    if own and not names:
        own = False
    inner = sc.child()
    if own:
        k, n = names[0], g.pick([3, 4, 4])
        longer = [v for v, s in sc.arrays.items() if len(s) == 1 and s[0] >= n]
        if longer and g.chance(0.3):
            out = g.pick(longer)
        else:
            out = g.fresh("a")
            g.emit(f"{out} = np.zeros({n})")
            sc.arrays[out], sc.contig[out] = (n,), True
            inner.arrays[out], inner.contig[out] = (n,), True
        g.emit(f"for {k} in range({n}):")
        g.depth += 1
        inner.loops.append((k, n))
        inner.ivars[k] = (0, n - 1)
        at = k
    else:
        k = g.pick(ranges)
        out = g.pick(sc.names())
        at = ", ".join(offset_index(g, inner, m, k) for m in sc.arrays[out])
    depth0 = g.depth
    acc = g.fresh("t")
    g.emit(f"{acc} = 0.0")
    head = tuple_loop_head(g, inner, floats=g.chance(0.1))
    if head is None:
        g.depth = depth0 - (1 if own else 0)
        return
    tvars, var, vals, body = head
    g.depth += 1
    jumped = g.chance(0.85)
    if jumped and g.chance(0.7):
        st_jump(g, body, var, vals, acc)
        jumped = False
    if g.chance(0.5):
        head2 = tuple_loop_head(g, body, floats=g.chance(0.15))
        if head2 is not None:
            names2, var2, vals2, body2 = head2
            tvars = tvars + names2
            g.depth += 1
            if g.chance(0.45):
                st_jump(g, body2, var2, vals2, acc)
            g.emit(f"{acc} += {stencil_term(g, body2, out, tvars, k)}")
            g.depth -= 1
        else:
            g.emit(f"{acc} += {stencil_term(g, body, out, tvars, k)}")
    else:
        g.emit(f"{acc} += {stencil_term(g, body, out, tvars, k)}")
    if jumped:
        st_jump(g, body, var, vals, acc)
    if g.chance(0.3):  # a write after the jump
        g.emit(f"{acc} += 0.5 * {stencil_term(g, body, out, [var], k)}")
    if g.chance(0.25):
        dst = g.pick([v for v in body.names() if v != out] or [out])
        idx = ", ".join(offset_index(g, body, m, var) for m in body.arrays[dst])
        g.emit(f"{dst}[{idx}] += 0.5 * np.tanh({acc})")
    g.depth -= 1
    if own:
        d = scalar_leaf(g, inner)
        g.emit(f"{out}[{at}] " + g.pick([f"= {acc} / (1.0 + {d} * {d})", f"= np.tanh({acc})",
                                         f"+= {acc} / (1.0 + {acc} * {acc})"]))
    else:
        g.emit(f"{out}[{at}] " + g.pick(["= ", "+= "]) + g.pick(
            [f"np.tanh({acc})", f"{acc} / (1.0 + {acc} * {acc})"]))
    g.depth = depth0 - (1 if own else 0)
    if not own and g.chance(0.3):  # the sum read on after the tuple loops (not after a loop)
        sc.scalars.append(acc)


def runtime_condition(g: Gen, sc: Scope) -> str:
    """A condition known only at run time: on an entry of an array or a scalar (never two
    literals), or on a loop's index."""
    if sc.ivars and g.chance(0.2):
        k = g.pick(list(sc.ivars))
        return g.pick([f"{k} > {sc.ivars[k][0]}", f"{k} % 2 == 0"])
    v = g.pick(sc.names())
    left = g.pick(sc.scalars + sc.fixed + [
        f"{v}[{', '.join(index_for(g, sc, m) for m in sc.arrays[v])}]"] * 2)
    right = g.pick(["0.0", "0.3", "-0.5", scalar_leaf(g, sc)])
    return f"{left} {g.pick(['>', '<'])} {right}"


def ifexp(g: Gen, sc: Scope, branch) -> str:
    """A conditional expression of ``branch()`` values: nested in both branches
    (``(a if c else b) if d else (e if g else h)``, issue 42: a crash when every condition is
    known only at run time), in one, or flat."""
    def c():
        return runtime_condition(g, sc)
    form = g.pick(["both", "both", "both", "left", "right", "flat"])
    if form == "both":
        return (f"(({branch()} if {c()} else {branch()}) if {c()} else "
                f"({branch()} if {c()} else {branch()}))")
    if form == "left":
        return f"(({branch()} if {c()} else {branch()}) if {c()} else {branch()})"
    if form == "right":
        return f"({branch()} if {c()} else ({branch()} if {c()} else {branch()}))"
    return f"({branch()} if {c()} else {branch()})"


def int_matrix(g: Gen, rows: int, cols: int, ints_only: bool = True) -> str:
    """A matrix literal of small integers: mostly a selection (rows of the identity, as a
    Kalman filter's ``H``), or entries in -1..2; floats (``1.0``) when not ``ints_only``."""
    if g.chance(0.6):
        picks = g.r.sample(range(cols), min(rows, cols)) + [g.r.randrange(cols)] * max(
            0, rows - cols)
        body = [[int(j == p) for j in range(cols)] for p in picks]
    else:
        body = [[g.pick([-1, 0, 0, 1, 1, 2]) for _ in range(cols)] for _ in range(rows)]
    fmt = (lambda e: str(e)) if ints_only else (lambda e: f"{e:.1f}")
    return "[" + ", ".join("[" + ", ".join(fmt(e) for e in row) + "]" for row in body) + "]"


def st_literal(g: Gen, sc: Scope) -> None:
    """A literal met by float arrays. A matrix of integers (``H = np.array([[1, 0, 0, 0], [0,
    1, 0, 0]])``, in the function or at module level) multiplying them: ``H @ x``, ``H @ A``,
    ``z @ H``, ``np.dot(H, x)`` (issue 42: the generated code failed Numba's typing). A matrix
    or vector of floats by a dtype given positionally (``np.array([[1, 0], [0, 1]], float)``,
    ``np.float64``, or ``dtype=float``), then written with floats (issue 42: taken for an
    integer array and refused) and kept in scope as a float array. Or a cross product with a
    list literal, ``a = np.cross([0, 0, 1], h)`` (issue 42: an AttributeError)."""
    src = g.pick(sc.names())
    shape = sc.arrays[src]
    n = shape[0]
    m = g.pick([2, 3, 4])
    kind = g.pick(["ints", "ints", "ints", "floats", "floats", "cross"])
    if kind == "cross":
        name = g.fresh("a")
        g.emit(f"{name} = {cross(g, sc, 1)}")
        sc.arrays[name], sc.contig[name] = (3,), True
        return
    if kind == "ints":  # integers, with floats
        name = next((h for h, s in sc.mats.items() if s == (m, n)), None)
        if name is None or g.chance(0.3):
            name = g.fresh("H")
            lit = f"np.array({int_matrix(g, m, n)})"
            if g.chance(0.3):
                g.constants.append(f"{name} = {lit}")
            else:
                g.emit(f"{name} = {lit}")
            sc.mats[name] = (m, n)
        ms = [z for z, s in sc.arrays.items() if s == (m,)]
        if len(shape) == 1 and g.chance(0.3):  # a vector of n
            out = f"{g.pick(ms)} @ {name}" if ms else f"{name}.T @ ({name} @ {src})"
            oshape = (n,)
        else:
            out = g.pick([f"{name} @ {src}", f"{name} @ {src}", f"np.dot({name}, {src})"])
            oshape = (m,) + shape[1:]
        if g.chance(0.3):
            out += f" + {array_leaf(g, sc, oshape)}"
        new = g.fresh("a")
        g.emit(f"{new} = {out}")
        sc.arrays[new], sc.contig[new] = oshape, True
        return
    rows, cols = g.pick([(2, 3), (3, 4), (2, 4), (3, 3), (2, 2)])
    dtype = g.pick(["float", "float", "np.float64", "dtype=float", "dtype=np.float64"])
    one_d = g.chance(0.25)
    lit = int_matrix(g, 1 if one_d else rows, cols)
    if one_d:
        lit, vshape = lit[1:-1], (cols,)
    else:
        vshape = (rows, cols)
    name = g.fresh("B")
    g.emit(f"{name} = np.array({lit}, {dtype})")
    sc.arrays[name], sc.contig[name] = vshape, True
    kind = g.pick(["elem", "elem", "row", "col"] if not one_d else ["elem", "elem", "slice"])
    if kind == "elem":
        idx = ", ".join(index_for(g, sc, k) for k in vshape)
        g.emit(f"{name}[{idx}] {g.pick(['=', '+='])} {tamed(sc, scalar_expr(g, sc))}")
    elif kind == "row":
        g.emit(f"{name}[{index_for(g, sc, rows)}] = {tamed(sc, array_expr(g, sc, (cols,), 1))}")
    elif kind == "col":
        g.emit(f"{name}[:, {index_for(g, sc, cols)}] {g.pick(['=', '+='])} "
               f"{tamed(sc, array_expr(g, sc, (rows,), 1))}")
    else:
        g.emit(f"{name}[1:] = {tamed(sc, array_expr(g, sc, (cols - 1,), 1))}"
               if cols > 2 else f"{name}[0] = {scalar_expr(g, sc, 1)}")
    if not one_d and g.chance(0.6):  # used as a matrix of floats
        v = g.pick([v for v, s in sc.arrays.items() if s == (cols,)] or [None])
        if v is not None:
            new = g.fresh("a")
            g.emit(f"{new} = {name} @ {v}")
            sc.arrays[new], sc.contig[new] = (rows,), True


CROSS_LITERALS = ("[0, 0, 1]", "[0, 0, 1]", "[1, 0, 0]", "(0, 1, 0)", "[1.0, 0.0, 0.0]",
                  "[0.5, -1.0, 2.0]", "[0, -1, 1]")


def cross(g: Gen, sc: Scope, depth: int) -> str:
    """``np.cross`` of 3-vectors, one often a list or tuple literal (``np.cross([0, 0, 1],
    h)``, issue 42: an AttributeError), or of two arrays."""
    a = array_expr(g, sc, (3,), depth)
    if g.chance(0.25):
        return f"np.cross({a}, {array_expr(g, sc, (3,), depth)})"
    lit = g.pick(CROSS_LITERALS)
    return f"np.cross({lit}, {a})" if g.chance(0.6) else f"np.cross({a}, {lit})"


def sub(g: Gen, axes: list[int]) -> str:
    """An einsum sublist: a list or a tuple of axis numbers (``[0, 1]``, ``(1,)``, ``[]``)."""
    if g.chance(0.6):
        return "[" + ", ".join(map(str, axes)) + "]"
    return "(" + ", ".join(map(str, axes)) + ("," if len(axes) == 1 else "") + ")"


def einsum(g: Gen, sc: Scope, shape: tuple, depth: int) -> str:
    """``np.einsum`` in the sublist form (``np.einsum(M, (0, 1), (1, 0))``, ``np.einsum(M,
    [0, 1], v, [1], [0])``; issue 42: a RecursionError), sometimes the subscript string."""
    def e(s):
        return array_expr(g, sc, s, depth)
    k = g.pick([3, 4])
    if shape == ():
        n = g.pick([3, 4])
        form = g.pick(["dot", "dot", "sum", "frob", "implicit"])
        if form == "dot":
            return f"np.einsum({e((n,))}, {sub(g, [0])}, {e((n,))}, {sub(g, [0])}, {sub(g, [])})"
        if form == "implicit":
            return f"np.einsum({e((n,))}, {sub(g, [0])}, {e((n,))}, {sub(g, [0])})"
        if form == "sum":
            return f"np.einsum({e((n, k))}, {sub(g, [0, 1])}, {sub(g, [])})"
        return (f"np.einsum({e((n, k))}, {sub(g, [0, 1])}, {e((n, k))}, {sub(g, [0, 1])}, "
                f"{sub(g, [])})")
    if len(shape) == 1:
        n = shape[0]
        form = g.pick(["matvec", "matvec", "rowsum", "colsum", "vecmat", "string"])
        if form == "matvec":
            return (f"np.einsum({e((n, k))}, {sub(g, [0, 1])}, {e((k,))}, {sub(g, [1])}, "
                    f"{sub(g, [0])})")
        if form == "vecmat":
            return (f"np.einsum({e((k,))}, {sub(g, [0])}, {e((k, n))}, {sub(g, [0, 1])}, "
                    f"{sub(g, [1])})")
        if form == "rowsum":
            return f"np.einsum({e((n, k))}, {sub(g, [0, 1])}, {sub(g, [0])})"
        if form == "colsum":
            return f"np.einsum({e((k, n))}, {sub(g, [0, 1])}, {sub(g, [1])})"
        return f"np.einsum('ij,j->i', {e((n, k))}, {e((k,))})"
    r, c = shape
    form = g.pick(["transpose", "transpose", "matmul", "outer", "scale", "string"])
    if form == "transpose":
        return f"np.einsum({e((c, r))}, {sub(g, [0, 1])}, {sub(g, [1, 0])})"
    if form == "matmul":
        return (f"np.einsum({e((r, k))}, {sub(g, [0, 1])}, {e((k, c))}, {sub(g, [1, 2])}, "
                f"{sub(g, [0, 2])})")
    if form == "outer":
        return f"np.einsum({e((r,))}, {sub(g, [0])}, {e((c,))}, {sub(g, [1])}, {sub(g, [0, 1])})"
    if form == "scale":
        return (f"np.einsum({e((r, c))}, {sub(g, [0, 1])}, {e((c,))}, {sub(g, [1])}, "
                f"{sub(g, [0, 1])})")
    return f"np.einsum('ji->ij', {e((c, r))})"


# ----------------------------------------------------------------------------- blocks, programs

TOP_STATEMENTS = ((st_alloc, 4), (st_alias, 2), (st_view, 3), (st_elem_write, 3),
                  (st_slice_write, 3), (st_inplace, 3), (st_scalar, 2), (st_rebind, 1),
                  (st_loop, 3), (st_if, 2), (st_call, 3), (st_index, 3), (st_view_write, 3),
                  (st_tuple_loop, 1), (st_stencil, 1), (st_literal, 1))
LOOP_STATEMENTS = ((st_elem_write, 4), (st_slice_write, 2), (st_inplace, 3), (st_scalar, 3),
                   (st_rebind, 1), (st_alias, 1), (st_alloc, 1), (st_if, 2), (st_call, 3),
                   (st_loop, 1), (st_index, 1), (st_return, 1), (st_view_write, 2),
                   (st_tuple_loop, 2), (st_stencil, 1), (st_literal, 1))
BRANCH_STATEMENTS = ((st_elem_write, 3), (st_slice_write, 2), (st_inplace, 3), (st_scalar, 2),
                     (st_rebind, 1), (st_call, 1), (st_loop, 1), (st_view_write, 2),
                     (st_tuple_loop, 1))
# a tuple loop's body: writes at offset indices, accumulations, nested tuple and range loops
TUPLE_STATEMENTS = ((st_offset_update, 5), (st_elem_write, 2), (st_scalar, 2), (st_inplace, 1),
                    (st_if, 1), (st_call, 1), (st_tuple_loop, 1), (st_loop, 1), (st_return, 1))


def block(g: Gen, sc: Scope, count: int, table) -> None:
    """``count`` statements drawn from ``table`` (weighted); at least one line is emitted."""
    start = len(g.lines)
    fns = [f for f, _ in table]
    weights = [w for _, w in table]
    for _ in range(count):
        fn = g.r.choices(fns, weights)[0]
        if fn in (st_loop, st_if) and g.depth >= MAX_DEPTH:
            fn = st_inplace
        if fn in (st_tuple_loop, st_stencil) and g.depth > MAX_DEPTH:
            fn = st_offset_update
        fn(g, sc)
    if len(g.lines) == start:
        st_elem_write(g, sc)


def result_expr(g: Gen, sc: Scope) -> str:
    """The returned scalar: reads of several arrays (recently made ones first) and scalars."""
    names = sc.names()
    recent = names[::-1][:3]
    others = names[:-3] if len(names) > 3 else []
    chosen = recent + ([g.pick(others)] if others else [])
    terms = []
    for v in chosen:
        form = g.pick(["np.sum({v} * {v})", "np.sum(np.sin({v}))", "np.sum({v})",
                       "np.mean(np.square({v}))"])
        terms.append(form.format(v=v))
    terms += [t for t in sc.scalars if t != "s"][:3]
    return " + ".join(terms)


FROZEN = os.path.join(HERE, "fuzz_frozen")


def generate(seed: int) -> str:
    """The source text of program ``seed``: helpers, then ``def f(...)`` returning a float.
    A seed with a file ``fuzz_frozen/seed_K.txt`` gives that file's text: programs that once
    exposed a bug, kept as an earlier grammar generated them (tests name them by seed)."""
    frozen = os.path.join(FROZEN, f"seed_{seed}.txt")
    if os.path.exists(frozen):
        with open(frozen) as fh:
            return fh.read()
    g = Gen(seed)
    r = g.r
    chosen = [a for a in ARGS if a[0] == "x" or r.random() < 0.55]
    sc = Scope()
    for name, shape in chosen:
        if shape == ():
            sc.scalars.append(name)
        else:
            sc.arrays[name], sc.contig[name] = shape, True
    block(g, sc, r.randint(2, 7), TOP_STATEMENTS)
    g.emit(f"return {result_expr(g, sc)}")
    params = ", ".join(n for n, _ in chosen)
    parts = ["import numpy as np", ""] + ([""] + g.constants if g.constants else [])
    for h in g.helpers:
        parts += ["", h, ""]
    parts += ["", f"def f({params}):"] + g.lines
    return "\n".join(parts) + "\n"


def inputs(seed: int, source: str) -> tuple:
    """Arguments of program ``seed``: standard normal values, the scalar a Python float."""
    rng = np.random.default_rng(seed)
    header = next(line for line in source.splitlines() if line.startswith("def f("))
    names = header[len("def f("):-2].split(", ")
    shapes = dict(ARGS)
    return tuple(float(rng.normal()) if shapes[n] == () else rng.normal(size=shapes[n])
                 for n in names)


# ============================================================================= the checker

VALUE_RTOL, VALUE_ATOL = 1e-9, 1e-10
GRAD_RTOL, GRAD_ATOL = 1e-4, 1e-6
TAPE_RTOL = 1e-7
BIG = 1e6  # values beyond this are not checked (class "skip")
# Central-difference steps tried in turn. A gradient that matches none is WRONG when the last
# three agree with each other (the differences have converged), and "skip" when they do not
# (an ill-conditioned point, where no step gives a reliable reference).
FD_STEPS = (1e-6, 1e-5, 1e-7, 1e-8, 1e-9)

# Refusals no generated program deserves: the grammar never does what they name. It writes
# floats only into float arrays (issue 42: np.array([[1, 0], [0, 1]], float), its dtype given
# positionally, was taken for an integer array and writing floats into it refused).
WRONG_REFUSALS = ("writing floats into an integer array",)

_MODDIR = None
# With --parallel: every gradient is built with parallel=True, and f's top-level range loops are
# written as numba.prange loops (`as_prange`), so the parallel rewrite meets every program:
# the loops it runs in chunks and the ones it turns down (those must stay serial and right).
# Each loop runs in `PARALLEL_CHUNKS` chunks (uneven, some empty on short loops): the programs
# are too small for `chunk_count` to give them more than one.
PARALLEL = False
PARALLEL_CHUNKS = 3


_LOADED = collections.Counter()


def load(seed: int, source: str):
    """Write ``source`` to a real file (jitgrad reads source through inspect) and import it.
    Every load gets a new file and module name, so a changed source is never read stale."""
    global _MODDIR
    if _MODDIR is None:
        _MODDIR = tempfile.mkdtemp(prefix="jitgrad_fuzz_")
    _LOADED[seed] += 1
    name = f"fz_{seed}" if _LOADED[seed] == 1 else f"fz_{seed}_{_LOADED[seed] - 1}"
    path = os.path.join(_MODDIR, f"{name}.py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def copied(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _close(a, b, rtol, atol) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol * scale))


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def as_prange(source: str) -> str:
    """``source`` with f's top-level ``for v in range(...)`` loops as ``numba.prange`` loops.
    Plain Python runs them as range loops, the reference the gradient is checked against."""
    lines = source.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("def f("))
    for k in range(start + 1, len(lines)):
        lines[k] = re.sub(r"^(    for \w+ in )range\(", r"\1numba.prange(", lines[k])
    return "import numba\n" + "\n".join(lines) + "\n"


def check(seed: int, source: str | None = None) -> dict:
    """Run program ``seed`` and class it. Returns {seed, cls, reason, detail}."""
    from fd import numeric_grad

    from jitgrad import tape
    from jitgrad.api import GradFunction
    from jitgrad.core.errors import JitgradError

    source = source or generate(seed)
    if PARALLEL and "import numba\n" not in source:
        source = as_prange(source)
    out = {"seed": seed, "cls": "ok", "reason": "", "detail": ""}
    try:
        mod = load(seed, source)
        args = inputs(seed, source)
        value = float(mod.f(*copied(args)))
    except Exception as e:  # noqa: BLE001 - a program plain Python rejects is our bug
        return dict(out, cls="GENBUG", reason=first_line(e))
    if not np.isfinite(value) or abs(value) > BIG:
        return dict(out, cls="skip", reason="value not finite or too large")
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    given = copied(args)
    try:
        built = GradFunction(mod.f, wrt, with_value=True, parallel=PARALLEL,
                             strategies={"chunks": PARALLEL_CHUNKS} if PARALLEL else None)
        got_value, got_grads = built(*given)
        if PARALLEL:  # how many loops (forward and adjoint) the parallel rewrite ran in chunks
            out["chunked"] = built.source().count("jitgrad: parallel")
    except JitgradError as e:
        msg = first_line(e)
        if "generated gradient code" in msg:  # a failure of the generated code, not a refusal
            return dict(out, cls="CRASH", reason=msg, detail=str(e))
        if any(w in msg for w in WRONG_REFUSALS):
            return dict(out, cls="WRONG refusal", reason=msg.split(": ", 1)[1], detail=str(e))
        return dict(out, cls="refused", reason=msg.split(": ", 1)[1])
    except Exception as e:  # noqa: BLE001 - a raw traceback
        return dict(out, cls="CRASH", reason=first_line(e), detail=traceback.format_exc())
    problems = []
    changed = [k for k, (a, b) in enumerate(zip(args, given))
               if isinstance(a, np.ndarray) and not np.array_equal(a, b)]
    if changed:
        problems.append(("MODIFIED", f"arguments {changed} changed by the call"))
    if not _close(got_value, value, VALUE_RTOL, VALUE_ATOL):
        problems.append(("WRONG value", f"jitgrad {got_value!r}, Python {value!r}"))
    wrong, unsure = [], []
    for k, g in zip(wrt, got_grads):
        refs = []
        for eps in FD_STEPS:  # the first step that agrees passes
            refs.append(numeric_grad(mod.f, args, k, eps=eps))
            if _close(g, refs[-1], GRAD_RTOL, GRAD_ATOL):
                break
        else:
            text = (f"d/arg{k}: jitgrad {np.round(g, 5).tolist()}, "
                    f"differences {np.round(refs[0], 5).tolist()}")
            converged = all(_close(r, refs[-1], GRAD_RTOL, GRAD_ATOL) for r in refs[-3:])
            (wrong if converged else unsure).append(text)
    if wrong:
        problems.append(("WRONG grad", "; ".join(wrong)))
    elif unsure:  # the differences do not settle as the step shrinks: no oracle at this point
        return dict(out, cls="skip", reason="finite differences do not converge",
                    detail="; ".join(unsure))
    else:
        try:
            _, tape_grads = tape.value_and_grad(mod.f, wrt=wrt)(*copied(args))
        except Exception:  # noqa: BLE001 - the tape refuses some programs: no oracle then
            tape_grads = None
        out["tape"] = tape_grads is not None
        if tape_grads is not None:
            bad = [k for k, g, t in zip(wrt, got_grads, tape_grads)
                   if not _close(t, g, TAPE_RTOL, 1e-9)]
            if bad:
                problems.append(("WRONG tape", f"tape differs on arguments {bad}"))
    if problems:
        order = ["CRASH", "MODIFIED", "WRONG value", "WRONG grad", "WRONG tape"]
        problems.sort(key=lambda p: order.index(p[0]))
        return dict(out, cls=problems[0][0], reason=problems[0][1],
                    detail="\n".join(f"{c}: {d}" for c, d in problems))
    return out


def _check_quietly(seed: int, source: str | None = None) -> dict:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return check(seed, source)


# ============================================================================= minimizing


def family(result: dict) -> str:
    """What must stay the same while shrinking: the class, and for a crash its message
    without names."""
    if result["cls"] in ("CRASH", "refused"):
        return result["cls"] + ": " + re.sub(
            r"`[^`]*`|'[^']*'|\w+\.py, line \d+|\b(?=\w*[\d_])\w+\b|\b[A-Z]\b", "_",
            result["reason"])
    return result["cls"]


def _blocks(lines: list[str], start: int) -> list[tuple[int, int]]:
    """(first, end) line ranges of every statement from ``start`` on, a compound statement
    with its indented body."""
    out = []
    for i in range(start, len(lines)):
        indent = len(lines[i]) - len(lines[i].lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip()
                                  or len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        out.append((i, j))
    return out


def _candidates(source: str):
    """Smaller programs: a statement (or block, or helper) removed, a returned term dropped."""
    lines = source.rstrip("\n").split("\n")
    blocks = _blocks(lines, 0)
    ends = dict(blocks)
    for first, end in blocks:  # an if with its else removed, or replaced by either body
        head = lines[first].strip()
        if head.startswith("if ") and end < len(lines) and lines[end].strip() == "else:":
            yield "\n".join(lines[:first] + lines[ends[end]:]) + "\n"
        if head.startswith("if ") or head == "else:":
            stop = ends[end] if end < len(lines) and lines[end].strip() == "else:" else end
            start = first - 1 if head == "else:" else first
            while head == "else:" and not lines[start].strip().startswith("if "):
                start -= 1
            body = [line[4:] for line in lines[first + 1:end]]
            yield "\n".join(lines[:start] + body + lines[stop:]) + "\n"
    for first, end in sorted(blocks, key=lambda b: b[0] - b[1]):
        text = lines[first].strip()
        if not text or text.startswith(("import", "def f(", "return")):
            continue
        if text == "else:" or text.startswith("def "):
            yield "\n".join(lines[:first] + lines[end:]) + "\n"
            continue
        rest = lines[:first] + lines[end:]
        # a block left with no body gets a pass
        prev = rest[first - 1] if first - 1 < len(rest) and first > 0 else ""
        nxt = rest[first] if first < len(rest) else ""
        indent = len(lines[first]) - len(lines[first].lstrip())
        if prev.rstrip().endswith(":") and (len(nxt) - len(nxt.lstrip())) < indent:
            rest = rest[:first] + [" " * indent + "pass"] + rest[first:]
        yield "\n".join(rest) + "\n"
    for i, line in enumerate(lines):
        if line.strip().startswith("return ") and " + " in line:
            head, expr = line.split("return ", 1)
            terms = expr.split(" + ")
            for k in range(len(terms)):
                kept = terms[:k] + terms[k + 1:]
                yield "\n".join(lines[:i] + [head + "return " + " + ".join(kept)]
                                 + lines[i + 1:]) + "\n"


def minimize(seed: int, source: str | None = None, budget: int = 3000) -> tuple[str, dict]:
    """Shrink program ``seed`` while it stays in the same failure family (same inputs)."""
    source = source or generate(seed)
    want = _check_quietly(seed, source)
    fam = family(want)
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for cand in _candidates(source):
            tries += 1
            try:
                compile(cand, "<candidate>", "exec")
            except SyntaxError:
                continue
            r = _check_quietly(seed, cand)
            if family(r) == fam:
                source, want, improved = cand, r, True
                break
            if tries >= budget:
                break
    return source, want


# ============================================================================= command line

FAILING = ("CRASH", "MODIFIED", "WRONG value", "WRONG grad", "WRONG tape", "WRONG refusal",
           "GENBUG")


def run(seeds, jobs: int = 1) -> list[dict]:
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            return pool.map(_check_quietly, seeds, chunksize=16)
    return [_check_quietly(s) for s in seeds]


def summary(results: list[dict], show: int, out=sys.stdout) -> None:
    counts = collections.Counter(r["cls"] for r in results)
    print(f"{len(results)} programs: " + ", ".join(f"{c} {n}" for c, n in counts.most_common()),
          file=out)
    refused = [r["reason"] for r in results if r["cls"] == "refused"]
    reasons = collections.Counter(re.sub(r"`[^`]*`", "`…`", m) for m in refused)
    if reasons:
        print("most common refusals (names replaced by `…`):", file=out)
        for reason, n in reasons.most_common(10):
            print(f"  {n:5d}  {reason[:200]}", file=out)
    generated = sum(bool(re.search(r"`_|`[A-Za-z]\w*_\d+`", m)) for m in refused)
    if generated:
        print(f"{generated} refusals name a generated variable (`_t0`, `x_1`), "
              "not the user's", file=out)
    bad = sorted((r for r in results if r["cls"] in FAILING),
                 key=lambda r: len(generate(r["seed"])))
    if bad:
        print(f"{len(bad)} failing programs (replay: python tests/fuzz_gen.py --seed K):", file=out)
        for r in bad:
            print(f"  seed {r['seed']}: {r['cls']}: {r['reason'][:150]}", file=out)
        for r in bad[:show]:
            print(f"\n# ---- seed {r['seed']}: {r['cls']}\n{generate(r['seed'])}", file=out)


def parse_seeds(text: str) -> list[int]:
    """``a:b`` (a range), ``a,b,c``, or a mix of both (``0:300,446``)."""
    out: list[int] = []
    for part in text.split(","):
        if ":" in part:
            a, b = part.split(":")
            out += range(int(a), int(b))
        else:
            out.append(int(part))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default="0:200", help="a:b (range) or a,b,c")
    p.add_argument("--seed", type=int, help="one program")
    p.add_argument("--print", action="store_true", help="print the program's source only")
    p.add_argument("--minimize", action="store_true",
                   help="with --seed: shrink the program while it fails the same way")
    p.add_argument("--random", type=int, metavar="N", help="check N fresh seeds")
    p.add_argument("--jit", action="store_true", help="compile with Numba (default: plain Python)")
    p.add_argument("--show", type=int, default=5, help="print the source of N failing programs")
    p.add_argument("--parallel", action="store_true",
                   help="build with parallel=True, f's top-level loops written as prange")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--json", help="write the results to this file")
    a = p.parse_args(argv)
    global PARALLEL
    PARALLEL = a.parallel
    if a.seed is not None and a.print:
        print(generate(a.seed), end="")
        return 0
    if not a.jit:
        os.environ["JITGRAD_DISABLE_JIT"] = "1"  # read when jitgrad.backend.numba.compile is imported
    sys.path.insert(0, os.path.dirname(HERE))  # this checkout's jitgrad, not an installed one
    sys.path.insert(0, HERE)
    if a.seed is not None and a.minimize:
        small, r = minimize(a.seed)
        print(small)
        print(f"{r['cls']}: {r['reason']}\n{r['detail']}")
        return int(r["cls"] in FAILING)
    if a.seed is not None:
        print(generate(a.seed))
        r = _check_quietly(a.seed)
        print(f"{r['cls']}: {r['reason']}\n{r['detail']}")
        return int(r["cls"] in FAILING)
    if a.random:
        seeds = [random.SystemRandom().randrange(10**9) for _ in range(a.random)]
        print("seeds:", ",".join(map(str, seeds)), flush=True)
    else:
        seeds = parse_seeds(a.seeds)
    results = run(seeds, a.jobs)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh)
    summary(results, a.show)
    return int(any(r["cls"] in FAILING for r in results))


if __name__ == "__main__":
    sys.exit(main())
