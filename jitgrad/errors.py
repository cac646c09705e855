"""Errors that point at the user's source, formatted like Numba's.

Takes a message and a `Loc` (file, line, column, source line); guarantees the message shows
``File "model.py", line 12:``, the line itself, a caret under the column, and a ``During: ...``
line saying what jitgrad was doing. Every error jitgrad raises on purpose is a `JitgradError`.
"""

from __future__ import annotations

import dataclasses


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


class SignatureError(JitgradError, TypeError):
    """The arguments of a call do not fit (wrong type, an integer in ``wrt``, complex input)."""


class ShapeError(JitgradError, ValueError):
    """The function's value is not a scalar, or shapes do not broadcast."""


class MissingDependencyError(JitgradError, ImportError):
    """A package Numba needs at run time is not installed. The message is one line that names
    it and the command that installs it (SciPy: Numba calls its BLAS for ``@`` and ``np.dot``)."""


class SizesDiffer(Exception):
    """Raised by generated code when a call breaks a size assumption the build made (two
    argument axes that broadcast against each other differ, so one is 1). Internal: the caller
    compiles the general version for the signature and calls again; users never see it."""
