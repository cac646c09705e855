"""A long generated gradient cut into several compiled functions (`backend.numba.split`,
issue #45: compile time). The cut moves lines, it changes none: the cut module must compute
what the whole function computes.

Without compiling: modules cut with small limits run as plain Python against the uncut ones
(variables handed on through a loop, a branch, a list used as a tape, a ``break``). Compiled:
one gradient with a time loop, tapes, a branch and a reduction, cut into parts by lowered
limits, against central differences and JAX.
"""

from __future__ import annotations

import ast
import os
import sys

import numpy as np
import pytest

import jitgrad
from jitgrad.backend.numba import split

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fd import numeric_grad

MODULE = '''\
import numpy as np


def f(x, n):
    """doc"""
    # -- forward pass
    a = x * 2.0
    b = a + 1.0
    c = np.sin(b)
    tape = []
    acc = 0.0
    for i in range(n):
        tape.append(c.copy())
        c = c * 0.5 + a
        acc = acc + np.sum(c)
        if acc > 1e6:
            break
        d = c - b
        e = d * d
        acc = acc + np.sum(e) * 1e-3
    last = i
    if n > 2:
        g = acc * 2.0
    else:
        g = acc
    # -- adjoint pass
    s = 0.0
    while tape:
        t = tape.pop()
        s = s + np.sum(t)
        s = s * 0.9
        s = s + 1.0
    extra = []
    for j in range(3):
        extra.append(s * j)
        s = s + 0.5
    s = s + sum(extra)
    h = np.zeros(3)
    h[1] = g
    h += s
    return h, last, tape
'''


def _run(source, *args):
    namespace = {}
    exec(compile(source, "<split>", "exec"), namespace)  # noqa: S102 -- the cut module
    return namespace["f"](*args)


@pytest.mark.parametrize("part_lines", [1, 2, 3, 5, 8])
def test_cut_module_computes_the_same(part_lines, monkeypatch):
    monkeypatch.setattr(split, "MIN_PART", 1)
    monkeypatch.setattr(split, "SMALL_LOOP", 1)
    new, parts, origin = split.split_function(MODULE, "f", split_lines=5, part_lines=part_lines)
    ast.parse(new)
    assert parts and all(f"def {p}(" in new for p in parts)
    old_lines = MODULE.split("\n")
    for text, i in zip(new.split("\n"), origin):
        if i:  # a line of the module, moved (and dedented), not changed
            assert old_lines[i - 1].strip() == text.strip()
    # every line of the function's body is there once
    assert sorted(i for i in origin if i) == list(range(1, len(old_lines) + 1))
    x = np.array([0.3, -1.2, 0.5])
    for n in (0, 1, 4):
        if n == 0:
            continue  # `last = i` reads the loop's variable: the uncut module fails too
        want, got = _run(MODULE, x, n), _run(new, x, n)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:] == want[1:]


GUARDED = '''
def g(x, flags):
    total = 0.0
    for k in range(flags.shape[0]):
        if flags[k]:
            seen = x[k] * 2.0
        total = total + x[k]
        if flags[k]:
            total = total + seen
    return total
'''


def test_a_name_set_under_a_branch_is_never_passed_unbound(monkeypatch):
    """``seen`` is set under ``if flags[k]`` and read under it again: the lines never read it
    unset, but a part taking it (or returning it) would be called with it unbound. Such a run
    stays where it is (newton_pf_nb's gradient failed so after the cut)."""
    monkeypatch.setattr(split, "MIN_PART", 1)
    monkeypatch.setattr(split, "SMALL_LOOP", 1)
    x, flags = np.array([1.0, 2.0, 3.0]), np.array([False, True, False])
    want = 2.0 * 2.0 + 6.0
    for part_lines in (1, 2, 3):
        new, _, _ = split.split_function(GUARDED, "g", split_lines=3, part_lines=part_lines)
        namespace = {}
        exec(compile(new, "<split>", "exec"), namespace)  # noqa: S102 -- the cut module
        assert namespace["g"](x, flags) == want


def test_short_functions_and_tapes_stay(monkeypatch):
    monkeypatch.setattr(split, "MIN_PART", 1)
    monkeypatch.setattr(split, "SMALL_LOOP", 1)
    new, parts, _ = split.split_function(MODULE, "f", split_lines=1000)
    assert new == MODULE and not parts
    # a list made empty (in the forward pass, or in the adjoint pass) is never handed to a
    # part that appends to it: Numba types it by its appends, in one function
    new, parts, _ = split.split_function(MODULE, "f", split_lines=5, part_lines=1)
    tree = ast.parse(new)
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in parts:
            appended = {n.func.value.id for n in ast.walk(fn) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and n.func.attr == "append"}
            assert not appended & {a.arg for a in fn.args.args}, fn.name


TAPED = '''
def h(x, n):
    # -- forward pass
    a = x * 2.0
    tape = []
    taped = 0
    for i in range(n):
        b = a + 1.0
        tape.append(b)
        for j in range(2):
            b = b * 1.0
        c = np.sin(b) * a
        tape.append(c)
        a = c * 0.5
        tape.append(a)
        taped += 1
    # -- adjoint pass
    s = 0.0
    while tape:
        t = tape.pop()
        s = s * 0.5 + np.sum(t)
    return s, a, taped
'''


def test_a_loop_that_tapes_is_cut_and_appends_after_each_part(monkeypatch):
    """A forward loop appending to tapes made before it is cut all the same: each part returns
    the names it taped and its call appends them, in order, so the lists stay typed in the
    function that makes them; a name appended is not set again in the same part (``a``).
    The loop reads names set before it (``a``, ``taped``): they are passed in. (Its body
    holds a loop: only such a body is cut, see the next test.)"""
    monkeypatch.setattr(split, "MIN_PART", 1)
    monkeypatch.setattr(split, "SMALL_LOOP", 1)
    x = np.array([0.3, -1.2, 0.5])
    want = _run_named(TAPED, "h", x, 3)
    for part_lines in (1, 2, 3, 5):
        new, parts, _ = split.split_function(TAPED, "h", split_lines=3, part_lines=part_lines)
        tree = ast.parse(new)
        fns = {fn.name: fn for fn in tree.body if isinstance(fn, ast.FunctionDef)}
        assert parts
        for name in parts:
            assert "append" not in ast.unparse(fns[name]), (part_lines, name)
        got = _run_named(new, "h", x, 3)
        assert got[0] == want[0] and got[2] == want[2]
        np.testing.assert_array_equal(got[1], want[1])
    assert any("c = np.sin(b) * a" in ast.unparse(fns[p]) for p in parts)


ELEMENTWISE = '''
def e(x, y):
    # -- forward pass
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        a = x[i] * 2.0
        b = np.sin(a) + y[i]
        c = b * a
        out[i] = c * c
    return out
'''


def test_an_innermost_loop_and_a_run_returning_many_names_stay_whole(monkeypatch):
    """An innermost loop's body (straight-line scalar code, a fused nest) is not cut into a
    call per iteration, and a run that would return more than MAX_RETURNS names stays in the
    function: both cost Numba more than the cut saves."""
    monkeypatch.setattr(split, "MIN_PART", 1)
    monkeypatch.setattr(split, "SMALL_LOOP", 1)
    new, parts, _ = split.split_function(ELEMENTWISE, "e", split_lines=3, part_lines=1)
    fns = {fn.name: fn for fn in ast.parse(new).body if isinstance(fn, ast.FunctionDef)}
    assert all("for i in range" not in ast.unparse(fns[p]) or "out[i]" in ast.unparse(fns[p])
               for p in parts)
    assert not any(isinstance(n, ast.For) and "_part" in ast.unparse(n)
                   for n in ast.walk(fns["e"]))  # no call of a part per iteration
    many = "def m(x):\n" + "".join(f"    v{k} = x * {k}.0\n" for k in range(30)) + (
        "    return " + " + ".join(f"v{k}" for k in range(30)) + "\n")
    monkeypatch.setattr(split, "MAX_RETURNS", 5)  # runs of 10 lines return 10 names each
    new, parts, _ = split.split_function(many, "m", split_lines=3, part_lines=10)
    assert not parts
    x = np.array([0.5, 1.5])
    np.testing.assert_array_equal(_run_named(new, "m", x), _run_named(many, "m", x))
    monkeypatch.setattr(split, "MAX_RETURNS", 24)
    _, parts, _ = split.split_function(many, "m", split_lines=3, part_lines=10)
    assert parts


def _run_named(source, name, *args):
    namespace = {"np": np}
    exec(compile(source, "<split>", "exec"), namespace)  # noqa: S102 -- the cut module
    return namespace[name](*args)


def timeloop(u, w, nt):
    """A stencil time loop (its values taped), a branch on a computed value and reductions:
    long enough to be cut with the limits lowered."""
    total = 0.0
    for t in range(nt):
        un = u.copy()
        u[1:-1] = un[1:-1] + 0.1 * (un[2:] - 2.0 * un[1:-1] + un[:-2]) * w[1:-1]
        u[0] = u[1] * 0.5
        v = np.tanh(u) * w
        if np.sum(v) > 0.0:
            total = total + np.sum(v * v)
        else:
            total = total - np.sum(np.exp(0.1 * v))
        total = total + np.max(u) * 0.01
    s = np.sum(np.sin(u) * w) + total
    r = np.sqrt(np.sum(u * u) + 1.0)
    return s * r + np.sum(np.cumsum(w) * u)


def test_cut_gradient_compiled(monkeypatch):
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    monkeypatch.setattr(split, "SPLIT_LINES", 40)
    monkeypatch.setattr(split, "PART_LINES", 80)
    monkeypatch.setattr(split, "MIN_PART", 20)
    monkeypatch.setattr(split, "SMALL_LOOP", 20)
    rng = np.random.default_rng(3)
    u0, w0 = rng.normal(size=12), rng.uniform(0.5, 1.5, size=12)
    nt = 4

    def loss(u, w):
        return timeloop(u.copy(), w, nt)

    g = jitgrad.grad(loss, wrt=(0, 1))
    gu, gw = g(u0, w0)
    source = g.source(u0, w0)
    assert source.count("_part") >= 6 and "_part4(" in source
    assert "# -- forward pass" in g.source("forward", u0, w0)
    assert "# -- adjoint pass" in g.source("adjoint", u0, w0)

    def jloss(u, w):
        total = 0.0
        for _ in range(nt):
            un = u
            u = u.at[1:-1].set(un[1:-1] + 0.1 * (un[2:] - 2.0 * un[1:-1] + un[:-2]) * w[1:-1])
            u = u.at[0].set(u[1] * 0.5)
            v = jnp.tanh(u) * w
            total = jnp.where(jnp.sum(v) > 0.0, total + jnp.sum(v * v),
                              total - jnp.sum(jnp.exp(0.1 * v)))
            total = total + jnp.max(u) * 0.01
        s = jnp.sum(jnp.sin(u) * w) + total
        r = jnp.sqrt(jnp.sum(u * u) + 1.0)
        return s * r + jnp.sum(jnp.cumsum(w) * u)

    ju, jw = jax.grad(jloss, argnums=(0, 1))(jnp.asarray(u0), jnp.asarray(w0))
    np.testing.assert_allclose(gu, np.asarray(ju), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, np.asarray(jw), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gu, numeric_grad(loss, (u0, w0), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gw, numeric_grad(loss, (u0, w0), 1), rtol=1e-6, atol=1e-7)
