"""The batched-products pass (`transforms.batched`): a loop adjoint's rank-1 updates and
matrix-vector products against loop-invariant matrices, done as matrix products after the loop.

Each form: jitgrad's gradient against central differences and against JAX (`jax.grad` of the
same loop written with ``.at[].set``, or of the one product NPBench's JAX version computes),
and whether the pass took the loop (the loop's comment in ``.source()`` says so). JIT disabled
for the breadth; one compiled test for the mechanism."""

import numpy as np
from fd import check_against, numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad as jg

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None


def covariance(M, float_n, data):  # NPBench's covariance kernel, under a sum
    data = data.copy()
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return np.sum(cov * cov)


def covariance_jax(M, float_n, data):
    data = data - jnp.mean(data, axis=0)
    cov = data.T @ data / (float_n - 1.0)
    cols = jnp.arange(data.shape[1])
    inside = (cols[:, None] < M) & (cols[None, :] < M)
    return jnp.sum(jnp.where(inside, cov, 0.0) ** 2)


def correlation(M, data):  # NPBench's correlation loop: from i + 1, one trip fewer
    corr = np.eye(M)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return np.sum(np.sin(corr))


def correlation_jax(M, data):
    corr = jnp.eye(M)
    for i in range(M - 1):
        row = data[:, i] @ data[:, i + 1:M]
        corr = corr.at[i + 1:M, i].set(row).at[i, i + 1:M].set(row)
    return jnp.sum(jnp.sin(corr))


def two_matrices(X, Y, w):  # rank-1 updates into Y's adjoint, products into X's; start 1
    n = Y.shape[1]
    out = np.zeros((X.shape[1], n))
    for i in range(1, X.shape[1]):
        out[i, i:n] = np.tanh(X[:, i] @ Y[:, i:n])
    return np.sum(w * out)


def two_matrices_jax(X, Y, w):
    n = Y.shape[1]
    out = jnp.zeros((X.shape[1], n))
    for i in range(1, X.shape[1]):
        out = out.at[i, i:n].set(jnp.tanh(X[:, i] @ Y[:, i:n]))
    return jnp.sum(w * out)


def written_in_loop(A):  # the matrix is written in the loop: its adjoint is zeroed there
    out = 0.0
    for i in range(A.shape[1] - 1):
        out += np.sum(np.cos(A[:, i] @ A[:, i + 1:]))
        A[:, i + 1] = A[:, i + 1] * 0.9
    return out


def written_in_loop_jax(A):
    out = 0.0
    for i in range(A.shape[1] - 1):
        out += jnp.sum(jnp.cos(A[:, i] @ A[:, i + 1:]))
        A = A.at[:, i + 1].set(A[:, i + 1] * 0.9)
    return out


rng = np.random.default_rng(7)
X6, Y6, W6 = rng.normal(size=(5, 6)), rng.normal(size=(5, 8)), rng.normal(size=8)

# (function, JAX's, args, wrt, whether the pass takes its loop)
CASES = {
    "covariance": (covariance, covariance_jax, (6, 5.0, X6), [2], True),
    "covariance_fewer": (covariance, covariance_jax, (4, 5.0, X6), [2], True),
    # two trips of six columns: the two products after the loop, not one over every column
    "covariance_two": (covariance, covariance_jax, (2, 5.0, X6), [2], True),
    "covariance_none": (covariance, covariance_jax, (0, 5.0, X6), [2], True),
    "correlation": (correlation, correlation_jax, (6, 0.4 * X6), [1], True),
    "two_matrices": (two_matrices, two_matrices_jax, (X6, Y6, W6), [0, 1, 2], True),
    "written_in_loop": (written_in_loop, written_in_loop_jax, (X6,), [0], False),
}


def _check(name):
    """One form: value and gradients against plain Python, central differences and JAX's
    (where installed); whether the pass took its loop."""
    fn, ref, args, wrt, batched = CASES[name]
    g = jg.value_and_grad(fn, wrt=tuple(wrt))
    value, grads = g(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    if jax is not None:
        check_against(fn, args, wrt, value, grads, jax.grad(ref, argnums=tuple(wrt))(*args))
    else:
        np.testing.assert_allclose(value, fn(*[a.copy() if isinstance(a, np.ndarray) else a
                                               for a in args]), rtol=1e-12)
        for k, got in zip(wrt, grads):
            np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)
    assert ("its products batched" in g.source()) == batched


def test_batched_gradients_as_plain_python():
    """Every form, the generated code run as plain Python (``JITGRAD_DISABLE_JIT=1`` is read
    when jitgrad is imported: a process of its own)."""
    assert_runs_as_plain_python(__file__)


def test_batched_compiled():
    _check("covariance")


if __name__ == "__main__":
    for case in sorted(CASES):
        _check(case)
    print(f"{len(CASES)} forms agree with central differences" + (" and JAX" if jax else ""))
