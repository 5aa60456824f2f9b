"""Matrix events normalised (table-driven), answers rendered, config checked: no server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from chatgate.channels.matrix.adapter import relates
from chatgate.channels.matrix.config import MatrixChannelConfig
from chatgate.channels.matrix.inbound import REACTION, Ignored, Me, Room, normalise
from chatgate.channels.matrix.intake import accepts_invite
from chatgate.channels.matrix.render import event_size, render
from chatgate.config.errors import ConfigError
from chatgate.model.messages import InboundMessage, Target
from chatgate.model.outbound import OutboundMessage, Text
from chatgate.model.reasons import DropReason
from chatgate.policies.edits import EDIT_OF, RETRACTS, EditMode
from tests.harness import load, write_config

ME = Me("@bot:hs.test", "Helper")
DM = Room("!dm:hs.test", direct=True)
GROUP = Room("!team:hs.test", direct=False, threads=True)
FLAT = Room("!flat:hs.test", direct=False, threads=False)


def event(content: dict[str, Any], kind: str = "m.room.message", **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "event_id": "$e1",
        "sender": "@alice:hs.test",
        "origin_server_ts": 1_700_000_000_000,
        "content": content,
        **extra,
    }


def text(body: str, **more: Any) -> dict[str, Any]:
    return {"msgtype": "m.text", "body": body, **more}


THREAD = {"rel_type": "m.thread", "event_id": "$root"}

CASES: list[tuple[str, dict[str, Any], Room, dict[str, Any]]] = [
    ("dm text", event(text("hi")), DM, {"text": "hi", "chat_kind": "direct", "is_mention": True}),
    ("group plain", event(text("hi all")), GROUP, {"is_mention": False, "thread_id": None}),
    (
        "intentional mention",
        event(text("@bot:hs.test: status?", **{"m.mentions": {"user_ids": ["@bot:hs.test"]}})),
        GROUP,
        {"is_mention": True, "text": "status?"},
    ),
    ("display name", event(text("Helper, ping")), GROUP, {"is_mention": True, "text": "ping"}),
    (
        "pill",
        event(
            text("Helper: go", formatted_body='<a href="https://matrix.to/#/@bot:hs.test">H</a>')
        ),
        GROUP,
        {"is_mention": True},
    ),
    ("thread", event(text("in t", **{"m.relates_to": THREAD})), GROUP, {"thread_id": "$root"}),
    ("thread off", event(text("in t", **{"m.relates_to": THREAD})), FLAT, {"thread_id": None}),
    (
        "reply",
        event(
            text(
                "> <@bob:hs.test> earlier\n\nmy reply",
                **{"m.relates_to": {"m.in_reply_to": {"event_id": "$old"}}},
            )
        ),
        DM,
        {"reply_to": "$old", "text": "my reply"},
    ),
    ("emote", event({"msgtype": "m.emote", "body": "waves"}), DM, {"text": "* waves"}),
    ("command", event(text("/new")), DM, {"is_command": True}),
]


@pytest.mark.parametrize(("name", "raw", "room", "expected"), CASES, ids=[c[0] for c in CASES])
def test_messages(name: str, raw: dict[str, Any], room: Room, expected: dict[str, Any]) -> None:
    msg = normalise(raw, room, ME, "matrix", EditMode.IGNORE)
    assert isinstance(msg, InboundMessage), msg
    for key, value in expected.items():
        assert getattr(msg, key) == value, key
    assert msg.key == "matrix:$e1"
    assert msg.reply_target == Target("matrix", room.room_id, msg.thread_id, "$e1")


IGNORED = [
    ("own", event(text("x"), sender="@bot:hs.test"), DropReason.SELF_MESSAGE),
    ("state", event({}, kind="m.room.member", state_key="@x:hs.test"), DropReason.SYSTEM_MESSAGE),
    ("location", event({"msgtype": "m.location", "body": "x"}), DropReason.EMPTY_INPUT),
    ("unknown", event({}, kind="m.call.invite"), DropReason.SYSTEM_MESSAGE),
    (
        "edit ignored",
        event(
            {
                "msgtype": "m.text",
                "body": "* b",
                "m.new_content": text("b"),
                "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"},
            }
        ),
        DropReason.EDITED_IGNORED,
    ),
    ("reaction removed", event({}, kind="m.reaction"), DropReason.REACTION_IGNORED),
    ("bad redaction", event({}, kind="m.room.redaction"), DropReason.MALFORMED_UPDATE),
]


@pytest.mark.parametrize(("name", "raw", "reason"), IGNORED, ids=[c[0] for c in IGNORED])
def test_ignored(name: str, raw: dict[str, Any], reason: DropReason) -> None:
    result = normalise(raw, DM, ME, "matrix", EditMode.IGNORE)
    assert isinstance(result, Ignored) and result.reason is reason


def test_an_edit_names_its_original_and_a_redaction_what_it_withdraws() -> None:
    edit = event(
        {
            "msgtype": "m.text",
            "body": "* fixed",
            "m.new_content": text("fixed"),
            "m.relates_to": {"rel_type": "m.replace", "event_id": "$a"},
        }
    )
    msg = normalise(edit, DM, ME, "matrix", EditMode.NEW_TURN)
    assert isinstance(msg, InboundMessage)
    assert msg.text == "fixed" and msg.extra[EDIT_OF] == "matrix:$a"
    assert msg.message_id.startswith("$a:edit:") and msg.reply_target is not None
    assert msg.reply_target.reply_to == "$a"
    gone = normalise(
        event({}, kind="m.room.redaction", redacts="$a"), DM, ME, "matrix", EditMode.IGNORE
    )
    assert isinstance(gone, InboundMessage) and gone.extra[RETRACTS] == "matrix:$a"
    relation = {"rel_type": "m.annotation", "event_id": "$ans", "key": "👍"}
    liked = normalise(
        event({"m.relates_to": relation}, kind="m.reaction"), DM, ME, "matrix", EditMode.IGNORE
    )
    assert isinstance(liked, InboundMessage) and liked.extra[REACTION] == "👍"
    assert liked.reply_to == "$ans"


def test_an_encrypted_file_keeps_its_key_out_of_the_handle() -> None:
    content = {
        "msgtype": "m.image",
        "body": "cat.png",
        "file": {"url": "mxc://hs.test/abc", "key": {"k": "SECRETKEY"}, "iv": "x", "hashes": {}},
        "info": {"mimetype": "image/png", "size": 10},
    }
    msg = normalise(event(content), DM, ME, "matrix", EditMode.IGNORE)
    assert isinstance(msg, InboundMessage)
    [attachment] = msg.attachments
    assert attachment.handle == "event:!dm:hs.test:$e1"
    assert "SECRETKEY" not in json.dumps(msg.to_dict())
    plain = normalise(
        event({**content, "url": "mxc://hs.test/abc", "file": None} | {}),
        DM,
        ME,
        "matrix",
        EditMode.IGNORE,
    )
    assert isinstance(plain, InboundMessage)


@pytest.mark.parametrize(
    ("auto_join", "inviter", "direct", "dm_policy", "accepted"),
    [
        ("allowed", "@alice:hs.test", False, "pairing", True),
        ("allowed", "@mallory:hs.test", False, "pairing", False),
        ("allowed", "@mallory:hs.test", True, "open", True),
        ("all", "@mallory:hs.test", False, "pairing", True),
        ("all", "@blocked:hs.test", True, "open", False),
        ("none", "@alice:hs.test", True, "open", False),
    ],
)
def test_invites(
    auto_join: str, inviter: str, direct: bool, dm_policy: str, accepted: bool
) -> None:
    config = MatrixChannelConfig(
        auto_join=auto_join,  # type: ignore[arg-type]
        dm_policy=dm_policy,  # type: ignore[arg-type]
        allowed_users=["@alice:hs.test"],
        blocked_users=["@blocked:hs.test"],
    )
    assert accepts_invite(config, inviter, direct) is accepted


def test_a_long_answer_splits_into_events_under_the_limit_with_html() -> None:
    prose = "\n\n".join(f"Paragraph {i} with **bold** <tags> & stuff. " * 20 for i in range(80))
    chunks = render(OutboundMessage((Text(prose),)), 32_000)
    assert len(chunks) > 1
    for chunk in chunks:
        content = chunk.native["content"]
        assert event_size(content) < 32_000
        assert content["format"] == "org.matrix.custom.html"
        assert (
            "<b>bold</b>" in content["formatted_body"]
            and "&lt;tags&gt;" in content["formatted_body"]
        )
        assert "**" not in content["body"]


def test_answers_relate_to_what_they_answer_and_stay_in_the_thread() -> None:
    assert relates(Target("matrix", "!r", None, "$q")) == {"m.in_reply_to": {"event_id": "$q"}}
    assert relates(Target("matrix", "!r", "$root", "$q")) == {
        "m.in_reply_to": {"event_id": "$q"},
        "rel_type": "m.thread",
        "event_id": "$root",
        "is_falling_back": False,
    }


@pytest.mark.parametrize(
    ("section", "path"),
    [
        ({"user_id": "bot"}, "user_id"),
        ({"allowed_users": ["alice"]}, "allowed_users"),
        ({"auto_join": "sometimes"}, "auto_join"),
        ({"homeserver": "matrix.org"}, "homeserver"),
        ({"password": "pw"}, ""),
    ],
)
def test_invalid_config_names_the_key(section: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as info:
        MatrixChannelConfig(**section)
    assert path in str(info.value)


def test_a_config_error_names_key_and_line_and_never_a_secret(tmp_path: Path) -> None:
    body = """
agents:
  default: {backend: echo}
channels:
  matrix:
    homeserver: https://hs.test
    password: hunter2-secret
"""
    for extra, key in (("    group_policy: mentions\n", "group_policy"), ("", "password")):
        path = write_config(tmp_path, body + extra)
        with pytest.raises(ConfigError) as info:
            load(path)
        text = info.value.render()
        line = next(
            n for n, t in enumerate(path.read_text().splitlines(), 1) if t.strip().startswith(key)
        )
        assert ("channels.matrix" in text and f"gateway.yaml:{line}" in text) or extra == "", text
        assert "hunter2-secret" not in text
    assert "user_id is required" in text
