"""The surface corpus table: one ``Case`` per function of ``corpus_surface_fns`` (the
NumPy / math / Python forms of issue #11), in the style of ``corpus.py``."""

from __future__ import annotations

import corpus_surface_fns as F
import numpy as np
from corpus import SIGNED, N, U, away, case, pick


def _zero_points(rng):
    # exact zeros: one (the gradient is the product of the others there), and two (all zero)
    one, two = rng.normal(size=5), rng.normal(size=5)
    one[2] = 0.0
    two[[1, 3]] = 0.0
    return [(one,), (two,), (rng.normal(size=5),)]


def _power_zero_points(rng):
    x = rng.uniform(0.5, 2.0, size=4)
    x[1] = 0.0
    return [(x, rng.uniform(1.5, 3.0, size=4))]


def _clip_points(rng):
    pts = []
    while len(pts) < 2:
        x = rng.normal(size=6)
        if min(np.min(np.abs(np.abs(x) - 0.5)), np.min(np.abs(x - 0.3))) > 0.05:
            pts.append((x,))
    return pts


SURFACE_CASES = [
    case(F.polar_angle, N(5), N(5)),
    case(F.log_sum_pairs, N(5, s=3.0), N(5, s=3.0)),
    case(F.log_bases, U(0.3, 3.0, 5)),
    case(F.cube_roots, away(0.3, 2.0, 5)),
    case(F.angles, N(5, s=60.0)),
    case(F.nan_ignoring_extremes, N(6), N(6), accept=lambda x, y: np.min(abs(x - y)) > 0.1),
    case(F.float_power_mix, U(0.5, 2.0, 5), U(0.5, 2.0, 5)),
    case(F.sign_transfer, away(0.2, 2.0, 5), away(0.2, 2.0, 5), wrt=(0,)),
    case(F.finite_mask, pick([(-2.0, -0.2), (0.2, 2.0)], 6), n=2),
    case(F.power_at_zero, points=_power_zero_points, wrt=(1,)),  # x = 0 is an edge for FD
    case(F.arcsin_inside, U(-0.9, 0.9, 5)),
    case(F.black_scholes_call, U(80.0, 120.0), U(90.0, 110.0), U(0.2, 2.0), U(0.0, 0.05),
         U(0.1, 0.4)),
    case(F.math_scalar_surface, U(0.5, 2.0), U(0.5, 2.0)),
    case(F.vector_from_scalars, N(), N(), N()),
    case(F.matrix_from_scalars, N(), N(), N()),
    case(F.stacked_rows, N(4), N(4)),
    case(F.arange_weights, N(5)),
    case(F.linspace_grid, N(5), N(), N()),
    case(F.eye_shift, N(3, 3)),
    case(F.like_allocations, N(5)),
    case(F.product_fn, N(5)),
    case(F.product_with_zero, points=_zero_points),
    case(F.variances, N(3, 4)),
    case(F.weighted_average, N(3, 4), U(0.5, 1.5, 3, 4)),
    case(F.running_sum, N(6)),
    case(F.norms, N(4), N(3, 2)),
    case(F.mean_of_vector_axis0, N(5)),
    case(F.rolled_stencil, N(7), 3),
    case(F.flipped, N(5), N(3, 4)),
    case(F.differences, N(6)),
    case(F.flattening, N(3, 4)),
    case(F.clip_keywords, points=_clip_points),
    case(F.enumerate_weights, N(4), N(4)),
    case(F.zip_pairs, N(4), N(4)),
    case(F.reversed_horner, N(5), U(0.5, 1.5)),
    case(F.prange_sum, N(5)),
    case(F.builtin_sum_operator, N(4), N(4)),
    case(F.ema, N(6), U(0.1, 0.9)),
    case(F.comparison_result, pick(SIGNED), pick(SIGNED)),
]

# Points the tape cannot record (math.* converts a Tensor with float(); np.array builds a
# plain array from Tensors): checked to raise its refusal, like test_tape.REFUSED.
TAPE_REFUSES = {"black_scholes_call", "math_scalar_surface", "vector_from_scalars",
                "matrix_from_scalars", "like_allocations"}

assert len({c.name for c in SURFACE_CASES}) == len(SURFACE_CASES)

