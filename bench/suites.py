"""What ``python -m bench`` measures: the cases (problem x size) and the tools run on each.

A ``Case`` is one problem of ``bench.problems`` at one size; ``cases(suites, size)`` lists
them. Sizes: ``two_layer`` and ``rnn`` have two benchmark sizes each (small = (16, 8, 16, 4)
and n = 1000, large = MNIST (128, 784, 256, 10) and n = 100000), both run by default; for
``gmm``, ``reproj`` and ``control_flow`` "large" is the ``BENCH_*`` size of
``bench.problems`` (the default) and "small" a cut-down size for ``--quick``.

A ``Tool`` is one way to compute the case's gradient (``kind="grad"``) or primal
(``kind="primal"``). ``tools(case, peers)`` lists, in report order: jitgrad, jitgrad's compiled entry called
directly (a diagnostic: the cost of the Python call in front of it), jitgrad.tape
(if ``import jitgrad.tape`` works; on ``bench.tape_variants`` for rnn and gmm, whose
``math.*`` calls the tape refuses by design), the hand-written Numba gradient, the Numba
primal, the plain NumPy/Python primal, then the peers named in ``peers`` (autograd, torch,
jax).
``tool.build(data)`` returns ``(call, to_numpy)``: ``call()`` is a zero-argument callable
computing the result on ``data``, ``to_numpy(call())`` normalises it -- for gradients a
tuple with one float / float64 array per differentiable argument, for primals a float.
Building binds data only; nothing is compiled or run until ``call()``.

Every case differentiates w.r.t. the same arguments as the hand-written gradient:
two_layer (W1, b1, W2, b2), rnn (w, x), gmm (alphas, means, log_prec), reproj (cams,
points), control_flow (x, thresh).
"""

import dataclasses
import importlib
import os
from collections.abc import Callable

import numpy as np

from bench import handwritten, peers, problems, tape_variants

SUITES = ("two_layer", "rnn", "gmm", "gmm_adbench", "gmm_adbench_cols", "reproj",
          "control_flow")


# Suites the peers do not run: ADBench's loop GMM is the `gmm` problem in another form, and the
# peers' (vectorised) GMM is timed there.
PEERLESS = {"gmm_adbench", "gmm_adbench_cols"}


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str
    problem: Callable
    make: Callable  # make(*sizes) -> data tuple
    wrt: tuple
    primal: Callable  # Numba primal
    grad: Callable | None  # hand-written Numba gradient
    sizes: dict  # {"small": sizes, "large": sizes}
    labels: dict  # {"small": label, "large": label}
    both_by_default: bool  # run small and large when no --size is given
    scaled_axis: int | None  # which size entry scales the work (for probing), None: none


SUITE_DEFS = {
    "two_layer": Suite(
        "two_layer", problems.two_layer_loss, problems.make_two_layer, (0, 1, 2, 3),
        handwritten.two_layer_primal, handwritten.two_layer_grad,
        {"small": problems.SMALL_TWO_LAYER, "large": problems.MNIST_TWO_LAYER},
        {"small": "small", "large": "mnist"}, True, None,
    ),
    "rnn": Suite(
        "rnn", problems.rnn_loss, problems.make_rnn, (0, 1),
        handwritten.rnn_primal, handwritten.rnn_grad,
        {"small": (1_000,), "large": (100_000,)},
        {"small": "n=1000", "large": "n=100000"}, True, 0,
    ),
    "gmm": Suite(
        "gmm", problems.gmm_nll, problems.make_gmm, (0, 1, 2),
        handwritten.gmm_primal, handwritten.gmm_grad,
        {"small": (1_000, 10, 25), "large": problems.BENCH_GMM},
        {"small": "n=1000", "large": "n=10000"}, False, 0,
    ),
    "gmm_adbench": Suite(
        "gmm_adbench", problems.gmm_adbench, problems.make_adbench_gmm, (0, 1, 2),
        handwritten.gmm_adbench_primal, handwritten.gmm_adbench_grad,
        {"small": (1_000, 10, 25), "large": problems.BENCH_GMM},
        {"small": "n=1000", "large": "n=10000"}, False, 0,
    ),
    "gmm_adbench_cols": Suite(
        "gmm_adbench_cols", problems.gmm_adbench_cols, problems.make_adbench_gmm, (0, 1, 2),
        handwritten.gmm_adbench_cols_primal, handwritten.gmm_adbench_cols_grad,
        {"small": (1_000, 10, 25), "large": problems.BENCH_GMM},
        {"small": "n=1000", "large": "n=10000"}, False, 0,
    ),
    "reproj": Suite(
        "reproj", problems.reproj_loss, problems.make_reproj, (0, 1),
        handwritten.reproj_primal, handwritten.reproj_grad,
        {"small": (10, 200, 2_000), "large": problems.BENCH_REPROJ},
        {"small": "2000 obs", "large": "20000 obs"}, False, 2,
    ),
    "control_flow": Suite(
        "control_flow", problems.control_flow, problems.make_control_flow, (0, 1),
        handwritten.control_flow_primal, handwritten.control_flow_grad,
        {"small": (10_000,), "large": problems.BENCH_CONTROL_FLOW},
        {"small": "n=10000", "large": "n=100000"}, False, 0,
    ),
}


@dataclasses.dataclass(frozen=True)
class Case:
    suite: Suite
    size: str  # "small" or "large"

    @property
    def sizes(self):
        return self.suite.sizes[self.size]

    @property
    def name(self):
        return f"{self.suite.name} {self.suite.labels[self.size]}"

    def data(self, sizes=None):
        return self.suite.make(*(self.sizes if sizes is None else sizes))

    def scaled_sizes(self, divisor):
        """Sizes with the work-scaling entry divided by ``divisor`` (at least 10), and the
        fraction of the full work they represent; ``None`` if the case does not scale."""
        axis = self.suite.scaled_axis
        if axis is None:
            return None
        sizes = list(self.sizes)
        sizes[axis] = max(10, sizes[axis] // divisor)
        return tuple(sizes), sizes[axis] / self.sizes[axis]


def cases(suites, size=None):
    """Cases for the named suites; ``size`` None means the default sizes (see module doc)."""
    out = []
    for name in suites:
        suite = SUITE_DEFS[name]
        if size is not None:
            sizes = (size,)
        elif suite.both_by_default:
            sizes = ("small", "large")
        else:
            sizes = ("large",)
        out.extend(Case(suite, s) for s in sizes)
    return out


@dataclasses.dataclass(frozen=True)
class Threads:
    """The threads every tool is given (``--threads``): ``n`` for Numba (jitgrad with
    ``parallel=True`` when ``n > 1``), OpenBLAS, PyTorch and XLA alike; None: the environment's
    settings (``--threads env``; jitgrad is parallel only if ``NUMBA_NUM_THREADS`` > 1 is set)."""

    n: int | None = 1

    @classmethod
    def from_setting(cls, setting: str) -> "Threads":
        return cls(None if setting == "env" else int(setting))

    @property
    def parallel(self) -> bool:
        n = self.n if self.n is not None else int(os.environ.get("NUMBA_NUM_THREADS") or 1)
        return n > 1

    def column(self, tool: str, problem) -> str:
        """The report's threads column: what ``tool`` may use. Code that runs on one thread
        says so, with the BLAS threads NumPy or Numba's ``@`` may use besides. jitgrad with
        ``parallel=True``: whether its build has parallel loops is filled in after the first
        call (``(parallel loops)`` or ``(none parallel)``)."""
        if self.n is None:
            return "env"
        if tool in ("torch", "jax"):
            return str(self.n)  # intra-op threads
        if tool in ("jitgrad", "jitgrad entry") and self.parallel:  # the build says which
            return f"{self.n} (parallel)"
        return "1" if self.n == 1 else f"1 + BLAS {self.n}"


@dataclasses.dataclass(frozen=True)
class Tool:
    name: str
    kind: str  # "grad" or "primal"
    build: Callable  # data -> (call, to_numpy)
    cheap: bool  # compiled or array code: never probed, always timed interleaved
    memory_traced: bool  # tracemalloc sees its allocations
    fresh_process: str | None  # first-call child kind measured in a fresh process, if any
    style: str = ""  # how the problem is written for this tool, for the report
    threads: str = "1"  # the threads it may use (`Threads.column`)


def tape_module():
    """``jitgrad.tape`` if it imports, else the ``ImportError`` (as a string)."""
    try:
        return importlib.import_module("jitgrad.tape")
    except ImportError as e:
        return f"{type(e).__name__}: {e}"


def _grad_tool(make_grad, wrt):
    """Build for a gradient with jitgrad's calling convention: ``g(*data)`` -> tuple. For a
    jitgrad gradient with ``parallel=True``, ``call.parallel_loops()`` says (after the first
    call) whether its build runs any loop in parallel."""

    def build(data):
        g = make_grad()

        def call():
            return g(*data)

        if getattr(g, "parallel", False):
            call.parallel_loops = lambda: "in _prange(" in g.source()

        def to_numpy(grads):
            return tuple(_as_grad(data[k], v) for k, v in zip(wrt, grads))

        return call, to_numpy

    return build


def _entry_tool(problem, wrt, parallel=False):
    """jitgrad's compiled entry called directly: what a call costs without the Python in
    front of it (argument check, signature lookup). A diagnostic, not a way to call jitgrad."""

    def build(data):
        entry = source = None

        def call():
            nonlocal entry, source
            if entry is None:  # compiled on the first call, as every tool is
                import jitgrad

                g = jitgrad.grad(problem, wrt=wrt, parallel=parallel)
                entry, source = g.njit(*data), g.source(*data)  # the compiled entry itself
            return entry(*data)

        if parallel:
            call.parallel_loops = lambda: "in _prange(" in source

        def to_numpy(grads):
            return tuple(_as_grad(data[k], v) for k, v in zip(wrt, grads))

        return call, to_numpy

    return build


def _primal_tool(fn):
    def build(data):
        def call():
            return fn(*data)

        return call, float

    return build


def _as_grad(arg, g):
    if isinstance(arg, float):
        return float(g)
    return np.asarray(g, dtype=np.float64)


def tools(case, peer_systems=(), threads=Threads()):
    """The tools for ``case`` in report order (see module doc), each given ``threads``."""
    import jitgrad

    s = case.suite
    par = threads.parallel
    out = [
        Tool("jitgrad", "grad",
             _grad_tool(lambda: jitgrad.grad(s.problem, wrt=s.wrt, parallel=par), s.wrt),
             cheap=True, memory_traced=True, fresh_process="jitgrad",
             style="parallel=True" if par else ""),
    ]
    out.append(Tool("jitgrad entry", "grad", _entry_tool(s.problem, s.wrt, par), cheap=True,
                    memory_traced=True, fresh_process=None, style="no Python call in front"))
    tape = tape_module()
    if not isinstance(tape, str):
        fn, style = tape_variants.VARIANTS.get(s.name, (s.problem, ""))
        out.append(Tool("jitgrad.tape", "grad",
                        _grad_tool(lambda: tape.grad(fn, wrt=s.wrt), s.wrt),
                        cheap=False, memory_traced=True, fresh_process=None, style=style))
    if s.grad is not None:
        out.append(Tool("hand-written Numba", "grad", _grad_tool(lambda: s.grad, s.wrt),
                        cheap=True, memory_traced=True, fresh_process="handwritten"))
    out.append(Tool("Numba primal", "primal", _primal_tool(s.primal), cheap=True,
                    memory_traced=True, fresh_process="primal"))
    python_kind = "NumPy" if s.name == "two_layer" else "Python"
    out.append(Tool(f"{python_kind} primal", "primal", _primal_tool(s.problem),
                    cheap=s.name == "two_layer", memory_traced=True, fresh_process=None))
    for system in peer_systems if s.name not in PEERLESS else ():
        out.append(Tool(
            system, "grad",
            lambda data, system=system: peers.make_tool(system, s.name, data, s.wrt),
            cheap=system == "jax", memory_traced=system == "autograd", fresh_process=None,
            style=peers.STYLE.get((system, s.name), "array code"),
        ))
    return [dataclasses.replace(tool, threads=threads.column(tool.name, s.problem))
            for tool in out]
