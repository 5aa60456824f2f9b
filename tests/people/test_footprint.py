"""The pure parts of a privacy request: who a person is, which sessions are theirs alone, what a
journal tombstone keeps, and the chat an address names."""

from __future__ import annotations

import pytest

from chatgate.model.messages import ChatKind, InboundMessage
from chatgate.people.parts import _chat_of
from chatgate.state.personal import (
    AuditRecord,
    Person,
    footprint_of,
    own_session,
    session_is_theirs,
    tombstone,
)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("telegram:42", Person("telegram", "42")),
        ("slack:U1:extra", Person("slack", "U1:extra")),  # ids may hold colons
        ("telegram:-100", Person("telegram", "-100")),
    ],
)
def test_a_person_is_channel_colon_user(given: str, expected: Person) -> None:
    assert Person.parse(given) == expected and expected.address == given


@pytest.mark.parametrize("given", ["telegram", ":42", "telegram:", "tele gram:42", ""])
def test_anything_else_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="CHANNEL:USER"):
        Person.parse(given)


def _msg(kind: ChatKind, sender: str = "u1", chat: str = "c1") -> InboundMessage:
    return InboundMessage("tg", "telegram", chat, kind, sender, "m1", "secret text",
                          sender_name="Ann")  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "session", "theirs"),
    [
        ("direct", "a:tg:c1", True),
        ("group", "a:tg:g1", False),
        ("group", "a:tg:g1:uu1", True),  # a per-user group session
        ("group", "a:tg:g1:uu12", False),  # another user's, whose id only starts alike
        ("direct", None, False),
    ],
)
def test_own_sessions(kind: ChatKind, session: str | None, theirs: bool) -> None:
    assert own_session(_msg(kind), session) is theirs


def test_the_footprint_gathers_keys_sessions_and_direct_chats() -> None:
    person = Person("tg", "u1")
    footprint = footprint_of(
        person,
        [
            ("tg:1", _msg("direct", chat="c1"), "a:tg:c1"),
            ("tg:2", _msg("group", chat="g1"), "a:tg:g1"),
            ("tg:3", _msg("group", chat="g1"), None),  # dropped before a session was chosen
        ],
    )
    assert footprint.keys == {"tg:1", "tg:2", "tg:3"}
    assert footprint.sessions == {"a:tg:c1", "a:tg:g1"}
    assert footprint.own_sessions == {"a:tg:c1"} and footprint.chats == {"tg:c1"}
    assert footprint.owns_chat("tg", "c1") and not footprint.owns_chat("tg", "g1")


def test_a_tombstone_keeps_the_key_and_nothing_personal() -> None:
    blank = tombstone(_msg("group"))
    assert blank.key == _msg("group").key and blank.chat_kind == "group"
    assert (blank.text, blank.sender_id, blank.sender_name, blank.chat_id) == ("", "", "", "")


@pytest.mark.parametrize(
    ("address", "chat"),
    [("tg:c1", "tg:c1"), ("tg:c1:thread", "tg:c1"), ("slack:D1", "slack:D1")],
)
def test_the_chat_of_an_address(address: str, chat: str) -> None:
    assert _chat_of(address) == chat


def test_an_audit_record_round_trips() -> None:
    record = AuditRecord(1.5, "erased", "tg:u1", "operator", {"journal": 2})
    assert AuditRecord.from_json(record.to_json()) == record


ANN = Person("tg", "42")
CHATS = frozenset({"tg:42", "tg:D9"})


@pytest.mark.parametrize(
    ("session", "theirs"),
    [
        ("a:tg:42", True),  # the direct chat named like the user
        ("a:tg:D9", True),  # a direct chat the journal or pairing named
        ("a:tg:42:t1", True),  # a thread of it
        ("a:tg:G1:u42", True),  # their per-user session in a group
        ("a:tg:G1", False),
        ("a:tg:420", False),
        ("a:tg:G1:u420", False),
        ("a:other:42", False),
        ("a:other:G1:u42", False),
    ],
)
def test_whole_sessions_of_theirs(session: str, theirs: bool) -> None:
    assert session_is_theirs(session, ANN, CHATS) is theirs
