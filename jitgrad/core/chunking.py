"""The cost model of a parallel loop's chunks: how many chunks a loop of ``trips`` iterations
runs in (`chunk_count`), and the unit its costs are in.

The unit is one equation of the loop body as the transforms count it (`transforms.parallel`'s
``_work``, which the generated code computes before the loop): each equation of an iteration
once, an inner loop's body as many times as it runs when its bounds are known before the loop,
else `UNKNOWN_TRIPS` times, both branches of an ``if``. The costs below are in that unit, and
nothing else sets them: the transforms count in it, and the backend compiles `chunk_count`
itself (``_rt.chunk_count``, the same function, with Numba) for the generated code to call.

Takes integers; guarantees a count that depends on its arguments only, never on the thread
count, so a parallel loop's sums are the same at any thread count. Plain Python that Numba
compiles (no imports).
"""

from __future__ import annotations

# `_work`: the trips counted for an inner loop whose bounds the iteration computes.
UNKNOWN_TRIPS = 8

# The costs, in the unit above (in ADBench's GMM, d = 10, K = 25, `bench.parallel`, one equation
# costs about 0.06 ns here): per number a chunk accumulates (allocated, zeroed, stored and added
# up: 1.8 ns measured there), per chunk (its allocations), and per loop (waking the other
# threads: 5 us when they spin, 30-80 us when they sleep).
MOST_CHUNKS = 64
CHUNK_COST_PER_NUMBER = 30
CHUNK_COST = 4_000
WAKE_COST = 1_000_000


def chunk_count(trips, work, size):
    """How many chunks a parallel loop of ``trips`` iterations runs in: as many as pay for
    themselves, at most `MOST_CHUNKS` and one per iteration, a multiple of 8 or else 1, 2 or 4
    (two threads that run at the same speed each get as many). ``work``: an estimate of one
    iteration's equations; ``size``: how many numbers each chunk accumulates (its partial
    gradients and sums). The chunks' own costs stay under 1/32 of the loop's work, and a
    loop under 16 times the cost of waking a thread runs in one chunk (on the calling
    thread). Depends on the arguments only, never on the thread count: the sums are the same
    at any thread count."""
    total = float(trips) * max(work, 1)  # (a float: no overflow)
    if total < 16 * WAKE_COST:
        return 1
    n = min(MOST_CHUNKS, trips,
            int(total / (32.0 * (CHUNK_COST_PER_NUMBER * size + CHUNK_COST))))
    if n >= 8:  # a multiple of 8 (else 1, 2 or 4): as many chunks for each of 2, 4 or 8 threads
        return n - n % 8
    return 4 if n >= 4 else 2 if n >= 2 else 1


__all__ = ["CHUNK_COST", "CHUNK_COST_PER_NUMBER", "MOST_CHUNKS", "UNKNOWN_TRIPS", "WAKE_COST",
           "chunk_count"]
