"""Timing helper shared by the benchmark scripts (not a test)."""

import time


def timings(fn, repeats: int) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls of ``fn``."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out
