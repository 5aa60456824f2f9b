"""End to end: Telegram webhook mode on the gateway's own HTTP server, guarded by the secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp

from chatgate.gateway.app import Gateway
from tests.channels.telegram.helpers_b import key_of, settled
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM
from tests.fakes.telegram import FakeTelegram
from tests.harness import running, url

SECRET = "s3cret-token"
HOOK = "/tg/hook"
CHANNEL = f"""    dm_policy: open
    mode: webhook
    webhook: {{public_url: "https://example.test", path: {HOOK}, secret_token: {SECRET}}}"""
TIMEOUT = 15.0


async def post(
    http: aiohttp.ClientSession, gw: Gateway, body: Any, secret: str | None = SECRET
) -> tuple[int, Any]:
    """POST like Telegram does, straight to the gateway (the public URL is not reachable here)."""
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with http.post(url(gw, HOOK), data=data, headers=headers) as resp:
        text = await resp.text()
    try:
        return resp.status, json.loads(text)
    except ValueError:
        return resp.status, text


async def test_webhook_is_registered_then_updates_are_answered_and_it_is_removed_on_stop(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        [hook] = fake_tg.calls_of("setWebhook")
        assert hook.params["url"] == "https://example.test/tg/hook"
        assert hook.params["secret_token"] == SECRET
        assert "callback_query" in hook.params["allowed_updates"]
        assert fake_tg.webhook_url == "https://example.test/tg/hook"

        update = fake_tg.dm(42, "hello over webhook")
        status, body = await post(http, gw, update)
        assert (status, body) == (200, {"ok": True})
        assert await gw.rt.journal.get(key_of(update)) is not None  # journaled before the 200
        [reply] = await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        assert reply.params["text"] == "echo: hello over webhook"

        assert (await post(http, gw, update))[0] == 200  # Telegram redelivers: answered once
        await settled(gw, key_of(update))
        assert fake_tg.calls_of("deleteWebhook") == []
    assert len(fake_tg.calls_of("sendMessage")) == 1
    assert len(fake_llm.requests) == 1
    assert fake_tg.calls_of("getUpdates") == []  # webhook mode never polls
    [removed] = fake_tg.calls_of("deleteWebhook")
    assert removed.at > reply.at
    assert fake_tg.webhook_url is None


async def test_wrong_or_missing_secret_is_refused_and_nothing_is_processed(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        forged = fake_tg.dm(42, "forged")
        for secret in ("not-the-secret", None, SECRET + "x", ""):
            status, _ = await post(http, gw, forged, secret=secret)
            assert status == 403, secret
        assert await gw.rt.journal.get(key_of(forged)) is None

        genuine = fake_tg.dm(43, "genuine")  # the endpoint itself works
        assert (await post(http, gw, genuine))[0] == 200
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
        await settled(gw, key_of(genuine))
        assert await gw.rt.journal.get(key_of(forged)) is None
    assert [r.last_user_text for r in fake_llm.requests] == ["genuine"]
    assert [c.params["chat_id"] for c in fake_tg.calls_of("sendMessage")] == [43]


async def test_malformed_body_is_rejected(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_config(tmp_path, fake_tg, fake_llm, channel=CHANNEL)
    async with running(config) as gw, aiohttp.ClientSession() as http:
        bodies: list[Any] = [b"{not json", [1, 2], None, {}]  # none is an Update object
        statuses = [(await post(http, gw, body))[0] for body in bodies]
        assert (await post(http, gw, fake_tg.dm(42, "still fine")))[0] == 200
        await fake_tg.wait_for("sendMessage", timeout=TIMEOUT)
    assert statuses == [400, 400, 400, 400]
    assert [r.last_user_text for r in fake_llm.requests] == ["still fine"]
