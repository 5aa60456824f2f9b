"""A manual clock for the gateway: sleeps wait until the test advances time."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time


class ManualClock:
    def __init__(self, wall_start: float | None = None) -> None:
        self._mono = 0.0
        self._wall0 = time.time() if wall_start is None else wall_start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def time(self) -> float:
        return self._wall0 + self._mono

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._mono + seconds, next(self._seq), future))
        await future

    def advance(self, seconds: float) -> None:
        self._mono += seconds
        while self._sleepers and self._sleepers[0][0] <= self._mono:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    def pending(self) -> list[float]:
        return sorted(deadline - self._mono for deadline, _, f in self._sleepers if not f.done())
