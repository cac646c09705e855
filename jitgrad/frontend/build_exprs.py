"""Building expressions: names, operators, subscripts (calls: `build_calls`).

Part of `build.Builder` (a mixin). Calls go to the NumPy namespace (`numpy_api`), Python's builtins
(`build_builtins`), `custom_vjp` rules, or are built inline (the user's other plain functions and
nested functions). Guarantees: a name, call or index the builder cannot follow raises
`UnsupportedError` at the user's line.
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import operator
import types as pytypes

import numpy as np

from jitgrad.core.errors import JitgradError, Loc, UnsupportedError, instead
from jitgrad.core.ir import (
    Var,
    dims_of,
)
from jitgrad.core.types import Type
from jitgrad.frontend import draws
from jitgrad.frontend.build_ast import (
    BINOPS,
    CMPOPS,
    LIBRARIES,
    BuildList,
    LocalFunction,
    ReadAfterLoop,
    RunTimeBytes,
    RunTimeText,
    Undefined,
    assigned_names,
)
from jitgrad.frontend.build_containers import BuildMethod, is_container_method
from jitgrad.frontend.build_index import Indexing
from jitgrad.frontend.build_values import is_user_object, library_of
from jitgrad.frontend.desugar_lists import INTRINSICS
from jitgrad.lang import (
    complex_pairs,
    numpy_args,
    numpy_written,
    scipy_api,
    scipy_sparse,
    symbolic,
)
from jitgrad.lang.symbolic import Sym

# ``x.flags``: the two flags Numba's arrays have (others are refused as attributes of it)
ArrayFlags = collections.namedtuple("ArrayFlags", ["c_contiguous", "f_contiguous"])




# Python's operator methods: the method of the left operand, the reflected one of the right
_DUNDERS = {operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
            operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__",
                                                                      "__rtruediv__"),
            operator.floordiv: ("__floordiv__", "__rfloordiv__"),
            operator.mod: ("__mod__", "__rmod__"), operator.pow: ("__pow__", "__rpow__"),
            operator.matmul: ("__matmul__", "__rmatmul__")}

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
        if isinstance(node.value, (bool, int, float, complex)) or node.value in (None, Ellipsis):
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
                value = self.defined_when(name, v)
                if value is None:
                    value = self.assigned_on_some_paths(
                        name, v, numpy_written.assigned_on_this_path, node)
                if value is not None:
                    return value
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
        if (id(g), name) in self.globals_set:  # set by `global name` earlier in this build
            return self.globals_set[(id(g), name)][1]
        if name in g:
            self.globals_read.add((id(g), name))  # (as the module holds it: `set_global`)
            return self.global_value(name, g[name], node)
        if hasattr(builtins, name):
            return getattr(builtins, name)
        for loop in reversed(self.loops_building):  # set in a later iteration's branch
            if name in assigned_names(loop.body) and (self.loop_key(loop), name) \
                    not in self.seeds.refused:
                raise ReadAfterLoop(self.loop_key(loop), name, Type("f", 0))
        raise JitgradError(f"NameError: name '{name}' is not defined", self.loc(node))

    def assigned_on_some_paths(self, name, undefined, check, node):
        """The value of a number or array an ``if`` assigns on some of its paths only (its
        `MaybeDefined`), read after it, with ``check`` (a NumPy-level function of the flag and
        the value) raising at run time where Python would (UnboundLocalError for a name,
        AttributeError for an attribute); None where it is not such a value."""
        maybe = undefined.maybe
        if maybe is None or maybe.stmt is None or \
                self.loops_here()[:len(maybe.loops)] != maybe.loops:
            return None
        value, assigned = self.materialise(name, maybe)
        if assigned is True:
            return value
        return self.inline(check, [assigned, value], {}, node)

    def global_value(self, name, value, node, what="global"):
        if isinstance(value, Sym) and isinstance(value.atom, Var):
            now = self.follow(value.atom, name, node)  # an object's dict's (`self.d[k] = v`):
            return value if now is value.atom else self.gb.sym(now)  # as its memory is now
        if isinstance(value, (Sym, complex_pairs.Complex, scipy_sparse.Sparse,
                              scipy_sparse.Matrix)):  # (SimPEG's `self.W = sdiag(1 / std)`)
            return value  # a value of the graph an object's dict holds (`self.d[k] = v`)
        if isinstance(value, (bool, int, float, np.number, np.bool_)):
            return symbolic.python_scalar(value)
        if what == "attribute" and isinstance(value, Sym) and value.builder is self.gb:
            return value  # an item of a dict an object made in this build holds (ASE's
            # `self.parameters = dict(defaults); self.parameters.update(kwargs)`)
        if isinstance(value, str):  # a constant, as Numba freezes it: a switch (`MODE == "x"`)
            return value
        if isinstance(value, (pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType,
                              np.ufunc, tuple)) or callable(value):
            return value
        if isinstance(value, np.ndarray) and value.dtype.kind == "c" and value.ndim:
            return complex_pairs.Complex(  # its two parts, each a constant (`complex_pairs`)
                self.constant_array(f"{name}_real", value.real.copy(), node),
                self.constant_array(f"{name}_imag", value.imag.copy(), node))
        if isinstance(value, np.ndarray):
            return self.constant_array(name, value, node)
        constants = numpy_args.constant_tuples(value) if isinstance(value, list) else None
        if constants is not None:  # W = [0.2, 0.3], [(0, 1), (1, 0)]: read as tuples are
            return constants
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return tuple(value)  # NAMES = ["M2", "S2"]: names, constants as a tuple of them
        if isinstance(value, list) and all(is_user_object(v) or isinstance(
                v, (pytypes.FunctionType, str)) for v in value):  # LAYERS = [Layer(...)],
            return tuple(value)  # FUNS = [f, g], NODES = ["n1", "human"]: read while building
        dense = scipy_sparse.constant_dense(value)
        if dense is not None:  # a scipy.sparse matrix made outside: its dense value, a constant
            return scipy_sparse.Sparse(self.global_value(name, dense[0], node, what), dense[1])
        frozen = scipy_api.frozen_distribution(value)
        if frozen is not None:  # scipy.stats.norm(0, 2) made outside: its methods' handlers
            return self.frozen_value(name, frozen, node, what)
        if isinstance(value, list) and value and all(
                scipy_api.frozen_distribution(v) is not None for v in value):
            return tuple(self.frozen_value(f"{name}[{k}]", scipy_api.frozen_distribution(v),
                                           node, what) for k, v in enumerate(value))
        if value is None:
            return None
        if isinstance(value, slice) and all(v is None or isinstance(v, (int, np.integer))
                                            for v in (value.start, value.stop, value.step)):
            return slice(*(None if v is None else int(v)  # vect[idxs], idxs = slice(a, b)
                           for v in (value.start, value.stop, value.step)))
        if isinstance(value, dict) and all(  # (an object: by its identity; a pair of names:
                isinstance(k, (str, int)) or is_user_object(k) or (  # `BV[("Ti", "O")]`)
                    isinstance(k, tuple) and all(isinstance(e, (str, int)) for e in k))
                for k in value):
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
        if isinstance(value, np.dtype) and value.names:
            raise UnsupportedError(f"the {what} `{name}`, a structured dtype: jitgrad's arrays "
                                   "hold numbers (float, integer, bool), not records; keep "
                                   "each field in an array of its own", self.loc(node))
        raise UnsupportedError(f"the {what} `{name}` of type {type(value).__name__}",
                               self.loc(node))

    def frozen_value(self, name, frozen, node, what):
        """A frozen distribution known while building, its parameters read as constants
        (arrays as the constant arrays of the graph)."""
        if any(isinstance(v, Sym) for v in (*frozen.args, *frozen.kwargs.values())):
            return frozen  # (made in the function: its parameters are values already)
        base = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "dist"
        return scipy_api.FrozenDistribution(  # (named in the generated code `<name>_<k>`)
            frozen.name, tuple(self.global_value(f"{base}_{k}", v, node, what)
                               for k, v in enumerate(frozen.args)),
            {k: self.global_value(f"{base}_{k}", v, node, what)
             for k, v in frozen.kwargs.items()})

    def constant_array(self, name, value, node):
        """A global array (or one a closure captured) read as a constant, as Numba freezes it:
        its contents when the signature is first compiled (an array of rank 0, its number)."""
        kind = {"u": "i"}.get(value.dtype.kind, value.dtype.kind)
        if kind in "fib" and value.ndim == 0:  # np.asarray(1.3): its number, as NumPy reads it
            return value.item()
        if kind not in "fib":
            raise UnsupportedError(f"the global `{name}`: a {value.dtype} array of rank "
                                   f"{value.ndim} (jitgrad reads float, integer and bool arrays "
                                   "as constants)", self.loc(node))
        base = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "c"
        return self.gb.sym(self.gb.constant_array(value, base))  # (D['a'] named D__a)

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
            key = (id(vars(base)), attr)
            if key in self.globals_set:  # set by `global attr` in that module, in this build
                return self.globals_set[key][1]
            self.globals_read.add(key)  # (as the module holds it: `set_global`)
            value = getattr(base, attr)
            if base is np and attr in ("pi", "e", "inf", "nan", "newaxis"):
                return value
            if base is np and attr in ("float64", "float32", "int64", "int32", "bool_"):
                return value
            if scipy_api.frozen_distribution(value) is not None or isinstance(value, list) \
                    and value and scipy_api.frozen_distribution(value[0]) is not None:
                return self.global_value(attr, value, node)  # (its parameters: constants)
            return value
        if isinstance(base, Sym):
            if attr in ("T", "shape", "ndim", "size", "dtype"):
                return getattr(base, attr)
            if attr == "real":  # of a real value: the value itself (NumPy: a view of it)
                return base
            if attr == "imag":  # of a real value: zero (NumPy: zeros of its shape)
                return symbolic.record("zeros_like", base) if base.ndim else \
                    0.0 if base.type.kind == "f" else 0
            if attr in ("itemsize", "nbytes"):  # read at run time (float32 or float64)
                return symbolic.record("memory", base, attr=attr)
            if attr == "strides":
                return tuple(symbolic.record("memory", base, attr="strides", axis=k)
                             for k in range(base.ndim))
            if attr == "flags":  # x.flags.c_contiguous, .f_contiguous: read at run time
                return ArrayFlags(*(symbolic.record("memory", base, attr=a)
                                    for a in ArrayFlags._fields))
            if attr == "tobytes":  # its length is read (len(x.tobytes()), x.nbytes)
                return _Bytes(base, None)
            if attr == "setflags":  # x.setflags(write=False): no effect on any value
                return _SetFlags(base, None)
            if attr == "view":  # x.view(dtype) of its own kind: the same array
                return _ArrayMethod(base, np.ndarray.view)
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
        if isinstance(base, (scipy_sparse.Sparse, scipy_sparse.Matrix)):  # A.T, A.toarray
            return getattr(base, attr)
        if isinstance(base, complex_pairs.Complex):  # z.real, z.conjugate: of its two parts
            if attr in ("real", "imag", "conjugate", "conj", "shape", "ndim", "size", "T",
                        "reshape", "ravel", "flatten", "copy", "transpose", "sum", "mean",
                        "cumsum", "dot", "astype", "var", "std", "prod", "compress"):
                return getattr(base, attr)
            raise UnsupportedError(f"the attribute .{attr} of a complex value is not supported "
                                   "(.real, .imag, .conjugate() are)", self.loc(node))
        if isinstance(base, (int, float)) and attr in ("real",):
            return base
        if isinstance(base, (bool, np.bool_)) and attr in ("any", "all", "item"):
            return getattr(np.bool_(base), attr)  # np.isclose(n2, 1).any() of numbers
        if isinstance(base, (int, float)) and not isinstance(base, bool) and attr in (
                "copy", "item", "shape", "ndim", "size", "dtype"):
            # a number known while building stands for NumPy's scalar or 0-d array too
            # (np.asarray(1.0, float) made while building): its methods as NumPy's
            if attr in ("copy", "item"):  # the number itself: its own method that returns it
                return base.conjugate
            return getattr(np.asarray(base), attr)
        if isinstance(base, np.finfo) and attr in ("eps", "epsneg", "tiny", "max", "min",
                                                         "smallest_normal", "resolution"):
            return float(getattr(base, attr))  # np.finfo(np.float64).eps: a constant
        if isinstance(base, np.iinfo) and attr in ("min", "max", "bits"):
            return int(getattr(base, attr))  # np.iinfo(np.int32).max: a constant
        if isinstance(base, np.dtype) and attr in ("kind", "char", "name", "str", "type",
                                                   "names", "fields"):
            return getattr(base, attr)  # x.dtype.kind: of the dtype x.dtype gives, a constant
        if isinstance(base, draws.GeneratorRef):  # rng.normal
            return draws.method_of(base, attr, self.loc(node))
        if isinstance(base, (str, int, float, complex)) and not isinstance(base, bool) and \
                hasattr(base, attr):
            return getattr(base, attr)  # "a,b".split(","), n.bit_length(): while building
        if isinstance(base, dict) and attr in ("get", "keys", "values", "items"):
            return getattr(base, attr)  # a dict built or passed: read while building
        if isinstance(base, tuple) and attr in ("index", "count"):
            return getattr(base, attr)
        if isinstance(base, tuple) and attr in getattr(type(base), "_fields", ()):
            return getattr(base, attr)  # a namedtuple's field (results.root)
        if isinstance(base, LocalFunction) and attr == "__code__":
            return base.__code__  # its parameters' counts (`LocalFunction.__code__`)
        if is_container_method(base, attr):  # lst.pop(), d.pop("k"), s.add(3)
            return BuildMethod(self, getattr(node, "value", node), base, attr)
        if isinstance(base, super):  # super().__init__: the parent's, bound to the object
            return getattr(base, attr)
        if is_user_object(base) and attr not in vars(base):
            getter = getattr(type(base), attr, None)  # a property: its getter, built here
            if isinstance(getter, property) and getter.fget is not None:
                self.direct_call = (node, getter.fget)  # (the read is the call: a list it
                return self.call(getter.fget, (base,), {}, node)  # returns is read here)
        method = getattr(base, attr, None)
        if method is not None and scipy_api.handler_for(method) is not None:
            return method  # scipy.stats.norm.cdf
        if isinstance(base, np.ufunc) and attr == "outer":  # np.multiply.outer(a, b)
            return functools.partial(numpy_written.ufunc_outer, base)
        if isinstance(base, np.ufunc):
            numpy_args.refuse_ufunc_method(base, attr, self.loc(node))
        if attr == "py_func" and type(base).__module__.startswith("numba.") and \
                callable(getattr(base, "py_func", None)):
            return base.py_func  # a Numba dispatcher's Python function, the source jitgrad reads
        if is_user_object(base) or (isinstance(base, type) and library_of(base) not in LIBRARIES
                                    and base.__module__ != "builtins"):
            return self.object_attribute(base, attr, node)
        raise UnsupportedError(f"the attribute .{attr} of a {type(base).__name__} is not "
                               "supported", self.loc(node))

    def expr_Tuple(self, node):
        value = tuple(self.items(node.elts))
        if value:  # (the empty tuple is one object: it may stand for an empty list too)
            self.tuple_displays[id(value)] = value
        return value

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
            elif isinstance(seq, Sym) and seq.ndim and self.decided_length(seq) is not None:
                seq = self.unpack_rows(seq, self.decided_length(seq), n)
            if isinstance(seq, dict):
                seq = tuple(seq)
            if not isinstance(seq, (tuple, list, range)):
                raise UnsupportedError(
                    "`*` spreads a tuple or list whose length is known while building (this "
                    "is a run-time value: index it, `f(x[0], x[1])`)", self.loc(n))
            values.extend(seq)
        return values

    def decided_length(self, array: Sym) -> int | None:
        """The length of ``array`` (made from the arguments' sizes) in the example call, where
        the build may hold for calls of that length only (`SizeAssumptions.decide`: checked
        first thing, another length built again): ``f(*params)`` of a parameter vector."""
        token = self.gb.size_class(dims_of(self.gb.atom(array, check=False))[0])
        n = self.gb.example_sizes.get(token)
        if n is None or not self.gb.decide(self.gb.atom(array.shape[0] == n, check=False)):
            return None
        return n

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
        if is_user_object(a) or is_user_object(b):  # q * 2.0, 0.5 * q: the class's own
            value = self.user_operator(op, a, b, node)
            if value is not NotImplemented:
                return value
        if any(isinstance(v, (str, RunTimeText)) for v in (a, b)):
            if isinstance(a, str) and isinstance(b, str) and op in (operator.add, operator.mod):
                return op(a, b)  # a label or a message built from constants
            if op is operator.mul and {type(a), type(b)} == {str, int}:
                return op(a, b)  # "ab" * 3, known while building
            if op is operator.add and all(isinstance(v, (str, RunTimeText)) for v in (a, b)):
                # "wrong angle " + str(theta) of a run-time value: a message, as an f-string
                return RunTimeText(ast.unparse(node))
            if op is operator.mod and isinstance(a, (str, RunTimeText)):
                # "... (%d!=%d)" % (n, m) of run-time values: a message (printed or raised),
                # never computed with, as an f-string of them
                if isinstance(a, str) and not _holds_sym(b):
                    return op(a, b)
                return RunTimeText(ast.unparse(node))
            raise UnsupportedError("arithmetic with a string", self.loc(node))
        if scipy_sparse.involved(a, b):  # a scipy.sparse matrix: its own operators
            return scipy_sparse.binary(op, a, b)
        if complex_pairs.involved(a, b):  # of a complex value: its real and imaginary parts
            return complex_pairs.binary(op, a, b)
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
        self.zero_check(op, a, b, node)  # (inside a try that catches ZeroDivisionError)
        try:
            return op(a, b)
        except ZeroDivisionError:
            raise JitgradError("ZeroDivisionError in a constant expression",
                               self.loc(node)) from None

    def user_operator(self, op, a, b, node):
        """``a op b`` where an operand is an object of the user's class: its method
        (``__mul__`` of ``a``, else ``__rmul__`` of ``b``, as Python tries them), built as the
        user's code; NotImplemented where neither class defines one that takes it."""
        names = _DUNDERS.get(op)
        if names is None:
            return NotImplemented
        for obj, other, name in ((a, b, names[0]), (b, a, names[1])):
            if obj is b and type(a) is type(b):
                break  # (Python tries the reflected method of another type only)
            if is_user_object(obj) and callable(getattr(type(obj), name, None)):
                value = self.call(getattr(obj, name), (other,), {}, node)
                if value is not NotImplemented:
                    return value
        return NotImplemented

    def expr_BinOp(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            raise UnsupportedError(f"the operator {type(node.op).__name__}", self.loc(node))
        return self.apply_op(op, self.expr(node.left), self.expr(node.right), node)

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        method = {ast.USub: "__neg__", ast.UAdd: "__pos__"}.get(type(node.op))
        if method and is_user_object(v) and callable(getattr(type(v), method, None)):
            return self.call(getattr(v, method), (), {}, node)  # -q: the class's own
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
            elif scipy_sparse.involved(left, right):
                c = scipy_sparse.binary(fn, left, right)
            elif complex_pairs.involved(left, right):
                c = complex_pairs.binary(fn, left, right)
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
        if isinstance(right, Sym) and right.ndim and symbolic.ndim_of(left) == 0 \
                and not isinstance(left, (str, RunTimeText)):
            # `v in x` of an array: NumPy's ndarray.__contains__, (x == v).any()
            found = symbolic.NUMPY[np.any](CMPOPS[ast.Eq](right, left))
            return found if isinstance(op, ast.In) else symbolic.record("logical_not", found)
        if not isinstance(right, (tuple, list)) or any(
                isinstance(v, Sym) and v.ndim for v in (left, *right)):
            raise UnsupportedError("`in` with a tuple, list or dict known while building (of an "
                                   "array: `np.any(x == v)`)", self.loc(node))
        found = False
        for v in right:
            if isinstance(v, str) or isinstance(left, RunTimeText):
                continue  # a number never equals a string
            same = self.tuples_equal(left, v, node) if isinstance(left, tuple) and isinstance(
                v, tuple) else CMPOPS[ast.Eq](left, v)  # `x.shape in ((n, d), (n, d, d))`
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
            if isinstance(left, bool) and isinstance(right, bool):
                return (left is right) == isinstance(op, ast.Is)  # `flag is False`: Python's
            flag, const = (left, right) if isinstance(right, bool) else (right, left)
            if isinstance(const, bool) and isinstance(flag, Sym) and \
                    flag.atom in self.python_bools:  # `bool(x) is True`: Python's bool
                return flag if const == isinstance(op, ast.Is) else symbolic.record(
                    "logical_not", flag)
            if any(isinstance(v, bool) for v in (left, right)) and any(
                    isinstance(v, Sym) and not v.ndim and v.type.kind == "b"
                    for v in (left, right)):
                raise UnsupportedError(f"the comparison {type(op).__name__} of a truth value "
                                       "known only at run time with True or False (Python's "
                                       "bool is the object, NumPy's is not): test its value "
                                       "(`if not flag:`)", self.loc(node))
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
            if isinstance(right, (dict, frozenset, set, list, type({}.keys()))):
                right = tuple(right)  # (QuantEcon's `window in windows.keys()`)
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

    def expr_BoolOp(self, node, test=False):
        """``a and b``, ``a or b``. In a test (``test``: an ``if``, a ``while``, ``x if c else
        y``) only the truth of the result counts, so a run-time number there stands for
        ``n != 0`` as Python takes it (``x[i] > 0 and i % 2``)."""
        kind = "and" if isinstance(node.op, ast.And) else "or"

        def operand(v):
            value = self.expr_BoolOp(v, True) if test and isinstance(v, ast.BoolOp) \
                else self.expr(v)
            if test and isinstance(value, Sym) and not value.ndim and value.type.kind in "if":
                value = value != 0
            return value
        value = operand(node.values[0])
        for k, v in enumerate(node.values[1:], 1):
            if _decides(kind, value):  # `x is None or f(x)` with x None: f(x) not built
                return value
            if isinstance(value, Sym) and not value.ndim and value.type.kind == "b" and \
                    _may_raise(v):  # `j < n and a[j] == v`: a[j] read only where j < n
                return self.short_circuit(kind, value, node.values[k:], node, test)
            value = self.logical(kind, value, operand(v), node)
        return value

    def short_circuit(self, kind, value, rest, node, test=False):
        """``value and rest...`` (``or``) with ``value`` a run-time condition and the rest an
        expression that may raise or read out of bounds: the rest is built in a branch, taken
        only where Python evaluates it."""
        rest_node = rest[0] if len(rest) == 1 else ast.copy_location(
            ast.BoolOp(op=node.op, values=list(rest)), rest[0])
        key = f"%{kind}@{rest[0].lineno}:{rest[0].col_offset}"  # deterministic (no addresses)

        def evaluate():
            rest_value = self.expr_BoolOp(rest_node, test) if isinstance(
                rest_node, ast.BoolOp) else self.expr(rest_node)
            if test and isinstance(rest_value, Sym) and not rest_value.ndim and \
                    rest_value.type.kind in "if":
                rest_value = rest_value != 0  # (in a test, a number's truth)
            self.env[key] = self.logical(kind, kind == "and", rest_value, node)

        def decided():
            self.env[key] = kind == "or"

        then_fn, else_fn = (evaluate, decided) if kind == "and" else (decided, evaluate)
        self.build_if(value, then_fn, else_fn, node)
        out = self.env.pop(key)
        if isinstance(out, Undefined):
            raise UnsupportedError(out.why, self.loc(node))
        return out

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


def _may_raise(node) -> bool:
    """Whether evaluating ``node`` may raise, or read memory it should not (compiled code does
    not check indices): it indexes or calls."""
    return any(isinstance(n, (ast.Subscript, ast.Call)) for n in ast.walk(node))


def _decides(kind, value) -> bool:
    """Whether ``value``, known while building, ends an ``and`` (false) or an ``or`` (true) as
    Python's short circuit does, so the operands after it are not built (nor evaluated)."""
    if isinstance(value, Sym) or not isinstance(
            value, (bool, int, float, str, np.bool_, np.number, type(None))):
        return False
    return bool(value) == (kind == "or")


class _ArrayMethod:
    """``x.argmax``: bound to ``x`` (``__self__``, as `Expressions.call` reads a method)."""

    def __init__(self, array, fn):
        self.__self__, self.fn = array, fn

    def __call__(self, *args, **kwargs):
        return symbolic.NUMPY[self.fn](self.__self__, *args, **kwargs)


class _Bytes(_ArrayMethod):
    """``x.tobytes``: bound to ``x``; its call gives the bytes' length only (`RunTimeBytes`)."""

    def __call__(self, order="C"):
        return RunTimeBytes(symbolic.record("memory", self.__self__, attr="nbytes"))


class _SetFlags(_ArrayMethod):
    """``x.setflags``: bound to ``x``; its call changes no value (the flags say whether NumPy
    lets the array be written, which the graph does not model), and returns None."""

    def __call__(self, write=None, align=None, uic=None):
        return None


_ARRAY_METHODS = {"argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort,
                  "clip": np.clip, "round": np.round, "conj": np.conj, "conjugate": np.conj,
                  "nonzero": np.nonzero, "cumprod": np.cumprod, "ptp": np.ptp,
                  "take": np.take, "compress": np.ndarray.compress}


def _holds_sym(value) -> bool:
    """Whether ``value`` (a number, a tuple of them) holds a run-time value."""
    if isinstance(value, (tuple, list)):
        return any(map(_holds_sym, value))
    return isinstance(value, (Sym, RunTimeText))
