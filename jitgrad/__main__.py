"""Command line: ``python -m jitgrad`` (also installed as ``jitgrad``).

    jitgrad demo                  the square example, the seed loss's code, a short training run
    jitgrad show  model.py:loss --sig "f64[:,:], f64[:]" [--wrt W,b]   generated source
    jitgrad ir    model.py:loss --sig ...           the graph, one operation per line
    jitgrad check model.py:loss --sig ...           finite-difference check on random data
    jitgrad graph model.py:loss --sig ... [-o g.svg] [--adjoint]   the graph as DOT (or SVG)

A signature lists the arguments in Numba's notation: ``f64`` (a float), ``i64`` (an int, given
the value 3 for the check), ``f64[:]``, ``f64[:,:]``, ... (arrays of random numbers, 3 along
every axis, so that matrix products and broadcasting line up).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys

import numpy as np

from . import api
from .errors import MissingDependencyError


def _load(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"expected path/to/file.py:function, got {target!r}")
    spec = importlib.util.spec_from_file_location(
        "jitgrad_cli_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]), path)
    if spec is None:
        raise SystemExit(f"cannot read {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"{path} has no function {name!r}")
    return getattr(module, name)


_SIZES = (3, 3, 3, 3, 3)


def example_args(signature: str, seed: int = 0) -> list:
    """Random arguments for a Numba-style signature such as ``"f64[:,:], f64, i64"``."""
    rng = np.random.default_rng(seed)
    args = []
    for item in [s.strip() for s in signature.split(",") if s.strip()] if "[" not in signature \
            else re.findall(r"\w+(?:\[[^\]]*\])?", signature):
        m = re.fullmatch(r"(f64|f32|float64|float32|float|i64|int64|int|bool)(\[([:, ]*)\])?",
                         item)
        if not m:
            raise SystemExit(f"cannot read {item!r} in the signature (use f64, i64, f64[:,:])")
        kind, dims = m.group(1), m.group(3)
        ndim = dims.count(":") if dims is not None else 0
        if kind.startswith("i") or kind == "int":
            args.append(3 if ndim == 0 else rng.integers(0, 3, _SIZES[:ndim]))
        elif kind == "bool":
            args.append(True if ndim == 0 else rng.random(_SIZES[:ndim]) > 0.5)
        else:
            dtype = np.float32 if "32" in kind else np.float64
            args.append(float(rng.normal()) if ndim == 0
                        else rng.normal(size=_SIZES[:ndim]).astype(dtype))
    return args


def _gradient(ns) -> tuple[api.GradFunction, list]:
    fn = _load(ns.target)
    args = example_args(ns.sig)
    if ns.wrt:
        wrt = tuple(int(w) if w.isdigit() else w for w in ns.wrt.split(","))
    else:
        wrt = tuple(k for k, a in enumerate(args)
                    if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
    return api.GradFunction(fn, wrt), args


def main(argv=None) -> int:
    try:
        return _main(argv)
    except MissingDependencyError as e:  # the environment, not the user's code: one line
        print(f"error: {e}", file=sys.stderr)
        return 1


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="jitgrad", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="the square example and the two-layer seed loss")
    for name in ("show", "ir", "check", "graph"):
        p = sub.add_parser(name)
        p.add_argument("target", help="path/to/file.py:function")
        p.add_argument("--sig", required=True, help='argument types, e.g. "f64[:,:], f64[:]"')
        p.add_argument("--wrt", help="comma-separated names or positions (default: all floats)")
        if name == "graph":
            p.add_argument("-o", dest="output", help="write SVG/PNG here (needs Graphviz)")
            p.add_argument("--adjoint", action="store_true", help="draw the adjoint too")
    ns = parser.parse_args(argv)
    if ns.command == "demo":
        from . import demo

        demo.main()
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


if __name__ == "__main__":
    sys.exit(main())
