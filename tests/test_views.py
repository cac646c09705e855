"""Writing through views (issue #25 item 4), compiled as users run it.

Every function of ``views_fns`` is checked for its value against plain Python, its gradient
against central finite differences, and its arguments left unmodified; where the same
computation written into the array itself exists (``*_direct``), jitgrad's gradient of the
view form is checked against the tape's of that form (the tape refuses writes through views).
What stays refused is refused with a message naming the construct and what to write instead.
"""

import numpy as np
import pytest
import views_fns as F
from corpus import N, U, case
from corpus_check import (
    call_checked,
    case_params,
    check_value_and_grad,
    copied,
    value_and_grad_fn,
)

import jitgrad
from jitgrad import tape

CASES = [
    case(F.row_filled, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_of_copy_filled, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_written_in_loop, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_plus_equals, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_times_equals, N(3, 4), N(), wrt=(0, 1)),
    case(F.segment_zeroed, N(4)),
    case(F.segment_written_in_loop, N(5)),
    case(F.view_of_slice_filled, N(4)),
    case(F.view_of_view, N(5)),
    case(F.transposed_writes, N(3, 4), N(4), wrt=(0, 1)),
    case(F.strided_writes, N(5)),
    case(F.newaxis_writes, N(4)),
    case(F.view_read_after_write, N(4)),
    case(F.loop_reads_view_of_written_array, N(3)),
    case(F.kernel_on_rows, N(3, 4), N(4), wrt=(0, 1)),
    case(F.rows_in_loop, N(3, 4), N(4), wrt=(0, 1)),
    case(F.written_on_branch, N(3, 4), U(0.2, 1.0, 4), wrt=(0, 1)),
    case(F.written_on_branch, N(3, 4), U(-1.0, -0.2, 4), wrt=(0, 1)),
    case(F.written_in_while, N(3, 4), N(4), wrt=(0, 1)),
    case(F.filled_row, N(3, 4), N(), wrt=(0, 1)),
    case(F.heat_rows, N(6), U(0.1, 0.3), wrt=(0, 1)),
    case(F.leapfrog, N(3), N(3), U(0.05, 0.2), wrt=(0, 1, 2)),
    case(F.out_into_row, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_of_unnamed_array, N(4)),
    case(F.rows_at_negative_indices, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_per_outer_iteration, N(3, 4), N(4), wrt=(0, 1)),
    case(F.view_of_array_rebound_in_loop, N(4)),
    case(F.column_written_in_loop, N(3, 4), N(4), wrt=(0, 1)),
    case(F.alias_of_view_written, N(3, 4), N(4), wrt=(0, 1)),
    case(F.view_read_after_writes_into_array, N(3, 4), N(4), wrt=(0, 1)),
    case(F.branch_in_loop_over_row, N(3, 4), N(4), wrt=(0, 1)),
    case(F.strided_view_in_loop, N(5)),
    case(F.reversed_view_written, N(4)),
    case(F.transpose_rows_in_loop, N(3, 4), N(4), wrt=(0, 1)),
    case(F.row_in_nested_loops, N(3, 4), N(4), wrt=(0, 1)),
]

DIRECT = ["row_filled", "row_written_in_loop", "row_plus_equals", "segment_written_in_loop",
          "transposed_writes", "strided_writes", "heat_rows", "leapfrog"]


@pytest.mark.parametrize("case", case_params(CASES))
def test_value_and_grad(case):
    for idx in range(len(case.points)):
        check_value_and_grad(case, idx)


@pytest.mark.parametrize("name", DIRECT)
def test_tape_of_the_direct_form_agrees(name):
    c = next(c for c in CASES if c.name == name)
    direct = getattr(F, name + "_direct")
    for idx in range(len(c.points)):
        _, grads = call_checked(value_and_grad_fn(c, c.wrt), c, idx)
        _, tape_grads = tape.value_and_grad(direct, wrt=c.wrt)(*copied(c.points[idx]))
        for g, t in zip(grads, tape_grads):
            np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-12)


def test_write_through_view_of_argument_leaves_caller_alone():
    Ua, x = np.arange(12.0).reshape(3, 4), np.array([0.1, 0.2, 0.3, 0.4])
    before = Ua.copy()
    v, (gU, _) = jitgrad.value_and_grad(F.row_filled, wrt=(0, 1))(Ua, x)
    np.testing.assert_array_equal(Ua, before)
    assert v == pytest.approx(F.row_filled(before.copy(), x))
    want = 2.0 * before
    want[0] = 0.0  # row 0 is overwritten before it is read
    np.testing.assert_allclose(gU, want)


def test_a_loop_over_a_row_writes_the_array_not_a_copy():
    """The write through ``u`` is a write into ``U[1, j]``: no copy of the row per write."""
    grad = jitgrad.grad(F.row_written_in_loop, wrt=(0, 1))
    grad(np.ones((3, 4)), np.ones(4))
    text = grad.source(np.ones((3, 4)), np.ones(4))
    assert "U_1[1, " in text, text


def reshape_written(x):
    y = x * 2.0
    u = y.reshape(3, 1)
    u[0, 0] = 5.0
    return np.sum(y)


def test_a_write_through_a_reshape_leaves_its_array_unreadable():
    """NumPy may copy in a reshape (a non-contiguous array): the reshape is written as a copy
    of it, and its array, which then may or may not show the write, is not read again."""
    with pytest.raises(jitgrad.UnsupportedError, match="`y` shares memory with an array "
                       "written in place after it was made"):
        jitgrad.grad(reshape_written)(np.ones(3))


def view_merged_then_written(x, s):
    y = x * 2.0
    u = y[1:] if s > 0 else y[:2]  # which part of y is known only at run time
    u[0] = s
    return np.sum(y)


def test_write_through_a_view_merged_after_a_branch_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="writing into `u`, a view of another "
                       "array that jitgrad cannot follow"):
        jitgrad.grad(view_merged_then_written)(np.ones(3), 1.0)


def view_then_array_rebound(U, x):
    u = U[0]
    for i in range(3):
        u[i] = x[i]
        U = U * 2.0  # from the second iteration on, u is a view of the first U, not this one
    return np.sum(U) + np.sum(u * u)


def test_a_view_whose_array_a_loop_rebinds_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="shares memory with an array written "
                       "in place"):
        jitgrad.grad(view_then_array_rebound)(np.ones((3, 4)), np.ones(4))


def view_then_array_rebound_in_outer_loop(U, x):
    u = U[0]
    for i in range(3):
        for j in range(2):
            u[j] = u[j] * x[j] + x[i]  # the inner loop writes through u into the first U
        U = U * 2.0
    return np.sum(U) + np.sum(u * u)


def test_a_view_whose_array_an_outer_loop_rebinds_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="shares memory with an array written "
                       "in place"):
        jitgrad.grad(view_then_array_rebound_in_outer_loop)(np.ones((3, 4)), np.ones(4))
