"""Our reply dialect (CommonMark-ish markdown from LLMs) → plain text, Telegram HTML, Slack mrkdwn.

Block structure is line-based: fenced code blocks (``` or ~~~, any indentation, unclosed
fences run to the end), ATX headings, list/quote prefixes kept literally; everything else is
inline markdown parsed per line by `_inline`. Renderers work on flat styled runs, so their
output is balanced by construction. Inline formatting never spans lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from chatgate.presentation._inline import Run, parse_inline

_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_THEMATIC = re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_PREFIX = re.compile(r"^([ \t]*(?:>[ \t]?)*[ \t]*)((?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$))?")
_LANG = re.compile(r"^[A-Za-z0-9_+#.\-]{1,32}$")
_SAFE_SCHEMES = ("http://", "https://", "mailto:", "tg://")
_BOLD = frozenset({"b"})


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
class _CodeBlock:
    fence: Fence
    lines: tuple[str, ...]


@dataclass(frozen=True)
class _Line:
    prefix: str  # indentation and quote markers, literal
    marker: str  # list marker with its trailing whitespace, or ""
    body: str
    heading: bool = False
    literal: bool = False


def _dedent(line: str, width: int) -> str:
    n = 0
    while n < width and n < len(line) and line[n] in " \t":
        n += 1
    return line[n:]


def _segments(md: str) -> list[_Line | _CodeBlock]:
    lines = md.replace("\r\n", "\n").split("\n")
    out: list[_Line | _CodeBlock] = []
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
        out.append(_CodeBlock(fence, body))
        i = j + 1
    return out


def _parse_line(line: str) -> _Line:
    if _THEMATIC.match(line):
        return _Line(line, "", "", literal=True)
    m = _PREFIX.match(line)
    prefix, marker = (m.group(1), m.group(2) or "") if m else ("", "")
    rest = line[len(prefix) + len(marker) :]
    heading = _HEADING.match(rest)
    if heading:
        return _Line(prefix, marker, heading.group(2) or "", heading=True)
    return _Line(prefix, marker, rest)


def _resolve_links(runs: list[Run], keep: Callable[[str], bool]) -> list[Run]:
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


def _safe_url(url: str) -> bool:
    return url.lower().startswith(_SAFE_SCHEMES)


def _encode_url(url: str) -> str:
    """Percent-encode characters a chat platform will not accept inside a link target."""
    return re.sub(r"[\s<>|\"]", lambda m: "".join(f"%{b:02X}" for b in m[0].encode()), url)


# --- plain --------------------------------------------------------------------------------


def _plain_line(line: _Line) -> str:
    if line.literal:
        return line.prefix
    runs = _resolve_links(parse_inline(line.body), lambda _url: False)
    return line.prefix + line.marker + "".join(r.text for r in runs)


def _to_plain(md: str) -> str:
    parts = [
        "\n".join(seg.lines) if isinstance(seg, _CodeBlock) else _plain_line(seg)
        for seg in _segments(md)
    ]
    return "\n".join(parts)


def markdown_to_plain(md: str) -> str:
    """Strip markup, keeping the words: links become "text (url)", fences are dropped."""
    try:
        return _to_plain(md)
    except Exception:  # a renderer must never take a reply down with it
        return md


# --- Telegram HTML ------------------------------------------------------------------------


def html_escape(text: str) -> str:
    """Escape the three characters Telegram requires outside tags."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(text: str) -> str:
    return html_escape(text).replace('"', "&quot;")


def _bullet(marker: str) -> str:
    return "•" + marker[1:] if marker[:1] in ("-", "*", "+") else marker


_Tag = tuple[str, str]  # (name, opening tag); link tags carry their id in the name


def _html_tags(run: Run) -> list[_Tag]:
    tags: list[_Tag] = []
    if run.link is not None:
        href = _attr(_encode_url(run.link.url))
        tags.append((f"a#{run.link.ident}", f'<a href="{href}">'))
    elif run.code:
        return [("code", "<code>")]
    tags.extend((style, f"<{style}>") for style in ("b", "i", "s") if style in run.styles)
    return tags


def _html_runs(runs: list[Run]) -> str:
    out: list[str] = []
    stack: list[_Tag] = []
    for run in _resolve_links(runs, _safe_url):
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


def _html_code(block: _CodeBlock) -> str:
    if not block.lines:
        return ""
    body = html_escape("\n".join(block.lines))
    lang = block.fence.lang
    if _LANG.match(lang):
        return f'<pre><code class="language-{lang}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def _html_line(line: _Line) -> str:
    if line.literal:
        return html_escape(line.prefix)
    runs = parse_inline(line.body, _BOLD if line.heading else frozenset())
    return html_escape(line.prefix + _bullet(line.marker)) + _html_runs(runs)


def _to_telegram_html(md: str) -> str:
    parts = [
        _html_code(seg) if isinstance(seg, _CodeBlock) else _html_line(seg) for seg in _segments(md)
    ]
    return "\n".join(parts)


def markdown_to_telegram_html(md: str) -> str:
    """Telegram Bot API HTML: b/i/s/code/pre/a only, balanced and nested; never raises."""
    try:
        return _to_telegram_html(md)
    except Exception:  # fall back to the literal text, which is always valid
        return html_escape(md)


# --- Slack mrkdwn -------------------------------------------------------------------------

_SLACK_MARKS = (("b", "*"), ("i", "_"), ("s", "~"))
_EDGES = re.compile(r"^(\s*)(.*?)(\s*)$", re.DOTALL)


def _slack_url(url: str) -> str:
    return _encode_url(url).replace("&", "&amp;")


def _slack_styled(run: Run) -> str:
    if run.code:  # mrkdwn cannot show a backtick inside code: fall back to plain text
        return html_escape(run.text) if "`" in run.text else f"`{html_escape(run.text)}`"
    m = _EDGES.match(run.text)
    lead, core, trail = (m.group(1), m.group(2), m.group(3)) if m else ("", run.text, "")
    marks = "".join(mark for style, mark in _SLACK_MARKS if style in run.styles)
    if not core or not marks:
        return html_escape(run.text)
    return f"{lead}{marks}{html_escape(core)}{marks[::-1]}{trail}"


def _slack_runs(runs: list[Run]) -> str:
    out: list[str] = []
    runs = _resolve_links(runs, _safe_url)
    i = 0
    while i < len(runs):
        link = runs[i].link
        if link is None:
            out.append(_slack_styled(runs[i]))
            i += 1
            continue
        j = i
        while j < len(runs) and runs[j].link == link:
            j += 1
        label = "".join(r.text for r in runs[i:j])
        url = _slack_url(link.url)
        out.append(f"<{url}>" if label == link.url else f"<{url}|{html_escape(label)}>")
        i = j
    return "".join(out)


def _slack_line(line: _Line) -> str:
    if line.literal:
        return html_escape(line.prefix)
    runs = parse_inline(line.body, _BOLD if line.heading else frozenset())
    return html_escape(line.prefix + _bullet(line.marker)) + _slack_runs(runs)


def _slack_code(block: _CodeBlock) -> str:
    """A ``` block; a ``` inside would end it early, so a zero-width space breaks it up."""
    body = re.sub(r"(?<=``)`", "\u200b`", html_escape("\n".join(block.lines)))
    return f"```\n{body}\n```" if block.lines else ""


def _slack_text_line(line: _Line) -> str:
    """A text line that came out looking like a fence (from escapes) gets a zero-width space in
    front; elsewhere in a line a run of three or more backticks is broken up, since Slack would
    start a code block there and the chunker would see an unbalanced fence."""
    text = _slack_line(line)
    if parse_fence(text) is None:
        return re.sub(r"(?<=``)`", "\u200b`", text)
    indent = len(text) - len(text.lstrip(" \t"))
    return text[:indent] + "\u200b" + text[indent:]


def _to_slack_mrkdwn(md: str) -> str:
    parts = [
        _slack_code(seg) if isinstance(seg, _CodeBlock) else _slack_text_line(seg)
        for seg in _segments(md)
    ]
    return "\n".join(parts)


def markdown_to_slack_mrkdwn(md: str) -> str:
    """Slack mrkdwn: *b*, _i_, ~s~, `code`, ```pre```, <url|text>; & < > escaped."""
    try:
        return _to_slack_mrkdwn(md)
    except Exception:  # fall back to the literal text
        return html_escape(md)
