"""Slack identities shared by the outbound and inbound paths: action ids and chosen values.

Every interactive element of one message needs a distinct action_id (at most 255 characters):
a button is "b<index>" and a select "s<index>:<the block's action id>". The chosen value comes
back in the `block_actions` payload itself (a button's `value`, a select's
`selected_option.value`), so ids carry no payload. Values longer than Slack accepts (2,000
characters for a button, 150 for an option) are swapped for `shorten(value)`: a "ref:<id>" the
adapter resolves on press, or a lossy hash.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from chatgate.presentation.degrade import callback_hash

ACTION_ID_MAX = 255
BUTTON_VALUE_MAX = 2000
OPTION_VALUE_MAX = 150
_SELECT_ID = re.compile(r"^s\d+:(.*)$", re.DOTALL)


def button_id(index: int) -> str:
    """The action_id of the message's `index`-th button."""
    return f"b{index}"


def select_id(index: int, action_id: str) -> str:
    """The action_id of the message's `index`-th select, keeping the block's own action id."""
    return f"s{index}:{action_id}"[:ACTION_ID_MAX]


def select_action(action_id: str) -> str | None:
    """The block's own action id from a select's action_id, or None for anything else."""
    m = _SELECT_ID.match(action_id)
    return m.group(1) if m else None


def fit_value(value: str, cap: int, shorten: Callable[[str], str]) -> str:
    """`value` if Slack accepts it, else its short stand-in (a hash if `shorten` overshoots)."""
    if len(value) <= cap:
        return value
    short = shorten(value)
    return short if 0 < len(short) <= cap else callback_hash(value)


def choice_of(action: Mapping[str, Any]) -> str | None:
    """The value one element of a `block_actions` payload's `actions` chose, or None."""
    kind = action.get("type")
    if kind == "button":
        value = action.get("value")
    elif kind == "static_select":
        option = action.get("selected_option")
        value = option.get("value") if isinstance(option, Mapping) else None
    else:
        return None
    return value if isinstance(value, str) and value else None
