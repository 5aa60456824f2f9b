"""What each channel can render: text length, widgets, caps on buttons, options and tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

# Room for a fenced chunk ("```" + "\n" twice) plus some text; see chunking.chunk_text.
MIN_TEXT_LENGTH = 16
# Room for the lossy "h:" + 16 hex digits callback form.
MIN_CALLBACK_BYTES = 18


@dataclass(frozen=True)
class PresentationLimits:
    """Capabilities and caps of one channel; `adapt` degrades anything beyond them."""

    max_text_length: int = 4000
    supports_markdown: bool = True
    supports_buttons: bool = True
    supports_select: bool = False
    supports_tables: bool = False
    supports_charts: bool = False
    supports_images: bool = True
    max_buttons: int = 10
    max_options: int = 25
    callback_data_max_bytes: int | None = None
    max_table_rows: int = 50
    max_table_cols: int = 10

    def __post_init__(self) -> None:
        if self.max_text_length < MIN_TEXT_LENGTH:
            raise ValueError(f"max_text_length must be >= {MIN_TEXT_LENGTH}")
        for name in ("max_buttons", "max_options", "max_table_rows", "max_table_cols"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        cap = self.callback_data_max_bytes
        if cap is not None and cap < MIN_CALLBACK_BYTES:
            raise ValueError(f"callback_data_max_bytes must be >= {MIN_CALLBACK_BYTES} or None")


PLAIN = PresentationLimits(
    max_text_length=4000,
    supports_markdown=False,
    supports_buttons=False,
    supports_images=False,
)

PLATFORM_LIMITS: Mapping[str, PresentationLimits] = MappingProxyType(
    {
        # Bot API: 4096 UTF-16 units per message, callback_data 1-64 bytes, no select widget.
        "telegram": PresentationLimits(
            max_text_length=4096,
            max_buttons=20,
            callback_data_max_bytes=64,
        ),
        # Block Kit: 3000 chars per section text (40000 per message), 25 elements per actions
        # block, 100 options per static select, button/option values up to 2000 chars.
        "slack": PresentationLimits(
            max_text_length=3000,
            supports_select=True,
            max_buttons=25,
            max_options=100,
            callback_data_max_bytes=2000,
        ),
        # 2000 chars per message, 5 rows x 5 buttons, 25 select options, custom_id <= 100.
        "discord": PresentationLimits(
            max_text_length=2000,
            supports_select=True,
            max_buttons=25,
            max_options=25,
            callback_data_max_bytes=100,
        ),
        # Generic signed HTTP: one large markdown document, no interactive widgets.
        "webhook": PresentationLimits(
            max_text_length=1_000_000,
            supports_buttons=False,
            max_table_rows=1000,
            max_table_cols=50,
        ),
        "plain": PLAIN,
    }
)


def limits_for(platform: str) -> PresentationLimits:
    """Limits of a platform by name (case-insensitive); unknown platforms get "plain"."""
    return PLATFORM_LIMITS.get(platform.strip().lower(), PLAIN)
