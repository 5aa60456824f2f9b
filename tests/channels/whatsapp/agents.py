"""Python agents for the WhatsApp tests: menus of choices, and what the user picked."""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import Turn
from chatgate.model.outbound import File, OutboundMessage, Text

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64
OGG = b"OggS" + b"\0" * 60


def menu(turn: Turn) -> dict[str, Any] | str:
    """`pick N` offers N choices as buttons; anything else echoes what was chosen or said."""
    words = turn.text.split()
    if words[:1] == ["pick"]:
        count = int(words[1])
        buttons = [{"label": f"Option {i}", "value": f"opt-{i}"} for i in range(1, count + 1)]
        return {
            "blocks": [
                {"type": "text", "text": "Which **one**?"},
                {"type": "buttons", "buttons": buttons},
            ]
        }
    return f"you chose {turn.text}"


def files(turn: Turn) -> OutboundMessage:
    """`voice`: a voice note; `gif`: an image WhatsApp cannot show; else text, a captioned
    photo and a PDF."""
    if turn.text == "voice":
        return OutboundMessage((File("hello.ogg", "audio/ogg", "voice", "said aloud", data=OGG),))
    if turn.text == "gif":
        return OutboundMessage((File("anim.gif", "image/gif", "image", data=b"GIF89a" + PNG),))
    return OutboundMessage(
        (
            Text("Here is the chart."),
            File("chart.png", "image/png", "image", "Q3 revenue", data=PNG),
            File("report.pdf", "application/pdf", data=b"%PDF-1.4 fake"),
        )
    )
