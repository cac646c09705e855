"""Forms met in the seventh held-out batch of real code (issue #43, part hb7a), in functions of
our own:

- a decorator (gsw's ``match_args_return``) that appends each of ``*args`` to a list under an
  ``if`` and calls ``f(*newargs)``, after ``np.any([hasattr(a, "__array__") for a in args])``:
  the loop over the tuple unrolled, the list Python's;
- ``np.interp`` at a 2-D array of points (FLORIS' thrust table at rotor-averaged speeds) and
  ``scipy.interpolate.interp1d`` (made in the function, with ``fill_value=(below, above)`` and
  ``bounds_error=False``, or made outside; by default it raises ValueError out of range, as
  SciPy's does);
- ``c[~mask] = 0.0`` through a boolean mask of rank 4 (FLORIS' Jensen wake);
- a class of the user's with operators (QuTiP's ``Qobj``: ``0.5 * delta * sigmaz()`` calls
  ``Qobj.__rmul__``, built as the user's code; ``-q``), holding a complex array made by
  ``np.asarray(data, dtype=complex)`` of a real array or of nested lists with ``1j``;
- complex matrices: ``scipy.linalg.expm``, ``np.linalg.inv`` and ``np.linalg.solve`` (by the
  real matrix ``[[x, -y], [y, x]]`` that represents ``x + iy``), ``np.eye(n, dtype=complex)``,
  ``np.array([1, 2.2 + 0.01j])`` of constants;
- ``numpy.lib.scimath.arcsin`` / ``sqrt`` (tmm's Snell's law past the critical angle: complex);
- tmm's ``is_forward_angle``: ``"..." + str(n)`` of a complex value in an assertion's message,
  and ``answer = bool(answer)`` then ``if answer is True:``;
- ``sum(u[j] * Hc[j] for j in range(len(Hc)))`` over a list of matrices, and ``op_list[n] =
  sx`` into ``op_list = [si] * N`` in ``for n in range(N)`` (the loops unrolled);
- ``len(atoms)`` of an object whose class defines ``__len__`` (ASE's Atoms), a dict attribute
  holding a value of the graph (``self.parameters.update(kwargs)``);
- ``list("ACGT")``, a module's list of names, and a nested comprehension of constant rows
  (``[[i, j] for i in (-1, 0, 1) for j in (0, 1)]``: its loops unrolled).

Each is checked against central finite differences (at two steps) as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``), and one gradient holding most of them is checked
compiled, against JAX where JAX is installed (JAX's arcsin takes the other side of the branch
cut at a real argument above 1, so `snell` is checked by central differences only).
"""

from __future__ import annotations

import os
import sys
from functools import wraps

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.interpolate import interp1d

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against, check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.7, 0.3, 1.1, 0.45])
WS = np.array([3.0, 5.0, 8.0, 12.0])
CT = np.array([0.9, 0.8, 0.7, 0.4])
CP_LATER = interp1d(WS, CT)  # made outside the function
NAMES = ["a", "b", "c"]


def match_args_return(f):
    @wraps(f)
    def wrapper(*args, **kw):
        isarray = np.any([hasattr(a, "__array__") for a in args])
        newargs = []
        for arg in args:
            if isarray:
                newargs.append(np.asarray(arg, dtype=float))
            else:
                newargs.append(arg)
        return f(*newargs, **kw)
    return wrapper


@match_args_return
def polynomial(s, t, p=0.0):
    return np.sum(s * (1.0 + 0.1 * t + 0.01 * t * t) + p * s)


def decorated(x):
    return polynomial(x, x[::-1], p=0.3) + polynomial(x[:2], 2.0 * x[2:])


def interpolated(x):
    speeds = 4.0 + 6.0 * np.abs(np.outer(x, x))  # (4, 4): points inside the table
    thrust = np.interp(speeds, WS, CT)
    cp = interp1d(WS, CT, fill_value=(0.0, 1.0), bounds_error=False)
    return np.sum(thrust * speeds) + np.sum(cp(x * 20.0)) + np.sum(CP_LATER(speeds[0]))


def masked_field(x):
    field = np.ones((2, 2, 2, 2)) * x[0] + np.arange(16.0).reshape(2, 2, 2, 2) * x[1]
    c = (x[2] / (1.0 + field)) ** 2
    alias = c
    alias[~(field > 3.0)] = 0.0
    return np.sum(c * field)


class Op:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=complex)

    def __add__(self, other):
        return Op(self.data + other.data)

    def __mul__(self, other):
        if isinstance(other, Op):
            return Op(self.data @ other.data)
        return Op(self.data * other)

    def __rmul__(self, other):
        return Op(other * self.data)

    def __neg__(self):
        return Op(-self.data)

    def dag(self):
        return Op(self.data.conj().T)

    def expm(self):
        return Op(sla.expm(self.data))


def sx():
    return Op([[0, 1], [1, 0]])


def sy():
    return Op([[0, -1j], [1j, 0]])


def operators(x):
    H = 0.5 * x[0] * Op(np.diag([1.0, -1.0])) + x[1] * sx() + -(0.2 * x[2] * sy())
    return np.real(np.trace((H * H.dag()).data)) * x[3] + np.abs(H.data[0, 1]) ** 2


def rabi(x):
    H = 0.5 * x[0] * Op(np.diag([1.0, -1.0])) + x[1] * sx() + -(0.2 * x[2] * sy())
    U = (-1j * x[3] * H).expm()
    up = np.eye(2, dtype=complex)[:, 1]
    return np.abs(U.data[0] @ up) ** 2 + np.real(np.trace((U.dag() * U).data))


def complex_systems(x):
    Z = np.array([[x[0], 1j * x[1]], [-1j * x[1] + x[2], 2.0 + 0j]])
    b = np.array([1.0, 2.0 + 0.5j])
    w = np.linalg.solve(Z + 3.0 * np.eye(2), b * x[3])
    return np.sum(np.abs(w) ** 2) + np.real(np.trace(np.linalg.inv(Z + 4.0 * np.eye(2))))


def snell(x):
    n = np.array([1.0, 1.5 + x[0] * 1e-2, 1.0])
    angles = np.lib.scimath.arcsin(n[1] * np.sin(x[1] + 0.6) / n)  # past the critical angle
    root = np.emath.sqrt(x[2] - 2.0)
    return np.sum(np.abs(np.cos(angles))) + np.real(root * np.conj(root)) + np.imag(root)


def is_forward(n, theta):
    ncostheta = n * np.cos(theta)
    if abs(ncostheta.imag) > 1e-12:
        answer = (ncostheta.imag > 0)
    else:
        answer = (ncostheta.real > 0)
    answer = bool(answer)
    error_string = "Something's wrong with the angle " + str(n) + " " + str(theta)
    if answer is True:
        assert ncostheta.imag > -1e-12, error_string
    else:
        assert ncostheta.imag < 1e-12, error_string
    return answer


def forward_angles(x):
    n = 1.5 + 0.01j * x[0]
    theta = np.arcsin(np.sin(x[1]) / n)
    if not is_forward(n, theta):
        theta = np.pi - theta
    return np.abs(np.cos(theta)) + x[2]


def summed_matrices(x):
    Hc = [np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, -1.0]])]
    H = sum(x[j] * Hc[j] for j in range(len(Hc)))
    return np.sum(H @ H) * x[2]


def spin_chain(x):
    return _chain_energy(x)


def _chain_energy(x, N=3):
    """QuTiP's Ising chain: ``op_list = [si] * N; op_list[n] = sx`` in ``for n in
    range(N)``, N known while building (the loop unrolled)."""
    sx_, si = np.array([[0.0, 1.0], [1.0, 0.0]]), np.eye(2)
    H = 0.0
    for n in range(N):
        op_list = [si] * N
        op_list[n] = sx_
        m = op_list[0]
        for op in op_list[1:]:
            m = np.kron(m, op)
        H = H + x[n] * m
    return np.sum(np.linalg.eigvalsh(H + np.diag(np.arange(8.0))) ** 3) * x[3]


class Atoms:
    def __init__(self, positions):
        self.positions = positions

    def __len__(self):
        return len(self.positions)


class Pair:
    default_parameters = {"sigma": 1.0, "epsilon": 1.0}  # noqa: RUF012 - as ASE writes it

    def __init__(self, **kwargs):
        self.parameters = dict(self.default_parameters)
        self.parameters.update(kwargs)

    def energy(self, atoms):
        natoms = len(atoms)
        sigma = self.parameters["sigma"]
        e = 0.0
        for i in range(natoms):
            r2 = np.sum((atoms.positions - atoms.positions[i]) ** 2, axis=1) + 1.0
            e += np.sum((sigma ** 2 / r2) ** 3)
        return e


def pair_energy(x):
    atoms = Atoms(np.reshape(x, (2, 2)))
    return Pair(sigma=x[0] + 1.0).energy(atoms)


def named(x):
    letters = list("ACG")
    weights = dict(zip(NAMES, (1.0, 2.0, 3.0)))
    shifts = np.array([[i, j] for i in (-1, 0, 1) for j in (0, 1)])  # ASE's image shifts
    return x[0] * len(letters) * weights["b"] + sum(x[k] for k, _ in enumerate(NAMES)) \
        + np.sum((x[1] + shifts) ** 2)


FORMS = [decorated, interpolated, masked_field, operators, rabi, complex_systems, snell,
         forward_angles, summed_matrices, spin_chain, pair_energy, named]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))


def check_refused_and_raised():
    def out_of_range(x):
        return np.sum(interp1d(WS, CT)(x * 100.0))  # SciPy raises: above the range
    with pytest.raises(ValueError, match="above the interpolation range"):
        jitgrad.grad(out_of_range)(X)

    def cubic(x):
        return np.sum(interp1d(WS, CT, kind="cubic")(x + 4.0))
    with pytest.raises(jitgrad.UnsupportedError, match="other than linear"):
        jitgrad.grad(cubic)(X)

    def letters(x):
        return x[0] * np.array([list(s) for s in ("AC", "GT")]).shape[0]
    with pytest.raises(jitgrad.UnsupportedError, match="np.array of strings"):
        jitgrad.grad(letters)(X)  # (a ValueError of jitgrad's own before)

    def mask_of_other_shape(x):
        c = np.ones((2, 2, 2)) * x[0]
        c[np.ones((2, 2, 1), dtype=bool)] = 0.0
        return np.sum(c)
    with pytest.raises(IndexError):  # NumPy's too
        mask_of_other_shape(X)
    with pytest.raises(IndexError, match="boolean index did not match"):
        jitgrad.grad(mask_of_other_shape)(X)  # (raised as Python raises it)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def all_forms(x):
    return decorated(x) + masked_field(x) + operators(x)


def all_forms_jax(jnp, x):
    t = x[::-1]
    dec = jnp.sum(x * (1.0 + 0.1 * t + 0.01 * t * t) + 0.3 * x) + jnp.sum(
        x[:2] * (1.0 + 0.2 * x[2:] + 0.04 * x[2:] ** 2))
    field = jnp.ones((2, 2, 2, 2)) * x[0] + jnp.arange(16.0).reshape(2, 2, 2, 2) * x[1]
    c = jnp.where(field > 3.0, (x[2] / (1.0 + field)) ** 2, 0.0)
    masked = jnp.sum(c * field)
    H = (0.5 * x[0] * jnp.diag(jnp.array([1.0, -1.0])) + x[1] * jnp.array([[0, 1], [1, 0]])
         - 0.2 * x[2] * jnp.array([[0, -1j], [1j, 0]]))
    ops = jnp.real(jnp.trace(H @ H.conj().T)) * x[3] + jnp.abs(H[0, 1]) ** 2
    return dec + masked + ops


def test_forms_compiled():
    """One compiled gradient holding the decorator, the rank-4 mask write and the user's
    operators on a complex matrix (the interpolations, `rabi`'s complex expm and the rest,
    whose compile takes longer: plain Python, `test_forms_as_plain_python`)."""
    value, g = jitgrad.value_and_grad(all_forms)(X)
    try:
        import jax
    except ImportError:  # (no JAX: central differences at two steps)
        check_two_steps(all_forms, (X,), (0,), value, (g,))
        return
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    want = [jax.grad(lambda x: all_forms_jax(jnp, x))(jnp.array(X))]
    check_against(all_forms, (X,), (0,), value, (g,), want)


if __name__ == "__main__":
    check_forms()
    check_refused_and_raised()
    print("hb7a's forms: gradients agree with central differences")
