"""The command line, run as a user runs it: ``python -m jitgrad`` in a subprocess."""

import os
import subprocess
import sys

import pytest

MODEL = os.path.join(os.path.dirname(__file__), "cli_model.py") + ":loss"
SIG = "f64[:,:], f64[:], f64[:,:]"


def run(*args):
    return subprocess.run([sys.executable, "-m", "jitgrad", *args], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def shown():
    return run("show", MODEL, "--sig", SIG, "--wrt", "W,b")


def test_show_prints_forward_adjoint_and_entry(shown):
    assert shown.returncode == 0, shown.stderr
    for name in ("def loss_forward(", "def loss_adjoint(", "def loss_grad("):
        assert name in shown.stdout
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
    assert out.returncode != 0
    assert "path/to/file.py:function" in out.stderr


def test_graph_dot_has_a_node_per_operation_and_an_edge_per_use():
    out = run("graph", MODEL, "--sig", SIG)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith('digraph "loss" {') and text.rstrip().endswith("}")
    nodes = [line for line in text.splitlines() if "[label=" in line]
    edges = [line for line in text.splitlines() if "->" in line]
    # 3 parameters, the size check (two shape reads, same_size: W's columns are b's size),
    # 5 operations (matmul add tanh pow sum), the value
    assert len(nodes) == 3 + 3 + 5 + 1
    # shape reads 1 + 1, same_size 2, matmul(x, W), add(_, b), tanh, pow, sum, value:
    # 2 + 2 + 2 + 2 + 1 + 1 + 1 + 1
    assert len(edges) == 12
    with_adjoint = run("graph", MODEL, "--sig", SIG, "--adjoint").stdout
    assert 'color="red"' in with_adjoint and len(with_adjoint) > len(text)


def test_demo_runs_the_square_check_the_seed_loss_and_training():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    assert "d/dx x**2 at x = 3.0: 6.0" in out.stdout
    assert "finite-difference check" in out.stdout
    assert "def loss_adjoint(" in out.stdout
    assert out.stdout.count("accuracy") == 5
    assert "time per gradient step" in out.stdout
