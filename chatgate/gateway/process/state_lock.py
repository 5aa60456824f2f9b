"""One daemon per state directory: an exclusive advisory lock held for the life of the process.

Two daemons on one state dir would both resume the journal's unfinished messages (answering them
twice) and serialise turns only within themselves. The lock is ``flock`` on ``chatgate.lock``, so
the kernel drops it when the process dies (kill -9 included); the file keeps the holder's pid for
the error message. The CLI takes it only to open the state itself when no daemon is running.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_FILE = "chatgate.lock"


class StateDirInUse(OSError):
    """Another process holds the state directory."""


class StateLock:
    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise StateDirInUse naming the holder; a no-op when already held."""
        if self._fd is not None:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise StateDirInUse(
                f"state dir {self.path.parent} is in use by another chatgate (pid {holder}); "
                "stop that one, or give this one its own gateway.state_dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
