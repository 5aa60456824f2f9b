"""The config file on disk: read with its tag, check it can be replaced, replace it atomically
(temporary file, fsync, rename) keeping the previous versions as `<name>.1` … `<name>.N`.

Blocking file calls: the service runs them in a worker thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class OnDisk:
    """The file's text and tag (a hash of its bytes: the page sends it back with an apply)."""

    path: Path  # the real file (a symlink's target)
    text: str
    etag: str


def etag_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def read(path: Path) -> OnDisk:
    real = path.resolve()
    data = real.read_bytes()
    return OnDisk(real, data.decode("utf-8"), etag_of(data))


def unwritable(path: Path) -> str | None:
    """Why the file cannot be replaced here (None: it can): a read-only mount, a Kubernetes
    ConfigMap, a directory or file this process may not write."""
    real = path.resolve()
    directory = real.parent
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return f"{directory} is on a read-only file system"
    except OSError as exc:
        return f"{directory}: {exc.strerror}"
    if (directory / "..data").is_symlink():
        return f"{directory} is a mounted ConfigMap (Kubernetes replaces it as a whole)"
    if not os.access(real, os.W_OK):
        return f"{real} is not writable by this process"
    if not os.access(directory, os.W_OK | os.X_OK):
        return f"{directory} is not writable by this process (the previous versions go there)"
    return None


def backup_path(path: Path, number: int) -> Path:
    real = path.resolve()
    return real.with_name(f"{real.name}.{number}")


def backups(path: Path, keep: int) -> list[tuple[int, float]]:
    """The kept previous versions, newest first: (number, modified at)."""
    found = []
    for number in range(1, keep + 1):
        candidate = backup_path(path, number)
        with contextlib.suppress(OSError):
            found.append((number, candidate.stat().st_mtime))
    return found


def replace(path: Path, text: str, keep: int) -> str:
    """Write ``text`` as the file, the current one becoming `.1` (older ones move up, the
    oldest past ``keep`` is dropped); the name of the kept previous version."""
    real = path.resolve()
    for number in range(keep - 1, 0, -1):
        older = backup_path(real, number)
        if older.exists():
            os.replace(older, backup_path(real, number + 1))
    first = backup_path(real, 1)
    shutil.copy2(real, first)
    write(real, text)
    return first.name


def write(real: Path, text: str) -> None:
    """Replace ``real`` atomically: a reader sees the old file or the new one, never a part."""
    mode = real.stat().st_mode & 0o7777
    tmp = real.with_name(f".{real.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    directory = os.open(real.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
