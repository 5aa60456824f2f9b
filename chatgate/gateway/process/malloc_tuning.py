"""glibc malloc for the daemon: large transient buffers (a decoded photo, a voice note's upload
body, a file read whole) are mapped on their own and go back to the system when freed.

glibc raises its mmap threshold each time a mapped block is freed (up to 32 MB); buffers below
the raised threshold then come from the heaps (one per worker thread), where a freed buffer stays
resident behind any small allocation made after it. A burst of media messages thereby left the
process ~100 MB larger than its live data (the media bench's first burst). A fixed threshold
keeps every allocation above it mapped: a page-fault cost per buffer, tiny next to decoding or
uploading it. Other C libraries: left as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

log = logging.getLogger("chatgate.memory")
M_MMAP_THRESHOLD = -3  # mallopt parameter (glibc malloc.h)
MMAP_THRESHOLD = 128 * 1024  # glibc's own starting value, kept fixed


def glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc (musl has no `gnu_get_libc_version`)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    return libc


def tune_malloc() -> bool:
    """Fix glibc's mmap threshold for this process; False where there is no glibc."""
    libc = glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    if not done:
        log.warning("glibc refused a fixed mmap threshold; large buffers may stay resident")
    return done
