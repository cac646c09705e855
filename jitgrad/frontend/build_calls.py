"""Building calls: NumPy's namespace, Python's builtins, `custom_vjp` rules, and the user's
plain functions built inline (recursion unrolled or run as loops, generators run to their end).

Part of `build.Builder` (a mixin, split from `build_exprs`). Guarantees: a call the builder
cannot follow raises `UnsupportedError` at the user's line; a function passed in or made in the
function is called where it is called, with its own source's locations.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import math
import operator
import sys
import types as pytypes

import numpy as np

from jitgrad.core.errors import JitgradError, ShapeError, UnsupportedError, instead
from jitgrad.core.ir import Var, dims_of
from jitgrad.frontend import (
    autograd_flatten,
    autograd_names,
    build_ivp,
    build_quad,
    build_solvers,
    custom_call,
    draws,
    local_transforms,
    transform_calls,
)
from jitgrad.frontend.build_ast import (
    LIBRARIES,
    RETURNED,
    Choice,
    Iterator,
    LocalFunction,
    RunTimeText,
    Undefined,
    fn_name,
    subscript_targets,
)
from jitgrad.frontend.build_builtins import BUILTINS, BY_NAME
from jitgrad.frontend.build_containers import HEAPQ, BuildMethod
from jitgrad.frontend.build_values import PURE_STDLIB
from jitgrad.frontend.desugar import hashable
from jitgrad.frontend.list_reads import LIST_INTRINSICS, list_parameters, returned_list
from jitgrad.frontend.parse import FunctionSource, signature_of, unwrap
from jitgrad.frontend.recursion import linear_recursion, loop_form
from jitgrad.lang import (
    complex_pairs,
    numpy_api,
    numpy_args,
    numpy_shape,
    numpy_written,
    scipy_api,
    scipy_signal,
    scipy_sparse,
    symbolic,
)
from jitgrad.lang.symbolic import Sym

# their functions call each other: built inline
WRITTEN_MODULES = (numpy_written.__name__, build_solvers.__name__, build_quad.__name__,
                   build_ivp.__name__, scipy_sparse.__name__, scipy_signal.__name__)


def _own_out(fn) -> bool:
    """Whether ``out=`` is a parameter of the user's own function (QuantEcon's
    ``s_wise_max(vals, out=Tv)``), passed to it as any other, not NumPy's ``out=``."""
    return isinstance(fn, pytypes.FunctionType) and not (fn.__module__ or "").startswith(
        ("numpy", "scipy")) and "out" in inspect.signature(fn).parameters


def _users_code(fn) -> bool:
    """Whether ``fn`` is the user's own Python function (built inline, a complex argument
    bound as its parts), not a library's or one jitgrad writes in Python."""
    if isinstance(fn, LocalFunction):
        return True
    if isinstance(fn, pytypes.MethodType):  # a method of an object of the user's
        fn = fn.__func__
    module = getattr(fn, "__module__", None) or ""
    return isinstance(fn, (pytypes.FunctionType, type)) and module not in WRITTEN_MODULES \
        and module.split(".")[0] not in (*LIBRARIES, *PURE_STDLIB, *sys.stdlib_module_names,
                                         "builtins")


class Calls:
    """`build.Builder`'s calls (see the module)."""

    def expr_Call(self, node):
        read_by = getattr(self, "lists_read_by", {}).get(id(node))
        if read_by is not None:  # `ks.index(v)` of a list given to this call as one
            fn, arg_nodes = read_by  # (`list_reads.ListReads.read_by`)
            return self.call(LIST_INTRINSICS[fn], self.items(arg_nodes, self.argument),
                             {k.arg: self.argument(k.value) for k in node.keywords}, node)
        fn = self.expr(node.func)
        if fn is builtins.print:
            raise UnsupportedError(f"print(...) as a value is not supported; {instead('print')}",
                                   self.loc(node))
        if type(fn).__module__ == "ctypes":
            raise UnsupportedError(f"calling the C function {fn_name(fn)} through ctypes: its "
                                   "code is compiled C, with no Python source to read and no "
                                   "derivative rule; write it with NumPy or math, or give it "
                                   "a rule with jitgrad.custom_vjp", self.loc(node))
        if not isinstance(fn, Sym) and not hashable(fn):
            raise UnsupportedError(f"calling {fn_name(fn)} is not supported (a "
                                   f"{type(fn).__name__})", self.loc(node))
        if not isinstance(fn, Sym) and fn in numpy_shape.REFUSED:
            raise UnsupportedError(numpy_shape.REFUSED[fn], self.loc(node))
        if fn in _IN_PLACE and len(node.args) == 2 and not node.keywords and isinstance(
                node.args[0], ast.Name) and symbolic.ndim_of(self.lookup(node.args[0].id,
                                                                         node.args[0])):
            # operator.imatmul(a, b) of a named array: the augmented assignment `a @= b`
            name = node.args[0].id
            self.stmt_AugAssign(ast.copy_location(ast.AugAssign(
                target=ast.copy_location(ast.Name(name, ast.Store()), node.args[0]),
                op=_IN_PLACE[fn](), value=node.args[1]), node))
            return self.env[name]
        arg_nodes, out = _positional_out(fn, node.args)
        args = self.items(arg_nodes, self.argument)
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:  # f(**options): a dict known while building
                kwargs.update(self.unpacked_dict(k.value))
            elif k.arg != "out" or _own_out(fn):
                kwargs[k.arg] = self.argument(k.value)
        if not _own_out(fn):
            out = next((k.value for k in node.keywords if k.arg == "out"), out)
        where = kwargs.pop("where", True) if isinstance(fn, np.ufunc) else True
        if out is not None:
            return self.call_into(fn, args, kwargs, out, node, where)
        if where is not True:
            raise UnsupportedError(f"{fn_name(fn)}(..., where=) without out=: NumPy leaves the "
                                   "entries where the mask is False uninitialised; give "
                                   "out= (the values kept there), or write "
                                   "np.where(mask, f(x), fallback)", self.loc(node))
        if fn is np.put_along_axis:
            return self.put_along_axis(args, kwargs, node)
        if fn is np.fill_diagonal:
            return self.fill_diagonal(args, kwargs, node)
        if fn is np.putmask:
            return self.putmask(args, kwargs, node)
        self.direct_call = (node, fn)  # (a list a callee returns: read here, `inline`)
        lists = self.list_arguments(node, args, kwargs)
        if not lists:
            return self.call(fn, args, kwargs, node)
        self.lists_given = {**getattr(self, "lists_given", {}), id(node): lists}
        self.lists_taken = getattr(self, "lists_taken", set()) - {id(node)}
        try:
            value = self.call(fn, args, kwargs, node)
        finally:
            self.lists_given.pop(id(node), None)
        if id(node) not in self.lists_taken:  # not taken by a function of the user's, which
            name = next(iter(lists.values()))  # `inline` checks: refused
            raise UnsupportedError(f"the list `{name}` passed to {fn_name(fn)} (the list is an "
                                   f"array in the gradient) is not supported; "
                                   f"{instead('list')}", self.loc(node))
        return value

    def list_arguments(self, node, args, kwargs) -> dict:
        """The arguments of the call ``node`` that are lists made in this function or given
        to it as lists (each an array of its items, `desugar_lists`): their values (arrays),
        by id, with the names the user wrote."""
        marked = {**getattr(node, "jitgrad_list_args", {}),
                  **getattr(self, "lists_passed", {}).get(id(node), {})}
        if any(isinstance(a, ast.Starred) for a in node.args) and any(
                isinstance(k, int) for k in marked):
            raise UnsupportedError("a list (an array of its items in the gradient) passed "
                                   "beside *args", self.loc(node))
        out = {}
        for k, name in marked.items():
            at = None
            if isinstance(k, tuple):  # an item of a tuple argument (`args=(zs, ks)`)
                k, at = k
            value = args[k] if isinstance(k, int) and k < len(args) else kwargs.get(k)
            if at is not None:
                value = value[at] if isinstance(value, tuple) and at < len(value) else None
            if isinstance(value, Sym):  # (a list known while building is Python's own)
                out[id(value)] = name
        through = getattr(self, "lists_through", {})  # (jitgrad's own code passing them on)
        for value in (*args, *kwargs.values()):
            for v in (value if isinstance(value, tuple) else (value,)):
                if id(v) in through:
                    out[id(v)] = through[id(v)]
        return out

    def fill_diagonal(self, args, kwargs, node):
        """``np.fill_diagonal(a, val)``: in place into the matrix ``a`` (named), entry (k, k)
        for k < min(rows, columns) set to ``val``, or to ``val``'s entries (flattened, taken
        again from the first when it is shorter), as NumPy fills; returns None."""
        try:
            bound = inspect.signature(lambda a, val, wrap=False: None).bind(*args, **kwargs)
        except TypeError as e:
            raise UnsupportedError(f"np.fill_diagonal: {e}", self.loc(node)) from None
        a, val, wrap = bound.args + (False,) * (3 - len(bound.args))
        target = node.args[0] if node.args else None
        if not (isinstance(target, ast.Name) and isinstance(a, Sym)) or a.ndim != 2:
            raise UnsupportedError("np.fill_diagonal writes into a matrix it must name "
                                   "(`np.fill_diagonal(a, v)`)", self.loc(node))
        if wrap:
            raise UnsupportedError("np.fill_diagonal with wrap=True", self.loc(node))
        if symbolic.ndim_of(val):
            val = numpy_args.as_array(val)
            val = numpy_api.np_ravel(val) if symbolic.ndim_of(val) != 1 else val
        each = "JGV[JGK % JGV.shape[0]]" if symbolic.ndim_of(val) else "JGV"
        text = (f"for JGK in range(min({target.id}.shape[0], {target.id}.shape[1])):\n"
                f"    {target.id}[JGK, JGK] = {each}\n")
        self.build_written(text, node, {"JGV": "values", "JGK": "k"}, {"JGV": val})

    def putmask(self, args, kwargs, node):
        """``np.putmask(a, mask, values)``: in place into the array ``a`` (named), ``values``
        where ``mask`` holds, as ``a[...] = np.where(mask, values, a)``; ``values`` a number
        or of ``a``'s shape (NumPy's repetition of a shorter ``values`` is refused)."""
        try:
            bound = inspect.signature(lambda a, mask, values: None).bind(*args, **kwargs)
        except TypeError as e:
            raise UnsupportedError(f"np.putmask: {e}", self.loc(node)) from None
        a, mask, values = bound.args
        target = node.args[0] if node.args else None
        if not (isinstance(target, ast.Name) and isinstance(a, Sym)) or a.ndim == 0:
            raise UnsupportedError("np.putmask writes into an array it must name "
                                   "(`np.putmask(a, mask, 0.0)`)", self.loc(node))
        if symbolic.ndim_of(values) and not (isinstance(values, Sym) and dims_of(
                values.atom) == dims_of(a.atom)):
            raise UnsupportedError("np.putmask with values that are neither a number nor "
                                   "known to be of the array's shape (NumPy repeats a shorter "
                                   "one): write `a[...] = np.where(mask, values, "
                                   "a)`", self.loc(node))
        self.write(target.id, target, a, ((":",) * a.ndim, []),
                   numpy_api.np_where(mask, values, a))

    def put_along_axis(self, args, kwargs, node):
        """``np.put_along_axis(a, idx, values, axis)``: in place into ``a`` (a vector or a
        matrix, named), at the positions np.take_along_axis reads; returns None."""
        try:
            bound = inspect.signature(lambda arr, indices, values, axis: None).bind(*args,
                                                                                    **kwargs)
        except TypeError as e:
            raise UnsupportedError(f"np.put_along_axis: {e}", self.loc(node)) from None
        arr, indices, values, axis = bound.args
        target = node.args[0] if node.args else None
        if not (isinstance(target, ast.Name) and isinstance(arr, Sym)):
            raise UnsupportedError("np.put_along_axis writes into an array it must name "
                                   "(`np.put_along_axis(a, idx, v, axis=1)`)", self.loc(node))
        if not (isinstance(indices, Sym) and indices.type.kind == "i") or axis is None:
            raise UnsupportedError("np.put_along_axis with an integer array index along a "
                                   "given axis", self.loc(node))
        if arr.ndim > 2 or indices.ndim != arr.ndim:
            raise UnsupportedError("np.put_along_axis of a vector or a matrix, with an index "
                                   "of the same rank", self.loc(node))
        axis = numpy_api.norm_axis(axis, arr.ndim, self.loc(node))
        if symbolic.ndim_of(values):  # one value per index entry, of the index's shape
            positions = symbolic.record("index_positions", indices, values, arr, kind="along",
                                        axis=axis)
            values = numpy_api.np_reshape(values, (values.size,))
        else:
            positions = symbolic.record("index_positions", indices, arr, kind="along",
                                        axis=axis)
        self.scatter(target.id, node, arr, positions, False, values)  # returns None

    def call_into(self, fn, args, kwargs, out, node, where=True):
        """``np.exp(x, out=x)``, ``np.maximum(h, 0.0, out=h)``: the result written into
        ``out`` in place (every entry, as ``out[...] = value``: a new version of its memory).
        A ufunc's ``where=mask`` keeps ``out``'s entries where the mask is False."""
        fn = fn if isinstance(fn, Sym) else autograd_names.stands_for(fn)
        if isinstance(fn, Sym) or fn not in symbolic.NUMPY:
            raise UnsupportedError(f"out= on {fn_name(fn)} (jitgrad takes out= on NumPy's "
                                   "functions)", self.loc(node))
        if not isinstance(out, ast.Name):
            return self.call_into_view(fn, args, kwargs, out, node, where)
        array = self.lookup(out.id, out)
        value = self.call(fn, args, kwargs, node)
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("out= must be an array", self.loc(out))
        if symbolic.ndim_of(value) > array.ndim:
            raise ShapeError(f"out= has rank {array.ndim}, the result rank "
                             f"{symbolic.ndim_of(value)}", self.loc(out))
        if where is not True:
            value = numpy_api.np_where(where, value, array)
        self.write(out.id, out, array, ((":",) * array.ndim, []), value)
        return self.env[out.id]

    def call_into_view(self, fn, args, kwargs, out, node, where=True):
        """``np.add(view(A), b, view(A))``, ``np.exp(x[1:], out=x[1:])``: out= a view of a named
        array (a slice, a transpose, GPy's diagonal through as_strided): the result written
        through it, as ``out[...] = value``; returns the result."""
        array = self.expr(out)
        gb = self.gb
        if not (isinstance(array, Sym) and isinstance(array.atom, Var) and array.ndim
                and (array.atom in gb.view_of or array.atom in gb.strided_of)):
            raise UnsupportedError("out= must name an array (`np.exp(x, out=x)`) or a view of "
                                   "one (`out=x[1:]`); to write into a new array, assign: "
                                   "`y = np.exp(x)`", self.loc(out))
        value = self.call(fn, args, kwargs, node)
        if symbolic.ndim_of(value) > array.ndim:
            raise ShapeError(f"out= has rank {array.ndim}, the result rank "
                             f"{symbolic.ndim_of(value)}", self.loc(out))
        if where is not True:
            value = numpy_api.np_where(where, value, array)
        target = ast.copy_location(ast.Subscript(value=out, slice=ast.Constant(Ellipsis),
                                                 ctx=ast.Store()), out)
        self.setitem(target, array, ((":",) * array.ndim, []), value)
        return value

    def argument(self, node):
        """A call's argument: an expression, or a string constant (``ord="fro"``,
        ``x.astype("float64")``), which the handler called reads or refuses."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return self.expr(node)

    def call(self, fn, args, kwargs, node):
        if isinstance(fn, Sym) or fn is None:
            raise UnsupportedError("calling a value that is not a function", self.loc(node))
        fn = autograd_names.stands_for(fn)  # autograd.numpy.sin: np.sin
        if getattr(fn, "__self__", None) is not None and isinstance(
                fn.__self__, (Sym, complex_pairs.Complex, scipy_sparse.Sparse)):
            value = fn(*args, **kwargs)  # an array method, a complex value's .conjugate()
            return self.known(value, node) if isinstance(value, symbolic.Written) else value
        if (scipy_sparse.involved(*args, *kwargs.values()) or scipy_sparse.handler_for(fn)
                is not None) and not _users_code(fn):  # (complex data: its own rule first)
            value = self.sparse_call(fn, args, kwargs, node)
            if value is not NotImplemented:
                return value
        if isinstance(fn, BuildMethod) and fn.takes_complex:  # (`object_carries`)
            return fn(args, kwargs, node)
        if complex_pairs.takes(fn, args, kwargs) and not _users_code(fn) and \
                fn not in (str, repr) and not isinstance(fn, BuildMethod):
            # (of a complex value: a label, `_b_text`; a list's `mats.append(m)` holds it)
            if custom_call.is_traceable(fn) or custom_call.is_custom_rule(fn):
                raise UnsupportedError(f"{fn!r} called with a complex argument inside a "
                                       "differentiated function (jitgrad's transforms take "
                                       "complex arguments at the top level only: pass the two "
                                       "parts as float arguments)", self.loc(node))
            value = complex_pairs.call(fn, args, kwargs)  # complex(x, y), cmath.exp(z), np.abs(z)
            return self.known(value, node) if isinstance(value, symbolic.Written) else value
        if fn is complex:  # of numbers known while building: Python's
            return complex(*args, **kwargs)
        if isinstance(getattr(fn, "__self__", None), (dict, tuple, str, int, float, complex,
                                                     np.bool_)):
            if isinstance(fn.__self__, str) and any(
                    isinstance(a, (Sym, RunTimeText)) for a in (*args, *kwargs.values())):
                return RunTimeText(ast.unparse(node))  # "{:.3f}".format(loss): a label
            return fn(*args, **kwargs)  # options.get("scale", 1.0): read while building
        if transform_calls.is_inside_call(fn):  # jitgrad.jvp(f, ...), vjp(f, x), its vjp_fn
            return transform_calls.build(self, fn, args, kwargs, node)
        if isinstance(fn, local_transforms.LocalTransform):  # ``grad(inner)(y)``, lifted
            return local_transforms.build_call(self, fn, args, kwargs, node)
        if isinstance(fn, LocalFunction) or getattr(fn, "__module__", None) in WRITTEN_MODULES:
            return self.inline(fn, args, kwargs, node)  # (or a NumPy function jitgrad wrote)
        if isinstance(fn, np.vectorize) and not kwargs and len(args) == 1 and \
                isinstance(args[0], Sym):  # np.vectorize(f)(x): f of each entry, in a loop
            return self.inline(numpy_written.vectorized_call, (fn.pyfunc, args[0]), {}, node)
        if isinstance(fn, functools.partial):  # partial(f, a)(x): f(a, x), f known now
            return self.call(fn.func, (*fn.args, *args), {**fn.keywords, **kwargs}, node)
        if isinstance(fn, BuildMethod):  # lst.pop(): a change to a list known while building
            return fn(args, kwargs, node)
        if fn in HEAPQ:
            return self.heapq_call(fn, args, kwargs, node)
        if isinstance(fn, Choice):  # one of two functions, by a run-time condition
            return self.call_choice(fn, args, kwargs, node)
        if draws.handles(fn):  # np.random: a draw replayed before the call (`draws`)
            return draws.build_call(self, self.draws, fn, args, kwargs, node)
        if custom_call.is_custom_rule(fn):  # a hand-written rule: `jitgrad.custom_vjp`
            return custom_call.build_call(self, fn, args, kwargs, node)
        if custom_call.is_traceable(fn):  # a jitgrad transform: ``jitgrad.grad(g)(x)``
            return custom_call.build_transform_call(self, fn, args, kwargs, node)
        if getattr(fn, "jitgrad_factory", False) is True:  # ``jitgrad.grad(g)``: made now
            if local_transforms.takes((*args, *kwargs.values())):  # of a function defined
                return local_transforms.LocalTransform(fn, args, kwargs)  # here: made when called
            if any(isinstance(a, Sym) for a in (*args, *kwargs.values())):
                raise UnsupportedError(f"{fn_name(fn)} takes a function and wrt, known "
                                       "while building; here an argument is a run-time value",
                                       self.loc(node))
            return fn(*args, **kwargs)
        if fn in symbolic.NUMPY:
            try:
                return self.known(symbolic.NUMPY[fn](*args, **kwargs), node)
            except TypeError as e:
                raise UnsupportedError(f"{fn_name(fn)}: {e}", self.loc(node)) from None
        if fn is math.log and len(args) == 2:  # math.log(x, base)
            return self.call(fn, args[:1], {}, node) / self.call(fn, args[1:], {}, node)
        if fn in numpy_api.MATH:
            for a in args:
                numpy_api.scalar_only(fn_name(fn), a, self.loc(node))
            return symbolic.record(numpy_api.MATH[fn], *args) if any(isinstance(a, Sym) for a in args) \
                else fn(*args)
        handler = BUILTINS.get(fn) or BY_NAME.get((getattr(fn, "__module__", None),
                                                   getattr(fn, "__qualname__", None)))
        if handler is not None:
            return handler(self, args, kwargs, node)
        solver = build_solvers.solver_for(fn)
        if solver is not None:  # brentq(f, a, b): a loop, and the implicit function theorem
            return build_solvers.build_root(self, solver, args, kwargs, node)
        root_finder = build_solvers.root_finder_for(fn)
        if root_finder is not None:  # newton, root_scalar: the same, by their methods
            return root_finder(self, args, kwargs, node)
        if build_quad.quad_for(fn):  # an adaptive Gauss-Kronrod integration, written out
            return build_quad.build_quad(self, args, kwargs, node)
        if build_solvers.odeint_for(fn):  # an adaptive Runge-Kutta integration, written out
            return build_solvers.build_odeint(self, args, kwargs, node)
        if build_ivp.solve_ivp_for(fn):  # the same, from t_span[0] through t_eval
            return build_ivp.build_solve_ivp(self, args, kwargs, node)
        scipy_fn = scipy_api.handler_for(fn) or scipy_sparse.handler_for(fn)
        if scipy_fn is not None:
            return self.library_call(scipy_fn, fn, args, kwargs, node)
        target = unwrap(fn)
        library = str(getattr(target, "__module__", None) or "").split(".")[0]
        if library in ("numpy", "scipy", "math", *PURE_STDLIB) or isinstance(fn, np.ufunc):
            value = self.call_on_constants(fn, args, kwargs, node)  # of constants: run now
            if value is not NotImplemented:
                return value
        value = self.call_object(fn, args, kwargs, node)  # the user's method or class
        if value is not NotImplemented:
            return value
        if library == "numpy" or isinstance(fn, np.ufunc):
            # NumPy's own Python functions (np.fft.fft, np.sort...) are not the user's code
            # to inline: outside the table, they are refused where the user called them
            raise UnsupportedError(f"{fn_name(fn)} is not supported", self.loc(node))
        if library in LIBRARIES or library in sys.stdlib_module_names:  # not the user's code
            raise UnsupportedError(f"calling {fn_name(fn)} is not supported", self.loc(node))
        if autograd_flatten.is_flatten_funcs_unflatten(target, self.src):
            return autograd_flatten.build_flatten_funcs_unflatten(self, target, args, kwargs, node)
        target = autograd_names.primitive_body(target)  # (autograd's fixed_point: its loop)
        if isinstance(target, pytypes.FunctionType):
            return self.inline(target, args, kwargs, node)
        raise UnsupportedError(f"calling {fn_name(fn)} is not supported", self.loc(node))

    def sparse_call(self, fn, args, kwargs, node):
        """A call with a scipy.sparse matrix (or a np.matrix) among its arguments: scipy.sparse's
        own functions, np.asarray of a np.matrix, the user's classes and other functions
        (NotImplemented: called as any); NumPy's and Python's functions refused, naming the
        line (they would take it as an object, not an array)."""
        handler = scipy_sparse.handler_for(fn)
        if handler is None:
            handler = scipy_sparse.as_array(fn, args, kwargs)
            if handler is not None:
                return handler
            if fn in symbolic.NUMPY or fn in numpy_api.MATH or fn in BUILTINS or \
                    isinstance(fn, np.ufunc) or str(getattr(
                        unwrap(fn), "__module__", None) or "").split(".")[0] in (
                        "numpy", "scipy", "math", "builtins"):
                if fn in (isinstance, type, id, print):
                    return NotImplemented
                scipy_sparse.refuse_function(fn_name(fn), args, kwargs)
            return NotImplemented
        return self.library_call(handler, fn, args, kwargs, node)

    def library_call(self, handler, fn, args, kwargs, node):
        """``fn(*args, **kwargs)`` through its SciPy or scipy.sparse ``handler``: a wrong
        argument refused at the user's line, a `symbolic.Written` value made known, a sparse
        matrix's parts made known (`scipy_sparse.built`)."""
        try:
            value = handler(*args, **kwargs)
        except TypeError as e:
            raise UnsupportedError(f"{fn_name(fn)}: {e}", self.loc(node)) from None
        except UnsupportedError:  # an integer it needs known (sph_harm_y's order) made of a
            if any(isinstance(a, Sym) and not a.ndim and a.type.kind in "ib"  # short loop's
                   for a in (*args, *kwargs.values())):  # index: that loop unrolled
                self.unroll_for_index(node)
            raise
        if isinstance(value, symbolic.Written):
            return self.known(value, node)
        return scipy_sparse.built(value, lambda w: self.known(w, node))

    def call_choice(self, choice, args, kwargs, node):
        """``f(x)`` with ``f = g if c else h``: built as ``g(x) if c else h(x)``."""
        key = f"%choice@{node.lineno}:{node.col_offset}"

        def branch(fn):
            def build():
                self.env[key] = self.call(fn, args, kwargs, node)
            return build
        self.build_if(choice.cond, branch(choice.then), branch(choice.orelse), node)
        value = self.env.pop(key)
        if isinstance(value, Undefined):
            raise UnsupportedError(value.why, self.loc(node))
        return value

    def inline(self, fn, args, kwargs, node):
        local = isinstance(fn, LocalFunction)
        src = fn.src if local else FunctionSource.of(fn)
        if self.depth >= self.MAX_INLINE_DEPTH:
            self.refuse_depth(src, node)
        try:
            bound = (fn.signature() if local else signature_of(fn)).bind(*args, **kwargs)
        except TypeError as e:
            raise JitgradError(f"TypeError calling {src.qualname}: {e}",
                               self.loc(node)) from None
        given_names = set(bound.arguments)
        bound.apply_defaults()
        for name, value in bound.arguments.items():  # a default array: a constant
            if isinstance(value, (np.ndarray, np.generic)):
                bound.arguments[name] = self.known(value, node)
            elif name not in given_names and isinstance(value, (list, dict)):
                # a default list or dict (`names=NAMES`, `progeny=PROGENY`): read as the
                # global it is (a tuple of names, a table of constants)
                bound.arguments[name] = self.global_value(name, value, node, "default")
        callee = type(self)(src, self.gb, self, enclosing=fn.builder if local else None)
        site = self.loc(node)
        callee.call_site = (site.filename, site.lineno, site.col)  # (`ListArrays.list_key`)
        callee.bind_params([bound.arguments[n] for n in callee.param_names()])
        given = getattr(self, "lists_given", {}).get(id(node))
        if given:  # lists made by the caller: read by the callee as arrays of their items
            self.give_lists(callee, src, bound, given, node)
        saved_loc = self.gb.loc
        try:
            result = self.recursion_as_loops(callee, src, node, local)
            if result is NotImplemented:
                result = callee.run_body()
            self.refuse_raise_on_every_path(callee.env, node, "inlined call (a function that "
                                            "always raises, called under a run-time condition)")
        except JitgradError as e:
            raise e.with_during(f"building {src.qualname}, called at "
                                f"{self.loc(node).short()}")
        self.gb.loc = saved_loc
        self.see_writes()
        if getattr(callee, "returns_list", None):
            self.read_returned_list(fn, src, node, callee.returns_list)
        if getattr(src.node, "jitgrad_generator", False):  # its items (`desugar_generators`)
            return self.generator_items(src, result, node)
        return result

    def give_lists(self, callee, src, bound, given, node):
        """The parameters of ``callee`` bound to the lists ``given`` (`list_arguments`): each
        read there must read an array of its items as the list (`desugar_lists.
        list_parameters`); the calls that pass them on are the callee's ``lists_passed``."""
        if src.fn.__module__ in WRITTEN_MODULES:  # jitgrad's own Python (`brentq`'s loop):
            callee.lists_through = given  # the user's function it calls with them checks them
            self.lists_taken.add(id(node))
            return
        names = []
        for name, value in bound.arguments.items():
            if id(value) in given:
                names.append(name)
            elif isinstance(value, (tuple, dict)) and any(id(v) in given for v in (
                    value.values() if isinstance(value, dict) else value)):
                raise UnsupportedError(f"a list (an array of its items in the gradient) "
                                       f"passed to {src.qualname} through *args or **kwargs",
                                       self.loc(node))
        if not names:
            return
        self.lists_taken.add(id(node))
        returned, callee.lists_passed, callee.lists_read_by = list_parameters(
            src.fn, src.node, names, src.qualname, src.loc)
        if returned:
            callee.returns_list = returned

    def read_returned_list(self, fn, src, node, at=True):
        """The callee ``fn`` returned a list it built by appending (the array of its items):
        where the user's call ``node`` reads it, each read must give an array of its items the
        list's meaning (`desugar_lists.returned_list`). Called for the user by a function
        (``map``, a callback), refused: what it does with a list is not checked."""
        called, value = getattr(self, "direct_call", (None, None))
        direct = called is node and any(v is fn for v in (
            value, getattr(value, "__func__", None), unwrap(value) if callable(value) else None,
            getattr(value, "func", None), getattr(value, "then", None),  # (a partial, or one
            getattr(value, "orelse", None)))  # of two functions, `call_choice`)
        if not direct or not isinstance(node, (ast.Call, ast.Attribute)):  # (a property's)
            raise UnsupportedError(f"{src.qualname} returns a list built by appending (an array "
                                   "of its items in the gradient), here to a function that "
                                   "calls it for you; call it yourself, or return "
                                   "`np.array(out)`", self.loc(node))
        returned = returned_list(self.src.fn, self.src.node, node, src.qualname, self.src.loc,
                                 at)
        if returned is True:
            self.return_list(ast.unparse(node), node)
        elif returned:
            for k in sorted(returned):
                self.return_list(ast.unparse(node), node, k)

    def recursion_as_loops(self, callee, src, node, local):
        """The value of a recursive function's first call, built as its loops where the test
        that ends the recursion is known only at run time (`recursion.linear_recursion`);
        NotImplemented where the calls are to be built in place."""
        if local or not _may_recurse(src):
            return NotImplemented
        b = self
        while b is not None:
            if b.src.fn is src.fn and b.src.node is src.node:
                return NotImplemented  # (a call inside the recursion, built in place)
            b = b.caller
        plan = linear_recursion(src)
        if plan is None:
            return NotImplemented
        callee.env[RETURNED] = False
        if not isinstance(callee.expr(plan.test), Sym):
            return NotImplemented
        stmts, acc = loop_form(plan, plan.test, f"@{self.gb.new_tag()}")
        callee.build_stmts(stmts)
        return callee.env[acc]

    def refuse_depth(self, src, node):
        """Calls nested `MAX_INLINE_DEPTH` deep while building: a recursion whose end the
        build cannot see (its test depends on a run-time value), or calls nested that deep."""
        chain, b = [], self
        while b is not None:
            chain.append(b.src)
            b = b.caller
        if any(s.fn is src.fn and s.node is src.node for s in chain):
            raise UnsupportedError(
                f"the recursion of {src.qualname} did not end within {self.MAX_INLINE_DEPTH} "
                "calls while building: jitgrad builds each call in place, so a recursion must "
                "end at a depth known while building (a constant, or the length of a tuple); "
                "here the test that ends it depends on a value known only at run time (an "
                "array's size, an argument). Of those, jitgrad builds as loops a function that "
                "tests, returns, or returns an expression with one call of itself whose "
                "integer counters step by constants; this one is not of that form. Write it "
                "as a loop (`for i in range(n)`), which jitgrad differentiates at any length",
                self.loc(node))
        raise UnsupportedError(f"calls nested more than {self.MAX_INLINE_DEPTH} deep",
                               self.loc(node))

    def generator_items(self, src, items, node):
        """A generator's call: its items, made where it is called. An array argument the
        calling function writes into is refused: Python's generator would read it as the
        consumer changes it, item by item."""
        written = subscript_targets(self.src.node.body)
        for a in node.args:
            if isinstance(a, ast.Name) and a.id in written:
                raise UnsupportedError(
                    f"the generator {src.qualname} reads the array {a.id}, which this function "
                    "writes into: jitgrad runs a generator to its end where it is called (as "
                    "the array of its items), where Python reads the array as each item is "
                    "taken; pass a copy (`np.copy(a)`), or write the loop here", self.loc(a))
        if isinstance(items, list):
            items = tuple(items)
        return Iterator(items, src.qualname)




def _positional_out(fn, args: list):
    """A NumPy call's arguments and the array it writes into given by position, as
    ``out=`` is (``np.clip(K, lo, hi, K)``, ``np.add(a, b, a)``): a ufunc's argument after
    its inputs, np.clip's fourth; else all the arguments and None."""
    if any(isinstance(a, ast.Starred) for a in args):
        return args, None
    count = fn.nin if isinstance(fn, np.ufunc) else 3 if fn is np.clip else None
    if count is not None and len(args) == count + 1:
        return args[:count], args[count]
    return args, None


# operator's in-place functions: of an array named, the augmented assignment
_IN_PLACE = {operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult,
             operator.itruediv: ast.Div, operator.ifloordiv: ast.FloorDiv,
             operator.imod: ast.Mod, operator.ipow: ast.Pow, operator.imatmul: ast.MatMult,
             operator.iand: ast.BitAnd, operator.ior: ast.BitOr, operator.ixor: ast.BitXor,
             operator.ilshift: ast.LShift, operator.irshift: ast.RShift}

# ndarray methods that are NumPy's function of the array (looked up in NumPy's table)
def _may_recurse(src) -> bool:
    """Whether ``src``'s function calls a name that is its own."""
    name = src.fn.__name__
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for n in ast.walk(src.node))

