"""Render an adapted OutboundMessage as Telegram HTML chunks with an inline keyboard on the last."""

from __future__ import annotations

from collections.abc import Callable

from chatgate.channels.base import Rendered
from chatgate.channels.words import ENGLISH, RenderWords
from chatgate.model.outbound import Button, Buttons, OutboundMessage
from chatgate.presentation.chunking import chunk_text, utf16_len
from chatgate.presentation.degrade import callback_hash
from chatgate.presentation.markdown import markdown_to_html, markdown_to_plain
from chatgate.presentation.render import block_to_markdown
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

MAX_TEXT = 4096  # counted in UTF-16 code units after entity parsing
ROW_CHARS = 30
ROW_BUTTONS = 3
BUTTONS_ONLY_TEXT = ENGLISH.choose  # the text of a message of buttons only
CALLBACK_MAX_BYTES = 64
Shorten = Callable[[str], str]


def render(
    message: OutboundMessage,
    limit: int = MAX_TEXT,
    shorten: Shorten = callback_hash,
    words: RenderWords = ENGLISH,
) -> list[Rendered]:
    """HTML chunks; `shorten` maps callback data over 64 bytes to a short (ideally resolvable) id."""
    parts: list[str] = []
    rows: list[list[InlineKeyboardButton]] = []
    for block in message.blocks:
        if isinstance(block, Buttons):
            rows.extend(_rows(block.buttons, shorten))
            continue
        text = block_to_markdown(block)
        if text:
            parts.append(text)
    markdown = "\n\n".join(parts) or (words.choose if rows else "")
    chunks = chunk_text(markdown, limit, length=utf16_len) or ([words.choose] if rows else [])
    keyboard = InlineKeyboardMarkup(rows) if rows else None
    out = []
    for index, chunk in enumerate(chunks):
        last = index == len(chunks) - 1
        native = {"plain": markdown_to_plain(chunk), "reply_markup": keyboard if last else None}
        out.append(Rendered(markdown_to_html(chunk), "HTML", native))
    return out


def _button(button: Button, shorten: Shorten) -> InlineKeyboardButton:
    if button.url:
        return InlineKeyboardButton(button.label, url=button.url)
    data = button.value or button.label
    if len(data.encode("utf-8", "surrogatepass")) > CALLBACK_MAX_BYTES:
        data = shorten(data)  # a label standing in for the value was never shortened upstream
    return InlineKeyboardButton(button.label, callback_data=data)


def _rows(buttons: tuple[Button, ...], shorten: Shorten) -> list[list[InlineKeyboardButton]]:
    rows: list[list[InlineKeyboardButton]] = []
    row: list[InlineKeyboardButton] = []
    width = 0
    for button in buttons:
        if row and (len(row) >= ROW_BUTTONS or width + len(button.label) > ROW_CHARS):
            rows.append(row)
            row, width = [], 0
        row.append(_button(button, shorten))
        width += len(button.label)
    if row:
        rows.append(row)
    return rows
