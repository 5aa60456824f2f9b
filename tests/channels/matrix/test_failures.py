"""Failures: a token revoked on Synapse parks the channel with its fix while other channels
serve; a room the bot may not post in is a forbidden target; and, from a small fake for what
Synapse will not produce on demand, `M_LIMIT_EXCEEDED` waits the `retry_after_ms` asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from chatgate import tracing
from chatgate.channels.base import ChannelContext
from chatgate.channels.matrix import errors
from chatgate.channels.matrix.adapter import MatrixChannel
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.model.messages import Target
from chatgate.model.outbound import OutboundMessage, Text
from chatgate.model.reasons import SendErrorKind
from tests.channels.matrix.support import Person, matrix_config
from tests.fakes.llm import FakeLLM
from tests.harness import eventually_channel_state, memory, running
from tests.support.spans import Spans, failed
from tests.support.synapse import MatrixUser, Synapse


class _Sink:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def submit(self, msg: Any) -> Any:
        self.messages.append(msg)

    def ignored(self, channel: str, reason: Any, *, chat_id: str = "") -> None:
        return None

    async def in_conversation(self, msg: Any) -> bool:
        return False


def _adapter(tmp_path: Path, config: MatrixChannelConfig) -> MatrixChannel:
    ctx = ChannelContext("matrix", config, None, tmp_path, None)  # type: ignore[arg-type]
    return MatrixChannel(ctx)


async def test_a_revoked_token_parks_the_channel_and_others_keep_serving(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, fake_llm: FakeLLM
) -> None:
    config = matrix_config(tmp_path, synapse, bot, fake_llm)
    config.write_text(config.read_text() + "  memory: {dm_policy: open}\n")
    async with running(config) as gw:
        async with aiohttp.ClientSession() as http:
            headers = {"Authorization": f"Bearer {bot.access_token}"}
            url = f"{synapse.base_url}/_matrix/client/v3/logout"
            async with http.post(url, headers=headers, json={}) as resp:
                assert resp.status == 200
        parked = await eventually_channel_state(gw, "matrix", "parked")
        await memory(gw).inject("still working?")
        [served] = await memory(gw).wait_sent(1, timeout=30)
    assert parked["hint"] == errors.TOKEN_HINT
    assert bot.access_token not in str(parked)
    assert served.text == "echo: still working?"


async def test_a_room_the_bot_is_not_in_is_a_forbidden_target(
    tmp_path: Path, synapse: Synapse, bot: MatrixUser, alice: Person
) -> None:
    room = await alice.room(name="private")
    config = MatrixChannelConfig(
        homeserver=synapse.base_url,
        user_id=bot.user_id,
        access_token=bot.access_token,  # type: ignore[arg-type]
        device_id=bot.device_id,
    )
    adapter = _adapter(tmp_path, config)
    await adapter.start(_Sink())
    try:
        [chunk] = adapter.render(OutboundMessage((Text("hello"),)))
        result = await adapter.send(Target("matrix", room), chunk)
    finally:
        await adapter.stop()
    assert not result.ok and result.kind is SendErrorKind.FORBIDDEN
    assert adapter.status()["last_error"]["hint"] == errors.FORBIDDEN_HINT


@pytest.fixture
async def limited_server() -> AsyncIterator[str]:
    sends: list[int] = []

    async def whoami(request: web.Request) -> web.Response:
        return web.json_response({"user_id": "@bot:fake.test", "device_id": "CHATGATE"})

    async def empty(request: web.Request) -> web.Response:
        return web.json_response({})

    async def sync(request: web.Request) -> web.Response:
        return web.json_response({"next_batch": "s1"})

    async def send(request: web.Request) -> web.Response:
        sends.append(1)
        if len(sends) == 1:
            body = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too many", "retry_after_ms": 2500}
            return web.json_response(body, status=429)
        return web.json_response({"event_id": "$sent"})

    app = web.Application()
    app.router.add_get("/_matrix/client/v3/account/whoami", whoami)
    app.router.add_get("/_matrix/client/v3/profile/{user}/displayname", empty)
    app.router.add_get("/_matrix/client/v1/media/config", empty)
    app.router.add_get("/_matrix/client/v3/sync", sync)
    app.router.add_put("/_matrix/client/v3/rooms/{room}/send/{kind}/{txn}", send)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_limit_exceeded_waits_the_retry_after_the_server_asks(
    tmp_path: Path, limited_server: str, spans: Spans
) -> None:
    config = MatrixChannelConfig(
        homeserver=limited_server,
        user_id="@bot:fake.test",
        access_token="syt_fake",  # type: ignore[arg-type]
        sync_timeout_s=0,
    )
    adapter = _adapter(tmp_path, config)
    await adapter.start(_Sink())
    try:
        [chunk] = adapter.render(OutboundMessage((Text("hello"),)))
        with tracing.span("chatgate.turn"):  # as delivery sends it: inside a message's turn
            first = await adapter.send(Target("matrix", "!room:fake.test"), chunk)
            second = await adapter.send(Target("matrix", "!room:fake.test"), chunk)
    finally:
        await adapter.stop()
    assert first.kind is SendErrorKind.RATE_LIMITED and first.retry_after_s == 2.5
    assert second.ok and second.message_ids == ("$sent",)
    # traced: each attempt is a client span of its own, the refused one an error
    refused, sent = spans.deliveries("matrix send m.room.message")
    assert failed(refused) and not failed(sent)
