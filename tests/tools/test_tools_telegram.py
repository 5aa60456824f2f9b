"""A two-step tool turn on Telegram (real python-telegram-bot, fake Bot API), streamed as a draft;
the next turn's model sees the tool steps kept in the session transcript."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.llm import FakeLLM, ToolCall, ToolCalls
from tests.fakes.telegram import FakeTelegram
from tests.harness import running
from tests.tools.conftest import telegram_tools_config


async def test_two_step_tool_turn_streams_and_is_remembered(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = telegram_tools_config(
        tmp_path,
        fake_tg,
        fake_llm,
        agent="    stream: true\n    tools: [fake.add]",
        channel="    dm_policy: open\n    stream: {enabled: true, min_edit_interval_s: 0.2}",
    )
    fake_llm.script(
        ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3}), content="Let me add that. "),
        "It is 5.",
        "Still 5.",
    )
    async with running(config):
        fake_tg.dm(42, "what is 2+3?")
        await fake_llm.wait_for_requests(2, timeout=60)
        await fake_tg.wait_for("editMessageText", timeout=20)
        fake_tg.dm(42, "sure?")
        await fake_llm.wait_for_requests(3, timeout=60)

    first, second, third = fake_llm.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["fake__add"]
    assert second.messages[-1] == {
        "role": "tool",
        "tool_call_id": second.messages[-2]["tool_calls"][0]["id"],
        "content": "5",
    }
    texts = [c.params["text"] for c in fake_tg.calls_of("sendMessage")]
    texts += [c.params["text"] for c in fake_tg.calls_of("editMessageText")]
    assert any("It is 5." in t for t in texts)
    assert any("using fake.add…" in t for t in texts)  # the draft's status line
    assert "using" not in texts[-1] and "using" not in third.messages[3]["content"]
    roles = [m["role"] for m in third.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]


def _status_config(tmp_path: Path, tg: FakeTelegram, llm: FakeLLM, tools: str) -> Path:
    channel = "    dm_policy: open\n    stream: {enabled: false, min_edit_interval_s: 0.2}"
    return telegram_tools_config(tmp_path, tg, llm, f"    tools: {tools}", channel)


async def test_status_line_without_streaming_is_edited_then_replaced_by_the_answer(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = _status_config(tmp_path, fake_tg, fake_llm, "[fake.slow, fake.echo]")
    fake_llm.script(  # the slow call outlasts the edit interval: the next step's edit goes out
        ToolCalls.of(ToolCall("fake__slow", {"seconds": 0.5})),
        ToolCalls.of(ToolCall("fake__echo", {"text": "hi"})),
        "It is 5.",
    )
    async with running(config):
        fake_tg.dm(42, "what is 2+3?")
        await fake_llm.wait_for_requests(3, timeout=60)
        done = lambda c: c.params["text"] == "It is 5."  # noqa: E731
        await fake_tg.wait_for("editMessageText", timeout=20, where=done)

    [status] = fake_tg.calls_of("sendMessage")  # the answer did not come as a new message
    assert status.params["text"] == "using fake.slow…"
    edits = fake_tg.calls_of("editMessageText")
    assert [e.params["text"] for e in edits] == ["using fake.echo…", "It is 5."]
    assert len({e.params["message_id"] for e in edits}) == 1
    assert fake_tg.calls_of("sendChatAction")  # typing goes on while tools run


async def test_status_line_speaks_the_chat_language(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    config = _status_config(tmp_path, fake_tg, fake_llm, "[fake.add]")
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "Es ist 5.")
    async with running(config):
        fake_tg.dm(42, "was ist 2+3?", language_code="de")
        await fake_tg.wait_for("editMessageText", timeout=60)
    assert [c.params["text"] for c in fake_tg.calls_of("sendMessage")] == ["verwende fake.add…"]
    assert [c.params["text"] for c in fake_tg.calls_of("editMessageText")] == ["Es ist 5."]


async def test_no_status_line_when_switched_off(
    tmp_path: Path, fake_tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    tools = "{allow: [fake.add], show_tool_progress: false}"
    config = _status_config(tmp_path, fake_tg, fake_llm, tools)
    fake_llm.script(ToolCalls.of(ToolCall("fake__add", {"a": 2, "b": 3})), "It is 5.")
    async with running(config):
        fake_tg.dm(42, "what is 2+3?")
        await fake_tg.wait_for("sendMessage", timeout=60)
    assert [c.params["text"] for c in fake_tg.calls_of("sendMessage")] == ["It is 5."]
    assert fake_tg.calls_of("editMessageText") == []
