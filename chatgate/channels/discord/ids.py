"""Discord identities shared by the inbound and outbound paths: component ids and message ids.

A component's custom_id is at most 100 characters and must be unique within its message, so a
button carries "b<index>:<value>" and a select "s<index>:<action id>" (the chosen option's
value arrives separately). Values longer than `VALUE_MAX_BYTES` were already swapped for a
stored "ref:<id>" by presentation. Discord message ids are global snowflakes; a button press
has no message of its own and is keyed "ix:<interaction id>".
"""

from __future__ import annotations

import re

CUSTOM_ID_MAX = 100
VALUE_MAX_BYTES = 96  # room for the "b24:" prefix
INTERACTION_PREFIX = "ix:"
_CUSTOM_ID = re.compile(r"^([bs])(\d{1,2}):(.*)$", re.DOTALL)


def button_id(index: int, value: str) -> str:
    return f"b{index}:{value}"[:CUSTOM_ID_MAX]


def select_id(index: int, action_id: str) -> str:
    return f"s{index}:{action_id}"[:CUSTOM_ID_MAX]


def choice_of(custom_id: str, values: list[str] | tuple[str, ...] = ()) -> str | None:
    """The value a component interaction chose: the button's value or the first selected
    option; a custom_id we did not write is passed through whole; None when nothing was chosen."""
    m = _CUSTOM_ID.match(custom_id)
    if m is None:
        return custom_id or None
    if m.group(1) == "s":
        return values[0] if values else None
    return m.group(3)


def interaction_key(interaction_id: int | str) -> str:
    return f"{INTERACTION_PREFIX}{interaction_id}"


def snowflake(value: str | None) -> int | None:
    """A Discord id from one of our strings, or None (e.g. an "ix:" key names no message)."""
    return int(value) if value is not None and value.isdigit() else None
