"""A ``functools.partial`` handed to an entry point (``jitgrad.grad(partial(gp,
compute_marginal_likelihood=True))``, JAX's and autograd's examples' form) as a plain function:
takes a partial, gives a Python function written here whose parameters are the partial's
remaining ones and whose body calls the partial, its source registered with `linecache` as
`compose.jacobian_trace`'s is. The builder then reads it as any function: the call of the
partial is the call of its function with the bound values (`build_calls`), those values
constants of the gradient, as a closure's are. A partial whose remaining parameters cannot be
an entry's (a keyword-only one without a default: ``partial(f, b=2)`` of ``f(a, b, c)``) gives
None, and the entry point refuses it as before.
"""

from __future__ import annotations

import functools
import inspect
import linecache

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
