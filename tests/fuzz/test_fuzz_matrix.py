"""Hostile Matrix events: any JSON another room member's client can put in an event's content
(wrong types, lone surrogates, nested relations, edits of edits) normalises to a message or a
coded Ignored; it never raises out of the sync loop."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from chatgate.channels.matrix.inbound import Ignored, Me, Room, normalise
from chatgate.model.messages import InboundMessage
from chatgate.policies.edits import EditMode
from tests.fuzz.conftest import fuzz_settings

ME = Me("@bot:example.org", "Bot")
ODD_TEXT = ["\ud800", "\udcff", "\x00", "é", "😀", "", " ", "@bot:example.org", "Bot: hi", "/x"]
KEYS = ["msgtype", "body", "formatted_body", "m.relates_to", "m.new_content", "m.mentions"]
KEYS += ["rel_type", "event_id", "m.in_reply_to", "key", "url", "file", "info", "filename"]
KEYS += ["user_ids", "mimetype", "size", "duration", "redacts", "org.matrix.msc3245.voice"]
VALUES = ["m.text", "m.emote", "m.image", "m.audio", "m.file", "m.replace", "m.thread"]
VALUES += ["m.annotation", "mxc://example.org/x", "$ev1", "👍"]

leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(ODD_TEXT + VALUES)
)
json_values = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": draw(
            st.sampled_from(["m.room.message", "m.reaction", "m.room.redaction", "m.x"])
            | st.text(max_size=5)
        ),
        "sender": draw(st.sampled_from(["@alice:example.org", "@bot:example.org"]) | leaf),
        "event_id": draw(st.sampled_from(["$e1", "$e2", ""]) | leaf),
        "origin_server_ts": draw(leaf),
        "content": draw(json_values),
    }
    for key in draw(st.lists(st.sampled_from(["redacts", "state_key", "unsigned"]), max_size=2)):
        event[key] = draw(json_values)
    return event


SURROGATE_EDIT = {
    "type": "m.room.message",
    "sender": "@alice:example.org",
    "event_id": "$e2",
    "content": {
        "msgtype": "m.text",
        "body": "* hi",
        "m.new_content": {"msgtype": "m.text", "body": "\ud800 hi"},
        "m.relates_to": {"rel_type": "m.replace", "event_id": "$e1"},
    },
}


@fuzz_settings("matrix")
@example(event=SURROGATE_EDIT, direct=True, threads=True, mode=EditMode.REPLACE)
@example(event=SURROGATE_EDIT, direct=False, threads=True, mode=EditMode.NEW_TURN)
@given(
    event=events(),
    direct=st.booleans(),
    threads=st.booleans(),
    mode=st.sampled_from(list(EditMode)),
)
def test_any_event_normalises_without_raising(
    event: dict[str, Any], direct: bool, threads: bool, mode: EditMode
) -> None:
    result = normalise(event, Room("!r:example.org", direct, threads), ME, "matrix", mode)
    assert isinstance(result, InboundMessage | Ignored)
    if isinstance(result, InboundMessage):
        assert isinstance(result.text, str) and isinstance(result.message_id, str)
        assert result.sender_id != ME.user_id
