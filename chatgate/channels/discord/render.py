"""Render an adapted OutboundMessage as Discord messages: markdown chunks, embeds, components.

Pure: the result is plain specs (no discord.py objects), turned into `discord.Embed` and a
`discord.ui.View` only when sent. Text is converted to Discord markdown first and then chunked,
because escapes count towards the 2,000-character limit; chunks are further split at a soft
line limit, never inside a code block. Tables and images become embeds attached after the text
that precedes them; components ride on the last message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from chatgate.channels.base import Rendered
from chatgate.channels.discord.ids import VALUE_MAX_BYTES, button_id, select_id
from chatgate.channels.discord.markdown import markdown_to_discord
from chatgate.channels.words import ENGLISH, RenderWords
from chatgate.model.outbound import (
    DEFAULT_PLACEHOLDER,
    Block,
    Button,
    Buttons,
    Context,
    Image,
    OutboundMessage,
    Select,
    Table,
)
from chatgate.presentation.chunking import chunk_text, utf16_len
from chatgate.presentation.degrade import callback_hash
from chatgate.presentation.markdown import closes_fence, parse_fence
from chatgate.presentation.render import block_to_markdown

MAX_TEXT = 2000
MAX_EMBEDS = 10
MAX_EMBED_TOTAL = 6000
MAX_DESCRIPTION = 4096
MAX_ROWS = 5
ROW_BUTTONS = 5
LABEL_MAX = 80
OPTION_LABEL_MAX = 100
PLACEHOLDER_MAX = 150
CELL_MAX = 40
BUTTONS_ONLY_TEXT = ENGLISH.choose  # the text of a message of components only
FORMAT = "discord-markdown"
Shorten = Callable[[str], str]


@dataclass(frozen=True)
class ButtonSpec:
    label: str
    style: str  # primary | secondary | danger | link
    custom_id: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class SelectSpec:
    custom_id: str
    placeholder: str
    options: tuple[tuple[str, str], ...]  # (label, value)


@dataclass(frozen=True)
class EmbedSpec:
    description: str = ""
    image_url: str | None = None
    footer: str = ""

    @property
    def size(self) -> int:
        return len(self.description) + len(self.footer)


Row = tuple[ButtonSpec, ...] | SelectSpec
_Part = tuple[str, tuple[EmbedSpec, ...]]
_STYLES = {"default": "secondary", "primary": "primary", "danger": "danger"}


@dataclass
class _Section:
    """Text followed by the embeds that come after it, before the next text."""

    text: list[str] = field(default_factory=list)
    embeds: list[EmbedSpec] = field(default_factory=list)


def render(
    message: OutboundMessage,
    *,
    max_lines: int = 0,
    limit: int = MAX_TEXT,
    shorten: Shorten = callback_hash,
    words: RenderWords = ENGLISH,
) -> list[Rendered]:
    sections = [_Section()]
    rows: list[Row] = []
    hidden = 0
    for block in message.blocks:
        if isinstance(block, Buttons | Select):
            hidden += _add_rows(rows, block, shorten, words.open_list)
        else:
            _add_block(sections, block, words)
    if hidden:
        sections[-1].text.append(f"-# {words.options_hidden(hidden)}")
    parts = [part for section in sections for part in _parts(section, limit, max_lines)]
    if rows and not parts:
        parts.append((words.choose, ()))
    last = len(parts) - 1
    return [
        Rendered(
            text or (words.choose if rows and i == last else ""),
            FORMAT,
            # only the first message quotes the trigger; components ride on the last
            {"embeds": embeds, "rows": tuple(rows) if i == last else (), "reply": i == 0},
        )
        for i, (text, embeds) in enumerate(parts)
    ]


def _add_block(sections: list[_Section], block: Block, words: RenderWords) -> None:
    """Tables and images become embeds of the current section; text after an embed starts
    a new section (a message's text comes before its embeds)."""
    if isinstance(block, Table):
        sections[-1].embeds.append(table_embed(block, words))
    elif isinstance(block, Image):
        sections[-1].embeds.append(EmbedSpec(image_url=block.url, footer=block.alt))
    else:
        text = _context(block) if isinstance(block, Context) else _markdown(block)
        if not text.strip():
            return
        if sections[-1].embeds:
            sections.append(_Section())
        sections[-1].text.append(text)


def _markdown(block: Block) -> str:
    return markdown_to_discord(block_to_markdown(block))


def _context(block: Context) -> str:
    """Small print: Discord's subtext line ("-# ")."""
    lines = markdown_to_discord(block.text).split("\n")
    return "\n".join(f"-# {line}" if line.strip() else "" for line in lines)


def _parts(section: _Section, limit: int, max_lines: int) -> list[_Part]:
    """(text, embeds) per message: the text's chunks, the embeds on the last of them."""
    parts: list[_Part] = [
        (piece, ())
        for chunk in chunk_text("\n\n".join(section.text), limit, length=utf16_len)
        for piece in split_lines(chunk, max_lines)
    ]
    for index, batch in enumerate(_embed_batches(section.embeds)):
        if index == 0 and parts:
            parts[-1] = (parts[-1][0], batch)
        else:
            parts.append(("", batch))
    return parts


def _embed_batches(embeds: list[EmbedSpec]) -> list[tuple[EmbedSpec, ...]]:
    """Discord allows 10 embeds and 6,000 embed characters per message."""
    batches: list[list[EmbedSpec]] = []
    for embed in embeds:
        current = batches[-1] if batches else None
        if (
            current is None
            or len(current) >= MAX_EMBEDS
            or sum(e.size for e in current) + embed.size > MAX_EMBED_TOTAL
        ):
            batches.append([embed])
        else:
            current.append(embed)
    return [tuple(b) for b in batches]


def split_lines(chunk: str, max_lines: int) -> list[str]:
    """Split at line boundaries past `max_lines` lines, never inside a code block (soft)."""
    lines = chunk.split("\n")
    if max_lines <= 0 or len(lines) <= max_lines:
        return [chunk]
    pieces: list[list[str]] = [[]]
    fence = None
    for line in lines:
        current = pieces[-1]
        if fence is None and len(current) >= max_lines and line.strip():
            pieces.append([])
            current = pieces[-1]
        if not current and not line.strip():
            continue  # no piece starts with a blank line
        current.append(line)
        if fence is None:
            fence = parse_fence(line)
        elif closes_fence(line, fence):
            fence = None
    return ["\n".join(p).rstrip() for p in pieces if "".join(p).strip()]


def table_embed(table: Table, words: RenderWords = ENGLISH) -> EmbedSpec:
    """A monospace grid in the description; rows that do not fit are counted in the footer."""
    width = max([len(table.columns), *(len(r) for r in table.rows)])
    grid = [_cells(table.columns, width), *(_cells(r, width) for r in table.rows)]
    sizes = [max(len(row[c]) for row in grid) for c in range(width)]

    def line(row: list[str]) -> str:
        return " | ".join(cell.ljust(size) for cell, size in zip(row, sizes, strict=True)).rstrip()

    header = [line(grid[0]), "-+-".join("-" * s for s in sizes)] if table.columns else []
    body = [line(row) for row in grid[1:]]
    kept = len(body)
    while kept and len(_fenced(header + body[:kept])) > MAX_DESCRIPTION:
        kept -= 1
    footer = words.rows_hidden(len(body) - kept) if kept < len(body) else ""
    return EmbedSpec(_fenced(header + body[:kept]), footer=footer)


def _fenced(lines: list[str]) -> str:
    return "```\n" + "\n".join(lines).replace("```", "'''") + "\n```"


def _cells(row: tuple[str, ...], width: int) -> list[str]:
    cells = [" ".join(c.split()) for c in row] + [""] * (width - len(row))
    return [c if len(c) <= CELL_MAX else c[: CELL_MAX - 1] + "…" for c in cells]


def _add_rows(
    rows: list[Row], block: Buttons | Select, shorten: Shorten, unnamed: str = DEFAULT_PLACEHOLDER
) -> int:
    """Append action rows for one block; returns how many items found no room (5 rows max).
    ``unnamed`` is a select's placeholder when the message names none."""
    if isinstance(block, Select):
        if not block.options:
            return 0
        if len(rows) >= MAX_ROWS:
            return len(block.options)
        index = sum(1 for r in rows if isinstance(r, SelectSpec))
        options = tuple(
            (_clip(o.label, OPTION_LABEL_MAX), _fit(o.value, shorten)) for o in block.options
        )
        rows.append(
            SelectSpec(
                select_id(index, block.action_id),
                _clip(
                    unnamed if block.placeholder == DEFAULT_PLACEHOLDER else block.placeholder,
                    PLACEHOLDER_MAX,
                ),
                options,
            )
        )
        return 0
    specs = [
        _button(b, sum(len(r) for r in rows if not isinstance(r, SelectSpec)) + i, shorten)
        for i, b in enumerate(block.buttons)
    ]
    while specs and len(rows) < MAX_ROWS:
        rows.append(tuple(specs[:ROW_BUTTONS]))
        specs = specs[ROW_BUTTONS:]
    return len(specs)


def _button(button: Button, index: int, shorten: Shorten) -> ButtonSpec:
    label = _clip(button.label, LABEL_MAX) or "…"
    if button.url:
        return ButtonSpec(label, "link", url=button.url)
    value = _fit(button.value or button.label, shorten)
    return ButtonSpec(
        label, _STYLES.get(button.style, "secondary"), custom_id=button_id(index, value)
    )


def _fit(value: str, shorten: Shorten) -> str:
    """Presentation already shortened long values; a label standing in for one was not."""
    if len(value.encode("utf-8", "surrogatepass")) > VALUE_MAX_BYTES:
        return shorten(value)
    return value


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
