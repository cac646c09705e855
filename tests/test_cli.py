"""The command line, run as a user runs it: ``python -m jitgrad`` in a subprocess (and, for
the many ways to get the command line wrong, `jitgrad.tools.cli.main` in this process, which is
what the subprocess runs)."""

import os
import re
import subprocess
import sys

import pytest

from jitgrad.tools import cli

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_FILE = os.path.join(HERE, "cli_model.py")
MODEL = MODEL_FILE + ":loss"
SIG = "f64[:,:], f64[:], f64[:,:]"


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "jitgrad", *args], capture_output=True,
                          text=True, timeout=300, check=False,
                          env=None if env is None else dict(os.environ, **env))


@pytest.fixture(scope="module")
def shown():
    return run("show", MODEL, "--sig", SIG, "--wrt", "W,b")


def test_show_prints_the_gradient_with_both_passes(shown):
    assert shown.returncode == 0, shown.stderr
    assert "def loss_grad(" in shown.stdout
    for section in ("# -- forward pass", "# -- adjoint pass"):
        assert shown.stdout.count(section) == 1
    assert "gradient with respect to: W, b" in shown.stdout
    assert "# cli_model.py:7: return np.sum(np.tanh(x @ W + b) ** 2)" in shown.stdout


def test_check_agrees_with_finite_differences():
    out = run("check", MODEL, "--sig", SIG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok: gradients with respect to W, b, x agree")


def test_ir_lists_one_typed_operation_per_line():
    out = run("ir", MODEL, "--sig", SIG)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "{ lambda ; W:f64[:,:], b:f64[:], x:f64[:,:] . let"
    assert "= matmul x W  # cli_model.py:7" in out.stdout
    assert lines[-1].strip().startswith("in (")


def test_bad_target_is_a_clear_error():
    out = run("show", "no_such_file.py", "--sig", SIG)
    assert out.returncode == 2
    assert out.stderr == "error: expected path/to/file.py:function, got 'no_such_file.py'\n"


def test_graph_dot_has_a_node_per_operation_and_an_edge_per_use():
    out = run("graph", MODEL, "--sig", SIG)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith('digraph "loss" {') and text.rstrip().endswith("}")
    nodes = [line for line in text.splitlines() if "[label=" in line]
    edges = [line for line in text.splitlines() if "->" in line]
    # 3 parameters, two size checks (two shape reads and same_size each: x's columns are
    # W's rows, W's columns are b's size), 5 operations (matmul add tanh pow sum), the value
    assert len(nodes) == 3 + 3 + 3 + 5 + 1
    # shape reads 1 + 1 twice, same_size 2 twice, matmul(x, W), add(_, b), tanh, pow, sum,
    # value: 4 + 4 + 2 + 2 + 1 + 1 + 1 + 1
    assert len(edges) == 16
    with_adjoint = run("graph", MODEL, "--sig", SIG, "--adjoint").stdout
    assert 'color="red"' in with_adjoint and len(with_adjoint) > len(text)


def test_demo_runs_the_square_check_the_seed_loss_and_training():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    assert "d/dx x**2 at x = 3.0: 6.0" in out.stdout
    assert "finite-difference check" in out.stdout
    assert "# -- adjoint pass" in out.stdout
    assert out.stdout.count("accuracy") == 5
    assert "time per gradient step" in out.stdout


# ----------------------------------------------------------------------------- help and mistakes


def test_help_has_a_line_for_every_command():
    out = run("--help")
    assert out.returncode == 0, out.stderr
    for name, summary in cli.COMMANDS.items():
        first_words = " ".join(summary.split()[:3])
        assert re.search(rf"^ +{name} +{re.escape(first_words)}", out.stdout, re.MULTILINE), \
            (name, out.stdout)
    assert "--debug" in out.stdout and "Exit status" in out.stdout


def marker_line(marker):
    with open(MODEL_FILE) as f:
        return next(n for n, line in enumerate(f, 1) if f"marker: {marker}" in line)


def assert_one_message(err, status, out, expected_status):
    assert status == expected_status, err
    assert err.startswith("error: ") and err.count("error: ") == 1, err
    assert "Traceback" not in err, err
    assert out == "", out


def test_refused_code_is_one_message_with_the_line_and_a_caret():
    done = run("show", MODEL_FILE + ":masked", "--sig", "f64[:]")
    assert_one_message(done.stderr, done.returncode, done.stdout, 1)
    assert "indexing with a boolean mask of rank 2 on an array of rank 1 is not supported; " \
           "keep the shape with `np.where(mask, x, 0.0)`" in done.stderr
    lines = done.stderr.splitlines()
    header = f'File "{MODEL_FILE}", line {marker_line("refused")}:'
    k = lines.index(header)
    assert lines[k + 1] == ("    return np.sum(x[x[:, None] > 0.0])  # marker: refused (a mask "
                            "of another rank)")
    assert lines[k + 2] == "    " + " " * len("return np.sum(") + "^"


def test_debug_adds_the_traceback():
    done = run("show", MODEL_FILE + ":masked", "--sig", "f64[:]", "--debug")
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):"), done.stderr
    assert "build_exprs.py" in done.stderr  # every frame, where the refusal was raised
    assert done.stderr.rstrip().splitlines()[-1] == "During: building the graph of masked"


def test_graph_to_svg_without_graphviz(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()  # a PATH with no `dot` on it
    done = run("graph", MODEL, "--sig", SIG, "-o", str(tmp_path / "g.svg"),
               env={"PATH": str(empty)})
    assert_one_message(done.stderr, done.returncode, done.stdout, 1)
    assert "the Graphviz `dot` program is not installed" in done.stderr
    assert "apt-get install graphviz" in done.stderr
    assert not (tmp_path / "g.svg").exists()


def test_missing_file_in_a_subprocess():
    done = run("check", "no_such_model.py:loss", "--sig", "f64")
    assert_one_message(done.stderr, done.returncode, done.stdout, 2)
    assert done.stderr == "error: no_such_model.py: no such file (the target is " \
                          "path/to/file.py:function)\n"


def write(tmp_path, text):
    path = tmp_path / "user_model.py"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("argv", "status", "message"), [
    pytest.param(["show", MODEL_FILE + ":no_such", "--sig", SIG], 2,
                 "cli_model.py has no function 'no_such' (it defines: loss, masked, scaled)",
                 id="missing-function"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:], f64[:]"], 2,
                 "--sig gives 2 types and loss takes 3 arguments (W, b, x): give one type per "
                 "argument", id="too-few-types"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:], f64[:], f64[:,:], f64"], 2,
                 "--sig gives 4 types and loss takes 3 arguments", id="too-many-types"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:, f64[:], f64[:,:]"], 2,
                 "cannot read the signature 'f64[:,:, f64[:], f64[:,:]' at column 1: cannot read "
                 "'f64[:,:, f64[:]'",
                 id="unclosed-bracket"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:], float128[:], f64[:,:]"], 2,
                 "at column 11: unknown type 'float128'", id="unknown-type"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:], f64[::], f64[:,:]"], 2,
                 "at column 11: cannot read 'f64[::]'", id="malformed-axes"),
    pytest.param(["show", MODEL, "--sig", "f64[:,:],, f64[:,:]"], 2,
                 "at column 10: an empty item between commas", id="empty-item"),
    pytest.param(["show", MODEL, "--sig", "{W: f64[:,:], b f64[:]}, f64[:,:]"], 2,
                 "at column 17: expected ':' after the key 'b'", id="dict-without-colon"),
    pytest.param(["show", MODEL, "--sig", "(f64, f64"], 2,
                 "at column 10: expected ',' or ')'", id="unclosed-tuple"),
    pytest.param(["show", MODEL, "--sig", SIG, "--wrt", "W,q"], 2,
                 "--wrt: loss has no argument named 'q' (its arguments: W, b, x)",
                 id="wrt-unknown-name"),
    pytest.param(["show", MODEL, "--sig", SIG, "--wrt", "3"], 2,
                 "--wrt 3: loss takes 3 arguments", id="wrt-out-of-range"),
    pytest.param(["show", MODEL_FILE + ":scaled", "--sig", "f64[:], i64", "--wrt", "n"], 2,
                 "--wrt: argument 'n' is not a float in --sig", id="wrt-integer"),
    pytest.param(["show", MODEL_FILE + ":scaled", "--sig", "i64[:], i64"], 2,
                 "--sig has no float argument to differentiate", id="no-float-argument"),
    pytest.param(["ir", MODEL_FILE + ":masked", "--sig", "f64[:]"], 1,
                 "indexing with a boolean mask of rank 2 on an array of rank 1 is not supported",
                 id="refused"),
])
def test_a_mistake_is_one_message(argv, status, message, capsys):
    assert cli.main(argv) == status
    captured = capsys.readouterr()
    assert_one_message(captured.err, status, captured.out, status)
    assert message in captured.err, captured.err


def test_a_file_that_does_not_import(tmp_path, capsys):
    path = write(tmp_path, "import numpy as np\n\ndef f(x):\n    return x +\n")
    assert cli.main(["show", path + ":f", "--sig", "f64"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path} failed to import:"), err
    assert f'File "{path}", line 4' in err and "SyntaxError" in err and "Traceback" not in err
    path = write(tmp_path, "SETTINGS = {}\nSCALE = SETTINGS['scale']\n")
    assert cli.main(["show", path + ":f", "--sig", "f64"]) == 2
    err = capsys.readouterr().err
    assert "KeyError: 'scale'" in err and f'File "{path}", line 2' in err, err


def test_the_function_raising_in_check_is_one_message(tmp_path, capsys):
    path = write(tmp_path, "def f(x):\n    if x > 100.0:\n        return x * x\n"
                           "    return x / 0.0\n")
    assert cli.main(["check", path + ":f", "--sig", "f64"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ZeroDivisionError: float division by zero"), err
    assert "Traceback" not in err and "--debug shows the traceback" in err


def test_debug_before_or_after_the_command_leaves_the_environment(capsys, monkeypatch):
    monkeypatch.delenv("JITGRAD_TRACEBACK", raising=False)
    for argv in (["--debug", "ir", MODEL_FILE + ":masked", "--sig", "f64[:]"],
                 ["ir", MODEL_FILE + ":masked", "--sig", "f64[:]", "--debug"]):
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith("Traceback (most recent call last):"), err
        assert "build_exprs.py" in err  # jitgrad's frames too
        assert "JITGRAD_TRACEBACK" not in os.environ


def test_a_dict_signature_and_a_module_beside_the_file(tmp_path):
    """The installed ``jitgrad`` command (not ``python -m``, whose folder is the current one)
    imports a file that imports a module beside it, from another folder; ``--sig`` gives a
    dict of parameters with a tuple inside, checked leaf by leaf against central
    differences."""
    (tmp_path / "layers.py").write_text("import numpy as np\n\ndef act(z):\n"
                                         "    return np.tanh(z)\n")
    (tmp_path / "net.py").write_text(
        "import numpy as np\nfrom layers import act\n\ndef loss(params, x):\n"
        "    h = act(x @ params['W'] + params['b'])\n"
        "    return np.sum(h * h) * params['scale'][0] + params['scale'][1]\n")
    command = os.path.join(os.path.dirname(sys.executable), "jitgrad")
    if not os.path.exists(command):
        pytest.skip("the jitgrad command is not installed beside this Python")
    done = subprocess.run([command, "check", str(tmp_path / "net.py") + ":loss", "--sig",
                           "{W: f64[:,:], b: f64[:], 'scale': (f64, f64)}, f64[:,:]"],
                          capture_output=True, text=True, timeout=300, check=False,
                          cwd=HERE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: gradients with respect to params, x agree")
    assert cli.example_args("{W: f64[:,:], 'b': (i64, f64[:])}, bool")[0]["b"][0] == 3
