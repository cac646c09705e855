"""``python -m bench.two_layer_products [--threads N]``: where the MNIST two-layer gradient's time
goes (issue #26).

Times, interleaved in the same rounds (`bench.timing.measure`), each matrix product jitgrad's
generated gradient of `problems.two_layer_loss` does at (batch, n_in, n_hidden, n_out) = (128,
784, 256, 10) -- the forward ``inputs @ W1`` and ``h @ W2``, the adjoint's ``dz @ W2.T``,
``h.T @ dz`` and ``inputs.T @ da1`` -- through Numba's ``@``, jitgrad's ``_rt.matmul``, NumPy's
``@``, ``scipy.linalg.blas.dgemm`` called with transpose flags (no copies) and, where installed,
``jax.jit`` (x64); Numba's ``@`` on a copied transpose beside the two transposed products. Then
the whole gradient (jitgrad's compiled entry, and the same generated source with its products
replaced by ``np.ones`` of their shape: the elementwise work and allocations), the hand-written
gradient, the Numba primal, the sum of the five products, and JAX's gradient and primal.
Prints the BLAS libraries and kernels (threadpoolctl, if installed) and markdown tables (µs).
"""

import argparse
import os
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.two_layer_products")
    ap.add_argument("--threads", default="1", help="OpenBLAS, Numba and XLA threads")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    if "numpy" in sys.modules:
        raise RuntimeError("run as a script: threads are set before NumPy is imported")
    t = args.threads
    os.environ["OPENBLAS_NUM_THREADS"] = t
    os.environ["NUMBA_NUM_THREADS"] = t
    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'false' if t == '1' else 'true'}"
                                       f" intra_op_parallelism_threads={t}")
    import numba
    import numpy as np
    import scipy.linalg.blas as sb

    import jitgrad
    from bench import handwritten as H
    from bench import problems as P
    from bench import report
    from bench.timing import measure
    from jitgrad.backend.numba import runtime as _rt

    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
    except ImportError:
        jax = None

    W1, b1, W2, b2, X, Y = P.make_two_layer(*P.MNIST_TWO_LAYER)
    a1 = X @ W1 + b1
    h = np.maximum(a1, 0.0)
    rng = np.random.default_rng(1)
    dz = rng.standard_normal((X.shape[0], W2.shape[1])) / X.shape[0]
    da1 = rng.standard_normal(a1.shape)

    @numba.njit
    def nb_mm(a, b):
        return a @ b

    @numba.njit
    def nb_mm_at(a, b):  # a.T: an F-ordered view, passed to dgemm with a transpose flag
        return a.T @ b

    @numba.njit
    def nb_mm_bt(a, b):
        return a @ b.T

    @numba.njit
    def nb_mm_at_copy(a, b):
        return np.ascontiguousarray(a.T) @ b

    @numba.njit
    def nb_mm_bt_copy(a, b):
        return a @ np.ascontiguousarray(b.T)

    def dgemm(a, b, ta=0, tb=0):
        """op(a) @ op(b) for C-ordered a, b, without copies: C.T = op(b).T @ op(a).T in
        Fortran order."""
        return sb.dgemm(1.0, b.T, a.T, trans_a=tb, trans_b=ta).T

    if jax is not None:
        jmm = jax.jit(lambda a, b: a @ b)
        jmm_at = jax.jit(lambda a, b: a.T @ b)
        jmm_bt = jax.jit(lambda a, b: a @ b.T)
        J = {"X": X, "W1": W1, "h": h, "W2": W2, "dz": dz, "da1": da1}
        J = {k: jnp.asarray(v) for k, v in J.items()}

    cases = [
        ("inputs @ W1 (128,784)@(784,256)", lambda: nb_mm(X, W1), lambda: _rt.matmul(X, W1),
         lambda: X @ W1, lambda: dgemm(X, W1),
         jax and (lambda: jmm(J["X"], J["W1"]).block_until_ready()), X @ W1, {}),
        ("h @ W2 (128,256)@(256,10)", lambda: nb_mm(h, W2), lambda: _rt.matmul(h, W2),
         lambda: h @ W2, lambda: dgemm(h, W2),
         jax and (lambda: jmm(J["h"], J["W2"]).block_until_ready()), h @ W2, {}),
        ("dz @ W2.T (128,10)@(10,256)", lambda: nb_mm_bt(dz, W2), lambda: _rt.matmul(dz, W2.T),
         lambda: dz @ W2.T, lambda: dgemm(dz, W2, tb=1),
         jax and (lambda: jmm_bt(J["dz"], J["W2"]).block_until_ready()), dz @ W2.T,
         {"Numba, W2.T copied": lambda: nb_mm_bt_copy(dz, W2)}),
        ("h.T @ dz (256,128)@(128,10)", lambda: nb_mm_at(h, dz), lambda: _rt.matmul(h.T, dz),
         lambda: h.T @ dz, lambda: dgemm(h, dz, ta=1),
         jax and (lambda: jmm_at(J["h"], J["dz"]).block_until_ready()), h.T @ dz, {}),
        ("inputs.T @ da1 (784,128)@(128,256)", lambda: nb_mm_at(X, da1),
         lambda: _rt.matmul(X.T, da1), lambda: X.T @ da1, lambda: dgemm(X, da1, ta=1),
         jax and (lambda: jmm_at(J["X"], J["da1"]).block_until_ready()), X.T @ da1,
         {"Numba, inputs.T copied": lambda: nb_mm_at_copy(X, da1)}),
    ]
    env = {"blas": report._blas_info(), "env": {k: os.environ.get(k) for k in
                                                 ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}}
    print(f"- threads: {t}; BLAS: {report._blas_text(env)}"
          + "".join(f"; {k}={v}" for k, v in env["env"].items() if v))
    print("\n| product | Numba @ | _rt.matmul | NumPy @ | scipy dgemm, trans flags | jax.jit | "
          "copied transpose |\n|---|---|---|---|---|---|---|")
    for name, nb, rt, npf, sp, jx, ref, extra in cases:
        tools = {"nb": nb, "rt": rt, "np": npf, "sp": sp}
        if jx:
            tools["jax"] = jx
        for f in tools.values():
            assert np.allclose(np.asarray(f()), ref)
        tools.update(extra)
        res = measure(tools, rounds=args.rounds, settle=1)
        cells = [f"{res[k].median * 1e6:.1f}" if k in res else "—"
                 for k in ("nb", "rt", "np", "sp", "jax")]
        ex = "; ".join(f"{k} {res[k].median * 1e6:.1f}" for k in extra) or "—"
        print(f"| {name} | " + " | ".join(cells) + f" | {ex} |")

    args6 = (W1, b1, W2, b2, X, Y)
    g = jitgrad.grad(P.two_layer_loss, wrt=(0, 1, 2, 3))
    g(*args6)
    entry = g.njit(*args6)
    src = g.source()

    @numba.njit
    def _ones_mm(a, b):
        return np.ones((a.shape[0], b.shape[1]))

    ns = {"_ones_mm": _ones_mm}
    # the generated module, products swapped out: jitgrad's own source, not user input
    exec(compile(src.replace("_rt.matmul(", "_ones_mm("), "<no products>", "exec"), ns)  # noqa: S102
    fname = next(line.split("def ")[1].split("(")[0] for line in src.splitlines()
                 if line.startswith("def "))
    no_products = numba.njit(ns[fname])
    no_products(*args6)
    tools = {
        "jitgrad entry": lambda: entry(*args6),
        "jitgrad entry, products replaced by np.ones": lambda: no_products(*args6),
        "hand-written Numba gradient": lambda: H.two_layer_grad(*args6),
        "Numba primal": lambda: H.two_layer_primal(*args6),
        "the five products (Numba @), one after another":
            lambda: (nb_mm(X, W1), nb_mm(h, W2), nb_mm_bt(dz, W2), nb_mm_at(h, dz),
                     nb_mm_at(X, da1)),
    }
    if jax is not None:
        def jloss(W1, b1, W2, b2, X, Y):
            h = jnp.maximum(X @ W1 + b1, 0.0)
            z = h @ W2 + b2
            z = z - jnp.max(z, axis=1, keepdims=True)
            p = jnp.exp(z) / jnp.sum(jnp.exp(z), axis=1, keepdims=True)
            return -jnp.mean(jnp.sum(Y * jnp.log(p), axis=1))

        jg = jax.jit(jax.grad(jloss, argnums=(0, 1, 2, 3)))
        jp = jax.jit(jloss)
        JA = [jnp.asarray(a) for a in args6]
        tools["jax.jit(grad)"] = lambda: jax.block_until_ready(jg(*JA))
        tools["jax.jit primal"] = lambda: jax.block_until_ready(jp(*JA))
    res = measure(tools, rounds=args.rounds, settle=1)
    print("\n| call | median µs |\n|---|---|")
    for k, v in res.items():
        print(f"| {k} | {v.median * 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
