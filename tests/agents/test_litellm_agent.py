"""litellm agent with the real litellm against FakeLLM: requests, faults, keys, fallbacks, streaming."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from chatgate.agents.base import AgentError
from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.model.chat import ChatMessage
from chatgate.model.reasons import FailureReason
from tests.agents.helpers import USER_TEXT, Recorder, closed_port, make_turn
from tests.fakes.llm import FakeLLM, Fault
from tests.support.spans import Spans

ECHOED = f"echo: {USER_TEXT}"
# Every test here runs on both clients: the openai SDK route (``auto`` for openai/ models) and
# litellm; the same assertions hold on each.
CLIENTS = ("auto", "litellm")
_client = ["auto"]
_made: list[LiteLLMAgent] = []


@pytest_asyncio.fixture(autouse=True, params=CLIENTS)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    _client[0] = request.param
    yield request.param
    _client[0] = "auto"
    await close_agents()


async def close_agents() -> None:
    """Close the agents `litellm_agent` made, on the loop of the test that made them."""
    while _made:
        await _made.pop().aclose()


def litellm_agent(
    base: str | None, env: dict[str, str] | None = None, **settings: Any
) -> LiteLLMAgent:
    """An agent for `openai/fake-model` at ``base`` with key sk-test unless ``settings`` say otherwise."""
    raw: dict[str, Any] = {
        "backend": "litellm",
        "model": "openai/fake-model",
        "api_base": base,
        "api_key": "sk-test",
        "timeout_s": 5,
        "client": _client[0],
    }
    raw.update(settings)
    agent = LiteLLMAgent("llm", LiteLLMAgentConfig.model_validate(raw), {} if env is None else env)
    _made.append(agent)
    return agent


async def failure_of(agent: LiteLLMAgent, recorder: Recorder | None = None) -> AgentError:
    with pytest.raises(AgentError) as caught:
        await agent.run(make_turn(recorder=recorder))
    return caught.value


async def test_reply_text_model_usage_and_key(fake: FakeLLM) -> None:
    reply = await litellm_agent(fake.base_url).run(make_turn())

    assert reply.text == ECHOED
    assert reply.model == "openai/fake-model"
    assert (
        reply.usage["total_tokens"]
        == reply.usage["prompt_tokens"] + reply.usage["completion_tokens"]
    )
    assert reply.usage["completion_tokens"] > 0
    [request] = fake.requests
    assert request.model == "fake-model"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.stream is False


HISTORY = [
    ChatMessage("user", "q1"),
    ChatMessage("assistant", "a1"),
    ChatMessage("user", "q2"),
    ChatMessage("assistant", "a2"),
]


@pytest.mark.parametrize(
    ("system_prompt", "max_history", "expected"),
    [
        (
            "Be terse.",
            2,
            [("system", "Be terse."), ("user", "q2"), ("assistant", "a2"), ("user", USER_TEXT)],
        ),
        ("Be terse.", 0, [("system", "Be terse."), ("user", USER_TEXT)]),
        (None, 50, [*((m.role, m.content) for m in HISTORY), ("user", USER_TEXT)]),
    ],
)
async def test_system_prompt_and_history_trimming(
    fake: FakeLLM, system_prompt: str | None, max_history: int, expected: list[tuple[str, str]]
) -> None:
    agent = litellm_agent(fake.base_url, system_prompt=system_prompt, max_history=max_history)

    await agent.run(make_turn(history=HISTORY))

    [request] = fake.requests
    assert [(m["role"], m["content"]) for m in request.messages] == expected
    assert request.system_prompt == system_prompt


@pytest.mark.parametrize(
    ("fault", "reason", "retry_after_s"),
    [
        (Fault.unauthorized(), FailureReason.AUTH_PERMANENT, None),
        (Fault.forbidden(), FailureReason.AUTH_PERMANENT, None),
        (Fault.model_not_found(), FailureReason.MODEL_NOT_FOUND, None),
        (Fault.rate_limited(retry_after=7), FailureReason.RATE_LIMIT, 7.0),
        (Fault.server_error(), FailureReason.OVERLOADED, None),
        (Fault.unavailable(), FailureReason.OVERLOADED, None),
        (Fault.context_overflow(), FailureReason.CONTEXT_OVERFLOW, None),
        (Fault.bad_request("unknown parameter `foo`"), FailureReason.FORMAT_ERROR, None),
    ],
    ids=lambda v: v.status if isinstance(v, Fault) else None,
)
async def test_faults_map_to_failure_reasons(
    fake: FakeLLM, fault: Fault, reason: FailureReason, retry_after_s: float | None
) -> None:
    fake.fail_next(fault)

    error = await failure_of(litellm_agent(fake.base_url))

    assert error.reason is reason
    assert error.retry_after_s == retry_after_s
    assert error.provider == f"openai@{fake.base_url}"
    assert len(fake.requests) == 1


async def test_hung_model_times_out(fake: FakeLLM) -> None:
    fake.fail_next(Fault.hang())

    error = await failure_of(litellm_agent(fake.base_url, timeout_s=0.5))

    assert error.reason is FailureReason.TIMEOUT
    assert len(fake.requests) == 1


async def test_connection_refused_is_unavailable() -> None:
    error = await failure_of(litellm_agent(f"http://127.0.0.1:{closed_port()}/v1"))

    assert error.reason is FailureReason.UNAVAILABLE


# --- keys -------------------------------------------------------------------------------------


async def test_missing_key_fails_before_any_request(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without api_base litellm would send the request to OPENAI_API_BASE, i.e. to the fake; the
    # process environment has a key, but only the agent's own env mapping counts.
    monkeypatch.setenv("OPENAI_API_BASE", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process-env")

    error = await failure_of(litellm_agent(None, env={}, api_key=None))

    assert error.reason is FailureReason.MISSING_KEY
    assert "OPENAI_API_KEY" in error.detail
    assert fake.requests == []


async def test_key_from_the_env_mapping_is_used(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_BASE", fake.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent = litellm_agent(None, env={"OPENAI_API_KEY": "sk-from-mapping"}, api_key=None)

    reply = await agent.run(make_turn())

    assert reply.text == ECHOED
    assert fake.requests[0].headers["authorization"] == "Bearer sk-from-mapping"


async def test_self_hosted_api_base_needs_no_key(fake: FakeLLM) -> None:
    reply = await litellm_agent(fake.base_url, env={}, api_key=None).run(make_turn())

    assert reply.text == ECHOED
    assert fake.requests[0].headers["authorization"] == "Bearer not-needed"


# --- fallbacks --------------------------------------------------------------------------------


async def test_fallback_answers_when_the_first_model_is_overloaded(fake: FakeLLM) -> None:
    fake.fail_model("fake-model", Fault.unavailable())
    recorder = Recorder()
    agent = litellm_agent(fake.base_url, fallbacks=["openai/backup-model"])

    reply = await agent.run(make_turn(recorder=recorder, stream=False))

    assert reply.text == ECHOED
    assert reply.model == "openai/backup-model"
    assert [r.model for r in fake.requests] == ["fake-model", "backup-model"]
    assert fake.requests[1].headers["authorization"] == "Bearer sk-test"  # inherited key
    assert recorder.events == [
        (
            "model_fallback",
            {
                "agent": "llm",
                "from_model": "openai/fake-model",
                "to_model": "openai/backup-model",
                "reason": "overloaded",
                "fallback_index": 1,
            },
        )
    ]


async def test_fallback_with_its_own_base_and_key(fake: FakeLLM) -> None:
    recorder = Recorder()
    agent = litellm_agent(
        f"http://127.0.0.1:{closed_port()}/v1",
        fallbacks=[
            {"model": "openai/backup-model", "api_base": fake.base_url, "api_key": "sk-backup"}
        ],
    )

    reply = await agent.run(make_turn(recorder=recorder, stream=False))

    assert reply.text == ECHOED
    assert fake.requests[0].headers["authorization"] == "Bearer sk-backup"
    assert [e[1]["reason"] for e in recorder.events] == ["unavailable"]


async def test_all_models_failing_raises_the_last_error(fake: FakeLLM) -> None:
    fake.fail_model("fake-model", Fault.unavailable())
    fake.fail_model("second-model", Fault.rate_limited(retry_after=3))
    fake.fail_model("third-model", Fault.unauthorized())
    recorder = Recorder()
    agent = litellm_agent(fake.base_url, fallbacks=["openai/second-model", "openai/third-model"])

    error = await failure_of(agent, recorder)

    assert error.reason is FailureReason.AUTH_PERMANENT
    assert [r.model for r in fake.requests] == ["fake-model", "second-model", "third-model"]
    assert [(e[1]["from_model"], e[1]["to_model"], e[1]["reason"]) for e in recorder.events] == [
        ("openai/fake-model", "openai/second-model", "overloaded"),
        ("openai/second-model", "openai/third-model", "rate_limit"),
    ]


async def test_format_error_does_not_fall_back(fake: FakeLLM) -> None:
    fake.fail_model("fake-model", Fault.bad_request("messages[0] is malformed"))
    recorder = Recorder()
    agent = litellm_agent(fake.base_url, fallbacks=["openai/backup-model"])

    error = await failure_of(agent, recorder)

    assert error.reason is FailureReason.FORMAT_ERROR
    assert [r.model for r in fake.requests] == ["fake-model"]
    assert recorder.events == []


# --- streaming --------------------------------------------------------------------------------


@pytest.mark.parametrize("reply_text", [ECHOED, "Line one.\nLine two, with  spacing. "])
async def test_streaming_deltas_join_to_the_reply(fake: FakeLLM, reply_text: str) -> None:
    fake.script(reply_text)
    recorder = Recorder()

    reply = await litellm_agent(fake.base_url, stream=True).run(make_turn(recorder=recorder))

    assert reply.text == reply_text
    assert len(recorder.deltas) >= 2
    assert "".join(recorder.deltas) == reply.text
    assert fake.requests[0].stream is True


@pytest.mark.parametrize("stream", [True, False])
async def test_the_model_span_names_the_model_that_answered(
    fake: FakeLLM, spans: Spans, stream: bool
) -> None:
    fake.script("Hello.")
    agent = litellm_agent(fake.base_url, stream=stream)

    await agent.run(make_turn(recorder=Recorder(), stream=stream))

    [chat] = spans.named("chat openai/fake-model")
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.request.model"] == "openai/fake-model"  # as configured
    assert chat.attributes["gen_ai.response.model"] == "fake-model"  # as the server named it
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)


@pytest.mark.parametrize(("stream", "with_callback"), [(True, False), (False, True)])
async def test_no_streaming_unless_configured_and_wanted(
    fake: FakeLLM, stream: bool, with_callback: bool
) -> None:
    recorder = Recorder()
    agent = litellm_agent(fake.base_url, stream=stream)

    reply = await agent.run(make_turn(recorder=recorder, stream=with_callback))

    assert reply.text == ECHOED
    assert recorder.deltas == []
    assert fake.requests[0].stream is False


async def test_streaming_fallback_before_any_delta(fake: FakeLLM) -> None:
    fake.fail_model("fake-model", Fault.unavailable())
    recorder = Recorder()
    agent = litellm_agent(fake.base_url, stream=True, fallbacks=["openai/backup-model"])

    reply = await agent.run(make_turn(recorder=recorder))

    assert "".join(recorder.deltas) == reply.text == ECHOED
    assert len(recorder.events) == 1


async def test_no_fallback_after_deltas_were_streamed(fake: FakeLLM) -> None:
    # The first piece arrives at once, the next one after the read timeout: a failure mid-stream.
    fake.stream_chunk_delay_s = 2.0
    recorder = Recorder()
    agent = litellm_agent(
        fake.base_url, stream=True, timeout_s=0.3, fallbacks=["openai/backup-model"]
    )

    error = await failure_of(agent, recorder)

    assert error.reason is FailureReason.TIMEOUT
    assert recorder.deltas == ["echo: "]
    assert [r.model for r in fake.requests] == ["fake-model"]
    assert recorder.events == []
