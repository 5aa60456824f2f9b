"""`InboundMessage.with_extra` is `dataclasses.replace` with the extra merged, for every field
(a field added to the message and not to the hand-written copy fails here)."""

from __future__ import annotations

from dataclasses import fields, replace

from chatgate.model.messages import Attachment, InboundMessage, Target


def _every_field_set() -> InboundMessage:
    return InboundMessage(
        channel="tg",
        platform="telegram",
        chat_id="c1",
        chat_kind="group",
        sender_id="u1",
        message_id="m1",
        text="hello",
        thread_id="t1",
        sender_name="Ann",
        sender_is_bot=True,
        is_mention=True,
        is_command=True,
        reply_to="m0",
        attachments=(Attachment("photo", handle="h"),),
        received_at=12.5,
        choice="yes",
        reply_target=Target("tg", "c2", None, None),
        route="hook",
        extra={"language": "de"},
    )


def test_with_extra_is_replace_with_the_extra_merged() -> None:
    msg = _every_field_set()
    defaults = InboundMessage("", "", "", "direct", "", "", "")
    assert all(getattr(msg, f.name) != getattr(defaults, f.name) for f in fields(msg))
    more = {"trace_id": "ab" * 16}
    copied = msg.with_extra(more)
    assert copied == replace(msg, extra={**msg.extra, **more})
    assert msg.extra == {"language": "de"}  # the original is left as it was
