"""Keep freed memory in the process for reuse (glibc's allocator), so that training's tensors of a
few megabytes do not cost a fresh mapping each time.

glibc serves an allocation above its mmap threshold (128 KiB at the start, raised as mapped
blocks are freed) from a new ``mmap``, and gives the top of its heap back to the kernel once more
than the trim threshold is free there. Either way the next tensor of that size lands on pages
the kernel must fault in and zero again, one 4 KiB page at a time. A PPO update allocates and
frees tensors of 1 to 16 MB (a minibatch's activations, their gradients, the masked softmax)
dozens of times, and on this project's machine those page faults cost as much as the ReLUs and
the softmax themselves. :func:`keep_freed_memory` raises both thresholds so that freed blocks
stay in the heap and the next tensor reuses them; memory is still reused, only not returned to
the system until the process ends (PyTorch's CPU tuning guides get the same from jemalloc or
tcmalloc loaded with ``LD_PRELOAD``; this needs nothing installed).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD = -1
"""``mallopt`` parameter: free bytes at the heap's top before glibc returns them to the system."""
M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter: allocations at least this large get their own ``mmap``."""
MMAP_THRESHOLD = 32 << 20
"""32 MiB, above every tensor of an update (where glibc's own adaptive threshold stops on 64-bit systems)."""
TRIM_THRESHOLD = 1 << 30
"""1 GiB of free heap kept before any is returned."""


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process (see the module doc). Returns
    True where they were set, False where the C library is not glibc (nothing is changed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
