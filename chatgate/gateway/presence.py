"""Signs of life while a turn runs: the typing indicator, refreshed until the turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from chatgate.channels.base import ChannelAdapter
from chatgate.channels.types import Target
from chatgate.gateway.clock import Clock

log = logging.getLogger("chatgate.presence")
TYPING_REFRESH_S = 4.0  # Telegram shows "typing…" for ~5 s per sendChatAction


@contextlib.asynccontextmanager
async def typing_while(
    adapter: ChannelAdapter | None,
    target: Target | None,
    clock: Clock,
    every_s: float = TYPING_REFRESH_S,
) -> AsyncIterator[None]:
    if adapter is None or target is None or not adapter.capabilities.typing:
        yield
        return

    async def refresh() -> None:
        while True:
            try:
                await adapter.typing(target)
            except Exception as exc:  # a failed typing hint must never fail the turn
                log.debug("typing indicator failed: %s", type(exc).__name__)
            await clock.sleep(every_s)

    task = asyncio.create_task(refresh(), name=f"typing:{target.address}")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
