"""Independent checks of a case's reference gradient, made before anything is timed.

`run._verify` compares every tool's gradient with the reference (jitgrad's), so the
reference itself is checked first against code that is not jitgrad:

* **central differences** of the case's Numba primal (`suites.Suite.primal`: the problem's
  source compiled by Numba, no jitgrad) on a sample of entries of every differentiable
  argument: the entry of largest |gradient| and ``SAMPLE - 1`` others drawn with a fixed
  seed (a float argument is one entry), by the 5-point stencil
  ``(8 (f(x+h) - f(x-h)) - (f(x+2h) - f(x-2h))) / 12h``. Each entry must satisfy
  ``|g - fd| <= RTOL |fd| + 1.5 ROUNDING (1 + |f|) / h`` (the quotient's truncation and
  rounding errors) at one of the steps ``STEPS`` (``h = step * max(1, |x_i|)``), tried in turn
  while the quotients of successive steps disagree with each other: it is ``wrong`` as soon as
  two successive quotients agree and it does not, and ``unsettled`` (a branch within every
  step, say; reported, not counted as wrong) when no two agree. A step at which the primal
  raises (outside its domain: NPBench cholesky2's matrix, whose smallest eigenvalue is 5e-4,
  is no longer positive definite 1e-3 away) is skipped for the next one.
* for the problems no peer is timed on (`suites.PEERLESS`: the ADBench GMM), the gradient
  of a **vectorised version** of the same objective written for JAX and for autograd
  (`bench.peers`), each one that is installed, over every entry: max |diff| / max |ref| per
  argument at most ``tol``.

``check(case, grads, tol)`` returns a list of `Check`; `run._verify` marks a reference with a
wrong check ``mismatch`` (said loudly; not timed), and takes the hand-written gradient as the
reference instead if that passes.
"""

from __future__ import annotations

import dataclasses
import importlib.util

import numpy as np

SAMPLE = 6  # entries per differentiable argument
STEPS = (1e-3, 1e-4, 1e-5, 1e-6)  # relative to max(1, |x_i|); 5-point central differences
RTOL = 1e-6  # truncation: ~(h / l)^4 / 30 for features of width l, 1e-6 down to l ~ 0.014
ROUNDING = 1e-14  # relative rounding error of one primal evaluation (~50 ulp)


@dataclasses.dataclass
class Check:
    against: str  # "central differences" or "<system> vectorised"
    status: str  # ok | wrong | unsettled | unavailable
    worst: float | None  # ok: the worst entry's error / its bound; vectorised: rel error
    detail: str = ""


def _entries(arg, grad, rng, sample=SAMPLE):
    """The sampled indices of ``arg`` (``sample`` of them): the one of largest |grad| first."""
    if isinstance(arg, float):
        return [None]
    g = np.abs(np.asarray(grad, dtype=np.float64)).ravel()
    first = int(np.argmax(g))
    others = [i for i in rng.permutation(g.size)[:sample] if i != first][:sample - 1]
    return [np.unravel_index(i, arg.shape) for i in [first, *others]]


def _perturbed(data, k, index, h):
    arg = data[k]
    if index is None:
        up, down = arg + h, arg - h
        width = up - down
    else:
        up, down = arg.copy(), arg.copy()
        up[index] += h
        down[index] -= h
        width = up[index] - down[index]
    return data[:k] + (up,) + data[k + 1:], data[:k] + (down,) + data[k + 1:], width


def _five_point(primal, data, k, index, h):
    """``(8 (f(h) - f(-h)) - (f(2h) - f(-2h))) / 12h`` with entry ``index`` of argument ``k``
    moved (``index`` None: the float argument ``k``)."""
    def value(t):
        if index is None:
            moved = data[k] + t
        else:
            moved = data[k].copy()
            moved[index] += t
        return float(primal(*data[:k], moved, *data[k + 1:]))

    return (8 * (value(h) - value(-h)) - (value(2 * h) - value(-2 * h))) / (12 * h)


def central_differences(primal, data, wrt, grads, seed=0, sample=SAMPLE, at=None,
                        rounding=ROUNDING) -> Check:
    """``grads`` (one per argument of ``wrt``) against 5-point central differences of
    ``primal`` on ``sample`` sampled entries per argument, or on the entries ``at`` gives (one
    list of index tuples per argument) instead; see the module doc. ``rounding``: the
    primal's relative rounding error (coarser than `ROUNDING` for a float32 primal)."""
    rng = np.random.default_rng(seed)
    value = float(primal(*data))
    worst, unsettled, checked = 0.0, [], 0
    for j, (k, g) in enumerate(zip(wrt, grads)):
        entries = _entries(data[k], g, rng, sample) if at is None else at[j]
        for index in entries:
            got = float(g if index is None else g[index])
            x = float(data[k] if index is None else data[k][index])
            where = f"d/arg{k}" + ("" if index is None else f"{list(map(int, index))}")
            previous = None
            for step in STEPS:
                h = step * max(1.0, abs(x))
                try:
                    fd = _five_point(primal, data, k, index, h)
                except Exception:  # noqa: BLE001 -- the primal fails this far out (a
                    previous = None  # matrix no longer positive definite): a smaller step
                    continue
                bound = RTOL * abs(fd) + 1.5 * rounding * (1.0 + abs(value)) / h
                if abs(got - fd) <= bound:
                    worst = max(worst, abs(got - fd) / bound)
                    break
                if previous is not None and abs(fd - previous[0]) <= max(bound, previous[1]):
                    return Check("central differences", "wrong", None,
                                 f"{where}: {got!r}, but the central differences at steps "
                                 f"{previous[2]:g} and {step:g} agree on {fd!r}")
                previous = (fd, bound, step)
            else:
                unsettled.append(where)
            checked += 1
    detail = f"{checked - len(unsettled)} of {checked} sampled entries within their bounds"
    if unsettled:
        detail += f"; unsettled (no two steps' differences agree): {unsettled}"
    return Check("central differences", "unsettled" if unsettled else "ok", worst, detail)


def vectorised(case, grads, tol) -> list[Check]:
    """For a `suites.PEERLESS` problem: its vectorised JAX and autograd versions' gradients
    (each that imports) against ``grads``; see the module doc."""
    from bench import peers
    from bench.run import rel_error

    out = []
    for system in ("jax", "autograd"):
        if importlib.util.find_spec(system) is None:
            out.append(Check(f"{system} vectorised", "unavailable", None, "not installed"))
            continue
        call, to_numpy = peers.make_tool(system, case.suite.name, case.data(), case.suite.wrt)
        err = rel_error(tuple(grads), to_numpy(call()))
        out.append(Check(f"{system} vectorised", "ok" if err <= tol else "wrong", err,
                         f"max |diff| / max |{system}| = {err:.2e} (tolerance {tol:g})"))
    return out


def check(case, grads, tol) -> list[Check]:
    """Every independent check of ``grads`` (the gradient a tool gave on ``case.data()``)."""
    from bench import suites

    data = case.data()
    checks = [central_differences(case.suite.primal, data, case.suite.wrt, grads)]
    if case.suite.name in suites.PEERLESS:
        checks += vectorised(case, grads, tol)
    return checks


def summary(checks) -> str:
    """One line for the report, from `Check`s or their ``asdict`` (the JSON)."""
    parts = []
    for c in (x if isinstance(x, Check) else Check(**x) for x in checks):
        if c.status == "unavailable":
            parts.append(f"{c.against}: not installed")
        elif c.against == "central differences":
            parts.append(f"{c.against}: {c.status.upper() if c.status != 'ok' else 'ok'} "
                         f"({c.detail}" + (f", worst {c.worst:.2g} of its bound)"
                                           if c.worst is not None else ")"))
        else:
            parts.append(f"{c.against}: {c.status.upper() if c.status != 'ok' else 'ok'} "
                         f"(rel err {c.worst:.1e})")
    return "; ".join(parts)

