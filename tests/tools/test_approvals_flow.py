"""Tool approval without buttons and across time: a timeout on an injected clock, a "yes" from
the operator chat for a webhook-triggered agent (an edited "yes" never counts), and a restart
while a prompt waits, answered after the restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chatgate.approvals.feature import Approvals
from chatgate.gateway.app import Gateway
from chatgate.policies.approvals import press_value
from chatgate.state import admin
from chatgate.state.approvals import KV_NAME, ApprovalStore
from chatgate.state.records import TERMINAL
from tests.fakes.clock import ManualClock
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.harness import fake_agent, http, memory, running, url, write_config
from tests.support.waiting import eventually

SEND = ToolCalls.of(
    ToolCall("gateway__send_message", {"target": "ops", "text": "deploy v2 now", "token": "t-1"})
)


def config(
    tmp_path: Path, fake: FakeLLM, *, tools: str = "", channel: str = "", extra: str = ""
) -> Path:
    return write_config(
        tmp_path,
        f"""
{fake_agent(fake, "sk-approval-test", 20)}
    tools:
      allow: [gateway.send_message]
      send_to: {{ops: "memory:ops-room"}}
      approval: {{"gateway.*": ask}}
{tools}
channels:
  memory: {{dm_policy: open, group_policy: respond_all{channel}}}
{extra}""",
    )


def store(gw: object) -> ApprovalStore:
    found = gw.rt.state.stores.kv[KV_NAME]  # type: ignore[attr-defined]
    assert isinstance(found, ApprovalStore)
    return found


async def closed_then_refused(gw: Gateway, approval_id: str) -> None:
    """The prompt shows it is closed, and a press that comes after changes nothing."""
    await eventually(
        lambda: "✖️ gateway.send_message: no longer needed." in memory(gw).texts(),
        what="prompt closed",
    )
    late = await memory(gw).inject(
        "Approve", message_id="press-1", choice=press_value(True, approval_id)
    )
    assert (await late.result).reason == "approval_already_decided"


async def test_no_answer_within_the_timeout_denies_the_call(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    clock = ManualClock()
    fake_llm.script(SEND, "Nobody approved it, so I did not tell ops.")
    path = config(tmp_path, fake_llm, tools="      approval_timeout_s: 120")
    async with running(path, clock=clock) as gw:
        submission = await memory(gw).inject("tell ops to deploy")
        await memory(gw).wait_sent(1, timeout=20)
        while not submission.result.done():  # the prompt waits on the injected clock only
            clock.advance(20)
            await asyncio.sleep(0.05)
        result = await submission.result
        texts = memory(gw).texts()
        metrics = gw.rt.metrics.render().decode()
    prompt = texts[0]
    assert "gateway.send_message" in prompt and '"token": "***"' in prompt and "t-1" not in prompt
    assert "(expires in 2 minutes)" in prompt
    assert any("no answer within 2 minutes" in t for t in texts)
    assert result.reply == "Nobody approved it, so I did not tell ops."
    assert memory(gw).texts("ops-room") == []  # the tool never ran
    told = fake_llm.requests[1].messages[-1]
    assert told["role"] == "tool" and "in time" in told["content"]
    assert 'chatgate_tool_approvals_total{agent="default",reason="timed_out"} 1.0' in metrics
    assert (
        'chatgate_tool_calls_total{agent="default",status="approval_timeout",'
        'tool="gateway.send_message"} 1.0' in metrics
    )


async def test_a_webhook_agent_is_approved_by_a_yes_in_the_operator_chat(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(SEND, "Ops were told.")
    webhook = """  webhook:
    routes:
      deploy:
        path: /hooks/deploy
        signature: none
        prompt: "CI finished for {payload.ref}"
        respond: async
        deliver: {to: "memory:ci-room"}
"""
    path = config(
        tmp_path,
        fake_llm,
        tools='      approver: "memory:ops-room"',
        channel=", buttons: false",
        extra=webhook,
    )
    async with running(path) as gw, http() as client:
        async with client.post(url(gw, "/hooks/deploy"), json={"ref": "v2"}) as resp:
            assert resp.status == 202
        [prompt] = await memory(gw).wait_sent(1, timeout=20)
        assert prompt.target.chat_id == "ops-room"
        assert prompt.text.endswith("Reply yes or no.")  # no buttons here
        chat = {"chat_id": "ops-room", "chat_kind": "group", "sender_id": "u9"}
        edited = await memory(gw).inject("yes", **chat, extra={"edit_of": "memory:m0"})
        assert (await edited.result).reason == "approval_edited"
        assert len(fake_llm.requests) == 1  # an edit never answers
        yes = await memory(gw).inject("Yes!", **chat)
        assert ((await yes.result).stage, (await yes.result).reason) == ("approval", "approved")
        await memory(gw).wait_sent(4, timeout=20)
        chatter = await memory(gw).inject("yes", chat_id="c1", sender_id="u1")  # no prompt there
        assert (await chatter.result).reply == "echo: yes"
        texts = memory(gw).texts()
    assert "✅ gateway.send_message: approved by Alice." in texts
    assert "deploy v2 now" in memory(gw).texts("ops-room")
    assert memory(gw).texts("ci-room") == ["Ops were told."]
    assert fake_llm.requests[0].last_user_text == "CI finished for v2"


async def test_a_restart_while_waiting_then_a_press_resumes_the_turn(
    tmp_path: Path, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    path = config(tmp_path, fake_llm)
    fake_llm.script(SEND)
    async with running(path) as gw:
        submission = await memory(gw).inject("tell ops", message_id="m1")
        [prompt] = await memory(gw).wait_sent(1, timeout=20)
        [pending] = await store(gw).pending_in("memory", "c1", gw.rt.clock.time())
        assert "gateway.send_message" in prompt.text
    assert "drain timeout" not in caplog.text, "the waiting turn held up shutdown"
    assert not submission.result.done() or submission.result.cancelled()

    # The model asks for the same call again when the turn runs again after the restart.
    fake_llm.script(SEND, "Done, ops know.")
    async with running(path) as gw:
        await fake_llm.wait_for_requests(2, timeout=20)
        await eventually(lambda: gw.feature(Approvals).desk.waiting == 1, what="turn waiting")
        press = await memory(gw).inject(
            "Approve", message_id="press-1", choice=press_value(True, pending.id)
        )
        assert (await press.result).reason == "approved"
        await memory(gw).wait_sent(3, timeout=20)
        texts = memory(gw).texts()
        entry = await gw.rt.journal.get("memory:m1")
    assert not any("wants to use" in t for t in texts), "the prompt was posted twice"
    assert texts.count("deploy v2 now") == 1 and "Done, ops know." in texts
    assert len(fake_llm.requests) == 3
    assert entry is not None and entry.reply is not None
    [call] = entry.reply["tools"]["trail"]
    assert (call["approval"], call["approver"]) == ("approved", "memory:u1")


async def test_stop_while_waiting_closes_the_prompt(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(SEND)
    async with running(config(tmp_path, fake_llm)) as gw:
        submission = await memory(gw).inject("tell ops", message_id="m1")
        await memory(gw).wait_sent(1, timeout=20)
        [pending] = await store(gw).pending_in("memory", "c1", gw.rt.clock.time())
        [waiting] = (await admin.why(gw.rt.state, "memory", "m1", None))["trails"]
        await memory(gw).inject("/stop", message_id="stop-1")
        result = await submission.result
        await closed_then_refused(gw, pending.id)
    assert result.reason == "cancelled"
    assert memory(gw).texts("ops-room") == [] and len(fake_llm.requests) == 1
    assert waiting["summary"] == (
        "accepted, turn not finished yet; "
        "waiting for approval of gateway.send_message (asked in memory:c1)"
    )
    assert waiting["approvals"][0]["arguments"]["token"] == "***"


@pytest.mark.parametrize(
    ("tools", "reason"),
    [
        # the tool loop's budget runs out while the prompt waits (it pauses only for as long
        # as the prompt may wait, and the injected clock never lets the prompt expire)
        ("      approval_timeout_s: 0.1\n      budget_s: 5", "tool_budget"),
        # the turn's own deadline: one model call and one tool call, each bounded
        (
            "      approval_timeout_s: 0.1\n      max_steps: 1\n      tool_timeout_s: 0.5",
            "timeout",
        ),
    ],
)
async def test_a_turn_that_fails_while_waiting_closes_its_prompt(
    tmp_path: Path, fake_llm: FakeLLM, tools: str, reason: str
) -> None:
    fake_llm.script(SEND)
    path = config(tmp_path, fake_llm, tools=tools)
    if reason == "timeout":  # bounds the turn at 2 × 3 + 0.5 + 5 s
        path.write_text(path.read_text().replace("timeout_s: 20\n", "timeout_s: 3\n", 1))
    async with running(path, clock=ManualClock()) as gw:
        submission = await memory(gw).inject("tell ops", message_id="m1")
        await memory(gw).wait_sent(1, timeout=20)
        [pending] = await store(gw).pending_in("memory", "c1", gw.rt.clock.time())
        result = await asyncio.wait_for(submission.result, 30)
        await closed_then_refused(gw, pending.id)
        metrics = gw.rt.metrics.render().decode()
    assert result.reason == reason
    assert memory(gw).texts("ops-room") == [] and len(fake_llm.requests) == 1
    assert 'chatgate_tool_approvals_total{agent="default",reason="approval_cancelled"} 1.0' in (
        metrics
    )


async def test_a_turn_that_comes_to_wait_as_shutdown_begins_is_released_too(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Shutdown releases the waiting turns; one whose prompt was going out at that moment (not
    waiting yet) stops as soon as it would wait, instead of holding up the drain."""
    fake_llm.script(SEND)
    async with running(config(tmp_path, fake_llm)) as gw:
        chat = memory(gw)
        chat.after_send = gw.feature(Approvals).desk.release  # right after the prompt's send
        submission = await chat.inject("tell ops", message_id="m1")
        await chat.wait_sent(1, timeout=20)
        assert await gw.pipeline.scheduler.wait_idle(10), "the turn waits for an answer"
        [pending] = await store(gw).pending_in("memory", "c1", gw.rt.clock.time())
        entry = await gw.rt.journal.get("memory:m1")
        assert entry is not None and entry.state not in TERMINAL, "kept for the next start"
    assert pending.tool == "gateway.send_message"
    assert not submission.result.done() or submission.result.cancelled()
