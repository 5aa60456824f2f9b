"""The webhook normaliser, one table row per kind of event Meta posts."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.channels.whatsapp.inbound import Ignored, Receipt, events, normalize, receipt
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.reasons import DropReason
from tests.fakes.whatsapp import DISPLAY_NUMBER, PHONE_NUMBER_ID, envelope

USER = "15551230001"
NAMES = {USER: "Ada"}


def msg(kind: str, **content: Any) -> dict[str, Any]:
    return {"from": USER, "id": "wamid.A1", "timestamp": "1700000000", "type": kind, **content}


TEXTS = [
    ("text", msg("text", text={"body": "hello"}), "hello", None),
    (
        "button reply",
        msg(
            "interactive",
            interactive={"type": "button_reply", "button_reply": {"id": "yes", "title": "Yes"}},
        ),
        "yes",
        "yes",
    ),
    (
        "list reply",
        msg(
            "interactive",
            interactive={"type": "list_reply", "list_reply": {"id": "r7", "title": "Row"}},
        ),
        "r7",
        "r7",
    ),
    (
        "template quick reply",
        msg("button", button={"payload": "stop", "text": "Stop"}),
        "stop",
        "stop",
    ),
    (
        "location",
        msg("location", location={"latitude": 52.52, "longitude": 13.405, "name": "Cafe"}),
        "Shared location: Cafe, 52.52, 13.405 (https://maps.google.com/?q=52.52,13.405)",
        None,
    ),
    (
        "contacts",
        msg(
            "contacts",
            contacts=[
                {"name": {"formatted_name": "Bob"}, "phones": [{"phone": "+1 555 0100"}]},
                {"name": {}, "emails": [{"email": "x@y.z"}]},
            ],
        ),
        "Shared contact: Bob (+1 555 0100)\nShared contact: unnamed contact (x@y.z)",
        None,
    ),
    (
        "image with caption",
        msg("image", image={"id": "MEDIA1", "mime_type": "image/jpeg", "caption": "my cat"}),
        "my cat",
        None,
    ),
    (
        "voice note",
        msg("audio", audio={"id": "MEDIA2", "mime_type": "audio/ogg", "voice": True}),
        "[voice]",
        None,
    ),
]


@pytest.mark.parametrize(("name", "message", "text", "choice"), TEXTS, ids=[t[0] for t in TEXTS])
def test_messages(name: str, message: dict[str, Any], text: str, choice: str | None) -> None:
    got = normalize(message, "wa", NAMES)
    assert isinstance(got, InboundMessage)
    assert (got.text, got.choice) == (text, choice)
    assert (got.chat_id, got.sender_id, got.chat_kind, got.sender_name) == (
        USER,
        USER,
        "direct",
        "Ada",
    )
    assert got.message_id == "wamid.A1" and got.received_at == 1700000000.0
    assert got.reply_target == Target("wa", USER, None, "wamid.A1")


def test_a_voice_note_is_a_voice_attachment_and_other_audio_is_audio() -> None:
    voice = msg("audio", audio={"id": "M2", "mime_type": "audio/ogg", "voice": True})
    song = msg("audio", audio={"id": "M3", "mime_type": "audio/mpeg"})
    kinds = [normalize(m, "wa", NAMES) for m in (voice, song)]
    assert [[a.kind for a in k.attachments] for k in kinds if isinstance(k, InboundMessage)] == [
        ["voice"],
        ["audio"],
    ]


def test_a_reply_names_the_message_it_answers() -> None:
    got = normalize(msg("text", text={"body": "this"}, context={"id": "wamid.OUT3"}), "wa", NAMES)
    assert isinstance(got, InboundMessage) and got.reply_to == "wamid.OUT3"


def test_media_keeps_its_graph_id_for_a_later_fetch() -> None:
    message = msg(
        "document", document={"id": "MEDIA9", "filename": "a.pdf", "mime_type": "application/pdf"}
    )
    got = normalize(message, "wa", NAMES)
    assert isinstance(got, InboundMessage)
    assert got.extra["media"] == [
        {"kind": "document", "id": "MEDIA9", "filename": "a.pdf", "mime_type": "application/pdf"}
    ]
    assert [a.kind for a in got.attachments] == ["document"] and got.attachments[0].name == "a.pdf"
    assert got.attachments[0].handle == "MEDIA9"
    assert got.attachments[0].mime == "application/pdf"


IGNORED = [
    (
        "reaction-removed",  # an added reaction goes to the adapter: see test_reactions.py
        msg("reaction", reaction={"message_id": "wamid.OUT1", "emoji": ""}),
        DropReason.REACTION_IGNORED,
    ),
    ("system", msg("system", system={"body": "changed number"}), DropReason.SYSTEM_MESSAGE),
    (
        "unsupported",
        msg("unsupported", errors=[{"code": 131051}]),
        DropReason.UNSUPPORTED_INTERACTION,
    ),
    (
        "flow reply",
        msg("interactive", interactive={"type": "nfm_reply"}),
        DropReason.UNSUPPORTED_INTERACTION,
    ),
    ("empty text", msg("text", text={"body": "  "}), DropReason.EMPTY_INPUT),
    ("no id", {"from": USER, "type": "text"}, DropReason.MALFORMED_UPDATE),
    (
        "own number",
        {**msg("text", text={"body": "x"}), "from": DISPLAY_NUMBER},
        DropReason.SELF_MESSAGE,
    ),
    (
        "bad location",
        msg("location", location={"latitude": "nan", "longitude": 1}),
        DropReason.MALFORMED_UPDATE,
    ),
]


@pytest.mark.parametrize(("name", "message", "reason"), IGNORED, ids=[t[0] for t in IGNORED])
def test_ignored(name: str, message: dict[str, Any], reason: DropReason) -> None:
    [got] = list(events(envelope({"messages": [message]}), "wa", PHONE_NUMBER_ID))
    assert isinstance(got, Ignored) and got.reason is reason


def test_posts_for_another_number_or_other_fields_are_ignored() -> None:
    other = envelope({"messages": [msg("text", text={"body": "x"})]}, phone_number_id="999")
    assert list(events(other, "wa", PHONE_NUMBER_ID)) == [Ignored(DropReason.OTHER_RECIPIENT)]
    account = {
        "object": "whatsapp_business_account",
        "entry": [{"changes": [{"field": "account_update"}]}],
    }
    assert list(events(account, "wa", PHONE_NUMBER_ID)) == [Ignored(DropReason.SYSTEM_MESSAGE)]
    assert list(events({"object": "page"}, "wa", None)) == [Ignored(DropReason.MALFORMED_UPDATE)]
    assert list(events([1, 2], "wa", None)) == [Ignored(DropReason.MALFORMED_UPDATE)]


def test_status_callbacks_become_receipts() -> None:
    failed = {
        "id": "wamid.OUT1",
        "status": "failed",
        "timestamp": "1700000100",
        "recipient_id": USER,
        "errors": [
            {
                "code": 131047,
                "title": "Re-engagement message",
                "error_data": {"details": "over 24h"},
            }
        ],
    }
    assert receipt(failed) == Receipt(
        "wamid.OUT1", "failed", 1700000100.0, USER, 131047, "Re-engagement message — over 24h"
    )
    assert receipt({"id": "wamid.OUT1", "status": "deleted"}) == Ignored(
        DropReason.MALFORMED_UPDATE
    )
    post = envelope({"statuses": [{"id": "wamid.OUT2", "status": "read", "recipient_id": USER}]})
    assert list(events(post, "wa", PHONE_NUMBER_ID)) == [Receipt("wamid.OUT2", "read", 0.0, USER)]
