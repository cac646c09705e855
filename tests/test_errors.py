"""A failure inside the generated code names the user's line that produced it; a refusal raised
through the public API shows the user's lines, not jitgrad's frames (``JITGRAD_TRACEBACK=full``
shows them all)."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from errors_fns import mismatched

import jitgrad

HERE = os.path.dirname(__file__)


def marker_line(marker):
    with open(os.path.join(HERE, "errors_fns.py")) as f:
        for n, line in enumerate(f, 1):
            if f"marker: {marker}" in line:
                return n
    raise AssertionError(marker)


def test_runtime_error_reports_the_user_line():
    g = jitgrad.grad(mismatched)
    g(np.ones((3, 2)), np.ones((4, 3)))  # compiles and runs for these shapes
    with pytest.raises(jitgrad.JitgradError) as info:
        g(np.ones((3, 2)), np.ones((4, 5)))  # x @ W no longer lines up
    text = str(info.value)
    assert "ValueError" in text
    path = os.path.join(HERE, "errors_fns.py")
    assert f'File "{path}", line {marker_line("matmul")}:' in text
    assert "h = np.tanh(x @ W)" in text
    assert "generated line:" in text
    assert isinstance(info.value, jitgrad.ShapeError)  # also a ValueError, as NumPy raises


# ----------------------------------------------------------------------------- tracebacks
# A refusal raised through the public API shows the user's line and the message (their file,
# line and caret), not pages of jitgrad's frames. Run as a user runs a script: in a subprocess,
# reading what Python prints to stderr.

JITGRAD_DIR = os.path.dirname(os.path.abspath(jitgrad.__file__))
FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in ', re.MULTILINE)

UNCAUGHT = """
import numpy as np
import jitgrad
from errors_fns import masked_sum
g = jitgrad.grad(masked_sum)
g(np.array([1.0, -2.0]))  # the user's call
"""

# Every entry point, each refusal printed as Python prints an uncaught one (from the frame
# that catches it down), between markers.
ENTRY_POINTS = """
import sys, traceback
import numpy as np
import jitgrad
from errors_fns import masked_sum, mismatched, with_try
x = np.array([1.0, -2.0])
calls = {
    "grad": lambda: jitgrad.grad(with_try),
    "grad(wrt=)": lambda: jitgrad.grad(wrt=0)(with_try),
    "value_and_grad": lambda: jitgrad.value_and_grad(masked_sum)(x),
    "call": lambda: jitgrad.grad(masked_sum)(x),
    "signature": lambda: jitgrad.grad(masked_sum)("x"),
    "source": lambda: jitgrad.grad(masked_sum).source(x),
    "jvp": lambda: jitgrad.jvp(masked_sum, (x,), (x,)),
    "vjp": lambda: jitgrad.vjp(masked_sum, x),
    "jacobian": lambda: jitgrad.jacobian(masked_sum)(x),
    "hessian": lambda: jitgrad.hessian(masked_sum)(x),
    "hvp": lambda: jitgrad.hvp(masked_sum)(x, x),
    "check_grad": lambda: jitgrad.check_grad(masked_sum, x),
    "run time": lambda: jitgrad.grad(mismatched)(np.ones((3, 2)), np.ones((4, 5))),
}
for name, call in calls.items():
    try:
        call()
    except jitgrad.JitgradError as e:
        print("=== " + name, file=sys.stderr)
        traceback.print_exception(e)
    else:
        print("=== " + name + " raised nothing", file=sys.stderr)
"""


def run_script(tmp_path, text, **env):
    script = tmp_path / "user_script.py"
    script.write_text(text)
    path = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
    environ = {k: v for k, v in os.environ.items() if k != "JITGRAD_TRACEBACK"}
    return str(script), subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        check=False, env=dict(environ, PYTHONPATH=path, **env))


def jitgrad_frames(text):
    return [f for f, _ in FRAME.findall(text)
            if os.path.abspath(f).startswith(JITGRAD_DIR + os.sep)]


def assert_shows_the_users_line(text, marker):
    path = os.path.join(HERE, "errors_fns.py")
    header = f'File "{path}", line {marker_line(marker)}:'
    lines = text.splitlines()
    assert header in lines, text
    k = lines.index(header)
    with open(path) as f:
        source = f.read().splitlines()[marker_line(marker) - 1]
    assert lines[k + 1] == "    " + source.strip(), text
    assert re.fullmatch(r" {4,}\^", lines[k + 2]), text


@pytest.mark.slow
def test_an_uncaught_refusal_shows_the_users_lines_and_one_jitgrad_frame(tmp_path):
    script, done = run_script(tmp_path, UNCAUGHT)
    assert done.returncode == 1
    err = done.stderr
    assert err.startswith("Traceback (most recent call last):"), err
    assert f'File "{script}", line 6, in <module>' in err  # the user's call
    assert len(jitgrad_frames(err)) <= 2, err
    assert "UnsupportedError: indexing with a boolean mask" in err
    assert_shows_the_users_line(err, "mask")
    assert "JITGRAD_TRACEBACK=full" in err
    assert len(err.splitlines()) < 25, err


@pytest.mark.slow
def test_every_entry_point_hides_jitgrad_frames(tmp_path):
    _, done = run_script(tmp_path, ENTRY_POINTS)
    assert done.returncode == 0, done.stderr
    parts = re.split(r"^=== (.+)\n", done.stderr, flags=re.MULTILINE)[1:]
    printed = dict(zip(parts[::2], parts[1::2]))
    assert len(printed) == 13, done.stderr
    for name, text in printed.items():
        assert not name.endswith("raised nothing"), name
        # a chained exception (Numba's, behind the run-time error) is printed first
        assert "Traceback (most recent call last):" in text, (name, text)
        assert 'user_script.py", line' in text, (name, text)
        assert len(jitgrad_frames(text)) <= 2, (name, text)
        # and it keeps its message only, no frames of jitgrad's or Numba's
        assert not [f for f, _ in FRAME.findall(text) if f"{os.sep}numba{os.sep}" in f], text
        if name not in ("signature",):
            marker = {"grad": "try", "grad(wrt=)": "try", "run time": "matmul"}.get(name, "mask")
            assert_shows_the_users_line(text, marker)
    assert "The above exception was the direct cause" in printed["run time"]
    assert "ValueError: incompatible array sizes" in printed["run time"]


@pytest.mark.slow
def test_jitgrad_traceback_full_shows_every_frame(tmp_path):
    _, done = run_script(tmp_path, UNCAUGHT, JITGRAD_TRACEBACK="full")
    assert done.returncode == 1
    frames = jitgrad_frames(done.stderr)
    assert len(frames) > 5, done.stderr
    assert any(f.endswith("build_exprs.py") for f in frames), done.stderr  # where it was raised
    assert "are hidden" not in done.stderr
    assert_shows_the_users_line(done.stderr, "mask")


# ----------------------------------------------------------------------------- print


def test_print_is_left_out_of_the_gradient(capfd):
    from errors_fns import printed_loss, unprinted_loss

    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    g = jitgrad.value_and_grad(printed_loss, wrt=(0, 1))
    value, (dW, dx) = g(W, x)
    assert capfd.readouterr().out == ""  # prints nothing inside the gradient
    assert not [line for line in g.source().splitlines()
                if re.search(r"\bprint\s*\(", line.split("#")[0])]
    want_value, (want_dW, want_dx) = jitgrad.value_and_grad(unprinted_loss, wrt=(0, 1))(W, x)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(dW, want_dW, rtol=1e-12)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-12)
    assert value == pytest.approx(printed_loss(W, x), rel=1e-12)
    assert "W is" in capfd.readouterr().out  # the function itself, run by Python, prints
    jitgrad.check_grad(printed_loss, W, x)  # and central differences agree
