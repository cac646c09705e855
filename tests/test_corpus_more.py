"""The third real-code corpus (issue #11, corpus_more_fns): jitgrad vs plain Python and finite differences for every
float argument, and the tape as the third oracle."""

import numpy as np
import pytest
from corpus_check import (
    call_checked,
    case_params,
    check_single_grad,
    check_value_and_grad,
    check_value_and_grad_result,
    copied,
    point_params,
    value_and_grad_fn,
)
from corpus_more import MORE_CASES, TAPE_REFUSES

from jitgrad import UnsupportedError, tape


@pytest.mark.parametrize(("case", "idx"), point_params(MORE_CASES))
def test_value_and_grad(case, idx):
    check_value_and_grad(case, idx)


@pytest.mark.parametrize("case", case_params(MORE_CASES))
def test_grad_single_argument(case):
    check_single_grad(case, "position")


@pytest.mark.parametrize(("case", "idx"), point_params(MORE_CASES))
def test_tape_agrees(case, idx):
    tape_fn = tape.value_and_grad(case.fn, wrt=case.wrt)
    if case.name in TAPE_REFUSES:
        with pytest.raises(UnsupportedError):
            tape_fn(*copied(case.points[idx]))
        return
    out = call_checked(tape_fn, case, idx)
    check_value_and_grad_result(case, idx, out)
    _, grads = out
    _, jg_grads = call_checked(value_and_grad_fn(case, case.wrt), case, idx)
    for k, g, jg in zip(case.wrt, grads, jg_grads):
        np.testing.assert_allclose(g, jg, rtol=1e-8, atol=1e-12 * max(1.0, np.max(np.abs(jg))),
                                   err_msg=f"{case.name}: tape and jitgrad disagree (arg {k})")
