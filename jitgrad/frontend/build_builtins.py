"""Python's built-in functions as the builder takes them: ``abs``, ``max``, ``len``, ``sum``,
``isinstance``, ``slice``, ``map``... on symbolic values (`symbolic.Sym`) and on values known
while building.

Each entry takes the builder, the call's evaluated arguments and keywords, and the call's AST
node (for messages); it returns the call's value or raises `UnsupportedError` at the user's
line, saying what to write instead. `build_calls.Calls.call` looks calls up in
`BUILTINS`.
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import math
import operator

import numpy as np

from jitgrad.core.errors import RaisesInPython, UnsupportedError
from jitgrad.core.ir import Var, dims_of
from jitgrad.frontend import array_api, autograd_flatten, function_args, vmap_calls
from jitgrad.frontend.build_ast import (
    BuildIterator,
    BuildList,
    Iterator,
    RunTimeBytes,
    RunTimeRange,
    RunTimeText,
)
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.desugar_lists import (
    entry_items,
    is_dict,
    items_of,
    range_items,
    zip_count,
)
from jitgrad.frontend.list_reads import (
    joined_items,
    list_count,
    list_index,
    list_of,
    reversed_items,
    sorted_items,
)
from jitgrad.lang import complex_pairs, numpy_api, numpy_linalg, numpy_written, symbolic
from jitgrad.lang.symbolic import Sym

# ----------------------------------------------------------------------------- builtins


def _b_abs(b, args, kwargs, node):
    (x,) = args
    return symbolic.record("abs", x) if isinstance(x, Sym) else abs(x)


def _b_minmax(which):
    """Python's ``max``/``min``: of several numbers (``max(a, b)``, recorded as ``maximum``),
    of one tuple or list of them, or of one 1-D array, its largest or smallest entry as
    `np.max` gives it (the same value and, at ties, the project's mean of the one-sided
    derivatives; with a NaN in the array NumPy's NaN, where Python's answer depends on the
    NaN's place)."""
    def f(b, args, kwargs, node):
        if kwargs:
            raise UnsupportedError(f"{which}() with keywords (key=, default=): use np.{which} "
                                   "or a loop", b.loc(node))
        if len(args) == 1:
            (x,) = args
            if isinstance(x, Sym) and x.ndim == 1:
                return getattr(np, which)(x)
            if isinstance(x, np.ndarray) and x.ndim == 1:  # a constant array
                return max(x) if which == "max" else min(x)
            if not isinstance(x, (tuple, list)) or not x:
                what = f"array of rank {x.ndim}" if isinstance(x, Sym) else type(x).__name__
                raise UnsupportedError(f"{which}() of one {what}: Python iterates over a 1-D "
                                       f"array's entries or a tuple's items; use np.{which}(x) "
                                       f"or np.{which}(x, axis=0)", b.loc(node))
            args = tuple(x)
            if len(args) == 1:
                return args[0]
        if which == "max" and len(args) == 2 and 0 in [a for a in args if type(a) is int] \
                and any(_a_size(a) for a in args):
            return next(a for a in args if _a_size(a))  # max(n, 0) of a size: the size
        result = args[0]
        for a in args[1:]:
            for v in (result, a):
                if isinstance(v, Sym) and v.ndim:
                    raise UnsupportedError(f"builtin {which}() of arrays (use np.{which}imum)",
                                           b.loc(node))
            if isinstance(result, Sym) or isinstance(a, Sym):
                result = symbolic.record("maximum" if which == "max" else "minimum", result, a)
            else:
                result = max(result, a) if which == "max" else min(result, a)
        return result
    return f


def _a_size(a) -> bool:
    """Whether ``a`` is a size read from an array's shape (never negative)."""
    return isinstance(a, Sym) and not a.ndim and a.type.kind == "i" and \
        isinstance(a.atom, Var) and symbolic.size_token(a.atom) is not None


def _b_len(b, args, kwargs, node):
    (x,) = args
    if isinstance(x, Sym):
        if not x.ndim:  # (TypeError in Python, for a number and a 0-d array alike)
            raise RaisesInPython(TypeError, "len() of a scalar", b.loc(node))
        return x.shape[0]
    if isinstance(x, RunTimeBytes):
        return x.length
    if isinstance(x, RunTimeRange):
        if type(x.start) is int and x.start == 0 and x.step == 1 and symbolic.is_size(x.stop):
            return x.stop  # range(len(xs)): that size (its token kept)
        span = x.stop - x.start if x.step > 0 else x.start - x.stop
        if abs(x.step) != 1:
            span = (span + abs(x.step) - 1) // abs(x.step)
        return symbolic.record("maximum", span, 0)
    if isinstance(x, (int, float, complex, np.number, np.bool_, bool)) or x is None:
        raise RaisesInPython(TypeError, f"len() of a {type(x).__name__}", b.loc(node))
    if is_user_object(x) and callable(getattr(type(x), "__len__", None)):
        return b.call(x.__len__, (), {}, node)  # ASE's len(atoms): its class's __len__, built
    return len(x)


def _b_items_of(b, args, kwargs, node):
    """`desugar_lists.items_of`: a generator's items."""
    (items,) = args
    if isinstance(items, (tuple, list)):
        return tuple(items)
    return b.call(np.array, (items,), {}, node)


def _b_range_items(b, args, kwargs, node):
    """`desugar_lists.range_items`: the indices of a range whose bounds are known while
    building, as a tuple (the loop unrolled). A bound made of the arguments' sizes alone
    (``range(d)`` of ``n, d = obs.shape``) takes its value in the example call: the build
    holds for calls where it has that value (`SizeAssumptions.decide`; built again for
    another)."""
    args = tuple(b.size_decided(a) for a in args)
    try:
        return range_items(*args)
    except UnsupportedError as e:
        raise UnsupportedError(str(e), b.loc(node)) from None


def _b_zip_count(b, args, kwargs, node):
    """`desugar_lists.zip_count`: the least of the sequences' lengths."""
    counts = [_b_len(b, (a,), {}, node) for a in args]
    return _b_minmax("min")(b, (tuple(counts),), {}, node)


def _b_list_method(which):
    """`desugar_lists.list_index` and `list_count`: of an array (a list that is an array of
    its items), NumPy's reading of them (`numpy_written`); of a list known while building,
    Python's."""
    def f(b, args, kwargs, node):
        items, value = args
        if isinstance(items, Sym):
            if items.ndim != 1:
                raise UnsupportedError(f".{which}() of a list of lists known only at run time",
                                       b.loc(node))
            return b.inline(getattr(numpy_written, f"list_{which}"), [items, value], {}, node)
        return getattr(items, which)(value)
    return f


def _b_sorted_items(b, args, kwargs, node):
    """`desugar_lists.sorted_items`: of an array (a list that is an array of its items),
    NumPy's stable sort of it (reversed for ``reverse=True``); of a list known while
    building, Python's sorted."""
    (items,) = args
    reverse = kwargs.get("reverse", False)
    if not isinstance(items, Sym):
        return _b_sequence("sorted")(b, args, kwargs, node)
    if isinstance(reverse, Sym) or items.ndim != 1:
        raise UnsupportedError("sorted() of a list known only at run time takes numbers and "
                               "reverse= known while building", b.loc(node))
    ordered = symbolic.NUMPY[np.sort](items)
    return symbolic.NUMPY[np.flip](ordered, 0) if reverse else ordered


def _b_cast(kind):
    def f(b, args, kwargs, node):
        (x,) = args
        if isinstance(x, Sym):
            numpy_api.scalar_only(kind, x, b.loc(node))
            out = symbolic.record("cast", x, kind={"float": "f", "int": "i", "bool": "b"}[kind])
            if kind == "bool":  # Python's bool: `flag is True` reads its value (`is_none`)
                b.python_bools.add(out.atom)
            return out
        return {"float": float, "int": int, "bool": bool}[kind](x)
    return f


def _b_pow(b, args, kwargs, node):
    return args[0] ** args[1]


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def itertools_made(value) -> bool:
    """Whether ``value`` is an iterator itertools made while building, of values known then
    (``combinations_with_replacement(range(3), 4)``: called with no run-time value, it ran as
    Python)."""
    return type(value).__module__ == "itertools" and hasattr(value, "__next__")


def _b_sum(b, args, kwargs, node):
    if kwargs or not 1 <= len(args) <= 2:
        raise UnsupportedError("sum() takes a sequence and a start", b.loc(node))
    seq, total = args[0], (args[1] if len(args) == 2 else 0)
    if isinstance(seq, Iterator):  # sum(powers(x, 4)): of a generator's items
        seq = _rest(b, seq, "sum", node)
    if isinstance(seq, _DICT_VIEWS):  # sum(activities.values()): a dict's, known by its keys
        seq = tuple(seq)
    if isinstance(seq, Sym):
        if not seq.ndim:
            raise UnsupportedError("sum() of a scalar", b.loc(node))
        return total + numpy_api.np_sum(seq, 0)  # over the first axis, as iterating does
    if isinstance(seq, (tuple, list)):
        for v in seq:
            total = total + v
        return total
    raise UnsupportedError("sum() of this value", b.loc(node))


def _b_sequence(which):
    """``sorted``, ``list``, ``tuple``, ``reversed``, ``zip`` and ``enumerate`` of tuples and
    lists known while building (``w = [0.2, 0.3, 0.5]``, a tuple of arrays; ``sorted`` of a
    dict's keys): the tuple Python would iterate over. Of an array they are refused: its items are known only at run time
    (``for`` takes ``zip``, ``enumerate`` and ``reversed`` of arrays by itself)."""
    def f(b, args, kwargs, node):
        if which == "sorted" and args and isinstance(args[0], frozenset) and "key" not in kwargs:
            args = (tuple(sorted(args[0])), *args[1:])  # a set known while building
        args = tuple(_rest(b, a, f"{which}()", node) if isinstance(a, Iterator) else
                     _iterator_rest(b, a, f"{which}()", node) if isinstance(a, BuildIterator)
                     else tuple(a) if isinstance(a, _DICT_VIEWS) or itertools_made(a) else a
                     for a in args)  # (a generator's or an iterator's items: the tuple or
        # array of them; a dict's keys, values or items, or what itertools made of values
        # known while building, read then: the tuple of them)
        seqs = args if which == "zip" else args[:1]
        if which == "sorted" and args and isinstance(args[0], dict):
            # sorted(d): its keys, known while building, in an order that does not depend on
            # the order the dict was made in (which a dict argument's tree does not keep)
            args = (tuple(args[0]), *args[1:])
            seqs = args[:1]
        length = _known_length(b, args[0]) if which in ("list", "tuple") and len(
            args) == 1 and not kwargs else None
        if length is not None:  # of an array whose length is known while building: its
            return tuple(b.unpack_rows(args[0], length, node))  # rows, as Python's
        if which == "zip" and not kwargs and any(isinstance(s, (tuple, list, str)) for s in seqs):
            args = seqs = tuple(_rows_decided(b, s, node) for s in seqs)
        if not seqs or not all(isinstance(s, (tuple, list, str)) for s in seqs):
            hint = {"sorted": "np.sort(x)", "list": "the array itself",
                    "tuple": "the array itself"}.get(which, f"`for ... in {which}(x)`")
            raise UnsupportedError(f"{which}() of an array or a run-time value outside a "
                                   f"`for` statement is not supported: use {hint}",
                                   b.loc(node))
        if which == "sorted" and any(isinstance(v, Sym) for v in args[0]):
            return _sorted_at_run_time(b, args[0], kwargs, node)
        if which == "sorted" and set(kwargs) - {"reverse", "key"}:
            raise UnsupportedError("sorted() takes key= and reverse=", b.loc(node))
        if which == "sorted" and kwargs.get("key") is not None:
            kwargs = {**kwargs, "key": _key_known_now(b, kwargs["key"], node)}
        try:
            result = {"sorted": sorted, "list": list, "tuple": tuple, "reversed": reversed,
                      "zip": zip, "enumerate": enumerate}[which](*args, **kwargs)
        except TypeError as e:
            raise UnsupportedError(f"{which}(): {e}", b.loc(node)) from None
        return tuple(tuple(v) if which in ("zip", "enumerate") else v for v in result)
    return f


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _rows_decided(b, x, node):
    """``zip(NAMES, x)`` beside a sequence known while building (``dict(zip(NAMES, x))``):
    the rows of the array ``x``, of the length it has in the example call (the build holds
    for calls of that length, `decided_length`); anything else as it is."""
    if not (isinstance(x, Sym) and x.ndim):
        return x
    n = _known_length(b, x)
    n = b.decided_length(x) if n is None else n
    return x if n is None else tuple(b.unpack_rows(x, n, node))


def _known_length(b, x) -> int | None:
    """The length of the array ``x`` where it is known while building, else None."""
    if not (isinstance(x, Sym) and x.ndim):
        return None
    size = b.initial_size(b.gb.size_class(dims_of(x.atom)[0]))  # (written in a loop)
    return size if isinstance(size, int) else None


def _key_known_now(b, key, node):
    """``sorted(pairs, key=lambda p: p[0])`` of items known while building: the key (a
    function the builder builds, such as a lambda) called on each item while building; its
    value must be known then too."""
    def of(item):
        if isinstance(key, (operator.itemgetter, operator.attrgetter)):
            value = key(item)  # (an item's entry or attribute: read while building)
        else:
            value = b.call(key, (item,), {}, node)
        if isinstance(value, (Sym, RunTimeText)):
            raise UnsupportedError("sorted(key=...) whose key is known only at run time: sort "
                                   "an array of keys with np.argsort and index the values "
                                   "with it", b.loc(node))
        return value
    return of


def _literal_unroll(b, args, kwargs, node):
    """Numba's ``literal_unroll(t)``: the tuple itself (a ``for`` over a tuple known while
    building is unrolled already, whatever its items' types)."""
    (t,) = args
    if not isinstance(t, (tuple, list)):
        raise UnsupportedError("literal_unroll() of a tuple", b.loc(node))
    return tuple(t)


def _rest(b, it: Iterator, what: str, node):
    items = it.rest()
    if items is None:
        raise UnsupportedError(f"{what} of the generator {it.name} after a for loop over it "
                               "(which items remain depends on where the loop stopped): make "
                               "the generator again", b.loc(node))
    return items


def _next_of_generator(b, args, kwargs, node):
    """``next(g)`` of a generator (`build_ast.Iterator`): its next item, taken while building
    from the array of its items. With fewer items than the ``next`` calls, Python raises
    StopIteration: where the count is known while building that is refused here (or the
    default returned), else the compiled code checks it and raises."""
    if kwargs or not 1 <= len(args) <= 2 or not isinstance(args[0], Iterator):
        raise UnsupportedError("next() of a generator (jitgrad takes `g = gen(...)`, then "
                               "`next(g)`)", b.loc(node))
    it = args[0]
    if it.looped:
        raise UnsupportedError(f"next() of the generator {it.name} after a for loop over it "
                               "(which items remain depends on where the loop stopped)",
                               b.loc(node))
    k = it.taken
    items = it.items
    count = len(items) if isinstance(items, tuple) else items.shape[0]
    if isinstance(count, int) and k >= count:
        if len(args) == 2:
            return args[1]
        raise UnsupportedError(f"next() of the generator {it.name} after its {count} items: "
                               "Python raises StopIteration", b.loc(node))
    if not isinstance(count, int):
        if len(args) == 2:
            raise UnsupportedError("next(g, default) of a generator whose number of items is "
                                   "known only at run time: loop over it", b.loc(node))
        b.build_written(f"assert JGV.shape[0] > {k}, 'next() after the last item "
                        "(StopIteration)'\n", node, {"JGV": "items"}, {"JGV": items})
    return it.take()


def is_zero(v):
    """Whether the divisor ``v`` is a number that is zero (`build_stmts.guarded_try`): of a
    run-time number, the run-time test; an array is never (dividing by it does not raise)."""


def _b_is_zero(b, args, kwargs, node):
    (v,) = args
    if isinstance(v, Sym):
        return False if v.ndim else v == 0
    return not isinstance(v, np.ndarray) and v == 0


def cholesky_fails(a):
    """Whether a Cholesky factorisation of ``a`` raises LinAlgError (`build_stmts.guarded_try`):
    of a run-time matrix, the run-time test; of a constant, NumPy's answer now."""


def _b_cholesky_fails(b, args, kwargs, node):
    (a,) = args
    if isinstance(a, Sym):
        return symbolic.record("cholesky_fails", numpy_linalg.matrix_operand("cholesky", a))
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return True
    return False


def _b_partial(b, args, kwargs, node):
    """``functools.partial(f, a)``: the function and the values bound, kept while building
    (`Expressions.call` calls ``f(a, ...)`` where it is called)."""
    if not args or isinstance(args[0], Sym) or not callable(args[0]):
        raise UnsupportedError("functools.partial of a function known while building",
                               b.loc(node))
    return functools.partial(*args, **kwargs)


def _sorted_at_run_time(b, items, kwargs, node):
    """``sorted([x[2], x[0], x[1]])`` of numbers known only at run time: NumPy's sort of them
    as an array (a stable sort; its derivative sends each sorted entry's adjoint back to the
    entry it came from), as a tuple of its entries. ``reverse=True`` reads it backwards; a
    ``key`` orders by something other than the values, which the build cannot see: refused."""
    if "key" in kwargs or set(kwargs) - {"reverse"}:
        raise UnsupportedError("sorted() of values known only at run time takes reverse= only "
                               "(a key orders by what the build cannot see): sort an array of "
                               "keys with np.argsort and index the values with it",
                               b.loc(node))
    reverse = kwargs.get("reverse", False)
    if not isinstance(reverse, bool):
        raise UnsupportedError("sorted(..., reverse=) takes True or False, known while building",
                               b.loc(node))
    if any(isinstance(v, Sym) and v.ndim for v in items) or not all(
            isinstance(v, (Sym, int, float)) and not isinstance(v, bool) for v in items):
        raise UnsupportedError("sorted() of values known only at run time takes numbers "
                               "(not arrays, strings or tuples): use np.sort", b.loc(node))
    ordered = symbolic.NUMPY[np.sort](symbolic.NUMPY[np.array](list(items)))
    entries = [symbolic.record("getitem", ordered, k, index_spec=("i",))
               for k in range(len(items))]
    return tuple(reversed(entries) if reverse else entries)


def _b_isinstance(b, args, kwargs, node):
    """``isinstance(x, float)``, ``isinstance(w, (list, tuple))``, ``isinstance(a,
    np.ndarray)``: decided while building from what the value is (a run-time number is a
    Python or NumPy number of its kind, an array an ndarray of its rank). Where the answer
    depends on what the build cannot tell apart (a list from a tuple, which jitgrad holds
    alike, unless it was written as a tuple, ``(a, b)``, or is an argument, a list or a tuple
    of the caller's; a Python float from a NumPy float64)
    it is refused rather than guessed."""
    if kwargs or len(args) != 2:
        raise UnsupportedError("isinstance() takes a value and a type", b.loc(node))
    value, types = args
    try:
        answers = {isinstance(v, types) for v in (
            [value] if b.tuple_displays.get(id(value)) is value else [list(value)]
            if b.argument_lists.get(id(value)) is value else _prototypes(value))}
    except TypeError as e:
        raise UnsupportedError(f"isinstance(): {e}", b.loc(node)) from None
    if len(answers) > 1:
        what = "a list from a tuple" if isinstance(value, tuple) else \
            "a Python number from a NumPy scalar"
        raise UnsupportedError(f"isinstance() here would need to tell {what}, which the "
                               "gradient does not: test for both (`isinstance(v, (list, "
                               "tuple))`, `isinstance(x, (float, np.floating))`)", b.loc(node))
    return answers.pop()


def _prototypes(value) -> list:
    """Python values of every kind ``value`` may stand for."""
    if isinstance(value, Sym):
        kind = value.type.kind
        dtype = {"f": np.float64, "i": np.int64, "b": np.bool_}[kind]
        if symbolic.is_size(value):  # x.shape[k]: a Python int in NumPy too
            return [0]
        if value.ndim:
            return [np.empty((0,) * value.ndim, dtype)]
        return [{"f": 0.0, "i": 0, "b": False}[kind], dtype(0)]
    if isinstance(value, tuple):  # a tuple, or a list held as one
        return [value, list(value)]
    return [value]


def _b_slice(b, args, kwargs, node):
    """``s = slice(1, n)``: a slice object, used later as an index (``x[s]``)."""
    if kwargs or not 1 <= len(args) <= 3:
        raise UnsupportedError("slice() takes one to three arguments", b.loc(node))
    for a in args:
        if a is not None:
            b.check_int(a, node)
    return slice(*args)


def _b_range(b, args, kwargs, node):
    """``range(...)`` as a value (``tuple(range(3))``, ``for k in range(n)`` is a loop): a
    tuple where its bounds are known while building, else a `RunTimeRange` (its step a
    constant) that a later ``for`` runs over."""
    if not kwargs and 1 <= len(args) <= 3 and any(isinstance(a, Sym) for a in args):
        for a in args:
            b.check_int(a, node)
        start, stop, step = {1: [0, *args, 1], 2: [*args, 1], 3: args}[len(args)]
        if type(step) is int and step != 0:  # a loop may run over it (`RunTimeRange`)
            return RunTimeRange(start, stop, step)
    if kwargs or any(isinstance(a, Sym) for a in args):
        raise UnsupportedError("range() of run-time bounds and a step that is not a nonzero "
                               "constant, outside a `for` statement (a loop `for k in "
                               "range(n)` takes them)", b.loc(node))
    try:
        return tuple(range(*args))
    except TypeError as e:
        raise UnsupportedError(f"range(): {e}", b.loc(node)) from None


def _b_round(b, args, kwargs, node):
    """``round(x)``: NumPy's round half to even (an integer for a number, as Python gives);
    ``round(x, k)`` keeps the type. Its derivative is zero where it exists."""
    if kwargs or not 1 <= len(args) <= 2:
        raise UnsupportedError("round() takes a number and a digit count", b.loc(node))
    x = args[0]
    if not isinstance(x, Sym):
        return round(*args)
    numpy_api.scalar_only("round", x, b.loc(node))
    rounded = symbolic.NUMPY[np.round](x, *args[1:])
    return rounded if len(args) == 2 else symbolic.record("cast", rounded, kind="i")


def _b_divmod(b, args, kwargs, node):
    a, c = args
    return a // c, a % c


def _b_callable(b, args, kwargs, node):
    return callable(args[0]) and not isinstance(args[0], Sym)


def _b_text(which):
    """``str(x)``, ``repr(x)``: a string while building; of a run-time value, a label
    (`RunTimeText`: printed or raised, never computed with)."""
    def f(b, args, kwargs, node):
        if any(isinstance(a, (Sym, RunTimeText, complex_pairs.Complex)) for a in args):
            return RunTimeText(ast.unparse(node))
        return which(*args, **kwargs)
    return f


def _b_getattr(b, args, kwargs, node):
    """``getattr(obj, "name", default)``: read as ``obj.name`` is (`Expressions.attribute`)."""
    obj, name = args[0], args[1]
    if not isinstance(name, str):
        raise UnsupportedError("getattr() with a name known while building", b.loc(node))
    if len(args) == 3 and not _b_hasattr(b, args[:2], {}, node):
        return args[2]
    return b.attribute(obj, name, node)


def _b_setattr(b, args, kwargs, node):
    """``setattr(self, f"c{i}", c)``: set as ``obj.name = value`` is (`set_attribute_of`)."""
    if not kwargs and len(args) == 3 and not isinstance(args[1], str):
        b.unroll_for_name(node)  # `setattr(self, f"c{i}", c)` in a short loop: unrolled
    if kwargs or len(args) != 3 or not isinstance(args[1], str):
        raise UnsupportedError("setattr() of an object, a name known while building and a "
                               "value (a loop's variable names one where the loop runs over "
                               "range() of at most 16 constant bounds, or over an argument of "
                               "at most 16 rows, then unrolled)", b.loc(node))
    b.set_attribute_of(args[0], args[1], args[2], node)


def _b_hasattr(b, args, kwargs, node):
    obj, name = args
    if isinstance(obj, Sym):
        return name in ("shape", "ndim", "size", "dtype", "T") or hasattr(np.empty(0), name)
    return hasattr(obj, name)


def _b_dict(b, args, kwargs, node):
    """``dict(a=1.0, b=x)``, ``dict(pairs)`` of keys known while building."""
    try:
        return dict(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise UnsupportedError(f"dict(): {e}", b.loc(node)) from None


def _b_set(b, args, kwargs, node):
    """``set()``, ``set(seq)`` of numbers or strings known while building: a frozenset the
    builder changes by rebinding (`build_containers`)."""
    if kwargs or len(args) > 1:
        raise UnsupportedError("set() takes one sequence", b.loc(node))
    return b.known_set(b.sequence_of(args[0], node) if args else (), node)


def _b_known(fn):
    """``chr(65)``, ``ord("A")``, ``hash(7)``: of values known while building, computed then
    (they carry no derivative); of a run-time value, refused."""
    def f(b, args, kwargs, node):
        if any(isinstance(a, (Sym, RunTimeText)) for a in (*args, *kwargs.values())):
            raise UnsupportedError(f"{fn.__name__}() of a value known only at run time (jitgrad "
                                   f"computes {fn.__name__}() while building, of constants)",
                                   b.loc(node))
        try:
            return fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            raise UnsupportedError(f"{fn.__name__}(): {e}", b.loc(node)) from None
    return f


def _b_type(b, args, kwargs, node):
    """``type(v)`` of a value known while building, or of a run-time array (np.ndarray); of
    a run-time number refused, as `isinstance` is where the gradient cannot tell the types
    apart (a Python float or np.float64)."""
    if kwargs or len(args) != 1:
        raise UnsupportedError("type() takes one value", b.loc(node))
    if isinstance(args[0], Sym) and args[0].ndim:  # an array (SALib's
        return np.ndarray  # `if type(values) != np.ndarray: raise TypeError(...)`)
    if isinstance(args[0], Sym):
        raise UnsupportedError("type() of a run-time value: the gradient does not tell a "
                               "Python float from a NumPy float64 (nor a list from a tuple); "
                               "test `isinstance(x, (float, np.floating))` or `np.ndim(x) == 0`",
                               b.loc(node))
    return type(args[0])


def _b_fsum(b, args, kwargs, node):
    """``math.fsum(seq)``: the sum of the items (its derivative is all ones), summed in
    float64 as ``sum`` is, not with fsum's exact rounding (the value may differ in its last
    bits)."""
    if kwargs or len(args) != 1:
        raise UnsupportedError("math.fsum() takes one sequence", b.loc(node))
    return _b_sum(b, (args[0], 0.0), {}, node)


def _b_factorial(b, args, kwargs, node):
    """``math.factorial(n)`` of an integer known while building: Python's; of one of the graph
    (a loop's counter): ``rint(gamma(n + 1))``, a float exact to 22! (int64 overflows past 20!)."""
    if kwargs or len(args) != 1:
        raise UnsupportedError("math.factorial() takes one integer", b.loc(node))
    n = args[0]
    if not isinstance(n, Sym):
        return math.factorial(n)
    if n.ndim or n.dtype.kind not in "iub":
        raise UnsupportedError("math.factorial of a number that is not an integer (use "
                               "scipy.special.gamma(x + 1))", b.loc(node))
    return symbolic.record("rint", symbolic.record("gamma", n + 1.0))


def _iterator_rest(b, it, what: str, node):
    """The items ``iter(seq)`` (or ``itertools.tee``) has not given yet, as a tuple, for a
    function that reads them all (``zip(a, b)``); the iterator is then used up: a later
    ``next`` of it is refused (Python's would depend on how far the reader went)."""
    if not isinstance(it.seq, tuple):
        raise UnsupportedError(f"{what} of an iterator over an array: pass the array itself",
                               b.loc(node))
    it.used_up = True
    return it.seq[it.taken:]


def _b_tee(b, args, kwargs, node):
    """``itertools.tee(seq, n=2)`` of a tuple or list known while building (or of an
    iterator over one, or over an array): n iterators over its items, each with its own
    position (ruptures' ``pairwise``: ``a, b = tee(seq); next(b, None); zip(a, b)``)."""
    if set(kwargs) - {"n"} or not 1 <= len(args) <= 2:
        raise UnsupportedError("itertools.tee(iterable, n) takes one iterable and a count",
                               b.loc(node))
    seq, n = args[0], (args[1] if len(args) == 2 else kwargs.get("n", 2))
    taken = 0
    if isinstance(seq, BuildIterator):
        if seq.used_up:
            raise UnsupportedError("itertools.tee() of an iterator another function has read",
                                   b.loc(node))
        seq, taken = seq.seq, seq.taken
    elif isinstance(seq, Iterator):
        seq = _rest(b, seq, "itertools.tee()", node)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise UnsupportedError("itertools.tee(iterable, n) with n a count known while building",
                               b.loc(node))
    if not (isinstance(seq, tuple) or isinstance(seq, Sym) and seq.ndim):
        raise UnsupportedError("itertools.tee() of a tuple, a list or an array", b.loc(node))
    return tuple(BuildIterator(seq, taken) for _ in range(n))


def _b_copy(deep):
    """``copy.copy(x)`` and ``copy.deepcopy(x)``: an array's copy (``np.copy``: a write into
    it reaches neither), a tuple, list or dict made again of its items' copies (deep) or of
    its items (shallow), a number or string itself. A user's object is refused (its copy
    would share nothing with it, which jitgrad does not follow)."""
    def f(b, args, kwargs, node):
        if kwargs or len(args) not in ((1, 2) if deep else (1,)):
            raise UnsupportedError(f"copy.{'deepcopy' if deep else 'copy'}() takes one value",
                                   b.loc(node))

        def again(x, top=True):
            if isinstance(x, Sym):
                return b.call(np.copy, (x,), {}, node) if x.ndim and (deep or top) else x
            if isinstance(x, (bool, int, float, complex, str, type(None))):
                return x
            if isinstance(x, tuple) and not hasattr(type(x), "_fields"):
                made = tuple(again(v, False) for v in x) if deep else tuple(x)
                return BuildList(made) if isinstance(x, BuildList) else made
            if isinstance(x, dict):
                return {k: again(v, False) for k, v in x.items()} if deep else dict(x)
            raise UnsupportedError(f"copy.{'deepcopy' if deep else 'copy'}() of a "
                                   f"{type(x).__name__}: of arrays, numbers, and lists, tuples "
                                   "and dicts of them", b.loc(node))
        return again(args[0])
    return f


def _b_iter(b, args, kwargs, node):
    if kwargs or len(args) != 1:
        raise UnsupportedError("iter() takes one sequence (a tuple, list or array)",
                               b.loc(node))
    seq = args[0]
    if isinstance(seq, dict):
        seq = tuple(seq)
    if not (isinstance(seq, (tuple, str)) or isinstance(seq, Sym) and seq.ndim):
        raise UnsupportedError("iter() of a tuple, a list or an array", b.loc(node))
    return BuildIterator(seq)


def _b_next(b, args, kwargs, node):
    """``next(g)`` of a generator (`_next_of_generator`) or of ``iter(seq)``
    (`_next_of_iterator`)."""
    if args and isinstance(args[0], Iterator):
        return _next_of_generator(b, args, kwargs, node)
    return _next_of_iterator(b, args, kwargs, node)


def _next_of_iterator(b, args, kwargs, node):
    """``next(it)``: the next item of ``iter(seq)`` (an array's: its next row, read as
    ``seq[k]`` is), the iterator named so that its position is rebound."""
    if kwargs or not 1 <= len(args) <= 2 or not isinstance(args[0], BuildIterator):
        raise UnsupportedError("next() of an iterator made by iter() in the function, or of a "
                               "generator (`g = gen(...)`, then `next(g)`)",
                               b.loc(node))
    it = args[0]
    k = it.taken
    if it.used_up:
        raise UnsupportedError("next() of an iterator a function has read (zip, list, ...): "
                               "which items remain depends on how far it read; take them "
                               "with next() first", b.loc(node))
    if isinstance(it.seq, Sym):
        if isinstance(it.seq.shape[0], int) and k >= it.seq.shape[0] or len(args) == 2:
            raise UnsupportedError("next() past the end of an array, or with a default: "
                                   "index the array instead", b.loc(node))
        item = b.getitem(it.seq, (("i",), [k]), node)
    elif k < len(it.seq):
        item = it.seq[k]
    elif len(args) == 2:
        return args[1]
    else:
        raise UnsupportedError("next() past the end of the sequence (StopIteration)",
                               b.loc(node))
    b.change(node.args[0], it, BuildIterator(it.seq, k + 1), node)
    return item


def _b_super(b, args, kwargs, node):
    """``super()`` in a method of the user's class (``super().__init__(H0, Om0)``): Python's
    own ``super`` object, of the class the method was written in (its ``__class__`` cell)
    and of the method's first argument, as Python binds them; ``super(C, self)`` as written.
    The parent's method it gives is then built inline as the user's code (`call_object`)."""
    if not args and not kwargs:
        fn, a = b.src.fn, b.src.node.args
        free = getattr(getattr(fn, "__code__", None), "co_freevars", ())
        first = (*a.posonlyargs, *a.args)
        if "__class__" in free and first and first[0].arg in b.env:
            args = (fn.__closure__[free.index("__class__")].cell_contents, b.env[first[0].arg])
    try:
        return super(*args, **kwargs)
    except (TypeError, RuntimeError) as e:
        raise UnsupportedError(f"super() in a method of a class, of its own class and "
                               f"object ({type(e).__name__}: {e})", b.loc(node)) from None


BUILTINS = {abs: _b_abs, sum: _b_sum, min: _b_minmax("min"), max: _b_minmax("max"), len: _b_len,
             float: _b_cast("float"), int: _b_cast("int"), bool: _b_cast("bool"),
             range: _b_range, pow: _b_pow, isinstance: _b_isinstance, slice: _b_slice,
             round: _b_round, divmod: _b_divmod, callable: _b_callable,
             str: _b_text(str), repr: _b_text(repr), getattr: _b_getattr, setattr: _b_setattr,
             hasattr: _b_hasattr, dict: _b_dict, set: _b_set, frozenset: _b_set,
             chr: _b_known(chr), ord: _b_known(ord), hash: _b_known(hash), type: _b_type,
             math.fsum: _b_fsum, math.factorial: _b_factorial, iter: _b_iter, next: _b_next, itertools.tee: _b_tee,
             copy.copy: _b_copy(False), copy.deepcopy: _b_copy(True),
             super: _b_super}
BUILTINS[functools.partial] = _b_partial
BUILTINS[is_zero] = _b_is_zero
BUILTINS[cholesky_fails] = _b_cholesky_fails
BUILTINS[zip_count] = _b_zip_count
BUILTINS[items_of] = _b_items_of
BUILTINS[range_items] = _b_range_items
BUILTINS[list_index] = _b_list_method("index")
BUILTINS[sorted_items] = _b_sorted_items
BUILTINS[joined_items] = lambda b, args, kwargs, node: joined_items(*args) if not any(
    isinstance(a, Sym) for a in args) else symbolic.NUMPY[np.concatenate](  # the rows of both
    tuple(symbolic.NUMPY[np.array](a) if isinstance(a, (list, tuple)) else a for a in args))
BUILTINS[reversed_items] = lambda b, args, kwargs, node: (  # `out.reverse()`: its rows reversed
    symbolic.NUMPY[np.flip](args[0], 0) if isinstance(args[0], Sym) else reversed_items(args[0]))
BUILTINS[list_count] = _b_list_method("count")
BUILTINS[entry_items] = lambda b, args, kwargs, node: (  # (an empty list of its own)
    entry_items(*args) if isinstance(args[0], dict) else BuildList())
BUILTINS[is_dict] = lambda b, args, kwargs, node: is_dict(*args)
BUILTINS[list_of] = lambda b, args, kwargs, node: (  # list(x) read as an array (`list_of`)
    symbolic.NUMPY[np.array](args[0]) if len(args) == 1 and isinstance(args[0], Sym)
    and args[0].ndim and _known_length(b, args[0]) is None else BUILTINS[list](b, args, kwargs,
                                                                                 node))
# functions of a library looked up by (module, name): importing the library would be a cost
BY_NAME = {("numba.misc.special", "literal_unroll"): _literal_unroll,
           **array_api.HANDLERS,  # SciPy's array_namespace and apply_where
           **autograd_flatten.HANDLERS,  # autograd.misc.flatten
           **vmap_calls.HANDLERS}  # jitgrad.vmap(f)(xs) in the function: a loop
BUILTINS[vmap_calls.mapped_call] = vmap_calls.build_mapped_call
BUILTINS[autograd_flatten.unflatten_like] = autograd_flatten.build_unflatten
BUILTINS.update(function_args.HANDLERS)  # np.piecewise, np.apply_over_axes
BUILTINS.update({fn: _b_sequence(fn.__name__) for fn in (sorted, list, tuple, reversed, zip,
                                                          enumerate)})


