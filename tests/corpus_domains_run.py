"""Classify every case of the domain corpus (``corpus_domains.py``, issue #43 item 3).

    JITGRAD_DISABLE_JIT=1 python tests/corpus_domains_run.py [--json OUT] [--only NAME ...]
                                                             [--isolated] [--no-jax]

Each case gets one status:

* ``differentiates``: jitgrad's value is the plain function's, and its gradient agrees with
  central finite differences at two relative steps (1e-5 and 1e-7; rtol ``case.tol``, 1e-5 by
  default) and, where the case has a JAX transcription (``corpus_domains_jax``), with JAX's;
* ``refused``: a ``JitgradError`` (the first line of its message is recorded);
* ``wrong``: a value or gradient that disagrees (with the finite differences or with JAX);
* ``crash``: any other exception from jitgrad (or a case running past its time limit).

Every case runs on fresh arguments from its maker, under a time limit, its exceptions caught:
one case cannot change another's status. ``--isolated`` goes further and runs each case in a
process of its own. The summary prints counts, per-domain shares and every non-differentiating
case; ``--json`` writes one record per case.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus_domains as D

FD_STEPS = (1e-5, 1e-7)
VALUE_RTOL = 1e-10
JAX_RTOL = 1e-7
TIME_LIMIT = 120


def _copied(args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a.copy())
        elif isinstance(a, dict):
            out.append({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in a.items()})
        else:
            out.append(a)
    return tuple(out)


def _value(fn, args):
    return float(fn(*_copied(args)))


def fd_grad(fn, args, k, eps):
    """Central differences w.r.t. argument ``k``, each element stepped by ``eps`` relative to
    its magnitude (for an array's element, at least a tenth of the array's mean magnitude, so
    that entries near 0 are not stepped by amounts lost to rounding; ``eps`` itself at 0),
    the quotient over the step float64 represents."""
    x = args[k]
    if isinstance(x, np.ndarray):
        g = np.zeros(x.shape)
        floor = 0.1 * float(np.mean(np.abs(x))) if x.size else 0.0
        for idx in np.ndindex(*x.shape):
            h = eps * max(abs(float(x[idx])), floor) or eps
            xp, xm = x.copy(), x.copy()
            xp[idx] += h
            xm[idx] -= h
            fp = _value(fn, args[:k] + (xp,) + args[k + 1:])
            fm = _value(fn, args[:k] + (xm,) + args[k + 1:])
            g[idx] = (fp - fm) / (xp[idx] - xm[idx])
        return g
    x = float(x)
    h = eps * abs(x) or eps
    xp, xm = x + h, x - h
    fp = _value(fn, args[:k] + (xp,) + args[k + 1:])
    fm = _value(fn, args[:k] + (xm,) + args[k + 1:])
    return (fp - fm) / (xp - xm)


def _close(g, ref, tol, value):
    """``g`` within rtol ``tol`` of ``ref``, with an absolute floor of 1e-2 * tol times the
    larger of |value| and |ref| (entries that are 0 up to rounding)."""
    scale = max(abs(value), float(np.max(np.abs(ref))) if np.size(ref) else 0.0, 1e-300)
    err = np.abs(np.asarray(g, dtype=float) - ref)
    bound = tol * np.abs(ref) + 1e-2 * tol * scale
    return bool(np.all(err <= bound)), float(np.max(err / (np.abs(ref) + 1e-2 * scale)))


def _first_line(text):
    for line in str(text).splitlines():
        if line.strip():
            return line.strip()
    return ""


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"ran past {TIME_LIMIT} s")


def classify(case, use_jax=True):
    """One case's record: status, message (first line), full message, details."""
    import jitgrad
    from jitgrad import JitgradError

    rec = {"name": case.name, "domain": case.domain, "project": case.project,
           "wrt": list(case.wrt), "expected": case.expected, "status": None, "message": "",
           "full_message": "", "jax": None, "seconds": 0.0}
    t0 = time.perf_counter()
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    if old is not None:
        signal.alarm(TIME_LIMIT)
    try:
        args = case.make()
        expected_value = _value(case.fn, args)
        try:
            value, grads = jitgrad.value_and_grad(case.fn, wrt=case.wrt)(*_copied(args))
        except JitgradError as e:
            rec.update(status="refused", message=_first_line(e), full_message=str(e))
            return rec
        except _Timeout as e:
            rec.update(status="crash", message=f"timeout: {e}")
            return rec
        except Exception as e:  # noqa: BLE001 -- anything else is a crash inside jitgrad
            rec.update(status="crash", message=f"{type(e).__name__}: {_first_line(e)}",
                       full_message=str(e))
            return rec
        if not np.isclose(float(value), expected_value, rtol=VALUE_RTOL, atol=1e-12):
            rec.update(status="wrong", message=f"value {float(value)!r} differs from the plain "
                                               f"function's {expected_value!r}")
            return rec
        problems = []
        for k, g in zip(case.wrt, grads):
            x = args[k]
            if isinstance(x, np.ndarray) and np.shape(g) != x.shape:
                problems.append(f"argument {k}: gradient of shape {np.shape(g)}, not {x.shape}")
                continue
            if not np.all(np.isfinite(g)):
                problems.append(f"argument {k}: gradient not finite")
                continue
            for eps in FD_STEPS:
                ok, rel = _close(g, fd_grad(case.fn, args, k, eps), case.tol, expected_value)
                if not ok:
                    problems.append(f"argument {k}: differs from central differences at step "
                                    f"{eps:g} (relative error {rel:.2g})")
        if use_jax and case.jax and not problems:
            rec["jax"] = _jax_check(case, args, expected_value, grads, problems)
        if problems:
            rec.update(status="wrong", message="; ".join(problems))
        else:
            rec["status"] = "differentiates"
        return rec
    except _Timeout as e:
        rec.update(status="crash", message=f"timeout: {e}")
        return rec
    finally:
        if old is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        rec["seconds"] = round(time.perf_counter() - t0, 3)


def _jax_check(case, args, expected_value, grads, problems):
    try:
        from corpus_domains_jax import jax_value_and_grad
    except ImportError:
        return "unavailable"
    try:
        jvalue, jgrads = jax_value_and_grad(case, args)
    except ImportError:
        return "unavailable"
    if not np.isclose(jvalue, expected_value, rtol=1e-10, atol=1e-12):
        raise AssertionError(f"{case.name}: the JAX transcription computes {jvalue!r}, not "
                             f"{expected_value!r}")
    for k, g, jg in zip(case.wrt, grads, jgrads):
        scale = max(1e-300, float(np.max(np.abs(jg))))
        if not np.allclose(g, jg, rtol=JAX_RTOL, atol=1e-9 * scale):
            rel = float(np.max(np.abs(np.asarray(g) - jg) / (np.abs(jg) + 1e-9 * scale)))
            problems.append(f"argument {k}: differs from JAX (relative error {rel:.2g})")
    return "differs" if problems else "agrees"


# ---- reporting ---------------------------------------------------------------------------------

def _pattern(message):
    """A refusal message with the names and values it quotes taken out, to group by cause."""
    m = re.sub(r"`[^`]*`", "`_`", message)
    m = re.sub(r"'[^']*'", "'_'", m)
    m = re.sub(r"\b(np|numpy|scipy|math)(\.\w+)+", "<fn>", m)
    m = re.sub(r"\d+", "N", m)
    return m


def summarize(records, out=sys.stdout):
    total = len(records)
    counts = collections.Counter(r["status"] for r in records)
    projects = {r["project"] for r in records}
    domains = sorted({r["domain"] for r in records})
    print(f"{total} functions, {len(domains)} domains, {len(projects)} projects", file=out)
    for status in ("differentiates", "refused", "wrong", "crash"):
        print(f"  {status:15s} {counts.get(status, 0):4d}  "
              f"({100.0 * counts.get(status, 0) / total:.0f}%)", file=out)
    jax_n = collections.Counter(r["jax"] for r in records if r["jax"])
    print(f"  compared with JAX: {dict(jax_n)}", file=out)
    print("\nper domain (differentiates / total):", file=out)
    for d in domains:
        rs = [r for r in records if r["domain"] == d]
        n = sum(r["status"] == "differentiates" for r in rs)
        print(f"  {d:26s} {n:2d}/{len(rs):2d}  ({100.0 * n / len(rs):.0f}%)", file=out)
    for status in ("wrong", "crash"):
        rs = [r for r in records if r["status"] == status]
        if rs:
            print(f"\n{status}:", file=out)
            for r in rs:
                print(f"  {r['name']} [{r['domain']}]: {r['message']}", file=out)
    refused = [r for r in records if r["status"] == "refused"]
    if refused:
        groups = collections.defaultdict(list)
        for r in refused:
            groups[_pattern(r["message"])].append(r)
        print("\nrefused, by cause:", file=out)
        for pat, rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(rs):2d}  {pat}", file=out)
            for r in rs:
                print(f"        {r['name']}: {r['message']}", file=out)
    changed = [r for r in records if r["status"] != r["expected"]]
    if changed:
        print("\nstatus differs from the table's EXPECTED:", file=out)
        for r in changed:
            print(f"  {r['name']}: {r['expected']} -> {r['status']}", file=out)


def _run_isolated(case, use_jax):
    cmd = [sys.executable, os.path.abspath(__file__), "--only", case.name, "--json", "-",
           "--quiet"]
    if not use_jax:
        cmd.append("--no-jax")
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT + 60,
                             check=False)
    except subprocess.TimeoutExpired:
        return {"name": case.name, "domain": case.domain, "project": case.project,
                "wrt": list(case.wrt), "expected": case.expected, "status": "crash",
                "message": "timeout (isolated process)", "full_message": "", "jax": None,
                "seconds": float(TIME_LIMIT + 60)}
    try:
        return json.loads(run.stdout)[0]
    except (ValueError, IndexError):
        return {"name": case.name, "domain": case.domain, "project": case.project,
                "wrt": list(case.wrt), "expected": case.expected, "status": "crash",
                "message": f"process exited {run.returncode}: {_first_line(run.stderr[-500:])}",
                "full_message": run.stderr[-2000:], "jax": None, "seconds": 0.0}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the records as JSON to this file ('-': stdout)")
    ap.add_argument("--only", nargs="*", help="case names to run")
    ap.add_argument("--isolated", action="store_true", help="one process per case")
    ap.add_argument("--no-jax", action="store_true", help="skip the JAX comparisons")
    ap.add_argument("--quiet", action="store_true", help="no summary")
    opts = ap.parse_args(argv)
    cases = D.CASES
    if opts.only:
        unknown = set(opts.only) - set(D.BY_NAME)
        if unknown:
            ap.error(f"unknown cases: {sorted(unknown)}")
        cases = [D.BY_NAME[n] for n in opts.only]
    records = []
    for case in cases:
        rec = _run_isolated(case, not opts.no_jax) if opts.isolated else \
            classify(case, use_jax=not opts.no_jax)
        records.append(rec)
        if not opts.quiet and opts.json != "-":
            print(f"{rec['status']:15s} {rec['seconds']:7.2f}s  {case.name}", file=sys.stderr)
    if opts.json == "-":
        json.dump(records, sys.stdout, indent=1)
    elif opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump(records, f, indent=1)
    if not opts.quiet:
        summarize(records, out=sys.stdout if opts.json != "-" else sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
