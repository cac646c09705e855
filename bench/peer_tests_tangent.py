"""``python -m bench.peer_tests --peer tangent PATH``: jitgrad on Tangent's own test functions.

Usage (from the repository root)::

    JITGRAD_DISABLE_JIT=1 python -m bench.peer_tests --peer tangent ~/src/tangent \\
        --markdown out.md --json out.json [--only saxpy] [--short]

Tangent (github.com/google/tangent, Apache-2.0) is not part of this repository and none of its
code is copied here: PATH is the user's checkout. Its ``tests/functions.py`` is imported at run
time (with a stand-in ``tangent`` module when Tangent itself is not installed: an identity
``trace``, a do-nothing ``insert_grad_of``, a list for ``Stack``, so that the module imports;
no function measured calls them), and so are the three functions of
``tests/test_hessian_vector_products.py`` (its function definitions only, executed with the
``np`` the file imports, autograd's).

**Which function, which inputs, which derivative.** Tangent's ``conftest.py`` hands a function
of ``functions.py`` to a test by its parameter names (``a``, ``b``, ``c`` scalars from ten
values, ``n`` an integer 1..3, ``x`` a vector of 3, 5 or 10 normal draws, ``sqm`` a 1x1 or
5x5 matrix); this harness does the same (`SIGNATURES`: the tests each signature meets) and
measures what those tests measure: the **reverse** gradient with respect to the first argument
(``test_grad_*``: `jitgrad.value_and_grad`), the **forward** derivative in the first argument
(``test_deriv_*`` of scalar functions: `jitgrad.jvp`), the **second** derivative in the first
argument (``test_reverse_over_reverse_*``: ``grad(grad(f))``), and the Hessian-vector products
of ``test_hessian_vector_products`` (`jitgrad.hvp`, 300 float32 entries as there). Functions
with tests of their own (``logistic_regression``, ``rnn``, ``bilinear``, ``dict_saxpy``,
``unpacking_args_saxpy``, ``nested_dict``) get those tests' inputs and ``wrt`` (`OWN_TESTS`).
Functions Tangent's tests leave out (its ``blacklisted`` list, or a signature no test takes:
``passthru_pack``, ``passthru_unpack``, ``dict_wrapper``) are measured too, with the inputs
their parameter names give (`EXTRA_INPUTS`), and marked so. ``--short`` takes one value per
parameter, as Tangent's ``--short``.

**Out of scope** (listed with the reason, not counted): functions that use TensorFlow
(``tfe_*``, the traced ``_trace_mul``), or Tangent's own API (``tangent.Stack``/``push``/
``pop``: its tape; ``insert_grad_of``: a hook that changes the gradient Tangent computes, so
the derivative is not the function's), read from the names their code refers to.

**Oracles.** Tangent's own reference: autograd, with the function module's ``np`` swapped for
``autograd.numpy`` as Tangent's tests swap it; and always 5-point central differences (first
derivatives: of the function; second: the 5-point second difference; Hessian-vector
products: central differences of autograd's gradient along ``v``). Where autograd cannot run
the function (an in-place write), central differences alone, as Tangent falls back to them.

**Statuses** of a case: ``ok`` (value equals NumPy's; derivative within ``TOL`` of autograd
and ``FD_TOL`` of central differences, or, where they disagree with autograd, autograd agrees:
a kink the stencil crosses, said in the detail), ``refused`` (`UnsupportedError` or
`SignatureError`), ``wrong`` (any disagreement with both oracles: said loudly), ``crash``
(any other exception, or more than ``--timeout`` s), ``n/a`` (the function raises in NumPy at
those inputs). A function's status is its worst case's (wrong, crash, refused, ok).
"""

import ast
import contextlib
import copy
import importlib.util
import itertools
import json
import os
import signal
import sys
import time
import types

import numpy as np

from bench.peer_tests import ORDER, Timeout, _alarm, _flat, _leaves, _quiet, tally

TOL = 1e-6      # against autograd, relative to max(1, max |autograd|)
FD_TOL = 1e-4   # against central differences, relative to max(1, max |fd|)
SCALARS = (-2.0, -1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0)  # conftest.py's
INTEGERS = (1, 2, 3)
VECTOR_SIZES = (3, 5, 10)
MATRIX_SIZES = (1, 5)

# the tests of Tangent's that take a function by its parameter names, and what they measure
SIGNATURES = {
    ("a",): ("reverse", "forward", "second"),
    ("a", "b"): ("reverse", "forward", "second"),
    ("a", "b", "c"): ("reverse", "forward", "second"),
    ("a", "n"): ("reverse", "forward"),
    ("x",): ("reverse",),
    ("sqm",): ("reverse",),
}
TANGENTS_API = {"tangent", "insert_grad_of"}  # names whose use puts a function out of scope


def _inputs(short):
    """The values of each parameter name, as conftest.py draws them (seeded here)."""
    rng = np.random.RandomState(0)
    scalars = (2.0,) if short else SCALARS
    return {
        "a": scalars, "b": scalars, "c": scalars,
        "n": (1,) if short else INTEGERS,
        "x": [rng.randn(k) for k in ((3,) if short else VECTOR_SIZES)],
        "sqm": [rng.randn(k, k) for k in ((3,) if short else MATRIX_SIZES)],
    }


def _own_tests(short):
    """The functions with a test of their own: (args, wrt) per case, as those tests make them."""
    rng = np.random.RandomState(0)
    scalars = (2.0,) if short else SCALARS
    w, b, inp = rng.randn(3, 5), rng.randn(5), rng.rand(3)
    label = np.zeros(5)
    label[1] = 1.0
    D = 3
    triples = list(itertools.product(scalars, repeat=3))
    return {
        "logistic_regression": [((inp, label, w, b), (2, 3))],
        "rnn": [((rng.randn(3, 2), rng.randn(2, 3)), (0, 1))],
        "bilinear": [((rng.randn(1, D), rng.randn(1, D), rng.randn(D, D), rng.randn(D, D),
                       rng.randn(1, D)), 0)],
        "dict_saxpy": [(({"a": a, "b": b, "c": c},), 0) for a, b, c in triples],
        "unpacking_args_saxpy": [(((a, b, c),), 0) for a, b, c in triples],
        "nested_dict": [(({"i": {"j": 3.0, "k": 4.0}},), 0)],
    }


# functions no test of Tangent's runs (blacklisted, or a signature no fixture fills): the
# parameters' values, by the convention functions.py's docstring states
EXTRA_INPUTS = {
    "listcomp": ("x",),   # its ``a`` is iterated: a vector
    "passthru_pack": ("a", "b", "c", "i"),
    "passthru_unpack": ("abc",),
    "dict_wrapper": ("abc",),
}


def _stand_in_tangent():
    mod = types.ModuleType("tangent")
    mod.trace = lambda f: f

    @contextlib.contextmanager
    def insert_grad_of(x):
        yield 0.0
    mod.insert_grad_of = insert_grad_of
    mod.Stack = list
    mod.push = lambda stack, x, op_id: stack.append(x)
    mod.pop = lambda stack, op_id: stack.pop()
    return mod


def load(path):
    """Tangent's ``tests/functions.py`` and the functions of its HVP test, as modules."""
    tests = os.path.join(path, "tests")
    stand_in = None
    try:
        import tangent  # noqa: F401
    except ImportError:
        stand_in = sys.modules["tangent"] = _stand_in_tangent()
    try:
        spec = importlib.util.spec_from_file_location("tangent_functions",
                                                      os.path.join(tests, "functions.py"))
        functions = importlib.util.module_from_spec(spec)
        sys.modules["tangent_functions"] = functions
        spec.loader.exec_module(functions)
    finally:
        if stand_in is not None:
            del sys.modules["tangent"]
    hvp_file = os.path.join(tests, "test_hessian_vector_products.py")
    with open(hvp_file) as fh:
        tree = ast.parse(fh.read(), hvp_file)
    tree.body = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and not n.name.startswith(("test_", "_test")) and n.name != "tf"]
    hvp = types.ModuleType("tangent_hvp_functions")
    hvp.__file__ = hvp_file
    import autograd.numpy
    hvp.np = autograd.numpy  # the file's own ``import autograd.numpy as np``
    exec(compile(tree, hvp_file, "exec"), vars(hvp))  # noqa: S102 - the user's checkout
    return functions, hvp


def _names(code):
    """The global names a code object (and the functions nested in it) refers to."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c)
    return out


def out_of_scope(fn) -> str:
    """Why ``fn`` is not a function to differentiate with jitgrad, or ''."""
    names = _names(fn.__code__)
    if "tf" in names:
        return "TensorFlow (tf.*), not NumPy"
    if names & TANGENTS_API:
        return ("Tangent's own API (" + ", ".join(sorted(names & TANGENTS_API))
                + "): its tape or its gradient hook, not a function's derivative")
    return ""


class Case:
    def __init__(self, function, kind, args, wrt, note=""):
        self.function, self.kind, self.args, self.wrt, self.note = function, kind, args, wrt, note
        self.status, self.detail, self.seconds = None, "", 0.0

    def row(self):
        return {"function": self.function, "kind": self.kind, "wrt": self.wrt,
                "status": self.status, "detail": self.detail, "seconds": round(self.seconds, 3)}


def collect(functions, hvp, short, only):
    """(cases, functions measured with their notes, functions out with reasons)."""
    values = _inputs(short)
    scalars = values["a"]
    values["i"] = (0, 1, 2) if not short else (1,)
    values["abc"] = [tuple(t) for t in itertools.product(scalars, repeat=3)]
    own = _own_tests(short)
    cases, notes, out = [], {}, {}
    blacklisted = _tangents_blacklist(functions)
    for name, fn in vars(functions).items():
        if not isinstance(fn, types.FunctionType) or fn.__module__ != functions.__name__:
            continue
        if only and only not in name:
            continue
        why = out_of_scope(fn)
        if why:
            out[name] = why
            continue
        params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        if name in own:
            notes[name] = "its own test's inputs"
            cases += [Case(name, "reverse", args, wrt) for args, wrt in own[name]]
            continue
        kinds = SIGNATURES.get(params)
        note = ""
        if name in blacklisted or name in EXTRA_INPUTS or kinds is None:
            note = ("in Tangent's blacklist" if name in blacklisted
                    else "no test of Tangent's takes its signature")
            params = EXTRA_INPUTS.get(name, params)
            kinds = ("reverse",)  # no test of Tangent's measures more of it
        if any(p not in values for p in params):
            out[name] = f"parameters {params}: no input convention"
            continue
        notes[name] = note
        for args in itertools.product(*(values[p] for p in params)):
            for kind in kinds:
                cases.append(Case(name, kind, args, 0, note))
    for name in ("f_straightline", "f_calltree"):
        if only and only not in name:
            continue
        rng = np.random.RandomState(0)
        a = rng.normal(scale=1, size=(300,)).astype("float32")
        notes[name] = "test_hessian_vector_products"
        cases.append(Case(name, "hvp", (a,), 0))
    return cases, notes, out


def _tangents_blacklist(functions):
    """The names in conftest.py's ``blacklisted`` list (read from its text, not imported)."""
    path = os.path.join(os.path.dirname(functions.__file__), "conftest.py")
    try:
        with open(path) as fh:
            tree = ast.parse(fh.read())
    except OSError:
        return set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "blacklisted"
                                                for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


# ---------------------------------------------------------------------------------------------
# measuring


@contextlib.contextmanager
def _autograd_np(module):
    """Tangent's oracle: the function module's ``np`` swapped for ``autograd.numpy``."""
    import autograd.numpy
    saved = module.np
    module.np = autograd.numpy
    try:
        yield
    finally:
        module.np = saved


def _scalar(fn, wrt, args):
    """``fn`` at ``args`` as a real number (a tuple result: the sum of its entries, the
    projection on ones Tangent's tests seed)."""
    out = fn(*copy.deepcopy(args))
    return float(sum(np.sum(v) for _, v in _leaves(out)))


def _fd(f, x, h=1e-3):
    """5-point central differences of the scalar function ``f`` of a tree ``x`` (each float
    leaf entry)."""
    from bench.peer_tests import _coordinates, _rebuild
    flat = np.concatenate([_coordinates(v) for _, v in _leaves(x)])
    out = []
    for k in range(flat.size):
        step = h * max(1.0, abs(flat[k]))
        f_at = []
        for s in (-2, -1, 1, 2):
            v = flat.copy()
            v[k] += s * step
            f_at.append(f(_rebuild(x, v)[0]))
        out.append((f_at[0] - 8 * f_at[1] + 8 * f_at[2] - f_at[3]) / (12 * step))
    return np.array(out)


def _with(args, wrt, value):
    parts = list(copy.deepcopy(args))
    for i, v in zip(wrt, value if isinstance(value, tuple) else (value,)):
        parts[i] = v
    return parts


def _err(got, ref):
    ok = np.isfinite(ref) & np.isfinite(got)
    if not np.array_equal(np.isfinite(ref), np.isfinite(got)):
        return np.inf  # a non-finite entry where the other is finite
    got, ref = np.where(ok, got, 0.0), np.where(ok, ref, 0.0)
    return np.max(np.abs(got - ref)[ok], initial=0.0) / max(1.0, np.max(np.abs(ref[ok]), initial=0.0))


def _oracles(case, fn, module):
    """(autograd's derivative or None, central differences), flat, for ``case``."""
    import autograd
    wrt = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    chosen = tuple(case.args[i] for i in wrt)
    ag = None
    if case.kind in ("reverse", "forward"):
        with _autograd_np(module):
            try:
                with _quiet():
                    g = autograd.grad(lambda *a: _ag_scalar(fn, a), case.wrt)(*copy.deepcopy(case.args))
                ag = _flat(g if isinstance(case.wrt, tuple) else (g,))
            except Exception:  # noqa: BLE001 - autograd cannot run it: differences alone
                ag = None
        fd = _fd(lambda v: _scalar(fn, wrt, _with(case.args, wrt, tuple(v))), chosen)
    elif case.kind == "second":
        with _autograd_np(module):
            try:
                with _quiet():
                    g = autograd.grad(autograd.grad(lambda *a: _ag_scalar(fn, a)))(*copy.deepcopy(case.args))
                ag = np.array([float(g)])
            except Exception:  # noqa: BLE001
                ag = None
        a, h = case.args[0], 1e-3 * max(1.0, abs(case.args[0]))
        f = [_scalar(fn, (0,), _with(case.args, (0,), a + s * h)) for s in (-2, -1, 0, 1, 2)]
        fd = np.array([(-f[0] + 16 * f[1] - 30 * f[2] + 16 * f[3] - f[4]) / (12 * h * h)])
    else:  # hvp, v = a as the test takes it
        a = case.args[0].astype(float)
        gfun = autograd.grad(fn)
        with _quiet():
            ag = np.ravel(autograd.hessian_vector_product(fn)(a, a))
        h = 1e-4
        fd = np.ravel((gfun(a + h * a) - gfun(a - h * a)) / (2 * h))
    return ag, fd


def _ag_scalar(fn, args):
    out = fn(*args)
    leaves = [v for _, v in _leaves(out)]
    return sum(leaves[1:], leaves[0]) if len(leaves) > 1 else leaves[0]


def _jitgrad(case, fn):
    """(value, flat derivative) jitgrad computes for ``case``."""
    import jitgrad
    args = copy.deepcopy(case.args)
    if case.kind == "reverse":
        target = fn
        out = fn(*copy.deepcopy(args))
        if len(_leaves(out)) > 1 or np.ndim(out):
            target = _summed(fn)  # a tuple or array result: its sum, Tangent's ones seed
        value, g = jitgrad.value_and_grad(target, wrt=case.wrt)(*args)
        return float(value), _flat(g if isinstance(case.wrt, tuple) else (g,))
    if case.kind == "forward":
        tangents = (1.0,) + (None,) * (len(args) - 1)
        value, t = jitgrad.jvp(fn, args, tangents)
        return float(value), np.array([float(t)])
    if case.kind == "second":
        d2 = jitgrad.grad(jitgrad.grad(fn))(*args)
        return None, np.array([float(d2)])
    a = args[0]
    return None, np.ravel(jitgrad.hvp(fn)(a, a))


def _summed(fn):
    def summed(*args):
        out = fn(*args)
        total = 0.0
        for v in out:
            total = total + np.sum(v)
        return total
    return summed


def measure(case, module, timeout):
    from jitgrad.core.errors import SignatureError, UnsupportedError
    fn = getattr(module, case.function)
    try:
        with _quiet():
            primal = _scalar(fn, (0,), case.args)
    except Exception as e:  # noqa: BLE001
        return "n/a", f"raises in NumPy: {type(e).__name__}: {e}"
    if not np.isfinite(primal):
        return "n/a", f"NumPy's value is {primal} (outside the function's domain)"
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with _quiet():
            value, got = _jitgrad(case, fn)
    except (UnsupportedError, SignatureError) as e:
        return "refused", str(e).splitlines()[0]
    except Timeout:
        return "crash", f"more than {timeout} s"
    except Exception as e:  # noqa: BLE001
        return "crash", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    finally:
        signal.alarm(0)
    if value is not None and not abs(value - primal) <= TOL * max(1.0, abs(primal)):
        return "wrong", f"value {value!r}, NumPy's {primal!r}"
    with _quiet():
        ag, fd = _oracles(case, fn, module)
    if ag is not None and ag.shape != got.shape or fd.shape != got.shape:
        return "wrong", f"{got.size} derivative entries, expected {fd.size}"
    if not np.all(np.isfinite(got[np.isfinite(fd)])):
        return "wrong", "non-finite derivative where central differences are finite"
    tol = 1e-4 if case.kind == "hvp" else TOL  # float32 entries, as the test draws them
    e_fd = _err(got, fd)
    if ag is None:
        return ("ok", "central differences only (autograd cannot run it)") if e_fd <= FD_TOL \
            else ("wrong", f"differs from central differences by {e_fd:.1e} (autograd cannot run it)")
    e_ag = _err(got, ag)
    if e_ag <= tol:
        return "ok", "" if e_fd <= FD_TOL else \
            f"central differences differ by {e_fd:.1e} (autograd agrees with jitgrad: a kink)"
    return "wrong", f"differs from autograd by {e_ag:.1e}, from central differences by {e_fd:.1e}"


# ---------------------------------------------------------------------------------------------
# reporting


def statuses(cases, notes):
    by_fn = {name: [] for name in notes}
    for c in cases:
        by_fn.setdefault(c.function, []).append(c)
    out = {}
    for name, cs in by_fn.items():
        measured = [c for c in cs if c.status != "n/a"]
        kinds = sorted({c.kind for c in cs})
        if not measured:
            out[name] = ("n/a", cs[0].detail if cs else "no case", kinds)
            continue
        status = next(s for s in ORDER if any(c.status == s for c in measured))
        first = next(c for c in measured if c.status == status)
        n_bad = sum(c.status == status for c in measured)
        detail = (f"{len(measured)} case(s)" + (f", {len(cs) - len(measured)} n/a"
                                                if len(cs) > len(measured) else "")
                  if status == "ok" else f"{n_bad} of {len(measured)} case(s) {status} "
                  f"({first.kind}, args {_short(first.args)}): {first.detail}")
        out[name] = (status, detail, kinds)
    return out


def _short(args):
    text = repr(tuple(np.round(a, 3) if isinstance(a, np.ndarray) else a for a in args))
    return text if len(text) < 60 else text[:57] + "..."


def markdown(result, cases, notes, out_fns, header):
    counts, case_counts, measured, ok = tally(result.values(), cases)
    lines = [header, "",
             f"Functions: {len(result) + len(out_fns)}; measured {measured}: "
             + ", ".join(f"{k} {counts.get(k, 0)}" for k in ORDER)
             + f" (**{100.0 * ok / max(measured, 1):.1f} % ok**); n/a {counts.get('n/a', 0)}; "
             f"out of scope {len(out_fns)}.",
             f"Cases: {len(cases)}: " + ", ".join(f"{k} {v}" for k, v in sorted(case_counts.items()))
             + ".", "", "| function | status | derivatives | note | detail |", "|---|---|---|---|---|"]
    for name, (s, d, kinds) in sorted(result.items(), key=lambda kv: (
            ORDER.index(kv[1][0]) if kv[1][0] in ORDER else 9, kv[0])):
        clean = d.replace("|", "/").replace("[", "(").replace("]", ")")
        lines.append(f"| `{name}` | {s} | {', '.join(kinds)} | {notes.get(name, '')} | {clean} |")
    lines += ["", "Out of scope (not counted):", ""]
    lines += [f"- `{name}`: {why}" for name, why in sorted(out_fns.items())]
    return "\n".join(lines) + "\n"


def run(a):
    """Run with the parsed options of `bench.peer_tests.main` (``--peer tangent``)."""
    start = time.time()
    path = os.path.abspath(a.path)
    functions, hvp = load(path)
    cases, notes, out_fns = collect(functions, hvp, a.short, a.only)
    print(f"collected {len(cases)} cases of {len(notes)} functions "
          f"({len(out_fns)} out of scope)", file=sys.stderr)
    for case in cases:
        module = hvp if case.kind == "hvp" else functions
        t0 = time.time()
        try:
            case.status, case.detail = measure(case, module, a.timeout)
        except Exception as e:  # noqa: BLE001 - a failure of the bench itself
            case.status, case.detail = "crash", f"bench: {type(e).__name__}: {e}"
        case.seconds = time.time() - t0
        if case.status in ("wrong", "crash"):
            print(f"{case.status.upper()}: {case.function} {case.kind} {_short(case.args)} "
                  f"{case.detail}", file=sys.stderr)
    result = statuses(cases, notes)
    jit = "JITGRAD_DISABLE_JIT=1 (generated source run as Python)" \
        if os.environ.get("JITGRAD_DISABLE_JIT") else "compiled with Numba"
    header = (f"Tangent's test functions under jitgrad ({jit}; {time.time() - start:.0f} s; "
              f"`python -m bench.peer_tests --peer tangent {a.path}`"
              + (" --short" if a.short else "") + ")")
    text = markdown(result, cases, notes, out_fns, header)
    if a.markdown:
        with open(a.markdown, "w") as fh:
            fh.write(text)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"functions": {n: {"status": s, "detail": d, "derivatives": k}
                                     for n, (s, d, k) in result.items()},
                       "out_of_scope": out_fns, "cases": [c.row() for c in cases]}, fh, indent=1)
    print("\n".join(text.splitlines()[:4]))
