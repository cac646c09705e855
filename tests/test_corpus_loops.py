"""Loop/branch corpus: jitgrad's values and gradients vs plain Python and finite differences."""

import pytest
from corpus import LOOP_CASES, RETURNS_IN_LOOP_CASES
from corpus_check import case_params, check_single_grad, check_value_and_grad, point_params


@pytest.mark.parametrize(("case", "idx"), point_params(LOOP_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


@pytest.mark.parametrize("by", ["position", "name"])
@pytest.mark.parametrize("case", case_params(LOOP_CASES))
def test_grad_single_argument(case, by):
    check_single_grad(case, by)


@pytest.mark.parametrize(("case", "idx"), point_params(RETURNS_IN_LOOP_CASES))
def test_return_inside_loop(case, idx):
    """``return`` inside a loop or branch is supported (lowered to flags that guard the rest)."""
    check_value_and_grad(case, idx)
