"""The forward-mode and second-order corpus compiled with Numba, as users run it (issue #21).

`forward_check.check_case` on the fixed sample `forward_check.compiled_sample` (every ninth
case of each corpus table, from the first: 40 of 316, every group covered): jvp and the
forward-mode Jacobian against central differences of ``f``, the reverse-mode Jacobian of the
array-valued functions the same way, the Hessian against central differences of jitgrad.tape's
gradient (or second differences of ``f`` where the tape cannot run it), all per entry. Each
case compiles its jvp, Jacobians and Hessian (3 s of CPU on average). The whole corpus runs
the same checks with the JIT off in ``test_forward.py``, and the corpus tests compile every
case's gradient (the reverse Jacobian of a scalar function), so that is left out here.
Where JAX is installed, the sample's Hessians are also compared with ``jax.hessian`` wherever
JAX traces the function to the same value (16 cases; ~25 s, JAX's eager tracing).
"""

import forward_check as FC
import numpy as np
import pytest

SAMPLE = list(FC.compiled_sample())

# The checks each case may end with other than "ok", with the reason (a refusal names it).
EXPECTED = {("survival_cumprod", "hessian"): ("refused", "np.cumprod")}
# np.random inside the function (issue #25): only grad and value_and_grad replay the draws
EXPECTED.update({(name, check): ("refused", "replayed before it by jitgrad.grad")
                 for name in ("dropout_mlp_loss", "reparam_gaussian_loss", "mc_european_call")
                 for check in ("jvp", "jacobian_forward", "jacobian_reverse", "hessian")})


def test_the_sample_covers_every_group():
    assert {case[0] for case in SAMPLE} == {case[0] for case in FC.groups()}
    assert len(SAMPLE) >= 40  # 40 when the tables held 316 cases


@pytest.mark.parametrize(("group", "name", "fn", "args", "wrt"), SAMPLE,
                         ids=[f"{case[0]}-{case[1]}" for case in SAMPLE])
def test_compiled_case(group, name, fn, args, wrt):
    with np.errstate(all="ignore"):
        checks = FC.check_case(fn, args, wrt, scalar_reverse=False)
    for check, (status, detail, _) in checks.items():
        want, reason = EXPECTED.get((name, check), ("ok", ""))
        assert status == want, f"{check}: {status}: {detail[:3000]}"
        assert reason in detail


# The sample's cases JAX traces to the same value (the rest branch on traced values, call
# float() or write in place); their compiled Hessians against jax.hessian, to 1e-9 per entry.
JAX_TRACEABLE = 16  # (JAX 0.10 traces 17: a floor, the oracle checks at least these)


def test_compiled_hessians_against_jax():
    pytest.importorskip("jax")
    statuses = {}
    with np.errstate(all="ignore"):
        for group, name, fn, args, wrt in SAMPLE:
            if np.ndim(fn(*FC._copied(args))) == 0 and (name, "hessian") not in EXPECTED:
                status, detail, _ = FC.check_jax_hessian(fn, args, wrt[0])
                assert status != "wrong", f"{name}: {detail[:3000]}"
                statuses[name] = status
    assert sum(s == "ok" for s in statuses.values()) >= JAX_TRACEABLE, statuses

