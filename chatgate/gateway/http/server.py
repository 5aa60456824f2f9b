"""Serving the HTTP app on a socket, safely against slow and abusive clients.

aiohttp's keep-alive timer starts when a connection opens and closes it while the handler still
waits for a whole request, so `keepalive_timeout_s` bounds both how long a client may take to
send its headers (slowloris) and how long an idle connection is kept. A connection cap keeps
file descriptors for everything else the daemon does (platform SDKs, the model client, SQLite):
past it new connections are closed at once. When the process does run out of descriptors,
asyncio logs every failed accept(); that line is let through once per interval.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from aiohttp import web

from chatgate.config.models import HttpConfig

ACCEPT_ERROR = "socket.accept() out of system resource"
ACCEPT_LOG_EVERY_S = 10.0


class CappedTCPSite(web.BaseSite):
    """A TCP site that refuses connections beyond ``max_connections``."""

    def __init__(
        self, runner: web.BaseRunner, host: str, port: int, *, max_connections: int, backlog: int
    ) -> None:
        super().__init__(runner, backlog=backlog)
        self._host, self._port = host, port
        self._max = max_connections
        self.refused = 0

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        assert server is not None

        def accept() -> asyncio.BaseProtocol:
            if len(server.connections) >= self._max:
                self.refused += 1
                return _Refuse()
            return server()

        self._server = await asyncio.get_running_loop().create_server(
            accept, self._host, self._port, backlog=self._backlog, reuse_address=True
        )


class _Refuse(asyncio.Protocol):
    """Closes a connection the moment it is made (the cap is reached)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


def runner_options(http: HttpConfig) -> dict[str, Any]:
    """aiohttp server settings from `gateway.http`."""
    return {
        "keepalive_timeout": http.keepalive_timeout_s,
        "max_line_size": 8190,
        "max_field_size": 8190,
        "max_headers": 100,
    }


class AcceptErrorThrottle(logging.Filter):
    """Lets asyncio's accept() failure through once per interval, counting the rest."""

    def __init__(self, every_s: float = ACCEPT_LOG_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._last: float | None = None  # the first failure is always reported
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(ACCEPT_ERROR):
            return True
        now = time.monotonic()
        if self._last is not None and now - self._last < self.every_s:
            self.suppressed += 1
            return False
        self._last = now
        if self.suppressed:
            record.msg = f"{record.msg} ({self.suppressed} more since the last report)"
            self.suppressed = 0
        record.exc_info = None  # the same traceback every time tells nothing new
        return True


def install_accept_throttle() -> AcceptErrorThrottle:
    """Once per process: asyncio's logger gets the throttle."""
    logger = logging.getLogger("asyncio")
    for existing in logger.filters:
        if isinstance(existing, AcceptErrorThrottle):
            return existing
    throttle = AcceptErrorThrottle()
    logger.addFilter(throttle)
    return throttle
