"""Slack event → InboundMessage rules, table-driven over plain event dicts."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.channels.slack.inbound import (
    BotIdentity,
    Ignored,
    clean_text,
    message_key,
    normalize,
    normalize_action,
    normalize_command,
    ts_of,
)
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.reasons import DropReason

BOT = BotIdentity("UBOT", "BBOT", "T1", "chatgate")


def event(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "type": "message",
        "channel": "C1",
        "channel_type": "channel",
        "user": "U42",
        "text": "hi",
        "ts": "100.000001",
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"user": "UBOT"}, DropReason.SELF_MESSAGE),
        ({"user": "", "bot_id": "BBOT", "subtype": "bot_message"}, DropReason.SELF_MESSAGE),
        ({"subtype": "message_changed"}, DropReason.EDITED_IGNORED),
        ({"subtype": "message_deleted"}, DropReason.EDITED_IGNORED),
        ({"subtype": "channel_join"}, DropReason.SYSTEM_MESSAGE),
        ({"subtype": "channel_topic"}, DropReason.SYSTEM_MESSAGE),
        ({"text": "  "}, DropReason.EMPTY_INPUT),
        ({"text": "<@UBOT>"}, None),  # a bare ping stays a ping
        ({"ts": None}, DropReason.MALFORMED_UPDATE),
        ({"channel": ""}, DropReason.MALFORMED_UPDATE),
    ],
)
def test_what_is_ignored_and_why(fields: dict[str, Any], reason: DropReason | None) -> None:
    result = normalize(event(**fields), BOT, "slack")
    if reason is None:
        assert isinstance(result, InboundMessage)
    else:
        assert result == Ignored(reason, fields.get("channel", "C1") or "")


@pytest.mark.parametrize(
    ("fields", "kind", "thread", "mention"),
    [
        ({"channel": "D1", "channel_type": "im"}, "direct", None, False),
        ({"channel": "D1", "channel_type": "im", "thread_ts": "90.0"}, "direct", "90.0", False),
        ({}, "group", "100.000001", False),  # a top-level channel message starts its thread
        ({"text": "<@UBOT> hello"}, "group", "100.000001", True),
        ({"type": "app_mention", "text": "<@UBOT> hello"}, "group", "100.000001", True),
        ({"thread_ts": "90.0"}, "group", "90.0", False),
        ({"thread_ts": "90.0", "parent_user_id": "UBOT"}, "group", "90.0", True),
        ({"channel_type": "mpim", "channel": "G1"}, "group", "100.000001", False),
    ],
)
def test_sessions_threads_and_mentions(
    fields: dict[str, Any], kind: str, thread: str | None, mention: bool
) -> None:
    msg = normalize(event(**fields), BOT, "slack")
    assert isinstance(msg, InboundMessage)
    assert (msg.chat_kind, msg.thread_id, msg.is_mention) == (kind, thread, mention)
    assert msg.reply_target == Target("slack", msg.chat_id, thread)
    assert msg.message_id == message_key(msg.chat_id, "100.000001")


def test_a_reply_in_a_thread_the_bot_answered_addresses_the_bot() -> None:
    msg = normalize(event(thread_ts="90.0"), BOT, "slack", engaged={"C1:90.0"})
    assert isinstance(msg, InboundMessage) and msg.is_mention


def test_other_bots_are_marked_for_the_loop_guard() -> None:
    msg = normalize(event(user="", bot_id="BOTHER", subtype="bot_message"), BOT, "slack")
    assert isinstance(msg, InboundMessage)
    assert msg.sender_is_bot and msg.sender_id == "BOTHER"


def test_files_become_attachments() -> None:
    files = [
        {"mimetype": "image/png", "url_private": "https://f/x.png", "name": "x.png", "size": 9},
        {"mimetype": "application/zip", "url_private": "https://f/y.zip", "name": "y.zip"},
    ]
    msg = normalize(event(text="", files=files), BOT, "slack")
    assert isinstance(msg, InboundMessage)
    assert msg.text == "[image]"
    first, second = msg.attachments
    assert (first.kind, first.handle, first.mime, first.size) == (
        "image",
        "https://f/x.png",
        "image/png",
        9,
    )
    assert first.url is None  # url_private only opens with the bot token: a handle, not a link
    assert (second.kind, second.name) == ("document", "y.zip")


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<@UBOT> hello", "hello"),
        ("<@UBOT>, hello", "hello"),
        ("ask <@U7|ann> about it", "ask @ann about it"),
        ("ask <@U7> about it", "ask @U7 about it"),
        ("a &lt;b&gt; &amp; c", "a <b> & c"),
        ("see <https://x.io|the docs>", "see the docs (https://x.io)"),
        ("see <https://x.io>", "see https://x.io"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw, "UBOT") == clean


def test_a_button_press_is_a_choice_in_the_conversation_of_its_message() -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": "U42", "name": "ann"},
        "channel": {"id": "C1"},
        "container": {"type": "message", "message_ts": "200.0", "channel_id": "C1"},
        "message": {"ts": "200.0", "thread_ts": "100.0"},
        "actions": [{"type": "button", "action_id": "b0", "value": "yes", "action_ts": "201.5"}],
    }
    msg = normalize_action(payload, "yes", "slack")
    assert isinstance(msg, InboundMessage)
    assert (msg.text, msg.choice, msg.thread_id, msg.is_mention) == ("yes", "yes", "100.0", True)
    assert msg.message_id == "C1:act201.5" and ts_of(msg.message_id) is None
    assert msg.reply_to == "C1:200.0" and ts_of(msg.reply_to) == "200.0"
    assert normalize_action(payload, None, "slack") == Ignored(DropReason.EMPTY_INPUT, "C1")
    assert normalize_action({**payload, "user": {}}, "yes", "slack") == Ignored(
        DropReason.UNSUPPORTED_INTERACTION, "C1"
    )


@pytest.mark.parametrize(
    ("command", "text", "line", "kind"),
    [
        ("/chatgate", "new", "/new", "direct"),
        ("/chatgate", "  stop  ", "/stop", "direct"),
        ("/chatgate", "", "/help", "direct"),
        ("/new", "", "/new", "direct"),
        ("/ask", "what is up", "/ask what is up", "direct"),
    ],
)
def test_slash_commands_read_as_gateway_commands(
    command: str, text: str, line: str, kind: str
) -> None:
    payload = {"command": command, "text": text, "channel_id": "D1", "user_id": "U42"}
    payload["trigger_id"] = "t1"
    msg = normalize_command(payload, "slack", "/chatgate")
    assert isinstance(msg, InboundMessage)
    assert (msg.text, msg.chat_kind, msg.is_command, msg.is_mention) == (line, kind, True, True)
    assert msg.message_id == "D1:cmdt1" and ts_of(msg.message_id) is None
    assert normalize_command({**payload, "user_id": ""}, "slack", "/chatgate") == Ignored(
        DropReason.MALFORMED_UPDATE, "D1"
    )
