"""Our reply dialect (CommonMark-ish markdown from LLMs) → Discord markdown.

Discord renders most of the dialect natively (bold, italic, strike, code, fenced blocks, lists,
quotes, headings, masked links), so the work is in the edges: literal characters Discord would
read as markup are escaped, `__x__` (underline in Discord) becomes `**x**`, emphasis markers are
placed so adjacent runs cannot fuse, and `~~~` fences become backtick fences. Reuses the line and
inline model of `chatgate.presentation.markdown`, so every renderer reads a reply the same way.
"""

from __future__ import annotations

import re

from chatgate.presentation.inline_markdown import Run, parse_inline
from chatgate.presentation.markdown import (
    BOLD,
    EDGES,
    LANG,
    CodeBlock,
    Line,
    encode_url,
    resolve_links,
    segments,
)

# A bare URL is left as typed (Discord links it; an escape would change it), else markup is escaped.
_SPECIAL = re.compile(r"(https?://[^\s<>]+)|([\\*_~`|])", re.IGNORECASE)
_LINE_START = re.compile(r"^-#(?=\s)")
_MARKS = (("b", "**"), ("s", "~~"), ("i", "*"))
_MARK_CHARS = frozenset("*~")
_SAFE_SCHEMES = ("http://", "https://")
_ZWSP = "\u200b"  # keeps two runs' emphasis markers from fusing into a different marker
HEADING = "### "
DIVIDER = "———"


def escape(text: str) -> str:
    """Backslash-escape every character Discord reads as inline markup."""
    return _SPECIAL.sub(lambda m: m.group(1) or "\\" + m.group(2), text)


def _safe_url(url: str) -> bool:
    return url.lower().startswith(_SAFE_SCHEMES)


def _code_span(text: str) -> str:
    if "`" not in text:
        return f"`{text}`"
    if "``" not in text:
        return f"`` {text} ``"
    return escape(text)  # no code span can hold it: keep the characters, lose the styling


def _styled(run: Run) -> str:
    if run.code:
        return _code_span(run.text)
    m = EDGES.match(run.text)
    lead, core, trail = (m.group(1), m.group(2), m.group(3)) if m else ("", run.text, "")
    marks = "".join(mark for style, mark in _MARKS if style in run.styles)
    if not core or not marks:
        return escape(run.text)
    return f"{lead}{marks}{escape(core)}{marks[::-1]}{trail}"


def _link(runs: list[Run]) -> str:
    link = runs[0].link
    assert link is not None
    label = "".join(r.text for r in runs)
    url = encode_url(link.url).replace("(", "%28").replace(")", "%29")
    if label == link.url:
        return url  # Discord links bare URLs itself; escaping would break them
    text = "".join(_styled(r) for r in runs).replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({url})"


def _join(out: list[str], piece: str) -> None:
    if out and piece and out[-1][-1:] in _MARK_CHARS and piece[0] in _MARK_CHARS:
        out.append(_ZWSP)
    out.append(piece)


def _runs(runs: list[Run]) -> str:
    out: list[str] = []
    runs = resolve_links(runs, _safe_url)
    i = 0
    while i < len(runs):
        link = runs[i].link
        j = i + 1
        if link is None:
            _join(out, _styled(runs[i]))
        else:
            while j < len(runs) and runs[j].link == link:
                j += 1
            _join(out, _link(runs[i:j]))
        i = j
    return "".join(out)


def _line(line: Line) -> str:
    if line.literal:
        return line.prefix[: len(line.prefix) - len(line.prefix.lstrip())] + DIVIDER
    if line.heading:
        if not line.prefix.strip() and not line.marker:
            body = _runs(parse_inline(line.body))
            return line.prefix + HEADING + body if body else line.prefix
        return line.prefix + line.marker + _runs(parse_inline(line.body, BOLD))
    body = _runs(parse_inline(line.body))
    if not line.marker and _LINE_START.match(body):
        body = "\\" + body  # "-# x" in the middle of text stays literal
    return line.prefix + line.marker + body


def _code(block: CodeBlock) -> str:
    if not block.lines:
        return ""
    lang = block.fence.lang if LANG.match(block.fence.lang) else ""
    # a ``` inside would end the block early: break every backtick run after its second
    body = re.sub(r"(?<=``)`", _ZWSP + "`", "\n".join(block.lines))
    return f"```{lang}\n{body}\n```"


def _to_discord(md: str) -> str:
    parts = [_code(seg) if isinstance(seg, CodeBlock) else _line(seg) for seg in segments(md)]
    return "\n".join(parts)


def markdown_to_discord(md: str) -> str:
    """Discord markdown with literal markup characters escaped; never raises."""
    try:
        return _to_discord(md)
    except Exception:  # a renderer must never take a reply down with it
        return escape(md)
