"""The fake Slack platform, exercised by the real slack_sdk and slack_bolt over loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond, AsyncSay
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from tests.fakes.slack import (
    APP_TOKEN,
    BOT_TOKEN,
    BOT_USER_ID,
    SIGNING_SECRET,
    TEAM_ID,
    FakeSlack,
    sign,
)

# The SDK's stale-socket monitor and reconnect loop tick at ping_interval (default 10 s).
PING = 0.3
JSONDict = dict[str, Any]


def _client(
    fake: FakeSlack, session: aiohttp.ClientSession, token: str | None = BOT_TOKEN, **kw: Any
) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=fake.api_url, session=session, **kw)


def _section(text: str) -> JSONDict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


async def _api_error(call: Awaitable[AsyncSlackResponse]) -> AsyncSlackResponse:
    with pytest.raises(SlackApiError) as caught:
        await call
    response: AsyncSlackResponse = caught.value.response
    return response


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as shared:
        yield shared


@pytest.fixture
def client(fake_slack: FakeSlack, session: aiohttp.ClientSession) -> AsyncWebClient:
    return _client(fake_slack, session)


@pytest.fixture
def app(client: AsyncWebClient) -> AsyncApp:
    return AsyncApp(client=client, signing_secret=SIGNING_SECRET)


@asynccontextmanager
async def _socket_mode(app: AsyncApp) -> AsyncIterator[AsyncSocketModeHandler]:
    handler = AsyncSocketModeHandler(app, app_token=APP_TOKEN, ping_interval=PING)
    await handler.connect_async()
    try:
        yield handler
    finally:
        await handler.close_async()


# --- Web API ------------------------------------------------------------------------------------


async def test_posts_updates_deletes_and_reactions_are_recorded(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    fake = fake_slack
    first = await client.chat_postMessage(channel="C1", text="hello", blocks=[_section("*hi*")])
    reply = await client.chat_postMessage(channel="C1", text="in thread", thread_ts=first["ts"])
    assert float(reply["ts"]) > float(first["ts"])
    assert reply["message"]["thread_ts"] == first["ts"] and reply["message"]["user"] == BOT_USER_ID
    edited = await client.chat_update(channel="C1", ts=first["ts"], text="edited")
    assert edited["text"] == "edited" and edited["message"]["edited"]["user"] == BOT_USER_ID
    for name in ("eyes", "white_check_mark"):
        await client.reactions_add(channel="C1", timestamp=first["ts"], name=name)
    await client.reactions_remove(channel="C1", timestamp=first["ts"], name="eyes")
    await client.chat_delete(channel="C1", ts=reply["ts"])

    posted = fake.posted("C1")
    assert [p["text"] for p in posted] == ["hello", "in thread"]  # snapshots, edits not applied
    assert posted[0]["blocks"] == [_section("*hi*")] and "thread_ts" not in posted[0]
    assert fake.posted(thread_ts=first["ts"]) == [posted[1]]
    assert fake.updates() == [
        {"channel": "C1", "ts": first["ts"], "text": "edited", "blocks": None}
    ]
    current = fake.message("C1", first["ts"])
    assert current is not None and current["text"] == "edited"
    assert [r["name"] for r in fake.reactions("C1", first["ts"])] == ["white_check_mark"]
    assert fake.deletes() == [{"channel": "C1", "ts": reply["ts"]}]
    assert fake.message("C1", reply["ts"]) is None

    post, react = fake.calls("chat.postMessage")[0], fake.calls("reactions.add")[0]
    assert (post.token, post.http_verb, post.content_type) == (
        BOT_TOKEN,
        "POST",
        "application/json",
    )
    # slack_sdk sends params= methods as a query string under a form content type.
    assert react.content_type == "application/x-www-form-urlencoded"
    assert react.params == {"channel": "C1", "timestamp": first["ts"], "name": "eyes"}
    assert all(c.status == 200 and c.error is None for c in fake.calls())


def _arrange(fake: FakeSlack, case: str) -> str:
    """Set up one failure mode of chat.postMessage; returns the token the client should use."""
    if case == "fault":
        fake.fail("chat.postMessage", "channel_not_found")
    elif case == "unknown-channel":
        fake.known_channels = {"C2"}
    elif case == "rate-limited":
        fake.rate_limit("chat.postMessage", retry_after=7)
    elif case == "server-error":
        fake.fail("chat.postMessage", "fatal_error", status=500)
    return "xoxb-wrong" if case == "wrong-token" else BOT_TOKEN


@pytest.mark.parametrize(
    ("case", "status", "error", "retry_after"),
    [
        ("fault", 200, "channel_not_found", None),
        ("unknown-channel", 200, "channel_not_found", None),
        ("wrong-token", 200, "invalid_auth", None),
        ("rate-limited", 429, "ratelimited", "7"),
        ("server-error", 500, "fatal_error", None),
    ],
)
async def test_errors_surface_as_slack_api_error(
    fake_slack: FakeSlack,
    session: aiohttp.ClientSession,
    case: str,
    status: int,
    error: str,
    retry_after: str | None,
) -> None:
    client = _client(fake_slack, session, _arrange(fake_slack, case))
    response = await _api_error(client.chat_postMessage(channel="C1", text="hi"))
    assert (response.status_code, response["error"], response["ok"]) == (status, error, False)
    assert response.headers.get("Retry-After") == retry_after
    call = fake_slack.calls("chat.postMessage")[-1]
    assert (call.status, call.error) == (status, error)
    assert fake_slack.posted() == []


async def test_message_limits_like_slack(fake_slack: FakeSlack, client: AsyncWebClient) -> None:
    at_limit = await client.chat_postMessage(
        channel="C1", text="x" * 40_000, blocks=[_section("y" * 3_000)] * 50
    )
    too_long = await _api_error(client.chat_postMessage(channel="C1", text="x" * 40_001))
    assert too_long["error"] == "msg_too_long"
    many = await _api_error(
        client.chat_postMessage(channel="C1", text="t", blocks=[_section("b")] * 51)
    )
    assert many["error"] == "invalid_blocks"
    big = await _api_error(
        client.chat_postMessage(channel="C1", text="t", blocks=[_section("y" * 3_001)])
    )
    assert big["errors"] == ["must be less than 3001 characters [json-pointer:/blocks/0/text/text]"]
    empty = await _api_error(client.api_call("chat.postMessage", json={"channel": "C1"}))
    assert empty["error"] == "no_text"
    edit = await _api_error(client.chat_update(channel="C1", ts=at_limit["ts"], text="z" * 40_001))
    assert edit["error"] == "msg_too_long"
    fake_slack.add_channel("C9", is_archived=True)
    archived = await _api_error(client.chat_postMessage(channel="C9", text="hi"))
    assert archived["error"] == "is_archived"
    assert [p["ts"] for p in fake_slack.posted()] == [at_limit["ts"]]


async def test_faults_are_fifo_per_method_and_channel_scoped(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    fake_slack.fail("chat.postMessage", "not_in_channel", channel="C2")
    fake_slack.fail("chat.postMessage", "is_archived")
    fake_slack.fail("chat.postMessage", "restricted_action")

    async def error_of(channel: str) -> str | None:
        try:
            await client.chat_postMessage(channel=channel, text="x")
        except SlackApiError as exc:
            return str(exc.response["error"])
        return None

    assert [await error_of(c) for c in ("C1", "C1", "C1", "C2", "C2")] == [
        "is_archived",
        "restricted_action",
        None,
        "not_in_channel",
        None,
    ]
    assert (await client.reactions_add(channel="C1", timestamp="1.0", name="eyes"))["ok"]


async def test_delay_fault_is_observable(fake_slack: FakeSlack, client: AsyncWebClient) -> None:
    fake_slack.delay("chat.postMessage", 0.3)
    started = time.monotonic()
    assert (await client.chat_postMessage(channel="C1", text="slow"))["ok"]
    assert time.monotonic() - started >= 0.3
    # With a shared session the session's timeout applies (AsyncWebClient(timeout=) does not).
    fake_slack.delay("chat.postMessage", 1.0)
    timeout = aiohttp.ClientTimeout(total=0.2)
    async with aiohttp.ClientSession(timeout=timeout) as impatient:
        with pytest.raises(TimeoutError):
            await _client(fake_slack, impatient).chat_postMessage(channel="C1", text="late")
    assert len(fake_slack.calls("chat.postMessage")) == 2


async def test_dropped_connection_is_a_client_error_or_retried(
    fake_slack: FakeSlack, session: aiohttp.ClientSession
) -> None:
    fake_slack.drop_connection("chat.postMessage")
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await _client(fake_slack, session, retry_handlers=[]).chat_postMessage(
            channel="C1", text="a"
        )
    # slack_sdk's default handler retries connection errors once (after 0.5-1.5 s): make it quick.
    quick = AsyncConnectionErrorRetryHandler(
        interval_calculator=FixedValueRetryIntervalCalculator(0.01)
    )
    fake_slack.drop_connection("chat.postMessage")
    retried = _client(fake_slack, session, retry_handlers=[quick])
    assert (await retried.chat_postMessage(channel="C1", text="b"))["ok"]
    assert [c.error for c in fake_slack.calls("chat.postMessage")] == ["dropped", "dropped", None]


async def test_token_checks_and_revocation(
    fake_slack: FakeSlack, session: aiohttp.ClientSession, client: AsyncWebClient
) -> None:
    auth = await client.auth_test()
    assert (auth["team_id"], auth["user_id"], auth["bot_id"]) == (TEAM_ID, BOT_USER_ID, "BBOT")
    url = (await client.apps_connections_open(app_token=APP_TOKEN))["url"]
    assert url.startswith(f"ws://127.0.0.1:{fake_slack.port}/link/?ticket=")
    assert fake_slack.calls("apps.connections.open")[0].token == APP_TOKEN
    wrong_type = await _api_error(client.apps_connections_open(app_token=BOT_TOKEN))
    assert wrong_type["error"] == "not_allowed_token_type"
    app_as_bot = _client(fake_slack, session, APP_TOKEN)
    assert (await _api_error(app_as_bot.auth_test()))["error"] == "not_allowed_token_type"
    anonymous = _client(fake_slack, session, None)
    assert (await _api_error(anonymous.auth_test()))["error"] == "not_authed"
    fake_slack.revoke_token()
    assert (await _api_error(client.auth_test()))["error"] == "token_revoked"
    fake_slack.revoke_token(error="invalid_auth")
    revoked = await _api_error(client.chat_postMessage(channel="C1", text="x"))
    assert (revoked.status_code, revoked["error"]) == (200, "invalid_auth")


async def test_conversations_users_info_and_generic_methods(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    fake_slack.add_channel("C7", is_archived=True, name="old-news")
    old = (await client.conversations_info(channel="C7"))["channel"]
    assert (old["name"], old["is_archived"], old["is_im"]) == ("old-news", True, False)
    dm = (await client.conversations_info(channel="D1"))["channel"]
    assert dm["is_im"] and dm["is_private"] and not dm["is_archived"]
    assert fake_slack.calls("conversations.info")[0].http_verb == "GET"
    fake_slack.add_user("U42", real_name="Ada Lovelace", tz="Europe/London")
    ada = (await client.users_info(user="U42"))["user"]
    assert (ada["real_name"], ada["tz"], ada["is_bot"]) == ("Ada Lovelace", "Europe/London", False)
    assert (await client.users_info(user=BOT_USER_ID))["user"]["profile"]["bot_id"] == "BBOT"
    assert (await _api_error(client.users_info(user="nobody")))["error"] == "user_not_found"
    status = await client.api_call("assistant.threads.setStatus", json={"channel_id": "D1"})
    assert status.data == {"ok": True}
    fake_slack.known_channels = {"C7"}
    assert (await _api_error(client.conversations_info(channel="C8")))[
        "error"
    ] == "channel_not_found"


async def test_wait_helpers_explain_timeouts(fake_slack: FakeSlack, client: AsyncWebClient) -> None:
    waiter = asyncio.create_task(fake_slack.wait_posts(2, channel="C1"))
    await client.chat_postMessage(channel="C1", text="one")
    await client.chat_postMessage(channel="C2", text="elsewhere")
    await client.chat_postMessage(channel="C1", text="two")
    assert [p["text"] for p in await waiter] == ["one", "two"]
    calls = await fake_slack.wait_calls(
        "chat.postMessage", where=lambda c: c.params["channel"] == "C2"
    )
    assert [c.params["text"] for c in calls] == ["elsewhere"]
    with pytest.raises(AssertionError, match=r"(?s)expected 1 chat.update.*chat.postMessage 200"):
        await fake_slack.wait_calls("chat.update", timeout=0.05)
    with pytest.raises(AssertionError, match="not acked"):
        await fake_slack.wait_acked("nope", timeout=0.05)
    with pytest.raises(AssertionError, match="socket #1"):
        await fake_slack.wait_connected(1, timeout=0.05)


def test_sign_matches_slack_sdk_verifier() -> None:
    body, ts = '{"type":"event_callback"}', int(time.time())
    verifier = SignatureVerifier(SIGNING_SECRET)
    assert sign(SIGNING_SECRET, ts, body) == verifier.generate_signature(
        timestamp=str(ts), body=body
    )
    assert verifier.is_valid(body, str(ts), sign(SIGNING_SECRET, ts, body.encode()))
    assert not verifier.is_valid(body, str(ts - 301), sign(SIGNING_SECRET, ts - 301, body))


def test_event_builders_look_like_slack(fake_slack: FakeSlack) -> None:
    first = fake_slack.message_event("hi")
    second = fake_slack.message_event("in thread", channel="D1", thread_ts=first["ts"])
    assert float(second["ts"]) > float(first["ts"]) and second["thread_ts"] == first["ts"]
    assert first["channel_type"] == "im" and first["event_ts"] == first["ts"]
    bot = fake_slack.message_event("echo", bot_id="BBOT", subtype="bot_message")
    assert "client_msg_id" not in bot and bot["bot_id"] == "BBOT"
    mention = fake_slack.app_mention_event("help")
    assert mention["type"] == "app_mention" and mention["text"] == f"<@{BOT_USER_ID}> help"
    wrapped = fake_slack.event_callback(mention)
    assert wrapped["type"] == "event_callback" and wrapped["team_id"] == TEAM_ID
    assert wrapped["event"] is mention and wrapped["event_id"].startswith("Ev")
    click = fake_slack.block_actions_payload("approve", "yes", message_ts=first["ts"], channel="D1")
    assert click["actions"][0]["value"] == "yes" and click["message"]["text"] == "hi"
    assert click["container"] == {"type": "message", "message_ts": first["ts"], "channel_id": "D1"}


# --- Socket Mode ----------------------------------------------------------------------------------


async def test_socket_mode_event_reaches_listener_and_is_acked(
    fake_slack: FakeSlack, app: AsyncApp
) -> None:
    @app.event("message")
    async def echo(event: JSONDict, say: AsyncSay) -> None:
        await say(f"echo: {event['text']}", thread_ts=event.get("thread_ts"))

    queued = await fake_slack.push_event(fake_slack.message_event("early"))  # before connecting
    async with _socket_mode(app) as handler:
        frames: list[JSONDict] = []

        async def record(_client: Any, message: JSONDict, _raw: str | None) -> None:
            frames.append(message)

        handler.client.message_listeners.append(record)
        await fake_slack.wait_connected()
        await fake_slack.wait_acked(queued.envelope_id)
        envelope = await fake_slack.push_event(fake_slack.message_event("hi", channel="D7"))
        ack = await fake_slack.wait_acked(envelope.envelope_id)
        posts = await fake_slack.wait_posts(2)
    assert ack.payload is None and fake_slack.unacked() == []
    assert {(p["channel"], p["text"]) for p in posts} == {("D1", "echo: early"), ("D7", "echo: hi")}
    # Frames are queued inside the SDK, so even the hello reached the late listener.
    assert [f["type"] for f in frames] == ["hello", "events_api", "events_api"]
    assert frames[2]["payload"]["event"]["text"] == "hi" and frames[2]["retry_attempt"] == 0
    assert [c.method for c in fake_slack.calls()][:2] == ["apps.connections.open", "auth.test"]
    assert fake_slack.connections == []  # close_async() closed the socket


async def test_disconnect_refresh_requested_reconnects(
    fake_slack: FakeSlack, app: AsyncApp
) -> None:
    seen: asyncio.Queue[str] = asyncio.Queue()

    @app.event("message")
    async def on_message(event: JSONDict) -> None:
        seen.put_nowait(event["text"])

    async with _socket_mode(app):
        first = await fake_slack.wait_connected(1)
        await fake_slack.disconnect("refresh_requested")
        second = await fake_slack.wait_connected(2)
        envelope = await fake_slack.push_event(fake_slack.message_event("after refresh"))
        ack = await fake_slack.wait_acked(envelope.envelope_id)
        assert await asyncio.wait_for(seen.get(), 5) == "after refresh"
        assert ack.connection_id == second.id and not first.is_open
        assert fake_slack.connections == [second]
        await fake_slack.close_socket()  # a close frame: the SDK reconnects without waiting
        third = await fake_slack.wait_connected(3)
        envelope = await fake_slack.push_event(fake_slack.message_event("after close"))
        assert (await fake_slack.wait_acked(envelope.envelope_id)).connection_id == third.id
        assert await asyncio.wait_for(seen.get(), 5) == "after close"
    assert len(fake_slack.calls("apps.connections.open")) == 3


async def test_dropped_socket_redelivers_the_unacked_envelope(
    fake_slack: FakeSlack, app: AsyncApp
) -> None:
    retry_nums: list[str | None] = []
    failed_once = asyncio.Event()
    seen: asyncio.Queue[str] = asyncio.Queue()

    @app.middleware
    async def fail_first_delivery(
        request: AsyncBoltRequest, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        retry_nums.append(request.headers.get("x-slack-retry-num", [None])[0])
        if len(retry_nums) == 1:
            failed_once.set()
            return BoltResponse(status=500, body="")  # the Socket Mode adapter then sends no ack
        await next()
        return None

    @app.event("message")
    async def on_message(event: JSONDict) -> None:
        seen.put_nowait(event["text"])

    async with _socket_mode(app):
        await fake_slack.wait_connected(1)
        envelope = await fake_slack.push_event(fake_slack.message_event("important"))
        await asyncio.wait_for(failed_once.wait(), 5)
        assert not fake_slack.acked(envelope.envelope_id)
        assert fake_slack.unacked() == [envelope]
        fake_slack.drop_socket()
        second = await fake_slack.wait_connected(2)
        ack = await fake_slack.wait_acked(envelope.envelope_id)
        assert await asyncio.wait_for(seen.get(), 5) == "important"
    assert ack.connection_id == second.id
    assert (envelope.retry_attempt, envelope.retry_reason, envelope.deliveries) == (1, "timeout", 2)
    assert retry_nums == ["0", "1"]  # Bolt mirrors retry_attempt into x-slack-retry-num
    assert len(fake_slack.calls("apps.connections.open")) == 2


async def test_block_actions_and_slash_commands_over_socket_mode(
    fake_slack: FakeSlack, app: AsyncApp, client: AsyncWebClient
) -> None:
    clicks: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    @app.action("approve")
    async def approve(
        ack: AsyncAck, action: JSONDict, body: JSONDict, respond: AsyncRespond
    ) -> None:
        await ack()
        clicks.put_nowait((action["value"], body["container"]["message_ts"]))
        await respond(f"approved: {action['value']}", replace_original=False)

    @app.command("/ask")
    async def ask(ack: AsyncAck, command: JSONDict) -> None:
        await ack(f"on it: {command['text']}")

    prompt = await client.chat_postMessage(channel="C1", text="Approve?")
    async with _socket_mode(app):
        await fake_slack.wait_connected()
        click = await fake_slack.push_interactive(
            fake_slack.block_actions_payload("approve", "yes")
        )
        assert (await fake_slack.wait_acked(click.envelope_id)).payload is None
        assert await asyncio.wait_for(clicks.get(), 5) == ("yes", prompt["ts"])
        (responded,) = await fake_slack.wait_calls("response_url")
        assert responded.params["text"] == "approved: yes"
        assert responded.params["replace_original"] is False
        command = await fake_slack.push_slash_command("/ask", "why?")
        answer = await fake_slack.wait_acked(command.envelope_id)
    assert click.type == "interactive" and command.type == "slash_commands"
    assert answer.payload == {"text": "on it: why?"}


async def test_raw_socket_protocol_redelivery_and_switch(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    frames: asyncio.Queue[JSONDict] = asyncio.Queue()

    async def record(_client: Any, message: JSONDict, _raw: str | None) -> None:
        frames.put_nowait(message)

    sm = SocketModeClient(app_token=APP_TOKEN, web_client=client, ping_interval=PING)
    sm.message_listeners.append(record)
    try:
        await sm.connect()
        hello = await asyncio.wait_for(frames.get(), 5)
        assert hello["type"] == "hello" and hello["connection_info"] == {"app_id": "A1"}
        envelope = await fake_slack.push_event(fake_slack.app_mention_event("ping"))
        first = await asyncio.wait_for(frames.get(), 5)
        assert (first["envelope_id"], first["retry_attempt"], first["retry_reason"]) == (
            envelope.envelope_id,
            0,
            "",
        )
        assert first["payload"]["event"]["type"] == "app_mention"
        await fake_slack.redeliver_unacked()  # Slack's own retry after its ack timeout
        again = await asyncio.wait_for(frames.get(), 5)
        assert (again["envelope_id"], again["retry_attempt"]) == (envelope.envelope_id, 1)
        await sm.send_socket_mode_response({"envelope_id": envelope.envelope_id})
        await fake_slack.wait_acked(envelope.envelope_id)

        fake_slack.redeliver = False
        lost = await fake_slack.push_event(fake_slack.message_event("lost"))
        assert (await asyncio.wait_for(frames.get(), 5))["envelope_id"] == lost.envelope_id
        fake_slack.drop_socket()
        await fake_slack.wait_connected(2)  # redelivery would happen before this returns
        assert lost.deliveries == 1 and fake_slack.unacked() == [lost]
    finally:
        await sm.close()
    assert fake_slack.stray_frames == []


# --- Events API (HTTP mode) -------------------------------------------------------------------------


async def test_events_api_url_verification_signed_events_and_interactivity(
    fake_slack: FakeSlack, app: AsyncApp
) -> None:
    mentions: asyncio.Queue[tuple[str, Sequence[str] | None]] = asyncio.Queue()
    clicks: asyncio.Queue[str] = asyncio.Queue()

    @app.event("app_mention")
    async def on_mention(event: JSONDict, request: AsyncBoltRequest) -> None:
        mentions.put_nowait((event["text"], request.headers.get("x-slack-retry-num")))

    @app.action("approve")
    async def approve(ack: AsyncAck, action: JSONDict) -> None:
        await ack()
        clicks.put_nowait(action["value"])

    runner = web.AppRunner(app.web_app(path="/slack/events"))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
    try:
        status, body = await fake_slack.post_url_verification(url, challenge="c-123")
        assert (status, json.loads(body)) == (200, {"challenge": "c-123"})
        mention = fake_slack.app_mention_event("hello")
        assert await fake_slack.post_event(
            url, mention, retry_num=1, retry_reason="http_timeout"
        ) == (200, "")
        assert await asyncio.wait_for(mentions.get(), 5) == (f"<@{BOT_USER_ID}> hello", ["1"])
        forgeries: list[JSONDict] = [
            {"bad_signature": True},
            {"signing_secret": "someone-else"},
            {"timestamp": int(time.time()) - 6 * 60},
        ]
        for forged in forgeries:
            status, body = await fake_slack.post_event(
                url, fake_slack.app_mention_event("x"), **forged
            )
            assert (status, json.loads(body)) == (401, {"error": "invalid request"})
        status, _ = await fake_slack.post_interactive(
            url, fake_slack.block_actions_payload("approve", "ok")
        )
        assert status == 200 and await asyncio.wait_for(clicks.get(), 5) == "ok"
    finally:
        await runner.cleanup()
    assert mentions.empty()
