"""Our reply dialect (CommonMark-ish markdown from LLMs) → Slack mrkdwn.

Slack knows `*b*`, `_i_`, `~s~`, `` `code` ``, ``` blocks and `<url|label>` links, with & < >
escaped. Reuses the line and inline model of `chatgate.presentation.markdown`, so every renderer
reads a reply the same way.
"""

from __future__ import annotations

from chatgate.presentation.inline_markdown import Run, parse_inline
from chatgate.presentation.markdown import (
    BOLD,
    EDGES,
    CodeBlock,
    Line,
    break_ticks,
    bullet,
    encode_url,
    html_escape,
    inert,
    parse_fence,
    resolve_links,
    safe_url,
    segments,
)

_SLACK_MARKS = (("b", "*"), ("i", "_"), ("s", "~"))


def _slack_url(url: str) -> str:
    return encode_url(url).replace("&", "&amp;")


def _slack_styled(run: Run) -> str:
    if run.code:  # mrkdwn cannot show a backtick inside code: fall back to plain text
        return html_escape(run.text) if "`" in run.text else f"`{html_escape(run.text)}`"
    m = EDGES.match(run.text)
    lead, core, trail = (m.group(1), m.group(2), m.group(3)) if m else ("", run.text, "")
    marks = "".join(mark for style, mark in _SLACK_MARKS if style in run.styles)
    if not core or not marks:
        return html_escape(run.text)
    return f"{lead}{marks}{html_escape(core)}{marks[::-1]}{trail}"


def _slack_runs(runs: list[Run]) -> str:
    out: list[str] = []
    runs = resolve_links(runs, safe_url)
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


def _slack_line(line: Line) -> str:
    if line.literal:
        return html_escape(line.prefix)
    runs = parse_inline(line.body, BOLD if line.heading else frozenset())
    return html_escape(line.prefix + bullet(line.marker)) + _slack_runs(runs)


def _slack_code(block: CodeBlock) -> str:
    """A ``` block; a ``` inside would end it early, so a zero-width space breaks it up."""
    body = break_ticks(html_escape("\n".join(block.lines)))
    return f"```\n{body}\n```" if block.lines else ""


def _slack_text_line(line: Line) -> str:
    """A text line that came out looking like a fence (from escapes) gets a zero-width space in
    front; elsewhere in a line a run of three or more backticks is broken up, since Slack would
    start a code block there and the chunker would see an unbalanced fence."""
    text = _slack_line(line)
    if parse_fence(text) is None:
        return break_ticks(text)
    indent = len(text) - len(text.lstrip(" \t"))
    return text[:indent] + "\u200b" + text[indent:]


def _to_slack_mrkdwn(md: str) -> str:
    parts = [
        _slack_code(seg) if isinstance(seg, CodeBlock) else _slack_text_line(seg)
        for seg in segments(md)
    ]
    return "\n".join(parts)


def markdown_to_slack_mrkdwn(md: str) -> str:
    """Slack mrkdwn: *b*, _i_, ~s~, `code`, ```pre```, <url|text>; & < > escaped."""
    if inert(md):
        return md
    try:
        return _to_slack_mrkdwn(md)
    except Exception:  # fall back to the literal text
        return html_escape(md)
