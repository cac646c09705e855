"""The corpus table: one ``Case`` per function of ``corpus_fns``.

Each case lists argument tuples (``points``) drawn from a seeded generator (seed derived from
the case name, so adding a case never changes the points of another), the argument positions
to differentiate (``wrt``; default: every float / float64-array argument) and the gradient
tolerance (``tol``, relative).  All points of a case have the same argument types and shapes,
so jitgrad compiles each case once per ``wrt``.

Points of functions with kinks or branches are chosen so every side of every branch is taken
and every point stays well away from the kink (``away``/``pick`` below), e.g. |x| >= 0.2 for
abs/relu, positive arguments for log/sqrt, |x| < 1.2 for tan.

Argument specs (each is a callable ``rng -> value``):

* ``N(*shape, s=1.0, m=0.0)``: normal(m, s); no shape gives a Python float.
* ``U(lo, hi, *shape)``: uniform in [lo, hi).
* ``away(lo, hi, *shape, c=0.0)``: c +- uniform(lo, hi), random sign (keeps clear of c).
* ``pick(intervals, *shape)``: uniform over a union of intervals.
* ``zd(spec)``: the float from ``spec`` as a 0-d float64 array.
* a plain int/float: that constant.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import corpus_fns as F
import numpy as np


@dataclass(frozen=True, eq=False)
class Case:
    name: str
    fn: object
    points: list = field(repr=False)
    wrt: tuple = ()
    tol: float = 1e-5

    def __post_init__(self):
        if not self.wrt:
            object.__setattr__(self, "wrt", float_positions(self.points[0]))


def is_float_arg(v) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype == np.float64
    return isinstance(v, float)


def float_positions(args) -> tuple:
    return tuple(i for i, v in enumerate(args) if is_float_arg(v))


# ---- argument specs -------------------------------------------------------------------------


def _shaped(draw, shape):
    return float(draw(())) if not shape else draw(shape)


def N(*shape, s=1.0, m=0.0):
    return lambda rng: _shaped(lambda sh: rng.normal(m, s, size=sh), shape)


def U(lo, hi, *shape):
    return lambda rng: _shaped(lambda sh: rng.uniform(lo, hi, size=sh), shape)


def away(lo, hi, *shape, c=0.0):
    def draw(rng, sh):
        return c + rng.choice([-1.0, 1.0], size=sh) * rng.uniform(lo, hi, size=sh)

    return lambda rng: _shaped(lambda sh: draw(rng, sh), shape)


def pick(intervals, *shape):
    lo = np.array([a for a, _ in intervals])
    hi = np.array([b for _, b in intervals])

    def draw(rng, sh):
        j = rng.integers(0, len(intervals), size=sh)
        return lo[j] + (hi[j] - lo[j]) * rng.uniform(size=sh)

    return lambda rng: _shaped(lambda sh: draw(rng, sh), shape)


def zd(spec):
    return lambda rng: np.array(spec(rng), dtype=np.float64)


def _draw(spec, rng):
    if callable(spec):
        return spec(rng)
    return spec


def rng_for(name: str):
    return np.random.default_rng(zlib.crc32(name.encode()))


def case(fn, *specs, n=2, wrt=(), tol=1e-5, points=None, accept=None):
    """Build a Case: ``n`` points drawn from ``specs``, or ``points(rng)`` -> list of tuples.

    ``accept(*args) -> bool`` redraws points that are too close to a kink or a tie.
    """
    rng = rng_for(fn.__name__)
    if points is None:
        pts = []
        while len(pts) < n:
            p = tuple(_draw(s, rng) for s in specs)
            if accept is None or accept(*p):
                pts.append(p)
    else:
        pts = [tuple(p) for p in points(rng)]
    return Case(fn.__name__, fn, pts, tuple(wrt), tol)


def min_gap(a):
    """Smallest distance between two elements of ``a`` (ties make max/min non-smooth)."""
    return float(np.min(np.diff(np.sort(np.ravel(a)))))


def distinct(*args):
    return all(min_gap(a) > 0.05 for a in args)


SIGNED = [(-2.0, -0.2), (0.2, 2.0)]


def clip_clear(w, bound, grad):
    """accept() for the clipped-update loops: every |step| at least 0.05 away from the clip."""

    def ok(x, lr):
        v = w
        for xi in x:
            step = lr * grad(v, xi)
            if abs(abs(step) - bound) < 0.05:
                return False
            v -= max(-bound, min(bound, step))
        return True

    return ok


# ---- custom point generators ------------------------------------------------------------------


def _two_layer_points(rng):
    # one-hot labels; ReLU pre-activations kept at least 0.1 away from the kink at 0
    pts = []
    while len(pts) < 2:
        W1, b1, inputs = rng.normal(size=(4, 5)), rng.normal(size=5), rng.normal(size=(6, 4))
        if np.min(np.abs(inputs @ W1 + b1)) > 0.1:
            y_true = np.eye(3)[rng.integers(0, 3, size=6)]
            pts.append((W1, b1, rng.normal(size=(5, 3)), rng.normal(size=3), inputs, y_true))
    return pts


def _softmax_regression_points(rng):
    return [(rng.normal(size=(4, 3)), rng.normal(size=(5, 4)),
             np.eye(3)[rng.integers(0, 3, size=5)]) for _ in range(2)]


def _hinge_points(rng):
    # labels +-1 and margins y * (X @ w) kept at least 0.2 away from the hinge at 1
    pts = []
    while len(pts) < 3:
        w, X = rng.normal(size=3), rng.normal(size=(8, 3))
        y = rng.choice([-1.0, 1.0], size=8)
        if np.min(np.abs(1.0 - y * (X @ w))) > 0.2:
            pts.append((w, X, y))
    return pts


def _sum_targets(size, targets):
    """Arrays whose sum is each of ``targets`` (to steer branches on np.sum(x))."""

    def gen(rng):
        pts = []
        for t in targets:
            x = rng.normal(size=size)
            pts.append((x - np.mean(x) + t / size,))
        return pts

    return gen


def _loop_break_points(rng):
    # limit halfway between two consecutive partial sums (break taken), or above the total
    pts = []
    for j in (1, 3, None):
        x = rng.normal(size=6)
        cs = np.cumsum(x * x)
        limit = cs[-1] + 1.0 if j is None else 0.5 * (cs[j - 1] + cs[j])
        pts.append((x, float(limit)))
    return pts


def _bounded_while_points(rng):
    # partial sums kept clear of the 3.0 threshold; one point never reaches it
    pts = []
    while len(pts) < 3:
        x = rng.normal(size=6) * (0.4 if len(pts) == 2 else 1.0)
        cs = np.cumsum(x * x)
        if np.min(np.abs(cs - 3.0)) > 0.1:
            pts.append((x,))
    return pts


def _forward_subst_points(rng):
    pts = []
    for _ in range(2):
        L = np.tril(rng.normal(size=(4, 4)))
        L[np.diag_indices(4)] = rng.uniform(1.5, 3.0, size=4)
        pts.append((L, rng.normal(size=4)))
    return pts


def _power_iteration_points(rng):
    # symmetric, eigenvalues 4, 2, 1, 0.5 (clear gap) in a random orthonormal basis
    pts = []
    for _ in range(2):
        Q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
        pts.append((Q @ np.diag([4.0, 2.0, 1.0, 0.5]) @ Q.T, 6))
    return pts


def _max_pool_points(rng):
    # pairs differing by at least 0.3 so the ternary never ties
    pts = []
    for _ in range(3):
        a = rng.normal(size=4)
        b = a + rng.choice([-1.0, 1.0], size=4) * rng.uniform(0.3, 1.5, size=4)
        pts.append((np.stack([a, b], axis=1).reshape(-1),))
    return pts


def _sign_points(rng):
    s = pick(SIGNED, 8)
    return [(s(rng), s(rng)) for _ in range(3)]


# ---- the table -------------------------------------------------------------------------------

STRAIGHT_CASES = [
    case(F.square, N()),
    case(F.square_sum, N(5)),
    case(F.two_layer, points=_two_layer_points),
    case(F.logistic_regression, N(3), N(), N(6, 3), U(0.0, 1.0, 6)),
    case(F.least_squares, N(3), N(5, 3), N(5)),
    case(F.softplus_sum, away(0.2, 3.0, 6), n=3),
    case(F.logsumexp, N(6, s=2.0), accept=distinct),
    case(F.gaussian_logpdf, N(5), N(), N(s=0.3)),
    case(F.polynomial, N()),
    case(F.cube_float_power, N(5)),
    case(F.int_power, N(5)),
    case(F.exp2_power, N(5)),
    case(F.array_power, U(0.5, 2.0, 5), U(0.5, 2.0, 5)),
    case(F.scalar_power, U(0.5, 2.0), U(0.5, 2.0)),
    case(F.negative_power, U(0.5, 2.0, 5)),
    case(F.outer_broadcast, N(3, 1), N(1, 4)),
    case(F.outer_reshape, N(3), N(4)),
    case(F.row_broadcast, N(3, 4), N(4)),
    case(F.col_broadcast, N(3, 4), N(3, 1)),
    case(F.scalar_array, N(), N(5)),
    case(F.rank0_broadcast, zd(N()), N(2, 3)),
    case(F.rank0_ops, zd(N()), zd(N())),
    case(F.rank3_matrix, N(2, 3, 4), N(3, 4)),
    case(F.rank3_vector, N(2, 3, 4), N(4)),
    case(F.rank3_column, N(2, 3, 4), N(3, 1)),
    case(F.rank3_scalar, N(2, 3, 4, s=0.5), N(s=0.5)),
    case(F.unary_negation, N(5), N(5)),
    case(F.divisions, N(5), N(5)),
    case(F.matvec, N(3, 4), N(4)),
    case(F.vecvec, N(4), N(4)),
    case(F.matmat, N(3, 4), N(4, 2)),
    case(F.vecmat, N(3), N(3, 4)),
    case(F.quadratic_form, N(3), N(3, 3)),
    case(F.dot_vv, N(4), N(4)),
    case(F.dot_mv, N(3, 4), N(4)),
    case(F.dot_mm, N(3, 4), N(4, 2)),
    case(F.matmul_mm, N(3, 4), N(4, 2)),
    case(F.matmul_vm_mv, N(3), N(3, 4), N(4)),
    case(F.transpose_attr, N(3, 2), N(3, 4)),
    case(F.transpose_fn, N(3, 4), N(4)),
    case(F.reshape_args, N(12)),
    case(F.reshape_tuple, N(2, 3)),
    case(F.newaxis_rbf, N(4), N(3)),
    case(F.newaxis_keyword, N(4)),
    case(F.index_reads, N(5)),
    case(F.index_2d_reads, N(3, 4)),
    case(F.slice_reads, N(6)),
    case(F.column_read, N(3, 4), 2),
    case(F.row_read, N(3, 4), 1),
    case(F.shape_unpack, N(3, 4)),
    case(F.shape_len, N(5)),
    case(F.log1p_fn, N(5)),
    case(F.sqrt_fn, U(0.2, 3.0, 5)),
    case(F.trig, U(-1.2, 1.2, 6)),
    case(F.tanh_arctan, N(5)),
    case(F.abs_fn, away(0.2, 2.5, 6), n=3),
    case(F.max_min_pair, N(6), N(6), n=3,
         accept=lambda x, y: min(np.min(abs(x - y)), np.min(abs(x - 0.5 * y))) > 0.1),
    case(F.relu_sq, away(0.2, 2.0, 6), n=3),
    case(F.where_branches, away(0.2, 2.0, 6), n=3),
    case(F.where_pair, N(6), N(6), n=3, accept=lambda x, y: np.min(abs(x - y)) > 0.1),
    case(F.mask_multiply, away(0.2, 1.5, 6, c=0.5), n=3),
    case(F.math_scalars, N(), U(0.5, 2.0)),
    case(F.math_more, U(-1.2, 1.2)),
    case(F.builtin_abs_min_max, points=lambda rng: [(1.0, -0.5), (-0.8, 0.7), (0.6, 1.4),
                                                    (-1.3, -0.4), (2.0, 0.3)]),
    case(F.sum_axis0, N(3, 4)),
    case(F.mean_negative_axis, N(2, 3, 4)),
    case(F.max_axis1, N(3, 4), n=3, accept=distinct),
    case(F.min_keepdims, N(3, 4), n=3, accept=distinct),
    case(F.centered_variance, N(3, 4)),
    case(F.normalize_keepdims_neg, N(2, 3, 4)),
    case(F.method_sum, N(5)),
    case(F.method_mean_axis, N(3, 4)),
    case(F.method_max_min, N(6), n=3, accept=distinct),
    case(F.method_min_axis, N(3, 4), n=3, accept=distinct),
    case(F.layer_norm, N(5), N(5), N(5)),
    case(F.mlp_helpers, N(4, 3), N(4), N(2, 4), N(3)),
    case(F.global_constants, N(5)),
    case(F.reassignment, N(5)),
    case(F.int_constants, N(5)),
    case(F.attention, N(3, 4), N(5, 4), N(5, 2)),
    case(F.cosine_similarity, N(4), N(4)),
    case(F.rosenbrock, N(5, s=0.5, m=1.0)),
    case(F.gmm_loglik, N(6), N(3), N(3)),
    case(F.elastic_net, away(0.2, 2.0, 3), N(6, 3), N(6), U(0.1, 1.0), n=3),
    case(F.log_softmax_pick, N(5), 3),
    case(F.hinge_loss, points=_hinge_points, wrt=(0, 1)),
    case(F.softmax_regression, points=_softmax_regression_points),
    case(F.nest_reuse, N(4, 3), N(3), accept=lambda x, w: distinct(x * w)),
    case(F.nest_center_min, N(5, 3), accept=distinct),
    case(F.nest_rank3, N(2, 3, 4), accept=distinct),
    case(F.nest_bias_twice, N(4, 3), N(3)),
    case(F.nest_bias_size_one, N(4, 3), N(1)),
    case(F.nest_column_row, N(4, 1), N(5)),
]

LOOP_CASES = [
    case(F.rnn_scalar, U(0.3, 1.5), N(6)),
    case(F.horner, N(5), N()),
    case(F.horner_reverse, N(5), N()),
    case(F.logsumexp_loop, N(6, s=2.0), n=3, accept=distinct),
    case(F.huber, pick([(-2.5, -1.2), (-0.8, -0.2), (0.2, 0.8), (1.2, 2.5)], 8), 1.0, n=3),
    case(F.cumulative_recurrence, N(6)),
    case(F.accumulate_mod, N(7)),
    case(F.accumulate_mod_k, N(7), 3),
    case(F.matvec_loops, N(3, 4), N(4)),
    case(F.newton_sqrt, U(0.5, 4.0), n=3),
    case(F.newton_cuberoot, U(0.5, 8.0), n=3),
    case(F.loop_break, points=_loop_break_points),
    case(F.clipped_update, N(8, s=2.0), U(0.3, 0.6), n=3,
         accept=clip_clear(0.0, 0.3, lambda w, xi: w - xi)),
    case(F.clipped_minmax, N(8, s=1.5, m=1.0), U(0.3, 0.6), n=3,
         accept=clip_clear(1.0, 0.2, lambda w, xi: w * w - xi)),
    case(F.damped_oscillator, U(1.0, 3.0), U(0.1, 0.5), N(), N(), U(0.01, 0.05), 20),
    case(F.rk2_pendulum, U(-1.0, 1.0), N(), U(5.0, 10.0), 15),
    case(F.rnn_array, N(3, 3, s=0.5), N(4, 3)),
    case(F.rnn_array_readout, N(3, 3, s=0.5), N(3, 2), N(3), N(4, 2)),
    case(F.range_ab, N(7), 2, 6),
    case(F.range_step, N(7)),
    case(F.range_negative_step, N(7)),
    case(F.while_sum, N(5)),
    case(F.while_countdown, N(4), 7),
    case(F.bounded_while, points=_bounded_while_points),
    case(F.continue_loop, away(0.2, 2.0, 7), n=3),
    case(F.branch_outside_loop, points=_sum_targets(4, [2.5, -2.5, 0.3])),
    case(F.early_return_branch, points=lambda rng: [(2.0 * rng.normal(size=4),),
                                                    (0.3 * rng.normal(size=4),)]),
    case(F.leaky_ternary, away(0.2, 2.0, 7), n=3),
    case(F.ternary_scalar, points=lambda rng: [(1.5, 0.5), (0.4, 1.0), (-1.2, 0.3),
                                               (-0.5, -1.5)]),
    case(F.aug_ops_names, N(6)),
    case(F.aug_ops_subscript, N(3, 3)),
    case(F.row_assign, N(3, 4), N(4)),
    case(F.slice_assign, N(4)),
    case(F.block_assign, N(7), 3),
    case(F.ones_product, N(5)),
    case(F.full_alloc, N(5)),
    case(F.copy_prefix, N(5)),
    case(F.ones_like_weights, away(0.2, 2.0, 7), n=3),
    case(F.empty_fill, N(5)),
    case(F.subtract_in_place, N(5), N(5)),
    case(F.int_index_arith, N(7)),
    case(F.conv1d, N(7), N(3)),
    case(F.running_max, N(6), n=3, accept=distinct),
    case(F.pairwise_distances, N(4, 3)),
    case(F.gradient_descent, N(), U(0.05, 0.2), 10),
    case(F.power_iteration, points=_power_iteration_points),
    case(F.matmul_loops, N(3, 4), N(4, 2)),
    case(F.forward_substitution, points=_forward_subst_points),
    case(F.welford_variance, N(6)),
    case(F.piecewise_elementwise, pick([(-2.5, -1.2), (-0.8, 0.8), (1.2, 2.5)], 8), n=3),
    case(F.for_each_product, N(6)),
    case(F.nested_break, pick([(-2.5, -1.2), (-0.8, 2.0)], 3, 4), n=3),
    case(F.softmax_ce_loop, N(5), 2, accept=lambda z, k: distinct(z)),
    case(F.gated_rnn_helper, N(), N(), N(6)),
    case(F.parity_branch, N(6)),
    case(F.heat_diffusion, N(6), U(0.1, 0.3), 4),
    case(F.trapezoid, U(0.5, 2.0), 8),
    case(F.max_pool, points=_max_pool_points),
    case(F.sgd_linear, N(3), N(5, 3), N(5), U(0.05, 0.2)),
    case(F.row_normalize, N(3, 4)),
    case(F.lower_tri_sum, N(4, 4)),
    case(F.sign_counting, points=_sign_points),
]

RETURNS_IN_LOOP_CASES = [
    case(F.first_above, points=lambda rng: [(pick(SIGNED, 6)(rng), 0.0) for _ in range(3)]
         + [(-U(0.2, 2.0, 6)(rng), 0.0)]),
    case(F.partial_sum_return, points=lambda rng: [(rng.normal(size=6),),
                                                   (0.3 * rng.normal(size=6),)]),
    case(F.newton_return, points=lambda rng: [(U(0.5, 4.0)(rng),) for _ in range(2)] + [(1e3,)]),
]

ALL_CASES = STRAIGHT_CASES + LOOP_CASES + RETURNS_IN_LOOP_CASES


def _check_table():
    names = [c.name for c in ALL_CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    covered = {c.fn for c in ALL_CASES}
    for group in (F.STRAIGHT, F.LOOPS, F.RETURNS_IN_LOOP):
        missing = [f.__name__ for f in group if f not in covered]
        assert not missing, f"corpus functions without a case: {missing}"
    for c in ALL_CASES:
        kinds = [tuple(type(v).__name__ + str(np.shape(v)) for v in p) for p in c.points]
        assert len(set(kinds)) == 1, f"{c.name}: points differ in argument types/shapes"
        assert c.wrt and all(is_float_arg(c.points[0][k]) for k in c.wrt), c.name


_check_table()
