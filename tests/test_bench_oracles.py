"""The benchmark's ADBench GMM (`bench.problems.gmm_adbench`, quoted in docs/performance.md) and the
benchmark's independent check of jitgrad's gradients (`bench.oracle`), untimed (issue #21).

jitgrad's compiled gradient of gmm_adbench at a small size against 5-point central
differences of the plain Python objective on every entry, against jitgrad.tape on the tape's copy of the
loops (`bench.tape_variants`), and against the vectorised JAX and autograd versions
(`bench.peers`; skipped where those are not installed). Then `bench.oracle` itself: it
passes a right gradient, calls a gradient with one entry off by 1e-5 (relative) wrong, and
`run._verify` then marks jitgrad ``mismatch`` and takes the hand-written gradient as the
reference.
"""

import os
import sys

import numpy as np
import pytest
from fd import numeric_grad5

import jitgrad
from jitgrad import tape

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench

from bench import oracle, peers, problems, run, suites, tape_variants

WRT = (0, 1, 2)
DATA = problems.make_adbench_gmm(30, 3, 4, seed=1)  # alphas (4,), means (4, 3), icf (4, 6)


@pytest.fixture(scope="module")
def jitgrad_grads():
    return jitgrad.grad(problems.gmm_adbench, wrt=WRT)(*DATA)


def _assert_entries_close(got, want, rtol, atol):
    """Per entry: |got - want| <= rtol |want| + atol, for each argument."""
    for k, (g, w) in enumerate(zip(got, want)):
        assert np.shape(g) == np.shape(w), k
        assert np.all(np.abs(g - w) <= rtol * np.abs(w) + atol), (k, g - w)


def test_gradient_against_central_differences(jitgrad_grads):
    fd = [numeric_grad5(problems.gmm_adbench, DATA, k, eps=1e-3) for k in WRT]
    # the 5-point quotient's truncation, ~(h / l)^4 / 30, and rounding, 1.5 * ~50 ulp |f| / h
    rounding = 1.5 * 1e-14 * (1 + abs(problems.gmm_adbench(*DATA))) / 1e-3
    _assert_entries_close(jitgrad_grads, fd, rtol=1e-6, atol=rounding)
    assert all(np.max(np.abs(g)) > 1.0 for g in jitgrad_grads)  # not a vanishing gradient


def test_gradient_against_the_tape(jitgrad_grads):
    taped = tape.grad(tape_variants.gmm_adbench, wrt=WRT)(*DATA)
    _assert_entries_close(jitgrad_grads, taped, rtol=1e-10, atol=1e-12)


def test_column_form_against_differences_the_tape_and_the_hand_written_gradient():
    """`problems.gmm_adbench_cols` (Q by columns, ADBench's C++; its adjoint has increments
    and a sum over each column kept in a scalar), compiled, on every entry."""
    from bench import handwritten

    data = problems.make_adbench_gmm(30, 4, 4, seed=1)  # d = 4: rows and columns differ
    got = jitgrad.grad(problems.gmm_adbench_cols, wrt=WRT)(*data)
    fd = [numeric_grad5(problems.gmm_adbench_cols, data, k, eps=1e-3) for k in WRT]
    rounding = 1.5 * 1e-14 * (1 + abs(problems.gmm_adbench_cols(*data))) / 1e-3
    _assert_entries_close(got, fd, rtol=1e-6, atol=rounding)
    assert all(np.max(np.abs(g)) > 1.0 for g in got)
    taped = tape.grad(tape_variants.gmm_adbench_cols, wrt=WRT)(*data)
    _assert_entries_close(got, taped, rtol=1e-10, atol=1e-12)
    _assert_entries_close(got, handwritten.gmm_adbench_cols_grad(*data), rtol=1e-10, atol=1e-12)
    assert not np.allclose(got[2], jitgrad.grad(problems.gmm_adbench, wrt=WRT)(*data)[2])


@pytest.mark.parametrize("system", ["jax", "autograd"])
@pytest.mark.parametrize("name", ["gmm_adbench", "gmm_adbench_cols"])
def test_gradient_against_the_vectorised_peers(system, name):
    pytest.importorskip(system)
    data = problems.make_adbench_gmm(30, 4, 4, seed=1)  # d = 4: rows and columns differ
    fn = getattr(problems, name)
    call, to_numpy = peers.make_tool(system, name, data, WRT)
    value = float(peers.function(system, name)(*data))
    assert value == pytest.approx(fn(*data), rel=1e-12)
    _assert_entries_close(jitgrad.grad(fn, wrt=WRT)(*data), to_numpy(call()), rtol=1e-10,
                          atol=1e-12)


def test_oracle_passes_a_right_gradient_and_fails_a_wrong_one(jitgrad_grads):
    primal = suites.SUITE_DEFS["gmm_adbench"].primal  # the Numba primal
    right = oracle.central_differences(primal, DATA, WRT, jitgrad_grads)
    assert right.status == "ok", right.detail
    assert right.detail.startswith("16 of 16 sampled entries")  # 1 + 5 entries, or 4 of alphas
    wrong = [g.copy() for g in jitgrad_grads]
    biggest = np.unravel_index(np.argmax(np.abs(wrong[2])), wrong[2].shape)
    wrong[2][biggest] *= 1 + 1e-5
    bad = oracle.central_differences(primal, DATA, WRT, wrong)
    assert bad.status == "wrong", bad.detail
    assert f"d/arg2{list(map(int, biggest))}" in bad.detail


def test_verify_marks_a_wrong_jitgrad_and_falls_back_to_the_hand_written_gradient():
    case = suites.Case(suites.SUITE_DEFS["gmm"], "small")
    data = case.data()
    right = tuple(np.asarray(g) for g in case.suite.grad(*data))
    wrong = tuple(g.copy() for g in right)
    wrong[1].flat[np.argmax(np.abs(wrong[1]))] *= 1 + 1e-5
    results = [run.ToolResult("jitgrad", "grad"), run.ToolResult("hand-written Numba", "grad")]
    result = run.CaseResult(case.name, case.suite.name, case.size, tuple(case.sizes),
                            list(case.suite.wrt), 0, None, [], [])
    run._verify(case, results, {"jitgrad": wrong, "hand-written Numba": right}, result, 1e-8)
    assert results[0].status == "mismatch" and "central differences" in results[0].note
    assert result.reference == "hand-written Numba" and results[1].status == "ok"
    assert any(n.startswith("MISMATCH: jitgrad is wrong") for n in result.notes)
    assert [c["status"] for c in result.independent["hand-written Numba"]] == ["ok"]
