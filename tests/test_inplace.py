"""In-place writes, aliases and callees that write into their arguments (issue #10).

Every function of ``inplace_fns`` is compiled and checked for its value against plain Python,
its gradient against central finite differences, and its arguments left unmodified.
"""

import re

import inplace_fns as F
import numpy as np
import pytest
from corpus import N, U, case
from corpus_check import case_params, check_tape_agrees, check_value_and_grad, copied

import jitgrad

INCREMENTS = [
    case(F.increments_in_a_loop, N(4), N()),
    case(F.increment_from_the_left_and_of_itself, N(4), U(0.2, 0.6)),
    case(F.triangle_by_columns, N(6, s=0.3), N(4)),
    case(F.fixed_element_written_in_the_loop, N(4), N(4, s=0.5)),
    case(F.empty_inner_loops_past_the_end, N(4)),
    case(F.incremented_value_read_again, N(4), N()),
]

CASES = [
    case(F.exp_then_halve, N(3)),
    case(F.normalise_slice, U(0.5, 2.0, 4)),
    case(F.callee_fills_caller_array, N(3)),
    case(F.times_one_then_update, N(3)),
    case(F.scale_in_place, N(3), N()),
    case(F.outer_times_one, N(3), N(4, 3)),
    case(F.alias_before_loop, N(3)),
    case(F.alias_of_argument_in_loop, N(3)),
    case(F.outer_of_overwritten, N(3), N()),
    case(F.output_argument_kernel, N(3), N(3)),
    case(F.kernel_in_loop, N(3), N(3)),
    case(F.callee_updates_argument, N(3, 2), N()),
    case(F.write_on_one_branch, N(3), U(0.5, 1.5)),
    case(F.write_on_one_branch, N(3), U(-1.5, -0.5)),
    case(F.callee_writes_on_branch, N(3), U(0.5, 1.5)),
    case(F.callee_writes_on_branch, N(3), U(-1.5, -0.5)),
    case(F.slice_writes, N(3)),
    case(F.column_and_row_writes, N(4, 3), N(4)),
    case(F.self_shift, N(4)),
    case(F.reassigned_after_write, N(3)),
    case(F.write_through_alias, N(3)),
    case(F.loop_reads_alias, N(3)),
    case(F.whole_array_writes, N(3), N(3)),
    case(F.ellipsis_row_write, N(3, 4), N(4)),
    case(F.kernel_feeds_carried_scalar, N(3), N()),
    case(F.callee_returns_sum_after_writes, N(3), N(3)),
    case(F.callee_called_twice, N(3)),
    case(F.writes_in_while, N(3), N()),
    case(F.whole_update_in_loop, N(3)),
    case(F.repeated_expression_written, N(3), N(2, 2)),
    case(F.alias_rebound_in_loop, N(3), U(0.1, 0.3)),
    case(F.mean_axis0_of_vector, N(3)),
    case(F.callee_reads_array_in_loop, N(4), N(3, 4)),
    case(F.alias_rebound_then_called, N(4), N(3), N(3, 4)),
    *INCREMENTS,
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_value_and_grad(case):
    for idx in range(len(case.points)):
        check_value_and_grad(case, idx)


@pytest.mark.parametrize("case", case_params(INCREMENTS))
def test_increments_agree_with_the_tape(case):
    check_tape_agrees(case, 0)


def test_an_increment_leaves_its_slot_and_a_fixed_element_sums_in_a_scalar():
    """``out[r] += L[idx] * x[c]``: the adjoint reads ``_b_out[r]`` and neither zeroes nor
    re-adds it; ``x[c]``'s adjoint is summed over the loop over ``r`` in a scalar and added
    once after it, only when that loop ran (``c`` past the end in `empty_inner_loops_past_the_end`
    never indexed anything)."""
    src = jitgrad.grad(F.triangle_by_columns, wrt=(0, 1)).source(np.ones(6), np.ones(4))
    adjoint = src[src.index("# -- adjoint pass"):]
    assert "_b_out[np.uint64(r)] = 0.0" not in adjoint
    assert "_b_out[np.uint64(r)] +=" not in adjoint
    loop, after = adjoint.split("_sum_b_x = _sum_b_x + ", 1)
    assert "_b_x[c]" not in loop.split("_sum_b_x = 0.0")[1]  # (c: a range index, no cast)
    ran = after.index("_ran = _trips > 0")
    assert after.index("if _ran:") > ran
    assert after.index("_b_x[c] += _sum_b_x") > after.index("if _ran:")


def test_a_name_read_in_a_written_index_is_not_carried_or_taped():
    """``y[i] += A[i, j] * x[j]`` in a loop over ``j`` rebinds ``y``, not ``i``: the inner
    loop once carried ``i`` as a value of its own and pushed it on a tape every iteration
    (n * m integers), 4 to 13 times the gradient's time in matvec, matmul and conv1d loops."""
    src = jitgrad.grad(F.matvec_in_place, wrt=(0, 1)).source(np.ones((3, 2)), np.ones(2))
    assert "_tape_" not in src and "i_1" not in src
    A, x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]]), np.array([0.3, -0.7])
    gA, gx = jitgrad.grad(F.matvec_in_place, wrt=(0, 1))(A, x)
    d = 1.0 - np.tanh(A @ x) ** 2
    np.testing.assert_allclose(gA, np.outer(d, x), rtol=1e-13)
    np.testing.assert_allclose(gx, A.T @ d, rtol=1e-13)


def test_issue_examples_exact():
    """The numbers quoted in issue #10, checked exactly."""
    g = jitgrad.grad(F.exp_then_halve)(np.array([0.2, 0.5, 0.9]))
    np.testing.assert_allclose(g, [1.0, 1.0, 1.0], rtol=1e-12)
    g = jitgrad.grad(F.normalise_slice)(np.array([0.3, -2.0, 1.5, 0.7]))
    np.testing.assert_allclose(g, [0, 2 / 3, 0.5777777777777777, 2 / 3], rtol=1e-12)
    v, g = jitgrad.value_and_grad(F.callee_fills_caller_array)(np.array([1.0, 2.0, 3.0]))
    assert v == 12.0
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])


def test_alias_of_argument_leaves_caller_array_alone():
    x = np.array([1.0, 2.0, 3.0])
    before = x.copy()
    v, g = jitgrad.value_and_grad(F.alias_of_argument_in_loop)(x)
    np.testing.assert_array_equal(x, before)
    assert v == F.alias_of_argument_in_loop(copied((before,))[0])
    np.testing.assert_allclose(g, 2 * (before + 2.0))


def test_saved_versions_have_their_own_names():
    """The adjoint reads p before and after `p /= 2` under two names."""
    grad = jitgrad.grad(F.exp_then_halve)
    np.testing.assert_allclose(grad(np.ones(3)), np.ones(3))  # d/dx sum(log(e^x / 2))
    saved = [p.name for p in grad.specialisations.last.gradient.adjoint.params]
    assert len(saved) == len(set(saved)), saved


def write_into_view(x):
    y = x * 2.0
    u = y[1:]
    u[0] = 5.0
    return np.sum(y)


def test_write_into_a_view_writes_into_its_array():
    """``u[0] = 5.0`` through ``u = y[1:]`` is ``y[1] = 5.0`` (issue #25; `test_views`)."""
    v, g = jitgrad.value_and_grad(write_into_view)(np.ones(3))
    assert v == 2.0 + 5.0 + 2.0
    np.testing.assert_array_equal(g, [2.0, 0.0, 2.0])


def merged_then_written(x, s):
    y = x * 2.0
    z = np.sin(x)
    w = y if s > 0 else z  # which array w names is known only at run time
    w[0] = s
    return np.sum(y * z) + np.sum(w)


def test_a_write_through_a_name_for_either_of_two_arrays_is_refused():
    with pytest.raises(jitgrad.UnsupportedError, match="`y` shares memory with an array "
                       "written in place"):
        jitgrad.grad(merged_then_written)(np.ones(3), 1.0)


def write_first_read_second(a, b, x):
    a[0] = 7.0
    return np.sum(b * x)


def test_an_argument_passed_twice_and_written_is_refused():
    """In Python b sees the write into a when both are the same array; jitgrad writes into a
    copy of a, so it refuses the call rather than give b's old values."""
    x, y = np.ones(3), np.array([1.0, 2.0, 3.0])
    grad = jitgrad.grad(write_first_read_second, wrt=2)
    np.testing.assert_array_equal(grad(x, x.copy(), y), [1.0, 1.0, 1.0])
    with pytest.raises(jitgrad.SignatureError, match="writes into its argument 'a', and another "
                       "argument \\('b'\\) shares its memory"):
        grad(x, x, y)
    with pytest.raises(jitgrad.SignatureError, match="shares its memory"):
        grad(x, x[::-1], y)  # a view of it
    np.testing.assert_array_equal(x, np.ones(3))


def test_an_adjoint_loop_reads_what_no_iteration_changes_once_before_it():
    """``out[r] += np.sin(x[c]) * x[r]`` over ``r``: the adjoint reads ``x[c]`` and takes its
    sine and cosine once per ``c``, before the loop over ``r`` and only if it runs (for ``c``
    past the end the loop is empty and ``x[c]`` is never read; `optimise.invariant_reads_hoisted`).
    ``x[r]`` and ``_b_out[r]`` change with ``r`` and stay in the loop. The gradient against
    central differences and the tape: `test_value_and_grad`, `test_increments_agree_with_the_tape`
    (`empty_inner_loops_past_the_end`)."""
    src = jitgrad.grad(F.empty_inner_loops_past_the_end).source(np.ones(4))
    code = "\n".join(line for line in src.splitlines() if not line.strip().startswith("#"))
    adjoint = code[code.index("_b_x = _rt.zeros"):]
    before, loop = adjoint.split("while _k_1 >= 0:", 1)
    guarded = before.split("if _runs:", 1)[1]
    for line in (" = x[c]", "np.sin(", "np.cos("):
        assert line in guarded, line
        assert line not in loop.split("_k_1 -= 1")[0], line
    assert "x[np.uint64(r)]" in loop and "_b_out[np.uint64(r)]" in loop


def stencil_with_region_writes(a, b):  # an NPBench-style stencil: every write is a region's
    a = a.copy()
    b = b.copy()
    for _ in range(2):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                               + a[1:-1, 2:])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2]
                               + b[1:-1, 2:])
    a[0] = b[1] * 2.0
    a += b * b
    b[:, 1:] += a[:, :-1]
    return np.sum(a * a) + np.sum(np.sin(b))


def _stencil_jax(a, b):
    import jax.numpy as jnp

    def smooth(x):
        return 0.2 * (x[1:-1, 1:-1] + x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])

    for _ in range(2):
        b = b.at[1:-1, 1:-1].set(smooth(a))
        a = a.at[1:-1, 1:-1].set(smooth(b))
    a = a.at[0].set(b[1] * 2.0)
    a = a + b * b
    b = b.at[:, 1:].add(a[:, :-1])
    return jnp.sum(a * a) + jnp.sum(jnp.sin(b))


def test_writes_into_regions_are_calls_and_differentiate():
    """Every write into a region of an array (a slice set or incremented, a row set, a whole
    array incremented, in the function and in its adjoint) is one call of the runtime's
    ``add_into`` / ``copy_into``: written inline, Numba compiles each in about two seconds,
    superlinear in their number (NPBench's stencils, issue #45). Compiled; the gradient
    against central differences and JAX."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from fd import numeric_grad

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    g = jitgrad.grad(stencil_with_region_writes, wrt=(0, 1))
    got = g(a, b)
    want = jax.grad(_stencil_jax, argnums=(0, 1))(a, b)
    for k in range(2):
        np.testing.assert_allclose(got[k], np.asarray(want[k]), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got[k], numeric_grad(stencil_with_region_writes, (a, b), k),
                                   rtol=1e-6, atol=1e-8)
    src = g.source(a, b)
    code = [line.strip() for line in src.splitlines() if not line.strip().startswith("#")]
    assert any(line.startswith("_rt.copy_into(a_") for line in code)
    assert any(line.startswith("_rt.add_into(_b_") for line in code)
    # (a region set to zero stays inline: a fill compiles fast)
    inline = [line for line in code if re.match(r"\w+\[[^\]]*:[^\]]*\] \+?= (?!0\.0$)", line)]
    assert not inline, inline
