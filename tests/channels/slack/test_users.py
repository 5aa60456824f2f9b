"""The users.info cache: one lookup per user, also when a burst of their messages arrives at once."""

from __future__ import annotations

import asyncio
from typing import Any

from chatgate.channels.slack.users import KNOWN_FOR_S, SlackUser, SlackUsers
from tests.fakes.clock import ManualClock


class Directory:
    """A users.info stand-in that answers only when released, counting the calls per user."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = asyncio.Event()

    async def fetch(self, user: str) -> dict[str, Any]:
        self.calls.append(user)
        await self.release.wait()
        return {"user": {"locale": "de-DE", "is_bot": False}}


async def test_a_burst_of_one_users_messages_shares_one_lookup() -> None:
    users, directory = SlackUsers(ManualClock()), Directory()
    waiting = [asyncio.ensure_future(users.get("U1", directory.fetch)) for _ in range(5)]
    other = asyncio.ensure_future(users.get("U2", directory.fetch))
    await asyncio.sleep(0)
    directory.release.set()
    facts = await asyncio.gather(*waiting, other)
    assert facts == [SlackUser("de-DE", False)] * 6
    assert sorted(directory.calls) == ["U1", "U2"]


async def test_a_cancelled_waiter_leaves_the_lookup_to_the_others() -> None:
    users, directory = SlackUsers(ManualClock()), Directory()
    first = asyncio.ensure_future(users.get("U1", directory.fetch))
    second = asyncio.ensure_future(users.get("U1", directory.fetch))
    await asyncio.sleep(0)
    first.cancel()
    directory.release.set()
    assert await second == SlackUser("de-DE", False)
    assert first.cancelled() and directory.calls == ["U1"]


async def test_an_expired_answer_is_looked_up_again() -> None:
    clock = ManualClock()
    users, directory = SlackUsers(clock), Directory()
    directory.release.set()
    await users.get("U1", directory.fetch)
    await users.get("U1", directory.fetch)
    clock.advance(KNOWN_FOR_S + 1)
    await users.get("U1", directory.fetch)
    assert directory.calls == ["U1", "U1"]
