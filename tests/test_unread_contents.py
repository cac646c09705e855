"""Contents nothing reads (`transforms.contents`): under ``jitgrad.grad`` the forward pass
drops writes whose contents neither the value nor the adjoint reads, and fills no array read
only for its shape (NPBench's covariance loop of products, doitgen's product).

Each form: the gradient against central differences and JAX's, and whether the forward pass
(the generated code before the adjoint) still computes a product. JIT disabled for the forms,
one compiled test."""

import numpy as np
from fd import numeric_grad
from plain_python import assert_runs_as_plain_python

import jitgrad as jg

try:  # the independent oracle, where installed
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = None


def covariance(M, data):  # linear in each product: the adjoint reads cov's shape alone
    data = data - np.mean(data, axis=0)
    cov = np.zeros((M, M))
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / 4.0
    return np.sum(cov)


def covariance_jax(M, data):
    data = data - jnp.mean(data, axis=0)
    cov = data[:, :M].T @ data[:, :M] / 4.0
    return jnp.sum(cov)


def doitgen(A, C4):  # NPBench's doitgen under a sum: A's new contents are never read
    NR, NQ, NP = A.shape
    A = A.copy()
    A[:] = np.reshape(np.reshape(A, (NR, NQ, 1, NP)) @ C4, (NR, NQ, NP))
    return np.sum(A)


def doitgen_jax(A, C4):
    return jnp.sum(A @ C4)


def read_back(A, C4):  # the written array is read again: its product stays
    A = A.copy()
    A[:] = A @ C4
    return np.sum(A * A)


def read_back_jax(A, C4):
    return jnp.sum((A @ C4) ** 2)


rng = np.random.default_rng(3)
D = rng.normal(size=(5, 6))
A3, C = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 4))

# (function, JAX's, args, wrt, whether the forward pass keeps a product)
CASES = {
    "covariance": (covariance, covariance_jax, (6, D), (1,), False),
    "covariance_part": (covariance, covariance_jax, (4, D), (1,), False),
    "doitgen": (doitgen, doitgen_jax, (A3, C), (0, 1), False),
    "read_back": (read_back, read_back_jax, (A3[0], C), (0, 1), True),
}


def _check(name):
    fn, ref, args, wrt, keeps = CASES[name]
    g = jg.grad(fn, wrt=wrt)
    grads = g(*args)
    want = jax.grad(ref, argnums=wrt)(*args) if jax is not None else [None] * len(wrt)
    for k, got, w in zip(wrt, grads, want):
        np.testing.assert_allclose(got, numeric_grad(fn, args, k), rtol=1e-6, atol=1e-7)
        if w is not None:
            np.testing.assert_allclose(got, np.asarray(w), rtol=1e-9, atol=1e-11)
    forward = g.source().split("-- adjoint pass")[0]
    assert ("matmul" in forward) == keeps


def test_unread_contents_as_plain_python():
    """Every form, the generated code run as plain Python (``JITGRAD_DISABLE_JIT=1`` is read
    when jitgrad is imported: a process of its own)."""
    assert_runs_as_plain_python(__file__)


def test_unread_contents_compiled():
    _check("doitgen")


if __name__ == "__main__":
    for case in sorted(CASES):
        _check(case)
    print(f"{len(CASES)} forms agree with central differences" + (" and JAX" if jax else ""))
