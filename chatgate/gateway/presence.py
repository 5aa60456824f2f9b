"""Signs of life while a turn runs: the typing indicator, refreshed until the turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from chatgate.channels.base import ChannelAdapter
from chatgate.channels.types import Target
from chatgate.clock import Clock

log = logging.getLogger("chatgate.presence")
TYPING_AFTER_S = 0.5  # a faster answer needs no indicator (and saves a platform call)
TYPING_CALL_TIMEOUT_S = 10.0


@contextlib.asynccontextmanager
async def typing_while(
    adapter: ChannelAdapter | None,
    target: Target | None,
    clock: Clock,
    after_s: float = TYPING_AFTER_S,
) -> AsyncIterator[None]:
    """Show the typing indicator once the turn has taken ``after_s``, refreshed every
    ``capabilities.typing_every_s`` until it ends.

    An in-flight typing call is never cancelled: SDK HTTP pools (httpx under python-telegram-bot)
    can lose the connection of a request cancelled mid-flight, and enough of those exhaust the
    pool every send shares. Only the sleep between calls is interrupted.
    """
    if adapter is None or target is None or not adapter.capabilities.typing:
        yield
        return
    every_s = adapter.capabilities.typing_every_s
    calling = stopping = False

    async def refresh() -> None:
        nonlocal calling
        await clock.sleep(after_s)
        while not stopping:
            calling = True
            try:
                await adapter.typing(target)
            except Exception as exc:  # a failed typing hint must never fail the turn
                log.debug("typing indicator failed: %s", type(exc).__name__)
            finally:
                calling = False
            if not stopping:
                await clock.sleep(every_s)

    task = asyncio.create_task(refresh(), name=f"typing:{target.address}")
    try:
        yield
    finally:
        stopping = True
        try:
            if calling:  # the task returns as soon as its request is answered
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(task), TYPING_CALL_TIMEOUT_S)
        finally:
            task.cancel()
