"""Fit a Gaussian mixture to points held by a Dask cluster, with jitgrad's gradients.

Run:  python examples/dask_gmm.py                       # a LocalCluster on this machine
      python examples/dask_gmm.py tcp://scheduler:8786  # a running cluster (workers need
                                                        # numpy, numba, scipy and jitgrad)

The data term is the loop GMM negative log-likelihood, a sum over the rows of ``x``. The points
live on the workers as a Dask array in blocks of rows; each gradient step sends the parameters
(a few KB) to each worker once, every block's gradient is computed where the block lives by a
kernel the worker compiled once, and the blocks' results are summed on the workers: only the
value and the gradients come back. The step uses plain gradient descent with a line search.
"""

import math
import sys
import time

import numpy as np

import jitgrad as jg
import jitgrad.dask as jgd


def gmm_data(alphas, means, log_prec, x):
    """Negative log-likelihood of the rows of x under a K-component diagonal mixture:
    unnormalised log-weights alphas (K,), means (K, d), log inverse standard deviations (K, d).
    """
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    log_norm = amax + math.log(asum)
    prec = np.exp(log_prec)
    lp = np.empty(K)
    total = 0.0
    for i in range(n):
        lmax = -math.inf
        for k in range(K):
            s = alphas[k]
            for j in range(d):
                r = prec[k, j] * (x[i, j] - means[k, j])
                s += log_prec[k, j] - 0.5 * r * r
            lp[k] = s
            lmax = max(lmax, s)
        se = 0.0
        for k in range(K):
            se += math.exp(lp[k] - lmax)
        total += lmax + math.log(se)
    return n * (log_norm + 0.5 * d * math.log(2.0 * math.pi)) - total


def main(address=None):
    import dask.array as da
    from distributed import Client, LocalCluster

    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    client = Client(address or cluster)
    try:
        n, d, K = 200_000, 5, 4
        rng = np.random.default_rng(0)
        centres = 4.0 * rng.standard_normal((K, d))
        scales = np.exp(0.3 * rng.standard_normal((K, d)))
        comp = rng.integers(0, K, size=n)
        # the points, in blocks of rows, kept in the workers' memory
        X = da.from_array(centres[comp] + scales[comp] * rng.standard_normal((n, d)),
                          chunks=(n // 8, d)).persist()

        # the first call checks that gmm_data is a sum over the rows of x (the default)
        vg = jgd.value_and_grad(gmm_data, wrt=("alphas", "means", "log_prec"), shard="x")
        start = X[rng.choice(n // 8, K, replace=False)].compute()  # K points as first means
        params = [np.zeros(K), start, np.zeros((K, d))]

        t = time.perf_counter()
        value, grads = vg(*params, X)
        print(f"first call (compile on the workers, or load from their disk cache): "
              f"{time.perf_counter() - t:.2f} s, NLL per point {value / n:.4f}")
        step = 1.0 / n
        t = time.perf_counter()
        for it in range(60):
            while True:  # backtracking line search on the data term
                trial = [p - step * g for p, g in zip(params, grads)]
                v, g = vg(*trial, X)
                if v < value:
                    params, value, grads = trial, v, g
                    step *= 1.5
                    break
                step *= 0.5
            if it % 10 == 9:
                print(f"step {it + 1:3d}: NLL per point {value / n:.4f}")
        print(f"60 steps in {time.perf_counter() - t:.2f} s")

        # the same value and gradients as one process computing on all rows
        x = X.compute()
        want = jg.value_and_grad(gmm_data, wrt=(0, 1, 2))(*params, x)
        print(f"relative difference from one process (rounding; the gradients are small "
              f"near the optimum): "
              f"{jgd.relative_difference(vg(*params, X), want):.1e}")
        order = np.argsort(params[1][:, 0])
        print("fitted means (first coordinate):", np.round(params[1][order, 0], 2))
        print("true means   (first coordinate):", np.round(np.sort(centres[:, 0]), 2))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
