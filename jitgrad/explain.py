"""What a failed call of a gradient's compiled code tells the user (`raise_explained`).

Takes the exception a compiled entry raised, the specialisation that raised it (a
`specialisations.Compiled`: its generated source and file, the user's line behind each
generated line, its backend) and the arguments it was called with (as the entry takes them).
Guarantees: a missing package is raised as its one-line fix (`MissingDependencyError`); an
exception the user's own code raises (``raise``, a failed ``assert``) is raised as that code
raises it; anything else is a `JitgradError` (a `ShapeError` for a ValueError) at the user's
line behind the failing generated line, with that generated line named, and the original
exception chained. Compiled code raises without a line number: the generated source is then
run once more as plain Python on the same arguments (`_replay`) to find it. Nothing here runs
unless a call has already failed.
"""

from __future__ import annotations

import ast
import linecache
import os
import re

from jitgrad.core.errors import JitgradError, MissingDependencyError, ShapeError

_GEN_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def raise_explained(e: Exception, compiled, args):
    """Raise ``e`` explained. A missing package is an environment problem, not the user's
    code: its one line with the fix is raised without Numba's traceback chained to it."""
    missing = compiled.backend.missing_dependency(e)
    if missing is not None:
        raise MissingDependencyError(missing) from None
    if _raised_as_written(e, compiled):
        raise e.with_traceback(None)  # the user's own `raise`/`assert`: as their code raises it
    raise _explain(e, compiled, args) from e


def _generated_line(e: BaseException, path: str) -> int | None:
    """The last line of the generated file named by ``e``'s message or traceback."""
    path = os.path.abspath(path)
    found = None
    for p, line in _GEN_LINE.findall(str(e)):
        if os.path.abspath(p) == path:
            found = int(line)
    tb = e.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            found = tb.tb_lineno
        tb = tb.tb_next
    return found


def _replay(compiled, args) -> BaseException | None:
    """Run the generated source as plain Python on the same arguments, to learn which line
    fails (compiled code raises without one). Only called after a failure."""
    namespace: dict = {"__name__": "jitgrad_replay"}
    exec(compile(compiled.source, compiled.path, "exec"), namespace)  # noqa: S102 - our code
    try:
        namespace[compiled.entry_name](*args)
    except Exception as replayed:  # noqa: BLE001 - it is the error we are explaining
        return replayed
    return None


def _raised_as_written(e: Exception, compiled) -> bool:
    """Whether ``e`` is an exception the user's code raises (a ``raise`` or a failed
    ``assert``, which the generated code writes as ``raise ValueError('...')``)."""
    name, msg = type(e).__name__, str(e)
    line = f"raise {name}({msg!r})" if msg else f"raise {name}"
    return line in {text.strip() for text in compiled.source.splitlines()}


def _handled_at(loc) -> int | None:
    """The line of the ``except`` that would catch an error raised at the user's ``loc``, when
    ``loc`` is in the body of a ``try`` (the fence lets a try run its body where the compiled
    code raises too, as ``np.linalg`` does), else None."""
    if loc is None or not getattr(loc, "filename", None):
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(loc.filename)))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and node.handlers and node.body and (
                node.body[0].lineno <= loc.lineno <= node.body[-1].end_lineno):
            return node.handlers[0].lineno
    return None


def _explain(e: Exception, compiled, args) -> Exception:
    """A failure inside generated code, with the user's line that produced it."""
    if isinstance(e, JitgradError):
        return e
    line = _generated_line(e, compiled.path)
    if line is None and not compiled.backend.is_compile_error(e):
        replayed = _replay(compiled, args)
        if replayed is not None and type(replayed) is type(e):
            line = _generated_line(replayed, compiled.path)
    first = str(e).splitlines()[0] if str(e) else ""
    kind = "Numba could not compile" if compiled.backend.is_compile_error(e) else "error in"
    msg = f"{kind} the generated gradient code: {type(e).__name__}: {first}"
    loc = None
    if line is not None:
        if 0 < line <= len(compiled.line_locs):
            loc = compiled.line_locs[line - 1]
        msg += f"\n(generated line: {compiled.path}:{line})"
    handler = _handled_at(loc)
    if handler is not None:
        msg += (f"\n(your code catches it at line {handler}, but a compiled gradient never runs "
                "an `except` branch: test the condition with `if` before the call instead)")
    during = f"running the gradient of {compiled.gradient.fn.name}"
    if isinstance(e, ValueError):  # shapes that do not line up; a ShapeError is a ValueError
        return ShapeError(msg, loc, during)
    return JitgradError(msg, loc, during)
