"""Tools only a gateway can offer, opt-in per agent: ``gateway.send_message`` to a named target.

The message goes through the normal delivery path (retries, dead targets, DLQ); the model picks
one of the names in the agent's ``tools.send_to``, never an address of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from chatgate.agents.tools.types import ToolOutcome, ToolSpec
from chatgate.config.tool_models import BUILTIN_SERVER

SEND_MESSAGE = f"{BUILTIN_SERVER}.send_message"
MAX_SEND_CHARS = 4000

# (address "channel:chat_id[:thread_id]", text) → the delivery status (``sent``, ``undelivered``…)
Sender = Callable[[str, str], Awaitable[str]]


def builtin_specs(send_to: Mapping[str, str]) -> list[ToolSpec]:
    """The built-in tools an agent's config enables."""
    if not send_to:
        return []
    parameters = {
        "type": "object",
        "properties": {
            "target": {"type": "string", "enum": sorted(send_to), "description": "who gets it"},
            "text": {"type": "string", "description": "the message", "maxLength": MAX_SEND_CHARS},
        },
        "required": ["target", "text"],
    }
    names = ", ".join(sorted(send_to))
    description = f"Send a message to one of the configured targets ({names})."
    return [ToolSpec(SEND_MESSAGE, description, parameters)]


async def call_builtin(
    name: str, arguments: Mapping[str, Any], send_to: Mapping[str, str], sender: Sender | None
) -> ToolOutcome:
    if name != SEND_MESSAGE or not send_to:
        return ToolOutcome(f"error: no built-in tool {name!r}", is_error=True)
    target, text = arguments.get("target"), arguments.get("text")
    if not isinstance(target, str) or target not in send_to:
        return ToolOutcome(f"error: target must be one of {sorted(send_to)}", is_error=True)
    if not isinstance(text, str) or not text.strip():
        return ToolOutcome("error: text must be a non-empty string", is_error=True)
    if sender is None:
        return ToolOutcome("error: sending is not available here", is_error=True)
    status = await sender(send_to[target], text[:MAX_SEND_CHARS])
    return ToolOutcome(f"{status}: message to {target}", is_error=status != "sent")


def builtin_names(specs: Sequence[ToolSpec]) -> list[str]:
    return [s.name for s in specs]
