"""Forms the held-out batches 5-8 still refused (issue #43, part hleft8), in functions of our own:

- a dict of numbers and arrays under known keys changed by a loop that runs at run time: held
  by a local name (``d["a"] = d["a"] * 0.9 + ...``) or by an attribute of an object made in the
  function, one dict held by two objects' attributes (climlab's process and its subprocess
  share ``state``; ``self.state[name] = ...`` in a method the loop of time steps calls): the
  loop carries each entry, and every holder sees the change;
- a dict (or object) given new keys in a loop of a count known while building (climlab's
  ``self.diagnostics["OLR"] = OLR`` into ``{}``): its first iteration is built before the loop,
  which then carries the keys;
- ``sub.state = self.state`` then ``self.state[k] = v``, and ``d = obj.params`` then
  ``d[k] = v``: every holder names one dict (wrong values and gradients before: reading a dict
  attribute gave a copy, and a change through a name left the attribute as it was);
- a function returning an array of one entry whose shape is known while building
  (autograd's ``flatten_func``: ``flatten(loss)[0]`` of a scalar loss): that entry;
- a write through ``np.einsum("ijj->ij", F)[...] = v`` (scikit-rf's ``s2z``): einsum's view of
  a diagonal, written as the loop over it, real or complex;
- ``scipy.integrate.solve_ivp(fun, t_span, y0, t_eval=...)``, forwards and backwards in time
  (metpy's moist adiabat from the surface pressure up), ``args=``: odeint's Dormand-Prince
  integration built in place (events= and a call without t_eval refused);
- ``scipy.special.sph_harm_y(n, m, theta, phi)`` of orders known while building (dipy's real
  SH basis): the Legendre recurrence in the degree, its derivatives in theta and phi;
- ``f.__code__.co_argcount`` of a function defined in the differentiated one (pysindy);
- a slice of a list its caller built bound to a name (CommonRoad's ``x_ks = x[0:5]``, then
  passed on and read entry by entry).

Each is checked against central finite differences (at two steps) as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``), and one gradient holding the dict carried by a loop is
checked compiled, against JAX where JAX is installed.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest
import scipy.special
from scipy.integrate import solve_ivp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_form, check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.7, 0.3, 1.1, 0.45])


def local_dict(x, n):
    d = {"a": x[:2], "b": 2.0 * x[2]}
    for _ in range(n):
        d["a"] = d["a"] * 0.9 + 0.1 * d["b"]
        d["b"] = d["b"] - 0.05 * d["b"] ** 2
    return np.sum(d["a"] ** 2) + d["b"]


class Process:
    def __init__(self, state=None, dt=0.1):
        self.state = {} if state is None else state
        self.dt = dt
        self.diagnostics = {}


class Albedo(Process):
    def compute(self):
        self.albedo = 0.3 + 0.1 * np.tanh(self.state["T"])


class Model(Process):
    def __init__(self, x):
        super().__init__(state={"T": x[:3].copy(), "S": x[3]})
        self.alb = Albedo(state=self.state)  # one dict, two holders

    def step(self):
        self.alb.state = self.state
        self.alb.compute()
        olr = 0.5 + 0.2 * self.state["T"]
        self.diagnostics["OLR"] = olr  # new keys: the loop's first iteration apart
        tend = (1.0 - self.alb.albedo) * self.state["S"] - olr
        for name in ("T",):
            self.state[name] = self.state[name] + tend * self.dt
        self.state["S"] = self.state["S"] * 0.99

    def run(self, steps):
        for _ in range(steps):
            self.step()


def model_known_count(x):
    m = Model(x)
    m.run(20)  # more than jitgrad unrolls: a loop
    return np.sum(m.alb.state["T"] ** 2) + np.sum(m.diagnostics["OLR"])


def model_run_time_count(x, n):
    m = Model(x)
    m.diagnostics = {"OLR": np.zeros(3)}
    for _ in range(n):
        m.step()
    return np.sum(m.state["T"] ** 2) + m.alb.state["S"] + np.mean(m.diagnostics["OLR"])


class Holder:
    def __init__(self):
        self.s = None


class Owner:
    def __init__(self, x):
        self.s = {"a": x}
        self.o = Holder()


def shared_attribute(x):
    a = Owner(x[0])
    a.o.s = a.s
    a.s["a"] = a.s["a"] * 3.0
    d = a.s  # a name for the attribute's dict: a change through it reaches the attributes
    d["a"] = d["a"] * x[2]
    return a.o.s["a"] * x[1]


def one_entry(x):
    return np.array([np.sum(x ** 2) * x[0]])


def one_by_one(x):
    return (np.sum(np.sin(x)) * 2.0).reshape(1, 1)


def kinematic(x):
    return x[0] * x[1] + math.sin(x[2]) * x[3]


def single_track(x):
    x_ks = x[1:5]  # a list's slice, passed on and read entry by entry
    return kinematic(x_ks) + x[0] * x[-1]


def list_slice(x):
    state = [x[k] * 1.5 for k in range(len(x))] + [0.2]
    return single_track(state)


def diagonal_view(x):
    F = np.zeros((3, 2, 2))
    np.einsum("ijj->ij", F)[...] = np.sqrt(x[:2] + 1.0)  # F's diagonal, a view of it
    G = np.zeros((3, 3), dtype=complex)
    np.einsum("ii->i", G)[:] = x[:3] + 1j * x[3]
    return np.sum((F @ F) * np.arange(12.0).reshape(3, 2, 2)) + np.sum(F[:, 0, 1]) + np.sum(
        np.abs(G @ G + 1.0) ** 2)


def oscillator(t, y, k):
    return [y[1], -k * y[0] - 0.1 * y[1]]


def ivp_forward(x):
    sol = solve_ivp(oscillator, (0.0, 2.0), [x[0], 0.0], t_eval=np.array([0.5, 1.0, 2.0]),
                    args=(x[1],), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y[0] ** 2) + sol.t[-1] * sol.y[1, -1]


def ivp_backward(x):
    """Integrated from the surface pressure up (metpy's moist adiabat), t_eval decreasing and
    made of the argument (the direction decided at run time)."""
    def lapse(p, T):
        return x[1] * T / p

    p = np.array([925.0, 850.0, 700.0]) * (1.0 + 0.01 * x[2])
    sol = solve_ivp(lapse, (1000.0, p[-1]), np.array([x[0] * 300.0]), t_eval=p,
                    method="LSODA", rtol=1e-10, atol=1e-10)
    if not sol.success:
        raise ValueError("ODE integration failed")
    return np.sum(sol.y) / 300.0


def real_sh_basis(x):
    """dipy's real symmetric basis of even orders from scipy.special.sph_harm_y."""
    theta, phi = np.array([0.3, 1.1, 2.5]) * x[0], np.array([0.2, -1.3, 2.9]) + x[1]
    cols = []
    for n in range(0, 3, 2):
        for m in range(-n, n + 1):
            Y = scipy.special.sph_harm_y(n, abs(m), theta, phi)
            cols.append(np.sqrt(2) * Y.imag if m < 0 else Y.real if m == 0 else
                        np.sqrt(2) * Y.real)
    B = np.column_stack(cols)
    Y3 = scipy.special.sph_harm_y(3, -2, theta, phi)  # a negative order, odd degree
    return np.sum(B @ np.arange(1.0, 7.0)) + np.sum(np.abs(Y3) ** 2) + np.sum(Y3.imag)


def library_of_lambdas(x):
    """pysindy's custom library: each function called with as many arguments as its
    ``__code__.co_argcount`` says."""
    funcs = [lambda a: a * a, lambda a, b: a * b, lambda a: np.sin(a)]
    total = 0.0
    for fn in funcs:
        if fn.__code__.co_argcount == 1:
            total = total + np.sum(fn(x))
        else:
            total = total + np.sum(fn(x, x[::-1]))
    return total


FORMS = [(library_of_lambdas, (X,)), (real_sh_basis, (X,)), (diagonal_view, (X,)), (ivp_forward, (X,)), (ivp_backward, (X,)), (local_dict, (X, 7)), (model_known_count, (X,)), (model_run_time_count, (X, 5)),
         (shared_attribute, (X,)), (one_entry, (X,)), (one_by_one, (X,)), (list_slice, (X,))]


def check_forms():
    for fn, args in FORMS:
        value, g = jitgrad.value_and_grad(fn)(*args)
        primal = fn if fn not in (one_entry, one_by_one) else (
            lambda x, fn=fn: fn(x).ravel()[0])  # (the entry, for central differences)
        loose = fn in (ivp_forward, ivp_backward)  # (SciPy's own steps: to its tolerance)
        check_two_steps(primal, args, (0,), value, (g,), value_rtol=1e-8 if loose else 1e-12)
    g = jitgrad.grad(model_run_time_count)
    check_two_steps(model_run_time_count, (X, 0), (0,), model_run_time_count(X, 0), (g(X, 0),))


def grows_at_run_time(x, n):
    d = {}
    for k in range(n):
        d["a"] = x * k
    return np.sum(d["a"])


def other_holders(x, n):
    d = {"a": x}
    e = d
    for _ in range(n):
        d["a"] = d["a"] * 2.0
    return np.sum(e["a"])


def with_event(x):
    def apogee(t, y, k):
        return y[1]
    apogee.terminal = True  # (RocketPy's: set while building, refused at the call)
    sol = solve_ivp(oscillator, (0.0, 5.0), [x[0], 1.0], events=apogee, args=(1.0,))
    return sol.t_events[0][0]


def named_and_held(x, n):
    a = Owner(x[0])
    d = a.s
    for _ in range(n):
        d["a"] = d["a"] * 3.0
    return a.s["a"]


def check_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="reassigned inside a loop"):
        jitgrad.grad(named_and_held)(X, 3)  # an attribute holds the dict a name changes
    with pytest.raises(jitgrad.UnsupportedError, match="solve_ivp with events="):
        jitgrad.grad(with_event)(X)
    with pytest.raises(jitgrad.UnsupportedError, match="solve_ivp without t_eval"):
        jitgrad.grad(lambda x: solve_ivp(oscillator, (0.0, 1.0), x[:2], args=(1.0,)).y[0, -1])(X)
    with pytest.raises(jitgrad.UnsupportedError, match="reassigned inside a loop"):
        jitgrad.grad(grows_at_run_time)(X, 3)  # keys given at run time: refused
    with pytest.raises(jitgrad.UnsupportedError, match="reassigned inside a loop"):
        jitgrad.grad(other_holders)(X, 3)  # another name holds the dict: refused
    with pytest.raises(jitgrad.ShapeError, match="must return a scalar"):
        jitgrad.grad(lambda x: x[:2] * 2.0)(X)  # two entries: refused


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def carried_jax(jnp, x):
    t, s = x[:3], x[3]
    olr = jnp.zeros(3)
    for _ in range(4):
        olr = 0.5 + 0.2 * t
        t = t + ((0.7 - 0.1 * jnp.tanh(t)) * s - olr) * 0.1
        s = s * 0.99
    return jnp.sum(t ** 2) + s + jnp.mean(olr)


def test_forms_compiled():
    """One compiled gradient holding a dict two attributes hold, carried by a run-time loop;
    the rest as plain Python (`test_forms_as_plain_python`)."""
    check_form(lambda x: model_run_time_count(x, 4), (X,), 0, carried_jax)


if __name__ == "__main__":
    check_forms()
    check_refused()
    print("hleft8's forms: gradients agree with central differences")
