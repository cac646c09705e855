"""Write the generated source of ~1,500 builds to a folder, to check that a refactor leaves
jitgrad's output unchanged: run it on two checkouts and diff the folders.

    PYTHONPATH=CHECKOUT python tests/generated_sources.py CHECKOUT OUT_DIR
    diff -rq /tmp/before /tmp/after                         # nothing: the same code

The builds: value_and_grad of every corpus case (straight, loops, shape, surface, real, more),
with a memory cap for the loop cases; 120 fuzz programs with and without a cap; the parallel,
checkpoint, recompute and saving test cases (parallel=True and a tiny cap where they are
about that); the vjp, hvp and jvp modules of every corpus case (captured on their way to the
compiler). Nothing is compiled: about 3 minutes. PYTHONPATH=CHECKOUT makes that checkout's
jitgrad the one imported (an editable install elsewhere serves only modules it lacks). A build
that is refused (or crashes) writes the error's first line instead. Issue #22's redesign was checked this
way: 1,542 modules, byte-identical from e0c7934 to the layered package but for two.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np

ROOT, OUT = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(ROOT, "tests"), ROOT]

import corpus
import corpus_more
import corpus_real
import corpus_shape
import corpus_surface
import fuzz_gen
import test_checkpoint
import test_parallel
import test_recompute
import test_saving

import jitgrad
from jitgrad import JitgradError

CASES = (corpus.ALL_CASES + corpus_more.MORE_CASES + corpus_real.REAL_CASES
         + corpus_shape.SHAPE_CASES + corpus_surface.SURFACE_CASES)


class Captured(Exception):
    """The module handed to the compiler, in place of compiling it."""


def capture(stem, source, names, *args, **kwargs):
    raise Captured(source)


def masked(text: str) -> str:
    """The text with the runtime's and compiler's import paths masked (they moved in #22)."""
    text = re.sub(r"import jitgrad\S* as _rt", "import RUNTIME as _rt", text)
    return re.sub(r"from jitgrad\S* import jit as _jit", "from COMPILE import jit as _jit", text)


def write(name: str, make) -> None:
    """Write what ``make()`` generates (its source, or its refusal) to ``OUT/name.py``."""
    try:
        text = make()
    except Captured as c:
        text = c.args[0]
    except Exception as e:  # noqa: BLE001 - a refusal or a crash is an outcome to compare too
        text = f"refused: {type(e).__name__}: " + str(e).splitlines()[0]
    with open(os.path.join(OUT, name + ".py"), "w") as f:
        f.write(masked(text))


def gradient_source(fn, args, wrt, **options) -> str:
    g = jitgrad.value_and_grad(fn, wrt=wrt, **options)
    return g.generate(g.types_of(args), examples=(args,)).source


def float_positions(args) -> tuple:
    return tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))


def gradients() -> None:
    seen = set()
    for c in CASES:
        name = c.name
        while name in seen:
            name += "_"
        seen.add(name)
        args, wrt = c.points[0], c.wrt or corpus.float_positions(c.points[0])
        write(name, lambda c=c, a=args, w=wrt: gradient_source(c.fn, a, w))
        if "loop" in name or "rnn" in name:
            write(name + "__cap", lambda c=c, a=args, w=wrt: gradient_source(
                c.fn, a, w, memory_cap=4096))
    for seed in range(120):
        source = fuzz_gen.generate(seed)
        mod = fuzz_gen.load(seed, source)
        try:
            args = fuzz_gen.inputs(seed, source)
            wrt = float_positions(args)
            write(f"fuzz{seed}", lambda f=mod.f, a=args, w=wrt: gradient_source(f, a, w))
            write(f"fuzz{seed}__cap", lambda f=mod.f, a=args, w=wrt: gradient_source(
                f, a, w, memory_cap=512))
        except JitgradError:
            pass  # (a program whose inputs cannot be drawn: the same on both checkouts)
        finally:
            sys.modules.pop(mod.__name__, None)
    for fn, args, wrt in test_parallel.PARALLEL:
        write("par_" + fn.__name__, lambda f=fn, a=args, w=wrt: gradient_source(
            f, a, w, parallel=True))
        write("par_" + fn.__name__ + "__serial", lambda f=fn, a=args, w=wrt: gradient_source(
            f, a, w))
    for fn, args, _ in test_parallel.SERIAL:
        write("parser_" + fn.__name__, lambda f=fn, a=args: gradient_source(
            f, a, float_positions(a), parallel=True))
    more = (test_checkpoint.CHECKPOINTED + [c for c, _ in test_checkpoint.KEPT]
            + test_recompute.RECOMPUTED + test_recompute.FUSED
            + [c for c, _ in test_recompute.TAPED] + test_saving.CASES)
    for c in more:
        args, wrt = c.points[0], c.wrt or corpus.float_positions(c.points[0])
        write("x_" + c.name, lambda c=c, a=args, w=wrt: gradient_source(c.fn, a, w))
        write("x_" + c.name + "__tiny", lambda c=c, a=args, w=wrt: gradient_source(
            c.fn, a, w, memory_cap=64))


def forward_and_vjp() -> None:
    """The vjp, hvp and jvp modules, captured where they would be compiled."""
    if os.path.isdir(os.path.join(os.path.dirname(jitgrad.__file__), "backend")):
        import jitgrad.backend.numba as loader
    else:  # (before #22: one flat package)
        import jitgrad.compile as loader
    loader.load = capture
    for c in CASES:
        args = c.points[0]
        wrt = c.wrt or corpus.float_positions(args)
        if not wrt:
            continue
        k = wrt[0]
        v = np.ones_like(args[k]) if isinstance(args[k], np.ndarray) else 1.0
        tangents = tuple(v if j == k else None for j in range(len(args)))
        write(c.name + "__vjp", lambda c=c, a=args: jitgrad.vjp(c.fn, *a))
        write(c.name + "__hvp", lambda c=c, a=args, k=k, v=v: jitgrad.hvp(c.fn, wrt=k)(*a, v))
        write(c.name + "__jvp", lambda c=c, a=args, t=tangents: jitgrad.jvp(c.fn, tuple(a), t))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    gradients()
    forward_and_vjp()
    print(len(os.listdir(OUT)), "modules in", OUT)
