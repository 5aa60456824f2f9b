"""Signs of life while a turn runs: the typing indicator, refreshed until the turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from chatgate.channels.base import ChannelAdapter
from chatgate.channels.types import Target
from chatgate.clock import Clock, SystemClock

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
    loop = asyncio.get_running_loop()
    task: asyncio.Task[None] | None = None

    async def refresh(delay_s: float) -> None:
        nonlocal calling
        if delay_s > 0:
            await clock.sleep(delay_s)
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

    def start(delay_s: float) -> None:
        nonlocal task
        task = loop.create_task(refresh(delay_s), name=f"typing:{target.address}")

    # Most turns end within ``after_s``: on the system clock a timer waits that out, so a fast
    # turn costs no task. An injected clock is only waited on through its sleep.
    timer = loop.call_later(after_s, start, 0.0) if type(clock) is SystemClock else None
    if timer is None:
        start(after_s)
    try:
        yield
    finally:
        stopping = True
        if timer is not None:
            timer.cancel()
        if task is not None:
            try:
                if calling:  # the task returns as soon as its request is answered
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(task), TYPING_CALL_TIMEOUT_S)
            finally:
                task.cancel()
