"""Loops recomputed in reverse (`jitgrad.recompute`): the gradient is the taped one, the
forward pass keeps no tape, and loops that are not independent keep theirs."""

import pytest
import recompute_fns as F
from corpus import N, U, case
from corpus_check import case_params, check_value_and_grad

import jitgrad
from jitgrad import recompute

RECOMPUTED = [
    case(F.rowwise_logsumexp, N(6, 4), N(4)),
    case(F.pairwise_energy, N(5, 2), U(0.5, 1.0)),
    case(F.whole_array_work, N(5, 3), N(3)),
]
TAPED = [
    (case(F.reads_last_iteration, N(5, 3), N()), "as the previous iteration left it"),
    (case(F.carried_state, N(4, 3, s=0.5), U(0.2, 0.8)), "is carried from one iteration"),
    (case(F.partial_fill, N(5, 3), N()), "as the previous iteration left it"),
    (case(F.accumulates_into_array, N(5, 3), N(3)), "as the previous iteration left it"),
    (case(F.early_exit, N(5, 3), N()), "it can exit early"),
]


def main_loop_note(c):
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    return [ln.strip() for ln in grad.source("adjoint").splitlines() if "# jitgrad:" in ln]


@pytest.mark.parametrize("c", case_params(RECOMPUTED))
def test_recomputed_loops_differentiate(c):
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)
    assert any("recomputed in reverse" in n for n in main_loop_note(c)), main_loop_note(c)


@pytest.mark.parametrize(("c", "why"), [pytest.param(c, w, id=c.name) for c, w in TAPED])
def test_dependent_loops_are_taped(c, why):
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)
    notes = main_loop_note(c)
    assert not any("recomputed" in n for n in notes), notes
    assert any(why in n for n in notes), notes


@pytest.mark.parametrize("c", case_params(RECOMPUTED))
def test_recomputing_gives_the_taped_gradient(c, monkeypatch):
    """The same gradient, to rounding, with recomputation switched off."""
    _, on = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*c.points[0])
    monkeypatch.setattr(recompute, "ENABLED", False)
    _, off = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*c.points[0])
    for a, b in zip(on, off):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_the_forward_pass_keeps_no_tape_for_a_recomputed_loop():
    c = RECOMPUTED[0]
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    forward = grad.source().split("def rowwise_logsumexp_adjoint")[0]
    assert ".append(" not in forward and "_tape_" not in forward
