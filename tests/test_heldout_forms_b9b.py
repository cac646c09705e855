"""Forms met in the ninth held-out batch of real code (issue #43, part hb9b: water networks,
actuarial tables, muscle models, material hysteresis, biosignals, population genetics), in
functions of our own:

- a fresh list an object's attribute holds, changed in place by the statements after it
  (``self.lx = [1.0]`` then ``self.lx.append(self.lx[-1] * (1 - q))`` in a loop over an
  argument: a life table's ``__init__``);
- an ``OrderedDict`` attribute an ``add_*`` method writes an item into (``self._nodes[name] =
  Node(...)``, WNTR's model);
- a ``@property`` returning a list comprehension (``wn.junction_names``), read as a method
  call's list;
- a float default the call leaves out, known while building (``np.gradient(x, dt)`` with
  ``dt=0.01``; ``scipy.signal.butter(4, cutoff, fs=fs)`` of defaults), still differentiated
  when named in ``wrt``.

Each is checked against central finite differences at two steps as plain Python, in a process
of its own (``JITGRAD_DISABLE_JIT=1``); one small gradient holding the held list and the
property is checked compiled, against JAX where JAX is installed.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict

import numpy as np
import pytest
import scipy.signal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_form, check_two_steps
from plain_python import assert_runs_as_plain_python

import jitgrad

X = np.array([0.3, 0.12, 0.25, 0.08, 0.4])


class Table:
    def __init__(self, qx):
        self.lx = [1.0]
        for q in qx[:-1]:
            self.lx.append(self.lx[-1] * (1 - q))
        self.lx = np.array(self.lx)
        self.dx = self.lx * qx
        self.w = len(self.lx)


def held_list(x):
    t = Table(x)
    return np.sum(t.lx) + 2.0 * np.sum(t.dx) + t.w


class Node:
    def __init__(self, name, demand):
        self.name = name
        self.demand = demand


class Network:
    def __init__(self):
        self._nodes = OrderedDict()

    def add_node(self, name, demand):
        self._nodes[name] = Node(name, demand)

    @property
    def names(self):
        return [n for n, node in self._nodes.items() if n != "source"]


def ordered_and_property(x):
    net = Network()
    net.add_node("source", 10.0)
    net.add_node("j0", x[0] ** 2)
    net.add_node("j1", x[1] ** 2)
    net.add_node("j2", x[2] ** 2)
    names = net.names
    index = {n: i for i, n in enumerate(names)}
    return sum(net._nodes[n].demand * (index[n] + 1) for n in names) + len(names)


def gradient_of_default(x, dt=0.01):
    return np.sum(np.gradient(np.sin(x), dt) ** 2) * dt ** 2


def butter_of_defaults(x, fs=100.0, cutoff=12.0):
    b, a = scipy.signal.butter(2, cutoff, btype="lowpass", fs=fs)
    return np.sum(scipy.signal.lfilter(b, a, x) ** 2)


FORMS = [held_list, ordered_and_property, gradient_of_default, butter_of_defaults]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))
    def scaled(x, c=0.5):
        return np.sum(np.sin(c * x)) + c ** 3
    g = jitgrad.grad(scaled, wrt="c")(X)  # a default named in wrt: differentiated, not known
    np.testing.assert_allclose(g, np.sum(X * np.cos(0.5 * X)) + 0.75, rtol=1e-12)


def check_refused():
    class Calls:
        def __init__(self, qx):
            self.lx = [1.0]
            for q in qx:
                self.lx.append(self.step(q))  # a method of the object: it could read self.lx

        def step(self, q):
            return self.lx[-1] * (1 - q)

    def through_method(x):
        return np.sum(np.array(Calls(x).lx))
    with pytest.raises(jitgrad.UnsupportedError, match="changing a list in place"):
        jitgrad.grad(through_method)(X)


def test_forms_as_plain_python():
    """Every form, run as plain Python (a process of its own)."""
    assert_runs_as_plain_python(__file__)


def held_and_property(x):
    return held_list(x) + ordered_and_property(x)


def held_and_property_jax(jnp, x):
    lx = [1.0]
    for q in x[:-1]:
        lx.append(lx[-1] * (1 - q))
    lx = jnp.stack([jnp.asarray(v) for v in lx])
    return jnp.sum(lx) + 2.0 * jnp.sum(lx * x) + 5 + x[0] ** 2 + 2 * x[1] ** 2 + 3 * x[2] ** 2 + 3


def test_forms_compiled():
    """One compiled gradient holding the held list and the property's list."""
    check_form(held_and_property, (X,), 0, held_and_property_jax)


if __name__ == "__main__":
    check_forms()
    check_refused()
    print("hb9b's forms: gradients agree with central differences")
