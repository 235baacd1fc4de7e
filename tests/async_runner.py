"""Running a coroutine from a synchronous test, whatever else runs in the process.

A test process that has started Playwright's synchronous API (the browser tests share their
worker with the other tests) has an event loop running in its main thread, and
``asyncio.run`` refuses to start another there. The coroutine runs in a thread of its own,
with a loop of its own.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_async(coroutine):
    """``asyncio.run(coroutine)`` in a fresh thread; returns its result (or raises its error)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
