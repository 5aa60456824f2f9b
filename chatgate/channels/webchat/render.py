"""Our message model → the JSON blocks the web chat page draws.

Markdown becomes the small, balanced HTML subset of `markdown_to_html` (b, i, s, code,
pre, a; everything else escaped); the page re-checks it against the same allow-list before it
touches the DOM, and its Content-Security-Policy forbids inline script either way. Widgets stay
structured (buttons, selects, tables) so the page can make them interactive.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatgate.channels.base import Rendered
from chatgate.media.links import SAFE_INLINE
from chatgate.model.outbound import (
    Block,
    Buttons,
    Context,
    Divider,
    File,
    OutboundMessage,
    Select,
    Table,
    Text,
)
from chatgate.presentation.file_rules import human_size
from chatgate.presentation.markdown import html_escape, markdown_to_html
from chatgate.presentation.render import block_to_markdown, to_markdown

_LINK_SCHEMES = ("http://", "https://", "mailto:")
FileLink = Callable[[File], str | None]


def _html(text: str, markdown: bool = True) -> str:
    if not markdown:
        return html_escape(text).replace('"', "&quot;")
    # the page keeps line breaks (pre-wrap); a code block is a block already
    return markdown_to_html(text).replace("\n<pre>", "<pre>").replace("</pre>\n", "</pre>")


def _link(url: str | None) -> str | None:
    return url if url is not None and url.lower().startswith(_LINK_SCHEMES) else None


def block_json(block: Block, link: FileLink | None = None) -> dict[str, Any]:
    """One block as the page's JSON; anything the page does not draw natively becomes text."""
    match block:
        case File() if link is not None and (url := link(block)) is not None:
            inline = block.kind == "image" and block.mime in SAFE_INLINE
            return {
                "type": "file",
                "name": block.name,
                "size": human_size(block.size),
                "caption": block.caption,
                "url": url,
                "preview": inline,
            }
        case Text(text, markdown):
            return {"type": "text", "html": _html(text, markdown)}
        case Context(text):
            return {"type": "context", "html": _html(text)}
        case Buttons(buttons):
            items = [
                {"label": b.label, "value": b.value, "url": _link(b.url), "style": b.style}
                for b in buttons
                if b.value is not None or _link(b.url) is not None
            ]
            return {"type": "buttons", "buttons": items}
        case Select(options, placeholder, _):
            opts = [{"label": o.label, "value": o.value} for o in options]
            return {"type": "select", "placeholder": placeholder, "options": opts}
        case Table(columns, rows):
            return {"type": "table", "columns": list(columns), "rows": [list(r) for r in rows]}
        case Divider():
            return {"type": "divider"}
    return {"type": "text", "html": _html(block_to_markdown(block), markdown=False)}


def render(message: OutboundMessage, link: FileLink | None = None) -> list[Rendered]:
    """One message, one bubble: the page scrolls, so nothing is chunked. Files are links
    (`link` signs one per stored file) with an inline preview for images."""
    blocks = [block_json(b, link) for b in message.blocks]
    return [Rendered(to_markdown(message), "json", {"blocks": blocks})]
