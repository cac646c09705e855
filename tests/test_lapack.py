"""The runtime's products and linear algebra call BLAS and LAPACK directly (`backend.numba.lapack`):
compiled, they give NumPy's values for every layout an operand arrives in (C-ordered, a
transpose, a strided view), NumPy's errors, and Numba's own code for other dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from jitgrad.backend.numba import runtime_linalg as R

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))


def _layouts(m):
    """``m`` C-ordered, F-ordered (a transpose's layout) and as a strided view."""
    return {"C": m, "F": np.asfortranarray(m), "view": np.repeat(m, 2, axis=-1)[..., ::2]}


@pytest.mark.parametrize("la,lb", [("C", "C"), ("F", "C"), ("C", "F"), ("view", "F")])
def test_matrix_products_in_every_layout(la, lb):
    a, b = _layouts(A)[la], _layouts(B)[lb]
    np.testing.assert_allclose(R.matmul(a, b), A @ B, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_matrix_vector_products(layout):
    a = _layouts(A)[layout]
    x, y = RNG.standard_normal(4), RNG.standard_normal(3)
    np.testing.assert_allclose(R.matmul(a, x), A @ x, rtol=1e-14)
    np.testing.assert_allclose(R.matmul(y, a), y @ A, rtol=1e-14)
    assert R.dot(x, _layouts(x)["view"]) == pytest.approx(x @ x, rel=1e-14)


def test_empty_and_degenerate_products():
    np.testing.assert_array_equal(R.matmul(np.ones((3, 0)), np.ones((0, 2))), np.zeros((3, 2)))
    assert R.matmul(np.ones((0, 3)), np.ones((3, 2))).shape == (0, 2)
    with pytest.raises(ValueError, match="incompatible array sizes"):
        R.matmul(np.ones((2, 3)), np.ones((2, 3)))


def test_factorisations_match_numpy():
    n = 5
    m = RNG.standard_normal((n, n)) + n * np.eye(n)
    spd = m @ m.T
    b, bs = RNG.standard_normal(n), RNG.standard_normal((n, 2))
    for a in _layouts(m).values():  # C-ordered, F-ordered, a strided view
        np.testing.assert_allclose(R.solve(a, b), np.linalg.solve(a, b), rtol=1e-12)
        np.testing.assert_allclose(R.solve(a, bs), np.linalg.solve(a, bs), rtol=1e-12)
        np.testing.assert_allclose(R.inv(a), np.linalg.inv(a), rtol=1e-12)
        assert R.det(a) == pytest.approx(np.linalg.det(a), rel=1e-12)
        sign, logdet = np.linalg.slogdet(-a)
        assert (R.signdet(-a), R.logabsdet(-a)) == (sign, pytest.approx(logdet, rel=1e-12))
    for a in _layouts(spd).values():
        np.testing.assert_allclose(R.cholesky(a), np.linalg.cholesky(spd), rtol=1e-12)
        assert not R.cholesky_fails(a) and R.cholesky_fails(-a)
    # one compiled function per helper serves every layout (`compile.jit`'s any_layout)
    for helper in (R.solve, R.inv, R.det, R.signdet, R.logabsdet, R.cholesky):
        assert {s[0].layout for s in helper.signatures if str(s[0].dtype) == "float64"} == {"A"}


def test_numpy_errors_and_values_at_singular_matrices():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        R.solve(singular, np.ones(2))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        R.inv(singular)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        R.cholesky(-np.eye(2))
    assert (R.det(singular), R.signdet(singular), R.logabsdet(singular)) == (0.0, 0.0, -np.inf)


def test_float32_products_call_single_precision_blas():
    """float32 operands go to sgemm, sgemv (a strided view read in place) and sdot: float32
    results, NumPy's to float32's precision."""
    a, b = A.astype(np.float32), B.astype(np.float32)
    for got, want in ((R.matmul(a, b), a @ b), (R.matmul(a[:, 1:], b[1:, 2]), a[:, 1:] @ b[1:, 2])):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert R.dot(b[:, 0].copy(), b[:, 1].copy()) == pytest.approx(float(b[:, 0] @ b[:, 1]),
                                                                  rel=1e-5)


def test_empty_systems():
    np.testing.assert_array_equal(R.solve(np.ones((0, 0)), np.ones((0, 3))), np.ones((0, 3)))
    np.testing.assert_array_equal(R.solve(np.eye(2), np.ones((2, 0))), np.ones((2, 0)))
    assert R.inv(np.ones((0, 0))).shape == (0, 0)
    assert (R.det(np.ones((0, 0))), R.logabsdet(np.ones((0, 0)))) == (1.0, 0.0)
