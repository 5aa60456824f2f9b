"""Malformed requests are the client's mistake: one warning line, never a traceback.

aiohttp logs a request it cannot parse (bad request line, a line or header too long, a bad
method, broken chunked framing) as an error with a traceback on `aiohttp.server`. A stranger can
send thousands of them; the operator needs to know it happens and from where, once in a while.
"""

from __future__ import annotations

import logging
import time

from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

SERVER_LOGGER = "aiohttp.server"
EVERY_S = 60.0  # one line per peer per interval
# A request aiohttp cannot parse; a body it cannot decode while draining what a handler left
# unread; a client that went away.
CLIENT_ERRORS = (HttpProcessingError, RequestPayloadError, ConnectionError)
MAX_PEERS = 1024  # peers remembered for the interval (a scan from many addresses stays bounded)


class ClientErrorLog(logging.Filter):
    """Turns aiohttp's traceback for a malformed request into one rate-limited warning."""

    def __init__(self, every_s: float = EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self._last: dict[str, float] = {}
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, CLIENT_ERRORS):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        peer = str(args[0]) if args else "unknown"
        now = time.monotonic()
        last = self._last.get(peer)
        if last is not None and now - last < self.every_s:
            self.suppressed += 1
            return False
        if len(self._last) >= MAX_PEERS:
            self._last.clear()
        self._last[peer] = now
        reason = getattr(exc, "message", "") or str(exc) or type(exc).__name__
        record.msg = "malformed request from %s: %s"
        record.args = (peer, str(reason).splitlines()[0][:200] if reason else "")
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True


def install_client_error_log() -> ClientErrorLog:
    """Once per process: aiohttp's server logger gets the filter."""
    logger = logging.getLogger(SERVER_LOGGER)
    for existing in logger.filters:
        if isinstance(existing, ClientErrorLog):
            return existing
    found = ClientErrorLog()
    logger.addFilter(found)
    return found
