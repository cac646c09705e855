"""``python -m bench.npbench PATH``: jitgrad's gradients of the NPBench kernels (issue #45).

Usage (from the repository root)::

    python -m bench.npbench ~/src/npbench                      # every kernel, preset S (hours)
    python -m bench.npbench ~/src/npbench --kernels atax,gemm,jacobi_1d --rounds 5 \\
        --markdown out.md --json out.json --plot out.png

NPBench (github.com/spcl/npbench, BSD-3-Clause) is not part of this repository and none of its
code is copied here: PATH is the user's checkout. This module reads its
``bench_info/<kernel>.json`` (parameters per preset, the initialisation function and its
arguments, the kernel's input, array and output arguments) and imports
``npbench/benchmarks/<relative_path>/<module>{,_numpy,_numba_n,_jax}.py`` from PATH at run
time. A kernel is named by its ``bench_info`` file's stem (``jacobi_1d``, ``k2mm``, ...).

**The loss.** For each kernel the inputs come from NPBench's own initialisation function at the
preset's parameters (``--preset``, default S; `PARAM_OVERRIDES` and ``--set`` change single
parameters, for kernels that need too much memory, say). The loss is the sum of the kernel's
float outputs: of every float value the NumPy version returns, plus every float array that
``bench_info`` lists under ``output_args`` (written in place), an array returned that *is* such
an argument counted once; when both are empty (``doitgen``: the kernel writes ``A`` but the
json lists no output), the float arrays the kernel writes. The arrays the kernel writes are
copied first, so the loss is a function of its inputs, called again and again on the same data;
it is differentiated with respect to every float array input. A kernel whose summed outputs are
complex is skipped (status ``complex``); one without a float array input or a float output is
skipped as ``integer``. The NumPy version is run once first (in its own process) to learn all
that: what it returns, which arguments it writes, the dtypes (the *plan*, in the JSON).

**The engines**, each in its own process per kernel (``--worker``), on the same data (the NumPy
process pickles what the initialisation made; the others load it):

* ``jitgrad``: ``jitgrad.grad(loss, wrt=<the float arrays>)`` of a module generated at run time
  into the run's temporary folder: ``def loss(<input args>)`` copies the written arrays, calls
  the kernel of ``<module>_numpy.py`` (imported from PATH; jitgrad follows the call into that
  module) and returns ``np.sum(out) + ...``.
* ``jax``: ``jax.jit(jax.grad(loss, argnums=<the float arrays>))`` where this ``loss`` calls
  ``<module>_jax.py``'s kernel and sums the float arrays it returns (JAX's versions return what
  the NumPy ones write), x64 enabled, ``block_until_ready`` in the timed call, the arrays made
  JAX arrays once before. The kernel's own ``@jax.jit`` is taken off (its ``__wrapped__``):
  the outer ``jax.jit`` compiles the whole loss anyway, and under the kernel's jit an integer
  argument such as ``TSTEPS`` is traced, which turns ``lax.fori_loop`` into a ``while_loop``
  that reverse mode refuses (``jacobi_1d``). Its loss must have NumPy's value (relative
  difference ≤ ``--tol``): otherwise JAX's version computes another function (``gramschmidt``'s
  JAX version does not return ``A``, which the NumPy one writes), said in the notes, and JAX
  is neither compared nor counted in the geometric mean.
* ``numpy``: the NumPy primal, the same loss in plain Python around ``<module>_numpy.py``.
* ``numba``: the Numba primal, the same around ``<module>_numba_n.py`` (``nopython``, not
  parallel; ``_numba_np`` / ``_numba_npr`` where a kernel has no ``_n``), the copies and sums
  in NumPy.

**One thread.** Every child gets ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
``MKL_NUM_THREADS``, ``NUMBA_NUM_THREADS`` = 1, ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`` and ``JAX_PLATFORMS=cpu``; ``NUMBA_THREADING_LAYER`` is
``workqueue`` unless set. ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE`` are passed on as they
are (the header says their values).

**First call.** Each engine's process imports its modules and loads the data before its clock
starts; the clock covers building the function and its first call: ``jitgrad.grad(...)`` and
the call, with an empty ``JITGRAD_CACHE_DIR`` (a fresh temporary folder per kernel, so jitgrad
compiles), and a ``NUMBA_CACHE_DIR`` holding only jitgrad's runtime (``--runtime warm``, the
default: made ready once per run by ``python -m jitgrad warm``, as on a machine where jitgrad
was installed and its demo run, and copied into each kernel's folder; ``--runtime cold``: empty,
so the first call compiles the runtime helpers it uses too); JAX's ``jax.jit(jax.grad(...))``
and its first call (tracing and XLA); the Numba primal's first call (Numba compiling the
kernel); the NumPy primal's first call. Numba's one-off initialisation in a process is inside
the clock for jitgrad and Numba.

**Checks**, before timing: jitgrad's gradient against JAX's, per argument max |diff| / max |JAX|
≤ ``--tol`` (when JAX's loss has NumPy's value; entries below ``ZERO`` (1 + |loss|) / max(1,
max |x|) count as zero, rounding noise: NPBench's softmax sums to a constant, so both gradients
are noise; a float32 kernel within ``TOL32``, its floor scaled by the epsilons' ratio; an argument
whose JAX gradient has NaN or inf entries where jitgrad's has none is not compared, said in the
notes: ``nbody``'s square root at 0, on the pairs' diagonal whose cotangent is 0), and
against 5-point central differences of the
NumPy loss (`bench.oracle.central_differences`) on 2 entries per argument (the largest |grad|
and one drawn), fewer when the NumPy loss is too slow for ``--fd-budget`` seconds. A failure of
either makes the kernel ``wrong`` (said loudly on stderr and in the notes, with what the other
check said), except that when jitgrad's and JAX's gradients differ, central differences are
also taken at the entry where they differ most (per argument that differs): if they agree with
jitgrad's and refute JAX's, JAX's version differentiates another function with NumPy's value on
this data (``trmm``'s reads the other triangle of a symmetric matrix), said in the notes, and
JAX is neither compared nor counted in the geometric mean, as for another loss. The Numba
primal's value against NumPy's is a note when it differs.

**Timing.** The engines that got ready are timed in ``--rounds`` interleaved rounds, the order
rotated every round (jitgrad, JAX, NumPy, Numba, then JAX, NumPy, Numba, jitgrad, ...): in each
round every process runs ``gc.collect()``, one untimed settling call and one timed block of
calls lasting about ``--target-block`` seconds (the count fixed from its second call), while the
other processes wait. Only one process runs at a time. Medians per call; ratios divide medians
of the same run: gradient / Numba primal, gradient / NumPy primal, JAX / jitgrad (above 1:
jitgrad is faster).

**Status** per kernel (jitgrad's): ``ok`` (gradient checked), ``unchecked`` (no JAX to compare
with and the NumPy loss too slow for central differences), ``refused`` (jitgrad's
`UnsupportedError` / `SignatureError` / `MissingDependencyError`: the first line of its message
in the notes), ``crashed`` (any other exception, or the process died: exit status and the last
line of its log), ``timeout`` (no gradient within ``--timeout`` seconds of its process's start),
``wrong``, ``complex``, ``integer``, ``primal failed`` (the NumPy version itself failed),
``harness error`` (a bug here; the traceback on stderr). Ctrl-C reports the kernels done.
The other engines' cells say ``failed`` / ``timeout`` / ``crashed`` / ``absent`` (no such file
in NPBench) the same way, with the message in the notes.

Output: markdown on stdout (progress and loud failures on stderr), and with ``--markdown``,
``--json``, ``--plot`` the same table, the full results, and a PNG (matplotlib; the plot is
skipped with a message if it does not import). The summary gives the counts per status, the
geometric means of the ratios, the median and maximum first calls, and issue #45's targets.
``--keep-temp`` keeps the temporary folder (generated loss modules, each process's log);
``--from-json FILE`` renders a ``--json`` file again (stdout, ``--markdown``, ``--plot``) without
running anything.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import glob
import importlib
import json
import math
import os
import pickle
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENGINES = ("jitgrad", "jax", "numpy", "numba")
ENGINE_TITLES = {"jitgrad": "jitgrad", "jax": "JAX", "numpy": "NumPy primal",
                 "numba": "Numba primal"}
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "JAX_PLATFORMS": "cpu",
}
NUMBA_SUFFIXES = ("_numba_n", "_numba_np", "_numba_npr")  # nopython variants, serial first
FD_ENTRIES = 2  # central-difference entries per differentiable argument
FD_EVALS_PER_ENTRY = 8  # the loss evaluations an entry takes, for the budget (4 per step)
# Gradient entries below ZERO * (1 + |loss|) / max(1, max |x|) are rounding noise: moving x by
# its own size would change the loss by less than ZERO of it. The sum of a softmax's outputs is
# constant; both gradients of it are such noise, and their ratio means nothing.
ZERO = 1e-12
# float32 (NPBench's softmax): rounding is 2**29 times coarser. Its values and gradients are
# compared within max(--tol, TOL32), and ZERO grows by the ratio of the two epsilons.
TOL32 = 1e-3
EPS_RATIO32 = 2.0 ** 29

# Parameters that replace a preset's, per kernel: {kernel: {preset: {parameter: value}}}, for
# kernels that need too much memory (or time) at a preset. Applied before ``--set``; the
# header and each row's JSON say which were used. None yet: fill in from a full run.
PARAM_OVERRIDES: dict[str, dict[str, dict]] = {}

REFUSALS = ("UnsupportedError", "NotReversible", "SignatureError", "MissingDependencyError")


# --------------------------------------------------------------------------------------
# NPBench's layout (no NPBench code: paths, names and the json's fields)
# --------------------------------------------------------------------------------------


class Kernel:
    """One ``bench_info/<name>.json`` of the checkout at ``root``."""

    def __init__(self, name, info, root):
        self.name = name
        self.info = info
        self.root = root

    @property
    def func(self):
        return self.info["func_name"]

    @property
    def args(self):
        return list(self.info["input_args"])

    @property
    def output_args(self):
        return list(self.info.get("output_args", []))

    def module(self, suffix=""):
        """Dotted module name of ``<module_name><suffix>.py``, importable with ``root`` on
        ``sys.path`` (``npbench`` and ``npbench.benchmarks...`` are namespace packages)."""
        package = "npbench.benchmarks." + self.info["relative_path"].replace("/", ".")
        return f"{package}.{self.info['module_name']}{suffix}"

    def file(self, suffix=""):
        return os.path.join(self.root, "npbench", "benchmarks",
                            *self.info["relative_path"].split("/"),
                            self.info["module_name"] + suffix + ".py")

    def numba_suffix(self):
        return next((s for s in NUMBA_SUFFIXES if os.path.exists(self.file(s))), None)

    def has_jax(self):
        return os.path.exists(self.file("_jax"))

    def parameters(self, preset, extra=None):
        """The preset's parameters, with `PARAM_OVERRIDES` and then ``extra`` applied;
        returns ``(parameters, {changed name: (preset value, new value)})``."""
        presets = self.info["parameters"]
        if preset not in presets:
            raise KeyError(f"{self.name} has no preset {preset!r} (it has {sorted(presets)})")
        params = dict(presets[preset])
        changed = {}
        for source in (PARAM_OVERRIDES.get(self.name, {}).get(preset, {}), extra or {}):
            for k, v in source.items():
                if k not in params:
                    raise KeyError(f"{self.name} has no parameter {k!r} (it has "
                                   f"{sorted(params)})")
                changed[k] = (presets[preset][k], v)
                params[k] = v
        return params, changed


def load_kernels(root):
    """``{name: Kernel}`` for every ``bench_info/*.json`` under ``root``, sorted by name."""
    files = sorted(glob.glob(os.path.join(root, "bench_info", "*.json")))
    if not files:
        raise FileNotFoundError(f"{root} has no bench_info/*.json: is it an NPBench checkout?")
    out = {}
    for path in files:
        with open(path) as fh:
            info = json.load(fh)["benchmark"]
        name = os.path.splitext(os.path.basename(path))[0]
        out[name] = Kernel(name, info, root)
    return out


def parse_sets(items):
    """``["gemm.NI=500", ...]`` -> ``{"gemm": {"NI": 500}}`` (values as JSON, else strings)."""
    out = {}
    for item in items or ():
        try:
            target, value = item.split("=", 1)
            kernel, param = target.split(".", 1)
        except ValueError:
            raise ValueError(f"--set {item!r}: expected KERNEL.PARAMETER=VALUE") from None
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pass
        out.setdefault(kernel, {})[param] = value
    return out


def init_data(kernel, params):
    """NPBench's data: the parameters, and the initialisation function's outputs under the
    json's names (as NPBench's ``Benchmark.get_data`` assigns them). Needs ``kernel.root`` on
    ``sys.path``."""
    data = dict(params)
    init = kernel.info.get("init")
    if init:
        fn = getattr(importlib.import_module(kernel.module()), init["func_name"])
        made = fn(*[data[a] for a in init["input_args"]])
        names = init["output_args"]
        if len(names) == 1:
            data[names[0]] = made
        else:
            data.update(zip(names, made))
    return data


# --------------------------------------------------------------------------------------
# the loss: plan (from one call of the NumPy version), generated source, closures
# --------------------------------------------------------------------------------------


def value_kind(v):
    """dtype kind of a returned value: 'f', 'c', 'i', 'b' or 'o' (anything else)."""
    import numpy as np

    if isinstance(v, np.ndarray):
        return v.dtype.kind if v.dtype.kind in "fcib" else ("i" if v.dtype.kind == "u" else "o")
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if isinstance(v, (int, np.integer)):
        return "i"
    if isinstance(v, (float, np.floating)):
        return "f"
    if isinstance(v, (complex, np.complexfloating)):
        return "c"
    return "o"


def plan_from_probe(info, before, after, out):
    """What the loss of the kernel described by ``info`` (the json's ``benchmark``) sums, from
    one call of its NumPy version: ``before`` the input arguments by name, ``after`` the copies
    the call got (written in place or not), ``out`` what it returned. Returns a JSON-ready
    dict: ``args`` (the call's arguments), ``wrt`` (float array inputs), ``copy`` (arrays to copy
    before the call: written, or listed as outputs), ``returns`` (None, ``"single"`` or the
    tuple's length), ``terms`` (``[["ret", k, form] | ["arg", name, "array"]]``, form
    ``"array"`` or ``"scalar"``), ``skip`` (None, ``"complex"`` or ``"integer"``), ``notes``."""
    import numpy as np

    args = list(info["input_args"])
    arrays = [n for n in args if isinstance(before[n], np.ndarray)]
    written = [n for n in arrays
               if not np.array_equal(before[n], after[n],
                                     equal_nan=before[n].dtype.kind in "fc")]
    if out is None or (isinstance(out, tuple) and not out):
        returns, rets = None, []
    elif isinstance(out, (tuple, list)):
        returns, rets = len(out), list(out)
    else:
        returns, rets = "single", [out]
    listed = [n for n in info.get("output_args", []) if n in arrays]
    notes = []
    terms, complex_outputs = [], []
    for k, r in enumerate(rets):
        kind = value_kind(r)
        alias = next((n for n in arrays if r is after[n]), None)
        if kind == "c":
            complex_outputs.append(f"returned value {k}")
        elif kind != "f":
            what = r.dtype if isinstance(r, np.ndarray) else type(r).__name__
            notes.append(f"returned value {k} ({what}) not summed: not float")
        elif alias is not None and alias in listed:
            notes.append(f"returned value {k} is the argument {alias}: summed once")
        else:
            terms.append(["ret", k, "array" if isinstance(r, np.ndarray) else "scalar"])
    candidates = listed
    if not terms and not listed and written:
        candidates = written
        notes.append(f"bench_info lists no outputs and the kernel returns none: the loss sums "
                     f"the arrays it writes ({', '.join(written)})")
    for n in candidates:
        kind = after[n].dtype.kind
        if kind == "c":
            complex_outputs.append(f"output {n}")
        elif kind == "f":
            terms.append(["arg", n, "array"])
        else:
            notes.append(f"output {n} ({after[n].dtype}) not summed: not float")
    unlisted = [n for n in written if n not in listed and n not in candidates]
    if unlisted:
        notes.append(f"writes {', '.join(unlisted)} (not listed as outputs): copied, not summed")
    wrt = [n for n in arrays if before[n].dtype.kind == "f"]
    skip = None
    if complex_outputs:
        skip = "complex"
        notes.append("complex outputs: " + ", ".join(complex_outputs))
    elif not wrt:
        skip = "integer"
        notes.append("no float array input")
    elif not terms:
        skip = "integer"
        notes.append("no float output")
    copy = [n for n in arrays if n in written or n in listed]
    summed = [rets[k] if w == "ret" else after[k] for w, k, _ in terms]
    float32 = any(np.result_type(x) == np.float32 for x in summed + [before[n] for n in wrt])
    return {"args": args, "wrt": wrt, "copy": copy, "returns": returns, "terms": terms,
            "skip": skip, "notes": notes, "float32": bool(float32)}


def _term_source(term):
    where, key, form = term
    name = f"npb_out{key}" if where == "ret" else key
    return f"np.sum({name})" if form == "array" else name


def wrapper_source(plan, module, func, kernel_name=""):
    """The source of the module whose ``loss`` jitgrad differentiates (see the module doc)."""
    args = plan["args"]
    taken = {"np", "npb_kernel"} | {f"npb_out{k}" for k in range(len(args) + 64)}
    clash = [a for a in args if a in taken or not a.isidentifier()]
    if clash:
        raise ValueError(f"argument names the generated loss cannot use: {clash}")
    call = f"npb_kernel({', '.join(args)})"
    if plan["returns"] is None:
        line = call
    elif plan["returns"] == "single":
        line = f"npb_out0 = {call}"
    else:
        targets = ", ".join(f"npb_out{k}" for k in range(plan["returns"]))
        line = f"{targets}{',' if plan['returns'] == 1 else ''} = {call}"
    body = [f"    {n} = {n}.copy()" for n in plan["copy"]]
    body += [f"    {line}", "    return " + " + ".join(_term_source(t) for t in plan["terms"])]
    return "\n".join([
        f'"""The loss of NPBench\'s {kernel_name or func}: the sum of its float outputs.',
        "",
        "Generated at run time by jitgrad's bench.npbench; not part of jitgrad or NPBench.",
        '"""',
        "",
        "import numpy as np",
        "",
        f"from {module} import {func} as npb_kernel",
        "",
        "",
        f"def loss({', '.join(args)}):",
        *body,
        "",
    ])


def loss_function(plan, fn):
    """The same loss as `wrapper_source`'s, as a closure around ``fn`` (the NumPy or Numba
    kernel), summing in the same order."""
    import numpy as np

    pos = {n: i for i, n in enumerate(plan["args"])}
    copy = [pos[n] for n in plan["copy"]]
    returns, terms = plan["returns"], plan["terms"]

    def loss(*values):
        values = list(values)
        for i in copy:
            values[i] = values[i].copy()
        out = fn(*values)
        outs = () if returns is None else (out,) if returns == "single" else tuple(out)
        total = None
        for where, key, form in terms:
            v = outs[key] if where == "ret" else values[pos[key]]
            x = np.sum(v) if form == "array" else v
            total = x if total is None else total + x
        return total

    return loss


def jax_loss(plan, fn, data):
    """JAX's loss: ``fn`` (the JAX version's kernel) on the arrays, the float arrays it
    returns summed. Takes the array arguments as ``(*wrt, *other arrays)``; returns ``(loss,
    the names in that order)``. Scalars (sizes, coefficients) stay Python / NumPy constants."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    arrays = [n for n in plan["args"] if isinstance(data[n], np.ndarray)]
    traced = plan["wrt"] + [n for n in arrays if n not in plan["wrt"]]
    const = {n: data[n] for n in plan["args"] if n not in traced}

    def loss(*xs):
        values = {**const, **dict(zip(traced, xs))}
        out = fn(*[values[n] for n in plan["args"]])
        total = 0.0
        for leaf in jax.tree_util.tree_leaves(out):
            leaf = jnp.asarray(leaf)
            if jnp.issubdtype(leaf.dtype, jnp.floating):
                total = total + jnp.sum(leaf)
        return total

    return loss, traced


# --------------------------------------------------------------------------------------
# worker processes: one engine of one kernel each
# --------------------------------------------------------------------------------------


def _rss_mb():
    """Peak resident memory of this process's own address space, MB: ``VmHWM`` (Linux). Not
    ``ru_maxrss``, which keeps the parent's peak across fork and exec."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _first_line(e):
    text = str(e).strip()
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return f"{type(e).__name__}: {line}"[:400]


def _error(e, status="failed"):
    import traceback

    traceback.print_exc()  # to the log
    return {"status": status, "error": _first_line(e),
            "message": "\n".join(str(e).splitlines()[:30])[:4000]}


class _Engine:
    """Set up in a worker: ``self.fn`` (the timed call), ``self.ready`` (the first message)."""

    def __init__(self, spec):
        import numpy as np

        self.spec = spec
        self.kernel = Kernel(spec["kernel"], spec["info"], spec["root"])
        sys.path.insert(0, spec["root"])
        self.fn = None
        if spec["engine"] == "numpy":
            self.ready = self._numpy()
        else:
            with open(spec["data"], "rb") as fh:
                self.data = pickle.load(fh)
            self.plan = spec["plan"]
            self.values = [self.data[n] for n in self.plan["args"]]
            self.ready = getattr(self, "_" + spec["engine"])()
        if self.fn is not None and self.ready.get("status", "ok") == "ok":
            t0 = time.perf_counter()
            self.fn()
            warm = time.perf_counter() - t0
            self.ready.update(status="ok", warm=warm,
                              inner=max(1, math.ceil(spec["target_block"] / max(warm, 1e-9))))
        self.ready["rss_mb"] = _rss_mb()
        self.np = np

    def _numpy(self):
        import numpy as np

        params = self.spec["params"]
        data = init_data(self.kernel, params)
        with open(self.spec["data"], "wb") as fh:
            pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
        fn = getattr(importlib.import_module(self.kernel.module("_numpy")), self.kernel.func)
        args = self.kernel.args
        before = {n: data[n] for n in args}
        after = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in before.items()}
        try:
            t0 = time.perf_counter()
            out = fn(*[after[n] for n in args])
            first = time.perf_counter() - t0
            plan = plan_from_probe(self.kernel.info, before, after, out)
        except Exception as e:  # noqa: BLE001 -- any failure is a result, reported
            return _error(e)
        self.plan, self.data = plan, data
        self.values = [data[n] for n in args]
        if plan["skip"]:
            return {"status": "skip", "plan": plan, "first_call": first}
        self.loss = loss_function(plan, fn)
        value = float(self.loss(*self.values))
        self.fn = lambda: self.loss(*self.values)
        scales = {n: float(np.max(np.abs(data[n]), initial=0.0)) for n in plan["wrt"]}
        return {"plan": plan, "first_call": first, "value": value, "scales": scales}

    def _numba(self):
        import numba  # noqa: F401 -- imported before the clock

        try:
            fn = getattr(importlib.import_module(self.kernel.module(self.spec["suffix"])),
                         self.kernel.func)
            loss = loss_function(self.plan, fn)
            t0 = time.perf_counter()
            value = float(loss(*self.values))
            first = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 -- any failure is a result, reported
            return _error(e)
        self.fn = lambda: loss(*self.values)
        return {"first_call": first, "value": value}

    def _jitgrad(self):
        import numba  # noqa: F401 -- imported before the clock, as jitgrad imports it
        import numpy as np

        import jitgrad

        sys.path.insert(0, self.spec["wrapper_dir"])
        loss = importlib.import_module(self.spec["wrapper_module"]).loss
        wrt = tuple(self.plan["wrt"])
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            g = jitgrad.grad(loss, wrt=wrt)
            grads = g(*self.values)
            first, cpu = time.perf_counter() - t0, time.process_time() - c0
        except Exception as e:  # noqa: BLE001 -- refused or crashed: a result, reported
            refused = any(type(e).__name__ == r for r in REFUSALS) or isinstance(
                e, (jitgrad.UnsupportedError, jitgrad.SignatureError,
                    jitgrad.MissingDependencyError))
            return _error(e, "refused" if refused else "crashed")
        np.savez(self.spec["grads"], **{n: np.asarray(x) for n, x in zip(wrt, grads)})
        self.fn = lambda: g(*self.values)
        return {"first_call": first, "first_cpu": cpu, "grads": self.spec["grads"],
                "code": code_size(g)}

    def _jax(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import numpy as np

        try:
            fn = getattr(importlib.import_module(self.kernel.module("_jax")), self.kernel.func)
            fn = getattr(fn, "__wrapped__", fn)  # see the module doc
            loss, traced = jax_loss(self.plan, fn, self.data)
            xs = [jnp.asarray(self.data[n]) for n in traced]
            jax.block_until_ready(xs)
            argnums = tuple(range(len(self.plan["wrt"])))
            t0 = time.perf_counter()
            g = jax.jit(jax.grad(loss, argnums=argnums))
            grads = jax.block_until_ready(g(*xs))
            first = time.perf_counter() - t0
            value = float(jax.jit(loss)(*xs))
        except Exception as e:  # noqa: BLE001 -- any failure is a result, reported
            return _error(e)
        np.savez(self.spec["grads"],
                 **{n: np.asarray(x) for n, x in zip(self.plan["wrt"], grads)})
        self.fn = lambda: jax.block_until_ready(g(*xs))
        return {"first_call": first, "value": value, "grads": self.spec["grads"]}

    def block(self):
        from bench.timing import _time_block

        gc.collect()
        for _ in range(self.spec["settle"]):
            self.fn()
        return _time_block(self.fn, self.ready["inner"])

    def central_differences(self, grads_path, budget):
        """jitgrad's gradient (``grads_path``) against the NumPy loss's central differences on
        `FD_ENTRIES` entries per argument, fewer (or none) if that would not fit ``budget``
        seconds at the loss's warm time."""
        from bench import oracle

        np = self.np
        wrt = self.plan["wrt"]
        per_eval = max(self.ready.get("warm", 0.0), 1e-6)
        entries = int(budget / (FD_EVALS_PER_ENTRY * per_eval))
        if entries < 1:
            return {"status": "skipped", "detail": f"the NumPy loss takes {per_eval:.3g} s: "
                    f"no entry fits --fd-budget {budget:g} s", "entries": 0}
        sample = FD_ENTRIES if entries >= FD_ENTRIES * len(wrt) else 1
        names = wrt if sample * len(wrt) <= entries else wrt[:entries]
        with np.load(grads_path) as z:
            grads = [z[n] for n in names]
        pos = [self.plan["args"].index(n) for n in names]
        c = oracle.central_differences(self.loss, tuple(self.values), pos, grads,
                                       sample=sample, rounding=self._rounding())
        detail = c.detail.replace("d/arg", "d/")
        for k, n in zip(pos, names):
            detail = detail.replace(f"d/{k}[", f"d/{n}[")
        return {"status": c.status, "detail": detail, "worst": c.worst,
                "entries": sample * len(names), "args": names}

    def _rounding(self):
        """The NumPy loss's relative rounding error: float32's is 2**29 times float64's
        (conv2d_bias: its float32 sum moves by nothing at steps of 1e-4)."""
        from bench import oracle

        return oracle.ROUNDING * (EPS_RATIO32 if self.plan.get("float32") else 1.0)

    def differences_at(self, grads_paths, at):
        """Each gradient file of ``grads_paths`` against the NumPy loss's central differences
        at the entries ``at`` (argument name -> index): the status of each."""
        from bench import oracle

        names = list(at)
        pos = [self.plan["args"].index(n) for n in names]
        out = []
        for path in grads_paths:
            with self.np.load(path) as z:
                grads = [z[n] for n in names]
            c = oracle.central_differences(self.loss, tuple(self.values), pos, grads,
                                           at=[[tuple(at[n])] for n in names],
                                           rounding=self._rounding())
            out.append({"status": c.status, "detail": c.detail})
        return {"checks": out}


def code_size(g):
    """The size of ``g``'s generated module for its last call: lines, ``for``/``while`` loops
    and statements (non-blank, non-comment lines) of the whole module and of its forward and
    adjoint passes (`GradFunction.source`'s parts), and its helper functions (``def`` lines
    other than the entry's). None when the source is not at hand."""
    try:
        whole = g.source()
        parts = {"module": whole, "forward": g.source("forward"),
                 "adjoint": g.source("adjoint")}
    except Exception:  # noqa: BLE001 -- a size is a note, never a failure
        return None
    out = {}
    for name, text in parts.items():
        lines = text.splitlines()
        stmts = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
        out[name] = {"lines": len(lines), "statements": len(stmts),
                     "loops": sum(s.startswith(("for ", "while ")) for s in stmts)}
    out["functions"] = sum(ln.lstrip().startswith("def ") for ln in whole.splitlines())
    return out


def worker(spec):
    """Body of ``--worker SPEC``: JSON lines on the original stdout (anything the kernels print
    goes to stderr, the log), commands on stdin: ``block``, ``fd``, ``quit``."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def send(msg):
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    try:
        engine = _Engine(spec)
    except Exception as e:  # noqa: BLE001 -- reported to the parent as the row's data
        send(_error(e, "crashed"))
        return
    send(engine.ready)
    if engine.ready.get("status") != "ok":
        return
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "block":
            send({"seconds": engine.block()})
        elif cmd["cmd"] == "fd":
            try:
                send(engine.central_differences(cmd["grads"], cmd["budget"]))
            except Exception as e:  # noqa: BLE001 -- reported to the parent
                send(_error(e))
        elif cmd["cmd"] == "fd_at":
            try:
                send(engine.differences_at(cmd["grads"], cmd["at"]))
            except Exception as e:  # noqa: BLE001 -- reported to the parent
                send(_error(e))
        else:
            send({"rss_mb": _rss_mb()})
            return


# --------------------------------------------------------------------------------------
# the parent: workers, checks, rounds
# --------------------------------------------------------------------------------------


def _say(msg):
    print(msg, file=sys.stderr, flush=True)


class Worker:
    """A ``--worker`` process; ``ask`` sends a command and waits for its answer, at most
    ``timeout`` seconds (then the process is killed: ``{"status": "timeout"}``)."""

    def __init__(self, spec, env, log_path):
        self.log_path = log_path
        self.start = time.time()
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bench.npbench", "--worker", json.dumps(spec)],
                cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                text=True)
        self.alive = True

    def recv(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.kill()
            return {"status": "timeout", "error": f"no answer within {timeout:g} s"}
        line = self.proc.stdout.readline()
        if not line:
            rc = self.proc.wait()
            self.alive = False
            why = (f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}")
            if rc == -signal.SIGKILL:
                why += " (out of memory?)"
            return {"status": "crashed", "error": f"{why}: {self.log_tail()}"}
        return json.loads(line)

    def ask(self, cmd, timeout):
        if not self.alive:
            return {"status": "crashed", "error": "the process is gone"}
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self.recv(timeout)
        return self.recv(timeout)

    def log_tail(self):
        try:
            with open(self.log_path) as fh:
                lines = [s.strip() for s in fh.read().splitlines() if s.strip()]
        except OSError:
            return "(no log)"
        return (lines[-1] if lines else "(empty log)")[:300]

    def kill(self):
        if self.alive:
            self.proc.kill()  # only this worker, which this process started
            self.proc.wait()
            self.alive = False

    def close(self, timeout=30.0):
        """Ask a live worker to quit (its answer: peak RSS), and make sure it is gone."""
        out = None
        if self.alive and self.proc.poll() is None:
            out = self.ask({"cmd": "quit"}, timeout)
        if self.proc.poll() is None:
            self.alive = True
            self.kill()
        else:
            self.proc.wait()
        self.alive = False
        return out


def child_env(folder, runtime_cache):
    """A worker's environment: one thread everywhere, caches in ``folder``."""
    env = dict(os.environ)
    env.update(THREAD_ENV)
    env.setdefault("NUMBA_THREADING_LAYER", "workqueue")
    env["JITGRAD_CACHE_DIR"] = os.path.join(folder, "jitgrad-cache")
    env["NUMBA_CACHE_DIR"] = os.path.join(folder, "numba-cache")
    if runtime_cache is not None and not os.path.exists(env["NUMBA_CACHE_DIR"]):
        shutil.copytree(runtime_cache, env["NUMBA_CACHE_DIR"])
    return env


def rel_error(got, ref, floor=0.0):
    """max |got - ref| / max(max |ref|, floor) (the absolute difference when both are 0); inf
    when shapes differ or ``got`` is not finite."""
    import numpy as np

    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return math.inf
    if not got.size:
        return 0.0
    diff, scale = float(np.max(np.abs(got - ref))), max(float(np.max(np.abs(ref))), floor)
    return diff / scale if scale > 0 else diff


def rounding_floor(value, scale, float32=False):
    """`ZERO`'s bound for the gradient entries of an argument of largest |entry| ``scale``, for
    a loss of value ``value`` (``float32``: computed in single precision)."""
    return ZERO * (EPS_RATIO32 if float32 else 1.0) * (1.0 + abs(value)) / max(1.0, scale)


def _close(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)


def run_kernel(kernel, opts, folder, runtime_cache):
    """Every engine of ``kernel``: first calls, checks, interleaved rounds. Returns the row."""
    import numpy as np

    params, changed = kernel.parameters(opts.preset, opts.sets.get(kernel.name))
    row = {"kernel": kernel.name, "params": params, "overrides": changed, "status": None,
           "engines": {}, "checks": {}, "notes": [], "ratios": {}}
    os.makedirs(folder, exist_ok=True)
    env = child_env(folder, runtime_cache)
    base = {"kernel": kernel.name, "info": kernel.info, "root": kernel.root, "params": params,
            "data": os.path.join(folder, "data.pkl"), "target_block": opts.target_block,
            "settle": 1}
    workers = {}

    def start(engine, **extra):
        spec = {**base, "engine": engine, **extra}
        w = Worker(spec, env, os.path.join(folder, f"{engine}.log"))
        workers[engine] = w
        ready = w.recv(opts.timeout)
        ready.setdefault("status", "ok")
        row["engines"][engine] = ready
        _say(f"    {engine}: {_brief(ready)}")
        if ready["status"] not in ("ok",):
            w.close()
        return ready

    try:
        ready = start("numpy")
        if ready["status"] == "skip":
            row["plan"] = ready["plan"]
            row["status"] = ready["plan"]["skip"]
            row["notes"] += ready["plan"]["notes"]
            ready["status"] = "ok"
            return row
        if ready["status"] != "ok":
            row["status"] = "primal failed"  # the notes say why (the NumPy engine's error)
            return row
        plan = row["plan"] = ready["plan"]
        row["notes"] += plan["notes"]
        wrapper_dir = os.path.join(folder, "wrapper")
        os.makedirs(wrapper_dir, exist_ok=True)
        wrapper_module = "npb_loss_" + kernel.name
        with open(os.path.join(wrapper_dir, wrapper_module + ".py"), "w") as fh:
            fh.write(wrapper_source(plan, kernel.module("_numpy"), kernel.func, kernel.name))
        start("jitgrad", plan=plan, wrapper_dir=wrapper_dir, wrapper_module=wrapper_module,
              grads=os.path.join(folder, "grads_jitgrad.npz"))
        if "jax" not in opts.engines:
            row["engines"]["jax"] = {"status": "not run"}
        elif kernel.has_jax():
            start("jax", plan=plan, grads=os.path.join(folder, "grads_jax.npz"))
        else:
            row["engines"]["jax"] = {"status": "absent"}
        suffix = kernel.numba_suffix()
        if "numba" not in opts.engines:
            row["engines"]["numba"] = {"status": "not run"}
        elif suffix:
            start("numba", plan=plan, suffix=suffix)
            row["numba_variant"] = suffix.lstrip("_")
        else:
            row["engines"]["numba"] = {"status": "absent"}
        _check(row, workers, opts, np)
        if not opts.first_call_only:
            _rounds(row, workers, opts)
    finally:
        for engine, w in workers.items():
            out = w.close()
            if out and "rss_mb" in out:
                row["engines"][engine]["rss_mb"] = out["rss_mb"]
    return row


def _jax_differentiates_another(row, workers, opts, np, errs, tol):
    """Whether JAX's version is of another function with the same value here (trmm's takes
    the other triangle of a symmetric ``A``): central differences of the NumPy loss at the
    entry where the two gradients differ most, per argument that differs, agree with
    jitgrad's and refute JAX's. Said in the notes either way."""
    eng = row["engines"]
    with np.load(eng["jitgrad"]["grads"]) as a, np.load(eng["jax"]["grads"]) as b:
        at = {n: [int(i) for i in np.unravel_index(int(np.argmax(np.abs(a[n] - b[n]))),
                                                   a[n].shape)]
              for n in errs if errs[n] > tol}
    out = workers["numpy"].ask({"cmd": "fd_at", "grads": [eng["jitgrad"]["grads"],
                                                           eng["jax"]["grads"]], "at": at},
                               opts.timeout)
    if "checks" not in out:
        return False
    mine, theirs = (c["status"] for c in out["checks"])
    where = ", ".join(f"d/{n}{at[n]}" for n in at)
    row["notes"].append(f"where jitgrad's and JAX's gradients differ most ({where}), central "
                        f"differences of the NumPy loss check jitgrad's: {mine}, JAX's: {theirs}")
    if mine == "ok" and theirs == "wrong":
        row["notes"].append("JAX's version differentiates another function with NumPy's value "
                            "on this data: JAX not compared, not in the geometric mean")
        return True
    return False


def _check(row, workers, opts, np):
    """Values against NumPy's, jitgrad's gradient against JAX's and central differences; sets
    ``row["status"]`` for a jitgrad that ran."""
    eng = row["engines"]
    ref = eng["numpy"].get("value")
    float32 = bool(row["plan"].get("float32"))
    tol = max(opts.tol, TOL32) if float32 else opts.tol
    jax = eng.get("jax", {})
    if jax.get("status") == "ok":
        jax["same_loss"] = _close(jax["value"], ref, tol)
        if not jax["same_loss"]:
            row["notes"].append(f"JAX's version computes another loss ({jax['value']!r}, NumPy "
                                f"{ref!r}): JAX not compared, not in the geometric mean")
    numba = eng.get("numba", {})
    if numba.get("status") == "ok" and not _close(numba["value"], ref, tol):
        row["notes"].append(f"the Numba primal's loss is {numba['value']!r}, NumPy's {ref!r}")
    jg = eng["jitgrad"]
    if jg["status"] != "ok":
        row["status"] = jg["status"]
        row["notes"].append(f"jitgrad: {jg.get('error')}")
        return
    wrong = []
    if jax.get("status") == "ok" and jax["same_loss"]:
        scales = eng["numpy"].get("scales", {})
        floors = {n: rounding_floor(ref, scales.get(n, 1.0), float32)
                  for n in row["plan"]["wrt"]}
        with np.load(jg["grads"]) as a, np.load(jax["grads"]) as b:
            # JAX's gradient not finite where jitgrad's is (nbody: sqrt at 0 on the pairs'
            # diagonal, whose cotangent is 0, gives 0 * inf): no reference; the central
            # differences decide
            nan = {n: int(np.sum(~np.isfinite(b[n]))) for n in row["plan"]["wrt"]
                   if np.all(np.isfinite(a[n])) and not np.all(np.isfinite(b[n]))}
            errs = {n: rel_error(a[n], b[n], floors[n]) for n in row["plan"]["wrt"]
                    if n not in nan}
            noise = [n for n in errs  # both all under the floor: equal, as zeros
                     if np.all(np.isfinite(a[n]))
                     and max(float(np.max(np.abs(a[n]), initial=0.0)),
                             float(np.max(np.abs(b[n]), initial=0.0))) < floors[n]]
            sizes = {n: b[n].size for n in nan}
        for n in noise:
            errs[n] = 0.0
        if nan:
            row["notes"].append(
                "JAX's gradient is not finite where jitgrad's is ("
                + ", ".join(f"d/{n}: {k} of {sizes[n]} entries NaN or inf"
                            for n, k in nan.items())
                + "): not compared there; central differences check jitgrad's")
    if jax.get("status") == "ok" and jax["same_loss"] and errs:
        worst = max(errs, key=errs.get)
        row["checks"]["jax"] = {"rel_err": errs[worst], "worst_arg": worst, "tol": tol,
                                "ok": errs[worst] <= tol, "rounding_only": noise}
        if noise:
            row["notes"].append(
                f"jitgrad's and JAX's d/{', d/'.join(noise)} are both rounding noise (every "
                f"entry < {ZERO:g}{' × 2^29 (float32)' if float32 else ''} (1 + |loss|) / "
                "max(1, max |x|)): the loss does not depend on "
                + ("it" if len(noise) == 1 else "them") + " beyond rounding")
        if errs[worst] > tol and _jax_differentiates_another(row, workers, opts, np, errs, tol):
            row["checks"]["jax"]["another_function"] = True
            jax["same_loss"] = False
        elif errs[worst] > tol:
            wrong.append(f"jitgrad's d/{worst} differs from JAX's by {errs[worst]:.2e} "
                         f"(max |diff| / max |JAX|; tolerance {tol:g})")
    fd = workers["numpy"].ask({"cmd": "fd", "grads": jg["grads"], "budget": opts.fd_budget},
                              opts.timeout)
    row["checks"]["fd"] = fd
    if fd.get("status") == "wrong":
        wrong.append(f"central differences of the NumPy loss: {fd['detail']}")
    elif fd.get("status") not in ("ok", "skipped", "unsettled"):
        row["notes"].append(f"central differences failed: {fd.get('error', fd.get('status'))}")
    if wrong:
        row["status"] = "wrong"
        fd["noted"] = True
        also = f"; central differences: {fd.get('status')} ({fd.get('detail', '')})"
        for w in wrong:
            _say(f"!!! {row['kernel']}: JITGRAD GRADIENT WRONG: {w}")
            row["notes"].append(f"**WRONG**: {w}" + (also if "JAX" in w else ""))
    elif "jax" in row["checks"] or fd.get("status") in ("ok", "unsettled"):
        row["status"] = "ok"
        if fd.get("status") == "unsettled":
            row["notes"].append(f"central differences unsettled: {fd['detail']}")
    else:
        row["status"] = "unchecked"
        row["notes"].append(f"jitgrad's gradient unchecked: no JAX gradient of the same loss, "
                            f"and central differences {fd.get('status')}: {fd.get('detail')}")


def _rounds(row, workers, opts):
    eng = row["engines"]
    names = [e for e in ENGINES if eng.get(e, {}).get("status") == "ok" and e in workers
             and workers[e].alive]
    samples = {e: [] for e in names}
    for r in range(opts.rounds):
        live = [e for e in names if workers[e].alive]
        if not live:
            break
        shift = r % len(live)
        for e in live[shift:] + live[:shift]:
            out = workers[e].ask({"cmd": "block"}, opts.timeout)
            if "seconds" in out:
                samples[e].append(out["seconds"])
            else:
                eng[e]["timing_error"] = f"{out['status']}: {out.get('error', '')}"
                row["notes"].append(f"{ENGINE_TITLES[e]} stopped in round {r + 1}: "
                                    f"{eng[e]['timing_error']}")
                workers[e].kill()
    for e, s in samples.items():
        if s:
            q = statistics.quantiles(s, n=4, method="inclusive") if len(s) > 1 else s * 3
            eng[e].update(median=q[1], q1=q[0], q3=q[2], rounds=len(s))
    med = {e: eng[e].get("median") for e in names}
    jg = med.get("jitgrad")
    if jg:
        if med.get("numba"):
            row["ratios"]["grad_numba"] = jg / med["numba"]
        if med.get("numpy"):
            row["ratios"]["grad_numpy"] = jg / med["numpy"]
        if med.get("jax"):
            row["ratios"]["jax_jitgrad"] = med["jax"] / jg
            row["ratios"]["jax_same_loss"] = bool(eng["jax"].get("same_loss"))


def _brief(ready):
    s = ready.get("status", "ok")
    if s == "ok":
        return f"first call {ready['first_call']:.3g} s, warm {ready.get('warm', 0):.3g} s"
    if s == "skip":
        return f"skipped ({ready['plan']['skip']})"
    return f"{s.upper()}: {ready.get('error', '')}"


# --------------------------------------------------------------------------------------
# summary, report, plot
# --------------------------------------------------------------------------------------


def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarise(rows, timeout):
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    good = [r for r in rows if r["status"] in ("ok", "unchecked")]
    jax_ratios = [r["ratios"]["jax_jitgrad"] for r in good
                  if "jax_jitgrad" in r["ratios"] and r["ratios"]["jax_same_loss"]]
    g_numpy = [r["ratios"]["grad_numpy"] for r in good if "grad_numpy" in r["ratios"]]
    g_numba = [r["ratios"]["grad_numba"] for r in good if "grad_numba" in r["ratios"]]

    def firsts(engine):
        out = []
        for r in rows:
            e = r["engines"].get(engine, {})
            if e.get("status") == "ok":
                out.append(e["first_call"])
            elif e.get("status") == "timeout":
                out.append(math.inf)
        return out

    jg_first, jax_first = firsts("jitgrad"), firsts("jax")
    jg_cpu = [r["engines"]["jitgrad"]["first_cpu"] if r["engines"]["jitgrad"]["status"] == "ok"
              else math.inf for r in rows
              if "first_cpu" in r["engines"].get("jitgrad", {})
              or r["engines"].get("jitgrad", {}).get("status") == "timeout"]
    return {
        "counts": counts,
        "jax_over_jitgrad_geomean": _geomean(jax_ratios), "jax_over_jitgrad_n": len(jax_ratios),
        "jitgrad_faster": sum(x > 1 for x in jax_ratios),
        "grad_over_numpy_geomean": _geomean(g_numpy),
        "grad_over_numpy_max": max(g_numpy) if g_numpy else None,
        "grad_over_numpy_within_5": sum(x <= 5 for x in g_numpy),
        "grad_over_numpy_n": len(g_numpy),
        "grad_over_numba_geomean": _geomean(g_numba), "grad_over_numba_n": len(g_numba),
        "jitgrad_first_median": statistics.median(jg_first) if jg_first else None,
        "jitgrad_first_max": max(jg_first) if jg_first else None,
        "jitgrad_first_n": len(jg_first),
        "jitgrad_first_cpu_median": statistics.median(jg_cpu) if jg_cpu else None,
        "jitgrad_first_cpu_max": max(jg_cpu) if jg_cpu else None,
        "jax_first_median": statistics.median(jax_first) if jax_first else None,
        "timeout": timeout,
    }


def _first_cell(e):
    from bench.report import fmt_time

    s = e.get("status")
    if s is None:
        return ""
    if s == "ok":
        return fmt_time(e["first_call"])
    return s


def _median_cell(e):
    from bench.report import fmt_time

    if e.get("median") is not None:
        return fmt_time(e["median"])
    return "" if e.get("status") in (None, "ok") else "—"


def _checks_cell(row):
    parts = []
    jax = row["checks"].get("jax")
    if jax:
        parts.append(f"JAX {jax['rel_err']:.0e}"
                     + (" (another function)" if jax.get("another_function")
                        else "" if jax["ok"] else " **✗**")
                     + (" (≈ 0)" if jax.get("rounding_only") else ""))
    fd = row["checks"].get("fd")
    if fd:
        s = fd.get("status")
        parts.append("FD " + ("ok" if s == "ok" else "**✗**" if s == "wrong" else s)
                     + (f" ({fd['entries']})" if fd.get("entries") else ""))
    return ", ".join(parts) or "—"


def table(rows):
    from bench.report import fmt_ratio

    header = ["kernel", "status", "first call: jitgrad", "first: JAX", "first: Numba primal",
              "first: NumPy primal", "median: jitgrad", "median: JAX", "median: Numba primal",
              "median: NumPy primal", "gradient / Numba primal", "gradient / NumPy primal",
              "JAX / jitgrad", "checks", "peak RSS MB jitgrad / JAX"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        eng = r["engines"]
        status = r["status"] if r["status"] in ("ok", "complex", "integer") else \
            f"**{r['status']}**"
        jx = r["ratios"].get("jax_jitgrad")
        jx_cell = fmt_ratio(jx) if r["ratios"].get("jax_same_loss") else \
            (f"({fmt_ratio(jx)}, other loss)" if jx else "—")
        rss = [eng.get(e, {}).get("rss_mb") for e in ("jitgrad", "jax")]
        cells = [f"`{r['kernel']}`" + (" *" if r["overrides"] else ""), status,
                 *[_first_cell(eng.get(e, {})) for e in ("jitgrad", "jax", "numba", "numpy")],
                 *[_median_cell(eng.get(e, {})) for e in ("jitgrad", "jax", "numba", "numpy")],
                 fmt_ratio(r["ratios"].get("grad_numba")),
                 fmt_ratio(r["ratios"].get("grad_numpy")), jx_cell, _checks_cell(r),
                 " / ".join("—" if x is None else f"{x:.0f}" for x in rss)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def first_calls_table(rows):
    """``--first-call-only``'s table: jitgrad's first call (wall and CPU seconds of its
    process) beside the size of the module it generated, and the checks."""
    from bench.report import fmt_time

    header = ["kernel", "status", "first call: wall", "first call: CPU", "lines", "functions",
              "forward: statements / loops", "adjoint: statements / loops", "checks"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        e = r["engines"].get("jitgrad", {})
        status = r["status"] if r["status"] in ("ok", "complex", "integer") else \
            f"**{r['status']}**"
        code = e.get("code") or {}

        def part(name, code=code):
            c = code.get(name)
            return f"{c['statements']:,} / {c['loops']}" if c else ""

        cpu = e.get("first_cpu")
        cells = [f"`{r['kernel']}`" + (" *" if r["overrides"] else ""), status,
                 _first_cell(e), fmt_time(cpu) if cpu is not None else "",
                 f"{code['module']['lines']:,}" if code else "",
                 str(code.get("functions", "")), part("forward"), part("adjoint"),
                 _checks_cell(r)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary_text(s):
    from bench.report import fmt_ratio, fmt_time

    def first(x):
        return "—" if x is None else (f"timeout (> {s['timeout']:g} s)" if math.isinf(x)
                                      else fmt_time(x))

    counts = ", ".join(f"{n} {k}" for k, n in sorted(s["counts"].items(), key=lambda kv: -kv[1]))
    n = sum(s["counts"].values())
    jgm = s["jax_over_jitgrad_geomean"]
    gnm = s["grad_over_numpy_geomean"]
    lines = [
        f"- kernels: {n}: {counts}",
        (f"- JAX / jitgrad: geometric mean {fmt_ratio(jgm)} over {s['jax_over_jitgrad_n']} "
         f"kernels (jitgrad faster on {s['jitgrad_faster']}); target ≥ 3×"),
        (f"- gradient / NumPy primal: geometric mean {fmt_ratio(gnm)}, max "
         f"{fmt_ratio(s['grad_over_numpy_max'])}, ≤ 5× on {s['grad_over_numpy_within_5']} of "
         f"{s['grad_over_numpy_n']}; target: every one ≤ 5×"),
        (f"- gradient / Numba primal: geometric mean {fmt_ratio(s['grad_over_numba_geomean'])} "
         f"over {s['grad_over_numba_n']} kernels"),
        (f"- jitgrad's first call: median {first(s['jitgrad_first_median'])}, max "
         f"{first(s['jitgrad_first_max'])} over {s['jitgrad_first_n']} kernels (timeouts "
         "count as infinite); targets: median ≤ 2 s, max ≤ 30 s; JAX's first call: median "
         f"{first(s['jax_first_median'])}"),
    ]
    if s.get("jitgrad_first_cpu_median") is not None:
        lines.append(f"- jitgrad's first call, CPU seconds of its process: median "
                     f"{first(s['jitgrad_first_cpu_median'])}, max "
                     f"{first(s['jitgrad_first_cpu_max'])}")
    return "\n".join(lines)


def notes_text(rows):
    out = []
    for r in rows:
        notes = list(r["notes"])
        if r["overrides"]:
            notes.insert(0, "parameters changed: " + ", ".join(
                f"{k} {a} → {b}" for k, (a, b) in r["overrides"].items()))
        for e in ("jax", "numba", "numpy"):
            x = r["engines"].get(e, {})
            if x.get("status") not in (None, "ok", "absent", "not run"):
                notes.append(f"{ENGINE_TITLES[e]}: {x['status']}: {x.get('error', '')}")
        fd = r["checks"].get("fd")
        if fd and fd.get("status") == "ok" and not fd.get("noted"):
            notes.append(f"central differences: {fd['detail']}")
        out += [f"- `{r['kernel']}`: " + n.replace("\n", " ") for n in notes]
    return "\n".join(out)


DEFINITIONS = (
    "first call: the engine's process imports its modules and loads the data before the "
    "clock; the clock covers building the function and its first call (jitgrad: "
    "`jitgrad.grad(loss, wrt)` and the call, with an empty JITGRAD_CACHE_DIR; JAX: "
    "`jax.jit(jax.grad(loss))` and the call; Numba: compiling the kernel on its first call). "
    "Times: median per call over the interleaved rounds. gradient = jitgrad's. "
    "JAX / jitgrad above 1: jitgrad is faster; in parentheses when JAX's version computes "
    "another loss (not counted). checks: jitgrad's gradient against JAX's (max |diff| / max "
    "|JAX| of the worst argument) and against central differences of the NumPy loss (FD, "
    "entries checked). `*`: parameters changed from the preset (notes).")


def header(command, opts, started, load_start, runtime_note, npbench_commit):
    from bench import report

    env = report.environment(command, threads="1", peer_versions={}, tape=None,
                             helper_cache=None, numba_init=None)
    git = f" (git {env['jitgrad_git']})" if env["jitgrad_git"] else ""
    jax_version = report._version("jax") or "not installed"
    load = "/".join(f"{x:.2f}" for x in load_start)
    coretype = ", ".join(f"{k}={os.environ.get(k, 'unset')}"
                         for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    threads = ", ".join(f"{k}={v}" for k, v in THREAD_ENV.items())
    return "\n".join([
        (f"# NPBench kernels: jitgrad's gradient against JAX's and the primals (preset "
         f"{opts.preset})"),
        "",
        "- command: `" + command + f"` (in `{ROOT}`)",
        f"- date: {started} to {datetime.datetime.now().astimezone().isoformat('T', 'seconds')}",
        (f"- machine: {env['nproc']} cores (nproc), {env['cpu_model']}; load average {load} at "
         f"start, {'/'.join(f'{x:.2f}' for x in os.getloadavg())} at the end"),
        (f"- versions: Python {env['python']}, NumPy {env['numpy']}, Numba {env['numba']}, "
         f"JAX {jax_version}, jitgrad {env['jitgrad']}{git}; NPBench at {opts.path} "
         f"({npbench_commit})"),
        (f"- one thread: every engine in its own process per kernel, with {threads}; "
         f"{coretype} passed on unchanged"),
        (f"- rounds: {opts.rounds} interleaved (order rotated), blocks of ~"
         f"{opts.target_block:g} s after one settling call; timeout {opts.timeout:g} s per "
         f"process start and per block; central differences within {opts.fd_budget:g} s per "
         f"kernel; tolerance {opts.tol:g}"),
        f"- jitgrad's runtime: {runtime_note}",
        f"- {DEFINITIONS}",
    ])


def plot(path, rows):
    """A PNG: per kernel, the three time ratios (log scale) and the first calls of jitgrad and
    JAX. Returns a message when matplotlib is missing."""
    try:
        import matplotlib as mpl

        mpl.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib): no plot written"
    shown = [r for r in rows if r["ratios"] or any(
        r["engines"].get(e, {}).get("status") == "ok" for e in ("jitgrad", "jax"))]
    if not shown:
        return "nothing to plot"
    labels = [f"{r['kernel']} ({r['status']})" if r["status"] != "ok" else r["kernel"]
              for r in shown]
    ys = range(len(shown))
    height = 2.0 + 0.32 * len(shown)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, height), sharey=True)
    series = (("grad_numba", "gradient / Numba primal", "o"),
              ("grad_numpy", "gradient / NumPy primal", "s"),
              ("jax_jitgrad", "JAX / jitgrad (above 1: jitgrad faster)", "^"))
    for key, label, marker in series:
        pts = [(r["ratios"][key], y) for y, r in zip(ys, shown) if key in r["ratios"]
               and (key != "jax_jitgrad" or r["ratios"]["jax_same_loss"])]
        if pts:
            ax1.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, label=label)
    ax1.axvline(1.0, color="black", linewidth=0.8)
    ax1.axvline(5.0, color="grey", linewidth=0.8, linestyle="--")
    ax1.axvline(3.0, color="grey", linewidth=0.8, linestyle=":")
    ax1.set_xscale("log")
    ax1.set_xlabel("ratio of medians, same run (log); dashed 5×, dotted 3×")
    for engine, marker in (("jitgrad", "o"), ("jax", "^")):
        pts = [(r["engines"][engine]["first_call"], y) for y, r in zip(ys, shown)
               if r["engines"].get(engine, {}).get("status") == "ok"]
        if pts:
            ax2.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker,
                        label=f"{ENGINE_TITLES[engine]} first call")
    for x, style in ((2.0, "--"), (30.0, ":")):
        ax2.axvline(x, color="grey", linewidth=0.8, linestyle=style)
    ax2.set_xscale("log")
    ax2.set_xlabel("first call in a fresh process, s (log); dashed 2 s, dotted 30 s")
    ax1.set_yticks(list(ys))
    ax1.set_yticklabels(labels, fontsize="small")
    ax1.invert_yaxis()
    fig.suptitle("NPBench kernels: jitgrad's gradient (one thread)")
    handles = [h for ax in (ax1, ax2) for h in ax.get_legend_handles_labels()[0]]
    fig.legend(handles, [h.get_label() for h in handles], loc="lower center", ncol=5,
               fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.45 / height, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


# --------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="python -m bench.npbench",
        description="jitgrad's gradients of the kernels of an NPBench checkout (issue #45), "
                    "against JAX's and the NumPy and Numba primals, one thread.")
    ap.add_argument("path", nargs="?", help="an NPBench checkout (github.com/spcl/npbench)")
    ap.add_argument("--preset", default="S", help="S, M, L or paper (default S)")
    ap.add_argument("--kernels", help="comma-separated bench_info names (default: all)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds for a process to get ready (imports, data, first call) and "
                         "for each timed block (default 600)")
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--target-block", type=float, default=0.05,
                    help="seconds per timed block (default 0.05; at least one call)")
    ap.add_argument("--tol", type=float, default=1e-6,
                    help="relative tolerance of the gradient and value checks (default 1e-6)")
    ap.add_argument("--fd-budget", type=float, default=30.0,
                    help="seconds of central differences per kernel (default 30)")
    ap.add_argument("--set", action="append", default=[], metavar="KERNEL.PARAM=VALUE",
                    help="replace a preset parameter (repeatable), e.g. gemm.NI=500")
    ap.add_argument("--runtime", choices=("warm", "cold"), default="warm",
                    help="jitgrad's runtime: made ready once per run (default) or compiled "
                         "in each first call")
    ap.add_argument("--runtime-from", metavar="DIR",
                    help="with --runtime warm: the NUMBA_CACHE_DIR of a runtime already made "
                         "ready (another run's, kept with --keep-temp) instead of warming again")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="comma-separated engines among jitgrad, jax, numba (NumPy always "
                         "runs: its process makes the data and the plan); default all")
    ap.add_argument("--first-call-only", action="store_true",
                    help="no timed rounds: first calls, checks, and the table of jitgrad's "
                         "first calls (CPU time, generated code's size)")
    ap.add_argument("--json", help="write the results as JSON")
    ap.add_argument("--markdown", help="write the report as markdown")
    ap.add_argument("--plot", help="write a PNG of the ratios and first calls")
    ap.add_argument("--keep-temp", action="store_true",
                    help="keep the temporary folder (generated losses, logs)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="no run: the report (stdout, --markdown, --plot) of a --json file")
    args = ap.parse_args(argv)
    if args.from_json:
        return args
    if not args.path:
        ap.error("PATH (an NPBench checkout) is required, unless --from-json")
    args.path = os.path.abspath(os.path.expanduser(args.path))
    try:
        args.sets = parse_sets(args.set)
        args.all_kernels = load_kernels(args.path)
    except (ValueError, FileNotFoundError) as e:
        ap.error(str(e))
    names = ([n.strip() for n in args.kernels.split(",") if n.strip()] if args.kernels
             else list(args.all_kernels))
    unknown = [n for n in names + list(args.sets) if n not in args.all_kernels]
    if unknown:
        ap.error(f"unknown kernels {unknown}; known: {', '.join(args.all_kernels)}")
    for name in args.sets:
        try:
            args.all_kernels[name].parameters(args.preset, args.sets[name])
        except KeyError as e:
            ap.error(e.args[0])
    args.names = names
    args.engines = {e.strip() for e in args.engines.split(",") if e.strip()} | {"numpy"}
    if args.engines - set(ENGINES):
        ap.error(f"unknown engines {sorted(args.engines - set(ENGINES))}; known: "
                 f"{', '.join(ENGINES)}")
    return args


def _npbench_commit(path):
    proc = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False)
    return f"git {proc.stdout.strip()}" if proc.returncode == 0 else "not a git checkout"


def report_text(header_text, rows, timeout, first_only=False):
    summary = summarise(rows, timeout)
    parts = [header_text, "", (first_calls_table if first_only else table)(rows), "",
             "Summary:", "", summary_text(summary)]
    notes = notes_text(rows)
    if notes:
        parts += ["", "Notes:", "", notes]
    return "\n".join(parts) + "\n", summary


def write_outputs(opts, text, rows, doc):
    print(text)
    if opts.markdown:
        with open(opts.markdown, "w") as fh:
            fh.write(text)
        _say(f"wrote {opts.markdown}")
    if opts.json and doc is not None:
        with open(opts.json, "w") as fh:
            json.dump(doc, fh, indent=1, default=str)
        _say(f"wrote {opts.json}")
    if opts.plot:
        said = plot(opts.plot, rows)
        _say(said or f"wrote {opts.plot}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        worker(json.loads(argv[1]))
        return
    opts = parse_args(argv)
    if opts.from_json:
        with open(opts.from_json) as fh:
            doc = json.load(fh)
        text, _ = report_text(doc["header"], doc["kernels"], doc["settings"]["timeout"],
                              doc["settings"].get("first_call_only", False))
        write_outputs(opts, text, doc["kernels"], None)
        return
    command = "python -m bench.npbench" + "".join(" " + shlex.quote(a) for a in argv)
    started = datetime.datetime.now().astimezone().isoformat("T", "seconds")
    load_start = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="jitgrad-npbench-")
    _say(f"temporary folder {tmp}" + (" (kept)" if opts.keep_temp else ""))
    rows = []
    try:
        runtime_cache = None
        if opts.runtime == "warm" and opts.runtime_from:
            runtime_cache = opts.runtime_from
            runtime_note = (f"made ready by another run (`--runtime-from {runtime_cache}`), "
                            "copied into each kernel's empty NUMBA_CACHE_DIR; JITGRAD_CACHE_DIR "
                            "empty per kernel, so each first call compiles")
        elif opts.runtime == "warm":
            from bench.cold_start import warm_runtime

            _say("python -m jitgrad warm ...")
            runtime_cache = os.path.join(tmp, "runtime")
            seconds, said = warm_runtime(runtime_cache, opts.timeout)
            runtime_note = (f"made ready once by `python -m jitgrad warm` in {seconds:.1f} s "
                            f"(\"{said}\"), copied into each kernel's empty NUMBA_CACHE_DIR; "
                            "JITGRAD_CACHE_DIR empty per kernel, so each first call compiles")
        else:
            runtime_note = ("cold (`--runtime cold`): an empty NUMBA_CACHE_DIR and "
                            "JITGRAD_CACHE_DIR per kernel; the first call compiles the runtime "
                            "helpers it uses too")
        for i, name in enumerate(opts.names):
            _say(f"[{i + 1}/{len(opts.names)}] {name}")
            try:
                row = run_kernel(opts.all_kernels[name], opts, os.path.join(tmp, name),
                                 runtime_cache)
            except KeyboardInterrupt:
                _say(f"interrupted: the report covers the {len(rows)} kernels done")
                break
            except Exception as e:  # noqa: BLE001 -- one kernel's harness failure, reported
                import traceback

                traceback.print_exc()
                _say(f"!!! {name}: HARNESS ERROR {_first_line(e)}")
                row = {"kernel": name, "params": {}, "overrides": {}, "status": "harness error",
                       "engines": {}, "checks": {}, "ratios": {},
                       "notes": [f"the harness failed: {_first_line(e)}"]}
            _say(f"    => {row['status']}" + "".join(f", {k} {v:.3g}" for k, v in
                                                       row["ratios"].items()
                                                       if not isinstance(v, bool)))
            rows.append(row)
            if opts.json:  # the kernels done so far survive a killed run (--from-json reads it)
                _write_doc(opts, command, started, header(
                    command, opts, started, load_start, runtime_note,
                    _npbench_commit(opts.path)), rows)
    finally:
        if not opts.keep_temp:
            shutil.rmtree(tmp, ignore_errors=True)
    header_text = header(command, opts, started, load_start, runtime_note,
                         _npbench_commit(opts.path))
    text, _ = report_text(header_text, rows, opts.timeout, opts.first_call_only)
    write_outputs(opts, text, rows, _doc(opts, command, started, header_text, rows))


def _doc(opts, command, started, header_text, rows):
    """The ``--json`` document of ``rows``."""
    return {"command": command, "started": started, "header": header_text,
            "settings": {k: getattr(opts, k) for k in (
                "path", "preset", "timeout", "rounds", "target_block", "tol", "fd_budget",
                "sets", "runtime", "first_call_only")},
            "threads": THREAD_ENV, "summary": summarise(rows, opts.timeout), "kernels": rows}


def _write_doc(opts, command, started, header_text, rows):
    with open(opts.json, "w") as fh:
        json.dump(_doc(opts, command, started, header_text, rows), fh, indent=1, default=str)


if __name__ == "__main__":
    main()
