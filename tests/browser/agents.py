"""A python agent with buttons, for the browser tests and the screenshots."""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import Turn


def menu(turn: Turn) -> Any:
    """Offer colours as buttons; a pressed button comes back as "color:<name>"."""
    if turn.text.startswith("color:"):
        return f"You picked **{turn.text.removeprefix('color:')}**."
    return {
        "blocks": [
            {"type": "text", "text": "Pick a colour:"},
            {
                "type": "buttons",
                "buttons": [
                    {"label": "Red", "value": "color:red"},
                    {"label": "Blue", "value": "color:blue", "style": "primary"},
                ],
            },
        ]
    }
