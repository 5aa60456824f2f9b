"""Scenario: the tool loop. chatgate's litellm agent with an MCP server vs a bare litellm loop.

Both sides run in the bench process against the same in-process FakeLLM and the same kind of
MCP server (tests/fakes/mcp_server.py over stdio, one per side). A turn is: model asks for one
tool call → the call → model answers. The floor is what a bare script does: ``acompletion`` with
the tool definitions, ``ClientSession.call_tool``, ``acompletion`` again. Model and tool time are
the same on both sides, so the per-turn ratio bounds the gateway's overhead per tool step from
above (the difference is chatgate's own work: listing and filtering tools, limits, masking, the
trail events and the turn's tool hook: per-tool metrics, the log line, the trail `why` shows).
Both sides send the model the same messages (the assistant step as a plain dict). Wall time on a
shared machine is noisy, so the sides alternate in short blocks and the bench process's CPU
time per turn is measured too (the MCP servers are subprocesses of the same kind on both sides
and not counted).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from bench.runner import Context, Outcome
from bench.stats import Spec, Table
from chatgate.agents.base import Turn
from chatgate.agents.litellm_agent import LiteLLMAgent
from chatgate.agents.litellm_import import litellm_module
from chatgate.agents.mcp.hub import McpHub
from chatgate.agents.tools.runtime import ToolRuntime, TurnTools
from chatgate.clock import SystemClock
from chatgate.config.agent_models import LiteLLMAgentConfig
from chatgate.config.tool_models import McpServerConfig
from chatgate.model.chat import ChatMessage
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls

ROOT = Path(__file__).resolve().parents[2]
TURN_MS = Spec("tools_turn_ms", "tool turn (call → tool → answer), mean", "ms", "lower")
CPU_MS = Spec("tools_turn_cpu_ms", "tool turn, bench-process CPU per turn", "ms", "lower")
RATIO = Spec("tools_turn_ratio", "tool turn: chatgate / bare loop", "×", "lower", 1.2)
BLOCKS = 10  # alternating blocks per repetition
CPU_RATIO = Spec("tools_cpu_ratio", "tool turn CPU: chatgate / bare loop", "×", "lower", 1.2)


def _server() -> McpServerConfig:
    return McpServerConfig(
        command=sys.executable,
        args=["-m", "tests.fakes.mcp_server", "stdio"],
        cwd=str(ROOT),
        startup_timeout_s=120,
    )


def _script(fake: FakeLLM, turns: int) -> None:
    for i in range(turns):
        fake.script(ToolCalls.of(ToolCall("fake__add", {"a": i, "b": 1})), f"sum {i + 1}")


async def _chatgate(fake: FakeLLM, hub: McpHub, turns: int) -> tuple[float, float]:
    config = LiteLLMAgentConfig.model_validate(
        {
            "backend": "litellm",
            "model": "openai/fake-model",
            "api_base": fake.base_url,
            "api_key": "sk-bench",
            "tools": {"allow": ["fake.add"]},
        }
    )
    assert config.tools is not None
    agent = LiteLLMAgent("bench", config, {}, hub.source_for("bench", config.tools))
    runtime = ToolRuntime(hub, CollectorRegistry())
    _script(fake, turns)
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(turns):
        hook = TurnTools(runtime, lambda n, d: None)  # what the gateway's turn does per call
        turn = Turn("bench", (), (ChatMessage("user", f"{i}+1?"),), on_event=hook.on_event)
        reply = await agent.run(turn)
        assert reply.text == f"sum {i + 1}", reply.text
        hook.record({})
    return _per_turn(started, cpu, turns)


def _per_turn(started: float, cpu: float, turns: int) -> tuple[float, float]:
    """(wall ms, bench-process CPU ms) per turn since ``started``/``cpu``."""
    wall = (time.perf_counter() - started) / turns * 1000
    return wall, (time.process_time() - cpu) / turns * 1000


async def _floor(fake: FakeLLM, session: Any, turns: int) -> tuple[float, float]:
    litellm = await litellm_module()
    listed = await session.list_tools()
    defs = [
        {
            "type": "function",
            "function": {
                "name": f"fake__{t.name}",
                "description": t.description or "",
                "parameters": t.input_schema,
            },
        }
        for t in listed.tools
        if t.name == "add"
    ]
    base = {"model": "openai/fake-model", "api_base": fake.base_url, "api_key": "sk-bench"}
    _script(fake, turns)
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(turns):
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"{i}+1?"}]
        while True:
            response = await litellm.acompletion(messages=messages, tools=defs, **base)
            message = response.choices[0].message
            if not message.tool_calls:
                break
            messages.append(_assistant(message))
            for call in message.tool_calls:
                name = call.function.name.split("__", 1)[1]
                result = await session.call_tool(name, json.loads(call.function.arguments))
                text = "".join(getattr(b, "text", "") for b in result.content)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        assert message.content == f"sum {i + 1}", message.content
    return _per_turn(started, cpu, turns)


def _assistant(message: Any) -> dict[str, Any]:
    """The assistant step as chatgate sends it back (not litellm's whole pydantic dump)."""
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in message.tool_calls
    ]
    return {"role": "assistant", "content": message.content, "tool_calls": calls}


async def _interleaved(
    fake: FakeLLM, hub: McpHub, session: Any, turns: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Both sides' (wall ms, CPU ms) per turn over ``turns`` each, run in short alternating
    blocks (who goes first alternates too) so a shared machine's drift hits both alike."""
    size = max(1, turns // BLOCKS)
    ours, bare = [0.0, 0.0], [0.0, 0.0]
    for block in range(BLOCKS):
        sides = [(ours, _chatgate(fake, hub, size)), (bare, _floor(fake, session, size))]
        for total, run in sides if block % 2 else sides[::-1]:
            wall, cpu = await run
            total[0] += wall / BLOCKS
            total[1] += cpu / BLOCKS
    return (ours[0], ours[1]), (bare[0], bare[1])


async def scenario(ctx: Context) -> Outcome:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    turns = ctx.pick(200, 20)
    table = Table()
    hub = McpHub({"fake": _server()}, SystemClock())
    async with FakeLLM() as fake, AsyncExitStack() as stack:
        stack.push_async_callback(hub.stop)
        params = StdioServerParameters(command=sys.executable, args=_server().args, cwd=str(ROOT))
        read, write = await stack.enter_async_context(stdio_client(params))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        await _chatgate(fake, hub, 2)  # warm-up: litellm import, server start, first connection
        await _floor(fake, session, 2)
        for _ in range(ctx.reps):
            ours, bare = await _interleaved(fake, hub, session, turns)
            table.add(TURN_MS, ours[0], bare[0])
            table.add(CPU_MS, ours[1], bare[1])
            table.add(RATIO, ours[0] / bare[0])
            table.add(CPU_RATIO, ours[1] / bare[1])
    params_out = {
        "turns": turns,
        "reps": ctx.reps,
        "turn": "model asks for fake.add → MCP stdio call → model answers (2 model calls)",
        "floor": "bare litellm acompletion + mcp ClientSession.call_tool loop, same fakes",
        "blocks": BLOCKS,
    }
    return Outcome(table, params_out)
