"""Webhook ingress edge cases found by fuzzing and by hand: each was a 401, a 500 or a merge."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from chatgate.channels.signatures import sign, verify
from chatgate.channels.webhook.adapter import delivery_key, json_depth, wait_shielded
from chatgate.secure_compare import secure_equals
from tests.fakes.llm import FakeLLM
from tests.gateway.test_webhook_e2e import SECRET, gh_config, gh_headers
from tests.harness import http, running, url, write_config

PAUSE_BETWEEN_WRITES_S = 0.2  # long enough that the first write is read on its own


async def test_body_sent_in_two_writes_is_verified_over_all_of_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("ok")
    async with running(gh_config(tmp_path, fake_llm)) as gw:
        body = json.dumps(
            {"issue": {"title": "split"}, "repository": {"full_name": "a/b"}}
        ).encode()
        headers = gh_headers(body)
        head = f"POST /hooks/gh HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "Connection: close\r\n\r\n"
        reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
        writer.write(head.encode() + body[:20])
        await writer.drain()
        await asyncio.sleep(PAUSE_BETWEEN_WRITES_S)
        writer.write(body[20:])
        await writer.drain()
        answer = await reader.read()
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'"reply": "ok"' in answer


async def test_large_valid_signed_body_is_accepted(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script("big ok")
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = json.dumps(
            {
                "issue": {"title": "big"},
                "repository": {"full_name": "a/b"},
                "pad": "x" * 900_000,
            }
        ).encode()
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "big ok"


def open_route(tmp_path: Path, fake: FakeLLM) -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default: {{backend: litellm, model: openai/fake-model, api_base: {fake.base_url},
             api_key: sk-x, timeout_s: 1}}
channels:
  webhook:
    routes:
      open: {{path: /hooks/open, signature: none}}
      gh: {{path: /hooks/gh, secret: {SECRET}, signature: github}}
      sl: {{path: /hooks/sl, secret: {SECRET}, signature: slack}}
""",
    )


async def test_odd_input_is_4xx_never_500(tmp_path: Path, fake_llm: FakeLLM) -> None:
    deep = b"[" * 5000 + b"]" * 5000
    just_too_deep = json.dumps({"a": json.loads("[" * 64 + "]" * 64)}).encode()
    lone_surrogate = b'{"text": "hi \\ud800"}'  # found by fuzzing: the journal write failed
    async with running(open_route(tmp_path, fake_llm)) as gw, http() as client:
        for body in (deep, just_too_deep, lone_surrogate):
            async with client.post(
                url(gw, "/hooks/open"), data=body, headers={"Content-Type": "application/json"}
            ) as resp:
                assert resp.status == 400
        for path, headers in (
            ("/hooks/gh", {"X-Hub-Signature-256": "sha256=é"}),
            ("/hooks/sl", {"X-Slack-Request-Timestamp": "1", "X-Slack-Signature": "v0=ü"}),
            ("/hooks/sl", {"X-Slack-Request-Timestamp": "nan", "X-Slack-Signature": "v0=a"}),
        ):
            async with client.post(url(gw, path), data=b"{}", headers=headers) as resp:
                assert resp.status == 401
    assert fake_llm.requests == []


async def test_delivery_ids_without_letters_stay_distinct(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("first", "second")
    async with running(open_route(tmp_path, fake_llm)) as gw, http() as client:
        replies = []
        for rid in ("!!!", "???"):
            async with client.post(
                url(gw, "/hooks/open"), json={"text": "hi"}, headers={"X-Request-Id": rid}
            ) as resp:
                replies.append((await resp.json())["reply"])
    assert replies == ["first", "second"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("abc-123_x.y", "id-abc-123_x.y"),
        ("a" * 128, "id-" + "a" * 128),
    ],
)
def test_safe_delivery_ids_are_kept(raw: str, expected: str) -> None:
    assert delivery_key(raw) == expected


def test_unsafe_delivery_ids_are_hashed_and_never_merge() -> None:
    ids = ["!!!", "???", "a b", "a" * 129, "a" * 130, "é", "abc\n", "id-x"]
    keys = {delivery_key(raw) for raw in ids}
    assert len(keys) == len(ids)
    assert delivery_key("???").startswith("idh-")


def test_slack_timestamps_that_are_not_finite_numbers_are_rejected() -> None:
    body = b"{}"
    for stamp in ("nan", "inf", "-inf", "NaN", "1e999", "abc", ""):
        headers = sign("slack", SECRET, body, time.time())
        headers["X-Slack-Request-Timestamp"] = stamp
        assert verify("slack", SECRET, body, headers, time.time()) is not None


def test_secure_equals_never_raises() -> None:
    assert secure_equals("é", "é")
    assert not secure_equals("é", "e")
    assert not secure_equals(None, "x")
    assert not secure_equals("\udcff", "x")
    assert secure_equals(b"ab", "ab")


def test_json_depth_is_iterative() -> None:
    value: list[object] = []
    for _ in range(100_000):
        value = [value]
    assert json_depth(value) > 64
    assert json_depth({"a": [1, {"b": 2}]}) == 3
    assert json_depth(5) == 0


async def test_a_sync_caller_giving_up_never_cancels_the_shared_turn() -> None:
    """Timing out or being cancelled leaves the future every caller of that delivery shares."""
    shared: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    with pytest.raises(TimeoutError):
        await wait_shielded(shared, 0.01)
    waiting = asyncio.ensure_future(wait_shielded(shared, 60.0))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not shared.done()
    later = asyncio.ensure_future(wait_shielded(shared, 60.0))
    await asyncio.sleep(0)
    shared.set_result("answer")
    assert await later == "answer"
    assert await wait_shielded(shared, 0.0) == "answer"  # already done: no wait at all


def echo_route(tmp_path: Path, name: str, prompt: str) -> Path:
    """One signed route `/hooks/<name>` with the echo agent and ``prompt`` as its template."""
    return write_config(
        tmp_path,
        f"""
agents:
  default: {{backend: echo}}
channels:
  webhook:
    routes:
      {name}:
        path: /hooks/{name}
        secret: {SECRET}
        prompt: "{prompt}"
""",
    )


async def test_templates_read_headers_and_query_without_a_filter(tmp_path: Path) -> None:
    """A route without `when` still copies headers and query into the event its templates use."""
    path = echo_route(tmp_path, "tagged", "{headers.x-event} from {query.src}: {payload.text}")
    body = json.dumps({"text": "hello"}).encode()
    headers = {"X-Event": "push", **sign("generic", SECRET, body, time.time())}
    async with running(path) as gw, http() as client:
        target = url(gw, "/hooks/tagged") + "?src=ci"
        async with client.post(target, data=body, headers=headers) as resp:
            assert resp.status == 200
            assert (await resp.json())["reply"] == "push from ci: hello"


async def test_one_shot_deliveries_leave_no_warm_session_and_count_no_eviction(
    tmp_path: Path,
) -> None:
    """A route without `session:` runs each delivery in a session nobody reads again: it is
    never put in the warm cache, so it is neither shown as warm nor counted as evicted."""
    path = echo_route(tmp_path, "once", "{payload.text}")
    async with running(path) as gw, http() as client:
        for text in ("one", "two"):
            body = json.dumps({"text": text}).encode()
            headers = sign("generic", SECRET, body, time.time())
            async with client.post(url(gw, "/hooks/once"), data=body, headers=headers) as resp:
                assert (await resp.json())["reply"] == text
        async with client.get(url(gw, "/api/status")) as resp:
            sessions = (await resp.json())["sessions"]
    assert sessions["warm"] == 0 and sessions["evictions"] == 0
