"""Budgets over the model calls of a turn: a degraded turn runs on the cheaper agent, a tool
turn charges every call, the journal keeps the turn's usage, a provider 429 with Retry-After
is waited out, the operator reads `/api/usage` and resets a user."""

from __future__ import annotations

import sys
from pathlib import Path

import aiohttp

from chatgate.gateway.http.dashboard import snapshot
from chatgate.state.admin import trail
from tests.channels.telegram.helpers_b import settled
from tests.fakes.llm import FakeLLM, Fault, ToolCall, ToolCalls
from tests.harness import fake_agent, memory, operator, running, url, write_config
from tests.tools.conftest import ROOT


def _config(tmp_path: Path, llm: FakeLLM, budgets: str, extra: str = "", head: str = "") -> Path:
    return write_config(
        tmp_path,
        f"""  rate_limits: {{per_sender: null, per_chat: null}}
{head}{fake_agent(llm, "sk-test", 30)}
    price: {{input_per_mtok: 10, output_per_mtok: 30}}
{extra}  cheap:
    backend: litellm
    model: openai/cheap-model
    api_base: {llm.base_url}
    api_key: sk-test
    timeout_s: 30
    price: {{input_per_mtok: 1, output_per_mtok: 1}}
budgets:
{budgets}
channels:
  memory: {{dm_policy: open}}
""",
    )


DEGRADING = """  - name: per-user-daily
    scope: user
    limit_turns: 4
    warn_at: null
    degrade_to: cheap
    degrade_at: 0.5
"""


async def test_degrade_switches_the_model_then_refuses(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with running(_config(tmp_path, fake_llm, DEGRADING)) as gw:
        chat = memory(gw)
        reasons = [
            (await (await chat.inject(f"m{i}", sender_id="ann")).result).reason for i in range(5)
        ]
        entry = await settled(gw, "memory:m3")
    assert reasons == ["text"] * 4 + ["budget_exhausted"]
    assert [r.model for r in fake_llm.requests] == ["fake-model"] * 2 + ["cheap-model"] * 2
    assert entry.reply is not None
    usage = entry.reply["usage"]
    assert usage["agent"] == "cheap" and usage["calls"] == 1 and usage["cost_usd"] > 0
    assert "1 model call (cheap)" in trail(entry)["summary"]  # what `chatgate why` prints


TOOLS = """    tools:
      allow: [fake.add]
"""


async def test_a_tool_turn_charges_every_model_call(tmp_path: Path, fake_llm: FakeLLM) -> None:
    budgets = """  - name: tokens
    scope: user
    limit_tokens: 100000
    warn_at: null
"""
    head = f"""mcp_servers:
  fake:
    command: {sys.executable}
    args: [-m, tests.fakes.mcp_server, stdio]
    cwd: {ROOT}
    startup_timeout_s: 60
"""
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "It is 5.")
    config = _config(tmp_path, fake_llm, budgets, extra=TOOLS, head=head)
    async with running(config) as gw:
        chat = memory(gw)
        result = await (await chat.inject("what is 2+3?", sender_id="ann")).result
        entry = await settled(gw, "memory:m1")
        async with aiohttp.ClientSession() as http:
            got = await http.get(url(gw, "/api/usage"), headers=operator(gw))
            rows = (await got.json())["rows"]
    assert result.reason == "text"
    usage = entry.reply["usage"] if entry.reply else {}
    assert usage["calls"] == 2
    assert [r["tokens"] for r in rows] == [usage["tokens_in"] + usage["tokens_out"]]
    assert rows[0]["turns"] == 1 and rows[0]["id"] == "memory:ann"


async def test_rate_limit_with_retry_after_is_waited_out(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.fail_next(Fault.rate_limited(retry_after=1))
    async with running(_config(tmp_path, fake_llm, "  []")) as gw:
        chat = memory(gw)
        result = await (await chat.inject("hello", sender_id="ann")).result
        await chat.wait_sent(1)
    assert result.reason == "text"
    assert len(fake_llm.requests) == 2
    assert chat.texts() == ["echo: hello"]


async def test_the_operator_resets_a_user(tmp_path: Path, fake_llm: FakeLLM) -> None:
    budgets = """  - name: once
    scope: user
    limit_turns: 1
    warn_at: null
"""
    async with running(_config(tmp_path, fake_llm, budgets)) as gw:
        chat = memory(gw)
        assert (await (await chat.inject("a", sender_id="ann")).result).reason == "text"
        refused = await (await chat.inject("b", sender_id="ann")).result
        assert refused.reason == "budget_exhausted"
        board = (await snapshot(gw))["usage"]  # the dashboard's spend panel reads this part
        assert [(r["id"], r["turns"]) for r in board["rows"]] == [("memory:ann", 1)]
        assert [(d["agent"], d["turns"]) for d in board["agent_days"]] == [("default", 1)]
        async with aiohttp.ClientSession() as http:
            got = await http.post(
                url(gw, "/api/budgets/reset"),
                json={"scope": "user:memory:ann"},
                headers=operator(gw),
            )
            assert (await got.json())["counters"] == 1
        assert (await (await chat.inject("c", sender_id="ann")).result).reason == "text"


async def test_without_budgets_the_journal_still_keeps_the_usage(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """No budget rules: nothing is looked up or refused (the meter's quick path), and the turn's
    model calls, tokens and cost still reach the journal and `chatgate why`."""
    async with running(_config(tmp_path, fake_llm, "  []")) as gw:
        chat = memory(gw)
        result = await (await chat.inject("hello", sender_id="ann")).result
        entry = await settled(gw, "memory:m1")
    assert result.reason == "text" and entry.reply is not None
    usage = entry.reply["usage"]
    assert usage["agent"] == "default" and usage["model"] == "openai/fake-model"
    assert usage["calls"] == 1 and usage["tokens_in"] > 0 and usage["cost_usd"] > 0
    assert "1 model call (default)" in trail(entry)["summary"]
