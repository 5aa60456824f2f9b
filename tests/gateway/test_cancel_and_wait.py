"""Background loops stop even when a cancellation is absorbed once (as redis-py's pool can)."""

from __future__ import annotations

import asyncio

from chatgate.tasks import cancel_and_wait


async def _absorbs_first_cancel(absorbed: list[int]) -> None:
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            if absorbed:
                raise
            absorbed.append(1)  # a library call that swallowed the request and returned


async def test_a_loop_that_absorbs_one_cancellation_still_stops() -> None:
    absorbed: list[int] = []
    task = asyncio.create_task(_absorbs_first_cancel(absorbed))
    await asyncio.sleep(0)
    done, stuck = await cancel_and_wait([task], bound_s=5.0)
    assert absorbed == [1]
    assert task in done and not stuck and task.cancelled()


async def test_a_task_that_never_stops_is_reported_stuck_at_the_bound() -> None:
    stop = asyncio.Event()

    async def stubborn() -> None:
        while not stop.is_set():
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    done, stuck = await cancel_and_wait([task], bound_s=0.2)
    assert stuck == {task} and not done
    stop.set()
    task.cancel()
    await asyncio.wait([task])


async def test_a_failed_task_is_retrieved_not_reported_at_exit() -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    done, stuck = await cancel_and_wait([task], bound_s=1.0)
    assert done == {task} and not stuck
