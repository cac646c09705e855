"""How a gradient is called and what it returns: one `CallingConvention` per `GradFunction`.

Takes the function's source (`FunctionSource`), its ``wrt`` (a position, a name, or a tuple
of them) and the kind of result (``with_value``, ``has_aux``). Guarantees, for every path into
the compiled code (a call, `GradFunction.compiled_call`, `jitgrad.dask`'s blocks):

- arguments are bound to the function's parameters as Python binds them (`bind_arguments`);
- the signature compiled for is the kind and rank of every argument, and a tree's structure
  (a complex argument is a tree of its real and imaginary parts, `core.pytree`); an integer,
  bool or leafless argument in ``wrt`` is refused (`types_of`), but for an empty list, tuple or
  dict (or one of only those), whose gradient is itself;
- the entry takes the arguments with a tree's leaves in its place, 0-d arrays as scalars and
  other float arrays as float64 (`casts_for`), or as they are when every one is float32 (a
  float32 build, `float32_build`), and a call where an argument shares memory with
  one the function writes into is refused (`refuse_shared_memory`);
- the caller gets each gradient in its argument's type, dtype and tree structure (a complex
  argument's in JAX's convention, ``dL/d(re) - 1j * dL/d(im)``), a tuple for
  a tuple ``wrt``, ``(value, gradient)`` with the value, and JAX's layout of aux
  (`post_for`).

The conventions every entry point shares (`pipeline.flatten`, `pipeline.result_converter`)
stay in `jitgrad.pipeline`; this module applies them to one gradient's parameters.
"""

from __future__ import annotations

import numpy as np

from jitgrad import compose, pipeline
from jitgrad.core import pytree
from jitgrad.core.errors import SignatureError
from jitgrad.core.types import SeqType, type_of_value
from jitgrad.frontend.parse import FunctionSource, signature_of


def _as_scalar(a):
    return a[()]


def _as_float64(a):
    return a.astype(np.float64)


def float32_build(flat) -> bool:
    """Whether the arguments (``flat``: a tree's leaves in its place) get a float32 build
    (`Settings.float32`): they have float arrays (not 0-d) and every one is float32. One dtype
    for the whole program: a float64 or float16 array among them gives the float64 build."""
    dtypes = {a.dtype for a in flat if type(a) is np.ndarray and a.ndim and a.dtype.kind == "f"}
    return dtypes == {np.dtype(np.float32)}


def casts_for(flat, float32: bool = False) -> dict:
    """What the entry's arguments (``flat``: a tree's leaves in its place) need converting:
    {position: conversion}. 0-d arrays travel as scalars (float16 ones, and float16 scalars,
    as floats); other float arrays as float64 (the
    gradient is computed in float64, and Numba's `@` refuses mixed dtypes), their gradients
    converted back (`CallingConvention.post_for`), but in a ``float32`` build
    (`float32_build`), whose float arrays all are float32 and stay so."""
    casts = {k: _as_scalar for k, a in enumerate(flat)
             if type(a) is np.ndarray and a.ndim == 0 and a.dtype != np.float16}
    casts.update({k: float for k, a in enumerate(flat)  # (Numba has no float16 arithmetic)
                  if isinstance(a, np.float16) or type(a) is np.ndarray and a.dtype == np.float16
                  and a.ndim == 0})
    if not float32:
        casts.update({k: _as_float64 for k, a in enumerate(flat) if type(a) is np.ndarray
                      and a.ndim and a.dtype.kind == "f" and a.dtype != np.float64})
    return casts


def _empty(t) -> bool:
    """An empty list, tuple or dict, or one of only those: no entry to differentiate."""
    return isinstance(t, SeqType) and t.container in ("list", "tuple", "dict") and all(
        _empty(u) for u in t.items)


class CallingConvention:
    """The parameters of one gradient, which of them it differentiates, and the shape of its
    result."""

    def __init__(self, src: FunctionSource, wrt, with_value: bool, has_aux: bool):
        self.src = src
        self.param_names = src.param_names
        # how many arguments a call binds without Python's rules (-1 with *args: never)
        self.n_params = -1 if src.node.args.vararg else len(self.param_names)
        self.signature = signature_of(src.fn)
        self.wrt_tuple = isinstance(wrt, (tuple, list))  # a tuple of gradients back
        self.wrt = src.wrt_positions(wrt)  # the differentiated parameters' positions
        self.with_value = with_value  # (value, gradients) back
        self.has_aux = has_aux  # the function returns (value, aux)

    def position(self, w) -> int:
        """The position of the parameter ``w`` (a position or a name)."""
        return self.src.wrt_positions(w)[0]

    def bind_arguments(self, args, kwargs) -> tuple:
        """The call's arguments in parameter order, as Python binds them; an int, bool or
        float default the caller left out as a `pytree.Omitted` (a constant of the build, as
        Numba makes an omitted argument: ``range(n)``, ``leggauss(n)`` of ``n=6``,
        ``np.gradient(x, dt)`` of ``dt=0.01`` are known), but for a float it differentiates."""
        bound = compose.bind_arguments(self.signature, self.param_names, self.src.qualname,
                                       args, kwargs)
        if self.n_params < 0 or len(args) + len(kwargs or ()) >= self.n_params:
            return bound
        given = set(kwargs or ())
        return tuple(
            pytree.Omitted(a) if k >= len(args) and name not in given and (isinstance(
                a, (int, np.integer, np.bool_)) or isinstance(a, (float, np.floating)) and
                k not in self.wrt) and not isinstance(a, np.ndarray) else a
            for k, (name, a) in enumerate(zip(self.param_names, bound)))

    def types_of(self, args) -> tuple:
        """The signature (kind and rank of every argument, a tree's structure) these arguments
        are compiled for; refuses integer or bool arguments in ``wrt``."""
        types = []
        for k, (name, a) in enumerate(zip(self.param_names, args)):
            if pytree.is_tree(a):
                try:
                    types.append(pytree.type_of_tree(a, f"argument {name!r}",
                                                     complex_parts=True))
                except SignatureError as e:
                    raise SignatureError(e.message, self.src.loc(self.src.entry_params[k])) \
                        from None
                continue
            types.append(type_of_value(a, f"argument {name!r}", float16=True))  # (`casts_for`)
        for k in self.wrt:
            if isinstance(types[k], SeqType):
                if _empty(types[k]):  # ([], {}, ((),)): its gradient is itself, as in autograd
                    continue
                if not any(u.kind == "f" for u in pytree.leaf_types(types[k])):
                    what = {"str": "is a str (a switch the gradient is built for)",
                            "omitted": "is an int or bool default the call leaves out",
                            "none": "is None", "generator": "is a random generator",
                            "function": "is a function (a constant the gradient is built "
                                        "for)"}.get(
                                types[k].container, "holds no float or float array")
                    raise SignatureError(
                        f"cannot differentiate with respect to argument "
                        f"{self.param_names[k]!r}: it {what}", self.src.loc(self.src.node))
                continue
            if types[k].kind != "f":
                raise SignatureError(
                    f"cannot differentiate with respect to argument {self.param_names[k]!r}: it "
                    f"is {'an integer' if types[k].kind == 'i' else 'a bool'} "
                    f"({type(args[k]).__name__}); pass a float or a float array",
                    self.src.loc(self.src.node))
        return tuple(types)

    def flat_wrt(self, types) -> list[int]:
        """The positions of the ``wrt`` arguments among the generated code's parameters (a
        tree argument stands for one parameter per leaf; its integer and bool leaves are not
        differentiated)."""
        return pytree.float_leaf_positions(types, self.wrt)

    def refuse_shared_memory(self, fn_ir, flat) -> None:
        """Refuse a call (``flat``: the entry's arguments) where an argument shares memory with
        one ``fn_ir`` writes into (`pipeline.refuse_shared_memory`)."""
        names = dict(fn_ir.written_params)
        pipeline.refuse_shared_memory(self.src, fn_ir.written_params, flat,
                                      lambda j: names.get(j, fn_ir.params[j].name))

    def refuse_draws(self, fn_ir, what: str) -> None:
        """Refuse np.random draws in ``fn_ir`` where ``what`` calls the compiled code without
        replaying them first."""
        if fn_ir.draws is not None:
            raise pipeline.refuse_draws(self.src, fn_ir.draws.first_loc, what)

    # -- results -------------------------------------------------------------------------

    def post_for(self, args, types, aux_structure=None, float32: bool = False):
        """What turns the entry's result for ``args`` (of ``types``; ``float32``: a float32
        build's) into the caller's: dtypes back to the arguments', a tree argument's gradients into its tree, aux into its tree
        (None: nothing to do). `jitgrad.dask` applies it to the blocks' sum."""
        if not any(isinstance(t, SeqType) for t in types):
            post = self.result_post([pipeline.result_converter(args[k], float32)
                                     for k in self.wrt])
        else:
            post = self._post_grouped(args, types, float32)
        if self.has_aux:
            post = self._with_aux(aux_structure, post)
        return post

    def result_post(self, converters: list):
        """What turns the entry's result into the caller's dtypes (None: nothing to do)."""
        if not any(converters):
            return None

        def grads(gs):
            if not self.wrt_tuple:
                return converters[0](gs)
            return tuple(c(g) if c else g for c, g in zip(converters, gs))
        return (lambda out: (out[0], grads(out[1]))) if self.with_value else grads

    def _with_aux(self, structure, post):
        """The result of a ``has_aux`` call, as JAX gives it: ``(gradients, aux)`` from grad,
        ``((value, aux), gradients)`` from value_and_grad; aux rebuilt as the tree the
        function returned."""
        def tree(flat):
            return pytree.unflatten(structure, list(flat))

        if self.with_value:
            def out(result):
                (value, aux), g = result
                value, g = post((value, g)) if post else (value, g)
                return (value, tree(aux)), g
        else:
            def out(result):
                g, aux = result
                return (post(g) if post else g), tree(aux)
        return out

    def _post_grouped(self, args, types, float32: bool):
        """The result of a call with tree arguments: the gradient of a tree argument is a tree
        of the same structure (``None`` at its integer and bool leaves); dtypes as
        `pipeline.result_converter` makes them."""
        trees = []  # per wrt argument: None (one gradient) or (its type, which leaves are floats)
        converters = []
        for k in self.wrt:
            if isinstance(types[k], SeqType):
                floats = [u.kind == "f" for u in pytree.leaf_types(types[k])]
                trees.append((types[k], floats))
                converters += [pipeline.result_converter(a, float32) for a, f in
                               zip(pytree.leaves(args[k]), floats) if f]
            else:
                trees.append(None)
                converters.append(pipeline.result_converter(args[k], float32))
        single = not self.wrt_tuple and trees[0] is None

        def grads(gs):
            if single:
                return converters[0](gs) if converters[0] else gs
            flat = iter([c(g) if c else g for c, g in zip(converters, gs)])
            out = []
            for tree in trees:
                if tree is None:
                    out.append(next(flat))
                else:
                    t, floats = tree
                    out.append(pytree.unflatten(t, [next(flat) if f else None for f in floats]))
            return tuple(out) if self.wrt_tuple else out[0]
        return (lambda out: (out[0], grads(out[1]))) if self.with_value else grads
