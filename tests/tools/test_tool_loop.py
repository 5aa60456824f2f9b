"""The tool loop with real litellm against FakeLLM and a real MCP server (SDK, stdio)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from chatgate.agents.base import AgentError
from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.tools.types import TOOL_CALL_EVENT, TOOL_STARTED_EVENT
from chatgate.model.chat import ChatMessage
from chatgate.model.reasons import FailureReason, ToolCallStatus
from tests.agents.helpers import Recorder, make_turn
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.tools.conftest import tool_agent

pytestmark = pytest.mark.asyncio(loop_scope="module")


def calls_of(recorder: Recorder) -> list[dict[str, Any]]:
    return [data for name, data in recorder.events if name == TOOL_CALL_EVENT]


def tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") == "tool"]


async def test_two_step_turn_runs_the_tool_and_answers(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "the sum is 5")
    recorder = Recorder()

    reply = await tool_agent(fake.base_url, hub).run(make_turn("2+3?", recorder=recorder))

    assert reply.text == "the sum is 5"
    first, second = fake.requests
    offered = {t["function"]["name"] for t in first.body["tools"]}
    assert {"fake__add", "fake__echo", "fake__crash"} <= offered
    assert [m["content"] for m in tool_messages(second.messages)] == ["5"]
    assistant = [m for m in second.messages if m.get("tool_calls")]
    assert assistant[0]["tool_calls"][0]["function"]["name"] == "fake__add"
    [call] = calls_of(recorder)
    assert call["tool"] == "fake.add" and call["status"] == ToolCallStatus.OK
    assert call["arguments"] == {"a": 2, "b": 3} and call["result_chars"] == 1
    assert (TOOL_STARTED_EVENT, {"agent": "llm", "tool": "fake.add"}) in recorder.events


@pytest.mark.parametrize("stream", [False, True])
async def test_both_model_clients_run_the_same_tool_steps(
    fake: FakeLLM, hub: McpHub, stream: bool
) -> None:
    """The openai SDK route and litellm: the same calls, results, answer and request bodies."""
    seen = []
    for client in ("auto", "litellm"):
        fake.reset()
        fake.script(
            ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3}), content="Adding. "), "It is 5."
        )
        recorder = Recorder()
        agent = tool_agent(fake.base_url, hub, stream=stream, client=client)
        reply = await agent.run(make_turn("2+3?", recorder=recorder))
        await agent.aclose()
        calls = [(c["tool"], c["arguments"], c["status"]) for c in calls_of(recorder)]
        bodies = [r.body for r in fake.requests]
        seen.append(
            (reply.text, reply.usage, calls, _no_call_ids(reply.meta), _no_call_ids(bodies))
        )

    assert seen[0] == seen[1]
    text, usage, calls, _, _ = seen[0]
    assert text == "It is 5." and calls == [("fake.add", {"a": 2, "b": 3}, ToolCallStatus.OK)]
    assert usage["total_tokens"] > 0


def _no_call_ids(value: Any) -> str:
    """``value`` as JSON with the fake's call ids (numbered per server, not per run) blanked."""
    return re.sub(r"call_\d+_\d+", "call_", json.dumps(value, sort_keys=True))


async def test_parallel_calls_answer_in_order(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(
        ToolCalls.of(
            ToolCall("fake__slow", {"seconds": 0.2}),
            ToolCall("fake__echo", {"text": "hi"}),
        ),
        "done",
    )
    reply = await tool_agent(fake.base_url, hub).run(make_turn())

    assert reply.text == "done"
    results = tool_messages(fake.requests[1].messages)
    assert [m["content"] for m in results] == ["slept", "echo: hi"]
    ids = [c["id"] for c in fake.requests[1].messages[-3]["tool_calls"]]
    assert [m["tool_call_id"] for m in results] == ids


async def test_model_mistakes_go_back_to_the_model(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(
        ToolCalls.of(
            ToolCall("fake__add", "{not json"),
            ToolCall("nope__missing", {}),
            ToolCall("fake__fail", {"message": "bad input"}),
        ),
        "sorry",
    )
    recorder = Recorder()
    reply = await tool_agent(fake.base_url, hub).run(make_turn(recorder=recorder))

    assert reply.text == "sorry"
    bad, unknown, failed = (m["content"] for m in tool_messages(fake.requests[1].messages))
    assert "JSON object" in bad
    assert "no tool named 'nope__missing'" in unknown and "fake__add" in unknown
    assert "fail" in failed
    assert [c["status"] for c in calls_of(recorder)] == [
        ToolCallStatus.BAD_ARGUMENTS,
        ToolCallStatus.UNKNOWN_TOOL,
        ToolCallStatus.ERROR,
    ]
    made_up = calls_of(recorder)[1]
    assert made_up["tool"] == "<unknown>" and "nope__missing" in made_up["detail"]


async def test_endless_loop_stops_at_max_steps(fake: FakeLLM, hub: McpHub) -> None:
    fake.default_reply = ToolCalls.of(ToolCall("fake__echo", {"text": "again"}))

    with pytest.raises(AgentError) as caught:
        await tool_agent(fake.base_url, hub, max_steps=2).run(make_turn())

    assert caught.value.reason is FailureReason.TOOL_LIMIT
    assert len(fake.requests) == 3  # two tool steps, then the third ask is refused


async def test_token_budget_ends_the_turn(fake: FakeLLM, hub: McpHub) -> None:
    fake.default_reply = ToolCalls.of(ToolCall("fake__echo", {"text": "again"}))

    with pytest.raises(AgentError) as caught:
        await tool_agent(fake.base_url, hub, budget_tokens=1).run(make_turn())

    assert caught.value.reason is FailureReason.TOOL_BUDGET
    assert len(fake.requests) == 1


async def test_slow_tool_times_out_with_its_reason(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(ToolCalls.of(ToolCall("fake__slow", {"seconds": 30})))
    recorder = Recorder()

    with pytest.raises(AgentError) as caught:
        agent = tool_agent(fake.base_url, hub, tool_timeout_s=0.3)
        await agent.run(make_turn(recorder=recorder))

    assert caught.value.reason is FailureReason.TOOL_TIMEOUT
    assert [c["status"] for c in calls_of(recorder)] == [ToolCallStatus.TIMEOUT]


async def test_denied_tool_is_refused_to_the_model(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(ToolCalls.of(ToolCall("fake__whoami", {})), "ok")
    recorder = Recorder()
    agent = tool_agent(fake.base_url, hub, approval={"fake.who*": "deny"})

    assert (await agent.run(make_turn(recorder=recorder))).text == "ok"
    [result] = tool_messages(fake.requests[1].messages)
    assert "does not allow" in result["content"]
    assert calls_of(recorder)[0]["status"] == ToolCallStatus.DENIED


async def test_deny_list_hides_tools_from_the_model(fake: FakeLLM, hub: McpHub) -> None:
    agent = tool_agent(fake.base_url, hub, deny=["fake.crash", "fake.slow"])
    await agent.run(make_turn())
    offered = {t["function"]["name"] for t in fake.requests[0].body["tools"]}
    assert "fake__crash" not in offered and "fake__slow" not in offered and "fake__add" in offered


async def test_secret_arguments_are_masked_in_the_trail(fake: FakeLLM, hub: McpHub) -> None:
    arguments = {"order_id": "A-1", "api_token": "tok-canary-1234", "note": "sk-test-canary-4711"}
    fake.script(ToolCalls.of(ToolCall("fake__lookup_order", arguments)), "shipped")
    recorder = Recorder()

    await tool_agent(fake.base_url, hub).run(make_turn(recorder=recorder))

    trail = json.dumps(calls_of(recorder))
    assert "tok-canary-1234" not in trail and "sk-test-canary-4711" not in trail
    assert calls_of(recorder)[0]["arguments"]["order_id"] == "A-1"
    # the tool itself still got the real value
    assert "token ok: True" in tool_messages(fake.requests[1].messages)[0]["content"]


async def test_streaming_keeps_working_between_steps(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(
        ToolCalls.of(ToolCall("fake__add", {"a": 40, "b": 2}), content="Let me add. "),
        "It is 42.",
    )
    recorder = Recorder()

    agent = tool_agent(fake.base_url, hub, stream=True)
    reply = await agent.run(make_turn(recorder=recorder))

    assert all(r.stream for r in fake.requests)
    assert [m["content"] for m in tool_messages(fake.requests[1].messages)] == ["42"]
    assert "".join(recorder.deltas) == "Let me add. It is 42."
    assert reply.text == "It is 42."


async def test_next_turn_sees_the_tool_steps_behind_an_answer(fake: FakeLLM, hub: McpHub) -> None:
    fake.script(ToolCalls.of(ToolCall("fake__echo", {"text": "x" * 5000})), "echoed")
    agent = tool_agent(fake.base_url, hub)
    reply = await agent.run(make_turn("echo it"))

    assert reply.meta is not None
    call, result = reply.meta["tool_steps"]
    assert call["tool_calls"][0]["function"]["name"] == "fake__echo"
    assert result["role"] == "tool" and len(result["content"]) == 2000  # capped for the transcript

    history = [
        ChatMessage("user", "echo it"),
        ChatMessage("assistant", reply.text, meta=reply.meta),
    ]
    await agent.run(make_turn("and again?", history=history))
    roles = [m["role"] for m in fake.requests[-1].messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert fake.requests[-1].messages[2]["tool_call_id"] == call["tool_calls"][0]["id"]


@pytest.mark.parametrize("show", [True, False])
async def test_progress_line_per_step_unless_switched_off(
    fake: FakeLLM, hub: McpHub, show: bool
) -> None:
    lines: list[str] = []

    async def progress(line: str) -> None:
        lines.append(line)

    fake.script(
        ToolCalls.of(
            ToolCall("fake__add", {"a": 1, "b": 2}), ToolCall("fake__echo", {"text": "x"})
        ),
        "ok",
    )
    turn = replace(make_turn(), on_progress=progress)
    await tool_agent(fake.base_url, hub, show_tool_progress=show).run(turn)
    assert lines == (["fake.add, fake.echo"] if show else [])
