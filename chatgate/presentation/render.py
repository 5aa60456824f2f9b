"""Text renderings: deterministic text forms of rich blocks, and whole-message markdown.

The text forms keep every user-visible string of a block so a text-only channel loses nothing
but the widget itself; `adapt` uses them to degrade, `to_markdown` for transcripts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chatgate.model.outbound import (
    DEFAULT_PLACEHOLDER,
    Block,
    Buttons,
    Chart,
    Context,
    Divider,
    File,
    Image,
    OutboundMessage,
    Select,
    Table,
    Text,
    format_number,
)

DIVIDER = "———"


def _cell(value: str) -> str:
    """A table cell on one line with pipes escaped so the row structure survives."""
    return " ".join(value.replace("|", "\\|").splitlines())


def table_width(table: Table) -> int:
    """Columns needed to show every cell: the header or the longest row, whichever is wider."""
    return max([len(table.columns), *(len(row) for row in table.rows)])


def table_to_markdown(table: Table) -> str:
    """A GitHub-flavoured markdown table; missing header names and short rows are padded."""
    width = table_width(table)
    if width == 0:
        return ""

    def line(cells: Sequence[str]) -> str:
        padded = [_cell(c) for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(padded) + " |"

    lines = [line(table.columns), "| " + " | ".join(["---"] * width) + " |"]
    lines.extend(line(row) for row in table.rows)
    return "\n".join(lines)


def chart_to_text(chart: Chart) -> str:
    """A caption/kind line, then one "label: p1, p2, …" line per series."""
    kind = chart.kind.strip()
    title = f"{kind} chart" if kind else "chart"
    header = f"{chart.caption} ({title})" if chart.caption else title[:1].upper() + title[1:]
    lines = [header]
    for series in chart.series:
        points = ", ".join(format_number(p) for p in series.points)
        lines.append(f"{series.label}: {points}".rstrip())
    return "\n".join(lines)


def choices_to_text(choices: Iterable[tuple[str, str | None]], heading: str = "") -> str:
    """A numbered list of (label, url) choices; link choices keep their URL visible."""
    lines = [heading] if heading else []
    for number, (label, url) in enumerate(choices, start=1):
        lines.append(f"{number}. {label} ({url})" if url else f"{number}. {label}")
    return "\n".join(lines)


def image_to_text(image: Image) -> str:
    """The image as "alt: url", or the bare URL when there is no alt text."""
    return f"{image.alt}: {image.url}" if image.alt else image.url


def _italic(text: str) -> str:
    """Context text in italics, line by line (our inline markdown never spans lines)."""
    return "\n".join(f"_{line.strip()}_" if line.strip() else "" for line in text.split("\n"))


def block_to_markdown(block: Block) -> str:
    """One block as markdown text; widgets fall back to the same forms `adapt` uses."""
    match block:
        case Text():
            return block.text
        case Buttons():
            return choices_to_text((b.label, b.url) for b in block.buttons)
        case Select():
            heading = block.placeholder if block.placeholder != DEFAULT_PLACEHOLDER else ""
            return choices_to_text(((o.label, None) for o in block.options), heading)
        case Table():
            return table_to_markdown(block)
        case Chart():
            return chart_to_text(block)
        case Image():
            return image_to_text(block)
        case File():
            return ""  # uploaded by the channel, not written into the text
        case Divider():
            return DIVIDER
        case Context():
            return _italic(block.text)
    return ""  # pragma: no cover - exhaustive above


def to_markdown(message: OutboundMessage) -> str:
    """The message as markdown: non-empty blocks joined by blank lines."""
    return "\n\n".join(s for s in map(block_to_markdown, message.blocks) if s.strip())
