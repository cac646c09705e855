"""A ``functools.partial`` handed to an entry point (``jitgrad.grad(partial(gp,
compute_marginal_likelihood=True))``, JAX's and autograd's examples' form) as a plain function:
takes a partial, gives a Python function written here whose parameters are the partial's
remaining ones and whose body calls the partial, its source registered with `linecache` as
`compose.jacobian_trace`'s is. The builder then reads it as any function: the call of the
partial is the call of its function with the bound values (`build_calls`), those values
constants of the gradient, as a closure's are. A partial whose remaining parameters cannot be
an entry's (a keyword-only one without a default: ``partial(f, b=2)`` of ``f(a, b, c)``) gives
None, and the entry point refuses it as before.

A NumPy ufunc handed to an entry point (the JAX Cookbook's ``grad(jnp.tanh)``) is read the
same way (`ufunc_function`): ``def tanh(x): return np.tanh(x)`` written here (``x1, x2`` for
a ufunc of two inputs), its derivative then jitgrad's rule for the ufunc; a ufunc of several
outputs is left as it is (refused as not a plain function). A `jitgrad.custom_vjp` function
handed to an entry point is read as ``def f(x, y): return _rule(x, y)`` (`rule_function`), so
its rule is used, as inside a function (its body alone would ignore the rule).
"""

from __future__ import annotations

import functools
import inspect
import linecache

import numpy as np

_MADE: dict[int, tuple] = {}  # id(partial) -> (partial, its function): kept while it lives
_LITERAL = (type(None), bool, int, str)  # defaults written as text; others read by name


def as_function(p: functools.partial):
    """The plain function standing for the partial ``p`` at an entry point, or None."""
    hit = _MADE.get(id(p))
    if hit is not None and hit[0] is p:
        return hit[1]
    try:
        signature = inspect.signature(p)
    except (TypeError, ValueError):
        return None
    params, passed, namespace = [], [], {"_jitgrad_partial": p}
    for name, param in signature.parameters.items():
        if param.kind is param.VAR_KEYWORD or (param.kind is param.KEYWORD_ONLY
                                               and param.default is not param.empty):
            continue  # bound by the partial (or the function's own default)
        if param.kind is param.KEYWORD_ONLY:
            return None
        if param.kind is param.VAR_POSITIONAL:
            params.append(f"*{name}")
            passed.append(f"*{name}")
            continue
        if param.default is param.empty:
            params.append(name)
        elif isinstance(param.default, _LITERAL):  # written in the text (None, 2, "l")
            params.append(f"{name}={param.default!r}")
        else:
            namespace[f"_jitgrad_default_{name}"] = param.default
            params.append(f"{name}=_jitgrad_default_{name}")
        passed.append(name)
    inner = getattr(p.func, "__name__", "f")
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in inner) or "f"
    text = (f"def {name}({', '.join(params)}):\n"
            f"    return _jitgrad_partial({', '.join(passed)})\n")
    filename = f"<jitgrad entry for functools.partial of {inner}: {len(_MADE)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
    made = namespace[name]
    made.__qualname__ = f"partial({getattr(p.func, '__qualname__', inner)})"
    _MADE[id(p)] = (p, made)
    return made


_UFUNCS: dict = {}  # ufunc -> the function written for it


def ufunc_function(u):
    """The plain function standing for the NumPy ufunc ``u`` at an entry point; ``u`` itself
    when it has several outputs or is not a ufunc."""
    if not isinstance(u, np.ufunc) or u.nout != 1:
        return u
    made = _UFUNCS.get(u)
    if made is None:
        params = "x" if u.nin == 1 else ", ".join(f"x{k + 1}" for k in range(u.nin))
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in u.__name__)
        text = f"def {name}({params}):\n    return np.{u.__name__}({params})\n"
        filename = f"<jitgrad entry for np.{u.__name__}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace = {"np": np}
        exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
        made = _UFUNCS[u] = namespace[name]
        made.__qualname__ = f"np.{u.__name__}"
    return made


def rule_function(rule):
    """The plain function standing for the custom_vjp function ``rule`` at an entry point (a
    call of it, so the builder applies its rule); ``rule`` itself when it is not one."""
    if getattr(rule, "jitgrad_custom_rule", False) is not True:
        return rule
    hit = _MADE.get(id(rule))
    if hit is not None and hit[0] is rule:
        return hit[1]
    params = list(inspect.signature(rule.fn).parameters)
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in rule.fn.__name__) or "f"
    text = (f"def {name}({', '.join(params)}):\n"
            f"    return _jitgrad_rule({', '.join(params)})\n")
    filename = f"<jitgrad entry for the custom_vjp function {name}: {len(_MADE)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"_jitgrad_rule": rule}
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 - our own template
    made = namespace[name]
    made.__qualname__ = rule.__qualname__
    _MADE[id(rule)] = (rule, made)
    return made
