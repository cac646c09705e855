"""Running a test file as plain Python: its generated code executed by the interpreter, not
compiled (``JITGRAD_DISABLE_JIT=1``, which jitgrad reads once, when it is imported: hence a
process of its own). A file that uses this runs its breadth of cases under ``__main__`` and
keeps one compiled test of its own, as users run it."""

import os
import subprocess
import sys


def assert_runs_as_plain_python(path: str, timeout: float = 600) -> None:
    """Run the file ``path`` as a script with the JIT off; fail with the end of its output
    unless it exits with status 0."""
    env = dict(os.environ, JITGRAD_DISABLE_JIT="1")
    run = subprocess.run([sys.executable, os.path.abspath(path)], env=env,
                         capture_output=True, text=True, timeout=timeout, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
