"""Command line: ``python -m jitgrad`` (also installed as ``jitgrad``).

    jitgrad demo                  the square example, the seed loss's code, a short training run
    jitgrad show  model.py:loss --sig "f64[:,:], f64[:]" [--wrt W,b]   generated source
    jitgrad ir    model.py:loss --sig ...           the graph, one operation per line
    jitgrad check model.py:loss --sig ...           finite-difference check on random data
    jitgrad graph model.py:loss --sig ... [-o g.svg] [--adjoint]   the graph as DOT (or SVG)

A signature lists the arguments in Numba's notation: ``f64`` (a float), ``i64`` (an int, given
the value 3 for the check), ``f64[:]``, ``f64[:,:]``, ... (arrays of random numbers, 3 along
every axis, so that matrix products and broadcasting line up), and trees of them: a tuple
``(f64, f64[:])`` or a dict ``{W: f64[:,:], b: f64[:]}``.

The file is imported as ``python file.py`` would run it: its own folder comes first on
``sys.path``, so it may import a module beside it.

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
    folder = os.path.dirname(os.path.abspath(path))  # as `python file.py` runs it: a module
    if folder not in sys.path:  # beside the file imports, from the installed command too
        sys.path.insert(0, folder)
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
_LEAF = re.compile(r"(\w+)\s*(?:\[([^\]]*)\])?")
_LEAF_TYPES = {"f64", "f32", "float64", "float32", "float", "i64", "int64", "int", "bool"}
_KEY = re.compile(r"[A-Za-z_]\w*|'[^']*'|\"[^\"]*\"")
_SIG_HELP = ("use f64, f32, i64, bool, arrays such as f64[:] or f64[:,:], tuples such as "
             "(f64, f64[:]) and dicts such as {W: f64[:,:], b: f64[:]}")


class _Signature:
    """A reader of ``--sig``: items separated by commas, each a leaf type (``f64``,
    ``f64[:,:]``), a tuple of items ``(f64, f64[:])`` or a dict of items ``{W: f64[:,:],
    b: f64[:]}`` (keys bare names or quoted strings), nested as the function's arguments are.
    Each item reads as a function of a random generator that makes an example value."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, what: str):
        raise UsageError(f"cannot read the signature {self.text!r} at column {self.pos + 1}: "
                         f"{what} ({_SIG_HELP})")

    def skip(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.text[self.pos:self.pos + 1]

    def items(self) -> list:
        """The top level: one item per argument."""
        if not self.skip():
            raise UsageError('the signature is empty: give one type per argument, e.g. '
                             '--sig "f64[:,:], f64[:]"')
        out = self.sequence("")
        if self.pos < len(self.text):
            self.fail(f"unexpected {self.text[self.pos]!r}")
        return out

    def sequence(self, close: str) -> list:
        out = []
        while True:
            if self.skip() == close and close:
                return out
            out.append(self.item())
            ch = self.skip()
            if ch == ",":
                self.pos += 1
                if self.skip() in ("", ",", close):
                    self.fail("an empty item between commas")
                continue
            if ch == close:
                return out
            self.fail("expected ',' or " + (repr(close) if close else "the end"))

    def item(self):
        ch = self.skip()
        if ch == "(":
            self.pos += 1
            items = self.sequence(")")
            self.pos += 1
            return lambda rng: tuple(make(rng) for make in items)
        if ch == "{":
            self.pos += 1
            entries = []
            while self.skip() != "}":
                m = _KEY.match(self.text, self.pos)
                if m is None:
                    self.fail("expected a key (a name or a quoted string)")
                key = m.group(0).strip("'\"")
                self.pos = m.end()
                if self.skip() != ":":
                    self.fail(f"expected ':' after the key {key!r}")
                self.pos += 1
                entries.append((key, self.item()))
                if self.skip() == ",":
                    self.pos += 1
                elif self.skip() != "}":
                    self.fail("expected ',' or '}'")
            self.pos += 1
            return lambda rng: {key: make(rng) for key, make in entries}
        m = _LEAF.match(self.text, self.pos)
        if m is None:
            self.fail("expected a type")
        if m.group(1) not in _LEAF_TYPES:
            self.fail(f"unknown type {m.group(1)!r}")
        axes = [] if m.group(2) is None else [a.strip() for a in m.group(2).split(",")]
        if not all(a in (":", "::1") for a in axes) or (m.group(2) is not None and not axes):
            self.fail(f"cannot read {m.group(0)!r}")
        self.pos = m.end()
        kind, ndim = m.group(1), len(axes)
        return lambda rng: _leaf(rng, kind, ndim)


def _leaf(rng, kind: str, ndim: int):
    """A random example value of a leaf type: ints are 3 (or 0..2), arrays 3 along each axis."""
    if kind.startswith("i") or kind == "int":
        return 3 if ndim == 0 else rng.integers(0, 3, _SIZES[:ndim])
    if kind == "bool":
        return True if ndim == 0 else rng.random(_SIZES[:ndim]) > 0.5
    dtype = np.float32 if "32" in kind else np.float64
    return float(rng.normal()) if ndim == 0 else rng.normal(size=_SIZES[:ndim]).astype(dtype)


def example_args(signature: str, seed: int = 0) -> list:
    """Random arguments for a Numba-style signature such as ``"f64[:,:], f64, i64"`` (with
    tuples and dicts: `_Signature`); a signature it cannot read raises `UsageError`."""
    rng = np.random.default_rng(seed)
    return [make(rng) for make in _Signature(signature).items()]


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
    """A float, a float array, or a tuple or dict with one of them among its leaves."""
    if isinstance(a, dict):
        return any(_is_float(v) for v in a.values())
    if isinstance(a, tuple):
        return any(_is_float(v) for v in a)
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

