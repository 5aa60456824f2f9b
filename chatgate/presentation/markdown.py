"""Our reply dialect (CommonMark-ish markdown from LLMs) → plain text and chat HTML, and the line
model every platform's converter (in its channel folder) builds on.

Block structure is line-based: fenced code blocks (``` or ~~~, any indentation, unclosed
fences run to the end), ATX headings, list/quote prefixes kept literally; everything else is
inline markdown parsed per line by `inline_markdown`. Renderers work on flat styled runs, so their
output is balanced by construction. Inline formatting never spans lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from chatgate.presentation.inline_markdown import Run, parse_inline

_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_THEMATIC = re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_PREFIX = re.compile(r"^([ \t]*(?:>[ \t]?)*[ \t]*)((?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$))?")
LANG = re.compile(r"^[A-Za-z0-9_+#.\-]{1,32}$")
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "tg://")
BOLD = frozenset({"b"})  # a heading's runs
EDGES = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)  # a run's lead, core and trail
# What can make a line more than its words: a character that may start inline syntax or a link,
# one that chat HTML and Slack escape, a line break, or a URL's "://"; and at a line's start,
# whitespace, a quote, a list marker or a heading.
_MARKUP = re.compile(r"[\\`*_~\[\]!<>&#|\r\n]|://")
_LINE_START = frozenset(" \t>-+#0123456789")
_TICK_RUN = re.compile(r"(?<=``)`")


@dataclass(frozen=True)
class Fence:
    """An opening code fence: indentation, marker run (e.g. "```") and info string."""

    indent: str
    marker: str
    info: str

    @property
    def lang(self) -> str:
        """First word of the info string (the language), or ""."""
        return self.info.split()[0] if self.info.split() else ""

    def opening(self) -> str:
        return f"{self.indent}{self.marker}{self.info}"

    def closing(self) -> str:
        return f"{self.indent}{self.marker}"


def parse_fence(line: str) -> Fence | None:
    """The fence a line opens, or None (backtick info strings may not contain backticks)."""
    m = _FENCE_OPEN.match(line.rstrip("\r"))
    if not m:
        return None
    indent, marker, info = m.group(1), m.group(2), m.group(3).strip()
    if marker[0] == "`" and "`" in info:
        return None
    return Fence(indent, marker, info)


def closes_fence(line: str, fence: Fence) -> bool:
    """Whether `line` closes `fence`: same character, at least as long, nothing else."""
    stripped = line.strip()
    return len(stripped) >= len(fence.marker) and stripped == fence.marker[0] * len(stripped)


@dataclass(frozen=True)
class CodeBlock:
    fence: Fence
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Line:
    prefix: str  # indentation and quote markers, literal
    marker: str  # list marker with its trailing whitespace, or ""
    body: str
    heading: bool = False
    literal: bool = False


def break_ticks(text: str, zwsp: str = "\u200b") -> str:
    """Each backtick after the first two of a run behind a zero-width space, so no fence can
    start inside a line (text without three in a row is returned as it is)."""
    return text if "```" not in text else _TICK_RUN.sub(zwsp + "`", text)


def inert(md: str) -> bool:
    """Whether ``md`` is one line of words with no markup at all: every converter gives it
    back unchanged, so the common short reply skips the line and inline parsers."""
    return bool(md) and md[0] not in _LINE_START and _MARKUP.search(md) is None


def _dedent(line: str, width: int) -> str:
    n = 0
    while n < width and n < len(line) and line[n] in " \t":
        n += 1
    return line[n:]


def segments(md: str) -> list[Line | CodeBlock]:
    lines = md.replace("\r\n", "\n").split("\n")
    out: list[Line | CodeBlock] = []
    i = 0
    while i < len(lines):
        fence = parse_fence(lines[i])
        if fence is None:
            out.append(_parse_line(lines[i]))
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not closes_fence(lines[j], fence):
            j += 1
        body = tuple(_dedent(line, len(fence.indent)) for line in lines[i + 1 : j])
        out.append(CodeBlock(fence, body))
        i = j + 1
    return out


def _parse_line(line: str) -> Line:
    if _THEMATIC.match(line):
        return Line(line, "", "", literal=True)
    m = _PREFIX.match(line)
    prefix, marker = (m.group(1), m.group(2) or "") if m else ("", "")
    rest = line[len(prefix) + len(marker) :]
    heading = _HEADING.match(rest)
    if heading:
        return Line(prefix, marker, heading.group(2) or "", heading=True)
    return Line(prefix, marker, rest)


def resolve_links(runs: list[Run], keep: Callable[[str], bool]) -> list[Run]:
    """Unlink runs whose URL the target cannot link, appending " (url)" after the label."""
    out: list[Run] = []
    label: list[str] = []
    for index, run in enumerate(runs):
        link = run.link
        if link is None or keep(link.url):
            out.append(run)
            continue
        out.append(replace(run, link=None))
        label.append(run.text)
        following = runs[index + 1] if index + 1 < len(runs) else None
        if following is None or following.link != link:
            if "".join(label) not in (link.url, link.url.removeprefix("mailto:")):
                out.append(Run(f" ({link.url})"))
            label = []
    return out


def safe_url(url: str) -> bool:
    return url.lower().startswith(_SAFE_SCHEMES)


def encode_url(url: str) -> str:
    """Percent-encode characters a chat platform will not accept inside a link target."""
    return re.sub(r"[\s<>|\"]", lambda m: "".join(f"%{b:02X}" for b in m[0].encode()), url)


# --- plain --------------------------------------------------------------------------------


def _plain_line(line: Line) -> str:
    if line.literal:
        return line.prefix
    runs = resolve_links(parse_inline(line.body), lambda _url: False)
    return line.prefix + line.marker + "".join(r.text for r in runs)


def _to_plain(md: str) -> str:
    parts = [
        "\n".join(seg.lines) if isinstance(seg, CodeBlock) else _plain_line(seg)
        for seg in segments(md)
    ]
    return "\n".join(parts)


def markdown_to_plain(md: str) -> str:
    """Strip markup, keeping the words: links become "text (url)", fences are dropped."""
    if inert(md):
        return md
    try:
        return _to_plain(md)
    except Exception:  # a renderer must never take a reply down with it
        return md


# --- chat HTML (Telegram, web chat) ------------------------------------------------------------------------


def html_escape(text: str) -> str:
    """Escape the three characters chat HTML (and Slack) require outside tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(text: str) -> str:
    return html_escape(text).replace('"', "&quot;")


def bullet(marker: str) -> str:
    return "•" + marker[1:] if marker[:1] in ("-", "*", "+") else marker


_Tag = tuple[str, str]  # (name, opening tag); link tags carry their id in the name


def _html_tags(run: Run) -> list[_Tag]:
    tags: list[_Tag] = []
    if run.link is not None:
        href = _attr(encode_url(run.link.url))
        tags.append((f"a#{run.link.ident}", f'<a href="{href}">'))
    elif run.code:
        return [("code", "<code>")]
    tags.extend((style, f"<{style}>") for style in ("b", "i", "s") if style in run.styles)
    return tags


def _html_runs(runs: list[Run]) -> str:
    out: list[str] = []
    stack: list[_Tag] = []
    for run in resolve_links(runs, safe_url):
        want = _html_tags(run)
        keep = 0  # still-wanted tags at the bottom of the stack stay open
        while keep < len(stack) and stack[keep] in want:
            keep += 1
        while len(stack) > keep:
            out.append(f"</{stack.pop()[0].split('#')[0]}>")
        for tag in (t for t in want if t not in stack):
            stack.append(tag)
            out.append(tag[1])
        out.append(html_escape(run.text))
    out.extend(f"</{tag[0].split('#')[0]}>" for tag in reversed(stack))
    return "".join(out)


def _html_code(block: CodeBlock) -> str:
    if not block.lines:
        return ""
    body = html_escape("\n".join(block.lines))
    lang = block.fence.lang
    if LANG.match(lang):
        return f'<pre><code class="language-{lang}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def _html_line(line: Line) -> str:
    if line.literal:
        return html_escape(line.prefix)
    runs = parse_inline(line.body, BOLD if line.heading else frozenset())
    return html_escape(line.prefix + bullet(line.marker)) + _html_runs(runs)


def _to_html(md: str) -> str:
    parts = [
        _html_code(seg) if isinstance(seg, CodeBlock) else _html_line(seg) for seg in segments(md)
    ]
    return "\n".join(parts)


def markdown_to_html(md: str) -> str:
    """The chat HTML subset (Telegram's Bot API): b/i/s/code/pre/a only, balanced and nested;
    never raises."""
    if inert(md):
        return md
    try:
        return _to_html(md)
    except Exception:  # fall back to the literal text, which is always valid
        return html_escape(md)
