"""Slack action ids and the value a block_actions element chose."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.channels.slack.ids import (
    ACTION_ID_MAX,
    button_id,
    choice_of,
    fit_value,
    select_action,
    select_id,
)
from chatgate.presentation.degrade import callback_hash


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"type": "button", "action_id": "b0", "value": "yes"}, "yes"),
        ({"type": "button", "action_id": "b1"}, None),  # a link button carries no value
        ({"type": "button", "action_id": "b1", "value": ""}, None),
        ({"type": "button", "value": 3}, None),
        ({"type": "static_select", "selected_option": {"value": "r", "text": {}}}, "r"),
        ({"type": "static_select", "selected_option": None}, None),
        ({"type": "static_select"}, None),
        ({"type": "overflow", "selected_option": {"value": "x"}}, None),
        ({"type": "datepicker", "selected_date": "2026-01-01"}, None),
        ({}, None),
    ],
)
def test_choice_of(action: dict[str, Any], expected: str | None) -> None:
    assert choice_of(action) == expected


@pytest.mark.parametrize(
    ("action_id", "own"),
    [("s0:colour", "colour"), ("s12:a:b", "a:b"), ("s3:", ""), ("b0", None), ("colour", None)],
)
def test_select_ids_keep_the_blocks_action_id(action_id: str, own: str | None) -> None:
    assert select_action(action_id) == own


def test_ids_are_short_and_capped() -> None:
    assert button_id(24) == "b24"
    assert select_id(1, "pick") == "s1:pick"
    assert len(select_id(99, "x" * 400)) == ACTION_ID_MAX


@pytest.mark.parametrize(
    ("value", "cap", "short", "expected"),
    [
        ("ok", 150, "ref:1", "ok"),
        ("x" * 150, 150, "ref:1", "x" * 150),
        ("x" * 151, 150, "ref:1", "ref:1"),
        ("é" * 151, 150, "ref:2", "ref:2"),  # Slack caps characters, not bytes
        ("y" * 200, 150, "z" * 151, callback_hash("y" * 200)),  # an overlong stand-in
        ("y" * 200, 150, "", callback_hash("y" * 200)),
    ],
)
def test_fit_value(value: str, cap: int, short: str, expected: str) -> None:
    assert fit_value(value, cap, lambda _: short) == expected
