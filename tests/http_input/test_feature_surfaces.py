"""Every cause of a 5xx found on the surfaces of the schedules, the send API, WhatsApp and the
webhook's file links: each request answers 4xx (or is accepted), never 5xx."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from chatgate.channels.signatures import sign
from chatgate.gateway.app import Gateway
from tests.channels.whatsapp.support import USER, webhook_url, whatsapp_config
from tests.fakes.llm import FakeLLM
from tests.fakes.whatsapp import FakeWhatsApp
from tests.harness import running, url
from tests.http_input.raw import raw_request

API_TOKEN = "Vx3kP8qLm2Rt7Wn4Yc9Bd6Hf1Gs5Jz0Q"
BEARER = {"Authorization": f"Bearer {API_TOKEN}"}
HOOK_SECRET = "whsec-surfaces-2b4d6f8h"
DEEP = b"[" * 100_000 + b"]" * 100_000
JSON = "application/json"
DIGITS = "9" * 400
JOB = {"id": "j1", "prompt": "p", "deliver": {"to": "memory:c1"}}


def job(**fields: object) -> bytes:
    return json.dumps({**JOB, **fields}).encode()


@pytest.fixture
async def gateway(
    tmp_path: Path, fake_wa: FakeWhatsApp, fake_llm: FakeLLM
) -> AsyncIterator[Gateway]:
    config = whatsapp_config(
        tmp_path,
        fake_wa,
        fake_llm,
        gateway=f"  api_token: {API_TOKEN}",
        agents='  odd: {backend: python, function: "tests.http_input.agents:odd_name"}\n',
        extra_channels=f"""  memory: {{dm_policy: open}}
  webhook:
    routes:
      files: {{path: /hooks/files, secret: {HOOK_SECRET}, agent: odd, prompt: "go"}}
schedules:
  daily: {{cron: "0 9 * * *", prompt: "report", deliver: {{to: "memory:ops"}}}}
""",
    )
    async with running(config) as gw:
        yield gw


# (what, method, path, extra headers, body)
API_CASES: list[tuple[str, str, str, dict[str, str], bytes]] = [
    *[(f"history limit={v}", "GET", f"/api/jobs/daily/history?limit={v}", {}, b"")
      for v in ("abc", "1e3", "%C2%B2", "", "1.5", "-1", "0", "99999999999999999999")],
    *[(f"{p} deep JSON", "POST", p, {}, DEEP) for p in ("/api/jobs", "/api/send")],
    *[(f"{p} charset={c}", "POST", p, {"Content-Type": f"{JSON}; charset={c}"}, b"{}")
      for p in ("/api/jobs", "/api/send") for c in ("nope", "rot13", "hex")],
    *[(f"{p} corrupt deflate", "POST", p, {"Content-Encoding": "deflate"}, b"\x78\x9cnot deflate")
      for p in ("/api/jobs", "/api/send")],
    ("every_s 1e308", "POST", "/api/jobs", {}, job(every_s=1e308)),
    ("every_s Infinity", "POST", "/api/jobs", {}, job(every_s=1).replace(b"1}", b"Infinity}")),
    ("every_s NaN", "POST", "/api/jobs", {}, job(every_s=1).replace(b": 1", b": NaN")),
    ("grace_s 1e308", "POST", "/api/jobs", {}, job(every_s=60, grace_s=1e308)),
    ("max_catch_up 10**30", "POST", "/api/jobs", {}, job(every_s=60, max_catch_up=10**30)),
    ("at year 9999", "POST", "/api/jobs", {}, job(at="9999-12-31T23:59:00-14:00")),
    ("at year 1", "POST", "/api/jobs", {}, job(at="0001-01-01T00:00:00+14:00")),
    ("prompt of 1 MB", "POST", "/api/jobs", {}, job(every_s=60, prompt="x" * 100_000)),
    ("send text a number", "POST", "/api/send", {}, b'{"to": "memory:c1", "text": 5}'),
]  # fmt: skip


@pytest.mark.parametrize("case", API_CASES, ids=[c[0] for c in API_CASES])
async def test_each_api_cause_is_a_4xx(
    gateway: Gateway, case: tuple[str, str, str, dict[str, str], bytes]
) -> None:
    _, method, path, headers, body = case
    sent = {"Content-Type": JSON, **BEARER, **headers}
    async with (
        aiohttp.ClientSession() as client,
        client.request(
            method, url(gateway, path), data=body, headers=sent,
            skip_auto_headers={"Content-Encoding"},
        ) as r,
    ):  # fmt: skip
        answer = await r.read()
    assert 400 <= r.status < 500, answer[:300]
    assert json.loads(answer)["error"]


WHATSAPP_CASES = ["message timestamp", "location latitude", "status timestamp"]


@pytest.mark.parametrize("case", WHATSAPP_CASES)
async def test_signed_whatsapp_numbers_too_large_for_a_float_are_no_5xx(
    gateway: Gateway, fake_wa: FakeWhatsApp, case: str
) -> None:
    if case == "status timestamp":
        payload = fake_wa.status("wamid.OUT1", "read", USER)
    else:
        payload = fake_wa.message(USER, "location", location={"latitude": 1, "longitude": 2})
    text = json.dumps(payload)
    if case.endswith("timestamp"):
        text = re.sub(r'"timestamp": "\d+"', f'"timestamp": {DIGITS}', text)
    else:
        text = text.replace('"latitude": 1', f'"latitude": {DIGITS}')
    assert DIGITS in text
    body = text.encode()
    headers = {"Content-Type": JSON, "X-Hub-Signature-256": fake_wa.signature(body)}
    async with (
        aiohttp.ClientSession() as client,
        client.post(webhook_url(gateway), data=body, headers=headers) as r,
    ):
        assert r.status < 500, await r.text()


@pytest.mark.parametrize("host", [b"[::1]:x", b"", b"h\xe9st", b"a b"])
async def test_file_links_of_a_signed_webhook_never_come_from_an_odd_host(
    gateway: Gateway, host: bytes
) -> None:
    body = b'{"x": 1}'
    signed = sign("generic", HOOK_SECRET, body, time.time())
    head = b"POST /hooks/files HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json"
    head += b"".join(f"\r\n{k}: {v}".encode() for k, v in signed.items())
    head += b"\r\nX-Request-Id: r-%d\r\nContent-Length: %d" % (time.time_ns(), len(body))
    assert gateway.port is not None
    status, answer = await raw_request(gateway.port, head, body)
    assert status < 500, answer[:300]
    if status == 200:
        [link] = json.loads(answer)["files"]
        assert link["url"].startswith("/files/")  # a path on this server, no odd origin


async def test_a_reply_file_with_line_breaks_in_its_name_gets_a_link_that_works(
    gateway: Gateway,
) -> None:
    body = b'{"x": 2}'
    headers = {"Content-Type": JSON, **sign("generic", HOOK_SECRET, body, time.time())}
    async with aiohttp.ClientSession() as client:
        async with client.post(url(gateway, "/hooks/files"), data=body, headers=headers) as r:
            assert r.status == 200, await r.text()
            [file] = (await r.json())["files"]
        assert file["name"] == "two lines .txt"
        async with client.get(file["url"]) as r:
            assert r.status == 200
            assert await r.read() == b"file body"
