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
  when named in ``wrt``;
- ``np.arange(start, stop, step)`` whose start or step is a float of the graph (an RR
  interval's resampling grid ``np.arange(t[0], t[-1], 0.25)``): each entry ``start + k step``
  in the derivative too (it was 0: a silently wrong derivative);
- ``scipy.signal.filtfilt``, ``sosfilt``, ``sosfiltfilt`` of designs known while building,
  ``scipy.signal.welch`` (``nperseg`` given), ``scipy.stats.median_abs_deviation``, ``iqr``
  and ``binom.pmf``/``logpmf`` (a Wright-Fisher matrix, p = 0 and 1 included), their values
  against SciPy's.

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
import scipy.stats

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


def grid_of_graph(x):
    grid = np.arange(x[0], 2.5, 0.25) + np.sum(np.arange(0.0, 1.0, x[1] + 0.1) ** 2)
    return np.sum(np.interp(grid, np.cumsum(x), x ** 2))


SIGNAL = np.sin(np.arange(48) / 3.0) + 0.3 * np.cos(np.arange(48) ** 1.5)


def filters(x):
    s = SIGNAL * (1.0 + x[0]) + x[1]
    b, a = scipy.signal.butter(2, [4.0, 20.0], btype="bandpass", fs=100)
    sos = scipy.signal.butter(4, 15.0, output="sos", fs=100.0)
    return np.sum(scipy.signal.filtfilt(b, a, s) ** 2) + np.sum(
        scipy.signal.sosfiltfilt(sos, s) * SIGNAL) + np.sum(scipy.signal.sosfilt(sos, s) ** 2)


def spectra(x):
    s = SIGNAL * (1.0 + x[0]) + x[1] * np.arange(48) / 48.0
    f, p = scipy.signal.welch(s, fs=4.0, nperseg=16)
    f2, p2 = scipy.signal.welch(s, fs=4.0, nperseg=15, noverlap=5, window="hamming",
                                scaling="spectrum")
    return np.sum(p * f) + np.sum(p2 * np.arange(len(f2)))


def spreads(x):
    s = SIGNAL[:11] * (1.0 + x[0]) + x[1] * np.arange(11.0) ** 2
    return scipy.stats.median_abs_deviation(s, scale="normal") + scipy.stats.iqr(s) + \
        scipy.stats.iqr(s, rng=(10, 60), scale="normal")


def binomial(x):
    i = np.arange(6)
    p = i / 5.0
    p_sel = p * (1 + x[0]) / (1 + p * x[0])  # 0 and 1 at the ends, whatever x[0]
    P = scipy.stats.binom.pmf(i[None, :], 5, p_sel[:, None])
    return np.sum(P * np.arange(6.0) ** 2) + np.sum(scipy.stats.binom.logpmf(i, 5, x[1]))


def pairs_and_blocks(x, blen=2):
    observed = [(0, 1), (2, 3), (4, 0)]
    ll = 0.0
    for (t0, c0), (t1, c1) in zip(observed[:-1], observed[1:]):  # noqa: RUF007 (the form)
        ll += x[c0] * x[c1] * (t1 - t0)
    blocks = [np.sum(t ** 2) for t in np.array_split(x, len(x) // blen)]
    return ll + sum(b * (k + 1) for k, b in enumerate(blocks))


FORMS = [pairs_and_blocks, held_list, ordered_and_property, gradient_of_default, butter_of_defaults,
         grid_of_graph, filters, spectra, spreads, binomial]


def check_forms():
    for fn in FORMS:
        value, g = jitgrad.value_and_grad(fn)(X)
        check_two_steps(fn, (X,), (0,), value, (g,))
    s = SIGNAL * 1.3 + 0.2  # the values SciPy's own functions give
    b, a = scipy.signal.butter(2, [4.0, 20.0], btype="bandpass", fs=100)
    sos = scipy.signal.butter(4, 15.0, output="sos", fs=100.0)
    for ours, theirs in (
            (lambda x: np.sum(scipy.signal.filtfilt(b, a, x) ** 2),
             scipy.signal.filtfilt(b, a, s)),
            (lambda x: np.sum(scipy.signal.sosfiltfilt(sos, x) ** 2),
             scipy.signal.sosfiltfilt(sos, s)),
            (lambda x: np.sum(scipy.signal.sosfilt(sos, x) ** 2), scipy.signal.sosfilt(sos, s)),
            (lambda x: np.sum(scipy.signal.welch(x, fs=4.0, nperseg=16)[1] ** 2),
             scipy.signal.welch(s, fs=4.0, nperseg=16)[1]),
            (lambda x: scipy.stats.iqr(x, rng=(10, 60)) ** 2, scipy.stats.iqr(s, rng=(10, 60))),
            (lambda x: scipy.stats.median_abs_deviation(x) ** 2,
             scipy.stats.median_abs_deviation(s))):
        value, _ = jitgrad.value_and_grad(ours)(s)
        np.testing.assert_allclose(value, np.sum(theirs ** 2), rtol=1e-11)
    p = np.array([0.0, 0.4, 1.0])  # binom.pmf's derivative at p = 0 and 1: C k p^(k-1) ...
    g = jitgrad.grad(lambda p: np.sum(scipy.stats.binom.pmf(np.arange(4)[:, None], 3, p)
                                      * np.arange(4.0)[:, None] ** 2))(p)
    np.testing.assert_allclose(g, 3.0 + 6.0 * 2.0 * p, rtol=1e-12)  # (E[k^2] = 3p + 6p^2)

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
    return held_list(x) + ordered_and_property(x) + np.sum(np.arange(x[0], 2.5, 0.25) ** 2)


def held_and_property_jax(jnp, x):
    lx = [1.0]
    for q in x[:-1]:
        lx.append(lx[-1] * (1 - q))
    lx = jnp.stack([jnp.asarray(v) for v in lx])
    grid = x[0] + 0.25 * jnp.arange(len(np.arange(X[0], 2.5, 0.25)))  # (the count at X)
    return jnp.sum(lx) + 2.0 * jnp.sum(lx * x) + 5 + x[0] ** 2 + 2 * x[1] ** 2 + \
        3 * x[2] ** 2 + 3 + jnp.sum(grid ** 2)


def test_forms_compiled():
    """One compiled gradient holding the held list, the property's list and np.arange from
    a start of the graph."""
    check_form(held_and_property, (X,), 0, held_and_property_jax)


if __name__ == "__main__":
    check_forms()
    check_refused()
    print("hb9b's forms: gradients agree with central differences")
