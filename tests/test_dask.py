"""`jitgrad.dask` on a real `distributed.LocalCluster`: 2 worker processes, 1 thread each.

The cluster's results equal one process's within 1e-12 (relative norm) and central differences
and JAX (where installed) per entry, kernels are compiled once per worker and reused, a
function that is not a sum over rows is refused by default (by reading its code, or by the
numeric check on the first call), and a worker killed in the middle of a call changes
nothing."""

import math
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from fd import numeric_grad

import jitgrad as jg
import jitgrad.dask as jgd
from jitgrad.core.errors import SignatureError


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
    vg(alphas, means, log_prec, X)  # the first call's check may copy blocks to other workers
    held = client.who_has(X)  # where the blocks are now (a block may be held twice)
    with distributed.get_task_stream(client) as stream:
        out = vg(alphas, means, log_prec, X)
    assert close(out, jg.value_and_grad(gmm_data)(alphas, means, log_prec, x))
    groups = [t["key"] for t in stream.data if "jitgrad-group" in str(t["key"])]
    assert len(groups) == 2 == len(vg.last_groups), (groups, vg.last_groups)
    assert sorted(i for g in vg.last_groups for i in g) == list(range(8))
    assert [len(g) for g in vg.last_groups] == [4, 4]
    for g in vg.last_groups:  # each group is one worker's blocks: some worker holds them all
        holders = [set(held[X.__dask_keys__()[i][0]]) for i in g]
        assert set.intersection(*holders), (g, holders)


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


# ------------------------------------------------------------- not a sum over rows: refused

def mean_squares(w, x, y):
    """A mean: the blocks' means added up would be B times too large."""
    r = x @ w - y
    return np.mean(r * r)


def squares_over_n(w, x, y):
    r = x @ w - y
    return 0.5 * np.sum(r * r) / len(x)


def squares_plus_ridge(w, x, y):
    """A sum over rows plus a regulariser: added once per block."""
    r = x @ w - y
    return np.sum(r * r) + 0.1 * np.sum(w * w)


def log_of_total(w, x, y):
    return math.log(np.sum(np.exp(x @ w - y)))


def worst_row(w, x, y):
    """A max over rows: the reading only notes it (it can be a sum, see `stable_sum_of_exp`);
    the numeric check refuses it."""
    r = x @ w - y
    return np.max(r * r)


def squares_plus_ridge_in_a_loop(w, x, y):
    """The regulariser accumulated in a loop, which the reading does not follow: at w = 0 its
    value and gradient are 0, so only the perturbed part of the check sees it."""
    ridge = 0.0
    for j in range(w.shape[0]):
        ridge += w[j] * w[j]
    r = x @ w - y
    return np.sum(r * r) + ridge


def square_of_loop_total(w, x, y):
    """(sum of rows)^2, the sum accumulated in a loop (not read)."""
    t = 0.0
    for i in range(x.shape[0]):
        t += y[i] * w[0]
    return t * t


def stable_sum_of_exp(w, x, y):
    """sum(exp(z)), computed with the max over rows subtracted and multiplied back: a sum over
    rows, which the numeric check accepts though the code takes a max over rows."""
    z = 0.1 * (x @ w - y)
    m = np.max(z)
    return np.sum(np.exp(z - m)) * math.exp(m)


def regression(n=1000, d=3, seed=2):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(d), rng.standard_normal((n, d)), rng.standard_normal(n)


@pytest.mark.parametrize("fn, what, line", [
    (mean_squares, "a division by the number of rows of x", "return np.mean(r * r)"),
    (squares_over_n, "a division by the number of rows of x", "/ len(x)"),
    (squares_plus_ridge, "a term that does not depend on the rows of x (a regulariser?)",
     "+ 0.1 * np.sum(w * w)"),
    (log_of_total, "np.log of a sum over the rows of x", "math.log(np.sum("),
])
def test_code_that_is_not_a_sum_over_rows_is_refused_by_default(client, fn, what, line):
    w, x, y = regression()
    X, Y = da.from_array(x, chunks=250), da.from_array(y, chunks=250)
    with (distributed.get_task_stream(client) as stream,
          pytest.raises(jgd.AdditivityError, match="not a sum over the rows of x, y") as e):
        jgd.value_and_grad(fn, shard=("x", "y"))(w, X, Y)
    assert what in e.value.message and "divide by the number of rows" in e.value.message
    assert e.value.loc.lineno > 0 and line in e.value.loc.line
    assert not stream.data  # refused before anything ran on the cluster
    with pytest.raises(jgd.AdditivityError, match=re.escape(what)):
        jgd.grad(fn, shard=("x", "y"), check=True)(w, X, Y)


@pytest.mark.parametrize("fn, w0, part", [
    (worst_row, None, "the rows joined differ from the sum over each"),
    (squares_plus_ridge_in_a_loop, 0.0, "with every float argument moved by up to 5%"),
])
def test_numeric_check_refuses_on_the_first_call_by_default(client, fn, w0, part):
    w, x, y = regression()
    if w0 is not None:
        w = np.full_like(w, w0)  # the regulariser and its gradient are 0 here
    X, Y = da.from_array(x, chunks=250), da.from_array(y, chunks=250)
    vg = jgd.value_and_grad(fn, shard=("x", "y"))
    with pytest.raises(jgd.AdditivityError, match="not a sum over the rows of x, y") as e:
        vg(w, X, Y)
    assert part in e.value.message, e.value.message
    if fn is worst_row:
        assert "jitgrad's reading of the code found np.max over the rows of x" in e.value.message
    with pytest.raises(jgd.AdditivityError):
        vg(w, X, Y)  # a failed check is not a pass: the next call checks again


def test_numeric_check_splits_a_block_in_halves(client):
    """Block 1's rows sum to exactly 0, so (sum of rows)^2 of blocks 0 and 1 joined equals the
    sum over each, at the arguments and perturbed alike: the halves of block 0 differ."""
    w, x, _ = regression(n=400)
    y = np.random.default_rng(3).standard_normal(400)
    y[100:200] = np.tile([1.0, -1.0], 50)
    X, Y = da.from_array(x, chunks=100), da.from_array(y, chunks=100)
    with pytest.raises(jgd.AdditivityError, match="differ from the sum over its two halves"):
        jgd.value_and_grad(square_of_loop_total, shard=("x", "y"))(w, X, Y)


def test_squared_total_refused_by_default(client):
    alphas, means, log_prec, x = make(n=800)
    X = da.from_array(x, chunks=(200, 3))
    with pytest.raises(jgd.AdditivityError, match="rows joined differ from the sum over each"):
        jgd.grad(squared_total, wrt=0, shard="x")(alphas, means, log_prec, X)


def test_check_runs_on_the_first_call_per_signature_or_every_call(client):
    w, x, y = regression()
    X, Y = da.from_array(x, chunks=250).persist(), da.from_array(y, chunks=250).persist()
    want = jg.value_and_grad(weighted_squares, wrt=0)(w, 0.0, x, y)

    def checks(vg):
        with distributed.get_task_stream(client) as stream:
            assert close(vg(w, 0.0, X, Y), want)
        return sum("jitgrad-check" in str(t["key"]) for t in stream.data)

    first = jgd.value_and_grad(weighted_squares, shard=("x", "y"))
    assert [checks(first) for _ in range(2)] == [1, 0]
    every = jgd.value_and_grad(weighted_squares, shard=("x", "y"), check=True)
    assert [checks(every) for _ in range(2)] == [1, 1]
    never = jgd.value_and_grad(weighted_squares, shard=("x", "y"), check=False)
    assert checks(never) == 0
    with pytest.raises(ValueError, match="check must be"):
        jgd.value_and_grad(weighted_squares, shard="x", check="always")


def test_check_false_is_the_callers_promise(client):
    """Neither the reading nor the check: the blocks' results added up, as promised."""
    w, x, y = regression()
    X, Y = da.from_array(x, chunks=250), da.from_array(y, chunks=250)
    value = jgd.value_and_grad(mean_squares, shard=("x", "y"), check=False)(w, X, Y)[0]
    blocks = sum(mean_squares(w, x[i:i + 250], y[i:i + 250]) for i in range(0, 1000, 250))
    assert value == pytest.approx(blocks, rel=1e-12)


# ------------------------------------------------------------- sums over rows: independent oracles

def assert_entries_close(got, want, rtol, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    bad = np.abs(got - want) > rtol * np.maximum(np.abs(want), 1e-3 * np.max(np.abs(want)))
    assert not bad.any(), f"{what}: {got[bad]} against {want[bad]}"


def jax_or_skip():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_gmm_data(alphas, means, log_prec, x):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    n, d = x.shape
    r = jnp.exp(log_prec)[None] * (x[:, None, :] - means[None])
    lp = alphas + jnp.sum(log_prec[None] - 0.5 * r * r, axis=2)
    return n * (logsumexp(alphas) + 0.5 * d * jnp.log(2.0 * jnp.pi)) - jnp.sum(logsumexp(lp, 1))


def test_gmm_gradient_against_central_differences_and_jax(client):
    alphas, means, log_prec, x = make(n=600)
    X = da.from_array(x, chunks=(150, 3))
    value, grads = jgd.value_and_grad(gmm_data, wrt=(0, 1, 2), shard="x")(
        alphas, means, log_prec, X)
    args = (alphas, means, log_prec, x)
    assert value == pytest.approx(gmm_data(*args), rel=1e-12)
    for k, g in enumerate(grads):
        assert_entries_close(g, numeric_grad(gmm_data, args, k), 1e-6, f"argument {k}")
    jax = jax_or_skip()
    for k, g in enumerate(jax.grad(jax_gmm_data, argnums=(0, 1, 2))(*args)):
        assert_entries_close(grads[k], np.asarray(g), 1e-10, f"JAX, argument {k}")


def test_least_squares_and_stable_sum_against_central_differences_and_jax(client):
    w, x, y = regression()
    X, Y = da.from_array(x, chunks=250), da.from_array(y, chunks=250)
    got = {f: jgd.grad(f, wrt=0, shard=("x", "y"))(w, X, Y)
           for f in (stable_sum_of_exp, weighted_squares_no_b)}
    for f, g in got.items():
        assert_entries_close(g, numeric_grad(f, (w, x, y), 0), 1e-6, f.__name__)
    jax = jax_or_skip()
    import jax.numpy as jnp
    jax_fns = {stable_sum_of_exp: lambda w, x, y: jnp.sum(jnp.exp(0.1 * (x @ w - y))),
               weighted_squares_no_b: lambda w, x, y: 0.5 * jnp.sum((x @ w - y) ** 2)}
    for f, g in got.items():
        assert_entries_close(g, np.asarray(jax.grad(jax_fns[f])(w, x, y)), 1e-10, f.__name__)


def weighted_squares_no_b(w, x, y):
    r = x @ w - y
    return 0.5 * np.sum(r * r)


@pytest.mark.parametrize("fn, notes", [
    (gmm_data, []), (weighted_squares, []), (weighted_squares_no_b, []), (squared_total, []),
    (square_of_loop_total, []), (squares_plus_ridge_in_a_loop, []),
    (stable_sum_of_exp, ["np.max over the rows of x"]), (worst_row, ["np.max over the rows of x"]),
])
def test_reading_refuses_none_of_these(fn, notes):
    """Sums over rows, and non-sums the reading cannot see (a total or a regulariser in a loop)
    or only notes (a max over rows): the numeric check decides for them."""
    if fn in (gmm_data, squared_total):
        args, shard = make(n=50), "x"
    else:
        w, x, y = regression(n=50)
        args = (w, 0.0, x, y) if fn is weighted_squares else (w, x, y)
        shard = ("x", "y")
    vg = jgd.DaskGradFunction(fn, 0, shard=shard)
    types = vg._grad.types_of(args)
    assert [n for n, _ in vg._read_code(types, vg._grad.generate(types))] == notes


# ------------------------------------------------------------- generated losses: mean against sum

# A loss is a total over rows (BASES) with modifiers (MODIFIERS) applied in turn; it is a sum
# over rows exactly when its base and every modifier keep one.
TERMS = ["r * r", "np.log1p(r * r)", "np.exp(0.1 * r)"]
ROW_TERMS = {"r * r": "ri * ri", "np.log1p(r * r)": "math.log1p(ri * ri)",
             "np.exp(0.1 * r)": "math.exp(0.1 * ri)"}
RESIDUALS = ["x @ w - y", "np.tanh(x @ w) - y"]
ROW_RESIDUALS = {"x @ w - y": "x[i, 0] * w[0] + x[i, 1] * w[1] + x[i, 2] * w[2] - y[i]",
                 "np.tanh(x @ w) - y":
                 "math.tanh(x[i, 0] * w[0] + x[i, 1] * w[1] + x[i, 2] * w[2]) - y[i]"}
BASES = {  # name: (is a sum over rows, total = ...)
    "sum": (True, "np.sum({t})"),
    "loop sum": (True, None),
    "mean": (False, "np.mean({t})"),
    "sum / len(x)": (False, "np.sum({t}) / len(x)"),
    "loop sum / x.shape[0]": (False, None),
    "max": (False, "np.max({t})"),
}
MODIFIERS = {
    "scaled": (True, "2.5 * total"),
    "plus a count of rows": (True, "total + 0.5 * x.shape[0]"),
    "plus a ridge": (False, "total + 0.1 * np.sum(w * w)"),
    "plus a ridge in a loop": (False, None),
    "squared": (False, "total ** 2"),
    "log": (False, "math.log(1.0 + total)"),
}


def generated_loss(rng, index, base):
    """(source of ``loss_<index>(w, x, y)``, whether it is a sum over rows, its description):
    ``base`` with a random residual, term and 0 to 2 modifiers."""
    residual, term = RESIDUALS[rng.integers(2)], TERMS[rng.integers(3)]
    weights = np.array([3.0 if MODIFIERS[m][0] else 1.0 for m in MODIFIERS])  # sums kept
    modifiers = [list(MODIFIERS)[k] for k in rng.choice(len(MODIFIERS), rng.integers(3),
                                                         replace=False, p=weights / weights.sum())]
    lines = [f"def loss_{index}(w, x, y):"]
    if base.startswith("loop"):
        lines += ["    total = 0.0", "    for i in range(x.shape[0]):",
                  f"        ri = {ROW_RESIDUALS[residual]}",
                  f"        total += {ROW_TERMS[term]}"]
        if base != "loop sum":
            lines.append("    total = total / x.shape[0]")
    else:
        lines += [f"    r = {residual}", f"    total = {BASES[base][1].format(t=term)}"]
    for m in modifiers:
        if m == "plus a ridge in a loop":
            lines += ["    for j in range(w.shape[0]):", "        total += 0.1 * w[j] * w[j]"]
        else:
            lines.append(f"    total = {MODIFIERS[m][1]}")
    lines.append("    return total")
    is_sum = BASES[base][0] and all(MODIFIERS[m][0] for m in modifiers)
    what = f"{base} of {term} with r = {residual}" + "".join(f", {m}" for m in modifiers)
    return "\n".join(lines) + "\n", is_sum, what


def test_generated_mean_and_sum_losses(client, tmp_path):
    """Losses drawn from sums, means, maxima, regularisers, squares and logs of totals, written
    vectorised and as loops (3 of each base). Each goes through jitgrad.dask with the default
    check, on 4 blocks: a sum over rows must come back with central differences' gradient on all rows
    (each entry within 1e-6); anything else must be refused. Counts: run, refused, wrong."""
    import importlib.util

    rng = np.random.default_rng(21)
    w, x, y = regression(n=400)
    X, Y = da.from_array(x, chunks=100), da.from_array(y, chunks=100)
    programs = [generated_loss(rng, k, base) for k, base in enumerate(
        b for b in BASES for _ in range(3))]
    sums = sum(is_sum for _, is_sum, _ in programs)
    assert 2 <= sums <= 6, [what for _, _, what in programs]  # both kinds are drawn
    text = "import math\n\nimport numpy as np\n\n\n" + "\n\n".join(p for p, _, _ in programs)
    (tmp_path / "generated_losses.py").write_text(text)
    spec = importlib.util.spec_from_file_location("generated_losses", tmp_path /
                                                  "generated_losses.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    refused, wrong = [], []
    for k, (_, is_sum, what) in enumerate(programs):
        fn = getattr(module, f"loss_{k}")
        try:
            value, g = jgd.value_and_grad(fn, shard=("x", "y"))(w, X, Y)
        except jgd.AdditivityError as e:
            refused.append((what, "reading" if e.loc is not None else "numeric check"))
            if is_sum:
                wrong.append(f"{what}: refused, though a sum over rows")
            continue
        want = numeric_grad(fn, (w, x, y), 0)
        off = np.abs(g - want) > 1e-6 * np.abs(want) + 1e-9 * max(1.0, abs(value))
        if not is_sum or off.any() or value != pytest.approx(fn(w, x, y), rel=1e-12):
            wrong.append(f"{what}: {value}, {g} against {fn(w, x, y)}, {want}")
    by_reading = sum(how == "reading" for _, how in refused)
    print(f"\n{len(programs)} generated losses ({sums} sums over rows): {len(refused)} "
          f"refused ({by_reading} by the reading, {len(refused) - by_reading} by the numeric "
          f"check), {len(wrong)} wrong")
    for what, how in refused:
        print(f"  refused by the {how}: {what}")
    assert not wrong, "\n".join(wrong)
    assert len(refused) == len(programs) - sums


def tree_squares(params, x, y):
    return np.sum((x @ params["w"] + params["b"] * params["steps"] - y) ** 2)


def test_a_dict_of_parameters(client):
    """A tree argument (`core.pytree`): the blocks take its leaves, the sum comes back as the
    tree; checked against central differences, not against jitgrad in one process."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((600, 3)), rng.standard_normal(600)
    params = {"w": rng.standard_normal(3), "b": 0.2, "steps": 3}
    g = jgd.grad(tree_squares, shard=("x", "y"))(params, da.from_array(x, chunks=(200, 3)), y)
    assert set(g) == {"w", "b", "steps"} and g["steps"] is None
    gw = numeric_grad(lambda w: tree_squares({**params, "w": w}, x, y), (params["w"],), 0)
    gb = numeric_grad(lambda b: tree_squares({**params, "b": b}, x, y), (0.2,), 0)
    np.testing.assert_allclose(g["w"], gw, rtol=1e-6)
    assert g["b"] == pytest.approx(gb, rel=1e-6)
