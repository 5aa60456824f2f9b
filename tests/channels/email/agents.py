"""A python agent for the email tests: an answer with files."""

from __future__ import annotations

from chatgate.agents.base import Turn
from chatgate.model.outbound import File, OutboundMessage, Text

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64


def files(turn: Turn) -> OutboundMessage:
    return OutboundMessage(
        (
            Text(f"Here is the **report** for: {turn.text}"),
            File("chart.png", "image/png", "image", "Q3", data=PNG),
            File("report.pdf", "application/pdf", data=b"%PDF-1.4 fake"),
        )
    )
