"""Read receipts coalesce per room: while a room's receipt call is in flight, later marks wait
and only the newest is sent; other rooms are not held up; a failed call fails no turn."""

from __future__ import annotations

import asyncio

from chatgate.channels.matrix.receipts import Receipts


class Homeserver:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.release = asyncio.Event()
        self.fail = False

    async def send(self, room: str, event_id: str) -> None:
        self.calls.append((room, event_id))
        await self.release.wait()
        if self.fail:
            raise ConnectionError("down")


async def test_marks_during_a_call_send_only_the_newest_after_it() -> None:
    server = Homeserver()
    receipts = Receipts(server.send)
    first = asyncio.create_task(receipts.mark("!a", "$1"))
    await asyncio.sleep(0)
    await asyncio.gather(receipts.mark("!a", "$2"), receipts.mark("!a", "$3"))
    other = asyncio.create_task(receipts.mark("!b", "$9"))  # another room goes at once
    await asyncio.sleep(0)
    assert server.calls == [("!a", "$1"), ("!b", "$9")]
    server.release.set()
    await asyncio.gather(first, other)
    assert server.calls == [("!a", "$1"), ("!b", "$9"), ("!a", "$3")]
    assert receipts.calls == 3


async def test_a_failed_receipt_fails_nothing_and_the_next_goes_out() -> None:
    server = Homeserver()
    server.fail = True
    server.release.set()
    receipts = Receipts(server.send)
    await receipts.mark("!a", "$1")
    server.fail = False
    await receipts.mark("!a", "$2")
    assert server.calls == [("!a", "$1"), ("!a", "$2")]
