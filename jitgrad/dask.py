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
  self-contained module (NumPy, Numba, `jitgrad.backend.numba.runtime`), keyed by the hash of its text.
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

The contract: ``f`` is a sum over the rows of the ``shard`` arguments (its value on all rows
is the sum of its values on blocks of rows; then so are its gradients). A function that is not
(a mean, a regulariser added, a max over rows, a square of a total) would come back wrong, so
by default (``check="first"``) it is refused with `AdditivityError`, in two ways:

* **Reading the code**, once per build, before anything runs (`_RowReading`): a division by
  the number of rows (``np.mean`` over them, ``/ x.shape[0]``, ``/ len(x)``), a non-linear
  function of a sum over rows (``np.sum(r) ** 2``, ``np.log(np.sum(...))``, a product of two
  such sums), or a term that does not depend on the rows added to a sum over them (a
  regulariser). The message names the line. The reading follows array operations, not loops:
  a sum accumulated in a loop is not read (the numeric check sees it).
* **A numeric check** on the first call of each compiled signature (``check=True``: on every
  call), in one task beside the call's own: on the first `CHECK_ROWS` rows ``a`` of block 0 and
  ``b`` of block 1, the value and gradients of ``a ∪ b`` against the sum over ``a`` and ``b``,
  of ``a`` against the sum over its two halves, and of ``a ∪ b`` against the sum again with
  every float argument moved by up to `PERTURBATION` (a term that vanishes at the given
  arguments, a regulariser at w = 0, does not vanish there). Each must agree within
  `CHECK_TOLERANCE` relative to the norms of the parts. A call with one block is right
  whatever ``f`` is, and checks nothing.

What neither sees: a function whose failure to be a sum vanishes on the sample rows and at both
points (a penalty that is exactly 0 near the given arguments, a branch on the number of rows
that the samples do not take), a non-sum whose effect is below the tolerance there, and the
perturbed part when the function raises at the moved arguments (it then says nothing). Later
calls of a checked signature are not checked (``check=True`` checks each). ``check=False``
turns both off: the caller promises.

Dask is imported only here, only when a call needs it: ``import jitgrad`` works without it.
"""

from __future__ import annotations

import hashlib
import threading
import uuid

import numpy as np

from jitgrad import api as _api
from jitgrad import pipeline
from jitgrad.core import ir, ops, pytree
from jitgrad.core.errors import JitgradError, SignatureError, api_boundary
from jitgrad.prims.primitives import PRIMITIVES as _PRIMITIVES

__all__ = ["AdditivityError", "DaskGradFunction", "grad", "value_and_grad"]


class AdditivityError(JitgradError, ValueError):
    """The function is not a sum over the rows of its shard arguments, so adding up its blocks'
    results would give a wrong value and gradient: its code divides by the number of rows (a
    mean), applies a non-linear function to a sum over rows, or adds a term without rows to one
    (found when it is built), or its value or gradients on sample rows joined differ from the
    sum over them (found by the numeric check). See `DaskGradFunction`."""


# The numeric check (`_check`) runs on at most this many rows of each of the first two blocks.
CHECK_ROWS = 1024
# Its tolerance: ‖sum of the parts − the rows joined‖ / (sum of their norms), for the value and
# each gradient. A sum over rows differs by rounding only (1e-16 to 1e-14 here).
CHECK_TOLERANCE = 1e-9
# The perturbed half of the check moves every float argument by up to this much (relative,
# plus as much absolute): a regulariser whose value and gradient vanish at the call's
# arguments (at w = 0) does not vanish there.
PERTURBATION = 0.05

ADVICE = ("jitgrad.dask adds up the value and gradients of blocks of rows, which is right only "
          "for a function that is a sum over its rows (a data term such as a negative "
          "log-likelihood): return that sum, and divide by the number of rows or add a "
          "regulariser on the client. If the function is a sum over rows nonetheless, "
          "check=False turns the checks off.")


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
            _, fns = pipeline.load(stem, source, names)
            entry = _KERNELS[key] = fns[names[-1]]
            STATS["loaded"] += 1
    return entry


def _args(params: tuple, blocks) -> list:
    """The entry's arguments: ``params`` is (shard positions, arguments with None there)."""
    positions, args = params
    args = list(args)
    for k, b in zip(positions, blocks):
        args[k] = b
    return pipeline.flatten(args)  # a tree argument's leaves in its place (`core.pytree`)


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


def _head(block, rows: int):
    """The first ``rows`` rows of a block (what the check moves between workers)."""
    return block[:rows]


def _discrepancy(parts, joined) -> float:
    """How far the sum of ``parts`` (each a (value, gradients) result) is from ``joined``: the
    largest, over the value and each gradient, of ‖Σ parts − joined‖ / (Σ ‖part‖ + ‖joined‖),
    in [0, 1]. Entries that are not finite must be the same on both sides (NaN where NaN), and
    are left out of the norms; 1 if they are not."""
    worst = 0.0
    for *xs, y in zip(*(list(_leaves(p)) for p in parts), _leaves(joined)):
        total = sum(xs)
        bad_total, bad_y = ~np.isfinite(total), ~np.isfinite(y)
        if (np.any(bad_total != bad_y)
                or not np.array_equal(total[bad_total], y[bad_y], equal_nan=True)):
            return 1.0
        ok = ~bad_y
        scale = sum(float(np.linalg.norm(x[ok])) for x in xs) + float(np.linalg.norm(y[ok]))
        diff = float(np.linalg.norm(total[ok] - y[ok]))
        worst = max(worst, diff / scale if scale > 0 else 0.0)
    return worst


def _check(key: str, params: tuple, perturbed: tuple, n: int, *blocks):
    """The numeric additivity check, on sample rows ``a`` and ``b`` (``blocks``: ``a``'s ``n``
    shard arrays, then ``b``'s): [(what, discrepancy)] for ``f(a) + f(b)`` against ``f(a ∪
    b)``, the two halves of ``a`` against ``a``, and ``a``, ``b`` against ``a ∪ b`` again at
    ``perturbed`` arguments (discrepancy None when the function raised there)."""
    entry = _kernel(key)
    a, b = list(blocks[:n]), list(blocks[n:])
    both = [np.concatenate((x, y)) for x, y in zip(a, b)]

    def f(p, rows):
        return entry(*_args(p, rows))

    fa = f(params, a)
    out = [("joined", _discrepancy((fa, f(params, b)), f(params, both)))]
    half = len(a[0]) // 2
    if half:
        out.append(("halves", _discrepancy((f(params, [x[:half] for x in a]),
                                            f(params, [x[half:] for x in a])), fa)))
    try:
        out.append(("perturbed", _discrepancy((f(perturbed, a), f(perturbed, b)),
                                              f(perturbed, both))))
    except Exception:  # noqa: BLE001 - outside the function's domain: this part says nothing
        out.append(("perturbed", None))
    return out


def _perturb(value, rng):
    """``value`` with every float in it moved by up to `PERTURBATION` · (1 + |value|)."""
    if isinstance(value, (tuple, list)):
        return type(value)(_perturb(v, rng) for v in value)
    if isinstance(value, dict):
        return {k: _perturb(v, rng) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        u = rng.uniform(-1.0, 1.0, value.shape)
        return (value + PERTURBATION * (1.0 + np.abs(value)) * u).astype(value.dtype)
    if isinstance(value, (float, np.floating)):
        return type(value)(value + PERTURBATION * (1.0 + abs(value)) * rng.uniform(-1.0, 1.0))
    return value


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


# ------------------------------------------------------------------------- reading the IR

# A sum over rows stays one through a `linear` primitive (neg, cast, copy) and through a product
# or quotient by what does not depend on the rows; of a `nonlinear` one (exp, a square, ...)
# it is a finding (`core.ops.Flags`).


class _RowReading:
    """What the forward graph does with the rows of the shard arguments, read once per build.

    Tracks, through the operations whose effect on rows it knows (elementwise arithmetic and
    functions, ``@``, sums and other reductions, transposes, shapes): arrays with a row axis
    (``rows``: variable -> that axis), counts of rows (``counts``: ``x.shape[0]``, the size of
    an array with rows, and integers computed from them), and sums over the rows (``sums``).
    Anything else that depends on the shard arguments is only ``dep``. ``findings`` are the
    operations that make the function not a sum over rows whatever the data: a division by a
    count of rows (``np.mean``, ``/ x.shape[0]``), a non-linear function of a sum over rows, and
    a term that does not depend on the rows added to a sum over them. ``notes`` are operations
    that usually make it not a sum (a max, min or product over the rows) but may not (a max
    subtracted for stability and added back): the numeric check decides, and names them."""

    def __init__(self, fn: ir.Function, shard_params: list):
        self.rows: dict = {}
        self.counts: set = set()
        self.sums: set = set()
        self.dep: set = set()
        self.findings: list = []  # (what, loc)
        self.notes: list = []
        self.name: dict = {}  # a variable with rows -> the shard argument they come from
        for p in shard_params:
            self.dep.add(p)
            self.name[p] = p.name
            if p.type.ndim:
                self.rows[p] = 0
        for s in ir.walk(fn.body):
            if isinstance(s, ir.Eqn):
                self._eqn(s)
            else:  # a loop's index, trip count and carried values, a branch's merges:
                self.dep.update(ir.defs(s))  # taken to depend on the rows, nothing more known

    def _source(self, atoms) -> str:
        for a in atoms:
            if a in self.name:
                return self.name[a]
        return "the shard arguments"

    def _eqn(self, e: ir.Eqn) -> None:
        ins = [a for a in e.ins if isinstance(a, ir.Var)]
        if not any(a in self.dep for a in ins):
            return  # does not depend on the rows
        for o in e.outs:
            self.dep.add(o)
            self.name[o] = self._source(ins)
        if not e.outs:
            return
        out = e.out
        prim = e.prim
        rows = [a for a in ins if a in self.rows]
        sums = [a for a in e.ins if a in self.sums]
        counts = [a for a in e.ins if a in self.counts]
        where = self._source(ins)
        if prim == "shape_dim":
            if e.ins[0] in self.rows and self.rows[e.ins[0]] == e.params["axis"]:
                self.counts.add(out)
        elif prim == "size":
            if rows:
                self.counts.add(out)
        elif ops.flags(prim).reduction and prim != "prod_axis":  # (np.prod(x, axis): not followed)
            x = e.ins[0]
            axis = e.params.get("axis")
            if x in self.rows:
                if axis is None or axis == self.rows[x]:
                    if prim == "sum":
                        self.sums.add(out)
                    else:
                        self.notes.append((f"np.{prim} over the rows of {where}", e.loc))
                elif out.type.ndim:
                    shift = 1 if axis < self.rows[x] and not e.params.get("keepdims") else 0
                    self.rows[out] = self.rows[x] - shift
            elif x in self.sums and prim == "sum":
                self.sums.add(out)
        elif prim == "transpose":
            x = e.ins[0]
            if x in self.rows and e.params.get("axes") is None and x.type.ndim == 2:
                self.rows[out] = 1 - self.rows[x]
        elif prim == "matmul":
            a, b = e.ins
            a_rows = self.rows.get(a) if isinstance(a, ir.Var) else None
            b_rows = self.rows.get(b) if isinstance(b, ir.Var) else None
            if a_rows == a.type.ndim - 1 and (b_rows == 0 or b not in self.dep):
                self.sums.add(out)  # contracted over the rows: a sum of per-row products
            elif a_rows == 0 and a.type.ndim == 2 and b not in self.dep:
                self.rows[out] = 0
            elif b_rows == 0 and a not in self.dep:
                self.sums.add(out)
        elif prim in _PRIMITIVES and _PRIMITIVES[prim].elementwise or ops.flags(prim).linear:
            self._elementwise(e, rows, sums, counts, where)

    def _elementwise(self, e, rows, sums, counts, where) -> None:
        out, prim = e.out, e.prim
        if prim == "div" and e.ins[1] in self.counts:
            self._find(f"a division by the number of rows of {where}", e)
            return
        if sums:
            self._of_sum(e, sums, where)
            return
        if rows:
            axes = {self.rows[a] + out.type.ndim - a.type.ndim for a in rows}
            if len(axes) == 1 and out.type.ndim:
                self.rows[out] = axes.pop()
            return
        flags = ops.flags(prim)
        if counts and out.type.ndim == 0 and (flags.counting or flags.linear
                                              or flags.extreme is not None):
            self.counts.add(out)  # integer arithmetic, a copy or cast, the larger or smaller

    def _of_sum(self, e, sums, where) -> None:
        """``e`` takes a sum over rows: it is one too, or a finding, or unknown."""
        out, prim = e.out, e.prim
        others = [a for a in e.ins if a not in sums]
        plain = all(not isinstance(a, ir.Var) or a not in self.dep for a in others)
        scaled = (prim == "mul" and len(sums) == 1 or prim == "div" and e.ins[0] in sums)
        if ops.flags(prim).linear or scaled and plain:
            self.sums.add(out)
        elif ops.flags(prim).additive:
            if all(a in self.sums or a in self.counts for a in e.ins):
                self.sums.add(out)
            elif plain and not all(isinstance(a, ir.Const) and a.value == 0 for a in others):
                self._find(f"a term that does not depend on the rows of {where} (a "
                           "regulariser?) added to a sum over them", e)
        elif prim == "mul" and (len(sums) == 2 or any(a in self.counts for a in others)):
            self._find(f"a product of a sum over the rows of {where} with another such sum "
                       "or the number of rows", e)
        elif prim == "div" and e.ins[1] in sums:
            self._find(f"a division by a sum over the rows of {where}", e)
        elif ops.flags(prim).nonlinear:
            name = {"pow": "a power", "square": "a square"}.get(prim, f"np.{prim}")
            self._find(f"{name} of a sum over the rows of {where}", e)

    def _find(self, what: str, e: ir.Eqn) -> None:
        self.findings.append((what, e.loc))


def read_rows(fn: ir.Function, shard_params: list) -> _RowReading:
    """What ``fn``'s forward graph does with the rows of ``shard_params`` (see `_RowReading`)."""
    return _RowReading(fn, shard_params)


# ------------------------------------------------------------------------- client side


class DaskGradFunction:
    """The gradient (and value) of a function that is a sum over the rows of its ``shard``
    arguments, computed block by block on a Dask cluster. See `value_and_grad`; ``check`` is
    ``"first"`` (read the code, check numerically on the first call of each compiled
    signature), True (read, and check every call) or False (neither); the module docstring
    says what the reading and the check find."""

    @api_boundary
    def __init__(self, fn, wrt=0, *, shard, with_value: bool = True, check="first",
                 client=None, split_every: int = 8):
        src = fn.fn if isinstance(fn, _api.GradFunction) else fn
        self._grad = _api.GradFunction(src, wrt, with_value=True)  # blocks always give values
        self.with_value = with_value
        if check not in ("first", True, False):
            raise ValueError(f"check must be 'first' (the default), True or False, not {check!r}")
        self.check = check if isinstance(check, str) else bool(check)
        self._read: dict = {}  # key -> the notes of the reading of its code (it found no fault)
        self._checked: set = set()  # keys whose numeric check passed
        self.client = client
        if split_every < 2:
            raise ValueError("split_every must be at least 2")
        self.split_every = split_every
        names = shard if isinstance(shard, (tuple, list)) else (shard,)
        if not names:
            raise SignatureError("shard is empty: name the arguments split along axis 0")
        self.shard = sorted({self._grad.position(s) for s in names})
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
        if spec is not None and not all(pipeline.sizes_hold(spec[1].graph_ir, a) for a in examples):
            spec = None
        if spec is None:
            spec = self._specs.get((types, False))
        if spec is None:
            g = self._grad.generate(types, examples=examples)
            key = hashlib.sha256(g.source.encode()).hexdigest()[:20]
            spec = self._specs[(types, g.assume_sizes)] = (key, g)
        return spec

    def _what(self) -> str:
        grad = self._grad
        return (f"{grad.src.qualname} is not a sum over the rows of "
                f"{', '.join(grad.param_names[k] for k in self.shard)}")

    def _read_code(self, types: tuple, gen) -> list:
        """Refuse a build whose code is clearly not a sum over rows (`_RowReading`); return the
        reading's notes (operations the numeric check should name if it fails)."""
        starts, n = [], 0
        for t in types:
            starts.append(n)
            n += pytree.n_leaves(t)
        reading = read_rows(gen.graph_ir, [gen.graph_ir.params[starts[k]] for k in self.shard])
        if reading.findings:
            what, loc = reading.findings[0]
            raise AdditivityError(f"{self._what()}: its code has {what}. {ADVICE}", loc)
        return reading.notes

    def _judge(self, key: str, found: list, sample: list) -> None:
        """Raise `AdditivityError` if the numeric check found a difference; else note that
        ``key`` passed."""
        a = f"the first {sample[0]} rows of block 0"
        b = f"the first {sample[1]} rows of block 1"
        for part, diff in found:
            if diff is None or diff <= CHECK_TOLERANCE:
                continue
            what = {
                "joined": f"on {a} and {b}, the value and gradients of the rows joined differ "
                          "from the sum over each",
                "halves": f"on {a}, the value and gradients differ from the sum over its two "
                          "halves",
                "perturbed": (f"with every float argument moved by up to "
                              f"{PERTURBATION:.0%}, on {a} and {b}, the value and gradients "
                              "of the rows joined differ from the sum over each (not at the "
                              "arguments given: a term that vanishes there, such as a "
                              "regulariser at 0?)"),
            }[part]
            notes = "".join(f" jitgrad's reading of the code found {note} "
                            f"({loc.short() if loc else 'no line'})."
                            for note, loc in self._read.get(key, ()))
            raise AdditivityError(f"{self._what()}: {what} by {diff:.3g} (relative; the "
                                  f"tolerance is {CHECK_TOLERANCE:g}).{notes} {ADVICE}")
        self._checked.add(key)

    @api_boundary
    def _sums_on_workers(self, level: list, partial: int, call: str) -> list:
        """Sum the groups' results on the workers, ``split_every`` at a time, until what is
        left is few and small enough (``partial`` bytes each) for the client to add."""
        import dask

        add = dask.delayed(_sum, pure=True)
        depth = 0
        while len(level) > 1 and (len(level) > self.split_every
                                  or len(level) * partial > CLIENT_SUM_BYTES):
            depth += 1
            level = [add(*level[i:i + self.split_every],
                         dask_key_name=f"jitgrad-sum-{depth}-{i}-{call}")
                     for i in range(0, len(level), self.split_every)]
        return list(level)

    def __call__(self, *args, **kwargs):
        import dask

        grad = self._grad
        if kwargs or len(args) != grad.n_params:
            args = grad.bind_arguments(args, kwargs)
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
        checking = nblocks >= 2 and (self.check is True or self.check == "first"
                                     and key not in self._checked)
        if checking:  # the sample rows' sizes too: a build may assume sizes they break
            sample = [min(r, CHECK_ROWS) for r in shards[0].chunks[0][:2]]
            sizes = {sample[0], sample[1], sum(sample), sample[0] // 2, -(-sample[0] // 2)}
            key, gen = self._spec(types, examples + [example(r) for r in sizes if r])
        if self.check is not False and key not in self._read:
            self._read[key] = self._read_code(types, gen)
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
        partial = 8 + sum(8 * np.size(leaf) for k in grad.wrt  # bytes of one result
                          for leaf in (pytree.leaves(args[k]) if pytree.is_tree(args[k])
                                       else [args[k]]))
        wanted = self._sums_on_workers(level, partial, call)
        if checking:
            perturbed = (self.shard, _perturb(others, np.random.default_rng(0)))
            if not isinstance(params, tuple):
                perturbed = dask.delayed(perturbed, traverse=False,
                                         name=f"jitgrad-perturbed-{call}")
            head = dask.delayed(_head, pure=True)
            heads = [[head(b, m) for b in blocks[i]] for i, m in enumerate(sample)]
            wanted.append(dask.delayed(_check, pure=True)(
                key, params, perturbed, len(shards), *heads[0], *heads[1],
                dask_key_name=f"jitgrad-check-{key}-{call}"))
        futures = client.compute(wanted)
        # Keep this call's futures until the next call has sent its graph: releasing them now
        # would put a message on the client's batched stream, which holds the next call's graph
        # back for up to its 10 ms interval.
        self._held = futures
        results = client.gather(futures, direct=True)
        if checking:
            self._judge(key, results.pop(), sample)
        out = _sum(*results)
        post = grad.post_for(args, types)
        if post is not None:
            out = post(out)
        return out if self.with_value else out[1]


@api_boundary
def value_and_grad(fn=None, wrt=0, *, shard, check="first", client=None,
                   split_every: int = 8) -> DaskGradFunction:
    """``(value, gradients)`` of ``fn``, computed on a Dask cluster block by block.

    ``shard`` names the arguments (by name or position, one or a tuple) that are Dask arrays
    split along axis 0 (NumPy arrays are split into one block per worker thread); every other
    argument goes to each worker once per call. ``fn`` must be a sum over their rows; with the
    default ``check="first"``, its code is read and the first call of each compiled signature
    checks it numerically (`DaskGradFunction`); ``check=True`` checks every call,
    ``check=False`` neither reads nor checks (you promise). ``wrt`` is as in
    `jitgrad.grad` (it may not name a shard argument). The client is ``client`` or the current
    one (``distributed.get_client()``); results are NumPy values, summed on the workers
    ``split_every`` at a time.
    """
    def make(f):
        return DaskGradFunction(f, wrt, shard=shard, with_value=True, check=check,
                                client=client, split_every=split_every)
    return make if fn is None else make(fn)


@api_boundary
def grad(fn=None, wrt=0, *, shard, check="first", client=None,
         split_every: int = 8) -> DaskGradFunction:
    """`value_and_grad` without the value."""
    def make(f):
        return DaskGradFunction(f, wrt, shard=shard, with_value=False, check=check,
                                client=client, split_every=split_every)
    return make if fn is None else make(fn)
