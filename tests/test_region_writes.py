"""The runtime's writes into a region of an array (`runtime_writes.add_into`, ``copy_into``):
what NumPy's ``region += value`` and ``region[...] = value`` leave, for a value of the region's
shape, one broadcast along some axes (fewer axes, or axes of size 1), a strided one, one whose
memory overlaps the region, and a number. Their loop nests run as plain Python for every form
(cheap), and compiled for a few signatures (one compiled test of the mechanism)."""

import numpy as np
import pytest

from jitgrad.backend.numba import runtime_writes


def _values(region_shape, rng):
    """Values NumPy writes into a region of ``region_shape``: (value, its rank or None)."""
    out = [rng.standard_normal(region_shape), 2.5, 3, True,
           rng.standard_normal(region_shape[1:] or (1,)),
           rng.standard_normal((1,) + region_shape[1:]),
           rng.standard_normal(region_shape[:-1] + (1,)),
           rng.standard_normal(region_shape)[..., ::-1]]
    return [(v, None if np.isscalar(v) else np.ndim(v)) for v in out]


def _numpy(op, region, value):
    if op == "+=":
        region += value
    else:
        region[...] = value


FORMS = [(op, shape) for op in ("+=", "=") for shape in ((5,), (4, 5), (3, 4, 5), (2, 3, 4, 3))]


@pytest.mark.parametrize("op,shape", FORMS)
def test_nests_write_what_numpy_writes(op, shape):
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape)
    region = tuple(slice(1, None) for _ in shape)
    for value, rank in _values(a[region].shape, rng):
        write = runtime_writes._nest(op, len(shape), rank)
        got, want = a.copy(), a.copy()
        write(got[region], value)
        _numpy(op, want[region], value)
        np.testing.assert_array_equal(got, want)
    # a value whose memory overlaps the region's is read before it is written
    got, want = a.copy(), a.copy()
    runtime_writes._nest(op, len(shape), len(shape))(got[1:], got[:-1])
    _numpy(op, want[1:], want[:-1].copy())
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        runtime_writes._nest(op, len(shape), len(shape))(a[1:], np.ones((2,) * len(shape)))


def test_compiled_writes_agree_with_numpy():
    """Compiled (as generated code calls them; two signatures, the forms' breadth is the
    plain-Python test's): a rank-4 view incremented by an array of its shape; a matrix's rows
    incremented by an overlapping view of the same matrix, and by rows of another count."""
    from jitgrad.backend.numba.compile import DISABLE_JIT

    if DISABLE_JIT:
        pytest.skip("the compiled helpers (JITGRAD_DISABLE_JIT is set)")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4, 3))
    region = (slice(None), slice(1, None), slice(1, 3), slice(None))
    value = rng.standard_normal(a[region].shape)
    got, want = a.copy(), a.copy()
    runtime_writes.add_into(got[region], value)
    want[region] += value
    np.testing.assert_array_equal(got, want)
    m = rng.standard_normal((4, 5))
    got = m.copy()
    runtime_writes.add_into(got[1:], got[:-1])
    want = m.copy()
    want[1:] += m[:-1]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        runtime_writes.add_into(m[1:], m[:2])
    # a vector region from an array: a column from a strided row (a nest, not Numba's own)
    got = m.copy()
    runtime_writes.copy_into(got[1:, 2], got[0, ::2][:3])
    want = m.copy()
    want[1:, 2] = m[0, ::2][:3]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):
        runtime_writes.copy_into(m[1:, 2], m[0, :2])
