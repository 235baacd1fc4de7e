"""Give the memory of a closed session back to the operating system.

When a session ends, Streamlit drops its state and its session-scoped caches, and Python
frees every object derived from the upload. Measured in the server (an environment-gated
probe with ``gc`` and ``tracemalloc``, eight sessions each uploading a 3.5 MB file, then
closed): after the sessions expired no ``AppSession`` but the last visitor's was alive, the
session caches and the uploaded-file manager were empty, and the traced Python heap (numpy
buffers included) was 154.66 MiB against 154.58 MiB before the sessions. Yet the server's
resident memory stayed about 97 MiB higher (327 → 424 MiB; ``malloc_trim`` recovered only
about 18 MiB of it). The cause is glibc's allocator, not a reference:

* glibc serves an allocation above ``M_MMAP_THRESHOLD`` (128 KiB at start) with its own
  ``mmap`` and returns it to the system on ``free``. But freeing such a block *raises*
  the threshold to the block's size (the "dynamic mmap threshold", up to 32 MiB), so after
  the first upload every later multi-megabyte buffer — upload bytes, parsed columns,
  numpy arrays — is carved out of a malloc arena instead;
* each script-runner thread allocates from one of up to 8 × cores arenas, and freed space
  below a live block in an arena heap is kept for reuse, not returned.

Fixing the threshold (``mallopt(M_MMAP_THRESHOLD, …)``, which also switches the dynamic
adjustment off) keeps large buffers in ``mmap``: freeing them unmaps them at once. With it
the same eight sessions leave the server 20–30 MiB above its level before them (314 → 344
MiB, 315 → 335 MiB; tests/e2e/test_sessions.py) and its peak is lower too (467–483 MiB
against 502–539 MiB). tests/test_app.py shows the mechanism in isolation: 96 MiB of freed
4 MiB buffers behind a live one stay resident without the setting, 0 with it. Small
objects still come from the arenas; they are not where a session's data live.

This is glibc-specific and best effort: on another C library (musl, macOS, Windows) it does
nothing. ``app.py`` calls it on every run; it acts once per server process, before the
first upload is read.
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
