"""Stopping background tasks: cancelled until they end, within a bound.

A client library can absorb a cancellation that lands at the wrong moment (redis-py's blocking
pool while a command takes or returns a connection), and a loop that ends only by being cancelled
then runs on. Asking again, every few milliseconds until the bound, ends it: an absorbed request is
rare and the next one lands elsewhere.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

RECANCEL_S = 0.05


async def cancel_and_wait(
    tasks: Iterable[asyncio.Future[Any]], bound_s: float
) -> tuple[set[asyncio.Future[Any]], set[asyncio.Future[Any]]]:
    """Cancel ``tasks`` (again every ``RECANCEL_S``) until they end or ``bound_s`` passes;
    returns ``(done, stuck)``. Outcomes of the done ones are retrieved, never reported at exit."""
    pending = set(tasks)
    done: set[asyncio.Future[Any]] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound_s
    while pending:
        for task in pending:
            task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            break
        finished, pending = await asyncio.wait(pending, timeout=min(RECANCEL_S, left))
        done |= finished
    for task in done:
        if not task.cancelled():
            task.exception()
    return done, pending
