"""The third real-code corpus (issue #11, corpus_more_fns): jitgrad vs plain Python and finite differences for every
float argument, and the tape as the third oracle."""

import pytest
from corpus_check import (
    case_params,
    check_single_grad,
    check_tape_agrees,
    check_value_and_grad,
    point_params,
)
from corpus_more import MORE_CASES, TAPE_REFUSES


@pytest.mark.parametrize(("case", "idx"), point_params(MORE_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


# Every fourth case: the single-argument path is the same for all, and each case compiles
# a gradient of its own (the whole table is checked by test_value_and_grad).
@pytest.mark.parametrize("case", case_params(MORE_CASES[::4]))
def test_grad_single_argument(case):
    check_single_grad(case, "position")


@pytest.mark.parametrize(("case", "idx"), point_params(MORE_CASES))
def test_tape_agrees(case, idx):
    check_tape_agrees(case, idx, TAPE_REFUSES)
