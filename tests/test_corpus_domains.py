"""Domain corpus (issue #43 item 3): functions from domains the other corpora leave out
(photovoltaics, power systems, seismology, volatility econometrics, survival analysis, Gaussian
processes, psychometrics, reinforcement learning, optics, sports ratings, pharmacokinetics,
traffic flow, structural mechanics, computer graphics, population genetics, battery models,
astronomy photometry), written in the forms of public projects of those domains and not
adapted to jitgrad (``corpus_domains_fns.py``; the table, with each case's status today, in
``corpus_domains.py``).

Every case must keep the status the table records: one that differentiates must give the plain
function's value and a gradient that agrees with central finite differences at two steps and,
where the case has a JAX transcription, with JAX; one that is refused must be refused with a
``JitgradError`` naming the user's file and line. A case whose status changes fails here, so the
table is updated (and a newly differentiated case gets its gradient checked).

The differentiating cases are checked compiled by Numba for a sample (``COMPILED``) and, all of
them, as plain Python (``JITGRAD_DISABLE_JIT=1``, in a process of its own:
``test_domains_as_plain_python``); ``python -m pytest -m heavy`` checks them all compiled.
"""

import os
import re
import subprocess
import sys

import corpus_domains as D
import corpus_domains_fns as F
import pytest
from corpus_domains_run import classify

FNS_PATH = F.__file__
with open(FNS_PATH, encoding="utf-8") as _f:
    FNS_LINES = _f.read().splitlines()

# Small gradients, one per domain or so, NumPy and loop styles: cheap for Numba to compile.
COMPILED = {"weibull_nll_np", "selection_trajectory_nb", "solar_zenith_nb", "elo_history_nb",
            "compute_gae", "garch_forecast_nb", "infusion_conc_nb", "fresnel_unpolarized_np"}

TAKEN = {"ocean", "climate", "cfd", "finance", "pricing", "signal processing", "robotics",
         "orbits", "chemistry", "epidemics", "hydrology", "images", "springs", "filters",
         "splines", "regression", "likelihoods", "time series", "distances", "attention",
         "particles", "stencils", "astrodynamics", "quant finance", "ode integrators", "geodesy",
         "audio filters", "kalman filtering", "molecular potentials", "image restoration"}


def _status_params():
    for c in D.CASES:
        marks = [pytest.mark.heavy] if (c.expected in ("differentiates", "not finite")
                                        and c.name not in COMPILED) else []
        yield pytest.param(c, id=c.name, marks=marks)


def _describe(rec):
    return f"{rec['name']}: {rec['status']} ({rec['message']}), the table says {rec['expected']}"


@pytest.mark.parametrize("case", _status_params())
def test_status(case):
    rec = classify(case, use_jax=True)
    if case.expected == "not finite":  # NaN from 0 * inf, only (see corpus_domains.EXPECTED)
        problems = rec["message"].split("; ")
        assert rec["status"] == "wrong" and all(p.endswith("gradient not finite")
                                                for p in problems), _describe(rec)
        return
    assert rec["status"] == case.expected, _describe(rec)
    if case.jax and case.expected == "differentiates":
        assert rec["jax"] in ("agrees", "unavailable"), _describe(rec)


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c.name, marks=[pytest.mark.xfail(
        strict=True, reason="the refusal names no file and line")] if c.name in D.NO_LOCATION
        else []) for c in D.CASES if c.expected == "refused"])
def test_refusal_names_file_and_line(case):
    rec = classify(case, use_jax=False)
    assert rec["status"] == "refused", _describe(rec)
    m = re.search(r'File "([^"]+)", line (\d+):\n(.*)\n', rec["full_message"])
    assert m, f"{case.name}: the refusal names no file and line:\n{rec['full_message']}"
    assert os.path.samefile(m.group(1), FNS_PATH), m.group(1)
    line = int(m.group(2))
    assert m.group(3).strip() == FNS_LINES[line - 1].strip(), (m.group(3), FNS_LINES[line - 1])


def test_domains_as_plain_python():
    """Every case (the heavy ones included) with the generated source run as plain Python
    (``JITGRAD_DISABLE_JIT=1`` is read when jitgrad is imported: a process of its own)."""
    env = dict(os.environ, JITGRAD_DISABLE_JIT="1")
    run = subprocess.run([sys.executable, "-m", "pytest", __file__, "-m", "not fuzz", "-k",
                          "not as_plain_python", "-q", "-n", "0", "-p", "no:cacheprovider"],
                         env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed and int(passed.group(1)) >= len(D.CASES), run.stdout[-2000:]


def test_table_reaches_beyond_the_other_corpora():
    assert len(D.CASES) >= 110
    assert len({c.project for c in D.CASES}) >= 10
    domains = {c.domain for c in D.CASES}
    assert len(domains) >= 10
    assert not {d.lower() for d in domains} & TAKEN, domains
    assert COMPILED <= {c.name for c in D.CASES if c.expected == "differentiates"}
    assert sum(c.jax for c in D.CASES if c.expected == "differentiates") >= 20
