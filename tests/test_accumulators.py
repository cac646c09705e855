"""An entry a loop accumulates into, held in a local while the loop runs (`accumulators`).

The pass rewrites generated source, so its tests are of source: a loop nest of the form `emit`
writes, rewritten and not, run on the same arrays must give the same bits (float32 and
float64, a sum, a maximum with its NaN rule, an update read back in the loop); and the forms it must leave alone (the entry's index moves with the loop, the
array is read at another entry or has a second name, the loop may leave early) are left
alone. These run as plain Python (the rewrite's logic, cheap); the compiled form, with its
float32 rounding (`runtime_alloc.entry_of`), is test_float32's compiled test, whose row sum
is held.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from jitgrad.backend.numba.accumulators import hold_accumulators

HEADER = "import numpy as np\nimport jitgrad.backend.numba.runtime as _rt\n\n\n"

# A row max (NaN wins), a row sum of exps, and an update that reads the entry back: the forms
# `emit` writes for np.max / np.sum along the last axis and an adjoint's accumulation.
ROWS = HEADER + '''def rows(x):
    m = _rt.full((x.shape[0], 1), -np.inf)
    for _i0 in range(x.shape[0]):
        for _i1 in range(x.shape[1]):
            if x[_i0, _i1] > m[_i0, 0] or x[_i0, _i1] != x[_i0, _i1]:
                m[_i0, 0] = x[_i0, _i1]
    e = _rt.empty((x.shape[0], x.shape[1]))
    s = _rt.zeros((x.shape[0], 1))
    t = _rt.zeros((x.shape[0],))
    for _i0 in range(x.shape[0]):
        for _i1 in range(x.shape[1]):
            _e = np.exp(x[_i0, _i1] - m[_i0, 0])
            e[_i0, _i1] = _e
            s[_i0, 0] += _e
            t[_i0] -= 0.1 * s[_i0, 0] + _e
    return m, e, s, t
'''

# Forms left alone: the index moves with the inner loop; another entry of the array is read; a
# second name for the array; a break.
LOOPS = "    for _i0 in range(x.shape[0]):\n        for _i1 in range(x.shape[1]):\n"
LEFT_ALONE = [
    LOOPS + "            s[_i1, 0] += x[_i0, _i1]\n",
    LOOPS + "            s[_i0, 0] += x[_i0, _i1] * s[0, 0]\n",
    "    v = s[0:1]\n" + LOOPS + "            s[_i0, 0] += x[_i0, _i1] + v[0, 0]\n",
    LOOPS + "            s[_i0, 0] += x[_i0, _i1]\n            if s[_i0, 0] > 3.0:\n"
    "                break\n",
]


def _load(source, name):
    mod = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), mod.__dict__)  # noqa: S102 -- the test's module
    return getattr(mod, name)


def test_held_entries_give_the_same_bits():
    held, origin = hold_accumulators(ROWS, "rows")
    assert held.count("_acc") >= 8 and "_rt.entry_of(s, " in held and "_rt.entry_of(t, " in held
    assert len(origin) == held.count("\n") + 2
    before, after = _load(ROWS, "rows"), _load(held, "rows")
    rng = np.random.default_rng(45)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((7, 33)).astype(dtype)
        x[3, 5] = np.nan
        for a, b in zip(before(x), after(x)):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("loop", LEFT_ALONE)
def test_forms_left_alone(loop):
    source = HEADER + ("def f(x):\n    s = _rt.zeros((x.shape[0], 1))\n" + loop
                       + "    return s\n")
    held, _ = hold_accumulators(source, "f")
    assert "_acc" not in held


def test_a_name_of_the_function_is_not_taken():
    held, _ = hold_accumulators(ROWS.replace("_e", "_acc0"), "rows")
    assert "_acc0 = m[" not in held and "_acc1 = m[_i0, 0]" in held
