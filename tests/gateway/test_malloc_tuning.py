"""The daemon's fixed glibc mmap threshold: large buffers freed go back to the system, also after
glibc would have raised its threshold (each case in a fresh interpreter: malloc state is global)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chatgate.gateway.process.malloc_tuning import glibc

# Frees a 2 MB buffer (glibc then raises its threshold to 2 MB), makes 100 half-megabyte buffers
# each followed by a small pinned one, frees the large ones: prints RSS growth kept, in MB.
PROBE = """
import sys
from chatgate.gateway.process.malloc_tuning import tune_malloc

def rss():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmRSS")) // 1024

if sys.argv[1] == "tuned":
    assert tune_malloc()
b = bytes(2 * 1024 * 1024)
del b
base = rss()
big, pins = [], []
for i in range(100):
    big.append(b"x" * (512 * 1024 + i))
    pins.append(b"y" * 2048 + bytes([i]))
del big
print(rss() - base)
"""

pytestmark = pytest.mark.skipif(glibc() is None, reason="needs glibc on Linux")


def kept_mb(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.parametrize(("mode", "low", "high"), [("default", 40, 200), ("tuned", -5, 10)])
def test_freed_large_buffers_stay_resident_only_without_the_fixed_threshold(
    mode: str, low: int, high: int
) -> None:
    assert low <= kept_mb(mode) <= high
