"""``scipy.stats`` distributions, ``scipy.special`` functions and the ``scipy.linalg`` and
``scipy.signal`` functions NumPy also has, as autograd differentiates them (its
``scipy/stats``, ``scipy/special``, ``scipy/linalg`` and ``scipy/signal`` wrappers), written
with jitgrad's primitives.

Each density takes SciPy's parameters in SciPy's order (the shape parameters, then ``loc`` and
``scale``) and is the closed form of its log-density; ``pdf`` is its exponential. The
derivatives follow from the primitives (``gammaln``, ``digamma``, ``log1p``, ``erfc``...), with
respect to every argument, shape parameters included; on constants the primitives compute
with NumPy (`symbolic.record`). `DISTRIBUTIONS` maps a distribution's
name (``"t"``) to its methods (``"logpdf"``); `SPECIAL`, `LINALG` and `SIGNAL` map a name in
that SciPy module to its handler. `scipy_api.handler_for` looks them up.

Discrete distributions (``poisson``) take their count as a number of the graph, which is not
differentiated (its gradient is zero, as in autograd).
"""

from __future__ import annotations

import collections
import math

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.core.ir import dims_of
from jitgrad.lang import numpy_written as W
from jitgrad.lang import scipy_signal
from jitgrad.lang.numpy_args import as_array
from jitgrad.lang.symbolic import (
    NUMPY,
    Written,
    builder_of,
    larger,
    loc_of,
    ndim_of,
    record,
    records,
    smaller,
    written,
)

_LOG_2PI = math.log(2.0 * math.pi)
_LOG_PI = math.log(math.pi)


def _z(x, loc, scale):
    return (x - loc) / scale


def _exp_of(logpdf):
    def pdf(*args, **kwargs):
        log = logpdf(*args, **kwargs)
        if isinstance(log, Written):  # still to be built: its exp, built with it
            return written(W.exp_of, log.fn, *log.args, **log.kwargs)
        return NUMPY[np.exp](log)
    return pdf


# ---- continuous distributions: log-densities ------------------------------------------------


def t_logpdf(x, df, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    half = (df + 1.0) * 0.5
    return (record("gammaln", half) - record("gammaln", df * 0.5) - 0.5 * (record("log", df) + _LOG_PI)
            - record("log", scale) - half * record("log1p", z * z / df))


def gamma_logpdf(x, a, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return (a - 1.0) * record("log", z) - z - record("gammaln", a) - record("log", scale)


def beta_logpdf(x, a, b, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return ((a - 1.0) * record("log", z) + (b - 1.0) * record("log1p", -z) - betaln(a, b)
            - record("log", scale))


def chi2_logpdf(x, df, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    k = df * 0.5
    return ((k - 1.0) * record("log", z) - z * 0.5 - k * math.log(2.0) - record("gammaln", k)
            - record("log", scale))


def expon_logpdf(x, loc=0.0, scale=1.0):
    return -_z(x, loc, scale) - record("log", scale)


def laplace_logpdf(x, loc=0.0, scale=1.0):
    return -NUMPY[np.abs](_z(x, loc, scale)) - math.log(2.0) - record("log", scale)


def cauchy_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return -_LOG_PI - record("log", scale) - record("log1p", z * z)


def logistic_logpdf(x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return -z - 2.0 * NUMPY[np.logaddexp](0.0, -z) - record("log", scale)


def lognorm_logpdf(x, s, loc=0.0, scale=1.0):
    y = _z(x, loc, scale)
    ly = record("log", y)
    return -(ly * ly) / (2.0 * s * s) - ly - record("log", s) - 0.5 * _LOG_2PI - record("log", scale)


def norm_logcdf(x, loc=0.0, scale=1.0):
    return record("log", record("erfc", -_z(x, loc, scale) / math.sqrt(2.0)) * 0.5)


def norm_logsf(x, loc=0.0, scale=1.0):
    return record("log", record("erfc", _z(x, loc, scale) / math.sqrt(2.0)) * 0.5)


def poisson_logpmf(k, mu, loc=0):
    k = k - loc
    return k * record("log", mu) - mu - record("gammaln", k + 1.0)


def binom_logpmf(k, n, p, loc=0):
    """log C(n, k) + k log p + (n - k) log(1 - p), each product 0 where its count is 0 (p = 0
    or 1 included: p is replaced there by a value whose log is finite, its derivative 0)."""
    k = k - loc
    p_k = record("where", record("eq", k, 0.0), 1.0, p)
    p_rest = record("where", record("eq", n - k, 0.0), 0.0, p)
    return (record("gammaln", n + 1.0) - record("gammaln", k + 1.0)
            - record("gammaln", n - k + 1.0) + k * record("log", p_k)
            + (n - k) * record("log1p", -p_rest))


def binom_pmf(k, n, p, loc=0):
    """C(n, k) p^k (1 - p)^(n - k) (not exp of the log: its derivative is finite at p = 0 and
    1, where a count's power is replaced by 1 where the count is 0)."""
    k = k - loc
    p_k = record("where", record("eq", k, 0.0), 1.0, p)
    p_rest = record("where", record("eq", n - k, 0.0), 0.0, p)
    log_c = record("gammaln", n + 1.0) - record("gammaln", k + 1.0) - \
        record("gammaln", n - k + 1.0)
    return record("exp", log_c) * p_k ** k * (1.0 - p_rest) ** (n - k)


# ---- distribution functions: SciPy's, through the incomplete gamma and beta functions and
# Student's t distribution function (`prims.elementwise`, SciPy's kernels), whose derivatives
# are taken in x only (in a shape parameter or the degrees of freedom they are refused). Below
# the support the value is 0 (above it, 1), as SciPy's.


def _at_least_zero(z):
    return record("maximum", z, 0.0)


def gamma_cdf(x, a, loc=0.0, scale=1.0):
    return record("gammainc", a, _at_least_zero(_z(x, loc, scale)))


def chi2_cdf(x, df, loc=0.0, scale=1.0):
    return record("gammainc", df * 0.5, _at_least_zero(_z(x, loc, scale)) * 0.5)


def beta_cdf(x, a, b, loc=0.0, scale=1.0):
    return record("betainc", a, b, record("minimum", _at_least_zero(_z(x, loc, scale)), 1.0))


def t_cdf(x, df, loc=0.0, scale=1.0):
    return record("stdtr", df, _z(x, loc, scale))


def t_logcdf(x, df, loc=0.0, scale=1.0):
    return record("log", t_cdf(x, df, loc, scale))


def poisson_cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu), 0 below k = 0 (SciPy's pdtr); the count
    is not differentiated."""
    k = NUMPY[np.floor](k - loc)
    below = record("lt", k, 0.0)
    return record("where", below, 0.0,
                  record("gammaincc", record("where", below, 0.0, k) + 1.0, mu))


def multivariate_normal_entropy(mean=None, cov=1.0):
    """(d log(2 pi e) + log det cov) / 2, of a covariance matrix."""
    if ndim_of(cov) != 2:
        raise UnsupportedError("multivariate_normal.entropy of a covariance matrix", loc_of(cov))
    d = cov.shape[0] if records(cov) else np.shape(cov)[0]
    return 0.5 * (NUMPY[np.linalg.slogdet](cov)[1] + d * (_LOG_2PI + 1.0))


def multivariate_normal_logpdf(x, mean=None, cov=1.0, allow_singular=False):
    """log N(x; mean, cov) of one point (``x`` of shape (d,)) or of rows (shape (n, d)),
    through a Cholesky factor of ``cov`` (its log-determinant and a solve); with
    ``allow_singular``, through its eigendecomposition as SciPy's (`W`), its derivative in
    ``cov`` refused (`prims.decompositions.pseudo_covariance`)."""
    d_axis = ndim_of(x) - 1
    if d_axis not in (0, 1) or ndim_of(cov) != 2:
        raise UnsupportedError("multivariate_normal.logpdf of a vector or rows of vectors, "
                               "with a covariance matrix", loc_of(x, cov))
    diff = x - mean if mean is not None else x
    if allow_singular:
        cov = record("pseudo_covariance", cov) if records(cov) else cov
        return written(W.multivariate_normal_logpdf_singular, diff, cov)
    sign_logdet = NUMPY[np.linalg.slogdet](cov)
    logdet = sign_logdet[1]
    d = x.shape[d_axis] if records(x) else np.shape(x)[d_axis]
    if d_axis == 0:
        maha = NUMPY[np.dot](diff, NUMPY[np.linalg.solve](cov, diff))
    else:
        solved = NUMPY[np.linalg.solve](cov, NUMPY[np.transpose](diff))
        maha = NUMPY[np.sum](diff * NUMPY[np.transpose](solved), axis=1)
    return -0.5 * (maha + logdet + d * _LOG_2PI)


def dirichlet_logpdf(x, alpha):
    return (NUMPY[np.sum]((alpha - 1.0) * NUMPY[np.log](x))
            + record("gammaln", NUMPY[np.sum](alpha)) - NUMPY[np.sum](record("gammaln", alpha)))


# ---- scipy.special --------------------------------------------------------------------------


def betaln(a, b):
    return record("gammaln", a) + record("gammaln", b) - record("gammaln", a + b)


def beta(a, b):
    return record("exp", betaln(a, b))


def logit(p):
    return record("log", p) - record("log1p", -p)


def ndtr(x):
    return record("erfc", -x / math.sqrt(2.0)) * 0.5


def log_ndtr(x):
    return record("log", ndtr(x))


def ndtri(p):
    """The standard normal quantile, -sqrt(2) erfcinv(2p) (accurate in the lower tail)."""
    return record("erfcinv", p * 2.0) * -math.sqrt(2.0)


def norm_ppf(q, loc=0.0, scale=1.0):
    return loc + scale * ndtri(q)


def multigammaln(a, d):
    if records(d) or not isinstance(d, int):
        raise UnsupportedError("multigammaln with an integer dimension known while building",
                               loc_of(a))
    total = d * (d - 1) * 0.25 * _LOG_PI
    for j in range(d):
        total = total + record("gammaln", a - j * 0.5)
    return total


PearsonRResult = collections.namedtuple("PearsonRResult", "statistic pvalue")


def pearsonr(x, y, *, alternative="two-sided", method=None, axis=0):
    """scipy.stats.pearsonr of two vectors: r = sum(dx dy) / sqrt(sum(dx^2) sum(dy^2)) about
    the means, kept in [-1, 1] as SciPy does; the p-value is Student's t with n - 2 degrees of
    freedom at t = r sqrt((n - 2) / (1 - r^2)) (SciPy's beta form of the same distribution),
    so both differentiate (the p-value not at r = 0 for two sides, where |t| has a kink)."""
    if method is not None or ndim_of(x) != 1 or ndim_of(y) != 1 \
            or alternative not in ("two-sided", "less", "greater"):
        raise UnsupportedError("scipy.stats.pearsonr of two vectors, without method= (write "
                               "the correlation of rows with np.corrcoef)", loc_of(x, y))
    dx = x - NUMPY[np.mean](x)
    dy = y - NUMPY[np.mean](y)
    r = NUMPY[np.sum](dx * dy) / record("sqrt", NUMPY[np.sum](dx * dx) * NUMPY[np.sum](dy * dy))
    r = record("minimum", record("maximum", r, -1.0), 1.0)
    df = (x.shape[0] if records(x) else np.shape(x)[0]) - 2
    t = r * record("sqrt", df / ((1.0 - r) * (1.0 + r)))
    if alternative == "two-sided":
        p = record("stdtr", df, -NUMPY[np.abs](t)) * 2.0
    else:
        p = record("stdtr", df, t if alternative == "less" else -t)
    return PearsonRResult(r, p)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """scipy.stats.rankdata of a vector (`numpy_written.rankdata`): ranks carry no derivative."""
    if ndim_of(a) != 1 or axis not in (None, 0, -1) or nan_policy != "propagate" or \
            method not in ("average", "min", "max", "dense", "ordinal"):
        raise UnsupportedError("scipy.stats.rankdata of a vector, with nan_policy='propagate' "
                               "(rank each row in a loop)", loc_of(a))
    return written(W.rankdata, as_array(a), method)


def spearmanr(a, b=None, axis=0, nan_policy="propagate", alternative="two-sided"):
    """scipy.stats.spearmanr of two vectors (`numpy_written.spearmanr`): the correlation of
    ranks, so its derivative is zero wherever it exists (as np.sort's order's)."""
    if b is None or ndim_of(a) != 1 or ndim_of(b) != 1 or nan_policy != "propagate" or \
            alternative not in ("two-sided", "less", "greater"):
        raise UnsupportedError("scipy.stats.spearmanr of two vectors, with "
                               "nan_policy='propagate' (for a matrix of correlations, call it "
                               "on each pair)", loc_of(a, b))
    return written(W.spearmanr, as_array(a), as_array(b), alternative)


STATS = {"pearsonr": pearsonr, "rankdata": rankdata, "spearmanr": spearmanr,
         **scipy_signal.STATS}


def _distribution(logpdf, log_name="logpdf", exp_name="pdf"):
    return {log_name: logpdf, exp_name: _exp_of(logpdf)}


DISTRIBUTIONS = {
    "t": {**_distribution(t_logpdf), "cdf": t_cdf, "logcdf": t_logcdf},
    "gamma": {**_distribution(gamma_logpdf), "cdf": gamma_cdf},
    "beta": {**_distribution(beta_logpdf), "cdf": beta_cdf},
    "chi2": {**_distribution(chi2_logpdf), "cdf": chi2_cdf},
    "expon": _distribution(expon_logpdf),
    "laplace": _distribution(laplace_logpdf),
    "cauchy": _distribution(cauchy_logpdf),
    "logistic": _distribution(logistic_logpdf),
    "lognorm": _distribution(lognorm_logpdf),
    "poisson": {**_distribution(poisson_logpmf, "logpmf", "pmf"), "cdf": poisson_cdf},
    "binom": {"logpmf": binom_logpmf, "pmf": binom_pmf},
    "multivariate_normal": {**_distribution(multivariate_normal_logpdf),
                            "entropy": multivariate_normal_entropy},
    "dirichlet": _distribution(dirichlet_logpdf),
    "norm": {"logcdf": norm_logcdf, "logsf": norm_logsf, "ppf": norm_ppf},
}

SPECIAL = {"betaln": betaln, "beta": beta, "logit": logit, "ndtr": ndtr, "log_ndtr": log_ndtr,
           "ndtri": ndtri, "multigammaln": multigammaln}


# ---- scipy.linalg and scipy.signal, where NumPy has the same function ----------------------


def linalg_solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
                 assume_a="gen", transposed=False):
    if transposed:
        a = NUMPY[np.transpose](a)
    return NUMPY[np.linalg.solve](a, b)


def linalg_cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """SciPy's factor is upper triangular unless ``lower=True`` (NumPy's is lower); each reads
    its own triangle only, the upper one that of ``a.T`` NumPy reads."""
    if lower:
        return NUMPY[np.linalg.cholesky](a)
    return NUMPY[np.transpose](NUMPY[np.linalg.cholesky](NUMPY[np.transpose](a)))


def linalg_solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False,
                            overwrite_b=False, check_finite=True):
    """Only ``a``'s triangle is read (its other entries get a zero gradient, as SciPy ignores
    them): the solve of that triangle."""
    if unit_diagonal:
        raise UnsupportedError("solve_triangular with unit_diagonal=True", loc_of(a, b))
    tri = NUMPY[np.tril](a) if lower else NUMPY[np.triu](a)
    if trans in (1, "T"):
        tri = NUMPY[np.transpose](tri)
    elif trans not in (0, "N"):
        raise UnsupportedError(f"solve_triangular with trans={trans!r}", loc_of(a, b))
    return NUMPY[np.linalg.solve](tri, b)


def linalg_cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """scipy.linalg.cho_factor(a, lower): (c, lower), c the Cholesky factor in its triangle and
    ``a``'s own entries in the other, as LAPACK leaves them (SciPy's c is not cleaned)."""
    if not isinstance(lower, (bool, int)):
        raise UnsupportedError("scipy.linalg.cho_factor with `lower` known while building",
                               loc_of(a))
    factor = linalg_cholesky(a, lower=bool(lower))
    rest = NUMPY[np.triu](a, 1) if lower else NUMPY[np.tril](a, -1)
    return factor + rest, bool(lower)


def lapack_dpotrf(a, lower=0, clean=1, overwrite_a=0):
    """scipy.linalg.lapack.dpotrf(a, lower): (the Cholesky factor, info). A matrix LAPACK
    would not factor raises LinAlgError at run time (NumPy's cholesky) instead of returning
    info > 0, so the code after the call sees info == 0 on every path that gets there (GPy's
    jitchol then returns the factor; its jitter loop is not reached)."""
    if records(lower) or records(clean) or not clean:
        raise UnsupportedError("scipy.linalg.lapack.dpotrf with lower known while building and "
                               "clean=1", loc_of(a))
    return linalg_cholesky(a, lower=bool(lower)), 0


def lapack_dtrtri(c, lower=0, unitdiag=0, overwrite_c=0):
    """scipy.linalg.lapack.dtrtri(c, lower): (the inverse of c's triangle, info 0; a singular
    triangle raises at run time, NumPy's solve)."""
    if records(lower) or records(unitdiag) or unitdiag:
        raise UnsupportedError("scipy.linalg.lapack.dtrtri with lower known while building and "
                               "unitdiag=0", loc_of(c))
    tri = NUMPY[np.tril](c) if lower else NUMPY[np.triu](c)
    n = c.shape[0] if records(c) else np.shape(c)[0]
    return NUMPY[np.linalg.solve](tri, NUMPY[np.eye](n)), 0


LAPACK = {"dpotrf": lapack_dpotrf, "dtrtri": lapack_dtrtri}


def linalg_cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """scipy.linalg.cho_solve((c, lower), b): A x = b for A = c c^T (``lower``) or c^T c, two
    triangular solves with the factor's triangle (the other is not read, as SciPy)."""
    if not (isinstance(c_and_lower, tuple) and len(c_and_lower) == 2):
        raise UnsupportedError("scipy.linalg.cho_solve takes (c, lower), the factor and where "
                               "it is", loc_of(b))
    c, lower = c_and_lower
    if not isinstance(lower, (bool, int)):
        raise UnsupportedError("scipy.linalg.cho_solve with `lower` known while building",
                               loc_of(c, b))
    if lower:
        return linalg_solve_triangular(c, linalg_solve_triangular(c, b, lower=True), trans="T",
                                       lower=True)
    return linalg_solve_triangular(c, linalg_solve_triangular(c, b, trans="T"))


def signal_convolve(in1, in2, mode="full", method="auto"):
    if ndim_of(in1) == 2 and ndim_of(in2) == 2:
        return signal_convolve2d(in1, in2, mode)
    if ndim_of(in1) != 1 or ndim_of(in2) != 1:
        raise UnsupportedError("scipy.signal.convolve of vectors (np.convolve) or of matrices",
                               loc_of(in1, in2))
    if mode != "same":  # 'full' and 'valid' are np.convolve's
        return NUMPY[np.convolve](in1, in2, mode=mode)
    # 'same' is the size of in1, centred in the full convolution (np.convolve's 'same' is the
    # size of the longer of the two: they differ where in2 is the longer)
    n, m = _shape2(in1)[0], _shape2(in2)[0]
    full = NUMPY[np.convolve](in1, in2, mode="full")
    return record("getitem", full, (m - 1) // 2, (m - 1) // 2 + n,
                  index_spec=(("s", True, True, False),))


def _shape2(x):
    return tuple(x.shape) if records(x) else np.shape(x)


def _convolve2d_full(a, v):
    """out[p, q] = sum of a[i, j] v[p - i, q - j]: the products a[i, j] v[k, l] with axes
    (i, k, j, l); along l each row shifted right by j (rows padded with n2 zeros, read as rows
    one entry shorter, as np.convolve does), summed over j; then the blocks along k shifted by
    i the same way, summed over i."""
    (n1, n2), (m1, m2) = _shape2(a), _shape2(v)
    w1, w2 = n1 + m1 - 1, n2 + m2 - 1
    t = NUMPY[np.reshape](a, (n1, 1, n2, 1)) * NUMPY[np.reshape](v, (1, m1, 1, m2))
    t = NUMPY[np.concatenate]((t, NUMPY[np.zeros]((n1, m1, n2, n2))), axis=3)
    t = NUMPY[np.reshape](t, (n1 * m1, n2 * (m2 + n2)))
    t = record("getitem", t, n2 * w2, index_spec=(":", ("s", False, True, False)))
    u = NUMPY[np.sum](NUMPY[np.reshape](t, (n1, m1, n2, w2)), axis=2)  # (n1, m1, w2)
    u = NUMPY[np.concatenate]((u, NUMPY[np.zeros]((n1, n1, w2))), axis=1)
    u = NUMPY[np.reshape](u, (n1 * (m1 + n1) * w2,))
    u = record("getitem", u, n1 * w1 * w2, index_spec=(("s", False, True, False),))
    return NUMPY[np.sum](NUMPY[np.reshape](u, (n1, w1, w2)), axis=0)


def signal_convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D convolution of two matrices (`_convolve2d_full`), cut to SciPy's 'same' (the
    size of in1, centred) or 'valid' (where one covers the other)."""
    if ndim_of(in1) != 2 or ndim_of(in2) != 2 or mode not in ("full", "same", "valid") \
            or boundary != "fill" or fillvalue != 0:
        raise UnsupportedError("scipy.signal.convolve2d of two matrices, mode 'full', 'same' or "
                               "'valid', with boundary='fill' and fillvalue=0", loc_of(in1, in2))
    if not records(in1) and not records(in2):
        in1 = NUMPY[np.asarray](in1, dtype=float)
    full = _convolve2d_full(in1, in2)
    if mode == "full":
        return full
    bounds = []
    for n, m in zip(_shape2(in1), _shape2(in2)):
        if mode == "same":
            start, length = (m - 1) // 2, n
        else:
            short = smaller(n, m)
            start, length = short - 1, larger(n, m) - short + 1
        bounds += [start, start + length]
    return record("getitem", full, *bounds, index_spec=(("s", True, True, False),) * 2)


def linalg_block_diag(*arrs):
    """The blocks on the diagonal of a matrix of zeros (a vector is a row, a number a 1x1
    block), joined with np.concatenate."""
    if not arrs:
        return np.zeros((1, 0))
    blocks = []
    for a in arrs:
        a = as_array(a)  # a list of rows (Q = [[dt ** 4 / 4, ...], ...]) is its array
        a = a if records(a) else np.asarray(a, dtype=float)
        nd = ndim_of(a)
        if nd > 2:
            raise UnsupportedError("block_diag of numbers, vectors and matrices", loc_of(a))
        blocks.append(NUMPY[np.reshape](a, (1, -1)) if nd == 1 else
                      NUMPY[np.reshape](a, (1, 1)) if nd == 0 else a)
    rows = []
    for i, a in enumerate(blocks):
        parts = [a if j == i else NUMPY[np.zeros]((a.shape[0], b.shape[1]))
                 for j, b in enumerate(blocks)]
        rows.append(NUMPY[np.concatenate](tuple(parts), axis=1) if len(parts) > 1 else a)
    return NUMPY[np.concatenate](tuple(rows), axis=0) if len(rows) > 1 else rows[0]


LINALG = {"solve": linalg_solve, "cholesky": linalg_cholesky,
          "solve_triangular": linalg_solve_triangular, "block_diag": linalg_block_diag,
          "cho_solve": linalg_cho_solve, "cho_factor": linalg_cho_factor}
def _static_sizes(x, axes) -> list | None:
    """``x``'s sizes along ``axes`` where all are known while building, else None."""
    gb = builder_of(x)
    sizes = []
    for k in axes:
        d = gb.size_class(dims_of(x.atom)[k]) if records(x) and gb is not None else (
            np.shape(x)[k] if not records(x) else None)
        if not isinstance(d, int):
            return None
        sizes.append(d)
    return sizes


def _convolve_runtime(A, B, conv, dots, mode):
    """autograd's convolve where the sizes are known only at run time (or in mode 'same'): a
    loop over A's offsets (`numpy_written.convolve_runtime_1`, along one or two axes), each
    adding one einsum of A's slice and B, contracted along ``dots``, into the full
    convolution; the result's axes are A's others, B's others, then the convolved ones."""
    if len(conv[0]) not in (1, 2) or len(conv[0]) != len(conv[1]):
        raise UnsupportedError("autograd's convolve along more than two axes whose sizes are "
                               "known only at run time (convolve along one or two)",
                               loc_of(A, B))
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    names = [{}, {}]
    for da, db in zip(*dots):
        names[0][da] = names[1][db] = next(letters)
    for side, x in ((0, A), (1, B)):
        for ax in range(ndim_of(x)):
            if ax not in names[side] and ax not in conv[side]:
                names[side][ax] = next(letters)
    rest = [names[side][ax] for side, x in ((0, A), (1, B)) for ax in range(ndim_of(x))
            if ax not in conv[side] and ax not in dots[side]]
    positions = "".join(next(letters) for _ in conv[1])
    a_axes = conv[0] + [ax for ax in range(ndim_of(A)) if ax not in conv[0]]
    b_axes = [ax for ax in range(ndim_of(B)) if ax not in conv[1]] + conv[1]
    a_term = "".join(names[0][ax] for ax in a_axes[len(conv[0]):])
    b_term = "".join(names[1][ax] for ax in b_axes[:-len(conv[1])]) + positions
    spec = None if not a_term else f"{a_term},{b_term}->{''.join(rest)}{positions}"
    a = NUMPY[np.transpose](A * 1.0, tuple(a_axes))
    b = NUMPY[np.transpose](B * 1.0, tuple(b_axes))
    fn = W.convolve_runtime_1 if len(conv[0]) == 1 else W.convolve_runtime_2
    return written(fn, a, b, spec, mode)


def autograd_convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    """autograd's ``scipy.signal.convolve`` (its generalisation of SciPy's: ``axes``, the pairs
    of A's and B's axes convolved; ``dot_axes``, the pairs contracted), modes 'valid' and
    'full': out[a, b, p] = sum over the offsets w and the contracted d of
    K[flipped w, d] * S[w + p, d], where the filter K is the one whose convolved sizes are known
    while building (the smaller, where both are) and S the other ('full': S padded with zeros);
    its axes are A's others, then B's others, then the convolved ones. One einsum, over the
    filter's entries and the signal's windows stacked by offset (unrolled while building)."""
    A, B = as_array(A), as_array(B)
    if mode not in ("valid", "full", "same"):
        raise UnsupportedError(f"autograd's convolve with mode={mode!r}: jitgrad takes "
                               "'valid', 'full' and 'same'", loc_of(A, B))
    if axes is None:
        axes = (list(range(ndim_of(A))), list(range(ndim_of(A))))
    conv = [list(axes[0]), list(axes[1])]
    dots = [list(dot_axes[0] or ()), list(dot_axes[1] or ())]
    sizes = [_static_sizes(A, conv[0]), _static_sizes(B, conv[1])]
    if sizes[0] is None and sizes[1] is None or mode == "same":
        return _convolve_runtime(A, B, conv, dots, mode)
    k = 1 if sizes[1] is not None and (sizes[0] is None or all(
        b <= a for a, b in zip(sizes[0], sizes[1]))) else 0  # the filter: A (0) or B (1)
    arrays, filt, sig = (A, B), k, 1 - k
    S = arrays[sig]
    if mode == "full":  # zeros around the signal: then the 'valid' convolution
        width = [(0, 0)] * ndim_of(S)
        for ax, n in zip(conv[sig], sizes[filt]):
            width[ax] = (n - 1, n - 1)
        S = NUMPY[np.pad](S, tuple(width))
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    names = [{}, {}]
    for j in range(len(conv[0])):  # the positions, named on the signal's axis
        names[sig][conv[sig][j]] = next(letters)
    for da, db in zip(*dots):
        names[0][da] = names[1][db] = next(letters)
    for side in (0, 1):
        for ax in range(ndim_of(arrays[side])):
            if ax not in names[side] and ax not in conv[side]:
                names[side][ax] = next(letters)
    rest = [names[side][ax] for side in (0, 1) for ax in range(ndim_of(arrays[side]))
            if ax not in conv[side] and ax not in dots[side]]
    out_terms = "".join(rest) + "".join(names[sig][ax] for ax in conv[sig])
    k_term = "".join(names[filt][ax] for ax in range(ndim_of(arrays[filt]))
                     if ax not in conv[filt])
    s_term = "".join(names[sig][ax] for ax in range(ndim_of(S)))
    lengths = [S.shape[ax] - n + 1 for ax, n in zip(conv[sig], sizes[filt])]
    kernels, windows = [], []
    for offset in np.ndindex(*sizes[filt]):
        spec_k = [":"] * ndim_of(arrays[filt])
        for ax in conv[filt]:
            spec_k[ax] = "i"
        idx_k = [n - 1 - w for _, n, w in sorted(zip(conv[filt], sizes[filt], offset))]
        kernels.append(record("getitem", arrays[filt], *idx_k, index_spec=tuple(spec_k)))
        spec_s, idx_s = [":"] * ndim_of(S), []
        for ax, w, m in sorted(zip(conv[sig], offset, lengths), key=lambda t: t[0]):
            spec_s[ax] = ("s", True, True, False)
            idx_s += [w, w + m]
        windows.append(record("getitem", S, *idx_s, index_spec=tuple(spec_s)))
    w = next(letters)  # the filter's offsets, one axis: one product summed over them
    return NUMPY[np.einsum](f"{k_term}{w},{s_term}{w}->{out_terms}",
                            NUMPY[np.stack](tuple(kernels), axis=-1),
                            NUMPY[np.stack](tuple(windows), axis=-1))


def signal_lfilter(b, a, x, axis=-1, zi=None):
    """scipy.signal.lfilter of a vector (its IIR recursion: `numpy_written.lfilter_zi`, a loop
    the frontend builds and differentiates in every argument, the state ``zi`` too)."""
    b, a, x = (as_array(v) for v in (b, a, x))
    if ndim_of(b) != 1 or ndim_of(a) != 1 or ndim_of(x) != 1 or (
            zi is not None and ndim_of(zi) != 1):
        raise UnsupportedError("scipy.signal.lfilter of a vector, with vectors of coefficients "
                               "(and a vector zi): filter each row in a loop", loc_of(b, a, x))
    if axis not in (-1, 0):
        raise UnsupportedError("scipy.signal.lfilter along an axis a vector does not have",
                               loc_of(x))
    if zi is None:
        return written(W.lfilter, b, a, x)
    return written(W.lfilter_zi, b, a, x, as_array(zi))


# scipy.signal's generalized cosine windows: w[k] = sum_j (-1)^j a_j cos(2 pi j k / M)
_COSINE_WINDOWS = {"hann": (0.5, 0.5), "hanning": (0.5, 0.5), "hamming": (0.54, 0.46),
                   "blackman": (0.42, 0.5, 0.08), "boxcar": (1.0,), "rect": (1.0,),
                   "rectangular": (1.0,), "ones": (1.0,)}


def signal_get_window(window, Nx, fftbins=True):
    """scipy.signal.get_window of a cosine window named by a string known while building, of a
    length known at run time too: periodic (``fftbins``, M = Nx) or symmetric (M = Nx - 1)."""
    if not isinstance(window, str) or window not in _COSINE_WINDOWS or records(fftbins):
        raise UnsupportedError("scipy.signal.get_window of a window named by a string known "
                               f"while building, one of {', '.join(_COSINE_WINDOWS)}",
                               loc_of(Nx))
    k = NUMPY[np.arange](Nx) * 1.0
    m = Nx if fftbins else Nx - 1
    w = 0.0 * k
    for j, a in enumerate(_COSINE_WINDOWS[window]):
        w = w + (-1.0) ** j * a * (NUMPY[np.cos](k * (2.0 * math.pi * j) / m) if j else 1.0)
    return w


def fft_dct(x, type=2, n=None, axis=-1, norm=None, overwrite_x=False, workers=None,
            orthogonalize=None):
    """scipy.fft.dct (and scipy.fftpack.dct) of type 2 along one axis: the product with the
    matrix C[k, j] = 2 cos(pi k (2j + 1) / (2N)) (norm='ortho': row 0 times sqrt(1/(4N)), the
    others times sqrt(1/(2N)), which makes it orthogonal), a linear map of x."""
    if type != 2 or n is not None or norm not in (None, "backward", "ortho") or \
            orthogonalize not in (None, norm == "ortho") or records(axis):
        raise UnsupportedError("scipy.fft.dct of type 2, norm None or 'ortho', without n=",
                               loc_of(x))
    nd = ndim_of(x)
    axis = axis % nd
    size = x.shape[axis] if records(x) else np.shape(x)[axis]
    k = NUMPY[np.arange](size) * 1.0
    c = NUMPY[np.cos](NUMPY[np.outer](k, 2.0 * k + 1.0) * (math.pi / (2.0 * size))) * 2.0
    if norm == "ortho":
        scale = NUMPY[np.where](k == 0.0, (0.25 / size) ** 0.5, (0.5 / size) ** 0.5)
        c = c * NUMPY[np.reshape](scale, (-1, 1))
    moved = NUMPY[np.moveaxis](x, axis, -1)
    return NUMPY[np.moveaxis](NUMPY[np.matmul](moved, NUMPY[np.transpose](c)), -1, axis)


FFT = {"dct": fft_dct}

SIGNAL = {"convolve": signal_convolve, "convolve2d": signal_convolve2d,
          "lfilter": signal_lfilter, "get_window": signal_get_window, **scipy_signal.SIGNAL}
AUTOGRAD_SIGNAL = {"convolve": autograd_convolve}  # (autograd.scipy.signal)
