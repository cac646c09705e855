"""Measure route (a) (jitgrad's AST frontend) against route (b) (Numba IR → Python source →
jitgrad) on a corpus of functions route (a) refused when the spike was written (issue #43).

    python bench/frontend_spike/measure.py [-v]

Per route: accepted (a gradient came back), of those agreeing with finite differences, refused
(a clean JitgradError, or the translator's Refused for route b), wrong (a gradient that
disagrees), crash (any other exception); timings of the frontend step; one translated sample.
Runs with JITGRAD_DISABLE_JIT=1 (generated code run as plain Python) unless already set.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import os
import sys
import time
import traceback

os.environ.setdefault("JITGRAD_DISABLE_JIT", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [HERE, os.path.join(ROOT, "tests")]

import numba_ir_route as B
import numpy as np
import own_fns

import jitgrad
from jitgrad import JitgradError
from jitgrad.api import numeric_grad

V3 = np.array([1.0, -2.0, 3.0]) * 0.3
M22 = np.array([[2.0, 1.0], [1.0, 3.0]])

# refused_fns.py: the functions with a gradient to compare (scalar result, differentiable at
# the point); the others there are refused by design (returns an array, fft, ...).
REFUSED_ARGS = {
    "uses_try": (2.0,), "try_around_a_call": (M22,), "uses_string": (2.0,),
    "uses_string_argument": (V3,), "uses_raise": (-1.0,), "reraises": (-1.0,),
    "raise_with_runtime_message": (-1.0,), "calls_raising_helper_in_branch": (-1.0,),
    "string_against_number": (2.0, "a"), "uses_nested_def": (2.0,), "uses_class": (2.0,),
    "uses_inner_lambda": (3.5,), "uses_list_comprehension": (V3,),
    "uses_generator_expression": (2.0,), "uses_dict": (2.0,), "uses_walrus": (0.1,),
    "uses_global_statement": (2.0,), "uses_import": (2.0,), "uses_del": (2.0,),
    "uses_match": (2.0,), "uses_starargs": (2.0, 3.0), "uses_kwonly": (2.0,),
    "closure": (2.0,), "lambda_fn": (2.0,), "no_source": (2.0,),
    "print_as_value": (2.0,), "printing_a_writing_call": (V3,), "uses_round": (2.3,),
    "uses_sorted_builtin": (V3,), "recursive": (2.0, 3), "rank_changing_loop": (V3,),
    "one_branch": (2.0,), "loop_only": (2.0,), "is_comparison": (2.0,),
    "callee_with_string": (2.0,), "calls_bad_helper": (2.0,),
}


def corpus():
    cases = []
    R = importlib.import_module("refused_fns")
    for name, args in REFUSED_ARGS.items():
        fn = getattr(R, name, None)
        if fn is not None:
            cases.append(("refused_fns", name, fn, args, 0))
    model = getattr(R, "Model", None)
    if model is not None:
        cases.append(("refused_fns", "Model.loss (bound method)", model(3.0).loss, (2.0,), 0))
    for modname in ("conformance_fns", "corpus_domains_fns"):
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        for item in getattr(mod, "CASES", None) or getattr(mod, "PROBES", None) or []:
            fn, args, wrt = _case(mod, item)
            if fn is not None:
                cases.append((modname, getattr(fn, "__name__", str(fn)), fn, args, wrt))
    for fn, args, wrt in own_fns.CASES:
        cases.append(("own_fns", fn.__name__, fn, args, wrt))
    return cases


def _case(mod, item):
    """A (fn, args, wrt) from a helper file's table, whatever its exact shape."""
    if isinstance(item, dict):
        fn = item.get("fn")
        fn = getattr(mod, fn) if isinstance(fn, str) else fn
        return fn, tuple(item.get("args", ())), item.get("wrt", 0)
    if isinstance(item, tuple):
        fn = getattr(mod, item[0]) if isinstance(item[0], str) else item[0]
        args = item[1] if len(item) > 1 and isinstance(item[1], tuple) else ()
        wrt = item[2] if len(item) > 2 and isinstance(item[2], int) else 0
        return (fn, args, wrt) if callable(fn) else (None, None, None)
    fn, args, wrt = (getattr(item, "fn", None), getattr(item, "args", ()),
                     getattr(item, "wrt", 0))
    fn = getattr(mod, fn) if isinstance(fn, str) else fn
    return (fn, tuple(args), wrt if isinstance(wrt, int) else 0) if callable(fn) else (
        None, None, None)


def accepted_corpus():
    """jitgrad's own corpus (functions route a accepts): what would route b lose?"""
    cases = []
    for modname, table in (("corpus", "ALL_CASES"), ("corpus_more", "MORE_CASES"),
                           ("corpus_real", "REAL_CASES"), ("corpus_surface", "SURFACE_CASES")):
        try:
            mod = importlib.import_module(modname)
        except Exception:  # noqa: S112, BLE001
            continue
        for c in getattr(mod, table, []):
            args = c.points[0]
            if c.wrt:
                wrt = c.wrt[0]
            else:
                floats = [k for k, a in enumerate(args) if isinstance(a, float) or (
                    isinstance(a, np.ndarray) and a.dtype.kind == "f")]
                if not floats:
                    continue
                wrt = floats[0]
            if isinstance(wrt, int):
                cases.append((modname, c.name, c.fn, args, wrt))
    return cases


def probe_corpus(modname):
    """tests/conformance_fns.py, corpus_domains_fns.py (being written while the spike ran;
    no argument table yet): their one-parameter functions, at a float or a small array,
    whichever runs in plain Python and returns a float."""
    try:
        mod = importlib.import_module(modname)
    except Exception:  # noqa: BLE001
        return []
    cases = []
    for name, fn in list(vars(mod).items()):
        if name.startswith("_") or not isinstance(fn, type(probe_corpus)) or \
                fn.__module__ != mod.__name__:
            continue
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            continue
        if len([q for q in params if q.default is q.empty]) != 1:
            continue
        for x in (0.7, np.array([0.3, -0.4, 1.1, 0.8])):
            try:
                with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
                    r = fn(x.copy() if isinstance(x, np.ndarray) else x)
                if isinstance(r, (float, np.floating)) and np.isfinite(r):
                    cases.append((modname, name, fn, (x,), 0))
                    break
            except Exception:  # noqa: S112, BLE001
                continue
    return cases


def agree(got, want):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-4, atol=1e-6))


def run_a(fn, args, wrt):
    t0 = time.perf_counter()
    g = jitgrad.grad(fn, wrt=wrt)
    g.ir(*args)  # parse + fence + build: the frontend step
    t_front = time.perf_counter() - t0
    return g(*args), t_front


def run_b(fn, args, wrt):
    t0 = time.perf_counter()
    mod, name, src = B.load(fn, list(args))
    t_translate = time.perf_counter() - t0
    args = B.full_arguments(fn, args)
    keep = [a for a in args if not B.baked(a)]
    pos = sum(1 for a in args[:wrt] if not B.baked(a))
    g = jitgrad.grad(getattr(mod, name), wrt=pos)
    g.ir(*keep)
    t_front = time.perf_counter() - t0
    return g(*keep), (t_translate, t_front), src


def classify(run, want):
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            out = run()
    except (JitgradError, B.Refused) as e:
        kind = "refused-b" if isinstance(e, B.Refused) else "refused"
        return kind, None, f"{type(e).__name__}: {str(e).splitlines()[0][:110]}"
    except Exception as e:  # noqa: BLE001
        return "crash", None, f"{type(e).__name__}: {str(e).splitlines()[0][:110]}" + (
            "\n" + traceback.format_exc(limit=-3) if "-vv" in sys.argv else "")
    got = out[0]
    ok = agree(got, want)
    return ("agree" if ok else "wrong"), out, "" if ok else f"got {got} want {want}"


def main():
    B.lower(own_fns.own_lambda)  # warm Numba's front end once
    jitgrad.grad(own_fns.own_slice)(np.ones(4))
    print("== corpus of functions route (a) refused when the spike was written ==\n")
    table(corpus(), show_sample=True)
    if "--refused-only" not in sys.argv:
        print("\n== jitgrad's own corpus (tests/corpus*.py, accepted by route a): what route "
              "(b) loses ==\n")
        table(accepted_corpus(), rows_shown=("verbose",))
    for modname in ("conformance_fns", "corpus_domains_fns"):
        cases = probe_corpus(modname)
        if cases:
            print(f"\n== tests/{modname}.py (one-parameter functions at a float or a small "
                  "array) ==\n")
            table(cases, rows_shown=("verbose",))


def table(cases, show_sample=False, rows_shown=("all",)):
    verbose = "-v" in sys.argv or "-vv" in sys.argv
    rows = []
    sample = None
    for origin, name, fn, args, wrt in cases:
        try:
            with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
                want = numeric_grad(fn, list(args), wrt)
        except Exception as e:  # noqa: BLE001 - the function itself fails in Python
            rows.append((origin, name, "skip", "skip", f"python: {type(e).__name__}", ""))
            continue
        ka, outa, msga = classify(lambda fn=fn, args=args, wrt=wrt: run_a(fn, args, wrt),
                                  want)
        kb, outb, msgb = classify(lambda fn=fn, args=args, wrt=wrt: run_b(fn, args, wrt),
                                  want)
        ta = outa[1] if outa else None
        tb = outb[1] if outb else None
        if kb == "agree" and (sample is None or len(outb[2]) > len(sample[1])) and \
                len(outb[2]) < 2500:
            sample = (name, outb[2])
        rows.append((origin, name, ka, kb, msga, msgb, ta, tb))

    kinds = ["agree", "wrong", "refused", "refused-b", "crash"]
    print(f"{'function':44s} {'route a':9s} {'route b':9s}")
    for r in rows:
        if "all" not in rows_shown and not (verbose and r[2] != r[3]):
            continue
        if r[2] == "skip":
            print(f"{r[0][:10]}:{r[1]:33s} skipped ({r[4]})")
            continue
        print(f"{r[0][:10]}:{r[1][:33]:33s} {r[2]:9s} {r[3]:9s}")
        if verbose:
            for tag, msg in (("a", r[4]), ("b", r[5])):
                if msg:
                    print(f"      {tag}: {msg}")
    measured = [r for r in rows if r[2] != "skip"]
    print()
    print(f"{len(measured)} functions ({len(rows) - len(measured)} skipped: they fail in "
          "plain Python at the chosen point)")
    print(f"{'route':8s} {'accepted':>8s} {'agree':>6s} {'wrong':>6s} {'refused':>8s} "
          f"{'(by translator)':>15s} {'crash':>6s}")
    for col, label in ((2, "a (AST)"), (3, "b (IR)")):
        c = {k: sum(1 for r in measured if r[col] == k) for k in kinds}
        print(f"{label:8s} {c['agree'] + c['wrong']:8d} {c['agree']:6d} {c['wrong']:6d} "
              f"{c['refused'] + c['refused-b']:8d} {c['refused-b']:15d} {c['crash']:6d}")
    both = [r for r in measured if r[2] == "agree" and r[3] == "agree"]
    only_b = [r[1] for r in measured if r[3] == "agree" and r[2] != "agree"]
    only_a = [r[1] for r in measured if r[2] == "agree" and r[3] != "agree"]
    print(f"agree in both: {len(both)}; only route b: {len(only_b)} {only_b}")
    print(f"only route a: {len(only_a)} {only_a}")
    ta = [r[6] for r in measured if r[6] is not None]
    tb = [r[7] for r in measured if r[7] is not None]
    if ta:
        print(f"frontend step, route a (parse+fence+build, {len(ta)} fns): "
              f"median {1e3 * np.median(ta):.1f} ms, max {1e3 * max(ta):.1f} ms")
    if tb:
        tr = [t[0] for t in tb]
        tf = [t[1] for t in tb]
        print(f"frontend step, route b ({len(tb)} fns): numba IR + translate + import median "
              f"{1e3 * np.median(tr):.1f} ms (max {1e3 * max(tr):.1f}); with jitgrad's "
              f"build of the translation median {1e3 * np.median(tf):.1f} ms "
              f"(max {1e3 * max(tf):.1f})")
    if sample is not None and show_sample:
        print(f"\nsample translation ({sample[0]}):\n")
        print(sample[1])


if __name__ == "__main__":
    main()
