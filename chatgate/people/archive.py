"""The export archive: one tar.gz with a JSON file per store and the stored files as they are.

It is written by a worker thread into a `Pipe` and handed out in chunks as it is made, so an
archive of any size takes at most ``window`` bytes of memory beyond the collected records.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from chatgate.state.personal import Footprint, Found

if TYPE_CHECKING:
    import tarfile  # imported when an export is made, not at start

CHUNK_BYTES = 64 * 1024  # what the compressor hands on at a time
WINDOW_BYTES = 1024 * 1024  # made but not yet sent: the thread waits while this much is held


class ExportAborted(Exception):
    """The reader stopped (the client went away): the archive thread ends here."""


class Pipe:
    """Bytes a thread writes and the event loop reads, at most ``window`` (plus one write)
    held between them: the writer waits for the reader."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.peak = 0  # the most bytes ever held (tests read it)
        self._chunks: deque[bytes] = deque()
        self._held = 0
        self._done = self._aborted = False
        self._cond = threading.Condition()

    def write(self, data: bytes) -> int:
        with self._cond:
            while self._held >= self.window and not self._aborted:
                self._cond.wait()
            if self._aborted:
                raise ExportAborted
            self._chunks.append(bytes(data))
            self._held += len(data)
            self.peak = max(self.peak, self._held)
            self._cond.notify_all()
        return len(data)

    def finish(self) -> None:
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def take(self) -> bytes | None:
        """The next bytes (blocking: run it in a thread); None once finished or aborted."""
        with self._cond:
            while not self._chunks and not self._done and not self._aborted:
                self._cond.wait()
            if self._aborted or not self._chunks:
                return None
            data = self._chunks.popleft()
            self._held -= len(data)
            self._cond.notify_all()
            return data

    def abort(self) -> None:
        with self._cond:
            self._aborted = True
            self._chunks.clear()
            self._held = 0
            self._cond.notify_all()


async def stream(
    footprint: Footprint,
    found: Sequence[Found],
    now: float,
    window: int | None = None,
    pipe: Pipe | None = None,
) -> AsyncGenerator[bytes, None]:
    """The archive's bytes as they are made; closing the iterator early stops the thread."""
    pipe = pipe or Pipe(WINDOW_BYTES if window is None else window)
    writer = asyncio.ensure_future(asyncio.to_thread(_write, pipe, footprint, found, now))
    try:
        while (chunk := await asyncio.to_thread(pipe.take)) is not None:
            yield chunk
    finally:
        pipe.abort()  # wakes a writer still waiting; nothing once it has finished
        with contextlib.suppress(ExportAborted):
            await writer  # its error, if it failed


def _write(pipe: Pipe, footprint: Footprint, found: Sequence[Found], now: float) -> None:
    try:
        _tar(pipe, footprint, found, now)
    finally:
        pipe.finish()


def _tar(pipe: Pipe, footprint: Footprint, found: Sequence[Found], now: float) -> None:
    import tarfile

    folder = "person-" + "".join(
        c if c.isalnum() or c in "-_." else "_" for c in footprint.person.address
    )
    with tarfile.open(fileobj=cast("IO[bytes]", pipe), mode="w|gz", bufsize=CHUNK_BYTES) as tar:
        index = {
            "person": footprint.person.address,
            "exported_at": now,
            "exported_at_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
            "footprint": footprint.to_json(),
            "stores": {part.store: part.count for part in found},
        }
        _add(tar, f"{folder}/person.json", _dump(index), now)
        for part in found:
            _add(tar, f"{folder}/{part.store}.json", _dump(list(part.records)), now)
            for path in part.files:
                _add_file(tar, f"{folder}/files/{part.store}/{path.name}", path, now)


def _add(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o600
    tar.addfile(info, io.BytesIO(data))


def _add_file(tar: tarfile.TarFile, name: str, path: Path, now: float) -> None:
    """The file copied in chunks; one removed meanwhile (delivered and discarded) is left out."""
    import tarfile

    try:
        file = path.open("rb")
    except FileNotFoundError:
        return
    with file:
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = os.fstat(file.fileno()).st_size, int(now), 0o600
        tar.addfile(info, file)


def _dump(value: object) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str).encode()
