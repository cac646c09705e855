"""Benchmark problems, hand-written Numba baselines and timing helpers for jitgrad."""
