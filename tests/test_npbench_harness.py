"""The pure logic of `bench.npbench` (issue #45), without NPBench and without compiling: reading
a ``bench_info`` json, the loss plan from one call of a kernel, the generated loss module's
source against the closure the primals use, and the checks that mark a gradient wrong.

The kernels here are small stand-ins written for these tests in NPBench's shapes (a kernel that
writes its output argument, one that returns a tuple, one that returns the argument it writes,
one that writes an argument the json does not list), not NPBench's code.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench

from bench import npbench


def _info(args, outputs=(), arrays=None):
    return {"name": "t", "short_name": "t", "relative_path": "group/t", "module_name": "t",
            "func_name": "kernel", "parameters": {"S": {"N": 4}, "M": {"N": 8}},
            "init": {"func_name": "initialize", "input_args": ["N"], "output_args": ["A"]},
            "input_args": list(args), "array_args": list(arrays or args),
            "output_args": list(outputs)}


def _probe(info, fn, data):
    before = {n: data[n] for n in info["input_args"]}
    after = {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in before.items()}
    out = fn(*[after[n] for n in info["input_args"]])
    return npbench.plan_from_probe(info, before, after, out)


def _gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def _bicg(A, p, r):
    return r @ A, A @ p


def _adi(TSTEPS, N, u):
    for _ in range(TSTEPS):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
    return u


def _doitgen(A, C4):
    A[:] = A @ C4


def _mandel(A):
    return A * (1 + 2j), np.zeros(3, dtype=np.int64)


def _crc(data):
    return int(np.sum(data)) & 0xFFFF


rng = np.random.default_rng(0)
GEMM = {"alpha": 1.5, "beta": 1.2, "C": rng.random((3, 4)), "A": rng.random((3, 5)),
        "B": rng.random((5, 4))}


def test_load_kernels_and_parameters(tmp_path, monkeypatch):
    (tmp_path / "bench_info").mkdir()
    (tmp_path / "bench_info" / "t.json").write_text(json.dumps({"benchmark": _info(["A"])}))
    kernels = npbench.load_kernels(str(tmp_path))
    k = kernels["t"]
    assert k.module("_numpy") == "npbench.benchmarks.group.t.t_numpy"
    assert k.file("_jax") == str(tmp_path / "npbench" / "benchmarks" / "group" / "t" / "t_jax.py")
    assert k.numba_suffix() is None and not k.has_jax()
    assert k.parameters("S") == ({"N": 4}, {})
    monkeypatch.setitem(npbench.PARAM_OVERRIDES, "t", {"S": {"N": 2}})
    assert k.parameters("S", {"N": 3}) == ({"N": 3}, {"N": (4, 3)})
    assert k.parameters("M") == ({"N": 8}, {})
    with pytest.raises(KeyError):
        k.parameters("S", {"Q": 1})
    with pytest.raises(FileNotFoundError):
        npbench.load_kernels(str(tmp_path / "nothing"))


def test_parse_sets():
    assert npbench.parse_sets(["gemm.NI=500", "gemm.NJ=2.5", "x.y=abc"]) == {
        "gemm": {"NI": 500, "NJ": 2.5}, "x": {"y": "abc"}}
    with pytest.raises(ValueError):
        npbench.parse_sets(["gemm=5"])


def test_plan_written_output_argument():
    info = _info(["alpha", "beta", "C", "A", "B"], outputs=["C"], arrays=["C", "A", "B"])
    plan = _probe(info, _gemm, GEMM)
    assert plan["wrt"] == ["C", "A", "B"] and plan["copy"] == ["C"]
    assert plan["returns"] is None and plan["terms"] == [["arg", "C", "array"]]
    assert plan["skip"] is None and plan["float32"] is False
    single = {k: (v.astype(np.float32) if isinstance(v, np.ndarray) else v)
              for k, v in GEMM.items()}
    assert _probe(info, _gemm, single)["float32"] is True


def test_plan_tuple_return_and_aliased_output():
    info = _info(["A", "p", "r"])
    A, p, r = rng.random((4, 3)), rng.random(3), rng.random(4)
    plan = _probe(info, _bicg, {"A": A, "p": p, "r": r})
    assert plan["returns"] == 2 and plan["copy"] == []
    assert plan["terms"] == [["ret", 0, "array"], ["ret", 1, "array"]]
    info = _info(["TSTEPS", "N", "u"], outputs=["u"], arrays=["u"])
    plan = _probe(info, _adi, {"TSTEPS": 2, "N": 5, "u": rng.random(5)})
    assert plan["returns"] == "single" and plan["copy"] == ["u"]
    assert plan["terms"] == [["arg", "u", "array"]]  # the returned u is the output: once
    assert any("summed once" in n for n in plan["notes"])


def test_plan_falls_back_to_written_arrays():
    info = _info(["A", "C4"])  # the json lists no output; the kernel writes A
    plan = _probe(info, _doitgen, {"A": rng.random((3, 3)), "C4": rng.random((3, 3))})
    assert plan["terms"] == [["arg", "A", "array"]] and plan["copy"] == ["A"]
    assert any("lists no outputs" in n for n in plan["notes"])


def test_plan_skips_complex_and_integer():
    plan = _probe(_info(["A"]), _mandel, {"A": rng.random(3)})
    assert plan["skip"] == "complex"
    plan = _probe(_info(["data"]), _crc, {"data": np.arange(5, dtype=np.uint8)})
    assert plan["skip"] == "integer" and plan["wrt"] == []


@pytest.mark.parametrize("case", ["gemm", "bicg", "adi"])
def test_wrapper_source_matches_the_closure(case, monkeypatch, tmp_path):
    """The generated module's ``loss`` (what jitgrad reads) and `loss_function` (what the
    primals time) give the same value, and neither changes its inputs."""
    if case == "gemm":
        info, fn = _info(["alpha", "beta", "C", "A", "B"], ["C"], ["C", "A", "B"]), _gemm
        data = GEMM
    elif case == "bicg":
        info, fn = _info(["A", "p", "r"]), _bicg
        data = {"A": rng.random((4, 3)), "p": rng.random(3), "r": rng.random(4)}
    else:
        info, fn = _info(["TSTEPS", "N", "u"], ["u"], ["u"]), _adi
        data = {"TSTEPS": 3, "N": 5, "u": rng.random(5)}
    plan = _probe(info, fn, data)
    fake = types.ModuleType("npb_fake_kernels")
    fake.kernel = fn
    monkeypatch.setitem(sys.modules, "npb_fake_kernels", fake)
    source = npbench.wrapper_source(plan, "npb_fake_kernels", "kernel", case)
    path = tmp_path / f"npb_loss_{case}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"npb_loss_{case}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    values = [data[n] for n in plan["args"]]
    saved = [np.copy(v) for v in values]
    generated = module.loss(*values)
    closure = npbench.loss_function(plan, fn)(*values)
    assert generated == closure
    for v, s in zip(values, saved):
        assert np.array_equal(v, s)
    assert f"def loss({', '.join(plan['args'])}):" in source


def test_wrapper_source_refuses_clashing_names():
    plan = {"args": ["np", "A"], "copy": [], "returns": "single", "terms": [["ret", 0, "array"]]}
    with pytest.raises(ValueError):
        npbench.wrapper_source(plan, "m", "kernel")


class _FakeNumpyWorker:
    def __init__(self, answer):
        self.answer = answer

    def ask(self, cmd, timeout):
        return self.answer


class _Opts:
    tol = 1e-6
    fd_budget = 1.0
    timeout = 10.0


def _row(tmp_path, jitgrad_grad, jax_grad, jax_value=3.0, fd="ok"):
    np.savez(tmp_path / "g.npz", A=jitgrad_grad)
    np.savez(tmp_path / "j.npz", A=jax_grad)
    row = {"kernel": "t", "plan": {"wrt": ["A"]}, "status": None, "checks": {}, "notes": [],
           "engines": {"numpy": {"status": "ok", "value": 3.0},
                       "jitgrad": {"status": "ok", "grads": str(tmp_path / "g.npz")},
                       "jax": {"status": "ok", "value": jax_value,
                               "grads": str(tmp_path / "j.npz")}}}
    workers = {"numpy": _FakeNumpyWorker({"status": fd, "detail": "d", "entries": 2})}
    npbench._check(row, workers, _Opts, np)
    return row


def test_check_statuses(tmp_path):
    g = np.arange(4.0)
    assert _row(tmp_path, g, g)["status"] == "ok"
    row = _row(tmp_path, g, g + 1e-3)
    assert row["status"] == "wrong" and any("WRONG" in n for n in row["notes"])
    assert _row(tmp_path, g, g, fd="wrong")["status"] == "wrong"
    row = _row(tmp_path, g, g + 1.0, jax_value=4.0)  # JAX's version is another function
    assert row["status"] == "ok" and "jax" not in row["checks"]
    assert row["engines"]["jax"]["same_loss"] is False
    assert _row(tmp_path, g, g, jax_value=4.0, fd="skipped")["status"] == "unchecked"
    noise = np.array([1e-17, -3e-17])  # a constant loss (softmax's sum): rounding noise both
    row = _row(tmp_path, noise, np.array([2e-16, 5e-17]))
    assert row["status"] == "ok" and row["checks"]["jax"]["rounding_only"] == ["A"]
    assert _row(tmp_path, noise, np.array([1e-6, 0.0]))["status"] == "wrong"
    assert npbench.rel_error(np.array([np.nan]), np.array([1.0])) == np.inf
    # JAX's gradient NaN where jitgrad's is finite (nbody: sqrt at 0): central differences
    row = _row(tmp_path, g, np.array([0.0, np.nan, 2.0, 3.0]))
    assert row["status"] == "ok" and "jax" not in row["checks"]
    assert any("1 of 4 entries NaN" in n for n in row["notes"])
    assert _row(tmp_path, g, np.array([0.0, np.nan, 2.0, 3.0]), fd="wrong")["status"] == "wrong"
    assert _row(tmp_path, g * np.nan, g)["status"] == "wrong"


def test_summary_counts_and_timeouts():
    def row(status, first, ratios):
        return {"kernel": f"k{len(first)}{len(ratios)}", "status": status, "ratios": ratios,
                "engines": {"jitgrad": first, "jax": {"status": "ok", "first_call": 1.0}}}

    rows = [row("ok", {"status": "ok", "first_call": 1.0},
                {"grad_numpy": 2.0, "grad_numba": 4.0, "jax_jitgrad": 4.0,
                 "jax_same_loss": True}),
            row("ok", {"status": "ok", "first_call": 3.0},
                {"grad_numpy": 8.0, "jax_jitgrad": 9.0, "jax_same_loss": False}),
            row("timeout", {"status": "timeout"}, {})]
    s = npbench.summarise(rows, 60.0)
    assert s["counts"] == {"ok": 2, "timeout": 1}
    assert s["jax_over_jitgrad_geomean"] == pytest.approx(4.0)  # the other loss not counted
    assert s["grad_over_numpy_geomean"] == pytest.approx(4.0)
    assert s["grad_over_numpy_within_5"] == 1
    assert s["jitgrad_first_median"] == 3.0 and s["jitgrad_first_max"] == np.inf
    assert "timeout (> 60 s)" in npbench.summary_text(s)
