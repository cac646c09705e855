"""Functions of the kinds the peers' suites differentiate (``peer_fns.py``): each either
differentiates correctly (value vs plain Python, gradients vs finite differences), or is
refused with an error at the user's line. None may come out wrong or crash; the refusals are
listed with their reasons, so one that starts to differentiate (or a new refusal) shows."""

import numpy as np
import peer_fns as P
import pytest
from fd import numeric_grad

import jitgrad
from jitgrad import JitgradError

rng = np.random.default_rng(2017)


def n(*shape):
    return rng.normal(size=shape) if shape else float(rng.normal())


# (function, arguments, wrt)
PEER_CASES = [
    (P.negate_then_square, (n(),), (0,)),
    (P.rebind_argument, (n(),), (0,)),
    (P.alias_then_rebind, (n(),), (0,)),
    (P.scale_by_sign_branch, (0.7,), (0,)),
    (P.scale_by_sign_branch, (-0.7,), (0,)),
    (P.nested_branches, (0.5,), (0,)),
    (P.nested_branches, (2.5,), (0,)),
    (P.nested_branches, (-0.5,), (0,)),
    (P.elif_chain, (3.0, 0.5), (0, 1)),
    (P.elif_chain, (-1.0, 0.8), (0, 1)),
    (P.elif_chain, (0.6, 0.5), (0, 1)),
    (P.repeated_squaring, (1.1, 3), (0,)),
    (P.loops_in_sequence, (0.8, 3), (0,)),
    (P.branch_inside_loop, (1.2,), (0,)),
    (P.loop_inside_branch, (1.3,), (0,)),
    (P.loop_inside_branch, (3.3,), (0,)),
    (P.nested_loops_scalar, (0.4,), (0,)),
    (P.while_halving, (2.3,), (0,)),
    (P.calls_in_branches, (2.0, 1.0), (0, 1)),
    (P.calls_in_branches, (1.0, 2.0), (0, 1)),
    (P.nested_def_in_loop, (0.7, 3), (0,)),
    (P.augmented_ops, (n(),), (0,)),
    (P.unpack_packed_argument, ((n(), n(), n()),), (0,)),
    (P.first_of_packed, ((n(), n(), n()),), (0,)),
    (P.pick_from_tuple_by_int, (n(), n(), n(), 1), (0, 1, 2)),
    (P.list_of_scalars_sum, (n(),), (0,)),
    (P.dict_argument, ({"a": 1.0, "b": 2.0},), (0,)),
    (P.list_comprehension, (n(3),), (0,)),
    (P.returns_two_values, (n(),), (0,)),
    (P.read_two_entries, (n(3),), (0,)),
    (P.overwrite_entry_of_argument, (n(3),), (0,)),
    (P.write_from_squares, (n(3),), (0,)),
    (P.copy_entries_in_loop, (n(4),), (0,)),
    (P.rows_from_entries, (n(4),), (0,)),
    (P.rnn_rows, (n(3, 2), n(2, 3)), (0, 1)),
    (P.bilinear_tanh, (n(2), n(3), n(3, 4), n(2, 4), n(4)), (0, 1, 2, 3, 4)),
    (P.tanh_classifier, (n(5, 3), (rng.uniform(size=5) > 0.5) * 1.0, n(3) * 0.3, n() * 0.3),
     (2, 3)),
    (P.strided_newaxis, (n(6, 2),), (0,)),
    (P.np_sum_axis_keepdims, (n(3, 4),), (0,)),
    (P.np_mean_axis, (n(3, 4),), (0,)),
    (P.np_max_axis, (n(3, 4),), (0,)),
    (P.np_min_all, (n(3, 4),), (0,)),
    (P.np_prod_axis, (n(3, 4),), (0,)),
    (P.np_var_ddof, (n(3, 4),), (0,)),
    (P.np_cumsum_axis, (n(3, 4),), (0,)),
    (P.np_cumprod_vector, (n(5),), (0,)),
    (P.np_tensordot, (n(3, 4), n(4, 2)), (0, 1)),
    (P.np_kron, (n(2, 2), n(2, 3)), (0, 1)),
    (P.np_cross, (n(3), n(3)), (0, 1)),
    (P.np_einsum, (n(3, 4), n(4, 2)), (0, 1)),
    (P.np_outer_inner, (n(4), n(4)), (0, 1)),
    (P.np_trace_diag, (n(3, 3),), (0,)),
    (P.np_tril_triu, (n(3, 3),), (0,)),
    (P.np_rot90, (n(2, 3),), (0,)),
    (P.np_flip_roll, (n(5),), (0,)),
    (P.np_diff_twice, (n(6),), (0,)),
    (P.np_concatenate_split, (n(3), n(3)), (0, 1)),
    (P.np_stack_hstack, (n(3), n(3)), (0, 1)),
    (P.np_tile, (n(3),), (0,)),
    (P.np_repeat, (n(3),), (0,)),
    (P.np_sort, (n(4),), (0,)),
    (P.np_median, (n(5),), (0,)),
    (P.np_percentile, (n(5),), (0,)),
    (P.np_select_where, (np.array([-1.2, 0.4, 0.9, -0.3]),), (0,)),
    (P.np_clip_keywords, (np.array([-1.2, 0.3, 0.9, -0.2]),), (0,)),
    (P.np_nan_to_num, (n(4),), (0,)),
    (P.np_atleast_2d, (n(4),), (0,)),
    (P.np_reshape_transpose, (n(6),), (0,)),
    (P.np_expand_squeeze, (n(4),), (0,)),
    (P.np_dot_matrix_vector, (n(3, 4), n(4)), (0, 1)),
    (P.np_matmul_3d, (n(2, 3, 4), n(2, 4, 2)), (0, 1)),
    (P.np_linalg_norm_axis, (n(3, 4),), (0,)),
    (P.np_logsumexp_by_hand, (n(5),), (0,)),
    (P.np_power_scalar_exponent, (n(4), 1.7), (0, 1)),
    (P.np_fancy_2d, (n(3, 3),), (0,)),
    (P.np_boolean_mask, (n(5),), (0,)),
    (P.np_astype_int, (n(4) * 3.0,), (0,)),
]

# The refusals, by function, with a word of each message: what is left to build (or refused on
# purpose: a tuple result). A list comprehension differentiates since issue #25 (item 3).
REFUSED = {
    "returns_two_values": "must return a scalar",
}


def outcome(fn, args, wrt):
    """('ok', None), ('refused', message), ('wrong', detail) or ('crash', detail)."""
    try:
        value, grads = jitgrad.value_and_grad(fn, wrt=wrt)(*args)
    except JitgradError as e:
        if e.loc is None:
            return "crash", f"refused without a line: {e}"
        return "refused", str(e)
    except Exception as e:  # noqa: BLE001 - a crash is what this looks for
        return "crash", f"{type(e).__name__}: {e}"
    expected = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    if not np.allclose(value, expected, rtol=1e-9, atol=1e-12):
        return "wrong", f"value {value} != {expected}"
    for k, g in zip(wrt, grads):
        a = args[k]
        if isinstance(a, tuple):
            refs = [numeric_grad(lambda v, j=j, k=k, a=a: fn(*args[:k], a[:j] + (v,) + a[j + 1:],
                                                             *args[k + 1:]), (a[j],), 0)
                    for j in range(len(a))]
            ok = all(np.allclose(x, r, rtol=1e-5, atol=1e-6) for x, r in zip(g, refs))
        elif isinstance(a, dict):  # a tree: a dict of floats, its gradient a dict
            refs = {key: numeric_grad(lambda v, key=key, k=k, a=a: fn(
                *args[:k], {**a, key: v}, *args[k + 1:]), (a[key],), 0) for key in a}
            ok = isinstance(g, dict) and set(g) == set(refs) and all(
                np.allclose(g[key], refs[key], rtol=1e-5, atol=1e-6) for key in refs)
        else:
            ref = numeric_grad(fn, args, k)
            ok = np.shape(g) == np.shape(ref) and np.allclose(g, ref, rtol=1e-5, atol=1e-6)
        if not ok:
            return "wrong", f"gradient wrt {k}: {g} vs finite differences"
    return "ok", None


@pytest.mark.parametrize(("fn", "args", "wrt"), [
    pytest.param(f, a, w, id=f"{f.__name__}-{k}") for k, (f, a, w) in enumerate(PEER_CASES)])
def test_peer_function(fn, args, wrt):
    kind, detail = outcome(fn, args, wrt)
    if fn.__name__ in REFUSED:
        assert kind == "refused", f"{fn.__name__}: expected a refusal, got {kind}: {detail}"
        assert REFUSED[fn.__name__] in detail, detail
    else:
        assert kind == "ok", f"{fn.__name__}: {kind}: {detail}"


def test_the_table_covers_every_function():
    names = {f.__name__ for f, _, _ in PEER_CASES}
    defined = {k for k, v in vars(P).items() if callable(v) and getattr(v, "__module__", "")
               == "peer_fns" and not k.startswith("helper")}
    assert names == defined
    assert set(REFUSED) <= names
