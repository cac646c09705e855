"""Loops recomputed in reverse or fused into the forward pass (`jitgrad.transforms.recompute`): the
gradient is the taped one, no tape grows across iterations, and loops that are not independent
keep theirs."""

import numpy as np
import pytest
import recompute_fns as F
from corpus import N, U, case
from corpus_check import (
    case_params,
    check_tape_agrees,
    check_value_and_grad,
    check_value_and_grad_result,
)

import jitgrad
from jitgrad import GradFunction, tape

RECOMPUTED = [
    case(F.rowwise_logsumexp, N(6, 4), N(4)),
    case(F.pairwise_energy, N(5, 2), U(0.5, 1.0)),
    case(F.whole_array_work, N(5, 3), N(3)),
    case(F.two_sums, N(4, 3), N()),
    case(F.writes_an_output_row, N(4, 3), N()),
]
FUSED = [
    case(F.log_of_sum, N(4, 3, s=0.5), N(3, s=0.5)),
    case(F.sum_in_a_branch, N(5, 3), N()),
    case(F.triangular_work, N(6), N()),
    case(F.log_of_row_sums, N(4, 3, s=0.5), N(3, s=0.5)),
    case(F.conv_loss, N(3, 2), N(5, 5), N(3, 4)),
]
ONE_SEED = {"rowwise_logsumexp", "pairwise_energy", "whole_array_work"}  # fused as well
TAPED = [
    (case(F.reads_last_iteration, N(5, 3), N()), "as the previous iteration left it"),
    (case(F.carried_state, N(4, 3, s=0.5), U(0.2, 0.8)), "is carried from one iteration"),
    (case(F.partial_fill, N(5, 3), N()), "as the previous iteration left it"),
    (case(F.accumulates_into_array, N(5, 3), N(3)), "as the previous iteration left it"),
    (case(F.early_exit, N(5, 3), N()), "it can exit early"),
]


def value_and_grad(c, **off):
    """value_and_grad of the case, with the loop strategies named in ``off`` switched off."""
    return GradFunction(c.fn, c.wrt, with_value=True, strategies={k: False for k in off})


def main_loop_note(c, **off):
    grad = value_and_grad(c, **off)
    grad(*c.points[0])
    return [ln.strip() for ln in grad.source().splitlines() if "# jitgrad:" in ln]


@pytest.mark.parametrize("c", case_params(RECOMPUTED))
def test_recomputed_loops_differentiate(c):
    off = {"fuse": False} if c.name in ONE_SEED else {}  # (these would be fused: see below)
    grad = value_and_grad(c, **off)
    for idx in range(len(c.points)):
        check_value_and_grad_result(c, idx, grad(*c.points[idx]))
    notes = main_loop_note(c, **off)
    assert any("recomputed in reverse" in n for n in notes), notes


@pytest.mark.parametrize("c", case_params(FUSED + RECOMPUTED[:3]))
def test_fused_loops_differentiate(c):
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)
    assert any("fused" in n for n in main_loop_note(c)), main_loop_note(c)


@pytest.mark.parametrize("c", case_params(FUSED + RECOMPUTED))
@pytest.mark.parametrize("switch", ["fuse", "recompute"])
def test_fusing_and_recomputing_give_the_taped_gradient(c, switch):
    """The same value and gradient, to rounding, with fusion (then recomputation) off."""
    value_on, on = value_and_grad(c)(*c.points[0])
    value_off, off = value_and_grad(c, **{switch: False})(*c.points[0])
    assert value_on == pytest.approx(value_off, rel=1e-13)
    for a, b in zip(on, off):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(("c", "why"), [pytest.param(c, w, id=c.name) for c, w in TAPED])
def test_dependent_loops_are_taped(c, why):
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)
    notes = main_loop_note(c)
    assert not any("recomputed" in n for n in notes), notes
    assert any(why in n for n in notes), notes


def test_the_forward_pass_keeps_no_tape_for_a_recomputed_loop():
    c = RECOMPUTED[0]
    grad = value_and_grad(c, fuse=False)
    grad(*c.points[0])
    forward = grad.source("forward")
    assert ".append(" not in forward and "_tape_" not in forward


def test_a_fused_loop_keeps_one_iteration_and_the_adjoint_only_scales():
    """The stacks are sized by a counting pass for the largest iteration (pushes are bare
    stores), and the adjoint pass no longer loops over the rows."""
    c = FUSED[3]  # log_of_row_sums: an inner loop pushes exp(...) once per element of the row
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    forward, adjoint = grad.source("forward"), grad.source("adjoint")
    assert "_most" in forward and "reserve" not in forward and "_rt.grow" not in forward
    assert "range(_trips" not in adjoint


def test_the_counting_pass_is_closed_form_when_every_iteration_counts_the_same():
    """Counting the pushes costs Numba compile time for every line (issue #24): an inner loop
    that only counts becomes its trip count, and when every iteration counts the same the
    count runs once, not in a loop over the iterations; when the count depends on the
    iteration (row i pushes i + 1 values) the loop over the iterations stays. Either way
    the gradient is the tape's and the differences', also for no iterations at all."""
    def counting(grad):
        forward = grad.source("forward")
        return "\n".join(line for line in forward[:forward.index("_tape_")].splitlines()
                         if not line.lstrip().startswith("#"))

    c = FUSED[3]  # log_of_row_sums: every row pushes x.shape[1] values
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    assert "for " not in counting(grad) and "_t1 if _t1 > 0 else 0" in counting(grad)
    tri = case(F.triangular_pushes, N(5, s=0.5), N(5, s=0.5))
    for p in range(len(tri.points)):
        check_value_and_grad(tri, p)
    grad = jitgrad.value_and_grad(tri.fn, wrt=tri.wrt)
    grad(*tri.points[0])
    assert "for i_1 in range(" in counting(grad)
    w = np.linspace(0.1, 0.5, 5)
    for fn, args in ((F.triangular_pushes, (np.zeros(0), w)),
                     (F.rowwise_logsumexp, (np.zeros((0, 5)), w))):
        value, grads = jitgrad.value_and_grad(fn, wrt=(0, 1))(*args)
        t_value, t_grads = tape.value_and_grad(fn, wrt=(0, 1))(*args)
        assert value == t_value or (np.isnan(value) and np.isnan(t_value))
        for got, want in zip(grads, t_grads):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [F.fused_then_earlier_read, F.scaled_fused_then_earlier_read])
def test_a_fused_gradient_reaching_an_adjoint_at_zero_is_taken_not_added(fn):
    """Where the fused loop's gradient is the first to reach an adjoint, the adjoint takes it
    (``_b_w = _g_w``, or the seed times it) instead of a zero array and a loop nest adding the
    seed times it (issue #24: fewer lines to compile; one pass less over each gradient). The
    read of ``w`` before the loop then adds into that array in place: checked against central
    differences and the tape at several points, each call on fresh arrays."""
    c = case(fn, N(4, s=0.5), N(5, s=0.5), n=3)
    for idx in range(len(c.points)):
        check_value_and_grad(c, idx)
        check_tape_agrees(c, idx)
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    first = grad(*c.points[0])[1]
    again = grad(*c.points[0])[1]
    assert all(a is not b and np.array_equal(a, b) for a, b in zip(first, again))
    adjoint = grad.source("adjoint")
    assert "_rt.zeros(" not in adjoint, adjoint
    if fn is F.fused_then_earlier_read:
        assert "_b_w = _g_w" in adjoint and "_b_x = _g_x" in adjoint, adjoint


def test_a_fused_loop_does_not_compute_again_what_its_iteration_holds():
    """The adjoint of a fused iteration runs right after it: the scalars `saving` would
    recompute instead of taping are still there, and computing them again is only code for
    Numba to compile (issue #24: the reprojection gradient lost 42 of its 202 lines)."""
    from bench import problems

    args = problems.make_reproj(3, 10, 40)
    grad = jitgrad.grad(problems.reproj_loss, wrt=(0, 1))
    got = grad(*args)
    code = [line.strip() for line in grad.source("forward").splitlines()
            if not line.lstrip().startswith("#")]
    assert code.count("u0 = y0 / y2") == 1 and code.count("c = cam_idx[o]") == 1
    want = tape.grad(problems.reproj_loss, wrt=(0, 1))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_a_vector_read_back_entry_by_entry_is_read_through_its_stack():
    """ADBench's GMM pushes the centred point (a vector) per component and reads it back
    entry by entry in the adjoint: read through the stack at its offset, not through a view
    of the stack (a reference Numba counts, two atomic operations per pop; issue #26)."""
    from fd import numeric_grad

    from bench import problems

    args = problems.make_adbench_gmm(15, 3, 2)
    grad = jitgrad.grad(problems.gmm_adbench, wrt=(0, 1, 2))
    got = grad(*args)
    source = grad.source()
    assert "_at_xc" in source and "_tape_xc_3[_n_xc_3:" not in source
    for k in range(3):
        np.testing.assert_allclose(got[k], numeric_grad(problems.gmm_adbench, args, k),
                                   rtol=1e-6, atol=1e-8)


def test_a_value_pushed_and_popped_back_in_one_iteration_keeps_no_stack():
    """Fused, an iteration pushes values that its own adjoint pops a few lines later into the
    same names: no stack, no counting pass, and still the gradient of central differences
    (`recompute.round_trips`)."""
    c = FUSED[2]  # triangular_work
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    for idx, args in enumerate(c.points):  # (central differences and the tape)
        check_value_and_grad_result(c, idx, grad(*args))
    forward = grad.source("forward")
    assert "fused" in forward and "_tape" not in forward and "_most" not in forward


@pytest.mark.parametrize("c", case_params(FUSED + RECOMPUTED))
def test_loop_adjoints_run_forwards_only_when_their_iterations_commute(c):
    """An inner loop's adjoint whose iterations commute runs forwards (`recompute.commutes`),
    popping by position: the same gradient to rounding as running it backwards."""
    _, forwards = value_and_grad(c)(*c.points[0])
    _, backwards = value_and_grad(c, ascending=False)(*c.points[0])
    for a, b in zip(forwards, backwards):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_an_inner_sum_runs_its_adjoint_forwards():
    c = FUSED[3]  # log_of_row_sums: an inner loop summing exp(...) of a row
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    adjoint_part = grad.source().split("# jitgrad: fused")[1]
    assert "for _k" in adjoint_part and "while _k" not in adjoint_part


def test_an_inner_sum_whose_seed_is_known_before_it_is_fused_too():
    """Inside a fused loop, an inner loop that feeds the same sum gets its seed before it runs:
    it is fused as well (`transforms.fuse_inner`), no tape, one loop nest fewer; the window's
    sum in `conv_loss`, whose seed 2 r needs its result, keeps its adjoint loop. Gradients
    against central differences and JAX's (float64)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from fd import check_against

    def conv_jax(k, img, t):
        n, m = t.shape
        s = sum(k[a, b] * img[a:a + n, b:b + m] for a in range(k.shape[0])
                for b in range(k.shape[1]))
        return jnp.sum((s - t) ** 2)

    c = FUSED[4]  # conv_loss
    grad = jitgrad.value_and_grad(c.fn, wrt=(0, 1))
    args = c.points[0]
    value, grads = grad(*args)
    want = jax.grad(conv_jax, argnums=(0, 1))(*args)
    check_against(c.fn, args, (0, 1), value, grads, want)
    source = grad.source()
    assert source.count("whose adjoint is known before it") == 1, source
    assert "_tape" not in source and "_most" not in source
    assert source.count("for _k") == 2  # the window's adjoint: over a, over b
    for c in (FUSED[0], FUSED[1]):  # log_of_sum, sum_in_a_branch: the inner loop fused
        grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
        check_value_and_grad_result(c, 0, grad(*c.points[0]))
        assert "whose adjoint is known before it" in grad.source()
        assert "_tape" not in grad.source()
    c = FUSED[3]  # log_of_row_sums: the seed 1 / s is known only after the inner loop
    grad = jitgrad.value_and_grad(c.fn, wrt=c.wrt)
    grad(*c.points[0])
    assert "whose adjoint is known before it" not in grad.source()


def test_a_stack_grown_keeps_its_items():
    """`runtime_loops.reserve` and ``grow`` (a flat stack made longer) copy the items held
    into the longer stack by a loop, not by Numba's slice assignment (whose shape-mismatch
    message cost seconds to compile), and keep them all."""
    from jitgrad.backend.numba.runtime_loops import grow, reserve

    tape = np.arange(5.0)
    same = reserve(tape, 3, 2)
    assert same is tape
    longer = reserve(tape, 3, 4)
    assert longer.shape[0] >= 7 and np.array_equal(longer[:3], tape[:3])
    grown = grow(tape)
    assert grown.shape[0] == 16 and np.array_equal(grown[:5], tape)
