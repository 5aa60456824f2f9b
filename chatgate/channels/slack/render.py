"""Render an adapted OutboundMessage as Slack messages: mrkdwn text chunks or Block Kit blocks.

Pure: the result is plain dicts (no slack_sdk objects) for chat.postMessage's `text` and
`blocks`. A reply of text alone is sent as mrkdwn text chunks; one with buttons, selects,
images or tables becomes Block Kit: sections of chunked mrkdwn, tables as monospace grids,
components in actions blocks on the last message, at most 50 blocks per message. Markdown is
converted before it is chunked because escapes count towards the limits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatgate.channels.base import Rendered
from chatgate.channels.slack.ids import (
    ACTION_ID_MAX,
    BUTTON_VALUE_MAX,
    OPTION_VALUE_MAX,
    button_id,
    fit_value,
    select_id,
)
from chatgate.channels.slack.markdown import markdown_to_slack_mrkdwn
from chatgate.channels.words import ENGLISH, RenderWords
from chatgate.model.outbound import (
    DEFAULT_PLACEHOLDER,
    Block,
    Button,
    Buttons,
    Chart,
    Context,
    Divider,
    Image,
    OutboundMessage,
    Select,
    Table,
    Text,
)
from chatgate.presentation.chunking import MIN_LIMIT, chunk_text
from chatgate.presentation.degrade import callback_hash
from chatgate.presentation.markdown import html_escape
from chatgate.presentation.render import DIVIDER, block_to_markdown, image_to_text, table_width

MAX_TEXT = 3000
MAX_BLOCKS = 50
FORMAT = "mrkdwn"
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS = 25
MAX_OPTIONS = 100
LABEL_MAX = 75
PLACEHOLDER_MAX = 150
ALT_MAX = 2000
URL_MAX = 3000
CELL_MAX = 40
TABLE_COLS = 10
BUTTONS_ONLY_TEXT = ENGLISH.choose  # a notification text for a message of buttons only
Shorten = Callable[[str], str]
SlackBlock = dict[str, Any]

_LINK = re.compile(r"<[^<>\n]*>")
_STYLES = frozenset({"primary", "danger"})


def render(
    message: OutboundMessage,
    *,
    limit: int = MAX_TEXT,
    shorten: Shorten = callback_hash,
    words: RenderWords = ENGLISH,
) -> list[Rendered]:
    """Slack messages for `message`; only the first quotes the trigger ("reply")."""
    if not any(_is_rich(block) for block in message.blocks):
        text = "\n\n".join(t for t in map(_mrkdwn, message.blocks) if t.strip())
        return [
            Rendered(chunk, FORMAT, {"blocks": (), "reply": i == 0})
            for i, chunk in enumerate(chunks(text, limit))
        ]
    body, tail = _blocks(message, min(limit, MAX_TEXT), shorten, words)
    return [
        Rendered(fallback_text(batch, words.choose), FORMAT, {"blocks": batch, "reply": i == 0})
        for i, batch in enumerate(_batches(body, tail))
    ]


def split_rendered(rendered: Rendered) -> list[Rendered]:
    """Two valid messages carrying `rendered`'s content (Slack said msg_too_long), or
    [rendered] when it cannot be split (one image, one select, a tiny text)."""
    native = dict(rendered.native)
    blocks: tuple[SlackBlock, ...] = tuple(native.get("blocks") or ())
    reply = bool(native.get("reply", False))
    if not blocks:
        halves = halve_text(rendered.text)
        if len(halves) < 2:
            return [rendered]
        return [
            Rendered(half, rendered.format, {**native, "reply": reply and i == 0})
            for i, half in enumerate(halves)
        ]
    groups: list[tuple[SlackBlock, ...]]
    if len(blocks) == 1:
        groups = [(part,) for part in _split_block(blocks[0])]
    else:
        groups = [blocks[: len(blocks) // 2], blocks[len(blocks) // 2 :]]
    if len(groups) < 2:
        return [rendered]
    return [
        Rendered(
            fallback_text(g), rendered.format, {**native, "blocks": g, "reply": reply and i == 0}
        )
        for i, g in enumerate(groups)
    ]


def chunks(text: str, limit: int) -> list[str]:
    """`chunk_text` on mrkdwn, never breaking inside a <url|link label>."""
    if not any(" " in m[0] for m in _LINK.finditer(text)):
        return chunk_text(text, limit)
    mask = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text)
    protected = _LINK.sub(lambda m: m[0].replace(" ", mask), text)
    return [c.replace(mask, " ") for c in chunk_text(protected, limit)]


def halve_text(text: str) -> list[str]:
    """`text` as two chunks about half its length each (fences balanced), or [text]."""
    n = len(text)
    step = max(1, n // 64)
    for limit in range(max(MIN_LIMIT, (n + 1) // 2), n, step):
        parts = chunks(text, limit)
        if len(parts) == 2:
            return parts
        if len(parts) < 2:
            break
    return [text]


def fallback_text(blocks: Sequence[SlackBlock], choose: str = BUTTONS_ONLY_TEXT) -> str:
    """The notification text of a Block Kit message: its texts, clipped to MAX_TEXT."""
    parts: list[str] = []
    for block in blocks:
        if block["type"] == "section":
            parts.append(block["text"]["text"])
        elif block["type"] == "context":
            parts.extend(e["text"] for e in block["elements"])
        elif block["type"] == "image":
            parts.append(html_escape(block["alt_text"]))
    text = "\n\n".join(p for p in parts if p.strip())
    if not text:
        return choose if any(b["type"] == "actions" for b in blocks) else DIVIDER
    pieces = chunks(text, MAX_TEXT - 2)
    return pieces[0] if len(pieces) == 1 else pieces[0] + "\n…"


def _is_rich(block: Block) -> bool:
    match block:
        case Buttons():
            return bool(block.buttons)
        case Select():
            return bool(block.options)
        case Table():
            return table_width(block) > 0
        case Image():
            return True
    return False


def _mrkdwn(block: Block) -> str:
    if isinstance(block, Text) and not block.markdown:
        return html_escape(block.text)
    return markdown_to_slack_mrkdwn(block_to_markdown(block))


def _blocks(
    message: OutboundMessage, limit: int, shorten: Shorten, words: RenderWords
) -> tuple[list[SlackBlock], list[SlackBlock]]:
    """(body blocks in order, tail: the note and actions blocks that go on the last message)."""
    body: list[SlackBlock] = []
    components = _Components(shorten, words)
    pending: list[str] = []

    def flush() -> None:
        body.extend(_section(c) for c in chunks("\n\n".join(pending), limit))
        pending.clear()

    for block in message.blocks:
        if isinstance(block, Text | Chart):
            text = _mrkdwn(block)
            if text.strip():
                pending.append(text)
            continue
        flush()
        match block:
            case Divider():
                body.append({"type": "divider"})
            case Context():
                body.extend(_context(markdown_to_slack_mrkdwn(block.text), limit))
            case Image():
                body.extend(_image(block, limit))
            case Table():
                body.extend(table_blocks(block, limit, words))
            case Buttons() | Select():
                components.add(block)
    flush()
    return body, components.tail(limit)


def _batches(body: list[SlackBlock], tail: list[SlackBlock]) -> list[tuple[SlackBlock, ...]]:
    """Messages of at most MAX_BLOCKS blocks; the tail stays together on the last one."""
    batches = [body[i : i + MAX_BLOCKS] for i in range(0, len(body), MAX_BLOCKS)] or [[]]
    if len(batches[-1]) + len(tail) <= MAX_BLOCKS:
        batches[-1] = batches[-1] + tail
    else:
        batches.append(tail)
    return [tuple(b) for b in batches if b]


def _section(text: str) -> SlackBlock:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str, limit: int) -> list[SlackBlock]:
    elements = [{"type": "mrkdwn", "text": c} for c in chunks(text, limit)]
    return [
        {"type": "context", "elements": elements[i : i + MAX_CONTEXT_ELEMENTS]}
        for i in range(0, len(elements), MAX_CONTEXT_ELEMENTS)
    ]


def _image(image: Image, limit: int) -> list[SlackBlock]:
    """An image block; a URL Slack would refuse becomes a text line instead."""
    url = image.url.strip()
    if not _web_url(url):
        return [_section(c) for c in chunks(html_escape(image_to_text(image)), limit)]
    alt = " ".join(image.alt.split()) or "image"
    return [{"type": "image", "image_url": url, "alt_text": _clip(alt, ALT_MAX)}]


def _web_url(url: str) -> bool:
    return url.lower().startswith(("http://", "https://")) and len(url) <= URL_MAX


def table_blocks(
    table: Table, limit: int = MAX_TEXT, words: RenderWords = ENGLISH
) -> list[SlackBlock]:
    """A monospace grid in a code block; rows and columns that do not fit are counted."""
    width = table_width(table)
    if width == 0:
        return []
    cols = min(width, TABLE_COLS)
    header = _cells(table.columns, cols) if table.columns else None
    rows = [_cells(row, cols) for row in table.rows]
    lo, hi = 0, len(rows)  # the most rows whose grid fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(_grid(header, rows[:mid])) <= limit:
            lo = mid
        else:
            hi = mid - 1
    notes = [words.rows_hidden(len(rows) - lo)] if lo < len(rows) else []
    notes += [words.columns_hidden(width - cols)] if cols < width else []
    grid = _grid(header, rows[:lo])
    out = [_section(grid)] if (header or lo) and len(grid) <= limit else []
    return out + (_context("; ".join(notes), limit) if notes else [])


def _cells(row: tuple[str, ...], width: int) -> list[str]:
    cells = [" ".join(c.split()).replace("```", "'''") for c in row[:width]]
    cells += [""] * (width - len(cells))
    return [_clip(c, CELL_MAX) for c in cells]


def _grid(header: list[str] | None, rows: list[list[str]]) -> str:
    grid = ([header] if header else []) + rows
    sizes = [max((len(r[c]) for r in grid), default=0) for c in range(len(grid[0]) if grid else 0)]

    def line(row: list[str]) -> str:
        return " | ".join(cell.ljust(size) for cell, size in zip(row, sizes, strict=True)).rstrip()

    lines = [line(header), "-+-".join("-" * s for s in sizes)] if header else []
    lines += [line(row) for row in rows]
    return "```\n" + html_escape("\n".join(lines)) + "\n```"


@dataclass
class _Components:
    """The actions blocks of one message; buttons and selects are numbered across it."""

    shorten: Shorten
    words: RenderWords = ENGLISH
    blocks: list[SlackBlock] = field(default_factory=list)
    buttons: int = 0
    selects: int = 0
    hidden: int = 0  # items that found no room

    def add(self, block: Buttons | Select) -> None:
        room = MAX_BLOCKS - 1 - len(self.blocks)  # one block is kept for the note
        if isinstance(block, Select):
            if room <= 0:
                self.hidden += len(block.options)
            elif block.options:
                element = _select(block, self.selects, self.shorten, self.words.open_list)
                self.blocks.append({"type": "actions", "elements": [element]})
                self.selects += 1
                self.hidden += max(0, len(block.options) - MAX_OPTIONS)
            return
        elements: list[SlackBlock] = []
        for button in block.buttons:
            spec = _button(button, self.buttons, self.shorten)
            self.buttons += 1
            if spec is None:
                self.hidden += 1
            else:
                elements.append(spec)
        rows = [elements[i : i + MAX_ACTIONS] for i in range(0, len(elements), MAX_ACTIONS)]
        self.blocks.extend({"type": "actions", "elements": row} for row in rows[: max(room, 0)])
        self.hidden += sum(len(row) for row in rows[max(room, 0) :])

    def tail(self, limit: int) -> list[SlackBlock]:
        """The blocks for the last message: a note on what was not shown, then the actions."""
        if not self.hidden:
            return self.blocks
        return _context(self.words.options_hidden(self.hidden), limit) + self.blocks


def _button(button: Button, index: int, shorten: Shorten) -> SlackBlock | None:
    """A button element, or None for a link Slack would refuse (not http(s), too long)."""
    element: SlackBlock = {
        "type": "button",
        "text": _plain(button.label, LABEL_MAX),
        "action_id": button_id(index),
    }
    if button.url is not None:
        url = button.url.strip()
        if not _web_url(url):
            return None
        element["url"] = url
    else:
        value = fit_value(button.value or button.label, BUTTON_VALUE_MAX, shorten)
        if value:
            element["value"] = value
    if button.style in _STYLES:
        element["style"] = button.style
    return element


def _select(
    select: Select, index: int, shorten: Shorten, unnamed: str = DEFAULT_PLACEHOLDER
) -> SlackBlock:
    """A static select; ``unnamed`` is the placeholder when the message names none."""
    options = [
        {
            "text": _plain(o.label, LABEL_MAX),
            "value": fit_value(o.value or o.label or "…", OPTION_VALUE_MAX, shorten),
        }
        for o in select.options[:MAX_OPTIONS]
    ]
    return {
        "type": "static_select",
        "action_id": select_id(index, select.action_id)[:ACTION_ID_MAX],
        "placeholder": _plain(
            unnamed if select.placeholder in ("", DEFAULT_PLACEHOLDER) else select.placeholder,
            PLACEHOLDER_MAX,
        ),
        "options": options,
    }


def _plain(text: str, limit: int) -> SlackBlock:
    return {
        "type": "plain_text",
        "text": _clip(" ".join(text.split()) or "…", limit),
        "emoji": True,
    }


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _split_block(block: SlackBlock) -> list[SlackBlock]:
    """One block's content as two blocks of the same kind, or [block] when it cannot split."""
    kind = block["type"]
    if kind == "section":
        return [_section(half) for half in halve_text(block["text"]["text"])]
    if kind in ("context", "actions"):
        elements = list(block["elements"])
        if len(elements) >= 2:
            mid = len(elements) // 2
            return [{**block, "elements": elements[:mid]}, {**block, "elements": elements[mid:]}]
        if kind == "context":
            halves = halve_text(elements[0]["text"])
            return [{**block, "elements": [{**elements[0], "text": h}]} for h in halves]
    return [block]
