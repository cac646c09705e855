"""scipy.sparse matrices made inside a differentiated function, as a value type of their own.

A sparse matrix while building is a `Sparse`: its dense value (a float matrix of the graph, a
`complex_pairs.Complex` of two, or a NumPy array known while building) and which of SciPy's
two families it belongs to: a sparse *matrix* (``coo_matrix``, ``csr_matrix``, ``diags``,
``eye``...), whose ``*`` is the matrix product and ``**`` the matrix power, or a sparse
*array* (``csr_array``, ``diags_array``...), whose ``*`` is elementwise, as NumPy's. Each
operation is its meaning on the dense value, so the graph, its derivative and the generated
code are those of dense arrays, and the gradient with respect to the data flowing into a
matrix (the values of ``coo_matrix((data, (i, j)))``, the diagonals of ``diags``) follows.
Nothing here is sparse in the generated code: an n-by-n matrix costs n^2 memory, and
``spsolve`` is a dense solve.

The forms taken:

* made by ``coo/csr/csc_matrix`` and ``_array`` of ``(data, (row, col))`` (entries at the same
  place add up, as SciPy sums duplicates: finite-element assembly), of a dense matrix, of
  another sparse matrix, or of a shape ``(m, n)`` (zeros); ``diags``/``diags_array``, ``eye``/
  ``eye_array``/``identity``, ``kron``, ``hstack``/``vstack`` of sparse matrices;
* ``A @ x``, ``A.dot(x)``, ``A * x`` (by family), ``A + B``, ``A - B``, ``-A``, ``c * A``,
  ``A / c``, ``A.multiply(B)``, ``A.power(p)``, ``A ** k`` (matrix power of a matrix), ``A.T``,
  ``A.transpose()``, ``A.conj()``, ``A.real``, ``A.imag``, ``A.toarray()``, ``A.todense()``
  (`Matrix`, NumPy's np.matrix), ``A.sum(axis)``, ``A.mean(axis)``, ``A.diagonal(k)``,
  ``A.shape``, ``A.ndim``, ``A.tocsr()`` and the other formats (the same value), ``A.copy()``;
  ``A[rows, :]``, ``A[:, cols]``, ``A[1:3]`` and ``A[i, j]`` (integer arrays, masks, slices,
  or two numbers);
* ``scipy.sparse.linalg.spsolve(A, b)`` (``np.linalg.solve`` of the dense matrix),
  ``scipy.sparse.linalg.norm``, ``scipy.sparse.issparse``.

Guarantees: a sparse matrix never reaches a NumPy function or a primitive. What is not
written here raises `UnsupportedError` naming the operation and what to write instead (NumPy
functions of a sparse matrix, comparisons, its truth, ``.nnz``, ``.data``, item assignment,
CSR's ``(data, indices, indptr)``), never a silently dense meaning: ``A * B`` is never
elementwise for a sparse matrix. A sparse matrix passed to the function as an argument is
refused at the call (`core.types`: pass ``A.toarray()`` and write ``@``); one made outside the
function and read as a global or a closure's variable is a constant of the graph
(`constant_dense`).
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from jitgrad.core.errors import UnsupportedError
from jitgrad.lang import complex_pairs, symbolic
from jitgrad.lang.symbolic import NUMPY, Written, current_builder, loc_of, ndim_of, records, written

_ALL = slice(None)
# the names of the functions that make a sparse matrix (the family by the name's ending)
_FORMATS = ("coo", "csr", "csc", "bsr", "dia", "lil", "dok")


def _parts(v):
    return (v.re, v.im) if isinstance(v, complex_pairs.Complex) else (v,)


def _loc(*values):
    parts = [p for v in values for p in _parts(v.dense if isinstance(v, (Sparse, Matrix))
                                              else v)]
    loc = loc_of(*parts)
    if loc is None and current_builder() is not None:  # (of matrices known while building)
        loc = current_builder().loc
    return loc


def _refuse(what, *values):
    raise UnsupportedError(what, _loc(*values))


def _fn(fn, *args, **kwargs):
    """NumPy's ``fn`` of dense values: the complex formula where one is complex."""
    if complex_pairs.takes(fn, args, kwargs):
        return complex_pairs.call(fn, args, kwargs)
    return NUMPY[fn](*args, **kwargs)


def _op(op, a, b):
    """``a op b`` of dense values (numbers, arrays, complex values)."""
    if complex_pairs.involved(a, b):
        return complex_pairs.binary(op, a, b)
    if not records(a) and not records(b):
        return op(np.asarray(a), np.asarray(b)) if op is operator.matmul else op(a, b)
    return op(a, b)


def _number(v) -> bool:
    return ndim_of(v.dense if isinstance(v, (Sparse, Matrix)) else v) == 0 and not isinstance(
        v, (Sparse, Matrix, tuple, list))


class Sparse:
    """A scipy.sparse matrix while building: ``dense``, its entries as a dense matrix, and
    ``matrix``, whether ``*`` is the matrix product (SciPy's sparse matrices) or elementwise
    (its sparse arrays)."""

    __slots__ = ("dense", "matrix")
    __array_ufunc__ = None  # ndarray * A: A's __rmul__, as SciPy's own priority makes it
    __hash__ = None

    def __init__(self, dense, matrix: bool):
        # (not yet a value: a `Written` still to build, a branch's merge still to close)
        known = all(records(p) or isinstance(p, (np.ndarray, int, float))
                    for p in _parts(dense))
        if known and ndim_of(dense) != 2:
            _refuse(f"a scipy.sparse matrix of rank {ndim_of(dense)} (jitgrad takes "
                    "two-dimensional ones)", dense)
        self.dense, self.matrix = dense, matrix

    def __repr__(self) -> str:
        return f"Sparse({self.dense!r}, matrix={self.matrix})"

    def _like(self, dense):
        return Sparse(dense, self.matrix)

    # -- what it holds -------------------------------------------------------------------
    @property
    def shape(self):
        return self.dense.shape

    ndim = 2

    @property
    def dtype(self):
        return np.dtype(complex if complex_pairs.is_complex(self.dense) else float)

    @property
    def T(self):
        return self._like(_fn(np.transpose, self.dense))

    def transpose(self, axes=None, copy=False):
        return self.T

    def toarray(self, order=None, out=None):
        if out is not None:
            _refuse("A.toarray(out=...) of a scipy.sparse matrix (assign: d = A.toarray())",
                    self)
        return self.dense

    def todense(self, order=None, out=None):
        dense = self.toarray(order, out)
        return Matrix(dense) if self.matrix else dense

    @property
    def A(self):  # (SciPy's older spelling of toarray)
        return self.dense

    def copy(self):
        return self

    def _same(self, *args, **kwargs):
        return self

    tocsr = tocsc = tocoo = todia = tobsr = asformat = sorted_indices = _same

    def _in_place(self):
        """``A.sum_duplicates()``, ``A.eliminate_zeros()``: the storage, not the values
        (the dense value has duplicates summed and zeros as entries already)."""

    sum_duplicates = eliminate_zeros = sort_indices = prune = _in_place

    def asfptype(self):
        return self

    def astype(self, dtype, casting="unsafe", copy=True):
        kind = np.dtype(dtype).kind
        if kind == "f":
            if complex_pairs.is_complex(self.dense):
                _refuse("A.astype(float) of a complex sparse matrix (take A.real)", self)
            return self
        if kind == "c":
            return self._like(complex_pairs.lift(self.dense))
        return _refuse(f"A.astype({np.dtype(dtype)}) of a sparse matrix (jitgrad's are float "
                       "or complex)", self)

    @property
    def real(self):
        return self._like(complex_pairs.real(self.dense)) if complex_pairs.is_complex(
            self.dense) else self

    @property
    def imag(self):
        if complex_pairs.is_complex(self.dense):
            return self._like(complex_pairs.imag(self.dense))
        return self._like(_op(operator.mul, self.dense, 0.0))

    def conj(self, copy=True):
        return self._like(complex_pairs.conj(self.dense)) if complex_pairs.is_complex(
            self.dense) else self

    conjugate = conj

    def diagonal(self, k=0):
        return _fn(np.diagonal, self.dense, k)

    def sum(self, axis=None, dtype=None, out=None):
        """A number; along an axis, SciPy's np.matrix of one row or column (sparse matrices)
        or the vector (sparse arrays)."""
        if dtype is not None or out is not None:
            _refuse("A.sum(dtype=, out=) of a sparse matrix", self)
        if axis is None:
            return _fn(np.sum, self.dense)
        total = _fn(np.sum, self.dense, axis, None, None, self.matrix)
        return Matrix(total) if self.matrix else total

    def mean(self, axis=None, dtype=None, out=None):
        if dtype is not None or out is not None:
            _refuse("A.mean(dtype=, out=) of a sparse matrix", self)
        if axis is None:
            return _fn(np.mean, self.dense)
        mean = _fn(np.mean, self.dense, axis, None, None, self.matrix)
        return Matrix(mean) if self.matrix else mean

    def dot(self, other):
        return self @ other

    def multiply(self, other):
        """Entry by entry, as a sparse matrix of the broadcast shape."""
        return self._like(_op(operator.mul, self.dense, dense_of(other)))

    def power(self, n, dtype=None):
        if not _number(n):
            _refuse("A.power(p) with p that is not a number", self, n)
        return self._like(_op(operator.pow, self.dense, n))

    def __getattr__(self, attr):
        if attr.startswith(("_", "jitgrad")):  # (probes of Python's, jitgrad's)
            raise AttributeError(attr)
        hint = {"nnz": "its count of stored entries depends on how it was stored; count "
                       "np.count_nonzero(A.toarray())",
                "data": "its stored entries (use A.toarray())",
                "indices": "its storage (use A.toarray())", "indptr": "its storage",
                "row": "its storage", "col": "its storage"}.get(attr, "")
        raise UnsupportedError(f"the attribute .{attr} of a scipy.sparse matrix is not "
                               f"supported{' (' + hint + ')' if hint else ''}; jitgrad takes "
                               f"{_TAKEN}", _loc(self))

    # -- operators ----------------------------------------------------------------------
    def __matmul__(self, other):
        return _product(self, other)

    def __rmatmul__(self, other):
        return _product(other, self)

    def __mul__(self, other):
        if _number(other):
            return self._like(_op(operator.mul, self.dense, other))
        if self.matrix:
            return _product(self, other)
        return self.multiply(other)

    def __rmul__(self, other):
        if _number(other):
            return self._like(_op(operator.mul, other, self.dense))
        if self.matrix:
            return _product(other, self)
        return self.multiply(other)

    def __truediv__(self, other):
        if not _number(other):
            _refuse("dividing a sparse matrix by an array (divide by a number, or write "
                    "A.multiply(1 / B))", self, other)
        return self._like(_op(operator.truediv, self.dense, other))

    def __pow__(self, n):
        if not self.matrix:
            return self.power(n)
        if not (isinstance(n, int) and n >= 1):
            _refuse("A ** k of a sparse matrix (the matrix power) with k other than a "
                    "positive integer known while building", self)
        out = self
        for _ in range(n - 1):
            out = _product(out, self)
        return out

    def __add__(self, other):
        return _sum(operator.add, self, other)

    def __radd__(self, other):
        return _sum(operator.add, other, self)

    def __sub__(self, other):
        return _sum(operator.sub, self, other)

    def __rsub__(self, other):
        return _sum(operator.sub, other, self)

    def __neg__(self):
        return self._like(_op(operator.mul, self.dense, -1.0))

    def __pos__(self):
        return self

    def __bool__(self):
        raise UnsupportedError("the truth of a scipy.sparse matrix (SciPy raises: test "
                               "A.toarray().any())", _loc(self))

    def __len__(self):
        raise UnsupportedError("len() of a scipy.sparse matrix (SciPy raises; use A.shape[0])",
                               _loc(self))

    def __iter__(self):
        _refuse("iterating over a scipy.sparse matrix (iterate over A.toarray())", self)


_TAKEN = ("@, *, +, -, .T, .toarray(), .todense(), .dot, .multiply, .power, .sum, .mean, "
          ".diagonal, .shape, .tocsr()/.tocsc()/.tocoo(), indexing by rows and columns, and "
          "scipy.sparse.linalg.spsolve")


class Matrix:
    """NumPy's np.matrix that SciPy's sparse matrices give (``A.todense()``, ``A.sum(axis)``):
    its dense value, always of rank 2. Only the ways back to an array are taken (``.A``,
    ``.A1``, ``.getA()``, ``np.asarray(m)``, ``np.array(m)``, ``.T``, ``.shape``); the rest
    is refused, since np.matrix's ``*`` and indexing are not an array's."""

    __slots__ = ("dense",)
    __array_ufunc__ = None
    __hash__ = None

    def __init__(self, dense):
        self.dense = dense

    def __repr__(self) -> str:
        return f"Matrix({self.dense!r})"

    @property
    def A(self):
        return self.dense

    def getA(self):
        return self.dense

    @property
    def A1(self):
        return _fn(np.ravel, self.dense)

    def getA1(self):
        return self.A1

    @property
    def shape(self):
        return self.dense.shape

    ndim = 2

    @property
    def T(self):
        return Matrix(_fn(np.transpose, self.dense))

    def __getattr__(self, attr):
        if attr.startswith(("_", "jitgrad")):  # (probes of Python's, jitgrad's)
            raise AttributeError(attr)
        raise UnsupportedError(f"the attribute .{attr} of a np.matrix (what a scipy.sparse "
                               "matrix's .todense() and .sum(axis) give) is not supported: take "
                               "its array first, m.A or np.asarray(m)", _loc(self))

    def _refused(self, *args):
        _refuse("arithmetic on a np.matrix (what a scipy.sparse matrix's .todense() and "
                ".sum(axis) give: its * is the matrix product); take its array first, "
                "np.asarray(m) or m.A", self)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __matmul__ = _refused
    __rmatmul__ = __truediv__ = __rtruediv__ = __pow__ = __neg__ = __bool__ = _refused
    __len__ = __iter__ = _refused


symbolic.SPARSE_TYPES = (Sparse, Matrix)


def unbuilt(value) -> list:
    """The `Written` values a handler's result holds (a sparse matrix's dense value, or its
    two parts), for the frontend to build in the caller's place (`built`)."""
    dense = value.dense if isinstance(value, Sparse) else None
    return [p for p in _parts(dense) if isinstance(p, Written)]


def built(value, build):
    """``value`` with each `Written` it holds replaced by ``build(written)``."""
    if not unbuilt(value):
        return value
    dense = value.dense
    if isinstance(dense, complex_pairs.Complex):
        dense = complex_pairs.pair(*(build(p) if isinstance(p, Written) else p
                                     for p in (dense.re, dense.im)))
    else:
        dense = build(dense)
    return Sparse(dense, value.matrix)


def dense_of(v):
    """The dense value of a sparse matrix, a np.matrix or an array."""
    return v.dense if isinstance(v, (Sparse, Matrix)) else v


def involved(*values) -> bool:
    """Whether one of ``values`` is a sparse matrix or a np.matrix (at any depth of tuples
    and lists)."""
    for v in values:
        if isinstance(v, (Sparse, Matrix)):
            return True
        if isinstance(v, (tuple, list)) and involved(*v):
            return True
        if isinstance(v, dict) and involved(*v.values()):
            return True
    return False


def _product(a, b):
    """The matrix product ``a @ b`` with a sparse operand: a sparse matrix of two sparse
    ones, else the dense array (NumPy's result of the dense operands)."""
    if _number(a) or _number(b):
        _refuse("@ with a number (SciPy raises: scalar operands are not allowed, use *)", a, b)
    if isinstance(a, Matrix) or isinstance(b, Matrix):
        Matrix._refused(a if isinstance(a, Matrix) else b)
    product = _op(operator.matmul, dense_of(a), dense_of(b))
    if isinstance(a, Sparse) and isinstance(b, Sparse):
        return a._like(product)
    return product


def _sum(op, a, b):
    """``a + b``, ``a - b``: of two sparse matrices a sparse one; with a dense array, SciPy's
    np.matrix (sparse matrices) or the array (sparse arrays); with a number, refused (SciPy
    takes only 0, which does nothing)."""
    if _number(a) or _number(b):
        _refuse("adding a number to a scipy.sparse matrix (SciPy refuses: it would fill every "
                "entry; add it to A.toarray())", a, b)
    if isinstance(a, Matrix) or isinstance(b, Matrix):
        Matrix._refused(a if isinstance(a, Matrix) else b)
    total = _op(op, dense_of(a), dense_of(b))
    if isinstance(a, Sparse) and isinstance(b, Sparse):
        return a._like(total)
    sparse = a if isinstance(a, Sparse) else b
    return Matrix(total) if sparse.matrix else total


def binary(op, a, b):
    """``a op b`` (Python's operator ``op``) with a sparse matrix or a np.matrix among them."""
    if op in (operator.add, operator.sub):
        return _sum(op, a, b)
    if op is operator.matmul:
        return _product(a, b)
    if op in (operator.mul, operator.truediv, operator.pow):  # (its own, on either side)
        if isinstance(a, (Sparse, Matrix)):
            return {operator.mul: a.__mul__, operator.truediv: a.__truediv__,
                    operator.pow: a.__pow__}[op](b)
        if op is operator.mul:
            return b.__rmul__(a)
        _refuse(f"{'dividing by' if op is operator.truediv else 'raising to'} a scipy.sparse "
                "matrix (SciPy's is elementwise: write it on A.toarray())", a, b)
    name = getattr(op, "__name__", str(op)).strip("_")
    _refuse(f"the operator {name} on a scipy.sparse matrix (jitgrad takes + - * / @ and "
            "** of a sparse matrix; compare A.toarray())", a, b)


def index_keys(a: Sparse, keys: tuple):
    """The index ``A[keys]`` checked: None for two numbers (the entry, ``A[i, j]``); else
    per axis None for a slice (the frontend builds it as written) or the integer vector or
    boolean mask to take along it."""
    if len(keys) == 1:
        keys = (keys[0], _ALL)
    if len(keys) != 2:
        _refuse(f"indexing a scipy.sparse matrix with {len(keys)} indices", a)
    if all(_number(k) and not isinstance(k, slice) for k in keys):
        return None
    out = []
    for key in keys:
        if isinstance(key, slice):
            out.append(None)
            continue
        if _number(key):
            _refuse("a number beside an array or `:` in indexing a scipy.sparse matrix "
                    "(SciPy keeps the axis: write A[[i], :])", a)
        key = np.asarray(key) if isinstance(key, (list, tuple, range)) else key
        if ndim_of(key) != 1 or key.dtype.kind not in "iub":
            _refuse("indexing a scipy.sparse matrix with an index that is not an integer "
                    "vector, a boolean mask or `:`", a)
        out.append(key)
    return tuple(out)


# ------------------------------------------------------------------------- making them


def _index_vector(v, what):
    if isinstance(v, range) or type(v).__name__ == "RunTimeRange":  # (the frontend's)
        v = np.arange(v.start, v.stop, v.step) if not any(
            records(e) for e in (v.start, v.stop, v.step)) else NUMPY[np.arange](
                v.start, v.stop, v.step)
    if isinstance(v, (list, tuple)):
        v = NUMPY[np.asarray](v) if any(records(e) for e in v) else np.asarray(v)
    if ndim_of(v) != 1:
        _refuse(f"the {what} indices of a scipy.sparse matrix as something other than an "
                "integer vector", v)
    kind = v.dtype.kind
    if kind == "f":
        v = v.astype(np.int64)
    elif kind not in "iu":
        _refuse(f"the {what} indices of a scipy.sparse matrix of dtype {v.dtype}", v)
    return v


def _float_data(data):
    if isinstance(data, (list, tuple)):
        data = NUMPY[np.asarray](data)
    if complex_pairs.is_complex(data):
        return complex_pairs.lift(data)
    if not records(data):
        data = np.asarray(data, dtype=float)
        return float(data) if data.ndim == 0 else data
    return data if data.dtype.kind == "f" else data * 1.0


def _shape(shape, rows, cols, where):
    if shape is None:
        if records(rows) or records(cols):
            _refuse(f"{where} without shape= of indices known only at run time (give "
                    "shape=(m, n))", rows, cols)
        return (int(rows.max()) + 1 if rows.size else 0, int(cols.max()) + 1 if cols.size
                else 0)
    if len(shape) != 2:
        _refuse(f"{where} of shape {shape} (jitgrad takes matrices)", rows)
    return tuple(shape)


def from_coordinates(data, rows, cols, shape):
    """The dense matrix of ``shape`` whose entry (rows[k], cols[k]) adds up data[k]."""
    m, n = shape
    if isinstance(data, complex_pairs.Complex):
        return complex_pairs.pair(*(from_coordinates(complex_pairs.full(p, q), rows, cols, shape)
                                    for p, q in ((data.re, data.im), (data.im, data.re))))
    if not any(records(v) for v in (data, rows, cols, m, n)):
        out = np.zeros((m, n))
        np.add.at(out, (rows, cols), data)
        return out
    return written(_assembled, data, rows, cols, m, n)


def _assembled(data, rows, cols, m, n):
    """Written: the coordinate matrix's entries added up in a dense one (SciPy raises for an
    index out of range; so does this)."""
    if rows.shape[0] != data.shape[0] or cols.shape[0] != data.shape[0]:
        raise ValueError("scipy.sparse: row, column, and data arrays must have the same length")
    out = np.zeros((m, n))
    for k in range(data.shape[0]):
        i = rows[k]
        j = cols[k]
        if i < 0 or i >= m or j < 0 or j >= n:
            raise ValueError("scipy.sparse: an index exceeds the matrix dimensions")
        out[i, j] += data[k]
    return out


def _maker(matrix: bool, name: str):
    def make(arg1, shape=None, dtype=None, copy=False, **kwargs):
        if kwargs:
            _refuse(f"scipy.sparse.{name}(..., {', '.join(kwargs)}=)", arg1)
        if isinstance(arg1, Sparse):
            out = Sparse(arg1.dense, matrix)
        elif isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], tuple):
            data, (rows, cols) = arg1[0], arg1[1]
            rows, cols = _index_vector(rows, "row"), _index_vector(cols, "column")
            size = _shape(shape, rows, cols, f"scipy.sparse.{name}((data, (row, col)))")
            out = Sparse(from_coordinates(_float_data(data), rows, cols, size), matrix)
        elif isinstance(arg1, tuple) and len(arg1) == 3:
            _refuse(f"scipy.sparse.{name}((data, indices, indptr)): CSR's own storage (give "
                    "the coordinates: coo_matrix((data, (row, col)), shape))", arg1[0])
        elif isinstance(arg1, tuple) and len(arg1) == 2 and not involved(*arg1) and all(
                isinstance(v, int) or records(v) and v.ndim == 0 for v in arg1):
            if name.startswith(("lil", "dok")):
                _refuse(f"scipy.sparse.{name} (a matrix made to be written into entry by "
                        "entry: write into np.zeros(shape) and make it with csr_matrix(dense))",
                        *arg1)
            out = Sparse(NUMPY[np.zeros](arg1) if any(map(records, arg1))
                         else np.zeros(arg1), matrix)
        else:
            dense = _float_data(arg1)
            out = Sparse(dense, matrix)
        if dtype is not None:
            out = out.astype(dtype)
        return out
    return make


def diags(diagonals, offsets=0, shape=None, format=None, dtype=None, matrix=True):
    """``scipy.sparse.diags``: each diagonal (a vector, or a number repeated along it) at its
    offset, in a square matrix (of ``shape``, or as large as the diagonals make it)."""
    if isinstance(offsets, (list, tuple)) or ndim_of(offsets) == 1:  # one diagonal each
        offsets = [int(k) for k in offsets]
    else:  # (SciPy's rule: a number of offsets, one diagonal)
        first = diagonals[0] if isinstance(diagonals, (list, tuple)) and diagonals else None
        if first is not None and (ndim_of(first) or isinstance(first, (list, tuple))):
            _refuse("scipy.sparse.diags: one offset for several diagonals (SciPy raises)",
                    first)
        diagonals, offsets = [diagonals], [int(offsets)]
    if len(offsets) != len(diagonals):
        _refuse("scipy.sparse.diags: as many offsets as diagonals", *diagonals)
    diagonals = [_float_data(d) for d in diagonals]
    if shape is None:
        if any(ndim_of(d) == 0 for d in diagonals):
            _refuse("scipy.sparse.diags of a number without shape=", *diagonals)
        n = diagonals[0].shape[0] + abs(offsets[0])
    elif len(shape) == 2 and all(isinstance(k, int) for k in shape) and shape[0] != shape[1]:
        return _rectangular(diagonals, offsets, shape, matrix, dtype)
    else:
        if len(shape) != 2 or not (isinstance(shape[0], int) and shape[0] == shape[1]
                                   or shape[0] is shape[1]):
            _refuse("scipy.sparse.diags of a shape that is not square (known while building)",
                    *diagonals)
        n = shape[0]
    total = None
    for d, k in zip(diagonals, offsets):
        if ndim_of(d) == 0:
            d = _op(operator.add, NUMPY[np.zeros](n - abs(k)) if records(n) else
                    np.zeros(n - abs(k)), d)
        part = _fn(np.diag, d, k)
        total = part if total is None else _op(operator.add, total, part)
    if shape is not None and not complex_pairs.is_complex(total):
        total = written(_of_size, total, n)
    out = Sparse(total, matrix)
    return out.astype(dtype) if dtype is not None else out


def _rectangular(diagonals, offsets, shape, matrix, dtype):
    """`diags` of an m by n shape known while building, m != n (SimPEG's face divergence,
    ``shape=(n, n + 1)``): each diagonal placed at its offset in an m by n array, of the
    length the offset leaves (SciPy's ValueError for a shorter one; a number repeated)."""
    m, n = shape
    lengths = tuple(max(0, min(m + min(k, 0), n - max(k, 0))) for k in offsets)
    diagonals = [_op(operator.add, NUMPY[np.zeros](length), d) if ndim_of(d) == 0 else d
                 for d, length in zip(diagonals, lengths)]
    out = Sparse(written(_placed, m, n, tuple(offsets), lengths, *diagonals), matrix)
    return out.astype(dtype) if dtype is not None else out


def _placed(m, n, offsets, lengths, *diagonals):
    """Written: the m by n array holding each diagonal at its offset (its first entries, as
    SciPy takes of a longer one)."""
    out = np.zeros((m, n))
    for d, k, length in zip(diagonals, offsets, lengths):
        if d.shape[0] < length:
            raise ValueError("scipy.sparse.diags: a diagonal's length does not agree with "
                             "the shape")
        for i in range(length):
            out[max(-k, 0) + i, max(k, 0) + i] += d[i]
    return out


def _of_size(a, n):
    """Written: ``a`` checked to be n by n (a diagonal of another length: SciPy raises)."""
    if a.shape[0] != n:
        raise ValueError("scipy.sparse.diags: a diagonal's length does not agree with the shape")
    return a


def eye(m, n=None, k=0, dtype=float, format=None, matrix=True):
    out = Sparse(_fn(np.eye, m, n, k), matrix)
    return out.astype(dtype) if dtype is not float else out


def identity(n, dtype="d", format=None):
    return eye(n, dtype=float if dtype == "d" else dtype)


def kron(a, b, format=None):
    return Sparse(_fn(np.kron, dense_of(a), dense_of(b)),
                  a.matrix if isinstance(a, Sparse) else not isinstance(b, Sparse) or b.matrix)


def _stacker(numpy_fn):
    def stack(blocks, format=None, dtype=None):
        matrix = all(b.matrix for b in blocks if isinstance(b, Sparse))
        out = Sparse(_fn(numpy_fn, [dense_of(b) for b in blocks]), matrix)
        return out.astype(dtype) if dtype is not None else out
    return stack


def spsolve(A, b, permc_spec=None, use_umfpack=True):
    """``scipy.sparse.linalg.spsolve``: the dense solve; a sparse right-hand side gives a
    sparse solution, as SciPy's."""
    x = _fn(np.linalg.solve, dense_of(A), dense_of(b))
    return Sparse(x, b.matrix) if isinstance(b, Sparse) else x


def norm(x, ord=None, axis=None):
    return _fn(np.linalg.norm, dense_of(x), ord, axis)


def issparse(x):
    if isinstance(x, Sparse):
        return True
    if records(x) or isinstance(x, (complex_pairs.Complex, Matrix)):
        return False
    return sys.modules["scipy.sparse"].issparse(x)


def constant_dense(value):
    """A SciPy sparse matrix made outside the function (a global, a closure's variable): its
    dense array and whether it is a sparse matrix (``*`` the product) or a sparse array;
    None for anything else."""
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(value) or value.ndim != 2:
        return None
    return value.toarray(), isinstance(value, sparse.spmatrix)


def handler_for(fn):
    """The handler of the scipy.sparse function (or class) ``fn``, or None."""
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None:
        return None
    for fmt in _FORMATS:
        for kind, matrix in (("matrix", True), ("array", False)):
            if fn is getattr(sparse, f"{fmt}_{kind}", None):
                return _maker(matrix, f"{fmt}_{kind}")
    table = {"diags": diags, "diags_array": lambda *a, **k: diags(*a, **k, matrix=False),
             "eye": eye, "eye_array": lambda *a, **k: eye(*a, **k, matrix=False),
             "identity": identity, "kron": kron, "hstack": _stacker(np.hstack),
             "vstack": _stacker(np.vstack), "issparse": issparse, "isspmatrix": issparse}
    for name, handler in table.items():
        if fn is getattr(sparse, name, None):
            return handler
    linalg = sys.modules.get("scipy.sparse.linalg")
    if linalg is not None:
        for name, handler in (("spsolve", spsolve), ("norm", norm)):
            if fn is getattr(linalg, name, None):
                return handler
    return None


def as_array(fn, args, kwargs):
    """``np.asarray(m)``, ``np.array(m)``, ``np.asmatrix``... of a np.matrix: its dense
    value; None for any other NumPy function of a sparse matrix or a np.matrix, which the
    caller refuses."""
    if fn in (np.asarray, np.array, np.asanyarray, np.ascontiguousarray) and len(args) == 1 \
            and not kwargs and isinstance(args[0], Matrix):
        return args[0].dense
    if fn is np.ravel and len(args) == 1 and not kwargs and isinstance(args[0], Matrix):
        return args[0].A1
    return None


def refuse_function(name, args, kwargs):
    """Refuse NumPy's (or Python's) function ``name`` of a sparse matrix or a np.matrix."""
    values = [v for v in (*args, *kwargs.values()) if isinstance(v, (Sparse, Matrix))]
    what = "a scipy.sparse matrix" if any(isinstance(v, Sparse) for v in values) else \
        "a np.matrix (what a scipy.sparse matrix's .todense() and .sum(axis) give)"
    _refuse(f"{name} of {what}: NumPy's functions do not take it as an array; convert it "
            "first (A.toarray(), np.asarray(m)), or use its own methods (A @ x, A.sum(), "
            "A.multiply(B))", *values)
