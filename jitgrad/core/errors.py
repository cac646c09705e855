"""Errors that point at the user's source, formatted like Numba's.

Takes a message and a `Loc` (file, line, column, source line); guarantees the message shows
``File "model.py", line 12:``, the line itself, a caret under the column, and a ``During: ...``
line saying what jitgrad was doing. Every error jitgrad raises on purpose is a `JitgradError`.

Two more things live here so that they stay in one place:

- `instead`: the "what to write instead" part of a refusal. Each construct jitgrad refuses but
  that has a form it does accept (a list's ``.append``, a boolean mask, ``np.einsum``...) has
  one entry in `INSTEAD`; refusals quote it, never a string of their own.
- `api_boundary` / `hide_internal_frames`: a refusal raised through the public API (``grad(f)``,
  a call of the gradient, ``.source()``, ``jvp``...) reaches the user with jitgrad's own frames
  taken out of its traceback, as JAX filters its frames: the user sees their own line, the
  error's message (their file, line and caret), and one frame of jitgrad's (the boundary that
  re-raised it). Exceptions chained to it (Numba's error behind an explained failure) keep their
  message but lose their frames. ``JITGRAD_TRACEBACK=full`` in the environment shows everything.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
import types


@dataclasses.dataclass(frozen=True)
class Loc:
    """Where an operation came from in the user's code."""

    filename: str
    lineno: int
    col: int = 0
    line: str = ""  # the source line, stripped of its trailing newline

    def short(self) -> str:
        import os

        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def __str__(self) -> str:
        return f'File "{self.filename}", line {self.lineno}'


class JitgradError(Exception):
    """Base class of every error jitgrad raises on purpose."""

    def __init__(self, message: str, loc: Loc | None = None, during: str | None = None):
        self.message = message
        self.loc = loc
        self.during = during
        super().__init__(self._format())

    def _format(self) -> str:
        parts = [self.message]
        if self.loc is not None:
            parts.append("")
            parts.append(f"{self.loc}:")
            if self.loc.line:
                text = self.loc.line.rstrip()
                stripped = text.lstrip()
                indent = len(text) - len(stripped)
                parts.append(f"    {stripped}")
                parts.append("    " + " " * max(self.loc.col - indent, 0) + "^")
        if self.during:
            parts.append("")
            parts.append(f"During: {self.during}")
        return "\n".join(parts)

    def with_during(self, during: str) -> JitgradError:
        """The same error with its ``During:`` context set (the first one set wins)."""
        if self.during is None:
            self.during = during
            self.args = (self._format(),)
        return self


class UnsupportedError(JitgradError):
    """The function uses a construct jitgrad cannot differentiate (refused, never guessed)."""


class RaisesInPython(UnsupportedError):
    """What Python raises here for these argument types, whatever their values (``len`` of a
    number: TypeError): refused where nothing catches it, and where a ``try`` whose handler
    catches ``error`` surrounds it, the build takes that handler (`build_try`)."""

    def __init__(self, error: type, message: str, loc: Loc | None = None):
        self.error = error
        self.nested = 0  # the blocks it came through while building (`Branches.in_block`)
        super().__init__(message, loc)


class NotReversible(UnsupportedError):
    """The graph calls a jitgrad transform (`ir.Function.grafted`), whose code the reverse
    transform does not take: an entry point that can, falls back to forward mode."""


class SignatureError(JitgradError, TypeError):
    """The arguments of a call do not fit (wrong type, an integer in ``wrt``, complex input)."""


class ShapeError(JitgradError, ValueError):
    """The function's value is not a scalar, or shapes do not broadcast."""


class MissingDependencyError(JitgradError, ImportError):
    """A package Numba needs at run time is not installed. The message is one line that names
    it and the command that installs it (SciPy: Numba calls its BLAS for ``@`` and ``np.dot``)."""


# The public errors are jitgrad's (`jitgrad.ShapeError`, ...): tracebacks name them so, and
# pickling (a Dask worker's error on its way to the client) finds them there.
class RecompileWarning(UserWarning):
    """The same function compiled again and again for other values of what it closes over
    (a closure made per minibatch): each is a new gradient, seconds each, where passing those
    values as arguments compiles once."""


for _public in (JitgradError, UnsupportedError, SignatureError, ShapeError,
                MissingDependencyError, RecompileWarning):
    _public.__module__ = "jitgrad"


class SizesDiffer(Exception):
    """Raised by generated code when a call breaks a size assumption the build made (two
    argument axes that broadcast against each other differ, so one is 1). Internal: the caller
    compiles the general version for the signature and calls again; users never see it."""


class ComplexEigenvalues(ValueError):
    """Raised by generated code where a real matrix's eig (``np.linalg.eig``, ``eigvals``,
    ``np.roots``), built real, has complex eigenvalues at run time (NumPy's result dtype
    depends on the values). A gradient's caller builds the signature again with eig typed
    complex (`GraphBuilder.complex_eig`) and calls again; transforms that do not rebuild
    report it as the ValueError it is."""


# ----------------------------------------------------------------------------- what to write instead

# The form that works, for each construct refused with a hint. Keys name the construct; the
# text follows "<the construct> is not supported; " and says what to write.
INSTEAD = {
    "list.append": "append in the `for` loop that follows `out = []` (the list is then an "
                   "array of its items), or preallocate an array, `out = np.zeros(n)`, and "
                   "write `out[i] = v`",
    "list comprehension": "write a loop into a preallocated array: `out = np.zeros(n)`, then "
                          "`for i in range(n): out[i] = ...` (sum, max, min, any or all of "
                          "a comprehension, in an assignment, a return or an if test, is "
                          "taken as its loop)",
    "generator expression": "write a loop that accumulates: `total = 0.0`, then "
                            "`for i in range(n): total += ...` (sum, max, min, any or all of "
                            "one, in an assignment, a return or an if test, is taken as its "
                            "loop)",
    "dict": "jitgrad takes dicts with constant keys ({'W1': w, 'b': b}, params['W1']), as "
            "arguments or made in the function: write the keys out, or use a variable per "
            "entry",
    "mask read": "keep the shape with `np.where(mask, x, 0.0)` (`np.sum(np.where(x > 0, x, "
                 "0.0))` sums the positive entries; `np.sum(mask)` counts them)",
    "mask write": "write `x = np.where(mask, value, x)` instead",
    "integer arrays": "one 1-D integer array reads rows (`x[idx]`), two read one entry per "
                      "pair (`logp[np.arange(n), y]`); for other forms, loop: `for i in "
                      "range(n): total += logp[i, y[i]]`",
    "integer-array write": "write in a loop: `for k in range(idx.shape[0]): x[idx[k]] = v[k]` "
                           "(with `+=`, the loop adds up repeated indices, as np.add.at does; "
                           "NumPy's `x[idx] += v` applies one update per index)",
    "list": "a list built by appending in a `for` loop or by a list comprehension is an "
            "array of its items in the gradient: read it as one (`np.array(out)`, a NumPy "
            "function of it, `sum(out)`, `len(out)`, `out[i]`, `for v in out`), or preallocate "
            "`out = np.zeros(n)` and write `out[i] = v`",
    "list of arrays": "preallocate the array of rows, `out = np.zeros((n, d))`, and write "
                      "`out[i] = row` (or `out[i, :] = row`)",
    "walrus": "jitgrad takes `(n := e)` in an assignment, a return or an if test, where it "
              "is evaluated whenever the statement is; elsewhere (a while test, after `and`/"
              "`or`, in a comprehension) assign `n = e` on a line of its own",
    "print": "write print(...) as a statement of its own: the gradient leaves it out (it "
             "prints nothing there)",
    "call inside print": "the gradient leaves print(...) out without evaluating its "
                         "arguments, so a call that may write into an array must not hide "
                         "there: make the call on a line of its own and print its result",
    "draw at run time": "draw a fixed number of values before it (`z = "
                        "np.random.standard_normal(max_steps)`) and read `z[k]` where you "
                        "drew; or draw outside the function and pass the values as an "
                        "argument",
    "distribution": "draw outside the function and pass the values as an argument (jitgrad "
                    "replays normal, standard_normal, randn, rand, random, random_sample, "
                    "uniform, randint and integers, and seed)",
    "draws elsewhere": "use jitgrad.grad or jitgrad.value_and_grad, or draw outside the "
                       "function and pass the values as an argument",
    "ufunc.at": "write the loop: `for k in range(idx.shape[0]): out[idx[k]] += v[k]` (it "
                "adds up repeated indices, as np.add.at does)",
    "ufunc.accumulate": "np.cumsum and np.cumprod for add and multiply; otherwise write the "
                        "loop that carries the running value (`m = max(m, x[i]); out[i] = m`)",
    "ufunc.reduce": "the reduction's own function (np.sum, np.prod, np.max, np.min, np.any, "
                    "np.all), or the loop",
    "ufunc.outer": "broadcast: `f(a[:, None], b[None, :])` (np.outer for multiply)",
}


def instead(key: str) -> str:
    """What to write instead of the refused construct ``key`` (one of `INSTEAD`)."""
    return INSTEAD[key]


def refused(what: str, key: str, loc: Loc | None = None) -> UnsupportedError:
    """The refusal of ``what`` (``"a list comprehension"``), with the form that works."""
    return UnsupportedError(f"{what} is not supported; {instead(key)}", loc)


# ----------------------------------------------------------------------------- tracebacks

TRACEBACK_ENV = "JITGRAD_TRACEBACK"  # "full": keep jitgrad's own frames in tracebacks
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # jitgrad/
_NOTE = f"(jitgrad's own frames are hidden from this traceback; {TRACEBACK_ENV}=full shows them)"


def _library_dirs(with_numba: bool) -> tuple[str, ...]:
    dirs = [_PACKAGE]
    numba = sys.modules.get("numba")
    if with_numba and getattr(numba, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(numba.__file__)) + os.sep)
    return tuple(dirs)


# Numba's own files as a cached compiled function names them: the raise locations it keeps
# are paths of the environment that compiled it, which may be another one (a runtime helper's
# cache beside jitgrad's source is shared by every environment that installed it editable).
_NUMBA_FILES = re.compile(r"[\\/](site|dist)-packages[\\/]numba[\\/]")


def _without_frames_of(tb: types.TracebackType | None, dirs: tuple[str, ...],
                       numba: bool = False):
    """The traceback ``tb`` without the frames whose files lie in ``dirs`` (and, with
    ``numba``, in any environment's Numba: `_NUMBA_FILES`)."""
    kept = []
    while tb is not None:
        path = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not (path.startswith(dirs) or (numba and _NUMBA_FILES.search(path))):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def hide_internal_frames(err: BaseException) -> BaseException:
    """``err`` with jitgrad's frames taken out of its traceback, and the exceptions chained to
    it (``__cause__``, ``__context__``: Numba's error behind an explained failure) without
    jitgrad's and Numba's frames (their messages stay); unchanged under
    ``JITGRAD_TRACEBACK=full``."""
    if os.environ.get(TRACEBACK_ENV, "").strip().lower() == "full":
        return err
    before = err.__traceback__
    err.__traceback__ = _without_frames_of(before, _library_dirs(with_numba=False))
    libraries = _library_dirs(with_numba=True)
    seen = {id(err)}
    chained = [err.__cause__, err.__context__]
    while chained:
        e = chained.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.__traceback__ = _without_frames_of(e.__traceback__, libraries, numba=True)
        chained += [e.__cause__, e.__context__]
    if (before is not None and hasattr(err, "add_note")
            and _NOTE not in getattr(err, "__notes__", ())):
        err.add_note(_NOTE)
    return err


def api_boundary(fn):
    """Decorate a public entry point: a `JitgradError` raised inside it reaches the caller
    through `hide_internal_frames`. Nested boundaries are harmless (the outer one finds nothing
    more to hide). Not for the hot path of a gradient's call: `GradFunction.__call__` has its
    own ``except`` (a decorator costs a Python frame per call)."""

    @functools.wraps(fn)
    def boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except JitgradError as err:
            raise hide_internal_frames(err)  # jitgrad's frames hidden; JITGRAD_TRACEBACK=full
    return boundary
