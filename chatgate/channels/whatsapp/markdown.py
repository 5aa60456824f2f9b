"""Our reply dialect (CommonMark-ish markdown from LLMs) → WhatsApp formatting.

WhatsApp knows `*bold*`, `_italic_`, `~strike~`, `` `code` `` and ``` blocks, "- " and "1. "
lists and "> " quotes; it has no links with labels (a link reads "label (url)"), no headings
(a bold line) and no escapes. Reuses the line and inline model of
`chatgate.presentation.markdown`, so every renderer reads a reply the same way.
"""

from __future__ import annotations

from chatgate.presentation.inline_markdown import Run, parse_inline
from chatgate.presentation.markdown import (
    BOLD,
    EDGES,
    CodeBlock,
    Line,
    break_ticks,
    inert,
    resolve_links,
    segments,
)

_MARKS = (("b", "*"), ("i", "_"), ("s", "~"))
_MARK_CHARS = frozenset("*_~")
_ZWSP = "\u200b"  # keeps two runs' markers from fusing, and breaks ``` inside a line
DIVIDER = "———"


def _styled(run: Run) -> str:
    if run.code:  # a backtick cannot be shown inside code: keep the characters
        return run.text if "`" in run.text or not run.text.strip() else f"`{run.text}`"
    m = EDGES.match(run.text)
    lead, core, trail = (m.group(1), m.group(2), m.group(3)) if m else ("", run.text, "")
    marks = "".join(mark for style, mark in _MARKS if style in run.styles)
    if not core or not marks:
        return run.text
    return f"{lead}{marks}{core}{marks[::-1]}{trail}"


def _runs(runs: list[Run]) -> str:
    out: list[str] = []
    for run in resolve_links(runs, lambda _url: False):  # "label (url)", a bare URL as is
        piece = _styled(run)
        if out and piece and out[-1][-1:] in _MARK_CHARS and piece[0] in _MARK_CHARS:
            out.append(_ZWSP)
        out.append(piece)
    return break_ticks("".join(out), _ZWSP)


def _line(line: Line) -> str:
    if line.literal:
        return line.prefix[: len(line.prefix) - len(line.prefix.lstrip())] + DIVIDER
    marker = "- " if line.marker[:1] in ("*", "+") else line.marker
    styles = BOLD if line.heading else frozenset()
    return line.prefix + marker + _runs(parse_inline(line.body, styles))


def _code(block: CodeBlock) -> str:
    if not block.lines:
        return ""
    body = break_ticks("\n".join(block.lines), _ZWSP)
    return f"```\n{body}\n```"


def markdown_to_whatsapp(md: str) -> str:
    """WhatsApp-formatted text; never raises (the literal text is the fallback)."""
    if inert(md):
        return md
    try:
        return _to_whatsapp(md)
    except Exception:  # a renderer must never take a reply down with it
        return md


def _to_whatsapp(md: str) -> str:
    parts = [_code(seg) if isinstance(seg, CodeBlock) else _line(seg) for seg in segments(md)]
    return "\n".join(parts)
