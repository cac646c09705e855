"""Forward mode and second order against finite differences, over the corpora (issue #14).

For every function of the corpus tables (straight-line, loops, branches, returns in loops,
the real-code corpora, in-place writes, recomputed and taped loops, array-valued functions):

* ``jvp``: the tangent along a random direction against central differences of ``f``;
* ``jacobian`` by forward mode and by reverse mode (`vjp`), against central differences of
  each entry of ``f`` (`fd.numeric_grad`);
* ``hessian`` (forward over reverse) with respect to the first float argument of a scalar
  ``f``, against central differences of jitgrad's gradient (which the corpus tests check
  against central differences of ``f``), and its symmetry.

Each check is ``ok``, ``refused`` (a `JitgradError` naming what is not supported) or a
failure (``wrong``: a number disagrees; ``crash``: any other exception). Run as a script it
writes the results as JSON; ``tests/test_forward.py`` runs it in a subprocess as plain Python
(``JITGRAD_DISABLE_JIT=1``, read when jitgrad is imported), so nothing compiles.

    JITGRAD_DISABLE_JIT=1 python tests/forward_check.py --json out.json [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's jitgrad, and ``tests``

from fd import numeric_grad

import jitgrad
from jitgrad.errors import JitgradError


def groups():
    """(group, name, fn, args, wrt, tol) for every case of the tables."""
    import corpus
    import corpus_more
    import corpus_real
    import corpus_surface
    import test_inplace
    import test_recompute
    import test_transforms

    tables = [("straight", corpus.STRAIGHT_CASES), ("loops", corpus.LOOP_CASES),
              ("returns_in_loop", corpus.RETURNS_IN_LOOP_CASES),
              ("more", corpus_more.MORE_CASES), ("real", corpus_real.REAL_CASES),
              ("surface", corpus_surface.SURFACE_CASES), ("inplace", test_inplace.CASES),
              ("recomputed", test_recompute.RECOMPUTED),
              ("taped", [c for c, _ in test_recompute.TAPED])]
    for group, cases in tables:
        for c in cases:
            yield group, c.name, c.fn, c.points[0], list(c.wrt), max(c.tol, 1e-5)
    for k, (fn, args) in enumerate(test_transforms.ARRAY_CASES):
        yield "array_valued", f"{fn.__name__}{k}", fn, args, _floats(args), 1e-5


def _copied(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _floats(args):
    return [k for k, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype == np.float64)]


def _close(got, want, tol) -> bool:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    scale = 1.0 + float(np.max(np.abs(want))) if want.size else 1.0
    return got.shape == want.shape and bool(np.all(np.abs(got - want) <= 10 * tol * scale))


def _directional(f, args, ts, eps=1e-6):
    """Central difference of ``f`` along the tangents ``ts`` (None: the argument stays)."""
    up = tuple(a + eps * t if t is not None else a for a, t in zip(args, ts))
    down = tuple(a - eps * t if t is not None else a for a, t in zip(args, ts))
    return (np.asarray(f(*_copied(up)), dtype=float)
            - np.asarray(f(*_copied(down)), dtype=float)) / (2 * eps)


def fd_jacobian(f, args, k):
    """Central differences of every entry of ``f``: shape value.shape + args[k].shape."""
    value = np.asarray(f(*_copied(args)))
    rows = [numeric_grad(lambda *a, i=i: np.asarray(f(*a))[i], args, k)
            for i in np.ndindex(*value.shape)]
    return np.array(rows).reshape(value.shape + np.shape(args[k]))


def fd_hessian(fn, args, k):
    """Central differences of jitgrad's gradient with respect to argument ``k``."""
    grad = jitgrad.grad(fn, wrt=k)
    shape = np.shape(args[k])
    if not shape:
        return float(_directional(grad, args, [1.0 if j == k else None
                                               for j in range(len(args))]))
    out = np.zeros(shape + shape)
    for i in np.ndindex(*shape):
        e = np.zeros(shape)
        e[i] = 1.0
        out[(...,) + i] = _directional(lambda *a: np.asarray(grad(*a), dtype=float), args,
                                       [e if j == k else None for j in range(len(args))])
    return out


def _run(check) -> tuple[str, str]:
    try:
        ok, detail = check()
        return ("ok" if ok else "wrong"), detail
    except JitgradError as e:
        return "refused", str(e).splitlines()[0]
    except Exception as e:  # noqa: BLE001 - every other exception is a failure to report
        return "crash", "".join(traceback.format_exception_only(type(e), e)).strip()[-500:]


def check_case(fn, args, floats, tol) -> dict:
    rng = np.random.default_rng(0)
    ts = [None] * len(args)
    for k in floats:
        ts[k] = rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(
            rng.standard_normal())
    out = {}

    def jvp():
        value, tangent = jitgrad.jvp(fn, args, ts)
        want = _directional(fn, args, ts)
        return (_close(value, fn(*_copied(args)), 1e-9) and _close(tangent, want, tol),
                f"{tangent} vs {want}")

    def jacobians(mode):
        def check():
            jacs = jitgrad.jacobian(fn, wrt=tuple(floats), mode=mode)(*args)
            for k, J in zip(floats, jacs):
                want = fd_jacobian(fn, args, k)
                if not _close(J, want, tol):
                    return False, f"argument {k}: {J} vs {want}"
            return True, ""
        return check

    def hessian():
        k = floats[0]
        H = jitgrad.hessian(fn, wrt=k)(*args)
        want = fd_hessian(fn, args, k)
        symmetric = np.allclose(H, np.transpose(H, _swap(np.ndim(args[k]))), rtol=1e-9,
                                atol=1e-9 * (1 + np.max(np.abs(H))))
        return symmetric and _close(H, want, 10 * tol), f"{H} vs {want}"

    out["jvp"] = _run(jvp)
    out["jacobian_forward"] = _run(jacobians("forward"))
    out["jacobian_reverse"] = _run(jacobians("reverse"))
    if np.ndim(fn(*_copied(args))) == 0:
        out["hessian"] = _run(hessian)
    return out


def check_fuzz(seed: int) -> dict:
    """One generated program (`fuzz_gen`: aliases, views, in-place writes, helpers that
    write into their arguments, loops, branches): jvp along a random direction against
    central differences of ``f``, and the HVP with respect to its first argument against
    central differences of jitgrad's gradient; the first of several steps that agrees passes,
    and a disagreement counts only when the differences have settled (else ``skip``)."""
    import fuzz_gen as G

    source = G.generate(seed)
    mod = G.load(seed, source)
    args = G.inputs(seed, source)
    try:
        value = float(mod.f(*_copied(args)))
    except Exception:  # noqa: BLE001 - the generator's program, not jitgrad
        return {"jvp": ("skip", "plain Python fails"), "hvp": ("skip", "plain Python fails")}
    if not np.isfinite(value) or abs(value) > G.BIG:
        return {"jvp": ("skip", "value not finite"), "hvp": ("skip", "value not finite")}
    rng = np.random.default_rng(seed)
    ts = [rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
          for a in args]

    def settled(got, refs) -> tuple[str, str]:
        for r in refs:
            if G._close(got, r, G.GRAD_RTOL, G.GRAD_ATOL):
                return "ok", ""
        converged = all(G._close(r, refs[-1], G.GRAD_RTOL, G.GRAD_ATOL) for r in refs[-3:])
        return ("wrong" if converged else "skip"), f"{got} vs {refs[0]}"

    def jvp():
        given = _copied(args)
        v, t = jitgrad.jvp(mod.f, given, ts)
        if any(isinstance(a, np.ndarray) and not np.array_equal(a, b)
               for a, b in zip(args, given)):
            return "wrong", "the call changed an argument"
        if not G._close(v, value, G.VALUE_RTOL, G.VALUE_ATOL):
            return "wrong", f"value {v} vs {value}"
        return settled(t, [_directional(mod.f, args, ts, eps) for eps in G.FD_STEPS])

    def hvp():
        k = 0
        grad = jitgrad.grad(mod.f, wrt=k)
        hv = jitgrad.hvp(mod.f, wrt=k)(*_copied(args), ts[k])
        one = [ts[k] if j == k else None for j in range(len(args))]
        return settled(hv, [_directional(lambda *a: np.asarray(grad(*a), dtype=float), args,
                                         one, eps) for eps in G.FD_STEPS])

    out = {}
    for name, check in (("jvp", jvp), ("hvp", hvp)):
        try:
            out[name] = check()
        except JitgradError as e:
            out[name] = ("refused", str(e).splitlines()[0])
        except Exception as e:  # noqa: BLE001 - every other exception is a failure
            out[name] = ("crash", "".join(traceback.format_exception_only(type(e), e))[-500:])
    return out


def _swap(ndim: int) -> tuple:
    return tuple(range(ndim, 2 * ndim)) + tuple(range(ndim))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", help="only cases whose name contains this")
    ap.add_argument("--fuzz", help="generated programs instead: seeds START:STOP")
    opts = ap.parse_args(argv)
    np.seterr(all="ignore")
    results = []
    if opts.fuzz:
        start, stop = (int(x) for x in opts.fuzz.split(":"))
        for seed in range(start, stop):
            checks = check_fuzz(seed)
            results.append({"group": "fuzz", "name": str(seed), "checks": checks})
            print(f"fuzz {seed:5} " + " ".join(f"{k}:{v[0]}" for k, v in checks.items()),
                  flush=True)
            for k, (status, detail) in checks.items():
                if status in ("wrong", "crash"):
                    print(f"    {k}: {detail[:2000]}")
    for group, name, fn, args, wrt, tol in ([] if opts.fuzz else groups()):
        if opts.only and opts.only not in name:
            continue
        checks = check_case(fn, args, wrt, tol)
        results.append({"group": group, "name": name, "checks": checks})
        bad = {k: v for k, v in checks.items() if v[0] != "ok"}
        print(f"{group:16} {name:36} " + (" ".join(f"{k}:{v[0]}" for k, v in bad.items())
                                           or "ok"), flush=True)
        for k, (status, detail) in bad.items():
            if status in ("wrong", "crash"):
                print(f"    {k}: {detail[:2000]}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
