"""``python -m bench.tanh_ulp``: the error and speed of the tanh jitgrad's generated code calls.

Generated code calls ``runtime.tanh_scalar`` (Cephes' rational approximation below 0.625, exp
above) instead of libm's ``tanh``, which Numba's ``math.tanh`` / ``np.tanh`` of a number call
(glibc's, from expm1). Issue #26 allows a faster tanh only if its error is measured and stays
within 2 ulp. This prints:

* the largest error in ulp (of the exact value rounded to double) of jitgrad's tanh, of libm's
  (through Numba), of NumPy's ``np.tanh`` and, where JAX is installed, of XLA's ``jnp.tanh``
  (float64), on 3.7e7 points: a dense grid of [-20, 20], uniform samples on each side of 0.625
  and across [-3, 3], and tiny arguments down to 1e-300. The reference is NumPy's long-double
  tanh (x87 80-bit on x86-64 Linux: 11 bits more than double; the script refuses to run where
  long double is double), checked against mpmath at 200 bits on a subset when mpmath imports;
* the time per step of the bench's rnn recurrence ``h = tanh(w * h + x[t])`` (n = 10⁵; each
  step waits for the last, so this is tanh's latency) with each tanh, interleaved rounds
  (`bench.timing.measure`), single-threaded.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import math
import sys

import numba
import numpy as np

from bench import problems
from bench.timing import measure
from jitgrad.backend.numba import runtime


@numba.njit
def _libm_map(x, out):
    for i in range(x.shape[0]):
        out[i] = math.tanh(x[i])


@numba.njit
def _libm_chain(w, x):
    h = 0.0
    s = 0.0
    for t in range(x.shape[0]):
        h = math.tanh(w * h + x[t])
        s += h * h
    return s


@numba.njit
def _jitgrad_chain(w, x):
    h = 0.0
    s = 0.0
    for t in range(x.shape[0]):
        h = runtime.tanh_scalar(w * h + x[t])
        s += h * h
    return s


def samples(seed=42):
    rng = np.random.default_rng(seed)
    return {
        "linspace(-20, 20, 4e6 + 1)": np.linspace(-20.0, 20.0, 4_000_001),
        "uniform(0, 0.625), 1e7": rng.uniform(0.0, 0.625, 10_000_000),
        "uniform(0.625, 20), 1e7": rng.uniform(0.625, 20.0, 10_000_000),
        "0.625 ± 1e-6, 1e6": 0.625 + rng.uniform(-1e-6, 1e-6, 1_000_000),
        "±geomspace(1e-300, 1), 2e5": np.concatenate([np.geomspace(1e-300, 1.0, 100_000),
                                                      -np.geomspace(1e-300, 1.0, 100_000)]),
        "uniform(-3, 3), 1e7": rng.uniform(-3.0, 3.0, 10_000_000),
    }


def ulp_error(y, ref):
    ulp = np.spacing(np.abs(ref.astype(np.float64))).astype(np.longdouble)
    return np.abs((y.astype(np.longdouble) - ref) / ulp).astype(np.float64)


def main():
    if np.finfo(np.longdouble).nmant < 63:
        sys.exit("long double is not extended precision here: no reference")
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jtanh = jax.jit(jnp.tanh)
    except ImportError:
        jax = None
    tools = {"jitgrad (runtime.tanh)": runtime.tanh, "libm (Numba math.tanh)": None,
             "np.tanh": np.tanh}
    if jax is not None:
        tools["jnp.tanh (XLA)"] = lambda x: np.asarray(jtanh(jnp.asarray(x)))
    worst = {k: (0.0, None) for k in tools}
    print("## max error, ulp\n")
    print("| sample | points | " + " | ".join(tools) + " |")
    print("|---|---|" + "---|" * len(tools))
    for name, x in samples().items():
        ref = np.tanh(x.astype(np.longdouble))
        cells = []
        for k, fn in tools.items():
            if fn is None:
                y = np.empty_like(x)
                _libm_map(x, y)
            else:
                y = fn(x)
            e = ulp_error(y, ref)
            i = int(np.argmax(e))
            cells.append(f"{e[i]:.3f}")
            if e[i] > worst[k][0]:
                worst[k] = (float(e[i]), float(x[i]))
        print(f"| {name} | {x.size:.3g} | " + " | ".join(cells) + " |")
    print("\nworst: " + "; ".join(f"{k} {e:.3f} ulp at x = {x!r}" for k, (e, x) in worst.items()))
    try:
        import mpmath
    except ImportError:
        print("mpmath not installed: reference not cross-checked")
    else:
        mpmath.mp.prec = 200
        pts = np.concatenate([np.random.default_rng(1).uniform(-20, 20, 3000),
                              [x for _, x in worst.values() if x is not None]])
        ref = np.tanh(pts.astype(np.longdouble)).astype(np.float64)
        off = max(abs(float((mpmath.tanh(mpmath.mpf(float(p))) - mpmath.mpf(float(r)))
                            / mpmath.mpf(float(np.spacing(abs(r)))))) for p, r in zip(pts, ref))
        print(f"reference rounded to double vs mpmath (200 bits), {pts.size} points incl. the "
              f"worst: at most {off:.3f} ulp (0.5 = correctly rounded)")

    w, x = problems.make_rnn(100_000)
    timed = {"libm tanh": lambda: _libm_chain(w, x), "jitgrad tanh": lambda: _jitgrad_chain(w, x)}
    assert abs(_libm_chain(w, x) - _jitgrad_chain(w, x)) < 1e-9 * abs(_libm_chain(w, x))
    if jax is not None:
        def scan(w, x):
            def step(h, xt):
                h = jnp.tanh(w * h + xt)
                return h, h * h
            return jnp.sum(jax.lax.scan(step, 0.0, x)[1])

        jscan = jax.jit(scan)
        jx = jnp.asarray(x)
        timed["jax lax.scan, jnp.tanh"] = lambda: jscan(w, jx).block_until_ready()
    res = measure(timed, rounds=15, settle=1)
    print("\n## rnn recurrence, n = 1e5 (the primal alone)\n\n| tanh | median | per step |\n|---|---|---|")
    for k, t in res.items():
        print(f"| {k} | {t.median * 1e3:.3f} ms | {t.median / x.size * 1e9:.1f} ns |")


if __name__ == "__main__":
    main()
