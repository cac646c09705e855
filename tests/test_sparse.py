"""scipy.sparse matrices made inside a differentiated function (`lang.scipy_sparse`): finite
element assembly by ``coo_matrix((data, (i, j)), shape)`` (duplicates add up), products as a
sparse matrix's ``*`` means them, ``diags``/``eye`` + ``spsolve``, rows and columns taken by
index, sparse arrays' elementwise ``*``, complex admittances (PYPOWER's makeYbus form).

Each form: jitgrad's value against the function run by SciPy itself (so ``A * B`` means what
SciPy means), its gradient against central differences and against JAX's of the same
computation written densely (where JAX is installed). JIT disabled for the breadth (a process
of its own); one compiled test for the mechanism. The refusals are checked while building.
"""

import numpy as np
import pytest
from fd import check_against, numeric_grad
from plain_python import assert_runs_as_plain_python
from scipy import sparse
from scipy.sparse import coo_matrix, csr_array, csr_matrix
from scipy.sparse.linalg import spsolve

import jitgrad as jg

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None

T = np.array([[0, 1, 2], [1, 3, 2], [3, 4, 2]])  # three triangles on five nodes
ROWS = np.repeat(T, 3, axis=1).ravel()
COLS = np.tile(T, (1, 3)).ravel()


def assembly(ke, u):  # element matrices summed into the global one, entries shared add up
    K = coo_matrix((ke.ravel(), (ROWS, COLS)), shape=(5, 5)).toarray()
    return 0.5 * u @ K @ u + np.sum(K * K)


def assembly_jax(ke, u):
    K = jnp.zeros((5, 5)).at[ROWS, COLS].add(ke.ravel())
    return 0.5 * u @ K @ u + jnp.sum(K * K)


def products(y, x):  # a sparse matrix's * is the matrix product, A.T * Y * A, A.dot, A @
    i = np.array([0, 1, 2, 2])
    j = np.array([0, 1, 0, 1])
    C = csr_matrix((np.ones(4), (i, j)), shape=(3, 2))
    Y = csr_matrix((y, (np.arange(3), np.arange(3))), shape=(3, 3))
    A = C.T * Y * C + sparse.eye(2)
    v = A * x
    return (v @ A.dot(x) + np.sum((A @ A).toarray() ** 2) + np.sum(2.0 * (A - A.T / 2).T.toarray())
            + np.sum(x * A) * A[0, 1]
            + np.sum(sparse.vstack([sparse.kron(A, A).tocsr()[:, 1:3], A ** 2]).toarray()))


def products_jax(y, x):
    C = jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    A = C.T @ jnp.diag(y) @ C + jnp.eye(2)
    v = A @ x
    return (v @ (A @ x) + jnp.sum((A @ A) ** 2) + jnp.sum(2.0 * (A - A.T / 2).T)
            + jnp.sum(x @ A) * A[0, 1] + jnp.sum(jnp.kron(A, A)[:, 1:3]) + jnp.sum(A @ A))


def tridiagonal_solve(a, f):  # diags + eye, spsolve, the solution's energy
    n = f.shape[0]
    A = sparse.diags([-a[1:], 2.0 + a, -a[:-1]], [-1, 0, 1], shape=(n, n)) + sparse.eye(n)
    if f[0] > 0.0:  # a run-time branch: the sparse matrix merged as its dense value
        A = A + sparse.eye(n) * 0.5
    A = A - 0.1 * sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(n, n))  # numbers repeated
    x = spsolve(A.tocsc(), f)
    return x @ x + A.diagonal() @ f


def tridiagonal_solve_jax(a, f):
    n = f.shape[0]
    A = jnp.diag(-a[1:], -1) + jnp.diag(2.0 + a) + jnp.diag(-a[:-1], 1) + jnp.eye(n)
    A = jnp.where(f[0] > 0.0, A + 0.5 * jnp.eye(n), A)
    A = A - 0.1 * (jnp.diag(jnp.ones(n - 1), -1) - 2.0 * jnp.eye(n) + jnp.diag(jnp.ones(n - 1), 1))
    x = jnp.linalg.solve(A, f)
    return x @ x + jnp.diagonal(A) @ f


FREE = np.array([1, 2, 4])


def reduced_solve(ke, f):  # K[free, :][:, free] of the assembled matrix, then spsolve
    K = coo_matrix((ke.ravel() + 3.0 * (ROWS == COLS), (ROWS, COLS)), shape=(5, 5)).tocsc()
    K = K[FREE, :][:, FREE]
    u = spsolve(K, f[FREE])
    return u @ f[FREE]


def reduced_solve_jax(ke, f):
    K = jnp.zeros((5, 5)).at[ROWS, COLS].add(ke.ravel() + 3.0 * (ROWS == COLS))
    K = K[FREE, :][:, FREE]
    return jnp.linalg.solve(K, f[FREE]) @ f[FREE]


def reductions(ke, w):  # multiply (elementwise), sum along an axis (a np.matrix), power
    K = coo_matrix((ke.ravel(), (ROWS, COLS)), shape=(5, 5)).tocsr()
    W = csr_matrix(np.outer(w, w))
    col = np.asarray(K.multiply(W).sum(axis=0)).ravel()
    return col @ w + K.power(2).sum() + K.T.sum(axis=1).A1 @ w + (K ** 2).mean()


def reductions_jax(ke, w):
    K = jnp.zeros((5, 5)).at[ROWS, COLS].add(ke.ravel())
    col = jnp.sum(K * jnp.outer(w, w), axis=0)
    return col @ w + jnp.sum(K ** 2) + jnp.sum(K.T, axis=1) @ w + jnp.mean(K @ K)


def sparse_arrays(x, w):  # a sparse array's * is elementwise, as NumPy's
    A = csr_array(np.outer(x, w))
    B = csr_array((x, (np.arange(4), np.arange(4))), shape=(4, 4))
    return np.sum((A * A + A * B).toarray()) + np.sum((A @ B) @ w) + np.sum(A.sum(axis=0))


def sparse_arrays_jax(x, w):
    A = jnp.outer(x, w)
    B = jnp.diag(x)
    return jnp.sum(A * A + A * B) + jnp.sum((A @ B) @ w) + jnp.sum(A)


BR = np.array([[0, 1, 0.01, 0.06], [0, 2, 0.02, 0.08], [1, 2, 0.015, 0.07]])


def admittance(va, vm):  # complex entries (PYPOWER's makeYbus with csr_matrix), V * conj(Y V)
    nl = BR.shape[0]
    f = BR[:, 0].astype(int)
    t = BR[:, 1].astype(int)
    ys = 1.0 / (BR[:, 2] + 1j * BR[:, 3])
    i = np.r_[range(nl), range(nl)]
    Yf = csr_matrix((np.r_[ys, -ys], (i, np.r_[f, t])), (nl, 3))
    Cf = csr_matrix((np.ones(nl), (range(nl), f)), (nl, 3))
    Y = Cf.T * Yf + sparse.identity(3) * 0.5j
    V = vm * np.exp(1j * va)
    s = V * np.conj(Y * V)
    return np.sum(np.abs(s) ** 2)


def admittance_jax(va, vm):
    f, t = BR[:, 0].astype(int), BR[:, 1].astype(int)
    ys = 1.0 / (BR[:, 2] + 1j * BR[:, 3])
    Yf = jnp.zeros((3, 3), complex).at[np.arange(3), f].add(ys).at[np.arange(3), t].add(-ys)
    Cf = jnp.zeros((3, 3)).at[np.arange(3), f].add(1.0)
    Y = Cf.T @ Yf + 0.5j * jnp.eye(3)
    V = vm * jnp.exp(1j * va)
    s = V * jnp.conj(Y @ V)
    return jnp.sum(jnp.abs(s) ** 2)


LAPLACIAN = sparse.diags([1.0, -2.0, 1.0], [-1, 0, 1], shape=(4, 4)).tocsr()  # made outside


def smoothness(x, w):  # a global sparse matrix: a constant of the graph, its * the product
    K = coo_matrix((w, (np.arange(4), np.arange(4))), shape=(4, 4))
    K.sum_duplicates()
    return np.sum((LAPLACIAN * x) ** 2) + x @ (K @ (LAPLACIAN.T @ x))


def smoothness_jax(x, w):
    L = jnp.asarray(LAPLACIAN.toarray())
    return jnp.sum((L @ x) ** 2) + x @ (jnp.diag(w) @ (L.T @ x))


rng = np.random.default_rng(3)
KE = rng.normal(size=(3, 9))
U5 = rng.normal(size=5)
CASES = {
    "assembly": (assembly, assembly_jax, (KE, U5)),
    "products": (products, products_jax, (np.array([1.0, 2.0, 0.5]), np.array([0.3, -0.7]))),
    "tridiagonal_solve": (tridiagonal_solve, tridiagonal_solve_jax,
                          (np.array([1.0, 0.5, 2.0, 1.5]), np.array([1.0, -1.0, 0.5, 2.0]))),
    "reduced_solve": (reduced_solve, reduced_solve_jax, (np.abs(KE), U5)),
    "reductions": (reductions, reductions_jax, (KE, U5)),
    "sparse_arrays": (sparse_arrays, sparse_arrays_jax,
                      (np.array([1.0, -2.0, 0.5, 0.3]), np.array([0.2, 0.4, -1.0, 2.0]))),
    "smoothness": (smoothness, smoothness_jax,
                   (np.array([1.0, -2.0, 0.5, 0.3]), np.array([0.2, 0.4, -1.0, 2.0]))),
    "admittance": (admittance, admittance_jax,
                   (np.array([0.0, -0.05, 0.03]), np.array([1.0, 0.98, 1.02]))),
}


def _check(name):
    fn, fn_jax, args = CASES[name]
    value, grads = jg.value_and_grad(fn, wrt=(0, 1))(*args)
    if jax is not None:
        want = jax.grad(fn_jax, argnums=(0, 1))(*(jnp.asarray(a) for a in args))
    else:
        want = [numeric_grad(fn, args, k) for k in (0, 1)]
    check_against(fn, args, (0, 1), value, grads, want, rtol=1e-7, atol=1e-9)


def _refused(fn, args, words):
    with pytest.raises(jg.UnsupportedError) as e:
        jg.grad(fn)(*args)
    for w in words:
        assert w in str(e.value), str(e.value)


def summed(x):
    A = csr_matrix((x, (np.arange(3), np.arange(3))), shape=(3, 3))
    return np.sum(A)


def returned(x):
    return csr_matrix((x, (np.arange(3), np.arange(3))), shape=(3, 3))


def compared(x):
    A = csr_matrix((x, (np.arange(3), np.arange(3))), shape=(3, 3))
    B = A.T
    return np.sum((A == B).toarray() * x)


def stored(x):
    A = csr_matrix((x, (np.arange(3), np.arange(3))), shape=(3, 3))
    return A.nnz * x[0]


def matrix_arithmetic(x):
    A = csr_matrix((x, (np.arange(3), np.arange(3))), shape=(3, 3))
    return np.sum(np.asarray(A.sum(axis=0) * x))


def test_refusals():
    """What a sparse matrix means that jitgrad does not take is refused at the user's line,
    never read as a dense array (np.sum(A) of a sparse matrix, ==, .nnz, a np.matrix's *)."""
    x = np.array([1.0, 2.0, 3.0])
    _refused(summed, (x,), ["np.sum", "scipy.sparse", "test_sparse.py"])
    _refused(compared, (x,), ["operator", "sparse"])
    _refused(stored, (x,), [".nnz"])
    _refused(returned, (x,), ["scipy.sparse matrix", "A.toarray()"])
    _refused(matrix_arithmetic, (x,), ["np.matrix", "np.asarray"])
    with pytest.raises(jg.JitgradError, match="csr_matrix"):
        jg.grad(lambda x, A: np.sum(A @ x), wrt=0)(x, csr_matrix(np.eye(3)))


def test_sparse_as_plain_python():
    """Every form, the generated code run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def test_sparse_compiled():
    _check("assembly")


if __name__ == "__main__":
    for case in sorted(CASES):
        _check(case)
    print(f"{len(CASES)} forms agree with SciPy, central differences" + (" and JAX" if jax
                                                                          else ""))
