"""The web chat and dashboard HTTP surface against a real in-process gateway (no browser)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from opentelemetry.trace import SpanKind

from chatgate.channels.webui import CONTENT_SECURITY_POLICY
from chatgate.gateway.app import Gateway
from chatgate.operator.arguments import NoArgs
from chatgate.operator.catalog import SESSIONS_LIST
from tests.channels.webchat.sse import messages, read_events
from tests.harness import running, url, write_config
from tests.support.spans import Spans, failed
from tests.support.waiting import eventually

API_TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"
CHAT_TOKEN = "wc-7Hq2Lm9Xv4Rt8Kp1Zs6Yd3Nb5"
BEARER = {"Authorization": f"Bearer {API_TOKEN}"}


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Gateway]:
    config = write_config(
        tmp_path,
        f"""  api_token: {API_TOKEN}
agents:
  default: {{backend: echo, prefix: "echo: "}}
  other: {{backend: echo, prefix: "other: "}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open, agents: [other]}}
""",
    )
    async with running(config) as gw:
        yield gw


def browser() -> aiohttp.ClientSession:
    """A client that keeps cookies for an IP host, like a browser on 127.0.0.1."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def sign_in(gw: Gateway, client: aiohttp.ClientSession) -> str:
    async with client.post(url(gw, "/chat/api/session"), json={"token": CHAT_TOKEN}) as r:
        assert r.status == 200
        return str((await r.json())["csrf"])


async def send(
    gw: Gateway, client: aiohttp.ClientSession, csrf: str, **body: str
) -> tuple[int, dict[str, object]]:
    headers = {"X-CSRF-Token": csrf}
    async with client.post(url(gw, "/chat/api/send"), json=body, headers=headers) as r:
        return r.status, await r.json()


async def test_sign_in_needs_the_token_and_sets_a_strict_cookie(gateway: Gateway) -> None:
    async with browser() as client:
        async with client.get(url(gateway, "/chat/api/session")) as r:
            assert await r.json() == {"signed_in": False, "auth": "token"}
        async with client.post(url(gateway, "/chat/api/session"), json={"token": "nope"}) as r:
            assert r.status == 401
        async with client.post(url(gateway, "/chat/api/session"), json={"token": CHAT_TOKEN}) as r:
            assert r.status == 200
            cookie = r.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/chat" in cookie
        async with client.get(url(gateway, "/chat/api/session")) as r:
            who = await r.json()
        assert who["signed_in"] and who["agents"] == ["default", "other"] and who["csrf"]
        async with client.get(url(gateway, "/chat")) as r:
            assert r.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
            assert r.headers["X-Frame-Options"] == "DENY"
            assert 'content="/chat"' in await r.text()


async def test_no_cookie_no_csrf_or_another_origin_is_refused(gateway: Gateway) -> None:
    async with browser() as client:
        status, _ = await send(gateway, client, "x", client_id="abcdefgh12", text="hi")
        assert status == 401
        async with client.get(url(gateway, "/chat/api/events")) as r:
            assert r.status == 401
        csrf = await sign_in(gateway, client)
        status, _ = await send(gateway, client, "", client_id="abcdefgh12", text="hi")
        assert status == 403
        async with client.post(
            url(gateway, "/chat/api/send"),
            json={"client_id": "abcdefgh12", "text": "hi"},
            headers={"X-CSRF-Token": csrf, "Origin": "https://evil.example"},
        ) as r:
            assert r.status == 403
        status, body = await send(gateway, client, csrf, client_id="short", text="hi")
        assert status == 400 and "client_id" in str(body["error"])
    async with browser() as stranger:  # a forged cookie signs nobody in
        stranger.cookie_jar.update_cookies({"chatgate_webchat": "A" * 22 + ".1.forged"})
        async with stranger.get(url(gateway, "/chat/api/events")) as r:
            assert r.status == 401


async def test_message_walks_the_pipeline_once_and_replays_from_the_outbox(
    gateway: Gateway, spans: Spans
) -> None:
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        status, body = await send(gateway, client, csrf, client_id="client-0001", text="hi there")
        assert status == 202 and body["duplicate"] is False
        message_id = str(body["message_id"])

        def answered(events: list[tuple[str, object]]) -> bool:
            return any(
                m["role"] == "assistant"
                and "echo: hi there" in json.dumps(m)
                and "…" not in json.dumps(m)
                for m in messages(events).values()
            )

        events = await read_events(client, url(gateway, "/chat/api/events"), answered)
        shown = messages(events)
        assert [m["role"] for m in sorted(shown.values(), key=lambda m: m["pos"])] == [
            "user",
            "assistant",
        ]
        last_seq = max(m["seq"] for m in shown.values())
        # the message's root span ends after its answer is in the outbox; a retry before that
        # is a duplicate of a message in flight and opens no span of its own
        await eventually(lambda: spans.named("webchat message"), what="the message's root span")
        # the same client_id again (a browser retry): journaled once, answered once
        status, body = await send(gateway, client, csrf, client_id="client-0001", text="hi there")
        assert status == 202 and body["duplicate"] is True
        async with client.get(
            url(gateway, "/api/why"),
            params={"channel": "webchat", "message_id": message_id},
            headers=BEARER,
        ) as r:
            [trail] = (await r.json())["trails"]
        assert trail["summary"] == "answered (text), delivered"
        # resuming after the last seen sequence number replays only what changed since
        replay = await read_events(
            client,
            url(gateway, f"/chat/api/events?after={last_seq}"),
            lambda ev: ev[-1][0] == "ready",
        )
        assert [m["role"] for m in messages(replay).values()] == ["user"]  # the echo rewritten
        assert sum(1 for m in messages(events).values() if m["role"] == "assistant") == 1
    # traced: the answer written into the browser's outbox is a producer span under the turn,
    # its edits too, all in the one trace of the message
    writes = spans.deliveries("webchat send", kind=SpanKind.PRODUCER)
    if spans.named("webchat edit"):
        writes += spans.deliveries("webchat edit", kind=SpanKind.PRODUCER)
    assert not any(failed(w) for w in writes)
    assert len({id(spans.turn_of(w)) for w in writes}) == 1
    [trace] = {spans.trace_id(w) for w in writes}
    roots = {spans.trace_id(r): r for r in spans.named("webchat message")}
    [retried] = [r for t, r in roots.items() if t != trace]  # the browser's retry: no turn
    assert roots[trace].attributes["chatgate.reason"] == "text"
    assert retried.attributes["chatgate.stage"] == "dedupe"


async def test_a_visitor_picks_only_among_the_listed_agents(gateway: Gateway) -> None:
    async with browser() as client:
        csrf = await sign_in(gateway, client)
        await send(gateway, client, csrf, client_id="pick-other-1", text="a", agent="other")
        await send(gateway, client, csrf, client_id="pick-bogus-1", text="b", agent="bogus")

        def both(events: list[tuple[str, object]]) -> bool:
            texts = json.dumps(list(messages(events).values()))
            return "other: a" in texts and "echo: b" in texts

        await read_events(client, url(gateway, "/chat/api/events"), both)
    keys = {s.key for s in (await gateway.operate(SESSIONS_LIST, NoArgs())).sessions}
    assert {k.split(":")[0] for k in keys} == {"other", "default"}


async def test_dashboard_page_is_public_but_its_data_needs_the_token(gateway: Gateway) -> None:
    async with aiohttp.ClientSession() as client:
        async with client.get(url(gateway, "/dashboard")) as r:
            assert r.status == 200
            assert r.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
            page = await r.text()
        for asset in re.findall(r'(?:src|href)="(/dashboard/static/[^"]+)"', page):
            async with client.get(url(gateway, asset)) as r:
                assert r.status == 200, asset
        for path in ("/api/stream", "/api/stats", "/api/status", "/api/dlq", "/api/pairing"):
            async with client.get(url(gateway, path)) as r:
                assert r.status == 401, path
        events = await read_events(
            client, url(gateway, "/api/stream"), lambda ev: True, headers=BEARER
        )
        kind, snapshot = events[0]
        assert kind == "snapshot"
        assert set(snapshot) == {"now", "status", "dlq", "pairing", "stats", "privacy", "usage"}
        assert snapshot["stats"]["window_minutes"] == 60
        assert {"shed_ratio", "evict_ratio"} <= set(snapshot["status"]["memory"])
        [chat] = [c for c in snapshot["status"]["channels"] if c["name"] == "webchat"]
        assert chat["state"] == "running" and chat["restart_budget"] == 10
        for secret in (API_TOKEN, CHAT_TOKEN):
            assert secret not in json.dumps(snapshot)
