"""Data-parallel gradients on a Dask cluster: `value_and_grad` and `grad` of a function that is
a sum over the rows of some of its arguments.

```python
import jitgrad.dask as jgd
vg = jgd.value_and_grad(data_term, wrt=(0, 1, 2), shard="x")
value, grads = vg(alphas, means, icf, X)      # X: a Dask array chunked along axis 0
```

How a call runs:

* On the client, jitgrad builds and emits the gradient's source for the signature of one block
  (as `jitgrad.grad` would for a NumPy call), without compiling it. The source is a
  self-contained module (NumPy, Numba, `jitgrad.runtime`), keyed by the hash of its text.
* The first call with a new source registers it on every worker (a `distributed.WorkerPlugin`,
  so workers that join later, or that replace a dead one, get it too). A worker compiles it the
  first time a block needs it, or loads it from its Numba disk cache, and keeps the compiled
  entry in a registry (`_KERNELS`) keyed by that hash: every later block and call reuses it.
  Tasks carry the key, never a function object.
* Blocks already in worker memory (a persisted or scattered Dask array) are run in groups, one
  task per worker thread (`partition`): each group is the blocks its worker holds, balanced to
  within half a block of an equal share of the rows (a block moves only when that evens the
  load), and sums its blocks in block order. Dask places each group where its blocks are; the
  group needs no other task to start. Blocks not in memory yet (a lazy array: `from_zarr`,
  `map_blocks`) are one task each, computed and released one by one as Dask schedules them.
* The other arguments travel inside the tasks when they are small (`EMBED_BYTES`), else as one
  task result per call that each worker fetches once. Group results are summed on the workers in
  a tree of fixed shape (``split_every`` at a time, in order of their first block) until at
  most ``split_every`` partial sums of at most `CLIENT_SUM_BYTES` in all are left, which the
  client adds in the same order (a last sum task on a worker would cost one more scheduler
  round trip). Per-block results never travel; with the defaults the client receives at most 8
  partial sums. The graph of a call is fixed when it is sent: a group re-run after its worker
  died gives the same bits; a later call after blocks moved may differ in the last bits
  (another grouping, another order of the sum).
* Kernels are compiled with ``nogil=True`` (every jitgrad build is): while a block computes,
  the worker's event loop keeps serving its peers' transfers and the scheduler's heartbeats.

The contract: ``f`` is additive over the rows of the ``shard`` arguments (its value on all rows
is the sum of its values on blocks of rows; then so are its gradients). The user promises it;
``check=True`` verifies it on each call on the first two blocks (value and gradients of the two
blocks, summed, against those of the two blocks joined) and raises `AdditivityError` otherwise.

Dask is imported only here, only when a call needs it: ``import jitgrad`` works without it.
"""

from __future__ import annotations

import hashlib
import threading
import uuid

import numpy as np

from . import api as _api
from . import compile as _compile
from .errors import JitgradError, SignatureError

__all__ = ["AdditivityError", "DaskGradFunction", "grad", "value_and_grad"]


class AdditivityError(JitgradError, ValueError):
    """``check=True`` found that the function is not a sum over the rows of its shard
    arguments: its value or gradients on two blocks joined differ from the sum on each."""


# ------------------------------------------------------------------------- worker side

_LOCK = threading.Lock()
_SOURCES: dict[str, tuple] = {}  # key -> (stem, source, names), registered by the plugin
_KERNELS: dict[str, object] = {}  # key -> compiled entry
STATS = {"loaded": 0}  # kernels this process compiled or loaded from disk (for tests)


def _register(key: str, spec: tuple) -> None:
    with _LOCK:
        _SOURCES.setdefault(key, spec)


def _kernel(key: str):
    """The compiled entry for ``key``: compiled (or loaded from the disk cache) once per
    process, then reused."""
    entry = _KERNELS.get(key)
    if entry is not None:
        return entry
    with _LOCK:
        entry = _KERNELS.get(key)
        if entry is None:
            spec = _SOURCES.get(key)
            if spec is None:
                raise JitgradError(f"jitgrad.dask: kernel {key} was not registered on this "
                                   "worker (is the client connected to this scheduler?)")
            stem, source, names = spec
            _, fns = _compile.load(stem, source, names, inline=names[:2])
            entry = _KERNELS[key] = fns[names[2]]
            STATS["loaded"] += 1
    return entry


def _args(params: tuple, blocks) -> list:
    """The entry's arguments: ``params`` is (shard positions, arguments with None there)."""
    positions, args = params
    args = list(args)
    for k, b in zip(positions, blocks):
        args[k] = b
    return args


def _group(key: str, params: tuple, n: int, *blocks):
    """(value, gradients) summed over some blocks, in the order given: ``blocks`` is each
    block's ``n`` shard arrays, block after block."""
    entry = _kernel(key)
    total = None
    for i in range(0, len(blocks), n):
        out = entry(*_args(params, blocks[i:i + n]))
        total = out if total is None else _add(total, out)
    return total


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return a + b  # a new array (a task's result is never written into)


def _sum(*parts):
    """The sum of partial results (value, gradients), in the order given."""
    total = parts[0]
    for p in parts[1:]:
        total = _add(total, p)
    return total


def _block_keys(a) -> list:
    """The keys of a Dask array's blocks along axis 0 (it has one chunk along the others)."""
    keys = a.__dask_keys__()
    for _ in range(a.ndim - 1):
        keys = [k[0] for k in keys]
    return keys


def _leaves(x):
    if isinstance(x, tuple):
        for y in x:
            yield from _leaves(y)
    else:
        yield np.asarray(x, dtype=np.float64)


def relative_difference(a, b) -> float:
    """The largest, over the value and each gradient, of ‖a − b‖ / ‖b‖ (the norm of the
    difference when ‖b‖ is 0)."""
    worst = 0.0
    for x, y in zip(_leaves(a), _leaves(b)):
        scale = float(np.linalg.norm(y))
        diff = float(np.linalg.norm(x - y))
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def _check(key: str, params: tuple, n: int, *blocks):
    """(‖f(b0) + f(b1) − f(b0 ∪ b1)‖ relative, rows in b0, rows in b1) for the first two
    blocks of each shard argument (``blocks`` is the first ``n`` blocks, then the next ``n``)."""
    entry = _kernel(key)
    first, second = blocks[:n], blocks[n:]
    both = [np.concatenate((x, y)) for x, y in zip(first, second)]
    split = _add(entry(*_args(params, first)), entry(*_args(params, second)))
    joined = entry(*_args(params, both))
    return relative_difference(split, joined), len(first[0]), len(second[0])


def _plugin(key: str, spec: tuple):
    """A WorkerPlugin that registers one generated source on every worker, present and
    future. Made here so that importing this module does not import Distributed."""
    from distributed import WorkerPlugin

    class JitgradKernel(WorkerPlugin):
        def __init__(self, key, spec):
            self.key = key
            self.spec = spec

        def setup(self, worker):
            _register(self.key, self.spec)  # jitgrad.dask's, pickled by reference

    return JitgradKernel(key, spec)


_REGISTERED: set = set()  # (client id, key): sources this process registered on a cluster

# Other arguments up to this many bytes in all travel inside each task; larger ones as one task
# result per call, fetched once by each worker that needs it (a round trip before it starts).
EMBED_BYTES = 1 << 20
# The client adds the last partial sums itself when there are at most ``split_every`` of them
# and they hold at most this many bytes in all: one more task on a worker costs a scheduler
# round trip (measured 7.5 ms, most of it Dask's batching of scheduler-to-worker messages).
CLIENT_SUM_BYTES = 1 << 20


def partition(rows, holders, slots) -> list[list[int]]:
    """Blocks into groups, one per worker thread, from where their data is.

    ``rows[i]`` is block i's number of rows, ``holders[i]`` the workers that hold it (empty if
    it is not in memory), ``slots`` one worker address per thread. Each slot first takes blocks
    its worker holds (blocks held by one worker first, each in block order) while it stays
    within half a block of an equal share of the held rows; the held blocks left over go, in
    block order, to the least-loaded slot (one whose worker holds the block first among
    equals). Blocks that no worker holds are a group each. Returns the non-empty groups, each in block order, ordered by first block."""
    held = [i for i, h in enumerate(holders) if h]
    groups: list[list[int]] = [[i] for i, h in enumerate(holders) if not h]
    if held and slots:
        share = sum(rows[i] for i in held) / len(slots)
        load = [0] * len(slots)
        taken: list[list[int]] = [[] for _ in slots]
        left = []
        for i in sorted(held, key=lambda i: (len(holders[i]), i)):
            local = [s for s, w in enumerate(slots) if w in holders[i]]
            s = min(local, key=lambda s: (load[s], s), default=None)
            if s is not None and load[s] + rows[i] / 2 <= share:
                load[s] += rows[i]
                taken[s].append(i)
            else:
                left.append(i)
        for i in sorted(left):
            s = min(range(len(slots)), key=lambda s: (load[s], slots[s] not in holders[i], s))
            load[s] += rows[i]
            taken[s].append(i)
        groups += [sorted(t) for t in taken if t]
    elif held:
        groups += [[i] for i in held]
    return sorted(groups)


# ------------------------------------------------------------------------- client side


class DaskGradFunction:
    """The gradient (and value) of a function additive over the rows of its ``shard``
    arguments, computed block by block on a Dask cluster. See `value_and_grad`."""

    def __init__(self, fn, wrt=0, *, shard, with_value: bool = True, check: bool = False,
                 client=None, split_every: int = 8):
        src = fn.fn if isinstance(fn, _api.GradFunction) else fn
        self._grad = _api.GradFunction(src, wrt, with_value=True)  # blocks always give values
        self.with_value = with_value
        self.check = check
        self.client = client
        if split_every < 2:
            raise ValueError("split_every must be at least 2")
        self.split_every = split_every
        names = shard if isinstance(shard, (tuple, list)) else (shard,)
        if not names:
            raise SignatureError("shard is empty: name the arguments split along axis 0")
        self.shard = sorted({self._grad._position(s) for s in names})
        both = [self._grad.param_names[k] for k in self.shard if k in self._grad.wrt]
        if both:
            raise SignatureError(f"cannot differentiate with respect to a shard argument "
                                 f"({', '.join(both)}): its gradient is not a sum over blocks")
        self._specs: dict = {}  # (types, assume_sizes) -> (key, Generated)
        self._held = None  # the last call's futures (see __call__)
        self.last_key: str | None = None
        self.last_groups: list | None = None  # the blocks of each task of the last call

    def __repr__(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        wrt = [self._grad.param_names[k] for k in self._grad.wrt]
        shard = [self._grad.param_names[k] for k in self.shard]
        return (f"<jitgrad.dask.{kind} of {self._grad.src.qualname} wrt {', '.join(wrt)}, "
                f"shard {', '.join(shard)}>")

    def source(self) -> str:
        """The generated module the workers ran for the last call."""
        if self.last_key is None:
            raise JitgradError("no call yet")
        return next(g.source for k, g in self._specs.values() if k == self.last_key)

    # -- the call ------------------------------------------------------------------------

    def _client(self):
        if self.client is not None:
            return self.client
        from distributed import get_client

        try:
            return get_client()
        except ValueError:
            raise JitgradError("jitgrad.dask needs a Dask client: create one first "
                               "(distributed.Client(...)) or pass client=") from None

    def _shards(self, args, client) -> list:
        """The shard arguments as Dask arrays with one chunk along every axis but the first,
        and the same chunks along the first."""
        import dask.array as da

        arrays = []
        for k in self.shard:
            a = args[k]
            name = self._grad.param_names[k]
            if isinstance(a, np.ndarray):
                n = max(1, sum(client.nthreads().values()))
                a = da.from_array(a, chunks=(max(1, -(-a.shape[0] // n)),) + a.shape[1:])
            elif not isinstance(a, da.Array):
                raise SignatureError(f"shard argument {name!r} is a {type(a).__name__}; pass "
                                     "a Dask array (or a NumPy array) split along axis 0")
            if a.ndim == 0:
                raise SignatureError(f"shard argument {name!r} is 0-d: it has no rows")
            if any(n != 1 for n in a.numblocks[1:]):
                a = a.rechunk({ax: -1 for ax in range(1, a.ndim)})
            arrays.append(a)
        rows = {a.shape[0] for a in arrays}
        if len(rows) > 1:
            raise SignatureError("the shard arguments have different numbers of rows: "
                                 + ", ".join(str(a.shape[0]) for a in arrays))
        chunks = arrays[0].chunks[0]
        return [a if a.chunks[0] == chunks else a.rechunk({0: chunks}) for a in arrays]

    @staticmethod
    def _holders(client, shards) -> list[set]:
        """For each block, the workers that hold every shard argument's block (empty when some
        block is not in memory: a lazy array)."""
        from distributed import futures_of

        futures = futures_of(shards)
        who = client.who_has(futures) if futures else {}
        holders = None
        for a in shards:
            sets = [set(who.get(k, ())) for k in _block_keys(a)]
            holders = sets if holders is None else [h & s for h, s in zip(holders, sets)]
        return holders

    def _spec(self, types: tuple, examples: list) -> tuple:
        """(key, Generated) for this signature: the build with size assumptions while every
        block's shapes meet them, else the general one."""
        spec = self._specs.get((types, True))
        if spec is not None and not all(_api._sizes_hold(spec[1].graph_ir, a) for a in examples):
            spec = None
        if spec is None:
            spec = self._specs.get((types, False))
        if spec is None:
            g = self._grad.generate(types, examples=examples)
            key = hashlib.sha256(g.source.encode()).hexdigest()[:20]
            spec = self._specs[(types, g.assume_sizes)] = (key, g)
        return spec

    def __call__(self, *args, **kwargs):
        import dask

        grad = self._grad
        if kwargs or len(args) != grad.n_params:
            args = grad._bind(args, kwargs)
        client = self._client()
        shards = self._shards(args, client)
        nblocks = len(shards[0].chunks[0])

        # The signature of a block, and a stand-in for each block's shapes (no data).
        def example(rows):
            ex = list(args)
            for k, a in zip(self.shard, shards):
                ex[k] = np.broadcast_to(np.zeros((), a.dtype), (rows,) + a.shape[1:])
            return ex
        examples = [example(r) for r in sorted(set(shards[0].chunks[0]))]
        types = grad.types_of(examples[0])
        key, gen = self._spec(types, examples)
        self.last_key = key
        if (client.id, key) not in _REGISTERED:
            client.register_plugin(_plugin(key, (gen.stem, gen.source, gen.names)),
                                   name=f"jitgrad-{key}")
            _REGISTERED.add((client.id, key))

        others = [None if k in self.shard
                  else a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a
                  for k, a in enumerate(args)]
        call = uuid.uuid4().hex
        params = (self.shard, others)
        if sum(a.nbytes for a in others if isinstance(a, np.ndarray)) > EMBED_BYTES:
            params = dask.delayed(params, traverse=False, name=f"jitgrad-args-{call}")
        blocks = list(zip(*(a.to_delayed(optimize_graph=True).ravel() for a in shards)))
        groups = partition(shards[0].chunks[0], self._holders(client, shards),
                           [w for w, t in sorted(client.nthreads().items()) for _ in range(t)])
        self.last_groups = groups
        run = dask.delayed(_group, pure=True)
        level = [run(key, params, len(shards), *(b for i in g for b in blocks[i]),
                     dask_key_name=f"jitgrad-group-{key}-{g[0]}-{call}") for g in groups]
        # Sum on the workers until what is left is few and small enough for the client to add.
        partial = 8 + sum(8 * np.size(args[k]) for k in grad.wrt)  # bytes of one result
        add = dask.delayed(_sum, pure=True)
        depth = 0
        while len(level) > 1 and (len(level) > self.split_every
                                  or len(level) * partial > CLIENT_SUM_BYTES):
            depth += 1
            level = [add(*level[i:i + self.split_every],
                         dask_key_name=f"jitgrad-sum-{depth}-{i}-{call}")
                     for i in range(0, len(level), self.split_every)]
        wanted = list(level)
        if self.check and nblocks >= 2:
            wanted.append(dask.delayed(_check, pure=True)(key, params, len(shards), *blocks[0],
                                                          *blocks[1]))
        futures = client.compute(wanted)
        # Keep this call's futures until the next call has sent its graph: releasing them now
        # would put a message on the client's batched stream, which holds the next call's graph
        # back for up to its 10 ms interval.
        self._held = futures
        results = client.gather(futures, direct=True)
        if self.check and nblocks >= 2:
            diff, r0, r1 = results.pop()
            if not diff <= 1e-9:  # also NaN
                raise AdditivityError(
                    f"{grad.src.qualname} is not a sum over the rows of "
                    f"{', '.join(grad.param_names[k] for k in self.shard)}: on the first two "
                    f"blocks ({r0} and {r1} rows) the value and gradients of the blocks joined "
                    f"differ from their sum by {diff:.3g} (relative)")
        out = _sum(*results)
        post = grad._post([_api._converter(args[k]) for k in grad.wrt])
        if post is not None:
            out = post(out)
        return out if self.with_value else out[1]


def value_and_grad(fn=None, wrt=0, *, shard, check: bool = False, client=None,
                   split_every: int = 8) -> DaskGradFunction:
    """``(value, gradients)`` of ``fn``, computed on a Dask cluster block by block.

    ``shard`` names the arguments (by name or position, one or a tuple) that are Dask arrays
    split along axis 0 (NumPy arrays are split into one block per worker thread); every other
    argument goes to each worker once per call. ``fn`` must be additive over their rows; with
    ``check=True`` each call verifies it on the first two blocks. ``wrt`` is as in
    `jitgrad.grad` (it may not name a shard argument). The client is ``client`` or the current
    one (``distributed.get_client()``); results are NumPy values, summed on the workers
    ``split_every`` at a time.
    """
    def make(f):
        return DaskGradFunction(f, wrt, shard=shard, with_value=True, check=check,
                                client=client, split_every=split_every)
    return make if fn is None else make(fn)


def grad(fn=None, wrt=0, *, shard, check: bool = False, client=None,
         split_every: int = 8) -> DaskGradFunction:
    """`value_and_grad` without the value."""
    def make(f):
        return DaskGradFunction(f, wrt, shard=shard, with_value=False, check=check,
                                client=client, split_every=split_every)
    return make if fn is None else make(fn)
