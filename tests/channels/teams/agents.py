"""Python agents for the Teams tests."""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import Turn
from chatgate.model.outbound import File, OutboundMessage, Text


def menu(turn: Turn) -> dict[str, Any] | str:
    """`pick` offers two buttons; anything else echoes what was chosen or said."""
    if turn.text == "pick":
        buttons = [{"label": "Red", "value": "red"}, {"label": "Blue", "value": "blue"}]
        return {
            "blocks": [
                {"type": "text", "text": "Which **colour**?"},
                {"type": "buttons", "buttons": buttons},
            ]
        }
    return f"you chose {turn.text}"


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"\0" * 64


def files(turn: Turn) -> OutboundMessage:
    """Text and a captioned image."""
    return OutboundMessage(
        (Text("Here is the chart."), File("chart.png", "image/png", "image", "Q3", data=PNG))
    )
