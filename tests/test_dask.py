"""`jitgrad.dask` on a real `distributed.LocalCluster`: 2 worker processes, 1 thread each.

The cluster's results equal one process's within 1e-12 (relative norm), kernels are compiled
once per worker and reused, `check=True` catches a function that is not a sum over rows, and a
worker killed in the middle of a call changes nothing."""

import math
import os
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import jitgrad as jg
import jitgrad.dask as jgd
from jitgrad.errors import SignatureError


def gmm_data(alphas, means, log_prec, x):
    """The loop GMM's negative log-likelihood of the rows of x: a sum over rows."""
    n = x.shape[0]
    d = x.shape[1]
    K = alphas.shape[0]
    amax = alphas[0]
    for k in range(1, K):
        amax = max(amax, alphas[k])
    asum = 0.0
    for k in range(K):
        asum += math.exp(alphas[k] - amax)
    log_norm = amax + math.log(asum)
    prec = np.exp(log_prec)
    lp = np.empty(K)
    total = 0.0
    for i in range(n):
        lmax = -math.inf
        for k in range(K):
            s = alphas[k]
            for j in range(d):
                r = prec[k, j] * (x[i, j] - means[k, j])
                s += log_prec[k, j] - 0.5 * r * r
            lp[k] = s
            lmax = max(lmax, s)
        se = 0.0
        for k in range(K):
            se += math.exp(lp[k] - lmax)
        total += lmax + math.log(se)
    return n * (log_norm + 0.5 * d * math.log(2.0 * math.pi)) - total


def weighted_squares(w, b, x, y):
    """A least-squares data term with two shard arguments (x and y)."""
    r = x @ w + b - y
    return 0.5 * np.sum(r * r)


def squared_total(alphas, means, log_prec, x):
    """Not a sum over rows."""
    v = gmm_data(alphas, means, log_prec, x)
    return v * v


def make(n=4000, d=3, K=4, seed=0):
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((K, d))
    x = centres[rng.integers(0, K, size=n)] + rng.standard_normal((n, d))
    return (0.5 * rng.standard_normal(K), centres + 0.3 * rng.standard_normal((K, d)),
            0.1 * rng.standard_normal((K, d)), x)


def close(got, want, tol=1e-12):
    return jgd.relative_difference(got, want) <= tol


def in_thread(fn, *args):
    """Start ``fn(*args)`` in a thread; its result or exception lands in the dict returned."""
    result = {}

    def run():
        try:
            result["out"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - reported by the caller's assertions
            result["error"] = e

    call = threading.Thread(target=run)
    call.start()
    return call, result


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_value_and_grad_equals_one_process(client):
    alphas, means, log_prec, x = make()
    X = da.from_array(x, chunks=(500, 3)).persist()  # 8 blocks
    want = jg.value_and_grad(gmm_data, wrt=(0, 1, 2))(alphas, means, log_prec, x)
    vg = jgd.value_and_grad(gmm_data, wrt=("alphas", "means", "log_prec"), shard="x")
    for _ in range(2):
        value, grads = vg(alphas, means, log_prec, X)
        assert isinstance(value, float)
        assert [g.shape for g in grads] == [alphas.shape, means.shape, log_prec.shape]
        assert close((value, grads), want)
    # compiled (or loaded from disk) once per worker, then reused for every block and call
    loaded = client.run(lambda: __import__("jitgrad.dask").dask.STATS["loaded"])
    assert all(n == 1 for n in loaded.values()), loaded
    g = jgd.grad(gmm_data, wrt=1, shard=3)(alphas, means, log_prec, X)
    assert isinstance(g, np.ndarray)
    assert close(g, want[1][1])


def test_two_shards_numpy_input(client):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((1000, 4)), rng.standard_normal(1000)
    w, b = rng.standard_normal(4), np.float32(0.3)
    X = da.from_array(x, chunks=(300, 2))  # uneven blocks, split columns: rechunked
    want = jg.value_and_grad(weighted_squares, wrt=(0, 1))(w, b, x, y)
    value, (gw, gb) = jgd.value_and_grad(weighted_squares, wrt=(0, 1),
                                         shard=("x", "y"))(w, b, X, y)  # y: NumPy, split
    assert gw.dtype == np.float64
    assert type(gb) is np.float32
    assert close((value, (gw, gb)), want)


def test_check_additivity(client):
    alphas, means, log_prec, x = make(n=800)
    X = da.from_array(x, chunks=(200, 3))
    vg = jgd.value_and_grad(gmm_data, wrt=0, shard="x", check=True)
    assert close(vg(alphas, means, log_prec, X),
                 jg.value_and_grad(gmm_data)(alphas, means, log_prec, x))
    with pytest.raises(jgd.AdditivityError, match="not a sum over the rows of x"):
        jgd.grad(squared_total, wrt=0, shard="x", check=True)(alphas, means, log_prec, X)


def test_refusals(client):
    with pytest.raises(SignatureError, match="shard argument"):
        jgd.grad(gmm_data, wrt=(0, 3), shard="x")
    with pytest.raises(SignatureError, match="no argument named"):
        jgd.grad(gmm_data, wrt=0, shard="z")
    _alphas, means, _log_prec, x = make(n=100)
    with pytest.raises(SignatureError, match="different numbers of rows"):
        jgd.grad(weighted_squares, wrt=0, shard=(2, 3))(
            means[0], 0.0, da.from_array(x), da.from_array(x[:50, 0]))


def test_worker_killed_mid_call(client, tmp_path):
    """Block 5's data is produced by a task that sleeps on its first attempt; the worker
    running it is killed (SIGKILL). Dask reruns what that worker held on the other one (and
    on the worker its nanny restarts); the result is the same bits as an undisturbed call."""
    alphas, means, log_prec, x = make()
    marker = str(tmp_path / "slow-block")

    def slow_first(block, block_info=None):
        import os
        import time
        if block_info[0]["chunk-location"][0] == 5 and not os.path.exists(marker):
            with open(marker + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.replace(marker + ".tmp", marker)
            time.sleep(60)
        return block

    X = da.from_array(x, chunks=(500, 3)).map_blocks(slow_first, dtype=x.dtype)
    vg = jgd.value_and_grad(gmm_data, wrt=(0, 1, 2), shard="x")
    call, result = in_thread(vg, alphas, means, log_prec, X)
    deadline = time.monotonic() + 60
    while not os.path.exists(marker):
        assert time.monotonic() < deadline, "the slow block never started"
        time.sleep(0.05)
    with open(marker) as f:
        pid = int(f.read())
    assert pid in client.run(os.getpid).values()
    os.kill(pid, signal.SIGKILL)
    call.join(timeout=120)
    assert "out" in result, f"the call did not return after the worker was killed: {result}"
    again = vg(alphas, means, log_prec, X)  # the marker is there: nothing sleeps
    want = jg.value_and_grad(gmm_data, wrt=(0, 1, 2))(alphas, means, log_prec, x)
    assert close(result["out"], want)
    assert jgd.relative_difference(result["out"], again) == 0.0


def test_worker_killed_while_its_group_runs(client, tmp_path):
    """All blocks are in worker memory, so each worker runs one group task. The function is
    new (a random constant in its source), so both groups start by compiling it, which takes
    seconds; one worker is killed then, with its group and the blocks it held. Dask recomputes
    the lost blocks and reruns the lost group on a live worker: the same result."""
    import importlib.util
    import inspect

    scale = float(np.random.default_rng().uniform(1.0, 2.0))
    text = ("import math\nimport numpy as np\n\n\n"
            + inspect.getsource(gmm_data).replace("0.5 * r * r", f"{scale!r} * r * r"))
    (tmp_path / "fresh_gmm.py").write_text(text)
    spec = importlib.util.spec_from_file_location("fresh_gmm", tmp_path / "fresh_gmm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    client.wait_for_workers(2)  # a worker killed by an earlier test is back
    alphas, means, log_prec, x = make()
    X = da.from_array(x, chunks=(500, 3)).persist()
    distributed.wait(X)
    pids = client.run(os.getpid)
    vg = jgd.value_and_grad(module.gmm_data, wrt=(0, 1, 2), shard="x")
    call, result = in_thread(vg, alphas, means, log_prec, X)
    deadline = time.monotonic() + 60
    while True:
        busy = [w for w, keys in client.processing().items()
                if any("jitgrad-group" in str(k) for k in keys)]
        if len(busy) == 2 or "out" in result or "error" in result:
            break
        assert time.monotonic() < deadline, "the groups never started"
        time.sleep(0.01)
    assert len(busy) == 2 and len(vg.last_groups) == 2, (busy, vg.last_groups, result)
    os.kill(pids[busy[0]], signal.SIGKILL)
    assert not result, "the call ended before the worker was killed"
    call.join(timeout=120)
    assert "out" in result, f"the call did not return after the worker was killed: {result}"
    want = jg.value_and_grad(module.gmm_data, wrt=(0, 1, 2))(alphas, means, log_prec, x)
    assert close(result["out"], want)
    assert close(vg(alphas, means, log_prec, X), want)


def test_blocks_in_memory_run_one_task_per_worker(client):
    client.wait_for_workers(2)
    alphas, means, log_prec, x = make()
    X = da.from_array(x, chunks=(500, 3)).persist()
    distributed.wait(X)
    vg = jgd.value_and_grad(gmm_data, wrt=0, shard="x")
    with distributed.get_task_stream(client) as stream:
        out = vg(alphas, means, log_prec, X)
    assert close(out, jg.value_and_grad(gmm_data)(alphas, means, log_prec, x))
    groups = [t["key"] for t in stream.data if "jitgrad-group" in str(t["key"])]
    assert len(groups) == 2 == len(vg.last_groups), (groups, vg.last_groups)
    assert sorted(i for g in vg.last_groups for i in g) == list(range(8))
    assert [len(g) for g in vg.last_groups] == [4, 4]
    held = client.who_has(X)
    for g in vg.last_groups:  # each group is one worker's blocks
        assert len({held[X.__dask_keys__()[i][0]][0] for i in g}) == 1


@pytest.mark.parametrize("rows, holders, slots, want", [
    # five blocks on a, three on b: one of a's moves to b (the last, in block order)
    ([10] * 8, ["a", "a", "b", "a", "b", "a", "b", "a"], ["a", "b"],
     [[0, 1, 3, 5], [2, 4, 6, 7]]),
    # all on one worker: the second worker takes the blocks past an equal share
    ([10] * 4, ["a"] * 4, ["a", "b"], [[0, 1], [2, 3]]),
    # a worker with two threads has two slots
    ([10] * 4, ["a"] * 4, ["a", "a"], [[0, 2], [1, 3]]),
    # uneven blocks: a keeps its big block, b takes the small ones
    ([30, 10, 10, 10], ["a", "a", "a", "a"], ["a", "b"], [[0], [1, 2, 3]]),
    # blocks no worker holds (a lazy array) are a group each, for Dask to place
    ([10] * 4, ["a", "", "a", ""], ["a", "b"], [[0], [1], [2], [3]]),
    # a block held by both (a replica) goes where it evens the load: nothing moves
    ([10] * 3, ["ab", "a", "a"], ["a", "b"], [[0], [1, 2]]),
    # no workers yet
    ([10] * 2, ["a", "a"], [], [[0], [1]]),
])
def test_partition(rows, holders, slots, want):
    assert jgd.partition(rows, [set(h) for h in holders], slots) == want


def test_jitgrad_imports_without_dask():
    import subprocess
    import sys
    code = ("import sys, jitgrad, jitgrad.dask; "
            "assert not any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
