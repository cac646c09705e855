"""Building statements: assignment and the rest but branches (`build_branches`), writes into
arrays (`build_writes`) and `try`/`with` (`build_try`).

Part of `build.Builder` (a mixin). Guarantees: an assignment binds each target as Python
does, a write into an array going through `build_writes`; each ``if`` branch is built from the
versions known before it, and the names it changes are merged after it, refusing a read of a
name that is undefined on some path. ``print(...)`` as a
statement records nothing (its arguments are not evaluated; a call among them that may write
into an array is refused).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import types as pytypes
import warnings

import numpy as np

from jitgrad.core.errors import JitgradError, UnsupportedError, instead
from jitgrad.core.ir import (
    Eqn,
    Var,
)
from jitgrad.frontend.build_ast import (
    BINOPS,
    BREAK,
    CONTINUE,
    RAISED,
    RETURNED,
    RETVAL,
    UNROLLED,
    BuildIterator,
    LocalFunction,
    RunTimeText,
    Undefined,
    base,
    is_atom_value,
    is_docstring,
    jumps,
)
from jitgrad.frontend.build_index import expand_ellipsis
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.build_writes import Writes
from jitgrad.lang import complex_pairs, symbolic
from jitgrad.lang.symbolic import Sym


class Statements(Writes):
    """The `Builder`'s statements: methods mixed into `build.Builder`."""

    # -- statements ----------------------------------------------------------------------

    def build_stmts(self, stmts) -> None:
        for k, stmt in enumerate(stmts):
            self.build_stmt(stmt)
            if self.env.get(RAISED):
                return  # the rest of the block is never reached
            if not jumps(stmt, loop_level=self.in_loop or self.in_unrolled_loop):
                continue
            flag = self.jump_flag()
            if flag is True:
                return  # the rest cannot run
            if flag is False:
                continue
            rest = stmts[k + 1:]
            if rest:
                self.gb.loc = self.src.loc(rest[0])
                self.build_if(symbolic.record("logical_not", flag),
                              functools.partial(self.build_stmts, rest), lambda: None, rest[0])
            return

    def jump_flag(self):
        names = [RETURNED] + ([BREAK, CONTINUE] if self.in_loop or self.in_unrolled_loop else [])
        flag = False
        for n in names:
            v = self.env.get(n, False)
            if v is True:
                return True
            if v is not False:
                flag = v if flag is False else symbolic.record("logical_or", flag, v)
        return flag

    def build_stmt(self, stmt) -> None:
        unrolled = getattr(stmt, "jitgrad_unrolled", None)  # (`desugar_lists`)
        if unrolled is not None and any(self.seeds.lists.get(self.list_key(m)) == UNROLLED
                                        for m in unrolled[0]):
            if unrolled[1] is not None:  # a list of arrays of other shapes: the loop unrolled
                self.build_stmts(unrolled[1])
            return  # (the statements of the list's array: not built)
        self.gb.loc = self.src.loc(stmt)
        method = getattr(self, "stmt_" + type(stmt).__name__)
        outer, self.current_stmt = getattr(self, "current_stmt", None), stmt
        try:  # (the statement a call is made from: `Containers.callers_holding`)
            method(stmt)
        finally:
            self.current_stmt = outer

    def stmt_Pass(self, stmt):
        pass

    def stmt_Expr(self, stmt):
        if is_docstring(stmt):
            return
        call = stmt.value
        if getattr(stmt, "jitgrad_rebinds", None):  # `out.reverse()` of a list made here
            self.assign(ast.copy_location(ast.Name(stmt.jitgrad_rebinds, ast.Store()), stmt),
                        self.expr(call))  # (`list_reads.ListReads.reverses_in_place`)
            return
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "fill" and isinstance(call.func.value, ast.Name)
                and len(call.args) == 1 and not call.keywords
                and isinstance(self.env.get(call.func.value.id), Sym)):
            # `x.fill(v)` is `x[...] = v`: every entry written in place
            target = ast.copy_location(ast.Subscript(value=call.func.value, slice=ast.Constant(
                Ellipsis), ctx=ast.Store()), call)
            self.assign(target, self.expr(call.args[0]))
            return
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "sort" and isinstance(call.func.value, ast.Name)
                and isinstance(self.env.get(call.func.value.id), Sym)):
            # `x.sort(axis)` is `x[...] = np.sort(x, axis)`: sorted in place
            array = self.env[call.func.value.id]
            args = [self.argument(a) for a in call.args]
            kwargs = {k.arg: self.argument(k.value) for k in call.keywords}
            try:
                value = symbolic.NUMPY[np.sort](array, *args, **kwargs)
            except TypeError as e:
                raise UnsupportedError(f"ndarray.sort: {e}", self.loc(call)) from None
            target = ast.copy_location(ast.Subscript(value=call.func.value, slice=ast.Constant(
                Ellipsis), ctx=ast.Store()), call)
            self.assign(target, value)
            return
        if isinstance(call, ast.Call) and self.ufunc_at(call):  # np.add.at(a, idx, v)
            return
        if isinstance(call, ast.Call) and (self.is_print(call.func) or self.is_warn(call.func)):
            self.check_print_arguments(call)
            # print(...) and warnings.warn(...) have no effect on a value: left out, their
            # arguments unevaluated (the compiled code reports no warnings, as Numba's)
            return
        self.expr(stmt.value)  # evaluated for its checks; dead code removal drops it

    def is_print(self, func) -> bool:
        """Whether the call's function ``func`` is the builtin print (not a name that shadows
        it), resolved without building anything."""
        if not isinstance(func, ast.Name) or func.id in self.env:
            return False
        return self.src.fn.__globals__.get(func.id, getattr(builtins, func.id, None)) is print

    def is_warn(self, func) -> bool:
        """Whether the call's function ``func`` is warnings.warn (``warnings.warn``, or
        ``warn`` imported from warnings), resolved without building anything."""
        attrs, node = [], func
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.env:
            return False
        obj = self.src.fn.__globals__.get(node.id)
        for attr in reversed(attrs):
            if not isinstance(obj, pytypes.ModuleType):
                return False
            obj = getattr(obj, attr, None)
        return obj is warnings.warn

    def check_print_arguments(self, call) -> None:
        """print(...) is left out of the gradient and its arguments are not evaluated: refuse
        a call among them that may write into an array (the user's function, an ``out=``, an
        in-place method), whose effect leaving it out would lose."""
        for sub in ast.walk(call):
            if sub is call or not isinstance(sub, ast.Call):
                continue
            func = sub.func
            writes = (any(k.arg == "out" for k in sub.keywords)
                      or (isinstance(func, ast.Attribute) and func.attr in _WRITING_METHODS))
            if writes or not self.names_a_pure_function(func):
                raise UnsupportedError(f"`{ast.unparse(sub)}` inside print(...); "
                                       f"{instead('call inside print')}", self.loc(sub))

    def names_a_pure_function(self, func) -> bool:
        """Whether the call's function ``func`` is an array's method (``h[i].sum``), or a
        NumPy, math or builtin function that writes into nothing (``np.linalg.norm``,
        ``float``), resolved without building anything."""
        attrs, node, through_index = [], func, False
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute):
                attrs.append(node.attr)
            else:
                through_index = True
            node = node.value
        if not isinstance(node, ast.Name):
            return False
        if node.id in self.env:
            return bool(attrs) and isinstance(self.env[node.id], Sym)  # an array's method
        if through_index:
            return False
        obj = self.src.fn.__globals__.get(node.id, getattr(builtins, node.id, None))
        for attr in reversed(attrs):
            if not isinstance(obj, pytypes.ModuleType):
                return False
            obj = getattr(obj, attr, None)
        if obj in _PURE_BUILTINS or isinstance(obj, np.ufunc):
            return True
        module = str(getattr(obj, "__module__", None) or "")
        return (callable(obj) and module.split(".")[0] in ("numpy", "math")
                and not module.startswith("numpy.random"))  # a draw moves the generator

    def stmt_Assert(self, stmt):
        """``assert cond, "message"``: a condition known while building (ranks, constants) is
        checked then and fails at its line; one on run-time values is checked by the compiled
        code, which raises AssertionError with the same message."""
        cond = self.condition(stmt.test)
        msg = self.constant_message(stmt.msg, stmt, "an assert")
        if not isinstance(cond, Sym):
            if not cond:
                raise JitgradError("AssertionError: the assertion fails for these argument "
                                   "types" + (f": {msg}" if msg is not None else ""),
                                   self.loc(stmt))
            return
        self.build_if(symbolic.record("logical_not", cond),
                      lambda: self.raise_now("AssertionError", msg, stmt), lambda: None, stmt)

    def stmt_Raise(self, stmt):
        """``raise ValueError("message")``: the compiled code raises the same exception where
        the user's code does (under a run-time condition); one that runs on every call for
        this signature is raised when the gradient is built."""
        exc = stmt.exc
        if exc is None or stmt.cause is not None:
            raise UnsupportedError("a bare `raise` and `raise ... from ...` are not supported: "
                                   "raise an exception with a constant message, "
                                   '`raise ValueError("...")`', self.loc(stmt))
        args, kind = [], exc
        if isinstance(exc, ast.Call):
            if exc.keywords or len(exc.args) > 1:
                raise UnsupportedError("an exception raised with more than one argument: "
                                       'give it one constant message, `raise ValueError("...")`',
                                       self.loc(exc))
            args, kind = exc.args, exc.func
        error = self.expr(kind)
        if not (isinstance(error, type) and issubclass(error, Exception)):
            raise UnsupportedError(f"raising `{ast.unparse(kind)}`: raise an exception class "
                                   "(ValueError, RuntimeError, or your own subclass of "
                                   "Exception)", self.loc(kind))
        msg = self.constant_message(args[0] if args else None, stmt, "a raise")
        if getattr(builtins, error.__name__, None) is not error:
            self.raise_own(error, msg, stmt)
            return
        self.raise_now(error.__name__, msg, stmt)

    def raise_own(self, error: type, msg, stmt) -> None:
        """``raise FinError("message")``, the user's own exception class: raised as itself
        where the code runs on every call, else by the compiled code as its nearest built-in
        base class (Exception, ValueError, ...) with the class's name before the message (the
        generated module reads no class of the user's)."""
        if self.gb.block is self.gb.root:
            err = error() if msg is None else error(msg)
            err.add_note(f"(raised while jitgrad built the gradient for these argument types)"
                         f"\n{self.loc(stmt)}:\n    {self.loc(stmt).line.strip()}")
            raise err
        base = next(c for c in error.__mro__ if getattr(builtins, c.__name__, None) is c)
        text = error.__name__ if msg is None else f"{error.__name__}: {msg}"
        self.raise_now(base.__name__, text, stmt)

    def constant_message(self, node, stmt, what):
        """The message of a raise or an assert, made while building: a string, an f-string or
        a sum of strings, of constants and values known while building (a string argument, a
        rank); None without one. The compiled code raises constant messages, as Numba does."""
        if node is None:
            return None
        if isinstance(node, ast.JoinedStr):
            return "".join(self.constant_message(v, stmt, what) for v in node.values)
        if isinstance(node, ast.FormattedValue):
            value = self.expr(node.value) if not isinstance(node.value, ast.Constant) \
                else node.value.value
            self.known_for_message(value, node.value, what)
            if isinstance(value, (Sym, RunTimeText)):  # known at run time: named, not formatted
                return "{" + ast.unparse(node.value) + "}"
            value = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda v: v)(value)
            spec = self.constant_message(node.format_spec, stmt, what) if node.format_spec \
                else ""
            return format(value, spec)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return (self.constant_message(node.left, stmt, what)
                    + self.constant_message(node.right, stmt, what))
        value = node.value if isinstance(node, ast.Constant) else self.expr(node)
        self.known_for_message(value, node, what)
        if isinstance(value, (Sym, RunTimeText)):
            return "{" + ast.unparse(node) + "}"
        return str(value)


    def stmt_Global(self, stmt):
        """``global g``: read where the function is parsed (`build.declared_global`)."""

    def set_global(self, target, value) -> None:
        """``g = value`` after ``global g``: the module's variable, set for the rest of this
        build (read by every function that reads ``g``; the module itself is not changed),
        where nothing between the differentiated function's start and here runs at run time
        (no branch or loop on run-time values, where the variable would need to be one). It
        must hold its module's value again when the function returns
        (`Builder.check_globals_restored`)."""
        if self.gb.block is not self.top_block:
            raise UnsupportedError(
                f"assignment to the global `{target.id}` under a branch or inside a loop that "
                "runs at run time (a module's variables are values of the build, not run-time "
                "variables): keep the value in a local variable, or pass it as an argument",
                self.loc(target))
        module = self.src.fn.__globals__
        self.globals_set[(id(module), target.id)] = (module, value)


    def stmt_Delete(self, stmt):
        """``del tmp``: the name is unbound (a later read is Python's NameError); ``del`` of
        an entry or an attribute is refused (it would change a value in place)."""
        for target in stmt.targets:
            if not isinstance(target, ast.Name):
                raise UnsupportedError("del of an entry or an attribute (jitgrad takes "
                                       "`del name`)", self.loc(target))
            if target.id not in self.env:
                raise JitgradError(f"NameError: name '{target.id}' is not defined",
                                   self.loc(target))
            self.env[target.id] = Undefined(f"`{target.id}` was deleted")

    def stmt_Import(self, stmt):
        """``import math``, ``import numpy as np`` inside the function: the module, bound."""
        for alias in stmt.names:
            module = self.import_module(alias.name, stmt)
            if alias.asname is None:  # `import a.b` binds `a`
                module = self.import_module(alias.name.split(".")[0], stmt)
            self.env[alias.asname or alias.name.split(".")[0]] = module

    def stmt_ImportFrom(self, stmt):
        """``from scipy.special import expit``: the names, bound as globals are read."""
        if stmt.level:
            raise UnsupportedError("a relative import inside the function: import at the top "
                                   "of the module", self.loc(stmt))
        module = self.import_module(stmt.module, stmt)
        for alias in stmt.names:
            if alias.name == "*" or not hasattr(module, alias.name):
                raise UnsupportedError(f"from {stmt.module} import {alias.name}: import names "
                                       "the module has", self.loc(stmt))
            name = alias.asname or alias.name
            self.env[name] = self.global_value(name, getattr(module, alias.name), stmt)

    def import_module(self, name, stmt):
        try:
            return importlib.import_module(name)
        except ImportError as e:
            raise JitgradError(f"ImportError: {e}", self.loc(stmt)) from None

    def known_for_message(self, value, node, what) -> None:
        if not isinstance(value, (Sym, RunTimeText, str, int, float, tuple)):
            raise UnsupportedError(
                f"the message of {what} formats a {type(value).__name__}: write a constant "
                "message (values known while building, such as a string argument or a rank, "
                "may be formatted into it)", self.loc(node))

    def raise_now(self, exc: str, msg, stmt) -> None:
        """Raise ``exc(msg)`` here: at once if this code runs on every call (the gradient cannot
        be built for these argument types), else in the compiled code; the rest of the block is
        not reached (`RAISED`)."""
        if self.gb.block is self.gb.root:
            error = getattr(builtins, exc)
            err = error() if msg is None else error(msg)
            err.add_note(f"(raised while jitgrad built the gradient for these argument types)"
                         f"\n{self.loc(stmt)}:\n    {self.loc(stmt).line.strip()}")
            raise err
        self.gb.block.stmts.append(Eqn("raise_error", [], [], {"exc": exc, "msg": msg},
                                       self.loc(stmt)))
        self.env[RAISED] = True


    def refuse_raise_on_every_path(self, env, node, what: str) -> None:
        """A raise that ends every path of a loop's iteration (or of a function called under a
        run-time condition) is refused: write it under the condition that leads to it."""
        if env.get(RAISED):
            raise UnsupportedError(f"a raise on every path of an {what} is not supported: "
                                   "raise under an `if` that tests the condition",
                                   self.loc(node))

    def stmt_Assign(self, stmt):
        made = getattr(stmt, "jitgrad_list", None)
        if made is not None and not getattr(stmt, "jitgrad_append", None):
            value = self.list_array(stmt, made)  # a list built in a loop: its array
        elif made is not None:
            value = self.list_item(stmt, made)  # (an item the array cannot hold: the list's
        else:  # loop unrolled, `ListArrays.list_item`)
            value = self.expr(stmt.value)
        if getattr(stmt, "jitgrad_append", None):  # a list's item, into its array
            self.check_list_item(stmt.jitgrad_append, value, stmt)
        if getattr(stmt, "jitgrad_rows_of", None) is not None:  # `out = list(x)`, appended
            self.check_list_rows(value, stmt.jitgrad_rows_of)
        if getattr(stmt, "jitgrad_rows_write", False) and isinstance(value, tuple) and \
                not value:
            return  # (`out = list(x)` of an empty list: no rows to write first)
        for target in stmt.targets:
            self.assign(target, value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.assign(stmt.target, self.expr(stmt.value))

    def stmt_AugAssign(self, stmt):
        op = BINOPS.get(type(stmt.op))
        if op is None:
            raise UnsupportedError(f"the operator {type(stmt.op).__name__}=", self.loc(stmt))
        if isinstance(stmt.target, ast.Name):
            current = self.lookup(stmt.target.id, stmt.target)
            if stmt.target.id in self.global_names and isinstance(current, Sym) and \
                    current.ndim:
                raise UnsupportedError(f"augmented assignment to the global array "
                                       f"`{stmt.target.id}` (NumPy changes it in place, for "
                                       f"every holder): write `{stmt.target.id} = "
                                       f"{stmt.target.id} + ...`", self.loc(stmt.target))
            value = self.apply_op(op, current, self.expr(stmt.value), stmt)
            if isinstance(current, Sym) and current.ndim:  # NumPy updates an array in place:
                full = ((":",) * current.ndim, [])  # every alias of it sees the new values
                self.write(stmt.target.id, stmt.target, current, full, value)
            else:
                self.assign(stmt.target, value)
        elif isinstance(stmt.target, ast.Subscript):
            if _is_flat(stmt.target):  # x.flat[::n + 1] += c: x at those flat positions
                target, array, index = self.flat_target(stmt.target)
                current = self.getitem(array, index, target)
                self.setitem(target, array, index,
                             self.apply_op(op, current, self.expr(stmt.value), stmt))
                return
            array = self.expr(stmt.target.value)
            if isinstance(array, (tuple, dict)):  # a list or dict known while building
                self.container_setitem(stmt.target, array, self.expr(stmt.value), op)
                return
            if self.write_along_axis(stmt.target, lambda: self.expr(stmt.value), stmt.op):
                return  # x[i, idx] += v: through a view, as NumPy writes it
            index = self.index(stmt.target.slice, store=True)
            current = self.getitem(array, index, stmt.target)
            value = self.apply_op(op, current, self.expr(stmt.value), stmt)
            self.setitem(stmt.target, array, index, value)
        elif isinstance(stmt.target, ast.Attribute):
            current = self.expr(stmt.target)
            if isinstance(current, Sym) and current.ndim:  # NumPy: updated in place
                self.augment_attribute(stmt, op, current)
                return
            if not isinstance(current, (Sym, int, float)):
                raise UnsupportedError("augmented assignment to an attribute that is not a "
                                       "number or an array: write `obj.attr = obj.attr + ...`",
                                       self.loc(stmt.target))
            self.set_attribute(stmt.target, self.apply_op(op, current, self.expr(stmt.value),
                                                          stmt))
        else:
            raise UnsupportedError("augmented assignment to this target", self.loc(stmt.target))

    def iterated_object(self, obj, node) -> tuple:
        """The items of the user's object ``obj`` as its class's ``__iter__`` gives them
        (``return iter((self.mu, self.sigma))``), built as a call of it: a tuple of a length
        known while building, an array (unpacked as its rows), or the refusal."""
        items = self.call(obj.__iter__, (), {}, node)
        if isinstance(items, BuildIterator) and not items.used_up:  # iter((a, b))
            if isinstance(items.seq, Sym) and items.taken == 0:
                return items.seq  # iter(self.values) of an array: its rows
            if isinstance(items.seq, (tuple, list)):
                items = items.seq[items.taken:]
        if isinstance(items, (tuple, list)):
            return tuple(items)
        raise UnsupportedError(f"unpacking a {type(obj).__name__}: its __iter__ gives "
                               "items whose number is known at run time only", self.loc(node))

    def augment_attribute(self, stmt, op, current) -> None:
        """``obj.attr += v`` where the attribute is an array: NumPy updates it in place, so
        every holder of the array sees the new values. An array of the graph is written as
        ``name += v`` is (`write_version`: older values held elsewhere are out of date, and
        refused where read); an array NumPy made while building becomes one first
        (`own_array_attribute`)."""
        target = stmt.target
        obj = self.expr(target.value)
        rhs = self.expr(stmt.value)
        if is_user_object(obj) and isinstance(vars(obj).get(target.attr), np.ndarray):
            current = self.own_array_attribute(obj, target.attr, target)
        value = self.apply_op(op, current, rhs, stmt)
        if isinstance(value, Sym) and value.type.kind == "f" and current.type.kind != "f":
            raise UnsupportedError("adding floats into an integer array in place (NumPy "
                                   "refuses the cast): write `obj.attr = obj.attr + ...`",
                                   self.loc(target))
        if not (isinstance(current.atom, Var) and current.atom not in self.gb.view_of):
            raise UnsupportedError("augmented assignment to an attribute that is a view of "
                                   "an array: write `obj.attr = obj.attr + ...`",
                                   self.loc(target))
        spec, idx = expand_ellipsis(((":",) * current.ndim, []), current)
        self.set_attribute(target, self.write_version(ast.unparse(target), target,
                                                      current.atom, spec, idx, value))

    def stmt_Return(self, stmt):
        value = self.expr(stmt.value) if stmt.value is not None else None
        if self.in_loop and not is_atom_value(value):
            raise UnsupportedError("a return inside a loop must return a number",
                                   self.loc(stmt))
        if self.in_loop and isinstance(value, Sym) and value.ndim:
            raise UnsupportedError("a return inside a loop must return a scalar (return an "
                                   "array from a branch, or after the loop)", self.loc(stmt))
        if value is None:
            raise UnsupportedError("a return without a value inside a loop or branch",
                                   self.loc(stmt))
        listed = getattr(stmt, "jitgrad_returns_list", None)  # a list built by appending
        if listed is not None:
            self.return_list(listed, stmt)
        for at, listed in getattr(stmt, "jitgrad_returns_lists", {}).items():
            self.return_list(listed, stmt, at)  # (an item of the tuple returned)
        self.env[RETVAL] = value
        self.env[RETURNED] = True

    def return_list(self, name, node, at=None):
        """Returning the list ``name`` built by appending (the array of its items; ``at``:
        its position in the tuple returned): to a caller, which reads it as this function
        would (`desugar_lists.returned_list`); from the function differentiated, refused (its
        value would be an array, not a list)."""
        if self.caller is None:
            raise UnsupportedError(f"the list `{name}` returned (the list is an array in the "
                                   f"gradient) is not supported; {instead('list')}",
                                   self.loc(node))
        held = getattr(self, "returns_list", None)
        self.returns_list = True if at is None or held is True else {*(held or ()), at}

    def stmt_Break(self, stmt):
        self.env[BREAK] = True

    def stmt_Continue(self, stmt):
        self.env[CONTINUE] = True

    def stmt_LocalDef(self, stmt):
        node = stmt.node
        defaults = [self.expr(d) for d in node.args.defaults]  # then keyword-only ones
        defaults += [self.expr(d) for d in node.args.kw_defaults if d is not None]
        value = LocalFunction(self.src.local(node), self, defaults)
        for d in reversed(node.decorator_list):  # `@deco def g` is `g = deco(g)`
            head = self.expr(d.func if isinstance(d, ast.Call) else d)
            if str(getattr(head, "__module__", None) or "").split(".")[0] == "numba":
                continue  # @numba.njit(...): the function compiled as it reads (as at module
            deco = self.expr(d) if isinstance(d, ast.Call) else head  # level)
            if isinstance(deco, functools.partial) and deco.func is functools.update_wrapper:
                continue  # @functools.wraps(f): the function itself (f's name and docstring)
            value = self.call(deco, (value,), {}, d)
        self.env[node.name] = value

    def stmt_If(self, stmt):
        cond = self.condition(stmt.test)
        self.gb.loc = self.src.loc(stmt)
        self.build_if(cond, lambda: self.build_stmts(stmt.body),
                      lambda: self.build_stmts(stmt.orelse), stmt)

    # -- assignment ----------------------------------------------------------------------

    def assign(self, target, value) -> None:
        if isinstance(target, ast.Name) and target.id in self.global_names:
            self.set_global(target, value)
        elif isinstance(target, ast.Name):
            self.env[target.id] = self.named(value, target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            star = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if is_user_object(value) and callable(getattr(type(value), "__iter__", None)):
                value = self.iterated_object(value, target)  # mu, sigma = rating
            if isinstance(value, complex_pairs.Complex) and value.ndim and not star:
                parts = [complex_pairs.full(p, q) for p, q in ((value.re, value.im),
                                                               (value.im, value.re))]
                if all(isinstance(p, Sym) for p in parts):  # B, C = M @ v, complex: each
                    value = tuple(complex_pairs.Complex(r, i) for r, i in zip(  # row's parts
                        *(self.unpack_rows(p, len(target.elts), target) for p in parts)))
            if isinstance(value, Sym) and not star:
                value = self.unpack_rows(value, len(target.elts), target)
            elif isinstance(value, Sym) and value.ndim and isinstance(value.shape[0], int):
                value = self.unpack_rows(value, value.shape[0], target)
            if isinstance(value, dict):
                value = tuple(value)
            n = len(target.elts) - len(star)
            if not isinstance(value, (tuple, list)) or len(star) > 1 or (
                    len(value) != n if not star else len(value) < n):
                raise UnsupportedError("unpacking needs a tuple of the same length (or, with "
                                       "one `*rest`, at least as long), known while building",
                                       self.loc(target))
            if star:  # first, *rest = t: rest is a tuple of what is left over
                k = star[0]
                tail = len(target.elts) - k - 1
                value = (*value[:k], tuple(value[k:len(value) - tail]),
                         *value[len(value) - tail:])
            for t, v in zip(target.elts, value):
                self.assign(t.value if isinstance(t, ast.Starred) else t, v)
        elif isinstance(target, ast.Subscript) and _is_flat(target):
            target, array, index = self.flat_target(target)  # x.flat[k] = v
            self.setitem(target, array, index, value)
        elif isinstance(target, ast.Subscript):
            if self.write_einsum_view(target, value):
                return  # np.einsum("ijj->ij", F)[...] = v: F's diagonal
            array = self.expr(target.value)
            if isinstance(array, (tuple, dict)):  # a list or dict known while building
                self.container_setitem(target, array, value)
                return
            if not self.write_along_axis(target, lambda: value):  # (x[i, idx] = v: a view)
                self.setitem(target, array, self.index(target.slice, store=True), value)
        elif isinstance(target, ast.Attribute):
            self.set_attribute(target, value)
        else:
            raise UnsupportedError(f"assignment to {type(target).__name__}", self.loc(target))

    def flat_target(self, target):
        """``x.flat[index]`` written: ``x`` (named, or a view of a named array) at the flat
        positions the index names (an integer, or a slice of them from the start with a
        positive step), as rows (a vector) or (row, column) pairs (a matrix). Returns the
        target as ``x[...]``, ``x`` and the index."""
        base = target.value.value
        array = self.expr(base)
        loc = self.loc(target)
        if not isinstance(array, Sym) or array.ndim not in (1, 2):
            raise UnsupportedError("writing through .flat of an array that is not a vector or "
                                   "a matrix", loc)
        key = target.slice
        if isinstance(key, ast.Slice):
            parts = [None if p is None else self.expr(p)
                     for p in (key.lower, key.upper, key.step)]
            for p, node in zip(parts, (key.lower, key.upper, key.step)):
                if p is not None:
                    self.check_int(p, node)
                    if not isinstance(p, Sym) and p < (1 if node is key.step else 0):
                        raise UnsupportedError("writing through .flat with a negative bound or "
                                               "a step below 1", loc)
            start, stop, step = parts
            size = array.size
            stop = size if stop is None else symbolic.NUMPY[np.minimum](stop, size)
            positions = symbolic.NUMPY[np.arange](0 if start is None else start, stop,
                                                  1 if step is None else step)
        else:
            positions = self.expr(key)
            self.check_int(positions, key)
            if not isinstance(positions, Sym) and positions < 0:
                raise UnsupportedError("writing through .flat at a negative position", loc)
            positions = symbolic.NUMPY[np.array]([positions])
        new = ast.copy_location(ast.Subscript(value=base, slice=key, ctx=ast.Store()), target)
        if array.ndim == 1:
            return new, array, (("a",), [positions])
        columns = array.shape[1]
        return new, array, (("p",), [positions // columns, positions % columns])

    def unpack_rows(self, array, k, target) -> list:
        """``a, b, c = x``: x's rows, after a run time check that it has k of them."""
        if array.ndim == 0:
            raise UnsupportedError("unpacking a number", self.loc(target))
        k_checked = symbolic.record("unpack_count", array.shape[0], k)
        first = k_checked - k  # 0, read from the check so that the check stays
        return [symbolic.record("getitem", array, first + j, index_spec=("i",)) for j in range(k)]

    def named(self, value, name: str):
        """Give the variable the last equation defined the user's name, for readable code."""
        if isinstance(value, Sym) and isinstance(value.atom, Var):
            stmts = self.gb.block.stmts
            var = value.atom
            if (stmts and isinstance(stmts[-1], Eqn) and stmts[-1].outs and stmts[-1].outs[0] is var
                    and var.name.startswith("_t") and stmts[-1].prim != "setitem"):
                self.gb.namer.used.discard(var.name)
                var.name = self.gb.namer.fresh(base(name))
        return value


_WRITING_METHODS = frozenset({"fill", "sort", "put", "partition", "resize", "itemset",
                              "setfield", "copyto", "place", "putmask", "fill_diagonal", "at"})
# Builtins that may stand inside print(...)'s arguments (they write into nothing).
_PURE_BUILTINS = frozenset({abs, len, min, max, sum, round, float, int, str, repr, bool, format,
                            type, range, tuple, list, sorted, any, all, zip, enumerate})


def _is_flat(target: ast.Subscript) -> bool:
    """``x.flat[...]`` as a target."""
    return isinstance(target.value, ast.Attribute) and target.value.attr == "flat"
