"""Per-platform presentation limits."""

from __future__ import annotations

from typing import Any

import pytest

from chatgate.presentation.limits import PLAIN, PresentationLimits


def test_defaults() -> None:
    limits = PresentationLimits()
    assert (limits.max_text_length, limits.max_buttons, limits.max_options) == (4000, 10, 25)
    assert limits.supports_buttons and limits.supports_markdown and limits.supports_images
    assert not (limits.supports_select or limits.supports_tables or limits.supports_charts)
    assert limits.callback_data_max_bytes is None


def test_plain_is_text_only() -> None:
    assert PLAIN.max_text_length == 4000
    assert not (PLAIN.supports_markdown or PLAIN.supports_buttons or PLAIN.supports_images)
    assert PLAIN.callback_data_max_bytes is None


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
