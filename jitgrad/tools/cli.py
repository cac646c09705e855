"""Command line: ``python -m jitgrad`` (also installed as ``jitgrad``).

    jitgrad demo                  the square example, the seed loss's code, a short training run
    jitgrad show  model.py:loss --sig "f64[:,:], f64[:]" [--wrt W,b]   generated source
    jitgrad ir    model.py:loss --sig ...           the graph, one operation per line
    jitgrad check model.py:loss --sig ...           finite-difference check on random data
    jitgrad graph model.py:loss --sig ... [-o g.svg] [--adjoint]   the graph as DOT (or SVG)

A signature lists the arguments in Numba's notation: ``f64`` (a float), ``i64`` (an int, given
the value 3 for the check), ``f64[:]``, ``f64[:,:]``, ... (arrays of random numbers, 3 along
every axis, so that matrix products and broadcasting line up).

Exit status: 0 on success. 1 when jitgrad refuses the function (the message shows the file, line
and a caret under what it refuses), when ``check`` finds a gradient that disagrees with finite
differences, when a program it needs is missing (SciPy, Graphviz's ``dot``), or when the
function itself raises. 2 when the command line is wrong (argparse's own status for a usage
error): a target that is not ``file.py:function``, a file that does not exist or does not
import, a function the file does not define, a ``--sig`` that cannot be read or does not fit the
function, a ``--wrt`` that names no float argument. Each failure prints one message,
``error: ...``, to stderr; ``--debug`` prints the Python traceback too, with jitgrad's frames.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import re
import sys
import time
import traceback

import numpy as np

from jitgrad import api, pipeline
from jitgrad.core.errors import TRACEBACK_ENV, JitgradError

COMMANDS = {
    "demo": "see it work: d/dx x**2 at 3, the two-layer loss's generated code, a training run",
    "show": "print the generated forward and adjoint source of a function's gradient",
    "ir": "print the function's graph, one typed operation per line, with its source lines",
    "check": "compare the gradient with central finite differences on random arguments",
    "graph": "print the graph as Graphviz DOT, or draw it with -o g.svg (needs Graphviz)",
    "warm": "compile jitgrad's runtime for this machine once (the demo does too), so that a "
            "new gradient's first call compiles only its own code",
}


class UsageError(Exception):
    """A mistake in the command line itself (exit status 2)."""


def _load(target: str):
    """The function ``name`` of the file ``path``, for a target ``path:name``."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected path/to/file.py:function, got {target!r}")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file (the target is path/to/file.py:function)")
    spec = importlib.util.spec_from_file_location(
        "jitgrad_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]), path)
    if spec is None:
        raise UsageError(f"cannot read {path} as Python source (name it with .py)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: one message, where it failed
        raise UsageError(f"{path} failed to import:\n{_where(e, path)}") from e
    fn = getattr(module, name, None)
    if fn is None:
        defined = sorted(k for k, v in vars(module).items()
                         if inspect.isfunction(v) and v.__module__ == spec.name)
        raise UsageError(f"{path} has no function {name!r} (it defines: "
                         f"{', '.join(defined) or 'no functions'})")
    if not callable(fn):
        raise UsageError(f"{name!r} in {path} is a {type(fn).__name__}, not a function")
    return fn


def _where(e: BaseException, path: str) -> str:
    """``e`` as one message, with the line of ``path`` it was raised from."""
    text = "".join(traceback.format_exception_only(type(e), e)).rstrip()
    if isinstance(e, SyntaxError):
        return text  # its own file, line and caret
    lines = [lineno for frame, lineno in traceback.walk_tb(e.__traceback__)
             if os.path.abspath(frame.f_code.co_filename) == os.path.abspath(path)]
    if lines:
        text += f'\n  File "{path}", line {lines[-1]}'
    return text


_SIZES = (3, 3, 3, 3, 3)
_ITEM = re.compile(r"(f64|f32|float64|float32|float|i64|int64|int|bool)\s*(?:\[(.*)\])?")


def _signature_items(signature: str) -> list[str]:
    """``"f64[:,:], f64"`` -> ``["f64[:,:]", "f64"]``: split at the commas outside brackets."""
    items, depth, current = [], 0, ""
    for ch in signature:
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if depth < 0 or depth > 1:
            raise UsageError(f"cannot read the signature {signature!r}: unbalanced brackets")
        if ch == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += ch
    if depth:
        raise UsageError(f"cannot read the signature {signature!r}: a '[' is not closed")
    items.append(current.strip())
    if not any(items):
        raise UsageError("the signature is empty: give one type per argument, e.g. "
                         '--sig "f64[:,:], f64[:]"')
    if not all(items):
        raise UsageError(f"cannot read the signature {signature!r}: an empty item between commas")
    return items


def example_args(signature: str, seed: int = 0) -> list:
    """Random arguments for a Numba-style signature such as ``"f64[:,:], f64, i64"``; a
    signature it cannot read raises `UsageError`."""
    rng = np.random.default_rng(seed)
    args = []
    for item in _signature_items(signature):
        m = _ITEM.fullmatch(item)
        axes = [] if m is None or m.group(2) is None else [a.strip() for a in m.group(2).split(",")]
        if m is None or not all(a in (":", "::1") for a in axes) or (m.group(2) is not None
                                                                     and not axes):
            raise UsageError(f"cannot read {item!r} in the signature (use f64, f32, i64, bool, "
                             "and arrays such as f64[:] or f64[:,:])")
        kind, ndim = m.group(1), len(axes)
        if kind.startswith("i") or kind == "int":
            args.append(3 if ndim == 0 else rng.integers(0, 3, _SIZES[:ndim]))
        elif kind == "bool":
            args.append(True if ndim == 0 else rng.random(_SIZES[:ndim]) > 0.5)
        else:
            dtype = np.float32 if "32" in kind else np.float64
            args.append(float(rng.normal()) if ndim == 0
                        else rng.normal(size=_SIZES[:ndim]).astype(dtype))
    return args


def _parameters(fn) -> tuple[list[str], int] | None:
    """The function's positional parameters and how many of them have no default."""
    try:
        sig = inspect.signature(getattr(fn, "py_func", fn))
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [p.name for p in params], sum(p.default is p.empty for p in params)


def _is_float(a) -> bool:
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _wrt(text: str | None, params: list[str] | None, args: list, name: str) -> tuple:
    """The ``--wrt`` positions (default: every float argument)."""
    if text is None:
        wrt = tuple(k for k, a in enumerate(args) if _is_float(a))
        if not wrt:
            raise UsageError("--sig has no float argument to differentiate (f64, f32 or an "
                             "array of them)")
        return wrt
    wrt = []
    for w in (w.strip() for w in text.split(",")):
        if re.fullmatch(r"-?\d+", w):
            k = int(w)
            if not -len(args) <= k < len(args):
                raise UsageError(f"--wrt {w}: {name} takes {len(args)} arguments")
            k %= len(args)
        elif params is not None and w in params:
            k = params.index(w)
        else:
            known = f" (its arguments: {', '.join(params)})" if params else ""
            raise UsageError(f"--wrt: {name} has no argument named {w!r}{known}")
        if not _is_float(args[k]):
            raise UsageError(f"--wrt: argument {w!r} is not a float in --sig; jitgrad "
                             "differentiates with respect to floats and float arrays")
        wrt.append(k)
    return tuple(wrt)


def _gradient(ns) -> tuple[api.GradFunction, list]:
    fn = _load(ns.target)
    args = example_args(ns.sig)
    found = _parameters(fn)
    params = None if found is None else found[0]
    name = getattr(fn, "__name__", ns.target)
    if found is not None and not found[1] <= len(args) <= len(params):
        raise UsageError(f"--sig gives {len(args)} type{'s' * (len(args) != 1)} and {name} "
                         f"takes {len(params)} argument{'s' * (len(params) != 1)} "
                         f"({', '.join(params)}): give one type per argument")
    return api.GradFunction(fn, _wrt(ns.wrt, params, args, name)), args


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitgrad", description="Reverse-mode gradients of NumPy/loop Python, emitted as "
        "readable source and compiled with numba.njit.",
        epilog="Exit status: 0 ok; 1 a refusal, a failed check or a missing program; 2 a "
               "mistake in the command line. --debug shows the Python traceback.")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, print the Python traceback (jitgrad's frames too)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, summary in COMMANDS.items():
        p = sub.add_parser(name, help=summary, description=summary)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="on an error, print the Python traceback (jitgrad's frames too)")
        if name in ("demo", "warm"):
            continue
        p.add_argument("target", help="path/to/file.py:function")
        p.add_argument("--sig", required=True, help='argument types, e.g. "f64[:,:], f64[:]"')
        p.add_argument("--wrt", help="comma-separated names or positions (default: all floats)")
        if name == "graph":
            p.add_argument("-o", dest="output", help="write SVG/PNG here (needs Graphviz)")
            p.add_argument("--adjoint", action="store_true", help="draw the adjoint too")
    return parser


def main(argv=None) -> int:
    ns = _parser().parse_args(argv)  # a malformed command line: argparse's message, status 2
    before = os.environ.get(TRACEBACK_ENV)
    if ns.debug:
        os.environ[TRACEBACK_ENV] = "full"  # every frame in the traceback printed below
    try:
        return _run(ns)
    except UsageError as e:
        return _fail(ns, e, str(e), 2)
    except JitgradError as e:  # a refusal, a failed check, a missing package: its message
        return _fail(ns, e, str(e), 1)
    except Exception as e:  # noqa: BLE001 - the function raised, or jitgrad has a bug
        return _fail(ns, e, f"{type(e).__name__}: {e}"
                     + ("" if ns.debug else "\n(--debug shows the traceback)"), 1)
    finally:
        if before is None:
            os.environ.pop(TRACEBACK_ENV, None)
        else:
            os.environ[TRACEBACK_ENV] = before


def _fail(ns, e: BaseException, message: str, status: int) -> int:
    if ns.debug:
        traceback.print_exception(type(e), e, e.__traceback__)
    print(f"error: {message}", file=sys.stderr)
    return status


def _run(ns) -> int:
    if ns.command == "demo":
        from jitgrad.tools import demo

        demo.main()
        return 0
    if ns.command == "warm":
        start = time.perf_counter()
        n = pipeline.warm()
        print(f"jitgrad's runtime: {n} signatures ready in Numba's cache "
              f"({time.perf_counter() - start:.1f} s)")
        return 0
    g, args = _gradient(ns)
    if ns.command == "show":
        print(g.source(*args))
    elif ns.command == "ir":
        print(g.ir(*args))
    elif ns.command == "graph":
        text = g.graph(*args, adjoint=ns.adjoint, path=ns.output)
        if ns.output is None:
            print(text, end="")
        else:
            print(f"wrote {ns.output}")
    else:
        worst = api.check_grad(g.fn, *args, wrt=tuple(g.wrt))
        print(f"ok: gradients with respect to {', '.join(g.param_names[k] for k in g.wrt)} "
              f"agree with central finite differences (worst relative error {worst:.2e})")
    return 0

