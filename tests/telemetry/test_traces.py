"""One trace per Telegram message, exported over OTLP/HTTP to a receiver on 127.0.0.1: the root
span, the turn, the GenAI model and tool spans, the Telegram API calls, the trace context the
real `mcp-server-time` received in `params._meta`; no content and no secret in any span."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from chatgate import genai_metrics, tracing
from chatgate.state import admin
from tests.channels.telegram.support import telegram_config
from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.fakes.telegram import FakeTelegram
from tests.harness import running

API_KEY = "sk-trace-canary-7741"
WORDS = "my parcel number is QX-99812"


def _config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, receiver: OtlpReceiver | None) -> Path:
    tap = tmp_path / "mcp-in.jsonl"
    telemetry = f"telemetry: {{otlp_endpoint: {receiver.base_url}}}\n" if receiver else ""
    return telegram_config(
        tmp_path,
        tg,
        llm,
        api_key=API_KEY,
        channel="    dm_policy: open",
        gateway=f"""{telemetry}mcp_servers:
  time:
    command: {sys.executable}
    args: [-m, tests.fakes.stdio_tap, "{tap}", {sys.executable}, -m, mcp_server_time]
    cwd: {Path(__file__).resolve().parents[2]}""",
        agent="    tools:\n      allow: [time.*]",
    )


def _everything(span: ReceivedSpan) -> str:
    return json.dumps([span.name, span.attributes, span.events], default=str)


async def _one_message(
    tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, r: OtlpReceiver | None
) -> list[dict[str, Any]]:
    """Answer one DM; returns its `chatgate why` trail."""
    llm.script(ToolCalls.of(ToolCall("time__get_current_time", {"timezone": "UTC"})), "It is noon.")
    async with running(_config(tmp_path, tg, llm, r)) as gw:
        await tg.wait_for("getUpdates", timeout=15)
        tg.dm(42, WORDS)
        await tg.wait_for("sendMessage", timeout=90)
        assert await gw.pipeline.scheduler.wait_idle(30)  # the turn ended: its root has the outcome
        return list((await admin.why(gw.rt.state, "telegram", None, "42"))["trails"])


async def test_a_telegram_message_is_one_trace_into_the_mcp_server(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    async with OtlpReceiver() as receiver:
        [trail] = await _one_message(tmp_path, fake_tg, fake_llm, receiver)
    assert not tracing.on()  # closed: back to no-ops

    [root] = receiver.named("telegram message")
    trace = [s for s in receiver.spans if s.trace_id == root.trace_id]
    by_id = {s.span_id: s for s in trace}

    def parent(span: ReceivedSpan) -> str:
        return by_id[span.parent_id].name if span.parent_id in by_id else ""

    assert root.parent_id == ""
    assert trail["trace_id"] == root.trace_id  # `chatgate why` leads to the trace
    assert root.attributes["chatgate.channel"] == "telegram"
    assert root.attributes["chatgate.stage"] and root.attributes["chatgate.reason"]
    assert root.resource["service.name"] == "chatgate"
    assert root.resource["service.instance.id"]
    [journal] = [s for s in trace if s.name == "chatgate.journal"]
    [turn] = [s for s in trace if s.name == "chatgate.turn"]
    assert parent(journal) == parent(turn) == "telegram message"
    steps = turn.attributes["chatgate.steps"]  # the turn's steps: attributes, not spans
    assert steps[0] == "chatgate.open" and "chatgate.call_agent" in steps
    assert "chatgate.prepare_input" not in steps  # a text DM: the media step is not entered
    assert len(turn.attributes["chatgate.steps.duration_s"]) == len(steps)
    chats = [s for s in trace if s.name == "chat openai/fake-model"]
    assert len(chats) == len(fake_llm.requests) == 2  # each model call recorded once
    assert {s.scope for s in chats} == {"chatgate"}
    assert not [s for s in receiver.spans if "litellm" in s.scope.lower()]
    for chat in chats:
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.provider.name"] == "openai"
        assert chat.attributes["gen_ai.request.model"] == "openai/fake-model"
        assert chat.attributes["gen_ai.response.model"] == "fake-model"  # as the server named it
        assert chat.kind == 3  # SPAN_KIND_CLIENT
    [tool] = [s for s in trace if s.name == "execute_tool time__get_current_time"]
    assert tool.attributes["gen_ai.tool.name"] == "time__get_current_time"
    assert tool.status != 2  # not an error
    assert [s for s in trace if s.name == "telegram sendMessage"]
    assert not [s for s in receiver.spans if s.name == "telegram getUpdates"]  # polls: no traces

    sent = [json.loads(line) for line in (tmp_path / "mcp-in.jsonl").read_text().splitlines()]
    [call] = [m for m in sent if m.get("method") == "tools/call"]
    traceparent = call["params"]["_meta"]["traceparent"]
    assert traceparent.split("-")[1] == root.trace_id

    # GenAI client metrics, flushed when the gateway closed: both calls, their tokens by type
    [duration] = [h for h in receiver.histograms if h.name == "gen_ai.client.operation.duration"]
    assert duration.unit == "s" and duration.count == 2 and duration.total > 0
    assert duration.attributes["gen_ai.request.model"] == "openai/fake-model"
    assert duration.attributes["gen_ai.provider.name"] == "openai"
    assert duration.attributes["gen_ai.response.model"] == "fake-model"
    assert duration.bounds[:2] == [0.01, 0.02]
    tokens = {
        h.attributes["gen_ai.token.type"]: h
        for h in receiver.histograms
        if h.name == "gen_ai.client.token.usage"
    }
    assert set(tokens) == {"input", "output"} and tokens["input"].count == 2
    assert tokens["input"].unit == "{token}" and tokens["input"].total > 0
    assert {h.attributes["gen_ai.response.model"] for h in tokens.values()} == {"fake-model"}

    text = "".join(_everything(s) for s in receiver.spans) + str(receiver.histograms)
    assert "QX-99812" not in text and "UTC" not in text  # content-free by default
    assert API_KEY not in text and "noon" not in text


async def test_nothing_is_exported_when_unconfigured(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.script("hello")
    async with (
        OtlpReceiver() as receiver,
        running(_config(tmp_path, fake_tg, fake_llm, None)) as gw,
    ):
        await fake_tg.wait_for("getUpdates", timeout=15)
        fake_tg.dm(42, WORDS)
        await fake_tg.wait_for("sendMessage", timeout=90)
        status = await gw.status()
        on = tracing.on() or genai_metrics.on()
    assert not on and status["telemetry"] == {"export": False}
    assert receiver.requests == 0
