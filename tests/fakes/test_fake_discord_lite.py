"""The fake Discord itself, driven by a bare discord.py client: what the Discord tests rely on."""

from __future__ import annotations

import asyncio

import discord

from tests.fakes.discord_lite import TOKEN, FakeDiscord, rate_limited
from tests.support.waiting import eventually


class Recorder(discord.AutoShardedClient):
    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__(
            intents=discord.Intents.default(), connector=fake.connector(), guild_ready_timeout=0.05
        )
        self.seen: list[str] = []
        self.ready_once = asyncio.Event()

    async def on_ready(self) -> None:
        self.ready_once.set()

    async def on_message(self, message: discord.Message) -> None:
        self.seen.append(message.content)


async def test_bare_discord_py_logs_in_resumes_and_is_rate_limited_through_the_fake() -> None:
    async with FakeDiscord() as fake:
        fake.add_guild(5000, 4000)
        client = Recorder(fake)
        runner = asyncio.create_task(client.start(TOKEN))
        try:
            await asyncio.wait_for(client.ready_once.wait(), 10)
            assert [g.id for g in client.guilds] == [5000]
            fake.post(4000, "one", guild_id=5000)
            await eventually(lambda: client.seen == ["one"])
            await fake.drop(4000)
            fake.post(4000, "two", guild_id=5000)  # logged for the session, replayed on RESUME
            await eventually(lambda: client.seen == ["one", "two"])
            assert len(fake.resumes) == 1 and len(fake.identifies) == 1
            fake.fail("POST /channels/{id}/messages", rate_limited(0.1))
            channel = client.get_partial_messageable(4000)
            await channel.send("hello")
            statuses = [c.status for c in fake.calls if c.route == "POST /channels/{id}/messages"]
            assert statuses == [429, 200] and fake.created[0]["content"] == "hello"
        finally:
            await client.close()
            await runner
