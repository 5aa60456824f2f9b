"""Pure pieces of the tool loop: tool definitions, the transcript's tool steps, deadlines."""

from __future__ import annotations

from typing import Any

from chatgate.agents.tools.loop import (
    TRANSCRIPT_MAX_MESSAGES,
    RequestedCall,
    loop_deadline_s,
    progress_line,
    tool_definitions,
    transcript_exchange,
)
from chatgate.agents.tools.types import ToolSpec
from chatgate.config.tool_models import AgentToolsConfig


def test_tool_definitions_use_wire_names_and_map_them_back() -> None:
    defs, names = tool_definitions(
        [
            ToolSpec("github.search", "Find issues"),
            ToolSpec("github.get", parameters={"type": "object"}),
        ]
    )
    assert [d["function"]["name"] for d in defs] == ["github__search", "github__get"]
    assert defs[0]["function"]["description"] == "Find issues"
    assert "description" not in defs[1]["function"]
    assert names == {"github__search": "github.search", "github__get": "github.get"}


def step(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}"}]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": "r" * 3000},
    ]


def test_transcript_keeps_whole_latest_steps_with_capped_results() -> None:
    messages = [m for i in range(30) for m in step(i)]
    kept = transcript_exchange(messages)
    assert len(kept) <= TRANSCRIPT_MAX_MESSAGES
    assert kept[0]["role"] == "assistant"  # never a tool result without its call
    assert kept[-1]["tool_call_id"] == "c29"
    assert all(len(m["content"]) <= 2000 for m in kept if m["role"] == "tool")
    assert messages[1]["content"] == "r" * 3000  # the loop's own messages are untouched


def test_deadline_covers_the_whole_loop_unless_a_budget_is_shorter() -> None:
    assert loop_deadline_s(60, None) == 65
    tools = AgentToolsConfig(max_steps=2, tool_timeout_s=10)
    assert loop_deadline_s(60, tools) == 3 * 60 + 2 * 10 + 5
    assert loop_deadline_s(60, AgentToolsConfig(budget_s=30)) == 35


def test_progress_line_names_each_tool_once() -> None:
    calls = [
        RequestedCall("1", "a__x", "{}"),
        RequestedCall("2", "a__x", "{}"),
        RequestedCall("3", "zz", ""),
    ]
    assert progress_line(calls, {"a__x": "a.x"}) == "a.x, zz"
