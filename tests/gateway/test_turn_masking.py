"""Configured secrets masked out of an agent's answer before the turn stores or sends it."""

from __future__ import annotations

from chatgate.agents.base import AgentReply
from chatgate.config.masking import REDACTED
from chatgate.gateway.turn.masking import masked_reply
from chatgate.model.outbound import File, OutboundMessage, Text

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
