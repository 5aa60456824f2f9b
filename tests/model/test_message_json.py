"""`InboundMessage.to_json`: the journal's payload, the compact encoder's text of `to_dict`."""

from __future__ import annotations

import json
import math

import pytest

from chatgate.model.messages import Attachment, InboundMessage, Target

COMPACT = json.JSONEncoder(separators=(",", ":"))
PLAIN = InboundMessage("webhook", "webhook", "bench", "direct", "route:bench", "b:1", "hi")


@pytest.mark.parametrize(
    "msg",
    [
        PLAIN,
        InboundMessage(
            "tg", "telegram", "-100", "group", "42", "7", 'ä "quoted"\n\x00\u2028😀',
            thread_id="3", sender_name="Zoë", sender_is_bot=True, is_mention=True,
            is_command=True, reply_to="6", received_at=1796613762.8891234, choice="yes",
            reply_target=Target("slack", "C1", "t", "r"), route="hook",
            attachments=(Attachment("image", url="u", size=10, duration_s=1.5),),
            extra={"language": "de", "nested": {"a": [1, None, 2.5]}},
        ),
        InboundMessage("x", "x", "c", "direct", "s", "m", "t", received_at=math.inf),
        InboundMessage("x", "x", "c", "direct", "s", "m", "t", received_at=10**3),  # type: ignore[arg-type]
    ],
)  # fmt: skip
def test_the_payload_is_the_encoders_text(msg: InboundMessage) -> None:
    assert msg.to_json() == COMPACT.encode(msg.to_dict())
    assert InboundMessage.from_dict(json.loads(msg.to_json())) == msg
