"""Each reproducer of a 5xx a stranger could cause, against a real in-process gateway: every
one answers 4xx now, and the web chat keeps serving new browsers after many failed streams."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from chatgate.gateway.app import Gateway
from tests.harness import running, url, write_config
from tests.http_input.raw import raw_request
from tests.support.waiting import eventually

API_TOKEN = "Zq8vN2kLp4Rt7Wx1Yc5Bm9Hd3Gf6Js0A"
CHAT_TOKEN = "wc-7Hq2Lm9Xv4Rt8Kp1Zs6Yd3Nb5"
BEARER = {"Authorization": f"Bearer {API_TOKEN}"}
DEEP = b"[" * 20_000 + b"]" * 20_000  # past the recursion limit, within 64 KiB


@pytest.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Gateway]:
    config = write_config(
        tmp_path,
        f"""  api_token: {API_TOKEN}
agents:
  default: {{backend: echo, prefix: "echo: "}}
channels:
  webchat: {{auth: token, token: {CHAT_TOKEN}, dm_policy: open, max_streams: 20}}
  webhook:
    routes:
      tagged:
        path: /hooks/tagged
        signature: none
        respond: async
        prompt: "tag {{headers.X-Tag}}: {{payload.text}}"
        session: "s-{{headers.X-Tag}}"
        max_body_bytes: 4096
""",
    )
    async with running(config) as gw:
        yield gw


async def signed_in(gw: Gateway) -> tuple[aiohttp.ClientSession, str]:
    client = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with client.post(url(gw, "/chat/api/session"), json={"token": CHAT_TOKEN}) as r:
        assert r.status == 200
        return client, str((await r.json())["csrf"])


async def test_a_new_browser_is_served_after_1000_failed_streams_of_others(
    gateway: Gateway,
) -> None:
    browsers = [await signed_in(gateway) for _ in range(5)]
    seen: set[int] = set()
    try:
        for i in range(1000):  # bad resume ids (superscript digits), from several browsers
            client, _ = browsers[i % len(browsers)]
            headers = {"Last-Event-ID": "¹⁰"} if i % 2 else {}
            query = "" if i % 2 else "?after=%C2%B2"
            async with client.get(url(gateway, "/chat/api/events" + query), headers=headers) as r:
                seen.add(r.status)
                r.close()  # the browser goes away at once
        assert seen <= {200, 503}  # 503: the cap, while slots of closed streams come back
        hub = gateway.channels.adapters["webchat"].hub  # type: ignore[attr-defined]
        await eventually(lambda: hub.streams == 0, 30)  # every slot came back
        fresh, _ = await signed_in(gateway)
        async with fresh, fresh.get(url(gateway, "/chat/api/events")) as r:
            assert r.status == 200
            first = await r.content.readuntil(b"\n\n") + await r.content.readuntil(b"\n\n")
            assert b"event: ready" in first
    finally:
        for client, _ in browsers:
            await client.close()


BOMB = gzip.compress(b"{" + b" " * (8 * 1024 * 1024) + b"}")  # 8 MiB of JSON in ~8 kB

# (what, method, path, extra headers, body, status); "csrf" marks web chat writes.
CASES: list[tuple[str, str, str, dict[str, str], bytes, int]] = [
    ("chat deep JSON", "POST", "/chat/api/send", {"csrf": ""}, DEEP, 400),
    ("sign-in deep JSON", "POST", "/chat/api/session", {}, DEEP, 400),
    (
        "chat lone surrogate text",
        "POST",
        "/chat/api/send",
        {"csrf": ""},
        b'{"client_id": "abcdefgh12", "text": "\\udcff"}',
        400,
    ),
    (
        "chat lone surrogate label",
        "POST",
        "/chat/api/send",
        {"csrf": ""},
        b'{"client_id": "abcdefgh13", "choice": "a", "label": "\\udcff"}',
        400,
    ),
    (
        "chat charset=hex",
        "POST",
        "/chat/api/send",
        {"csrf": "", "Content-Type": "application/json; charset=hex"},
        b"{}",
        415,
    ),
    (
        "chat gzip bomb",
        "POST",
        "/chat/api/send",
        {"csrf": "", "Content-Encoding": "gzip"},
        BOMB,
        413,
    ),
    ("api approve deep JSON", "POST", "/api/pairing/approve", BEARER, DEEP, 400),
    (
        "api deny charset=hex",
        "POST",
        "/api/pairing/deny",
        {**BEARER, "Content-Type": "application/json; charset=hex"},
        b"{}",
        415,
    ),
    ("api reset deep JSON", "POST", "/api/sessions/reset", BEARER, DEEP, 400),
    (
        "api reset gzip bomb",
        "POST",
        "/api/sessions/reset",
        {**BEARER, "Content-Encoding": "gzip"},
        BOMB,
        413,
    ),
    ("api why without parameters", "GET", "/api/why", BEARER, b"", 400),
    ("api show without key", "GET", "/api/sessions/show", BEARER, b"", 400),
    ("api dlq limit=abc", "GET", "/api/dlq?limit=abc", BEARER, b"", 400),
    ("api dlq huge limit", "GET", "/api/dlq?limit=99999999999999999999", BEARER, b"", 400),
    ("api dlq 23 digits", "POST", "/api/dlq/" + "9" * 23 + "/replay", BEARER, b"", 400),
    ("api dlq drop 23 digits", "DELETE", "/api/dlq/" + "9" * 23, BEARER, b"", 400),
    ("api dlq superscript", "POST", "/api/dlq/%C2%B2/replay", BEARER, b"", 400),
    (
        "webhook gzip that is not gzip",
        "POST",
        "/hooks/tagged",
        {"Content-Encoding": "gzip"},
        b"not gzip at all",
        400,
    ),
    ("webhook unknown encoding", "POST", "/hooks/tagged", {"Content-Encoding": "br2"}, b"{}", 415),
    ("webhook gzip bomb", "POST", "/hooks/tagged", {"Content-Encoding": "gzip"}, BOMB, 413),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
async def test_each_reproducer_is_a_4xx(
    gateway: Gateway, case: tuple[str, str, str, dict[str, str], bytes, int]
) -> None:
    _, method, path, headers, body, status = case
    client, csrf = await signed_in(gateway)
    async with client:
        sent = {"Content-Type": "application/json", **headers}
        if "csrf" in sent:
            del sent["csrf"]
            sent["X-CSRF-Token"] = csrf
        async with client.request(
            method,
            url(gateway, path),
            data=body,
            headers=sent,
            skip_auto_headers={"Content-Encoding"},
        ) as r:
            answer = await r.read()
    assert r.status == status, answer[:300]
    assert json.loads(answer)["error"]


async def test_missing_parameter_is_named(gateway: Gateway) -> None:
    async with (
        aiohttp.ClientSession() as client,
        client.get(url(gateway, "/api/why"), headers=BEARER) as r,
    ):
        assert r.status == 400
        assert await r.json() == {
            "error": "missing parameter: channel",
            "reason_code": "missing_parameter",
        }


async def test_a_header_byte_that_is_not_utf8_is_refused_before_the_session_store(
    gateway: Gateway,
) -> None:
    body = b'{"text": "hi"}'
    head = (
        b"POST /hooks/tagged HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"X-Tag: \xe9\r\nContent-Length: %d" % len(body)
    )
    status, answer = await raw_request(gateway.port, head, body)
    assert status == 400 and json.loads(answer)["reason_code"] == "not_utf8"
    status, answer = await raw_request(
        gateway.port, head.replace(b"\xe9", b"ok"), body
    )  # the same delivery with a clean header is accepted
    assert status == 202, answer


async def test_file_links_with_odd_numbers_or_bytes_are_refused(gateway: Gateway) -> None:
    for query in ("exp=%C2%B2&sig=x", "exp=" + "9" * 30 + "&sig=x", "exp=1&sig=%C3%A9", "exp=abc"):
        status, _ = await raw_request(
            gateway.port,
            b"GET /files/abc/n.txt?type=text/plain&%s HTTP/1.1\r\nHost: x" % query.encode(),
        )
        assert status == 404, query
