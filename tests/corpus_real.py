"""The real-code corpus table: one ``Case`` per function of ``corpus_real_fns`` (issue #11),
in the style of ``corpus.py``: each checked for every float argument against finite
differences, plain Python and the tape, with points on every side of each branch."""

from __future__ import annotations

import corpus_real_fns as F
import numpy as np
from corpus import N, U, away, case, distinct, pick


def _regression(n=6, d=3):
    def points(rng):
        return [(rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=n))
                for _ in range(2)]
    return points


def _logistic(rng):
    return [(rng.normal(size=3) * 0.5, rng.normal(size=(6, 3)),
             (rng.uniform(size=6) > 0.5).astype(float)) for _ in range(2)]


def _well_conditioned(rng):
    return [(rng.normal(size=(3, 3)) + 3.0 * np.eye(3), rng.normal(size=(3, 2)))
            for _ in range(2)]


def _lattice(rng):
    grid = np.array([[i, j, 0.0] for i in range(2) for j in range(3)]) * 1.2
    return [(grid + rng.normal(scale=0.05, size=grid.shape), rng.uniform(0.5, 1.5))
            for _ in range(2)]


REAL_CASES = [
    case(F.helper_array_from_branch, away(0.2, 2.0, 5), pick([(-1.0, -0.3), (0.3, 1.0)]), n=4),
    case(F.helper_tuple_from_branch, N(5), pick([(-1.0, -0.3), (0.3, 1.0)]), n=4),
    case(F.closure_factory_loss, points=_regression()),
    case(F.ridge_closure, points=_regression()),
    case(F.nested_sigmoid_nll, points=_logistic, wrt=(0,)),
    case(F.global_stencil_smooth, N(7)),
    case(F.global_term_structure, U(0.0, 0.1), U(0.1, 0.5)),
    # array functions
    case(F.concat_features, N(5), N(4, 3), N(4, 2)),
    case(F.hstack_vstack_design, N(4, 3), N(3)),
    case(F.stack_last_axis, N(5), N(5)),
    case(F.argmax_payoff, N(5), N(5), accept=lambda v, w: distinct(v, w)),
    case(F.vdot_inner_trace, N(3, 4), N(4), N(4)),
    case(F.diag_precision, N(3, 3), away(0.3, 1.5, 3)),
    case(F.triangular_parts, N(3, 3), N(3, 4)),
    case(F.repeat_upsample, N(4)),
    case(F.split_halves, N(6), N(3, 5)),
    case(F.split_at_indices, N(6)),
    case(F.gather_rows, N(5), N(4, 3)),
    case(F.embedding_lookup, N(5, 3), np.array([4, 1, 1, 0]), N(4)),
    # linear algebra
    case(F.gaussian_nll_cholesky, N(3), N(3, 3), N(4, 3)),
    case(F.gaussian_logdet, N(3, 3), N(4, 3)),
    case(F.ridge_solve, N(6, 3), N(6), U(0.5, 2.0)),
    case(F.multi_rhs_solve, points=_well_conditioned),
    # pricing
    case(F.black_scholes_vector, U(80.0, 120.0, 4), U(90.0, 110.0, 4), U(0.2, 2.0, 4),
         U(0.0, 0.05), U(0.1, 0.4)),
    case(F.binomial_american_put, U(90.0, 110.0), U(95.0, 105.0), U(0.01, 0.05),
         U(0.15, 0.3), tol=1e-4),
    case(F.asian_mc, U(95.0, 105.0), U(0.1, 0.3), N(6, 8)),
    # np.random inside the function, seeded there (issue #25)
    case(F.dropout_mlp_loss, N(3, 4), N(5, 3), N(5)),
    case(F.reparam_gaussian_loss, N(4), N(4, s=0.3), N(4)),
    case(F.mc_european_call, U(95.0, 105.0), U(95.0, 105.0), U(0.01, 0.05), U(0.15, 0.35),
         U(0.5, 2.0)),
    # stencils
    case(F.laplace_jacobi, N(5, 5)),
    case(F.heat_explicit, N(8), U(0.05, 0.3)),
    case(F.gray_scott, U(0.5, 1.0, 8), U(0.0, 0.5, 8), U(0.02, 0.06), U(0.05, 0.07)),
    # particles
    case(F.nbody_energy, N(5, 3), U(0.5, 2.0, 5)),
    case(F.lennard_jones, points=_lattice),
    # likelihoods
    case(F.gmm_nll, N(6, 2), N(3, 2), N(3)),
    case(F.student_t_nll, N(6), N(), N(s=0.3)),
    case(F.logistic_regression, points=_logistic),
    # recurrences, distances, integrators
    case(F.ewma_variance, N(8), U(0.7, 0.95)),
    case(F.pairwise_kde, N(6), U(0.3, 1.0)),
    case(F.cdist_sum, N(4, 3), N(3, 3)),
    case(F.rk4_decay, N(4), U(0.5, 2.0)),
    case(F.leapfrog_oscillator, N(), N(), U(0.5, 2.0)),
    # statements real code uses (issue #25)
    case(F.huber_loss, away(0.2, 3.0, 6), U(0.5, 1.5),
         accept=lambda r, d: np.min(np.abs(np.abs(r) - d)) > 0.05),
    case(F.softplus_checked, N(5), U(0.5, 2.0)),
    case(F.newton_sqrt, U(0.5, 4.0), U(0.5, 2.0)),
    case(F.gaussian_loglik_try, N(), N(6)),
    case(F.activation_loss, N(5, 3), N(3), "tanh"),
    case(F.penalised_fit, points=_regression()),
    # arrays and indexing real code uses (issue #25)
    case(F.mlp_inplace_activations, N(3, 4), N(4, 2), N(5, 3), N(5, 2)),
    case(F.softmax_cross_entropy, N(3, 4), N(5, 3), np.array([0, 3, 3, 1, 2]), wrt=(0, 1)),
    case(F.nll_take_along_axis, N(5, 3), np.array([2, 0, 1, 1, -1])),
    case(F.label_smoothing_ce, N(4, 3), np.array([2, 0, 1, 2]), U(0.05, 0.2)),
    case(F.smooth_l1, N(6), N(6), U(0.5, 1.5),
         accept=lambda p, t, b: np.min(np.abs(np.abs(p - t) - b)) > 0.05),
    case(F.clipped_relu_energy, away(0.1, 2.0, 7), U(-0.5, -0.2), U(0.8, 1.2),
         accept=lambda x, lo, hi: np.min(np.abs(x - lo)) > 0.05 and np.min(np.abs(x - hi)) > 0.05),
    case(F.nan_safe_mse, N(6), points=lambda rng: [
        (rng.normal(size=6), np.where(np.arange(6) % 3 == 0, np.nan, rng.normal(size=6)))
        for _ in range(2)], wrt=(0,)),
    case(F.sparse_sgd_step, N(6), np.array([4, 1, 4, 0]), N(4)),
    case(F.scatter_rows, N(5, 3), np.array([3, 0, 3]), N(3, 3)),
    case(F.bilinear_attention, N(3, 4), N(5, 4), N(5, 4)),
    case(F.quadratic_form_einsum, N(3), N(3, 3)),
    # SciPy functions of arrays (issue #25, item 6)
    case(F.poisson_nll, N(6, s=0.5), np.array([0.0, 1.0, 3.0, 0.0, 2.0, 5.0]), wrt=(0,)),
    case(F.dirichlet_logpdf, U(0.5, 3.0, 4), points=lambda rng: [
        (rng.uniform(0.5, 3.0, 4), rng.dirichlet(np.ones(4))) for _ in range(2)]),
    case(F.poisson_pmf_factorial, U(0.5, 4.0, 5), np.array([0, 1, 2, 3, 7])),
    case(F.rosen_gradient_penalty, N(5, s=0.5, m=1.0), tol=1e-4),
    case(F.logistic_probit_mix, points=_logistic),
    case(F.gamma_shape_loglik, U(-0.5, 1.0), U(0.2, 3.0, 6)),
    case(F.dirichlet_expected_log, U(0.5, 3.0, 4), N(4)),
    # Python's builtins over arrays and tuples (issue #25, item 3)
    case(F.max_abs_normalise, N(5), N(5)),
    case(F.range_penalty, N(5)),
    case(F.dot_by_zip, N(5), N(5)),
    case(F.weighted_log_terms, N(5), N(5)),
    case(F.pairwise_energy, N(5)),
    case(F.any_all_switch, N(5), points=lambda rng: [(rng.normal(size=5),),
                                                   (rng.normal(size=5) + 3.0,)]),
    # lists appended and comprehended, lambdas, walrus, reduce, constant lists, dicts
    case(F.asset_contributions, N(5), N(5)),
    case(F.kinetic_energy_list, U(0.5, 2.0, 4), N(4, 3), accept=lambda m, v: distinct(
        0.5 * m * np.sum(v * v, axis=1))),
    case(F.squared_errors_loop, N(3), N(6, 3), N(6)),
    case(F.positive_gain_ratio, away(0.1, 1.0, 7)),
    case(F.geometric_mean_reduce, U(0.5, 2.0, 5)),
    case(F.compounded_growth, U(-0.05, 0.1, 6)),
    case(F.logistic_loss_lambda, points=_logistic, wrt=(0,)),
    case(F.clipped_step_walrus, N(4), points=lambda rng: [
        (rng.normal(size=4), rng.normal(size=4)), (rng.normal(size=4), 20.0 * rng.normal(size=4))]),
    case(F.smoothed_by_weights, N(6)),
    case(F.piecewise_knots, away(0.1, 2.0, 5, c=0.0), accept=lambda x: all(
        min(abs(x - k)) > 0.05 for k in (-0.5, 0.0, 0.5))),
    case(F.config_dict_penalty, away(0.1, 1.0, 3), N(5, 3)),
]

# Functions the tape cannot run (math.* converts a Tensor with float()).
TAPE_REFUSES = {"global_term_structure", "black_scholes_vector", "binomial_american_put",
                "asian_mc", "nbody_energy", "gmm_nll", "student_t_nll", "ewma_variance",
                "pairwise_kde",
                # out= and np.full of a tensor: the tape cannot record them
                "mlp_inplace_activations", "label_smoothing_ce",
                # SciPy's functions: the tape records NumPy's only
                "poisson_nll", "dirichlet_logpdf",
                "rosen_gradient_penalty", "logistic_probit_mix", "gamma_shape_loglik",
                "dirichlet_expected_log",
                # a Tensor given to np.random.normal, and math.exp of one: refused by the tape
                "reparam_gaussian_loss", "mc_european_call",
                # a list of Tensors given to NumPy (np.std(contrib)): NumPy converts each
                # Tensor to a float (test_lists.py checks such lists against array twins)
                "asset_contributions", "squared_errors_loop"}

assert len({c.name for c in REAL_CASES}) == len(REAL_CASES)
