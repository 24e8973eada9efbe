"""How a training process keeps the memory it frees.

glibc's malloc serves a large block (a tensor of the tiny model's activations or gradients) with
mmap and hands it back with munmap when freed, and trims the heap's free top back to the system.
A training step allocates and frees the same shapes again and again, so each step faulted its
pages in anew: a local-profile training (warm start and 200 GRPO steps) made ~1e8 minor page
faults, and a quarter of its CPU time was the kernel's (604 s user, 241 s system; SIMULATED pool,
docs/benchmarks.md "Training CPU"). Raising both thresholds keeps freed blocks in the heap for
the next step. The same as setting MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ before the
process starts, done from inside it, so every way of training (`conductor train`, the nightly,
the benchmarks) gets it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

# mallopt's parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 256 * 2**20  # blocks below 256 MiB come from the heap, and stay there when freed
TRIM_THRESHOLD = 2**30  # up to 1 GiB of free heap top is kept, not handed back


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; False where there is no glibc
    (macOS, musl) or where the user set either variable themselves (theirs stands)."""
    if any(v in os.environ for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "mallopt") or not hasattr(libc, "gnu_get_libc_version"):
        return False
    # mallopt returns 1 on success
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
