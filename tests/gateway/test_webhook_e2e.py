"""Signed webhooks end to end: real aiohttp server, real litellm, fake model server."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from chatgate.channels.signatures import sign
from chatgate.gateway.events import Event, EventName
from tests.fakes.llm import FakeLLM, Fault
from tests.harness import http, memory, running, url, write_config

SECRET = "whsec-test-secret-value"
API_KEY = "sk-test-secret-api-key"


def gh_config(
    tmp_path: Path, fake: FakeLLM, *, extra_agent: str = "", route_extra: str = ""
) -> Path:
    return write_config(
        tmp_path,
        f"""
agents:
  default:
    backend: litellm
    model: openai/fake-model
    api_base: {fake.base_url}
    api_key: {API_KEY}
    system_prompt: "You are the triage bot."
    timeout_s: 1
{extra_agent}
channels:
  memory: {{dm_policy: open}}
  webhook:
    routes:
      gh:
        path: /hooks/gh
        secret: {SECRET}
        signature: github
        when: {{all: [{{field: headers.X-GitHub-Event, equals: issues}}]}}
        prompt: "New issue: {{payload.issue.title}}"
        session: "{{payload.repository.full_name}}"
{route_extra}
""",
    )


def issue_body(title: str = "Crash on start", repo: str = "acme/app") -> bytes:
    return json.dumps(
        {"action": "opened", "issue": {"title": title}, "repository": {"full_name": repo}}
    ).encode()


def gh_headers(
    body: bytes, *, delivery: str | None = None, event: str = "issues"
) -> dict[str, str]:
    headers = {"X-GitHub-Event": event, "Content-Type": "application/json"}
    headers.update(sign("github", SECRET, body, time.time()))
    if delivery:
        headers["X-GitHub-Delivery"] = delivery
    return headers


async def test_signed_webhook_reaches_model_with_template_and_system_prompt(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("Looks like a startup crash; labelled bug.")
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = issue_body()
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)) as resp:
            assert resp.status == 200
            data = await resp.json()
    assert data == {
        "reply": "Looks like a startup crash; labelled bug.",
        "reason_code": "text",
        "session": "default:webhook:gh:acme/app",
    }
    [request] = fake_llm.requests
    assert request.system_prompt == "You are the triage bot."
    assert request.last_user_text == "New issue: Crash on start"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"


async def test_bad_or_missing_signature_is_401_and_never_reaches_the_model(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = issue_body()
        bad = gh_headers(body)
        bad["X-Hub-Signature-256"] = "sha256=" + "0" * 64
        for headers in (bad, {"X-GitHub-Event": "issues"}, gh_headers(body + b" ")):
            async with client.post(url(gw, "/hooks/gh"), data=body, headers=headers) as resp:
                assert resp.status == 401
                assert await resp.json() == {"error": "invalid signature"}
        async with client.get(url(gw, "/api/status")) as resp:
            status = await resp.json()
    assert fake_llm.requests == []
    assert status["sessions"]["warm"] == 0


async def test_filter_mismatch_is_ignored_with_reason(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = issue_body()
        async with client.post(
            url(gw, "/hooks/gh"), data=body, headers=gh_headers(body, event="push")
        ) as resp:
            assert resp.status == 200
            assert await resp.json() == {"ignored": True, "reason_code": "filter_mismatch"}
    assert fake_llm.requests == []


async def test_body_over_one_mebibyte_is_413(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = b'{"pad": "' + b"x" * (1024 * 1024) + b'"}'
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)) as resp:
            assert resp.status == 413
    assert fake_llm.requests == []


async def test_redelivery_returns_first_result_without_second_model_call(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("first answer", "second answer")
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = issue_body()
        results = []
        for _ in range(2):
            async with client.post(
                url(gw, "/hooks/gh"), data=body, headers=gh_headers(body, delivery="d-1")
            ) as r:
                results.append(await r.json())
        # Same body, no delivery id: deduplicated by body hash within the window.
        other = issue_body("Another")
        for _ in range(2):
            async with client.post(
                url(gw, "/hooks/gh"), data=other, headers=gh_headers(other)
            ) as r:
                results.append(await r.json())
    assert results[0]["reply"] == results[1]["reply"] == "first answer"
    assert results[2]["reply"] == results[3]["reply"] == "second answer"
    assert len(fake_llm.requests) == 2


async def test_concurrent_redelivery_while_first_is_running_waits_for_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.latency_s = 0.3
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        body = issue_body()

        async def post() -> dict[str, str]:
            async with client.post(
                url(gw, "/hooks/gh"), data=body, headers=gh_headers(body, delivery="d-2")
            ) as r:
                return await r.json()  # type: ignore[no-any-return]

        first, second = await asyncio.gather(post(), post())
    assert first == second
    assert len(fake_llm.requests) == 1


FAULTS = [
    (Fault.rate_limited(retry_after=2), "rate_limit", "try again"),
    (Fault.model_not_found(), "model_not_found", "model"),
    (Fault.context_overflow(), "context_overflow", "/new"),
    (Fault.unavailable(), "overloaded", ""),
    (Fault.hang(), "timeout", ""),
    (Fault.unauthorized(), "auth_permanent", "api_key"),  # last: it marks the provider degraded
]


async def test_each_model_fault_answers_200_with_a_visible_reason(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        for index, (fault, reason, fragment) in enumerate(FAULTS):
            fake_llm.fail_next(fault)
            body = issue_body(f"issue {index}")
            async with client.post(
                url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)
            ) as resp:
                assert resp.status == 200
                data = await resp.json()
            assert data["reason_code"] == reason, data
            assert data["reply"], data
            assert fragment.lower() in data["reply"].lower(), data
            assert API_KEY not in data["reply"]
        fake_llm.release()


async def test_fallback_model_answers_and_emits_model_fallback(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.fail_model("fake-model", Fault.unavailable())
    fake_llm.default_reply = lambda r: f"answered by {r.model}"
    config = (
        gh_config(tmp_path, fake_llm)
        .read_text()
        .replace(
            "    timeout_s: 1\n", "    timeout_s: 1\n    fallbacks: [openai/backup-model]\n", 1
        )
    )
    path = tmp_path / "fallback.yaml"
    path.write_text(config)
    events: list[Event] = []
    async with running(path) as gw, http() as client:
        gw.events.subscribe(events.append, EventName.MODEL_FALLBACK)
        body = issue_body()
        async with client.post(url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)) as resp:
            data = await resp.json()
        async with client.get(url(gw, "/metrics")) as resp:
            metrics = await resp.text()
    assert data["reply"] == "answered by backup-model"
    assert [r.model for r in fake_llm.requests] == ["fake-model", "backup-model"]
    [event] = events
    assert event.data["from_model"] == "openai/fake-model"
    assert event.data["to_model"] == "openai/backup-model"
    assert event.data["reason"] == "overloaded"
    assert 'chatgate_model_fallback_total{agent="default",reason="overloaded"} 1.0' in metrics


async def test_silence_is_recorded_and_empty_gets_fallback_text(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(gh_config(tmp_path, fake_llm)) as gw, http() as client:
        fake_llm.script("NO_REPLY", "   ")
        replies = []
        for title in ("quiet", "blank"):
            body = issue_body(title)
            async with client.post(
                url(gw, "/hooks/gh"), data=body, headers=gh_headers(body)
            ) as resp:
                replies.append(await resp.json())
        # Through a chat channel: silence sends nothing, empty sends the visible fallback.
        chat = memory(gw)
        fake_llm.script("NO_REPLY")
        silent = await chat.inject("say nothing")
        assert (await silent.result).delivery == "suppressed"
        fake_llm.script("")
        empty = await chat.inject("say blank")
        assert (await empty.result).delivery == "sent"
        async with client.get(url(gw, "/metrics")) as resp:
            metrics = await resp.text()
    assert replies[0] == {
        "reply": "",
        "reason_code": "silence",
        "session": "default:webhook:gh:acme/app",
    }
    assert replies[1]["reason_code"] == "empty" and replies[1]["reply"].strip()
    assert chat.texts() == [replies[1]["reply"]]
    assert 'outcome="silence"' in metrics and 'outcome="empty"' in metrics


ASYNC_ROUTE = """      gh-async:
        path: /hooks/gh-async
        secret: whsec-test-secret-value
        signature: github
        prompt: "Issue: {payload.issue.title}"
        respond: async
        deliver: {to: "memory:ops-room"}
"""


async def test_async_route_returns_202_and_delivers_to_target(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script("triaged")
    route = ASYNC_ROUTE
    async with running(gh_config(tmp_path, fake_llm, route_extra=route)) as gw, http() as client:
        body = issue_body()
        async with client.post(
            url(gw, "/hooks/gh-async"), data=body, headers=gh_headers(body, delivery="a1")
        ) as r:
            assert r.status == 202
            data = await r.json()
        sent = await memory(gw).wait_sent(1)
    assert data == {
        "accepted": True,
        "reason_code": "accepted",
        "id": "gh-async:id-a1",
        "duplicate": False,
    }
    assert sent[0].target.chat_id == "ops-room" and sent[0].text == "triaged"
