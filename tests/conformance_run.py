"""Run the conformance table (tests/conformance.py) and report what jitgrad actually does.

    python tests/conformance_run.py [--json OUT] [--only ID,ID...] [--source S] [--timeout SEC]
                                    [--njit-check] [-v]

For each row: the probe is evaluated as plain Python; its gradient is computed by central
finite differences at two steps; jitgrad.grad(fn, wrt=row.wrt) is called on fresh arguments.
Status:
  "differentiates" / "passes through"  jitgrad's gradient matches finite differences
  "refused"   jitgrad raised a JitgradError (its first message line is recorded)
  "wrong"     a gradient that does not match finite differences (or has another structure)
  "crash"     any other exception (type and message), or a time-out
  "probe-error"  the probe itself failed as plain Python (a bug in the table, not in jitgrad)

JITGRAD_DISABLE_JIT is honoured as set in the environment (=1: the generated code runs as plain
Python, fast). --njit-check instead compiles every numba-* probe with numba.njit and compares
its value with plain Python's (checks that the probes are code Numba compiles).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import inspect
import io
import json
import math
import os
import re
import signal
import sys
import time
import traceback
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jitgrad
from tests.conformance import ROWS, Row

RTOL = 1e-5
ATOL = 1e-7
FD_EPS = 1e-6


class Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise Timeout()


def first_line(msg: str) -> str:
    for line in str(msg).splitlines():
        if line.strip():
            return line.strip()
    return ""


# ---- trees of arguments -------------------------------------------------------------

def _float_paths(v, path=()):
    """Paths to the differentiable leaves of v (floats and float arrays)."""
    if isinstance(v, bool):
        return []
    if isinstance(v, float):
        return [path]
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        return [path]
    if isinstance(v, (tuple, list)):
        out = []
        for i, e in enumerate(v):
            out += _float_paths(e, path + (i,))
        return out
    if isinstance(v, dict):
        out = []
        for k, e in v.items():
            out += _float_paths(e, path + (k,))
        return out
    return []


def _get(v, path):
    for p in path:
        v = v[p]
    return v


def _replace(v, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(v, tuple):
        return tuple(_replace(e, rest, new) if i == head else e for i, e in enumerate(v))
    if isinstance(v, list):
        return [_replace(e, rest, new) if i == head else e for i, e in enumerate(v)]
    if isinstance(v, dict):
        return {k: (_replace(e, rest, new) if k == head else e) for k, e in v.items()}
    raise TypeError(f"cannot descend into {type(v).__name__}")


def _value(row: Row, k: int, path, leaf) -> float:
    args = list(row.args())
    args[k] = _replace(args[k], path, leaf)
    out = row.fn(*args)
    return float(np.asarray(out).real) if np.iscomplexobj(out) else float(out)


def _fd_leaf(row: Row, k: int, path, x, eps: float):
    if isinstance(x, float):
        h = eps * max(1.0, abs(x))
        up, dn = x + h, x - h
        return (_value(row, k, path, up) - _value(row, k, path, dn)) / (up - dn)
    g = np.zeros(x.shape)
    for idx in np.ndindex(*x.shape):
        xi = float(x[idx])
        h = eps * max(1.0, abs(xi))
        xp = x.astype(np.float64).copy()
        xm = xp.copy()
        xp[idx] = xi + h
        xm[idx] = xi - h
        step = xp[idx] - xm[idx]  # (before the calls: a probe may write into its argument)
        g[idx] = (_value(row, k, path, xp) - _value(row, k, path, xm)) / step
    return g


def _fd_tree(row: Row, k: int, v, eps: float, path=()):
    if isinstance(v, bool):
        return None
    if isinstance(v, float) or (isinstance(v, np.ndarray) and v.dtype.kind == "f"):
        return _fd_leaf(row, k, path, v, eps)
    if isinstance(v, (tuple, list)):
        out = [_fd_tree(row, k, e, eps, path + (i,)) for i, e in enumerate(v)]
        return tuple(out) if isinstance(v, tuple) else out
    if isinstance(v, dict):
        return {key: _fd_tree(row, k, e, eps, path + (key,)) for key, e in v.items()}
    return None


def _positions(row: Row):
    wrt = row.wrt if isinstance(row.wrt, tuple) else (row.wrt,)
    params = list(inspect.signature(row.fn).parameters)
    return [w if isinstance(w, int) else params.index(w) for w in wrt]


def finite_differences(row: Row, eps: float):
    base = row.args()
    grads = [_fd_tree(row, k, base[k], eps) for k in _positions(row)]
    return grads if isinstance(row.wrt, tuple) else grads[0]


# ---- comparison -----------------------------------------------------------------------

def _compare(g, fd, scale, rtol, path="") -> str | None:
    """None when g matches fd; otherwise a description of the first mismatch."""
    if fd is None:
        return None
    if isinstance(fd, (tuple, list)):
        if not isinstance(g, (tuple, list)) or len(g) != len(fd):
            return f"{path or 'gradient'}: expected a {type(fd).__name__} of {len(fd)}, got {type(g).__name__}"
        for i, (a, b) in enumerate(zip(g, fd)):
            m = _compare(a, b, scale, rtol, f"{path}[{i}]")
            if m:
                return m
        return None
    if isinstance(fd, dict):
        if not isinstance(g, dict) or set(g) != set(fd):
            return f"{path or 'gradient'}: expected a dict with keys {sorted(fd)}, got {type(g).__name__}"
        for key in fd:
            m = _compare(g[key], fd[key], scale, rtol, f"{path}[{key!r}]")
            if m:
                return m
        return None
    try:
        ga = np.asarray(g, dtype=np.float64)
    except (TypeError, ValueError):
        return f"{path or 'gradient'}: not numeric ({type(g).__name__})"
    fa = np.asarray(fd, dtype=np.float64)
    if ga.shape != fa.shape:
        return f"{path or 'gradient'}: shape {ga.shape}, expected {fa.shape}"
    atol = ATOL * max(1.0, scale)
    bad = ~(np.abs(ga - fa) <= atol + rtol * np.abs(fa))
    if np.any(bad):
        i = tuple(int(v) for v in np.argwhere(bad)[0]) if ga.ndim else ()
        where = f"{path}{list(i) if i else ''}"
        return (f"gradient{where} = {float(ga[i]) if i else float(ga):.10g}, "
                f"finite differences {float(fa[i]) if i else float(fa):.10g}")
    return None


# ---- one row ----------------------------------------------------------------------------

def run_row(row: Row, timeout: float) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):      # probes that print
        return _run_row(row, timeout)


def _run_row(row: Row, timeout: float) -> dict:
    rec = {"id": row.id, "source": row.source, "section": row.section, "feature": row.feature,
               "kind": row.kind, "reason": row.reason, "status": "", "message": "", "seconds": 0.0}
    rtol = row.opts.get("rtol", RTOL)
    eps = row.opts.get("fd_eps", FD_EPS)
    # the probe as plain Python, and its finite differences
    try:
        value = row.fn(*row.args())
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"probe value is {value}")
        fd1 = finite_differences(row, eps)
        fd2 = finite_differences(row, eps * 10.0)
    except Exception as e:  # noqa: BLE001
        rec.update(status="probe-error", message=f"{type(e).__name__}: {first_line(e)}")
        return rec
    fd_note = ""
    if _compare(fd2, fd1, abs(value), max(rtol, 1e-4)) is not None:
        fd_note = " (finite differences unstable at this point)"
    # jitgrad
    t0 = time.perf_counter()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        g = jitgrad.grad(row.fn, wrt=row.wrt)(*row.args())
        signal.setitimer(signal.ITIMER_REAL, 0)
    except jitgrad.JitgradError as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        rec.update(status="refused", message=f"{type(e).__name__}: {first_line(e)}")
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        return rec
    except Timeout:
        rec.update(status="crash", message=f"timeout after {timeout:g} s")
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        return rec
    except BaseException as e:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(e, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(e.__traceback__)
        where = f" [{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}]" if tb else ""
        rec.update(status="crash", message=f"{type(e).__name__}: {first_line(e)}{where}")
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        return rec
    rec["seconds"] = round(time.perf_counter() - t0, 3)
    m1 = _compare(g, fd1, abs(value), rtol)
    m2 = _compare(g, fd2, abs(value), rtol) if m1 else None
    if m1 is None or m2 is None:
        rec["status"] = "passes through" if row.kind == "passes through" else "differentiates"
    else:
        rec.update(status="wrong", message=m1 + fd_note)
    return rec


def refusal_pattern(msg: str) -> str:
    """A refusal message with its particulars replaced, to group refusals by cause."""
    m = msg
    m = re.sub(r"'[^']*'", "'…'", m)
    m = re.sub(r"`[^`]*`", "`…`", m)
    m = re.sub(r"\bnp\.(?:random\.)?[A-Za-z_][\w.]*", "np.<fn>", m)
    m = re.sub(r"scipy\.[\w.]+", "scipy.<fn>", m)
    m = re.sub(r"calling \w[\w.]*", "calling <fn>", m)
    m = re.sub(r"math\.\w+", "math.<fn>", m)
    m = re.sub(r"attribute \.\w+", "attribute .<name>", m)
    m = re.sub(r"method \.\w+", "method .<name>", m)
    m = re.sub(r"of an? \w+( is)", r"of a <type>\1", m)
    m = re.sub(r"is an? (array of dtype )?\w+(\[\w+\])?;", "is a <type>;", m)
    m = re.sub(r"\.(insert|extend|pop|reverse|sort)\b", ".<method>", m)
    m = re.sub(r"\b_list_c\d+\b", "<list>", m)
    return m[:140]


def njit_check(row: Row) -> dict:
    import numba
    rec = {"id": row.id, "source": row.source, "feature": row.feature, "status": "", "message": ""}
    try:
        expected = float(row.fn(*row.args()))
        got = float(numba.njit(row.fn)(*row.args()))
        if "random" in row.section:
            rec["status"] = "compiles"          # Numba's generators are not NumPy's
        elif abs(got - expected) <= 1e-6 * max(1.0, abs(expected)):
            rec["status"] = "compiles"
        else:
            rec.update(status="differs", message=f"numba {got!r}, python {expected!r}")
    except Exception as e:  # noqa: BLE001
        rec.update(status="numba-fails", message=f"{type(e).__name__}: {first_line(e)}")
    return rec


# ---- main ------------------------------------------------------------------------------

STATUSES = ["differentiates", "passes through", "refused", "wrong", "crash", "probe-error"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write one record per row to this file")
    ap.add_argument("--only", help="comma-separated row ids")
    ap.add_argument("--source", help="only rows of this source")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per row (default 60)")
    ap.add_argument("--njit-check", action="store_true",
                    help="compile the numba-* probes with numba.njit instead")
    ap.add_argument("--markdown", help="write the conformance table (docs/conformance.md)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args(argv)

    warnings.simplefilter("ignore")
    rows = ROWS
    if ns.only:
        want = set(ns.only.split(","))
        rows = [r for r in rows if r.id in want]
    if ns.source:
        rows = [r for r in rows if r.source == ns.source]

    if ns.njit_check:
        rows = [r for r in rows if r.source.startswith("numba-")]
        recs = []
        for r in rows:
            rec = njit_check(r)
            recs.append(rec)
            if ns.verbose or rec["status"] != "compiles":
                print(f"{rec['status']:12} {r.id:40} {rec['message'][:150]}", flush=True)
        c = collections.Counter(x["status"] for x in recs)
        print(f"\n{len(recs)} numba probes: " + ", ".join(f"{k} {v}" for k, v in c.most_common()))
        if ns.json:
            with open(ns.json, "w") as fh:
                json.dump(recs, fh, indent=1)
        return 0

    t0 = time.perf_counter()
    recs = []
    for r in rows:
        rec = run_row(r, ns.timeout)
        recs.append(rec)
        if ns.verbose or rec["status"] in ("wrong", "crash", "probe-error"):
            print(f"{rec['status']:15} {r.id:40} {rec['message'][:160]}", flush=True)
    elapsed = time.perf_counter() - t0

    jit = "disabled (plain Python)" if os.environ.get("JITGRAD_DISABLE_JIT") == "1" else "compiled"
    print(f"\n{len(recs)} rows in {elapsed:.0f} s, generated code {jit}\n")
    sources = sorted({x["source"] for x in recs})
    w = max(len(s) for s in STATUSES)
    print(f"{'source':16}" + "".join(f"{s:>{w + 1}}" for s in STATUSES) + f"{'total':>7}")
    for src in sources + ["all"]:
        sel = [x for x in recs if src == "all" or x["source"] == src]
        c = collections.Counter(x["status"] for x in sel)
        print(f"{src:16}" + "".join(f"{c.get(s, 0):>{w + 1}}" for s in STATUSES) + f"{len(sel):>7}")
    print()
    ck = collections.Counter((x["kind"], x["status"]) for x in recs)
    print("expected kind -> status:")
    for (kind, status), n in sorted(ck.items()):
        print(f"  {kind:16} -> {status:15} {n}")
    refused = [x for x in recs if x["status"] == "refused"]
    if refused:
        groups = collections.defaultdict(list)
        for x in refused:
            groups[refusal_pattern(x["message"])].append(x["id"])
        print(f"\nrefused, grouped by cause ({len(groups)} groups):")
        for pat, ids in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            more = f" ... (+{len(ids) - 4})" if len(ids) > 4 else ""
            print(f"  {len(ids):4}  {pat}\n        {', '.join(ids[:4])}{more}")
    if ns.json:
        with open(ns.json, "w") as fh:
            json.dump(recs, fh, indent=1)
        print(f"\nwrote {ns.json}")
    if ns.markdown:
        with open(ns.markdown, "w", encoding="utf-8") as fh:
            fh.write(markdown(recs))
        print(f"wrote {ns.markdown}")
    return 0


SHOWN = {"differentiates": "differentiates", "passes through": "passes through",
         "refused": "refused", "wrong": "WRONG", "crash": "CRASH", "probe-error": "probe error"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def markdown(recs) -> str:
    """The conformance table as the documentation shows it: a summary by source, then one row
    per feature with its status and, for a refusal, jitgrad's reason (which says what to write
    instead) or why no derivative exists. `tests/test_conformance.py` checks that every row
    still has the status written here."""
    ok = ("differentiates", "passes through")
    lines = ["# Conformance: what jitgrad differentiates", "",
             ("One row per feature of the three surfaces jitgrad aims to cover: "
             "Python and NumPy as Numba compiles them (its reference pages *Supported Python "
             "features* and *Supported NumPy features*), NumPy and SciPy as autograd "
             "differentiates them (its `numpy_vjps.py`, `numpy_jvps.py` and `scipy/` "
             "wrappers), and the plain Python numerical code uses around its numbers. Each "
             "row is a probe in `tests/conformance_fns.py` (table: `tests/conformance.py`); "
             "`tests/test_conformance.py` runs every probe and fails when a row's status "
             "differs from the one written here. Regenerate with"),
             "", "```bash", ("JITGRAD_DISABLE_JIT=1 python tests/conformance_run.py "
             "--markdown docs/conformance.md"), "```", "",
             ("*differentiates*: the gradient agrees with central finite differences; *passes "
             "through*: the feature carries no derivative and the function around it "
             "differentiates; *refused*: jitgrad names the construct and the user's line "
             "(the note is its message, which says what to write instead)."), "",
             "| source | rows | differentiates or passes through | share |",
             "|---|---:|---:|---:|"]
    for src in sorted({r["source"] for r in recs}) + ["all"]:
        sel = [r for r in recs if src == "all" or r["source"] == src]
        n = sum(r["status"] in ok for r in sel)
        lines.append(f"| {src} | {len(sel)} | {n} | {100 * n / len(sel):.0f} % |")
    lines += ["", "| id | source | section | feature | status | note |", "|---|---|---|---|---|---|"]
    for r in recs:
        note = r["message"] if r["status"] not in ok else ""
        if r.get("reason") and r["status"] not in ok:
            note = f"{note} ({r['reason']})" if note else r["reason"]
        lines.append(f"| `{r['id']}` | {r['source']} | {_cell(r['section'])} | "
                     f"{_cell(r['feature'])} | {SHOWN.get(r['status'], r['status'])} | "
                     f"{_cell(note)[:200]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
