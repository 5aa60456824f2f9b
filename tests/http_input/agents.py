"""A python agent for the surface tests: a reply carrying a file with a hostile name."""

from __future__ import annotations

from chatgate.agents.base import Turn
from chatgate.model.outbound import File, OutboundMessage, Text


def odd_name(turn: Turn) -> OutboundMessage:
    return OutboundMessage(
        (Text("here"), File("two\r\nlines\u2028.txt", "text/plain", data=b"file body"))
    )
