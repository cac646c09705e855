"""Checkpointed loops (`jitgrad.transforms.checkpoint`): with a memory cap, a recurrence's tape holds one
segment; the gradient is the taped one, and it stays within the cap."""

import math
import tracemalloc

import checkpoint_fns as F
import corpus
import numpy as np
import pytest
from corpus import N, U, case
from corpus_check import check_value_and_grad_result, copied

import jitgrad

CHECKPOINTED = [
    case(F.tanh_recurrence, N(40, s=0.5), U(0.3, 0.9)),
    case(F.rnn_loss, U(0.5, 0.9), N(40, s=0.5)),
    case(F.nested_state, N(12, 3, s=0.5), U(0.3, 0.9)),
    case(F.branchy_recurrence, N(30, s=0.5), U(0.3, 0.9)),
    case(F.vector_state, N(3, 3, s=0.4), N(15, 3, s=0.5)),
    case(F.leapfrog, U(0.2, 1.0), U(-0.5, 0.5), U(0.5, 2.0), U(0.01, 0.05)),
    case(F.strided, N(41, s=0.5), U(0.3, 0.9)),
]
KEPT = [
    (case(F.exits_early, N(30, s=0.5), U(0.3, 0.9)), "it can exit early"),
    (case(F.state_written_in_place, N(20, 3, s=0.5), U(0.3, 0.9)), "in place"),
    (case(F.reads_an_array_written_after, N(20, s=0.5), U(0.3, 0.9)), "written after the loop"),
]
TINY = 64  # bytes: a segment of 4 values, so every loop above runs in many segments


def notes(grad, point):
    return [ln.strip() for ln in grad.source(*point).splitlines() if "# jitgrad:" in ln]


@pytest.mark.parametrize("c", [pytest.param(c, id=c.name) for c in CHECKPOINTED])
def test_checkpointed_gradient_is_the_taped_one(c):
    capped = jitgrad.value_and_grad(c.fn, wrt=c.wrt, memory_cap=TINY)
    for idx in range(len(c.points)):
        out = capped(*copied(c.points[idx]))
        check_value_and_grad_result(c, idx, out)  # against plain Python and differences
        value, grads = jitgrad.value_and_grad(c.fn, wrt=c.wrt)(*copied(c.points[idx]))
        assert out[0] == pytest.approx(value, rel=1e-13, abs=1e-13)
        for a, b in zip(out[1], grads):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert any("checkpointed" in n for n in notes(capped, c.points[0])), notes(capped,
                                                                               c.points[0])


@pytest.mark.parametrize(("c", "why"), [pytest.param(c, w, id=c.name) for c, w in KEPT])
def test_loops_that_cannot_be_checkpointed_keep_their_tape(c, why):
    capped = jitgrad.value_and_grad(c.fn, wrt=c.wrt, memory_cap=TINY)
    check_value_and_grad_result(c, 0, capped(*copied(c.points[0])))
    found = notes(capped, c.points[0])
    assert any("not checkpointed" in n and why in n for n in found), found


# Fused loops (their adjoint runs inside the forward pass) next to a cap: the checkpointing
# pass once crashed reading the fused adjoint in the forward body (AttributeError).
FUSED_UNDER_A_CAP = [c for c in corpus.ALL_CASES
                     if c.name in ("pairwise_distances", "nested_break", "lower_tri_sum")]


@pytest.mark.parametrize("c", [pytest.param(c, id=c.name) for c in FUSED_UNDER_A_CAP])
def test_a_cap_with_fused_loops(c):
    capped = jitgrad.value_and_grad(c.fn, wrt=c.wrt, memory_cap=TINY)
    for idx in range(len(c.points)):
        check_value_and_grad_result(c, idx, capped(*copied(c.points[idx])))


def test_the_tape_stays_within_the_cap():
    """10^5 steps: the uncapped tape holds 0.8 MB; capped at 64 kB, all the gradient call
    allocates beyond its result (the gradient array) is under the cap."""
    n, cap = 100_000, 64 * 1024
    x = np.random.default_rng(0).normal(size=n) * 0.5
    free = jitgrad.value_and_grad(F.tanh_recurrence, wrt=(0, 1))
    capped = jitgrad.value_and_grad(F.tanh_recurrence, wrt=(0, 1), memory_cap=cap)
    peaks = []
    for g in (free, capped):
        g(x, 0.7)  # compiled before measuring
        tracemalloc.start()
        _, (dx, _) = g(x, 0.7)
        peaks.append(tracemalloc.get_traced_memory()[1] - dx.nbytes)
        tracemalloc.stop()
    assert peaks[0] > 8 * n  # the tape: one float per step
    assert peaks[1] < cap, peaks


@pytest.mark.parametrize("bad", [0, 10, -5, 1.5, "1MB", True])
def test_a_memory_cap_must_be_a_number_of_bytes(bad):
    with pytest.raises(jitgrad.SignatureError, match="memory_cap"):
        jitgrad.grad(F.tanh_recurrence, memory_cap=bad)


def test_the_cap_comes_from_the_environment_too(monkeypatch):
    monkeypatch.setenv("JITGRAD_MEMORY_CAP", "4096")
    g = jitgrad.value_and_grad(F.rnn_loss, wrt=0)
    x = np.linspace(-1, 1, 30)
    assert any("memory cap 4096" in n for n in notes(g, (0.7, x)))
    assert math.isfinite(g(0.7, x)[1])
