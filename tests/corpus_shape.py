"""The shape-and-axes corpus table: one ``Case`` per function of ``corpus_shape_fns`` (issue #11,
second round: the forms the peers' own tests and public kernels use that the first surface
corpus did not reach), in the style of ``corpus_surface.py``."""

from __future__ import annotations

import corpus_shape_fns as F
import numpy as np
from corpus import N, U, case


def _zero_rows(rng):
    x = rng.normal(size=(3, 4))
    x[1, 2] = 0.0  # a product along an axis with a zero: the product of the others
    y = rng.normal(size=(3, 4))
    y[0, 1] = y[2, 1] = 0.0
    return [(x,), (y,)]


def _clear_of_kinks(rng):
    pts = []
    while len(pts) < 2:
        x = rng.normal(size=(4, 3))
        if np.min(np.abs(x)) > 0.05 and np.min(np.abs(np.diff(np.sort(np.abs(x[2]))))) > 0.05:
            pts.append((x,))
    return pts


def _mod_clear(rng):
    pts = []
    while len(pts) < 2:
        x = rng.uniform(-3.0, 3.0, size=5)
        if np.min(np.abs(np.mod(x, 1.7) - 0.85)) < 0.8 and abs(x[0]) > 0.1:
            pts.append((x, rng.normal(size=5)))
    return pts


def _distinct(rng):
    pts = []
    while len(pts) < 2:
        x = rng.normal(size=7)
        if np.min(np.diff(np.sort(x))) > 0.05:
            pts.append((x,))
    return pts


def _signed_logs(rng):
    x = rng.uniform(0.3, 2.0, size=6) * np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0])
    return [(x,), (np.abs(x),)]


def _cast_rows(rng):
    w = rng.normal(size=(5, 4))
    w[:, -1] = [0.2, 1.3, 4.6, 2.1, 3.7]  # row indices, clear of the integers
    return [(w,)]


SHAPE_CASES = [
    case(F.permuted_weights, N(2, 3, 4), N(4, 3, 2)),
    case(F.rotated_stencil, N(3, 4)),
    case(F.as_columns, N(4), N(3, 4)),
    case(F.upsample_rows, N(2, 3)),
    case(F.tiled_bias, N(3), N(4, 3)),
    case(F.bilinear_form, N(2), N(2, 3, 4), N(3, 4)),
    case(F.batched_dot, N(2, 3, 4), N(4)),
    case(F.kron_block, N(2, 2), N(3, 2)),
    case(F.torque, N(4, 3), N(4, 3)),
    case(F.banded_trace, N(4, 5)),
    case(F.tridiagonal, N(4), N(3)),
    case(F.masked_stack, N(2, 4, 4)),
    case(F.split_by_name, N(4, 6)),
    case(F.stack_columns, N(4), N(4)),
    case(F.row_products, N(3, 4)),
    case(F.product_rows_with_zero, points=_zero_rows),
    case(F.running_columns, N(3, 4)),
    case(F.rolled_rows, N(4, 5)),
    case(F.axis_norms, points=_clear_of_kinks),
    case(F.deviations, N(4, 3)),
    case(F.inverse_hyperbolic, N(4), N(4)),
    case(F.real_parts, N(5)),
    case(F.operator_forms, points=_mod_clear),
    case(F.distance_matrix, N(4, 3)),
    case(F.vectorised_distances, N(4, 2)),
    case(F.jacobi_swaps, N(6)),
    case(F.ewma_filled, N(6), U(0.2, 0.8)),
    case(F.string_arguments, N(3, 2)),
    case(F.order_statistics, points=_distinct),
    case(F.cleaned_logs, points=_signed_logs),
    case(F.pick_by_index, points=lambda rng: [(0.3, -1.2, 0.8, 1), (0.3, -1.2, 0.8, 2),
                                              (0.5, 0.7, -0.4, 0)]),
    case(F.rows_by_list, N(4, 3)),
    case(F.one_array_stacks, N(3, 3)),
    case(F.rows_by_cast, points=_cast_rows),
    case(F.stack_rows, N(3, 2, 4)),
    case(F.black_scholes_vectorised, U(10.0, 50.0, 5), U(10.0, 50.0, 5), U(1.0, 2.0, 5),
         U(0.01, 0.1), U(0.1, 0.4)),
    case(F.logistic_special, N(3), N(6, 3), U(0.0, 1.0, 6)),
    case(F.batched_matmul, N(2, 3, 4), N(2, 4, 2)),
    case(F.smoothed, points=lambda rng: [(rng.normal(size=7), rng.normal(size=3)),
                                         (rng.normal(size=3), rng.normal(size=6)),
                                         (rng.normal(size=4), rng.normal(size=4))]),
]

# Points the tape cannot record (math.* converts a Tensor with float(); writes into an array
# np.empty made or into an argument; a list index; np.int64 of a Tensor; SciPy functions):
# checked to raise its refusal, like test_tape.REFUSED.
TAPE_REFUSES = {"operator_forms", "distance_matrix", "ewma_filled",
                "jacobi_swaps", "rows_by_list", "rows_by_cast",
                "stack_rows", "black_scholes_vectorised", "logistic_special"}

assert len({c.name for c in SHAPE_CASES}) == len(SHAPE_CASES)
