"""Give the memory of a closed session back to the operating system (issue 15 §3).

When a session ends, Streamlit drops its state and its session-scoped caches, and Python
frees every object derived from the upload: measured with ``tracemalloc`` in the server,
the traced heap after eight upload sessions closed is within 0.1 MiB of its level before
them, and no session, cache entry or uploaded file is left. The server's resident memory
nevertheless stayed 60–100 MiB higher, because of glibc's allocator, not of a reference:

* glibc serves an allocation above ``M_MMAP_THRESHOLD`` (128 KiB at start) with its own
  ``mmap`` and returns it to the system on ``free``. But freeing such a block *raises*
  the threshold to the block's size (the "dynamic mmap threshold", up to 32 MiB), so after
  the first upload every later multi-megabyte buffer — upload bytes, parsed columns,
  numpy arrays — is carved out of a malloc arena instead;
* each script-runner thread allocates from one of up to 8 × cores arenas, and freed
  space inside an arena heap is kept for reuse, not returned.

Fixing the threshold (``mallopt(M_MMAP_THRESHOLD, …)``, which also switches the dynamic
adjustment off) keeps large buffers in ``mmap``: freeing them unmaps them at once. With it
the server's memory returns to within about 15 MiB of its level before eight sessions
(tests/e2e/test_sessions.py). Small objects still come from the arenas; they are not where
the data of a session live.

This is glibc-specific and best effort: on another C library (musl, macOS, Windows) it does
nothing. It is called once per server process, before the first upload is read.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

#: mallopt parameter numbers of glibc's <malloc.h>.
_M_MMAP_THRESHOLD = -3
#: Blocks of at least this many bytes get their own mapping, released on free. 1 MiB keeps
#: the many small and medium allocations of a script run in the arenas (fast), while every
#: buffer that holds a meaningful part of an upload is mapped.
MMAP_THRESHOLD_BYTES = 1 << 20

_configured: bool | None = None


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    # mallopt and malloc_trim are glibc's; musl has neither.
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "gnu_get_libc_version") else None


def release_large_buffers_on_free() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD_BYTES` (once per process).

    Returns whether the setting is in effect (``False`` when the C library is not glibc).
    """
    global _configured
    if _configured is None:
        libc = _libc()
        _configured = bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1)
    return _configured
