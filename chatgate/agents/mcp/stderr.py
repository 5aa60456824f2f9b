"""A stdio MCP server's stderr and exit status, for `chatgate status` and the log.

The server runs under a one-line ``/bin/sh`` wrapper that writes its exit status to stderr when it
ends (the SDK keeps the process to itself); stderr comes through a pipe whose lines go to the log
and whose last few lines are kept, so a server that dies at start says why instead of "MCPError".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections import deque
from typing import TextIO

log = logging.getLogger("chatgate.agents.mcp.server")

SHELL = "/bin/sh"
_MARK = "chatgate-mcp: exit status"
# ``sh -c SCRIPT NAME CMD ARGS…``: runs CMD ARGS…, then reports how it ended.
WRAPPER = f'"$@"; s=$?; echo "{_MARK} $s" >&2; exit $s'
_EXIT = re.compile(rf"^{re.escape(_MARK)} (\d+)$")
KEEP_LINES = 5
LINE_CHARS = 200
DRAIN_S = 1.0  # how long the lines a dead server wrote may take to arrive
_EXIT_MEANINGS = {126: "command not executable", 127: "command not found"}


def wrapped(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The command line that runs ``command`` under the exit-status wrapper (as is without sh)."""
    if not os.path.exists(SHELL):
        return command, args
    return SHELL, ["-c", WRAPPER, "chatgate-mcp", command, *args]


class StderrTail:
    """The pipe a server writes its stderr to; keeps the last lines and the exit status."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=KEEP_LINES)
        self.exit_status: int | None = None
        read_fd, write_fd = os.pipe()
        self.file: TextIO = os.fdopen(write_fd, "w")
        self._task = asyncio.ensure_future(self._read(read_fd))

    async def close(self) -> None:
        """Stop writing our end; wait (bounded) for what the server wrote before it ended."""
        self.file.close()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            async with asyncio.timeout(DRAIN_S):
                await asyncio.shield(self._task)
        self._task.cancel()

    def describe(self) -> str:
        """How the server ended (its exit status and last stderr lines), or "" if unknown."""
        if self.exit_status is None:
            return ""
        meaning = _EXIT_MEANINGS.get(self.exit_status, "exited")
        ended = f"{meaning} (exit status {self.exit_status})"
        return f"{ended}; stderr: {' | '.join(self.lines)}" if self.lines else ended

    async def _read(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        pipe = os.fdopen(fd, "rb", 0)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        pending = b""
        try:
            while chunk := await reader.read(4096):
                *complete, pending = (pending + chunk).split(b"\n")
                pending = pending[-4 * LINE_CHARS :]
                for raw in complete:
                    self._line(raw.decode("utf-8", "replace").rstrip())
            if pending:
                self._line(pending.decode("utf-8", "replace").rstrip())
        finally:
            transport.close()

    def _line(self, line: str) -> None:
        mark = _EXIT.match(line)
        if mark is not None:
            self.exit_status = int(mark.group(1))
        elif line:
            self.lines.append(line[:LINE_CHARS])
            log.info("mcp server stderr", extra={"server": self.server, "line": line})
