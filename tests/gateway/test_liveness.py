"""Event-loop watchdog against the real loop, with tiny intervals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from chatgate.gateway.process.liveness import LoopWatchdog


@pytest.fixture
async def watchdog() -> AsyncIterator[LoopWatchdog]:
    dog = LoopWatchdog(interval_s=0.05, max_lag_s=0.1, unhealthy_after=2)
    task = asyncio.create_task(dog.run())
    await asyncio.sleep(0)  # let it start its first sleep
    yield dog
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def block_once(seconds: float) -> None:
    """Hog the loop, then yield briefly so the (overdue) watchdog records the lag."""
    time.sleep(seconds)
    await asyncio.sleep(0.01)


async def test_healthy_when_idle(watchdog: LoopWatchdog) -> None:
    await asyncio.sleep(0.3)
    assert watchdog.healthy
    assert 0.0 <= watchdog.lag_s < 0.1
    snap = watchdog.snapshot()
    assert snap["healthy"] is True and snap["max_lag_s"] == 0.1


async def test_blocking_makes_it_unhealthy_then_it_recovers(watchdog: LoopWatchdog) -> None:
    await block_once(0.25)
    assert watchdog.healthy  # one slow sample is not enough
    assert watchdog.lag_s >= 0.15
    await block_once(0.25)
    assert not watchdog.healthy
    assert watchdog.max_recent_lag_s >= 0.15
    assert watchdog.snapshot()["healthy"] is False

    await asyncio.sleep(0.2)  # idle loop: the next on-time sample restores health
    assert watchdog.healthy
    assert watchdog.lag_s < 0.1
    assert watchdog.max_recent_lag_s >= 0.15  # still remembered among recent samples


def test_streak_logic_without_a_loop() -> None:
    dog = LoopWatchdog(interval_s=1, max_lag_s=1, unhealthy_after=3)
    for lag in (2.0, 2.0, 0.5, 2.0, 2.0):
        dog.record(lag)
    assert dog.healthy  # the on-time sample broke the streak
    dog.record(3.0)
    assert not dog.healthy and dog.lag_s == 3.0
    for _ in range(10):
        dog.record(0.0)
    assert dog.healthy and dog.max_recent_lag_s == 0.0  # window holds only the last 10


@pytest.mark.parametrize(
    "kwargs",
    [{"interval_s": 0}, {"max_lag_s": -1}, {"unhealthy_after": 0}],
)
def test_rejects_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        LoopWatchdog(**kwargs)  # type: ignore[arg-type]
