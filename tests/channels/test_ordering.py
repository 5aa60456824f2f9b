"""ChatOrder: one chat's blocks run in arrival order, other chats alongside, nothing kept after."""

from __future__ import annotations

import asyncio

import pytest

from chatgate.channels.ordering import ChatOrder


async def test_a_chats_blocks_run_in_arrival_order_and_other_chats_alongside() -> None:
    order, ran = ChatOrder(), []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def block(chat: str, name: str, hold: bool = False) -> None:
        async with order.turn(chat):
            ran.append(name)
            if hold:
                first_in.set()
                await release.wait()

    first = asyncio.create_task(block("a", "a1", hold=True))
    await first_in.wait()
    later = [asyncio.create_task(block("a", f"a{i}")) for i in (2, 3)]
    await asyncio.create_task(block("b", "b1"))  # not held up by chat a
    assert ran == ["a1", "b1"]
    release.set()
    await asyncio.gather(first, *later)
    assert ran == ["a1", "b1", "a2", "a3"]
    assert len(order) == 0


async def test_a_failing_or_cancelled_block_leaves_no_lock_behind() -> None:
    order = ChatOrder()
    with pytest.raises(ValueError):
        async with order.turn("a"):
            raise ValueError("boom")
    assert len(order) == 0
    holding = asyncio.Event()
    release = asyncio.Event()

    async def hold() -> None:
        async with order.turn("a"):
            holding.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await holding.wait()

    async def waits() -> None:
        async with order.turn("a"):
            pass

    waiter = asyncio.create_task(waits())
    await asyncio.sleep(0)
    waiter.cancel()  # cancelled while queued behind the holder
    with pytest.raises(asyncio.CancelledError):
        await waiter
    release.set()
    await holder
    assert len(order) == 0
    async with order.turn("a"):  # the chat still takes turns
        assert len(order) == 1
