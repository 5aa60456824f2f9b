"""Signs of life while a turn runs: the typing indicator, refreshed until the turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from chatgate.channels.base import ChannelAdapter
from chatgate.clock import Clock, SystemClock
from chatgate.model.messages import Target

log = logging.getLogger("chatgate.presence")
TYPING_AFTER_S = 0.5  # a faster answer needs no indicator (and saves a platform call)
TYPING_CALL_TIMEOUT_S = 10.0


def typing_while(
    adapter: ChannelAdapter | None,
    target: Target | None,
    clock: Clock,
    after_s: float = TYPING_AFTER_S,
) -> contextlib.AbstractAsyncContextManager[None]:
    """Show the typing indicator once the turn has taken ``after_s``, refreshed every
    ``capabilities.typing_every_s`` until it ends.

    An in-flight typing call is never cancelled: with some HTTP clients (httpx) a request
    cancelled mid-flight costs the pool its connection, and enough of those exhaust the pool
    every send shares. Only the sleep between calls is interrupted.
    """
    if adapter is None or target is None or not adapter.capabilities.typing:
        return _NOTHING
    return _Typing(adapter, target, clock, after_s)


_NOTHING: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()


class _Typing:
    """`typing_while` as a plain object: a turn pays no async generator (and its finalizer)."""

    __slots__ = (
        "_adapter",
        "_after_s",
        "_calling",
        "_clock",
        "_stopping",
        "_target",
        "_task",
        "_timer",
    )

    def __init__(self, adapter: ChannelAdapter, target: Target, clock: Clock, after_s: float):
        self._adapter, self._target, self._clock, self._after_s = adapter, target, clock, after_s
        self._calling = self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> None:
        # Most turns end within ``after_s``: on the system clock a timer waits that out, so a
        # fast turn costs no task. An injected clock is only waited on through its sleep.
        if type(self._clock) is SystemClock:
            self._timer = asyncio.get_running_loop().call_later(self._after_s, self._start, 0.0)
        else:
            self._start(self._after_s)

    async def __aexit__(self, *exc: object) -> None:
        self._stopping = True
        if self._timer is not None:
            self._timer.cancel()
        task = self._task
        if task is None:
            return
        try:
            if self._calling:  # the task returns as soon as its request is answered
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(task), TYPING_CALL_TIMEOUT_S)
        finally:
            task.cancel()

    def _start(self, delay_s: float) -> None:
        self._timer = None
        name = f"typing:{self._target.address}"
        self._task = asyncio.get_running_loop().create_task(self._refresh(delay_s), name=name)

    async def _refresh(self, delay_s: float) -> None:
        if delay_s > 0:
            await self._clock.sleep(delay_s)
        every_s = self._adapter.capabilities.typing_every_s
        while not self._stopping:
            self._calling = True
            try:
                await self._adapter.typing(self._target)
            except Exception as exc:  # a failed typing hint must never fail the turn
                log.debug("typing indicator failed: %s", type(exc).__name__)
            finally:
                self._calling = False
            if not self._stopping:
                await self._clock.sleep(every_s)
