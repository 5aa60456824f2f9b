"""Bot API requests with bounded concurrency, so a reply burst stays cheap for the HTTP client.

httpcore's connection pool does work proportional to (waiting requests × open connections) on
every request it starts or finishes. It also checks every open connection for expiry (a
socket poll and a getpeername each) on every request, so the CPU per request grows with the number
of connections: a burst of 600 replies with PTB's default pool of 256 ran at ~50 sends/s with the
gateway at 100 % CPU, against ~480/s with 8 connections. Waiting here instead, on a semaphore no
larger than the pool, keeps both the queue and the connection count small.
"""

from __future__ import annotations

import asyncio
from typing import Any

from telegram.request import HTTPXRequest


class BoundedRequest(HTTPXRequest):
    """An HTTPXRequest that lets at most ``slots`` requests into its pool at once."""

    def __init__(self, *, slots: int, timeout_s: float, connect_timeout_s: float) -> None:
        super().__init__(
            connection_pool_size=slots,
            read_timeout=timeout_s,
            write_timeout=timeout_s,
            connect_timeout=connect_timeout_s,
            pool_timeout=timeout_s,  # never reached: the semaphore admits no more than the pool
        )
        self._slots = asyncio.Semaphore(slots)

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        async with self._slots:
            return await super().do_request(*args, **kwargs)
