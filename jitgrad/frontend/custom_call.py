"""Calls of jitgrad's own functions in the user's code, built (L3): `jitgrad.custom_vjp`
functions, and transforms (``jitgrad.grad(g)(x)`` inside a differentiated function).

The builder (`build_exprs`) hands a call of an object with a ``jitgrad_custom_rule`` marker
here. ``fwd``'s body is built inline, as any called function is, and one equation
``custom_vjp<n>(*args, value, *residuals)`` is recorded whose value is ``value``. Its
primitive says ``custom_rule=True``: the reverse transform applies the rule
(`transforms.custom_rule`), building ``bwd``'s body into the adjoint; the tape refuses it.
"""

from __future__ import annotations

from jitgrad.core import pytree
from jitgrad.core.errors import JitgradError, ShapeError, UnsupportedError
from jitgrad.core.ir import Const, Var, graft
from jitgrad.core.types import SeqType, type_of_value
from jitgrad.frontend.parse import unwrap
from jitgrad.lang.symbolic import Sym, record
from jitgrad.prims import primitives

MAX_RESIDUALS = 64


def custom_primitive(n_args: int) -> str:
    """The primitive for a rule of ``n_args`` arguments: inputs ``(*args, value,
    *residuals)``, value ``value``; the reverse transform applies the rule to all the
    arguments at once, the value and the residuals get none."""
    name = f"custom_vjp{n_args}"
    if name not in primitives.PRIMITIVES:
        primitives.primitive(name, lambda *ins, fn, n_args, packed=tuple, tree=None: ins[n_args],
                             lambda ts, p: ts[p["n_args"]], custom_rule=True)
        primitives.defvjp(name, *([_applied_by_the_transform] * n_args + [None] * (1 + MAX_RESIDUALS)))
    return name


def _applied_by_the_transform(g, ans, *ins, **params):
    raise JitgradError("a custom_vjp rule is applied by the reverse transform "
                       "(jitgrad.transforms.custom_rule); the tape does not run custom rules")


def is_custom_rule(fn) -> bool:
    return getattr(fn, "jitgrad_custom_rule", False) is True


_IN_FWD: list = []  # the rules whose ``fwd`` is being built, innermost last


def build_call(builder, rule, args, kwargs, node):
    """Build a call of the custom_vjp function ``rule``: ``fwd`` inline, then its equation."""
    if rule.fwd is None:
        raise UnsupportedError(f"the custom_vjp function {rule.__qualname__} has no rule: "
                               "call .defvjp(fwd, bwd) first", builder.loc(node))
    if kwargs:
        raise UnsupportedError("keyword arguments to a custom_vjp function", builder.loc(node))
    for a in args:
        if not all(isinstance(v, (Sym, int, float, bool)) for v in flatten(a)[0]):
            raise UnsupportedError("a custom_vjp function takes numbers and arrays, and "
                                   "tuples, lists, namedtuples and dicts of them",
                                   builder.loc(node))
    if rule in _IN_FWD:  # ``f_fwd`` calling ``f`` itself (JAX's docs write it so): f's body
        return builder.inline(unwrap(rule.fn), list(args), {}, node)
    _IN_FWD.append(rule)
    try:
        out = builder.inline(unwrap(rule.fwd), list(args), {}, node)
    finally:
        _IN_FWD.pop()
    if not (isinstance(out, tuple) and len(out) == 2):
        raise UnsupportedError(f"{rule.fwd.__qualname__} must return (value, residuals)",
                               builder.loc(node))
    value, residuals = out
    if any(not isinstance(a, (Sym, int, float, bool)) for a in args) or \
            isinstance(value, (tuple, list, dict)):
        return _tree_call(builder, rule, args, value, residuals, node)
    # how ``bwd`` gets them back: as ``fwd`` returned them (a tuple, a namedtuple, or one value)
    packed = type(residuals) if isinstance(residuals, tuple) else None
    residuals = residuals if isinstance(residuals, tuple) else (residuals,)
    if isinstance(value, tuple) or value is None:
        raise UnsupportedError("a custom_vjp function returns one number or array",
                               builder.loc(node))
    if len(residuals) > MAX_RESIDUALS or any(not isinstance(r, (Sym, int, float, bool))
                                             for r in residuals):
        raise UnsupportedError("residuals must be a tuple of numbers and arrays",
                               builder.loc(node))
    if not isinstance(value, Sym):
        value = float(value)
    if not any(isinstance(a, Sym) for a in (*args, value, *residuals)):
        return value  # all known while building: nothing to differentiate
    name = custom_primitive(len(args))
    builder.gb.loc = builder.loc(node)
    return primitives.PRIMITIVES[name](*args, value, *residuals, fn=rule, n_args=len(args),
                                       packed=packed)


def flatten(tree) -> tuple[list, object]:
    """(the leaves of a tuple, list, namedtuple or dict tree, in order; its structure, which
    `unflatten` reads: None for a leaf)."""
    if isinstance(tree, dict):
        keys = tuple(tree)
        parts = [flatten(tree[k]) for k in keys]
        return [v for p in parts for v in p[0]], ("dict", keys, tuple(p[1] for p in parts))
    if isinstance(tree, (tuple, list)):
        parts = [flatten(v) for v in tree]
        kind = type(tree) if hasattr(type(tree), "_fields") else type(tree).__name__
        return [v for p in parts for v in p[0]], (kind, None, tuple(p[1] for p in parts))
    return [tree], None


def unflatten(structure, leaves):
    """The tree of `flatten`'s ``structure`` holding ``leaves`` (an iterator), in order."""
    if structure is None:
        return next(leaves)
    kind, keys, parts = structure
    items = [unflatten(p, leaves) for p in parts]
    if kind == "dict":
        return dict(zip(keys, items))
    if kind in ("tuple", "list"):
        return tuple(items) if kind == "tuple" else items
    return kind(*items)  # a namedtuple


def _tree_call(builder, rule, args, value, residuals, node):
    """A custom_vjp call whose arguments or value are trees: one equation per leaf of the
    value over the arguments' leaves, each carrying the residuals' and the value's leaves and
    the structures, so the reverse rule rebuilds the trees ``bwd`` takes and gives
    (`transforms.custom_rule`: ``bwd`` of the leaf's adjoint, zeros for the other leaves; a
    VJP is linear in its cotangent, so the sum over the leaves is ``bwd`` of them all)."""
    flat_args, arg_trees = [], []
    for a in args:
        leaves, structure = flatten(a)
        flat_args += leaves
        arg_trees.append((structure, len(leaves)))
    values, value_tree = flatten(value)
    res, res_tree = flatten(residuals)
    for v in (*values, *res):
        if not isinstance(v, (Sym, int, float, bool)):
            raise UnsupportedError("a custom_vjp function's value and residuals are numbers "
                                   "and arrays, or tuples, lists, namedtuples and dicts of them",
                                   builder.loc(node))
    values = [v if isinstance(v, Sym) else float(v) for v in values]
    if len(flat_args) + len(values) + len(res) > MAX_RESIDUALS or not any(
            isinstance(a, Sym) for a in (*flat_args, *values, *res)):
        if any(isinstance(a, Sym) for a in (*flat_args, *values, *res)):
            raise UnsupportedError("a custom_vjp function with more than "
                                   f"{MAX_RESIDUALS} leaves", builder.loc(node))
        return value  # all known while building: nothing to differentiate
    name = custom_primitive(len(flat_args))
    builder.gb.loc = builder.loc(node)
    tree = (tuple(arg_trees), value_tree, res_tree, len(res))
    outs = [primitives.PRIMITIVES[name](*flat_args, v, *res, *values, fn=rule,
                                        n_args=len(flat_args), tree=tree + (j,))
            for j, v in enumerate(values)]
    return unflatten(value_tree, iter(outs))


def is_traceable(fn) -> bool:
    """A jitgrad transform that can give its computation as IR (``jitgrad_trace``)."""
    return isinstance(getattr(fn, "jitgrad_transform", None), str) and callable(
        getattr(fn, "jitgrad_trace", None))


def _tree_type(a, what: str, fn, loc):
    """The type of an argument of a transform called inside a function: a number or array,
    or a dict, tuple or list of them (a tree, `core.pytree`, whose leaves the trace takes in
    their flat order)."""
    if isinstance(a, Sym):
        return a.type
    if isinstance(a, (bool, int, float)):
        return type_of_value(a, what)
    if isinstance(a, dict) and all(isinstance(k, str) for k in a):
        keys = sorted(a)
        return SeqType(tuple(_tree_type(a[k], f"entry {k!r} of {what}", fn, loc) for k in keys),
                       "dict", tuple(keys))
    if isinstance(a, (tuple, list)):
        return SeqType(tuple(_tree_type(v, f"item {j} of {what}", fn, loc)
                             for j, v in enumerate(a)), type(a).__name__)
    raise UnsupportedError(f"{fn!r} called inside a function takes numbers, arrays and dicts, "
                           f"tuples and lists of them ({what} is a {type(a).__name__})", loc)


def build_transform_call(builder, fn, args, kwargs, node):
    """Build a call of a jitgrad transform (``jitgrad.grad(g)(x)``): its trace for the
    arguments' types, grafted into the graph in place (`ir.graft`), its parameters replaced by
    the arguments. Array results are copied: the graph never sees a result share an
    argument's memory."""
    loc = builder.loc(node)
    names = list(fn.param_names)
    if kwargs or len(args) != len(names):
        raise UnsupportedError(f"call {fn!r} with its {len(names)} arguments by position "
                               f"({', '.join(names)})", loc)
    types = [_tree_type(a, f"argument {name!r}", fn, loc) for name, a in zip(names, args)]
    try:
        t = fn.jitgrad_trace(tuple(types), None)
    except ShapeError as e:
        name = getattr(fn, "autograd_name", None)  # autograd's grad takes a one-entry array
        if name is not None and "must return a scalar" in str(e):
            raise UnsupportedError(
                f"autograd's {name} of a function whose result is an array: jitgrad's {name} "
                "takes a scalar result, as JAX's; return its entry (`f(x)[0, 0]`) or a "
                f"reduction ({str(e).splitlines()[0]})", loc) from None
        raise e.with_during(f"building {fn!r}, called at {loc.short()}")
    except JitgradError as e:
        raise e.with_during(f"building {fn!r}, called at {loc.short()}")
    if t.fn_ir.written_params:
        raise UnsupportedError(f"{fn!r} writes into its argument "
                               f"{t.fn_ir.written_params[0][1]!r}: called inside a "
                               "differentiated function, it cannot be", loc)
    gb = builder.gb
    atoms = [a.atom if isinstance(a, Sym) else Const(a) for a in pytree.leaves(tuple(args))]
    returns = graft(t.body, t.returns, t.params, atoms, gb.namer)
    gb.block.stmts += t.body.stmts
    gb.grafted.append(f"{fn!r} (called at {loc.short()})")
    outs = []
    for r in returns:
        if isinstance(r, Var):
            out = gb.sym(r)
            outs.append(record("copy", out) if r.type.ndim else out)
        else:
            outs.append(r.value)
    builder.see_writes()
    return t.pack(outs)
