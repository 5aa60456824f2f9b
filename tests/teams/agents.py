"""Python agents for the Teams tests."""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import Turn


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
