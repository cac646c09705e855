"""Building ``try`` and ``with``: statements that run code on the way out of a body or when it
raises.

Part of `build.Builder` (a mixin). Guarantees: a ``try`` whose body cannot raise (the fence
checked) is its body, ``else`` and ``finally``; one the fence marked as guarded decides at run
time, statement by statement, where Python would take its handler (a math domain error, a
Cholesky factorisation that fails) and takes it there, or raises as Python does; a ``with``
runs the user's ``__enter__``/``__exit__`` around its body (an exit that may swallow an
exception is refused), and managers that only change how warnings are reported are skipped.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import operator
import sys
import types as pytypes
import warnings

import numpy as np

from jitgrad.core.errors import RaisesInPython, UnsupportedError
from jitgrad.core.ir import Eqn, walk
from jitgrad.frontend.build_ast import RAISED, jumps
from jitgrad.frontend.build_builtins import cholesky_fails, is_zero
from jitgrad.frontend.build_values import is_user_object
from jitgrad.frontend.parse import MATH_DOMAINS, guards
from jitgrad.lang.symbolic import Sym

# context managers that change how floating-point warnings are reported, never a value
_QUIET_CONTEXTS = (np.errstate, warnings.catch_warnings, contextlib.nullcontext)


def _is_objmode(builder, item) -> bool:
    """``with numba.objmode(k="int64"):``: its body is Python that Numba runs in the
    interpreter; jitgrad reads it as any other code (what it cannot build is refused there),
    so its values carry their derivatives. The type annotations are not needed."""
    call = item.context_expr
    if not (isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))
            and item.optional_vars is None):
        return False
    manager = builder.expr(call.func)
    kind = type(manager)
    return (kind.__module__, kind.__qualname__) == ("numba.core.withcontexts",
                                                     "_ObjModeContextType")


_NO_HANDLER = ("division by zero inside a try (jitgrad does not take the handler for a "
               "division: Python raises only for its own numbers, not for NumPy numbers)")


def _catches(caught, error: type) -> bool:
    """Whether a handler of the class or tuple of classes ``caught`` catches ``error``."""
    caught = caught if isinstance(caught, tuple) else (caught,)
    return any(isinstance(k, type) and issubclass(error, k) for k in caught)


class Handlers:
    """`build.Builder`'s ``try`` and ``with`` (see the module)."""

    def stmt_With(self, stmt):
        """``with np.errstate(...):``, ``with warnings.catch_warnings():``: context managers
        that change only how floating-point warnings are reported: the body is built as if
        they were not there (the compiled code reports none). ``with numba.objmode(...)``
        too (`_is_objmode`). An object of the user's class: its ``__enter__`` and
        ``__exit__`` built inline around the body (`enter_manager`)."""
        exits = []
        for item in stmt.items:
            if _is_objmode(self, item):
                continue
            manager = self.expr(item.context_expr)
            if is_user_object(manager) and str(type(manager).__module__).split(".")[0] \
                    not in sys.stdlib_module_names:  # (the user's class, not contextlib's)
                exits.append((*self.enter_manager(manager, item), item))
                continue
            if not isinstance(manager, _QUIET_CONTEXTS) or item.optional_vars is not None:
                raise UnsupportedError(
                    "a with statement (jitgrad takes `with np.errstate(...)`, "
                    "`warnings.catch_warnings()`, `contextlib.nullcontext()`, which do not "
                    "change values, and objects of your own classes with __enter__ and "
                    "__exit__)", self.loc(stmt))
        self.build_stmts(stmt.body)
        for exit_, manager, item in reversed(exits):
            self.exit_manager(exit_, manager, item)

    def enter_manager(self, manager, item) -> list:
        """``with m:`` of the user's object: ``m.__enter__()`` built inline, its value bound
        to the ``as`` target; returns the exit to build after the body (`exit_manager`)."""
        cls = type(manager)
        enter, exit_ = getattr(cls, "__enter__", None), getattr(cls, "__exit__", None)
        if not (isinstance(enter, pytypes.FunctionType)
                and isinstance(exit_, pytypes.FunctionType)):
            raise UnsupportedError(
                "a with statement (jitgrad takes `with np.errstate(...)`, "
                "`warnings.catch_warnings()`, `contextlib.nullcontext()`, which do not change "
                "values, and objects of your own classes with __enter__ and __exit__)",
                self.loc(item.context_expr))
        entered = self.inline(enter, (manager,), {}, item.context_expr)
        if item.optional_vars is not None:
            self.assign(item.optional_vars, entered)
        return [exit_, manager]

    def exit_manager(self, exit_, manager, item) -> None:
        """``m.__exit__(None, None, None)`` after the body (also after a ``return`` in it, as
        Python runs it): an exit that would swallow an exception (returns a true value) is
        refused, since the compiled code raises where Python would go on."""
        swallowed = self.inline(exit_, (manager, None, None, None), {}, item.context_expr)
        if swallowed is not None and swallowed is not False:
            raise UnsupportedError(
                f"{type(manager).__name__}.__exit__ returns {swallowed!r}: a context manager "
                "that may swallow an exception is not supported (the compiled gradient does "
                "not catch exceptions); return None from __exit__", self.loc(item.context_expr))

    def stmt_Try(self, stmt):
        """A try whose body cannot raise (the fence checked): its body, ``else`` and
        ``finally`` run in order; its handlers never would. One the fence marked
        ``jitgrad_guarded`` is checked at run time (`guarded_try`); one it refused
        (``jitgrad_refusal``) is decided while building where its handlers catch only what
        the types of the values decide (`decided_try`), and refused otherwise, here."""
        if getattr(stmt, "jitgrad_guarded", False):
            self.guarded_try(stmt)
            return
        if getattr(stmt, "jitgrad_zero_checked", False):
            self.zero_checked_try(stmt)
            return
        refusal = getattr(stmt, "jitgrad_refusal", None)
        if refusal is not None:
            self.decided_try(stmt, UnsupportedError(refusal.message, refusal.loc))
            return
        if self.decided_kinds(stmt) is not None and not any(jumps(s) for s in stmt.body):
            # (the fence lets ``len(x)`` through, whose TypeError for a number such a handler
            # catches: decided by the types as above, the same as a plain body where none does)
            self.decided_try(stmt, UnsupportedError(
                "a try whose body raises under a condition known only at run time",
                self.loc(stmt)))
            return
        try:
            self.build_stmts(stmt.body + stmt.orelse + stmt.finalbody)
        except RaisesInPython as e:  # (a handler that names it, or under a run-time condition)
            if not any(h.type is None or _catches(self.expr(h.type), e.error)
                       for h in stmt.handlers):
                raise  # (nothing catches it: Python's error)
            raise UnsupportedError(
                "try/except is supported only around code that cannot raise (the compiled "
                f"gradient does not catch exceptions); here {e.message} raises "
                f"{e.error.__name__} at line {e.loc.lineno if e.loc else '?'}: test the "
                "condition with `if` instead, or move the call out of the try",
                self.loc(stmt)) from None

    def zero_checked_try(self, stmt):
        """A try whose handlers catch ZeroDivisionError only, around code that may raise
        otherwise (a call of the user's function: ``1 / np.sqrt(info(theta))``): its body,
        ``else`` and ``finally`` run; what else the body raises, Python raises too. Each
        division (``/``, ``//``, ``%``) of two numbers built meanwhile, here or in the
        functions it calls, whose divisor is not a NumPy function's value, checks at run time
        that the divisor is not zero and raises ZeroDivisionError there (`zero_check`): the
        compiled code does not take the handler, and never gives a value where Python
        would have taken it (NumPy's numbers, which give inf, raise too: a run-time refusal,
        not a wrong value)."""
        self.zero_checks += 1
        try:
            self.build_stmts(stmt.body)
        finally:
            self.zero_checks -= 1
        self.build_stmts(stmt.orelse + stmt.finalbody)

    def zero_check(self, op, a, b, node) -> None:
        """Inside `zero_checked_try` (of this function or a caller): the run-time test that
        ``a op b``, a division of two numbers, does not divide by zero."""
        if op not in (operator.truediv, operator.floordiv, operator.mod) or any(
                isinstance(v, Sym) and v.ndim or not isinstance(v, (Sym, int, float))
                for v in (a, b)) or not isinstance(b, Sym):
            return
        right = getattr(node, "right", None)
        builder = self
        while builder is not None and not builder.zero_checks:
            builder = builder.caller
        if builder is None or (isinstance(right, ast.Call) and _numpy_call(self, right)):
            return
        self.build_written(f"if JGZ(JGD):\n    raise ZeroDivisionError({_NO_HANDLER!r})\n",
                           node, {"JGZ": "is_zero", "JGD": "divisor"},
                           {"JGZ": is_zero, "JGD": b})

    def decided_kinds(self, stmt) -> list | None:
        """The exception classes each handler of ``stmt`` catches, where all are TypeError,
        AttributeError or NameError (or their subclasses) and no handler names the exception:
        what the types of the values decide (`decided_try`); None otherwise."""
        kinds = []
        for h in stmt.handlers:
            caught = self.expr(h.type) if h.type is not None else None
            caught = caught if isinstance(caught, tuple) else (caught,)
            if h.name is not None or not all(isinstance(k, type) and issubclass(
                    k, (TypeError, AttributeError, NameError)) for k in caught):
                return None
            kinds.append(caught)
        return kinds

    def decided_try(self, stmt, refusal):
        """A try whose handlers catch only TypeError, AttributeError or NameError (and their
        subclasses): what Python raises for the types of the values, whatever the values
        are, which are known while building (``len(y0)`` of a number raises TypeError, of an
        array does not). The body is built; where its build meets such an error on its own
        path (not under a branch or in a loop that runs at run time: `RaisesInPython`), the
        statements before it run and the handler that catches it is built instead, as Python
        runs them on every call with these types (a statement that wrote into an array before
        it raised is refused); where the body builds, it runs, then ``else``. A body with a
        ``return``, ``break`` or ``continue`` is refused. A body that raises one of them
        at run time (a ``raise TypeError`` under a run-time condition) is refused, as is a
        handler that names the exception (``except TypeError as e``) or catches anything
        else: ``refusal``, the fence's message."""
        kinds = self.decided_kinds(stmt)
        if kinds is None or any(jumps(s) for s in stmt.body):  # (a return, break or continue in the body)
            raise refusal
        for s in stmt.body:  # as Python runs it: the statements before the one that raises
            memory, attributes = self.gb.memory_state(), self.attribute_state()
            try:
                block, env = self.in_block(lambda s=s: self.build_stmts([s]), self.env)
            except RaisesInPython as e:
                handler = next((h for h, caught in zip(stmt.handlers, kinds)
                                if issubclass(e.error, caught)), None)
                if handler is None or e.nested != 1:  # uncaught, or under a run-time condition
                    raise
                changed = self.gb.writes != memory[1] or self.changed_attributes(attributes)
                self.gb.restore_memory_state(memory)
                self.restore_attributes(attributes)
                if changed:  # part of the statement ran (a write) before it raised
                    raise UnsupportedError(
                        f"{refusal.message}. Built for these argument types, the statement "
                        f"at line {e.loc.lineno if e.loc else '?'} raises {e.error.__name__} "
                        "after writing into an array or an attribute, which jitgrad does not "
                        "split: raise before the write", refusal.loc) from None
                self.build_stmts(handler.body + stmt.finalbody)
                return
            except UnsupportedError as e:  # (Python might take the handler there: the fence's)
                raise UnsupportedError(
                    f"{refusal.message}. Built for these argument types, its body is refused "
                    f"at line {e.loc.lineno if e.loc else '?'}: {e.message}",
                    refusal.loc) from None
            for eqn in walk(block):
                if isinstance(eqn, Eqn) and eqn.prim == "raise_error" and any(
                        issubclass(getattr(builtins, eqn.params["exc"], Exception), caught)
                        for caught in kinds):
                    raise refusal
            self.gb.block.stmts.extend(block.stmts)
            self.env = env
            if env.get(RAISED):
                return
        self.build_stmts(stmt.orelse + stmt.finalbody)

    def guarded_try(self, stmt):
        """A try around assignments where only divisions and `math`'s domain errors may raise
        (`parse.guards`), statement by statement as Python runs it:

        * ``math.sqrt(v)`` and the others of `parse.MATH_DOMAINS`: where the handler catches
          ValueError, a statement whose test holds (``v < 0.0``) does not run, nor those
          after it, and the handler runs instead: Python's values exactly (and the handler's
          derivative there); where no handler catches it, the compiled code raises
          ValueError as Python does.
        * ``np.linalg.cholesky(a)``, ``scipy.linalg.cholesky(a)``: where the handler catches
          LinAlgError, the run-time test that the same LAPACK factorisation of ``a`` fails
          (``cholesky_fails``) takes the handler, as Python does; where none catches it, the
          compiled factorisation raises LinAlgError itself.
        * a division (``/``, ``//``, ``%``) by a number that is zero at run time raises
          ZeroDivisionError in the compiled code, handler or not: Python raises it for its
          own numbers and not for NumPy's (which give inf or nan), and the build does not
          know which the divisor is. So the handler is never taken for a division, and no
          call gives a value Python would not (dividing by an array never raises, as in
          NumPy).
        """
        def catches(handler, error) -> bool:
            if handler.type is None:
                return True
            kinds = self.expr(handler.type)
            kinds = kinds if isinstance(kinds, tuple) else (kinds,)
            return any(isinstance(k, type) and issubclass(error, k) for k in kinds)

        taken = set()
        lines, parts, depth = [], {}, 0
        for k, s in enumerate(stmt.body):
            pad = "    " * depth
            tests = []
            for kind, arg in guards(self.src, s):
                v = ast.unparse(arg)
                if kind == "zero":
                    lines += [f"{pad}if JGZ({v}):", f"{pad}    raise ZeroDivisionError({_NO_HANDLER!r})"]
                    continue
                if kind == "cholesky":
                    handler = next((h for h in stmt.handlers
                                    if catches(h, np.linalg.LinAlgError)), None)
                    if handler is not None:
                        taken.add(id(handler))
                        tests.append(f"JGC({v})")
                    continue
                test = MATH_DOMAINS[kind].format(v=f"({v})")
                handler = next((h for h in stmt.handlers if catches(h, ValueError)), None)
                if handler is None:
                    lines += [f"{pad}if {test}:", f"{pad}    raise ValueError('math domain error')"]
                else:
                    taken.add(id(handler))
                    tests.append(test)
            parts[f"JGS{k}"] = [s]
            if tests:  # the handler where a test holds, else this statement and the rest
                lines += [f"{pad}if {' or '.join(tests)}:", f"{pad}    JGH", f"{pad}else:"]
                depth += 1
                pad += "    "
            lines.append(f"{pad}JGS{k}")
        if len(taken) > 1:
            raise UnsupportedError("a try whose errors go to different handlers: catch them "
                                   "in one `except`", self.loc(stmt))
        handler = next((h for h in stmt.handlers if id(h) in taken), None)
        if handler is not None:
            parts["JGH"] = handler.body
        if stmt.orelse:
            parts["JGE"] = stmt.orelse
            lines.append("    " * depth + "JGE")
        if stmt.finalbody:
            parts["JGF"] = stmt.finalbody
            lines.append("JGF")
        self.build_written("\n".join(lines) + "\n", stmt,
                           {"JGZ": "is_zero", "JGC": "cholesky_fails"},
                           {"JGZ": is_zero, "JGC": cholesky_fails}, parts=parts)


def _numpy_call(builder, call) -> bool:
    """Whether ``call`` calls a function of NumPy's (its value a NumPy number, which Python
    divides by without raising)."""
    try:
        fn = builder.expr(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) \
            else None
    except Exception:  # noqa: BLE001 (an attribute of a run-time value: not NumPy's)
        return False
    module = str(getattr(fn, "__module__", "") or "")
    return isinstance(fn, np.ufunc) or module == "numpy" or module.startswith("numpy.")
