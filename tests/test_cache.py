"""The disk cache: generated modules under ``JITGRAD_CACHE_DIR`` and Numba's cache next to them.

Each scenario runs fresh Python processes (``python -c``) against a temporary cache folder, since
what matters is what a *second* process finds on disk. The function differentiated lives in a
small module written to the temporary folder (jitgrad reads source, so it must be a real file).
A warm cache is built once per module and copied for each damage scenario (Numba's cache index
stamps the source by content, so a copied folder stays valid).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitgrad
from jitgrad.backend.numba import compile as jcompile

pytestmark = pytest.mark.slow

MODULE = textwrap.dedent("""\
    import numpy as np


    def model(x, w):
        h = np.tanh(w * x)
        return np.sum(h * h)
    """)

SCRIPT = textwrap.dedent("""\
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import jitgrad
    import cache_fns
    g = jitgrad.grad(cache_fns.model, wrt=(0, 1))
    x = np.linspace(-1.0, 1.0, 5)
    t0 = time.perf_counter()
    gx, gw = g(x, 0.5)
    seconds = time.perf_counter() - t0
    stats = g.specialisations.last.entry.stats
    print(json.dumps({"seconds": seconds, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "path": g.specialisations.last.path,
                      "source": g.source(), "gx": gx.tolist(), "gw": float(gw)}))
    """)

X = np.linspace(-1.0, 1.0, 5)
W = 0.5
T = np.tanh(W * X)
WANT_GX = 2.0 * T * (1.0 - T * T) * W
WANT_GW = float(np.sum(2.0 * T * (1.0 - T * T) * X))


def environment(cache: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JITGRAD_DISABLE_JIT", "NUMBA_DISABLE_JIT", "NUMBA_CACHE_DIR")}
    env["JITGRAD_CACHE_DIR"] = cache
    return env


def start(code_dir: str, cache: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SCRIPT, code_dir], env=environment(cache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"the process failed:\n{err[-4000:]}"
    result = json.loads(out.strip().splitlines()[-1])
    np.testing.assert_allclose(result["gx"], WANT_GX, rtol=1e-12)
    assert result["gw"] == pytest.approx(WANT_GW, rel=1e-12)
    return result


def run(code_dir: str, cache: str) -> dict:
    return finish(start(code_dir, cache))


def numba_files(path: str) -> list[str]:
    """Numba's cache files (index .nbi, data .nbc) of the generated module at ``path``."""
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.join(os.path.dirname(path), "__pycache__")
    return sorted(glob.glob(os.path.join(folder, f"{stem}.*.nbi"))
                  + glob.glob(os.path.join(folder, f"{stem}.*.nbc")))


@pytest.fixture(scope="module")
def code_dir(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("code")
    (folder / "cache_fns.py").write_text(MODULE)
    return str(folder)


@pytest.fixture(scope="module")
def warm(code_dir, tmp_path_factory):
    """A cache folder after one process compiled the function, and what that process saw."""
    cache = str(tmp_path_factory.mktemp("warm"))
    return cache, run(code_dir, cache)


def relocate(path: str, old_root: str, new_root: str) -> str:
    return os.path.join(new_root, os.path.relpath(path, old_root))


def copy_of(warm, tmp_path) -> tuple[str, str]:
    """A private copy of the warm cache, and the generated module's path inside it."""
    cache, first = warm
    new = str(tmp_path / "cache")
    shutil.copytree(cache, new)
    return new, relocate(first["path"], cache, new)


# ----------------------------------------------------------------------------- reuse


def test_first_process_compiles_into_the_cache_folder(warm):
    cache, first = warm
    assert first["misses"] >= 1
    assert first["hits"] == 0
    path = first["path"]
    assert os.path.realpath(path).startswith(os.path.realpath(cache) + os.sep)
    assert os.path.basename(path).startswith("model_")
    with open(path, encoding="utf-8") as f:
        assert f.read() == first["source"]
    files = numba_files(path)
    assert any(f.endswith(".nbi") for f in files), os.listdir(os.path.dirname(path))
    assert any(f.endswith(".nbc") for f in files), os.listdir(os.path.dirname(path))


def test_second_process_reuses_the_compiled_code(warm, code_dir, tmp_path):
    cache, path = copy_of(warm, tmp_path)
    second = run(code_dir, cache)
    assert second["path"] == path
    assert second["hits"] >= 1, second
    assert second["misses"] == 0, second
    # Generous: loading from the cache is faster than compiling (typically 5-10x).
    assert second["seconds"] < warm[1]["seconds"]


def test_cache_folder_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("JITGRAD_CACHE_DIR", str(tmp_path))
    folder = jcompile.cache_dir()
    assert os.path.dirname(folder) == str(tmp_path)
    assert os.path.isdir(folder)
    path = jcompile.module_path("f", "x = 1\n")
    assert os.path.dirname(path) == folder
    assert path == jcompile.module_path("f", "x = 1\n")  # named by a hash of the text
    assert path != jcompile.module_path("f", "x = 2\n")


# ----------------------------------------------------------------------------- damage


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other-module"])
def test_damaged_generated_module_is_rewritten(warm, code_dir, tmp_path, damage):
    cache, path = copy_of(warm, tmp_path)
    with open(path, encoding="utf-8") as f:
        good = f.read()
    bad = {"garbage": "this is (not python\n", "truncated": good[: len(good) // 2], "empty": "",
           "other-module": "def model_value_and_grad(x, w):\n    return 0.0, (x, w)\n"}[damage]
    with open(path, "w", encoding="utf-8") as f:
        f.write(bad)
    result = run(code_dir, cache)  # checks the gradient
    assert result["path"] == path
    with open(path, encoding="utf-8") as f:
        assert f.read() == good


def _truncate(path: str) -> None:
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


@pytest.mark.parametrize("which", [".nbi", ".nbc"])
def test_damaged_numba_cache_is_recompiled(warm, code_dir, tmp_path, which):
    cache, path = copy_of(warm, tmp_path)
    damaged = [f for f in numba_files(path) if f.endswith(which)]
    assert damaged
    for f in damaged:
        _truncate(f)
    run(code_dir, cache)  # checks the gradient


def test_deleted_numba_cache_is_recompiled(warm, code_dir, tmp_path):
    cache, path = copy_of(warm, tmp_path)
    for f in numba_files(path):
        os.unlink(f)
    result = run(code_dir, cache)
    assert result["misses"] >= 1
    assert numba_files(path)


# ----------------------------------------------------------------------------- concurrency


def test_two_processes_with_the_same_cold_cache(code_dir, tmp_path):
    cache = str(tmp_path / "cold")
    procs = [start(code_dir, cache), start(code_dir, cache)]
    results = [finish(p) for p in procs]  # both succeed with the right gradient
    assert results[0]["path"] == results[1]["path"]
    with open(results[0]["path"], encoding="utf-8") as f:
        assert f.read() == results[0]["source"]
    leftovers = [f for f in os.listdir(os.path.dirname(results[0]["path"]))
                 if f.endswith(".tmp")]
    assert not leftovers
    # What they left behind is a consistent cache for a third process.
    third = run(code_dir, cache)
    assert third["hits"] >= 1, third


def test_in_process_recompile_after_the_module_file_is_damaged(tmp_path, monkeypatch):
    """The same damage within one process: a new GradFunction rewrites the file."""
    monkeypatch.setenv("JITGRAD_CACHE_DIR", str(tmp_path))
    g = jitgrad.grad(_in_process_model)
    assert g(2.0) == 12.0
    path = g.specialisations.last.path
    with open(path, "w", encoding="utf-8") as f:
        f.write("garbage (\n")
    h = jitgrad.grad(_in_process_model)
    assert h(2.0) == 12.0
    with open(path, encoding="utf-8") as f:
        assert f.read() == h.source()


def _in_process_model(x):
    return x * x * x


# ----------------------------------------------------------------------------- the GIL


def long_sum(x):
    """Long enough (about 50 ms) for another thread to be seen running during one call."""
    s = 0.0
    for i in range(20_000_000):
        s += x * (i % 7)
    return s


@pytest.mark.skipif(jcompile.DISABLE_JIT, reason="plain Python holds the GIL")
def test_compiled_gradients_release_the_gil():
    """Every build is ``nogil=True`` (a Dask worker's event loop keeps running while a block
    computes): another Python thread makes progress during one call of the entry."""
    import threading

    g = jitgrad.grad(long_sum)
    entry = g.njit(2.0)
    assert entry.targetoptions["nogil"] is True
    assert g(2.0) == 59_999_997.0  # the sum of i % 7; warm: the thread below measures a call, not compilation
    done = threading.Event()

    def call():
        g(2.0)
        done.set()

    ticks = 0
    thread = threading.Thread(target=call)
    thread.start()
    while not done.is_set():
        ticks += 1
    thread.join()
    assert ticks > 100, ticks  # with the GIL held through the call: one or two
    assert jcompile.CACHE_FORMAT in jcompile.cache_dir()


VMAP_SCRIPT = textwrap.dedent("""\
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import jitgrad
    from jitgrad.backend.numba import batch
    import cache_fns
    per_row = jitgrad.vmap(jitgrad.grad(cache_fns.model, wrt=1), in_axes=(0, None))
    xs = np.linspace(-1.0, 1.0, 15).reshape(3, 5)
    gw = per_row(xs, 0.5)
    (loop,) = batch._LOOPS.values()
    print(json.dumps({"hits": sum(loop.stats.cache_hits.values()),
                      "misses": sum(loop.stats.cache_misses.values()), "gw": gw.tolist()}))
    """)


def test_vmap_of_a_gradient_is_cached_on_disk(tmp_path):
    """The loop vmap puts around a gradient's entry is a module of the cache folder: a second
    process loads it from Numba's disk cache (a hit, no miss) and gets the same rows."""
    (tmp_path / "cache_fns.py").write_text(MODULE)
    cache = str(tmp_path / "cache")
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", VMAP_SCRIPT, str(tmp_path)],
                              env=environment(cache), capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-4000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert runs[0]["misses"] == 1 and runs[1]["misses"] == 0 and runs[1]["hits"] == 1, runs
    xs = np.linspace(-1.0, 1.0, 15).reshape(3, 5)
    t = np.tanh(0.5 * xs)
    want = np.sum(2.0 * t * (1.0 - t * t) * xs, axis=1)  # d/dw of sum(tanh(w x)^2), per row
    np.testing.assert_allclose(runs[1]["gw"], want, rtol=1e-12)
    assert runs[0]["gw"] == runs[1]["gw"]
    assert glob.glob(os.path.join(cache, "**", "model_grad_vmap_*.py"), recursive=True)


HELPERS_SCRIPT = textwrap.dedent("""\
    import json
    import numpy as np
    from numba.core import event
    from jitgrad.backend.numba import runtime as _rt
    compiled = []
    class Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", Compiles())
    a = np.arange(6.0).reshape(2, 3)
    x = np.array([1.0, -2.0, 0.5])
    out = {"ab": _rt.matmul(a, np.asfortranarray(a.T)).tolist()}
    y = x.copy()
    _rt.add_into(y, x)
    out["y"] = y.tolist()
    print(json.dumps({"compiled": compiled, **out}))
    """)


def test_runtime_products_are_found_in_the_disk_cache(tmp_path):
    """`matmul` and `add_into` compile the body chosen for their operands, not themselves and
    an overload (a product's closure, made per layout and precision, holding BLAS routines
    that pickle differently in each process: `compile._enable_stable_caching`); a second
    process on the same cache compiles none of them and computes the same values."""
    env = environment(str(tmp_path / "jitgrad"))
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", HELPERS_SCRIPT], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-4000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first = runs[0]["compiled"]  # (add_into of a vector also compiles the region writer's nest)
    assert "_matrix_product.<locals>.product" in first and "matmul" not in first, first
    assert runs[1]["compiled"] == [], runs[1]["compiled"]
    a = np.arange(6.0).reshape(2, 3)
    assert runs[1]["ab"] == (a @ a.T).tolist() and runs[1]["y"] == [2.0, -4.0, 1.0]
    assert runs[0] == runs[1] | {"compiled": runs[0]["compiled"]}
