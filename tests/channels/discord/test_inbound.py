"""Discord events → InboundMessage or a recorded reason to ignore (pure, table-driven)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chatgate.channels.discord.inbound import (
    BotIdentity,
    Ignored,
    MessageFacts,
    Place,
    PressFacts,
    normalize,
    normalize_press,
)
from chatgate.model.messages import Attachment, InboundMessage, Target
from chatgate.model.reasons import DropReason

BOT = BotIdentity(2000, "fakebot")
GUILD = Place(4000, guild_id=5000)
THREAD = Place(4100, guild_id=5000, parent_id=4000)
DM = Place(4500)
BASE = MessageFacts(id=6001, place=GUILD, author_id=3000, author_name="alice", content="hello")


def run(facts: MessageFacts, allowed: frozenset[str] = frozenset()) -> InboundMessage | Ignored:
    return normalize(facts, BOT, "discord", allowed)


MESSAGES: list[tuple[str, MessageFacts, dict[str, Any]]] = [
    (
        "dm",
        replace(BASE, place=DM),
        {"chat_kind": "direct", "chat_id": "4500", "reply_target": Target("discord", "4500")},
    ),
    (
        "guild-unmentioned",
        BASE,
        {
            "chat_kind": "group",
            "is_mention": False,
            "reply_target": Target("discord", "4000", None, "6001"),
        },
    ),
    (
        "guild-mention-stripped",
        replace(BASE, content="<@2000> what's up?", mention_ids=(2000,)),
        {"is_mention": True, "text": "what's up?"},
    ),
    (
        "nick-mention",
        replace(BASE, content="<@!2000>, hi", mention_ids=(2000,)),
        {"is_mention": True, "text": "hi"},
    ),
    ("bare-ping-stays", replace(BASE, content="<@2000>", mention_ids=(2000,)), {"text": "<@2000>"}),
    (
        "other-users-read-as-names",
        replace(
            BASE, content="ask <@3001> please", mention_ids=(3001,), mention_names={3001: "bob"}
        ),
        {"is_mention": False, "text": "ask @bob please"},
    ),
    (
        "reply-to-bot",
        replace(BASE, replied_author_id=2000, replied_id=5999),
        {"is_mention": True, "reply_to": "5999"},
    ),
    (
        "reply-to-other",
        replace(BASE, replied_author_id=3001, replied_id=5998),
        {"is_mention": False},
    ),
    (
        "thread-own-session",
        replace(BASE, place=THREAD),
        {
            "chat_id": "4000",
            "thread_id": "4100",
            "reply_target": Target("discord", "4000", "4100", "6001"),
        },
    ),
    (
        "command",
        replace(BASE, content="<@2000> /new", mention_ids=(2000,)),
        {"is_command": True, "text": "/new"},
    ),
    ("other-bot", replace(BASE, author_is_bot=True), {"sender_is_bot": True}),
    (
        "attachment-only",
        replace(
            BASE, content="", attachments=(Attachment("image", "https://cdn.test/a.png", "a.png"),)
        ),
        {"text": "[image]"},
    ),
    ("guild-in-allowlist", BASE, {"extra": {"guild_id": "5000"}}),
]


@pytest.mark.parametrize(("name", "facts", "expected"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_messages(name: str, facts: MessageFacts, expected: dict[str, Any]) -> None:
    result = run(facts, frozenset({"5000"}))
    assert isinstance(result, InboundMessage), result
    assert (result.channel, result.platform, result.message_id, result.key) == (
        "discord",
        "discord",
        str(facts.id),
        f"discord:{facts.id}",
    )
    for key, value in expected.items():
        assert getattr(result, key) == value, key


IGNORED: list[tuple[str, MessageFacts, DropReason]] = [
    ("self", replace(BASE, author_id=2000), DropReason.SELF_MESSAGE),
    ("system", replace(BASE, is_system=True), DropReason.SYSTEM_MESSAGE),
    ("empty-without-content-intent", replace(BASE, content=""), DropReason.EMPTY_INPUT),
    ("other-guild", replace(BASE, place=Place(4001, guild_id=5001)), DropReason.GUILD_NOT_ALLOWED),
]


@pytest.mark.parametrize(("name", "facts", "reason"), IGNORED, ids=[i[0] for i in IGNORED])
def test_ignored(name: str, facts: MessageFacts, reason: DropReason) -> None:
    result = run(facts, frozenset({"5000"}))
    assert isinstance(result, Ignored) and result.reason is reason
    assert result.chat_id == facts.place.chat_id


def test_dms_are_never_refused_by_the_guild_allowlist() -> None:
    assert isinstance(run(replace(BASE, place=DM), frozenset({"5000"})), InboundMessage)


PRESS = PressFacts(
    id=9001,
    kind=3,
    place=GUILD,
    user_id=3000,
    user_name="alice",
    custom_id="b1:yes",
    message_id=7001,
)
PRESSES: list[tuple[str, PressFacts, str | DropReason]] = [
    ("button", PRESS, "yes"),
    ("select", replace(PRESS, custom_id="s0:colour", values=("blue",)), "blue"),
    ("stored-ref", replace(PRESS, custom_id="b0:ref:abc"), "ref:abc"),
    ("foreign-custom-id", replace(PRESS, custom_id="legacy-button"), "legacy-button"),
    ("select-nothing", replace(PRESS, custom_id="s0:x"), DropReason.EMPTY_INPUT),
    ("slash-command", replace(PRESS, kind=2), DropReason.UNSUPPORTED_INTERACTION),
    ("other-guild", replace(PRESS, place=Place(4001, guild_id=5001)), DropReason.GUILD_NOT_ALLOWED),
]


@pytest.mark.parametrize(("name", "facts", "expected"), PRESSES, ids=[p[0] for p in PRESSES])
def test_presses(name: str, facts: PressFacts, expected: str | DropReason) -> None:
    result = normalize_press(facts, "discord", frozenset({"5000"}))
    if isinstance(expected, DropReason):
        assert isinstance(result, Ignored) and result.reason is expected
        return
    assert isinstance(result, InboundMessage)
    assert (result.text, result.choice, result.is_mention) == (expected, expected, True)
    assert result.message_id == "ix:9001" and result.reply_to == "7001"
    assert result.reply_target == Target("discord", "4000")


def test_a_press_in_a_thread_belongs_to_the_thread_session() -> None:
    result = normalize_press(replace(PRESS, place=THREAD), "discord", frozenset())
    assert isinstance(result, InboundMessage)
    assert (result.chat_id, result.thread_id) == ("4000", "4100")
