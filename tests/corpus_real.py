"""The real-code corpus table: one ``Case`` per function of ``corpus_real_fns`` (issue #11),
in the style of ``corpus.py``: each checked for every float argument against finite
differences, plain Python and the tape, with points on every side of each branch."""

from __future__ import annotations

import corpus_real_fns as F
from corpus import N, U, away, case, pick


def _regression(n=6, d=3):
    def points(rng):
        return [(rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=n))
                for _ in range(2)]
    return points


def _logistic(rng):
    return [(rng.normal(size=3) * 0.5, rng.normal(size=(6, 3)),
             (rng.uniform(size=6) > 0.5).astype(float)) for _ in range(2)]


REAL_CASES = [
    case(F.helper_array_from_branch, away(0.2, 2.0, 5), pick([(-1.0, -0.3), (0.3, 1.0)]), n=4),
    case(F.helper_tuple_from_branch, N(5), pick([(-1.0, -0.3), (0.3, 1.0)]), n=4),
    case(F.closure_factory_loss, points=_regression()),
    case(F.ridge_closure, points=_regression()),
    case(F.nested_sigmoid_nll, points=_logistic, wrt=(0,)),
    case(F.global_stencil_smooth, N(7)),
    case(F.global_term_structure, U(0.0, 0.1), U(0.1, 0.5)),
]

# Functions the tape cannot run (math.* converts a Tensor with float()).
TAPE_REFUSES = {"global_term_structure"}

assert len({c.name for c in REAL_CASES}) == len(REAL_CASES)
