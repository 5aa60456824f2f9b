"""What a channel can render: text length, widgets, caps on buttons, options and tables.

Each channel package declares its own limits in its descriptor; PLAIN is the text-only fallback.
"""

from __future__ import annotations

from dataclasses import dataclass

from chatgate.presentation.file_rules import FileLimits

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
    max_label_chars: int | None = None  # button and option labels (longer ones are clipped)
    buttons_overflow_to_select: bool = False  # more buttons than max_buttons: offer a select
    link_buttons: bool = True  # False: link buttons become text lines with their URL
    max_widgets: int | None = None  # button rows and selects per message; later ones as text
    files: FileLimits | None = None  # None: the channel cannot receive files

    def __post_init__(self) -> None:
        if self.max_text_length < MIN_TEXT_LENGTH:
            raise ValueError(f"max_text_length must be >= {MIN_TEXT_LENGTH}")
        for name in ("max_buttons", "max_options", "max_table_rows", "max_table_cols"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        for name in ("max_label_chars", "max_widgets"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 or None")
        cap = self.callback_data_max_bytes
        if cap is not None and cap < MIN_CALLBACK_BYTES:
            raise ValueError(f"callback_data_max_bytes must be >= {MIN_CALLBACK_BYTES} or None")


PLAIN = PresentationLimits(
    max_text_length=4000,
    supports_markdown=False,
    supports_buttons=False,
    supports_images=False,
)
