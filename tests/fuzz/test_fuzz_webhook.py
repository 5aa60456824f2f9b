"""Fuzz the webhook ingress of a running gateway: odd bodies, signatures and headers.

Invariants: never a 500; a request without a valid signature never reaches the agent; every 200
answer carries a reason code.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatgate.channels.signatures import sign
from chatgate.gateway.app import Gateway
from tests.fuzz import agent
from tests.fuzz.conftest import fuzz_settings
from tests.harness import build, write_config

SECRET = "whsec-fuzz-secret"
LIMIT = 4096
CONFIG = f"""
agents:
  default: {{backend: python, function: "tests.fuzz.agent:record"}}
channels:
  webhook:
    routes:
      open: {{path: /f/open, signature: none, max_body_bytes: {LIMIT}}}
      later: {{path: /f/later, signature: none, respond: async, max_body_bytes: {LIMIT}}}
      gh: {{path: /f/gh, secret: {SECRET}, signature: github, max_body_bytes: {LIMIT}}}
      gen: {{path: /f/gen, secret: {SECRET}, signature: generic, max_body_bytes: {LIMIT}}}
      sl: {{path: /f/sl, secret: {SECRET}, signature: slack, max_body_bytes: {LIMIT}}}
      tpl:
        path: /f/tpl
        signature: none
        max_body_bytes: {LIMIT}
        prompt: "{{payload.a.b}} {{payload.0}} {{headers.X-Odd}} {{query.q}} {{payload}}"
        session: "{{payload.s}}"
        when: {{any: [{{field: payload.k, equals: x}}, {{field: headers.X-Odd, in: [a, b]}}]}}
"""


@dataclass
class Live:
    loop: asyncio.AbstractEventLoop
    gateway: Gateway
    client: aiohttp.ClientSession

    def post(
        self, path: str, body: bytes, headers: dict[str, str], query: dict[str, str]
    ) -> tuple[int, Any]:
        async def go() -> tuple[int, Any]:
            url = f"http://127.0.0.1:{self.gateway.port}{path}"
            async with self.client.post(url, data=body, headers=headers, params=query) as resp:
                text = await resp.text()
                try:
                    return resp.status, json.loads(text)
                except ValueError:
                    return resp.status, text

        return self.loop.run_until_complete(go())


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    path = write_config(tmp_path_factory.mktemp("fuzz-webhook"), CONFIG)
    loop = asyncio.new_event_loop()
    gateway = build(Path(path))
    loop.run_until_complete(gateway.start())
    client = loop.run_until_complete(_session())
    try:
        yield Live(loop, gateway, client)
    finally:
        loop.run_until_complete(client.close())
        loop.run_until_complete(gateway.stop())
        loop.close()


async def _session() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["json", "bytes", "deep", "near_limit", "text", "odd_json"]))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "deep":
        depth = draw(st.integers(min_value=50, max_value=3000))
        opener = draw(st.sampled_from(["[", '{"a":']))
        closer = "]" if opener == "[" else "}"
        return (opener * depth + "1" + closer * depth).encode()
    if kind == "near_limit":
        size = draw(st.integers(min_value=LIMIT - 20, max_value=LIMIT + 20))
        return json.dumps({"text": "x" * max(size - 12, 0)}).encode()[:size]
    if kind == "odd_json":
        return draw(
            st.sampled_from([b"NaN", b"[1e999]", b'"\\ud800"', b"{}" * 3, b"\xef\xbb\xbf{}"])
        )
    return draw(st.text(max_size=200)).encode("utf-8", errors="surrogatepass")


header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_characters="\x7f"), max_size=40
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, bytes, dict[str, str], dict[str, str], bool]:
    """(path, body, headers, query, authentic) — authentic: the signature is valid."""
    route = draw(st.sampled_from(["open", "gh", "gen", "sl", "tpl", "later"]))
    body = draw(bodies())
    headers: dict[str, str] = {}
    ctype = draw(
        st.sampled_from(
            ["application/json", "", "text/plain", "application/x-www-form-urlencoded", "x/y"]
        )
    )
    if ctype:
        headers["Content-Type"] = ctype
    authentic = route in ("open", "tpl", "later")
    if route in ("gh", "gen", "sl"):
        kind = {"gh": "github", "gen": "generic", "sl": "slack"}[route]
        how = draw(st.sampled_from(["valid", "garbled", "missing", "replayed", "odd", "stale"]))
        now = time.time()
        if how == "valid":
            headers.update(sign(kind, SECRET, body, now))  # type: ignore[arg-type]
            authentic = True
        elif how == "garbled":
            for key, value in sign(kind, SECRET, body, now).items():  # type: ignore[arg-type]
                cut = draw(st.integers(min_value=0, max_value=len(value) - 1))
                headers[key] = value[:cut] + draw(header_text) + value[cut + 1 :]
        elif how == "replayed":
            headers.update(sign(kind, SECRET, body + b"x", now))  # type: ignore[arg-type]
        elif how == "odd":
            for key in sign(kind, SECRET, body, now):  # type: ignore[arg-type]
                headers[key] = draw(header_text)
        elif how == "stale":
            headers.update(sign(kind, SECRET, body, now - 3600))  # type: ignore[arg-type]
            authentic = kind != "slack"  # only Slack's scheme signs a timestamp
        if how in ("garbled", "odd"):
            real = sign(kind, SECRET, body, now)  # type: ignore[arg-type]
            authentic = all(headers.get(k) == v for k, v in real.items())
    if draw(st.booleans()):
        headers["X-Request-Id"] = draw(header_text)
    if draw(st.booleans()):
        headers["X-Odd"] = draw(st.sampled_from(["a", "b", "é", ""]) | header_text)
    query = draw(st.dictionaries(st.sampled_from(["q", "s", "x"]), header_text, max_size=2))
    return f"/f/{route}", body, headers, query, authentic


@fuzz_settings("webhook")
@given(sent=requests())
def test_webhook_ingress_invariants(
    live: Live, sent: tuple[str, bytes, dict[str, str], dict[str, str], bool]
) -> None:
    path, body, headers, query, authentic = sent
    sender = "route:" + path.rsplit("/", 1)[-1]
    seen = agent.SEEN.count(sender)  # async routes finish later: count this route's turns only
    status, answer = live.post(path, body, headers, query)
    assert status < 500 or (status == 503 and "retry" in str(answer)), (status, answer)
    if not authentic:
        assert status in (401, 413), (status, answer)  # size is checked first
        assert agent.SEEN.count(sender) == seen
    if 200 <= status < 300:
        assert isinstance(answer, dict) and answer.get("reason_code"), answer
