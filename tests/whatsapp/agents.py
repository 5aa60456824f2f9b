"""Python agents for the WhatsApp tests: menus of choices, and what the user picked."""

from __future__ import annotations

from typing import Any

from chatgate.agents.base import Turn


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
