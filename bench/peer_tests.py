"""``python -m bench.peer_tests PATH``: jitgrad on autograd's own test functions (issue #43).

``--peer tangent``: Tangent's instead (`bench.peer_tests_tangent`).

Usage (from the repository root)::

    JITGRAD_DISABLE_JIT=1 python -m bench.peer_tests ~/src/autograd \\
        --markdown out.md --json out.json [--files test_numpy,test_scipy] [--only dot]

autograd (github.com/HIPS/autograd, MIT) is not part of this repository and none of its code
is copied here: PATH is the user's checkout, whose ``tests/test_*.py`` are imported at run time
(with ``PATH/tests`` on ``sys.path`` for their ``numpy_utils``); the autograd they import is
the installed one, which is also the oracle.

**Collecting.** Before the test modules are imported, ``autograd.test_util.check_grads`` is
replaced by a recorder (``combo_check`` and the ``numpy_utils`` helpers call it, and the test
modules bind it when imported), and the ``make_vjp`` that autograd's transforms call by one
that records the function, ``argnum`` and arguments of each gradient a test body computes
itself (``grad(fun)(x)``, ``jacobian``, ``hessian``...) and returns autograd's (so the test's
own assertions still run). Each ``test_*`` function is then called (its
``pytest.mark.parametrize`` cases expanded, NumPy's global seed set to 42 first, as the
checkout's ``conftest.py`` does); each check it makes is a *case*: (test id, function,
arguments, keyword arguments, which arguments are differentiated).

**Measuring a case.** The loss is the function's value when it is a real scalar; otherwise what
``check_grads`` does, a projection on a fixed random cotangent, written as a small module the
bench generates (``def loss(a0, a1): return np.sum(FUN(a0, a1, axis=0) * V)``, the test's
keyword arguments written out, ``FUN`` the test's function as it is written). A complex
output is projected as ``check_vjp`` projects it, on autograd's inner product of complex
vector spaces: ``np.sum(np.real(out * np.conj(V)))``, ``V`` a complex cotangent. jitgrad computes
``jitgrad.value_and_grad(loss, wrt=<argnum>)`` as a user calls it; its value must be the
loss's in NumPy (within ``TOL``, or ten rounding units of a float16 or float32 argument's
precision, which NumPy computes in and jitgrad converts to float64); the oracles of the gradient are autograd's
``grad`` of the same loss (the generated module importing ``autograd.numpy``) and 5-point
central differences on every entry of the differentiated arguments (at most 24, drawn).
Only first derivatives are measured (``check_grads`` also checks second order by default).

**Complex arguments.** jitgrad takes a complex argument as its real and imaginary parts and
returns its gradient in JAX's convention, ``dL/d(re) - 1j * dL/d(im)``; autograd's ``grad`` of
a real loss returns the same (both checked: for ``L = real(c * z)``, each gives ``c``), so no
conversion is made: the two are compared as they are (a complex gradient for a complex
argument, a real one for a real argument, else the case is wrong), and against central
differences on the real and imaginary parts of each complex entry (the gradient's
coordinates ``(g.real, -g.imag)``).

**Statuses** of a case: ``ok`` (agrees with autograd and with central differences, within
``TOL`` / ``FD_TOL`` relative to the largest entry), ``refused`` (an `UnsupportedError`, or a
`SignatureError` for an argument jitgrad does not take, or a ``ValueError`` the generated
code raises with a message of jitgrad's, such as eig's complex eigenvalues: its first line),
``wrong`` (a value that
is not NumPy's, a gradient that disagrees with autograd or is not finite where autograd's is;
said loudly), ``crash`` (any other exception, or more than ``--timeout`` s), and
``n/a``, counted apart, never silently: a function of autograd's own package
(a vspace's ``add``, the closures ``make_hvp`` builds: autograd's internals), or a case whose
own primal, or autograd's own gradient, raises. A *test function* is wrong if a case is, else
crash if one is, else refused if one is, else ok; n/a if all its cases are; tests that make no
gradient check at all (autograd's internals: vspaces, graph identity, tracing) are listed as
``no check``.
"""

import argparse
import contextlib
import importlib.util
import itertools
import json
import os
import signal
import sys
import tempfile
import time
import traceback

import numpy as np

TOL = 1e-6      # jitgrad against autograd, relative to max(1, max |autograd|)
FD_TOL = 1e-4   # against central differences, relative to max(1, max |fd|)
FD_ENTRIES = 24
SKIP_FILES = ("test_performance", "_test_complexity", "test_tests")


class Case:
    def __init__(self, test, fun, argnum, args, kwargs, via):
        self.test, self.fun, self.argnum = test, fun, argnum
        self.args, self.kwargs, self.via = args, kwargs, via
        self.status, self.detail, self.seconds = None, "", 0.0
        self.runtime = list(range(len(args)))  # the arguments the loss takes

    def row(self):
        return {"test": self.test, "function": getattr(self.fun, "__qualname__", repr(self.fun)),
                "argnum": self.argnum, "via": self.via, "status": self.status,
                "detail": self.detail, "seconds": round(self.seconds, 3)}


# ---------------------------------------------------------------------------------------------
# collecting


class Collector:
    def __init__(self):
        self.cases: list[Case] = []
        self.test = None
        self.depth = 0  # inside a recorded autograd.grad: its own nested calls are not cases

    def check_grads(self, fun, argnum=0, modes=None, order=2):
        def record(*args, **kwargs):
            self.cases.append(Case(self.test, fun, argnum, args, kwargs, "check_grads"))
        return record

    def wrap_make_vjp(self, real):
        """autograd's ``make_vjp`` as its transforms call it (``grad``, ``value_and_grad``,
        ``jacobian``, ``hessian``...): a test's own gradient of ``fun`` at its arguments (read
        from the closure of the ``unary_f`` autograd makes of them) is a case; the calls
        autograd makes within it (a hessian's inner gradients) are not."""
        def make_vjp(fun, x):
            if self.depth == 0 and self.test is not None:
                code = getattr(fun, "__code__", None)
                cells = dict(zip(code.co_freevars, (c.cell_contents for c in fun.__closure__
                                                    or ()))) if code is not None else {}
                if code is not None and code.co_name == "unary_f" and "args" in cells:
                    self.cases.append(Case(self.test, cells["fun"], cells["argnum"],
                                           cells["args"], cells["kwargs"], "grad"))
                else:
                    self.cases.append(Case(self.test, fun, 0, (x,), {}, "grad"))
            self.depth += 1
            try:
                return real(fun, x)
            finally:
                self.depth -= 1
        return make_vjp


def _parametrized(fn):
    """``fn``'s pytest parametrize cases as (suffix, kwargs); one empty case if none."""
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return [("", {})]
    per_mark = []
    for m in marks:
        names, values = m.args[0], m.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        per_mark.append([dict(zip(names, v if len(names) > 1 else (v,))) for v in values])
    out = []
    for combo in itertools.product(*per_mark):
        kw = {k: v for d in combo for k, v in d.items()}
        out.append(("[" + "-".join(map(str, kw.values())) + "]", kw))
    return out


def collect(path, files, only):
    from autograd import differential_operators as operators
    from autograd import test_util
    col = Collector()
    real_make_vjp = operators._make_vjp
    test_util.check_grads = col.check_grads
    operators._make_vjp = col.wrap_make_vjp(real_make_vjp)
    tests_dir = os.path.join(path, "tests")
    sys.path.insert(0, tests_dir)
    tests, body_errors = [], {}
    names = sorted(f[:-3] for f in os.listdir(tests_dir)
                   if f.startswith(("test_", "_test")) and f.endswith(".py"))
    for name in names:
        if name in SKIP_FILES or (files and name not in files):
            continue
        spec = importlib.util.spec_from_file_location(f"peer_{name}",
                                                      os.path.join(tests_dir, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except Exception as e:  # noqa: BLE001 - a module that does not import is reported
            body_errors[name] = f"import: {type(e).__name__}: {e}"
            continue
        for attr, fn in list(vars(mod).items()):
            if not (attr.startswith("test_") and callable(fn)):
                continue
            for suffix, kw in _parametrized(fn):
                tid = f"{name}::{attr}{suffix}"
                if only and only not in tid:
                    continue
                tests.append(tid)
                col.test = tid
                np.random.seed(42)
                try:
                    with _quiet():
                        fn(**kw)
                except KeyboardInterrupt:
                    raise
                except BaseException as e:  # noqa: BLE001 - the body's own failure (pytest's too)
                    body_errors[tid] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                col.test = None
    operators._make_vjp = real_make_vjp
    return col.cases, tests, body_errors


@contextlib.contextmanager
def _quiet():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            yield


# ---------------------------------------------------------------------------------------------
# measuring


def _leaves(tree, path=""):
    if isinstance(tree, (tuple, list)):
        return [leaf for i, t in enumerate(tree) for leaf in _leaves(t, f"{path}[{i}]")]
    if isinstance(tree, dict):
        return [leaf for k in tree for leaf in _leaves(tree[k], f"{path}[{k!r}]")]
    return [(path, tree)]


def _value_tol(args) -> float:
    """`TOL`, or, for arguments of less precision than float64 (NumPy computes in it, jitgrad
    in float64), ten of its rounding units (float16's: 1e-2)."""
    return max([TOL] + [10.0 * float(np.finfo(v.dtype).eps) for _, v in _leaves(args)
                        if isinstance(v, (np.ndarray, np.floating)) and v.dtype.kind == "f"])


def _literal(value):
    try:
        text = repr(value)
        return text if eval(text, {"inf": np.inf, "nan": np.nan}) == value else None
    except Exception:  # noqa: BLE001 - not a literal: passed as a module global
        return None


LOSS = """import {np} as np

def loss({params}):
{body}
"""


def _loss_module(folder, key, np_module, case, out):
    """Write and import the loss of ``case`` (projected when its output is not a scalar):
    ``FUN`` and the cotangents ``V0``... are module globals."""
    params = ", ".join(f"a{i}" for i in case.runtime)
    positional, names, extra = [], [], {}
    for i, v in enumerate(case.args):
        text = f"a{i}" if i in case.runtime else _literal(v)
        if text is None:
            extra[f"A{i}"] = v
            text = f"A{i}"
        positional.append(text)
    for k, v in case.kwargs.items():
        text = _literal(v)
        if text is None:
            extra[f"K_{k}"] = v
            text = f"K_{k}"
        names.append(f"{k}={text}")
    call = f"FUN({', '.join(positional + names)})"
    leaves = _leaves(out)
    if len(leaves) == 1 and leaves[0][0] == "" and np.ndim(out) == 0:
        body = f"    return {call}"
        cot = {}
    else:
        rng = np.random.default_rng(7)
        cot = {f"V{i}": _cotangent(rng, v) for i, (_, v) in enumerate(leaves)}
        terms = " + ".join(f"np.sum(np.real(out{p} * np.conj(V{i})))" if np.iscomplexobj(v)
                           else f"np.sum(out{p} * V{i})" for i, (p, v) in enumerate(leaves))
        body = f"    out = {call}\n    return {terms}"
    file = os.path.join(folder, f"{key}.py")
    with open(file, "w") as fh:
        fh.write(LOSS.format(np=np_module, params=params or "", body=body))
    spec = importlib.util.spec_from_file_location(key, file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.FUN = case.fun
    vars(mod).update(cot)
    vars(mod).update(extra)
    return mod.loss


def _cotangent(rng, v):
    """A random cotangent of an output leaf ``v``: real, or complex for a complex ``v``."""
    def draw():
        return rng.standard_normal(np.shape(v)) if np.ndim(v) else float(rng.standard_normal())
    return draw() + 1j * draw() if np.iscomplexobj(v) else draw()


def _coordinates(v, gradient=False):
    """The real coordinates of a leaf, raveled: its entries; a complex leaf's real parts then
    its imaginary parts (of a gradient ``g = dL/d(re) - 1j dL/d(im)``: ``g.real``, ``-g.imag``,
    the derivatives by those coordinates)."""
    v = np.asarray(v)
    if v.dtype.kind == "c":
        return np.concatenate([np.ravel(v.real), np.ravel(-v.imag if gradient else v.imag)])
    return np.ravel(v.astype(float))


def _flat(tree):
    """A gradient's real coordinates, in `_leaves` order."""
    return np.concatenate([_coordinates(v, gradient=True) for _, v in _leaves(tree)]) \
        if _leaves(tree) else np.zeros(0)


def _rebuild(tree, flat, at=0):
    """``tree`` with its leaves' real coordinates (`_coordinates`, `_leaves` order) read from
    ``flat`` from ``at``: (the tree, where its coordinates end)."""
    if isinstance(tree, (tuple, list)):
        items = []
        for t in tree:
            item, at = _rebuild(t, flat, at)
            items.append(item)
        return type(tree)(items), at
    if isinstance(tree, dict):
        out = {}
        for k in tree:
            out[k], at = _rebuild(tree[k], flat, at)
        return out, at
    v = np.asarray(tree)
    n = v.size
    if v.dtype.kind == "c":
        value = (flat[at:at + n] + 1j * flat[at + n:at + 2 * n]).reshape(v.shape)
        n *= 2
    else:
        value = flat[at:at + n].reshape(v.shape)
    if not isinstance(tree, np.ndarray):  # a number stays a number
        value = value.dtype.type(value[()]) if np.iscomplexobj(value) else float(value[()])
    else:
        value = value.astype(tree.dtype)
    return value, at + n


def _fd(loss, args, argnums, rng):
    """5-point central differences of ``loss`` on (at most FD_ENTRIES) real coordinates of the
    differentiated arguments (a complex entry's real and imaginary parts), flattened as `_flat`
    flattens a gradient: (indices, values)."""
    chosen = tuple(args[i] for i in argnums)
    flat = np.concatenate([_coordinates(v) for _, v in _leaves(chosen)]) \
        if _leaves(chosen) else np.zeros(0)
    idx = np.arange(flat.size)
    if flat.size > FD_ENTRIES:
        idx = np.sort(rng.choice(flat.size, FD_ENTRIES, replace=False))

    def at(v):
        parts = list(args)
        for i, value in zip(argnums, _rebuild(chosen, v)[0]):
            parts[i] = value
        return float(loss(*parts))
    values = []
    for k in idx:
        h = 1e-3 * max(1.0, abs(flat[k]))
        f = []
        for s in (-2, -1, 1, 2):
            v = flat.copy()
            v[k] += s * h
            f.append(at(v))
        values.append((f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h))
    return idx, np.array(values)


def _autograds_own(fn) -> bool:
    """Whether ``fn`` is code of autograd's package (a vspace's ``add``, the function
    ``make_hvp`` or ``tensor_jacobian_product`` differentiate) rather than the test's: a
    function of ``autograd.numpy`` or ``autograd.scipy`` is a user's library function, and a
    function autograd's transforms made (``grad(fun)``) is the test's when ``fun`` is."""
    import autograd
    folder = os.path.dirname(autograd.__file__)
    inner = getattr(fn, "__func__", fn)
    code = getattr(inner, "__code__", None)
    if code is None or not os.path.abspath(code.co_filename).startswith(folder + os.sep):
        return False
    if any(any(v is fn for v in vars(m).values()) for name, m in list(sys.modules.items())
           if name.startswith(("autograd.numpy", "autograd.scipy")) and m is not None):
        return False  # autograd.numpy.sin, autograd.scipy.signal.convolve: its public API
    if code.co_name == "nary_f":
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in inner.__closure__ or ())))
        return "fun" not in cells or _autograds_own(cells["fun"])
    return True


def _setting(v) -> bool:
    """Whether ``v`` is a setting rather than data: an int, bool, None, string, type or
    ellipsis, or a list or tuple of them."""
    if isinstance(v, (list, tuple)):
        return all(map(_setting, v))
    return v is None or v is Ellipsis or isinstance(v, (int, np.integer, str, type, np.dtype))


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout


def measure(case, folder, key, timeout):
    import autograd

    import jitgrad
    from jitgrad.core.errors import SignatureError, UnsupportedError
    if isinstance(case.argnum, list):
        case.argnum = tuple(case.argnum)
    argnums = case.argnum if isinstance(case.argnum, tuple) else (case.argnum,)
    if _autograds_own(case.fun):
        name = getattr(case.fun, "__qualname__", "?")
        return "n/a", (f"autograd's own function ({name}: its internals, vspaces or API, not "
                       "a function a user writes)")
    try:
        with _quiet():
            out = case.fun(*case.args, **case.kwargs)
    except Exception as e:  # noqa: BLE001
        return "n/a", f"the function raises in NumPy: {type(e).__name__}: {e}"
    if any(np.asarray(v).dtype.kind not in "fiubc" for _, v in _leaves(out)):
        return "n/a", "output is not numeric"
    # the arguments not differentiated that are settings (numbers, None, strings, types, ...,
    # lists and tuples of them: np.split's sections, an axis, a dtype) are written into the
    # loss as a user writes them; float scalars and arrays stay arguments
    case.runtime = [i for i, v in enumerate(case.args) if i in argnums or not _setting(v)]
    args = [case.args[i] for i in case.runtime]
    wrt = tuple(case.runtime.index(i) for i in argnums)
    wrt = wrt if isinstance(case.argnum, tuple) else wrt[0]
    argnums = wrt if isinstance(wrt, tuple) else (wrt,)
    loss_ag = _loss_module(folder, key + "_ag", "autograd.numpy", case, out)
    loss_jg = _loss_module(folder, key + "_jg", "numpy", case, out)
    try:
        with _quiet():
            ref = autograd.grad(loss_ag, wrt)(*args)
    except Exception as e:  # noqa: BLE001
        return "n/a", f"autograd's own gradient raises: {type(e).__name__}: {e}"
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with _quiet():
            value, got = jitgrad.value_and_grad(loss_jg, wrt=wrt)(*args)
    except (UnsupportedError, SignatureError) as e:
        return "refused", ("" if isinstance(e, UnsupportedError) else "SignatureError: ") \
            + str(e).splitlines()[0]
    except Timeout:
        return "crash", f"more than {timeout} s"
    except Exception as e:  # noqa: BLE001
        first = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
        if "ValueError: jitgrad: " in first:  # the run time's own refusal (eig's complex
            return "refused", f"at run time: {first}"  # eigenvalues), not a failure
        return "crash", first
    finally:
        signal.alarm(0)
    primal = float(loss_ag(*args))
    if not abs(float(value) - primal) <= _value_tol(args) * max(1.0, abs(primal)):
        return "wrong", f"value {float(value)!r}, NumPy's {primal!r}"
    kinds = [(p, np.iscomplexobj(a), np.iscomplexobj(b))
             for (p, a), (_, b) in zip(_leaves(ref), _leaves(got))]
    for p, ref_complex, got_complex in kinds:
        if ref_complex != got_complex:
            return "wrong", (f"gradient{p} is {'complex' if got_complex else 'real'}, "
                             f"autograd's {'complex' if ref_complex else 'real'}")
    r, g = _flat(ref), _flat(got)
    if r.shape != g.shape:
        return "wrong", f"gradient has {g.size} entries, autograd's {r.size}"
    idx, fd = _fd(loss_ag, args, argnums, np.random.default_rng(0))
    finite = np.isfinite(r)
    if not np.all(np.isfinite(g[finite])):
        return "wrong", "non-finite gradient where autograd's is finite"
    err_ag = np.max(np.abs(g - r)[finite], initial=0.0) / max(1.0, np.max(np.abs(r[finite]), initial=0.0))
    ok_fd = np.isfinite(fd)
    err_fd = np.max(np.abs(g[idx] - fd)[ok_fd], initial=0.0) / max(1.0, np.max(np.abs(fd[ok_fd]), initial=0.0))
    if err_ag > TOL:
        fd_says = "central differences agree with jitgrad" if err_fd <= FD_TOL else \
            "central differences agree with autograd" if np.max(np.abs(r[idx] - fd)[ok_fd], initial=0.0) \
            / max(1.0, np.max(np.abs(fd[ok_fd]), initial=0.0)) <= FD_TOL else "central differences agree with neither"
        return "wrong", f"differs from autograd by {err_ag:.2e} (relative); {fd_says}"
    if err_fd > FD_TOL:
        return "ok", f"central differences differ by {err_fd:.1e} (autograd agrees with jitgrad)"
    return "ok", ""


# ---------------------------------------------------------------------------------------------
# reporting

ORDER = ("wrong", "crash", "refused", "ok")


def test_statuses(cases, tests, body_errors):
    by_test = {t: [] for t in tests}
    for c in cases:
        by_test.setdefault(c.test, []).append(c)
    out = {}
    for t, cs in by_test.items():
        measured = [c for c in cs if c.status != "n/a"]
        if not cs:
            out[t] = ("no check", body_errors.get(t, "no gradient check"))
        elif not measured:
            out[t] = ("n/a", cs[0].detail)
        else:
            status = next(s for s in ORDER if any(c.status == s for c in measured))
            first = next(c for c in measured if c.status == status)
            out[t] = (status, first.detail if status != "ok" else
                      f"{len(measured)} case(s)" + (f", {len(cs) - len(measured)} n/a"
                                                    if len(cs) > len(measured) else ""))
    return out


def _why_na(statuses) -> dict:
    out = {}
    for s, d in statuses.values():
        if s == "n/a":
            why = "autograd's own function" if d.startswith("autograd's own function") \
                else "raises in autograd or NumPy"
            out[why] = out.get(why, 0) + 1
    return out


def tally(statuses, cases):
    """Counts per status of the functions (``statuses``: each a tuple, its status first) and
    of the cases; the functions measured (a status of ORDER) and those ok."""
    counts, case_counts = {}, {}
    for status, *_ in statuses:
        counts[status] = counts.get(status, 0) + 1
    for c in cases:
        case_counts[c.status] = case_counts.get(c.status, 0) + 1
    measured = sum(v for k, v in counts.items() if k in ORDER)
    return counts, case_counts, measured, counts.get("ok", 0)


def markdown(statuses, cases, header):
    counts, case_counts, measured, ok = tally(statuses.values(), cases)
    lines = [header, "",
             f"Test functions: {len(statuses)}; measured {measured}: "
             + ", ".join(f"{k} {counts.get(k, 0)}" for k in ORDER)
             + f" ({100.0 * ok / max(measured, 1):.1f} % ok); n/a {counts.get('n/a', 0)} ("
             + ", ".join(f"{k} {v}" for k, v in sorted(_why_na(statuses).items()))
             + f"); no gradient check {counts.get('no check', 0)}.",
             f"Cases: {len(cases)}: " + ", ".join(f"{k} {v}" for k, v in sorted(case_counts.items())) + ".",
             "", "| test | status | detail |", "|---|---|---|"]
    for t, (s, d) in sorted(statuses.items(), key=lambda kv: (ORDER.index(kv[1][0])
                                                             if kv[1][0] in ORDER else 9, kv[0])):
        lines.append(f"| `{t}` | {s} | {d.replace('|', '/').replace('[', '(').replace(']', ')')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--files", default="", help="comma-separated test module names")
    p.add_argument("--only", default="", help="a substring of the test ids to run")
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--markdown")
    p.add_argument("--json")
    p.add_argument("--peer", choices=("autograd", "tangent"), default="autograd",
                   help="whose checkout PATH is (tangent: bench/peer_tests_tangent.py)")
    p.add_argument("--short", action="store_true", help="tangent: one input per parameter")
    a = p.parse_args(argv)
    if a.peer == "tangent":
        from bench import peer_tests_tangent
        return peer_tests_tangent.run(a)
    files = set(filter(None, a.files.split(",")))
    start = time.time()
    cases, tests, body_errors = collect(os.path.abspath(a.path), files, a.only)
    print(f"collected {len(cases)} cases from {len(tests)} test functions", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="peer-tests-") as folder:
        for i, case in enumerate(cases):
            t0 = time.time()
            try:
                case.status, case.detail = measure(case, folder, f"case{i}", a.timeout)
            except Exception as e:  # noqa: BLE001 - a failure of the bench itself
                case.status, case.detail = "crash", f"bench: {type(e).__name__}: {e}"
                traceback.print_exc()
            case.seconds = time.time() - t0
            if case.status in ("wrong", "crash"):
                print(f"{case.status.upper()}: {case.test} {case.detail}", file=sys.stderr)
    statuses = test_statuses(cases, tests, body_errors)
    jit = "JITGRAD_DISABLE_JIT=1 (generated source run as Python)" \
        if os.environ.get("JITGRAD_DISABLE_JIT") else "compiled with Numba"
    header = (f"autograd's test functions under jitgrad ({jit}; {time.time() - start:.0f} s; "
              f"`python -m bench.peer_tests {a.path}`)")
    text = markdown(statuses, cases, header)
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(text)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"tests": {t: {"status": s, "detail": d} for t, (s, d) in statuses.items()},
                       "cases": [c.row() for c in cases]}, fh, indent=1)
    print("\n".join(text.splitlines()[:4]))


if __name__ == "__main__":
    main()
