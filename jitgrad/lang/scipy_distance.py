"""``scipy.spatial.distance``: the distances numerical code computes kernels from (``pdist``,
``cdist``, ``squareform``, ``sqeuclidean``, ``euclidean``), written as NumPy on jitgrad's
primitives, so that their derivatives follow.

``cdist(XA, XB)`` is the metric of ``XA[:, None] - XB[None, :]`` along the last axis;
``pdist(X)`` the metric of the pairs ``i < j`` in SciPy's order (``np.triu_indices(n, 1)``);
``squareform`` of such a vector gathers each entry of the symmetric matrix from it (its
derivative sends each entry's adjoint back, both triangles to the same pair), and of a matrix
takes its upper triangle. The Euclidean distance has no derivative where two points coincide
(as ``np.sqrt`` at 0); pairs on the diagonal of ``squareform`` are zeros, not distances.
SciPy's own checks (``checks=True``: a symmetric matrix with a zero diagonal) are not made.
"""

from __future__ import annotations

import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang.symbolic import NUMPY, all_known, loc_of, ndim_of, record

_np = NUMPY.__getitem__


def _scipy():
    """SciPy's own module, already imported by the code that called it."""
    return sys.modules["scipy.spatial.distance"]


def _metric(metric, A, B, name):
    """``metric`` of the points ``A`` and ``B`` (broadcast together) along their last axis."""
    if metric in ("cosine", "correlation"):  # 1 - the cosine of the angle (of the points
        if metric == "correlation":  # less their own means, for the correlation)
            A = A - _np(np.mean)(A, -1, keepdims=True)
            B = B - _np(np.mean)(B, -1, keepdims=True)
        norms = _np(np.sqrt)(_np(np.sum)(A * A, -1)) * _np(np.sqrt)(_np(np.sum)(B * B, -1))
        return 1.0 - _np(np.sum)(A * B, -1) / norms
    if metric == "braycurtis":
        return _np(np.sum)(_np(np.abs)(A - B), -1) / _np(np.sum)(_np(np.abs)(A + B), -1)
    diff = A - B
    if metric == "sqeuclidean":
        return _np(np.sum)(diff * diff, -1)
    if metric == "euclidean":
        return _np(np.sqrt)(_np(np.sum)(diff * diff, -1))
    if metric == "cityblock":
        return _np(np.sum)(_np(np.abs)(diff), -1)
    if metric == "chebyshev":
        return _np(np.max)(_np(np.abs)(diff), -1)
    raise UnsupportedError(f"scipy.spatial.distance.{name} with metric={metric!r} (jitgrad "
                           "takes 'sqeuclidean', 'euclidean', 'cityblock', 'chebyshev', "
                           "'cosine', 'correlation' and 'braycurtis')", loc_of(diff))


def _points(X, name):
    if ndim_of(X) != 2:
        raise UnsupportedError(f"scipy.spatial.distance.{name} of points that are not the rows "
                               "of a matrix", loc_of(X))
    return X


def cdist(XA, XB, metric="euclidean", **kwargs):
    if kwargs:
        raise UnsupportedError(f"scipy.spatial.distance.cdist(..., {', '.join(kwargs)}=)",
                               loc_of(XA, XB))
    if all_known(XA, XB):
        return _scipy().cdist(XA, XB, metric)
    A = _np(np.expand_dims)(_points(XA, "cdist"), 1)
    B = _np(np.expand_dims)(_points(XB, "cdist"), 0)
    return _metric(metric, A, B, "cdist")


def pdist(X, metric="euclidean", **kwargs):
    if kwargs:
        raise UnsupportedError(f"scipy.spatial.distance.pdist(..., {', '.join(kwargs)}=)",
                               loc_of(X))
    if all_known(X):
        return _scipy().pdist(X, metric)
    X = _points(X, "pdist")
    i, j = _np(np.triu_indices)(X.shape[0], 1)
    return _metric(metric, _rows(X, i), _rows(X, j), "pdist")


def _rows(X, at):
    """The rows of the matrix ``X`` at the integers ``at``: a gather, whose adjoint adds up the
    rows read more than once."""
    return record("take", X, record("index_positions", at, X, kind="rows"))


def squareform(X, force="no", checks=True):
    if all_known(X):
        return _scipy().squareform(X, force, checks)
    if force not in ("no", "tomatrix", "tovector") or force == "tomatrix" and ndim_of(X) != 1 \
            or force == "tovector" and ndim_of(X) != 2 or ndim_of(X) not in (1, 2):
        raise UnsupportedError("scipy.spatial.distance.squareform of a condensed vector or a "
                               "square matrix", loc_of(X))
    if ndim_of(X) == 2:  # the upper triangle, row by row
        i, j = _np(np.triu_indices)(X.shape[0], 1)
        return _np(np.take)(_np(np.ravel)(X), i * X.shape[1] + j)
    # n (n - 1) / 2 entries: n = ceil(sqrt(2 m)), as SciPy finds it
    n = record("cast", _np(np.ceil)(_np(np.sqrt)(X.shape[0] * 2.0)), kind="i")
    r = _np(np.expand_dims)(_np(np.arange)(n), 1)
    c = _np(np.expand_dims)(_np(np.arange)(n), 0)
    lo, hi = _np(np.minimum)(r, c), _np(np.maximum)(r, c)
    at = n * lo - lo * (lo + 1) // 2 + hi - lo - 1  # the pair (lo, hi) in the vector
    diagonal = r == c
    at = _np(np.where)(diagonal, 0, at)
    return _np(np.where)(diagonal, 0.0, _np(np.take)(X, at))


def sqeuclidean(u, v, w=None):
    """sum(w (u - v)**2) of two vectors."""
    if ndim_of(u) > 1 or ndim_of(v) > 1:
        raise UnsupportedError("scipy.spatial.distance.sqeuclidean of arrays that are not "
                               "vectors (SciPy takes 1-D input)", loc_of(u, v))
    d = (u - v) * (u - v)
    return _np(np.sum)(d if w is None else d * w)


def euclidean(u, v, w=None):
    return _np(np.sqrt)(sqeuclidean(u, v, w))


DISTANCE = {"pdist": pdist, "cdist": cdist, "squareform": squareform,
            "sqeuclidean": sqeuclidean, "euclidean": euclidean}
