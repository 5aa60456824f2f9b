"""Per-platform presentation limits."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.presentation.limits import PLATFORM_LIMITS, PresentationLimits, limits_for


def test_defaults() -> None:
    limits = PresentationLimits()
    assert (limits.max_text_length, limits.max_buttons, limits.max_options) == (4000, 10, 25)
    assert limits.supports_buttons and limits.supports_markdown and limits.supports_images
    assert not (limits.supports_select or limits.supports_tables or limits.supports_charts)
    assert limits.callback_data_max_bytes is None


@pytest.mark.parametrize(
    ("platform", "length", "buttons", "select", "markdown", "callback"),
    [
        ("telegram", 4096, True, False, True, 64),
        ("slack", 3000, True, True, True, 2000),
        ("discord", 2000, True, True, True, 100),
        ("webhook", 1_000_000, False, False, True, None),
        ("plain", 4000, False, False, False, None),
    ],
)
def test_platform_table(
    platform: str, length: int, buttons: bool, select: bool, markdown: bool, callback: int | None
) -> None:
    limits = PLATFORM_LIMITS[platform]
    assert limits.max_text_length == length
    assert limits.supports_buttons is buttons
    assert limits.supports_select is select
    assert limits.supports_markdown is markdown
    assert limits.callback_data_max_bytes == callback


def test_discord_allows_25_buttons() -> None:
    assert PLATFORM_LIMITS["discord"].max_buttons == 25


@pytest.mark.parametrize(
    ("name", "expected"),
    [("telegram", "telegram"), (" Slack ", "slack"), ("DISCORD", "discord"), ("irc", "plain")],
)
def test_limits_for(name: str, expected: str) -> None:
    assert limits_for(name) is PLATFORM_LIMITS[expected]


def test_platform_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        PLATFORM_LIMITS["telegram"] = PresentationLimits()  # type: ignore[index]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_text_length": 15},
        {"max_buttons": 0},
        {"max_options": 0},
        {"max_table_rows": 0},
        {"max_table_cols": 0},
        {"callback_data_max_bytes": 17},
    ],
)
def test_rejects_unusable_limits(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        PresentationLimits(**kwargs)
