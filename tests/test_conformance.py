"""The conformance table (issue #43): every probe of `conformance.py` keeps the status the
documentation gives it (`docs/conformance.md`), and none is wrong or crashes.

The whole table runs as plain Python (``JITGRAD_DISABLE_JIT=1``, read when jitgrad is imported:
a process of its own), each gradient checked against central finite differences at two steps;
a sample of rows, one per kind of form, is compiled with Numba as users run it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(os.path.dirname(HERE), "docs", "conformance.md")
COMPILED_SAMPLE = (  # rows compiled with Numba: loops, lists, closures, types, SciPy
    "py-loop-index-read-after", "npy-list-of-arrays", "py-closure-over-local",
    "py-lambda-local", "py-star-args-call", "py-isinstance-ndarray", "py-map-over-array",
    "as-t-logpdf", "py-for-else-break-taken",
)


def _documented() -> dict[str, str]:
    """id -> status, from the table's rows (cells split at pipes a note does not escape)."""
    statuses = {}
    with open(DOC, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("| `"):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            statuses[cells[0].strip("`")] = cells[4].lower()
    return statuses


def test_every_row_keeps_its_documented_status(tmp_path):
    out = tmp_path / "conformance.json"
    env = dict(os.environ, JITGRAD_DISABLE_JIT="1")
    run = subprocess.run([sys.executable, os.path.join(HERE, "conformance_run.py"), "--json",
                          str(out), "--timeout", "120"], env=env, capture_output=True,
                         text=True, timeout=900, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    records = json.loads(out.read_text())
    bad = [f"{r['id']}: {r['status']}: {r['message']}" for r in records
           if r["status"] in ("wrong", "crash", "probe-error")]
    assert not bad, "\n".join(bad)
    documented = _documented()
    assert set(documented) == {r["id"] for r in records}, "regenerate docs/conformance.md"
    changed = [f"{r['id']}: documented {documented[r['id']]}, now {r['status']}"
               for r in records if documented[r["id"]] != r["status"]]
    assert not changed, ("rows changed status (regenerate docs/conformance.md with "
                         "tests/conformance_run.py --markdown):\n" + "\n".join(changed))


@pytest.mark.parametrize("row_id", COMPILED_SAMPLE)
def test_sample_compiled(row_id):
    sys.path.insert(0, os.path.dirname(HERE))
    from conformance_run import ROWS, run_row

    row = next(r for r in ROWS if r.id == row_id)
    rec = run_row(row, timeout=300)
    assert rec["status"] in ("differentiates", "passes through"), rec
