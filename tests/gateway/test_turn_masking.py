"""Configured secrets masked out of an agent's answer before the turn stores or sends it."""

from __future__ import annotations

from pathlib import Path

from chatgate.agents.base import AgentReply
from chatgate.config.masking import REDACTED
from chatgate.gateway.turn.masking import masked_reply
from chatgate.model.outbound import File, OutboundMessage, Text
from tests.fakes.llm import FakeLLM
from tests.harness import fake_model_config, memory, running

SECRET = "mcp-env-secret-77aa"


def test_text_blocks_and_tool_steps_are_masked_and_file_bytes_kept() -> None:
    data = f"raw {SECRET}".encode()
    reply = AgentReply(
        text=f"the key is {SECRET}",
        message=OutboundMessage((Text(f"key: {SECRET}"), File("a.bin", data=data))),
        meta={"tool_steps": [{"role": "tool", "content": f"env={SECRET}"}]},
    )
    out = masked_reply(reply, frozenset({SECRET}))
    assert out.text == f"the key is {REDACTED}"
    assert out.message is not None
    text, file = out.message.blocks
    assert isinstance(text, Text) and text.text == f"key: {REDACTED}"
    assert isinstance(file, File) and file.data == data  # bytes are the file, not text
    assert out.meta == {"tool_steps": [{"role": "tool", "content": f"env={REDACTED}"}]}


def test_a_reply_without_secrets_is_the_same_object() -> None:
    reply = AgentReply(text="hello", message=OutboundMessage((Text("hello"),)), meta={"a": [1]})
    assert masked_reply(reply, frozenset({SECRET})) is reply


async def test_a_model_answer_with_a_lone_surrogate_reaches_the_chat_and_the_transcript(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """A JSON "\\ud800" escape from a model decodes to a lone surrogate, which no store can
    write: the turn failed on the transcript write and the user got the failure reply."""
    config = fake_model_config(tmp_path, fake_llm, "  memory: {dm_policy: open}\n")
    fake_llm.script("bad \ud800 text")
    async with running(config) as gw:
        channel = memory(gw)
        first = await (await channel.inject("hi")).result
        second = await (await channel.inject("again")).result
    assert (first.reason, first.reply) == ("text", "bad \ufffd text")
    assert channel.texts() == ["bad \ufffd text", "echo: again"]
    said = [m["content"] for m in fake_llm.requests[1].messages if m["role"] == "assistant"]
    assert said == ["bad \ufffd text"]  # the transcript kept the answer
    assert second.reason == "text"
