"""Complex arguments (issue #43): `grad` and `value_and_grad` of a real loss of complex numbers
and arrays, taken as their real and imaginary parts (`jitgrad.core.pytree`), the gradient
returned as one complex value in JAX's convention, ``dL/d(re) - 1j * dL/d(im)``.

Each case is checked three ways: its value against the function run as NumPy; its gradient
against JAX's (``jax.grad``, which computes in complex arithmetic: an independent oracle) and
against central differences on the real and imaginary parts of every entry. The breadth runs
as plain Python (``JITGRAD_DISABLE_JIT=1``, a process of its own: `test_breadth_as_plain_python`);
one gradient that mixes the mechanisms (a complex array, a complex scalar, a tree holding one,
a complex64 array, the user's function called with a complex argument) is compiled.
"""

from __future__ import annotations

import numpy as np
import pytest
from plain_python import assert_runs_as_plain_python

import jitgrad
from jitgrad import UnsupportedError
from jitgrad.core.errors import SignatureError

RNG = np.random.default_rng(3)
Z = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
V = RNG.normal(size=5) + 1j * RNG.normal(size=5)
ZT = Z.copy()
ZT[0, 1] = ZT[1, 1].real + 0.5j  # a tie in the real part along axis 0
ZT[2, 3] = 0.0
W = RNG.normal(size=(4, 2)) + 1j * RNG.normal(size=(4, 2))  # a complex global: a constant


def central(fn, args, k, eps=1e-6):
    """Central differences of ``fn`` by the real and imaginary parts of argument ``k`` (or of
    each complex leaf of a dict), as a gradient: ``dL/d(re) - 1j * dL/d(im)``."""
    x = args[k]
    if isinstance(x, dict):
        return {key: central(lambda v, key=key: fn(*args[:k], {**x, key: v}, *args[k + 1:]),
                             (x[key],), 0, eps) for key in x}
    real = not np.iscomplexobj(x)  # (a float argument: by its value only)
    arr = np.array(x, dtype=float if real else complex, ndmin=0)
    g = np.zeros(arr.shape, dtype=arr.dtype)
    for idx in np.ndindex(*arr.shape):
        for step, unit in ((1.0, 1.0),) if real else ((1.0, 1.0), (1j, -1j)):
            up, down = arr.copy(), arr.copy()
            up[idx] += eps * step
            down[idx] -= eps * step

            def at(v):
                v = v if isinstance(x, np.ndarray) else type(x)(v[()])
                return float(fn(*args[:k], v, *args[k + 1:]))
            g[idx] += unit * (at(up) - at(down)) / (2 * eps)
    return g if isinstance(x, np.ndarray) else g[()].item()


# ----------------------------------------------------------------------------- the cases
# (name, numpy function, its JAX twin (jnp for np), arguments, wrt)


def modulus(z):
    return np.sum(np.abs(z) ** 2 + (z * z).real)


def spectrum(v):
    return np.sum(np.abs(np.fft.fft(v)) ** 2 * np.arange(5.0)) + np.fft.ifft(v * v).imag[1]


def lengths(z):
    """np.fft's n= and s=: each axis cut or padded with zeros first (a spectrum to the
    n // 2 + 1 entries irfft reads)."""
    a = np.fft.fft2(z, s=[5, 2])
    b = np.fft.irfft(z[0], n=9) + np.fft.irfft(z[1], n=4)[0]
    c = np.fft.irfftn(z, s=[2, 4], axes=(0, 1))
    return np.sum(np.abs(a) ** 2 * 0.1) + np.sum(b * np.arange(9.0)) + np.sum(c[1] ** 3)


def elementary(z, w):
    return (np.exp(z) * w).imag + abs(np.sqrt(z)) + np.log(z).real * w


def with_global(z):
    return np.sum(np.abs(z @ W)) + np.sum(np.real(z.T.conj() @ z))


def moments(z):
    return np.var(z, axis=0, ddof=1).sum() + np.std(z) + np.linalg.norm(z) \
        + np.linalg.norm(z, ord=3, axis=1).sum()


def variants(z):
    return np.sum(np.expm1(z * 0.3).real + np.log1p(z * 0.2).imag + np.exp2(z).imag
                  + np.log2(z).real)


def extremes(z, c):
    """np.max/np.min in NumPy's order (the real part, then the imaginary part); of a complex
    scalar too. (ZT ties two entries' real parts.)"""
    return (np.sum(np.real(np.max(z, axis=0) * (0.7 - 0.3j))) + np.min(z, axis=1).imag.sum()
            + np.max(z).real + np.max(c).imag)


def product(z):
    """np.prod of complex entries (a loop of products: exact at ZT's entry 0 too)."""
    return np.sum(np.real(np.prod(z, axis=0) * (0.3 - 0.8j))) + np.prod(z, keepdims=True).imag[0, 0]


def products(z):
    k = np.kron(z[:2, :2], z[1:, 2:])
    t = np.tensordot(z, z, axes=([0], [0]))
    e = np.einsum("ij,ij->i", z, np.conj(z))
    return np.sum(np.real(k * (1 + 2j))) + np.sum(np.imag(t)) + np.sum(np.real(e))


def rotate(z, angle):
    return z * np.exp(1j * angle)


def users_function(z, angle):
    return np.sum(np.abs(rotate(z, angle) - 1.0) ** 2)


def tree(p):
    return np.sum(np.abs(p["z"] - p["c"]) ** 2) * p["scale"]


def not_differentiated(x, z):
    return np.sum(np.abs(x * z) ** 2)


def jax_twin(fn):
    """``fn`` with jax.numpy for np (its globals' np and helpers rebound)."""
    import types

    import jax.numpy as jnp
    g = dict(fn.__globals__, np=jnp)
    g["rotate"] = types.FunctionType(rotate.__code__, g)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__)


CASES = [
    ("modulus", modulus, (Z,), 0),
    ("spectrum", spectrum, (V,), 0),
    ("np.fft with n= and s=", lengths, (Z,), 0),
    ("elementary scalar and float", elementary, (0.7 + 0.4j, 1.3), (0, 1)),
    ("np.complex128 scalar", elementary, (np.complex128(0.5 - 0.8j), 0.9), 0),
    ("a complex global (constant) and @", with_global, (Z,), 0),
    ("var std norm", moments, (Z,), 0),
    ("expm1 log1p exp2 log2", variants, (Z,), 0),
    ("kron tensordot einsum", products, (Z,), 0),
    ("max min", extremes, (ZT, 0.3 - 0.2j), (0, 1)),
    ("prod", product, (ZT,), 0),
    ("the user's function called with it", users_function, (Z, 0.4), (0, 1)),
    ("a complex leaf of a dict", tree, ({"z": V, "c": 0.3 + 0.1j, "scale": 1.5},), 0),
    ("a complex argument not differentiated", not_differentiated, (0.8, V), 0),
]


def check(name, fn, args, wrt):
    import jax
    jax.config.update("jax_enable_x64", True)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12, err_msg=name)
    want = jax.grad(jax_twin(fn), argnums=positions)(*args)
    for k, got, ref in zip(positions, grads, want):
        fd = central(fn, args, k)
        if isinstance(args[k], dict):
            for key in args[k]:
                assert np.iscomplexobj(got[key]) == np.iscomplexobj(args[k][key]), (name, key)
                np.testing.assert_allclose(got[key], fd[key], rtol=1e-6, atol=1e-7, err_msg=name)
                np.testing.assert_allclose(got[key], np.asarray(ref[key]), rtol=1e-9, atol=1e-11,
                                           err_msg=name)
            continue
        assert np.iscomplexobj(got) == np.iscomplexobj(args[k]), name  # complex in, complex out
        assert np.shape(got) == np.shape(args[k]), name
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-9, atol=1e-11, err_msg=name)


ERF_AT = np.array([0.4 + 0.03j, 1e-3 - 2e-3j, 0.3 + 0.45j, -1.2 + 0.7j, 2.5 - 1.5j, 0.49,
                   0.51j])


def erfs(z):
    import scipy.special
    return np.sum(np.real(scipy.special.erf(z) * (0.3 - 0.7j))
                  + np.imag(scipy.special.erfc(z) * (1.1 + 0.2j)))


def check_erf():
    """scipy.special.erf, erfc of complex arguments (from the Faddeeva function; erf's Taylor
    series near 0, on both sides of |z| = 1/2): SciPy's values, and the gradient of
    Re(c f(z)), f holomorphic, is c f'(z) in JAX's convention (f' = +-2/sqrt(pi) exp(-z^2));
    JAX has no complex erf to compare with."""
    value, g = jitgrad.value_and_grad(erfs)(ERF_AT)
    np.testing.assert_allclose(value, erfs(ERF_AT), rtol=1e-13)
    d = 2.0 / np.sqrt(np.pi) * np.exp(-ERF_AT ** 2)
    want = (0.3 - 0.7j) * d + -1j * (1.1 + 0.2j) * -d  # (Im(c f) = Re(-1j c f))
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, central(erfs, (ERF_AT,), 0), rtol=1e-6, atol=1e-7)


def run_all():
    for case in CASES:
        check(*case)
    check_erf()


# ----------------------------------------------------------------------------- compiled


def mixed(z, s, p, h):
    """A complex array, a complex scalar, a dict holding a complex array, a complex64 array
    (its gradient comes back complex64), the user's function called with a complex argument."""
    return (np.sum(np.abs(rotate(z, 0.3) - s) ** 2) + np.sum(np.real(p["z"] * np.conj(z[0])))
            * p["w"] + np.sum(np.abs(h.astype(np.complex128)) ** 2))


def test_compiled_mixed():
    pytest.importorskip("jax")
    h = (RNG.normal(size=3) + 1j * RNG.normal(size=3)).astype(np.complex64)
    args = (Z, 0.2 - 0.5j, {"z": Z[1] * 0.5, "w": 0.7}, h)
    gz, gs, _, gh = jitgrad.grad(mixed, wrt=(0, 1, 2, 3))(*args)
    assert gh.dtype == np.complex64 and isinstance(gs, complex)
    check("mixed (compiled)", mixed, args[:3] + (h.astype(np.complex128),), (0, 1, 2, 3))
    np.testing.assert_allclose(gh, central(mixed, args[:3] + (h.astype(np.complex128),), 3),
                               rtol=1e-5)
    np.testing.assert_allclose(gz, central(mixed, args, 0), rtol=1e-6, atol=1e-7)


def test_breadth_as_plain_python():
    """Every case of `CASES` against NumPy, JAX and central differences, as plain Python
    (``JITGRAD_DISABLE_JIT=1``, a process of its own: compiled they would take a minute)."""
    pytest.importorskip("jax")
    assert_runs_as_plain_python(__file__)


def test_complex256_is_computed_in_double_precision():
    g = jitgrad.grad(modulus)(Z.astype(np.clongdouble))  # (as a float128 array is)
    assert g.dtype == np.clongdouble
    np.testing.assert_allclose(g.astype(complex), jitgrad.grad(modulus)(Z), rtol=1e-15)


def test_check_grad_takes_complex_arguments():
    jitgrad.check_grad(modulus, V)  # (raises on a mismatch with central differences)


# ----------------------------------------------------------------------------- refused


@pytest.mark.parametrize("call", [
    pytest.param(lambda: jitgrad.vjp(modulus, Z), id="vjp"),
    pytest.param(lambda: jitgrad.jvp(modulus, (Z,), (Z,)), id="jvp"),
    pytest.param(lambda: jitgrad.hessian(modulus)(Z), id="hessian"),
    pytest.param(lambda: jitgrad.jacobian(modulus)(Z), id="jacobian"),
])
def test_other_transforms_refuse_complex_arguments(call):
    with pytest.raises(SignatureError, match="grad and value_and_grad take complex arguments"):
        call()


def test_refusals_name_what_to_write():
    with pytest.raises(SignatureError, match="mapped over axis 0: vmap maps real arrays"):
        jitgrad.vmap(jitgrad.grad(modulus))(np.stack([Z, Z]))
    with pytest.raises(UnsupportedError, match="returns a complex number"):
        jitgrad.grad(rotate)(0.5 + 1j, 0.3)
    with pytest.raises(UnsupportedError, match=r"np.linalg.det of a complex value"):
        jitgrad.grad(lambda z: np.abs(np.linalg.det(z)))(Z[:, :3])


if __name__ == "__main__":
    run_all()
    print(f"{len(CASES)} cases and erf/erfc agree with NumPy (SciPy), JAX and central differences")
