"""The programs of the cold-start benchmark (`bench.cold_start`, issue #24).

Each program is a plain module-level function, written as a Numba user writes code (jitgrad
reads its source, and Numba's ``cache=True`` needs it in a real file), with a seeded data
maker and the positions of its differentiable arguments. ``PROGRAMS`` maps a name to its
`Program`. The data are small: a first call's run time is then negligible next to its
compilation, which is what the benchmark measures.

The problems of `bench.problems` are reused as they are (``two_layer``, ``rnn``, ``gmm``,
``reproj``, ``control_flow``); the ones written here cover what those do not:

* ``gp`` -- Gaussian-process negative log marginal likelihood: a kernel matrix filled in a
  loop, ``np.linalg.cholesky`` and ``solve`` for the data fit, ``slogdet`` for the
  log-determinant (each linalg routine a Numba user reaches for once).
* ``eos`` -- a long straight-line array kernel in the style of pyhpc-benchmarks'
  equation of state (our own polynomial, not TEOS-10): 120 coefficients of a degree-7
  polynomial in three scaled variables, in Horner form, over arrays.
* ``conv2d`` -- a loop nest four deep: valid 2-D convolution, squared error to a target.
* ``prange`` -- a ``numba.prange`` loop over rows with an inner loop (log-cosh regression);
  differentiated with ``parallel=True``.
* ``logreg`` -- L2-regularised logistic regression in array style (``@``, ``logaddexp``).
"""

import dataclasses
import math
from collections.abc import Callable

import numba
import numpy as np

from bench import problems


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    make: Callable  # () -> the positional arguments
    wrt: tuple  # positions of the differentiable arguments
    features: str  # what it exercises, for the table
    parallel: bool = False  # jitgrad.grad(..., parallel=True), numba.njit(parallel=True)


# --------------------------------------------------------------------------------------
# Gaussian process: cholesky, solve, slogdet
# --------------------------------------------------------------------------------------


def gp_nll(log_amp, log_ls, log_noise, x, y):
    """Negative log marginal likelihood of ``y`` under a squared-exponential GP on ``x``."""
    n = x.shape[0]
    amp = math.exp(log_amp)
    ls = math.exp(log_ls)
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            d = (x[i] - x[j]) / ls
            K[i, j] = amp * math.exp(-0.5 * d * d)
    K = K + math.exp(log_noise) * np.eye(n)
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y)
    _sign, logdet = np.linalg.slogdet(K)
    return 0.5 * (z @ z) + 0.5 * logdet + 0.5 * n * math.log(2.0 * math.pi)


def make_gp(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 5.0, n))
    y = np.sin(2.0 * x) + 0.1 * rng.standard_normal(n)
    return 0.1, -0.5, -3.0, x, y


# --------------------------------------------------------------------------------------
# Equation of state: a long straight-line polynomial over arrays
# --------------------------------------------------------------------------------------


def eos_volume(sa, ct, p):
    """Sum over the points of a degree-7 polynomial in root salinity, temperature and
    pressure (120 terms; coefficients from a seeded generator, scaled by 1/(i+j+k)!)."""
    x = np.sqrt(0.0248826675584615 * sa + 0.5)
    y = 0.025 * ct
    z = 1e-4 * p
    a00 = (-0.339462 + x * (-0.189645 + x * (0.0747378 + x * (0.00213326 + x * (0.00535104
           + x * (0.00116146 + x * (0.00103921 + x * -0.000164115)))))))
    a10 = (0.484951 + x * (0.320367 + x * (0.07072 + x * (-0.0075062 + x * (0.00738256
           + x * (-0.00130292 + x * 0.000120214))))))
    a20 = (0.102049 + x * (-0.152958 + x * (-0.0139667 + x * (-0.00202879 + x * (-0.000899874
           + x * 5.65876e-05)))))
    a30 = -0.020253 + x * (0.0179837 + x * (-0.00214272 + x * (-0.00123839 + x * 8.55952e-05)))
    a40 = 0.0194204 + x * (-0.00696425 + x * (-9.59377e-05 + x * -1.77754e-05))
    a50 = 0.0069146 + x * (0.000271502 + x * -7.64118e-05)
    a60 = 0.00105731 + x * -6.99783e-05
    a70 = 8.98299e-05
    a01 = (-0.62275 + x * (-0.284882 + x * (-0.118089 + x * (0.0267357 + x * (-0.00513819
           + x * (-0.000653092 + x * -0.000118014))))))
    a11 = (0.302861 + x * (0.000659571 + x * (-0.0243047 + x * (0.00676047 + x * (0.000875577
           + x * -7.51523e-05)))))
    a21 = -0.0557654 + x * (-0.033136 + x * (-0.00673184 + x * (0.00060621 + x * 0.000129886)))
    a31 = 0.0156172 + x * (-0.00414446 + x * (0.000971207 + x * -0.000101885))
    a41 = -0.00406748 + x * (0.000450224 + x * -0.000100651)
    a51 = 0.000804184 + x * -6.94124e-05
    a61 = 0.00013891
    a02 = (0.353259 + x * (0.0300085 + x * (0.0313689 + x * (0.00239346 + x * (-0.000437242
           + x * -8.62776e-05)))))
    a12 = 0.0935726 + x * (-0.0298574 + x * (0.00384271 + x * (0.000133223 + x * -0.000183904)))
    a22 = -0.0239654 + x * (-5.14927e-05 + x * (-0.000746218 + x * 7.34915e-05))
    a32 = 0.00391534 + x * (0.00131219 + x * 0.000156325)
    a42 = 0.00034148 + x * 6.48367e-05
    a52 = 8.32759e-05
    a03 = -0.128827 + x * (-0.0346646 + x * (0.00645769 + x * (0.000919713 + x * -2.09708e-05)))
    a13 = -0.0228274 + x * (-0.00684428 + x * (0.000733492 + x * -7.47073e-05))
    a23 = 0.00189361 + x * (-0.000270739 + x * -2.39413e-05)
    a33 = -0.000197447 + x * -8.14031e-05
    a43 = 4.54398e-05
    a04 = 0.00206032 + x * (-0.00593717 + x * (0.000700869 + x * 0.000126667))
    a14 = 0.000588855 + x * (0.000570508 + x * 7.49369e-05)
    a24 = 0.000280007 + x * -8.58117e-05
    a34 = -4.11149e-05
    a05 = -0.00247445 + x * (-0.000360259 + x * -2.71219e-05)
    a15 = -0.000465451 + x * -0.00016879
    a25 = -8.81549e-05
    a06 = 0.000438675 + x * -5.15685e-05
    a16 = 0.000101282
    a07 = 0.00015375
    b0 = a00 + y * (a10 + y * (a20 + y * (a30 + y * (a40 + y * (a50 + y * (a60 + y * a70))))))
    b1 = a01 + y * (a11 + y * (a21 + y * (a31 + y * (a41 + y * (a51 + y * a61)))))
    b2 = a02 + y * (a12 + y * (a22 + y * (a32 + y * (a42 + y * a52))))
    b3 = a03 + y * (a13 + y * (a23 + y * (a33 + y * a43)))
    b4 = a04 + y * (a14 + y * (a24 + y * a34))
    b5 = a05 + y * (a15 + y * a25)
    b6 = a06 + y * a16
    b7 = a07
    v = b0 + z * (b1 + z * (b2 + z * (b3 + z * (b4 + z * (b5 + z * (b6 + z * b7))))))
    return np.sum(v)


def make_eos(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(30.0, 38.0, n), rng.uniform(0.0, 25.0, n), rng.uniform(0.0, 5000.0, n)


# --------------------------------------------------------------------------------------
# Loop nest: 2-D convolution
# --------------------------------------------------------------------------------------


def conv2d_loss(kernel, image, target):
    """Squared error of the valid convolution of ``image`` with ``kernel`` to ``target``."""
    kh = kernel.shape[0]
    kw = kernel.shape[1]
    loss = 0.0
    for i in range(image.shape[0] - kh + 1):
        for j in range(image.shape[1] - kw + 1):
            s = 0.0
            for a in range(kh):
                for b in range(kw):
                    s += kernel[a, b] * image[i + a, j + b]
            r = s - target[i, j]
            loss += r * r
    return loss


def make_conv2d(size=24, k=5, seed=0):
    rng = np.random.default_rng(seed)
    out = size - k + 1
    return (rng.standard_normal((k, k)) / k, rng.standard_normal((size, size)),
            rng.standard_normal((out, out)))


# --------------------------------------------------------------------------------------
# prange loop
# --------------------------------------------------------------------------------------


def prange_logcosh(w, X, y):
    """Log-cosh regression loss, the rows in a ``numba.prange`` loop."""
    n = X.shape[0]
    d = X.shape[1]
    total = 0.0
    for i in numba.prange(n):
        s = 0.0
        for j in range(d):
            s += X[i, j] * w[j]
        total += math.log(math.cosh(s - y[i]))
    return total


def make_prange(n=2000, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    return 0.5 * w, X, X @ w + 0.1 * rng.standard_normal(n)


# --------------------------------------------------------------------------------------
# Logistic regression
# --------------------------------------------------------------------------------------


def logistic_loss(w, b, X, y, lam):
    """Mean logistic loss of labels ``y`` in {-1, 1}, plus ``lam / 2 |w|^2``."""
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.5 * lam * (w @ w)


def make_logreg(n=500, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0.0, 1.0, -1.0)
    return 0.1 * rng.standard_normal(d), 0.0, X, y, 0.01


PROGRAMS = {p.name: p for p in (
    Program("two_layer", problems.two_layer_loss,
            lambda: problems.make_two_layer(*problems.SMALL_TWO_LAYER), (0, 1, 2, 3),
            "seed loss: @, softmax with keepdims"),
    Program("rnn", problems.rnn_loss, lambda: problems.make_rnn(1000), (0, 1),
            "loop with a carried scalar"),
    Program("gmm", problems.gmm_nll, lambda: problems.make_gmm(200, 5, 6), (0, 1, 2),
            "triple loop nest, writes into an array"),
    Program("reproj", problems.reproj_loss, lambda: problems.make_reproj(5, 50, 200), (0, 1),
            "loop with gathers by index"),
    Program("control_flow", problems.control_flow, lambda: problems.make_control_flow(1000),
            (0, 1), "if/elif/else in a loop"),
    Program("gp", gp_nll, make_gp, (0, 1, 2), "cholesky, solve, slogdet"),
    Program("eos", eos_volume, make_eos, (0, 1, 2), "straight line, 120-term polynomial"),
    Program("conv2d", conv2d_loss, make_conv2d, (0, 1), "loop nest 4 deep"),
    Program("prange", prange_logcosh, make_prange, (0,), "prange loop, parallel=True",
            parallel=True),
    Program("logreg", logistic_loss, make_logreg, (0, 1), "@, logaddexp, mean"),
)}
