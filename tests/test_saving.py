"""What the forward pass saves (`saving.Saver`): snapshots of work arrays, counters rebuilt
instead of taped, flat stacks of arrays, arrays read for their shape alone made empty. Each function's value and gradient are checked
against plain Python and central differences at several points, and the gradient against the
one with the new rule switched off; the generated source shows which rule applied."""

import numpy as np
import pytest
import saving_fns as F
from corpus import N, U, case
from corpus_check import case_params, check_value_and_grad

import jitgrad
from jitgrad.transforms import saving

CASES = [
    case(F.packed_triangle, N(3, 4), N(2, 4), N(2, 6, s=0.3), wrt=(1, 2)),
    case(F.counter_steps, N(5), N(7)),
    case(F.counter_with_break, N(5), N(6)),
    case(F.reads_not_over_length, N(4, 3), N(3)),
    case(F.snapshot_in_branch, N(4, 3), N(3)),
    case(F.recurrence_in_place, N(6, 3, s=0.5), U(0.2, 0.9, 3)),
    case(F.recurrence_with_counter, N(8), U(0.2, 0.9, 5)),
]
SNAPSHOT = {"packed_triangle", "snapshot_in_branch"}  # reads from a saved copy
COUNTED = {"packed_triangle": "idx", "counter_steps": "pos",  # rebuilt, not taped
           "recurrence_with_counter": "idx"}
FLAT = SNAPSHOT | {"recurrence_in_place"}  # arrays saved onto one float array


def source(c):
    g = jitgrad.grad(c.fn, wrt=c.wrt)
    g(*c.points[0])
    return g.source()


@pytest.mark.parametrize("c", case_params(CASES))
def test_value_and_gradient(c):
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)


@pytest.mark.parametrize("c", case_params(CASES))
def test_which_rule_applied(c):
    text = source(c)
    assert ("_size = int(" in text) == (c.name in FLAT), text
    for name in ("idx", "pos"):
        assert (f"{name} = {name} - _added" in text) == (COUNTED.get(c.name) == name), text
    if c.name == "counter_with_break":
        assert "_tape_idx" in text


@pytest.mark.parametrize("c", case_params(CASES))
@pytest.mark.parametrize("rule", ["snapshot", "counted"])
def test_the_same_gradient_without_the_rule(c, rule, monkeypatch):
    _, on = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*c.points[0])
    monkeypatch.setattr(saving.Saver, rule, lambda self, *a: None)
    _, off = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*c.points[0])
    for a, b in zip(on, off):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_a_counter_in_a_checkpointed_recurrence():
    """The replay of each segment leaves the counter at the segment's end, which is where the
    reverse iterations rebuild it from."""
    c = next(c for c in CASES if c.name == "recurrence_with_counter")
    capped = jitgrad.value_and_grad(c.fn, wrt=c.wrt, memory_cap=64)
    for point in c.points:
        value, grads = capped(*point)
        want_value, want = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*point)
        assert value == pytest.approx(want_value, rel=1e-14)
        for a, b in zip(grads, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    text = capped.source()
    assert "_ck_" in text and "idx = idx - _added" in text


def test_an_array_read_for_its_shape_is_made_empty_not_pushed(monkeypatch):
    """``np.sum`` over two axes of a window times weights, in a recurrence: the adjoint reads
    the product and the partial sum only for their shapes, so they are made empty there
    (`Saver.rebuild_shaped`), and only ``h`` and the full sum are pushed. Compiled: value and
    gradient against plain Python and central differences; as plain Python, the gradient is
    the one with the rule switched off."""
    from jitgrad.backend.numba.compile import DISABLE_JIT

    c = case(F.window_sums, N(6, 3, s=0.5), N(2, 3, s=0.5))
    check_value_and_grad(c, 0)
    text = jitgrad.grad(c.fn).source(*c.points[0])  # (built, not compiled again)
    assert text.count(".append(") == 2, text
    assert "= _rt.empty((_dim, _dim, _dim_1))" in text, text
    if DISABLE_JIT:
        _, on = jitgrad.value_and_grad(c.fn)(*c.points[0])
        monkeypatch.setattr(saving.Saver, "sizes_named", lambda self, v: False)
        _, off = jitgrad.value_and_grad(c.fn)(*c.points[0])
        assert "_rt.empty((_dim" not in jitgrad.grad(c.fn).source(*c.points[0])
        for a, b in zip(on, off):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
