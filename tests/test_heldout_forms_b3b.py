"""Python forms met in the third held-out batch of real code (issue #43, part hb3b), in
functions of our own: a problem object whose ``_evaluate(x, out)`` writes its results into a
dict the caller passed (``out["F"] = ...``, read by the caller after the call, as optimisation
test suites do); a list of arrays appended in a loop over ``range(self.n_obj)`` (a bound known
while building, not a literal), each item computed from a slice whose width changes, stacked
with ``np.column_stack``; ``r, k = [float(v) for v in params]``; ruptures' ``pairwise`` with
``itertools.tee``, ``next(b, None)`` and ``zip``, summed by a generator; a lazily computed
``@property`` (``if self._gram is None: ...``) built on ``pdist(..., metric="cosine")``,
``np.clip(K, lo, hi, K)`` (its output given by position) and ``squareform``; ``flag is
False``; ``copy.deepcopy`` of an array written into after; ``np.median(x, axis=0)``; frozen
SciPy distributions (``scipy.stats.norm(mu, sd)`` of run-time parameters, a
``multivariate_normal`` and a list of them made outside the function); a Numba function
called through ``.py_func``; ``x.setflags(write=False)``; ``scipy.special.hyp1f1`` and
``hyp2f1`` in their last argument; ``np.concatenate(([0], times))`` (PINTS' ODE models).

One compiled gradient holds those whose generated code is new, and a heavy one (``-m heavy``)
holds them all; each is checked against central finite differences and against JAX (the same
computation written with jax.numpy). The conformance table builds each form as plain Python. The refusals (a dict changed in a
callee while the caller's statement names it twice; ``next`` of an iterator ``zip`` has read; ``is
False`` of a run-time truth value; ``copy.deepcopy`` of the user's object; the derivative of
``hyp2f1`` in a parameter) are checked while building, with no compile. A list of arrays of
changing shape over a count of the arguments' sizes is unrolled for the call's count (hleft7).
"""

from __future__ import annotations

import copy
import itertools
import os
import sys

import numba
import numpy as np
import pytest
import scipy.special
import scipy.stats
from scipy.spatial.distance import pdist, squareform

import jitgrad
from jitgrad import UnsupportedError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import check_against

X = np.array([[0.3, 0.7, 0.2, 0.9], [0.6, 0.1, 0.8, 0.4], [0.5, 0.45, 0.35, 0.25]])
PARAMS = np.array([0.4, 1.5])
SIGNAL = np.array([[0.2, 1.0], [0.5, 0.8], [0.1, 1.3], [2.1, -0.5], [1.8, -0.2], [2.4, -0.7],
                   [1.1, 0.3], [0.9, 0.5]])
MIXTURE = [scipy.stats.multivariate_normal(np.array(m), np.diag(d))  # made outside
           for m, d in (([0.0, 0.0], [1.0, 1.0]), ([1.0, -1.0], [1.0, 2.0]))]


class Problem:
    """A test problem: ``_evaluate`` writes its objectives into the caller's dict."""

    def __init__(self, n_obj):
        self.n_obj = n_obj

    def objectives(self, x):
        terms = []
        for i in range(self.n_obj):  # a bound known while building: unrolled
            f = 1.0 + x[:, -1]
            f = f * np.prod(np.cos(x[:, : x.shape[1] - i - 1]), axis=1)
            terms.append(f)
        return np.column_stack(terms)

    def _evaluate(self, x, out):
        out["F"] = self.objectives(x)
        out["G"] = np.sum(x, axis=1) - 1.0
        out["G"] = -out["G"]


def run_problem(problem, x):
    out = {}
    problem._evaluate(x, out)  # the callee's writes reach this dict
    return out


def pairwise(iterable):
    a, b = itertools.tee(iterable)
    next(b, None)
    return zip(a, b)


class Segments:
    """A segment cost of a signal, its kernel matrix computed once, on first use."""

    def __init__(self, clipped):
        self.signal = None
        self._gram = None
        self.clipped = clipped

    @property
    def gram(self):
        if self._gram is None:
            K = 1.0 - pdist(self.signal, metric="cosine")
            if self.clipped is False:
                K = K + 0.0
            else:
                np.clip(K, -0.5, 0.95, K)
            self._gram = squareform(K) + np.eye(self.signal.shape[0])
        return self._gram

    def fit(self, signal):
        self.signal = signal
        return self

    def error(self, start, end):
        sub = self.gram[start:end, start:end]
        return np.diagonal(sub).sum() - sub.sum() / (end - start)

    def sum_of_costs(self, bkps):
        return sum(self.error(s, e) for s, e in pairwise([0] + bkps))


@numba.njit
def scaled_norm(v, p):
    total = 0.0
    for i in range(v.shape[0]):
        total += np.abs(v[i]) ** p
    return total ** (1.0 / p)


def logistic(params, times):
    r, k = [float(v) for v in params]
    return k / (1.0 + (k / 2.0 - 1.0) * np.exp(-r * times))


def loss(x, params, signal):
    results = run_problem(Problem(2), x)
    total = np.sum(results["F"] ** 2) + np.sum(results["G"])
    total = total + np.sum(logistic(params, np.linspace(0.0, 3.0, 4)))
    cost = Segments(clipped=True).fit(signal)
    total = total + cost.sum_of_costs([5, 8])
    kept = copy.deepcopy(x)
    kept[0, 0] = 2.0  # the copy written into: x is not
    total = total + np.sum(np.median(kept, axis=1, keepdims=True) * kept)
    mu, sd = params
    total = total + np.sum(scipy.stats.norm(mu, sd).logpdf(x[1]))
    total = total + np.log(sum(d.pdf(params) for d in MIXTURE))
    view = x[2] * 1.0
    view.setflags(write=False)
    total = total + scaled_norm.py_func(view, 3.0)
    total = total + np.sum(scipy.special.hyp1f1(0.5, 1.5, -x[0] ** 2))
    total = total + np.sum(scipy.special.hyp2f1(1.0, 1.5, 2.5, -x[1]))
    return total


def loss_compiled(x, params):
    """The forms whose generated code is new (the rest build as code jitgrad compiled
    before): a dict written by a callee, a list of arrays unrolled over ``range(self.n_obj)``,
    ``np.clip`` with its output by position, ``np.median`` along an axis, a frozen
    distribution of run-time parameters, SciPy's hypergeometric kernels, a constant list
    joined to a computed array by ``np.concatenate``."""
    results = run_problem(Problem(2), x)
    total = np.sum(results["F"] ** 2) + np.sum(results["G"])
    row = x[0] * 3.0
    np.clip(row, 0.5, 2.0, row)
    total = total + np.sum(row * np.median(x, axis=1, keepdims=True))
    mu, sd = params
    total = total + np.sum(scipy.stats.norm(mu, sd).logpdf(x[1]))
    total = total + np.sum(scipy.special.hyp1f1(0.5, 1.5, -x[0] ** 2))
    total = total + np.sum(np.concatenate(([0], x[2])) * np.arange(5.0))  # ([0]: a constant)
    return total + np.sum(scipy.special.hyp2f1(1.0, 1.5, 2.5, -x[1]))


def loss_compiled_jax(jnp, jsp, jst, x, params):
    f = []
    for i in range(2):
        f.append((1.0 + x[:, -1]) * jnp.prod(jnp.cos(x[:, : x.shape[1] - i - 1]), axis=1))
    total = jnp.sum(jnp.column_stack(f) ** 2) - jnp.sum(jnp.sum(x, axis=1) - 1.0)
    row = jnp.clip(x[0] * 3.0, 0.5, 2.0)
    total = total + jnp.sum(row * jnp.median(x, axis=1, keepdims=True))
    total = total + jnp.sum(jst.norm.logpdf(x[1], params[0], params[1]))
    total = total + jnp.sum(jsp.hyp1f1(0.5, 1.5, -x[0] ** 2))
    total = total + jnp.sum(jnp.concatenate((jnp.zeros(1), x[2])) * jnp.arange(5.0))
    return total + jnp.sum(jsp.hyp2f1(1.0, 1.5, 2.5, -x[1]))


def loss_jax(jnp, jsp, jst, x, params, signal):
    f = []
    for i in range(2):
        f.append((1.0 + x[:, -1]) * jnp.prod(jnp.cos(x[:, : x.shape[1] - i - 1]), axis=1))
    total = jnp.sum(jnp.column_stack(f) ** 2) - jnp.sum(jnp.sum(x, axis=1) - 1.0)
    r, k = params[0], params[1]
    times = jnp.linspace(0.0, 3.0, 4)
    total = total + jnp.sum(k / (1.0 + (k / 2.0 - 1.0) * jnp.exp(-r * times)))
    unit = signal / jnp.sqrt(jnp.sum(signal * signal, axis=1, keepdims=True))
    cos = jnp.clip(unit @ unit.T, -0.5, 0.95)
    gram = cos * (1.0 - jnp.eye(8)) + jnp.eye(8)
    for s, e in ((0, 5), (5, 8)):
        sub = gram[s:e, s:e]
        total = total + jnp.trace(sub) - jnp.sum(sub) / (e - s)
    kept = x.at[0, 0].set(2.0)
    total = total + jnp.sum(jnp.median(kept, axis=1, keepdims=True) * kept)
    mu, sd = params[0], params[1]
    total = total + jnp.sum(jst.norm.logpdf(x[1], mu, sd))
    total = total + jnp.log(sum(jnp.exp(jst.multivariate_normal.logpdf(
        params, jnp.array(m), jnp.diag(jnp.array(d))))
        for m, d in (([0.0, 0.0], [1.0, 1.0]), ([1.0, -1.0], [1.0, 2.0]))))
    total = total + jnp.sum(jnp.abs(x[2]) ** 3.0) ** (1.0 / 3.0)
    total = total + jnp.sum(jsp.hyp1f1(0.5, 1.5, -x[0] ** 2))
    total = total + jnp.sum(jsp.hyp2f1(1.0, 1.5, 2.5, -x[1]))
    return total


def check(fn, fn_jax, args):
    """``fn``'s compiled gradient against central differences and JAX's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    import jax.scipy.stats as jst

    wrt = tuple(range(len(args)))
    value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    want = jax.jit(jax.grad(lambda *a: fn_jax(jnp, jsp, jst, *a), argnums=wrt))(
        *(jnp.array(a) for a in args))
    check_against(fn, args, wrt, value, grads, want)


def test_gradient_matches_finite_differences_and_jax():
    check(loss_compiled, loss_compiled_jax, (X, PARAMS))


@pytest.mark.heavy
def test_every_form_compiled():
    """All the forms in one compiled gradient (the default run builds the others as plain
    Python, in the conformance table)."""
    check(loss, loss_jax, (X, PARAMS, SIGNAL))


def names_dict_twice(x):
    out = {}
    total = write_into(out, x) + len(out)  # the caller's statement names `out` again
    return total


def write_into(out, x):
    out["y"] = x * 2.0
    return 1.0


def items_of_run_time_count(x):
    rows = []
    for i in range(x.shape[0]):  # a count known only at run time
        rows.append(x[: i + 1] * 2.0)
    return np.sum(np.column_stack(rows))


def next_after_zip(x):
    a = iter((1.0, 2.0, 3.0))
    pairs = zip(a, (4.0, 5.0))
    return x * sum(p * q for p, q in pairs) + next(a)


def is_false_at_run_time(x):
    flag = x > 0.0
    return x * 2.0 if flag is False else x


def deepcopy_of_object(x):
    seg = Segments(True)
    seg.signal = x
    return np.sum(copy.deepcopy(seg).signal)


def hyp2f1_in_parameter(x):
    return scipy.special.hyp2f1(x, 1.0, 2.5, 0.3)


def test_items_of_a_count_of_the_sizes_unrolled():
    """Rows of other lengths appended over ``range(x.shape[0])``: the loop unrolled for the
    call's length (hleft7: the build holds for it), so np.column_stack of them fails as
    NumPy's does (ValueError: the rows' lengths differ)."""
    with pytest.raises(ValueError, match=r"all the input array dimensions"):
        items_of_run_time_count(np.array([0.3, 0.5, 0.2]))
    with pytest.raises(jitgrad.ShapeError,  # (NumPy's message plain, Numba's compiled)
                       match=r"all the input array dimensions|input sizes over dimension"):
        jitgrad.grad(items_of_run_time_count)(np.array([0.3, 0.5, 0.2]))


@pytest.mark.parametrize(("fn", "message"), [
    (names_dict_twice, r"changing the dict `out` in place while another name"),
    (next_after_zip, r"next\(\) of an iterator a function has read"),
    (is_false_at_run_time, r"of a truth value known only at run time with True or False"),
    (deepcopy_of_object, r"copy.deepcopy\(\) of a Segments"),
    (hyp2f1_in_parameter, r"derivative of scipy.special.hyp2f1 with respect to a"),
])
def test_refused_with_the_reason(fn, message):
    arg = np.array([0.3, 0.5, 0.2]) if fn is deepcopy_of_object else 0.3
    with pytest.raises(UnsupportedError, match=message):
        jitgrad.grad(fn)(arg)
