"""Building expressions: names, operators, subscripts and calls.

Part of `build.Builder` (a mixin). Calls go to the NumPy namespace (`numpy_api`), Python's builtins
(`build_builtins`), `custom_vjp` rules, or are built inline (the user's other plain functions and
nested functions). Guarantees: a name, call or index the builder cannot follow raises
`UnsupportedError` at the user's line.
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

from jitgrad.core.errors import JitgradError, Loc, ShapeError, UnsupportedError, instead
from jitgrad.core.ir import (
    Var,
)
from jitgrad.core.types import Type
from jitgrad.frontend import custom_call, draws
from jitgrad.frontend.build_ast import (
    BINOPS,
    CMPOPS,
    LIBRARIES,
    RETURNED,
    BuildList,
    Choice,
    Iterator,
    LocalFunction,
    ReadAfterLoop,
    RunTimeText,
    Undefined,
    assigned_names,
    fn_name,
    subscript_targets,
)
from jitgrad.frontend.build_builtins import BUILTINS, BY_NAME
from jitgrad.frontend.build_containers import HEAPQ, BuildMethod, is_container_method
from jitgrad.frontend.build_index import Indexing
from jitgrad.frontend.build_values import PURE_STDLIB, is_user_object, library_of
from jitgrad.frontend.desugar_lists import INTRINSICS
from jitgrad.frontend.parse import FunctionSource, unwrap
from jitgrad.frontend.recursion import linear_recursion, loop_form
from jitgrad.lang import numpy_api, numpy_args, numpy_shape, scipy_api, symbolic
from jitgrad.lang.symbolic import Sym


class Expressions(Indexing):
    """The `Builder`'s expressions: methods mixed into `build.Builder`."""

    # -- expressions ---------------------------------------------------------------------

    def loc(self, node) -> Loc:
        return self.src.loc(node)

    def expr(self, node):
        saved = self.gb.loc
        self.gb.loc = self.src.loc(node)
        try:
            method = getattr(self, "expr_" + type(node).__name__, None)
            if method is None:
                raise UnsupportedError(f"the expression {type(node).__name__} is not supported",
                                       self.loc(node))
            return method(node)
        finally:
            self.gb.loc = saved

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float)) or node.value in (None, Ellipsis):
            return node.value
        if isinstance(node.value, str):  # a switch's value (the fence allows it only there)
            return node.value
        raise UnsupportedError(f"the constant {node.value!r} is not supported", self.loc(node))

    def expr_JoinedStr(self, node):
        """An f-string: a string, when every value it formats is known while building; else a
        `RunTimeText` (printed, or a raise's message, but never computed with)."""
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
                continue
            value = self.expr(v.value)
            if isinstance(value, (Sym, RunTimeText)) or not isinstance(
                    value, (str, int, float, bool, tuple, type(None))):
                return RunTimeText(ast.unparse(node))
            value = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda u: u)(value)
            spec = self.expr(v.format_spec) if v.format_spec else ""
            if isinstance(spec, RunTimeText):
                return RunTimeText(ast.unparse(node))
            parts.append(format(value, spec))
        return "".join(parts)

    def lookup(self, name, node):
        if name in INTRINSICS:  # what the rewritten lists call (`desugar_lists`)
            return INTRINSICS[name]
        if name in self.env:
            v = self.env[name]
            if isinstance(v, Undefined):
                if v.seed is not None and (v.seed[0], name) not in self.seeds.refused:
                    raise ReadAfterLoop(v.seed[0], name, v.seed[1])
                raise UnsupportedError(f"`{name}` may be undefined here: {v.why}",
                                       self.loc(node))
            if isinstance(v, Sym) and isinstance(v.atom, Var) and v.atom in self.gb.view_of:
                now = self.follow(v.atom, name, node)  # a view: as its array holds it now
                return v if now is v.atom else self.gb.sym(now)
            if isinstance(v, Sym) and isinstance(v.atom, Var) and self.gb.is_stale(v.atom):
                raise UnsupportedError(symbolic.stale_message(f"`{name}`"), self.loc(node))
            return v
        if self.enclosing is not None:  # a nested function reads its enclosing one's names
            return self.enclosing.lookup(name, node)
        code = self.src.fn.__code__
        if name in code.co_freevars and self.src.local_name is None:
            # a closure's variable (`make_loss(reg)` returning `loss`): constant during a call
            try:
                value = self.src.fn.__closure__[code.co_freevars.index(name)].cell_contents
            except ValueError:
                raise JitgradError(f"NameError: free variable '{name}' referenced before "
                                   "assignment in the enclosing scope", self.loc(node)) from None
            return self.global_value(name, value, node, "closure variable")
        g = self.src.fn.__globals__
        if name in g:
            return self.global_value(name, g[name], node)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        for loop in reversed(self.loops_building):  # set in a later iteration's branch
            if name in assigned_names(loop.body) and (self.loop_key(loop), name) \
                    not in self.seeds.refused:
                raise ReadAfterLoop(self.loop_key(loop), name, Type("f", 0))
        raise JitgradError(f"NameError: name '{name}' is not defined", self.loc(node))

    def global_value(self, name, value, node, what="global"):
        if isinstance(value, (bool, int, float, np.number, np.bool_)):
            return symbolic.python_scalar(value)
        if isinstance(value, str):  # a constant, as Numba freezes it: a switch (`MODE == "x"`)
            return value
        if isinstance(value, (pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType,
                              np.ufunc, tuple)) or callable(value):
            return value
        if isinstance(value, np.ndarray):
            return self.constant_array(name, value, node)
        constants = numpy_args.constant_tuples(value) if isinstance(value, list) else None
        if constants is not None:  # W = [0.2, 0.3], [(0, 1), (1, 0)]: read as tuples are
            return constants
        if isinstance(value, list) and all(is_user_object(v) for v in value):
            return tuple(value)  # LAYERS = [Layer(...), ...]: objects, read while building
        if value is None:
            return None
        if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
            return {k: self.global_value(f"{name}[{k!r}]", v, node, what)
                    for k, v in value.items()}  # a table of constants, read by its keys
        if isinstance(value, dict):
            raise UnsupportedError(f"the {what} `{name}` is a dict; {instead('dict')}",
                                   self.loc(node))
        if is_user_object(value):  # read while building (`build_values`)
            return value
        generator = draws.generator_value(value, name, self.src.fn.__globals__
                                          if what == "global" else None)
        if generator is not None:  # a Generator/RandomState the function draws from
            return generator
        raise UnsupportedError(f"the {what} `{name}` of type {type(value).__name__}",
                               self.loc(node))

    def constant_array(self, name, value, node):
        """A global array (or one a closure captured) read as a constant, as Numba freezes it:
        its contents when the signature is first compiled."""
        kind = {"u": "i"}.get(value.dtype.kind, value.dtype.kind)
        if kind not in "fib" or value.ndim == 0:
            raise UnsupportedError(f"the global `{name}`: a {value.dtype} array of rank "
                                   f"{value.ndim} (jitgrad reads float, integer and bool arrays "
                                   "as constants)", self.loc(node))
        return self.gb.sym(self.gb.constant_array(value, name))

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def expr_Attribute(self, node):
        return self.attribute(self.expr(node.value), node.attr, node)

    def attribute(self, base, attr: str, node):
        """``base.attr`` (``node`` locates it for messages): of a module, an array, a value
        known while building, a generator, the user's object; `getattr` reads here too."""
        if isinstance(base, pytypes.ModuleType):
            if not hasattr(base, attr):
                raise UnsupportedError(f"{base.__name__}.{attr} does not exist",
                                       self.loc(node))
            value = getattr(base, attr)
            if base is np and attr in ("pi", "e", "inf", "nan", "newaxis"):
                return value
            if base is np and attr in ("float64", "float32", "int64", "int32", "bool_"):
                return value
            return value
        if isinstance(base, Sym):
            if attr in ("T", "shape", "ndim", "size", "dtype"):
                return getattr(base, attr)
            if attr in ("real", "imag"):  # of a real array: itself, zeros (np.real, np.imag)
                return symbolic.NUMPY[getattr(np, attr)](base)
            if attr == "flat":  # read only: x.flat[i] is the flattened array's entry i
                return symbolic.NUMPY[np.ravel](base)
            if attr in ("sum", "mean", "max", "min", "dot", "copy", "transpose", "reshape",
                             "item", "astype", "prod", "var", "std", "cumsum", "cumprod", "ravel",
                             "flatten", "squeeze", "repeat", "swapaxes", "diagonal", "trace",
                             "any", "all"):
                return getattr(base, attr)
            if _ARRAY_METHODS.get(attr) in symbolic.NUMPY:  # x.argmax(1): np.argmax(x, 1)
                return _ArrayMethod(base, _ARRAY_METHODS[attr])
            raise UnsupportedError(f"the array attribute .{attr} is not supported",
                                   self.loc(node))
        if isinstance(base, (int, float)) and attr in ("real",):
            return base
        if isinstance(base, np.finfo) and attr in ("eps", "epsneg", "tiny", "max", "min",
                                                         "smallest_normal", "resolution"):
            return float(getattr(base, attr))  # np.finfo(np.float64).eps: a constant
        if isinstance(base, np.iinfo) and attr in ("min", "max", "bits"):
            return int(getattr(base, attr))  # np.iinfo(np.int32).max: a constant
        if isinstance(base, draws.GeneratorRef):  # rng.normal
            return draws.method_of(base, attr, self.loc(node))
        if isinstance(base, (str, int, float)) and not isinstance(base, bool) and \
                hasattr(base, attr):
            return getattr(base, attr)  # "a,b".split(","), n.bit_length(): while building
        if isinstance(base, dict) and attr in ("get", "keys", "values", "items"):
            return getattr(base, attr)  # a dict built or passed: read while building
        if isinstance(base, tuple) and attr in ("index", "count"):
            return getattr(base, attr)
        if isinstance(base, tuple) and attr in getattr(type(base), "_fields", ()):
            return getattr(base, attr)  # a namedtuple's field (results.root)
        if is_container_method(base, attr):  # lst.pop(), d.pop("k"), s.add(3)
            return BuildMethod(self, getattr(node, "value", node), base, attr)
        method = getattr(base, attr, None)
        if method is not None and scipy_api.handler_for(method) is not None:
            return method  # scipy.stats.norm.cdf
        if isinstance(base, np.ufunc):
            numpy_args.refuse_ufunc_method(base, attr, self.loc(node))
        if is_user_object(base) or (isinstance(base, type) and library_of(base) not in LIBRARIES
                                    and base.__module__ != "builtins"):
            return self.object_attribute(base, attr, node)
        raise UnsupportedError(f"the attribute .{attr} of a {type(base).__name__} is not "
                               "supported", self.loc(node))

    def expr_Tuple(self, node):
        return tuple(self.items(node.elts))

    def items(self, nodes, evaluate=None) -> list:
        """The values of a call's arguments or a display's items, ``*seq`` spread: a tuple or
        list known while building, or the rows of an array whose length is (`unpack_rows`)."""
        evaluate = evaluate or self.expr
        values = []
        for n in nodes:
            if not isinstance(n, ast.Starred):
                values.append(evaluate(n))
                continue
            seq = self.expr(n.value)
            if isinstance(seq, Sym) and seq.ndim and isinstance(seq.shape[0], int):
                seq = self.unpack_rows(seq, seq.shape[0], n)
            if isinstance(seq, dict):
                seq = tuple(seq)
            if not isinstance(seq, (tuple, list, range)):
                raise UnsupportedError(
                    "`*` spreads a tuple or list whose length is known while building (this "
                    "is a run-time value: index it, `f(x[0], x[1])`)", self.loc(n))
            values.extend(seq)
        return values

    def unpacked_dict(self, node) -> dict:
        value = self.expr(node)
        if not isinstance(value, dict):
            raise UnsupportedError("`**` spreads a dict built in the function or passed to "
                                   "it (`f(**options)`)", self.loc(node))
        return value

    def expr_Dict(self, node):  # constant keys (the fence): a tree, read by those keys
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:  # {**defaults, "lr": lr}
                out.update(self.unpacked_dict(v))
            else:
                out[k.value] = self.expr(v)
        return out

    def expr_List(self, node):
        return BuildList(self.items(node.elts)) if not node.elts else tuple(self.items(node.elts))

    def apply_op(self, op, a, b, node):
        if any(isinstance(v, (str, RunTimeText)) for v in (a, b)):
            if isinstance(a, str) and isinstance(b, str) and op in (operator.add, operator.mod):
                return op(a, b)  # a label or a message built from constants
            if op is operator.mul and {type(a), type(b)} == {str, int}:
                return op(a, b)  # "ab" * 3, known while building
            raise UnsupportedError("arithmetic with a string", self.loc(node))
        if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
            if op is operator.add and isinstance(a, tuple) and isinstance(b, tuple):
                return a + b
            if op is operator.mul and any(type(v) is int for v in (a, b)):
                return op(a, b)  # (1.0,) * n, [0.0] * 3: repeated, n known while building
            if any(isinstance(v, Sym) and v.ndim for v in (a, b)):  # array_like: NumPy's
                a, b = numpy_args.as_array(a), numpy_args.as_array(b)
                return op(a, b)
            raise UnsupportedError("arithmetic on tuples or lists", self.loc(node))
        if op is operator.matmul and not (isinstance(a, Sym) or isinstance(b, Sym)):
            raise UnsupportedError("@ needs arrays", self.loc(node))
        if op is operator.pow and isinstance(a, int) and isinstance(b, Sym):
            a = float(a)
        try:
            return op(a, b)
        except ZeroDivisionError:
            raise JitgradError("ZeroDivisionError in a constant expression",
                               self.loc(node)) from None

    def expr_BinOp(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            raise UnsupportedError(f"the operator {type(node.op).__name__}", self.loc(node))
        return self.apply_op(op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            if isinstance(v, Sym):
                return ~v
            if isinstance(v, (bool, np.bool_)):  # ~True is -2 in Python, False in NumPy:
                raise UnsupportedError("`~` on a bool (write `not`)", self.loc(node))
            return ~v
        if isinstance(node.op, ast.Not):
            t = self.truth(v, node)
            return (not t) if not isinstance(t, Sym) else symbolic.record("logical_not", t)
        raise UnsupportedError(f"the operator {type(node.op).__name__}", self.loc(node))

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = True
        for op, right_node in zip(node.ops, node.comparators):
            if isinstance(left, RunTimeText):
                raise UnsupportedError("comparing an f-string that formats a run-time value",
                                       self.loc(node))
            if isinstance(op, (ast.In, ast.NotIn)) and not isinstance(left, str):
                left = self.membership(left, op, self.expr(right_node), node)
                if left is False or len(node.ops) == 1:
                    return left
                raise UnsupportedError("a chained comparison with `in`", self.loc(node))
            if isinstance(left, str) and isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                left = self.string_switch(left, op, self.expr(right_node), node)
                if left is False or len(node.ops) == 1:
                    return left
                raise UnsupportedError("a chained comparison of strings", self.loc(node))
            fn = CMPOPS.get(type(op))
            if isinstance(op, (ast.Is, ast.IsNot)):
                fn = self.is_none(op, node)
            if fn is None:
                raise UnsupportedError(f"the comparison {type(op).__name__}", self.loc(node))
            right = self.expr(right_node)
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, tuple) and isinstance(
                    right, tuple):
                c = self.tuples_equal(left, right, node)  # x.shape == (n, 1): entry by entry
                if isinstance(op, ast.NotEq):
                    c = (not c) if isinstance(c, bool) else symbolic.record("logical_not", c)
            else:
                c = fn(left, right)
            result = c if result is True else self.logical("and", result, c, node)
            left = right
        return result

    def tuples_equal(self, left: tuple, right: tuple, node):
        """``a == b`` of two tuples (a shape and a tuple of sizes): False when their lengths
        differ, else the ``and`` of their entries' equalities (a run-time bool where an entry
        is known only at run time)."""
        if len(left) != len(right):
            return False
        result = True
        for a, b in zip(left, right):
            if isinstance(a, Sym) and a.ndim or isinstance(b, Sym) and b.ndim:
                raise UnsupportedError("comparing tuples of arrays with ==", self.loc(node))
            c = self.tuples_equal(a, b, node) if isinstance(a, tuple) and isinstance(
                b, tuple) else (a == b)
            if c is False:
                return False
            result = c if result is True else self.logical("and", result, c, node)
        return result

    def membership(self, left, op, right, node):
        """``k in (1, 2)``, ``key in options`` (a dict: its keys), ``i in idx`` of a tuple: while
        building where every value is known, else the run-time ``or`` of equalities."""
        if isinstance(right, dict):
            right = tuple(right)
        if isinstance(right, frozenset):  # a set known while building
            if not isinstance(left, Sym):
                return (left in right) == isinstance(op, ast.In)
            right = tuple(sorted(right, key=repr))
        if not isinstance(right, (tuple, list)) or any(
                isinstance(v, Sym) and v.ndim for v in (left, *right)):
            raise UnsupportedError("`in` with a tuple, list or dict known while building (of an "
                                   "array: `np.any(x == v)`)", self.loc(node))
        found = False
        for v in right:
            if isinstance(v, str) or isinstance(left, RunTimeText):
                continue  # a number never equals a string
            same = CMPOPS[ast.Eq](left, v)
            found = same if found is False else self.logical("or", found, same, node)
            if found is True:
                break
        return found if isinstance(op, ast.In) else (
            not found if not isinstance(found, Sym) else symbolic.record("logical_not", found))

    def is_none(self, op, node):
        """``x is None``, ``cls is Ellipsoid``: decided while building (None is an argument
        with no leaves, a default such as ``weights=None``; an array or a number is never None;
        classes, functions and objects known while building are compared as Python does).
        Two run-time values are refused: whether they are one object is not a value."""
        def compare(left, right):
            if isinstance(left, Sym) and isinstance(right, Sym) or (
                    isinstance(left, (int, float)) and isinstance(right, (int, float))):
                raise UnsupportedError(f"the comparison {type(op).__name__} of two numbers or "
                                       "arrays (jitgrad takes `is` with None, classes, "
                                       "functions and objects)", self.loc(node))
            return (left is right) == isinstance(op, ast.Is)
        return compare

    def string_switch(self, left: str, op, right, node) -> bool:
        """``mode == "fast"``, ``mode in ("a", "b")``: a string argument is a constant of the
        build, so the comparison is decided while building."""
        if isinstance(op, (ast.In, ast.NotIn)):
            if isinstance(right, (dict, frozenset)):
                right = tuple(right)
            if isinstance(right, str):  # "b" in "abc": a substring, while building
                return (left in right) == isinstance(op, ast.In)
            if not (isinstance(right, tuple) and all(isinstance(r, str) for r in right)):
                raise UnsupportedError("`in` with a string: compare with a tuple of constant "
                                       'strings, `mode in ("a", "b")`', self.loc(node))
            return (left in right) == isinstance(op, ast.In)
        if not isinstance(right, str):
            raise UnsupportedError(f"comparing the string {left!r} with a value that is not a "
                                   "string", self.loc(node))
        return (left == right) == isinstance(op, ast.Eq)

    def logical(self, kind, a, b, node):
        if not isinstance(a, Sym) and not isinstance(b, Sym):
            return (a and b) if kind == "and" else (a or b)
        for v in (a, b):
            if isinstance(v, Sym) and v.type.kind != "b":
                raise UnsupportedError(f"`{kind}` on non-boolean run-time values (jitgrad "
                                       "supports and/or between conditions)", self.loc(node))
        if not isinstance(a, Sym):
            return (b if a else False) if kind == "and" else (True if a else b)
        if not isinstance(b, Sym):
            return (a if b else False) if kind == "and" else (True if b else a)
        return symbolic.record("logical_and" if kind == "and" else "logical_or", a, b)

    def expr_BoolOp(self, node):
        kind = "and" if isinstance(node.op, ast.And) else "or"
        value = self.expr(node.values[0])
        for v in node.values[1:]:
            value = self.logical(kind, value, self.expr(v), node)
        return value

    def expr_IfExp(self, node):
        cond = self.condition(node.test)
        if not isinstance(cond, Sym):
            return self.expr(node.body if cond else node.orelse)
        key = f"%ifexp@{node.lineno}:{node.col_offset}"  # deterministic (no addresses)

        def branch(value_node):
            def build():
                value = self.expr(value_node)  # (may replace self.env: a nested `if`)
                self.env[key] = value
            return build
        self.build_if(cond, branch(node.body), branch(node.orelse), node)
        value = self.env.pop(key)
        if isinstance(value, Undefined):
            raise UnsupportedError(value.why, self.loc(node))
        return value

    # -- calls ---------------------------------------------------------------------------

    def expr_Call(self, node):
        fn = self.expr(node.func)
        if fn is builtins.print:
            raise UnsupportedError(f"print(...) as a value is not supported; {instead('print')}",
                                   self.loc(node))
        if type(fn).__module__ == "ctypes":
            raise UnsupportedError(f"calling the C function {fn_name(fn)} through ctypes: its "
                                   "code is compiled C, with no Python source to read and no "
                                   "derivative rule; write it with NumPy or math, or give it "
                                   "a rule with jitgrad.custom_vjp", self.loc(node))
        if not isinstance(fn, Sym) and not _hashable(fn):
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
        args = self.items(node.args, self.argument)
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:  # f(**options): a dict known while building
                kwargs.update(self.unpacked_dict(k.value))
            elif k.arg != "out":
                kwargs[k.arg] = self.argument(k.value)
        out = next((k.value for k in node.keywords if k.arg == "out"), None)
        if out is not None:
            return self.call_into(fn, args, kwargs, out, node)
        if fn is np.put_along_axis:
            return self.put_along_axis(args, kwargs, node)
        if fn is np.fill_diagonal:
            return self.fill_diagonal(args, kwargs, node)
        return self.call(fn, args, kwargs, node)

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

    def call_into(self, fn, args, kwargs, out, node):
        """``np.exp(x, out=x)``, ``np.maximum(h, 0.0, out=h)``: the result written into
        ``out`` in place (every entry, as ``out[...] = value``: a new version of its memory)."""
        if isinstance(fn, Sym) or fn not in symbolic.NUMPY:
            raise UnsupportedError(f"out= on {fn_name(fn)} (jitgrad takes out= on NumPy's "
                                   "functions)", self.loc(node))
        if not isinstance(out, ast.Name):
            raise UnsupportedError("out= must name an array (`np.exp(x, out=x)`); to write "
                                   "into part of one, assign: `y[1:] = np.exp(x[1:])`",
                                   self.loc(out))
        array = self.lookup(out.id, out)
        value = self.call(fn, args, kwargs, node)
        if not isinstance(array, Sym) or array.ndim == 0:
            raise UnsupportedError("out= must be an array", self.loc(out))
        if symbolic.ndim_of(value) > array.ndim:
            raise ShapeError(f"out= has rank {array.ndim}, the result rank "
                             f"{symbolic.ndim_of(value)}", self.loc(out))
        self.write(out.id, out, array, ((":",) * array.ndim, []), value)
        return self.env[out.id]

    def argument(self, node):
        """A call's argument: an expression, or a string constant (``ord="fro"``,
        ``x.astype("float64")``), which the handler called reads or refuses."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        return self.expr(node)

    def call(self, fn, args, kwargs, node):
        if isinstance(fn, Sym) or fn is None:
            raise UnsupportedError("calling a value that is not a function", self.loc(node))
        if getattr(fn, "__self__", None) is not None and isinstance(fn.__self__, Sym):
            return fn(*args, **kwargs)  # an array method
        if isinstance(getattr(fn, "__self__", None), (dict, tuple, str, int, float)):
            if isinstance(fn.__self__, str) and any(
                    isinstance(a, (Sym, RunTimeText)) for a in (*args, *kwargs.values())):
                return RunTimeText(ast.unparse(node))  # "{:.3f}".format(loss): a label
            return fn(*args, **kwargs)  # options.get("scale", 1.0): read while building
        if isinstance(fn, LocalFunction):
            return self.inline(fn, args, kwargs, node)
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
        scipy_fn = scipy_api.handler_for(fn)
        if scipy_fn is not None:
            try:
                return scipy_fn(*args, **kwargs)
            except TypeError as e:
                raise UnsupportedError(f"{fn_name(fn)}: {e}", self.loc(node)) from None
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
        if isinstance(target, pytypes.FunctionType):
            return self.inline(target, args, kwargs, node)
        raise UnsupportedError(f"calling {fn_name(fn)} is not supported", self.loc(node))

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
            bound = (fn.signature() if local else inspect.signature(fn)).bind(*args, **kwargs)
        except TypeError as e:
            raise JitgradError(f"TypeError calling {src.qualname}: {e}",
                               self.loc(node)) from None
        bound.apply_defaults()
        for name, value in bound.arguments.items():  # a default array: a constant
            if isinstance(value, (np.ndarray, np.generic)):
                bound.arguments[name] = self.known(value, node)
        callee = type(self)(src, self.gb, self, enclosing=fn.builder if local else None)
        callee.bind_params([bound.arguments[n] for n in callee.param_names()])
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
        if getattr(src.node, "jitgrad_generator", False):  # its items (`desugar_generators`)
            return self.generator_items(src, result, node)
        return result

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




# operator's in-place functions: of an array named, the augmented assignment
_IN_PLACE = {operator.iadd: ast.Add, operator.isub: ast.Sub, operator.imul: ast.Mult,
             operator.itruediv: ast.Div, operator.ifloordiv: ast.FloorDiv,
             operator.imod: ast.Mod, operator.ipow: ast.Pow, operator.imatmul: ast.MatMult,
             operator.iand: ast.BitAnd, operator.ior: ast.BitOr, operator.ixor: ast.BitXor,
             operator.ilshift: ast.LShift, operator.irshift: ast.RShift}

# ndarray methods that are NumPy's function of the array (looked up in NumPy's table)
_ARRAY_METHODS = {"argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort,
                  "clip": np.clip, "round": np.round, "conj": np.conj, "conjugate": np.conj,
                  "nonzero": np.nonzero, "cumprod": np.cumprod, "ptp": np.ptp,
                  "take": np.take}


class _ArrayMethod:
    """``x.argmax``: bound to ``x`` (``__self__``, as `Expressions.call` reads a method)."""

    def __init__(self, array, fn):
        self.__self__, self.fn = array, fn

    def __call__(self, *args, **kwargs):
        return symbolic.NUMPY[self.fn](self.__self__, *args, **kwargs)


def _may_recurse(src) -> bool:
    """Whether ``src``'s function calls a name that is its own."""
    name = src.fn.__name__
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
               for n in ast.walk(src.node))


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
