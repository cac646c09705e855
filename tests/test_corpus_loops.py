"""Loop/branch corpus: jitgrad's values and gradients vs plain Python and finite differences."""

import pytest
from corpus import LOOP_CASES, RETURNS_IN_LOOP_CASES
from corpus_check import case_params, check_single_grad, check_value_and_grad, point_params

import jitgrad


@pytest.mark.parametrize(("case", "idx"), point_params(LOOP_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


@pytest.mark.parametrize("by", ["position", "name"])
@pytest.mark.parametrize("case", case_params(LOOP_CASES))
def test_grad_single_argument(case, by):
    check_single_grad(case, by)


@pytest.mark.parametrize("case", case_params(RETURNS_IN_LOOP_CASES))
def test_return_inside_loop_is_correct_or_refused(case):
    """jitgrad may refuse ``return`` inside a loop, but only with UnsupportedError."""
    try:
        for idx in range(len(case.points)):
            check_value_and_grad(case, idx)
    except jitgrad.UnsupportedError as err:
        assert str(err), "UnsupportedError should say what is unsupported"
