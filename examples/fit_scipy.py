"""Fit a logistic regression with scipy.optimize.minimize, three ways.

Run:  python examples/fit_scipy.py

The loss is a loop over the samples, written the way a Numba user writes it. The same fit is
run with:

1. ``jitgrad.value_and_grad`` as ``jac=True`` (BFGS: the value and the gradient from one
   compiled call);
2. ``jitgrad.hvp`` as ``hessp`` with ``method="Newton-CG"`` (Hessian-vector products by
   forward over reverse, never the whole Hessian);
3. finite-difference gradients of the same loss compiled with ``numba.njit`` (BFGS, scipy's
   two-point differences: one more loss evaluation per parameter per gradient).

It prints each fit's iterations, evaluations, time (after a first call that compiles) and
final loss, and checks that the three fits agree.
"""

import time

import numba
import numpy as np
from scipy.optimize import minimize

import jitgrad as jg


def loss(w, X, y, lam):
    """Mean logistic loss of the labels ``y`` (0 or 1) under the scores ``X @ w``, plus an L2
    penalty ``lam / 2 |w|^2``."""
    total = 0.0
    for i in range(X.shape[0]):
        z = X[i] @ w
        total += np.logaddexp(0.0, z) - y[i] * z
    return total / X.shape[0] + 0.5 * lam * np.sum(w * w)


def make_data(n=4000, d=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / np.sqrt(d) * 3.0
    p = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    y = (rng.uniform(size=n) < p).astype(np.float64)
    return X, y


def timed(label, fit):
    fit()  # the first call compiles (jitgrad and Numba); time the second
    start = time.perf_counter()
    result = fit()
    elapsed = time.perf_counter() - start
    print(f"{label:44} {result.nit:4d} {result.nfev:6d} {getattr(result, 'njev', 0):6d} "
          f"{getattr(result, 'nhev', 0):6d} {elapsed * 1e3:9.1f} ms   {result.fun:.10f}")
    return result


def main():
    X, y = make_data()
    lam = 1e-3
    w0 = np.zeros(X.shape[1])

    value_and_grad = jg.value_and_grad(loss, wrt="w")
    hvp = jg.hvp(loss, wrt="w")
    loss_njit = numba.njit(loss)

    print(f"logistic regression, {X.shape[0]} samples x {X.shape[1]} features")
    print(f"{'':44} {'nit':>4} {'nfev':>6} {'njev':>6} {'nhev':>6} {'time':>12}   final loss")
    fits = [
        timed("BFGS, jac=True from jitgrad.value_and_grad",
              lambda: minimize(value_and_grad, w0, args=(X, y, lam), jac=True, method="BFGS",
                               options={"gtol": 1e-8})),
        timed("Newton-CG, hessp from jitgrad.hvp",
              lambda: minimize(value_and_grad, w0, args=(X, y, lam), jac=True,
                               hessp=lambda w, p, X, y, lam: hvp(w, X, y, lam, p),
                               method="Newton-CG", options={"xtol": 1e-10})),
        timed("BFGS, finite differences of numba.njit(loss)",
              lambda: minimize(loss_njit, w0, args=(X, y, lam), method="BFGS",
                               options={"gtol": 1e-6})),
    ]
    ws = [f.x for f in fits]
    print(f"largest difference between the fitted weights: "
          f"{max(np.max(np.abs(a - ws[0])) for a in ws[1:]):.2e}")
    assert all(np.allclose(a, ws[0], atol=1e-4) for a in ws[1:]), "the fits disagree"


if __name__ == "__main__":
    main()
