"""Forward mode and second order against independent references, over the corpora (issues
#14, #21).

For every function of the corpus tables (straight-line, loops, branches, returns in loops,
the real-code corpora, in-place writes, recomputed and taped loops, array-valued functions):

* ``jvp``: the tangent along a random direction against 5-point central differences of
  ``f`` along it;
* ``jacobian`` by forward mode and by reverse mode (`vjp`), against 5-point central
  differences of each entry of ``f`` (`fd.numeric_grad5`);
* ``hessian`` (forward over reverse) with respect to the first float argument of a scalar
  ``f``, its symmetry, and against 5-point central differences of jitgrad.tape's gradient
  (an interpreter sharing only the first-derivative rules), or, where the tape cannot run
  ``f`` (``math.*`` on a tracked value, writes into plain arrays, SciPy), Richardson-combined
  central second differences of ``f`` itself.

Nothing of the reference is jitgrad's source transform. Every entry must agree within
``RTOL * |want| + atol`` (``atol``: the quotient's rounding error; see RTOL), at the first of
several steps that agrees (see `against`). Each check is ``ok``, ``refused`` (a
`JitgradError` naming what is not supported) or a failure: ``wrong`` (the references of two
successive steps agree with each other, not with jitgrad), ``unsettled`` (no two steps agree),
``crash`` (any other exception). ``check_fuzz`` does the same for jvp and the HVP of
`fuzz_gen`'s programs; ``check_jax_hessian`` (``--jax``) compares the Hessians with
``jax.hessian`` where JAX is installed and traces ``f`` to the same value (118 of the 309
scalar cases; ~2 min for all, so the suite runs it on the compiled sample only).

Run as a script it writes the results as JSON; ``tests/test_forward.py`` runs it in a
subprocess as plain Python (``JITGRAD_DISABLE_JIT=1``, read when jitgrad is imported), so
nothing compiles; ``tests/test_forward_compiled.py`` calls `check_case` on `compiled_sample`
with Numba.

    JITGRAD_DISABLE_JIT=1 python tests/forward_check.py --json out.json [--only NAME]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # this checkout's jitgrad, and ``tests``

from fd import numeric_grad5

import jitgrad
from jitgrad.core.errors import JitgradError


def groups():
    """(group, name, fn, args, wrt) for every case of the tables."""
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
            yield group, c.name, c.fn, c.points[0], list(c.wrt)
    for k, (fn, args) in enumerate(test_transforms.ARRAY_CASES):
        yield "array_valued", f"{fn.__name__}{k}", fn, args, _floats(args)


# tests/test_forward_compiled.py compiles every COMPILED_EVERY-th case of each table (from its
# first): 40 cases. Compiling one case's jvp, Jacobians and Hessian costs 0.4-27 s (3.9 s on
# average, measured on every third case), all 316 cases ~20 min of CPU.
COMPILED_EVERY = 9


def compiled_sample():
    """The fixed sample of `groups` that runs compiled (see COMPILED_EVERY)."""
    seen = {}
    for case in groups():
        index = seen[case[0]] = seen.get(case[0], -1) + 1
        if index % COMPILED_EVERY == 0:
            yield case


def _copied(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _floats(args):
    return [k for k, a in enumerate(args) if isinstance(a, float) or (
        isinstance(a, np.ndarray) and a.dtype == np.float64)]


# Every check compares per entry: |got - want| <= RTOL * |want| + atol, where the reference
# ``want`` is a difference quotient of plain Python (``f`` itself, or jitgrad.tape's gradient)
# and ``atol`` is that quotient's rounding error: ROUNDING * (1 + max |values differenced|)
# times 1.5 / h (the 5-point first differences, `fd.numeric_grad5`) or 1.5 / h^2 (second
# differences). RTOL bounds the truncation error, relative to the derivative ~(h / l)^4 / 30
# for features of width l: at h = 1e-3, 1e-6 allows l down to ~0.014 (the corpus points keep
# ~0.2 away from kinks); narrower features fall to the smaller steps.
RTOL = 1e-6
ROUNDING = 1e-14  # the relative rounding error of one evaluation: ~50 ulp
# The steps tried in turn (relative to max(1, |x|)): the first whose reference agrees with
# jitgrad passes; jitgrad is ``wrong`` as soon as the references of two successive steps agree
# with each other and not with it (a smaller step, with its larger rounding bound, is tried only
# while the references disagree: a kink within the step), and ``unsettled`` when no step gives
# a reference that settles.
FIRST_STEPS = (1e-3, 1e-4, 1e-5, 1e-6)  # 5-point first differences, of f or the tape's gradient
SECOND_STEPS = (1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)  # second differences of f (Richardson)
VALUE_RTOL = 1e-10  # the primal value against plain Python


def _within(got, want, atol) -> tuple[bool, float]:
    """``(every entry within RTOL * |want| + atol, the worst entry's error / its bound)``."""
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    if got.shape != want.shape or not np.all(np.isfinite(got)):
        return False, np.inf
    if not want.size:
        return True, 0.0
    worst = float(np.max(np.abs(got - want) / (RTOL * np.abs(want) + atol)))
    return worst <= 1.0, worst


def _scale(values) -> float:
    return 1.0 + float(np.max(np.abs(np.asarray(values, dtype=float)), initial=0.0))


def against(got, reference, steps) -> tuple[str, str, float]:
    """``(status, detail, worst)``: ``got`` against ``reference(step) -> (want, atol, label)``
    at each of ``steps`` in turn (see FIRST_STEPS); ``worst`` is the worst entry's error over
    its bound at the step that passed (at the first step if none did)."""
    refs = []
    for step in steps:
        want, atol, label = reference(step)
        ok, worst = _within(got, want, atol)
        if ok:
            return "ok", f"{label} at step {step:g}", worst
        if refs and _within(want, refs[-1][0], max(atol, refs[-1][1]))[0]:
            return "wrong", (f"{label} at steps {refs[-1][2]:g} and {step:g} agree, and not "
                             f"with jitgrad: {np.asarray(got).tolist()} vs "
                             f"{np.asarray(want).tolist()}"), worst
        refs.append((want, atol, step))
    return "unsettled", (f"{label}: no two steps agree; {np.asarray(got).tolist()} vs "
                         f"{np.asarray(refs[0][0]).tolist()}"), np.inf


def _five_point(value, h):
    """``(8 (v(h) - v(-h)) - (v(2h) - v(-2h))) / 12h`` of ``value(t)`` (an array or float)."""
    return (8 * (value(h) - value(-h)) - (value(2 * h) - value(-2 * h))) / (12 * h)


def _directional(f, args, ts, eps=FIRST_STEPS[0], points=5):
    """Central difference of ``f`` along the tangents ``ts`` (None: the argument stays), on
    5 points (`_five_point`) or 2 (``(f(+eps) - f(-eps)) / 2 eps``)."""
    def moved(t):
        return np.asarray(f(*_copied(tuple(a + t * d if d is not None else a
                                             for a, d in zip(args, ts)))), dtype=float)
    if points == 2:
        return (moved(eps) - moved(-eps)) / (2 * eps)
    return _five_point(moved, eps)


def fd_jacobian(f, args, k, eps=FIRST_STEPS[0]):
    """5-point central differences of every entry of ``f`` (`fd.numeric_grad5`): shape
    value.shape + args[k].shape."""
    value = np.asarray(f(*_copied(args)))
    rows = [numeric_grad5(lambda *a, i=i: np.asarray(f(*a))[i], args, k, eps=eps)
            for i in np.ndindex(*value.shape)]
    return np.array(rows).reshape(value.shape + np.shape(args[k]))


def _with(args, k, v):
    return args[:k] + (v,) + args[k + 1:]


def _along(x, v, t):
    """``x + t v`` for a float or an array argument."""
    return x + t * v if isinstance(x, np.ndarray) else float(x + t * v)


def tape_hvp(fn, args, k, v, step):
    """``(H v, atol)``: 5-point central differences along ``v`` of jitgrad.tape's gradient
    with respect to argument ``k``, at ``h = step`` (``v`` has unit largest entry). The tape
    runs ``fn`` itself on NumPy values and never calls the source transform or the forward
    mode; it shares only the first-derivative rules. Raises `JitgradError` (or the
    ``TypeError`` of a NumPy function the tape does not record) where it cannot run ``fn``."""
    from jitgrad import tape

    grad = tape.grad(fn, wrt=k)
    biggest = [float(np.max(np.abs(grad(*_copied(args))), initial=0.0))]

    def moved(t):
        g = np.asarray(grad(*_copied(_with(args, k, _along(args[k], v, t)))), dtype=float)
        biggest[0] = max(biggest[0], float(np.max(np.abs(g), initial=0.0)))
        return g

    h = step * max(1.0, float(np.max(np.abs(args[k]))))
    hv = _five_point(moved, h)
    return hv, 1.5 * ROUNDING * (1.0 + biggest[0]) / h


def second_difference_hvp(fn, args, k, v, step):
    """``(H v, atol)``: central second differences of ``fn`` itself with respect to argument
    ``k``, ``D(h)_i = (f(x+h e_i+h v) - f(x+h e_i-h v) - f(x-h e_i+h v) + f(x-h e_i-h v))
    / 4h^2`` with ``h = step * max(1, max |x|)``, Richardson-combined: ``(4 D(h) - D(2h)) /
    3`` (error O(h^4)). Nothing of jitgrad runs."""
    x = args[k]
    shape = np.shape(x)
    h0 = step * max(1.0, float(np.max(np.abs(x))))
    biggest = abs(float(fn(*_copied(args))))
    estimates = []
    for h in (h0, 2 * h0):
        D = np.zeros(shape)
        for i in np.ndindex(*shape):
            e = np.zeros(shape)
            e[i] = 1.0
            vals = []
            for si, sv in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                moved = _along(_along(x, e, si * h), v, sv * h)
                vals.append(float(fn(*_copied(_with(args, k, moved)))))
            biggest = max(biggest, *map(abs, vals))
            D[i] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4 * h * h)
        estimates.append(D)
    hv = (4 * estimates[0] - estimates[1]) / 3
    # rounding: D(h) errs by ~ROUNDING*F/h^2, and (4 D(h) - D(2h)) / 3 by (4 + 1/4) / 3 of it
    return (hv if shape else float(hv)), 1.5 * ROUNDING * (1.0 + biggest) / h0 ** 2


def hvp_reference(fn, args, k):
    """``(reference(v, step) -> (H v, atol, label), steps)``: differences of the tape's
    gradient (`tape_hvp`) where the tape runs ``fn``, else second differences of ``fn``
    (`second_difference_hvp`)."""
    v0 = np.ones(np.shape(args[k])) if isinstance(args[k], np.ndarray) else 1.0
    try:
        tape_hvp(fn, args, k, v0, FIRST_STEPS[0])
    except (JitgradError, TypeError, AttributeError):  # AttributeError: `u.fill(v)`, which the
        # tape's arrays do not have (the generated programs write through views with it)
        return (lambda v, step: (*second_difference_hvp(fn, args, k, v, step),
                                 "second differences of f")), SECOND_STEPS
    return (lambda v, step: (*tape_hvp(fn, args, k, v, step),
                             "differences of the tape's gradient")), FIRST_STEPS


def hessian_reference(fn, args, k):
    """``(reference(step) -> (H, atol, label), steps)``: `hvp_reference` along every unit
    vector, the columns stacked (H[..., i] = H e_i)."""
    hvp, steps = hvp_reference(fn, args, k)
    shape = np.shape(args[k])

    def reference(step):
        H, atol, label = np.zeros(shape + shape), 0.0, ""
        for i in np.ndindex(*shape):
            e = np.zeros(shape)
            e[i] = 1.0
            column, a, label = hvp(e if shape else 1.0, step)
            H[(...,) + i] = column
            atol = max(atol, a)
        return H, atol, label

    return reference, steps


def _run(check) -> tuple[str, str, float | None]:
    """``(status, detail, worst error / bound)`` of one check; ``refused``: a `JitgradError`
    naming what is not supported, ``crash``: any other exception."""
    try:
        return check()
    except JitgradError as e:
        return "refused", str(e).splitlines()[0], None
    except Exception as e:  # noqa: BLE001 - every other exception is a failure to report
        return ("crash", "".join(traceback.format_exception_only(type(e), e)).strip()[-500:],
                None)


def check_case(fn, args, floats, scalar_reverse=True) -> dict:
    """jvp, both Jacobians and (for a scalar ``fn``) the Hessian of one corpus case, computed
    by jitgrad as configured (compiled; plain Python under ``JITGRAD_DISABLE_JIT=1``), each
    against an independent reference, per entry (see RTOL):
    ``{check: (status, detail, worst)}``. ``scalar_reverse=False`` leaves out the reverse
    Jacobian of a scalar ``fn`` (its gradient, which the corpus tests compile for every case)."""
    rng = np.random.default_rng(0)
    ts = [None] * len(args)
    for k in floats:
        ts[k] = rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(
            rng.standard_normal())
    value = np.asarray(fn(*_copied(args)), dtype=float)
    first_atol = 1.5 * ROUNDING * _scale(value)  # the 5-point quotients' rounding, times h
    out = {}

    def jvp():
        got_value, tangent = jitgrad.jvp(fn, args, ts)
        got_value = np.asarray(got_value, dtype=float)
        if got_value.shape != value.shape or not np.all(
                np.abs(got_value - value) <= VALUE_RTOL * np.abs(value) + first_atol):
            return "wrong", f"value {got_value.tolist()} vs {value.tolist()}", None
        return against(tangent, lambda eps: (_directional(fn, args, ts, eps), first_atol / eps,
                                             "directional differences of f"), FIRST_STEPS)

    def jacobians(mode):
        def check():
            jacs = jitgrad.jacobian(fn, wrt=tuple(floats), mode=mode)(*args)
            worst = 0.0
            for k, J in zip(floats, jacs):
                status, detail, w = against(J, lambda eps, k=k: (
                    fd_jacobian(fn, args, k, eps), first_atol / eps, "differences of f"),
                    FIRST_STEPS)
                if status != "ok":
                    return status, f"argument {k}: {detail}", w
                worst = max(worst, w)
            return "ok", detail, worst
        return check

    def hessian():
        k = floats[0]
        H = jitgrad.hessian(fn, wrt=k)(*args)
        if not np.allclose(H, np.transpose(H, _swap(np.ndim(args[k]))), rtol=1e-9,
                           atol=1e-9 * (1 + np.max(np.abs(H)))):
            return "wrong", f"not symmetric: {np.asarray(H).tolist()}", None
        reference, steps = hessian_reference(fn, args, k)
        return against(H, reference, steps)

    out["jvp"] = _run(jvp)
    out["jacobian_forward"] = _run(jacobians("forward"))
    if value.ndim or scalar_reverse:
        out["jacobian_reverse"] = _run(jacobians("reverse"))
    if value.ndim == 0:
        out["hessian"] = _run(hessian)
    return out


def check_jax_hessian(fn, args, k) -> tuple[str, str, float | None]:
    """jitgrad's Hessian with respect to argument ``k`` against ``jax.hessian`` of ``fn``
    itself (JAX traces the NumPy code, float64), per entry within ``1e-9 |want| + 1e-12 (1 +
    max |want|)``: ``untraceable`` where JAX cannot run ``fn`` (branches on traced values,
    ``float()``) or computes another value (in-place updates of JAX arrays make new arrays),
    else ``ok`` or ``wrong``. An extra check, where JAX is installed."""
    import jax

    jax.config.update("jax_enable_x64", True)

    def f(xk):
        return fn(*_copied(_with(args, k, xk)))

    x = jax.numpy.asarray(args[k])
    try:
        traced_value = float(f(x))
        want = np.asarray(jax.hessian(f)(x), dtype=float)
    except Exception as e:  # noqa: BLE001 - whatever JAX cannot trace is not checked
        return "untraceable", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", None
    value = float(fn(*_copied(args)))
    if not abs(traced_value - value) <= 1e-12 * (1 + abs(value)):
        # e.g. ``D *= 2.0`` in a callee: a new JAX array, the caller's D unchanged
        return "untraceable", f"JAX computes another function: {traced_value} vs {value}", None
    H = np.asarray(jitgrad.hessian(fn, wrt=k)(*args), dtype=float)
    if H.shape != want.shape or not np.all(np.isfinite(want)):
        return "untraceable", f"JAX gives shape {want.shape} / non-finite entries", None
    bound = 1e-9 * np.abs(want) + 1e-12 * _scale(want)
    worst = float(np.max(np.abs(H - want) / bound)) if H.size else 0.0
    return ("ok" if worst <= 1.0 else "wrong"), f"{H.tolist()} vs JAX {want.tolist()}", worst


def check_fuzz(seed: int) -> dict:
    """One generated program (`fuzz_gen`: aliases, views, in-place writes, helpers that
    write into their arguments, loops, branches): jvp along a random direction against
    central differences of ``f``, and the HVP with respect to its first argument against
    `hvp_reference` (differences of the tape's gradient, or second differences of ``f``),
    per entry with the tolerances and steps of `against`: ``{check: (status, detail, worst)}``
    (``skip``: the plain Python program fails or its value is not finite)."""
    import fuzz_gen as G

    source = G.generate(seed)
    mod = G.load(seed, source)
    args = G.inputs(seed, source)
    try:
        value = float(mod.f(*_copied(args)))
    except Exception:  # noqa: BLE001 - the generator's program, not jitgrad
        return {"jvp": ("skip", "plain Python fails", None),
                "hvp": ("skip", "plain Python fails", None)}
    if not np.isfinite(value) or abs(value) > G.BIG:
        return {"jvp": ("skip", "value not finite", None),
                "hvp": ("skip", "value not finite", None)}
    rng = np.random.default_rng(seed)
    ts = [rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
          for a in args]
    first_atol = 1.5 * ROUNDING * _scale(value)

    def jvp():
        given = _copied(args)
        v, t = jitgrad.jvp(mod.f, given, ts)
        if any(isinstance(a, np.ndarray) and not np.array_equal(a, b)
               for a, b in zip(args, given)):
            return "wrong", "the call changed an argument", None
        if not abs(v - value) <= VALUE_RTOL * abs(value) + first_atol:
            return "wrong", f"value {v} vs {value}", None
        return against(t, lambda eps: (_directional(mod.f, args, ts, eps), first_atol / eps,
                                       "directional differences of f"), FIRST_STEPS)

    def hvp():
        k = 0
        hv = jitgrad.hvp(mod.f, wrt=k)(*_copied(args), ts[k])
        reference, steps = hvp_reference(mod.f, args, k)
        return against(hv, lambda step: reference(ts[k], step), steps)

    return {"jvp": _run(jvp), "hvp": _run(hvp)}


def _swap(ndim: int) -> tuple:
    return tuple(range(ndim, 2 * ndim)) + tuple(range(ndim))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", help="only cases whose name contains this")
    ap.add_argument("--fuzz", help="generated programs instead: seeds START:STOP")
    ap.add_argument("--jax", action="store_true",
                    help="instead: every scalar case's Hessian against jax.hessian")
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
            for k, (status, detail, *_) in checks.items():
                if status in ("wrong", "crash"):
                    print(f"    {k}: {detail[:2000]}")
    for group, name, fn, args, wrt in ([] if opts.fuzz else groups()):
        if opts.only and opts.only not in name:
            continue
        if opts.jax:
            if np.ndim(fn(*_copied(args))) == 0:
                checks = {"hessian_jax": _run(functools.partial(check_jax_hessian, fn, args,
                                                                wrt[0]))}
                results.append({"group": group, "name": name, "checks": checks})
                print(f"{group:16} {name:36} {checks['hessian_jax'][0]}", flush=True)
            continue
        checks = check_case(fn, args, wrt)
        results.append({"group": group, "name": name, "checks": checks})
        bad = {k: v for k, v in checks.items() if v[0] != "ok"}
        worst = max((v[2] for v in checks.values() if v[2] is not None), default=0.0)
        print(f"{group:16} {name:36} " + (" ".join(f"{k}:{v[0]}" for k, v in bad.items())
                                           or f"ok (worst entry {worst:.2g} of its bound)"),
              flush=True)
        for k, (status, detail, _) in bad.items():
            if status in ("wrong", "crash"):
                print(f"    {k}: {detail[:2000]}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
