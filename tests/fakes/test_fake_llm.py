"""FakeLLM driven through the real litellm client over loopback."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import litellm
import pytest
import pytest_asyncio
from litellm.exceptions import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    InternalServerError,
    NotFoundError,
    RateLimitError,
    ServiceUnavailableError,
    Timeout,
)

from chatgate.agents.base import AgentError
from chatgate.agents.http_agent import HttpAgent
from chatgate.config.agent_models import HttpAgentConfig
from tests.agents.helpers import make_turn
from tests.fakes.llm import FakeLLM, Fault

litellm.suppress_debug_info = True

REPO_ROOT = Path(__file__).resolve().parents[2]
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "hello there"},
]


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


async def ask(fake: FakeLLM, model: str = "openai/fake-model", **kwargs: Any) -> Any:
    params: dict[str, Any] = {
        "model": model,
        "api_base": fake.base_url,
        "api_key": "sk-fake",
        "messages": MESSAGES,
        "timeout": 5,
        "max_retries": 0,
    }
    params.update(kwargs)
    return await litellm.acompletion(**params)


async def ask_text(fake: FakeLLM, **kwargs: Any) -> str | None:
    response = await ask(fake, **kwargs)
    content: str | None = response.choices[0].message.content
    return content


async def stream_deltas(fake: FakeLLM, **kwargs: Any) -> list[str]:
    stream = await ask(fake, stream=True, stream_options={"include_usage": True}, **kwargs)
    deltas: list[str] = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            deltas.append(chunk.choices[0].delta.content)
    return deltas


async def test_non_stream_reply_echoes_last_user_text(fake: FakeLLM) -> None:
    response = await ask(fake)

    assert response.choices[0].message.content == "echo: hello there"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.completion_tokens == 3  # "echo: ", "hello ", "there"
    assert response.usage.total_tokens == response.usage.prompt_tokens + 3
    assert fake.requests[0].headers["authorization"] == "Bearer sk-fake"


@pytest.mark.parametrize("reply", ["the quick brown fox", "  padded  reply \n"])
async def test_stream_splits_reply_into_several_deltas(fake: FakeLLM, reply: str) -> None:
    fake.script(reply)

    deltas = await stream_deltas(fake)

    assert len(deltas) >= 2
    assert "".join(deltas) == reply
    assert fake.requests[0].stream is True


async def test_stream_chunk_delay_spaces_out_chunks(fake: FakeLLM) -> None:
    fake.stream_chunk_delay_s = 0.05
    fake.script("a b c d")

    started = time.monotonic()
    deltas = await stream_deltas(fake)

    assert deltas == ["a ", "b ", "c ", "d"]
    assert time.monotonic() - started >= 0.15


@pytest.mark.parametrize("stream", [False, True])
async def test_special_reply_is_sent_verbatim(fake: FakeLLM, stream: bool) -> None:
    fake.default_reply = "NO_REPLY"

    text = "".join(await stream_deltas(fake)) if stream else await ask_text(fake)

    assert text == "NO_REPLY"


async def test_empty_reply_is_sent_as_empty(fake: FakeLLM) -> None:
    fake.script("", "")

    assert await ask_text(fake) in ("", None)
    assert await stream_deltas(fake) == []


@pytest.mark.parametrize(
    ("fault", "error", "status"),
    [
        (Fault.unauthorized(), AuthenticationError, 401),
        (Fault.forbidden(), APIError, 403),
        (Fault.model_not_found(), NotFoundError, 404),
        (Fault.rate_limited(), RateLimitError, 429),
        (Fault.server_error(), InternalServerError, 500),
        (Fault.unavailable(), ServiceUnavailableError, 503),
        (Fault.context_overflow(), ContextWindowExceededError, 400),
        (Fault.bad_request("no such parameter"), BadRequestError, 400),
    ],
    ids=lambda value: getattr(value, "__name__", None) if isinstance(value, type) else None,
)
async def test_fault_maps_to_litellm_exception(
    fake: FakeLLM, fault: Fault, error: type[Exception], status: int
) -> None:
    fake.fail_next(fault)

    with pytest.raises(error) as caught:
        await ask(fake)

    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert len(fake.requests) == 1
    if fault.status == 400 and fault.body["error"]["code"] != "context_length_exceeded":
        assert not isinstance(caught.value, ContextWindowExceededError)
    assert await ask_text(fake) == "echo: hello there"


def test_hang_constructor_sets_the_instance_flag() -> None:
    hanging, plain = Fault.hang(), Fault.unavailable()

    assert (hanging.status, hanging.body) == (plain.status, plain.body)
    assert dataclasses.asdict(hanging)["hang"] is True
    assert dataclasses.asdict(plain)["hang"] is False


async def test_rate_limit_sends_retry_after(fake: FakeLLM) -> None:
    fake.fail_next(Fault.rate_limited(retry_after=7))

    with pytest.raises(RateLimitError) as caught:
        await ask(fake)

    assert caught.value.response.headers["retry-after"] == "7"


async def test_hang_makes_client_time_out_and_frees_the_slot(fake: FakeLLM) -> None:
    fake.fail_next(Fault.hang())

    started = time.monotonic()
    with pytest.raises(Timeout):
        await ask(fake, timeout=0.3)

    assert time.monotonic() - started < 2.0
    async with asyncio.timeout(2):
        while fake.in_flight:  # noqa: ASYNC110 - the fake exposes a counter, not an event
            await asyncio.sleep(0.01)
    assert fake.max_in_flight == 1


async def test_release_answers_hung_requests_with_503(fake: FakeLLM) -> None:
    fake.fail_next(Fault.hang(), times=2)
    hung = [asyncio.create_task(ask(fake)) for _ in range(2)]
    await fake.wait_for_requests(2)
    assert fake.in_flight == 2

    fake.release()
    results = await asyncio.gather(*hung, return_exceptions=True)

    assert all(isinstance(r, ServiceUnavailableError) for r in results)
    assert fake.in_flight == 0


async def test_stop_releases_hung_requests(fake: FakeLLM) -> None:
    fake.fail_next(Fault.hang())
    hung = asyncio.create_task(ask(fake))
    await fake.wait_for_requests(1)

    async with asyncio.timeout(3):
        await fake.stop()
        result = await asyncio.gather(hung, return_exceptions=True)

    assert isinstance(result[0], ServiceUnavailableError | APIConnectionError)


async def test_script_is_consumed_in_order_then_default(fake: FakeLLM) -> None:
    fake.script("first", Fault.server_error(), "third")

    assert await ask_text(fake) == "first"
    with pytest.raises(InternalServerError):
        await ask(fake)
    assert await ask_text(fake) == "third"
    assert await ask_text(fake) == "echo: hello there"


async def test_precedence_model_fault_then_fail_next_then_script(fake: FakeLLM) -> None:
    fake.script("scripted")
    fake.fail_next(Fault.server_error())
    fake.fail_model("fake-model", Fault.unauthorized(), times=1)

    with pytest.raises(AuthenticationError):
        await ask(fake)
    with pytest.raises(InternalServerError):
        await ask(fake)
    assert await ask_text(fake) == "scripted"


async def test_model_fault_lets_another_model_answer(fake: FakeLLM) -> None:
    fake.fail_model("fake-model", Fault.unavailable())

    for _ in range(2):
        with pytest.raises(ServiceUnavailableError):
            await ask(fake)
    assert await ask_text(fake, model="openai/backup-model") == "echo: hello there"

    fake.fail_model("fake-model", None)
    assert await ask_text(fake) == "echo: hello there"
    assert [r.model for r in fake.requests] == ["fake-model"] * 2 + ["backup-model", "fake-model"]


async def test_callable_default_reply_sees_the_request(fake: FakeLLM) -> None:
    fake.default_reply = lambda r: f"{r.model} got {len(r.messages)}"

    assert await ask_text(fake) == "fake-model got 2"


async def test_records_system_prompt_and_messages(fake: FakeLLM) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
    ]

    await ask(fake, messages=messages, temperature=0.5)

    [record] = await fake.wait_for_requests(1)
    assert record.model == "fake-model"
    assert record.system_prompt == "Be brief."
    assert record.last_user_text == "second"
    assert [m["role"] for m in record.messages] == ["system", "user", "assistant", "user"]
    assert record.body["temperature"] == 0.5
    assert record.stream is False


async def test_wait_for_requests_times_out(fake: FakeLLM) -> None:
    with pytest.raises(TimeoutError, match="got 0"):
        await fake.wait_for_requests(1, timeout=0.05)


async def test_reset_clears_queues_and_records(fake: FakeLLM) -> None:
    fake.script("scripted")
    fake.fail_next(Fault.server_error())
    fake.fail_model("fake-model", Fault.unauthorized())
    fake.reset()

    assert fake.requests == []
    assert await ask_text(fake) == "echo: hello there"
    assert fake.max_in_flight == 1


async def test_concurrent_requests_overlap_under_latency(fake: FakeLLM) -> None:
    fake.latency_s = 0.2

    started = time.monotonic()
    replies = await asyncio.gather(*(ask_text(fake) for _ in range(20)))
    elapsed = time.monotonic() - started

    assert replies == ["echo: hello there"] * 20
    assert fake.max_in_flight >= 15
    assert 0.2 <= elapsed < 2.0
    assert fake.in_flight == 0


async def test_control_endpoints(fake: FakeLLM) -> None:
    root = fake.base_url.removesuffix("/v1")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{root}/_fake/config", json={"default_reply": "configured"}) as r:
            assert r.status == 200
        assert await ask_text(fake) == "configured"

        async with http.post(f"{root}/_fake/config", json={"latency_s": 0.05}) as r:
            assert r.status == 200
        assert fake.latency_s == 0.05

        async with http.post(f"{root}/_fake/config", json={"latency_s": "slow"}) as r:
            assert r.status == 400
        async with http.get(f"{root}/_fake/stats") as r:
            assert await r.json() == {"requests": 1, "in_flight": 0, "max_in_flight": 1}

        async with http.post(f"{root}/_fake/reset") as r:
            assert r.status == 200
        async with http.get(f"{root}/_fake/stats") as r:
            assert (await r.json())["requests"] == 0


async def test_command_line_entry_point_serves_until_terminated() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.llm",
        "--port",
        "0",
        "--latency",
        "0",
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(10):
            line = (await process.stdout.readline()).decode()
        assert line.startswith("READY ")
        port = int(line.split()[1])
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/_fake/stats") as r,
        ):
            assert await r.json() == {"requests": 0, "in_flight": 0, "max_in_flight": 0}
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(5):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_the_http_agent_protocol_answers_from_the_same_script_and_records(
    fake: FakeLLM,
) -> None:
    """chatgate's own http agent against `agent_url`: echo, a scripted fault as the agent's
    error, and each call counted in `requests` like a completion."""

    agent = HttpAgent("default", HttpAgentConfig(backend="http", url=fake.agent_url))
    try:
        reply = await agent.run(make_turn("hello there"))
        assert reply.text == "echo: hello there"
        fake.fail_next(Fault.unavailable())
        with pytest.raises(AgentError):
            await agent.run(make_turn("again"))
    finally:
        await agent.aclose()
    assert [(r.model, r.last_user_text) for r in fake.requests] == [
        ("agent", "hello there"),
        ("agent", "again"),
    ]
