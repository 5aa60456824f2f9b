"""The daemon's log handler: the lines of one event-loop iteration go out in one write.

Each write releases the GIL, and under load the SQLite thread takes it at once, so a write per
line costs the loop one GIL hand-back per line (measured: about 5 % of the webhook route's
throughput). Lines wait at most until the end of the loop iteration that logged them; lines from
other threads, or logged with no running loop, are written at once, after anything buffered.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TextIO


class LoopBatchedHandler(logging.StreamHandler[TextIO]):
    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._lines: list[str] = []
        self._flush_on: asyncio.AbstractEventLoop | None = None  # where a flush is scheduled

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)
            return
        self._add(line)

    def emit_line(self, line: str) -> None:
        """A line formatted already (no record), under the handler's lock like `handle`."""
        self.acquire()
        try:
            self._add(line)
        finally:
            self.release()

    def _add(self, line: str) -> None:
        line += self.terminator
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        # `handle` holds the handler's lock around `emit`.
        self._lines.append(line)
        if loop is None:
            self._write()
        elif self._flush_on is not loop:
            # Another loop's pending flush may never run (that loop stopped): schedule on this one.
            self._flush_on = loop
            loop.call_soon(self.flush)

    def flush(self) -> None:
        self.acquire()
        try:
            self._flush_on = None
            self._write()
        finally:
            self.release()

    def _write(self) -> None:
        """Write and flush what is buffered (the caller holds the handler's lock)."""
        if not self._lines:
            return
        text, self._lines = "".join(self._lines), []
        try:
            self.stream.write(text)
            self.stream.flush()
        except Exception:
            # Like StreamHandler: a broken stream must not take the daemon down with it.
            self.handleError(logging.LogRecord("chatgate", logging.ERROR, "", 0, text, None, None))
