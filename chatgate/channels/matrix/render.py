"""Answers as Matrix message content: Markdown as `formatted_body` in the Matrix HTML subset
(`org.matrix.custom.html`) beside a readable plain `body`, split so each event stays well under
the homeserver's 65,536-byte limit. Buttons have no Matrix equivalent: the degrader numbers them."""

from __future__ import annotations

import json
import re
from typing import Any

from chatgate.channels.base import Rendered
from chatgate.model.outbound import OutboundMessage
from chatgate.presentation.chunking import chunk_text
from chatgate.presentation.markdown import markdown_to_html, markdown_to_plain
from chatgate.presentation.render import to_markdown

HTML_FORMAT = "org.matrix.custom.html"
_PRE = re.compile(r"(<pre>.*?</pre>|<pre><code[^>]*>.*?</code></pre>)", re.DOTALL)


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def markdown_to_matrix_html(md: str) -> str:
    """b/i/s/code/pre/a as Telegram's subset (also Matrix's), line breaks as <br> outside pre."""
    html = markdown_to_html(md)
    parts = _PRE.split(html)
    return "".join(p if p.startswith("<pre>") else p.replace("\n", "<br>") for p in parts)


def content_of(md: str) -> dict[str, Any]:
    html = markdown_to_matrix_html(md)
    plain = markdown_to_plain(md)
    content: dict[str, Any] = {"msgtype": "m.text", "body": plain}
    if html != _escape_plain(plain):
        content["format"] = HTML_FORMAT
        content["formatted_body"] = html
    return content


def _escape_plain(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
    )


def event_size(content: dict[str, Any]) -> int:
    return utf8_len(json.dumps(content, ensure_ascii=False))


def _fit(md: str, max_bytes: int) -> list[str]:
    """Chunks whose whole content (body + formatted_body) stays under `max_bytes`."""
    if event_size(content_of(md)) <= max_bytes:
        return [md]
    limit = max(64, utf8_len(md) // 2)
    parts = chunk_text(md, limit, length=utf8_len)
    if len(parts) <= 1:
        return parts
    return [piece for part in parts for piece in _fit(part, max_bytes)]


def render(message: OutboundMessage, max_event_bytes: int) -> list[Rendered]:
    """Text chunks, each carrying its content (`native["content"]`) ready to send."""
    md = to_markdown(message)
    out = []
    for chunk in chunk_text(md, max_event_bytes // 3, length=utf8_len):
        for piece in _fit(chunk, max_event_bytes):
            content = content_of(piece)
            out.append(Rendered(content["body"], "html", {"content": content}))
    return out
