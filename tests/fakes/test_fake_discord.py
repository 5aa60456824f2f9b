"""The fake Discord, exercised by the real discord.py over loopback HTTPS/WSS.

discord.py is pointed at the fake only through its documented ``connector=`` option (a resolver
mapping the Discord hosts to 127.0.0.1 and an SSL context trusting the test CA). Clients
override the documented ``before_identify_hook``, whose default sleeps 5 s before every
non-initial IDENTIFY (op 9, second shard).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import discord
import pytest

from tests.fakes.discord import FakeDiscord, FaultSpec
from tests.fakes.discord_payloads import (
    API_PREFIX,
    BOT_ID,
    DISCORD_HOSTS,
    DM_CHANNEL_ID,
    FORUM_ID,
    FORUM_POST_ID,
    GUILD_ID,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    OTHER_GUILD_ID,
    TEXT_CHANNEL_ID,
    THREAD_ID,
    TOKEN,
    UNKNOWN_CHANNEL,
    USER_ID,
    snowflake_at,
)
from tests.fakes.tls import FakeResolver
from tests.support.waiting import eventually

SEND = "POST /channels/{channel_id}/messages"
CALLBACK = "POST /interactions/{webhook_id}/{webhook_token}/callback"
OTHER_CHANNEL_ID = snowflake_at(1_735_689_600_001, 40)

MessageHook = Callable[[discord.Message], Awaitable[None]]
InteractionHook = Callable[[discord.Interaction], Awaitable[None]]


class _Recorder:
    """Event recording shared by the plain and the sharded test client."""

    def _setup_recorder(self) -> None:
        self.ready_count = 0
        self.resumed_count = 0
        self.messages: list[discord.Message] = []
        self.edits: list[tuple[discord.Message, discord.Message]] = []
        self.threads: list[discord.Thread] = []
        self.interactions: list[discord.Interaction] = []
        self.errors: list[BaseException] = []
        self.on_message_hook: MessageHook | None = None
        self.on_interaction_hook: InteractionHook | None = None

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None  # the default sleeps 5 s before every non-initial IDENTIFY

    async def on_ready(self) -> None:
        self.ready_count += 1

    async def on_resumed(self) -> None:
        self.resumed_count += 1

    async def on_message(self, message: discord.Message) -> None:
        if message.author.id == BOT_ID:
            return  # the fake echoes the bot's own messages, like Discord
        self.messages.append(message)
        await self._run(self.on_message_hook, message)

    async def on_message_edit(self, before: discord.Message, after: discord.Message) -> None:
        self.edits.append((before, after))

    async def on_thread_create(self, thread: discord.Thread) -> None:
        self.threads.append(thread)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        self.interactions.append(interaction)
        await self._run(self.on_interaction_hook, interaction)

    async def _run(self, hook: Callable[[Any], Awaitable[None]] | None, arg: Any) -> None:
        if hook is not None:
            try:
                await hook(arg)
            except Exception as exc:
                self.errors.append(exc)


class Client(_Recorder, discord.Client):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._setup_recorder()


class ShardedClient(_Recorder, discord.AutoShardedClient):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._setup_recorder()


def _intents(*, message_content: bool = True) -> discord.Intents:
    intents = discord.Intents.default()
    intents.message_content = message_content
    return intents


def _client(fake: FakeDiscord, **options: Any) -> Client:
    return Client(intents=options.pop("intents", _intents()), **fake.client_kwargs(**options))


@contextlib.asynccontextmanager
async def running(client: Client | ShardedClient) -> AsyncIterator[asyncio.Task[None]]:
    """start() in a task until on_ready; always close() the client and reap the task."""
    task = asyncio.create_task(client.start(TOKEN))
    try:
        await eventually(lambda: client.ready_count or task.done())
        if task.done():
            task.result()
        yield task
    finally:
        await client.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 5.0)


@pytest.fixture
def fake(fake_discord: FakeDiscord) -> FakeDiscord:
    return fake_discord


@pytest.fixture
async def client(fake: FakeDiscord) -> AsyncIterator[Client]:
    bot = _client(fake)
    async with running(bot):
        yield bot


@pytest.fixture
async def rest(fake: FakeDiscord) -> AsyncIterator[Client]:
    """Logged in over REST only (no gateway), for request/response tests."""
    bot = _client(fake)
    await bot.login(TOKEN)
    try:
        yield bot
    finally:
        await bot.close()


# --- connection and plumbing ---------------------------------------------------------------


async def test_login_connect_ready_and_dm_roundtrip(fake: FakeDiscord, client: Client) -> None:
    assert client.user is not None and client.user.id == BOT_ID and client.user.bot
    assert [c.key for c in fake.calls[:2]] == ["GET /users/@me", "GET /oauth2/applications/@me"]
    assert fake.calls[0].headers["Authorization"] == f"Bot {TOKEN}"
    assert not fake.calls_to("GET /gateway/bot")  # a plain Client dials the default gateway
    identify = fake.identifies[0]
    assert identify["intents"] == _intents().value and "shard" not in identify
    assert identify["properties"]["browser"] == "discord.py"
    assert fake.heartbeat_count >= 1 and fake.connected_shards == [0]
    assert [g.id for g in client.guilds] == [GUILD_ID]

    async def answer(message: discord.Message) -> None:
        await message.channel.send("hi")

    client.on_message_hook = answer
    event = fake.message_create("hello")
    [call] = await fake.wait_for(SEND)
    message = client.messages[0]
    assert isinstance(message.channel, discord.DMChannel) and message.guild is None
    assert (message.id, message.content, message.author.id) == (int(event["id"]), "hello", USER_ID)
    assert call.params == {"channel_id": str(DM_CHANNEL_ID)} and call.json["content"] == "hi"
    assert fake.sent[-1]["author"]["id"] == str(BOT_ID)


async def test_guild_reply_typing_and_reaction(fake: FakeDiscord, client: Client) -> None:
    replies: list[discord.Message] = []

    async def answer(message: discord.Message) -> None:
        async with message.channel.typing():
            replies.append(await message.reply("pong"))
        await message.add_reaction("👍")

    client.on_message_hook = answer
    event = fake.message_create("ping", channel_id=TEXT_CHANNEL_ID, mention_bot=True)
    await fake.wait_for("PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
    message = client.messages[0]
    assert isinstance(message.channel, discord.TextChannel) and message.guild is not None
    assert isinstance(message.author, discord.Member) and client.user in message.mentions
    assert message.content == f"<@{BOT_ID}> ping"
    assert fake.calls_to("POST /channels/{channel_id}/typing")[0].params["channel_id"] == str(
        TEXT_CHANNEL_ID
    )
    sent = fake.calls_to(SEND)[0].json
    assert sent["message_reference"]["message_id"] == int(event["id"])
    assert replies[0].reference is not None and replies[0].reference.message_id == message.id
    assert isinstance(replies[0].reference.resolved, discord.Message)
    assert fake.reactions[message.id] == ["👍"]
    assert not client.errors


async def test_threads_forum_posts_and_channel_lookup(fake: FakeDiscord, client: Client) -> None:
    guild = client.get_guild(GUILD_ID)
    assert guild is not None
    assert isinstance(guild.get_channel(FORUM_ID), discord.ForumChannel)
    post = guild.get_thread(FORUM_POST_ID)
    assert post is not None and isinstance(post.parent, discord.ForumChannel)

    fake.message_create("in a thread", channel_id=THREAD_ID)
    new_post = fake.thread_create("Help me", parent_id=FORUM_ID, starter_content="It broke")
    await eventually(lambda: len(client.messages) == 2 and client.threads)
    in_thread, starter = client.messages
    assert isinstance(in_thread.channel, discord.Thread)
    assert in_thread.channel.parent_id == TEXT_CHANNEL_ID and in_thread.guild == guild
    assert isinstance(client.threads[0].parent, discord.ForumChannel)
    assert starter.id == client.threads[0].id == int(new_post["id"])
    assert starter.content == "It broke"

    fetched = await client.fetch_channel(FORUM_POST_ID)
    assert isinstance(fetched, discord.Thread) and fetched.parent_id == FORUM_ID
    with pytest.raises(discord.NotFound) as missing:
        await client.fetch_channel(OTHER_CHANNEL_ID)
    assert missing.value.code == 10003

    forum = guild.get_channel(FORUM_ID)
    assert isinstance(forum, discord.ForumChannel)
    created = await forum.create_thread(name="Bot post", content="Hello forum")
    assert created.message.id == created.thread.id and created.message.content == "Hello forum"
    text = guild.get_channel(TEXT_CHANNEL_ID)
    assert isinstance(text, discord.TextChannel)
    root = await text.send("root")
    thread = await root.create_thread(name="side")
    assert thread.id == root.id
    await thread.send("inside")
    assert fake.sent[-1]["channel_id"] == str(thread.id)


async def test_bot_edit_delete_and_user_edits(fake: FakeDiscord, client: Client) -> None:
    channel = client.get_channel(TEXT_CHANNEL_ID)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("draft")
    edited = await sent.edit(content="final")
    assert edited.content == "final" and edited.edited_at is not None
    await sent.delete()
    assert sent.id not in fake.messages
    assert [c.key.split()[0] for c in fake.calls[-3:]] == ["POST", "PATCH", "DELETE"]

    event = fake.message_create("typo", channel_id=TEXT_CHANNEL_ID)
    await eventually(lambda: client.messages)
    fake.message_update(int(event["id"]), "fixed")
    await eventually(lambda: len(client.edits) == 2)
    pairs = [(before.content, after.content) for before, after in client.edits]
    assert pairs == [("draft", "final"), ("typo", "fixed")]  # Discord echoes the bot's edit too
    fake.message_create("to a deleted one", channel_id=TEXT_CHANNEL_ID, referenced_message=sent.id)
    await eventually(lambda: len(client.messages) == 2)
    reference = client.messages[1].reference
    assert reference is not None and reference.message_id == sent.id
    assert isinstance(reference.resolved, discord.DeletedReferencedMessage)


async def test_auto_sharded_client_identifies_every_shard() -> None:
    async with FakeDiscord(shards=2) as fake:
        fake.add_guild(OTHER_GUILD_ID, "Second")
        fake.add_text_channel(OTHER_CHANNEL_ID, OTHER_GUILD_ID)
        bot = ShardedClient(intents=_intents(), **fake.client_kwargs())
        async with running(bot):
            assert len(fake.calls_to("GET /gateway/bot")) == 1
            assert sorted(i["shard"] for i in fake.identifies) == [[0, 2], [1, 2]]
            assert fake.connected_shards == [0, 1] and bot.shard_count == 2
            assert sorted(g.id for g in bot.guilds) == [GUILD_ID, OTHER_GUILD_ID]
            fake.message_create("hi shard 1", channel_id=OTHER_CHANNEL_ID)
            fake.message_create("hi in a DM")
            await eventually(lambda: len(bot.messages) == 2)
            by_content = {m.content: m for m in bot.messages}
            guild = by_content["hi shard 1"].guild
            assert guild is not None and guild.shard_id == 1
            assert by_content["hi in a DM"].guild is None


# --- gateway resilience --------------------------------------------------------------------


async def test_close_4000_resumes_and_replays_the_missed_event_once(
    fake: FakeDiscord, client: Client
) -> None:
    assert await fake.close(4000) == 1
    missed = fake.message_create("sent while away")  # logged for the session, not delivered
    await fake.wait_resumed(1)
    await eventually(lambda: client.messages and client.resumed_count)
    fake.message_create("after")
    await eventually(lambda: len(client.messages) == 2)
    assert [m.content for m in client.messages] == ["sent while away", "after"]
    assert client.messages[0].id == int(missed["id"])
    assert fake.identify_count == 1 and client.ready_count == 1
    # READY is s=1 and the guild's GUILD_CREATE s=2: the client resumed from 2, missed s=3.
    assert fake.resumes[0] == {"seq": 2, "session_id": fake.session_ids[0], "token": TOKEN}


async def test_dropped_socket_and_op7_resume(fake: FakeDiscord, client: Client) -> None:
    assert await fake.drop_socket() == 1
    await fake.wait_resumed(1)
    assert fake.send_reconnect() == 1
    await fake.wait_resumed(2)
    await eventually(lambda: client.resumed_count == 2)
    assert fake.identify_count == 1 and fake.gateway_connections == 3


async def test_invalid_session_forces_a_fresh_identify(fake: FakeDiscord, client: Client) -> None:
    assert fake.invalidate_session(resumable=False) == 1
    await fake.wait_identified(2)
    await eventually(lambda: client.ready_count == 2)
    assert fake.resume_count == 0 and len(fake.session_ids) == 1
    assert fake.invalidate_session(resumable=True) == 1
    await fake.wait_resumed(1)


async def test_unacked_heartbeats_make_a_zombie_that_resumes() -> None:
    async with FakeDiscord(heartbeat_interval_ms=50) as fake:
        bot = _client(fake, heartbeat_timeout=0.3)
        async with running(bot):
            fake.ack_heartbeats = False
            await fake.wait_resumed(1)
            fake.ack_heartbeats = True
            assert fake.identify_count == 1


async def test_raw_gateway_protocol(fake: FakeDiscord) -> None:
    """Unknown session → op 9 false; without the GUILDS intent READY has no GUILD_CREATE."""
    async with (
        aiohttp.ClientSession(connector=fake.connector()) as session,
        session.ws_connect(
            "wss://gateway.discord.gg/?v=10&encoding=json&compress=zlib-stream"
        ) as ws,
    ):
        hello = await ws.receive()
        assert hello.type is aiohttp.WSMsgType.TEXT  # never compressed binary frames
        assert hello.json() == {"op": 10, "d": {"heartbeat_interval": 41250}}
        await ws.send_json({"op": 6, "d": {"token": TOKEN, "session_id": "nope", "seq": 3}})
        assert await ws.receive_json() == {"op": 9, "d": False}
        await ws.send_json({"op": 2, "d": {"token": TOKEN, "intents": 0, "shard": [0, 1]}})
        ready = await ws.receive_json()
        assert (ready["op"], ready["s"], ready["t"]) == (0, 1, "READY")
        assert ready["d"]["guilds"] == [{"id": str(GUILD_ID), "unavailable": True}]
        assert ready["d"]["resume_gateway_url"] == "wss://gateway.discord.gg/"
        await ws.send_json({"op": 1, "d": 1})
        assert await ws.receive_json() == {"op": 11}  # no GUILD_CREATE in between
    assert [f.op for f in fake.frames] == [6, 2, 1] and fake.frames[2].shard == (0, 1)


async def test_close_4014_raises_privileged_intents_required(fake: FakeDiscord) -> None:
    bot = _client(fake)
    async with running(bot) as task:
        await fake.close(4014)
        with pytest.raises(discord.PrivilegedIntentsRequired):
            await asyncio.wait_for(task, 5.0)

    fake.enabled_privileged_intents = 0  # the portal switch is off: IDENTIFY itself gets 4014
    refused = _client(fake)
    try:
        with pytest.raises(discord.PrivilegedIntentsRequired):
            await asyncio.wait_for(refused.start(TOKEN), 5.0)
    finally:
        await refused.close()
    allowed = _client(fake, intents=_intents(message_content=False))
    async with running(allowed):
        assert allowed.ready_count == 1


async def test_close_4004_raises_connection_closed_not_login_failure(fake: FakeDiscord) -> None:
    bot = _client(fake)
    async with running(bot) as task:
        await fake.close(4004)
        with pytest.raises(discord.ConnectionClosed) as closed:
            await asyncio.wait_for(task, 5.0)
    assert closed.value.code == 4004 and not isinstance(closed.value, discord.LoginFailure)
    assert bot.is_closed()


async def test_wrong_or_revoked_token_is_a_login_failure(fake: FakeDiscord) -> None:
    bot = _client(fake)
    try:
        with pytest.raises(discord.LoginFailure):
            await bot.login("not-the-token")
    finally:
        await bot.close()
    assert fake.calls[-1].headers["Authorization"] == "Bot not-the-token"
    fake.revoke_token()
    revoked = _client(fake)
    try:
        with pytest.raises(discord.LoginFailure):
            await revoked.login(TOKEN)
    finally:
        await revoked.close()


# --- REST errors and limits ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "exc_type", "code"),
    [
        (FaultSpec.error(MISSING_PERMISSIONS), discord.Forbidden, 50013),
        (FaultSpec.error(MISSING_ACCESS), discord.Forbidden, 50001),
        (FaultSpec.error(UNKNOWN_CHANNEL), discord.NotFound, 10003),
        (FaultSpec(404, 10008, "Unknown Message"), discord.NotFound, 10008),
        (FaultSpec(503, 0, "upstream unavailable"), discord.DiscordServerError, 0),
        (FaultSpec(401, 0, "401: Unauthorized"), discord.HTTPException, 0),
        (FaultSpec.rate_limit(0.1, via=False), discord.HTTPException, 0),
    ],
)
async def test_faults_map_to_discord_exceptions(
    fake: FakeDiscord, rest: Client, spec: FaultSpec, exc_type: type[Exception], code: int
) -> None:
    fake.fail(SEND, spec)
    channel = rest.get_partial_messageable(DM_CHANNEL_ID)
    with pytest.raises(exc_type) as raised:
        await channel.send("x")
    assert isinstance(raised.value, discord.HTTPException)
    assert (raised.value.status, raised.value.code) == (spec.status, code)
    assert len(fake.calls_to(SEND)) == 1 and not fake.sent
    await channel.send("recovered")  # the fault was used up
    assert [m["content"] for m in fake.sent] == ["recovered"]


@pytest.mark.parametrize("global_", [False, True])
async def test_rate_limit_with_via_is_retried_and_sent_once(
    fake: FakeDiscord, rest: Client, global_: bool
) -> None:
    fake.fail(SEND, FaultSpec.rate_limit(0.1, global_=global_))
    started = time.monotonic()
    message = await rest.get_partial_messageable(DM_CHANNEL_ID).send("once")
    assert time.monotonic() - started >= 0.09
    assert message.content == "once" and len(fake.calls_to(SEND)) == 2
    assert [m["content"] for m in fake.sent] == ["once"]


async def test_delay_and_dropped_connection_faults(fake: FakeDiscord, rest: Client) -> None:
    channel = rest.get_partial_messageable(DM_CHANNEL_ID)
    fake.fail(SEND, FaultSpec(200, delay_s=0.15))
    started = time.monotonic()
    await channel.send("slow")
    assert time.monotonic() - started >= 0.14
    fake.fail(SEND, FaultSpec(200, drop_connection=True))
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await channel.send("lost")
    assert [m["content"] for m in fake.sent] == ["slow"]


async def test_forbidden_and_unknown_channels(fake: FakeDiscord, rest: Client) -> None:
    fake.forbid_channel(TEXT_CHANNEL_ID, code=50001)
    channel = rest.get_partial_messageable(TEXT_CHANNEL_ID)
    for action in (channel.send("x"), channel.typing().wrapped_typer()):
        with pytest.raises(discord.Forbidden) as denied:
            await action
        assert denied.value.code == 50001
    fake.allow_channel(TEXT_CHANNEL_ID)
    await channel.send("allowed")
    with pytest.raises(discord.NotFound) as unknown:
        await rest.get_partial_messageable(OTHER_CHANNEL_ID).send("x")
    assert unknown.value.code == 10003
    dm = await rest.create_dm(discord.Object(USER_ID))
    assert dm.id == DM_CHANNEL_ID and fake.calls[-1].json == {"recipient_id": USER_ID}
    with pytest.raises(discord.NotFound) as no_message:
        await channel.get_partial_message(OTHER_CHANNEL_ID).add_reaction("👍")
    assert no_message.value.code == 10008


async def test_message_limits_are_validated(fake: FakeDiscord, rest: Client) -> None:
    channel = rest.get_partial_messageable(DM_CHANNEL_ID)
    assert (await channel.send("a" * 2000)).content == "a" * 2000
    with pytest.raises(discord.HTTPException) as too_long:
        await channel.send("a" * 2001)
    assert (too_long.value.status, too_long.value.code) == (400, 50035)
    assert "In content: Must be 2000 or fewer in length." in too_long.value.text
    view = discord.ui.View()
    view.add_item(discord.ui.Button(label="x", custom_id="c" * 101))
    with pytest.raises(discord.HTTPException) as bad_id:
        await channel.send("buttons", view=view)
    assert bad_id.value.code == 50035 and "custom_id" in bad_id.value.text
    with pytest.raises(discord.HTTPException) as empty:
        await channel.send()
    assert empty.value.code == 50006


async def test_raw_requests_json_type_rows_and_resolver(fake: FakeDiscord) -> None:
    row = {"type": 1, "components": [{"type": 2, "style": 1, "label": "b", "custom_id": "b"}]}
    url = f"https://discord.com{API_PREFIX}/channels/{DM_CHANNEL_ID}/messages"
    headers = {"Authorization": f"Bot {TOKEN}"}
    async with aiohttp.ClientSession(connector=fake.connector()) as session:
        async with session.get(f"https://discord.com{API_PREFIX}/gateway") as resp:
            assert resp.headers["Content-Type"] == "application/json"
            assert await resp.json() == {"url": "wss://gateway.discord.gg"}
        too_many = {"content": "x", "components": [row] * 6}
        async with session.post(url, json=too_many, headers=headers) as resp:
            body = await resp.json()
            assert (resp.status, body["code"]) == (400, 50035) and "components" in body["errors"]
        with pytest.raises(aiohttp.ClientConnectorError):
            await session.get("https://example.com/")
    resolver = FakeResolver(fake.port, DISCORD_HOSTS)
    assert (await resolver.resolve("cdn.discordapp.com"))[0]["port"] == fake.port
    with pytest.raises(OSError):
        await resolver.resolve("api.openai.com")
    assert resolver.refused == ["api.openai.com"]


async def test_attachments_round_trip_through_the_fake_cdn(
    fake: FakeDiscord, client: Client
) -> None:
    fake.message_create("see file", attachments=[("notes.txt", b"hello file")])
    await eventually(lambda: client.messages)
    [attached] = client.messages[0].attachments
    assert attached.filename == "notes.txt" and await attached.read() == b"hello file"
    channel = client.messages[0].channel
    sent = await channel.send("back", file=discord.File(__file__, filename="t.py"))
    assert sent.attachments[0].filename == "t.py" and fake.calls_to(SEND)[-1].files


# --- interactions ---------------------------------------------------------------------------


async def test_button_defer_followup_and_edit(fake: FakeDiscord, client: Client) -> None:
    async def handle(interaction: discord.Interaction) -> None:
        await interaction.response.defer()
        await interaction.followup.send("working on it")
        await interaction.edit_original_response(content="done")

    client.on_interaction_hook = handle
    event = fake.interaction_create("approve", channel_id=TEXT_CHANNEL_ID)
    await fake.wait_for("PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original")
    interaction = client.interactions[0]
    assert interaction.type is discord.InteractionType.component
    assert interaction.custom_id == "approve"
    assert isinstance(interaction.user, discord.Member) and interaction.guild_id == GUILD_ID
    assert interaction.message is not None and interaction.message.id == int(event["message"]["id"])
    [callback] = fake.calls_to(CALLBACK)
    assert callback.json == {"type": 6} and callback.query == {"with_response": "1"}
    assert [r.type for r in fake.interaction_responses] == [6]
    assert fake.messages[int(event["message"]["id"])]["content"] == "done"
    assert [m["content"] for m in fake.sent] == ["working on it"]
    assert not client.errors


async def test_select_send_message_then_duplicate_and_late_callbacks(
    fake: FakeDiscord, client: Client
) -> None:
    async def handle(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("picked", ephemeral=True)

    client.on_interaction_hook = handle
    event = fake.interaction_create("menu", values=["a", "b"])  # in the user's DM
    await fake.wait_for(CALLBACK)
    first = client.interactions[0]
    assert first.custom_id == "menu" and dict(first.data or {})["values"] == ["a", "b"]
    assert isinstance(first.user, discord.User) and first.guild_id is None
    [response] = fake.interaction_responses
    assert (response.type, response.data) == (4, {"tts": False, "content": "picked", "flags": 64})
    assert fake.sent[-1]["flags"] == 64 and fake.sent[-1]["webhook_id"] == str(BOT_ID)

    fake.interaction_create("menu", values=["a"], interaction_id=int(event["id"]))  # redelivered
    await eventually(lambda: client.errors)
    assert isinstance(client.errors[0], discord.NotFound) and client.errors[0].code == 10062

    async def slow(interaction: discord.Interaction) -> None:
        await asyncio.sleep(0.1)
        await interaction.response.defer(thinking=True)

    client.on_interaction_hook = slow
    fake.interaction_window_s = 0.05
    fake.interaction_create("late")
    await eventually(lambda: len(client.errors) == 2)
    assert isinstance(client.errors[1], discord.NotFound) and client.errors[1].code == 10062
    assert len(fake.interaction_responses) == 1
